//! The JBSQ leaf's pass descriptor: what a pass carries from stage to stage
//! (`docs/jbsq-pipeline.md`, "What a pass carries"), the fields of every table stage.
//!
//! Field names follow `horus_model::sched::jbsq`. What a pass does is a set of one-hot flags, as
//! in the paper leaf's descriptor ([`crate::phv`]), for the same reason: no operation constants
//! in the stages.

use crate::phv::{BUF_BITS, HANDLE_BITS};
use rust_hdl::prelude::*;

/// The pass descriptor of the JBSQ leaf.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JbsqPhv {
    /// A pass occupies this slot (0: a bubble, which changes nothing).
    pub live: Bit,
    /// A NEW_TASK: its first pass, or its retry after a removed node's token.
    pub is_task: Bit,
    /// A task's retry (with `is_task`): it draws no sample (`poolCfg`).
    pub is_retry: Bit,
    /// A TASK_DONE or TASK_DONE_IDLE (`src` the replying worker).
    pub is_reply: Bit,
    /// A reply's second pass: its place goes back to a ring, or to a task held meanwhile
    /// (`src` the worker).
    pub is_return: Bit,
    /// A TASK_CONTINUATION: to the node its task's first packet went to (`conn`, decision 34).
    pub is_cont: Bit,
    /// Decode (the leaf's core): a frame that is not Horus's, passed through unchanged; a
    /// control frame (KEEP_ALIVE, WORKER_ID, WORKER_ID_ACK, REMOVE_ACK) to the control port; a
    /// Horus type the leaf does not schedule (`not_scheduled`); a frame the parser rejected
    /// (`is_malformed`, `is_bad_sum`). None of them reaches a table (`drop` set but for the first
    /// two, which no stage acts on).
    pub is_pass_through: Bit,
    pub is_to_control: Bit,
    pub is_other: Bit,
    pub is_malformed: Bit,
    pub is_bad_sum: Bit,
    /// The pass's frame: its frame-buffer slot and first beat (a second pass keeps its first
    /// pass's; a control pass has none).
    pub handle: Bits<HANDLE_BITS>,
    pub start: Bits<BUF_BITS>,
    /// Control: configure a pool; its `queueCtl` entry starts afresh.
    pub is_ctl_pool: Bit,
    /// Control: add the node `src` (generation `generation`, `tasks` outstanding).
    pub is_ctl_add: Bit,
    /// Control: remove the node `src` (its member slot `slot`, the pool's last member `last`).
    pub is_ctl_remove: Bit,
    /// Control: the host's read before a removal of the node `src`: its member slot
    /// (`memberSlot`, into `slot`) and the pool's last member (`members` at `base + n - 1`, into
    /// `last`), which the removal's pass then carries. It writes nothing.
    pub is_ctl_read: Bit,
    /// An earlier stage ended the pass's work: an unknown pool or a pool with no member
    /// (`poolCfg`), a reply or a returned place from a node that is not an active node of the
    /// pool, of the place's generation (`nodeCfg`). A dropped reply is still forwarded.
    pub drop: Bit,
    // The Horus header, the frame's length and its arrival time.
    pub pkt_type: Bits<7>,
    pub more: Bit,
    pub pool: Bits<16>,
    pub src: Bits<16>,
    pub dst: Bits<16>,
    pub qlen: Bits<16>,
    pub seq: Bits<16>,
    pub len: Bits<16>,
    /// Arrival time, microseconds, wrapping.
    pub time: Bits<32>,
    // poolCfg: the pool's configuration (a configure pass carries the new one in the same
    // fields). Its region of node slots, `[base, base + cap)`, and its members, `n`.
    pub base: Bits<16>,
    pub cap: Bits<16>,
    pub n: Bits<16>,
    /// poolCfg: the pass's pool is configured (a pass of another pool is dropped: the
    /// `unknown_pool` counter; a task of a configured pool with no member too: `dropped`).
    pub pool_ok: Bit,
    /// poolCfg: what the pool advertises (decisions 27 and 32): idle workers (neither bit), free
    /// places (`adv_places`), or its queue (`adv_queue`, linked below `room` held tasks; `room`
    /// 0 is free places).
    pub adv_places: Bit,
    pub adv_queue: Bit,
    pub room: Bits<16>,
    /// poolCfg: the link's hold after an idle message, microseconds (decision 31).
    pub hold_us: Bits<16>,
    /// poolCfg: the signal parameters (link and unlink thresholds, report delta in 16.16, repair
    /// gap in microseconds) and the spine (`spine_ok`: the pool has one; its ID and this leaf's
    /// node ID there).
    pub link_at: Bits<16>,
    pub unlink_at: Bits<16>,
    pub report_delta: Bits<32>,
    pub repair_gap: Bits<16>,
    pub spine_ok: Bit,
    pub spine_id: Bits<16>,
    pub spine_node: Bits<16>,
    /// poolCfg: a task's first pass's sample 1 in `[0, n)` (the generator's step, its low 32
    /// bits scaled by `n`; 0 on a retry): the fallback's member, `members[base + r1]`.
    pub r1: Bits<16>,
    /// A member slot: an added node's (`poolCfg`: `n` before it), a removed node's (the host's
    /// read of `memberSlot`, as the model's); `last` the pool's last member, which a removal
    /// moves into the freed slot (the host's read of `members`).
    pub slot: Bits<16>,
    pub last: Bits<16>,
    // poolCfg: the pool's region of the task buffer, `[queue_base, queue_base + queue_slots)`.
    pub queue_base: Bits<16>,
    pub queue_slots: Bits<16>,
    /// poolCfg: the pool drops a task that finds its region full (`Fallback::Drop`), rather than
    /// sending it over a bound.
    pub drop_full: Bit,
    /// poolCfg: the pool's token rings start at `ring_base` of the ring table, `ring_slots`
    /// entries a level.
    pub ring_base: Bits<16>,
    pub ring_slots: Bits<16>,
    /// Control: put a free place of the node `src` (generation `generation`) into the ring of
    /// level `level`.
    pub is_ctl_place: Bit,
    /// Control: set the bound of the node `src` to `k` (decision 36): its generation one up
    /// (`nodeCfg`, which hands it on; `outstanding` takes it), its count kept. Its places follow,
    /// one `is_ctl_place` each.
    pub is_ctl_bound: Bit,
    /// Control: set the pool's settings (`poolCfg`): its bound `pool_k` (a later added node's
    /// unless it has its own), `hold_us` and the signal parameters.
    pub is_ctl_pool_params: Bit,
    /// Control: move the pool's region of the task buffer to `queue_base`, `queue_slots`
    /// (`poolCfg`, which holds again) and start its held queue afresh (`queueCtl`; what it
    /// still holds is discarded and counted, decision 37).
    pub is_ctl_move: Bit,
    /// Control, the pool's settings: whether the pool holds tasks (decision 37: not while its
    /// buffer region moves).
    pub holds: Bit,
    /// poolCfg: the held tasks the pool may have, `queue_slots` while it holds, else 0: a task
    /// with no place is held below it (`queueCtl`).
    pub hold_slots: Bits<16>,
    /// The ring a place returns to (a reply's second pass, a control pass), or the ring a task's
    /// token came from (`queueCtl`).
    pub level: Bits<3>,
    /// nodeCfg: the node's generation (a reply's, an added node's, a removed node's new one; a
    /// returned place carries it from its first pass and `nodeCfg` checks it).
    pub generation: Bits<8>,
    /// nodeCfg: the node's bound (1 to 255; 16 bits wide, as the counts it is compared with): a
    /// reply's, or an added node's, whose control pass carries its own bound here or 0 for the
    /// pool's (`pool_k`).
    pub k: Bits<16>,
    /// poolCfg: the pool's bound, an added node's unless it has its own.
    pub pool_k: Bits<16>,
    /// Control, an added node: its tasks outstanding at the start.
    pub tasks: Bits<16>,
    /// queueCtl, its token rings: the task took a free place (a token), so it is not held.
    pub token: Bit,
    /// queueCtl: the place found its ring full and is dropped (`token_overflow`).
    pub overflow: Bit,
    /// queueCtl, its token rings: the pass takes the token (`pop`) or puts one (`push`) at
    /// `ring_at` of the pool's rings (`level · ring_slots + offset`).
    pub pop: Bit,
    pub push: Bit,
    pub ring_at: Bits<16>,
    /// ring: the token a pop took, its node and generation (`outstanding` checks it).
    pub tok_node: Bits<16>,
    pub tok_gen: Bits<8>,
    /// queueCtl: the task goes over a bound (no token, not held), to `fb_node` (`members`), or is
    /// dropped (`dropped`: its region full and the pool's fallback `Drop`; it takes no node).
    pub fallback: Bit,
    pub dropped: Bit,
    pub fb_node: Bits<16>,
    /// outstanding: the token popped is a removed node's (the task retries).
    pub stale: Bit,
    /// outstanding, a reply: the worker's tasks left after it, and whether its freed place
    /// returns to a ring in a second pass (nothing released, fewer than `k` left).
    pub left: Bits<16>,
    pub returns: Bit,
    /// outstanding, a reply: the worker was counted at 0 (decision 33: no place returns; the
    /// `replies_spurious` counter).
    pub spurious: Bit,
    /// outstanding, a removal: the node's tasks lost with it.
    pub lost: Bits<16>,
    // queueCtl, its held queue.
    /// The task is held, at offset `at` of its pool's region.
    pub held: Bit,
    /// The pool's oldest held task, at offset `at`, goes to the worker `src`.
    pub release: Bit,
    /// The task could be held but its pool's region is full (`buffer_full`).
    pub buf_full: Bit,
    /// queueCtl: the pool's held tasks before the pass; what a configure pass's fresh start
    /// discards (decision 30; the `discarded` counter, which reads it of configure passes only).
    pub discarded: Bits<16>,
    /// The offset in the pool's region of the slot the pass holds or releases.
    pub at: Bits<16>,
    /// The pool's held queue after the pass: its depth and greatest depth.
    pub depth: Bits<16>,
    pub max_depth: Bits<16>,
    /// queueCtl: the tokens of level 0 after the pass (the idle workers, for the link rule).
    pub idle: Bits<16>,
    /// link: the pass tells the spine the rack is idle (`idle_add`: IDLE_SIGNAL) or not
    /// (`idle_remove`: IDLE_REMOVE); `repair` when it re-sends what the spine's flag shows was
    /// lost (the `idle_repairs` counter).
    pub idle_add: Bit,
    pub idle_remove: Bit,
    pub repair: Bit,
    /// Control, an added or removed node: the pool's new `unit`, `round(2^32 / n)` for its new
    /// member count `n` (0 for none), worked out by the host (`RackAverage::unit_for`), for
    /// `poolAvg`'s rescale.
    pub unit: Bits<33>,
    /// poolAvg: the pass sends a load report (QUEUE_SIGNAL; the `sent_load_update` counter).
    pub load_update: Bit,
    /// poolAvg: the message the pass sends (an idle message of `link`'s, or a load report), its
    /// header as the model's `signal_header` builds it: its type, and the pool's average after
    /// the pass (16.16, saturating) in `qlen` (integer part) and `seq` (fraction); its pool is
    /// `pool`, its source `spine_node`, its destination `spine_id`.
    pub sig_pkt_type: Bits<7>,
    pub sig_qlen: Bits<16>,
    pub sig_seq: Bits<16>,
    /// taskBuf: the released task, on its way to the worker `src` (`rel_dst` the worker's node
    /// ID, `qlen` 0; the frame's `dst_id` is the worker's address's, `out_dst` of `nodeAddr`: the
    /// model's `to_worker`).
    pub rel_pkt_type: Bits<7>,
    pub rel_more: Bit,
    pub rel_pool: Bits<16>,
    pub rel_src: Bits<16>,
    pub rel_dst: Bits<16>,
    pub rel_qlen: Bits<16>,
    pub rel_seq: Bits<16>,
    pub rel_len: Bits<16>,
    pub rel_time: Bits<32>,
    /// poolCfg, every pass: the low 16 bits of the task's `conn` hash
    /// (`horus_model::sched::conn_hash(pool, seq)`), the index `conn` reads a clock ahead.
    pub conn_slot: Bits<16>,
    /// conn: a continuation found its task's live entry (`cont_hit`), whose node is `cont_node`
    /// (`nodeAddr` reads that node's address); no entry, another task's or an expired one is a
    /// miss (`continuation_miss`, unless the pass was dropped before).
    pub cont_hit: Bit,
    pub cont_node: Bits<16>,
    /// conn: a multi-packet task's first pass wrote its entry (`conn_inserts`), found another
    /// task's live entry and wrote nothing (`conn_collisions`), or the pass found an expired
    /// entry and replaced or freed it (`conn_expired`).
    pub conn_insert: Bit,
    pub conn_collision: Bit,
    pub conn_expired: Bit,
    /// nodeAddr (decision 34): where the pass's task goes (a task placed, a released task): the
    /// node's MAC, IPv4 address, UDP port, egress port and the `dst_id` its header carries, and
    /// `addr_ok` when the pass forwards a task there; an addition's pass carries the added
    /// node's in the same fields (the host's).
    pub addr_ok: Bit,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    pub udp: Bits<16>,
    pub egress: Bits<8>,
    pub out_dst: Bits<16>,
}
