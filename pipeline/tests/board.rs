//! The board adapters (`pipeline/src/board/`): the microsecond clock, the frame arbiter and the
//! frame demultiplexer, in rust-hdl's simulator and through Verilator's lint.

use horus_hdl_tools::{check::verilator_lint, verilog::emit};
use horus_pipeline::board::{arbiter::FrameArbiter3, demux::FrameDemux3, us_clock::UsClock};
use rust_hdl::prelude::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

#[test]
fn us_clock_counts_microseconds_and_restarts_on_reset() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<UsClock>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<UsClock>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for cycle in 0..60u64 {
            x.reset.next = cycle == 40;
            wait_clock_cycle!(sim, clock, x);
            sink.lock().unwrap().push(x.now_us.val().index() as u64);
        }
        sim.done(x)
    });
    let mut uut = UsClock::new(4);
    uut.connect_all();
    sim.run(Box::new(uut), 2_000).unwrap();
    let seen = seen.lock().unwrap().clone();
    // After cycle c (0-based) the counter has seen c + 2 clocks (the first edge is the one the
    // test bench waits for): floor((c + 2) / 4) microseconds; the reset in cycle 40 clears it at
    // its edge, and counting starts again from the next one.
    let want: Vec<u64> = (0..60u64)
        .map(|c| if c < 40 { (c + 2) / 4 } else { (c - 40) / 4 })
        .collect();
    assert_eq!(seen, want);
}

#[test]
#[should_panic(expected = "a clock of 1 to 1023 MHz")]
fn us_clock_refuses_a_clock_it_cannot_count() {
    UsClock::new(0);
}

/// A reproducible coin for the test benches: `draw(pct)` is true with `pct` percent chance
/// (xorshift64 from `seed`).
fn chance(seed: u64) -> impl FnMut(u64) -> bool {
    let mut rng = seed.max(1);
    move |pct| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % 100 < pct
    }
}

/// A beat's tag in the low 64 bits of `tdata`: input, frame number, beat number.
fn tag(src: u64, frame: u64, beat: u64) -> u64 {
    (src << 48) | (frame << 16) | beat
}

/// One output beat: its tag, `tkeep`'s low bits, `tlast`, `m_src`.
type Beat = (u64, u64, bool, u64);

/// Runs the arbiter with three sources of `frames[i]` frames (lengths in beats), each offering a
/// beat with `offer_pct` percent chance per cycle (and holding it until taken), the output ready
/// with `ready_pct` percent chance; returns the beats out, in order.
fn run_arbiter(frames: [Vec<u64>; 3], offer_pct: u64, ready_pct: u64, seed: u64) -> Vec<Beat> {
    let total: u64 = frames.iter().flatten().sum();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<FrameArbiter3>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<FrameArbiter3>| {
        let mut x = sim.init()?;
        let mut draw = chance(seed);
        // Per source: the frames left (length), the frame number, the next beat, whether a
        // beat is on offer.
        let mut left: Vec<VecDeque<u64>> =
            frames.iter().map(|f| f.iter().copied().collect()).collect();
        let mut frame_no = [0u64; 3];
        let mut beat_no = [0u64; 3];
        let mut offering = [false; 3];
        x.reset.next = true;
        wait_clock_true!(sim, clock, x);
        wait_clock_cycle!(sim, clock, x);
        x.reset.next = false;
        let mut out = 0u64;
        let mut cycles = 0u64;
        let mut held = None;
        while out < total {
            cycles += 1;
            assert!(cycles < 100 * total + 1000, "the arbiter stalled");
            for i in 0..3 {
                if !offering[i] && !left[i].is_empty() && draw(offer_pct) {
                    offering[i] = true;
                }
            }
            let beat = |i: usize| {
                let len = left[i].front().copied().unwrap_or(1);
                let t = tag(i as u64, frame_no[i], beat_no[i]);
                (t, beat_no[i] + 1 == len)
            };
            let (t0, l0) = beat(0);
            let (t1, l1) = beat(1);
            let (t2, l2) = beat(2);
            x.s0_tvalid.next = offering[0];
            x.s0_tdata.next = t0.into();
            x.s0_tkeep.next = (t0 & 0xffff).into();
            x.s0_tlast.next = l0;
            x.s1_tvalid.next = offering[1];
            x.s1_tdata.next = t1.into();
            x.s1_tkeep.next = (t1 & 0xffff).into();
            x.s1_tlast.next = l1;
            x.s2_tvalid.next = offering[2];
            x.s2_tdata.next = t2.into();
            x.s2_tkeep.next = (t2 & 0xffff).into();
            x.s2_tlast.next = l2;
            x.m_tready.next = draw(ready_pct);
            wait_clock_false!(sim, clock, x);
            let taken = [
                offering[0] && x.s0_tready.val(),
                offering[1] && x.s1_tready.val(),
                offering[2] && x.s2_tready.val(),
            ];
            assert!(
                taken.iter().filter(|&&t| t).count() <= 1,
                "two inputs taken at once"
            );
            let now = (
                x.m_tdata.val().get_bits::<32>(0).index(),
                x.m_tdata.val().get_bits::<32>(32).index(),
                x.m_src.val().index(),
                x.m_tlast.val(),
            );
            if let Some(was) = held {
                assert!(
                    x.m_tvalid.val(),
                    "m_tvalid dropped before its beat was taken"
                );
                assert_eq!(now, was, "the output changed while it waited for m_tready");
            }
            held = (x.m_tvalid.val() && !x.m_tready.val()).then_some(now);
            if x.m_tvalid.val() && x.m_tready.val() {
                let d = x.m_tdata.val();
                let t = d.get_bits::<32>(0).index() as u64
                    | (d.get_bits::<32>(32).index() as u64) << 32;
                let k = x.m_tkeep.val().get_bits::<16>(0).index() as u64;
                sink.lock()
                    .unwrap()
                    .push((t, k, x.m_tlast.val(), x.m_src.val().index() as u64));
                out += 1;
            }
            for i in 0..3 {
                if taken[i] {
                    offering[i] = false;
                    beat_no[i] += 1;
                    if beat_no[i] == *left[i].front().unwrap() {
                        left[i].pop_front();
                        frame_no[i] += 1;
                        beat_no[i] = 0;
                    }
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let mut uut = FrameArbiter3::default();
    uut.connect_all();
    sim.run(Box::new(uut), 10 * (200 * total + 2_000)).unwrap();
    seen.lock().unwrap().clone()
}

/// Splits the output into frames and checks each: one input's beats, numbered from 0, `tlast`
/// on the last only, `tkeep` and `m_src` carried; each input's frames in order and complete.
/// Returns the input of each frame, in output order.
fn frames_out(beats: &[Beat], frames: &[Vec<u64>; 3]) -> Vec<u64> {
    let mut order = Vec::new();
    let mut next_frame = [0u64; 3];
    let mut i = 0;
    while i < beats.len() {
        let src = beats[i].0 >> 48;
        let frame = (beats[i].0 >> 16) & 0xffff_ffff;
        assert_eq!(
            frame, next_frame[src as usize],
            "input {src}'s frames in order"
        );
        let len = frames[src as usize][frame as usize];
        for b in 0..len {
            let (t, k, last, from) = beats[i + b as usize];
            assert_eq!(
                t,
                tag(src, frame, b),
                "frame {frame} of input {src} whole, in order"
            );
            assert_eq!(k, t & 0xffff, "tkeep carried");
            assert_eq!(from, src, "m_src names the input");
            assert_eq!(last, b + 1 == len, "tlast on the last beat only");
        }
        next_frame[src as usize] += 1;
        order.push(src);
        i += len as usize;
    }
    for s in 0..3 {
        assert_eq!(
            next_frame[s] as usize,
            frames[s].len(),
            "every frame of input {s}"
        );
    }
    order
}

#[test]
fn arbiter_never_splits_a_frame_and_loses_nothing_under_random_timing() {
    for seed in 1..=4u64 {
        let lens = |k: u64| {
            (0..40)
                .map(|j| 1 + (j * 7 + k * 3 + seed) % 5)
                .collect::<Vec<_>>()
        };
        let frames = [lens(0), lens(1), lens(2)];
        let beats = run_arbiter(frames.clone(), 60, 70, seed);
        frames_out(&beats, &frames);
    }
}

#[test]
fn arbiter_serves_busy_inputs_in_turn() {
    let frames = [vec![2; 20], vec![3; 20], vec![1; 20]];
    let beats = run_arbiter(frames.clone(), 100, 100, 1);
    let order = frames_out(&beats, &frames);
    let want: Vec<u64> = (0..60).map(|k| k % 3).collect();
    assert_eq!(order, want, "round robin from input 0 after reset");
}

#[test]
fn an_input_alone_has_the_whole_output() {
    let frames = [vec![], vec![4; 30], vec![]];
    let beats = run_arbiter(frames.clone(), 100, 100, 1);
    assert_eq!(frames_out(&beats, &frames), vec![1; 30]);
}

/// The length in bytes the test benches give frame `f` in `tuser[27:16]`.
fn frame_bytes(f: u64) -> u64 {
    60 + (f * 37) % 1989
}

/// A beat a demultiplexer's output took: its tag, `tlast`, `m_len`.
type OutBeat = (u64, bool, u64);

/// Sends `frames` (port, beats) through a demultiplexer with outputs `present`, the input
/// offering a beat with `offer_pct` percent chance per cycle (holding it until taken) and each
/// output ready with `ready_pct`; returns the beats each output took (tag, `tlast`, `m_len`) and
/// the drop count.
fn run_demux(
    frames: Vec<(u64, u64)>,
    present: [bool; 3],
    offer_pct: u64,
    ready_pct: u64,
    seed: u64,
) -> ([Vec<OutBeat>; 3], u64) {
    let seen = Arc::new(Mutex::new(([Vec::new(), Vec::new(), Vec::new()], 0u64)));
    let sink = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<FrameDemux3>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<FrameDemux3>| {
        let mut x = sim.init()?;
        let mut draw = chance(seed);
        x.reset.next = true;
        wait_clock_true!(sim, clock, x);
        wait_clock_cycle!(sim, clock, x);
        x.reset.next = false;
        let (mut f, mut b, mut offering) = (0usize, 0u64, false);
        let mut idle = 0;
        while idle < 20 {
            if f == frames.len() {
                idle += 1;
            }
            if !offering && f < frames.len() && draw(offer_pct) {
                offering = true;
            }
            let (port, len) = frames.get(f).copied().unwrap_or((0, 1));
            x.s_tvalid.next = offering;
            x.s_tdata.next = tag(port, f as u64, b).into();
            x.s_tkeep.next = 0xffff.into();
            x.s_tlast.next = b + 1 == len;
            // Bits between the port number and the length must not matter.
            x.s_tuser.next = (port | 0xab00 | frame_bytes(f as u64) << 16).into();
            x.m0_tready.next = draw(ready_pct);
            x.m1_tready.next = draw(ready_pct);
            x.m2_tready.next = draw(ready_pct);
            wait_clock_false!(sim, clock, x);
            let outs = [
                (
                    x.m0_tvalid.val(),
                    x.m0_tready.val(),
                    x.m0_tdata.val(),
                    x.m0_tlast.val(),
                ),
                (
                    x.m1_tvalid.val(),
                    x.m1_tready.val(),
                    x.m1_tdata.val(),
                    x.m1_tlast.val(),
                ),
                (
                    x.m2_tvalid.val(),
                    x.m2_tready.val(),
                    x.m2_tdata.val(),
                    x.m2_tlast.val(),
                ),
            ];
            assert!(
                outs.iter().filter(|o| o.0).count() <= usize::from(offering),
                "a beat offered on one output at most, and only with one on the input"
            );
            for (i, (valid, ready, data, last)) in outs.into_iter().enumerate() {
                if valid && ready {
                    let t = data.get_bits::<32>(0).index() as u64
                        | (data.get_bits::<32>(32).index() as u64) << 32;
                    let len = x.m_len.val().index() as u64;
                    sink.lock().unwrap().0[i].push((t, last, len));
                }
            }
            if offering && x.s_tready.val() {
                offering = false;
                b += 1;
                if b == len {
                    f += 1;
                    b = 0;
                }
            }
            sink.lock().unwrap().1 = x.dropped.val().index() as u64;
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let mut uut = FrameDemux3::new(present);
    uut.connect_all();
    sim.run(Box::new(uut), 10 * 400_000).unwrap();
    seen.lock().unwrap().clone()
}

#[test]
fn demux_sends_each_frame_whole_to_its_port_and_counts_the_rest() {
    // All three streams, then a board without stream 1 (one MAC port and the host).
    for (seed, present) in (1..=4u64).zip([[true; 3], [true; 3], [true, false, true], [true; 3]]) {
        let frames: Vec<(u64, u64)> = (0..120u64)
            .map(|j| {
                (
                    [0, 1, 2, 7, 1, 0, 2, 200][((j * 5 + seed) % 8) as usize],
                    1 + (j * 3 + seed) % 4,
                )
            })
            .collect();
        let has = |p: u64| p < 3 && present[p as usize];
        let (outs, dropped) = run_demux(frames.clone(), present, 70, 60, seed);
        for (port, out) in outs.iter().enumerate() {
            let want: Vec<OutBeat> = frames
                .iter()
                .enumerate()
                .filter(|(_, (p, _))| *p == port as u64 && has(*p))
                .flat_map(|(f, &(p, len))| {
                    (0..len)
                        .map(move |b| (tag(p, f as u64, b), b + 1 == len, frame_bytes(f as u64)))
                })
                .collect();
            assert_eq!(
                *out, want,
                "port {port}: its frames, whole and in order, each beat with its frame's \
                 length (seed {seed}, present {present:?})"
            );
        }
        let beyond = frames.iter().filter(|(p, _)| !has(*p)).count() as u64;
        assert!(beyond > 0);
        assert_eq!(
            dropped, beyond,
            "every frame for a port the board lacks counted once (present {present:?})"
        );
    }
}

#[test]
fn no_beat_moves_during_a_reset() {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<FrameArbiter3>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<FrameArbiter3>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for reset in [false, true, true, false] {
            x.reset.next = reset;
            x.s0_tvalid.next = true;
            x.s1_tvalid.next = true;
            x.s2_tvalid.next = true;
            x.m_tready.next = true;
            wait_clock_false!(sim, clock, x);
            let moving =
                x.m_tvalid.val() || x.s0_tready.val() || x.s1_tready.val() || x.s2_tready.val();
            assert_eq!(moving, !reset, "arbiter, reset {reset}");
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let mut uut = FrameArbiter3::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200).unwrap();

    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<FrameDemux3>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<FrameDemux3>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for reset in [false, true, true, false] {
            x.reset.next = reset;
            x.s_tvalid.next = true;
            x.s_tuser.next = 1.into();
            x.m0_tready.next = true;
            x.m1_tready.next = true;
            x.m2_tready.next = true;
            wait_clock_false!(sim, clock, x);
            let moving =
                x.s_tready.val() || x.m0_tvalid.val() || x.m1_tvalid.val() || x.m2_tvalid.val();
            assert_eq!(moving, !reset, "demultiplexer, reset {reset}");
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let mut uut = FrameDemux3::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200).unwrap();
}

#[test]
fn board_adapters_are_lint_clean() {
    let mut c = UsClock::new(250);
    c.connect_all();
    verilator_lint("us_clock", &emit(&c)).unwrap();
    let mut a = FrameArbiter3::default();
    a.connect_all();
    verilator_lint("frame_arbiter3", &emit(&a)).unwrap();
    let mut d = FrameDemux3::default();
    d.connect_all();
    verilator_lint("frame_demux3", &emit(&d)).unwrap();
}

#[test]
fn the_register_slice_passes_every_beat_in_order_at_full_rate() {
    use horus_pipeline::board::slice::{RegSlice, StreamBeat};
    for (seed, offer, ready) in [
        (1u64, 100u64, 100u64),
        (2, 70, 60),
        (3, 100, 30),
        (4, 30, 100),
    ] {
        let seen = Arc::new(Mutex::new((Vec::new(), 0u64)));
        let sink = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<RegSlice>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<RegSlice>| {
            let mut x = sim.init()?;
            let mut draw = chance(seed);
            let (mut next, mut offering, mut cycles) = (0u64, false, 0u64);
            while cycles < 3000 {
                if !offering && next < 1000 && draw(offer) {
                    offering = true;
                }
                x.s_tvalid.next = offering;
                x.s_beat.next = StreamBeat {
                    data: next.into(),
                    keep: next.into(),
                    last: next % 3 == 0,
                    user: (next + 7).into(),
                };
                let ready = draw(ready);
                x.m_tready.next = ready;
                wait_clock_false!(sim, clock, x);
                if ready && x.m_tvalid.val() {
                    let b = x.m_beat.val();
                    let t = b.data.get_bits::<32>(0).index() as u64;
                    assert_eq!(b.keep.get_bits::<32>(0).index() as u64, t);
                    assert_eq!(b.last, t % 3 == 0);
                    assert_eq!(b.user.index() as u64, t + 7);
                    sink.lock().unwrap().0.push(t);
                }
                if offering && x.s_tready.val() {
                    offering = false;
                    next += 1;
                }
                wait_clock_true!(sim, clock, x);
                cycles += 1;
            }
            sink.lock().unwrap().1 = next;
            sim.done(x)
        });
        let mut uut = RegSlice::default();
        uut.connect_all();
        sim.run(Box::new(uut), 10 * 4000).unwrap();
        let (out, sent) = seen.lock().unwrap().clone();
        assert_eq!(
            out,
            (0..out.len() as u64).collect::<Vec<_>>(),
            "in order, none lost or repeated"
        );
        assert!(
            sent - out.len() as u64 <= 2,
            "at most the two registers' beats inside"
        );
        if offer == 100 && ready == 100 {
            assert!(
                out.len() >= 995,
                "one beat per clock: {} of 1000",
                out.len()
            );
        }
    }
    let mut s = RegSlice::default();
    s.connect_all();
    verilator_lint("reg_slice", &emit(&s)).unwrap();
}

/// The harness of `tests/formal/arbiter.sv` around the arbiter, with its state as outputs; without
/// the induction's invariants (`@INVARIANTS` to `@END`) unless `invariants`.
fn arbiter_files(verilog: &str, invariants: bool) -> [(&'static str, String); 2] {
    let mut h = include_str!("formal/arbiter.sv").to_string();
    if !invariants {
        let a = h.find("// @INVARIANTS").expect("invariants");
        let b = h.find("// @END").expect("end of the invariants");
        h.replace_range(a..b, "");
    }
    [
        ("top.v", verilog.to_string()),
        ("harness.sv", horus_hdl_tools::check::harness(&h, verilog)),
    ]
}

fn arbiter_verilog() -> String {
    let mut uut = FrameArbiter3::default();
    uut.connect_all();
    horus_hdl_tools::check::with_probes(
        &horus_hdl_tools::verilog::emit(&uut),
        &["busy$q", "cur$q", "prev$q"],
    )
}

/// Base case and induction step at this depth: the arbiter's rules hold at every depth.
const ARBITER_DEPTH: u32 = 4;

/// The arbiter, proven for every input and back-pressure sequence (yosys-smtbmc, Yices,
/// k-induction): it passes the chosen input's beats through and takes no other input's, holds a
/// stalled beat, never splits or interleaves a frame, and serves an input waiting with a frame
/// after at most two other frames (`tests/formal/arbiter.sv`).
#[test]
fn the_arbiter_is_proven_to_keep_frames_whole_and_starve_no_input() {
    let [a, b] = arbiter_files(&arbiter_verilog(), true);
    assert_eq!(
        horus_hdl_tools::check::prove_inductive(
            "arbiter_formal",
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            ARBITER_DEPTH
        )
        .unwrap(),
        horus_hdl_tools::check::Proof::Proven {
            depth: ARBITER_DEPTH
        }
    );
}

/// The arbiter's claims fail on mutants (checked without the induction's invariants, so that a
/// claim, not an invariant, is what breaks): a choice made afresh every cycle (frames
/// interleave) and a round robin that never moves on (a fixed priority: input 2 starves).
#[test]
fn the_arbiter_proof_fails_on_interleaving_and_on_starvation() {
    let v = arbiter_verilog();
    for (what, from, to, sites) in [
        ("choice not held", "if (~busy) begin", "if (1'b1) begin", 2),
        ("fixed priority", "prev$d = sel;\n", "prev$d = prev$q;\n", 1),
    ] {
        assert_eq!(v.matches(from).count(), sites, "{what}: the mutation site");
        let [a, b] = arbiter_files(&v.replace(from, to), false);
        let step = horus_hdl_tools::check::refute(
            &format!("arbiter_mutant_{}", what.replace(' ', "_")),
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            ARBITER_DEPTH + 4,
        )
        .unwrap();
        eprintln!("{what}: fails at step {step}");
    }
}
