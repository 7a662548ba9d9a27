//! The reference Horus scheduler, at the granularity of pipeline passes.
//!
//! The paper (§3.3): "all spine and leaf schedulers employ the same scheduling policy and maintain
//! the same data structures". So does this model: one [`Scheduler`] with a [`Role`]. The roles
//! differ in four places only: a leaf pops the idle node it picks and a spine does not; a node's
//! additive factor is 1.0 for a worker and `1/w` for a rack; a leaf learns loads from worker replies
//! and a spine from loadUpdate messages; and a leaf tells its spine about its rack (idleAdd,
//! idleRemove, loadUpdate), which a spine does not.
//!
//! A *pass* is one trip of one packet through the pipeline: [`Scheduler::packet`] for a first pass,
//! [`Scheduler::resubmit`] for the second pass that a first pass may ask for, and
//! [`Scheduler::control`] for a control-plane operation. Each pass reads and writes the tables of
//! [`state::Stage`] in stage order, each at most once: the rule of switch pipelines, checked on every
//! access in debug builds. The caller decides when a resubmitted pass re-enters, as the hardware
//! does; the model is then deterministic given the order of passes and the seed.
//!
//! `docs/algorithm.md` gives the semantics in prose and every point where we depart from the paper
//! or the public code.

pub mod check;
mod control;
pub mod counters;
pub mod frame;
pub mod jbsq;
pub mod plan;
mod profile;
pub mod state;

pub use control::{ControlError, ControlOp, HostValues, config_ops};
pub use counters::{Counters, DropReason, Signal};
pub use profile::Profile;
pub use state::{
    AccessGuard, AddrEntry, IdleIndex, NodeAddr, NodeRef, Params, SpineRef, Stage, Tables,
};

use crate::config::{Config, Role, Sizes};
use crate::fixed::{Drift, Load};
use crate::rng::Xorshift64;
use crate::wire::{HorusHeader, PacketType};
use state::{ConnMiss, ConnWrite, IdleCtl, NodeState, PoolCfg};

/// The connection table's hash multipliers: a task's slot is the low bits of
/// `seq * CONN_HASH_SEQ ^ pool * CONN_HASH_POOL` (32 bits, wrapping; [`conn_hash`]).
pub const CONN_HASH_SEQ: u32 = 0x9E37;
pub const CONN_HASH_POOL: u32 = 0x7F4B;

/// The connection table's hash of a task (`pool`, `seq`); its slot is the low bits.
pub fn conn_hash(pool: u16, seq: u16) -> u32 {
    u32::from(seq).wrapping_mul(CONN_HASH_SEQ) ^ u32::from(pool).wrapping_mul(CONN_HASH_POOL)
}

/// The first pass of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub header: HorusHeader,
    /// Arrival time in microseconds, wrapping; used by the connection table's timeout and the
    /// idle-repair gap (`idleCtl`'s stamp).
    pub time_us: u32,
}

/// One of the two power-of-two samples, as carried into a resubmitted pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub node: u16,
    /// The node's queue as the first pass saw it: load + drift.
    pub q: Load,
    /// The drift the first pass saw (moved into the load if the node wins).
    pub drift: Drift,
    pub factor: Load,
}

/// How the second pass of a removal from the middle of the idle list ends (Algorithm 1, B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoveFinish {
    /// The list was empty: nothing was taken, nothing to undo.
    Nothing,
    /// The removed node was the last idle node: only release the lock.
    Unlock,
    /// Move `last` (the former top) into the hole at `pos`, then release the lock.
    Move { pos: u16, last: NodeRef },
    /// The node was not in the list: push `last` back and release the lock.
    Abort { last: NodeRef },
}

/// What a first pass hands to its second pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketResubmit {
    /// Algorithm 2, resubmit path: pick the smaller corrected queue and charge it.
    Schedule { sel: Sample, other: Sample },
    /// Second pass of an idleAdd (a TASK_DONE_IDLE at a leaf, an IDLE_SIGNAL at a spine).
    IdleAddCommit { node: NodeRef },
    /// Second pass of an IDLE_REMOVE at a spine.
    IdleRemoveFinish { finish: RemoveFinish },
}

/// A resubmitted (second) pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resubmit {
    Packet {
        header: HorusHeader,
        time_us: u32,
        op: PacketResubmit,
    },
    /// Second pass of [`ControlOp::RemoveNode`]: the member that moved into the freed slot, if
    /// any, and how the idle-list removal ends.
    RemoveNode {
        pool: u16,
        moved: Option<(u16, u16)>,
        finish: RemoveFinish,
    },
}

/// Where an emitted header goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A downstream node: a worker (leaf) or a rack's leaf (spine).
    Node { node: u16, addr: NodeAddr },
    /// The spine with this ID (leaf-to-spine messages).
    Spine(u16),
    /// Out of the pass-through port, unchanged.
    PassThrough,
    /// Out of the control port, unchanged.
    Control,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emit {
    pub target: Target,
    pub header: HorusHeader,
}

/// How a task was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Taken from the idle list.
    Idle { node: u16 },
    /// Power of two on the first pass; `resubmit` if the drift check asked for a second pass.
    Pow2 {
        sel: u16,
        other: u16,
        resubmit: bool,
    },
    /// Decided on the resubmitted pass.
    Resubmitted { node: u16 },
    /// NEW_TASK_RANDOM.
    Random { node: u16 },
    /// A continuation packet following its connection-table entry.
    Continuation { node: u16 },
}

/// Everything one pass produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassResult {
    /// The packet itself, on its way (rewritten for a node, or unchanged).
    pub forward: Option<Emit>,
    /// A mirrored copy turned into a message to the spine.
    pub signal: Option<(Signal, Emit)>,
    /// The second pass this pass asks for. The caller must feed it back exactly once.
    pub resubmit: Option<Resubmit>,
    pub decision: Option<Decision>,
    /// The packet, or the state change it asked for, was dropped.
    pub drop: Option<DropReason>,
}

/// A Horus leaf or spine scheduler.
#[derive(Clone, Debug)]
pub struct Scheduler {
    role: Role,
    profile: Profile,
    id: u16,
    sizes: Sizes,
    conn_timeout_us: u32,
    rng: Xorshift64,
    t: Tables,
    guard: AccessGuard,
    counters: Counters,
    /// Resubmitted passes handed out and not yet fed back. Control passes wait for zero.
    in_flight: u32,
}

/// How a pass changes the leaf's rack average.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AvgChange {
    None,
    /// The pool's parameters changed (control plane): the average stays, and the report rule
    /// starts again from the last report, with no task of the spine's left out.
    Params,
    /// A task went to a worker: from the pool's spine (which counted it in its view of the
    /// rack), or not.
    TaskStarted {
        from_spine: bool,
    },
    TaskFinished,
    /// The pool's worker count changed (control plane); `removed_tasks` left with a removed worker.
    Rescale {
        unit: u64,
        removed_tasks: u32,
    },
}

impl Scheduler {
    /// An unconfigured scheduler: every pool invalid, every node free.
    pub fn new(role: Role, id: u16, sizes: Sizes, conn_timeout_us: u32, seed: u64) -> Scheduler {
        Scheduler {
            role,
            profile: Profile::FPGA,
            id,
            sizes,
            conn_timeout_us,
            rng: Xorshift64::new(seed),
            t: Tables::new(sizes.pools, sizes.nodes, sizes.conn_table),
            guard: AccessGuard::default(),
            counters: Counters::default(),
            in_flight: 0,
        }
    }

    /// A scheduler configured by running [`control::config_ops`] as control passes. Signals those
    /// passes emit (a leaf's first idleAdd per pool) are returned so the caller can deliver them.
    pub fn from_config(cfg: &Config, seed: u64) -> Result<(Scheduler, Vec<Emit>), ControlError> {
        Self::from_config_with(cfg, seed, Profile::FPGA)
    }

    /// [`Scheduler::from_config`] with `profile`'s arithmetic.
    pub fn from_config_with(
        cfg: &Config,
        seed: u64,
        profile: Profile,
    ) -> Result<(Scheduler, Vec<Emit>), ControlError> {
        cfg.paper_leaf_only()
            .map_err(|e| ControlError::NotPaperLeaf(e.to_string()))?;
        let s = &cfg.switch;
        let mut sched = Scheduler::new(s.role, s.id, cfg.sizes, s.conn_timeout_us, seed);
        sched.set_profile(profile);
        let mut signals = Vec::new();
        for op in control::config_ops(cfg) {
            let r = sched.control(op)?;
            signals.extend(r.signal.map(|(_, e)| e));
        }
        Ok((sched, signals))
    }

    /// Follows `profile`'s arithmetic from now on. Set it before configuring the scheduler: the
    /// rack averages' units are computed when nodes are added.
    pub fn set_profile(&mut self, profile: Profile) {
        self.profile = profile;
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Sets the switch's ID (the hardware's `SWITCH_ID` register, which software may rewrite).
    pub fn set_id(&mut self, id: u16) {
        self.id = id;
    }

    pub fn role(&self) -> Role {
        self.role
    }
    pub fn id(&self) -> u16 {
        self.id
    }
    pub fn sizes(&self) -> Sizes {
        self.sizes
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// The tables, for inspection (tests, the co-simulation's read-back, the simulator's metrics).
    pub fn tables(&self) -> &Tables {
        &self.t
    }
    /// Writable tables: what the host can do through the register map (preloading state in tests
    /// and in the co-simulation). Writes bypass the pass discipline; keep the invariants.
    pub fn tables_mut(&mut self) -> &mut Tables {
        &mut self.t
    }
    pub fn rng_state(&self) -> u64 {
        self.rng.state()
    }
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }
    /// The tables the last pass touched, in order.
    pub fn last_pass_stages(&self) -> Vec<Stage> {
        self.guard.touched()
    }

    /// The `idleList` or `members` entries that a NEW_TASK first pass of `pool` would read if it
    /// were the next pass: the idle list's entry the pass would take (twice: a leaf's top, a
    /// spine's turn) when the pool has an idle node and is not locked, else the two sampled
    /// members. None for an unconfigured or empty pool. Changes
    /// nothing (the generator is copied): for callers that prefetch what a pass will read, such
    /// as a simulator running thousands of schedulers.
    #[inline]
    pub fn next_task_entries(&self, pool: u16) -> Option<(&NodeRef, &NodeRef)> {
        let (idle, i1, i2) = self.next_task_slots(pool)?;
        let t = &self.t;
        if idle {
            let top = t.idle_list.get(i1)?;
            Some((top, top))
        } else {
            Some((t.members1.get(i1)?, t.members2.get(i2)?))
        }
    }

    /// Where the entries [`Scheduler::next_task_entries`] names are: `(true, i, i)` for
    /// `idleList[i]`, `(false, i1, i2)` for `members1[i1]` and `members2[i2]` (indices into the
    /// [`Tables`] arrays, not checked against their lengths), for callers that keep where the
    /// entries are to read them later. Changes nothing.
    #[inline]
    pub fn next_task_slots(&self, pool: u16) -> Option<(bool, usize, usize)> {
        let row = self.t.pools.get(usize::from(pool))?;
        let (cfg, ctl) = (&row.cfg, &row.ctl);
        if !cfg.valid || cfg.n == 0 {
            return None;
        }
        let base = usize::from(cfg.base);
        if ctl.p > 0 && !ctl.locked {
            let pos = match self.role {
                Role::Leaf => ctl.p - 1,
                Role::Spine => ctl.turn - 1,
            };
            let i = base + usize::from(pos);
            return Some((true, i, i));
        }
        let (r1, r2) = self.profile.samples(&mut self.rng.clone(), cfg.n);
        Some((false, base + usize::from(r1), base + usize::from(r2)))
    }

    /// Whether control passes run a leaf's link rule. The FPGA card runs configuration and
    /// node changes as passes of its pipeline, link rule included; a Tofino switch's control
    /// plane writes the tables directly, and the pool's next packet pass runs the rule
    /// (`docs/algorithm.md`, decision T3).
    #[inline]
    fn control_links(&self) -> bool {
        self.role == Role::Leaf && !self.profile.control_plane_tables
    }

    #[inline]
    fn is_leaf(&self) -> bool {
        self.role == Role::Leaf
    }

    #[inline]
    fn begin(&mut self) {
        self.guard.begin();
        self.counters.passes += 1;
    }

    #[inline]
    fn touch(&mut self, s: Stage) {
        self.guard.touch(s);
    }

    fn dropped(&mut self, mut r: PassResult, reason: DropReason) -> PassResult {
        self.counters.drop(reason);
        r.drop = Some(reason);
        r
    }

    /// Runs a pass of any kind.
    pub fn process(&mut self, pass: Pass) -> Result<PassResult, ControlError> {
        match pass {
            Pass::Packet(p) => Ok(self.packet(p)),
            Pass::Resubmit(r) => Ok(self.resubmit(r)),
            Pass::Control(op) => self.control(op),
        }
    }

    /// The first pass of a packet.
    #[inline(always)]
    pub fn packet(&mut self, pkt: Packet) -> PassResult {
        use PacketType::*;
        self.begin();
        let h = pkt.header;
        let r = PassResult::default();
        if h.pkt_type.is_legacy() {
            return self.dropped(r, DropReason::LegacyType);
        }
        match h.pkt_type {
            KeepAlive | WorkerId | WorkerIdAck | RemoveAck => {
                self.counters.to_control += 1;
                return PassResult {
                    forward: Some(Emit {
                        target: Target::Control,
                        header: h,
                    }),
                    ..r
                };
            }
            TaskDone | TaskDoneIdle if !self.is_leaf() => return self.pass_through(h),
            IdleSignal | QueueSignal | QueueSignalInit | IdleRemove if self.is_leaf() => {
                return self.dropped(r, DropReason::WrongRole);
            }
            _ => {}
        }
        if h.pool_id >= self.sizes.pools {
            return self.dropped(r, DropReason::PoolOutOfRange);
        }
        self.touch(Stage::PoolCfg);
        let cfg = self.t.pools[usize::from(h.pool_id)].cfg;
        if !cfg.valid {
            return self.dropped(r, DropReason::UnknownPool);
        }
        match h.pkt_type {
            NewTask | NewTaskRandom => {
                // The generator advances once per task first pass of a configured pool.
                let samples = self.profile.samples(&mut self.rng, cfg.n);
                if cfg.n == 0 {
                    return self.dropped(r, DropReason::EmptyPool);
                }
                self.counters.tasks += 1;
                if h.pkt_type == NewTask {
                    self.schedule_task(h, pkt.time_us, &cfg, samples)
                } else {
                    self.schedule_random(h, pkt.time_us, &cfg, samples.0)
                }
            }
            TaskContinuation => self.continuation(h, pkt.time_us),
            _ => {
                // Messages from a node: replies at a leaf, rack messages at a spine.
                let bad = if h.src_id >= self.sizes.nodes {
                    Some(DropReason::NodeOutOfRange)
                } else {
                    self.touch(Stage::Node);
                    let e = self.t.nodes[usize::from(h.src_id)].node;
                    (e.state != NodeState::Active || e.pool != h.pool_id)
                        .then_some(DropReason::NodeNotInPool)
                };
                if let Some(reason) = bad {
                    // A reply from a node we do not know (removed, or misconfigured) still belongs
                    // to its client: it goes on; only its state update is dropped.
                    let mut r = self.dropped(r, reason);
                    if h.pkt_type.is_reply() {
                        self.counters.passed_through += 1;
                        r.forward = Some(Emit {
                            target: Target::PassThrough,
                            header: h,
                        });
                    }
                    return r;
                }
                let node = self.t.nodes[usize::from(h.src_id)].node;
                let me = NodeRef {
                    node: h.src_id,
                    factor: node.factor,
                };
                match h.pkt_type {
                    TaskDone | TaskDoneIdle => self.reply(h, pkt.time_us, &cfg, me),
                    IdleSignal => self.idle_add_check(h, pkt.time_us, me, r),
                    IdleRemove => self.idle_remove_first(h, pkt.time_us, &cfg, me),
                    _ => self.load_update(h, me),
                }
            }
        }
    }

    fn pass_through(&mut self, h: HorusHeader) -> PassResult {
        self.counters.passed_through += 1;
        PassResult {
            forward: Some(Emit {
                target: Target::PassThrough,
                header: h,
            }),
            ..Default::default()
        }
    }

    /// Leaf: the link rule and the §A.3 repair, in the `idleCtl` stage after `p` changed. `flag` is
    /// the spine's idle-selected flag when the pass is a task from this pool's spine; `time_us`
    /// the packet's arrival time (`None` for a control pass).
    ///
    /// A packet's pass that sends an idle message stamps the entry with its time, and a repair
    /// waits until `repair_gap_us` passed since that stamp (wrapping microseconds): the tasks the
    /// spine sent before our last message reached it disagree with us for about one round trip,
    /// and without the gap each of them would draw another message.
    #[inline]
    fn link_update(
        ctl: &mut IdleCtl,
        cfg: &PoolCfg,
        profile: Profile,
        flag: Option<bool>,
        time_us: Option<u32>,
    ) -> Option<Signal> {
        cfg.spine?;
        let signal = if !ctl.linked && ctl.p >= cfg.params.link_at {
            ctl.linked = true;
            Some(Signal::IdleAdd)
        } else if ctl.linked && ctl.p <= cfg.params.unlink_at {
            ctl.linked = false;
            Some(Signal::IdleRemove)
        } else {
            let quiet = time_us.is_some_and(|t| {
                profile.repair_due(t.wrapping_sub(ctl.signaled_us), cfg.params.repair_gap_us)
            });
            match flag {
                Some(true) if !ctl.linked && quiet => Some(Signal::IdleRemove),
                Some(false) if ctl.linked && quiet => Some(Signal::IdleAdd),
                _ => None,
            }
        };
        if let (Some(_), Some(t)) = (signal, time_us) {
            ctl.signaled_us = t;
        }
        signal
    }

    /// NEW_TASK, first pass: Algorithm 1 SCHEDULETASKIDLE, else Algorithm 2 SCHEDULETASKBUSY (A).
    #[inline(always)]
    fn schedule_task(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        (r1, r2): (u16, u16),
    ) -> PassResult {
        let pool = usize::from(h.pool_id);
        let base = usize::from(cfg.base);
        let leaf = self.is_leaf();
        let mut r = PassResult::default();

        self.touch(Stage::IdleCtl);
        let ctl = &mut self.t.pools[pool].ctl;
        let idle = ctl.p > 0 && !ctl.locked;
        let pos = if !idle {
            0
        } else if leaf {
            ctl.p -= 1;
            ctl.p
        } else {
            // The spine keeps the rack and takes the idle racks in turn (decision 18).
            let pos = ctl.turn - 1;
            ctl.turn = if ctl.turn == ctl.p { 1 } else { ctl.turn + 1 };
            pos
        };
        let mut signal = None;
        if leaf {
            let flag = cfg.spine.filter(|s| s.id == h.src_id).map(|_| h.qlen != 0);
            let before = *ctl;
            signal = Self::link_update(ctl, cfg, self.profile, flag, Some(time_us));
            if signal.is_some() && before.linked == ctl.linked {
                self.counters.idle_repairs += 1;
            }
        }

        if idle {
            self.touch(Stage::IdleList);
            let n = self.t.idle_list[base + usize::from(pos)];
            if leaf {
                self.touch(Stage::IdleIndex);
                self.t.nodes[usize::from(n.node)].idle_index = IdleIndex::Absent;
            }
            self.charge_drift(n);
            self.counters.idle_hits += 1;
            r.decision = Some(Decision::Idle { node: n.node });
            self.assign(h, time_us, cfg, n, idle, signal, &mut r);
            return r;
        }

        self.touch(Stage::Members1);
        let m1 = self.t.members1[base + usize::from(r1)];
        self.touch(Stage::Members2);
        let m2 = self.t.members2[base + usize::from(r2)];
        self.touch(Stage::Load1);
        let l1 = self.t.nodes[usize::from(m1.node)].load1;
        self.touch(Stage::Load2);
        let l2 = self.t.nodes[usize::from(m2.node)].load2;
        // Ties go to the first sample.
        let ((sel, l_sel), (other, l_other)) = if l1 <= l2 {
            ((m1, l1), (m2, l2))
        } else {
            ((m2, l2), (m1, l1))
        };
        let diff = l_other.saturating_sub(l_sel);
        self.counters.pow2_decisions += 1;

        self.touch(Stage::Drift1);
        let d_sel = self.t.nodes[usize::from(sel.node)].drift1;
        // CHECKDRIFT: the decision is right unless the drift could make `sel` the longer queue.
        // Two samples of one node leave nothing to compare, and the first packet of a multi-packet
        // task must leave on its first pass, before its continuations arrive: neither resubmits.
        if d_sel.at_most(diff) || m1.node == m2.node || h.more_packets {
            self.t.nodes[usize::from(sel.node)].drift1 = d_sel.plus(sel.factor);
            self.touch(Stage::Drift2);
            let d2 = &mut self.t.nodes[usize::from(sel.node)].drift2;
            *d2 = d2.plus(sel.factor);
            r.decision = Some(Decision::Pow2 {
                sel: sel.node,
                other: other.node,
                resubmit: false,
            });
            self.assign(h, time_us, cfg, sel, false, signal, &mut r);
            return r;
        }
        self.touch(Stage::Drift2);
        let d_other = self.t.nodes[usize::from(other.node)].drift2;
        self.counters.pow2_resubmits += 1;
        let sample = |n: NodeRef, l: Load, d: Drift| Sample {
            node: n.node,
            q: l.corrected(d),
            drift: d,
            factor: n.factor,
        };
        r.decision = Some(Decision::Pow2 {
            sel: sel.node,
            other: other.node,
            resubmit: true,
        });
        r.resubmit = Some(self.hand_out(Resubmit::Packet {
            header: h,
            time_us,
            op: PacketResubmit::Schedule {
                sel: sample(sel, l_sel, d_sel),
                other: sample(other, l_other, d_other),
            },
        }));
        // A signal decided in idleCtl leaves with this pass, as a mirror does.
        self.leaf_tail(h.pool_id, cfg, AvgChange::None, signal, &mut r);
        r
    }

    /// NEW_TASK_RANDOM: a uniformly random node of the pool, charged like any other decision.
    fn schedule_random(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        r1: u16,
    ) -> PassResult {
        self.touch(Stage::Members1);
        let m = self.t.members1[usize::from(cfg.base) + usize::from(r1)];
        self.charge_drift(m);
        self.counters.random_tasks += 1;
        let mut r = PassResult {
            decision: Some(Decision::Random { node: m.node }),
            ..Default::default()
        };
        self.assign(h, time_us, cfg, m, false, None, &mut r);
        r
    }

    /// Adds one task's worth to both drift copies of `n`.
    #[inline]
    fn charge_drift(&mut self, n: NodeRef) {
        let i = usize::from(n.node);
        self.touch(Stage::Drift1);
        self.t.nodes[i].drift1 = self.t.nodes[i].drift1.plus(n.factor);
        self.touch(Stage::Drift2);
        self.t.nodes[i].drift2 = self.t.nodes[i].drift2.plus(n.factor);
    }

    /// The tail of every pass that places a task on `n`: the rack average and signals (leaf), the
    /// connection table, and the rewrite towards the node.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn assign(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        n: NodeRef,
        from_idle: bool,
        signal: Option<Signal>,
        r: &mut PassResult,
    ) {
        let from_spine = cfg.spine.is_some_and(|s| s.id == h.src_id);
        self.leaf_tail(
            h.pool_id,
            cfg,
            AvgChange::TaskStarted { from_spine },
            signal,
            r,
        );
        if h.more_packets {
            self.conn_insert(h, time_us, n.node);
        }
        self.forward_to(h, n.node, from_idle, r);
    }

    #[inline(always)]
    fn forward_to(&mut self, h: HorusHeader, node: u16, from_idle: bool, r: &mut PassResult) {
        self.touch(Stage::NodeAddr);
        let entry = self.t.nodes[usize::from(node)]
            .addr
            .filter(|e| e.pool == h.pool_id);
        let Some(AddrEntry { addr, .. }) = entry else {
            // Only a continuation can follow an entry to a node removed since (or whose ID now
            // belongs to another pool); it is lost with the node.
            *r = self.dropped(*r, DropReason::ContinuationMiss);
            return;
        };
        let mut out = h;
        out.dst_id = addr.dst_id;
        // Leaf to worker: 1 if the worker was popped from the idle list (it then answers
        // TASK_DONE_IDLE when it runs dry). Spine to leaf: 1 if the rack came from the idle list.
        out.qlen = u16::from(from_idle);
        if !self.is_leaf() {
            out.src_id = self.id;
        }
        self.counters.tasks_forwarded += 1;
        r.forward = Some(Emit {
            target: Target::Node { node, addr },
            header: out,
        });
    }

    /// Leaf only, in the `poolAvg` stage: update the rack average, apply the load-report rule, and
    /// emit at most one signal (an idle signal decided earlier in the pass has priority; a load
    /// report it displaces goes out on a later pass, since `reported` is not updated).
    #[inline(always)]
    fn leaf_tail(
        &mut self,
        pool: u16,
        cfg: &PoolCfg,
        change: AvgChange,
        signal: Option<Signal>,
        r: &mut PassResult,
    ) {
        if !self.is_leaf() {
            return;
        }
        self.touch(Stage::PoolAvg);
        let pa = &mut self.t.pools[usize::from(pool)].avg;
        match change {
            AvgChange::None => {}
            AvgChange::Params => pa.spine_tasks = 0,
            AvgChange::TaskStarted { from_spine } => {
                if pa.avg.task_started() && from_spine {
                    pa.spine_tasks = pa.spine_tasks.saturating_add(1);
                }
            }
            AvgChange::TaskFinished => pa.avg.task_finished(),
            AvgChange::Rescale {
                unit,
                removed_tasks,
            } => {
                pa.avg.rescale(unit, removed_tasks);
                pa.spine_tasks = 0;
            }
        }
        let Some(spine) = cfg.spine else { return };
        // The rule compares the average less the tasks the spine counted itself, unsaturated,
        // with the last report (decisions 7 and 19); the signal carries the average saturated
        // to 16.16.
        let signal = signal.or_else(|| {
            let moved = pa.moved();
            let changed = !matches!(change, AvgChange::None | AvgChange::Params);
            (changed && moved >= u64::from(cfg.params.report_delta.0)).then_some(Signal::LoadUpdate)
        });
        let Some(signal) = signal else { return };
        if signal == Signal::LoadUpdate {
            pa.reported = pa.avg.level();
            pa.spine_tasks = 0;
        }
        let cur = pa.avg.load();
        let (qlen, seq_num) = cur.to_wire();
        let pkt_type = match signal {
            Signal::IdleAdd => PacketType::IdleSignal,
            Signal::IdleRemove => PacketType::IdleRemove,
            Signal::LoadUpdate => PacketType::QueueSignal,
        };
        let header = HorusHeader {
            pkt_type,
            more_packets: false,
            pool_id: pool,
            src_id: spine.node,
            dst_id: spine.id,
            qlen,
            seq_num,
        };
        self.counters.sent(signal);
        r.signal = Some((
            signal,
            Emit {
                target: Target::Spine(spine.id),
                header,
            },
        ));
    }

    fn conn_index(&self, pool: u16, seq: u16) -> usize {
        (conn_hash(pool, seq) & (self.sizes.conn_table - 1)) as usize
    }

    /// §A.4: remember the node of a task whose first packet says more packets follow.
    fn conn_insert(&mut self, h: HorusHeader, time_us: u32, node: u16) {
        self.touch(Stage::Conn);
        let i = self.conn_index(h.pool_id, h.seq_num);
        match self.t.conn[i].write(&h, time_us, node, self.conn_timeout_us) {
            ConnWrite::Collision => self.counters.conn_collisions += 1,
            ConnWrite::Written { expired } => {
                self.counters.conn_expired += u64::from(expired);
                self.counters.conn_inserts += 1;
            }
        }
    }

    /// TASK_CONTINUATION: follow the connection table; the last packet frees the entry.
    fn continuation(&mut self, h: HorusHeader, time_us: u32) -> PassResult {
        let r = PassResult::default();
        self.touch(Stage::Conn);
        let i = self.conn_index(h.pool_id, h.seq_num);
        let node = match self.t.conn[i].follow(&h, time_us, self.conn_timeout_us) {
            Ok(node) => node,
            Err(miss) => {
                self.counters.conn_expired += u64::from(miss == ConnMiss::Expired);
                return self.dropped(r, DropReason::ContinuationMiss);
            }
        };
        self.counters.continuations += 1;
        let mut r = PassResult {
            decision: Some(Decision::Continuation { node }),
            ..r
        };
        self.forward_to(h, node, false, &mut r);
        r
    }

    /// TASK_DONE / TASK_DONE_IDLE at a leaf: Algorithm 2 UPDATE, and for an idle worker the first
    /// pass of Algorithm 1 ADD. The reply itself goes on to the client unchanged.
    #[inline(always)]
    fn reply(&mut self, h: HorusHeader, time_us: u32, cfg: &PoolCfg, me: NodeRef) -> PassResult {
        self.counters.replies += 1;
        let mut r = PassResult::default();
        if h.pkt_type == PacketType::TaskDoneIdle {
            r = self.idle_add_check(h, time_us, me, r);
        }
        self.set_load(me.node, Load::from_tasks(h.qlen));
        self.leaf_tail(h.pool_id, cfg, AvgChange::TaskFinished, None, &mut r);
        self.counters.passed_through += 1;
        r.forward = Some(Emit {
            target: Target::PassThrough,
            header: h,
        });
        r
    }

    /// QUEUE_SIGNAL / QUEUE_SIGNAL_INIT at a spine: Algorithm 2 UPDATE with the rack average.
    fn load_update(&mut self, h: HorusHeader, me: NodeRef) -> PassResult {
        self.counters.load_updates += 1;
        self.set_load(me.node, Load::from_wire(h.qlen, h.seq_num));
        PassResult::default()
    }

    #[inline]
    fn set_load(&mut self, node: u16, v: Load) {
        let i = usize::from(node);
        self.touch(Stage::Load1);
        self.t.nodes[i].load1 = v;
        self.touch(Stage::Load2);
        self.t.nodes[i].load2 = v;
        self.touch(Stage::Drift1);
        self.t.nodes[i].drift1 = Drift::ZERO;
        self.touch(Stage::Drift2);
        self.t.nodes[i].drift2 = Drift::ZERO;
    }

    /// First pass of an idleAdd: a node may be in the idle list once. `Absent -> Pending`, and the
    /// push happens on the commit pass; anything else is a duplicate and is dropped.
    fn idle_add_check(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        me: NodeRef,
        mut r: PassResult,
    ) -> PassResult {
        self.touch(Stage::IdleIndex);
        let idx = &mut self.t.nodes[usize::from(me.node)].idle_index;
        if *idx != IdleIndex::Absent {
            self.counters.drop(DropReason::IdleAddDuplicate);
            r.drop = Some(DropReason::IdleAddDuplicate);
            return r;
        }
        *idx = IdleIndex::Pending;
        r.resubmit = Some(self.hand_out(Resubmit::Packet {
            header: h,
            time_us,
            op: PacketResubmit::IdleAddCommit { node: me },
        }));
        r
    }

    /// IDLE_REMOVE at a spine, first pass (Algorithm 1, A): take the lock, decrement `p`, read the
    /// top node and the removed node's position.
    fn idle_remove_first(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        me: NodeRef,
    ) -> PassResult {
        let r = PassResult::default();
        match self.remove_first(h.pool_id, cfg, me.node) {
            Err(reason) => self.dropped(r, reason),
            Ok(finish) => {
                // A node not in the list: the removal is dropped and counted, but the second pass
                // still runs to put the taken top back and release the lock.
                let r = match finish {
                    RemoveFinish::Abort { .. } => self.dropped(r, DropReason::IdleRemoveNotMember),
                    _ => r,
                };
                let resubmit = self.hand_out(Resubmit::Packet {
                    header: h,
                    time_us,
                    op: PacketResubmit::IdleRemoveFinish { finish },
                });
                PassResult {
                    resubmit: Some(resubmit),
                    ..r
                }
            }
        }
    }

    /// The `idleCtl`, `idleList`, `idleIndex` part of a removal's first pass. Also returns the
    /// signal a leaf's link rule asks for (control removal at a leaf).
    fn remove_first(
        &mut self,
        pool: u16,
        cfg: &PoolCfg,
        node: u16,
    ) -> Result<RemoveFinish, DropReason> {
        self.touch(Stage::IdleCtl);
        let ctl = &mut self.t.pools[usize::from(pool)].ctl;
        if ctl.locked {
            return Err(DropReason::IdleRemoveLocked);
        }
        if ctl.p == 0 {
            return Err(DropReason::IdleRemoveNotMember);
        }
        ctl.locked = true;
        // A turn at the top goes round to the first position (decision 18).
        if ctl.turn == ctl.p {
            ctl.turn = 1;
        }
        ctl.p -= 1;
        let top = ctl.p;
        self.touch(Stage::IdleList);
        let last = self.t.idle_list[usize::from(cfg.base) + usize::from(top)];
        self.touch(Stage::IdleIndex);
        let idx = &mut self.t.nodes[usize::from(node)].idle_index;
        Ok(match *idx {
            IdleIndex::Member(pos) => {
                *idx = IdleIndex::Absent;
                if last.node == node {
                    RemoveFinish::Unlock
                } else {
                    RemoveFinish::Move { pos, last }
                }
            }
            _ => RemoveFinish::Abort { last },
        })
    }

    /// The second pass of a removal (Algorithm 1, B): `idleList[removedIdx] <- lastNode;
    /// idleIndex[lastNode] <- removedIdx`, then release the lock. A leaf's link rule runs here, on
    /// the final idle count (running it on the first pass as well would send idleRemove and then
    /// idleAdd for a removal that ends where it began).
    fn remove_finish(&mut self, pool: u16, cfg: &PoolCfg, finish: RemoveFinish) -> Option<Signal> {
        if finish == RemoveFinish::Nothing {
            return None;
        }
        let base = usize::from(cfg.base);
        self.touch(Stage::IdleCtl);
        let leaf = self.role == Role::Leaf;
        let ctl = &mut self.t.pools[usize::from(pool)].ctl;
        ctl.locked = false;
        let (pos, last) = match finish {
            RemoveFinish::Nothing => unreachable!("returned above"),
            RemoveFinish::Unlock => (None, None),
            RemoveFinish::Move { pos, last } => (Some(pos), Some(last)),
            RemoveFinish::Abort { last } => {
                let pos = ctl.p;
                ctl.p += 1;
                (Some(pos), Some(last))
            }
        };
        // A leaf's removal is a control pass (a spine's IDLE_REMOVE has no link rule).
        let signal = if leaf && !self.profile.control_plane_tables {
            Self::link_update(ctl, cfg, self.profile, None, None)
        } else {
            None
        };
        if let (Some(pos), Some(last)) = (pos, last) {
            self.touch(Stage::IdleList);
            self.t.idle_list[base + usize::from(pos)] = last;
            self.touch(Stage::IdleIndex);
            self.t.nodes[usize::from(last.node)].idle_index = IdleIndex::Member(pos);
        }
        if !matches!(finish, RemoveFinish::Abort { .. }) {
            self.counters.idle_removes += 1;
        }
        signal
    }

    #[inline]
    fn hand_out(&mut self, r: Resubmit) -> Resubmit {
        self.in_flight += 1;
        r
    }

    /// A resubmitted (second) pass. It must be one this scheduler handed out, fed back once.
    #[inline]
    pub fn resubmit(&mut self, rs: Resubmit) -> PassResult {
        self.begin();
        self.counters.resubmit_passes += 1;
        debug_assert!(
            self.in_flight > 0,
            "a resubmitted pass that was never handed out, or fed back twice"
        );
        self.in_flight = self.in_flight.saturating_sub(1);
        match rs {
            Resubmit::Packet {
                header: h,
                time_us,
                op,
            } => {
                self.touch(Stage::PoolCfg);
                let cfg = self.t.pools[usize::from(h.pool_id)].cfg;
                match op {
                    PacketResubmit::Schedule { sel, other } => {
                        self.schedule_second(h, time_us, &cfg, sel, other)
                    }
                    PacketResubmit::IdleAddCommit { node } => {
                        self.idle_add_commit(h, time_us, &cfg, node)
                    }
                    PacketResubmit::IdleRemoveFinish { finish } => {
                        self.remove_finish(h.pool_id, &cfg, finish);
                        PassResult::default()
                    }
                }
            }
            Resubmit::RemoveNode {
                pool,
                moved,
                finish,
            } => self.remove_node_second(pool, moved, finish),
        }
    }

    /// Algorithm 2, resubmit path: the smaller corrected queue wins (ties: the first pass's choice),
    /// and its drift as seen by the first pass moves into its load, plus one task. Moving the seen
    /// drift, rather than overwriting load and drift as §A.1 does, keeps the increments of task
    /// passes that ran between the two passes (see docs/algorithm.md).
    fn schedule_second(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        sel: Sample,
        other: Sample,
    ) -> PassResult {
        let w = if sel.q <= other.q { sel } else { other };
        let i = usize::from(w.node);
        let add = w.drift.plus(w.factor);
        self.touch(Stage::Load1);
        self.t.nodes[i].load1 = self.t.nodes[i].load1.corrected(add);
        self.touch(Stage::Load2);
        self.t.nodes[i].load2 = self.t.nodes[i].load2.corrected(add);
        self.touch(Stage::Drift1);
        self.t.nodes[i].drift1 = self.t.nodes[i].drift1.minus(w.drift);
        self.touch(Stage::Drift2);
        self.t.nodes[i].drift2 = self.t.nodes[i].drift2.minus(w.drift);
        let mut r = PassResult {
            decision: Some(Decision::Resubmitted { node: w.node }),
            ..Default::default()
        };
        self.assign(
            h,
            time_us,
            cfg,
            NodeRef {
                node: w.node,
                factor: w.factor,
            },
            false,
            None,
            &mut r,
        );
        r
    }

    /// Second pass of an idleAdd: push the node on top of the idle list (Algorithm 1 ADD).
    fn idle_add_commit(
        &mut self,
        h: HorusHeader,
        time_us: u32,
        cfg: &PoolCfg,
        n: NodeRef,
    ) -> PassResult {
        let mut r = PassResult::default();
        let signal = self.push_idle(h.pool_id, cfg, n, Some(time_us));
        self.leaf_tail(h.pool_id, cfg, AvgChange::None, signal, &mut r);
        r
    }

    /// `readInc(p); idleList[p] <- n; idleIndex[n] <- p`, and the leaf's link rule (`time_us`: the
    /// packet's time, `None` for a control pass).
    fn push_idle(
        &mut self,
        pool: u16,
        cfg: &PoolCfg,
        n: NodeRef,
        time_us: Option<u32>,
    ) -> Option<Signal> {
        self.touch(Stage::IdleCtl);
        let ctl = &mut self.t.pools[usize::from(pool)].ctl;
        let pos = ctl.p;
        debug_assert!(
            pos < cfg.capacity,
            "idle list of pool {pool} overflows its region"
        );
        ctl.p += 1;
        let signal = if self.role == Role::Leaf
            && (time_us.is_some() || !self.profile.control_plane_tables)
        {
            Self::link_update(ctl, cfg, self.profile, None, time_us)
        } else {
            None
        };
        self.touch(Stage::IdleList);
        self.t.idle_list[usize::from(cfg.base) + usize::from(pos)] = n;
        self.touch(Stage::IdleIndex);
        self.t.nodes[usize::from(n.node)].idle_index = IdleIndex::Member(pos);
        self.counters.idle_adds += 1;
        signal
    }
}

/// A pass of any kind, in the order it enters the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Packet(Packet),
    Resubmit(Resubmit),
    Control(ControlOp),
}
