//! The leaf that holds tasks behind its register map (`horus_regs::jbsq_map`): open it, set a
//! freshly loaded card up from a configuration, remove and add workers, read its counters.
//!
//! The driver keeps a mirror of the leaf (the model, `JbsqLeaf`): the map's host passes are
//! computed from it (a node's generation, a removed node's member slot and the pool's last
//! member, the new member count's `unit`), and an operation changes the mirror only once the card
//! has taken every pass of it. The leaf has no table read-back beyond a node's read, so the
//! mirror starts from the card as loaded: `apply` sets up a card that holds no pool yet (a
//! configured pool is refused by the model, naming it).
//!
//! The mirror outlives the process in a state file ([`JbsqDriver::with_state_file`]; `horusctl
//! --jbsq-state FILE`): after each operation the driver writes the leaf's pools, each node's
//! generation and each pool's members in slot order, with a version one higher. Another driver
//! opening the file rebuilds the mirror by running the same model operations (the pools
//! configured, each node's removals replayed to its generation, the members added in slot order),
//! then reads every member's slot back from the card, so a mirror that is not the card's is
//! refused before it plans anything. Each operation takes the device's lock, reads the file again
//! when its version moved (another `horusctl` or `serve` changed the leaf), plans on the mirror,
//! runs its passes, writes the file and only then lets go: processes sharing a card and its file
//! take turns. The file is bounded by the tables (a few hundred bytes a worker), whatever the
//! history.

use std::path::{Path, PathBuf};

use horus_model::config::{Config, Role, Sizes};
use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{Advertise, Fallback, JbsqLeaf, JbsqPool, JbsqSizes, PoolSettings};
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::{Endpoint, MacAddr};
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{Field, RegFile, fields as paper};
use serde::{Deserialize, Serialize};

use crate::access::Regs;
use crate::driver::{DriverError, POLLS, Result, table_mismatches};

fn addr(f: &Field) -> u32 {
    f.byte_address() as u32
}

/// What the loaded JBSQ bitstream is: its identification registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JbsqIdentity {
    pub sizes: JbsqSizes,
    pub map_version: u32,
    pub build_hash: u32,
    pub conn_timeout_us: u32,
}

impl JbsqIdentity {
    /// What in `cfg` differs from the bitstream, one phrase each.
    pub fn mismatches(&self, cfg: &Config) -> Vec<String> {
        let mut m = Vec::new();
        if cfg.switch.role != Role::Leaf
            || cfg.switch.leaf != horus_model::sched::jbsq::LeafKind::Jbsq
        {
            m.push("the bitstream is a leaf that holds tasks: the configuration needs `[switch] role = \"leaf\"` and `leaf = \"jbsq\"`".into());
        }
        let s = self.sizes;
        let sizes = Sizes {
            pools: s.pools,
            nodes: s.nodes,
            conn_table: s.conn_table,
        };
        m.extend(table_mismatches(cfg, sizes, self.conn_timeout_us));
        m
    }
}

/// A JBSQ leaf reached through `R`.
pub struct JbsqDriver<R: Regs> {
    pub regs: R,
    pub ident: JbsqIdentity,
    mirror: JbsqLeaf,
    /// The state file, when the mirror is kept in one.
    file: Option<PathBuf>,
    /// The mirror's version: the state file's when it is kept in one, else counted here.
    version: u32,
}

/// Whether the switch behind `regs` answers the JBSQ leaf's `ID`.
pub fn is_jbsq(regs: &mut impl Regs) -> Result<bool> {
    Ok(regs.read(addr(&fields::ID))? == jbsq_map::ID_VALUE)
}

impl<R: Regs> JbsqDriver<R> {
    /// Opens the leaf behind `regs`: reads its identification first and refuses anything that is
    /// not a JBSQ leaf of this register map.
    pub fn open(mut regs: R) -> Result<JbsqDriver<R>> {
        let id = regs.read(addr(&fields::ID))?;
        if id != jbsq_map::ID_VALUE {
            return Err(DriverError::Refused(format!(
                "no JBSQ leaf here: ID reads {id:#010x}, not {:#010x} (\"HORJ\")",
                jbsq_map::ID_VALUE
            )));
        }
        let map_version = regs.read(addr(&paper::MAP_VERSION))?;
        if map_version != jbsq_map::MAP_VERSION {
            return Err(DriverError::MapVersion {
                got: map_version,
                want: jbsq_map::MAP_VERSION,
            });
        }
        let info = regs.read(addr(&paper::ROLE))?;
        let size = regs.read(addr(&fields::RING_BITS))?;
        let bits = [
            info >> 8 & 0xff,
            info >> 16 & 0xff,
            info >> 24 & 0xff,
            size & 0xff,
            size >> 8 & 0xff,
        ];
        if info & 1 != 0 || bits[..3].iter().any(|&b| b > 16) || bits[3..].iter().any(|&b| b > 20) {
            return Err(DriverError::Inconsistent(format!(
                "the JBSQ leaf's identification words read {info:#010x} and {size:#010x}: not a leaf's sizes"
            )));
        }
        let sizes = JbsqSizes {
            pools: 1 << bits[0],
            nodes: 1 << bits[1],
            conn_table: 1 << bits[2],
            ring_entries: 1 << bits[3],
            buffer_slots: 1 << bits[4],
            slot_bytes: (size >> 16) as u16,
        };
        let conn_timeout_us = regs.read(addr(&paper::CONN_TIMEOUT_US))?;
        let ident = JbsqIdentity {
            sizes,
            map_version,
            build_hash: regs.read(addr(&paper::BUILD_HASH))?,
            conn_timeout_us,
        };
        let mut mirror = JbsqLeaf::new(sizes, 0);
        mirror.set_conn_timeout_us(conn_timeout_us);
        Ok(JbsqDriver {
            regs,
            ident,
            mirror,
            file: None,
            version: 0,
        })
    }

    /// Keeps the mirror in the state file `path`: read from it when it exists (written for this
    /// bitstream, and every member's slot read back from the card and found as the file has it),
    /// else started from the card as loaded, which must then be fresh (its switch registers
    /// unwritten: a leaf set up by a driver without the file cannot be mirrored).
    pub fn with_state_file(mut self, path: &Path) -> Result<JbsqDriver<R>> {
        self.file = Some(path.to_path_buf());
        if path.exists() {
            let f = self.read_file()?;
            let fresh = self.switch_registers_fresh()?.is_none();
            if fresh && !f.pools.is_empty() {
                return Err(DriverError::Refused(format!(
                    "{}: the state file holds a leaf set up, but the card is freshly loaded (its \
                     switch registers unwritten): remove the file and apply the configuration \
                     again",
                    path.display()
                )));
            }
            self.mirror = f.restore(self.ident.sizes, self.ident.conn_timeout_us)?;
            self.version = f.version;
            self.verify(path)?;
        } else if let Some(w) = self.switch_registers_fresh()? {
            return Err(DriverError::Refused(format!(
                "{}: no such state file, and the JBSQ leaf is set up already (its switch \
                 registers are written, word {w}): its tables cannot be read back, so it is \
                 mirrored only from the file of the host that set it up, or from a fresh load",
                path.display()
            )));
        }
        Ok(self)
    }

    /// `None` when the switch registers (words 4 to 23) read zero, as on a freshly loaded card;
    /// else the first word written.
    fn switch_registers_fresh(&mut self) -> Result<Option<usize>> {
        for w in paper::SWITCH_ID.word..=paper::SPINE3_IP.last_word() {
            if self.regs.read(4 * w as u32)? != 0 {
                return Ok(Some(w));
            }
        }
        Ok(None)
    }

    /// Every member's slot and its pool's last member read from the card: they must be the
    /// mirror's.
    fn verify(&mut self, path: &Path) -> Result<()> {
        let t = self.mirror.tables().clone();
        let mut reads = Vec::new();
        for (pool, pc) in t.pool_cfg.iter().enumerate() {
            let Some(pc) = pc else { continue };
            let base = usize::from(pc.cfg.base);
            let last = t.members[base + usize::from(pc.n) - 1..].first().copied();
            for slot in 0..pc.n {
                let node = t.members[base + usize::from(slot)];
                let want = u32::from(slot) | u32::from(last.unwrap_or(0)) << 16;
                reads.push((jbsq_map::read_node(pool as u16, node), want));
            }
        }
        let what = format!("checking {} against the card", path.display());
        self.regs.lock()?;
        let r = reads
            .iter()
            .try_for_each(|(r, want)| self.run(&what, std::slice::from_ref(r), Some(*want)));
        self.regs.unlock();
        r
    }

    fn read_file(&self) -> Result<StateFile> {
        let path = self.file.as_deref().expect("a state file");
        let text = std::fs::read_to_string(path)
            .map_err(|e| DriverError::Refused(format!("{}: {e}", path.display())))?;
        let f: StateFile = serde_json::from_str(&text).map_err(|e| {
            DriverError::Refused(format!(
                "{}: not a JBSQ leaf's state file: {e}",
                path.display()
            ))
        })?;
        let sizes = SizesRec::of(self.ident.sizes);
        if f.format != FORMAT || f.build_hash != self.ident.build_hash || f.sizes != sizes {
            return Err(DriverError::Refused(format!(
                "{}: written for {} build {:#010x} with sizes {:?}; the card runs {FORMAT} \
                 build {:#010x} with sizes {sizes:?}",
                path.display(),
                f.format,
                f.build_hash,
                f.sizes,
                self.ident.build_hash
            )));
        }
        Ok(f)
    }

    /// Reads the state file again when its version moved (none yet: the leaf is fresh, and
    /// the mirror with it).
    pub fn refresh(&mut self) -> Result<()> {
        if !self.file.as_deref().is_some_and(Path::exists) {
            return Ok(());
        }
        let f = self.read_file()?;
        if f.version != self.version {
            self.mirror = f.restore(self.ident.sizes, self.ident.conn_timeout_us)?;
            self.version = f.version;
        }
        Ok(())
    }

    /// The mirror's version (the state file's, read again): it moves by one with each
    /// operation.
    pub fn version(&mut self) -> Result<u32> {
        self.refresh()?;
        Ok(self.version)
    }

    /// Writes the mirror to the state file (when there is one) with the next version.
    fn save(&mut self) -> Result<()> {
        let version = self.version.wrapping_add(1);
        if let Some(path) = self.file.clone() {
            let f = StateFile::of(&self.mirror, version, &self.ident);
            let text = serde_json::to_string_pretty(&f)
                .map_err(|e| DriverError::Refused(e.to_string()))?
                + "\n";
            crate::controller::write_atomically(&path, &text).map_err(|e| {
                DriverError::Refused(format!(
                    "writing {}: {e} (the card took the operation: the file no longer mirrors \
                     it; load the bitstream again)",
                    path.display()
                ))
            })?;
        }
        self.version = version;
        Ok(())
    }

    /// Runs an operation: under the device's lock, the mirror read again from the state file,
    /// `plan` on a copy of it giving the passes (and a node read's expected answer), the passes
    /// run, the mirror and its file written.
    fn operate(
        &mut self,
        what: &str,
        plan: impl FnOnce(&mut JbsqLeaf) -> Result<(Vec<RegFile>, Option<u32>)>,
    ) -> Result<()> {
        self.regs.lock()?;
        let r = (|| {
            self.refresh()?;
            let mut next = self.mirror.clone();
            let (passes, read) = plan(&mut next)?;
            self.run(what, &passes, read)?;
            self.mirror = next;
            self.save()
        })();
        self.regs.unlock();
        r
    }

    /// The driver's mirror of the leaf's configuration.
    pub fn mirror(&self) -> &JbsqLeaf {
        &self.mirror
    }

    /// Every counter, in the map's order, by its field name (the model's `JbsqCounters`), then
    /// the board adapter's `BOARD_DROPS`.
    pub fn counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        let mut out = Vec::new();
        for (i, name) in jbsq_map::COUNTER_NAMES.iter().enumerate() {
            out.push((
                *name,
                self.regs.read(4 * (jbsq_map::COUNTER_BASE + i) as u32)?,
            ));
        }
        out.push((
            paper::BOARD_DROPS.name,
            self.regs.read(addr(&paper::BOARD_DROPS))?,
        ));
        Ok(out)
    }

    /// The status word: `CTL_BUSY`, `OVERFLOW`, `IN_FLIGHT`.
    pub fn status(&mut self) -> Result<u32> {
        Ok(self.regs.read(addr(&paper::CTL_BUSY))?)
    }

    fn stuck(what: &str, reg: &'static str) -> DriverError {
        DriverError::Stuck {
            what: what.into(),
            reg,
            polls: POLLS,
        }
    }

    /// Runs the staged passes `passes` (held against other processes), each once the one before
    /// has entered: its control words, `CTL_GO`, `CTL_BUSY` polled. A node read's result is
    /// checked against `read`'s expectation (its slot and last member) before what follows.
    /// The caller holds the device's lock.
    fn run(&mut self, what: &str, passes: &[RegFile], read: Option<u32>) -> Result<()> {
        {
            for r in passes {
                if !self.regs.wait(addr(&paper::CTL_GO), 1, 0, POLLS)? {
                    return Err(Self::stuck(what, "CTL_GO"));
                }
                for w in jbsq_map::control_words() {
                    self.regs.write(4 * w as u32, r.words[w])?;
                }
                self.regs.write(addr(&paper::CTL_GO), 1)?;
                if !self.regs.wait(addr(&paper::CTL_GO), 1, 0, POLLS)? {
                    return Err(Self::stuck(what, "CTL_GO"));
                }
                if r.get(&fields::CTL_READ_NODE) == 1 {
                    if !self.regs.wait(addr(&fields::RB_VALID), 1, 1, POLLS)? {
                        return Err(Self::stuck(what, "RB_VALID"));
                    }
                    let got = self.regs.read(addr(&fields::RB_SLOT))?;
                    if let Some(want) = read
                        && got != want
                    {
                        return Err(DriverError::Inconsistent(format!(
                            "{what}: the card gives member slot {} and last member {}, the \
                             host's mirror {} and {}: another host changed the leaf",
                            got & 0xffff,
                            got >> 16,
                            want & 0xffff,
                            want >> 16
                        )));
                    }
                }
            }
            Ok(())
        }
    }

    /// Writes the switch's own registers and its spine table (words 4 to 23) from `cfg`.
    fn switch_registers(&mut self, cfg: &Config) -> Result<()> {
        let r = jbsq_map::switch_config(cfg).map_err(DriverError::Refused)?;
        for w in paper::SWITCH_ID.word..=paper::SPINE3_IP.last_word() {
            self.regs.write(4 * w as u32, r.words[w])?;
        }
        Ok(())
    }

    /// Sets a freshly loaded leaf up from `cfg`: its own registers and spines, then each pool
    /// and its workers, as `JbsqLeaf::from_config_at` lays them out in the bitstream's rings and
    /// task buffer. Returns the passes run.
    /// Refused, changing nothing on the card, when `cfg` does not fit the bitstream, the card is
    /// not freshly loaded (its switch registers written: the leaf's tables cannot be read back,
    /// so a pool configured again over its workers would corrupt them) or the model refuses an
    /// operation.
    pub fn apply(&mut self, cfg: &Config) -> Result<usize> {
        let m = self.ident.mismatches(cfg);
        if !m.is_empty() {
            return Err(DriverError::Mismatch(m));
        }
        let (laid_out, _) = JbsqLeaf::from_config_at(cfg, self.ident.sizes, 0)
            .map_err(|e| DriverError::Refused(e.to_string()))?;
        self.regs.lock()?;
        let r = (|| {
            self.refresh()?;
            if let Some(w) = self.switch_registers_fresh()? {
                return Err(DriverError::Refused(format!(
                    "the JBSQ leaf is set up already (its switch registers are written, word \
                     {w}): its tables cannot be read back, so it is set up only freshly loaded \
                     (load its bitstream again); workers are added and removed through the \
                     state file of the host that set it up"
                )));
            }
            // Every pass planned on a copy of the mirror first: a refusal changes nothing.
            let mut next = self.mirror.clone();
            let mut passes = Vec::new();
            for pool in &cfg.pools {
                let pc = laid_out.tables().pool_cfg[usize::from(pool.id)]
                    .expect("from_config configures every pool of the configuration");
                let c = jbsq_map::configure_pool(&mut next, pool.id, pc.cfg)
                    .map_err(|e| DriverError::Refused(format!("pool {}: {e}", pool.id)))?;
                passes.push((format!("configuring pool {}", pool.id), vec![c]));
                for n in &pool.nodes {
                    let p = jbsq_map::add_node(&mut next, pool.id, n.id, n.k, 0, NodeAddr::of(n))
                        .map_err(DriverError::Refused)?;
                    passes.push((format!("adding node {} to pool {}", n.id, pool.id), p));
                }
            }
            self.switch_registers(cfg)?;
            let mut n = 0;
            for (what, p) in &passes {
                self.run(what, p, None)?;
                n += p.len();
            }
            self.mirror = next;
            self.save()?;
            Ok(n)
        })();
        self.regs.unlock();
        r
    }

    /// Whether the leaf is set up from `cfg`: its switch registers written as `cfg` has them
    /// and the mirror's pools `cfg`'s, as [`JbsqDriver::apply`] lays them out (its members may
    /// have changed since). `false` on a freshly loaded leaf; refused when the leaf is set up
    /// otherwise (it is set up only freshly loaded).
    pub fn is_set_up_as(&mut self, cfg: &Config) -> Result<bool> {
        if self.switch_registers_fresh()?.is_none() {
            return Ok(false);
        }
        let (laid_out, _) = JbsqLeaf::from_config_at(cfg, self.ident.sizes, 0)
            .map_err(|e| DriverError::Refused(e.to_string()))?;
        let r = jbsq_map::switch_config(cfg).map_err(DriverError::Refused)?;
        let mut differs = Vec::new();
        for w in paper::SWITCH_ID.word..=paper::SPINE3_IP.last_word() {
            if self.regs.read(4 * w as u32)? != r.words[w] {
                differs.push(format!("switch register word {w}"));
            }
        }
        self.refresh()?;
        let want = laid_out.tables().pool_cfg.iter().map(|p| p.map(|p| p.cfg));
        let have = self
            .mirror
            .tables()
            .pool_cfg
            .iter()
            .map(|p| p.map(|p| p.cfg));
        for (i, (w, h)) in want.zip(have).enumerate() {
            if w != h {
                differs.push(format!("pool {i}"));
            }
        }
        if differs.is_empty() {
            return Ok(true);
        }
        Err(DriverError::Refused(format!(
            "the JBSQ leaf is set up otherwise ({}): it is set up only freshly loaded (load its \
             bitstream again and remove its state file)",
            differs.join(", ")
        )))
    }

    /// `horusctl dump`: the pools and members of the mirror (its state file's; opening the file
    /// read every member's slot back from the card), one line each.
    pub fn dump(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let t = self.mirror.tables();
        let mut any = false;
        for (pool, pc) in t.pool_cfg.iter().enumerate() {
            let Some(pc) = pc else { continue };
            any = true;
            let c = pc.cfg;
            writeln!(
            out,
            "pool {pool}: node slots [{}, {}), {} member(s), k {}, advertise {}, fallback {}, task \
             buffer slots [{}, {}), rings of {} at {}, hold {} us, link at {} unlink at {}, report \
             delta {}, repair gap {} us{}",
            c.base,
            c.base + c.capacity,
            pc.n,
            c.k,
            match c.advertise {
                Advertise::Idle => "idle".to_string(),
                Advertise::Places => "places".to_string(),
                Advertise::Queue { room } => format!("queue (room {room})"),
            },
            match c.fallback {
                Fallback::Random => "random",
                Fallback::Drop => "drop",
            },
            c.queue_base,
            c.queue_base + c.queue_slots,
            c.ring_slots,
            c.ring_base,
            c.hold_us,
            c.params.link_at,
            c.params.unlink_at,
            c.params.report_delta.to_f64(),
            c.params.repair_gap_us,
            c.spine.map_or(String::new(), |s| format!(
                ", spine {} as node {}",
                s.id, s.node
            ))
        ).expect("a String takes every write");
            let base = usize::from(c.base);
            for (slot, &node) in t.members[base..base + usize::from(pc.n)].iter().enumerate() {
                let n = t.node_cfg[usize::from(node)];
                match t.node_addr[usize::from(node)] {
                Some(a) => writeln!(
                    out,
                    "  node {node}: slot {slot}, k {}, generation {}, {} {} udp {} port {} dst_id {}",
                    n.k,
                    n.generation,
                    a.addr.endpoint.mac,
                    a.addr.endpoint.ip,
                    a.addr.endpoint.udp_port,
                    a.addr.port,
                    a.addr.dst_id,
                ).expect("a String takes every write"),
                None => writeln!(out, "  node {node}: slot {slot}, no address").expect("a String takes every write"),
            }
            }
        }
        if !any {
            out += "no pool configured\n";
        }
        out
    }

    /// Adds worker `node` to `pool` (its own bound `k`, or the pool's; its tasks go to `addr`).
    pub fn add_node(&mut self, pool: u16, node: u16, k: Option<u8>, addr: NodeAddr) -> Result<()> {
        self.operate(&format!("adding node {node} to pool {pool}"), |next| {
            let p =
                jbsq_map::add_node(next, pool, node, k, 0, addr).map_err(DriverError::Refused)?;
            Ok((p, None))
        })
    }

    /// Sets the bound of member `node` of `pool` to `k` (decision 36): its pass (its generation
    /// one up: its places start afresh), then its `k` places'.
    pub fn set_bound(&mut self, pool: u16, node: u16, k: u8) -> Result<()> {
        self.operate(&format!("setting node {node}'s bound to {k}"), |next| {
            let p = jbsq_map::set_bound(next, pool, node, k).map_err(DriverError::Refused)?;
            Ok((p, None))
        })
    }

    /// Sets `pool`'s settings: its bound for workers added later without their own, its hold
    /// and its signal parameters (decision 36).
    pub fn set_pool_params(&mut self, pool: u16, s: PoolSettings) -> Result<()> {
        self.operate(&format!("setting pool {pool}'s settings"), |next| {
            let p = jbsq_map::set_pool_params(next, pool, s).map_err(DriverError::Refused)?;
            Ok((vec![p], None))
        })
    }

    /// The tasks `pool` holds, read off the card: a node read's pass carries the pool's held
    /// depth into `RB_DEPTH` (the node read is any: its slot is not looked at).
    pub fn held_depth(&mut self, pool: u16) -> Result<u32> {
        self.regs.lock()?;
        let r = self.read_depth(pool);
        self.regs.unlock();
        r
    }

    /// [`JbsqDriver::held_depth`] for a caller holding the device's lock.
    fn read_depth(&mut self, pool: u16) -> Result<u32> {
        self.run(
            &format!("reading pool {pool}'s held tasks"),
            &[jbsq_map::read_node(pool, 0)],
            None,
        )?;
        let word = self.regs.read(addr(&fields::RB_DEPTH))?;
        Ok((u64::from(word) >> fields::RB_DEPTH.lsb) as u32 & 0xffff)
    }

    /// Moves `pool`'s region of the task buffer to `[queue_base, queue_base + queue_slots)`
    /// (decision 37), holding the device's lock throughout: the pool stops holding tasks (a
    /// settings pass), its held depth is read until its workers' replies have taken every task
    /// it held, then the move's pass writes the region and the pool holds again. Returns the
    /// depth reads it took. Refused, changing nothing, for a region the model refuses (outside
    /// the buffer, overlapping another pool's); when the queue has not drained after `drain`,
    /// the pool holds again in its old region and the error says how many tasks it holds.
    pub fn move_buffer(
        &mut self,
        pool: u16,
        queue_base: u32,
        queue_slots: u32,
        drain: std::time::Duration,
    ) -> Result<u32> {
        self.regs.lock()?;
        let r = (|| {
            self.refresh()?;
            let mut next = self.mirror.clone();
            let pc = next
                .tables()
                .pool_cfg
                .get(usize::from(pool))
                .copied()
                .flatten()
                .ok_or_else(|| DriverError::Refused(format!("pool {pool} is not configured")))?;
            next.clone()
                .move_buffer(pool, queue_base, queue_slots)
                .map_err(|e| {
                    DriverError::Refused(format!(
                        "pool {pool}: the region [{queue_base}, {}) of the task buffer: {}",
                        u64::from(queue_base) + u64::from(queue_slots),
                        match e {
                            horus_model::sched::jbsq::JbsqControlError::RegionOverlap => {
                                "it overlaps another pool's".to_string()
                            }
                            _ => format!(
                                "it is empty, over {} slots or past the buffer's {}",
                                horus_model::sched::jbsq::MAX_QUEUE_SLOTS,
                                self.ident.sizes.buffer_slots
                            ),
                        }
                    ))
                })?;
            let open = PoolSettings::of(&pc.cfg);
            let close = PoolSettings {
                holds: false,
                ..open
            };
            let what = format!("moving pool {pool}'s buffer region");
            let pass =
                jbsq_map::set_pool_params(&mut next, pool, close).map_err(DriverError::Refused)?;
            self.run(&what, &[pass], None)?;
            self.mirror = next.clone();
            let start = std::time::Instant::now();
            let mut reads = 0;
            loop {
                let depth = self.read_depth(pool)?;
                reads += 1;
                if depth == 0 {
                    break;
                }
                if start.elapsed() >= drain {
                    let pass = jbsq_map::set_pool_params(&mut next, pool, open)
                        .map_err(DriverError::Refused)?;
                    self.run(&what, &[pass], None)?;
                    self.mirror = next;
                    return Err(DriverError::Refused(format!(
                        "pool {pool} still holds {depth} task(s) after {} ms without holding \
                         more (its workers' replies release them); its buffer region is \
                         unchanged and it holds again",
                        drain.as_millis()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let pass = jbsq_map::move_buffer(&mut next, pool, queue_base, queue_slots)
                .map_err(DriverError::Refused)?;
            self.run(&what, &[pass], None)?;
            self.mirror = next;
            self.save()?;
            Ok(reads)
        })();
        self.regs.unlock();
        r
    }

    /// Removes worker `node` from `pool`: the card's member slot and last member are read first
    /// and must be the mirror's (else nothing is removed).
    pub fn remove_node(&mut self, pool: u16, node: u16) -> Result<()> {
        self.operate(&format!("removing node {node} from pool {pool}"), |next| {
            let [read, rm] =
                jbsq_map::remove_node(next, pool, node).map_err(DriverError::Refused)?;
            let want = (rm.get(&fields::CTL_SLOT) | rm.get(&fields::CTL_LAST) << 16) as u32;
            Ok((vec![read, rm], Some(want)))
        })
    }
}

/// The state file's format name.
const FORMAT: &str = "horus-jbsq-leaf-state-1";

/// The bitstream's table sizes, as the state file records them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct SizesRec {
    pools: u16,
    nodes: u16,
    conn_table: u32,
    ring_entries: u32,
    buffer_slots: u32,
    slot_bytes: u16,
}

impl SizesRec {
    fn of(s: JbsqSizes) -> SizesRec {
        SizesRec {
            pools: s.pools,
            nodes: s.nodes,
            conn_table: s.conn_table,
            ring_entries: s.ring_entries,
            buffer_slots: s.buffer_slots,
            slot_bytes: s.slot_bytes,
        }
    }
}

/// A configured pool (`JbsqPool`), field by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct PoolRec {
    pool: u16,
    base: u16,
    capacity: u16,
    k: u8,
    ring_base: u32,
    ring_slots: u16,
    queue_base: u32,
    queue_slots: u32,
    fallback: Fallback,
    advertise: Advertise,
    hold_us: u16,
    link_at: u16,
    unlink_at: u16,
    report_delta_raw: u32,
    repair_gap_us: u16,
    /// The spine's ID and this leaf's node ID there.
    spine: Option<(u16, u16)>,
}

impl PoolRec {
    fn of(pool: u16, c: &JbsqPool) -> PoolRec {
        PoolRec {
            pool,
            base: c.base,
            capacity: c.capacity,
            k: c.k,
            ring_base: c.ring_base,
            ring_slots: c.ring_slots,
            queue_base: c.queue_base,
            queue_slots: c.queue_slots,
            fallback: c.fallback,
            advertise: c.advertise,
            hold_us: c.hold_us,
            link_at: c.params.link_at,
            unlink_at: c.params.unlink_at,
            report_delta_raw: c.params.report_delta.0,
            repair_gap_us: c.params.repair_gap_us,
            spine: c.spine.map(|s| (s.id, s.node)),
        }
    }

    fn pool(&self) -> JbsqPool {
        JbsqPool {
            base: self.base,
            capacity: self.capacity,
            k: self.k,
            ring_base: self.ring_base,
            ring_slots: self.ring_slots,
            queue_base: self.queue_base,
            queue_slots: self.queue_slots,
            fallback: self.fallback,
            advertise: self.advertise,
            hold_us: self.hold_us,
            params: Params {
                link_at: self.link_at,
                unlink_at: self.unlink_at,
                report_delta: horus_model::fixed::Load(self.report_delta_raw),
                repair_gap_us: self.repair_gap_us,
            },
            spine: self.spine.map(|(id, node)| SpineRef { id, node }),
        }
    }
}

/// A member: its node, its bound and where its tasks go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct MemberRec {
    pool: u16,
    node: u16,
    k: u8,
    mac: MacAddr,
    ip: std::net::Ipv4Addr,
    udp_port: u16,
    port: u8,
    dst_id: u16,
}

impl MemberRec {
    fn addr(&self) -> NodeAddr {
        NodeAddr {
            endpoint: Endpoint {
                mac: self.mac,
                ip: self.ip,
                udp_port: self.udp_port,
            },
            port: self.port,
            dst_id: self.dst_id,
        }
    }
}

/// The state file: what of the leaf the host's passes are computed from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct StateFile {
    format: String,
    /// Moves by one with each operation.
    version: u32,
    build_hash: u32,
    sizes: SizesRec,
    pools: Vec<PoolRec>,
    /// Each node whose generation is not 0 (it was removed that many times, modulo 256).
    generations: Vec<(u16, u8)>,
    /// Each pool's members in slot order.
    members: Vec<MemberRec>,
}

impl StateFile {
    fn of(m: &JbsqLeaf, version: u32, ident: &JbsqIdentity) -> StateFile {
        let t = m.tables();
        let mut pools = Vec::new();
        let mut members = Vec::new();
        for (i, pc) in t.pool_cfg.iter().enumerate() {
            let Some(pc) = pc else { continue };
            pools.push(PoolRec::of(i as u16, &pc.cfg));
            let base = usize::from(pc.cfg.base);
            for &node in &t.members[base..base + usize::from(pc.n)] {
                let a = t.node_addr[usize::from(node)]
                    .expect("a member has an address")
                    .addr;
                members.push(MemberRec {
                    pool: i as u16,
                    node,
                    k: t.node_cfg[usize::from(node)].k,
                    mac: a.endpoint.mac,
                    ip: a.endpoint.ip,
                    udp_port: a.endpoint.udp_port,
                    port: a.port,
                    dst_id: a.dst_id,
                });
            }
        }
        let generations = t
            .node_cfg
            .iter()
            .enumerate()
            .filter(|(_, n)| n.generation != 0)
            .map(|(i, n)| (i as u16, n.generation))
            .collect();
        StateFile {
            format: FORMAT.into(),
            version,
            build_hash: ident.build_hash,
            sizes: SizesRec::of(ident.sizes),
            pools,
            generations,
            members,
        }
    }

    /// The mirror this file describes, rebuilt by the model's own operations: the pools
    /// configured; each node added and removed again as many times as its generation counts
    /// (in a pool with room: every pool is empty then); the members added in slot order.
    fn restore(&self, sizes: JbsqSizes, conn_timeout_us: u32) -> Result<JbsqLeaf> {
        let bad = |e: String| {
            DriverError::Inconsistent(format!("the JBSQ state file does not replay: {e}"))
        };
        let mut m = JbsqLeaf::new(sizes, 0);
        m.set_conn_timeout_us(conn_timeout_us);
        for p in &self.pools {
            jbsq_map::configure_pool(&mut m, p.pool, p.pool()).map_err(bad)?;
        }
        if !self.generations.is_empty() {
            let room = self
                .pools
                .iter()
                .find(|p| p.capacity > 0)
                .ok_or_else(|| bad("nodes were removed, yet no pool has a node slot".into()))?;
            let nowhere = NodeAddr {
                endpoint: Endpoint {
                    mac: MacAddr([0; 6]),
                    ip: std::net::Ipv4Addr::UNSPECIFIED,
                    udp_port: 0,
                },
                port: 0,
                dst_id: 0,
            };
            for &(node, g) in &self.generations {
                for _ in 0..g {
                    jbsq_map::add_node(&mut m, room.pool, node, None, 0, nowhere).map_err(bad)?;
                    jbsq_map::remove_node(&mut m, room.pool, node).map_err(bad)?;
                }
            }
        }
        for r in &self.members {
            jbsq_map::add_node(&mut m, r.pool, r.node, Some(r.k), 0, r.addr()).map_err(bad)?;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(sizes: JbsqSizes) -> JbsqIdentity {
        JbsqIdentity {
            sizes,
            map_version: jbsq_map::MAP_VERSION,
            build_hash: 0x1234_5678,
            conn_timeout_us: 100,
        }
    }

    fn addr(n: u16) -> NodeAddr {
        NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([2, 0, 0, 0, 0, n as u8]),
                ip: std::net::Ipv4Addr::new(10, 0, 0, n as u8),
                udp_port: 1234,
            },
            port: 1,
            dst_id: n,
        }
    }

    /// What the host's passes are computed from: pools, nodes (active, pool while active,
    /// generation, bound), members in slot order, slots and addresses of the members.
    fn host_view(m: &JbsqLeaf) -> String {
        let t = m.tables();
        let mut s = format!("{:?}\n", t.pool_cfg);
        for (i, n) in t.node_cfg.iter().enumerate() {
            if n.active {
                s += &format!(
                    "node {i}: {n:?} slot {} {:?}\n",
                    t.member_slot[i], t.node_addr[i]
                );
            } else {
                s += &format!("node {i}: out, generation {}\n", n.generation);
            }
        }
        for pc in t.pool_cfg.iter().flatten() {
            let b = usize::from(pc.cfg.base);
            s += &format!("{:?}\n", &t.members[b..b + usize::from(pc.n)]);
        }
        s
    }

    /// Random additions and removals (nodes removed up to 300 times: generations wrap) on a
    /// leaf of two pools; the file written after each step replays to the same host view, and
    /// the same passes follow from it.
    #[test]
    fn the_state_file_replays_to_the_mirror_after_any_history() {
        let cfg = Config::from_file(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/example-leaf-jbsq.toml"
        )))
        .unwrap();
        let sizes = horus_regs::presets::jbsq_preset_for(&cfg.sizes)
            .unwrap()
            .sizes();
        let (mut m, _) = JbsqLeaf::from_config_at(&cfg, sizes, 0).unwrap();
        let mut rng = horus_model::rng::Xorshift64::new(5);
        let pools: Vec<u16> = cfg.pools.iter().map(|p| p.id).collect();
        for step in 0..2_000u32 {
            let node = (rng.next_u64() % 40) as u16;
            let pool = pools[(rng.next_u64() % pools.len() as u64) as usize];
            // Node 3 churns far more than the rest: its generation wraps.
            let node = if step % 3 == 0 { 3 } else { node };
            let n = m.tables().node_cfg[usize::from(node)];
            if n.active {
                jbsq_map::remove_node(&mut m, n.pool, node).unwrap();
            } else {
                let k = (rng.next_u64() % 3) as u8;
                let _ = jbsq_map::add_node(&mut m, pool, node, (k > 0).then_some(k), 0, addr(node));
            }
            if step % 97 == 0 || step == 1_999 {
                let f = StateFile::of(&m, step, &ident(sizes));
                let text = serde_json::to_string(&f).unwrap();
                let back: StateFile = serde_json::from_str(&text).unwrap();
                assert_eq!(back, f);
                let r = back.restore(sizes, 100).unwrap();
                assert_eq!(host_view(&r), host_view(&m), "step {step}");
                assert_eq!(StateFile::of(&r, step, &ident(sizes)), f);
            }
        }
        assert!(m.tables().node_cfg[3].generation != 0);
        let g3 = StateFile::of(&m, 0, &ident(sizes));
        assert!(g3.generations.iter().any(|&(n, _)| n == 3), "{g3:?}");
    }
}
