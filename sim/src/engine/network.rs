//! The network: hops, loss, and the path of a task from spine to leaf to worker and of the
//! replies and policy messages back.

use super::*;

impl Engine {
    pub(super) fn node_hops(&self, pool: u32, a: Node, b: Node) -> u32 {
        // A spine is in its group's pod, a leaf in its rack's.
        let p = &self.cluster.pools[pool as usize];
        let topo = &self.cluster.topology;
        let pod_of = |n: Node| match n {
            Node::Spine(d) => p.groups[d as usize].pod,
            Node::Leaf(r) => topo.pod_of_rack(p.racks[r as usize].rack),
        };
        let same_pod = pod_of(a) == pod_of(b);
        match (a, b) {
            (Node::Spine(_), Node::Spine(_)) => 2,
            (Node::Leaf(_), Node::Leaf(_)) => {
                if same_pod {
                    2
                } else {
                    4
                }
            }
            _ => {
                if same_pod {
                    1
                } else {
                    3
                }
            }
        }
    }

    pub(super) fn draw_hops_to_loss(&mut self) -> u64 {
        if self.cfg.loss <= 0.0 || self.lossless {
            return u64::MAX;
        }
        let u: f64 = 1.0 - self.net_rng.random::<f64>(); // in (0, 1]
        (u.ln() / (1.0 - self.cfg.loss).ln())
            .floor()
            .min(u64::MAX as f64 / 2.0) as u64
    }

    /// Sends a packet over `hops` hops with `extra` processing time: its delay, or None if one of
    /// the hops lost it.
    pub(super) fn transmit(&mut self, hops: u32, extra: Nanos) -> Option<Nanos> {
        if self.hops_to_loss < hops as u64 {
            self.hops_to_loss = self.draw_hops_to_loss();
            return None;
        }
        self.hops_to_loss -= hops as u64;
        Some(hops as Nanos * self.cfg.hop_delay_ns + extra)
    }

    /// A new task reaches spine `pod` of its pool: the policy picks a rack, and it goes there.
    #[inline(always)]
    pub(super) fn submit(&mut self, pool: u32, pod: u32, task: u32) {
        if !self.nothing_failed
            && let Some(f) =
                self.switch_failed[self.spine_host[pool as usize][pod as usize] as usize]
        {
            return self.lose(task, Loss::Failure(f));
        }
        let mut header = self.tasks[task as usize].header;
        header.spine = pod;
        let d = self.with_policy(|p, ctx| p.on_task_at_spine(ctx, &mut header));
        if d.is_hold() {
            return self.hold_at_spine(pool, pod, d.queue, task, header);
        }
        let p = &self.cluster.pools[pool as usize];
        assert!(
            (d.node as usize) < p.racks.len(),
            "policy chose rack slot {} of a pool with {} racks",
            d.node,
            p.racks.len()
        );
        let hops = self.spine_leaf_hops(pool, pod, d.node);
        self.forward(task, header, d.passes, hops, |task| Ev::AtLeaf {
            task,
            rack: d.node,
        });
    }

    /// Hops from pool `pool`'s spine `pod` to its rack slot `rack`'s leaf.
    #[inline(always)]
    pub(super) fn spine_leaf_hops(&self, pool: u32, pod: u32, rack: u32) -> u32 {
        // The racks of the spine's own pod are `home_first..home_first + home_racks` of the pool:
        // the same as comparing the pods of the spine and of the rack, without reading the
        // rack's line.
        let group = &self.cluster.pools[pool as usize].groups[pod as usize];
        if rack.wrapping_sub(group.home_first) < group.home_racks {
            1
        } else {
            3
        }
    }

    /// A spine keeps a task in its queue `queue` of the pool ([`Decision::hold_in`]).
    #[cold]
    #[inline(never)]
    pub(super) fn hold_at_spine(
        &mut self,
        pool: u32,
        pod: u32,
        queue: u32,
        task: u32,
        header: TaskHeader,
    ) {
        self.tasks[task as usize].header = header;
        self.spine_held
            .entry((pool, pod, queue))
            .or_default()
            .push_back(task);
    }

    /// Stores the updated header and sends the task on, or loses it on the way.
    pub(super) fn forward(
        &mut self,
        task: u32,
        header: TaskHeader,
        passes: u32,
        hops: u32,
        ev: impl FnOnce(u32) -> Ev,
    ) {
        let t = &mut self.tasks[task as usize];
        t.header = header;
        if passes > 1 && t.service & RESUBMITTED == 0 {
            t.service |= RESUBMITTED;
            self.metrics.pools[header.pool as usize].resubmitted += 1;
        }
        match self.transmit(hops, (passes.max(1) - 1) as Nanos * self.cfg.resubmit_ns) {
            Some(delay) => self.queue.push_after(delay, ev(task)),
            None => self.lose(task, Loss::Network),
        }
    }

    pub(super) fn on_leaf(&mut self, task: u32, rack: u32) {
        let mut header = self.tasks[task as usize].header;
        let pool = &self.cluster.pools[header.pool as usize];
        if !self.nothing_failed
            && let Some(f) = self.rack_failed[pool.racks[rack as usize].rack as usize]
        {
            return self.lose(task, Loss::Failure(f));
        }
        let d = self.with_policy(|p, ctx| p.on_task_at_leaf(ctx, rack, &mut header));
        if d.is_hold() {
            self.tasks[task as usize].header = header;
            let queue = self.held.entry((header.pool, rack, d.queue)).or_default();
            queue.push_back(task);
            let len = queue.len();
            if self.held_lengths.len() <= len {
                self.held_lengths.resize(len + 1, 0);
            }
            self.held_lengths[len] += 1;
            return;
        }
        let pool = &self.cluster.pools[header.pool as usize];
        // A rack slot's workers are contiguous: the same check as `worker_rack[node] == rack`,
        // on the line the policy has just read.
        let r = &pool.racks[rack as usize];
        assert!(
            d.node.wrapping_sub(r.first_worker) < r.workers,
            "leaf of rack slot {rack} chose worker {} outside its rack",
            d.node
        );
        let worker = pool.worker_base + d.node;
        self.forward(task, header, d.passes, 1 + d.extra_hops, |task| {
            Ev::AtWorker { task, worker }
        });
    }

    /// Sends the tasks the policy released from its leaves' queues to their workers.
    #[cold]
    pub(super) fn release_held(&mut self) {
        let releases = std::mem::take(&mut self.releases);
        for r in &releases {
            let (pool, rack, queue, local) = (r.pool, r.rack, r.queue, r.worker);
            let held = match r.spine {
                Some(pod) => self.spine_held.get_mut(&(pool, pod, queue)),
                None => self.held.get_mut(&(pool, rack, queue)),
            };
            let task = held
                .and_then(|q| q.remove(r.index as usize))
                .unwrap_or_else(|| {
                    panic!("the policy released task {} of queue {queue} of pool {pool}'s rack slot {rack}, which does not hold it", r.index)
                });
            let p = &self.cluster.pools[pool as usize];
            let slot = &p.racks[rack as usize];
            assert!(
                local.wrapping_sub(slot.first_worker) < slot.workers,
                "leaf of rack slot {rack} released a task to worker {local} outside its rack"
            );
            let worker = p.worker_base + local;
            let header = self.tasks[task as usize].header;
            let hops = match r.spine {
                Some(pod) => self.spine_leaf_hops(pool, pod, rack) + 1,
                None => 1,
            };
            self.forward(task, header, r.passes, hops, |task| Ev::AtWorker {
                task,
                worker,
            });
        }
        self.releases = releases;
        self.releases.clear();
    }

    pub(super) fn on_reply(&mut self, worker: u32, qlen: u32, service_ns: u32, tag: u8) {
        let w = &self.workers[worker as usize];
        if !self.nothing_failed && self.rack_failed[w.rack as usize].is_some() {
            return;
        }
        let rack = w.rack_slot;
        let reply = Reply {
            pool: w.pool,
            worker: w.local,
            qlen,
            tag: u16::from(tag),
            service_ns,
        };
        self.with_policy(|p, ctx| p.on_reply_at_leaf(ctx, rack, reply));
    }

    pub(super) fn on_message(&mut self, i: u32) {
        let msg = self.messages[i as usize];
        self.free_messages.push(i);
        let pool = &self.cluster.pools[msg.pool as usize];
        let dead = !self.nothing_failed
            && match msg.to {
                Node::Spine(d) => self.switch_failed
                    [self.spine_host[msg.pool as usize][d as usize] as usize]
                    .is_some(),
                Node::Leaf(r) => self.rack_failed[pool.racks[r as usize].rack as usize].is_some(),
            };
        if !dead {
            self.with_policy(|p, ctx| p.on_message(ctx, msg));
        }
    }
}
