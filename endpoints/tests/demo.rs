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
