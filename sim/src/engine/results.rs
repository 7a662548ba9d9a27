//! Results: the periodic samples, one shard's results, and the summary merged from every shard.

use super::*;

impl Engine {
    pub(super) fn on_sample(&mut self) {
        for (p, pool) in self.cluster.pools.iter().enumerate() {
            let workers = &self.workers
                [pool.worker_base as usize..(pool.worker_base + pool.workers()) as usize];
            let (sum, max) = workers.iter().fold((0u64, 0u32), |(s, m), w| {
                let len = w.len();
                (s + len as u64, m.max(len))
            });
            if sum > 0 {
                let ratio = max as f64 * workers.len() as f64 / sum as f64;
                self.metrics.pools[p]
                    .imbalance
                    .saturating_record((ratio * 1e3).round() as u64);
            }
        }
        if self.now + self.cfg.sample_ns < self.cfg.sim_ns {
            self.queue.push(self.now + self.cfg.sample_ns, Ev::Sample);
        }
    }

    /// The shard's results, with the time-averaged quantities (Little's law) taken up to `end`,
    /// the end of the whole run (the last event of any shard).
    pub(crate) fn finish(mut self, end: Nanos) -> ShardResult {
        self.metrics.flush();
        // Count unfinished tasks up to the end so that the area and the sojourns cover the same time.
        let mut unfinished = 0;
        for t in &self.tasks {
            if t.arrival != Nanos::MAX {
                unfinished += 1;
                let pm = &mut self.metrics.pools[t.header.pool as usize];
                pm.sojourn_sum += (end - (t.arrival & !MEASURED)) as u128;
            }
        }
        for w in &self.workers {
            for q in w.iter() {
                unfinished += 1;
                self.metrics.pools[w.pool as usize].sojourn_sum += (end - q.arrival()) as u128;
            }
        }
        if let Some(nodes) = &self.nodes {
            for (n, waiting) in nodes.waiting.iter().enumerate() {
                let pool = self.workers[nodes.first[n] as usize].pool;
                for q in waiting {
                    unfinished += 1;
                    self.metrics.pools[pool as usize].sojourn_sum += (end - q.arrival()) as u128;
                }
            }
        }
        let m = &mut self.metrics;
        let mut pools = Vec::with_capacity(m.pools.len());
        let mut totals = Totals {
            unfinished,
            ..Totals::default()
        };
        for (i, pm) in m.pools.iter_mut().enumerate() {
            pm.area += pm.in_system as u128 * (end - pm.last_change) as u128;
            pm.last_change = end;
            totals.add(&Totals {
                area: pm.area,
                sojourn: pm.sojourn_sum,
                tasks: pm.arrived,
                completed: pm.completed,
                resubmitted: pm.resubmitted,
                lost: pm.lost,
                ..Totals::default()
            });
            let pool = &self.cluster.pools[i];
            pools.push(PoolSummary {
                pool: self.shard.pools[i],
                app_id: pool.app_id,
                workers: pool.workers(),
                racks: pool.racks.len() as u32,
                arrived: pm.arrived,
                completed: pm.completed,
                lost: pm.lost,
                resubmitted_fraction: pm.resubmitted as f64 / pm.arrived.max(1) as f64,
                messages_per_task: pm.messages as f64 / pm.arrived.max(1) as f64,
                response: pm.response.as_ref().map(Latency::of).unwrap_or_default(),
                wait: pm.wait.as_ref().map(Latency::of).unwrap_or_default(),
                imbalance: Imbalance::of(&pm.imbalance),
                little: Little::of(pm.area, pm.sojourn_sum, pm.arrived, end),
            });
        }
        totals.lost_in_network = m.lost_in_network;
        totals.events = m.events;
        ShardResult {
            index: self.shard.index,
            workers: self.cluster.total_workers(),
            last_event: self.now,
            totals,
            response: std::mem::replace(
                &mut m.overall_response,
                Histogram::new(1).expect("1 digit"),
            ),
            wait: std::mem::replace(&mut m.overall_wait, Histogram::new(1).expect("1 digit")),
            jobs: std::mem::replace(&mut m.jobs, Histogram::new(1).expect("1 digit")),
            jobs_unfinished: self.jobs.values().filter(|&&left| left > 0).count() as u64,
            message_kinds: self.policy.message_kinds(),
            messages: std::mem::take(&mut m.messages),
            failures: std::mem::take(&mut m.failures),
            policy_counters: self.policy.counters(),
            pools,
            held_lengths: std::mem::take(&mut self.held_lengths),
        }
    }
}

/// Counts of one shard, or of the whole run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    pub area: u128,
    pub sojourn: u128,
    pub tasks: u64,
    pub completed: u64,
    pub resubmitted: u64,
    /// Lost in the network or to failures.
    pub lost: u64,
    pub lost_in_network: u64,
    pub unfinished: u64,
    pub events: u64,
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        self.area += o.area;
        self.sojourn += o.sojourn;
        self.tasks += o.tasks;
        self.completed += o.completed;
        self.resubmitted += o.resubmitted;
        self.lost += o.lost;
        self.lost_in_network += o.lost_in_network;
        self.unfinished += o.unfinished;
        self.events += o.events;
    }
}

/// What one shard's engine measured, ready to merge with the other shards' ([`merge`]).
pub(crate) struct ShardResult {
    pub index: u32,
    pub workers: u32,
    /// Simulated time of the shard's last event.
    pub last_event: Nanos,
    pub totals: Totals,
    pub response: Histogram<u64>,
    pub wait: Histogram<u64>,
    /// Measured jobs' response times (empty unless jobs have several tasks), and jobs not done.
    pub jobs: Histogram<u64>,
    pub jobs_unfinished: u64,
    pub message_kinds: &'static [&'static str],
    pub messages: Vec<u64>,
    /// One entry per configured failure, as every shard sees every failure.
    pub failures: Vec<FailureMetrics>,
    pub policy_counters: Vec<(String, u64)>,
    /// The shard's pools, numbered by their global index.
    pub pools: Vec<PoolSummary>,
    /// Tasks held at its leaves, by the length of the queue they joined.
    pub held_lengths: Vec<u64>,
}

/// The summary of a run from its shards' results, in shard order, all finished at `end`. Counts,
/// histograms, messages and policy counters add up; pools are listed in global order; a failure
/// lost the tasks it lost in every shard and converged when the last shard did. With several
/// shards the summary lists each shard's counts and Little's law too.
pub(crate) fn merge(cfg: &SimConfig, parts: Vec<ShardResult>, end: Nanos) -> Summary {
    let mut parts = parts.into_iter();
    let first = parts.next().expect("a run has at least one shard");
    let sharded = parts.len() > 0;
    let shard_summary = |r: &ShardResult| ShardSummary {
        shard: r.index,
        pools: r.pools.len() as u32,
        workers: r.workers,
        events: r.totals.events,
        tasks: r.totals.tasks,
        last_event_ms: r.last_event as f64 / 1e6,
        little: Little::of(r.totals.area, r.totals.sojourn, r.totals.tasks, end),
    };
    let mut shards = Vec::new();
    if sharded {
        shards.push(shard_summary(&first));
    }
    let ShardResult {
        mut totals,
        mut response,
        mut wait,
        mut jobs,
        mut jobs_unfinished,
        message_kinds,
        mut messages,
        mut failures,
        mut policy_counters,
        mut pools,
        mut held_lengths,
        ..
    } = first;
    for r in parts {
        shards.push(shard_summary(&r));
        totals.add(&r.totals);
        response
            .add(&r.response)
            .expect("auto-resizing histograms of one precision add");
        wait.add(&r.wait)
            .expect("auto-resizing histograms of one precision add");
        jobs.add(&r.jobs)
            .expect("auto-resizing histograms of one precision add");
        jobs_unfinished += r.jobs_unfinished;
        for (a, b) in messages.iter_mut().zip(&r.messages) {
            *a += b;
        }
        for (a, b) in failures.iter_mut().zip(&r.failures) {
            a.tasks_lost += b.tasks_lost;
            a.converge_us = a.converge_us.max(b.converge_us);
        }
        for (name, v) in r.policy_counters {
            match policy_counters.iter_mut().find(|(n, _)| *n == name) {
                Some(acc) => acc.1 = acc.1.wrapping_add(v),
                None => policy_counters.push((name, v)),
            }
        }
        pools.extend(r.pools);
        if held_lengths.len() < r.held_lengths.len() {
            held_lengths.resize(r.held_lengths.len(), 0);
        }
        for (a, b) in held_lengths.iter_mut().zip(&r.held_lengths) {
            *a += b;
        }
    }
    if sharded {
        pools.sort_by_key(|p| p.pool);
    }
    let tasks = totals.tasks;
    Summary {
        policy: cfg.policy.name().into(),
        workload: cfg.workload.clone(),
        load: cfg.load.mean_until(cfg.sim_ns),
        seed: cfg.seed,
        sim_ms: cfg.sim_ns as f64 / 1e6,
        end_ms: end as f64 / 1e6,
        events: totals.events,
        tasks,
        completed: totals.completed,
        unfinished: totals.unfinished,
        lost_in_network: totals.lost_in_network,
        lost_to_failures: totals.lost - totals.lost_in_network,
        resubmitted_fraction: totals.resubmitted as f64 / tasks.max(1) as f64,
        response: Latency::of(&response),
        wait: Latency::of(&wait),
        little: Little::of(totals.area, totals.sojourn, tasks, end),
        messages: message_kinds
            .iter()
            .zip(&messages)
            .map(|(k, &c)| MessageRate {
                kind: (*k).into(),
                count: c,
                per_task: c as f64 / tasks.max(1) as f64,
            })
            .collect(),
        failures,
        policy_counters,
        pools,
        shards,
        leaf_queue: crate::metrics::LeafQueue::of(&held_lengths),
        jobs: (cfg.job_tasks > 1).then(|| crate::metrics::Jobs {
            tasks: cfg.job_tasks,
            response: Latency::of(&jobs),
            unfinished: jobs_unfinished,
        }),
    }
}
