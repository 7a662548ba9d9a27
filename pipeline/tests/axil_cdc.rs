//! The AXI4-Lite clock-domain bridge (`board::axil_cdc`): a test bench on the slave clock writes
//! and reads through it into a register file on the master clock that answers after random
//! delays; every request gets exactly one response, reads return what was written, responses
//! pass through, an address beyond the switch's window is refused on the slave side, byte strobes
//! cross with their data. Run with the shell's clocks (2:1, phase-aligned), with unrelated ones, and with
//! one clock for both sides; and through Verilator's lint.

use horus_hdl_tools::{check::verilator_lint, verilog::emit};
use horus_pipeline::board::axil_cdc::AxilCdc;
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// Words of the test register file; an address within the switch's window but beyond them is
/// answered `SLVERR` by the register file itself (a response the bridge must pass through).
const WORDS: usize = 16;
const OKAY: u64 = 0;
const SLVERR: u64 = 2;

/// A register file on the master side: 16 words, ready signals from a 16-bit LFSR, one
/// transaction at a time.
#[derive(LogicBlock, Default)]
struct RegFile {
    clock: Signal<In, Clock>,
    awaddr: Signal<In, Bits<12>>,
    awvalid: Signal<In, Bit>,
    awready: Signal<Out, Bit>,
    wdata: Signal<In, Bits<32>>,
    wstrb: Signal<In, Bits<4>>,
    wvalid: Signal<In, Bit>,
    wready: Signal<Out, Bit>,
    bresp: Signal<Out, Bits<2>>,
    bvalid: Signal<Out, Bit>,
    bready: Signal<In, Bit>,
    araddr: Signal<In, Bits<12>>,
    arvalid: Signal<In, Bit>,
    arready: Signal<Out, Bit>,
    rdata: Signal<Out, Bits<32>>,
    rresp: Signal<Out, Bits<2>>,
    rvalid: Signal<Out, Bit>,
    rready: Signal<In, Bit>,
    /// A write with a `wstrb` other than all ones was seen (sticky).
    partial: Signal<Out, Bit>,
    lfsr: DFF<Bits<16>>,
    regs: DFF<Bits<512>>,
    have_aw: DFF<Bit>,
    have_w: DFF<Bit>,
    aw: DFF<Bits<12>>,
    w: DFF<Bits<32>>,
    strb: DFF<Bits<4>>,
    b_valid: DFF<Bit>,
    b_resp: DFF<Bits<2>>,
    r_valid: DFF<Bit>,
    r_data: DFF<Bits<32>>,
    r_resp: DFF<Bits<2>>,
    saw_partial: DFF<Bit>,
}

impl Logic for RegFile {
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            lfsr,
            regs,
            have_aw,
            have_w,
            aw,
            w,
            strb,
            b_valid,
            b_resp,
            r_valid,
            r_data,
            r_resp,
            saw_partial
        );
        let l = self.lfsr.q.val().index() as u64;
        let l = if l == 0 { 0xace1 } else { l };
        let bit = (l ^ (l >> 2) ^ (l >> 3) ^ (l >> 5)) & 1;
        self.lfsr.d.next = ((l >> 1) | (bit << 15)).into();
        let busy = self.b_valid.q.val() || self.r_valid.q.val();
        self.awready.next = !self.have_aw.q.val() && !busy && l & 1 == 1;
        self.wready.next = !self.have_w.q.val() && !busy && l & 2 == 2;
        self.arready.next = !busy && l & 4 == 4 && !self.have_aw.q.val() && !self.have_w.q.val();
        if self.awvalid.val() && self.awready.val() {
            self.have_aw.d.next = true;
            self.aw.d.next = self.awaddr.val();
        }
        if self.wvalid.val() && self.wready.val() {
            self.have_w.d.next = true;
            self.w.d.next = self.wdata.val();
            self.strb.d.next = self.wstrb.val();
            if self.wstrb.val().index() != 0xf {
                self.saw_partial.d.next = true;
            }
        }
        if self.have_aw.q.val() && self.have_w.q.val() && !busy {
            self.have_aw.d.next = false;
            self.have_w.d.next = false;
            self.b_valid.d.next = true;
            let word = self.aw.q.val().index() / 4;
            if word < WORDS {
                let mut r = self.regs.q.val();
                let old = r.get_bits::<32>(word * 32).index() as u64;
                let new = self.w.q.val().index() as u64;
                let strb = self.strb.q.val().index() as u64;
                let mask = (0..4)
                    .filter(|b| strb >> b & 1 == 1)
                    .map(|b| 0xffu64 << (8 * b))
                    .sum::<u64>();
                r.set_bits::<32>(word * 32, ((old & !mask) | (new & mask)).into());
                self.regs.d.next = r;
                self.b_resp.d.next = OKAY.into();
            } else {
                self.b_resp.d.next = SLVERR.into();
            }
        }
        if self.arvalid.val() && self.arready.val() {
            self.r_valid.d.next = true;
            let word = self.araddr.val().index() / 4;
            if word < WORDS {
                self.r_data.d.next = self.regs.q.val().get_bits::<32>(word * 32);
                self.r_resp.d.next = OKAY.into();
            } else {
                self.r_data.d.next = 0xdead_beefu64.into();
                self.r_resp.d.next = SLVERR.into();
            }
        }
        if self.b_valid.q.val() && self.bready.val() {
            self.b_valid.d.next = false;
        }
        if self.r_valid.q.val() && self.rready.val() {
            self.r_valid.d.next = false;
        }
        self.bvalid.next = self.b_valid.q.val();
        self.bresp.next = self.b_resp.q.val();
        self.rvalid.next = self.r_valid.q.val();
        self.rdata.next = self.r_data.q.val();
        self.rresp.next = self.r_resp.q.val();
        self.partial.next = self.saw_partial.q.val();
    }

    /// What `update` drives (a test block without `hdl_gen`, which would list it).
    fn connect(&mut self) {
        for s in [
            &mut self.awready,
            &mut self.wready,
            &mut self.bvalid,
            &mut self.rvalid,
            &mut self.arready,
            &mut self.partial,
        ] {
            s.connect();
        }
        self.bresp.connect();
        self.rresp.connect();
        self.rdata.connect();
        self.lfsr.d.connect();
        self.regs.d.connect();
        self.aw.d.connect();
        self.w.d.connect();
        self.strb.d.connect();
        self.strb.clock.connect();
        self.r_data.d.connect();
        self.b_resp.d.connect();
        self.r_resp.d.connect();
        for d in [
            &mut self.have_aw,
            &mut self.have_w,
            &mut self.b_valid,
            &mut self.r_valid,
            &mut self.saw_partial,
        ] {
            d.d.connect();
        }
        self.lfsr.clock.connect();
        self.regs.clock.connect();
        self.aw.clock.connect();
        self.w.clock.connect();
        self.r_data.clock.connect();
        self.b_resp.clock.connect();
        self.r_resp.clock.connect();
        for d in [
            &mut self.have_aw,
            &mut self.have_w,
            &mut self.b_valid,
            &mut self.r_valid,
            &mut self.saw_partial,
        ] {
            d.clock.connect();
        }
    }
}

/// The bridge in front of the register file.
#[derive(LogicBlock, Default)]
struct Bench {
    s_clock: Signal<In, Clock>,
    m_clock: Signal<In, Clock>,
    reset: Signal<In, Bit>,
    /* The slave side's inputs (the test bench reads its outputs on `cdc`). */
    s_awaddr: Signal<In, Bits<32>>,
    s_awvalid: Signal<In, Bit>,
    s_wdata: Signal<In, Bits<32>>,
    s_wstrb: Signal<In, Bits<4>>,
    s_wvalid: Signal<In, Bit>,
    s_bready: Signal<In, Bit>,
    s_araddr: Signal<In, Bits<32>>,
    s_arvalid: Signal<In, Bit>,
    s_rready: Signal<In, Bit>,
    cdc: AxilCdc,
    regs: RegFile,
}

impl Logic for Bench {
    #[hdl_gen]
    fn update(&mut self) {
        self.cdc.s_clock.next = self.s_clock.val();
        self.cdc.m_clock.next = self.m_clock.val();
        self.regs.clock.next = self.m_clock.val();
        self.cdc.s_reset.next = self.reset.val();
        self.cdc.m_reset.next = self.reset.val();
        self.cdc.s_axil.awaddr.next = self.s_awaddr.val();
        self.cdc.s_axil.awvalid.next = self.s_awvalid.val();
        self.cdc.s_axil.wdata.next = self.s_wdata.val();
        self.cdc.s_axil.wstrb.next = self.s_wstrb.val();
        self.cdc.s_axil.wvalid.next = self.s_wvalid.val();
        self.cdc.s_axil.bready.next = self.s_bready.val();
        self.cdc.s_axil.araddr.next = self.s_araddr.val();
        self.cdc.s_axil.arvalid.next = self.s_arvalid.val();
        self.cdc.s_axil.rready.next = self.s_rready.val();
        self.regs.awaddr.next = self.cdc.m_axil.awaddr.val();
        self.regs.awvalid.next = self.cdc.m_axil.awvalid.val();
        self.cdc.m_axil.awready.next = self.regs.awready.val();
        self.regs.wdata.next = self.cdc.m_axil.wdata.val();
        self.regs.wstrb.next = self.cdc.m_axil.wstrb.val();
        self.regs.wvalid.next = self.cdc.m_axil.wvalid.val();
        self.cdc.m_axil.wready.next = self.regs.wready.val();
        self.cdc.m_axil.bresp.next = self.regs.bresp.val();
        self.cdc.m_axil.bvalid.next = self.regs.bvalid.val();
        self.regs.bready.next = self.cdc.m_axil.bready.val();
        self.regs.araddr.next = self.cdc.m_axil.araddr.val();
        self.regs.arvalid.next = self.cdc.m_axil.arvalid.val();
        self.cdc.m_axil.arready.next = self.regs.arready.val();
        self.cdc.m_axil.rdata.next = self.regs.rdata.val();
        self.cdc.m_axil.rresp.next = self.regs.rresp.val();
        self.cdc.m_axil.rvalid.next = self.regs.rvalid.val();
        self.regs.rready.next = self.cdc.m_axil.rready.val();
    }
}

/// One request of the test bench, and what it must get back.
#[derive(Clone, Copy, Debug)]
enum Op {
    Write { addr: u64, data: u64, strb: u64 },
    Read { addr: u64 },
}

/// What the bench saw: (request index, response code, read data), in order; and whether a
/// partial write reached the register file.
type Seen = (Vec<(usize, u64, Option<u64>)>, bool);

/// Runs `ops` through the bridge with the slave clock toggling every `s_half` time units and
/// the master clock every `m_half` (`None`: the slave clock for both sides). A write's data
/// comes before its address when the coin says so; `bready` and `rready` are late with
/// `late_pct` percent chance per cycle.
fn run(ops: Vec<Op>, s_half: u64, m_half: Option<u64>, late_pct: u64, seed: u64) -> Seen {
    let seen: Arc<Mutex<Seen>> = Arc::new(Mutex::new((Vec::new(), false)));
    let sink = seen.clone();
    let mut sim = Simulation::new();
    match m_half {
        Some(m) => {
            sim.add_clock(s_half, |x: &mut Box<Bench>| {
                x.s_clock.next = !x.s_clock.val()
            });
            sim.add_clock(m, |x: &mut Box<Bench>| x.m_clock.next = !x.m_clock.val());
        }
        None => sim.add_clock(s_half, |x: &mut Box<Bench>| {
            x.s_clock.next = !x.s_clock.val();
            x.m_clock.next = x.s_clock.val();
        }),
    }
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        let mut rng = seed.max(1);
        let mut draw = move |pct: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % 100 < pct
        };
        x.reset.next = true;
        for _ in 0..4 {
            wait_clock_cycle!(sim, s_clock, x);
        }
        x.reset.next = false;
        for (i, op) in ops.iter().enumerate() {
            // Offer the request: AW and W (in either order, or together), or AR.
            match *op {
                Op::Write { addr, data, strb } => {
                    let w_first = draw(30);
                    let together = !w_first && draw(50);
                    let (mut aw_done, mut w_done) = (false, false);
                    let mut cycles = 0;
                    while !(aw_done && w_done) {
                        x.s_awvalid.next = !aw_done && (!w_first || w_done || together);
                        x.s_awaddr.next = addr.into();
                        x.s_wvalid.next = !w_done && (w_first || aw_done || together);
                        x.s_wdata.next = data.into();
                        x.s_wstrb.next = strb.into();
                        wait_clock_false!(sim, s_clock, x);
                        let aw = x.s_awvalid.val() && x.cdc.s_axil.awready.val();
                        let w = x.s_wvalid.val() && x.cdc.s_axil.wready.val();
                        wait_clock_true!(sim, s_clock, x);
                        aw_done |= aw;
                        w_done |= w;
                        cycles += 1;
                        assert!(cycles < 1000, "request {i} ({op:?}) never taken");
                    }
                    x.s_awvalid.next = false;
                    x.s_wvalid.next = false;
                }
                Op::Read { addr } => {
                    let mut cycles = 0;
                    loop {
                        x.s_arvalid.next = true;
                        x.s_araddr.next = addr.into();
                        wait_clock_false!(sim, s_clock, x);
                        let taken = x.cdc.s_axil.arready.val();
                        wait_clock_true!(sim, s_clock, x);
                        if taken {
                            break;
                        }
                        cycles += 1;
                        assert!(cycles < 1000, "request {i} ({op:?}) never taken");
                    }
                    x.s_arvalid.next = false;
                }
            }
            // Wait for its one response, taken when `bready` / `rready` comes.
            let mut cycles = 0;
            loop {
                let ready = !draw(late_pct);
                x.s_bready.next = ready;
                x.s_rready.next = ready;
                wait_clock_false!(sim, s_clock, x);
                let b = x.cdc.s_axil.bvalid.val();
                let r = x.cdc.s_axil.rvalid.val();
                let resp = (
                    x.cdc.s_axil.bresp.val().index() as u64,
                    x.cdc.s_axil.rresp.val().index() as u64,
                    x.cdc.s_axil.rdata.val().index() as u64,
                );
                wait_clock_true!(sim, s_clock, x);
                assert!(
                    !(b && r),
                    "request {i}: a write and a read response at once"
                );
                let is_write = matches!(op, Op::Write { .. });
                assert!(
                    (!b || is_write) && (!r || !is_write),
                    "request {i} ({op:?}): a response of the other kind"
                );
                if ready && (b || r) {
                    let entry = if b {
                        (i, resp.0, None)
                    } else {
                        (i, resp.1, Some(resp.2))
                    };
                    sink.lock().unwrap().0.push(entry);
                    break;
                }
                cycles += 1;
                assert!(cycles < 1000, "request {i} ({op:?}) never answered");
            }
            x.s_bready.next = false;
            x.s_rready.next = false;
            // No second response.
            for _ in 0..6 {
                wait_clock_false!(sim, s_clock, x);
                assert!(
                    !x.cdc.s_axil.bvalid.val() && !x.cdc.s_axil.rvalid.val(),
                    "request {i} ({op:?}): a second response"
                );
                wait_clock_true!(sim, s_clock, x);
            }
        }
        sink.lock().unwrap().1 = x.regs.partial.val();
        sim.done(x)
    });
    let mut uut = Bench::default();
    uut.connect_all();
    sim.run(Box::new(uut), 10_000_000).unwrap();
    let out = seen.lock().unwrap();
    (out.0.clone(), out.1)
}

/// Random writes and reads: in the register file, in the switch's window beyond it, and beyond
/// the window.
fn ops(seed: u64, n: usize) -> Vec<Op> {
    let mut rng = seed;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rng >> 33
    };
    (0..n)
        .map(|_| {
            let addr = match next() % 10 {
                0 => 0x1000 + (next() % 0x4000) * 4,
                1 => 0x40 + (next() % 0x3f0) * 4,
                _ => (next() % WORDS as u64) * 4,
            };
            if next() % 2 == 0 {
                Op::Write {
                    addr,
                    data: next() & 0xffff_ffff,
                    // Mostly whole words (a shell without strobes), some partial.
                    strb: if next() % 3 == 0 { next() % 16 } else { 0xf },
                }
            } else {
                Op::Read { addr }
            }
        })
        .collect()
}

/// What each request must get: the model is a 16-word memory behind the bridge.
fn expected(ops: &[Op]) -> Vec<(usize, u64, Option<u64>)> {
    let mut mem = [0u64; WORDS];
    ops.iter()
        .enumerate()
        .map(|(i, op)| match *op {
            Op::Write { addr, data, strb } => {
                let ok = addr < (WORDS as u64) * 4;
                if ok {
                    let mask: u64 = (0..4)
                        .filter(|b| strb >> b & 1 == 1)
                        .map(|b| 0xffu64 << (8 * b))
                        .sum();
                    let m = &mut mem[(addr / 4) as usize];
                    *m = (*m & !mask) | (data & mask);
                }
                (i, if ok { OKAY } else { SLVERR }, None)
            }
            Op::Read { addr } if addr >= 0x1000 => (i, SLVERR, Some(0)),
            Op::Read { addr } if addr < (WORDS as u64) * 4 => {
                (i, OKAY, Some(mem[(addr / 4) as usize]))
            }
            Op::Read { .. } => (i, SLVERR, Some(0xdead_beef)),
        })
        .collect()
}

#[test]
fn every_request_gets_its_one_answer_across_the_shells_clocks() {
    // The OpenNIC shell's: the slave side at half the master side's rate, phase-aligned.
    for seed in 1..=3 {
        let ops = ops(seed, 120);
        let (got, partial) = run(ops.clone(), 4, Some(2), 40, seed);
        assert_eq!(got, expected(&ops), "seed {seed}");
        assert!(
            partial,
            "partial writes reached the register file with their strobes"
        );
    }
}

#[test]
fn every_request_gets_its_one_answer_across_unrelated_clocks() {
    for (seed, (s, m)) in [(4u64, (5u64, 3u64)), (5, (3, 7)), (6, (7, 7))] {
        let ops = ops(seed, 80);
        let (got, partial) = run(ops.clone(), s, Some(m), 30, seed);
        assert_eq!(got, expected(&ops), "seed {seed}, half periods {s} and {m}");
        assert!(partial);
    }
}

#[test]
fn one_clock_for_both_sides_works_the_same() {
    let ops = ops(7, 80);
    let (got, _) = run(ops.clone(), 5, None, 30, 7);
    assert_eq!(got, expected(&ops));
}

#[test]
fn the_bridge_is_lint_clean() {
    let mut c = AxilCdc::default();
    c.connect_all();
    let v = emit(&c);
    assert!(
        v.contains("(* ASYNC_REG = \"TRUE\", shreg_extract = \"no\" *)"),
        "the synchronizers' flip-flops are marked ASYNC_REG"
    );
    verilator_lint("axil_cdc", &v).unwrap();
}

/// The bridge and its harness (`tests/formal/axil_cdc.sv`): both sides on one clock, or
/// (`two_clocks`) on the OpenNIC shell's two.
fn cdc_files(verilog: &str, two_clocks: bool) -> [(&'static str, String); 2] {
    let define = if two_clocks {
        "`define TWO_CLOCKS\n"
    } else {
        ""
    };
    [
        ("top.v", verilog.to_string()),
        (
            "harness.sv",
            define.to_string()
                + &include_str!("formal/axil_cdc.sv").replace(
                    "@WINDOW@",
                    &(1u64 << horus_pipeline::axil::AXIL_ADDR_BITS).to_string(),
                ),
        ),
    ]
}

fn cdc_verilog() -> String {
    let mut uut = AxilCdc::default();
    uut.connect_all();
    emit(&uut)
}

/// Two whole transactions, each a round trip through both two-flip-flop synchronizers (the first
/// answered at step 11, the second, taken at step 12, at step 22).
const CDC_DEPTH: u32 = 24;

/// Bounded model checking (yosys-smtbmc, Yices) of the bridge's rules on both of its sides, for
/// every request sequence and every timing of the switch's answers of up to `CDC_DEPTH` cycles.
#[test]
fn the_bridge_is_proven_to_answer_each_request_once_and_pass_it_through() {
    let [a, b] = cdc_files(&cdc_verilog(), false);
    assert_eq!(
        horus_hdl_tools::check::prove(
            "axil_cdc_formal",
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            CDC_DEPTH
        )
        .unwrap(),
        horus_hdl_tools::check::Proof::Holds { depth: CDC_DEPTH }
    );
}

/// The mutants a bridge proof must fail on, and its reach checks: (what, Verilog, harness).
/// Every mutant of `MUTATIONS` (what, the emitted text, its replacement) named in `which`; then
/// the claims that no write, or no read, within the window is ever answered, or fewer than two
/// requests are, which must fail within the proof's depth.
fn refutations(two_clocks: bool, which: &[&str]) -> Vec<(String, String, String)> {
    const MUTATIONS: [(&str, &str, &str); 3] = [
        (
            "dropped bvalid",
            "if (bvalid$q & s_axil$bready) begin",
            "if (bvalid$q) begin",
        ),
        ("no window", "if (outside) begin", "if (1'b0) begin"),
        (
            "dropped awvalid",
            "if (aw_pending$q & m_axil$awready) begin",
            "if (aw_pending$q) begin",
        ),
    ];
    let v = cdc_verilog();
    let h = cdc_files(&v, two_clocks)[1].1.clone();
    let last = "    end\nendmodule";
    assert_eq!(h.matches(last).count(), 1);
    let claim = |c: &str| h.replace(last, &format!("        assert ({c});\n{last}"));
    let mut cases: Vec<(String, String, String)> = MUTATIONS
        .iter()
        .filter(|m| which.contains(&m.0))
        .map(|&(what, from, to)| {
            assert_eq!(v.matches(from).count(), 1, "the mutation site {from}");
            (what.to_string(), v.replace(from, to), h.clone())
        })
        .collect();
    for (what, c) in [
        ("a write answered", "!(s_bvalid && inside)"),
        ("a read answered", "!(s_rvalid && inside)"),
        ("two answered", "answers < 2'd2"),
    ] {
        cases.push((what.to_string(), v.clone(), claim(c)));
    }
    cases
}

/// The bridge's proof fails on mutants (a write response withdrawn before it is taken; a request
/// beyond the window sent to the switch; a master-side address withdrawn before the switch takes
/// it), and its depth reaches what it claims about: with the claims that no write or read within
/// the window is ever answered, or fewer than two requests within the window are, the check
/// fails (two are answered within `CDC_DEPTH` cycles).
#[test]
fn the_bridge_proof_fails_on_mutants_and_reaches_whole_round_trips() {
    let all = ["dropped bvalid", "no window", "dropped awvalid"];
    for (what, verilog, harness) in refutations(false, &all) {
        let step = horus_hdl_tools::check::refute(
            &format!("axil_cdc_mutant_{}", what.replace(' ', "_")),
            &[("top.v", &verilog), ("harness.sv", &harness)],
            "harness",
            CDC_DEPTH,
        )
        .unwrap();
        eprintln!("{what}: fails at step {step}");
    }
}

/// Two whole transactions across the shell's clocks, in global ticks (4 a slave cycle): the first
/// answered at tick 30, the second at tick 66.
const CDC_TICKS: u32 = 72;

/// The bridge's rules with the OpenNIC shell's clocks (the slave side at 125 MHz, the master side
/// at 250 MHz, phase-aligned), for every request sequence and every timing of the switch's
/// answers of up to `CDC_TICKS` ticks.
#[test]
fn the_bridge_is_proven_across_the_shells_two_clocks() {
    let [a, b] = cdc_files(&cdc_verilog(), true);
    assert_eq!(
        horus_hdl_tools::check::prove_clocked(
            "axil_cdc_formal_2clk",
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            CDC_TICKS,
            horus_hdl_tools::check::Clocks::Global,
        )
        .unwrap(),
        horus_hdl_tools::check::Proof::Holds { depth: CDC_TICKS }
    );
}

/// The two-clock proof fails on mutants (a write response withdrawn before it is taken on the
/// slave side; a write address withdrawn before the switch takes it on the master side) and
/// reaches two whole round trips: with the claims that no write or read within the window is
/// ever answered, or fewer than two requests are, it fails.
#[test]
fn the_two_clock_bridge_proof_fails_on_a_mutant_and_reaches_whole_round_trips() {
    for (what, verilog, harness) in refutations(true, &["dropped bvalid", "dropped awvalid"]) {
        let step = horus_hdl_tools::check::refute_clocked(
            &format!("axil_cdc_2clk_mutant_{}", what.replace(' ', "_")),
            &[("top.v", &verilog), ("harness.sv", &harness)],
            "harness",
            CDC_TICKS,
            horus_hdl_tools::check::Clocks::Global,
        )
        .unwrap();
        eprintln!("{what}: fails at tick {step}");
    }
}
