//! # horus-hdl-tools
//!
//! The tooling around the hardware, kept out of the hardware crate: [`verilog`] turns any rust-hdl
//! block into the Verilog we ship (rust-hdl's generator, normalized for Verilator and Yosys, with
//! the synthesis attributes the design relies on), and [`check`] lints it with Verilator, runs
//! test benches, synthesizes it with Yosys for UltraScale+ and measures its logic depth.
//! `rtl-gen` and the hardware tests use both; the circuit itself (`horus-pipeline`) uses neither.

pub mod check;
pub mod verilog;
