//! The whole switches of the default presets, synthesized as `rtl-gen --check` does them
//! (`synth_xilinx -family xcup -uram -nowidelut -nosrl`, flattened): the design's
//! targets hold for both roles, at most 6 LUT levels from register to register, under 20,000
//! LUTs and under 32 RAMB36. The leaf that holds tasks is checked inside its board plug-in, which
//! holds its whole top level (`board_targets.rs`).
//!
//! Yosys maps the flattened switch with ABC as one netlist, and ABC's mapping of one stage moves
//! with changes elsewhere (`docs/pipeline.md`, "Logic depth"): a stage measured alone says little,
//! so the target is checked here, on the switch. Slow: Yosys takes about 5 minutes per role on a
//! 2.1 GHz Xeon; the two roles run side by side.

use horus_hdl_tools::check::{TARGET_LUT_LEVELS, yosys_synth_top};
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_pipeline::presets;
use rtl_gen::outputs::switch;

fn targets_hold(role: Role) {
    let p = presets::preset("default", role).expect("the default preset has both roles");
    let name = p.module_name();
    let verilog = switch::verilog(&p, DEFAULT_SEED, rtl_gen::DEFAULT_CONN_TIMEOUT_US);
    let r = yosys_synth_top(&name, &verilog, &name).expect("the switch synthesizes");
    println!("{name}: {r:#}\n  {}", r.path.join("\n  "));
    let over: Vec<String> = r
        .over_target
        .iter()
        .map(|d| {
            format!(
                "{} levels, {} bits: {} <- {}",
                d.levels, d.bits, d.to, d.from
            )
        })
        .collect();
    assert!(
        r.lut_depth <= TARGET_LUT_LEVELS,
        "{name}: {} LUT levels, target {TARGET_LUT_LEVELS}; the deepest path:\n  {}\nregisters over the target:\n  {}",
        r.lut_depth,
        r.path.join("\n  "),
        over.join("\n  ")
    );
    assert!(r.luts < 20_000, "{name}: {r}");
    assert!(r.ramb36 < 32.0, "{name}: {r}");
}

#[test]
fn the_leaf_meets_the_depth_and_area_targets() {
    targets_hold(Role::Leaf);
}

#[test]
fn the_spine_meets_the_depth_and_area_targets() {
    targets_hold(Role::Spine);
}
