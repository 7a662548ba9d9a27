//! The JBSQ leaf's pool members in hardware (`horus_pipeline::jbsq::members` and
//! `member_slot`, chained) against the model's (`JbsqLeaf`'s `members` and `member_slot`): the
//! model runs configurations, node additions, removals (each after the host's read of the
//! removed node's slot and the pool's last member, a control pass), tasks, replies and second
//! passes; every pass runs, one per clock, through the two stages, with what the stages before
//! hand on (`poolCfg`'s base, sample and slot, `queueCtl`'s fallback) read off the model's tables
//! and generator before it. Each task sent over a bound must leave with the model's node, each
//! host's read with the slot and last member the model's tables hold; a closing sweep reads every
//! member slot and every node's slot back. Each run goes again through `poolCfg` and the two
//! stages chained, `poolCfg`'s own base, sample and slots feeding them.

mod jbsq_common;

use horus_model::rng::scale;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_pipeline::jbsq::member_slot::MemberSlotStage;
use horus_pipeline::jbsq::members::MembersStage;
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

/// The two stages, `memberSlot` right behind `members`, as in the leaf.
#[derive(LogicBlock, Default)]
struct Members<const N: usize> {
    clock: Signal<In, Clock>,
    port: JbsqPort,
    members: MembersStage<N>,
    slots: MemberSlotStage<N>,
}

impl<const N: usize> Logic for Members<N> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, members, slots);
        JbsqIn::link(&mut self.port.up, &mut self.members.port.up);
        JbsqOut::join(&mut self.members.port.down, &mut self.slots.port.up);
        JbsqOut::link(&mut self.port.down, &mut self.slots.port.down);
    }
}

horus_pipeline::impl_jbsq_stage!([const N: usize] Members<N>);

/// `2^P` pools.
const P: usize = 2;
const _: () = assert!(SIZES.pools as usize == 1 << P);

/// `poolCfg` in front of the two (`queueCtl` and `ring` between them in the leaf, which the
/// fallback's flag stands for): the base, the sample `r1` and the slots from `poolCfg` itself.
#[derive(LogicBlock)]
struct Front {
    clock: Signal<In, Clock>,
    port: JbsqPort,
    pool: PoolCfgStage<P>,
    members: Members<N>,
}

impl Logic for Front {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, pool, members);
        JbsqIn::link(&mut self.port.up, &mut self.pool.port.up);
        JbsqOut::join(&mut self.pool.port.down, &mut self.members.port.up);
        JbsqOut::link(&mut self.port.down, &mut self.members.port.down);
    }
}

horus_pipeline::impl_jbsq_stage!([] Front);

/// What a pass must show.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// A task over a bound: its node.
    Fallback(u16),
    /// The host's read: the node's slot and the pool's last member.
    Read(u16, u16),
    Nothing,
}

/// The pass entering `members` (what `poolCfg` and `queueCtl` hand on) and what it must show.
fn stage_pass(s: &Step) -> (JbsqPhv, Expect) {
    let mut p = s.pass;
    let pool = p.pool.index();
    let pc = s.before.pool_cfg.get(pool).copied().flatten();
    let n = pc.map_or(0, |pc| pc.n);
    if p.is_task | p.is_reply | p.is_return {
        p.drop = pc.is_none() || (p.is_task && n == 0);
    }
    if let Some(pc) = pc {
        p.base = b16(pc.cfg.base);
        p.n = b16(n);
    }
    if s.rng.0 != s.rng.1 {
        p.r1 = b16(scale(s.rng.1 as u32, n));
    }
    if p.is_ctl_add {
        p.slot = b16(n);
    }
    let mut e = Expect::Nothing;
    if p.is_ctl_read {
        p.slot = b16(n - 1);
        let base = usize::from(pc.unwrap().cfg.base);
        e = Expect::Read(
            s.before.member_slot[p.src.index()],
            s.before.members[base + usize::from(n) - 1],
        );
    }
    if let Some(Placement::Fallback { node }) = s.result.placement {
        p.fallback = true;
        e = Expect::Fallback(node);
    }
    (p, e)
}

/// Runs the recorded passes through the two stages, back to back, then a sweep that reads every
/// member slot of `pools` and every node's slot (through `read_pool`), and checks each; returns
/// how many passes were checked.
fn check(d: &Driver, pools: &[u16], read_pool: u16) -> usize {
    let (mut passes, mut expect): (Vec<_>, Vec<_>) = d.steps.iter().map(stage_pass).unzip();
    let t = d.tables();
    for &pool in pools {
        let pc = t.pool_cfg[usize::from(pool)].unwrap();
        for i in 0..pc.cfg.capacity {
            passes.push(JbsqPhv {
                live: true,
                is_task: true,
                fallback: true,
                pool: b16(pool),
                base: b16(pc.cfg.base),
                r1: b16(i),
                ..Default::default()
            });
            expect.push(Expect::Fallback(t.members[usize::from(pc.cfg.base + i)]));
        }
    }
    let pc = t.pool_cfg[usize::from(read_pool)].unwrap();
    let last = t.members[usize::from(pc.cfg.base + pc.n - 1)];
    for node in 0..SIZES.nodes {
        passes.push(JbsqPhv {
            live: true,
            is_ctl_read: true,
            pool: b16(read_pool),
            src: b16(node),
            base: b16(pc.cfg.base),
            slot: b16(pc.n - 1),
            ..Default::default()
        });
        expect.push(Expect::Read(t.member_slot[usize::from(node)], last));
    }
    let out = jbsq_common::run(Members::<N>::default(), passes.clone(), 3);
    check_out(&passes, &out, &expect)
}

/// The recorded passes as they enter `poolCfg` (with `queueCtl`'s fallback read off the model),
/// through `poolCfg` seeded as the model and the two stages; the same checks, but for the
/// sweep's.
fn check_behind_pool_cfg(d: &Driver, seed: u64) -> usize {
    let (passes, expect): (Vec<_>, Vec<_>) = d.steps.iter().map(stage_pass).unzip();
    let raw: Vec<JbsqPhv> = d
        .steps
        .iter()
        .zip(&passes)
        .map(|(s, p)| JbsqPhv {
            fallback: p.fallback,
            ..s.pass
        })
        .collect();
    let front = Front {
        clock: Default::default(),
        port: Default::default(),
        pool: PoolCfgStage::new(seed),
        members: Default::default(),
    };
    let out = jbsq_common::run(front, raw, 4);
    check_out(&passes, &out, &expect)
}

fn check_out(passes: &[JbsqPhv], out: &[JbsqPhv], expect: &[Expect]) -> usize {
    let mut checked = 0;
    for (i, (o, e)) in out.iter().zip(expect).enumerate() {
        let ctx = format!("pass {i}: {:?} -> {o:?}", passes[i]);
        match *e {
            Expect::Fallback(node) => assert_eq!(o.fb_node.index() as u16, node, "{ctx}"),
            Expect::Read(slot, last) => assert_eq!(
                (o.slot.index() as u16, o.last.index() as u16),
                (slot, last),
                "{ctx}"
            ),
            Expect::Nothing => continue,
        }
        checked += 1;
    }
    checked
}

fn pool_cfg(base: u16, k: u8, queue_base: u32, queue_slots: u32) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base: u32::from(base) * 16,
        ring_slots: 16,
        queue_base,
        queue_slots,
        fallback: Fallback::Random,
        advertise: Advertise::Idle,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: None,
    }
}

#[test]
fn a_removal_moves_the_last_member_into_the_freed_slot_back_to_back() {
    let mut d = Driver::new(SIZES, 8);
    d.configure(1, pool_cfg(8, 1, 0, 1));
    for node in [20, 21, 22, 23, 24] {
        d.add(1, node, None, 0);
    }
    // A middle member, the last one, the first one: each read right before its removal and
    // right after the one before (the slot just written is read back at once).
    d.remove(1, 22);
    d.remove(1, 23);
    d.remove(1, 20);
    d.add(1, 22, None, 0);
    d.remove(1, 24);
    // Tasks over the bound go to the model's samples among what is left.
    for seq in 0..6 {
        d.task(1, seq);
    }
    d.drain();
    // Four reads, the fallbacks, the sweep (8 member slots, 64 nodes).
    let fallbacks = d
        .steps
        .iter()
        .filter(|s| matches!(s.result.placement, Some(Placement::Fallback { .. })))
        .count();
    assert!(fallbacks >= 2, "{fallbacks}");
    assert_eq!(check(&d, &[1], 1), 4 + fallbacks + 8 + 64);
    assert_eq!(check_behind_pool_cfg(&d, 8), 4 + fallbacks);
}

#[test]
fn random_traffic_with_removals_sends_every_fallback_to_the_models_member() {
    let mut d = Driver::new(SIZES, 0xb0b);
    d.configure(1, pool_cfg(8, 1, 0, 2));
    d.configure(2, pool_cfg(16, 2, 8, 2));
    for node in [20, 21, 22, 23] {
        d.add(1, node, None, 0);
    }
    d.add(2, 30, None, 0);
    d.add(2, 31, Some(1), 0);
    d.random_traffic(
        0xf00d,
        3000,
        &[(1, &[20, 21, 22, 23]), (2, &[30, 31])],
        60,
        9,
    );
    let fallbacks = d
        .steps
        .iter()
        .filter(|s| matches!(s.result.placement, Some(Placement::Fallback { .. })))
        .count();
    let removals = d.steps.iter().filter(|s| s.pass.is_ctl_remove).count();
    let checked = check(&d, &[1, 2], 1);
    assert_eq!(check_behind_pool_cfg(&d, 0xb0b), checked - 16 - 64);
    println!(
        "random: {} passes, {checked} checked, {fallbacks} fallbacks, {removals} removals",
        d.steps.len()
    );
    assert!(
        fallbacks > 100 && removals > 30,
        "{fallbacks} fallbacks, {removals} removals"
    );
}

/// The stages at the preset's size (4,096 node slots) are lint clean and within the depth
/// target.
#[test]
fn members_stages_are_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.nodes == 1 << 12);
    for (name, r) in [
        (
            "members",
            lint_and_synth("jbsq_members", MembersStage::<12>::default()),
        ),
        (
            "memberSlot",
            lint_and_synth("jbsq_member_slot", MemberSlotStage::<12>::default()),
        ),
    ] {
        println!("{name}: {r:#}");
        assert!(
            r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
            "{name}: {r:#}"
        );
    }
}
