//! # horus-model
//!
//! The one specification of Horus in this repository: the wire format, the switch configuration and
//! the reference scheduler (leaf and spine) at the granularity of pipeline passes. The hardware
//! pipeline is checked against this crate (pass for pass in rust-hdl's simulator, frame for frame
//! in the Verilator co-simulation) and the simulator runs Horus through it. The companion P4
//! program for Tofino (`rtl-gen --target p4`) follows it, with the differences its
//! [`sched::Profile`] reproduces.
//!
//! - [`wire`]: Ethernet / IPv4 / UDP 1234 / the 11-byte Horus header.
//! - [`fixed`]: the 16.16 fixed-point load format and the additive factor.
//! - [`config`]: the switch configuration (TOML) and its validation.
//! - [`net`]: IPv4 networks (`10.0.3.0/24`), for the configuration's `[security]` section.
//! - [`rng`]: the random generator the scheduler and the hardware share, bit for bit.
//! - [`sched`]: the reference leaf and spine schedulers.

pub mod config;
pub mod fixed;
pub mod net;
pub mod rng;
pub mod sched;
pub mod wire;
