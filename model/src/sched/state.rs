//! The scheduler's tables, in stage order, and the guard that enforces the switch rule.
//!
//! Each table below is a register array that a pipeline keeps in exactly one stage. [`Stage`] lists
//! them in pipeline order; the model touches them in that order and at most once per pass, and in
//! debug builds [`AccessGuard`] checks both on every access, so a model change that a switch pipeline
//! could not run fails every test that exercises it.

use crate::config::{NodeConfig, PoolParams};
use crate::fixed::{Drift, Load, RackAverage};
use crate::wire::{Endpoint, HorusHeader};

/// The pipeline stages that own a table, in the order a pass visits them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// `poolCfg[pool]`: base and capacity of the pool's slot region, member count, parameters.
    PoolCfg,
    /// `node[node]`: state, pool, member slot and additive factor of each node.
    Node,
    /// `idleCtl[pool]`: the idle-list pointer `p`, the removal lock and (leaf) the spine link flag.
    IdleCtl,
    /// `idleList[base + i]`: idle nodes, contiguous at the top (Algorithm 1).
    IdleList,
    /// `idleIndex[node]`: where a node sits in the idle list, or that an add is pending.
    IdleIndex,
    /// `members1[base + i]`: the pool's nodes, sampled by the first random index.
    Members1,
    /// `members2[base + i]`: identical copy, sampled by the second random index.
    Members2,
    /// `loadList1[node]` (Algorithm 2).
    Load1,
    /// `loadList2[node]`: identical copy.
    Load2,
    /// `driftList1[node]`: read-modify-written by the lazy drift check.
    Drift1,
    /// `driftList2[node]`: identical copy.
    Drift2,
    /// `poolAvg[pool]` (leaf): the rack average and the value last reported to the spine.
    PoolAvg,
    /// `conn[hash(pool, taskID)]`: multi-packet task affinity (§A.4).
    Conn,
    /// `nodeAddr[node]`: where a task for the node goes (deparser rewrite).
    NodeAddr,
}

impl Stage {
    pub const ALL: [Stage; 14] = [
        Stage::PoolCfg,
        Stage::Node,
        Stage::IdleCtl,
        Stage::IdleList,
        Stage::IdleIndex,
        Stage::Members1,
        Stage::Members2,
        Stage::Load1,
        Stage::Load2,
        Stage::Drift1,
        Stage::Drift2,
        Stage::PoolAvg,
        Stage::Conn,
        Stage::NodeAddr,
    ];

    /// The table's name as the paper and the docs write it.
    pub fn table_name(self) -> &'static str {
        match self {
            Stage::PoolCfg => "poolCfg",
            Stage::Node => "node",
            Stage::IdleCtl => "idleCtl",
            Stage::IdleList => "idleList",
            Stage::IdleIndex => "idleIndex",
            Stage::Members1 => "members1",
            Stage::Members2 => "members2",
            Stage::Load1 => "loadList1",
            Stage::Load2 => "loadList2",
            Stage::Drift1 => "driftList1",
            Stage::Drift2 => "driftList2",
            Stage::PoolAvg => "poolAvg",
            Stage::Conn => "conn",
            Stage::NodeAddr => "nodeAddr",
        }
    }
}

/// Records the tables a pass touched, in order, and (debug builds) checks the switch rule.
#[derive(Clone, Debug, Default)]
pub struct AccessGuard {
    /// The tables touched since [`AccessGuard::begin`], four bits each, the latest in the lowest:
    /// the [`Stage`]'s index plus one (zero: none). A pass that keeps the rule touches at most the
    /// 14 tables; the last 16 touches are kept.
    log: u64,
}

impl AccessGuard {
    pub(crate) fn begin(&mut self) {
        self.log = 0;
    }

    /// Declares one access to `stage`'s table. Panics (debug builds) if the pass already touched
    /// this table or a later one: the model would then do something a pipeline cannot.
    #[inline]
    pub(crate) fn touch(&mut self, stage: Stage) {
        // The check: debug builds only, so that a release pass only records.
        #[cfg(debug_assertions)]
        {
            let last = Self::stage((self.log & 0xF) as usize);
            assert!(
                last.is_none_or(|last| last < stage),
                "switch rule broken: {stage:?} touched after {last:?} in one pass ({:?})",
                self.touched()
            );
        }
        self.log = (self.log << 4) | (stage as u64 + 1);
    }

    /// The stage a four-bit record names.
    fn stage(code: usize) -> Option<Stage> {
        code.checked_sub(1).map(|i| Stage::ALL[i])
    }

    /// The tables the last pass touched, in order.
    pub fn touched(&self) -> Vec<Stage> {
        let mut out: Vec<Stage> = (0..16)
            .map_while(|i| Self::stage(((self.log >> (4 * i)) & 0xF) as usize))
            .collect();
        out.reverse();
        out
    }
}

/// `poolCfg` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCfg {
    pub valid: bool,
    /// First slot of the pool's region in `idleList` and `members`.
    pub base: u16,
    /// Slots reserved for the pool.
    pub capacity: u16,
    /// Current number of nodes (`members[base .. base + n]`).
    pub n: u16,
    pub params: Params,
    /// Leaf: the spine this pool reports to, and our node ID at that spine.
    pub spine: Option<SpineRef>,
}

/// Per-pool parameters a leaf uses to decide what to tell its spine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// Link the rack to the spine's idle list when the idle count reaches this (>= 1).
    pub link_at: u16,
    /// Unlink it when the idle count falls to this or below (< `link_at`).
    pub unlink_at: u16,
    /// Send a load report when the average moved by at least this much since the last one.
    pub report_delta: Load,
    /// Re-send an idle message the spine's idle-selected flag shows was lost (§A.3) only when at
    /// least this many microseconds passed since the pool's last idle message from a packet's
    /// pass (`IdleCtl::signaled_us`); 0 re-sends on every disagreement.
    pub repair_gap_us: u16,
}

impl Params {
    pub fn is_valid(&self) -> bool {
        self.link_at >= 1 && self.unlink_at < self.link_at && self.report_delta.0 >= 1
    }
}

impl From<&PoolParams> for Params {
    fn from(p: &PoolParams) -> Params {
        Params {
            link_at: p.idle_link_at,
            unlink_at: p.idle_unlink_at,
            report_delta: Load(p.report_delta_raw),
            repair_gap_us: p.idle_repair_gap_us,
        }
    }
}

/// A leaf pool's link to a spine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpineRef {
    /// The spine switch's ID (it writes it into `src_id` of the tasks it forwards).
    pub id: u16,
    /// This leaf's node ID at that spine for this pool (`src_id` of our messages).
    pub node: u16,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeState {
    #[default]
    Free,
    Active,
}

/// `node` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeEntry {
    pub state: NodeState,
    pub pool: u16,
    /// Position in the pool's `members` lists.
    pub slot: u16,
    /// What one task adds to this node's load: 1.0 for a worker, 1/w for a rack of w workers.
    pub factor: Load,
}

/// `idleCtl` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdleCtl {
    /// The paper's `p`: number of idle nodes, which sit at `idleList[base .. base + p]`.
    pub p: u16,
    /// Held between the two passes of a removal from the middle of the list.
    pub locked: bool,
    /// Leaf: whether this rack is (believed to be) in the spine's idle list for the pool.
    pub linked: bool,
    /// Leaf: arrival time (microseconds, wrapping) of the packet whose pass sent the pool's last
    /// idle message; control passes leave it. Starts at 0.
    pub signaled_us: u32,
    /// Spine: the next task taken from the idle list goes to position `turn - 1`, and the idle
    /// racks take tasks in turn (`docs/algorithm.md`, decision 18). Counted from 1 and kept within
    /// `1..=max(p, 1)` from the pool's configuration on (0 before it): the position plus one is
    /// what the hardware's `idleList` stage checks its forwarding on, like a leaf's `p`.
    pub turn: u16,
}

/// An `idleList` / `members` entry: a node and its additive factor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeRef {
    pub node: u16,
    pub factor: Load,
}

/// `idleIndex` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdleIndex {
    #[default]
    Absent,
    /// An idleAdd passed its duplicate check; its commit pass is in flight.
    Pending,
    /// In the idle list at this position.
    Member(u16),
}

/// `poolAvg` entry (leaf). Packed to 4-byte alignment like [`RackAverage`] (24 bytes), so that
/// [`PoolRow`] fits one cache line: read `reported` by value (`{ entry.reported }`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct PoolAvg {
    pub avg: RackAverage,
    /// The average the last load report was decided on, in 16.16 without saturation
    /// ([`RackAverage::level`], 48 bits): the report rule compares with it, so that it needs no
    /// saturation test (`docs/algorithm.md`, decision 7). The load report itself carries it
    /// saturated to 16.16.
    pub reported: u64,
    /// Tasks from the pool's spine that the average counted since the last report (or the last
    /// control pass that rescaled the average or changed the parameters): the spine's view of the
    /// rack holds them already, so the report rule leaves them out (`docs/algorithm.md`,
    /// decision 19). Saturates at `u32::MAX`, which takes over four billion outstanding tasks.
    pub spine_tasks: u32,
}

impl PoolAvg {
    /// How far the average, less the spine's tasks, moved from the last report, in 16.16 levels
    /// (`|floor((acc - spine_tasks · unit) / 2^16) - reported|`): the report rule's measure.
    pub fn moved(&self) -> u64 {
        let own =
            i128::from(self.avg.acc()) - i128::from(self.spine_tasks) * i128::from(self.avg.unit);
        ((own >> 16) - i128::from(self.reported)).unsigned_abs() as u64
    }
}

/// `conn` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnEntry {
    pub valid: bool,
    pub pool: u16,
    pub seq: u16,
    pub node: u16,
    /// Time of insertion, microseconds, wrapping.
    pub stamp_us: u32,
}

/// How a task for a node leaves the switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeAddr {
    pub endpoint: Endpoint,
    /// Egress port.
    pub port: u8,
    /// Written into `dst_id`: the worker ID (leaf) or the leaf switch ID (spine).
    pub dst_id: u16,
}

impl NodeAddr {
    /// The address a configuration gives node `n`: `dst_id` its rack's leaf at a spine, its own
    /// ID at a leaf.
    pub fn of(n: &NodeConfig) -> NodeAddr {
        NodeAddr {
            endpoint: Endpoint {
                mac: n.mac,
                ip: n.ip,
                udp_port: n.udp_port,
            },
            port: n.port,
            dst_id: n.leaf.unwrap_or(n.id),
        }
    }
}

/// What a multi-packet task's first packet did to its `conn` entry (§A.4; both leaves' rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnWrite {
    /// Written; `expired` if it took the place of another task's expired entry.
    Written { expired: bool },
    /// Another task's live entry: kept, and this task's continuations will miss.
    Collision,
}

/// Why a continuation found no node in its `conn` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnMiss {
    /// No entry of its task (never written, or freed by its last packet).
    Absent,
    /// Its task's entry, past the timeout: freed.
    Expired,
}

impl ConnEntry {
    fn is_of(&self, h: &HorusHeader) -> bool {
        self.valid && self.pool == h.pool_id && self.seq == h.seq_num
    }

    fn expired(&self, now: u32, timeout_us: u32) -> bool {
        now.wrapping_sub(self.stamp_us) >= timeout_us
    }

    /// A first packet (`h`, more packets to follow) sent to `node` at `now`.
    pub fn write(&mut self, h: &HorusHeader, now: u32, node: u16, timeout_us: u32) -> ConnWrite {
        let other = self.valid && !self.is_of(h);
        if other && !self.expired(now, timeout_us) {
            return ConnWrite::Collision;
        }
        *self = ConnEntry {
            valid: true,
            pool: h.pool_id,
            seq: h.seq_num,
            node,
            stamp_us: now,
        };
        ConnWrite::Written { expired: other }
    }

    /// A continuation (`h`) at `now`: its task's node; the last packet frees the entry, as does
    /// a look past the timeout.
    pub fn follow(&mut self, h: &HorusHeader, now: u32, timeout_us: u32) -> Result<u16, ConnMiss> {
        if !self.is_of(h) {
            return Err(ConnMiss::Absent);
        }
        if self.expired(now, timeout_us) {
            self.valid = false;
            return Err(ConnMiss::Expired);
        }
        if h.is_last_packet() {
            self.valid = false;
        }
        Ok(self.node)
    }
}

/// One pool's entries of the per-pool tables: `poolCfg`, `idleCtl` and `poolAvg`.
///
/// Each table is one stage's register array (the [`Stage`]s a pass touches are what the switch
/// rule constrains); the model only stores a pool's entries side by side, in one cache line,
/// so that a pass reading several of them costs one memory access instead of one per table. That
/// matters when a simulator runs thousands of schedulers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
pub struct PoolRow {
    /// `poolCfg[pool]`.
    pub cfg: PoolCfg,
    /// `idleCtl[pool]`.
    pub ctl: IdleCtl,
    /// `poolAvg[pool]` (used by leaves only).
    pub avg: PoolAvg,
}

/// One node's entries of the per-node tables: `node`, `idleIndex`, `loadList1/2`, `driftList1/2`
/// and `nodeAddr`, side by side in one cache line (see [`PoolRow`] for why).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
pub struct NodeRow {
    /// `node[node]`.
    pub node: NodeEntry,
    /// `idleIndex[node]`.
    pub idle_index: IdleIndex,
    /// `loadList1[node]`.
    pub load1: Load,
    /// `loadList2[node]`.
    pub load2: Load,
    /// `driftList1[node]`.
    pub drift1: Drift,
    /// `driftList2[node]`.
    pub drift2: Drift,
    /// `nodeAddr[node]`.
    pub addr: Option<AddrEntry>,
}

/// All tables of one switch. The per-pool and per-node tables are stored by row ([`PoolRow`],
/// [`NodeRow`]): `poolCfg[p]` is `pools[p].cfg`, `loadList1[n]` is `nodes[n].load1`, and so on.
/// The slot-indexed tables (`idleList`, `members1/2`) and `conn` are arrays of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    pub pools: Vec<PoolRow>,
    pub nodes: Vec<NodeRow>,
    pub idle_list: Vec<NodeRef>,
    pub members1: Vec<NodeRef>,
    pub members2: Vec<NodeRef>,
    pub conn: Vec<ConnEntry>,
}

/// `nodeAddr` entry: the node's address and the pool it was added to (a continuation whose entry
/// names a node ID that now belongs to another pool must not follow it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrEntry {
    pub pool: u16,
    pub addr: NodeAddr,
}

impl Tables {
    pub fn new(pools: u16, nodes: u16, conn: u32) -> Tables {
        let p = usize::from(pools);
        let n = usize::from(nodes);
        Tables {
            pools: vec![PoolRow::default(); p],
            nodes: vec![NodeRow::default(); n],
            idle_list: vec![NodeRef::default(); n],
            members1: vec![NodeRef::default(); n],
            members2: vec![NodeRef::default(); n],
            conn: vec![ConnEntry::default(); conn as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "switch rule broken"))]
    fn touching_a_table_twice_or_out_of_order_breaks_the_switch_rule() {
        let mut g = AccessGuard::default();
        g.begin();
        g.touch(Stage::Load1);
        g.touch(Stage::Load1);
        // Release builds do not check; the order is still recorded.
        assert_eq!(g.touched(), vec![Stage::Load1, Stage::Load1]);
    }

    #[test]
    fn a_pool_row_and_a_node_row_fit_one_cache_line() {
        assert_eq!(std::mem::size_of::<PoolRow>(), 64);
        assert_eq!(std::mem::size_of::<NodeRow>(), 64);
    }

    #[test]
    fn the_guard_records_the_tables_a_pass_touched_in_order() {
        let mut g = AccessGuard::default();
        g.begin();
        g.touch(Stage::PoolCfg);
        g.touch(Stage::Drift2);
        assert_eq!(g.touched(), vec![Stage::PoolCfg, Stage::Drift2]);
        g.begin();
        assert!(g.touched().is_empty());
    }
}
