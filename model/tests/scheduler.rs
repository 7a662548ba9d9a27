//! Directed tests of the reference scheduler: the paper's worked examples step by step, and each
//! behaviour of Algorithms 1 and 2, §3.4 and §A.1-A.4 as we decided it in docs/algorithm.md.

mod common;

use common::*;
use horus_model::config::Role;
use horus_model::fixed::{Drift, Load};
use horus_model::rng::Xorshift64;
use horus_model::sched::{
    ControlError, ControlOp, Decision, DropReason, IdleIndex, Packet, PacketResubmit, Params,
    Resubmit, Scheduler, Target,
};
use horus_model::wire::PacketType;

fn idle_signal(pool: u16, node: u16) -> horus_model::wire::HorusHeader {
    header(PacketType::IdleSignal, pool, node, 0, 0)
}

fn idle_remove(pool: u16, node: u16) -> horus_model::wire::HorusHeader {
    header(PacketType::IdleRemove, pool, node, 0, 0)
}

/// Fig. 4: nodes 4, 3, 6, 7 idle; removing node 3 takes two passes and moves 7 into its place.
#[test]
fn fig4_idle_removal_moves_the_last_node_into_the_hole_in_two_passes() {
    let mut s = spine(&[&[8, 8, 8, 8, 8, 8, 8, 8]]);
    for n in [4, 3, 6, 7] {
        run(&mut s, idle_signal(0, n));
    }
    assert_eq!(s.idle_nodes(0), vec![4, 3, 6, 7]);

    // Pass 1: p decremented, lock taken, removedIdx = idleIndex[3] = 1, lastNode = idleList[3] = 7.
    let first = s.packet(Packet {
        header: idle_remove(0, 3),
        time_us: 0,
    });
    let Some(
        rs @ Resubmit::Packet {
            op: PacketResubmit::IdleRemoveFinish { finish },
            ..
        },
    ) = first.resubmit
    else {
        panic!("an idle removal asks for a second pass: {first:?}");
    };
    assert_eq!(
        finish,
        horus_model::sched::RemoveFinish::Move {
            pos: 1,
            last: horus_model::sched::NodeRef {
                node: 7,
                factor: Load(0x2000)
            }
        }
    );
    assert_eq!(s.tables().pools[0].ctl.p, 3);
    assert!(s.tables().pools[0].ctl.locked);
    assert_eq!(s.tables().nodes[3].idle_index, IdleIndex::Absent);

    // Pass 2 (Algorithm 1 lines 18-19): idleList[1] <- 7; idleIndex[7] <- 1; lock released.
    s.resubmit(rs);
    assert_eq!(s.idle_nodes(0), vec![4, 7, 6]);
    assert_eq!(s.tables().nodes[7].idle_index, IdleIndex::Member(1));
    assert!(!s.tables().pools[0].ctl.locked);
    assert_eq!(s.counters().idle_removes, 1);
    s.check_invariants().unwrap();
}

/// A seed whose generator, after `skip` steps, draws exactly `want` for a pool of `n` nodes.
fn seed_drawing(n: u16, skip: usize, want: (u16, u16)) -> u64 {
    (1..1_000_000u64)
        .find(|&seed| {
            let mut g = Xorshift64::new(seed);
            (0..skip).for_each(|_| {
                g.next_u64();
            });
            g.two_samples(n) == want
        })
        .expect("some seed draws the wanted samples")
}

/// A leaf of one pool of `n` workers with an empty idle list (every worker popped once), whose
/// generator next draws `want`.
fn busy_leaf(n: u16, want: (u16, u16)) -> Scheduler {
    let cfg = leaf_config(&[n], 0, 1, 0, 1.0);
    let seed = seed_drawing(n, usize::from(n), want);
    let mut s = Scheduler::from_config(&cfg, seed).unwrap().0;
    tasks(&mut s, 0, usize::from(n));
    assert!(s.idle_nodes(0).is_empty());
    s
}

fn set(s: &mut Scheduler, node: u16, load: u16, drift: i32) {
    let t = s.tables_mut();
    let i = usize::from(node);
    t.nodes[i].load1 = Load::from_tasks(load);
    t.nodes[i].load2 = Load::from_tasks(load);
    t.nodes[i].drift1 = Drift(drift << 16);
    t.nodes[i].drift2 = Drift(drift << 16);
}

/// Fig. 13 / §A.1: m = 0 (load 3, drift 3), n = 2 (load 4, drift 1). The first pass picks m by load,
/// finds d_m = 3 > l_n - l_m = 1 and resubmits with q_m = 6, q_n = 5; the second pass picks n and
/// charges it: load 6, drift 0.
#[test]
fn fig13_lazy_update_resubmits_and_the_second_pass_picks_the_truly_shorter_queue() {
    let mut s = busy_leaf(4, (0, 2));
    set(&mut s, 0, 3, 3);
    set(&mut s, 2, 4, 1);
    let first = s.packet(Packet {
        header: task(0, 77),
        time_us: 0,
    });
    assert_eq!(
        first.decision,
        Some(Decision::Pow2 {
            sel: 0,
            other: 2,
            resubmit: true
        })
    );
    assert_eq!(first.forward, None, "the task waits for its second pass");
    let Some(
        rs @ Resubmit::Packet {
            op: PacketResubmit::Schedule { sel, other },
            ..
        },
    ) = first.resubmit
    else {
        panic!("resubmission expected");
    };
    assert_eq!(
        (sel.node, sel.q, other.node, other.q),
        (0, Load::from_tasks(6), 2, Load::from_tasks(5))
    );
    // The first pass changed no load or drift.
    assert_eq!(s.queue_of(0), Load::from_tasks(6));
    assert_eq!(s.queue_of(2), Load::from_tasks(5));

    let second = s.resubmit(rs);
    assert_eq!(second.decision, Some(Decision::Resubmitted { node: 2 }));
    assert!(matches!(
        second.forward.unwrap().target,
        Target::Node { node: 2, .. }
    ));
    let t = s.tables();
    assert_eq!(
        (t.nodes[2].load1, t.nodes[2].drift1),
        (Load::from_tasks(6), Drift::ZERO)
    );
    assert_eq!(
        (t.nodes[0].load1, t.nodes[0].drift1),
        (Load::from_tasks(3), Drift(3 << 16)),
        "m is untouched"
    );
    assert_eq!(s.counters().pow2_resubmits, 1);
    s.check_invariants().unwrap();
}

#[test]
fn drift_equal_to_the_load_difference_needs_no_resubmission() {
    // d_m = l_n - l_m means q_m = l_n <= q_n: the decision is already right (inequality (1)).
    let mut s = busy_leaf(4, (1, 3));
    set(&mut s, 1, 2, 2);
    set(&mut s, 3, 4, 0);
    let r = s.packet(Packet {
        header: task(0, 1),
        time_us: 0,
    });
    assert_eq!(
        r.decision,
        Some(Decision::Pow2 {
            sel: 1,
            other: 3,
            resubmit: false
        })
    );
    assert!(r.resubmit.is_none());
    assert!(matches!(
        r.forward.unwrap().target,
        Target::Node { node: 1, .. }
    ));
    assert_eq!(
        s.tables().nodes[1].drift1,
        Drift(3 << 16),
        "the drift check incremented d_m"
    );
    assert_eq!(s.tables().nodes[1].drift2, Drift(3 << 16));
}

#[test]
fn drift_above_the_load_difference_resubmits() {
    let mut s = busy_leaf(4, (1, 3));
    set(&mut s, 1, 2, 3);
    set(&mut s, 3, 4, 0);
    let r = s.packet(Packet {
        header: task(0, 1),
        time_us: 0,
    });
    assert_eq!(
        r.decision,
        Some(Decision::Pow2 {
            sel: 1,
            other: 3,
            resubmit: true
        })
    );
}

/// Passes that run between a first pass and its resubmission keep their increments: load + drift
/// counts every task exactly, where §A.1's "write q + 1, reset drift" would lose them.
#[test]
fn tasks_between_a_first_pass_and_its_resubmission_are_not_lost() {
    let mut s = busy_leaf(2, (0, 0));
    set(&mut s, 0, 5, 1);
    set(&mut s, 1, 5, 1);
    let q0 = |s: &Scheduler| s.queue_of(0).integer() + s.queue_of(1).integer();
    let before = q0(&s);
    // Equal loads, drift 1 > diff 0: every task whose samples differ resubmits; hold all second
    // passes while the other tasks run, then feed them back.
    let mut held = Vec::new();
    for seq in 0..12 {
        let r = s.packet(Packet {
            header: task(0, seq),
            time_us: 0,
        });
        held.extend(r.resubmit);
    }
    assert!(held.len() >= 3, "{} of 12 tasks resubmitted", held.len());
    for rs in held {
        assert!(s.resubmit(rs).forward.is_some());
    }
    assert_eq!(
        q0(&s),
        before + 12,
        "twelve tasks, twelve more queued tasks"
    );
    s.check_invariants().unwrap();
}

#[test]
fn idle_worker_is_popped_once_and_the_task_says_so() {
    let mut s = leaf(&[3]);
    assert_eq!(s.idle_nodes(0), vec![0, 1, 2], "new workers are idle");
    let r = run(&mut s, task(0, 1));
    let f = r.forwards()[0];
    assert!(
        matches!(f.target, Target::Node { node: 2, .. }),
        "the top of the list goes first"
    );
    assert_eq!(f.header.qlen, 1, "qlen = 1: popped from the idle list");
    assert_eq!(f.header.dst_id, 2);
    assert_eq!(s.idle_nodes(0), vec![0, 1]);
    assert_eq!(s.tables().nodes[2].idle_index, IdleIndex::Absent);
    assert_eq!(
        s.queue_of(2),
        Load::ONE,
        "the pop charged the worker's drift"
    );
    assert_eq!(s.counters().idle_hits, 1);
    s.check_invariants().unwrap();
}

#[test]
fn spine_keeps_an_idle_rack_it_picks_and_charges_its_additive_factor() {
    let mut s = spine(&[&[4, 8]]);
    run(&mut s, idle_signal(0, 1));
    for seq in 0..3 {
        let f = run(&mut s, task(0, seq)).forwards()[0];
        assert!(matches!(f.target, Target::Node { node: 1, .. }));
        assert_eq!(
            (f.header.qlen, f.header.src_id, f.header.dst_id),
            (1, SPINE_ID, 11)
        );
    }
    assert_eq!(s.idle_nodes(0), vec![1], "a spine never pops");
    assert_eq!(s.queue_of(1), Load(3 * 0x2000), "three tasks of 1/8 each");
}

/// Decision 18 (`docs/algorithm.md`): the spine takes its idle racks in turn, from position 0 up,
/// and starts again at 0 when its turn reaches the idle count (the list shrank or it went round).
#[test]
fn spine_takes_its_idle_racks_in_turn() {
    let mut s = spine(&[&[8, 8, 8, 8]]);
    for n in [2, 0, 3] {
        run(&mut s, idle_signal(0, n));
    }
    let rack = |s: &mut Scheduler, seq| match run(s, task(0, seq)).forwards()[0].target {
        Target::Node { node, .. } => node,
        t => panic!("{t:?}"),
    };
    let order: Vec<u16> = (0..7).map(|i| rack(&mut s, i)).collect();
    assert_eq!(
        order,
        vec![2, 0, 3, 2, 0, 3, 2],
        "list order, round and round"
    );
    assert_eq!(
        s.tables().pools[0].ctl.turn,
        2,
        "position 1 next, counted from 1"
    );
    // Rack 0 leaves (rack 3 moves into its place, position 1): the turn goes on from there.
    run(&mut s, idle_remove(0, 0));
    assert_eq!(s.idle_nodes(0), vec![2, 3]);
    assert_eq!((rack(&mut s, 7), rack(&mut s, 8)), (3, 2));
    // A turn at the top of a list that shrinks goes round to position 0.
    assert_eq!(s.tables().pools[0].ctl.turn, 2);
    run(&mut s, idle_remove(0, 3));
    assert_eq!(s.tables().pools[0].ctl.turn, 1);
    assert_eq!((rack(&mut s, 9), rack(&mut s, 10)), (2, 2));
    assert_eq!(s.counters().idle_hits, 11);
    s.check_invariants().unwrap();
}

#[test]
fn duplicate_idle_add_is_dropped_and_the_list_keeps_one_copy() {
    let mut s = spine(&[&[4, 4]]);
    let first = s.packet(Packet {
        header: idle_signal(0, 0),
        time_us: 0,
    });
    assert_eq!(s.tables().nodes[0].idle_index, IdleIndex::Pending);
    // A re-sent idleAdd arrives before the first one's commit pass.
    let dup = s.packet(Packet {
        header: idle_signal(0, 0),
        time_us: 0,
    });
    assert_eq!(dup.drop, Some(DropReason::IdleAddDuplicate));
    assert!(dup.resubmit.is_none());
    s.resubmit(first.resubmit.unwrap());
    let again = run(&mut s, idle_signal(0, 0));
    assert_eq!(again.last().drop, Some(DropReason::IdleAddDuplicate));
    assert_eq!(s.idle_nodes(0), vec![0]);
    assert_eq!(s.counters().drop_count(DropReason::IdleAddDuplicate), 2);
    s.check_invariants().unwrap();
}

#[test]
fn leaf_drops_a_task_done_idle_from_a_worker_already_idle() {
    let mut s = leaf(&[2]);
    let t = run(&mut s, header(PacketType::TaskDoneIdle, 0, 1, 0, 9));
    assert_eq!(t.results[0].drop, Some(DropReason::IdleAddDuplicate));
    assert_eq!(
        t.forwards()[0].target,
        Target::PassThrough,
        "the reply still reaches the client"
    );
    assert_eq!(s.idle_nodes(0), vec![0, 1]);
}

#[test]
fn removal_that_finds_the_lock_held_is_dropped() {
    let mut s = spine(&[&[4, 4, 4]]);
    for n in 0..3 {
        run(&mut s, idle_signal(0, n));
    }
    let first = s.packet(Packet {
        header: idle_remove(0, 0),
        time_us: 0,
    });
    let second = s.packet(Packet {
        header: idle_remove(0, 1),
        time_us: 0,
    });
    assert_eq!(second.drop, Some(DropReason::IdleRemoveLocked));
    s.resubmit(first.resubmit.unwrap());
    assert_eq!(s.idle_nodes(0), vec![2, 1]);
    s.check_invariants().unwrap();
}

#[test]
fn removal_of_a_node_not_in_the_list_rolls_back() {
    let mut s = spine(&[&[4, 4, 4]]);
    run(&mut s, idle_signal(0, 0));
    run(&mut s, idle_signal(0, 1));
    let t = run(&mut s, idle_remove(0, 2));
    assert_eq!(s.counters().drop_count(DropReason::IdleRemoveNotMember), 1);
    assert_eq!(
        t.results[0].drop,
        Some(DropReason::IdleRemoveNotMember),
        "the first pass reports the drop it counted"
    );
    assert_eq!(
        t.results.len(),
        2,
        "the abort still needs the second pass to unlock"
    );
    assert_eq!(s.idle_nodes(0), vec![0, 1]);
    let empty = spine(&[&[4]]).packet(Packet {
        header: idle_remove(0, 0),
        time_us: 0,
    });
    assert_eq!(empty.drop, Some(DropReason::IdleRemoveNotMember));
}

#[test]
fn idle_add_between_the_two_passes_of_a_removal_keeps_the_list_consistent() {
    let mut s = spine(&[&[4, 4, 4, 4]]);
    for n in 0..3 {
        run(&mut s, idle_signal(0, n));
    }
    let removal = s.packet(Packet {
        header: idle_remove(0, 0),
        time_us: 0,
    });
    run(&mut s, idle_signal(0, 3));
    s.resubmit(removal.resubmit.unwrap());
    let mut idle = s.idle_nodes(0);
    idle.sort();
    assert_eq!(idle, vec![1, 2, 3]);
    s.check_invariants().unwrap();
}

#[test]
fn tasks_use_power_of_two_while_a_removal_holds_the_lock() {
    let mut s = leaf(&[3]);
    let removal = s
        .control(ControlOp::RemoveNode { pool: 0, node: 0 })
        .unwrap();
    let r = s.packet(Packet {
        header: task(0, 1),
        time_us: 0,
    });
    assert!(
        matches!(r.decision, Some(Decision::Pow2 { .. })),
        "no pop under the lock: {r:?}"
    );
    let mut sent = vec![r];
    if let Some(rs) = r.resubmit {
        sent.push(s.resubmit(rs));
    }
    // The first pass of the removal already took node 0 out of the pool's members.
    for _ in 0..30 {
        sent.extend(run(&mut s, task(0, 2)).results);
    }
    for r in &sent {
        if let Some(Target::Node { node, .. }) = r.forward.map(|e| e.target) {
            assert_ne!(node, 0, "a task went to the node being removed");
        }
    }
    s.resubmit(removal.resubmit.unwrap());
    s.check_invariants().unwrap();
    assert_eq!(s.idle_nodes(0).len(), 2);
}

#[test]
fn spine_sets_load_from_the_leaf_report_and_resets_drift() {
    let mut s = spine(&[&[4, 4]]);
    run(&mut s, task(0, 1));
    run(&mut s, header(PacketType::QueueSignal, 0, 1, 2, 0x4000));
    assert_eq!(s.tables().nodes[1].load1, Load(0x0002_4000));
    assert_eq!(s.tables().nodes[1].drift1, Drift::ZERO);
    assert_eq!(s.counters().load_updates, 1);
}

#[test]
fn multi_packet_task_follows_its_first_packet_until_the_last_one() {
    let mut s = leaf(&[3]);
    let mut first = task(0, 42);
    first.more_packets = true;
    let node = match run_at(&mut s, first, 10).forwards()[0].target {
        Target::Node { node, .. } => node,
        t => panic!("{t:?}"),
    };
    let mut cont = header(PacketType::TaskContinuation, 0, 999, 0, 42);
    cont.more_packets = true;
    for t in [20, 30] {
        let r = run_at(&mut s, cont, t);
        assert_eq!(r.last().decision, Some(Decision::Continuation { node }));
    }
    cont.more_packets = false;
    assert_eq!(
        run_at(&mut s, cont, 40).last().decision,
        Some(Decision::Continuation { node })
    );
    assert_eq!(
        run_at(&mut s, cont, 50).last().drop,
        Some(DropReason::ContinuationMiss),
        "the last packet freed the entry"
    );
    assert_eq!(s.counters().continuations, 3);
    assert_eq!(
        s.queue_of(node),
        Load::ONE,
        "continuations are not new tasks"
    );
}

#[test]
fn connection_entries_expire_after_the_timeout() {
    let mut s = leaf(&[3]);
    let mut first = task(0, 7);
    first.more_packets = true;
    run_at(&mut s, first, 100);
    let cont = header(PacketType::TaskContinuation, 0, 999, 0, 7);
    assert_eq!(
        run_at(&mut s, cont, 100 + 1000).last().drop,
        Some(DropReason::ContinuationMiss)
    );
    assert_eq!(s.counters().conn_expired, 1);
}

#[test]
fn continuation_without_an_entry_is_dropped_and_counted() {
    let mut s = spine(&[&[4]]);
    let r = run(&mut s, header(PacketType::TaskContinuation, 0, 0, 0, 5));
    assert_eq!(r.last().drop, Some(DropReason::ContinuationMiss));
}

#[test]
fn random_task_goes_to_a_pool_member_and_charges_it() {
    let mut s = leaf(&[3, 2]);
    let r = run(&mut s, header(PacketType::NewTaskRandom, 1, 999, 0, 1));
    let Some(Decision::Random { node }) = r.last().decision else {
        panic!("{r:?}")
    };
    assert!(node == 3 || node == 4, "pool 1 holds workers 3 and 4");
    assert_eq!(s.queue_of(node), Load::ONE);
    assert_eq!(
        s.idle_nodes(1).len(),
        2,
        "random tasks do not use the idle list"
    );
}

#[test]
fn generator_advances_once_per_task_first_pass_and_never_otherwise() {
    let mut s = leaf(&[2]);
    let mut g = Xorshift64::new(1);
    assert_eq!(s.rng_state(), g.state());
    run(&mut s, task(0, 1)); // idle hit: still one step
    g.next_u64();
    assert_eq!(s.rng_state(), g.state());
    run(&mut s, header(PacketType::TaskDone, 0, 1, 0, 0));
    run(&mut s, header(PacketType::NewTask, 7, 0, 0, 0)); // unconfigured pool
    assert_eq!(s.rng_state(), g.state());
    run(&mut s, header(PacketType::NewTaskRandom, 0, 0, 0, 0));
    g.next_u64();
    assert_eq!(s.rng_state(), g.state());
}

#[test]
fn bad_ids_and_wrong_roles_are_dropped_with_their_reason_and_change_nothing() {
    let mut l = leaf(&[2]);
    let mut sp = spine(&[&[4]]);
    let cases = [
        (
            true,
            header(PacketType::NewTask, 8, 0, 0, 0),
            DropReason::PoolOutOfRange,
        ),
        (
            true,
            header(PacketType::NewTask, 5, 0, 0, 0),
            DropReason::UnknownPool,
        ),
        (
            true,
            header(PacketType::TaskDone, 0, 64, 0, 0),
            DropReason::NodeOutOfRange,
        ),
        (
            true,
            header(PacketType::TaskDone, 0, 9, 0, 0),
            DropReason::NodeNotInPool,
        ),
        (
            true,
            header(PacketType::IdleSignal, 0, 0, 0, 0),
            DropReason::WrongRole,
        ),
        (
            true,
            header(PacketType::QueueRemove, 0, 0, 0, 0),
            DropReason::LegacyType,
        ),
        (
            false,
            header(PacketType::QueueSignal, 0, 1, 0, 0),
            DropReason::NodeNotInPool,
        ),
        (
            false,
            header(PacketType::ProbeIdleQueue, 0, 0, 0, 0),
            DropReason::LegacyType,
        ),
    ];
    for (at_leaf, h, reason) in cases {
        let s = if at_leaf { &mut l } else { &mut sp };
        let before = s.tables().clone();
        let r = run(s, h);
        assert_eq!(r.last().drop, Some(reason), "{h}");
        // A reply from an unknown node still reaches its client; everything else is dropped.
        let forward = h.pkt_type.is_reply().then_some(Target::PassThrough);
        assert_eq!(r.last().forward.map(|e| e.target), forward, "{h}");
        assert_eq!(s.tables(), &before, "{h} changed a table");
        assert_eq!(s.counters().drop_count(reason), 1);
    }
}

#[test]
fn empty_pool_drops_tasks() {
    let mut s = leaf(&[1]);
    control(&mut s, ControlOp::RemoveNode { pool: 0, node: 0 });
    assert_eq!(
        run(&mut s, task(0, 1)).last().drop,
        Some(DropReason::EmptyPool)
    );
}

#[test]
fn replies_pass_through_a_spine_and_controller_packets_go_to_the_control_port() {
    let mut s = spine(&[&[4]]);
    let r = run(&mut s, header(PacketType::TaskDone, 0, 3, 0, 0));
    assert_eq!(r.last().forward.unwrap().target, Target::PassThrough);
    let r = run(&mut s, header(PacketType::KeepAlive, 0, 3, 0, 0));
    assert_eq!(r.last().forward.unwrap().target, Target::Control);
}

#[test]
fn removing_a_worker_compacts_the_members_and_takes_it_out_of_the_idle_list() {
    let mut s = leaf(&[4]);
    tasks(&mut s, 0, 1); // worker 3 busy; 0, 1, 2 idle
    control(&mut s, ControlOp::RemoveNode { pool: 0, node: 1 });
    s.check_invariants().unwrap();
    let t = s.tables();
    assert_eq!(t.pools[0].cfg.n, 3);
    assert_eq!(
        t.members1[1].node, 3,
        "the last member moved into the freed slot"
    );
    assert_eq!(t.nodes[3].node.slot, 1);
    assert!(!s.idle_nodes(0).contains(&1));
    assert_eq!(
        run(&mut s, header(PacketType::TaskDone, 0, 1, 0, 0))
            .last()
            .drop,
        Some(DropReason::NodeNotInPool)
    );
    // The rack average keeps worker 3's task over the 3 remaining workers.
    assert_eq!(s.tables().pools[0].avg.avg.load(), Load(0x5555));
}

#[test]
fn adding_a_worker_makes_it_idle_and_sampled() {
    let mut s = leaf(&[1]);
    tasks(&mut s, 0, 1);
    let addr = s.tables().nodes[0].addr.unwrap().addr;
    let t = control(
        &mut s,
        ControlOp::AddNode {
            pool: 0,
            node: 9,
            addr,
            workers: 1,
        },
    );
    assert_eq!(
        t.signals()[0].header.pkt_type,
        PacketType::IdleSignal,
        "the rack has an idle worker again"
    );
    assert_eq!(s.idle_nodes(0), vec![9]);
    s.check_invariants().unwrap();
}

#[test]
fn control_passes_wait_for_resubmitted_passes_and_refuse_bad_operations() {
    let mut s = spine(&[&[4, 4]]);
    let pending = s.packet(Packet {
        header: idle_signal(0, 0),
        time_us: 0,
    });
    let addr = s.tables().nodes[0].addr.unwrap().addr;
    assert_eq!(
        s.control(ControlOp::RemoveNode { pool: 0, node: 1 }),
        Err(ControlError::Busy(1))
    );
    s.resubmit(pending.resubmit.unwrap());
    let before = s.tables().clone();
    let (n0, cap0) = (s.tables().pools[0].cfg.n, s.tables().pools[0].cfg.capacity);
    assert!(n0 >= 1);
    let good = s.tables().pools[0].cfg.params;
    let bad = [
        (
            ControlOp::AddNode {
                pool: 0,
                node: 0,
                addr,
                workers: 4,
            },
            ControlError::NodeInUse(0),
        ),
        (
            ControlOp::AddNode {
                pool: 0,
                node: 9,
                addr,
                workers: 0,
            },
            ControlError::BadWorkerCount {
                node: 9,
                workers: 0,
            },
        ),
        (
            ControlOp::AddNode {
                pool: 3,
                node: 9,
                addr,
                workers: 4,
            },
            ControlError::PoolNotConfigured(3),
        ),
        (
            ControlOp::RemoveNode { pool: 0, node: 5 },
            ControlError::NodeNotInPool { pool: 0, node: 5 },
        ),
        (
            ControlOp::SetPoolParams {
                pool: 0,
                params: Params {
                    link_at: 1,
                    unlink_at: 1,
                    report_delta: Load::ONE,
                    repair_gap_us: 0,
                },
                capacity: cap0,
            },
            ControlError::BadParams(0),
        ),
        (
            ControlOp::SetPoolParams {
                pool: 0,
                params: good,
                capacity: n0 - 1,
            },
            ControlError::BelowMembers {
                pool: 0,
                capacity: n0 - 1,
                n: n0,
            },
        ),
        (
            ControlOp::SetPoolParams {
                pool: 0,
                params: good,
                capacity: u16::MAX,
            },
            ControlError::BadRegion {
                pool: 0,
                base: 0,
                end: u32::from(u16::MAX),
                limit: s.sizes().nodes,
            },
        ),
        (
            ControlOp::ConfigurePool {
                pool: 1,
                base: 2,
                capacity: 4,
                params: Params {
                    link_at: 1,
                    unlink_at: 0,
                    report_delta: Load::ONE,
                    repair_gap_us: 50,
                },
                spine: None,
            },
            ControlError::RegionOverlap { pool: 1, other: 0 },
        ),
    ];
    for (op, err) in bad {
        assert_eq!(s.control(op), Err(err));
    }
    assert_eq!(s.tables(), &before, "refused operations change nothing");
    assert_eq!(s.role(), Role::Spine);
}

#[test]
fn every_pass_obeys_the_switch_rule() {
    // Debug builds assert the rule on every access; this test makes sure the check is live.
    let mut s = leaf(&[2]);
    run(&mut s, task(0, 1));
    let stages = s.last_pass_stages();
    assert!(!stages.is_empty());
    assert!(stages.windows(2).all(|w| w[0] < w[1]), "{stages:?}");
}

#[test]
fn example_configs_configure_schedulers_that_keep_their_invariants() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/");
    for (name, role, signals) in [
        ("example-leaf.toml", Role::Leaf, 3),
        ("example-spine.toml", Role::Spine, 0),
    ] {
        let cfg =
            horus_model::config::Config::from_file(std::path::Path::new(&format!("{root}{name}")))
                .unwrap();
        let (mut s, startup) = Scheduler::from_config(&cfg, 1).unwrap();
        assert_eq!((s.role(), startup.len()), (role, signals), "{name}");
        s.check_invariants().unwrap();
        for p in &cfg.pools {
            for seq in 0..20 {
                run(&mut s, task(p.id, seq));
            }
        }
        s.check_invariants().unwrap();
        assert_eq!(s.counters().tasks, 20 * cfg.pools.len() as u64);
        assert_eq!(s.counters().tasks_forwarded, s.counters().tasks);
    }
}

#[test]
fn two_samples_of_one_node_never_resubmit() {
    // A spine pool of one rack: both samples are that rack, whatever its drift.
    let mut s = spine(&[&[4]]);
    for seq in 0..100 {
        let t = run(&mut s, task(0, seq));
        assert_eq!(t.results.len(), 1, "task {seq} resubmitted");
    }
    assert_eq!(s.counters().pow2_resubmits, 0);
    assert_eq!(s.queue_of(0), Load(100 * 0x4000));
}

#[test]
fn first_packet_of_a_multi_packet_task_never_resubmits_so_its_continuations_follow() {
    let mut s = busy_leaf(4, (1, 3));
    set(&mut s, 1, 2, 5);
    set(&mut s, 3, 4, 0);
    let mut first = task(0, 9);
    first.more_packets = true;
    let r = s.packet(Packet {
        header: first,
        time_us: 0,
    });
    assert_eq!(
        r.decision,
        Some(Decision::Pow2 {
            sel: 1,
            other: 3,
            resubmit: false
        }),
        "drift 5 > diff 2, but no second pass"
    );
    let mut cont = header(PacketType::TaskContinuation, 0, 999, 0, 9);
    cont.more_packets = false;
    assert_eq!(
        run(&mut s, cont).last().decision,
        Some(Decision::Continuation { node: 1 })
    );
}

#[test]
fn removing_a_busy_worker_sends_no_idle_messages() {
    // One idle worker (p = link_at = 1): removing a busy one ends where it began.
    let mut s = leaf(&[2]);
    tasks(&mut s, 0, 1);
    let busy = if s.idle_nodes(0) == vec![0] { 1 } else { 0 };
    let t = control(
        &mut s,
        ControlOp::RemoveNode {
            pool: 0,
            node: busy,
        },
    );
    assert!(t.signals().is_empty(), "{:?}", t.signals());
    assert!(s.tables().pools[0].ctl.linked);
    s.check_invariants().unwrap();
}

#[test]
fn a_pool_emptied_and_refilled_starts_from_a_zero_average() {
    let mut s = leaf(&[1]);
    tasks(&mut s, 0, 2);
    let addr = s.tables().nodes[0].addr.unwrap().addr;
    control(&mut s, ControlOp::RemoveNode { pool: 0, node: 0 });
    control(
        &mut s,
        ControlOp::AddNode {
            pool: 0,
            node: 5,
            addr,
            workers: 1,
        },
    );
    assert_eq!(s.tables().pools[0].avg.avg.tasks, 0);
    assert_eq!(s.tables().pools[0].avg.avg.load(), Load::ZERO);
}

#[test]
fn drift_saturates_instead_of_wrapping_to_an_empty_looking_queue() {
    // A one-worker pool: both samples are worker 0, so every task charges its drift.
    let mut s = busy_leaf(1, (0, 0));
    let t = s.tables_mut();
    t.nodes[0].drift1 = Drift(i32::MAX - 10);
    t.nodes[0].drift2 = Drift(i32::MAX - 10);
    for seq in 0..4 {
        run(&mut s, task(0, seq));
    }
    assert_eq!(s.tables().nodes[0].drift1, Drift(i32::MAX));
    assert!(s.queue_of(0) > Load::from_tasks(30_000));
}

#[test]
fn continuation_does_not_follow_a_node_id_now_in_another_pool() {
    let mut s = leaf(&[2, 1]);
    let mut first = task(0, 42);
    first.more_packets = true;
    let Some(Target::Node { node, addr }) = run(&mut s, first).forwards().last().map(|e| e.target)
    else {
        panic!()
    };
    control(&mut s, ControlOp::RemoveNode { pool: 0, node });
    control(
        &mut s,
        ControlOp::AddNode {
            pool: 1,
            node,
            addr,
            workers: 1,
        },
    );
    let cont = header(PacketType::TaskContinuation, 0, 999, 0, 42);
    assert_eq!(
        run(&mut s, cont).last().drop,
        Some(DropReason::ContinuationMiss)
    );
}

#[test]
fn next_task_entries_names_what_the_next_task_pass_reads() {
    let mut s = leaf(&[3]);
    let (a, b) = s.next_task_entries(0).map(|(a, b)| (*a, *b)).unwrap();
    assert_eq!((a.node, b.node), (2, 2), "the idle list's top");
    let (idle, i1, i2) = s.next_task_slots(0).unwrap();
    assert!(idle && i1 == i2);
    assert_eq!(s.tables().idle_list[i1].node, 2);
    run(&mut s, task(0, 1));
    assert_eq!(s.next_task_entries(0).unwrap().0.node, 1);
    assert_eq!(s.next_task_entries(7), None, "no such pool");
    // Busy: the two members the generator will sample, and the pass's decision is between them.
    let mut s = busy_leaf(5, (1, 3));
    let rng = s.rng_state();
    let (a, b) = s
        .next_task_entries(0)
        .map(|(a, b)| (a.node, b.node))
        .unwrap();
    assert_eq!(s.rng_state(), rng, "asking does not draw");
    assert_eq!((a, b), (1, 3));
    // Where those entries are: the members lists, at the slots of the two sampled nodes.
    let (idle, i1, i2) = s.next_task_slots(0).unwrap();
    assert!(!idle);
    let t = s.tables();
    assert_eq!((t.members1[i1].node, t.members2[i2].node), (a, b));
    let r = s.packet(Packet {
        header: task(0, 1),
        time_us: 0,
    });
    let Some(Decision::Pow2 { sel, other, .. }) = r.decision else {
        panic!("power of two expected, got {:?}", r.decision)
    };
    let mut got = [sel, other];
    got.sort();
    assert_eq!(got, [a.min(b), a.max(b)]);
}

#[test]
fn a_pool_resizes_in_place_keeping_its_nodes_and_its_idle_list() {
    let mut s = leaf(&[2]);
    let addr = s.tables().nodes[0].addr.unwrap().addr;
    let add = |node| ControlOp::AddNode {
        pool: 0,
        node,
        addr,
        workers: 1,
    };
    // Filled to its capacity.
    let mut node = 10;
    while s.tables().pools[0].cfg.n < s.tables().pools[0].cfg.capacity {
        s.control(add(node)).unwrap();
        node += 1;
    }
    assert_eq!(s.control(add(node)), Err(ControlError::PoolFull(0)));
    let cfg = s.tables().pools[0].cfg;
    let idle = s.tables().pools[0].ctl;
    let resize = |capacity| ControlOp::SetPoolParams {
        pool: 0,
        params: cfg.params,
        capacity,
    };
    s.control(resize(cfg.capacity + 2)).unwrap();
    let after = s.tables().pools[0];
    assert_eq!(
        (after.cfg.base, after.cfg.n, after.cfg.capacity),
        (cfg.base, cfg.n, cfg.capacity + 2)
    );
    assert_eq!(after.ctl.p, idle.p, "the idle list is untouched");
    s.control(add(node)).unwrap();
    s.control(add(node + 1)).unwrap();
    assert_eq!(s.control(add(node + 2)), Err(ControlError::PoolFull(0)));
    s.check_invariants().unwrap();
    // Back down to its nodes, not below.
    let n = s.tables().pools[0].cfg.n;
    assert!(matches!(
        s.control(resize(n - 1)),
        Err(ControlError::BelowMembers { .. })
    ));
    s.control(resize(n)).unwrap();
    s.check_invariants().unwrap();
}

#[test]
fn tofino_profile_keeps_the_average_as_a_16_16_register_and_samples_8_bit_draws() {
    use horus_model::fixed::Load;
    use horus_model::rng::Xorshift64;
    use horus_model::sched::Profile;
    let cfg = leaf_config(&[3], 2, 1, 0, 1.0);
    let mut t = Scheduler::from_config_with(&cfg, 1, Profile::TOFINO)
        .unwrap()
        .0;
    let mut f = Scheduler::from_config(&cfg, 1).unwrap().0;
    assert_eq!(t.profile(), Profile::TOFINO);
    for i in 0..6 {
        run(&mut t, task(0, i));
        run(&mut f, task(0, i));
    }
    // Three workers: the Tofino register adds round(2^16 / 3) = 21845 a task; the FPGA's 32.32
    // accumulator round(2^32 / 3), read as 16.16 after six tasks: (6 * 1431655765) >> 16.
    assert_eq!(t.tables().pools[0].avg.avg.load(), Load(6 * 21845));
    assert_eq!(f.tables().pools[0].avg.avg.load(), Load(131_071));
    // The idle list is empty: the next task samples two 8-bit draws of the generator's step.
    let (a, b) = Xorshift64::new(t.rng_state()).two_samples_8(3);
    assert_eq!(
        t.next_task_slots(0),
        Some((false, usize::from(a), usize::from(b)))
    );
    let (a, b) = Xorshift64::new(f.rng_state()).two_samples(3);
    assert_eq!(
        f.next_task_slots(0),
        Some((false, usize::from(a), usize::from(b)))
    );
}

#[test]
fn tofino_profile_configures_leaf_pools_unlinked_and_the_first_task_links_them() {
    use horus_model::sched::{Profile, Signal};
    let cfg = leaf_config(&[3], 2, 1, 0, 1.0);
    let (mut t, signals) = Scheduler::from_config_with(&cfg, 1, Profile::TOFINO).unwrap();
    assert!(signals.is_empty() && !t.tables().pools[0].ctl.linked);
    let (f, signals) = Scheduler::from_config(&cfg, 1).unwrap();
    assert_eq!(signals.len(), 1);
    assert!(f.tables().pools[0].ctl.linked);
    // The first task's pass runs the link rule: 2 idle workers left, at least link_at 1.
    let r = run(&mut t, task(0, 1));
    assert_eq!(r.last().signal.map(|(s, _)| s), Some(Signal::IdleAdd));
    assert!(t.tables().pools[0].ctl.linked);
}
