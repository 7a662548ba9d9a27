//! `rtl-gen --check`: Verilator's lint, the strict Verilog-2005 readers (`iverilog -g2005`, Yosys
//! without `-sv`) and a Yosys synthesis for UltraScale+ of each generated switch, with its
//! resource figures and, where the logic is deeper than the target, where.

use anyhow::Result;
use horus_hdl_tools::check::{SynthReport, TARGET_LUT_LEVELS};
use horus_pipeline::board::boards::Board;

/// Lint and synthesis of one switch, with its figures.
pub fn check(name: &str, verilog: &str, paths: bool) -> Result<()> {
    let start = std::time::Instant::now();
    horus_hdl_tools::check::verilator_lint_top(name, verilog, name)
        .map_err(|e| anyhow::anyhow!("{name}: Verilator lint failed:\n{e}"))?;
    println!(
        "{name}: verilator --lint-only -Wall clean ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
    strict(name, verilog, name)?;
    let start = std::time::Instant::now();
    let r = horus_hdl_tools::check::yosys_synth_top(name, verilog, name)
        .map_err(|e| anyhow::anyhow!("{name}: Yosys synthesis failed:\n{e}"))?;
    println!(
        "{name}: synth_xilinx -family xcup -uram -nowidelut -nosrl: {r:#} ({:.0} s)",
        start.elapsed().as_secs_f64()
    );
    print!("{}", depth_report(name, &r, paths));
    Ok(())
}

/// Lint and synthesis of a board's plug-in inside the stub of its shell's box (top module
/// `top`), with its figures as a share of the board's part; returns the figures.
pub fn check_board(
    board: &Board,
    name: &str,
    in_box: &str,
    top: &str,
    paths: bool,
) -> Result<SynthReport> {
    let start = std::time::Instant::now();
    horus_hdl_tools::check::verilator_lint_top(name, in_box, top)
        .map_err(|e| anyhow::anyhow!("{name} in {top}: Verilator lint failed:\n{e}"))?;
    println!(
        "{name} in {top}: verilator --lint-only -Wall clean ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
    strict(name, in_box, top)?;
    let start = std::time::Instant::now();
    let r = horus_hdl_tools::check::yosys_synth_top(name, in_box, top)
        .map_err(|e| anyhow::anyhow!("{name} in {top}: Yosys synthesis failed:\n{e}"))?;
    println!(
        "{name} in {top}: synth_xilinx -family xcup -uram -nowidelut -nosrl: {r:#} ({:.0} s)",
        start.elapsed().as_secs_f64()
    );
    print!("{}", utilization(board, &r));
    print!("{}", depth_report(name, &r, paths));
    Ok(r)
}

/// The strict readers' verdict on `verilog` (top module `top`), printed.
fn strict(name: &str, verilog: &str, top: &str) -> Result<()> {
    let start = std::time::Instant::now();
    horus_hdl_tools::check::strict_read(name, verilog, top)
        .map_err(|e| anyhow::anyhow!("{name}: a strict Verilog-2005 reader refused it:\n{e}"))?;
    println!(
        "{name}: iverilog -g2005 and yosys read_verilog (no -sv) clean ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The figures of `r` as a share of `board`'s part, one line per resource.
pub fn utilization(board: &Board, r: &SynthReport) -> String {
    use std::fmt::Write;
    let part = &board.part;
    let mut s = format!("{} ({}):\n", board.name, part.name);
    let rows = [
        ("LUTs", r.luts as f64, part.luts),
        ("FFs", r.ffs as f64, part.ffs),
        ("RAMB36", r.ramb36, part.ramb36),
        ("URAM", r.urams as f64, part.uram),
        ("DSP", r.dsps as f64, part.dsp),
    ];
    for (what, used, has) in rows {
        let _ = writeln!(
            s,
            "  {what:<7} {used:>9} of {has:>9}  {:6.2} %",
            100.0 * used / has as f64
        );
    }
    s
}

/// Where the logic is deeper than the target: the deepest path cell by cell, and the registers
/// (deepest first) a path deeper than the target ends in; with `paths`, each one's path too.
pub fn depth_report(name: &str, r: &SynthReport, paths: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if r.over_target.is_empty() {
        return s;
    }
    let bits: usize = r.over_target.iter().map(|e| e.bits).sum();
    let _ = writeln!(
        s,
        "{name}: {} registers ({bits} bits) end a path deeper than {TARGET_LUT_LEVELS} LUT levels; \
         the deepest path, cell by cell:",
        r.over_target.len()
    );
    for c in &r.path {
        let _ = writeln!(s, "    {c}");
    }
    let _ = writeln!(
        s,
        "{name}: levels, bits over the target, register <- deepest start:"
    );
    for e in &r.over_target {
        let _ = writeln!(s, "  {:3} {:5}  {}  <-  {}", e.levels, e.bits, e.to, e.from);
        if paths {
            for c in &e.path {
                let _ = writeln!(s, "            {c}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_report_lists_the_deepest_path_and_the_registers_over_the_target() {
        use horus_hdl_tools::check::DeepEnd;
        let mut r = SynthReport::default();
        assert_eq!(
            depth_report("t", &r, false),
            "",
            "nothing over the target: nothing to say"
        );
        r.path = vec!["FDRE a".into(), "LUT6".into()];
        r.over_target = vec![DeepEnd {
            levels: 9,
            to: "FDRE b".into(),
            from: "FDRE a".into(),
            bits: 3,
            path: vec!["FDRE a".into(), "LUT3 x".into()],
        }];
        let s = depth_report("t", &r, false);
        assert!(
            s.starts_with("t: 1 registers (3 bits) end a path deeper than 6"),
            "{s}"
        );
        assert!(s.contains("\n    FDRE a\n    LUT6\n"), "{s}");
        assert!(s.ends_with("    9     3  FDRE b  <-  FDRE a\n"), "{s}");
        let s = depth_report("t", &r, true);
        assert!(
            s.ends_with("FDRE b  <-  FDRE a\n            FDRE a\n            LUT3 x\n"),
            "with paths, each register's path follows it: {s}"
        );
    }
}
