//! Task service times and the offered load over time.
//!
//! Service-time distributions (all times in microseconds in the names, nanoseconds in the code):
//! - `exp`: exponential, mean 100 us (Horus §5.1).
//! - `bimodal`: 50 % 50 us, 50 % 500 us (Horus §5.1).
//! - `trimodal`: 1/3 each 50, 500, 5,000 us (Horus §5.1; the middle mode is lost in our copy of
//!   the paper's text, the authors' simulator has it).
//! - `rocksdb-50-50` / `rocksdb-90-10`: RocksDB GET / SCAN mixes of the testbed (Horus §4.1); a GET
//!   takes 40 us and a SCAN 650 us, the medians reported there. We have no published spread around
//!   those medians, so each request type is a constant.
//! - `tpcc`: TPC-C transactions of 21.6, 22.68, 71.28, 332.64, 378 us at 44/4/44/4/4 % (Horus §4.1,
//!   as in RackSched).
//! - `exp20`: exponential, mean 20 us (Malcolm §7, its light workload).
//! - `hyperexp`: hyperexponential, 95 % exponential of mean 20 us and 5 % of mean 400 us, mean
//!   39 us (Malcolm §7, `HyperExp(95:20, 5:400)`).
//! - a trace: one service time in microseconds per line, drawn uniformly at random.
//!
//! Arrivals are Poisson per pool at rate `load x workers / mean service time`, load being a fraction
//! of the pool's capacity, constant or piecewise constant over time; or, with [`Bursts`], a
//! two-state Markov-modulated Poisson process of the same mean rate.

use crate::queue::Nanos;
use crate::rng::SimRng;
use anyhow::{Context, ensure};
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use serde::{Deserialize, Serialize};

const US: f64 = 1_000.0;

/// The longest service time a trace may give, in microseconds (1,000 s): far beyond any task this
/// simulator is for, and short enough that times in nanoseconds, and their sums, stay exact.
pub const MAX_TRACE_US: f64 = 1e9;

/// A service-time distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ServiceTime {
    Exponential {
        mean_ns: f64,
    },
    /// Constant values (ns) with probabilities summing to 1.
    Discrete {
        values_ns: Vec<u64>,
        probs: Vec<f64>,
    },
    /// Samples drawn uniformly from a trace (ns).
    Trace {
        values_ns: Vec<u64>,
    },
    /// Exponential of mean `means_ns[i]` with probability `probs[i]` (summing to 1).
    HyperExponential {
        means_ns: Vec<f64>,
        probs: Vec<f64>,
    },
}

/// The named workloads the command line accepts.
pub const WORKLOADS: &[&str] = &[
    "exp",
    "bimodal",
    "trimodal",
    "rocksdb-50-50",
    "rocksdb-90-10",
    "tpcc",
    "exp20",
    "hyperexp",
];

impl ServiceTime {
    /// A named workload from [`WORKLOADS`], or `trace:PATH`.
    pub fn named(name: &str) -> anyhow::Result<Self> {
        let d = |pairs: &[(f64, f64)]| ServiceTime::Discrete {
            values_ns: pairs
                .iter()
                .map(|(us, _)| (us * US).round() as u64)
                .collect(),
            probs: pairs.iter().map(|(_, p)| *p).collect(),
        };
        Ok(match name {
            "exp" => ServiceTime::Exponential {
                mean_ns: 100.0 * US,
            },
            "exp20" => ServiceTime::Exponential { mean_ns: 20.0 * US },
            "hyperexp" => ServiceTime::HyperExponential {
                means_ns: vec![20.0 * US, 400.0 * US],
                probs: vec![0.95, 0.05],
            },
            "bimodal" => d(&[(50.0, 0.5), (500.0, 0.5)]),
            "trimodal" => d(&[(50.0, 1.0 / 3.0), (500.0, 1.0 / 3.0), (5000.0, 1.0 / 3.0)]),
            "rocksdb-50-50" => d(&[(40.0, 0.5), (650.0, 0.5)]),
            "rocksdb-90-10" => d(&[(40.0, 0.9), (650.0, 0.1)]),
            "tpcc" => d(&[
                (21.6, 0.44),
                (22.68, 0.04),
                (71.28, 0.44),
                (332.64, 0.04),
                (378.0, 0.04),
            ]),
            _ => match name.strip_prefix("trace:") {
                Some(path) => Self::read_trace(
                    &std::fs::read_to_string(path)
                        .with_context(|| format!("reading trace {path}"))?,
                )?,
                None => anyhow::bail!(
                    "unknown workload {name:?}; known: {} or trace:PATH",
                    WORKLOADS.join(", ")
                ),
            },
        })
    }

    /// Parses a trace: one service time in microseconds per line (at most [`MAX_TRACE_US`]);
    /// blank lines and `#` comments skipped.
    pub fn read_trace(text: &str) -> anyhow::Result<Self> {
        let mut values_ns = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let us: f64 = line
                .parse()
                .with_context(|| format!("trace line {}: {line:?} is not a number", i + 1))?;
            ensure!(
                us.is_finite() && us > 0.0,
                "trace line {}: service time must be positive, got {us}",
                i + 1
            );
            ensure!(
                us <= MAX_TRACE_US,
                "trace line {}: service time {line} us is over the limit of {MAX_TRACE_US:e} us",
                i + 1
            );
            values_ns.push((us * US).round().max(1.0) as u64);
        }
        ensure!(!values_ns.is_empty(), "trace has no service times");
        Ok(ServiceTime::Trace { values_ns })
    }

    pub fn mean_ns(&self) -> f64 {
        match self {
            ServiceTime::Exponential { mean_ns } => *mean_ns,
            ServiceTime::Discrete { values_ns, probs } => values_ns
                .iter()
                .zip(probs)
                .map(|(&v, p)| v as f64 * p)
                .sum(),
            ServiceTime::Trace { values_ns } => {
                values_ns.iter().map(|&v| u128::from(v)).sum::<u128>() as f64
                    / values_ns.len() as f64
            }
            ServiceTime::HyperExponential { means_ns, probs } => {
                means_ns.iter().zip(probs).map(|(m, p)| m * p).sum()
            }
        }
    }

    /// One service time, at least 1 ns so that every task occupies its worker.
    pub fn sample(&self, rng: &mut SimRng) -> Nanos {
        self.sample_kind(rng).0
    }

    /// One service time and the task's type: the component of the distribution it was drawn
    /// from (a `Discrete` value's or a `HyperExponential` branch's index: a RocksDB GET is 0, a
    /// SCAN 1), 0 for a distribution of one component. The same draws as [`ServiceTime::sample`].
    pub fn sample_kind(&self, rng: &mut SimRng) -> (Nanos, u8) {
        match self {
            ServiceTime::Exponential { mean_ns } => {
                let x: f64 = Exp1.sample(rng);
                (round_nanos(x * mean_ns).max(1), 0)
            }
            ServiceTime::Discrete { values_ns, probs } => {
                let i = branch(probs, rng.random());
                (values_ns[i], kind(i))
            }
            ServiceTime::Trace { values_ns } => {
                (values_ns[rng.random_range(0..values_ns.len())], 0)
            }
            ServiceTime::HyperExponential { means_ns, probs } => {
                // The branch, then an exponential of its mean.
                let i = branch(probs, rng.random());
                let x: f64 = Exp1.sample(rng);
                (round_nanos(x * means_ns[i]).max(1), kind(i))
            }
        }
    }

    /// The task types [`ServiceTime::sample_kind`] gives, in order: each one's probability and
    /// mean service time in ns.
    pub fn kinds(&self) -> Vec<(f64, f64)> {
        match self {
            ServiceTime::Discrete { values_ns, probs } => values_ns
                .iter()
                .zip(probs)
                .map(|(&v, &p)| (p, v as f64))
                .collect(),
            ServiceTime::HyperExponential { means_ns, probs } => probs
                .iter()
                .copied()
                .zip(means_ns.iter().copied())
                .collect(),
            ServiceTime::Exponential { .. } | ServiceTime::Trace { .. } => {
                vec![(1.0, self.mean_ns())]
            }
        }
    }
}

/// The component a uniform draw `u` in [0, 1) falls in, for probabilities summing to 1 (the last
/// one when rounding leaves `u` beyond them all).
fn branch(probs: &[f64], mut u: f64) -> usize {
    for (i, p) in probs.iter().enumerate() {
        if u < *p {
            return i;
        }
        u -= p;
    }
    probs.len() - 1
}

/// A component's index as a task type (the named workloads have at most five).
fn kind(i: usize) -> u8 {
    u8::try_from(i).unwrap_or(u8::MAX)
}

/// Offered load as a fraction of each pool's capacity: `[(from_ns, load), ...]`, the first entry
/// starting at 0. A single entry is a constant load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadSchedule {
    pub steps: Vec<(Nanos, f64)>,
}

impl LoadSchedule {
    pub fn constant(load: f64) -> Self {
        Self {
            steps: vec![(0, load)],
        }
    }

    /// Parses `0.5` or `0:0.5,20:0.9` (times in milliseconds).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        if let Ok(load) = text.trim().parse::<f64>() {
            let s = Self::constant(load);
            s.validate()?;
            return Ok(s);
        }
        let mut steps = Vec::new();
        for part in text.split(',') {
            let (ms, load) = part
                .split_once(':')
                .with_context(|| format!("load step {part:?} is not MS:LOAD"))?;
            let ms: f64 = ms
                .trim()
                .parse()
                .with_context(|| format!("bad time in {part:?}"))?;
            ensure!(
                ms.is_finite() && ms >= 0.0,
                "the time in load step {part:?} must be a non-negative number of milliseconds"
            );
            let load: f64 = load
                .trim()
                .parse()
                .with_context(|| format!("bad load in {part:?}"))?;
            steps.push(((ms * 1e6).round() as Nanos, load));
        }
        let s = Self { steps };
        s.validate()?;
        Ok(s)
    }

    /// Checks the steps: the first at time 0, times increasing, loads finite and non-negative.
    pub fn validate(&self) -> anyhow::Result<()> {
        ensure!(
            self.steps.first().is_some_and(|s| s.0 == 0),
            "the load schedule must start at time 0"
        );
        ensure!(
            self.steps.windows(2).all(|w| w[0].0 < w[1].0),
            "load steps must be in increasing time order"
        );
        ensure!(
            self.steps.iter().all(|s| s.1.is_finite() && s.1 >= 0.0),
            "loads must be non-negative"
        );
        Ok(())
    }

    /// The load in force at `t` and when it next changes.
    fn at(&self, t: Nanos) -> (f64, Option<Nanos>) {
        let i = self.steps.partition_point(|s| s.0 <= t) - 1;
        (self.steps[i].1, self.steps.get(i + 1).map(|s| s.0))
    }

    /// The time-weighted mean load over `[0, end)`.
    pub fn mean_until(&self, end: Nanos) -> f64 {
        let mut sum = 0.0;
        for (i, &(t, load)) in self.steps.iter().enumerate() {
            let stop = self.steps.get(i + 1).map_or(end, |s| s.0.min(end));
            if stop > t {
                sum += load * (stop - t) as f64;
            }
        }
        sum / end.max(1) as f64
    }

    /// The next arrival after `now` of a Poisson process whose rate is `load(t) x capacity_per_ns`.
    /// The exponential gap is memoryless, so when a step boundary comes first the draw restarts
    /// there with the new rate: the result is the exact piecewise-constant Poisson process.
    pub fn next_arrival(
        &self,
        now: Nanos,
        capacity_per_ns: f64,
        rng: &mut SimRng,
        mut bursts: Option<(&Bursts, &mut BurstState)>,
    ) -> Option<Nanos> {
        let mut t = now;
        loop {
            let (load, change) = self.at(t);
            // The burst state in force at `t`, its rate factor and when it flips.
            let (factor, flip) = match bursts.as_mut() {
                Some((b, state)) => {
                    while state.until <= t {
                        state.flip(b, rng);
                    }
                    (b.factor(state.high), Some(state.until))
                }
                None => (1.0, None),
            };
            let rate = load * capacity_per_ns * factor;
            let gap: f64 = Exp1.sample(rng);
            let candidate = if rate > 0.0 {
                t as f64 + gap / rate
            } else {
                f64::INFINITY
            };
            // The rate holds until the load or the burst state next changes; past that point
            // the draw starts again from it (the exponential forgets).
            let next = match (change, flip) {
                (Some(c), Some(f)) => Some(c.min(f)),
                (c, f) => c.or(f),
            };
            match next {
                // No load from here on: bursts of nothing never end.
                _ if load == 0.0 && change.is_none() => return None,
                Some(c) if candidate >= c as f64 => t = c,
                _ if candidate.is_finite() => return Some(round_nanos(candidate).max(now)),
                _ => return None,
            }
        }
    }
}

/// Bursty arrivals: each pool's arrivals alternate between a high and a low state, each lasting
/// an exponential time of its mean, the rate in the high state `ratio` times that in the low one,
/// and both set so that the mean rate is the load's (a two-state Markov-modulated Poisson
/// process).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bursts {
    pub ratio: f64,
    pub high_ns: Nanos,
    pub low_ns: Nanos,
}

impl Bursts {
    /// Parses `RATIO:HIGH_US:LOW_US`, e.g. `10:200:1800` (bursts of ten times the low rate,
    /// 200 us long on average, every 2 ms on average).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let parts: Vec<&str> = text.split(':').collect();
        ensure!(
            parts.len() == 3,
            "bursts must look like RATIO:HIGH_US:LOW_US, got {text:?}"
        );
        let num = |s: &str, what: &str| -> anyhow::Result<f64> {
            s.trim()
                .parse::<f64>()
                .with_context(|| format!("bad {what} in bursts {text:?}"))
        };
        let b = Self {
            ratio: num(parts[0], "ratio")?,
            high_ns: (num(parts[1], "high time")? * US).round() as Nanos,
            low_ns: (num(parts[2], "low time")? * US).round() as Nanos,
        };
        b.validate()?;
        Ok(b)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        ensure!(
            self.ratio.is_finite() && self.ratio >= 1.0,
            "the bursts' rate ratio must be at least 1, got {}",
            self.ratio
        );
        ensure!(
            self.high_ns > 0 && self.low_ns > 0,
            "the bursts' mean high and low times must be positive"
        );
        Ok(())
    }

    /// The share of time in the high state.
    pub fn high_share(&self) -> f64 {
        self.high_ns as f64 / (self.high_ns + self.low_ns) as f64
    }

    /// The rate in a state as a multiple of the mean rate: `ratio x f` high and `f` low, with
    /// `share x ratio x f + (1 - share) x f = 1`.
    pub fn factor(&self, high: bool) -> f64 {
        let share = self.high_share();
        let low = 1.0 / (share * self.ratio + 1.0 - share);
        if high { self.ratio * low } else { low }
    }
}

/// One pool's burst state: high or low, until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BurstState {
    pub high: bool,
    pub until: Nanos,
}

impl BurstState {
    /// A state at time 0 drawn from the process's stationary distribution.
    pub fn start(b: &Bursts, rng: &mut SimRng) -> Self {
        let high = rng.random::<f64>() < b.high_share();
        let mut s = Self { high, until: 0 };
        s.until = s.dwell(b, rng);
        s
    }

    fn dwell(&self, b: &Bursts, rng: &mut SimRng) -> Nanos {
        let mean = if self.high { b.high_ns } else { b.low_ns } as f64;
        let x: f64 = Exp1.sample(rng);
        round_nanos(x * mean).max(1)
    }

    fn flip(&mut self, b: &Bursts, rng: &mut SimRng) {
        self.high = !self.high;
        self.until += self.dwell(b, rng);
    }
}

/// `x.round() as Nanos`, exactly (halves away from zero, saturating), without the call to libm's
/// `round` that `f64::round` compiles to on x86-64 without SSE4.1: the truncation and the
/// fraction it left are exact below 2^53, and above it `x` is a whole number.
#[inline]
fn round_nanos(x: f64) -> Nanos {
    let whole = x as Nanos;
    if x - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

    #[test]
    fn a_tasks_type_is_the_component_it_was_drawn_from() {
        for name in WORKLOADS {
            let w = ServiceTime::named(name).unwrap();
            let kinds = w.kinds();
            assert!((kinds.iter().map(|k| k.0).sum::<f64>() - 1.0).abs() < 1e-12);
            let mean: f64 = kinds.iter().map(|(p, m)| p * m).sum();
            assert!((mean / w.mean_ns() - 1.0).abs() < 1e-12, "{name}");
            // The same draws as `sample`, and each type as often as its probability, with its
            // own mean.
            let (mut a, mut b) = (
                stream(7, Stream::Workload, 1),
                stream(7, Stream::Workload, 1),
            );
            let n = 200_000;
            let mut count = vec![0u64; kinds.len()];
            let mut sum = vec![0f64; kinds.len()];
            for _ in 0..n {
                let (t, k) = w.sample_kind(&mut a);
                assert_eq!(t, w.sample(&mut b));
                count[k as usize] += 1;
                sum[k as usize] += t as f64;
                if let ServiceTime::Discrete { values_ns, .. } = &w {
                    assert_eq!(t, values_ns[k as usize]);
                }
            }
            for (i, &(p, m)) in kinds.iter().enumerate() {
                let share = count[i] as f64 / n as f64;
                assert!(
                    (share - p).abs() < 0.01,
                    "{name} type {i}: {share} against {p}"
                );
                let got = sum[i] / count[i] as f64;
                assert!(
                    (got / m - 1.0).abs() < 0.05,
                    "{name} type {i}: mean {got} against {m}"
                );
            }
        }
    }

    #[test]
    fn round_nanos_is_round_as_integer() {
        let mut rng = stream(3, Stream::Workload, 0);
        let special = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.4,
            -0.6,
            -3.5,
            4503599627370495.5,
            9007199254740993.0,
            1.8446744073709552e19,
            3e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let random = (0..100_000).map(|i| {
            let x: f64 = rng.random::<f64>() * 10f64.powi(i % 20);
            if i % 7 == 0 { x.floor() + 0.5 } else { x }
        });
        for x in special.into_iter().chain(random) {
            assert_eq!(round_nanos(x), x.round() as Nanos, "{x}");
        }
    }

    #[test]
    fn sample_means_match_declared_means() {
        for name in WORKLOADS {
            let w = ServiceTime::named(name).unwrap();
            let mut rng = stream(1, Stream::Workload, 0);
            let n = 200_000;
            let mean = (0..n).map(|_| w.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            assert!(
                (mean / w.mean_ns() - 1.0).abs() < 0.02,
                "{name}: sample mean {mean} vs {}",
                w.mean_ns()
            );
        }
    }

    #[test]
    fn hyperexp_is_malcolms_mix_of_two_exponentials() {
        let w = ServiceTime::named("hyperexp").unwrap();
        assert!((w.mean_ns() - 39_000.0).abs() < 1e-6);
        // The mass above 100 us: 0.95 e^-5 + 0.05 e^-0.25 = 0.0446 (an exponential
        // of the same mean has e^(-100/39) = 0.077, a constant none).
        let mut rng = stream(5, Stream::Workload, 0);
        let n = 400_000;
        let over = (0..n).filter(|_| w.sample(&mut rng) > 100_000).count() as f64 / n as f64;
        let expected = 0.95 * (-5.0f64).exp() + 0.05 * (-0.25f64).exp();
        assert!((over - expected).abs() < 0.002, "{over} vs {expected}");
        let e = ServiceTime::named("exp20").unwrap();
        assert_eq!(e.mean_ns(), 20_000.0);
    }

    #[test]
    fn bursty_arrivals_keep_the_mean_rate_and_come_in_bursts() {
        let s = LoadSchedule::constant(0.5);
        let rate = 0.001; // capacity: one task per us, so 0.5 per us
        let b = Bursts::parse("10:200:1800").unwrap();
        assert!(
            (b.high_share() * b.factor(true) + (1.0 - b.high_share()) * b.factor(false) - 1.0)
                .abs()
                < 1e-12
        );
        assert!((b.factor(true) / b.factor(false) - 10.0).abs() < 1e-9);
        // Arrivals counted in 100 us windows over 2 s, with bursts and without.
        let counts = |bursts: Option<&Bursts>| {
            let mut rng = stream(4, Stream::Workload, 0);
            let mut state = bursts.map(|b| BurstState::start(b, &mut rng));
            let mut windows = vec![0u32; 20_000];
            let mut t = 0;
            while let Some(next) = s.next_arrival(t, rate, &mut rng, bursts.zip(state.as_mut())) {
                if next >= 2_000_000_000 {
                    break;
                }
                windows[(next / 100_000) as usize] += 1;
                t = next;
            }
            let n = windows.len() as f64;
            let mean = windows.iter().map(|&c| c as f64).sum::<f64>() / n;
            let var = windows
                .iter()
                .map(|&c| (c as f64 - mean).powi(2))
                .sum::<f64>()
                / n;
            (mean, var / mean)
        };
        let (mean, dispersion) = counts(Some(&b));
        assert!(
            (mean / 50.0 - 1.0).abs() < 0.03,
            "mean {mean} per window, not 50"
        );
        // Poisson: variance = mean; these bursts: many times that.
        assert!(dispersion > 5.0, "index of dispersion {dispersion}");
        let (mean, dispersion) = counts(None);
        assert!((mean / 50.0 - 1.0).abs() < 0.01, "mean {mean}");
        assert!(
            (dispersion - 1.0).abs() < 0.05,
            "Poisson dispersion {dispersion}"
        );
        // A rate ratio of 1 is Poisson.
        let flat = Bursts::parse("1:100:100").unwrap();
        assert_eq!(flat.factor(true), 1.0);
        assert_eq!(flat.factor(false), 1.0);
    }

    #[test]
    fn bursts_reject_bad_input() {
        assert!(Bursts::parse("10:200").is_err());
        assert!(Bursts::parse("0.5:200:1800").is_err());
        assert!(Bursts::parse("10:0:1800").is_err());
        assert!(Bursts::parse("x:1:1").is_err());
        // No load, no arrivals, even with bursts.
        let b = Bursts::parse("10:200:1800").unwrap();
        let mut rng = stream(4, Stream::Workload, 0);
        let mut state = BurstState::start(&b, &mut rng);
        assert_eq!(
            LoadSchedule::constant(0.0).next_arrival(0, 0.001, &mut rng, Some((&b, &mut state))),
            None
        );
    }

    #[test]
    fn tpcc_mean_is_the_weighted_sum_of_its_transactions() {
        let w = ServiceTime::named("tpcc").unwrap();
        let expected =
            (21.6 * 0.44 + 22.68 * 0.04 + 71.28 * 0.44 + 332.64 * 0.04 + 378.0 * 0.04) * 1000.0;
        assert!((w.mean_ns() - expected).abs() < 1.0);
    }

    #[test]
    fn trace_reader_accepts_comments_and_rejects_garbage() {
        assert_eq!(
            ServiceTime::read_trace("# us\n10\n\n2.5\n").unwrap(),
            ServiceTime::Trace {
                values_ns: vec![10_000, 2_500]
            }
        );
        assert!(
            ServiceTime::read_trace("10\nabc\n")
                .unwrap_err()
                .to_string()
                .contains("line 2")
        );
        assert!(ServiceTime::read_trace("-1\n").is_err());
        assert!(ServiceTime::read_trace("# nothing\n").is_err());
        // Beyond the limit (once saturated to u64::MAX nanoseconds, and wrapped in the mean).
        let e = ServiceTime::read_trace("1\n1e300\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("over the limit"), "{e}");
        // At the limit: accepted, the mean exact.
        let at_limit = format!("{MAX_TRACE_US}\n").repeat(20);
        let w = ServiceTime::read_trace(&at_limit).unwrap();
        assert_eq!(w.mean_ns(), MAX_TRACE_US * US);
    }

    #[test]
    fn poisson_arrivals_follow_the_load_schedule() {
        let s = LoadSchedule::parse("0:0.2,10:0.8").unwrap();
        let mut rng = stream(2, Stream::Workload, 0);
        let rate = 0.001; // capacity: one task per us
        let (mut t, mut before, mut after) = (0, 0u32, 0u32);
        while let Some(next) = s
            .next_arrival(t, rate, &mut rng, None)
            .filter(|&n| n < 20_000_000)
        {
            t = next;
            if t < 10_000_000 {
                before += 1
            } else {
                after += 1
            }
        }
        // Expected 2,000 and 8,000 arrivals; 5 % is about 4 standard deviations of the first.
        assert!((before as f64 / 2000.0 - 1.0).abs() < 0.1, "{before}");
        assert!((after as f64 / 8000.0 - 1.0).abs() < 0.05, "{after}");
        assert!((s.mean_until(20_000_000) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn load_schedule_rejects_bad_input() {
        assert!(LoadSchedule::parse("5:0.5").is_err());
        assert!(LoadSchedule::parse("0:0.5,0:0.6").is_err());
        assert!(LoadSchedule::parse("-0.1").is_err());
        assert_eq!(
            LoadSchedule::parse("0.7").unwrap(),
            LoadSchedule::constant(0.7)
        );
    }
}
