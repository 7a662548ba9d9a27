//! The discrete-event engine: clients, the network, worker agents and failures around a policy.
//!
//! Time is integer nanoseconds; events leave the [`EventQueue`] by (time, insertion order), and
//! every random draw comes from a labelled stream of the seed, so a run is a pure function of its
//! configuration. The life of a task:
//!
//! 1. *Arrival* (Poisson per pool): the task reaches one of its pool's spine schedulers, the pod
//!    chosen at random in proportion to the pool's workers in each pod (Horus §3.1; after a
//!    failure notice, the workers the controller knows alive behind a live spine, so that no
//!    task is sent to a pod where the pool has none left). The spine's
//!    decision travels to the chosen leaf over 1 hop (3 across pods), plus one resubmit latency per
//!    extra pass.
//! 2. *At leaf*: the leaf's decision travels 1 hop to the worker.
//! 3. *At worker*: one FCFS queue per worker; the task is served when it reaches the head.
//! 4. *Done*: the agent replies to its leaf (1 hop) with the worker's remaining queue length.
//!
//! Every hop may lose the packet with the configured probability. Arrivals stop at `sim_ns`; the
//! run then drains until no task is left (or the drain limit), so that Little's law can be checked.

mod arrivals;
mod failures;
mod network;
mod prefetch;
mod results;
mod workers;

use arrivals::PodDraw;
use failures::Loss;
use prefetch::{NO_SPINE, Notes};
pub(crate) use results::merge;

use crate::cluster::Cluster;
use crate::config::{FailureTarget, PoolSource, SimConfig};
use crate::metrics::{
    FailureMetrics, Imbalance, Latency, Little, MessageRate, Metrics, PoolSummary, ShardSummary,
    Summary,
};
use crate::node::Nodes;
use crate::placement::{self, PoolPlacement};
use crate::policy::{
    Ctx, FailureNotice, Message, Node, Policy, PrefetchNote, Reply, TaskHeader, Upcoming,
};
use crate::queue::{EventQueue, LOOKAHEAD, Nanos};
use crate::rng::{self, SimRng, Stream};
use crate::shard::{self, ShardSpec};
use crate::worker::{MEASURED, NO_FAILURE, Queued, Worker};
use crate::workload::{BurstState, ServiceTime};
use anyhow::Context;
use hdrhistogram::Histogram;
use rand::Rng;

/// How often (in events) the progress callback runs.
const PROGRESS_EVERY: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, Default)]
enum Ev {
    Arrival(u32),
    AtLeaf {
        task: u32,
        rack: u32,
    },
    AtWorker {
        task: u32,
        worker: u32,
    },
    Done(u32),
    Reply {
        worker: u32,
        qlen: u32,
        /// The task's service time (ns, saturating).
        service: u32,
        /// [`Reply::tag`] (0 or 1).
        tag: u8,
    },
    Msg(u32),
    /// A steal request reached its victim's node ([`crate::node::Nodes::requests`]).
    Steal(u32),
    Fail(u32),
    Notice(u32),
    /// (Also what fills the queue's unused places.)
    #[default]
    Sample,
}

// An event stays 16 bytes (32 with its key in the event queue): the queue's memory traffic is
// much of the engine's cost (`docs/sim-performance.md`).
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

/// A task on its way to a worker (at a spine, a leaf or on the wire). Slots are reused last in,
/// first out, so the few live ones stay in cache; two to a cache line, so that an event reads one.
#[repr(align(32))]
struct Task {
    header: TaskHeader,
    /// Arrival at the spine, with [`MEASURED`] set for tasks recorded in the histograms;
    /// `Nanos::MAX` marks a free slot.
    arrival: Nanos,
    /// Service time, with [`RESUBMITTED`] set once a scheduler resubmitted the task.
    service: Nanos,
}

// Two tasks to a cache line, as the slots' comment says.
const _: () = assert!(std::mem::size_of::<Task>() == 32);

/// Flag in [`Task::service`]: the task took more than one pass somewhere.
const RESUBMITTED: Nanos = 1 << 63;

/// One engine simulates the pools of one shard (all of them unless the run is sharded, see
/// [`crate::shard`]); its pools are numbered `0..` in the order of [`ShardSpec::pools`].
pub struct Engine {
    cfg: SimConfig,
    shard: ShardSpec,
    cluster: Cluster,
    service: ServiceTime,
    policy: Box<dyn Policy>,
    queue: EventQueue<Ev>,
    now: Nanos,
    tasks: Vec<Task>,
    free_tasks: Vec<u32>,
    live_tasks: u64,
    workers: Vec<Worker>,
    messages: Vec<Message>,
    free_messages: Vec<u32>,
    outbox: Vec<Message>,
    pool_rngs: Vec<SimRng>,
    /// Tasks a leaf holds ([`Decision::hold_in`]), per (pool, rack slot, queue), oldest first.
    held: std::collections::HashMap<(u32, u32, u32), std::collections::VecDeque<u32>>,
    /// Releases the policy asked for in its last call ([`Ctx::release_from`]).
    releases: Vec<crate::policy::Release>,
    /// Steal requests the policy sent in its last call ([`Ctx::steal`]).
    steals: Vec<crate::policy::Steal>,
    /// The multi-core nodes, if the policy has them ([`Policy::node_queues`]).
    nodes: Option<Box<Nodes>>,
    /// How many tasks a leaf's queue held just after each task joined it, by that number.
    held_lengths: Vec<u64>,
    /// Tasks a spine holds ([`Decision::hold_in`] at a spine), per (pool, pod slot, queue),
    /// oldest first.
    spine_held: std::collections::HashMap<(u32, u32, u32), std::collections::VecDeque<u32>>,
    /// Jobs not yet done (`cfg.job_tasks > 1`), by pool and arrival: their tasks not yet done.
    jobs: std::collections::HashMap<(u32, Nanos), u32>,
    /// Per pool: its arrivals' burst state (empty when arrivals are Poisson).
    bursts: Vec<BurstState>,
    entry_rng: SimRng,
    policy_rng: SimRng,
    net_rng: SimRng,
    /// Hops left before the next lost packet (geometric skips: one draw per loss, not per hop).
    hops_to_loss: u64,
    /// The policy's packets travel over a reliable transport: none is lost
    /// ([`Policy::reliable_transport`]).
    lossless: bool,
    /// Per pool: arrival capacity (workers / mean service) in arrivals per ns: tasks, or jobs of
    /// `cfg.job_tasks` tasks.
    capacity: Vec<f64>,
    /// Per pool: the proportional spine choice.
    pod_draws: Vec<PodDraw>,
    /// Per pool, per pod slot: the aggregation switch hosting its spine scheduler now.
    spine_host: Vec<Vec<u32>>,
    /// Physical state, and the controller's knowledge of it (after the notice).
    switch_failed: Vec<Option<u32>>,
    rack_failed: Vec<Option<u32>>,
    known_dead_workers: Vec<bool>,
    known_dead_racks: Vec<bool>,
    /// Per pool, per rack slot: every worker of the pool there known dead (one by one), which
    /// the controller handles as the rack's failure for that pool.
    known_empty_racks: Vec<Vec<bool>>,
    /// Aggregation switches the controller knows dead and could not replace in their pod.
    known_lost_spines: Vec<bool>,
    /// No failure announced yet: policies may skip their usability checks.
    nothing_dead: bool,
    /// No failure has happened yet: the events may skip their checks of the physical state.
    nothing_failed: bool,
    /// [`Policy::prefetches`] of the policy.
    policy_prefetches: bool,
    /// The prefetch stages' notes on the events of the window, by their place there.
    notes: Notes,
    /// The predicted spine of the event being handled ([`NO_SPINE`]: none).
    current_spine: u32,
    /// [`EventQueue::window_insertions`] when the notes were last in step with the window.
    insertions: u64,
    /// A copy of `entry_rng` that has drawn the spines of the arrivals noted so far, in order.
    spine_rng: SimRng,
    metrics: Metrics,
}

impl Engine {
    pub fn new(cfg: &SimConfig) -> anyhow::Result<Self> {
        Self::with_custom_policy(cfg, |cluster, queue_len, rng| {
            cfg.policy.build(cluster, queue_len, rng)
        })
    }

    /// As [`Engine::new`], with the policy built by `build` (given the cluster, the initial queue
    /// of every global worker and the policy's random stream) instead of from `cfg.policy`, which
    /// then only names it in the summary. For tests that instrument a policy.
    ///
    /// The engine simulates every pool whatever `cfg.shards` says; [`run`] honours it.
    pub fn with_custom_policy(
        cfg: &SimConfig,
        build: impl FnOnce(&Cluster, &[u32], &mut SimRng) -> Box<dyn Policy>,
    ) -> anyhow::Result<Self> {
        let placements = placements(cfg)?;
        let whole = ShardSpec::whole(&placements);
        Self::for_shard(cfg, &placements, whole, build)
    }

    /// The engine of one shard: the pools `shard.pools` of `placements` (all of the run's pools),
    /// with the shard's own random streams for everything but the pools' workloads.
    pub fn for_shard(
        cfg: &SimConfig,
        placements: &[PoolPlacement],
        shard: ShardSpec,
        build: impl FnOnce(&Cluster, &[u32], &mut SimRng) -> Box<dyn Policy>,
    ) -> anyhow::Result<Self> {
        cfg.validate()?;
        let workers: usize = placements.iter().map(|p| p.slots.len()).sum();
        for f in &cfg.failures {
            if let FailureTarget::Worker(w) = f.target {
                anyhow::ensure!(
                    (w as usize) < workers,
                    "{} is not a worker: the pools have {workers} (0 to {})",
                    f.target,
                    workers.saturating_sub(1)
                );
            }
        }
        let mut cluster = Cluster::subset(
            cfg.topology,
            placements,
            &shard.pools,
            cfg.spine_group_workers,
        );
        cluster.server_speeds = cfg.server_speeds.clone();
        // Streams of the unsharded run for shard 0 of 1; the workload streams are the pools'.
        let stream_index = u64::from(shard.index);
        let service = ServiceTime::named(&cfg.workload)?;
        cluster.task_kinds = service.kinds();
        let mean = service.mean_ns();
        let n_workers = cluster.total_workers() as usize;
        let mut engine = Self {
            capacity: (0..cluster.pools.len() as u32)
                .map(|p| cluster.pool_speed(p) / mean / f64::from(cfg.job_tasks))
                .collect(),
            pod_draws: cluster
                .pools
                .iter()
                .map(|p| {
                    PodDraw::new(
                        p.groups
                            .iter()
                            .scan(0, |acc, d| Some(*acc + d.workers).inspect(|&s| *acc = s))
                            .collect(),
                    )
                })
                .collect(),
            spine_host: cluster
                .pools
                .iter()
                .map(|p| p.groups.iter().map(|d| d.spine_switch).collect())
                .collect(),
            switch_failed: vec![None; cfg.topology.spines() as usize],
            rack_failed: vec![None; cfg.topology.racks() as usize],
            known_dead_workers: vec![false; n_workers],
            known_dead_racks: vec![false; cfg.topology.racks() as usize],
            known_empty_racks: cluster
                .pools
                .iter()
                .map(|p| vec![false; p.racks.len()])
                .collect(),
            known_lost_spines: vec![false; cfg.topology.spines() as usize],
            nothing_dead: true,
            nothing_failed: true,
            policy_prefetches: false,
            bursts: Vec::new(),
            held: Default::default(),
            releases: Vec::new(),
            steals: Vec::new(),
            nodes: None,
            held_lengths: Vec::new(),
            jobs: Default::default(),
            spine_held: Default::default(),
            pool_rngs: shard
                .pools
                .iter()
                .map(|&p| rng::stream(cfg.seed, Stream::Workload, u64::from(p)))
                .collect(),
            entry_rng: rng::stream(cfg.seed, Stream::Entry, stream_index),
            spine_rng: rng::stream(cfg.seed, Stream::Entry, stream_index),
            notes: Notes::new(),
            current_spine: NO_SPINE,
            insertions: 0,
            policy_rng: rng::stream(cfg.seed, Stream::Policy, stream_index),
            net_rng: rng::stream(cfg.seed, Stream::Network, stream_index),
            hops_to_loss: 0,
            lossless: false,
            metrics: Metrics::new(cluster.pools.len(), cfg.pool_histograms),
            workers: cluster
                .pools
                .iter()
                .enumerate()
                .flat_map(|(i, p)| {
                    // Global worker IDs are pool-major: pool i's workers from its worker_base.
                    p.worker_rack.iter().enumerate().map(move |(local, &slot)| {
                        Worker::new(i as u32, local as u32, p.racks[slot as usize].rack, slot)
                    })
                })
                .collect(),
            policy: Box::new(crate::policy::random::RandomPolicy),
            cfg: cfg.clone(),
            shard,
            cluster,
            service,
            queue: EventQueue::new(),
            now: 0,
            tasks: Vec::new(),
            free_tasks: Vec::new(),
            live_tasks: 0,
            messages: Vec::new(),
            free_messages: Vec::new(),
            outbox: Vec::new(),
        };
        debug_assert_eq!(engine.workers.len(), n_workers, "workers are pool-major");
        engine.start(build);
        Ok(engine)
    }

    /// Starts a new engine: the bursts' and the network's first draws, the prefill, the policy
    /// (built by `build` on the workers' initial queues), and the first arrivals, failures and
    /// sample in the queue.
    fn start(&mut self, build: impl FnOnce(&Cluster, &[u32], &mut SimRng) -> Box<dyn Policy>) {
        if let Some(b) = &self.cfg.bursts {
            self.bursts = self
                .pool_rngs
                .iter_mut()
                .map(|rng| BurstState::start(b, rng))
                .collect();
        }
        self.hops_to_loss = self.draw_hops_to_loss();
        if self.cfg.prefill {
            self.prefill();
        }
        let queue_len: Vec<u32> = self.workers.iter().map(|w| w.len()).collect();
        self.policy = build(&self.cluster, &queue_len, &mut self.policy_rng);
        self.policy_prefetches = self.policy.prefetches();
        if self.policy.node_queues() {
            self.make_nodes();
        }
        if self.policy.reliable_transport() {
            self.lossless = true;
            self.hops_to_loss = u64::MAX;
        }
        self.metrics.messages = vec![0; self.policy.message_kinds().len()];
        for p in 0..self.cluster.pools.len() as u32 {
            self.schedule_arrival(p);
        }
        for (i, f) in self.cfg.failures.iter().enumerate() {
            self.queue.push(f.at_ns, Ev::Fail(i as u32));
            self.metrics.failures.push(FailureMetrics {
                what: format!("{:?}", f.target),
                at_us: f.at_ns as f64 / 1e3,
                ..Default::default()
            });
        }
        if self.cfg.sample_ns > 0 {
            self.queue.push(self.cfg.sample_ns, Ev::Sample);
        }
    }

    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Runs to the end; `progress` is called now and then with the simulated time.
    pub fn run(mut self, progress: &mut dyn FnMut(Nanos)) -> Summary {
        self.run_events(progress);
        let (end, cfg) = (self.now, self.cfg.clone());
        merge(&cfg, vec![self.finish(end)], end)
    }

    /// Handles events until the run is over: `now` is then the time of the last one.
    pub(crate) fn run_events(&mut self, progress: &mut dyn FnMut(Nanos)) {
        let stop = self.cfg.sim_ns.saturating_add(self.cfg.drain_ns);
        while let Some((t, ev)) = self.queue.pop() {
            if t > stop {
                break;
            }
            self.now = t;
            self.metrics.events += 1;
            if self.metrics.events % PROGRESS_EVERY == 0 {
                progress(t);
            }
            self.prefetch_ahead();
            self.handle(ev);
            if self.live_tasks == 0 && t >= self.cfg.sim_ns {
                break;
            }
        }
    }

    /// The simulated time of the last event handled.
    pub(crate) fn now(&self) -> Nanos {
        self.now
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Arrival(pool) => self.on_arrival(pool),
            Ev::AtLeaf { task, rack } => self.on_leaf(task, rack),
            Ev::AtWorker { task, worker } => self.on_worker(task, worker),
            Ev::Done(worker) => self.on_done(worker),
            Ev::Reply {
                worker,
                qlen,
                service,
                tag,
            } => self.on_reply(worker, qlen, service, tag),
            Ev::Msg(i) => self.on_message(i),
            Ev::Steal(i) => self.on_steal(i),
            Ev::Fail(i) => self.on_fail(i),
            Ev::Notice(i) => self.on_notice(i),
            Ev::Sample => self.on_sample(),
        }
    }

    /// Calls the policy with a context, then puts the messages it sent on the wire.
    fn with_policy<R>(&mut self, f: impl FnOnce(&mut dyn Policy, &mut Ctx) -> R) -> R {
        let mut ctx = Ctx {
            cluster: &self.cluster,
            rng: &mut self.policy_rng,
            now: self.now,
            dead_workers: &self.known_dead_workers,
            dead_racks: &self.known_dead_racks,
            empty_racks: &self.known_empty_racks,
            nothing_dead: self.nothing_dead,
            outbox: &mut self.outbox,
            releases: &mut self.releases,
            steals: &mut self.steals,
        };
        let r = f(self.policy.as_mut(), &mut ctx);
        if !self.releases.is_empty() {
            self.release_held();
        }
        if !self.steals.is_empty() {
            self.send_steals();
        }
        while let Some(msg) = self.outbox.pop() {
            self.metrics.messages[msg.kind as usize] += 1;
            self.metrics.pools[msg.pool as usize].messages += 1;
            let hops = self.node_hops(msg.pool, msg.from, msg.to);
            if let Some(delay) = self.transmit(hops, 0) {
                let i = match self.free_messages.pop() {
                    Some(i) => {
                        self.messages[i as usize] = msg;
                        i
                    }
                    None => {
                        self.messages.push(msg);
                        self.messages.len() as u32 - 1
                    }
                };
                self.queue.push_after(delay, Ev::Msg(i));
            }
        }
        r
    }
}

/// Where the pools of `cfg` are.
pub fn placements(cfg: &SimConfig) -> anyhow::Result<Vec<PoolPlacement>> {
    cfg.validate()?;
    let placements: Vec<PoolPlacement> = match &cfg.pools {
        PoolSource::Random(r) => {
            placement::place_random(&cfg.topology, &r.sizes(cfg.seed), cfg.seed)?
        }
        PoolSource::Sizes(sizes) => placement::place_random(&cfg.topology, sizes, cfg.seed)?,
        PoolSource::Tenants(t) => {
            placement::place_random(&cfg.topology, &t.pool_sizes(&cfg.topology)?, cfg.seed)?
        }
        PoolSource::Dataset(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("reading dataset {path}"))?;
            placement::read_dataset(&text, &cfg.topology)
                .with_context(|| format!("dataset {path}"))?
        }
    };
    anyhow::ensure!(
        placements.iter().all(|p| !p.slots.is_empty()),
        "every pool needs at least one worker"
    );
    Ok(placements)
}

/// Builds and runs one configuration, in `cfg.shards` shards.
pub fn run(cfg: &SimConfig, progress: &mut dyn FnMut(Nanos)) -> anyhow::Result<Summary> {
    if cfg.shards <= 1 {
        return Ok(Engine::new(cfg)?.run(progress));
    }
    shard::run(cfg, progress)
}
