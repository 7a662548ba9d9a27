//! Horus's parameters, as the simulator's policies take them and the model's schedulers use them.

use super::*;

/// Whether `name` is one of the policies that take Horus's parameters (Horus, with the Tofino's
/// arithmetic, and between racks only, [`crate::policy::horus_jbsq`]).
pub fn is_horus(name: &str) -> bool {
    name == "horus" || name == TOFINO_POLICY || name == crate::policy::horus_jbsq::NAME
}

/// Horus' per-pool parameters (the same for every pool), see `docs/algorithm.md`, decision 6-7.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HorusParams {
    /// A leaf links its rack to the spine's idle list when this many workers are idle.
    pub link_at: u16,
    /// ... and unlinks it when this many or fewer are.
    pub unlink_at: u16,
    /// A leaf reports its rack average when it moved by at least this much.
    pub report_delta: f64,
    /// A leaf re-sends a lost idle message (§A.3) at most once per this many microseconds after
    /// its last idle message; 0 re-sends on every disagreement (the paper's rule).
    pub repair_gap_us: u16,
    /// Whose arithmetic the schedulers follow: the FPGA pipeline's (`horus`) or the Tofino
    /// program's (`horus-tofino`).
    pub profile: Profile,
}

impl Default for HorusParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl HorusParams {
    /// The defaults, as a constant for the policy registry ([`crate::policy::POLICIES`]).
    pub const DEFAULT: Self = Self {
        link_at: 1,
        unlink_at: 0,
        report_delta: 1.0,
        repair_gap_us: horus_model::config::DEFAULT_REPAIR_GAP_US,
        profile: Profile::FPGA,
    };

    /// The parameters of a `horus` policy spec, checked: `link_at >= 1`, `unlink_at <
    /// link_at`, a report delta the 16.16 format holds above zero.
    pub fn of(spec: &crate::policy::PolicySpec) -> anyhow::Result<HorusParams> {
        let get = |n: &str| spec.param(n).unwrap_or(0.0);
        let p = HorusParams {
            link_at: get("link_at") as u16,
            unlink_at: get("unlink_at") as u16,
            report_delta: get("report_delta"),
            repair_gap_us: get("repair_gap_us") as u16,
            // horus-tofino: each difference a parameter (1: as the Tofino program does it).
            profile: if spec.name() == TOFINO_POLICY {
                Profile {
                    samples_8: get("samples_8") != 0.0,
                    avg_16_16: get("avg_16_16") != 0.0,
                    control_plane_tables: get("control_plane_tables") != 0.0,
                    repair_deadline: get("repair_deadline") != 0.0,
                }
            } else {
                Profile::FPGA
            },
        };
        anyhow::ensure!(
            p.link_at >= 1 && p.unlink_at < p.link_at,
            "horus: --link-at {} and --unlink-at {} need link_at >= 1 and unlink_at < link_at",
            p.link_at,
            p.unlink_at
        );
        anyhow::ensure!(
            p.report_delta < 65536.0 && Load::from_f64(p.report_delta).is_some_and(|d| d.0 > 0),
            "horus: --report-delta {} is not a positive load of 16.16 bits (1/65536 to 65535)",
            p.report_delta
        );
        Ok(p)
    }

    pub(super) fn model(&self) -> Params {
        Params {
            link_at: self.link_at,
            unlink_at: self.unlink_at,
            report_delta: Load::from_f64(self.report_delta)
                .filter(|d| d.0 > 0)
                .expect("report_delta must be a positive 16.16 value"),
            repair_gap_us: self.repair_gap_us,
        }
    }
}
