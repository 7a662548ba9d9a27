//! The JBSQ leaf's node configuration in hardware (`horus_pipeline::jbsq::node_cfg`) against the
//! model's (`JbsqLeaf`'s `node_cfg`): the model runs pool configurations, node additions and
//! removals, tasks, replies (from the pool's nodes and from others) and their returned places;
//! every pass runs, one per clock, through the stage, with what `poolCfg` hands on read off the
//! model's tables before it. Each pass must leave with the model's verdict: a reply or a
//! returned place dropped exactly when the model found its node not an active node of the pool
//! (of the place's generation), the node's bound and generation as the model's table holds them,
//! an added or removed node's generation and bound as the model wrote them. Each run goes through
//! the stage alone and again behind `poolCfg`, whose own outputs then feed it.

mod jbsq_common;

use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_pipeline::jbsq::node_cfg::NodeCfgStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::pool_cfg::PoolCfgStage;
use horus_pipeline::jbsq::{JbsqIn, JbsqOut, JbsqPort};
use jbsq_common::driver::{Driver, Step};
use jbsq_common::{b16, lint_and_synth};
use rust_hdl::prelude::*;

/// `2^N` nodes: `JbsqSizes::SMALL`.
const N: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.nodes as usize == 1 << N);
/// `2^P` pools.
const P: usize = 2;
const _: () = assert!(SIZES.pools as usize == 1 << P);

/// `nodeCfg` behind `poolCfg`, as in the leaf: what `poolCfg` hands on (the drop of an unknown
/// or empty pool, `pool_k`) from the stage itself.
#[derive(LogicBlock)]
struct Front {
    clock: Signal<In, Clock>,
    port: JbsqPort,
    pool: PoolCfgStage<P>,
    node: NodeCfgStage<N>,
}

impl Logic for Front {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, pool, node);
        JbsqIn::link(&mut self.port.up, &mut self.pool.port.up);
        JbsqOut::join(&mut self.pool.port.down, &mut self.node.port.up);
        JbsqOut::link(&mut self.port.down, &mut self.node.port.down);
    }
}

horus_pipeline::impl_jbsq_stage!([] Front);

/// What `nodeCfg` must show for a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Expect {
    drop: bool,
    /// The node's bound and generation, where the stage hands them on.
    k: Option<u16>,
    generation: Option<u8>,
}

/// The pass entering `nodeCfg` (what `poolCfg` hands on: an unknown pool or a task of a pool
/// with no member dropped, the pool's `k`) and what it must leave with.
fn stage_pass(s: &Step) -> (JbsqPhv, Expect) {
    let mut p = s.pass;
    let pool = p.pool.index();
    let pc = s.before.pool_cfg.get(pool).copied().flatten();
    let control = p.is_ctl_pool
        | p.is_ctl_add
        | p.is_ctl_remove
        | p.is_ctl_place
        | p.is_ctl_read
        | p.is_ctl_bound
        | p.is_ctl_pool_params;
    if !control {
        p.drop = pc.is_none() || (p.is_task && pc.is_some_and(|pc| pc.n == 0));
    }
    if let Some(pc) = pc {
        p.pool_k = b16(pc.cfg.k);
    }
    let node = p.src.index();
    let before = s.before.node_cfg.get(node).copied();
    let after = s.after.node_cfg.get(node).copied();
    let unchanged = Expect {
        drop: p.drop,
        k: None,
        generation: None,
    };
    let e = if p.drop
        || !(p.is_reply | p.is_return | p.is_ctl_add | p.is_ctl_remove | p.is_ctl_bound)
    {
        unchanged
    } else if p.is_reply {
        let nc = before.unwrap();
        let dropped = s.result.drop == Some(JbsqDrop::NodeNotInPool);
        // A returned place carries the generation the stage hands on.
        if let Some(JbsqResubmit::ReturnPlace { generation, .. }) = s.result.resubmit {
            assert_eq!(generation, nc.generation);
        }
        Expect {
            drop: dropped,
            k: Some(u16::from(nc.k)),
            generation: Some(nc.generation),
        }
    } else if p.is_return {
        let nc = before.unwrap();
        // The model's verdict: a returned place that is still its node's goes on to `queueCtl`.
        let dropped = !s.touched.contains(&JbsqStage::QueueCtl);
        Expect {
            drop: dropped,
            k: Some(u16::from(nc.k)),
            generation: Some(p.generation.index() as u8),
        }
    } else {
        let nc = after.unwrap();
        Expect {
            drop: false,
            k: (p.is_ctl_add | p.is_ctl_bound).then_some(u16::from(nc.k)),
            generation: Some(nc.generation),
        }
    };
    (p, e)
}

/// Runs every recorded pass through the stage, back to back, and checks each; returns how many
/// passes the stage read its table for.
fn check(d: &Driver) -> usize {
    let (passes, expect): (Vec<_>, Vec<_>) = d.steps.iter().map(stage_pass).unzip();
    let out = jbsq_common::run(NodeCfgStage::<N>::default(), passes.clone(), 2);
    check_out(&passes, &out, &expect)
}

/// The same passes as they enter `poolCfg`, through `poolCfg` (seeded as the model's leaf) and
/// `nodeCfg` chained; the same checks.
fn check_behind_pool_cfg(d: &Driver, seed: u64) -> usize {
    let (passes, expect): (Vec<_>, Vec<_>) = d.steps.iter().map(stage_pass).unzip();
    let raw: Vec<JbsqPhv> = d.steps.iter().map(|s| s.pass).collect();
    let front = Front {
        clock: Default::default(),
        port: Default::default(),
        pool: PoolCfgStage::new(seed),
        node: Default::default(),
    };
    let out = jbsq_common::run(front, raw, 3);
    check_out(&passes, &out, &expect)
}

fn check_out(passes: &[JbsqPhv], out: &[JbsqPhv], expect: &[Expect]) -> usize {
    let mut read = 0;
    for (i, (o, e)) in out.iter().zip(expect).enumerate() {
        let ctx = format!("pass {i}: {:?} -> {o:?}", passes[i]);
        assert_eq!(o.drop, e.drop, "{ctx}");
        if let Some(k) = e.k {
            assert_eq!(o.k.index() as u16, k, "{ctx}");
        }
        if let Some(g) = e.generation {
            assert_eq!(o.generation.index() as u8, g, "{ctx}");
            read += 1;
        }
    }
    read
}

fn pool_cfg(base: u16, k: u8, queue_base: u32, queue_slots: u32, fallback: Fallback) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base: u32::from(base) * 16,
        ring_slots: 16,
        queue_base,
        queue_slots,
        fallback,
        advertise: Advertise::Idle,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: None,
    }
}

/// A reply from every node to pool `pool`: each reads the node's entry, so the table the stage
/// ends with is checked entry by entry against the model's.
fn sweep(d: &mut Driver, pool: u16) {
    for node in 0..SIZES.nodes {
        d.reply(pool, node);
    }
}

#[test]
fn a_node_added_removed_and_added_again_back_to_back_moves_its_generation() {
    let mut d = Driver::new(SIZES, 5);
    d.configure(1, pool_cfg(8, 2, 0, 4, Fallback::Random));
    d.configure(2, pool_cfg(16, 3, 4, 4, Fallback::Drop));
    // Added, removed and added again pass after pass on one entry (forwarding): generation 0,
    // then 1; its own bound the second time.
    d.add(1, 20, None, 0);
    d.remove(1, 20);
    d.add(1, 20, Some(5), 0);
    d.remove(1, 20);
    d.add(2, 20, None, 1);
    // Replies right behind: from the node in its pool, in the pool it left, and from a node
    // never added.
    d.reply(2, 20);
    d.reply(1, 20);
    d.reply(2, 21);
    assert_eq!(d.tables().node_cfg[20].generation, 2);
    assert_eq!(d.tables().node_cfg[20].k, 3);
    assert_eq!(d.leaf.counters().replies_not_in_pool, 2);
    // Three additions, two removals, three replies.
    assert_eq!(check(&d), 8);
    assert_eq!(check_behind_pool_cfg(&d, 5), 8);
}

#[test]
fn a_place_returned_after_its_node_was_removed_is_dropped() {
    let mut d = Driver::new(SIZES, 5);
    d.configure(1, pool_cfg(8, 1, 0, 4, Fallback::Random));
    d.add(1, 20, None, 0);
    d.add(1, 21, None, 0);
    d.task(1, 1);
    d.task(1, 2);
    // Node 20's reply hands out a returned place; the node is removed and added again before
    // the second pass: of an old generation, the place is dropped.
    d.reply(1, 20);
    d.remove(1, 20);
    d.add(1, 20, None, 0);
    d.again();
    // Node 21's place returns as it should, right behind.
    d.reply(1, 21);
    d.again();
    let returns: Vec<bool> = d
        .steps
        .iter()
        .filter(|s| s.pass.is_return)
        .map(|s| s.touched.contains(&JbsqStage::QueueCtl))
        .collect();
    assert_eq!(returns, [false, true]);
    sweep(&mut d, 1);
    assert_eq!(check(&d), 8 + 64);
    assert_eq!(check_behind_pool_cfg(&d, 5), 8 + 64);
}

#[test]
fn random_traffic_with_removals_matches_the_models_node_table() {
    let mut d = Driver::new(SIZES, 9);
    d.configure(1, pool_cfg(8, 2, 0, 6, Fallback::Random));
    d.configure(2, pool_cfg(16, 3, 8, 3, Fallback::Drop));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(1), 0);
    d.bounds = true;
    d.random_traffic(0x5eed, 3000, &[(1, &[20, 21, 22]), (2, &[30, 31])], 300, 9);
    let bounds = d.steps.iter().filter(|s| s.pass.is_ctl_bound).count();
    let pool_sets = d.steps.iter().filter(|s| s.pass.is_ctl_pool_params).count();
    assert!(
        bounds > 0 && pool_sets > 0,
        "{bounds} new bounds, {pool_sets} pool bounds"
    );
    sweep(&mut d, 1);
    sweep(&mut d, 2);
    let dropped = d
        .steps
        .iter()
        .filter(|s| s.result.drop == Some(JbsqDrop::NodeNotInPool))
        .count();
    let stale = d
        .steps
        .iter()
        .filter(|s| s.pass.is_return && !s.touched.contains(&JbsqStage::QueueCtl))
        .count();
    let read = check(&d);
    assert_eq!(check_behind_pool_cfg(&d, 9), read);
    println!(
        "random: {} passes, {read} read the table, {dropped} replies not in the pool, {stale} places of a removed node",
        d.steps.len()
    );
    assert!(
        read > 1000 && dropped > 100,
        "{read} read, {dropped} dropped"
    );
}

/// The stage at the preset's size (4,096 nodes) is lint clean and within the depth target.
#[test]
fn node_cfg_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.nodes == 1 << 12);
    let r = lint_and_synth("jbsq_node_cfg", NodeCfgStage::<12>::default());
    println!("nodeCfg: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
