//! The top level of a Horus switch: the datapath (`switch.rs`) behind the AXI4-Lite control port
//! (`axil.rs`), with the port names a SmartNIC shell expects (Corundum's application block,
//! OpenNIC's 322 MHz box): `clk`, `rst`, `s_axis_*` / `m_axis_*` (512-bit AXI-Stream, the port
//! in `tuser[7:0]`; on the output the frame's length in `tuser[27:16]`), `s_axil_*`. `now_us` is
//! microseconds, wrapping (on a board, from `board::us_clock`). `trace_*` shows every pass
//! entering the stages (`trace_valid`, `trace_pass`), for test benches; unconnected it costs
//! nothing.

use crate::axil::{AXIL_ADDR_BITS, AxiLiteRegs};
use crate::phv::Phv;
use crate::switch::HorusSwitch;
use horus_model::config::Role;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct HorusTop<const P: usize, const N: usize, const C: usize> {
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
    pub trace_pass: Signal<Out, Phv>,
    pub rng_state: Signal<Out, Bits<64>>,
    pub in_flight: Signal<Out, Bits<8>>,
    pub overflow: Signal<Out, Bit>,

    regs: AxiLiteRegs,
    switch: HorusSwitch<P, N, C>,
    /// The ingress port, which the scheduler does not use (the name matches Verilator's
    /// `--unused-regexp`).
    tuser_unused: Signal<Local, Bits<16>>,
    /// `BOARD_DROPS` of a switch with no board adapter around it.
    no_board_drops: Constant<Bits<32>>,
}

impl<const P: usize, const N: usize, const C: usize> HorusTop<P, N, C> {
    pub fn new(role: Role, seed: u64, conn_timeout_us: u32) -> Self {
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
            regs: AxiLiteRegs::new(role, P, N, C, conn_timeout_us),
            switch: HorusSwitch::new(role, seed, conn_timeout_us),
            tuser_unused: Default::default(),
            no_board_drops: Constant::new(0.into()),
        }
    }
}

impl<const P: usize, const N: usize, const C: usize> Logic for HorusTop<P, N, C> {
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
        // Configuration and control passes.
        self.switch.cfg.next = self.regs.cfg.val();
        self.switch.spines.next = self.regs.spines.val();
        self.switch.ctl_valid.next = self.regs.ctl_valid.val();
        self.switch.ctl.next = self.regs.ctl.val();
        self.regs.ctl_ready.next = self.switch.ctl_ready.val();
        self.regs.overflow.next = self.switch.overflow.val();
        self.regs.in_flight.next = self.switch.in_flight.val();
        self.regs.done_valid.next = self.switch.done_valid.val();
        self.regs.done.next = self.switch.done.val();
        self.regs.readback.next = self.switch.readback.val();
        self.regs.readback_valid.next = self.switch.readback_valid.val();
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
