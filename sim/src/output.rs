//! Results on disk: the full summary as JSON, one CSV row per pool, and sweep tables.

use crate::metrics::Summary;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Writes `summary.json` and `pools.csv` under `dir`, prefixed by `stem`.
pub fn write_run(dir: &Path, stem: &str, summary: &Summary) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = dir.join(format!("{stem}.json"));
    std::fs::write(&json, serde_json::to_string_pretty(summary)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let mut csv = csv::Writer::from_path(dir.join(format!("{stem}-pools.csv")))?;
    for p in &summary.pools {
        csv.serialize(PoolRow::from(p))?;
    }
    csv.flush()?;
    Ok(())
}

/// The flat form of a pool's summary that CSV needs.
#[derive(Serialize)]
struct PoolRow {
    pool: u32,
    app_id: u32,
    workers: u32,
    racks: u32,
    arrived: u64,
    completed: u64,
    lost: u64,
    resubmitted_fraction: f64,
    response_mean_us: f64,
    response_p50_us: f64,
    response_p99_us: f64,
    response_p999_us: f64,
    wait_p50_us: f64,
    wait_p99_us: f64,
    wait_p999_us: f64,
    imbalance_p50: f64,
    imbalance_p99: f64,
    little_relative_error: f64,
}

impl From<&crate::metrics::PoolSummary> for PoolRow {
    fn from(p: &crate::metrics::PoolSummary) -> Self {
        Self {
            pool: p.pool,
            app_id: p.app_id,
            workers: p.workers,
            racks: p.racks,
            arrived: p.arrived,
            completed: p.completed,
            lost: p.lost,
            resubmitted_fraction: p.resubmitted_fraction,
            response_mean_us: p.response.mean_us,
            response_p50_us: p.response.p50_us,
            response_p99_us: p.response.p99_us,
            response_p999_us: p.response.p999_us,
            wait_p50_us: p.wait.p50_us,
            wait_p99_us: p.wait.p99_us,
            wait_p999_us: p.wait.p999_us,
            imbalance_p50: p.imbalance.p50,
            imbalance_p99: p.imbalance.p99,
            little_relative_error: p.little.relative_error,
        }
    }
}

/// One sweep point, overall numbers only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub policy: String,
    pub workload: String,
    pub load: f64,
    pub tasks: u64,
    pub response_mean_us: f64,
    pub response_p50_us: f64,
    pub response_p99_us: f64,
    pub response_p999_us: f64,
    pub wait_p99_us: f64,
    pub resubmitted_fraction: f64,
    pub messages_per_task: f64,
    pub lost: u64,
    /// Tasks left unfinished when the run's drain limit passed: the queues outgrew the drain,
    /// the load is past what the policy carries, and the percentiles are those of the tasks that
    /// did finish.
    #[serde(default)]
    pub unfinished: u64,
    pub little_relative_error: f64,
    /// The worst pool's p99 in each size class of [`POOL_CLASSES`] (0 when the class has no
    /// pool, or the run kept no histogram per pool).
    pub p99_under_100_us: f64,
    pub p99_100_to_399_us: f64,
    pub p99_400_to_999_us: f64,
    pub p99_1000_up_us: f64,
}

/// Pool-size classes by workers, `[from, to)`, as the sweep's rows and plots show them.
pub const POOL_CLASSES: [(u32, u32, &str); 4] = [
    (0, 100, "under 100 workers"),
    (100, 400, "100 to 399 workers"),
    (400, 1000, "400 to 999 workers"),
    (1000, u32::MAX, "1,000 workers and more"),
];

impl SweepRow {
    /// The worst pool's p99 of class `i` of [`POOL_CLASSES`] (0 if none).
    pub fn class_p99_us(&self, i: usize) -> f64 {
        [
            self.p99_under_100_us,
            self.p99_100_to_399_us,
            self.p99_400_to_999_us,
            self.p99_1000_up_us,
        ][i]
    }
}

impl From<&Summary> for SweepRow {
    fn from(s: &Summary) -> Self {
        let worst = |i: usize| {
            let (from, to, _) = POOL_CLASSES[i];
            s.pools
                .iter()
                .filter(|p| (from..to).contains(&p.workers) && p.response.count > 0)
                .map(|p| p.response.p99_us)
                .fold(0.0, f64::max)
        };
        Self {
            policy: s.policy.clone(),
            workload: s.workload.clone(),
            load: s.load,
            tasks: s.tasks,
            response_mean_us: s.response.mean_us,
            response_p50_us: s.response.p50_us,
            response_p99_us: s.response.p99_us,
            response_p999_us: s.response.p999_us,
            wait_p99_us: s.wait.p99_us,
            resubmitted_fraction: s.resubmitted_fraction,
            messages_per_task: s.messages.iter().fold(0.0, |sum, m| sum + m.per_task),
            lost: s.lost_in_network + s.lost_to_failures,
            unfinished: s.unfinished,
            little_relative_error: s.little.relative_error,
            p99_under_100_us: worst(0),
            p99_100_to_399_us: worst(1),
            p99_400_to_999_us: worst(2),
            p99_1000_up_us: worst(3),
        }
    }
}

/// The highest load of a policy and workload up to which its p99 stays within `target_us`
/// (Horus §4.1: "throughput at a target tail response time"): the swept loads are taken in
/// increasing order and the first one over the target ends the search, so that a lower p99 at a
/// higher load (noise past the knee) does not count, as does the first whose run did not drain
/// (its p99 is that of the tasks that finished). None if the lowest load misses it.
pub fn throughput_at_p99(
    rows: &[SweepRow],
    policy: &str,
    workload: &str,
    target_us: f64,
) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.policy == policy && r.workload == workload)
        .map(|r| {
            let p99 = if r.unfinished > 0 {
                f64::INFINITY
            } else {
                r.response_p99_us
            };
            (r.load, p99)
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
        .iter()
        .take_while(|&&(_, p99)| p99 <= target_us)
        .map(|&(load, _)| load)
        .last()
}

/// A sweep's results from its rows, in the sweep's order: `sweep.csv`, `sweep.json` (with the
/// seed and the throughput at `p99_target_us` of each policy and workload) and the plots, under
/// `dir`; returns the table the command prints. A local sweep and a merged cluster sweep
/// ([`crate::sweep::merge`]) both end here, so their files are the same byte for byte.
pub fn finish_sweep(
    dir: &Path,
    rows: &[SweepRow],
    policies: &[String],
    workloads: &[String],
    seed: u64,
    p99_target_us: f64,
) -> anyhow::Result<String> {
    let throughput: Vec<_> = workloads
        .iter()
        .flat_map(|w| policies.iter().map(move |p| (p, w)))
        .map(|(p, w)| {
            serde_json::json!({
                "policy": p,
                "workload": w,
                "p99_target_us": p99_target_us,
                "max_load": throughput_at_p99(rows, p, w, p99_target_us),
            })
        })
        .collect();
    write_sweep(
        dir,
        rows,
        &serde_json::json!({ "seed": seed, "throughput_at_p99_target": throughput }),
    )?;
    crate::plot::p99_vs_load(dir, rows).context("plotting")?;
    Ok(rows
        .iter()
        .map(|r| {
            let drained = if r.unfinished > 0 {
                format!(" ({} unfinished: overloaded)", r.unfinished)
            } else {
                String::new()
            };
            format!(
                "{:10} {:14} load {:.2}: p99 {:9.1} us{drained}\n",
                r.policy, r.workload, r.load, r.response_p99_us
            )
        })
        .collect())
}

pub fn write_sweep(dir: &Path, rows: &[SweepRow], extra: &serde_json::Value) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut csv = csv::Writer::from_path(dir.join("sweep.csv"))?;
    for r in rows {
        csv.serialize(r)?;
    }
    csv.flush()?;
    let json = serde_json::json!({ "rows": rows, "summary": extra });
    std::fs::write(dir.join("sweep.json"), serde_json::to_string_pretty(&json)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(policy: &str, load: f64, p99: f64) -> SweepRow {
        SweepRow {
            policy: policy.into(),
            workload: "exp".into(),
            load,
            tasks: 1,
            response_mean_us: 0.0,
            response_p50_us: 0.0,
            response_p99_us: p99,
            response_p999_us: 0.0,
            wait_p99_us: 0.0,
            resubmitted_fraction: 0.0,
            messages_per_task: 0.0,
            lost: 0,
            unfinished: 0,
            little_relative_error: 0.0,
            p99_under_100_us: 0.0,
            p99_100_to_399_us: 0.0,
            p99_400_to_999_us: 0.0,
            p99_1000_up_us: 0.0,
        }
    }

    #[test]
    fn throughput_at_target_is_the_highest_load_up_to_which_every_load_meets_it() {
        let rows = [
            row("a", 0.5, 300.0),
            row("a", 0.7, 900.0),
            row("a", 0.9, 5000.0),
            row("b", 0.5, 3000.0),
        ];
        assert_eq!(throughput_at_p99(&rows, "a", "exp", 1000.0), Some(0.7));
        assert_eq!(throughput_at_p99(&rows, "b", "exp", 1000.0), None);
        // Past the knee, a lower p99 at a higher load (noise) does not count; rows may come
        // in any order.
        let noisy = [
            row("c", 0.9, 800.0),
            row("c", 0.5, 300.0),
            row("c", 0.7, 1200.0),
        ];
        assert_eq!(throughput_at_p99(&noisy, "c", "exp", 1000.0), Some(0.5));
        assert_eq!(throughput_at_p99(&noisy, "c", "exp", 100.0), None);
        // A run that did not drain carries no load, whatever its finished tasks' p99.
        let mut overloaded = row("d", 0.7, 300.0);
        overloaded.unfinished = 5;
        let rows = [row("d", 0.5, 300.0), overloaded, row("d", 0.9, 300.0)];
        assert_eq!(throughput_at_p99(&rows, "d", "exp", 1000.0), Some(0.5));
    }
}
