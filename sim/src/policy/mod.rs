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
//! [`POLICIES`] (in `registry.rs`) lists every policy with its name, a one-line description, its
//! typed parameters and their defaults, and its constructor; the command line, the sweep, the bench and the results read it,
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
mod registry;
pub mod sparrow;

pub use registry::{
    Build, Kind, MAX_COUNT, POLICIES, Param, Params, PolicyEntry, PolicySpec, compared, names,
};

use crate::cluster::Cluster;
use crate::queue::Nanos;
use crate::rng::SimRng;
use rand::Rng;

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
