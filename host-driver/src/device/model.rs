//! The reference model as a device: a `FrameSwitch` behind the hardware's register map, so that
//! every command drives the software switch exactly as it drives a card. Writes land in a
//! register file; writing the switch's own registers sets the model's addresses; `CTL_GO` runs
//! the staged control pass with the host's values it carries (resubmissions at once: no traffic
//! is in flight between a host's accesses); a read stages the model's entry in the hardware's
//! layout. The identity is the configuration's preset, with no build hash (0): no Verilog.

use horus_model::config::{Config, Role};
use horus_model::sched::frame::{FramePass, FrameResult, FrameSwitch, InFrame, OutFrame};
use horus_model::sched::{DropReason, Stage};
use horus_regs::readback::{self, RB_WORDS};
use horus_regs::regmap::{self, RegFile, fields};

use crate::access::{AccessError, Regs};

/// A model switch and its register file.
pub struct ModelDevice {
    sw: FrameSwitch,
    regs: RegFile,
    info: u32,
    conn_timeout_us: u32,
    /// The last table read: whether it found an entry, and the entry.
    rb: Option<[u32; RB_WORDS]>,
    /// Frames the switch sent, oldest first (control passes' messages and forwarded frames).
    outputs: Vec<OutFrame>,
    what: String,
}

fn bits(n: usize) -> u32 {
    n.next_power_of_two().trailing_zeros()
}

impl ModelDevice {
    /// A freshly loaded switch of `cfg`'s role, sizes and connection timeout: no pool, no switch
    /// registers set (as a card after its bitstream loads). `seed` starts its generator.
    pub fn fresh(cfg: &Config, seed: u64, what: &str) -> Result<ModelDevice, AccessError> {
        // The paper switch's model: a JBSQ leaf's configuration is refused, naming the key.
        cfg.paper_leaf_only()
            .map_err(|e| AccessError::Device(format!("{what}: {e}")))?;
        let mut bare = cfg.clone();
        bare.pools.clear();
        bare.spines.clear();
        let (mut sw, _) = FrameSwitch::from_config(&bare, seed)
            .map_err(|e| AccessError::Device(format!("{what}: {e}")))?;
        let regs = RegFile::default();
        sw.set_registers(regs.switch_registers());
        let s = cfg.sizes;
        let info = u32::from(cfg.switch.role == Role::Spine)
            | bits(s.pools.into()) << 8
            | bits(s.nodes.into()) << 16
            | bits(s.conn_table as usize) << 24;
        Ok(ModelDevice {
            sw,
            regs,
            info,
            conn_timeout_us: cfg.switch.conn_timeout_us,
            rb: None,
            outputs: Vec::new(),
            what: what.to_string(),
        })
    }

    pub fn switch(&self) -> &FrameSwitch {
        &self.sw
    }

    /// A frame arriving at the switch at `time_us`: its pass and any resubmission; what left is
    /// appended to the outputs.
    pub fn frame(&mut self, frame: Vec<u8>, time_us: u32) -> FrameResult {
        let r = self
            .sw
            .process(FramePass::Frame(InFrame { frame, time_us }))
            .expect("a frame pass never fails");
        self.finish(r.clone());
        r
    }

    /// Takes the frames the switch sent.
    pub fn take_outputs(&mut self) -> Vec<OutFrame> {
        std::mem::take(&mut self.outputs)
    }

    /// Keeps a pass's outputs and runs its resubmissions.
    fn finish(&mut self, mut r: FrameResult) {
        loop {
            self.outputs.append(&mut r.outputs);
            let Some(rs) = r.resubmit.take() else { break };
            r = self
                .sw
                .process(FramePass::Resubmit(rs))
                .expect("a resubmitted pass never fails");
        }
    }

    fn go(&mut self) -> Result<(), AccessError> {
        let bad = |e: String| AccessError::Device(format!("{}: CTL_GO refused: {e}", self.what));
        let others = [
            fields::CTL_CONFIGURE_POOL,
            fields::CTL_SET_PARAMS,
            fields::CTL_ADD_NODE,
            fields::CTL_REMOVE_NODE,
        ];
        if self.regs.get(&fields::CTL_READ_ENTRY) != 0
            && others.iter().all(|o| self.regs.get(o) == 0)
        {
            let table = self.regs.get(&fields::CTL_TABLE) as usize;
            let index = self.regs.get(&fields::CTL_INDEX) as usize;
            let m = self.sw.scheduler();
            let len = |stage: Stage| {
                let t = m.tables();
                match stage {
                    Stage::PoolCfg | Stage::IdleCtl | Stage::PoolAvg => t.pools.len(),
                    Stage::Conn => t.conn.len(),
                    _ => t.nodes.len(),
                }
            };
            // As the hardware: a table it has, an index within the table's power of two.
            self.rb = Stage::ALL.get(table).and_then(|&stage| {
                (index < len(stage).next_power_of_two())
                    .then(|| readback::encode(m.tables(), m.role(), stage, index))
            });
            return Ok(());
        }
        let role = self.sw.scheduler().role();
        let (op, host) = self.regs.staged_control(role).map_err(bad)?;
        let r = self
            .sw
            .control_with(op, host)
            .map_err(|e| bad(e.to_string()))?;
        self.finish(r);
        Ok(())
    }

    fn counter(&self, word: usize) -> u32 {
        let c = self.sw.scheduler().counters();
        let i = word - regmap::COUNTER_BASE;
        let v = match i {
            0 => c.passes,
            1 => c.resubmit_passes,
            2 => c.control_passes,
            _ => c.drop_count(DropReason::ALL[i - 3]),
        };
        v as u32
    }
}

impl Regs for ModelDevice {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        let w = addr as usize / 4;
        Ok(match w {
            _ if addr % 4 != 0 || w >= regmap::WORDS => {
                return Err(AccessError::SlvErr { op: "read", addr });
            }
            0 => regmap::ID_VALUE,
            1 => self.info,
            // Nothing in flight, never an overflow, a control pass runs at once.
            2 | 3 => 0,
            _ if w == fields::RB_VALID.word => u32::from(self.rb.is_some()),
            _ if (fields::RB_DATA0.word..fields::RB_DATA0.word + RB_WORDS).contains(&w) => {
                self.rb.map_or(0, |d| d[w - fields::RB_DATA0.word])
            }
            _ if (regmap::COUNTER_BASE..regmap::COUNTER_BASE + regmap::COUNTERS).contains(&w) => {
                self.counter(w)
            }
            _ if w == fields::MAP_VERSION.word => regmap::MAP_VERSION,
            _ if w == fields::BUILD_HASH.word => 0,
            _ if w == fields::CONN_TIMEOUT_US.word => self.conn_timeout_us,
            // No board adapter: nothing dropped for a missing port.
            _ if w == fields::BOARD_DROPS.word => 0,
            _ if regmap::rw_words().contains(&w) => self.regs.words[w],
            _ => return Err(AccessError::SlvErr { op: "read", addr }),
        })
    }

    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        let w = addr as usize / 4;
        if addr % 4 == 0 && regmap::rw_words().contains(&w) {
            self.regs.words[w] = value;
            if regmap::switch_words().contains(&w) {
                self.sw.set_registers(self.regs.switch_registers());
            }
            return Ok(());
        }
        if addr % 4 == 0 && w == regmap::fields::CTL_GO.word {
            return if value & 1 != 0 { self.go() } else { Ok(()) };
        }
        Err(AccessError::SlvErr { op: "write", addr })
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}
