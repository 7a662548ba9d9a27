//! # horus-pipeline
//!
//! The Horus leaf and spine schedulers as staged Rust-HDL modules for FPGA SmartNICs (Alveo,
//! NetFPGA-PLUS): one stage per table, one packet per clock, a resubmit path, dual load and drift
//! lists, fixed-point averaging. It implements exactly the semantics of `horus-model`, following the
//! stage plan in `docs/algorithm.md`; `rtl-gen` emits its Verilog.
//!
//! Not built yet: this crate holds the place of the pipeline in the workspace (issue 3).
