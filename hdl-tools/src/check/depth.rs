//! The logic depth of a synthesized netlist: the longest register-to-register path in LUT
//! levels, from a walk of Yosys' JSON netlist.

use serde_json::Value;

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
///   [`yosys_synth`](super::yosys_synth) runs it, the switches have none);
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
pub(super) fn readable(described: &str) -> String {
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
pub(super) fn register(described: &str) -> String {
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
