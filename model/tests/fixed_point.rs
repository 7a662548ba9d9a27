//! The fixed-point rack average (§A.2) for every worker count from 1 to 4096.

use horus_model::fixed::{AVG_FRAC_BITS, Load, RackAverage};
use proptest::prelude::*;

/// The bound stated in `horus_model::fixed`: after a net `k` tasks on `w` workers the accumulator is
/// within `k * 2^-33` of `k / w`, and the reported 16.16 value is below it by less than `2^-16`.
fn check_bound(w: u32, k: u64) {
    let mut avg = RackAverage::new(w);
    for _ in 0..k {
        avg.task_started();
    }
    let exact = k as f64 / f64::from(w);
    let bound = k as f64 * 2f64.powi(-33);
    let acc_err = (avg.to_f64() - exact).abs();
    assert!(
        acc_err <= bound + 1e-15,
        "w = {w}, k = {k}: accumulator off by {acc_err}, bound {bound}"
    );
    let reported = avg.load().to_f64();
    assert!(
        reported <= avg.to_f64() && avg.to_f64() - reported < 2f64.powi(-16),
        "w = {w}: report {reported}"
    );
}

#[test]
fn error_against_the_true_mean_stays_inside_the_bound_for_every_worker_count() {
    for w in 1..=4096u32 {
        // A mean queue of up to 8 tasks per worker, and a few exact multiples.
        for k in [
            1,
            u64::from(w) - 1,
            u64::from(w),
            3 * u64::from(w) + 1,
            8 * u64::from(w),
        ] {
            check_bound(w, k.max(1));
        }
    }
}

#[test]
fn unit_is_exact_for_powers_of_two() {
    for e in 0..=12 {
        let w = 1u32 << e;
        assert_eq!(RackAverage::unit_for(w) << e, 1u64 << AVG_FRAC_BITS);
        assert_eq!(Load::additive_factor(w).0 << e, 1u32 << 16);
    }
}

proptest! {
    #[test]
    fn k_increments_then_k_decrements_return_exactly_to_the_start(w in 1..=4096u32, start in 0..10_000u32, k in 0..20_000u32) {
        let mut avg = RackAverage::new(w);
        for _ in 0..start {
            avg.task_started();
        }
        let before = avg;
        for _ in 0..k {
            avg.task_started();
        }
        for _ in 0..k {
            avg.task_finished();
        }
        prop_assert_eq!(avg, before);
    }

    #[test]
    fn interleaved_starts_and_finishes_track_the_outstanding_count(w in 1..=4096u32, ops in prop::collection::vec(any::<bool>(), 0..2000)) {
        let mut avg = RackAverage::new(w);
        let mut outstanding: u64 = 0;
        for start in ops {
            if start {
                avg.task_started();
                outstanding += 1;
            } else {
                avg.task_finished();
                outstanding = outstanding.saturating_sub(1);
            }
            prop_assert_eq!(avg.acc(), outstanding * avg.unit);
            prop_assert_eq!(u64::from(avg.tasks), outstanding);
        }
        check_bound(w, outstanding.max(1));
    }

    #[test]
    fn additive_factor_is_within_half_an_ulp_of_one_over_w(w in 1..=4096u32) {
        let f = Load::additive_factor(w).0 as f64;
        prop_assert!((f - 65536.0 / f64::from(w)).abs() <= 0.5);
    }
}
