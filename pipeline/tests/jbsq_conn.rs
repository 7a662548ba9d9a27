//! The JBSQ leaf's connection table in hardware (`horus_pipeline::jbsq::conn`, the paper leaf's
//! `conn` behind the JBSQ descriptor; decision 34) against the model's: the model runs tasks
//! (multi-packet ones among them, placed by a token, stale tokens retried, sent over a bound),
//! continuations (on time, late after their entry expired, of tasks never sent), replies and
//! node removals; every task and continuation pass runs, one per clock, through the stage, with
//! what the stages before hand on read off the model. Each pass must leave with the model's
//! decision: a task's entry written, or kept for another task (a collision), an expired entry
//! replaced or freed (the model's counters over the pass), a continuation's node (the model's
//! rule on the model's entry before the pass).

mod jbsq_common;

use horus_model::sched::jbsq::*;
use horus_pipeline::jbsq::conn::ConnStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::driver::{Driver, Step, placed, pool_cfg};
use jbsq_common::lint_and_synth;

/// `2^C` entries: `JbsqSizes::SMALL`.
const C: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.conn_table as usize == 1 << C);

/// The pass entering `conn` and what it must leave with (`cont_hit`, `cont_node` and the three
/// events); `None` for a pass that does not reach the table.
fn stage_pass(d: &Driver, s: &Step) -> Option<(JbsqPhv, JbsqPhv)> {
    let p = s.pass;
    let (c0, c1) = (&s.counters.0, &s.counters.1);
    let (input, mut expect) = if p.is_task {
        let mut p = placed(s)?;
        p.conn_slot = jbsq_common::b16(
            horus_model::sched::conn_hash(p.pool.index() as u16, p.seq.index() as u16) & 0xFFFF,
        );
        (p, JbsqPhv::default())
    } else if p.is_cont {
        let f = d.followed(s);
        let mut input = f;
        input.cont_hit = false;
        input.cont_node = 0.into();
        (input, f)
    } else {
        return None;
    };
    expect.conn_insert = c1.conn_inserts > c0.conn_inserts;
    expect.conn_collision = c1.conn_collisions > c0.conn_collisions;
    expect.conn_expired = c1.conn_expired > c0.conn_expired;
    Some((input, expect))
}

/// What a pass's check compares: the entry's node only when it was found.
fn seen(o: &JbsqPhv) -> (bool, u16, bool, bool, bool) {
    (
        o.cont_hit,
        if o.cont_hit {
            o.cont_node.index() as u16
        } else {
            0
        },
        o.conn_insert,
        o.conn_collision,
        o.conn_expired,
    )
}

/// Runs every task and continuation pass through the stage, back to back, and checks each;
/// returns how many continuations found their node, and how many passes had each event.
fn check(d: &Driver) -> [usize; 4] {
    let (passes, expect): (Vec<_>, Vec<_>) =
        d.steps.iter().filter_map(|s| stage_pass(d, s)).unzip();
    let out = jbsq_common::run(ConnStage::<C>::new(d.conn_timeout_us), passes.clone(), 2);
    let mut n = [0; 4];
    for (i, (o, e)) in out.iter().zip(&expect).enumerate() {
        assert_eq!(seen(o), seen(e), "pass {i}: {:?}", passes[i]);
        n[0] += usize::from(o.cont_hit);
        n[1] += usize::from(o.conn_insert);
        n[2] += usize::from(o.conn_collision);
        n[3] += usize::from(o.conn_expired);
    }
    n
}

/// Two sequence numbers whose tasks of `pool` share a slot of `SIZES.conn_table`.
fn colliding(pool: u16) -> (u16, u16) {
    let slot = |seq| horus_model::sched::conn_hash(pool, seq) & (SIZES.conn_table - 1);
    let b = (101..).find(|&b| slot(b) == slot(100)).unwrap();
    (100, b)
}

#[test]
fn continuations_follow_their_task_collide_and_expire_as_the_models() {
    let mut d = Driver::new(SIZES, 3);
    d.set_conn_timeout_us(50);
    d.configure(1, pool_cfg(8, 1, 0, 4, Fallback::Random));
    d.add(1, 20, None, 0);
    d.add(1, 21, None, 0);
    // A node gone: its token, behind the others', goes stale.
    d.add(1, 22, None, 0);
    d.remove(1, 22);
    let multi = |d: &mut Driver, seq: u16, time: u32| {
        let mut h = jbsq_common::driver::header(
            horus_model::wire::PacketType::NewTask,
            1,
            jbsq_common::driver::CLIENT,
            seq,
        );
        h.more_packets = true;
        d.packet(h, 64, time)
    };
    // A task of three packets: its entry, two continuations, the last frees it; one more misses.
    multi(&mut d, 7, 10);
    d.continuation(1, 7, true, 11);
    d.continuation(1, 7, false, 12);
    d.continuation(1, 7, false, 13);
    // Two tasks on one slot: the second's entry is not written (a collision); its continuation
    // misses, the first's follows. The second pops the stale token first: that pass writes
    // nothing, its retry goes over the bound.
    let (a, b) = colliding(1);
    multi(&mut d, a, 20);
    assert!(matches!(
        multi(&mut d, b, 21).resubmit,
        Some(JbsqResubmit::Retry { .. })
    ));
    d.drain();
    d.continuation(1, b, false, 22);
    d.continuation(1, a, true, 23);
    // Late: the entry expired; a later task on the slot replaces an expired foreign entry.
    d.continuation(1, a, false, 80);
    multi(&mut d, a, 90);
    multi(&mut d, b, 200);
    d.continuation(1, b, false, 201);
    // A continuation of a pool never configured.
    d.continuation(2, 5, false, 202);
    let [hits, inserts, collisions, expired] = check(&d);
    assert_eq!(
        (hits, inserts, collisions, expired),
        (4, 4, 1, 2),
        "{:?}",
        d.leaf.counters()
    );
}

#[test]
fn random_traffic_with_continuations_and_removals_takes_the_models_conn_decisions() {
    let mut d = Driver::new(SIZES, 5);
    d.set_conn_timeout_us(40);
    d.continuations = true;
    d.configure(1, pool_cfg(8, 2, 0, 6, Fallback::Random));
    d.configure(2, pool_cfg(16, 1, 8, 3, Fallback::Drop));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(2), 0);
    d.random_traffic(0xc044, 4000, &[(1, &[20, 21, 22]), (2, &[30, 31])], 60, 9);
    let n = check(&d);
    let c = d.leaf.counters();
    println!("random: {n:?} (hits, inserts, collisions, expired); model {c:?}");
    assert!(
        n.iter().all(|&x| x > 0) && c.continuation_miss > 50,
        "{n:?} {c:?}"
    );
}

/// The stage at the preset's size (1,024 entries) is lint clean and within the depth target.
#[test]
fn conn_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.conn_table == 1 << 10);
    let r = lint_and_synth(
        "jbsq_conn",
        ConnStage::<10>::new(horus_model::config::DEFAULT_CONN_TIMEOUT_US),
    );
    println!("conn: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
