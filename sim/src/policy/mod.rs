//! Scheduling policies, the interface the engine offers them, and their registry.
//!
//! A task enters at one spine scheduler of its pool, which picks a rack ([`Policy::on_task_at_spine`]);
//! the leaf scheduler of that rack picks a worker ([`Policy::on_task_at_leaf`]); the worker's reply
//! passes the leaf ([`Policy::on_reply_at_leaf`]). Schedulers talk to each other only through
//! [`Message`]s, which the engine delivers with the network's per-hop delay and loss. A decision may
//! take several pipeline passes (a Tofino resubmit); each extra pass adds the configured resubmit
//! latency and marks the task as resubmitted. Policies own all their state; the engine owns time,
//! workers and the network.
//!
//! [`POLICIES`] lists every policy with its name, a one-line description, its parameters and their
//! defaults, and its constructor; the command line, the sweep, the bench and the results read it,
//! so a new policy is a new file here, its `pub mod` line and one entry in that table. Each policy
//! is documented in its own file, with its source.

#[cfg(test)]
pub(crate) mod bench;
pub mod horus;
pub mod horus_jbsq;
pub mod idle_only;
pub mod jbsq;
pub mod jiq;
pub mod jsq;
pub mod malcolm;
pub mod malcolm_rl;
pub mod r2p2;
pub mod racksched;
pub mod rain;
pub mod random;
pub mod sparrow;

use crate::cluster::Cluster;
use crate::queue::Nanos;
use crate::rng::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The header fields schedulers read and write on a task packet.
#[derive(Clone, Copy, Debug)]
pub struct TaskHeader {
    pub pool: u32,
    /// Spine slot (pool-local pod index) that received the task.
    pub spine: u32,
    /// Scratch a spine may fill for the leaf (for example the worker it already chose), or a
    /// leaf for itself (Malcolm: the node it sent the task to, plus one).
    pub hint: u32,
    /// A flag the leaf sets and the worker echoes in its reply (Horus: "popped from the idle list");
    /// the spine may also use it towards the leaf.
    pub tag: u16,
    /// The task's type, which its client knows and puts in the header: the component of the
    /// workload's service-time distribution it was drawn from (RocksDB: 0 a GET, 1 a SCAN; 0 for
    /// a workload of one type; [`crate::workload::ServiceTime::sample_kind`]).
    pub kind: u8,
    /// Tasks of its job that reach the spine after it, one after another (`--job-tasks`): 0 for
    /// a job's last task, or a job of one.
    pub job_left: u8,
}

/// A scheduler's choice: a pool-local rack slot (at a spine) or pool-local worker (at a leaf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub node: u32,
    /// Pipeline passes used, at least 1; every pass beyond the first is a resubmit.
    pub passes: u32,
    /// For a held task ([`Decision::hold_in`]): which of the leaf's queues of the pool holds it.
    pub queue: u32,
    /// At a leaf: network hops beyond the one to the worker (a task the node it reached first
    /// forwards to another node of the rack: two more, through the leaf).
    pub extra_hops: u32,
}

impl Decision {
    pub fn to(node: u32) -> Self {
        Self::after(node, 1)
    }

    /// To `node`, after `passes` pipeline passes.
    pub fn after(node: u32, passes: u32) -> Self {
        Self {
            node,
            passes,
            queue: 0,
            extra_hops: 0,
        }
    }

    /// At a leaf: to `node` after `extra_hops` more hops than the one to it.
    pub fn via(node: u32, extra_hops: u32) -> Self {
        Self {
            extra_hops,
            ..Self::to(node)
        }
    }

    /// At a leaf: keep the task in the leaf's queue of its pool, in arrival order, until the
    /// policy sends it to a worker with [`Ctx::release`].
    pub fn hold() -> Self {
        Self::hold_in(0)
    }

    /// At a leaf: keep the task in the leaf's queue `queue` of its pool (a policy may keep
    /// several, each in arrival order, e.g. one per task type), until [`Ctx::release_from`]
    /// sends it to a worker. At a spine: keep it in the spine's queue `queue` of the pool until a
    /// [`Release`] with `spine` set sends it to a worker.
    pub fn hold_in(queue: u32) -> Self {
        Self {
            node: HOLD,
            passes: 1,
            queue,
            extra_hops: 0,
        }
    }

    pub fn is_hold(&self) -> bool {
        self.node == HOLD
    }
}

/// The node of [`Decision::hold`].
const HOLD: u32 = u32::MAX;

/// A worker's reply as its leaf sees it.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    pub pool: u32,
    /// Pool-local worker.
    pub worker: u32,
    /// Tasks left at the worker (queued plus in service) after this one finished.
    pub qlen: u32,
    /// The worker's idle announcement: 1 if this reply leaves the worker empty (`qlen` 0) and it
    /// received a task with `tag` 1 since it last ran dry (or started with a prefilled queue).
    /// Horus: a worker popped from its leaf's idle list answers TASK_DONE_IDLE when it runs dry,
    /// so it is in the idle list at most once; the flag is sticky because a popped worker may get
    /// more (power-of-two) tasks before it runs dry. 0 otherwise.
    pub tag: u16,
    /// The task's service time at the worker, in ns (saturating at `u32::MAX`, 4.3 s): what a
    /// worker-side agent measures and reports (Rain's).
    pub service_ns: u32,
}

/// A pool's scheduler: spine `group_slot` or leaf `rack_slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Spine(u32),
    Leaf(u32),
}

/// A scheduler-to-scheduler packet. `kind` indexes [`Policy::message_kinds`].
#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub pool: u32,
    pub from: Node,
    pub to: Node,
    pub kind: u8,
    /// Payload: a worker or rack slot, a load, ... as the policy defines.
    pub value: u32,
    pub value2: u32,
}

/// What the controller tells the schedulers after detecting a failure.
#[derive(Clone, Copy, Debug)]
pub enum FailureNotice {
    /// A pool-local worker is gone.
    Worker { pool: u32, worker: u32 },
    /// A pool's rack slot is gone: its leaf switch failed, or every worker of the pool there did.
    Rack { pool: u32, rack: u32 },
    /// The pool's spine scheduler in `pod` was moved to another aggregation switch with empty state.
    SpineRestarted { pool: u32, pod: u32 },
}

/// How far ahead of its call a policy's prefetching runs, and so what it may load: a stage can
/// only follow pointers that the previous stages brought in, one event earlier each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PrefetchStage {
    /// The policy's own index entries for the call (e.g. which switch serves this rack):
    /// [`Policy::prefetch_index`].
    Index,
    /// The state of the switch (or other unit) the call will use.
    Switch,
    /// The rows of that state the call reads first (its pool, the node that sent a message).
    Rows,
    /// What those rows lead to (a task's idle-list top or sampled members).
    Entries,
    /// What the entries lead to (the rows of the candidate nodes). The last stage, run for the
    /// next event.
    Nodes,
}

impl PrefetchStage {
    pub const ALL: [PrefetchStage; 5] = [
        PrefetchStage::Index,
        PrefetchStage::Switch,
        PrefetchStage::Rows,
        PrefetchStage::Entries,
        PrefetchStage::Nodes,
    ];
}

/// What a policy's prefetch stages of one upcoming call hand to the next stage, so that a stage
/// does not work out again what an earlier one did: the engine keeps one per event of its window,
/// all zero before [`Policy::prefetch_index`] (and if it could not run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefetchNote(pub [u32; 5]);

/// The policy call an event is about to make, for [`Policy::prefetch_index`].
#[derive(Clone, Copy, Debug)]
pub enum Upcoming {
    TaskAtSpine {
        pool: u32,
        spine: u32,
    },
    TaskAtLeaf {
        pool: u32,
        rack: u32,
    },
    /// Pool-local rack slot and worker.
    ReplyAtLeaf {
        pool: u32,
        rack: u32,
        worker: u32,
    },
    Message(Message),
}

/// The view of the simulation a policy gets on each call.
pub struct Ctx<'a> {
    pub cluster: &'a Cluster,
    pub rng: &'a mut SimRng,
    pub now: Nanos,
    /// Per global worker: known dead by the controller (after the failure notice).
    pub(crate) dead_workers: &'a [bool],
    /// Per rack: known dead by the controller.
    pub(crate) dead_racks: &'a [bool],
    /// Per pool, per rack slot: every worker of the pool there known dead.
    pub(crate) empty_racks: &'a [Vec<bool>],
    /// True until the controller announces the first failure.
    pub(crate) nothing_dead: bool,
    pub(crate) outbox: &'a mut Vec<Message>,
    /// Tasks to send from a leaf's queues.
    pub(crate) releases: &'a mut Vec<Release>,
    /// Work-stealing requests between nodes ([`Ctx::steal`]).
    pub(crate) steals: &'a mut Vec<Steal>,
}

/// A work-stealing request ([`Ctx::steal`]): the node of pool-local worker `thief` asks the node
/// of `victim` (same pool and rack) for a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steal {
    pub pool: u32,
    pub thief: u32,
    pub victim: u32,
}

/// A held task a policy sends on ([`Ctx::release_from`], [`Ctx::release_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    pub pool: u32,
    /// Rack slot.
    pub rack: u32,
    /// Which of the leaf's queues of the pool ([`Decision::hold_in`]).
    pub queue: u32,
    /// Its place in that queue, 0 the oldest.
    pub index: u32,
    /// Pool-local worker.
    pub worker: u32,
    /// Pipeline passes it takes to leave, at least 1 (each more one resubmit latency: a task
    /// recirculating until a pass finds its worker).
    pub passes: u32,
    /// `Some(pod slot)`: the task is held by that spine of the pool ([`Decision::hold_in`] at a
    /// spine), and goes straight to `worker` of rack slot `rack` through its leaf, which does not
    /// schedule it (Sparrow's late binding).
    pub spine: Option<u32>,
}

impl Ctx<'_> {
    pub fn send(&mut self, msg: Message) {
        self.outbox.push(msg);
    }

    /// Sends the oldest task the leaf of `rack` holds for `pool` ([`Decision::hold`]) to
    /// pool-local `worker` of that rack, one hop away. The policy keeps count of what it holds:
    /// releasing from an empty queue is a bug and stops the run.
    pub fn release(&mut self, pool: u32, rack: u32, worker: u32) {
        self.release_from(pool, rack, 0, worker);
    }

    /// As [`Ctx::release`], from the leaf's queue `queue` of the pool ([`Decision::hold_in`]).
    pub fn release_from(&mut self, pool: u32, rack: u32, queue: u32, worker: u32) {
        self.release_at(Release {
            pool,
            rack,
            queue,
            index: 0,
            worker,
            passes: 1,
            spine: None,
        });
    }

    /// Sends the held task `r.index` places from the oldest of its queue (a policy whose held
    /// tasks are not served in order), after `r.passes` passes. Releasing beyond the queue is a
    /// bug and stops the run.
    pub fn release_at(&mut self, r: Release) {
        self.releases.push(r);
    }

    /// With [`Policy::node_queues`]: the node of `s.thief` asks the node of `s.victim` for a
    /// task. The request takes two hops (thief, leaf, victim); if the victim's node then has a
    /// task waiting, the oldest one ([`Policy::on_steal`]) takes two more to the thief's node,
    /// where it joins the queue like any arriving task.
    pub fn steal(&mut self, s: Steal) {
        self.steals.push(s);
    }

    /// False once the controller has announced that this pool-local worker or its rack failed.
    pub fn worker_usable(&self, pool: u32, worker: u32) -> bool {
        if self.nothing_dead {
            return true;
        }
        let global = (self.cluster.pools[pool as usize].worker_base + worker) as usize;
        !self.dead_workers[global] && !self.dead_racks[self.cluster.workers[global].rack as usize]
    }

    /// False once the controller has announced that this rack slot's rack failed, or every
    /// worker of the pool there.
    pub fn rack_usable(&self, pool: u32, rack_slot: u32) -> bool {
        if self.nothing_dead {
            return true;
        }
        !self.dead_racks[self.cluster.pools[pool as usize].racks[rack_slot as usize].rack as usize]
            && !self.empty_racks[pool as usize][rack_slot as usize]
    }

    /// A uniformly random usable worker among pool-local `first..first + count`; when a few draws
    /// find none usable, the next usable one after the last draw (nearly uniform), and the last
    /// draw when none is (the task is then lost, as it would be in a real system).
    pub fn random_worker(&mut self, pool: u32, first: u32, count: u32) -> u32 {
        self.random_usable(first, count, |c, w| c.worker_usable(pool, w))
    }

    /// A uniformly random usable rack slot among `first..first + count`, as
    /// [`Ctx::random_worker`] draws workers.
    pub fn random_rack(&mut self, pool: u32, first: u32, count: u32) -> u32 {
        self.random_usable(first, count, |c, r| c.rack_usable(pool, r))
    }

    pub(crate) fn random_usable(
        &mut self,
        first: u32,
        count: u32,
        usable: impl Fn(&Self, u32) -> bool,
    ) -> u32 {
        let mut x = first + self.rng.random_range(0..count);
        for _ in 0..8 {
            if usable(self, x) {
                return x;
            }
            x = first + self.rng.random_range(0..count);
        }
        if usable(self, x) {
            return x;
        }
        // Most are dead: the first usable one after the last draw, if any.
        (1..count)
            .map(|k| first + (x - first + k) % count)
            .find(|&y| usable(self, y))
            .unwrap_or(x)
    }
}

/// A policy's counters as [`Policy::counters`] returns them.
pub(crate) fn named_counters(counters: &[(&str, u64)]) -> Vec<(String, u64)> {
    counters.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

/// Every worker's initial queue, per pool and pool-local worker: what a leaf that counts its
/// workers' tasks starts with (non-zero only in a prefilled run).
pub(crate) fn initial_queues(cluster: &Cluster, queue_len: &[u32]) -> Vec<Vec<u32>> {
    cluster
        .pools
        .iter()
        .map(|p| {
            (0..p.workers())
                .map(|w| queue_len[(p.worker_base + w) as usize])
                .collect()
        })
        .collect()
}

/// The workers a failure notice removes, as (pool, pool-local worker, whether their leaf is
/// alive), for the policies whose leaves keep state per worker: a worker's notice removes it, a
/// rack's every worker of the pool there (its leaf failed, or all of them did). None for a
/// restarted spine.
pub(crate) fn removed_workers(ctx: &Ctx, notice: FailureNotice) -> Vec<(u32, u32, bool)> {
    let alive = |pool: u32, slot: u32| {
        let physical = ctx.cluster.pools[pool as usize].racks[slot as usize].rack;
        !ctx.dead_racks[physical as usize]
    };
    match notice {
        FailureNotice::Worker { pool, worker } => {
            let slot = ctx.cluster.pools[pool as usize].worker_rack[worker as usize];
            vec![(pool, worker, alive(pool, slot))]
        }
        FailureNotice::Rack { pool, rack } => {
            let r = &ctx.cluster.pools[pool as usize].racks[rack as usize];
            let live = alive(pool, rack);
            (r.first_worker..r.first_worker + r.workers)
                .map(|w| (pool, w, live))
                .collect()
        }
        FailureNotice::SpineRestarted { .. } => Vec::new(),
    }
}

/// A scheduling policy. Pool-local indices throughout (see [`crate::cluster`]).
pub trait Policy: Send {
    /// Names of the message kinds this policy sends, indexed by [`Message::kind`]; the metrics
    /// report messages per task for each.
    fn message_kinds(&self) -> &'static [&'static str] {
        &[]
    }

    /// A task reached spine `task.spine` of `task.pool`: pick a rack slot.
    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision;

    /// A task reached the leaf of rack slot `rack`: pick a worker of that rack.
    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision;

    /// A worker's reply reached its leaf.
    fn on_reply_at_leaf(&mut self, _ctx: &mut Ctx, _rack: u32, _reply: Reply) {}

    /// A message from another scheduler arrived.
    fn on_message(&mut self, _ctx: &mut Ctx, _msg: Message) {}

    /// Zero-delay oracle: a task left pool-local `worker` at `now` (finished, or lost after being
    /// assigned to it; with [`Policy::node_queues`], `worker` is a core of the node the task
    /// left). Switch schedulers ignore it; JSQ-ideal uses it, and Malcolm, whose load managers
    /// run on the nodes themselves and see their own completions at once.
    fn on_task_left_worker(&mut self, _pool: u32, _worker: u32, _now: Nanos) {}

    /// Zero-delay oracle: a task was lost at `now` before reaching a worker (with
    /// [`Policy::node_queues`], a node: its header as the policy last set it, or for a stolen
    /// task `hint` = thief + 1).
    fn on_task_lost(&mut self, _task: &TaskHeader, _now: Nanos) {}

    fn on_failure_notice(&mut self, _ctx: &mut Ctx, _notice: FailureNotice) {}

    /// A hint that the call `next` comes soon: a policy may start loading the state it will read
    /// (see [`crate::prefetch`]), so that the cache misses of consecutive events overlap. This is
    /// the [`PrefetchStage::Index`] stage; [`Policy::prefetch`] runs the later ones, one event
    /// closer each, given what this one wrote into `note`. Must not change any state.
    fn prefetch_index(&self, _cluster: &Cluster, _next: Upcoming, _note: &mut PrefetchNote) {}

    /// The later stages of prefetching, each for the call [`Policy::prefetch_index`] was given
    /// that many events earlier: `notes[i]` is the note of the call at stage
    /// `PrefetchStage::ALL[4 - i]` (the last stage first: the next event's), as the earlier stages
    /// left it (all zero if they did not run).
    fn prefetch(&self, _cluster: &Cluster, _notes: &mut [PrefetchNote; 4]) {}

    /// Whether [`Policy::prefetch_index`] and [`Policy::prefetch`] do anything (the engine skips
    /// working out the calls if not).
    fn prefetches(&self) -> bool {
        false
    }

    /// Whether the policy's packets (tasks and messages) travel over a reliable transport, as
    /// Sparrow's RPCs run over TCP: the network then loses none of them, whatever `--loss` says
    /// (a retransmission's delay is not modelled).
    fn reliable_transport(&self) -> bool {
        false
    }

    /// Whether a pool's workers on one server are the cores of one node sharing a FCFS queue
    /// ([`crate::cluster::Cluster::pool_nodes`]): a task sent to any of them starts on an idle
    /// core of the node or waits in its queue, and a core that finishes takes the queue's oldest
    /// task (Malcolm's intra-node scheduler, seed 004 §3.1). A reply's `qlen` is then the node's
    /// tasks, in service and waiting. Off: every worker has a queue of its own.
    fn node_queues(&self) -> bool {
        false
    }

    /// With [`Policy::node_queues`]: a steal request ([`Ctx::steal`]) reached the victim's node,
    /// which sent its oldest waiting task to the thief (`moved`) or had none waiting. A request
    /// to a node with no live core (or in a failed rack) goes unanswered: no call.
    fn on_steal(&mut self, _ctx: &mut Ctx, _steal: Steal, _moved: bool) {}

    /// The policy's own counters at the end of a run, `(name, value)`, echoed in the summary
    /// (Horus: the model schedulers' counters summed over leaves and spines).
    fn counters(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
}

/// Horus's parameters (`docs/algorithm.md`, decisions 6, 7 and 17), with their defaults.
const HORUS_PARAMS: [Param; 4] = [
    Param::new("link_at", horus::HorusParams::DEFAULT.link_at as f64),
    Param::new("unlink_at", horus::HorusParams::DEFAULT.unlink_at as f64),
    Param::new("report_delta", horus::HorusParams::DEFAULT.report_delta),
    Param::new(
        "repair_gap_us",
        horus::HorusParams::DEFAULT.repair_gap_us as f64,
    ),
];

/// horus-tofino's: Horus's and one flag per Tofino difference (1: as the Tofino program does).
const HORUS_TOFINO_PARAMS: [Param; 7] = {
    let h = HORUS_PARAMS;
    [
        Param::new("samples_16", 1.0),
        Param::new("avg_16_16", 1.0),
        Param::new("control_plane_tables", 1.0),
        h[0],
        h[1],
        h[2],
        h[3],
    ]
};

/// horus-jbsq's: the leaf's bound and Horus's.
const HORUS_JBSQ_PARAMS: [Param; 6] = {
    let h = HORUS_PARAMS;
    [
        Param::new("k", 2.0),
        Param::new("weighted", 0.0),
        h[0],
        h[1],
        h[2],
        h[3],
    ]
};

/// Malcolm's Po2, JSQ and JBT: the broadcast period, loads weighted by speed or not, the spines'
/// samples.
const MALCOLM_PARAMS: [Param; 3] = [
    Param::new("period_us", 100.0),
    Param::new("weighted", 0.0),
    Param::new("samples", 2.0),
];

/// The policies the simulator offers, in the order the help and errors list them. Everything that
/// names a policy reads this table: `--policy` and `--policies` (and their help and errors), the
/// default policies of a sweep, the events bench, and the `policy` field of the results.
///
/// A new policy is a new file in this folder (a type implementing [`Policy`]), its `pub mod` line
/// above, and one entry here.
pub static POLICIES: &[PolicyEntry] = &[
    PolicyEntry {
        name: "horus",
        about: "Horus: idle lists and aggregated load updates at leaves and spines, run by the \
                horus-model schedulers",
        params: &HORUS_PARAMS,
        compared: true,
        build: |b| {
            let params = horus::HorusParams::of(b.params.0)
                .expect("SimConfig::validate checked the parameters (HorusParams::of)");
            Box::new(horus::Horus::new(b.cluster, b.queue_len, b.rng, params))
        },
    },
    PolicyEntry {
        name: horus::TOFINO_POLICY,
        about: "Horus with the Tofino program's arithmetic (docs/p4.md), each difference a parameter \
                (1: the Tofino's): samples_16 (16-bit draws through range tables), avg_16_16 (the \
                rack average in 16.16), control_plane_tables (no link rule on control passes)",
        params: &HORUS_TOFINO_PARAMS,
        compared: false,
        build: |b| {
            let params = horus::HorusParams::of(b.params.0)
                .expect("SimConfig::validate checked the parameters (HorusParams::of)");
            Box::new(horus::Horus::new(b.cluster, b.queue_len, b.rng, params))
        },
    },
    PolicyEntry {
        name: "rs-h",
        about: "RackSched at the spines over the racks of their pod, fed by each leaf's average \
                load after every reply, and at the leaves over workers",
        params: &[Param::new("samples", 2.0)],
        compared: true,
        build: |b| rack_sched(b, racksched::SpineMode::RackLoads { threshold: 0.0 }),
    },
    PolicyEntry {
        name: "rs-lb",
        about: "a uniformly random rack of the pool, RackSched inside it",
        params: &[Param::new("samples", 2.0)],
        compared: true,
        build: |b| rack_sched(b, racksched::SpineMode::UniformRack),
    },
    PolicyEntry {
        name: "jsq",
        about: "join the shortest queue of the pool, with zero-delay state (the ideal bound; \
                weighted = 1: the worker a new task would finish soonest on, (queue + 1) / speed)",
        params: &[Param::new("weighted", 0.0)],
        compared: true,
        build: |b| {
            let weighted = b.params.get("weighted") != 0.0;
            Box::new(jsq::JsqIdeal::new(b.cluster, b.queue_len, weighted))
        },
    },
    PolicyEntry {
        name: "random",
        about: "a uniformly random worker of the pool",
        params: &[],
        compared: true,
        build: |_| Box::new(random::RandomPolicy),
    },
    PolicyEntry {
        name: "rs",
        about: "RackSched over one pool-wide table of worker loads, replicated at the spines",
        params: &[Param::new("samples", 2.0)],
        compared: false,
        build: |b| rack_sched(b, racksched::SpineMode::PoolWide),
    },
    PolicyEntry {
        name: "po2-du",
        about: "power of two with delayed updates: as rs-h, but a leaf reports its average load \
                only when it moved by at least threshold",
        params: &[Param::new("samples", 2.0), Param::new("threshold", 1.0)],
        compared: false,
        build: |b| {
            let threshold = b.params.get("threshold");
            rack_sched(b, racksched::SpineMode::RackLoads { threshold })
        },
    },
    PolicyEntry {
        name: "draconis",
        about: "a uniformly random rack of the pool; its leaf queues the tasks no worker can \
                take and gives each worker at most k outstanding (k = 1: idle workers pull, as \
                Draconis's switch queue does)",
        params: &[Param::new("k", 1.0), Param::new("weighted", 0.0)],
        compared: false,
        build: |b| {
            let k = b.params.get("k") as u32;
            let weighted = b.params.get("weighted") != 0.0;
            Box::new(jbsq::Jbsq::new(
                b.cluster,
                k,
                weighted,
                1,
                jbsq::SpineMode::UniformRack,
            ))
        },
    },
    PolicyEntry {
        name: "jbsq",
        about: "power of samples over the racks of the spine's pod by the load each leaf \
                reports after every reply, and JBSQ(k) at the leaf: a bounded in-rack queue, \
                at most k outstanding tasks a worker (weighted = 1: ranked by (outstanding + 1) \
                / speed, at most k x speed)",
        params: &[
            Param::new("k", 2.0),
            Param::new("weighted", 0.0),
            Param::new("samples", 2.0),
        ],
        compared: false,
        build: |b| {
            let k = b.params.get("k") as u32;
            let weighted = b.params.get("weighted") != 0.0;
            let samples = b.params.get("samples") as u32;
            Box::new(jbsq::Jbsq::new(
                b.cluster,
                k,
                weighted,
                samples,
                jbsq::SpineMode::RackLoads,
            ))
        },
    },
    PolicyEntry {
        name: horus_jbsq::NAME,
        about: "Horus between racks (the model's spines), and at the leaf a bounded in-rack \
                queue, JBSQ(k), that counts its held tasks in the load it reports",
        params: &HORUS_JBSQ_PARAMS,
        compared: false,
        build: |b| {
            let params = horus::HorusParams::of(b.params.0)
                .expect("SimConfig::validate checked the parameters (HorusParams::of)");
            let k = b.params.get("k") as u32;
            let weighted = b.params.get("weighted") != 0.0;
            Box::new(horus_jbsq::HorusJbsq::new(
                b.cluster,
                b.queue_len,
                b.rng,
                k,
                weighted,
                params,
            ))
        },
    },
    PolicyEntry {
        name: rain::NAME,
        about: "Rain: token queues at the leaf (a worker has at most its quota of tokens out, \
                a task takes the oldest waiting token or waits for one), a slice of workers \
                and queues per task type (sliced), and an agent that tunes each worker's quota \
                and moves workers between slices every interval_us (adaptive; Algorithm 1 with \
                its slowdown and ratio thresholds), behind spines that sample racks by load",
        params: &[
            Param::new("k", 2.0),
            Param::new("k_max", 8.0),
            Param::new("samples", 2.0),
            Param::new("sliced", 1.0),
            Param::new("adaptive", 1.0),
            Param::new("interval_us", 1000.0),
            Param::new("slowdown", 10.0),
            Param::new("ratio", 0.3),
        ],
        compared: false,
        build: |b| {
            let params = rain::RainParams::of(b.params.0)
                .expect("SimConfig::validate checked the parameters (RainParams::of)");
            Box::new(rain::Rain::new(b.cluster, b.queue_len, params))
        },
    },
    PolicyEntry {
        name: r2p2::NAME,
        about: "R2P2's router on a switch: JBSQ(n) by recirculation, each pass sampling probes \
                workers of the rack, each pass beyond the first one resubmit latency, behind \
                spines that sample racks by load",
        params: &[
            Param::new("n", 1.0),
            Param::new("probes", 2.0),
            Param::new("samples", 2.0),
        ],
        compared: false,
        build: |b| {
            let n = b.params.get("n") as u32;
            let probes = b.params.get("probes") as u32;
            let samples = b.params.get("samples") as u32;
            Box::new(r2p2::R2p2::new(b.cluster, b.queue_len, n, probes, samples))
        },
    },
    PolicyEntry {
        name: malcolm::NAMES[0],
        about: "Malcolm's RAND baseline: a task stays at the random node of the rack it reaches",
        params: &[Param::new("samples", 2.0)],
        compared: false,
        build: |b| malcolm(b, malcolm::Rule::Rand),
    },
    PolicyEntry {
        name: malcolm::NAMES[1],
        about: "Malcolm's Po2 baseline: the node a task reaches sends it to the shorter queue of \
                two random nodes of the rack, by loads broadcast every period_us",
        params: &MALCOLM_PARAMS,
        compared: false,
        build: |b| malcolm(b, malcolm::Rule::Po2),
    },
    PolicyEntry {
        name: malcolm::NAMES[2],
        about: "Malcolm's JSQ baseline: the node a task reaches sends it to the shortest queue \
                of the rack, by loads broadcast every period_us",
        params: &MALCOLM_PARAMS,
        compared: false,
        build: |b| malcolm(b, malcolm::Rule::Jsq),
    },
    PolicyEntry {
        name: malcolm::NAMES[3],
        about: "Malcolm's JBT baseline: the node a task reaches keeps it if its queue is under \
                queue_threshold, else sends it to a random node under it (by loads broadcast \
                every period_us), else to a random node",
        params: &[
            Param::new("queue_threshold", 2.0),
            MALCOLM_PARAMS[0],
            MALCOLM_PARAMS[1],
            MALCOLM_PARAMS[2],
        ],
        compared: false,
        build: |b| {
            let threshold = b.params.get("queue_threshold") as u32;
            malcolm(b, malcolm::Rule::Jbt { threshold })
        },
    },
    PolicyEntry {
        name: malcolm::NAME,
        about: "Malcolm's own strategy: each node of a rack keeps or migrates an arriving task, \
                and after a completion may steal one, by softmax policies over the nodes' \
                expected waits, learned by decentralized actor-critic on heartbeats of period_us",
        params: &[
            Param::new("period_us", 100.0),
            Param::new("batch", 20.0),
            Param::new("consensus", 100.0),
            Param::new("critic_lr", 0.01),
            Param::new("actor_lr", 0.0003),
            Param::new("gamma", 0.9),
            Param::new("cost", 0.0001),
            Param::new("weight_decay", 0.01),
            Param::new("keep", 0.9),
            Param::new("samples", 2.0),
        ],
        compared: false,
        build: |b| {
            let params = malcolm_rl::LearnParams::of(b.params.0)
                .expect("SimConfig::validate checked the parameters (LearnParams::of)");
            malcolm(b, malcolm::Rule::Learned(params))
        },
    },
    PolicyEntry {
        name: sparrow::NAME,
        about: "Sparrow: a job's spine probes d x m random workers of the pool for its m tasks \
                (batch sampling), each worker asks for a task when a probe reaches the head of \
                its queue (late binding); use with --job-tasks",
        params: &[Param::new("d", 2.0)],
        compared: false,
        build: |b| {
            let d = b.params.get("d") as u32;
            Box::new(sparrow::Sparrow::new(b.cluster, b.queue_len, d))
        },
    },
    PolicyEntry {
        name: "jiq",
        about: "join-idle-queue: a spine sends a task to a worker reported idle to it, else to a \
                random worker of the pool",
        params: &[],
        compared: false,
        build: |b| Box::new(jiq::Jiq::new(b.cluster, b.queue_len, b.rng)),
    },
    PolicyEntry {
        name: "idle-only",
        about: "Horus' idle lists without its load updates (the idle-selection ablation)",
        params: &[],
        compared: false,
        build: |b| Box::new(idle_only::IdleOnly::new(b.cluster, b.queue_len)),
    },
];

/// The constructor of the RackSched variants: `samples` from the parameters, the spine's `mode`.
fn rack_sched(b: Build<'_>, mode: racksched::SpineMode) -> Box<dyn Policy> {
    let samples = b.params.get("samples") as u32;
    Box::new(racksched::RackSched::new(b.cluster, samples, mode))
}

/// The constructor of Malcolm's baselines: the period (RAND has none) and the spines' samples
/// from the parameters.
fn malcolm(b: Build<'_>, rule: malcolm::Rule) -> Box<dyn Policy> {
    let period_us = b.params.0.param("period_us").unwrap_or(100.0);
    let weighted = b.params.0.param("weighted").unwrap_or(0.0) != 0.0;
    let samples = b.params.get("samples") as u32;
    Box::new(malcolm::Malcolm::new(
        b.cluster,
        b.queue_len,
        rule,
        (period_us * 1e3).round() as crate::queue::Nanos,
        weighted,
        samples,
        b.rng,
    ))
}

/// A policy as [`POLICIES`] registers it.
pub struct PolicyEntry {
    /// Its name on the command line (`--policy`, `--policies`) and in the results.
    pub name: &'static str,
    /// One line for the help.
    pub about: &'static str,
    /// Its parameters, which a [`PolicySpec`] starts with at their defaults.
    pub params: &'static [Param],
    /// Whether `horus-sim sweep` compares it by default.
    pub compared: bool,
    /// Builds the policy for a cluster.
    pub build: fn(Build<'_>) -> Box<dyn Policy>,
}

/// A numeric parameter of a policy. Integer parameters hold whole numbers, converted by the
/// policy's constructor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub default: f64,
}

impl Param {
    pub const fn new(name: &'static str, default: f64) -> Self {
        Self { name, default }
    }
}

/// What a policy's constructor ([`PolicyEntry::build`]) gets.
pub struct Build<'a> {
    pub cluster: &'a Cluster,
    /// The initial queue length of every global worker (non-zero only when the run starts
    /// prefilled).
    pub queue_len: &'a [u32],
    /// The policy's own random stream.
    pub rng: &'a mut SimRng,
    pub params: Params<'a>,
}

/// The parameter values a policy is built with.
#[derive(Clone, Copy)]
pub struct Params<'a>(&'a PolicySpec);

impl Params<'_> {
    /// The value of parameter `name`. Panics if the policy has no such parameter: a name
    /// misspelt in [`POLICIES`], which its tests find by building every policy.
    pub fn get(&self, name: &str) -> f64 {
        self.0
            .param(name)
            .unwrap_or_else(|| panic!("policy {} has no parameter {name:?}", self.0.name()))
    }
}

/// The names in [`POLICIES`], in its order.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    POLICIES.iter().map(|p| p.name)
}

/// The policies a sweep compares by default ([`PolicyEntry::compared`]), in the order of
/// [`POLICIES`].
pub fn compared() -> impl Iterator<Item = &'static str> + Clone {
    POLICIES.iter().filter(|p| p.compared).map(|p| p.name)
}

/// A registered policy with values for its parameters: what a run is configured with. Its
/// serialized form is a map of `name` and the parameters.
#[derive(Clone, Deserialize)]
#[serde(try_from = "SpecFields")]
pub struct PolicySpec {
    entry: &'static PolicyEntry,
    /// In the order of the entry's parameters.
    values: Vec<f64>,
}

impl PolicySpec {
    /// The policy registered as `name`, with its default parameters; an error listing the
    /// registered names if there is none.
    pub fn named(name: &str) -> anyhow::Result<Self> {
        let Some(entry) = POLICIES.iter().find(|p| p.name == name) else {
            let known: Vec<&str> = names().collect();
            anyhow::bail!("unknown policy {name:?}; known: {}", known.join(", "));
        };
        Ok(Self {
            entry,
            values: entry.params.iter().map(|p| p.default).collect(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    pub fn entry(&self) -> &'static PolicyEntry {
        self.entry
    }

    /// The parameters and their values, in the entry's order.
    pub fn params(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.entry
            .params
            .iter()
            .map(|p| p.name)
            .zip(self.values.iter().copied())
    }

    /// The value of parameter `name`, if the policy has one.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.params().find(|&(n, _)| n == name).map(|(_, v)| v)
    }

    /// Sets parameter `name`; an error naming the policy's parameters if it has no such one.
    pub fn set_param(&mut self, name: &str, value: f64) -> anyhow::Result<()> {
        match self.entry.params.iter().position(|p| p.name == name) {
            Some(i) => {
                self.values[i] = value;
                Ok(())
            }
            None => {
                let known: Vec<&str> = self.entry.params.iter().map(|p| p.name).collect();
                anyhow::bail!(
                    "policy {} has no parameter {name:?}; its parameters: {}",
                    self.name(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            }
        }
    }

    /// Builds the policy for a cluster; `queue_len` is the initial queue length of every global
    /// worker (non-zero only when the run starts prefilled).
    pub fn build(&self, cluster: &Cluster, queue_len: &[u32], rng: &mut SimRng) -> Box<dyn Policy> {
        (self.entry.build)(Build {
            cluster,
            queue_len,
            rng,
            params: Params(self),
        })
    }
}

impl Default for PolicySpec {
    /// Random dispatch, the policy of a run that names none.
    fn default() -> Self {
        Self::named("random").expect("random is registered")
    }
}

impl PartialEq for PolicySpec {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.values == other.values
    }
}

impl std::fmt::Debug for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("PolicySpec");
        d.field("name", &self.name());
        for (name, value) in self.params() {
            d.field(name, &value);
        }
        d.finish()
    }
}

impl Serialize for PolicySpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1 + self.values.len()))?;
        map.serialize_entry("name", self.name())?;
        for (name, value) in self.params() {
            map.serialize_entry(name, &value)?;
        }
        map.end()
    }
}

/// The serialized form of a [`PolicySpec`]; parameters left out keep their defaults.
#[derive(Deserialize)]
struct SpecFields {
    name: String,
    #[serde(flatten)]
    params: std::collections::BTreeMap<String, f64>,
}

impl TryFrom<SpecFields> for PolicySpec {
    type Error = anyhow::Error;

    fn try_from(fields: SpecFields) -> anyhow::Result<Self> {
        let mut spec = Self::named(&fields.name)?;
        for (name, value) in fields.params {
            spec.set_param(&name, value)?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{PoolSource, SimConfig};
    use crate::engine::Engine;
    use crate::topology::Topology;
    use std::collections::HashSet;

    #[test]
    fn registered_names_and_parameters_are_unique() {
        let mut seen = HashSet::new();
        for p in POLICIES {
            assert!(
                !p.name.is_empty()
                    && p.name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{:?} is not a command-line name",
                p.name
            );
            assert!(seen.insert(p.name), "{} is registered twice", p.name);
            assert!(!p.about.is_empty(), "{} has no description", p.name);
            let mut params = HashSet::new();
            for q in p.params {
                assert!(
                    params.insert(q.name),
                    "{}: parameter {} twice",
                    p.name,
                    q.name
                );
            }
        }
        assert!(
            compared().count() > 0,
            "a sweep compares some policies by default"
        );
    }

    #[test]
    fn every_registered_policy_builds_and_schedules_with_its_defaults() {
        for name in names() {
            let spec = PolicySpec::named(name).unwrap();
            assert_eq!(spec.name(), name);
            for (q, (n, v)) in spec.entry().params.iter().zip(spec.params()) {
                assert_eq!((n, v), (q.name, q.default));
            }
            for prefill in [false, true] {
                let cfg = SimConfig {
                    topology: Topology {
                        pods: 4,
                        servers_per_rack: 2,
                        slots_per_server: 4,
                    },
                    pools: PoolSource::Sizes(vec![20, 12]),
                    policy: spec.clone(),
                    load: crate::workload::LoadSchedule::constant(0.7),
                    sim_ns: 500_000,
                    warmup_ns: 0,
                    prefill,
                    ..SimConfig::default()
                };
                let s = Engine::new(&cfg).unwrap().run(&mut |_| {});
                assert_eq!(s.policy, name);
                assert!(s.completed > 100, "{name}: {} tasks done", s.completed);
            }
        }
    }

    #[test]
    fn horus_tofino_is_horus_with_the_tofino_profile() {
        use horus_model::sched::Profile;
        let t = horus::HorusParams::of(&PolicySpec::named(horus::TOFINO_POLICY).unwrap()).unwrap();
        let f = horus::HorusParams::of(&PolicySpec::named("horus").unwrap()).unwrap();
        assert_eq!((t.profile, f.profile), (Profile::TOFINO, Profile::FPGA));
        let mut one = PolicySpec::named(horus::TOFINO_POLICY).unwrap();
        one.set_param("avg_16_16", 0.0).unwrap();
        let p = horus::HorusParams::of(&one).unwrap().profile;
        assert!(p.samples_16 && !p.avg_16_16 && p.control_plane_tables);
        assert_eq!(
            horus::HorusParams {
                profile: Profile::FPGA,
                ..t
            },
            f
        );
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_registered_ones() {
        let e = PolicySpec::named("nosuch").unwrap_err().to_string();
        assert!(e.starts_with("unknown policy \"nosuch\"; known: "), "{e}");
        for name in names() {
            assert!(e.contains(name), "{name} missing from: {e}");
        }
    }

    #[test]
    fn parameters_are_read_and_set_by_name() {
        let mut spec = PolicySpec::named("po2-du").unwrap();
        assert_eq!(spec.param("threshold"), Some(1.0));
        spec.set_param("threshold", 3.0).unwrap();
        assert_eq!(spec.param("threshold"), Some(3.0));
        assert_ne!(spec, PolicySpec::named("po2-du").unwrap());
        let e = spec.set_param("nosuch", 1.0).unwrap_err().to_string();
        assert!(e.contains("its parameters: samples, threshold"), "{e}");
        let e = PolicySpec::default().set_param("samples", 1.0).unwrap_err();
        assert!(e.to_string().contains("its parameters: none"), "{e}");
        let horus = PolicySpec::named("horus").unwrap();
        let d = horus::HorusParams::default();
        assert_eq!(
            horus.param("repair_gap_us"),
            Some(f64::from(d.repair_gap_us))
        );
        assert_eq!(horus.param("report_delta"), Some(d.report_delta));
    }

    #[test]
    fn a_spec_serializes_as_its_name_and_parameters() {
        let mut spec = PolicySpec::named("rs-h").unwrap();
        spec.set_param("samples", 3.0).unwrap();
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(json, r#"{"name":"rs-h","samples":3.0}"#);
        let back: PolicySpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec);
        let default: PolicySpec = serde_json::from_str(r#"{"name":"horus"}"#).unwrap();
        assert_eq!(default, PolicySpec::named("horus").unwrap());
        assert!(serde_json::from_str::<PolicySpec>(r#"{"name":"nosuch"}"#).is_err());
        assert!(serde_json::from_str::<PolicySpec>(r#"{"name":"random","samples":2}"#).is_err());
    }
}
