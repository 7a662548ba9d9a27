//! The scoreboard for a board's plug-in: the switch inside the OpenNIC box adapter
//! (`board::opennic::OpenNicBox`) or as the NetFPGA-PLUS datapath
//! (`board::netfpga::NetFpgaDatapath`), against the model, in Verilator.
//!
//! The plug-in runs as its shell runs it: OpenNIC's register window at half the core clock
//! (`axil_aclk`, made here from `axis_aclk` by a test-bench flip-flop, phase-aligned as the
//! shell's clock wizard makes them), NetFPGA-PLUS's on the datapath clock with byte strobes;
//! frames arriving on both CMAC streams and the host stream at once, each output stream ready at
//! random. The bench programs the switch through the window as
//! `horusctl writes` says (the switch's registers, then each control pass staged, started and
//! waited for by polling `CTL_BUSY`), then sends the traffic. The model is run in the order the
//! switch's passes enter its stages, which a test-bench wrapper reads from inside the plug-in
//! (the plug-in itself has no trace port); the frames are matched to the switch's buffer slots
//! in the order the arbiter took their first beats. Every output frame must come out on the
//! stream its port names, byte for byte the model's, with its length and the shell's destination
//! bit for that stream in its `tuser`. A frame the model sends to a port the board lacks is
//! dropped by the plug-in. At the end the generator's state, every counter and `BOARD_DROPS`
//! (the frames so dropped), read through the window, are the model's.

use std::collections::VecDeque;

use anyhow::{Result, bail};
use horus_model::config::Config;
use horus_model::sched::frame::{FramePass, FrameResubmit, FrameSwitch, InFrame, OutFrame};
use horus_model::sched::{ControlOp, DropReason, config_ops};
use horus_pipeline::board::boards::{Board, Shell};
use horus_pipeline::board::{netfpga, opennic};
use horus_pipeline::regmap::{self, RegFile};
use rtl_gen::boards::BoardParams;

use crate::bench::{Beat, TraceFields, beats, describe_difference, field, hex};
use crate::traffic::{Input, Mix, Rng, Traffic};
use crate::verilated::{Dut, Model, Port, module_ports};

/// The wrapper's module name.
pub const TOP: &str = "horus_box_tb";

/// What the bench knows of a shell's plug-in: its port names and conventions.
struct Profile {
    /// The register window's port prefix, and whether it has byte strobes.
    window: &'static str,
    wstrb: bool,
    /// The input streams (port prefixes) and the output streams, by switch port.
    inputs: [&'static str; 3],
    outputs: [&'static str; 3],
    /// Each output stream's destination in its `tuser`.
    tuser_dst: [u64; 3],
}

fn profile(shell: Shell) -> Profile {
    match shell {
        Shell::OpenNic => Profile {
            window: "s_axil",
            wstrb: false,
            inputs: ["s_rx0", "s_rx1", "s_h2c"],
            outputs: ["m_tx0", "m_tx1", "m_c2h"],
            tuser_dst: opennic::TUSER_DST,
        },
        Shell::NetFpgaPlus => Profile {
            window: "s0_axi",
            wstrb: true,
            inputs: ["s_axis_0", "s_axis_1", "s_axis_2"],
            outputs: ["m_axis_0", "m_axis_1", "m_axis_2"],
            tuser_dst: netfpga::TUSER_DST,
        },
    }
}

/// The plug-in's Verilog and a test-bench wrapper around it (module [`TOP`]): one clock `clk`
/// (`axis_aclk`), the register window's clock (OpenNIC: `axil_aclk` toggling on `clk`, shown on
/// `axil_phase`; NetFPGA-PLUS: `clk` itself, `axil_phase` 0), and the switch's pass trace,
/// generator state, passes in flight and overflow read from inside the plug-in.
pub fn verilog(p: &BoardParams) -> Result<String> {
    let plugin = rtl_gen::boards::verilog(p);
    let module = p.module_name();
    let (box_ports, _) = module_ports(&plugin, &module)?;
    let mut names = vec!["clk".to_string()];
    let mut decls = vec!["    input wire  clk;".to_string()];
    // OpenNIC's window runs at half the core clock; NetFPGA's `top.v` gives the datapath's two
    // clock inputs the same clock.
    let (mut conns, phase) = match p.board.shell {
        Shell::OpenNic => (
            vec![
                "        .axil_aclk(axil_aclk)".to_string(),
                "        .axis_aclk(clk)".to_string(),
            ],
            "axil_aclk",
        ),
        Shell::NetFpgaPlus => (
            vec![
                "        .axi_aclk(clk)".to_string(),
                "        .axis_aclk(clk)".to_string(),
            ],
            "1'b0",
        ),
    };
    for q in box_ports.iter().filter(|q| !q.name.ends_with("_aclk")) {
        let dir = if q.input { "input" } else { "output" };
        let width = if q.width > 1 {
            format!("[{}:0] ", q.width - 1)
        } else {
            String::new()
        };
        names.push(q.name.clone());
        decls.push(format!("    {dir} wire  {width}{};", q.name));
        conns.push(format!("        .{0}({0})", q.name));
    }
    let trace_bits = <horus_pipeline::phv::Phv as rust_hdl::prelude::Synth>::BITS;
    for (name, decl) in [
        ("axil_phase", "output wire  axil_phase;".to_string()),
        ("trace_valid", "output wire  trace_valid;".to_string()),
        (
            "trace_pass",
            format!("output wire  [{}:0] trace_pass;", trace_bits - 1),
        ),
        ("rng_state", "output wire  [63:0] rng_state;".to_string()),
        ("in_flight", "output wire  [7:0] in_flight;".to_string()),
        ("overflow", "output wire  overflow;".to_string()),
    ] {
        names.push(name.to_string());
        decls.push(format!("    {decl}"));
    }
    Ok(format!(
        "{plugin}\n\
module {TOP}({names});\n\
{decls}\n\
    reg axil_aclk = 1'b0;\n\
    always @(posedge clk) axil_aclk <= ~axil_aclk;\n\
    assign axil_phase = {phase};\n\
    {module} dut(\n{conns}\n    );\n\
    assign trace_valid = dut.core.trace_valid_unused;\n\
    assign trace_pass = dut.core.trace_unused;\n\
    assign rng_state = dut.core.rng_unused;\n\
    assign in_flight = dut.core.switch$in_flight;\n\
    assign overflow = dut.core.switch$overflow;\n\
endmodule\n",
        names = names.join(","),
        decls = decls.join("\n"),
        conns = conns.join(",\n"),
    ))
}

/// Knobs of a run.
#[derive(Clone, Debug)]
pub struct BoxRunOptions {
    pub frames: usize,
    pub seed: u64,
    /// Percent chance a cycle that an input stream with a beat to send starts offering it (it
    /// then holds it until taken).
    pub input_busy: u64,
    /// Percent of cycles each output stream is ready.
    pub output_ready: u64,
    pub mix: Mix,
    /// The input streams that carry traffic (rx0, rx1, h2c).
    pub inputs: [bool; 3],
    /// Every frame the 60-byte minimum (one beat).
    pub min_frames: bool,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct BoxRunReport {
    pub cycles: u64,
    /// Frames in per input stream, frames out per output stream.
    pub frames_in: [u64; 3],
    pub frames_out: [u64; 3],
    pub passes: u64,
    pub resubmitted: u64,
    pub controls: u64,
    /// Register accesses through the window.
    pub axil_writes: u64,
    pub axil_reads: u64,
    /// The cycle traffic started, and the cycle its last frame went in.
    pub traffic_from: u64,
    pub traffic_until: u64,
    /// Cycles from a frame's last beat in at the box to the first beat out of each frame its
    /// first pass sent.
    pub latency: Vec<u64>,
    /// Frames the model sent to a port the board lacks: the adapter dropped them, and
    /// `BOARD_DROPS` (read through the window at the end) counted each.
    pub board_drops: u64,
}

/// The configuration `cfg` with its ports on the board's streams (nodes spread over ports 0, 1
/// and 2 by ID; spines and pass-through on 1, control on 2).
pub fn on_board(mut cfg: Config, board: &Board) -> Result<Config> {
    cfg.switch.pass_through_port = 1;
    cfg.switch.control_port = 2;
    for s in &mut cfg.spines {
        s.port = 1;
    }
    for pool in &mut cfg.pools {
        for n in &mut pool.nodes {
            n.port = (n.id % 3) as u8;
        }
    }
    // The board must have the ports: the same check a user's configuration gets.
    let text = cfg.to_toml_string();
    Ok(Config::from_toml_str_for(&text, &board.port_names())?)
}

struct Ports {
    phase: Port,
    trace_valid: Port,
    trace: Port,
    rng: Port,
    in_flight: Port,
    overflow: Port,
    reset: Reset,
    /// The window's byte strobes (NetFPGA-PLUS).
    wstrb: Option<Port>,
    awaddr: Port,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wvalid: Port,
    wready: Port,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    araddr: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rresp: Port,
    rvalid: Port,
    rready: Port,
    /// Per input stream: tdata, tkeep, tvalid, tready, tlast.
    ins: Vec<[Port; 5]>,
    /// Per output stream: tdata, tkeep, tvalid, tready, tlast.
    outs: Vec<[Port; 5]>,
    /// Per output stream, its `tuser`.
    users: Vec<User>,
}

/// A plug-in's reset.
enum Reset {
    /// OpenNIC: the module reset `mod_rstn` (a low pulse), answered on `mod_rst_done`.
    Module { rstn: Port, done: Port },
    /// NetFPGA-PLUS: the datapath's `axis_resetn` and the windows' `axi_resetn`, held low.
    Lines { axis: Port, axi: Port },
}

/// An output stream's `tuser`.
enum User {
    /// OpenNIC: `tuser_size`, `tuser_src`, `tuser_dst`.
    Fields([Port; 3]),
    /// NetFPGA-PLUS: one 128-bit word, the length in `[15:0]`, the sources in `[23:16]`, the
    /// destination in `[31:24]`.
    Word(Port),
}

impl Ports {
    fn of(m: &Model, shell: Shell) -> Ports {
        let p = |n: &str| m.port(n).clone();
        let pr = profile(shell);
        let w = |f: &str| p(&format!("{}_{f}", pr.window));
        Ports {
            phase: p("axil_phase"),
            trace_valid: p("trace_valid"),
            trace: p("trace_pass"),
            rng: p("rng_state"),
            in_flight: p("in_flight"),
            overflow: p("overflow"),
            reset: match shell {
                Shell::OpenNic => Reset::Module {
                    rstn: p("mod_rstn"),
                    done: p("mod_rst_done"),
                },
                Shell::NetFpgaPlus => Reset::Lines {
                    axis: p("axis_resetn"),
                    axi: p("axi_resetn"),
                },
            },
            wstrb: pr.wstrb.then(|| w("wstrb")),
            awaddr: w("awaddr"),
            awvalid: w("awvalid"),
            awready: w("awready"),
            wdata: w("wdata"),
            wvalid: w("wvalid"),
            wready: w("wready"),
            bresp: w("bresp"),
            bvalid: w("bvalid"),
            bready: w("bready"),
            araddr: w("araddr"),
            arvalid: w("arvalid"),
            arready: w("arready"),
            rdata: w("rdata"),
            rresp: w("rresp"),
            rvalid: w("rvalid"),
            rready: w("rready"),
            ins: pr
                .inputs
                .iter()
                .map(|s| {
                    ["tdata", "tkeep", "tvalid", "tready", "tlast"].map(|f| p(&format!("{s}_{f}")))
                })
                .collect(),
            outs: pr
                .outputs
                .iter()
                .map(|s| {
                    ["tdata", "tkeep", "tvalid", "tready", "tlast"].map(|f| p(&format!("{s}_{f}")))
                })
                .collect(),
            users: pr
                .outputs
                .iter()
                .map(|s| match shell {
                    Shell::OpenNic => User::Fields(
                        ["tuser_size", "tuser_src", "tuser_dst"].map(|f| p(&format!("{s}_{f}"))),
                    ),
                    Shell::NetFpgaPlus => User::Word(p(&format!("{s}_tuser"))),
                })
                .collect(),
        }
    }
}

/// One input stream's frame in progress.
struct Sending {
    beats: Vec<Beat>,
    next: usize,
    /// The model's copy of the frame.
    model_frame: Vec<u8>,
}

/// The bench's state: the plug-in, the model and what is in flight between them.
struct BoxBench<'a> {
    dut: Dut<'a>,
    p: Ports,
    shell: Profile,
    tf: TraceFields,
    sw: FrameSwitch,
    r: BoxRunReport,
    slots: Vec<Vec<u8>>,
    alloc: usize,
    pending: VecDeque<FrameResubmit>,
    /// The control operation staged through the window, waiting for its pass.
    staged: Option<ControlOp>,
    /// Expected frames per output stream (the model's, by port): the pass, the frame and, for a
    /// first pass, the cycle its frame's last beat went in.
    expected: [VecDeque<(u64, OutFrame, Option<u64>)>; 3],
    /// The cycle each buffer slot's frame had its last beat taken.
    last_beat_at: Vec<u64>,
    /// Model outputs for a port the board lacks (the adapter drops them).
    dropped: u64,
}

impl BoxBench<'_> {
    /// One clock: the outputs of this cycle, then the edge; the switch's pass entering (if any)
    /// runs through the model.
    fn step(&mut self) -> Result<()> {
        self.dut.step();
        if self.dut.get_bit(&self.p.overflow) {
            bail!("cycle {}: the egress overflowed", self.dut.cycles);
        }
        if !self.dut.get_bit(&self.p.trace_valid) {
            return Ok(());
        }
        let t = self.dut.get(&self.p.trace).to_vec();
        self.r.passes += 1;
        let second = self.tf.second.iter().any(|&o| field(&t, o, 1) == 1);
        let control = self.tf.control.iter().any(|&o| field(&t, o, 1) == 1);
        let mut first_in = None;
        let pass = if control {
            let Some(op) = self.staged.take() else {
                bail!(
                    "cycle {}: a control pass the bench did not start",
                    self.dut.cycles
                );
            };
            self.r.controls += 1;
            FramePass::Control(op)
        } else if second {
            self.r.resubmitted += 1;
            match self.pending.pop_front() {
                Some(rs) => FramePass::Resubmit(rs),
                None => bail!(
                    "cycle {}: a second pass the model did not ask for",
                    self.dut.cycles
                ),
            }
        } else {
            let slot = field(&t, self.tf.handle.0, self.tf.handle.1) as usize;
            first_in = Some(self.last_beat_at[slot]);
            FramePass::Frame(InFrame {
                frame: std::mem::take(&mut self.slots[slot]),
                time_us: field(&t, self.tf.time.0, self.tf.time.1) as u32,
            })
        };
        let shown = std::env::var("HORUS_COSIM_DEBUG")
            .is_ok()
            .then(|| match &pass {
                FramePass::Frame(f) => format!("frame of {} bytes", f.frame.len()),
                p => format!("{p:?}"),
            });
        let res = self
            .sw
            .process(pass)
            .map_err(|e| anyhow::anyhow!("pass {}: {e}", self.r.passes))?;
        if let Some(pass) = shown {
            eprintln!(
                "cycle {} pass {}: {pass} -> ports {:?}, resubmit {}",
                self.dut.cycles,
                self.r.passes,
                res.outputs.iter().map(|o| o.port).collect::<Vec<_>>(),
                res.resubmit.is_some()
            );
        }
        if let Some(rs) = res.resubmit {
            self.pending.push_back(rs);
        }
        for o in res.outputs {
            match self.expected.get_mut(usize::from(o.port)) {
                Some(q) => q.push_back((self.r.passes, o, first_in)),
                None => self.dropped += 1,
            }
        }
        Ok(())
    }

    /// Steps to the next rising edge of `axil_aclk` (its value before the edge is 0) and returns
    /// with the outputs of the cycle that ends in it: what the window's handshakes see.
    fn axil_cycle(&mut self) -> Result<()> {
        for _ in 0..2 {
            self.step()?;
            if !self.dut.get_bit(&self.p.phase) {
                return Ok(());
            }
        }
        bail!("axil_aclk does not toggle")
    }

    /// One write through the window, as the shell's AXI4-Lite master makes it (address and data
    /// together, held until taken); returns `bresp`.
    fn write(&mut self, addr: u64, data: u32) -> Result<u64> {
        let p = &self.p;
        self.dut.set_u64(&p.awaddr, addr);
        self.dut.set(&p.wdata, &[data]);
        if let Some(strb) = &p.wstrb {
            self.dut.set(strb, &[0xf]);
        }
        self.dut.set(&p.awvalid, &[1]);
        self.dut.set(&p.wvalid, &[1]);
        self.dut.set(&p.bready, &[1]);
        let (mut aw, mut w) = (false, false);
        for _ in 0..100 {
            self.axil_cycle()?;
            aw |= self.dut.get_bit(&self.p.awready);
            w |= self.dut.get_bit(&self.p.wready);
            self.dut.set(&self.p.awvalid, &[u32::from(!aw)]);
            self.dut.set(&self.p.wvalid, &[u32::from(!w)]);
            if aw && w {
                break;
            }
        }
        for _ in 0..100 {
            self.axil_cycle()?;
            if self.dut.get_bit(&self.p.bvalid) {
                self.r.axil_writes += 1;
                return Ok(self.dut.get_u64(&self.p.bresp));
            }
        }
        bail!("write of {data:#x} to {addr:#x}: no response")
    }

    /// One read through the window; returns (`rresp`, `rdata`).
    fn read(&mut self, addr: u64) -> Result<(u64, u32)> {
        self.dut.set_u64(&self.p.araddr, addr);
        self.dut.set(&self.p.arvalid, &[1]);
        self.dut.set(&self.p.rready, &[1]);
        for _ in 0..100 {
            self.axil_cycle()?;
            if self.dut.get_bit(&self.p.arready) {
                break;
            }
        }
        self.dut.set(&self.p.arvalid, &[0]);
        for _ in 0..100 {
            self.axil_cycle()?;
            if self.dut.get_bit(&self.p.rvalid) {
                self.r.axil_reads += 1;
                return Ok((
                    self.dut.get_u64(&self.p.rresp),
                    self.dut.get(&self.p.rdata)[0],
                ));
            }
        }
        bail!("read of {addr:#x}: no response")
    }

    fn write_ok(&mut self, addr: usize, data: u32) -> Result<()> {
        match self.write(addr as u64, data)? {
            0 => Ok(()),
            r => bail!("write of {data:#x} to {addr:#x} answered {r:#x}"),
        }
    }

    fn read_ok(&mut self, addr: usize) -> Result<u32> {
        match self.read(addr as u64)? {
            (0, d) => Ok(d),
            (r, _) => bail!("read of {addr:#x} answered {r:#x}"),
        }
    }
}

/// Runs `opts.frames` inputs of random traffic through the plug-in of `p` (its Verilated model,
/// built from [`verilog`]) and the model configured by `cfg` (ports on the board's streams).
pub fn run(
    model: &Model,
    p: &BoardParams,
    cfg: &Config,
    opts: &BoxRunOptions,
) -> Result<BoxRunReport> {
    let dut = model.instance()?;
    let mut bare = cfg.clone();
    bare.pools.clear();
    let (sw, boot) = FrameSwitch::from_config(&bare, p.seed)?;
    assert!(boot.is_empty());
    let mut b = BoxBench {
        p: Ports::of(model, p.board.shell),
        shell: profile(p.board.shell),
        dut,
        tf: TraceFields::new(),
        sw,
        r: BoxRunReport::default(),
        slots: vec![Vec::new(); 1 << horus_pipeline::phv::HANDLE_BITS],
        alloc: 0,
        pending: VecDeque::new(),
        staged: None,
        expected: Default::default(),
        last_beat_at: vec![0; 1 << horus_pipeline::phv::HANDLE_BITS],
        dropped: 0,
    };
    b.reset_and_program(cfg)?;

    // ---- Traffic on all three inputs at once, random back-pressure on every output.
    let mut traffic = Traffic::new(cfg.switch.role, opts.seed);
    traffic.mix = opts.mix;
    traffic.control_percent = 0;
    if opts.min_frames {
        traffic.small_payload = 1;
    }
    b.r.traffic_from = b.dut.cycles;
    let mut rng = Rng::new(opts.seed ^ 0x5851_f42d_4c95_7f2d);
    let mut st = Streams {
        left: opts.frames,
        ..Streams::default()
    };
    let mut quiet = 0;
    loop {
        b.offer_beats(&mut st, &mut traffic, &mut rng, opts);
        b.step()?;
        b.take_beats(&mut st);
        b.collect_outputs(&mut st)?;
        let idle = st.left == 0
            && st.sending.iter().all(Option::is_none)
            && b.expected.iter().all(VecDeque::is_empty)
            && b.pending.is_empty()
            && b.dut.get_u64(&b.p.in_flight) == 0;
        quiet = if idle { quiet + 1 } else { 0 };
        if quiet > 200 {
            break;
        }
        let total: u64 = b.r.frames_in.iter().sum();
        if b.dut.cycles > 400 * (total + 1000) {
            bail!(
                "no progress: {total} frames in, {:?} out, {:?} expected left",
                b.r.frames_out,
                b.expected.iter().map(VecDeque::len).collect::<Vec<_>>()
            );
        }
    }
    b.r.cycles = b.dut.cycles;
    b.check_end_state()?;
    Ok(b.r)
}

/// The three streams of a run: the frame each input is sending and whether it offers a beat,
/// whether each output is ready, and the frame each output is putting together.
#[derive(Default)]
struct Streams {
    /// Frames still to send.
    left: usize,
    sending: [Option<Sending>; 3],
    offered: [bool; 3],
    ready: [bool; 3],
    out_frame: [Vec<u8>; 3],
    out_tuser: [(u64, u64, u64); 3],
    out_started: [u64; 3],
}

impl BoxBench<'_> {
    /// The shell's module reset, then the switch programmed through the window as `horusctl
    /// writes` prints it, each word read back, and the configuration's control passes run.
    fn reset_and_program(&mut self, cfg: &Config) -> Result<()> {
        let b = self;
        match &b.p.reset {
            // OpenNIC: a pulse on mod_rstn, answered by mod_rst_done.
            Reset::Module { rstn, done } => {
                let (rstn, done) = (rstn.clone(), done.clone());
                b.dut.set(&rstn, &[0]);
                b.axil_cycle()?;
                b.dut.set(&rstn, &[1]);
                let mut waited = 0;
                while !b.dut.get_bit(&done) {
                    b.axil_cycle()?;
                    waited += 1;
                    if waited > 1000 {
                        bail!("mod_rst_done never rose");
                    }
                }
            }
            // NetFPGA-PLUS: both resets held low for a few cycles.
            Reset::Lines { axis, axi } => {
                let (axis, axi) = (axis.clone(), axi.clone());
                b.dut.set(&axis, &[0]);
                b.dut.set(&axi, &[0]);
                for _ in 0..16 {
                    b.step()?;
                }
                b.dut.set(&axis, &[1]);
                b.dut.set(&axi, &[1]);
            }
        }

        // ---- Programming through the window, as `horusctl writes` prints it.
        let id = b.read_ok(regmap::fields::ID.byte_address())?;
        if id != regmap::ID_VALUE {
            bail!("ID reads {id:#x} through the window");
        }
        // Beyond the switch's 4 KiB the window answers SLVERR and changes nothing.
        if b.read(0x1000)?.0 != 2 || b.write(0x8_0000, 0xffff_ffff)? != 2 {
            bail!("an access beyond the switch's registers was not refused");
        }
        let regs = RegFile::switch_config(cfg).map_err(anyhow::Error::msg)?;
        for w in regmap::switch_words() {
            b.write_ok(4 * w, regs.words[w])?;
        }
        // Read back: every word arrived whole through the bridge.
        for w in regmap::switch_words() {
            let got = b.read_ok(4 * w)?;
            if got != regs.words[w] {
                bail!(
                    "register word {w} reads {got:#x} through the window, written {:#x}",
                    regs.words[w]
                );
            }
        }
        let go = regmap::fields::CTL_GO.byte_address();
        let busy = regmap::fields::CTL_BUSY.byte_address();
        for op in config_ops(cfg) {
            let regs = RegFile::control(b.sw.scheduler(), &op);
            for w in regmap::control_words() {
                b.write_ok(4 * w, regs.words[w])?;
            }
            b.staged = Some(op);
            b.write_ok(go, 1)?;
            let mut polls = 0;
            while b.read_ok(busy)? & 1 == 1 {
                polls += 1;
                if polls > 100 {
                    bail!("CTL_BUSY stays up");
                }
            }
            if b.staged.is_some() {
                bail!("control pass {op:?} did not enter");
            }
        }
        Ok(())
    }

    /// Each input's next beat offered (a new frame drawn when one is due), each output's ready
    /// drawn.
    fn offer_beats(
        &mut self,
        st: &mut Streams,
        traffic: &mut Traffic,
        rng: &mut Rng,
        opts: &BoxRunOptions,
    ) {
        let b = self;
        let Streams {
            left,
            sending,
            offered,
            ready,
            ..
        } = st;
        for s in 0..3 {
            if sending[s].is_none() && *left > 0 && opts.inputs[s] {
                *left -= 1;
                let input = traffic.next(b.sw.scheduler());
                let mut bs = Vec::new();
                match &input {
                    Input::Frame(f) => beats(f, &mut bs),
                    Input::BadKeep { frame, beat, keep } => {
                        beats(frame, &mut bs);
                        bs[*beat].1 = [*keep as u32, (*keep >> 32) as u32];
                    }
                    Input::Control(_) => unreachable!("no control operations in this traffic"),
                }
                let model_frame = input.into_model_frame().expect("a frame input");
                sending[s] = Some(Sending {
                    beats: bs,
                    next: 0,
                    model_frame,
                });
            }
            let ps = &b.p.ins[s];
            // A stream starts offering a beat with `input_busy` chance a cycle and, as AXI-Stream
            // requires, holds it until it is taken.
            if !offered[s] && sending[s].is_some() && rng.chance(opts.input_busy) {
                offered[s] = true;
            }
            let offer = offered[s];
            if let Some(f) = &sending[s] {
                let (data, keep, last) = &f.beats[f.next];
                b.dut.set(&ps[0], data);
                b.dut.set(&ps[1], keep);
                b.dut.set(&ps[4], &[u32::from(*last)]);
            }
            b.dut.set(&ps[2], &[u32::from(offer)]);
            ready[s] = rng.chance(opts.output_ready);
            b.dut.set(&b.p.outs[s][3], &[u32::from(ready[s])]);
        }
    }

    /// Beats taken: a first beat is a frame entering the switch, in the arbiter's order.
    fn take_beats(&mut self, st: &mut Streams) {
        let b = self;
        let Streams {
            sending, offered, ..
        } = st;
        for s in 0..3 {
            if offered[s] && b.dut.get_bit(&b.p.ins[s][3]) {
                offered[s] = false;
                let f = sending[s].as_mut().expect("offered");
                if f.next == 0 {
                    let n = b.slots.len();
                    b.slots[b.alloc % n] = std::mem::take(&mut f.model_frame);
                    b.alloc += 1;
                    b.r.frames_in[s] += 1;
                }
                f.next += 1;
                if f.next == f.beats.len() {
                    sending[s] = None;
                    let n = b.last_beat_at.len();
                    b.last_beat_at[(b.alloc - 1) % n] = b.dut.cycles;
                    b.r.traffic_until = b.dut.cycles;
                }
            }
        }
    }

    /// Beats out, per stream: a whole frame checked against the model's next one for its port.
    fn collect_outputs(&mut self, st: &mut Streams) -> Result<()> {
        let b = self;
        let Streams {
            ready,
            out_frame,
            out_tuser,
            out_started,
            ..
        } = st;
        for s in 0..3 {
            let po = &b.p.outs[s];
            if !(ready[s] && b.dut.get_bit(&po[2])) {
                continue;
            }
            let keep = b.dut.get_u64(&po[1]);
            let n = keep.trailing_ones() as usize;
            if keep != u64::MAX && keep >> n != 0 {
                bail!(
                    "cycle {}: {}: tkeep {keep:#x} is not contiguous",
                    b.dut.cycles,
                    b.shell.outputs[s]
                );
            }
            let tuser = match &b.p.users[s] {
                User::Fields([size, src, dst]) => {
                    (b.dut.get_u64(size), b.dut.get_u64(src), b.dut.get_u64(dst))
                }
                // The bits above 31 (none set) are checked with the sources.
                User::Word(p) => {
                    let w = b.dut.get(p);
                    let above = u64::from(w[1..].iter().any(|&x| x != 0)) << 8;
                    (
                        u64::from(w[0] & 0xffff),
                        u64::from(w[0] >> 16 & 0xff) | above,
                        u64::from(w[0] >> 24),
                    )
                }
            };
            if out_frame[s].is_empty() {
                out_tuser[s] = tuser;
                out_started[s] = b.dut.cycles;
            } else if tuser != out_tuser[s] {
                bail!(
                    "cycle {}: {}: tuser changed inside a frame",
                    b.dut.cycles,
                    b.shell.outputs[s]
                );
            }
            let data = b.dut.get(&po[0]).to_vec();
            out_frame[s].extend(data.iter().flat_map(|w| w.to_le_bytes()).take(n));
            if !b.dut.get_bit(&po[4]) {
                continue;
            }
            let frame = std::mem::take(&mut out_frame[s]);
            let (size, src, dst) = out_tuser[s];
            if size != frame.len() as u64 || src != 0 || dst != b.shell.tuser_dst[s] {
                bail!(
                    "cycle {}: {}: tuser size {size} src {src:#x} dst {dst:#x} for a frame of {} bytes",
                    b.dut.cycles,
                    b.shell.outputs[s],
                    frame.len()
                );
            }
            b.r.frames_out[s] += 1;
            let got = OutFrame {
                port: s as u8,
                frame,
            };
            match b.expected[s].pop_front() {
                Some((_, want, first_in)) if want == got => {
                    if let Some(at) = first_in {
                        b.r.latency.push(out_started[s] - at);
                    }
                }
                Some((pass, want, _)) => bail!(
                    "cycle {}: {}: frame {} (from pass {pass}) differs from the model's:\n{}",
                    b.dut.cycles,
                    b.shell.outputs[s],
                    b.r.frames_out[s],
                    describe_difference(&got, &want)
                ),
                None => bail!(
                    "cycle {}: {}: a frame the model did not send:\n{}",
                    b.dut.cycles,
                    b.shell.outputs[s],
                    hex(&got.frame)
                ),
            }
        }
        Ok(())
    }

    /// The end state, read through the window: the generator's state, every counter, and the
    /// adapter's drops.
    fn check_end_state(&mut self) -> Result<()> {
        let b = self;
        // ---- The end state, read through the window.
        let rng_state = b.dut.get_u64(&b.p.rng);
        if rng_state != b.sw.scheduler().rng_state() {
            bail!(
                "generator state {rng_state:#x}, the model's {:#x}",
                b.sw.scheduler().rng_state()
            );
        }
        let c = b.sw.scheduler().counters().clone();
        let mut want = vec![c.passes, c.resubmit_passes, c.control_passes];
        want.extend(DropReason::ALL.iter().map(|&d| c.drop_count(d)));
        let names: Vec<_> = regmap::FIELDS
            .iter()
            .filter(|f| {
                f.word >= regmap::COUNTER_BASE && f.word < regmap::COUNTER_BASE + regmap::COUNTERS
            })
            .collect();
        for (f, want) in names.into_iter().zip(want) {
            let got = b.read_ok(f.byte_address())?;
            if u64::from(got) != want % (1 << 32) {
                bail!(
                    "counter {}: {got} through the window, the model's {want}",
                    f.name
                );
            }
        }
        let drops = b.read_ok(regmap::fields::BOARD_DROPS.byte_address())?;
        if u64::from(drops) != b.dropped {
            bail!(
                "BOARD_DROPS {drops} through the window, but the model sent {} frames to ports the board lacks",
                b.dropped
            );
        }
        b.r.board_drops = b.dropped;
        Ok(())
    }
}
