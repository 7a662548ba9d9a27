//! The datapath of the leaf that holds tasks (`horus_pipeline::jbsq::switch::JbsqSwitch`: the
//! paper leaf's ingress, the JBSQ core, the map to the egress's jobs, the egress with its frame
//! store) against the model's frame switch (`JbsqFrameSwitch`), frame for frame, in rust-hdl's
//! simulator at the preset's sizes.
//!
//! The example configuration (`configs/example-leaf-jbsq.toml`) sets the model up; the same
//! operations run through the test driver give the control passes that set the datapath up
//! (each pool configured, its workers added with their addresses, a pass per free place), and
//! the two leaves' tables must then be equal. Frames go in on the AXI-Stream input, the output is
//! ready at random; every pass the core lets in (its trace port) runs through the model in the
//! same order (a frame, or the second pass the model handed out), and the datapath must send
//! exactly the model's frames, byte for byte, in order, each out of the model's port: the
//! set-up's messages to the spine, tasks forwarded and held, held tasks released to the replying
//! worker, replies and frames not Horus's passed through, control frames to the control port.

mod jbsq_common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::NodeAddr;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::JbsqSizes;
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameResubmit, JbsqFrameSwitch};
use horus_model::wire::{Endpoint, HORUS_UDP_PORT, HorusFrame, PacketType};
use horus_pipeline::cfg::{SpineEntry, SpineTable, SwitchCfg};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::switch::JbsqSwitch;
use horus_regs::mac_bits;
use jbsq_common::driver::{Driver, client, header};
use jbsq_common::jobs::{beat_bits, beat_bytes};
use rust_hdl::prelude::*;

const CONFIG: &str = include_str!("../../configs/example-leaf-jbsq.toml");
const SEED: u64 = 7;

/// The preset's sizes: 64 pools, 4,096 nodes, 65,536 ring entries, 4,096 buffer slots, 1,024
/// connection entries, a frame store of four beats a slot.
type Sw = JbsqSwitch<6, 12, 16, 12, 10, 14>;

fn switch_cfg(cfg: &Config) -> (SwitchCfg, SpineTable) {
    let s = &cfg.switch;
    let sc = SwitchCfg {
        id: u64::from(s.id).into(),
        mac: mac_bits(s.mac).into(),
        ip: u64::from(u32::from(s.ip)).into(),
        udp: u64::from(s.udp_port).into(),
        pass_through_port: u64::from(s.pass_through_port).into(),
        control_port: u64::from(s.control_port).into(),
    };
    let e = |i: usize| {
        cfg.spines
            .get(i)
            .map(|l| SpineEntry {
                valid: true,
                id: u64::from(l.id).into(),
                mac: mac_bits(l.mac).into(),
                ip: u64::from(u32::from(l.ip)).into(),
                udp: u64::from(l.udp_port).into(),
                egress: u64::from(l.port).into(),
            })
            .unwrap_or_default()
    };
    let st = SpineTable {
        s0: e(0),
        s1: e(1),
        s2: e(2),
        s3: e(3),
    };
    (sc, st)
}

/// The model set up from the configuration, its set-up's frames, and the control passes that set
/// the datapath up the same way.
fn setup(cfg: &Config) -> (JbsqFrameSwitch, Vec<OutFrame>, Vec<JbsqPhv>) {
    let (sw, out) = JbsqFrameSwitch::from_config(cfg, SEED).unwrap();
    let sizes = sw.leaf().sizes();
    assert_eq!(sizes, JbsqSizes::DEFAULT, "the datapath's sizes");
    let mut d = Driver::new(sizes, SEED);
    d.set_conn_timeout_us(cfg.switch.conn_timeout_us);
    for pool in &cfg.pools {
        let pc = sw.leaf().tables().pool_cfg[usize::from(pool.id)].unwrap();
        d.configure(pool.id, pc.cfg);
        for n in &pool.nodes {
            d.add_at(pool.id, n.id, n.k, 0, NodeAddr::of(n));
        }
    }
    assert_eq!(
        format!("{:?}", d.tables()),
        format!("{:?}", sw.leaf().tables()),
        "the set-ups agree"
    );
    (sw, out, d.steps.iter().map(|s| s.pass).collect())
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

#[derive(Default)]
struct Seen {
    frames: Vec<OutFrame>,
    expected: Vec<OutFrame>,
    cycles: usize,
    passes: usize,
    seconds: usize,
    overflow: bool,
    /// The model's counts over the run.
    counters: Option<horus_model::sched::jbsq::JbsqCounters>,
}

fn run(seed: u64, n: usize, ready_pct: u64) -> Seen {
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    let (model, setup_out, ctl) = setup(&cfg);
    let input = frames(&cfg, seed, n);
    // The bench runs once: it takes these.
    let start = Mutex::new(Some((model, setup_out, ctl, input)));
    let (sc, st) = switch_cfg(&cfg);
    let mut uut = Sw::new(JbsqSizes::DEFAULT, SEED, cfg.switch.conn_timeout_us);
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Sw>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Sw>| {
        let mut x = sim.init()?;
        let (mut model, mut expected, ctl, input) = start.lock().unwrap().take().unwrap();
        let mut rng = Xorshift64::new(seed ^ 0x5a5a);
        let mut ctl: VecDeque<JbsqPhv> = ctl.into();
        // Frames to send, the beat of the head one, and the frames sent not yet in a pass.
        let mut to_send: VecDeque<Vec<u8>> = input.into();
        let mut beat = 0usize;
        let mut sent: VecDeque<Vec<u8>> = VecDeque::new();
        let mut pending: VecDeque<JbsqFrameResubmit> = VecDeque::new();
        let mut frame: Vec<u8> = Vec::new();
        let (mut cycles, mut now, mut quiet) = (0usize, 0u32, 0usize);
        x.cfg.next = sc;
        x.spines.next = st;
        wait_clock_true!(sim, clock, x);
        loop {
            cycles += 1;
            if cycles % 4 == 0 {
                now = now.wrapping_add(1);
            }
            x.now_us.next = u64::from(now).into();
            // The set-up's control passes first, then the frames, a beat a clock at random.
            x.ctl_valid.next = false;
            if let Some(&p) = ctl.front() {
                x.ctl.next = p;
                x.ctl_valid.next = true;
            }
            x.s_axis_tvalid.next = false;
            let offer = ctl.is_empty() && rng.next_u64() % 100 < 80;
            if let (Some(f), true) = (to_send.front(), offer) {
                let chunk = &f[64 * beat..f.len().min(64 * beat + 64)];
                let last = 64 * beat + 64 >= f.len();
                x.s_axis_tdata.next = beat_bits(chunk);
                x.s_axis_tkeep.next = if chunk.len() == 64 {
                    u64::MAX.into()
                } else {
                    ((1u64 << chunk.len()) - 1).into()
                };
                x.s_axis_tlast.next = last;
                x.s_axis_tvalid.next = true;
            }
            let ready = rng.next_u64() % 100 < ready_pct;
            x.m_axis_tready.next = ready;
            wait_clock_false!(sim, clock, x);
            // The input beat taken at the coming edge.
            if x.s_axis_tvalid.val() && x.s_axis_tready.val() {
                let f = to_send.front().unwrap();
                if 64 * beat + 64 >= f.len() {
                    sent.push_back(to_send.pop_front().unwrap());
                    beat = 0;
                } else {
                    beat += 1;
                }
            }
            if x.ctl_valid.val() && x.ctl_ready.val() {
                ctl.pop_front();
            }
            // A pass entering the stages: the model runs it.
            if x.trace_valid.val() {
                let p = x.trace.val();
                let mut l = log.lock().unwrap();
                l.passes += 1;
                let r = if p.is_retry || p.is_return {
                    l.seconds += 1;
                    let back = pending.pop_front().expect("a second pass the model gave");
                    Some(model.process(JbsqFramePass::Resubmit(back)))
                } else if p.is_ctl_pool
                    || p.is_ctl_add
                    || p.is_ctl_place
                    || p.is_ctl_remove
                    || p.is_ctl_read
                {
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
            wait_clock_true!(sim, clock, x);
            let idle = to_send.is_empty()
                && sent.is_empty()
                && ctl.is_empty()
                && x.in_flight.val().index() == 0;
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet > 2_000 || cycles > 400_000 {
                let mut l = log.lock().unwrap();
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
    sim.run(Box::new(uut), 10 * 500_000).unwrap();
    Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap()
}

fn check(seed: u64, n: usize, ready_pct: u64) {
    let s = run(seed, n, ready_pct);
    assert!(!s.overflow, "a FIFO overflowed");
    assert_eq!(s.frames.len(), s.expected.len(), "frames sent");
    let c = s.counters.unwrap();
    println!(
        "seed {seed}: {n} frames in, {} passes ({} second), {} frames out, {} clocks; {} tasks, \
         {} placed, {} held, {} released, {} over a bound, {} continuations, {} to control, {} load \
         reports, {} idle messages",
        s.passes,
        s.seconds,
        s.frames.len(),
        s.cycles,
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
}

#[test]
fn the_jbsq_datapath_sends_the_models_frames() {
    check(31, 600, 70);
}

#[test]
fn under_back_pressure_the_jbsq_datapath_loses_and_reorders_nothing() {
    check(32, 250, 15);
}

#[test]
fn the_jbsq_datapath_is_lint_clean_and_within_the_depth_target_at_the_preset_sizes() {
    let r = jbsq_common::lint_and_synth(
        "jbsq_switch",
        Sw::new(
            JbsqSizes::DEFAULT,
            SEED,
            horus_model::config::DEFAULT_CONN_TIMEOUT_US,
        ),
    );
    println!("JBSQ datapath: {r:#}");
    jbsq_common::print_board_shares(&r);
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}\n{:#?}",
        r.over_target
    );
}
