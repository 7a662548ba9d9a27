//! Lint and synthesis of emitted Verilog: `verilator --lint-only -Wall` (DECLFILENAME aside: rust-hdl
//! puts every module in one file) and Yosys `synth_xilinx -family xcup` (UltraScale+, the Alveo
//! family), with the resource figures the README reports. (Yosys' `ltp` walks through mapped
//! flip-flops after `synth_xilinx`, so it does not give register-to-register depth; that figure
//! needs a netlist walk of its own and comes with the full pipeline.)
//!
//! The tools are required: a missing tool is an error that says how to install it, never a silent
//! pass (`scripts/test.sh` installs both).

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
    pub dsps: u64,
}

impl fmt::Display for SynthReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} LUTs, {} FFs, {} RAMB36, {} DSP48E2",
            self.luts, self.ffs, self.ramb36, self.dsps
        )
    }
}

/// A scratch folder for `name`, private to this process (test runs may overlap).
pub fn work_dir(name: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir()
        .join(format!("horus-pipeline-check-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
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
    let dir = work_dir(name)?;
    let path = write(&dir, verilog)?;
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
}

/// Builds a Verilator simulation of `files` (file name, contents; module `tb` is the test bench,
/// which reads `vectors.hex` if it likes) in a fresh folder for `name`, runs it and returns what it
/// printed.
pub fn verilator_run(name: &str, files: &[(&str, &str)]) -> Result<String, String> {
    let dir = work_dir(name)?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
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
            .current_dir(&dir),
        "verilator",
    )?;
    let out = Command::new(dir.join("obj_dir/sim"))
        .current_dir(&dir)
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
    let dir = work_dir(name)?;
    let path = write(&dir, verilog)?;
    let script = format!(
        "read_verilog {}; synth_xilinx -family xcup -top {top} -flatten; tee -o {}/stat.txt stat",
        path.display(),
        dir.display()
    );
    run(Command::new("yosys").args(["-q", "-p", &script]), "yosys")?;
    let stat = std::fs::read_to_string(dir.join("stat.txt")).map_err(|e| e.to_string())?;
    Ok(parse_report(&stat))
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
            _ => {}
        }
    }
    r.ramb36 += ramb18 as f64 / 2.0;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_counts_luts_flip_flops_and_block_rams() {
        let stat = "   Number of cells: 9\n     FDRE 12\n     LUT2 3\n     LUT6 4\n     RAMB18E2 3\n     RAMB36E2 1\n     CARRY8 2\n     DSP48E2 5\n";
        let r = parse_report(stat);
        assert_eq!((r.luts, r.ffs, r.ramb36, r.dsps), (7, 12, 2.5, 5));
    }
}
