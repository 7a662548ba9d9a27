//! The JBSQ leaf's `poolAvg` in hardware (`horus_pipeline::jbsq::pool_avg::PoolAvgStage`, the
//! paper leaf's stage behind the JBSQ descriptor) against the model's (`JbsqLeaf`'s rack average,
//! report rule and `signal_header`): the model runs configurations, node additions (a control
//! pass per free place), removals with the host's read, tasks from clients and from the pool's
//! spine, replies, returned places and retries (the shared driver, `jbsq_common::driver`); each
//! pass enters the stage, one per clock, with what the stages before hand on, read off the model:
//! the pool's configuration and member count, the idle message `link` decided (the model's
//! message when it is idleAdd or idleRemove), a dropped pass (stopped before `queueCtl`), a task
//! dropped on a full region, a stale token (a retry), a removal's lost tasks, the host's new
//! `unit` for an addition or a removal. A control pass that adds or removes a node holds the
//! stage for `HOLD_CLOCKS` more clocks: the next pass enters right after. Every pass must leave
//! with the model's message (none, idleAdd, idleRemove, a load report) and its header: its type,
//! the average in `qlen` and `seq`, bit for bit, its pool, source and destination.

mod jbsq_common;

use horus_model::fixed::Load;
use horus_model::rng::Xorshift64;
use horus_model::sched::Signal;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::PacketType;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::pool_avg::{HOLD_CLOCKS, PoolAvgStage};
use jbsq_common::driver::{CLIENT, Driver, Step, encode_cfg, header, model_msg, stage_msg};
use jbsq_common::{b16, lint_and_synth, run_held};

/// `2^P` pools: `JbsqSizes::SMALL`.
const P: usize = 2;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.pools as usize == 1 << P);

const SPINE: SpineRef = SpineRef { id: 900, node: 7 };

fn pool_cfg(i: u16, k: u8, report_delta: u32, advertise: Advertise) -> JbsqPool {
    JbsqPool {
        base: i * 16,
        capacity: 16,
        k,
        ring_base: u32::from(i) * 256,
        ring_slots: 32,
        queue_base: u32::from(i) * 16,
        queue_slots: 4,
        fallback: Fallback::Random,
        advertise,
        hold_us: 0,
        params: Params {
            report_delta: Load(report_delta),
            ..Params::jbsq_default()
        },
        spine: Some(SPINE),
    }
}

/// The pass as it enters `poolAvg`: the descriptor the driver recorded, with what the stages
/// before hand on, read off the model.
fn stage_input(s: &Step) -> JbsqPhv {
    let mut p = s.pass;
    let pool = u64::from(p.pool) as usize;
    let src = u64::from(p.src) as usize;
    if let Some(pc) = s.after.pool_cfg[pool] {
        encode_cfg(&mut p, &pc.cfg);
        p.n = b16(pc.n);
    }
    let r = &s.result;
    // A packet's pass that stopped before `queueCtl` (`poolCfg`, `nodeCfg`) is dropped.
    let packet = !s.touched.is_empty();
    p.drop = packet && !s.touched.contains(&JbsqStage::QueueCtl);
    p.dropped = r.drop == Some(JbsqDrop::BufferFull);
    p.stale = matches!(r.resubmit, Some(JbsqResubmit::Retry { .. }));
    match r.signal {
        Some((Signal::IdleAdd, _)) => p.idle_add = true,
        Some((Signal::IdleRemove, _)) => p.idle_remove = true,
        _ => {}
    }
    // The host's `unit` is in the driver's pass; `outstanding` hands on a removal's `lost`.
    if p.is_ctl_remove {
        p.lost = b16(s.before.outstanding[src].tasks);
    }
    p
}

/// What a run showed: passes checked and the messages among them.
#[derive(Debug, Default)]
struct Seen {
    passes: usize,
    reports: usize,
    idle: usize,
    spine_tasks: usize,
    rescales: usize,
}

/// Runs the driver's recorded passes through the stage, one per clock and `HOLD_CLOCKS` bubbles
/// behind each addition or removal, and checks every pass's message against the model's.
fn check(d: &Driver) -> Seen {
    let mut fed = Vec::new();
    for s in &d.steps {
        let p = stage_input(s);
        fed.push(Some(p));
        if p.is_ctl_add || p.is_ctl_remove {
            fed.extend([None; HOLD_CLOCKS]);
        }
    }
    let out = run_held(PoolAvgStage::<P>::default(), fed, HOLD_CLOCKS + 4);
    assert_eq!(out.len(), d.steps.len(), "every pass leaves once");
    let mut seen = Seen::default();
    for (i, (s, o)) in d.steps.iter().zip(&out).enumerate() {
        assert_eq!(o.pool, s.pass.pool, "pass {i}: order");
        assert_eq!(
            stage_msg(o),
            model_msg(s),
            "pass {i} ({:?}, {:?})",
            s.pass,
            s.result
        );
        seen.passes += 1;
        match s.result.signal {
            Some((Signal::LoadUpdate, _)) => seen.reports += 1,
            Some(_) => seen.idle += 1,
            None => {}
        }
        if s.pass.is_task && u64::from(s.pass.src) == u64::from(SPINE.id) {
            seen.spine_tasks += 1;
        }
        if s.pass.is_ctl_add || s.pass.is_ctl_remove {
            seen.rescales += 1;
        }
    }
    seen
}

fn spine_task(d: &mut Driver, pool: u16, seq: u16, linked_flag: bool) -> JbsqResult {
    let mut h = header(PacketType::NewTask, pool, SPINE.id, seq);
    h.qlen = u16::from(linked_flag);
    d.packet(h, 64, u32::from(seq))
}

fn reports(d: &Driver, from: usize) -> Vec<usize> {
    d.steps[from..]
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.result.signal, Some((Signal::LoadUpdate, _))))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn tasks_from_the_spine_move_the_average_but_not_the_report_rule() {
    // Decision 19: 4 workers (unit 1/4), report delta 1.0. Four tasks from the spine move the
    // average by 1.0 and send nothing; a fifth task from a client does not report either (its
    // own tasks moved 0.25), the fourth client task does; a report forgets the spine's tasks.
    let mut d = Driver::new(SIZES, 3);
    d.configure(1, pool_cfg(1, 1, 0x1_0000, Advertise::Places));
    for node in 0..4 {
        d.add(1, node, None, 0);
    }
    let start = d.steps.len();
    for seq in 0..4 {
        spine_task(&mut d, 1, seq, true);
    }
    assert_eq!(reports(&d, start), Vec::<usize>::new());
    for seq in 4..8 {
        d.task(1, seq);
    }
    assert_eq!(
        reports(&d, start),
        vec![7],
        "the fourth client task reports"
    );
    // Replies: the average goes down by the spine's tasks too, which the report forgot.
    for node in 0..4 {
        d.reply(1, node);
    }
    d.drain();
    for seq in 8..12 {
        spine_task(&mut d, 1, seq, false);
    }
    let seen = check(&d);
    assert!(seen.reports >= 2 && seen.spine_tasks == 8, "{seen:?}");
}

#[test]
fn a_report_leaves_exactly_at_the_threshold_and_not_a_unit_before() {
    // 4 workers: each task moves the average by 0x4000. Delta 0x8000: every second task up,
    // every second reply down; delta 0x8001: every third. 3 workers: units that do not divide
    // 2^32, the fraction carried in the accumulator below 16.16.
    let mut d = Driver::new(SIZES, 7);
    d.configure(0, pool_cfg(0, 4, 0x8000, Advertise::Places));
    d.configure(2, pool_cfg(2, 4, 0x8001, Advertise::Places));
    d.configure(3, pool_cfg(3, 2, 0x5555, Advertise::Places));
    for node in 0..4 {
        d.add(0, node, None, 0);
        d.add(2, 16 + node, None, 0);
    }
    for node in 0..3 {
        d.add(3, 32 + node, None, 0);
    }
    let start = d.steps.len();
    for seq in 0..6 {
        d.task(0, seq);
    }
    assert_eq!(
        reports(&d, start),
        vec![1, 3, 5],
        "delta 2 units: every second task"
    );
    let start = d.steps.len();
    for seq in 0..6 {
        d.task(2, seq);
    }
    assert_eq!(
        reports(&d, start),
        vec![2, 5],
        "a unit and a bit over: every third"
    );
    let start = d.steps.len();
    for node in [0, 1, 2, 3, 0, 1] {
        d.reply(0, node);
    }
    let r = reports(&d, start);
    assert!(r.len() == 3, "replies down by 2 units each: {r:?}");
    for seq in 0..7 {
        d.task(3, seq);
        d.reply(3, 32 + seq % 3);
        d.task(3, seq);
    }
    d.drain();
    let seen = check(&d);
    assert!(seen.reports >= 10, "{seen:?}");
}

#[test]
fn rescales_back_to_back_each_with_a_reply_right_behind() {
    // Additions and removals on one pool, each followed at once (after the stage's hold) by a
    // reply or a task; a removal's lost tasks leave the average, an addition's prefilled tasks
    // join it; a removal of the last worker forgets every task.
    let mut d = Driver::new(SIZES, 11);
    d.configure(1, pool_cfg(1, 3, 0x2000, Advertise::Idle));
    d.add(1, 20, None, 0);
    d.add(1, 21, None, 0);
    for seq in 0..5 {
        d.task(1, seq);
    }
    d.add(1, 22, Some(4), 2);
    d.reply(1, 20);
    assert!(d.tables().outstanding[21].tasks > 0, "21 leaves with tasks");
    d.remove(1, 21);
    d.reply(1, 22);
    d.add(1, 21, None, 1);
    d.task(1, 5);
    d.remove(1, 20);
    d.remove(1, 22);
    d.reply(1, 21);
    d.task(1, 6);
    d.remove(1, 21);
    d.task(1, 7);
    d.add(1, 23, None, 3);
    d.reply(1, 23);
    d.drain();
    let seen = check(&d);
    assert!(seen.rescales == 9 && seen.reports >= 10, "{seen:?}");
}

#[test]
fn an_idle_message_displaces_a_report_which_waits_for_the_next_change() {
    // Idle workers, report delta 0.5 over 2 workers (a task moves 0.5): the task that takes the
    // last idle worker unlinks the rack (idleRemove) in the pass that would report; the report
    // waits, and the next task sends it with the average moved by two tasks.
    let mut d = Driver::new(SIZES, 13);
    d.configure(2, pool_cfg(2, 1, 0x8000, Advertise::Idle));
    d.add(2, 40, None, 0);
    d.add(2, 41, None, 0);
    let start = d.steps.len();
    d.task(2, 0);
    let r = d.task(2, 1);
    assert_eq!(r.signal.map(|s| s.0), Some(Signal::IdleRemove));
    let r = d.task(2, 2);
    assert_eq!(r.signal.map(|s| s.0), Some(Signal::LoadUpdate));
    assert_eq!(r.signal.unwrap().1.qlen, 1, "1.5 on the wire");
    // A reply's place back links the rack again on its second pass (no change of the average:
    // the idle message carries it as it stands).
    d.reply(2, 40);
    d.drain();
    d.reply(2, 41);
    d.drain();
    assert!(reports(&d, start).len() >= 2);
    let seen = check(&d);
    assert!(seen.idle >= 3, "{seen:?}");
}

#[test]
fn random_traffic_on_three_pools_sends_the_models_messages_pass_for_pass() {
    let mut d = Driver::new(SIZES, 21);
    d.configure(0, pool_cfg(0, 2, 0x6000, Advertise::Idle));
    d.configure(1, pool_cfg(1, 3, 0x1_0000, Advertise::Places));
    d.configure(
        3,
        JbsqPool {
            queue_slots: 3,
            fallback: Fallback::Drop,
            ..pool_cfg(3, 1, 0x3000, Advertise::Queue { room: 2 })
        },
    );
    let pools: [(u16, &[u16]); 3] = [(0, &[0, 1, 2]), (1, &[16, 17, 18, 19, 20]), (3, &[48, 49])];
    for (pool, nodes) in pools {
        for &n in nodes {
            d.add(pool, n, None, 0);
        }
    }
    let mut rng = Xorshift64::new(99);
    let mut seq = 0u16;
    for i in 0..3000 {
        let x = rng.next_u64();
        let (pool, nodes) = pools[(x % 3) as usize];
        let node = nodes[((x >> 16) % nodes.len() as u64) as usize];
        if i % 150 == 75 {
            let (pool, nodes) = pools[(i / 150) % 3];
            let node = nodes[(i / 300) % nodes.len()];
            if d.tables().node_cfg[usize::from(node)].active {
                let lost = d.tables().outstanding[usize::from(node)].tasks;
                d.remove(pool, node);
                d.add(pool, node, None, lost.min(1));
            }
            continue;
        }
        match (x >> 8) % 16 {
            0..=3 if !d.pending.is_empty() => {
                d.again();
            }
            0..=5 => {
                seq = seq.wrapping_add(1);
                d.task(pool, seq);
            }
            6..=7 => {
                seq = seq.wrapping_add(1);
                spine_task(&mut d, pool, seq, (x >> 40) % 2 == 0);
            }
            8..=14 => {
                d.reply(pool, node);
            }
            _ => {
                d.reply(pool, CLIENT - 1);
            }
        }
    }
    d.drain();
    let seen = check(&d);
    println!("{seen:?}");
    assert!(
        seen.reports > 400 && seen.idle > 150 && seen.rescales == 50 && seen.spine_tasks > 350,
        "{seen:?}"
    );
}

#[test]
fn pool_avg_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    let r = lint_and_synth("jbsq_pool_avg", PoolAvgStage::<6>::default());
    println!("poolAvg: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
