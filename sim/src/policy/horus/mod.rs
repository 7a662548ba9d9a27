//! Horus (NSDI'24), run by the reference scheduler of the `horus-model` crate.
//!
//! This file is only an adapter: every scheduling decision, idle list, drift check, resubmission,
//! link rule, load report and §A.3 repair is the model's [`Scheduler`], the same code the pipeline
//! and the P4 program are checked against (`docs/algorithm.md`). The adapter
//!
//! - builds one leaf [`Scheduler`] per rack and one spine [`Scheduler`] per aggregation switch, and
//!   configures them through control passes as the controller would. Pool and node IDs are per
//!   switch (u16): a leaf's pools are the pools with workers in its rack, numbered in pool order,
//!   its nodes are those workers; a spine's pools are the pools whose pod scheduler it hosts
//!   ([`crate::cluster::SpineGroup::spine_switch`]), its nodes the (pool, rack) pairs of that pod. Leaf
//!   switch IDs are the rack indices, spine IDs `racks + switch`;
//! - turns the engine's hooks into first passes (NEW_TASK at a spine and at a leaf, TASK_DONE /
//!   TASK_DONE_IDLE at a leaf, IDLE_SIGNAL / IDLE_REMOVE / QUEUE_SIGNAL at a spine), feeds every
//!   resubmission straight back as the next pass (so passes of one packet are back to back; each
//!   extra pass costs the engine's resubmit latency through [`Decision::passes`]), and turns the
//!   leaves' signals into [`Message`]s that the engine delivers with network delay and loss;
//! - carries the spine's forwarded header to the leaf: `src_id` (the spine's ID) in
//!   [`TaskHeader::hint`] and the idle-selected flag `qlen` in [`TaskHeader::tag`]; the leaf's flag
//!   (worker popped from the idle list) goes to the worker in `tag`, and the engine's worker answers
//!   TASK_DONE_IDLE when it runs dry after such a task ([`Reply::tag`]);
//! - runs the controller's reactions to failures as control passes: a failed worker or rack is
//!   removed from its leaf or spine ([`ControlOp::RemoveNode`]); a spine restarted on another switch
//!   is a fresh scheduler with the same switch ID and node IDs and empty state, which the leaves
//!   re-learn through the §A.3 repair and their next load reports.
//!
//! Optionally one switch's passes can be recorded ([`Horus::with_recorder`]) with everything
//! needed to replay them into a fresh [`Scheduler`]: the test that the simulated Horus makes
//! exactly the model's decisions.

use super::{
    Ctx, Decision, FailureNotice, Message, Node, Policy, PrefetchNote, Reply, TaskHeader, Upcoming,
};
use crate::cluster::Cluster;
use crate::rng::SimRng;
use horus_model::config::{Role, Sizes};
use horus_model::fixed::{Load, MAX_WORKERS};
use horus_model::sched::state::NodeRow;
use horus_model::sched::{
    ControlOp, IdleIndex, NodeAddr, NodeRef, Packet, Params, Pass, PassResult, Profile, Resubmit,
    Scheduler, SpineRef, Target,
};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
use rand::Rng;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

/// Message kinds, indexed like [`Policy::message_kinds`]; a leaf's message carries its Horus
/// header's `qlen.seq_num` (the rack average) in [`Message::value`] and its `src_id` (the rack's
/// node ID at the spine) in [`Message::value2`].
pub(crate) const IDLE_ADD: u8 = 0;
pub(crate) const IDLE_REMOVE: u8 = 1;
pub(crate) const LOAD_UPDATE: u8 = 2;
/// The names of the message kinds.
pub(crate) const MESSAGE_KINDS: &[&str] = &["idle-add", "idle-remove", "load-update"];
/// `src_id` of a task as a client sends it (no scheduler's ID).
const CLIENT_ID: u16 = u16::MAX;
/// [`PrefetchNote`] kinds: after the index stage, `[NOTE_SPINE or NOTE_LEAF, slot index, node ID
/// or NO_NODE (a reply's: its worker), NOTE_REPLY for a reply, 0]`; after the switch stage,
/// `[kind, switch index, pool ID, node ID or NO_NODE, 0]`; after the Entries stage, for a task,
/// `[kind, switch index, first entry, second entry, NOTE_MEMBERS or NOTE_IDLE]`. Zero: nothing to
/// prefetch.
const NOTE_SPINE: u32 = 5;
const NOTE_LEAF: u32 = 6;
/// No node in a note: the pass is a task's.
const NO_NODE: u32 = u32::MAX;
/// Where a task's entries are, in its note after the Entries stage: in `members1` and `members2`,
/// or both in `idleList`.
const NOTE_MEMBERS: u32 = 1;
const NOTE_IDLE: u32 = 2;
/// In a note after the index stage: the call is a reply's (its node is the slot's worker's).
const NOTE_REPLY: u32 = 1;
/// Connection-table entries per switch: the simulator has single-packet tasks only.
const CONN_TABLE: u32 = 1;
const CONN_TIMEOUT_US: u32 = 20_000;

/// The policy that runs Horus with the Tofino program's arithmetic.
pub const TOFINO_POLICY: &str = "horus-tofino";

mod params;

pub use params::{HorusParams, is_horus};

/// A switch of the simulated datacenter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// The leaf of a physical rack.
    Leaf(u32),
    /// A spine scheduler instance (an aggregation switch, or a restarted pool spine).
    Spine(u32),
}

/// Everything one switch's scheduler went through, in pass order, with what each pass returned.
#[derive(Clone, Debug)]
pub struct Recording {
    pub switch: Switch,
    pub role: Role,
    pub id: u16,
    pub sizes: Sizes,
    pub conn_timeout_us: u32,
    pub seed: u64,
    pub profile: Profile,
    /// False if state was written outside passes (a prefilled start preloads the tables).
    pub passes_only: bool,
    pub passes: Vec<(Pass, PassResult)>,
}

impl Recording {
    /// A fresh scheduler built exactly as the recorded one was.
    pub fn fresh_scheduler(&self) -> Scheduler {
        let mut s = Scheduler::new(
            self.role,
            self.id,
            self.sizes,
            self.conn_timeout_us,
            self.seed,
        );
        s.set_profile(self.profile);
        s
    }
}

/// Where pool-local rack slot `r` of a pool has its leaf scheduler, or pod slot `d` its spine
/// scheduler: one type for both, so that a prefetch stage reads either without branching on
/// which it is.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Index in `Horus::leaves` (a rack slot) or `Horus::spines` (a pod slot).
    switch: u32,
    /// The pool's ID at that switch, and the node ID of the slot's first node: the rack's first
    /// worker of the pool (leaf) or the pod's first rack of the pool (spine).
    pool: u16,
    first_node: u16,
    /// The pool-local worker (leaf) or rack slot (spine) of that node, as the cluster has it.
    first: u32,
    /// Where the rows are, for prefetching only ([`Rows`]).
    rows: Rows,
}

/// The addresses of a slot's pool row and of node row 0 in its switch's tables, so that the
/// prefetch stage that reads the slot can prefetch the rows a pass reads first without waiting
/// for the scheduler's table handles. Addresses only: never read through, so a stale one (the
/// tables are allocated once per scheduler and never move) would only cost a useless prefetch.
#[derive(Clone, Copy, Debug, Default)]
struct Rows {
    pool_row: usize,
    node_rows: usize,
}

impl Rows {
    fn of(sched: &Scheduler, pool: u16) -> Rows {
        let t = sched.tables();
        Rows {
            pool_row: t.pools.as_ptr().wrapping_add(usize::from(pool)) as usize,
            node_rows: t.nodes.as_ptr() as usize,
        }
    }

    /// The address of node row `node`.
    #[inline(always)]
    fn node_row(&self, node: u32) -> usize {
        self.node_rows
            .wrapping_add((node as usize).wrapping_mul(std::mem::size_of::<NodeRow>()))
    }
}

/// The table sizes of a switch with `pools` pools of `nodes` nodes in all.
fn switch_sizes(pools: usize, nodes: usize) -> Sizes {
    Sizes {
        pools: id16(pools, "pool count"),
        nodes: id16(nodes, "node count"),
        conn_table: CONN_TABLE,
    }
}

pub struct Horus {
    leaves: Vec<Scheduler>,
    spines: Vec<Scheduler>,
    /// Per pool: offset of its rack slots in `leaf_slots` and of its pod slots in `spine_slots`.
    rack_base: Vec<u32>,
    pod_base: Vec<u32>,
    leaf_slots: Vec<Slot>,
    spine_slots: Vec<Slot>,
    /// Leaf index per physical rack (u32::MAX: the rack has no pool).
    leaf_of_rack: Vec<u32>,
    /// Spine index per aggregation switch (u32::MAX: it hosts no pool's spine).
    spine_of_switch: Vec<u32>,
    params: Params,
    profile: Profile,
    /// Seed source for spines restarted after a failure.
    restart_seed: u64,
    /// Counters of every switch after configuration, subtracted from what [`Policy::counters`]
    /// reports so that it counts the run only.
    baseline: Vec<(String, u64)>,
    recorder: Option<(Switch, Arc<Mutex<Recording>>)>,
}

fn addr(dst_id: u16) -> NodeAddr {
    NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([2, 0, 0, 0, (dst_id >> 8) as u8, dst_id as u8]),
            ip: Ipv4Addr::new(10, 0, (dst_id >> 8) as u8, dst_id as u8),
            udp_port: horus_model::wire::HORUS_UDP_PORT,
        },
        port: 0,
        dst_id,
    }
}

fn header(pkt_type: PacketType, pool: u16, src: u16, dst: u16, qlen: u16, seq: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id: src,
        dst_id: dst,
        qlen,
        seq_num: seq,
    }
}

/// The signal callback of a spine's passes (a spine signals nothing; the adapter never did
/// anything with one).
fn no_signal(_: horus_model::sched::Emit) {}

fn id16(x: usize, what: &str) -> u16 {
    u16::try_from(x).unwrap_or_else(|_| panic!("{what} {x} does not fit a 16-bit Horus ID"))
}

/// The result of a packet and of the resubmissions it caused (the signals its passes emitted
/// went to the caller's `signal` as they came, in pass order).
struct Outcome {
    /// The last pass's forwarded packet (the decision of a task).
    forward: Option<horus_model::sched::Emit>,
    passes: u32,
}

impl Horus {
    /// Builds and configures every switch. `queue_len` is the initial queue of every global worker:
    /// when some are non-zero (a prefilled start) the leaves' tables are preloaded to match.
    pub fn new(
        cluster: &Cluster,
        queue_len: &[u32],
        rng: &mut SimRng,
        params: HorusParams,
    ) -> Self {
        Self::build(cluster, queue_len, rng, params, None)
    }

    /// As [`Horus::new`], recording every pass of `switch` into the returned [`Recording`].
    pub fn with_recorder(
        cluster: &Cluster,
        queue_len: &[u32],
        rng: &mut SimRng,
        params: HorusParams,
        switch: Switch,
    ) -> (Self, Arc<Mutex<Recording>>) {
        let h = Self::build(cluster, queue_len, rng, params, Some(switch));
        let rec = h.recorder.as_ref().expect("recorder requested").1.clone();
        (h, rec)
    }

    fn build(
        cluster: &Cluster,
        queue_len: &[u32],
        rng: &mut SimRng,
        params: HorusParams,
        record: Option<Switch>,
    ) -> Self {
        let topo = cluster.topology;
        let racks = topo.racks();
        id16(racks as usize + topo.spines() as usize, "switch ID");
        let model_params = params.model();

        // Which pools each rack and each aggregation switch serves, in pool order.
        let mut rack_pools: Vec<Vec<(u32, u32)>> = vec![Vec::new(); racks as usize];
        let mut switch_pools: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.spines() as usize];
        let mut rack_base = Vec::with_capacity(cluster.pools.len());
        let mut pod_base = Vec::with_capacity(cluster.pools.len());
        let (mut nr, mut nd) = (0u32, 0u32);
        for (p, pool) in cluster.pools.iter().enumerate() {
            rack_base.push(nr);
            pod_base.push(nd);
            nr += pool.racks.len() as u32;
            nd += pool.groups.len() as u32;
            for (r, rack) in pool.racks.iter().enumerate() {
                rack_pools[rack.rack as usize].push((p as u32, r as u32));
            }
            for (d, pod) in pool.groups.iter().enumerate() {
                switch_pools[pod.spine_switch as usize].push((p as u32, d as u32));
            }
        }
        let placeholder = Slot {
            switch: u32::MAX,
            pool: 0,
            first_node: 0,
            first: 0,
            rows: Rows::default(),
        };
        let mut h = Horus {
            leaves: Vec::new(),
            spines: Vec::new(),
            rack_base,
            pod_base,
            leaf_slots: vec![placeholder; nr as usize],
            spine_slots: vec![placeholder; nd as usize],
            leaf_of_rack: vec![u32::MAX; racks as usize],
            spine_of_switch: vec![u32::MAX; topo.spines() as usize],
            params: model_params,
            profile: params.profile,
            restart_seed: rng.random(),
            baseline: Vec::new(),
            recorder: None,
        };

        // Spines first, so that the leaves' first idleAdd signals find their racks configured.
        h.start_spines(cluster, &switch_pools, rng, record);
        let mut init_signals = h.start_leaves(cluster, &rack_pools, rng, record);
        if queue_len.iter().any(|&q| q > 0) {
            init_signals = h.preload(cluster, queue_len, init_signals);
        }
        for (p, r, e) in init_signals {
            let group_slot = cluster.pools[p as usize].racks[r as usize].group_slot;
            h.deliver_to_spine(p, group_slot, e.header);
        }
        h.baseline = h.raw_counters();
        h
    }

    /// Starts and configures the spine schedulers of the aggregation switches that host one,
    /// each pool's pod a pool of its racks; `switch_pools` lists (pool, pod slot) per switch.
    fn start_spines(
        &mut self,
        cluster: &Cluster,
        switch_pools: &[Vec<(u32, u32)>],
        rng: &mut SimRng,
        record: Option<Switch>,
    ) {
        let racks = cluster.topology.racks();
        for (s, pools) in switch_pools.iter().enumerate() {
            if pools.is_empty() {
                continue;
            }
            let nodes: usize = pools
                .iter()
                .map(|&(p, d)| cluster.pools[p as usize].groups[d as usize].racks as usize)
                .sum();
            let sizes = switch_sizes(pools.len(), nodes.max(1));
            let idx = self.spines.len() as u32;
            self.spine_of_switch[s] = idx;
            let id = id16(racks as usize + s, "spine ID");
            let seed = rng.random();
            self.start_switch(Switch::Spine(idx), Role::Spine, id, sizes, seed, record);
            let mut node = 0u16;
            for (sp, &(p, d)) in pools.iter().enumerate() {
                let pool = &cluster.pools[p as usize];
                let pod = &pool.groups[d as usize];
                self.spine_slots[(self.pod_base[p as usize] + d) as usize] = Slot {
                    switch: idx,
                    pool: sp as u16,
                    first_node: node,
                    first: pod.first_rack,
                    rows: Rows::of(&self.spines[idx as usize], sp as u16),
                };
                self.configure_spine_pool(cluster, p, d, sp as u16, node, |_| true);
                node += pod.racks as u16;
            }
        }
    }

    /// Starts and configures the leaf schedulers of the racks that host pools; `rack_pools` lists
    /// (pool, rack slot) per rack. Returns the signals the configuration passes sent, by pool
    /// and rack slot.
    fn start_leaves(
        &mut self,
        cluster: &Cluster,
        rack_pools: &[Vec<(u32, u32)>],
        rng: &mut SimRng,
        record: Option<Switch>,
    ) -> Vec<(u32, u32, horus_model::sched::Emit)> {
        let model_params = self.params;
        let mut init_signals = Vec::new();
        for (rack, pools) in rack_pools.iter().enumerate() {
            if pools.is_empty() {
                continue;
            }
            let nodes: usize = pools
                .iter()
                .map(|&(p, r)| cluster.pools[p as usize].racks[r as usize].workers as usize)
                .sum();
            let sizes = switch_sizes(pools.len(), nodes);
            let idx = self.leaves.len() as u32;
            self.leaf_of_rack[rack] = idx;
            let seed = rng.random();
            let id = id16(rack, "leaf ID");
            self.start_switch(Switch::Leaf(idx), Role::Leaf, id, sizes, seed, record);
            let mut node = 0u16;
            let mut base = 0u16;
            for (lp, &(p, r)) in pools.iter().enumerate() {
                let pool = &cluster.pools[p as usize];
                let prack = &pool.racks[r as usize];
                self.leaf_slots[(self.rack_base[p as usize] + r) as usize] = Slot {
                    switch: idx,
                    pool: lp as u16,
                    first_node: node,
                    first: prack.first_worker,
                    rows: Rows::of(&self.leaves[idx as usize], lp as u16),
                };
                let spine =
                    self.spine_slots[(self.pod_base[p as usize] + prack.group_slot) as usize];
                let spine_id = self.spines[spine.switch as usize].id();
                let my_node = spine.first_node
                    + (r - pool.groups[prack.group_slot as usize].first_rack) as u16;
                let workers = prack.workers as u16;
                let ops = std::iter::once(ControlOp::ConfigurePool {
                    pool: lp as u16,
                    base,
                    capacity: workers,
                    params: model_params,
                    spine: Some(SpineRef {
                        id: spine_id,
                        node: my_node,
                    }),
                })
                .chain((0..workers).map(|i| ControlOp::AddNode {
                    pool: lp as u16,
                    node: node + i,
                    addr: addr(node + i),
                    workers: 1,
                }));
                for op in ops {
                    self.run(Switch::Leaf(idx), Pass::Control(op), |e| {
                        init_signals.push((p, r, e));
                    });
                }
                node += workers;
                base += workers;
            }
        }

        init_signals
    }

    /// Workers start with queues (`queue_len`): preloads the leaves to match and returns the
    /// signals that tell the spines, in place of the configuration's `init_signals`.
    fn preload(
        &mut self,
        cluster: &Cluster,
        queue_len: &[u32],
        mut init_signals: Vec<(u32, u32, horus_model::sched::Emit)>,
    ) -> Vec<(u32, u32, horus_model::sched::Emit)> {
        // Workers start with queues: preload the leaves to match, then tell the spines.
        if let Some((_, rec)) = &self.recorder {
            rec.lock().expect("recorder").passes_only = false;
        }
        for (p, pool) in cluster.pools.iter().enumerate() {
            for r in 0..pool.racks.len() as u32 {
                let q: Vec<u32> = (0..pool.racks[r as usize].workers)
                    .map(|i| {
                        queue_len
                            [(pool.worker_base + pool.racks[r as usize].first_worker + i) as usize]
                    })
                    .collect();
                if let Some(e) = self.preload_leaf(p as u32, r, &q) {
                    init_signals.push((p as u32, r, e));
                }
            }
        }
        // The signals of the configuration passes are stale: the preload decided the links.
        init_signals.retain(|(_, _, e)| e.header.pkt_type == PacketType::QueueSignal);
        let mut linked = Vec::new();
        for (p, pool) in cluster.pools.iter().enumerate() {
            for r in 0..pool.racks.len() as u32 {
                let slot = self.leaf_slots[(self.rack_base[p] + r) as usize];
                let leaf = &self.leaves[slot.switch as usize];
                if leaf.tables().pools[usize::from(slot.pool)].ctl.linked {
                    let cfg = leaf.tables().pools[usize::from(slot.pool)].cfg;
                    let spine = cfg.spine.expect("leaf pools have a spine");
                    let hdr = header(
                        PacketType::IdleSignal,
                        slot.pool,
                        spine.node,
                        spine.id,
                        0,
                        0,
                    );
                    linked.push((p as u32, r, hdr));
                }
            }
        }
        for (p, r, hdr) in linked {
            init_signals.push((
                p,
                r,
                horus_model::sched::Emit {
                    target: Target::Spine(hdr.dst_id),
                    header: hdr,
                },
            ));
        }
        init_signals
    }

    fn start_switch(
        &mut self,
        switch: Switch,
        role: Role,
        id: u16,
        sizes: Sizes,
        seed: u64,
        record: Option<Switch>,
    ) {
        let mut sched = Scheduler::new(role, id, sizes, CONN_TIMEOUT_US, seed);
        sched.set_profile(self.profile);
        match switch {
            Switch::Leaf(_) => self.leaves.push(sched),
            Switch::Spine(_) => self.spines.push(sched),
        }
        if record == Some(switch) {
            let rec = Recording {
                switch,
                role,
                id,
                sizes,
                conn_timeout_us: CONN_TIMEOUT_US,
                seed,
                profile: self.profile,
                passes_only: true,
                passes: Vec::new(),
            };
            self.recorder = Some((switch, Arc::new(Mutex::new(rec))));
        }
    }

    /// Configures pool `p`'s spine of pod slot `d` as pool `sp` of its spine, with node IDs from
    /// `first_node`, adding the racks `keep` accepts.
    fn configure_spine_pool(
        &mut self,
        cluster: &Cluster,
        p: u32,
        d: u32,
        sp: u16,
        first_node: u16,
        keep: impl Fn(u32) -> bool,
    ) {
        let pool = &cluster.pools[p as usize];
        let pod = &pool.groups[d as usize];
        let spine = self.spine_slots[(self.pod_base[p as usize] + d) as usize].switch;
        let ops = std::iter::once(ControlOp::ConfigurePool {
            pool: sp,
            base: first_node,
            capacity: pod.racks as u16,
            params: self.params,
            spine: None,
        })
        .chain(
            (0..pod.racks)
                .filter(|&i| keep(pod.first_rack + i))
                .map(|i| {
                    let rack = &pool.racks[(pod.first_rack + i) as usize];
                    ControlOp::AddNode {
                        pool: sp,
                        node: first_node + i as u16,
                        addr: addr(rack.rack as u16),
                        workers: rack.workers.min(MAX_WORKERS) as u16,
                    }
                }),
        );
        for op in ops {
            self.run(Switch::Spine(spine), Pass::Control(op), no_signal);
        }
    }

    /// Writes a prefilled rack's state into its leaf as if its workers had reported their queues:
    /// busy workers out of the idle list, loads and the rack average set, the link decided. Returns
    /// the load report the spine must get.
    fn preload_leaf(&mut self, p: u32, r: u32, queues: &[u32]) -> Option<horus_model::sched::Emit> {
        let slot = self.leaf_slots[(self.rack_base[p as usize] + r) as usize];
        let leaf = &mut self.leaves[slot.switch as usize];
        let pool = usize::from(slot.pool);
        let t = leaf.tables_mut();
        let cfg = t.pools[pool].cfg;
        let mut idle = 0u16;
        let mut total = 0u64;
        for (i, &q) in queues.iter().enumerate() {
            let node = slot.first_node + i as u16;
            let n = usize::from(node);
            t.nodes[n].load1 = Load::from_tasks(q.min(u16::MAX as u32) as u16);
            t.nodes[n].load2 = t.nodes[n].load1;
            total += u64::from(q);
            if q == 0 {
                t.idle_list[usize::from(cfg.base + idle)] = NodeRef {
                    node,
                    factor: Load::ONE,
                };
                t.nodes[n].idle_index = IdleIndex::Member(idle);
                idle += 1;
            } else {
                t.nodes[n].idle_index = IdleIndex::Absent;
            }
        }
        let ctl = &mut t.pools[pool].ctl;
        ctl.p = idle;
        ctl.linked = idle >= cfg.params.link_at;
        let avg = &mut t.pools[pool].avg;
        // As if each queued task had passed the leaf (and the leaf had reported them).
        avg.avg.tasks = u32::try_from(total).unwrap_or(u32::MAX);
        avg.reported = avg.avg.level();
        avg.spine_tasks = 0;
        let spine = cfg.spine.expect("leaf pools have a spine");
        let (qlen, seq) = avg.avg.load().to_wire();
        (total > 0).then(|| horus_model::sched::Emit {
            target: Target::Spine(spine.id),
            header: header(
                PacketType::QueueSignal,
                slot.pool,
                spine.node,
                spine.id,
                qlen,
                seq,
            ),
        })
    }

    fn sched(&mut self, s: Switch) -> &mut Scheduler {
        match s {
            Switch::Leaf(i) => &mut self.leaves[i as usize],
            Switch::Spine(i) => &mut self.spines[i as usize],
        }
    }

    /// One pass, recorded if it is the recorded switch's. A control operation the switch refuses
    /// (the controller's view is stale, e.g. a node already removed) is no pass: nothing happens.
    #[inline(always)]
    fn pass(&mut self, s: Switch, pass: Pass) -> PassResult {
        let sched = self.sched(s);
        let result = match pass {
            Pass::Packet(p) => sched.packet(p),
            Pass::Resubmit(r) => sched.resubmit(r),
            Pass::Control(op) => match sched.control(op) {
                Ok(r) => r,
                Err(_) => return PassResult::default(),
            },
        };
        if let Some((rs, rec)) = &self.recorder
            && *rs == s
        {
            rec.lock().expect("recorder").passes.push((pass, result));
        }
        result
    }

    /// A pass and, back to back, the resubmissions it asks for; the signals the passes emit go
    /// to `signal`, in order.
    #[inline(always)]
    fn run(
        &mut self,
        s: Switch,
        first: Pass,
        mut signal: impl FnMut(horus_model::sched::Emit),
    ) -> Outcome {
        let mut r = self.pass(s, first);
        let mut passes = 1;
        if let Some((_, e)) = r.signal {
            signal(e);
        }
        while let Some(rs) = r.resubmit {
            let next: Resubmit = rs;
            r = self.pass(s, Pass::Resubmit(next));
            passes += 1;
            if let Some((_, e)) = r.signal {
                signal(e);
            }
        }
        Outcome {
            forward: r.forward,
            passes,
        }
    }

    #[inline(always)]
    fn packet(
        &mut self,
        s: Switch,
        header: HorusHeader,
        now: crate::queue::Nanos,
        signal: impl FnMut(horus_model::sched::Emit),
    ) -> Outcome {
        let time_us = (now / 1000) as u32;
        self.run(s, Pass::Packet(Packet { header, time_us }), signal)
    }

    /// A leaf's signal for pool `p`, rack slot `r`, put on the wire to its spine.
    fn send_signal(ctx: &mut Ctx, p: u32, r: u32, e: horus_model::sched::Emit) {
        let h = e.header;
        let kind = match h.pkt_type {
            PacketType::IdleSignal => IDLE_ADD,
            PacketType::IdleRemove => IDLE_REMOVE,
            PacketType::QueueSignal => LOAD_UPDATE,
            other => unreachable!("a leaf signals only idle and load messages, not {other:?}"),
        };
        let group_slot = ctx.cluster.pools[p as usize].racks[r as usize].group_slot;
        ctx.send(Message {
            pool: p,
            from: Node::Leaf(r),
            to: Node::Spine(group_slot),
            kind,
            value: (u32::from(h.qlen) << 16) | u32::from(h.seq_num),
            value2: u32::from(h.src_id),
        });
    }

    /// A leaf message arriving at pool `p`'s spine of pod slot `d`: its first pass there.
    fn deliver_to_spine(&mut self, p: u32, d: u32, leaf_header: HorusHeader) {
        let slot = self.spine_slots[(self.pod_base[p as usize] + d) as usize];
        let spine = Switch::Spine(slot.switch);
        let id = self.spines[slot.switch as usize].id();
        let h = HorusHeader {
            pool_id: slot.pool,
            dst_id: id,
            ..leaf_header
        };
        self.packet(spine, h, 0, no_signal);
    }

    /// Every switch's counters summed, leaves as `leaf.NAME` and spines as `spine.NAME`.
    fn raw_counters(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (prefix, scheds) in [("leaf", &self.leaves), ("spine", &self.spines)] {
            let mut sum: Vec<(String, u64)> = Vec::new();
            for s in scheds {
                let e = s.counters().entries();
                if sum.is_empty() {
                    sum = e;
                } else {
                    for (acc, (_, v)) in sum.iter_mut().zip(e) {
                        acc.1 = acc.1.wrapping_add(v);
                    }
                }
            }
            out.extend(sum.into_iter().map(|(k, v)| (format!("{prefix}.{k}"), v)));
        }
        out
    }

    /// The schedulers of a [`PrefetchNote`]'s kind (NOTE_SPINE: the spines; any other, the
    /// leaves).
    #[inline]
    fn scheds(&self, kind: u32) -> &[Scheduler] {
        if kind == NOTE_SPINE {
            &self.spines
        } else {
            &self.leaves
        }
    }

    /// The scheduler of a [`PrefetchNote`] after the switch stage (`kind` NOTE_SPINE or
    /// NOTE_LEAF).
    #[inline]
    fn switch(&self, kind: u32, index: u32) -> &Scheduler {
        &self.scheds(kind)[index as usize]
    }

    /// [`Horus::switch`] if the note is past the switch stage.
    #[inline]
    fn noted_switch(&self, kind: u32, index: u32) -> Option<&Scheduler> {
        match kind {
            NOTE_SPINE | NOTE_LEAF => Some(self.switch(kind, index)),
            _ => None,
        }
    }

    /// The tables a task's first and second entry come from (see
    /// [`Scheduler::next_task_slots`]).
    #[inline(always)]
    fn entry_lists(t: &horus_model::sched::Tables, idle: bool) -> (&[NodeRef], &[NodeRef]) {
        if idle {
            (&t.idle_list, &t.idle_list)
        } else {
            (&t.members1, &t.members2)
        }
    }

    /// The spine that pool `p`'s rack slot `r` reports to, as its leaf was configured: the
    /// spine's switch ID and the rack's node ID there.
    pub(crate) fn leaf_spine(&self, p: u32, r: u32) -> SpineRef {
        let slot = self.leaf_slots[(self.rack_base[p as usize] + r) as usize];
        self.leaves[slot.switch as usize].tables().pools[usize::from(slot.pool)]
            .cfg
            .spine
            .expect("leaf pools have a spine")
    }

    /// The parameters the schedulers were configured with.
    pub(crate) fn params(&self) -> Params {
        self.params
    }

    /// The leaf scheduler of a physical rack, for inspection.
    pub fn leaf(&self, rack: u32) -> Option<&Scheduler> {
        self.leaf_of_rack
            .get(rack as usize)
            .and_then(|&i| self.leaves.get(i as usize))
    }

    /// Index of the leaf of a physical rack, as [`Switch::Leaf`] takes it.
    pub fn leaf_index(cluster: &Cluster, rack: u32) -> Option<u32> {
        // Leaves are numbered in rack order over the racks that hold some pool.
        let mut used = vec![false; cluster.topology.racks() as usize];
        for pool in &cluster.pools {
            for r in &pool.racks {
                used[r.rack as usize] = true;
            }
        }
        used.get(rack as usize)
            .copied()
            .unwrap_or(false)
            .then(|| used[..rack as usize].iter().filter(|&&u| u).count() as u32)
    }
}

impl Policy for Horus {
    fn message_kinds(&self) -> &'static [&'static str] {
        MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let slot = self.spine_slots[(self.pod_base[p as usize] + task.spine) as usize];
        let h = header(PacketType::NewTask, slot.pool, CLIENT_ID, 0, 0, 0);
        let o = self.packet(Switch::Spine(slot.switch), h, ctx.now, no_signal);
        let rack = match o.forward {
            Some(e) => {
                let Target::Node { node, .. } = e.target else {
                    unreachable!("a spine forwards tasks to a rack")
                };
                task.hint = u32::from(e.header.src_id);
                task.tag = e.header.qlen;
                slot.first + u32::from(node - slot.first_node)
            }
            // No rack left in this pod (all failed). Clients stop choosing this spine once the
            // controller knows (`Engine::live_pod_draw`), so this is a task sent before the
            // notice, or of a pool with no live worker anywhere: it goes to a dead rack and is
            // lost.
            None => {
                task.hint = u32::from(CLIENT_ID);
                task.tag = 0;
                let pod = &ctx.cluster.pools[p as usize].groups[task.spine as usize];
                let (first, n) = (pod.first_rack, pod.racks);
                ctx.random_rack(p, first, n)
            }
        };
        Decision::after(rack, o.passes)
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let slot = self.leaf_slots[(self.rack_base[p as usize] + rack) as usize];
        let h = header(
            PacketType::NewTask,
            slot.pool,
            task.hint as u16,
            0,
            task.tag,
            0,
        );
        let o = self.packet(Switch::Leaf(slot.switch), h, ctx.now, |e| {
            Self::send_signal(ctx, p, rack, e)
        });
        let worker = match o.forward {
            Some(e) => {
                let Target::Node { node, .. } = e.target else {
                    unreachable!("a leaf forwards tasks to a worker")
                };
                task.tag = e.header.qlen;
                slot.first + u32::from(node - slot.first_node)
            }
            // Every worker of the pool in this rack was removed: the task is lost with them.
            None => {
                task.tag = 0;
                slot.first
            }
        };
        Decision::after(worker, o.passes)
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let p = reply.pool;
        let slot = self.leaf_slots[(self.rack_base[p as usize] + rack) as usize];
        let node = slot.first_node + (reply.worker - slot.first) as u16;
        let kind = if reply.qlen == 0 && reply.tag != 0 {
            PacketType::TaskDoneIdle
        } else {
            PacketType::TaskDone
        };
        let qlen = reply.qlen.min(u32::from(u16::MAX)) as u16;
        let h = header(kind, slot.pool, node, 0, qlen, 0);
        self.packet(Switch::Leaf(slot.switch), h, ctx.now, |e| {
            Self::send_signal(ctx, p, rack, e)
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        let Node::Spine(d) = msg.to else {
            unreachable!("Horus sends messages to spines only")
        };
        let pkt_type = match msg.kind {
            IDLE_ADD => PacketType::IdleSignal,
            IDLE_REMOVE => PacketType::IdleRemove,
            _ => PacketType::QueueSignal,
        };
        let h = header(
            pkt_type,
            0,
            msg.value2 as u16,
            0,
            (msg.value >> 16) as u16,
            msg.value as u16,
        );
        let slot = self.spine_slots[(self.pod_base[msg.pool as usize] + d) as usize];
        let id = self.spines[slot.switch as usize].id();
        let h = HorusHeader {
            pool_id: slot.pool,
            dst_id: id,
            ..h
        };
        self.packet(Switch::Spine(slot.switch), h, ctx.now, no_signal);
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        match notice {
            FailureNotice::Worker { pool, worker } => {
                let p = &ctx.cluster.pools[pool as usize];
                let r = p.worker_rack[worker as usize];
                let slot = self.leaf_slots[(self.rack_base[pool as usize] + r) as usize];
                let node = slot.first_node + (worker - p.racks[r as usize].first_worker) as u16;
                self.run(
                    Switch::Leaf(slot.switch),
                    Pass::Control(ControlOp::RemoveNode {
                        pool: slot.pool,
                        node,
                    }),
                    |e| Self::send_signal(ctx, pool, r, e),
                );
            }
            FailureNotice::Rack { pool, rack } => {
                let d = ctx.cluster.pools[pool as usize].racks[rack as usize].group_slot;
                let first_rack = ctx.cluster.pools[pool as usize].groups[d as usize].first_rack;
                let slot = self.spine_slots[(self.pod_base[pool as usize] + d) as usize];
                let node = slot.first_node + (rack - first_rack) as u16;
                let spine = &self.spines[slot.switch as usize];
                // A restarted spine may never have added the rack.
                if spine.tables().nodes[usize::from(node)].node.state
                    == horus_model::sched::state::NodeState::Active
                {
                    self.run(
                        Switch::Spine(slot.switch),
                        Pass::Control(ControlOp::RemoveNode {
                            pool: slot.pool,
                            node,
                        }),
                        no_signal,
                    );
                }
            }
            FailureNotice::SpineRestarted { pool, pod } => {
                // A fresh scheduler with the failed one's switch ID and node IDs, holding only
                // this pool: the leaves keep addressing it as before.
                let i = (self.pod_base[pool as usize] + pod) as usize;
                let old = self.spine_slots[i];
                let d = &ctx.cluster.pools[pool as usize].groups[pod as usize];
                let id = self.spines[old.switch as usize].id();
                let sizes = Sizes {
                    pools: 1,
                    nodes: old.first_node + d.racks as u16,
                    conn_table: CONN_TABLE,
                };
                self.restart_seed = self
                    .restart_seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let idx = self.spines.len() as u32;
                self.start_switch(
                    Switch::Spine(idx),
                    Role::Spine,
                    id,
                    sizes,
                    self.restart_seed,
                    None,
                );
                self.spine_slots[i] = Slot {
                    switch: idx,
                    pool: 0,
                    first_node: old.first_node,
                    first: old.first,
                    rows: Rows::of(&self.spines[idx as usize], 0),
                };
                let usable: Vec<bool> = (0..ctx.cluster.pools[pool as usize].racks.len() as u32)
                    .map(|r| ctx.rack_usable(pool, r))
                    .collect();
                self.configure_spine_pool(ctx.cluster, pool, pod, 0, old.first_node, |r| {
                    usable[r as usize]
                });
            }
        }
    }

    fn prefetch_index(&self, cluster: &Cluster, next: Upcoming, note: &mut PrefetchNote) {
        use crate::prefetch;
        // Index: where the call's switch and node are (the slot, and the cluster's line that maps
        // the pass's node to a rack or a worker). The note: the kind of switch, the slot's index,
        // the node (NO_NODE for a task; a reply's worker until the slot tells its node) and
        // whether it is a reply's.
        *note = match next {
            Upcoming::TaskAtSpine { pool, spine: d } => {
                let i = self.pod_base[pool as usize] + d;
                // Read after the pass, to map the chosen node to a rack slot.
                prefetch(&cluster.pools[pool as usize].groups[d as usize]);
                prefetch(&self.spine_slots[i as usize]);
                PrefetchNote([NOTE_SPINE, i, NO_NODE, 0, 0])
            }
            Upcoming::Message(Message {
                pool,
                to: Node::Spine(d),
                value2,
                ..
            }) => {
                let i = self.pod_base[pool as usize] + d;
                prefetch(&self.spine_slots[i as usize]);
                PrefetchNote([NOTE_SPINE, i, value2, 0, 0])
            }
            Upcoming::TaskAtLeaf { pool, rack } => {
                let i = self.rack_base[pool as usize] + rack;
                prefetch(&cluster.pools[pool as usize].racks[rack as usize]);
                prefetch(&self.leaf_slots[i as usize]);
                PrefetchNote([NOTE_LEAF, i, NO_NODE, 0, 0])
            }
            Upcoming::ReplyAtLeaf { pool, rack, worker } => {
                let i = self.rack_base[pool as usize] + rack;
                prefetch(&self.leaf_slots[i as usize]);
                PrefetchNote([NOTE_LEAF, i, worker, NOTE_REPLY, 0])
            }
            Upcoming::Message(_) => PrefetchNote::default(),
        };
    }

    fn prefetch(&self, _cluster: &Cluster, notes: &mut [PrefetchNote; 4]) {
        use crate::{prefetch, prefetch_addr, prefetch_all};
        // The Entries stage runs in the Rows stage's place and the Nodes stage in the Entries',
        // one event earlier each than their names say: a node's row then has two events to come
        // in before the pass, not one.
        let [_, nodes, entries, switch] = notes;
        // Switch: the scheduler (generator, table handles, counters) and the rows the pass reads
        // first, the pool's row (configuration, idle control, average) and for a node's packet
        // the node's row, from the addresses in the slot; the note becomes the switch, the pool's
        // ID there and the node (NO_NODE for a task).
        // Worked out without branching on the kind of call (a branch the processor would mostly
        // mispredict): the slot is a leaf's or a spine's by a select, a reply's node likewise,
        // and a note that names no call (all zero) reads the first leaf slot and stays zero.
        let [kind, i, b, reply, _] = switch.0;
        let slots = if kind == NOTE_SPINE {
            &self.spine_slots
        } else {
            &self.leaf_slots
        };
        if let Some(slot) = slots.get(i as usize) {
            let worker_node = slot
                .first_node
                .wrapping_add(b.wrapping_sub(slot.first) as u16);
            let node = if reply == NOTE_REPLY {
                u32::from(worker_node)
            } else {
                b
            };
            let rows = slot.rows;
            prefetch_addr(rows.pool_row);
            prefetch_addr(if node == NO_NODE {
                rows.pool_row
            } else {
                rows.node_row(node)
            });
            if let Some(s) = self.scheds(kind).get(slot.switch as usize) {
                prefetch_all(s);
            }
            switch.0 = [kind, slot.switch, u32::from(slot.pool), node, 0];
        }
        // Entries: for a task, the idle-list top or the two members the pass will sample (the
        // model tells, from a copy of its generator); the note becomes where they are, for the
        // Nodes stage to read them without working that out again.
        let [kind, a, pool, node, _] = entries.0;
        if node == NO_NODE
            && let Some(s) = self.noted_switch(kind, a)
            && let Some((idle, i1, i2)) = s.next_task_slots(pool as u16)
        {
            let (l1, l2) = Self::entry_lists(s.tables(), idle);
            if let (Some(e1), Some(e2)) = (l1.get(i1), l2.get(i2)) {
                prefetch(e1);
                prefetch(e2);
                let lists = if idle { NOTE_IDLE } else { NOTE_MEMBERS };
                entries.0 = [kind, a, i1 as u32, i2 as u32, lists];
            }
        }
        // Nodes: the rows of those entries' nodes.
        let [kind, a, i1, i2, lists] = nodes.0;
        if lists != 0
            && let Some(s) = self.noted_switch(kind, a)
        {
            let t = s.tables();
            let (l1, l2) = Self::entry_lists(t, lists == NOTE_IDLE);
            for e in [l1.get(i1 as usize), l2.get(i2 as usize)] {
                if let Some(row) = e.and_then(|e| t.nodes.get(usize::from(e.node))) {
                    prefetch(row);
                }
            }
        }
    }

    fn prefetches(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(String, u64)> {
        self.raw_counters()
            .into_iter()
            .zip(&self.baseline)
            .map(|((k, v), (_, b))| (k, v.wrapping_sub(*b)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_parameters_are_the_documented_ones() {
        let p = HorusParams::default().model();
        assert_eq!((p.link_at, p.unlink_at), (1, 0));
        assert_eq!(p.report_delta, Load::ONE);
        assert_eq!(p.repair_gap_us, 50);
        assert!(p.is_valid());
    }
}
