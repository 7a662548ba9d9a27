//! The rack average's rescale (`horus_model::fixed::RackAverage::rescale`), which rust-hdl 0.46
//! cannot express: its `*` takes two 16-bit operands, and widening an operand (`bit_cast`) is not
//! lint clean (`docs/pipeline.md`). [`RescaleMul`] is a few lines of Verilog (`Verilog::Custom`,
//! as the deparser's primitives) with an `update` that does the same in Rust for rust-hdl's
//! simulator; `tests/mul.rs` checks both against the model.
//!
//! The block takes its inputs straight from registers and table outputs, never from logic in the
//! stage's `update`: rust-hdl writes a stage's whole update as one `always @(*)`, and Verilator
//! sees a loop (UNOPTFLAT) when the statements feeding a combinational child are connected to
//! those that read its outputs.

use rust_hdl::prelude::*;

/// `kept = unit == 0 ? 0 : tasks.saturating_sub(removed)`, `acc = kept * unit` (mod 2^64),
/// combinational. The product never exceeds 64 bits: `kept < 2^32`, `unit <= 2^32`.
#[derive(LogicBlock, Default)]
pub struct RescaleMul {
    pub tasks: Signal<In, Bits<32>>,
    /// The integer part of the removed worker's queue (0 when a worker is added).
    pub removed: Signal<In, Bits<16>>,
    /// The new unit, `round(2^32 / workers)`, at most 2^32.
    pub unit: Signal<In, Bits<33>>,
    pub kept: Signal<Out, Bits<32>>,
    pub acc: Signal<Out, Bits<64>>,
}

impl Logic for RescaleMul {
    fn update(&mut self) {
        let tasks: u64 = self.tasks.val().into();
        let removed: u64 = self.removed.val().into();
        let unit: u64 = self.unit.val().into();
        let kept = if unit == 0 {
            0
        } else {
            tasks.saturating_sub(removed)
        };
        self.kept.next = bits(kept);
        self.acc.next = bits(kept.wrapping_mul(unit));
    }

    fn connect(&mut self) {
        self.kept.connect();
        self.acc.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    kept = 32'b0;
    if ((unit != 33'b0) && (tasks > {16'b0, removed})) begin
        kept = tasks - {16'b0, removed};
    end
    acc = {32'b0, kept} * {31'b0, unit};
end"
            .into(),
        )
    }
}
