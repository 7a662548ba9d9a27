//! The JBSQ leaf's table stages chained (`horus_pipeline::jbsq::ingress::JbsqIngress`) against
//! the model (`JbsqLeaf`): every pass the model runs (configurations, node additions with a
//! control pass per free place, the host's read before a removal, removals, tasks, replies, the
//! second passes fed back late) enters the chain's first stage with only what the parser or the
//! host gives it, one pass a clock, and leaves its last with the model's decision: dropped or
//! not; a task's token (the model's node and level) or a stale one (a retry), the fallback's
//! node, held at the model's depth, or dropped on a full region; a reply's or a returned place's
//! release (the model's task, rewritten towards the worker), its returned place, a place put
//! back or dropped on a full ring; the message to the spine (idleAdd, idleRemove, a load report
//! or none) with its header and the average it carries; a continuation's node; and the address
//! every task, released task and continuation goes to (decision 34). No stage is
//! fed from the model's tables: each reads what the stages before it handed on, and the tables
//! only the passes before wrote.

mod jbsq_common;

use horus_model::sched::jbsq::*;
use horus_model::sched::state::{Params, SpineRef};
use horus_pipeline::jbsq::ingress::{HOLD_CLOCKS, JbsqIngress, STAGES};
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::driver::{Driver, check_pass};

/// `JbsqSizes::SMALL`: 4 pools, 64 nodes, 1,024 ring entries, 64 buffer slots, 64 connection
/// entries.
const P: usize = 2;
const N: usize = 6;
const R: usize = 10;
const B: usize = 6;
const C: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const SEED: u64 = 9;
const SPINE: SpineRef = SpineRef { id: 900, node: 7 };

fn pool_cfg(base: u16, k: u8, ring_base: u32, queue_base: u32, advertise: Advertise) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base,
        ring_slots: 16,
        queue_base,
        queue_slots: 6,
        fallback: Fallback::Random,
        advertise,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: Some(SPINE),
    }
}

/// Runs every recorded pass through the chain, one a clock but `HOLD_CLOCKS` bubbles behind an
/// addition or a removal (the core's admission), checks each, and returns how many of each kind
/// it checked; the messages the chain sent over all passes (control passes included, which the
/// model runs several to a call) must be the model's counts.
fn check(d: Driver) -> std::collections::BTreeMap<&'static str, usize> {
    let mut fed = Vec::new();
    for s in &d.steps {
        fed.push(Some(s.pass));
        if s.pass.is_ctl_add || s.pass.is_ctl_remove {
            fed.extend([None; HOLD_CLOCKS]);
        }
    }
    let out = jbsq_common::run_held(
        JbsqIngress::<P, N, R, B, C>::new(SIZES, SEED, d.conn_timeout_us),
        fed,
        STAGES + HOLD_CLOCKS + 2,
    );
    assert_eq!(out.len(), d.steps.len(), "every pass leaves once");
    let mut kinds = std::collections::BTreeMap::new();
    for (i, (s, o)) in d.steps.iter().zip(&out).enumerate() {
        *kinds.entry(check_pass(i, s, o)).or_default() += 1;
    }
    let sent = |f: fn(&JbsqPhv) -> bool| out.iter().filter(|o| f(o)).count() as u64;
    let c = d.leaf.counters();
    assert_eq!(
        (
            sent(|o| o.conn_insert),
            sent(|o| o.conn_collision),
            sent(|o| o.conn_expired),
            sent(|o| o.is_cont && o.addr_ok),
            sent(|o| o.is_cont && !o.drop && !o.addr_ok),
        ),
        (
            c.conn_inserts,
            c.conn_collisions,
            c.conn_expired,
            c.continuations,
            c.continuation_miss
        ),
        "conn's counts over the run"
    );
    assert_eq!(
        (
            sent(|o| o.idle_add),
            sent(|o| o.idle_remove),
            sent(|o| o.repair),
            sent(|o| o.load_update)
        ),
        (
            c.sent_idle_add,
            c.sent_idle_remove,
            c.idle_repairs,
            c.sent_load_update
        ),
        "the messages over the run"
    );
    kinds.insert(
        "idle messages",
        (c.sent_idle_add + c.sent_idle_remove) as usize,
    );
    kinds.insert("load reports", c.sent_load_update as usize);
    kinds
}

#[test]
fn a_worker_takes_its_places_the_rest_wait_and_replies_release_them_in_order() {
    let mut d = Driver::new(SIZES, SEED);
    d.configure(1, pool_cfg(8, 2, 64, 8, Advertise::Idle));
    d.add(1, 20, None, 0);
    d.add(1, 21, Some(1), 0);
    for seq in 0..6 {
        d.task(1, seq); // three places, then three held
    }
    for node in [20, 21, 20, 20, 21] {
        d.reply(1, node); // each releases the oldest held task to its worker, then places return
        d.drain();
    }
    d.task(1, 6);
    let kinds = check(d);
    assert_eq!(
        (kinds["token"], kinds["held"], kinds["release"]),
        (4, 3, 3),
        "{kinds:?}"
    );
}

#[test]
fn removals_stale_tokens_and_a_full_region_each_take_the_models_way() {
    let mut d = Driver::new(SIZES, SEED);
    let mut cfg = pool_cfg(16, 2, 256, 16, Advertise::Places);
    cfg.queue_slots = 2;
    cfg.fallback = Fallback::Drop;
    d.configure(2, cfg);
    let mut cfg = pool_cfg(24, 1, 512, 24, Advertise::Queue { room: 1 });
    cfg.queue_slots = 1;
    d.configure(3, cfg);
    for node in [30, 31, 32] {
        d.add(2, node, None, 0);
    }
    d.add(3, 40, None, 0);
    d.add(3, 41, None, 0);
    d.remove(2, 31); // its two tokens go stale
    for seq in 0..9 {
        d.task(2, seq); // stale tokens retry; then held; then dropped on the full region
        d.task(3, seq); // two places, one held, the rest over a bound
        d.drain();
    }
    d.reply(2, 30);
    d.reply(3, 40);
    d.add(2, 31, None, 1); // back, with a task outstanding
    d.reply(2, 31);
    d.drain();
    d.remove(3, 41);
    d.reply(3, 41); // no longer in its pool
    d.task(9 % 4, 100); // a pool never configured
    let kinds = check(d);
    assert!(
        kinds["retry"] >= 2 && kinds["dropped"] > 0 && kinds["fallback"] > 0 && kinds["drop"] > 0,
        "{kinds:?}"
    );
}

#[test]
fn random_traffic_on_three_pools_takes_the_models_decisions_pass_for_pass() {
    let mut d = Driver::new(SIZES, SEED);
    d.continuations = true;
    d.set_conn_timeout_us(40);
    d.configure(1, pool_cfg(8, 2, 0, 0, Advertise::Idle));
    let mut cfg = pool_cfg(16, 3, 256, 16, Advertise::Places);
    cfg.fallback = Fallback::Drop;
    cfg.queue_slots = 4;
    d.configure(2, cfg);
    d.configure(3, pool_cfg(24, 1, 512, 32, Advertise::Queue { room: 2 }));
    let nodes: [(u16, &[u16]); 3] = [(1, &[20, 21, 22]), (2, &[30, 31]), (3, &[40, 41, 42])];
    for (pool, ns) in nodes {
        for &node in ns {
            d.add(pool, node, None, 0);
        }
    }
    d.random_traffic(0x5eed, 3000, &nodes, 150, 9);
    let passes = d.steps.len();
    let kinds = check(d);
    println!("random: {passes} passes: {kinds:?}");
    for kind in [
        "token",
        "held",
        "release",
        "fallback",
        "dropped",
        "retry",
        "place",
        "idle messages",
        "load reports",
        "continuation",
        "continuation miss",
    ] {
        assert!(
            kinds.get(kind).copied().unwrap_or(0) > 0,
            "no {kind}: {kinds:?}"
        );
    }
}

/// The chain at the preset's sizes (64 pools, 4,096 nodes, 65,536 ring entries, 4,096 buffer
/// slots, 1,024 connection entries) is lint clean. Whether what the stages measure alone holds
/// where they meet (the depth target) is checked inside the leaf's top level's synthesis
/// (`rtl-gen/tests/top_targets.rs`), which holds the chain whole.
#[test]
fn ingress_is_lint_clean_at_the_preset_sizes() {
    jbsq_common::lint(
        "jbsq_ingress",
        JbsqIngress::<6, 12, 16, 12, 10>::new(
            JbsqSizes::DEFAULT,
            SEED,
            horus_model::config::DEFAULT_CONN_TIMEOUT_US,
        ),
    );
}
