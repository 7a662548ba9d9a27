//! `horusctl`'s commands on the leaf that holds tasks (`jbsq`), beside the paper switch's in
//! `main.rs`: its configuration's check, its set-up's report, its bounds, its identification.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use horus_host_driver::Regs;
use horus_host_driver::device::Device;
use horus_host_driver::jbsq::JbsqDriver;
use horus_model::config::Config;
use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{Advertise, Fallback, JbsqLeaf, PoolSettings};
use horus_regs::boards::Board;

use crate::{Counted, Print, board_line, finish_script, info_tail, report_delta_arg};

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

/// `set-pool` on a JBSQ leaf: what changes.
#[derive(Default)]
pub(crate) struct JbsqPoolChange {
    pub k: Option<u8>,
    pub node: Option<u16>,
    pub hold_us: Option<u16>,
    pub link_at: Option<u16>,
    pub unlink_at: Option<u16>,
    pub report_delta: Option<f64>,
    pub repair_gap_us: Option<u16>,
    pub buffer: Option<BufferChange>,
}

/// `set-pool --buffer-slots`: the pool's new share of the task buffer (decision 37).
pub(crate) struct BufferChange {
    pub slots: u32,
    /// The region's first slot; `None`: planned ([`plan_buffer_region`]).
    pub base: Option<u32>,
    /// How long the pool's held queue may take to drain.
    pub drain: std::time::Duration,
}

/// Where `pool`'s region of `slots` buffer slots goes: where it is when it fits there (a
/// shrink always does), else at the first slot from which `slots` are free of the other
/// pools' regions. Refused, naming the free spans, when no such run of slots is left.
pub(crate) fn plan_buffer_region(leaf: &JbsqLeaf, pool: u16, slots: u32) -> Result<u32> {
    let t = leaf.tables();
    let total = leaf.sizes().buffer_slots;
    let own = t.pool_cfg[usize::from(pool)]
        .with_context(|| format!("pool {pool} is not configured on this leaf"))?
        .cfg
        .queue_base;
    let mut others: Vec<(u32, u32)> = t
        .pool_cfg
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != usize::from(pool))
        .filter_map(|(_, pc)| {
            pc.map(|pc| (pc.cfg.queue_base, pc.cfg.queue_base + pc.cfg.queue_slots))
        })
        .collect();
    others.sort_unstable();
    let fits = |b: u32| {
        u64::from(b) + u64::from(slots) <= u64::from(total)
            && others.iter().all(|&(s, e)| b + slots <= s || e <= b)
    };
    let candidates = std::iter::once(own)
        .chain(std::iter::once(0))
        .chain(others.iter().map(|&(_, e)| e));
    if let Some(b) = candidates.into_iter().find(|&b| fits(b)) {
        return Ok(b);
    }
    let mut free = Vec::new();
    let mut at = 0;
    for &(s, e) in &others {
        if s > at {
            free.push(format!("[{at}, {s})"));
        }
        at = at.max(e);
    }
    if at < total {
        free.push(format!("[{at}, {total})"));
    }
    bail!(
        "no {slots} free slots in a row in the task buffer's {total} for pool {pool}: the other \
         pools leave {} (shrink another pool's share first: set-pool --pool Q --buffer-slots M)",
        if free.is_empty() {
            "none".to_string()
        } else {
            free.join(", ")
        }
    )
}

/// `set-pool` on a JBSQ leaf (decision 36): with `--node`, that member's bound; else the pool's
/// settings (its bound for later workers, hold, signal parameters; the others kept) in one pass,
/// then, with `--k`, every member's bound; with `--buffer-slots`, its share of the task buffer
/// (decision 37: it stops holding, its queue drains, its region moves) last.
pub(crate) fn set_jbsq_pool(
    d: &mut JbsqDriver<Device>,
    pool: u16,
    c: JbsqPoolChange,
    out: &mut String,
) -> Result<()> {
    d.refresh()?;
    if let Some(node) = c.node {
        let k = c.k.context("--node sets a member's bound: it needs --k")?;
        if c.hold_us.is_some()
            || c.link_at.is_some()
            || c.unlink_at.is_some()
            || c.report_delta.is_some()
            || c.repair_gap_us.is_some()
            || c.buffer.is_some()
        {
            bail!("--node sets a member's bound (--k) alone; the other settings are the pool's");
        }
        d.set_bound(pool, node, k)?;
        writeln!(
            out,
            "node {node} of pool {pool}: bound {k}, its places afresh"
        )?;
        return Ok(());
    }
    let members = jbsq_members(d, pool)
        .with_context(|| format!("pool {pool} is not configured on this leaf"))?;
    let cfg = d.mirror().tables().pool_cfg[usize::from(pool)]
        .expect("jbsq_members found the pool")
        .cfg;
    let settings = c.k.is_some()
        || c.hold_us.is_some()
        || c.link_at.is_some()
        || c.unlink_at.is_some()
        || c.report_delta.is_some()
        || c.repair_gap_us.is_some();
    if settings || c.buffer.is_none() {
        pool_settings(d, pool, &cfg, &c, &members, out)?;
    }
    if let Some(b) = c.buffer {
        let (was_base, was_slots) = (cfg.queue_base, cfg.queue_slots);
        let base = match b.base {
            Some(base) => base,
            None => plan_buffer_region(d.mirror(), pool, b.slots)?,
        };
        let reads = d.move_buffer(pool, base, b.slots, b.drain)?;
        writeln!(
            out,
            "pool {pool}: buffer region [{base}, {}) (was [{was_base}, {})), moved once its \
             queue had drained ({reads} read(s) of its held tasks)",
            base + b.slots,
            was_base + was_slots
        )?;
    }
    Ok(())
}

/// The pool's settings pass, then with `--k` every member's bound.
fn pool_settings(
    d: &mut JbsqDriver<Device>,
    pool: u16,
    cfg: &horus_model::sched::jbsq::JbsqPool,
    c: &JbsqPoolChange,
    members: &[u16],
    out: &mut String,
) -> Result<()> {
    let mut s = PoolSettings::of(cfg);
    s.k = c.k.unwrap_or(s.k);
    s.hold_us = c.hold_us.unwrap_or(s.hold_us);
    s.params.link_at = c.link_at.unwrap_or(s.params.link_at);
    s.params.unlink_at = c.unlink_at.unwrap_or(s.params.unlink_at);
    s.params.repair_gap_us = c.repair_gap_us.unwrap_or(s.params.repair_gap_us);
    if let Some(r) = c.report_delta {
        s.params.report_delta = report_delta_arg(r)?;
    }
    d.set_pool_params(pool, s)?;
    writeln!(
        out,
        "pool {pool}: bound {} for workers added later, hold {} us, link at {} unlink at {}, \
         report delta {}, repair gap {} us",
        s.k,
        s.hold_us,
        s.params.link_at,
        s.params.unlink_at,
        s.params.report_delta.to_f64(),
        s.params.repair_gap_us
    )?;
    if let Some(k) = c.k {
        for &n in members {
            d.set_bound(pool, n, k)?;
        }
        writeln!(
            out,
            "its {} member(s): bound {k}, their places afresh",
            members.len()
        )?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use horus_host_driver::device::JbsqModelDevice;
    use horus_model::fixed::Load;

    /// The model device behind the JBSQ map, `configs/example-leaf-jbsq.toml` applied, with its
    /// state file (in the folder returned).
    fn applied() -> (JbsqDriver<Device>, Config, tempfile::TempDir) {
        let path = format!(
            "{}/../configs/example-leaf-jbsq.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let cfg = Config::from_file(Path::new(&path)).unwrap();
        let dev = Device::JbsqModel(Box::new(JbsqModelDevice::fresh(&cfg, 1, "model").unwrap()));
        let dir = tempfile::tempdir().unwrap();
        let mut d = JbsqDriver::open(dev)
            .unwrap()
            .with_state_file(&dir.path().join("leaf.json"))
            .unwrap();
        apply_jbsq(&mut d, &cfg, &mut String::new()).unwrap();
        (d, cfg, dir)
    }

    /// `set-pool` on the leaf that holds tasks: the options given change, the others keep the
    /// pool's settings; `--node` takes `--k` alone; a bad report delta is refused with nothing
    /// changed. On the model device behind the JBSQ map, with its state file.
    #[test]
    fn set_pool_changes_the_settings_given_and_keeps_the_others() {
        let (mut d, cfg, _dir) = applied();
        let pool = cfg.pools[0].id;
        let settings = |d: &JbsqDriver<Device>| {
            PoolSettings::of(&d.mirror().tables().pool_cfg[usize::from(pool)].unwrap().cfg)
        };
        let before = settings(&d);
        let none = JbsqPoolChange::default;
        let mut out = String::new();
        let change = JbsqPoolChange {
            hold_us: Some(before.hold_us + 7),
            link_at: Some(before.params.link_at + 1),
            report_delta: Some(0.5),
            ..none()
        };
        set_jbsq_pool(&mut d, pool, change, &mut out).unwrap();
        let after = settings(&d);
        assert_eq!(after.hold_us, before.hold_us + 7, "{out}");
        assert_eq!(after.params.link_at, before.params.link_at + 1);
        assert_eq!(after.params.report_delta, Load::from_f64(0.5).unwrap());
        assert_eq!(
            (after.k, after.params.unlink_at, after.params.repair_gap_us),
            (
                before.k,
                before.params.unlink_at,
                before.params.repair_gap_us
            )
        );
        assert!(
            out.contains(&format!("hold {} us", before.hold_us + 7)),
            "{out}"
        );
        let bad = JbsqPoolChange {
            report_delta: Some(0.0),
            ..none()
        };
        let e = set_jbsq_pool(&mut d, pool, bad, &mut String::new()).unwrap_err();
        assert!(e.to_string().contains("--report-delta 0"), "{e}");
        assert_eq!(settings(&d), after);
        let node_and_hold = JbsqPoolChange {
            k: Some(2),
            node: Some(0),
            hold_us: Some(1),
            ..none()
        };
        let e = set_jbsq_pool(&mut d, pool, node_and_hold, &mut String::new()).unwrap_err();
        assert!(
            e.to_string().contains("--node sets a member's bound"),
            "{e}"
        );
        assert_eq!(settings(&d), after);
    }

    /// `set-pool --buffer-slots` on the leaf that holds tasks (decision 37): a shrink stays in
    /// place, a growth that fits nowhere is refused naming the free spans, one goes to the first
    /// free slots once another pool has shrunk, an explicit base over another pool's region is
    /// refused; the card's table is the mirror's after each.
    #[test]
    fn set_pool_moves_a_pools_buffer_share_where_it_fits() {
        let (mut d, _, _dir) = applied();
        let region = |d: &JbsqDriver<Device>, pool: usize| {
            let pc = d.mirror().tables().pool_cfg[pool].unwrap();
            assert!(pc.holds);
            (pc.cfg.queue_base, pc.cfg.queue_slots)
        };
        assert_eq!((region(&d, 1), region(&d, 2)), ((0, 1024), (1024, 3072)));
        let share = |slots: u32, base: Option<u32>| JbsqPoolChange {
            buffer: Some(BufferChange {
                slots,
                base,
                drain: std::time::Duration::from_millis(10),
            }),
            ..Default::default()
        };
        let mut out = String::new();
        set_jbsq_pool(&mut d, 1, share(512, None), &mut out).unwrap();
        assert!(
            out.contains("pool 1: buffer region [0, 512) (was [0, 1024))"),
            "{out}"
        );
        assert_eq!(region(&d, 1), (0, 512));
        let e = set_jbsq_pool(&mut d, 1, share(2048, None), &mut String::new()).unwrap_err();
        assert!(
            e.to_string().contains("no 2048 free slots in a row")
                && e.to_string().contains("leave [0, 1024)"),
            "{e}"
        );
        set_jbsq_pool(&mut d, 2, share(1024, None), &mut String::new()).unwrap();
        assert_eq!(region(&d, 2), (1024, 1024));
        set_jbsq_pool(&mut d, 1, share(2048, None), &mut String::new()).unwrap();
        assert_eq!(region(&d, 1), (2048, 2048));
        let e = set_jbsq_pool(&mut d, 1, share(64, Some(1500)), &mut String::new()).unwrap_err();
        assert!(e.to_string().contains("overlaps another pool's"), "{e}");
        assert_eq!(region(&d, 1), (2048, 2048));
        let Device::JbsqModel(m) = &d.regs else {
            unreachable!()
        };
        assert!(m.switch().leaf().tables().pool_cfg == d.mirror().tables().pool_cfg);
    }
}
