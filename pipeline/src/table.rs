//! A stateful table: one read-modify-write per pass, one pass per clock (the FPGA form of a switch
//! stage's register array and its stateful ALU).
//!
//! A pass presents its index in cycle 0 (`rd_addr`); in cycle 1 it sees the entry (`rd_data`),
//! computes the new value combinationally in the owning stage and writes it back (`wr_*`). The
//! block RAM's read is registered, and a read in the same cycle as a write to the same address
//! returns the old value, so a pass that follows another on the same index one cycle later would
//! read stale data. The forwarding register fixes exactly that case: when the write of cycle `t`
//! hits the address presented in cycle `t`, the entry seen in cycle `t + 1` is the written value.
//! A pass two cycles behind reads the RAM after the write has landed. Back-to-back passes on one
//! index therefore see atomic semantics: each pass sees the effect of every earlier pass.
//!
//! ```text
//!   cycle      0            1
//!   pass A   rd_addr=a   rd_data=T[a]   wr T[a]=f(..)
//!   pass B               rd_addr=a      rd_data=f(..)  (forwarded)  wr T[a]=g(..)
//!   pass C                              rd_addr=a      rd_data=g(..) (forwarded) ...
//! ```

use crate::readback::{Entry, RB_BITS, ReadPort};
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

/// A table of `2^N` entries of `D`, initially zero.
///
/// Where the forwarding check runs is a choice of timing, not of behaviour. By default it
/// compares the write address with the read address as it is presented (`fwd_hit` is ready with
/// the entry, so `rd_data` comes straight from a mux): right when the index is a register. For an
/// index that comes late in its cycle (chosen among a few candidates by the previous stage's
/// table read and logic), [`RmwTable::given_check`] takes the compare from the stage
/// (`rd_same`): the stage compares each candidate with the write address early and picks the
/// result with the same late choice that picks the index, so the check is a level behind the
/// index, not a compare.
///
/// A read-back (`rd_indexed`, a control pass reading an entry) presents its own index
/// (`rd_index`) beside the stage's: the table checks forwarding on each and picks the check with
/// the address, so that the choice adds no level in front of the stage's compare.
///
/// A table whose index comes so late that even a picked check is too deep in front of the
/// flip-flop ([`RmwTable::late_check`]) checks in cycle 1 instead, on registers alone: the address
/// it read (`addr`, registered) against the address and enable of the write made while it read
/// (registered): the entry then comes a compare later in its cycle, so this suits stages whose
/// logic on the entry is shallow.
///
/// A table indexed by a sum, `base + offset` ([`RmwTable::sum_index`]), takes the two terms
/// (`rd_addr`, `rd_off`) and checks forwarding without waiting for the sum's carry:
/// `a + b == k` (mod 2^N) exactly when `a ^ b ^ k == (a & b | (a | b) & !k) << 1`, the carries
/// that `k` implies bit by bit, so the check is one LUT per bit after the terms and an
/// N-input AND, where the sum takes a carry chain and then the compare. When the offset itself
/// comes late, [`RmwTable::given_sum_check`] reads at the sum and takes the check from the stage,
/// which can form it on terms ready earlier (`idleList`: `(base - 1) + top`).
#[derive(LogicBlock)]
pub struct RmwTable<D: Synth, const N: usize> {
    pub clock: Signal<In, Clock>,
    /// Cycle 0: the index this pass accesses.
    pub rd_addr: Signal<In, Bits<N>>,
    /// Cycle 0: in a table made by [`RmwTable::sum_index`], the entry accessed is
    /// `rd_addr + rd_off` (mod 2^N); other tables ignore it (drive it with zero).
    pub rd_off: Signal<In, Bits<N>>,
    /// Cycle 0: access `rd_index` instead of `rd_addr` (+ `rd_off`).
    pub rd_indexed: Signal<In, Bit>,
    pub rd_index: Signal<In, Bits<N>>,
    /// Cycle 0: in a table made by [`RmwTable::given_check`], whether `rd_addr` equals `wr_addr`;
    /// other tables ignore it (drive it with zero).
    pub rd_same: Signal<In, Bit>,
    /// Cycle 1: the entry as every earlier pass left it.
    pub rd_data: Signal<Out, D>,
    /// Cycle 1: write `wr_data` at `wr_addr` (the pass's own index) at the end of the cycle.
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<N>>,
    pub wr_data: Signal<In, D>,
    ram: RAM<D, N>,
    fwd_hit: DFF<Bit>,
    fwd_data: DFF<D>,
    /// The stage gives the check (`rd_same`).
    given: Constant<Bit>,
    /// The check runs in cycle 1 on registers: the address read, and the write made meanwhile.
    late: Constant<Bit>,
    addr_q: DFF<Bits<N>>,
    prev_addr: DFF<Bits<N>>,
    prev_en: DFF<Bit>,
    hit: Signal<Local, Bit>,
    /// The check for the stage's index.
    hit_stage: Signal<Local, Bit>,
    /// Indexed by `rd_addr + rd_off`.
    summed: Constant<Bit>,
    /// The stage's `rd_addr` is already `rd_index` for a read ([`RmwTable::picked_read`]).
    picked: Constant<Bit>,
    one: Constant<Bits<5>>,
    /// The address's terms, a read-back's index already picked: a summed table's address is
    /// then the carry chain's output itself, with no multiplexer behind it.
    term_a: Signal<Local, Bits<N>>,
    term_o: Signal<Local, Bits<N>>,
    zero: Constant<Bits<N>>,
    addr: Signal<Local, Bits<N>>,
    sum_x: Signal<Local, Bits<N>>,
    sum_y: Signal<Local, Bits<N>>,
}

impl<D: Synth, const N: usize> Default for RmwTable<D, N> {
    fn default() -> Self {
        Self::with_check(false, false, false)
    }
}

impl<D: Synth, const N: usize> RmwTable<D, N> {
    /// The forwarding check from the stage (`rd_same`), for an index that comes late in its cycle.
    pub fn given_check() -> Self {
        Self::with_check(true, false, false)
    }

    /// A table indexed by `rd_addr + rd_off`, its forwarding check from the stage (`rd_same`).
    pub fn given_sum_check() -> Self {
        Self::with_check(true, true, false)
    }

    /// A table indexed by `rd_addr + rd_off`, its forwarding check on the terms.
    pub fn sum_index() -> Self {
        Self::with_check(false, true, false)
    }

    /// The forwarding check in cycle 1, on registers (for an index too late for any check in
    /// cycle 0); `summed` as [`RmwTable::sum_index`].
    pub fn late_check(summed: bool) -> Self {
        Self::with_check(false, summed, true)
    }

    /// The stage puts a read's index (`rd_index`) in `rd_addr` itself, among its early
    /// candidates, and gives the forwarding check for it in `rd_same` (with
    /// [`RmwTable::given_check`]), so that no multiplexer for a read follows a late index or its
    /// check.
    pub fn picked_read(mut self) -> Self {
        self.picked = Constant::new(true);
        self
    }

    fn with_check(given: bool, summed: bool, late: bool) -> Self {
        Self {
            clock: Default::default(),
            rd_addr: Default::default(),
            rd_off: Default::default(),
            rd_indexed: Default::default(),
            rd_index: Default::default(),
            rd_same: Default::default(),
            rd_data: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            ram: Default::default(),
            fwd_hit: Default::default(),
            fwd_data: Default::default(),
            given: Constant::new(given),
            late: Constant::new(late),
            addr_q: Default::default(),
            prev_addr: Default::default(),
            prev_en: Default::default(),
            hit: Default::default(),
            hit_stage: Default::default(),
            summed: Constant::new(summed),
            picked: Constant::new(false),
            one: Constant::new(bits::<5>(1)),
            term_a: Default::default(),
            term_o: Default::default(),
            zero: Constant::new(0.into()),
            addr: Default::default(),
            sum_x: Default::default(),
            sum_y: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize> Logic for RmwTable<D, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, fwd_hit, fwd_data, addr_q, prev_addr, prev_en);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        // A read-back's index is picked on the terms, in front of a summed table's carry chain
        // (its input LUT takes the pick): the chain's output is then the address. Behind it, the
        // pick was a LUT after the chain, which synthesis counts as ready at once and so lets the
        // logic in front of the chain take every level the target allows.
        self.term_a.next = self.rd_addr.val();
        self.term_o.next = self.rd_off.val();
        if self.rd_indexed.val() & !self.picked.val() {
            self.term_a.next = self.rd_index.val();
            self.term_o.next = self.zero.val();
        }
        self.addr.next = self.term_a.val();
        if self.summed.val() {
            self.addr.next = self.term_a.val() + self.term_o.val();
        }
        self.ram.read_address.next = self.addr.val();
        self.ram.write_address.next = self.wr_addr.val();
        self.ram.write_data.next = self.wr_data.val();
        self.ram.write_enable.next = self.wr_en.val();
        self.hit_stage.next = self.wr_addr.val() == self.rd_addr.val();
        self.sum_x.next = self.rd_addr.val() ^ self.rd_off.val() ^ self.wr_addr.val();
        self.sum_y.next = ((self.rd_addr.val() & self.rd_off.val())
            | ((self.rd_addr.val() | self.rd_off.val()) & !self.wr_addr.val()))
            << self.one.val();
        if self.summed.val() {
            self.hit_stage.next = self.sum_x.val() == self.sum_y.val();
        }
        if self.given.val() {
            self.hit_stage.next = self.rd_same.val();
        }
        // In and-or form: a mux of the two compares would be shared by synthesis into one
        // compare after the address mux.
        self.fwd_hit.d.next = self.wr_en.val()
            & ((self.rd_indexed.val() & (self.wr_addr.val() == self.rd_index.val()))
                | (!self.rd_indexed.val() & self.hit_stage.val()));
        if self.picked.val() {
            self.fwd_hit.d.next = self.wr_en.val() & self.hit_stage.val();
        }
        self.fwd_data.d.next = self.wr_data.val();
        // The late check: the address read in cycle 0 against the write of cycle 0, both
        // registered, compared in cycle 1.
        self.addr_q.d.next = self.addr.val();
        self.prev_addr.d.next = self.wr_addr.val();
        self.prev_en.d.next = self.wr_en.val();
        self.hit.next = self.fwd_hit.q.val();
        if self.late.val() {
            self.hit.next = self.prev_en.q.val() & (self.addr_q.q.val() == self.prev_addr.q.val());
        }
        self.rd_data.next = self.ram.read_data.val();
        if self.hit.val() {
            self.rd_data.next = self.fwd_data.q.val();
        }
    }
}

/// The table a stage owns: an [`RmwTable`] whose pass writes back at the index it read (so a
/// pass touches one entry), with the stage's side of a table read (`readback.rs`). The stage
/// gives it the entering pass's index and read fields (its `early`); when that pass is a read
/// (`is_ctl_read`), the table reads `rd_index` instead of the stage's index and, in the next
/// cycle, writes nothing whatever the stage asks and keeps the entry in its [`ReadPort`] when the
/// read names this table (`rd_table`) at an index within it.
#[derive(LogicBlock)]
pub struct StageTable<D: Entry, const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The entering pass: the stage's index, whether the pass is a read, and what it reads.
    pub rd_addr: Signal<In, Bits<N>>,
    /// Added to `rd_addr` in a table made with [`StageTable::sum_index`]; zero in the others.
    pub rd_off: Signal<In, Bits<N>>,
    /// In a table made with [`StageTable::given_check`], whether `rd_addr` is the index of the
    /// pass in the stage (its write address); ignored by the others (drive it with zero).
    pub rd_same: Signal<In, Bit>,
    pub read: Signal<In, Bit>,
    pub read_table: Signal<In, Bits<4>>,
    pub read_index: Signal<In, Bits<16>>,
    /// The pass in the stage: the entry, and the stage's write, at the index it read (ignored
    /// for a read).
    pub rd_data: Signal<Out, D>,
    pub wr_en: Signal<In, Bit>,
    pub wr_data: Signal<In, D>,
    /// The entry the last read kept, zero-extended, and whether it was this table's.
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub rb_hit: Signal<Out, Bit>,
    rmw: RmwTable<D, N>,
    rp: ReadPort<D>,
    /// The index the pass in the stage read: where it writes.
    at: DFF<Bits<N>>,
    /// The read fields of the pass in the stage.
    reading: DFF<Bit>,
    reading_table: DFF<Bits<4>>,
    reading_index: DFF<Bits<16>>,
}

impl<D: Entry, const N: usize> StageTable<D, N> {
    /// The table of `stage` (its number is the read's `rd_table`).
    pub fn new(stage: Stage) -> Self {
        Self {
            clock: Default::default(),
            rd_addr: Default::default(),
            rd_off: Default::default(),
            rd_same: Default::default(),
            read: Default::default(),
            read_table: Default::default(),
            read_index: Default::default(),
            rd_data: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            rb: Default::default(),
            rb_hit: Default::default(),
            rmw: Default::default(),
            rp: ReadPort::new(stage, N),
            at: Default::default(),
            reading: Default::default(),
            reading_table: Default::default(),
            reading_index: Default::default(),
        }
    }
}

impl<D: Entry, const N: usize> StageTable<D, N> {
    /// The stage whose table this is.
    pub fn stage(&self) -> Stage {
        self.rp.stage()
    }

    /// The same, with the forwarding check given by the stage ([`RmwTable::given_check`]): for
    /// a stage whose index comes from the previous stage's table read.
    pub fn given_check(mut self) -> Self {
        self.rmw = RmwTable::given_check();
        self
    }

    /// The same as [`StageTable::given_check`], with a read's index picked by the stage among
    /// its early candidates ([`RmwTable::picked_read`]): for a read, `rd_addr` must be
    /// `read_index` and `rd_same` its check.
    pub fn given_check_picked_read(mut self) -> Self {
        self.rmw = RmwTable::given_check().picked_read();
        self
    }

    /// The same, indexed by `rd_addr + rd_off`, with the forwarding check given by the stage
    /// ([`RmwTable::given_sum_check`]): for a stage whose offset comes late but can be checked
    /// on terms ready earlier.
    pub fn given_sum_check(mut self) -> Self {
        self.rmw = RmwTable::given_sum_check();
        self
    }

    /// The same, indexed by `rd_addr + rd_off` with the forwarding check on the terms
    /// ([`RmwTable::sum_index`]): for a stage whose index is a base plus an offset.
    pub fn sum_index(mut self) -> Self {
        self.rmw = RmwTable::sum_index();
        self
    }

    /// The same with the forwarding check in cycle 1 ([`RmwTable::late_check`]; `summed`: indexed
    /// by `rd_addr + rd_off`): for a stage whose index comes late and whose logic on the entry
    /// is shallow.
    pub fn late_check(mut self, summed: bool) -> Self {
        self.rmw = RmwTable::late_check(summed);
        self
    }
}

impl<D: Entry, const N: usize> Logic for StageTable<D, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, at, reading, reading_table, reading_index);
        clock!(self, clock, rmw, rp);
        self.rmw.rd_addr.next = self.rd_addr.val();
        self.rmw.rd_off.next = self.rd_off.val();
        self.rmw.rd_indexed.next = self.read.val();
        self.rmw.rd_index.next = self.read_index.val().get_bits::<N>(0);
        self.rmw.rd_same.next = self.rd_same.val();
        // A read writes nothing, so its `at` is never used: no read mux on the write address.
        self.at.d.next = self.rd_addr.val() + self.rd_off.val();
        self.reading.d.next = self.read.val();
        self.reading_table.d.next = self.read_table.val();
        self.reading_index.d.next = self.read_index.val();
        self.rd_data.next = self.rmw.rd_data.val();
        self.rmw.wr_en.next = self.wr_en.val() & !self.reading.q.val();
        self.rmw.wr_addr.next = self.at.q.val();
        self.rmw.wr_data.next = self.wr_data.val();
        self.rp.read.next = self.reading.q.val();
        self.rp.table_no.next = self.reading_table.q.val();
        self.rp.index.next = self.reading_index.q.val();
        self.rp.entry.next = self.rmw.rd_data.val();
        self.rb.next = self.rp.rb.val();
        self.rb_hit.next = self.rp.hit.val();
    }
}
