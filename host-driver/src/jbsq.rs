//! The leaf that holds tasks behind its register map (`horus_regs::jbsq_map`): open it, set a
//! freshly loaded card up from a configuration, remove and add workers, read its counters.
//!
//! The driver keeps a mirror of the leaf (the model, `JbsqLeaf`): the map's host passes are
//! computed from it (a node's generation, a removed node's member slot and the pool's last
//! member, the new member count's `unit`), and an operation changes the mirror only once the card
//! has taken every pass of it. The leaf has no table read-back beyond a node's read, so the
//! mirror starts from the card as loaded: `apply` sets up a card that holds no pool yet (a
//! configured pool is refused by the model, naming it), and later operations go through the same
//! driver (`horusctl serve`'s controller keeps one for its card's life).

use horus_model::config::{Config, Role, Sizes};
use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{JbsqLeaf, JbsqSizes};
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{Field, RegFile, fields as paper};

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
        })
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
    fn run(&mut self, what: &str, passes: &[RegFile], read: Option<u32>) -> Result<()> {
        self.regs.lock()?;
        let r = (|| {
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
        })();
        self.regs.unlock();
        r
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
        for w in paper::SWITCH_ID.word..=paper::SPINE3_IP.last_word() {
            if self.regs.read(4 * w as u32)? != 0 {
                return Err(DriverError::Refused(format!(
                    "the JBSQ leaf is set up already (its switch registers are written, word \
                     {w}): its tables cannot be read back, so it is set up only freshly loaded \
                     (load its bitstream again)"
                )));
            }
        }
        let (laid_out, _) = JbsqLeaf::from_config_at(cfg, self.ident.sizes, 0)
            .map_err(|e| DriverError::Refused(e.to_string()))?;
        // Every pass planned on a copy of the mirror first: a refusal changes nothing.
        let mut next = self.mirror.clone();
        let mut passes = Vec::new();
        for pool in &cfg.pools {
            let pc = laid_out.tables().pool_cfg[usize::from(pool.id)]
                .expect("from_config configures every pool of the configuration");
            passes.push((
                format!("configuring pool {}", pool.id),
                vec![
                    jbsq_map::configure_pool(&mut next, pool.id, pc.cfg)
                        .map_err(|e| DriverError::Refused(format!("pool {}: {e}", pool.id)))?,
                ],
            ));
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
        Ok(n)
    }

    /// Adds worker `node` to `pool` (its own bound `k`, or the pool's; its tasks go to `addr`).
    pub fn add_node(&mut self, pool: u16, node: u16, k: Option<u8>, addr: NodeAddr) -> Result<()> {
        let mut next = self.mirror.clone();
        let p =
            jbsq_map::add_node(&mut next, pool, node, k, 0, addr).map_err(DriverError::Refused)?;
        self.run(&format!("adding node {node} to pool {pool}"), &p, None)?;
        self.mirror = next;
        Ok(())
    }

    /// Removes worker `node` from `pool`: the card's member slot and last member are read first
    /// and must be the mirror's (else nothing is removed).
    pub fn remove_node(&mut self, pool: u16, node: u16) -> Result<()> {
        let mut next = self.mirror.clone();
        let [read, rm] =
            jbsq_map::remove_node(&mut next, pool, node).map_err(DriverError::Refused)?;
        let want = (rm.get(&fields::CTL_SLOT) | rm.get(&fields::CTL_LAST) << 16) as u32;
        self.run(
            &format!("removing node {node} from pool {pool}"),
            &[read, rm],
            Some(want),
        )?;
        self.mirror = next;
        Ok(())
    }
}
