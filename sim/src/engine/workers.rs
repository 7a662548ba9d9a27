//! The workers: their queues, multi-core nodes and stealing, service and completion.

use super::*;

impl Engine {
    /// Puts a task at the end of a worker's queue, starting it if the worker was idle.
    pub(super) fn enqueue(&mut self, worker: u32, q: Queued) {
        let w = &mut self.workers[worker as usize];
        w.push_back(q);
        if w.len() == 1 {
            self.queue.push(self.now + q.service, Ev::Done(worker));
        }
    }

    pub(super) fn on_worker(&mut self, task: u32, worker: u32) {
        if !self.nothing_failed
            && let Some(f) = self.down(worker)
        {
            return self.lose(task, Loss::Failure(f));
        }
        let t = &self.tasks[task as usize];
        let (arrival, service) = (t.arrival, t.service & !RESUBMITTED);
        self.workers[worker as usize].announce |= t.header.tag != 0;
        self.free_slot(task);
        if self.nodes.is_some() {
            return self.node_receives(worker, Queued { arrival, service });
        }
        let q = Queued {
            arrival,
            service: self.served(worker, service),
        };
        self.enqueue(worker, q);
    }

    /// The failure that keeps global `worker` from taking a task, if any: its own, else its
    /// rack's; in node mode, where `worker` stands for its node, only once every core of the node
    /// is down: the last of the cores' own failures, else the rack's.
    pub(super) fn down(&self, worker: u32) -> Option<u32> {
        let w = &self.workers[worker as usize];
        let rack = self.rack_failed[w.rack as usize];
        let Some(nodes) = &self.nodes else {
            return if w.failure != NO_FAILURE {
                Some(w.failure)
            } else {
                rack
            };
        };
        let cores = nodes.cores_of(nodes.of[worker as usize]);
        if cores.clone().any(|c| !self.workers[c as usize].failed) {
            return None;
        }
        cores
            .map(|c| self.workers[c as usize].failure)
            .filter(|&f| f != NO_FAILURE)
            .max()
            .or(rack)
    }

    /// Node mode: a task (its service at speed 1) reached the node of global `worker`: it starts
    /// on an idle core, `worker` first, or waits in the node's queue.
    #[cold]
    pub(super) fn node_receives(&mut self, worker: u32, q: Queued) {
        let nodes = self.nodes.as_ref().expect("node mode");
        let n = nodes.of[worker as usize];
        let cores = nodes.cores_of(n);
        let (first, count) = (cores.start, cores.len() as u32);
        let idle = (0..count)
            .map(|i| first + (worker - first + i) % count)
            .find(|&c| {
                let w = &self.workers[c as usize];
                w.is_empty() && !w.failed
            });
        match idle {
            Some(c) => {
                let service = self.served(c, q.service);
                self.enqueue(
                    c,
                    Queued {
                        arrival: q.arrival,
                        service,
                    },
                );
            }
            None => self.nodes.as_mut().expect("node mode").waiting[n as usize].push_back(q),
        }
    }

    /// Node mode: core `worker` finished a task; if it is free it takes the node's oldest
    /// waiting task. The node's tasks, in service and waiting.
    #[cold]
    pub(super) fn next_from_node(&mut self, worker: u32) -> u32 {
        let nodes = self.nodes.as_mut().expect("node mode");
        let n = nodes.of[worker as usize] as usize;
        if self.workers[worker as usize].is_empty()
            && let Some(q) = nodes.waiting[n].pop_front()
        {
            let service = self.served(worker, q.service);
            self.enqueue(
                worker,
                Queued {
                    arrival: q.arrival,
                    service,
                },
            );
        }
        let nodes = self.nodes.as_ref().expect("node mode");
        let busy: u32 = nodes
            .cores_of(n as u32)
            .map(|c| self.workers[c as usize].len())
            .sum();
        busy + nodes.waiting[n].len() as u32
    }

    /// Groups the workers into nodes ([`Policy::node_queues`]): the tasks prefilled behind a
    /// core's first wait in its node's queue, and idle cores take them.
    #[cold]
    pub(super) fn make_nodes(&mut self) {
        let mut nodes = Nodes::new(&self.cluster);
        for n in 0..nodes.first.len() as u32 {
            for c in nodes.cores_of(n) {
                let speed = self.cluster.worker_speed(c);
                for q in self.workers[c as usize].take_waiting() {
                    nodes.waiting[n as usize].push_back(Queued {
                        arrival: q.arrival,
                        service: ((q.service as f64 * speed).round() as Nanos).max(1),
                    });
                }
            }
        }
        self.nodes = Some(Box::new(nodes));
        for w in 0..self.workers.len() as u32 {
            if self.workers[w as usize].is_empty() {
                self.next_from_node(w);
            }
        }
    }

    /// Puts the policy's steal requests on the wire: two hops, thief to leaf to victim.
    #[cold]
    pub(super) fn send_steals(&mut self) {
        let steals = std::mem::take(&mut self.steals);
        assert!(self.nodes.is_some(), "a steal needs Policy::node_queues");
        for s in &steals {
            let same_rack = {
                let p = &self.cluster.pools[s.pool as usize];
                p.worker_rack.get(s.thief as usize).is_some()
                    && p.worker_rack.get(s.thief as usize) == p.worker_rack.get(s.victim as usize)
            };
            assert!(
                same_rack,
                "steal {s:?} is not between two nodes of one rack"
            );
            if let Some(delay) = self.transmit(2, 0) {
                let i = self.nodes.as_mut().expect("node mode").send(*s);
                self.queue.push_after(delay, Ev::Steal(i));
            }
        }
        self.steals = steals;
        self.steals.clear();
    }

    /// A steal request reached the victim's node: its oldest waiting task, if any, goes to the
    /// thief's node, two hops away.
    #[cold]
    pub(super) fn on_steal(&mut self, i: u32) {
        let nodes = self.nodes.as_mut().expect("node mode");
        let s = nodes.arrived(i);
        let base = self.cluster.pools[s.pool as usize].worker_base;
        let victim = base + s.victim;
        if !self.nothing_failed && self.down(victim).is_some() {
            return; // nobody there to answer
        }
        let nodes = self.nodes.as_mut().expect("node mode");
        let n = nodes.of[victim as usize] as usize;
        let Some(q) = nodes.waiting[n].pop_front() else {
            self.with_policy(|p, ctx| p.on_steal(ctx, s, false));
            return;
        };
        let task = self.store_task(Task {
            header: TaskHeader {
                pool: s.pool,
                spine: 0,
                hint: s.thief + 1,
                tag: 0,
                kind: 0,
                job_left: 0,
            },
            arrival: q.arrival,
            service: q.service,
        });
        self.with_policy(|p, ctx| p.on_steal(ctx, s, true));
        match self.transmit(2, 0) {
            Some(delay) => self.queue.push_after(
                delay,
                Ev::AtWorker {
                    task,
                    worker: base + s.thief,
                },
            ),
            None => self.lose(task, Loss::Network),
        }
    }

    /// How long global worker `worker` takes for a task of service time `service` (at speed 1).
    pub(super) fn served(&self, worker: u32, service: Nanos) -> Nanos {
        if self.cluster.server_speeds.is_empty() {
            return service;
        }
        ((service as f64 / self.cluster.worker_speed(worker)).round() as Nanos).max(1)
    }

    pub(super) fn on_done(&mut self, worker: u32) {
        let w = &mut self.workers[worker as usize];
        if w.failed {
            return; // its queue was lost with it
        }
        let done = w.pop_front().expect("a Done event has a task in service");
        if let Some(next) = w.front() {
            let at = self.now + next.service;
            self.queue.push(at, Ev::Done(worker));
        }
        let mut qlen = w.len();
        let tag = u8::from(qlen == 0 && std::mem::take(&mut w.announce));
        let (pool, local) = (w.pool, w.local);
        if self.nodes.is_some() {
            qlen = self.next_from_node(worker);
        }
        self.metrics.pools[pool as usize].completed += 1;
        let arrival = done.arrival();
        if done.arrival & MEASURED != 0 {
            self.metrics.record(pool, self.now - arrival, done.service);
        }
        if !self.jobs.is_empty() {
            self.job_task_done(pool, arrival, done.arrival & MEASURED != 0);
        }
        self.leave(pool, arrival);
        self.policy.on_task_left_worker(pool, local, self.now);
        if let Some(delay) = self.transmit(1, 0) {
            self.queue.push_after(
                delay,
                Ev::Reply {
                    worker,
                    qlen,
                    service: u32::try_from(done.service).unwrap_or(u32::MAX),
                    tag,
                },
            );
        }
    }

    /// A task of the job of `pool` that arrived at `arrival` finished (prefilled tasks belong to
    /// no job): the job's response is recorded when its last task finishes.
    #[cold]
    pub(super) fn job_task_done(&mut self, pool: u32, arrival: Nanos, measured: bool) {
        if let Some(left) = self.jobs.get_mut(&(pool, arrival)) {
            *left -= 1;
            if *left == 0 {
                self.jobs.remove(&(pool, arrival));
                if measured {
                    self.metrics.record_job(self.now - arrival);
                }
            }
        }
    }
}
