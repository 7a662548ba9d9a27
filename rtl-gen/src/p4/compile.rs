//! The P4 programs compiled by Intel's Tofino compiler: `bf-p4c`, the driver of the open Tofino
//! back end that p4lang/p4c carries (`backends/tofino`), for `--target tofino --arch tna`.
//!
//! The compiler is not part of this repository and takes hours to build; it is found through
//! [`COMPILER_ENV`] (the path of `bf-p4c`), else at [`CACHE_PATH`] under the home folder, else
//! on the `PATH`. [`compile`] writes the program's files into a folder, runs the compiler there
//! and reads back what it reports: the stages the program takes, and the resources of its
//! `metrics.json` (SRAM, TCAM, map RAM, logical tables, crossbar and action bus bytes, PHV
//! containers and bits); or, for a program it refuses, its error lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The environment variable that names the compiler (`.../build/bf-p4c`).
pub const COMPILER_ENV: &str = "HORUS_BF_P4C";

/// Where a build of the compiler is looked for under the home folder.
pub const CACHE_PATH: &str = ".cache/horus-p4c/build/bf-p4c";

/// Tofino 1's match-action stages per pipe.
pub const TOFINO_STAGES: u32 = 12;

/// The compiler, if a working one is found (`bf-p4c --version` succeeds); else why not. An error
/// if [`COMPILER_ENV`] names one that is not there or does not run: that was asked for.
pub fn find_compiler() -> Result<Result<PathBuf, String>> {
    if let Some(p) = std::env::var_os(COMPILER_ENV) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("{COMPILER_ENV}={}: no such file", p.display());
        }
        version(&p).with_context(|| format!("{COMPILER_ENV}={}", p.display()))?;
        return Ok(Ok(p));
    }
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(CACHE_PATH));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&paths).map(|d| d.join("bf-p4c")));
    }
    let mut broken = Vec::new();
    for c in candidates.into_iter().filter(|c| c.is_file()) {
        match version(&c) {
            Ok(_) => return Ok(Ok(c)),
            Err(e) => broken.push(format!(
                "{} does not run ({e:#}: an unfinished build?)",
                c.display()
            )),
        }
    }
    let mut why = format!(
        "no Tofino compiler (bf-p4c) found: build one with scripts/p4c.sh (about two hours; it \
         puts it at ~/{CACHE_PATH}), or set {COMPILER_ENV} to the bf-p4c of a p4lang/p4c build \
         with its Tofino back end (docs/p4.md)"
    );
    for b in broken {
        why.push_str("; ");
        why.push_str(&b);
    }
    Ok(Err(why))
}

/// The compiler's version line (`bf-p4c --version`); an error if it does not run.
pub fn version(compiler: &Path) -> Result<String> {
    let out = Command::new(compiler)
        .arg("--version")
        .output()
        .with_context(|| format!("running {}", compiler.display()))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!("`{} --version` failed: {last}", compiler.display());
    }
    Ok(text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string())
}

/// A resource figure the compiler reported: what, how much.
pub type Figure = (String, u64);

/// The compiler's verdict on one program.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The program's file.
    pub program: String,
    /// Whether the compiler produced a binary for it.
    pub ok: bool,
    /// The match-action stages the ingress and egress take (the highest stage any table is
    /// placed in, plus one), when it compiled.
    pub stages: Option<u32>,
    /// The resource figures of `metrics.json`, in its order.
    pub resources: Vec<Figure>,
    /// The compiler's error and warning lines (all of them when it failed).
    pub messages: Vec<String>,
    /// The registers whose stateful ALUs the compiler placed in more than one stage, with the
    /// stages (from `pipe/context.json`, also where the assembler refused the program): each
    /// stage's copy keeps cells of its own, so the program would not do what its source says.
    /// bf-p4c at `34b86e9` does this without an error when the tables of one register cannot
    /// share a stage (`idle_ctl`'s pop and push, a stage apart).
    pub split_registers: Vec<(String, Vec<u64>)>,
    /// The compiler's output folder.
    pub out: PathBuf,
    /// Seconds the compiler ran.
    pub seconds: f64,
}

impl Compiled {
    /// Whether the program fits Tofino 1: compiled, in at most [`TOFINO_STAGES`] stages, every
    /// register in one stage.
    pub fn fits(&self) -> bool {
        self.ok
            && self.stages.is_some_and(|s| s <= TOFINO_STAGES)
            && self.split_registers.is_empty()
    }

    /// A figure by name.
    pub fn figure(&self, name: &str) -> Option<u64> {
        self.resources
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// Compiles `program` (a file name among `files`, each written into `dir` first) with `compiler`
/// for Tofino 1 (TNA), output in `dir/out/<program stem>`.
pub fn compile(
    compiler: &Path,
    dir: &Path,
    files: &[(String, String)],
    program: &str,
) -> Result<Compiled> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let stem = Path::new(program)
        .file_stem()
        .and_then(|s| s.to_str())
        .context("a program file name")?;
    let out = dir.join("out").join(stem);
    let _ = std::fs::remove_dir_all(&out);
    let source = dir.join(program);
    let include = source.parent().unwrap_or(dir).to_path_buf();
    let start = std::time::Instant::now();
    let run = Command::new(compiler)
        // -g: the logs under pipe/logs (resources.json), where the resources are read.
        .args([
            "--target", "tofino", "--arch", "tna", "--std", "p4-16", "-g",
        ])
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .output()
        .with_context(|| format!("running {}", compiler.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    let text =
        String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    let _ = std::fs::write(dir.join(format!("{stem}.compiler.log")), &text);
    let messages = messages(&text, run.status.success());
    let ok = run.status.success() && out.join("pipe").is_dir();
    let (stages, resources) = if ok {
        (stages_used(&out)?, metrics(&out)?)
    } else {
        (None, Vec::new())
    };
    let context = out.join("pipe/context.json");
    let split_registers = if context.is_file() {
        split_registers(&read_json(&context)?)
    } else {
        Vec::new()
    };
    Ok(Compiled {
        program: program.to_string(),
        ok,
        stages,
        resources,
        messages,
        split_registers,
        out,
        seconds,
    })
}

/// The registers (`stateful` tables of `context.json`) placed in more than one stage, by their
/// short names, with the stages.
pub fn split_registers(context: &serde_json::Value) -> Vec<(String, Vec<u64>)> {
    let tables = context["tables"].as_array().map_or(&[][..], Vec::as_slice);
    tables
        .iter()
        .filter(|t| t["table_type"] == "stateful")
        .filter_map(|t| {
            let mut stages: Vec<u64> = t["stage_tables"]
                .as_array()?
                .iter()
                .filter_map(|s| s["stage_number"].as_u64())
                .collect();
            stages.sort_unstable();
            stages.dedup();
            let name = t["name"].as_str()?;
            (stages.len() > 1)
                .then(|| (name.rsplit('.').next().unwrap_or(name).to_string(), stages))
        })
        .collect()
}

/// The compiler's errors, each with the lines that follow it up to the next message, then how
/// many warnings it gave; every line when it failed without a recognizable error.
fn messages(text: &str, success: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut warnings = 0;
    let mut in_error = false;
    for line in text.lines() {
        let l = line.to_ascii_lowercase();
        if l.contains("error:") {
            out.push(line.to_string());
            in_error = true;
        } else if l.contains("warning:") {
            warnings += 1;
            in_error = false;
        } else if in_error && !line.trim().is_empty() && out.len() < 400 {
            out.push(line.to_string());
        } else {
            in_error = false;
        }
    }
    if out.is_empty() && !success {
        out = text.lines().map(str::to_string).collect();
    }
    if warnings > 0 {
        out.push(format!("({warnings} warnings)"));
    }
    out
}

/// A JSON file the compiler wrote.
pub fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The stages the program's tables take: one more than the highest `stage_number` of any table
/// in `pipe/context.json` (under `tables`: its `phv_allocation` numbers the deparser as a
/// stage past the last).
fn stages_used(out: &Path) -> Result<Option<u32>> {
    Ok(stages_of_tables(&read_json(
        &out.join("pipe/context.json"),
    )?))
}

/// [`stages_used`] of a parsed `context.json`.
pub fn stages_of_tables(context: &serde_json::Value) -> Option<u32> {
    let mut highest: Option<u64> = None;
    let mut stack = vec![&context["tables"]];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(s) = m.get("stage_number").and_then(serde_json::Value::as_u64) {
                    highest = Some(highest.map_or(s, |h| h.max(s)));
                }
                stack.extend(m.values());
            }
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    highest.map(|h| h as u32 + 1)
}

/// The figures of `pipe/logs/metrics.json`: the MAU's totals and the normal PHV containers'
/// occupancy by width.
fn metrics(out: &Path) -> Result<Vec<Figure>> {
    let path = out.join("pipe/logs/metrics.json");
    if !path.is_file() {
        // bf-p4c as `scripts/p4c.sh` builds it writes no metrics.json: the same counts from the
        // per-stage allocation it writes.
        return Ok(stage_resources(&read_json(
            &out.join("pipe/logs/resources.json"),
        )?));
    }
    let json = read_json(&path)?;
    let mut figures = Vec::new();
    if let Some(mau) = json.get("mau").and_then(serde_json::Value::as_object) {
        for key in [
            "srams",
            "tcams",
            "map_rams",
            "logical_tables",
            "exact_crossbar_bytes",
            "ternary_crossbar_bytes",
            "action_bus_bytes",
        ] {
            if let Some(v) = mau.get(key).and_then(serde_json::Value::as_u64) {
                figures.push((key.to_string(), v));
            }
        }
    }
    if let Some(normal) = json
        .pointer("/phv/normal")
        .and_then(serde_json::Value::as_array)
    {
        for t in normal {
            let w = t.get("bit_width").and_then(serde_json::Value::as_u64);
            let c = t
                .get("containers_occupied")
                .and_then(serde_json::Value::as_u64);
            let b = t.get("bits_occupied").and_then(serde_json::Value::as_u64);
            if let (Some(w), Some(c), Some(b)) = (w, c, b) {
                figures.push((format!("phv_{w}bit_containers"), c));
                figures.push((format!("phv_{w}bit_bits"), b));
            }
        }
    }
    Ok(figures)
}

/// The MAU's resources a compiled program takes, summed over its stages, from
/// `pipe/logs/resources.json` (`resources.mau.mau_stages[]`): SRAM and TCAM blocks, map RAMs,
/// logical tables, gateways, stateful ALUs, hash distribution units, crossbar bytes (exact and
/// ternary) and action bus bytes.
pub fn stage_resources(json: &serde_json::Value) -> Vec<Figure> {
    let stages = json
        .pointer("/resources/mau/mau_stages")
        .and_then(serde_json::Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let count = |pointer: &str, keep: &dyn Fn(&serde_json::Value) -> bool| -> u64 {
        stages
            .iter()
            .filter_map(|st| st.pointer(pointer).and_then(serde_json::Value::as_array))
            .flatten()
            .filter(|v| keep(v))
            .count() as u64
    };
    let all = |_: &serde_json::Value| true;
    let stateful = |m: &serde_json::Value| {
        m["usages"]
            .as_array()
            .is_some_and(|u| u.iter().any(|u| u["used_for"] == "stateful_ram"))
    };
    let byte_type = |t: &'static str| move |b: &serde_json::Value| b["byte_type"] == t;
    vec![
        ("srams".to_string(), count("/rams/srams", &all)),
        ("tcams".to_string(), count("/tcams/tcams", &all)),
        ("map_rams".to_string(), count("/map_rams/maprams", &all)),
        (
            "logical_tables".to_string(),
            count("/logical_tables/ids", &all),
        ),
        ("gateways".to_string(), count("/gateways/gateways", &all)),
        (
            "stateful_alus".to_string(),
            count("/meter_alus/meters", &stateful),
        ),
        (
            "hash_distribution_units".to_string(),
            count("/hash_distribution_units/units", &all),
        ),
        (
            "exact_crossbar_bytes".to_string(),
            count("/xbar_bytes/bytes", &byte_type("exact")),
        ),
        (
            "ternary_crossbar_bytes".to_string(),
            count("/xbar_bytes/bytes", &byte_type("ternary")),
        ),
        (
            "action_bus_bytes".to_string(),
            count("/action_bus_bytes/bytes", &all),
        ),
    ]
}

/// What `rtl-gen --target p4 --compile` prints for one program.
pub fn report(role: horus_model::config::Role, c: &Compiled) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if c.ok {
        let stages = c
            .stages
            .map_or("an unknown number of".to_string(), |n| n.to_string());
        let _ = writeln!(
            s,
            "{role}: {}: compiled in {:.0} s, {stages} stages of {TOFINO_STAGES}: {}",
            c.program,
            c.seconds,
            if c.fits() {
                "fits Tofino 1"
            } else {
                "does not fit Tofino 1"
            }
        );
        let figures: Vec<String> = c
            .resources
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        let _ = writeln!(s, "{role}: {}", figures.join(", "));
        split_lines(&mut s, role, c);
    } else {
        let _ = writeln!(
            s,
            "{role}: {}: refused by the compiler ({:.0} s):",
            c.program, c.seconds
        );
        for m in c.messages.iter().take(60) {
            let _ = writeln!(s, "  {m}");
        }
        if c.messages.len() > 60 {
            let _ = writeln!(s, "  ... ({} more lines)", c.messages.len() - 60);
        }
        split_lines(&mut s, role, c);
    }
    s
}

/// A line per register the compiler split over stages.
fn split_lines(s: &mut String, role: horus_model::config::Role, c: &Compiled) {
    use std::fmt::Write;
    for (r, st) in &c.split_registers {
        let _ = writeln!(
            s,
            "{role}: register {r} placed in stages {st:?}: a copy a stage, which the program does not mean"
        );
    }
}

/// Per table of a compiled program's `bfrt.json` (its name after the pipe), its actions' and its
/// fields' short names.
pub type BfrtNames = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

/// Every name the compiled program's `bfrt.json` offers a `bfrt_python` script: per table (its
/// name after the pipe, e.g. `HorusLeafIngress.pool_cfg`), its actions' short names and every
/// field's short name (keys, action parameters, register data); a range key is given as
/// `NAME_start` and `NAME_end`, a ternary one as `NAME` and `NAME_mask`, a prefix as `NAME` and
/// `NAME_p_length`, as `bfrt_python` takes them.
pub fn bfrt_names(bfrt: &serde_json::Value) -> BfrtNames {
    let short = |s: &str| s.rsplit('.').next().unwrap_or(s).to_string();
    let mut out = BTreeMap::new();
    for t in bfrt["tables"].as_array().expect("bfrt.json has tables") {
        let name = t["name"].as_str().unwrap_or_default();
        let name = name.strip_prefix("pipe.").unwrap_or(name).to_string();
        let mut actions = BTreeSet::new();
        let mut fields = BTreeSet::new();
        for k in t["key"].as_array().into_iter().flatten() {
            let name = short(k["name"].as_str().unwrap_or_default());
            match k["match_type"].as_str() {
                Some("Range") => {
                    fields.insert(format!("{name}_start"));
                    fields.insert(format!("{name}_end"));
                }
                Some("Ternary") => {
                    fields.insert(format!("{name}_mask"));
                    fields.insert(name);
                }
                Some("LPM") => {
                    fields.insert(format!("{name}_p_length"));
                    fields.insert(name);
                }
                _ => {
                    fields.insert(name);
                }
            }
        }
        for a in t["action_specs"].as_array().into_iter().flatten() {
            actions.insert(short(a["name"].as_str().unwrap_or_default()));
            for d in a["data"].as_array().into_iter().flatten() {
                fields.insert(short(d["name"].as_str().unwrap_or_default()));
            }
        }
        for d in t["data"].as_array().into_iter().flatten() {
            let field = if d["singleton"].is_object() {
                &d["singleton"]
            } else {
                d
            };
            fields.insert(short(field["name"].as_str().unwrap_or_default()));
        }
        out.insert(name, (actions, fields));
    }
    out
}

/// The problems of `script` (a `bfrt_python` set-up) against `names`: each `ig.T.` or `eg.T.`
/// call's table, its `add_with_A` / `set_default_with_A` action and its keyword arguments.
pub fn script_problems(script: &str, ingress: &str, names: &BfrtNames) -> Vec<String> {
    let mut problems = Vec::new();
    for line in script.lines().map(str::trim) {
        let (control, rest) = if let Some(r) = line.strip_prefix("ig.") {
            (ingress, r)
        } else if let Some(r) = line.strip_prefix("eg.") {
            ("HorusEgress", r)
        } else {
            continue;
        };
        let Some((table, call)) = rest.split_once('.') else {
            continue;
        };
        let Some((method, args)) = call.split_once('(') else {
            continue;
        };
        let key = format!("{control}.{table}");
        let Some((actions, fields)) = names.get(&key) else {
            problems.push(format!("no table {key}: {line}"));
            continue;
        };
        let action = method
            .strip_prefix("add_with_")
            .or_else(|| method.strip_prefix("set_default_with_"));
        if let Some(a) = action
            && !actions.contains(a)
        {
            problems.push(format!("{key} has no action {a}: {line}"));
        }
        for arg in args.trim_end_matches(')').split(',') {
            let Some((k, _)) = arg.split_once('=') else {
                continue;
            };
            let k = k.trim();
            if k != "REGISTER_INDEX" && !fields.contains(k) {
                problems.push(format!("{key} has no field {k}: {line}"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `bfrt.json` of one table and one register, in the layout the BF-RT schema gives
    /// (`tables[].name`, `key[].name`, `action_specs[].name` and `.data[].name`, `data[].singleton`).
    const BFRT: &str = r#"{"tables": [
        {"name": "pipe.HorusLeafIngress.pool_cfg", "table_type": "MatchAction_Direct",
         "key": [{"id": 1, "name": "md.pool_id", "match_type": "Exact"},
                 {"id": 2, "name": "md.r1", "match_type": "Range"}],
         "action_specs": [{"id": 1, "name": "HorusLeafIngress.set_pool",
                           "data": [{"id": 1, "name": "base"}, {"id": 2, "name": "n"}]}],
         "data": []},
        {"name": "pipe.HorusLeafIngress.members1", "table_type": "Register",
         "key": [{"id": 1, "name": "$REGISTER_INDEX"}],
         "data": [{"mandatory": false, "read_only": false,
                   "singleton": {"id": 1, "name": "HorusLeafIngress.members1.f1"}}]}
    ]}"#;

    #[test]
    fn a_set_up_is_checked_against_the_compiled_names() {
        let names = bfrt_names(&serde_json::from_str(BFRT).unwrap());
        let good = "ig.pool_cfg.add_with_set_pool(pool_id=1, r1_start=0, r1_end=9, base=0, n=8)\n\
                    ig.members1.mod(REGISTER_INDEX=0, f1=65535)\n";
        assert_eq!(
            script_problems(good, "HorusLeafIngress", &names),
            Vec::<String>::new()
        );
        let bad = "ig.pool_cfg.add_with_set_pools(pool_id=1)\n\
                   ig.pool_cfg.add_with_set_pool(pool=1, base=0, r1=0, n=8)\n\
                   ig.members3.mod(REGISTER_INDEX=0, f1=1)\n\
                   eg.pool_cfg.add_with_set_pool(pool_id=1)\n";
        let p = script_problems(bad, "HorusLeafIngress", &names);
        assert_eq!(p.len(), 5, "{p:#?}");
        assert!(p[0].contains("no action set_pools"));
        assert!(p[1].contains("no field pool:"));
        assert!(p[2].contains("no field r1:"));
        assert!(p[3].contains("no table HorusLeafIngress.members3"));
        assert!(p[4].contains("no table HorusEgress.pool_cfg"));
    }
}

/// One line that says what the compiler made of `role`'s program, free of paths and of line
/// numbers that move with unrelated edits: `leaf fits 12`, `leaf over 14` (compiled, more stages
/// than Tofino 1 has: the assembler refuses it), or `leaf refused <its first error>`.
pub fn verdict(role: horus_model::config::Role, c: &Compiled) -> String {
    let split: String = c
        .split_registers
        .iter()
        .map(|(r, st)| {
            let st: Vec<String> = st.iter().map(u64::to_string).collect();
            format!(", {r} split over stages {}", st.join(" and "))
        })
        .collect();
    verdict_of_placement(role, c) + &split
}

/// [`verdict`] without the registers the compiler split.
fn verdict_of_placement(role: horus_model::config::Role, c: &Compiled) -> String {
    match (c.ok, c.stages.or_else(|| stages_refused(&c.messages))) {
        (true, Some(s)) if s <= TOFINO_STAGES => format!("{role} fits {s}"),
        (_, Some(s)) if s > TOFINO_STAGES => format!("{role} over {s}"),
        (true, _) => format!("{role} compiled, stages unknown"),
        (false, _) => {
            let first = c
                .messages
                .iter()
                .find(|m| m.to_ascii_lowercase().contains("error"))
                .or(c.messages.first())
                .map_or("", String::as_str);
            format!("{role} refused {}", without_location(first))
        }
    }
}

/// The stages of a program the assembler refused for its length ("tofino supports up to 12
/// stages, using 16"): the back end compiled it.
fn stages_refused(messages: &[String]) -> Option<u32> {
    messages.iter().find_map(|m| {
        let rest = &m[m.find("stages, using ")? + "stages, using ".len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// The structural checker's rule ([`super::check::REFUSAL_RULES`]) that a compiler error is an
/// instance of, by the compiler's wording; `None` for an error the checker has no rule for yet.
pub fn checker_rule(message: &str) -> Option<&'static str> {
    use super::check::{
        ACTION_CONDITION, LIST_CONSTANT, SALU_COMPARISONS, SALU_PHV_INPUTS, SALU_SLICE,
        SALU_TWO_FIELDS, SALU_TWO_WORDS,
    };
    let m = message.to_ascii_lowercase();
    [
        ("comparison units", SALU_COMPARISONS),
        ("slice of register value in condition", SALU_SLICE),
        ("conditions in an action must", ACTION_CONDITION),
        ("in digest field list", LIST_CONSTANT),
        ("more than 2 phv inputs", SALU_PHV_INPUTS),
        (
            "more than one memory operand to an salu compare",
            SALU_TWO_WORDS,
        ),
        ("can't reference phv in first operand", SALU_TWO_FIELDS),
    ]
    .into_iter()
    .find(|(words, _)| m.contains(words))
    .map(|(_, rule)| rule)
}

/// The compiler's error lines.
pub fn errors(c: &Compiled) -> Vec<&str> {
    c.messages
        .iter()
        .map(String::as_str)
        .filter(|m| m.to_ascii_lowercase().contains("error"))
        .collect()
}

/// A compiler message without its `file(line):`, `file:line:col:` or (the assembler's)
/// `file.bfa:line:` prefix.
fn without_location(message: &str) -> String {
    let m = message.trim();
    for marker in [".p4(", ".p4:", ".bfa:"] {
        if let Some(at) = m.find(marker) {
            let rest = &m[at + marker.len()..];
            let skip = rest
                .find(": ")
                .map_or(rest.len(), |i| i + 2)
                .min(rest.len());
            return rest[skip..].trim().to_string();
        }
    }
    m.to_string()
}

#[cfg(test)]
mod verdict_tests {
    use super::without_location;

    #[test]
    fn locations_are_taken_off_messages() {
        assert_eq!(
            without_location("/tmp/x-1/p4/horus_leaf.p4(185): error: too many conditions"),
            "error: too many conditions"
        );
        assert_eq!(
            without_location("/tmp/x-1/p4/horus_common.p4:12:3: error: bad"),
            "error: bad"
        );
        assert_eq!(
            without_location("/tmp/x-1/out/s/pipe/s.bfa:1847: error: two memory operands"),
            "error: two memory operands"
        );
        assert_eq!(without_location("error: no file"), "error: no file");
        assert_eq!(
            super::stages_refused(&[
                "warning: x".into(),
                "/o/s.bfa:4927: error: tofino supports up to 12 stages, using 16".into()
            ]),
            Some(16)
        );
        assert_eq!(super::stages_refused(&["error: other".into()]), None);
    }

    /// The stages are the tables' (the PHV allocation's stage past the last, the deparser's,
    /// does not count).
    #[test]
    fn the_stages_are_the_tables() {
        let context = serde_json::json!({
            "tables": [{"stage_tables": [{"stage_number": 11}]}, {"stage_tables": [{"stage_number": 3}]}],
            "phv_allocation": [{"stage_number": 12}],
        });
        assert_eq!(super::stages_of_tables(&context), Some(12));
    }

    /// The resources of `resources.json`, summed over the stages.
    #[test]
    fn resources_are_summed_over_the_stages() {
        let stage = serde_json::json!({
            "rams": {"srams": [{"row": 0}, {"row": 1}]},
            "tcams": {"tcams": [{"row": 0}]},
            "map_rams": {"maprams": []},
            "logical_tables": {"ids": [{"id": 0}]},
            "gateways": {"gateways": [{"row": 7}]},
            "meter_alus": {"meters": [
                {"usages": [{"used_by": "I.idle_ctl", "used_for": "stateful_ram"}]},
                {"usages": [{"used_by": "I.m", "used_for": "meter_ram"}]}]},
            "hash_distribution_units": {"units": [{"unit_id": 0}]},
            "xbar_bytes": {"bytes": [{"byte_type": "exact"}, {"byte_type": "ternary"}]},
            "action_bus_bytes": {"bytes": [{"byte_number": 96}]},
        });
        let json =
            serde_json::json!({"resources": {"mau": {"mau_stages": [stage.clone(), stage]}}});
        let got: std::collections::BTreeMap<String, u64> =
            super::stage_resources(&json).into_iter().collect();
        for (k, v) in [
            ("srams", 4),
            ("tcams", 2),
            ("map_rams", 0),
            ("logical_tables", 2),
            ("gateways", 2),
            ("stateful_alus", 2),
            ("hash_distribution_units", 2),
            ("exact_crossbar_bytes", 2),
            ("ternary_crossbar_bytes", 2),
            ("action_bus_bytes", 2),
        ] {
            assert_eq!(got[k], v, "{k}");
        }
    }

    /// A register whose stateful ALU the compiler placed in two stages is found in
    /// `context.json` (as bf-p4c left the leaf's `idle_ctl`, its push a stage before its pop).
    #[test]
    fn a_register_placed_in_two_stages_is_found() {
        let context = serde_json::json!({"tables": [
            {"name": "I.idle_ctl", "table_type": "stateful",
             "stage_tables": [{"stage_number": 3}, {"stage_number": 4}]},
            {"name": "I.members1", "table_type": "stateful",
             "stage_tables": [{"stage_number": 5}]},
            {"name": "I.ctl_pop", "table_type": "match",
             "stage_tables": [{"stage_number": 4}]},
        ]});
        assert_eq!(
            super::split_registers(&context),
            [("idle_ctl".to_string(), vec![3, 4])]
        );
    }

    /// The compiler's wording of each refusal the checker knows (quoted from bf-p4c's sources,
    /// `backends/tofino/bf-p4c/mau/stateful_alu.cpp`, `mau/instruction_selection.cpp`,
    /// `parde/extract_deparser.cpp` at p4c 34b86e9) maps to its rule.
    #[test]
    fn the_compilers_errors_map_to_the_checkers_rules() {
        use super::super::check::*;
        use super::checker_rule;
        for (m, rule) in [
            (
                "x.p4(185): [--Werror=overlimit] error: conn_follow_ra: register action x.conn_follow_ra needs 4 comparisons but the device only has 2 comparison units.",
                Some(SALU_COMPARISONS),
            ),
            (
                "x.p4(176): [--Werror=unsupported] error: slice of register value in condition is not supported",
                Some(SALU_SLICE),
            ),
            (
                "x.p4(12): [--Werror=unsupported] error: Conditions in an action must be simple comparisons of an action data parameter",
                Some(ACTION_CONDITION),
            ),
            (
                "x.p4(73): [--Werror=unsupported] error: Non-zero constant value 8w1 in digest field list is not supported on tofino.",
                Some(LIST_CONSTANT),
            ),
            (
                "error: x.p4(865): Could not place table I.drift1_settle: The table drift1_settle_0 could not fit within the input crossbar by itself: I.drift1 requires more than 2 PHV inputs",
                Some(SALU_PHV_INPUTS),
            ),
            (
                "out/pipe/x.bfa:1847: error: Can't have more than one memory operand to an SALU compare",
                Some(SALU_TWO_WORDS),
            ),
            (
                "out/pipe/x.bfa:5851: error: Can't reference phv in first operand of ssubu instruction",
                Some(SALU_TWO_FIELDS),
            ),
            ("error: PHV allocation was not successful", None),
        ] {
            assert_eq!(checker_rule(m), rule, "{m}");
        }
    }
}
