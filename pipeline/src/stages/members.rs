//! Stages 5 and 6: `members1[base + r1]` and `members2[base + r2]`, the pool's nodes, one copy per
//! random sample (Algorithm 2 reads one random index from each copy).
//!
//! A task off the idle path reads its sample into `a` (copy 1) or `b` (copy 2); a NEW_TASK_RANDOM
//! takes copy 1's sample as its node. Both copies take the same writes: a node added at member slot
//! `n`, and a removal's last member moved into the freed slot.

use crate::phv::{NodeRefEntry, Phv};
use crate::readback::{RB_BITS, ReadPort};
use crate::table::RmwTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MembersStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub pass_in: Signal<In, Phv>,
    pub pass_out: Signal<Out, Phv>,
    /// The last read's entry, and whether the read was this table's (`readback.rs`).
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub rb_hit: Signal<Out, Bit>,
    rp: ReadPort<NodeRefEntry>,
    member_table: RmwTable<NodeRefEntry, N>,
    s1: DFF<Phv>,
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
            pass_in: Default::default(),
            pass_out: Default::default(),
            rb: Default::default(),
            rb_hit: Default::default(),
            rp: ReadPort::new(
                if first {
                    Stage::Members1
                } else {
                    Stage::Members2
                },
                N,
            ),
            member_table: Default::default(),
            s1: Default::default(),
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
        dff_setup!(self, clock, s1, out);
        clock!(self, clock, member_table, rp);
        // Cycle 0: a task's sample, or a control pass's member slot.
        self.sample_in.next = self.pass_in.val().r2.get_bits::<N>(0);
        if self.first.val() {
            self.sample_in.next = self.pass_in.val().r1.get_bits::<N>(0);
        }
        if self.pass_in.val().is_ctl_add | self.pass_in.val().is_ctl_remove {
            self.sample_in.next = self.pass_in.val().slot.get_bits::<N>(0);
        }
        // base + index < 2^N by configuration: the sum is taken in N bits.
        self.member_table.rd_addr.next =
            self.pass_in.val().base.get_bits::<N>(0) + self.sample_in.val();
        if self.pass_in.val().is_ctl_read {
            self.member_table.rd_addr.next = self.pass_in.val().rd_index.get_bits::<N>(0);
        }
        self.s1.d.next = self.pass_in.val();
        // Cycle 1.
        self.out.d.next = self.s1.q.val();
        self.w.next = self.member_table.rd_data.val();
        self.member_table.wr_en.next = false;
        self.member_table.wr_addr.next =
            self.s1.q.val().base.get_bits::<N>(0) + self.s1.q.val().r2.get_bits::<N>(0);
        if self.first.val() {
            self.member_table.wr_addr.next =
                self.s1.q.val().base.get_bits::<N>(0) + self.s1.q.val().r1.get_bits::<N>(0);
        }
        if self.s1.q.val().is_ctl_add | self.s1.q.val().is_ctl_remove {
            self.member_table.wr_addr.next =
                self.s1.q.val().base.get_bits::<N>(0) + self.s1.q.val().slot.get_bits::<N>(0);
        }
        self.live.next = !self.s1.q.val().drop.any();
        if self.live.val() & self.s1.q.val().is_task & !self.s1.q.val().idle {
            if self.first.val() {
                self.out.d.next.a_node = self.member_table.rd_data.val().node;
                self.out.d.next.a_f = self.member_table.rd_data.val().factor;
            } else {
                self.out.d.next.b_node = self.member_table.rd_data.val().node;
                self.out.d.next.b_f = self.member_table.rd_data.val().factor;
            }
        }
        if self.live.val() & self.s1.q.val().is_random & self.first.val() {
            self.out.d.next.chosen = self.member_table.rd_data.val().node;
            self.out.d.next.chosen_f = self.member_table.rd_data.val().factor;
        }
        if self.s1.q.val().is_ctl_add {
            self.w.next.node = self.s1.q.val().src;
            self.w.next.factor = self.s1.q.val().factor;
            self.member_table.wr_en.next = true;
        }
        if self.s1.q.val().is_ctl_remove & (self.s1.q.val().mv_node != self.s1.q.val().src) {
            self.w.next.node = self.s1.q.val().mv_node;
            self.w.next.factor = self.s1.q.val().mv_f;
            self.member_table.wr_en.next = true;
        }
        self.member_table.wr_data.next = self.w.val();
        self.pass_out.next = self.out.q.val();
        // Reads (`readback.rs`): keep the entry; nothing is written.
        self.rp.read.next = self.s1.q.val().is_ctl_read;
        self.rp.table_no.next = self.s1.q.val().rd_table;
        self.rp.index.next = self.s1.q.val().rd_index;
        self.rp.entry.next = self.member_table.rd_data.val();
        if self.s1.q.val().is_ctl_read {
            self.member_table.wr_en.next = false;
        }
        self.rb.next = self.rp.rb.val();
        self.rb_hit.next = self.rp.hit.val();
    }
}
