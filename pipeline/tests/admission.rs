//! The switch's admission rule (`switch::JOB_ROOM`), proven in two parts: the scheduler core keeps
//! a contract (`tests/formal/core_contract.sv`: it counts its passes, one enters at a time, only a
//! first pass comes back as a second pass), and the switch, with its core replaced by that
//! contract (`tests/formal/core_model.sv`), hands the egress a pass only while the job FIFO has
//! room for its job (`tests/formal/admission.sv`), which is what the egress's never-drop proof
//! assumes (`egress.rs`). Both by k-induction, for the leaf and the spine.

use horus_hdl_tools::check::{self, Proof};
use horus_hdl_tools::verilog::emit;
use horus_model::config::Role;
use horus_pipeline::core::{CORE_LATENCY, HorusCore};
use horus_pipeline::egress::JOB_SLOTS;
use horus_pipeline::phv::Phv;
use horus_pipeline::readback::RB_BITS;
use horus_pipeline::switch::{HorusSwitch, JOB_ROOM};
use rust_hdl::prelude::*;

mod common;
mod contract;
use common::{phv_any, phv_offset};
use contract::{Admission, Contract, DEPTH, Flags, prove};

const P: usize = 3;
const N: usize = 6;
const C: usize = 4;

use common::{PACKET, SECOND};
/// A control pass's operations.
const CONTROL: [fn(&mut Phv); 5] = common::CONTROL_OPS;
/// The stages, in the order of the stage plan.
const STAGES: [&str; 14] = [
    "pool_cfg",
    "node",
    "idle_ctl",
    "idle_list",
    "idle_index",
    "members1",
    "members2",
    "load1",
    "load2",
    "drift1",
    "drift2",
    "pool_avg",
    "conn",
    "node_addr",
];
/// The core's signals the contract's invariant reads, besides each stage's output pass.
const CORE_PROBES: [&str; 7] = [
    "entered$q",
    "again$q",
    "occupied$q",
    "ctl_busy$q",
    "pool_avg.holding",
    "pool_avg.out$q",
    "pool_avg.hold$q",
];

/// The bits of the descriptor that `flags` set.
fn bits(flags: &[fn(&mut Phv)]) -> Vec<usize> {
    flags.iter().map(|&f| phv_offset(f)).collect()
}

/// The core, with its pass registers as outputs, and the contract's harness.
fn core_files(role: Role, verilog: Option<&str>) -> [(&'static str, String); 2] {
    let mut probes: Vec<String> = CORE_PROBES.iter().map(|s| s.to_string()).collect();
    probes.push("pool_avg.held$q".into());
    probes.extend(STAGES.iter().map(|s| format!("{s}$port$down$pass")));
    let probes: Vec<&str> = probes.iter().map(String::as_str).collect();
    let v = match verilog {
        Some(v) => v.to_string(),
        None => core_verilog(role),
    };
    let v = check::with_probes(&v, &probes);
    let flags = Flags {
        live: phv_offset(|p| p.live = true),
        second: bits(&SECOND),
        packet: bits(&PACKET),
        control: bits(&CONTROL),
        rescale: [
            phv_offset(|p| p.is_ctl_add = true),
            phv_offset(|p| p.is_ctl_remove = true),
        ],
    };
    // A second pass never carries a first pass's kind.
    let clash = |r: &str| {
        format!(
            "({} && ({} || {}))",
            phv_any(r, &SECOND),
            phv_any(r, &PACKET),
            phv_any(r, &CONTROL)
        )
    };
    let c = Contract {
        flags: &flags,
        // The pass registers: behind the pass mux, then each stage's output.
        regs: std::iter::once("probe_entered_q".to_string())
            .chain(STAGES.iter().map(|s| format!("probe_{s}_port_down_pass")))
            .collect(),
        held: "probe_pool_avg_out_q",
        holding: "probe_pool_avg_holding",
        clash: &clash,
        ctl_bad: format!(
            "{} | {} | ctl[{}] | {} != 4'd1",
            phv_any("ctl", &SECOND),
            phv_any("ctl", &PACKET),
            phv_offset(|p| p.resubmit = true),
            contract::count("ctl", &flags.control)
        ),
        hold_invariant: "assert (probe_pool_avg_held_q == (probe_pool_avg_hold_q != 3'd0));".into(),
        // No second pass comes back again.
        comes_back: "1'b0".into(),
        comes_back_empty: String::new(),
        core_latency: CORE_LATENCY,
    };
    let h = contract::contract_harness(&v, &c);
    [("top.v", v), ("harness.sv", h)]
}

fn core_verilog(role: Role) -> String {
    let mut uut = HorusCore::<P, N, C>::new(role, 0x5eed, 60);
    uut.connect_all();
    emit(&uut)
}

/// The switch with its core's module body replaced by the contract's model, and the admission
/// harness; `mutate` edits the switch's Verilog first.
fn switch_files(role: Role, mutate: impl Fn(String) -> String) -> [(&'static str, String); 2] {
    let mut uut = HorusSwitch::<P, N, C>::new(role, 0x5eed, 60);
    uut.connect_all();
    let free_decls = format!(
        "(* anyseq *) reg [{}:0] any_rb;\n    (* anyseq *) reg any_rb_valid;",
        RB_BITS - 1
    );
    contract::admission_files(
        &mutate(emit(&uut)),
        &Admission {
            phv_bits: Phv::BITS,
            free_decls: &free_decls,
            free_assigns: "readback = any_rb;\n        readback_valid = any_rb_valid;",
            // No second pass comes back.
            again_rule: "if (again) assume (leave && !leave_second);",
            core_latency: CORE_LATENCY,
            job_slots: JOB_SLOTS,
            job_room: JOB_ROOM,
        },
    )
}

/// The core keeps its contract, for every input sequence, at every depth.
#[test]
fn the_core_is_proven_to_count_its_passes_and_resubmit_each_once() {
    for role in [Role::Leaf, Role::Spine] {
        assert_eq!(
            prove(&format!("core_contract_{role:?}"), &core_files(role, None)),
            Proof::Proven { depth: DEPTH },
            "{role:?}"
        );
    }
}

/// A core whose packet input ignores the registered resubmit decision lets a packet in beside a
/// second pass: the contract fails, from reset, when the first task comes back (bounded check of
/// `MUTANT_DEPTH` cycles: a pass takes `CORE_LATENCY` to leave).
#[test]
fn the_core_contract_fails_when_a_packet_enters_beside_a_second_pass() {
    const MUTANT_DEPTH: u32 = CORE_LATENCY as u32 + 5;
    let v = core_verilog(Role::Leaf);
    let from = "pkt_ready = ~again$q & ~ctl_valid & ~ctl_busy$q;";
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = core_files(
        Role::Leaf,
        Some(&v.replace(from, "pkt_ready = ~ctl_valid & ~ctl_busy$q;")),
    );
    let step = check::refute(
        "core_contract_mutant",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        MUTANT_DEPTH,
    )
    .unwrap();
    eprintln!("a packet beside a second pass: fails at step {step}");
}

/// The switch admits a pass only while the egress can queue every job it may make, for every
/// input sequence, at every depth.
#[test]
fn the_switch_is_proven_to_admit_only_what_the_egress_can_queue() {
    for role in [Role::Leaf, Role::Spine] {
        assert_eq!(
            prove(&format!("admission_{role:?}"), &switch_files(role, |v| v)),
            Proof::Proven { depth: DEPTH },
            "{role:?}"
        );
    }
}

/// A switch that lets control passes in without room (the admission gates only packets) breaks
/// the proof: its induction fails on the bound of the jobs queued and promised, not on the
/// admission register's own invariant. (Not refuted from reset: filling the job FIFO takes more
/// than `JOB_ROOM` cycles of admissions, beyond a bounded check here.)
#[test]
fn the_admission_proof_fails_when_control_passes_skip_the_room() {
    let from = "core$ctl_valid = ctl_valid & room_r$q;";
    let files = switch_files(Role::Leaf, |v| {
        assert_eq!(v.matches(from).count(), 1, "the mutation site");
        v.replace(from, "core$ctl_valid = ctl_valid;")
    });
    let line = |text: &str| {
        1 + files[1]
            .1
            .lines()
            .position(|l| l.contains(text))
            .expect("the line")
    };
    let bound = line("assert (jobs + passes + firsts <= JOB_SLOTS - 1);");
    let room = line("if (probe_room_r_q) assert");
    // Yosys places an assertion from the end of the statement before it to its own end:
    // `harness.sv:A.B-L.C` for one ending on line L.
    let fails = |report: &str, line: usize| {
        report
            .lines()
            .filter(|l| l.contains("Assert failed in harness"))
            .any(|l| l.contains(&format!("-{line}.")))
    };
    match prove("admission_mutant", &files) {
        Proof::NotInductive { report, .. } => {
            assert!(fails(&report, bound), "the bound fails:\n{report}");
            assert!(!fails(&report, room), "only the bound fails:\n{report}");
        }
        p => panic!("the mutant's proof does not fail as expected: {p:?}"),
    }
}
