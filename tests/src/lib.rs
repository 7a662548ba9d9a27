//! # horus-cosim
//!
//! Verilator co-simulation of the Verilog that `rtl-gen` emits against `horus-model`, frame for
//! frame: [`verilated`] builds and drives the Verilated switch, [`traffic`] makes the inputs,
//! [`bench`] is the scoreboard that runs the model's `FrameSwitch` in the order the switch's
//! trace port shows and compares every output frame.

pub mod bench;
pub mod traffic;
pub mod verilated;
