//! Stages 5 and 6: `members1[base + r1]` and `members2[base + r2]`, the pool's nodes, one copy per
//! random sample (Algorithm 2 reads one random index from each copy).
//!
//! A task off the idle path reads its sample into `a` (copy 1) or `b` (copy 2); a NEW_TASK_RANDOM
//! takes copy 1's sample as its node. Both copies take the same writes: a node added at member slot
//! `n`, and a removal's last member moved into the freed slot.

use crate::entries::NodeRefEntry;
use crate::phv::Phv;
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MembersStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    pub(super) member_table: StageTable<NodeRefEntry, N>,
    out: DFF<Phv>,
    w: Signal<Local, NodeRefEntry>,
    sample_in: Signal<Local, Bits<N>>,
    live: Signal<Local, Bit>,
    /// Copy 1 (sample `r1`, into `a`) or copy 2 (sample `r2`, into `b`).
    first: Constant<Bit>,
}

impl<const N: usize> MembersStage<N> {
    pub fn new(first: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            // Copy 1's entry goes only into the descriptor: its forwarding check can wait for
            // cycle 1. Copy 2's entry is `loadList1`'s index in the same cycle: its check stays
            // on the two terms, in cycle 0.
            member_table: if first {
                StageTable::new(Stage::Members1).late_check(true)
            } else {
                StageTable::new(Stage::Members2).sum_index()
            },
            out: Default::default(),
            w: Default::default(),
            sample_in: Default::default(),
            live: Default::default(),
            first: Constant::new(first),
        }
    }
}

impl<const N: usize> Logic for MembersStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, member_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`): a task's sample, or a control pass's member slot.
        self.sample_in.next = self.port.up.early.val().r2.get_bits::<N>(0);
        if self.first.val() {
            self.sample_in.next = self.port.up.early.val().r1.get_bits::<N>(0);
        }
        if self.port.up.early.val().is_ctl_add | self.port.up.early.val().is_ctl_remove {
            self.sample_in.next = self.port.up.early.val().slot.get_bits::<N>(0);
        }
        // base + index < 2^N by configuration: the sum is taken in N bits, by the table, which
        // checks forwarding on the two terms (copy 2) or in the next cycle on the address read
        // (copy 1: the sample comes late from `idleIndex`).
        self.member_table.rd_addr.next = self.port.up.early.val().base.get_bits::<N>(0);
        self.member_table.rd_off.next = self.sample_in.val();
        self.member_table.rd_same.next = false;
        self.member_table.read.next = self.port.up.early.val().is_ctl_read;
        self.member_table.read_table.next = self.port.up.early.val().rd_table;
        self.member_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.out.d.next = self.port.up.pass.val();
        self.w.next = self.member_table.rd_data.val();
        self.member_table.wr_en.next = false;
        self.live.next = !self.port.up.pass.val().drop.any();
        if self.live.val() & self.port.up.pass.val().is_task & !self.port.up.pass.val().idle {
            if self.first.val() {
                self.out.d.next.a_node = self.member_table.rd_data.val().node;
                self.out.d.next.a_f = self.member_table.rd_data.val().factor;
            } else {
                self.out.d.next.b_node = self.member_table.rd_data.val().node;
                self.out.d.next.b_f = self.member_table.rd_data.val().factor;
            }
        }
        if self.live.val() & self.port.up.pass.val().is_random & self.first.val() {
            self.out.d.next.chosen = self.member_table.rd_data.val().node;
            self.out.d.next.chosen_f = self.member_table.rd_data.val().factor;
        }
        if self.port.up.pass.val().is_ctl_add {
            self.w.next.node = self.port.up.pass.val().src;
            self.w.next.factor = self.port.up.pass.val().factor;
            self.member_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove
            & (self.port.up.pass.val().mv_node != self.port.up.pass.val().src)
        {
            self.w.next.node = self.port.up.pass.val().mv_node;
            self.w.next.factor = self.port.up.pass.val().mv_f;
            self.member_table.wr_en.next = true;
        }
        self.member_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.member_table.rb.val();
        self.port.rb_hit.next = self.member_table.rb_hit.val();
    }
}
