//! The companion P4 program for Tofino 1 (TNA), generated from the same sources as the FPGA
//! pipeline: `cargo run -p rtl-gen -- --target p4` writes `p4/horus_common.p4`,
//! `p4/horus_leaf.p4` and `p4/horus_spine.p4` into the output folder.
//!
//! - [`plan`]: the Tofino stage of every table (the model's and the program's own).
//! - [`ir`]: a program's ingress as typed data (declarations, tables, the apply tree), printed
//!   at the edge.
//! - [`emit`]: the programs, from the model's wire format, packet types, drop reasons, the size
//!   preset and the plan: the common include and the frame as text, the ingress typed
//!   (`ingress`).
//! - [`check`]: the structural checker each typed ingress must pass before it is printed.
//!
//! `docs/p4.md` describes the program, what is and is not checked here, and each place where it
//! departs from the model.

pub mod bfrt;
pub mod check;
pub mod compile;
pub mod emit;
mod ingress;
pub mod ir;
pub mod plan;
pub mod ptf;
mod ra_tables;
mod templates;

use anyhow::{Context, Result};
use horus_model::config::Role;
use horus_pipeline::presets;

use crate::{GeneratedFile, Params};

/// The folder (inside the output folder) the P4 files go to.
pub const DIR: &str = "p4";

/// The file of `role`'s program.
pub fn program_file(role: Role) -> String {
    format!("{DIR}/{}.p4", emit::program_name(role))
}

/// The files for the switch `cfg` describes: its `bfrt_python` set-up script and its PTF tests.
/// The PTF tests need a pool of two nodes or more; without one there are none.
pub fn setup(cfg: &horus_model::config::Config) -> Result<Vec<GeneratedFile>> {
    let mut files = vec![GeneratedFile::new(
        format!("{DIR}/{}", bfrt::setup_file(cfg)),
        bfrt::setup_script(cfg)?,
    )];
    if ptf::pool_of(cfg).is_ok() {
        files.push(GeneratedFile::new(
            format!("{DIR}/{}.py", ptf::ptf_module(cfg)),
            ptf::ptf_file(cfg)?,
        ));
    }
    Ok(files)
}

/// The one repair gap of a configuration's pools, which the Tofino leaf holds as a constant
/// (`docs/algorithm.md`, T12): the `[defaults]` gap when no pool is configured, an error naming
/// two pools that set different gaps.
pub fn repair_gap_us(cfg: &horus_model::config::Config) -> Result<u16> {
    let gap = |p: &horus_model::config::PoolConfig| p.params.idle_repair_gap_us;
    let Some(first) = cfg.pools.first() else {
        return Ok(cfg.defaults.idle_repair_gap_us);
    };
    if let Some(other) = cfg.pools.iter().find(|p| gap(p) != gap(first)) {
        anyhow::bail!(
            "pools {} and {} set idle_repair_gap_us {} and {}: the Tofino leaf holds one repair \
             gap for every pool (docs/algorithm.md, T12)",
            first.id,
            other.id,
            gap(first),
            gap(other)
        );
    }
    Ok(gap(first))
}

/// The generated files and, for each program, what the checker found.
pub type Checked = (Vec<GeneratedFile>, Vec<(Role, check::Report)>);

/// The P4 files for `params` (the common include, then one program per role), each program
/// checked by [`check::check`]; with the checker's reports.
pub fn files(params: &Params) -> Result<Checked> {
    let mut files = Vec::new();
    let mut reports = Vec::new();
    let common = emit::common()?;
    files.push(GeneratedFile::new(
        format!("{DIR}/horus_common.p4"),
        common.clone(),
    ));
    for &role in &params.roles {
        let p = presets::preset(&params.preset, role).context("unknown preset")?;
        let times = emit::Times {
            conn_timeout_us: params.conn_timeout_us,
            repair_gap_us: params.repair_gap_us,
        };
        let ingress = emit::ingress(role, &p.sizes());
        let report = check::check(role, &ingress, &common)
            .with_context(|| format!("checking the {role} P4 program"))?;
        let text = emit::print(role, &ingress, &p.sizes(), &params.preset, times)?;
        reports.push((role, report));
        files.push(GeneratedFile::new(program_file(role), text));
    }
    Ok((files, reports))
}
