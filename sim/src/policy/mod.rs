//! Scheduling policies and the interface the engine offers them.
//!
//! A task enters at one spine scheduler of its pool, which picks a rack ([`Policy::on_task_at_spine`]);
//! the leaf scheduler of that rack picks a worker ([`Policy::on_task_at_leaf`]); the worker's reply
//! passes the leaf ([`Policy::on_reply_at_leaf`]). Schedulers talk to each other only through
//! [`Message`]s, which the engine delivers with the network's per-hop delay and loss. A decision may
//! take several pipeline passes (a Tofino resubmit); each extra pass adds the configured resubmit
//! latency and marks the task as resubmitted. Policies own all their state; the engine owns time,
//! workers and the network, so a new policy is a new file here plus one line in [`PolicySpec`].
//!
//! Implemented, each documented in its own file with its source:
//! - [`random::RandomPolicy`], uniform random worker.
//! - [`racksched`], RackSched (power-of-2 on reply-driven queue lengths) and its datacenter
//!   extensions RS (replicated pool-wide state), RS-LB, RS-H and the Po2-DU ablation.
//! - [`jsq::JsqIdeal`], join-the-shortest-queue with zero-delay state.
//! - [`jiq::Jiq`], join-idle-queue.
//! - [`idle_only::IdleOnly`], the Horus idle-list ablation.
//!
//! - [`horus::Horus`], Horus itself: a thin adapter from these hooks to the leaf and spine
//!   schedulers of the `horus-model` crate, whose per-pass results map onto [`Decision::passes`]
//!   and whose idleAdd / idleRemove / loadUpdate packets map onto [`Message`]s.

pub mod horus;
pub mod idle_only;
pub mod jiq;
pub mod jsq;
pub mod racksched;
pub mod random;

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
    /// Scratch a spine may fill for the leaf (for example the worker it already chose).
    pub hint: u32,
    /// A flag the leaf sets and the worker echoes in its reply (Horus: "popped from the idle list");
    /// the spine may also use it towards the leaf.
    pub tag: u16,
}

/// A scheduler's choice: a pool-local rack slot (at a spine) or pool-local worker (at a leaf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub node: u32,
    /// Pipeline passes used, at least 1; every pass beyond the first is a resubmit.
    pub passes: u32,
}

impl Decision {
    pub fn to(node: u32) -> Self {
        Self { node, passes: 1 }
    }
}

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
}

/// A pool's scheduler: spine `pod_slot` or leaf `rack_slot`.
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
}

impl Ctx<'_> {
    pub fn send(&mut self, msg: Message) {
        self.outbox.push(msg);
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

    fn random_usable(
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

    /// Zero-delay oracle: a task left pool-local `worker` (finished, or lost after being assigned to
    /// it). Real policies ignore it; JSQ-ideal uses it.
    fn on_task_left_worker(&mut self, _pool: u32, _worker: u32) {}

    /// Zero-delay oracle: a task was lost before reaching a worker.
    fn on_task_lost(&mut self, _task: &TaskHeader) {}

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

    /// The policy's own counters at the end of a run, `(name, value)`, echoed in the summary
    /// (Horus: the model schedulers' counters summed over leaves and spines).
    fn counters(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
}

/// The policies and their parameters, as chosen on the command line and echoed in the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum PolicySpec {
    Random,
    /// RackSched with one pool-wide, replicated table of worker loads at the spines.
    Rs {
        samples: u32,
    },
    /// Uniform load balancer to racks, RackSched inside each rack.
    RsLb {
        samples: u32,
    },
    /// RackSched at spines (over racks) and leaves (over workers); a leaf reports its average
    /// load after every reply.
    RsH {
        samples: u32,
    },
    /// Horus structure with power-of-2 on reply-driven loads only; a leaf reports when its
    /// average moved by at least `threshold`.
    Po2Du {
        samples: u32,
        threshold: f64,
    },
    JsqIdeal,
    Jiq,
    IdleOnly,
    /// Horus, run by the `horus-model` reference scheduler ([`horus::Horus`]).
    Horus {
        link_at: u16,
        unlink_at: u16,
        report_delta: f64,
        repair_gap_us: u16,
    },
}

/// Names accepted by [`PolicySpec::named`].
pub const POLICIES: &[&str] = &[
    "random",
    "rs",
    "rs-lb",
    "rs-h",
    "po2-du",
    "jsq",
    "jiq",
    "idle-only",
    "horus",
];

impl PolicySpec {
    /// A policy with its default parameters.
    pub fn named(name: &str) -> anyhow::Result<Self> {
        Ok(match name {
            "random" => Self::Random,
            "rs" => Self::Rs { samples: 2 },
            "rs-lb" => Self::RsLb { samples: 2 },
            "rs-h" => Self::RsH { samples: 2 },
            "po2-du" => Self::Po2Du {
                samples: 2,
                threshold: 1.0,
            },
            "jsq" => Self::JsqIdeal,
            "jiq" => Self::Jiq,
            "idle-only" => Self::IdleOnly,
            "horus" => {
                let d = horus::HorusParams::default();
                Self::Horus {
                    link_at: d.link_at,
                    unlink_at: d.unlink_at,
                    report_delta: d.report_delta,
                    repair_gap_us: d.repair_gap_us,
                }
            }
            _ => anyhow::bail!("unknown policy {name:?}; known: {}", POLICIES.join(", ")),
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::Rs { .. } => "rs",
            Self::RsLb { .. } => "rs-lb",
            Self::RsH { .. } => "rs-h",
            Self::Po2Du { .. } => "po2-du",
            Self::JsqIdeal => "jsq",
            Self::Jiq => "jiq",
            Self::IdleOnly => "idle-only",
            Self::Horus { .. } => "horus",
        }
    }

    /// Builds the policy for a cluster; `queue_len` is the initial queue length of every global
    /// worker (non-zero only when the run starts prefilled).
    pub fn build(&self, cluster: &Cluster, queue_len: &[u32], rng: &mut SimRng) -> Box<dyn Policy> {
        use racksched::{RackSched, SpineMode};
        match *self {
            Self::Random => Box::new(random::RandomPolicy),
            Self::Rs { samples } => Box::new(RackSched::new(cluster, samples, SpineMode::PoolWide)),
            Self::RsLb { samples } => {
                Box::new(RackSched::new(cluster, samples, SpineMode::UniformRack))
            }
            Self::RsH { samples } => Box::new(RackSched::new(
                cluster,
                samples,
                SpineMode::RackLoads { threshold: 0.0 },
            )),
            Self::Po2Du { samples, threshold } => Box::new(RackSched::new(
                cluster,
                samples,
                SpineMode::RackLoads { threshold },
            )),
            Self::JsqIdeal => Box::new(jsq::JsqIdeal::new(cluster, queue_len)),
            Self::Jiq => Box::new(jiq::Jiq::new(cluster, queue_len, rng)),
            Self::IdleOnly => Box::new(idle_only::IdleOnly::new(cluster, queue_len)),
            Self::Horus {
                link_at,
                unlink_at,
                report_delta,
                repair_gap_us,
            } => Box::new(horus::Horus::new(
                cluster,
                queue_len,
                rng,
                horus::HorusParams {
                    link_at,
                    unlink_at,
                    report_delta,
                    repair_gap_us,
                },
            )),
        }
    }
}
