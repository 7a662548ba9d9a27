//! Stage 2: `idleCtl[pool]`: the idle list's pointer `p`, the removal lock and (leaf) the link to
//! the spine's idle list (Algorithm 1; §3.4 and §A.3 for the link rule and its repair).
//!
//! - A task takes the idle path when `p > 0` and the lock is free; a leaf pops (`p -= 1`, position
//!   `p`), a spine only reads (position `p - 1`).
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

use crate::phv::{IdleCtlEntry, Phv, drop_code};
use crate::readback::RB_BITS;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IdleCtlStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass entering next cycle (the previous stage's `pass_next`): its index goes to the
    /// table now.
    pub early: Signal<In, Phv>,
    /// The pass in this stage (the previous stage's `pass_out`).
    pub pass_in: Signal<In, Phv>,
    pub pass_out: Signal<Out, Phv>,
    /// What `pass_out` will be next cycle (the next stage's `early`).
    pub pass_next: Signal<Out, Phv>,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The last read's entry, and whether the read was this table's (`readback.rs`).
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub rb_hit: Signal<Out, Bit>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<P>>,
    ctl_table: StageTable<IdleCtlEntry, P>,
    out: DFF<Phv>,
    e: Signal<Local, IdleCtlEntry>,
    w: Signal<Local, IdleCtlEntry>,
    live: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    unlock: Signal<Local, Bit>,
    from_spine: Signal<Local, Bit>,
    /// The count less and more one (wrapping; used where the count is not zero, and by a push).
    p_less: Signal<Local, Bits<16>>,
    p_more: Signal<Local, Bits<16>>,
    /// Microseconds since the pool's last idle message (wrapping), and whether a repair may go.
    since: Signal<Local, Bits<32>>,
    gap: Signal<Local, Bits<32>>,
    quiet: Signal<Local, Bit>,
    /// The rule runs on a packet's pass (a task's first pass, an idleAdd's commit): its signal
    /// stamps.
    stamps: Signal<Local, Bit>,
    /// The link rule runs on this pass, and on which count: `k1 k0` is 01 for a push's `p + 1`,
    /// 10 for a task's (`p - 1` if it takes the idle path, else `p`), 11 for `p`, 00 not at all.
    run: Signal<Local, Bit>,
    k0: Signal<Local, Bit>,
    k1: Signal<Local, Bit>,
    /// The thresholds against each candidate count, each one compare on the entry's `p`: `_p`
    /// for `p + 1`, `_z` for `p`, `_m` for a task's pop (`p - 1`, or `p` when it is zero):
    /// `p - 1 >= link_at` is `p > link_at`, and `p - 1 <= unlink_at` is `p <= unlink_at + 1`.
    ge_p: Signal<Local, Bit>,
    ge_z: Signal<Local, Bit>,
    ge_m: Signal<Local, Bit>,
    le_p: Signal<Local, Bit>,
    le_z: Signal<Local, Bit>,
    le_m: Signal<Local, Bit>,
    link_zero: Signal<Local, Bit>,
    unlink_max: Signal<Local, Bit>,
    unlink_more: Signal<Local, Bits<16>>,
    /// The new count against the thresholds (false when the rule does not run).
    ge: Signal<Local, Bit>,
    le: Signal<Local, Bit>,
    /// A repair is possible: the rule runs on a task from this pool's spine, with or without a
    /// queue.
    repair_q: Signal<Local, Bit>,
    repair_nq: Signal<Local, Bit>,
    /// The link rule's signals, and the repair's (when it may go: `quiet`).
    add: Signal<Local, Bit>,
    remove: Signal<Local, Bit>,
    fix_add: Signal<Local, Bit>,
    fix_remove: Signal<Local, Bit>,
    /// The entry's `signaled` after the link rule, and after the repair.
    signaled: Signal<Local, Bits<32>>,
    signaled_fix: Signal<Local, Bits<32>>,
    is_leaf: Constant<Bit>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    ones: Constant<Bits<16>>,
    code_locked: Constant<Bits<4>>,
    code_not_member: Constant<Bits<4>>,
}

impl<const P: usize> IdleCtlStage<P> {
    pub fn new(is_leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            early: Default::default(),
            pass_in: Default::default(),
            pass_out: Default::default(),
            pass_next: Default::default(),
            early_unused: Default::default(),
            rb: Default::default(),
            rb_hit: Default::default(),
            no_off: Constant::new(0.into()),
            ctl_table: StageTable::new(Stage::IdleCtl),
            out: Default::default(),
            e: Default::default(),
            w: Default::default(),
            live: Default::default(),
            push: Default::default(),
            take: Default::default(),
            unlock: Default::default(),
            from_spine: Default::default(),
            p_less: Default::default(),
            p_more: Default::default(),
            since: Default::default(),
            gap: Default::default(),
            quiet: Default::default(),
            stamps: Default::default(),
            run: Default::default(),
            k0: Default::default(),
            k1: Default::default(),
            ge_p: Default::default(),
            ge_z: Default::default(),
            ge_m: Default::default(),
            le_p: Default::default(),
            le_z: Default::default(),
            le_m: Default::default(),
            link_zero: Default::default(),
            unlink_max: Default::default(),
            unlink_more: Default::default(),
            ge: Default::default(),
            le: Default::default(),
            repair_q: Default::default(),
            repair_nq: Default::default(),
            add: Default::default(),
            remove: Default::default(),
            fix_add: Default::default(),
            fix_remove: Default::default(),
            signaled: Default::default(),
            signaled_fix: Default::default(),
            is_leaf: Constant::new(is_leaf),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            ones: Constant::new(0xffff.into()),
            code_locked: Constant::new(drop_code(DropReason::IdleRemoveLocked).into()),
            code_not_member: Constant::new(drop_code(DropReason::IdleRemoveNotMember).into()),
        }
    }
}

impl<const P: usize> Logic for IdleCtlStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, ctl_table);
        self.early_unused.next = self.early.val();
        // The entering pass's index (`early`).
        self.ctl_table.rd_off.next = self.no_off.val();
        self.ctl_table.rd_same.next = false;
        self.ctl_table.rd_addr.next = self.early.val().pool.get_bits::<P>(0);
        self.ctl_table.read.next = self.early.val().is_ctl_read;
        self.ctl_table.read_table.next = self.early.val().rd_table;
        self.ctl_table.read_index.next = self.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.e.next = self.ctl_table.rd_data.val();
        self.w.next = self.ctl_table.rd_data.val();
        self.out.d.next = self.pass_in.val();
        // The entry is written back on every pass (unchanged unless a rule below changes it), so
        // the table's forwarding does not wait for the decisions below.
        self.ctl_table.wr_en.next = true;
        self.live.next = !self.pass_in.val().drop.any();
        self.p_less.next = self.e.val().p - self.one.val();
        self.p_more.next = self.e.val().p + self.one.val();

        // A task: the idle path, when the list has a node and no removal holds it.
        if self.live.val()
            & self.pass_in.val().is_task
            & self.e.val().p.any()
            & !self.e.val().locked
        {
            self.out.d.next.idle = true;
            self.out.d.next.pos = self.p_less.val();
            if self.is_leaf.val() {
                self.w.next.p = self.p_less.val();
            }
        }
        // Pushes: an idleAdd's commit, a leaf's new worker, a removal that found its node absent.
        self.push.next = self.live.val()
            & (self.pass_in.val().is_add_commit
                | (self.pass_in.val().is_ctl_add & self.is_leaf.val())
                | ((self.pass_in.val().is_remove_finish | self.pass_in.val().is_ctl_remove2)
                    & self.pass_in.val().fin_abort));
        if self.push.val() {
            self.out.d.next.pos = self.e.val().p;
            self.w.next.p = self.p_more.val();
        }
        // A removal's first pass: take the lock and the top.
        self.take.next = self.live.val()
            & (self.pass_in.val().is_idle_remove | self.pass_in.val().is_ctl_remove);
        if self.take.val() {
            if self.e.val().locked {
                self.out.d.next.drop = self.code_locked.val();
                self.out.d.next.is_idle_remove = false;
            } else if !self.e.val().p.any() {
                // Nothing to take: a network removal is dropped, a control removal goes on.
                if self.pass_in.val().is_idle_remove {
                    self.out.d.next.drop = self.code_not_member.val();
                    self.out.d.next.is_idle_remove = false;
                }
            } else {
                self.out.d.next.idle = true;
                self.out.d.next.pos = self.p_less.val();
                self.w.next.p = self.p_less.val();
                self.w.next.locked = true;
            }
        }
        // A removal's second pass releases the lock (the link rule runs on the final count).
        self.unlock.next = self.live.val()
            & (self.pass_in.val().is_remove_finish | self.pass_in.val().is_ctl_remove2)
            & (self.pass_in.val().fin_unlock
                | self.pass_in.val().fin_move
                | self.pass_in.val().fin_abort);
        if self.unlock.val() {
            self.w.next.locked = false;
        }
        if self.pass_in.val().is_ctl_pool {
            self.w.next.p = self.zero.val();
            self.w.next.locked = false;
            self.w.next.linked = false;
        }

        // The leaf's link rule, on the new count: it runs on every task and wherever the count
        // may have changed (a push, a removal's end, new parameters), all known from the pass
        // alone. The entry's part is laid out for depth: each threshold is compared with every
        // count the pass may leave (`p + 1`, `p`, a pop's `p - 1`) at once, one LUT picks the
        // compare that applies, and one more decides the signals.
        self.run.next = self.is_leaf.val()
            & self.pass_in.val().spine_ok
            & self.live.val()
            & (self.pass_in.val().is_task
                | self.push.val()
                | self.unlock.val()
                | self.pass_in.val().is_ctl_params);
        self.k0.next = self.run.val() & !self.pass_in.val().is_task;
        self.k1.next = self.run.val() & !self.push.val();
        self.link_zero.next = !self.pass_in.val().link_at.any();
        self.unlink_max.next = self.pass_in.val().unlink_at == self.ones.val();
        self.unlink_more.next = self.pass_in.val().unlink_at + self.one.val();
        self.ge_p.next = self.p_more.val() >= self.pass_in.val().link_at;
        self.ge_z.next = self.e.val().p >= self.pass_in.val().link_at;
        self.ge_m.next = self.link_zero.val() | (self.e.val().p > self.pass_in.val().link_at);
        self.le_p.next = self.p_more.val() <= self.pass_in.val().unlink_at;
        self.le_z.next = self.e.val().p <= self.pass_in.val().unlink_at;
        self.le_m.next = self.unlink_max.val() | (self.e.val().p <= self.unlink_more.val());
        self.ge.next = false;
        self.le.next = false;
        if self.k0.val() & !self.k1.val() {
            self.ge.next = self.ge_p.val();
            self.le.next = self.le_p.val();
        }
        if self.k1.val() & !self.k0.val() {
            self.ge.next = self.ge_m.val();
            self.le.next = self.le_m.val();
            if self.e.val().locked {
                self.ge.next = self.ge_z.val();
                self.le.next = self.le_z.val();
            }
        }
        if self.k1.val() & self.k0.val() {
            self.ge.next = self.ge_z.val();
            self.le.next = self.le_z.val();
        }
        // The repair (a task from this pool's spine, `repair_gap` after the last idle message):
        // `since >= gap` on 32 bits, the gap widened by a product with one (rust-hdl's only
        // widening that lints clean; synthesis keeps no multiplier).
        self.from_spine.next =
            self.pass_in.val().is_task & (self.pass_in.val().src == self.pass_in.val().spine_id);
        self.repair_q.next = self.run.val() & self.from_spine.val() & self.pass_in.val().qlen.any();
        self.repair_nq.next =
            self.run.val() & self.from_spine.val() & !self.pass_in.val().qlen.any();
        self.since.next = self.pass_in.val().time - self.e.val().signaled;
        self.gap.next = self.pass_in.val().repair_gap * self.one.val();
        self.quiet.next = self.since.val() >= self.gap.val();
        // Link at `p >= link_at`, unlink at `p <= unlink_at`, else re-send what the spine's flag
        // shows was lost. Everything is formed with and without the repair, and the repair's
        // compare (`quiet`, a carry chain after the entry's) picks last.
        self.add.next = !self.e.val().linked & self.ge.val();
        self.remove.next = self.e.val().linked & self.le.val();
        self.fix_add.next = self.e.val().linked & !self.le.val() & self.repair_nq.val();
        self.fix_remove.next = !self.e.val().linked & !self.ge.val() & self.repair_q.val();
        if self.add.val() {
            self.w.next.linked = true;
        }
        if self.remove.val() {
            self.w.next.linked = false;
        }
        self.stamps.next =
            self.run.val() & (self.pass_in.val().is_task | self.pass_in.val().is_add_commit);
        self.signaled.next = self.e.val().signaled;
        if self.stamps.val()
            & (self.add.val()
                | self.remove.val()
                | self.pass_in.val().sig_idle_add
                | self.pass_in.val().sig_idle_remove)
        {
            self.signaled.next = self.pass_in.val().time;
        }
        self.signaled_fix.next = self.signaled.val();
        if self.stamps.val() & (self.fix_add.val() | self.fix_remove.val()) {
            self.signaled_fix.next = self.pass_in.val().time;
        }
        self.w.next.signaled = self.signaled.val();
        if self.add.val() {
            self.out.d.next.sig_idle_add = true;
        }
        if self.remove.val() {
            self.out.d.next.sig_idle_remove = true;
        }
        if self.quiet.val() {
            self.w.next.signaled = self.signaled_fix.val();
            if self.fix_add.val() {
                self.out.d.next.sig_idle_add = true;
                self.out.d.next.repair = true;
            }
            if self.fix_remove.val() {
                self.out.d.next.sig_idle_remove = true;
                self.out.d.next.repair = true;
            }
        }
        self.ctl_table.wr_data.next = self.w.val();
        self.pass_out.next = self.out.q.val();
        self.pass_next.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.rb.next = self.ctl_table.rb.val();
        self.rb_hit.next = self.ctl_table.rb_hit.val();
    }
}
