//! The rack average's rescale (`horus_model::fixed::RackAverage::rescale`), which rust-hdl 0.46
//! cannot express: its `*` takes two 16-bit operands, and widening an operand (`bit_cast`) is not
//! lint clean (`docs/pipeline.md`).
//!
//! - [`KeptTasks`]: the tasks a rescale keeps (combinational).
//! - [`PipeMul`]: `kept * unit`, pipelined over three clocks as a DSP wants it: operand
//!   registers, four partial products each registered (a DSP48E2's 27 x 18 multiplier with its
//!   `MREG`), and their sum registered. Built from rust-hdl flip-flops and two combinational
//!   primitives ([`MulParts`], [`SumParts`]).
//!
//! The primitives are a few lines of Verilog each (`Verilog::Custom`, as the deparser's) with an
//! `update` that does the same in Rust for rust-hdl's simulator; `tests/mul.rs` checks both against
//! the model. Their inputs come from registers, ports and other blocks' outputs, never from logic
//! in a stage's `update`: rust-hdl writes a stage's whole update as one `always @(*)`, and
//! Verilator sees a loop (UNOPTFLAT) when the statements feeding a combinational child are
//! connected to those that read its outputs.

use rust_hdl::prelude::*;

/// Clocks from [`PipeMul`]'s operands to its product.
pub const MUL_LATENCY: usize = 3;

/// `kept = unit == 0 ? 0 : tasks.saturating_sub(removed)`: the outstanding tasks a rescale keeps
/// (a pool left without workers forgets them all).
#[derive(LogicBlock, Default)]
pub struct KeptTasks {
    pub tasks: Signal<In, Bits<32>>,
    /// The integer part of the removed worker's queue (0 when a worker is added).
    pub removed: Signal<In, Bits<16>>,
    /// The new unit, `round(2^32 / workers)`, at most 2^32.
    pub unit: Signal<In, Bits<33>>,
    pub kept: Signal<Out, Bits<32>>,
}

impl Logic for KeptTasks {
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
    }

    fn connect(&mut self) {
        self.kept.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    kept = 32'b0;
    if ((unit != 33'b0) && (tasks > {16'b0, removed})) begin
        kept = tasks - {16'b0, removed};
    end
end"
            .into(),
        )
    }
}

/// The four partial products of `a * b` (32 x 33 bits) split at bit 17, each small enough for one
/// DSP48E2 multiplier (unsigned 17 x 17 and smaller): `a = ah·2^17 + al`, `b = bh·2^17 + bl`.
#[derive(LogicBlock, Default)]
pub struct MulParts {
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<33>>,
    /// `al * bl`, `al * bh`, `ah * bl`, and `ah * bh` mod 2^30 (its bits from 30 up would land
    /// above bit 63 of the product).
    pub ll: Signal<Out, Bits<34>>,
    pub lh: Signal<Out, Bits<33>>,
    pub hl: Signal<Out, Bits<32>>,
    pub hh: Signal<Out, Bits<30>>,
}

impl Logic for MulParts {
    fn update(&mut self) {
        let a: u64 = self.a.val().into();
        let b: u64 = self.b.val().into();
        let (al, ah) = (a & 0x1_ffff, a >> 17);
        let (bl, bh) = (b & 0x1_ffff, b >> 17);
        self.ll.next = bits(al * bl);
        self.lh.next = bits(al * bh);
        self.hl.next = bits(ah * bl);
        self.hh.next = bits((ah * bh) & ((1 << 30) - 1));
    }

    fn connect(&mut self) {
        self.ll.connect();
        self.lh.connect();
        self.hl.connect();
        self.hh.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    ll = {17'b0, a[16:0]} * {17'b0, b[16:0]};
    lh = {16'b0, a[16:0]} * {17'b0, b[32:17]};
    hl = {17'b0, a[31:17]} * {15'b0, b[16:0]};
    hh = {15'b0, a[31:17]} * {14'b0, b[32:17]};
end"
            .into(),
        )
    }
}

/// The product from its partial products: `ll + (lh + hl)·2^17 + hh·2^34` (mod 2^64; the product of
/// a 32-bit and a 33-bit operand needs 65 bits, but a rescale's never exceeds 64).
#[derive(LogicBlock, Default)]
pub struct SumParts {
    pub ll: Signal<In, Bits<34>>,
    pub lh: Signal<In, Bits<33>>,
    pub hl: Signal<In, Bits<32>>,
    pub hh: Signal<In, Bits<30>>,
    pub p: Signal<Out, Bits<64>>,
}

impl Logic for SumParts {
    fn update(&mut self) {
        let ll: u64 = self.ll.val().into();
        let lh: u64 = self.lh.val().into();
        let hl: u64 = self.hl.val().into();
        let hh: u64 = self.hh.val().into();
        let p = ll
            .wrapping_add(lh.wrapping_add(hl) << 17)
            .wrapping_add(hh << 34);
        self.p.next = bits(p);
    }

    fn connect(&mut self) {
        self.p.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    p = {30'b0, ll} + {14'b0, lh, 17'b0} + {15'b0, hl, 17'b0} + {hh, 34'b0};
end"
            .into(),
        )
    }
}

/// `p = a * b` (mod 2^64), [`MUL_LATENCY`] clocks after `a` and `b` were presented; one product
/// per clock.
#[derive(LogicBlock, Default)]
pub struct PipeMul {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<33>>,
    pub p: Signal<Out, Bits<64>>,
    a_r: DFF<Bits<32>>,
    b_r: DFF<Bits<33>>,
    parts: MulParts,
    ll_r: DFF<Bits<34>>,
    lh_r: DFF<Bits<33>>,
    hl_r: DFF<Bits<32>>,
    hh_r: DFF<Bits<30>>,
    sum: SumParts,
    p_r: DFF<Bits<64>>,
}

impl Logic for PipeMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, a_r, b_r, ll_r, lh_r, hl_r, hh_r, p_r);
        self.a_r.d.next = self.a.val();
        self.b_r.d.next = self.b.val();
        self.parts.a.next = self.a_r.q.val();
        self.parts.b.next = self.b_r.q.val();
        self.ll_r.d.next = self.parts.ll.val();
        self.lh_r.d.next = self.parts.lh.val();
        self.hl_r.d.next = self.parts.hl.val();
        self.hh_r.d.next = self.parts.hh.val();
        self.sum.ll.next = self.ll_r.q.val();
        self.sum.lh.next = self.lh_r.q.val();
        self.sum.hl.next = self.hl_r.q.val();
        self.sum.hh.next = self.hh_r.q.val();
        self.p_r.d.next = self.sum.p.val();
        self.p.next = self.p_r.q.val();
    }
}
