//! The OpenNIC plug-in linted inside the shell's real `box_250mhz.sv` (with its `generic_reset.sv`)
//! rather than our stub of it: every warning and error Verilator (`-Wall`) reports must lie in the
//! shell's own files, none in the plug-in's. The shell is not part of this repository and the
//! test fetches nothing: it runs when `HORUS_OPENNIC_SHELL` names a checkout of Xilinx/open-nic-shell
//! (or one is at `~/.cache/horus-shells/open-nic-shell`), and says plainly that it was skipped
//! otherwise. `docs/deploy.md` names the commit it was run against.

use horus_model::config::Role;
use horus_pipeline::board::boards;
use rtl_gen::boards::{BoardParams, files, opennic};
use std::path::PathBuf;
use std::process::Command;

/// The shell checkout, if there is one.
fn shell() -> Option<PathBuf> {
    let path = match std::env::var_os("HORUS_OPENNIC_SHELL") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/horus-shells/open-nic-shell"),
    };
    path.join("src/box_250mhz/box_250mhz.sv")
        .is_file()
        .then_some(path)
}

#[test]
fn the_opennic_plugin_lints_clean_inside_the_real_box_250mhz() {
    let Some(shell) = shell() else {
        println!(
            "skipped: no OpenNIC shell checkout (set HORUS_OPENNIC_SHELL to a checkout of \
             Xilinx/open-nic-shell at {}, or put one at ~/.cache/horus-shells/open-nic-shell)",
            opennic::SHELL_COMMIT
        );
        return;
    };
    let src = shell.join("src");
    let at = |board| boards::board(board).unwrap();
    for p in [
        BoardParams::new(at("au250"), Role::Leaf, "small", 1, 60).unwrap(),
        BoardParams::new(at("au250"), Role::Spine, "small", 1, 60).unwrap(),
        BoardParams::new(at("au50"), Role::Leaf, "small", 1, 60).unwrap(),
        BoardParams::jbsq(at("au250"), "small", 1, 60).unwrap(),
    ] {
        let (b, board) = (p.board, p.board.name);
        let dir = std::env::temp_dir().join(format!(
            "horus-real-shell-{}-{}",
            std::process::id(),
            p.module_name()
        ));
        for f in files(&p).unwrap() {
            let path = dir.join(&f.name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &f.content).unwrap();
        }
        let plugin = dir.join(board).join("plugin");
        let out = Command::new("verilator")
            .args([
                "--lint-only",
                "-Wall",
                "-Wno-DECLFILENAME",
                "--top-module",
                "box_250mhz",
            ])
            .arg(format!("-GNUM_CMAC_PORT={}", b.mac_ports()))
            .arg(format!("-I{}", plugin.join("box_250mhz").display()))
            .arg(src.join("box_250mhz/box_250mhz.sv"))
            .arg(src.join("utility/generic_reset.sv"))
            .arg(plugin.join(format!("{}.v", p.module_name())))
            .output()
            .expect("verilator runs (scripts/test.sh installs it)");
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let shell_prefix = src.display().to_string();
        let ours: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with('%'))
            .filter(|l| !l.starts_with("%Error: Exiting due to"))
            .filter(|l| {
                !l.split_once(": ")
                    .is_some_and(|(_, r)| r.starts_with(&shell_prefix))
            })
            .collect();
        assert!(
            ours.is_empty(),
            "{board} {}: Verilator reports on the plug-in inside the real box:\n{}\n\n{text}",
            p.module_name(),
            ours.join("\n")
        );
        // An error in the shell's files (not a warning) would mean the two do not fit.
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("%Error") && !l.starts_with("%Error: Exiting due to")),
            "{board} {}:\n{text}",
            p.module_name()
        );
        let _ = std::fs::remove_dir_all(&dir);
        println!(
            "{board} {}: lint clean inside {}",
            p.module_name(),
            src.join("box_250mhz/box_250mhz.sv").display()
        );
    }
}
