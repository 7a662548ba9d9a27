//! The switch's configuration as the hardware holds it: its own addresses ([`SwitchCfg`]) and the
//! spines a leaf signals ([`SpineTable`]). The AXI4-Lite port ([`crate::axil`]) holds both in
//! registers (`regmap`); the egress reads them to rewrite frames and build signals.

use rust_hdl::prelude::*;

/// Spines a leaf can signal (searched in order, like the model's spine list).
pub use horus_regs::SPINES;

/// A spine's address.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SpineEntry {
    pub valid: Bit,
    pub id: Bits<16>,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    pub udp: Bits<16>,
    pub egress: Bits<8>,
}

/// The spine table (`SPINES` entries).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SpineTable {
    pub s0: SpineEntry,
    pub s1: SpineEntry,
    pub s2: SpineEntry,
    pub s3: SpineEntry,
}

/// The switch's own configuration.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct SwitchCfg {
    /// The switch's ID (a spine writes it into `src_id` of the tasks it forwards).
    pub id: Bits<16>,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    pub udp: Bits<16>,
    pub pass_through_port: Bits<8>,
    pub control_port: Bits<8>,
}
