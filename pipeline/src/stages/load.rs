//! Stages 7 and 8: `loadList1` and `loadList2` (Algorithm 2), one copy per sample.
//!
//! - A task off the idle path reads sample `a`'s load from copy 1 and sample `b`'s from copy 2;
//!   copy 2 then compares them: the smaller becomes `sel` (kept in `a`, ties to sample 1), the
//!   other `other` (in `b`), and `diff = l_other - l_sel`.
//! - A worker reply (leaf: the queue length) or a loadUpdate (spine: the 16.16 average) sets the
//!   node's load in both copies; a new node starts at 0.
//! - A task's second pass charges the winner (the smaller corrected queue, ties to `sel`) in both
//!   copies: `load += drift_seen + factor`, clamped to `[0, 2^32)` as `Load::corrected` does.

use crate::phv::Phv;
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LoadStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<N>>,
    pub(super) load_table: StageTable<Bits<32>, N>,
    out: DFF<Phv>,
    who: Signal<Local, Bits<N>>,
    who1: Signal<Local, Bits<16>>,
    live: Signal<Local, Bit>,
    sample: Signal<Local, Bit>,
    sets: Signal<Local, Bit>,
    a_wins: Signal<Local, Bit>,
    a_wins1: Signal<Local, Bit>,
    /// The index of the pass in the stage (`who` a cycle ago), and whether `who` equals it,
    /// compared candidate by candidate (`src`, `a_node`, `b_node`) and picked with `who`'s own
    /// choices: the second pass's winner is a compare's chain, which then only picks.
    at: DFF<Bits<N>>,
    same: Signal<Local, Bit>,
    same_src_cut: Signal<Local, Bit>,
    same_a_cut: Signal<Local, Bit>,
    same_b_cut: Signal<Local, Bit>,
    // The second pass's charge: step = drift_seen + factor (saturating), then load + step clamped.
    // The step is a function of the pass's fields alone: it is formed from `early`, a cycle
    // ahead, and registered (`step_r`), so that the cycle of the table read holds one add.
    e_d: Signal<Local, Bits<32>>,
    e_f: Signal<Local, Bits<32>>,
    step: Signal<Local, Bits<32>>,
    step_r: DFF<Bits<32>>,
    w_f: Signal<Local, Bits<32>>,
    sum: Signal<Local, Bits<32>>,
    carry: Signal<Local, Bit>,
    charged: Signal<Local, Bits<32>>,
    l_a: Signal<Local, Bits<32>>,
    l_b: Signal<Local, Bits<32>>,
    first: Constant<Bit>,
    is_leaf: Constant<Bit>,
    int_mask: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    max: Constant<Bits<32>>,
    max_pos: Constant<Bits<32>>,
}

impl<const N: usize> LoadStage<N> {
    pub fn new(first: bool, is_leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            // The second pass's index is its winner, a compare's outcome: the stage gives the
            // forwarding check (`same`).
            load_table: StageTable::new(if first { Stage::Load1 } else { Stage::Load2 })
                .given_check(),
            out: Default::default(),
            who: Default::default(),
            who1: Default::default(),
            live: Default::default(),
            sample: Default::default(),
            sets: Default::default(),
            a_wins: Default::default(),
            a_wins1: Default::default(),
            at: Default::default(),
            same: Default::default(),
            same_src_cut: Default::default(),
            same_a_cut: Default::default(),
            same_b_cut: Default::default(),
            e_d: Default::default(),
            e_f: Default::default(),
            step: Default::default(),
            step_r: Default::default(),
            w_f: Default::default(),
            sum: Default::default(),
            carry: Default::default(),
            charged: Default::default(),
            l_a: Default::default(),
            l_b: Default::default(),
            first: Constant::new(first),
            is_leaf: Constant::new(is_leaf),
            int_mask: Constant::new(0xffff_0000u64.into()),
            zero: Constant::new(0.into()),
            max: Constant::new(0xffff_ffffu64.into()),
            max_pos: Constant::new(0x7fff_ffffu64.into()),
        }
    }
}

impl<const N: usize> Logic for LoadStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, step_r, at);
        clock!(self, clock, load_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`): the sample, the reporting node, or the second pass's
        // winner.
        self.a_wins.next = self.port.up.early.val().a_q <= self.port.up.early.val().b_q;
        self.who.next = self.port.up.early.val().src.get_bits::<N>(0);
        if self.port.up.early.val().is_task {
            self.who.next = self.port.up.early.val().b_node.get_bits::<N>(0);
            if self.first.val() {
                self.who.next = self.port.up.early.val().a_node.get_bits::<N>(0);
            }
        }
        if self.port.up.early.val().is_sched2 {
            self.who.next = self.port.up.early.val().b_node.get_bits::<N>(0);
            if self.a_wins.val() {
                self.who.next = self.port.up.early.val().a_node.get_bits::<N>(0);
            }
        }
        self.same_src_cut.next = self.at.q.val() == self.port.up.early.val().src.get_bits::<N>(0);
        self.same_a_cut.next = self.at.q.val() == self.port.up.early.val().a_node.get_bits::<N>(0);
        self.same_b_cut.next = self.at.q.val() == self.port.up.early.val().b_node.get_bits::<N>(0);
        self.same.next = self.same_src_cut.val();
        if self.port.up.early.val().is_task {
            self.same.next = self.same_b_cut.val();
            if self.first.val() {
                self.same.next = self.same_a_cut.val();
            }
        }
        if self.port.up.early.val().is_sched2 {
            self.same.next = self.same_b_cut.val();
            if self.a_wins.val() {
                self.same.next = self.same_a_cut.val();
            }
        }
        self.at.d.next = self.who.val();
        self.load_table.rd_off.next = self.no_off.val();
        self.load_table.rd_same.next = self.same.val();
        self.load_table.rd_addr.next = self.who.val();
        self.load_table.read.next = self.port.up.early.val().is_ctl_read;
        self.load_table.read_table.next = self.port.up.early.val().rd_table;
        self.load_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.a_wins1.next = self.port.up.pass.val().a_q <= self.port.up.pass.val().b_q;
        self.who1.next = self.port.up.pass.val().src;
        if self.port.up.pass.val().is_sched2 {
            self.who1.next = self.port.up.pass.val().b_node;
            if self.a_wins1.val() {
                self.who1.next = self.port.up.pass.val().a_node;
            }
        }
        self.load_table.wr_en.next = false;
        self.load_table.wr_data.next = self.load_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        self.live.next = !self.port.up.pass.val().drop.any();

        // Sampling; copy 2 also orders the samples.
        self.sample.next =
            self.live.val() & self.port.up.pass.val().is_task & !self.port.up.pass.val().idle;
        self.l_a.next = self.port.up.pass.val().a_l;
        self.l_b.next = self.load_table.rd_data.val();
        if self.sample.val() & self.first.val() {
            self.out.d.next.a_l = self.load_table.rd_data.val();
        }
        if self.sample.val() & !self.first.val() {
            self.out.d.next.b_l = self.l_b.val();
            self.out.d.next.diff = self.l_b.val() - self.l_a.val();
            // The samples stay as drawn; `swap` says the second is `sel` (`driftList1` orders
            // them): a late decision that picks its index among early candidates.
            if self.l_b.val() < self.l_a.val() {
                self.out.d.next.swap = true;
                self.out.d.next.diff = self.l_a.val() - self.l_b.val();
            }
        }

        // A removal's first pass reads the node's load (copy 1) for the rack average.
        if self.port.up.pass.val().is_ctl_remove & self.first.val() {
            self.out.d.next.a_l = self.load_table.rd_data.val();
        }
        // Reports set the load; a new node starts at zero.
        self.sets.next = self.live.val()
            & (self.port.up.pass.val().is_reply
                | self.port.up.pass.val().is_reply_idle
                | self.port.up.pass.val().is_load_update);
        if self.sets.val() {
            self.load_table.wr_en.next = true;
            if self.is_leaf.val() {
                self.load_table.wr_data.next =
                    self.port.up.pass.val().wire_load & self.int_mask.val();
            } else {
                self.load_table.wr_data.next = self.port.up.pass.val().wire_load;
            }
        }
        if self.port.up.pass.val().is_ctl_add {
            self.load_table.wr_en.next = true;
            self.load_table.wr_data.next = self.zero.val();
        }

        // The second pass: charge the winner. Its step, for the entering pass (`early` is
        // `port.up.pass` a cycle later): drift + factor, saturating at the largest positive drift (the
        // factor is positive).
        self.e_d.next = self.port.up.early.val().b_d;
        self.e_f.next = self.port.up.early.val().b_f;
        if self.a_wins.val() {
            self.e_d.next = self.port.up.early.val().a_d;
            self.e_f.next = self.port.up.early.val().a_f;
        }
        self.step.next = self.e_d.val() + self.e_f.val();
        self.step_r.d.next = self.step.val();
        if !self.e_d.val().get_bit(31) & self.step.val().get_bit(31) {
            self.step_r.d.next = self.max_pos.val();
        }
        self.w_f.next = self.port.up.pass.val().b_f;
        if self.a_wins1.val() {
            self.w_f.next = self.port.up.pass.val().a_f;
        }
        // load + step, clamped to [0, 2^32). The step taken as unsigned, the sum's carry out says
        // which: a positive step overflows when it carries, a negative one (2^32 - |step|)
        // underflows when it does not. The carry out of bit 31, from the operands' and the sum's
        // top bits, spares a compare after the add.
        self.sum.next = self.load_table.rd_data.val() + self.step_r.q.val();
        self.carry.next = (self.load_table.rd_data.val().get_bit(31)
            & self.step_r.q.val().get_bit(31))
            | ((self.load_table.rd_data.val().get_bit(31) | self.step_r.q.val().get_bit(31))
                & !self.sum.val().get_bit(31));
        self.charged.next = self.sum.val();
        if !self.step_r.q.val().get_bit(31) & self.carry.val() {
            self.charged.next = self.max.val();
        }
        if self.step_r.q.val().get_bit(31) & !self.carry.val() {
            self.charged.next = self.zero.val();
        }
        if self.live.val() & self.port.up.pass.val().is_sched2 {
            self.load_table.wr_en.next = true;
            self.load_table.wr_data.next = self.charged.val();
            self.out.d.next.chosen = self.who1.val();
            self.out.d.next.chosen_f = self.w_f.val();
        }
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.load_table.rb.val();
        self.port.rb_hit.next = self.load_table.rb_hit.val();
    }
}
