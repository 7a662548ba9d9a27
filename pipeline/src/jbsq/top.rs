//! The top level of the leaf that holds tasks: its datapath ([`JbsqSwitch`]) behind its AXI4-Lite
//! control port ([`JbsqAxiLiteRegs`], the map of `horus_regs::jbsq_map`), with the paper top's
//! ports ([`crate::top::HorusTop`]: the names a SmartNIC shell expects, `now_us`, the trace of
//! every pass entering the stages), so a board adapter or a test bench takes either.

use super::axil::{JbsqAxiLiteRegs, JbsqMapSizes};
use super::phv::JbsqPhv;
use super::switch::JbsqSwitch;
use crate::axil::AXIL_ADDR_BITS;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// The JBSQ leaf for `2^P` pools, `2^N` nodes, `2^R` ring entries, `2^B` buffer slots, `2^C`
/// connection entries and a frame store of `2^SB` beats.
#[derive(LogicBlock)]
pub struct JbsqTop<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    /* AXI-Stream in. */
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bits<16>>,
    /* AXI-Stream out. */
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bits<32>>,
    /* AXI4-Lite. */
    pub s_axil_awaddr: Signal<In, Bits<AXIL_ADDR_BITS>>,
    pub s_axil_awvalid: Signal<In, Bit>,
    pub s_axil_awready: Signal<Out, Bit>,
    pub s_axil_wdata: Signal<In, Bits<32>>,
    pub s_axil_wstrb: Signal<In, Bits<4>>,
    pub s_axil_wvalid: Signal<In, Bit>,
    pub s_axil_wready: Signal<Out, Bit>,
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    pub s_axil_bvalid: Signal<Out, Bit>,
    pub s_axil_bready: Signal<In, Bit>,
    pub s_axil_araddr: Signal<In, Bits<AXIL_ADDR_BITS>>,
    pub s_axil_arvalid: Signal<In, Bit>,
    pub s_axil_arready: Signal<Out, Bit>,
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    pub s_axil_rvalid: Signal<Out, Bit>,
    pub s_axil_rready: Signal<In, Bit>,
    /// Microseconds, wrapping.
    pub now_us: Signal<In, Bits<32>>,
    /* Observation. */
    pub trace_valid: Signal<Out, Bit>,
    /// The pass entering (not `trace`: Verilated models have a method of that name).
    pub trace_pass: Signal<Out, JbsqPhv>,
    pub rng_state: Signal<Out, Bits<64>>,
    pub in_flight: Signal<Out, Bits<8>>,
    pub overflow: Signal<Out, Bit>,

    regs: JbsqAxiLiteRegs,
    switch: JbsqSwitch<P, N, R, B, C, SB>,
    /// The ingress port, which the scheduler does not use (the name matches Verilator's
    /// `--unused-regexp`).
    tuser_unused: Signal<Local, Bits<16>>,
    /// `BOARD_DROPS` of a leaf with no board adapter around it.
    no_board_drops: Constant<Bits<32>>,
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> JbsqTop<P, N, R, B, C, SB>
{
    /// The leaf at `sizes` (the const parameters' sizes), its generator seeded with `seed`, its
    /// connection entries expiring after `conn_timeout_us`.
    pub fn new(sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        let map = JbsqMapSizes::of::<P, N, R, B, C, SB>(sizes);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            now_us: Default::default(),
            trace_valid: Default::default(),
            trace_pass: Default::default(),
            rng_state: Default::default(),
            in_flight: Default::default(),
            overflow: Default::default(),
            regs: JbsqAxiLiteRegs::new(map, conn_timeout_us),
            switch: JbsqSwitch::new(sizes, seed, conn_timeout_us),
            tuser_unused: Default::default(),
            no_board_drops: Constant::new(0.into()),
        }
    }
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> Logic for JbsqTop<P, N, R, B, C, SB>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.regs.clk.next = self.clk.val();
        self.switch.clock.next = self.clk.val();
        self.regs.rst.next = self.rst.val();
        // AXI4-Lite.
        self.regs.s_axil.awaddr.next = self.s_axil_awaddr.val();
        self.regs.s_axil.awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.regs.s_axil.awready.val();
        self.regs.s_axil.wdata.next = self.s_axil_wdata.val();
        self.regs.s_axil.wstrb.next = self.s_axil_wstrb.val();
        self.regs.s_axil.wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.regs.s_axil.wready.val();
        self.s_axil_bresp.next = self.regs.s_axil.bresp.val();
        self.s_axil_bvalid.next = self.regs.s_axil.bvalid.val();
        self.regs.s_axil.bready.next = self.s_axil_bready.val();
        self.regs.s_axil.araddr.next = self.s_axil_araddr.val();
        self.regs.s_axil.arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.regs.s_axil.arready.val();
        self.s_axil_rdata.next = self.regs.s_axil.rdata.val();
        self.s_axil_rresp.next = self.regs.s_axil.rresp.val();
        self.s_axil_rvalid.next = self.regs.s_axil.rvalid.val();
        self.regs.s_axil.rready.next = self.s_axil_rready.val();
        // Configuration, control passes, counters.
        self.switch.cfg.next = self.regs.cfg.val();
        self.switch.spines.next = self.regs.spines.val();
        self.switch.ctl_valid.next = self.regs.ctl_valid.val();
        self.switch.ctl.next = self.regs.ctl.val();
        self.regs.ctl_ready.next = self.switch.ctl_ready.val();
        self.regs.overflow.next = self.switch.overflow.val();
        self.regs.in_flight.next = self.switch.in_flight.val();
        self.regs.done_valid.next = self.switch.done_valid.val();
        self.regs.done.next = self.switch.done.val();
        self.regs.counts.next = self.switch.counts.val();
        self.regs.board_drops.next = self.no_board_drops.val();
        // AXI-Stream.
        self.switch.s_axis_tdata.next = self.s_axis_tdata.val();
        self.switch.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.switch.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.switch.s_axis_tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.switch.s_axis_tready.val();
        self.tuser_unused.next = self.s_axis_tuser.val();
        self.m_axis_tdata.next = self.switch.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.switch.m_axis_tkeep.val();
        self.m_axis_tvalid.next = self.switch.m_axis_tvalid.val();
        self.m_axis_tlast.next = self.switch.m_axis_tlast.val();
        self.m_axis_tuser.next = self.switch.m_axis_tuser.val();
        self.switch.m_axis_tready.next = self.m_axis_tready.val();
        self.switch.now_us.next = self.now_us.val();
        // Observation.
        self.trace_valid.next = self.switch.trace_valid.val();
        self.trace_pass.next = self.switch.trace.val();
        self.rng_state.next = self.switch.rng_state.val();
        self.in_flight.next = self.switch.in_flight.val();
        self.overflow.next = self.switch.overflow.val();
    }
}
