//! The pass descriptor: everything a pass carries from stage to stage (a switch's packet header
//! vector). The tables' entry types are in [`crate::entries`].
//!
//! Field names follow `horus_model::sched`. IDs are 16 bits as on the wire; a stage indexes its
//! table with the low bits the size preset gives it, after the decode step has dropped IDs beyond
//! the preset. Loads and factors are 16.16 (`Load`), drifts signed 16.16 (`Drift`) in two's
//! complement, as in `horus_model::fixed`.
//!
//! What a pass does is a set of one-hot flags (`is_*`), decided once by the decode step (first
//! passes) or by the pass that resubmitted it. Flags rather than an encoded operation keep the
//! stages free of operation constants: rust-hdl emits integer literals 32 bits wide and every enum
//! variant as a parameter in every module, both of which `verilator -Wall` rejects.

use rust_hdl::prelude::*;

/// Frames the frame buffer holds at once (`2^HANDLE_BITS` slots).
pub const HANDLE_BITS: usize = 6;
/// 512-bit beats per frame-buffer slot (`2^SLOT_BEAT_BITS`: frames up to 2,048 bytes).
pub const SLOT_BEAT_BITS: usize = 5;
/// 512-bit beats the frame buffer holds (`2^BUF_BITS`, 128 KiB).
pub const BUF_BITS: usize = HANDLE_BITS + SLOT_BEAT_BITS;
const _: () = assert!(64 << SLOT_BEAT_BITS == horus_model::sched::frame::MAX_FRAME_LEN);

/// Drop codes: `1 + DropReason as u8` (`horus_model::sched::DropReason`), 0 = not dropped.
pub fn drop_code(r: horus_model::sched::DropReason) -> u64 {
    1 + r as u64
}

/// The pass descriptor.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct Phv {
    /// A pass occupies this slot (0: a bubble, which changes nothing).
    pub live: Bit,
    /// NEW_TASK, first pass.
    pub is_task: Bit,
    /// NEW_TASK_RANDOM.
    pub is_random: Bit,
    /// TASK_CONTINUATION.
    pub is_cont: Bit,
    /// TASK_DONE at a leaf.
    pub is_reply: Bit,
    /// TASK_DONE_IDLE at a leaf: a reply and the first pass of an idleAdd.
    pub is_reply_idle: Bit,
    /// QUEUE_SIGNAL / QUEUE_SIGNAL_INIT at a spine.
    pub is_load_update: Bit,
    /// IDLE_SIGNAL at a spine: first pass of an idleAdd.
    pub is_idle_add: Bit,
    /// IDLE_REMOVE at a spine: first pass of a removal.
    pub is_idle_remove: Bit,
    /// Second pass of a task (Algorithm 2, resubmit path).
    pub is_sched2: Bit,
    /// Second pass of an idleAdd.
    pub is_add_commit: Bit,
    /// Second pass of an idleRemove.
    pub is_remove_finish: Bit,
    /// Forwarded unchanged to the pass-through port.
    pub is_pass_through: Bit,
    /// Forwarded unchanged to the control port.
    pub is_to_control: Bit,
    /// Control: configure a pool (`ControlOp::ConfigurePool`).
    pub is_ctl_pool: Bit,
    /// Control: set a pool's parameters.
    pub is_ctl_params: Bit,
    /// Control: add a node (`src` = the node, `factor` its factor, the address fields its address).
    pub is_ctl_add: Bit,
    /// Control: remove a node, first pass.
    pub is_ctl_remove: Bit,
    /// Control: remove a node, second pass.
    pub is_ctl_remove2: Bit,
    /// Control: read entry `rd_index` of the table of stage `rd_table` back (`readback.rs`).
    pub is_ctl_read: Bit,
    pub rd_table: Bits<4>,
    pub rd_index: Bits<16>,
    /// A removal's second pass moves a member (`src`) into the freed `slot`.
    pub fin_move_member: Bit,
    /// A removal's first pass: the pool's last member (read by the host), which moves into the
    /// freed member slot.
    pub mv_node: Bits<16>,
    pub mv_f: Bits<32>,
    // The Horus header.
    pub pkt_type: Bits<7>,
    pub more: Bit,
    pub pool: Bits<16>,
    pub src: Bits<16>,
    pub dst: Bits<16>,
    pub qlen: Bits<16>,
    pub seq: Bits<16>,
    /// The low 16 bits of the connection table's hash of (`pool`, `seq`)
    /// (`horus_model::sched::conn_hash`), worked out in stage 0 so that `conn` indexes its table
    /// with a field of the pass rather than two products in its own index's cycle.
    pub conn_slot: Bits<16>,
    /// `qlen.seq_num` as one 16.16 value (`qlen` the integer part): a leaf-to-spine load, or, masked
    /// to its integer part, a worker's queue length. Filled from the header's bytes 7..11.
    pub wire_load: Bits<32>,
    /// Arrival time, microseconds, wrapping.
    pub time: Bits<32>,
    /// The frame this pass carries: its slot in the frame buffer, the slot's first beat and the
    /// frame's length in bytes (`ingress`).
    pub handle: Bits<HANDLE_BITS>,
    pub start: Bits<BUF_BITS>,
    pub len: Bits<16>,
    /// Drop code (0: not dropped): the pass does nothing more.
    pub drop: Bits<4>,
    /// A sub-operation dropped and counted while the pass goes on (a duplicate idleAdd on a reply,
    /// an idleRemove of a node not in the list); same codes as `drop`.
    pub sub_drop: Bits<4>,
    // poolCfg.
    pub base: Bits<16>,
    pub cap: Bits<16>,
    pub n: Bits<16>,
    pub link_at: Bits<16>,
    pub unlink_at: Bits<16>,
    pub report_delta: Bits<32>,
    pub repair_gap: Bits<16>,
    pub spine_ok: Bit,
    pub spine_id: Bits<16>,
    pub spine_node: Bits<16>,
    /// The two samples, in `[0, n)` (32 bits wide: the multiply-high leaves them there).
    pub r1: Bits<32>,
    pub r2: Bits<32>,
    /// A node's member slot (control passes).
    pub slot: Bits<16>,
    /// node: the source node's factor.
    pub factor: Bits<32>,
    // idleCtl / idleList / idleIndex.
    pub idle: Bit,
    pub pos: Bits<16>,
    /// The pool's idle-list pointer `p` as `idleCtl` read it (before this pass's change):
    /// `idleList` checks its forwarding on `base + top - 1`, a pop's or a take's position,
    /// without waiting for `pos` (`stages/idle_list.rs`).
    pub top: Bits<16>,
    /// The signal this pass sends (at most one), and whether it re-sends a lost one (§A.3).
    pub repair: Bit,
    pub sig_idle_add: Bit,
    pub sig_idle_remove: Bit,
    pub sig_load_update: Bit,
    /// A removal's outcome (`horus_model::sched::RemoveFinish`; none set = nothing), and the
    /// former top of the list (`last`).
    pub fin_unlock: Bit,
    pub fin_move: Bit,
    pub fin_abort: Bit,
    pub last_node: Bits<16>,
    pub last_f: Bits<32>,
    /// Power of two: sample `a` (then `sel`) and `b` (then `other`): node, factor, load, drift,
    /// corrected queue. Carried into a task's second pass.
    pub a_node: Bits<16>,
    pub a_f: Bits<32>,
    pub a_l: Bits<32>,
    pub a_d: Bits<32>,
    pub a_q: Bits<32>,
    pub b_node: Bits<16>,
    pub b_f: Bits<32>,
    pub b_l: Bits<32>,
    pub b_d: Bits<32>,
    pub b_q: Bits<32>,
    /// `l_other - l_sel` (after stage 8).
    pub diff: Bits<32>,
    /// From `loadList2` to `driftList1`: the samples `a` and `b` are still as drawn and `b` is
    /// `sel` (the smaller load); `driftList1` orders them (`sel` in `a`) and clears it.
    pub swap: Bit,
    /// The node the task goes to, and its factor.
    pub chosen: Bits<16>,
    pub chosen_f: Bits<32>,
    /// A continuation's node from its `conn` entry (set on every pass; meaningful with
    /// `cont_hit`), and whether the entry held: `nodeAddr` takes it as its index and as `chosen`.
    /// Kept apart from `chosen` so that `nodeAddr`'s index picks, late in `conn`'s cycle, between
    /// values ready early in it.
    pub cont_node: Bits<16>,
    pub cont_hit: Bit,
    pub assigned: Bit,
    pub resubmit: Bit,
    /// Leaf: the rack average after this pass (16.16), for a signal.
    pub avg: Bits<32>,
    /// Control, leaf: the rack average's unit for the new worker count (`round(2^32 / n)`,
    /// computed by the host; up to 2^32 for one worker).
    pub unit: Bits<64>,
    /// Control, a removal's first pass: the removed node's queue (load + drift, 16.16).
    pub removed_q: Bits<32>,
    /// Connection-table events, for the counters.
    pub ev_conn_insert: Bit,
    pub ev_conn_collision: Bit,
    pub ev_conn_expired: Bit,
    // nodeAddr: the forwarded header's destination.
    pub fwd: Bit,
    pub egress: Bits<8>,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    pub port: Bits<16>,
    pub out_dst: Bits<16>,
}
