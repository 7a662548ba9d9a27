//! Task service times and the offered load over time.
//!
//! Service-time distributions live in `horus_workload::service` (shared with the endpoints) and
//! are re-exported here.
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

pub use horus_workload::service::{MAX_TRACE_US, ServiceTime, WORKLOADS, round_nanos};

const US: f64 = 1_000.0;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

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
