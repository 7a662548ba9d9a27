//! Stage 3: `idleList[base + pos]` (Algorithm 1).
//!
//! A task on the idle path reads the node at the position stage 2 chose (a leaf's pop, a spine's
//! pick); a removal's first pass reads the former top (`last`). Pushes write a node at the new top:
//! an idleAdd's commit and a leaf's new worker write `src`, an aborted removal writes `last` back.
//! A removal's second pass writes `last` into the hole (`idleList[removedIdx] <- lastNode`).
//!
//! Depth: the position comes late (stage 2 picks it after its own table read), so the table's
//! forwarding check is given by this stage on terms ready earlier: `base - 1 + top`, where `top`
//! is the position read plus one as stage 2 has it without arithmetic: the list's pointer for a
//! pop or a take, a spine task's turn (counted from 1). Those are the only passes that use the
//! entry they read; a push or a removal's second pass writes a whole entry and reads nothing of
//! it, so the check's value for them changes nothing.

use crate::entries::NodeRefEntry;
use crate::phv::Phv;
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct IdleListStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    pub(super) list_table: StageTable<NodeRefEntry, N>,
    out: DFF<Phv>,
    /// The index the pass in the stage read, where it writes (the table's own, kept here for the
    /// check).
    at: DFF<Bits<N>>,
    /// The entering pass's `base - 1`, and the check's terms (`RmwTable::sum_index`'s form).
    base_less: Signal<Local, Bits<N>>,
    same_x: Signal<Local, Bits<N>>,
    same_y: Signal<Local, Bits<N>>,
    one_n: Constant<Bits<N>>,
    one5: Constant<Bits<5>>,
    w: Signal<Local, NodeRefEntry>,
    live: Signal<Local, Bit>,
    second: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
}

impl<const N: usize> IdleListStage<N> {
    pub fn new(is_leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            list_table: StageTable::new(Stage::IdleList).given_sum_check(),
            out: Default::default(),
            at: Default::default(),
            base_less: Default::default(),
            same_x: Default::default(),
            same_y: Default::default(),
            one_n: Constant::new(1.into()),
            one5: Constant::new(1.into()),
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
        dff_setup!(self, clock, out, at);
        clock!(self, clock, list_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`).
        // base + pos < 2^N by configuration: the sum is taken in N bits, by the table. The
        // forwarding check, `(base - 1) + top == at` (mod 2^N), is one LUT per bit after the
        // terms and an N-input AND, as in `RmwTable::sum_index`.
        self.list_table.rd_addr.next = self.port.up.early.val().base.get_bits::<N>(0);
        self.list_table.rd_off.next = self.port.up.early.val().pos.get_bits::<N>(0);
        self.at.d.next = self.port.up.early.val().base.get_bits::<N>(0)
            + self.port.up.early.val().pos.get_bits::<N>(0);
        self.base_less.next = self.port.up.early.val().base.get_bits::<N>(0) - self.one_n.val();
        self.same_x.next =
            self.base_less.val() ^ self.port.up.early.val().top.get_bits::<N>(0) ^ self.at.q.val();
        self.same_y.next = ((self.base_less.val() & self.port.up.early.val().top.get_bits::<N>(0))
            | ((self.base_less.val() | self.port.up.early.val().top.get_bits::<N>(0))
                & !self.at.q.val()))
            << self.one5.val();
        self.list_table.rd_same.next = self.same_x.val() == self.same_y.val();
        self.list_table.read.next = self.port.up.early.val().is_ctl_read;
        self.list_table.read_table.next = self.port.up.early.val().rd_table;
        self.list_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.out.d.next = self.port.up.pass.val();
        self.list_table.wr_en.next = false;
        self.w.next = self.list_table.rd_data.val();
        self.live.next = !self.port.up.pass.val().drop.any();
        self.second.next =
            self.port.up.pass.val().is_remove_finish | self.port.up.pass.val().is_ctl_remove2;
        if self.live.val() & self.port.up.pass.val().idle {
            if self.port.up.pass.val().is_task {
                self.out.d.next.chosen = self.list_table.rd_data.val().node;
                self.out.d.next.chosen_f = self.list_table.rd_data.val().factor;
            }
            if self.port.up.pass.val().is_idle_remove | self.port.up.pass.val().is_ctl_remove {
                self.out.d.next.last_node = self.list_table.rd_data.val().node;
                self.out.d.next.last_f = self.list_table.rd_data.val().factor;
            }
        }
        if self.live.val()
            & (self.port.up.pass.val().is_add_commit
                | (self.port.up.pass.val().is_ctl_add & self.is_leaf.val()))
        {
            self.w.next.node = self.port.up.pass.val().src;
            self.w.next.factor = self.port.up.pass.val().factor;
            self.list_table.wr_en.next = true;
        }
        if self.live.val()
            & self.second.val()
            & (self.port.up.pass.val().fin_abort | self.port.up.pass.val().fin_move)
        {
            self.w.next.node = self.port.up.pass.val().last_node;
            self.w.next.factor = self.port.up.pass.val().last_f;
            self.list_table.wr_en.next = true;
        }
        self.list_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.list_table.rb.val();
        self.port.rb_hit.next = self.list_table.rb_hit.val();
    }
}
