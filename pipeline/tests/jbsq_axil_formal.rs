//! The JBSQ leaf's AXI4-Lite port (`horus_pipeline::jbsq::axil::JbsqAxiLiteRegs`), proven with
//! the paper port's harness (`tests/formal/axil.sv`, `tests/axil.rs`) on its own map
//! (`horus_regs::jbsq_map`): one response per request with the right codes, the register file
//! written only by an accepted write and holding what the last write to each byte wrote, and a
//! staged control pass with exactly one of the JBSQ leaf's operations and no packet's or second
//! pass's flag: what the JBSQ core's contract assumes of a control pass
//! (`tests/jbsq_admission.rs`). Where the port's words land is tested field by field against
//! the model's driver (`tests/jbsq_top.rs`).

use horus_hdl_tools::check::{self, Proof};
use horus_hdl_tools::verilog::emit;
use horus_pipeline::jbsq::axil::{JbsqAxiLiteRegs, JbsqMapSizes};
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap;
use rust_hdl::prelude::*;

mod contract;
mod jbsq_common;
use jbsq_common::flags::{CONTROL, PACKET, SECOND, bits};

/// The small preset's sizes (`JbsqSizes::SMALL`).
const SIZES: JbsqMapSizes = JbsqMapSizes {
    pool_bits: 2,
    node_bits: 6,
    conn_bits: 6,
    ring_bits: 10,
    buffer_bits: 6,
    slot_bytes: 256,
};

/// The induction closes at 4 cycles (a read is answered two cycles after it is taken).
const DEPTH: u32 = 4;

fn verilog() -> String {
    let mut uut = JbsqAxiLiteRegs::new(SIZES, 1000);
    uut.connect_all();
    check::with_probes(&emit(&uut), &["regs$q"])
}

fn files(verilog: &str) -> [(&'static str, String); 2] {
    let rw = jbsq_map::rw_words();
    let h = check::harness(include_str!("formal/axil.sv"), verilog)
        .replace("@FIRST_RW@", &rw.start().to_string())
        .replace("@LAST_RW@", &rw.end().to_string())
        .replace("@GO@", &regmap::fields::CTL_GO.word.to_string())
        .replace("@WORDS@", &regmap::WORDS.to_string())
        .replace("@OPS@", &fields::CTL_CONFIGURE_POOL.word.to_string())
        .replace("@CTL_OPS@", &contract::count("ctl", &bits(&CONTROL)))
        .replace(
            "@CTL_OTHER@",
            &format!(
                "({} | {})",
                contract::any("ctl", &bits(&SECOND)),
                contract::any("ctl", &bits(&PACKET))
            ),
        );
    [("top.v", verilog.to_string()), ("harness.sv", h)]
}

/// The port's AXI4-Lite rules and its staging, for every request sequence, at every depth.
#[test]
fn the_jbsq_ports_rules_and_staging_are_proven_for_every_request_sequence() {
    let [a, b] = files(&verilog());
    assert_eq!(
        check::prove_inductive("jbsq_axil", &[(a.0, &a.1), (b.0, &b.1)], "harness", DEPTH).unwrap(),
        Proof::Proven { depth: DEPTH }
    );
}

/// The staging claim fails on a port that lets the operation flags be rewritten while a staged
/// pass waits (a second operation ORed into the pass the core is about to take): refuted from
/// reset (a write, the doorbell, a second write).
#[test]
fn the_jbsq_staging_proof_fails_when_the_operation_is_rewritten_while_staged() {
    let v = verilog();
    let from = "op_held = (wword == w_ops) & pending$q;";
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = files(&v.replace(from, "op_held = 1'b0;"));
    let step = check::refute(
        "jbsq_axil_mutant",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        6,
    )
    .unwrap();
    eprintln!("the operation rewritten while staged: fails at step {step}");
}
