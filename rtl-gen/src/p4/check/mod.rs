//! A structural checker for the P4 programs: it walks a role's typed ingress ([`super::ir`]:
//! declarations, tables with their stages, an apply tree of `if`/`else` and table applications;
//! the effects of actions, register actions and conditions from their source's tokens) along
//! every control path, and holds the program to the rules a Tofino 1 pipeline imposes and to the
//! model's facts:
//!
//! - every table's stage is below Tofino 1's 12 and the one [`super::plan`] gives it, and a pinned
//!   table is pinned to it; every action, register action and table is used;
//! - a register (and a counter) lives in one stage: every table that executes one of its actions
//!   sits in the register's stage; at most 4 register actions per register, 4 registers and 16
//!   tables per stage; register cells of 8 to 32 bits or a pair of two equal fields;
//! - on every path, each table is applied and each register and counter accessed at most once, and
//!   a table that reads a field (in its key, its actions, its register actions, or the conditions
//!   that lead to it) sits in a later stage than every table before it on the path that writes
//!   the field (two writes: a later stage; a write after a read: the same stage or later);
//! - the Horus header's fields, the packet types, the drop reasons, the UDP port and the
//!   `classify` entries equal `horus_model`'s.
//!
//! It also finds the constructs Intel's compiler (bf-p4c) refused in these programs
//! ([`Report::refusals`]: more than two comparisons in a register action, a slice of the register
//! value in its condition, a conditional value in an action chosen by a field, a non-zero
//! constant in a mirror's field list), so that CI, which cannot build the compiler, still catches
//! them. What it cannot check without the compiler: the rest of what a stateful ALU can compute,
//! PHV allocation, table memory.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use horus_model::config::Role;
use horus_model::sched::DropReason;
use horus_model::wire::{self, PacketType};

use super::emit;
use super::ir;
use super::plan::{self, TOFINO1_STAGES};

mod calls;
mod common;
mod refusals;

pub use refusals::{
    ACTION_CONDITION, LIST_CONSTANT, REFUSAL_RULES, Refusal, SALU_COMPARISONS, SALU_PHV_INPUTS,
    SALU_SLICE, SALU_TWO_FIELDS, SALU_TWO_WORDS,
};
use refusals::{
    condition_on_field, list_constants, slice_in_condition, two_fields_operated, two_words_compared,
};

/// Tofino 1's limits per stage and per register (`docs/p4.md` cites the compiler's sources).
pub const SALUS_PER_STAGE: usize = 4;
pub const TABLES_PER_STAGE: usize = 16;
pub const ACTIONS_PER_REGISTER: usize = 4;
pub const COUNTERS_PER_STAGE: usize = 4;

/// What the checker found in a program that keeps every rule.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Stages used (the highest table stage plus one).
    pub stages: u8,
    /// Control paths through the ingress apply block.
    pub paths: usize,
    pub tables: usize,
    pub registers: usize,
    pub register_actions: usize,
    /// Tables applied at more than one place (in branches that exclude each other: the checker
    /// holds every path to one application).
    pub shared_tables: usize,
    /// What Intel's compiler (bf-p4c) refuses that the checker finds without it, one line each,
    /// `rule: where` ([`Refusal`]). The rules come from bf-p4c's verdicts on these programs
    /// (`docs/p4.md`); a program with a refusal does not compile, so a new one fails the pinned
    /// list in `rtl-gen/tests/p4.rs`, and the list only shrinks.
    pub refusals: Vec<Refusal>,
}

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// An identifier, or a dotted path (`md.ctl`, `hdr.horus.pool_id`).
    Word(String),
    Num(String),
    /// A string literal (a compiler pragma's argument), without its quotes.
    Str(String),
    Punct(&'static str),
}

const PUNCT: [&str; 30] = [
    "|-|", "|+|", "++", "==", "!=", "<=", ">=", "&&", "||", "<<", "{", "}", "(", ")", "[", "]",
    "<", ">", ";", ",", ":", "=", "+", "-", "|", "&", "^", "?", "!", "@",
];

fn tokenize(text: &str) -> Result<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(b.len() - i, |e| e + 2);
        } else if text[i..].starts_with("//") || (c == b'#' && (i == 0 || b[i - 1] == b'\n')) {
            i += text[i..].find('\n').unwrap_or(b.len() - i);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Word(text[start..i].to_string()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Num(text[start..i].to_string()));
        } else if c == b'"' {
            let end = text[i + 1..]
                .find('"')
                .ok_or_else(|| anyhow::anyhow!("an unterminated string in the program"))?;
            out.push(Tok::Str(text[i + 1..i + 1 + end].to_string()));
            i += end + 2;
        } else if let Some(p) = PUNCT.iter().find(|p| text[i..].starts_with(**p)) {
            out.push(Tok::Punct(p));
            i += p.len();
        } else if c == b'*' || c == b'/' || c == b'%' || c == b'~' {
            out.push(Tok::Punct("op"));
            i += 1;
        } else {
            bail!("unexpected character {:?} in the program", c as char);
        }
    }
    Ok(out)
}

fn is(t: Option<&Tok>, p: &str) -> bool {
    matches!(t, Some(Tok::Punct(q)) if *q == p)
}

/// The index just past the bracket that closes the one at `open`.
fn closing(toks: &[Tok], open: usize) -> Result<usize> {
    let (o, c) = match &toks[open] {
        Tok::Punct("{") => ("{", "}"),
        Tok::Punct("(") => ("(", ")"),
        Tok::Punct("[") => ("[", "]"),
        t => bail!("expected a bracket, found {t:?}"),
    };
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if is(Some(t), o) {
            depth += 1;
        } else if is(Some(t), c) {
            depth -= 1;
            if depth == 0 {
                return Ok(i + 1);
            }
        }
    }
    bail!("unbalanced {o}")
}

/// A field the program reads or writes: a dotted path into the headers, the metadata or the
/// intrinsic metadata (`$valid` for a header's validity).
fn field(path: &str) -> Option<String> {
    let roots = [
        "md.",
        "hdr.",
        "ig_dprsr_md.",
        "ig_tm_md.",
        "ig_intr_md.",
        "ig_prsr_md.",
    ];
    roots
        .iter()
        .any(|r| path.starts_with(r))
        .then(|| path.to_string())
}

/// What a piece of code does to the fields and the stateful objects.
#[derive(Clone, Debug, Default)]
struct Effects {
    reads: BTreeSet<String>,
    writes: BTreeSet<String>,
    /// Register actions executed.
    executes: Vec<String>,
    /// Counters counted.
    counts: Vec<String>,
}

impl Effects {
    fn merge(&mut self, o: &Effects) {
        self.reads.extend(o.reads.iter().cloned());
        self.writes.extend(o.writes.iter().cloned());
        self.executes.extend(o.executes.iter().cloned());
        self.counts.extend(o.counts.iter().cloned());
    }
}

/// The effects of a run of tokens that only reads (an expression, a key, a condition).
fn reads_of(toks: &[Tok], e: &mut Effects) {
    let mut i = 0;
    while i < toks.len() {
        if let Tok::Word(w) = &toks[i] {
            if is(toks.get(i + 1), "(") {
                if let Some((obj, method)) = w.rsplit_once('.') {
                    match method {
                        "execute" => e.executes.push(obj.to_string()),
                        "count" => e.counts.push(obj.to_string()),
                        "isValid" => {
                            e.reads.insert(format!("{obj}.$valid"));
                        }
                        "setValid" | "setInvalid" => {
                            e.writes.insert(format!("{obj}.$valid"));
                        }
                        _ => {}
                    }
                }
            } else if let Some(f) = field(w) {
                e.reads.insert(f);
            }
        }
        i += 1;
    }
}

/// The effects of statements `lhs = rhs;` and calls, separated by `;`.
fn statements(toks: &[Tok]) -> Effects {
    let mut e = Effects::default();
    for st in toks.split(|t| is(Some(t), ";")) {
        let mut depth = 0;
        let eq = st.iter().position(|t| {
            match t {
                Tok::Punct("(") | Tok::Punct("[") => depth += 1,
                Tok::Punct(")") | Tok::Punct("]") => depth -= 1,
                _ => {}
            }
            depth == 0 && is(Some(t), "=")
        });
        match eq {
            Some(k) => {
                // `bit<32> r = ...` declares a local; `md.x[3:0] = ...` writes md.x. What comes
                // before the target (`if (md.a > 0) { v = ...`) is read.
                if let Some(t) = st[..k].iter().rposition(|t| matches!(t, Tok::Word(_))) {
                    if let Tok::Word(w) = &st[t] {
                        if let Some(f) = field(w) {
                            e.writes.insert(f);
                        }
                    }
                    reads_of(&st[..t], &mut e);
                }
                reads_of(&st[k + 1..], &mut e);
            }
            None => reads_of(st, &mut e),
        }
    }
    e
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
struct RegisterAction {
    register: String,
    body: Effects,
    comparisons: usize,
    /// The non-zero constants it returns (`rv = N`).
    constants: BTreeSet<u64>,
    /// A slice of the register value (`v[..]`, `v.lo[..]`) inside an `if` condition.
    slice_in_condition: bool,
    /// A comparison of two words of the register (`v.hi == v.lo`).
    two_words_compared: bool,
    /// A sum or difference of two fields assigned (`v.lo = md.a + md.b`).
    two_fields_operated: bool,
}

#[derive(Debug)]
struct Table {
    stage: u8,
    /// bf-p4c's `@stage(N)`, which it obeys, where the emitter pins a table.
    pinned: Option<u8>,
    /// The fields it matches by range.
    range_keys: Vec<String>,
    /// Its `size`, where a number.
    size: Option<u64>,
    key_reads: Effects,
    actions: Vec<String>,
}

#[derive(Debug)]
enum Stmt {
    Apply(String),
    If(Effects, Vec<Stmt>, Vec<Stmt>),
}

#[derive(Debug, Default)]
struct Control {
    /// Register name -> its cell type's tokens.
    registers: BTreeMap<String, String>,
    counters: BTreeSet<String>,
    register_actions: BTreeMap<String, RegisterAction>,
    actions: BTreeMap<String, Effects>,
    /// Actions with a conditional value whose condition reads a field.
    field_conditions: BTreeSet<String>,
    /// Actions with an assignment of two additions or subtractions.
    two_operations: BTreeSet<String>,
    tables: BTreeMap<String, Table>,
    apply: Vec<Stmt>,
    apply_sites: BTreeMap<String, usize>,
    /// Every name the control declares, and the names declared more than once: a control's
    /// registers, externs, actions and tables share one namespace.
    declared: BTreeSet<String>,
    declared_twice: BTreeSet<String>,
}

impl Control {
    fn declare(&mut self, name: &str) {
        if !self.declared.insert(name.to_string()) {
            self.declared_twice.insert(name.to_string());
        }
    }
}

fn word(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Word(w)) => Some(w),
        _ => None,
    }
}

/// The checker's view of a typed control: its declarations with the effects of their bodies,
/// and the apply tree with the fields each condition reads.
fn summarize(ir: &ir::Control) -> Result<Control> {
    let mut c = Control::default();
    for d in &ir.decls {
        match d {
            ir::Decl::Comment(_) | ir::Decl::Blank => {}
            ir::Decl::Extern(e) => {
                c.declare(&e.name);
                if e.kind == "Counter" {
                    c.counters.insert(e.name.clone());
                }
            }
            ir::Decl::Register(r) => {
                c.declare(&r.name);
                c.registers.insert(r.name.clone(), r.cell.clone());
            }
            ir::Decl::RegisterAction(ra) => {
                c.declare(&ra.name);
                let body = tokenize(&ra.body.0)?;
                let comparisons = body
                    .iter()
                    .filter(|t| {
                        matches!(t, Tok::Punct("==" | "!=" | "<=" | ">=" | "<" | ">"))
                    })
                    .count()
                    // The types in casts are not comparisons.
                    - angle_pairs(&body) * 2;
                let mut e = statements(&body);
                // The register action's own value and output are not fields.
                e.writes.clear();
                c.register_actions.insert(
                    ra.name.clone(),
                    RegisterAction {
                        register: ra.register.clone(),
                        body: e,
                        comparisons,
                        slice_in_condition: slice_in_condition(&body)?,
                        two_words_compared: two_words_compared(&body)?,
                        two_fields_operated: two_fields_operated(&body),
                        constants: refusals::output_constants(&body),
                    },
                );
            }
            ir::Decl::Action(a) => {
                c.declare(&a.name);
                let body = tokenize(&a.body.0)?;
                if condition_on_field(&body) {
                    c.field_conditions.insert(a.name.clone());
                }
                if refusals::two_operations(&body) {
                    c.two_operations.insert(a.name.clone());
                }
                c.actions.insert(a.name.clone(), statements(&body));
            }
            ir::Decl::Table(tb) => {
                c.declare(&tb.name);
                let mut key_reads = Effects::default();
                for k in &tb.keys {
                    reads_of(&tokenize(&k.field)?, &mut key_reads);
                }
                c.tables.insert(
                    tb.name.clone(),
                    Table {
                        stage: tb.stage,
                        pinned: match tb.pin {
                            ir::Pin::Stage(s) => Some(s),
                            ir::Pin::Free | ir::Pin::Last => None,
                        },
                        range_keys: tb
                            .keys
                            .iter()
                            .filter(|k| k.kind == ir::Match::Range)
                            .map(|k| k.field.clone())
                            .collect(),
                        size: tb.size_number(),
                        key_reads,
                        actions: tb.actions.clone(),
                    },
                );
            }
        }
    }
    c.apply = block(&ir.apply, &mut c.apply_sites)?;
    Ok(c)
}

/// `<...>` pairs in a register action's tokens that are types (after `bit` and `int`), so that
/// their angle brackets are not counted as comparisons.
fn angle_pairs(toks: &[Tok]) -> usize {
    toks.windows(2)
        .filter(|w| {
            matches!(&w[0], Tok::Word(x) if x == "bit" || x == "int") && is(Some(&w[1]), "<")
        })
        .count()
}

/// The apply tree with each condition's reads, counting where each table is applied.
fn block(stmts: &[ir::Stmt], sites: &mut BTreeMap<String, usize>) -> Result<Vec<Stmt>> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            ir::Stmt::Apply(name) => {
                *sites.entry(name.clone()).or_default() += 1;
                out.push(Stmt::Apply(name.clone()));
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let mut reads = Effects::default();
                reads_of(&tokenize(&cond.0)?, &mut reads);
                let then = block(then, sites)?;
                out.push(Stmt::If(reads, then, block(otherwise, sites)?));
            }
            ir::Stmt::Comment(_) => {}
        }
    }
    Ok(out)
}

/// Every path through `stmts`: the tables applied, each with the fields the conditions that
/// lead to it read.
fn paths(stmts: &[Stmt], gates: &BTreeSet<String>) -> Vec<Vec<(String, BTreeSet<String>)>> {
    let mut acc: Vec<Vec<(String, BTreeSet<String>)>> = vec![Vec::new()];
    for s in stmts {
        match s {
            Stmt::Apply(t) => acc
                .iter_mut()
                .for_each(|p| p.push((t.clone(), gates.clone()))),
            Stmt::If(cond, then, otherwise) => {
                let mut g = gates.clone();
                g.extend(cond.reads.iter().cloned());
                let mut branches = paths(then, &g);
                branches.extend(paths(otherwise, &g));
                acc = acc
                    .iter()
                    .flat_map(|p| {
                        branches.iter().map(move |b| {
                            let mut q = p.clone();
                            q.extend(b.iter().cloned());
                            q
                        })
                    })
                    .collect();
            }
        }
    }
    acc
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/// Checks a role's program (its ingress `program`, with `common` as its include) against every
/// rule; all violations are reported together.
pub fn check(role: Role, program: &ir::Control, common: &str) -> Result<Report> {
    let mut errors = Vec::new();
    common::check_common(common, &mut errors)?;
    common::check_classify(role, program, &mut errors);
    let c = summarize(program)?;
    calls::action_arity(program, &mut errors);
    let mut report = check_ingress(role, &c, &mut errors);
    let common_toks = tokenize(common)?;
    report.refusals.extend(list_constants(&common_toks)?);
    report
        .refusals
        .extend(refusals::range_tables_over_a_stage(&c, &common_toks));
    report.refusals.sort();
    if !errors.is_empty() {
        bail!(
            "the {role} P4 program breaks {} rule(s):\n- {}",
            errors.len(),
            errors.join("\n- ")
        );
    }
    Ok(report)
}

/// The tables of a program's ingress applied in several places whose successors differ
/// ([`refusals::NEXT_TABLE`]): the emitter gives each place a table of its own.
pub fn next_table_conflicts(program: &ir::Control) -> Result<Vec<String>> {
    let c = summarize(program)?;
    Ok(refusals::next_table_conflicts(&c.apply)
        .into_iter()
        .map(|(t, _)| t)
        .collect())
}

/// The effects of applying table `t`: its key, and every action it may run with the register
/// actions those execute.
fn table_effects(c: &Control, t: &Table) -> Effects {
    let mut e = t.key_reads.clone();
    for a in &t.actions {
        if let Some(ae) = c.actions.get(a) {
            e.merge(ae);
            for ra in &ae.executes {
                if let Some(r) = c.register_actions.get(ra) {
                    e.reads.extend(r.body.reads.iter().cloned());
                }
            }
        }
    }
    e
}

fn check_ingress(role: Role, c: &Control, errors: &mut Vec<String>) -> Report {
    let mut report = Report {
        tables: c.tables.len(),
        registers: c.registers.len(),
        register_actions: c.register_actions.len(),
        ..Report::default()
    };
    let effects: BTreeMap<&str, Effects> = c
        .tables
        .iter()
        .map(|(n, t)| (n.as_str(), table_effects(c, t)))
        .collect();
    check_tables(c, &mut report, errors);
    check_objects(c, &effects, errors);
    check_register_actions(c, &mut report, errors);
    for (t, nexts) in refusals::next_table_conflicts(&c.apply) {
        let shown: Vec<String> = nexts
            .iter()
            .map(|n| n.iter().cloned().collect::<Vec<_>>().join("|"))
            .collect();
        report.refusals.push(Refusal {
            rule: refusals::NEXT_TABLE,
            at: format!("{t} (next: {})", shown.join(", ")),
        });
    }
    // Every path.
    let all = paths(&c.apply, &BTreeSet::new());
    report.paths = all.len();
    let mut seen = BTreeSet::new();
    for p in &all {
        check_path(c, &effects, p, errors, &mut seen);
    }
    if role == Role::Spine && c.registers.contains_key("pool_avg") {
        errors.push("the spine keeps no rack average".into());
    }
    report
}

/// Every table: a stage within Tofino 1 as the plan puts it, applied, with known actions; every
/// applied table declared and every action in a table; no name declared twice.
fn check_tables(c: &Control, report: &mut Report, errors: &mut Vec<String>) {
    for name in &c.declared_twice {
        errors.push(format!(
            "{name} is declared twice (a control's tables, actions and externs share one namespace)"
        ));
    }
    // Stages: present, within Tofino 1, as planned.
    for (name, t) in &c.tables {
        let s = t.stage;
        if s >= TOFINO1_STAGES {
            errors.push(format!(
                "table {name} is in stage {s}, past Tofino 1's {TOFINO1_STAGES}"
            ));
        }
        report.stages = report.stages.max(s + 1);
        if t.pinned.is_some_and(|p| p != s) {
            errors.push(format!(
                "table {name} is pinned to stage {} and planned in {s}",
                t.pinned.unwrap_or_default()
            ));
        }
        if let Some(p) = plan::stage(name) {
            if p != s {
                errors.push(format!(
                    "table {name} is in stage {s}; the plan puts it in {p}"
                ));
            }
        }
        match c.apply_sites.get(name).copied().unwrap_or(0) {
            0 => errors.push(format!("table {name} is never applied")),
            1 => {}
            _ => report.shared_tables += 1,
        }
        for a in &t.actions {
            if !c.actions.contains_key(a) {
                errors.push(format!("table {name} names an unknown action {a}"));
            }
        }
    }
    for name in c.apply_sites.keys() {
        if !c.tables.contains_key(name) {
            errors.push(format!("the apply block applies an unknown table {name}"));
        }
    }
    for a in c.actions.keys() {
        if !c.tables.values().any(|t| t.actions.contains(a)) {
            errors.push(format!("action {a} is in no table"));
        }
    }
}

/// Registers and counters: each reached from one stage, as planned, and the limits of a stage
/// (stateful ALUs, counters, tables) and of a register (its actions, its cell).
fn check_objects(c: &Control, effects: &BTreeMap<&str, Effects>, errors: &mut Vec<String>) {
    // Registers and counters: one stage each, as planned; limits.
    let mut stage_of_object: BTreeMap<&str, BTreeSet<u8>> = BTreeMap::new();
    for (name, t) in &c.tables {
        let (s, Some(e)) = (t.stage, effects.get(name.as_str())) else {
            continue;
        };
        for ra in &e.executes {
            match c.register_actions.get(ra) {
                Some(r) => {
                    stage_of_object
                        .entry(r.register.as_str())
                        .or_default()
                        .insert(s);
                }
                None => errors.push(format!(
                    "table {name} executes an unknown register action {ra}"
                )),
            }
        }
        for ctr in &e.counts {
            if !c.counters.contains(ctr) {
                errors.push(format!("table {name} counts an unknown counter {ctr}"));
            }
            stage_of_object.entry(ctr.as_str()).or_default().insert(s);
        }
    }
    let mut salus = BTreeMap::<u8, usize>::new();
    let mut counters = BTreeMap::<u8, usize>::new();
    for (reg, cell) in &c.registers {
        let stages = stage_of_object
            .get(reg.as_str())
            .cloned()
            .unwrap_or_default();
        if stages.len() != 1 {
            errors.push(format!(
                "register {reg} is accessed from stages {stages:?} (must be one)"
            ));
        }
        if let Some(&s) = stages.iter().next() {
            *salus.entry(s).or_default() += 1;
            match plan::table(reg) {
                Some(p) if p.stage != s => errors.push(format!(
                    "register {reg} is in stage {s}; the plan puts it in {}",
                    p.stage
                )),
                None => errors.push(format!("register {reg} is not in the Tofino plan")),
                _ => {}
            }
        }
        let n = c
            .register_actions
            .values()
            .filter(|r| &r.register == reg)
            .count();
        if n > ACTIONS_PER_REGISTER {
            errors.push(format!(
                "register {reg} has {n} register actions (Tofino 1: {ACTIONS_PER_REGISTER})"
            ));
        }
        let cell_ok = [
            "bit<8>", "bit<16>", "bit<32>", "int<8>", "int<16>", "int<32>", "pair_t", "ipair_t",
        ]
        .contains(&cell.as_str());
        if !cell_ok {
            errors.push(format!(
                "register {reg} has cells of {cell}, which a stateful ALU cannot hold"
            ));
        }
    }
    for ctr in &c.counters {
        let stages = stage_of_object
            .get(ctr.as_str())
            .cloned()
            .unwrap_or_default();
        if stages.len() != 1 {
            errors.push(format!(
                "counter {ctr} is counted from stages {stages:?} (must be one)"
            ));
        }
        if let Some(&s) = stages.iter().next() {
            *counters.entry(s).or_default() += 1;
        }
    }
    for (s, n) in salus {
        if n > SALUS_PER_STAGE {
            errors.push(format!(
                "stage {s} holds {n} registers (Tofino 1: {SALUS_PER_STAGE} stateful ALUs)"
            ));
        }
    }
    for (s, n) in counters {
        if n > COUNTERS_PER_STAGE {
            errors.push(format!(
                "stage {s} holds {n} counters (Tofino 1: {COUNTERS_PER_STAGE})"
            ));
        }
    }
    let mut per_stage = BTreeMap::<u8, usize>::new();
    for t in c.tables.values() {
        *per_stage.entry(t.stage).or_default() += 1;
    }
    for (s, n) in per_stage {
        if n > TABLES_PER_STAGE {
            errors.push(format!(
                "stage {s} holds {n} tables (Tofino 1: {TABLES_PER_STAGE})"
            ));
        }
    }
}

/// Register actions: of a known register, executed, and what bf-p4c refuses in them (too many
/// comparisons, a slice in a condition) and in actions (a condition on a field).
fn check_register_actions(c: &Control, report: &mut Report, errors: &mut Vec<String>) {
    for (name, r) in &c.register_actions {
        if !c.registers.contains_key(&r.register) {
            errors.push(format!(
                "register action {name} names an unknown register {}",
                r.register
            ));
        }
        if !c.actions.values().any(|a| a.executes.contains(name)) {
            errors.push(format!("register action {name} is never executed"));
        }
        if r.comparisons > 2 {
            report.refusals.push(Refusal {
                rule: SALU_COMPARISONS,
                at: format!("{name} ({} comparisons)", r.comparisons),
            });
        }
        if r.slice_in_condition {
            report.refusals.push(Refusal {
                rule: SALU_SLICE,
                at: name.clone(),
            });
        }
        if r.two_words_compared {
            report.refusals.push(Refusal {
                rule: refusals::SALU_TWO_WORDS,
                at: name.clone(),
            });
        }
        if r.two_fields_operated {
            report.refusals.push(Refusal {
                rule: SALU_TWO_FIELDS,
                at: name.clone(),
            });
        }
    }
    for reg in c.registers.keys() {
        let constants: BTreeSet<u64> = c
            .register_actions
            .values()
            .filter(|r| &r.register == reg)
            .flat_map(|r| r.constants.iter().copied())
            .collect();
        if constants.len() > 1 {
            let shown: Vec<String> = constants.iter().map(u64::to_string).collect();
            report.refusals.push(Refusal {
                rule: refusals::SALU_CONSTANTS,
                at: format!("{reg} ({})", shown.join(", ")),
            });
        }
        let inputs: BTreeSet<&String> = c
            .register_actions
            .values()
            .filter(|r| &r.register == reg)
            .flat_map(|r| r.body.reads.iter())
            .collect();
        if inputs.len() > refusals::SALU_PHV_INPUT_LIMIT {
            let shown: Vec<&str> = inputs.iter().map(|f| f.as_str()).collect();
            report.refusals.push(Refusal {
                rule: refusals::SALU_PHV_INPUTS,
                at: format!("{reg} ({})", shown.join(", ")),
            });
        }
    }
    for name in &c.two_operations {
        report.refusals.push(Refusal {
            rule: refusals::ACTION_OPERATIONS,
            at: name.clone(),
        });
    }
    for name in &c.field_conditions {
        report.refusals.push(Refusal {
            rule: ACTION_CONDITION,
            at: name.clone(),
        });
    }
}

fn check_path(
    c: &Control,
    effects: &BTreeMap<&str, Effects>,
    p: &[(String, BTreeSet<String>)],
    errors: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) {
    let mut push = |e: String| {
        if seen.insert(e.clone()) {
            errors.push(e);
        }
    };
    let route = || {
        p.iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join(" > ")
    };
    let mut tables = BTreeSet::new();
    let mut objects = BTreeMap::<String, &str>::new();
    for (t, _) in p {
        if !tables.insert(t.as_str()) {
            push(format!(
                "table {t} is applied twice on the path {}",
                route()
            ));
        }
        let Some(e) = effects.get(t.as_str()) else {
            continue;
        };
        // A table runs one of its actions: the registers and counters its actions touch, once.
        let objs: BTreeSet<String> = e
            .executes
            .iter()
            .filter_map(|ra| c.register_actions.get(ra).map(|r| r.register.clone()))
            .chain(e.counts.iter().cloned())
            .collect();
        for obj in objs {
            if let Some(prev) = objects.insert(obj.clone(), t) {
                push(format!(
                    "{obj} is accessed by {prev} and by {t} on the path {}",
                    route()
                ));
            }
        }
    }
    // Tofino 1 runs a pass's tables by next-table pointers, which only go forward: bf-p4c
    // places a table that follows an `if` block once every table of the block is placed, so a
    // path that goes back to an earlier stage costs the program stages the plan does not have.
    let mut last: Option<(&str, u8)> = None;
    for (t, _) in p {
        let Some(s) = c.tables.get(t).map(|x| x.stage) else {
            continue;
        };
        match last {
            Some((a, sa)) if s < sa => push(format!(
                "{t} (stage {s}) is applied after {a} (stage {sa}), an earlier stage after a later one"
            )),
            _ => last = Some((t.as_str(), s)),
        }
    }
    for (j, (b, gates)) in p.iter().enumerate() {
        let (Some(eb), Some(sb)) = (effects.get(b.as_str()), c.tables.get(b).map(|t| t.stage))
        else {
            continue;
        };
        for (a, _) in &p[..j] {
            let (Some(ea), Some(sa)) = (effects.get(a.as_str()), c.tables.get(a).map(|t| t.stage))
            else {
                continue;
            };
            let raw: Vec<_> = eb.reads.intersection(&ea.writes).collect();
            let gate: Vec<_> = gates.intersection(&ea.writes).collect();
            let waw: Vec<_> = eb.writes.intersection(&ea.writes).collect();
            let war: Vec<_> = eb.writes.intersection(&ea.reads).collect();
            if sb <= sa && !raw.is_empty() {
                push(format!(
                    "{b} (stage {sb}) reads {raw:?}, written by {a} (stage {sa}) before it"
                ));
            }
            if sb <= sa && !gate.is_empty() {
                push(format!(
                    "{b} (stage {sb}) is reached on {gate:?}, written by {a} (stage {sa}) before it"
                ));
            }
            if sb <= sa && !waw.is_empty() {
                push(format!(
                    "{b} (stage {sb}) and {a} (stage {sa}) before it both write {waw:?}"
                ));
            }
            if sb < sa && !war.is_empty() {
                push(format!(
                    "{b} (stage {sb}) writes {war:?}, read by {a} (stage {sa}) before it"
                ));
            }
        }
    }
}

fn parse_num(s: &str) -> Option<u64> {
    let digits = s.rsplit(['w', 's']).next().unwrap_or(s);
    if let Some(h) = digits.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        digits.parse().ok()
    }
}
