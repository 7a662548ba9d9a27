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

fn horus_sim(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_horus-sim"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("horus-sim runs")
}

fn ok(out: &std::process::Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &std::process::Output, what: &str) -> String {
    assert!(!out.status.success(), "{what} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A sweep planned into one specification per point, run point by point in another order (two
/// at a time, as separate processes, the way a cluster's scheduler would), and merged, writes
/// the same files as the same sweep run locally, byte for byte.
#[test]
fn a_planned_split_and_merged_sweep_equals_the_local_one_byte_for_byte() {
    let root = std::env::temp_dir().join(format!("horus-sim-plan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let sweep = [
        "sweep",
        "--quick",
        "--pods",
        "2",
        "--pools",
        "2",
        "--sim-ms",
        "0.5",
        "--policies",
        "horus,random",
        "--workloads",
        "exp,bimodal",
        "--loads",
        "0.5,0.9",
    ];
    let local = [&sweep[..], &["--out", "local"]].concat();
    ok(&horus_sim(&local, &root), "the local sweep");
    let plan = [&sweep[..], &["--plan", "cluster"]].concat();
    let said = ok(&horus_sim(&plan, &root), "the plan");
    assert!(said.starts_with("8 points in cluster/points"), "{said}");
    let mut points: Vec<_> = std::fs::read_dir(root.join("cluster/points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    points.sort();
    assert_eq!(points.len(), 8);
    // Before every point has run, merge refuses and names what is missing.
    let spec = |p: &std::path::PathBuf| p.to_str().unwrap().to_string();
    ok(
        &horus_sim(&["run", "--spec", &spec(&points[3])], &root),
        "one point",
    );
    let err = refused(&horus_sim(&["merge", "cluster"], &root), "an early merge");
    assert!(
        err.contains("7 of 8 points have no result") && err.contains("0000, 0001, 0002, 0004"),
        "{err}"
    );
    assert!(!root.join("cluster/sweep.csv").exists());
    // The rest, last first, two processes at a time.
    let rest: Vec<_> = points.iter().rev().filter(|p| *p != &points[3]).collect();
    for pair in rest.chunks(2) {
        let children: Vec<_> = pair
            .iter()
            .map(|p| {
                Command::new(env!("CARGO_BIN_EXE_horus-sim"))
                    .args(["run", "--spec", &spec(p)])
                    .current_dir(&root)
                    .output()
            })
            .collect();
        for c in children {
            ok(&c.unwrap(), "a point");
        }
    }
    ok(&horus_sim(&["merge", "cluster"], &root), "the merge");
    let mut files: Vec<_> = std::fs::read_dir(root.join("local"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let a = std::fs::read(root.join("local").join(&f)).unwrap();
        let b = std::fs::read(root.join("cluster").join(&f)).unwrap_or_default();
        assert!(
            a == b,
            "{f:?} differs between the local and the merged sweep"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// A plan never overwrites another; a specification that is not one, and a result that is not
/// its point's, are refused with what is wrong.
#[test]
fn a_plan_refuses_bad_folders_specifications_and_results() {
    let root = std::env::temp_dir().join(format!("horus-sim-badplan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let plan = [
        "sweep",
        "--quick",
        "--pods",
        "2",
        "--pools",
        "1",
        "--sim-ms",
        "0.3",
        "--policies",
        "horus,random",
        "--loads",
        "0.5",
        "--plan",
        "p",
    ];
    ok(&horus_sim(&plan, &root), "the plan");
    let err = refused(&horus_sim(&plan, &root), "a second plan into the folder");
    assert!(err.contains("holds a planned sweep already"), "{err}");
    std::fs::write(root.join("bad.json"), "{\"seed\": 1}").unwrap();
    let err = refused(
        &horus_sim(&["run", "--spec", "bad.json"], &root),
        "a bad specification",
    );
    assert!(err.contains("bad.json is not a run specification"), "{err}");
    let err = refused(
        &horus_sim(
            &["run", "--spec", "p/points/0000.json", "--policy", "jsq"],
            &root,
        ),
        "a specification with a policy beside it",
    );
    assert!(err.contains("cannot be used with"), "{err}");
    // Point 0 (horus) run, its result copied in place of point 1's (random).
    ok(
        &horus_sim(&["run", "--spec", "p/points/0000.json"], &root),
        "point 0",
    );
    std::fs::copy(
        root.join("p/results/0000.json"),
        root.join("p/results/0001.json"),
    )
    .unwrap();
    let err = refused(
        &horus_sim(&["merge", "p"], &root),
        "a merge of a wrong result",
    );
    assert!(
        err.contains(
            "0001.json is the result of horus on exp at load 0.5, not of its point (random"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn tenants_size_the_pools_by_hierarchical_drf() {
    let dir = std::env::temp_dir().join(format!("horus-sim-tenants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tenants.toml");
    // 2 pods: 2 racks of 24 servers of 32 slots, 1,536 slots, 48 x 64 GB. fe/dev asks for 100
    // workers; fe/prod takes the rest of fe's half (668), ads/x the other half (768).
    std::fs::write(
        &file,
        r#"
memory_gb = 64
[[tenant]]
path = "fe/dev"
memory_gb = 1
workers = 100
[[tenant]]
path = "fe/prod"
memory_gb = 1
workers = 5000
[[tenant]]
path = "ads/x"
memory_gb = 1
workers = 5000
"#,
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_horus-sim"))
            .args(["run", "--quick", "--pods", "2", "--sim-ms", "0.5", "--out"])
            .arg(&dir)
            .args(extra)
            .env("RUST_BACKTRACE", "0")
            .output()
            .expect("horus-sim runs")
    };
    let done = run(&["--tenants", file.to_str().unwrap()]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("random-exp-pools.csv")).unwrap();
    let workers: Vec<u32> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(workers, [100, 668, 768]);
    // A file that does not hold: its reason, and no run.
    std::fs::write(
        &file,
        "memory_gb = 64\n[[tenant]]\npath = \"a\"\nmemory_gb = 1\n",
    )
    .unwrap();
    let done = run(&["--tenants", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success());
    assert!(stderr.contains("missing field `workers`"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
