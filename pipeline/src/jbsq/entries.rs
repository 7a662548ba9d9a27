//! The JBSQ leaf's table entries built so far. A table's entry is a `LogicStruct`: its fields are
//! the bits of one memory word. The model's entries (`horus_model::sched::jbsq`) hold the same
//! values.

use rust_hdl::prelude::*;

/// `queueCtl` entry, its held queue (`QueueCtl::{queue_head, depth, max_depth}`): the oldest held
/// task's offset in the pool's region, how many are held, and the most that have been. The token
/// rings' heads and counts, the link flag and the last idle message's time join this word with
/// the token rings' lanes (`docs/jbsq-pipeline.md`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct HeldQueueEntry {
    pub head: Bits<16>,
    pub depth: Bits<16>,
    pub max_depth: Bits<16>,
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
