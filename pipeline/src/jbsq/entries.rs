//! The JBSQ leaf's table entries (`poolAvg`'s joins them with its stage). A table's entry is a
//! `LogicStruct`: its fields are the bits of one memory word. The model's entries
//! (`horus_model::sched::jbsq`) hold the same values.

use rust_hdl::prelude::*;

/// `queueCtl` entry (`QueueCtl`): the held queue (the oldest held task's offset in the pool's
/// region, how many are held, the most that have been), then per level `j` of the token rings
/// whether it holds a token (`n`: its count is not 0, kept beside the count so that a task's
/// pick waits for no compare), its oldest token's offset (`h`), the offset a place returns to
/// (`t`: `h + c` wrapped, kept so that a push's entry waits for no sum) and its count (`c`). The
/// link flag and the last idle message's time are the next stage's, `link`
/// (`docs/jbsq-pipeline.md`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct QueueCtlEntry {
    pub head: Bits<16>,
    pub depth: Bits<16>,
    pub max_depth: Bits<16>,
    pub n0: Bit,
    pub n1: Bit,
    pub n2: Bit,
    pub n3: Bit,
    pub n4: Bit,
    pub n5: Bit,
    pub n6: Bit,
    pub n7: Bit,
    pub h0: Bits<16>,
    pub t0: Bits<16>,
    pub c0: Bits<16>,
    pub h1: Bits<16>,
    pub t1: Bits<16>,
    pub c1: Bits<16>,
    pub h2: Bits<16>,
    pub t2: Bits<16>,
    pub c2: Bits<16>,
    pub h3: Bits<16>,
    pub t3: Bits<16>,
    pub c3: Bits<16>,
    pub h4: Bits<16>,
    pub t4: Bits<16>,
    pub c4: Bits<16>,
    pub h5: Bits<16>,
    pub t5: Bits<16>,
    pub c5: Bits<16>,
    pub h6: Bits<16>,
    pub t6: Bits<16>,
    pub c6: Bits<16>,
    pub h7: Bits<16>,
    pub t7: Bits<16>,
    pub c7: Bits<16>,
    /// Ring `j` is full: a push brought its count to `ring_slots` and no pop has taken one since
    /// (a configured pool's rings start empty; rings of 0 slots are full by the pass's
    /// `ring_slots`). Kept beside the count as `n_j` is, so that a push's check reads a bit and
    /// not a compare on the entry.
    pub f0: Bit,
    pub f1: Bit,
    pub f2: Bit,
    pub f3: Bit,
    pub f4: Bit,
    pub f5: Bit,
    pub f6: Bit,
    pub f7: Bit,
}

/// `link` entry (`LinkEntry`): the pool's side of the spine's idle list (the link flag, when the
/// leaf last sent an idle message) and the pool's free places, all levels together (`places`:
/// the sum of `queueCtl`'s counts, which a pass moves by at most one, kept so that the link rule
/// needs no sum over eight counts; up to 65,536, the ring table's entries).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct LinkEntry {
    pub linked: Bit,
    pub signaled: Bits<32>,
    pub places: Bits<17>,
}

/// `ring` entry: a token, one free place at a worker (`Token`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct TokenEntry {
    pub node: Bits<16>,
    pub generation: Bits<8>,
}

/// `outstanding` entry (`OutstandingEntry`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct OutstandingEntry {
    pub active: Bit,
    pub generation: Bits<8>,
    pub tasks: Bits<16>,
}

/// `taskBuf` entry: a held task's descriptor (`HeldTask`: the header, the frame's length, its
/// arrival time), but for the header's `dst_id` and `qlen`, which a release rewrites (the worker,
/// 0). The frame's bytes sit in the frame store beside it, at the same slot
/// (`docs/jbsq-pipeline.md`, "The task buffer").
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct HeldTaskEntry {
    pub pkt_type: Bits<7>,
    pub more: Bit,
    pub pool: Bits<16>,
    pub src: Bits<16>,
    pub seq: Bits<16>,
    pub len: Bits<16>,
    pub time: Bits<32>,
}

/// `nodeCfg` entry (`NodeCfgEntry`): the node is active, in pool `pool`, of generation
/// `generation` (bumped by a removal), with bound `k` (1 to 255, 16 bits wide as the counts it is
/// compared with: the descriptor's `k`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct NodeCfgEntry {
    pub active: Bit,
    pub pool: Bits<16>,
    pub generation: Bits<8>,
    pub k: Bits<16>,
}

/// `poolCfg` entry (`PoolCfgEntry`): the pool is configured (`valid`), its configuration
/// (`JbsqPool`: its regions of node slots, token rings and task buffer, `k`, its fallback, what
/// it advertises, `hold_us`, the signal parameters, the spine), its member count `n` and whether
/// it holds tasks (`holds`, decision 37). The fields are the descriptor's of the same names
/// (`JbsqPhv`; `k` is its `pool_k`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PoolCfgEntry {
    pub valid: Bit,
    pub base: Bits<16>,
    pub cap: Bits<16>,
    pub n: Bits<16>,
    pub k: Bits<16>,
    pub ring_base: Bits<16>,
    pub ring_slots: Bits<16>,
    pub queue_base: Bits<16>,
    pub queue_slots: Bits<16>,
    pub drop_full: Bit,
    pub adv_places: Bit,
    pub adv_queue: Bit,
    pub room: Bits<16>,
    pub hold_us: Bits<16>,
    pub link_at: Bits<16>,
    pub unlink_at: Bits<16>,
    pub report_delta: Bits<32>,
    pub repair_gap: Bits<16>,
    pub spine_ok: Bit,
    pub spine_id: Bits<16>,
    pub spine_node: Bits<16>,
    pub holds: Bit,
}
