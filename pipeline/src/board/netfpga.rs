//! The switch as a NetFPGA-PLUS datapath (`nf_datapath`): three 512-bit streams in and out
//! (`0`: CMAC 0, `1`: CMAC 1, `2`: the host's DMA, as the shell's `top.v` connects them on an
//! Alveo U250), three AXI4-Lite register windows, one datapath clock.
//!
//! ```text
//!  s0_axi ─────────────────────────────> ┌─────────────┐
//!  s_axis_0 (cmac0) ─┐                   │ BoardSwitch │                 ┌─ m_axis_0 (cmac0)
//!  s_axis_1 (cmac1) ─┼─ FrameArbiter3 ─> │ (the switch)│ ── FrameDemux3 ─┼─ m_axis_1 (cmac1)
//!  s_axis_2 (host0) ─┘                   └─────────────┘                 └─ m_axis_2 (host0)
//!  s1_axi, s2_axi ── AxilRefuse (SLVERR)
//! ```
//!
//! - Streams: `tuser` on the inputs is not read; on the outputs it is NetFPGA's: the frame's length
//!   in `[15:0]`, the source ports in `[23:16]` (none: 0), the destination port one-hot in
//!   `[31:24]` (CMAC 0 bit 0, the host's DMA bit 1, CMAC 1 bit 2; `nf_attachment.sv`).
//! - Registers: the switch's in the first window (`s0_axi_*`, addresses from the window's base,
//!   byte strobes honoured) through `BoardSwitch`'s bridge (the datapath's two clock inputs may
//!   differ; the shell's `top.v` gives both the datapath clock). The other two windows answer every access
//!   `SLVERR`.
//! - Reset: `axis_resetn` and `axi_resetn` (active low) clear the register path's transaction
//!   state; frames keep moving and the tables keep their contents.
//! - Time: `now_us` counts the datapath clock, `clock_mhz` cycles a microsecond.

use crate::arith::ZeroExtend;
use crate::axil_bus::AxilSub;
use crate::board::arbiter::FrameArbiter3;
use crate::board::board_switch::{BoardSwitch, JbsqBoardSwitch};
use crate::board::boards::Board;
use crate::board::demux::FrameDemux3;
use horus_model::config::Role;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// `tuser[31:24]` (the destination, one-hot) of each output stream.
pub const TUSER_DST: [u64; 3] = [1 << 0, 1 << 2, 1 << 1];

/// An AXI4-Lite window that answers every access `SLVERR` (reads return 0), one at a time.
#[derive(LogicBlock)]
pub struct AxilRefuse {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axil: AxilSub<32>,
    aw_got: DFF<Bit>,
    w_got: DFF<Bit>,
    b_pending: DFF<Bit>,
    r_pending: DFF<Bit>,
    /// What is not read (names match Verilator's `--unused-regexp`).
    awaddr_unused: Signal<Local, Bits<32>>,
    araddr_unused: Signal<Local, Bits<32>>,
    data_unused: Signal<Local, Bits<32>>,
    strb_unused: Signal<Local, Bits<4>>,
    slverr: Constant<Bits<2>>,
    zero32: Constant<Bits<32>>,
}

impl Default for AxilRefuse {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_axil: Default::default(),
            aw_got: Default::default(),
            w_got: Default::default(),
            b_pending: Default::default(),
            r_pending: Default::default(),
            awaddr_unused: Default::default(),
            araddr_unused: Default::default(),
            data_unused: Default::default(),
            strb_unused: Default::default(),
            slverr: Constant::new(0b10.into()),
            zero32: Constant::new(0.into()),
        }
    }
}

impl Logic for AxilRefuse {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, aw_got, w_got, b_pending, r_pending);
        self.awaddr_unused.next = self.s_axil.awaddr.val();
        self.araddr_unused.next = self.s_axil.araddr.val();
        self.data_unused.next = self.s_axil.wdata.val();
        self.strb_unused.next = self.s_axil.wstrb.val();
        self.s_axil.awready.next = !self.aw_got.q.val() & !self.b_pending.q.val();
        self.s_axil.wready.next = !self.w_got.q.val() & !self.b_pending.q.val();
        self.s_axil.arready.next = !self.r_pending.q.val();
        if self.s_axil.awvalid.val() & !self.aw_got.q.val() & !self.b_pending.q.val() {
            self.aw_got.d.next = true;
        }
        if self.s_axil.wvalid.val() & !self.w_got.q.val() & !self.b_pending.q.val() {
            self.w_got.d.next = true;
        }
        if self.aw_got.q.val() & self.w_got.q.val() {
            self.aw_got.d.next = false;
            self.w_got.d.next = false;
            self.b_pending.d.next = true;
        }
        if self.b_pending.q.val() & self.s_axil.bready.val() {
            self.b_pending.d.next = false;
        }
        if self.s_axil.arvalid.val() & !self.r_pending.q.val() {
            self.r_pending.d.next = true;
        }
        if self.r_pending.q.val() & self.s_axil.rready.val() {
            self.r_pending.d.next = false;
        }
        self.s_axil.bvalid.next = self.b_pending.q.val();
        self.s_axil.bresp.next = self.slverr.val();
        self.s_axil.rvalid.next = self.r_pending.q.val();
        self.s_axil.rresp.next = self.slverr.val();
        self.s_axil.rdata.next = self.zero32.val();
        if self.reset.val() {
            self.aw_got.d.next = false;
            self.w_got.d.next = false;
            self.b_pending.d.next = false;
            self.r_pending.d.next = false;
        }
    }
}

/// Defines the datapath `$name<$g...>` around the board's switch `$core`.
macro_rules! netfpga_datapath {
    ($(#[$attr:meta])* $name:ident [$($g:ident),*], $core:ty) => {
        $(#[$attr])*
        #[derive(LogicBlock)]
        pub struct $name<$(const $g: usize),*> {
            /// The datapath clock and the register windows' clock (the shell's `top.v` gives both the
            /// same), each with its active-low reset.
            pub axis_aclk: Signal<In, Clock>,
            pub axis_resetn: Signal<In, Bit>,
            pub axi_aclk: Signal<In, Clock>,
            pub axi_resetn: Signal<In, Bit>,
            pub s0_axi_awaddr: Signal<In, Bits<32>>,
            pub s0_axi_awvalid: Signal<In, Bit>,
            pub s0_axi_wdata: Signal<In, Bits<32>>,
            pub s0_axi_wstrb: Signal<In, Bits<4>>,
            pub s0_axi_wvalid: Signal<In, Bit>,
            pub s0_axi_bready: Signal<In, Bit>,
            pub s0_axi_araddr: Signal<In, Bits<32>>,
            pub s0_axi_arvalid: Signal<In, Bit>,
            pub s0_axi_rready: Signal<In, Bit>,
            pub s0_axi_arready: Signal<Out, Bit>,
            pub s0_axi_rdata: Signal<Out, Bits<32>>,
            pub s0_axi_rresp: Signal<Out, Bits<2>>,
            pub s0_axi_rvalid: Signal<Out, Bit>,
            pub s0_axi_wready: Signal<Out, Bit>,
            pub s0_axi_bresp: Signal<Out, Bits<2>>,
            pub s0_axi_bvalid: Signal<Out, Bit>,
            pub s0_axi_awready: Signal<Out, Bit>,
            pub s1_axi_awaddr: Signal<In, Bits<32>>,
            pub s1_axi_awvalid: Signal<In, Bit>,
            pub s1_axi_wdata: Signal<In, Bits<32>>,
            pub s1_axi_wstrb: Signal<In, Bits<4>>,
            pub s1_axi_wvalid: Signal<In, Bit>,
            pub s1_axi_bready: Signal<In, Bit>,
            pub s1_axi_araddr: Signal<In, Bits<32>>,
            pub s1_axi_arvalid: Signal<In, Bit>,
            pub s1_axi_rready: Signal<In, Bit>,
            pub s1_axi_arready: Signal<Out, Bit>,
            pub s1_axi_rdata: Signal<Out, Bits<32>>,
            pub s1_axi_rresp: Signal<Out, Bits<2>>,
            pub s1_axi_rvalid: Signal<Out, Bit>,
            pub s1_axi_wready: Signal<Out, Bit>,
            pub s1_axi_bresp: Signal<Out, Bits<2>>,
            pub s1_axi_bvalid: Signal<Out, Bit>,
            pub s1_axi_awready: Signal<Out, Bit>,
            pub s2_axi_awaddr: Signal<In, Bits<32>>,
            pub s2_axi_awvalid: Signal<In, Bit>,
            pub s2_axi_wdata: Signal<In, Bits<32>>,
            pub s2_axi_wstrb: Signal<In, Bits<4>>,
            pub s2_axi_wvalid: Signal<In, Bit>,
            pub s2_axi_bready: Signal<In, Bit>,
            pub s2_axi_araddr: Signal<In, Bits<32>>,
            pub s2_axi_arvalid: Signal<In, Bit>,
            pub s2_axi_rready: Signal<In, Bit>,
            pub s2_axi_arready: Signal<Out, Bit>,
            pub s2_axi_rdata: Signal<Out, Bits<32>>,
            pub s2_axi_rresp: Signal<Out, Bits<2>>,
            pub s2_axi_rvalid: Signal<Out, Bit>,
            pub s2_axi_wready: Signal<Out, Bit>,
            pub s2_axi_bresp: Signal<Out, Bits<2>>,
            pub s2_axi_bvalid: Signal<Out, Bit>,
            pub s2_axi_awready: Signal<Out, Bit>,
            pub s_axis_0_tdata: Signal<In, Bits<512>>,
            pub s_axis_0_tkeep: Signal<In, Bits<64>>,
            pub s_axis_0_tuser: Signal<In, Bits<128>>,
            pub s_axis_0_tvalid: Signal<In, Bit>,
            pub s_axis_0_tready: Signal<Out, Bit>,
            pub s_axis_0_tlast: Signal<In, Bit>,
            pub s_axis_1_tdata: Signal<In, Bits<512>>,
            pub s_axis_1_tkeep: Signal<In, Bits<64>>,
            pub s_axis_1_tuser: Signal<In, Bits<128>>,
            pub s_axis_1_tvalid: Signal<In, Bit>,
            pub s_axis_1_tready: Signal<Out, Bit>,
            pub s_axis_1_tlast: Signal<In, Bit>,
            pub s_axis_2_tdata: Signal<In, Bits<512>>,
            pub s_axis_2_tkeep: Signal<In, Bits<64>>,
            pub s_axis_2_tuser: Signal<In, Bits<128>>,
            pub s_axis_2_tvalid: Signal<In, Bit>,
            pub s_axis_2_tready: Signal<Out, Bit>,
            pub s_axis_2_tlast: Signal<In, Bit>,
            pub m_axis_0_tdata: Signal<Out, Bits<512>>,
            pub m_axis_0_tkeep: Signal<Out, Bits<64>>,
            pub m_axis_0_tuser: Signal<Out, Bits<128>>,
            pub m_axis_0_tvalid: Signal<Out, Bit>,
            pub m_axis_0_tready: Signal<In, Bit>,
            pub m_axis_0_tlast: Signal<Out, Bit>,
            pub m_axis_1_tdata: Signal<Out, Bits<512>>,
            pub m_axis_1_tkeep: Signal<Out, Bits<64>>,
            pub m_axis_1_tuser: Signal<Out, Bits<128>>,
            pub m_axis_1_tvalid: Signal<Out, Bit>,
            pub m_axis_1_tready: Signal<In, Bit>,
            pub m_axis_1_tlast: Signal<Out, Bit>,
            pub m_axis_2_tdata: Signal<Out, Bits<512>>,
            pub m_axis_2_tkeep: Signal<Out, Bits<64>>,
            pub m_axis_2_tuser: Signal<Out, Bits<128>>,
            pub m_axis_2_tvalid: Signal<Out, Bit>,
            pub m_axis_2_tready: Signal<In, Bit>,
            pub m_axis_2_tlast: Signal<Out, Bit>,

            refuse1: AxilRefuse,
            refuse2: AxilRefuse,
            core: $core,
            arb: FrameArbiter3,
            demux: FrameDemux3,
            len: ZeroExtend<12, 128>,
            dst0: Constant<Bits<128>>,
            dst1: Constant<Bits<128>>,
            dst2: Constant<Bits<128>>,
            /// What this datapath does not use (names match Verilator's `--unused-regexp`).
            tuser0_unused: Signal<Local, Bits<128>>,
            tuser1_unused: Signal<Local, Bits<128>>,
            tuser2_unused: Signal<Local, Bits<128>>,
            src_unused: Signal<Local, Bits<2>>,
        }

        impl<$(const $g: usize),*> $name<$($g),*> {
            /// The datapath for `board` (NetFPGA-PLUS: its clock and streams) around `core`.
            pub fn around(board: &Board, core: $core) -> Self {
                Self {
                    axis_aclk: Default::default(),
                    axis_resetn: Default::default(),
                    axi_aclk: Default::default(),
                    axi_resetn: Default::default(),
                    s0_axi_awaddr: Default::default(),
                    s0_axi_awvalid: Default::default(),
                    s0_axi_wdata: Default::default(),
                    s0_axi_wstrb: Default::default(),
                    s0_axi_wvalid: Default::default(),
                    s0_axi_bready: Default::default(),
                    s0_axi_araddr: Default::default(),
                    s0_axi_arvalid: Default::default(),
                    s0_axi_rready: Default::default(),
                    s0_axi_arready: Default::default(),
                    s0_axi_rdata: Default::default(),
                    s0_axi_rresp: Default::default(),
                    s0_axi_rvalid: Default::default(),
                    s0_axi_wready: Default::default(),
                    s0_axi_bresp: Default::default(),
                    s0_axi_bvalid: Default::default(),
                    s0_axi_awready: Default::default(),
                    s1_axi_awaddr: Default::default(),
                    s1_axi_awvalid: Default::default(),
                    s1_axi_wdata: Default::default(),
                    s1_axi_wstrb: Default::default(),
                    s1_axi_wvalid: Default::default(),
                    s1_axi_bready: Default::default(),
                    s1_axi_araddr: Default::default(),
                    s1_axi_arvalid: Default::default(),
                    s1_axi_rready: Default::default(),
                    s1_axi_arready: Default::default(),
                    s1_axi_rdata: Default::default(),
                    s1_axi_rresp: Default::default(),
                    s1_axi_rvalid: Default::default(),
                    s1_axi_wready: Default::default(),
                    s1_axi_bresp: Default::default(),
                    s1_axi_bvalid: Default::default(),
                    s1_axi_awready: Default::default(),
                    s2_axi_awaddr: Default::default(),
                    s2_axi_awvalid: Default::default(),
                    s2_axi_wdata: Default::default(),
                    s2_axi_wstrb: Default::default(),
                    s2_axi_wvalid: Default::default(),
                    s2_axi_bready: Default::default(),
                    s2_axi_araddr: Default::default(),
                    s2_axi_arvalid: Default::default(),
                    s2_axi_rready: Default::default(),
                    s2_axi_arready: Default::default(),
                    s2_axi_rdata: Default::default(),
                    s2_axi_rresp: Default::default(),
                    s2_axi_rvalid: Default::default(),
                    s2_axi_wready: Default::default(),
                    s2_axi_bresp: Default::default(),
                    s2_axi_bvalid: Default::default(),
                    s2_axi_awready: Default::default(),
                    s_axis_0_tdata: Default::default(),
                    s_axis_0_tkeep: Default::default(),
                    s_axis_0_tuser: Default::default(),
                    s_axis_0_tvalid: Default::default(),
                    s_axis_0_tready: Default::default(),
                    s_axis_0_tlast: Default::default(),
                    s_axis_1_tdata: Default::default(),
                    s_axis_1_tkeep: Default::default(),
                    s_axis_1_tuser: Default::default(),
                    s_axis_1_tvalid: Default::default(),
                    s_axis_1_tready: Default::default(),
                    s_axis_1_tlast: Default::default(),
                    s_axis_2_tdata: Default::default(),
                    s_axis_2_tkeep: Default::default(),
                    s_axis_2_tuser: Default::default(),
                    s_axis_2_tvalid: Default::default(),
                    s_axis_2_tready: Default::default(),
                    s_axis_2_tlast: Default::default(),
                    m_axis_0_tdata: Default::default(),
                    m_axis_0_tkeep: Default::default(),
                    m_axis_0_tuser: Default::default(),
                    m_axis_0_tvalid: Default::default(),
                    m_axis_0_tready: Default::default(),
                    m_axis_0_tlast: Default::default(),
                    m_axis_1_tdata: Default::default(),
                    m_axis_1_tkeep: Default::default(),
                    m_axis_1_tuser: Default::default(),
                    m_axis_1_tvalid: Default::default(),
                    m_axis_1_tready: Default::default(),
                    m_axis_1_tlast: Default::default(),
                    m_axis_2_tdata: Default::default(),
                    m_axis_2_tkeep: Default::default(),
                    m_axis_2_tuser: Default::default(),
                    m_axis_2_tvalid: Default::default(),
                    m_axis_2_tready: Default::default(),
                    m_axis_2_tlast: Default::default(),
                    refuse1: AxilRefuse::default(),
                    refuse2: AxilRefuse::default(),
                    core,
                    arb: Default::default(),
                    demux: FrameDemux3::new(board.streams()),
                    len: Default::default(),
                    dst0: Constant::new((TUSER_DST[0] << 24).into()),
                    dst1: Constant::new((TUSER_DST[1] << 24).into()),
                    dst2: Constant::new((TUSER_DST[2] << 24).into()),
                    tuser0_unused: Default::default(),
                    tuser1_unused: Default::default(),
                    tuser2_unused: Default::default(),
                    src_unused: Default::default(),
                }
            }
        }

        impl<$(const $g: usize),*> Logic for $name<$($g),*> {
            #[hdl_gen]
            fn update(&mut self) {
                self.core.clock.next = self.axis_aclk.val();
                self.core.axil_clock.next = self.axi_aclk.val();
                self.arb.clock.next = self.axis_aclk.val();
                self.demux.clock.next = self.axis_aclk.val();
                self.refuse1.clock.next = self.axi_aclk.val();
                self.refuse2.clock.next = self.axi_aclk.val();
                self.core.axil_reset.next = !self.axi_resetn.val();
                self.refuse1.reset.next = !self.axi_resetn.val();
                self.refuse2.reset.next = !self.axi_resetn.val();
                self.core.reset.next = !self.axis_resetn.val();
                // Frames are never cut by a reset.
                self.arb.reset.next = false;
                self.demux.reset.next = false;
                // ---- Window 0: the switch's registers.
                self.core.s_axil.awaddr.next = self.s0_axi_awaddr.val();
                self.core.s_axil.awvalid.next = self.s0_axi_awvalid.val();
                self.core.s_axil.wdata.next = self.s0_axi_wdata.val();
                self.core.s_axil.wstrb.next = self.s0_axi_wstrb.val();
                self.core.s_axil.wvalid.next = self.s0_axi_wvalid.val();
                self.core.s_axil.bready.next = self.s0_axi_bready.val();
                self.core.s_axil.araddr.next = self.s0_axi_araddr.val();
                self.core.s_axil.arvalid.next = self.s0_axi_arvalid.val();
                self.core.s_axil.rready.next = self.s0_axi_rready.val();
                self.s0_axi_awready.next = self.core.s_axil.awready.val();
                self.s0_axi_wready.next = self.core.s_axil.wready.val();
                self.s0_axi_bresp.next = self.core.s_axil.bresp.val();
                self.s0_axi_bvalid.next = self.core.s_axil.bvalid.val();
                self.s0_axi_arready.next = self.core.s_axil.arready.val();
                self.s0_axi_rdata.next = self.core.s_axil.rdata.val();
                self.s0_axi_rresp.next = self.core.s_axil.rresp.val();
                self.s0_axi_rvalid.next = self.core.s_axil.rvalid.val();
                // ---- Windows 1 and 2: refused.
                self.refuse1.s_axil.awaddr.next = self.s1_axi_awaddr.val();
                self.refuse1.s_axil.awvalid.next = self.s1_axi_awvalid.val();
                self.refuse1.s_axil.wdata.next = self.s1_axi_wdata.val();
                self.refuse1.s_axil.wstrb.next = self.s1_axi_wstrb.val();
                self.refuse1.s_axil.wvalid.next = self.s1_axi_wvalid.val();
                self.refuse1.s_axil.bready.next = self.s1_axi_bready.val();
                self.refuse1.s_axil.araddr.next = self.s1_axi_araddr.val();
                self.refuse1.s_axil.arvalid.next = self.s1_axi_arvalid.val();
                self.refuse1.s_axil.rready.next = self.s1_axi_rready.val();
                self.s1_axi_arready.next = self.refuse1.s_axil.arready.val();
                self.s1_axi_rdata.next = self.refuse1.s_axil.rdata.val();
                self.s1_axi_rresp.next = self.refuse1.s_axil.rresp.val();
                self.s1_axi_rvalid.next = self.refuse1.s_axil.rvalid.val();
                self.s1_axi_wready.next = self.refuse1.s_axil.wready.val();
                self.s1_axi_bresp.next = self.refuse1.s_axil.bresp.val();
                self.s1_axi_bvalid.next = self.refuse1.s_axil.bvalid.val();
                self.s1_axi_awready.next = self.refuse1.s_axil.awready.val();
                self.refuse2.s_axil.awaddr.next = self.s2_axi_awaddr.val();
                self.refuse2.s_axil.awvalid.next = self.s2_axi_awvalid.val();
                self.refuse2.s_axil.wdata.next = self.s2_axi_wdata.val();
                self.refuse2.s_axil.wstrb.next = self.s2_axi_wstrb.val();
                self.refuse2.s_axil.wvalid.next = self.s2_axi_wvalid.val();
                self.refuse2.s_axil.bready.next = self.s2_axi_bready.val();
                self.refuse2.s_axil.araddr.next = self.s2_axi_araddr.val();
                self.refuse2.s_axil.arvalid.next = self.s2_axi_arvalid.val();
                self.refuse2.s_axil.rready.next = self.s2_axi_rready.val();
                self.s2_axi_arready.next = self.refuse2.s_axil.arready.val();
                self.s2_axi_rdata.next = self.refuse2.s_axil.rdata.val();
                self.s2_axi_rresp.next = self.refuse2.s_axil.rresp.val();
                self.s2_axi_rvalid.next = self.refuse2.s_axil.rvalid.val();
                self.s2_axi_wready.next = self.refuse2.s_axil.wready.val();
                self.s2_axi_bresp.next = self.refuse2.s_axil.bresp.val();
                self.s2_axi_bvalid.next = self.refuse2.s_axil.bvalid.val();
                self.s2_axi_awready.next = self.refuse2.s_axil.awready.val();
                // ---- Streams in: merged frame by frame; their `tuser` is not read.
                self.arb.s0_tdata.next = self.s_axis_0_tdata.val();
                self.arb.s0_tkeep.next = self.s_axis_0_tkeep.val();
                self.arb.s0_tvalid.next = self.s_axis_0_tvalid.val();
                self.arb.s0_tlast.next = self.s_axis_0_tlast.val();
                self.s_axis_0_tready.next = self.arb.s0_tready.val();
                self.tuser0_unused.next = self.s_axis_0_tuser.val();
                self.arb.s1_tdata.next = self.s_axis_1_tdata.val();
                self.arb.s1_tkeep.next = self.s_axis_1_tkeep.val();
                self.arb.s1_tvalid.next = self.s_axis_1_tvalid.val();
                self.arb.s1_tlast.next = self.s_axis_1_tlast.val();
                self.s_axis_1_tready.next = self.arb.s1_tready.val();
                self.tuser1_unused.next = self.s_axis_1_tuser.val();
                self.arb.s2_tdata.next = self.s_axis_2_tdata.val();
                self.arb.s2_tkeep.next = self.s_axis_2_tkeep.val();
                self.arb.s2_tvalid.next = self.s_axis_2_tvalid.val();
                self.arb.s2_tlast.next = self.s_axis_2_tlast.val();
                self.s_axis_2_tready.next = self.arb.s2_tready.val();
                self.tuser2_unused.next = self.s_axis_2_tuser.val();
                self.core.s_tdata.next = self.arb.m_tdata.val();
                self.core.s_tkeep.next = self.arb.m_tkeep.val();
                self.core.s_tvalid.next = self.arb.m_tvalid.val();
                self.core.s_tlast.next = self.arb.m_tlast.val();
                self.arb.m_tready.next = self.core.s_tready.val();
                self.src_unused.next = self.arb.m_src.val();
                // ---- Streams out: by egress port, NetFPGA's `tuser` on each.
                self.demux.s_tdata.next = self.core.m_tdata.val();
                self.demux.s_tkeep.next = self.core.m_tkeep.val();
                self.demux.s_tvalid.next = self.core.m_tvalid.val();
                self.demux.s_tlast.next = self.core.m_tlast.val();
                self.demux.s_tuser.next = self.core.m_tuser.val();
                self.core.m_tready.next = self.demux.s_tready.val();
                self.core.board_drops.next = self.demux.dropped.val();
                self.len.narrow.next = self.demux.m_len.val();
                self.m_axis_0_tdata.next = self.demux.m0_tdata.val();
                self.m_axis_0_tkeep.next = self.demux.m0_tkeep.val();
                self.m_axis_0_tvalid.next = self.demux.m0_tvalid.val();
                self.m_axis_0_tlast.next = self.demux.m0_tlast.val();
                self.demux.m0_tready.next = self.m_axis_0_tready.val();
                self.m_axis_0_tuser.next = self.len.wide.val() | self.dst0.val();
                self.m_axis_1_tdata.next = self.demux.m1_tdata.val();
                self.m_axis_1_tkeep.next = self.demux.m1_tkeep.val();
                self.m_axis_1_tvalid.next = self.demux.m1_tvalid.val();
                self.m_axis_1_tlast.next = self.demux.m1_tlast.val();
                self.demux.m1_tready.next = self.m_axis_1_tready.val();
                self.m_axis_1_tuser.next = self.len.wide.val() | self.dst1.val();
                self.m_axis_2_tdata.next = self.demux.m2_tdata.val();
                self.m_axis_2_tkeep.next = self.demux.m2_tkeep.val();
                self.m_axis_2_tvalid.next = self.demux.m2_tvalid.val();
                self.m_axis_2_tlast.next = self.demux.m2_tlast.val();
                self.demux.m2_tready.next = self.m_axis_2_tready.val();
                self.m_axis_2_tuser.next = self.len.wide.val() | self.dst2.val();
            }
        }
    };
}

netfpga_datapath!(
    /// The paper's switch (leaf or spine) as the datapath.
    NetFpgaDatapath [P, N, C],
    BoardSwitch<P, N, C>
);

netfpga_datapath!(
    /// The leaf that holds tasks as the datapath.
    NetFpgaJbsqDatapath [P, N, R, B, C, SB],
    JbsqBoardSwitch<P, N, R, B, C, SB>
);

impl<const P: usize, const N: usize, const C: usize> NetFpgaDatapath<P, N, C> {
    /// The datapath for `board` (NetFPGA-PLUS: its clock and streams) with the switch of `role`
    /// whose generator starts at `seed` and whose connection entries expire after
    /// `conn_timeout_us`.
    pub fn new(board: &Board, role: Role, seed: u64, conn_timeout_us: u32) -> Self {
        Self::around(
            board,
            BoardSwitch::new(role, seed, conn_timeout_us, board.clock_mhz),
        )
    }
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> NetFpgaJbsqDatapath<P, N, R, B, C, SB>
{
    /// The datapath for `board` with the JBSQ leaf at `sizes` (the const parameters' sizes)
    /// whose generator starts at `seed` and whose connection entries expire after
    /// `conn_timeout_us`.
    pub fn new(board: &Board, sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        Self::around(
            board,
            JbsqBoardSwitch::new(sizes, seed, conn_timeout_us, board.clock_mhz),
        )
    }
}
