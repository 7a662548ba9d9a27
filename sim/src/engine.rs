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

/// What the prefetch stages worked out for the events of the queue's window, by their place
/// there, kept from one stage to the next (see [`Engine::prefetch_ahead`]). Place `i` of the
/// window is entry `base + i`: moving the notes down one place is `base += 1`, and only once
/// every [`NOTES`]` - `[`LOOKAHEAD`] events are they copied back to the start of the arrays.
#[derive(Clone, Copy)]
struct Notes {
    /// For an arrival, its predicted spine (pod slot); [`NO_SPINE`] for other events and
    /// arrivals without a prediction.
    spine: [u32; NOTES],
    /// The policy's notes.
    policy: [PrefetchNote; NOTES],
    /// Where place 0 of the window is, at most `NOTES - LOOKAHEAD`.
    base: usize,
}

/// Entries of the arrays of [`Notes`]: the base takes [`BASES`] values (a power of two, so that
/// masking it shows the compiler every place is in bounds).
const NOTES: usize = BASES + LOOKAHEAD - 1;
const BASES: usize = 64;

impl Notes {
    fn new() -> Self {
        Self {
            spine: [NO_SPINE; NOTES],
            policy: [PrefetchNote::default(); NOTES],
            base: 0,
        }
    }

    /// Drops every note (the window moved out of step with them).
    #[cold]
    fn clear(&mut self) {
        self.spine[..LOOKAHEAD].fill(NO_SPINE);
        self.policy[..LOOKAHEAD].fill(PrefetchNote::default());
        self.base = 0;
    }

    /// Moves the notes down one place (the event of place 0 is being handled); the last place's
    /// notes are then stale, and [`Engine::prefetch_ahead`] writes them anew.
    #[inline(always)]
    fn shift(&mut self) {
        if self.base == NOTES - LOOKAHEAD {
            // Places 1 .. LOOKAHEAD - 1 to 0 .. (the last one is written anew).
            let b = self.base;
            self.spine.copy_within(b + 1..b + LOOKAHEAD, 0);
            self.policy.copy_within(b + 1..b + LOOKAHEAD, 0);
            self.base = 0;
        } else {
            self.base += 1;
        }
    }
}

/// No predicted spine, in [`Notes::spine`].
const NO_SPINE: u32 = u32::MAX;

/// A pool's spine choice: a pod slot at random in proportion to the pool's workers there, from a
/// draw uniform over the workers (the pod whose workers hold it). After a failure notice, the
/// workers the controller knows alive (see [`Engine::live_pod_draw`]).
struct PodDraw {
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

    fn new(cumulative: Vec<u32>) -> Self {
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
    fn draw(&self, rng: &mut SimRng) -> u32 {
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
    fn prefetch(&self) {
        crate::prefetch_slice(&self.cumulative);
        crate::prefetch_slice(&self.start);
    }
}

/// Why a task was lost: in the network, or because of failure `i`.
#[derive(Clone, Copy)]
enum Loss {
    Network,
    Failure(u32),
}

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
        if let Some(b) = &cfg.bursts {
            engine.bursts = engine
                .pool_rngs
                .iter_mut()
                .map(|rng| BurstState::start(b, rng))
                .collect();
        }
        engine.hops_to_loss = engine.draw_hops_to_loss();
        if cfg.prefill {
            engine.prefill();
        }
        let queue_len: Vec<u32> = engine.workers.iter().map(|w| w.len()).collect();
        engine.policy = build(&engine.cluster, &queue_len, &mut engine.policy_rng);
        engine.policy_prefetches = engine.policy.prefetches();
        if engine.policy.node_queues() {
            engine.make_nodes();
        }
        if engine.policy.reliable_transport() {
            engine.lossless = true;
            engine.hops_to_loss = u64::MAX;
        }
        engine.metrics.messages = vec![0; engine.policy.message_kinds().len()];
        for p in 0..engine.cluster.pools.len() as u32 {
            engine.schedule_arrival(p);
        }
        for (i, f) in cfg.failures.iter().enumerate() {
            engine.queue.push(f.at_ns, Ev::Fail(i as u32));
            engine.metrics.failures.push(FailureMetrics {
                what: format!("{:?}", f.target),
                at_us: f.at_ns as f64 / 1e3,
                ..Default::default()
            });
        }
        if cfg.sample_ns > 0 {
            engine.queue.push(cfg.sample_ns, Ev::Sample);
        }
        Ok(engine)
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

    /// Prefetches in stages, each following the pointers that the previous one brought in one event
    /// earlier: the lines the event [`LOOKAHEAD`]` - 1` places ahead reads directly, the lines they
    /// lead to two events later (a worker's line, which the first stage loads for every worker
    /// event, would often not be in after one), and so on down the policy's
    /// [`PrefetchStage`](crate::policy::PrefetchStage)s to the next event.
    /// At the scale of a datacenter every event waits on memory; this way the waits of several
    /// events overlap.
    ///
    /// What a stage works out is kept in [`Notes`] for the next, and the notes move down one place
    /// with each event: an arrival's spine is drawn once, from `spine_rng`, when the arrival enters
    /// the stages, and the policy's stages pass on a [`PrefetchNote`]. An event pushed into the
    /// window (before its last) puts the window out of step with the notes: they are all dropped
    /// then, and the next arrival handled without a prediction, or with a wrong one, puts
    /// `spine_rng` back on `entry_rng`'s track.
    fn prefetch_ahead(&mut self) {
        const DIRECT: usize = LOOKAHEAD - 1;
        // The engine's second stage and the policy's index stage.
        const SECOND: usize = LOOKAHEAD - 3;
        if !self.policy_prefetches {
            if let Some(&e) = self.queue.ahead(DIRECT) {
                self.prefetch(e);
            }
            if let Some(&e) = self.queue.ahead(SECOND) {
                self.prefetch_indirect(e);
            }
            return;
        }
        if self.queue.window_insertions() == self.insertions {
            let n = &mut self.notes;
            self.current_spine = n.spine[n.base % BASES];
            n.shift();
        } else {
            self.insertions = self.queue.window_insertions();
            self.current_spine = NO_SPINE;
            self.notes.clear();
        }
        // (`% BASES` tells the compiler what it cannot see: `base + LOOKAHEAD <= NOTES`.)
        let base = self.notes.base % BASES;
        self.notes.policy[base + DIRECT] = PrefetchNote::default();
        self.notes.spine[base + DIRECT] = NO_SPINE;
        if let Some(&e) = self.queue.ahead(DIRECT) {
            self.prefetch(e);
            if let Ev::Arrival(pool) = e {
                self.notes.spine[base + DIRECT] =
                    Self::draw_spine(&mut self.spine_rng, &self.pod_draws, pool);
            }
        }
        if let Some(&e) = self.queue.ahead(SECOND) {
            self.prefetch_indirect(e);
            let spine = self.notes.spine[base + SECOND];
            if let Some(next) = Self::upcoming(&self.tasks, &self.workers, &self.messages, e, spine)
            {
                self.policy.prefetch_index(
                    &self.cluster,
                    next,
                    &mut self.notes.policy[base + SECOND],
                );
            }
        }
        let later = self.notes.policy[base..]
            .first_chunk_mut::<SECOND>()
            .expect("the window has room for the later stages");
        self.policy.prefetch(&self.cluster, later);
    }

    /// The spine (pod slot) an arrival of `pool` draws from `rng`, as [`Engine::on_arrival`] does.
    #[inline]
    fn draw_spine(rng: &mut SimRng, pod_draws: &[PodDraw], pool: u32) -> u32 {
        pod_draws[pool as usize].draw(rng)
    }

    /// Puts `spine_rng` back on `entry_rng`'s track, just after an arrival drew its spine: the
    /// arrivals of the window that entered the stages draw their spines again, and those whose
    /// spine changes lose what their stages worked out (it followed another spine).
    #[cold]
    #[inline(never)]
    fn resync_spines(&mut self) {
        self.spine_rng = self.entry_rng.clone();
        for pos in 0..LOOKAHEAD {
            let Some(&e) = self.queue.ahead(pos) else {
                break;
            };
            let spine = match e {
                Ev::Arrival(pool) => Self::draw_spine(&mut self.spine_rng, &self.pod_draws, pool),
                _ => NO_SPINE,
            };
            let i = self.notes.base + pos;
            if self.notes.spine[i] != spine {
                self.notes.spine[i] = spine;
                self.notes.policy[i] = PrefetchNote::default();
            }
        }
    }

    /// Starts loading what `ev` will read first (see [`crate::prefetch`]).
    #[inline(always)]
    fn prefetch(&self, ev: Ev) {
        use crate::prefetch;
        match ev {
            Ev::Arrival(pool) => {
                prefetch(&self.pool_rngs[pool as usize]);
                prefetch(&self.metrics.pools[pool as usize].in_system);
                // The spine draw's binary search reads lines all over it.
                self.pod_draws[pool as usize].prefetch();
            }
            Ev::AtLeaf { task, .. } => prefetch(&self.tasks[task as usize]),
            Ev::AtWorker { task, worker } => {
                prefetch(&self.tasks[task as usize]);
                prefetch(&self.workers[worker as usize]);
            }
            Ev::Done(worker) | Ev::Reply { worker, .. } => prefetch(&self.workers[worker as usize]),
            Ev::Msg(i) => prefetch(&self.messages[i as usize]),
            Ev::Steal(_) | Ev::Fail(_) | Ev::Notice(_) | Ev::Sample => {}
        }
    }

    /// The second stage of prefetching `ev`: what the lines [`Engine::prefetch`] loaded point to.
    #[inline(always)]
    fn prefetch_indirect(&self, ev: Ev) {
        use crate::prefetch;
        match ev {
            Ev::Done(worker) => {
                let w = &self.workers[worker as usize];
                if let Some(q) = w.next_out() {
                    prefetch(q);
                }
                crate::prefetch_all(&self.metrics.pools[w.pool as usize]);
            }
            Ev::AtWorker { worker, .. } => {
                if let Some(q) = self.workers[worker as usize].next_in() {
                    prefetch(q);
                }
            }
            _ => {}
        }
    }

    /// The policy call that `ev` will make, as far as the lines [`Engine::prefetch`] loaded tell;
    /// `spine` is the predicted spine of an arrival.
    #[inline]
    fn upcoming(
        tasks: &[Task],
        workers: &[Worker],
        messages: &[Message],
        ev: Ev,
        spine: u32,
    ) -> Option<Upcoming> {
        Some(match ev {
            Ev::Arrival(_) if spine == NO_SPINE => return None,
            Ev::Arrival(pool) => Upcoming::TaskAtSpine { pool, spine },
            Ev::AtLeaf { task, rack } => Upcoming::TaskAtLeaf {
                pool: tasks[task as usize].header.pool,
                rack,
            },
            Ev::Reply { worker, .. } => {
                let w = &workers[worker as usize];
                Upcoming::ReplyAtLeaf {
                    pool: w.pool,
                    rack: w.rack_slot,
                    worker: w.local,
                }
            }
            Ev::Msg(i) => Upcoming::Message(messages[i as usize]),
            _ => return None,
        })
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

    fn node_hops(&self, pool: u32, a: Node, b: Node) -> u32 {
        // A spine is in its group's pod, a leaf in its rack's.
        let p = &self.cluster.pools[pool as usize];
        let topo = &self.cluster.topology;
        let pod_of = |n: Node| match n {
            Node::Spine(d) => p.groups[d as usize].pod,
            Node::Leaf(r) => topo.pod_of_rack(p.racks[r as usize].rack),
        };
        let same_pod = pod_of(a) == pod_of(b);
        match (a, b) {
            (Node::Spine(_), Node::Spine(_)) => 2,
            (Node::Leaf(_), Node::Leaf(_)) => {
                if same_pod {
                    2
                } else {
                    4
                }
            }
            _ => {
                if same_pod {
                    1
                } else {
                    3
                }
            }
        }
    }

    fn draw_hops_to_loss(&mut self) -> u64 {
        if self.cfg.loss <= 0.0 || self.lossless {
            return u64::MAX;
        }
        let u: f64 = 1.0 - self.net_rng.random::<f64>(); // in (0, 1]
        (u.ln() / (1.0 - self.cfg.loss).ln())
            .floor()
            .min(u64::MAX as f64 / 2.0) as u64
    }

    /// Sends a packet over `hops` hops with `extra` processing time: its delay, or None if one of
    /// the hops lost it.
    fn transmit(&mut self, hops: u32, extra: Nanos) -> Option<Nanos> {
        if self.hops_to_loss < hops as u64 {
            self.hops_to_loss = self.draw_hops_to_loss();
            return None;
        }
        self.hops_to_loss -= hops as u64;
        Some(hops as Nanos * self.cfg.hop_delay_ns + extra)
    }

    fn schedule_arrival(&mut self, pool: u32) {
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

    fn new_task(&mut self, pool: u32, service: Nanos, kind: u8, measured: bool) -> u32 {
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
    fn store_task(&mut self, task: Task) -> u32 {
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
    fn free_slot(&mut self, i: u32) {
        self.tasks[i as usize].arrival = Nanos::MAX;
        self.free_tasks.push(i);
    }

    /// A task of `pool` that arrived at `arrival` left the system.
    fn leave(&mut self, pool: u32, arrival: Nanos) {
        self.metrics.pools[pool as usize].leave(self.now, arrival);
        self.live_tasks -= 1;
    }

    fn lose(&mut self, task: u32, why: Loss) {
        let t = &self.tasks[task as usize];
        let (header, arrival) = (t.header, t.arrival & !MEASURED);
        self.count_loss(header.pool, why);
        self.policy.on_task_lost(&header, self.now);
        self.leave(header.pool, arrival);
        self.free_slot(task);
    }

    fn count_loss(&mut self, pool: u32, why: Loss) {
        self.metrics.pools[pool as usize].lost += 1;
        match why {
            Loss::Network => self.metrics.lost_in_network += 1,
            Loss::Failure(f) => {
                let m = &mut self.metrics.failures[f as usize];
                m.tasks_lost += 1;
                m.converge_us = m.converge_us.max(self.now as f64 / 1e3 - m.at_us);
            }
        }
    }

    fn on_arrival(&mut self, pool: u32) {
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
    fn draw_pod(&mut self, pool: u32) -> u32 {
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
    fn on_job_arrival(&mut self, pool: u32, first: u32, measured: bool) {
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

    /// A new task reaches spine `pod` of its pool: the policy picks a rack, and it goes there.
    #[inline(always)]
    fn submit(&mut self, pool: u32, pod: u32, task: u32) {
        if !self.nothing_failed
            && let Some(f) =
                self.switch_failed[self.spine_host[pool as usize][pod as usize] as usize]
        {
            return self.lose(task, Loss::Failure(f));
        }
        let mut header = self.tasks[task as usize].header;
        header.spine = pod;
        let d = self.with_policy(|p, ctx| p.on_task_at_spine(ctx, &mut header));
        if d.is_hold() {
            return self.hold_at_spine(pool, pod, d.queue, task, header);
        }
        let p = &self.cluster.pools[pool as usize];
        assert!(
            (d.node as usize) < p.racks.len(),
            "policy chose rack slot {} of a pool with {} racks",
            d.node,
            p.racks.len()
        );
        let hops = self.spine_leaf_hops(pool, pod, d.node);
        self.forward(task, header, d.passes, hops, |task| Ev::AtLeaf {
            task,
            rack: d.node,
        });
    }

    /// Hops from pool `pool`'s spine `pod` to its rack slot `rack`'s leaf.
    #[inline(always)]
    fn spine_leaf_hops(&self, pool: u32, pod: u32, rack: u32) -> u32 {
        // The racks of the spine's own pod are `home_first..home_first + home_racks` of the pool:
        // the same as comparing the pods of the spine and of the rack, without reading the
        // rack's line.
        let group = &self.cluster.pools[pool as usize].groups[pod as usize];
        if rack.wrapping_sub(group.home_first) < group.home_racks {
            1
        } else {
            3
        }
    }

    /// A spine keeps a task in its queue `queue` of the pool ([`Decision::hold_in`]).
    #[cold]
    #[inline(never)]
    fn hold_at_spine(&mut self, pool: u32, pod: u32, queue: u32, task: u32, header: TaskHeader) {
        self.tasks[task as usize].header = header;
        self.spine_held
            .entry((pool, pod, queue))
            .or_default()
            .push_back(task);
    }

    /// Stores the updated header and sends the task on, or loses it on the way.
    fn forward(
        &mut self,
        task: u32,
        header: TaskHeader,
        passes: u32,
        hops: u32,
        ev: impl FnOnce(u32) -> Ev,
    ) {
        let t = &mut self.tasks[task as usize];
        t.header = header;
        if passes > 1 && t.service & RESUBMITTED == 0 {
            t.service |= RESUBMITTED;
            self.metrics.pools[header.pool as usize].resubmitted += 1;
        }
        match self.transmit(hops, (passes.max(1) - 1) as Nanos * self.cfg.resubmit_ns) {
            Some(delay) => self.queue.push_after(delay, ev(task)),
            None => self.lose(task, Loss::Network),
        }
    }

    fn on_leaf(&mut self, task: u32, rack: u32) {
        let mut header = self.tasks[task as usize].header;
        let pool = &self.cluster.pools[header.pool as usize];
        if !self.nothing_failed
            && let Some(f) = self.rack_failed[pool.racks[rack as usize].rack as usize]
        {
            return self.lose(task, Loss::Failure(f));
        }
        let d = self.with_policy(|p, ctx| p.on_task_at_leaf(ctx, rack, &mut header));
        if d.is_hold() {
            self.tasks[task as usize].header = header;
            let queue = self.held.entry((header.pool, rack, d.queue)).or_default();
            queue.push_back(task);
            let len = queue.len();
            if self.held_lengths.len() <= len {
                self.held_lengths.resize(len + 1, 0);
            }
            self.held_lengths[len] += 1;
            return;
        }
        let pool = &self.cluster.pools[header.pool as usize];
        // A rack slot's workers are contiguous: the same check as `worker_rack[node] == rack`,
        // on the line the policy has just read.
        let r = &pool.racks[rack as usize];
        assert!(
            d.node.wrapping_sub(r.first_worker) < r.workers,
            "leaf of rack slot {rack} chose worker {} outside its rack",
            d.node
        );
        let worker = pool.worker_base + d.node;
        self.forward(task, header, d.passes, 1 + d.extra_hops, |task| {
            Ev::AtWorker { task, worker }
        });
    }

    /// Sends the tasks the policy released from its leaves' queues to their workers.
    #[cold]
    fn release_held(&mut self) {
        let releases = std::mem::take(&mut self.releases);
        for r in &releases {
            let (pool, rack, queue, local) = (r.pool, r.rack, r.queue, r.worker);
            let held = match r.spine {
                Some(pod) => self.spine_held.get_mut(&(pool, pod, queue)),
                None => self.held.get_mut(&(pool, rack, queue)),
            };
            let task = held
                .and_then(|q| q.remove(r.index as usize))
                .unwrap_or_else(|| {
                    panic!("the policy released task {} of queue {queue} of pool {pool}'s rack slot {rack}, which does not hold it", r.index)
                });
            let p = &self.cluster.pools[pool as usize];
            let slot = &p.racks[rack as usize];
            assert!(
                local.wrapping_sub(slot.first_worker) < slot.workers,
                "leaf of rack slot {rack} released a task to worker {local} outside its rack"
            );
            let worker = p.worker_base + local;
            let header = self.tasks[task as usize].header;
            let hops = match r.spine {
                Some(pod) => self.spine_leaf_hops(pool, pod, rack) + 1,
                None => 1,
            };
            self.forward(task, header, r.passes, hops, |task| Ev::AtWorker {
                task,
                worker,
            });
        }
        self.releases = releases;
        self.releases.clear();
    }

    /// Puts a task at the end of a worker's queue, starting it if the worker was idle.
    fn enqueue(&mut self, worker: u32, q: Queued) {
        let w = &mut self.workers[worker as usize];
        w.push_back(q);
        if w.len() == 1 {
            self.queue.push(self.now + q.service, Ev::Done(worker));
        }
    }

    fn on_worker(&mut self, task: u32, worker: u32) {
        if !self.nothing_failed
            && let Some(f) = self.down(worker)
        {
            return self.lose(task, Loss::Failure(f));
        }
        let t = &self.tasks[task as usize];
        let (arrival, service) = (t.arrival, t.service & !RESUBMITTED);
        self.workers[worker as usize].announce |= t.header.tag != 0;
        self.free_slot(task);
        if self.nodes.is_some() {
            return self.node_receives(worker, Queued { arrival, service });
        }
        let q = Queued {
            arrival,
            service: self.served(worker, service),
        };
        self.enqueue(worker, q);
    }

    /// The failure that keeps global `worker` from taking a task, if any: its own, else its
    /// rack's; in node mode, where `worker` stands for its node, only once every core of the node
    /// is down: the last of the cores' own failures, else the rack's.
    fn down(&self, worker: u32) -> Option<u32> {
        let w = &self.workers[worker as usize];
        let rack = self.rack_failed[w.rack as usize];
        let Some(nodes) = &self.nodes else {
            return if w.failure != NO_FAILURE {
                Some(w.failure)
            } else {
                rack
            };
        };
        let cores = nodes.cores_of(nodes.of[worker as usize]);
        if cores.clone().any(|c| !self.workers[c as usize].failed) {
            return None;
        }
        cores
            .map(|c| self.workers[c as usize].failure)
            .filter(|&f| f != NO_FAILURE)
            .max()
            .or(rack)
    }

    /// Node mode: a task (its service at speed 1) reached the node of global `worker`: it starts
    /// on an idle core, `worker` first, or waits in the node's queue.
    #[cold]
    fn node_receives(&mut self, worker: u32, q: Queued) {
        let nodes = self.nodes.as_ref().expect("node mode");
        let n = nodes.of[worker as usize];
        let cores = nodes.cores_of(n);
        let (first, count) = (cores.start, cores.len() as u32);
        let idle = (0..count)
            .map(|i| first + (worker - first + i) % count)
            .find(|&c| {
                let w = &self.workers[c as usize];
                w.is_empty() && !w.failed
            });
        match idle {
            Some(c) => {
                let service = self.served(c, q.service);
                self.enqueue(
                    c,
                    Queued {
                        arrival: q.arrival,
                        service,
                    },
                );
            }
            None => self.nodes.as_mut().expect("node mode").waiting[n as usize].push_back(q),
        }
    }

    /// Node mode: core `worker` finished a task; if it is free it takes the node's oldest
    /// waiting task. The node's tasks, in service and waiting.
    #[cold]
    fn next_from_node(&mut self, worker: u32) -> u32 {
        let nodes = self.nodes.as_mut().expect("node mode");
        let n = nodes.of[worker as usize] as usize;
        if self.workers[worker as usize].is_empty()
            && let Some(q) = nodes.waiting[n].pop_front()
        {
            let service = self.served(worker, q.service);
            self.enqueue(
                worker,
                Queued {
                    arrival: q.arrival,
                    service,
                },
            );
        }
        let nodes = self.nodes.as_ref().expect("node mode");
        let busy: u32 = nodes
            .cores_of(n as u32)
            .map(|c| self.workers[c as usize].len())
            .sum();
        busy + nodes.waiting[n].len() as u32
    }

    /// Groups the workers into nodes ([`Policy::node_queues`]): the tasks prefilled behind a
    /// core's first wait in its node's queue, and idle cores take them.
    #[cold]
    fn make_nodes(&mut self) {
        let mut nodes = Nodes::new(&self.cluster);
        for n in 0..nodes.first.len() as u32 {
            for c in nodes.cores_of(n) {
                let speed = self.cluster.worker_speed(c);
                for q in self.workers[c as usize].take_waiting() {
                    nodes.waiting[n as usize].push_back(Queued {
                        arrival: q.arrival,
                        service: ((q.service as f64 * speed).round() as Nanos).max(1),
                    });
                }
            }
        }
        self.nodes = Some(Box::new(nodes));
        for w in 0..self.workers.len() as u32 {
            if self.workers[w as usize].is_empty() {
                self.next_from_node(w);
            }
        }
    }

    /// Puts the policy's steal requests on the wire: two hops, thief to leaf to victim.
    #[cold]
    fn send_steals(&mut self) {
        let steals = std::mem::take(&mut self.steals);
        assert!(self.nodes.is_some(), "a steal needs Policy::node_queues");
        for s in &steals {
            let same_rack = {
                let p = &self.cluster.pools[s.pool as usize];
                p.worker_rack.get(s.thief as usize).is_some()
                    && p.worker_rack.get(s.thief as usize) == p.worker_rack.get(s.victim as usize)
            };
            assert!(
                same_rack,
                "steal {s:?} is not between two nodes of one rack"
            );
            if let Some(delay) = self.transmit(2, 0) {
                let i = self.nodes.as_mut().expect("node mode").send(*s);
                self.queue.push_after(delay, Ev::Steal(i));
            }
        }
        self.steals = steals;
        self.steals.clear();
    }

    /// A steal request reached the victim's node: its oldest waiting task, if any, goes to the
    /// thief's node, two hops away.
    #[cold]
    fn on_steal(&mut self, i: u32) {
        let nodes = self.nodes.as_mut().expect("node mode");
        let s = nodes.arrived(i);
        let base = self.cluster.pools[s.pool as usize].worker_base;
        let victim = base + s.victim;
        if !self.nothing_failed && self.down(victim).is_some() {
            return; // nobody there to answer
        }
        let nodes = self.nodes.as_mut().expect("node mode");
        let n = nodes.of[victim as usize] as usize;
        let Some(q) = nodes.waiting[n].pop_front() else {
            self.with_policy(|p, ctx| p.on_steal(ctx, s, false));
            return;
        };
        let task = self.store_task(Task {
            header: TaskHeader {
                pool: s.pool,
                spine: 0,
                hint: s.thief + 1,
                tag: 0,
                kind: 0,
                job_left: 0,
            },
            arrival: q.arrival,
            service: q.service,
        });
        self.with_policy(|p, ctx| p.on_steal(ctx, s, true));
        match self.transmit(2, 0) {
            Some(delay) => self.queue.push_after(
                delay,
                Ev::AtWorker {
                    task,
                    worker: base + s.thief,
                },
            ),
            None => self.lose(task, Loss::Network),
        }
    }

    /// How long global worker `worker` takes for a task of service time `service` (at speed 1).
    fn served(&self, worker: u32, service: Nanos) -> Nanos {
        if self.cluster.server_speeds.is_empty() {
            return service;
        }
        ((service as f64 / self.cluster.worker_speed(worker)).round() as Nanos).max(1)
    }

    fn on_done(&mut self, worker: u32) {
        let w = &mut self.workers[worker as usize];
        if w.failed {
            return; // its queue was lost with it
        }
        let done = w.pop_front().expect("a Done event has a task in service");
        if let Some(next) = w.front() {
            let at = self.now + next.service;
            self.queue.push(at, Ev::Done(worker));
        }
        let mut qlen = w.len();
        let tag = u8::from(qlen == 0 && std::mem::take(&mut w.announce));
        let (pool, local) = (w.pool, w.local);
        if self.nodes.is_some() {
            qlen = self.next_from_node(worker);
        }
        self.metrics.pools[pool as usize].completed += 1;
        let arrival = done.arrival();
        if done.arrival & MEASURED != 0 {
            self.metrics.record(pool, self.now - arrival, done.service);
        }
        if !self.jobs.is_empty() {
            self.job_task_done(pool, arrival, done.arrival & MEASURED != 0);
        }
        self.leave(pool, arrival);
        self.policy.on_task_left_worker(pool, local, self.now);
        if let Some(delay) = self.transmit(1, 0) {
            self.queue.push_after(
                delay,
                Ev::Reply {
                    worker,
                    qlen,
                    service: u32::try_from(done.service).unwrap_or(u32::MAX),
                    tag,
                },
            );
        }
    }

    /// A task of the job of `pool` that arrived at `arrival` finished (prefilled tasks belong to
    /// no job): the job's response is recorded when its last task finishes.
    #[cold]
    fn job_task_done(&mut self, pool: u32, arrival: Nanos, measured: bool) {
        if let Some(left) = self.jobs.get_mut(&(pool, arrival)) {
            *left -= 1;
            if *left == 0 {
                self.jobs.remove(&(pool, arrival));
                if measured {
                    self.metrics.record_job(self.now - arrival);
                }
            }
        }
    }

    fn on_reply(&mut self, worker: u32, qlen: u32, service_ns: u32, tag: u8) {
        let w = &self.workers[worker as usize];
        if !self.nothing_failed && self.rack_failed[w.rack as usize].is_some() {
            return;
        }
        let rack = w.rack_slot;
        let reply = Reply {
            pool: w.pool,
            worker: w.local,
            qlen,
            tag: u16::from(tag),
            service_ns,
        };
        self.with_policy(|p, ctx| p.on_reply_at_leaf(ctx, rack, reply));
    }

    fn on_message(&mut self, i: u32) {
        let msg = self.messages[i as usize];
        self.free_messages.push(i);
        let pool = &self.cluster.pools[msg.pool as usize];
        let dead = !self.nothing_failed
            && match msg.to {
                Node::Spine(d) => self.switch_failed
                    [self.spine_host[msg.pool as usize][d as usize] as usize]
                    .is_some(),
                Node::Leaf(r) => self.rack_failed[pool.racks[r as usize].rack as usize].is_some(),
            };
        if !dead {
            self.with_policy(|p, ctx| p.on_message(ctx, msg));
        }
    }

    /// Fails a worker: its queued tasks are lost now.
    fn fail_worker(&mut self, worker: u32, f: u32) {
        let w = &mut self.workers[worker as usize];
        if w.failed {
            return;
        }
        w.failed = true;
        let (pool, local) = (w.pool, w.local);
        let lost: Vec<Nanos> = w.iter().map(Queued::arrival).collect();
        w.clear();
        for arrival in lost {
            self.count_loss(pool, Loss::Failure(f));
            self.policy.on_task_left_worker(pool, local, self.now);
            self.leave(pool, arrival);
        }
        // A node's queue is lost with its last core.
        if let Some(nodes) = self.nodes.as_mut() {
            let n = nodes.of[worker as usize];
            if nodes.cores_of(n).all(|c| self.workers[c as usize].failed) {
                let lost = std::mem::take(&mut nodes.waiting[n as usize]);
                for q in lost {
                    self.count_loss(pool, Loss::Failure(f));
                    self.policy.on_task_left_worker(pool, local, self.now);
                    self.leave(pool, q.arrival());
                }
            }
        }
    }

    // Rare (once per failure): kept out of the event loop, which it would otherwise enlarge.
    #[cold]
    #[inline(never)]
    fn on_fail(&mut self, i: u32) {
        let spec = self.cfg.failures[i as usize];
        let topo = self.cluster.topology;
        match spec.target {
            FailureTarget::Worker(w) if w < self.shard.total_workers => {
                let Some(w) = self.shard.local_worker(w) else {
                    return; // another shard's worker: nothing failed here
                };
                self.workers[w as usize].failure = i;
                self.fail_worker(w, i);
            }
            FailureTarget::Leaf(r) if r < topo.racks() => {
                self.rack_failed[r as usize] = Some(i);
                // The tasks its queues held are lost with it.
                let lost: Vec<(u32, u32, u32)> = self
                    .held
                    .keys()
                    .filter(|&&(p, slot, _)| {
                        self.cluster.pools[p as usize].racks[slot as usize].rack == r
                    })
                    .copied()
                    .collect();
                for key in lost {
                    for task in self.held.remove(&key).unwrap_or_default() {
                        self.lose(task, Loss::Failure(i));
                    }
                }
                for w in 0..self.workers.len() as u32 {
                    if self.cluster.workers[w as usize].rack == r {
                        self.fail_worker(w, i);
                    }
                }
            }
            FailureTarget::Spine(s) if s < topo.spines() => {
                self.switch_failed[s as usize] = Some(i);
                // The tasks its schedulers held are lost with it.
                let lost: Vec<(u32, u32, u32)> = self
                    .spine_held
                    .keys()
                    .filter(|&&(p, pod, _)| self.spine_host[p as usize][pod as usize] == s)
                    .copied()
                    .collect();
                for key in lost {
                    for task in self.spine_held.remove(&key).unwrap_or_default() {
                        self.lose(task, Loss::Failure(i));
                    }
                }
            }
            other => unreachable!("{other} was checked against the topology and the pools"),
        }
        self.nothing_failed = false;
        // The controller reacts after detection plus the hops of its notices.
        self.queue.push(
            self.now + self.cfg.detect_ns + 2 * self.cfg.hop_delay_ns,
            Ev::Notice(i),
        );
    }

    // Rare (once per failure): kept out of the event loop, which it would otherwise enlarge.
    #[cold]
    #[inline(never)]
    fn on_notice(&mut self, i: u32) {
        let spec = self.cfg.failures[i as usize];
        let mut notices = Vec::new();
        match spec.target {
            FailureTarget::Worker(w) => {
                let w = self
                    .shard
                    .local_worker(w)
                    .expect("only the worker's shard has its notice");
                self.known_dead_workers[w as usize] = true;
                self.nothing_dead = false;
                let info = self.cluster.workers[w as usize];
                let pool = &self.cluster.pools[info.pool as usize];
                let local = w - pool.worker_base;
                notices.push(FailureNotice::Worker {
                    pool: info.pool,
                    worker: local,
                });
                // The pool's last live worker of a live rack: the rack is gone for the pool.
                let slot = pool.worker_rack[local as usize];
                let r = &pool.racks[slot as usize];
                let first = pool.worker_base + r.first_worker;
                if !self.known_dead_racks[r.rack as usize]
                    && (first..first + r.workers).all(|x| self.known_dead_workers[x as usize])
                {
                    self.known_empty_racks[info.pool as usize][slot as usize] = true;
                    notices.push(FailureNotice::Rack {
                        pool: info.pool,
                        rack: slot,
                    });
                }
            }
            FailureTarget::Leaf(r) => {
                self.known_dead_racks[r as usize] = true;
                self.nothing_dead = false;
                for (p, pool) in self.cluster.pools.iter().enumerate() {
                    if let Some(slot) = pool.racks.iter().position(|x| x.rack == r) {
                        notices.push(FailureNotice::Rack {
                            pool: p as u32,
                            rack: slot as u32,
                        });
                    }
                }
            }
            FailureTarget::Spine(s) => {
                // Re-host every pool spine of the failed switch on the next live switch of its
                // pod, or else of the next pod of its group that has one (the group's racks in
                // that pod become the spine's one-hop racks).
                let per_pod = self.cluster.topology.racks_per_pod();
                let topo = self.cluster.topology;
                let mut stranded = Vec::new();
                for (p, hosts) in self.spine_host.iter_mut().enumerate() {
                    for (d, host) in hosts.iter_mut().enumerate() {
                        if *host != s {
                            continue;
                        }
                        let pool = &mut self.cluster.pools[p];
                        let g = &pool.groups[d];
                        let racks =
                            &pool.racks[g.first_rack as usize..(g.first_rack + g.racks) as usize];
                        let mut pods = vec![s / per_pod];
                        for r in racks {
                            let pod = topo.pod_of_rack(r.rack);
                            if !pods.contains(&pod) {
                                pods.push(pod);
                            }
                        }
                        let live = |c: u32| self.switch_failed[c as usize].is_none();
                        let replacement = pods.iter().find_map(|&pod| {
                            (0..per_pod)
                                .map(|k| pod * per_pod + (s % per_pod + k) % per_pod)
                                .find(|&c| live(c))
                        });
                        let Some(c) = replacement else {
                            stranded.push(p as u32);
                            continue;
                        };
                        *host = c;
                        let pod = c / per_pod;
                        if pod != pool.groups[d].pod {
                            let first = racks
                                .iter()
                                .position(|r| topo.pod_of_rack(r.rack) == pod)
                                .expect("the pod holds racks of the group");
                            let n = racks
                                .iter()
                                .filter(|r| topo.pod_of_rack(r.rack) == pod)
                                .count();
                            let g = &mut pool.groups[d];
                            g.pod = pod;
                            g.home_first = g.first_rack + first as u32;
                            g.home_racks = n as u32;
                        }
                        notices.push(FailureNotice::SpineRestarted {
                            pool: p as u32,
                            pod: d as u32,
                        });
                    }
                }
                // No live switch left in the pods of some of its groups: those spines are gone
                // for good.
                if !stranded.is_empty() {
                    self.known_lost_spines[s as usize] = true;
                }
                for pool in stranded {
                    if let Some(draw) = self.live_pod_draw(pool) {
                        self.pod_draws[pool as usize] = draw;
                    }
                }
            }
        }
        for n in notices {
            if let FailureNotice::Worker { pool, .. } | FailureNotice::Rack { pool, .. } = n
                && let Some(draw) = self.live_pod_draw(pool)
            {
                self.pod_draws[pool as usize] = draw;
            }
            self.with_policy(|p, ctx| p.on_failure_notice(ctx, n));
        }
    }

    /// The spine choice of `pool` over the workers the controller knows alive and behind a
    /// live spine: clients stop sending to a pod where none is left. None when none is left
    /// anywhere (the pool's tasks are then lost wherever they go, and the draw stays as it was).
    fn live_pod_draw(&self, pool: u32) -> Option<PodDraw> {
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

    fn on_sample(&mut self) {
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

    /// Starts each worker with a geometric(load) number of unmeasured tasks.
    fn prefill(&mut self) {
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
            totals.area += pm.area;
            totals.sojourn += pm.sojourn_sum;
            totals.tasks += pm.arrived;
            totals.completed += pm.completed;
            totals.resubmitted += pm.resubmitted;
            totals.lost += pm.lost;
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
