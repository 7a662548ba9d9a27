//! Stage 4: `idleIndex[node]`: where a node sits in the idle list, or that its add is pending.
//!
//! - A leaf's pop clears the popped node's entry.
//! - An idleAdd's first pass (TASK_DONE_IDLE at a leaf, IDLE_SIGNAL at a spine) turns an absent
//!   entry into pending and asks for the commit pass; any other entry makes it a duplicate
//!   (`idle_add_duplicate`: a reply's own update still happens, a spine's message is dropped).
//! - A push (commit, a leaf's new worker, an aborted removal's former top) records the position.
//! - A removal's first pass reads the node's position and clears it, and decides the second pass:
//!   only unlock (it was the top), move the former top into the hole, or abort (not in the list).
//! - A removal's second pass records the moved node's new position.

use crate::entries::IdleIndexEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IdleIndexStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<N>>,
    pub(super) index_table: StageTable<IdleIndexEntry, N>,
    out: DFF<Phv>,
    /// The node the pass addresses, cycle 0 and cycle 1.
    who: Signal<Local, Bits<N>>,
    e: Signal<Local, IdleIndexEntry>,
    w: Signal<Local, IdleIndexEntry>,
    live: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    adds: Signal<Local, Bit>,
    takes: Signal<Local, Bit>,
    pushes_src: Signal<Local, Bit>,
    places_last: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
    /// An absent entry (cleared whole, as the model's `IdleIndex::Absent`).
    absent: Constant<IdleIndexEntry>,
    code_duplicate: Constant<Bits<4>>,
    code_not_member: Constant<Bits<4>>,
}

impl<const N: usize> IdleIndexStage<N> {
    pub fn new(is_leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            index_table: StageTable::new(Stage::IdleIndex),
            out: Default::default(),
            who: Default::default(),
            e: Default::default(),
            w: Default::default(),
            live: Default::default(),
            pop: Default::default(),
            adds: Default::default(),
            takes: Default::default(),
            pushes_src: Default::default(),
            places_last: Default::default(),
            is_leaf: Constant::new(is_leaf),
            absent: Constant::new(IdleIndexEntry::default()),
            code_duplicate: Constant::new(drop_code(DropReason::IdleAddDuplicate).into()),
            code_not_member: Constant::new(drop_code(DropReason::IdleRemoveNotMember).into()),
        }
    }
}

impl<const N: usize> Logic for IdleIndexStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, index_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`): the popped node, the former top being placed, or the
        // message's node.
        self.who.next = self.port.up.early.val().src.get_bits::<N>(0);
        if self.port.up.early.val().is_task {
            self.who.next = self.port.up.early.val().chosen.get_bits::<N>(0);
        }
        if (self.port.up.early.val().is_remove_finish | self.port.up.early.val().is_ctl_remove2)
            & (self.port.up.early.val().fin_move | self.port.up.early.val().fin_abort)
        {
            self.who.next = self.port.up.early.val().last_node.get_bits::<N>(0);
        }
        self.index_table.rd_off.next = self.no_off.val();
        self.index_table.rd_same.next = false;
        self.index_table.rd_addr.next = self.who.val();
        self.index_table.read.next = self.port.up.early.val().is_ctl_read;
        self.index_table.read_table.next = self.port.up.early.val().rd_table;
        self.index_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.places_last.next = (self.port.up.pass.val().is_remove_finish
            | self.port.up.pass.val().is_ctl_remove2)
            & (self.port.up.pass.val().fin_move | self.port.up.pass.val().fin_abort);
        self.index_table.wr_en.next = false;
        self.e.next = self.index_table.rd_data.val();
        self.w.next = self.index_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        self.live.next = !self.port.up.pass.val().drop.any();

        // A leaf's pop.
        self.pop.next = self.live.val()
            & self.is_leaf.val()
            & self.port.up.pass.val().is_task
            & self.port.up.pass.val().idle;
        if self.pop.val() {
            self.w.next = self.absent.val();
            self.index_table.wr_en.next = true;
        }
        // An idleAdd's first pass.
        self.adds.next = self.live.val()
            & (self.port.up.pass.val().is_reply_idle | self.port.up.pass.val().is_idle_add);
        if self.adds.val() {
            if self.e.val().member | self.e.val().pending {
                if self.port.up.pass.val().is_idle_add {
                    self.out.d.next.drop = self.code_duplicate.val();
                    self.out.d.next.is_idle_add = false;
                } else {
                    self.out.d.next.sub_drop = self.code_duplicate.val();
                }
            } else {
                self.w.next.pending = true;
                self.index_table.wr_en.next = true;
                self.out.d.next.resubmit = true;
            }
        }
        // Pushes record the new position.
        self.pushes_src.next = self.live.val()
            & (self.port.up.pass.val().is_add_commit
                | (self.port.up.pass.val().is_ctl_add & self.is_leaf.val()));
        if self.pushes_src.val() | (self.live.val() & self.places_last.val()) {
            self.w.next.pending = false;
            self.w.next.member = true;
            self.w.next.pos = self.port.up.pass.val().pos;
            self.index_table.wr_en.next = true;
        }
        if self.live.val() & self.port.up.pass.val().is_ctl_add & !self.is_leaf.val() {
            self.w.next = self.absent.val();
            self.index_table.wr_en.next = true;
        }
        // A removal's first pass (stage 2 took the top: `idle`).
        self.takes.next = self.live.val()
            & (self.port.up.pass.val().is_idle_remove | self.port.up.pass.val().is_ctl_remove)
            & self.port.up.pass.val().idle;
        if self.takes.val() {
            if self.e.val().member {
                self.w.next = self.absent.val();
                self.index_table.wr_en.next = true;
                if self.port.up.pass.val().last_node == self.port.up.pass.val().src {
                    self.out.d.next.fin_unlock = true;
                } else {
                    self.out.d.next.fin_move = true;
                    self.out.d.next.pos = self.e.val().pos;
                }
            } else {
                self.out.d.next.fin_abort = true;
                if self.port.up.pass.val().is_idle_remove {
                    self.out.d.next.sub_drop = self.code_not_member.val();
                }
            }
            self.out.d.next.resubmit = true;
        }
        self.index_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.index_table.rb.val();
        self.port.rb_hit.next = self.index_table.rb_hit.val();
    }
}
