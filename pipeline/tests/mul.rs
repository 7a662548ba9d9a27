//! The rescale's primitives against `horus_model::fixed::RackAverage::rescale`: `KeptTasks` and the
//! pipelined `PipeMul` (the tasks kept, then `kept * unit` three clocks later), their Rust
//! `update`s in rust-hdl's simulator and their Verilog in Verilator, plus Verilator's lint and a
//! Yosys synthesis that maps the product to DSP slices with every pipeline register.

use horus_hdl_tools::verilog::emit;
use horus_model::fixed::RackAverage;
use horus_pipeline::mul::{KeptTasks, MUL_LATENCY, PipeMul};
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// (tasks, removed, unit): corners (0, 1, the largest count, one worker's unit 2^32, an empty
/// pool's 0, inexact units) and a pseudo-random spread, units up to 2^32.
fn cases() -> Vec<(u64, u64, u64)> {
    let tasks = [
        0,
        1,
        2,
        3,
        0xffff,
        0x1_0000,
        0x7fff_ffff,
        0xffff_fffe,
        0xffff_ffff,
    ];
    let removed = [0, 1, 3, 0xffff];
    let units = [0, 1, 0x4000_0000, 0x5555_5555, 0xffff_ffff, 1 << 32];
    let mut v = Vec::new();
    for &t in &tasks {
        for &r in &removed {
            for &u in &units {
                v.push((t, r, u));
            }
        }
    }
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..500 {
        let (t, r) = (next() >> 32, next() >> 48);
        let u = RackAverage::unit_for((next() % 4097) as u32);
        v.push((t, r % 4, u));
        v.push((t, r, u));
    }
    v
}

/// The model: (tasks, acc) after the rescale.
fn model(tasks: u64, removed: u64, unit: u64) -> (u64, u64) {
    let mut a = RackAverage {
        unit: 1,
        tasks: tasks as u32,
    };
    a.rescale(unit, removed as u32);
    (u64::from(a.tasks), a.acc())
}

/// The rescale as the stage does it: `KeptTasks`, then `PipeMul` on the tasks kept and the unit,
/// one case per clock; returns (kept, acc) per case.
#[derive(LogicBlock, Default)]
struct Rescale {
    clock: Signal<In, Clock>,
    tasks: Signal<In, Bits<32>>,
    removed: Signal<In, Bits<16>>,
    unit: Signal<In, Bits<33>>,
    kept: Signal<Out, Bits<32>>,
    acc: Signal<Out, Bits<64>>,
    k: KeptTasks,
    mul: PipeMul,
}

impl Logic for Rescale {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, mul);
        self.k.tasks.next = self.tasks.val();
        self.k.removed.next = self.removed.val();
        self.k.unit.next = self.unit.val();
        self.mul.a.next = self.k.kept.val();
        self.mul.b.next = self.unit.val();
        self.kept.next = self.k.kept.val();
        self.acc.next = self.mul.p.val();
    }
}

#[test]
fn rust_update_matches_the_model() {
    let cases = cases();
    let n = cases.len();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let inputs = cases.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Rescale>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Rescale>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut kept = Vec::new();
        for i in 0..n + MUL_LATENCY {
            let (t, r, u) = inputs.get(i).copied().unwrap_or_default();
            x.tasks.next = t.into();
            x.removed.next = r.into();
            x.unit.next = u.into();
            wait_clock_false!(sim, clock, x);
            kept.push(u64::from(x.kept.val()));
            if i >= MUL_LATENCY {
                let k = kept[i - MUL_LATENCY];
                sink.lock().unwrap().push((k, u64::from(x.acc.val())));
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)?;
        Ok(())
    });
    let mut uut = Rescale::default();
    uut.connect_all();
    sim.run(Box::new(uut), 10 * (n as u64 + 10)).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), n);
    for (&(t, r, u), &s) in cases.iter().zip(seen.iter()) {
        assert_eq!(s, model(t, r, u), "tasks {t:#x}, removed {r}, unit {u:#x}");
    }
}

#[test]
fn verilog_matches_the_model_in_verilator() {
    let cases = cases();
    let mut uut = Rescale::default();
    uut.connect_all();
    // One vector per case, 84 bits: tasks, removed, unit (33 bits, padded to 36). The product of
    // the case presented at clock j is printed at clock j + MUL_LATENCY.
    let vectors: Vec<String> = cases
        .iter()
        .map(|&(t, r, u)| format!("{:08x}{:04x}{:09x}", t, r, u))
        .collect();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg [83:0] vectors [0:{last}];
    reg clock;
    reg [31:0] tasks;
    reg [15:0] removed;
    reg [32:0] unit;
    wire [31:0] kept;
    wire [63:0] acc;
    integer j;
    top dut(.clock(clock), .tasks(tasks), .removed(removed), .unit(unit), .kept(kept), .acc(acc));
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        clock = 0;
        for (j = 0; j <= {last} + {lat}; j = j + 1) begin
            if (j <= {last}) begin
                tasks = vectors[j][83:52];
                removed = vectors[j][51:36];
                unit = vectors[j][32:0];
            end
            #1 $display(\"k %h\", kept);
            if (j >= {lat}) $display(\"a %h\", acc);
            clock = 1;
            #1 clock = 0;
        end
        $finish;
    end
endmodule
",
        last = cases.len() - 1,
        lat = MUL_LATENCY,
    );
    let printed =
        horus_hdl_tools::check::verilator_vectors("rescale_mul_sim", &vectors, &tb, &emit(&uut))
            .unwrap();
    let field = |tag: &str| -> Vec<u64> {
        printed
            .lines()
            .filter_map(|l| l.trim().strip_prefix(tag))
            .map(|v| u64::from_str_radix(v, 16).unwrap())
            .collect()
    };
    let (kept, acc) = (field("k "), field("a "));
    assert_eq!(acc.len(), cases.len());
    for (i, &(t, r, u)) in cases.iter().enumerate() {
        assert_eq!(
            (kept[i], acc[i]),
            model(t, r, u),
            "tasks {t:#x}, removed {r}, unit {u:#x}"
        );
    }
}

#[test]
fn verilog_is_lint_clean_and_synthesizes_into_pipelined_dsps() {
    let mut uut = Rescale::default();
    uut.connect_all();
    let v = emit(&uut);
    horus_hdl_tools::check::verilator_lint("rescale_mul", &v).unwrap();
    let r = horus_hdl_tools::check::yosys_synth("rescale_mul", &v).unwrap();
    println!("rescale_mul: {r}");
    assert!(r.dsps > 0, "the product maps to DSP slices");
    // The tasks kept (a subtract and its saturation) from the ports into the operand register,
    // then register to register: the multiply adds no LUT level of its own.
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}"
    );
}
