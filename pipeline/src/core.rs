//! The scheduler core: the decode step, the pass mux with the resubmit path, and the fourteen
//! stages in the order of the stage plan (`docs/pipeline.md`).
//!
//! One pass enters stage 0 per clock. Priority: a resubmitted pass (the second pass of a task, of
//! an idleAdd, of an idleRemove or of a node removal), then a control pass, then a new packet.
//! `pkt_ready` is low while a resubmitted pass or a control pass takes the slot. A control pass
//! waits until the stages are empty, so no resubmitted pass is in flight when it runs (the model's
//! barrier, `ControlError::Busy`); meanwhile, and until it has left the stages, no packet enters
//! (a rescale holds `poolAvg` for a few clocks, `stages/pool_avg.rs`).
//!
//! ```text
//!   pkt (parsed header) --> decode --+
//!   ctl (control pass) --------------+--> mux --> stage 0 ... stage 13 --> out
//!                                    ^                              |
//!                                    +---- second pass <------------+ (resubmit)
//! ```
//!
//! `trace_valid` / `trace` show every pass as it enters stage 0, in order: the co-simulation's
//! scoreboard runs the reference model in exactly that order. Unconnected, they cost nothing.

use crate::parser::{
    CLASS_DROP_MALFORMED, CLASS_HORUS, CLASS_PASS_THROUGH, Parsed, bit_cast_parsed_bits,
};
use crate::phv::{BUF_BITS, HANDLE_BITS, Phv, drop_code};
use crate::readback::RB_BITS;
use crate::stages::{
    PassOut, STAGE_CYCLES, TableStage, conn::ConnStage, drift::DriftStage, idle_ctl::IdleCtlStage,
    idle_index::IdleIndexStage, idle_list::IdleListStage, load::LoadStage, members::MembersStage,
    node::NodeStage, node_addr::NodeAddrStage, pool_avg::PoolAvgStage, pool_cfg::PoolCfgStage,
};
use horus_model::config::Role;
use horus_model::sched::{DropReason, Stage};
use horus_model::wire::PacketType;
use rust_hdl::prelude::*;

/// Cycles from a pass entering (the mux) to leaving the last stage: one in the entry register,
/// then [`STAGE_CYCLES`] in each stage of the plan ([`HorusCore::tables`] holds the core to it).
pub const CORE_LATENCY: usize = 1 + Stage::ALL.len() * STAGE_CYCLES;

/// Whether a pass leaving stage 13 comes back as its second pass: a task whose drift check
/// failed, an idleAdd's or idleRemove's first pass, a node removal with a member to move or an
/// idle-list removal to finish.
#[derive(LogicBlock, Default)]
pub struct AsksSecondPass {
    pub pass: Signal<In, Phv>,
    pub again: Signal<Out, Bit>,
    /// The descriptor fields not read (the name matches Verilator's `--unused-regexp`).
    pass_unused: Signal<Local, Phv>,
}

impl Logic for AsksSecondPass {
    #[hdl_gen]
    fn update(&mut self) {
        self.again.next = self.pass.val().live
            & !self.pass.val().drop.any()
            & ((self.pass.val().resubmit
                & (self.pass.val().is_task
                    | self.pass.val().is_reply_idle
                    | self.pass.val().is_idle_add
                    | self.pass.val().is_idle_remove))
                | (self.pass.val().is_ctl_remove
                    & (self.pass.val().resubmit
                        | (self.pass.val().mv_node != self.pass.val().src))));
        self.pass_unused.next = self.pass.val();
    }
}

/// The scheduler core for `2^P` pools, `2^N` node slots and `2^C` connection entries.
#[derive(LogicBlock)]
pub struct HorusCore<const P: usize, const N: usize, const C: usize> {
    pub clock: Signal<In, Clock>,
    /* New packets: the parser's verdict, the arrival time and the frame buffer slot. */
    pub pkt_valid: Signal<In, Bit>,
    pub pkt: Signal<In, Parsed>,
    pub pkt_time: Signal<In, Bits<32>>,
    pub pkt_handle: Signal<In, Bits<HANDLE_BITS>>,
    pub pkt_start: Signal<In, Bits<BUF_BITS>>,
    pub pkt_len: Signal<In, Bits<16>>,
    pub pkt_ready: Signal<Out, Bit>,
    /* Control passes: a descriptor with one `is_ctl_*` flag and the values the host computed. */
    pub ctl_valid: Signal<In, Bit>,
    pub ctl: Signal<In, Phv>,
    pub ctl_ready: Signal<Out, Bit>,
    /* Every pass leaving stage 13 (a first pass that resubmits included: `resubmit`). */
    pub out_valid: Signal<Out, Bit>,
    pub out: Signal<Out, Phv>,
    /// The leaving pass comes back as its second pass (its frame stays in the buffer).
    pub out_again: Signal<Out, Bit>,
    /* Every pass entering stage 0, in order. */
    pub trace_valid: Signal<Out, Bit>,
    pub trace: Signal<Out, Phv>,
    /// The generator's state.
    pub rng_state: Signal<Out, Bits<64>>,
    /// Passes inside the stages.
    pub in_flight: Signal<Out, Bits<8>>,
    /// The entry the last read kept (`readback.rs`), and whether a table took the read.
    pub readback: Signal<Out, Bits<RB_BITS>>,
    pub readback_valid: Signal<Out, Bit>,

    pool_cfg: PoolCfgStage<P>,
    node: NodeStage<N>,
    idle_ctl: IdleCtlStage<P>,
    idle_list: IdleListStage<N>,
    idle_index: IdleIndexStage<N>,
    members1: MembersStage<N>,
    members2: MembersStage<N>,
    load1: LoadStage<N>,
    load2: LoadStage<N>,
    drift1: DriftStage<N>,
    drift2: DriftStage<N>,
    pool_avg: PoolAvgStage<P>,
    conn: ConnStage<C>,
    node_addr: NodeAddrStage<N>,
    /// The pass that entered last cycle: stage 0's `port.up.pass` (the mux's output is its `early`).
    entered: DFF<Phv>,
    /// The last stage's `port.down.early` (no stage follows; the name matches Verilator's
    /// `--unused-regexp`).
    last_next_unused: Signal<Local, Phv>,
    count: DFF<Bits<8>>,
    /// `count` is not zero, kept beside it (a flip-flop, so that a control pass's admission is
    /// not an 8-input OR in front of the pass mux and the first stage's index).
    occupied: DFF<Bit>,
    /// A control pass is in the stages.
    ctl_busy: DFF<Bit>,
    /// The pass leaving the last stage comes back (`AsksSecondPass` of it, registered).
    again: DFF<Bit>,
    asks: AsksSecondPass,

    /* Decode. */
    /// The header as one vector; only its qlen and seq_num bits are read (the name matches
    /// Verilator's default `--unused-regexp`).
    header_unused: Signal<Local, Bits<90>>,
    dec: Signal<Local, Phv>,
    t: Signal<Local, Bits<7>>,
    legacy: Signal<Local, Bit>,
    to_control: Signal<Local, Bit>,
    reply: Signal<Local, Bit>,
    spine_msg: Signal<Local, Bit>,
    /* The resubmit path. */
    back: Signal<Local, Phv>,
    second: Signal<Local, Phv>,
    moved: Signal<Local, Bit>,
    resub: Signal<Local, Bit>,
    /* The mux. */
    ctl_go: Signal<Local, Bit>,
    pkt_go: Signal<Local, Bit>,
    enter: Signal<Local, Phv>,

    is_leaf: Constant<Bit>,
    zero_phv: Constant<Phv>,
    /// `poolAvg`'s `added`: the paper leaf's additions carry no outstanding tasks.
    no_added: Constant<Bits<16>>,
    pool_limit: Constant<Bits<16>>,
    class_horus: Constant<Bits<2>>,
    class_pass: Constant<Bits<2>>,
    class_malformed: Constant<Bits<2>>,
    sh16: Constant<Bits<32>>,
    one8: Constant<Bits<8>>,
    t_task: Constant<Bits<7>>,
    t_random: Constant<Bits<7>>,
    t_done: Constant<Bits<7>>,
    t_done_idle: Constant<Bits<7>>,
    t_queue_remove: Constant<Bits<7>>,
    t_scan: Constant<Bits<7>>,
    t_idle_signal: Constant<Bits<7>>,
    t_queue_signal: Constant<Bits<7>>,
    t_probe: Constant<Bits<7>>,
    t_probe_resp: Constant<Bits<7>>,
    t_idle_remove: Constant<Bits<7>>,
    t_keep_alive: Constant<Bits<7>>,
    t_worker_id: Constant<Bits<7>>,
    t_worker_id_ack: Constant<Bits<7>>,
    t_remove_ack: Constant<Bits<7>>,
    t_queue_signal_init: Constant<Bits<7>>,
    t_cont: Constant<Bits<7>>,
    code_legacy: Constant<Bits<4>>,
    code_wrong_role: Constant<Bits<4>>,
    code_pool_range: Constant<Bits<4>>,
    code_malformed: Constant<Bits<4>>,
    code_checksum: Constant<Bits<4>>,
}

impl<const P: usize, const N: usize, const C: usize> HorusCore<P, N, C> {
    /// A core for `role` whose generator starts at `seed` (`horus_model::rng`) and whose
    /// connection entries expire after `conn_timeout_us`.
    pub fn new(role: Role, seed: u64, conn_timeout_us: u32) -> Self {
        assert!(P <= 16 && N <= 16, "pool and node IDs are 16 bits");
        let leaf = role == Role::Leaf;
        let t = |p: PacketType| Constant::new(Bits::<7>::from(u64::from(p.code())));
        let code = |r: DropReason| Constant::new(Bits::<4>::from(drop_code(r)));
        let class = |c: u64| Constant::new(Bits::<2>::from(c));
        Self {
            clock: Default::default(),
            pkt_valid: Default::default(),
            pkt: Default::default(),
            pkt_time: Default::default(),
            pkt_handle: Default::default(),
            pkt_start: Default::default(),
            pkt_len: Default::default(),
            pkt_ready: Default::default(),
            ctl_valid: Default::default(),
            ctl: Default::default(),
            ctl_ready: Default::default(),
            out_valid: Default::default(),
            out: Default::default(),
            out_again: Default::default(),
            trace_valid: Default::default(),
            trace: Default::default(),
            rng_state: Default::default(),
            in_flight: Default::default(),
            readback: Default::default(),
            readback_valid: Default::default(),
            pool_cfg: PoolCfgStage::new(seed),
            node: Default::default(),
            idle_ctl: IdleCtlStage::new(leaf),
            idle_list: IdleListStage::new(leaf),
            idle_index: IdleIndexStage::new(leaf),
            members1: MembersStage::new(true),
            members2: MembersStage::new(false),
            load1: LoadStage::new(true, leaf),
            load2: LoadStage::new(false, leaf),
            drift1: DriftStage::new(true),
            drift2: DriftStage::new(false),
            pool_avg: PoolAvgStage::new(leaf),
            conn: ConnStage::new(conn_timeout_us),
            node_addr: Default::default(),
            entered: Default::default(),
            last_next_unused: Default::default(),
            count: Default::default(),
            occupied: Default::default(),
            ctl_busy: Default::default(),
            again: Default::default(),
            asks: Default::default(),
            header_unused: Default::default(),
            dec: Default::default(),
            t: Default::default(),
            legacy: Default::default(),
            to_control: Default::default(),
            reply: Default::default(),
            spine_msg: Default::default(),
            back: Default::default(),
            second: Default::default(),
            moved: Default::default(),
            resub: Default::default(),
            ctl_go: Default::default(),
            pkt_go: Default::default(),
            enter: Default::default(),
            is_leaf: Constant::new(leaf),
            zero_phv: Constant::new(Phv::default()),
            no_added: Constant::new(0.into()),
            pool_limit: Constant::new((1u64 << P).into()),
            class_horus: class(CLASS_HORUS),
            class_pass: class(CLASS_PASS_THROUGH),
            class_malformed: class(CLASS_DROP_MALFORMED),
            sh16: Constant::new(16.into()),
            one8: Constant::new(1.into()),
            t_task: t(PacketType::NewTask),
            t_random: t(PacketType::NewTaskRandom),
            t_done: t(PacketType::TaskDone),
            t_done_idle: t(PacketType::TaskDoneIdle),
            t_queue_remove: t(PacketType::QueueRemove),
            t_scan: t(PacketType::ScanQueueSignal),
            t_idle_signal: t(PacketType::IdleSignal),
            t_queue_signal: t(PacketType::QueueSignal),
            t_probe: t(PacketType::ProbeIdleQueue),
            t_probe_resp: t(PacketType::ProbeIdleResponse),
            t_idle_remove: t(PacketType::IdleRemove),
            t_keep_alive: t(PacketType::KeepAlive),
            t_worker_id: t(PacketType::WorkerId),
            t_worker_id_ack: t(PacketType::WorkerIdAck),
            t_remove_ack: t(PacketType::RemoveAck),
            t_queue_signal_init: t(PacketType::QueueSignalInit),
            t_cont: t(PacketType::TaskContinuation),
            code_legacy: code(DropReason::LegacyType),
            code_wrong_role: code(DropReason::WrongRole),
            code_pool_range: code(DropReason::PoolOutOfRange),
            code_malformed: code(DropReason::Malformed),
            code_checksum: code(DropReason::BadChecksum),
        }
    }
}

impl<const P: usize, const N: usize, const C: usize> HorusCore<P, N, C> {
    /// The tables of the core's stages, in the order a pass visits them (the order of the joins
    /// in `update`, which a new stage joins too). The array's length is the stage plan's, so a
    /// list one stage longer or shorter does not compile; `pipeline/tests/core.rs` checks the
    /// order against the plan.
    pub fn tables(&self) -> [Stage; Stage::ALL.len()] {
        [
            self.pool_cfg.table(),
            self.node.table(),
            self.idle_ctl.table(),
            self.idle_list.table(),
            self.idle_index.table(),
            self.members1.table(),
            self.members2.table(),
            self.load1.table(),
            self.load2.table(),
            self.drift1.table(),
            self.drift2.table(),
            self.pool_avg.table(),
            self.conn.table(),
            self.node_addr.table(),
        ]
    }
}

impl<const P: usize, const N: usize, const C: usize> Logic for HorusCore<P, N, C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entered, count, occupied, ctl_busy, again);
        clock!(
            self, clock, pool_cfg, node, idle_ctl, idle_list, idle_index, members1, members2,
            load1, load2, drift1, drift2, pool_avg, conn, node_addr
        );

        // ---- Decode: a new packet's operation from its type and the role, as
        // `Scheduler::packet` does before its first table.
        self.header_unused.next = bit_cast_parsed_bits(self.pkt.val());
        self.t.next = self.pkt.val().pkt_type;
        self.dec.next = self.zero_phv.val();
        self.dec.next.live = true;
        self.dec.next.pkt_type = self.pkt.val().pkt_type;
        self.dec.next.more = self.pkt.val().more_packets;
        self.dec.next.pool = self.pkt.val().pool_id;
        self.dec.next.src = self.pkt.val().src_id;
        self.dec.next.dst = self.pkt.val().dst_id;
        self.dec.next.qlen = self.pkt.val().qlen;
        self.dec.next.seq = self.pkt.val().seq_num;
        // Bits 58..90 hold qlen then seq_num; swapped halves give qlen.seq_num as one 16.16 value.
        self.dec.next.wire_load = (self.header_unused.val().get_bits::<32>(58) << self.sh16.val())
            | (self.header_unused.val().get_bits::<32>(58) >> self.sh16.val());
        self.dec.next.time = self.pkt_time.val();
        self.dec.next.handle = self.pkt_handle.val();
        self.dec.next.start = self.pkt_start.val();
        self.dec.next.len = self.pkt_len.val();
        self.legacy.next = (self.t.val() == self.t_queue_remove.val())
            | (self.t.val() == self.t_scan.val())
            | (self.t.val() == self.t_probe.val())
            | (self.t.val() == self.t_probe_resp.val());
        self.to_control.next = (self.t.val() == self.t_keep_alive.val())
            | (self.t.val() == self.t_worker_id.val())
            | (self.t.val() == self.t_worker_id_ack.val())
            | (self.t.val() == self.t_remove_ack.val());
        self.reply.next =
            (self.t.val() == self.t_done.val()) | (self.t.val() == self.t_done_idle.val());
        self.spine_msg.next = (self.t.val() == self.t_idle_signal.val())
            | (self.t.val() == self.t_queue_signal.val())
            | (self.t.val() == self.t_queue_signal_init.val())
            | (self.t.val() == self.t_idle_remove.val());
        if self.pkt.val().class == self.class_horus.val() {
            if self.legacy.val() {
                self.dec.next.drop = self.code_legacy.val();
            } else if self.to_control.val() {
                self.dec.next.is_to_control = true;
            } else if self.reply.val() & !self.is_leaf.val() {
                self.dec.next.is_pass_through = true;
            } else if self.spine_msg.val() & self.is_leaf.val() {
                self.dec.next.drop = self.code_wrong_role.val();
            } else if self.pkt.val().pool_id >= self.pool_limit.val() {
                self.dec.next.drop = self.code_pool_range.val();
            } else {
                self.dec.next.is_task = self.t.val() == self.t_task.val();
                self.dec.next.is_random = self.t.val() == self.t_random.val();
                self.dec.next.is_cont = self.t.val() == self.t_cont.val();
                self.dec.next.is_reply = self.t.val() == self.t_done.val();
                self.dec.next.is_reply_idle = self.t.val() == self.t_done_idle.val();
                self.dec.next.is_idle_add = self.t.val() == self.t_idle_signal.val();
                self.dec.next.is_load_update = (self.t.val() == self.t_queue_signal.val())
                    | (self.t.val() == self.t_queue_signal_init.val());
                self.dec.next.is_idle_remove = self.t.val() == self.t_idle_remove.val();
            }
        } else if self.pkt.val().class == self.class_pass.val() {
            self.dec.next.is_pass_through = true;
        } else if self.pkt.val().class == self.class_malformed.val() {
            self.dec.next.drop = self.code_malformed.val();
        } else {
            self.dec.next.drop = self.code_checksum.val();
        }

        // ---- The resubmit path: a first pass that asked for a second pass comes back as that
        // pass, carrying everything it learned; the per-pass results start afresh.
        self.back.next = self.node_addr.port.down.pass.val();
        self.moved.next = self.back.val().mv_node != self.back.val().src;
        // Whether it comes back is decided on the pass in the last stage (`conn`'s output) and
        // registered beside the stage's output, so the mux's choice starts from a register. It
        // is read before the stage's own decision, a forward's address check, whose miss drops
        // the pass: no pass that forwards to a node asks for a second pass (a placed task has
        // its node; a task that resubmits is placed on its second pass; an idle reply that
        // comes back is forwarded unchanged, to the pass-through port, and is not checked), so
        // the miss never changes the answer, and the address read stays off the resubmit mux
        // (the model's property tests check the rule).
        self.asks.pass.next = self.conn.port.down.pass.val();
        self.again.d.next = self.asks.again.val();
        self.resub.next = self.again.q.val();
        self.second.next = self.back.val();
        self.second.next.is_task = false;
        self.second.next.is_random = false;
        self.second.next.is_cont = false;
        self.second.next.is_reply = false;
        self.second.next.is_reply_idle = false;
        self.second.next.is_load_update = false;
        self.second.next.is_idle_add = false;
        self.second.next.is_idle_remove = false;
        self.second.next.is_pass_through = false;
        self.second.next.is_to_control = false;
        self.second.next.is_ctl_remove = false;
        self.second.next.is_sched2 = self.back.val().is_task;
        self.second.next.is_add_commit =
            self.back.val().is_reply_idle | self.back.val().is_idle_add;
        self.second.next.is_remove_finish = self.back.val().is_idle_remove;
        self.second.next.is_ctl_remove2 = self.back.val().is_ctl_remove;
        if self.back.val().is_ctl_remove {
            // The member that moved into the freed slot is the node the second pass updates.
            self.second.next.src = self.back.val().mv_node;
            self.second.next.fin_move_member = self.moved.val();
        }
        self.second.next.resubmit = false;
        self.second.next.drop = self.zero_phv.val().drop;
        self.second.next.sub_drop = self.zero_phv.val().sub_drop;
        self.second.next.idle = false;
        self.second.next.repair = false;
        self.second.next.sig_idle_add = false;
        self.second.next.sig_idle_remove = false;
        self.second.next.sig_load_update = false;
        self.second.next.assigned = false;
        self.second.next.ev_conn_insert = false;
        self.second.next.ev_conn_collision = false;
        self.second.next.ev_conn_expired = false;
        self.second.next.fwd = false;

        // ---- The mux.
        self.ctl_go.next = self.ctl_valid.val() & !self.resub.val() & !self.occupied.q.val();
        self.pkt_go.next = self.pkt_valid.val()
            & !self.resub.val()
            & !self.ctl_valid.val()
            & !self.ctl_busy.q.val();
        self.enter.next = self.zero_phv.val();
        if self.resub.val() {
            self.enter.next = self.second.val();
        } else if self.ctl_go.val() {
            self.enter.next = self.ctl.val();
            self.enter.next.live = true;
        } else if self.pkt_go.val() {
            self.enter.next = self.dec.val();
        }
        // From a sub-block's output and a port alone, in its own statement: Verilator then sees
        // no path from `pkt_valid` to `pkt_ready` (it would through a shared local).
        self.pkt_ready.next = !self.again.q.val() & !self.ctl_valid.val() & !self.ctl_busy.q.val();
        self.ctl_ready.next = self.ctl_go.val();
        // A control pass runs alone: no packet enters behind it until it has left (a rescale
        // holds `poolAvg` for a few clocks; its own second pass may follow it at once).
        self.ctl_busy.d.next = self.ctl_busy.q.val();
        if self.back.val().live
            & (self.back.val().is_ctl_pool
                | self.back.val().is_ctl_params
                | self.back.val().is_ctl_add
                | self.back.val().is_ctl_remove
                | self.back.val().is_ctl_read)
        {
            self.ctl_busy.d.next = false;
        }
        if self.ctl_go.val() {
            self.ctl_busy.d.next = true;
        }
        // Passes in the stages: one more for each that enters, one fewer for each that leaves.
        self.count.d.next = self.count.q.val();
        if self.enter.val().live & !self.back.val().live {
            self.count.d.next = self.count.q.val() + self.one8.val();
        }
        if !self.enter.val().live & self.back.val().live {
            self.count.d.next = self.count.q.val() - self.one8.val();
        }
        // The same for `occupied`: one more sets it, one fewer clears it when it was the last.
        self.occupied.d.next = self.occupied.q.val();
        if self.enter.val().live & !self.back.val().live {
            self.occupied.d.next = true;
        }
        if !self.enter.val().live & self.back.val().live {
            self.occupied.d.next = self.count.q.val() != self.one8.val();
        }

        // ---- The stages, in the order of the stage plan, each one's `down` joined to the
        // next one's `up`: a stage reads its table with the index of the pass entering it
        // (`early`, the previous stage's register input) while that pass is still in the
        // previous stage.
        self.entered.d.next = self.enter.val();
        self.pool_cfg.port.up.early.next = self.enter.val();
        self.pool_cfg.port.up.pass.next = self.entered.q.val();
        PassOut::join(&mut self.pool_cfg.port.down, &mut self.node.port.up);
        PassOut::join(&mut self.node.port.down, &mut self.idle_ctl.port.up);
        PassOut::join(&mut self.idle_ctl.port.down, &mut self.idle_list.port.up);
        PassOut::join(&mut self.idle_list.port.down, &mut self.idle_index.port.up);
        PassOut::join(&mut self.idle_index.port.down, &mut self.members1.port.up);
        PassOut::join(&mut self.members1.port.down, &mut self.members2.port.up);
        PassOut::join(&mut self.members2.port.down, &mut self.load1.port.up);
        PassOut::join(&mut self.load1.port.down, &mut self.load2.port.up);
        PassOut::join(&mut self.load2.port.down, &mut self.drift1.port.up);
        PassOut::join(&mut self.drift1.port.down, &mut self.drift2.port.up);
        PassOut::join(&mut self.drift2.port.down, &mut self.pool_avg.port.up);
        PassOut::join(&mut self.pool_avg.port.down, &mut self.conn.port.up);
        self.pool_avg.added.next = self.no_added.val();
        PassOut::join(&mut self.conn.port.down, &mut self.node_addr.port.up);
        self.last_next_unused.next = self.node_addr.port.down.early.val();

        self.out_valid.next = self.back.val().live;
        self.out.next = self.back.val();
        self.out_again.next = self.resub.val();
        self.trace_valid.next = self.enter.val().live;
        self.trace.next = self.enter.val();
        self.rng_state.next = self.pool_cfg.rng_state.val();
        self.in_flight.next = self.count.q.val();

        // ---- Reads: the entry of the table that took the last one (the others hold zero).
        self.readback.next = self.pool_cfg.port.rb.val()
            | self.node.port.rb.val()
            | self.idle_ctl.port.rb.val()
            | self.idle_list.port.rb.val()
            | self.idle_index.port.rb.val()
            | self.members1.port.rb.val()
            | self.members2.port.rb.val()
            | self.load1.port.rb.val()
            | self.load2.port.rb.val()
            | self.drift1.port.rb.val()
            | self.drift2.port.rb.val()
            | self.pool_avg.port.rb.val()
            | self.conn.port.rb.val()
            | self.node_addr.port.rb.val();
        self.readback_valid.next = self.pool_cfg.port.rb_hit.val()
            | self.node.port.rb_hit.val()
            | self.idle_ctl.port.rb_hit.val()
            | self.idle_list.port.rb_hit.val()
            | self.idle_index.port.rb_hit.val()
            | self.members1.port.rb_hit.val()
            | self.members2.port.rb_hit.val()
            | self.load1.port.rb_hit.val()
            | self.load2.port.rb_hit.val()
            | self.drift1.port.rb_hit.val()
            | self.drift2.port.rb_hit.val()
            | self.pool_avg.port.rb_hit.val()
            | self.conn.port.rb_hit.val()
            | self.node_addr.port.rb_hit.val();
    }
}
