//! The AXI4-Lite port's register-file write (`axil::FileWrite`, hand-written Verilog beside a Rust
//! `update`) against the same write on an array of words: its `update` in rust-hdl's simulator
//! and its Verilog in Verilator; and what it is for, measured: the whole port synthesizes with a
//! clock enable per byte of the file instead of a LUT per bit.

use horus_hdl_tools::verilog::emit;
use horus_model::config::Role;
use horus_pipeline::axil::{AxiLiteRegs, FileWrite};
use horus_pipeline::regmap::FILE_WORDS;
use rust_hdl::prelude::*;

mod common;

const BITS: usize = 32 * FILE_WORDS;

/// One write: the file before it, the one-hot (or any) set of words written, the data and the
/// byte strobes.
#[derive(Clone, Copy, Debug)]
struct Case {
    q: [u32; FILE_WORDS],
    words: u64,
    wdata: u32,
    strb: u8,
}

/// Every strobe pattern on words at both ends and in between, no word, and several words at once
/// (the primitive does not assume one-hot), each on a pseudo-random file.
fn cases() -> Vec<Case> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut v = Vec::new();
    let targets = [
        0u64,
        1,
        1 << 1,
        1 << 31,
        1 << 32,
        1 << 62,
        1 << 63,
        0b1001,
        u64::MAX,
    ];
    for &words in &targets {
        for strb in 0..16u8 {
            let mut q = [0u32; FILE_WORDS];
            q.iter_mut().for_each(|w| *w = next() as u32);
            v.push(Case {
                q,
                words,
                wdata: next() as u32,
                strb,
            });
        }
    }
    for _ in 0..100 {
        let mut q = [0u32; FILE_WORDS];
        q.iter_mut().for_each(|w| *w = next() as u32);
        v.push(Case {
            q,
            words: 1 << (next() % FILE_WORDS as u64),
            wdata: next() as u32,
            strb: (next() % 16) as u8,
        });
    }
    v
}

/// The file after the write, word by word.
fn expected(c: &Case) -> [u32; FILE_WORDS] {
    let mask = (0..4)
        .filter(|b| c.strb >> b & 1 == 1)
        .fold(0u32, |m, b| m | 0xff << (8 * b));
    let mut d = c.q;
    for (w, d) in d.iter_mut().enumerate() {
        if c.words >> w & 1 == 1 {
            *d = (*d & !mask) | (c.wdata & mask);
        }
    }
    d
}

fn file_bits(words: &[u32; FILE_WORDS]) -> Bits<BITS> {
    let mut b = Bits::<BITS>::default();
    for (w, &v) in words.iter().enumerate() {
        b.set_bits::<32>(32 * w, u64::from(v).into());
    }
    b
}

fn file_words(b: Bits<BITS>) -> [u32; FILE_WORDS] {
    std::array::from_fn(|w| u64::from(b.get_bits::<32>(32 * w)) as u32)
}

/// The primitive with a clock to pace rust-hdl's simulator.
#[derive(LogicBlock, Default)]
struct Probe {
    clock: Signal<In, Clock>,
    q: Signal<In, Bits<BITS>>,
    words: Signal<In, Bits<FILE_WORDS>>,
    wdata: Signal<In, Bits<32>>,
    strb: Signal<In, Bits<4>>,
    d: Signal<Out, Bits<BITS>>,
    write: FileWrite,
}

impl Logic for Probe {
    #[hdl_gen]
    fn update(&mut self) {
        self.write.q.next = self.q.val();
        self.write.words.next = self.words.val();
        self.write.wdata.next = self.wdata.val();
        self.write.strb.next = self.strb.val();
        self.d.next = self.write.d.val();
    }
}

#[test]
fn rust_update_writes_the_strobed_bytes_of_the_chosen_words() {
    let cases = cases();
    let seen = common::probe!(
        Probe,
        Probe::default(),
        cases.clone(),
        |x: &mut Probe, c: &Case| {
            x.q.next = file_bits(&c.q);
            x.words.next = c.words.into();
            x.wdata.next = u64::from(c.wdata).into();
            x.strb.next = u64::from(c.strb).into();
        },
        |x: &Probe| file_words(x.d.val())
    );
    for (c, d) in cases.iter().zip(seen.iter()) {
        assert_eq!(*d, expected(c), "{c:x?}");
    }
}

#[test]
fn verilog_writes_the_strobed_bytes_of_the_chosen_words_in_verilator() {
    let cases = cases();
    let mut write = FileWrite::default();
    write.connect_all();
    let v = emit(&write);
    horus_hdl_tools::check::verilator_lint("file_write", &v).unwrap();
    // One vector: {q, words, wdata, strb}, most significant first.
    let vectors: Vec<String> = cases
        .iter()
        .map(|c| {
            let q: String = c.q.iter().rev().map(|w| format!("{w:08x}")).collect();
            format!("{q}{:016x}{:08x}{:x}", c.words, c.wdata, c.strb)
        })
        .collect();
    let width = BITS + 64 + 32 + 4;
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg [{top}:0] vectors [0:{last}];
    reg [{qtop}:0] q;
    reg [63:0] words;
    reg [31:0] wdata;
    reg [3:0] strb;
    wire [{qtop}:0] d;
    integer j;
    top dut(.q(q), .words(words), .wdata(wdata), .strb(strb), .d(d));
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        for (j = 0; j <= {last}; j = j + 1) begin
            q = vectors[j][{top}:100];
            words = vectors[j][99:36];
            wdata = vectors[j][35:4];
            strb = vectors[j][3:0];
            #1 $display(\"r %h\", d);
        end
        $finish;
    end
endmodule
",
        top = width - 1,
        qtop = BITS - 1,
        last = cases.len() - 1,
    );
    let printed =
        horus_hdl_tools::check::verilator_vectors("file_write_sim", &vectors, &tb, &v).unwrap();
    let got: Vec<[u32; FILE_WORDS]> = printed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("r "))
        .map(|r| {
            assert_eq!(r.len(), BITS / 4, "{r}");
            std::array::from_fn(|w| {
                let at = r.len() - 8 * (w + 1);
                u32::from_str_radix(&r[at..at + 8], 16).unwrap()
            })
        })
        .collect();
    assert_eq!(got.len(), cases.len());
    for (c, d) in cases.iter().zip(got.iter()) {
        assert_eq!(*d, expected(c), "{c:x?}");
    }
}

/// The port with the write byte by byte: 1,526 LUTs with Yosys 0.23 for the leaf (3,500 when the
/// file was written through a 2,048-bit shifted mask, a LUT per bit); the bound leaves room for
/// the port to grow but not for a LUT per bit of the file.
#[test]
fn the_port_writes_its_file_through_clock_enables() {
    let mut uut = AxiLiteRegs::new(Role::Leaf, 6, 12, 10, 1000);
    uut.connect_all();
    let r = horus_hdl_tools::check::yosys_synth("axil_area", &emit(&uut)).unwrap();
    assert!(
        r.luts < 2_000,
        "the AXI4-Lite port takes {} LUTs: {r:?}",
        r.luts
    );
}
