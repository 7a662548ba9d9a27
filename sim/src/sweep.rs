//! Sweeps over load x policy x workload, one independent run per point, in parallel with rayon.
//!
//! A sweep of many points can run on a cluster instead: [`write_plan`] writes one self-contained
//! run specification per point, each runs anywhere (`horus-sim run --spec`, [`write_result`]),
//! and [`merge`] gathers the results into the same files as a local sweep.
//!
//! Every point uses the same seed, so all policies see the same pools, arrivals and service times
//! (see [`crate::rng`]); differences between their curves are the policies', not the dice's.

use crate::config::SimConfig;
use crate::engine;
use crate::metrics::Summary;
use crate::output::SweepRow;
use crate::policy::PolicySpec;
use crate::workload::LoadSchedule;
use anyhow::{Context, ensure};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

/// A sweep planned for a cluster (`horus-sim sweep --plan DIR`): what `merge` needs besides the
/// points' results, in `DIR/plan.json`. The points are `DIR/points/NNNN.json`, each a whole
/// [`SimConfig`] (numbered from 0 in the order of [`points`], four digits or as many as the
/// last number needs); `horus-sim run --spec` writes each point's [`SweepRow`] to
/// `DIR/results/` under the same name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The folder's format; [`merge`] refuses another.
    pub format: u32,
    pub seed: u64,
    pub policies: Vec<String>,
    pub workloads: Vec<String>,
    pub loads: Vec<f64>,
    pub p99_target_us: f64,
    pub points: usize,
}

/// The format [`write_plan`] writes and [`merge`] reads.
pub const PLAN_FORMAT: u32 = 1;

/// The file name (without `.json`) of point `i` of `n`.
pub fn point_name(i: usize, n: usize) -> String {
    let width = n.saturating_sub(1).to_string().len().max(4);
    format!("{i:0width$}")
}

/// Writes a plan and its points under `dir`, which must not hold a plan already (its results
/// would be mixed with the new plan's).
pub fn write_plan(dir: &Path, plan: &Plan, configs: &[SimConfig]) -> anyhow::Result<()> {
    ensure!(
        plan.points == configs.len(),
        "a plan of {} points given {} configurations",
        plan.points,
        configs.len()
    );
    let plan_file = dir.join("plan.json");
    ensure!(
        !plan_file.exists() && !dir.join("points").exists() && !dir.join("results").exists(),
        "{} holds a planned sweep already; remove it or plan into another folder",
        dir.display()
    );
    let points = dir.join("points");
    std::fs::create_dir_all(&points).with_context(|| format!("creating {}", points.display()))?;
    for (i, cfg) in configs.iter().enumerate() {
        let path = points.join(format!("{}.json", point_name(i, configs.len())));
        std::fs::write(&path, serde_json::to_string_pretty(cfg)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    std::fs::write(&plan_file, serde_json::to_string_pretty(plan)?)
        .with_context(|| format!("writing {}", plan_file.display()))?;
    Ok(())
}

/// The configuration of one planned point.
pub fn read_point(spec: &Path) -> anyhow::Result<SimConfig> {
    let text =
        std::fs::read_to_string(spec).with_context(|| format!("reading {}", spec.display()))?;
    let cfg: SimConfig = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run specification", spec.display()))?;
    cfg.validate()
        .with_context(|| format!("the run specification {}", spec.display()))?;
    Ok(cfg)
}

/// Where `run --spec` writes a point's result: `DIR/results` for a spec in `DIR/points`.
pub fn results_dir(spec: &Path) -> Option<PathBuf> {
    let points = spec.parent()?;
    (points.file_name()? == "points")
        .then(|| points.parent().unwrap_or(Path::new(".")).join("results"))
}

/// Writes a point's result as `dir/<name>.json`.
pub fn write_result(dir: &Path, name: &str, row: &SweepRow) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    // Written whole under another name, then renamed: a job killed mid-write leaves no result
    // that `merge` would read.
    let partial = dir.join(format!(".{name}.json.partial"));
    std::fs::write(&partial, serde_json::to_string_pretty(row)?)
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The plan under `dir` and its points' results, in the plan's order: an error naming the
/// missing points if any has none, or a result that is not its point's (another plan's).
pub fn merge(dir: &Path) -> anyhow::Result<(Plan, Vec<SweepRow>)> {
    let plan_file = dir.join("plan.json");
    let plan: Plan =
        serde_json::from_str(&std::fs::read_to_string(&plan_file).with_context(|| {
            format!(
                "reading {} (plan it with `sweep --plan`)",
                plan_file.display()
            )
        })?)
        .with_context(|| format!("{} is not a sweep plan", plan_file.display()))?;
    ensure!(
        plan.format == PLAN_FORMAT,
        "{} has format {}; this horus-sim reads format {PLAN_FORMAT}",
        plan_file.display(),
        plan.format
    );
    let mut rows = Vec::with_capacity(plan.points);
    let mut missing = Vec::new();
    for i in 0..plan.points {
        let name = point_name(i, plan.points);
        let result = dir.join("results").join(format!("{name}.json"));
        if !result.exists() {
            missing.push(name);
            continue;
        }
        let cfg = read_point(&dir.join("points").join(format!("{name}.json")))?;
        let row: SweepRow = serde_json::from_str(
            &std::fs::read_to_string(&result)
                .with_context(|| format!("reading {}", result.display()))?,
        )
        .with_context(|| format!("{} is not a point's result", result.display()))?;
        let load = cfg.load.steps.first().map(|s| s.1);
        ensure!(
            row.policy == cfg.policy.name()
                && row.workload == cfg.workload
                && Some(row.load) == load,
            "{} is the result of {} on {} at load {}, not of its point ({} on {} at load {:?})",
            result.display(),
            row.policy,
            row.workload,
            row.load,
            cfg.policy.name(),
            cfg.workload,
            load
        );
        rows.push(row);
    }
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).map(String::as_str).collect();
        anyhow::bail!(
            "{} of {} points have no result in {} yet: {}{}",
            missing.len(),
            plan.points,
            dir.join("results").display(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
    }
    Ok((plan, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_named_with_four_digits_or_as_many_as_the_last_needs() {
        assert_eq!(point_name(0, 1), "0000");
        assert_eq!(point_name(7, 10_000), "0007");
        assert_eq!(point_name(7, 10_001), "00007");
        assert_eq!(point_name(12_345, 123_456), "012345");
    }

    #[test]
    fn a_points_result_goes_beside_its_points_folder() {
        assert_eq!(
            results_dir(Path::new("runs/k48/points/0003.json")),
            Some(PathBuf::from("runs/k48/results"))
        );
        assert_eq!(
            results_dir(Path::new("points/0003.json")),
            Some(PathBuf::from("results"))
        );
        assert_eq!(results_dir(Path::new("elsewhere/0003.json")), None);
    }
}
