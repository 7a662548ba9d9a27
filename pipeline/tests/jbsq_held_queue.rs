//! The JBSQ leaf's `queueCtl` (its token rings and held queue) and `taskBuf` in hardware
//! (`horus_pipeline::jbsq`, chained) against the model's tables
//! (`horus_model::sched::jbsq::JbsqLeaf`): the same passes run through the model and, one per
//! clock, through the stages; every pass must leave the stages with the model's decision (a token
//! taken or a place put at the model's entry, a place dropped on a full ring, held at its depth,
//! released with the model's task, region full) and the pool's queue as the model left it. The
//! passes the model hands out (a reply's second pass, a retry) are fed back as the core would, at
//! once or later.

mod jbsq_common;

use horus_model::rng::Xorshift64;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::Params;
use horus_model::wire::{HorusHeader, PacketType};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::queue_ctl::QueueCtlStage;
use horus_pipeline::jbsq::task_buf::TaskBufStage;
use horus_pipeline::jbsq::{JbsqIn, JbsqOut, JbsqPort};
use jbsq_common::{b16, lint_and_synth};
use rust_hdl::prelude::*;

/// `2^P` pools and `2^B` buffer slots: `JbsqSizes::SMALL`.
const P: usize = 2;
const B: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const _: () = assert!(SIZES.pools as usize == 1 << P && SIZES.buffer_slots as usize == 1 << B);

/// The two stages, `taskBuf` right behind `queueCtl` (in the leaf, five stages sit between:
/// passes reach `taskBuf` one per clock all the same).
#[derive(LogicBlock)]
struct HeldQueue {
    clock: Signal<In, Clock>,
    port: JbsqPort,
    ctl: QueueCtlStage<P>,
    buf: TaskBufStage<B>,
}

impl HeldQueue {
    fn new() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            ctl: QueueCtlStage::new(SIZES),
            buf: Default::default(),
        }
    }
}

impl Logic for HeldQueue {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, ctl, buf);
        JbsqIn::link(&mut self.port.up, &mut self.ctl.port.up);
        JbsqOut::join(&mut self.ctl.port.down, &mut self.buf.port.up);
        JbsqOut::link(&mut self.port.down, &mut self.buf.port.down);
    }
}

horus_pipeline::impl_jbsq_stage!([] HeldQueue);

/// Cycles from a pass presented as `early` to its leaving the two stages.
const LATENCY: usize = 3;

fn run(passes: Vec<JbsqPhv>) -> Vec<JbsqPhv> {
    jbsq_common::run(HeldQueue::new(), passes, LATENCY)
}

/// One pass, as the model and the stages each take it.
#[derive(Clone, Copy, Debug)]
enum Pass {
    /// A packet: its header, its length and its arrival time.
    Packet(HorusHeader, u16, u32),
    /// A second pass the model handed out.
    Again(JbsqResubmit),
    /// Control: configure a pool.
    Configure(u16, JbsqPool),
}

/// What the stages must show for a pass, from the model.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Expect {
    held: bool,
    release: Option<HeldTask>,
    buf_full: bool,
    /// The pool's queue after the pass (depth, greatest depth); `None` for a pool out of range.
    queue: Option<(u64, u64)>,
    /// A held task's slot in the buffer, where the model put it.
    slot: Option<u32>,
    /// The token rings: a token taken (its entry in the pool's rings, its level), a place put
    /// (its entry), a place dropped on a full ring.
    pop: Option<(u64, u8)>,
    push: Option<u64>,
    overflow: bool,
    /// The task went over a bound, or was dropped on a full region.
    fallback: bool,
    dropped: bool,
}

/// What the token rings do for pass `p`, by the model's rule on its `queueCtl` entry `q`
/// (`ring_slots` entries a level); the caller checks the model's counts moved so.
fn rings(p: &JbsqPhv, q: &QueueCtl, ring_slots: u16) -> (Option<(u64, u8)>, Option<u64>, bool) {
    let slots = u64::from(ring_slots);
    if !p.live || p.drop {
        return (None, None, false);
    }
    if p.is_task {
        let pop = (0..LEVELS)
            .find(|&j| q.ring_count[j] > 0)
            .map(|j| (j as u64 * slots + u64::from(q.ring_head[j]), j as u8));
        return (pop, None, false);
    }
    if (p.is_return && q.depth == 0) || p.is_ctl_place {
        let j = p.level.index();
        if q.ring_count[j] >= ring_slots {
            return (None, None, true);
        }
        let at = (u64::from(q.ring_head[j]) + u64::from(q.ring_count[j])) % slots;
        return (None, Some(j as u64 * slots + at), false);
    }
    (None, None, false)
}

/// The model's leaf and the passes with what each must show.
struct Run {
    leaf: JbsqLeaf,
    passes: Vec<JbsqPhv>,
    expect: Vec<Expect>,
    /// Second passes handed out and not yet fed back.
    pending: Vec<JbsqResubmit>,
}

impl Run {
    fn new() -> Run {
        Run {
            leaf: JbsqLeaf::new(SIZES, 7),
            passes: Vec::new(),
            expect: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The descriptor of `pass` as the stages before `queueCtl` hand it on: `poolCfg`'s region
    /// and drop, `nodeCfg`'s check, and the token rings' verdict, all read off the model's
    /// tables before the pass.
    fn descriptor(&self, pass: &Pass) -> JbsqPhv {
        let t = self.leaf.tables();
        let cfg_of = |pool: u16| t.pool_cfg.get(usize::from(pool)).copied().flatten();
        let mut p = JbsqPhv {
            live: true,
            ..Default::default()
        };
        let with_cfg = |p: &mut JbsqPhv, pool: u16| {
            p.pool = b16(pool);
            if let Some(pc) = cfg_of(pool) {
                p.queue_base = b16(pc.cfg.queue_base);
                p.queue_slots = b16(pc.cfg.queue_slots);
                p.hold_slots = b16(if pc.holds { pc.cfg.queue_slots } else { 0 });
                p.ring_slots = b16(pc.cfg.ring_slots);
                p.drop_full = pc.cfg.fallback == Fallback::Drop;
            } else {
                p.drop = true;
            }
        };
        let header = |p: &mut JbsqPhv, h: &HorusHeader, len: u16, time: u32| {
            p.pkt_type = u64::from(h.pkt_type.code()).into();
            p.more = h.more_packets;
            p.src = b16(h.src_id);
            p.dst = b16(h.dst_id);
            p.qlen = b16(h.qlen);
            p.seq = b16(h.seq_num);
            p.len = b16(len);
            p.time = u64::from(time).into();
        };
        let task = |p: &mut JbsqPhv, h: &HorusHeader, len: u16, time: u32| {
            p.is_task = true;
            with_cfg(p, h.pool_id);
            header(p, h, len, time);
            p.drop |= cfg_of(h.pool_id).is_some_and(|pc| pc.n == 0);
        };
        let node_ok = |node: u16, pool: u16, generation: Option<u8>| {
            t.node_cfg.get(usize::from(node)).is_some_and(|nc| {
                nc.active && nc.pool == pool && generation.is_none_or(|g| g == nc.generation)
            })
        };
        match *pass {
            Pass::Packet(h, len, time) if h.pkt_type == PacketType::NewTask => {
                task(&mut p, &h, len, time)
            }
            Pass::Again(JbsqResubmit::Retry { task: ht }) => {
                task(&mut p, &ht.header, ht.len, ht.time_us)
            }
            Pass::Packet(h, len, time) => {
                p.is_reply = true;
                with_cfg(&mut p, h.pool_id);
                header(&mut p, &h, len, time);
                p.drop |= !node_ok(h.src_id, h.pool_id, None);
            }
            Pass::Again(JbsqResubmit::ReturnPlace {
                pool,
                node,
                generation,
                level,
                time_us,
            }) => {
                p.is_return = true;
                with_cfg(&mut p, pool);
                p.src = b16(node);
                p.level = u64::from(level).into();
                p.time = u64::from(time_us).into();
                p.drop |= !node_ok(node, pool, Some(generation));
            }
            Pass::Configure(pool, _) => {
                p.is_ctl_pool = true;
                p.pool = b16(pool);
            }
        }
        p
    }

    /// Runs `pass` through the model and records its descriptor and what it must show.
    fn pass(&mut self, pass: Pass) -> JbsqResult {
        let p = self.descriptor(&pass);
        let full_before = self.leaf.counters().buffer_full;
        let before = self.leaf.tables().queue_ctl.get(p.pool.index()).copied();
        let ring_slots = p.ring_slots.index() as u16;
        let (pop, push, overflow) =
            before.map_or((None, None, false), |q| rings(&p, &q, ring_slots));
        let r = match pass {
            Pass::Packet(h, len, time) => self.leaf.packet(h, len, time),
            Pass::Again(rs) => self.leaf.resubmit(rs),
            Pass::Configure(pool, cfg) => {
                self.leaf.configure_pool(pool, cfg).unwrap();
                JbsqResult::default()
            }
        };
        if let Some(rs) = r.resubmit {
            self.pending.push(rs);
        }
        let t = self.leaf.tables();
        let pool = p.pool.index();
        let queue = t
            .queue_ctl
            .get(pool)
            .map(|q| (u64::from(q.depth), u64::from(q.max_depth)));
        let held = matches!(r.placement, Some(Placement::Held { .. }));
        let slot = held.then(|| {
            let base = t.pool_cfg[pool].unwrap().cfg.queue_base;
            let at = (0..t.buf.len() as u32)
                .find(|&s| {
                    t.buf[s as usize].is_some_and(|h| {
                        h.header.seq_num == p.seq.index() as u16
                            && h.time_us == p.time.index() as u32
                    })
                })
                .expect("the held task in the model's buffer");
            at - base
        });
        // The model's counts moved as the rule says.
        if let Some((_, j)) = pop {
            let (b, a) = (before.unwrap(), t.queue_ctl[pool]);
            assert_eq!(
                a.ring_count[usize::from(j)] + 1,
                b.ring_count[usize::from(j)]
            );
        }
        if push.is_some() {
            let (b, a) = (before.unwrap(), t.queue_ctl[pool]);
            let j = p.level.index();
            assert_eq!(a.ring_count[j], b.ring_count[j] + 1);
        }
        self.passes.push(p);
        self.expect.push(Expect {
            held,
            release: r.release.map(|x| x.task),
            buf_full: self.leaf.counters().buffer_full > full_before,
            queue,
            slot,
            pop,
            push,
            overflow,
            fallback: matches!(r.placement, Some(Placement::Fallback { .. })),
            dropped: r.drop == Some(JbsqDrop::BufferFull),
        });
        r
    }

    /// Adds `node` to `pool` (bound `k`, the pool's when `None`): the model's one operation, and
    /// its control passes that put the node's free places into their rings, one per place.
    fn add(&mut self, pool: u16, node: u16, k: Option<u8>) {
        let t = self.leaf.tables();
        let cfg = t.pool_cfg[usize::from(pool)].unwrap().cfg;
        let generation = t.node_cfg[usize::from(node)].generation;
        let k = k.unwrap_or(cfg.k);
        let mut q = t.queue_ctl[usize::from(pool)];
        let overflows = self.leaf.counters().token_overflow;
        let mut places = Vec::new();
        for place in 0..u16::from(k) {
            let p = JbsqPhv {
                live: true,
                is_ctl_place: true,
                pool: b16(pool),
                src: b16(node),
                generation: u64::from(generation).into(),
                level: (level_of(place, k) as u64).into(),
                queue_slots: b16(cfg.queue_slots),
                ring_slots: b16(cfg.ring_slots),
                ..Default::default()
            };
            let (pop, push, overflow) = rings(&p, &q, cfg.ring_slots);
            if push.is_some() {
                q.ring_count[p.level.index()] += 1;
            }
            places.push((p, pop, push, overflow));
        }
        self.leaf.add_node(pool, node, Some(k), 0).unwrap();
        let t = self.leaf.tables();
        assert_eq!(t.queue_ctl[usize::from(pool)].ring_count, q.ring_count);
        let dropped = places.iter().filter(|x| x.3).count() as u64;
        assert_eq!(self.leaf.counters().token_overflow - overflows, dropped);
        let queue = Some((u64::from(q.depth), u64::from(q.max_depth)));
        for (p, pop, push, overflow) in places {
            self.passes.push(p);
            self.expect.push(Expect {
                held: false,
                release: None,
                buf_full: false,
                queue,
                slot: None,
                pop,
                push,
                overflow,
                fallback: false,
                dropped: false,
            });
        }
    }

    fn task(&mut self, pool: u16, seq: u16, time: u32) -> JbsqResult {
        self.pass(Pass::Packet(
            header(PacketType::NewTask, pool, CLIENT, seq),
            64,
            time,
        ))
    }

    fn reply(&mut self, pool: u16, node: u16, time: u32) -> JbsqResult {
        self.pass(Pass::Packet(
            header(PacketType::TaskDone, pool, node, 0),
            64,
            time,
        ))
    }

    /// Feeds back the oldest second pass handed out.
    fn again(&mut self) -> JbsqResult {
        let rs = self.pending.remove(0);
        self.pass(Pass::Again(rs))
    }

    /// Runs the recorded passes through the stages, back to back, and checks each against the
    /// model. Returns how many were held and released.
    fn check(self) -> (usize, usize) {
        let out = run(self.passes.clone());
        let (mut held, mut released) = (0, 0);
        for (i, (o, e)) in out.iter().zip(&self.expect).enumerate() {
            let ctx = format!(
                "pass {i}: {:?}\n  model {e:?}\n  stages {o:?}",
                self.passes[i]
            );
            assert_eq!(o.held, e.held, "{ctx}");
            assert_eq!(o.buf_full, e.buf_full, "{ctx}");
            assert_eq!(o.release, e.release.is_some(), "{ctx}");
            assert_eq!(
                (o.pop, o.token),
                (e.pop.is_some(), e.pop.is_some()),
                "{ctx}"
            );
            if let Some((at, level)) = e.pop {
                assert_eq!(
                    (o.ring_at.index() as u64, o.level.index() as u8),
                    (at, level),
                    "{ctx}"
                );
            }
            assert_eq!(o.push, e.push.is_some(), "{ctx}");
            if let Some(at) = e.push {
                assert_eq!(o.ring_at.index() as u64, at, "{ctx}");
            }
            assert_eq!(o.overflow, e.overflow, "{ctx}");
            assert_eq!((o.fallback, o.dropped), (e.fallback, e.dropped), "{ctx}");
            if let Some((depth, max)) = e.queue {
                assert_eq!(
                    (o.depth.index() as u64, o.max_depth.index() as u64),
                    (depth, max),
                    "{ctx}"
                );
            }
            if let Some(at) = e.slot {
                held += 1;
                assert_eq!(o.at.index() as u32, at, "{ctx}");
            }
            if let Some(t) = e.release {
                released += 1;
                let h = t.header;
                let got = (
                    o.rel_pkt_type.index() as u8,
                    o.rel_more,
                    o.rel_pool.index() as u16,
                    o.rel_src.index() as u16,
                    o.rel_dst.index() as u16,
                    o.rel_qlen.index() as u16,
                    o.rel_seq.index() as u16,
                    o.rel_len.index() as u16,
                    o.rel_time.index() as u32,
                );
                let want = (
                    h.pkt_type.code(),
                    h.more_packets,
                    h.pool_id,
                    h.src_id,
                    h.dst_id,
                    h.qlen,
                    h.seq_num,
                    t.len,
                    t.time_us,
                );
                assert_eq!(got, want, "{ctx}");
            }
        }
        (held, released)
    }
}

const CLIENT: u16 = 0xFFFF;

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

/// Pool `pool`: node slots from `base`, its buffer region `[queue_base, queue_base + slots)`.
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

/// A run with `pool` configured and `workers` nodes (IDs `first`, `first + 1`, ...) added, the
/// configuration's passes among its passes.
fn with_pool(run: &mut Run, pool: u16, cfg: JbsqPool, first: u16, workers: u16) {
    run.pass(Pass::Configure(pool, cfg));
    for w in 0..workers {
        run.add(pool, first + w, None);
    }
}

#[test]
fn held_tasks_leave_in_arrival_order_to_the_replying_worker_back_to_back() {
    let mut r = Run::new();
    with_pool(&mut r, 1, pool_cfg(8, 1, 16, 4, Fallback::Random), 20, 2);
    // Two take the places, four are held, the seventh finds the region full.
    for seq in 0..7 {
        r.task(1, seq, 100 + u32::from(seq));
    }
    // Each reply releases the oldest, to the replying worker: five replies for four held tasks,
    // the fifth hands out its place's second pass.
    for (i, node) in [20, 21, 21, 20, 20].into_iter().enumerate() {
        r.reply(1, node, 200 + i as u32);
    }
    r.again();
    let expect = r.expect.clone();
    assert_eq!(expect.iter().filter(|e| e.held).count(), 4);
    assert_eq!(expect.iter().filter(|e| e.buf_full).count(), 1);
    assert_eq!(r.check(), (4, 4));
}

#[test]
fn a_slot_held_by_one_pass_is_released_by_the_next_on_the_same_pool() {
    let mut r = Run::new();
    with_pool(&mut r, 1, pool_cfg(8, 1, 16, 3, Fallback::Random), 20, 1);
    r.task(1, 0, 10);
    // Hold and release alternate on one pool, one pass per clock: each release reads the slot
    // the pass just before it wrote, and the region's head wraps (3 slots, 7 rounds).
    for seq in 1..8 {
        r.task(1, seq, 10 + u32::from(seq));
        r.reply(1, 20, 100 + u32::from(seq));
    }
    assert_eq!(r.check(), (7, 7));
}

#[test]
fn a_full_region_holds_no_more_and_a_multi_packet_or_long_task_is_never_held() {
    let mut r = Run::new();
    with_pool(&mut r, 2, pool_cfg(16, 1, 40, 2, Fallback::Drop), 30, 1);
    r.task(2, 0, 1);
    r.task(2, 1, 2);
    r.task(2, 2, 3);
    let full = r.task(2, 3, 4);
    assert_eq!(full.drop, Some(JbsqDrop::BufferFull));
    let mut more = header(PacketType::NewTask, 2, CLIENT, 4);
    more.more_packets = true;
    let r1 = r.pass(Pass::Packet(more, 64, 5));
    assert!(
        matches!(r1.placement, Some(Placement::Fallback { .. })),
        "{r1:?}"
    );
    let long = header(PacketType::NewTask, 2, CLIENT, 5);
    let r2 = r.pass(Pass::Packet(long, SIZES.slot_bytes + 1, 6));
    assert!(
        matches!(r2.placement, Some(Placement::Fallback { .. })),
        "{r2:?}"
    );
    // A reply from a node not in the pool releases nothing; the worker's own does.
    r.reply(2, 31, 7);
    r.reply(2, 30, 8);
    r.task(2, 6, 9);
    assert_eq!(r.check(), (3, 1));
}

#[test]
fn a_task_held_between_a_reply_and_its_second_pass_takes_the_returned_place() {
    let mut r = Run::new();
    with_pool(&mut r, 1, pool_cfg(8, 1, 16, 4, Fallback::Random), 20, 1);
    r.task(1, 0, 1);
    let first = r.reply(1, 20, 2);
    assert!(first.resubmit.is_some() && first.release.is_none());
    // Before the place comes back, a task arrives: no token yet, so it is held.
    r.task(1, 1, 3);
    let back = r.again();
    assert_eq!(back.release.map(|t| t.task.header.seq_num), Some(1));
    assert_eq!(r.check(), (1, 1));
}

#[test]
fn a_place_that_finds_its_ring_full_is_dropped_and_counted() {
    let mut r = Run::new();
    let cfg = JbsqPool {
        ring_slots: 1,
        ..pool_cfg(8, 1, 16, 4, Fallback::Random)
    };
    // Level 0 has one entry: the second worker's place is dropped (`overflow`).
    with_pool(&mut r, 1, cfg, 20, 2);
    assert_eq!(r.leaf.counters().token_overflow, 1);
    r.task(1, 0, 1);
    // No token left: held, and released by the worker without a token's reply.
    r.task(1, 1, 2);
    r.reply(1, 21, 3);
    // The first worker's place comes back (the ring has room again) and is taken.
    r.reply(1, 20, 4);
    r.again();
    r.task(1, 2, 5);
    assert_eq!(r.expect.iter().filter(|e| e.overflow).count(), 1);
    assert_eq!(r.expect.iter().filter(|e| e.pop.is_some()).count(), 2);
    assert_eq!(r.check(), (1, 1));
}

#[test]
fn a_reconfigured_pool_starts_with_an_empty_queue() {
    let mut r = Run::new();
    with_pool(&mut r, 1, pool_cfg(8, 1, 16, 4, Fallback::Random), 20, 1);
    r.task(1, 0, 1);
    r.task(1, 1, 2);
    r.task(1, 2, 3);
    r.leaf.remove_node(1, 20).unwrap();
    // The pool keeps its held tasks while it has no worker, until it is configured afresh, now
    // with another region.
    with_pool(&mut r, 1, pool_cfg(8, 1, 50, 8, Fallback::Random), 21, 1);
    r.task(1, 3, 4);
    r.task(1, 4, 5);
    r.reply(1, 21, 6);
    assert_eq!(r.check(), (3, 1));
}

#[test]
fn random_traffic_on_two_pools_matches_the_model_pass_for_pass() {
    let mut r = Run::new();
    with_pool(&mut r, 1, pool_cfg(8, 2, 8, 2, Fallback::Random), 20, 3);
    with_pool(&mut r, 2, pool_cfg(16, 1, 13, 3, Fallback::Drop), 30, 2);
    let mut rng = Xorshift64::new(0x5eed);
    let (mut seq, mut time) = (0u16, 0u32);
    for _ in 0..3000 {
        let x = rng.next_u64();
        time = time.wrapping_add(1 + (x >> 60) as u32);
        let pool = 1 + (x & 1) as u16;
        match (x >> 8) % 16 {
            // Second passes come back at once or after other passes.
            0..=2 if !r.pending.is_empty() => {
                r.again();
            }
            0..=7 => {
                seq = seq.wrapping_add(1);
                r.task(pool, seq, time);
            }
            8..=14 => {
                let node = if pool == 1 {
                    20 + (x >> 16) % 3
                } else {
                    30 + (x >> 16) % 2
                };
                r.reply(pool, node as u16, time);
            }
            // A reply from a node of the other pool: forwarded, no update.
            _ => {
                r.reply(pool, if pool == 1 { 30 } else { 20 }, time);
            }
        }
    }
    let fallback = r.expect.iter().filter(|e| e.fallback).count();
    let dropped = r.expect.iter().filter(|e| e.dropped).count();
    let (held, released) = r.check();
    println!(
        "random: {held} held, {released} released, {fallback} over a bound, {dropped} dropped"
    );
    assert!(
        fallback >= 5 && dropped >= 20,
        "{fallback} over a bound, {dropped} dropped"
    );
    assert!(
        held > 300 && released > 300,
        "{held} held, {released} released"
    );
}

/// Both stages at the preset's sizes (64 pools, 4,096 slots) are lint clean and within the
/// depth target; the buffer's descriptors go to block RAM or URAM, not flip-flops.
#[test]
fn held_queue_stages_are_lint_clean_and_within_the_depth_target_at_the_preset_sizes() {
    const _: () = assert!(JbsqSizes::DEFAULT.pools == 1 << 6);
    const _: () = assert!(JbsqSizes::DEFAULT.buffer_slots == 1 << 12);
    let ctl = lint_and_synth(
        "jbsq_queue_ctl",
        QueueCtlStage::<6>::new(JbsqSizes::DEFAULT),
    );
    println!("queueCtl: {ctl:#}");
    let buf = lint_and_synth("jbsq_task_buf", TaskBufStage::<12>::default());
    println!("taskBuf: {buf:#}");
    for r in [&ctl, &buf] {
        assert!(
            r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
            "{r:#}"
        );
    }
    assert!(buf.urams > 0, "{buf:#}");
}
