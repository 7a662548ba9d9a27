//! The whole scheduler core (decode, pass mux, resubmit path, fourteen stages) against the
//! reference model, pass for pass, in rust-hdl's simulator.
//!
//! Every pass the core lets into stage 0 (its trace port) runs through the model in the same
//! order; every pass leaving stage 13 must have the model's outcome: forward target and address,
//! signal and its load, resubmission, drop reason, placed node. Traffic is random over every
//! packet type of the role, with hot pools and nodes back to back, bad IDs, unknown and legacy
//! types, non-Horus and malformed frames, control passes mid-stream (parameters, node additions
//! and removals) and idle input cycles.

use horus_model::config::{Role, Sizes};
use horus_model::fixed::Load;
use horus_model::sched::DropReason;
use horus_model::sched::{
    ControlOp, NodeAddr, Packet, Params, Pass, Resubmit, Scheduler, SpineRef,
};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
use horus_pipeline::core::{CORE_LATENCY, HorusCore};
use horus_pipeline::parser::{
    CLASS_DROP_CHECKSUM, CLASS_DROP_MALFORMED, CLASS_HORUS, CLASS_PASS_THROUGH, Parsed,
};
use horus_pipeline::pass::{Forward, Outcome, control_phv, parsed};
use horus_pipeline::phv::Phv;
use rust_hdl::prelude::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const P: usize = 3;
const N: usize = 6;
const C: usize = 4;
const TIMEOUT_US: u32 = 60;
const SEED: u64 = 0x5eed_1234;

type Core = HorusCore<P, N, C>;

fn sizes() -> Sizes {
    Sizes {
        pools: 1 << P,
        nodes: 1 << N,
        conn_table: 1 << C,
    }
}

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One input to the core.
#[derive(Clone, Debug)]
enum Input {
    Frame { class: u64, header: HorusHeader },
    Control(ControlOp),
}

fn addr_of(node: u16) -> NodeAddr {
    let n = node as u8;
    NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([0x02, 0, 0, 0xa0, n, n ^ 0x5a]),
            ip: [10, 1, n, 1].into(),
            udp_port: 1000 + node,
        },
        port: n.wrapping_mul(3),
        dst_id: 0x100 + node,
    }
}

/// Pools 0-2 are configured (regions of 16, 12 and 20 slots: not powers of two), pool 3 is not.
const POOLS: [(u16, u16, u16); 3] = [(0, 0, 16), (1, 16, 12), (2, 28, 20)];

fn params(g: &mut Gen) -> Params {
    let link_at = 1 + g.below(3) as u16;
    Params {
        link_at,
        unlink_at: g.below(u64::from(link_at)) as u16,
        report_delta: Load(1 + g.below(0x2_0000) as u32),
        repair_gap_us: g.below(8) as u16,
    }
}

fn setup(role: Role, g: &mut Gen) -> Vec<ControlOp> {
    let mut ops = Vec::new();
    for &(pool, base, capacity) in &POOLS {
        ops.push(ControlOp::ConfigurePool {
            pool,
            base,
            capacity,
            params: params(g),
            spine: (role == Role::Leaf && pool != 2).then_some(SpineRef {
                id: 100 + pool,
                node: 7 + pool,
            }),
        });
        // Node IDs of pool p: p, p + 4, p + 8, ... (a few left free for later additions).
        for k in 0..(capacity / 2).min(10) {
            ops.push(ControlOp::AddNode {
                pool,
                node: pool + 4 * k,
                addr: addr_of(pool + 4 * k),
                workers: 1 + g.below(32) as u16,
            });
        }
    }
    ops
}

/// Random traffic for `role` given the model's current state (for plausible node IDs).
fn traffic(role: Role, g: &mut Gen, m: &Scheduler, hot: &mut (u16, u16)) -> Input {
    use PacketType::*;
    // Mostly a hot pool and node, back to back.
    if g.chance(30) {
        let pool = if g.chance(90) {
            g.below(3)
        } else {
            3 + g.below(8)
        } as u16;
        hot.0 = if g.chance(3) {
            8 + g.below(100) as u16
        } else {
            pool
        };
        hot.1 = if g.chance(90) {
            hot.0 % 4 + 4 * g.below(10) as u16
        } else {
            g.below(80) as u16
        };
    }
    let (pool, src) = *hot;
    if g.chance(2) {
        return Input::Frame {
            class: [
                CLASS_PASS_THROUGH,
                CLASS_DROP_MALFORMED,
                CLASS_DROP_CHECKSUM,
            ][g.below(3) as usize],
            header: header(NewTask, pool, src, 0, 0, false),
        };
    }
    // The host validates against a state with no second pass pending (the barrier).
    if g.chance(3) && m.in_flight() == 0 {
        return Input::Control(control(role, g, m));
    }
    let x = g.below(100);
    let seq = g.below(6) as u16;
    let t = match role {
        Role::Leaf => match x {
            0..35 => NewTask,
            35..40 => NewTaskRandom,
            40..50 => TaskContinuation,
            50..72 => TaskDone,
            72..92 => TaskDoneIdle,
            _ => PacketType::ALL[g.below(16) as usize],
        },
        Role::Spine => match x {
            0..35 => NewTask,
            35..40 => NewTaskRandom,
            40..48 => TaskContinuation,
            48..62 => IdleSignal,
            62..74 => IdleRemove,
            74..90 => [QueueSignal, QueueSignalInit][g.below(2) as usize],
            _ => PacketType::ALL[g.below(16) as usize],
        },
    };
    let qlen = match t {
        TaskDoneIdle => 0,
        QueueSignal | QueueSignalInit => g.below(8) as u16,
        _ => g.below(4) as u16,
    };
    let seq_num = match t {
        QueueSignal | QueueSignalInit => g.next() as u16,
        _ => seq,
    };
    let more = matches!(t, NewTask | NewTaskRandom | TaskContinuation) && g.chance(40);
    Input::Frame {
        class: 0,
        header: header(t, pool, src, qlen, seq_num, more),
    }
}

fn header(t: PacketType, pool: u16, src: u16, qlen: u16, seq_num: u16, more: bool) -> HorusHeader {
    HorusHeader {
        pkt_type: t,
        more_packets: more,
        pool_id: pool,
        src_id: src,
        dst_id: 0x4242,
        qlen,
        seq_num,
    }
}

/// A control operation the model accepts.
fn control(role: Role, g: &mut Gen, m: &Scheduler) -> ControlOp {
    loop {
        let &(pool, _, _) = &POOLS[g.below(3) as usize];
        let node = pool + 4 * g.below(12) as u16;
        let op = match g.below(3) {
            0 => {
                let c = m.tables().pools[usize::from(pool)].cfg;
                let low = c.n.max(1);
                ControlOp::SetPoolParams {
                    pool,
                    params: params(g),
                    capacity: low + g.below(u64::from(c.capacity - low) + 3) as u16,
                }
            }
            1 => ControlOp::AddNode {
                pool,
                node,
                addr: addr_of(node),
                workers: if role == Role::Spine {
                    1 + g.below(32) as u16
                } else {
                    1
                },
            },
            _ => ControlOp::RemoveNode { pool, node },
        };
        let ok = m.validate(&op).is_ok();
        // Keep at least one node in each pool most of the time.
        let keeps = !matches!(op, ControlOp::RemoveNode { .. })
            || m.tables().pools[usize::from(pool)].cfg.n > 2;
        if ok && keeps {
            return op;
        }
    }
}

#[derive(Debug)]
struct Expected {
    pass: Option<Pass>,
    decision: Option<horus_model::sched::Decision>,
    outcome: Outcome,
}

/// The descriptor fields that explain a decision.
fn brief(p: &Phv) -> String {
    format!(
        "n={} base={} idle={} pos={} r1={} r2={} a=({}, l={:#x} d={:#x}) b=({}, l={:#x} d={:#x}) diff={:#x} chosen={} resubmit={} drop={} sub_drop={}",
        p.n.index(),
        p.base.index(),
        p.idle,
        p.pos.index(),
        p.r1.index(),
        p.r2.index(),
        p.a_node.index(),
        p.a_l.index(),
        p.a_d.index(),
        p.b_node.index(),
        p.b_l.index(),
        p.b_d.index(),
        p.diff.index(),
        p.chosen.index(),
        p.resubmit,
        p.drop.index(),
        p.sub_drop.index()
    )
}

struct Report {
    passes: usize,
    resubmits: usize,
    controls: usize,
    placed: usize,
    drops: usize,
    signals: usize,
    cycles: usize,
}

/// Runs `frames` inputs through the core and the model; panics at the first difference.
fn run(role: Role, seed: u64, frames: usize, busy_percent: u64) -> Report {
    let mut uut = Core::new(role, SEED, TIMEOUT_US);
    uut.connect_all();
    let report = Arc::new(Mutex::new(None));
    let sink = report.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Core>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Core>| {
        let mut x = sim.init()?;
        let mut g = Gen(seed | 1);
        let mut m = Scheduler::new(role, 1, sizes(), TIMEOUT_US, SEED);
        let mut inputs: VecDeque<Input> = setup(role, &mut g).into_iter().map(Input::Control).collect();
        let mut generated = 0usize;
        let mut hot = (0u16, 0u16);
        let mut time = 0u32;
        let mut expected: VecDeque<Expected> = VecDeque::new();
        let mut resubs: VecDeque<Resubmit> = VecDeque::new();
        let mut r = Report {
            passes: 0,
            resubmits: 0,
            controls: 0,
            placed: 0,
            drops: 0,
            signals: 0,
            cycles: 0,
        };
        let mut left = 0usize;
        let mut idle_cycles = 0usize;
        wait_clock_true!(sim, clock, x);
        loop {
            r.cycles += 1;
            time = time.wrapping_add(g.below(3) as u32);
            if inputs.is_empty() && generated < frames {
                inputs.push_back(traffic(role, &mut g, &m, &mut hot));
                generated += 1;
            }
            // Present the head input (a packet only on busy cycles).
            x.pkt_valid.next = false;
            x.ctl_valid.next = false;
            match inputs.front() {
                Some(Input::Frame { class, header }) if g.chance(busy_percent) => {
                    let mut p: Parsed = parsed(header);
                    p.class = (*class).into();
                    x.pkt.next = p;
                    x.pkt_valid.next = true;
                }
                Some(Input::Control(op)) => {
                    x.ctl.next = control_phv(&m, op);
                    x.ctl_valid.next = true;
                }
                _ => {}
            }
            x.pkt_time.next = u64::from(time).into();
            wait_clock_false!(sim, clock, x);
            // What leaves this cycle (entered CORE_LATENCY cycles ago) ...
            let leaving = x.out_valid.val().then(|| x.out.val());
            // ... and what enters at the coming edge.
            let entering: Option<Phv> = x.trace_valid.val().then(|| x.trace.val());
            let second = entering.is_some_and(|p| {
                p.is_sched2 || p.is_add_commit || p.is_remove_finish || p.is_ctl_remove2
            });
            if let Some(out) = leaving {
                let e = expected.pop_front().expect("a pass left that never entered");
                let got = Outcome::of_phv(&out, role, second);
                assert_eq!(
                    got, e.outcome,
                    "pass {left} ({:?}, model decision {:?}): hardware outcome differs from the model's\ndescriptor: {}",
                    e.pass,
                    e.decision,
                    brief(&out)
                );
                left += 1;
            }
            if let Some(p) = entering {
                r.passes += 1;
                let pass = if x.ctl_ready.val() {
                    let Some(Input::Control(op)) = inputs.pop_front() else {
                        unreachable!()
                    };
                    r.controls += 1;
                    Some(Pass::Control(op))
                } else if second {
                    r.resubmits += 1;
                    Some(Pass::Resubmit(resubs.pop_front().expect("a second pass the model did not ask for")))
                } else {
                    assert!(x.pkt_valid.val() && x.pkt_ready.val(), "a pass entered from nowhere");
                    let Some(Input::Frame { class, header }) = inputs.pop_front() else {
                        unreachable!()
                    };
                    assert_eq!(p.time.index() as u32, time);
                    if class == CLASS_HORUS {
                        Some(Pass::Packet(Packet {
                            header,
                            time_us: time,
                        }))
                    } else {
                        // Never seen by the scheduler: passed through or dropped by class.
                        expected.push_back(Expected {
                            pass: None,
                            decision: None,
                            outcome: rejected(class),
                        });
                        None
                    }
                };
                if let Some(pass) = pass {
                    let res = m.process(pass).unwrap_or_else(|e| panic!("{pass:?}: {e}"));
                    if let Some(rs) = res.resubmit {
                        resubs.push_back(rs);
                    }
                    let outcome = Outcome::of_model(&res);
                    r.placed += usize::from(outcome.placed.is_some());
                    r.drops += usize::from(outcome.drop.is_some());
                    r.signals += usize::from(outcome.signal.is_some());
                    expected.push_back(Expected {
                        pass: Some(pass),
                        decision: res.decision,
                        outcome,
                    });
                }
            }
            wait_clock_true!(sim, clock, x);
            if inputs.is_empty() && generated >= frames && expected.is_empty() {
                idle_cycles += 1;
                if idle_cycles > 2 * CORE_LATENCY {
                    break;
                }
            }
        }
        assert_eq!(x.rng_state.val().to_u64(), m.rng_state(), "generator state");
        assert_eq!(x.in_flight.val().index(), 0, "passes still in flight");
        *sink.lock().unwrap() = Some(r);
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 200 * (frames as u64 + 500))
        .unwrap();
    report.lock().unwrap().take().expect("the bench finished")
}

/// The outcome of a frame the parser did not hand to the scheduler.
fn rejected(class: u64) -> Outcome {
    let (forward, drop) = match class {
        CLASS_PASS_THROUGH => (Some(Forward::PassThrough), None),
        CLASS_DROP_MALFORMED => (None, Some(DropReason::Malformed)),
        CLASS_DROP_CHECKSUM => (None, Some(DropReason::BadChecksum)),
        _ => unreachable!("class {class}"),
    };
    Outcome {
        forward,
        signal: None,
        resubmit: false,
        drop,
        placed: None,
    }
}

fn check(role: Role, seed: u64, frames: usize, busy: u64) {
    let r = run(role, seed, frames, busy);
    eprintln!(
        "{role:?}: {} passes in {} cycles ({} resubmitted, {} control), {} placed, {} drops, {} signals",
        r.passes, r.cycles, r.resubmits, r.controls, r.placed, r.drops, r.signals
    );
    // The traffic must have exercised what it is meant to.
    assert!(
        r.resubmits > frames / 50,
        "resubmitted passes: {}",
        r.resubmits
    );
    assert!(r.controls > 20, "control passes: {}", r.controls);
    assert!(r.placed > frames / 5, "placed tasks: {}", r.placed);
    assert!(r.drops > frames / 50, "drops: {}", r.drops);
    if role == Role::Leaf {
        assert!(r.signals > frames / 100, "signals: {}", r.signals);
    }
}

#[test]
fn leaf_core_matches_the_model_back_to_back() {
    check(Role::Leaf, 1, 3000, 100);
}

#[test]
fn leaf_core_matches_the_model_with_idle_cycles() {
    check(Role::Leaf, 2, 2000, 60);
}

#[test]
fn spine_core_matches_the_model_back_to_back() {
    check(Role::Spine, 3, 3000, 100);
}

#[test]
fn spine_core_matches_the_model_with_idle_cycles() {
    check(Role::Spine, 4, 2000, 60);
}

#[test]
fn core_verilog_is_lint_clean() {
    let mut uut = Core::new(Role::Leaf, SEED, TIMEOUT_US);
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint("core", &v).unwrap();
}

#[test]
fn core_stages_follow_the_stage_plan() {
    let core = Core::new(Role::Leaf, SEED, TIMEOUT_US);
    assert_eq!(core.tables(), horus_model::sched::Stage::ALL);
}
