//! # horus-regs
//!
//! What a host needs to know of the Horus switch hardware, and nothing of how it is built: the
//! AXI4-Lite register map ([`regmap`]), the layout of a table entry read back through it
//! ([`readback`]), the size presets ([`presets`]), the boards a switch is built for ([`boards`])
//! and the build identity a card answers ([`identity`]).
//!
//! The circuit (`horus-pipeline`) builds from these facts and is checked against them; the host
//! driver (`horusctl`) talks to a card with them, without linking the circuit, the Verilog
//! generator or a simulator.

pub mod boards;
pub mod identity;
pub mod jbsq_map;
pub mod presets;
pub mod readback;
pub mod regmap;

use horus_model::wire::MacAddr;

/// Spines a leaf can signal (searched in order, like the model's spine list): the register map's
/// spine table and the circuit's (`horus_pipeline::cfg`).
pub const SPINES: usize = 4;

/// A MAC address as the registers and the circuit hold it: 48 bits, first octet highest.
pub fn mac_bits(mac: MacAddr) -> u64 {
    mac.0.iter().fold(0, |acc, &b| acc << 8 | u64::from(b))
}
