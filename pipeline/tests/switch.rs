//! The datapath of a switch (ingress, core, egress) against the model's `FrameSwitch`.

use horus_model::config::Role;
use horus_pipeline::switch::HorusSwitch;
use rust_hdl::prelude::*;

#[test]
fn egress_verilog_is_lint_clean() {
    let mut uut = horus_pipeline::egress::Egress::new(Role::Leaf);
    uut.connect_all();
    let v = horus_pipeline::verilog::emit(&uut);
    horus_pipeline::check::verilator_lint("egress", &v).unwrap();
}

#[test]
fn switch_verilog_is_lint_clean() {
    let mut uut = HorusSwitch::<3, 6, 4>::new(Role::Leaf, 1, 60);
    uut.connect_all();
    let v = horus_pipeline::verilog::emit(&uut);
    horus_pipeline::check::verilator_lint("switch", &v).unwrap();
}

#[test]
fn top_verilog_is_lint_clean() {
    let p = horus_pipeline::presets::preset("small", Role::Spine).unwrap();
    let v = p.verilog(1, 60);
    horus_pipeline::check::verilator_lint_top("top", &v, &p.module_name()).unwrap();
}
