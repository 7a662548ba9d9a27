//! The JBSQ leaf's held queue (`queueCtl`'s held-queue logic), proven for every input sequence
//! by k-induction (`tests/formal/jbsq_held_queue.sv`): every held task goes to a free slot of
//! its pool's region and leaves exactly once, the oldest first; a reply releases whenever the
//! pool holds a task; a pool that does not hold (its region about to move, decision 37) holds
//! nothing, and a move of its region starts its queue afresh; the depth never exceeds the region
//! and counts exactly the slots that hold a task (none leaked). The stage's table is its proven contract (`RmwTable`'s forwarding,
//! `tests/table.rs`); a mutant of the stage must fail the proof.

use horus_hdl_tools::check::{self, Proof};
use horus_hdl_tools::verilog::emit;
use horus_model::sched::jbsq::JbsqSizes;
use horus_pipeline::jbsq::entries::QueueCtlEntry;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::queue_ctl::QueueCtlStage;
use rust_hdl::prelude::*;

/// The field `set` sets (to all ones) in the descriptor's bits, as a part-select `[lo +: width]`.
fn span(set: impl Fn(&mut JbsqPhv)) -> String {
    let mut p = JbsqPhv::default();
    set(&mut p);
    let bits: Bits<{ JbsqPhv::BITS }> = p.into();
    let on: Vec<usize> = (0..JbsqPhv::BITS).filter(|&i| bits.get_bit(i)).collect();
    let (lo, hi) = (on[0], *on.last().unwrap());
    assert_eq!(on.len(), hi - lo + 1, "one contiguous field");
    format!("[{lo} +: {}]", hi - lo + 1)
}

/// A descriptor field's name in the harness, and how to set it.
type Field = (&'static str, fn(&mut JbsqPhv));

/// The stage's Verilog for two pools (`mutate` edits it first), its table replaced by the
/// contract, and the harness.
fn files(mutate: impl Fn(String) -> String) -> [(&'static str, String); 2] {
    let mut uut = QueueCtlStage::<1>::new(JbsqSizes::SMALL);
    uut.connect_all();
    let v = mutate(emit(&uut));
    let w = QueueCtlEntry::BITS.to_string();
    let start = v.find("module top$ctl_table(").expect("the table's module");
    let end_mark = "endmodule // top$ctl_table\n";
    let end = start + v[start..].find(end_mark).expect("its end") + end_mark.len();
    let body = &v[start..end];
    let ports_end = body
        .find("    // Constant declarations")
        .expect("the port declarations");
    let contract = include_str!("formal/jbsq_table_contract.sv").replace("@W@", &w);
    let v = format!(
        "{}{}{contract}{}",
        &v[..start],
        &body[..ports_end],
        &v[end..]
    );
    let v = check::with_probes(&v, &["ctl_table.state"]);
    let fields: [Field; 19] = [
        ("live", |p| p.live = true),
        ("is_task", |p| p.is_task = true),
        ("is_reply", |p| p.is_reply = true),
        ("is_return", |p| p.is_return = true),
        ("is_ctl_pool", |p| p.is_ctl_pool = true),
        ("is_ctl_move", |p| p.is_ctl_move = true),
        ("hold_slots", |p| p.hold_slots = 0xffff.into()),
        ("drop", |p| p.drop = true),
        ("more", |p| p.more = true),
        ("token", |p| p.token = true),
        ("held", |p| p.held = true),
        ("release", |p| p.release = true),
        ("buf_full", |p| p.buf_full = true),
        ("pool", |p| p.pool = 0xffff.into()),
        ("len", |p| p.len = 0xffff.into()),
        ("queue_slots", |p| p.queue_slots = 0xffff.into()),
        ("at", |p| p.at = 0xffff.into()),
        ("depth", |p| p.depth = 0xffff.into()),
        ("max_depth", |p| p.max_depth = 0xffff.into()),
    ];
    let mut h = check::harness(include_str!("formal/jbsq_held_queue.sv"), &v)
        .replace("@PHV_MSB@", &(JbsqPhv::BITS - 1).to_string())
        .replace("@W@", &w);
    for (name, set) in fields {
        h = h.replace(&format!("@{name}@"), &span(set));
    }
    let unfilled = h
        .match_indices('@')
        .any(|(i, _)| h[i + 1..].starts_with(|c: char| c.is_ascii_lowercase()));
    assert!(!unfilled, "a field of the harness not filled in");
    [("top.v", v), ("harness.sv", h)]
}

/// The induction closes at this depth.
const DEPTH: u32 = 3;

#[test]
fn every_held_task_leaves_exactly_once_oldest_first_and_no_region_overflows_or_leaks() {
    let [a, b] = files(|v| v);
    let p = check::prove_inductive(
        "jbsq_held_queue",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        DEPTH,
    )
    .unwrap();
    assert_eq!(p, Proof::Proven { depth: DEPTH }, "{p:?}");
}

/// Mutants of the stage, each of which must break the proof from reset (bounded check): a hold
/// that wraps one slot late writes beyond its region; a release that ignores the depth takes a
/// task from an empty queue; a hold that ignores the room overwrites the oldest held task; a
/// room counted against the region's size rather than the hold limit holds while the pool does
/// not (decision 37: its region may be about to move).
#[test]
fn the_held_queue_proof_fails_for_a_late_wrap_a_release_from_empty_and_a_hold_without_room() {
    const MUTANT_DEPTH: u32 = 12;
    let limit = format!(
        "room = e[16 +: 16] < port$up$pass{};",
        span(|p| p.hold_slots = 0xffff.into())
    );
    let size = format!(
        "room = e[16 +: 16] < port$up$pass{};",
        span(|p| p.queue_slots = 0xffff.into())
    );
    let mutants: [(&str, &str, &str); 4] = [
        ("jbsq_mutant_wrap", "if (tail_sum >= ", "if (tail_sum > "),
        ("jbsq_mutant_empty", " & (e[16 +: 16] != zero);", ";"),
        (
            "jbsq_mutant_room",
            "hold = wants_hold & room;",
            "hold = wants_hold;",
        ),
        ("jbsq_mutant_closed", &limit, &size),
    ];
    for (name, from, to) in mutants {
        let [a, b] = files(|v| {
            assert_eq!(v.matches(from).count(), 1, "{name}: the mutation site");
            v.replace(from, to)
        });
        let step =
            check::refute(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", MUTANT_DEPTH).unwrap();
        eprintln!("{name}: fails at step {step}");
    }
}
