//! Directed tests of a leaf's messages to its spine: the link rule (decision 6), the repair of
//! lost idle messages and its gap (decision 17, and T12 in the Tofino profile), and the load
//! report rule (decision 19).

mod common;

use common::*;
use horus_model::fixed::Load;
use horus_model::sched::{Profile, Scheduler, Signal, Target};
use horus_model::wire::PacketType;

#[test]
fn leaf_links_at_the_threshold_and_unlinks_when_the_idle_count_falls_to_the_lower_one() {
    let cfg = leaf_config(&[4], 0, 3, 1, 1.0);
    let (mut s, startup) = Scheduler::from_config(&cfg, 1).unwrap();
    assert_eq!(startup.len(), 1, "the third idle worker links the rack");
    assert_eq!(startup[0].header.pkt_type, PacketType::IdleSignal);
    assert_eq!(
        (startup[0].header.src_id, startup[0].target),
        (spine_node(0), Target::Spine(SPINE_ID))
    );
    // 4 idle -> 3 -> 2: still linked (2 > unlink_at 1); -> 1: unlink.
    let sig = |s: &mut Scheduler| {
        run(s, task(0, 0))
            .signals()
            .first()
            .map(|e| e.header.pkt_type)
    };
    assert_eq!(sig(&mut s), None);
    assert_eq!(sig(&mut s), None);
    assert_eq!(sig(&mut s), Some(PacketType::IdleRemove));
    assert!(!s.tables().pools[0].ctl.linked);
    // Replies from idle workers: 1 -> 2 idle, no link yet; -> 3 idle: link.
    let done = |s: &mut Scheduler, w: u16| {
        run(s, header(PacketType::TaskDoneIdle, 0, w, 0, 0))
            .signals()
            .first()
            .map(|e| e.header.pkt_type)
    };
    assert_eq!(done(&mut s, 3), None);
    assert_eq!(done(&mut s, 2), Some(PacketType::IdleSignal));
    assert_eq!(s.counters().sent_idle_add, 2);
    assert_eq!(s.counters().sent_idle_remove, 1);
}

/// The idle messages (idleAdd, idleRemove) a pass and its second passes sent, load reports left
/// out.
fn idle_messages(t: &Trace) -> Vec<PacketType> {
    t.signals()
        .iter()
        .map(|e| e.header.pkt_type)
        .filter(|&k| k != PacketType::QueueSignal)
        .collect()
}

#[test]
fn leaf_repairs_a_lost_idle_message_when_the_spine_flag_disagrees() {
    let mut s = leaf(&[2]);
    assert!(s.tables().pools[0].ctl.linked);
    let gap = u32::from(horus_model::config::DEFAULT_REPAIR_GAP_US);
    // The spine used power of two (flag 0) although we are linked: our idleAdd was lost. The
    // link at start-up was a control pass, which leaves the stamp at 0.
    let t = run_at(&mut s, task_from_spine(0, 1, false), gap);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleSignal]);
    assert_eq!(s.counters().idle_repairs, 1);
    assert_eq!(s.tables().pools[0].ctl.signaled_us, gap);
    let t = run_at(&mut s, task(0, 2), gap + 10);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleRemove]);
    assert!(
        !s.tables().pools[0].ctl.linked,
        "the last idle worker is gone"
    );
    // The spine still took us from its idle list (flag 1): tasks it sent before our idleRemove
    // reached it. Within the gap of that message, no repair.
    let t = run_at(&mut s, task_from_spine(0, 3, true), 2 * gap + 9);
    assert_eq!(idle_messages(&t), vec![], "{t:?}");
    assert_eq!(s.counters().idle_repairs, 1);
    // A gap after it, the disagreement means our idleRemove was lost: repair.
    let t = run_at(&mut s, task_from_spine(0, 4, true), 2 * gap + 10);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleRemove]);
    assert_eq!(s.counters().idle_repairs, 2);
    assert_eq!(s.tables().pools[0].ctl.signaled_us, 2 * gap + 10);
    // Flags from anyone but our spine are not spine state.
    let t = run_at(&mut s, header(PacketType::NewTask, 0, 999, 1, 5), 10 * gap);
    assert_eq!(idle_messages(&t), vec![]);
}

#[test]
fn repair_gap_zero_repairs_every_disagreement_and_the_gap_wraps_with_time() {
    let mut cfg = leaf_config(&[2], 2, 1, 0, 1.0);
    cfg.pools[0].params.idle_repair_gap_us = 0;
    let (mut s, _) = Scheduler::from_config(&cfg, 1).unwrap();
    for seq in 0..2 {
        run_at(&mut s, task(0, seq), 5);
    }
    assert!(!s.tables().pools[0].ctl.linked);
    // Gap 0: every task the spine took from its idle list draws an idleRemove, at any time.
    for seq in 0..3 {
        let t = run_at(&mut s, task_from_spine(0, 10 + seq, true), 5);
        assert_eq!(idle_messages(&t), vec![PacketType::IdleRemove]);
    }
    assert_eq!(s.counters().idle_repairs, 3);

    // A gap of 100 us across the wrap of the 32-bit microsecond clock.
    cfg.pools[0].params.idle_repair_gap_us = 100;
    let (mut s, _) = Scheduler::from_config(&cfg, 1).unwrap();
    run_at(&mut s, task(0, 0), u32::MAX - 60);
    let t = run_at(&mut s, task(0, 1), u32::MAX - 50);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleRemove]);
    assert_eq!(s.tables().pools[0].ctl.signaled_us, u32::MAX - 50);
    // 99 us later (after the wrap): held; 100 us later: repaired.
    let t = run_at(&mut s, task_from_spine(0, 2, true), 48);
    assert_eq!(idle_messages(&t), vec![]);
    let t = run_at(&mut s, task_from_spine(0, 3, true), 49);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleRemove]);
    assert_eq!(s.counters().idle_repairs, 1);
}

/// T12: the Tofino cell keeps the earliest repair time and compares it signed with the pass's
/// time, so a repair is held when the time since the last idle message is within 2^31 us past
/// the gap (the FPGA's unsigned age holds it only within the gap of a multiple of 2^32 us).
#[test]
fn the_tofino_profile_holds_a_repair_when_its_deadline_looks_ahead_by_the_signed_comparison() {
    let mut cfg = leaf_config(&[2], 2, 1, 0, 1.0);
    cfg.pools[0].params.idle_repair_gap_us = 100;
    let half = 1u32 << 31;
    let (last, cases) = (
        1000,
        [
            (1099, false, false),
            (1100, true, true),
            (1100 + half - 1, true, true),
            (1100 + half, true, false),
            (u32::MAX, true, false),
        ],
    );
    for profile in [Profile::FPGA, Profile::TOFINO] {
        for (at, fpga_due, tofino_due) in cases {
            let (mut s, _) = Scheduler::from_config_with(&cfg, 1, profile).unwrap();
            for seq in 0..2 {
                run_at(&mut s, task(0, seq), last);
            }
            // Two tasks take both idle workers: the pool is unlinked, its idleRemove stamped.
            assert!(!s.tables().pools[0].ctl.linked);
            assert_eq!(s.tables().pools[0].ctl.signaled_us, last);
            let t = run_at(&mut s, task_from_spine(0, 10, true), at);
            let due = if profile.repair_deadline {
                tofino_due
            } else {
                fpga_due
            };
            let want = if due {
                vec![PacketType::IdleRemove]
            } else {
                vec![]
            };
            assert_eq!(idle_messages(&t), want, "{profile:?} at {at}");
        }
    }
}

#[test]
fn an_idle_add_commit_stamps_the_pool_with_its_packet_time() {
    let mut s = leaf(&[3]);
    for seq in 0..3 {
        run_at(&mut s, task(0, seq), 1);
    }
    assert!(!s.tables().pools[0].ctl.linked);
    // A worker becomes idle at t = 1000: its idleAdd commit links the rack and stamps.
    let t = run_at(&mut s, header(PacketType::TaskDoneIdle, 0, 0, 0, 0), 1000);
    assert_eq!(idle_messages(&t), vec![PacketType::IdleSignal]);
    assert_eq!(s.tables().pools[0].ctl.signaled_us, 1000);
    let t = run_at(&mut s, header(PacketType::TaskDoneIdle, 0, 1, 0, 0), 1005);
    assert_eq!(idle_messages(&t), vec![]);
    // A task the spine sent by power of two before our idleAdd reached it: no repair.
    let t = run_at(&mut s, task_from_spine(0, 3, false), 1010);
    assert_eq!(idle_messages(&t), vec![]);
    assert!(s.tables().pools[0].ctl.linked);
    assert_eq!(s.counters().idle_repairs, 0);
}

#[test]
fn rack_average_is_reported_when_it_moves_by_the_delta_and_idle_signals_go_first() {
    let cfg = leaf_config(&[4], 0, 1, 0, 0.5);
    let mut s = Scheduler::from_config(&cfg, 1).unwrap().0;
    let kinds = |t: &Trace| {
        t.results
            .iter()
            .filter_map(|r| r.signal.map(|(k, _)| k))
            .collect::<Vec<_>>()
    };
    // Average after each task: 0.25, 0.5 (report), 0.75, 1.0 (idleRemove wins; report waits).
    assert_eq!(kinds(&run(&mut s, task(0, 0))), vec![]);
    let t = run(&mut s, task(0, 1));
    assert_eq!(kinds(&t), vec![Signal::LoadUpdate]);
    let h = t.signals()[0].header;
    assert_eq!(
        (h.pkt_type, h.qlen, h.seq_num, h.src_id, h.dst_id),
        (PacketType::QueueSignal, 0, 0x8000, 100, SPINE_ID)
    );
    assert_eq!(kinds(&run(&mut s, task(0, 2))), vec![]);
    assert_eq!(kinds(&run(&mut s, task(0, 3))), vec![Signal::IdleRemove]);
    // The reply brings it back to 0.75: moved 0.25 from the last report (0.5)... no report.
    assert_eq!(
        kinds(&run(&mut s, header(PacketType::TaskDone, 0, 0, 0, 0))),
        vec![]
    );
    // 0.5 after the next reply: |0.5 - 0.5| = 0, still nothing; the next task takes it to 0.75.
    assert_eq!(
        kinds(&run(&mut s, header(PacketType::TaskDone, 0, 1, 0, 0))),
        vec![]
    );
    assert_eq!(s.tables().pools[0].avg.avg.load(), Load(0x8000));
    assert_eq!(
        kinds(&run(&mut s, header(PacketType::TaskDone, 0, 2, 0, 0))),
        vec![]
    );
    assert_eq!(
        kinds(&run(&mut s, header(PacketType::TaskDone, 0, 3, 0, 0))),
        vec![Signal::LoadUpdate]
    );
    assert_eq!({ s.tables().pools[0].avg.reported }, 0);
}

/// Decision 19 (`docs/algorithm.md`): tasks from the pool's spine are in the spine's view of the
/// rack already (its drift), so the report rule leaves them out: it measures how far the rack's
/// own changes (replies, tasks from elsewhere) moved the average from the last report.
#[test]
fn report_rule_leaves_out_the_tasks_the_spine_counted() {
    let cfg = leaf_config(&[4], 0, 4, 3, 0.5);
    let mut s = Scheduler::from_config(&cfg, 1).unwrap().0;
    let loads = |t: &Trace| {
        t.results
            .iter()
            .filter_map(|r| match r.signal {
                Some((Signal::LoadUpdate, e)) => Some((e.header.qlen, e.header.seq_num)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // Link at 4: the first task unlinks (idleRemove); the rest are the report rule's alone.
    let first = run(&mut s, task_from_spine(0, 0, true));
    assert_eq!(idle_messages(&first), vec![PacketType::IdleRemove]);
    // Eight more from the spine: the average climbs to 2.25, and no report goes.
    for seq in 1..9 {
        assert_eq!(loads(&run(&mut s, task_from_spine(0, seq, false))), vec![]);
    }
    assert_eq!(s.tables().pools[0].avg.avg.load(), Load(0x24000));
    assert_eq!({ s.tables().pools[0].avg.spine_tasks }, 9);
    // A reply: 2.0, 0.25 below what the spine believes; a second: 0.5 below, a report, carrying
    // the average (1.75).
    let done = |w| header(PacketType::TaskDone, 0, w, 1, 0);
    assert_eq!(loads(&run(&mut s, done(0))), vec![]);
    assert_eq!(loads(&run(&mut s, done(1))), vec![(1, 0xc000)]);
    assert_eq!({ s.tables().pools[0].avg.spine_tasks }, 0);
    // A task from a client (not the spine) moves the rule like a reply, the other way.
    assert_eq!(loads(&run(&mut s, task(0, 20))), vec![]);
    assert_eq!(loads(&run(&mut s, task(0, 21))), vec![(2, 0x4000)]);
    s.check_invariants().unwrap();
}

/// Decision 7 (`docs/algorithm.md`): the report rule compares the unsaturated average
/// (`acc >> 16`, 48 bits); the report carries it saturated to 16.16. Past 65,535 tasks per worker
/// a rack therefore keeps reporting every `report_delta` (the same saturated value), and the first
/// step back below the ceiling reports at once.
#[test]
fn report_rule_runs_on_the_unsaturated_average_and_the_report_saturates() {
    let cfg = leaf_config(&[1], 0, 1, 0, 1.0);
    let mut s = Scheduler::from_config(&cfg, 1).unwrap().0;
    let load_of = |t: &Trace| {
        let loads: Vec<_> = t
            .results
            .iter()
            .filter_map(|r| match r.signal {
                Some((Signal::LoadUpdate, e)) => Some(e.header),
                _ => None,
            })
            .map(|h| (u32::from(h.qlen) << 16) | u32::from(h.seq_num))
            .collect();
        assert!(loads.len() <= 1);
        loads.first().copied()
    };
    // One worker: the average is the task count. The first task takes the idle worker (an
    // idleRemove, which displaces the report); every later one moves the average by 1.0.
    assert_eq!(load_of(&run(&mut s, task(0, 0))), None);
    for k in 2..=0xffffu32 {
        assert_eq!(
            load_of(&run(&mut s, task(0, k as u16))),
            Some(k << 16),
            "task {k}"
        );
    }
    assert_eq!({ s.tables().pools[0].avg.reported }, 0xffff_0000);
    // 65,536 and 65,537 tasks: the report saturates, the rule goes on.
    for k in [0x1_0000u64, 0x1_0001] {
        assert_eq!(load_of(&run(&mut s, task(0, 0))), Some(u32::MAX));
        assert_eq!({ s.tables().pools[0].avg.reported }, k << 16);
    }
    // Back down: 65,536 (still saturated), then 65,535.
    let done = || header(PacketType::TaskDone, 0, 0, 0, 0);
    assert_eq!(load_of(&run(&mut s, done())), Some(u32::MAX));
    assert_eq!(load_of(&run(&mut s, done())), Some(0xffff_0000));
    assert_eq!({ s.tables().pools[0].avg.reported }, 0xffff_0000);
}
