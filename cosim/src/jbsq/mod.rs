//! The scoreboard of the leaf that holds tasks (`horus_pipeline::jbsq::top::JbsqTop`) against the
//! model's frame switch (`JbsqFrameSwitch`), frame for frame, set up and read the way a host does
//! it: through the JBSQ register map (`horus_regs::jbsq_map`).
//!
//! One scenario ([`Scenario`]) runs on either simulator, a clock at a time: it says what the
//! top's inputs are this cycle ([`PinsIn`]) and reads its outputs before the edge ([`PinsOut`]).
//! [`run_verilated`] runs it on the Verilated Verilog that `rtl-gen` emits; a rust-hdl test bench
//! runs it on the circuit itself (`tests/jbsq.rs`).
//!
//! The host keeps a mirror of the leaf (the model) and stages each operation as the map's passes
//! (`jbsq_map::configure_pool`, `add_node`, `remove_node`): it writes the staged pass's words,
//! rings `CTL_GO` and polls `CTL_BUSY`. The configuration is set up that way, and the mirror must
//! then equal the model set up from the same configuration. Frames go in on the AXI-Stream input,
//! a beat a clock at random, and the output is ready at random; now and then, with the input
//! quiet, the host removes a worker (reading its member slot and its pool's last member first,
//! which `RB_SLOT` and `RB_LAST` must show) and adds it again. Every pass the core lets in (the
//! trace port) runs through the model in the same order, and the leaf must send exactly the
//! model's frames, byte for byte, in order, each out of the model's port. At the end the host
//! reads the identity words, a node and the 26 counters, which must be the model's (the
//! generator's state too), and is
//! refused where the map says (a read beyond it, a write to a counter, `CTL_GO` with no
//! operation).

use std::collections::VecDeque;

use anyhow::{Context, Result, bail};
use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::NodeAddr;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameResubmit, JbsqFrameSwitch};
use horus_model::sched::jbsq::{JbsqCounters, JbsqLeaf, PoolSettings};
use horus_model::wire::{Endpoint, HORUS_UDP_PORT, HorusFrame, HorusHeader, MacAddr, PacketType};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::presets::JbsqPreset;
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{RegFile, fields as paper};

use crate::bench::{describe_difference, field};
use crate::verilated::Model;

mod verilated;
pub use verilated::{BOX_TOP, box_verilog, run_verilated, verilog};

const OKAY: u32 = 0;
const SLVERR: u32 = 2;

/// The top's inputs in one cycle (the write strobes, `bready`, `rready` are always set; `rst`
/// and `tuser` are 0).
#[derive(Clone, Debug, Default)]
pub struct PinsIn {
    pub s_tdata: Vec<u8>,
    pub s_tkeep: u64,
    pub s_tvalid: bool,
    pub s_tlast: bool,
    pub m_tready: bool,
    pub now_us: u32,
    pub awaddr: u16,
    pub awvalid: bool,
    pub wdata: u32,
    pub wvalid: bool,
    pub araddr: u16,
    pub arvalid: bool,
}

/// What the scoreboard reads of a pass entering the stages.
#[derive(Clone, Copy, Debug, Default)]
pub struct TracePass {
    /// A second pass (a task's retry, a reply's returned place).
    pub second: bool,
    /// A control pass of an operation the model runs (configure, add, remove, a node's or the
    /// pool's new bound).
    pub operation: bool,
    /// Another control pass (a place, a node read).
    pub control: bool,
    /// The frame's arrival time.
    pub time: u32,
}

impl TracePass {
    pub fn of(p: &JbsqPhv) -> TracePass {
        TracePass {
            second: p.is_retry || p.is_return,
            operation: p.is_ctl_pool
                || p.is_ctl_add
                || p.is_ctl_remove
                || p.is_ctl_bound
                || p.is_ctl_pool_params,
            control: p.is_ctl_place || p.is_ctl_read,
            time: p.time.index() as u32,
        }
    }
}

/// The top's outputs in one cycle, before the edge.
#[derive(Clone, Debug, Default)]
pub struct PinsOut {
    pub s_tready: bool,
    pub m_tdata: Vec<u8>,
    pub m_tkeep: u64,
    pub m_tvalid: bool,
    pub m_tlast: bool,
    pub m_tuser: u32,
    pub awready: bool,
    pub bvalid: bool,
    pub bresp: u32,
    pub arready: bool,
    pub rvalid: bool,
    pub rdata: u32,
    pub rresp: u32,
    pub trace: Option<TracePass>,
    pub in_flight: u32,
    pub overflow: bool,
    /// The generator's state.
    pub rng_state: u64,
}

/// A host's step on the AXI4-Lite port.
#[derive(Clone, Debug)]
enum Step {
    /// Write a whole word; the response must be `resp`.
    Write { word: usize, data: u32, resp: u32 },
    /// Poll `CTL_BUSY` until it reads 0.
    WaitIdle,
    /// Poll `RB_VALID` until it reads 1.
    WaitRead,
    /// Read a word; it must answer `(data, resp)`.
    Expect { word: usize, want: (u32, u32) },
}

impl Step {
    fn read_word(&self) -> Option<usize> {
        match *self {
            Step::Write { .. } => None,
            Step::WaitIdle => Some(paper::CTL_BUSY.word),
            Step::WaitRead => Some(fields::RB_VALID.word),
            Step::Expect { word, .. } => Some(word),
        }
    }
}

/// A staged pass: its control words written, `CTL_GO` rung, `CTL_BUSY` polled.
fn stage(r: &RegFile) -> Vec<Step> {
    let mut s: Vec<Step> = jbsq_map::control_words()
        .map(|word| Step::Write {
            word,
            data: r.words[word],
            resp: OKAY,
        })
        .collect();
    s.push(Step::Write {
        word: paper::CTL_GO.word,
        data: 1,
        resp: OKAY,
    });
    s.push(Step::WaitIdle);
    s
}

fn expect(word: usize, data: u64) -> Step {
    Step::Expect {
        word,
        want: (data as u32, OKAY),
    }
}

/// What the model does when the pass of a host's operation enters the stages.
#[derive(Clone, Debug)]
enum ModelOp {
    /// Set up already (`JbsqFrameSwitch::from_config`).
    Done,
    Add {
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
        addr: NodeAddr,
    },
    Remove {
        pool: u16,
        node: u16,
    },
    Bound {
        pool: u16,
        node: u16,
        k: u8,
    },
    PoolParams {
        pool: u16,
        s: PoolSettings,
    },
}

/// The host: its mirror of the leaf, the steps it has still to take, and the model's operation
/// for each operation pass it staged, in order.
struct Host {
    mirror: JbsqLeaf,
    steps: VecDeque<Step>,
    ops: VecDeque<ModelOp>,
}

impl Host {
    fn add(
        &mut self,
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
        addr: NodeAddr,
    ) -> Result<()> {
        for r in jbsq_map::add_node(&mut self.mirror, pool, node, k, tasks, addr)
            .map_err(anyhow::Error::msg)?
        {
            self.steps.extend(stage(&r));
        }
        self.ops.push_back(ModelOp::Add {
            pool,
            node,
            k,
            tasks,
            addr,
        });
        Ok(())
    }

    /// Sets `node`'s bound to `k` (decision 36): its pass, then its places'.
    fn set_bound(&mut self, pool: u16, node: u16, k: u8) -> Result<()> {
        for r in jbsq_map::set_bound(&mut self.mirror, pool, node, k).map_err(anyhow::Error::msg)? {
            self.steps.extend(stage(&r));
        }
        self.ops.push_back(ModelOp::Bound { pool, node, k });
        Ok(())
    }

    /// Sets `pool`'s settings.
    fn set_pool_params(&mut self, pool: u16, s: PoolSettings) -> Result<()> {
        let r = jbsq_map::set_pool_params(&mut self.mirror, pool, s).map_err(anyhow::Error::msg)?;
        self.steps.extend(stage(&r));
        self.ops.push_back(ModelOp::PoolParams { pool, s });
        Ok(())
    }

    /// Removes `node`: its read first, whose result must be the mirror's.
    fn remove(&mut self, pool: u16, node: u16) -> Result<()> {
        let [read, rm] =
            jbsq_map::remove_node(&mut self.mirror, pool, node).map_err(anyhow::Error::msg)?;
        self.steps.extend(stage(&read));
        self.steps.push_back(Step::WaitRead);
        self.steps.push_back(expect(
            fields::RB_SLOT.word,
            rm.get(&fields::CTL_SLOT) | rm.get(&fields::CTL_LAST) << 16,
        ));
        self.steps.extend(stage(&rm));
        self.ops.push_back(ModelOp::Remove { pool, node });
        Ok(())
    }
}

/// A client's address: the source of the tasks.
fn client() -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 9, 0, 1]),
        ip: std::net::Ipv4Addr::new(10, 0, 9, 1),
        udp_port: HORUS_UDP_PORT,
    }
}

fn header(pkt_type: PacketType, pool: u16, src_id: u16, seq_num: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id,
        dst_id: 0,
        qlen: 0,
        seq_num,
    }
}

/// Random frames: tasks of 0 to 180 bytes of payload to every pool (one in eight of several
/// packets, then a continuation), replies from the pools' workers, keep-alives, frames not
/// Horus's.
pub fn frames(cfg: &Config, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let leaf = Endpoint {
        mac: cfg.switch.mac,
        ip: cfg.switch.ip,
        udp_port: HORUS_UDP_PORT,
    };
    let workers: Vec<(u16, u16, Endpoint)> = cfg
        .pools
        .iter()
        .flat_map(|p| {
            p.nodes.iter().map(|w| {
                let ep = Endpoint {
                    mac: w.mac,
                    ip: w.ip,
                    udp_port: w.udp_port,
                };
                (p.id, w.id, ep)
            })
        })
        .collect();
    let mut rng = Xorshift64::new(seed);
    let mut seq = 0u16;
    let mut out = Vec::new();
    while out.len() < n {
        let x = rng.next_u64();
        let (pool, node, ep) = workers[(x % workers.len() as u64) as usize];
        match (x >> 8) % 100 {
            0..3 => {
                // Not Horus: to another UDP port.
                let h = header(PacketType::NewTask, pool, 0, 0);
                let mut f = HorusFrame::new(client(), leaf, h, vec![7; 90]).to_bytes();
                f[36..38].copy_from_slice(&53u16.to_be_bytes());
                out.push(f);
            }
            3..5 => {
                let h = header(PacketType::KeepAlive, pool, node, 0);
                out.push(HorusFrame::new(ep, leaf, h, Vec::new()).to_bytes());
            }
            5..50 => {
                seq = seq.wrapping_add(1);
                let mut h = header(PacketType::NewTask, pool, 0xFFFF, seq);
                let len = ((x >> 16) % 180) as usize;
                let payload: Vec<u8> = (0..len).map(|i| (i as u8) ^ (seq as u8)).collect();
                h.more_packets = (x >> 32) % 8 == 0;
                out.push(HorusFrame::new(client(), leaf, h, payload.clone()).to_bytes());
                if h.more_packets {
                    let mut c = h;
                    c.pkt_type = PacketType::TaskContinuation;
                    c.more_packets = false;
                    out.push(HorusFrame::new(client(), leaf, c, payload).to_bytes());
                }
            }
            _ => {
                let h = header(PacketType::TaskDone, pool, node, 0);
                out.push(HorusFrame::new(ep, leaf, h, vec![1; 16]).to_bytes());
            }
        }
    }
    out
}

/// Knobs of a run.
#[derive(Clone, Debug)]
pub struct Knobs {
    /// The traffic's and the bench's seed.
    pub seed: u64,
    /// Frames sent.
    pub frames: usize,
    /// How often the output is ready, in percent.
    pub ready_pct: u64,
    /// A worker is removed and added again every this many frames (0: never).
    pub churn: usize,
    /// The churn also changes bounds (decision 36): every third time a worker's new bound in
    /// place of its removal and addition, every fourth its pool's.
    pub bounds: bool,
    /// The most clocks a run may take.
    pub max_cycles: usize,
    /// What `BUILD_HASH` answers: the stamp of the emitted Verilog (`rtl_gen::identity`), or the
    /// placeholder of the circuit that was not stamped.
    pub build_hash: u32,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub frames_out: usize,
    /// Frames out of each port.
    pub by_port: std::collections::BTreeMap<u8, usize>,
    pub cycles: usize,
    pub passes: usize,
    pub seconds: usize,
    pub control: usize,
    pub churns: usize,
    /// The model's counters at the end (the leaf's, read through its registers, are equal).
    pub counters: JbsqCounters,
}

/// The scenario: the model, the host, the frames, and what has been seen.
pub struct Scenario {
    cfg: Config,
    knobs: Knobs,
    model: JbsqFrameSwitch,
    expected: VecDeque<OutFrame>,
    /// The pass each expected frame comes from, for a difference's report.
    origins: VecDeque<String>,
    host: Host,
    rng: Xorshift64,
    to_send: VecDeque<Vec<u8>>,
    beat: usize,
    sent: VecDeque<Vec<u8>>,
    pending: VecDeque<JbsqFrameResubmit>,
    frame: Vec<u8>,
    now: u32,
    quiet: usize,
    frames_in: usize,
    reading: bool,
    finished: bool,
    churn_at: usize,
    write_due: Option<(usize, u32)>,
    ready: bool,
    report: Report,
}

impl Scenario {
    /// The leaf of `cfg` (a JBSQ leaf's configuration) at the sizes of `preset`, its generator
    /// seeded with `leaf_seed`, set up by the host; then the run's frames.
    pub fn new(cfg: &Config, preset: &JbsqPreset, leaf_seed: u64, knobs: Knobs) -> Result<Self> {
        let (model, setup_out) = JbsqFrameSwitch::from_config(cfg, leaf_seed)?;
        let sizes = model.leaf().sizes();
        if sizes != preset.sizes() {
            bail!(
                "the configuration's sizes {sizes:?} are not the {} preset's {:?}",
                preset.name,
                preset.sizes()
            );
        }
        let mut mirror = JbsqLeaf::new(sizes, leaf_seed);
        mirror.set_conn_timeout_us(cfg.switch.conn_timeout_us);
        let mut host = Host {
            mirror,
            steps: VecDeque::new(),
            ops: VecDeque::new(),
        };
        let r = jbsq_map::switch_config(cfg).map_err(anyhow::Error::msg)?;
        for word in paper::SWITCH_ID.word..=paper::SPINE3_IP.word {
            host.steps.push_back(Step::Write {
                word,
                data: r.words[word],
                resp: OKAY,
            });
        }
        for pool in &cfg.pools {
            let pc = model.leaf().tables().pool_cfg[usize::from(pool.id)]
                .context("a configured pool")?;
            let r = jbsq_map::configure_pool(&mut host.mirror, pool.id, pc.cfg)
                .map_err(anyhow::Error::msg)?;
            host.steps.extend(stage(&r));
            host.ops.push_back(ModelOp::Done);
            for n in &pool.nodes {
                host.add(pool.id, n.id, n.k, 0, NodeAddr::of(n))?;
                *host.ops.back_mut().unwrap() = ModelOp::Done;
            }
        }
        if format!("{:?}", host.mirror.tables()) != format!("{:?}", model.leaf().tables()) {
            bail!("the host's mirror and the model set up from the configuration differ");
        }
        Ok(Scenario {
            to_send: frames(cfg, knobs.seed, knobs.frames).into(),
            rng: Xorshift64::new(knobs.seed ^ 0x5a5a),
            churn_at: if knobs.churn > 0 {
                knobs.churn
            } else {
                usize::MAX
            },
            cfg: cfg.clone(),
            knobs,
            model,
            origins: setup_out.iter().map(|_| "the set-up".to_string()).collect(),
            expected: setup_out.into(),
            host,
            beat: 0,
            sent: VecDeque::new(),
            pending: VecDeque::new(),
            frame: Vec::new(),
            now: 0,
            quiet: 0,
            frames_in: 0,
            reading: false,
            finished: false,
            write_due: None,
            ready: false,
            report: Report::default(),
        })
    }

    /// What the run did (at its end: the counters the leaf showed).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// This cycle's inputs.
    pub fn inputs(&mut self) -> Result<PinsIn> {
        let mut i = PinsIn::default();
        self.report.cycles += 1;
        if self.report.cycles % 4 == 0 {
            self.now = self.now.wrapping_add(1);
        }
        i.now_us = self.now;
        // A worker removed and added again, with the input quiet (no frame in the ingress, so
        // the model's operation falls between the same passes as the leaf's).
        if self.frames_in >= self.churn_at
            && self.host.steps.is_empty()
            && self.sent.is_empty()
            && self.beat == 0
        {
            self.churn_at += self.knobs.churn;
            let c = self.report.churns;
            let p = &self.cfg.pools[c % self.cfg.pools.len()];
            let w = &p.nodes[(c / self.cfg.pools.len()) % p.nodes.len()];
            let (k, tasks) = if c % 2 == 0 { (w.k, 0) } else { (Some(2), 1) };
            self.report.churns += 1;
            let (pool, node, addr) = (p.id, w.id, NodeAddr::of(w));
            if self.knobs.bounds && c % 4 == 3 {
                // Each setting moves: the bound, the hold, the link and report thresholds.
                let now = self.host.mirror.tables().pool_cfg[usize::from(pool)]
                    .context("a configured pool")?
                    .cfg;
                let mut s = PoolSettings::of(&now);
                s.k = 1 + (c % 3) as u8;
                s.hold_us = (c % 2) as u16 * 20;
                s.params.link_at = 1 + (c % 2) as u16;
                s.params.unlink_at = 0;
                s.params.repair_gap_us = 10 + c as u16 % 40;
                self.host.set_pool_params(pool, s)?;
            }
            if self.knobs.bounds && c % 3 == 2 {
                self.host.set_bound(pool, node, 1 + (c % 4) as u8)?;
            } else {
                self.host.remove(pool, node)?;
                self.host.add(pool, node, k, tasks, addr)?;
            }
        }
        // The host's request, one transaction at a time.
        let busy = self.reading || self.write_due.is_some();
        match self.host.steps.front() {
            Some(&Step::Write { word, data, .. }) if !busy => {
                i.awaddr = 4 * word as u16;
                i.wdata = data;
                i.awvalid = true;
                i.wvalid = true;
            }
            Some(s) if !busy => {
                i.araddr = 4 * s.read_word().unwrap() as u16;
                i.arvalid = true;
            }
            _ => {}
        }
        // Frames, a beat a clock at random, while the host is not at work.
        let offer = self.host.steps.is_empty() && self.rng.next_u64() % 100 < 80;
        if let (Some(f), true) = (self.to_send.front(), offer) {
            let chunk = &f[64 * self.beat..f.len().min(64 * self.beat + 64)];
            i.s_tdata = chunk.to_vec();
            i.s_tkeep = if chunk.len() == 64 {
                u64::MAX
            } else {
                (1u64 << chunk.len()) - 1
            };
            i.s_tlast = 64 * self.beat + 64 >= f.len();
            i.s_tvalid = true;
        }
        self.ready = self.rng.next_u64() % 100 < self.knobs.ready_pct;
        i.m_tready = self.ready;
        Ok(i)
    }

    /// Reads this cycle's outputs (`i` the inputs driven): `Ok(true)` when the run is over.
    pub fn outputs(&mut self, i: &PinsIn, o: &PinsOut) -> Result<bool> {
        let cycle = self.report.cycles;
        // A write's response, whenever it comes (the host makes no other request meanwhile).
        if o.bvalid {
            let Some((word, resp)) = self.write_due.take() else {
                bail!("cycle {cycle}: a write response with no write made");
            };
            if o.bresp != resp {
                bail!(
                    "cycle {cycle}: write of word {word}: response {}, want {resp}",
                    o.bresp
                );
            }
        }
        if i.awvalid && o.awready {
            let Some(Step::Write { word, resp, .. }) = self.host.steps.pop_front() else {
                bail!("cycle {cycle}: a write taken that the host did not make");
            };
            self.write_due = Some((word, resp));
        }
        if i.arvalid && o.arready {
            self.reading = true;
        } else if self.reading && o.rvalid {
            self.reading = false;
            match self.host.steps.front().cloned() {
                Some(Step::WaitIdle) if o.rdata & 1 == 0 => {
                    self.host.steps.pop_front();
                }
                Some(Step::WaitRead) if o.rdata & 1 == 1 => {
                    self.host.steps.pop_front();
                }
                Some(Step::Expect { word, want }) => {
                    if (o.rdata, o.rresp) != want {
                        bail!(
                            "cycle {cycle}: read of word {word}: {:#x} (response {}), want \
                             {:#x} (response {})",
                            o.rdata,
                            o.rresp,
                            want.0,
                            want.1
                        );
                    }
                    self.host.steps.pop_front();
                }
                _ => {}
            }
        }
        if i.s_tvalid && o.s_tready {
            let f = self.to_send.front().unwrap();
            if 64 * self.beat + 64 >= f.len() {
                self.sent.push_back(self.to_send.pop_front().unwrap());
                self.frames_in += 1;
                self.beat = 0;
            } else {
                self.beat += 1;
            }
        }
        // A pass entering the stages: the model runs it.
        if let Some(p) = o.trace {
            self.report.passes += 1;
            let r = if p.second {
                self.report.seconds += 1;
                let back = self.pending.pop_front().with_context(|| {
                    format!("cycle {cycle}: a second pass the model did not give")
                })?;
                Some(self.model.process(JbsqFramePass::Resubmit(back)))
            } else if p.operation {
                self.report.control += 1;
                let op = self.host.ops.pop_front().with_context(|| {
                    format!("cycle {cycle}: an operation's pass the host did not stage")
                })?;
                match op {
                    ModelOp::Done => {}
                    ModelOp::Add {
                        pool,
                        node,
                        k,
                        tasks,
                        addr,
                    } => {
                        let out = self
                            .model
                            .add_node(pool, node, k, tasks, addr)
                            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
                        let why = format!("the addition of node {node} to pool {pool}");
                        self.origins.extend(out.iter().map(|_| why.clone()));
                        self.expected.extend(out);
                    }
                    ModelOp::Remove { pool, node } => self
                        .model
                        .remove_node(pool, node)
                        .map_err(|e| anyhow::anyhow!("{e:?}"))?,
                    ModelOp::Bound { pool, node, k } => {
                        let out = self
                            .model
                            .set_bound(pool, node, k)
                            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
                        let why = format!("node {node}'s new bound {k}");
                        self.origins.extend(out.iter().map(|_| why.clone()));
                        self.expected.extend(out);
                    }
                    ModelOp::PoolParams { pool, s } => self
                        .model
                        .set_pool_params(pool, s)
                        .map_err(|e| anyhow::anyhow!("{e:?}"))?,
                }
                None
            } else if p.control {
                self.report.control += 1;
                None
            } else {
                let f = self
                    .sent
                    .pop_front()
                    .with_context(|| format!("cycle {cycle}: a pass of no frame sent"))?;
                Some(self.model.process(JbsqFramePass::Frame(InFrame {
                    frame: f,
                    time_us: p.time,
                })))
            };
            if let Some(r) = r {
                let why = format!(
                    "pass {} at cycle {cycle}: {:?}",
                    self.report.passes,
                    r.pass
                        .map(|p| (p.placement, p.slot, p.release.map(|x| x.node), p.drop))
                );
                self.origins.extend(r.outputs.iter().map(|_| why.clone()));
                self.expected.extend(r.outputs);
                self.pending.extend(r.resubmit);
            }
        }
        // The output.
        if o.m_tvalid && self.ready {
            let n = o.m_tkeep.count_ones() as usize;
            self.frame.extend_from_slice(&o.m_tdata[..n]);
            if o.m_tlast {
                let got = OutFrame {
                    port: (o.m_tuser & 0xff) as u8,
                    frame: std::mem::take(&mut self.frame),
                };
                let k = self.report.frames_out;
                if (o.m_tuser >> 16) & 0xfff != got.frame.len() as u32 {
                    bail!("cycle {cycle}: frame {k}: tuser's length {:#x}", o.m_tuser);
                }
                let origin = self.origins.pop_front().unwrap_or_default();
                let Some(want) = self.expected.pop_front() else {
                    bail!(
                        "cycle {cycle}: frame {k} out of port {}, the model sent no more",
                        got.port
                    );
                };
                if got != want {
                    bail!(
                        "cycle {cycle}: frame {k} (the model's from {origin}) differs from the \
                         model's: {}",
                        describe_difference(&got, &want)
                    );
                }
                self.report.frames_out += 1;
                *self.report.by_port.entry(got.port).or_default() += 1;
            }
        }
        if o.overflow {
            bail!("cycle {cycle}: the egress overflowed");
        }
        let idle = self.to_send.is_empty()
            && self.sent.is_empty()
            && self.host.steps.is_empty()
            && o.in_flight == 0;
        self.quiet = if idle { self.quiet + 1 } else { 0 };
        if self.quiet > 2_000 && !self.finished {
            // Everything sent: the host reads what the leaf counted.
            self.finished = true;
            self.quiet = 0;
            let steps = self.final_steps();
            self.host.steps.extend(steps);
        } else if self.quiet > 2_000 && self.finished {
            if !self.expected.is_empty() {
                bail!(
                    "{} frames of the model's never came out",
                    self.expected.len()
                );
            }
            if o.rng_state != self.model.leaf().rng_state() {
                bail!(
                    "the generator's state {:#x}, the model's {:#x}",
                    o.rng_state,
                    self.model.leaf().rng_state()
                );
            }
            self.report.counters = *self.model.leaf().counters();
            return Ok(true);
        }
        if cycle > self.knobs.max_cycles {
            bail!(
                "cycle {cycle}: not done ({} frames to send, {} host steps left: {:?})",
                self.to_send.len(),
                self.host.steps.len(),
                self.host.steps.front()
            );
        }
        Ok(false)
    }

    /// The host's reads at the end: the identity and size words, the status, a node, the
    /// counters, and refusals.
    fn final_steps(&self) -> Vec<Step> {
        // The identification words a freshly loaded leaf answers (`jbsq_map::fresh`, what a
        // host's dry run stands for), which the leaf must answer.
        let ident = jbsq_map::fresh(
            self.model.leaf().sizes(),
            self.cfg.switch.conn_timeout_us,
            self.knobs.build_hash,
        );
        let mut s: Vec<Step> = [
            fields::ID.word,
            paper::ROLE.word,
            fields::RING_BITS.word,
            paper::MAP_VERSION.word,
            paper::BUILD_HASH.word,
            paper::CONN_TIMEOUT_US.word,
        ]
        .map(|w| expect(w, ident.words[w].into()))
        .to_vec();
        s.extend([
            expect(paper::BOARD_DROPS.word, 0),
            // Nothing staged, no overflow, nothing in the stages.
            expect(paper::CTL_BUSY.word, 0),
            Step::Expect {
                word: fields::RB_LAST.word + 1,
                want: (0, SLVERR),
            },
            Step::Write {
                word: jbsq_map::COUNTER_BASE,
                data: 1,
                resp: SLVERR,
            },
        ]);
        // A node of the first pool, read.
        let t = self.model.leaf().tables();
        let pool = self.cfg.pools[0].id;
        let pc = t.pool_cfg[usize::from(pool)].expect("the first pool is configured");
        let node = t.members[usize::from(pc.cfg.base)];
        let last = t.members[usize::from(pc.cfg.base + pc.n - 1)];
        s.extend(stage(&jbsq_map::read_node(pool, node)));
        s.push(Step::WaitRead);
        s.push(expect(
            fields::RB_SLOT.word,
            u64::from(t.member_slot[usize::from(node)]) | u64::from(last) << 16,
        ));
        // No operation staged: the doorbell refuses, nothing starts.
        for x in stage(&RegFile::default()) {
            match x {
                Step::Write { word, data, .. } if word == paper::CTL_GO.word => {
                    s.push(Step::Write {
                        word,
                        data,
                        resp: SLVERR,
                    })
                }
                Step::WaitIdle => {}
                x => s.push(x),
            }
        }
        s.push(expect(paper::CTL_BUSY.word, 0));
        for (i, (_, v)) in self.model.leaf().counters().named().iter().enumerate() {
            s.push(expect(jbsq_map::COUNTER_BASE + i, v & 0xffff_ffff));
        }
        s
    }
}
