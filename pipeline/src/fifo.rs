//! A first-word-fall-through FIFO of `2^A` entries on one block RAM.
//!
//! The head entry is on `head` whenever `head_valid` is high; `pop` in that cycle removes it, and
//! the next entry is on `head` in the next cycle. `push` (ignored when `full`) appends `data`;
//! an entry pushed in cycle `t` is at the head in cycle `t + 1` at the earliest. Both can happen
//! in one cycle.
//!
//! The memory is read at the address the head will have in the next cycle (`rd_ptr + pop`). The
//! block RAM returns the old entry for a read of the address written in the same cycle, which
//! happens exactly when the entry pushed is the next head (no other entry is left after the
//! pop); a forwarding register then hands it over. The fill level and the empty and full flags
//! are registers, kept from the pushes and pops, so that `pop` and `push` reach the pointers,
//! the memory and the forwarding check through a LUT or two: the egress pops from deep logic.

use rust_hdl::prelude::*;

/// `A1` must be `A + 1` (the pointers carry one more bit than the address, to tell full from empty).
#[derive(LogicBlock)]
pub struct Fifo<T: Synth, const A: usize, const A1: usize> {
    pub clock: Signal<In, Clock>,
    pub push: Signal<In, Bit>,
    pub data: Signal<In, T>,
    pub full: Signal<Out, Bit>,
    pub head_valid: Signal<Out, Bit>,
    pub head: Signal<Out, T>,
    pub pop: Signal<In, Bit>,
    /// Entries held.
    pub count: Signal<Out, Bits<A1>>,
    ram: RAM<T, A>,
    fwd_hit: DFF<Bit>,
    fwd_data: DFF<T>,
    wr_ptr: DFF<Bits<A1>>,
    rd_ptr: DFF<Bits<A1>>,
    /// Entries held (`wr_ptr - rd_ptr`), and whether that is nonzero or `2^A`.
    used: DFF<Bits<A1>>,
    nonempty: DFF<Bit>,
    is_full: DFF<Bit>,
    do_push: Signal<Local, Bit>,
    do_pop: Signal<Local, Bit>,
    one_left: Signal<Local, Bit>,
    next_rd: Signal<Local, Bits<A1>>,
    one: Constant<Bits<A1>>,
    almost: Constant<Bits<A1>>,
}

impl<T: Synth, const A: usize, const A1: usize> Default for Fifo<T, A, A1> {
    fn default() -> Self {
        assert_eq!(A1, A + 1, "A1 must be A + 1");
        Self {
            clock: Default::default(),
            push: Default::default(),
            data: Default::default(),
            full: Default::default(),
            head_valid: Default::default(),
            head: Default::default(),
            pop: Default::default(),
            count: Default::default(),
            ram: Default::default(),
            fwd_hit: Default::default(),
            fwd_data: Default::default(),
            wr_ptr: Default::default(),
            rd_ptr: Default::default(),
            used: Default::default(),
            nonempty: Default::default(),
            is_full: Default::default(),
            do_push: Default::default(),
            do_pop: Default::default(),
            one_left: Default::default(),
            next_rd: Default::default(),
            one: Constant::new(1.into()),
            almost: Constant::new(((1u64 << A) - 1).into()),
        }
    }
}

impl<T: Synth, const A: usize, const A1: usize> Logic for Fifo<T, A, A1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, fwd_hit, fwd_data, wr_ptr, rd_ptr, used, nonempty, is_full
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.do_push.next = self.push.val() & !self.is_full.q.val();
        self.do_pop.next = self.pop.val() & self.nonempty.q.val();
        self.one_left.next = self.used.q.val() == self.one.val();
        self.ram.write_enable.next = self.do_push.val();
        self.ram.write_address.next = self.wr_ptr.q.val().get_bits::<A>(0);
        self.ram.write_data.next = self.data.val();
        self.next_rd.next = self.rd_ptr.q.val();
        if self.do_pop.val() {
            self.next_rd.next = self.rd_ptr.q.val() + self.one.val();
        }
        self.ram.read_address.next = self.next_rd.val().get_bits::<A>(0);
        self.rd_ptr.d.next = self.next_rd.val();
        if self.do_push.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + self.one.val();
        }
        // The entry pushed is the next head when nothing else is left after the pop.
        self.fwd_hit.d.next = self.do_push.val()
            & (!self.nonempty.q.val() | (self.one_left.val() & self.do_pop.val()));
        self.fwd_data.d.next = self.data.val();
        if self.do_push.val() & !self.do_pop.val() {
            self.used.d.next = self.used.q.val() + self.one.val();
            self.is_full.d.next = self.used.q.val() == self.almost.val();
        }
        if self.do_pop.val() & !self.do_push.val() {
            self.used.d.next = self.used.q.val() - self.one.val();
            self.is_full.d.next = false;
        }
        self.nonempty.d.next = self.do_push.val()
            | (self.used.q.val().get_bits::<A>(1)).any()
            | (self.one_left.val() & !self.do_pop.val());
        // The outputs from registers alone, each in its own statement: no path from `push` or
        // `pop` to them, and none that Verilator could see through a shared local.
        self.full.next = self.is_full.q.val();
        self.head_valid.next = self.nonempty.q.val();
        self.count.next = self.used.q.val();
        self.head.next = self.ram.read_data.val();
        if self.fwd_hit.q.val() {
            self.head.next = self.fwd_data.q.val();
        }
    }
}
