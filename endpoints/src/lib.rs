//! # horus-endpoints
//!
//! The two other ends of a Horus system, and a switch to run the whole of it on one machine:
//!
//! - [`worker`]: worker slots that register with a leaf's controller, keep alive, run tasks in
//!   FCFS order and answer with their queue length (`horus-worker`);
//! - [`client`]: an open-loop load generator that measures response times (`horus-client`);
//! - [`switch`]: a leaf or spine on a UDP socket whose engine is the reference model or the
//!   Verilated RTL, programmed by the host driver from the same configuration files as a card, a
//!   leaf with its controller (`horus-switch`);
//! - [`demo`]: a spine, two leaves, their workers and clients on loopback addresses, Horus
//!   against random placement (`horus-demo`).
//!
//! Everything speaks the public Horus wire format (`horus_model::wire`) and the public testbed's
//! payload ([`payload`]), over the emulated network of [`link`].

pub mod client;
pub mod demo;
pub mod link;
/// The public testbed's task payload (`horus_model::wire::payload`).
pub use horus_model::wire::payload;
pub mod switch;
pub mod worker;
