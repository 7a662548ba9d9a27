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
    for file in [
        "horus-exp.json",
        "sweep.csv",
        "p99-exp.svg",
        "p99-classes-exp.svg",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_unknown_policy_is_refused_with_the_registered_names_before_anything_runs() {
    let out = std::env::temp_dir().join(format!("horus-sim-unknown-{}", std::process::id()));
    for command in [
        vec!["run", "--policy", "nosuch"],
        vec!["sweep", "--policies", "horus,nosuch"],
    ] {
        let done = Command::new(env!("CARGO_BIN_EXE_horus-sim"))
            .args(&command)
            .arg("--quick")
            .arg("--out")
            .arg(&out)
            .env("RUST_BACKTRACE", "0")
            .output()
            .expect("horus-sim runs");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success(), "{command:?} succeeded");
        assert!(
            stderr.contains("unknown policy \"nosuch\"; known: "),
            "{command:?}: {stderr}"
        );
        for name in horus_sim::policy::names() {
            assert!(
                stderr.contains(name),
                "{command:?}: {name} missing: {stderr}"
            );
        }
    }
    assert!(!out.exists(), "nothing is written");
}
