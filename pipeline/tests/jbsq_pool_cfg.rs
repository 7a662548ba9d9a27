//! The JBSQ leaf's pool configuration and random generator in hardware
//! (`horus_pipeline::jbsq::pool_cfg`) against the model's (`JbsqLeaf`'s `pool_cfg` and its
//! `Xorshift64`): the model runs configurations, node additions and removals (with the host's
//! read before each), tasks, replies and their second passes; every pass runs, one per clock,
//! through the stage, seeded as the model. Each pass must leave with the pool's configuration and
//! member count as the model's table holds them, dropped exactly when the model dropped it for
//! an unknown pool or a pool with no member, an added node's member slot, `conn`'s index
//! (`conn_slot`, every pass), and the sample `r1`
//! the model drew: the model's generator state after the pass, scaled by `n`, on exactly the
//! passes that advanced the model's generator, and 0 on every other.

mod jbsq_common;

use horus_model::fixed::Load;
use horus_model::rng::scale;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::{Params, SpineRef};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::pool_cfg::PoolCfgStage;
use jbsq_common::driver::{Driver, Step, encode_cfg};
use jbsq_common::lint_and_synth;

/// `2^P` pools: `JbsqSizes::SMALL`.
const P: usize = 2;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.pools as usize == 1 << P);

/// The configuration fields of a descriptor, in `encode_cfg`'s order.
fn cfg_fields(p: &JbsqPhv) -> [u64; 19] {
    [
        p.base.index() as u64,
        p.cap.index() as u64,
        p.pool_k.index() as u64,
        p.ring_base.index() as u64,
        p.ring_slots.index() as u64,
        p.queue_base.index() as u64,
        p.queue_slots.index() as u64,
        u64::from(p.drop_full),
        u64::from(p.adv_places),
        u64::from(p.adv_queue),
        p.room.index() as u64,
        p.hold_us.index() as u64,
        p.link_at.index() as u64,
        p.unlink_at.index() as u64,
        p.report_delta.index() as u64,
        p.repair_gap.index() as u64,
        u64::from(p.spine_ok),
        p.spine_id.index() as u64,
        p.spine_node.index() as u64,
    ]
}

/// What `poolCfg` must show for a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Expect {
    drop: bool,
    /// The configuration and member count handed on (`None`: a dropped pass).
    cfg: Option<([u64; 19], u16)>,
    /// The hold limit handed on (decision 37): the region's slots while the pool holds, else 0.
    hold_slots: Option<u16>,
    r1: u16,
    slot: Option<u16>,
    draws: bool,
}

fn expect(s: &Step) -> Expect {
    let p = &s.pass;
    let pool = p.pool.index();
    let before = s.before.pool_cfg.get(pool).copied().flatten();
    let after = s.after.pool_cfg.get(pool).copied().flatten();
    let drop = matches!(
        s.result.drop,
        Some(JbsqDrop::UnknownPool | JbsqDrop::EmptyPool)
    );
    let fields = |pc: PoolCfgEntry| {
        let mut x = JbsqPhv::default();
        encode_cfg(&mut x, &pc.cfg);
        cfg_fields(&x)
    };
    let draws = s.rng.0 != s.rng.1;
    let n = before.map_or(0, |pc| pc.n);
    let r1 = if draws { scale(s.rng.1 as u32, n) } else { 0 };
    // The model's fallback took the member at sample 1 (a retry's is 0).
    if let (Some(Placement::Fallback { node }), Some(pc)) = (s.result.placement, before) {
        assert_eq!(s.before.members[usize::from(pc.cfg.base + r1)], node);
    }
    let cfg = if p.is_ctl_bound || p.is_ctl_pool_params {
        // Neither hands the pool's configuration on; the new bound shows in the passes after.
        None
    } else if p.is_ctl_pool || p.is_ctl_add || p.is_ctl_remove {
        after.map(|pc| (fields(pc), pc.n))
    } else {
        before.map(|pc| (fields(pc), pc.n))
    };
    let hold_slots = if p.is_ctl_pool || p.is_ctl_bound || p.is_ctl_pool_params {
        None
    } else {
        before.map(|pc| {
            if pc.holds {
                pc.cfg.queue_slots as u16
            } else {
                0
            }
        })
    };
    let slot = if p.is_ctl_add {
        Some(n)
    } else if p.is_ctl_read {
        Some(n - 1)
    } else {
        None
    };
    Expect {
        drop,
        cfg: if drop && before.is_none() { None } else { cfg },
        hold_slots,
        r1,
        slot,
        draws,
    }
}

/// Runs every recorded pass through the stage (seeded as the model), back to back, checks each
/// and returns how many drew a sample.
fn check(d: &Driver, seed: u64) -> usize {
    let passes: Vec<JbsqPhv> = d.steps.iter().map(|s| s.pass).collect();
    let out = jbsq_common::run(PoolCfgStage::<P>::new(seed), passes.clone(), 2);
    let mut draws = 0;
    for (i, (o, s)) in out.iter().zip(&d.steps).enumerate() {
        let e = expect(s);
        let ctx = format!("pass {i}: {:?} -> {o:?}, {e:?}", passes[i]);
        assert_eq!(o.drop, e.drop, "{ctx}");
        if let Some((fields, n)) = e.cfg {
            assert_eq!((cfg_fields(o), o.n.index() as u16), (fields, n), "{ctx}");
        }
        assert_eq!(o.r1.index() as u16, e.r1, "{ctx}");
        if let Some(h) = e.hold_slots {
            assert_eq!(o.hold_slots.index() as u16, h, "{ctx}");
        }
        // `conn`'s index, for every pass.
        let hash = horus_model::sched::conn_hash(o.pool.index() as u16, o.seq.index() as u16);
        assert_eq!(o.conn_slot.index() as u32, hash & 0xFFFF, "{ctx}");
        if let Some(slot) = e.slot {
            assert_eq!(o.slot.index() as u16, slot, "{ctx}");
        }
        draws += usize::from(e.draws);
    }
    draws
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

#[test]
fn a_pool_hands_on_its_configuration_and_an_unknown_or_empty_pool_drops_its_passes() {
    let mut d = Driver::new(SIZES, 21);
    let mut rich = pool_cfg(8, 3, 4, 5, Fallback::Random);
    rich.advertise = Advertise::Queue { room: 4 };
    rich.hold_us = 25;
    rich.params = Params {
        link_at: 2,
        unlink_at: 1,
        report_delta: Load(0x1_8000),
        repair_gap_us: 70,
    };
    rich.spine = Some(SpineRef { id: 300, node: 7 });
    let mut places = pool_cfg(16, 2, 12, 2, Fallback::Drop);
    places.advertise = Advertise::Places;
    d.configure(1, rich);
    // A task and a reply of a pool never configured; a task of a pool with no member (it draws).
    d.task(3, 1);
    d.reply(3, 20);
    d.task(1, 2);
    d.configure(2, places);
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, Some(1), 0);
    for seq in 3..20 {
        d.task(1 + seq % 2, seq);
    }
    for node in [20, 21, 30, 22] {
        let pool = if node == 30 { 2 } else { 1 };
        d.reply(pool, node);
    }
    d.drain();
    // Configured, then a task right behind on the same pool (forwarding): no member yet.
    d.configure(0, pool_cfg(32, 1, 20, 4, Fallback::Random));
    d.task(0, 20);
    let drops: Vec<Option<JbsqDrop>> = d
        .steps
        .iter()
        .filter(|s| s.result.drop.is_some())
        .map(|s| s.result.drop)
        .collect();
    assert!(drops.contains(&Some(JbsqDrop::UnknownPool)));
    assert!(drops.contains(&Some(JbsqDrop::EmptyPool)));
    let draws = check(&d, 21);
    // Every first pass of a task of a configured pool draws (the two of empty pools too).
    assert_eq!(draws, 19);
}

#[test]
fn back_to_back_additions_and_removals_each_see_the_count_the_pass_before_left() {
    let mut d = Driver::new(SIZES, 4);
    d.configure(1, pool_cfg(8, 1, 0, 1, Fallback::Random));
    for node in [20, 21, 22, 23] {
        d.add(1, node, None, 0);
    }
    d.remove(1, 21);
    d.remove(1, 20);
    d.add(1, 21, None, 0);
    d.add(1, 24, None, 2);
    d.remove(1, 24);
    // Two stale tokens (nodes 20 and 21 of generation 0) retried, three live ones, one slot of
    // buffer: the rest go over a bound, the first passes to sample 1 over n = 3, the retries
    // (which draw nothing) to member slot 0.
    for seq in 0..8 {
        d.task(1, seq);
    }
    d.drain();
    let fallbacks = d
        .steps
        .iter()
        .filter(|s| matches!(s.result.placement, Some(Placement::Fallback { .. })))
        .count();
    assert_eq!(fallbacks, 4);
    assert_eq!(check(&d, 4), 8);
}

#[test]
fn random_traffic_draws_the_models_samples_pass_for_pass() {
    let mut d = Driver::new(SIZES, 0xace);
    d.configure(1, pool_cfg(8, 1, 0, 2, Fallback::Random));
    d.configure(2, pool_cfg(16, 2, 8, 2, Fallback::Drop));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(1), 0);
    d.bounds = true;
    d.random_traffic(0xd1ce, 3000, &[(1, &[20, 21, 22]), (2, &[30, 31])], 250, 9);
    let bounds = d.steps.iter().filter(|s| s.pass.is_ctl_bound).count();
    let pool_sets = d.steps.iter().filter(|s| s.pass.is_ctl_pool_params).count();
    let moves = d.steps.iter().filter(|s| s.pass.is_ctl_move).count();
    let closed = d
        .steps
        .iter()
        .filter(|s| s.before.pool_cfg[1].is_some_and(|pc| !pc.holds))
        .count();
    assert!(
        bounds > 0 && pool_sets > 0 && moves > 0 && closed > 0,
        "{bounds} new bounds, {pool_sets} pool bounds, {moves} buffer moves, {closed} passes \
         while pool 1 did not hold"
    );
    let fallbacks = d
        .steps
        .iter()
        .filter(|s| matches!(s.result.placement, Some(Placement::Fallback { .. })))
        .count();
    let retries = d.steps.iter().filter(|s| s.pass.is_retry).count();
    let draws = check(&d, 0xace);
    println!(
        "random: {} passes, {draws} draws, {fallbacks} fallbacks, {retries} retries",
        d.steps.len()
    );
    assert!(
        draws > 1000 && fallbacks > 100 && retries > 0,
        "{draws} draws, {fallbacks} fallbacks, {retries} retries"
    );
}

/// The stage at the preset's size (64 pools) is lint clean and within the depth target.
#[test]
fn pool_cfg_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.pools == 1 << 6);
    let r = lint_and_synth("jbsq_pool_cfg", PoolCfgStage::<6>::new(1));
    println!("poolCfg: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
