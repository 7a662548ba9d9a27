//! Rain (seed 002, §3): token queues at the scheduling switch, slices by task type, and an
//! adaptive token quota per worker.
//!
//! Rain schedules one rack from its top-of-rack switch; here each leaf is a Rain switch for every
//! pool with workers in its rack, behind spines that choose among the racks of their pod by the
//! load each leaf reports after every reply (power of `samples`, as `jbsq`'s spines: Rain itself
//! has no scheduling between racks).
//!
//! **Bidirectional queue** (§3.2.1). Each worker holds a token quota `K_w` (`k` at the start):
//! it has at most `K_w` tokens out, a token being either waiting in the switch or spent on a task
//! not yet answered. A task that finds a token waiting takes the oldest and goes to its worker; a
//! task that finds none waits in the switch ([`Decision::hold_in`]). A reply gives its worker a
//! token back: it takes the oldest waiting task ([`Ctx::release_from`]) or waits in the switch.
//! Only one side of a queue is ever non-empty. Tokens wait in the order they were issued, so a
//! lightly loaded worker, whose tokens come back sooner, gets more tasks: JBSQ approximated (it
//! is JBSQ exactly at `K_w = 1`).
//!
//! **Slices** (§3.2.3, `sliced` = 1). Each task type ([`TaskHeader::kind`]: RocksDB GET and
//! SCAN) has its own slice: its own queue and its own workers, so that short tasks do not wait
//! behind long ones. The rack's workers of a pool are divided among the slices in proportion to
//! each type's share of the work (probability times mean service time, at least one worker
//! each; the paper leaves the initial split to the operator); a rack with fewer workers than
//! types is not sliced.
//!
//! **Adaptive scheduling** (§3.3, Algorithm 1, `adaptive` = 1). Every `interval_us` the leaf's
//! agent looks at each worker's tasks of the interval: the tail (99th percentile) slowdown, the
//! mean share of a task's queueing spent at the worker rather than in the switch, the tail of the
//! switch queue the worker's tasks found, and the worker's idleness (1 - busy time / interval).
//! - slowdown above `slowdown`: if the worker's queue dominates (share > `ratio`), the switch
//!   queue was empty at the tail and `K_w > 1`, `K_w -= 1` (head-of-line blocking at the worker);
//!   else if the switch queue dominates (share <= `ratio`) and `K_w < k_max`, `K_w += 1`; else
//!   the slice counts an overloaded worker;
//! - slowdown at or below: the slice adds the worker's idleness.
//!
//! A slice with both overloaded workers and idleness equalizes its workers' quotas (their mean,
//! rounded); one with only overloaded workers is overloaded; one with only idleness, over one
//! worker's worth, is underloaded. Then, greedily, the most overloaded slice takes the
//! least-provisioned worker (smallest quota) of the most idle one, which keeps at least one; the
//! migrated worker starts at quota `k`.
//!
//! Measurements, and where the paper leaves details open:
//! - The agent's samples are every task of the interval (the paper samples every 10 us); the
//!   switch-side wait travels with the task (INT in the paper), the worker reports its service
//!   time ([`Reply::service_ns`]), and the worker-side wait is the time from dispatch to reply
//!   less the service time and the round trip, learned as the smallest such difference seen (a
//!   task that found its worker idle): one value for every leaf, as every leaf-worker hop takes
//!   the same time here. A worker serves its tasks in
//!   order, so its replies match its dispatches in order; a task lost on the way shifts that
//!   worker's matching by one for the rest of the run (loss is 1e-5 a hop by default).
//! - Slowdown is (switch wait + worker wait + service) / service, the fixed network time left
//!   out.
//! - The control interval defaults to 1 ms, not the paper's 10 ms: the simulator's runs last 5
//!   to 50 ms.
//! - "Dominated by the switch queue" is read as share <= `ratio`, the complement of the
//!   worker-side test.
//!
//! Failures: a dead worker's tokens leave the queue and its tasks are lost; a live leaf left with
//! no worker in a slice sends what the slice holds to a dead worker, where the engine counts it
//! lost. A lost task or reply keeps its token spent, as in `jbsq`.

use super::jbsq::ReportedLoads;
use super::{Ctx, Decision, FailureNotice, Message, Policy, Reply, TaskHeader};

/// The policy's name.
pub const NAME: &str = "rain";
use crate::cluster::Cluster;
use crate::queue::Nanos;
use std::collections::VecDeque;

/// The dispatch record of a task a prefilled worker started with: no measurement.
const PREFILLED: (Nanos, Nanos) = (Nanos::MAX, 0);

/// Rain's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RainParams {
    /// The token quota a worker starts with (and a migrated worker restarts with).
    pub k: u32,
    /// The largest quota the agent gives.
    pub k_max: u32,
    /// Spines: racks sampled per task.
    pub samples: u32,
    /// A slice per task type.
    pub sliced: bool,
    /// Run the agent (Algorithm 1).
    pub adaptive: bool,
    /// The agent's control interval.
    pub interval_ns: Nanos,
    /// The tail slowdown the agent keeps under.
    pub slowdown: f64,
    /// The worker-side share of queueing above which a slowdown is the worker queue's.
    pub ratio: f64,
}

impl RainParams {
    /// The parameters of a `rain` policy spec, checked.
    pub fn of(spec: &super::PolicySpec) -> anyhow::Result<RainParams> {
        // Each parameter's range is its kind's (the registry); what is left are relations.
        let get = |n: &str| spec.param(n).unwrap_or(0.0);
        let p = RainParams {
            k: get("k") as u32,
            k_max: get("k_max") as u32,
            samples: get("samples") as u32,
            sliced: get("sliced") != 0.0,
            adaptive: get("adaptive") != 0.0,
            interval_ns: (get("interval_us") * 1e3).round() as Nanos,
            slowdown: get("slowdown"),
            ratio: get("ratio"),
        };
        anyhow::ensure!(
            p.k <= p.k_max,
            "rain: need k <= k_max, got k {} and k_max {}",
            p.k,
            p.k_max
        );
        Ok(p)
    }
}

/// One slice of a pool at a leaf: its workers, its token queue and its task queue.
#[derive(Debug, Default)]
struct Slice {
    /// Pool-local workers, in the order they joined.
    workers: Vec<u32>,
    /// Tokens waiting in the switch, oldest first: the worker each came from.
    tokens: VecDeque<u32>,
    /// When each task waiting in the switch arrived, oldest first (the engine holds the tasks
    /// in the same order, in the leaf's queue of this slice's index).
    arrivals: VecDeque<Nanos>,
}

/// A pool at a leaf.
#[derive(Debug)]
struct Leaf {
    slices: Vec<Slice>,
    /// The slice of each task type.
    slice_of_kind: Vec<u32>,
    /// Tasks at workers or waiting, for the load report.
    tasks: u64,
    /// Live workers.
    workers: u32,
    /// Start of the agent's current interval.
    interval_start: Nanos,
}

/// A worker's state at its leaf, and its agent's samples of the current interval.
#[derive(Debug, Default)]
struct Worker {
    slice: u32,
    quota: u32,
    /// Its tokens waiting in the switch.
    tokens: u32,
    /// Tasks sent to it and not yet answered: when each was sent and how long it waited in the
    /// switch, in the order it serves them.
    sent: VecDeque<(Nanos, Nanos)>,
    gone: bool,
    /// Slowdowns of its tasks answered in the interval.
    slowdowns: Vec<f64>,
    /// Sum and count of the worker-side share of queueing, over tasks that queued.
    share_sum: f64,
    share_n: u32,
    /// The switch queue its tasks found when dispatched.
    queue_seen: Vec<u32>,
    /// Service time of its tasks answered in the interval.
    busy_ns: u64,
}

impl Worker {
    fn issued(&self) -> u32 {
        self.tokens + self.sent.len() as u32
    }

    fn clear_samples(&mut self) {
        self.slowdowns.clear();
        self.share_sum = 0.0;
        self.share_n = 0;
        self.queue_seen.clear();
        self.busy_ns = 0;
    }
}

pub struct Rain {
    params: RainParams,
    spines: ReportedLoads,
    /// Per pool, per rack slot.
    leaves: Vec<Vec<Leaf>>,
    /// Per pool, per worker.
    workers: Vec<Vec<Worker>>,
    /// The smallest dispatch-to-reply time less service seen: the leaf-worker round trip.
    round_trip: Nanos,
    held: u64,
    held_lost: u64,
    quota_up: u64,
    quota_down: u64,
    equalized: u64,
    migrations: u64,
}

/// The 99th percentile (nearest rank) of `v`, sorted in place; 0 for none.
fn p99<T: Copy + PartialOrd + Default>(v: &mut [T]) -> T {
    if v.is_empty() {
        return T::default();
    }
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let rank = ((v.len() as f64 * 0.99).ceil() as usize).max(1);
    v[rank - 1]
}

/// `n` workers divided among task types in proportion to `work` (at least one each; largest
/// remainders get the rest): the number of workers of each slice.
fn split(n: u32, work: &[f64]) -> Vec<u32> {
    let t = work.len() as u32;
    let total: f64 = work.iter().sum();
    let spare = n - t;
    let ideal: Vec<f64> = work.iter().map(|w| spare as f64 * w / total).collect();
    let mut counts: Vec<u32> = ideal.iter().map(|x| 1 + x.floor() as u32).collect();
    let mut left = n - counts.iter().sum::<u32>();
    let mut order: Vec<usize> = (0..work.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (ideal[a] - ideal[a].floor(), ideal[b] - ideal[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    counts
}

impl Rain {
    pub fn new(cluster: &Cluster, queue_len: &[u32], params: RainParams) -> Self {
        let kinds = &cluster.task_kinds;
        let work: Vec<f64> = kinds.iter().map(|(p, m)| p * m).collect();
        let mut workers: Vec<Vec<Worker>> = cluster
            .pools
            .iter()
            .map(|p| {
                (0..p.workers())
                    .map(|_| Worker {
                        quota: params.k,
                        ..Worker::default()
                    })
                    .collect()
            })
            .collect();
        let mut leaves = Vec::with_capacity(cluster.pools.len());
        for (p, pool) in cluster.pools.iter().enumerate() {
            let mut racks = Vec::with_capacity(pool.racks.len());
            for rack in &pool.racks {
                let n = rack.workers;
                let sliced = params.sliced
                    && kinds.len() > 1
                    && n as usize >= kinds.len()
                    && work.iter().all(|&w| w > 0.0);
                let counts = if sliced { split(n, &work) } else { vec![n] };
                let mut slices: Vec<Slice> = counts.iter().map(|_| Slice::default()).collect();
                let mut next = rack.first_worker;
                for (s, &c) in counts.iter().enumerate() {
                    for w in next..next + c {
                        workers[p][w as usize].slice = s as u32;
                        slices[s].workers.push(w);
                    }
                    next += c;
                }
                // A prefilled worker's queue holds its tokens' tasks already (it may hold more
                // than its quota: it issues no token until it is under).
                let mut tasks = 0;
                for w in rack.first_worker..rack.first_worker + n {
                    let q = queue_len[(pool.worker_base + w) as usize];
                    tasks += u64::from(q);
                    workers[p][w as usize].sent = (0..q).map(|_| PREFILLED).collect();
                }
                // Every worker's free tokens, interleaved so that the first tasks spread.
                for slice in &mut slices {
                    for _ in 0..params.k {
                        for &w in &slice.workers {
                            let wk = &mut workers[p][w as usize];
                            if wk.issued() < params.k {
                                wk.tokens += 1;
                                slice.tokens.push_back(w);
                            }
                        }
                    }
                }
                racks.push(Leaf {
                    slice_of_kind: (0..kinds.len() as u32)
                        .map(|t| if sliced { t } else { 0 })
                        .collect(),
                    slices,
                    tasks,
                    workers: n,
                    interval_start: 0,
                });
            }
            leaves.push(racks);
        }
        Self {
            params,
            spines: ReportedLoads::new(cluster, params.samples),
            leaves,
            workers,
            round_trip: Nanos::MAX,
            held: 0,
            held_lost: 0,
            quota_up: 0,
            quota_down: 0,
            equalized: 0,
            migrations: 0,
        }
    }

    /// Sends pool `p`'s worker `w` (of rack slot `r`) tokens until it has its quota out: each
    /// takes the oldest task waiting in its slice, or waits in the switch.
    fn issue(&mut self, ctx: &mut Ctx, p: u32, r: u32, w: u32) {
        let wk = &mut self.workers[p as usize][w as usize];
        if wk.gone {
            return;
        }
        let s = wk.slice;
        let slice = &mut self.leaves[p as usize][r as usize].slices[s as usize];
        while wk.issued() < wk.quota {
            match slice.arrivals.pop_front() {
                Some(arrival) => {
                    wk.queue_seen.push(slice.arrivals.len() as u32 + 1);
                    wk.sent.push_back((ctx.now, ctx.now - arrival));
                    ctx.release_from(p, r, s, w);
                }
                None => {
                    wk.tokens += 1;
                    slice.tokens.push_back(w);
                }
            }
        }
    }

    /// Takes back one of worker `w`'s tokens waiting in its slice, newest first; false if it has
    /// none waiting.
    fn revoke(&mut self, p: u32, r: u32, w: u32) -> bool {
        let wk = &mut self.workers[p as usize][w as usize];
        if wk.tokens == 0 {
            return false;
        }
        let tokens = &mut self.leaves[p as usize][r as usize].slices[wk.slice as usize].tokens;
        let i = tokens
            .iter()
            .rposition(|&x| x == w)
            .expect("a worker's waiting tokens are in its slice's queue");
        tokens.remove(i);
        wk.tokens -= 1;
        true
    }

    /// Sets worker `w`'s quota, taking back waiting tokens above it or issuing up to it.
    fn set_quota(&mut self, ctx: &mut Ctx, p: u32, r: u32, w: u32, quota: u32) {
        self.workers[p as usize][w as usize].quota = quota;
        while self.workers[p as usize][w as usize].issued() > quota && self.revoke(p, r, w) {}
        self.issue(ctx, p, r, w);
    }

    fn report(&self, ctx: &mut Ctx, p: u32, r: u32) {
        let leaf = &self.leaves[p as usize][r as usize];
        let load = leaf.tasks as f64 / f64::from(leaf.workers.max(1));
        ReportedLoads::report(ctx, p, r, load);
    }

    /// Algorithm 1 for pool `p` at rack slot `r`, at the end of an interval.
    fn control(&mut self, ctx: &mut Ctx, p: u32, r: u32) {
        let params = self.params;
        let (first, count) = {
            let rack = &ctx.cluster.pools[p as usize].racks[r as usize];
            (rack.first_worker, rack.workers)
        };
        let leaf = &mut self.leaves[p as usize][r as usize];
        let span = (ctx.now - leaf.interval_start).max(1) as f64;
        leaf.interval_start = ctx.now;
        let n_slices = leaf.slices.len();
        let mut overload = vec![0u32; n_slices];
        let mut idle = vec![0f64; n_slices];
        for w in first..first + count {
            let wk = &mut self.workers[p as usize][w as usize];
            if wk.gone {
                continue;
            }
            let s = wk.slice as usize;
            let slowdown = p99(&mut wk.slowdowns);
            let share = if wk.share_n > 0 {
                wk.share_sum / f64::from(wk.share_n)
            } else {
                0.0
            };
            let queue = p99(&mut wk.queue_seen);
            let idleness = (1.0 - wk.busy_ns as f64 / span).clamp(0.0, 1.0);
            let quota = wk.quota;
            wk.clear_samples();
            if slowdown > params.slowdown {
                if share > params.ratio && queue == 0 && quota > 1 {
                    self.quota_down += 1;
                    self.set_quota(ctx, p, r, w, quota - 1);
                } else if share <= params.ratio && quota < params.k_max {
                    self.quota_up += 1;
                    self.set_quota(ctx, p, r, w, quota + 1);
                } else {
                    overload[s] += 1;
                }
            } else {
                idle[s] += idleness;
            }
        }
        let mut overloaded = Vec::new();
        let mut underloaded = Vec::new();
        for s in 0..n_slices {
            if overload[s] > 0 && idle[s] > 0.0 {
                let members = self.leaves[p as usize][r as usize].slices[s]
                    .workers
                    .clone();
                let live: Vec<u32> = members
                    .into_iter()
                    .filter(|&w| !self.workers[p as usize][w as usize].gone)
                    .collect();
                let sum: u32 = live
                    .iter()
                    .map(|&w| self.workers[p as usize][w as usize].quota)
                    .sum();
                let mean = (f64::from(sum) / live.len().max(1) as f64).round() as u32;
                self.equalized += 1;
                for w in live {
                    self.set_quota(ctx, p, r, w, mean.clamp(1, params.k_max));
                }
            } else if overload[s] > 0 {
                overloaded.push(s);
            } else if idle[s] > 1.0 {
                underloaded.push(s);
            }
        }
        while !overloaded.is_empty() && !underloaded.is_empty() {
            let (oi, &to) = overloaded
                .iter()
                .enumerate()
                .max_by_key(|&(_, &s)| (overload[s], std::cmp::Reverse(s)))
                .expect("non-empty");
            let (ui, &from) = underloaded
                .iter()
                .enumerate()
                .max_by(|&(_, &a), &(_, &b)| idle[a].total_cmp(&idle[b]).then(b.cmp(&a)))
                .expect("non-empty");
            overloaded.swap_remove(oi);
            underloaded.swap_remove(ui);
            self.migrate(ctx, p, r, from, to);
        }
    }

    /// Moves the least-provisioned live worker of slice `from` to slice `to`, if `from` keeps one.
    fn migrate(&mut self, ctx: &mut Ctx, p: u32, r: u32, from: usize, to: usize) {
        let slices = &self.leaves[p as usize][r as usize].slices;
        let ws = &self.workers[p as usize];
        let live: Vec<u32> = slices[from]
            .workers
            .iter()
            .copied()
            .filter(|&w| !ws[w as usize].gone)
            .collect();
        if live.len() < 2 {
            return;
        }
        // The smallest quota; of those, the one that joined last.
        let &w = live
            .iter()
            .rev()
            .min_by_key(|&&w| ws[w as usize].quota)
            .expect("two live workers");
        while self.revoke(p, r, w) {}
        let slices = &mut self.leaves[p as usize][r as usize].slices;
        slices[from].workers.retain(|&x| x != w);
        slices[to].workers.push(w);
        let wk = &mut self.workers[p as usize][w as usize];
        wk.slice = to as u32;
        wk.quota = self.params.k;
        self.migrations += 1;
        self.issue(ctx, p, r, w);
    }

    /// The controller reports worker `w` dead: its waiting tokens leave the switch, its tasks
    /// are lost; a live leaf with no worker left in the slice sends the slice's waiting tasks
    /// to it, where they are lost too.
    fn remove_worker(&mut self, ctx: &mut Ctx, p: u32, w: u32, leaf_alive: bool) {
        let r = ctx.cluster.pools[p as usize].worker_rack[w as usize];
        if self.workers[p as usize][w as usize].gone {
            return;
        }
        while self.revoke(p, r, w) {}
        let wk = &mut self.workers[p as usize][w as usize];
        wk.gone = true;
        let lost = wk.sent.len() as u64;
        wk.sent.clear();
        let s = wk.slice as usize;
        let leaf = &mut self.leaves[p as usize][r as usize];
        leaf.tasks = leaf.tasks.saturating_sub(lost);
        leaf.workers -= 1;
        let workers = &self.workers[p as usize];
        let slice = &mut leaf.slices[s];
        if slice.workers.iter().all(|&x| workers[x as usize].gone) {
            let waiting = slice.arrivals.len() as u64;
            slice.arrivals.clear();
            leaf.tasks = leaf.tasks.saturating_sub(waiting);
            if leaf_alive {
                for _ in 0..waiting {
                    ctx.release_from(p, r, s as u32, w);
                }
                self.held_lost += waiting;
            }
        }
    }
}

impl Policy for Rain {
    fn message_kinds(&self) -> &'static [&'static str] {
        ReportedLoads::MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        Decision::to(self.spines.pick(ctx, task))
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let (p, r) = (task.pool, rack);
        if self.params.adaptive
            && ctx.now - self.leaves[p as usize][r as usize].interval_start
                >= self.params.interval_ns
        {
            self.control(ctx, p, r);
        }
        let leaf = &mut self.leaves[p as usize][r as usize];
        let s = leaf.slice_of_kind[usize::from(task.kind) % leaf.slice_of_kind.len()];
        let slice = &mut leaf.slices[s as usize];
        leaf.tasks += 1;
        match slice.tokens.pop_front() {
            Some(w) => {
                let wk = &mut self.workers[p as usize][w as usize];
                wk.tokens -= 1;
                wk.queue_seen.push(0);
                wk.sent.push_back((ctx.now, 0));
                Decision::to(w)
            }
            None if slice.workers.is_empty()
                || slice
                    .workers
                    .iter()
                    .all(|&w| self.workers[p as usize][w as usize].gone) =>
            {
                // No worker left in the slice: the task goes to one of its dead workers and is
                // lost with them (a live worker of another slice must not get it uncounted).
                leaf.tasks -= 1;
                let first = ctx.cluster.pools[p as usize].racks[r as usize].first_worker;
                Decision::to(slice.workers.first().copied().unwrap_or(first))
            }
            None => {
                slice.arrivals.push_back(ctx.now);
                self.held += 1;
                Decision::hold_in(s)
            }
        }
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let (p, r, w) = (reply.pool, rack, reply.worker);
        let wk = &mut self.workers[p as usize][w as usize];
        if wk.gone {
            return;
        }
        let Some((sent, switch_wait)) = wk.sent.pop_front() else {
            return; // a reply the leaf never counted a task for
        };
        let leaf = &mut self.leaves[p as usize][r as usize];
        leaf.tasks = leaf.tasks.saturating_sub(1);
        if (sent, switch_wait) != PREFILLED {
            let service = Nanos::from(reply.service_ns).max(1);
            let outside = (ctx.now - sent).saturating_sub(service);
            self.round_trip = self.round_trip.min(outside);
            let worker_wait = outside - self.round_trip;
            let queued = worker_wait + switch_wait;
            wk.slowdowns
                .push((queued + service) as f64 / service as f64);
            if queued > 0 {
                wk.share_sum += worker_wait as f64 / queued as f64;
                wk.share_n += 1;
            }
            wk.busy_ns += service;
        }
        self.issue(ctx, p, r, w);
        self.report(ctx, p, r);
        if self.params.adaptive
            && ctx.now - self.leaves[p as usize][r as usize].interval_start
                >= self.params.interval_ns
        {
            self.control(ctx, p, r);
        }
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        self.spines.on_message(msg);
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        for (pool, worker, live) in super::removed_workers(ctx, notice) {
            self.remove_worker(ctx, pool, worker, live);
        }
        self.spines.on_failure_notice(ctx, notice);
    }

    fn counters(&self) -> Vec<(String, u64)> {
        super::named_counters(&[
            ("held", self.held),
            ("held_lost", self.held_lost),
            ("quota_up", self.quota_up),
            ("quota_down", self.quota_down),
            ("slices_equalized", self.equalized),
            ("migrations", self.migrations),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;
    use crate::policy::bench::{Bench, reply, task};

    fn params(set: &[(&str, f64)]) -> RainParams {
        let mut spec = PolicySpec::named(NAME).unwrap();
        for &(n, v) in set {
            spec.set_param(n, v).unwrap();
        }
        RainParams::of(&spec).unwrap()
    }

    fn rain(b: &Bench, p: RainParams) -> Rain {
        let cluster = b.engine.cluster();
        Rain::new(cluster, &vec![0; cluster.workers.len()], p)
    }

    /// The workers of each slice of rack slot 0.
    fn members(r: &Rain) -> Vec<Vec<u32>> {
        r.leaves[0][0]
            .slices
            .iter()
            .map(|s| s.workers.clone())
            .collect()
    }

    /// Rain's invariants at rack slot 0: only one side of each queue holds anything, a worker's
    /// waiting tokens are in its slice's queue, and no worker has more than its quota out
    /// unless it started with more.
    fn check(r: &Rain) {
        let leaf = &r.leaves[0][0];
        for (s, slice) in leaf.slices.iter().enumerate() {
            assert!(
                slice.tokens.is_empty() || slice.arrivals.is_empty(),
                "slice {s}: tokens and tasks both wait"
            );
            for &w in &slice.workers {
                let wk = &r.workers[0][w as usize];
                assert_eq!(wk.slice as usize, s);
                let waiting = slice.tokens.iter().filter(|&&x| x == w).count() as u32;
                assert_eq!(waiting, wk.tokens, "worker {w}'s waiting tokens");
                assert!(wk.issued() <= wk.quota, "worker {w} over its quota");
            }
        }
    }

    #[test]
    fn a_task_takes_the_oldest_token_and_a_reply_takes_the_oldest_task() {
        let mut b = Bench::new("exp");
        let mut r = rain(&b, params(&[("k", 1.0), ("adaptive", 0.0)]));
        let (first, n) = b.rack0();
        // One token a worker, issued in worker order: n tasks take them in that order.
        for i in 0..n {
            let d = b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d, Decision::to(first + i));
            check(&r);
        }
        // No token left: the next tasks wait in the slice's queue.
        for _ in 0..3 {
            let d = b.call(2, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d, Decision::hold_in(0));
            check(&r);
        }
        // Each reply's token takes the oldest waiting task, to the worker that answered.
        for (t, w) in [(10, first + 2), (11, first)] {
            b.call(t, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, 5)));
            assert_eq!(b.sent().last(), Some(&(0, 0, 0, w)));
            check(&r);
        }
        assert_eq!(r.leaves[0][0].slices[0].arrivals.len(), 1);
        // The switch wait travels with the released task: 10 - 2 us for the first.
        assert_eq!(r.workers[0][(first + 2) as usize].sent[0], (10_000, 8_000));
        // The last waiting task goes out; then a reply's token waits in the switch, and the
        // next task takes it.
        b.call(12, |ctx| r.on_reply_at_leaf(ctx, 0, reply(first + 1, 5)));
        b.call(13, |ctx| r.on_reply_at_leaf(ctx, 0, reply(first + 3, 5)));
        assert_eq!(b.releases.len(), 3);
        assert_eq!(r.leaves[0][0].slices[0].tokens, [first + 3]);
        check(&r);
        let d = b.call(14, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        assert_eq!(d, Decision::to(first + 3));
        check(&r);
    }

    #[test]
    fn task_types_have_their_own_slices_split_by_their_share_of_the_work() {
        // RocksDB 90/10: a GET (40 us, 90 %) is 36 % of the work, a SCAN (650 us) 64 %.
        assert_eq!(split(4, &[36.0, 65.0]), vec![2, 2]);
        assert_eq!(split(10, &[36.0, 65.0]), vec![4, 6]);
        assert_eq!(split(2, &[36.0, 65.0]), vec![1, 1]);
        assert_eq!(split(24, &[1.0, 1.0, 1.0]), vec![8, 8, 8]);
        let mut b = Bench::new("rocksdb-90-10");
        let mut r = rain(&b, params(&[("k", 1.0), ("adaptive", 0.0)]));
        let (first, n) = b.rack0();
        assert_eq!(n, 4);
        assert_eq!(
            members(&r),
            vec![vec![first, first + 1], vec![first + 2, first + 3]]
        );
        // GETs go to GET workers only, and wait for them though SCAN workers have tokens.
        for i in 0..3 {
            let d = b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            if i < 2 {
                assert_eq!(d, Decision::to(first + i));
            } else {
                assert_eq!(d, Decision::hold_in(0));
            }
        }
        assert_eq!(r.leaves[0][0].slices[1].tokens.len(), 2);
        let d = b.call(2, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(1)));
        assert_eq!(d, Decision::to(first + 2));
        check(&r);
        // Unsliced, any task takes any token.
        let mut u = rain(
            &b,
            params(&[("k", 1.0), ("adaptive", 0.0), ("sliced", 0.0)]),
        );
        assert_eq!(u.leaves[0][0].slices.len(), 1);
        for i in 0..4 {
            let d = b.call(1, |ctx| u.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d, Decision::to(first + i));
        }
    }

    #[test]
    fn head_of_line_blocking_at_a_worker_lowers_its_quota_and_a_switch_queue_raises_it() {
        let mut b = Bench::new("exp");
        let mut r = rain(&b, params(&[("k", 2.0), ("interval_us", 1000.0)]));
        let (first, n) = b.rack0();
        let w = first;
        // Every worker takes its two tokens' tasks.
        for _ in 0..2 * n {
            b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        // Worker w answers its first task after the round trip alone (10 us), its second after
        // 89 us behind it at the worker: slowdown 90 with 1 us tasks, all of it worker-side, and
        // the switch queue was empty.
        b.call(12, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, 1)));
        b.call(101, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, 1)));
        assert_eq!(r.round_trip, 10_000);
        assert_eq!(r.workers[0][w as usize].slowdowns, [1.0, 90.0]);
        // The next call after the interval runs the agent: w's quota goes down to 1 and one of
        // its waiting tokens is taken back; the others had no tasks answered.
        b.call(1001, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(1)));
        let wk = &r.workers[0][w as usize];
        assert_eq!(wk.quota, 1);
        assert_eq!(r.quota_down, 1);
        assert!(wk.tokens + wk.sent.len() as u32 <= 1);
        check(&r);

        // Now the switch queue dominates: quota 1 everywhere, tasks wait in the switch.
        let mut r = rain(&b, params(&[("k", 1.0), ("interval_us", 1000.0)]));
        for _ in 0..n + 2 {
            b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        // w answers a 200 us task after the round trip (10 us); its token takes a task that
        // waited 210 us in the switch, a 1 us task answered after the round trip: slowdown
        // 211, all of its queueing in the switch.
        b.call(211, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, 200)));
        b.call(222, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, 1)));
        assert_eq!(r.workers[0][w as usize].slowdowns, [1.0, 211.0]);
        b.call(1002, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        assert_eq!(r.workers[0][w as usize].quota, 2);
        assert_eq!(r.quota_up, 1);
        check(&r);
    }

    #[test]
    fn an_overloaded_slice_takes_the_least_provisioned_worker_of_an_idle_one() {
        let mut b = Bench::new("rocksdb-90-10");
        // Quotas cannot grow: a switch-side slowdown is overload.
        let mut r = rain(
            &b,
            params(&[("k", 1.0), ("k_max", 1.0), ("interval_us", 1000.0)]),
        );
        let (first, _) = b.rack0();
        // GETs fill the GET slice's two workers and wait; the SCAN slice idles. The first two
        // take 200 us, the rest 1 us, each answered after the round trip (10 us): the waiting
        // ones see slowdowns of 211, switch-side, and the quota cannot grow.
        for _ in 0..7 {
            b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        for (t, w, service) in [
            (211, first, 200),
            (211, first + 1, 200),
            (222, first, 1),
            (222, first + 1, 1),
        ] {
            b.call(t, |ctx| r.on_reply_at_leaf(ctx, 0, reply(w, service)));
        }
        assert_eq!(r.leaves[0][0].slices[0].arrivals.len(), 1);
        b.releases.clear();
        b.call(1001, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        // The SCAN workers have equal quotas: the one that joined last moves, restarts at k,
        // and its token takes the oldest waiting GET.
        assert_eq!(r.migrations, 1);
        assert_eq!(
            members(&r),
            vec![vec![first, first + 1, first + 3], vec![first + 2]]
        );
        assert_eq!(b.sent(), [(0, 0, 0, first + 3)]);
        assert_eq!(r.workers[0][(first + 3) as usize].quota, 1);
        check(&r);
    }

    #[test]
    fn a_slice_whose_workers_all_died_loses_its_tasks_to_a_dead_worker_of_its_own() {
        let mut b = Bench::new("rocksdb-90-10");
        let mut r = rain(&b, params(&[("adaptive", 0.0)]));
        let scans = members(&r)[1].clone();
        for &w in &scans {
            b.call(1, |ctx| {
                r.on_failure_notice(ctx, FailureNotice::Worker { pool: 0, worker: w })
            });
        }
        let d = b.call(2, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(1)));
        assert!(scans.contains(&d.node), "{d:?} went to a live GET worker");
        assert_eq!(r.leaves[0][0].tasks, 0);
        check(&r);
    }

    #[test]
    fn parameters_are_checked() {
        let mut spec = PolicySpec::named(NAME).unwrap();
        spec.set_param("k", 9.0).unwrap();
        let e = RainParams::of(&spec).unwrap_err().to_string();
        assert!(e.contains("k <= k_max"), "{e}");
        // Each parameter alone is its kind's: refused when set.
        let mut spec = PolicySpec::named(NAME).unwrap();
        assert!(spec.set_param("sliced", 2.0).is_err());
        assert!(spec.set_param("ratio", 1.5).is_err());
        assert!(RainParams::of(&spec).is_ok());
    }
}
