//! The OpenNIC plug-in's throughput and latency at its clock (250 MHz, `axis_aclk`): minimum-size
//! frames (60 bytes, one beat) on both CMAC streams, every output ready, the whole plug-in
//! (arbiter, register slices, switch, demultiplexer) checked against the model as in
//! `cosim/tests/board.rs`.
//!
//! First each role at full input (both streams offering a frame every cycle): the frames the
//! plug-in takes per cycle is its saturation rate, in decisions per second at 250 MHz. Then at 50 %
//! and 90 % of that rate (each stream offering with that chance per cycle): latency from a frame's
//! last beat in at the box to the first beat out of what its first pass sent, p50 and p99, in
//! cycles and nanoseconds.
//!
//! `cargo bench -p horus-cosim --bench board`; `HORUS_BENCH_FRAMES` (default 100,000 a run).

use horus_cosim::box_bench::{self, BoxRunOptions, BoxRunReport, TOP, on_board};
use horus_cosim::traffic::{Mix, Rng, config};
use horus_cosim::verilated::Model;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::board::boards;
use rtl_gen::boards::BoardParams;

fn percentile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let frames: usize = std::env::var("HORUS_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let board = boards::board("au250").expect("a board");
    let ns_per_cycle = 1000.0 / board.clock_mhz as f64;
    println!(
        "| role | traffic | offered per CMAC stream | frames in per cycle | M decisions/s at {} MHz | latency p50 / p99, cycles (ns) | resubmitted passes |",
        board.clock_mhz
    );
    println!("|---|---|---|---|---|---|---|");
    for role in [Role::Leaf, Role::Spine] {
        let p = BoardParams::new(board, role, "small", DEFAULT_SEED, 1_000_000).expect("a preset");
        let mut cfg = config(role, p.preset.sizes(), &mut Rng::new(1));
        cfg.switch.conn_timeout_us = p.conn_timeout_us;
        let cfg = on_board(cfg, board).expect("the configuration fits the board");
        let model =
            Model::build(&box_bench::verilog(&p).expect("the plug-in"), TOP).expect("the model");
        for (mix, name) in [(Mix::Busy, "all workers busy"), (Mix::Idle, "idle workers")] {
            let run = |offer: u64| -> BoxRunReport {
                let opts = BoxRunOptions {
                    frames,
                    seed: 7,
                    input_busy: offer,
                    output_ready: 100,
                    mix,
                    inputs: [true, true, false],
                    min_frames: true,
                };
                box_bench::run(&model, &p, &cfg, &opts).expect("the run matches the model")
            };
            let full = run(100);
            let rate = |r: &BoxRunReport| {
                (r.frames_in[0] + r.frames_in[1]) as f64 / (r.traffic_until - r.traffic_from) as f64
            };
            let saturation = rate(&full);
            for share in [None, Some(0.5), Some(0.9)] {
                let (label, r) = match share {
                    None => ("100 % (saturation)".to_string(), full.clone()),
                    Some(x) => {
                        let per_stream = (100.0 * x * saturation / 2.0).round() as u64;
                        (
                            format!("{per_stream} % ({:.0} % of saturation)", 100.0 * x),
                            run(per_stream),
                        )
                    }
                };
                let mut lat = r.latency.clone();
                lat.sort_unstable();
                let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
                println!(
                    "| {role:?} | {name} | {label} | {:.3} | {:.0} | {p50} / {p99} ({:.0} / {:.0}) | {:.1} % |",
                    rate(&r),
                    rate(&r) * board.clock_mhz as f64,
                    p50 as f64 * ns_per_cycle,
                    p99 as f64 * ns_per_cycle,
                    100.0 * r.resubmitted as f64 / r.passes as f64
                );
            }
        }
    }
}
