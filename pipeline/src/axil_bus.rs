//! AXI4-Lite as rust-hdl interfaces, for the blocks that connect to each other: the port of a
//! block that answers requests ([`AxilSub`]: the register file, the bridge's shell side, a
//! refusing window) and its mirror, the port of a block that issues them ([`AxilMgr`]: the
//! bridge's switch side). `A` is the address's width: [`crate::axil::AXIL_ADDR_BITS`] (12) at
//! the register file, 32 at a shell's window. Data is 32 bits with byte strobes.
//!
//! `AxilMgr::join(&mut manager, &mut subordinate)` in a block's `update` connects the two,
//! signal by signal. In the Verilog, a bundle field `s_axil` of a block is the set of ports
//! `s_axil$awaddr`, `s_axil$awvalid`, ... (rust-hdl's separator). A module a shell instantiates
//! (`top::HorusTop`, `board::opennic::OpenNicBox`, `board::netfpga::NetFpgaDatapath`) keeps the
//! flat names the shell expects (`s_axil_awaddr`, `s0_axi_awaddr`) and wires them to a bundle.

use rust_hdl::prelude::*;

/// AXI4-Lite as the subordinate sees it: requests in, responses out.
#[derive(LogicInterface, Default)]
#[join = "AxilMgr"]
pub struct AxilSub<const A: usize> {
    pub awaddr: Signal<In, Bits<A>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<32>>,
    pub wstrb: Signal<In, Bits<4>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<A>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}

/// AXI4-Lite as the manager sees it: requests out, responses in ([`AxilSub`]'s mirror).
#[derive(LogicInterface, Default)]
#[join = "AxilSub"]
pub struct AxilMgr<const A: usize> {
    pub awaddr: Signal<Out, Bits<A>>,
    pub awvalid: Signal<Out, Bit>,
    pub awready: Signal<In, Bit>,
    pub wdata: Signal<Out, Bits<32>>,
    pub wstrb: Signal<Out, Bits<4>>,
    pub wvalid: Signal<Out, Bit>,
    pub wready: Signal<In, Bit>,
    pub bresp: Signal<In, Bits<2>>,
    pub bvalid: Signal<In, Bit>,
    pub bready: Signal<Out, Bit>,
    pub araddr: Signal<Out, Bits<A>>,
    pub arvalid: Signal<Out, Bit>,
    pub arready: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<32>>,
    pub rresp: Signal<In, Bits<2>>,
    pub rvalid: Signal<In, Bit>,
    pub rready: Signal<Out, Bit>,
}
