//! The leaf that holds tasks: JBSQ(k) in the switch, pass by pass (`docs/algorithm.md`, "The
//! leaf that holds tasks (JBSQ)", decisions 23 to 35).
//!
//! A worker has at most `k` places (tasks sent to it and not yet answered). Each free place is a
//! *token* in one of the pool's token rings: a worker with `o` outstanding tasks and bound `k`
//! has the tokens of its places `o .. k`, place `j` in ring [`level_of`]`(j, k)`, so the lowest
//! ring that holds a token holds the workers using the least of their bound, and a task that
//! pops it goes to a least-loaded worker under its bound (bounded join-the-shortest-queue, by
//! count when the pool's workers share `k`, by time when `k` follows their speed; ties in the
//! order the places freed). With no
//! token the task waits in its pool's FIFO in the task buffer; a worker's reply releases the
//! oldest held task to that worker in the reply's own pass, or, with nothing held, returns the
//! freed place to its ring in a second pass.
//!
//! Towards the spine the leaf speaks Horus's protocol with Horus's rules: its idle count is the
//! ring of level 0 (workers with nothing outstanding), its rack average counts every task it took
//! and has not seen answered, held ones included.
//!
//! Addresses, continuations and control frames are the paper leaf's (decision 34): its `conn`
//! and `nodeAddr` tables come last. [`frame::JbsqFrameSwitch`] is the leaf at the level of
//! frames, holding each held task's whole frame.
//!
//! This is the model. Of the pipeline (`docs/jbsq-pipeline.md`) its own ten table stages,
//! `poolCfg`, `nodeCfg`, `queueCtl`, `link`, `ring`, `members`, `memberSlot`, `outstanding`,
//! `poolAvg` and `taskBuf`, are built and chained (`horus_pipeline::jbsq`, tested against these
//! tables, the held queue proven), and its egress with the frame store and the paper leaf's
//! `nodeAddr` behind them; `conn`, the leaf's core, its co-simulation, its other proofs and its
//! register-map counters are planned. A
//! configuration with `[switch] leaf = "jbsq"` builds this leaf ([`JbsqLeaf::from_config`]). The
//! paper's leaf ([`crate::sched::Scheduler`]) is unchanged and stays the default
//! ([`LeafKind`]).

pub mod frame;
mod tables;

pub use tables::*;

use crate::fixed::RackAverage;
use crate::rng::Xorshift64;
use crate::sched::counters::Signal;
use crate::sched::state::{AddrEntry, ConnMiss, ConnWrite, NodeAddr, Params, PoolAvg};
use crate::sched::{Emit, Target};
use crate::wire::{Endpoint, HorusHeader, MacAddr, PacketType};

/// Which leaf a switch runs: the paper's (idle list, power of two over worker loads) or the one
/// that holds tasks. A configuration's default is the paper's (the Tofino programs' leaf: a
/// Tofino cannot hold a task); `rtl-gen --board` builds the one that holds tasks unless told
/// otherwise. In a configuration: `[switch] leaf = "horus"` or `"jbsq"`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LeafKind {
    #[default]
    Horus,
    Jbsq,
}

/// How a task was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Took a free place: a token of ring `level` (the worker had `level` outstanding).
    Token { node: u16, level: u8 },
    /// Held in the buffer, at this depth of its pool's queue (1 = the only one).
    Held { depth: u32 },
    /// Sent over the worker's bound (no place, and the buffer full or the task not holdable).
    Fallback { node: u16 },
    /// Dropped; `JbsqDrop` says why.
    Dropped,
}

/// Why a JBSQ pass dropped a packet or its update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JbsqDrop {
    UnknownPool,
    EmptyPool,
    /// No place, the buffer full, and the pool's fallback is [`Fallback::Drop`].
    BufferFull,
    /// A reply from a node that is not an active node of its pool: forwarded, no update.
    NodeNotInPool,
    /// A packet type this leaf does not schedule: spine messages, the legacy types,
    /// NEW_TASK_RANDOM.
    NotScheduled,
    /// A continuation with no connection entry (never made, expired, or its node now in
    /// another pool; decision 34).
    ContinuationMiss,
}

/// A second pass this leaf hands out; the caller feeds it back exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JbsqResubmit {
    /// A task popped a stale token (its node was removed): it tries again.
    Retry { task: HeldTask },
    /// A reply freed a place and nothing was held: the place goes back to ring `level`, or to
    /// the oldest held task if one arrived in between.
    ReturnPlace {
        pool: u16,
        node: u16,
        generation: u8,
        level: u8,
        /// The reply's arrival time (the pass stamps an idle message with it).
        time_us: u32,
    },
}

/// A held task on its way to a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    /// The task as held, its header rewritten towards the worker (`dst_id` the worker's, `qlen`
    /// 0).
    pub task: HeldTask,
    /// The worker and its address (`nodeAddr`).
    pub node: u16,
    pub addr: NodeAddr,
}

/// Everything one pass produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JbsqResult {
    /// The packet itself: a task or a continuation to its worker (rewritten: `dst_id` the
    /// worker's, `qlen` 0), a reply on to its client (the pass-through port, unchanged), a
    /// control frame to the control port (unchanged).
    pub forward: Option<Emit>,
    /// A held task released to a worker.
    pub release: Option<Released>,
    /// The task buffer's slot the pass held its task in or released a task from (the frame
    /// store's slot).
    pub slot: Option<u32>,
    /// A message to the spine (its header: `dst_id` the spine's ID).
    pub signal: Option<(Signal, HorusHeader)>,
    pub resubmit: Option<JbsqResubmit>,
    pub placement: Option<Placement>,
    pub drop: Option<JbsqDrop>,
}

/// Control-plane errors: a refused operation changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JbsqControlError {
    PoolOutOfRange,
    NodeOutOfRange,
    UnknownPool,
    /// Region outside the tables (or a buffer region over [`MAX_QUEUE_SLOTS`]), `k` 0, or
    /// parameters invalid.
    BadConfig,
    /// The node is active already (add) or not a member of the pool (remove).
    BadNode,
    /// The pool's region of node slots is full.
    PoolFull,
    /// A buffer region that overlaps another configured pool's (a move, decision 37).
    RegionOverlap,
}

/// A JBSQ leaf.
#[derive(Clone, Debug)]
pub struct JbsqLeaf {
    sizes: JbsqSizes,
    rng: Xorshift64,
    t: JbsqTables,
    guard: JbsqGuard,
    counters: JbsqCounters,
    /// A connection entry older than this is expired (the switch's `conn_timeout_us`).
    conn_timeout_us: u32,
}

/// What a pass did to the pool's rack average.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AvgChange {
    None,
    TaskTaken { from_spine: bool },
    TaskFinished,
}

impl JbsqLeaf {
    pub fn new(sizes: JbsqSizes, seed: u64) -> JbsqLeaf {
        JbsqLeaf {
            sizes,
            rng: Xorshift64::new(seed),
            t: JbsqTables::new(sizes),
            guard: JbsqGuard::default(),
            counters: JbsqCounters::default(),
            conn_timeout_us: crate::config::DEFAULT_CONN_TIMEOUT_US,
        }
    }

    /// Sets the connection timeout (the switch's register; the configuration's
    /// `conn_timeout_us`).
    pub fn set_conn_timeout_us(&mut self, us: u32) {
        self.conn_timeout_us = us.max(1);
    }

    pub fn sizes(&self) -> JbsqSizes {
        self.sizes
    }

    pub fn counters(&self) -> &JbsqCounters {
        &self.counters
    }

    pub fn tables(&self) -> &JbsqTables {
        &self.t
    }

    pub fn rng_state(&self) -> u64 {
        self.rng.state()
    }

    /// The tables the last pass touched, in order.
    pub fn last_pass_stages(&self) -> &[JbsqStage] {
        self.guard.touched()
    }

    fn touch(&mut self, s: JbsqStage) {
        self.guard.touch(s);
    }

    /// A packet's first pass: a NEW_TASK is scheduled, a TASK_DONE / TASK_DONE_IDLE is a reply;
    /// anything else is not this leaf's (`JbsqDrop::NotScheduled`).
    pub fn packet(&mut self, header: HorusHeader, len: u16, time_us: u32) -> JbsqResult {
        self.guard.begin();
        let task = HeldTask {
            header,
            len,
            time_us,
        };
        match header.pkt_type {
            PacketType::KeepAlive
            | PacketType::WorkerId
            | PacketType::WorkerIdAck
            | PacketType::RemoveAck => {
                self.counters.to_control += 1;
                JbsqResult {
                    forward: Some(Emit {
                        target: Target::Control,
                        header,
                    }),
                    ..JbsqResult::default()
                }
            }
            PacketType::NewTask => self.task(task, true),
            PacketType::TaskContinuation => self.continuation(header, time_us),
            PacketType::TaskDone | PacketType::TaskDoneIdle => self.reply(header, time_us),
            _ => {
                self.counters.not_scheduled += 1;
                JbsqResult {
                    drop: Some(JbsqDrop::NotScheduled),
                    ..JbsqResult::default()
                }
            }
        }
    }

    /// A second pass handed out by an earlier one.
    pub fn resubmit(&mut self, r: JbsqResubmit) -> JbsqResult {
        self.guard.begin();
        match r {
            JbsqResubmit::Retry { task } => self.task(task, false),
            JbsqResubmit::ReturnPlace {
                pool,
                node,
                generation,
                level,
                time_us,
            } => self.return_place(pool, node, generation, level, time_us),
        }
    }

    fn pool_cfg(&mut self, pool: u16) -> Option<PoolCfgEntry> {
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg.get(usize::from(pool)).copied().flatten()
    }

    /// A task's pass: its first (`first`: the generator advances, the repair rule runs) or a
    /// retry after a stale token.
    fn task(&mut self, task: HeldTask, first: bool) -> JbsqResult {
        let h = task.header;
        let mut r = JbsqResult::default();
        let Some(pc) = self.pool_cfg(h.pool_id) else {
            self.counters.unknown_pool += 1;
            r.drop = Some(JbsqDrop::UnknownPool);
            return r;
        };
        let cfg = pc.cfg;
        // The generator advances once per first pass of a task of a configured pool (as the
        // paper's leaf's); only the fallback uses the sample.
        let (r1, _) = if first {
            self.counters.tasks += 1;
            self.rng.two_samples(pc.n)
        } else {
            (0, 0)
        };
        if pc.n == 0 {
            r.drop = Some(JbsqDrop::EmptyPool);
            r.placement = Some(Placement::Dropped);
            self.counters.dropped += 1;
            return r;
        }
        let from_spine = cfg.spine.is_some_and(|s| h.src_id == s.id);
        let flag = (first && from_spine).then_some(h.qlen != 0);
        let holdable = !h.more_packets && task.len <= self.sizes.slot_bytes;

        // queueCtl: a token if any, else the buffer, else the fallback; then the link rule.
        self.touch(JbsqStage::QueueCtl);
        let q = &mut self.t.queue_ctl[usize::from(h.pool_id)];
        let level = (0..LEVELS).find(|&j| q.ring_count[j] > 0);
        enum Way {
            Pop { level: usize, at: u16 },
            Hold { at: u32 },
            Fallback,
            Drop,
        }
        let way = if let Some(j) = level {
            let at = q.ring_head[j];
            q.ring_head[j] = wrap_inc16(at, cfg.ring_slots);
            q.ring_count[j] -= 1;
            Way::Pop { level: j, at }
        } else if holdable && pc.holds && q.depth < cfg.queue_slots {
            let at = wrap_add32(q.queue_head, q.depth, cfg.queue_slots);
            q.depth += 1;
            q.max_depth = q.max_depth.max(q.depth);
            Way::Hold { at }
        } else {
            if holdable {
                self.counters.buffer_full += 1;
            }
            match (holdable, cfg.fallback) {
                (true, Fallback::Drop) => Way::Drop,
                _ => Way::Fallback,
            }
        };
        let (counts, depth) = (q.ring_count, q.depth);
        // A retry does not run the link rule (decision 35): what its pops changed leaves with the
        // pool's next pass that runs it, so that a pass that comes back sends nothing.
        let signal = if first {
            self.link_rule(h.pool_id, &cfg, (&counts, depth), flag, Some(task.time_us))
        } else {
            None
        };

        let node = match way {
            Way::Pop { level, at } => {
                self.touch(JbsqStage::Ring);
                let tok = self.t.rings[ring_index(&cfg, level, at)];
                self.touch(JbsqStage::Outstanding);
                let o = &mut self.t.outstanding[usize::from(tok.node)];
                if !o.active || o.generation != tok.generation {
                    // A removed node's place: nothing else is written, the task tries again.
                    self.counters.stale_tokens += 1;
                    self.counters.resubmits += 1;
                    r.resubmit = Some(JbsqResubmit::Retry { task });
                    r.signal = signal.map(|s| self.signal_header(h.pool_id, &cfg, s, false));
                    return r;
                }
                o.tasks = o.tasks.saturating_add(1);
                self.counters.placed += 1;
                r.placement = Some(Placement::Token {
                    node: tok.node,
                    level: level as u8,
                });
                Some(tok.node)
            }
            Way::Fallback => {
                self.touch(JbsqStage::Members);
                let node = self.t.members[usize::from(cfg.base + r1)];
                self.touch(JbsqStage::Outstanding);
                let o = &mut self.t.outstanding[usize::from(node)];
                o.tasks = o.tasks.saturating_add(1);
                self.counters.fallback += 1;
                r.placement = Some(Placement::Fallback { node });
                Some(node)
            }
            Way::Hold { .. } => {
                self.counters.held += 1;
                self.counters.max_depth = self.counters.max_depth.max(depth);
                r.placement = Some(Placement::Held { depth });
                None
            }
            Way::Drop => {
                self.counters.dropped += 1;
                r.placement = Some(Placement::Dropped);
                r.drop = Some(JbsqDrop::BufferFull);
                None
            }
        };
        let change = match way {
            Way::Drop => AvgChange::None,
            _ => AvgChange::TaskTaken { from_spine },
        };
        r.signal = self.pool_avg(h.pool_id, &cfg, change, signal);
        if let Way::Hold { at } = way {
            self.touch(JbsqStage::TaskBuf);
            let slot = cfg.queue_base + at;
            self.t.buf[slot as usize] = Some(task);
            r.slot = Some(slot);
        }
        if let Some(n) = node {
            if h.more_packets {
                self.conn_insert(h, task.time_us, n);
            }
            match self.node_addr(h.pool_id, n) {
                Some(addr) => {
                    r.forward = Some(Emit {
                        target: Target::Node { node: n, addr },
                        header: to_worker(h, addr.dst_id),
                    })
                }
                // Every active node of a pool was given its address when it was added.
                None => r.drop = Some(JbsqDrop::ContinuationMiss),
            }
        }
        r
    }

    /// `conn`: remember the node of a multi-packet task's first packet (the paper leaf's rule,
    /// §A.4: an entry still live for another task is kept, and this task's continuations miss).
    fn conn_insert(&mut self, h: HorusHeader, time_us: u32, node: u16) {
        self.touch(JbsqStage::Conn);
        let i = self.conn_index(h.pool_id, h.seq_num);
        match self.t.conn[i].write(&h, time_us, node, self.conn_timeout_us) {
            ConnWrite::Collision => self.counters.conn_collisions += 1,
            ConnWrite::Written { expired } => {
                self.counters.conn_expired += u64::from(expired);
                self.counters.conn_inserts += 1;
            }
        }
    }

    fn conn_index(&self, pool: u16, seq: u16) -> usize {
        (crate::sched::conn_hash(pool, seq) & (self.sizes.conn_table - 1)) as usize
    }

    /// TASK_CONTINUATION: to the node its task's first packet went to (`conn`, then
    /// `nodeAddr`); the last packet frees the entry. It changes no count: the task was counted
    /// once, at its first packet.
    fn continuation(&mut self, h: HorusHeader, time_us: u32) -> JbsqResult {
        let mut r = JbsqResult::default();
        if self.pool_cfg(h.pool_id).is_none() {
            self.counters.unknown_pool += 1;
            r.drop = Some(JbsqDrop::UnknownPool);
            return r;
        }
        self.touch(JbsqStage::Conn);
        let i = self.conn_index(h.pool_id, h.seq_num);
        let found = self.t.conn[i].follow(&h, time_us, self.conn_timeout_us);
        self.counters.conn_expired += u64::from(found == Err(ConnMiss::Expired));
        let to = found
            .ok()
            .and_then(|n| Some((n, self.node_addr(h.pool_id, n)?)));
        let Some((node, addr)) = to else {
            self.counters.continuation_miss += 1;
            r.drop = Some(JbsqDrop::ContinuationMiss);
            return r;
        };
        self.counters.continuations += 1;
        r.forward = Some(Emit {
            target: Target::Node { node, addr },
            header: to_worker(h, addr.dst_id),
        });
        r
    }

    /// `nodeAddr`: the address of `node`, if it was added to `pool` (a continuation's entry may
    /// name a node ID given to another pool since).
    fn node_addr(&mut self, pool: u16, node: u16) -> Option<NodeAddr> {
        self.touch(JbsqStage::NodeAddr);
        self.t.node_addr[usize::from(node)]
            .filter(|e| e.pool == pool)
            .map(|e| e.addr)
    }

    /// TASK_DONE / TASK_DONE_IDLE: the worker's place is free. The oldest held task takes it in
    /// this pass; with nothing held, the place goes back to its ring in a second pass.
    fn reply(&mut self, h: HorusHeader, time_us: u32) -> JbsqResult {
        let mut r = JbsqResult {
            forward: Some(Emit {
                target: Target::PassThrough,
                header: h,
            }),
            ..JbsqResult::default()
        };
        let Some(pc) = self.pool_cfg(h.pool_id) else {
            self.counters.unknown_pool += 1;
            r.drop = Some(JbsqDrop::UnknownPool);
            return r;
        };
        let cfg = pc.cfg;
        let node = h.src_id;
        self.touch(JbsqStage::NodeCfg);
        let nc = self.t.node_cfg.get(usize::from(node)).copied();
        let Some(nc) = nc.filter(|nc| nc.active && nc.pool == h.pool_id) else {
            self.counters.replies_not_in_pool += 1;
            r.drop = Some(JbsqDrop::NodeNotInPool);
            return r;
        };
        self.touch(JbsqStage::QueueCtl);
        let q = &mut self.t.queue_ctl[usize::from(h.pool_id)];
        let release = (q.depth > 0).then(|| {
            let at = q.queue_head;
            q.queue_head = wrap_inc32(at, cfg.queue_slots);
            q.depth -= 1;
            at
        });
        // A release frees a held task's room (the place it takes stays taken).
        let (counts, depth) = (q.ring_count, q.depth);
        let signal = match (release, cfg.advertise) {
            (Some(_), Advertise::Queue { .. }) => {
                self.link_rule(h.pool_id, &cfg, (&counts, depth), None, Some(time_us))
            }
            _ => None,
        };
        self.touch(JbsqStage::Outstanding);
        let o = &mut self.t.outstanding[usize::from(node)];
        // A reply from a worker counted at 0 is spurious (decision 33): all its places are
        // tokens already, so none returns; a release decided before the count was read still
        // goes to it.
        let spurious = o.tasks == 0;
        o.tasks = o.tasks.saturating_sub(1);
        let left = o.tasks;
        if spurious {
            self.counters.replies_spurious += 1;
        }
        if release.is_some() {
            o.tasks += 1;
        } else if !spurious && u32::from(left) < u32::from(nc.k) {
            self.counters.resubmits += 1;
            r.resubmit = Some(JbsqResubmit::ReturnPlace {
                pool: h.pool_id,
                node,
                generation: nc.generation,
                level: level_of(left, nc.k) as u8,
                time_us,
            });
        }
        r.signal = self.pool_avg(h.pool_id, &cfg, AvgChange::TaskFinished, signal);
        if let Some(at) = release {
            self.take_held(&mut r, h.pool_id, &cfg, at, node);
        }
        r
    }

    /// The second pass of a reply that found nothing held.
    fn return_place(
        &mut self,
        pool: u16,
        node: u16,
        generation: u8,
        level: u8,
        time_us: u32,
    ) -> JbsqResult {
        let mut r = JbsqResult::default();
        let Some(pc) = self.pool_cfg(pool) else {
            self.counters.unknown_pool += 1;
            r.drop = Some(JbsqDrop::UnknownPool);
            return r;
        };
        let cfg = pc.cfg;
        self.touch(JbsqStage::NodeCfg);
        let nc = self.t.node_cfg[usize::from(node)];
        if !nc.active || nc.pool != pool || nc.generation != generation {
            // Removed in between: its place went with it.
            return r;
        }
        self.touch(JbsqStage::QueueCtl);
        let q = &mut self.t.queue_ctl[usize::from(pool)];
        let j = usize::from(level);
        // A release (at the queue's head), or a push (at the ring's tail).
        let way = if q.depth > 0 {
            let at = q.queue_head;
            q.queue_head = wrap_inc32(at, cfg.queue_slots);
            q.depth -= 1;
            Ok(at)
        } else if q.ring_count[j] >= cfg.ring_slots {
            self.counters.token_overflow += 1;
            return r;
        } else {
            let at = wrap_add16(q.ring_head[j], q.ring_count[j], cfg.ring_slots);
            q.ring_count[j] += 1;
            Err(at)
        };
        let release = way.ok();
        let (counts, depth) = (q.ring_count, q.depth);
        // What the pool advertises changed: a free place back in its ring (a place of level 0
        // for idle workers), or, for its room, a place or a held task gone.
        let changed = match cfg.advertise {
            Advertise::Idle => release.is_none() && j == 0,
            Advertise::Places => release.is_none(),
            Advertise::Queue { .. } => true,
        };
        let signal = if changed {
            self.link_rule(pool, &cfg, (&counts, depth), None, Some(time_us))
        } else {
            None
        };
        if let Err(at) = way {
            self.touch(JbsqStage::Ring);
            self.t.rings[ring_index(&cfg, j, at)] = Token { node, generation };
        }
        if release.is_some() {
            self.touch(JbsqStage::Outstanding);
            let o = &mut self.t.outstanding[usize::from(node)];
            o.tasks = o.tasks.saturating_add(1);
        }
        r.signal = self.pool_avg(pool, &cfg, AvgChange::None, signal);
        if let Some(at) = release {
            self.take_held(&mut r, pool, &cfg, at, node);
        }
        r
    }

    /// `taskBuf`: the held task at offset `at` of the pool's region, on its way to `node`
    /// (`nodeAddr`: the replying worker's address).
    fn take_held(&mut self, r: &mut JbsqResult, pool: u16, cfg: &JbsqPool, at: u32, node: u16) {
        self.touch(JbsqStage::TaskBuf);
        let slot = cfg.queue_base + at;
        let mut task = self.t.buf[slot as usize]
            .take()
            .expect("a held queue's slots hold tasks");
        self.counters.released += 1;
        r.slot = Some(slot);
        // The replying worker is an active node of the pool: it was given its address when it
        // was added.
        let addr = self
            .node_addr(pool, node)
            .expect("an active node of a pool has its address");
        task.header = to_worker(task.header, addr.dst_id);
        r.release = Some(Released { task, node, addr });
    }

    /// `poolAvg`: the rack average's change, then the report rule (an idle message decided
    /// earlier in the pass goes first: one message per pass).
    fn pool_avg(
        &mut self,
        pool: u16,
        cfg: &JbsqPool,
        change: AvgChange,
        signal: Option<Signal>,
    ) -> Option<(Signal, HorusHeader)> {
        self.touch(JbsqStage::PoolAvg);
        let pa = &mut self.t.avg[usize::from(pool)];
        match change {
            AvgChange::None => {}
            AvgChange::TaskTaken { from_spine } => {
                if pa.avg.task_started() && from_spine {
                    pa.spine_tasks = pa.spine_tasks.saturating_add(1);
                }
            }
            AvgChange::TaskFinished => pa.avg.task_finished(),
        }
        cfg.spine?;
        let changed = change != AvgChange::None;
        let signal = signal.or_else(|| {
            (changed && pa.moved() >= u64::from(cfg.params.report_delta.0))
                .then_some(Signal::LoadUpdate)
        })?;
        Some(self.signal_header(pool, cfg, signal, true))
    }

    /// The message for `signal`, carrying the pool's average (read in `poolAvg`, so
    /// `read_avg` false only for a pass that stopped before that stage and sends what its
    /// `queueCtl` decided with the average as it stood).
    fn signal_header(
        &mut self,
        pool: u16,
        cfg: &JbsqPool,
        signal: Signal,
        read_avg: bool,
    ) -> (Signal, HorusHeader) {
        if !read_avg {
            self.touch(JbsqStage::PoolAvg);
        }
        let pa: &mut PoolAvg = &mut self.t.avg[usize::from(pool)];
        if signal == Signal::LoadUpdate {
            pa.reported = pa.avg.level();
            pa.spine_tasks = 0;
        }
        let (qlen, seq_num) = pa.avg.load().to_wire();
        let spine = cfg.spine.expect("signals only for pools with a spine");
        match signal {
            Signal::IdleAdd => self.counters.sent_idle_add += 1,
            Signal::IdleRemove => self.counters.sent_idle_remove += 1,
            Signal::LoadUpdate => self.counters.sent_load_update += 1,
        }
        let pkt_type = match signal {
            Signal::IdleAdd => PacketType::IdleSignal,
            Signal::IdleRemove => PacketType::IdleRemove,
            Signal::LoadUpdate => PacketType::QueueSignal,
        };
        (
            signal,
            HorusHeader {
                pkt_type,
                more_packets: false,
                pool_id: pool,
                src_id: spine.node,
                dst_id: spine.id,
                qlen,
                seq_num,
            },
        )
    }
}

impl JbsqLeaf {
    /// `link`: the paper's link rule on what the pool advertises ([`Advertise::link`]: the
    /// tokens of level 0, all of them, or the rack's queue; decisions 27 and 32), on the ring
    /// counts and held depth `queueCtl` left (`after`), held down `hold_us` after the pool's last
    /// idle message: link when it may, unlink when it must, repair a spine task's disagreeing
    /// flag once per gap; a message stamps the pool with the pass's packet time. Its own stage
    /// after `queueCtl`, whose decisions it reads (`docs/jbsq-pipeline.md`).
    fn link_rule(
        &mut self,
        pool: u16,
        cfg: &JbsqPool,
        after: (&[u16; LEVELS], u32),
        flag: Option<bool>,
        time_us: Option<u32>,
    ) -> Option<Signal> {
        cfg.spine?;
        self.touch(JbsqStage::Link);
        let (ring_count, depth) = after;
        let l = &mut self.t.link[usize::from(pool)];
        let (may_link, must_unlink) =
            cfg.advertise
                .link(ring_count, depth, cfg.params.link_at, cfg.params.unlink_at);
        let since = time_us.map(|t| t.wrapping_sub(l.signaled_us));
        // A packet's pass changes the link only `hold_us` after the pool's last idle message; a
        // control pass (no time) at once.
        let free = since.is_none_or(|d| d >= u32::from(cfg.hold_us));
        let signal = if free && !l.linked && may_link {
            l.linked = true;
            Some(Signal::IdleAdd)
        } else if free && l.linked && must_unlink {
            l.linked = false;
            Some(Signal::IdleRemove)
        } else {
            let quiet = since.is_some_and(|d| d >= u32::from(cfg.params.repair_gap_us));
            let repair = match flag {
                Some(true) if !l.linked && quiet => Some(Signal::IdleRemove),
                Some(false) if l.linked && quiet => Some(Signal::IdleAdd),
                _ => None,
            };
            if repair.is_some() {
                self.counters.idle_repairs += 1;
            }
            repair
        };
        if let (Some(_), Some(t)) = (signal, time_us) {
            l.signaled_us = t;
        }
        signal
    }
}

/// Where offset `at` of level `level`'s ring of a pool is in the ring table.
fn ring_index(cfg: &JbsqPool, level: usize, at: u16) -> usize {
    cfg.ring_base as usize + level * usize::from(cfg.ring_slots) + usize::from(at)
}

fn to_worker(mut h: HorusHeader, dst_id: u16) -> HorusHeader {
    h.dst_id = dst_id;
    // The leaf counts its workers' tasks and needs no idle announcement: TASK_DONE, never
    // TASK_DONE_IDLE.
    h.qlen = 0;
    h
}

fn wrap_inc16(i: u16, n: u16) -> u16 {
    if i + 1 >= n { 0 } else { i + 1 }
}

fn wrap_add16(i: u16, d: u16, n: u16) -> u16 {
    let s = u32::from(i) + u32::from(d);
    (if s >= u32::from(n) {
        s - u32::from(n)
    } else {
        s
    }) as u16
}

fn wrap_inc32(i: u32, n: u32) -> u32 {
    if i + 1 >= n { 0 } else { i + 1 }
}

fn wrap_add32(i: u32, d: u32, n: u32) -> u32 {
    let s = i + d;
    if s >= n { s - n } else { s }
}

mod control;
mod setup;

impl Params {
    /// The signal parameters' defaults (link at 1, unlink at 0, report delta 1.0, repair gap
    /// 50 us), for a JBSQ pool configured without a configuration file.
    pub fn jbsq_default() -> Params {
        Params {
            link_at: 1,
            unlink_at: 0,
            report_delta: crate::fixed::Load::ONE,
            repair_gap_us: crate::config::DEFAULT_REPAIR_GAP_US,
        }
    }
}

/// A pool's rack average for `workers` workers and `tasks` outstanding, reported as it stands.
pub(crate) fn fresh_avg(workers: u32, tasks: u32) -> PoolAvg {
    let mut pa = PoolAvg {
        avg: RackAverage::new(workers),
        ..PoolAvg::default()
    };
    pa.avg.tasks = tasks;
    pa.reported = pa.avg.level();
    pa
}
