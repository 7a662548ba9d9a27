//! Stage 3: `idleList[base + pos]` (Algorithm 1).
//!
//! A task on the idle path reads the node at the position stage 2 chose (a leaf's pop, a spine's
//! pick); a removal's first pass reads the former top (`last`). Pushes write a node at the new top:
//! an idleAdd's commit and a leaf's new worker write `src`, an aborted removal writes `last` back.
//! A removal's second pass writes `last` into the hole (`idleList[removedIdx] <- lastNode`).

use crate::phv::{NodeRefEntry, Phv};
use crate::readback::{RB_BITS, ReadPort};
use crate::table::RmwTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IdleListStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub pass_in: Signal<In, Phv>,
    pub pass_out: Signal<Out, Phv>,
    /// The last read's entry, and whether the read was this table's (`readback.rs`).
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub rb_hit: Signal<Out, Bit>,
    rp: ReadPort<NodeRefEntry>,
    list_table: RmwTable<NodeRefEntry, N>,
    s1: DFF<Phv>,
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
            pass_in: Default::default(),
            pass_out: Default::default(),
            rb: Default::default(),
            rb_hit: Default::default(),
            rp: ReadPort::new(Stage::IdleList, N),
            list_table: Default::default(),
            s1: Default::default(),
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
        dff_setup!(self, clock, s1, out);
        clock!(self, clock, list_table, rp);
        // Cycle 0.
        // base + pos < 2^N by configuration: the sum is taken in N bits.
        self.list_table.rd_addr.next =
            self.pass_in.val().base.get_bits::<N>(0) + self.pass_in.val().pos.get_bits::<N>(0);
        if self.pass_in.val().is_ctl_read {
            self.list_table.rd_addr.next = self.pass_in.val().rd_index.get_bits::<N>(0);
        }
        self.s1.d.next = self.pass_in.val();
        // Cycle 1.
        self.out.d.next = self.s1.q.val();
        self.list_table.wr_addr.next =
            self.s1.q.val().base.get_bits::<N>(0) + self.s1.q.val().pos.get_bits::<N>(0);
        self.list_table.wr_en.next = false;
        self.w.next = self.list_table.rd_data.val();
        self.live.next = !self.s1.q.val().drop.any();
        self.second.next = self.s1.q.val().is_remove_finish | self.s1.q.val().is_ctl_remove2;
        if self.live.val() & self.s1.q.val().idle {
            if self.s1.q.val().is_task {
                self.out.d.next.chosen = self.list_table.rd_data.val().node;
                self.out.d.next.chosen_f = self.list_table.rd_data.val().factor;
            }
            if self.s1.q.val().is_idle_remove | self.s1.q.val().is_ctl_remove {
                self.out.d.next.last_node = self.list_table.rd_data.val().node;
                self.out.d.next.last_f = self.list_table.rd_data.val().factor;
            }
        }
        if self.live.val()
            & (self.s1.q.val().is_add_commit | (self.s1.q.val().is_ctl_add & self.is_leaf.val()))
        {
            self.w.next.node = self.s1.q.val().src;
            self.w.next.factor = self.s1.q.val().factor;
            self.list_table.wr_en.next = true;
        }
        if self.live.val()
            & self.second.val()
            & (self.s1.q.val().fin_abort | self.s1.q.val().fin_move)
        {
            self.w.next.node = self.s1.q.val().last_node;
            self.w.next.factor = self.s1.q.val().last_f;
            self.list_table.wr_en.next = true;
        }
        self.list_table.wr_data.next = self.w.val();
        self.pass_out.next = self.out.q.val();
        // Reads (`readback.rs`): keep the entry; nothing is written.
        self.rp.read.next = self.s1.q.val().is_ctl_read;
        self.rp.table_no.next = self.s1.q.val().rd_table;
        self.rp.index.next = self.s1.q.val().rd_index;
        self.rp.entry.next = self.list_table.rd_data.val();
        if self.s1.q.val().is_ctl_read {
            self.list_table.wr_en.next = false;
        }
        self.rb.next = self.rp.rb.val();
        self.rb_hit.next = self.rp.hit.val();
    }
}
