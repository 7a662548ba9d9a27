//! A board's plug-in (the switch in the OpenNIC box adapter, or as the NetFPGA-PLUS datapath)
//! against the model, in Verilator: programmed through the plug-in's register window, frames on
//! both CMAC streams and the host stream at once, random back-pressure on every output stream; frames for a port the board
//! lacks dropped and counted in `BOARD_DROPS`.

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

/// A run of the plug-in of `role` for `board`; with `stray`, the nodes whose ID is 2 mod 6 sit
/// behind port 3, which the board lacks (as a configuration that skipped `horusctl check
/// --board` would have them): their frames are dropped by the adapter and counted.
fn check(
    board: &str,
    role: Role,
    mix: Mix,
    input_busy: u64,
    output_ready: u64,
    seed: u64,
    stray: bool,
) -> box_bench::BoxRunReport {
    let board = boards::board(board).unwrap();
    let p = BoardParams::new(board, role, "small", DEFAULT_SEED, 1_000_000).unwrap();
    let mut cfg = config(role, p.preset.sizes(), &mut Rng::new(seed));
    cfg.switch.conn_timeout_us = p.conn_timeout_us;
    let mut cfg = on_board(cfg, board).unwrap();
    if stray {
        for n in cfg.pools.iter_mut().flat_map(|p| p.nodes.iter_mut()) {
            if n.id % 6 == 2 {
                n.port = 3;
            }
        }
    }
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
    r
}

#[test]
fn leaf_plugin_matches_the_model_on_every_stream() {
    check("au250", Role::Leaf, Mix::Mixed, 70, 60, 11, false);
}

#[test]
fn spine_plugin_matches_the_model_on_every_stream() {
    check("au250", Role::Spine, Mix::Mixed, 70, 60, 12, false);
}

#[test]
fn busy_leaf_plugin_matches_the_model_under_full_input() {
    check("au250", Role::Leaf, Mix::Busy, 100, 80, 13, false);
}

#[test]
fn frames_for_a_port_the_board_lacks_are_dropped_and_counted_in_board_drops() {
    let r = check("au250", Role::Leaf, Mix::Busy, 90, 70, 14, true);
    assert!(r.board_drops > 0, "tasks went to the stray nodes: {r:?}");
}

#[test]
fn netfpga_leaf_datapath_matches_the_model_on_every_stream() {
    check("netfpga-plus", Role::Leaf, Mix::Mixed, 70, 60, 15, false);
}

#[test]
fn netfpga_spine_datapath_matches_the_model_and_counts_board_drops() {
    let r = check("netfpga-plus", Role::Spine, Mix::Mixed, 80, 60, 16, true);
    assert!(r.board_drops > 0, "frames went to the stray nodes: {r:?}");
}
