//! The ingress: a frame's length from its beats and `tkeep` (`FrameLen`, its Rust `update` and its
//! Verilog in Verilator), frames with a `tkeep` it does not accept dropped as malformed, and lint.

use horus_hdl_tools::verilog::emit;
use horus_pipeline::ingress::{FrameLen, Ingress, kept_bytes};
use horus_pipeline::parser::{CLASS_DROP_MALFORMED, CLASS_PASS_THROUGH};
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// `2^n - 1`: the first `n` bytes kept.
fn run_of(n: u32) -> u64 {
    if n == 64 { u64::MAX } else { (1u64 << n) - 1 }
}

#[test]
fn kept_bytes_decodes_every_contiguous_tkeep() {
    for n in 0..=64 {
        assert_eq!(kept_bytes(run_of(n)), u64::from(n), "{n} bytes");
    }
}

/// The decode one pair of bytes at a time, as its definition reads: bit `j < 6` of the result
/// is set when some byte `(2m + 1) 2^j - 1` is kept and byte `(2m + 2) 2^j - 1` is not.
fn kept_bytes_by_pairs(keep: u64) -> u64 {
    let bit = |i: u32| (keep >> i) & 1;
    let mut n = bit(63) << 6;
    for j in 0..6 {
        for m in 0..(32u32 >> j) {
            n |= (bit(((2 * m + 1) << j) - 1) & (bit(((2 * m + 2) << j) - 1) ^ 1)) << j;
        }
    }
    n
}

#[test]
fn kept_bytes_masks_are_the_pairwise_definition() {
    for (_, keep) in frame_len_cases() {
        assert_eq!(kept_bytes(keep), kept_bytes_by_pairs(keep), "{keep:#018x}");
    }
    for i in 0..64 {
        for n in 0..=64 {
            let keep = run_of(n) ^ (1 << i);
            assert_eq!(kept_bytes(keep), kept_bytes_by_pairs(keep), "{keep:#018x}");
        }
    }
}

/// (beats, keep): every contiguous `keep` at a few beat counts, and pseudo-random ones (which are
/// almost never contiguous) with holes, runs not from byte 0, single bytes.
fn frame_len_cases() -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    for beats in [0, 1, 31, 1023] {
        v.extend((0..=64).map(|n| (beats, run_of(n))));
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for i in 0..64 {
        v.push((i, 1 << i));
        v.push((i, run_of(64 - i as u32) << i));
        v.push((i, run_of(40) & !(1 << (i % 40))));
        let (beats, keep) = (next() % 1024, next());
        v.push((beats, keep));
    }
    v
}

/// What `FrameLen` gives: (len, 16 bits, contiguous).
fn frame_len(beats: u64, keep: u64) -> (u64, bool) {
    let len = (beats * 64 + kept_bytes(keep)) & 0xffff;
    (len, keep & keep.wrapping_add(1) == 0)
}

#[test]
fn frame_len_verilog_matches_its_rust_update() {
    let cases = frame_len_cases();
    // One vector per case: beats (10 bits, padded to 12) and keep.
    let vectors: Vec<String> = (cases.iter())
        .map(|&(b, k)| format!("{b:03x}{k:016x}"))
        .collect();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg [75:0] vectors [0:{last}];
    reg [9:0] beats;
    reg [63:0] keep;
    wire [15:0] len;
    wire contiguous;
    integer i;
    top dut(.beats(beats), .keep(keep), .len(len), .contiguous(contiguous));
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        for (i = 0; i <= {last}; i = i + 1) begin
            beats = vectors[i][73:64];
            keep = vectors[i][63:0];
            #1 $display(\"%h %h\", len, contiguous);
        end
        $finish;
    end
endmodule
",
        last = cases.len() - 1
    );
    let mut uut = FrameLen::default();
    uut.connect_all();
    let printed =
        horus_hdl_tools::check::verilator_vectors("frame_len_sim", &vectors, &tb, &emit(&uut))
            .unwrap();
    let seen: Vec<(u64, bool)> = (printed.lines())
        .filter_map(|l| {
            let (len, c) = l.trim().split_once(' ')?;
            Some((u64::from_str_radix(len, 16).ok()?, c == "1"))
        })
        .collect();
    assert_eq!(seen.len(), cases.len(), "{printed}");
    for (&(b, k), &s) in cases.iter().zip(seen.iter()) {
        assert_eq!(s, frame_len(b, k), "beats {b}, keep {k:#018x}");
    }
    // The Rust update in rust-hdl's simulator gives the same.
    let out = Arc::new(Mutex::new(Vec::new()));
    let sink = out.clone();
    let inputs = cases.clone();
    let mut sim = Simulation::new();
    sim.add_testbench(move |mut sim: Sim<FrameLen>| {
        let mut x = sim.init()?;
        for &(b, k) in &inputs {
            x.beats.next = b.into();
            x.keep.next = k.into();
            x = sim.wait(1, x)?;
            let len: u64 = x.len.val().into();
            sink.lock().unwrap().push((len, x.contiguous.val()));
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * cases.len() as u64 + 10)
        .unwrap();
    assert_eq!(*out.lock().unwrap(), seen);
}

/// One frame's beats: (data, keep, last).
type Beats = Vec<(u64, u64, bool)>;

/// A frame of `len` bytes that is not IPv4 (so passed through when accepted), as beats whose
/// first data word carries `tag`.
fn frame(len: u32, tag: u64) -> Beats {
    let n = len.div_ceil(64);
    (0..n)
        .map(|i| {
            let last = i + 1 == n;
            let keep = if last { run_of(len - 64 * i) } else { u64::MAX };
            (tag, keep, last)
        })
        .collect()
}

#[test]
fn frames_with_a_tkeep_the_ingress_does_not_accept_are_dropped_as_malformed() {
    let good = frame(100, 1);
    let mut hole = frame(100, 2);
    hole[1].1 &= !(1 << 5);
    let mut short_first = frame(100, 3);
    short_first[0].1 = run_of(63);
    let mut not_from_0 = frame(60, 4);
    not_from_0[0].1 = run_of(60) << 4;
    let mut all_ones_first_hole_last = frame(128, 5);
    all_ones_first_hole_last[1].1 = run_of(64) & !(1 << 63) & !1;
    // (beats, expected class, expected length): a good frame after each bad one shows that a
    // bad one leaves nothing behind. A malformed frame's length is not looked at.
    let script = vec![
        (good.clone(), CLASS_PASS_THROUGH, 100),
        (hole, CLASS_DROP_MALFORMED, 0),
        (good.clone(), CLASS_PASS_THROUGH, 100),
        (short_first, CLASS_DROP_MALFORMED, 0),
        (frame(60, 6), CLASS_PASS_THROUGH, 60),
        (not_from_0, CLASS_DROP_MALFORMED, 0),
        (frame(128, 7), CLASS_PASS_THROUGH, 128),
        (all_ones_first_hole_last, CLASS_DROP_MALFORMED, 0),
        (good, CLASS_PASS_THROUGH, 100),
    ];
    let expected: Vec<(u64, Option<u64>)> = (script.iter())
        .map(|&(_, class, len)| (class, (class != CLASS_DROP_MALFORMED).then_some(len)))
        .collect();
    let beats: Beats = script.into_iter().flat_map(|(b, _, _)| b).collect();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut uut = Ingress::default();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Ingress>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Ingress>| {
        let mut x = sim.init()?;
        x.pkt_take.next = true;
        let mut i = 0;
        for _ in 0..200 {
            // Inputs while the clock is low; `tready` comes from registers only.
            wait_clock_false!(sim, clock, x);
            let offer = beats.get(i);
            x.s_axis_tvalid.next = offer.is_some();
            if let Some(&(data, keep, last)) = offer {
                x.s_axis_tdata.next = data.into();
                x.s_axis_tkeep.next = keep.into();
                x.s_axis_tlast.next = last;
            }
            let sent = offer.is_some() && x.s_axis_tready.val();
            wait_clock_true!(sim, clock, x);
            if sent {
                i += 1;
            }
            // `pkt_take` is high: a frame offered now is taken at the next edge.
            if x.pkt_valid.val() {
                let class: u64 = x.pkt.val().parsed.class.into();
                let len: u64 = x.pkt.val().len.into();
                let len = (class != CLASS_DROP_MALFORMED).then_some(len);
                sink.lock().unwrap().push((class, len));
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 210).unwrap();
    assert_eq!(*seen.lock().unwrap(), expected);
}

#[test]
fn verilog_is_lint_clean() {
    let mut uut = Ingress::default();
    uut.connect_all();
    let v = emit(&uut);
    horus_hdl_tools::check::verilator_lint("ingress", &v).unwrap();
}
