//! Failures: losses, a worker's, a switch's or a rack's failure, and the controller's notice.

use super::*;

/// Why a task was lost: in the network, or because of failure `i`.
#[derive(Clone, Copy)]
pub(super) enum Loss {
    Network,
    Failure(u32),
}

impl Engine {
    /// A task of `pool` that arrived at `arrival` left the system.
    pub(super) fn leave(&mut self, pool: u32, arrival: Nanos) {
        self.metrics.pools[pool as usize].leave(self.now, arrival);
        self.live_tasks -= 1;
    }

    pub(super) fn lose(&mut self, task: u32, why: Loss) {
        let t = &self.tasks[task as usize];
        let (header, arrival) = (t.header, t.arrival & !MEASURED);
        self.count_loss(header.pool, why);
        self.policy.on_task_lost(&header, self.now);
        self.leave(header.pool, arrival);
        self.free_slot(task);
    }

    pub(super) fn count_loss(&mut self, pool: u32, why: Loss) {
        self.metrics.pools[pool as usize].lost += 1;
        match why {
            Loss::Network => self.metrics.lost_in_network += 1,
            Loss::Failure(f) => {
                let m = &mut self.metrics.failures[f as usize];
                m.tasks_lost += 1;
                m.converge_us = m.converge_us.max(self.now as f64 / 1e3 - m.at_us);
            }
        }
    }

    /// Fails a worker: its queued tasks are lost now.
    pub(super) fn fail_worker(&mut self, worker: u32, f: u32) {
        let w = &mut self.workers[worker as usize];
        if w.failed {
            return;
        }
        w.failed = true;
        let (pool, local) = (w.pool, w.local);
        let lost: Vec<Nanos> = w.iter().map(Queued::arrival).collect();
        w.clear();
        for arrival in lost {
            self.count_loss(pool, Loss::Failure(f));
            self.policy.on_task_left_worker(pool, local, self.now);
            self.leave(pool, arrival);
        }
        // A node's queue is lost with its last core.
        if let Some(nodes) = self.nodes.as_mut() {
            let n = nodes.of[worker as usize];
            if nodes.cores_of(n).all(|c| self.workers[c as usize].failed) {
                let lost = std::mem::take(&mut nodes.waiting[n as usize]);
                for q in lost {
                    self.count_loss(pool, Loss::Failure(f));
                    self.policy.on_task_left_worker(pool, local, self.now);
                    self.leave(pool, q.arrival());
                }
            }
        }
    }

    // Rare (once per failure): kept out of the event loop, which it would otherwise enlarge.
    #[cold]
    #[inline(never)]
    pub(super) fn on_fail(&mut self, i: u32) {
        let spec = self.cfg.failures[i as usize];
        let topo = self.cluster.topology;
        match spec.target {
            FailureTarget::Worker(w) if w < self.shard.total_workers => {
                let Some(w) = self.shard.local_worker(w) else {
                    return; // another shard's worker: nothing failed here
                };
                self.workers[w as usize].failure = i;
                self.fail_worker(w, i);
            }
            FailureTarget::Leaf(r) if r < topo.racks() => {
                self.rack_failed[r as usize] = Some(i);
                // The tasks its queues held are lost with it.
                let lost: Vec<(u32, u32, u32)> = self
                    .held
                    .keys()
                    .filter(|&&(p, slot, _)| {
                        self.cluster.pools[p as usize].racks[slot as usize].rack == r
                    })
                    .copied()
                    .collect();
                for key in lost {
                    for task in self.held.remove(&key).unwrap_or_default() {
                        self.lose(task, Loss::Failure(i));
                    }
                }
                for w in 0..self.workers.len() as u32 {
                    if self.cluster.workers[w as usize].rack == r {
                        self.fail_worker(w, i);
                    }
                }
            }
            FailureTarget::Spine(s) if s < topo.spines() => {
                self.switch_failed[s as usize] = Some(i);
                // The tasks its schedulers held are lost with it.
                let lost: Vec<(u32, u32, u32)> = self
                    .spine_held
                    .keys()
                    .filter(|&&(p, pod, _)| self.spine_host[p as usize][pod as usize] == s)
                    .copied()
                    .collect();
                for key in lost {
                    for task in self.spine_held.remove(&key).unwrap_or_default() {
                        self.lose(task, Loss::Failure(i));
                    }
                }
            }
            other => unreachable!("{other} was checked against the topology and the pools"),
        }
        self.nothing_failed = false;
        // The controller reacts after detection plus the hops of its notices.
        self.queue.push(
            self.now + self.cfg.detect_ns + 2 * self.cfg.hop_delay_ns,
            Ev::Notice(i),
        );
    }

    // Rare (once per failure): kept out of the event loop, which it would otherwise enlarge.
    #[cold]
    #[inline(never)]
    pub(super) fn on_notice(&mut self, i: u32) {
        let spec = self.cfg.failures[i as usize];
        let mut notices = Vec::new();
        match spec.target {
            FailureTarget::Worker(w) => {
                let w = self
                    .shard
                    .local_worker(w)
                    .expect("only the worker's shard has its notice");
                self.known_dead_workers[w as usize] = true;
                self.nothing_dead = false;
                let info = self.cluster.workers[w as usize];
                let pool = &self.cluster.pools[info.pool as usize];
                let local = w - pool.worker_base;
                notices.push(FailureNotice::Worker {
                    pool: info.pool,
                    worker: local,
                });
                // The pool's last live worker of a live rack: the rack is gone for the pool.
                let slot = pool.worker_rack[local as usize];
                let r = &pool.racks[slot as usize];
                let first = pool.worker_base + r.first_worker;
                if !self.known_dead_racks[r.rack as usize]
                    && (first..first + r.workers).all(|x| self.known_dead_workers[x as usize])
                {
                    self.known_empty_racks[info.pool as usize][slot as usize] = true;
                    notices.push(FailureNotice::Rack {
                        pool: info.pool,
                        rack: slot,
                    });
                }
            }
            FailureTarget::Leaf(r) => {
                self.known_dead_racks[r as usize] = true;
                self.nothing_dead = false;
                for (p, pool) in self.cluster.pools.iter().enumerate() {
                    if let Some(slot) = pool.racks.iter().position(|x| x.rack == r) {
                        notices.push(FailureNotice::Rack {
                            pool: p as u32,
                            rack: slot as u32,
                        });
                    }
                }
            }
            FailureTarget::Spine(s) => {
                // Re-host every pool spine of the failed switch on the next live switch of its
                // pod, or else of the next pod of its group that has one (the group's racks in
                // that pod become the spine's one-hop racks).
                let per_pod = self.cluster.topology.racks_per_pod();
                let topo = self.cluster.topology;
                let mut stranded = Vec::new();
                for (p, hosts) in self.spine_host.iter_mut().enumerate() {
                    for (d, host) in hosts.iter_mut().enumerate() {
                        if *host != s {
                            continue;
                        }
                        let pool = &mut self.cluster.pools[p];
                        let g = &pool.groups[d];
                        let racks =
                            &pool.racks[g.first_rack as usize..(g.first_rack + g.racks) as usize];
                        let mut pods = vec![s / per_pod];
                        for r in racks {
                            let pod = topo.pod_of_rack(r.rack);
                            if !pods.contains(&pod) {
                                pods.push(pod);
                            }
                        }
                        let live = |c: u32| self.switch_failed[c as usize].is_none();
                        let replacement = pods.iter().find_map(|&pod| {
                            (0..per_pod)
                                .map(|k| pod * per_pod + (s % per_pod + k) % per_pod)
                                .find(|&c| live(c))
                        });
                        let Some(c) = replacement else {
                            stranded.push(p as u32);
                            continue;
                        };
                        *host = c;
                        let pod = c / per_pod;
                        if pod != pool.groups[d].pod {
                            let first = racks
                                .iter()
                                .position(|r| topo.pod_of_rack(r.rack) == pod)
                                .expect("the pod holds racks of the group");
                            let n = racks
                                .iter()
                                .filter(|r| topo.pod_of_rack(r.rack) == pod)
                                .count();
                            let g = &mut pool.groups[d];
                            g.pod = pod;
                            g.home_first = g.first_rack + first as u32;
                            g.home_racks = n as u32;
                        }
                        notices.push(FailureNotice::SpineRestarted {
                            pool: p as u32,
                            pod: d as u32,
                        });
                    }
                }
                // No live switch left in the pods of some of its groups: those spines are gone
                // for good.
                if !stranded.is_empty() {
                    self.known_lost_spines[s as usize] = true;
                }
                for pool in stranded {
                    if let Some(draw) = self.live_pod_draw(pool) {
                        self.pod_draws[pool as usize] = draw;
                    }
                }
            }
        }
        for n in notices {
            if let FailureNotice::Worker { pool, .. } | FailureNotice::Rack { pool, .. } = n
                && let Some(draw) = self.live_pod_draw(pool)
            {
                self.pod_draws[pool as usize] = draw;
            }
            self.with_policy(|p, ctx| p.on_failure_notice(ctx, n));
        }
    }
}
