//! `RescaleMul` against `horus_model::fixed::RackAverage::rescale`: its Rust `update` in rust-hdl's
//! simulator, its Verilog in Verilator, plus Verilator's lint and a Yosys synthesis.

use horus_model::fixed::RackAverage;
use horus_pipeline::mul::RescaleMul;
use horus_pipeline::verilog::emit;
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
        acc: 0,
        unit: 1,
        tasks: tasks as u32,
    };
    a.rescale(unit, removed as u32);
    (u64::from(a.tasks), a.acc)
}

#[test]
fn rust_update_matches_the_model() {
    let cases = cases();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let inputs = cases.clone();
    let mut sim = Simulation::new();
    sim.add_testbench(move |mut sim: Sim<RescaleMul>| {
        let mut x = sim.init()?;
        for &(t, r, u) in &inputs {
            x.tasks.next = t.into();
            x.removed.next = r.into();
            x.unit.next = u.into();
            x = sim.wait(1, x)?;
            let kept: u64 = x.kept.val().into();
            let acc: u64 = x.acc.val().into();
            sink.lock().unwrap().push((kept, acc));
        }
        sim.done(x)?;
        Ok(())
    });
    let mut uut = RescaleMul::default();
    uut.connect_all();
    sim.run(Box::new(uut), 10 * cases.len() as u64 + 10)
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), cases.len());
    for (&(t, r, u), &s) in cases.iter().zip(seen.iter()) {
        assert_eq!(s, model(t, r, u), "tasks {t:#x}, removed {r}, unit {u:#x}");
    }
}

#[test]
fn verilog_matches_the_model_in_verilator() {
    let cases = cases();
    let mut uut = RescaleMul::default();
    uut.connect_all();
    // One vector per case, 84 bits: tasks, removed, unit (33 bits, padded to 36).
    let vectors: Vec<String> = cases
        .iter()
        .map(|&(t, r, u)| format!("{:08x}{:04x}{:09x}", t, r, u))
        .collect();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg [83:0] vectors [0:{last}];
    reg [31:0] tasks;
    reg [15:0] removed;
    reg [32:0] unit;
    wire [31:0] kept;
    wire [63:0] acc;
    integer j;
    top dut(.tasks(tasks), .removed(removed), .unit(unit), .kept(kept), .acc(acc));
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        for (j = 0; j <= {last}; j = j + 1) begin
            tasks = vectors[j][83:52];
            removed = vectors[j][51:36];
            unit = vectors[j][32:0];
            #1 $display(\"%h %h\", kept, acc);
        end
        $finish;
    end
endmodule
",
        last = cases.len() - 1
    );
    let printed = horus_pipeline::check::verilator_run(
        "rescale_mul_sim",
        &[
            ("vectors.hex", &(vectors.join("\n") + "\n")),
            ("tb.v", &tb),
            ("top.v", &emit(&uut)),
        ],
    )
    .unwrap();
    let seen: Vec<(u64, u64)> = printed
        .lines()
        .filter_map(|l| {
            let (k, a) = l.trim().split_once(' ')?;
            Some((
                u64::from_str_radix(k, 16).ok()?,
                u64::from_str_radix(a, 16).ok()?,
            ))
        })
        .collect();
    assert_eq!(seen.len(), cases.len());
    for (&(t, r, u), &s) in cases.iter().zip(seen.iter()) {
        assert_eq!(s, model(t, r, u), "tasks {t:#x}, removed {r}, unit {u:#x}");
    }
}

#[test]
fn verilog_is_lint_clean_and_synthesizes() {
    let mut uut = RescaleMul::default();
    uut.connect_all();
    let v = emit(&uut);
    horus_pipeline::check::verilator_lint("rescale_mul", &v).unwrap();
    let r = horus_pipeline::check::yosys_synth("rescale_mul", &v).unwrap();
    println!("rescale_mul: {r}");
    assert!(r.dsps > 0, "the product maps to DSP slices");
}
