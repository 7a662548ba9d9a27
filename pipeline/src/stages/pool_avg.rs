//! Stage 11: `poolAvg[pool]` (leaf): the rack average (`horus_model::fixed::RackAverage`), the
//! load-report rule and the load a signal carries (the model's `leaf_tail`).
//!
//! - The average changes when the pass places a task (`assigned` on a task's first pass, a random
//!   task or a second pass: one task more), on a reply (one task less), and on a control pass that
//!   adds or removes a worker (rescale to the new `unit`, forgetting the integer part of the
//!   removed worker's queue, all tasks when the pool is left without workers).
//! - With a spine: an idle signal decided in `idleCtl` leaves with the current average; otherwise
//!   a pass that changed the average sends a load report when the average moved by at least
//!   `report_delta` since the last report. A displaced report waits for a later change.
//! - Configuring a pool clears its entry. A spine instance passes everything through untouched.
//!
//! Depth: the report rule is checked on each change's accumulator side by side, against two
//! thresholds taken from the entry (`reported ± report_delta`), and the pass's kind picks one at
//! the end; the average itself is only formed for the descriptor and the entry. A leaf writes its
//! entry back on every pass, changed or not, so the forwarding check waits for no decision. The
//! longest path left is the rescale's: entry, kept tasks, multiply, threshold compare (17 LUT
//! levels in the leaf; 25 when the average was formed first and then compared).

use crate::mul::RescaleMul;
use crate::phv::Phv;
use crate::readback::RB_BITS;
use crate::table::StageTable;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

/// `poolAvg` entry: the accumulator (32.32), what one task adds (`round(2^32 / workers)`, up to
/// 2^32), the tasks it counts, and the average (16.16) the last load report carried.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct PoolAvgEntry {
    pub acc: Bits<64>,
    pub unit: Bits<64>,
    pub tasks: Bits<32>,
    pub reported: Bits<32>,
}

#[derive(LogicBlock)]
pub struct PoolAvgStage<const P: usize> {
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
    avg_table: StageTable<PoolAvgEntry, P>,
    out: DFF<Phv>,
    /// The rescale: the tasks kept and `kept * unit`.
    rescaler: RescaleMul,
    e: Signal<Local, PoolAvgEntry>,
    w: Signal<Local, PoolAvgEntry>,
    live: Signal<Local, Bit>,
    started: Signal<Local, Bit>,
    finished: Signal<Local, Bit>,
    rescale: Signal<Local, Bit>,
    /// The new average, 16.16.
    cur: Signal<Local, Bits<32>>,
    /// The accumulator after one task more, one task less.
    acc_inc: Signal<Local, Bits<64>>,
    acc_dec: Signal<Local, Bits<64>>,
    /// The report thresholds: `reported + delta` (`hi`, when it does not overflow: `hi_ok`) and
    /// `reported - delta` (`lo`, when it does not wrap: `lo_ok`).
    hi: Signal<Local, Bits<32>>,
    lo: Signal<Local, Bits<32>>,
    hi_ok: Signal<Local, Bit>,
    lo_ok: Signal<Local, Bit>,
    /// Whether the average after each change is `delta` or more away from the last report.
    far_inc: Signal<Local, Bit>,
    far_dec: Signal<Local, Bit>,
    far_res: Signal<Local, Bit>,
    /// The same for the entry as it is (a change that saturated).
    far_same: Signal<Local, Bit>,
    report: Signal<Local, Bit>,
    /// One task more or less changes the entry (the count neither saturated nor zero).
    inc_ok: Signal<Local, Bit>,
    dec_ok: Signal<Local, Bit>,
    is_leaf: Constant<Bit>,
    one: Constant<Bits<32>>,
    max: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    zero_entry: Constant<PoolAvgEntry>,
}

impl<const P: usize> PoolAvgStage<P> {
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
            avg_table: StageTable::new(Stage::PoolAvg),
            out: Default::default(),
            rescaler: Default::default(),
            e: Default::default(),
            w: Default::default(),
            live: Default::default(),
            started: Default::default(),
            finished: Default::default(),
            rescale: Default::default(),
            cur: Default::default(),
            acc_inc: Default::default(),
            acc_dec: Default::default(),
            hi: Default::default(),
            lo: Default::default(),
            hi_ok: Default::default(),
            lo_ok: Default::default(),
            far_inc: Default::default(),
            far_dec: Default::default(),
            far_res: Default::default(),
            far_same: Default::default(),
            report: Default::default(),
            inc_ok: Default::default(),
            dec_ok: Default::default(),
            is_leaf: Constant::new(is_leaf),
            one: Constant::new(1.into()),
            max: Constant::new(0xffff_ffffu64.into()),
            zero16: Constant::new(0.into()),
            zero_entry: Constant::new(PoolAvgEntry::default()),
        }
    }
}

impl<const P: usize> Logic for PoolAvgStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, avg_table);
        self.early_unused.next = self.early.val();
        // The entering pass's index (`early`).
        self.avg_table.rd_addr.next = self.early.val().pool.get_bits::<P>(0);
        self.avg_table.read.next = self.early.val().is_ctl_read;
        self.avg_table.read_table.next = self.early.val().rd_table;
        self.avg_table.read_index.next = self.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.e.next = self.avg_table.rd_data.val();
        self.w.next = self.avg_table.rd_data.val();
        self.out.d.next = self.pass_in.val();
        // The entry is written back on every pass (unchanged unless a change below applies), so
        // the table's forwarding does not wait for the decisions below.
        self.avg_table.wr_en.next = self.is_leaf.val();
        self.live.next = !self.pass_in.val().drop.any();

        // The model's AvgChange: at most one of the three holds.
        self.started.next = self.is_leaf.val()
            & self.live.val()
            & self.pass_in.val().assigned
            & (self.pass_in.val().is_task
                | self.pass_in.val().is_random
                | self.pass_in.val().is_sched2);
        self.finished.next = self.is_leaf.val()
            & self.live.val()
            & (self.pass_in.val().is_reply | self.pass_in.val().is_reply_idle);
        // The count saturates and never wraps below 0, so `acc == tasks * unit` stays exact; a
        // change that does nothing still has the report rule checked (the model's `AvgChange`).
        self.inc_ok.next = self.e.val().tasks != self.max.val();
        self.dec_ok.next = self.e.val().tasks.any();
        self.rescale.next = self.is_leaf.val()
            & self.live.val()
            & (self.pass_in.val().is_ctl_add | self.pass_in.val().is_ctl_remove);
        self.acc_inc.next = self.e.val().acc + self.e.val().unit;
        self.acc_dec.next = self.e.val().acc - self.e.val().unit;
        if self.started.val() & self.inc_ok.val() {
            self.w.next.tasks = self.e.val().tasks + self.one.val();
            self.w.next.acc = self.acc_inc.val();
        }
        if self.finished.val() & self.dec_ok.val() {
            self.w.next.tasks = self.e.val().tasks - self.one.val();
            self.w.next.acc = self.acc_dec.val();
        }
        // Rescale: a removal forgets the integer part of the removed worker's queue. The rescaler's
        // inputs come from the registers and the table only (see `mul.rs`).
        self.rescaler.tasks.next = self.avg_table.rd_data.val().tasks;
        self.rescaler.removed.next = self.pass_in.val().removed_q.get_bits::<16>(16);
        if self.pass_in.val().is_ctl_add {
            self.rescaler.removed.next = self.zero16.val();
        }
        self.rescaler.unit.next = self.pass_in.val().unit.get_bits::<33>(0);
        if self.rescale.val() {
            self.w.next.tasks = self.rescaler.kept.val();
            self.w.next.unit = self.pass_in.val().unit;
            self.w.next.acc = self.rescaler.acc.val();
        }

        // Signals: the new average, truncated to 16.16 and saturating.
        self.cur.next = self.w.val().acc.get_bits::<32>(16);
        if self.w.val().acc.get_bits::<16>(48).any() {
            self.cur.next = self.max.val();
        }
        // The report rule, `|cur - reported| >= delta`, as two thresholds known from the entry
        // alone, checked against each change's accumulator side by side (the average need not
        // be formed first): up when `cur >= reported + delta` (never when that sum overflows),
        // down when `cur <= reported - delta` (never when that difference wraps). A saturated
        // average (`acc >= 2^48`) is the largest: at or above any `hi`; it is at or below `lo`
        // only when `reported` is the largest and `delta` 0, which the up check reports, so the
        // down check leaves saturated averages out.
        self.hi.next = self.e.val().reported + self.pass_in.val().report_delta;
        self.hi_ok.next = self.e.val().reported <= !self.pass_in.val().report_delta;
        self.lo.next = self.e.val().reported - self.pass_in.val().report_delta;
        self.lo_ok.next = self.e.val().reported >= self.pass_in.val().report_delta;
        self.far_inc.next = (self.hi_ok.val()
            & (self.acc_inc.val().get_bits::<16>(48).any()
                | (self.acc_inc.val().get_bits::<32>(16) >= self.hi.val())))
            | (self.lo_ok.val()
                & !self.acc_inc.val().get_bits::<16>(48).any()
                & (self.acc_inc.val().get_bits::<32>(16) <= self.lo.val()));
        self.far_dec.next = (self.hi_ok.val()
            & (self.acc_dec.val().get_bits::<16>(48).any()
                | (self.acc_dec.val().get_bits::<32>(16) >= self.hi.val())))
            | (self.lo_ok.val()
                & !self.acc_dec.val().get_bits::<16>(48).any()
                & (self.acc_dec.val().get_bits::<32>(16) <= self.lo.val()));
        self.far_res.next = (self.hi_ok.val()
            & (self.rescaler.acc.val().get_bits::<16>(48).any()
                | (self.rescaler.acc.val().get_bits::<32>(16) >= self.hi.val())))
            | (self.lo_ok.val()
                & !self.rescaler.acc.val().get_bits::<16>(48).any()
                & (self.rescaler.acc.val().get_bits::<32>(16) <= self.lo.val()));
        self.far_same.next = (self.hi_ok.val()
            & (self.e.val().acc.get_bits::<16>(48).any()
                | (self.e.val().acc.get_bits::<32>(16) >= self.hi.val())))
            | (self.lo_ok.val()
                & !self.e.val().acc.get_bits::<16>(48).any()
                & (self.e.val().acc.get_bits::<32>(16) <= self.lo.val()));
        self.report.next = (self.started.val() & self.inc_ok.val() & self.far_inc.val())
            | (self.finished.val() & self.dec_ok.val() & self.far_dec.val())
            | (self.rescale.val() & self.far_res.val())
            | (self.started.val() & !self.inc_ok.val() & self.far_same.val())
            | (self.finished.val() & !self.dec_ok.val() & self.far_same.val());
        if self.is_leaf.val() & self.live.val() & self.pass_in.val().spine_ok {
            if self.pass_in.val().sig_idle_add | self.pass_in.val().sig_idle_remove {
                // An idle signal has priority; `reported` stays, so the report waits.
                self.out.d.next.avg = self.cur.val();
            } else if self.report.val() {
                self.out.d.next.sig_load_update = true;
                self.out.d.next.avg = self.cur.val();
                self.w.next.reported = self.cur.val();
            }
        }
        if self.is_leaf.val() & self.pass_in.val().is_ctl_pool {
            self.w.next = self.zero_entry.val();
        }
        self.avg_table.wr_data.next = self.w.val();
        self.pass_out.next = self.out.q.val();
        self.pass_next.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.rb.next = self.avg_table.rb.val();
        self.rb_hit.next = self.avg_table.rb_hit.val();
    }
}
