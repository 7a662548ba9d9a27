//! The scoreboard: a Verilated switch and the model's `FrameSwitch`, pass for pass.
//!
//! The switch is configured through its AXI4-Lite port as a host driver does (the switch's
//! registers, then every control operation staged in the `CTL_*` registers and started with
//! `CTL_GO`). Frames go into `s_axis` beat by beat (with random idle cycles) and `m_axis` is read
//! with random backpressure. Every pass the switch lets into its stages
//! (the trace port) runs through the model in the same order: a frame (which one: its buffer
//! slot), a resubmitted pass (the model's pending second passes, in order) or a control pass.
//! Every frame leaving `m_axis` must equal the model's next output, byte for byte, with its
//! egress port. The first difference stops the run with the pass, both frames and the cycle.

use std::collections::VecDeque;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use horus_model::config::Config;
use horus_model::sched::frame::{FramePass, FrameResubmit, FrameSwitch, InFrame, OutFrame};
use horus_model::sched::{ControlOp, config_ops};
use horus_pipeline::egress::TUSER_LEN_SHIFT;
use horus_pipeline::phv::Phv;
use horus_pipeline::presets::Preset;
use horus_pipeline::readback::{self, RB_WORDS};
use horus_pipeline::regmap::{self, RegFile, fields};
use rust_hdl::prelude::Bits;

use crate::traffic::{Input, Mix, Rng, Traffic};
use crate::verilated::{Dut, Model, Port};
use hdrhistogram::Histogram;
use horus_model::sched::{DropReason, Scheduler, Stage};

/// The bits of a rust-hdl value as 32-bit words, least significant first.
pub fn words<const N: usize>(b: Bits<N>) -> Vec<u32> {
    let mut w = vec![0u32; N.div_ceil(32)];
    for i in 0..N {
        if b.get_bit(i) {
            w[i / 32] |= 1 << (i % 32);
        }
    }
    w
}

/// `width` bits at `offset` of a word vector.
pub fn field(w: &[u32], offset: usize, width: usize) -> u64 {
    assert!(width <= 64, "a field of {width} bits");
    if width == 0 {
        return 0;
    }
    let (mut word, shift) = (offset / 32, offset % 32);
    let mut v = u64::from(w[word]) >> shift;
    let mut got = 32 - shift;
    while got < width {
        word += 1;
        v |= u64::from(w[word]) << got;
        got += 32;
    }
    if width < 64 {
        v & ((1 << width) - 1)
    } else {
        v
    }
}

/// Knobs of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub frames: usize,
    pub seed: u64,
    /// Percent of cycles with a beat offered on `s_axis` (within a frame and between frames).
    pub input_busy: u64,
    /// Percent of cycles with `m_axis_tready` high.
    pub output_ready: u64,
    /// What the random traffic is made of.
    pub mix: Mix,
    /// Write a VCD waveform of the cycles from `.0` on to the file `.1` (the model must have
    /// been built with tracing, `Model::build_traced`).
    pub trace: Option<(u64, std::path::PathBuf)>,
}

/// A run that failed, and the cycle it failed at (to replay it with a waveform).
#[derive(Debug)]
pub struct Failure {
    pub cycle: u64,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Failure {}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Cycles of the traffic: until every input went in and every output came out (the final
    /// checks and the table read-back not included).
    pub cycles: u64,
    /// Cycles of the final checks and the table read-back.
    pub check_cycles: u64,
    pub frames_in: u64,
    pub frames_out: u64,
    /// Beats sent on `m_axis`.
    pub beats_out: u64,
    pub passes: u64,
    pub first_passes: u64,
    pub resubmitted: u64,
    pub controls: u64,
    /// Table entries read back and compared at the end.
    pub entries_read: u64,
    /// The model's counters at the end (the switch's equal them where it has them).
    pub counters: horus_model::sched::Counters,
    /// Wall time of the traffic (`cycles`).
    pub seconds: f64,
    /// Cycles from a frame's last input beat to the first beat of an output of its first pass.
    pub latency: Histogram<u64>,
}

impl Default for RunReport {
    fn default() -> Self {
        RunReport {
            cycles: 0,
            check_cycles: 0,
            frames_in: 0,
            frames_out: 0,
            beats_out: 0,
            passes: 0,
            first_passes: 0,
            resubmitted: 0,
            controls: 0,
            entries_read: 0,
            counters: Default::default(),
            seconds: 0.0,
            latency: Histogram::new(3).expect("a histogram of 3 significant figures"),
        }
    }
}

/// The switch top's ports the bench drives and watches.
pub struct Ports {
    pub s_tdata: Port,
    pub s_tkeep: Port,
    pub s_tvalid: Port,
    pub s_tready: Port,
    pub s_tlast: Port,
    pub m_tdata: Port,
    pub m_tkeep: Port,
    pub m_tvalid: Port,
    pub m_tready: Port,
    pub m_tlast: Port,
    pub m_tuser: Port,
    pub now_us: Port,
    pub awaddr: Port,
    pub awvalid: Port,
    pub awready: Port,
    pub wdata: Port,
    pub wstrb: Port,
    pub wvalid: Port,
    pub bready: Port,
    pub bvalid: Port,
    pub bresp: Port,
    pub araddr: Port,
    pub arvalid: Port,
    pub rready: Port,
    pub rvalid: Port,
    pub rdata: Port,
    pub rresp: Port,
    pub trace_valid: Port,
    pub trace: Port,
    pub rng_state: Port,
    pub in_flight: Port,
    pub overflow: Port,
}

impl Ports {
    pub fn of(m: &Model) -> Ports {
        let p = |n: &str| m.port(n).clone();
        Ports {
            s_tdata: p("s_axis_tdata"),
            s_tkeep: p("s_axis_tkeep"),
            s_tvalid: p("s_axis_tvalid"),
            s_tready: p("s_axis_tready"),
            s_tlast: p("s_axis_tlast"),
            m_tdata: p("m_axis_tdata"),
            m_tkeep: p("m_axis_tkeep"),
            m_tvalid: p("m_axis_tvalid"),
            m_tready: p("m_axis_tready"),
            m_tlast: p("m_axis_tlast"),
            m_tuser: p("m_axis_tuser"),
            now_us: p("now_us"),
            awaddr: p("s_axil_awaddr"),
            awvalid: p("s_axil_awvalid"),
            awready: p("s_axil_awready"),
            wdata: p("s_axil_wdata"),
            wstrb: p("s_axil_wstrb"),
            wvalid: p("s_axil_wvalid"),
            bready: p("s_axil_bready"),
            bvalid: p("s_axil_bvalid"),
            bresp: p("s_axil_bresp"),
            araddr: p("s_axil_araddr"),
            arvalid: p("s_axil_arvalid"),
            rready: p("s_axil_rready"),
            rvalid: p("s_axil_rvalid"),
            rdata: p("s_axil_rdata"),
            rresp: p("s_axil_rresp"),
            trace_valid: p("trace_valid"),
            trace: p("trace_pass"),
            rng_state: p("rng_state"),
            in_flight: p("in_flight"),
            overflow: p("overflow"),
        }
    }
}

/// Offsets of the descriptor fields the scoreboard reads from the trace port.
pub(crate) struct TraceFields {
    pub(crate) handle: (usize, usize),
    pub(crate) time: (usize, usize),
    pub(crate) second: [usize; 4],
    pub(crate) control: [usize; 4],
}

impl TraceFields {
    pub(crate) fn new() -> TraceFields {
        let p = Phv::default();
        TraceFields {
            handle: (p.get_my_offset_handle(), p.get_my_width_handle()),
            time: (p.get_my_offset_time(), p.get_my_width_time()),
            second: [
                p.get_my_offset_is_sched2(),
                p.get_my_offset_is_add_commit(),
                p.get_my_offset_is_remove_finish(),
                p.get_my_offset_is_ctl_remove2(),
            ],
            control: [
                p.get_my_offset_is_ctl_pool(),
                p.get_my_offset_is_ctl_params(),
                p.get_my_offset_is_ctl_add(),
                p.get_my_offset_is_ctl_remove(),
            ],
        }
    }
}

/// One 512-bit beat: data words, keep words, last.
pub type Beat = ([u32; 16], [u32; 2], bool);

/// Frame bytes as beats.
/// `frame`'s beats, into `out` (cleared first; the bench reuses one buffer).
pub fn beats(frame: &[u8], out: &mut Vec<Beat>) {
    out.clear();
    let n = frame.len().div_ceil(64).max(1);
    out.extend((0..n).map(|b| {
        let chunk = &frame[(b * 64).min(frame.len())..((b + 1) * 64).min(frame.len())];
        let mut data = [0u32; 16];
        for (word, bytes) in data.iter_mut().zip(chunk.chunks(4)) {
            let mut le = [0u8; 4];
            le[..bytes.len()].copy_from_slice(bytes);
            *word = u32::from_le_bytes(le);
        }
        let keep = crate::traffic::keep_of(chunk.len());
        (data, [keep as u32, (keep >> 32) as u32], b + 1 == n)
    }));
}

pub(crate) fn hex(f: &[u8]) -> String {
    let mut s = String::new();
    for (i, b) in f.iter().enumerate() {
        if i % 32 == 0 {
            let _ = write!(s, "\n  {i:4}:");
        }
        let _ = write!(s, " {b:02x}");
    }
    s
}

pub(crate) fn describe_difference(got: &OutFrame, want: &OutFrame) -> String {
    let first = got
        .frame
        .iter()
        .zip(&want.frame)
        .position(|(a, b)| a != b)
        .unwrap_or(got.frame.len().min(want.frame.len()));
    let decoded = |f: &[u8]| match horus_model::wire::parse_frame(f) {
        Ok(h) => format!("{h:#?}"),
        Err(e) => format!("(not a Horus frame: {e})"),
    };
    format!(
        "port {} vs {} (model), length {} vs {}, first differing byte {first}\nhardware:{}\n{}\nmodel:{}\n{}",
        got.port,
        want.port,
        got.frame.len(),
        want.frame.len(),
        hex(&got.frame),
        decoded(&got.frame),
        hex(&want.frame),
        decoded(&want.frame)
    )
}

/// Runs `opts.frames` inputs of random traffic through the switch `preset` (Verilog `verilog`)
/// and the model configured by `cfg`; the switch's generator starts at `seed`.
pub fn run(
    model: &Model,
    preset: &Preset,
    cfg: &Config,
    seed: u64,
    opts: &RunOptions,
) -> Result<RunReport> {
    let mut traffic = Traffic::new(cfg.switch.role, opts.seed);
    traffic.mix = opts.mix;
    let mut left = opts.frames;
    let mut source = |m: &Scheduler| {
        (left > 0).then(|| {
            left -= 1;
            traffic.next(m)
        })
    };
    run_with(model, preset, cfg, seed, opts, &mut source, &mut |_| {})
}

/// Runs the inputs `source` gives (asked with the model's state, until it returns `None`)
/// through the switch and the model; `sink` sees every output frame, after it matched the
/// model's. `opts.frames` is not used.
pub fn run_with(
    model: &Model,
    preset: &Preset,
    cfg: &Config,
    seed: u64,
    opts: &RunOptions,
    source: &mut dyn FnMut(&Scheduler) -> Option<Input>,
    sink: &mut dyn FnMut(&OutFrame),
) -> Result<RunReport> {
    let mut cycle = 0;
    run_inner(model, preset, cfg, seed, opts, source, sink, &mut cycle).map_err(|e| {
        anyhow::Error::new(Failure {
            cycle,
            message: format!("{e:#}"),
        })
    })
}

#[allow(clippy::too_many_arguments)]
fn run_inner(
    model: &Model,
    preset: &Preset,
    cfg: &Config,
    seed: u64,
    opts: &RunOptions,
    source: &mut dyn FnMut(&Scheduler) -> Option<Input>,
    sink: &mut dyn FnMut(&OutFrame),
    cycle: &mut u64,
) -> Result<RunReport> {
    assert_eq!(preset.role, cfg.switch.role);
    let start = std::time::Instant::now();
    let ports = Ports::of(model);
    let mut dut: Dut = model.instance()?;
    dut.set(&ports.bready, &[1]);
    dut.set(&ports.rready, &[1]);
    let id = axil_read(&mut dut, &ports, regmap::fields::ID.byte_address())?;
    if id != regmap::ID_VALUE {
        bail!("ID register reads {id:#x}");
    }
    let sw_regs = RegFile::switch_config(cfg).map_err(anyhow::Error::msg)?;
    for w in regmap::switch_words() {
        axil_write(&mut dut, &ports, 4 * w, sw_regs.words[w])?;
    }
    // The model starts with the switch section and spines only; the pools come in as control
    // passes through the hardware's control port.
    let mut bare = cfg.clone();
    bare.pools.clear();
    let (sw, boot) = FrameSwitch::from_config(&bare, seed)?;
    assert!(boot.is_empty());
    let mut b = Bench {
        dut,
        ports,
        tf: TraceFields::new(),
        sw,
        inputs: config_ops(cfg).into_iter().map(Input::Control).collect(),
        rng: Rng::new(opts.seed ^ 0x9e37_79b9_7f4a_7c15),
        r: RunReport::default(),
        exhausted: false,
        held: Held {
            slots: vec![Vec::new(); 1 << horus_pipeline::phv::HANDLE_BITS],
            last_beat_at: vec![0; 1 << horus_pipeline::phv::HANDLE_BITS],
            pending: VecDeque::new(),
        },
        alloc: 0,
        beat_buf: Vec::new(),
        sending: None,
        expected: VecDeque::new(),
        out: Gather::default(),
        // The shell's microsecond clock starts 100 ms before it wraps, so that every run
        // crosses the wrap (the bench advances it about once every five cycles): connection
        // timeouts and the idle-repair gap compare wrapping times.
        time_us: u32::MAX - 100_000,
        writes: VecDeque::new(),
        staged: None,
        debug: std::env::var("HORUS_COSIM_DEBUG").is_ok(),
    };
    let mut quiet = 0u32;
    loop {
        b.next_input(source);
        let drive = b.drive(opts);
        if let Some((from, path)) = &opts.trace {
            if b.dut.cycles == *from {
                b.dut.start_trace(path)?;
            }
        }
        b.dut.step();
        *cycle = b.dut.cycles;
        b.observe(drive, sink)?;
        // ---- Done when everything went in and everything expected came out.
        quiet = if b.idle() { quiet + 1 } else { 0 };
        if quiet > 200 {
            break;
        }
        let r = &b.r;
        if b.dut.cycles > 200 * (r.frames_in + r.controls + 1000) {
            bail!(
                "no progress: {} frames in, {} out, {} expected outputs left, {} inputs left",
                r.frames_in,
                r.frames_out,
                b.expected.len(),
                b.inputs.len()
            );
        }
    }
    let Bench {
        mut dut,
        ports,
        sw,
        mut r,
        ..
    } = b;
    r.cycles = dut.cycles;
    r.seconds = start.elapsed().as_secs_f64();
    check_end(&mut dut, &ports, sw.scheduler())?;
    // Every entry of every table, read through AXI4-Lite, is the model's.
    r.entries_read = compare_tables(&mut dut, &ports, sw.scheduler())?;
    r.counters = sw.scheduler().counters().clone();
    r.check_cycles = dut.cycles - r.cycles;
    Ok(r)
}

/// A run's switch, model and everything between them.
struct Bench<'a> {
    dut: Dut<'a>,
    ports: Ports,
    tf: TraceFields,
    sw: FrameSwitch,
    /// Inputs still to go in: control operations first, then what the source gives.
    inputs: VecDeque<Input>,
    rng: Rng,
    r: RunReport,
    /// The source has no more inputs.
    exhausted: bool,
    /// Frames in the switch's buffer slots (the ingress takes slots in ring order).
    held: Held,
    alloc: usize,
    /// The frame going in: its beats (one buffer, reused) and the next beat's index.
    beat_buf: Vec<Beat>,
    sending: Option<usize>,
    /// Expected outputs: the pass, the frame, and for a first pass the cycle its frame's last
    /// beat went in.
    expected: Expected,
    out: Gather,
    time_us: u32,
    /// AXI4-Lite writes under way (byte address, value), and the control operation they stage.
    writes: VecDeque<(usize, u32)>,
    staged: Option<ControlOp>,
    debug: bool,
}

/// What the bench drove in a cycle: a beat offered, the output ready, an AXI4-Lite write.
#[derive(Clone, Copy)]
struct Drive {
    offer: bool,
    ready: bool,
    writing: Option<(usize, u32)>,
}

impl Bench<'_> {
    /// The next input from `source` when none is waiting, and a frame at the head put in its
    /// buffer slot to go in.
    fn next_input(&mut self, source: &mut dyn FnMut(&Scheduler) -> Option<Input>) {
        if self.inputs.is_empty() && !self.exhausted && self.sending.is_none() {
            match source(self.sw.scheduler()) {
                Some(i) => self.inputs.push_back(i),
                None => self.exhausted = true,
            }
        }
        if self.sending.is_none() && !matches!(self.inputs.front(), None | Some(Input::Control(_)))
        {
            let input = self.inputs.pop_front().expect("a frame at the head");
            match &input {
                Input::Frame(f) => beats(f, &mut self.beat_buf),
                Input::BadKeep { frame, beat, keep } => {
                    beats(frame, &mut self.beat_buf);
                    self.beat_buf[*beat].1 = [*keep as u32, (*keep >> 32) as u32];
                }
                Input::Control(_) => unreachable!("matched above"),
            }
            let model_frame = input.into_model_frame().expect("a frame input");
            self.sending = Some(0);
            let n = self.held.slots.len();
            self.held.slots[self.alloc % n] = model_frame;
        }
    }

    /// The inputs of this cycle: a beat offered, a control operation staged through AXI4-Lite,
    /// the output's ready, the shell's clock.
    fn drive(&mut self, opts: &RunOptions) -> Drive {
        let (dut, ports) = (&mut self.dut, &self.ports);
        let offer = self.sending.is_some() && self.rng.chance(opts.input_busy);
        if let Some(i) = self.sending {
            let (data, keep, last) = &self.beat_buf[i];
            dut.set(&ports.s_tdata, data);
            dut.set(&ports.s_tkeep, keep);
            dut.set(&ports.s_tlast, &[u32::from(*last)]);
        }
        dut.set(&ports.s_tvalid, &[u32::from(offer)]);
        // A control operation at the head is staged through AXI4-Lite (with the host's values
        // from the model's state now: only control passes change them) and started.
        if self.staged.is_none() && self.sending.is_none() {
            if let Some(Input::Control(op)) = self.inputs.front() {
                let regs = RegFile::control(self.sw.scheduler(), op);
                for w in regmap::control_words() {
                    self.writes.push_back((4 * w, regs.words[w]));
                }
                self.writes
                    .push_back((regmap::fields::CTL_GO.byte_address(), 1));
                self.staged = Some(*op);
            }
        }
        let writing = self.writes.front().copied();
        if let Some((addr, data)) = writing {
            dut.set_u64(&ports.awaddr, addr as u64);
            dut.set(&ports.wdata, &[data]);
            dut.set(&ports.wstrb, &[0xf]);
        }
        dut.set(&ports.awvalid, &[u32::from(writing.is_some())]);
        dut.set(&ports.wvalid, &[u32::from(writing.is_some())]);
        let ready = self.rng.chance(opts.output_ready);
        dut.set(&ports.m_tready, &[u32::from(ready)]);
        if self.rng.chance(20) {
            self.time_us = self.time_us.wrapping_add(1);
        }
        dut.set(&ports.now_us, &[self.time_us]);
        Drive {
            offer,
            ready,
            writing,
        }
    }

    /// What happened in the cycle just run: a write taken, a beat taken, a pass entering the
    /// pipeline (run on the model), an output beat.
    fn observe(&mut self, d: Drive, sink: &mut dyn FnMut(&OutFrame)) -> Result<()> {
        let (dut, ports) = (&self.dut, &self.ports);
        if d.writing.is_some() && dut.get_bit(&ports.awready) {
            self.writes.pop_front();
        }
        if dut.get_bit(&ports.bvalid) && dut.get_u64(&ports.bresp) != 0 {
            bail!(
                "cycle {}: an AXI4-Lite write answered {:#x}",
                dut.cycles,
                dut.get_u64(&ports.bresp)
            );
        }
        if dut.get_bit(&ports.overflow) {
            bail!("cycle {}: the egress overflowed", dut.cycles);
        }
        if d.offer && dut.get_bit(&ports.s_tready) {
            let i = self.sending.as_mut().expect("offered");
            if *i == 0 {
                self.alloc += 1;
                self.r.frames_in += 1;
            }
            *i += 1;
            if *i == self.beat_buf.len() {
                self.sending = None;
                let n = self.held.slots.len();
                self.held.last_beat_at[(self.alloc - 1) % n] = dut.cycles;
            }
        }
        if self.dut.get_bit(&self.ports.trace_valid) {
            self.run_pass()?;
        }
        if d.ready && self.dut.get_bit(&self.ports.m_tvalid) {
            self.out.beat(
                &self.dut,
                &self.ports,
                &mut self.r,
                &mut self.expected,
                sink,
            )?;
        }
        Ok(())
    }

    /// A pass entering the pipeline, run on the model: its outputs become expected, its
    /// resubmission pending.
    fn run_pass(&mut self) -> Result<()> {
        let t = self.dut.get(&self.ports.trace);
        self.r.passes += 1;
        let (pass, first_in) = pass_of(
            t,
            &self.tf,
            &mut self.staged,
            &mut self.inputs,
            &mut self.held,
            &mut self.r,
            self.dut.cycles,
        )?;
        let shown = self.debug.then(|| match &pass {
            FramePass::Frame(f) => format!("frame of {} bytes", f.frame.len()),
            p => format!("{p:?}"),
        });
        let passes = self.r.passes;
        let res = self
            .sw
            .process(pass)
            .map_err(|e| anyhow::anyhow!("pass {passes}: {e}"))?;
        if let Some(pass) = shown {
            eprintln!(
                "cycle {} pass {passes}: {pass} -> {} outputs, resubmit {}",
                self.dut.cycles,
                res.outputs.len(),
                res.resubmit.is_some()
            );
        }
        if let Some(rs) = res.resubmit {
            self.held.pending.push_back(rs);
        }
        for o in res.outputs {
            self.expected.push_back((passes, o, first_in));
        }
        Ok(())
    }

    /// Everything went in and everything expected came out.
    fn idle(&self) -> bool {
        self.inputs.is_empty()
            && self.writes.is_empty()
            && self.sending.is_none()
            && self.exhausted
            && self.expected.is_empty()
            && self.held.pending.is_empty()
            && self.dut.get_u64(&self.ports.in_flight) == 0
    }
}

/// Frames and passes the switch holds: the frames in its buffer slots (the ingress takes slots
/// in ring order), the cycle each one's last beat went in, and the second passes the model asked
/// for, in order.
struct Held {
    slots: Vec<Vec<u8>>,
    last_beat_at: Vec<u64>,
    pending: VecDeque<FrameResubmit>,
}

/// The pass the trace `t` shows entering the pipeline, as the model is to run it (a control
/// operation the bench staged, a second pass the model asked for, or a frame's first pass), and
/// for a first pass the cycle its frame's last beat went in.
fn pass_of(
    t: &[u32],
    tf: &TraceFields,
    staged: &mut Option<ControlOp>,
    inputs: &mut VecDeque<Input>,
    held: &mut Held,
    r: &mut RunReport,
    cycle: u64,
) -> Result<(FramePass, Option<u64>)> {
    let second = tf.second.iter().any(|&o| field(t, o, 1) == 1);
    let control = tf.control.iter().any(|&o| field(t, o, 1) == 1);
    let mut first_in: Option<u64> = None;
    let pass = if control {
        let (Some(op), Some(Input::Control(head))) = (staged.take(), inputs.pop_front()) else {
            bail!("a control pass entered that the bench did not start")
        };
        assert_eq!(op, head);
        r.controls += 1;
        FramePass::Control(op)
    } else if second {
        r.resubmitted += 1;
        match held.pending.pop_front() {
            Some(rs) => FramePass::Resubmit(rs),
            None => bail!(
                "cycle {}: pass {} is a second pass the model did not ask for",
                cycle,
                r.passes
            ),
        }
    } else {
        r.first_passes += 1;
        let slot = field(t, tf.handle.0, tf.handle.1) as usize;
        first_in = Some(held.last_beat_at[slot]);
        FramePass::Frame(InFrame {
            // A frame has one first pass: its slot's copy is not needed again.
            frame: std::mem::take(&mut held.slots[slot]),
            time_us: field(t, tf.time.0, tf.time.1) as u32,
        })
    };
    Ok((pass, first_in))
}

/// At the end of a run: the generator's state, the status and every counter (read through
/// AXI4-Lite) are the model's.
fn check_end(dut: &mut Dut, ports: &Ports, m: &Scheduler) -> Result<()> {
    let rng = dut.get_u64(&ports.rng_state);
    if rng != m.rng_state() {
        bail!("generator state {rng:#x}, the model's {:#x}", m.rng_state());
    }
    let status = axil_read(dut, ports, regmap::fields::CTL_BUSY.byte_address())?;
    if status != 0 {
        bail!("STATUS reads {status:#x} at the end (busy, overflow or passes in flight)");
    }
    // The counters, read through AXI4-Lite, are the model's.
    let c = m.counters();
    let mut want = vec![c.passes, c.resubmit_passes, c.control_passes];
    want.extend(DropReason::ALL.iter().map(|&d| c.drop_count(d)));
    let names = regmap::FIELDS.iter().filter(|f| {
        f.word >= regmap::COUNTER_BASE && f.word < regmap::COUNTER_BASE + regmap::COUNTERS
    });
    for (f, want) in names.zip(want) {
        let got = axil_read(dut, ports, f.byte_address())?;
        if u64::from(got) != want % (1 << 32) {
            bail!("counter {}: {got}, the model's {want}", f.name);
        }
    }
    Ok(())
}

/// The output frame being gathered, beat by beat.
#[derive(Default)]
struct Gather {
    frame: Vec<u8>,
    /// The cycle of its first beat.
    started: u64,
    /// Its `tuser` (port and length), which every beat of the frame must repeat.
    tuser: u64,
}

/// An expected output: the pass, the frame, and for a first pass the cycle its frame's last beat
/// went in.
type Expected = VecDeque<(u64, OutFrame, Option<u64>)>;

impl Gather {
    /// The output beat the switch sent in this cycle: its bytes gathered; at the frame's last
    /// beat, the frame compared with the model's next.
    fn beat(
        &mut self,
        dut: &Dut,
        p: &Ports,
        r: &mut RunReport,
        expected: &mut Expected,
        sink: &mut dyn FnMut(&OutFrame),
    ) -> Result<()> {
        let data = dut.get(&p.m_tdata);
        let keep = dut.get_u64(&p.m_tkeep);
        let n = keep.trailing_ones() as usize;
        let tuser = dut.get_u64(&p.m_tuser);
        if self.frame.is_empty() {
            self.started = dut.cycles;
            self.tuser = tuser;
        } else if tuser != self.tuser {
            bail!(
                "cycle {}: tuser {tuser:#x} inside a frame that began with {:#x}",
                dut.cycles,
                self.tuser
            );
        }
        r.beats_out += 1;
        if keep != u64::MAX && keep >> n != 0 {
            bail!("cycle {}: tkeep {keep:#x} is not contiguous", dut.cycles);
        }
        self.frame
            .extend(data.iter().flat_map(|w| w.to_le_bytes()).take(n));
        if dut.get_bit(&p.m_tlast) {
            let port = tuser as u8;
            let len = (tuser >> TUSER_LEN_SHIFT) & 0xfff;
            if len != self.frame.len() as u64 {
                bail!(
                    "cycle {}: tuser gives a length of {len} bytes to a frame of {}",
                    dut.cycles,
                    self.frame.len()
                );
            }
            r.frames_out += 1;
            // The frame is compared where it was gathered; the buffer is kept for the next.
            let got = |frame: &[u8]| OutFrame {
                port,
                frame: frame.to_vec(),
            };
            match expected.pop_front() {
                Some((_, want, first_in)) if want.port == port && want.frame == self.frame => {
                    if let Some(at) = first_in {
                        r.latency.record(self.started - at)?;
                    }
                    self.frame.clear();
                    sink(&want)
                }
                Some((pass, want, _)) => bail!(
                    "cycle {}: output frame {} (from pass {pass}) differs from the model's:\n{}",
                    dut.cycles,
                    r.frames_out,
                    describe_difference(&got(&self.frame), &want)
                ),
                None => bail!(
                    "cycle {}: the switch sent a frame the model did not:\n{}",
                    dut.cycles,
                    hex(&self.frame)
                ),
            }
        }
        Ok(())
    }
}

/// Reads every entry of every table back through the control port (`CTL_READ_ENTRY`) and
/// compares it with the model's, in the hardware's layout (`readback::encode`); also checks that
/// a read beyond a table or of no table finds nothing. Returns the entries read.
fn compare_tables(dut: &mut Dut, p: &Ports, m: &Scheduler) -> Result<u64> {
    let info = axil_read(dut, p, regmap::fields::POOL_BITS.byte_address())?;
    let (pool_bits, node_bits, conn_bits) = (
        (info >> 8 & 0xff) as usize,
        (info >> 16 & 0xff) as usize,
        (info >> 24 & 0xff) as usize,
    );
    let index_word = regmap::fields::CTL_INDEX.word;
    let op_word = regmap::fields::CTL_READ_ENTRY.word;
    let read = |dut: &mut Dut, regs: &RegFile, what: &str| -> Result<Option<[u32; RB_WORDS]>> {
        axil_write(dut, p, 4 * op_word, regs.words[op_word])?;
        axil_write(dut, p, 4 * index_word, regs.words[index_word])?;
        axil_write(dut, p, regmap::fields::CTL_GO.byte_address(), 1)?;
        let status = regmap::fields::RB_VALID.byte_address();
        let mut st = axil_read(dut, p, status)?;
        let mut polls = 0;
        while st & 2 != 0 || axil_read(dut, p, regmap::fields::CTL_GO.byte_address())? != 0 {
            polls += 1;
            if polls > 100 {
                bail!("reading {what}: RB_BUSY stays set");
            }
            st = axil_read(dut, p, status)?;
        }
        if st & 1 == 0 {
            return Ok(None);
        }
        let mut w = [0u32; RB_WORDS];
        for (k, w) in w.iter_mut().enumerate() {
            *w = axil_read(dut, p, regmap::rb_data(k).byte_address())?;
        }
        Ok(Some(w))
    };
    let mut entries = 0;
    for &stage in &Stage::ALL {
        let len = readback::table_len(stage, pool_bits, node_bits, conn_bits);
        for index in 0..len {
            let what = format!("{}[{index}]", stage.table_name());
            let regs = RegFile::read_entry(stage, index as u16);
            let Some(got) = read(dut, &regs, &what)? else {
                bail!("reading {what}: RB_VALID is 0");
            };
            let want = readback::encode(m.tables(), m.role(), stage, index);
            if got != want {
                bail!(
                    "{what} differs from the model's:\nhardware: {}\nmodel:    {}",
                    readback::describe(stage, &got),
                    readback::describe(stage, &want)
                );
            }
            entries += 1;
        }
        if len < 1 << 16 {
            let what = format!("{}[{len}] (beyond the table)", stage.table_name());
            if read(dut, &RegFile::read_entry(stage, len as u16), &what)?.is_some() {
                bail!("reading {what}: RB_VALID is 1");
            }
        }
    }
    let mut none = RegFile::read_entry(Stage::PoolCfg, 0);
    none.set(&fields::CTL_TABLE, Stage::ALL.len() as u64);
    if read(dut, &none, "table 14 (no such table)")?.is_some() {
        bail!("reading table {}: RB_VALID is 1", Stage::ALL.len());
    }
    Ok(entries)
}

/// One AXI4-Lite write, waiting for its response (nothing else moves).
fn axil_write(dut: &mut Dut, p: &Ports, addr: usize, data: u32) -> Result<()> {
    dut.set_u64(&p.awaddr, addr as u64);
    dut.set(&p.wdata, &[data]);
    dut.set(&p.wstrb, &[0xf]);
    dut.set(&p.awvalid, &[1]);
    dut.set(&p.wvalid, &[1]);
    for _ in 0..10 {
        dut.step();
        if dut.get_bit(&p.awready) {
            dut.set(&p.awvalid, &[0]);
            dut.set(&p.wvalid, &[0]);
            for _ in 0..10 {
                dut.step();
                if dut.get_bit(&p.bvalid) {
                    let resp = dut.get_u64(&p.bresp);
                    if resp != 0 {
                        bail!("write of {data:#x} to {addr:#x} answered {resp:#x}");
                    }
                    return Ok(());
                }
            }
        }
    }
    bail!("write to {addr:#x}: no response")
}

/// One AXI4-Lite read.
fn axil_read(dut: &mut Dut, p: &Ports, addr: usize) -> Result<u32> {
    dut.set_u64(&p.araddr, addr as u64);
    dut.set(&p.arvalid, &[1]);
    dut.step();
    dut.set(&p.arvalid, &[0]);
    for _ in 0..10 {
        dut.step();
        if dut.get_bit(&p.rvalid) {
            let resp = dut.get_u64(&p.rresp);
            if resp != 0 {
                bail!("read of {addr:#x} answered {resp:#x}");
            }
            return Ok(dut.get(&p.rdata)[0]);
        }
    }
    bail!("read of {addr:#x}: no response")
}

/// The preset's Verilog, as `rtl-gen` emits it, for a switch whose generator starts at `seed` and
/// whose connection entries expire after the configuration's timeout.
pub fn verilog(preset: &Preset, cfg: &Config, seed: u64) -> String {
    rtl_gen::outputs::switch::verilog(preset, seed, cfg.switch.conn_timeout_us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::wire::{HorusHeader, PacketType};

    #[test]
    fn field_reads_any_bits_of_the_words() {
        let w = [0x8765_4321, 0xfedc_ba98, 0x0f0f_0f0f, 0xdead_beef];
        let bitwise = |offset: usize, width: usize| {
            (0..width).fold(0u64, |acc, i| {
                let b = offset + i;
                acc | (u64::from((w[b / 32] >> (b % 32)) & 1) << i)
            })
        };
        for offset in 0..128 {
            for width in 0..=64 {
                if offset + width <= 128 {
                    assert_eq!(
                        field(&w, offset, width),
                        bitwise(offset, width),
                        "{offset} {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_difference_is_shown_byte_by_byte_and_field_by_field() {
        let frame = |src_id| OutFrame {
            port: 3,
            frame: crate::traffic::horus_frame(HorusHeader {
                pkt_type: PacketType::NewTask,
                more_packets: false,
                pool_id: 0,
                src_id,
                dst_id: 0,
                qlen: 0,
                seq_num: 0,
            }),
        };
        let d = describe_difference(&frame(1), &frame(2));
        assert!(d.contains("first differing byte 46"), "{d}");
        assert!(d.contains("src_id: 1") && d.contains("src_id: 2"), "{d}");
        let mut runt = frame(1);
        runt.frame.truncate(20);
        assert!(describe_difference(&runt, &frame(1)).contains("not a Horus frame"));
    }
}
