//! A board's plug-in (the switch in the OpenNIC box adapter) against the model, in Verilator:
//! programmed through the box's register window, frames on both CMAC streams and the host
//! stream at once, random back-pressure on every output stream.

use horus_cosim::box_bench::{self, BoxRunOptions, TOP, on_board};
use horus_cosim::traffic::{Mix, Rng, config};
use horus_cosim::verilated::Model;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::board::boards;
use rtl_gen::boards::BoardParams;

fn frames() -> usize {
    std::env::var("HORUS_COSIM_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(60_000, |f: usize| f / 8)
}

fn check(role: Role, mix: Mix, input_busy: u64, output_ready: u64, seed: u64) {
    let board = boards::board("au250").unwrap();
    let p = BoardParams::new(board, role, "small", DEFAULT_SEED, 1_000_000).unwrap();
    let mut cfg = config(role, p.preset.sizes(), &mut Rng::new(seed));
    cfg.switch.conn_timeout_us = p.conn_timeout_us;
    let cfg = on_board(cfg, board).unwrap();
    let v = box_bench::verilog(&p).unwrap();
    let model = Model::build(&v, TOP).unwrap();
    let opts = BoxRunOptions {
        frames: frames(),
        seed,
        input_busy,
        output_ready,
        mix,
        inputs: [true; 3],
        min_frames: false,
    };
    let r = box_bench::run(&model, &p, &cfg, &opts).unwrap_or_else(|e| panic!("{e:#}"));
    eprintln!("{role} {mix:?}: {r:?}");
    for s in 0..3 {
        assert!(r.frames_in[s] > 0, "every input stream sent frames: {r:?}");
        assert!(
            r.frames_out[s] > 0,
            "every output stream carried frames: {r:?}"
        );
    }
    assert!(r.controls > 0 && r.axil_reads > 0);
}

#[test]
fn leaf_plugin_matches_the_model_on_every_stream() {
    check(Role::Leaf, Mix::Mixed, 70, 60, 11);
}

#[test]
fn spine_plugin_matches_the_model_on_every_stream() {
    check(Role::Spine, Mix::Mixed, 70, 60, 12);
}

#[test]
fn busy_leaf_plugin_matches_the_model_under_full_input() {
    check(Role::Leaf, Mix::Busy, 100, 80, 13);
}
