//! Verilog emission: rust-hdl's generator plus one normalization.
//!
//! rust-hdl writes a constant part-select as `x[(64'h2a)+:(16)]` (struct fields) or
//! `x[(32'h10)+:(16)]` (`get_bits`). The sized offset makes `verilator -Wall` warn (WIDTH: the index
//! needs only as many bits as the vector). The same offset as an unsized decimal, `x[42 +: 16]`,
//! means the same thing and lints clean. A part-select of a part-select, `x[26 +: 16][0 +: 6]`
//! (a field's low bits), is valid SystemVerilog that Yosys 0.23 rejects; it is folded into
//! `x[26 +: 6]`. Every Verilog we emit goes through [`normalize`].
//!
//! One addition: a memory of at least [`URAM_MIN_WORDS`] words or [`URAM_MIN_BITS`] bits (a
//! leaf's node-indexed tables, the frame buffer) is marked `(* ram_style = "ultra" *)`, so that
//! synthesis for UltraScale+ puts it in UltraRAM (URAM288: 4,096 x 72 bits) and keeps the block
//! RAM for the smaller tables ([`ram_styles`]). Simulators ignore the attribute.
//!
//! And every flip-flop (rust-hdl's `DFF`, a module `(d,q,clock)`) is marked
//! `(* shreg_extract = "no" *)` ([`no_shift_registers`]): a pass's descriptor moves through the
//! stages as a chain of registers, which synthesis would otherwise pack into shift registers
//! (SRL16E), and a stage reading a field would read it from an SRL, as slow as a LUT level more
//! than from a flip-flop. Yosys 0.23 ignores the attribute; `check` synthesizes with `-nosrl`, the
//! same choice.
//!
//! And a stage's local signal whose name ends in `_cut` is marked `(* keep *)` ([`keep_cuts`]):
//! synthesis keeps the net, so the logic behind it is mapped apart from the logic after it. A
//! stage cuts where a carry chain's output meets logic formed beside the chain: Yosys' LUT mapper
//! (ABC) sees a carry output as ready at the start of the cycle, like a register's, and would
//! otherwise mix the chain's output into that logic's first levels, where it is deepest. The net
//! then exists as a LUT's output, though ABC may still copy its logic into a consumer that it
//! finds shallower so (measured: `poolAvg`'s report enables, when each was kept apart, were
//! merged into their outcomes' LUTs behind a LUT on the chains' outputs): a kept net fixes that a
//! LUT ends there, not how deep the logic on either side of it is. Simulators ignore the
//! attribute.
//!
//! And the result is Verilog-2005, which every reader takes ([`assigned_nets`]): rust-hdl declares
//! every output `output reg` and every local signal `reg`, right for the `always` blocks it writes
//! but not for the hand-written primitives (`Verilog::Custom`), which drive theirs with `assign`.
//! A continuous assignment to a variable is SystemVerilog: Verilator and `iverilog -g2012` take
//! it, while `iverilog -g2005`, Yosys without `-sv` and Vivado reading a `.v` file (`read_verilog`,
//! as the OpenNIC and NetFPGA-PLUS build scripts do) refuse it. Such a signal is declared a net.
//! [`emit`] starts the text with `` `timescale 1ns/1ps ``: a shell's own modules carry one, and
//! Verilator refuses a design whose modules have a time scale in some files and none in others
//! (TIMESCALEMOD) when the plug-in is read first.

use rust_hdl::prelude::{Block, generate_verilog};

/// The time scale every emitted file starts with.
pub const TIMESCALE: &str = "`timescale 1ns/1ps\n";

/// The Verilog of `block`, normalized, after [`TIMESCALE`].
pub fn emit<B: Block>(block: &B) -> String {
    format!("{TIMESCALE}{}", normalize(&generate_verilog(block)))
}

/// The Verilog of `block` with its top module called `name` (rust-hdl calls it `top` and its
/// sub-modules `top$...`).
pub fn emit_named<B: Block>(block: &B, name: &str) -> String {
    emit(block)
        .replace("module top(", &format!("module {name}("))
        .replace("top$", &format!("{name}$"))
}

/// Rewrites every `[(S'hH)+:(W)]` (any size `S`) into `[D +: W]` with `D` the decimal value of `H`,
/// then folds nested constant part-selects.
pub fn normalize(v: &str) -> String {
    assigned_nets(&keep_cuts(&no_shift_registers(&ram_styles(&fold_nested(
        &unsize(v),
    )))))
}

/// Declares as a net (`output wire`, `wire`) every `output reg` or `reg` of a module that the
/// module drives with a continuous assignment (`assign x = ...`, `assign {x, y} = ...`), module by
/// module. Attributes before a declaration stay.
pub fn assigned_nets(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut module: Vec<&str> = Vec::new();
    let flush = |module: &mut Vec<&str>, out: &mut String| {
        let targets = assign_targets(module);
        for line in module.drain(..) {
            match as_net(line, &targets) {
                Some(net) => out.push_str(&net),
                None => out.push_str(line),
            }
        }
    };
    for line in v.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("module ") {
            flush(&mut module, &mut out);
        }
        module.push(line);
        if t.starts_with("endmodule") {
            flush(&mut module, &mut out);
        }
    }
    flush(&mut module, &mut out);
    out
}

/// The names a module's lines assign continuously.
fn assign_targets(lines: &[&str]) -> std::collections::BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect()
    };
    let mut names = std::collections::BTreeSet::new();
    for line in lines {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("assign") {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + "assign".len()..];
            rest = after;
            let word_start =
                before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'));
            if !word_start || !after.starts_with(|c: char| c.is_whitespace()) {
                continue;
            }
            let lhs = after.trim_start();
            if let Some(group) = lhs.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                for part in group.split(',') {
                    let name = ident(part.trim());
                    if !name.is_empty() {
                        names.insert(name);
                    }
                }
            } else {
                let name = ident(lhs);
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
    }
    names
}

/// `line` with its `reg` turned into `wire`, if it declares one of `targets` (`output reg ... x;`
/// or `reg ... x;`, after any attributes).
fn as_net(line: &str, targets: &std::collections::BTreeSet<String>) -> Option<String> {
    let t = line.trim_start();
    let mut decl = t;
    while let Some(rest) = decl.strip_prefix("(*") {
        decl = rest.split_once("*)")?.1.trim_start();
    }
    let kw = if decl.starts_with("output reg ") {
        "output reg"
    } else if decl.starts_with("reg ") {
        "reg"
    } else {
        return None;
    };
    let name = decl
        .trim_end()
        .strip_suffix(';')?
        .split_whitespace()
        .last()?;
    if !targets.contains(name) {
        return None;
    }
    let at = line.len() - decl.len();
    let net = kw.replace("reg", "wire");
    Some(format!("{}{net}{}", &line[..at], &line[at + kw.len()..]))
}

/// Marks every `reg` declaration of a signal whose name ends in `_cut` with `(* keep *)`.
pub fn keep_cuts(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for line in v.split_inclusive('\n') {
        let t = line.trim_start();
        let cut = t.strip_prefix("reg ").is_some_and(|r| {
            r.trim_end()
                .strip_suffix(';')
                .and_then(|d| d.split_whitespace().last())
                .is_some_and(|name| name.ends_with("_cut"))
        });
        if cut {
            out.push_str(&line[..line.len() - t.len()]);
            out.push_str("(* keep *) ");
            out.push_str(t);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Marks the `q` of every flip-flop module (`module <name>(d,q,clock);`, rust-hdl's `DFF`) with
/// `(* shreg_extract = "no" *)`, and that of a synchronizer's flip-flop (a `DFF` whose name ends
/// in `_meta` or `_sync`: the two flip-flops a signal from another clock domain goes through)
/// with `(* ASYNC_REG = "TRUE" *)` too, so that Vivado places the pair together and treats the
/// first as possibly metastable.
pub fn no_shift_registers(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + v.len() / 64);
    let (mut in_dff, mut sync) = (false, false);
    for line in v.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("module ") {
            let name = t.trim_end().strip_suffix("(d,q,clock);");
            in_dff = name.is_some();
            sync = name.is_some_and(|n| n.ends_with("_meta") || n.ends_with("_sync"));
        } else if in_dff && t.starts_with("output reg ") && t.trim_end().ends_with(" q;") {
            in_dff = false;
            out.push_str(&line[..line.len() - t.len()]);
            if sync {
                out.push_str("(* ASYNC_REG = \"TRUE\", shreg_extract = \"no\" *) ");
            } else {
                out.push_str("(* shreg_extract = \"no\" *) ");
            }
            out.push_str(t);
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Memories at least this deep go to UltraRAM (its depth).
pub const URAM_MIN_WORDS: u64 = 4096;
/// Memories at least this large go to UltraRAM (a quarter of a megabit: eight RAMB36).
pub const URAM_MIN_BITS: u64 = 256 * 1024;

/// Marks every memory declaration `reg[W:0] mem[D:0];` (rust-hdl's RAM) of at least
/// `URAM_MIN_WORDS` words or `URAM_MIN_BITS` bits with `(* ram_style = "ultra" *)`.
pub fn ram_styles(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for line in v.split_inclusive('\n') {
        let t = line.trim_start();
        let big = t
            .strip_prefix("reg[")
            .and_then(|r| {
                let (w, r) = r.split_once(":0] mem[")?;
                let (d, r) = r.split_once(":0];")?;
                r.trim().is_empty().then_some(())?;
                Some((w.parse::<u64>().ok()? + 1, d.parse::<u64>().ok()? + 1))
            })
            .is_some_and(|(w, d)| d >= URAM_MIN_WORDS || w * d >= URAM_MIN_BITS);
        if big {
            out.push_str(&line[..line.len() - t.len()]);
            out.push_str("(* ram_style = \"ultra\" *) ");
            out.push_str(t);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn unsize(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(at) = rest.find("[(") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        match part_select(tail) {
            Some((text, used)) => {
                out.push_str(&text);
                rest = &tail[used..];
            }
            None => {
                out.push_str("[(");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `[A +: W][B +: V]` (decimal constants, `B + V <= W`) becomes `[A+B +: V]`, repeatedly.
fn fold_nested(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some((mut a, mut w, mut used)) = select(tail) else {
            out.push('[');
            rest = &tail[1..];
            continue;
        };
        while let Some((b, v, more)) = select(&tail[used..]).filter(|(b, v, _)| b + v <= w) {
            a += b;
            w = v;
            used += more;
        }
        out.push_str(&format!("[{a} +: {w}]"));
        rest = &tail[used..];
    }
    out.push_str(rest);
    out
}

/// Parses `[A +: W]` (decimal) at the start of `t`: `(A, W, bytes used)`.
fn select(t: &str) -> Option<(u64, u64, usize)> {
    let t2 = t.strip_prefix('[')?;
    let plus = t2.find(" +: ")?;
    let a: u64 = t2[..plus].parse().ok()?;
    let close = t2.find(']')?;
    let w: u64 = t2[plus + 4..close].parse().ok()?;
    Some((a, w, close + 2))
}

/// Parses `S'hH)+:(W)]` at the start of `t`: the rewritten select and the bytes it used.
fn part_select(t: &str) -> Option<(String, usize)> {
    let quote = t.find("'h")?;
    t[..quote].parse::<u32>().ok()?;
    let close = t.find(")+:(")?;
    let offset = u64::from_str_radix(&t[quote + 2..close], 16).ok()?;
    let after = &t[close + 4..];
    let end = after.find(")]")?;
    let width: u64 = after[..end].parse().ok()?;
    Some((format!("[{offset} +: {width}]"), close + 4 + end + 2))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn sized_part_select_offsets_become_unsized_decimals() {
        assert_eq!(
            normalize("a = s1$q[(64'h2a)+:(16)];"),
            "a = s1$q[42 +: 16];"
        );
        assert_eq!(
            normalize("x[(64'h0)+:(1)] y[(64'h10)+:(32)]"),
            "x[0 +: 1] y[16 +: 32]"
        );
        assert_eq!(normalize("s[(32'h10)+:(16)]"), "s[16 +: 16]");
    }

    #[test]
    fn nested_constant_part_selects_are_folded() {
        assert_eq!(
            normalize("a = p[(64'h1a)+:(16)][(32'h0)+:(6)];"),
            "a = p[26 +: 6];"
        );
        assert_eq!(
            normalize("a = p[4 +: 16][2 +: 8][1 +: 3] + q[0 +: 2];"),
            "a = p[7 +: 3] + q[0 +: 2];"
        );
        assert_eq!(
            normalize("a = p[0 +: 4][2 +: 8];"),
            "a = p[0 +: 4][2 +: 8];",
            "out of range: left alone"
        );
    }

    #[test]
    fn large_memories_are_marked_for_ultraram() {
        let v =
            "    reg[31:0] mem[4095:0];\n    reg[31:0] mem[1023:0];\n    reg[511:0] mem[2047:0];\n";
        assert_eq!(
            normalize(v),
            "    (* ram_style = \"ultra\" *) reg[31:0] mem[4095:0];\n    reg[31:0] mem[1023:0];\n    \
             (* ram_style = \"ultra\" *) reg[511:0] mem[2047:0];\n"
        );
        assert_eq!(
            normalize("reg[31:0] mem[4095:0]; // x"),
            "reg[31:0] mem[4095:0]; // x"
        );
    }

    #[test]
    fn flip_flops_are_kept_out_of_shift_registers() {
        let v = "module t$a$out(d,q,clock);\n    input wire  [3:0] d;\n    output reg  [3:0] q;\n\
                 endmodule\nmodule t$b(x,q);\n    output reg  q;\nendmodule\n";
        assert_eq!(
            normalize(v),
            "module t$a$out(d,q,clock);\n    input wire  [3:0] d;\n    \
             (* shreg_extract = \"no\" *) output reg  [3:0] q;\nendmodule\nmodule t$b(x,q);\n    \
             output reg  q;\nendmodule\n",
            "only a DFF module's q is marked"
        );
    }

    #[test]
    fn synchronizer_flip_flops_are_async_registers() {
        let v = "module t$c$ack_meta(d,q,clock);\n    output reg  q;\nendmodule\n\
                 module t$c$req_sync(d,q,clock);\n    output reg  q;\nendmodule\n\
                 module t$c$synced(d,q,clock);\n    output reg  q;\nendmodule\n";
        assert_eq!(
            normalize(v),
            "module t$c$ack_meta(d,q,clock);\n    \
             (* ASYNC_REG = \"TRUE\", shreg_extract = \"no\" *) output reg  q;\nendmodule\n\
             module t$c$req_sync(d,q,clock);\n    \
             (* ASYNC_REG = \"TRUE\", shreg_extract = \"no\" *) output reg  q;\nendmodule\n\
             module t$c$synced(d,q,clock);\n    \
             (* shreg_extract = \"no\" *) output reg  q;\nendmodule\n",
            "DFFs named *_meta and *_sync are marked ASYNC_REG, no other"
        );
    }

    #[test]
    fn cut_signals_are_kept() {
        let v = "    reg  quiet;\n    reg  add_cut;\n    reg  [31:0] time_cut;\n    reg  cutter;\n    \
                 wire  x_cut;\n    add_cut = a;\n";
        assert_eq!(
            normalize(v),
            "    reg  quiet;\n    (* keep *) reg  add_cut;\n    (* keep *) reg  [31:0] time_cut;\n    \
             reg  cutter;\n    wire  x_cut;\n    add_cut = a;\n",
            "only the declarations of `reg`s named `*_cut`"
        );
    }

    #[test]
    fn continuously_assigned_signals_are_nets() {
        let v = "module t$p(a,y,z,w);\n    input wire  [3:0] a;\n    output reg  [3:0] y;\n    \
                 output reg  z;\n    output reg  w;\n    reg  [1:0] lo;\n    reg  hi;\n    \
                 (* keep *) reg  k_cut;\n    reg  reassign;\n    assign y = a; assign lo = a[1:0];\n    \
                 assign {z, k_cut} = a[3:2]; // assign hi = 1;\n    always @(*) w = reassign;\n\
                 endmodule\nmodule t$q(y);\n    output reg  y;\n    always @(*) y = 1'b0;\nendmodule\n";
        assert_eq!(
            normalize(v),
            "module t$p(a,y,z,w);\n    input wire  [3:0] a;\n    output wire  [3:0] y;\n    \
             output wire  z;\n    output reg  w;\n    wire  [1:0] lo;\n    reg  hi;\n    \
             (* keep *) wire  k_cut;\n    reg  reassign;\n    assign y = a; assign lo = a[1:0];\n    \
             assign {z, k_cut} = a[3:2]; // assign hi = 1;\n    always @(*) w = reassign;\n\
             endmodule\nmodule t$q(y);\n    output reg  y;\n    always @(*) y = 1'b0;\nendmodule\n",
            "assigned outputs and locals of each module become nets; comments, `always` targets, \
             other modules and names that merely contain `assign` do not"
        );
    }

    #[test]
    fn anything_else_is_left_alone() {
        for s in [
            "a = b + 32'h1;",
            "x[(64'hzz)+:(4)]",
            "x[(64'h1)+:(w)]",
            "[(64'h",
            "m[(a)+:(4)]",
            "[(x'h1)+:(2)]",
        ] {
            assert_eq!(normalize(s), s);
        }
    }
}
