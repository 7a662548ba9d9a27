//! Board adapters: the blocks between a SmartNIC shell and the switch. The shells (the OpenNIC
//! shell's `box_250mhz`, NetFPGA-PLUS's `nf_datapath`) give a plug-in several 512-bit AXI-Stream
//! inputs (a stream per MAC port and per host queue), a microsecond clock it must make itself,
//! and an AXI4-Lite window; the switch has one input, one output and a `now_us` input.
//!
//! - [`axil_cdc::AxilCdc`]: the shell's AXI4-Lite window (32-bit addresses, whole-word writes,
//!   its own clock) onto the switch's register port, one transaction at a time.
//! - [`board_switch::BoardSwitch`]: the switch as every plug-in holds it, between register
//!   slices, with its registers and the microsecond clock; [`board_switch::JbsqBoardSwitch`] the
//!   same for the leaf that holds tasks.
//! - [`boards`]: the boards (shell, part, clock, ports), one description each.
//! - [`opennic::OpenNicBox`]: all of the above around the switch, as the OpenNIC shell's
//!   250 MHz box plug-in ([`opennic::OpenNicJbsqBox`] around the JBSQ leaf).
//! - [`netfpga::NetFpgaDatapath`]: the same as NetFPGA-PLUS's `nf_datapath`
//!   ([`netfpga::NetFpgaJbsqDatapath`]).
//! - [`slice::RegSlice`]: a register slice, between each adapter and the switch.
//! - [`us_clock::UsClock`]: `now_us`, a free-running microsecond counter from the core clock.
//! - [`arbiter::FrameArbiter3`]: three input streams onto one, round robin, never splitting a
//!   frame.
//! - [`demux::FrameDemux3`]: the switch's output onto three streams by egress port, a frame for
//!   a port the board lacks dropped whole and counted.

pub mod arbiter;
pub mod axil_cdc;
pub mod board_switch;
pub use horus_regs::boards;
pub mod demux;
pub mod netfpga;
pub mod opennic;
pub mod slice;
pub mod us_clock;
