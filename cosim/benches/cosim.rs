//! Co-simulation figures: cycles per second of the Verilated switch with the scoreboard, packets
//! per cycle, first-pass latency in cycles (p50, p99, max) and the fraction of resubmitted passes,
//! for each role with all workers busy and with idle workers.
//!
//! `cargo bench -p horus-cosim --bench cosim`; `HORUS_BENCH_PRESET=default` (or `small`, the
//! default here: the same logic with small tables), `HORUS_BENCH_FRAMES` (default 300,000),
//! `HORUS_BENCH_RUNS` (default 3): each configuration runs that many times, and the table gives
//! the median speed with the range after it (the other figures are the same in every run: the
//! traffic and the switch are deterministic).

use horus_cosim::bench::{RunOptions, run, verilog};
use horus_cosim::traffic::{Mix, Rng, config};
use horus_cosim::verilated::Model;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::presets;

fn main() {
    let preset_name = std::env::var("HORUS_BENCH_PRESET").unwrap_or_else(|_| "small".into());
    let frames: usize = std::env::var("HORUS_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let runs: usize = std::env::var("HORUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    println!(
        "| role | traffic | Mcycles/s, median (range) | packets in/cycle | beats out/cycle | first-pass latency p50 / p99 / max (cycles) | resubmitted passes |"
    );
    println!("|---|---|---|---|---|---|---|");
    for role in [Role::Leaf, Role::Spine] {
        let preset = presets::preset(&preset_name, role).expect("a known preset");
        let cfg = config(role, preset.sizes(), &mut Rng::new(1));
        let model = Model::build(&verilog(&preset, &cfg, DEFAULT_SEED), &preset.module_name())
            .expect("the model builds");
        for (mix, name) in [(Mix::Busy, "all workers busy"), (Mix::Idle, "idle workers")] {
            let opts = RunOptions {
                frames,
                seed: 7,
                input_busy: 100,
                output_ready: 100,
                mix,
                trace: None,
            };
            let mut speeds = Vec::with_capacity(runs);
            let mut report = None;
            for _ in 0..runs {
                let r = run(&model, &preset, &cfg, DEFAULT_SEED, &opts).expect("the run matches");
                speeds.push(r.cycles as f64 / r.seconds / 1e6);
                report = Some(r);
            }
            let r = report.expect("at least one run");
            speeds.sort_by(f64::total_cmp);
            println!(
                "| {role:?} | {name} | {:.2} ({:.2}-{:.2}) | {:.3} | {:.3} | {} / {} / {} | {:.1} % |",
                speeds[speeds.len() / 2],
                speeds[0],
                speeds[speeds.len() - 1],
                r.frames_in as f64 / r.cycles as f64,
                r.beats_out as f64 / r.cycles as f64,
                r.latency.value_at_quantile(0.5),
                r.latency.value_at_quantile(0.99),
                r.latency.max(),
                100.0 * r.resubmitted as f64 / r.passes as f64
            );
        }
    }
}
