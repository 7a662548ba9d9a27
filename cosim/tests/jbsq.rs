//! The leaf that holds tasks against the model's frame switch, frame for frame, set up and read
//! through its registers as a host does (`horus_cosim::jbsq`): the Verilog `rtl-gen` emits, in
//! Verilator, and the circuit itself, in rust-hdl's simulator, each on the same scenario; and the
//! leaf inside each shell's board plug-in (`rtl-gen --board B --leaf jbsq`), in Verilator.

use std::sync::{Arc, Mutex};

use horus_cosim::jbsq::{
    BOX_TOP, Knobs, PinsOut, Report, Scenario, TracePass, box_verilog, run_verilated,
};
use horus_cosim::verilated::Model;
use horus_model::config::Config;
use horus_pipeline::board::boards;
use horus_pipeline::jbsq::top::JbsqTop;
use horus_pipeline::presets::{JbsqPreset, jbsq_preset};
use rtl_gen::boards::BoardParams;
use rust_hdl::prelude::*;

const CONFIG: &str = include_str!("../../configs/example-leaf-jbsq.toml");
const LEAF_SEED: u64 = 7;

/// The default preset's leaf (the example configuration's sizes).
type Top = JbsqTop<6, 12, 16, 12, 10, 14>;

fn preset() -> JbsqPreset {
    jbsq_preset("default").unwrap()
}

fn knobs(seed: u64, frames: usize, ready_pct: u64, churn: usize) -> Knobs {
    Knobs {
        seed,
        frames,
        ready_pct,
        churn,
        bounds: false,
        max_cycles: 400_000,
        build_hash: horus_regs::regmap::BUILD_HASH_PLACEHOLDER,
    }
}

fn scenario(k: Knobs) -> Scenario {
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    Scenario::new(&cfg, &preset(), LEAF_SEED, k).unwrap()
}

/// Runs the scenario on the circuit in rust-hdl's simulator.
fn run_rust_hdl(k: Knobs) -> Result<Report, String> {
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    let sc = Mutex::new(Some(scenario(k)));
    let mut uut = Top::new(preset().sizes(), LEAF_SEED, cfg.switch.conn_timeout_us);
    uut.connect_all();
    let result: Arc<Mutex<Option<Result<Report, String>>>> = Arc::new(Mutex::new(None));
    let sink = result.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Top>| x.clk.next = !x.clk.val());
    sim.add_testbench(move |mut sim: Sim<Top>| {
        let mut x = sim.init()?;
        let mut sc = sc.lock().unwrap().take().unwrap();
        x.s_axil_wstrb.next = 0xf.into();
        x.s_axil_bready.next = true;
        x.s_axil_rready.next = true;
        wait_clock_true!(sim, clk, x);
        let end = loop {
            let i = match sc.inputs() {
                Ok(i) => i,
                Err(e) => break Err(format!("{e:#}")),
            };
            let mut beat = Bits::<512>::default();
            for (k, &b) in i.s_tdata.iter().enumerate() {
                beat.set_bits::<8>(8 * k, u64::from(b).into());
            }
            x.s_axis_tdata.next = beat;
            x.s_axis_tkeep.next = i.s_tkeep.into();
            x.s_axis_tvalid.next = i.s_tvalid;
            x.s_axis_tlast.next = i.s_tlast;
            x.m_axis_tready.next = i.m_tready;
            x.now_us.next = u64::from(i.now_us).into();
            x.s_axil_awaddr.next = u64::from(i.awaddr).into();
            x.s_axil_awvalid.next = i.awvalid;
            x.s_axil_wdata.next = u64::from(i.wdata).into();
            x.s_axil_wvalid.next = i.wvalid;
            x.s_axil_araddr.next = u64::from(i.araddr).into();
            x.s_axil_arvalid.next = i.arvalid;
            wait_clock_false!(sim, clk, x);
            let d = x.m_axis_tdata.val();
            let o = PinsOut {
                s_tready: x.s_axis_tready.val(),
                m_tdata: (0..64)
                    .map(|k| d.get_bits::<8>(8 * k).index() as u8)
                    .collect(),
                m_tkeep: x.m_axis_tkeep.val().into(),
                m_tvalid: x.m_axis_tvalid.val(),
                m_tlast: x.m_axis_tlast.val(),
                m_tuser: x.m_axis_tuser.val().index() as u32,
                awready: x.s_axil_awready.val(),
                bvalid: x.s_axil_bvalid.val(),
                bresp: x.s_axil_bresp.val().index() as u32,
                arready: x.s_axil_arready.val(),
                rvalid: x.s_axil_rvalid.val(),
                rdata: x.s_axil_rdata.val().index() as u32,
                rresp: x.s_axil_rresp.val().index() as u32,
                trace: x
                    .trace_valid
                    .val()
                    .then(|| TracePass::of(&x.trace_pass.val())),
                in_flight: x.in_flight.val().index() as u32,
                overflow: x.overflow.val(),
                rng_state: x.rng_state.val().into(),
            };
            match sc.outputs(&i, &o) {
                Ok(true) => break Ok(sc.report().clone()),
                Ok(false) => {}
                Err(e) => break Err(format!("{e:#}")),
            }
            wait_clock_true!(sim, clk, x);
        };
        *sink.lock().unwrap() = Some(end);
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 500_000).unwrap();
    let r = result.lock().unwrap().take();
    r.expect("the bench ended")
}

fn print(what: &str, k: &Knobs, r: &Report) {
    let c = &r.counters;
    println!(
        "{what}, seed {}{}: {} frames in, {} passes ({} second, {} control), {} frames out, {} \
         clocks, {} workers removed and added again{}; {} tasks, {} placed, {} held, {} released, \
         {} over a bound, {} continuations, {} to control, {} load reports, {} idle messages",
        k.seed,
        if k.bounds {
            " (bounds changed live)"
        } else {
            ""
        },
        k.frames,
        r.passes,
        r.seconds,
        r.control,
        r.frames_out,
        r.cycles,
        r.churns,
        if k.bounds {
            " or given a new bound"
        } else {
            ""
        },
        c.tasks,
        c.placed,
        c.held,
        c.released,
        c.fallback,
        c.continuations,
        c.to_control,
        c.sent_load_update,
        c.sent_idle_add + c.sent_idle_remove
    );
}

/// The run did what it is for: tasks held and released, continuations, control frames, workers
/// removed and added again.
fn exercised(k: &Knobs, r: &Report) {
    let c = &r.counters;
    assert!(
        c.held > 20 && c.released > 20 && c.continuations > 0 && c.to_control > 0,
        "{c:?}"
    );
    assert!(
        k.churn == 0 || r.churns + 1 >= k.frames / k.churn,
        "{} churns",
        r.churns
    );
}

#[test]
fn the_circuit_set_up_through_its_registers_sends_the_models_frames_and_counts() {
    for k in [
        knobs(31, 600, 70, 150),
        knobs(32, 250, 15, 0),
        Knobs {
            bounds: true,
            ..knobs(36, 400, 60, 60)
        },
    ] {
        let r = run_rust_hdl(k.clone()).unwrap_or_else(|e| panic!("{e}"));
        print("rust-hdl", &k, &r);
        exercised(&k, &r);
    }
}

#[test]
fn the_verilog_set_up_through_its_registers_sends_the_models_frames_and_counts() {
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    let v = horus_cosim::jbsq::verilog(&preset(), &cfg, LEAF_SEED);
    let t = std::time::Instant::now();
    let model = Model::build(&v, &preset().module_name()).unwrap();
    println!(
        "Verilated model ready in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let build_hash = horus_regs::identity::build_hash(&v).unwrap();
    for k in [
        knobs(31, 600, 70, 150),
        knobs(32, 250, 15, 0),
        knobs(33, 3_000, 50, 250),
        Knobs {
            max_cycles: 2_000_000,
            ..knobs(34, 20_000, 30, 500)
        },
        // Workers' and pools' bounds changed live among the removals (decision 36).
        Knobs {
            bounds: true,
            ..knobs(35, 3_000, 40, 100)
        },
    ] {
        let k = Knobs { build_hash, ..k };
        let r = run_verilated(&model, scenario(k.clone())).unwrap_or_else(|e| panic!("{e:#}"));
        print("Verilator", &k, &r);
        exercised(&k, &r);
    }
}

/// A mutant the scoreboard exists for: the leaf's generator seeded otherwise than the model's
/// draws other samples, and some frame, or a counter, then differs.
#[test]
fn a_leaf_whose_generator_differs_from_the_models_is_caught() {
    let k = knobs(31, 600, 70, 150);
    let cfg = Config::from_toml_str(CONFIG).unwrap();
    let v = horus_cosim::jbsq::verilog(&preset(), &cfg, LEAF_SEED + 1);
    let model = Model::build(&v, &preset().module_name()).unwrap();
    let e = run_verilated(&model, scenario(k)).unwrap_err();
    println!("caught: {e:#}");
}

/// The leaf in the OpenNIC box and as the NetFPGA-PLUS datapath, configured for the card
/// (`configs/au250-leaf-jbsq.toml`: workers behind cmac0, spines behind cmac1, the controller
/// behind host0, so every output stream carries frames): every frame out of the stream of its
/// port with the shell's length and destination fields, the counters and `BOARD_DROPS` read
/// through the shell's register window.
#[test]
fn the_leaf_in_each_shells_plugin_sends_the_models_frames_on_their_streams() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/au250-leaf-jbsq.toml"
    );
    for board in ["au250", "netfpga-plus"] {
        let b = boards::board(board).unwrap();
        let cfg = Config::from_file_for(std::path::Path::new(path), &b.port_names()).unwrap();
        let p = BoardParams::jbsq(b, "default", LEAF_SEED, cfg.switch.conn_timeout_us).unwrap();
        let (v, build_hash) = box_verilog(&p).unwrap();
        let t = std::time::Instant::now();
        let model = Model::build(&v, BOX_TOP).unwrap();
        println!(
            "{board}: Verilated plug-in ready in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        // The card's pools have more places than the example's: more frames to hold as many.
        for k in [knobs(41, 2_000, 70, 300), knobs(42, 1_000, 15, 0)] {
            let k = Knobs { build_hash, ..k };
            let sc = Scenario::new(&cfg, &preset(), LEAF_SEED, k.clone()).unwrap();
            let r = run_verilated(&model, sc).unwrap_or_else(|e| panic!("{board}: {e:#}"));
            print(board, &k, &r);
            println!("{board}: frames out by stream: {:?}", r.by_port);
            exercised(&k, &r);
            assert_eq!(r.by_port.keys().copied().collect::<Vec<u8>>(), [0, 1, 2]);
        }
    }
}

/// The bench's reading of the shell's fields can fail: a plug-in that marks CMAC 1's frames for
/// CMAC 0 (its `tuser_dst`) is caught on the first frame out of that stream.
#[test]
fn a_plugin_whose_shell_destination_is_wrong_is_caught() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/au250-leaf-jbsq.toml"
    );
    let b = boards::board("au250").unwrap();
    let cfg = Config::from_file_for(std::path::Path::new(path), &b.port_names()).unwrap();
    let p = BoardParams::jbsq(b, "default", LEAF_SEED, cfg.switch.conn_timeout_us).unwrap();
    let (v, build_hash) = box_verilog(&p).unwrap();
    let (from, to) = ("localparam  dst1 = 16'h80;", "localparam  dst1 = 16'h40;");
    assert_eq!(v.matches(from).count(), 1, "{from}");
    let model = Model::build(&v.replacen(from, to, 1), BOX_TOP).unwrap();
    let k = Knobs {
        build_hash,
        ..knobs(41, 600, 70, 0)
    };
    let sc = Scenario::new(&cfg, &preset(), LEAF_SEED, k).unwrap();
    let e = format!("{:#}", run_verilated(&model, sc).unwrap_err());
    assert!(e.contains("port 129 vs 1 (model)"), "{e}");
}
