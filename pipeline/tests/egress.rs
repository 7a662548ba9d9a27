//! The egress, proven (`tests/formal/egress.sv`): it drops nothing it was given, it holds back no
//! beat from a ready output, and its output is a well-framed AXI-Stream source. Its frames and signals, beat by beat, are checked against the
//! model in the switch's and the co-simulation's tests.

use horus_hdl_tools::check::{self, Proof};
use horus_model::config::Role;
use horus_pipeline::egress::{Egress, EgressJob, JOB_SLOTS};
use horus_pipeline::phv::Phv;
use rust_hdl::prelude::*;

mod common;
use common::{phv_any, phv_offset};

/// A control pass.
const CONTROL: [fn(&mut Phv); 6] = [
    |p| p.is_ctl_pool = true,
    |p| p.is_ctl_params = true,
    |p| p.is_ctl_add = true,
    |p| p.is_ctl_remove = true,
    |p| p.is_ctl_remove2 = true,
    |p| p.is_ctl_read = true,
];

/// The flags that make the egress forward a pass's frame (`Egress`'s `fwd` and `plain`).
const FORWARDING: [fn(&mut Phv); 5] = [
    |p| p.fwd = true,
    |p| p.is_pass_through = true,
    |p| p.is_to_control = true,
    |p| p.is_reply = true,
    |p| p.is_reply_idle = true,
];

const PROBES: [&str; 20] = [
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
    "beat$q",
    "phase$q",
    "last_r$q",
    "head",
    "job",
    "done",
    "job_fifo$push",
    "job_fifo.wr_ptr$q",
    "job_fifo.rd_ptr$q",
];

/// The bit offset of the field `set` sets in a job's bits.
fn job_offset(set: impl Fn(&mut EgressJob)) -> usize {
    let mut j = EgressJob::default();
    set(&mut j);
    let bits: Bits<{ EgressJob::BITS }> = j.into();
    (0..EgressJob::BITS)
        .find(|&i| bits.get_bit(i))
        .expect("a bit set")
}

fn verilog(role: Role) -> String {
    let mut uut = Egress::new(role);
    uut.connect_all();
    check::with_probes(&horus_hdl_tools::verilog::emit(&uut), &PROBES)
}

/// The egress and its harness, without the parts named (`@NAME` to the next `@END...`).
fn files(verilog: &str, without: &[&str]) -> [(&'static str, String); 2] {
    let mut h = include_str!("formal/egress.sv").to_string();
    for part in without {
        let a = h.find(&format!("// @{part}")).expect("the part");
        let b = a + h[a..].find("// @END").expect("its end");
        h.replace_range(a..b, "");
    }
    let h = check::harness(&common::with_axis_out(&h), verilog)
        .replace("@LEN@", &phv_offset(|p| p.len = 0xffff.into()).to_string())
        .replace("@CONTROL@", &phv_any("pass", &CONTROL))
        .replace("@FORWARDING@", &phv_any("pass", &FORWARDING))
        .replace("@JOB_SLOTS@", &JOB_SLOTS.to_string())
        .replace(
            "@J_BEATS@",
            &job_offset(|j| j.beats = 0x3f.into()).to_string(),
        )
        .replace("@J_FWD@", &job_offset(|j| j.fwd = true).to_string())
        .replace("@J_SIG@", &job_offset(|j| j.sig = true).to_string())
        .replace("@J_SINGLE@", &job_offset(|j| j.single = true).to_string());
    [("top.v", verilog.to_string()), ("harness.sv", h)]
}

/// Deep enough for frames of several beats, back to back and stalled, to leave whole.
const FRAMING_DEPTH: u32 = 12;
/// The induction of never-drop closes at this depth.
const DROP_DEPTH: u32 = 3;

/// Bounded: for every sequence of up to `FRAMING_DEPTH` cycles, the output is a well-framed
/// AXI-Stream source (stable while stalled; keep contiguous; `tlast` exactly at the length's
/// last beat; the length on every beat) and nothing overflows.
#[test]
fn the_egress_output_is_proven_well_framed() {
    let [a, b] = files(&verilog(Role::Leaf), &["LATENCY", "DELIVERY", "STEPS"]);
    let p = check::prove(
        "egress_framing",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        FRAMING_DEPTH,
    )
    .unwrap();
    assert_eq!(
        p,
        Proof::Holds {
            depth: FRAMING_DEPTH
        }
    );
}

/// At every depth (k-induction): neither FIFO of the egress is ever pushed while full, for
/// every sequence of passes and back-pressure within the admission rule.
#[test]
fn the_egress_is_proven_to_drop_nothing() {
    for role in [Role::Leaf, Role::Spine] {
        let [a, b] = files(&verilog(role), &["FRAMING", "LATENCY", "DELIVERY", "STEPS"]);
        let p = check::prove_inductive(
            &format!("egress_drop_{role:?}"),
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            DROP_DEPTH,
        )
        .unwrap();
        assert_eq!(p, Proof::Proven { depth: DROP_DEPTH }, "{role:?}");
    }
}

/// The never-drop proof fails on an admission margin of one less: an emitter that issues a beat
/// while the output FIFO holds 12 (not 11) overflows it once four beats are in its pipeline and
/// the output is stalled. A trace from the initial state: checked without the framing claims
/// and the induction's invariants, so that `overflow` is what breaks.
#[test]
fn the_never_drop_proof_fails_with_a_margin_of_one_less() {
    let v = verilog(Role::Leaf);
    let (from, to) = (
        "localparam  out_room = 5'b1011;",
        "localparam  out_room = 5'b1100;",
    );
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = files(
        &v.replace(from, to),
        &["FRAMING", "LATENCY", "INVARIANTS", "DELIVERY", "STEPS"],
    );
    let step = check::refute("egress_margin", &[(a.0, &a.1), (b.0, &b.1)], "harness", 24).unwrap();
    eprintln!("a margin of one less overflows at step {step}");
}

/// The wait is bounded, at every depth (k-induction), for the leaf and the spine: once the
/// output has been ready for 8 cycles, the emitter is never held back for the output FIFO's room.
#[test]
fn the_egress_is_proven_never_to_hold_a_ready_output() {
    for role in [Role::Leaf, Role::Spine] {
        let [a, b] = files(&verilog(role), &["FRAMING", "DELIVERY", "STEPS"]);
        let p = check::prove_inductive(
            &format!("egress_latency_{role:?}"),
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            LATENCY_DEPTH,
        )
        .unwrap();
        assert_eq!(
            p,
            Proof::Proven {
                depth: LATENCY_DEPTH
            },
            "{role:?}"
        );
    }
}

/// The readiness history spans 8 cycles; the induction closes over 10.
const LATENCY_DEPTH: u32 = 10;

/// The bounded-wait claim fails on an emitter that waits for an empty output FIFO before each
/// beat (a margin far too large: safe, but it stalls a ready output).
#[test]
fn the_bounded_wait_fails_when_the_emitter_waits_for_an_empty_output() {
    let v = verilog(Role::Leaf);
    let (from, to) = (
        "room = out_fifo$count <= out_room;",
        "room = out_fifo$count == 5'd0;",
    );
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = files(
        &v.replace(from, to),
        &["FRAMING", "INVARIANTS", "DELIVERY", "STEPS"],
    );
    let step = check::refute(
        "egress_stall",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        LATENCY_DEPTH + 4,
    )
    .unwrap();
    eprintln!("an emitter waiting for an empty output stalls it at step {step}");
}

/// The framing claims fail on an emitter whose last beat of a frame keeps one byte too few.
#[test]
fn the_framing_proof_fails_on_a_wrong_last_keep() {
    let v = verilog(Role::Leaf);
    let (from, to) = (
        "else keep = ~({64{1'b1}} << tail);",
        "else keep = ~({64{1'b1}} << (tail - 6'd1));",
    );
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = files(
        &v.replace(from, to),
        &["LATENCY", "INVARIANTS", "DELIVERY", "STEPS"],
    );
    let step = check::refute(
        "egress_keep",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        FRAMING_DEPTH,
    )
    .unwrap();
    eprintln!("a last beat one byte short fails at step {step}");
}

/// The per-job claim's induction closes at this depth.
const DELIVERY_DEPTH: u32 = 3;

/// Per job, for every sequence of passes and back-pressure, at every depth: a job at the head of
/// the job FIFO leaves it after its own work, one step per cycle in which the emitter has room
/// (its frame's beats, then its signal's), and jobs are queued well-formed.
#[test]
fn the_egress_is_proven_to_retire_each_job_after_its_own_beats() {
    for role in [Role::Leaf, Role::Spine] {
        let [a, b] = files(&verilog(role), &["FRAMING", "LATENCY"]);
        assert_eq!(
            check::prove_inductive(
                &format!("egress_delivery_{role:?}"),
                &[(a.0, &a.1), (b.0, &b.1)],
                "harness",
                DELIVERY_DEPTH
            )
            .unwrap(),
            Proof::Proven {
                depth: DELIVERY_DEPTH
            },
            "{role:?}"
        );
    }
}

/// An emitter that marks a frame's last beat one beat late keeps its head job a cycle too long:
/// the per-job claim fails on a trace from reset.
#[test]
fn the_per_job_claim_fails_when_the_last_beat_comes_late() {
    let v = verilog(Role::Leaf);
    let from = format!(
        "last_r$d = beat$q + two6 == head[{} +: 6];",
        job_offset(|j| j.beats = 0x3f.into())
    );
    let to = from.replace("two6", "one6");
    assert_eq!(v.matches(&from).count(), 1, "the mutation site");
    let [a, b] = files(
        &v.replace(&from, &to),
        &["FRAMING", "LATENCY", "INVARIANTS", "STEPS"],
    );
    let step = check::refute(
        "egress_delivery_mutant",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        10,
    )
    .unwrap();
    eprintln!("last beat one late: fails at step {step}");
}
