//! Verilator's lint, the strict Verilog-2005 readers (Icarus Verilog, Yosys) and simulation
//! runs of small test benches.

use super::{in_scratch, run, write};
use std::path::Path;
use std::process::Command;

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
