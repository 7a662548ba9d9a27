//! The JBSQ leaf's worker counts in hardware (`horus_pipeline::jbsq::outstanding`) against the
//! model's (`JbsqLeaf`'s `outstanding`): the model runs node additions and removals, tasks
//! (placed by a token, stale tokens retried, sent over a bound), replies (with or without a
//! release) and returned places; every pass that touches the table runs, one per clock, through
//! the stage, with what the stages before hand on read off the model. Each pass must leave with
//! the model's verdict: a stale token, a reply's count left and whether its place returns in a
//! second pass, a removal's lost tasks.

mod jbsq_common;

use horus_model::rng::Xorshift64;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_model::wire::{HorusHeader, PacketType};
use horus_pipeline::jbsq::outstanding::OutstandingStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use jbsq_common::{b16, lint_and_synth};

/// `2^N` nodes: `JbsqSizes::SMALL`.
const N: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.nodes as usize == 1 << N);

const CLIENT: u16 = 0xFFFF;

/// What a pass must show.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Stale(bool),
    /// A reply: tasks left, the place returns.
    Reply(u16, bool),
    Lost(u16),
    Nothing,
}

struct Run {
    leaf: JbsqLeaf,
    passes: Vec<JbsqPhv>,
    expect: Vec<Expect>,
    pending: Vec<JbsqResubmit>,
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

impl Run {
    fn new() -> Run {
        Run {
            leaf: JbsqLeaf::new(SIZES, 11),
            passes: Vec::new(),
            expect: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn push(&mut self, p: JbsqPhv, e: Expect) {
        self.passes.push(JbsqPhv { live: true, ..p });
        self.expect.push(e);
    }

    fn add(&mut self, pool: u16, node: u16, k: Option<u8>, tasks: u16) {
        let generation = self.leaf.tables().node_cfg[usize::from(node)].generation;
        self.leaf.add_node(pool, node, k, tasks).unwrap();
        let p = JbsqPhv {
            is_ctl_add: true,
            pool: b16(pool),
            src: b16(node),
            generation: u64::from(generation).into(),
            tasks: b16(tasks),
            ..Default::default()
        };
        self.push(p, Expect::Nothing);
    }

    fn remove(&mut self, pool: u16, node: u16) {
        let lost = self.leaf.tables().outstanding[usize::from(node)].tasks;
        self.leaf.remove_node(pool, node).unwrap();
        let p = JbsqPhv {
            is_ctl_remove: true,
            pool: b16(pool),
            src: b16(node),
            ..Default::default()
        };
        self.push(p, Expect::Lost(lost));
    }

    /// A task's pass: the stage sees it when it popped a token or went over a bound.
    fn task_pass(&mut self, pool: u16, pass: impl FnOnce(&mut JbsqLeaf) -> JbsqResult) {
        let t = self.leaf.tables();
        let q = t.queue_ctl[usize::from(pool)];
        let pc = t.pool_cfg[usize::from(pool)].unwrap();
        let token = (0..LEVELS)
            .find(|&j| q.ring_count[j] > 0)
            .filter(|_| pc.n > 0)
            .map(|j| {
                let c = pc.cfg;
                t.rings[c.ring_base as usize
                    + j * usize::from(c.ring_slots)
                    + usize::from(q.ring_head[j])]
            });
        let r = pass(&mut self.leaf);
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
        let mut p = JbsqPhv {
            is_task: true,
            pool: b16(pool),
            ..Default::default()
        };
        match (token, r.placement) {
            (Some(tok), _) => {
                p.pop = true;
                p.tok_node = b16(tok.node);
                p.tok_gen = u64::from(tok.generation).into();
                let stale = matches!(r.resubmit, Some(JbsqResubmit::Retry { .. }));
                self.push(p, Expect::Stale(stale));
            }
            (None, Some(Placement::Fallback { node })) => {
                p.fallback = true;
                p.fb_node = b16(node);
                self.push(p, Expect::Stale(false));
            }
            _ => {}
        }
    }

    fn task(&mut self, pool: u16, seq: u16) {
        let h = header(PacketType::NewTask, pool, CLIENT, seq);
        self.task_pass(pool, |l| l.packet(h, 64, 0));
    }

    fn reply(&mut self, pool: u16, node: u16) {
        let t = self.leaf.tables();
        let nc = t.node_cfg[usize::from(node)];
        let ok = nc.active && nc.pool == pool;
        let left = t.outstanding[usize::from(node)].tasks.saturating_sub(1);
        let r = self
            .leaf
            .packet(header(PacketType::TaskDone, pool, node, 0), 64, 0);
        let returns = matches!(r.resubmit, Some(JbsqResubmit::ReturnPlace { .. }));
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
        let p = JbsqPhv {
            is_reply: true,
            drop: !ok,
            pool: b16(pool),
            src: b16(node),
            k: b16(nc.k),
            release: r.release.is_some(),
            ..Default::default()
        };
        self.push(
            p,
            if ok {
                Expect::Reply(left, returns)
            } else {
                Expect::Nothing
            },
        );
    }

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
                ..
            } => {
                let nc = self.leaf.tables().node_cfg[usize::from(node)];
                let ok = nc.active && nc.pool == pool && nc.generation == generation;
                let r = self.leaf.resubmit(rs);
                let p = JbsqPhv {
                    is_return: true,
                    drop: !ok,
                    pool: b16(pool),
                    src: b16(node),
                    release: r.release.is_some(),
                    ..Default::default()
                };
                self.push(p, Expect::Nothing);
            }
        }
    }

    /// Runs the passes through the stage, back to back, checks each, and checks the counts the
    /// stage ends with through one more reply per node (its `left`).
    fn check(mut self, nodes: &[(u16, u16)]) -> usize {
        for &(pool, node) in nodes {
            self.reply(pool, node);
        }
        let out = jbsq_common::run(OutstandingStage::<N>::default(), self.passes.clone(), 2);
        let mut checked = 0;
        for (i, (o, e)) in out.iter().zip(&self.expect).enumerate() {
            let ctx = format!("pass {i}: {:?}", self.passes[i]);
            match *e {
                Expect::Stale(s) => assert_eq!(o.stale, s, "{ctx}"),
                Expect::Reply(left, returns) => {
                    assert_eq!((o.left.index() as u16, o.returns), (left, returns), "{ctx}")
                }
                Expect::Lost(lost) => assert_eq!(o.lost.index() as u16, lost, "{ctx}"),
                Expect::Nothing => continue,
            }
            checked += 1;
        }
        checked
    }
}

fn pool_cfg(base: u16, k: u8, queue_base: u32, queue_slots: u32, fallback: Fallback) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base: u32::from(base) * 32,
        ring_slots: 32,
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
fn each_task_placed_counts_at_its_worker_and_each_reply_uncounts_it_back_to_back() {
    let mut r = Run::new();
    r.leaf
        .configure_pool(1, pool_cfg(8, 2, 0, 2, Fallback::Random))
        .unwrap();
    r.add(1, 20, None, 0);
    // Two places, two held, then over the bound (fallback) on the one worker: its count goes
    // 1, 2, 3, 4 pass after pass on one entry.
    for seq in 0..5 {
        r.task(1, seq);
    }
    // Replies release the held tasks (count kept), then come down; the last returns its place.
    for _ in 0..5 {
        r.reply(1, 20);
    }
    while !r.pending.is_empty() {
        r.again();
    }
    r.task(1, 5);
    // Two pops and a fallback, five replies, the last task's pop, the closing reply.
    assert_eq!(r.check(&[(1, 20)]), 10);
}

#[test]
fn a_removed_workers_tokens_are_stale_and_its_tasks_lost() {
    let mut r = Run::new();
    r.leaf
        .configure_pool(2, pool_cfg(16, 2, 8, 4, Fallback::Drop))
        .unwrap();
    r.add(2, 30, None, 0);
    r.add(2, 31, None, 0);
    r.task(2, 0);
    r.task(2, 1);
    r.remove(2, 30);
    for seq in 2..6 {
        r.task(2, seq);
        while !r.pending.is_empty() {
            r.again();
        }
    }
    // Added again with a prefilled count: a new generation.
    r.add(2, 30, None, 1);
    r.task(2, 6);
    r.reply(2, 30);
    // Node 30's second token is popped after its removal: stale, the task retries.
    let stale = r
        .expect
        .iter()
        .filter(|e| **e == Expect::Stale(true))
        .count();
    assert_eq!(stale, 1);
    // Five pops (one stale), the removal's lost task, three replies.
    assert_eq!(r.check(&[(2, 30), (2, 31)]), 9);
}

#[test]
fn random_traffic_on_two_pools_matches_the_models_counts() {
    let mut r = Run::new();
    r.leaf
        .configure_pool(1, pool_cfg(8, 2, 0, 6, Fallback::Random))
        .unwrap();
    r.leaf
        .configure_pool(2, pool_cfg(16, 3, 8, 3, Fallback::Random))
        .unwrap();
    for node in [20, 21, 22] {
        r.add(1, node, None, 0);
    }
    r.add(2, 30, None, 0);
    r.add(2, 31, Some(1), 0);
    let mut rng = Xorshift64::new(0xbead);
    let mut seq = 0u16;
    for i in 0..2500 {
        let x = rng.next_u64();
        let pool = 1 + (x & 1) as u16;
        if i % 500 == 250 {
            // A worker leaves and comes back.
            r.remove(1, 21);
            r.add(1, 21, None, 0);
            continue;
        }
        match (x >> 8) % 16 {
            0..=4 if !r.pending.is_empty() => r.again(),
            0..=8 => {
                seq = seq.wrapping_add(1);
                r.task(pool, seq);
            }
            9..=14 => {
                let node = if pool == 1 {
                    20 + (x >> 16) % 3
                } else {
                    30 + (x >> 16) % 2
                };
                r.reply(pool, node as u16);
            }
            _ => r.reply(pool, if pool == 1 { 30 } else { 20 }),
        }
    }
    while !r.pending.is_empty() {
        r.again();
    }
    let stale = r
        .expect
        .iter()
        .filter(|e| **e == Expect::Stale(true))
        .count();
    let checked = r.check(&[(1, 20), (1, 21), (1, 22), (2, 30), (2, 31)]);
    println!("random: {checked} checked, {stale} stale");
    assert!(
        checked > 1500 && stale > 0,
        "{checked} checked, {stale} stale"
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
