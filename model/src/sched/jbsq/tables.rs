//! The JBSQ leaf's tables, in stage order, its sizes and its counters.
//!
//! Each table is a register array (or, for the task buffer, a URAM block) that a pipeline keeps in
//! exactly one stage; [`JbsqStage`] lists them in pipeline order, and a pass touches each at most
//! once, in that order (checked in debug builds, as the paper's leaf is by `AccessGuard`).

use crate::fixed::RackAverage;
use crate::sched::state::{AddrEntry, ConnEntry, Params, PoolAvg, SpineRef};
use crate::wire::HorusHeader;

/// Token rings (levels) per pool. Place `j` (0-based) of a worker with bound `k` is in level
/// `floor(j · LEVELS / k)` ([`level_of`]): the fraction of its bound a worker has in use, so that
/// with one `k` the levels rank workers by their outstanding tasks and with `k` by speed they
/// rank them by the time a new task would wait. `k` is 1 to 255.
pub const LEVELS: usize = 8;

/// The token ring of a worker's place `place` when its bound is `k`.
#[inline]
pub fn level_of(place: u16, k: u8) -> usize {
    usize::from(place) * LEVELS / usize::from(k.max(1))
}

/// The most slots a pool's region of the task buffer may have: the pipeline's offsets within a
/// region, and their sums, are 16 bits (`docs/jbsq-pipeline.md`).
pub const MAX_QUEUE_SLOTS: u32 = 1 << 15;

/// The JBSQ leaf's table sizes: a preset, as the paper's leaf has `Sizes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JbsqSizes {
    /// Pool slots; pool IDs are below it.
    pub pools: u16,
    /// Node slots; node IDs are below it and the pools' capacities sum to at most it.
    pub nodes: u16,
    /// Task-buffer slots, shared out among the pools by the control plane (each pool a region).
    pub buffer_slots: u32,
    /// Token-ring entries, shared out among the pools (each pool `LEVELS` rings of its
    /// `ring_slots`).
    pub ring_entries: u32,
    /// The largest task (its whole frame) a slot holds, in bytes.
    pub slot_bytes: u16,
    /// Connection-table entries (the continuations of multi-packet tasks), a power of two: the
    /// paper leaf's table (`sizes.conn_table`).
    pub conn_table: u32,
}

impl JbsqSizes {
    /// The FPGA preset: 64 pools, 4,096 nodes, 65,536 ring entries, 4,096 held tasks of up to
    /// 256 bytes (1 MiB: 29 URAM288 blocks by its bits; the pipeline's frame store, four
    /// 512-bit beats a slot, takes 32: `docs/jbsq-pipeline.md`).
    pub const DEFAULT: JbsqSizes = JbsqSizes {
        pools: 64,
        nodes: 4096,
        buffer_slots: 4096,
        ring_entries: 65536,
        slot_bytes: 256,
        conn_table: 1024,
    };

    /// For tests: 4 pools, 64 nodes, 64 held tasks.
    pub const SMALL: JbsqSizes = JbsqSizes {
        pools: 4,
        nodes: 64,
        buffer_slots: 64,
        ring_entries: 1024,
        slot_bytes: 256,
        conn_table: 64,
    };
}

/// What a task does when no worker has a free place and its pool's region of the buffer is full
/// (or the task cannot be held: see [`crate::sched::jbsq`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// To the worker of the pass's first random sample, over its bound (counted `fallback`).
    #[default]
    Random,
    /// Dropped (counted `dropped`).
    Drop,
}

/// What the leaf's link rule counts as the rack's idleness towards the spine.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Advertise {
    /// Workers with nothing outstanding: the tokens of level 0 (the paper's idle workers when
    /// `k` is 1).
    #[default]
    Idle,
    /// Free places: every token, at any level (the rack can take a task without holding it).
    Places,
    /// The rack's queue (decision 32): linked while it holds fewer than `room` tasks, linked
    /// again only when it holds none and has a free place (at least `link_at`). `room` 0 is
    /// [`Advertise::Places`].
    Queue { room: u16 },
}

impl Advertise {
    /// The link rule's verdicts from `queueCtl`'s ring counts and held depth, and the pool's
    /// thresholds: (a rack may link, a rack must unlink).
    pub fn link(
        self,
        ring_count: &[u16],
        depth: u32,
        link_at: u16,
        unlink_at: u16,
    ) -> (bool, bool) {
        let places: u32 = ring_count.iter().map(|&c| u32::from(c)).sum();
        let (link_at, unlink_at) = (u32::from(link_at), u32::from(unlink_at));
        match self {
            Advertise::Idle => {
                let idle = ring_count.first().map_or(0, |&c| u32::from(c));
                (idle >= link_at, idle <= unlink_at)
            }
            Advertise::Places | Advertise::Queue { room: 0 } => {
                (places >= link_at, places <= unlink_at)
            }
            Advertise::Queue { room } => (
                depth == 0 && places >= link_at,
                places <= unlink_at && depth >= u32::from(room),
            ),
        }
    }
}

/// A pool's configuration, as the control plane writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JbsqPool {
    /// The pool's region of node slots (members and token rings): `[base, base + capacity)`.
    pub base: u16,
    pub capacity: u16,
    /// Places per worker unless a worker has its own (1..=255).
    pub k: u8,
    /// The pool's token rings: level `j`'s entries are
    /// `ring_base + j · ring_slots .. ring_base + (j + 1) · ring_slots`.
    pub ring_base: u32,
    pub ring_slots: u16,
    /// The pool's region of the task buffer: `[queue_base, queue_base + queue_slots)`.
    pub queue_base: u32,
    pub queue_slots: u32,
    pub fallback: Fallback,
    pub advertise: Advertise,
    /// A packet's pass links or unlinks the rack only this many microseconds after the pool's
    /// last idle message (0: at once, the paper's rule); what changed meanwhile is sent by the
    /// first pass after it that runs the link rule.
    pub hold_us: u16,
    pub params: Params,
    pub spine: Option<SpineRef>,
}

/// What a pool's settings pass changes live (decision 36): its bound for the workers added
/// later, its hold and its signal parameters, and whether it holds tasks (decision 37). Its
/// regions, fallback, what it advertises and its spine are its configuration's (its region of
/// the buffer moves by [`JbsqLeaf::move_buffer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    pub k: u8,
    pub hold_us: u16,
    pub params: Params,
    /// Whether the pool holds tasks (decision 37: off while its buffer region moves).
    pub holds: bool,
}

impl PoolSettings {
    /// The settings `cfg` has.
    pub fn of(cfg: &JbsqPool) -> PoolSettings {
        PoolSettings {
            k: cfg.k,
            hold_us: cfg.hold_us,
            params: cfg.params,
            holds: true,
        }
    }
}

/// The pipeline stages that own a table, in the order a pass visits them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JbsqStage {
    /// `poolCfg[pool]`: regions, `k`, fallback, member count `n`, signal parameters, spine.
    PoolCfg,
    /// `nodeCfg[node]`: active, pool, generation, `k` of the node (control passes write it).
    NodeCfg,
    /// `queueCtl[pool]`: per level the token ring's head and count; the held queue's head, depth
    /// and greatest depth.
    QueueCtl,
    /// `link[pool]`: the spine link flag and the time of the last idle message: the link rule,
    /// on the counts and depth `queueCtl` left.
    Link,
    /// `ring[ring_base + j · ring_slots + i]`: the tokens (free places) of each level, a ring
    /// per level (a pass touches one entry).
    Ring,
    /// `members[base + i]`: the pool's nodes, for the fallback's random sample.
    Members,
    /// `memberSlot[node]`: where a node sits in `members` (control passes only).
    MemberSlot,
    /// `outstanding[node]`: tasks sent and not answered, and the generation (tokens check it).
    Outstanding,
    /// `poolAvg[pool]`: the rack average, held tasks included, and the last report.
    PoolAvg,
    /// `taskBuf[queue_base + i]`: held tasks (a URAM block).
    TaskBuf,
    /// `conn[hash(pool, seq)]`: the node of a multi-packet task, for its continuations (the
    /// paper leaf's table; decision 34).
    Conn,
    /// `nodeAddr[node]`: the node's address and egress port, and its pool (the paper leaf's
    /// table; decision 34).
    NodeAddr,
}

impl JbsqStage {
    pub const ALL: [JbsqStage; 12] = [
        JbsqStage::PoolCfg,
        JbsqStage::NodeCfg,
        JbsqStage::QueueCtl,
        JbsqStage::Link,
        JbsqStage::Ring,
        JbsqStage::Members,
        JbsqStage::MemberSlot,
        JbsqStage::Outstanding,
        JbsqStage::PoolAvg,
        JbsqStage::TaskBuf,
        JbsqStage::Conn,
        JbsqStage::NodeAddr,
    ];
}

/// `poolCfg` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolCfgEntry {
    pub cfg: JbsqPool,
    /// Members.
    pub n: u16,
    /// The pool holds a task that finds no place while its region has room (decision 37: not
    /// while the host moves its region, so that its queue drains; such a task is counted
    /// `buffer_full` and takes the fallback).
    pub holds: bool,
}

/// `nodeCfg` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCfgEntry {
    pub active: bool,
    pub pool: u16,
    /// Bumped when the node is removed: its tokens still in a ring are then stale.
    pub generation: u8,
    pub k: u8,
}

/// `queueCtl` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCtl {
    /// Per level: the ring's oldest token (offset in the pool's region) and how many it holds.
    pub ring_head: [u16; LEVELS],
    pub ring_count: [u16; LEVELS],
    /// The held queue: its oldest task (offset in the pool's buffer region) and how many.
    pub queue_head: u32,
    pub depth: u32,
    pub max_depth: u32,
}

/// `link` entry: the pool's side of the spine's idle list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkEntry {
    /// The rack is in the spine's idle list, as far as the leaf told it.
    pub linked: bool,
    /// When the leaf last sent an idle message for the pool, wrapping microseconds.
    pub signaled_us: u32,
}

/// A token: one free place at a worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Token {
    pub node: u16,
    pub generation: u8,
}

/// `outstanding` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutstandingEntry {
    pub active: bool,
    pub generation: u8,
    pub tasks: u16,
}

/// A held task: what the buffer's slot keeps (the frame's bytes with it, in the pipeline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldTask {
    pub header: HorusHeader,
    /// The frame's length in bytes.
    pub len: u16,
    /// When it arrived, wrapping microseconds.
    pub time_us: u32,
}

/// The tables, each in its stage.
#[derive(Clone, Debug)]
pub struct JbsqTables {
    pub pool_cfg: Vec<Option<PoolCfgEntry>>,
    pub node_cfg: Vec<NodeCfgEntry>,
    pub queue_ctl: Vec<QueueCtl>,
    pub link: Vec<LinkEntry>,
    pub rings: Vec<Token>,
    pub members: Vec<u16>,
    pub member_slot: Vec<u16>,
    pub outstanding: Vec<OutstandingEntry>,
    pub avg: Vec<PoolAvg>,
    pub buf: Vec<Option<HeldTask>>,
    pub conn: Vec<ConnEntry>,
    pub node_addr: Vec<Option<AddrEntry>>,
}

impl JbsqTables {
    pub fn new(s: JbsqSizes) -> JbsqTables {
        let (pools, nodes) = (usize::from(s.pools), usize::from(s.nodes));
        JbsqTables {
            pool_cfg: vec![None; pools],
            node_cfg: vec![NodeCfgEntry::default(); nodes],
            queue_ctl: vec![QueueCtl::default(); pools],
            link: vec![LinkEntry::default(); pools],
            rings: vec![Token::default(); s.ring_entries as usize],
            members: vec![0; nodes],
            member_slot: vec![0; nodes],
            outstanding: vec![OutstandingEntry::default(); nodes],
            avg: vec![
                PoolAvg {
                    avg: RackAverage::new(0),
                    ..PoolAvg::default()
                };
                pools
            ],
            buf: vec![None; s.buffer_slots as usize],
            conn: vec![ConnEntry::default(); s.conn_table as usize],
            node_addr: vec![None; nodes],
        }
    }
}

/// Records the tables a pass touched and (debug builds) checks the switch rule: each table at
/// most once, in stage order.
#[derive(Clone, Debug, Default)]
pub struct JbsqGuard {
    touched: Vec<JbsqStage>,
}

impl JbsqGuard {
    pub(crate) fn begin(&mut self) {
        self.touched.clear();
    }

    #[inline]
    pub(crate) fn touch(&mut self, stage: JbsqStage) {
        #[cfg(debug_assertions)]
        if let Some(&last) = self.touched.last() {
            assert!(
                last < stage,
                "switch rule broken: {stage:?} touched after {last:?} in one pass ({:?})",
                self.touched
            );
        }
        self.touched.push(stage);
    }

    pub fn touched(&self) -> &[JbsqStage] {
        &self.touched
    }
}

/// The JBSQ leaf's counters (the register map's planned `JBSQ_*` block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JbsqCounters {
    /// Tasks whose first pass ran for a configured pool.
    pub tasks: u64,
    /// Tasks that took a free place at once.
    pub placed: u64,
    /// Tasks put in the buffer.
    pub held: u64,
    /// Held tasks sent to a worker (by a reply's pass or a token's pass).
    pub released: u64,
    /// Tasks that found their pool's region of the buffer full.
    pub buffer_full: u64,
    /// Tasks sent over a worker's bound ([`Fallback::Random`], or a task that cannot be held).
    pub fallback: u64,
    /// Tasks dropped ([`Fallback::Drop`], or a pool with no member).
    pub dropped: u64,
    /// The deepest any pool's held queue has been.
    pub max_depth: u32,
    /// Tokens of a removed node that a task popped (the task then takes a second pass).
    pub stale_tokens: u64,
    /// Tokens that found their ring full (after removals and re-adds) and were dropped.
    pub token_overflow: u64,
    /// Replies from a node that is not an active node of their pool (forwarded, no update).
    pub replies_not_in_pool: u64,
    /// Replies from a node counted at 0 tasks (a duplicate, or late for a task lost with a
    /// removal; decision 33): forwarded, no place returned.
    pub replies_spurious: u64,
    /// Second passes handed out.
    pub resubmits: u64,
    pub sent_idle_add: u64,
    pub sent_idle_remove: u64,
    pub sent_load_update: u64,
    /// Idle messages re-sent because a spine task's flag disagreed (§A.3).
    pub idle_repairs: u64,
    /// Held tasks of a pool configured afresh while it held them (decision 30): discarded.
    pub discarded: u64,
    /// Packets of a pool that is not configured (tasks, continuations, replies: a reply still
    /// goes on to its client).
    pub unknown_pool: u64,
    /// Packets of a type this leaf does not schedule (spine messages, legacy types,
    /// NEW_TASK_RANDOM): dropped.
    pub not_scheduled: u64,
    /// Control frames (KEEP_ALIVE, WORKER_ID, WORKER_ID_ACK, REMOVE_ACK) sent to the control
    /// port.
    pub to_control: u64,
    /// Continuations sent after their task's first packet.
    pub continuations: u64,
    /// Continuations with no connection entry (never made, expired, or its node gone):
    /// dropped.
    pub continuation_miss: u64,
    /// Connection entries written by a multi-packet task's first packet.
    pub conn_inserts: u64,
    /// First packets whose entry was held by another live task: not written (its continuations
    /// then miss).
    pub conn_collisions: u64,
    /// Entries found past the connection timeout (overwritten, or a continuation's miss).
    pub conn_expired: u64,
}

impl JbsqCounters {
    /// Every counter with its name, in register order.
    pub fn named(&self) -> [(&'static str, u64); 26] {
        [
            ("tasks", self.tasks),
            ("placed", self.placed),
            ("held", self.held),
            ("released", self.released),
            ("buffer_full", self.buffer_full),
            ("fallback", self.fallback),
            ("dropped", self.dropped),
            ("max_depth", u64::from(self.max_depth)),
            ("stale_tokens", self.stale_tokens),
            ("token_overflow", self.token_overflow),
            ("replies_not_in_pool", self.replies_not_in_pool),
            ("replies_spurious", self.replies_spurious),
            ("resubmits", self.resubmits),
            ("sent_idle_add", self.sent_idle_add),
            ("sent_idle_remove", self.sent_idle_remove),
            ("sent_load_update", self.sent_load_update),
            ("idle_repairs", self.idle_repairs),
            ("discarded", self.discarded),
            ("unknown_pool", self.unknown_pool),
            ("not_scheduled", self.not_scheduled),
            ("to_control", self.to_control),
            ("continuations", self.continuations),
            ("continuation_miss", self.continuation_miss),
            ("conn_inserts", self.conn_inserts),
            ("conn_collisions", self.conn_collisions),
            ("conn_expired", self.conn_expired),
        ]
    }
}
