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
use horus_model::sched::jbsq::{JbsqLeaf, LeafKind};
use horus_pipeline::board::boards::{Board, Shell};
use horus_pipeline::presets::{self, Build, JbsqBuild, JbsqPreset, Preset, WithTop};
use rust_hdl::prelude::Block;
use std::path::Path;

/// What a board target is generated for.
#[derive(Clone, Debug)]
pub struct BoardParams {
    pub board: &'static Board,
    /// The switch the card runs (one per card).
    pub role: Role,
    /// A leaf's kind: the paper's (`Horus`) or the one that holds tasks (`Jbsq`, whose sizes
    /// are [`BoardParams::jbsq_preset`]'s).
    pub leaf: LeafKind,
    /// The paper switch's preset of the chosen name.
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
            leaf: LeafKind::Horus,
            preset,
            seed,
            conn_timeout_us,
        })
    }

    /// The parameters for `board` running the leaf that holds tasks, at the JBSQ preset called
    /// `preset`.
    pub fn jbsq(
        board: &'static Board,
        preset: &str,
        seed: u64,
        conn_timeout_us: u32,
    ) -> Result<BoardParams> {
        let mut p = BoardParams::new(board, Role::Leaf, preset, seed, conn_timeout_us)?;
        p.leaf = LeafKind::Jbsq;
        p.jbsq_preset();
        Ok(p)
    }

    /// The JBSQ leaf's preset of the chosen name (every paper preset's name has one).
    pub fn jbsq_preset(&self) -> JbsqPreset {
        presets::jbsq_preset(self.preset.name).expect("every preset has a JBSQ leaf")
    }

    /// The switch in words: `leaf`, `spine` or `JBSQ leaf`.
    pub fn switch(&self) -> String {
        match self.leaf {
            LeafKind::Jbsq => "JBSQ leaf".into(),
            LeafKind::Horus => self.role.to_string(),
        }
    }

    /// The command that writes this target.
    pub fn command(&self) -> String {
        let leaf = match self.leaf {
            LeafKind::Jbsq => " --leaf jbsq",
            LeafKind::Horus => "",
        };
        format!(
            "cargo run -p rtl-gen -- --board {} --role {}{leaf} --preset {}",
            self.board.name, self.role, self.preset.name
        )
    }

    /// The switch's top module without the board's prefix: `horus_leaf`, `horus_spine_small`,
    /// `horus_leaf_jbsq`, ...
    pub fn switch_module(&self) -> String {
        match self.leaf {
            LeafKind::Jbsq => self.jbsq_preset().module_name(),
            LeafKind::Horus => self.preset.module_name(),
        }
    }
    /// The plug-in's top module: `horus_box_leaf`, `horus_box_spine_small`,
    /// `horus_box_leaf_jbsq` (OpenNIC), `horus_nf_leaf` (NetFPGA-PLUS), ...
    pub fn module_name(&self) -> String {
        let kind = match self.board.shell {
            Shell::OpenNic => "horus_box_",
            Shell::NetFpgaPlus => "horus_nf_",
        };
        self.switch_module().replacen("horus_", kind, 1)
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
    let emit = Emit(p.module_name());
    crate::identity::stamp(match p.leaf {
        LeafKind::Jbsq => p
            .jbsq_preset()
            .with_box(p.board, p.seed, p.conn_timeout_us, emit),
        LeafKind::Horus => p.preset.with_box(p.board, p.seed, p.conn_timeout_us, emit),
    })
}

/// Loads the switch configuration at `path` for `p`: its ports must be the board's (by name or
/// number), its role and leaf the target's, its table sizes the preset's.
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
    if cfg.switch.leaf != p.leaf {
        bail!(
            "{}: switch.leaf is {}, the target's {} (--leaf)",
            path.display(),
            leaf_name(cfg.switch.leaf),
            leaf_name(p.leaf)
        );
    }
    let not_for_hw = |e: String| anyhow::anyhow!("{}: not for the hardware: {e}", path.display());
    match p.leaf {
        LeafKind::Horus => {
            if cfg.sizes != p.preset.sizes() {
                bail!(
                    "{}: sizes {:?} are not the preset {}'s {:?} (--preset)",
                    path.display(),
                    cfg.sizes,
                    p.preset.name,
                    p.preset.sizes()
                );
            }
            horus_pipeline::regmap::RegFile::switch_config(&cfg).map_err(not_for_hw)?;
        }
        LeafKind::Jbsq => {
            let j = p.jbsq_preset().sizes();
            if (cfg.sizes.pools, cfg.sizes.nodes, cfg.sizes.conn_table)
                != (j.pools, j.nodes, j.conn_table)
            {
                bail!(
                    "{}: sizes {:?} are not the JBSQ preset {}'s ({} pools, {} nodes, {} \
                     connections; --preset)",
                    path.display(),
                    cfg.sizes,
                    p.preset.name,
                    j.pools,
                    j.nodes,
                    j.conn_table
                );
            }
            horus_regs::jbsq_map::switch_config(&cfg).map_err(not_for_hw)?;
            JbsqLeaf::from_config_at(&cfg, j, p.seed).map_err(|e| not_for_hw(e.to_string()))?;
        }
    }
    Ok(cfg)
}

/// A leaf kind as a configuration writes it.
fn leaf_name(k: LeafKind) -> &'static str {
    match k {
        LeafKind::Horus => "\"horus\"",
        LeafKind::Jbsq => "\"jbsq\"",
    }
}
