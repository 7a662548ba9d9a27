//! The reference model of the leaf that holds tasks as a device: a `JbsqFrameSwitch` behind the
//! JBSQ register map (`horus_regs::jbsq_map`), so that the host driver, the controller and the
//! software switch drive it exactly as they drive a card. Writes land in a register file;
//! writing the switch's own registers sets the model's addresses; `CTL_GO` decodes the staged
//! pass (`jbsq_map::staged_pass`) and runs it on the model. The model adds a worker with its free
//! places in one operation (`add_node_at`), so a worker's addition runs when its last place pass
//! arrives (at once for a worker added with no free place), each place checked to be the one the
//! model puts next, and a worker's new bound likewise (decision 36); a removal and a place carry the host's view (slot, last member, generation),
//! which must be the model's (a card would take them on trust: here a host whose mirror is not
//! the leaf's is refused, naming the difference). A node read answers at once. The identity is
//! the configuration's JBSQ preset with no build hash (0): no Verilog.

use horus_model::config::Config;
use horus_model::sched::NodeAddr;
use horus_model::sched::frame::{InFrame, OutFrame, Ports};
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameSwitch};
use horus_model::sched::jbsq::{JbsqLeaf, JbsqSizes, level_of};
use horus_regs::jbsq_map::{self, StagedPass, fields};
use horus_regs::regmap::{RegFile, WORDS, fields as paper, switch_words};

use crate::access::{AccessError, Regs};

/// A worker's addition, or its new bound, waiting for its places.
#[derive(Clone, Copy, Debug)]
struct Adding {
    pool: u16,
    node: u16,
    k: Option<u8>,
    tasks: u16,
    /// The address of an addition; `None`: a new bound.
    addr: Option<NodeAddr>,
    /// Its bound (its own, or the pool's), the generation its places carry, the places seen.
    bound: u8,
    generation: u8,
    places: u16,
}

/// A model JBSQ leaf and its register file.
pub struct JbsqModelDevice {
    sw: JbsqFrameSwitch,
    words: RegFile,
    adding: Option<Adding>,
    /// Frames the leaf sent, oldest first.
    outputs: Vec<OutFrame>,
    what: String,
}

impl JbsqModelDevice {
    /// A freshly loaded JBSQ leaf of the preset with `cfg`'s table sizes: no pool, no switch
    /// registers set. `seed` starts its generator.
    pub fn fresh(cfg: &Config, seed: u64, what: &str) -> Result<JbsqModelDevice, AccessError> {
        let preset = horus_regs::presets::jbsq_preset_for(&cfg.sizes).ok_or_else(|| {
            AccessError::Device(format!(
                "{what}: no JBSQ leaf's preset has the sizes {:?}",
                cfg.sizes
            ))
        })?;
        Ok(JbsqModelDevice::of_sizes(preset.sizes(), cfg, seed, what))
    }

    fn of_sizes(sizes: JbsqSizes, cfg: &Config, seed: u64, what: &str) -> JbsqModelDevice {
        let mut leaf = JbsqLeaf::new(sizes, seed);
        leaf.set_conn_timeout_us(cfg.switch.conn_timeout_us);
        let mut bare = cfg.clone();
        bare.spines.clear();
        let words = jbsq_map::fresh(sizes, cfg.switch.conn_timeout_us, 0);
        let mut sw = JbsqFrameSwitch::new(leaf, Ports::from_config(&bare));
        sw.set_registers(words.switch_registers());
        JbsqModelDevice {
            sw,
            words,
            adding: None,
            outputs: Vec::new(),
            what: what.to_string(),
        }
    }

    pub fn switch(&self) -> &JbsqFrameSwitch {
        &self.sw
    }

    /// A frame arriving at `time_us`: its pass and its second passes; what left is appended to
    /// the outputs.
    pub fn frame(&mut self, frame: Vec<u8>, time_us: u32) {
        let mut r = self
            .sw
            .process(JbsqFramePass::Frame(InFrame { frame, time_us }));
        loop {
            self.outputs.append(&mut r.outputs);
            let Some(back) = r.resubmit.take() else { break };
            r = self.sw.process(JbsqFramePass::Resubmit(back));
        }
    }

    /// Takes the frames the leaf sent.
    pub fn take_outputs(&mut self) -> Vec<OutFrame> {
        std::mem::take(&mut self.outputs)
    }

    fn go(&mut self) -> Result<(), AccessError> {
        let what = self.what.clone();
        let bad = |e: String| AccessError::Device(format!("{what}: CTL_GO refused: {e}"));
        let pass = jbsq_map::staged_pass(&self.words).map_err(bad)?;
        if let Some(a) = self.adding
            && !matches!(pass, StagedPass::AddPlace { .. })
        {
            return Err(bad(format!(
                "node {}'s addition to pool {} waits for {} more place(s)",
                a.node,
                a.pool,
                u16::from(a.bound) - a.tasks - a.places
            )));
        }
        let t = self.sw.leaf().tables();
        match pass {
            StagedPass::Configure { pool, cfg } => self
                .sw
                .configure_pool(pool, cfg)
                .map_err(|e| bad(format!("pool {pool}: {e:?}")))?,
            StagedPass::AddNode {
                pool,
                node,
                k,
                tasks,
                addr,
                ..
            } => {
                let pc = t
                    .pool_cfg
                    .get(usize::from(pool))
                    .copied()
                    .flatten()
                    .ok_or_else(|| bad(format!("pool {pool} is not configured")))?;
                let k = (k != 0).then_some(k);
                let generation = t
                    .node_cfg
                    .get(usize::from(node))
                    .map_or(0, |n| n.generation);
                let a = Adding {
                    pool,
                    node,
                    k,
                    tasks,
                    addr: Some(addr),
                    bound: k.unwrap_or(pc.cfg.k),
                    generation,
                    places: 0,
                };
                self.adding = Some(a);
                self.add_when_placed()?;
            }
            StagedPass::AddPlace {
                pool,
                node,
                generation,
                level,
            } => {
                let Some(mut a) = self.adding else {
                    return Err(bad(format!(
                        "a place of node {node} with no addition of it before"
                    )));
                };
                let want = level_of(a.tasks + a.places, a.bound) as u8;
                let g = a.generation;
                if (pool, node, generation, level) != (a.pool, a.node, g, want) {
                    return Err(bad(format!(
                        "place (pool {pool}, node {node}, generation {generation}, ring \
                         {level}); the model puts (pool {}, node {}, generation {g}, ring \
                         {want}) next",
                        a.pool, a.node
                    )));
                }
                a.places += 1;
                self.adding = Some(a);
                self.add_when_placed()?;
            }
            StagedPass::SetBound { pool, node, k } => {
                let nc = t
                    .node_cfg
                    .get(usize::from(node))
                    .copied()
                    .filter(|n| n.active && n.pool == pool && k != 0)
                    .ok_or_else(|| {
                        bad(format!(
                            "bound {k} for node {node}, which is not a member of pool {pool}"
                        ))
                    })?;
                self.adding = Some(Adding {
                    pool,
                    node,
                    k: Some(k),
                    tasks: 0,
                    addr: None,
                    bound: k,
                    generation: nc.generation.wrapping_add(1),
                    places: 0,
                });
            }
            StagedPass::SetPoolParams { pool, settings } => self
                .sw
                .set_pool_params(pool, settings)
                .map_err(|e| bad(format!("pool {pool}: {e:?}")))?,
            StagedPass::MoveBuffer {
                pool,
                queue_base,
                queue_slots,
            } => {
                self.sw
                    .move_buffer(pool, queue_base, queue_slots)
                    .map_err(|e| bad(format!("pool {pool}: {e:?}")))?;
            }
            StagedPass::ReadNode { pool, node } => {
                let (slot, last) = self.read_node(pool, node);
                self.words.set(&fields::RB_SLOT, slot.into());
                self.words.set(&fields::RB_LAST, last.into());
                let depth = self.sw.leaf().held_depth(pool).min(0xffff);
                self.words.set(&fields::RB_DEPTH, depth.into());
            }
            StagedPass::RemoveNode {
                pool,
                node,
                slot,
                last,
                ..
            } => {
                let have = self.read_node(pool, node);
                if have != (slot, last) {
                    return Err(bad(format!(
                        "node {node} of pool {pool}: the host carries slot {slot} and last \
                         member {last}, the leaf has {} and {}",
                        have.0, have.1
                    )));
                }
                self.sw
                    .remove_node(pool, node)
                    .map_err(|e| bad(format!("node {node} of pool {pool}: {e:?}")))?;
            }
        }
        Ok(())
    }

    /// Runs the waiting addition once every place it needs has come.
    fn add_when_placed(&mut self) -> Result<(), AccessError> {
        let Some(a) = self.adding else { return Ok(()) };
        if a.tasks + a.places < u16::from(a.bound) {
            return Ok(());
        }
        self.adding = None;
        let out = match a.addr {
            Some(addr) => self.sw.add_node(a.pool, a.node, a.k, a.tasks, addr),
            None => self.sw.set_bound(a.pool, a.node, a.bound),
        };
        let out = out.map_err(|e| {
            AccessError::Device(format!(
                "{}: CTL_GO refused: node {} of pool {}: {e:?}",
                self.what, a.node, a.pool
            ))
        })?;
        self.outputs.extend(out);
        Ok(())
    }

    /// What a node read gives: the node's member slot and its pool's last member (as the
    /// pipeline's read: the tables' entries, whatever they hold).
    fn read_node(&self, pool: u16, node: u16) -> (u16, u16) {
        let t = self.sw.leaf().tables();
        let slot = t.member_slot.get(usize::from(node)).copied().unwrap_or(0);
        let last = t
            .pool_cfg
            .get(usize::from(pool))
            .copied()
            .flatten()
            .filter(|p| p.n > 0)
            .map_or(0, |p| t.members[usize::from(p.cfg.base + p.n - 1)]);
        (slot, last)
    }
}

impl Regs for JbsqModelDevice {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        if addr % 4 != 0 {
            return Err(AccessError::Unaligned { addr });
        }
        let w = addr as usize / 4;
        if w >= WORDS {
            return Err(AccessError::OutOfMap { addr });
        }
        let counters = jbsq_map::COUNTER_BASE..jbsq_map::COUNTER_BASE + jbsq_map::COUNTERS;
        Ok(match w {
            _ if counters.contains(&w) => {
                self.sw.leaf().counters().named()[w - jbsq_map::COUNTER_BASE].1 as u32
            }
            // Nothing in flight, never an overflow, a pass runs at once; a read is valid at once
            // (`RB_VALID` set, `RB_BUSY` clear, `RB_DEPTH` the last read's).
            _ if w == paper::CTL_GO.word || w == paper::CTL_BUSY.word => 0,
            _ if w == fields::RB_VALID.word => self.words.words[w] | 1,
            // No board adapter: nothing dropped for a missing port.
            _ if w == paper::BOARD_DROPS.word => 0,
            _ => self.words.words[w],
        })
    }

    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        if addr % 4 != 0 {
            return Err(AccessError::Unaligned { addr });
        }
        let w = addr as usize / 4;
        if w == paper::CTL_GO.word {
            return if value & 1 != 0 { self.go() } else { Ok(()) };
        }
        if !jbsq_map::rw_words().contains(&w) {
            return Err(AccessError::SlvErr { op: "write", addr });
        }
        self.words.words[w] = value;
        if switch_words().contains(&w) {
            self.sw.set_registers(self.words.switch_registers());
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}
