//! The JBSQ leaf's egress, proven (`tests/formal/jbsq_egress.sv`) as the paper egress is
//! (`tests/egress.rs`): it drops nothing it was given, it holds back no beat from a ready output,
//! its output is a well-framed AXI-Stream source, and a released task's frame is read from the
//! frame store as its copy wrote it. Its frames, byte for byte against the model, are
//! `tests/jbsq_egress.rs`'s and the co-simulation's.

use horus_hdl_tools::check::{self, Proof};
use horus_hdl_tools::verilog::emit;
use horus_pipeline::jbsq::egress::{JOB_BITS, JbsqBeatTag, JbsqEgress, JbsqJob, STORE_SLOT_BEATS};
use rust_hdl::prelude::*;

mod common;

/// The frame store's address bits in the proofs: two slots of `STORE_SLOT_BEATS` beats (its
/// size changes no claim: the store is only read and written at the addresses jobs carry).
const SB: usize = 3;

const PROBES: [&str; 12] = [
    "room",
    "out_fifo$count",
    "out_fifo$full",
    "out_fifo$head_valid",
    "job_fifo$count",
    "job_fifo$full",
    "job_fifo$head_valid",
    "tag1$q",
    "tag2$q",
    "tag3$q",
    "tag4$q",
    "beat_r$q",
];

/// The bits `set` sets (to all ones) in a value of `T`'s `N` bits, as a part-select.
fn span<T: Default + Into<Bits<N>>, const N: usize>(set: impl Fn(&mut T)) -> String {
    let mut x = T::default();
    set(&mut x);
    let bits: Bits<N> = x.into();
    let on: Vec<usize> = (0..N).filter(|&i| bits.get_bit(i)).collect();
    let (lo, hi) = (on[0], *on.last().expect("a bit set"));
    assert_eq!(on.len(), hi - lo + 1, "one contiguous field");
    format!("[{lo} +: {}]", hi - lo + 1)
}

fn job(set: impl Fn(&mut JbsqJob)) -> String {
    span::<JbsqJob, { JbsqJob::BITS }>(set)
}

fn tag(set: impl Fn(&mut JbsqBeatTag)) -> String {
    span::<JbsqBeatTag, { JbsqBeatTag::BITS }>(set)
}

fn verilog() -> String {
    let mut uut = JbsqEgress::<SB>::default();
    uut.connect_all();
    check::with_probes(&emit(&uut), &PROBES)
}

/// The egress (`verilog`) and its harness, without the parts named (`@NAME` to the next
/// `@END...`).
fn files(verilog: &str, without: &[&str]) -> [(&'static str, String); 2] {
    let mut h = include_str!("formal/jbsq_egress.sv").to_string();
    for part in without {
        let a = h.find(&format!("// @{part}")).expect("the part");
        let b = a + h[a..].find("// @END").expect("its end");
        h.replace_range(a..b, "");
    }
    let fields: [(&str, String); 18] = [
        ("J_FWD", job(|j| j.fwd = true)),
        ("J_HOLD", job(|j| j.hold = true)),
        ("J_RELEASE", job(|j| j.release = true)),
        ("J_OWN_LEN", job(|j| j.own.len = 0xfff.into())),
        ("J_OWN_BEATS", job(|j| j.own.beats = 0x3f.into())),
        ("J_OWN_SINGLE", job(|j| j.own.single = true)),
        ("J_OWN_TAIL", job(|j| j.own_tail = 0x3f.into())),
        ("J_REL_LEN", job(|j| j.rel.len = 0xfff.into())),
        ("J_REL_BEATS", job(|j| j.rel.beats = 0x3f.into())),
        ("J_REL_SINGLE", job(|j| j.rel.single = true)),
        ("J_REL_TAIL", job(|j| j.rel_tail = 0x3f.into())),
        ("T_VALID", tag(|t| t.valid = true)),
        ("T_COPY", tag(|t| t.copy = true)),
        ("T_FROM_STORE", tag(|t| t.from_store = true)),
        ("T_STORE_AT", tag(|t| t.store_at = 0xffff.into())),
        ("JOB_SLOTS", (1u32 << JOB_BITS).to_string()),
        ("SB", SB.to_string()),
        ("STORE_SLOT_BEATS", STORE_SLOT_BEATS.to_string()),
    ];
    let mut h = check::harness(&common::with_axis_out(&h), verilog);
    for (name, value) in fields {
        h = h.replace(&format!("@{name}@"), &value);
    }
    // A placeholder is `@NAME@`; a part's marker (`// @FRAMING`) has no closing `@`.
    let unfilled = h.match_indices('@').any(|(i, _)| {
        let name = h[i + 1..]
            .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .next()
            .unwrap_or("");
        !name.is_empty() && h[i + 1 + name.len()..].starts_with('@')
    });
    assert!(!unfilled, "a field of the harness not filled in");
    [("top.v", verilog.to_string()), ("harness.sv", h)]
}

/// Deep enough for a job's forward, copy, release and signal, stalled, to leave whole.
const BOUNDED_DEPTH: u32 = 8;
/// The induction of never-drop closes at this depth.
const DROP_DEPTH: u32 = 3;
/// The readiness history spans 8 cycles; the induction closes over 10.
const LATENCY_DEPTH: u32 = 10;

fn bounded(name: &str, [a, b]: &[(&'static str, String); 2]) -> Proof {
    check::prove(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", BOUNDED_DEPTH).unwrap()
}

fn inductive(name: &str, [a, b]: &[(&'static str, String); 2], depth: u32) -> Proof {
    check::prove_inductive(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", depth).unwrap()
}

fn refute(name: &str, [a, b]: &[(&'static str, String); 2], depth: u32) -> u32 {
    check::refute(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", depth).unwrap()
}

/// `v` with `from` (found once) replaced by `to`.
fn mutate(v: &str, from: &str, to: &str) -> String {
    assert_eq!(v.matches(from).count(), 1, "the mutation site: {from}");
    v.replace(from, to)
}

/// At every depth (k-induction): neither FIFO of the egress is ever pushed while full, for
/// every sequence of jobs and back-pressure within the admission rule.
#[test]
fn the_jbsq_egress_is_proven_to_drop_nothing() {
    let f = files(&verilog(), &["FRAMING", "STORE", "LATENCY"]);
    assert_eq!(
        inductive("jbsq_egress_drop", &f, DROP_DEPTH),
        Proof::Proven { depth: DROP_DEPTH }
    );
}

/// The never-drop proof fails on an admission margin of one less (an emitter that issues a beat
/// while the output FIFO holds 12): the induction breaks on the bound it rests on, the output
/// FIFO's entries and the beats in flight within its 16. (`tests/egress.rs` refutes the same
/// mutant of the paper egress from reset: the overflow, once four beats are in the pipeline
/// and the output is stalled. A trace from reset through the JBSQ egress's wider job FIFO takes
/// the solver two minutes.)
#[test]
fn the_jbsq_never_drop_proof_fails_with_a_margin_of_one_less() {
    let v = mutate(
        &verilog(),
        "localparam  out_room = 5'b1011;",
        "localparam  out_room = 5'b1100;",
    );
    let f = files(&v, &["FRAMING", "STORE", "LATENCY"]);
    let Proof::NotInductive { report, .. } = inductive("jbsq_egress_margin", &f, DROP_DEPTH) else {
        panic!("the mutant is not caught");
    };
    let line = check::failed_line(&report).unwrap_or_else(|| panic!("no failing line in {report}"));
    let text = f[1].1.lines().nth(line - 1).expect("the line");
    assert!(
        text.contains("in_flight") || text.contains("!overflow"),
        "another assertion fails: {text}\n{report}"
    );
    eprintln!(
        "a margin of one less: fails at harness.sv:{line}: {}",
        text.trim()
    );
}

/// At every depth: once the output has been ready for 8 cycles, the emitter is never held back
/// for the output FIFO's room.
#[test]
fn the_jbsq_egress_is_proven_never_to_hold_a_ready_output() {
    let f = files(&verilog(), &["FRAMING", "STORE"]);
    assert_eq!(
        inductive("jbsq_egress_latency", &f, LATENCY_DEPTH),
        Proof::Proven {
            depth: LATENCY_DEPTH
        }
    );
}

/// The bounded wait fails on an emitter that waits for an empty output FIFO before each beat.
#[test]
fn the_jbsq_bounded_wait_fails_when_the_emitter_waits_for_an_empty_output() {
    let v = mutate(
        &verilog(),
        "room = out_fifo$count <= out_room;",
        "room = out_fifo$count == 5'd0;",
    );
    let f = files(&v, &["FRAMING", "STORE", "INVARIANTS"]);
    let step = refute("jbsq_egress_stall", &f, LATENCY_DEPTH + 4);
    eprintln!("an emitter waiting for an empty output stalls it at step {step}");
}

/// Bounded: for every sequence of up to `BOUNDED_DEPTH` cycles, the output is a well-framed
/// AXI-Stream source, and a released beat is read as its copy wrote it.
#[test]
fn the_jbsq_egress_output_is_proven_well_framed_and_releases_what_was_copied() {
    let f = files(&verilog(), &["LATENCY"]);
    assert_eq!(
        bounded("jbsq_egress_framing", &f),
        Proof::Holds {
            depth: BOUNDED_DEPTH
        }
    );
}

/// The framing claims fail on an emitter that marks a frame's last beat one beat late.
#[test]
fn the_jbsq_framing_proof_fails_when_the_last_beat_comes_late() {
    let v = verilog();
    let from = "last_r$d = beat$q + two6 ==";
    let v = mutate(&v, from, "last_r$d = beat$q + one6 ==");
    let f = files(&v, &["STORE", "LATENCY", "INVARIANTS"]);
    let step = refute("jbsq_egress_last", &f, BOUNDED_DEPTH);
    eprintln!("last beat one late: fails at step {step}");
}

/// The store claim fails on a release that does not wait for a copy's write: it reads the beat
/// in the clock the copy writes it and gets the old data (the hazard the co-simulation found).
#[test]
fn the_store_claim_fails_when_a_release_reads_beside_a_copys_write() {
    let v = verilog();
    let from = "& ~(in_rel & tag1$q[";
    let at = v.find(from).expect("the release's wait");
    let end = at + v[at..].find(");").expect("its end") + 1;
    let v = format!("{}{}", &v[..at], &v[end..]);
    let f = files(&v, &["FRAMING", "LATENCY", "INVARIANTS"]);
    let step = refute("jbsq_egress_store", &f, BOUNDED_DEPTH);
    eprintln!("a release beside a copy's write: fails at step {step}");
}
