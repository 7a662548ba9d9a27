//! # rtl-gen
//!
//! Everything generated from the project's single sources of truth: the switches' Verilog (from
//! `horus-pipeline` at a size preset), the register map of their AXI4-Lite port (from
//! `horus_regs::regmap`), the wire format (from `horus_model::wire`) and the stage plan (from
//! `horus_model::sched::plan`). `cargo run -p rtl-gen` writes them into `build/`.
//!
//! Each generated output is one module of [`outputs`] implementing [`Output`], listed once in
//! [`OUTPUTS`]: a new target (a board wrapper, a P4 program) is a new module and a new entry.
//! [`check`] lints and synthesizes the switches' Verilog (`--check`). [`boards`] writes what a
//! shell needs to build the switch for a board (`--board`).

pub mod boards;
pub mod check;
pub use horus_regs::identity;
pub mod outputs;
pub mod p4;

use anyhow::{Context, Result};
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use std::fs;
use std::path::Path;

/// Connection-table entries expire after this many microseconds unless `--conn-timeout-us` says
/// otherwise.
pub const DEFAULT_CONN_TIMEOUT_US: u32 = 1_000_000;

/// What the outputs are generated for.
#[derive(Clone, Debug)]
pub struct Params {
    /// The switches to generate, in order.
    pub roles: Vec<Role>,
    /// The size preset's name (`horus_pipeline::presets`).
    pub preset: String,
    /// The switches' random generator seed.
    pub seed: u64,
    /// Connection-table entries expire after this many microseconds.
    pub conn_timeout_us: u32,
    /// The Tofino leaf's repair gap, one for every pool (`docs/algorithm.md`, T12); the FPGA
    /// pipeline takes each pool's from its configuration.
    pub repair_gap_us: u16,
}

impl Default for Params {
    /// Both switches at the `default` preset, the model's default seed, the default timeout.
    fn default() -> Self {
        Self {
            roles: vec![Role::Leaf, Role::Spine],
            preset: "default".into(),
            seed: DEFAULT_SEED,
            conn_timeout_us: DEFAULT_CONN_TIMEOUT_US,
            repair_gap_us: horus_model::config::DEFAULT_REPAIR_GAP_US,
        }
    }
}

/// One generated file: its name in the output folder and its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    pub name: String,
    pub content: String,
}

impl GeneratedFile {
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            content: content.into(),
        }
    }
}

/// A generated output: a set of files made from one source of truth.
pub trait Output: Sync {
    /// What it is, in a few words (for messages).
    fn name(&self) -> &'static str;
    /// Its files for `params`.
    fn files(&self, params: &Params) -> Result<Vec<GeneratedFile>>;
}

/// Every output, in the order their files are written.
pub const OUTPUTS: &[&dyn Output] = &[
    &outputs::switch::Switches,
    &outputs::wire::Wire,
    &outputs::stage_plan::StagePlan,
    &outputs::regmap::RegMap,
];

/// The files of every output for `params`.
pub fn generate(params: &Params) -> Result<Vec<GeneratedFile>> {
    let mut files = Vec::new();
    for o in OUTPUTS {
        files.extend(
            o.files(params)
                .with_context(|| format!("generating {}", o.name()))?,
        );
    }
    Ok(files)
}

/// Writes `content` to `path` only if it changed, so that tools keyed on modification times (the
/// Verilator models of the co-simulation) do not rebuild for nothing.
pub fn write_if_changed(path: &Path, content: &str) -> Result<bool> {
    if fs::read_to_string(path).is_ok_and(|old| old == content) {
        return Ok(false);
    }
    fs::write(path, content).with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_content_is_not_rewritten() {
        let dir = std::env::temp_dir().join(format!("rtl-gen-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.txt");
        assert!(write_if_changed(&p, "a").unwrap());
        assert!(!write_if_changed(&p, "a").unwrap());
        assert!(write_if_changed(&p, "b").unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_write_distinct_files() {
        let p = Params {
            preset: "small".into(),
            ..Params::default()
        };
        let files = generate(&p).unwrap();
        let mut names: Vec<_> = files.iter().map(|f| f.name.as_str()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "two outputs wrote one file: {names:?}");
        assert!(names.contains(&"horus_leaf_small.v") && names.contains(&"horus_regs.h"));
    }
}
