//! Arithmetic primitives for the stages' read-modify-write loops.
//!
//! - [`ZeroExtend`] widens a value (`{0, narrow}`), which rust-hdl cannot write lint-clean: a
//!   one-line hand-written module, its Rust `update` the same.
//! - [`Sum3`] adds three terms (two's complement, [`WIDE`] bits) with one carry chain behind
//!   one LUT level: the three terms are first reduced to two, bit by bit (carry-save: each bit's
//!   sum and carry are functions of that bit of the three terms), and the two are added.
//!   [`SumSign`] is its sign. Where a loop compares a sum with a threshold (`x + y >= z`) this is
//!   one chain where an add then a compare is two, with a LUT level between them.

use rust_hdl::prelude::*;

/// Width of [`SumSign`]'s terms: a 64-bit value plus a sign bit, plus one bit of headroom for a sum
/// of two of them.
pub const WIDE: usize = 66;
/// A [`WIDE`] two's-complement value.
pub type Wide = Bits<WIDE>;

/// `wide = {0, narrow}`: zero extension. Hand-written; `update` is the same in Rust.
#[derive(LogicBlock, Default)]
pub struct ZeroExtend<const A: usize, const B: usize> {
    pub narrow: Signal<In, Bits<A>>,
    pub wide: Signal<Out, Bits<B>>,
}

impl<const A: usize, const B: usize> Logic for ZeroExtend<A, B> {
    fn update(&mut self) {
        let mut w: Bits<B> = 0.into();
        for i in 0..A {
            w = w.replace_bit(i, self.narrow.val().get_bit(i));
        }
        self.wide.next = w;
    }

    fn connect(&mut self) {
        self.wide.connect();
    }

    fn hdl(&self) -> Verilog {
        assert!(B > A);
        Verilog::Custom(format!("assign wide = {{{}'d0, narrow}};", B - A))
    }
}

/// `sum = a + b + c + cin` (mod 2^[`WIDE`]) in one carry chain: the three terms reduced to two
/// bit by bit (carry-save), then added.
#[derive(LogicBlock)]
pub struct Sum3 {
    pub a: Signal<In, Wide>,
    pub b: Signal<In, Wide>,
    pub c: Signal<In, Wide>,
    pub cin: Signal<In, Bit>,
    pub sum: Signal<Out, Wide>,
    /// The carry-save form: `a + b + c == s + 2 k`.
    s: Signal<Local, Wide>,
    k: Signal<Local, Wide>,
    /// `2 k + cin` (the doubled carries leave bit 0 free for `cin`).
    k2: Signal<Local, Wide>,
    one: Constant<Bits<8>>,
    bit0: Constant<Wide>,
}

impl Default for Sum3 {
    fn default() -> Self {
        Self {
            a: Default::default(),
            b: Default::default(),
            c: Default::default(),
            cin: Default::default(),
            sum: Default::default(),
            s: Default::default(),
            k: Default::default(),
            k2: Default::default(),
            one: Constant::new(1.into()),
            bit0: Constant::new(1.into()),
        }
    }
}

impl Logic for Sum3 {
    #[hdl_gen]
    fn update(&mut self) {
        self.s.next = self.a.val() ^ self.b.val() ^ self.c.val();
        self.k.next = (self.a.val() & self.b.val())
            | (self.a.val() & self.c.val())
            | (self.b.val() & self.c.val());
        self.k2.next = self.k.val() << self.one.val();
        if self.cin.val() {
            self.k2.next = (self.k.val() << self.one.val()) | self.bit0.val();
        }
        // The carries first: synthesis feeds a carry chain's `DI` from its first operand, so `s`
        // is needed only inside each `S` input (`s ^ k2`, a function of two bits of each term)
        // and need not be a LUT of its own (the whole leaf: 111 LUTs fewer, depth unchanged).
        self.sum.next = self.k2.val() + self.s.val();
    }
}

/// `neg`: whether `a + b + c + cin` (mod 2^[`WIDE`]) has its top bit set ([`Sum3`]'s sign).
#[derive(LogicBlock, Default)]
pub struct SumSign {
    pub a: Signal<In, Wide>,
    pub b: Signal<In, Wide>,
    pub c: Signal<In, Wide>,
    pub cin: Signal<In, Bit>,
    pub neg: Signal<Out, Bit>,
    sum3: Sum3,
    /// The sum; only its top bit is read (the name matches Verilator's `--unused-regexp`).
    total_unused: Signal<Local, Wide>,
}

impl Logic for SumSign {
    #[hdl_gen]
    fn update(&mut self) {
        self.sum3.a.next = self.a.val();
        self.sum3.b.next = self.b.val();
        self.sum3.c.next = self.c.val();
        self.sum3.cin.next = self.cin.val();
        self.total_unused.next = self.sum3.sum.val();
        self.neg.next = self.total_unused.val().get_bit(65);
    }
}
