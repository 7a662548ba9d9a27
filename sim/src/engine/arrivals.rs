//! Arrivals: the clients' tasks and jobs, the spine a task enters at, the task slots, and the
//! workers' initial queues.

use super::*;

/// A pool's spine choice: a pod slot at random in proportion to the pool's workers there, from a
/// draw uniform over the workers (the pod whose workers hold it). After a failure notice, the
/// workers the controller knows alive (see [`Engine::live_pod_draw`]).
pub(super) struct PodDraw {
    /// Workers of the pods so far, increasing (strictly unless a pod's workers are all known
    /// dead); the last is the pool's workers.
    cumulative: Vec<u32>,
    /// The pod of draw `i << shift`, for each `i` up to the last draw's: where the search for a
    /// draw `x` starts (`x >> shift`), at most [`PodDraw::STARTS`] entries.
    start: Vec<u16>,
    shift: u32,
}

impl PodDraw {
    const STARTS: u32 = 64;

    pub(super) fn new(cumulative: Vec<u32>) -> Self {
        let total = *cumulative.last().expect("pool has pods");
        assert!(total > 0 && cumulative.len() <= usize::from(u16::MAX));
        debug_assert!(cumulative.is_sorted());
        let mut shift = 0;
        while (total - 1) >> shift >= Self::STARTS {
            shift += 1;
        }
        let start = (0..=(total - 1) >> shift)
            .map(|i| cumulative.partition_point(|&c| c <= i << shift) as u16)
            .collect();
        Self {
            cumulative,
            start,
            shift,
        }
    }

    /// Draws the pod from `rng`: `rng.random_range(0..workers)`, then the first pod whose
    /// cumulative count is above the draw (what `partition_point` finds), searched from the
    /// pod of the draw's start instead of by bisection.
    #[inline(always)]
    pub(super) fn draw(&self, rng: &mut SimRng) -> u32 {
        let c = &self.cumulative;
        let x = rng.random_range(0..*c.last().expect("pool has workers"));
        let mut pod = usize::from(self.start[(x >> self.shift) as usize]);
        while c[pod] <= x {
            pod += 1;
        }
        pod as u32
    }

    /// Prefetches what [`PodDraw::draw`] reads.
    #[inline(always)]
    pub(super) fn prefetch(&self) {
        crate::prefetch_slice(&self.cumulative);
        crate::prefetch_slice(&self.start);
    }
}

impl Engine {
    pub(super) fn schedule_arrival(&mut self, pool: u32) {
        let rng = &mut self.pool_rngs[pool as usize];
        if let Some(t) = self
            .cfg
            .load
            .next_arrival(
                self.now,
                self.capacity[pool as usize],
                rng,
                self.cfg
                    .bursts
                    .as_ref()
                    .zip(self.bursts.get_mut(pool as usize)),
            )
            .filter(|&t| t < self.cfg.sim_ns)
        {
            self.queue.push(t, Ev::Arrival(pool));
        }
    }

    pub(super) fn new_task(&mut self, pool: u32, service: Nanos, kind: u8, measured: bool) -> u32 {
        let task = Task {
            header: TaskHeader {
                pool,
                spine: 0,
                hint: 0,
                tag: 0,
                kind,
                job_left: 0,
            },
            arrival: self.now | if measured { MEASURED } else { 0 },
            service,
        };
        self.live_tasks += 1;
        self.metrics.pools[pool as usize].enter(self.now);
        self.store_task(task)
    }

    /// A slot for a task on its way.
    pub(super) fn store_task(&mut self, task: Task) -> u32 {
        match self.free_tasks.pop() {
            Some(i) => {
                self.tasks[i as usize] = task;
                i
            }
            None => {
                self.tasks.push(task);
                self.tasks.len() as u32 - 1
            }
        }
    }

    /// Frees a task's slot when it leaves the network (into a worker queue, or lost).
    pub(super) fn free_slot(&mut self, i: u32) {
        self.tasks[i as usize].arrival = Nanos::MAX;
        self.free_tasks.push(i);
    }

    pub(super) fn on_arrival(&mut self, pool: u32) {
        let (service, kind) = self.service.sample_kind(&mut self.pool_rngs[pool as usize]);
        let measured = self.now >= self.cfg.warmup_ns;
        let task = self.new_task(pool, service, kind, measured);
        if self.cfg.job_tasks > 1 {
            return self.on_job_arrival(pool, task, measured);
        }
        self.schedule_arrival(pool);
        let pod = self.draw_pod(pool);
        self.submit(pool, pod, task);
    }

    /// The spine scheduler (pod slot) a client of `pool` sends its next task or job to.
    #[inline(always)]
    pub(super) fn draw_pod(&mut self, pool: u32) -> u32 {
        let pod = self.pod_draws[pool as usize].draw(&mut self.entry_rng);
        if self.policy_prefetches {
            // Did the prefetch stages predict this draw (see `Engine::prefetch_ahead`)?
            if self.current_spine != pod {
                self.resync_spines();
            }
        }
        pod
    }

    /// A job of `cfg.job_tasks` tasks arrives (its first task is `first`): its tasks all go to one
    /// spine, one after another, and the job is done when the last of them is.
    #[cold]
    #[inline(never)]
    pub(super) fn on_job_arrival(&mut self, pool: u32, first: u32, measured: bool) {
        let mut tasks = vec![first];
        for _ in 1..self.cfg.job_tasks {
            let (service, kind) = self.service.sample_kind(&mut self.pool_rngs[pool as usize]);
            tasks.push(self.new_task(pool, service, kind, measured));
        }
        for (i, &task) in tasks.iter().enumerate() {
            self.tasks[task as usize].header.job_left = (tasks.len() - 1 - i) as u8;
        }
        self.schedule_arrival(pool);
        let pod = self.draw_pod(pool);
        // Two jobs of a pool arriving in the same nanosecond count as one.
        *self.jobs.entry((pool, self.now)).or_insert(0) += self.cfg.job_tasks;
        for task in tasks {
            self.submit(pool, pod, task);
        }
    }

    /// The spine choice of `pool` over the workers the controller knows alive and behind a
    /// live spine: clients stop sending to a pod where none is left. None when none is left
    /// anywhere (the pool's tasks are then lost wherever they go, and the draw stays as it was).
    pub(super) fn live_pod_draw(&self, pool: u32) -> Option<PodDraw> {
        let p = &self.cluster.pools[pool as usize];
        let hosts = &self.spine_host[pool as usize];
        let live = |(slot, d): (usize, &crate::cluster::SpineGroup)| -> u32 {
            if self.known_lost_spines[hosts[slot] as usize] {
                return 0;
            }
            let racks = &p.racks[d.first_rack as usize..(d.first_rack + d.racks) as usize];
            racks
                .iter()
                .filter(|r| !self.known_dead_racks[r.rack as usize])
                .map(|r| {
                    let first = p.worker_base + r.first_worker;
                    (first..first + r.workers)
                        .filter(|&w| !self.known_dead_workers[w as usize])
                        .count() as u32
                })
                .sum()
        };
        let cumulative: Vec<u32> = p
            .groups
            .iter()
            .enumerate()
            .scan(0, |acc, d| Some(*acc + live(d)).inspect(|&s| *acc = s))
            .collect();
        (cumulative.last().is_some_and(|&t| t > 0)).then(|| PodDraw::new(cumulative))
    }

    /// Starts each worker with a geometric(load) number of unmeasured tasks.
    pub(super) fn prefill(&mut self) {
        let rho = self.cfg.load.steps[0].1;
        let index = u64::MAX - u64::from(self.shard.index);
        let mut rng = rng::stream(self.cfg.seed, Stream::Workload, index);
        for w in 0..self.workers.len() as u32 {
            let pool = self.workers[w as usize].pool;
            while rng.random::<f64>() < rho {
                let service = self.served(w, self.service.sample(&mut rng));
                self.live_tasks += 1;
                self.metrics.pools[pool as usize].enter(self.now);
                self.enqueue(
                    w,
                    Queued {
                        arrival: self.now,
                        service,
                    },
                );
                // A busy worker is in no idle list: it announces itself when it runs dry.
                self.workers[w as usize].announce = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_draw_finds_the_pod_bisection_finds() {
        let shapes: [&[u32]; 6] = [
            &[1],
            &[7],
            &[3, 1, 4, 1, 5, 9, 2, 6],
            &[64; 16],
            &[1000, 1, 1, 250, 3000, 17],
            &[
                5, 500, 5, 500, 5, 500, 5, 500, 5, 500, 5, 500, 5, 500, 5, 500, 5, 500, 5, 500,
            ],
        ];
        for workers in shapes {
            let cumulative: Vec<u32> = workers
                .iter()
                .scan(0, |acc, &w| {
                    *acc += w;
                    Some(*acc)
                })
                .collect();
            let draw = PodDraw::new(cumulative.clone());
            assert!(draw.start.len() <= PodDraw::STARTS as usize);
            let total = *cumulative.last().unwrap();
            for x in 0..total {
                let mut pod = usize::from(draw.start[(x >> draw.shift) as usize]);
                while cumulative[pod] <= x {
                    pod += 1;
                }
                assert_eq!(
                    pod,
                    cumulative.partition_point(|&c| c <= x),
                    "{workers:?} {x}"
                );
            }
            // And the draws themselves, from the same stream.
            let (mut a, mut b) = (
                rng::stream(9, Stream::Entry, 0),
                rng::stream(9, Stream::Entry, 0),
            );
            for _ in 0..1000 {
                let x = b.random_range(0..total);
                assert_eq!(
                    draw.draw(&mut a) as usize,
                    cumulative.partition_point(|&c| c <= x)
                );
            }
        }
    }
}
