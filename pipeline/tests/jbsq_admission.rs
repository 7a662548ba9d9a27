//! The JBSQ leaf's admission rule (`jbsq::switch::JOB_ROOM`), proven as the paper switch's is
//! (`tests/admission.rs`), in two parts by k-induction: the JBSQ core keeps the scheduler core's
//! contract (`tests/formal/core_contract.sv`: it counts its passes, one enters at a time, and a
//! pass comes back only as it leaves: a first pass, or a retry that pops another removed
//! worker's place), and the JBSQ datapath, with its core replaced by that contract
//! (`tests/formal/core_model.sv`), hands the egress a job only while the job FIFO has room for it
//! (`tests/formal/admission.sv`): the egress never has a job to drop. Each part fails on a
//! mutant.
//!
//! The contract model lets a retry come back again only as one that makes no job (it is not
//! forwarded, holds and releases nothing, passes nothing through and sends no message: decision
//! 35, the model's `a_retry_sends_no_message_and_the_pools_next_pass_sends_what_it_changed`):
//! the core's part proves that of the JBSQ core, its load report and its address read included,
//! and a pool stage that counts such a retry as a task fails it. The contract assumes, as the
//! paper core's does, a control pass with exactly one operation flag and none of a packet's or
//! a second pass's: the JBSQ port's staging, proven in `tests/jbsq_axil_formal.rs`.

use horus_hdl_tools::check::{self, Proof};
use horus_hdl_tools::verilog::emit;
use horus_model::sched::jbsq::JbsqSizes;
use horus_pipeline::jbsq::core::{CORE_LATENCY, JbsqCore};
use horus_pipeline::jbsq::counters::JbsqCounts;
use horus_pipeline::jbsq::egress::JOB_BITS;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::switch::{JOB_ROOM, JbsqSwitch};
use rust_hdl::prelude::*;

mod contract;
mod jbsq_common;
use contract::{Admission, Contract, DEPTH, Flags, prove};

/// `JbsqSizes::SMALL`: 4 pools, 64 nodes, 1,024 ring entries, 64 buffer slots, 64 connection
/// entries, a frame store of 256 beats.
const P: usize = 2;
const N: usize = 6;
const R: usize = 10;
const B: usize = 6;
const C: usize = 6;
const SB: usize = 8;
const SIZES: JbsqSizes = JbsqSizes::SMALL;

use jbsq_common::flags::{CONTROL, Flag, PACKET, SECOND, bits, offset};

/// The stages, in the order of the stage plan.
const STAGES: [&str; 12] = [
    "pool_cfg",
    "node_cfg",
    "queue_ctl",
    "link",
    "ring",
    "members",
    "member_slot",
    "outstanding",
    "pool_avg",
    "task_buf",
    "conn",
    "node_addr",
];

/// `signal`'s bit of the field `set` sets.
fn bit(signal: &str, set: Flag) -> String {
    format!("{signal}[{}]", offset(set))
}

/// The bits of `signal` that `flags` set, ORed.
fn any(signal: &str, flags: &[Flag]) -> String {
    contract::any(signal, &bits(flags))
}

/// The pass `o` makes no egress job when it comes back (`JbsqJobMap`'s `push` without the
/// frame-buffer slot, which a pass that comes back keeps): not forwarded to a node nor passed
/// on, holds and releases nothing, sends no message.
fn makes_no_job(o: &str) -> String {
    let b = |f: Flag| bit(o, f);
    format!(
        "!({addr} && ({task} || {cont})) && !{pass} && !{ctl} && !({reply} && !{ret}) && !{held} \
         && !{release} && !({spine} && ({add} || {remove} || {load}))",
        addr = b(|p| p.addr_ok = true),
        task = b(|p| p.is_task = true),
        cont = b(|p| p.is_cont = true),
        pass = b(|p| p.is_pass_through = true),
        ctl = b(|p| p.is_to_control = true),
        reply = b(|p| p.is_reply = true),
        ret = b(|p| p.is_return = true),
        held = b(|p| p.held = true),
        release = b(|p| p.release = true),
        spine = b(|p| p.spine_ok = true),
        add = b(|p| p.idle_add = true),
        remove = b(|p| p.idle_remove = true),
        load = b(|p| p.load_update = true),
    )
}

/// What the core's contract proves of a retry that comes back ([`makes_no_job`], a retry being
/// no reply): no message, not held, nothing released, no address read, not a frame passed on.
fn quiet(o: &str) -> String {
    let b = |f: Flag| bit(o, f);
    format!(
        "!{} && !{} && !{} && !{} && !{} && !{} && !{} && !{} && !{}",
        b(|p| p.load_update = true),
        b(|p| p.addr_ok = true),
        b(|p| p.idle_add = true),
        b(|p| p.idle_remove = true),
        b(|p| p.held = true),
        b(|p| p.release = true),
        b(|p| p.is_pass_through = true),
        b(|p| p.is_to_control = true),
        b(|p| p.is_cont = true),
    )
}

/// Whether the pass `o` comes back (`JbsqAsksSecondPass`): a task that popped a removed
/// worker's place, a reply whose place returns.
fn asks(o: &str) -> String {
    let b = |f: Flag| bit(o, f);
    format!(
        "({live} && !{drop} && (({task} && {pop} && {stale}) || ({reply} && {returns})))",
        live = b(|p| p.live = true),
        drop = b(|p| p.drop = true),
        task = b(|p| p.is_task = true),
        pop = b(|p| p.pop = true),
        stale = b(|p| p.stale = true),
        reply = b(|p| p.is_reply = true),
        returns = b(|p| p.returns = true),
    )
}

fn core_verilog() -> String {
    let mut uut = JbsqCore::<P, N, R, B, C>::new(SIZES, 0x5eed, 60);
    uut.connect_all();
    emit(&uut)
}

/// Each stage's output pass, as the core's probes name it: the chain's own output for the last
/// stage, whose port is the chain's.
fn stage_outputs() -> Vec<String> {
    STAGES[..STAGES.len() - 1]
        .iter()
        .map(|s| format!("stages.{s}$port$down$pass"))
        .chain(["stages$port$down$pass".to_string()])
        .collect()
}

/// The core (`verilog`, or as emitted), with its pass registers as outputs, and the contract's
/// harness.
fn core_files(verilog: Option<&str>) -> [(&'static str, String); 2] {
    let mut probes: Vec<String> = [
        "entered$q",
        "again$q",
        "occupied$q",
        "ctl_busy$q",
        "stages.pool_avg.holding",
        "stages.pool_avg.out$q",
        "stages.pool_avg.hold$q",
        "stages.pool_avg.core.hold$q",
        "stages.pool_avg.core.held$q",
    ]
    .map(String::from)
    .to_vec();
    probes.extend(stage_outputs());
    let probes: Vec<&str> = probes.iter().map(String::as_str).collect();
    let v = verilog.map_or_else(core_verilog, str::to_string);
    let v = check::with_probes(&v, &probes);
    // The pass registers: behind the pass mux, then each stage's output.
    let regs: Vec<String> = std::iter::once("probe_entered_q".to_string())
        .chain(
            stage_outputs()
                .iter()
                .map(|s| format!("probe_{}", s.replace(['$', '.'], "_"))),
        )
        .collect();
    let live = offset(|p| p.live = true);
    let flags = Flags {
        live,
        second: bits(&SECOND),
        packet: bits(&PACKET),
        control: bits(&CONTROL),
        rescale: [
            offset(|p| p.is_ctl_add = true),
            offset(|p| p.is_ctl_remove = true),
        ],
    };
    let (retry, ret): (Flag, Flag) = (|p| p.is_retry = true, |p| p.is_return = true);
    // A second pass is a retry (a task's kind with it) or a returned place (no kind), never
    // both, never a control pass.
    let clash = |r: &str| {
        format!(
            "({} && {}) || ({} && {}) || ({} && !{}) || ({} && {}) || ({} && {})",
            bit(r, retry),
            bit(r, ret),
            any(r, &SECOND),
            any(r, &CONTROL),
            bit(r, retry),
            bit(r, |p| p.is_task = true),
            bit(r, retry),
            bit(r, |p| p.is_reply = true),
            bit(r, ret),
            any(r, &PACKET)
        )
    };
    // A retry that comes back then sends no message (decision 35), is not held, releases
    // nothing, reads no address and is neither a continuation nor a frame passed on; with what
    // makes it inductive: the registered decision is the leaving pass's, and every register's
    // retry carries no idle message (nor any other kind), and one that popped a place is neither
    // held nor sent over a bound. Its load report and its address: a pass enters with neither (the pass mux builds a second
    // pass from zero), `poolAvg` sets the one and `nodeAddr` the other, for a task that took a
    // place; so a retry carries neither before the stage that sets it, nor after it when it
    // popped a removed worker's place. `poolAvg`'s decision is its shared stage's, made on the
    // pass it registers beside the JBSQ one: their two hold counts agree.
    let stage_of = |name: &str| STAGES.iter().position(|s| *s == name).expect("a stage") + 1;
    let (avg_at, addr_at) = (stage_of("pool_avg"), stage_of("node_addr"));
    let retries = regs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let b = |f: Flag| bit(r, f);
            let retry = format!("{r}[{live}] && {}", b(retry));
            let popped_stale = format!("{retry} && {} && {}", b(|p| p.pop = true), b(|p| p.stale = true));
            let [load, addr] = [(avg_at, b(|p| p.load_update = true)), (addr_at, b(|p| p.addr_ok = true))]
                .map(|(at, f)| {
                    let when = if i < at { &retry } else { &popped_stale };
                    format!("if ({when}) assert (!{f});")
                });
            format!(
                "if ({retry}) assert (!{} && !{} && !{} && !{} && !{} && !{} && !{});\n        \
                 if ({retry} && {}) assert (!{} && !{});\n        {load}\n        {addr}",
                b(|p| p.idle_add = true),
                b(|p| p.idle_remove = true),
                b(|p| p.is_cont = true),
                b(|p| p.is_pass_through = true),
                b(|p| p.is_to_control = true),
                b(|p| p.is_reply = true),
                b(|p| p.release = true),
                b(|p| p.pop = true),
                b(|p| p.held = true),
                b(|p| p.fallback = true),
            )
        })
        .chain([
            "assert (probe_stages_pool_avg_hold_q == probe_stages_pool_avg_core_hold_q);".into(),
            "assert (probe_stages_pool_avg_core_held_q == (probe_stages_pool_avg_core_hold_q != 3'd0));".into(),
        ])
        .collect::<Vec<_>>()
        .join("\n        ");
    let c = Contract {
        flags: &flags,
        regs,
        held: "probe_stages_pool_avg_out_q",
        holding: "probe_stages_pool_avg_holding",
        clash: &clash,
        ctl_bad: format!(
            "{} | {} | {} != 4'd1",
            any("ctl", &SECOND),
            any("ctl", &PACKET),
            contract::count("ctl", &flags.control)
        ),
        // The JBSQ `poolAvg` holds its pass by its count alone: no flag to tie to it.
        hold_invariant: String::new(),
        // A retry that pops another removed worker's place comes back again.
        comes_back: bit("out", retry),
        comes_back_empty: format!(
            "if (out_again && out_second) assert ({});\n        assert (probe_again_q == {});\n        {retries}",
            quiet("out"),
            asks("probe_stages_port_down_pass"),
        ),
        core_latency: CORE_LATENCY,
    };
    let h = contract::contract_harness(&v, &c);
    [("top.v", v), ("harness.sv", h)]
}

/// The datapath with its core as the contract's model, and the admission harness; `mutate` edits
/// the datapath's Verilog first.
fn switch_files(mutate: impl Fn(String) -> String) -> [(&'static str, String); 2] {
    let mut uut = JbsqSwitch::<P, N, R, B, C, SB>::new(SIZES, 0x5eed, 60);
    uut.connect_all();
    let free_decls = format!("(* anyseq *) reg [{}:0] any_counts;", JbsqCounts::BITS - 1);
    // A second pass comes back again only as a retry that makes no job (decision 35).
    let again_rule = format!(
        "if (again) assume (leave && (!leave_second || ({} && {})));",
        bit("any_out", |p| p.is_retry = true),
        makes_no_job("any_out")
    );
    contract::admission_files(
        &mutate(emit(&uut)),
        &Admission {
            phv_bits: JbsqPhv::BITS,
            free_decls: &free_decls,
            free_assigns: "counts = any_counts;",
            again_rule: &again_rule,
            core_latency: CORE_LATENCY,
            job_slots: 1 << JOB_BITS,
            job_room: JOB_ROOM,
        },
    )
}

/// The JBSQ core keeps the contract, for every input sequence, at every depth.
#[test]
fn the_jbsq_core_is_proven_to_count_its_passes_and_take_each_back_as_it_leaves() {
    assert_eq!(
        prove("jbsq_core_contract", &core_files(None)),
        Proof::Proven { depth: DEPTH }
    );
}

/// A core whose packet input ignores the registered second-pass decision lets a packet in beside
/// a retry or a returned place: the contract fails, from reset, once a pass comes back (bounded
/// check of `MUTANT_DEPTH` cycles: a pass takes `CORE_LATENCY` to leave).
#[test]
fn the_jbsq_core_contract_fails_when_a_packet_enters_beside_a_second_pass() {
    const MUTANT_DEPTH: u32 = CORE_LATENCY as u32 + 5;
    let v = core_verilog();
    let from = "pkt_ready = ~again$q & ~ctl_valid & ~ctl_busy$q;";
    assert_eq!(v.matches(from).count(), 1, "the mutation site");
    let [a, b] = core_files(Some(
        &v.replace(from, "pkt_ready = ~ctl_valid & ~ctl_busy$q;"),
    ));
    let step = check::refute(
        "jbsq_core_contract_mutant",
        &[(a.0, &a.1), (b.0, &b.1)],
        "harness",
        MUTANT_DEPTH,
    )
    .unwrap();
    eprintln!("a packet beside a second pass: fails at step {step}");
}

/// The datapath admits a pass only while the egress can queue every job it may make, for every
/// input sequence, at every depth.
#[test]
fn the_jbsq_datapath_is_proven_to_admit_only_what_the_egress_can_queue() {
    assert_eq!(
        prove("jbsq_admission", &switch_files(|v| v)),
        Proof::Proven { depth: DEPTH }
    );
}

/// A datapath that lets control passes in without room breaks the proof (its induction fails).
#[test]
fn the_jbsq_admission_proof_fails_when_control_passes_skip_the_room() {
    let from = "core$ctl_valid = ctl_valid & room_r$q;";
    let files = switch_files(|v| {
        assert_eq!(v.matches(from).count(), 1, "the mutation site");
        v.replace(from, "core$ctl_valid = ctl_valid;")
    });
    let p = prove("jbsq_admission_mutant", &files);
    assert!(!matches!(p, Proof::Proven { .. }), "{p:?}");
    eprintln!("control passes without room: {p:?}");
}

/// Decision 35 is what the contract proves of a retry that comes back: a link stage that runs
/// the rule on a retry (`runs` without `!is_retry`) fails it, in the induction.
#[test]
fn the_jbsq_core_contract_fails_when_a_retry_runs_the_link_rule() {
    let v = core_verilog();
    let (task, retry) = (offset(|p| p.is_task = true), offset(|p| p.is_retry = true));
    let from = format!("runs = (port$up$pass[{task} +: 1] & ~port$up$pass[{retry} +: 1]) |");
    assert_eq!(v.matches(&from).count(), 1, "the mutation site");
    let to = format!("runs = (port$up$pass[{task} +: 1]) |");
    let files = core_files(Some(&v.replace(&from, &to)));
    let Proof::NotInductive { report, .. } = prove("jbsq_core_contract_retry_mutant", &files)
    else {
        panic!("the mutant is not caught");
    };
    // The assertion that fails says a retry carries no idle message.
    let line = check::failed_line(&report).unwrap_or_else(|| panic!("no failing line in {report}"));
    let text = files[1].1.lines().nth(line - 1).expect("the line");
    let idle_add = format!("[{}]", offset(|p| p.idle_add = true));
    assert!(
        text.contains(&idle_add) && text.contains(&format!("[{retry}]")),
        "another assertion fails: {text}\n{report}"
    );
    eprintln!("a retry running the link rule: fails at harness.sv:{line}");
}

/// A retry that popped a removed worker's place is no task of the pool's: a pool stage that
/// counts it as one (`is_task` without `!stale`) sends a load report for it, and the contract
/// fails in the induction on that report.
#[test]
fn the_jbsq_core_contract_fails_when_the_pool_stage_counts_a_stale_retry() {
    let v = core_verilog();
    let [task, dropped, stale] = [
        offset(|p| p.is_task = true),
        offset(|p| p.dropped = true),
        offset(|p| p.stale = true),
    ];
    let from = format!(
        "= port$up$pass[{task} +: 1] & ~port$up$pass[{dropped} +: 1] & ~port$up$pass[{stale} +: 1];"
    );
    assert_eq!(v.matches(&from).count(), 1, "the mutation site");
    let to = format!("= port$up$pass[{task} +: 1] & ~port$up$pass[{dropped} +: 1];");
    let files = core_files(Some(&v.replace(&from, &to)));
    let Proof::NotInductive { report, .. } = prove("jbsq_core_contract_stale_mutant", &files)
    else {
        panic!("the mutant is not caught");
    };
    let line = check::failed_line(&report).unwrap_or_else(|| panic!("no failing line in {report}"));
    let text = files[1].1.lines().nth(line - 1).expect("the line");
    let load = format!("[{}]", offset(|p| p.load_update = true));
    assert!(
        text.contains(&load) && text.contains(&format!("[{stale}]")),
        "another assertion fails: {text}\n{report}"
    );
    eprintln!("a stale retry counted as a task: fails at harness.sv:{line}");
}
