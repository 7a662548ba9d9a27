//! The four decentralized baselines Malcolm (seed 004, §7.1) compares with, at rack scale: every
//! worker is also a load manager, a task reaches a uniformly random one, and that node keeps it
//! or migrates it to another node of the rack by
//!
//! - `malcolm-rand`: keeps it (tasks spread uniformly, no load management);
//! - `malcolm-po2`: the shorter queue of two random nodes;
//! - `malcolm-jsq`: the shortest queue of the rack (ties at random);
//! - `malcolm-jbt`: join below threshold: its own queue if under `queue_threshold` (2), else a
//!   random node whose queue is under it, else a random node.
//!
//! Load information (§7.1, "Load-propagation period"): every node broadcasts its queue length
//! every `period_us` (100 us, Malcolm's heartbeat); between broadcasts a node knows its own queue
//! exactly and adds one to its view of a node each time it migrates a task there. The snapshot is
//! each queue as it was at the broadcast (exact: a worker's count is kept with its value at the
//! start of the period it last changed in); the broadcast's own network delay is left out. A
//! node's queue is the tasks sent to it and not yet answered, which the leaf sees pass. A
//! migration costs two more hops (node to leaf to node, [`Decision::via`]).
//!
//! With `weighted` = 1 a node's load is its queue over its speed, the metric Malcolm's own strategy
//! uses on heterogeneous racks (§3.2), and JBT's threshold is in those units.
//!
//! Malcolm schedules one rack; between racks the spines are `jbsq`'s (power of `samples` over the
//! racks of the pod by the load each leaf reports after every reply). Malcolm's own strategy, the
//! learned, heterogeneity-aware migration of its §4-6, is planned.

use super::jbsq::ReportedLoads;
use super::{Ctx, Decision, FailureNotice, Message, Policy, Reply, TaskHeader};
use crate::cluster::Cluster;
use crate::queue::Nanos;
use rand::Rng;

/// How a node chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Rand,
    Po2,
    Jsq,
    Jbt { threshold: u32 },
}

/// The names of the four policies, in [`Rule`] order.
pub const NAMES: [&str; 4] = ["malcolm-rand", "malcolm-po2", "malcolm-jsq", "malcolm-jbt"];

/// A worker's queue as its leaf counts it, and as the last broadcast had it.
#[derive(Clone, Copy, Debug, Default)]
struct Queue {
    now: u32,
    /// Its value when period `changed` began (the period of its last change).
    at_period_start: u32,
    changed: u64,
}

pub struct Malcolm {
    rule: Rule,
    period_ns: Nanos,
    /// Per pool, per worker: its speed, when loads are weighted by it; empty otherwise.
    speeds: Vec<Vec<f64>>,
    spines: ReportedLoads,
    /// Per pool, per worker.
    queues: Vec<Vec<Queue>>,
    /// Per pool, per worker (as a load manager): the nodes it migrated a task to in the current
    /// period, and which period that is.
    migrated: Vec<Vec<(u64, Vec<u32>)>>,
    /// Per pool, per rack slot: tasks at its workers, for the load report.
    rack_tasks: Vec<Vec<u64>>,
    migrations: u64,
}

impl Malcolm {
    pub fn new(
        cluster: &Cluster,
        queue_len: &[u32],
        rule: Rule,
        period_ns: Nanos,
        weighted: bool,
        samples: u32,
    ) -> Self {
        let initial = super::initial_queues(cluster, queue_len);
        let rack_tasks = cluster
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                pool.racks
                    .iter()
                    .map(|r| {
                        let first = r.first_worker as usize;
                        initial[p][first..first + r.workers as usize]
                            .iter()
                            .map(|&q| u64::from(q))
                            .sum()
                    })
                    .collect()
            })
            .collect();
        Self {
            rule,
            period_ns: period_ns.max(1),
            speeds: cluster.worker_speeds_if(weighted),
            spines: ReportedLoads::new(cluster, samples),
            migrated: initial
                .iter()
                .map(|w| vec![(0, Vec::new()); w.len()])
                .collect(),
            queues: initial
                .into_iter()
                .map(|w| {
                    w.into_iter()
                        .map(|q| Queue {
                            now: q,
                            at_period_start: q,
                            changed: 0,
                        })
                        .collect()
                })
                .collect(),
            rack_tasks,
            migrations: 0,
        }
    }

    fn period(&self, now: Nanos) -> u64 {
        now / self.period_ns
    }

    /// Worker `w`'s queue changes by `delta` at `now`.
    fn change(&mut self, p: u32, w: u32, delta: i32, now: Nanos) {
        let period = self.period(now);
        let q = &mut self.queues[p as usize][w as usize];
        if q.changed < period {
            q.at_period_start = q.now;
            q.changed = period;
        }
        q.now = q.now.saturating_add_signed(delta);
    }

    /// Node `me`'s view of node `w`'s queue at `now`: exact for itself, else the last broadcast
    /// plus what `me` migrated there since.
    fn view(&self, p: u32, me: u32, w: u32, now: Nanos) -> u32 {
        let q = self.queues[p as usize][w as usize];
        if w == me {
            return q.now;
        }
        let period = self.period(now);
        let broadcast = if q.changed < period {
            q.now
        } else {
            q.at_period_start
        };
        let (when, sent) = &self.migrated[p as usize][me as usize];
        let mine = if *when == period {
            sent.iter().filter(|&&x| x == w).count() as u32
        } else {
            0
        };
        broadcast + mine
    }

    /// Node `me` migrated a task to `w` at `now`.
    fn note_migration(&mut self, p: u32, me: u32, w: u32, now: Nanos) {
        let period = self.period(now);
        let (when, sent) = &mut self.migrated[p as usize][me as usize];
        if *when != period {
            *when = period;
            sent.clear();
        }
        sent.push(w);
        self.migrations += 1;
    }

    /// Where node `me` sends a task, among `first..first + count`.
    fn choose(&self, ctx: &mut Ctx, p: u32, me: u32, first: u32, count: u32) -> u32 {
        let now = ctx.now;
        // The load: the queue, or (weighted) the queue over the node's speed (Malcolm §3.2).
        let view = |w: u32| {
            let q = f64::from(self.view(p, me, w, now));
            match self.speeds.get(p as usize) {
                Some(speeds) => q / speeds[w as usize],
                None => q,
            }
        };
        match self.rule {
            Rule::Rand => me,
            Rule::Po2 => {
                let a = ctx.random_worker(p, first, count);
                let b = ctx.random_worker(p, first, count);
                if view(b) < view(a) { b } else { a }
            }
            Rule::Jsq => {
                let start = ctx.rng.random_range(0..count);
                (0..count)
                    .map(|i| first + (start + i) % count)
                    .filter(|&w| ctx.worker_usable(p, w))
                    .min_by(|&a, &b| view(a).total_cmp(&view(b)))
                    .unwrap_or(me)
            }
            Rule::Jbt { threshold } => {
                let threshold = f64::from(threshold);
                if view(me) < threshold {
                    return me;
                }
                let below: Vec<u32> = (first..first + count)
                    .filter(|&w| ctx.worker_usable(p, w) && view(w) < threshold)
                    .collect();
                if below.is_empty() {
                    ctx.random_worker(p, first, count)
                } else {
                    below[ctx.rng.random_range(0..below.len())]
                }
            }
        }
    }
}

impl Policy for Malcolm {
    fn message_kinds(&self) -> &'static [&'static str] {
        ReportedLoads::MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        Decision::to(self.spines.pick(ctx, task))
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let r = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (r.first_worker, r.workers);
        // The node the task reaches first, its load manager.
        let me = ctx.random_worker(p, first, count);
        let to = self.choose(ctx, p, me, first, count);
        self.change(p, to, 1, ctx.now);
        self.rack_tasks[p as usize][rack as usize] += 1;
        if to == me {
            Decision::to(me)
        } else {
            self.note_migration(p, me, to, ctx.now);
            Decision::via(to, 2)
        }
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let (p, w) = (reply.pool, reply.worker);
        if self.queues[p as usize][w as usize].now == 0 {
            return; // a reply the leaf never counted a task for
        }
        self.change(p, w, -1, ctx.now);
        let tasks = &mut self.rack_tasks[p as usize][rack as usize];
        *tasks = tasks.saturating_sub(1);
        let workers = ctx.cluster.pools[p as usize].racks[rack as usize].workers;
        ReportedLoads::report(ctx, p, rack, *tasks as f64 / f64::from(workers));
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        self.spines.on_message(msg);
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        // A dead worker's tasks are lost with it: it leaves the counts (and, being unusable, the
        // choices).
        for (pool, worker, _) in super::removed_workers(ctx, notice) {
            let lost = self.queues[pool as usize][worker as usize].now;
            self.change(pool, worker, -(lost as i32), ctx.now);
            let r = ctx.cluster.pools[pool as usize].worker_rack[worker as usize];
            let tasks = &mut self.rack_tasks[pool as usize][r as usize];
            *tasks = tasks.saturating_sub(u64::from(lost));
        }
        self.spines.on_failure_notice(ctx, notice);
    }

    fn counters(&self) -> Vec<(String, u64)> {
        vec![("migrations".into(), self.migrations)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bench::{Bench, reply, task};

    fn malcolm(b: &Bench, rule: Rule) -> Malcolm {
        let cluster = b.engine.cluster();
        Malcolm::new(
            cluster,
            &vec![0; cluster.workers.len()],
            rule,
            100_000,
            false,
            2,
        )
    }

    #[test]
    fn a_node_sees_the_last_broadcast_and_its_own_migrations() {
        let mut b = Bench::new("exp");
        let (first, n) = b.rack0();
        let mut m = malcolm(&b, Rule::Jsq);
        // Within the first period (0-100 us) every choice sees the broadcast at 0 (all empty)
        // plus its own migrations: JSQ spreads each node's tasks, but nodes herd.
        for t in 0..2 * n {
            b.call(1 + u64::from(t), |ctx| {
                m.on_task_at_leaf(ctx, 0, &mut task(0))
            });
        }
        let total: u32 = (first..first + n)
            .map(|w| m.queues[0][w as usize].now)
            .sum();
        assert_eq!(total, 2 * n);
        for w in first..first + n {
            let q = m.queues[0][w as usize];
            // The broadcast at 0 saw every queue empty.
            assert_eq!(m.view(0, first + (w + 1 - first) % n, w, 50_000), {
                let me = first + (w + 1 - first) % n;
                let (_, sent) = &m.migrated[0][me as usize];
                sent.iter().filter(|&&x| x == w).count() as u32
            });
            // Its own queue a node knows exactly.
            assert_eq!(m.view(0, w, w, 50_000), q.now);
        }
        // The next period's broadcast has the queues as they were at 100 us, whatever happened
        // after.
        let before: Vec<u32> = (first..first + n)
            .map(|w| m.queues[0][w as usize].now)
            .collect();
        b.call(150, |ctx| m.on_reply_at_leaf(ctx, 0, reply(first, 1)));
        for (i, w) in (first..first + n).enumerate() {
            let other = first + (w + 1 - first) % n;
            assert_eq!(m.view(0, other, w, 150_000), before[i], "worker {w}");
        }
        // ... and the one after, at 200 us, the reply.
        assert_eq!(m.view(0, first + 1, first, 200_000), before[0] - 1);
    }

    #[test]
    fn each_rule_chooses_as_malcolm_describes() {
        let mut b = Bench::new("exp");
        let (first, n) = b.rack0();
        // Make worker first+2 the only short queue, as broadcast at 100 us.
        let fill = |m: &mut Malcolm| {
            for w in first..first + n {
                if w != first + 2 {
                    for _ in 0..5 {
                        m.change(0, w, 1, 10_000);
                    }
                }
            }
        };
        // RAND keeps every task where it lands: no migration.
        let mut m = malcolm(&b, Rule::Rand);
        for _ in 0..50 {
            let d = b.call(150, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d.extra_hops, 0);
        }
        // JSQ sends to the short queue, two hops more when it is not the node's own.
        let mut m = malcolm(&b, Rule::Jsq);
        fill(&mut m);
        let d = b.call(150, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
        assert_eq!(d.node, first + 2);
        // JBT (threshold 2): below it, a node keeps its task; above, it sends it below. Each
        // task in a period of its own, its queue back to empty before the next broadcast.
        let mut m = malcolm(&b, Rule::Jbt { threshold: 2 });
        fill(&mut m);
        for i in 0..20 {
            let t = 150 + 100 * i;
            let d = b.call(t, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d.node, first + 2);
            assert!(d.extra_hops == 0 || d.extra_hops == 2);
            m.change(0, first + 2, -1, t * 1000);
        }
        assert!(m.migrations > 0);
        // Po2: never the longer of its two samples.
        let mut m = malcolm(&b, Rule::Po2);
        fill(&mut m);
        let mut short = 0;
        for i in 0..400 {
            let t = 150 + 100 * i;
            let d = b.call(t, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            short += u32::from(d.node == first + 2);
            m.change(0, d.node, -1, t * 1000);
        }
        // P(a sample of two hits the short queue) = 1 - (3/4)^2 = 7/16 of 400 = 175.
        assert!((150..200).contains(&short), "{short}");
    }
}
