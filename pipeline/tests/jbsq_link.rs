//! The JBSQ leaf's link rule in hardware (`horus_pipeline::jbsq::link::LinkStage`) against the
//! model's (`JbsqLeaf`'s `link` table and the idle messages it sends): the model runs
//! configurations, node additions (a control pass per free place), tasks (from clients and from
//! the pool's spine, with its flag), replies, their returned places, retries and removals; each
//! pass enters the stage, one per clock, with what the model's `queueCtl` did (a pop, a push, a
//! release), the depth and level-0 count it left, and the pool's parameters, as the stages
//! before hand them on. Every pass must leave with the model's idle message (idleAdd,
//! idleRemove, or none; a repair where the model counted one). A node's places are added by
//! several control passes in one model call: there the stage's messages over those passes must
//! be the model's first message and its counts.

mod jbsq_common;

use horus_model::rng::Xorshift64;
use horus_model::sched::Signal;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::{HorusHeader, PacketType};
use horus_pipeline::jbsq::link::LinkStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::{b16, lint_and_synth};

/// `2^P` pools: `JbsqSizes::SMALL`.
const P: usize = 2;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.pools as usize == 1 << P);

const CLIENT: u16 = 0xFFFF;
const SPINE: SpineRef = SpineRef { id: 900, node: 7 };

/// What a pass must leave the stage with: (idleAdd, idleRemove, repair).
type Said = (bool, bool, bool);

/// The passes of one model call, and what they must say: each pass's message, or (control
/// passes adding a node's places) the first message and the counts over the group.
enum Expect {
    Each(Vec<Said>),
    Group {
        first: Option<Signal>,
        adds: u64,
        removes: u64,
    },
}

struct Run {
    leaf: JbsqLeaf,
    passes: Vec<JbsqPhv>,
    groups: Vec<(usize, Expect)>,
    pending: Vec<JbsqResubmit>,
    time: u32,
}

impl Run {
    /// Time starts `start` microseconds: near the wrap, the stage's compares must wrap as the
    /// model's differences do.
    fn new(start: u32) -> Run {
        Run {
            leaf: JbsqLeaf::new(SIZES, 5),
            passes: Vec::new(),
            groups: Vec::new(),
            pending: Vec::new(),
            time: start,
        }
    }

    fn cfg(&self, pool: u16) -> JbsqPool {
        self.leaf.tables().pool_cfg[usize::from(pool)].unwrap().cfg
    }

    /// A pass of `pool` as `poolCfg` and `queueCtl` hand it on, after the model ran it.
    fn pass(&self, pool: u16) -> JbsqPhv {
        let cfg = self.cfg(pool);
        let q = self.leaf.tables().queue_ctl[usize::from(pool)];
        let (adv_places, adv_queue, room) = match cfg.advertise {
            Advertise::Idle => (false, false, 0),
            Advertise::Places => (true, false, 0),
            Advertise::Queue { room } => (false, true, room),
        };
        JbsqPhv {
            live: true,
            pool: b16(pool),
            time: u64::from(self.time).into(),
            spine_ok: cfg.spine.is_some(),
            spine_id: b16(cfg.spine.map_or(0, |s| s.id)),
            adv_places,
            adv_queue,
            room: b16(room),
            link_at: b16(cfg.params.link_at),
            unlink_at: b16(cfg.params.unlink_at),
            hold_us: b16(cfg.hold_us),
            repair_gap: b16(cfg.params.repair_gap_us),
            idle: b16(q.ring_count[0]),
            depth: b16(q.depth),
            ..Default::default()
        }
    }

    fn said(&self, r: &JbsqResult, repairs_before: u64) -> Said {
        let s = r.signal.map(|s| s.0);
        (
            s == Some(Signal::IdleAdd),
            s == Some(Signal::IdleRemove),
            self.leaf.counters().idle_repairs > repairs_before,
        )
    }

    fn push(&mut self, p: JbsqPhv, said: Said) {
        self.passes.push(p);
        self.groups.push((1, Expect::Each(vec![said])));
    }

    fn configure(&mut self, pool: u16, cfg: JbsqPool) {
        self.leaf.configure_pool(pool, cfg).unwrap();
        let mut p = self.pass(pool);
        p.is_ctl_pool = true;
        self.push(p, (false, false, false));
    }

    /// Adds `node`: the node's pass, then a control pass for each free place, pushed into its
    /// ring unless the ring is full.
    fn add(&mut self, pool: u16, node: u16, k: Option<u8>) {
        let cfg = self.cfg(pool);
        let k = k.unwrap_or(cfg.k);
        let mut q = self.leaf.tables().queue_ctl[usize::from(pool)];
        let before = *self.leaf.counters();
        let first = self
            .leaf
            .add_node(pool, node, Some(k), 0)
            .unwrap()
            .map(|s| s.0);
        let mut p = self.pass(pool);
        p.idle = b16(q.ring_count[0]);
        p.is_ctl_add = true;
        p.src = b16(node);
        self.passes.push(p);
        for place in 0..u16::from(k) {
            let j = level_of(place, k);
            let mut p = self.pass(pool);
            p.is_ctl_place = true;
            p.src = b16(node);
            p.level = (j as u64).into();
            if q.ring_count[j] < cfg.ring_slots {
                q.ring_count[j] += 1;
                p.push = true;
            } else {
                p.overflow = true;
            }
            p.idle = b16(q.ring_count[0]);
            self.passes.push(p);
        }
        assert_eq!(
            self.leaf.tables().queue_ctl[usize::from(pool)].ring_count,
            q.ring_count
        );
        let after = self.leaf.counters();
        self.groups.push((
            1 + usize::from(k),
            Expect::Group {
                first,
                adds: after.sent_idle_add - before.sent_idle_add,
                removes: after.sent_idle_remove - before.sent_idle_remove,
            },
        ));
    }

    fn remove(&mut self, pool: u16, node: u16) {
        self.leaf.remove_node(pool, node).unwrap();
        let mut p = self.pass(pool);
        p.is_ctl_remove = true;
        p.src = b16(node);
        self.push(p, (false, false, false));
    }

    fn tick(&mut self, us: u32) {
        self.time = self.time.wrapping_add(us);
    }

    /// A task's pass: a first pass (from a client, or from the pool's spine with its flag), or
    /// a retry.
    fn task_pass(
        &mut self,
        pool: u16,
        src: u16,
        retry: bool,
        run: impl FnOnce(&mut JbsqLeaf, u32) -> JbsqResult,
    ) {
        let popped = {
            let t = self.leaf.tables();
            let n = t.pool_cfg[usize::from(pool)].map_or(0, |pc| pc.n);
            n > 0
                && t.queue_ctl[usize::from(pool)]
                    .ring_count
                    .iter()
                    .any(|&c| c > 0)
        };
        let repairs = self.leaf.counters().idle_repairs;
        let time = self.time;
        let r = run(&mut self.leaf, time);
        let mut p = self.pass(pool);
        p.is_task = true;
        p.is_retry = retry;
        p.src = b16(src);
        p.drop = matches!(r.drop, Some(JbsqDrop::UnknownPool | JbsqDrop::EmptyPool));
        p.pop = popped && !p.drop;
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
        let said = self.said(&r, repairs);
        self.push(p, said);
    }

    fn task(&mut self, pool: u16, seq: u16) {
        let h = header(PacketType::NewTask, pool, CLIENT, seq, 0);
        self.task_pass(pool, CLIENT, false, |l, t| l.packet(h, 64, t));
    }

    /// A task the pool's spine sent, its flag (`qlen`) set or not.
    fn spine_task(&mut self, pool: u16, seq: u16, flag: bool) {
        let h = header(PacketType::NewTask, pool, SPINE.id, seq, u16::from(flag));
        self.task_pass(pool, SPINE.id, false, |l, t| l.packet(h, 64, t));
        self.passes.last_mut().unwrap().qlen = b16(u16::from(flag));
    }

    fn reply(&mut self, pool: u16, node: u16) {
        let repairs = self.leaf.counters().idle_repairs;
        let r = self.leaf.packet(
            header(PacketType::TaskDone, pool, node, 0, 0),
            64,
            self.time,
        );
        let mut p = self.pass(pool);
        p.is_reply = true;
        p.src = b16(node);
        p.drop = r.drop.is_some();
        p.release = r.release.is_some();
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
        let said = self.said(&r, repairs);
        self.push(p, said);
    }

    /// Feeds back the oldest second pass handed out. A returned place carries its reply's time,
    /// as the pass the core resubmits does.
    fn again(&mut self) {
        let rs = self.pending.remove(0);
        match rs {
            JbsqResubmit::Retry { task } => {
                let (pool, src) = (task.header.pool_id, task.header.src_id);
                self.task_pass(pool, src, true, |l, _| l.resubmit(rs));
            }
            JbsqResubmit::ReturnPlace {
                pool,
                node,
                level,
                time_us,
                ..
            } => {
                let before = self.leaf.tables().queue_ctl[usize::from(pool)];
                let repairs = self.leaf.counters().idle_repairs;
                let r = self.leaf.resubmit(rs);
                let touched = self.leaf.last_pass_stages().contains(&JbsqStage::QueueCtl);
                let after = self.leaf.tables().queue_ctl[usize::from(pool)];
                let j = usize::from(level);
                let mut p = self.pass(pool);
                p.time = u64::from(time_us).into();
                p.is_return = true;
                p.src = b16(node);
                p.level = u64::from(level).into();
                p.drop = !touched;
                p.release = r.release.is_some();
                p.push = after.ring_count[j] == before.ring_count[j] + 1;
                p.overflow = touched && !p.release && !p.push;
                let said = self.said(&r, repairs);
                self.push(p, said);
            }
        }
    }

    /// Feeds back every second pass handed out.
    fn drain(&mut self) {
        while !self.pending.is_empty() {
            self.again();
        }
    }

    /// Runs every pass through the stage, back to back, and checks what each said. Returns the
    /// idleAdds, idleRemoves and repairs the stage sent.
    fn check(self) -> (usize, usize, usize) {
        let out = jbsq_common::run(LinkStage::<P>::default(), self.passes.clone(), 2);
        let mut i = 0;
        let mut sent = (0, 0, 0);
        for (n, expect) in &self.groups {
            let said: Vec<Said> = out[i..i + n]
                .iter()
                .map(|o| (o.idle_add, o.idle_remove, o.repair))
                .collect();
            for s in &said {
                sent.0 += usize::from(s.0);
                sent.1 += usize::from(s.1);
                sent.2 += usize::from(s.2);
            }
            match expect {
                Expect::Each(want) => {
                    assert_eq!(
                        &said,
                        want,
                        "passes {i}..{}: {:?}",
                        i + n,
                        &self.passes[i..i + n]
                    )
                }
                Expect::Group {
                    first,
                    adds,
                    removes,
                } => {
                    let got_first = said.iter().find_map(|s| match s {
                        (true, _, _) => Some(Signal::IdleAdd),
                        (_, true, _) => Some(Signal::IdleRemove),
                        _ => None,
                    });
                    let count = |f: fn(&Said) -> bool| said.iter().filter(|s| f(s)).count() as u64;
                    assert_eq!(
                        (got_first, count(|s| s.0), count(|s| s.1)),
                        (*first, *adds, *removes),
                        "passes {i}..{}",
                        i + n
                    );
                }
            }
            i += n;
        }
        assert_eq!(i, out.len());
        sent
    }
}

fn header(pkt_type: PacketType, pool: u16, src_id: u16, seq_num: u16, qlen: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id,
        dst_id: 0,
        qlen,
        seq_num,
    }
}

fn pool_cfg(base: u16, k: u8, ring_base: u32, advertise: Advertise) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base,
        ring_slots: 16,
        queue_base: u32::from(base),
        queue_slots: 4,
        fallback: Fallback::Random,
        advertise,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: Some(SPINE),
    }
}

#[test]
fn an_idle_pool_links_when_a_worker_frees_and_unlinks_when_the_last_is_taken() {
    let mut r = Run::new(1_000);
    r.configure(1, pool_cfg(8, 1, 64, Advertise::Idle));
    r.add(1, 20, None); // its place links the rack (a control pass: at once)
    r.add(1, 21, None);
    for seq in 0..3 {
        r.tick(3);
        r.task(1, seq); // the second takes the last idle worker: idleRemove
    }
    for node in [20, 21] {
        r.tick(3);
        r.reply(1, node); // 20's releases the held task; 21's place returns
        r.drain(); // the place back links the rack again
    }
    assert_eq!(r.check(), (2, 1, 0));
}

/// Decision 35: a retry runs no rule. Three idle workers of `k` 1, two of them removed: the task
/// that pops the first removed worker's place comes back, its retry pops the second's (no idle
/// worker is left: a first pass would unlink, a retry does not) and comes back again to be held;
/// the pool's next task unlinks. A stage that ran the rule on the retry fails the check.
#[test]
fn a_retry_runs_no_rule_and_the_pools_next_task_sends_what_it_changed() {
    let mut r = Run::new(1_000);
    r.configure(1, pool_cfg(8, 1, 64, Advertise::Idle));
    for node in [20, 21, 22] {
        r.add(1, node, None);
    }
    r.remove(1, 21);
    r.remove(1, 22);
    r.tick(3);
    r.task(1, 0); // to 20
    r.tick(3);
    r.task(1, 1); // 21's place: stale, a retry
    r.drain(); // the retry pops 22's, a retry again, then held
    r.tick(3);
    r.task(1, 2); // no idle worker: idleRemove
    assert_eq!(r.check(), (1, 1, 0));
}

#[test]
fn back_to_back_passes_on_one_pool_each_see_the_link_and_count_the_last_left() {
    let mut r = Run::new(50);
    r.configure(2, pool_cfg(16, 2, 128, Advertise::Places));
    r.add(2, 30, None);
    // One pass a clock on one pool: each task takes a place, each place returns at once; the
    // entry (link flag, free places) is forwarded every clock.
    for seq in 0..6 {
        r.task(2, seq);
        r.task(2, seq + 100);
        r.reply(2, 30);
        r.drain();
        r.reply(2, 30);
        r.drain();
    }
    let (adds, removes, _) = r.check();
    assert!(
        adds >= 6 && removes >= 6,
        "{adds} idleAdds, {removes} idleRemoves"
    );
}

#[test]
fn a_held_pool_waits_hold_us_and_a_stale_flag_is_repaired_after_the_gap() {
    let mut r = Run::new(u32::MAX - 40); // the times wrap through 0 below
    let mut cfg = pool_cfg(8, 1, 64, Advertise::Idle);
    cfg.hold_us = 20;
    cfg.params.repair_gap_us = 10;
    r.configure(1, cfg);
    r.add(1, 20, None);
    r.tick(5);
    r.task(1, 0); // unlinks: its stamp starts the hold
    r.tick(5);
    r.reply(1, 20);
    r.drain(); // 5 us later: held, not linked
    for seq in 1..6 {
        r.tick(5);
        // The spine still thinks the rack idle (flag 0) while it is linked or not: a repair
        // once the gap passed.
        r.spine_task(1, seq, seq % 2 == 0);
        r.tick(5);
        r.reply(1, 20);
        r.drain();
    }
    let (adds, removes, repairs) = r.check();
    assert!(
        adds > 0 && removes > 0,
        "{adds} idleAdds, {removes} idleRemoves"
    );
    println!("hold and repair: {adds} idleAdds, {removes} idleRemoves, {repairs} repairs");
}

/// A pool that advertises its idle workers runs the rule when its idle count can change: a
/// returned place of a higher level, while a link waits out the hold, does not link the rack;
/// the next place of level 0 does.
#[test]
fn a_held_link_waits_for_a_place_of_level_0_not_one_of_a_higher_level() {
    let mut r = Run::new(1_000);
    let mut cfg = pool_cfg(8, 2, 64, Advertise::Idle);
    cfg.hold_us = 50;
    r.configure(1, cfg);
    r.add(1, 20, None); // places at levels 0 and 4; linked at once
    r.add(1, 21, None);
    for seq in 0..4 {
        r.tick(1);
        r.task(1, seq); // the second takes the last place of level 0: idleRemove, stamped
    }
    r.tick(3);
    r.reply(1, 20);
    r.drain(); // a place of level 4
    r.tick(1);
    r.reply(1, 20);
    r.drain(); // level 0, but within the hold: not linked
    r.tick(60);
    r.reply(1, 21);
    r.drain(); // level 4, past the hold: still not linked (the idle count did not change)
    r.tick(1);
    r.reply(1, 21);
    r.drain(); // level 0: linked
    assert_eq!(r.check(), (2, 1, 0));
}

/// A pool that advertises its queue runs the rule when a returned place releases a task held
/// meanwhile (decision 25): the queue it empties links the rack, a place being free.
#[test]
fn a_returned_place_that_empties_the_queue_links_a_pool_that_advertises_it() {
    let mut r = Run::new(1_000);
    let mut cfg = pool_cfg(8, 1, 64, Advertise::Queue { room: 2 });
    cfg.hold_us = 50;
    r.configure(1, cfg);
    r.add(1, 20, None); // linked at once
    for seq in 0..3 {
        r.tick(1);
        r.task(1, seq); // one placed, two held: unlinked at room, stamped
    }
    r.tick(100);
    r.reply(1, 20);
    r.tick(1);
    r.reply(1, 20); // both released; the queue empty but no free place
    r.tick(1);
    r.reply(1, 20); // its place returns in a second pass, not yet run
    r.tick(1);
    r.task(1, 3); // held in between
    r.add(1, 21, None); // a free place, while the queue holds one: not linked
    r.drain(); // the returned place releases the held task: the queue empty, linked
    assert_eq!(r.check(), (2, 1, 0));
}

#[test]
fn a_pool_that_advertises_its_queue_unlinks_at_room_and_links_when_it_holds_none() {
    let mut r = Run::new(0);
    r.configure(1, pool_cfg(8, 1, 64, Advertise::Queue { room: 2 }));
    r.add(1, 20, None);
    r.add(1, 21, None);
    for seq in 0..5 {
        r.tick(1);
        r.task(1, seq); // two take places, two are held: unlinked at room
    }
    for node in [20, 21, 20, 21, 20] {
        r.tick(1);
        r.reply(1, node); // releases run the rule for the queue
        r.drain();
    }
    let (adds, removes, _) = r.check();
    assert!(
        adds >= 2 && removes >= 1,
        "{adds} idleAdds, {removes} idleRemoves"
    );
}

#[test]
fn random_traffic_on_three_pools_says_what_the_model_says_pass_for_pass() {
    for (seed, start) in [(0xfeedu64, 0u32), (0xbeef, u32::MAX - 3_000)] {
        let mut r = Run::new(start);
        let mut rng = Xorshift64::new(seed);
        let mut a = pool_cfg(8, 2, 0, Advertise::Idle);
        a.hold_us = 7;
        a.params.repair_gap_us = 4;
        let mut b = pool_cfg(16, 1, 256, Advertise::Queue { room: 2 });
        b.params.link_at = 2;
        b.params.unlink_at = 1;
        b.fallback = Fallback::Drop;
        let mut c = pool_cfg(24, 3, 512, Advertise::Places);
        c.params.link_at = 3;
        c.params.unlink_at = 2;
        c.params.repair_gap_us = 2;
        r.configure(1, a);
        r.configure(2, b);
        r.configure(3, c);
        let nodes = |pool: u16| match pool {
            1 => 20..23u16,
            2 => 30..32,
            _ => 40..43,
        };
        for pool in 1..=3 {
            for node in nodes(pool) {
                r.add(pool, node, None);
            }
        }
        let mut seq = 0u16;
        for _ in 0..3000 {
            let x = rng.next_u64();
            let pool = 1 + (x % 3) as u16;
            r.tick(((x >> 4) % 4) as u32);
            let ns = nodes(pool);
            let node = ns.start + ((x >> 16) % u64::from(ns.end - ns.start)) as u16;
            match (x >> 8) % 32 {
                0..=9 if !r.pending.is_empty() => r.again(),
                0..=15 => {
                    seq = seq.wrapping_add(1);
                    r.task(pool, seq);
                }
                16..=18 => {
                    seq = seq.wrapping_add(1);
                    r.spine_task(pool, seq, x >> 30 & 1 == 1);
                }
                19 if r.leaf.tables().node_cfg[usize::from(node)].active => r.remove(pool, node),
                19 => r.add(pool, node, None),
                _ => r.reply(pool, node),
            }
        }
        r.drain();
        let counters = *r.leaf.counters();
        let (adds, removes, repairs) = r.check();
        println!("seed {seed:#x}: {adds} idleAdds, {removes} idleRemoves, {repairs} repairs");
        assert_eq!(
            (adds as u64, removes as u64, repairs as u64),
            (
                counters.sent_idle_add,
                counters.sent_idle_remove,
                counters.idle_repairs
            )
        );
        assert!(
            adds > 20 && removes > 20 && repairs > 5,
            "{adds} {removes} {repairs}"
        );
    }
}

/// The stage at the preset's 64 pools is lint clean and within the depth target.
#[test]
fn link_stage_is_lint_clean_and_within_the_depth_target_at_the_preset_size() {
    const _: () = assert!(JbsqSizes::DEFAULT.pools == 1 << 6);
    let r = lint_and_synth("jbsq_link", LinkStage::<6>::default());
    println!("link: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
