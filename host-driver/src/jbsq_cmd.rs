//! `horusctl`'s commands on the leaf that holds tasks (`jbsq`), beside the paper switch's in
//! `main.rs`: its configuration's check, its set-up's report, its bounds, its identification.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use horus_host_driver::Regs;
use horus_host_driver::device::Device;
use horus_host_driver::jbsq::JbsqDriver;
use horus_model::config::Config;
use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{Advertise, Fallback, JbsqLeaf};
use horus_regs::boards::Board;

use crate::{Counted, Print, board_line, finish_script, info_tail};

/// `apply` on a JBSQ leaf, and its report.
pub(crate) fn apply_jbsq(d: &mut JbsqDriver<Device>, cfg: &Config, out: &mut String) -> Result<()> {
    let n = d.apply(cfg)?;
    let workers: usize = cfg.pools.iter().map(|p| p.nodes.len()).sum();
    writeln!(
        out,
        "switch register words written, {n} control pass(es): {} pool(s), {workers} worker(s) \
         with their free places",
        cfg.pools.len()
    )?;
    Ok(())
}

/// `info`'s last lines, whichever switch: its status, its switch ID, and whether it runs the
/// Verilog file given.
/// `check` of a configuration of the leaf that holds tasks: each pool as the leaf lays it out
/// (`JbsqLeaf::from_config_at`, in the rings and task buffer of the JBSQ preset with its table
/// sizes), the passes `apply` runs, and the hardware that takes it.
pub(crate) fn check_jbsq(
    config: &Path,
    cfg: &Config,
    board: Option<&'static Board>,
    print: Print,
) -> Result<()> {
    let mut out = String::new();
    let preset = horus_regs::presets::jbsq_preset_for(&cfg.sizes)
        .expect("load found the configuration's JBSQ preset");
    let (leaf, signals) = JbsqLeaf::from_config_at(cfg, preset.sizes(), 1)?;
    writeln!(
        out,
        "{}: JBSQ leaf {}, {} pool(s)",
        config.display(),
        cfg.switch.id,
        cfg.pools.len()
    )?;
    let mut mirror = JbsqLeaf::new(preset.sizes(), 1);
    let mut passes = 0;
    for pool in &cfg.pools {
        let pc = leaf.tables().pool_cfg[usize::from(pool.id)]
            .expect("from_config_at configures every pool")
            .cfg;
        let own: Vec<String> = pool
            .nodes
            .iter()
            .filter_map(|n| n.k.map(|k| format!("node {} k {k}", n.id)))
            .collect();
        let advertise = match pc.advertise {
            Advertise::Idle => "idle".to_string(),
            Advertise::Places => "places".to_string(),
            Advertise::Queue { room } => format!("queue (room {room})"),
        };
        let fallback = match pc.fallback {
            Fallback::Random => "random",
            Fallback::Drop => "drop",
        };
        writeln!(
            out,
            "  pool {}: {} worker(s) in node slots {}..{}, k {}{}, advertise {advertise}, \
             fallback {fallback}, task buffer slots {}..{}",
            pool.id,
            pool.nodes.len(),
            pc.base,
            u32::from(pc.base) + u32::from(pc.capacity),
            pc.k,
            if own.is_empty() {
                String::new()
            } else {
                format!(" ({})", own.join(", "))
            },
            pc.queue_base,
            pc.queue_base + pc.queue_slots,
        )?;
        // The passes `apply` runs, planned as it plans them (each checked to fit its fields).
        horus_regs::jbsq_map::configure_pool(&mut mirror, pool.id, pc)
            .map_err(anyhow::Error::msg)?;
        passes += 1;
        for n in &pool.nodes {
            passes +=
                horus_regs::jbsq_map::add_node(&mut mirror, pool.id, n.id, n.k, 0, NodeAddr::of(n))
                    .map_err(anyhow::Error::msg)?
                    .len();
        }
    }
    writeln!(
        out,
        "{passes} control passes; {} startup message(s) to spines",
        signals.len()
    )?;
    writeln!(
        out,
        "hardware: {} (rtl-gen --leaf jbsq --preset {})",
        preset.module_name(),
        preset.name
    )?;
    if let Some(b) = board {
        writeln!(out, "{}", board_line(b))?;
    }
    print(&out)
}

/// `set-pool --k` on a JBSQ leaf: one member's bound (`node`), or the pool's and every member's.
pub(crate) fn set_bounds(
    d: &mut JbsqDriver<Device>,
    pool: u16,
    k: u8,
    node: Option<u16>,
    out: &mut String,
) -> Result<()> {
    d.refresh()?;
    if let Some(node) = node {
        d.set_bound(pool, node, k)?;
        writeln!(
            out,
            "node {node} of pool {pool}: bound {k}, its places afresh"
        )?;
        return Ok(());
    }
    let members = jbsq_members(d, pool)
        .with_context(|| format!("pool {pool} is not configured on this leaf"))?;
    d.set_pool_k(pool, k)?;
    for &n in &members {
        d.set_bound(pool, n, k)?;
    }
    writeln!(
        out,
        "pool {pool}: bound {k}, for its {} member(s) (their places afresh) and the workers added later",
        members.len()
    )?;
    Ok(())
}

/// The members of `pool` in the driver's mirror, in slot order; `None` when it is not configured.
fn jbsq_members(d: &JbsqDriver<Device>, pool: u16) -> Option<Vec<u16>> {
    let t = d.mirror().tables();
    let pc = t.pool_cfg.get(usize::from(pool)).copied().flatten()?;
    let base = usize::from(pc.cfg.base);
    Some(t.members[base..base + usize::from(pc.n)].to_vec())
}

/// `info` for the leaf that holds tasks.
pub(crate) fn info_jbsq(
    mut d: JbsqDriver<Device>,
    verilog: Option<PathBuf>,
    print: Print,
) -> Result<()> {
    let mut out = String::new();
    let i = d.ident;
    let s = i.sizes;
    writeln!(out, "device: {}", Regs::describe(&d.regs))?;
    writeln!(
        out,
        "switch: the leaf that holds tasks (JBSQ), {}",
        horus_regs::presets::JBSQ_PRESETS
            .iter()
            .find(|p| p.sizes() == s)
            .map_or("no preset of this horusctl".into(), |p| format!(
                "preset {} ({})",
                p.name,
                p.module_name()
            ))
    )?;
    writeln!(
        out,
        "tables: {} pools, {} nodes, {} connections (timeout {} us), {} ring entries, {} held \
         tasks of up to {} bytes",
        s.pools,
        s.nodes,
        s.conn_table,
        i.conn_timeout_us,
        s.ring_entries,
        s.buffer_slots,
        s.slot_bytes
    )?;
    writeln!(
        out,
        "build: hash {:#010x}, JBSQ register map version {}",
        i.build_hash, i.map_version
    )?;
    let st = d.status()?;
    info_tail(&mut d.regs, st, i.build_hash, verilog, &mut out)?;
    finish_script(d.regs.script(), out, print)
}

impl Counted for JbsqDriver<Device> {
    fn counters(&mut self) -> horus_host_driver::driver::Result<Vec<(&'static str, u32)>> {
        JbsqDriver::counters(self)
    }
    fn status(&mut self) -> horus_host_driver::driver::Result<u32> {
        JbsqDriver::status(self)
    }
    fn script(&self) -> Option<&str> {
        self.regs.script()
    }
}
