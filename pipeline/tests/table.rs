//! The read-modify-write table: atomic semantics for one pass per clock, back to back on one
//! index, checked cycle by cycle in rust-hdl's simulator against a sequential reference, with the
//! forwarding check made by the table, given by the stage (`RmwTable::given_check`), made on
//! the two terms of a summed index (`RmwTable::sum_index`), or made in cycle 1 on registers
//! (`RmwTable::late_check`, indexed directly or by a sum); and with a read-back's index and
//! check picked by the stage (`RmwTable::picked_read`).

use horus_hdl_tools::check::Proof;
use horus_pipeline::table::RmwTable;
use rust_hdl::prelude::*;

/// Each cycle a pass may present an index, `addr + off`; one cycle later it adds `inc` to the
/// entry it sees. A table that is not summed is driven with `off` zero.
#[derive(LogicBlock, Default)]
struct Bench {
    clock: Signal<In, Clock>,
    valid: Signal<In, Bit>,
    addr: Signal<In, Bits<3>>,
    off: Signal<In, Bits<3>>,
    inc: Signal<In, Bits<16>>,
    /// The pass reads `index` (as a read-back does), not `addr` + `off`.
    indexed: Signal<In, Bit>,
    index: Signal<In, Bits<3>>,
    /// The stage puts a read's index on `rd_addr` and its check on `rd_same` itself
    /// (`picked_read`); otherwise it presents its own index whatever the pass.
    picks: Signal<In, Bit>,
    picked: Signal<Local, Bits<3>>,
    /// What the pass in cycle 1 saw.
    seen: Signal<Out, Bits<16>>,
    store: RmwTable<Bits<16>, 3>,
    s1_valid: DFF<Bit>,
    s1_addr: DFF<Bits<3>>,
    s1_inc: DFF<Bits<16>>,
}

impl Logic for Bench {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s1_valid, s1_addr, s1_inc);
        clock!(self, clock, store);
        self.picked.next = self.addr.val();
        if self.picks.val() & self.indexed.val() {
            self.picked.next = self.index.val();
        }
        self.store.rd_addr.next = self.picked.val();
        self.store.rd_off.next = self.off.val();
        self.store.rd_indexed.next = self.indexed.val();
        self.store.rd_index.next = self.index.val();
        // The check a stage gives (`given_check`), here simply the compare.
        self.store.rd_same.next = (self.picked.val() + self.off.val()) == self.s1_addr.q.val();
        self.s1_valid.d.next = self.valid.val();
        self.s1_addr.d.next = self.addr.val() + self.off.val();
        if self.indexed.val() {
            self.s1_addr.d.next = self.index.val();
        }
        self.s1_inc.d.next = self.inc.val();
        self.seen.next = self.store.rd_data.val();
        self.store.wr_en.next = self.s1_valid.q.val();
        self.store.wr_addr.next = self.s1_addr.q.val();
        self.store.wr_data.next = self.store.rd_data.val() + self.s1_inc.q.val();
    }
}

/// Drives `passes` (None = an idle cycle) and checks, cycle by cycle, that each pass sees the
/// entry exactly as the passes before it left it.
fn check(passes: Vec<Option<(u8, u16)>>) {
    check_with(&Bench::default, false, false, passes.clone());
    check_with(&given, false, false, passes.clone());
    check_with(&picked, false, true, passes.clone());
    check_with(&summed, true, false, passes.clone());
    check_with(&|| late(false), false, false, passes.clone());
    check_with(&|| late(true), true, false, passes);
}

fn picked() -> Bench {
    Bench {
        store: RmwTable::given_check().picked_read(),
        ..Default::default()
    }
}

fn late(summed: bool) -> Bench {
    Bench {
        store: RmwTable::late_check(summed),
        ..Default::default()
    }
}

fn given() -> Bench {
    Bench {
        store: RmwTable::given_check(),
        ..Default::default()
    }
}

fn summed() -> Bench {
    Bench {
        store: RmwTable::sum_index(),
        ..Default::default()
    }
}

/// With `split`, each index is presented as two terms that vary from pass to pass (wrapping
/// round the table's size half of the time), as a base and an offset would. About a third of the
/// passes present their index as a read-back's (`rd_index`), with another index on `rd_addr`.
/// With `picks`, the bench picks a read's index and check itself (`picked_read`).
fn check_with(bench: &dyn Fn() -> Bench, split: bool, picks: bool, passes: Vec<Option<(u8, u16)>>) {
    let n = passes.len();
    let mut uut = bench();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Bench>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Bench>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut reference = [0u16; 8];
        let mut previous: Option<(u8, u16)> = None;
        for p in passes.iter().copied().chain([None]) {
            // Cycle 1 of the previous pass: what it sees, then its write lands at the edge.
            if let Some((a, inc)) = previous {
                let want = reference[usize::from(a)];
                sim_assert_eq!(sim, x.seen.val(), Bits::<16>::from(u64::from(want)), x);
                reference[usize::from(a)] = want.wrapping_add(inc);
            }
            x.valid.next = p.is_some();
            let (a, inc) = p.unwrap_or((0, 0));
            let off = if split { (inc ^ inc >> 3) as u8 & 7 } else { 0 };
            let indexed = inc % 3 == 1;
            // A read-back's pass: the stage's index points elsewhere.
            let stage_index = if indexed { a ^ 5 } else { a };
            x.addr.next = u64::from(stage_index.wrapping_sub(off) & 7).into();
            x.off.next = u64::from(off).into();
            x.indexed.next = indexed;
            x.picks.next = picks;
            x.index.next = u64::from(a).into();
            x.inc.next = u64::from(inc).into();
            previous = p;
            wait_clock_cycle!(sim, clock, x);
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 20 * (n as u64 + 10)).unwrap();
}

#[test]
fn back_to_back_passes_on_one_index_each_see_the_previous_write() {
    check((0..20).map(|i| Some((5, i + 1))).collect());
}

#[test]
fn a_pass_two_cycles_behind_reads_the_landed_write() {
    check(vec![
        Some((2, 7)),
        None,
        Some((2, 1)),
        Some((3, 4)),
        Some((2, 1)),
        None,
        None,
        Some((2, 9)),
    ]);
}

#[test]
fn random_hot_index_traffic_is_atomic() {
    // A fixed xorshift stream: mostly indices 0 and 1 (hot), some idle cycles.
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let passes = (0..1500)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = s as u32;
            let index = if r % 3 == 0 {
                (r >> 8) as u8 & 7
            } else {
                (r >> 8) as u8 & 1
            };
            (r % 5 != 0).then_some((index, (r >> 16) as u16))
        })
        .collect();
    check(passes);
}

#[test]
fn table_verilog_is_lint_clean_and_synthesizes() {
    for (name, mut uut) in [
        ("rmw_table_bench", Bench::default()),
        ("rmw_table_given", given()),
        ("rmw_table_summed", summed()),
        ("rmw_table_late", late(false)),
        ("rmw_table_late_summed", late(true)),
    ] {
        uut.connect_all();
        let v = generate_verilog(&uut);
        assert!(
            v.contains("fwd_hit"),
            "the forwarding register is in the emitted Verilog"
        );
        horus_hdl_tools::check::verilator_lint(name, &v).unwrap();
        let r = horus_hdl_tools::check::yosys_synth(name, &v).unwrap();
        assert!(r.ffs > 0 && r.luts > 0, "{r}");
    }
}

/// The harness of `tests/formal/rmw_table.sv` for a table of this kind.
fn harness(summed: bool, picks: bool) -> String {
    include_str!("formal/rmw_table.sv")
        .replace(
            "parameter SUMMED = 0",
            &format!("parameter SUMMED = {}", u8::from(summed)),
        )
        .replace(
            "parameter PICKS = 0",
            &format!("parameter PICKS = {}", u8::from(picks)),
        )
}

/// How many cycles from the initial state the proofs cover: back to back, two behind and a
/// read-back between two passes on one index all happen within 4; 8 leaves room for their
/// mixtures.
const PROOF_DEPTH: u32 = 8;

fn prove(name: &str, verilog: &str, summed: bool, picks: bool) -> Proof {
    horus_hdl_tools::check::prove(
        name,
        &[("top.v", verilog), ("harness.sv", &harness(summed, picks))],
        "harness",
        PROOF_DEPTH,
    )
    .unwrap()
}

/// Bounded model checking (yosys-smtbmc, Yices) of every kind of table in its bench: for every
/// input sequence of up to `PROOF_DEPTH` cycles, a pass sees the value the last earlier pass on
/// its index wrote (`tests/formal/rmw_table.sv`).
#[test]
fn forwarding_is_proven_for_every_input_sequence() {
    for (name, mut uut, summed, picks) in [
        ("rmw_formal_bench", Bench::default(), false, false),
        ("rmw_formal_given", given(), false, false),
        ("rmw_formal_picked", picked(), false, true),
        ("rmw_formal_summed", summed(), true, false),
        ("rmw_formal_late", late(false), false, false),
        ("rmw_formal_late_summed", late(true), true, false),
    ] {
        uut.connect_all();
        let v = horus_hdl_tools::verilog::emit(&uut);
        assert_eq!(
            prove(name, &v, summed, picks),
            Proof::Holds { depth: PROOF_DEPTH },
            "{name}"
        );
    }
}

/// The proof fails on a table whose forwarding is disabled (the entry always from the block
/// RAM): a pass right behind another on its index then sees the value before the write.
#[test]
fn the_forwarding_proof_fails_without_forwarding() {
    for (name, mut uut, summed) in [
        ("rmw_mutant_bench", Bench::default(), false),
        ("rmw_mutant_late_summed", late(true), true),
    ] {
        uut.connect_all();
        let v = horus_hdl_tools::verilog::emit(&uut);
        assert_eq!(v.matches("if (hit) begin").count(), 1);
        let mutant = v.replace("if (hit) begin", "if (1'b0) begin");
        match prove(name, &mutant, summed, false) {
            Proof::Fails { step, .. } => {
                assert!((2..=3).contains(&step), "{name}: fails at step {step}")
            }
            p => panic!("{name}: the proof holds without forwarding: {p:?}"),
        }
    }
}
