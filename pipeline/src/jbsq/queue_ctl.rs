//! `queueCtl[pool]`: the pool's token rings and its held queue, which decide together
//! (`docs/algorithm.md`, decisions 23 to 25; `docs/jbsq-pipeline.md`).
//!
//! The token rings, one per level `j` (eight): each a ring of `ring_slots` entries of the `ring`
//! table, its oldest token at offset `h`, the next free entry at `t`, `c` tokens, and a bit `n`
//! that says it holds one.
//!
//! - A task takes the oldest token of the lowest level that holds one (`pop`, at `ring_at` =
//!   `j · ring_slots + h`, its `level`): the least loaded worker under its bound.
//! - A reply's second pass with nothing held, or a control pass for an added node's place,
//!   puts the place into the ring of its `level` (`push`, at `j · ring_slots + t`); a full ring
//!   drops it (`overflow`, the `token_overflow` counter).
//!
//! The held queue, the pool's FIFO in its region of the task buffer: its oldest task at offset
//! `head`, `depth` tasks from there, wrapping at `queue_slots`.
//!
//! - A task that took no token and can be held (one packet, at most a slot's bytes) is held at
//!   offset `head + depth` while the region has room; otherwise it is counted `buf_full` and,
//!   by the pool's fallback, goes over a bound (`fallback`: the sampled node of `members`) or is
//!   dropped (`dropped`). A task that cannot be held always goes over a bound.
//! - A reply, or a reply's second pass that returns a place, releases the oldest held task
//!   (offset `head`) to its worker when the pool holds one (then the place is not pushed).
//! - Configuring a pool starts its rings and queue afresh.
//!
//! The held queue's new depth and greatest depth go on with the pass (`Placement::Held`, the
//! `max_depth` counter). Depth: the entry keeps `n`, `t` and `f` (full) beside the counts so
//! that neither a task's pick, nor a push's entry, nor a push's check for room waits for a sum
//! or a compare on the entry (6 LUT levels at 64 pools). The link rule, on the counts and depth
//! this stage leaves, is the next stage's (`link`; `docs/jbsq-pipeline.md`).

use super::JbsqPort;
use super::entries::QueueCtlEntry;
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
    pub(super) ctl_table: RmwTable<QueueCtlEntry, P>,
    out: DFF<JbsqPhv>,
    e: Signal<Local, QueueCtlEntry>,
    w: Signal<Local, QueueCtlEntry>,
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
    // The token rings' lanes, one per level `j`: the head after a pop and the tail after a push
    // (wrapped), the level's offset `j · ring_slots` in the pool's rings; whether a
    // pop takes level `j` (the lowest that holds a token) and whether a push names it.
    token: Signal<Local, Bit>,
    /// A task with no place and not held, and one of those dropped.
    no_place: Signal<Local, Bit>,
    full_drop: Signal<Local, Bit>,
    pushing: Signal<Local, Bit>,
    push_full: Signal<Local, Bit>,
    push_ok: Signal<Local, Bit>,
    /// `ring_slots - 1` (a push that fills its ring finds this count) and `ring_slots == 0`
    /// (rings that hold nothing), from the pass alone.
    slots_m1: Signal<Local, Bits<16>>,
    slots_zero: Signal<Local, Bit>,
    two: Constant<Bits<16>>,
    three: Constant<Bits<16>>,
    h_inc0: Signal<Local, Bits<16>>,
    t_inc0: Signal<Local, Bits<16>>,
    off0: Signal<Local, Bits<16>>,
    sel0: Signal<Local, Bit>,
    lane0: Signal<Local, Bit>,
    l0: Constant<Bits<3>>,
    h_inc1: Signal<Local, Bits<16>>,
    t_inc1: Signal<Local, Bits<16>>,
    off1: Signal<Local, Bits<16>>,
    sel1: Signal<Local, Bit>,
    lane1: Signal<Local, Bit>,
    l1: Constant<Bits<3>>,
    h_inc2: Signal<Local, Bits<16>>,
    t_inc2: Signal<Local, Bits<16>>,
    off2: Signal<Local, Bits<16>>,
    sel2: Signal<Local, Bit>,
    lane2: Signal<Local, Bit>,
    l2: Constant<Bits<3>>,
    h_inc3: Signal<Local, Bits<16>>,
    t_inc3: Signal<Local, Bits<16>>,
    off3: Signal<Local, Bits<16>>,
    sel3: Signal<Local, Bit>,
    lane3: Signal<Local, Bit>,
    l3: Constant<Bits<3>>,
    h_inc4: Signal<Local, Bits<16>>,
    t_inc4: Signal<Local, Bits<16>>,
    off4: Signal<Local, Bits<16>>,
    sel4: Signal<Local, Bit>,
    lane4: Signal<Local, Bit>,
    l4: Constant<Bits<3>>,
    h_inc5: Signal<Local, Bits<16>>,
    t_inc5: Signal<Local, Bits<16>>,
    off5: Signal<Local, Bits<16>>,
    sel5: Signal<Local, Bit>,
    lane5: Signal<Local, Bit>,
    l5: Constant<Bits<3>>,
    h_inc6: Signal<Local, Bits<16>>,
    t_inc6: Signal<Local, Bits<16>>,
    off6: Signal<Local, Bits<16>>,
    sel6: Signal<Local, Bit>,
    lane6: Signal<Local, Bit>,
    l6: Constant<Bits<3>>,
    h_inc7: Signal<Local, Bits<16>>,
    t_inc7: Signal<Local, Bits<16>>,
    off7: Signal<Local, Bits<16>>,
    sel7: Signal<Local, Bit>,
    lane7: Signal<Local, Bit>,
    l7: Constant<Bits<3>>,
    /// The largest task a slot holds, in bytes.
    slot_bytes: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    no_off: Constant<Bits<P>>,
    fresh: Constant<QueueCtlEntry>,
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
            token: Default::default(),
            no_place: Default::default(),
            full_drop: Default::default(),
            pushing: Default::default(),
            push_full: Default::default(),
            push_ok: Default::default(),
            slots_m1: Default::default(),
            slots_zero: Default::default(),
            two: Constant::new(2.into()),
            three: Constant::new(3.into()),
            h_inc0: Default::default(),
            t_inc0: Default::default(),
            off0: Default::default(),
            sel0: Default::default(),
            lane0: Default::default(),
            l0: Constant::new(0.into()),
            h_inc1: Default::default(),
            t_inc1: Default::default(),
            off1: Default::default(),
            sel1: Default::default(),
            lane1: Default::default(),
            l1: Constant::new(1.into()),
            h_inc2: Default::default(),
            t_inc2: Default::default(),
            off2: Default::default(),
            sel2: Default::default(),
            lane2: Default::default(),
            l2: Constant::new(2.into()),
            h_inc3: Default::default(),
            t_inc3: Default::default(),
            off3: Default::default(),
            sel3: Default::default(),
            lane3: Default::default(),
            l3: Constant::new(3.into()),
            h_inc4: Default::default(),
            t_inc4: Default::default(),
            off4: Default::default(),
            sel4: Default::default(),
            lane4: Default::default(),
            l4: Constant::new(4.into()),
            h_inc5: Default::default(),
            t_inc5: Default::default(),
            off5: Default::default(),
            sel5: Default::default(),
            lane5: Default::default(),
            l5: Constant::new(5.into()),
            h_inc6: Default::default(),
            t_inc6: Default::default(),
            off6: Default::default(),
            sel6: Default::default(),
            lane6: Default::default(),
            l6: Constant::new(6.into()),
            h_inc7: Default::default(),
            t_inc7: Default::default(),
            off7: Default::default(),
            sel7: Default::default(),
            lane7: Default::default(),
            l7: Constant::new(7.into()),
            slot_bytes: Constant::new(u64::from(sizes.slot_bytes).into()),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            no_off: Constant::new(0.into()),
            fresh: Constant::new(QueueCtlEntry::default()),
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
        // The token rings: each level's offset, `j · ring_slots`, from the pass's registered
        // `ring_slots` (shifts and one add each, beside the table read).
        self.off0.next = self.zero.val();
        self.off1.next = self.port.up.pass.val().ring_slots;
        self.off2.next = self.port.up.pass.val().ring_slots << self.one.val();
        self.off3.next = self.off1.val() + self.off2.val();
        self.off4.next = self.port.up.pass.val().ring_slots << self.two.val();
        self.off5.next = self.off1.val() + self.off4.val();
        self.off6.next = self.off2.val() + self.off4.val();
        self.off7.next = (self.port.up.pass.val().ring_slots << self.three.val()) - self.off1.val();
        // A task takes the oldest token of the lowest level that holds one (decision 23): the
        // entry keeps a bit per level for "holds a token", so the pick waits for no count.
        self.token.next = self.e.val().n0
            | self.e.val().n1
            | self.e.val().n2
            | self.e.val().n3
            | self.e.val().n4
            | self.e.val().n5
            | self.e.val().n6
            | self.e.val().n7;
        self.sel0.next = self.e.val().n0;
        self.sel1.next = self.e.val().n1 & !self.e.val().n0;
        self.sel2.next = self.e.val().n2 & !self.e.val().n0 & !self.e.val().n1;
        self.sel3.next = self.e.val().n3 & !self.e.val().n0 & !self.e.val().n1 & !self.e.val().n2;
        self.sel4.next = self.e.val().n4
            & !self.e.val().n0
            & !self.e.val().n1
            & !self.e.val().n2
            & !self.e.val().n3;
        self.sel5.next = self.e.val().n5
            & !self.e.val().n0
            & !self.e.val().n1
            & !self.e.val().n2
            & !self.e.val().n3
            & !self.e.val().n4;
        self.sel6.next = self.e.val().n6
            & !self.e.val().n0
            & !self.e.val().n1
            & !self.e.val().n2
            & !self.e.val().n3
            & !self.e.val().n4
            & !self.e.val().n5;
        self.sel7.next = self.e.val().n7
            & !self.e.val().n0
            & !self.e.val().n1
            & !self.e.val().n2
            & !self.e.val().n3
            & !self.e.val().n4
            & !self.e.val().n5
            & !self.e.val().n6;
        self.h_inc0.next = self.e.val().h0 + self.one.val();
        if self.h_inc0.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc0.next = self.zero.val();
        }
        self.t_inc0.next = self.e.val().t0 + self.one.val();
        if self.t_inc0.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc0.next = self.zero.val();
        }
        self.lane0.next = self.port.up.pass.val().level == self.l0.val();
        self.h_inc1.next = self.e.val().h1 + self.one.val();
        if self.h_inc1.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc1.next = self.zero.val();
        }
        self.t_inc1.next = self.e.val().t1 + self.one.val();
        if self.t_inc1.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc1.next = self.zero.val();
        }
        self.lane1.next = self.port.up.pass.val().level == self.l1.val();
        self.h_inc2.next = self.e.val().h2 + self.one.val();
        if self.h_inc2.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc2.next = self.zero.val();
        }
        self.t_inc2.next = self.e.val().t2 + self.one.val();
        if self.t_inc2.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc2.next = self.zero.val();
        }
        self.lane2.next = self.port.up.pass.val().level == self.l2.val();
        self.h_inc3.next = self.e.val().h3 + self.one.val();
        if self.h_inc3.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc3.next = self.zero.val();
        }
        self.t_inc3.next = self.e.val().t3 + self.one.val();
        if self.t_inc3.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc3.next = self.zero.val();
        }
        self.lane3.next = self.port.up.pass.val().level == self.l3.val();
        self.h_inc4.next = self.e.val().h4 + self.one.val();
        if self.h_inc4.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc4.next = self.zero.val();
        }
        self.t_inc4.next = self.e.val().t4 + self.one.val();
        if self.t_inc4.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc4.next = self.zero.val();
        }
        self.lane4.next = self.port.up.pass.val().level == self.l4.val();
        self.h_inc5.next = self.e.val().h5 + self.one.val();
        if self.h_inc5.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc5.next = self.zero.val();
        }
        self.t_inc5.next = self.e.val().t5 + self.one.val();
        if self.t_inc5.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc5.next = self.zero.val();
        }
        self.lane5.next = self.port.up.pass.val().level == self.l5.val();
        self.h_inc6.next = self.e.val().h6 + self.one.val();
        if self.h_inc6.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc6.next = self.zero.val();
        }
        self.t_inc6.next = self.e.val().t6 + self.one.val();
        if self.t_inc6.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc6.next = self.zero.val();
        }
        self.lane6.next = self.port.up.pass.val().level == self.l6.val();
        self.h_inc7.next = self.e.val().h7 + self.one.val();
        if self.h_inc7.val() >= self.port.up.pass.val().ring_slots {
            self.h_inc7.next = self.zero.val();
        }
        self.t_inc7.next = self.e.val().t7 + self.one.val();
        if self.t_inc7.val() >= self.port.up.pass.val().ring_slots {
            self.t_inc7.next = self.zero.val();
        }
        self.lane7.next = self.port.up.pass.val().level == self.l7.val();
        self.wants_hold.next = self.active.val()
            & self.port.up.pass.val().is_task
            & !self.token.val()
            & self.holdable.val();
        // Room below `hold_slots`: the region's slots, or none while the pool's region moves
        // (decision 37).
        self.room.next = self.e.val().depth < self.port.up.pass.val().hold_slots;
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
        // A place returns to level `level` when nothing is held (a reply's second pass), or a
        // control pass adds one; a full ring drops it (`overflow`).
        self.pushing.next = (self.active.val()
            & self.port.up.pass.val().is_return
            & (self.e.val().depth == self.zero.val()))
            | (self.active.val() & self.port.up.pass.val().is_ctl_place);
        self.slots_m1.next = self.port.up.pass.val().ring_slots - self.one.val();
        self.slots_zero.next = !self.port.up.pass.val().ring_slots.any();
        self.push_full.next = false;
        if self.lane0.val() & (self.e.val().f0 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane1.val() & (self.e.val().f1 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane2.val() & (self.e.val().f2 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane3.val() & (self.e.val().f3 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane4.val() & (self.e.val().f4 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane5.val() & (self.e.val().f5 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane6.val() & (self.e.val().f6 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        if self.lane7.val() & (self.e.val().f7 | self.slots_zero.val()) {
            self.push_full.next = true;
        }
        self.push_ok.next = self.pushing.val() & !self.push_full.val();
        if self.active.val() & self.port.up.pass.val().is_task & self.sel0.val() {
            self.w.next.h0 = self.h_inc0.val();
            self.w.next.c0 = self.e.val().c0 - self.one.val();
            self.w.next.n0 = self.e.val().c0 != self.one.val();
            self.w.next.f0 = false;
        }
        if self.push_ok.val() & self.lane0.val() {
            self.w.next.t0 = self.t_inc0.val();
            self.w.next.c0 = self.e.val().c0 + self.one.val();
            self.w.next.n0 = true;
            self.w.next.f0 = self.e.val().c0 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel1.val() {
            self.w.next.h1 = self.h_inc1.val();
            self.w.next.c1 = self.e.val().c1 - self.one.val();
            self.w.next.n1 = self.e.val().c1 != self.one.val();
            self.w.next.f1 = false;
        }
        if self.push_ok.val() & self.lane1.val() {
            self.w.next.t1 = self.t_inc1.val();
            self.w.next.c1 = self.e.val().c1 + self.one.val();
            self.w.next.n1 = true;
            self.w.next.f1 = self.e.val().c1 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel2.val() {
            self.w.next.h2 = self.h_inc2.val();
            self.w.next.c2 = self.e.val().c2 - self.one.val();
            self.w.next.n2 = self.e.val().c2 != self.one.val();
            self.w.next.f2 = false;
        }
        if self.push_ok.val() & self.lane2.val() {
            self.w.next.t2 = self.t_inc2.val();
            self.w.next.c2 = self.e.val().c2 + self.one.val();
            self.w.next.n2 = true;
            self.w.next.f2 = self.e.val().c2 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel3.val() {
            self.w.next.h3 = self.h_inc3.val();
            self.w.next.c3 = self.e.val().c3 - self.one.val();
            self.w.next.n3 = self.e.val().c3 != self.one.val();
            self.w.next.f3 = false;
        }
        if self.push_ok.val() & self.lane3.val() {
            self.w.next.t3 = self.t_inc3.val();
            self.w.next.c3 = self.e.val().c3 + self.one.val();
            self.w.next.n3 = true;
            self.w.next.f3 = self.e.val().c3 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel4.val() {
            self.w.next.h4 = self.h_inc4.val();
            self.w.next.c4 = self.e.val().c4 - self.one.val();
            self.w.next.n4 = self.e.val().c4 != self.one.val();
            self.w.next.f4 = false;
        }
        if self.push_ok.val() & self.lane4.val() {
            self.w.next.t4 = self.t_inc4.val();
            self.w.next.c4 = self.e.val().c4 + self.one.val();
            self.w.next.n4 = true;
            self.w.next.f4 = self.e.val().c4 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel5.val() {
            self.w.next.h5 = self.h_inc5.val();
            self.w.next.c5 = self.e.val().c5 - self.one.val();
            self.w.next.n5 = self.e.val().c5 != self.one.val();
            self.w.next.f5 = false;
        }
        if self.push_ok.val() & self.lane5.val() {
            self.w.next.t5 = self.t_inc5.val();
            self.w.next.c5 = self.e.val().c5 + self.one.val();
            self.w.next.n5 = true;
            self.w.next.f5 = self.e.val().c5 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel6.val() {
            self.w.next.h6 = self.h_inc6.val();
            self.w.next.c6 = self.e.val().c6 - self.one.val();
            self.w.next.n6 = self.e.val().c6 != self.one.val();
            self.w.next.f6 = false;
        }
        if self.push_ok.val() & self.lane6.val() {
            self.w.next.t6 = self.t_inc6.val();
            self.w.next.c6 = self.e.val().c6 + self.one.val();
            self.w.next.n6 = true;
            self.w.next.f6 = self.e.val().c6 == self.slots_m1.val();
        }
        if self.active.val() & self.port.up.pass.val().is_task & self.sel7.val() {
            self.w.next.h7 = self.h_inc7.val();
            self.w.next.c7 = self.e.val().c7 - self.one.val();
            self.w.next.n7 = self.e.val().c7 != self.one.val();
            self.w.next.f7 = false;
        }
        if self.push_ok.val() & self.lane7.val() {
            self.w.next.t7 = self.t_inc7.val();
            self.w.next.c7 = self.e.val().c7 + self.one.val();
            self.w.next.n7 = true;
            self.w.next.f7 = self.e.val().c7 == self.slots_m1.val();
        }
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next = self.fresh.val();
        }
        // A move of the pool's buffer region (decision 37): the held queue starts afresh at
        // offset 0 of the new region, the rings kept.
        if self.active.val() & self.port.up.pass.val().is_ctl_move {
            self.w.next.head = self.zero.val();
            self.w.next.depth = self.zero.val();
        }
        self.ctl_table.wr_en.next = self.hold.val()
            | self.releases.val()
            | (self.active.val() & self.port.up.pass.val().is_task & self.token.val())
            | self.push_ok.val()
            | self.port.up.pass.val().is_ctl_pool
            | (self.active.val() & self.port.up.pass.val().is_ctl_move);
        self.ctl_table.wr_data.next = self.w.val();
        self.out.d.next = self.port.up.pass.val();
        self.out.d.next.held = self.hold.val();
        self.out.d.next.release = self.releases.val();
        self.out.d.next.buf_full = self.wants_hold.val() & !self.room.val();
        // No place and not held: over a bound, or dropped when the region is full and the pool
        // drops (a task that cannot be held goes over a bound whatever the pool's fallback:
        // decision 28).
        self.no_place.next = self.active.val()
            & self.port.up.pass.val().is_task
            & !self.token.val()
            & !self.hold.val();
        self.full_drop.next =
            self.no_place.val() & self.holdable.val() & self.port.up.pass.val().drop_full;
        self.out.d.next.fallback = self.no_place.val() & !self.full_drop.val();
        self.out.d.next.dropped = self.full_drop.val();
        self.out.d.next.at = self.e.val().head;
        if self.hold.val() {
            self.out.d.next.at = self.tail.val();
        }
        self.out.d.next.token =
            self.active.val() & self.port.up.pass.val().is_task & self.token.val();
        self.out.d.next.pop =
            self.active.val() & self.port.up.pass.val().is_task & self.token.val();
        self.out.d.next.push = self.push_ok.val();
        self.out.d.next.overflow = self.pushing.val() & self.push_full.val();
        self.out.d.next.ring_at = self.zero.val();
        if self.port.up.pass.val().is_task & self.sel0.val() {
            self.out.d.next.ring_at = self.off0.val() + self.e.val().h0;
            self.out.d.next.level = self.l0.val();
        }
        if !self.port.up.pass.val().is_task & self.lane0.val() {
            self.out.d.next.ring_at = self.off0.val() + self.e.val().t0;
        }
        if self.port.up.pass.val().is_task & self.sel1.val() {
            self.out.d.next.ring_at = self.off1.val() + self.e.val().h1;
            self.out.d.next.level = self.l1.val();
        }
        if !self.port.up.pass.val().is_task & self.lane1.val() {
            self.out.d.next.ring_at = self.off1.val() + self.e.val().t1;
        }
        if self.port.up.pass.val().is_task & self.sel2.val() {
            self.out.d.next.ring_at = self.off2.val() + self.e.val().h2;
            self.out.d.next.level = self.l2.val();
        }
        if !self.port.up.pass.val().is_task & self.lane2.val() {
            self.out.d.next.ring_at = self.off2.val() + self.e.val().t2;
        }
        if self.port.up.pass.val().is_task & self.sel3.val() {
            self.out.d.next.ring_at = self.off3.val() + self.e.val().h3;
            self.out.d.next.level = self.l3.val();
        }
        if !self.port.up.pass.val().is_task & self.lane3.val() {
            self.out.d.next.ring_at = self.off3.val() + self.e.val().t3;
        }
        if self.port.up.pass.val().is_task & self.sel4.val() {
            self.out.d.next.ring_at = self.off4.val() + self.e.val().h4;
            self.out.d.next.level = self.l4.val();
        }
        if !self.port.up.pass.val().is_task & self.lane4.val() {
            self.out.d.next.ring_at = self.off4.val() + self.e.val().t4;
        }
        if self.port.up.pass.val().is_task & self.sel5.val() {
            self.out.d.next.ring_at = self.off5.val() + self.e.val().h5;
            self.out.d.next.level = self.l5.val();
        }
        if !self.port.up.pass.val().is_task & self.lane5.val() {
            self.out.d.next.ring_at = self.off5.val() + self.e.val().t5;
        }
        if self.port.up.pass.val().is_task & self.sel6.val() {
            self.out.d.next.ring_at = self.off6.val() + self.e.val().h6;
            self.out.d.next.level = self.l6.val();
        }
        if !self.port.up.pass.val().is_task & self.lane6.val() {
            self.out.d.next.ring_at = self.off6.val() + self.e.val().t6;
        }
        if self.port.up.pass.val().is_task & self.sel7.val() {
            self.out.d.next.ring_at = self.off7.val() + self.e.val().h7;
            self.out.d.next.level = self.l7.val();
        }
        if !self.port.up.pass.val().is_task & self.lane7.val() {
            self.out.d.next.ring_at = self.off7.val() + self.e.val().t7;
        }
        self.out.d.next.depth = self.w.val().depth;
        self.out.d.next.max_depth = self.w.val().max_depth;
        // The pool's depth before the pass: what a configure or move pass discards (the
        // counters read it of those only; a mux here would lengthen the stage's deepest path),
        // and what a node read gives the host (`RB_DEPTH`).
        self.out.d.next.discarded = self.e.val().depth;
        self.out.d.next.idle = self.w.val().c0;
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
