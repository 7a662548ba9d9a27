//! The OpenNIC plug-in of each role at the default preset, synthesized inside the stub of the
//! shell's box as `rtl-gen --board au250 --check` does it, the NetFPGA-PLUS leaf datapath
//! (`nf_datapath` as top), and the JBSQ leaf's OpenNIC plug-in (`--leaf jbsq`): the design's
//! targets hold for them as for the bare switches (`top_targets.rs`), at most 6 LUT levels from
//! register to register, under 20,000 LUTs and 32 RAMB36 (the JBSQ leaf's frame store and task
//! buffer: under 64 URAM288, 5 % of a U250's); the share of each board's part is printed
//! (`--nocapture`). The JBSQ leaf's plug-in holds its whole top level (datapath and register
//! port), so its bare top level is not synthesized again. Slow: Yosys takes about 3 to 4 minutes
//! per run on a 2.1 GHz Xeon.

use horus_hdl_tools::check::{TARGET_LUT_LEVELS, yosys_synth_top};
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::board::boards::{self, BOARDS};
use rtl_gen::boards::{BoardParams, in_shell};

fn targets_hold(board: &str, role: Role) {
    let board = boards::board(board).unwrap();
    let p = BoardParams::new(
        board,
        role,
        "default",
        DEFAULT_SEED,
        rtl_gen::DEFAULT_CONN_TIMEOUT_US,
    )
    .unwrap();
    plugin_targets_hold(&p);
}

fn plugin_targets_hold(p: &BoardParams) {
    let board = p.board;
    let name = p.module_name();
    let (text, top) = in_shell(p).unwrap();
    let r = yosys_synth_top(&name, &text, top).expect("the plug-in synthesizes in the box");
    println!("{name} in {top}: {r:#}");
    for b in BOARDS.iter().filter(|b| b.shell == board.shell) {
        print!("{}", rtl_gen::check::utilization(b, &r));
    }
    assert!(
        r.lut_depth <= TARGET_LUT_LEVELS,
        "{name}: {} LUT levels, target {TARGET_LUT_LEVELS}:\n{}",
        r.lut_depth,
        rtl_gen::check::depth_report(&name, &r, false)
    );
    assert!(r.luts < 20_000, "{name}: {r}");
    assert!(r.ramb36 < 32.0, "{name}: {r}");
    assert!(r.urams < 64, "{name}: {r}");
}

#[test]
fn the_leaf_plugin_meets_the_depth_and_area_targets() {
    targets_hold("au250", Role::Leaf);
}

#[test]
fn the_spine_plugin_meets_the_depth_and_area_targets() {
    targets_hold("au250", Role::Spine);
}

#[test]
fn the_netfpga_leaf_datapath_meets_the_depth_and_area_targets() {
    targets_hold("netfpga-plus", Role::Leaf);
}

#[test]
fn the_jbsq_leaf_plugin_meets_the_depth_and_area_targets() {
    let p = BoardParams::jbsq(
        boards::board("au250").unwrap(),
        "default",
        DEFAULT_SEED,
        rtl_gen::DEFAULT_CONN_TIMEOUT_US,
    )
    .unwrap();
    plugin_targets_hold(&p);
}
