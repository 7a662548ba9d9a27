//! Drives a JBSQ stage or chain of stages ([`JbsqPipelineStage`]) one pass per clock in
//! rust-hdl's simulator, as `common` does the paper leaf's: a pass is presented as `early` one
//! cycle before it is `pass`, as the previous stage does.

use horus_pipeline::jbsq::JbsqPipelineStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// Feeds `passes` one per clock to a block whose passes leave `latency` cycles after they are
/// presented (one stage: 2; `k` stages: `k + 1`) and returns the pass that left for each.
pub fn run<S: JbsqPipelineStage + Send + 'static>(
    mut uut: S,
    passes: Vec<JbsqPhv>,
    latency: usize,
) -> Vec<JbsqPhv> {
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
        let mut prev = JbsqPhv::default();
        for i in 0..n + latency {
            let p = passes.get(i).copied().unwrap_or_default();
            x.port_mut().up.early.next = p;
            x.port_mut().up.pass.next = prev;
            prev = p;
            x = sim.watch(|x| !x.clock().val().clk, x)?;
            x = sim.watch(|x| x.clock().val().clk, x)?;
            if i + 1 >= latency && i + 1 - latency < n {
                sink.lock().unwrap().push(x.port().down.pass.val());
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 20 * (n as u64 + 40)).unwrap();
    let out = seen.lock().unwrap().clone();
    assert_eq!(out.len(), n, "the simulation ended early");
    out
}

/// Lint, synthesis for UltraScale+ and the logic depth of a block's Verilog.
pub fn lint_and_synth<T: Block>(name: &str, mut uut: T) -> horus_hdl_tools::check::SynthReport {
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint(name, &v).unwrap();
    horus_hdl_tools::check::yosys_synth(name, &v).unwrap()
}

/// A 16-bit descriptor field.
pub fn b16(v: impl Into<u64>) -> Bits<16> {
    v.into().into()
}
