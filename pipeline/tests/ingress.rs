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

/// The harness of `tests/formal/ingress.sv` around the emitted ingress: two instances, `a` and
/// `b`, their outputs `a_*` and `b_*`; `b`'s `s_axis` beat is its own while `a` is not ready.
fn ingress_harness(verilog: &str) -> String {
    let ports = horus_hdl_tools::check::ports(verilog);
    let beat = |n: &str| n.starts_with("s_axis_t") && n != "s_axis_tready";
    let inputs: Vec<String> = ports
        .iter()
        .filter(|p| p.0)
        .map(|(_, w, n)| format!("input wire {w} {n}"))
        .collect();
    let wires: String = ports
        .iter()
        .filter(|p| !p.0)
        .map(|(_, w, n)| format!("wire {w} a_{n};\n    wire {w} b_{n};\n    "))
        .collect();
    let connect = |who: &str| -> String {
        ports
            .iter()
            .map(|(input, _, n)| {
                if !input {
                    format!(".{n}({who}_{n})")
                } else if who == "b" && beat(n) {
                    format!(".{n}(b_{})", n.trim_start_matches("s_axis_"))
                } else {
                    format!(".{n}({n})")
                }
            })
            .collect::<Vec<_>>()
            .join(",\n        ")
    };
    // What each copy shows and writes: whether it offers a frame, and the frame when it does
    // (a descriptor entry never written differs between the copies, whose block RAMs start
    // free); the buffer's and the descriptor table's write ports (the buffer's read data is a
    // read of its RAM at an address both copies are given).
    let when = |n: &str| match n {
        "pkt" | "pkt_handle" | "pkt_start" => Some("a_pkt_valid"),
        "probe_buffer_write_address" | "probe_buffer_write_data" => {
            Some("a_probe_buffer_write_enable")
        }
        "probe_descs_wr_addr" | "probe_descs_wr_data" => Some("a_probe_descs_wr_en"),
        "buf_data" | "s_axis_tready" => None,
        _ => Some("1'b1"),
    };
    let equal: String = ports
        .iter()
        .filter(|p| !p.0)
        .filter_map(|(_, _, n)| {
            when(n).map(|c| format!("if ({c}) assert (a_{n} == b_{n});\n        "))
        })
        .collect();
    include_str!("formal/ingress.sv")
        .replace("@PORTS@", &inputs.join(",\n    "))
        .replace("@WIRES@", &wires)
        .replace("@CONNECT_A@", &connect("a"))
        .replace("@CONNECT_B@", &connect("b"))
        .replace("@EQUAL@", &equal)
}

/// Four cycles: a beat offered while not ready in any of them, and its effects for up to three
/// more (its write into the buffer in its own cycle; a frame's length and first beat registered
/// then; its descriptor written two cycles after its last beat). Each further cycle costs
/// much more: 10 s at 4, 229 s at 5 on a 2-core Intel Xeon 2.1 GHz.
const INGRESS_DEPTH: u32 = 4;

fn ingress_files(verilog: &str) -> [(&'static str, String); 2] {
    [
        ("top.v", verilog.to_string()),
        ("harness.sv", ingress_harness(verilog)),
    ]
}

fn ingress_verilog() -> String {
    let mut uut = Ingress::default();
    uut.connect_all();
    let v = horus_hdl_tools::check::with_probes(
        &emit(&uut),
        &[
            "buffer$write_enable",
            "buffer$write_address",
            "buffer$write_data",
            "descs$wr_en",
            "descs$wr_addr",
            "descs$wr_data",
            "busy$q",
            "alloc$q",
        ],
    );
    without_init(&without_init(&v, "alloc"), "busy")
}

/// The emitted Verilog with the flip-flop `top$NAME` given no initial value: the slot ring's
/// occupancy (`busy`) and allocation pointer (`alloc`) start free in the proof (the harness makes
/// them equal in both copies), so that it covers a full ring, whose `tready` is low, from the
/// first cycle (filling the ring from reset takes 64 frames, beyond its depth).
fn without_init(v: &str, name: &str) -> String {
    let start = v
        .find(&format!("module top${name}("))
        .expect("the flip-flop's module");
    let init = start
        + v[start..]
            .find("    initial begin")
            .expect("its initial block");
    let end = init + v[init..].find("    end\n").expect("its end") + "    end\n".len();
    format!("{}{}", &v[..init], &v[end..])
}

/// Bounded model checking (yosys-smtbmc, Yices): for every input sequence of up to
/// `INGRESS_DEPTH` cycles, a beat offered while `s_axis_tready` is low changes nothing the
/// ingress shows, then or later (`tests/formal/ingress.sv`).
#[test]
fn no_beat_is_proven_taken_while_tready_is_low() {
    let [a, b] = ingress_files(&ingress_verilog());
    let p = horus_hdl_tools::check::prove(
        "ingress_formal",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        INGRESS_DEPTH,
    )
    .unwrap();
    assert_eq!(
        p,
        horus_hdl_tools::check::Proof::Holds {
            depth: INGRESS_DEPTH
        }
    );
}

/// The proof fails on an ingress that takes a beat whenever it is offered (`tvalid` alone).
#[test]
fn the_input_side_proof_fails_when_a_beat_is_taken_regardless_of_tready() {
    let v = ingress_verilog();
    let (from, to) = (
        "take = s_axis_tvalid & s_axis_tready;",
        "take = s_axis_tvalid;",
    );
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = ingress_files(&v.replace(from, to));
    let step = horus_hdl_tools::check::refute(
        "ingress_mutant",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        INGRESS_DEPTH,
    )
    .unwrap();
    eprintln!("a beat taken regardless of tready: fails at step {step}");
}
