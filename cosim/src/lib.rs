//! # horus-cosim
//!
//! Verilator co-simulation of the Verilog that `rtl-gen` emits against `horus-model`, frame for
//! frame: [`verilated`] builds and drives the Verilated switch, [`traffic`] makes the inputs,
//! [`bench`] is the scoreboard that runs the model's `FrameSwitch` in the order the switch's
//! trace port shows and compares every output frame; [`box_bench`] does the same for a board's
//! plug-in (the switch in its board adapter), through the shell's streams and register window;
//! [`jbsq`] is the scoreboard of the leaf that holds tasks against the model's `JbsqFrameSwitch`.

pub mod bench;
pub mod box_bench;
pub mod jbsq;
pub mod traffic;
pub mod verilated;
