//! Sweeps over load x policy x workload, one independent run per point, in parallel with rayon.
//!
//! Every point uses the same seed, so all policies see the same pools, arrivals and service times
//! (see [`crate::rng`]); differences between their curves are the policies', not the dice's.

use crate::config::SimConfig;
use crate::engine;
use crate::metrics::Summary;
use crate::policy::PolicySpec;
use crate::workload::LoadSchedule;
use rayon::prelude::*;

/// The configurations of a sweep, in a fixed order.
pub fn points(
    base: &SimConfig,
    policies: &[PolicySpec],
    workloads: &[String],
    loads: &[f64],
) -> Vec<SimConfig> {
    let mut out = Vec::new();
    for workload in workloads {
        for policy in policies {
            for &load in loads {
                out.push(SimConfig {
                    policy: policy.clone(),
                    workload: workload.clone(),
                    load: LoadSchedule::constant(load),
                    ..base.clone()
                });
            }
        }
    }
    out
}

/// Runs all points; `done` is called after each. Results come back in the order of `configs`.
pub fn run_all(
    configs: &[SimConfig],
    done: &(dyn Fn(&Summary) + Sync),
) -> anyhow::Result<Vec<Summary>> {
    configs
        .par_iter()
        .map(|cfg| {
            let s = engine::run(cfg, &mut |_| {})?;
            done(&s);
            Ok(s)
        })
        .collect()
}
