//! Drives a stage (a block with fields `clock`, `early`, `pass_in`, `pass_out`) one pass per
//! clock in rust-hdl's simulator and collects what leaves it. A pass is presented as `early` (its
//! index reaches the first table) one cycle before it is `pass_in`, as the previous stage does.
//! Also runs a combinational probe (a primitive behind a clock) input by input (`probe!`).
#![allow(dead_code, unused_macros)]

/// Cycles from a pass presented as `early` to its leaving a chain of one stage (`k` stages:
/// `k + 1`).
pub const STAGE_LATENCY: usize = 2;

/// `drive!(Type, uut, passes[, latency])`: feeds `passes: Vec<Option<Phv>>` one per clock (`None`: an idle cycle)
/// and returns, in order, the pass that left the stage for each input pass.
macro_rules! drive {
    ($ty:ty, $uut:expr, $passes:expr) => {
        drive!($ty, $uut, $passes, common::STAGE_LATENCY)
    };
    ($ty:ty, $uut:expr, $passes:expr, $latency:expr) => {{
        let latency: usize = $latency;
        common::drive_collect!(
            $ty,
            $uut,
            $passes,
            latency,
            move |i: usize, fed: &[bool], _: &horus_pipeline::phv::Phv| {
                i + 1 >= latency && fed[i + 1 - latency]
            }
        )
    }};
}
#[allow(unused_imports)]
pub(crate) use drive;

/// `drive_held!(Type, uut, passes, tail)`: feeds `passes` as `drive!` does, runs `tail` more idle
/// cycles, and returns every pass that left the stage live or with an operation (`carries_op`),
/// in order: for a stage that holds some passes longer than one cycle (the caller leaves the idle
/// cycles the hold needs).
macro_rules! drive_held {
    ($ty:ty, $uut:expr, $passes:expr, $tail:expr) => {
        common::drive_collect!(
            $ty,
            $uut,
            $passes,
            $tail,
            |_: usize, _: &[bool], out: &horus_pipeline::phv::Phv| common::carries_op(out)
        )
    };
}
#[allow(unused_imports)]
pub(crate) use drive_held;

/// What `drive!` and `drive_held!` share: feeds `passes` one per clock (each as `early`, then as
/// `pass_in` a cycle later), runs `extra` more idle cycles, and returns `pass_out` of every cycle
/// `i` for which `keep(i, fed, pass_out)` holds (`fed[j]`: a pass was fed in cycle `j`).
macro_rules! drive_collect {
    ($ty:ty, $uut:expr, $passes:expr, $extra:expr, $keep:expr) => {{
        use rust_hdl::prelude::*;
        use std::sync::{Arc, Mutex};
        let mut uut: $ty = $uut;
        let passes: Vec<Option<horus_pipeline::phv::Phv>> = $passes;
        uut.connect_all();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let n = passes.len();
        let extra: usize = $extra;
        let keep = $keep;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<$ty>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<$ty>| {
            let mut x = sim.init()?;
            wait_clock_true!(sim, clock, x);
            let mut fed: Vec<bool> = Vec::new();
            let mut prev = horus_pipeline::phv::Phv::default();
            for i in 0..n + extra {
                let p = passes.get(i).copied().flatten();
                x.early.next = p.unwrap_or_default();
                x.pass_in.next = prev;
                prev = p.unwrap_or_default();
                fed.push(p.is_some());
                wait_clock_cycle!(sim, clock, x);
                if keep(i, &fed, &x.pass_out.val()) {
                    sink.lock().unwrap().push(x.pass_out.val());
                }
            }
            sim.done(x)?;
            Ok(())
        });
        sim.run(Box::new(uut), 20 * (n as u64 + extra as u64 + 20))
            .unwrap();
        let out = seen.lock().unwrap().clone();
        out
    }};
}
#[allow(unused_imports)]
pub(crate) use drive_collect;

/// `probe!(Type, uut, inputs, set, read)`: runs a block whose outputs follow its inputs within a
/// clock (its `clock` input only paces rust-hdl's simulator): for each of `inputs` (a `Vec`),
/// `set(&mut block, &input)` drives it after a rising edge and `read(&block)` takes the outputs
/// half a clock later. Returns what `read` took, one per input, in order. (The caller has
/// `rust_hdl::prelude::*` in scope.)
macro_rules! probe {
    ($ty:ty, $uut:expr, $inputs:expr, $set:expr, $read:expr) => {{
        let inputs = $inputs;
        let n = inputs.len();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<$ty>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<$ty>| {
            let mut x = sim.init()?;
            wait_clock_true!(sim, clock, x);
            for input in &inputs {
                ($set)(&mut *x, input);
                wait_clock_false!(sim, clock, x);
                sink.lock().unwrap().push(($read)(&*x));
                wait_clock_true!(sim, clock, x);
            }
            sim.done(x)?;
            Ok(())
        });
        let mut uut = $uut;
        uut.connect_all();
        sim.run(Box::new(uut), 10 * (n as u64 + 10)).unwrap();
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(seen.len(), n, "the simulation ended early");
        seen
    }};
}
#[allow(unused_imports)]
pub(crate) use probe;

/// Whether a pass is live or names an operation: not a bubble.
pub fn carries_op(p: &horus_pipeline::phv::Phv) -> bool {
    p.live
        || p.is_task
        || p.is_random
        || p.is_cont
        || p.is_reply
        || p.is_reply_idle
        || p.is_load_update
        || p.is_idle_add
        || p.is_idle_remove
        || p.is_sched2
        || p.is_add_commit
        || p.is_remove_finish
        || p.is_pass_through
        || p.is_to_control
        || p.is_ctl_pool
        || p.is_ctl_params
        || p.is_ctl_add
        || p.is_ctl_remove
        || p.is_ctl_remove2
        || p.is_ctl_read
}

/// A 16-bit descriptor field.
pub fn b16(v: u64) -> rust_hdl::prelude::Bits<16> {
    v.into()
}

/// A 32-bit descriptor field.
pub fn b32(v: u64) -> rust_hdl::prelude::Bits<32> {
    v.into()
}

/// `tasks` as a 16.16 load.
pub fn load(tasks: u64) -> u64 {
    u64::from(horus_model::fixed::Load::from_tasks(tasks as u16).0)
}

/// Lint and synthesis of a block's Verilog; returns the synthesis report.
pub fn lint_and_synth<B: rust_hdl::prelude::Block>(
    name: &str,
    mut uut: B,
) -> horus_hdl_tools::check::SynthReport {
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint(name, &v).unwrap();
    horus_hdl_tools::check::yosys_synth(name, &v).unwrap()
}
