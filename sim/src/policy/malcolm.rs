//! Malcolm (seed 004): decentralized load balancing among the multi-core nodes of a rack, and
//! the four baselines it is compared with (§7.1). A node is a pool's workers on one server
//! ([`Policy::node_queues`]): its cores share one FCFS queue (§3.1). A task reaches a uniformly
//! random node of the rack (its load manager), which keeps it or migrates it to another node
//! (two more hops, node to leaf to node, [`Decision::via`]) by
//!
//! - `malcolm-rand`: keeps it (tasks spread uniformly, no load management);
//! - `malcolm-po2`: the lower load of two random nodes;
//! - `malcolm-jsq`: the lowest load of the rack (ties at random);
//! - `malcolm-jbt`: join below threshold: its own node if under `queue_threshold` (2), else a
//!   random node under it, else a random node;
//! - `malcolm`: Malcolm's own learned strategy (§4-6, [`super::malcolm_rl`]): each node draws
//!   the destination from its migration policy, and after each completion draws from its
//!   work-stealing policy whether to ask another node for a task ([`Ctx::steal`]); both are
//!   softmax policies over the rack's loads, trained by decentralized actor-critic on heartbeat
//!   intervals of `period_us`.
//!
//! Loads. The baselines' load of a node is its tasks (in service and waiting, and those sent to it
//! on their way); with `weighted` = 1 the tasks over the node's capacity (live cores times speed).
//! A node's load manager runs on the node and sees its completions and losses at once
//! ([`Policy::on_task_left_worker`]): its own count is exact. Every node broadcasts its load every
//! `period_us` (100 us, Malcolm's heartbeat); between broadcasts a node knows its own load exactly
//! and adds one to its view of a node each time it migrates a task there (§7.1, "Load-propagation
//! period"). The snapshot is each load as it was at the broadcast (exact: a node's count is kept
//! with its value at the start of the period it last changed in); the broadcast's own network delay
//! is left out. Malcolm's own load is the expected wait (§3.2): tasks over live cores times the
//! service rate, the rate the inverse of a moving average of the node's service times (an average
//! of inverses, as the text has it, diverges for exponential service times), in mean service times
//! of the workload; its nodes see the others' loads as the last heartbeat had them.
//!
//! Clients, nodes and heartbeats talk over eRPC (§6.1), which retransmits: the network loses
//! none of Malcolm's packets ([`Policy::reliable_transport`]).
//!
//! Malcolm schedules one rack; between racks the spines are `jbsq`'s (power of `samples` over the
//! racks of the pod by the load each leaf reports after every reply).

use super::jbsq::ReportedLoads;
use super::malcolm_rl::{LearnParams, Learner};
use super::{Ctx, Decision, FailureNotice, Message, Policy, Reply, Steal, TaskHeader};
use crate::cluster::Cluster;
use crate::queue::Nanos;
use rand::Rng;

/// How a node chooses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    Rand,
    Po2,
    Jsq,
    Jbt {
        threshold: u32,
    },
    /// Malcolm's learned strategy.
    Learned(LearnParams),
}

/// The names of the baselines, in [`Rule`] order, and of Malcolm's own strategy.
pub const NAMES: [&str; 4] = ["malcolm-rand", "malcolm-po2", "malcolm-jsq", "malcolm-jbt"];
pub const NAME: &str = "malcolm";

/// Weight of a reply's service time in a node's moving average of them.
const SERVICE_EMA: f64 = 1.0 / 32.0;

/// One node as the rack's load managers know it.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// Its first pool-local worker and its cores (consecutive workers).
    first: u32,
    cores: u32,
    /// Its rack slot.
    rack: u32,
    /// Cores not known dead.
    live: u32,
    speed: f64,
    /// Tasks sent to it and not finished (nor lost).
    tasks: u32,
    /// `tasks` when period `changed` began (the period of its last change).
    at_period_start: u32,
    changed: u64,
    /// Moving average of its replies' service times, ns.
    service_ns: f64,
}

/// A rack's nodes (`first..first + count` of its pool's) and Malcolm's learners there.
struct Rack {
    first: usize,
    count: usize,
    /// The next heartbeat (period index) the learners have not seen.
    beat: u64,
    learner: Option<Learner>,
    tasks: u64,
}

pub struct Malcolm {
    rule: Rule,
    period_ns: Nanos,
    weighted: bool,
    spines: ReportedLoads,
    /// Per pool: its nodes in worker order (hence rack by rack).
    nodes: Vec<Vec<Node>>,
    /// Per pool, per worker: its node.
    node_of: Vec<Vec<u32>>,
    /// Per pool, per rack slot.
    racks: Vec<Vec<Rack>>,
    /// Per pool, per node (as a load manager): the nodes it migrated a task to in the current
    /// period, and which period that is.
    migrated: Vec<Vec<(u64, Vec<u32>)>>,
    /// The workload's mean service time at speed 1, ns: the unit of Malcolm's loads.
    unit_ns: f64,
    migrations: u64,
    steals: u64,
    stolen: u64,
}

impl Malcolm {
    pub fn new(
        cluster: &Cluster,
        queue_len: &[u32],
        rule: Rule,
        period_ns: Nanos,
        weighted: bool,
        samples: u32,
        rng: &mut impl Rng,
    ) -> Self {
        let initial = super::initial_queues(cluster, queue_len);
        let unit_ns = cluster
            .task_kinds
            .iter()
            .map(|&(p, mean)| p * mean)
            .sum::<f64>()
            .max(1.0);
        let mut nodes = Vec::new();
        let mut node_of = Vec::new();
        let mut racks = Vec::new();
        for (p, pool) in cluster.pools.iter().enumerate() {
            let speeds = cluster.pool_worker_speeds(p as u32);
            let mut pn: Vec<Node> = Vec::new();
            let mut of = vec![0; pool.workers() as usize];
            for (first, cores) in cluster.pool_nodes(p as u32) {
                let tasks: u32 = initial[p][first as usize..(first + cores) as usize]
                    .iter()
                    .sum();
                of[first as usize..(first + cores) as usize].fill(pn.len() as u32);
                pn.push(Node {
                    first,
                    cores,
                    rack: pool.worker_rack[first as usize],
                    live: cores,
                    speed: speeds[first as usize],
                    tasks,
                    at_period_start: tasks,
                    changed: 0,
                    service_ns: unit_ns,
                });
            }
            let pr: Vec<Rack> = pool
                .racks
                .iter()
                .map(|r| {
                    let first = of[r.first_worker as usize] as usize;
                    let count = of[(r.first_worker + r.workers - 1) as usize] as usize + 1 - first;
                    Rack {
                        first,
                        count,
                        beat: 0,
                        learner: match rule {
                            Rule::Learned(params) => Some(Learner::new(count, params, rng)),
                            _ => None,
                        },
                        tasks: pn[first..first + count]
                            .iter()
                            .map(|n| u64::from(n.tasks))
                            .sum(),
                    }
                })
                .collect();
            nodes.push(pn);
            node_of.push(of);
            racks.push(pr);
        }
        Self {
            rule,
            period_ns: period_ns.max(1),
            weighted,
            spines: ReportedLoads::new(cluster, samples),
            migrated: nodes
                .iter()
                .map(|n| vec![(0, Vec::new()); n.len()])
                .collect(),
            nodes,
            node_of,
            racks,
            unit_ns,
            migrations: 0,
            steals: 0,
            stolen: 0,
        }
    }

    fn period(&self, now: Nanos) -> u64 {
        now / self.period_ns
    }

    /// Node `n`'s tasks change by `delta` at `now`.
    fn change(&mut self, p: u32, n: u32, delta: i32, now: Nanos) {
        let period = self.period(now);
        let node = &mut self.nodes[p as usize][n as usize];
        if node.changed < period {
            node.at_period_start = node.tasks;
            node.changed = period;
        }
        node.tasks = node.tasks.saturating_add_signed(delta);
    }

    /// A baseline's load of node `n` with `tasks`.
    fn load(&self, p: u32, n: u32, tasks: u32) -> f64 {
        let t = f64::from(tasks);
        if self.weighted {
            let node = &self.nodes[p as usize][n as usize];
            t / (f64::from(node.live.max(1)) * node.speed)
        } else {
            t
        }
    }

    /// Node `me`'s view of node `n`'s load at `now`: exact for itself, else the last broadcast
    /// plus what `me` migrated there since.
    fn view(&self, p: u32, me: u32, n: u32, now: Nanos) -> f64 {
        let node = self.nodes[p as usize][n as usize];
        if n == me {
            return self.load(p, n, node.tasks);
        }
        let period = self.period(now);
        let broadcast = if node.changed < period {
            node.tasks
        } else {
            node.at_period_start
        };
        let (when, sent) = &self.migrated[p as usize][me as usize];
        let mine = if *when == period {
            sent.iter().filter(|&&x| x == n).count() as u32
        } else {
            0
        };
        self.load(p, n, broadcast + mine)
    }

    /// Node `me` migrated a task to `n` at `now`.
    fn note_migration(&mut self, p: u32, me: u32, n: u32, now: Nanos) {
        let period = self.period(now);
        let (when, sent) = &mut self.migrated[p as usize][me as usize];
        if *when != period {
            *when = period;
            sent.clear();
        }
        sent.push(n);
        self.migrations += 1;
    }

    /// A core of node `n` that can take tasks, if any.
    fn usable_core(&self, ctx: &Ctx, p: u32, n: u32) -> Option<u32> {
        let node = self.nodes[p as usize][n as usize];
        (node.first..node.first + node.cores).find(|&w| ctx.worker_usable(p, w))
    }

    /// Malcolm's load of node `n`: its expected wait in mean service times.
    fn expected_wait(&self, p: u32, n: u32) -> f64 {
        let node = self.nodes[p as usize][n as usize];
        f64::from(node.tasks) * node.service_ns / (f64::from(node.live.max(1)) * self.unit_ns)
    }

    /// Runs the heartbeats of rack slot `r` up to `now` (before any change at `now`): the loads
    /// then are those at each heartbeat, as every change of the rack's nodes comes here first.
    fn heartbeats(&mut self, p: u32, r: u32, now: Nanos) {
        let period = self.period(now);
        let rack = &self.racks[p as usize][r as usize];
        if rack.learner.is_none() || rack.beat > period {
            return;
        }
        let (first, count) = (rack.first, rack.count);
        let x: Vec<f64> = (first..first + count)
            .map(|n| self.expected_wait(p, n as u32))
            .collect();
        let rack = &mut self.racks[p as usize][r as usize];
        let learner = rack.learner.as_mut().expect("checked");
        // Heartbeats with no event in between see the same loads.
        while rack.beat <= period {
            learner.heartbeat(&x);
            rack.beat += 1;
        }
    }

    /// A uniformly random node of rack slot `r` with a usable core (the last drawn if none).
    fn random_node(&self, ctx: &mut Ctx, p: u32, r: u32) -> u32 {
        let rack = &self.racks[p as usize][r as usize];
        let first = rack.first as u32;
        ctx.random_usable(first, rack.count as u32, |c, n| {
            self.usable_core(c, p, n).is_some()
        })
    }

    /// Where node `me` of rack slot `r` sends a task.
    fn choose(&mut self, ctx: &mut Ctx, p: u32, r: u32, me: u32) -> u32 {
        let now = ctx.now;
        let rack = &self.racks[p as usize][r as usize];
        let (first, count) = (rack.first as u32, rack.count as u32);
        match self.rule {
            Rule::Rand => me,
            Rule::Po2 => {
                let a = self.random_node(ctx, p, r);
                let b = self.random_node(ctx, p, r);
                if self.view(p, me, b, now) < self.view(p, me, a, now) {
                    b
                } else {
                    a
                }
            }
            Rule::Jsq => {
                let start = ctx.rng.random_range(0..count);
                (0..count)
                    .map(|i| first + (start + i) % count)
                    .filter(|&n| self.usable_core(ctx, p, n).is_some())
                    .min_by(|&a, &b| {
                        self.view(p, me, a, now)
                            .total_cmp(&self.view(p, me, b, now))
                    })
                    .unwrap_or(me)
            }
            Rule::Jbt { threshold } => {
                let threshold = f64::from(threshold);
                if self.view(p, me, me, now) < threshold {
                    return me;
                }
                let below: Vec<u32> = (first..first + count)
                    .filter(|&n| {
                        self.usable_core(ctx, p, n).is_some()
                            && self.view(p, me, n, now) < threshold
                    })
                    .collect();
                if below.is_empty() {
                    self.random_node(ctx, p, r)
                } else {
                    below[ctx.rng.random_range(0..below.len())]
                }
            }
            Rule::Learned(_) => {
                let u: f64 = ctx.rng.random();
                let learner = self.racks[p as usize][r as usize]
                    .learner
                    .as_mut()
                    .expect("a learned rule has learners");
                let i = (me - first) as usize;
                let a = learner.migration(i, u) as u32;
                if a as usize != i && self.usable_core(ctx, p, first + a).is_none() {
                    let learner = self.racks[p as usize][r as usize].learner.as_mut();
                    learner.expect("checked").retract_migration(i, a as usize);
                    return me;
                }
                first + a
            }
        }
    }

    /// After a completion at node `n` of rack slot `r`: Malcolm's stealing policy.
    fn maybe_steal(&mut self, ctx: &mut Ctx, p: u32, r: u32, n: u32) {
        let rack = &mut self.racks[p as usize][r as usize];
        let first = rack.first as u32;
        let Some(learner) = rack.learner.as_mut() else {
            return;
        };
        let u: f64 = ctx.rng.random();
        let i = (n - first) as usize;
        let a = learner.steal(i, u);
        if a == i {
            return;
        }
        let victim = first + a as u32;
        let (Some(thief), Some(from)) = (
            self.usable_core(ctx, p, n),
            self.usable_core(ctx, p, victim),
        ) else {
            let learner = self.racks[p as usize][r as usize].learner.as_mut();
            learner.expect("checked").retract_steal(i, a);
            return;
        };
        self.steals += 1;
        ctx.steal(Steal {
            pool: p,
            thief,
            victim: from,
        });
    }
}

impl Policy for Malcolm {
    fn message_kinds(&self) -> &'static [&'static str] {
        ReportedLoads::MESSAGE_KINDS
    }

    fn node_queues(&self) -> bool {
        true
    }

    /// Malcolm's nodes talk over eRPC, which handles packet losses (§6.1).
    fn reliable_transport(&self) -> bool {
        true
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        Decision::to(self.spines.pick(ctx, task))
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        self.heartbeats(p, rack, ctx.now);
        // The node the task reaches first, its load manager.
        let me = self.random_node(ctx, p, rack);
        let to = self.choose(ctx, p, rack, me);
        self.change(p, to, 1, ctx.now);
        self.racks[p as usize][rack as usize].tasks += 1;
        // The engine starts it on an idle core of the node, or queues it there. The header
        // names the node (plus one), should the task be lost on its way.
        let core = self
            .usable_core(ctx, p, to)
            .unwrap_or(self.nodes[p as usize][to as usize].first);
        task.hint = core + 1;
        if to == me {
            Decision::to(core)
        } else {
            self.note_migration(p, me, to, ctx.now);
            Decision::via(core, 2)
        }
    }

    fn on_task_left_worker(&mut self, pool: u32, worker: u32, now: Nanos) {
        let n = self.node_of[pool as usize][worker as usize];
        let rack = self.nodes[pool as usize][n as usize].rack;
        self.heartbeats(pool, rack, now);
        self.change(pool, n, -1, now);
        let r = &mut self.racks[pool as usize][rack as usize];
        r.tasks = r.tasks.saturating_sub(1);
    }

    fn on_task_lost(&mut self, task: &TaskHeader, now: Nanos) {
        // Lost on its way to a node (sent to one whose last core had died): it leaves that
        // node's count. A task lost before its leaf chose (hint 0) was never counted.
        if task.hint > 0 {
            self.on_task_left_worker(task.pool, task.hint - 1, now);
        }
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        // The node counted the task out when it finished; its reply carries the service time
        // and triggers the stealing policy and the leaf's report to the spines.
        let p = reply.pool;
        let n = self.node_of[p as usize][reply.worker as usize];
        self.heartbeats(p, rack, ctx.now);
        let node = &mut self.nodes[p as usize][n as usize];
        node.service_ns += SERVICE_EMA * (f64::from(reply.service_ns) - node.service_ns);
        let tasks = self.racks[p as usize][rack as usize].tasks;
        let workers = ctx.cluster.pools[p as usize].racks[rack as usize].workers;
        ReportedLoads::report(ctx, p, rack, tasks as f64 / f64::from(workers));
        self.maybe_steal(ctx, p, rack, n);
    }

    fn on_steal(&mut self, ctx: &mut Ctx, steal: Steal, moved: bool) {
        if !moved {
            return;
        }
        let p = steal.pool;
        let rack = ctx.cluster.pools[p as usize].worker_rack[steal.victim as usize];
        self.heartbeats(p, rack, ctx.now);
        let (from, to) = (
            self.node_of[p as usize][steal.victim as usize],
            self.node_of[p as usize][steal.thief as usize],
        );
        self.change(p, from, -1, ctx.now);
        self.change(p, to, 1, ctx.now);
        self.stolen += 1;
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        self.spines.on_message(msg);
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        // The tasks lost with a core or a node left the counts when they were lost
        // (`on_task_left_worker`); a dead core leaves its node's capacity, a node with none the
        // choices.
        for (pool, worker, _) in super::removed_workers(ctx, notice) {
            let n = self.node_of[pool as usize][worker as usize];
            let node = self.nodes[pool as usize][n as usize];
            self.heartbeats(pool, node.rack, ctx.now);
            let live = (node.first..node.first + node.cores)
                .filter(|&w| ctx.worker_usable(pool, w))
                .count() as u32;
            self.nodes[pool as usize][n as usize].live = live;
        }
        self.spines.on_failure_notice(ctx, notice);
    }

    fn counters(&self) -> Vec<(String, u64)> {
        // The nodes' tasks at the end: the engine's unfinished ones at the nodes, when the count
        // is exact (0 after a run that drains).
        let tracked = self
            .nodes
            .iter()
            .flatten()
            .map(|n| u64::from(n.tasks))
            .sum();
        let mut c = vec![
            ("migrations".into(), self.migrations),
            ("tasks_at_nodes".into(), tracked),
        ];
        if matches!(self.rule, Rule::Learned(_)) {
            let updates = self
                .racks
                .iter()
                .flatten()
                .filter_map(|r| r.learner.as_ref())
                .map(|l| l.updates)
                .sum();
            c.extend([
                ("steal_requests".into(), self.steals),
                ("stolen".into(), self.stolen),
                ("policy_updates".into(), updates),
            ]);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bench::{Bench, reply, task};

    /// Rack slot 0 has 4 nodes of 2 cores (nodes 0-3, workers 0-7).
    fn bench() -> Bench {
        Bench::with_servers("exp", 4, 2)
    }

    fn malcolm(b: &mut Bench, rule: Rule) -> Malcolm {
        let cluster = b.engine.cluster();
        Malcolm::new(
            cluster,
            &vec![0; cluster.workers.len()],
            rule,
            100_000,
            false,
            2,
            &mut b.rng,
        )
    }

    fn learned() -> Rule {
        Rule::Learned(LearnParams {
            critic_lr: 0.01,
            actor_lr: 0.01,
            gamma: 0.9,
            cost: 0.0,
            batch: 2,
            consensus: 1,
            weight_decay: 0.0,
            keep: 0.5,
        })
    }

    #[test]
    fn nodes_are_a_pools_workers_on_one_server() {
        let mut b = bench();
        let m = malcolm(&mut b, Rule::Rand);
        assert_eq!(m.nodes[0].len(), 8);
        for (n, node) in m.nodes[0].iter().enumerate() {
            assert_eq!((node.first, node.cores), (2 * n as u32, 2));
        }
        assert_eq!((m.racks[0][0].first, m.racks[0][0].count), (0, 4));
        assert_eq!((m.racks[0][1].first, m.racks[0][1].count), (4, 4));
        assert_eq!(
            m.node_of[0],
            [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
        );
    }

    #[test]
    fn a_node_sees_the_last_broadcast_and_its_own_migrations() {
        let mut b = bench();
        let mut m = malcolm(&mut b, Rule::Jsq);
        // Within the first period (0-100 us) every choice sees the broadcast at 0 (all empty)
        // plus its own migrations: JSQ spreads each node's tasks, but nodes herd.
        for t in 0..8 {
            b.call(1 + t, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        let total: u32 = (0..4).map(|n| m.nodes[0][n].tasks).sum();
        assert_eq!(total, 8);
        for n in 0..4u32 {
            let me = (n + 1) % 4;
            let (_, sent) = &m.migrated[0][me as usize];
            let mine = sent.iter().filter(|&&x| x == n).count() as f64;
            // The broadcast at 0 saw every node empty.
            assert_eq!(m.view(0, me, n, 50_000), mine);
            // Its own load a node knows exactly.
            assert_eq!(
                m.view(0, n, n, 50_000),
                f64::from(m.nodes[0][n as usize].tasks)
            );
        }
        // The next period's broadcast has the loads as they were at 100 us, whatever happened
        // after; the one after, at 200 us, the reply.
        let before: Vec<u32> = (0..4).map(|n| m.nodes[0][n].tasks).collect();
        let busy = (0..4).find(|&n| before[n] > 0).unwrap() as u32;
        m.on_task_left_worker(0, 2 * busy, 150_000);
        for n in 0..4u32 {
            assert_eq!(
                m.view(0, (n + 1) % 4, n, 150_000),
                f64::from(before[n as usize])
            );
        }
        let other = (busy + 1) % 4;
        assert_eq!(
            m.view(0, other, busy, 200_000),
            f64::from(before[busy as usize] - 1)
        );
    }

    #[test]
    fn each_rule_chooses_as_malcolm_describes() {
        let mut b = bench();
        // Make node 2 the only one with a low load, as broadcast at 100 us.
        let fill = |m: &mut Malcolm| {
            for n in [0, 1, 3] {
                for _ in 0..5 {
                    m.change(0, n, 1, 10_000);
                }
            }
        };
        // RAND keeps every task where it lands: no migration.
        let mut m = malcolm(&mut b, Rule::Rand);
        for _ in 0..50 {
            let d = b.call(150, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d.extra_hops, 0);
        }
        // JSQ sends to the low load, two hops more when it is not the node's own, to one of
        // the node's cores.
        let mut m = malcolm(&mut b, Rule::Jsq);
        fill(&mut m);
        let d = b.call(150, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
        assert_eq!(d.node, 4);
        // JBT (threshold 2): below it, a node keeps its task; above, it sends it below. Each
        // task in a period of its own, its node back to empty before the next broadcast.
        let mut m = malcolm(&mut b, Rule::Jbt { threshold: 2 });
        fill(&mut m);
        for i in 0..20 {
            let t = 150 + 100 * i;
            let d = b.call(t, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(d.node, 4);
            assert!(d.extra_hops == 0 || d.extra_hops == 2);
            m.change(0, 2, -1, t * 1000);
        }
        assert!(m.migrations > 0);
        // Po2: never the higher of its two samples.
        let mut m = malcolm(&mut b, Rule::Po2);
        fill(&mut m);
        let mut low = 0;
        for i in 0..400 {
            let t = 150 + 100 * i;
            let d = b.call(t, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            low += u32::from(d.node == 4);
            m.change(0, m.node_of[0][d.node as usize], -1, t * 1000);
        }
        // P(a sample of two hits the low node) = 1 - (3/4)^2 = 7/16 of 400 = 175.
        assert!((150..200).contains(&low), "{low}");
    }

    #[test]
    fn malcolm_learns_at_each_heartbeat_from_the_loads_then() {
        let mut b = bench();
        let mut m = malcolm(&mut b, learned());
        // Tasks at 10 us: no heartbeat has ended yet (the first, at 0, starts the learners).
        for _ in 0..6 {
            b.call(10, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        assert_eq!(m.racks[0][0].beat, 1);
        // A reply at 450 us runs the heartbeats of 100 to 400 us, which all saw the loads left
        // at 10 us: two mini-batches of two, so two updates.
        let busy = (0..4u32)
            .find(|&n| m.nodes[0][n as usize].tasks > 0)
            .unwrap();
        b.call(450, |ctx| m.on_reply_at_leaf(ctx, 0, reply(2 * busy, 25)));
        assert_eq!(m.racks[0][0].beat, 5);
        assert_eq!(m.racks[0][0].learner.as_ref().unwrap().updates, 2);
        // The other rack saw nothing: its learners have not started.
        assert_eq!(m.racks[0][1].beat, 0);
        // Expected waits: tasks over cores times the service rate, in mean service times (100
        // us): the node's average service time moved a thirty-second of the way from that
        // towards the reply's 25 us.
        let node = m.nodes[0][busy as usize];
        assert_eq!(m.unit_ns, 100_000.0);
        assert!(
            (node.service_ns - 97_656.25).abs() < 1e-6,
            "{}",
            node.service_ns
        );
        let w = m.expected_wait(0, busy);
        let expected = f64::from(node.tasks) / 2.0 * 0.976_562_5;
        assert!((w - expected).abs() < 1e-9, "{w}");
    }

    #[test]
    fn malcolms_nodes_migrate_and_steal_by_their_policies() {
        let mut b = bench();
        let mut m = malcolm(&mut b, learned());
        // keep = 0.5: half the tasks migrate, spread over the three other nodes.
        let mut moved = 0;
        for i in 0..2000 {
            let d = b.call(10 + i, |ctx| m.on_task_at_leaf(ctx, 0, &mut task(0)));
            moved += u32::from(d.extra_hops == 2);
        }
        assert_eq!(u64::from(moved), m.migrations);
        assert!((900..1100).contains(&moved), "{moved}");
        // Half the completions ask another node of the rack for a task.
        b.steals.clear();
        for i in 0..400 {
            b.call(3000 + i, |ctx| m.on_reply_at_leaf(ctx, 0, reply(0, 25)));
        }
        let steals = b.steals.clone();
        assert!((150..250).contains(&steals.len()), "{}", steals.len());
        for s in &steals {
            assert_eq!(m.node_of[0][s.thief as usize], 0);
            assert!((2..8).contains(&s.victim), "{s:?}");
        }
        // A stolen task moves from the victim's count to the thief's.
        let s = steals[0];
        let (v, t) = (m.node_of[0][s.victim as usize], 0);
        let (before_v, before_t) = (m.nodes[0][v as usize].tasks, m.nodes[0][t].tasks);
        b.call(4000, |ctx| m.on_steal(ctx, s, true));
        assert_eq!(m.nodes[0][v as usize].tasks, before_v - 1);
        assert_eq!(m.nodes[0][t].tasks, before_t + 1);
        b.call(4000, |ctx| m.on_steal(ctx, s, false));
        assert_eq!(m.nodes[0][t].tasks, before_t + 1);
        assert_eq!(m.stolen, 1);
    }
}
