//! A first-word-fall-through FIFO of `2^A` entries on one block RAM.
//!
//! The head entry is on `head` whenever `head_valid` is high; `pop` in that cycle removes it, and
//! the next entry is on `head` in the next cycle. `push` (ignored when `full`) appends `data`;
//! an entry pushed in cycle `t` is at the head in cycle `t + 1` at the earliest. Both can happen
//! in one cycle.
//!
//! The RAM is an [`RmwTable`](crate::table::RmwTable) that the FIFO uses as a plain memory: it
//! presents the address the head will have in the next cycle (`rd_ptr + pop`), and the table's
//! forwarding delivers an entry written in the same cycle to that address. So the head is always
//! the entry at `rd_ptr` after every write before this cycle, with no bypass register of its own.

use crate::table::RmwTable;
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
    mem: RmwTable<T, A>,
    /// The memory is indexed directly (`RmwTable::rd_off`).
    no_off: Constant<Bits<A>>,
    wr_ptr: DFF<Bits<A1>>,
    rd_ptr: DFF<Bits<A1>>,
    used: Signal<Local, Bits<A1>>,
    do_push: Signal<Local, Bit>,
    do_pop: Signal<Local, Bit>,
    next_rd: Signal<Local, Bits<A1>>,
    one: Constant<Bits<A1>>,
    capacity: Constant<Bits<A1>>,
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
            mem: Default::default(),
            no_off: Constant::new(0.into()),
            wr_ptr: Default::default(),
            rd_ptr: Default::default(),
            used: Default::default(),
            do_push: Default::default(),
            do_pop: Default::default(),
            next_rd: Default::default(),
            one: Constant::new(1.into()),
            capacity: Constant::new((1u64 << A).into()),
        }
    }
}

impl<T: Synth, const A: usize, const A1: usize> Logic for Fifo<T, A, A1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr_ptr, rd_ptr);
        clock!(self, clock, mem);
        self.used.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
        self.do_push.next = self.push.val() & (self.used.val() != self.capacity.val());
        self.do_pop.next = self.pop.val() & self.used.val().any();
        self.mem.wr_en.next = self.do_push.val();
        self.mem.wr_addr.next = self.wr_ptr.q.val().get_bits::<A>(0);
        self.mem.wr_data.next = self.data.val();
        self.next_rd.next = self.rd_ptr.q.val();
        if self.do_pop.val() {
            self.next_rd.next = self.rd_ptr.q.val() + self.one.val();
        }
        self.mem.rd_addr.next = self.next_rd.val().get_bits::<A>(0);
        self.mem.rd_off.next = self.no_off.val();
        self.mem.rd_indexed.next = false;
        self.mem.rd_same.next = false;
        self.mem.rd_index.next = self.no_off.val();
        self.rd_ptr.d.next = self.next_rd.val();
        self.wr_ptr.d.next = self.wr_ptr.q.val();
        if self.do_push.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + self.one.val();
        }
        // The outputs from the registers alone, each in its own statement: no path from `push`
        // or `pop` to them, and none that Verilator could see through a shared local.
        self.full.next = (self.wr_ptr.q.val() - self.rd_ptr.q.val()) == self.capacity.val();
        self.head_valid.next = (self.wr_ptr.q.val() - self.rd_ptr.q.val()).any();
        self.head.next = self.mem.rd_data.val();
        self.count.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
    }
}
