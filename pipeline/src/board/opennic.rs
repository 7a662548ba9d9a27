//! The switch as the user plugin of the OpenNIC shell's 250 MHz box (`box_250mhz`), on the
//! adapter rx -> tx path with the host's QDMA queues beside the MAC ports.
//!
//! ```text
//!  axil_aclk (125 MHz)              axis_aclk (250 MHz)
//!  s_axil ────────────────────────────────> ┌─────────────┐
//!  s_rx0 (cmac0) ─┐                          │ BoardSwitch │                 ┌─ m_tx0 (cmac0)
//!  s_rx1 (cmac1) ─┼─ FrameArbiter3 ────────> │ (the switch)│ ── FrameDemux3 ─┼─ m_tx1 (cmac1)
//!  s_h2c (host0) ─┘                          └─────────────┘  (port in tuser) └─ m_c2h (host0)
//! ```
//!
//! - Streams: the shell's adapter rx of each CMAC port and the host-to-card stream of PCIe
//!   function 0 are merged, frame by frame, into the switch's input; the switch's egress port
//!   (`board::boards`: 0 `cmac0`, 1 `cmac1`, 2 `host0`) picks the output stream, whose
//!   `tuser_size` is the frame's length, `tuser_dst` the shell's one-hot destination (bit 6 + i
//!   for CMAC port i, bit 0 for function 0: the shell's packet adapter drops a frame whose
//!   destination lacks its own bit) and `tuser_src` 0. The shell's `tuser` on the inputs is not
//!   read: the scheduler decides from the frame alone. A frame for a port the board lacks is
//!   dropped whole and counted (`FrameDemux3`, read as `BOARD_DROPS`). `BoardSwitch` holds the switch between two
//!   register slices, with its registers and the microsecond clock.
//! - Registers: the shell's window (32-bit addresses from the box's base, BAR2 + 0x100000, no
//!   `wstrb`) reaches the switch's register file through `BoardSwitch`'s bridge
//!   (`AxilCdc`); addresses beyond the switch's 4 KiB answer `SLVERR`.
//! - Reset: the shell's `mod_rstn` (a low pulse, synchronous to `axil_aclk`) starts a reset of
//!   [`RESET_CYCLES`] `axil_aclk` cycles; `mod_rst_done` falls with it and rises when it ends,
//!   as the shell's reset handshake expects. It clears the register port's transaction state on
//!   both clocks (the bridge, the register file's pending response and staged control pass): the
//!   configuration registers and tables keep their values, and frames keep moving, so a reset
//!   never cuts a frame in two. `mod_rst_done` is low from power-up until the first reset.
//! - Time: `now_us` counts the core clock's cycles, `clock_mhz` of them a microsecond.

use crate::arith::ZeroExtend;
use crate::board::arbiter::FrameArbiter3;
use crate::board::board_switch::{BoardSwitch, JbsqBoardSwitch};
use crate::board::boards::Board;
use crate::board::demux::FrameDemux3;
use horus_model::config::Role;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// Length of a reset from `mod_rstn`, in `axil_aclk` cycles: long enough for it to cross into
/// the core clock (two flip-flops) and for a transaction under way on the register port to end.
pub const RESET_CYCLES: u64 = 32;

/// `tuser_dst` of each output stream: the shell's one-hot port bits (CMAC port `i` is bit
/// `6 + i`, PCIe physical function `f` is bit `f`).
pub const TUSER_DST: [u64; 3] = [1 << 6, 1 << 7, 1 << 0];

/// Defines the box `$name<$g...>` around the board's switch `$core`.
macro_rules! opennic_box {
    ($(#[$attr:meta])* $name:ident [$($g:ident),*], $core:ty) => {
        $(#[$attr])*
        #[derive(LogicBlock)]
        pub struct $name<$(const $g: usize),*> {
            pub axil_aclk: Signal<In, Clock>,
            pub axis_aclk: Signal<In, Clock>,
            /// The shell's module reset (active low, synchronous to `axil_aclk`) and its answer.
            pub mod_rstn: Signal<In, Bit>,
            pub mod_rst_done: Signal<Out, Bit>,
            /* The shell's AXI4-Lite window, at `axil_aclk`. */
            pub s_axil_awaddr: Signal<In, Bits<32>>,
            pub s_axil_awvalid: Signal<In, Bit>,
            pub s_axil_awready: Signal<Out, Bit>,
            pub s_axil_wdata: Signal<In, Bits<32>>,
            pub s_axil_wvalid: Signal<In, Bit>,
            pub s_axil_wready: Signal<Out, Bit>,
            pub s_axil_bresp: Signal<Out, Bits<2>>,
            pub s_axil_bvalid: Signal<Out, Bit>,
            pub s_axil_bready: Signal<In, Bit>,
            pub s_axil_araddr: Signal<In, Bits<32>>,
            pub s_axil_arvalid: Signal<In, Bit>,
            pub s_axil_arready: Signal<Out, Bit>,
            pub s_axil_rdata: Signal<Out, Bits<32>>,
            pub s_axil_rresp: Signal<Out, Bits<2>>,
            pub s_axil_rvalid: Signal<Out, Bit>,
            pub s_axil_rready: Signal<In, Bit>,
            /* Inputs, at `axis_aclk`: adapter rx of CMAC 0 and 1, host-to-card of function 0. */
            pub s_rx0_tdata: Signal<In, Bits<512>>,
            pub s_rx0_tkeep: Signal<In, Bits<64>>,
            pub s_rx0_tvalid: Signal<In, Bit>,
            pub s_rx0_tready: Signal<Out, Bit>,
            pub s_rx0_tlast: Signal<In, Bit>,
            pub s_rx1_tdata: Signal<In, Bits<512>>,
            pub s_rx1_tkeep: Signal<In, Bits<64>>,
            pub s_rx1_tvalid: Signal<In, Bit>,
            pub s_rx1_tready: Signal<Out, Bit>,
            pub s_rx1_tlast: Signal<In, Bit>,
            pub s_h2c_tdata: Signal<In, Bits<512>>,
            pub s_h2c_tkeep: Signal<In, Bits<64>>,
            pub s_h2c_tvalid: Signal<In, Bit>,
            pub s_h2c_tready: Signal<Out, Bit>,
            pub s_h2c_tlast: Signal<In, Bit>,
            /* Outputs: adapter tx of CMAC 0 and 1, card-to-host of function 0. */
            pub m_tx0_tdata: Signal<Out, Bits<512>>,
            pub m_tx0_tkeep: Signal<Out, Bits<64>>,
            pub m_tx0_tvalid: Signal<Out, Bit>,
            pub m_tx0_tready: Signal<In, Bit>,
            pub m_tx0_tlast: Signal<Out, Bit>,
            pub m_tx0_tuser_size: Signal<Out, Bits<16>>,
            pub m_tx0_tuser_src: Signal<Out, Bits<16>>,
            pub m_tx0_tuser_dst: Signal<Out, Bits<16>>,
            pub m_tx1_tdata: Signal<Out, Bits<512>>,
            pub m_tx1_tkeep: Signal<Out, Bits<64>>,
            pub m_tx1_tvalid: Signal<Out, Bit>,
            pub m_tx1_tready: Signal<In, Bit>,
            pub m_tx1_tlast: Signal<Out, Bit>,
            pub m_tx1_tuser_size: Signal<Out, Bits<16>>,
            pub m_tx1_tuser_src: Signal<Out, Bits<16>>,
            pub m_tx1_tuser_dst: Signal<Out, Bits<16>>,
            pub m_c2h_tdata: Signal<Out, Bits<512>>,
            pub m_c2h_tkeep: Signal<Out, Bits<64>>,
            pub m_c2h_tvalid: Signal<Out, Bit>,
            pub m_c2h_tready: Signal<In, Bit>,
            pub m_c2h_tlast: Signal<Out, Bit>,
            pub m_c2h_tuser_size: Signal<Out, Bits<16>>,
            pub m_c2h_tuser_src: Signal<Out, Bits<16>>,
            pub m_c2h_tuser_dst: Signal<Out, Bits<16>>,

            core: $core,
            arb: FrameArbiter3,
            demux: FrameDemux3,
            size: ZeroExtend<12, 16>,
            /* Reset, at `axil_aclk`: under way, done, cycles counted. */
            rst_active: DFF<Bit>,
            rst_done: DFF<Bit>,
            rst_count: DFF<Bits<8>>,
            /* The reset at `axis_aclk`, through two flip-flops. */
            rst_meta: DFF<Bit>,
            rst_sync: DFF<Bit>,
            rst_last: Constant<Bits<8>>,
            one8: Constant<Bits<8>>,
            zero8: Constant<Bits<8>>,
            zero16: Constant<Bits<16>>,
            all_bytes: Constant<Bits<4>>,
            dst0: Constant<Bits<16>>,
            dst1: Constant<Bits<16>>,
            dst2: Constant<Bits<16>>,
            /// Outputs this box does not use (names match Verilator's `--unused-regexp`).
            src_unused: Signal<Local, Bits<2>>,
        }

        impl<$(const $g: usize),*> $name<$($g),*> {
            /// The box for `board` (an OpenNIC board: its clock and its streams) around `core`.
            pub fn around(board: &Board, core: $core) -> Self {
                Self {
                    axil_aclk: Default::default(),
                    axis_aclk: Default::default(),
                    mod_rstn: Default::default(),
                    mod_rst_done: Default::default(),
                    s_axil_awaddr: Default::default(),
                    s_axil_awvalid: Default::default(),
                    s_axil_awready: Default::default(),
                    s_axil_wdata: Default::default(),
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
                    s_rx0_tdata: Default::default(),
                    s_rx0_tkeep: Default::default(),
                    s_rx0_tvalid: Default::default(),
                    s_rx0_tready: Default::default(),
                    s_rx0_tlast: Default::default(),
                    s_rx1_tdata: Default::default(),
                    s_rx1_tkeep: Default::default(),
                    s_rx1_tvalid: Default::default(),
                    s_rx1_tready: Default::default(),
                    s_rx1_tlast: Default::default(),
                    s_h2c_tdata: Default::default(),
                    s_h2c_tkeep: Default::default(),
                    s_h2c_tvalid: Default::default(),
                    s_h2c_tready: Default::default(),
                    s_h2c_tlast: Default::default(),
                    m_tx0_tdata: Default::default(),
                    m_tx0_tkeep: Default::default(),
                    m_tx0_tvalid: Default::default(),
                    m_tx0_tready: Default::default(),
                    m_tx0_tlast: Default::default(),
                    m_tx0_tuser_size: Default::default(),
                    m_tx0_tuser_src: Default::default(),
                    m_tx0_tuser_dst: Default::default(),
                    m_tx1_tdata: Default::default(),
                    m_tx1_tkeep: Default::default(),
                    m_tx1_tvalid: Default::default(),
                    m_tx1_tready: Default::default(),
                    m_tx1_tlast: Default::default(),
                    m_tx1_tuser_size: Default::default(),
                    m_tx1_tuser_src: Default::default(),
                    m_tx1_tuser_dst: Default::default(),
                    m_c2h_tdata: Default::default(),
                    m_c2h_tkeep: Default::default(),
                    m_c2h_tvalid: Default::default(),
                    m_c2h_tready: Default::default(),
                    m_c2h_tlast: Default::default(),
                    m_c2h_tuser_size: Default::default(),
                    m_c2h_tuser_src: Default::default(),
                    m_c2h_tuser_dst: Default::default(),
                    core,
                    arb: Default::default(),
                    demux: FrameDemux3::new(board.streams()),
                    size: Default::default(),
                    rst_active: Default::default(),
                    rst_done: Default::default(),
                    rst_count: Default::default(),
                    rst_meta: Default::default(),
                    rst_sync: Default::default(),
                    rst_last: Constant::new((RESET_CYCLES - 1).into()),
                    one8: Constant::new(1.into()),
                    zero8: Constant::new(0.into()),
                    zero16: Constant::new(0.into()),
                    all_bytes: Constant::new(0xf.into()),
                    dst0: Constant::new(TUSER_DST[0].into()),
                    dst1: Constant::new(TUSER_DST[1].into()),
                    dst2: Constant::new(TUSER_DST[2].into()),
                    src_unused: Default::default(),
                }
            }
        }

        impl<$(const $g: usize),*> Logic for $name<$($g),*> {
            #[hdl_gen]
            fn update(&mut self) {
                dff_setup!(self, axil_aclk, rst_active, rst_done, rst_count);
                dff_setup!(self, axis_aclk, rst_meta, rst_sync);
                // ---- Reset: a pulse on `mod_rstn` starts it; `mod_rst_done` answers at its end.
                if self.rst_active.q.val() {
                    self.rst_count.d.next = self.rst_count.q.val() + self.one8.val();
                    if self.rst_count.q.val() == self.rst_last.val() {
                        self.rst_active.d.next = false;
                        self.rst_done.d.next = true;
                    }
                }
                if !self.mod_rstn.val() {
                    self.rst_active.d.next = true;
                    self.rst_done.d.next = false;
                    self.rst_count.d.next = self.zero8.val();
                }
                self.mod_rst_done.next = self.rst_done.q.val();
                self.rst_meta.d.next = self.rst_active.q.val();
                self.rst_sync.d.next = self.rst_meta.q.val();

                // ---- Clocks and resets.
                self.core.clock.next = self.axis_aclk.val();
                self.core.axil_clock.next = self.axil_aclk.val();
                self.arb.clock.next = self.axis_aclk.val();
                self.demux.clock.next = self.axis_aclk.val();
                self.core.axil_reset.next = self.rst_active.q.val();
                self.core.reset.next = self.rst_sync.q.val();
                // Frames are never cut by a reset.
                self.arb.reset.next = false;
                self.demux.reset.next = false;

                // ---- The register window (no byte strobes: whole words).
                self.core.s_axil.awaddr.next = self.s_axil_awaddr.val();
                self.core.s_axil.awvalid.next = self.s_axil_awvalid.val();
                self.core.s_axil.wdata.next = self.s_axil_wdata.val();
                self.core.s_axil.wstrb.next = self.all_bytes.val();
                self.core.s_axil.wvalid.next = self.s_axil_wvalid.val();
                self.core.s_axil.bready.next = self.s_axil_bready.val();
                self.core.s_axil.araddr.next = self.s_axil_araddr.val();
                self.core.s_axil.arvalid.next = self.s_axil_arvalid.val();
                self.core.s_axil.rready.next = self.s_axil_rready.val();
                self.s_axil_awready.next = self.core.s_axil.awready.val();
                self.s_axil_wready.next = self.core.s_axil.wready.val();
                self.s_axil_bresp.next = self.core.s_axil.bresp.val();
                self.s_axil_bvalid.next = self.core.s_axil.bvalid.val();
                self.s_axil_arready.next = self.core.s_axil.arready.val();
                self.s_axil_rdata.next = self.core.s_axil.rdata.val();
                self.s_axil_rresp.next = self.core.s_axil.rresp.val();
                self.s_axil_rvalid.next = self.core.s_axil.rvalid.val();

                // ---- Streams in: merged frame by frame.
                self.arb.s0_tdata.next = self.s_rx0_tdata.val();
                self.arb.s0_tkeep.next = self.s_rx0_tkeep.val();
                self.arb.s0_tvalid.next = self.s_rx0_tvalid.val();
                self.arb.s0_tlast.next = self.s_rx0_tlast.val();
                self.s_rx0_tready.next = self.arb.s0_tready.val();
                self.arb.s1_tdata.next = self.s_rx1_tdata.val();
                self.arb.s1_tkeep.next = self.s_rx1_tkeep.val();
                self.arb.s1_tvalid.next = self.s_rx1_tvalid.val();
                self.arb.s1_tlast.next = self.s_rx1_tlast.val();
                self.s_rx1_tready.next = self.arb.s1_tready.val();
                self.arb.s2_tdata.next = self.s_h2c_tdata.val();
                self.arb.s2_tkeep.next = self.s_h2c_tkeep.val();
                self.arb.s2_tvalid.next = self.s_h2c_tvalid.val();
                self.arb.s2_tlast.next = self.s_h2c_tlast.val();
                self.s_h2c_tready.next = self.arb.s2_tready.val();
                self.core.s_tdata.next = self.arb.m_tdata.val();
                self.core.s_tkeep.next = self.arb.m_tkeep.val();
                self.core.s_tvalid.next = self.arb.m_tvalid.val();
                self.core.s_tlast.next = self.arb.m_tlast.val();
                self.arb.m_tready.next = self.core.s_tready.val();
                self.src_unused.next = self.arb.m_src.val();

                // ---- Streams out: by egress port.
                self.demux.s_tdata.next = self.core.m_tdata.val();
                self.demux.s_tkeep.next = self.core.m_tkeep.val();
                self.demux.s_tvalid.next = self.core.m_tvalid.val();
                self.demux.s_tlast.next = self.core.m_tlast.val();
                self.demux.s_tuser.next = self.core.m_tuser.val();
                self.core.m_tready.next = self.demux.s_tready.val();
                self.core.board_drops.next = self.demux.dropped.val();
                self.size.narrow.next = self.demux.m_len.val();
                self.m_tx0_tdata.next = self.demux.m0_tdata.val();
                self.m_tx0_tkeep.next = self.demux.m0_tkeep.val();
                self.m_tx0_tvalid.next = self.demux.m0_tvalid.val();
                self.m_tx0_tlast.next = self.demux.m0_tlast.val();
                self.demux.m0_tready.next = self.m_tx0_tready.val();
                self.m_tx0_tuser_size.next = self.size.wide.val();
                self.m_tx0_tuser_src.next = self.zero16.val();
                self.m_tx0_tuser_dst.next = self.dst0.val();
                self.m_tx1_tdata.next = self.demux.m1_tdata.val();
                self.m_tx1_tkeep.next = self.demux.m1_tkeep.val();
                self.m_tx1_tvalid.next = self.demux.m1_tvalid.val();
                self.m_tx1_tlast.next = self.demux.m1_tlast.val();
                self.demux.m1_tready.next = self.m_tx1_tready.val();
                self.m_tx1_tuser_size.next = self.size.wide.val();
                self.m_tx1_tuser_src.next = self.zero16.val();
                self.m_tx1_tuser_dst.next = self.dst1.val();
                self.m_c2h_tdata.next = self.demux.m2_tdata.val();
                self.m_c2h_tkeep.next = self.demux.m2_tkeep.val();
                self.m_c2h_tvalid.next = self.demux.m2_tvalid.val();
                self.m_c2h_tlast.next = self.demux.m2_tlast.val();
                self.demux.m2_tready.next = self.m_c2h_tready.val();
                self.m_c2h_tuser_size.next = self.size.wide.val();
                self.m_c2h_tuser_src.next = self.zero16.val();
                self.m_c2h_tuser_dst.next = self.dst2.val();
            }
        }
    };
}

opennic_box!(
    /// The paper's switch (leaf or spine) as the box's plug-in.
    OpenNicBox [P, N, C],
    BoardSwitch<P, N, C>
);

opennic_box!(
    /// The leaf that holds tasks as the box's plug-in.
    OpenNicJbsqBox [P, N, R, B, C, SB],
    JbsqBoardSwitch<P, N, R, B, C, SB>
);

impl<const P: usize, const N: usize, const C: usize> OpenNicBox<P, N, C> {
    /// The box for `board` (an OpenNIC board: its clock and its streams), with the switch of
    /// `role` whose generator starts at `seed` and whose connection entries expire after
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
> OpenNicJbsqBox<P, N, R, B, C, SB>
{
    /// The box for `board` with the JBSQ leaf at `sizes` (the const parameters' sizes) whose
    /// generator starts at `seed` and whose connection entries expire after `conn_timeout_us`.
    pub fn new(board: &Board, sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        Self::around(
            board,
            JbsqBoardSwitch::new(sizes, seed, conn_timeout_us, board.clock_mhz),
        )
    }
}
