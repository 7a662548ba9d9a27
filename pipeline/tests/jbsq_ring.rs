//! The JBSQ leaf's token table in hardware (`horus_pipeline::jbsq::ring::RingStage`) against the
//! model's (`JbsqLeaf`'s `rings`): the model runs configurations, node additions (a control pass
//! per free place), tasks, replies and their returned places, removals; each pass that takes or
//! puts a token runs, one per clock, through the stage, its entry (`ring_at`) as the model's
//! `queueCtl` chose it. Every token a pass takes must be the model's token at that entry, so
//! every token put must have landed where the model put it.

mod jbsq_common;

use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::ring::RingStage;
use jbsq_common::driver::Driver;
use jbsq_common::{b16, lint_and_synth};

/// `2^R` ring entries: `JbsqSizes::SMALL`.
const R: usize = 10;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.ring_entries as usize == 1 << R);

/// The pass on entry `level · ring_slots + at` of `pool`'s rings: a pop, or a push of `push`.
fn ring_pass(cfg: &JbsqPool, pool: usize, level: usize, at: u16, push: Option<Token>) -> JbsqPhv {
    let ring_at = level as u64 * u64::from(cfg.ring_slots) + u64::from(at);
    let mut p = JbsqPhv {
        live: true,
        pool: b16(pool as u64),
        ring_base: b16(cfg.ring_base),
        ring_at: b16(ring_at),
        ..Default::default()
    };
    match push {
        Some(t) => {
            p.push = true;
            p.src = b16(t.node);
            p.generation = u64::from(t.generation).into();
        }
        None => p.pop = true,
    }
    p
}

/// The passes of the run that take or put a token, at the entry the model's `queueCtl` chose,
/// each with the token the model holds there before it when it takes one. An added node's
/// places go to the tails of their rings, in order, as the model put them (checked against the
/// model's counts after the addition).
fn ring_passes(d: &Driver) -> Vec<(JbsqPhv, Option<Token>)> {
    let mut passes = Vec::new();
    let mut places: Vec<Option<(usize, u16)>> = Vec::new();
    for s in &d.steps {
        let p = s.pass;
        let pool = p.pool.index();
        let Some(pc) = s.before.pool_cfg.get(pool).copied().flatten() else {
            continue;
        };
        let cfg = pc.cfg;
        let q = s.before.queue_ctl[pool];
        if p.is_ctl_add {
            let k = match p.k.index() as u8 {
                0 => cfg.k,
                k => k,
            };
            let mut q = q;
            places.clear();
            for place in (p.tasks.index() as u16)..u16::from(k) {
                let j = level_of(place, k);
                places.push((q.ring_count[j] < cfg.ring_slots).then(|| {
                    let at = (u32::from(q.ring_head[j]) + u32::from(q.ring_count[j]))
                        % u32::from(cfg.ring_slots);
                    q.ring_count[j] += 1;
                    (j, at as u16)
                }));
            }
            places.reverse();
            assert_eq!(s.after.queue_ctl[pool].ring_count, q.ring_count);
        } else if p.is_ctl_place {
            if let Some((j, at)) = places.pop().expect("a place of the node added") {
                assert_eq!(j, p.level.index());
                let t = Token {
                    node: p.src.index() as u16,
                    generation: p.generation.index() as u8,
                };
                passes.push((ring_pass(&cfg, pool, j, at, Some(t)), None));
            }
        } else if p.is_task {
            let level = (0..LEVELS)
                .find(|&j| q.ring_count[j] > 0)
                .filter(|_| pc.n > 0);
            if let Some(j) = level {
                let at = q.ring_head[j];
                let index =
                    cfg.ring_base as usize + j * usize::from(cfg.ring_slots) + usize::from(at);
                let tok = s.before.rings[index];
                match (s.result.placement, s.result.resubmit) {
                    (Some(Placement::Token { node, level }), _) => {
                        assert_eq!((usize::from(level), node), (j, tok.node))
                    }
                    (_, resubmit) => {
                        assert!(matches!(resubmit, Some(JbsqResubmit::Retry { .. })))
                    }
                }
                passes.push((ring_pass(&cfg, pool, j, at, None), Some(tok)));
            }
        } else if p.is_return {
            let j = p.level.index();
            if s.after.queue_ctl[pool].ring_count[j] == q.ring_count[j] + 1 {
                let at = (u32::from(q.ring_head[j]) + u32::from(q.ring_count[j]))
                    % u32::from(cfg.ring_slots);
                let t = Token {
                    node: p.src.index() as u16,
                    generation: p.generation.index() as u8,
                };
                passes.push((ring_pass(&cfg, pool, j, at as u16, Some(t)), None));
            } else {
                assert!(
                    s.result.release.is_some()
                        || q.ring_count[j] == cfg.ring_slots
                        || s.result == JbsqResult::default()
                );
            }
        }
    }
    passes
}

/// Runs the passes that take or put a token through the stage, back to back, checks every
/// pop, and returns how many pops and pushes ran.
fn check(d: &Driver) -> (usize, usize) {
    let (passes, expect): (Vec<_>, Vec<_>) = ring_passes(d).into_iter().unzip();
    let out = jbsq_common::run(RingStage::<R>::default(), passes.clone(), 2);
    for (i, (o, e)) in out.iter().zip(&expect).enumerate() {
        if let Some(t) = e {
            assert_eq!(
                (o.tok_node.index() as u16, o.tok_gen.index() as u8),
                (t.node, t.generation),
                "pass {i}: {:?}",
                passes[i]
            );
        }
    }
    let pops = expect.iter().filter(|e| e.is_some()).count();
    (pops, passes.len() - pops)
}

fn pool_cfg(base: u16, k: u8, ring_base: u32, ring_slots: u16) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base,
        ring_slots,
        queue_base: u32::from(base),
        queue_slots: 4,
        fallback: Fallback::Random,
        advertise: Advertise::Idle,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: None,
    }
}

#[test]
fn a_place_returned_by_one_pass_is_taken_by_the_next_task() {
    let mut d = Driver::new(SIZES, 3);
    d.configure(1, pool_cfg(8, 1, 64, 4));
    d.add(1, 20, None, 0);
    // Each task takes the worker's one place; its reply returns the place (a second pass, fed
    // back at once) and the next task takes it, the pass right behind: the entry is forwarded.
    for seq in 0..6 {
        d.task(1, seq);
        d.reply(1, 20);
        d.again();
    }
    d.task(1, 6);
    assert_eq!(check(&d), (7, 7));
}

#[test]
fn tokens_leave_the_lowest_ring_first_in_the_order_their_places_freed() {
    let mut d = Driver::new(SIZES, 3);
    d.configure(2, pool_cfg(16, 3, 200, 8));
    for node in [30, 31, 32] {
        d.add(2, node, None, 0);
    }
    // Nine places over three levels (k = 3: places 0, 1, 2 in levels 0, 2, 5).
    for seq in 0..9 {
        d.task(2, seq);
    }
    for node in [31, 30, 32, 31] {
        d.reply(2, node);
        d.again();
    }
    for seq in 9..13 {
        d.task(2, seq);
    }
    assert_eq!(check(&d), (13, 9 + 4));
}

#[test]
fn a_removed_workers_tokens_are_taken_as_they_were_put() {
    let mut d = Driver::new(SIZES, 3);
    d.configure(1, pool_cfg(8, 2, 64, 4));
    d.add(1, 20, None, 0);
    d.add(1, 21, None, 0);
    d.remove(1, 20);
    // Node 20's places are stale: a task that pops one retries (its generation differs from
    // node 20's now); the retry pops the next.
    for seq in 0..4 {
        d.task(1, seq);
        d.drain();
    }
    d.add(1, 20, None, 0);
    d.task(1, 4);
    d.task(1, 5);
    assert_eq!(d.leaf.counters().stale_tokens, 2);
    // Two tasks each pop a stale token and then a live one; two are held (no token left); the
    // re-added node's two places are taken by the last two.
    assert_eq!(check(&d), (6, 6));
}

#[test]
fn random_traffic_on_two_pools_takes_every_token_where_the_model_put_it() {
    let mut d = Driver::new(SIZES, 3);
    d.configure(1, pool_cfg(8, 2, 0, 8));
    d.configure(2, pool_cfg(16, 5, 512, 6));
    for node in [20, 21, 22] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(2), 0);
    // A worker of pool 1 leaves and comes back every 500 operations.
    d.random_traffic(0xfeed, 2500, &[(1, &[20, 21, 22]), (2, &[30, 31])], 500, 8);
    let (pops, pushes) = check(&d);
    println!("random: {pops} pops, {pushes} pushes");
    assert!(pops > 400 && pushes > 400, "{pops} pops, {pushes} pushes");
}

/// The stage at the preset's size (65,536 tokens) is lint clean and within the depth target,
/// its tokens in URAM.
#[test]
fn ring_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.ring_entries == 1 << 16);
    let r = lint_and_synth("jbsq_ring", RingStage::<16>::default());
    println!("ring: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
    assert!(r.urams > 0, "{r:#}");
}
