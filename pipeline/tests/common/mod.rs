//! Drives any stage or chain of stages ([`PipelineStage`]) one pass per clock in rust-hdl's
//! simulator and collects what leaves it. A pass is presented as `early` (its index reaches the
//! first table) one cycle before it is `pass`, as the previous stage does. Also runs a
//! combinational probe (a primitive behind a clock) input by input (`probe!`).
#![allow(dead_code, unused_macros)]

use horus_pipeline::phv::Phv;
use horus_pipeline::stages::{PipelineStage, STAGE_CYCLES};
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// Cycles from a pass presented as `early` to its leaving a chain of one stage (`k` stages:
/// `k + 1`).
pub const STAGE_LATENCY: usize = 1 + STAGE_CYCLES;

/// `drive!(Type, uut, passes[, latency])`: [`run_stage`], which feeds `passes: Vec<Option<Phv>>` one per clock (`None`:
/// an idle cycle) and returns, in order, the pass that left the stage for each input pass.
macro_rules! drive {
    ($ty:ty, $uut:expr, $passes:expr) => {
        common::run_stage::<$ty>($uut, $passes, common::STAGE_LATENCY)
    };
    ($ty:ty, $uut:expr, $passes:expr, $latency:expr) => {
        common::run_stage::<$ty>($uut, $passes, $latency)
    };
}
#[allow(unused_imports)]
pub(crate) use drive;

/// `drive_held!(Type, uut, passes, tail)`: [`run_stage_held`].
macro_rules! drive_held {
    ($ty:ty, $uut:expr, $passes:expr, $tail:expr) => {
        common::run_stage_held::<$ty>($uut, $passes, $tail)
    };
}
#[allow(unused_imports)]
pub(crate) use drive_held;

/// Feeds `passes` one per clock (`None`: an idle cycle) to a stage whose passes leave `latency`
/// cycles after they are presented, and returns, in order, the pass that left for each input
/// pass.
pub fn run_stage<S: PipelineStage + Send + 'static>(
    uut: S,
    passes: Vec<Option<Phv>>,
    latency: usize,
) -> Vec<Phv> {
    drive_collect(uut, passes, latency, move |i, fed, _| {
        i + 1 >= latency && fed[i + 1 - latency]
    })
}

/// Feeds `passes` as [`run_stage`] does, runs `tail` more idle cycles, and returns every pass that
/// left the stage live or with an operation (`carries_op`), in order: for a stage that holds some
/// passes longer than one cycle (the caller leaves the idle cycles the hold needs).
pub fn run_stage_held<S: PipelineStage + Send + 'static>(
    uut: S,
    passes: Vec<Option<Phv>>,
    tail: usize,
) -> Vec<Phv> {
    drive_collect(uut, passes, tail, |_, _, out| carries_op(out))
}

/// What [`run_stage`] and [`run_stage_held`] share: feeds `passes` one per clock (each as `early`, then
/// as `pass` a cycle later), runs `extra` more idle cycles, and returns the leaving pass of every
/// cycle `i` for which `keep(i, fed, pass)` holds (`fed[j]`: a pass was fed in cycle `j`).
fn drive_collect<S: PipelineStage + Send + 'static>(
    mut uut: S,
    passes: Vec<Option<Phv>>,
    extra: usize,
    keep: impl Fn(usize, &[bool], &Phv) -> bool + Send + std::panic::RefUnwindSafe + 'static,
) -> Vec<Phv> {
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let n = passes.len();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<S>| {
        let c = x.clock_mut();
        c.next = !c.val();
    });
    sim.add_testbench(move |mut sim: Sim<S>| {
        let mut x = sim.init()?;
        x = sim.watch(|x| x.clock().val().clk, x)?;
        let mut fed: Vec<bool> = Vec::new();
        let mut prev = Phv::default();
        for i in 0..n + extra {
            let p = passes.get(i).copied().flatten();
            x.port_mut().up.early.next = p.unwrap_or_default();
            x.port_mut().up.pass.next = prev;
            prev = p.unwrap_or_default();
            fed.push(p.is_some());
            x = sim.watch(|x| !x.clock().val().clk, x)?;
            x = sim.watch(|x| x.clock().val().clk, x)?;
            let out = x.port().down.pass.val();
            if keep(i, &fed, &out) {
                sink.lock().unwrap().push(out);
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 20 * (n as u64 + extra as u64 + 20))
        .unwrap();
    seen.lock().unwrap().clone()
}

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
pub fn carries_op(p: &Phv) -> bool {
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

/// The bit offset of the field `set` sets in the pass descriptor's bits (for formal harnesses,
/// which read the descriptor as a bit vector).
pub fn phv_offset(set: impl Fn(&mut Phv)) -> usize {
    let mut p = Phv::default();
    set(&mut p);
    let bits: Bits<{ Phv::BITS }> = p.into();
    (0..Phv::BITS)
        .find(|&i| bits.get_bit(i))
        .expect("a bit set")
}

/// The bits of `signal` (a pass descriptor) that the fields `flags` set, ORed, in parentheses:
/// `(pass[3] | pass[9])`.
pub fn phv_any(signal: &str, flags: &[fn(&mut Phv)]) -> String {
    let bits: Vec<String> = flags
        .iter()
        .map(|f| format!("{signal}[{}]", phv_offset(f)))
        .collect();
    format!("({})", bits.join(" | "))
}

/// How many of the fields `flags` set are set in `signal`, as a 4-bit sum.
pub fn phv_count(signal: &str, flags: &[fn(&mut Phv)]) -> String {
    let bits: Vec<String> = flags
        .iter()
        .map(|f| format!("{{3'd0, {signal}[{}]}}", phv_offset(f)))
        .collect();
    format!("({})", bits.join(" + "))
}

/// A second pass's flags (the pass mux sets one, from the first pass's kind).
pub const SECOND: [fn(&mut Phv); 4] = [
    |p| p.is_sched2 = true,
    |p| p.is_add_commit = true,
    |p| p.is_remove_finish = true,
    |p| p.is_ctl_remove2 = true,
];
/// A packet's kinds that may ask for a second pass.
pub const PACKET: [fn(&mut Phv); 4] = [
    |p| p.is_task = true,
    |p| p.is_reply_idle = true,
    |p| p.is_idle_add = true,
    |p| p.is_idle_remove = true,
];

/// A control pass's operation flags (the AXI4-Lite port stages exactly one).
pub const CONTROL_OPS: [fn(&mut Phv); 5] = [
    |p| p.is_ctl_pool = true,
    |p| p.is_ctl_params = true,
    |p| p.is_ctl_add = true,
    |p| p.is_ctl_remove = true,
    |p| p.is_ctl_read = true,
];

/// `harness` with the egress harnesses' shared view of `m_axis` (`formal/axis_out.sv`) in
/// place: its declarations at `@AXIS_OUT@`, its framing claims at `@AXIS_FRAMING@` (a part the
/// test left out has no mark left to fill).
pub fn with_axis_out(harness: &str) -> String {
    let fragment = include_str!("../formal/axis_out.sv");
    let (_, rest) = fragment
        .split_once("// @DECLARATIONS\n")
        .expect("the declarations");
    let (declarations, claims) = rest.split_once("// @CLAIMS\n").expect("the claims");
    harness
        .replace("    @AXIS_OUT@\n", declarations)
        .replace("        @AXIS_FRAMING@\n", claims)
}
