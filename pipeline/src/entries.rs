//! The entry types of the scheduler's tables, in stage order (the idle list and the two member
//! copies share one; the load and drift lists hold a plain `Bits<32>`). A table's entry is a `LogicStruct`: its fields are the
//! bits of one memory word. The model's entries (`horus_model::sched`) hold the same values;
//! `readback` encodes those into these for the co-simulation's comparisons.

use crate::arith::Wide;
use rust_hdl::prelude::*;

/// `poolCfg` entry.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PoolCfgEntry {
    pub valid: Bit,
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
}

/// `node` entry.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct NodeEntry {
    pub active: Bit,
    pub pool: Bits<16>,
    pub slot: Bits<16>,
    pub factor: Bits<32>,
}

/// `idleCtl` entry.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct IdleCtlEntry {
    pub p: Bits<16>,
    pub locked: Bit,
    pub linked: Bit,
    /// Arrival time (us) of the packet whose pass sent the pool's last idle message.
    pub signaled: Bits<32>,
    /// Spine: the next idle-path task goes to position `turn - 1` (counted from 1, within
    /// `1..=max(p, 1)` once configured).
    pub turn: Bits<16>,
}

/// `idleList` and `members` entry: a node and its factor.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct NodeRefEntry {
    pub node: Bits<16>,
    pub factor: Bits<32>,
}

/// `idleIndex` entry: absent when neither flag is set.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct IdleIndexEntry {
    pub pending: Bit,
    pub member: Bit,
    pub pos: Bits<16>,
}

/// `poolAvg` entry: the accumulator (32.32), what one task adds (`round(2^32 / workers)`, up to
/// 2^32), the tasks it counts, and the unsaturated average (16.16, 48 bits: `acc >> 16`) the last
/// load report was decided on; two flags
/// kept with the count, `busy` (`tasks > 0`) and `full` (`tasks == 2^32 - 1`), so that whether a
/// task more or less changes the entry is a bit of the entry, not a compare in the loop; and the
/// report rule's two margins, so that each check is one two-term add on the entry.
///
/// The margins ([`WIDE`](crate::arith::WIDE)-bit two's complement, `delta` the pool's `report_delta`,
/// `own = acc - spine_tasks * unit` the accumulator less the tasks from the pool's spine since the
/// last report, which the spine's view holds already: `docs/algorithm.md`, decision 19):
/// - `up_margin = own - (reported + delta) * 2^16`;
/// - `down_margin = own - (reported - delta + 1) * 2^16`.
///
/// A load report is due after a change when the new up margin is at or above zero or the down
/// margin below zero. A task more or less adds or subtracts `unit` to the accumulator and the
/// margins, except that a task from the spine leaves the margins; a report, a rescale, a change
/// of `report_delta` and a configuration set them anew. The entry keeps no count of the spine's
/// tasks: the margins are all the rule needs of it. `own` is below 2^64 (`acc` is) and above
/// -2^64 (the down margin reports within a few completions of the threshold, each at most
/// `unit <= 2^32` lower), so the margins fit their 66 bits. `unit_dec` is
/// a copy of `unit` (`stages/pool_avg.rs` says why, in its notes on depth).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PoolAvgEntry {
    pub acc: Bits<64>,
    pub unit: Bits<33>,
    pub tasks: Bits<32>,
    pub reported: Bits<48>,
    pub busy: Bit,
    pub full: Bit,
    pub up_margin: Wide,
    pub down_margin: Wide,
    /// `unit` again, for one task less (written with `unit`).
    pub unit_dec: Bits<33>,
}

/// The margins of an entry (`PoolAvgEntry`) whose accumulator less the spine's tasks is `own`,
/// with last report `reported` and `report_delta` `delta`: `(up_margin, down_margin)`. The
/// read-back's encoding of the model's entry, and the tests', use this definition; the stage
/// keeps it with adds alone.
pub fn margins(own: i128, reported: u64, delta: u32) -> (Wide, Wide) {
    let (up, down) = horus_regs::readback::margins(own, reported, delta);
    (wide(up), wide(down))
}

/// A [`WIDE`](crate::arith::WIDE)-bit two's-complement value given in the low bits of `u`.
fn wide(u: u128) -> Wide {
    (Wide::from((u >> 64) as u64 & 3) << 64) | Wide::from(u as u64)
}

/// `conn` entry.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct ConnEntry {
    pub valid: Bit,
    pub pool: Bits<16>,
    pub seq: Bits<16>,
    pub node: Bits<16>,
    /// Time of insertion, microseconds, wrapping.
    pub stamp: Bits<32>,
}

/// `nodeAddr` entry: the node's address and the pool it was added to.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct AddrEntry {
    pub valid: Bit,
    pub pool: Bits<16>,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    /// UDP port.
    pub port: Bits<16>,
    /// Egress port.
    pub egress: Bits<8>,
    /// Written into the header's `dst_id`: the worker ID (leaf) or the rack's leaf ID (spine).
    pub dst_id: Bits<16>,
}
