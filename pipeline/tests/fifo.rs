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
