//! Control-plane operations, run as passes so that they serialise with traffic.
//!
//! Each operation is validated first, as the host does before it writes the control port
//! (`horusctl` runs the operations through this model before it prints the writes; a refused
//! operation changes nothing), then runs as one pass that obeys the switch rule; a node
//! removal needs two. A control pass is a barrier: it enters only when no resubmitted pass is in
//! flight, so the second pass of an idleAdd, an idleRemove or a task never meets a table that a
//! reconfiguration changed under it.

use thiserror::Error;

use super::state::{IdleCtl, NodeEntry, NodeState, PoolCfg};
use super::{
    AddrEntry, AvgChange, IdleIndex, NodeAddr, NodeRef, Params, PassResult, RemoveFinish, Resubmit,
    Scheduler, SpineRef, Stage,
};
use crate::config::{Config, Role};
use crate::fixed::{Load, MAX_WORKERS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlOp {
    /// Create or re-place an empty pool: its slot region `[base, base + capacity)` in the idle and
    /// member lists, its parameters, and (leaf) its spine.
    ConfigurePool {
        pool: u16,
        base: u16,
        capacity: u16,
        params: Params,
        spine: Option<SpineRef>,
    },
    /// Change a pool's parameters and its capacity (its slot region grows or shrinks in place,
    /// from the same base; never below its nodes); takes effect from the next pass.
    SetPoolParams {
        pool: u16,
        params: Params,
        capacity: u16,
    },
    /// Add a node to a pool. A leaf's new worker is idle: it is pushed onto the idle list. A spine's
    /// node is a rack of `workers` workers of the pool (its additive factor is `1/workers`).
    AddNode {
        pool: u16,
        node: u16,
        addr: NodeAddr,
        workers: u16,
    },
    /// Remove a node from its pool (a failed worker or rack): two passes.
    RemoveNode { pool: u16, node: u16 },
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ControlError {
    #[error("{0} resubmitted pass(es) in flight: a control pass waits until none is")]
    Busy(u32),
    #[error("{0}")]
    NotPaperLeaf(String),
    #[error("pool {pool} is out of range (the pool table has {limit} entries)")]
    PoolOutOfRange { pool: u16, limit: u16 },
    #[error("pool {0} is not configured")]
    PoolNotConfigured(u16),
    #[error("pool {0} still has nodes; remove them before re-placing it")]
    PoolNotEmpty(u16),
    #[error("pool {pool}: capacity {capacity} is below its {n} nodes")]
    BelowMembers { pool: u16, capacity: u16, n: u16 },
    #[error("pool {pool}: region [{base}, {end}) does not fit the {limit} node slots or is empty")]
    BadRegion {
        pool: u16,
        base: u16,
        end: u32,
        limit: u16,
    },
    #[error("pool {pool}: region overlaps pool {other}'s")]
    RegionOverlap { pool: u16, other: u16 },
    #[error(
        "pool {0}: invalid parameters (need link_at >= 1, unlink_at < link_at, report_delta > 0)"
    )]
    BadParams(u16),
    #[error("node {node} is out of range (the node table has {limit} entries)")]
    NodeOutOfRange { node: u16, limit: u16 },
    #[error("node {0} is already in use")]
    NodeInUse(u16),
    #[error("node {node} is not a node of pool {pool}")]
    NodeNotInPool { pool: u16, node: u16 },
    #[error("pool {0} is full")]
    PoolFull(u16),
    #[error("node {node}: worker count {workers} outside 1..={max}", max = MAX_WORKERS)]
    BadWorkerCount { node: u16, workers: u16 },
    #[error("pool {0}'s idle list is locked by a removal in flight; retry")]
    Locked(u16),
}

/// Values the host computes before it issues a control pass (the hardware's control pass carries
/// them; see [`Scheduler::host_values`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostValues {
    /// The new node's additive factor (a division at the spine).
    pub factor: Load,
    /// The rack average's unit for the new worker count (a division).
    pub unit: u64,
    /// The pool's last member, which a removal moves into the freed slot.
    pub last_member: NodeRef,
}

/// The control passes that configure a fresh scheduler from `cfg`: each pool's region is placed
/// after the previous pool's, in the order of the file.
pub fn config_ops(cfg: &Config) -> Vec<ControlOp> {
    let mut ops = Vec::new();
    let mut base = 0u16;
    for p in &cfg.pools {
        let spine = match (p.spine, p.spine_node) {
            (Some(id), Some(node)) if cfg.switch.role == Role::Leaf => Some(SpineRef { id, node }),
            _ => None,
        };
        ops.push(ControlOp::ConfigurePool {
            pool: p.id,
            base,
            capacity: p.capacity,
            params: (&p.params).into(),
            spine,
        });
        for n in &p.nodes {
            ops.push(ControlOp::AddNode {
                pool: p.id,
                node: n.id,
                addr: NodeAddr::of(n),
                workers: n.workers.unwrap_or(1),
            });
        }
        base = base.saturating_add(p.capacity);
    }
    ops
}

impl Scheduler {
    /// Runs a control operation. On `Err` nothing changed.
    ///
    /// What the host reads and computes before it issues the pass happens first, outside the
    /// pass: validation, the divisions (additive factor, rack-average unit) and, for a removal,
    /// the pool's last member. The pass itself only carries these values into the tables.
    pub fn control(&mut self, op: ControlOp) -> Result<PassResult, ControlError> {
        self.validate(&op)?;
        let host = self.host_values(&op);
        self.control_with(op, host)
    }

    /// Runs a control operation with the values a host computed for it (what the hardware's
    /// control pass carries; [`Scheduler::control`] computes them from this model's tables). The
    /// operation is validated first; on `Err` nothing changed.
    pub fn control_with(
        &mut self,
        op: ControlOp,
        host: HostValues,
    ) -> Result<PassResult, ControlError> {
        self.validate(&op)?;
        self.begin();
        self.counters.control_passes += 1;
        Ok(match op {
            ControlOp::ConfigurePool {
                pool,
                base,
                capacity,
                params,
                spine,
            } => {
                let p = usize::from(pool);
                self.touch(Stage::PoolCfg);
                self.t.pools[p].cfg = PoolCfg {
                    valid: true,
                    base,
                    capacity,
                    n: 0,
                    params,
                    spine,
                };
                self.touch(Stage::IdleCtl);
                self.t.pools[p].ctl = IdleCtl {
                    turn: 1,
                    ..Default::default()
                };
                self.touch(Stage::PoolAvg);
                self.t.pools[p].avg = Default::default();
                PassResult::default()
            }
            ControlOp::SetPoolParams {
                pool,
                params,
                capacity,
            } => {
                self.touch(Stage::PoolCfg);
                let cfg = &mut self.t.pools[usize::from(pool)].cfg;
                cfg.params = params;
                cfg.capacity = capacity;
                let cfg = *cfg;
                // New thresholds apply at once: the link rule runs as if `p` had just changed.
                self.touch(Stage::IdleCtl);
                let links = self.control_links();
                let ctl = &mut self.t.pools[usize::from(pool)].ctl;
                let signal = if links {
                    Scheduler::link_update(ctl, &cfg, self.profile, None, None)
                } else {
                    None
                };
                let mut r = PassResult::default();
                self.leaf_tail(pool, &cfg, AvgChange::Params, signal, &mut r);
                r
            }
            ControlOp::AddNode {
                pool, node, addr, ..
            } => self.add_node(pool, node, addr, host.factor, host.unit),
            ControlOp::RemoveNode { pool, node } => {
                self.remove_node_first(pool, node, host.last_member, host.unit)
            }
        })
    }

    fn check_pool(&self, pool: u16) -> Result<PoolCfg, ControlError> {
        if pool >= self.sizes.pools {
            return Err(ControlError::PoolOutOfRange {
                pool,
                limit: self.sizes.pools,
            });
        }
        let cfg = self.t.pools[usize::from(pool)].cfg;
        if cfg.valid {
            Ok(cfg)
        } else {
            Err(ControlError::PoolNotConfigured(pool))
        }
    }

    /// The slot region `[base, base + capacity)` for `pool`: non-empty, within the node slots,
    /// clear of every other configured pool's.
    fn check_region(&self, pool: u16, base: u16, capacity: u16) -> Result<(), ControlError> {
        let end = u32::from(base) + u32::from(capacity);
        if capacity == 0 || end > u32::from(self.sizes.nodes) {
            return Err(ControlError::BadRegion {
                pool,
                base,
                end,
                limit: self.sizes.nodes,
            });
        }
        let overlap = self
            .t
            .pools
            .iter()
            .map(|r| r.cfg)
            .enumerate()
            .find(|(i, c)| {
                *i != usize::from(pool)
                    && c.valid
                    && u32::from(c.base) < end
                    && u32::from(base) < u32::from(c.base) + u32::from(c.capacity)
            });
        match overlap {
            Some((other, _)) => Err(ControlError::RegionOverlap {
                pool,
                other: other as u16,
            }),
            None => Ok(()),
        }
    }

    fn check_node(&self, node: u16) -> Result<NodeEntry, ControlError> {
        if node >= self.sizes.nodes {
            return Err(ControlError::NodeOutOfRange {
                node,
                limit: self.sizes.nodes,
            });
        }
        Ok(self.t.nodes[usize::from(node)].node)
    }

    /// The values the host computes for `op` from the tables it reads (see [`Scheduler::control`]).
    /// Meaningful only for an `op` that [`Scheduler::validate`] accepts.
    pub fn host_values(&self, op: &ControlOp) -> HostValues {
        let mut h = HostValues::default();
        match *op {
            ControlOp::AddNode { pool, workers, .. } => {
                let n = self.t.pools[usize::from(pool)].cfg.n;
                h.factor = if self.role == Role::Leaf {
                    Load::ONE
                } else {
                    Load::additive_factor(u32::from(workers))
                };
                h.unit = self.profile().avg_unit(u32::from(n) + 1);
            }
            ControlOp::RemoveNode { pool, .. } => {
                let cfg = self.t.pools[usize::from(pool)].cfg;
                h.last_member = self.t.members1[usize::from(cfg.base) + usize::from(cfg.n) - 1];
                h.unit = self.profile().avg_unit(u32::from(cfg.n) - 1);
            }
            _ => {}
        }
        h
    }

    /// What the host checks before it issues `op`; reads only.
    pub fn validate(&self, op: &ControlOp) -> Result<(), ControlError> {
        if self.in_flight > 0 {
            return Err(ControlError::Busy(self.in_flight));
        }
        match *op {
            ControlOp::ConfigurePool {
                pool,
                base,
                capacity,
                params,
                ..
            } => {
                if pool >= self.sizes.pools {
                    return Err(ControlError::PoolOutOfRange {
                        pool,
                        limit: self.sizes.pools,
                    });
                }
                let cur = self.t.pools[usize::from(pool)].cfg;
                if cur.valid && cur.n > 0 {
                    return Err(ControlError::PoolNotEmpty(pool));
                }
                self.check_region(pool, base, capacity)?;
                if !params.is_valid() {
                    return Err(ControlError::BadParams(pool));
                }
            }
            ControlOp::SetPoolParams {
                pool,
                params,
                capacity,
            } => {
                let cfg = self.check_pool(pool)?;
                if capacity < cfg.n {
                    return Err(ControlError::BelowMembers {
                        pool,
                        capacity,
                        n: cfg.n,
                    });
                }
                self.check_region(pool, cfg.base, capacity)?;
                if !params.is_valid() {
                    return Err(ControlError::BadParams(pool));
                }
            }
            ControlOp::AddNode {
                pool,
                node,
                workers,
                ..
            } => {
                let cfg = self.check_pool(pool)?;
                if self.check_node(node)?.state != NodeState::Free {
                    return Err(ControlError::NodeInUse(node));
                }
                if cfg.n >= cfg.capacity {
                    return Err(ControlError::PoolFull(pool));
                }
                if self.role == Role::Spine && !(1..=MAX_WORKERS).contains(&u32::from(workers)) {
                    return Err(ControlError::BadWorkerCount { node, workers });
                }
            }
            ControlOp::RemoveNode { pool, node } => {
                self.check_pool(pool)?;
                let e = self.check_node(node)?;
                if e.state != NodeState::Active || e.pool != pool {
                    return Err(ControlError::NodeNotInPool { pool, node });
                }
                if self.t.pools[usize::from(pool)].ctl.locked {
                    return Err(ControlError::Locked(pool));
                }
            }
        }
        Ok(())
    }

    fn add_node(
        &mut self,
        pool: u16,
        node: u16,
        addr: NodeAddr,
        factor: Load,
        unit: u64,
    ) -> PassResult {
        let leaf = self.is_leaf();
        self.touch(Stage::PoolCfg);
        let cfg = &mut self.t.pools[usize::from(pool)].cfg;
        let slot = cfg.n;
        cfg.n += 1;
        let cfg = *cfg;
        let me = NodeRef { node, factor };
        self.touch(Stage::Node);
        self.t.nodes[usize::from(node)].node = NodeEntry {
            state: NodeState::Active,
            pool,
            slot,
            factor,
        };
        // A new worker has an empty queue: it is idle. A new rack is idle only when its leaf says so.
        let signal = if leaf {
            self.push_idle(pool, &cfg, me, None)
        } else {
            self.touch(Stage::IdleIndex);
            self.t.nodes[usize::from(node)].idle_index = IdleIndex::Absent;
            None
        };
        let at = usize::from(cfg.base) + usize::from(slot);
        self.touch(Stage::Members1);
        self.t.members1[at] = me;
        self.touch(Stage::Members2);
        self.t.members2[at] = me;
        self.set_load(node, Load::ZERO);
        let mut r = PassResult::default();
        let change = AvgChange::Rescale {
            unit,
            removed_tasks: 0,
        };
        self.leaf_tail(pool, &cfg, change, signal, &mut r);
        self.touch(Stage::NodeAddr);
        self.t.nodes[usize::from(node)].addr = Some(AddrEntry { pool, addr });
        r
    }

    /// First pass of a removal: free the node, take it out of the idle list (first half of the
    /// two-pass removal), move the pool's last member into its slot, clear its address and rescale
    /// the rack average without its queue. From here on no task can choose the node.
    fn remove_node_first(
        &mut self,
        pool: u16,
        node: u16,
        last_member: NodeRef,
        unit: u64,
    ) -> PassResult {
        self.touch(Stage::PoolCfg);
        let cfg = &mut self.t.pools[usize::from(pool)].cfg;
        cfg.n -= 1;
        let cfg = *cfg;
        self.touch(Stage::Node);
        let slot = self.t.nodes[usize::from(node)].node.slot;
        self.t.nodes[usize::from(node)].node = NodeEntry::default();
        let finish = self
            .remove_first(pool, &cfg, node)
            .unwrap_or(RemoveFinish::Nothing);
        let moved = (last_member.node != node).then_some((last_member.node, slot));
        if moved.is_some() {
            let at = usize::from(cfg.base) + usize::from(slot);
            self.touch(Stage::Members1);
            self.t.members1[at] = last_member;
            self.touch(Stage::Members2);
            self.t.members2[at] = last_member;
        }
        let i = usize::from(node);
        self.touch(Stage::Load1);
        let load = self.t.nodes[i].load1;
        self.touch(Stage::Drift1);
        let q = load.corrected(self.t.nodes[i].drift1);
        let mut r = PassResult::default();
        let change = AvgChange::Rescale {
            unit,
            removed_tasks: u32::from(q.integer()),
        };
        self.leaf_tail(pool, &cfg, change, None, &mut r);
        self.touch(Stage::NodeAddr);
        self.t.nodes[i].addr = None;
        if moved.is_some() || finish != RemoveFinish::Nothing {
            r.resubmit = Some(self.hand_out(Resubmit::RemoveNode {
                pool,
                moved,
                finish,
            }));
        }
        r
    }

    /// Second pass: record the moved member's new slot and finish the idle-list removal (the
    /// leaf's link rule runs here, once, on the final idle count).
    pub(super) fn remove_node_second(
        &mut self,
        pool: u16,
        moved: Option<(u16, u16)>,
        finish: RemoveFinish,
    ) -> PassResult {
        self.touch(Stage::PoolCfg);
        let cfg = self.t.pools[usize::from(pool)].cfg;
        if let Some((node, slot)) = moved {
            self.touch(Stage::Node);
            self.t.nodes[usize::from(node)].node.slot = slot;
        }
        let signal = self.remove_finish(pool, &cfg, finish);
        let mut r = PassResult::default();
        self.leaf_tail(pool, &cfg, AvgChange::None, signal, &mut r);
        r
    }
}
