//! `horus-demo` runs the whole system as separate processes, prints both policies' tails,
//! writes its results, ends by itself and leaves no process behind.

use std::process::Command;

/// Processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) && !c.contains("processes_with") {
                v.push(c);
            }
        }
    }
    v
}

#[test]
fn the_demo_runs_both_policies_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_horus-demo"))
        .args([
            "--racks",
            "2",
            "--workers",
            "2",
            "--clients",
            "1",
            "--loads",
            "0.5",
            "--duration-s",
            "1",
            "--capture",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let finished_ns = horus_endpoints::client::wall_ns();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let net = text
        .split(" on ")
        .nth(1)
        .and_then(|s| s.split(".0/24").next())
        .expect("the demo says where it runs")
        .to_string();
    assert!(
        text.contains("4 worker slots registered in 2 racks"),
        "{text}"
    );
    for p in ["horus  load 0.50", "random load 0.50"] {
        let line = text.lines().find(|l| l.starts_with(p)).expect(p);
        assert!(line.contains(" 0 lost"), "{line}");
    }
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("demo.json")).unwrap())
            .unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    for r in rows.as_array().unwrap() {
        assert!(r["sent"].as_u64().unwrap() > 20, "{r}");
        assert_eq!(r["answered"], r["sent"]);
        assert!(r["p99_us"].as_f64().unwrap() > 0.0);
    }
    let svg = std::fs::read_to_string(dir.path().join("demo-cdf.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("horus 50 %"));
    let svg = std::fs::read_to_string(dir.path().join("demo-p99.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("random"));
    let dir_s = dir.path().display().to_string();
    assert_eq!(processes_with(&dir_s), Vec::<String>::new());
    public_reading_of_the_capture(&dir.path().join("leaf1.pcap"), finished_ns);
    assert_eq!(processes_with(&format!("{net}.")), Vec::<String>::new());
}

/// The loopback example configurations in `configs/` are the demo's topology on 127.0.10.0/24
/// (2 racks of 8 worker slots), as `Topology` writes it.
#[test]
fn the_loopback_example_configurations_are_the_demos() {
    let t = horus_endpoints::demo::Topology::new([127, 0, 10], 2, 8).unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/");
    let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
    let header = "# Written by horus_endpoints::demo::Topology (2 racks of 8 worker slots on 127.0.10.0/24);\n# checked by endpoints/tests/demo.rs.\n";
    assert_eq!(
        read("loopback-spine.toml"),
        format!("{header}{}", t.spine_toml())
    );
    for k in 1..=2 {
        assert_eq!(
            read(&format!("loopback-leaf{k}.toml")),
            format!("{header}{}", t.leaf_toml(k))
        );
    }
    for f in [
        "loopback-spine.toml",
        "loopback-leaf1.toml",
        "loopback-leaf2.toml",
    ] {
        horus_model::config::Config::from_toml_str(&read(f)).unwrap();
    }
}

/// Leaf 1's capture, read by the dissector written from the public definitions
/// (`tests/dissect.py`): every task's `req_id`, `pkts_length`, `run_ns` and `gen_ns` as the
/// public code reads them, and for each worker slot the public registration exchange (the
/// controller's WORKER_ID, 50 bytes, the node in `qlen`; the worker's WORKER_ID_ACK with the
/// node + 1 in `app_data`) and keep-alives in the public layout.
fn public_reading_of_the_capture(pcap: &std::path::Path, finished_ns: u64) {
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dissect.py"))
        .arg(pcap)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |t: u64| frames.iter().filter(move |f| f["type"] == t);
    // Tasks from the clients (type 0 NEW_TASK, 1 NEW_TASK_RANDOM), before and after the leaf.
    let tasks: Vec<_> = of(0).chain(of(1)).collect();
    assert!(tasks.len() > 40, "{} tasks", tasks.len());
    let hour_ns = 3_600_000_000_000;
    for t in &tasks {
        assert_eq!(t["pkts_length"], 165, "{t}");
        assert_eq!(t["packets"], 1, "{t}");
        let run = t["run_ns"].as_u64().unwrap();
        assert!(run > 0 && run < 10_000_000_000, "{t}");
        let gen_ns = t["gen_ns"].as_u64().unwrap();
        assert!(
            gen_ns <= finished_ns && finished_ns - gen_ns < hour_ns,
            "{t}"
        );
        assert!(t["req_id"].as_u64().unwrap() < 1_000_000, "{t}");
        assert_eq!(t["seq"], t["req_id"].as_u64().unwrap() & 0xffff, "{t}");
    }
    // Each of the rack's two slots: WORKER_ID to it, its acknowledgement, its keep-alives.
    for node in 0..2u64 {
        let to = of(12)
            .find(|f| f["worker_id_first"] == node)
            .unwrap_or_else(|| panic!("no WORKER_ID for node {node}"));
        assert_eq!(to["length"], 50, "{to}");
        assert!(
            of(13).any(|f| f["ack_ids"] == serde_json::json!([node + 1])),
            "no acknowledgement of node {node}"
        );
        assert!(
            of(11).any(|f| f["ka_ids"] == serde_json::json!([node + 1]) && f["ka_workers"] == 1),
            "no public keep-alive of node {node}"
        );
    }
}

/// `horus-demo --leaf jbsq`: the leaves hold tasks (their configurations say so), every task is
/// answered, and no process is left behind.
#[test]
fn the_demo_runs_leaves_that_hold_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_horus-demo"))
        .args([
            "--leaf",
            "jbsq",
            "--k",
            "1",
            "--racks",
            "2",
            "--workers",
            "2",
            "--clients",
            "1",
            "--loads",
            "0.9",
            "--duration-s",
            "1",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("2 leaves holding tasks (k = 1)"), "{text}");
    let leaf = std::fs::read_to_string(dir.path().join("leaf1.toml")).unwrap();
    assert!(
        leaf.contains("leaf = \"jbsq\"") && leaf.contains("k = 1"),
        "{leaf}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("demo.json")).unwrap())
            .unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "the Horus policy only");
    assert!(rows[0]["sent"].as_u64().unwrap() > 20, "{rows:?}");
    assert_eq!(rows[0]["answered"], rows[0]["sent"]);
    assert_eq!(rows[0]["lost"], 0);
    assert_eq!(
        processes_with(&dir.path().display().to_string()),
        Vec::<String>::new()
    );
}
