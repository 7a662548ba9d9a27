//! Stage 2: `idleCtl[pool]`: the idle list's pointer `p`, the removal lock and (leaf) the link to
//! the spine's idle list (Algorithm 1; §3.4 and §A.3 for the link rule and its repair).
//!
//! - A task takes the idle path when `p > 0` and the lock is free; a leaf pops (`p -= 1`, position
//!   `p`), a spine keeps the rack and takes its idle racks in turn: position `turn - 1`, and
//!   `turn` moves on by one, from `p` round to 1 (`docs/algorithm.md`, decision 18). A removal
//!   that takes the top while the turn is there moves the turn round to 1 as well. Counted from
//!   1, the turn is what `idleList` checks its forwarding on (`top`), as `p` for a pop.
//! - An idleAdd's commit pass (and a leaf's new worker) pushes: position `p`, `p += 1`.
//! - A removal's first pass takes the lock and `p -= 1` (position `p`, the former top), unless the
//!   lock is held (`idle_remove_locked`) or the list is empty (`idle_remove_not_member`); its
//!   second pass releases the lock and, when the node was not in the list, pushes the former top
//!   back.
//! - A leaf runs its link rule whenever `p` changed, and on every NEW_TASK: link at
//!   `p >= link_at` (idleAdd), unlink at `p <= unlink_at` (idleRemove), else re-send the message
//!   the spine's idle-selected flag shows was lost (a task from this pool's spine only), once
//!   `repair_gap` microseconds passed since the pool's last idle message from a packet's pass
//!   (`signaled`, which such a pass stamps with its arrival time; control passes leave it).

use crate::arith::ZeroExtend;
use crate::entries::IdleCtlEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

/// What the link rule and the repair need of the pass alone, worked out a clock ahead from
/// `early` (the pass entering next) and registered, so that in the pass's own clock only the
/// entry's compares and a few registered bits remain: the carry chains' outputs meet registers,
/// not logic of their own depth. `live` (the pass was not dropped) is left to the pass's clock,
/// since the previous stage decides it last.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct IdleCtlDecode {
    /// The pass pushes (before `live`): an idleAdd's commit, a leaf's new worker, a removal's
    /// second pass that found its node absent.
    pub push: Bit,
    /// A removal's second pass releases the lock (before `live`).
    pub unlock: Bit,
    /// The link rule's `k1 k0` (before `live`; see `IdleCtlStage::k0`).
    pub k0: Bit,
    pub k1: Bit,
    /// The rule's signal stamps `signaled` (a packet's pass).
    pub stamps: Bit,
    /// A repair is possible: a task from this pool's spine, with a queue or without.
    pub repair_q: Bit,
    pub repair_nq: Bit,
    /// The thresholds as each candidate count's compare needs them (`IdleCtlStage::ge_p`):
    /// `p >= ge_p_at` (`link_at - 1`, 0 at `link_at` 0), `p >= ge_m_at` (`link_at + 1` on 17
    /// bits, 0 at `link_at` 0), `p <= le_m_at` (`unlink_at + 1` on 17 bits).
    pub ge_p_at: Bits<16>,
    pub ge_m_at: Bits<17>,
    pub le_m_at: Bits<17>,
    /// `time - repair_gap` (wrapping), and whether it wraps.
    pub time_gap: Bits<32>,
    pub wrap: Bit,
}

#[derive(LogicBlock)]
pub struct IdleCtlStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<P>>,
    pub(super) ctl_table: StageTable<IdleCtlEntry, P>,
    out: DFF<Phv>,
    /// The pass's decode, a clock ahead ([`IdleCtlDecode`]), and steps of it.
    dec: DFF<IdleCtlDecode>,
    from_spine_e: Signal<Local, Bit>,
    push_e: Signal<Local, Bit>,
    unlock_e: Signal<Local, Bit>,
    run_e: Signal<Local, Bit>,
    e: Signal<Local, IdleCtlEntry>,
    w: Signal<Local, IdleCtlEntry>,
    live: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    unlock: Signal<Local, Bit>,
    /// The count less and more one (wrapping; used where the count is not zero, and by a push).
    p_less: Signal<Local, Bits<16>>,
    p_more: Signal<Local, Bits<16>>,
    /// Spine: the turn is at the top (`turn == p`: the next goes round to 1), the position it
    /// names, and the turn after it.
    turn_top: Signal<Local, Bit>,
    turn_less: Signal<Local, Bits<16>>,
    turn_more: Signal<Local, Bits<16>>,
    /// Whether `repair_gap` microseconds passed since the pool's last idle message: `time -
    /// signaled >= gap` (wrapping), told by two compares of `signaled` with values of the pass
    /// alone, `old` (at or before `time - gap`) and `ahead` (after `time`): `time - gap` wraps
    /// below zero (`IdleCtlDecode::wrap`) or not. `gap` is the entering pass's, widened.
    gap: Signal<Local, Bits<32>>,
    old: Signal<Local, Bit>,
    ahead: Signal<Local, Bit>,
    /// The rule runs on a packet's pass (a task's first pass, an idleAdd's commit): its signal
    /// stamps.
    stamps: Signal<Local, Bit>,
    /// Whether the link rule runs on this pass, and on which count: `k1 k0` is 01 for a push's
    /// `p + 1`, 10 for a task's (`p - 1` if it takes the idle path, else `p`), 11 for `p`, 00
    /// not at all (`run_e`: it runs, a clock ahead).
    k0: Signal<Local, Bit>,
    k1: Signal<Local, Bit>,
    /// The thresholds against each candidate count, each one compare on the entry's `p`: `_p`
    /// for `p + 1`, `_z` for `p`, `_m` for a task's pop (`p - 1`, or `p` when it is zero):
    /// `p + 1 >= link_at` is `p >= link_at - 1` (any `p` at `link_at` 0), `p + 1 <= unlink_at` is
    /// `p < unlink_at` (a push never wraps `p`: it stays below the pool's capacity, as the model
    /// asserts), `p - 1 >= link_at` is `p > link_at` (any `p` at `link_at` 0), and
    /// `p - 1 <= unlink_at` is `p <= unlink_at + 1`. Each is one compare with a threshold
    /// worked out a clock ahead ([`IdleCtlDecode`]), the last two on 17 bits (`p17`).
    ge_p: Signal<Local, Bit>,
    p17: ZeroExtend<16, 17>,
    link17: ZeroExtend<16, 17>,
    unlink17: ZeroExtend<16, 17>,
    one17: Constant<Bits<17>>,
    zero17: Constant<Bits<17>>,
    ge_z: Signal<Local, Bit>,
    ge_m: Signal<Local, Bit>,
    le_p: Signal<Local, Bit>,
    le_z: Signal<Local, Bit>,
    le_m: Signal<Local, Bit>,
    /// Which count the rule compares (false when it does not run): `p + 1` (`k1 k0` 01), `p - 1`
    /// (10, the list not locked), `p` (11, or 10 with the list locked: a task takes no node).
    sel_p: Signal<Local, Bit>,
    sel_m: Signal<Local, Bit>,
    sel_z: Signal<Local, Bit>,
    /// The enables that the compares meet, one per compare, each formed from the pass and the
    /// entry beside the compares' chains and kept (`_cut`, `verilog.rs`): a link (`add_*`:
    /// unlinked, count at or above `link_at`) or an unlink (`rem_*`: linked, at or below
    /// `unlink_at`) on each candidate count, the same for a pass that stamps `signaled`
    /// (`sadd_*`, `srem_*`), and a repair (`fa_*`: linked and a task without a queue from the
    /// spine, re-sending idleAdd when the count is above `unlink_at`; `fr_*`: unlinked and a task
    /// with a queue, re-sending idleRemove when it is below `link_at`). A repair is a task's
    /// pass, whose rule compares `p - 1` or, locked, `p`: two enables each.
    add_p_cut: Signal<Local, Bit>,
    add_m_cut: Signal<Local, Bit>,
    add_z_cut: Signal<Local, Bit>,
    rem_p_cut: Signal<Local, Bit>,
    rem_m_cut: Signal<Local, Bit>,
    rem_z_cut: Signal<Local, Bit>,
    sadd_p_cut: Signal<Local, Bit>,
    sadd_m_cut: Signal<Local, Bit>,
    sadd_z_cut: Signal<Local, Bit>,
    srem_p_cut: Signal<Local, Bit>,
    srem_m_cut: Signal<Local, Bit>,
    srem_z_cut: Signal<Local, Bit>,
    fa_m_cut: Signal<Local, Bit>,
    fa_z_cut: Signal<Local, Bit>,
    fr_m_cut: Signal<Local, Bit>,
    fr_z_cut: Signal<Local, Bit>,
    /// A pass that stamps and carries an idle signal already (kept).
    ssig_cut: Signal<Local, Bit>,
    /// The link rule's signals, the same when the pass stamps, the repairs that would go, and
    /// whether they go (`quiet_cut`: `repair_gap` passed since the last stamp): each one LUT
    /// after the compares, kept, so that what follows meets them in one LUT more.
    add_cut: Signal<Local, Bit>,
    remove_cut: Signal<Local, Bit>,
    stamp_add_cut: Signal<Local, Bit>,
    stamp_remove_cut: Signal<Local, Bit>,
    fix_add_cut: Signal<Local, Bit>,
    fix_remove_cut: Signal<Local, Bit>,
    quiet_cut: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    code_locked: Constant<Bits<4>>,
    code_not_member: Constant<Bits<4>>,
}

impl<const P: usize> IdleCtlStage<P> {
    pub fn new(is_leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            ctl_table: StageTable::new(Stage::IdleCtl),
            out: Default::default(),
            dec: Default::default(),
            from_spine_e: Default::default(),
            push_e: Default::default(),
            unlock_e: Default::default(),
            run_e: Default::default(),
            e: Default::default(),
            w: Default::default(),
            live: Default::default(),
            push: Default::default(),
            take: Default::default(),
            unlock: Default::default(),
            p_less: Default::default(),
            p_more: Default::default(),
            turn_top: Default::default(),
            turn_less: Default::default(),
            turn_more: Default::default(),
            gap: Default::default(),
            old: Default::default(),
            ahead: Default::default(),
            stamps: Default::default(),
            k0: Default::default(),
            k1: Default::default(),
            ge_p: Default::default(),
            p17: Default::default(),
            link17: Default::default(),
            unlink17: Default::default(),
            one17: Constant::new(1.into()),
            zero17: Constant::new(0.into()),
            ge_z: Default::default(),
            ge_m: Default::default(),
            le_p: Default::default(),
            le_z: Default::default(),
            le_m: Default::default(),
            sel_p: Default::default(),
            sel_m: Default::default(),
            sel_z: Default::default(),
            add_p_cut: Default::default(),
            add_m_cut: Default::default(),
            add_z_cut: Default::default(),
            rem_p_cut: Default::default(),
            rem_m_cut: Default::default(),
            rem_z_cut: Default::default(),
            sadd_p_cut: Default::default(),
            sadd_m_cut: Default::default(),
            sadd_z_cut: Default::default(),
            srem_p_cut: Default::default(),
            srem_m_cut: Default::default(),
            srem_z_cut: Default::default(),
            fa_m_cut: Default::default(),
            fa_z_cut: Default::default(),
            fr_m_cut: Default::default(),
            fr_z_cut: Default::default(),
            ssig_cut: Default::default(),
            add_cut: Default::default(),
            remove_cut: Default::default(),
            stamp_add_cut: Default::default(),
            stamp_remove_cut: Default::default(),
            fix_add_cut: Default::default(),
            fix_remove_cut: Default::default(),
            quiet_cut: Default::default(),
            is_leaf: Constant::new(is_leaf),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            code_locked: Constant::new(drop_code(DropReason::IdleRemoveLocked).into()),
            code_not_member: Constant::new(drop_code(DropReason::IdleRemoveNotMember).into()),
        }
    }
}

impl<const P: usize> Logic for IdleCtlStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, dec);
        clock!(self, clock, ctl_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's decode, for the next clock ([`IdleCtlDecode`]).
        self.push_e.next = self.port.up.early.val().is_add_commit
            | (self.port.up.early.val().is_ctl_add & self.is_leaf.val())
            | ((self.port.up.early.val().is_remove_finish
                | self.port.up.early.val().is_ctl_remove2)
                & self.port.up.early.val().fin_abort);
        self.unlock_e.next = (self.port.up.early.val().is_remove_finish
            | self.port.up.early.val().is_ctl_remove2)
            & (self.port.up.early.val().fin_unlock
                | self.port.up.early.val().fin_move
                | self.port.up.early.val().fin_abort);
        self.run_e.next = self.is_leaf.val()
            & self.port.up.early.val().spine_ok
            & (self.port.up.early.val().is_task
                | self.push_e.val()
                | self.unlock_e.val()
                | self.port.up.early.val().is_ctl_params);
        self.from_spine_e.next = self.port.up.early.val().is_task
            & (self.port.up.early.val().src == self.port.up.early.val().spine_id);
        self.dec.d.next.push = self.push_e.val();
        self.dec.d.next.unlock = self.unlock_e.val();
        self.dec.d.next.k0 = self.run_e.val() & !self.port.up.early.val().is_task;
        self.dec.d.next.k1 = self.run_e.val() & !self.push_e.val();
        self.dec.d.next.stamps = self.run_e.val()
            & (self.port.up.early.val().is_task | self.port.up.early.val().is_add_commit);
        self.dec.d.next.repair_q =
            self.run_e.val() & self.from_spine_e.val() & self.port.up.early.val().qlen.any();
        self.dec.d.next.repair_nq =
            self.run_e.val() & self.from_spine_e.val() & !self.port.up.early.val().qlen.any();
        self.link17.narrow.next = self.port.up.early.val().link_at;
        self.unlink17.narrow.next = self.port.up.early.val().unlink_at;
        self.dec.d.next.ge_p_at = self.port.up.early.val().link_at - self.one.val();
        self.dec.d.next.ge_m_at = self.link17.wide.val() + self.one17.val();
        if !self.port.up.early.val().link_at.any() {
            self.dec.d.next.ge_p_at = self.zero.val();
            self.dec.d.next.ge_m_at = self.zero17.val();
        }
        self.dec.d.next.le_m_at = self.unlink17.wide.val() + self.one17.val();
        // `repair_gap` widened by a product with one (rust-hdl's only widening that lints clean;
        // synthesis keeps no multiplier).
        self.gap.next = self.port.up.early.val().repair_gap * self.one.val();
        self.dec.d.next.time_gap = self.port.up.early.val().time - self.gap.val();
        self.dec.d.next.wrap = self.port.up.early.val().time < self.gap.val();
        // The entering pass's index (`early`).
        self.ctl_table.rd_off.next = self.no_off.val();
        self.ctl_table.rd_same.next = false;
        self.ctl_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        self.ctl_table.read.next = self.port.up.early.val().is_ctl_read;
        self.ctl_table.read_table.next = self.port.up.early.val().rd_table;
        self.ctl_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.e.next = self.ctl_table.rd_data.val();
        self.w.next = self.ctl_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        // The entry is written back on every pass (unchanged unless a rule below changes it), so
        // the table's forwarding does not wait for the decisions below.
        self.ctl_table.wr_en.next = true;
        self.live.next = !self.port.up.pass.val().drop.any();
        self.p_less.next = self.e.val().p - self.one.val();
        self.p_more.next = self.e.val().p + self.one.val();
        self.turn_top.next = self.e.val().turn == self.e.val().p;
        self.turn_less.next = self.e.val().turn - self.one.val();
        self.turn_more.next = self.e.val().turn + self.one.val();
        // What `idleList` checks its forwarding on: the position read plus one, chosen by the
        // pass's kind alone (a spine's task reads its turn; a pop or a take reads the top).
        self.out.d.next.top = self.e.val().p;
        if !self.is_leaf.val() & self.port.up.pass.val().is_task {
            self.out.d.next.top = self.e.val().turn;
        }

        // A task: the idle path, when the list has a node and no removal holds it. A leaf pops
        // the top; a spine takes the rack whose turn it is and moves the turn on.
        if self.live.val()
            & self.port.up.pass.val().is_task
            & self.e.val().p.any()
            & !self.e.val().locked
        {
            self.out.d.next.idle = true;
            if self.is_leaf.val() {
                self.out.d.next.pos = self.p_less.val();
                self.w.next.p = self.p_less.val();
            } else {
                self.out.d.next.pos = self.turn_less.val();
                self.w.next.turn = self.turn_more.val();
                if self.turn_top.val() {
                    self.w.next.turn = self.one.val();
                }
            }
        }
        // Pushes: an idleAdd's commit, a leaf's new worker, a removal that found its node absent.
        self.push.next = self.live.val() & self.dec.q.val().push;
        if self.push.val() {
            self.out.d.next.pos = self.e.val().p;
            self.w.next.p = self.p_more.val();
        }
        // A removal's first pass: take the lock and the top.
        self.take.next = self.live.val()
            & (self.port.up.pass.val().is_idle_remove | self.port.up.pass.val().is_ctl_remove);
        if self.take.val() {
            if self.e.val().locked {
                self.out.d.next.drop = self.code_locked.val();
                self.out.d.next.is_idle_remove = false;
            } else if !self.e.val().p.any() {
                // Nothing to take: a network removal is dropped, a control removal goes on.
                if self.port.up.pass.val().is_idle_remove {
                    self.out.d.next.drop = self.code_not_member.val();
                    self.out.d.next.is_idle_remove = false;
                }
            } else {
                self.out.d.next.idle = true;
                self.out.d.next.pos = self.p_less.val();
                self.w.next.p = self.p_less.val();
                self.w.next.locked = true;
                if self.turn_top.val() {
                    self.w.next.turn = self.one.val();
                }
            }
        }
        // A removal's second pass releases the lock (the link rule runs on the final count).
        self.unlock.next = self.live.val() & self.dec.q.val().unlock;
        if self.unlock.val() {
            self.w.next.locked = false;
        }
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next.p = self.zero.val();
            self.w.next.locked = false;
            self.w.next.linked = false;
            self.w.next.turn = self.one.val();
        }

        // The leaf's link rule, on the new count: it runs on every task and wherever the count
        // may have changed (a push, a removal's end, new parameters), all known from the pass
        // alone. The entry's part is laid out for depth: each threshold is compared with every
        // count the pass may leave (`p + 1`, `p`, a pop's `p - 1`) at once, each compare meets
        // an enable worked out beside the chains (the pass's kind, the entry's `linked` and
        // `locked`), and the results are or-ed: one LUT after the chains decides each signal,
        // one more whether it goes, and one more writes the entry.
        self.k0.next = self.live.val() & self.dec.q.val().k0;
        self.k1.next = self.live.val() & self.dec.q.val().k1;
        self.p17.narrow.next = self.ctl_table.rd_data.val().p;
        self.ge_p.next = self.e.val().p >= self.dec.q.val().ge_p_at;
        self.ge_z.next = self.e.val().p >= self.port.up.pass.val().link_at;
        self.ge_m.next = self.p17.wide.val() >= self.dec.q.val().ge_m_at;
        self.le_p.next = self.e.val().p < self.port.up.pass.val().unlink_at;
        self.le_z.next = self.e.val().p <= self.port.up.pass.val().unlink_at;
        self.le_m.next = self.p17.wide.val() <= self.dec.q.val().le_m_at;
        self.sel_p.next = self.k0.val() & !self.k1.val();
        self.sel_m.next = self.k1.val() & !self.k0.val() & !self.e.val().locked;
        self.sel_z.next = self.k1.val() & (self.k0.val() | self.e.val().locked);
        self.stamps.next = self.live.val() & self.dec.q.val().stamps;
        self.add_p_cut.next = !self.e.val().linked & self.sel_p.val();
        self.add_m_cut.next = !self.e.val().linked & self.sel_m.val();
        self.add_z_cut.next = !self.e.val().linked & self.sel_z.val();
        self.rem_p_cut.next = self.e.val().linked & self.sel_p.val();
        self.rem_m_cut.next = self.e.val().linked & self.sel_m.val();
        self.rem_z_cut.next = self.e.val().linked & self.sel_z.val();
        self.sadd_p_cut.next = self.stamps.val() & !self.e.val().linked & self.sel_p.val();
        self.sadd_m_cut.next = self.stamps.val() & !self.e.val().linked & self.sel_m.val();
        self.sadd_z_cut.next = self.stamps.val() & !self.e.val().linked & self.sel_z.val();
        self.srem_p_cut.next = self.stamps.val() & self.e.val().linked & self.sel_p.val();
        self.srem_m_cut.next = self.stamps.val() & self.e.val().linked & self.sel_m.val();
        self.srem_z_cut.next = self.stamps.val() & self.e.val().linked & self.sel_z.val();
        // The repair (a task from this pool's spine, `repair_gap` after the last idle message):
        // a task's rule compares `p - 1`, or `p` when the list is locked.
        self.fa_m_cut.next = self.live.val()
            & self.dec.q.val().repair_nq
            & self.e.val().linked
            & !self.e.val().locked;
        self.fa_z_cut.next = self.live.val()
            & self.dec.q.val().repair_nq
            & self.e.val().linked
            & self.e.val().locked;
        self.fr_m_cut.next = self.live.val()
            & self.dec.q.val().repair_q
            & !self.e.val().linked
            & !self.e.val().locked;
        self.fr_z_cut.next = self.live.val()
            & self.dec.q.val().repair_q
            & !self.e.val().linked
            & self.e.val().locked;
        self.ssig_cut.next = self.stamps.val()
            & (self.port.up.pass.val().sig_idle_add | self.port.up.pass.val().sig_idle_remove);
        // Link at `p >= link_at`, unlink at `p <= unlink_at`, else re-send what the spine's flag
        // shows was lost.
        self.add_cut.next = (self.add_p_cut.val() & self.ge_p.val())
            | (self.add_m_cut.val() & self.ge_m.val())
            | (self.add_z_cut.val() & self.ge_z.val());
        self.remove_cut.next = (self.rem_p_cut.val() & self.le_p.val())
            | (self.rem_m_cut.val() & self.le_m.val())
            | (self.rem_z_cut.val() & self.le_z.val());
        self.stamp_add_cut.next = (self.sadd_p_cut.val() & self.ge_p.val())
            | (self.sadd_m_cut.val() & self.ge_m.val())
            | (self.sadd_z_cut.val() & self.ge_z.val());
        self.stamp_remove_cut.next = (self.srem_p_cut.val() & self.le_p.val())
            | (self.srem_m_cut.val() & self.le_m.val())
            | (self.srem_z_cut.val() & self.le_z.val());
        self.fix_add_cut.next =
            (self.fa_m_cut.val() & !self.le_m.val()) | (self.fa_z_cut.val() & !self.le_z.val());
        self.fix_remove_cut.next =
            (self.fr_m_cut.val() & !self.ge_m.val()) | (self.fr_z_cut.val() & !self.ge_z.val());
        // `time - signaled >= gap` (32 bits, wrapping) without the difference: when `time - gap`
        // does not wrap, a `signaled` at or before it, or after `time` (a whole wrap ago), is far
        // enough; when it wraps, only one both after `time` and at or before `time - gap` (mod
        // 2^32) is. Each compare is one carry chain on the entry, beside the others.
        self.old.next = self.e.val().signaled <= self.dec.q.val().time_gap;
        self.ahead.next = self.e.val().signaled > self.port.up.pass.val().time;
        self.quiet_cut.next = (self.old.val() & self.ahead.val())
            | (!self.dec.q.val().wrap & (self.old.val() | self.ahead.val()));
        if self.add_cut.val() {
            self.w.next.linked = true;
        }
        if self.remove_cut.val() {
            self.w.next.linked = false;
        }
        // A packet's pass stamps `signaled` when the rule signals, when the pass carries a
        // signal, or when a repair goes (a repair is a task's: it always stamps).
        self.w.next.signaled = self.e.val().signaled;
        if self.ssig_cut.val()
            | self.stamp_add_cut.val()
            | self.stamp_remove_cut.val()
            | (self.quiet_cut.val() & (self.fix_add_cut.val() | self.fix_remove_cut.val()))
        {
            self.w.next.signaled = self.port.up.pass.val().time;
        }
        self.out.d.next.sig_idle_add = self.port.up.pass.val().sig_idle_add
            | self.add_cut.val()
            | (self.quiet_cut.val() & self.fix_add_cut.val());
        self.out.d.next.sig_idle_remove = self.port.up.pass.val().sig_idle_remove
            | self.remove_cut.val()
            | (self.quiet_cut.val() & self.fix_remove_cut.val());
        self.out.d.next.repair = self.port.up.pass.val().repair
            | (self.quiet_cut.val() & (self.fix_add_cut.val() | self.fix_remove_cut.val()));
        self.ctl_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.ctl_table.rb.val();
        self.port.rb_hit.next = self.ctl_table.rb_hit.val();
    }
}
