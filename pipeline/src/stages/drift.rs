//! Stages 9 and 10: `driftList1` and `driftList2` (Algorithm 2): the lazy drift check.
//!
//! Drift is signed 16.16 (`horus_model::fixed::Drift`), saturating.
//!
//! - Copy 1, a task off the idle path: `d = driftList1[sel]`. If `d <= diff` (or both samples are
//!   one node, or the task has more packets) the decision stands: charge `sel`. Otherwise the task
//!   resubmits with `sel`'s corrected queue `l + d` and the drift it saw; copy 2 then reads `other`'s
//!   drift and corrected queue.
//! - Both copies charge (`+= factor`) the node a task goes to: popped, picked, random, or decided.
//! - Reports reset the drift to 0 in both copies; so does a node's addition.
//! - A task's second pass takes the winner's seen drift out of both copies (the load stages put it
//!   into the load): `load + drift` stays exact under any interleaving.

use crate::phv::Phv;
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DriftStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<N>>,
    pub(super) drift_table: StageTable<Bits<32>, N>,
    out: DFF<Phv>,
    who: Signal<Local, Bits<N>>,
    /// The pass in the stage with its samples ordered (copy 1 applies `loadList2`'s `swap`).
    pin: Signal<Local, Phv>,
    /// Which candidate `who` is: `src`, a sample (`a_node`, or copy 2's `b_node`), else `chosen`.
    by_src: Signal<Local, Bit>,
    by_sample: Signal<Local, Bit>,
    /// The previous stage's late decision that picks the other sample (copy 1: `loadList2`'s
    /// `swap`; copy 2: copy 1's `resubmit`).
    alt: Signal<Local, Bit>,
    /// `who` and whether it is the index of the pass in the stage, each worked out for both
    /// values of `alt` and kept (`_cut`), so that `alt` only picks, in the last LUT.
    who_a_cut: Signal<Local, Bits<N>>,
    who_b_cut: Signal<Local, Bits<N>>,
    same_a_cut: Signal<Local, Bit>,
    same_b_cut: Signal<Local, Bit>,
    /// The index of the pass in the stage (`who` a cycle ago), and whether `who` equals it.
    at: DFF<Bits<N>>,
    same: Signal<Local, Bit>,
    live: Signal<Local, Bit>,
    p2: Signal<Local, Bit>,
    stands: Signal<Local, Bit>,
    /// What decides besides the drift compare (a negative drift, one node, more packets), and
    /// whether the pass decides (copy 1 of a power-of-two decision); kept.
    stands_else_cut: Signal<Local, Bit>,
    /// The two samples are one node (`a_node == b_node`), compared a clock ahead on `early`.
    one_node: DFF<Bit>,
    decides_cut: Signal<Local, Bit>,
    /// The charges that do not wait for the compare; kept.
    charge_else_cut: Signal<Local, Bit>,
    charge: Signal<Local, Bit>,
    charge_f: Signal<Local, Bits<32>>,
    d: Signal<Local, Bits<32>>,
    plus: Signal<Local, Bits<32>>,
    plus_sat: Signal<Local, Bits<32>>,
    seen: Signal<Local, Bits<32>>,
    minus: Signal<Local, Bits<32>>,
    minus_sat: Signal<Local, Bits<32>>,
    // corrected(l, d) for the sample this copy reads on a resubmission.
    l: Signal<Local, Bits<32>>,
    q: Signal<Local, Bits<32>>,
    q_sat: Signal<Local, Bits<32>>,
    first: Constant<Bit>,
    zero: Constant<Bits<32>>,
    max: Constant<Bits<32>>,
    max_pos: Constant<Bits<32>>,
    min_neg: Constant<Bits<32>>,
}

impl<const N: usize> DriftStage<N> {
    pub fn new(first: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            // The index is picked by the previous stage's late decision (`loadList2`'s order,
            // `driftList1`'s outcome): the stage gives the forwarding check (`same`).
            drift_table: StageTable::new(if first { Stage::Drift1 } else { Stage::Drift2 })
                .given_check(),
            out: Default::default(),
            who: Default::default(),
            pin: Default::default(),
            by_src: Default::default(),
            by_sample: Default::default(),
            alt: Default::default(),
            who_a_cut: Default::default(),
            who_b_cut: Default::default(),
            same_a_cut: Default::default(),
            same_b_cut: Default::default(),
            at: Default::default(),
            same: Default::default(),
            live: Default::default(),
            p2: Default::default(),
            stands: Default::default(),
            stands_else_cut: Default::default(),
            one_node: Default::default(),
            decides_cut: Default::default(),
            charge_else_cut: Default::default(),
            charge: Default::default(),
            charge_f: Default::default(),
            d: Default::default(),
            plus: Default::default(),
            plus_sat: Default::default(),
            seen: Default::default(),
            minus: Default::default(),
            minus_sat: Default::default(),
            l: Default::default(),
            q: Default::default(),
            q_sat: Default::default(),
            first: Constant::new(first),
            zero: Constant::new(0.into()),
            max: Constant::new(0xffff_ffffu64.into()),
            max_pos: Constant::new(0x7fff_ffffu64.into()),
            min_neg: Constant::new(0x8000_0000u64.into()),
        }
    }
}

impl<const N: usize> Logic for DriftStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at, one_node);
        clock!(self, clock, drift_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`): reports address their node; a task off the idle path
        // its `sel` (copy 1) or, when copy 1 resubmitted it, its `other` (copy 2); everything else
        // the chosen node.
        self.by_src.next = self.port.up.early.val().is_reply
            | self.port.up.early.val().is_reply_idle
            | self.port.up.early.val().is_load_update
            | self.port.up.early.val().is_ctl_add
            | self.port.up.early.val().is_ctl_remove;
        self.by_sample.next = self.port.up.early.val().is_task & !self.port.up.early.val().idle;
        // The second sample: copy 1's when `loadList2` swapped, copy 2's when copy 1 resubmitted.
        // That decision comes late in the cycle (a compare, a drift check), so the index and the
        // forwarding check are formed for both of its values and it picks last.
        self.alt.next = self.port.up.early.val().resubmit;
        if self.first.val() {
            self.alt.next = self.port.up.early.val().swap;
        }
        self.who_a_cut.next = self.port.up.early.val().chosen.get_bits::<N>(0);
        if self.by_src.val() {
            self.who_a_cut.next = self.port.up.early.val().src.get_bits::<N>(0);
        }
        if self.by_sample.val() {
            self.who_a_cut.next = self.port.up.early.val().a_node.get_bits::<N>(0);
        }
        self.who_b_cut.next = self.who_a_cut.val();
        if self.by_sample.val() {
            self.who_b_cut.next = self.port.up.early.val().b_node.get_bits::<N>(0);
        }
        self.who.next = self.who_a_cut.val();
        if self.alt.val() {
            self.who.next = self.who_b_cut.val();
        }
        // Whether that index is the one of the pass in the stage, compared candidate by candidate
        // (a mux of compares, synthesis would share into one compare after the mux).
        self.same_a_cut.next = (!self.by_sample.val()
            & !self.by_src.val()
            & (self.at.q.val() == self.port.up.early.val().chosen.get_bits::<N>(0)))
            | (!self.by_sample.val()
                & self.by_src.val()
                & (self.at.q.val() == self.port.up.early.val().src.get_bits::<N>(0)))
            | (self.by_sample.val()
                & (self.at.q.val() == self.port.up.early.val().a_node.get_bits::<N>(0)));
        self.same_b_cut.next = (!self.by_sample.val() & self.same_a_cut.val())
            | (self.by_sample.val()
                & (self.at.q.val() == self.port.up.early.val().b_node.get_bits::<N>(0)));
        self.same.next = self.same_a_cut.val();
        if self.alt.val() {
            self.same.next = self.same_b_cut.val();
        }
        self.at.d.next = self.who.val();
        self.drift_table.rd_same.next = self.same.val();
        self.drift_table.rd_off.next = self.no_off.val();
        self.drift_table.rd_addr.next = self.who.val();
        self.drift_table.read.next = self.port.up.early.val().is_ctl_read;
        self.drift_table.read_table.next = self.port.up.early.val().rd_table;
        self.drift_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        // The entry is written back on every pass (unchanged unless a rule below changes it), so
        // the table's forwarding check waits for none of the decisions below (the drift check's
        // compare decides whether copy 1 charges).
        self.drift_table.wr_en.next = true;
        self.drift_table.wr_data.next = self.drift_table.rd_data.val();
        // Copy 1 orders the samples `loadList2` left as drawn.
        self.pin.next = self.port.up.pass.val();
        if self.first.val() & self.port.up.pass.val().swap {
            self.pin.next.a_node = self.port.up.pass.val().b_node;
            self.pin.next.a_f = self.port.up.pass.val().b_f;
            self.pin.next.a_l = self.port.up.pass.val().b_l;
            self.pin.next.b_node = self.port.up.pass.val().a_node;
            self.pin.next.b_f = self.port.up.pass.val().a_f;
            self.pin.next.b_l = self.port.up.pass.val().a_l;
            self.pin.next.swap = false;
        }
        self.out.d.next = self.pin.val();
        self.live.next = !self.pin.val().drop.any();
        self.d.next = self.drift_table.rd_data.val();

        // corrected(l, d): the load of this copy's sample plus the drift, clamped to [0, 2^32).
        self.l.next = self.pin.val().b_l;
        if self.first.val() {
            self.l.next = self.pin.val().a_l;
        }
        self.q.next = self.l.val() + self.d.val();
        self.q_sat.next = self.q.val();
        if !self.d.val().get_bit(31) & (self.q.val() < self.l.val()) {
            self.q_sat.next = self.max.val();
        }
        if self.d.val().get_bit(31) & (self.q.val() > self.l.val()) {
            self.q_sat.next = self.zero.val();
        }
        // A removal's first pass: the node's queue, for the rack average (copy 1).
        if self.pin.val().is_ctl_remove & self.first.val() {
            self.out.d.next.removed_q = self.q_sat.val();
        }
        // Copy 1 decides whether a power-of-two decision stands (d <= diff, signed against
        // unsigned: a negative drift always passes).
        self.p2.next = self.live.val() & self.pin.val().is_task & !self.pin.val().idle;
        // The compare's chain meets the rest, formed beside it and kept (`_cut`, `verilog.rs`),
        // in the last LUTs.
        // (Whether the two samples are one node is the same either way round: compared on the
        // entering pass a clock ahead, before the swap's mux.)
        self.one_node.d.next = self.port.up.early.val().a_node == self.port.up.early.val().b_node;
        self.stands_else_cut.next =
            self.d.val().get_bit(31) | self.one_node.q.val() | self.pin.val().more;
        self.decides_cut.next = self.p2.val() & self.first.val();
        self.stands.next = self.stands_else_cut.val() | (self.d.val() <= self.pin.val().diff);
        if self.decides_cut.val() & !self.stands.val() {
            self.out.d.next.resubmit = true;
            self.out.d.next.a_d = self.d.val();
            self.out.d.next.a_q = self.q_sat.val();
        }
        // A decision that stood goes to `sel`, written by copy 2: copy 1's `chosen` then stays as
        // it came, an early candidate of copy 2's index.
        if self.p2.val() & !self.first.val() & !self.pin.val().resubmit {
            self.out.d.next.chosen = self.pin.val().a_node;
            self.out.d.next.chosen_f = self.pin.val().a_f;
        }
        if self.p2.val() & !self.first.val() & self.pin.val().resubmit {
            self.out.d.next.b_d = self.d.val();
            self.out.d.next.b_q = self.q_sat.val();
        }

        // Charges: a popped or picked node, a random node, a decision that stands. The factor is
        // picked on the pass's kind alone, not on `live` (which the previous stage decides last):
        // a dropped pass charges nothing, so its factor does not matter.
        self.charge_f.next = self.pin.val().chosen_f;
        if self.pin.val().is_task & !self.pin.val().idle {
            self.charge_f.next = self.pin.val().a_f;
        }
        self.charge_else_cut.next = self.live.val()
            & ((self.pin.val().is_task & self.pin.val().idle)
                | self.pin.val().is_random
                | (self.p2.val() & !self.first.val() & !self.pin.val().resubmit));
        self.charge.next =
            self.charge_else_cut.val() | (self.decides_cut.val() & self.stands.val());
        self.plus.next = self.d.val() + self.charge_f.val();
        self.plus_sat.next = self.plus.val();
        if !self.d.val().get_bit(31) & self.plus.val().get_bit(31) {
            self.plus_sat.next = self.max_pos.val();
        }
        if self.charge.val() {
            self.drift_table.wr_data.next = self.plus_sat.val();
            self.out.d.next.assigned = true;
        }
        // Reports and new nodes: drift 0.
        if self.live.val()
            & (self.pin.val().is_reply
                | self.pin.val().is_reply_idle
                | self.pin.val().is_load_update
                | self.pin.val().is_ctl_add)
        {
            self.drift_table.wr_data.next = self.zero.val();
        }
        // A task's second pass: the winner's seen drift moves into its load.
        self.seen.next = self.pin.val().b_d;
        if self.pin.val().a_q <= self.pin.val().b_q {
            self.seen.next = self.pin.val().a_d;
        }
        self.minus.next = self.d.val() - self.seen.val();
        self.minus_sat.next = self.minus.val();
        if (self.d.val().get_bit(31) != self.seen.val().get_bit(31))
            & (self.minus.val().get_bit(31) != self.d.val().get_bit(31))
        {
            self.minus_sat.next = self.max_pos.val();
            if self.d.val().get_bit(31) {
                self.minus_sat.next = self.min_neg.val();
            }
        }
        if self.live.val() & self.pin.val().is_sched2 {
            self.drift_table.wr_data.next = self.minus_sat.val();
            self.out.d.next.assigned = true;
        }
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.drift_table.rb.val();
        self.port.rb_hit.next = self.drift_table.rb_hit.val();
    }
}
