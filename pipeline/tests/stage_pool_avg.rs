//! Stage 11 `poolAvg`: the rack average's exact arithmetic, the load-report rule and the signals'
//! averages against `horus_model::sched::Scheduler` driven with the equivalent passes, rescales on
//! added and removed workers, and a spine instance that touches nothing.

mod common;

use common::*;
use horus_model::config::{Role, Sizes};
use horus_model::fixed::{Load, RackAverage};
use horus_model::sched::{
    ControlOp, Decision, NodeAddr, Packet, PacketResubmit, Params, Pass, PassResult, Resubmit,
    Scheduler, Signal, SpineRef,
};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
use horus_pipeline::phv::Phv;
use horus_pipeline::stages::pool_avg::{HOLD_CLOCKS, PoolAvgStage};

const POOL: u16 = 5;
const HALF: u32 = 0x8000;
/// The pool's spine, and the `src` of a task from it.
const SPINE: u16 = 100;

/// A leaf pass on `POOL` with a spine, not from the spine.
fn base(report_delta: u32) -> Phv {
    Phv {
        pool: u64::from(POOL).into(),
        spine_ok: true,
        spine_id: u64::from(SPINE).into(),
        src: 200.into(),
        report_delta: u64::from(report_delta).into(),
        ..Default::default()
    }
}

/// What left the stage: the signal and the average it carries.
fn signal(p: &Phv) -> Option<(Signal, u32)> {
    let avg = u64::from(p.avg) as u32;
    let flags = [
        (p.sig_idle_add, Signal::IdleAdd),
        (p.sig_idle_remove, Signal::IdleRemove),
        (p.sig_load_update, Signal::LoadUpdate),
    ];
    let set: Vec<Signal> = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
    assert!(set.len() <= 1, "at most one signal: {set:?}");
    set.first().map(|&s| (s, avg))
}

/// Runs `passes` one per clock, with the idle clocks a rescale holds the stage for after each
/// control pass that adds or removes a worker (the core admits nothing behind a control pass).
/// The pool is configured first, and its `report_delta` changes by a control pass (as `poolCfg`
/// would have it) wherever it differs from the pass before: the stage keeps margins that depend
/// on it. The passes added are left out of what is returned.
fn run(passes: &[Phv]) -> Vec<Option<(Signal, u32)>> {
    let mut fed = Vec::new();
    let mut ours = Vec::new();
    let mut delta = None;
    for p in passes {
        if !p.is_ctl_pool && delta != Some(p.report_delta) {
            fed.push(Some(Phv {
                is_ctl_pool: delta.is_none(),
                is_ctl_params: delta.is_some(),
                ..base(u64::from(p.report_delta) as u32)
            }));
            ours.push(false);
        }
        delta = Some(p.report_delta);
        fed.push(Some(*p));
        ours.push(true);
        if p.is_ctl_add || p.is_ctl_remove {
            fed.extend([None; HOLD_CLOCKS]);
        }
    }
    let out = drive_held!(PoolAvgStage<6>, PoolAvgStage::new(true), fed, 2);
    assert_eq!(out.len(), ours.len());
    out.iter()
        .zip(&ours)
        .filter(|(_, ours)| **ours)
        .map(|(p, _)| signal(p))
        .collect()
}

/// A rescale holds the stage for exactly `HOLD_CLOCKS` more clocks, and the pass leaves intact.
#[test]
fn a_rescale_holds_the_stage_for_the_multiplier_and_then_leaves() {
    let passes = [started(1), add(1, 3), started(1)];
    let configure = Phv {
        is_ctl_pool: true,
        ..base(1)
    };
    let fed = vec![
        Some(configure),
        Some(passes[0]),
        Some(passes[1]),
        None,
        None,
        None,
        None,
        Some(passes[2]),
    ];
    // The pass behind comes in the clock after the hold: the product must be in by then.
    let out = drive_held!(PoolAvgStage<6>, PoolAvgStage::new(true), fed, 2);
    assert_eq!(out.len(), 4);
    let out = &out[1..];
    assert!(out[0].is_task && out[2].is_task);
    let held = out[1];
    assert!(held.is_ctl_add && held.sig_load_update, "{held:?}");
    // 1 task of 1 worker, then 3 workers: 1/3 reported, 16.16 truncated.
    assert_eq!(u64::from(held.avg), 0x5555);
    // The task behind sees the rescaled entry: 2/3.
    assert_eq!(u64::from(out[2].avg), 0xaaaa);
    // Fields other than the stage's own pass through.
    assert_eq!(
        Phv {
            sig_load_update: false,
            avg: 0.into(),
            ..held
        },
        passes[1]
    );
}

/// The pass right behind a rescale's hold takes a task away with the new unit: one task less
/// subtracts the entry's copy of `unit` (`unit_dec`), which the rescale writes with `unit`.
#[test]
fn a_reply_right_behind_a_rescale_takes_away_the_new_unit() {
    let configure = Phv {
        is_ctl_pool: true,
        ..base(1)
    };
    let mut fed = vec![
        Some(configure),
        Some(started(1)),
        Some(started(1)),
        Some(add(1, 3)),
    ];
    fed.extend([None; HOLD_CLOCKS]);
    fed.extend([Some(finished(1)), Some(finished(1))]);
    let out = drive_held!(PoolAvgStage<6>, PoolAvgStage::new(true), fed, 2);
    assert_eq!(out.len(), 6);
    // Two tasks of three workers reported at the rescale, then one, then none.
    let unit = RackAverage::unit_for(3);
    assert_eq!(u64::from(out[3].avg), (2 * unit) >> 16);
    assert!(out[4].is_reply && out[4].sig_load_update, "{:?}", out[4]);
    assert_eq!(u64::from(out[4].avg), unit >> 16);
    assert_eq!(u64::from(out[5].avg), 0);
}

fn started(delta: u32) -> Phv {
    Phv {
        is_task: true,
        assigned: true,
        ..base(delta)
    }
}

/// A task from the pool's spine, placed.
fn from_spine(delta: u32) -> Phv {
    Phv {
        src: u64::from(SPINE).into(),
        ..started(delta)
    }
}

fn finished(delta: u32) -> Phv {
    Phv {
        is_reply: true,
        ..base(delta)
    }
}

fn add(delta: u32, workers: u32) -> Phv {
    Phv {
        is_ctl_add: true,
        unit: RackAverage::unit_for(workers).into(),
        ..base(delta)
    }
}

fn remove(delta: u32, workers: u32, removed_q: u32) -> Phv {
    Phv {
        is_ctl_remove: true,
        unit: RackAverage::unit_for(workers).into(),
        removed_q: u64::from(removed_q).into(),
        ..base(delta)
    }
}

/// The model's `RackAverage` and report rule replayed: after a change, `|floor(own / 2^16) -
/// reported| >= report_delta`, `own` the accumulator less the tasks from the spine since the last
/// report (each `unit`), on the unsaturated average; the report carries the average saturated to
/// 16.16 (`docs/algorithm.md`, decisions 7 and 19). `spine` counts the spine's tasks; a rescale,
/// or a change of `report_delta` (which `run` inserts where the passes' deltas differ), clears
/// it. With `report_delta` = 2^-16 every pass that moves the truncated average reports it, so the
/// signals show `acc >> 16` pass by pass.
fn expected(
    avg: &mut RackAverage,
    reported: &mut u64,
    spine: &mut u64,
    p: &Phv,
) -> Option<(Signal, u32)> {
    if p.is_ctl_add || p.is_ctl_remove {
        let removed = if p.is_ctl_remove {
            u64::from(p.removed_q) as u32 >> 16
        } else {
            0
        };
        avg.rescale(u64::from(p.unit), removed);
        *spine = 0;
    } else if p.is_reply {
        avg.task_finished();
    } else if p.assigned {
        if avg.task_started() && p.src == p.spine_id {
            *spine += 1;
        }
    } else {
        // No change (a task's first pass that resubmits): no report.
        return None;
    }
    let own = i128::from(avg.acc()) - i128::from(*spine) * i128::from(avg.unit);
    let moved = ((own >> 16) - i128::from(*reported)).unsigned_abs();
    (moved >= u128::from(u64::from(p.report_delta))).then(|| {
        *reported = avg.level();
        *spine = 0;
        (Signal::LoadUpdate, avg.load().0)
    })
}

/// Runs `passes` through the stage and checks every pass's report against the exact
/// arithmetic; returns what each pass sent.
fn check_exact(passes: &[Phv]) -> Vec<Option<(Signal, u32)>> {
    let seen = run(passes);
    let mut avg = RackAverage::default();
    let (mut reported, mut spine) = (0, 0);
    let mut delta = None;
    for (i, (p, s)) in passes.iter().zip(&seen).enumerate() {
        if delta.is_some_and(|d| d != p.report_delta) {
            spine = 0;
        }
        delta = Some(p.report_delta);
        assert_eq!(
            *s,
            expected(&mut avg, &mut reported, &mut spine, p),
            "pass {i}"
        );
    }
    seen
}

/// Decision 19: a task from the spine moves the average but not the rule (the spine's view holds
/// it); replies and tasks from elsewhere move both, and a report starts the count again. Every
/// kind of change meets every state of the margins, at several deltas and worker counts.
#[test]
fn tasks_from_the_spine_leave_the_report_rule_where_it_was() {
    let mut g = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        g ^= g << 13;
        g ^= g >> 7;
        g ^= g << 17;
        g
    };
    let mut passes = Vec::new();
    for (w, d) in [(4u32, HALF), (3, 0x1_0000), (1, 0x2_8000), (7, 0x4000)] {
        passes.push(add(d, w));
        for _ in 0..3_000 {
            passes.push(match next() % 8 {
                0..=3 => from_spine(d),
                4 | 5 => finished(d),
                _ => started(d),
            });
        }
        passes.extend((0..40).map(|_| from_spine(d)));
        passes.extend((0..60).map(|_| finished(d)));
    }
    check_exact(&passes);
    let seen = run(&passes);
    let reports = seen.iter().filter(|s| s.is_some()).count();
    assert!(reports > 100, "{reports} reports");
}

#[test]
fn k_starts_then_k_finishes_return_exactly_to_the_start() {
    // Three workers: the unit is inexact (round(2^32 / 3)), the accumulator stays tasks * unit.
    let k = 200;
    let mut passes = vec![add(1, 3)];
    passes.extend((0..k).map(|_| started(1)));
    passes.extend((0..k).map(|_| finished(1)));
    // Finishing at zero changes nothing (a reply the leaf never counted), nor does a task's first
    // pass that resubmits (not assigned).
    passes.push(finished(1));
    passes.push(Phv {
        is_task: true,
        ..base(1)
    });
    passes.extend([
        Phv {
            is_random: true,
            assigned: true,
            ..base(1)
        },
        Phv {
            is_sched2: true,
            assigned: true,
            ..base(1)
        },
        finished(1),
        finished(1),
    ]);
    check_exact(&passes);
    let seen = run(&passes);
    assert_eq!(
        seen[k],
        Some((
            Signal::LoadUpdate,
            ((k as u64 * RackAverage::unit_for(3)) >> 16) as u32
        ))
    );
    assert_eq!(
        seen[2 * k],
        Some((Signal::LoadUpdate, 0)),
        "back to exactly 0"
    );
}

#[test]
fn rescales_on_added_and_removed_workers() {
    let d = 1;
    let passes = vec![
        // One worker: unit 2^32, three tasks.
        add(d, 1),
        started(d),
        started(d),
        started(d),
        // Two workers: 3 tasks spread, 1.5.
        add(d, 2),
        started(d),
        // One removed with a queue of 2.75: two tasks leave, two stay on one worker.
        remove(d, 1, 0x2_c000),
        // A removal taking more than there is leaves 0; an empty pool (unit 0) forgets its tasks.
        add(d, 2),
        started(d),
        started(d),
        remove(d, 1, 0x9_0000),
        started(d),
        started(d),
        remove(d, 0, 0),
        // Tasks counted while the pool is empty add nothing; a new worker forgets nothing more.
        started(d),
        add(d, 1),
        finished(d),
        finished(d),
    ];
    check_exact(&passes);
}

/// The report rule at its edges: deltas of 0, 1, the whole range and values near the average,
/// thresholds that overflow or wrap, and an average that saturates (more than 65,535 tasks per
/// worker: the largest average, 0xffff_ffff) and comes back, with a change that does nothing
/// (a reply at zero, a task while saturated) still checking the rule.
#[test]
fn report_rule_holds_at_every_delta_and_through_saturation() {
    let mut g = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        g ^= g << 13;
        g ^= g >> 7;
        g ^= g << 17;
        g
    };
    let deltas = [
        0,
        1,
        2,
        0xffff,
        0x1_0000,
        0x2_0000,
        0x7fff_ffff,
        0xffff_0000,
        0xffff_fffe,
        0xffff_ffff,
    ];
    let mut delta = move || match next() % 4 {
        0 => next() as u32,
        _ => deltas[(next() % deltas.len() as u64) as usize],
    };
    // One worker: the average is the task count (<< 16) and saturates past 65,535 tasks; the
    // count itself is far from its own limit.
    let mut passes = vec![finished(delta()), add(delta(), 1)];
    for i in 0..100_000 {
        // Mostly tasks, now and then a reply, so that the average moves both ways.
        passes.push(if i % 7 == 3 {
            finished(delta())
        } else {
            started(delta())
        });
    }
    passes.extend((0..1_000).map(|_| started(delta())));
    passes.extend((0..12_000).map(|_| finished(delta())));
    // Three workers (an inexact unit) and back to one, through rescales.
    passes.extend([
        add(delta(), 3),
        remove(delta(), 1, 0x4_8000),
        add(delta(), 2),
    ]);
    passes.extend((0..2_000).map(|i| {
        if i % 3 == 0 {
            finished(delta())
        } else {
            started(delta())
        }
    }));
    passes.extend((0..60_000).map(|_| finished(delta())));
    passes.extend((0..3).map(|_| finished(delta())));
    // The run did reach the largest average and reported it.
    let seen = check_exact(&passes);
    assert!(seen.contains(&Some((Signal::LoadUpdate, u32::MAX))));
}

/// The report thresholds at their exact edges, where the accumulator's fraction matters: with
/// `w` workers of `unit = 0xffff_ffff / w` (3, 5, 17, 255, 257) the accumulator after `w` tasks is
/// `0xffff_ffff`, one below 2^32, so the average's fraction is as large as it gets (and with one
/// worker, `unit = 2^32`, it is always 0). Each check (one task more, one less, a rescale's
/// product; up from below the last report, down from above it) meets `w` tasks with the
/// `report_delta` that puts the threshold exactly at the new average (`d`: a report), one past
/// it (`d + 1`: none) or one short (`d - 1`), in three runs. The passes between move the count
/// quietly (`report_delta` the largest) or report on purpose (0), to set the last report.
#[test]
fn report_rule_holds_at_the_thresholds_exact_edges() {
    #[derive(Clone, Copy, PartialEq)]
    enum Delta {
        Quiet,
        Report,
        Edge,
    }
    use Delta::*;
    #[derive(Clone, Copy)]
    enum Step {
        More(u32),
        Less(u32),
        Rescale,
    }
    use Step::*;
    for offset in [0i64, 1, -1] {
        let mut passes = Vec::new();
        let mut avg = RackAverage::default();
        let mut reported = 0u64;
        for w in [1u32, 3, 5, 17, 255, 257] {
            let steps = [
                (Rescale, Report),
                (More(w - 1), Quiet),
                (More(1), Edge), // up, one task more
                (More(2), Report),
                (Less(3), Quiet),
                (More(1), Edge), // down, one task more
                (More(2), Report),
                (Less(1), Quiet),
                (Less(1), Edge), // down, one task less
                (Less(w), Report),
                (More(w + 1), Quiet),
                (Less(1), Edge), // up, one task less
                (Less(w), Report),
                (More(w), Quiet),
                (Rescale, Edge), // up, a rescale's product
                (More(2), Report),
                (Less(2), Quiet),
                (Rescale, Edge), // down, a rescale's product
                (Less(w), Quiet),
            ];
            for (step, kind) in steps {
                let (count, more) = match step {
                    More(n) => (n, Some(true)),
                    Less(n) => (n, Some(false)),
                    Rescale => (1, None),
                };
                for _ in 0..count {
                    let mut next = avg;
                    match more {
                        Some(true) => {
                            next.task_started();
                        }
                        Some(false) => next.task_finished(),
                        None => next.rescale(RackAverage::unit_for(w), 0),
                    }
                    let d = next.level().abs_diff(reported) as i64;
                    let delta = match kind {
                        Quiet => u32::MAX,
                        Report => 0,
                        Edge => (d + offset).clamp(0, i64::from(u32::MAX)) as u32,
                    };
                    let p = match more {
                        Some(true) => started(delta),
                        Some(false) => finished(delta),
                        None => add(delta, w),
                    };
                    expected(&mut avg, &mut reported, &mut 0, &p);
                    passes.push(p);
                }
            }
        }
        check_exact(&passes);
    }
}

/// Runs `passes` through the model, each resubmitted pass right after its first pass, and
/// returns the equivalent stage passes (what stages 0-10 would have put in the descriptor) and the
/// signal the model sent on each.
fn through_model(passes: Vec<Pass>) -> (Vec<Phv>, Vec<Option<(Signal, u32)>>) {
    let mut m = Scheduler::new(
        Role::Leaf,
        1,
        Sizes {
            pools: 64,
            nodes: 64,
            conn_table: 64,
        },
        1_000_000,
        7,
    );
    let mut phvs = Vec::new();
    let mut signals = Vec::new();
    let mut queue: std::collections::VecDeque<Pass> = passes.into();
    while let Some(pass) = queue.pop_front() {
        let delta = match pass {
            Pass::Control(ControlOp::ConfigurePool { params, .. }) => params.report_delta.0,
            _ => {
                m.tables().pools[usize::from(POOL)]
                    .cfg
                    .params
                    .report_delta
                    .0
            }
        };
        let n = u32::from(m.tables().pools[usize::from(POOL)].cfg.n);
        let mut p = base(delta);
        match pass {
            Pass::Control(ControlOp::ConfigurePool { .. }) => p.is_ctl_pool = true,
            Pass::Control(ControlOp::AddNode { .. }) => {
                p.is_ctl_add = true;
                p.unit = RackAverage::unit_for(n + 1).into();
            }
            Pass::Control(ControlOp::RemoveNode { node, .. }) => {
                let i = usize::from(node);
                let q = m.tables().nodes[i]
                    .load1
                    .corrected(m.tables().nodes[i].drift1);
                p.is_ctl_remove = true;
                p.unit = RackAverage::unit_for(n - 1).into();
                p.removed_q = u64::from(q.0).into();
            }
            Pass::Control(_) => unreachable!("not used here"),
            Pass::Packet(pk) => p.src = u64::from(pk.header.src_id).into(),
            Pass::Resubmit(Resubmit::Packet { header, .. }) => {
                p.src = u64::from(header.src_id).into()
            }
            _ => {}
        }
        match pass {
            Pass::Control(_) => {}
            Pass::Packet(pk) => match pk.header.pkt_type {
                PacketType::NewTask => p.is_task = true,
                PacketType::NewTaskRandom => p.is_random = true,
                PacketType::TaskDone => p.is_reply = true,
                PacketType::TaskDoneIdle => p.is_reply_idle = true,
                t => unreachable!("{t:?} not used here"),
            },
            Pass::Resubmit(Resubmit::Packet { op, .. }) => match op {
                PacketResubmit::Schedule { .. } => p.is_sched2 = true,
                PacketResubmit::IdleAddCommit { .. } => p.is_add_commit = true,
                PacketResubmit::IdleRemoveFinish { .. } => p.is_remove_finish = true,
            },
            Pass::Resubmit(Resubmit::RemoveNode { .. }) => p.is_ctl_remove2 = true,
        }
        let r: PassResult = m.process(pass).unwrap();
        assert_eq!(r.drop, None, "{pass:?}");
        p.assigned = matches!(
            r.decision,
            Some(
                Decision::Idle { .. }
                    | Decision::Pow2 {
                        resubmit: false,
                        ..
                    }
                    | Decision::Resubmitted { .. }
                    | Decision::Random { .. }
            )
        );
        let sig = r
            .signal
            .map(|(s, e)| (s, Load::from_wire(e.header.qlen, e.header.seq_num).0));
        // The idle signals are decided upstream (idleCtl): they come in with the pass.
        p.sig_idle_add = matches!(sig, Some((Signal::IdleAdd, _)));
        p.sig_idle_remove = matches!(sig, Some((Signal::IdleRemove, _)));
        if let Some(rs) = r.resubmit {
            queue.push_front(Pass::Resubmit(rs));
        }
        phvs.push(p);
        signals.push(sig);
    }
    (phvs, signals)
}

fn configure() -> Pass {
    Pass::Control(ControlOp::ConfigurePool {
        pool: POOL,
        base: 0,
        capacity: 8,
        params: Params {
            link_at: 4,
            unlink_at: 2,
            report_delta: Load(HALF),
            repair_gap_us: 0,
        },
        spine: Some(SpineRef { id: SPINE, node: 9 }),
    })
}

fn add_node(node: u16) -> Pass {
    Pass::Control(ControlOp::AddNode {
        pool: POOL,
        node,
        addr: NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([2, 0, 0, 0, 0, node as u8]),
                ip: [10, 0, 0, node as u8].into(),
                udp_port: 1234,
            },
            port: 1,
            dst_id: node,
        },
        workers: 1,
    })
}

fn packet(pkt_type: PacketType, src: u16, qlen: u16) -> Pass {
    Pass::Packet(Packet {
        header: HorusHeader {
            pkt_type,
            more_packets: false,
            pool_id: POOL,
            src_id: src,
            dst_id: 1,
            qlen,
            seq_num: 0,
        },
        time_us: 0,
    })
}

fn task() -> Pass {
    packet(PacketType::NewTask, 200, 0)
}

/// A task as the spine forwards it (not from its idle list).
fn spine_task() -> Pass {
    packet(PacketType::NewTask, SPINE, 0)
}

#[test]
fn report_rule_and_idle_signals_match_the_model() {
    let mut passes = vec![configure()];
    passes.extend((0..4).map(add_node));
    // Four idle pops: 0.25, 0.5 (the report is displaced by idleRemove at unlink_at = 2), 0.75
    // (the report goes out now), 1.0; then busy tasks (power of two, resubmits) and a random one.
    passes.extend((0..8).map(|_| task()));
    passes.push(packet(PacketType::NewTaskRandom, 200, 0));
    // Tasks from the spine, which the report rule leaves out (decision 19), between replies.
    passes.extend((0..6).map(|_| spine_task()));
    passes.push(packet(PacketType::TaskDone, 3, 3));
    passes.extend((0..3).map(|_| spine_task()));
    // Replies bring it down; an idle worker's reply is also an idleAdd (commit on its second pass).
    passes.extend([
        packet(PacketType::TaskDone, 0, 2),
        packet(PacketType::TaskDone, 1, 1),
        packet(PacketType::TaskDone, 2, 2),
        packet(PacketType::TaskDone, 0, 1),
        packet(PacketType::TaskDoneIdle, 1, 0),
        packet(PacketType::TaskDone, 3, 1),
        packet(PacketType::TaskDone, 2, 1),
    ]);
    // Worker changes with tasks outstanding: a fifth worker, then removals down to one worker
    // (unit 2^32) and an empty pool (unit 0 forgets the tasks).
    passes.push(add_node(4));
    passes.extend((0..3).map(|_| task()));
    passes.extend([0, 1, 2, 3].map(|n| {
        Pass::Control(ControlOp::RemoveNode {
            pool: POOL,
            node: n,
        })
    }));
    passes.extend((0..3).map(|_| task()));
    passes.push(Pass::Control(ControlOp::RemoveNode {
        pool: POOL,
        node: 4,
    }));
    // Re-configuring the empty pool clears it; it starts again from 0.
    passes.push(configure());
    passes.push(add_node(5));
    passes.extend((0..2).map(|_| task()));
    let (phvs, want) = through_model(passes);
    let seen = run(&phvs);
    for (i, (s, w)) in seen.iter().zip(&want).enumerate() {
        assert_eq!(s, w, "pass {i}: {:?}", phvs[i]);
    }
    // The first four tasks (passes 5..9), spelled out.
    let q = |x: u32| x * (1 << 14);
    assert_eq!(
        seen[5..9],
        [
            None,
            Some((Signal::IdleRemove, q(2))),
            Some((Signal::LoadUpdate, q(3))),
            None
        ]
    );
    let loads = want
        .iter()
        .flatten()
        .filter(|s| s.0 == Signal::LoadUpdate)
        .count();
    println!(
        "{} passes, {loads} load reports, all as the model",
        phvs.len()
    );
    assert!(loads >= 4);
}

#[test]
fn spine_instance_touches_nothing() {
    let mut passes = vec![add(HALF, 2)];
    passes.extend((0..6).map(|_| started(1)));
    passes.extend([
        Phv {
            sig_idle_add: true,
            ..finished(1)
        },
        remove(1, 1, 0x1_0000),
        Phv {
            is_ctl_pool: true,
            ..base(1)
        },
        finished(1),
    ]);
    let out = drive!(
        PoolAvgStage<6>,
        PoolAvgStage::new(false),
        passes.iter().copied().map(Some).collect()
    );
    assert_eq!(out, passes);
}

#[test]
fn pool_avg_stage_verilog_is_lint_clean_and_synthesizes() {
    let r = lint_and_synth("stage_pool_avg", PoolAvgStage::<6>::new(true));
    println!("poolAvg (64 pools): {r:#}\n  {}", r.path.join("\n  "));
    for d in &r.over_target {
        println!("  {} {} bits {} <- {}", d.levels, d.bits, d.to, d.from);
    }
    assert!(r.luts > 0 && r.ffs > 0, "{r}");
}
