//! The scheduler's invariants, checked by the tests and available to any harness.

use super::state::NodeState;
use super::{IdleIndex, Scheduler};
use crate::config::Role;

impl Scheduler {
    /// Checks every structural invariant of the tables. Meaningful when no resubmitted pass is in
    /// flight (between the two passes of an operation the tables are legitimately half-way).
    ///
    /// - Idle list (Algorithm 1): the idle nodes of a pool sit contiguously at
    ///   `idleList[base .. base + p]`, with no duplicates, each an active node of the pool whose
    ///   `idleIndex` names its position; every other node's `idleIndex` is `Absent`; no lock held.
    /// - Members: `members1` and `members2` are identical and list exactly the pool's active nodes,
    ///   each at the slot its `node` entry records.
    /// - The two copies of the load list, and of the drift list, are identical.
    /// - Pools' slot regions are disjoint and inside the tables.
    /// - Leaf: the link flag agrees with the thresholds (`!linked => p < link_at`,
    ///   `linked => p > unlink_at`).
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.in_flight != 0 {
            return Err(format!("{} resubmitted passes in flight", self.in_flight));
        }
        let t = &self.t;
        let nodes = usize::from(self.sizes.nodes);
        let mut seen_in_list = vec![false; nodes];
        let mut regions: Vec<(usize, usize, usize)> = Vec::new();
        for (pool, cfg) in t
            .pools
            .iter()
            .map(|r| &r.cfg)
            .enumerate()
            .filter(|(_, c)| c.valid)
        {
            let base = usize::from(cfg.base);
            let end = base + usize::from(cfg.capacity);
            if end > nodes || cfg.n > cfg.capacity {
                return Err(format!(
                    "pool {pool}: region [{base}, {end}) or n = {} out of bounds",
                    cfg.n
                ));
            }
            if let Some((other, _, _)) = regions.iter().find(|(_, b, e)| *b < end && base < *e) {
                return Err(format!("pool {pool}: region overlaps pool {other}"));
            }
            regions.push((pool, base, end));
            let ctl = t.pools[pool].ctl;
            if ctl.locked {
                return Err(format!(
                    "pool {pool}: idle list locked with nothing in flight"
                ));
            }
            if !(1..=ctl.p.max(1)).contains(&ctl.turn) {
                return Err(format!(
                    "pool {pool}: turn = {} outside 1..={}",
                    ctl.turn,
                    ctl.p.max(1)
                ));
            }
            if ctl.p > cfg.n {
                return Err(format!("pool {pool}: p = {} > n = {}", ctl.p, cfg.n));
            }
            for i in 0..usize::from(ctl.p) {
                let e = t.idle_list[base + i];
                let n = usize::from(e.node);
                let entry = t.nodes[n].node;
                if entry.state != NodeState::Active
                    || usize::from(entry.pool) != pool
                    || entry.factor != e.factor
                {
                    return Err(format!(
                        "pool {pool}: idleList[{i}] = node {n}, not an active node of the pool"
                    ));
                }
                if std::mem::replace(&mut seen_in_list[n], true) {
                    return Err(format!("pool {pool}: node {n} twice in the idle list"));
                }
                if t.nodes[n].idle_index != IdleIndex::Member(i as u16) {
                    return Err(format!(
                        "pool {pool}: idleIndex[{n}] = {:?}, expected Member({i})",
                        t.nodes[n].idle_index
                    ));
                }
            }
            let mut members = 0;
            for i in 0..usize::from(cfg.n) {
                let (m1, m2) = (t.members1[base + i], t.members2[base + i]);
                if m1 != m2 {
                    return Err(format!(
                        "pool {pool}: members1[{i}] = {m1:?} != members2[{i}] = {m2:?}"
                    ));
                }
                let entry = t.nodes[usize::from(m1.node)].node;
                if entry.state != NodeState::Active
                    || usize::from(entry.pool) != pool
                    || usize::from(entry.slot) != i
                    || entry.factor != m1.factor
                {
                    return Err(format!(
                        "pool {pool}: member slot {i} = node {} whose entry is {entry:?}",
                        m1.node
                    ));
                }
                members += 1;
            }
            let active = t
                .nodes
                .iter()
                .map(|r| r.node)
                .filter(|e| e.state == NodeState::Active && usize::from(e.pool) == pool)
                .count();
            if active != members {
                return Err(format!(
                    "pool {pool}: {active} active nodes but n = {members}"
                ));
            }
            if self.role == Role::Leaf && cfg.spine.is_some() {
                let p = ctl.p;
                let ok = if ctl.linked {
                    p > cfg.params.unlink_at
                } else {
                    p < cfg.params.link_at
                };
                if !ok {
                    return Err(format!(
                        "pool {pool}: linked = {} with p = {p} and {:?}",
                        ctl.linked, cfg.params
                    ));
                }
            }
        }
        for (n, &listed) in seen_in_list.iter().enumerate() {
            if !listed && t.nodes[n].idle_index != IdleIndex::Absent {
                return Err(format!(
                    "idleIndex[{n}] = {:?} but node {n} is not in an idle list",
                    t.nodes[n].idle_index
                ));
            }
            if t.nodes[n].load1 != t.nodes[n].load2 || t.nodes[n].drift1 != t.nodes[n].drift2 {
                return Err(format!(
                    "node {n}: load copies {:?}/{:?}, drift copies {:?}/{:?}",
                    t.nodes[n].load1, t.nodes[n].load2, t.nodes[n].drift1, t.nodes[n].drift2
                ));
            }
        }
        Ok(())
    }

    /// The idle nodes of `pool`, top of the list last (empty if the pool is not configured).
    pub fn idle_nodes(&self, pool: u16) -> Vec<u16> {
        let Some(cfg) = self
            .t
            .pools
            .get(usize::from(pool))
            .map(|r| r.cfg)
            .filter(|c| c.valid)
        else {
            return Vec::new();
        };
        let p = usize::from(self.t.pools[usize::from(pool)].ctl.p);
        let base = usize::from(cfg.base);
        self.t.idle_list[base..base + p]
            .iter()
            .map(|e| e.node)
            .collect()
    }

    /// A node's queue as this scheduler sees it: load + drift (first copies).
    pub fn queue_of(&self, node: u16) -> crate::fixed::Load {
        let i = usize::from(node);
        self.t.nodes[i].load1.corrected(self.t.nodes[i].drift1)
    }
}
