//! A switch behind any device: its identity, its control passes, its tables read back, its
//! counters, and `apply`, which brings a running switch to a configuration by writing only what
//! differs.
//!
//! The host's view of the switch is the model's: [`Switch::state`] reads the tables that hold
//! the configuration back into a `Scheduler` (`readback::decode`), so that every operation is
//! validated, and its values computed (`Scheduler::validate`, `host_values`), exactly as the
//! model would, against what the switch holds now.

use std::collections::{BTreeMap, BTreeSet};

use horus_model::config::{Config, Role, Sizes};
use horus_model::fixed::Load;
use horus_model::sched::{ControlOp, DropReason, Params, Scheduler, SpineRef, Stage, config_ops};
use horus_regs::SPINES;
use horus_regs::presets::{PRESETS, Preset};
use horus_regs::readback::{self, RB_WORDS};
use horus_regs::regmap::{self, Field, RegFile, fields};
use thiserror::Error;

use crate::access::{self, AccessError, Regs};

/// Why a command failed.
#[derive(Debug, Error)]
pub enum DriverError {
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error("no Horus switch here: ID reads {0:#010x}, not {id:#010x} (\"HORU\")", id = regmap::ID_VALUE)]
    NotHorus(u32),
    #[error(
        "the switch's register map is version {got}, this horusctl's {want}: use the horusctl built with its bitstream"
    )]
    MapVersion { got: u32, want: u32 },
    #[error("the configuration does not fit the loaded bitstream: {}", .0.join("; "))]
    Mismatch(Vec<String>),
    #[error("{0}")]
    Refused(String),
    #[error("{what}: the switch did not finish within {polls} polls of {reg}")]
    Stuck {
        what: String,
        reg: &'static str,
        polls: u32,
    },
    #[error("the switch's tables disagree with each other: {0}")]
    Inconsistent(String),
}

pub type Result<T, E = DriverError> = std::result::Result<T, E>;

/// Polls of a status register before a command gives up (a control pass enters within a few
/// cycles of the pipeline being free of resubmissions; a read leaves within the pipeline's
/// depth).
pub const POLLS: u32 = 10_000;

/// What the loaded bitstream is: the identification registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub role: Role,
    pub pool_bits: u32,
    pub node_bits: u32,
    pub conn_bits: u32,
    pub map_version: u32,
    pub build_hash: u32,
    pub conn_timeout_us: u32,
}

impl Identity {
    /// The size preset the bitstream was built at, if it is one of ours.
    pub fn preset(&self) -> Option<Preset> {
        PRESETS.iter().copied().find(|p| {
            p.role == self.role
                && p.pool_bits as u32 == self.pool_bits
                && p.node_bits as u32 == self.node_bits
                && p.conn_bits as u32 == self.conn_bits
        })
    }

    /// The table sizes (the preset's; powers of two otherwise).
    pub fn sizes(&self) -> Sizes {
        self.preset().map_or(
            Sizes {
                pools: (1u32 << self.pool_bits).min(u16::MAX.into()) as u16,
                nodes: (1u32 << self.node_bits).min(u16::MAX.into()) as u16,
                conn_table: 1 << self.conn_bits,
            },
            |p| p.sizes(),
        )
    }

    /// What in `cfg` differs from the bitstream, one phrase each.
    pub fn mismatches(&self, cfg: &Config) -> Vec<String> {
        let mut m = Vec::new();
        if cfg.switch.role != self.role {
            m.push(format!(
                "switch.role is {}, the bitstream is a {}",
                cfg.switch.role, self.role
            ));
        }
        m.extend(table_mismatches(cfg, self.sizes(), self.conn_timeout_us));
        m
    }
}

/// What in `cfg`'s `[sizes]` and connection timeout differs from a bitstream's `sizes` and
/// `conn_timeout_us`, one phrase each (the paper switch's and the JBSQ leaf's alike).
pub(crate) fn table_mismatches(cfg: &Config, s: Sizes, conn_timeout_us: u32) -> Vec<String> {
    let mut m = Vec::new();
    if cfg.sizes != s {
        m.push(format!(
            "[sizes] is {} pools, {} nodes, {} connections; the bitstream has {}, {}, {}",
            cfg.sizes.pools, cfg.sizes.nodes, cfg.sizes.conn_table, s.pools, s.nodes, s.conn_table
        ));
    }
    if cfg.switch.conn_timeout_us != conn_timeout_us {
        m.push(format!(
            "switch.conn_timeout_us is {}, the bitstream's is {} (fixed when its Verilog was generated)",
            cfg.switch.conn_timeout_us, conn_timeout_us
        ));
    }
    m
}

/// One control operation `apply` or a command ran, for its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Switch register words written (`regmap::switch_words`).
    pub words: Vec<usize>,
    pub ops: Vec<ControlOp>,
}

/// A switch reached through `R`.
pub struct Switch<R: Regs> {
    pub regs: R,
    pub ident: Identity,
}

fn addr(f: &Field) -> u32 {
    f.byte_address() as u32
}

impl<R: Regs> Switch<R> {
    /// Opens the switch behind `regs`: reads its identification first and refuses anything that
    /// is not a Horus switch of this register map.
    pub fn open(mut regs: R) -> Result<Switch<R>> {
        let id = regs.read(addr(&fields::ID))?;
        if id != regmap::ID_VALUE {
            return Err(DriverError::NotHorus(id));
        }
        let map_version = regs.read(addr(&fields::MAP_VERSION))?;
        if map_version != regmap::MAP_VERSION {
            return Err(DriverError::MapVersion {
                got: map_version,
                want: regmap::MAP_VERSION,
            });
        }
        let info = regs.read(addr(&fields::ROLE))?;
        let ident = Identity {
            role: if info & 1 == 1 {
                Role::Spine
            } else {
                Role::Leaf
            },
            pool_bits: info >> 8 & 0xff,
            node_bits: info >> 16 & 0xff,
            conn_bits: info >> 24 & 0xff,
            map_version,
            build_hash: regs.read(addr(&fields::BUILD_HASH))?,
            conn_timeout_us: regs.read(addr(&fields::CONN_TIMEOUT_US))?,
        };
        // Table indexes are 16 bits wide.
        if [ident.pool_bits, ident.node_bits, ident.conn_bits]
            .iter()
            .any(|&b| b > 16)
        {
            return Err(DriverError::Inconsistent(format!(
                "the switch gives tables of 2^{} pools, 2^{} nodes, 2^{} connections: more than 16 bits of index",
                ident.pool_bits, ident.node_bits, ident.conn_bits
            )));
        }
        Ok(Switch { regs, ident })
    }

    /// Refuses `cfg` unless it fits the loaded bitstream, naming every difference.
    pub fn check_fits(&self, cfg: &Config) -> Result<()> {
        let m = self.ident.mismatches(cfg);
        if m.is_empty() {
            Ok(())
        } else {
            Err(DriverError::Mismatch(m))
        }
    }

    /// Reads the register at byte address `a` (refused unless the map has a register there).
    pub fn peek(&mut self, a: u32) -> Result<u32> {
        access::check(a, false)?;
        Ok(self.regs.read(a)?)
    }

    /// Writes the register at byte address `a` (refused unless it is writable).
    pub fn poke(&mut self, a: u32, value: u32) -> Result<()> {
        access::check(a, true)?;
        Ok(self.regs.write(a, value)?)
    }

    /// Every counter, in the map's order, by its field name: the scheduler's (the model's
    /// `Counters`), then the board adapter's `BOARD_DROPS`.
    pub fn counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        let mut out = Vec::new();
        for f in regmap::FIELDS.iter().filter(|f| {
            (regmap::COUNTER_BASE..regmap::COUNTER_BASE + regmap::COUNTERS).contains(&f.word)
                || f.word == fields::BOARD_DROPS.word
        }) {
            out.push((f.name, self.regs.read(f.byte_address() as u32)?));
        }
        Ok(out)
    }

    /// The status word: `CTL_BUSY`, `OVERFLOW`, `IN_FLIGHT`.
    pub fn status(&mut self) -> Result<u32> {
        Ok(self.regs.read(addr(&fields::CTL_BUSY))?)
    }

    /// Runs `f` holding the device against other processes (`Regs::lock`), once no pass is
    /// staged: a staged operation is several writes, which must not mix with another's.
    fn staged<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.regs.lock()?;
        let r = self.wait_go(what).and_then(|_| f(self));
        self.regs.unlock();
        r
    }

    /// Waits for the staged pass to enter the pipeline.
    fn wait_go(&mut self, what: &str) -> Result<()> {
        if self.regs.wait(addr(&fields::CTL_GO), 1, 0, POLLS)? {
            Ok(())
        } else {
            Err(DriverError::Stuck {
                what: what.into(),
                reg: "CTL_GO",
                polls: POLLS,
            })
        }
    }

    /// Entry `index` of `stage`'s table, or `None` when the switch has no such entry.
    pub fn read_entry(&mut self, stage: Stage, index: u16) -> Result<Option<[u32; RB_WORDS]>> {
        let regs = RegFile::read_entry(stage, index);
        let what = format!("reading {}[{index}]", stage.table_name());
        self.staged(&what.clone(), |sw| {
            for w in [
                regmap::fields::CTL_READ_ENTRY.word,
                regmap::fields::CTL_INDEX.word,
            ] {
                sw.regs.write(4 * w as u32, regs.words[w])?;
            }
            sw.regs.write(addr(&fields::CTL_GO), 1)?;
            sw.wait_go(&what)?;
            if !sw.regs.wait(addr(&fields::RB_VALID), 2, 0, POLLS)? {
                return Err(DriverError::Stuck {
                    what,
                    reg: "RB_BUSY",
                    polls: POLLS,
                });
            }
            if sw.regs.read(addr(&fields::RB_VALID))? & 1 == 0 {
                return Ok(None);
            }
            let mut w = [0u32; RB_WORDS];
            for (k, w) in w.iter_mut().enumerate() {
                *w = sw.regs.read(addr(regmap::rb_data(k)))?;
            }
            Ok(Some(w))
        })
    }

    /// Entry `index` of `stage`'s table, which must exist.
    fn entry(&mut self, stage: Stage, index: u16) -> Result<[u32; RB_WORDS]> {
        self.read_entry(stage, index)?.ok_or_else(|| {
            DriverError::Refused(format!(
                "{}[{index}] is beyond the switch's table",
                stage.table_name()
            ))
        })
    }

    /// The switch's configuration state as the model holds it: every pool's `poolCfg`, the
    /// members of the configured pools, and the `node` and `nodeAddr` entries of those members
    /// and of `extra` nodes (those an operation will name). Other entries are left as a fresh
    /// switch has them; `idleCtl` is not read: its removal lock is held only between a pass and
    /// its resubmission, and a control pass enters only when none is in flight.
    pub fn state(&mut self, extra: &[u16]) -> Result<Scheduler> {
        let sizes = self.ident.sizes();
        let id = self.regs.read(addr(&fields::SWITCH_ID))? as u16;
        let mut m = Scheduler::new(self.ident.role, id, sizes, self.ident.conn_timeout_us, 0);
        let mut nodes: BTreeSet<u16> = extra.iter().copied().filter(|&n| n < sizes.nodes).collect();
        for pool in 0..sizes.pools {
            let w = self.entry(Stage::PoolCfg, pool)?;
            readback::decode(m.tables_mut(), Stage::PoolCfg, pool.into(), &w)
                .map_err(DriverError::Inconsistent)?;
            let cfg = m.tables().pools[usize::from(pool)].cfg;
            if !cfg.valid {
                continue;
            }
            if cfg.n > cfg.capacity
                || u32::from(cfg.base) + u32::from(cfg.capacity) > sizes.nodes.into()
            {
                return Err(DriverError::Inconsistent(format!(
                    "pool {pool}: {} members in [{}, {}+{})",
                    cfg.n, cfg.base, cfg.base, cfg.capacity
                )));
            }
            for slot in cfg.base..cfg.base + cfg.n {
                let w = self.entry(Stage::Members1, slot)?;
                let t = m.tables_mut();
                readback::decode(t, Stage::Members1, slot.into(), &w)
                    .map_err(DriverError::Inconsistent)?;
                t.members2[usize::from(slot)] = t.members1[usize::from(slot)];
                nodes.insert(t.members1[usize::from(slot)].node);
            }
        }
        for &n in &nodes {
            for stage in [Stage::Node, Stage::NodeAddr] {
                let w = self.entry(stage, n)?;
                readback::decode(m.tables_mut(), stage, n.into(), &w)
                    .map_err(DriverError::Inconsistent)?;
            }
        }
        // Every member's node entry names its pool and slot.
        let t = m.tables();
        for (pool, row) in t.pools.iter().enumerate() {
            let c = row.cfg;
            if !c.valid {
                continue;
            }
            for slot in 0..c.n {
                let r = t.members1[usize::from(c.base + slot)];
                let e = t.nodes[usize::from(r.node)].node;
                if e.pool as usize != pool || e.slot != slot || e.factor != r.factor {
                    return Err(DriverError::Inconsistent(format!(
                        "pool {pool} slot {slot} holds node {}, whose entry says pool {} slot {}",
                        r.node, e.pool, e.slot
                    )));
                }
            }
        }
        Ok(m)
    }

    /// Runs `op` on the switch: validated against `m` (the switch's state, [`Switch::state`]),
    /// staged with the host's values from `m`, started, waited for; then run on `m` too, so
    /// that `m` stays the switch's state.
    pub fn control(&mut self, m: &mut Scheduler, op: ControlOp) -> Result<()> {
        m.validate(&op)
            .map_err(|e| DriverError::Refused(e.to_string()))?;
        let regs = RegFile::control(m, &op);
        self.regs.note(&describe(&op));
        self.staged(&describe(&op), |sw| {
            for w in regmap::control_words() {
                sw.regs.write(4 * w as u32, regs.words[w])?;
            }
            sw.regs.write(addr(&fields::CTL_GO), 1)?;
            sw.wait_go(&describe(&op))
        })?;
        run_in_model(m, op).map_err(DriverError::Refused)?;
        Ok(())
    }

    /// On a spine: removes every rack of leaf `leaf` (the nodes whose tasks go to `dst_id`
    /// `leaf`) from every pool; the passes run.
    pub fn fail_leaf(&mut self, leaf: u16) -> Result<Vec<ControlOp>> {
        if self.ident.role != Role::Spine {
            return Err(DriverError::Refused(
                "fail-leaf is for a spine; this switch is a leaf".into(),
            ));
        }
        let mut m = self.state(&[])?;
        let t = m.tables();
        let mut ops = Vec::new();
        for (pool, row) in t.pools.iter().enumerate() {
            for slot in row.cfg.base..row.cfg.base + row.cfg.n {
                let node = t.members1[usize::from(slot)].node;
                if t.nodes[usize::from(node)]
                    .addr
                    .is_some_and(|a| a.addr.dst_id == leaf)
                {
                    ops.push(ControlOp::RemoveNode {
                        pool: pool as u16,
                        node,
                    });
                }
            }
        }
        if ops.is_empty() {
            return Err(DriverError::Refused(format!(
                "no pool of this spine has a rack of leaf {leaf}"
            )));
        }
        for op in &ops {
            self.control(&mut m, *op)?;
        }
        Ok(ops)
    }

    /// Writes the switch registers of `cfg` that differ from the switch's; the words written. A
    /// spine entry that changes is made invalid first and valid again last, so that traffic
    /// never reports to a half-written spine.
    pub fn apply_switch_registers(&mut self, cfg: &Config) -> Result<Vec<usize>> {
        let want = RegFile::switch_config(cfg).map_err(DriverError::Refused)?;
        let mut cur = RegFile::default();
        for w in regmap::switch_words() {
            cur.words[w] = self.regs.read(4 * w as u32)?;
        }
        let mut written = Vec::new();
        let mut put = |regs: &mut R, w: usize, v: u32| -> Result<()> {
            regs.write(4 * w as u32, v)?;
            written.push(w);
            Ok(())
        };
        let spines = regmap::SPINE_BASE..regmap::SPINE_BASE + SPINES * regmap::SPINE_WORDS;
        for w in regmap::switch_words().filter(|w| !spines.contains(w)) {
            if cur.words[w] != want.words[w] {
                put(&mut self.regs, w, want.words[w])?;
            }
        }
        for i in 0..SPINES {
            let first = regmap::SPINE_BASE + i * regmap::SPINE_WORDS;
            let entry = first..first + regmap::SPINE_WORDS;
            if entry.clone().all(|w| cur.words[w] == want.words[w]) {
                continue;
            }
            let valid = regmap::spine(i).valid;
            debug_assert_eq!(valid.word, first);
            let valid_bit = 1u32 << valid.lsb;
            if cur.words[first] & valid_bit != 0 {
                put(&mut self.regs, first, cur.words[first] & !valid_bit)?;
            }
            for w in first + 1..entry.end {
                if cur.words[w] != want.words[w] {
                    put(&mut self.regs, w, want.words[w])?;
                }
            }
            put(&mut self.regs, first, want.words[first])?;
        }
        written.sort_unstable();
        written.dedup();
        Ok(written)
    }

    /// Brings the switch to `cfg`: checks that it fits the bitstream, writes the switch
    /// registers that differ, then runs the control passes [`plan`] finds, and nothing else.
    pub fn apply(&mut self, cfg: &Config) -> Result<Applied> {
        self.check_fits(cfg)?;
        let extra: Vec<u16> = cfg
            .pools
            .iter()
            .flat_map(|p| p.nodes.iter().map(|n| n.id))
            .collect();
        // The plan first: a configuration it refuses changes nothing.
        let mut m = self.state(&extra)?;
        let ops = plan(&m, cfg)?;
        let words = self.apply_switch_registers(cfg)?;
        for op in &ops {
            self.control(&mut m, *op)?;
        }
        Ok(Applied { words, ops })
    }
}

/// Runs `op` in the model with its resubmissions.
fn run_in_model(m: &mut Scheduler, op: ControlOp) -> Result<(), String> {
    let mut rs = m.control(op).map_err(|e| e.to_string())?.resubmit;
    while let Some(r) = rs {
        rs = m.resubmit(r).resubmit;
    }
    Ok(())
}

/// The control passes that take a switch whose state is `m` to `cfg`, fewest first:
///
/// - a pool the configuration does not name loses its nodes (the switch cannot forget a pool:
///   its tasks are then dropped as `empty_pool`);
/// - a node that left the configuration, or whose address or worker count changed, is removed
///   first (and added again last);
/// - changed parameters or capacity are one `SetPoolParams`, which resizes the pool's region in
///   place (same base) when the slots it needs are free;
/// - a pool whose spine changes, or whose region cannot grow in place, is emptied and placed
///   again, in the first free region that fits;
/// - new nodes are added, in the file's order.
///
/// Every operation is checked in a copy of `m` as it is planned, so that a plan the switch
/// would refuse is refused here, naming the pool.
pub fn plan(m: &Scheduler, cfg: &Config) -> Result<Vec<ControlOp>> {
    let mut sim = m.clone();
    let mut ops = Vec::new();
    // The configuration as operations (one conversion: the model's).
    let mut want: BTreeMap<u16, (ControlOp, Vec<ControlOp>)> = BTreeMap::new();
    let mut order = Vec::new();
    for op in config_ops(cfg) {
        match op {
            ControlOp::ConfigurePool { pool, .. } => {
                order.push(pool);
                want.insert(pool, (op, Vec::new()));
            }
            ControlOp::AddNode { pool, .. } => {
                want.get_mut(&pool).expect("its pool first").1.push(op);
            }
            _ => unreachable!("config_ops configures pools and adds nodes"),
        }
    }
    let pools = sim.sizes().pools;
    for pool in 0..pools {
        if sim.tables().pools[usize::from(pool)].cfg.valid && !want.contains_key(&pool) {
            empty_pool(&mut sim, pool, &mut ops)?;
        }
    }
    // A node the configuration puts in another pool leaves its present one first, so that the
    // pool it joins can take it wherever that pool is in the file.
    let moved_to: BTreeMap<u16, u16> = want
        .iter()
        .flat_map(|(&pool, (_, adds))| {
            adds.iter().map(move |op| match *op {
                ControlOp::AddNode { node, .. } => (node, pool),
                _ => unreachable!(),
            })
        })
        .collect();
    for pool in 0..pools {
        let c = sim.tables().pools[usize::from(pool)].cfg;
        if !c.valid {
            continue;
        }
        let leaving: Vec<u16> = (c.base..c.base + c.n)
            .map(|s| sim.tables().members1[usize::from(s)].node)
            .filter(|n| moved_to.get(n).is_some_and(|&p| p != pool))
            .collect();
        for node in leaving {
            run_op(&mut sim, ControlOp::RemoveNode { pool, node }, &mut ops)?;
        }
    }
    for &pool in &order {
        let (
            ControlOp::ConfigurePool {
                capacity,
                params,
                spine,
                ..
            },
            adds,
        ) = &want[&pool]
        else {
            unreachable!()
        };
        plan_pool(&mut sim, &mut ops, pool, (*capacity, *params, *spine), adds)?;
    }
    Ok(ops)
}

/// Runs `op` in the copy of the switch's state and adds it to the plan; a refusal names it.
fn run_op(sim: &mut Scheduler, op: ControlOp, ops: &mut Vec<ControlOp>) -> Result<()> {
    run_in_model(sim, op).map_err(|e| DriverError::Refused(format!("{}: {e}", describe(&op))))?;
    ops.push(op);
    Ok(())
}

/// Removes every node of `pool`, last member first.
fn empty_pool(sim: &mut Scheduler, pool: u16, ops: &mut Vec<ControlOp>) -> Result<()> {
    loop {
        let c = sim.tables().pools[usize::from(pool)].cfg;
        if !c.valid || c.n == 0 {
            return Ok(());
        }
        let node = sim.tables().members1[usize::from(c.base + c.n - 1)].node;
        run_in_model(sim, ControlOp::RemoveNode { pool, node })
            .map_err(|e| DriverError::Refused(format!("pool {pool}: {e}")))?;
        ops.push(ControlOp::RemoveNode { pool, node });
    }
}

/// The passes that take `pool` to its configuration (`capacity`, `params`, `spine` and the
/// `adds` of its nodes), in [`plan`]'s order: removals, new parameters in place, or the pool
/// placed again, then the new nodes.
fn plan_pool(
    sim: &mut Scheduler,
    ops: &mut Vec<ControlOp>,
    pool: u16,
    (capacity, params, spine): (u16, Params, Option<SpineRef>),
    adds: &[ControlOp],
) -> Result<()> {
    // Nodes: what the switch has against what the configuration says.
    let wanted: BTreeMap<u16, ControlOp> = adds
        .iter()
        .map(|op| match *op {
            ControlOp::AddNode { node, .. } => (node, *op),
            _ => unreachable!(),
        })
        .collect();
    let role = sim.role();
    let factor = |workers: u16| match role {
        Role::Leaf => Load::ONE,
        Role::Spine => Load::additive_factor(workers.into()),
    };
    let cur = sim.tables().pools[usize::from(pool)].cfg;
    let mut present = BTreeSet::new();
    let mut placed = cur.valid && cur.spine == spine;
    if placed {
        // Removals first, so that a pool that shrinks has room for what it keeps.
        let members: Vec<u16> = (cur.base..cur.base + cur.n)
            .map(|s| sim.tables().members1[usize::from(s)].node)
            .collect();
        for node in members {
            let row = sim.tables().nodes[usize::from(node)];
            let same = match wanted.get(&node) {
                Some(&ControlOp::AddNode { addr, workers, .. }) => {
                    row.addr.map(|a| a.addr) == Some(addr) && row.node.factor == factor(workers)
                }
                _ => false,
            };
            if same {
                present.insert(node);
            } else {
                run_op(sim, ControlOp::RemoveNode { pool, node }, ops)?;
            }
        }
        // New parameters and capacity in one pass, the region resized in place when the
        // slots after it are free; otherwise the pool is placed again below.
        if cur.params != params || cur.capacity != capacity {
            let set = ControlOp::SetPoolParams {
                pool,
                params,
                capacity,
            };
            if sim.validate(&set).is_ok() {
                run_op(sim, set, ops)?;
            } else {
                placed = false;
            }
        }
    }
    if !placed {
        empty_pool(sim, pool, ops)?;
        present.clear();
        let base = free_region(sim, pool, capacity).ok_or_else(|| {
            DriverError::Refused(format!(
                "pool {pool}: no free region of {capacity} slots among the {} (the regions of the other pools are in use; apply on a freshly loaded switch to place every pool again)",
                sim.sizes().nodes
            ))
        })?;
        run_op(
            sim,
            ControlOp::ConfigurePool {
                pool,
                base,
                capacity,
                params,
                spine,
            },
            ops,
        )?;
    }
    for op in adds {
        if let ControlOp::AddNode { node, .. } = *op {
            if !present.contains(&node) {
                run_op(sim, *op, ops)?;
            }
        }
    }
    Ok(())
}

/// The first region of `capacity` slots that no other configured pool holds.
fn free_region(m: &Scheduler, pool: u16, capacity: u16) -> Option<u16> {
    let mut taken: Vec<(u32, u32)> = m
        .tables()
        .pools
        .iter()
        .enumerate()
        .filter(|(i, r)| *i != usize::from(pool) && r.cfg.valid)
        .map(|(_, r)| {
            (
                u32::from(r.cfg.base),
                u32::from(r.cfg.base) + u32::from(r.cfg.capacity),
            )
        })
        .collect();
    taken.sort();
    let mut at = 0u32;
    for (b, e) in taken {
        if at + u32::from(capacity) <= b {
            break;
        }
        at = at.max(e);
    }
    (capacity > 0 && at + u32::from(capacity) <= u32::from(m.sizes().nodes)).then_some(at as u16)
}

/// A control operation in words.
pub fn describe(op: &ControlOp) -> String {
    match op {
        ControlOp::ConfigurePool {
            pool,
            base,
            capacity,
            params,
            spine,
        } => format!(
            "configure pool {pool}: slots [{base}, {}), {}{}",
            base + capacity,
            describe_params(params),
            spine.map_or(String::new(), |s| format!(
                ", spine {} as node {}",
                s.id, s.node
            ))
        ),
        ControlOp::SetPoolParams {
            pool,
            params,
            capacity,
        } => {
            format!(
                "set pool {pool}: {capacity} slots, {}",
                describe_params(params)
            )
        }
        ControlOp::AddNode {
            pool,
            node,
            addr,
            workers,
        } => format!(
            "add node {node} to pool {pool}: {} {} udp {} port {} dst_id {} ({workers} worker(s))",
            addr.endpoint.mac, addr.endpoint.ip, addr.endpoint.udp_port, addr.port, addr.dst_id
        ),
        ControlOp::RemoveNode { pool, node } => format!("remove node {node} from pool {pool}"),
    }
}

fn describe_params(p: &Params) -> String {
    format!(
        "link at {} unlink at {}, report delta {}, repair gap {} us",
        p.link_at,
        p.unlink_at,
        p.report_delta.to_f64(),
        p.repair_gap_us
    )
}

/// The drop counters' names as the model's `DropReason`s (for `stats`).
pub fn drop_reason(counter: &str) -> Option<DropReason> {
    DropReason::ALL
        .into_iter()
        .find(|r| counter == format!("DROP_{}", r.name().to_uppercase()))
}
