//! Where the FPGA pipeline's arithmetic and the Tofino program's differ, as flags a scheduler
//! follows (decisions T1 to T3 and T12 in `docs/algorithm.md`).

use crate::fixed::RackAverage;
use crate::rng::Xorshift64;

/// Whose arithmetic a scheduler follows where the FPGA pipeline and the Tofino program differ
/// (`docs/p4.md`; decisions T1 to T3 and T12 in `docs/algorithm.md`), one flag per difference so that
/// the simulator can price each: [`Profile::FPGA`] and [`Profile::TOFINO`] set all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// T1: two samples from 8-bit draws (a Tofino exact-match table of 256 entries a pool), not
    /// 32-bit ones.
    pub samples_8: bool,
    /// T2: the rack average in 16.16 with a unit of `round(2^16 / workers)`, not 32.32.
    pub avg_16_16: bool,
    /// T3: control passes do not run a leaf's link rule (a Tofino control plane writes the
    /// tables): pools start unlinked, and the pool's next packet pass links them.
    pub control_plane_tables: bool,
    /// T12: a repair is due when the time since the pool's last idle message, less the repair
    /// gap, is not negative as a signed 32-bit number (the Tofino cell keeps the earliest repair
    /// time), rather than when that time is at least the gap modulo 2^32.
    pub repair_deadline: bool,
}

impl Profile {
    /// The FPGA pipeline's.
    pub const FPGA: Profile = Profile {
        samples_8: false,
        avg_16_16: false,
        control_plane_tables: false,
        repair_deadline: false,
    };
    /// The Tofino program's.
    pub const TOFINO: Profile = Profile {
        samples_8: true,
        avg_16_16: true,
        control_plane_tables: true,
        repair_deadline: true,
    };

    /// The rack average's unit for `workers` workers.
    pub fn avg_unit(self, workers: u32) -> u64 {
        if self.avg_16_16 {
            RackAverage::unit_for_16_16(workers)
        } else {
            RackAverage::unit_for(workers)
        }
    }

    /// Whether a repair is due `since` microseconds (wrapping) after the pool's last idle
    /// message, with a gap of `gap` (decision 17; T12 with `repair_deadline`).
    #[inline]
    pub(super) fn repair_due(self, since: u32, gap: u16) -> bool {
        if self.repair_deadline {
            since.wrapping_sub(u32::from(gap)) as i32 >= 0
        } else {
            since >= u32::from(gap)
        }
    }

    /// The generator's step turned into two samples in `[0, n)`.
    #[inline]
    pub(super) fn samples(self, rng: &mut Xorshift64, n: u16) -> (u16, u16) {
        if self.samples_8 {
            rng.two_samples_8(n)
        } else {
            rng.two_samples(n)
        }
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::FPGA
    }
}
