//! The registry: every policy with its name, description, typed parameters and constructor, and
//! [`PolicySpec`], a registered policy with values for its parameters.

use super::*;
use crate::cluster::Cluster;
use crate::rng::SimRng;
use horus_model::sched::jbsq::Advertise;
use serde::{Deserialize, Serialize};

/// Horus's parameters (`docs/algorithm.md`, decisions 6, 7 and 17), with their defaults.
const HORUS_PARAMS: [Param; 4] = [
    Param::int(
        "link_at",
        horus::HorusParams::DEFAULT.link_at as u32,
        1,
        u16::MAX as u32,
    ),
    Param::int(
        "unlink_at",
        horus::HorusParams::DEFAULT.unlink_at as u32,
        0,
        u16::MAX as u32 - 1,
    ),
    // A positive load of 16.16 bits.
    Param::real(
        "report_delta",
        horus::HorusParams::DEFAULT.report_delta,
        1.0 / 65536.0,
        65535.0,
    ),
    Param::int(
        "repair_gap_us",
        horus::HorusParams::DEFAULT.repair_gap_us as u32,
        0,
        u16::MAX as u32,
    ),
];

/// horus-tofino's: Horus's and one flag per Tofino difference (1: as the Tofino program does).
const HORUS_TOFINO_PARAMS: [Param; 8] = {
    let h = HORUS_PARAMS;
    [
        Param::flag("samples_8", true),
        Param::flag("avg_16_16", true),
        Param::flag("control_plane_tables", true),
        Param::flag("repair_deadline", true),
        h[0],
        h[1],
        h[2],
        h[3],
    ]
};

/// horus-jbsq's: the leaf's bound, what its link rule counts (`places`: free places, not idle
/// workers; `room`: free places and that many held tasks, decision 32), how long after an idle
/// message it holds the link (`hold_us`) and Horus's.
const HORUS_JBSQ_PARAMS: [Param; 9] = {
    let h = HORUS_PARAMS;
    [
        Param::count("k", 2),
        Param::flag("weighted", false),
        Param::flag("places", false),
        Param::int("room", 0, 0, 65_535),
        Param::int("hold_us", 0, 0, 65_535),
        h[0],
        h[1],
        h[2],
        h[3],
    ]
};

/// Malcolm's Po2, JSQ and JBT: the broadcast period, loads weighted by speed or not, the spines'
/// samples.
const MALCOLM_PARAMS: [Param; 3] = [
    Param::real("period_us", 100.0, 0.001, f64::MAX),
    Param::flag("weighted", false),
    Param::count("samples", 2),
];

/// The policies the simulator offers, in the order the help and errors list them. Everything that
/// names a policy reads this table: `--policy` and `--policies` (and their help and errors), the
/// default policies of a sweep, the events bench, and the `policy` field of the results.
///
/// A new policy is a new file in this folder (a type implementing [`Policy`]), its `pub mod` line
/// in `mod.rs`, and one entry here.
pub static POLICIES: &[PolicyEntry] = &[
    PolicyEntry {
        name: "horus",
        about: "Horus: idle lists and aggregated load updates at leaves and spines, run by the \
                horus-model schedulers",
        params: &HORUS_PARAMS,
        compared: true,
        check: |s| horus::HorusParams::of(s).map(drop),
        build: |b| {
            let params = horus::HorusParams::of(b.params.spec()).expect("the entry's check passed");
            Box::new(horus::Horus::new(b.cluster, b.queue_len, b.rng, params))
        },
    },
    PolicyEntry {
        name: horus::TOFINO_POLICY,
        about: "Horus with the Tofino program's arithmetic (docs/p4.md), each difference a parameter \
                (1: the Tofino's): samples_8 (8-bit draws through exact-match sample tables), avg_16_16 (the \
                rack average in 16.16), control_plane_tables (no link rule on control passes), \
                repair_deadline (the repair's earliest time compared signed)",
        params: &HORUS_TOFINO_PARAMS,
        compared: false,
        check: |s| horus::HorusParams::of(s).map(drop),
        build: |b| {
            let params = horus::HorusParams::of(b.params.spec()).expect("the entry's check passed");
            Box::new(horus::Horus::new(b.cluster, b.queue_len, b.rng, params))
        },
    },
    PolicyEntry {
        name: "rs-h",
        about: "RackSched at the spines over the racks of their pod, fed by each leaf's average \
                load after every reply, and at the leaves over workers",
        params: &[Param::count("samples", 2)],
        compared: true,
        check: |_| Ok(()),
        build: |b| rack_sched(b, racksched::SpineMode::RackLoads { threshold: 0.0 }),
    },
    PolicyEntry {
        name: "rs-lb",
        about: "a uniformly random rack of the pool, RackSched inside it",
        params: &[Param::count("samples", 2)],
        compared: true,
        check: |_| Ok(()),
        build: |b| rack_sched(b, racksched::SpineMode::UniformRack),
    },
    PolicyEntry {
        name: "jsq",
        about: "join the shortest queue of the pool, with zero-delay state (the ideal bound; \
                weighted = 1: the worker a new task would finish soonest on, (queue + 1) / speed)",
        params: &[Param::flag("weighted", false)],
        compared: true,
        check: |_| Ok(()),
        build: |b| {
            let weighted = b.params.flag("weighted");
            Box::new(jsq::JsqIdeal::new(b.cluster, b.queue_len, weighted))
        },
    },
    PolicyEntry {
        name: "random",
        about: "a uniformly random worker of the pool",
        params: &[],
        compared: true,
        check: |_| Ok(()),
        build: |_| Box::new(random::RandomPolicy),
    },
    PolicyEntry {
        name: "rs",
        about: "RackSched over one pool-wide table of worker loads, replicated at the spines",
        params: &[Param::count("samples", 2)],
        compared: false,
        check: |_| Ok(()),
        build: |b| rack_sched(b, racksched::SpineMode::PoolWide),
    },
    PolicyEntry {
        name: "po2-du",
        about: "power of two with delayed updates: as rs-h, but a leaf reports its average load \
                only when it moved by at least threshold",
        params: &[
            Param::count("samples", 2),
            Param::real("threshold", 1.0, 0.0, f64::MAX),
        ],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let threshold = b.params.real("threshold");
            rack_sched(b, racksched::SpineMode::RackLoads { threshold })
        },
    },
    PolicyEntry {
        name: "draconis",
        about: "a uniformly random rack of the pool; its leaf queues the tasks no worker can \
                take and gives each worker at most k outstanding (k = 1: idle workers pull, as \
                Draconis's switch queue does)",
        params: &[Param::count("k", 1), Param::flag("weighted", false)],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let k = b.params.int("k");
            let weighted = b.params.flag("weighted");
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
            Param::count("k", 2),
            Param::flag("weighted", false),
            Param::count("samples", 2),
        ],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let k = b.params.int("k");
            let weighted = b.params.flag("weighted");
            let samples = b.params.int("samples");
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
        check: |s| horus::HorusParams::of(s).map(drop),
        build: |b| {
            let params = horus::HorusParams::of(b.params.spec()).expect("the entry's check passed");
            let rule = horus_jbsq::LeafRule {
                k: b.params.int("k"),
                weighted: b.params.flag("weighted"),
                advertise: match (b.params.int("room"), b.params.flag("places")) {
                    (0, false) => Advertise::Idle,
                    (0, true) => Advertise::Places,
                    (room, _) => Advertise::Queue { room: room as u16 },
                },
                hold_us: b.params.int("hold_us") as u16,
            };
            Box::new(horus_jbsq::HorusJbsq::new(
                b.cluster,
                b.queue_len,
                b.rng,
                rule,
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
            Param::count("k", 2),
            Param::count("k_max", 8),
            Param::count("samples", 2),
            Param::flag("sliced", true),
            Param::flag("adaptive", true),
            Param::real("interval_us", 1000.0, 1.0, f64::MAX),
            Param::real("slowdown", 10.0, 1.0, f64::MAX),
            Param::real("ratio", 0.3, 0.0, 1.0),
        ],
        compared: false,
        check: |s| rain::RainParams::of(s).map(drop),
        build: |b| {
            let params = rain::RainParams::of(b.params.spec()).expect("the entry's check passed");
            Box::new(rain::Rain::new(b.cluster, b.queue_len, params))
        },
    },
    PolicyEntry {
        name: r2p2::NAME,
        about: "R2P2's router on a switch: JBSQ(n) by recirculation, each pass sampling probes \
                workers of the rack, each pass beyond the first one resubmit latency, behind \
                spines that sample racks by load",
        params: &[
            Param::count("n", 1),
            Param::count("probes", 2),
            Param::count("samples", 2),
        ],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let n = b.params.int("n");
            let probes = b.params.int("probes");
            let samples = b.params.int("samples");
            Box::new(r2p2::R2p2::new(b.cluster, b.queue_len, n, probes, samples))
        },
    },
    PolicyEntry {
        name: malcolm::NAMES[0],
        about: "Malcolm's RAND baseline: a task stays at the random node of the rack it reaches",
        params: &[Param::count("samples", 2)],
        compared: false,
        check: |_| Ok(()),
        build: |b| malcolm(b, malcolm::Rule::Rand),
    },
    PolicyEntry {
        name: malcolm::NAMES[1],
        about: "Malcolm's Po2 baseline: the node a task reaches sends it to the shorter queue of \
                two random nodes of the rack, by loads broadcast every period_us",
        params: &MALCOLM_PARAMS,
        compared: false,
        check: |_| Ok(()),
        build: |b| malcolm(b, malcolm::Rule::Po2),
    },
    PolicyEntry {
        name: malcolm::NAMES[2],
        about: "Malcolm's JSQ baseline: the node a task reaches sends it to the shortest queue \
                of the rack, by loads broadcast every period_us",
        params: &MALCOLM_PARAMS,
        compared: false,
        check: |_| Ok(()),
        build: |b| malcolm(b, malcolm::Rule::Jsq),
    },
    PolicyEntry {
        name: malcolm::NAMES[3],
        about: "Malcolm's JBT baseline: the node a task reaches keeps it if its queue is under \
                queue_threshold, else sends it to a random node under it (by loads broadcast \
                every period_us), else to a random node",
        params: &[
            Param::count("queue_threshold", 2),
            MALCOLM_PARAMS[0],
            MALCOLM_PARAMS[1],
            MALCOLM_PARAMS[2],
        ],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let threshold = b.params.int("queue_threshold");
            malcolm(b, malcolm::Rule::Jbt { threshold })
        },
    },
    PolicyEntry {
        name: malcolm::NAME,
        about: "Malcolm's own strategy: each node of a rack keeps or migrates an arriving task, \
                and after a completion may steal one, by softmax policies over the nodes' \
                expected waits, learned by decentralized actor-critic on heartbeats of period_us",
        params: &[
            Param::real("period_us", 100.0, 0.001, f64::MAX),
            Param::count("batch", 20),
            Param::count("consensus", 100),
            Param::real("critic_lr", 0.01, 0.0, f64::MAX),
            Param::real("actor_lr", 0.0003, 0.0, f64::MAX),
            Param::real("gamma", 0.9, 0.0, 1.0),
            Param::real("cost", 0.0001, 0.0, f64::MAX),
            Param::real("weight_decay", 0.01, 0.0, f64::MAX),
            Param::real("keep", 0.9, 0.0, 1.0),
            Param::count("samples", 2),
        ],
        compared: false,
        check: |s| malcolm_rl::LearnParams::of(s).map(drop),
        build: |b| {
            let params =
                malcolm_rl::LearnParams::of(b.params.spec()).expect("the entry's check passed");
            malcolm(b, malcolm::Rule::Learned(params))
        },
    },
    PolicyEntry {
        name: sparrow::NAME,
        about: "Sparrow: a job's spine probes d x m random workers of the pool for its m tasks \
                (batch sampling), each worker asks for a task when a probe reaches the head of \
                its queue (late binding); use with --job-tasks",
        params: &[Param::count("d", 2)],
        compared: false,
        check: |_| Ok(()),
        build: |b| {
            let d = b.params.int("d");
            Box::new(sparrow::Sparrow::new(b.cluster, b.queue_len, d))
        },
    },
    PolicyEntry {
        name: "jiq",
        about: "join-idle-queue: a spine sends a task to a worker reported idle to it, else to a \
                random worker of the pool",
        params: &[],
        compared: false,
        check: |_| Ok(()),
        build: |b| Box::new(jiq::Jiq::new(b.cluster, b.queue_len, b.rng)),
    },
    PolicyEntry {
        name: "idle-only",
        about: "Horus' idle lists without its load updates (the idle-selection ablation)",
        params: &[],
        compared: false,
        check: |_| Ok(()),
        build: |b| Box::new(idle_only::IdleOnly::new(b.cluster, b.queue_len)),
    },
];

/// The constructor of the RackSched variants: `samples` from the parameters, the spine's `mode`.
fn rack_sched(b: Build<'_>, mode: racksched::SpineMode) -> Box<dyn Policy> {
    let samples = b.params.int("samples");
    Box::new(racksched::RackSched::new(b.cluster, samples, mode))
}

/// The constructor of Malcolm's baselines: the period (RAND has none) and the spines' samples
/// from the parameters.
fn malcolm(b: Build<'_>, rule: malcolm::Rule) -> Box<dyn Policy> {
    let period_us = b.params.spec().param("period_us").unwrap_or(100.0);
    let weighted = b.params.spec().param("weighted").is_some_and(|w| w != 0.0);
    let samples = b.params.int("samples");
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
    /// Checks what the parameters' kinds cannot say alone (e.g. Horus's `unlink_at < link_at`).
    pub check: fn(&PolicySpec) -> anyhow::Result<()>,
    /// Builds the policy for a cluster; its spec passed `check`.
    pub build: fn(Build<'_>) -> Box<dyn Policy>,
}

/// A parameter of a policy: its name, its default and the values it takes. A spec holds every
/// value as a number (0 or 1 for a flag), and [`PolicySpec::set_param`] refuses one outside the
/// parameter's [`Kind`], so a constructor reads its parameters typed ([`Params::flag`],
/// [`Params::int`], [`Params::real`]) without checking them again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub default: f64,
    pub kind: Kind,
}

/// The values a [`Param`] takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Off or on: 0 or 1 (`false` or `true` on the command line).
    Flag,
    /// A whole number from `min` to `max`.
    Int { min: u32, max: u32 },
    /// A finite number from `min` to `max`.
    Real { min: f64, max: f64 },
}

/// The largest count a whole-number parameter (samples, k, probes, ...) takes.
pub const MAX_COUNT: u32 = 1_000_000;

impl Param {
    /// A flag, off or on by default.
    pub const fn flag(name: &'static str, default: bool) -> Self {
        Self {
            name,
            default: if default { 1.0 } else { 0.0 },
            kind: Kind::Flag,
        }
    }

    /// A whole number from `min` to `max`.
    pub const fn int(name: &'static str, default: u32, min: u32, max: u32) -> Self {
        assert!(min <= default && default <= max);
        Self {
            name,
            default: default as f64,
            kind: Kind::Int { min, max },
        }
    }

    /// A count: a whole number from 1 to [`MAX_COUNT`].
    pub const fn count(name: &'static str, default: u32) -> Self {
        Self::int(name, default, 1, MAX_COUNT)
    }

    /// A finite number from `min` to `max`.
    pub const fn real(name: &'static str, default: f64, min: f64, max: f64) -> Self {
        assert!(min <= default && default <= max);
        Self {
            name,
            default,
            kind: Kind::Real { min, max },
        }
    }

    /// Whether `value` is one of the parameter's values; the error says which values it takes.
    pub fn check(&self, value: f64) -> Result<(), String> {
        let ok = match self.kind {
            Kind::Flag => value == 0.0 || value == 1.0,
            Kind::Int { min, max } => {
                value.fract() == 0.0 && value >= f64::from(min) && value <= f64::from(max)
            }
            Kind::Real { min, max } => value.is_finite() && value >= min && value <= max,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{} is {}, got {value}", self.name, self.kind))
        }
    }
}

impl std::fmt::Display for Kind {
    /// The values, as the help and the errors say them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Kind::Flag => write!(f, "0 or 1"),
            Kind::Int { min, max } => write!(f, "a whole number from {min} to {max}"),
            Kind::Real { min, max } if max == f64::MAX => write!(f, "a number from {min}"),
            Kind::Real { min, max } => write!(f, "a number from {min} to {max}"),
        }
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
    /// The parameter `name`, of the kind `kind` names. Panics if the policy has no such
    /// parameter or it is of another kind: a slip in [`POLICIES`], which its tests find by
    /// building every policy.
    fn value(&self, name: &str, kind: &str, is: fn(Kind) -> bool) -> f64 {
        let entry = self.0.entry;
        match entry.params.iter().position(|p| p.name == name) {
            Some(i) if is(entry.params[i].kind) => self.0.values[i],
            Some(_) => panic!("parameter {name:?} of policy {} is not {kind}", entry.name),
            None => panic!("policy {} has no parameter {name:?}", entry.name),
        }
    }

    /// The flag `name`.
    pub fn flag(&self, name: &str) -> bool {
        self.value(name, "a flag", |k| matches!(k, Kind::Flag)) != 0.0
    }

    /// The whole-number parameter `name`.
    pub fn int(&self, name: &str) -> u32 {
        self.value(name, "a whole number", |k| matches!(k, Kind::Int { .. })) as u32
    }

    /// The real parameter `name`.
    pub fn real(&self, name: &str) -> f64 {
        self.value(name, "a real number", |k| matches!(k, Kind::Real { .. }))
    }

    /// The spec itself, for the constructors that read it whole (`HorusParams::of`, ...).
    pub fn spec(&self) -> &PolicySpec {
        self.0
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

    /// Sets parameter `name`; an error naming the policy's parameters if it has no such one, or
    /// the values the parameter takes if `value` is not one of them.
    pub fn set_param(&mut self, name: &str, value: f64) -> anyhow::Result<()> {
        match self.entry.params.iter().position(|p| p.name == name) {
            Some(i) => {
                let param = &self.entry.params[i];
                param
                    .check(value)
                    .map_err(|e| anyhow::anyhow!("policy {}: {e}", self.name()))?;
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

    /// Checks the parameters together ([`PolicyEntry::check`]); each one alone is checked when
    /// set.
    pub fn check(&self) -> anyhow::Result<()> {
        (self.entry.check)(self)
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
        assert!(p.samples_8 && !p.avg_16_16 && p.control_plane_tables && p.repair_deadline);
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
    fn a_value_outside_its_parameters_kind_is_refused_and_changes_nothing() {
        let mut spec = PolicySpec::named("rain").unwrap();
        let before = spec.clone();
        for (name, bad, takes) in [
            ("k", 2.5, "a whole number from 1 to 1000000"),
            ("k", 0.0, "a whole number from 1 to 1000000"),
            ("samples", 1e7, "a whole number from 1 to 1000000"),
            ("sliced", 2.0, "0 or 1"),
            ("sliced", 0.5, "0 or 1"),
            ("ratio", 1.5, "a number from 0 to 1"),
            ("ratio", f64::NAN, "a number from 0 to 1"),
            ("slowdown", f64::INFINITY, "a number from 1"),
            ("interval_us", 0.5, "a number from 1"),
        ] {
            let e = spec.set_param(name, bad).unwrap_err().to_string();
            assert_eq!(e, format!("policy rain: {name} is {takes}, got {bad}"));
        }
        assert_eq!(spec, before);
        // The ends of each range are values.
        for (name, ok) in [("k", 1.0), ("k_max", 1e6), ("sliced", 0.0), ("ratio", 1.0)] {
            spec.set_param(name, ok).unwrap();
        }
        // What the kinds cannot say is the entry's check.
        spec.set_param("k", 9.0).unwrap();
        spec.set_param("k_max", 8.0).unwrap();
        let e = spec.check().unwrap_err().to_string();
        assert!(e.contains("k <= k_max"), "{e}");
        // A configuration file's values go through the same door.
        let e = serde_json::from_str::<PolicySpec>(r#"{"name": "jbsq", "weighted": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("weighted is 0 or 1, got 3"), "{e}");
    }

    #[test]
    fn every_parameter_is_read_as_its_kind() {
        let jsq = PolicySpec::named("jsq").unwrap();
        assert!(!Params(&jsq).flag("weighted"));
        let panics = |f: fn(&PolicySpec)| std::panic::catch_unwind(|| f(&jsq)).is_err();
        assert!(panics(|s| {
            Params(s).int("weighted");
        }));
        assert!(panics(|s| {
            Params(s).flag("nosuch");
        }));
        for entry in POLICIES {
            for p in entry.params {
                assert_eq!(p.check(p.default), Ok(()), "{} {}", entry.name, p.name);
            }
        }
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
