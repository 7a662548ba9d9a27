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

use rust_hdl::prelude::*;

/// A table of `2^N` entries of `D`, initially zero.
#[derive(LogicBlock, Default)]
pub struct RmwTable<D: Synth, const N: usize> {
    pub clock: Signal<In, Clock>,
    /// Cycle 0: the index this pass accesses.
    pub rd_addr: Signal<In, Bits<N>>,
    /// Cycle 1: the entry as every earlier pass left it.
    pub rd_data: Signal<Out, D>,
    /// Cycle 1: write `wr_data` at `wr_addr` (the pass's own index) at the end of the cycle.
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<N>>,
    pub wr_data: Signal<In, D>,
    ram: RAM<D, N>,
    fwd_hit: DFF<Bit>,
    fwd_data: DFF<D>,
}

impl<D: Synth, const N: usize> Logic for RmwTable<D, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, fwd_hit, fwd_data);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_address.next = self.rd_addr.val();
        self.ram.write_address.next = self.wr_addr.val();
        self.ram.write_data.next = self.wr_data.val();
        self.ram.write_enable.next = self.wr_en.val();
        self.fwd_hit.d.next = self.wr_en.val() & (self.wr_addr.val() == self.rd_addr.val());
        self.fwd_data.d.next = self.wr_data.val();
        self.rd_data.next = self.ram.read_data.val();
        if self.fwd_hit.q.val() {
            self.rd_data.next = self.fwd_data.q.val();
        }
    }
}
