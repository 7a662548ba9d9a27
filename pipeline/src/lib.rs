//! # horus-pipeline
//!
//! The Horus leaf and spine schedulers as staged Rust-HDL modules for FPGA SmartNICs (Alveo,
//! NetFPGA-PLUS): one stage per table, one packet per clock, a resubmit path, dual load and drift
//! lists, fixed-point averaging. It implements exactly the semantics of `horus-model`, following the
//! stage plan in `docs/pipeline.md`; `rtl-gen` emits its Verilog.
//!
//! The blocks: [`table::RmwTable`], the stateful read-modify-write table with forwarding, and
//! [`table::StageTable`], the table each stage owns (with its side of a table read,
//! [`readback`]); the pass descriptor ([`phv`]) and the tables' entries ([`entries`]); the
//! fourteen [`stages`], one cycle and one table
//! each; the scheduler [`core`] (decode, pass mux, resubmit path); the [`ingress`] (frame buffer
//! and first-beat [`parser`]) and the [`egress`] (jobs, [`deparser`], output FIFO); the
//! AXI4-Lite port ([`axil`], register map in [`regmap`], the configuration it holds in [`cfg`]);
//! the [`switch`] and the top levels
//! ([`top`], sizes in [`presets`]). [`arith`] holds the stages' wide arithmetic primitives
//! ([`arith::SumSign`], [`arith::ZeroExtend`]). [`jbsq`] holds the stages built so far of the
//! leaf that holds tasks (`docs/jbsq-pipeline.md`), apart from the switch. The crate is the circuit only: `horus-hdl-tools`
//! emits and checks its Verilog, `rtl-gen` writes it out.

pub mod arith;
pub mod axil;
pub mod axil_bus;
pub mod board;
pub mod cfg;
pub mod core;
pub mod deparser;
pub mod egress;
pub mod entries;
pub mod fifo;
pub mod ingress;
pub mod jbsq;
pub mod mul;
pub mod parser;
pub mod pass;
pub mod phv;
pub mod presets;
pub mod readback;
pub use horus_regs::regmap;
pub mod stages;
pub mod switch;
pub mod table;
pub mod top;
