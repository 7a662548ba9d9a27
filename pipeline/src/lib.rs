//! # horus-pipeline
//!
//! The Horus leaf and spine schedulers as staged Rust-HDL modules for FPGA SmartNICs (Alveo,
//! NetFPGA-PLUS): one stage per table, one packet per clock, a resubmit path, dual load and drift
//! lists, fixed-point averaging. It implements exactly the semantics of `horus-model`, following the
//! stage plan in `docs/pipeline.md`; `rtl-gen` emits its Verilog.
//!
//! Built: [`table::RmwTable`], the stateful read-modify-write table with forwarding that every
//! stage is built on; the first-beat [`parser`]; the [`deparser`]; the pass descriptor
//! ([`phv`]); and the fourteen [`stages`], each tested against the model. Not yet: the decode
//! step, the pass mux with the resubmit path, the frame buffer, the egress arbiter, the AXI4-Lite
//! control port and the top levels (`docs/pipeline.md`).

pub mod axil;
pub mod check;
pub mod core;
pub mod deparser;
pub mod egress;
pub mod fifo;
pub mod ingress;
pub mod mul;
pub mod parser;
pub mod pass;
pub mod phv;
pub mod presets;
pub mod readback;
pub mod regmap;
pub mod stages;
pub mod switch;
pub mod table;
pub mod top;
pub mod verilog;
