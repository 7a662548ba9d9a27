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
use common::{phv_any, phv_count, phv_offset};

const P: usize = 3;
const N: usize = 6;
const C: usize = 4;

/// A second pass's flags (the pass mux sets one, from the first pass's kind).
const SECOND: [fn(&mut Phv); 4] = [
    |p| p.is_sched2 = true,
    |p| p.is_add_commit = true,
    |p| p.is_remove_finish = true,
    |p| p.is_ctl_remove2 = true,
];
/// A packet's kinds that may ask for a second pass.
const PACKET: [fn(&mut Phv); 4] = [
    |p| p.is_task = true,
    |p| p.is_reply_idle = true,
    |p| p.is_idle_add = true,
    |p| p.is_idle_remove = true,
];
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
    // The pass registers: behind the pass mux, then each stage's output.
    let regs: Vec<String> = std::iter::once("probe_entered_q".to_string())
        .chain(STAGES.iter().map(|s| format!("probe_{s}_port_down_pass")))
        .collect();
    let live = phv_offset(|p| p.live = true);
    let kinds: Vec<fn(&mut Phv)> = CONTROL.iter().chain(PACKET.iter()).copied().collect();
    let sum = |term: &dyn Fn(&str) -> String| {
        regs.iter()
            .map(|r| format!("{{7'd0, {}}}", term(r)))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let any = |term: &dyn Fn(&str) -> String| {
        regs.iter()
            .map(|r| term(r))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let held = "probe_pool_avg_out_q";
    let decls = [
        "wire holding = probe_pool_avg_holding;".to_string(),
        format!(
            "wire [7:0] live_sum = {};",
            sum(&|r| format!("{r}[{live}]"))
        ),
        format!(
            "wire [7:0] second_sum = {};",
            sum(&|r| format!("({r}[{live}] && {})", phv_any(r, &SECOND)))
        ),
        format!(
            "wire [7:0] ctl_sum = {};",
            sum(&|r| format!("({r}[{live}] && {})", phv_any(r, &CONTROL)))
        ),
        format!(
            "wire clash = {};",
            any(&|r| format!(
                "({} && ({} || {}))",
                phv_any(r, &SECOND),
                phv_any(r, &PACKET),
                phv_any(r, &CONTROL)
            ))
        ),
        format!(
            "wire multi = {};",
            any(&|r| format!("({} > 4'd1)", phv_count(r, &kinds)))
        ),
        format!(
            "wire bubble_flags = {};",
            any(&|r| format!("(!{r}[{live}] && {})", phv_any(r, &CONTROL)))
        ),
        format!(
            "wire held_ok = {held}[{live}] && {held}[{}] | {held}[{}] && {} == 4'd1 && !{};",
            phv_offset(|p| p.is_ctl_add = true),
            phv_offset(|p| p.is_ctl_remove = true),
            phv_count(held, &kinds),
            phv_any(held, &SECOND)
        ),
    ];
    let h = check::harness(include_str!("formal/core_contract.sv"), &v)
        .replace("@REGS@", &decls.map(|d| format!("    {d}\n")).concat())
        .replace("@SECOND_out@", &phv_any("out", &SECOND))
        .replace("@SECOND_trace@", &phv_any("trace", &SECOND))
        .replace(
            "@CTL_BAD@",
            &format!(
                "{} | {} | ctl[{}] | {} != 4'd1",
                phv_any("ctl", &SECOND),
                phv_any("ctl", &PACKET),
                phv_offset(|p| p.resubmit = true),
                phv_count("ctl", &CONTROL)
            ),
        )
        .replace(
            "@HOLD_INVARIANT@",
            "assert (probe_pool_avg_held_q == (probe_pool_avg_hold_q != 3'd0));",
        )
        // No second pass comes back again.
        .replace("@COMES_BACK@", "1'b0")
        .replace("@COMES_BACK_EMPTY@", "")
        .replace("@CORE_LATENCY@", &CORE_LATENCY.to_string());
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
    let v = mutate(emit(&uut));
    let start = v.find("module top$core(").expect("the core's module");
    let end = start + v[start..].find("endmodule // top$core\n").expect("its end");
    let body = &v[start..end];
    // The module's header and port declarations stay; the rest is the model.
    let ports_end = body
        .find("\n    // ")
        .and_then(|a| body[a + 1..].find("\n    // ").map(|b| a + 1 + b + 1))
        .expect("the port declarations");
    let model = include_str!("formal/core_model.sv")
        .replace("@CORE_LATENCY@", &CORE_LATENCY.to_string())
        .replace("@PHV_MSB@", &(Phv::BITS - 1).to_string())
        .replace(
            "@FREE_DECLS@",
            &format!(
                "(* anyseq *) reg [{}:0] any_rb;\n    (* anyseq *) reg any_rb_valid;",
                RB_BITS - 1
            ),
        )
        .replace(
            "@FREE_ASSIGNS@",
            "readback = any_rb;\n        readback_valid = any_rb_valid;",
        )
        // No second pass comes back.
        .replace(
            "@AGAIN_RULE@",
            "if (again) assume (leave && !leave_second);",
        );
    let v = format!("{}{}{model}{}", &v[..start], &body[..ports_end], &v[end..]);
    let v = check::with_probes(
        &v,
        &[
            "egress$jobs",
            "room_r$q",
            "core.n_first",
            "core.n_second",
            "egress.job_fifo$full",
            "egress.job_fifo$head_valid",
        ],
    );
    let h = check::harness(include_str!("formal/admission.sv"), &v)
        .replace("@JOB_SLOTS@", &JOB_SLOTS.to_string())
        .replace("@JOB_ROOM@", &JOB_ROOM.to_string())
        .replace("@CORE_LATENCY@", &CORE_LATENCY.to_string());
    [("top.v", v), ("harness.sv", h)]
}

/// The inductions close at this depth.
const DEPTH: u32 = 2;

fn prove(name: &str, files: &[(&'static str, String); 2]) -> Proof {
    let [a, b] = files;
    check::prove_inductive(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", DEPTH).unwrap()
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
