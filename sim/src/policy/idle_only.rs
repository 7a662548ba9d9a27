//! Idle-only: Horus' idle tracking without its load tracking, the "idle selection only" ablation
//! of Horus Appendix C (Fig. 17).
//!
//! Leaves keep an idle list of their workers and spines an idle list of racks (Horus §3.3). A leaf
//! pops an idle worker for each task if it has one, else picks a random worker of the rack. It sends
//! idleAdd to its pod's spine when the rack gains an idle worker while unlinked, and idleRemove when
//! its list empties while linked. A spine sends each task to the rack on top of its idle list
//! without popping it (only idleRemove removes a rack), or to a random rack of its pod when the list
//! is empty. Lost idle messages are repaired as in Horus A.3: the spine tags a task with whether it
//! came from the idle list, and a leaf whose state disagrees with the tag resends its idle state.

use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader};
use crate::cluster::Cluster;

const IDLE_ADD: u8 = 0;
const IDLE_REMOVE: u8 = 1;
const NOT_LISTED: u32 = u32::MAX;

/// A set with O(1) push, pop, removal and membership: Horus' idleList plus idleIndex.
#[derive(Clone, Default)]
struct IdleList {
    items: Vec<u32>,
}

impl IdleList {
    fn push(&mut self, index: &mut [u32], node: u32) {
        if index[node as usize] == NOT_LISTED {
            index[node as usize] = self.items.len() as u32;
            self.items.push(node);
        }
    }

    fn remove(&mut self, index: &mut [u32], node: u32) {
        let at = index[node as usize];
        if at != NOT_LISTED {
            self.items.swap_remove(at as usize);
            if let Some(&moved) = self.items.get(at as usize) {
                index[moved as usize] = at;
            }
            index[node as usize] = NOT_LISTED;
        }
    }
}

struct PoolState {
    /// Per rack slot: idle workers, and whether the leaf believes its spine lists the rack.
    leaf_idle: Vec<IdleList>,
    linked: Vec<bool>,
    /// Per worker: position in its leaf's idle list.
    worker_index: Vec<u32>,
    /// Per pod slot: idle racks; per rack slot: position in its spine's idle list.
    spine_idle: Vec<IdleList>,
    rack_index: Vec<u32>,
}

pub struct IdleOnly {
    pools: Vec<PoolState>,
}

impl IdleOnly {
    pub fn new(cluster: &Cluster, queue_len: &[u32]) -> Self {
        let pools = cluster
            .pools
            .iter()
            .map(|p| {
                let mut s = PoolState {
                    leaf_idle: vec![IdleList::default(); p.racks.len()],
                    linked: vec![false; p.racks.len()],
                    worker_index: vec![NOT_LISTED; p.workers() as usize],
                    spine_idle: vec![IdleList::default(); p.groups.len()],
                    rack_index: vec![NOT_LISTED; p.racks.len()],
                };
                for w in 0..p.workers() {
                    if queue_len[(p.worker_base + w) as usize] == 0 {
                        s.leaf_idle[p.worker_rack[w as usize] as usize]
                            .push(&mut s.worker_index, w);
                    }
                }
                for (r, rack) in p.racks.iter().enumerate() {
                    if !s.leaf_idle[r].items.is_empty() {
                        s.linked[r] = true;
                        s.spine_idle[rack.group_slot as usize].push(&mut s.rack_index, r as u32);
                    }
                }
                s
            })
            .collect();
        Self { pools }
    }
}

fn idle_message(ctx: &mut Ctx, pool: u32, rack: u32, kind: u8) {
    let to = Node::Spine(ctx.cluster.pools[pool as usize].racks[rack as usize].group_slot);
    ctx.send(Message {
        pool,
        from: Node::Leaf(rack),
        to,
        kind,
        value: rack,
        value2: 0,
    });
}

impl Policy for IdleOnly {
    fn message_kinds(&self) -> &'static [&'static str] {
        &["idle-add", "idle-remove"]
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let s = &mut self.pools[task.pool as usize];
        let list = &mut s.spine_idle[task.spine as usize];
        while let Some(&rack) = list.items.last() {
            if ctx.rack_usable(task.pool, rack) {
                task.tag = 1;
                return Decision::to(rack);
            }
            list.remove(&mut s.rack_index, rack);
        }
        task.tag = 0;
        let pod = &ctx.cluster.pools[task.pool as usize].groups[task.spine as usize];
        let (first, count) = (pod.first_rack, pod.racks);
        Decision::to(ctx.random_rack(task.pool, first, count))
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let s = &mut self.pools[p as usize];
        let list = &mut s.leaf_idle[rack as usize];
        let has_idle = !list.items.is_empty();
        if (task.tag == 1) != has_idle {
            s.linked[rack as usize] = has_idle;
            idle_message(ctx, p, rack, if has_idle { IDLE_ADD } else { IDLE_REMOVE });
        }
        while let Some(w) = list.items.last().copied() {
            list.remove(&mut s.worker_index, w);
            if list.items.is_empty() && s.linked[rack as usize] {
                s.linked[rack as usize] = false;
                idle_message(ctx, p, rack, IDLE_REMOVE);
            }
            if ctx.worker_usable(p, w) {
                task.tag = 1;
                return Decision::to(w);
            }
        }
        task.tag = 0;
        let r = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (r.first_worker, r.workers);
        Decision::to(ctx.random_worker(p, first, count))
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        if reply.qlen != 0 {
            return;
        }
        let s = &mut self.pools[reply.pool as usize];
        s.leaf_idle[rack as usize].push(&mut s.worker_index, reply.worker);
        if !s.linked[rack as usize] {
            s.linked[rack as usize] = true;
            idle_message(ctx, reply.pool, rack, IDLE_ADD);
        }
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        let (Node::Spine(pod), Node::Leaf(rack)) = (msg.to, msg.from) else {
            return;
        };
        let s = &mut self.pools[msg.pool as usize];
        let list = &mut s.spine_idle[pod as usize];
        match msg.kind {
            IDLE_ADD => list.push(&mut s.rack_index, rack),
            _ => list.remove(&mut s.rack_index, rack),
        }
    }

    fn on_failure_notice(&mut self, _ctx: &mut Ctx, notice: FailureNotice) {
        // The restarted spine starts empty; its leaves re-advertise through the tag check.
        if let FailureNotice::SpineRestarted { pool, pod } = notice {
            let s = &mut self.pools[pool as usize];
            let list = &mut s.spine_idle[pod as usize];
            while let Some(&rack) = list.items.last() {
                list.remove(&mut s.rack_index, rack);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_list_keeps_index_consistent_through_removals() {
        let mut index = vec![NOT_LISTED; 5];
        let mut list = IdleList::default();
        for n in [3, 1, 4, 0] {
            list.push(&mut index, n);
        }
        list.push(&mut index, 1); // already listed: no duplicate
        assert_eq!(list.items, vec![3, 1, 4, 0]);
        list.remove(&mut index, 1);
        assert_eq!(list.items, vec![3, 0, 4]);
        assert_eq!(index, vec![1, NOT_LISTED, NOT_LISTED, 0, 2]);
        list.remove(&mut index, 2); // not listed: no effect
        assert_eq!(list.items.len(), 3);
    }
}
