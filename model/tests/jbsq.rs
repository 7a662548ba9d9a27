//! The JBSQ leaf (`horus_model::sched::jbsq`): `docs/algorithm.md`, "The leaf that holds tasks",
//! decisions 23 to 37.

use horus_model::fixed::{Load, RackAverage};
use horus_model::rng::{Xorshift64, scale};
use horus_model::sched::counters::Signal;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::{NodeAddr, Params, SpineRef};
use horus_model::sched::{Emit, Target};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};

const SPINE: SpineRef = SpineRef { id: 9, node: 3 };
const CLIENT: u16 = 0xFFFF;

fn pool_cfg(k: u8, capacity: u16, queue_slots: u32, fallback: Fallback) -> JbsqPool {
    JbsqPool {
        base: 8,
        capacity,
        k,
        ring_base: 0,
        ring_slots: 16,
        queue_base: 16,
        queue_slots,
        fallback,
        advertise: Advertise::Idle,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: Some(SPINE),
    }
}

/// A leaf with pool 1 of `workers` nodes (IDs 20, 21, ...), bound `k`.
fn leaf(workers: u16, k: u8, queue_slots: u32, fallback: Fallback) -> JbsqLeaf {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 7);
    l.configure_pool(1, pool_cfg(k, 8, queue_slots, fallback))
        .unwrap();
    for w in 0..workers {
        l.add_node(1, 20 + w, None, 0).unwrap();
    }
    l
}

fn header(pkt_type: PacketType, src_id: u16, seq_num: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: 1,
        src_id,
        dst_id: 0,
        qlen: 0,
        seq_num,
    }
}

fn task(l: &mut JbsqLeaf, seq: u16) -> JbsqResult {
    let r = l.packet(header(PacketType::NewTask, CLIENT, seq), 64, 100);
    assert!(r.resubmit.is_none(), "{r:?}");
    r
}

/// A reply from `node`, with its second pass if it hands one out: (first, second).
fn reply(l: &mut JbsqLeaf, node: u16) -> (JbsqResult, Option<JbsqResult>) {
    let r = l.packet(header(PacketType::TaskDone, node, 0), 64, 200);
    let second = r.resubmit.map(|rs| l.resubmit(rs));
    (r, second)
}

fn sent_to(r: &JbsqResult) -> Option<u16> {
    r.forward.map(|e| e.header.dst_id)
}

#[test]
fn a_worker_gets_at_most_k_the_least_loaded_first_and_the_rest_wait_in_arrival_order() {
    let mut l = leaf(3, 2, 8, Fallback::Random);
    let mut to = Vec::new();
    for seq in 0..6 {
        let r = task(&mut l, seq);
        let Some(Placement::Token { node, level }) = r.placement else {
            panic!("task {seq} not placed: {r:?}");
        };
        // Level 0 for the first three (each worker one), then the second places: k = 2 puts
        // them half way up the levels.
        let second = (LEVELS / 2) as u8;
        assert_eq!(level, if seq < 3 { 0 } else { second });
        assert_eq!(sent_to(&r), Some(node));
        to.push(node);
    }
    assert_eq!(
        &to[..3],
        &[20, 21, 22],
        "the ring gives the places in the order they freed"
    );
    assert_eq!(&to[3..], &[20, 21, 22]);
    for seq in 6..9 {
        let r = task(&mut l, seq);
        assert_eq!(
            r.placement,
            Some(Placement::Held {
                depth: u32::from(seq) - 5
            })
        );
        assert_eq!(r.forward, None);
    }
    // A reply's own pass forwards the reply and releases the oldest held task to its worker.
    let (r, second) = reply(&mut l, 21);
    assert_eq!(
        r.forward.map(|h| h.header.pkt_type),
        Some(PacketType::TaskDone)
    );
    let rel = r.release.expect("the oldest held task is released");
    assert_eq!((rel.task.header.seq_num, rel.task.header.dst_id), (6, 21));
    assert!(second.is_none(), "a release needs no second pass");
    assert_eq!(l.tables().outstanding[21].tasks, 2);
    let (r, _) = reply(&mut l, 20);
    assert_eq!(
        r.release
            .map(|t| (t.task.header.seq_num, t.task.header.dst_id)),
        Some((7, 20))
    );
    let c = l.counters();
    assert_eq!((c.held, c.released, c.max_depth), (3, 2, 3));
}

#[test]
fn a_reply_with_nothing_held_returns_its_place_and_the_next_task_goes_to_the_emptiest_worker() {
    let mut l = leaf(2, 2, 8, Fallback::Random);
    for seq in 0..3 {
        task(&mut l, seq); // 20, 21, 20: 20 has 2, 21 has 1
    }
    let (first, second) = reply(&mut l, 21); // 21 has 0: its place of level 0 comes back
    assert!(first.release.is_none());
    assert_eq!(
        first.resubmit,
        Some(JbsqResubmit::ReturnPlace {
            pool: 1,
            node: 21,
            generation: 0,
            level: 0,
            time_us: 200
        })
    );
    assert!(second.unwrap().release.is_none());
    // 21 (nothing outstanding) before 21's and nobody else's level 1.
    let r = task(&mut l, 3);
    assert_eq!(r.placement, Some(Placement::Token { node: 21, level: 0 }));
    let r = task(&mut l, 4);
    let second = level_of(1, 2) as u8;
    assert_eq!(second, 4);
    assert_eq!(
        r.placement,
        Some(Placement::Token {
            node: 21,
            level: second
        })
    );
    assert_eq!(
        task(&mut l, 5).placement,
        Some(Placement::Held { depth: 1 })
    );
}

#[test]
fn a_held_task_that_arrives_between_a_reply_and_its_second_pass_takes_the_place() {
    let mut l = leaf(1, 1, 8, Fallback::Random);
    task(&mut l, 0);
    let first = l.packet(header(PacketType::TaskDone, 20, 0), 64, 200);
    let rs = first
        .resubmit
        .expect("nothing held: the place goes back in a second pass");
    assert_eq!(
        task(&mut l, 1).placement,
        Some(Placement::Held { depth: 1 })
    );
    let second = l.resubmit(rs);
    assert_eq!(
        second
            .release
            .map(|t| (t.task.header.seq_num, t.task.header.dst_id)),
        Some((1, 20))
    );
    assert_eq!(l.tables().queue_ctl[1].ring_count, [0; LEVELS]);
    assert_eq!(l.tables().outstanding[20].tasks, 1);
}

#[test]
fn a_worker_may_have_its_own_bound() {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Random))
        .unwrap();
    l.add_node(1, 20, Some(3), 0).unwrap(); // a fast worker: 3 places, levels 0, 2 and 5
    l.add_node(1, 21, None, 0).unwrap(); // the pool's k = 1: level 0
    l.add_node(1, 22, Some(2), 0).unwrap(); // levels 0 and 4
    assert_eq!(
        [level_of(0, 3), level_of(1, 3), level_of(2, 3)],
        [0, 2, 5],
        "a place's level is the fraction of the bound in use"
    );
    let to: Vec<_> = (0..6).map(|s| sent_to(&task(&mut l, s))).collect();
    let fast = Some(20);
    assert_eq!(to, [fast, Some(21), Some(22), fast, Some(22), fast]);
    assert_eq!(
        task(&mut l, 6).placement,
        Some(Placement::Held { depth: 1 })
    );
    assert_eq!(
        l.add_node(1, 23, Some(0), 0),
        Err(JbsqControlError::BadConfig),
        "a worker has a place at least"
    );
}

#[test]
fn the_idle_count_is_ring_zero_and_the_reported_average_counts_held_tasks() {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Random))
        .unwrap();
    let s = l.add_node(1, 20, None, 0).unwrap();
    assert_eq!(
        s.map(|s| s.0),
        Some(Signal::IdleAdd),
        "the first idle worker links"
    );
    l.add_node(1, 21, None, 0).unwrap();
    assert!(task(&mut l, 0).signal.is_none());
    let r = task(&mut l, 1);
    // The last idle worker taken: idleRemove (the average reached 1.0 too, but one message a
    // pass and the idle message first).
    let (sig, h) = r.signal.expect("unlinks");
    assert_eq!(
        (sig, h.pkt_type, h.dst_id, h.src_id),
        (Signal::IdleRemove, PacketType::IdleRemove, 9, 3)
    );
    // The report the idle message displaced leaves with the next pass that moves the average:
    // a held task, counted (1.5 tasks a worker); the next held task moves it by only 0.5.
    let (sig, h) = task(&mut l, 2).signal.expect("the displaced report");
    assert_eq!(sig, Signal::LoadUpdate);
    let avg = |tasks| {
        RackAverage {
            unit: RackAverage::unit_for(2),
            tasks,
        }
        .load()
    };
    assert_eq!(Load::from_wire(h.qlen, h.seq_num), avg(3));
    assert_eq!(avg(3), Load(3 << 15));
    assert!(task(&mut l, 3).signal.is_none());
    assert_eq!(l.tables().avg[1].avg.tasks, 4);
    // Replies release the held tasks: nobody becomes idle, no idle message.
    for w in [20, 21] {
        let (r, second) = reply(&mut l, w);
        assert!(r.release.is_some() && second.is_none());
        assert!(r.signal.is_none_or(|s| s.0 == Signal::LoadUpdate));
    }
    // Then a reply frees a worker: its place returns to ring 0 and the rack links again.
    let (_, second) = reply(&mut l, 20);
    assert_eq!(
        second.and_then(|r| r.signal).map(|s| s.0),
        Some(Signal::IdleAdd)
    );
    assert_eq!(l.tables().queue_ctl[1].ring_count[0], 1);
}

#[test]
fn a_full_buffer_sends_to_the_random_sample_over_its_bound_or_drops_and_counts() {
    for fallback in [Fallback::Random, Fallback::Drop] {
        let mut l = leaf(3, 1, 2, fallback);
        // The generator as the leaf's: one step per task's first pass.
        let mut rng = Xorshift64::new(7);
        // Three places (k = 1), then two held: the region's two slots.
        for seq in 0..5 {
            rng.next_u64();
            assert_ne!(
                task(&mut l, seq).placement,
                Some(Placement::Dropped),
                "{seq}"
            );
        }
        let draw = rng.next_u64();
        let r = task(&mut l, 5);
        let c = *l.counters();
        assert_eq!(c.buffer_full, 1);
        match fallback {
            Fallback::Random => {
                let node = 20 + scale(draw as u32, 3);
                assert_eq!(r.placement, Some(Placement::Fallback { node }));
                assert_eq!(sent_to(&r), Some(node));
                assert_eq!(l.tables().outstanding[usize::from(node)].tasks, 2);
                assert_eq!((c.fallback, c.dropped), (1, 0));
            }
            Fallback::Drop => {
                assert_eq!(r.placement, Some(Placement::Dropped));
                assert_eq!(r.drop, Some(JbsqDrop::BufferFull));
                assert_eq!(r.forward, None);
                assert_eq!((c.fallback, c.dropped), (0, 1));
            }
        }
        assert_eq!(c.held, 2);
    }
}

#[test]
fn a_multi_packet_task_or_one_too_long_for_a_slot_is_never_held() {
    let mut l = leaf(2, 1, 8, Fallback::Drop);
    task(&mut l, 0);
    let mut h = header(PacketType::NewTask, CLIENT, 1);
    h.more_packets = true;
    // A place is free: the first packet takes it like any task.
    let r = l.packet(h, 64, 0);
    assert!(matches!(r.placement, Some(Placement::Token { .. })));
    // No place: it goes over a bound even with Drop (its continuations must find its worker).
    let r = l.packet(h, 64, 0);
    assert!(
        matches!(r.placement, Some(Placement::Fallback { .. })),
        "{r:?}"
    );
    let r = l.packet(header(PacketType::NewTask, CLIENT, 2), 257, 0);
    assert!(
        matches!(r.placement, Some(Placement::Fallback { .. })),
        "{r:?}"
    );
    let c = l.counters();
    assert_eq!((c.held, c.buffer_full, c.fallback, c.dropped), (0, 0, 2, 0));
}

#[test]
fn a_removed_workers_places_go_stale_and_its_pools_held_tasks_stay_held() {
    let mut l = leaf(2, 2, 8, Fallback::Random);
    task(&mut l, 0); // to 20 (level 0); 21's first place and both second places remain
    l.remove_node(1, 21).unwrap();
    // 21's token at level 0 is popped: stale, the task takes a second pass and finds 20's.
    let r = l.packet(header(PacketType::NewTask, CLIENT, 1), 64, 0);
    let Some(JbsqResubmit::Retry { task: t }) = r.resubmit else {
        panic!("a stale token retries: {r:?}");
    };
    assert_eq!(t.header.seq_num, 1);
    assert_eq!(r.forward, None);
    let r2 = l.resubmit(r.resubmit.unwrap());
    assert_eq!(r2.placement, Some(Placement::Token { node: 20, level: 4 }));
    // 21's second token: the next task retries and is held (20 is at k).
    let r = l.packet(header(PacketType::NewTask, CLIENT, 2), 64, 0);
    let r3 = l.resubmit(r.resubmit.expect("stale"));
    assert_eq!(r3.placement, Some(Placement::Held { depth: 1 }));
    assert_eq!(l.counters().stale_tokens, 2);
    // The held task waits for the pool's other worker, and its reply releases it.
    let (r, _) = reply(&mut l, 20);
    assert_eq!(
        r.release
            .map(|t| (t.task.header.seq_num, t.task.header.dst_id)),
        Some((2, 20))
    );
    // A reply from the removed worker goes on to its client and changes nothing.
    let (r, second) = reply(&mut l, 21);
    assert_eq!(r.drop, Some(JbsqDrop::NodeNotInPool));
    assert!(r.forward.is_some() && second.is_none());
    // Added back, it gets fresh places, and no stale one counts for it.
    l.add_node(1, 21, None, 0).unwrap();
    assert_eq!(sent_to(&task(&mut l, 3)), Some(21));
    assert_eq!(sent_to(&task(&mut l, 4)), Some(21));
    assert_eq!(
        task(&mut l, 5).placement,
        Some(Placement::Held { depth: 1 })
    );
}

#[test]
fn every_pass_touches_each_table_at_most_once_in_stage_order_and_the_counts_add_up() {
    // Random traffic, replies and second passes in any order (the guard panics on a pass a
    // pipeline could not run); then the books: each worker's count is what it was sent less
    // what it answered, held = released + queued, and no worker over its bound.
    let mut l = leaf(5, 2, 4, Fallback::Random);
    let mut rng = Xorshift64::new(99);
    let mut at_worker: Vec<Vec<u16>> = vec![Vec::new(); 64];
    let mut pending = Vec::new();
    for step in 0..20_000u32 {
        let x = rng.next_u64();
        let r = match x % 4 {
            0 | 1 => l.packet(header(PacketType::NewTask, CLIENT, step as u16), 64, step),
            2 => {
                let w = 20 + (x >> 8) as u16 % 5;
                if at_worker[usize::from(w)].is_empty() {
                    continue;
                }
                at_worker[usize::from(w)].remove(0);
                l.packet(header(PacketType::TaskDone, w, 0), 64, step)
            }
            _ => match pending.pop() {
                Some(rs) => l.resubmit(rs),
                None => continue,
            },
        };
        let stages = l.last_pass_stages();
        assert!(stages.windows(2).all(|w| w[0] < w[1]), "{stages:?}");
        if let Some(e) = r
            .forward
            .filter(|e| e.header.pkt_type == PacketType::NewTask)
        {
            at_worker[usize::from(e.header.dst_id)].push(e.header.seq_num);
        }
        if let Some(t) = r.release {
            at_worker[usize::from(t.task.header.dst_id)].push(t.task.header.seq_num);
        }
        pending.extend(r.resubmit);
    }
    for rs in pending {
        l.resubmit(rs);
    }
    let c = *l.counters();
    let q = l.tables().queue_ctl[1];
    assert_eq!(c.held, c.released + u64::from(q.depth));
    for (w, sent) in at_worker.iter().enumerate().skip(20).take(5) {
        let o = l.tables().outstanding[w].tasks;
        assert_eq!(usize::from(o), sent.len(), "worker {w}");
    }
    assert!(c.held > 0 && c.released > 0 && c.fallback > 0, "{c:?}");
    assert!(c.max_depth == 4);
}

#[test]
fn the_generator_advances_once_per_task_first_pass_and_never_otherwise() {
    let mut l = leaf(1, 1, 8, Fallback::Random);
    let mut rng = Xorshift64::new(7);
    task(&mut l, 0);
    rng.next_u64();
    reply(&mut l, 20);
    l.packet(header(PacketType::IdleSignal, 3, 0), 64, 0);
    assert_eq!(l.rng_state(), rng.state());
    let mut h = header(PacketType::NewTask, CLIENT, 1);
    h.pool_id = 2; // not configured: no step
    l.packet(h, 64, 0);
    assert_eq!(l.rng_state(), rng.state());
}

#[test]
fn a_pool_that_advertises_places_stays_linked_while_any_worker_has_a_free_place() {
    for advertise in [Advertise::Idle, Advertise::Places] {
        let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
        let mut cfg = pool_cfg(2, 8, 8, Fallback::Random);
        cfg.advertise = advertise;
        l.configure_pool(1, cfg).unwrap();
        l.add_node(1, 20, None, 0).unwrap();
        l.add_node(1, 21, None, 0).unwrap();
        let signals: Vec<_> = (0..4)
            .map(|s| task(&mut l, s).signal.map(|s| s.0))
            .collect();
        // Idle: the second task takes the last idle worker. Places: the fourth takes the last
        // free place.
        let unlink_at = if advertise == Advertise::Idle { 1 } else { 3 };
        for (i, s) in signals.iter().enumerate() {
            assert_eq!(
                *s == Some(Signal::IdleRemove),
                i == unlink_at,
                "{advertise:?}: {signals:?}"
            );
        }
        // A reply frees a place of level 4 (half of k = 2): only Places links again.
        let (_, second) = reply(&mut l, 20);
        let linked = second.and_then(|r| r.signal).map(|s| s.0) == Some(Signal::IdleAdd);
        assert_eq!(linked, advertise == Advertise::Places);
    }
}

/// The JBSQ stage matrix in `docs/algorithm.md`: a row's non-blank cells are the tables its pass
/// touches (a cell marked ¹, ³ or ⁴ only on some passes of its kind: when the pass sends a
/// signal; when its pool advertises its queue; a multi-packet task's first packet; ² for a pool
/// with a spine, which every pool here has).
fn doc_matrix() -> Vec<(String, Vec<(JbsqStage, bool)>)> {
    let doc = include_str!("../../docs/algorithm.md");
    let start = doc
        .find("| pass | poolCfg | nodeCfg |")
        .expect("the JBSQ matrix is in docs/algorithm.md");
    doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let touched = JbsqStage::ALL
                .iter()
                .zip(&cells[2..])
                .filter(|(_, c)| !c.is_empty())
                .map(|(&s, c)| (s, c.ends_with('¹') || c.ends_with('³') || c.ends_with('⁴')))
                .collect();
            (cells[1].to_string(), touched)
        })
        .collect()
}

#[test]
fn the_stage_matrix_in_the_docs_is_what_each_kind_of_pass_touches() {
    let rows = doc_matrix();
    let mut seen = Vec::new();
    let mut check = |l: &JbsqLeaf, pass: &str| {
        let (_, want) = rows
            .iter()
            .find(|(p, _)| p == pass)
            .unwrap_or_else(|| panic!("no row {pass:?}"));
        let got = l.last_pass_stages();
        let required: Vec<_> = want.iter().filter(|w| !w.1).map(|w| w.0).collect();
        let allowed: Vec<_> = want.iter().map(|w| w.0).collect();
        assert!(
            got.iter().all(|s| allowed.contains(s)) && required.iter().all(|s| got.contains(s)),
            "{pass}: touched {got:?}, the docs say {want:?}"
        );
        seen.push(pass.to_string());
    };
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 3);
    l.configure_pool(1, pool_cfg(2, 8, 1, Fallback::Random))
        .unwrap();
    l.add_node(1, 20, Some(1), 1).unwrap(); // no free place: the node's pass only
    check(&l, "add node");
    l.add_node(1, 21, None, 0).unwrap(); // 21: places at levels 0 and 4
    check(&l, "add node, one pass per place");
    task(&mut l, 0);
    check(&l, "task, a free place");
    let r = l.packet(header(PacketType::TaskDone, 21, 0), 64, 1);
    check(&l, "reply, nothing held");
    l.resubmit(r.resubmit.expect("the place returns"));
    check(&l, "place returned (its second pass)");
    task(&mut l, 1);
    task(&mut l, 2); // 21 at its bound, 20 over it: no place
    assert!(matches!(
        task(&mut l, 3).placement,
        Some(Placement::Held { .. })
    ));
    check(&l, "task, held");
    assert!(matches!(
        task(&mut l, 4).placement,
        Some(Placement::Fallback { .. })
    ));
    check(&l, "task, over a bound (fallback)");
    reply(&mut l, 21);
    check(&l, "reply, a task held");
    // 21 answers until it is under its bound (the fallback may have gone to it too).
    let rs = loop {
        let r = l.packet(header(PacketType::TaskDone, 21, 0), 64, 2);
        if let Some(rs) = r.resubmit {
            break rs;
        }
    };
    assert!(matches!(
        task(&mut l, 5).placement,
        Some(Placement::Held { .. })
    ));
    assert!(l.resubmit(rs).release.is_some());
    check(&l, "place returned, a task held meanwhile");
    l.set_bound_pass(1, 20, 2).unwrap();
    check(
        &l,
        "set a worker's bound (its places follow, as an addition's)",
    );
    let s = PoolSettings::of(&l.tables().pool_cfg[1].unwrap().cfg);
    l.set_pool_params(1, PoolSettings { k: 3, ..s }).unwrap();
    check(
        &l,
        "set the pool's settings (bound, hold, signal parameters)",
    );
    l.move_buffer(1, 40, 4).unwrap();
    check(&l, "move the pool's buffer region");
    l.remove_node(1, 21).unwrap();
    check(&l, "remove node");

    let mut l = leaf(1, 1, 1, Fallback::Drop);
    l.add_node(1, 21, None, 0).unwrap();
    l.remove_node(1, 20).unwrap();
    let r = l.packet(header(PacketType::NewTask, CLIENT, 0), 64, 0);
    assert!(r.resubmit.is_some(), "20's place is stale");
    check(&l, "task, a removed node's place (retries)");
    l.resubmit(r.resubmit.unwrap());
    task(&mut l, 1); // held
    assert_eq!(task(&mut l, 2).drop, Some(JbsqDrop::BufferFull));
    check(&l, "task, dropped (buffer full)");

    let mut l = leaf(1, 1, 1, Fallback::Drop);
    let mut first = header(PacketType::NewTask, CLIENT, 40);
    first.more_packets = true;
    l.packet(first, 64, 0);
    let mut cont = header(PacketType::TaskContinuation, CLIENT, 40);
    cont.more_packets = true;
    assert!(l.packet(cont, 64, 0).forward.is_some());
    check(&l, "continuation");
    assert!(
        l.packet(header(PacketType::KeepAlive, 20, 0), 64, 0)
            .forward
            .is_some()
    );
    check(&l, "control frame (to the control port)");
    let mut documented: Vec<_> = rows.iter().map(|r| r.0.clone()).collect();
    documented.sort();
    seen.sort();
    assert_eq!(seen, documented, "every row is run");
}

#[test]
fn a_pool_holds_its_link_for_hold_us_after_an_idle_message() {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
    let mut cfg = pool_cfg(1, 8, 8, Fallback::Random);
    cfg.hold_us = 50;
    l.configure_pool(1, cfg).unwrap();
    // A control pass links at once (its stamp stays 0).
    let s = l.add_node(1, 20, None, 0).unwrap();
    assert_eq!(s.map(|s| s.0), Some(Signal::IdleAdd));
    let at = |l: &mut JbsqLeaf, t: u32| {
        l.packet(header(PacketType::NewTask, CLIENT, 0), 64, t)
            .signal
            .map(|s| s.0)
            .filter(|&s| s != Signal::LoadUpdate)
    };
    // The worker taken at 10 us: inside the hold, the rack stays linked.
    assert_eq!(at(&mut l, 10), None);
    assert!(l.tables().link[1].linked);
    // At 50 us the hold is over: the next task's pass unlinks.
    assert_eq!(at(&mut l, 49), None);
    assert_eq!(at(&mut l, 50), Some(Signal::IdleRemove));
    assert!(!l.tables().link[1].linked);
}

#[test]
fn a_pool_that_advertises_its_queue_unlinks_at_room_held_tasks_and_links_again_when_it_holds_none()
{
    for advertise in [Advertise::Places, Advertise::Queue { room: 2 }] {
        let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
        let mut cfg = pool_cfg(1, 8, 8, Fallback::Random);
        cfg.advertise = advertise;
        l.configure_pool(1, cfg).unwrap();
        l.add_node(1, 20, None, 0).unwrap();
        l.add_node(1, 21, None, 0).unwrap();
        let signals: Vec<_> = (0..5)
            .map(|s| task(&mut l, s).signal.map(|s| s.0))
            .collect();
        // Places: the second task takes the last free place. Queue: the fourth is the second
        // held.
        let unlink_at = if advertise == Advertise::Places { 1 } else { 3 };
        for (i, s) in signals.iter().enumerate() {
            assert_eq!(
                *s == Some(Signal::IdleRemove),
                i == unlink_at,
                "{advertise:?}: {signals:?}"
            );
        }
        // Three held: three replies each release one in their own pass; the place stays taken,
        // no link (a reply may send a load update). The fourth reply finds nothing held and returns its place: Places and Queue
        // (nothing held, a place free) link in its second pass.
        for n in [20, 21, 20] {
            let (first, second) = reply(&mut l, n);
            assert!(first.release.is_some() && second.is_none(), "{first:?}");
            let linked = first.signal.map(|s| s.0) == Some(Signal::IdleAdd);
            assert!(!linked, "{advertise:?}");
        }
        let (first, second) = reply(&mut l, 21);
        assert!(first.release.is_none());
        let second = second.expect("the place returns in a second pass");
        assert_eq!(
            second.signal.map(|s| s.0),
            Some(Signal::IdleAdd),
            "{advertise:?}"
        );
    }
    // The verdicts (may link, must unlink) at link_at 1, unlink_at 0.
    let q = Advertise::Queue { room: 2 };
    assert_eq!(q.link(&[1, 0], 0, 1, 0), (true, false));
    assert_eq!(q.link(&[1, 0], 1, 1, 0), (false, false));
    assert_eq!(q.link(&[0, 0], 1, 1, 0), (false, false));
    assert_eq!(q.link(&[0, 0], 2, 1, 0), (false, true));
    assert_eq!(
        Advertise::Queue { room: 0 }.link(&[0, 1], 0, 1, 0),
        Advertise::Places.link(&[0, 1], 0, 1, 0)
    );
    assert_eq!(Advertise::Idle.link(&[0, 1], 0, 1, 0), (false, true));
}

#[test]
fn a_pool_configured_afresh_discards_and_counts_the_tasks_it_held() {
    let mut l = leaf(1, 1, 8, Fallback::Random);
    for s in 0..4 {
        task(&mut l, s);
    }
    assert_eq!(l.counters().held, 3);
    // The pool's only worker goes: its held tasks stay (no worker to release them) ...
    l.remove_node(1, 20).unwrap();
    assert_eq!(l.tables().queue_ctl[1].depth, 3);
    assert_eq!(l.counters().discarded, 0);
    // ... until the pool is configured afresh, which starts it empty and counts them.
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Random))
        .unwrap();
    assert_eq!(l.tables().queue_ctl[1].depth, 0);
    let c = l.counters();
    assert_eq!(c.discarded, 3);
    assert_eq!(c.held, c.released + c.discarded);
    // A pool configured again with nothing held discards nothing.
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Random))
        .unwrap();
    assert_eq!(l.counters().discarded, 3);
}

#[test]
fn a_buffer_region_over_what_the_pipeline_addresses_is_refused() {
    let sizes = JbsqSizes {
        buffer_slots: 2 * MAX_QUEUE_SLOTS,
        ..JbsqSizes::SMALL
    };
    let mut l = JbsqLeaf::new(sizes, 1);
    let mut cfg = pool_cfg(1, 8, MAX_QUEUE_SLOTS + 1, Fallback::Random);
    cfg.queue_base = 0;
    assert_eq!(l.configure_pool(1, cfg), Err(JbsqControlError::BadConfig));
    cfg.queue_slots = MAX_QUEUE_SLOTS;
    l.configure_pool(1, cfg).unwrap();
}

/// Decision 33: a reply from a worker the leaf counts at 0 (a duplicate) returns no place, so
/// the worker never has more places than its bound; it is forwarded and counted. With a task
/// held, the release still goes to it (decided before the count is read) and it counts one.
#[test]
fn a_spurious_reply_returns_no_place() {
    let mut l = leaf(1, 2, 8, Fallback::Drop);
    let places = |l: &JbsqLeaf| l.tables().queue_ctl[1].ring_count.iter().sum::<u16>();
    assert_eq!(sent_to(&task(&mut l, 1)), Some(20));
    let (first, second) = reply(&mut l, 20);
    assert!(
        first.forward.is_some() && second.is_some(),
        "the real reply's place returns"
    );
    assert_eq!(places(&l), 2);
    // The duplicate: forwarded, counted, no second pass, no place.
    let (dup, second) = reply(&mut l, 20);
    assert!(dup.forward.is_some() && dup.resubmit.is_none() && second.is_none());
    assert_eq!((places(&l), l.counters().replies_spurious), (2, 1));
    // A reply while the worker has tasks out is not spurious.
    task(&mut l, 2);
    reply(&mut l, 20);
    assert_eq!((places(&l), l.counters().replies_spurious), (2, 1));

    // A task held while a worker at 0 has a place: a node removed with its task and added again
    // (a control pass puts its place back, releasing nothing).
    let mut l = leaf(1, 1, 8, Fallback::Drop);
    task(&mut l, 1);
    task(&mut l, 2); // held
    l.remove_node(1, 20).unwrap();
    l.add_node(1, 20, None, 0).unwrap();
    assert_eq!((l.tables().queue_ctl[1].depth, places(&l)), (1, 1));
    // The late reply of the lost task: spurious; the held task goes to the worker, counted.
    let (late, second) = reply(&mut l, 20);
    assert!(late.release.is_some() && late.resubmit.is_none() && second.is_none());
    assert_eq!(l.tables().outstanding[20].tasks, 1);
    assert_eq!(l.counters().replies_spurious, 1);
}

/// A node's address, as a configuration gives it.
fn addr(node: u16) -> NodeAddr {
    NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([2, 0, 0, 0, 0, node as u8]),
            ip: std::net::Ipv4Addr::new(10, 0, 1, node as u8),
            udp_port: 7000 + node,
        },
        port: (node % 4) as u8,
        dst_id: node,
    }
}

#[test]
fn a_multi_packet_tasks_continuations_follow_its_first_packet_and_count_nothing() {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 7);
    l.set_conn_timeout_us(1_000);
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Drop))
        .unwrap();
    for n in [20, 21] {
        l.add_node_at(1, n, None, 0, addr(n)).unwrap();
    }
    let packet = |pkt_type, seq, more| HorusHeader {
        more_packets: more,
        ..header(pkt_type, CLIENT, seq)
    };
    let to = |r: &JbsqResult| match r.forward.map(|e| e.target) {
        Some(Target::Node { node, addr: a }) => {
            assert_eq!(a, addr(node), "the node's own address");
            assert_eq!(r.forward.unwrap().header.dst_id, node);
            Some(node)
        }
        _ => None,
    };
    // Task 1 (three packets) takes 20's place; task 2 (two packets) 21's; task 3 (two packets)
    // finds no place and goes over a bound with the drop fallback (decision 28).
    let r1 = l.packet(packet(PacketType::NewTask, 1, true), 64, 0);
    let r2 = l.packet(packet(PacketType::NewTask, 2, true), 64, 0);
    let r3 = l.packet(packet(PacketType::NewTask, 3, true), 64, 0);
    assert_eq!((to(&r1), to(&r2)), (Some(20), Some(21)));
    let third = to(&r3).expect("over a bound, not dropped");
    assert!(matches!(r3.placement, Some(Placement::Fallback { .. })));
    let before = (
        l.counters().tasks,
        l.tables().outstanding.clone(),
        l.tables().avg[1],
    );
    // Continuations, interleaved, each to its task's node; none is counted as a task.
    let c = |l: &mut JbsqLeaf, seq, more, t| {
        l.packet(packet(PacketType::TaskContinuation, seq, more), 64, t)
    };
    assert_eq!(to(&c(&mut l, 2, false, 10)), Some(21)); // task 2's last packet
    assert_eq!(to(&c(&mut l, 1, true, 11)), Some(20));
    assert_eq!(to(&c(&mut l, 3, false, 12)), Some(third));
    assert_eq!(to(&c(&mut l, 1, false, 13)), Some(20)); // task 1's last packet
    assert_eq!(
        (
            l.counters().tasks,
            l.tables().outstanding.clone(),
            l.tables().avg[1]
        ),
        before,
        "a continuation changes no count"
    );
    // A last packet freed its entry: another continuation of task 1 or 2 misses.
    for seq in [1, 2] {
        let r = c(&mut l, seq, false, 14);
        assert_eq!(
            (r.forward, r.drop),
            (None, Some(JbsqDrop::ContinuationMiss))
        );
    }
    // Past the timeout an entry misses, and is freed.
    let r4 = l.packet(packet(PacketType::NewTask, 4, true), 64, 100);
    let node4 = to(&r4).unwrap();
    assert_eq!(to(&c(&mut l, 4, true, 1_099)), Some(node4));
    assert_eq!(
        c(&mut l, 4, true, 1_100).drop,
        Some(JbsqDrop::ContinuationMiss)
    );
    assert_eq!(
        c(&mut l, 4, false, 1_101).drop,
        Some(JbsqDrop::ContinuationMiss)
    );
    // A live entry of another task on the same index is kept: the newcomer's continuations miss.
    let (a, b) = (0u16..)
        .flat_map(|a| (a + 1..a + 200).map(move |b| (a, b)))
        .find(|&(a, b)| {
            let i = |s| horus_model::sched::conn_hash(1, s) & 63;
            a > 10 && i(a) == i(b)
        })
        .unwrap();
    let ra = l.packet(packet(PacketType::NewTask, a, true), 64, 2_000);
    let rb = l.packet(packet(PacketType::NewTask, b, true), 64, 2_000);
    assert!(to(&ra).is_some() && to(&rb).is_some());
    assert_eq!(to(&c(&mut l, a, false, 2_001)), to(&ra));
    assert_eq!(
        c(&mut l, b, false, 2_001).drop,
        Some(JbsqDrop::ContinuationMiss)
    );
    // A node removed: its address goes, and its task's continuations miss; its ID added to
    // another pool: the entry does not lead there either.
    let r6 = l.packet(packet(PacketType::NewTask, 6, true), 64, 2_500);
    let node6 = to(&r6).unwrap();
    l.remove_node(1, node6).unwrap();
    assert_eq!(
        c(&mut l, 6, true, 2_501).drop,
        Some(JbsqDrop::ContinuationMiss)
    );
    l.add_node_at(1, node6, None, 0, addr(node6)).unwrap();
    let r5 = l.packet(packet(PacketType::NewTask, 5, true), 64, 3_000);
    let node5 = to(&r5).unwrap();
    l.configure_pool(
        2,
        JbsqPool {
            base: 32,
            ring_base: 512,
            queue_base: 40,
            ..pool_cfg(1, 8, 8, Fallback::Drop)
        },
    )
    .unwrap();
    l.remove_node(1, node5).unwrap();
    l.add_node_at(2, node5, None, 0, addr(node5)).unwrap();
    assert_eq!(
        c(&mut l, 5, false, 3_001).drop,
        Some(JbsqDrop::ContinuationMiss)
    );
    let k = l.counters();
    assert_eq!(
        (
            k.continuations,
            k.continuation_miss,
            k.conn_collisions,
            k.conn_expired
        ),
        (6, 7, 1, 1),
        "{k:?}"
    );
    assert_eq!(k.conn_inserts, 7);
}

#[test]
fn control_frames_go_to_the_control_port_and_other_types_are_dropped_and_counted() {
    let mut l = leaf(1, 1, 8, Fallback::Random);
    let before = l.tables().clone();
    let rng = l.rng_state();
    for t in [
        PacketType::KeepAlive,
        PacketType::WorkerId,
        PacketType::WorkerIdAck,
        PacketType::RemoveAck,
    ] {
        let h = header(t, 20, 5);
        let r = l.packet(h, 64, 0);
        assert_eq!(
            r.forward,
            Some(Emit {
                target: Target::Control,
                header: h
            }),
            "{t:?}"
        );
        assert!(l.last_pass_stages().is_empty(), "{t:?} reads no table");
    }
    for t in [
        PacketType::IdleSignal,
        PacketType::QueueSignal,
        PacketType::IdleRemove,
        PacketType::NewTaskRandom,
    ] {
        let r = l.packet(header(t, 20, 5), 64, 0);
        assert_eq!(
            (r.forward, r.drop),
            (None, Some(JbsqDrop::NotScheduled)),
            "{t:?}"
        );
    }
    let mut h = header(PacketType::NewTask, CLIENT, 1);
    h.pool_id = 3;
    assert_eq!(l.packet(h, 64, 0).drop, Some(JbsqDrop::UnknownPool));
    h.pkt_type = PacketType::TaskDone;
    let r = l.packet(h, 64, 0);
    assert_eq!(
        r.forward.map(|e| e.target),
        Some(Target::PassThrough),
        "a reply still goes on"
    );
    let k = l.counters();
    assert_eq!((k.to_control, k.not_scheduled, k.unknown_pool), (4, 4, 2));
    assert_eq!(l.rng_state(), rng);
    assert_eq!(l.tables().outstanding, before.outstanding);
    assert_eq!(l.tables().queue_ctl, before.queue_ctl);
}

/// Decision 35: a retry runs no link rule. Three idle workers of `k` 1, two removed: a task pops
/// the first removed worker's place (its first pass: two places still counted, no message),
/// its retry the second's (the counts fall to none, but a retry sends nothing) and its second
/// retry finds no place and is held; the link still says linked until the pool's next task runs
/// the rule and unlinks.
#[test]
fn a_retry_sends_no_message_and_the_pools_next_pass_sends_what_it_changed() {
    let mut l = JbsqLeaf::new(JbsqSizes::SMALL, 1);
    l.configure_pool(1, pool_cfg(1, 8, 8, Fallback::Random))
        .unwrap();
    for w in 20..23 {
        l.add_node(1, w, None, 0).unwrap();
    }
    assert!(l.tables().link[1].linked);
    l.remove_node(1, 21).unwrap();
    l.remove_node(1, 22).unwrap();
    let idle = |r: &JbsqResult| r.signal.map(|s| s.0).filter(|&s| s != Signal::LoadUpdate);
    assert_eq!(sent_to(&task(&mut l, 0)), Some(20));
    let first = l.packet(header(PacketType::NewTask, CLIENT, 1), 64, 100);
    assert_eq!(idle(&first), None);
    let retry = l.resubmit(first.resubmit.expect("21's place is stale"));
    assert!(
        matches!(retry.resubmit, Some(JbsqResubmit::Retry { .. })),
        "22's place is stale too: {retry:?}"
    );
    assert_eq!(retry.signal, None, "a retry runs no link rule");
    let again = l.resubmit(retry.resubmit.unwrap());
    assert_eq!(again.placement, Some(Placement::Held { depth: 1 }));
    // It does not come back: the load report of the task it holds leaves with it, no idle
    // message.
    assert!(again.resubmit.is_none());
    assert_eq!(idle(&again), None);
    assert!(
        l.tables().link[1].linked,
        "what the retries changed is not sent yet"
    );
    assert_eq!(l.counters().stale_tokens, 2);
    // The pool's next task's pass runs the rule: no place is left, the rack unlinks.
    let next = l.packet(header(PacketType::NewTask, CLIENT, 2), 64, 100);
    assert_eq!(idle(&next), Some(Signal::IdleRemove));
    assert!(!l.tables().link[1].linked);
}

/// Decision 36: a worker's bound changes live. Raised, it has its new places at once (its old
/// ones go stale) and may run what it had and `k` more until those answer; lowered, the same,
/// and it comes down to its new bound as its running tasks answer. Tokens and running tasks add
/// up to the new bound once it has answered everything.
#[test]
fn a_workers_bound_changes_live_and_it_comes_down_to_its_new_places() {
    let mut l = leaf(2, 1, 8, Fallback::Random);
    let places = |l: &JbsqLeaf, node: u16| -> u16 {
        let t = l.tables();
        let g = t.node_cfg[usize::from(node)].generation;
        let q = t.queue_ctl[1];
        let cfg = t.pool_cfg[1].unwrap().cfg;
        (0..LEVELS)
            .flat_map(|j| {
                (0..q.ring_count[j]).map(move |i| {
                    let at = (q.ring_head[j] + i) % cfg.ring_slots;
                    cfg.ring_base as usize + j * usize::from(cfg.ring_slots) + usize::from(at)
                })
            })
            .filter(|&i| t.rings[i].node == node && t.rings[i].generation == g)
            .count() as u16
    };
    // 20 and 21 each run a task (bound 1).
    assert_eq!(sent_to(&task(&mut l, 0)), Some(20));
    assert_eq!(sent_to(&task(&mut l, 1)), Some(21));
    // 20's bound raised to 3: three fresh places while it runs one.
    let g = l.tables().node_cfg[20].generation;
    assert!(
        l.set_bound(1, 20, 3).unwrap().is_some(),
        "a free place links the rack"
    );
    assert_eq!(l.tables().node_cfg[20].k, 3);
    assert_eq!(l.tables().node_cfg[20].generation, g.wrapping_add(1));
    assert_eq!(
        l.tables().outstanding[20].tasks,
        1,
        "its running task is kept"
    );
    assert_eq!(places(&l, 20), 3);
    let to: Vec<_> = (2..5).map(|s| sent_to(&task(&mut l, s))).collect();
    assert_eq!(to, [Some(20); 3]);
    assert_eq!(
        l.tables().outstanding[20].tasks,
        4,
        "what it had and 3 more"
    );
    assert!(matches!(
        task(&mut l, 5).placement,
        Some(Placement::Held { .. })
    ));
    // Its answers: the held task first, then places only below the new bound.
    let (r, _) = reply(&mut l, 20);
    assert!(r.release.is_some());
    for _ in 0..4 {
        reply(&mut l, 20);
    }
    assert_eq!(l.tables().outstanding[20].tasks, 0);
    assert_eq!(places(&l, 20), 3, "three places: its new bound");

    // Lowered from 3 to 1 while it runs 2 (its third place still a token): that token goes
    // stale, it runs those 2 and 1 more, then keeps 1 place.
    for s in 6..8 {
        assert_eq!(sent_to(&task(&mut l, s)), Some(20));
    }
    l.set_bound(1, 20, 1).unwrap();
    assert_eq!(places(&l, 20), 1);
    assert_eq!(sent_to(&task(&mut l, 8)), Some(20));
    assert_eq!(l.tables().outstanding[20].tasks, 3);
    // The next task finds 20's old token: stale, a retry; 21 still runs its task: held.
    let r = l.packet(header(PacketType::NewTask, CLIENT, 9), 64, 100);
    assert_eq!(l.counters().stale_tokens, 1);
    let again = l.resubmit(r.resubmit.expect("a stale token"));
    assert!(matches!(again.placement, Some(Placement::Held { .. })));
    reply(&mut l, 21); // releases the held task to 21
    for _ in 0..3 {
        reply(&mut l, 20);
    }
    assert_eq!(l.tables().outstanding[20].tasks, 0);
    assert_eq!(places(&l, 20), 1, "one place: its new bound");

    // Refused, nothing changed: a bound of 0, a node not in the pool.
    let before = l.tables().node_cfg[20];
    assert_eq!(l.set_bound(1, 20, 0), Err(JbsqControlError::BadConfig));
    assert_eq!(l.set_bound(1, 30, 2), Err(JbsqControlError::BadNode));
    assert_eq!(l.set_bound(2, 20, 2), Err(JbsqControlError::UnknownPool));
    assert_eq!(l.tables().node_cfg[20], before);
}

/// Decision 36: the pool's bound is what a worker added later without its own takes (its
/// members keep theirs); its hold and signal parameters change with it, its regions stay.
#[test]
fn the_pools_settings_change_live_for_the_workers_added_later() {
    let mut l = leaf(1, 1, 8, Fallback::Random);
    let cfg = l.tables().pool_cfg[1].unwrap().cfg;
    let s = PoolSettings {
        k: 4,
        hold_us: 30,
        params: Params {
            link_at: 2,
            unlink_at: 1,
            report_delta: Load(0x2_0000),
            repair_gap_us: 7,
        },
        holds: true,
    };
    l.set_pool_params(1, s).unwrap();
    let now = l.tables().pool_cfg[1].unwrap();
    assert_eq!(PoolSettings::of(&now.cfg), s);
    assert_eq!(
        (now.cfg.base, now.cfg.queue_base, now.cfg.advertise, now.n),
        (cfg.base, cfg.queue_base, cfg.advertise, 1),
        "its regions, what it advertises and its members stay"
    );
    assert_eq!(l.last_pass_stages(), [JbsqStage::PoolCfg]);
    assert_eq!(l.tables().node_cfg[20].k, 1, "a member keeps its bound");
    l.add_node(1, 21, None, 0).unwrap();
    assert_eq!(l.tables().node_cfg[21].k, 4);
    // Refused, nothing changed: a bound of 0, invalid parameters, a pool not configured.
    assert_eq!(
        l.set_pool_params(1, PoolSettings { k: 0, ..s }),
        Err(JbsqControlError::BadConfig)
    );
    let bad = Params {
        unlink_at: 2,
        ..s.params
    };
    assert_eq!(
        l.set_pool_params(1, PoolSettings { params: bad, ..s }),
        Err(JbsqControlError::BadConfig)
    );
    assert_eq!(l.set_pool_params(2, s), Err(JbsqControlError::UnknownPool));
    assert_eq!(PoolSettings::of(&l.tables().pool_cfg[1].unwrap().cfg), s);
}

/// Decision 37: a pool that does not hold (its buffer region about to move) treats a task that
/// finds no place as a full buffer's, and holds again when its settings say so.
#[test]
fn a_pool_closed_to_holding_sends_by_its_fallback_and_holds_again_when_opened() {
    for fallback in [Fallback::Random, Fallback::Drop] {
        let mut l = leaf(1, 1, 4, fallback);
        task(&mut l, 0); // the worker's one place
        assert!(matches!(
            task(&mut l, 1).placement,
            Some(Placement::Held { .. })
        ));
        let s = PoolSettings::of(&l.tables().pool_cfg[1].unwrap().cfg);
        l.set_pool_params(1, PoolSettings { holds: false, ..s })
            .unwrap();
        assert_eq!(l.last_pass_stages(), [JbsqStage::PoolCfg]);
        let r = task(&mut l, 2);
        let c = *l.counters();
        assert_eq!(
            (c.held, c.buffer_full),
            (1, 1),
            "the region has room, the pool holds no more"
        );
        match fallback {
            Fallback::Random => assert_eq!(r.placement, Some(Placement::Fallback { node: 20 })),
            Fallback::Drop => assert_eq!(r.drop, Some(JbsqDrop::BufferFull)),
        }
        // What it held still goes to the worker's replies.
        let (first, _) = reply(&mut l, 20);
        assert!(first.release.is_some());
        assert_eq!(l.held_depth(1), 0);
        l.set_pool_params(1, s).unwrap();
        assert!(matches!(
            task(&mut l, 3).placement,
            Some(Placement::Held { .. })
        ));
    }
}

/// Decision 37: a pool's buffer region moves in one pass; a drained pool loses nothing, its
/// rings and members stay, and its next held task goes to the new region's first slot.
#[test]
fn a_drained_pools_buffer_region_moves_and_its_next_held_task_goes_there() {
    let mut l = leaf(2, 1, 4, Fallback::Random);
    for seq in 0..5 {
        task(&mut l, seq); // two places, three held
    }
    assert_eq!(l.held_depth(1), 3);
    let s = PoolSettings::of(&l.tables().pool_cfg[1].unwrap().cfg);
    l.set_pool_params(1, PoolSettings { holds: false, ..s })
        .unwrap();
    for node in [20, 21, 20] {
        let (first, _) = reply(&mut l, node);
        assert!(first.release.is_some());
    }
    assert_eq!(l.held_depth(1), 0, "drained");
    let before = l.tables().queue_ctl[1];
    assert_eq!(l.move_buffer(1, 40, 8), Ok(0));
    assert_eq!(
        l.last_pass_stages(),
        [JbsqStage::PoolCfg, JbsqStage::QueueCtl]
    );
    let pc = l.tables().pool_cfg[1].unwrap();
    assert_eq!(
        (pc.cfg.queue_base, pc.cfg.queue_slots, pc.holds, pc.n),
        (40, 8, true, 2)
    );
    let q = l.tables().queue_ctl[1];
    assert_eq!(
        (q.ring_head, q.ring_count),
        (before.ring_head, before.ring_count)
    );
    assert_eq!((q.queue_head, q.depth, q.max_depth), (0, 0, 3));
    task(&mut l, 5);
    task(&mut l, 6);
    assert!(l.tables().buf[40].is_some() && l.tables().buf[41].is_some());
    assert!(l.tables().buf[16..20].iter().all(Option::is_none));
    let c = *l.counters();
    assert_eq!(c.discarded, 0);
    assert_eq!(c.held, c.released + u64::from(l.held_depth(1)));
}

/// Decision 37: a region moved under held tasks (the host did not wait for the drain) discards
/// them, counted, and frees their slots; a refused move changes nothing.
#[test]
fn a_buffer_move_discards_and_counts_what_is_still_held_and_bad_regions_are_refused() {
    let mut l = leaf(1, 1, 4, Fallback::Random);
    for seq in 0..4 {
        task(&mut l, seq); // one place, three held
    }
    let mut other = pool_cfg(1, 8, 8, Fallback::Random);
    (other.base, other.ring_base, other.queue_base) = (16, 128, 48);
    l.configure_pool(2, other).unwrap();
    let before = (
        l.tables().pool_cfg[1],
        l.tables().queue_ctl[1],
        *l.counters(),
    );
    for (base, slots, err) in [
        (44, 8, JbsqControlError::RegionOverlap),
        (60, 8, JbsqControlError::BadConfig),
        (0, 0, JbsqControlError::BadConfig),
    ] {
        assert_eq!(l.move_buffer(1, base, slots), Err(err), "{base}, {slots}");
        assert_eq!(
            (
                l.tables().pool_cfg[1],
                l.tables().queue_ctl[1],
                *l.counters()
            ),
            before
        );
    }
    assert_eq!(l.move_buffer(3, 0, 4), Err(JbsqControlError::UnknownPool));
    // A configuration over another pool's region: refused too.
    let mut third = pool_cfg(1, 8, 4, Fallback::Random);
    (third.base, third.ring_base) = (24, 256);
    assert_eq!(
        l.configure_pool(3, third),
        Err(JbsqControlError::RegionOverlap)
    );
    assert!(l.tables().pool_cfg[3].is_none());
    assert_eq!(l.move_buffer(1, 0, 16), Ok(3));
    let c = *l.counters();
    assert_eq!((c.discarded, l.held_depth(1)), (3, 0));
    assert_eq!(c.held, c.released + c.discarded);
    assert!(
        l.tables().buf[16..20].iter().all(Option::is_none),
        "the old slots are free"
    );
    // The worker's reply now finds nothing held: its place returns.
    let (first, second) = reply(&mut l, 20);
    assert!(first.release.is_none() && second.is_some());
}
