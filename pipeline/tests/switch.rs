//! The datapath of a switch (ingress, core, egress) against the model's `FrameSwitch`.

use horus_model::config::Role;
use horus_pipeline::presets::Build;
use horus_pipeline::switch::HorusSwitch;
use rust_hdl::prelude::*;

#[test]
fn egress_verilog_is_lint_clean() {
    let mut uut = horus_pipeline::egress::Egress::new(Role::Leaf);
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint("egress", &v).unwrap();
}

#[test]
fn switch_verilog_is_lint_clean() {
    let mut uut = HorusSwitch::<3, 6, 4>::new(Role::Leaf, 1, 60);
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint("switch", &v).unwrap();
}

#[test]
fn top_verilog_is_lint_clean() {
    struct Emit(String);
    impl horus_pipeline::presets::WithTop for Emit {
        type Output = String;
        fn with<B: Block>(self, top: &B) -> String {
            horus_hdl_tools::verilog::emit_named(top, &self.0)
        }
    }
    let p = horus_pipeline::presets::preset("small", Role::Spine).unwrap();
    let v = p.with_top(1, 60, Emit(p.module_name()));
    horus_hdl_tools::check::verilator_lint_top("top", &v, &p.module_name()).unwrap();
}

#[test]
fn opennic_box_verilog_is_lint_clean() {
    struct Emit;
    impl horus_pipeline::presets::WithTop for Emit {
        type Output = String;
        fn with<B: Block>(self, top: &B) -> String {
            horus_hdl_tools::verilog::emit_named(top, "horus_box")
        }
    }
    // Two MAC ports, and one (a stream left out).
    for board in ["au250", "au50"] {
        let b = horus_pipeline::board::boards::board(board).unwrap();
        let p = horus_pipeline::presets::preset("small", Role::Leaf).unwrap();
        let v = p.with_box(b, 1, 60, Emit);
        horus_hdl_tools::check::verilator_lint_top(board, &v, "horus_box").unwrap();
    }
}

#[test]
fn netfpga_datapath_verilog_is_lint_clean() {
    struct Emit;
    impl horus_pipeline::presets::WithTop for Emit {
        type Output = String;
        fn with<B: Block>(self, top: &B) -> String {
            horus_hdl_tools::verilog::emit_named(top, "horus_nf")
        }
    }
    let b = horus_pipeline::board::boards::board("netfpga-plus").unwrap();
    let p = horus_pipeline::presets::preset("small", Role::Leaf).unwrap();
    let v = p.with_box(b, 1, 60, Emit);
    horus_hdl_tools::check::verilator_lint_top("netfpga", &v, "horus_nf").unwrap();
}
