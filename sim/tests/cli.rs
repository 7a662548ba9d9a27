//! The `horus-sim` binary as a user runs it.

use std::process::{Command, Stdio};

#[test]
fn a_run_and_a_sweep_end_quietly_when_their_reader_goes_away() {
    let out = std::env::temp_dir().join(format!("horus-sim-cli-{}", std::process::id()));
    let small = ["--quick", "--pods", "2", "--pools", "1", "--sim-ms", "0.5"];
    for command in [
        vec!["run", "--policy", "horus"],
        vec!["sweep", "--policies", "horus,random", "--loads", "0.5"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_horus-sim"))
            .args(&command)
            .args(small)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("horus-sim runs");
        // The reader closes before reading anything (`horus-sim ... | head -0`).
        drop(child.stdout.take());
        let done = child.wait_with_output().expect("horus-sim ends");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{command:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command:?}: {stderr}");
    }
    // The results were written all the same.
    for file in ["horus-exp.json", "sweep.csv", "p99-exp.svg"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    std::fs::remove_dir_all(&out).unwrap();
}
