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
    changed: Signal<Local, Bit>,
    from_spine: Signal<Local, Bit>,
    /// Microseconds since the pool's last idle message (wrapping), and whether a repair may go.
    since: Signal<Local, Bits<32>>,
    quiet: Signal<Local, Bit>,
    /// The pass is a packet's (a task's first pass, an idleAdd's commit): its signal stamps.
    stamps: Signal<Local, Bit>,
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
            changed: Default::default(),
            from_spine: Default::default(),
            since: Default::default(),
            quiet: Default::default(),
            stamps: Default::default(),
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
        dff_setup!(self, clock, out);
        clock!(self, clock, ctl_table);
        self.early_unused.next = self.early.val();
        // The entering pass's index (`early`).
        self.ctl_table.rd_off.next = self.no_off.val();
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
        self.changed.next = false;

        // A task: the idle path, when the list has a node and no removal holds it.
        if self.live.val()
            & self.pass_in.val().is_task
            & self.e.val().p.any()
            & !self.e.val().locked
        {
            self.out.d.next.idle = true;
            self.out.d.next.pos = self.e.val().p - self.one.val();
            if self.is_leaf.val() {
                self.w.next.p = self.e.val().p - self.one.val();
                self.changed.next = true;
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
            self.w.next.p = self.e.val().p + self.one.val();
            self.changed.next = true;
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
                self.out.d.next.pos = self.e.val().p - self.one.val();
                self.w.next.p = self.e.val().p - self.one.val();
                self.w.next.locked = true;
            }
        }
        // A removal's second pass releases the lock (the link rule runs on the final count).
        if self.live.val()
            & (self.pass_in.val().is_remove_finish | self.pass_in.val().is_ctl_remove2)
            & (self.pass_in.val().fin_unlock
                | self.pass_in.val().fin_move
                | self.pass_in.val().fin_abort)
        {
            self.w.next.locked = false;
            self.changed.next = true;
        }
        if self.pass_in.val().is_ctl_pool {
            self.w.next.p = self.zero.val();
            self.w.next.locked = false;
            self.w.next.linked = false;
        }
        if self.pass_in.val().is_ctl_params {
            self.changed.next = true;
        }

        // The leaf's link rule, on the new count.
        self.from_spine.next =
            self.pass_in.val().is_task & (self.pass_in.val().src == self.pass_in.val().spine_id);
        self.since.next = self.pass_in.val().time - self.e.val().signaled;
        self.quiet.next = self.since.val().get_bits::<16>(16).any()
            | (self.since.val().get_bits::<16>(0) >= self.pass_in.val().repair_gap);
        self.stamps.next = self.pass_in.val().is_task | self.pass_in.val().is_add_commit;
        if self.is_leaf.val()
            & self.pass_in.val().spine_ok
            & self.live.val()
            & (self.changed.val() | self.pass_in.val().is_task)
        {
            if !self.e.val().linked & (self.w.val().p >= self.pass_in.val().link_at) {
                self.w.next.linked = true;
                self.out.d.next.sig_idle_add = true;
            } else if self.e.val().linked & (self.w.val().p <= self.pass_in.val().unlink_at) {
                self.w.next.linked = false;
                self.out.d.next.sig_idle_remove = true;
            } else if self.from_spine.val() & self.quiet.val() {
                if self.pass_in.val().qlen.any() & !self.e.val().linked {
                    self.out.d.next.sig_idle_remove = true;
                    self.out.d.next.repair = true;
                }
                if !self.pass_in.val().qlen.any() & self.e.val().linked {
                    self.out.d.next.sig_idle_add = true;
                    self.out.d.next.repair = true;
                }
            }
            if self.stamps.val()
                & (self.out.d.val().sig_idle_add | self.out.d.val().sig_idle_remove)
            {
                self.w.next.signaled = self.pass_in.val().time;
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
