//! Stage 11: `poolAvg[pool]` (leaf): the rack average (`horus_model::fixed::RackAverage`), the
//! load-report rule and the load a signal carries (the model's `leaf_tail`).
//!
//! - The average changes when the pass places a task (`assigned` on a task's first pass, a random
//!   task or a second pass: one task more), on a reply (one task less), and on a control pass that
//!   adds or removes a worker (rescale to the new `unit`, forgetting the integer part of the
//!   removed worker's queue, all tasks when the pool is left without workers).
//! - With a spine: an idle signal decided in `idleCtl` leaves with the current average; otherwise
//!   a pass that changed the average sends a load report when the average, less the tasks from
//!   the pool's spine (which its view of the rack holds already), moved by at least
//!   `report_delta` since the last report (`docs/algorithm.md`, decisions 7 and 19). A
//!   displaced report waits for a later change.
//! - Configuring a pool clears its entry; changing its `report_delta` (a control pass) works its
//!   margins out anew. A spine instance passes everything through untouched.
//! - The JBSQ leaf's `poolAvg` ([`crate::jbsq::pool_avg`]) is this stage behind a map of its own
//!   descriptor; there an addition also carries the added worker's outstanding tasks (`added`,
//!   [`PoolAvgStage::with_added_tasks`]), which the rescale keeps.
//!
//! Depth: the entry keeps the report rule's two margins (`acc` less each threshold,
//! [`PoolAvgEntry`]), so each check is the sign of one two-term add on the entry (a margin plus or
//! minus `unit`), which is also the margin written back; the pass's kind picks the check at the
//! end. A report sets the margins anew without a carry (the accumulator's fraction beside a term
//! of the pass's `report_delta`): the rule compares the unsaturated average (`acc >> 16`, 48
//! bits; `docs/algorithm.md`, decision 7), so no saturation test is in the loop; the average a
//! signal carries saturates beside it, on its way to the descriptor. One task less subtracts a copy of `unit` (`unit_dec`), so that its chains and
//! one task more's share no input that synthesis would map as the other's inverted. A leaf
//! writes its entry back on every pass, changed or not, so the forwarding check waits for no
//! decision. Adding the accumulator's terms to a threshold that is itself a chain's sum on
//! `reported` would put two chains in a row in the loop (measured: 7 LUT levels; the design
//! record is in `docs/pipeline-depth-record.md`).
//!
//! The rescale (`acc = kept * unit`, 32 x 33 bits) is pipelined ([`PipeMul`]) and holds the stage
//! for [`HOLD_CLOCKS`] more clocks: in the pass's clock the multiplier takes its operands; the
//! pass then waits in `out` (the next stages see a bubble) while the stage reads its entry again
//! (its write address is the index it read). When the product is in, the entry takes the tasks
//! kept, the new unit and the product as its accumulator in one write; a clock later, the last,
//! the report rule and the signals run on the entry as read, as for a change that leaves the
//! accumulator as it is. The report's checks thus read the accumulator from the table alone, with
//! no multiplexer in front of their chains for the product. The core admits no pass behind a
//! control pass until it has left, so the stage is otherwise empty meanwhile. A combinational
//! multiply, in one cycle with the table read and the threshold compare, measured 17 LUT levels
//! around a multiplier that this figure does not even count.

use crate::arith::{SumSign, WIDE, Wide, ZeroExtend};
use crate::entries::PoolAvgEntry;
use crate::mul::{KeptTasks, MUL_LATENCY, PipeMul};
use crate::phv::Phv;
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

/// The clocks a rescale holds the stage for after its own: the multiplier's, and one in which
/// the entry, rescaled, is read back for the report rule.
pub const HOLD_CLOCKS: usize = MUL_LATENCY + 1;

/// What the report rule needs of the pass's `report_delta`, worked out a clock ahead from
/// `early` (and kept through a rescale, for its last clock).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PoolAvgTerms {
    /// `report_delta`, and `1 - report_delta`, on [`WIDE`] bits.
    pub delta: Wide,
    pub one_less_delta: Wide,
    /// The margins' bits above the accumulator's fraction after a report: `-delta * 2^16` (up)
    /// and `(delta - 1) * 2^16` (down).
    pub up_hi: Wide,
    pub down_hi: Wide,
}

#[derive(LogicBlock)]
pub struct PoolAvgStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// A control pass adding a worker: the tasks it has outstanding at the start, which the
    /// rescale keeps beside the pool's (read only where the stage is built with them,
    /// [`PoolAvgStage::with_added_tasks`]: the JBSQ leaf's `poolAvg`; the paper leaf's additions
    /// carry none, and there the sum is a constant 0 that synthesis removes).
    pub added: Signal<In, Bits<16>>,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<P>>,
    pub(super) avg_table: StageTable<PoolAvgEntry, P>,
    out: DFF<Phv>,
    /// The rescale: the tasks kept, and `kept * unit` [`MUL_LATENCY`] clocks later.
    keep: KeptTasks,
    mul: PipeMul,
    /// The stage reads `added` (a constant).
    has_added: Constant<Bit>,
    added_w: ZeroExtend<16, 32>,
    /// The tasks a rescale keeps: `keep`'s, or an addition's sum with the added worker's.
    kept: Signal<Local, Bits<32>>,
    /// The tasks kept by the held pass, for the last clock.
    kept_r: DFF<Bits<32>>,
    /// The pass's report terms, a clock ahead (from `early`); a rescale keeps its own until
    /// its last clock.
    terms: DFF<PoolAvgTerms>,
    /// The pass is from the pool's spine (`src` is its ID), a clock ahead: a task it places
    /// leaves the margins as they are.
    from_spine: DFF<Bit>,
    delta_w: ZeroExtend<32, WIDE>,
    reported_w: ZeroExtend<48, WIDE>,
    acc_w: ZeroExtend<64, WIDE>,
    unit_w: ZeroExtend<33, WIDE>,
    /// `unit_dec`, the entry's copy of `unit` that one task less subtracts: its chains and one
    /// task more's then share no term, so synthesis cannot map one's inputs as the other's
    /// inverted (an inverter, a LUT level, in front of the chain).
    unit_dec_w: ZeroExtend<33, WIDE>,
    prod_w: ZeroExtend<64, WIDE>,
    /// One task more or less reaches past 16.16 (the average saturates).
    ovf_inc: SumSign,
    ovf_dec: SumSign,
    zero_w: Constant<Wide>,
    neg_2_48: Constant<Wide>,
    one_w: Constant<Wide>,
    /// The accumulator's fraction below the average's (16 bits).
    mask16: Constant<Wide>,
    shift16: Constant<Bits<8>>,
    /// The entry's margins as read (only their sign bits are read: the names match Verilator's
    /// `--unused-regexp`), and after one task more, one task less; their sign bits are the
    /// checks.
    up_now_unused: Signal<Local, Wide>,
    down_now_unused: Signal<Local, Wide>,
    up_inc: Signal<Local, Wide>,
    up_dec: Signal<Local, Wide>,
    down_inc: Signal<Local, Wide>,
    down_dec: Signal<Local, Wide>,
    /// The average a report records (unsaturated, 48 bits).
    rep_new: Signal<Local, Bits<48>>,
    /// The entry's own average saturates (`acc >= 2^48`).
    sat_same: Signal<Local, Bit>,
    /// The margins a report sets after each change, and the change's.
    up_go_inc: Signal<Local, Wide>,
    up_go_dec: Signal<Local, Wide>,
    up_go_same: Signal<Local, Wide>,
    down_go_inc: Signal<Local, Wide>,
    down_go_dec: Signal<Local, Wide>,
    down_go_same: Signal<Local, Wide>,
    up_go: Signal<Local, Wide>,
    down_go: Signal<Local, Wide>,
    /// Margins worked out anew from the entry's `reported` and the pass's `report_delta`, on the
    /// entry's accumulator (a change of `report_delta`) or a rescale's product: the negated
    /// thresholds, the accumulator they apply to, and the margins.
    neg_hi: Signal<Local, Wide>,
    neg_lo: Signal<Local, Wide>,
    acc_src: Signal<Local, Wide>,
    up_re: Signal<Local, Wide>,
    down_re: Signal<Local, Wide>,
    /// A live control pass changing the pool's parameters.
    params: Signal<Local, Bit>,
    /// Which check applies (see `update`); `spine_cut` is one task more from the spine.
    inc_cut: Signal<Local, Bit>,
    spine_cut: Signal<Local, Bit>,
    dec_cut: Signal<Local, Bit>,
    same_cut: Signal<Local, Bit>,
    /// A signal may leave: the pass is live, has a spine, and is not a rescale's first clock.
    sig_ok_cut: Signal<Local, Bit>,
    /// A load report leaves: a signal may, no idle signal does, and the report rule holds.
    go_cut: Signal<Local, Bit>,
    /// Clocks a rescale still holds the stage (its pass waits in `out`; `port.down.pass` is empty).
    hold: DFF<Bits<3>>,
    /// `hold` is not zero (a register of its own, so that `holding` is a flip-flop and not a
    /// compare: the next stages' indexes and the descriptor's mask follow it).
    held: DFF<Bit>,
    /// A rescale holds the stage (never in a spine instance: constant there, so the descriptor
    /// register keeps no clock enable).
    holding: Signal<Local, Bit>,
    /// The product is in: the entry takes it.
    load: Signal<Local, Bit>,
    /// The last clock: the report rule and the signals, on the rescaled entry.
    finish: Signal<Local, Bit>,
    /// The new average (16.16, saturating) after each change, side by side.
    cur_inc: Signal<Local, Bits<32>>,
    cur_dec: Signal<Local, Bits<32>>,
    cur_same: Signal<Local, Bits<32>>,
    /// What the signals read of the pass: `port.up.pass`'s, or when finishing the held pass's (`out`).
    sig_live: Signal<Local, Bit>,
    sig_spine: Signal<Local, Bit>,
    sig_idle: Signal<Local, Bit>,
    hold_len: Constant<Bits<3>>,
    one3: Constant<Bits<3>>,
    two3: Constant<Bits<3>>,
    w: Signal<Local, PoolAvgEntry>,
    live: Signal<Local, Bit>,
    started: Signal<Local, Bit>,
    finished: Signal<Local, Bit>,
    rescale: Signal<Local, Bit>,
    /// The new average, 16.16.
    cur: Signal<Local, Bits<32>>,
    /// The accumulator after one task more, one task less ([`WIDE`]: their top bits are zero
    /// where they apply).
    acc_inc: Signal<Local, Wide>,
    acc_dec: Signal<Local, Wide>,
    report: Signal<Local, Bit>,
    /// One task more or less changes the entry (the count neither saturated nor zero).
    inc_ok: Signal<Local, Bit>,
    dec_ok: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
    one: Constant<Bits<32>>,
    max: Constant<Bits<32>>,
    max_less_one: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
    zero_entry: Constant<PoolAvgEntry>,
}

impl<const P: usize> PoolAvgStage<P> {
    pub fn new(is_leaf: bool) -> Self {
        Self::build(is_leaf, false)
    }

    /// A leaf's stage whose additions carry the added worker's outstanding tasks (`added`): the
    /// rescale keeps them beside the pool's (`horus_model::sched::jbsq::JbsqLeaf::add_node`).
    pub fn with_added_tasks() -> Self {
        Self::build(true, true)
    }

    fn build(is_leaf: bool, has_added: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            added: Default::default(),
            has_added: Constant::new(has_added),
            added_w: Default::default(),
            kept: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            avg_table: StageTable::new(Stage::PoolAvg),
            out: Default::default(),
            keep: Default::default(),
            mul: Default::default(),
            kept_r: Default::default(),
            terms: Default::default(),
            from_spine: Default::default(),
            delta_w: Default::default(),
            reported_w: Default::default(),
            acc_w: Default::default(),
            unit_w: Default::default(),
            unit_dec_w: Default::default(),
            prod_w: Default::default(),
            ovf_inc: Default::default(),
            ovf_dec: Default::default(),
            zero_w: Constant::new(0.into()),
            neg_2_48: Constant::new(Wide::from(0) - Wide::from(1u64 << 48)),
            one_w: Constant::new(1.into()),
            mask16: Constant::new(0xffff.into()),
            shift16: Constant::new(16.into()),
            up_now_unused: Default::default(),
            down_now_unused: Default::default(),
            up_inc: Default::default(),
            up_dec: Default::default(),
            down_inc: Default::default(),
            down_dec: Default::default(),
            up_go_inc: Default::default(),
            up_go_dec: Default::default(),
            up_go_same: Default::default(),
            down_go_inc: Default::default(),
            down_go_dec: Default::default(),
            down_go_same: Default::default(),
            up_go: Default::default(),
            down_go: Default::default(),
            rep_new: Default::default(),
            sat_same: Default::default(),
            neg_hi: Default::default(),
            neg_lo: Default::default(),
            acc_src: Default::default(),
            up_re: Default::default(),
            down_re: Default::default(),
            params: Default::default(),
            inc_cut: Default::default(),
            spine_cut: Default::default(),
            dec_cut: Default::default(),
            same_cut: Default::default(),
            sig_ok_cut: Default::default(),
            go_cut: Default::default(),
            hold: Default::default(),
            held: Default::default(),
            holding: Default::default(),
            load: Default::default(),
            finish: Default::default(),
            cur_inc: Default::default(),
            cur_dec: Default::default(),
            cur_same: Default::default(),
            sig_live: Default::default(),
            sig_spine: Default::default(),
            sig_idle: Default::default(),
            hold_len: Constant::new((HOLD_CLOCKS as u64).into()),
            one3: Constant::new(1.into()),
            two3: Constant::new(2.into()),
            w: Default::default(),
            live: Default::default(),
            started: Default::default(),
            finished: Default::default(),
            rescale: Default::default(),
            cur: Default::default(),
            acc_inc: Default::default(),
            acc_dec: Default::default(),
            report: Default::default(),
            inc_ok: Default::default(),
            dec_ok: Default::default(),
            is_leaf: Constant::new(is_leaf),
            one: Constant::new(1.into()),
            max: Constant::new(0xffff_ffffu64.into()),
            max_less_one: Constant::new(0xffff_fffeu64.into()),
            zero16: Constant::new(0.into()),
            zero32: Constant::new(0.into()),
            zero_entry: Constant::new(PoolAvgEntry::default()),
        }
    }
}

impl<const P: usize> Logic for PoolAvgStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, hold, held, kept_r, terms, from_spine);
        clock!(self, clock, avg_table, mul);
        // The entering pass's report terms, for the next clock.
        self.delta_w.narrow.next = self.port.up.early.val().report_delta;
        self.terms.d.next.delta = self.delta_w.wide.val();
        self.terms.d.next.one_less_delta = self.one_w.val() - self.delta_w.wide.val();
        self.terms.d.next.up_hi =
            (self.zero_w.val() - self.delta_w.wide.val()) << self.shift16.val();
        self.terms.d.next.down_hi =
            (self.delta_w.wide.val() - self.one_w.val()) << self.shift16.val();
        self.from_spine.d.next = self.port.up.early.val().spine_ok
            & (self.port.up.early.val().src == self.port.up.early.val().spine_id);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`); while a rescale holds the stage, its own pool.
        self.holding.next = self.is_leaf.val() & self.held.q.val();
        self.avg_table.rd_off.next = self.no_off.val();
        self.avg_table.rd_same.next = false;
        self.avg_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        if self.holding.val() {
            self.avg_table.rd_addr.next = self.out.q.val().pool.get_bits::<P>(0);
        }
        self.avg_table.read.next = self.port.up.early.val().is_ctl_read;
        self.avg_table.read_table.next = self.port.up.early.val().rd_table;
        self.avg_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.w.next = self.avg_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        // The entry is written back on every pass (unchanged unless a change below applies), so
        // the table's forwarding does not wait for the decisions below.
        self.avg_table.wr_en.next = self.is_leaf.val();
        self.live.next = !self.port.up.pass.val().drop.any();

        // A rescale holds the stage for `HOLD_CLOCKS` clocks: the core admits no pass behind a
        // control pass, so the stage is otherwise empty meanwhile.
        self.hold.d.next = self.hold.q.val();
        if self.holding.val() {
            self.hold.d.next = self.hold.q.val() - self.one3.val();
            self.out.d.next = self.out.q.val();
        }
        self.load.next = self.is_leaf.val() & (self.hold.q.val() == self.two3.val());
        self.finish.next = self.is_leaf.val() & (self.hold.q.val() == self.one3.val());
        self.sig_live.next = self.live.val();
        self.sig_spine.next = self.port.up.pass.val().spine_ok;
        self.sig_idle.next =
            self.port.up.pass.val().sig_idle_add | self.port.up.pass.val().sig_idle_remove;
        if self.finish.val() {
            self.sig_live.next = !self.out.q.val().drop.any();
            self.sig_spine.next = self.out.q.val().spine_ok;
            self.sig_idle.next = self.out.q.val().sig_idle_add | self.out.q.val().sig_idle_remove;
        }

        // The model's AvgChange: at most one of the three holds.
        self.started.next = self.is_leaf.val()
            & self.live.val()
            & self.port.up.pass.val().assigned
            & (self.port.up.pass.val().is_task
                | self.port.up.pass.val().is_random
                | self.port.up.pass.val().is_sched2);
        self.finished.next = self.is_leaf.val()
            & self.live.val()
            & (self.port.up.pass.val().is_reply | self.port.up.pass.val().is_reply_idle);
        self.params.next =
            self.is_leaf.val() & self.live.val() & self.port.up.pass.val().is_ctl_params;
        // The count saturates and never wraps below 0, so `acc == tasks * unit` stays exact; a
        // change that does nothing still has the report rule checked (the model's `AvgChange`).
        // Whether it saturated or was zero is in the entry (`full`, `busy`): the loop carries
        // the count's limits as two bits, each worked out beside the count's own change.
        self.inc_ok.next = !self.avg_table.rd_data.val().full;
        self.dec_ok.next = self.avg_table.rd_data.val().busy;
        // Which change applies: one task more, one less, or the accumulator as it is (a change
        // that saturated, or a rescale's last clock); kept (`_cut`), so that the checks' chains
        // meet them in the last LUTs.
        self.inc_cut.next = self.started.val() & self.inc_ok.val() & !self.from_spine.q.val();
        self.spine_cut.next = self.started.val() & self.inc_ok.val() & self.from_spine.q.val();
        self.dec_cut.next = self.finished.val() & self.dec_ok.val();
        self.same_cut.next = (self.started.val() & !self.inc_ok.val())
            | (self.finished.val() & !self.dec_ok.val())
            | self.finish.val();
        self.rescale.next = self.is_leaf.val()
            & self.live.val()
            & (self.port.up.pass.val().is_ctl_add | self.port.up.pass.val().is_ctl_remove);
        // A rescale keeps its terms until its last clock (the passes behind it are bubbles).
        if self.rescale.val() | (self.hold.q.val() > self.one3.val()) {
            self.terms.d.next = self.terms.q.val();
        }
        self.acc_w.narrow.next = self.avg_table.rd_data.val().acc;
        self.unit_w.narrow.next = self.avg_table.rd_data.val().unit;
        self.unit_dec_w.narrow.next = self.avg_table.rd_data.val().unit_dec;
        self.acc_inc.next = self.acc_w.wide.val() + self.unit_w.wide.val();
        self.acc_dec.next = self.acc_w.wide.val() - self.unit_dec_w.wide.val();
        // The report rule, `|cur - reported| >= delta` after a change, is the sign of a margin
        // kept in the entry (`PoolAvgEntry`): one two-term chain per check, on the entry alone,
        // that is also the margin written back. On 66-bit two's complement no case needs more
        // (`acc < 2^64`, `reported < 2^48`, `delta < 2^32`).
        self.up_now_unused.next = self.avg_table.rd_data.val().up_margin;
        self.down_now_unused.next = self.avg_table.rd_data.val().down_margin;
        self.up_inc.next = self.avg_table.rd_data.val().up_margin + self.unit_w.wide.val();
        self.up_dec.next = self.avg_table.rd_data.val().up_margin - self.unit_dec_w.wide.val();
        self.down_inc.next = self.avg_table.rd_data.val().down_margin + self.unit_w.wide.val();
        self.down_dec.next = self.avg_table.rd_data.val().down_margin - self.unit_dec_w.wide.val();
        if self.inc_cut.val() | self.spine_cut.val() {
            self.w.next.tasks = self.avg_table.rd_data.val().tasks + self.one.val();
            self.w.next.acc = self.acc_inc.val().get_bits::<64>(0);
            self.w.next.busy = true;
            self.w.next.full = self.avg_table.rd_data.val().tasks == self.max_less_one.val();
        }
        // A task from the spine leaves the margins: the spine's view holds it already.
        if self.inc_cut.val() {
            self.w.next.up_margin = self.up_inc.val();
            self.w.next.down_margin = self.down_inc.val();
        }
        if self.dec_cut.val() {
            self.w.next.tasks = self.avg_table.rd_data.val().tasks - self.one.val();
            self.w.next.acc = self.acc_dec.val().get_bits::<64>(0);
            self.w.next.busy = self.avg_table.rd_data.val().tasks != self.one.val();
            self.w.next.full = false;
            self.w.next.up_margin = self.up_dec.val();
            self.w.next.down_margin = self.down_dec.val();
        }
        // Rescale, first clock: the tasks kept (a removal forgets the integer part of the removed
        // worker's queue) into a register, `kept * unit` into the multiplier; the entry is
        // written back unchanged until the last clock.
        self.keep.tasks.next = self.avg_table.rd_data.val().tasks;
        // An addition keeps every task (nothing removed, a unit not 0), and the added worker's:
        // its sum is a chain beside `keep`'s, picked after both, not one in front of `keep`'s.
        self.added_w.narrow.next = self.added.val();
        self.kept.next = self.keep.kept.val();
        if self.has_added.val() & self.port.up.pass.val().is_ctl_add {
            self.kept.next = self.avg_table.rd_data.val().tasks + self.added_w.wide.val();
        }
        self.keep.removed.next = self.port.up.pass.val().removed_q.get_bits::<16>(16);
        if self.port.up.pass.val().is_ctl_add {
            self.keep.removed.next = self.zero16.val();
        }
        self.keep.unit.next = self.port.up.pass.val().unit.get_bits::<33>(0);
        self.mul.a.next = self.kept.val();
        self.mul.b.next = self.port.up.pass.val().unit.get_bits::<33>(0);
        if self.rescale.val() {
            self.kept_r.d.next = self.kept.val();
            self.hold.d.next = self.hold_len.val();
        }
        self.held.d.next = self.hold.d.val().any();
        // Margins worked out anew, from the thresholds (`!reported + 1 - delta` and
        // `!reported + delta`, times 2^16, negated): for a rescale's product when it is in, for
        // the entry's accumulator on a change of `report_delta`.
        self.reported_w.narrow.next = self.avg_table.rd_data.val().reported;
        self.prod_w.narrow.next = self.mul.p.val();
        self.neg_hi.next =
            (!self.reported_w.wide.val() + self.terms.q.val().one_less_delta) << self.shift16.val();
        self.neg_lo.next =
            (!self.reported_w.wide.val() + self.terms.q.val().delta) << self.shift16.val();
        self.acc_src.next = self.acc_w.wide.val();
        if self.load.val() {
            self.acc_src.next = self.prod_w.wide.val();
        }
        self.up_re.next = self.acc_src.val() + self.neg_hi.val();
        self.down_re.next = self.acc_src.val() + self.neg_lo.val();
        if self.params.val() {
            self.w.next.up_margin = self.up_re.val();
            self.w.next.down_margin = self.down_re.val();
        }
        // The product is in: the entry takes the tasks kept, the new unit and the product as its
        // accumulator, and its margins, all at once; the report rule and the signals follow in
        // the last clock, on the entry as read (`same_cut`).
        if self.load.val() {
            self.w.next.tasks = self.kept_r.q.val();
            self.w.next.busy = self.kept_r.q.val() != self.zero32.val();
            self.w.next.full = self.kept_r.q.val() == self.max.val();
            self.w.next.unit = self.out.q.val().unit.get_bits::<33>(0);
            self.w.next.unit_dec = self.out.q.val().unit.get_bits::<33>(0);
            self.w.next.acc = self.mul.p.val();
            self.w.next.up_margin = self.up_re.val();
            self.w.next.down_margin = self.down_re.val();
        }

        // Signals: the new average, truncated to 16.16 and saturating, formed for each change
        // side by side and picked like the accumulator. Past 16.16 (`acc >= 2^48`, the average
        // saturates) is told by a chain on the entry beside the add's: one task more is
        // `acc + unit - 2^48 >= 0`, one less `acc + !unit + 1 - 2^48 >= 0`.
        self.ovf_inc.a.next = self.acc_w.wide.val();
        self.ovf_inc.b.next = self.unit_w.wide.val();
        self.ovf_inc.c.next = self.neg_2_48.val();
        self.ovf_inc.cin.next = false;
        self.ovf_dec.a.next = self.acc_w.wide.val();
        self.ovf_dec.b.next = !self.unit_dec_w.wide.val();
        self.ovf_dec.c.next = self.neg_2_48.val();
        self.ovf_dec.cin.next = true;
        self.cur_inc.next = self.acc_inc.val().get_bits::<32>(16);
        if !self.ovf_inc.neg.val() {
            self.cur_inc.next = self.max.val();
        }
        self.cur_dec.next = self.acc_dec.val().get_bits::<32>(16);
        if !self.ovf_dec.neg.val() {
            self.cur_dec.next = self.max.val();
        }
        self.cur_same.next = self.avg_table.rd_data.val().acc.get_bits::<32>(16);
        self.sat_same.next =
            self.avg_table.rd_data.val().acc.get_bits::<16>(48) > self.zero16.val();
        if self.sat_same.val() {
            self.cur_same.next = self.max.val();
        }
        self.cur.next = self.cur_same.val();
        // The margins a report sets, after each change side by side (see `go_cut` below).
        self.up_go_inc.next = self.terms.q.val().up_hi | (self.acc_inc.val() & self.mask16.val());
        self.up_go_dec.next = self.terms.q.val().up_hi | (self.acc_dec.val() & self.mask16.val());
        self.up_go_same.next =
            self.terms.q.val().up_hi | (self.acc_w.wide.val() & self.mask16.val());
        self.down_go_inc.next =
            self.terms.q.val().down_hi | (self.acc_inc.val() & self.mask16.val());
        self.down_go_dec.next =
            self.terms.q.val().down_hi | (self.acc_dec.val() & self.mask16.val());
        self.down_go_same.next =
            self.terms.q.val().down_hi | (self.acc_w.wide.val() & self.mask16.val());
        self.rep_new.next = self.avg_table.rd_data.val().acc.get_bits::<48>(16);
        self.up_go.next = self.up_go_same.val();
        self.down_go.next = self.down_go_same.val();
        if self.inc_cut.val() | self.spine_cut.val() {
            self.cur.next = self.cur_inc.val();
            self.up_go.next = self.up_go_inc.val();
            self.down_go.next = self.down_go_inc.val();
            self.rep_new.next = self.acc_inc.val().get_bits::<48>(16);
        }
        if self.dec_cut.val() {
            self.cur.next = self.cur_dec.val();
            self.up_go.next = self.up_go_dec.val();
            self.down_go.next = self.down_go_dec.val();
            self.rep_new.next = self.acc_dec.val().get_bits::<48>(16);
        }
        // Which check applies was picked above; each check's outcome is a margin's sign bit
        // (`up >= 0`, `down < 0`), of the entry's own margins for a change that leaves the
        // accumulator as it is or, from the spine, the margins.
        self.report.next = (self.inc_cut.val()
            & (!self.up_inc.val().get_bit(65) | self.down_inc.val().get_bit(65)))
            | (self.dec_cut.val()
                & (!self.up_dec.val().get_bit(65) | self.down_dec.val().get_bit(65)))
            | ((self.same_cut.val() | self.spine_cut.val())
                & (!self.up_now_unused.val().get_bit(65) | self.down_now_unused.val().get_bit(65)));
        // A rescale's signals wait for its last clock. The average goes with every pass that
        // may signal (the egress reads it only with a signal), so it waits for no check; an idle
        // signal has priority over a report (`reported` stays, so the report waits), and the
        // report is decided in one kept signal (`go_cut`) that the writes follow in one LUT.
        self.sig_ok_cut.next =
            self.is_leaf.val() & self.sig_live.val() & self.sig_spine.val() & !self.rescale.val();
        self.go_cut.next = self.sig_ok_cut.val() & !self.sig_idle.val() & self.report.val();
        if self.sig_ok_cut.val() {
            self.out.d.next.avg = self.cur.val();
        }
        // A report sets the margins anew around the average it records (`acc >> 16`,
        // unsaturated): the new accumulator less `reported * 2^16` is its fraction, so each
        // margin is that fraction beside the pass's term, with no carry.
        if self.go_cut.val() {
            self.out.d.next.sig_load_update = true;
            self.w.next.reported = self.rep_new.val();
            self.w.next.up_margin = self.up_go.val();
            self.w.next.down_margin = self.down_go.val();
        }
        // Configuring a pool clears its entry: no tasks, `reported` 0, the margins of an empty
        // accumulator.
        if self.is_leaf.val() & self.port.up.pass.val().is_ctl_pool {
            self.w.next = self.zero_entry.val();
            self.w.next.up_margin = self.terms.q.val().up_hi;
            self.w.next.down_margin = self.terms.q.val().down_hi;
        }
        self.avg_table.wr_data.next = self.w.val();
        // A held pass leaves when the hold ends. Until then the next stages see it as a bubble:
        // not live, and without its operation (a held pass is a control pass adding or removing
        // a worker, whose one `is_*` flag is one of these two), so that they do nothing with it.
        // Its index fields may reach their tables' reads meanwhile, which is harmless.
        self.port.down.pass.next = self.out.q.val();
        if self.holding.val() {
            self.port.down.pass.next.live = false;
            self.port.down.pass.next.is_ctl_add = false;
            self.port.down.pass.next.is_ctl_remove = false;
        }
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.avg_table.rb.val();
        self.port.rb_hit.next = self.avg_table.rb_hit.val();
    }
}
