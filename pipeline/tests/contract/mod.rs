//! The scheduler core's contract and the admission rule's proof, for either core: the paper
//! leaf's and spine's (`admission.rs`) and the JBSQ leaf's (`jbsq_admission.rs`). The harnesses
//! are `formal/core_contract.sv` (the core keeps the contract), `formal/core_model.sv` (the core
//! as its contract) and `formal/admission.sv` (the datapath admits a pass only while the egress's
//! job FIFO has room); each test gives its descriptor's bits and what differs between the cores.

#![allow(dead_code)]

use horus_hdl_tools::check::{self, Proof};

/// The bits of `signal` at `bits`, ORed, in parentheses: `(pass[3] | pass[9])`.
pub fn any(signal: &str, bits: &[usize]) -> String {
    let b: Vec<String> = bits.iter().map(|i| format!("{signal}[{i}]")).collect();
    format!("({})", b.join(" | "))
}

/// How many of the bits of `signal` at `bits` are set, as a 4-bit sum.
pub fn count(signal: &str, bits: &[usize]) -> String {
    let b: Vec<String> = bits
        .iter()
        .map(|i| format!("{{3'd0, {signal}[{i}]}}"))
        .collect();
    format!("({})", b.join(" + "))
}

/// A core's pass descriptor as the contract reads it: the bits of its flags.
pub struct Flags {
    pub live: usize,
    /// A second pass's flags (the pass mux sets one).
    pub second: Vec<usize>,
    /// A packet's kinds that may ask for a second pass.
    pub packet: Vec<usize>,
    /// A control pass's operations (the register port stages exactly one).
    pub control: Vec<usize>,
    /// The control passes a rescale holds in `pool_avg` (adding, removing a worker).
    pub rescale: [usize; 2],
}

/// What differs between the cores' contracts.
pub struct Contract<'a> {
    pub flags: &'a Flags,
    /// The pass registers: behind the pass mux, then each stage's output (probe names).
    pub regs: Vec<String>,
    /// The register `pool_avg` holds a rescaling pass in, and whether it holds one.
    pub held: &'a str,
    pub holding: &'a str,
    /// A register's flags no pass carries together (a second pass's with a first pass's kind).
    pub clash: &'a dyn Fn(&str) -> String,
    /// What a staged control pass never carries (assumed of `ctl`).
    pub ctl_bad: String,
    /// The hold's own invariant, which second passes may come back again and what is asserted
    /// of them then.
    pub hold_invariant: String,
    pub comes_back: String,
    pub comes_back_empty: String,
    pub core_latency: usize,
}

/// The contract's harness for the core `v` (its probes added).
pub fn contract_harness(v: &str, c: &Contract) -> String {
    let f = c.flags;
    let live = f.live;
    let kinds: Vec<usize> = f.control.iter().chain(&f.packet).copied().collect();
    let sum = |term: &dyn Fn(&str) -> String| {
        c.regs
            .iter()
            .map(|r| format!("{{7'd0, {}}}", term(r)))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let either = |term: &dyn Fn(&str) -> String| {
        c.regs
            .iter()
            .map(|r| term(r))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let held = c.held;
    let decls = [
        format!("wire holding = {};", c.holding),
        format!(
            "wire [7:0] live_sum = {};",
            sum(&|r| format!("{r}[{live}]"))
        ),
        format!(
            "wire [7:0] second_sum = {};",
            sum(&|r| format!("({r}[{live}] && {})", any(r, &f.second)))
        ),
        format!(
            "wire [7:0] ctl_sum = {};",
            sum(&|r| format!("({r}[{live}] && {})", any(r, &f.control)))
        ),
        format!("wire clash = {};", either(c.clash)),
        format!(
            "wire multi = {};",
            either(&|r| format!("({} > 4'd1)", count(r, &kinds)))
        ),
        format!(
            "wire bubble_flags = {};",
            either(&|r| format!("(!{r}[{live}] && {})", any(r, &f.control)))
        ),
        format!(
            "wire held_ok = {held}[{live}] && {held}[{}] | {held}[{}] && {} == 4'd1 && !{};",
            f.rescale[0],
            f.rescale[1],
            count(held, &kinds),
            any(held, &f.second)
        ),
    ];
    check::harness(include_str!("../formal/core_contract.sv"), v)
        .replace("@REGS@", &decls.map(|d| format!("    {d}\n")).concat())
        .replace("@SECOND_out@", &any("out", &f.second))
        .replace("@SECOND_trace@", &any("trace", &f.second))
        .replace("@CTL_BAD@", &c.ctl_bad)
        .replace("@HOLD_INVARIANT@", &c.hold_invariant)
        .replace("@COMES_BACK@", &c.comes_back)
        .replace("@COMES_BACK_EMPTY@", &c.comes_back_empty)
        .replace("@CORE_LATENCY@", &c.core_latency.to_string())
}

/// What a datapath's admission proof needs: its core as the contract's model.
pub struct Admission<'a> {
    /// The core's descriptor width, its outputs beyond the contract's (free), and which second
    /// passes may come back again (assumed).
    pub phv_bits: usize,
    pub free_decls: &'a str,
    pub free_assigns: &'a str,
    pub again_rule: &'a str,
    pub core_latency: usize,
    pub job_slots: u64,
    pub job_room: u64,
}

/// The datapath `v` with its core's module body replaced by the contract's model, and the
/// admission harness.
pub fn admission_files(v: &str, a: &Admission) -> [(&'static str, String); 2] {
    let start = v.find("module top$core(").expect("the core's module");
    let end = start + v[start..].find("endmodule // top$core\n").expect("its end");
    let body = &v[start..end];
    // The module's header and port declarations stay; the rest is the model.
    let ports_end = body
        .find("\n    // ")
        .and_then(|x| body[x + 1..].find("\n    // ").map(|y| x + 1 + y + 1))
        .expect("the port declarations");
    let model = include_str!("../formal/core_model.sv")
        .replace("@CORE_LATENCY@", &a.core_latency.to_string())
        .replace("@PHV_MSB@", &(a.phv_bits - 1).to_string())
        .replace("@FREE_DECLS@", a.free_decls)
        .replace("@FREE_ASSIGNS@", a.free_assigns)
        .replace("@AGAIN_RULE@", a.again_rule);
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
    let h = check::harness(include_str!("../formal/admission.sv"), &v)
        .replace("@JOB_SLOTS@", &a.job_slots.to_string())
        .replace("@JOB_ROOM@", &a.job_room.to_string())
        .replace("@CORE_LATENCY@", &a.core_latency.to_string());
    [("top.v", v), ("harness.sv", h)]
}

/// The inductions close at this depth.
pub const DEPTH: u32 = 2;

pub fn prove(name: &str, files: &[(&'static str, String); 2]) -> Proof {
    let [a, b] = files;
    check::prove_inductive(name, &[(a.0, &a.1), (b.0, &b.1)], "harness", DEPTH).unwrap()
}
