//! The JBSQ leaf's token table in hardware (`horus_pipeline::jbsq::ring::RingStage`) against the
//! model's (`JbsqLeaf`'s `rings`): the model runs configurations, node additions (a control pass
//! per free place), tasks, replies and their returned places, removals; each pass that takes or
//! puts a token runs, one per clock, through the stage, its entry (`ring_at`) as the model's
//! `queueCtl` chose it. Every token a pass takes must be the model's token at that entry, so
//! every token put must have landed where the model put it.

mod jbsq_common;

use horus_model::rng::Xorshift64;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_model::wire::{HorusHeader, PacketType};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::ring::RingStage;
use jbsq_common::{b16, lint_and_synth};

/// `2^R` ring entries: `JbsqSizes::SMALL`.
const R: usize = 10;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.ring_entries as usize == 1 << R);

const CLIENT: u16 = 0xFFFF;

/// The model's leaf, and the passes that touch the ring with the token each pop must see.
struct Run {
    leaf: JbsqLeaf,
    passes: Vec<JbsqPhv>,
    /// For each pass: the token the model holds at its entry before it (what a pop takes).
    expect: Vec<Option<Token>>,
    pending: Vec<JbsqResubmit>,
    pops: usize,
    pushes: usize,
}

impl Run {
    fn new() -> Run {
        Run {
            leaf: JbsqLeaf::new(SIZES, 3),
            passes: Vec::new(),
            expect: Vec::new(),
            pending: Vec::new(),
            pops: 0,
            pushes: 0,
        }
    }

    fn cfg(&self, pool: u16) -> JbsqPool {
        self.leaf.tables().pool_cfg[usize::from(pool)].unwrap().cfg
    }

    fn queue(&self, pool: u16) -> QueueCtl {
        self.leaf.tables().queue_ctl[usize::from(pool)]
    }

    /// Records a pass on entry `level · ring_slots + at` of `pool`'s rings.
    fn record(&mut self, pool: u16, level: usize, at: u16, push: Option<Token>) {
        let cfg = self.cfg(pool);
        let ring_at = level as u64 * u64::from(cfg.ring_slots) + u64::from(at);
        let index = cfg.ring_base as usize + ring_at as usize;
        let mut p = JbsqPhv {
            live: true,
            pool: b16(pool),
            ring_base: b16(cfg.ring_base),
            ring_at: b16(ring_at),
            ..Default::default()
        };
        match push {
            Some(t) => {
                p.push = true;
                p.src = b16(t.node);
                p.generation = u64::from(t.generation).into();
                self.expect.push(None);
                self.pushes += 1;
            }
            None => {
                p.pop = true;
                self.expect.push(Some(self.leaf.tables().rings[index]));
                self.pops += 1;
            }
        }
        self.passes.push(p);
    }

    fn configure(&mut self, pool: u16, cfg: JbsqPool) {
        self.leaf.configure_pool(pool, cfg).unwrap();
    }

    /// Adds `node`: its control passes put a token for each free place, in its ring
    /// (`level_of`), at the ring's tail.
    fn add(&mut self, pool: u16, node: u16, k: Option<u8>) {
        let cfg = self.cfg(pool);
        let k = k.unwrap_or(cfg.k);
        let generation = self.leaf.tables().node_cfg[usize::from(node)].generation;
        let mut q = self.queue(pool);
        let mut puts = Vec::new();
        for place in 0..u16::from(k) {
            let j = level_of(place, k);
            if q.ring_count[j] < cfg.ring_slots {
                let at = (u32::from(q.ring_head[j]) + u32::from(q.ring_count[j]))
                    % u32::from(cfg.ring_slots);
                q.ring_count[j] += 1;
                puts.push((j, at as u16));
            }
        }
        self.leaf.add_node(pool, node, Some(k), 0).unwrap();
        // The places went where the model put them.
        assert_eq!(self.queue(pool).ring_count, q.ring_count);
        for (j, at) in puts {
            self.record(pool, j, at, Some(Token { node, generation }));
        }
    }

    /// A task's pass (a first pass, or a retry): it pops the oldest token of the lowest ring
    /// that holds one.
    fn task_pass(&mut self, pool: u16, pass: impl FnOnce(&mut JbsqLeaf) -> JbsqResult) {
        let q = self.queue(pool);
        let n = self.leaf.tables().pool_cfg[usize::from(pool)].unwrap().n;
        let level = (0..LEVELS).find(|&j| q.ring_count[j] > 0).filter(|_| n > 0);
        if let Some(j) = level {
            self.record(pool, j, q.ring_head[j], None);
        }
        let r = pass(&mut self.leaf);
        match (level, r.placement) {
            (Some(j), Some(Placement::Token { node, level })) => {
                assert_eq!(usize::from(level), j);
                assert_eq!(self.expect.last().unwrap().unwrap().node, node);
            }
            (Some(_), _) => assert!(matches!(r.resubmit, Some(JbsqResubmit::Retry { .. }))),
            (None, _) => {}
        }
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
    }

    fn task(&mut self, pool: u16, seq: u16) {
        let h = header(PacketType::NewTask, pool, CLIENT, seq);
        self.task_pass(pool, |l| l.packet(h, 64, u32::from(seq)));
    }

    fn reply(&mut self, pool: u16, node: u16) {
        let r = self
            .leaf
            .packet(header(PacketType::TaskDone, pool, node, 0), 64, 0);
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
    }

    /// Feeds back the oldest second pass handed out: a retry pops; a returned place pushes
    /// when nothing is held and its ring has room.
    fn again(&mut self) {
        let rs = self.pending.remove(0);
        match rs {
            JbsqResubmit::Retry { task } => {
                let pool = task.header.pool_id;
                self.task_pass(pool, |l| l.resubmit(rs));
            }
            JbsqResubmit::ReturnPlace {
                pool,
                node,
                generation,
                level,
                ..
            } => {
                let j = usize::from(level);
                let q = self.queue(pool);
                let r = self.leaf.resubmit(rs);
                if self.queue(pool).ring_count[j] == q.ring_count[j] + 1 {
                    let slots = u32::from(self.cfg(pool).ring_slots);
                    let at = (u32::from(q.ring_head[j]) + u32::from(q.ring_count[j])) % slots;
                    self.record(pool, j, at as u16, Some(Token { node, generation }));
                } else {
                    assert!(
                        r.release.is_some()
                            || q.ring_count[j] == self.cfg(pool).ring_slots
                            || r == JbsqResult::default()
                    );
                }
            }
        }
    }

    /// Runs the recorded passes through the stage, back to back, and checks every pop.
    fn check(self) -> (usize, usize) {
        let out = jbsq_common::run(RingStage::<R>::default(), self.passes.clone(), 2);
        for (i, (o, e)) in out.iter().zip(&self.expect).enumerate() {
            if let Some(t) = e {
                assert_eq!(
                    (o.tok_node.index() as u16, o.tok_gen.index() as u8),
                    (t.node, t.generation),
                    "pass {i}: {:?}",
                    self.passes[i]
                );
            }
        }
        (self.pops, self.pushes)
    }
}

fn header(pkt_type: PacketType, pool: u16, src_id: u16, seq_num: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id,
        dst_id: 0,
        qlen: 0,
        seq_num,
    }
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
    let mut r = Run::new();
    r.configure(1, pool_cfg(8, 1, 64, 4));
    r.add(1, 20, None);
    // Each task takes the worker's one place; its reply returns the place (a second pass, fed
    // back at once) and the next task takes it, the pass right behind: the entry is forwarded.
    for seq in 0..6 {
        r.task(1, seq);
        r.reply(1, 20);
        r.again();
    }
    r.task(1, 6);
    assert_eq!(r.check(), (7, 7));
}

#[test]
fn tokens_leave_the_lowest_ring_first_in_the_order_their_places_freed() {
    let mut r = Run::new();
    r.configure(2, pool_cfg(16, 3, 200, 8));
    for node in [30, 31, 32] {
        r.add(2, node, None);
    }
    // Nine places over three levels (k = 3: places 0, 1, 2 in levels 0, 2, 5).
    for seq in 0..9 {
        r.task(2, seq);
    }
    for node in [31, 30, 32, 31] {
        r.reply(2, node);
        r.again();
    }
    for seq in 9..13 {
        r.task(2, seq);
    }
    assert_eq!(r.check(), (13, 9 + 4));
}

#[test]
fn a_removed_workers_tokens_are_taken_as_they_were_put() {
    let mut r = Run::new();
    r.configure(1, pool_cfg(8, 2, 64, 4));
    r.add(1, 20, None);
    r.add(1, 21, None);
    r.leaf.remove_node(1, 20).unwrap();
    // Node 20's places are stale: a task that pops one retries (its generation differs from
    // node 20's now); the retry pops the next.
    for seq in 0..4 {
        r.task(1, seq);
        while !r.pending.is_empty() {
            r.again();
        }
    }
    r.add(1, 20, None);
    r.task(1, 4);
    r.task(1, 5);
    assert_eq!(r.leaf.counters().stale_tokens, 2);
    // Two tasks each pop a stale token and then a live one; two are held (no token left); the
    // re-added node's two places are taken by the last two.
    assert_eq!(r.check(), (6, 6));
}

#[test]
fn random_traffic_on_two_pools_takes_every_token_where_the_model_put_it() {
    let mut r = Run::new();
    r.configure(1, pool_cfg(8, 2, 0, 8));
    r.configure(2, pool_cfg(16, 5, 512, 6));
    for node in [20, 21, 22] {
        r.add(1, node, None);
    }
    r.add(2, 30, None);
    r.add(2, 31, Some(2));
    let mut rng = Xorshift64::new(0xfeed);
    let mut seq = 0u16;
    for _ in 0..2500 {
        let x = rng.next_u64();
        let pool = 1 + (x & 1) as u16;
        match (x >> 8) % 16 {
            0..=4 if !r.pending.is_empty() => r.again(),
            0..=8 => {
                seq = seq.wrapping_add(1);
                r.task(pool, seq);
            }
            _ => {
                let node = if pool == 1 {
                    20 + (x >> 16) % 3
                } else {
                    30 + (x >> 16) % 2
                };
                r.reply(pool, node as u16);
            }
        }
    }
    while !r.pending.is_empty() {
        r.again();
    }
    let (pops, pushes) = r.check();
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
