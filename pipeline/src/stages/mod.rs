//! The stages, one per table, in pipeline order (`docs/pipeline.md`). Each takes two cycles: the
//! pass presents its index in cycle 0 and reads, computes and writes its table in cycle 1.

pub mod conn;
pub mod drift;
pub mod idle_ctl;
pub mod idle_index;
pub mod idle_list;
pub mod load;
pub mod members;
pub mod node;
pub mod node_addr;
pub mod pool_avg;
pub mod pool_cfg;
