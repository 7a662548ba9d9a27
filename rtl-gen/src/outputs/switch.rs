//! The Verilog of the leaf and spine switches (`horus_leaf.v`, `horus_spine.v`, top modules of
//! the same names; a preset other than `default` adds its name), and of the leaf that holds tasks
//! with a leaf (`horus_leaf_jbsq.v`), from `horus-pipeline` at a size preset, emitted and
//! normalized by `horus-hdl-tools`.

use crate::{GeneratedFile, Output, Params};
use anyhow::{Context, Result};
use horus_model::config::Role;
use horus_pipeline::presets::{self, Build, JbsqBuild, JbsqPreset, Preset, WithTop};
use rust_hdl::prelude::Block;

/// The switches of [`Params::roles`].
pub struct Switches;

impl Output for Switches {
    fn name(&self) -> &'static str {
        "switch Verilog"
    }

    fn files(&self, params: &Params) -> Result<Vec<GeneratedFile>> {
        let mut files = params
            .roles
            .iter()
            .map(|&role| {
                let p = presets::preset(&params.preset, role)
                    .with_context(|| format!("no preset called {}", params.preset))?;
                Ok(GeneratedFile::new(
                    file_name(&p),
                    verilog(&p, params.seed, params.conn_timeout_us),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        if params.roles.contains(&Role::Leaf) {
            let p = presets::jbsq_preset(&params.preset)
                .with_context(|| format!("no JBSQ preset called {}", params.preset))?;
            files.push(GeneratedFile::new(
                format!("{}.v", p.module_name()),
                jbsq_verilog(&p, params.seed, params.conn_timeout_us),
            ));
        }
        Ok(files)
    }
}

struct Emit(String);

impl WithTop for Emit {
    type Output = String;
    fn with<B: Block>(self, top: &B) -> String {
        horus_hdl_tools::verilog::emit_named(top, &self.0)
    }
}

/// The file a preset's switch is written to.
pub fn file_name(p: &Preset) -> String {
    format!("{}.v", p.module_name())
}

/// The Verilog of the switch with `p`'s sizes; its generator starts at `seed` and its connection
/// entries expire after `conn_timeout_us`.
pub fn verilog(p: &Preset, seed: u64, conn_timeout_us: u32) -> String {
    crate::identity::stamp(p.with_top(seed, conn_timeout_us, Emit(p.module_name())))
}

/// The Verilog of the JBSQ leaf with `p`'s sizes (`horus_pipeline::jbsq::top::JbsqTop`), as
/// [`verilog`] the paper switch's.
pub fn jbsq_verilog(p: &JbsqPreset, seed: u64, conn_timeout_us: u32) -> String {
    crate::identity::stamp(p.with_top(seed, conn_timeout_us, Emit(p.module_name())))
}
