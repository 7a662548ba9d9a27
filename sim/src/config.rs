//! One run's configuration, with the paper's defaults (Horus §5.1).

use crate::placement::RandomPools;
use crate::policy::PolicySpec;
use crate::queue::Nanos;
use crate::topology::Topology;
use crate::workload::{Bursts, LoadSchedule};
use anyhow::{Context, ensure};
use serde::{Deserialize, Serialize};

/// Where the pools come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PoolSource {
    Random(RandomPools),
    /// Given sizes, placed on random slots (tests and single-rack studies).
    Sizes(Vec<u32>),
    /// A public-simulator dataset file.
    Dataset(String),
    /// Tenants whose pools H-DRF sizes ([`crate::hdrf`]), placed on random slots.
    Tenants(crate::hdrf::Tenants),
}

/// What fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailureTarget {
    /// A global worker ID.
    Worker(u32),
    /// A rack's leaf switch: its workers become unreachable.
    Leaf(u32),
    /// An aggregation (spine) switch by global index `pod * k/2 + i`.
    Spine(u32),
}

impl std::fmt::Display for FailureTarget {
    /// As `--fail` names it: `worker:ID`, `leaf:RACK`, `spine:SWITCH`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Worker(i) => write!(f, "worker:{i}"),
            Self::Leaf(i) => write!(f, "leaf:{i}"),
            Self::Spine(i) => write!(f, "spine:{i}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureSpec {
    pub at_ns: Nanos,
    pub target: FailureTarget,
}

impl FailureSpec {
    /// Parses `worker:ID@MS`, `leaf:RACK@MS` or `spine:SWITCH@MS`.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let (what, at) = text
            .split_once('@')
            .context("failure must look like KIND:INDEX@MS")?;
        let (kind, index) = what
            .split_once(':')
            .context("failure must look like KIND:INDEX@MS")?;
        let index: u32 = index
            .parse()
            .with_context(|| format!("bad index in failure {text:?}"))?;
        let ms: f64 = at
            .parse()
            .with_context(|| format!("bad time in failure {text:?}"))?;
        ensure!(
            ms.is_finite() && ms >= 0.0,
            "the time of failure {text:?} must be a non-negative number of milliseconds"
        );
        let target = match kind {
            "worker" => FailureTarget::Worker(index),
            "leaf" => FailureTarget::Leaf(index),
            "spine" => FailureTarget::Spine(index),
            _ => anyhow::bail!("unknown failure kind {kind:?} (worker, leaf, spine)"),
        };
        Ok(Self {
            at_ns: (ms * 1e6).round() as Nanos,
            target,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub seed: u64,
    pub topology: Topology,
    pub pools: PoolSource,
    pub policy: PolicySpec,
    /// A name from [`crate::workload::WORKLOADS`] or `trace:PATH`.
    pub workload: String,
    pub load: LoadSchedule,
    /// Arrivals stop at `sim_ns`; the run then drains for at most `drain_ns`.
    pub sim_ns: Nanos,
    pub drain_ns: Nanos,
    /// Tasks arriving before this are not recorded in the latency histograms.
    pub warmup_ns: Nanos,
    pub hop_delay_ns: Nanos,
    pub loss: f64,
    /// Latency of each extra pipeline pass (a resubmit). An assumption: the paper only bounds the
    /// whole scheduling latency, resubmits included, by 1.6 us (Fig. 9d).
    pub resubmit_ns: Nanos,
    /// From a failure until the controller has told the schedulers (keep-alive timeout plus the
    /// control messages' travel).
    pub detect_ns: Nanos,
    /// Period of the queue-imbalance samples; 0 disables them.
    pub sample_ns: Nanos,
    /// Start every worker with a geometric(load) number of tasks, the stationary queue of an M/M/1
    /// at that load, instead of empty. Exact for random dispatch of exponential tasks, a warm start
    /// otherwise.
    pub prefill: bool,
    pub failures: Vec<FailureSpec>,
    /// Keep latency histograms per pool (the overall ones are always kept). Off for runs with
    /// tens of thousands of pools, where they would dominate memory.
    pub pool_histograms: bool,
    /// Shards the run is split into, each a complete engine over a subset of the pools, run in
    /// parallel (see [`crate::shard`]). 1 is the unsharded run; results for a given seed depend on
    /// it (statistically equivalent, not identical), never on the number of threads.
    #[serde(default = "one")]
    pub shards: u32,
    /// The controller puts each pool's racks under spine schedulers by pods, merging pods in
    /// order until a group holds at least this many of the pool's workers; 0 keeps one group per
    /// pod, as the paper does ([`crate::cluster`], `docs/algorithm.md` decision 20).
    #[serde(default = "spine_group_workers")]
    pub spine_group_workers: u32,
    /// Bursty arrivals (a two-state Markov-modulated Poisson process of the load's mean rate);
    /// `None`: Poisson.
    #[serde(default)]
    pub bursts: Option<Bursts>,
    /// The speed of each server position in every rack, `servers_per_rack` of them (a worker
    /// serves a task in its service time divided by its server's speed; loads are fractions of
    /// the pools' capacity at these speeds); empty: every server has speed 1.
    #[serde(default)]
    pub server_speeds: Vec<f64>,
    /// Tasks a client's job has (1 to 255): they arrive together at one spine, each with its own
    /// service time; the offered load counts tasks, and the summary gives jobs' response times.
    #[serde(default = "one_task")]
    pub job_tasks: u32,
}

fn one_task() -> u32 {
    1
}

/// Parses server speeds `COUNTxSPEED,...` (an item without a count is one server): `2x8,22x1`.
pub fn parse_speeds(text: &str) -> anyhow::Result<Vec<f64>> {
    let mut speeds = Vec::new();
    for item in text.split(',') {
        let (count, speed) = match item.split_once('x') {
            Some((c, s)) => (
                c.trim()
                    .parse::<usize>()
                    .with_context(|| format!("bad count in {item:?}"))?,
                s,
            ),
            None => (1, item),
        };
        let speed: f64 = speed
            .trim()
            .parse()
            .with_context(|| format!("bad speed in {item:?}"))?;
        ensure!(
            speed.is_finite() && speed > 0.0,
            "server speed {item:?} must be positive"
        );
        speeds.extend(std::iter::repeat_n(speed, count));
    }
    Ok(speeds)
}

fn one() -> u32 {
    1
}

/// The default of [`SimConfig::spine_group_workers`].
pub fn spine_group_workers() -> u32 {
    100
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            topology: Topology::default(),
            pools: PoolSource::Random(RandomPools::default()),
            policy: PolicySpec::default(),
            workload: "exp".into(),
            load: LoadSchedule::constant(0.5),
            sim_ns: 50_000_000,
            drain_ns: 1_000_000_000,
            warmup_ns: 5_000_000,
            hop_delay_ns: 5_000,
            loss: 1e-5,
            resubmit_ns: 500,
            detect_ns: 100_000,
            sample_ns: 50_000,
            prefill: false,
            failures: Vec::new(),
            pool_histograms: true,
            shards: 1,
            spine_group_workers: spine_group_workers(),
            bursts: None,
            server_speeds: Vec::new(),
            job_tasks: 1,
        }
    }
}

impl SimConfig {
    pub fn validate(&self) -> anyhow::Result<()> {
        self.topology.validate()?;
        if let Some(b) = &self.bursts {
            b.validate()?;
        }
        ensure!(
            self.server_speeds.is_empty()
                || self.server_speeds.len() == self.topology.servers_per_rack as usize,
            "{} server speeds given for {} servers per rack",
            self.server_speeds.len(),
            self.topology.servers_per_rack
        );
        ensure!(
            self.server_speeds.iter().all(|s| s.is_finite() && *s > 0.0),
            "server speeds must be positive"
        );
        ensure!(
            (0.0..1.0).contains(&self.loss),
            "loss must be in [0, 1), got {}",
            self.loss
        );
        ensure!(self.sim_ns > 0, "simulated time must be positive");
        ensure!(
            self.warmup_ns < self.sim_ns,
            "the warm-up ({} ms) must end before arrivals stop ({} ms): no task would be measured",
            self.warmup_ns as f64 / 1e6,
            self.sim_ns as f64 / 1e6
        );
        self.load.validate()?;
        ensure!(
            self.load.mean_until(self.sim_ns) > 0.0,
            "the load is 0 until arrivals stop ({} ms): no task would arrive",
            self.sim_ns as f64 / 1e6
        );
        match &self.pools {
            PoolSource::Random(r) => ensure!(r.count > 0, "at least one pool is needed"),
            PoolSource::Sizes(sizes) => ensure!(!sizes.is_empty(), "at least one pool is needed"),
            PoolSource::Dataset(_) => {} // checked when read (`engine::placements`)
            PoolSource::Tenants(t) => t.validate()?,
        }
        ensure!(self.shards >= 1, "shards must be at least 1");
        ensure!(
            (1..=255).contains(&self.job_tasks),
            "a job has 1 to 255 tasks, got {}",
            self.job_tasks
        );
        self.policy.check()?;
        for f in &self.failures {
            ensure!(
                f.at_ns < self.sim_ns,
                "{} fails at {} ms, after arrivals stop ({} ms): no task would meet it",
                f.target,
                f.at_ns as f64 / 1e6,
                self.sim_ns as f64 / 1e6
            );
            let (index, count, what) = match f.target {
                // The workers are known once the pools are placed (`Engine::for_shard`).
                FailureTarget::Worker(_) => continue,
                FailureTarget::Leaf(r) => (r, self.topology.racks(), "racks"),
                FailureTarget::Spine(s) => (s, self.topology.spines(), "spines"),
            };
            ensure!(
                index < count,
                "{} is outside the topology: it has {count} {what} (0 to {})",
                f.target,
                count - 1
            );
        }
        ensure!(
            !self.prefill || self.load.steps[0].1 < 1.0,
            "prefill needs an initial load below 1"
        );
        Ok(())
    }
}
