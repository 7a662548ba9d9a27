//! The generated outputs, one module each ([`crate::Output`], listed in [`crate::OUTPUTS`]).

pub mod regmap;
pub mod stage_plan;
pub mod switch;
pub mod wire;
