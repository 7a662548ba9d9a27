//! The FIFO against a queue in Rust: random pushes and pops, full and empty edges, values
//! pushed into an empty FIFO at once at the head.

use horus_pipeline::fifo::Fifo;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

type F = Fifo<Bits<12>, 3, 4>;

fn run(seed: u64, push_percent: u64, pop_percent: u64, cycles: usize) -> (usize, usize, usize) {
    let mut uut = F::default();
    uut.connect_all();
    let result = std::sync::Arc::new(std::sync::Mutex::new((0, 0, 0)));
    let sink = result.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<F>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<F>| {
        let mut x = sim.init()?;
        let mut g = seed | 1;
        let mut rnd = move |n: u64| {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g % n
        };
        let mut model: VecDeque<u64> = VecDeque::new();
        let (mut pushed, mut popped, mut fulls) = (0, 0, 0);
        wait_clock_true!(sim, clock, x);
        for _ in 0..cycles {
            let push = rnd(100) < push_percent;
            let pop = rnd(100) < pop_percent;
            let value = rnd(1 << 12);
            x.push.next = push;
            x.data.next = value.into();
            x.pop.next = pop;
            wait_clock_false!(sim, clock, x);
            assert_eq!(x.count.val().index(), model.len(), "count");
            assert_eq!(x.full.val(), model.len() == 8, "full");
            assert_eq!(x.head_valid.val(), !model.is_empty(), "head_valid");
            if let Some(&h) = model.front() {
                assert_eq!(x.head.val().index() as u64, h, "head");
            }
            // `full` is decided before this cycle's pop.
            let room = model.len() < 8;
            if pop && !model.is_empty() {
                model.pop_front();
                popped += 1;
            }
            if push {
                if room {
                    model.push_back(value);
                    pushed += 1;
                } else {
                    fulls += 1;
                }
            }
            wait_clock_true!(sim, clock, x);
        }
        *sink.lock().unwrap() = (pushed, popped, fulls);
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * (cycles as u64 + 10)).unwrap();
    *result.lock().unwrap()
}

#[test]
fn matches_a_queue_when_mostly_empty() {
    let (pushed, popped, _) = run(1, 40, 90, 3000);
    assert!(pushed > 1000 && popped > 1000);
}

#[test]
fn matches_a_queue_when_often_full() {
    let (pushed, popped, fulls) = run(2, 90, 40, 3000);
    assert!(
        pushed > 1000 && popped > 1000 && fulls > 100,
        "{fulls} pushes refused"
    );
}

#[test]
fn verilog_is_lint_clean() {
    let mut uut = F::default();
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint("fifo", &v).unwrap();
}

/// The FIFO the formal harness (`tests/formal/fifo.sv`) runs: 4 entries of 8 bits.
type Small = Fifo<Bits<8>, 2, 3>;

/// Enough cycles to fill the FIFO, drain it and wrap both pointers (3 bits) more than once.
const PROOF_DEPTH: u32 = 14;

fn prove_fifo(name: &str, verilog: &str) -> horus_hdl_tools::check::Proof {
    horus_hdl_tools::check::prove(
        name,
        &[
            ("top.v", verilog),
            ("harness.sv", include_str!("formal/fifo.sv")),
        ],
        "harness",
        PROOF_DEPTH,
    )
    .unwrap()
}

fn small_verilog() -> String {
    let mut uut = Small::default();
    uut.connect_all();
    horus_hdl_tools::verilog::emit(&uut)
}

/// Bounded model checking (yosys-smtbmc, Yices): for every sequence of pushes, values and pops of
/// up to `PROOF_DEPTH` cycles the FIFO is a queue (count, full, valid and head agree with a
/// reference), and as an AXI-Stream master it holds valid and the beat while stalled.
#[test]
fn the_fifo_is_proven_a_queue_and_an_axi_stream_master() {
    assert_eq!(
        prove_fifo("fifo_formal", &small_verilog()),
        horus_hdl_tools::check::Proof::Holds { depth: PROOF_DEPTH }
    );
}

/// The proofs fail on mutants: a FIFO that forgets a lone entry nobody pops (valid dropped
/// while stalled), and one whose head skips the forwarding register (an entry pushed into an
/// empty FIFO shows the block RAM's old word).
#[test]
fn the_fifo_proof_fails_on_a_dropped_valid_and_on_missing_forwarding() {
    let v = small_verilog();
    for (what, from, to) in [
        ("dropped valid", "one_left & ~do_pop", "one_left & 1'b0"),
        ("no forwarding", "if (fwd_hit$q) begin", "if (1'b0) begin"),
    ] {
        assert_eq!(
            v.matches(from).count(),
            1,
            "{what}: the mutation site in:\n{v}"
        );
        match prove_fifo(
            &format!("fifo_mutant_{}", what.replace(' ', "_")),
            &v.replace(from, to),
        ) {
            horus_hdl_tools::check::Proof::Fails { step, .. } => {
                eprintln!("{what}: fails at step {step}")
            }
            p => panic!("{what}: the mutant passed: {p:?}"),
        }
    }
}
