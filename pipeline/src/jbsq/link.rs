//! `link[pool]`: the JBSQ leaf's side of the spine's idle list, the link rule on what
//! `queueCtl`'s pass left (`docs/algorithm.md`, decisions 27 and 32; the model's
//! `JbsqLeaf::link_rule`; `docs/jbsq-pipeline.md` for why it is a stage of its own).
//!
//! - The rule runs on a task's first pass (not a retry: decision 35), a place put back in its
//!   ring (a reply's second pass, a control pass for an added node's place; not one its full
//!   ring dropped, and a returned place of a level above 0 not for a pool that advertises idle
//!   workers), and, for a pool that advertises its queue, a reply or a returned place that
//!   releases a held task; only for a pool with a spine.
//! - What the pool advertises after the pass: the idle workers (`queueCtl`'s level-0 count,
//!   `idle`), its free places (the entry's `places`, less a pop, more a push), or its queue
//!   (free places while it holds nothing; `depth` against `room`).
//! - Link (idleAdd) when unlinked and the count is at least `link_at`, unlink (idleRemove) when
//!   linked and at most `unlink_at` (the queue: linked again only with nothing held, unlinked
//!   only with `room` held), once `hold_us` passed since the pool's last idle message; else a
//!   task from the pool's spine whose flag (`qlen`) disagrees with the link re-sends the
//!   message, once `repair_gap` passed (`repair`). A packet's pass that sends one stamps the
//!   entry with its time; a control pass carries no time: it is never held and stamps nothing.
//! - Every pass moves `places` by its pop or push, whether or not the rule runs; configuring a
//!   pool starts the entry afresh.
//!
//! Depth: what the pass alone decides (the thresholds each candidate count is compared with,
//! `time - hold_us` and `time - repair_gap`) is worked out a clock ahead from `early` and
//! registered ([`LinkDecode`]), so that in the pass's clock the entry meets compares on carry
//! chains and a few registered bits, as in the paper leaf's `idleCtl`.

use super::JbsqPort;
use super::entries::LinkEntry;
use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// What the rule needs of the pass alone, a clock ahead.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct LinkDecode {
    /// `places` after a pop is at least `link_at` when `places >= link_at + 1`; after a push,
    /// when `places >= link_at - 1` (any at `link_at` 0); unmoved, `places >= link_at`. After a
    /// pop it is at most `unlink_at` when `places <= unlink_at + 1`; after a push when `places <
    /// unlink_at`. On 17 bits, as `places`.
    pub ge_pop: Bits<17>,
    pub ge_push: Bits<17>,
    pub ge_at: Bits<17>,
    pub le_pop: Bits<17>,
    pub le_at: Bits<17>,
    /// `time - hold_us` and `time - repair_gap` (wrapping), and whether each wraps.
    pub t_hold: Bits<32>,
    pub wrap_hold: Bit,
    pub t_gap: Bits<32>,
    pub wrap_gap: Bit,
}

/// `link` for `2^P` pools.
#[derive(LogicBlock)]
pub struct LinkStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for the fields the decode reads (the name matches Verilator's
    /// `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) link_table: RmwTable<LinkEntry, P>,
    out: DFF<JbsqPhv>,
    dec: DFF<LinkDecode>,
    link17: ZeroExtend<16, 17>,
    unlink17: ZeroExtend<16, 17>,
    hold32: ZeroExtend<16, 32>,
    gap32: ZeroExtend<16, 32>,
    e: Signal<Local, LinkEntry>,
    w: Signal<Local, LinkEntry>,
    active: Signal<Local, Bit>,
    /// The pool advertises its idle workers, its free places, its queue (`room` 0: its places).
    adv_idle: Signal<Local, Bit>,
    adv_queue: Signal<Local, Bit>,
    queue_rule: Signal<Local, Bit>,
    /// The pass puts a place back (a returned place or an added node's, not dropped).
    put: Signal<Local, Bit>,
    /// Whether the pass's kind runs the rule, whether it runs (a pool with a spine; kept), and whether
    /// the pass carries a time (a packet's pass).
    runs: Signal<Local, Bit>,
    run_cut: Signal<Local, Bit>,
    timed: Signal<Local, Bit>,
    /// The idle workers after the pass against the thresholds (registered inputs), nothing held
    /// after it, `room` held or more.
    ge_idle: Signal<Local, Bit>,
    le_idle: Signal<Local, Bit>,
    empty: Signal<Local, Bit>,
    at_room: Signal<Local, Bit>,
    /// Which compare of the entry's free places the rule's verdicts take (pass-only): after a
    /// pop, after a push, unmoved (`_at`, which also carries the idle workers' verdict: its
    /// thresholds are then 0 and the greatest, [`LinkDecode`]); `may_*` for a link, `must_*`
    /// for an unlink. These, the rule's running (`run_cut`) and the repair's flags are kept
    /// (`_cut`): the compares' carry chains meet them in one LUT, not in the pass-only logic's
    /// first levels.
    may_pop_cut: Signal<Local, Bit>,
    may_push_cut: Signal<Local, Bit>,
    may_at_cut: Signal<Local, Bit>,
    must_pop_cut: Signal<Local, Bit>,
    must_push_cut: Signal<Local, Bit>,
    must_at_cut: Signal<Local, Bit>,
    /// The compares of the entry's free places (carry chains).
    ge_pop: Signal<Local, Bit>,
    ge_push: Signal<Local, Bit>,
    ge_at: Signal<Local, Bit>,
    le_pop: Signal<Local, Bit>,
    le_push: Signal<Local, Bit>,
    le_at: Signal<Local, Bit>,
    /// `time - signaled >= hold_us` and `>= repair_gap` (wrapping; `IdleCtlStage`'s compares:
    /// `signaled` at or before `time - x`, or after `time`).
    old_hold: Signal<Local, Bit>,
    old_gap: Signal<Local, Bit>,
    ahead: Signal<Local, Bit>,
    /// The repair's flag, pass-only: a task's first pass from the pool's spine, with a queue
    /// (`flag_q_cut`) or without.
    from_spine: Signal<Local, Bit>,
    flag_q_cut: Signal<Local, Bit>,
    flag_nq_cut: Signal<Local, Bit>,
    /// The verdicts, each one LUT after the compares, kept (`_cut`): a link or an unlink is
    /// allowed (`may_cut`, `must_cut`); the rule runs and the hold passed (`go_cut`; `tgo_cut`
    /// for a packet's pass, which stamps); the repair's gap passed for a flag with a queue
    /// (`fix_q_cut`) or without. What leaves, and the entry's new flag and stamp, are each one
    /// LUT after these, the entry's flag picking.
    may_cut: Signal<Local, Bit>,
    must_cut: Signal<Local, Bit>,
    go_cut: Signal<Local, Bit>,
    tgo_cut: Signal<Local, Bit>,
    fix_q_cut: Signal<Local, Bit>,
    fix_nq_cut: Signal<Local, Bit>,
    /// The entry's new stamp, one LUT after the verdicts (the entry's flag picking), kept: the
    /// 32-bit write of `signaled` is one LUT after it.
    stamp_cut: Signal<Local, Bit>,
    places_less: Signal<Local, Bits<17>>,
    places_more: Signal<Local, Bits<17>>,
    one17: Constant<Bits<17>>,
    all17: Constant<Bits<17>>,
    zero17: Constant<Bits<17>>,
    zero16: Constant<Bits<16>>,
    no_off: Constant<Bits<P>>,
    fresh: Constant<LinkEntry>,
}

impl<const P: usize> Default for LinkStage<P> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            link_table: Default::default(),
            out: Default::default(),
            dec: Default::default(),
            link17: Default::default(),
            unlink17: Default::default(),
            hold32: Default::default(),
            gap32: Default::default(),
            e: Default::default(),
            w: Default::default(),
            active: Default::default(),
            adv_idle: Default::default(),
            adv_queue: Default::default(),
            queue_rule: Default::default(),
            put: Default::default(),
            runs: Default::default(),
            run_cut: Default::default(),
            timed: Default::default(),
            ge_idle: Default::default(),
            le_idle: Default::default(),
            empty: Default::default(),
            at_room: Default::default(),
            may_pop_cut: Default::default(),
            may_push_cut: Default::default(),
            may_at_cut: Default::default(),
            must_pop_cut: Default::default(),
            must_push_cut: Default::default(),
            must_at_cut: Default::default(),
            ge_pop: Default::default(),
            ge_push: Default::default(),
            ge_at: Default::default(),
            le_pop: Default::default(),
            le_push: Default::default(),
            le_at: Default::default(),
            old_hold: Default::default(),
            old_gap: Default::default(),
            ahead: Default::default(),
            from_spine: Default::default(),
            flag_q_cut: Default::default(),
            flag_nq_cut: Default::default(),
            may_cut: Default::default(),
            must_cut: Default::default(),
            go_cut: Default::default(),
            tgo_cut: Default::default(),
            fix_q_cut: Default::default(),
            fix_nq_cut: Default::default(),
            stamp_cut: Default::default(),
            places_less: Default::default(),
            places_more: Default::default(),
            one17: Constant::new(1.into()),
            all17: Constant::new(0x1ffff.into()),
            zero17: Constant::new(0.into()),
            zero16: Constant::new(0.into()),
            no_off: Constant::new(0.into()),
            fresh: Constant::new(LinkEntry::default()),
        }
    }
}

impl<const P: usize> Logic for LinkStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, dec);
        clock!(self, clock, link_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's decode, for the next clock.
        self.link17.narrow.next = self.port.up.early.val().link_at;
        self.unlink17.narrow.next = self.port.up.early.val().unlink_at;
        self.hold32.narrow.next = self.port.up.early.val().hold_us;
        self.gap32.narrow.next = self.port.up.early.val().repair_gap;
        self.dec.d.next.ge_pop = self.link17.wide.val() + self.one17.val();
        self.dec.d.next.ge_push = self.link17.wide.val() - self.one17.val();
        if !self.port.up.early.val().link_at.any() {
            self.dec.d.next.ge_push = self.zero17.val();
        }
        self.dec.d.next.ge_at = self.link17.wide.val();
        self.dec.d.next.le_pop = self.unlink17.wide.val() + self.one17.val();
        self.dec.d.next.le_at = self.unlink17.wide.val();
        // A pool that advertises its idle workers: the unmoved compares always hold, and the
        // verdicts come from the idle count alone (`may_at_cut`, `must_at_cut`).
        if !self.port.up.early.val().adv_places & !self.port.up.early.val().adv_queue {
            self.dec.d.next.ge_at = self.zero17.val();
            self.dec.d.next.le_at = self.all17.val();
        }
        self.dec.d.next.t_hold = self.port.up.early.val().time - self.hold32.wide.val();
        self.dec.d.next.wrap_hold = self.port.up.early.val().time < self.hold32.wide.val();
        self.dec.d.next.t_gap = self.port.up.early.val().time - self.gap32.wide.val();
        self.dec.d.next.wrap_gap = self.port.up.early.val().time < self.gap32.wide.val();
        // The entering pass's pool; pool IDs beyond the table were dropped by `poolCfg`.
        self.link_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        self.link_table.rd_off.next = self.no_off.val();
        self.link_table.rd_indexed.next = false;
        self.link_table.rd_index.next = self.no_off.val();
        self.link_table.rd_same.next = false;
        self.link_table.wr_addr.next = self.port.up.pass.val().pool.get_bits::<P>(0);
        // The pass in the stage.
        self.e.next = self.link_table.rd_data.val();
        self.w.next = self.link_table.rd_data.val();
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.adv_idle.next =
            !self.port.up.pass.val().adv_places & !self.port.up.pass.val().adv_queue;
        self.adv_queue.next = self.port.up.pass.val().adv_queue;
        self.queue_rule.next = self.adv_queue.val() & self.port.up.pass.val().room.any();
        self.put.next = self.port.up.pass.val().push;
        // A returned place: what it changed is what the pool advertises (a place back in its
        // ring, of level 0 for idle workers; for its queue, a place or a held task gone).
        self.runs.next = (self.port.up.pass.val().is_task & !self.port.up.pass.val().is_retry)
            | (self.port.up.pass.val().is_reply
                & self.port.up.pass.val().release
                & self.adv_queue.val())
            | (self.port.up.pass.val().is_ctl_place & self.put.val());
        if self.port.up.pass.val().is_return {
            if self.adv_queue.val() {
                self.runs.next = self.port.up.pass.val().release | self.put.val();
            } else if self.adv_idle.val() {
                self.runs.next = self.put.val() & !self.port.up.pass.val().level.any();
            } else {
                self.runs.next = self.put.val();
            }
        }
        self.run_cut.next = self.runs.val() & self.active.val() & self.port.up.pass.val().spine_ok;
        self.timed.next = !self.port.up.pass.val().is_ctl_place;
        self.out.d.next = self.port.up.pass.val();
        // The verdicts' inputs from the pass alone (registered fields).
        self.ge_idle.next = self.port.up.pass.val().idle >= self.port.up.pass.val().link_at;
        self.le_idle.next = self.port.up.pass.val().idle <= self.port.up.pass.val().unlink_at;
        self.empty.next = self.port.up.pass.val().depth == self.zero16.val();
        self.at_room.next = self.port.up.pass.val().depth >= self.port.up.pass.val().room;
        // The count after the pass is the entry's free places less a pop, more a push, or
        // unmoved; for the queue, linked again only with nothing held, unlinked only at `room`.
        self.may_pop_cut.next = !self.adv_idle.val()
            & self.port.up.pass.val().pop
            & (!self.queue_rule.val() | self.empty.val());
        self.may_push_cut.next =
            !self.adv_idle.val() & self.put.val() & (!self.queue_rule.val() | self.empty.val());
        self.may_at_cut.next = (self.adv_idle.val() & self.ge_idle.val())
            | (!self.adv_idle.val()
                & !self.port.up.pass.val().pop
                & !self.put.val()
                & (!self.queue_rule.val() | self.empty.val()));
        self.must_pop_cut.next = !self.adv_idle.val()
            & self.port.up.pass.val().pop
            & (!self.queue_rule.val() | self.at_room.val());
        self.must_push_cut.next =
            !self.adv_idle.val() & self.put.val() & (!self.queue_rule.val() | self.at_room.val());
        self.must_at_cut.next = (self.adv_idle.val() & self.le_idle.val())
            | (!self.adv_idle.val()
                & !self.port.up.pass.val().pop
                & !self.put.val()
                & (!self.queue_rule.val() | self.at_room.val()));
        // A task's first pass from the pool's spine carries the spine's flag in `qlen`.
        self.from_spine.next = self.active.val()
            & self.port.up.pass.val().spine_ok
            & self.port.up.pass.val().is_task
            & !self.port.up.pass.val().is_retry
            & (self.port.up.pass.val().src == self.port.up.pass.val().spine_id);
        self.flag_q_cut.next = self.from_spine.val() & self.port.up.pass.val().qlen.any();
        self.flag_nq_cut.next = self.from_spine.val() & !self.port.up.pass.val().qlen.any();
        // The entry's compares, each a carry chain.
        self.ge_pop.next = self.e.val().places >= self.dec.q.val().ge_pop;
        self.ge_push.next = self.e.val().places >= self.dec.q.val().ge_push;
        self.ge_at.next = self.e.val().places >= self.dec.q.val().ge_at;
        self.le_pop.next = self.e.val().places <= self.dec.q.val().le_pop;
        self.le_push.next = self.e.val().places < self.dec.q.val().le_at;
        self.le_at.next = self.e.val().places <= self.dec.q.val().le_at;
        self.old_hold.next = self.e.val().signaled <= self.dec.q.val().t_hold;
        self.old_gap.next = self.e.val().signaled <= self.dec.q.val().t_gap;
        self.ahead.next = self.e.val().signaled > self.port.up.pass.val().time;
        self.may_cut.next = (self.may_pop_cut.val() & self.ge_pop.val())
            | (self.may_push_cut.val() & self.ge_push.val())
            | (self.may_at_cut.val() & self.ge_at.val());
        self.must_cut.next = (self.must_pop_cut.val() & self.le_pop.val())
            | (self.must_push_cut.val() & self.le_push.val())
            | (self.must_at_cut.val() & self.le_at.val());
        // A control pass carries no time: never held, never quiet.
        self.go_cut.next = self.run_cut.val()
            & (!self.timed.val()
                | (self.old_hold.val() & self.ahead.val())
                | (!self.dec.q.val().wrap_hold & (self.old_hold.val() | self.ahead.val())));
        self.tgo_cut.next = self.run_cut.val()
            & self.timed.val()
            & ((self.old_hold.val() & self.ahead.val())
                | (!self.dec.q.val().wrap_hold & (self.old_hold.val() | self.ahead.val())));
        self.fix_q_cut.next = self.timed.val()
            & self.flag_q_cut.val()
            & ((self.old_gap.val() & self.ahead.val())
                | (!self.dec.q.val().wrap_gap & (self.old_gap.val() | self.ahead.val())));
        self.fix_nq_cut.next = self.timed.val()
            & self.flag_nq_cut.val()
            & ((self.old_gap.val() & self.ahead.val())
                | (!self.dec.q.val().wrap_gap & (self.old_gap.val() | self.ahead.val())));
        // Unlinked: link when it may, else repair a spine task's flag that says the rack is
        // linked (a queue: idleRemove). Linked: unlink when it must, else repair a flag that
        // says unlinked (idleAdd). A packet's pass that sends a message stamps the entry.
        if self.e.val().linked {
            self.w.next.linked = !(self.go_cut.val() & self.must_cut.val());
            self.out.d.next.idle_add =
                self.fix_nq_cut.val() & !(self.go_cut.val() & self.must_cut.val());
            self.out.d.next.idle_remove = self.go_cut.val() & self.must_cut.val();
            self.out.d.next.repair =
                self.fix_nq_cut.val() & !(self.go_cut.val() & self.must_cut.val());
            self.stamp_cut.next =
                (self.tgo_cut.val() & self.must_cut.val()) | self.fix_nq_cut.val();
        } else {
            self.w.next.linked = self.go_cut.val() & self.may_cut.val();
            self.out.d.next.idle_add = self.go_cut.val() & self.may_cut.val();
            self.out.d.next.idle_remove =
                self.fix_q_cut.val() & !(self.go_cut.val() & self.may_cut.val());
            self.out.d.next.repair =
                self.fix_q_cut.val() & !(self.go_cut.val() & self.may_cut.val());
            self.stamp_cut.next = (self.tgo_cut.val() & self.may_cut.val()) | self.fix_q_cut.val();
        }
        if self.stamp_cut.val() {
            self.w.next.signaled = self.port.up.pass.val().time;
        }
        self.places_less.next = self.e.val().places - self.one17.val();
        self.places_more.next = self.e.val().places + self.one17.val();
        if self.port.up.pass.val().pop {
            self.w.next.places = self.places_less.val();
        }
        if self.put.val() {
            self.w.next.places = self.places_more.val();
        }
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next = self.fresh.val();
        }
        self.link_table.wr_en.next = self.active.val() | self.port.up.pass.val().is_ctl_pool;
        self.link_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
