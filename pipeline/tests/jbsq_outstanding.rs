//! The JBSQ leaf's worker counts in hardware (`horus_pipeline::jbsq::outstanding`) against the
//! model's (`JbsqLeaf`'s `outstanding`): the model runs node additions and removals, tasks
//! (placed by a token, stale tokens retried, sent over a bound), replies (with or without a
//! release) and returned places; every pass that touches the table runs, one per clock, through
//! the stage, with what the stages before hand on read off the model. Each pass must leave with
//! the model's verdict: a stale token, a reply's count left and whether its place returns in a
//! second pass, a removal's lost tasks.

mod jbsq_common;

use horus_model::sched::jbsq::*;
use horus_pipeline::jbsq::outstanding::OutstandingStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::driver::{Driver, Step, pool_cfg};
use jbsq_common::{b16, lint_and_synth};

/// `2^N` nodes: `JbsqSizes::SMALL`.
const N: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.nodes as usize == 1 << N);

/// What a pass must show.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Stale(bool),
    /// A reply: tasks left, the level its place returns to (if it returns), the worker was
    /// counted at 0 (decision 33).
    Reply(u16, Option<u8>, bool),
    Lost(u16),
    Nothing,
}

/// The pass entering `outstanding` if it touches the table (what the stages before hand on,
/// read off the model's tables before it: the token a pop took, the fallback's node, the node's
/// check and bound, a release), and what it must show.
fn stage_pass(s: &Step) -> Option<(JbsqPhv, Expect)> {
    let mut p = s.pass;
    let pool = p.pool.index();
    let node = p.src.index();
    let t = &s.before;
    if p.is_task {
        let pc = t.pool_cfg.get(pool).copied().flatten()?;
        let q = t.queue_ctl[pool];
        let token = (0..LEVELS)
            .find(|&j| q.ring_count[j] > 0)
            .filter(|_| pc.n > 0)
            .map(|j| {
                let c = pc.cfg;
                t.rings[c.ring_base as usize
                    + j * usize::from(c.ring_slots)
                    + usize::from(q.ring_head[j])]
            });
        return match (token, s.result.placement) {
            (Some(tok), _) => {
                p.pop = true;
                p.tok_node = b16(tok.node);
                p.tok_gen = u64::from(tok.generation).into();
                let stale = matches!(s.result.resubmit, Some(JbsqResubmit::Retry { .. }));
                Some((p, Expect::Stale(stale)))
            }
            (None, Some(Placement::Fallback { node })) => {
                p.fallback = true;
                p.fb_node = b16(node);
                Some((p, Expect::Stale(false)))
            }
            _ => None,
        };
    }
    let nc = t.node_cfg[node];
    if p.is_reply {
        let ok = nc.active && nc.pool == pool as u16;
        let left = t.outstanding[node].tasks.saturating_sub(1);
        let returns = match s.result.resubmit {
            Some(JbsqResubmit::ReturnPlace { level, .. }) => Some(level),
            _ => None,
        };
        p.drop = !ok;
        p.k = b16(nc.k);
        p.release = s.result.release.is_some();
        let e = if ok {
            Expect::Reply(left, returns, t.outstanding[node].tasks == 0)
        } else {
            Expect::Nothing
        };
        return Some((p, e));
    }
    if p.is_return {
        let ok = nc.active && nc.pool == pool as u16 && nc.generation == p.generation.index() as u8;
        p.drop = !ok;
        p.release = s.result.release.is_some();
        return Some((p, Expect::Nothing));
    }
    if p.is_ctl_add {
        p.generation = u64::from(nc.generation).into();
        return Some((p, Expect::Nothing));
    }
    if p.is_ctl_remove {
        return Some((p, Expect::Lost(t.outstanding[node].tasks)));
    }
    if p.is_ctl_bound {
        // `nodeCfg` hands the node's new generation on (decision 36).
        p.generation = u64::from(s.after.node_cfg[node].generation).into();
        return Some((p, Expect::Nothing));
    }
    None
}

/// Runs the passes that touch the table through the stage, back to back, checks each, and
/// checks the counts the stage ends with through one more reply per node (its `left`). Returns
/// the passes checked and the spurious replies among them (decision 33).
fn check(mut d: Driver, nodes: &[(u16, u16)]) -> (usize, usize) {
    for &(pool, node) in nodes {
        d.reply(pool, node);
    }
    let (passes, expect): (Vec<_>, Vec<_>) = d.steps.iter().filter_map(stage_pass).unzip();
    let out = jbsq_common::run(OutstandingStage::<N>::default(), passes.clone(), 2);
    let (mut checked, mut spurious_seen) = (0, 0);
    for (i, (o, e)) in out.iter().zip(&expect).enumerate() {
        let ctx = format!("pass {i}: {:?}", passes[i]);
        match *e {
            Expect::Stale(s) => assert_eq!(o.stale, s, "{ctx}"),
            Expect::Reply(left, returns, spurious) => {
                spurious_seen += usize::from(spurious);
                assert_eq!(
                    (o.left.index() as u16, o.returns, o.spurious),
                    (left, returns.is_some(), spurious),
                    "{ctx}"
                );
                if let Some(level) = returns {
                    assert_eq!(o.level.index() as u8, level, "the place's ring: {ctx}");
                }
            }
            Expect::Lost(lost) => assert_eq!(o.lost.index() as u16, lost, "{ctx}"),
            Expect::Nothing => continue,
        }
        checked += 1;
    }
    (checked, spurious_seen)
}

/// The tasks that popped a stale token.
fn stale(d: &Driver) -> usize {
    d.steps
        .iter()
        .filter(|s| matches!(s.result.resubmit, Some(JbsqResubmit::Retry { .. })))
        .count()
}

#[test]
fn each_task_placed_counts_at_its_worker_and_each_reply_uncounts_it_back_to_back() {
    let mut d = Driver::new(SIZES, 11);
    d.configure(1, pool_cfg(8, 2, 0, 2, Fallback::Random));
    d.add(1, 20, None, 0);
    // Two places, two held, then over the bound (fallback) on the one worker: its count goes
    // 1, 2, 3, 4 pass after pass on one entry.
    for seq in 0..5 {
        d.task(1, seq);
    }
    // Replies release the held tasks (count kept), then come down; the last returns its place.
    for _ in 0..5 {
        d.reply(1, 20);
    }
    d.drain();
    d.task(1, 5);
    // Two pops and a fallback, five replies, the last task's pop, the closing reply.
    assert_eq!(check(d, &[(1, 20)]).0, 10);
}

#[test]
fn a_removed_workers_tokens_are_stale_and_its_tasks_lost() {
    let mut d = Driver::new(SIZES, 11);
    d.configure(2, pool_cfg(16, 2, 8, 4, Fallback::Drop));
    d.add(2, 30, None, 0);
    d.add(2, 31, None, 0);
    d.task(2, 0);
    d.task(2, 1);
    d.remove(2, 30);
    for seq in 2..6 {
        d.task(2, seq);
        d.drain();
    }
    // Added again with a prefilled count: a new generation.
    d.add(2, 30, None, 1);
    d.task(2, 6);
    d.reply(2, 30);
    // Node 30's second token is popped after its removal: stale, the task retries.
    assert_eq!(stale(&d), 1);
    // Five pops (one stale), the removal's lost task, three replies.
    assert_eq!(check(d, &[(2, 30), (2, 31)]).0, 9);
}

#[test]
fn random_traffic_on_two_pools_matches_the_models_counts() {
    let mut d = Driver::new(SIZES, 11);
    d.configure(1, pool_cfg(8, 2, 0, 6, Fallback::Random));
    d.configure(2, pool_cfg(16, 3, 8, 3, Fallback::Random));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(1), 0);
    // A worker of pool 1 leaves and comes back every 50 operations.
    d.bounds = true;
    d.random_traffic(0xbead, 2500, &[(1, &[20, 21, 22]), (2, &[30, 31])], 50, 9);
    let bounds = d.steps.iter().filter(|s| s.pass.is_ctl_bound).count();
    let pool_sets = d.steps.iter().filter(|s| s.pass.is_ctl_pool_params).count();
    assert!(
        bounds > 0 && pool_sets > 0,
        "{bounds} new bounds, {pool_sets} pool bounds"
    );
    let stale = stale(&d);
    let (checked, spurious) = check(d, &[(1, 20), (1, 21), (1, 22), (2, 30), (2, 31)]);
    println!("random: {checked} checked, {stale} stale, {spurious} spurious replies");
    assert!(
        checked > 1500 && stale > 5 && spurious > 50,
        "{checked} checked, {stale} stale, {spurious} spurious"
    );
}

/// The stage at the preset's size (4,096 nodes) is lint clean and within the depth target.
#[test]
fn outstanding_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.nodes == 1 << 12);
    let r = lint_and_synth("jbsq_outstanding", OutstandingStage::<12>::default());
    println!("outstanding: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
