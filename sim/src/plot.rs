//! Plots of the tail response time against load, one line per policy (Horus Fig. 10 / 11 style):
//! the whole run's p99, and the worst pool's p99 in each pool-size class.
//!
//! SVG only: it needs no font files at run time, so it renders the same on any machine.

use crate::output::{POOL_CLASSES, SweepRow};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Writes `p99-<workload>.svg` (the whole run's p99) and `p99-classes-<workload>.svg` (the worst
/// pool's p99 per pool-size class, one panel each) for each workload in `rows`.
pub fn p99_vs_load(dir: &Path, rows: &[SweepRow]) -> anyhow::Result<()> {
    let mut workloads: Vec<&str> = rows.iter().map(|r| r.workload.as_str()).collect();
    workloads.sort();
    workloads.dedup();
    for workload in workloads {
        let mine: Vec<&SweepRow> = rows.iter().filter(|r| r.workload == workload).collect();
        let path = dir.join(format!("p99-{workload}.svg"));
        let root = SVGBackend::new(&path, (800, 500)).into_drawing_area();
        root.fill(&WHITE)?;
        chart(
            &root,
            &format!("p99 response time, {workload}"),
            &mine,
            |r| r.response_p99_us,
        )?;
        root.present()?;

        let path = dir.join(format!("p99-classes-{workload}.svg"));
        let root = SVGBackend::new(&path, (1200, 800)).into_drawing_area();
        root.fill(&WHITE)?;
        for (i, area) in root.split_evenly((2, 2)).iter().enumerate() {
            let (_, _, name) = POOL_CLASSES[i];
            chart(
                area,
                &format!("worst pool's p99, {name}, {workload}"),
                &mine,
                |r| r.class_p99_us(i),
            )?;
        }
        root.present()?;
    }
    Ok(())
}

/// One chart on `area`: `value` against load, one line per policy, on a log scale; points
/// without a value (0) are left out.
fn chart(
    area: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    rows: &[&SweepRow],
    value: impl Fn(&SweepRow) -> f64,
) -> anyhow::Result<()> {
    let mut policies: Vec<&str> = rows.iter().map(|r| r.policy.as_str()).collect();
    policies.sort();
    policies.dedup();
    let shown: Vec<(&str, f64, f64)> = rows
        .iter()
        .map(|r| (r.policy.as_str(), r.load, value(r)))
        .filter(|&(_, _, v)| v > 0.0)
        .collect();
    let max_load = rows.iter().map(|r| r.load).fold(0.0, f64::max) * 1.05;
    let max_p99 = shown.iter().map(|p| p.2).fold(1.0, f64::max) * 1.5;
    let min_p99 = shown
        .iter()
        .map(|p| p.2)
        .fold(f64::INFINITY, f64::min)
        .min(max_p99 / 2.0)
        / 1.5;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
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
        let mut points: Vec<(f64, f64)> = shown
            .iter()
            .filter(|p| p.0 == *policy)
            .map(|p| (p.1, p.2))
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
    Ok(())
}
