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
        trace: None,
    };
    let r = match run(&model, &preset, &cfg, DEFAULT_SEED, &opts) {
        Ok(r) => r,
        Err(e) => panic!("{e:#}{}", waveform(&v, &preset, &cfg, &opts, &e)),
    };
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

/// Replays a failed run with a traced model and writes the 200 cycles before the failure to
/// `target/cosim/failure-<top>-seed<seed>.vcd`; says where.
fn waveform(
    v: &str,
    preset: &presets::Preset,
    cfg: &horus_model::config::Config,
    opts: &RunOptions,
    e: &anyhow::Error,
) -> String {
    let Some(f) = e.downcast_ref::<horus_cosim::bench::Failure>() else {
        return String::new();
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../target/cosim/failure-{}-seed{}.vcd",
        preset.module_name(),
        opts.seed
    ));
    let replay = || -> anyhow::Result<()> {
        let traced = Model::build_traced(v, &preset.module_name())?;
        let mut o = opts.clone();
        o.trace = Some((f.cycle.saturating_sub(200), path.clone()));
        let _ = run(&traced, preset, cfg, DEFAULT_SEED, &o);
        Ok(())
    };
    match replay() {
        Ok(()) => format!(
            "\nwaveform of cycles {}..{}: {}",
            f.cycle.saturating_sub(200),
            f.cycle,
            path.display()
        ),
        Err(e) => format!("\n(no waveform: {e:#})"),
    }
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

#[test]
fn a_traced_model_writes_the_waveform_of_a_run() {
    let preset = presets::preset("small", Role::Leaf).unwrap();
    let cfg = config(Role::Leaf, preset.sizes(), &mut Rng::new(2));
    let v = verilog(&preset, &cfg, DEFAULT_SEED);
    let model = Model::build_traced(&v, &preset.module_name()).unwrap();
    let path = std::env::temp_dir().join(format!("horus-cosim-{}.vcd", std::process::id()));
    let opts = RunOptions {
        frames: 300,
        seed: 2,
        input_busy: 100,
        output_ready: 100,
        mix: horus_cosim::traffic::Mix::Mixed,
        trace: Some((100, path.clone())),
    };
    let r = run(&model, &preset, &cfg, DEFAULT_SEED, &opts).unwrap();
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(
        vcd.contains("$enddefinitions") && vcd.contains(" clk "),
        "a VCD with the clock"
    );
    // Two value changes of the clock per cycle traced.
    let stamps = vcd.lines().filter(|l| l.starts_with('#')).count() as u64;
    assert_eq!(stamps, 2 * (r.cycles + r.check_cycles - 100));
    std::fs::remove_file(&path).unwrap();
}
