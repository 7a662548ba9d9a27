//! The ingress: frames in, descriptors out in order, slots given back.

use horus_pipeline::ingress::Ingress;
use rust_hdl::prelude::*;

#[test]
fn verilog_is_lint_clean() {
    let mut uut = Ingress::default();
    uut.connect_all();
    let v = horus_pipeline::verilog::emit(&uut);
    horus_pipeline::check::verilator_lint("ingress", &v).unwrap();
}
