//! `arith`'s primitives against Rust's integers: `ZeroExtend`, `SumSign` and `Sum3` as a stage uses
//! them (`x + y >= z` and `x - y >= z` on zero-extended 64-bit terms, and the whole of
//! `x - y + z` on [`WIDE`] bits), their Rust `update`s in rust-hdl's simulator and their Verilog in
//! Verilator.

use horus_hdl_tools::verilog::emit;
use horus_pipeline::arith::{Sum3, SumSign, WIDE, Wide, ZeroExtend};
use rust_hdl::prelude::*;

mod common;

/// (x, y, z): corners around zero, 2^32, 2^48 and 2^64, and a pseudo-random spread.
fn cases() -> Vec<(u64, u64, u64)> {
    let corners = [
        0,
        1,
        2,
        0xffff,
        0xffff_ffff,
        1 << 32,
        (1 << 48) - 1,
        1 << 48,
        (1 << 48) + 1,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut v = Vec::new();
    for &x in &corners {
        for &y in &corners {
            for &z in &corners {
                v.push((x, y, z));
            }
        }
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..300 {
        let (x, y) = (next(), next());
        // Near-ties: z at x + y or x - y give or take a little.
        let d = next() % 5;
        v.push((x, y, x.wrapping_add(y).wrapping_add(d).wrapping_sub(2)));
        v.push((x, y, x.wrapping_sub(y).wrapping_add(d).wrapping_sub(2)));
        v.push((
            x >> (next() % 64),
            y >> (next() % 64),
            next() >> (next() % 64),
        ));
    }
    v
}

/// (x + y >= z, x - y >= z) over the integers, and `x - y + z` mod 2^[`WIDE`].
fn expected(x: u64, y: u64, z: u64) -> (bool, bool, u128) {
    let (x, y, z) = (i128::from(x), i128::from(y), i128::from(z));
    (
        x + y >= z,
        x - y >= z,
        (x - y + z) as u128 & ((1 << WIDE) - 1),
    )
}

/// A [`WIDE`] value as an integer.
fn wide(v: Wide) -> u128 {
    u128::from(u64::from(v.get_bits::<64>(0))) | u128::from(u64::from(v.get_bits::<2>(64))) << 64
}

/// `x + y - z` is `x + y + !z + 1`; `x - y - z >= 0` is `!x + y + z` negative (it is
/// `-(x - y - z) - 1`).
#[derive(LogicBlock, Default)]
struct Probe {
    clock: Signal<In, Clock>,
    x: Signal<In, Bits<64>>,
    y: Signal<In, Bits<64>>,
    z: Signal<In, Bits<64>>,
    sum_ge: Signal<Out, Bit>,
    diff_ge: Signal<Out, Bit>,
    /// `x - y + z`, whole: `x + !y + z + 1`.
    total: Signal<Out, Wide>,
    wx: ZeroExtend<64, WIDE>,
    wy: ZeroExtend<64, WIDE>,
    wz: ZeroExtend<64, WIDE>,
    sum: SumSign,
    diff: SumSign,
    three: Sum3,
}

impl Logic for Probe {
    #[hdl_gen]
    fn update(&mut self) {
        self.wx.narrow.next = self.x.val();
        self.wy.narrow.next = self.y.val();
        self.wz.narrow.next = self.z.val();
        self.sum.a.next = self.wx.wide.val();
        self.sum.b.next = self.wy.wide.val();
        self.sum.c.next = !self.wz.wide.val();
        self.sum.cin.next = true;
        self.sum_ge.next = !self.sum.neg.val();
        self.diff.a.next = !self.wx.wide.val();
        self.diff.b.next = self.wy.wide.val();
        self.diff.c.next = self.wz.wide.val();
        self.diff.cin.next = false;
        self.diff_ge.next = self.diff.neg.val();
        self.three.a.next = self.wx.wide.val();
        self.three.b.next = !self.wy.wide.val();
        self.three.c.next = self.wz.wide.val();
        self.three.cin.next = true;
        self.total.next = self.three.sum.val();
    }
}

#[test]
fn wide_is_a_64_bit_value_with_two_bits_of_headroom() {
    assert_eq!(WIDE, 66);
    assert_eq!(Wide::default(), Bits::<66>::from(0));
}

#[test]
fn rust_update_matches_integers() {
    let cases = cases();
    let seen = common::probe!(
        Probe,
        Probe::default(),
        cases.clone(),
        |x: &mut Probe, &(a, b, c): &(u64, u64, u64)| {
            x.x.next = a.into();
            x.y.next = b.into();
            x.z.next = c.into();
        },
        |x: &Probe| (x.sum_ge.val(), x.diff_ge.val(), wide(x.total.val()))
    );
    for (&(x, y, z), &s) in cases.iter().zip(seen.iter()) {
        assert_eq!(s, expected(x, y, z), "x {x:#x}, y {y:#x}, z {z:#x}");
    }
}

#[test]
fn verilog_matches_integers_in_verilator() {
    let cases = cases();
    let mut uut = Probe::default();
    uut.connect_all();
    let v = emit(&uut);
    // The primitives lint clean on their own (the probe's clock only paces rust-hdl's simulator).
    let mut sign = SumSign::default();
    sign.connect_all();
    horus_hdl_tools::check::verilator_lint("arith_sum_sign", &emit(&sign)).unwrap();
    let mut three = Sum3::default();
    three.connect_all();
    horus_hdl_tools::check::verilator_lint("arith_sum3", &emit(&three)).unwrap();
    let mut ext = ZeroExtend::<32, WIDE>::default();
    ext.connect_all();
    horus_hdl_tools::check::verilator_lint("arith_zero_extend", &emit(&ext)).unwrap();
    let vectors: Vec<String> = cases
        .iter()
        .map(|&(x, y, z)| format!("{x:016x}{y:016x}{z:016x}"))
        .collect();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg [191:0] vectors [0:{last}];
    reg clock;
    reg [63:0] x, y, z;
    wire sum_ge, diff_ge;
    wire [65:0] total;
    integer j;
    top dut(.clock(clock), .x(x), .y(y), .z(z), .sum_ge(sum_ge), .diff_ge(diff_ge), .total(total));
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        clock = 0;
        for (j = 0; j <= {last}; j = j + 1) begin
            x = vectors[j][191:128];
            y = vectors[j][127:64];
            z = vectors[j][63:0];
            #1 $display(\"r %0d%0d %h\", sum_ge, diff_ge, total);
        end
        $finish;
    end
endmodule
",
        last = cases.len() - 1,
    );
    let printed =
        horus_hdl_tools::check::verilator_vectors("arith_probe_sim", &vectors, &tb, &v).unwrap();
    let got: Vec<(bool, bool, u128)> = printed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("r "))
        .map(|r| {
            let total = u128::from_str_radix(&r[3..], 16).unwrap();
            (r.as_bytes()[0] == b'1', r.as_bytes()[1] == b'1', total)
        })
        .collect();
    assert_eq!(got.len(), cases.len());
    for (&(x, y, z), &g) in cases.iter().zip(got.iter()) {
        assert_eq!(g, expected(x, y, z), "x {x:#x}, y {y:#x}, z {z:#x}");
    }
}
