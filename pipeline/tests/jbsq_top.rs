//! The leaf that holds tasks at its top level (`horus_pipeline::jbsq::top::JbsqTop`: the datapath
//! behind its AXI4-Lite port) against the model's frame switch (`JbsqFrameSwitch`), frame for
//! frame, set up and read the way a host does it: through `horus_regs::jbsq_map`.
//!
//! The host keeps a mirror of the leaf (the model) and stages each operation as the map's
//! passes (`jbsq_map::configure_pool`, `add_node`, `remove_node`): it writes the staged pass's
//! words, rings `CTL_GO` and polls `CTL_BUSY`. The example configuration
//! (`configs/example-leaf-jbsq.toml`) is set up that way, and the mirror must then equal the
//! model set up from the same file. Frames go in on the AXI-Stream input, the output is ready at
//! random; now and then, with the input quiet, the host removes a worker (reading its member slot
//! and its pool's last member first, which `RB_SLOT` and `RB_LAST` must show) and adds it again.
//! Every pass the core lets in (its trace port) runs through the model in the same order, and
//! the leaf must send exactly the model's frames, byte for byte, in order, each out of the
//! model's port. At the end the host reads the identity words, a node, and the 26 counters,
//! which must be the model's.

mod jbsq_common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::NodeAddr;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameResubmit, JbsqFrameSwitch};
use horus_model::sched::jbsq::{JbsqCounters, JbsqLeaf, JbsqSizes};
use horus_model::wire::{Endpoint, HORUS_UDP_PORT, HorusFrame, PacketType};
use horus_pipeline::jbsq::axil::{JbsqAxiLiteRegs, JbsqMapSizes};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::top::JbsqTop;
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{BUILD_HASH_PLACEHOLDER, RegFile, fields as paper};
use jbsq_common::driver::{Driver, client, header};
use jbsq_common::jobs::{beat_bits, beat_bytes};
use rust_hdl::prelude::*;

const CONFIG: &str = include_str!("../../configs/example-leaf-jbsq.toml");
const SEED: u64 = 7;
const OKAY: u32 = 0;
const SLVERR: u32 = 2;

/// The preset's sizes: 64 pools, 4,096 nodes, 65,536 ring entries, 4,096 buffer slots, 1,024
/// connection entries, a frame store of four beats a slot.
type Top = JbsqTop<6, 12, 16, 12, 10, 14>;

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
}

/// The host: its mirror of the leaf, the steps it has still to take, and the model's operation
/// for each operation pass it staged (configure, add, remove), in order.
struct Host {
    mirror: JbsqLeaf,
    steps: VecDeque<Step>,
    ops: VecDeque<ModelOp>,
}

impl Host {
    fn add(&mut self, pool: u16, node: u16, k: Option<u8>, tasks: u16, addr: NodeAddr) {
        for r in jbsq_map::add_node(&mut self.mirror, pool, node, k, tasks, addr).unwrap() {
            self.steps.extend(stage(&r));
        }
        self.ops.push_back(ModelOp::Add {
            pool,
            node,
            k,
            tasks,
            addr,
        });
    }

    /// Removes `node`: its read first, whose result must be the mirror's.
    fn remove(&mut self, pool: u16, node: u16) {
        let [read, rm] = jbsq_map::remove_node(&mut self.mirror, pool, node).unwrap();
        self.steps.extend(stage(&read));
        self.steps.push_back(Step::WaitRead);
        self.steps.push_back(Step::Expect {
            word: fields::RB_SLOT.word,
            want: (
                (rm.get(&fields::CTL_SLOT) | rm.get(&fields::CTL_LAST) << 16) as u32,
                OKAY,
            ),
        });
        self.steps.extend(stage(&rm));
        self.ops.push_back(ModelOp::Remove { pool, node });
    }
}

/// The model set up from the configuration and its set-up's frames, and the host with the steps
/// that set the leaf up the same way.
fn setup(cfg: &Config) -> (JbsqFrameSwitch, Vec<OutFrame>, Host) {
    let (sw, out) = JbsqFrameSwitch::from_config(cfg, SEED).unwrap();
    let sizes = sw.leaf().sizes();
    assert_eq!(sizes, JbsqSizes::DEFAULT, "the leaf's sizes");
    let mut mirror = JbsqLeaf::new(sizes, SEED);
    mirror.set_conn_timeout_us(cfg.switch.conn_timeout_us);
    let mut host = Host {
        mirror,
        steps: VecDeque::new(),
        ops: VecDeque::new(),
    };
    let r = jbsq_map::switch_config(cfg).unwrap();
    for word in paper::SWITCH_ID.word..=paper::SPINE3_IP.word {
        host.steps.push_back(Step::Write {
            word,
            data: r.words[word],
            resp: OKAY,
        });
    }
    for pool in &cfg.pools {
        let pc = sw.leaf().tables().pool_cfg[usize::from(pool.id)].unwrap();
        let r = jbsq_map::configure_pool(&mut host.mirror, pool.id, pc.cfg).unwrap();
        host.steps.extend(stage(&r));
        host.ops.push_back(ModelOp::Done);
        for n in &pool.nodes {
            host.add(pool.id, n.id, n.k, 0, NodeAddr::of(n));
            *host.ops.back_mut().unwrap() = ModelOp::Done;
        }
    }
    assert_eq!(
        format!("{:?}", host.mirror.tables()),
        format!("{:?}", sw.leaf().tables()),
        "the host's mirror and the model agree"
    );
    (sw, out, host)
}

/// Random frames: tasks of 0 to 180 bytes of payload to both pools (some of several packets,
/// then a continuation), replies from the pools' workers, keep-alives, frames not Horus's.
fn frames(cfg: &Config, seed: u64, n: usize) -> Vec<Vec<u8>> {
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

/// The host's reads at the end: the identity and size words, the status, a node, the counters,
/// and refusals (a read beyond the map, a write to a counter, `CTL_GO` with no operation).
fn final_steps(cfg: &Config, model: &JbsqFrameSwitch) -> Vec<Step> {
    let expect = |word: usize, data: u64| Step::Expect {
        word,
        want: (data as u32, OKAY),
    };
    let sizes = JbsqSizes::DEFAULT;
    let mut s = vec![
        expect(fields::ID.word, jbsq_map::ID_VALUE.into()),
        expect(paper::ROLE.word, 6 << 8 | 12 << 16 | 10 << 24),
        expect(
            fields::RING_BITS.word,
            16 | 12 << 8 | u64::from(sizes.slot_bytes) << 16,
        ),
        expect(paper::MAP_VERSION.word, jbsq_map::MAP_VERSION.into()),
        expect(paper::BUILD_HASH.word, BUILD_HASH_PLACEHOLDER.into()),
        expect(
            paper::CONN_TIMEOUT_US.word,
            cfg.switch.conn_timeout_us.into(),
        ),
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
    ];
    // A node of the first pool, read.
    let t = model.leaf().tables();
    let pool = cfg.pools[0].id;
    let pc = t.pool_cfg[usize::from(pool)].unwrap();
    let node = t.members[usize::from(pc.cfg.base)];
    let last = t.members[usize::from(pc.cfg.base + pc.n - 1)];
    s.extend(stage(&jbsq_map::read_node(pool, node)));
    s.push(Step::WaitRead);
    s.push(expect(
        fields::RB_SLOT.word,
        u64::from(t.member_slot[usize::from(node)]) | u64::from(last) << 16,
    ));
    // No operation staged: the doorbell refuses, nothing starts.
    s.extend(
        stage(&RegFile::default())
            .into_iter()
            .filter(|x| !matches!(x, Step::WaitIdle))
            .map(|x| match x {
                Step::Write { word, data, .. } if word == paper::CTL_GO.word => Step::Write {
                    word,
                    data,
                    resp: SLVERR,
                },
                x => x,
            }),
    );
    s.push(expect(paper::CTL_BUSY.word, 0));
    for (i, (_, v)) in model.leaf().counters().named().iter().enumerate() {
        s.push(expect(jbsq_map::COUNTER_BASE + i, v & 0xffff_ffff));
    }
    s
}

#[derive(Default)]
struct Seen {
    frames: Vec<OutFrame>,
    expected: Vec<OutFrame>,
    failures: Vec<String>,
    cycles: usize,
    passes: usize,
    seconds: usize,
    control: usize,
    churns: usize,
    overflow: bool,
    counters: Option<JbsqCounters>,
}

/// Runs `n` frames with the output ready `ready_pct` % of the cycles; the host removes and adds
/// a worker again every `churn` frames (0: never).
fn run(seed: u64, n: usize, ready_pct: u64, churn: usize) -> Seen {
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    let (model, setup_out, host) = setup(&cfg);
    let input = frames(&cfg, seed, n);
    let start = Mutex::new(Some((model, setup_out, host, input)));
    let mut uut = Top::new(JbsqSizes::DEFAULT, SEED, cfg.switch.conn_timeout_us);
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Top>| x.clk.next = !x.clk.val());
    sim.add_testbench(move |mut sim: Sim<Top>| {
        let mut x = sim.init()?;
        let (mut model, mut expected, mut host, input) = start.lock().unwrap().take().unwrap();
        let mut rng = Xorshift64::new(seed ^ 0x5a5a);
        let mut to_send: VecDeque<Vec<u8>> = input.into();
        let mut beat = 0usize;
        let mut sent: VecDeque<Vec<u8>> = VecDeque::new();
        let mut pending: VecDeque<JbsqFrameResubmit> = VecDeque::new();
        let mut frame: Vec<u8> = Vec::new();
        let (mut cycles, mut now, mut quiet) = (0usize, 0u32, 0usize);
        let (mut frames_in, mut reading, mut finished) = (0usize, false, false);
        let mut churn_at = if churn > 0 { churn } else { usize::MAX };
        let mut write_due: Option<(usize, u32)> = None;
        let fail = |m: String| log.lock().unwrap().failures.push(m);
        x.s_axil_bready.next = true;
        x.s_axil_rready.next = true;
        x.s_axil_wstrb.next = 0xf.into();
        wait_clock_true!(sim, clk, x);
        loop {
            cycles += 1;
            if cycles % 4 == 0 {
                now = now.wrapping_add(1);
            }
            x.now_us.next = u64::from(now).into();
            // A worker removed and added again, with the input quiet (no frame in the ingress,
            // so the model's operation falls between the same passes as the leaf's).
            if frames_in >= churn_at && host.steps.is_empty() && sent.is_empty() && beat == 0 {
                churn_at += churn;
                let mut l = log.lock().unwrap();
                let p = &cfg.pools[l.churns % cfg.pools.len()];
                let w = &p.nodes[(l.churns / cfg.pools.len()) % p.nodes.len()];
                let (k, tasks) = if l.churns % 2 == 0 {
                    (w.k, 0)
                } else {
                    (Some(2), 1)
                };
                l.churns += 1;
                host.remove(p.id, w.id);
                host.add(p.id, w.id, k, tasks, NodeAddr::of(w));
            }
            // The host's request.
            x.s_axil_awvalid.next = false;
            x.s_axil_wvalid.next = false;
            x.s_axil_arvalid.next = false;
            match host.steps.front() {
                Some(&Step::Write { word, data, .. }) if !reading => {
                    x.s_axil_awaddr.next = (4 * word as u64).into();
                    x.s_axil_wdata.next = u64::from(data).into();
                    x.s_axil_awvalid.next = true;
                    x.s_axil_wvalid.next = true;
                }
                Some(s) if !reading => {
                    let word = s.read_word().unwrap();
                    x.s_axil_araddr.next = (4 * word as u64).into();
                    x.s_axil_arvalid.next = true;
                }
                _ => {}
            }
            // Frames, a beat a clock at random, while the host is not at work.
            x.s_axis_tvalid.next = false;
            let offer = host.steps.is_empty() && rng.next_u64() % 100 < 80;
            if let (Some(f), true) = (to_send.front(), offer) {
                let chunk = &f[64 * beat..f.len().min(64 * beat + 64)];
                x.s_axis_tdata.next = beat_bits(chunk);
                x.s_axis_tkeep.next = if chunk.len() == 64 {
                    u64::MAX.into()
                } else {
                    ((1u64 << chunk.len()) - 1).into()
                };
                x.s_axis_tlast.next = 64 * beat + 64 >= f.len();
                x.s_axis_tvalid.next = true;
            }
            let ready = rng.next_u64() % 100 < ready_pct;
            x.m_axis_tready.next = ready;
            wait_clock_false!(sim, clk, x);
            // What the coming edge takes: the host's request, an input beat.
            // A write's response follows in the cycle after it was taken.
            if let Some((word, resp)) = write_due.take() {
                let got = x.s_axil_bresp.val().index() as u32;
                if !x.s_axil_bvalid.val() || got != resp {
                    fail(format!("write of word {word}: response {got}, want {resp}"));
                }
            }
            if x.s_axil_awvalid.val() && x.s_axil_awready.val() {
                let Some(Step::Write { word, resp, .. }) = host.steps.pop_front() else {
                    unreachable!()
                };
                write_due = Some((word, resp));
            }
            if x.s_axil_arvalid.val() && x.s_axil_arready.val() {
                reading = true;
            } else if reading && x.s_axil_rvalid.val() {
                reading = false;
                let data = x.s_axil_rdata.val().index() as u32;
                let resp = x.s_axil_rresp.val().index() as u32;
                match host.steps.front().cloned() {
                    Some(Step::WaitIdle) if data & 1 == 0 => {
                        host.steps.pop_front();
                    }
                    Some(Step::WaitRead) if data & 1 == 1 => {
                        host.steps.pop_front();
                    }
                    Some(Step::Expect { word, want }) => {
                        if (data, resp) != want {
                            fail(format!(
                                "read of word {word}: {:x?}, want {want:x?}",
                                (data, resp)
                            ));
                        }
                        host.steps.pop_front();
                    }
                    _ => {}
                }
            }
            if x.s_axis_tvalid.val() && x.s_axis_tready.val() {
                let f = to_send.front().unwrap();
                if 64 * beat + 64 >= f.len() {
                    sent.push_back(to_send.pop_front().unwrap());
                    frames_in += 1;
                    beat = 0;
                } else {
                    beat += 1;
                }
            }
            // A pass entering the stages: the model runs it.
            if x.trace_valid.val() {
                let p = x.trace_pass.val();
                let mut l = log.lock().unwrap();
                l.passes += 1;
                let r = if p.is_retry || p.is_return {
                    l.seconds += 1;
                    let back = pending.pop_front().expect("a second pass the model gave");
                    Some(model.process(JbsqFramePass::Resubmit(back)))
                } else if p.is_ctl_pool || p.is_ctl_add || p.is_ctl_remove {
                    l.control += 1;
                    match host.ops.pop_front().expect("an operation the host staged") {
                        ModelOp::Done => {}
                        ModelOp::Add {
                            pool,
                            node,
                            k,
                            tasks,
                            addr,
                        } => expected.extend(model.add_node(pool, node, k, tasks, addr).unwrap()),
                        ModelOp::Remove { pool, node } => model.remove_node(pool, node).unwrap(),
                    }
                    None
                } else if p.is_ctl_place || p.is_ctl_read {
                    l.control += 1;
                    None
                } else {
                    let f = sent.pop_front().expect("a pass of a frame sent");
                    let time_us = p.time.index() as u32;
                    Some(model.process(JbsqFramePass::Frame(InFrame { frame: f, time_us })))
                };
                if let Some(r) = r {
                    expected.extend(r.outputs);
                    pending.extend(r.resubmit);
                }
            }
            // The output.
            if x.m_axis_tvalid.val() && ready {
                let keep: u64 = x.m_axis_tkeep.val().into();
                let bytes = beat_bytes(x.m_axis_tdata.val());
                frame.extend_from_slice(&bytes[..keep.count_ones() as usize]);
                if x.m_axis_tlast.val() {
                    let user: u64 = x.m_axis_tuser.val().into();
                    assert_eq!((user >> 16) & 0xfff, frame.len() as u64, "tuser's length");
                    let mut l = log.lock().unwrap();
                    let i = l.frames.len();
                    let got = OutFrame {
                        port: (user & 0xff) as u8,
                        frame: std::mem::take(&mut frame),
                    };
                    assert_eq!(Some(&got), expected.get(i), "frame {i}");
                    l.frames.push(got);
                }
            }
            wait_clock_true!(sim, clk, x);
            let idle = to_send.is_empty()
                && sent.is_empty()
                && host.steps.is_empty()
                && x.in_flight.val().index() == 0;
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet > 2_000 && !finished {
                // Everything sent: the host reads what the leaf counted.
                finished = true;
                host.steps.extend(final_steps(&cfg, &model));
            } else if (quiet > 2_000 && finished) || cycles > 600_000 {
                let mut l = log.lock().unwrap();
                if !host.steps.is_empty() {
                    l.failures
                        .push(format!("the host's steps left: {:?}", host.steps));
                }
                l.expected = std::mem::take(&mut expected);
                l.cycles = cycles;
                l.overflow = x.overflow.val();
                l.counters = Some(*model.leaf().counters());
                break;
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 700_000).unwrap();
    Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap()
}

fn check(seed: u64, n: usize, ready_pct: u64, churn: usize) {
    let s = run(seed, n, ready_pct, churn);
    assert!(s.failures.is_empty(), "{}", s.failures.join("\n"));
    assert!(!s.overflow, "a FIFO overflowed");
    assert_eq!(s.frames.len(), s.expected.len(), "frames sent");
    let c = s.counters.unwrap();
    println!(
        "seed {seed}: {n} frames in, {} passes ({} second, {} control), {} frames out, {} \
         clocks, {} workers removed and added again; {} tasks, {} placed, {} held, {} released, \
         {} over a bound, {} continuations, {} to control, {} load reports, {} idle messages",
        s.passes,
        s.seconds,
        s.control,
        s.frames.len(),
        s.cycles,
        s.churns,
        c.tasks,
        c.placed,
        c.held,
        c.released,
        c.fallback,
        c.continuations,
        c.to_control,
        c.sent_load_update,
        c.sent_idle_add + c.sent_idle_remove
    );
    assert!(
        c.held > 20 && c.released > 20 && c.continuations > 0 && c.to_control > 0,
        "{c:?}"
    );
    assert!(
        churn == 0 || s.churns >= n / churn - 1,
        "{} churns",
        s.churns
    );
}

#[test]
fn the_jbsq_leaf_set_up_through_its_registers_sends_the_models_frames_and_counts() {
    check(31, 600, 70, 150);
}

#[test]
fn under_back_pressure_the_jbsq_leaf_loses_and_reorders_nothing() {
    check(32, 250, 15, 0);
}

/// The port alone: `passes` (each staged as the host does, then started) must come out of `ctl`
/// as the descriptors given, and leave when the core takes them.
fn port_passes(passes: Vec<(RegFile, JbsqPhv)>) -> Vec<String> {
    let sizes = JbsqMapSizes {
        pool_bits: 2,
        node_bits: 6,
        conn_bits: 6,
        ring_bits: 10,
        buffer_bits: 6,
        slot_bytes: 256,
    };
    let mut uut = JbsqAxiLiteRegs::new(sizes, 1000);
    uut.connect_all();
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = failures.clone();
    let n = passes.len();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<JbsqAxiLiteRegs>| x.clk.next = !x.clk.val());
    sim.add_testbench(move |mut sim: Sim<JbsqAxiLiteRegs>| {
        let mut x = sim.init()?;
        x.s_axil.bready.next = true;
        x.s_axil.wstrb.next = 0xf.into();
        wait_clock_true!(sim, clk, x);
        for (i, (r, want)) in passes.iter().enumerate() {
            let words = jbsq_map::control_words().map(|w| (w, r.words[w]));
            for (word, data) in words.chain([(paper::CTL_GO.word, 1)]) {
                x.s_axil.awaddr.next = (4 * word as u64).into();
                x.s_axil.wdata.next = u64::from(data).into();
                x.s_axil.awvalid.next = true;
                x.s_axil.wvalid.next = true;
                wait_clock_cycle!(sim, clk, x);
                x.s_axil.awvalid.next = false;
                x.s_axil.wvalid.next = false;
                if x.s_axil.bresp.val().index() != 0 {
                    sink.lock()
                        .unwrap()
                        .push(format!("pass {i}: word {word} refused"));
                }
                wait_clock_cycle!(sim, clk, x);
            }
            let got = x.ctl.val();
            if !x.ctl_valid.val() || got != *want {
                sink.lock().unwrap().push(format!(
                    "pass {i}: valid {}\n got {got:?}\nwant {want:?}",
                    x.ctl_valid.val()
                ));
            }
            x.ctl_ready.next = true;
            wait_clock_cycle!(sim, clk, x);
            x.ctl_ready.next = false;
            wait_clock_cycle!(sim, clk, x);
            if x.ctl_valid.val() {
                sink.lock()
                    .unwrap()
                    .push(format!("pass {i}: still staged once taken"));
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 100 * (n as u64 + 10) * 20).unwrap();
    failures.lock().unwrap().clone()
}

#[test]
fn every_staged_field_lands_in_the_pass_the_model_driver_builds() {
    use horus_model::fixed::Load;
    use horus_model::sched::SpineRef;
    use horus_model::sched::jbsq::{Advertise, Fallback, JbsqPool};
    use horus_model::sched::state::Params;
    use horus_model::wire::MacAddr;
    let sizes = JbsqSizes::SMALL;
    // The test driver builds each pass's descriptor from the model (the chain's and the core's
    // tests hold the stages to those); the host stages the same operation through the map.
    let mut d = Driver::new(sizes, 3);
    let mut mirror = JbsqLeaf::new(sizes, 3);
    let mut staged: Vec<RegFile> = Vec::new();
    // Every field of a pool's configuration other than its default.
    let cfg = JbsqPool {
        base: 9,
        capacity: 7,
        k: 3,
        ring_base: 300,
        ring_slots: 21,
        queue_base: 17,
        queue_slots: 13,
        fallback: Fallback::Drop,
        advertise: Advertise::Queue { room: 5 },
        hold_us: 77,
        params: Params {
            link_at: 3,
            unlink_at: 2,
            report_delta: Load(0x0001_8000),
            repair_gap_us: 41,
        },
        spine: Some(SpineRef {
            id: 0x1234,
            node: 0x0567,
        }),
    };
    d.configure(2, cfg);
    staged.push(jbsq_map::configure_pool(&mut mirror, 2, cfg).unwrap());
    let other = JbsqPool {
        base: 20,
        capacity: 4,
        k: 1,
        ring_base: 0,
        ring_slots: 8,
        queue_base: 0,
        queue_slots: 4,
        fallback: Fallback::Random,
        advertise: Advertise::Places,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: None,
    };
    d.configure(1, other);
    staged.push(jbsq_map::configure_pool(&mut mirror, 1, other).unwrap());
    let addr = |node: u16| NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([0x02, 0xa1, 0xb2, 0xc3, 0xd4, node as u8]),
            ip: std::net::Ipv4Addr::new(10, 200, 30, node as u8),
            udp_port: 0xbeef,
        },
        port: 0xc0 | node as u8,
        dst_id: 0x7700 | node,
    };
    for (node, k, tasks) in [(40, None, 0), (41, Some(5), 2), (42, Some(1), 0)] {
        d.add_at(2, node, k, tasks, addr(node));
        staged.extend(jbsq_map::add_node(&mut mirror, 2, node, k, tasks, addr(node)).unwrap());
    }
    d.add_at(1, 7, None, 0, addr(7));
    staged.extend(jbsq_map::add_node(&mut mirror, 1, 7, None, 0, addr(7)).unwrap());
    d.remove(2, 40);
    staged.extend(jbsq_map::remove_node(&mut mirror, 2, 40).unwrap());
    // Node 40 again, a generation on.
    d.add_at(2, 40, Some(2), 0, addr(40));
    staged.extend(jbsq_map::add_node(&mut mirror, 2, 40, Some(2), 0, addr(40)).unwrap());
    assert_eq!(d.steps.len(), staged.len(), "the passes of each operation");
    let passes: Vec<(RegFile, JbsqPhv)> = staged
        .into_iter()
        .zip(&d.steps)
        .map(|(r, s)| {
            (
                r,
                JbsqPhv {
                    live: false,
                    ..s.pass
                },
            )
        })
        .collect();
    let kinds = |f: fn(&JbsqPhv) -> bool| passes.iter().filter(|(_, p)| f(p)).count();
    assert_eq!(
        [
            kinds(|p| p.is_ctl_pool),
            kinds(|p| p.is_ctl_add),
            kinds(|p| p.is_ctl_place),
            kinds(|p| p.is_ctl_read),
            kinds(|p| p.is_ctl_remove),
        ],
        [2, 5, 3 + 3 + 1 + 1 + 2, 1, 1]
    );
    let f = port_passes(passes);
    assert!(f.is_empty(), "{}", f.join("\n"));
}

#[test]
fn the_jbsq_leaf_is_lint_clean_and_within_the_depth_target_at_the_preset_sizes() {
    let r = jbsq_common::lint_and_synth(
        "jbsq_top",
        Top::new(
            JbsqSizes::DEFAULT,
            SEED,
            horus_model::config::DEFAULT_CONN_TIMEOUT_US,
        ),
    );
    println!("JBSQ leaf: {r:#}");
    jbsq_common::print_board_shares(&r);
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}\n{:#?}",
        r.over_target
    );
}
