//! Board targets: `rtl-gen --board B` writes `B/`, what a shell needs to build the switch into a
//! bitstream for board `B` (`horus_pipeline::board::boards`): the plug-in's Verilog, the shell's
//! plug-in files, the timing constraints (from `constraints/`) and a README with the command
//! that builds it.
//!
//! - [`opennic`]: the OpenNIC shell's user plug-in folder (Alveo U250, U280, U55C, U50, U200).
//! - [`netfpga`]: a NetFPGA-PLUS project's `nf_datapath.v`.

pub mod netfpga;
pub mod opennic;

use crate::GeneratedFile;
use anyhow::{Result, bail};
use horus_model::config::{Config, Role};
use horus_pipeline::board::boards::{Board, Shell};
use horus_pipeline::presets::{self, Build, Preset, WithTop};
use rust_hdl::prelude::Block;
use std::path::Path;

/// What a board target is generated for.
#[derive(Clone, Debug)]
pub struct BoardParams {
    pub board: &'static Board,
    /// The switch the card runs (one per card).
    pub role: Role,
    pub preset: Preset,
    pub seed: u64,
    pub conn_timeout_us: u32,
}

impl BoardParams {
    /// The parameters for `board` with `role` at the preset called `preset`.
    pub fn new(
        board: &'static Board,
        role: Role,
        preset: &str,
        seed: u64,
        conn_timeout_us: u32,
    ) -> Result<BoardParams> {
        let Some(preset) = presets::preset(preset, role) else {
            bail!(
                "no preset called {preset}; one of: {}",
                presets::names().join(", ")
            );
        };
        Ok(BoardParams {
            board,
            role,
            preset,
            seed,
            conn_timeout_us,
        })
    }

    /// The plug-in's top module: `horus_box_leaf`, `horus_box_spine_small` (OpenNIC),
    /// `horus_nf_leaf` (NetFPGA-PLUS), ...
    pub fn module_name(&self) -> String {
        let kind = match self.board.shell {
            Shell::OpenNic => "horus_box_",
            Shell::NetFpgaPlus => "horus_nf_",
        };
        self.preset.module_name().replacen("horus_", kind, 1)
    }
}

/// The files of `p.board`'s target, named relative to the output folder (under `<board>/`).
pub fn files(p: &BoardParams) -> Result<Vec<GeneratedFile>> {
    match p.board.shell {
        Shell::OpenNic => opennic::files(p),
        Shell::NetFpgaPlus => netfpga::files(p),
    }
}

/// The plug-in inside a stub of its shell's module, as one Verilog text, and that module's name
/// (what `--check` and the tests lint and synthesize).
pub fn in_shell(p: &BoardParams) -> Result<(String, &'static str)> {
    match p.board.shell {
        Shell::OpenNic => Ok((opennic::in_box(p)?, "box_250mhz")),
        Shell::NetFpgaPlus => Ok((netfpga::nf_datapath(p), "nf_datapath")),
    }
}

/// The plug-in's Verilog: the switch inside the board adapter, top module `p.module_name()`.
pub fn verilog(p: &BoardParams) -> String {
    struct Emit(String);
    impl WithTop for Emit {
        type Output = String;
        fn with<B: Block>(self, top: &B) -> String {
            horus_hdl_tools::verilog::emit_named(top, &self.0)
        }
    }
    crate::identity::stamp(p.preset.with_box(
        p.board,
        p.seed,
        p.conn_timeout_us,
        Emit(p.module_name()),
    ))
}

/// Loads the switch configuration at `path` for `p`: its ports must be the board's (by name or
/// number), its role the target's, its table sizes the preset's.
pub fn check_config(p: &BoardParams, path: &Path) -> Result<Config> {
    let cfg = Config::from_file_for(path, &p.board.port_names())?;
    if cfg.switch.role != p.role {
        bail!(
            "{}: switch.role is {}, the target's switch a {} (--role)",
            path.display(),
            cfg.switch.role,
            p.role
        );
    }
    if cfg.sizes != p.preset.sizes() {
        bail!(
            "{}: sizes {:?} are not the preset {}'s {:?} (--preset)",
            path.display(),
            cfg.sizes,
            p.preset.name,
            p.preset.sizes()
        );
    }
    horus_pipeline::regmap::RegFile::switch_config(&cfg)
        .map_err(|e| anyhow::anyhow!("{}: not for the hardware: {e}", path.display()))?;
    Ok(cfg)
}
