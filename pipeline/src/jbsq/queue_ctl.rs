//! `queueCtl[pool]`, its held queue: the pool's FIFO of held tasks in its region of the task
//! buffer (`docs/algorithm.md`, decisions 24 and 25). The region is a ring: its oldest task at
//! offset `head`, `depth` tasks from there, wrapping at `queue_slots`.
//!
//! - A task that took no token (`token`, the token rings' lanes of this stage) and can be held
//!   (one packet, at most a slot's bytes) is held at offset `head + depth` while the region has
//!   room; otherwise it is counted `buf_full` and goes over a bound or is dropped (the
//!   `members` and `outstanding` stages, by the pool's fallback).
//! - A reply, or a reply's second pass that returns a place, releases the oldest held task
//!   (offset `head`) to its worker when the pool holds one.
//! - Configuring a pool starts its queue afresh.
//!
//! The held queue's new depth and greatest depth go on with the pass (`Placement::Held`, the
//! `max_depth` counter). The token rings' lanes (eight heads and counts, the priority encoder
//! that sets `token`) and the link rule join this stage's word and logic with them
//! (`docs/jbsq-pipeline.md`); until then the pass carries `token`.

use super::JbsqPort;
use super::entries::HeldQueueEntry;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// `queueCtl` for `2^P` pools.
#[derive(LogicBlock)]
pub struct QueueCtlStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its pool (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) ctl_table: RmwTable<HeldQueueEntry, P>,
    out: DFF<JbsqPhv>,
    e: Signal<Local, HeldQueueEntry>,
    w: Signal<Local, HeldQueueEntry>,
    active: Signal<Local, Bit>,
    holdable: Signal<Local, Bit>,
    wants_hold: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    hold: Signal<Local, Bit>,
    releases: Signal<Local, Bit>,
    /// `head + depth`, and that offset wrapped into the region: where a held task goes.
    tail_sum: Signal<Local, Bits<16>>,
    tail: Signal<Local, Bits<16>>,
    /// `head + 1`, wrapped: the head after a release.
    head_inc: Signal<Local, Bits<16>>,
    head_next: Signal<Local, Bits<16>>,
    depth_inc: Signal<Local, Bits<16>>,
    /// The largest task a slot holds, in bytes.
    slot_bytes: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    no_off: Constant<Bits<P>>,
    fresh: Constant<HeldQueueEntry>,
}

impl<const P: usize> QueueCtlStage<P> {
    /// The stage for tasks of up to `sizes.slot_bytes` bytes.
    pub fn new(sizes: JbsqSizes) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            ctl_table: Default::default(),
            out: Default::default(),
            e: Default::default(),
            w: Default::default(),
            active: Default::default(),
            holdable: Default::default(),
            wants_hold: Default::default(),
            room: Default::default(),
            hold: Default::default(),
            releases: Default::default(),
            tail_sum: Default::default(),
            tail: Default::default(),
            head_inc: Default::default(),
            head_next: Default::default(),
            depth_inc: Default::default(),
            slot_bytes: Constant::new(u64::from(sizes.slot_bytes).into()),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            no_off: Constant::new(0.into()),
            fresh: Constant::new(HeldQueueEntry::default()),
        }
    }
}

impl<const P: usize> Default for QueueCtlStage<P> {
    fn default() -> Self {
        Self::new(JbsqSizes::DEFAULT)
    }
}

impl<const P: usize> Logic for QueueCtlStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, ctl_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's pool (`early`); pool IDs beyond the table were dropped by
        // `poolCfg`.
        self.ctl_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        self.ctl_table.rd_off.next = self.no_off.val();
        self.ctl_table.rd_indexed.next = false;
        self.ctl_table.rd_index.next = self.no_off.val();
        self.ctl_table.rd_same.next = false;
        self.ctl_table.wr_addr.next = self.port.up.pass.val().pool.get_bits::<P>(0);
        // The pass in the stage: its entry, the decision, the new entry.
        self.e.next = self.ctl_table.rd_data.val();
        self.w.next = self.ctl_table.rd_data.val();
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        // Decision 28: one packet, and at most a slot's bytes.
        self.holdable.next =
            !self.port.up.pass.val().more & (self.port.up.pass.val().len <= self.slot_bytes.val());
        self.wants_hold.next = self.active.val()
            & self.port.up.pass.val().is_task
            & !self.port.up.pass.val().token
            & self.holdable.val();
        self.room.next = self.e.val().depth < self.port.up.pass.val().queue_slots;
        self.hold.next = self.wants_hold.val() & self.room.val();
        self.releases.next = self.active.val()
            & (self.port.up.pass.val().is_reply | self.port.up.pass.val().is_return)
            & (self.e.val().depth != self.zero.val());
        // Offsets stay below `queue_slots` (at most 32,768, so the sums fit in 16 bits).
        self.tail_sum.next = self.e.val().head + self.e.val().depth;
        self.tail.next = self.tail_sum.val();
        if self.tail_sum.val() >= self.port.up.pass.val().queue_slots {
            self.tail.next = self.tail_sum.val() - self.port.up.pass.val().queue_slots;
        }
        self.head_inc.next = self.e.val().head + self.one.val();
        self.head_next.next = self.head_inc.val();
        if self.head_inc.val() >= self.port.up.pass.val().queue_slots {
            self.head_next.next = self.zero.val();
        }
        self.depth_inc.next = self.e.val().depth + self.one.val();
        if self.hold.val() {
            self.w.next.depth = self.depth_inc.val();
            if self.depth_inc.val() > self.e.val().max_depth {
                self.w.next.max_depth = self.depth_inc.val();
            }
        }
        if self.releases.val() {
            self.w.next.head = self.head_next.val();
            self.w.next.depth = self.e.val().depth - self.one.val();
        }
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next = self.fresh.val();
        }
        self.ctl_table.wr_en.next =
            self.hold.val() | self.releases.val() | self.port.up.pass.val().is_ctl_pool;
        self.ctl_table.wr_data.next = self.w.val();
        self.out.d.next = self.port.up.pass.val();
        self.out.d.next.held = self.hold.val();
        self.out.d.next.release = self.releases.val();
        self.out.d.next.buf_full = self.wants_hold.val() & !self.room.val();
        self.out.d.next.at = self.e.val().head;
        if self.hold.val() {
            self.out.d.next.at = self.tail.val();
        }
        self.out.d.next.depth = self.w.val().depth;
        self.out.d.next.max_depth = self.w.val().max_depth;
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
