//! The JBSQ leaf's address table in hardware (`horus_pipeline::jbsq::node_addr`, the paper
//! leaf's `nodeAddr` behind the JBSQ descriptor; decision 34) against the model's: the model runs
//! node additions (each with its own address) and removals, tasks (placed by a token, stale tokens
//! retried, sent over a bound, held, dropped), continuations (which follow their task's entry,
//! read off the model's), replies (with or without a release) and returned places; every pass runs, one per clock, through the stage, with what the stages before hand on
//! read off the model. A pass that sends a task must leave with the model's address for it (the
//! task's node's, a continuation's entry's node's, or the replying worker's for a released task);
//! no other pass may forward.

mod jbsq_common;

use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::*;
use horus_pipeline::jbsq::node_addr::NodeAddrStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::driver::{Driver, Step, addr_fields, addr_of, placed, pool_cfg, sent_to};
use jbsq_common::lint_and_synth;

/// `2^N` nodes: `JbsqSizes::SMALL`.
const N: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.nodes as usize == 1 << N);

/// The pass entering `nodeAddr` (what the stages before hand on, read off the model: the token a
/// pop took and whether it was stale, the fallback's node, a release), and the address the model
/// sent its task to, if it sent one.
fn stage_pass(d: &Driver, s: &Step) -> Option<(JbsqPhv, Option<NodeAddr>)> {
    let mut p = s.pass;
    let r = &s.result;
    let sent = sent_to(r);
    if p.is_task {
        return Some((placed(s)?, sent));
    }
    if p.is_cont {
        return Some((d.followed(s), sent));
    }
    if p.is_reply || p.is_return {
        p.drop = r.drop.is_some() || (p.is_return && r == &JbsqResult::default());
        p.release = r.release.is_some();
        return Some((p, sent));
    }
    (p.is_ctl_add || p.is_ctl_remove).then_some((p, None))
}

/// Runs every pass through the stage, back to back, and checks each; then one task per node
/// added reads the table back. Returns the passes that sent a task.
fn check(d: Driver) -> usize {
    let (passes, expect): (Vec<_>, Vec<_>) =
        d.steps.iter().filter_map(|s| stage_pass(&d, s)).unzip();
    let out = jbsq_common::run(NodeAddrStage::<N>::default(), passes.clone(), 2);
    let mut sent = 0;
    for (i, (o, e)) in out.iter().zip(&expect).enumerate() {
        let ctx = format!("pass {i}: {:?}", passes[i]);
        assert_eq!(o.addr_ok, e.is_some(), "forwards: {ctx}");
        let Some(a) = e else { continue };
        sent += 1;
        assert_eq!(addr_of(o), addr_fields(a), "{ctx}");
    }
    sent
}

#[test]
fn tasks_and_releases_go_to_their_workers_address_back_to_back() {
    let mut d = Driver::new(SIZES, 11);
    d.configure(1, pool_cfg(8, 1, 0, 2, Fallback::Random));
    d.add(1, 20, None, 0);
    d.add(1, 21, None, 0);
    // Two places, two held, one over the bound, one after the other.
    for seq in 0..5 {
        d.task(1, seq);
    }
    // Replies release the held tasks to the replying worker, then return places.
    for node in [21, 20, 20, 21] {
        d.reply(1, node);
    }
    d.drain();
    // Removed: its address goes; added again: the new one is read at once.
    d.remove(1, 21);
    d.add(1, 21, None, 0);
    d.task(1, 5);
    d.task(1, 6);
    assert!(check(d) >= 7);
}

#[test]
fn random_traffic_with_removals_sends_every_task_to_the_models_address() {
    let mut d = Driver::new(SIZES, 11);
    d.continuations = true;
    d.set_conn_timeout_us(40);
    d.configure(1, pool_cfg(8, 2, 0, 6, Fallback::Random));
    d.configure(2, pool_cfg(16, 3, 8, 3, Fallback::Drop));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(1), 0);
    d.random_traffic(0xadd5, 2500, &[(1, &[20, 21, 22]), (2, &[30, 31])], 50, 9);
    let c = *d.leaf.counters();
    let sent = check(d);
    println!(
        "random: {sent} tasks sent, {} of them continuations",
        c.continuations
    );
    assert!(sent > 800 && c.continuations > 100, "{sent} sent; {c:?}");
}

/// The stage at the preset's size (4,096 nodes) is lint clean and within the depth target.
#[test]
fn node_addr_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    let r = lint_and_synth("jbsq_node_addr", NodeAddrStage::<12>::default());
    println!("nodeAddr: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
