//! The generated switches against the model, frame for frame, in Verilator.

use horus_cosim::bench::{RunOptions, run, verilog};
use horus_cosim::traffic::{Rng, config};
use horus_cosim::verilated::Model;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::presets;

fn frames() -> usize {
    std::env::var("HORUS_COSIM_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500_000)
}

fn seed() -> u64 {
    let s = std::env::var("HORUS_COSIM_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    eprintln!("seed {s} (HORUS_COSIM_SEED replays it)");
    s
}

fn check(role: Role, input_busy: u64, output_ready: u64) {
    let preset = presets::preset("small", role).unwrap();
    let seed = seed();
    let cfg = config(role, preset.sizes(), &mut Rng::new(seed));
    let v = verilog(&preset, &cfg, DEFAULT_SEED);
    let model = Model::build(&v, &preset.module_name()).unwrap();
    let opts = RunOptions {
        frames: frames(),
        seed,
        input_busy,
        output_ready,
        mix: horus_cosim::traffic::Mix::Mixed,
    };
    let r = run(&model, &preset, &cfg, DEFAULT_SEED, &opts).unwrap_or_else(|e| panic!("{e:#}"));
    eprintln!(
        "{role:?}: {} frames in, {} out, {} passes ({} resubmitted, {} control) in {} cycles, {:.2} s ({:.0} cycles/s)",
        r.frames_in,
        r.frames_out,
        r.passes,
        r.resubmitted,
        r.controls,
        r.cycles,
        r.seconds,
        r.cycles as f64 / r.seconds
    );
    assert!(r.frames_in as usize >= opts.frames / 2);
    assert!(r.resubmitted > 0 && r.controls > 0);
}

#[test]
fn leaf_matches_the_model_at_full_input_rate() {
    check(Role::Leaf, 100, 100);
}

#[test]
fn leaf_matches_the_model_with_gaps_and_backpressure() {
    check(Role::Leaf, 70, 60);
}

#[test]
fn spine_matches_the_model_at_full_input_rate() {
    check(Role::Spine, 100, 100);
}

#[test]
fn spine_matches_the_model_with_gaps_and_backpressure() {
    check(Role::Spine, 70, 60);
}
