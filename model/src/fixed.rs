//! Fixed-point load values and the rack average (paper §A.2).
//!
//! # Load format: unsigned 16.16
//!
//! Every value in a load list or a drift list, at the leaf and at the spine, is a [`Load`]: an
//! unsigned 32-bit number with 16 integer and 16 fraction bits (`1.0 == 0x0001_0000`). A leaf stores
//! worker queue lengths, which are integers (the fraction is always zero); a spine stores rack
//! averages, which are not. Using one format for both lets one scheduler core serve both roles: a
//! node's *additive factor* is what one task adds to its load, `1.0` for a worker, `1/w` for a rack
//! of `w` workers. All arithmetic saturates at `0` and at [`Load::MAX`]; it never wraps.
//!
//! On the wire a load travels in two 16-bit header fields: `qlen` carries the integer part and
//! `seq_num` the fraction (see [`Load::to_wire`]). A peer that reads only `qlen`, as the public
//! Horus spine does, sees the integer part.
//!
//! # Additive factor: `round(2^16 / w)`
//!
//! At the spine, a rack of `w` workers (1 ≤ w ≤ 4096) has the additive factor
//! [`Load::additive_factor`]`(w) = round(2^16 / w)` in 16.16, which is exact for powers of two and
//! at most 2^-17 off 1/w otherwise; for w = 4096 it is 16 (exactly 1/4096).
//!
//! # Rack average: 32.32 accumulator, `round(2^32 / w)` unit
//!
//! The leaf keeps, per pool, the average queue length of the pool's `w` workers in its rack as a
//! [`RackAverage`]: a 64-bit accumulator with 32 fraction bits, to which each new task adds the unit
//! `u = round(2^32 / w)` and from which each finished task subtracts it. Increments and decrements
//! are exact integer operations, so `k` increments followed by `k` decrements return exactly to the
//! start. After a net `k` tasks the accumulator holds `k·u`, while the true mean is `k/w`:
//!
//! ```text
//! |value - k/w| <= k · 2^-33            (|u - 2^32/w| <= 1/2)
//! ```
//!
//! and the 16.16 value reported to the spine ([`RackAverage::load`], truncated) is below the
//! accumulator by less than 2^-16. For w ≤ 4096 and a mean queue of m tasks (k = m·w) the error of
//! the accumulator is at most `m · 2^-21`, e.g. under 0.0005 for m = 1000.

use std::fmt;

/// A load or drift value in unsigned 16.16 fixed point. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Load(pub u32);

/// Number of fraction bits of a [`Load`].
pub const LOAD_FRAC_BITS: u32 = 16;
/// Largest worker count per pool and rack that the additive factor is specified for.
pub const MAX_WORKERS: u32 = 4096;

impl Load {
    pub const ZERO: Load = Load(0);
    pub const ONE: Load = Load(1 << LOAD_FRAC_BITS);
    pub const MAX: Load = Load(u32::MAX);

    /// An integer number of tasks, saturating at the largest integer part (65535).
    pub fn from_tasks(tasks: u16) -> Load {
        Load(u32::from(tasks) << LOAD_FRAC_BITS)
    }

    /// The additive factor of a node standing for `workers` workers: `round(2^16 / workers)`.
    /// `workers` must be in `1..=4096` (checked by the configuration); 0 is treated as 1.
    pub fn additive_factor(workers: u32) -> Load {
        let w = workers.max(1);
        Load(((1u32 << LOAD_FRAC_BITS) + w / 2) / w)
    }

    pub fn saturating_add(self, rhs: Load) -> Load {
        Load(self.0.saturating_add(rhs.0))
    }

    pub fn saturating_sub(self, rhs: Load) -> Load {
        Load(self.0.saturating_sub(rhs.0))
    }

    /// Integer part (truncated).
    pub fn integer(self) -> u16 {
        (self.0 >> LOAD_FRAC_BITS) as u16
    }

    /// Fraction part, in units of 2^-16.
    pub fn fraction(self) -> u16 {
        self.0 as u16
    }

    /// The two header fields that carry this load: (`qlen`, `seq_num`) = (integer, fraction).
    pub fn to_wire(self) -> (u16, u16) {
        (self.integer(), self.fraction())
    }

    pub fn from_wire(qlen: u16, seq_num: u16) -> Load {
        Load((u32::from(qlen) << LOAD_FRAC_BITS) | u32::from(seq_num))
    }

    pub fn to_f64(self) -> f64 {
        f64::from(self.0) / f64::from(1u32 << LOAD_FRAC_BITS)
    }

    /// The nearest load to `x`, saturating; `None` if `x` is not finite or negative.
    pub fn from_f64(x: f64) -> Option<Load> {
        if !x.is_finite() || x < 0.0 {
            return None;
        }
        let raw = (x * f64::from(1u32 << LOAD_FRAC_BITS)).round();
        Some(Load(if raw >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            raw as u32
        }))
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.5}", self.to_f64())
    }
}

/// A drift value: signed 16.16, two's complement, saturating at the ends of the 32-bit range.
///
/// Drift counts the tasks sent to a node since its load was last set. It is signed so that a
/// resubmitted pass can move the drift it *saw* into the load (`drift -= seen; load += seen`) even
/// when other passes changed the drift in between: `load + drift` is then conserved exactly under
/// any interleaving of task passes, which clamping at zero would not give. It saturates at
/// ±32768 tasks rather than wrap. See `docs/algorithm.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Drift(pub i32);

impl Drift {
    pub const ZERO: Drift = Drift(0);

    /// Adds a load step (an additive factor). Saturates: a node that never replies must not wrap
    /// to a negative drift and look empty.
    pub fn plus(self, step: Load) -> Drift {
        Drift(
            self.0
                .saturating_add(i32::try_from(step.0).unwrap_or(i32::MAX)),
        )
    }

    /// Subtracts a drift seen earlier, saturating.
    pub fn minus(self, seen: Drift) -> Drift {
        Drift(self.0.saturating_sub(seen.0))
    }

    /// Whether this drift is at most `diff`: the lazy check of Algorithm 2 (signed compare).
    pub fn at_most(self, diff: Load) -> bool {
        i64::from(self.0) <= i64::from(diff.0)
    }
}

impl Load {
    /// `self + d`, clamped to `[0, Load::MAX]`: a node's queue from its load and drift.
    pub fn corrected(self, d: Drift) -> Load {
        Load((i64::from(self.0) + i64::from(d.0)).clamp(0, i64::from(u32::MAX)) as u32)
    }
}

/// Fraction bits of the [`RackAverage`] accumulator.
pub const AVG_FRAC_BITS: u32 = 32;

/// The per-pool average load of a leaf's workers (paper §A.2), kept by adding and subtracting an
/// additive unit. See the [module docs](self) for the format and its error bound.
///
/// The accumulator, the average in 32.32 fixed point, is `acc = tasks · unit`, with the number of
/// outstanding tasks kept so that a change of the worker count can rescale it exactly with a
/// multiplication, which a control pass can do; the switch keeps `acc` in its entry and traffic
/// passes only add and subtract `unit`. The model keeps the two factors and multiplies when it
/// reads the accumulator ([`RackAverage::acc`]): the same value, in less memory.
///
/// Packed to 4-byte alignment (12 bytes, not 16) so that a leaf's per-pool row, which holds it,
/// fits one cache line (`sched::state::PoolRow`); the compiler refuses references to its
/// 8-byte fields, and x86 loads them at full speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C, packed(4))]
pub struct RackAverage {
    /// What one task adds: `round(2^32 / workers)`; 0 while the pool has no workers.
    pub unit: u64,
    /// Tasks started and not yet finished, as far as the leaf knows.
    pub tasks: u32,
}

impl RackAverage {
    /// The Tofino profile's unit for `workers` workers: a Tofino switch keeps the average in a
    /// 32-bit register as 16.16 and adds `round(2^16 / workers)`; in this 32.32 accumulator that
    /// is the same value shifted up, so the level the report rule reads is the switch's register
    /// exactly (0 for an empty pool).
    pub fn unit_for_16_16(workers: u32) -> u64 {
        if workers == 0 {
            0
        } else {
            let w = u64::from(workers);
            (((1u64 << LOAD_FRAC_BITS) + w / 2) / w) << (AVG_FRAC_BITS - LOAD_FRAC_BITS)
        }
    }

    /// The additive unit for `workers` workers (0 for an empty pool).
    pub fn unit_for(workers: u32) -> u64 {
        if workers == 0 {
            0
        } else {
            let w = u64::from(workers);
            ((1u64 << AVG_FRAC_BITS) + w / 2) / w
        }
    }

    pub fn new(workers: u32) -> RackAverage {
        RackAverage {
            unit: Self::unit_for(workers),
            tasks: 0,
        }
    }

    /// The accumulator: the average in 32.32 fixed point, `tasks · unit` (below 2^64: `unit`
    /// is at most 2^32 and `tasks` below it).
    #[inline]
    pub fn acc(&self) -> u64 {
        u64::from(self.tasks) * self.unit
    }

    /// A task was sent to one of the pool's workers: the accumulator gains `unit`. Returns
    /// whether it did: the count saturates at `u32::MAX` (and the accumulator with it).
    pub fn task_started(&mut self) -> bool {
        let more = self.tasks < u32::MAX;
        if more {
            self.tasks += 1;
        }
        more
    }

    /// A worker of the pool finished a task. Nothing happens at zero: replies for tasks the leaf
    /// never counted (lost state, a restarted leaf) must not wrap the average.
    pub fn task_finished(&mut self) {
        if self.tasks > 0 {
            self.tasks -= 1;
        }
    }

    /// The worker count changed, and with it the unit (`unit_for(workers)`, computed by the
    /// control plane), while `removed_tasks` tasks left with a removed worker: keep the other
    /// outstanding tasks and spread them over the new count. A pool left without workers forgets
    /// its tasks.
    pub fn rescale(&mut self, unit: u64, removed_tasks: u32) {
        self.tasks = if unit == 0 {
            0
        } else {
            self.tasks.saturating_sub(removed_tasks)
        };
        self.unit = unit;
    }

    /// The average truncated to 16.16 without saturation (up to 48 bits): what the load-report
    /// rule compares (`docs/algorithm.md`, decision 7).
    pub fn level(&self) -> u64 {
        self.acc() >> (AVG_FRAC_BITS - LOAD_FRAC_BITS)
    }

    /// The value reported to the spine: the accumulator truncated to 16.16, saturating.
    pub fn load(&self) -> Load {
        Load(u32::try_from(self.level()).unwrap_or(u32::MAX))
    }

    pub fn to_f64(&self) -> f64 {
        self.acc() as f64 / (1u64 << AVG_FRAC_BITS) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additive_factor_matches_the_paper_example_for_eight_workers() {
        // §A.2: 8 workers -> 0x00002000 in 16.16.
        assert_eq!(Load::additive_factor(8), Load(0x2000));
        assert_eq!(Load::additive_factor(1), Load::ONE);
        assert_eq!(Load::additive_factor(4096), Load(16));
    }

    #[test]
    fn eleven_tasks_over_eight_workers_is_one_and_three_eighths() {
        // §A.2: 11 tasks on 8 workers -> 0x00016000.
        let mut avg = RackAverage::new(8);
        for _ in 0..11 {
            avg.task_started();
        }
        assert_eq!(avg.load(), Load(0x0001_6000));
    }

    #[test]
    fn wire_split_round_trips() {
        let l = Load(0x1234_5678);
        let (q, s) = l.to_wire();
        assert_eq!((q, s), (0x1234, 0x5678));
        assert_eq!(Load::from_wire(q, s), l);
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Load::MAX.saturating_add(Load::ONE), Load::MAX);
        assert_eq!(Load::ZERO.saturating_sub(Load::ONE), Load::ZERO);
        let mut avg = RackAverage::new(3);
        avg.task_finished();
        assert_eq!((avg.acc(), avg.tasks), (0, 0));
    }

    #[test]
    fn rescale_keeps_outstanding_tasks_and_drops_the_removed_workers_tasks() {
        let mut avg = RackAverage::new(4);
        for _ in 0..8 {
            avg.task_started();
        }
        // 8 tasks on 4 workers; a worker holding 2 leaves: 6 tasks on 3 workers = 2.0.
        avg.rescale(RackAverage::unit_for(3), 2);
        assert_eq!((avg.tasks, avg.acc()), (6, 6 * avg.unit));
        assert!(
            (avg.to_f64() - 2.0).abs() <= 6.0 * 2f64.powi(-33),
            "{}",
            avg.to_f64()
        );
        avg.rescale(RackAverage::unit_for(0), 0);
        assert_eq!(
            (avg.acc(), avg.unit, avg.tasks),
            (0, 0, 0),
            "an empty pool forgets its tasks"
        );
    }
}
