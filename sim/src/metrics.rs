//! What a run measures, and its summary.
//!
//! - Response time: from the task's arrival at its spine scheduler until its worker finishes it
//!   (Horus §4.1); wait time: the part of it not spent in service (network, scheduling, queueing).
//!   Recorded per pool (2 significant digits) and overall (3) in HDR histograms, for tasks arriving
//!   after the warm-up; prefilled tasks are never recorded.
//! - Little's law: the integral of the number of tasks in the system over time, against the sum of
//!   the tasks' sojourns. Both are integers in nanoseconds, so `L = lambda W` must hold exactly once
//!   unfinished tasks are counted up to the end of the run; a mismatch is a bookkeeping bug.
//! - Queue imbalance: max / mean tasks per worker of a pool, sampled periodically (Horus §5.2).
//! - Resubmitted tasks, scheduler messages per task by kind, tasks lost in the network and because
//!   of each failure, and each failure's convergence time (last loss it caused minus its time).

use crate::queue::Nanos;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Auto-resizing, so a pool's histogram only grows as far as its largest value. `digits`
/// significant decimal digits: 3 for the overall histograms, 2 for the per-pool ones, which are
/// ten times smaller and so stay in cache when a thousand pools record at random (per-pool
/// percentiles are then within 1 %).
fn latency_histogram(digits: u8) -> Histogram<u64> {
    let mut h = Histogram::new(digits).expect("valid precision");
    h.auto(true);
    h
}

const POOL_DIGITS: u8 = 2;

/// Imbalance ratios are recorded in thousandths.
fn ratio_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 10_000_000, 2).expect("valid bounds")
}

pub struct PoolMetrics {
    /// Per-pool latency histograms; None when disabled for runs with very many pools.
    pub response: Option<Histogram<u64>>,
    pub wait: Option<Histogram<u64>>,
    pub imbalance: Histogram<u64>,
    pub arrived: u64,
    pub completed: u64,
    pub lost: u64,
    pub resubmitted: u64,
    /// Scheduler messages (leaf to spine and back) about the pool.
    pub messages: u64,
    /// Tasks in the system now, and the integral of that count since time 0.
    pub in_system: u64,
    pub area: u128,
    pub last_change: Nanos,
    /// Sum of the sojourns of tasks that left (finished or lost).
    pub sojourn_sum: u128,
}

impl PoolMetrics {
    fn new(histograms: bool) -> Self {
        Self {
            response: histograms.then(|| latency_histogram(POOL_DIGITS)),
            wait: histograms.then(|| latency_histogram(POOL_DIGITS)),
            imbalance: ratio_histogram(),
            arrived: 0,
            completed: 0,
            lost: 0,
            resubmitted: 0,
            messages: 0,
            in_system: 0,
            area: 0,
            last_change: 0,
            sojourn_sum: 0,
        }
    }

    fn advance(&mut self, now: Nanos) {
        self.area += self.in_system as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    pub fn enter(&mut self, now: Nanos) {
        self.advance(now);
        self.in_system += 1;
        self.arrived += 1;
    }

    pub fn leave(&mut self, now: Nanos, arrival: Nanos) {
        self.advance(now);
        self.in_system -= 1;
        self.sojourn_sum += (now - arrival) as u128;
    }
}

/// Losses and convergence of one injected failure.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FailureMetrics {
    pub what: String,
    pub at_us: f64,
    pub tasks_lost: u64,
    /// Last loss this failure caused, minus its time; 0 if it caused none.
    pub converge_us: f64,
}

pub struct Metrics {
    pub pools: Vec<PoolMetrics>,
    pub overall_response: Histogram<u64>,
    pub overall_wait: Histogram<u64>,
    /// Response times of measured jobs of several tasks (arrival to the last task's end).
    pub jobs: Histogram<u64>,
    pub messages: Vec<u64>,
    pub lost_in_network: u64,
    pub failures: Vec<FailureMetrics>,
    pub events: u64,
    /// Latencies not yet in the histograms, `(pool, response, wait)`: recorded in bulk, so that
    /// the cache misses of a thousand pools' histograms overlap (see [`Metrics::flush`]).
    pending: Vec<(u32, Nanos, Nanos)>,
}

/// Latencies kept in [`Metrics::pending`] before they are recorded.
const PENDING: usize = 256;

impl Metrics {
    pub fn new(pools: usize, pool_histograms: bool) -> Self {
        Self {
            pools: (0..pools)
                .map(|_| PoolMetrics::new(pool_histograms))
                .collect(),
            overall_response: latency_histogram(3),
            overall_wait: latency_histogram(3),
            jobs: latency_histogram(3),
            messages: Vec::new(),
            lost_in_network: 0,
            failures: Vec::new(),
            events: 0,
            pending: Vec::with_capacity(PENDING),
        }
    }

    /// Records a measured task's response time and service time (its wait is the difference).
    /// It is kept in a buffer and reaches the histograms when the buffer is full or at the next
    /// [`Metrics::flush`], whichever comes first.
    #[inline]
    pub fn record(&mut self, pool: u32, response: Nanos, service: Nanos) {
        self.pending.push((pool, response, response - service));
        if self.pending.len() == PENDING {
            self.flush();
        }
    }

    /// Records a measured job's response time.
    pub fn record_job(&mut self, response: Nanos) {
        self.jobs
            .record(response.max(1))
            .expect("auto-resizing histogram takes any value");
    }

    /// Records the pending latencies in the histograms. A histogram's counts do not depend on the
    /// order of the values recorded.
    pub fn flush(&mut self) {
        let record = |h: &mut Histogram<u64>, v: Nanos| {
            h.record(v.max(1))
                .expect("auto-resizing histogram takes any value")
        };
        for &(pool, response, wait) in &self.pending {
            let p = &mut self.pools[pool as usize];
            if let (Some(r), Some(w)) = (&mut p.response, &mut p.wait) {
                record(r, response);
                record(w, wait);
            }
        }
        for &(_, response, _) in &self.pending {
            record(&mut self.overall_response, response);
        }
        for &(_, _, wait) in &self.pending {
            record(&mut self.overall_wait, wait);
        }
        self.pending.clear();
    }
}

/// Percentiles of a latency histogram in microseconds.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

impl Latency {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
        Self {
            count: h.len(),
            mean_us: h.mean() / 1e3,
            p50_us: us(0.5),
            p99_us: us(0.99),
            p999_us: us(0.999),
        }
    }
}

/// Imbalance percentiles (max / mean queue per pool).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Imbalance {
    pub samples: u64,
    pub p1: f64,
    pub p50: f64,
    pub p99: f64,
}

impl Imbalance {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let r = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
        Self {
            samples: h.len(),
            p1: r(0.01),
            p50: r(0.5),
            p99: r(0.99),
        }
    }
}

/// Little's law as measured: `L` time-averaged tasks in system, `lambda` tasks per us, `W` mean
/// sojourn in us, and the relative gap between `L` and `lambda W`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Little {
    pub l: f64,
    pub lambda_per_us: f64,
    pub w_us: f64,
    pub relative_error: f64,
}

impl Little {
    pub fn of(area: u128, sojourn_sum: u128, tasks: u64, end: Nanos) -> Self {
        if end == 0 || tasks == 0 {
            return Self::default();
        }
        let l = area as f64 / end as f64;
        let lambda = tasks as f64 / end as f64 * 1e3;
        let w = sojourn_sum as f64 / tasks as f64 / 1e3;
        let relative_error = if l > 0.0 {
            (l - lambda * w).abs() / l
        } else {
            0.0
        };
        Self {
            l,
            lambda_per_us: lambda,
            w_us: w,
            relative_error,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PoolSummary {
    pub pool: u32,
    pub app_id: u32,
    pub workers: u32,
    pub racks: u32,
    pub arrived: u64,
    pub completed: u64,
    pub lost: u64,
    pub resubmitted_fraction: f64,
    /// Scheduler messages about the pool per arrived task.
    pub messages_per_task: f64,
    pub response: Latency,
    pub wait: Latency,
    pub imbalance: Imbalance,
    pub little: Little,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageRate {
    pub kind: String,
    pub count: u64,
    pub per_task: f64,
}

/// Everything a run reports.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub policy: String,
    pub workload: String,
    pub load: f64,
    pub seed: u64,
    pub sim_ms: f64,
    pub end_ms: f64,
    pub events: u64,
    pub tasks: u64,
    pub completed: u64,
    pub unfinished: u64,
    pub lost_in_network: u64,
    pub lost_to_failures: u64,
    pub resubmitted_fraction: f64,
    pub response: Latency,
    pub wait: Latency,
    pub little: Little,
    pub messages: Vec<MessageRate>,
    pub failures: Vec<FailureMetrics>,
    /// The policy's own counters (Horus: the model's scheduler counters, summed over leaves as
    /// `leaf.*` and spines as `spine.*`, configuration passes excluded).
    pub policy_counters: Vec<(String, u64)>,
    pub pools: Vec<PoolSummary>,
    /// Per shard of a sharded run (see [`crate::shard`]); empty, and absent from the JSON, when
    /// the run has one shard.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardSummary>,
    /// Tasks held at leaves; absent from the JSON for policies that hold none.
    #[serde(skip_serializing_if = "LeafQueue::is_empty")]
    pub leaf_queue: LeafQueue,
    /// Jobs of several tasks (`--job-tasks`); absent from the JSON when a job is one task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Jobs>,
}

/// Jobs of several tasks: a job's response runs from its arrival to the end of its last task.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Jobs {
    /// Tasks a job.
    pub tasks: u32,
    pub response: Latency,
    /// Jobs not done when the run ended, a task of them lost or still running.
    pub unfinished: u64,
}

/// Tasks held in leaves' queues, by policies that hold tasks at the leaf
/// ([`crate::policy::Decision::hold`]): how many were, and the length of the queue each joined,
/// counting itself (its 99.9th percentile over the tasks held, and its maximum): the buffer a
/// leaf needs for them.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LeafQueue {
    pub held: u64,
    pub p999: u64,
    pub max: u64,
}

impl LeafQueue {
    /// From `lengths[n]`: the tasks that joined a queue making it `n` long.
    pub fn of(lengths: &[u64]) -> Self {
        let held: u64 = lengths.iter().sum();
        if held == 0 {
            return Self::default();
        }
        let max = lengths.iter().rposition(|&c| c > 0).unwrap_or(0) as u64;
        // The smallest length at or below which 99.9 % of the held tasks found their queue.
        let want = (held as f64 * 0.999).ceil() as u64;
        let mut seen = 0;
        let p999 = lengths
            .iter()
            .position(|&c| {
                seen += c;
                seen >= want
            })
            .unwrap_or(0) as u64;
        Self { held, p999, max }
    }

    pub fn is_empty(&self) -> bool {
        self.held == 0
    }
}

/// One shard of a sharded run: its share of the work and its own Little's law.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ShardSummary {
    pub shard: u32,
    pub pools: u32,
    pub workers: u32,
    pub events: u64,
    pub tasks: u64,
    /// Simulated time of the shard's last event (the run ends with the last shard's).
    pub last_event_ms: f64,
    pub little: Little,
}
