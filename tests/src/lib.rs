//! # horus-cosim
//!
//! Verilator co-simulation of the Verilog that `rtl-gen` emits against `horus-model`, pass for pass
//! and frame for frame, with a scoreboard, traffic generators and a pcap-in/pcap-out command.
//!
//! Not built yet: this crate holds the place of the co-simulation in the workspace (issue 4).
