//! Plots of the tail response time against load, one line per policy (Horus Fig. 10 / 11 style).
//!
//! SVG only: it needs no font files at run time, so it renders the same on any machine.

use crate::output::SweepRow;
use plotters::prelude::*;
use std::path::Path;

/// Writes `p99-<workload>.svg` for each workload in `rows`.
pub fn p99_vs_load(dir: &Path, rows: &[SweepRow]) -> anyhow::Result<()> {
    let mut workloads: Vec<&str> = rows.iter().map(|r| r.workload.as_str()).collect();
    workloads.sort();
    workloads.dedup();
    for workload in workloads {
        let mine: Vec<&SweepRow> = rows.iter().filter(|r| r.workload == workload).collect();
        let mut policies: Vec<&str> = mine.iter().map(|r| r.policy.as_str()).collect();
        policies.sort();
        policies.dedup();
        let max_load = mine.iter().map(|r| r.load).fold(0.0, f64::max) * 1.05;
        let p99 = |r: &SweepRow| r.response_p99_us.max(1.0);
        let max_p99 = mine.iter().map(|r| p99(r)).fold(1.0, f64::max) * 1.5;
        let min_p99 = mine.iter().map(|r| p99(r)).fold(f64::INFINITY, f64::min) / 1.5;
        let path = dir.join(format!("p99-{workload}.svg"));
        let root = SVGBackend::new(&path, (800, 500)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("p99 response time, {workload}"), ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..max_load, (min_p99..max_p99).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("load (fraction of pool capacity)")
            .y_desc("p99 response (us)")
            .draw()?;
        for (i, policy) in policies.iter().enumerate() {
            let mut points: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| r.policy == *policy)
                .map(|r| (r.load, p99(r)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(*policy)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
    }
    Ok(())
}
