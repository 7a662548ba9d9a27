//! The JBSQ leaf's egress and frame store (`horus_pipeline::jbsq::egress`) against the model's
//! frames (`horus_model::sched::jbsq::frame::JbsqFrameSwitch`), byte for byte: random traffic
//! on the example configuration (`configs/example-leaf-jbsq.toml`) runs through the model; each
//! pass becomes a job (`jbsq_common::jobs::job_of`: the frame's slot in the frame buffer, its
//! forward, a hold's or a release's slot of the store, the message; `tests/jbsq_core.rs` holds
//! the hardware's map from a pass to its job, `JbsqJobMap`, to the same function); the egress runs
//! the jobs in rust-hdl's simulator with the frame buffer beside it and the output ready at
//! random, and must send exactly the model's frames, in the model's order, each out of the
//! model's port, and hand back every frame-buffer slot once its pass is done with it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameResubmit, JbsqFrameSwitch};
use horus_model::sched::jbsq::{Advertise, Fallback, JbsqPool};
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::{Endpoint, HORUS_UDP_PORT, HorusFrame, HorusHeader, PacketType};
use horus_pipeline::jbsq::egress::{JbsqEgress, JbsqJob};
use horus_pipeline::phv::HANDLE_BITS;
use rust_hdl::prelude::*;

mod jbsq_common;

use jbsq_common::driver::{client, header};
use jbsq_common::jobs::{self, JobPorts, beat_bits, beat_bytes};

const CONFIG: &str = include_str!("../../configs/example-leaf-jbsq.toml");
/// Frame-store beats: the preset's 4,096 slots (the example's pools share them out).
const SB: usize = 14;
/// Beats of a frame-buffer slot.
const SLOT_BEATS: usize = 32;
const HANDLES: usize = 1 << HANDLE_BITS;

/// One pass as the egress gets it: its frame (a second pass's is its first pass's, `first`),
/// the job without the frame's slot, and the frames the model sent.
struct Pass {
    /// Empty for a control pass (it has no frame, and no slot).
    frame: Vec<u8>,
    /// The index of the first pass whose frame this second pass carries.
    first: Option<usize>,
    job: JbsqJob,
    expected: Vec<OutFrame>,
}

/// The job the leaf's core hands the egress for a model pass (the mapping that core is planned
/// to make in hardware).
/// A pool no traffic goes to, for control passes.
fn pool3() -> JbsqPool {
    JbsqPool {
        base: 4000,
        capacity: 8,
        k: 1,
        ring_base: 65536 - 64,
        ring_slots: 8,
        queue_base: 4096 - 16,
        queue_slots: 16,
        fallback: Fallback::Random,
        advertise: Advertise::Idle,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: Some(SpineRef { id: 1, node: 7 }),
    }
}

/// The model's switch with the passes it ran and what its workers have to answer.
struct Run {
    cfg: Config,
    sw: JbsqFrameSwitch,
    passes: Vec<Pass>,
    /// Per worker, the tasks it has not answered (pool, sequence), oldest first.
    at_worker: Vec<VecDeque<(u16, u16)>>,
    /// Second passes not yet fed back, each with the index of its first pass.
    pending: Vec<(JbsqFrameResubmit, usize)>,
}

impl Run {
    /// A pass carrying `frame` (a second pass: its first pass's, `first`).
    fn pass(&mut self, frame: Vec<u8>, first: Option<usize>, pass: JbsqFramePass) {
        let r = self.sw.process(pass);
        let i = self.passes.len();
        for o in &r.outputs {
            let h = HorusHeader::parse(&o.frame[horus_model::wire::HORUS_OFFSET..]);
            if let Some(h) = h.ok().filter(|h| h.pkt_type == PacketType::NewTask) {
                self.at_worker[usize::from(h.dst_id)].push_back((h.pool_id, h.seq_num));
            }
        }
        if let Some(back) = r.resubmit.clone() {
            self.pending.push((back, first.unwrap_or(i)));
        }
        self.passes.push(Pass {
            job: jobs::job_of(
                &JobPorts::of(&self.cfg),
                frame.len(),
                r.pass.as_ref(),
                !r.outputs.is_empty(),
                r.resubmit.is_some(),
            ),
            frame,
            first,
            expected: r.outputs,
        });
    }

    fn frame(&mut self, frame: Vec<u8>, time_us: u32) {
        let pass = JbsqFramePass::Frame(InFrame {
            frame: frame.clone(),
            time_us,
        });
        self.pass(frame, None, pass);
    }

    /// Second pass `k` of those pending.
    fn resubmit(&mut self, k: usize) {
        let (back, first) = self.pending.swap_remove(k);
        self.pass(
            back.frame.clone(),
            Some(first),
            JbsqFramePass::Resubmit(back),
        );
    }

    /// Pool 3 (no traffic) configured afresh and its worker added: the addition's pass links
    /// the rack, its message built from the template (the pass has no frame).
    fn control(&mut self) {
        let _ = self.sw.remove_node(3, 50);
        self.sw.configure_pool(3, pool3()).unwrap();
        let addr = horus_model::sched::NodeAddr::of(&self.cfg.pools[0].nodes[0]);
        let out = self.sw.add_node(3, 50, None, 0, addr).unwrap();
        assert_eq!(out.len(), 1, "the first worker links the rack");
        let h = HorusHeader::parse(&out[0].frame[horus_model::wire::HORUS_OFFSET..]).unwrap();
        let mut j = JbsqJob::default();
        jobs::signal(&JobPorts::of(&self.cfg), &mut j, &h);
        self.passes.push(Pass {
            frame: Vec::new(),
            first: None,
            job: j,
            expected: out,
        });
    }

    fn endpoint(&self, node: u16) -> Endpoint {
        let mut nodes = self.cfg.pools.iter().flat_map(|p| &p.nodes);
        let c = nodes.find(|w| w.id == node).unwrap();
        Endpoint {
            mac: c.mac,
            ip: c.ip,
            udp_port: c.udp_port,
        }
    }
}

/// Random traffic through the model: tasks of 0 to 260 bytes of payload on both pools (some
/// held, some too long for a slot), replies from the workers in random order, second passes fed
/// back late, now and then a frame that is not Horus's, and every 400 operations a control
/// pass's message.
fn traffic(seed: u64, ops: usize) -> (Config, Vec<Pass>) {
    let mut cfg = Config::from_toml_str(CONFIG).unwrap();
    // The last pool leaves the buffer's last 16 slots to pool 3 (`pool3`): regions do not
    // overlap.
    let last = cfg.pools.len() - 1;
    let others: u32 = cfg.buffer_regions()[..last].iter().map(|r| r.1).sum();
    cfg.pools[last].buffer_slots = Some(4096 - others - 16);
    let (sw, _) = JbsqFrameSwitch::from_config(&cfg, 3).unwrap();
    let leaf = Endpoint {
        mac: cfg.switch.mac,
        ip: cfg.switch.ip,
        udp_port: HORUS_UDP_PORT,
    };
    let mut run = Run {
        cfg,
        sw,
        passes: Vec::new(),
        at_worker: vec![VecDeque::new(); 8],
        pending: Vec::new(),
    };
    let mut rng = Xorshift64::new(seed);
    let (mut t, mut seq) = (0u32, 0u16);
    for op in 0..ops {
        if op % 400 == 399 {
            run.control();
            continue;
        }
        t += 1 + (rng.next_u64() % 4) as u32;
        let dice = rng.next_u64() % 100;
        let busy: Vec<usize> = (0..8).filter(|&n| !run.at_worker[n].is_empty()).collect();
        if dice < 3 {
            // Not Horus: to another UDP port.
            let h = header(PacketType::NewTask, 1, 0, 0);
            let mut f = HorusFrame::new(client(), leaf, h, vec![7; 90]).to_bytes();
            f[36..38].copy_from_slice(&53u16.to_be_bytes());
            run.frame(f, t);
        } else if dice < 50 || busy.is_empty() {
            let pool = 1 + (rng.next_u64() % 2) as u16;
            seq = seq.wrapping_add(1);
            let len = (rng.next_u64() % 260) as usize;
            let payload = (0..len).map(|i| (i as u8) ^ (seq as u8)).collect();
            let h = header(PacketType::NewTask, pool, 0xFFFF, seq);
            let mut fr = HorusFrame::new(client(), leaf, h, payload);
            fr.ip_id = seq;
            run.frame(fr.to_bytes(), t);
        } else if dice < 90 {
            let n = busy[(rng.next_u64() % busy.len() as u64) as usize];
            let (pool, s) = run.at_worker[n].pop_front().unwrap();
            let h = header(PacketType::TaskDone, pool, n as u16, s);
            let payload = vec![0xAB; (rng.next_u64() % 100) as usize];
            let mut fr = HorusFrame::new(run.endpoint(n as u16), client(), h, payload);
            fr.ip_id = 0x8000 | s;
            run.frame(fr.to_bytes(), t);
        } else if !run.pending.is_empty() {
            run.resubmit((rng.next_u64() % run.pending.len() as u64) as usize);
        }
    }
    while !run.pending.is_empty() {
        run.resubmit(run.pending.len() - 1);
    }
    (run.cfg, run.passes)
}

/// What the egress sent and handed back.
#[derive(Debug, Default)]
struct Seen {
    frames: Vec<OutFrame>,
    /// Frame-buffer slots handed back, in order.
    freed: Vec<u64>,
    overflow: bool,
    cycles: usize,
}

/// Runs `passes` through the egress: a job a clock when its pass's frame has a slot (jobs held
/// back at random), the frame buffer read a clock after its address, the output ready at random
/// (`ready_pct` percent of clocks).
fn simulate(cfg: &Config, passes: Vec<Pass>, seed: u64, ready_pct: u64) -> Seen {
    let expected_frames: usize = passes.iter().map(|p| p.expected.len()).sum();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    let mut uut = JbsqEgress::<SB>::default();
    uut.connect_all();
    let s = &cfg.switch;
    let (mac, ip, udp) = jobs::ep_fields(&Endpoint {
        mac: s.mac,
        ip: s.ip,
        udp_port: s.udp_port,
    });
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<JbsqEgress<SB>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<JbsqEgress<SB>>| {
        let mut x = sim.init()?;
        let mut rng = Xorshift64::new(seed);
        let mut buffer: HashMap<u64, Bits<512>> = HashMap::new();
        let mut free: VecDeque<u64> = (0..HANDLES as u64).collect();
        let mut handle_of: HashMap<usize, u64> = HashMap::new();
        let mut next = 0;
        let mut read_at: Option<u64> = None;
        let mut frame: Vec<u8> = Vec::new();
        let mut cycles = 0;
        x.cfg.next.mac = mac;
        x.cfg.next.ip = ip;
        x.cfg.next.udp = udp;
        wait_clock_true!(sim, clock, x);
        loop {
            cycles += 1;
            // The frame buffer answers the address of the clock before.
            x.buf_data.next = read_at
                .and_then(|a| buffer.get(&a).copied())
                .unwrap_or_default();
            read_at = Some(x.buf_addr.val().index() as u64);
            if x.free_valid.val() {
                let h = x.free_handle.val().index() as u64;
                log.lock().unwrap().freed.push(h);
                free.push_back(h);
            }
            // The output, ready at random: a beat leaves at the clock's edge when it is valid
            // and ready in this clock.
            let ready = rng.next_u64() % 100 < ready_pct;
            x.m_axis_tready.next = ready;
            if x.m_axis_tvalid.val() && ready {
                let keep: u64 = x.m_axis_tkeep.val().into();
                let bytes = beat_bytes(x.m_axis_tdata.val());
                frame.extend_from_slice(&bytes[..keep.count_ones() as usize]);
                if x.m_axis_tlast.val() {
                    let user: u64 = x.m_axis_tuser.val().into();
                    assert_eq!(
                        (user >> 16) & 0xfff,
                        frame.len() as u64,
                        "tuser's length, frame {}",
                        log.lock().unwrap().frames.len()
                    );
                    log.lock().unwrap().frames.push(OutFrame {
                        port: (user & 0xff) as u8,
                        frame: std::mem::take(&mut frame),
                    });
                }
            }
            // The next job, if its frame has a slot and the FIFO has room.
            x.job_valid.next = false;
            if let Some(p) = passes.get(next) {
                let jobs = x.jobs.val().index();
                let slot = match p.first {
                    Some(f) => handle_of.get(&f).copied(),
                    None if p.frame.is_empty() => Some(0),
                    None => free.front().copied(),
                };
                if jobs < 120 && rng.next_u64() % 4 != 0 {
                    if let Some(h) = slot {
                        if p.first.is_none() && !p.frame.is_empty() {
                            free.pop_front();
                            handle_of.insert(next, h);
                            for (b, chunk) in p.frame.chunks(64).enumerate() {
                                buffer.insert(h * SLOT_BEATS as u64 + b as u64, beat_bits(chunk));
                            }
                        }
                        let mut j = p.job;
                        j.handle = h.into();
                        j.start = (h * SLOT_BEATS as u64).into();
                        x.job_in.next = j;
                        x.job_valid.next = true;
                        next += 1;
                    }
                }
            }
            wait_clock_cycle!(sim, clock, x);
            let done = next == passes.len() && log.lock().unwrap().frames.len() >= expected_frames;
            if done || cycles > 400_000 {
                // A few more clocks: nothing more may come out.
                for _ in 0..40 {
                    x.m_axis_tready.next = true;
                    if x.m_axis_tvalid.val() {
                        log.lock().unwrap().frames.push(OutFrame {
                            port: 0xff,
                            frame: vec![],
                        });
                    }
                    if x.free_valid.val() {
                        log.lock()
                            .unwrap()
                            .freed
                            .push(x.free_handle.val().index() as u64);
                    }
                    wait_clock_cycle!(sim, clock, x);
                }
                let mut l = log.lock().unwrap();
                l.overflow = x.overflow.val();
                l.cycles = cycles;
                break;
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 500_000).unwrap();
    Arc::try_unwrap(seen).unwrap().into_inner().unwrap()
}

fn check(seed: u64, ops: usize, ready_pct: u64) -> (usize, usize, usize) {
    let (cfg, passes) = traffic(seed, ops);
    let expected: Vec<OutFrame> = passes.iter().flat_map(|p| p.expected.clone()).collect();
    let holds = passes.iter().filter(|p| p.job.hold).count();
    let releases = passes.iter().filter(|p| p.job.release).count();
    let firsts = passes
        .iter()
        .filter(|p| p.first.is_none() && !p.frame.is_empty())
        .count();
    let templates = passes
        .iter()
        .filter(|p| p.frame.is_empty() && p.job.sig)
        .count();
    assert!(templates > 0, "a control pass's message");
    let seen = simulate(&cfg, passes, seed, ready_pct);
    assert!(!seen.overflow, "a FIFO overflowed");
    assert_eq!(seen.frames.len(), expected.len(), "frames sent");
    for (i, (got, want)) in seen.frames.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "frame {i} of {}", expected.len());
    }
    // Every frame-buffer slot handed back once per pass that used it last.
    assert_eq!(seen.freed.len(), firsts, "slots handed back");
    println!(
        "seed {seed}: {} passes' frames, {} sent, {holds} held, {releases} released, {} clocks",
        firsts,
        expected.len(),
        seen.cycles
    );
    (holds, releases, expected.len())
}

#[test]
fn held_frames_leave_byte_for_byte_as_the_model_sends_them() {
    let (holds, releases, _) = check(21, 1_500, 70);
    assert!(
        holds > 100 && releases > 100,
        "{holds} held, {releases} released"
    );
}

#[test]
fn under_back_pressure_nothing_is_lost_or_reordered() {
    let (holds, releases, _) = check(22, 600, 15);
    assert!(
        holds > 30 && releases > 30,
        "{holds} held, {releases} released"
    );
}

#[test]
fn egress_is_lint_clean_and_within_the_depth_target_with_the_presets_store() {
    // The preset: 4,096 slots of four beats.
    let r = jbsq_common::lint_and_synth("jbsq_egress", JbsqEgress::<14>::default());
    println!(
        "JBSQ egress, 16,384-beat frame store: {} LUTs, {} FFs, {} URAM288, {} RAMB36, {} LUT levels ({})",
        r.luts, r.ffs, r.urams, r.ramb36, r.lut_depth, r.deepest
    );
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{} LUT levels: {}",
        r.lut_depth,
        r.deepest
    );
    // The store's 8 Mbit in UltraRAM, not in LUTs: at most eight 72-bit URAM288 columns for a
    // 512-bit beat, four rows of 4,096 (Yosys 0.23 packs it into 29).
    assert!((29..=32).contains(&r.urams), "{r:?}");
    assert!(r.luts < 6_000, "{r:?}");
}
