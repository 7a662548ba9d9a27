//! Stage 3: `idleList[base + pos]` (Algorithm 1).
//!
//! A task on the idle path reads the node at the position stage 2 chose (a leaf's pop, a spine's
//! pick); a removal's first pass reads the former top (`last`). Pushes write a node at the new top:
//! an idleAdd's commit and a leaf's new worker write `src`, an aborted removal writes `last` back.
//! A removal's second pass writes `last` into the hole (`idleList[removedIdx] <- lastNode`).

use crate::phv::{NodeRefEntry, Phv};
use crate::readback::RB_BITS;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IdleListStage<const N: usize> {
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
    list_table: StageTable<NodeRefEntry, N>,
    out: DFF<Phv>,
    w: Signal<Local, NodeRefEntry>,
    live: Signal<Local, Bit>,
    second: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
}

impl<const N: usize> IdleListStage<N> {
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
            list_table: StageTable::new(Stage::IdleList).sum_index(),
            out: Default::default(),
            w: Default::default(),
            live: Default::default(),
            second: Default::default(),
            is_leaf: Constant::new(is_leaf),
        }
    }
}

impl<const N: usize> Logic for IdleListStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, list_table);
        self.early_unused.next = self.early.val();
        // The entering pass's index (`early`).
        // base + pos < 2^N by configuration: the sum is taken in N bits, by the table, which
        // checks forwarding on the two terms (`pos` comes late, from `idleCtl`'s entry).
        self.list_table.rd_addr.next = self.early.val().base.get_bits::<N>(0);
        self.list_table.rd_off.next = self.early.val().pos.get_bits::<N>(0);
        self.list_table.rd_same.next = false;
        self.list_table.read.next = self.early.val().is_ctl_read;
        self.list_table.read_table.next = self.early.val().rd_table;
        self.list_table.read_index.next = self.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.out.d.next = self.pass_in.val();
        self.list_table.wr_en.next = false;
        self.w.next = self.list_table.rd_data.val();
        self.live.next = !self.pass_in.val().drop.any();
        self.second.next = self.pass_in.val().is_remove_finish | self.pass_in.val().is_ctl_remove2;
        if self.live.val() & self.pass_in.val().idle {
            if self.pass_in.val().is_task {
                self.out.d.next.chosen = self.list_table.rd_data.val().node;
                self.out.d.next.chosen_f = self.list_table.rd_data.val().factor;
            }
            if self.pass_in.val().is_idle_remove | self.pass_in.val().is_ctl_remove {
                self.out.d.next.last_node = self.list_table.rd_data.val().node;
                self.out.d.next.last_f = self.list_table.rd_data.val().factor;
            }
        }
        if self.live.val()
            & (self.pass_in.val().is_add_commit
                | (self.pass_in.val().is_ctl_add & self.is_leaf.val()))
        {
            self.w.next.node = self.pass_in.val().src;
            self.w.next.factor = self.pass_in.val().factor;
            self.list_table.wr_en.next = true;
        }
        if self.live.val()
            & self.second.val()
            & (self.pass_in.val().fin_abort | self.pass_in.val().fin_move)
        {
            self.w.next.node = self.pass_in.val().last_node;
            self.w.next.factor = self.pass_in.val().last_f;
            self.list_table.wr_en.next = true;
        }
        self.list_table.wr_data.next = self.w.val();
        self.pass_out.next = self.out.q.val();
        self.pass_next.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.rb.next = self.list_table.rb.val();
        self.rb_hit.next = self.list_table.rb_hit.val();
    }
}
