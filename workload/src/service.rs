//! Task service-time distributions (all times in microseconds in the names, nanoseconds in the
//! code), the same for the simulator's runs and the endpoints' clients and workers:
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

use crate::rng::SimRng;
use anyhow::{Context, ensure};
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use serde::{Deserialize, Serialize};

/// Time in nanoseconds.
pub type Nanos = u64;

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

/// `x.round() as Nanos`, exactly (halves away from zero, saturating), without the call to libm's
/// `round` that `f64::round` compiles to on x86-64 without SSE4.1: the truncation and the
/// fraction it left are exact below 2^53, and above it `x` is a whole number.
#[inline]
pub fn round_nanos(x: f64) -> Nanos {
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
}
