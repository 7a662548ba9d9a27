//! Synthesis with Yosys for UltraScale+ and the resource figures it reports.

use super::depth::{DeepEnd, lut_depths};
use super::{in_scratch, run, write};
use std::fmt;
use std::path::Path;
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

pub(super) fn parse_report(stat: &str) -> SynthReport {
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
