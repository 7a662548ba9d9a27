//! Events per second of the engine on one core: `cargo bench -p horus-sim --bench events`.
//!
//! A 16-pod datacenter (128 racks, 98,304 slots) with 100 random pools on the exponential workload
//! at 90 % load, with the default network (5 us hops, 1e-5 loss), for each of random, RS-H, JSQ
//! and Horus; latencies are recorded from the first tenth of the run on, as `horus-sim run` does.
//! Setup (placement, policy tables) is excluded from the timing.
//! Rates are given per second of wall time and per second of this process's CPU time (the latter
//! is what matters on a shared machine). `HORUS_BENCH_POLICIES=horus,rs-h` selects policies;
//! `HORUS_BENCH_RUNS` (default 3) runs each that many times, alternating policies, and ends with
//! each policy's median CPU rate and range. `HORUS_BENCH_SIM_MS` (default 20) sets the simulated
//! time: a short and a longer run under cachegrind give the cost per event without the setup.

use horus_sim::config::{PoolSource, SimConfig};
use horus_sim::engine::Engine;
use horus_sim::placement::RandomPools;
use horus_sim::policy::PolicySpec;
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;
use std::time::Instant;

/// CPU time (user + system) of this process so far, from /proc (Linux); None elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() {
    horus_sim::use_huge_pages();
    let policies =
        std::env::var("HORUS_BENCH_POLICIES").unwrap_or_else(|_| "random,rs-h,jsq,horus".into());
    let runs: usize = std::env::var("HORUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    let policies: Vec<&str> = policies.split(',').collect();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); policies.len()];
    for _ in 0..runs {
        for (policy, rates) in policies.iter().zip(rates.iter_mut()) {
            if let Some(rate) = run(policy) {
                rates.push(rate);
            }
        }
    }
    println!("median (range) of {runs} runs, M events/s of CPU time:");
    for (policy, rates) in policies.iter().zip(rates.iter_mut()) {
        rates.sort_by(f64::total_cmp);
        if let (Some(lo), Some(hi)) = (rates.first(), rates.last()) {
            println!("{policy:8} {:.1} ({lo:.1}-{hi:.1})", rates[rates.len() / 2]);
        }
    }
}

/// One run of `policy`: prints its figures and returns its rate per second of CPU time (None where
/// /proc is not there to tell).
fn run(policy: &str) -> Option<f64> {
    let sim_ms: f64 = std::env::var("HORUS_BENCH_SIM_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&ms: &f64| ms > 0.0)
        .unwrap_or(20.0);
    let cfg = SimConfig {
        topology: Topology {
            pods: 16,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: 100,
            ..RandomPools::default()
        }),
        policy: PolicySpec::named(policy).unwrap_or_else(|e| panic!("HORUS_BENCH_POLICIES: {e}")),
        load: LoadSchedule::constant(0.9),
        sim_ns: (sim_ms * 1e6) as u64,
        // As `horus-sim run` has it: tasks arriving after the first tenth are recorded.
        warmup_ns: (sim_ms * 1e5) as u64,
        ..SimConfig::default()
    };
    let engine = Engine::new(&cfg).expect("valid configuration");
    let workers = engine.cluster().total_workers();
    let (started, cpu0) = (Instant::now(), cpu_seconds());
    let summary = engine.run(&mut |_| {});
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    println!(
        "{policy:8} {workers} workers, {} tasks, {} events in {secs:.2} s: {:.1} M events/s wall, {} CPU",
        summary.tasks,
        summary.events,
        summary.events as f64 / secs / 1e6,
        cpu.map_or("?".into(), |c| format!(
            "{:.1} M events/s ({c:.2} s)",
            summary.events as f64 / c / 1e6
        ))
    );
    cpu.map(|c| summary.events as f64 / c / 1e6)
}
