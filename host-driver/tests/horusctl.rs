//! `horusctl` on the shipped example configurations and on a broken one.

use std::process::Command;

fn horusctl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_horusctl"))
        .args(args)
        .output()
        .expect("horusctl runs")
}

fn config(name: &str) -> String {
    format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn check_prints_the_control_passes_of_the_example_leaf() {
    let out = horusctl(&["check", &config("example-leaf.toml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("leaf switch 3, 3 pool(s)"), "{text}");
    assert!(
        text.contains("17 control passes; 3 startup message(s) to spines"),
        "{text}"
    );
}

#[test]
fn check_accepts_the_example_spine() {
    let out = horusctl(&["check", &config("example-spine.toml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("spine switch 1")
    );
}

#[test]
fn check_names_the_offending_key_of_an_invalid_config() {
    let dir = std::env::temp_dir().join(format!("horusctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(config("example-leaf.toml"))
        .unwrap()
        .replace("idle_unlink_at = 1", "idle_unlink_at = 5");
    std::fs::write(&bad, text).unwrap();
    let out = horusctl(&["check", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("pools[0].idle_unlink_at"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn writes_configure_the_switch_and_each_control_pass_through_the_register_map() {
    let out = horusctl(&["writes", &config("example-leaf.toml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // 17 control passes, each named, staged, started by the doorbell (word 3) and waited for;
    // the state read back first: the 64 pools' entries, and the node and address entries of
    // the 14 nodes the configuration names (free on a fresh switch).
    assert!(
        text.contains("# 12 switch register word(s) written, 17 control pass(es)"),
        "{text}"
    );
    let passes = text
        .split("\n# ")
        .filter(|b| b.starts_with("configure pool") || b.starts_with("add node"))
        .filter(|b| {
            b.contains("write 0x00c 0x00000001  # CTL_GO\nwait  0x00c 0x00000001 0x00000000")
        })
        .count();
    assert_eq!(passes, 17, "{text}");
    assert_eq!(
        text.matches("wait  0x0e0 0x00000002 0x00000000").count(),
        64 + 2 * 14,
        "{text}"
    );
    // The switch ID (3) in the low half of word 4.
    assert!(
        text.lines()
            .any(|l| l.starts_with("write 0x010 0x04d20003  # SWITCH_ID SWITCH_UDP_PORT")),
        "{text}"
    );
}

#[test]
fn check_refuses_a_config_the_hardware_cannot_hold() {
    let dir = std::env::temp_dir().join(format!("horusctl-hw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("sizes.toml");
    let text = std::fs::read_to_string(config("example-leaf.toml"))
        .unwrap()
        .replace("nodes = 4096", "nodes = 2000");
    std::fs::write(&bad, text).unwrap();
    let out = horusctl(&["check", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no hardware preset"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn read_prints_the_accesses_and_decode_names_the_fields() {
    let out = horusctl(&["read", "node", "17"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // CTL_READ_ENTRY (bit 4) and table 1 (bits 8..12) in word 24; index 17 in word 39.
    assert!(text.contains("write 0x060 0x00000110"), "{text}");
    assert!(text.contains("write 0x09c 0x00000011"), "{text}");
    // The doorbell, then both waits: the read entered (CTL_GO), then left the stages (RB_BUSY).
    assert!(
        text.contains(
            "write 0x00c 0x00000001\nwait  0x00c 0x00000001 0x00000000  # until CTL_GO reads 0: the read entered\nwait  0x0e0 0x00000002 0x00000000"
        ),
        "{text}"
    );
    assert!(text.contains("read 0x0e4  # RB_DATA0"), "{text}");

    // node entry: active (bit 0), pool (1..17), slot (17..33), factor (33..65).
    let out = horusctl(&["decode", "1", "0x00060005", "0x00020000", "0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.trim(),
        "node: active=0x1 pool=0x2 slot=0x3 factor=0x10000"
    );

    let out = horusctl(&["decode", "loadlist9", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no table \"loadlist9\""));
    let out = horusctl(&["read", "14", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no table 14"));
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    use std::process::Stdio;
    let leaf = config("example-leaf.toml");
    for args in [
        vec!["check", leaf.as_str()],
        vec!["writes", leaf.as_str()],
        vec!["read", "node", "5"],
        vec!["decode", "node", "1"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_horusctl"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("horusctl runs");
        // The reader closes before reading anything (`horusctl ... | head -0`).
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("horusctl ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn check_with_a_board_takes_its_port_names_and_refuses_a_port_it_lacks() {
    let out = horusctl(&["check", "--board", "au250", &config("au250-leaf.toml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("port 0 dst_id 13"),
        "workers on cmac0 (port 0): {text}"
    );
    assert!(
        text.contains("board: au250 (AMD Alveo U250), ports cmac0 (0), cmac1 (1), host0 (2)"),
        "{text}"
    );
    // The U50 has one MAC port: no cmac1.
    let out = horusctl(&["check", "--board", "au50", &config("au250-leaf.toml")]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "switch.pass_through_port: au50 has no port named \"cmac1\"; its ports: cmac0 (0), \
             host0 (2)"
        ),
        "{err}"
    );
    // Without a board, a named port says what it needs.
    let out = horusctl(&["check", &config("au250-leaf.toml")]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("needs the board")
    );
    // The writes resolve the names the same way.
    let out = horusctl(&["writes", "--board", "au250", &config("au250-leaf.toml")]);
    assert!(out.status.success());
    let out = horusctl(&["check", "--board", "au9000", &config("au250-leaf.toml")]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("unknown board; one of: au250")
    );
}

/// Runs horusctl expecting a failure: exit status 1 and one line on stderr containing `want`.
fn fails_with(args: &[&str], want: &str) {
    let out = horusctl(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, not {err:?}");
    assert!(
        err.starts_with("horusctl: ") && err.contains(want),
        "{args:?}: {err}"
    );
}

#[test]
fn every_kind_of_error_is_one_line_and_a_non_zero_exit() {
    let leaf = config("example-leaf.toml");
    let spine = config("example-spine.toml");
    let model = format!("model:{leaf}");
    // No device, a device that is not there, a configuration that does not fit the bitstream.
    fails_with(&["info"], "this command needs a switch");
    fails_with(
        &["--device", "pci:0000:ff:1f.7", "info"],
        "is the BDF right",
    );
    fails_with(
        &["--device", &model, "apply", &spine],
        "switch.role is spine, the bitstream is a leaf",
    );
    // An operation the switch would refuse; one for the other role.
    fails_with(
        &[
            "--device",
            &model,
            "remove-worker",
            "--pool",
            "1",
            "--node",
            "40",
        ],
        "pool 1 is not configured",
    );
    fails_with(
        &["--device", &model, "fail-leaf", "--leaf", "3"],
        "fail-leaf is for a spine",
    );
    // Accesses the map does not allow.
    fails_with(
        &["--device", &model, "peek", "0x1000"],
        "outside the register map",
    );
    fails_with(&["--device", &model, "peek", "0x120"], "holds no register");
    fails_with(
        &["--device", &model, "poke", "ID", "1"],
        "ID (address 0x0) is read-only",
    );
    fails_with(
        &["--device", &model, "poke", "ROLE_X", "1"],
        "neither a byte address nor",
    );
    fails_with(
        &["--device", &model, "poke", "CONTROL_PORT", "0x1ff"],
        "does not fit CONTROL_PORT",
    );
    // A configuration error names its key.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(&leaf)
        .unwrap()
        .replace("idle_unlink_at = 1", "idle_unlink_at = 5");
    std::fs::write(&bad, text).unwrap();
    fails_with(
        &["--device", &model, "apply", bad.to_str().unwrap()],
        "pools[0].idle_unlink_at",
    );
    fails_with(
        &["--device", &model, "stats", "--watch", "0"],
        "the period must be a positive number",
    );
}

#[test]
fn device_commands_on_the_model() {
    let leaf = config("example-leaf.toml");
    let model = format!("model:{leaf}");
    let ok = |args: &[&str]| {
        let out = horusctl(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let info = ok(&["--device", &model, "info"]);
    assert!(
        info.contains("switch: leaf, preset default (horus_leaf)"),
        "{info}"
    );
    assert!(info.contains("register map version 3"), "{info}");
    let apply = ok(&["--device", &model, "apply", &leaf]);
    assert!(
        apply.contains("12 switch register word(s) written, 17 control pass(es)"),
        "{apply}"
    );
    let stats = ok(&["--device", &model, "stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stats.trim()).unwrap();
    assert_eq!(v["passes"], 0);
    let watch = ok(&[
        "--device", &model, "stats", "--watch", "0.01", "--count", "2",
    ]);
    assert!(
        watch.contains("# sample 2") && watch.contains("/s"),
        "{watch}"
    );
    let dump = ok(&["--device", &model, "dump"]);
    assert!(dump.contains("no pool configured"), "{dump}");
    // A Verilog file the switch does not run (the model has no build hash).
    let dir = tempfile::tempdir().unwrap();
    let v = dir.path().join("horus_leaf.v");
    let ph = horus_regs::regmap::BUILD_HASH_PLACEHOLDER;
    let text =
        format!("module horus_leaf;\n    localparam  build_hash = 32'h{ph:08x};\nendmodule\n");
    std::fs::write(&v, horus_regs::identity::stamp(text)).unwrap();
    let out = horusctl(&["--device", &model, "info", "--verilog", v.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(err.contains("the switch runs build 0x00000000;"), "{err}");
    let peek = ok(&["--device", &model, "peek", "CONN_TIMEOUT_US"]);
    assert!(peek.contains("0x118 = 0x00004e20 (20000)"), "{peek}");
    let poke = ok(&["--device", &model, "poke", "CONTROL_PORT", "7"]);
    assert!(poke.contains("0x018 <- 0x07000000"), "{poke}");
}

#[cfg(feature = "cosim")]
#[test]
fn info_says_whether_the_switch_runs_a_given_verilog() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(
        &cfg,
        "[switch]\nrole = \"leaf\"\nid = 3\nmac = \"02:00:00:00:00:03\"\nip = \"10.0.0.3\"\npass_through_port = 1\ncontrol_port = 0\n[sizes]\npools = 8\nnodes = 64\nconn_table = 16\n",
    )
    .unwrap();
    // What `rtl-gen --preset small` writes (the default seed, the configuration's timeout).
    let p = horus_regs::presets::preset("small", horus_model::config::Role::Leaf).unwrap();
    let v = dir.path().join("horus_leaf_small.v");
    let text = rtl_gen::outputs::switch::verilog(&p, horus_model::rng::DEFAULT_SEED, 20_000);
    std::fs::write(&v, &text).unwrap();
    let device = format!("cosim:{}", cfg.display());
    let out = horusctl(&[
        "--device",
        &device,
        "info",
        "--verilog",
        v.to_str().unwrap(),
    ]);
    let text_out = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text_out.contains("runs ") && text_out.contains("(build 0x"),
        "{text_out}"
    );
    // The same file edited is refused.
    std::fs::write(&v, text.replace("module ", "module  ")).unwrap();
    let out = horusctl(&[
        "--device",
        &device,
        "info",
        "--verilog",
        v.to_str().unwrap(),
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("changed after rtl-gen wrote it"), "{err}");
}

#[cfg(feature = "cosim")]
#[test]
fn info_apply_stats_and_peek_speak_the_jbsq_leafs_map() {
    // (add-worker, remove-worker and serve: `serve_runs_the_controller_on_a_jbsq_leaf`.)
    let cfg = config("example-leaf-jbsq.toml");
    let device = format!("cosim:{cfg}");
    let run = |args: &[&str]| {
        let mut all = vec!["--device", device.as_str()];
        all.extend_from_slice(args);
        let out = horusctl(&all);
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (ok, info, err) = run(&["info"]);
    assert!(ok, "{err}");
    assert!(
        info.contains("the leaf that holds tasks (JBSQ), preset default (horus_leaf_jbsq)")
            && info.contains("4096 held tasks of up to 256 bytes"),
        "{info}"
    );
    // Without a state file: refused, naming the flag.
    let (ok, _, err) = run(&["apply", &cfg]);
    assert!(!ok && err.contains("--jbsq-state"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("leaf.json");
    let state = state.to_str().unwrap();
    let (ok, applied, err) = run(&["--jbsq-state", state, "apply", &cfg]);
    assert!(ok, "{err}");
    assert!(
        applied.contains("17 control pass(es): 2 pool(s), 5 worker(s)"),
        "{applied}"
    );
    // The cosim device is a freshly loaded card in each process: the file of the last one is
    // refused against it.
    let (ok, _, err) = run(&[
        "--jbsq-state",
        state,
        "remove-worker",
        "--pool",
        "1",
        "--node",
        "0",
    ]);
    assert!(!ok && err.contains("freshly loaded"), "{err}");
    // set-pool on it needs its state file too.
    let (ok, _, err) = run(&["set-pool", "--pool", "1", "--k", "2"]);
    assert!(!ok && err.contains("--jbsq-state"), "{err}");
    let (ok, stats, err) = run(&["stats", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(stats.trim()).unwrap();
    assert_eq!(v["jbsq_tasks"], 0, "{stats}");
    assert_eq!(v["jbsq_conn_expired"], 0, "{stats}");
    let (ok, _, err) = run(&["dump"]);
    assert!(!ok && err.contains("--jbsq-state"), "{err}");
    let (ok, id, err) = run(&["peek", "0"]);
    assert!(
        ok && id.contains("0x000 = 0x484f524a") && id.contains("ID"),
        "{id}{err}"
    );
    // A paper leaf's configuration on it: refused, naming the leaf kinds.
    let (ok, _, err) = run(&["apply", &config("example-leaf.toml")]);
    assert!(!ok && err.contains("HORJ"), "{err}");
}

/// `model:` on a JBSQ leaf's configuration is the JBSQ leaf's model behind its map; the paper
/// switch's model refuses that configuration, naming the key.
#[test]
fn the_model_device_of_a_jbsq_config_is_the_jbsq_leafs_model() {
    let cfg = config("example-leaf-jbsq.toml");
    let device = format!("model:{cfg}");
    let out = horusctl(&["--device", &device, "info"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("the leaf that holds tasks (JBSQ), preset default"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("leaf.json");
    let out = horusctl(&[
        "--device",
        &device,
        "--jbsq-state",
        state.to_str().unwrap(),
        "apply",
        &cfg,
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("17 control pass(es)"),
        "{text}"
    );
    // set-pool on a fresh leaf: a pool's regions live are planned; a pool that is not
    // configured is refused.
    let fresh = dir.path().join("fresh.json");
    let set = |args: &[&str]| {
        let mut all = vec!["--device", &device, "--jbsq-state", fresh.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = horusctl(&all);
        (out.status.success(), String::from_utf8(out.stderr).unwrap())
    };
    let (ok, err) = set(&["set-pool", "--pool", "1", "--capacity", "4"]);
    assert!(!ok && err.contains("planned"), "{err}");
    let (ok, err) = set(&["set-pool", "--pool", "1", "--link-at", "2"]);
    assert!(!ok && err.contains("pool 1 is not configured"), "{err}");
    let (ok, err) = set(&["set-pool", "--pool", "1", "--k", "2"]);
    assert!(!ok && err.contains("pool 1 is not configured"), "{err}");
    let c = horus_model::config::Config::from_file(std::path::Path::new(&cfg)).unwrap();
    let e = horus_host_driver::device::ModelDevice::fresh(&c, 1, "model")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("switch.leaf"), "{e}");
}

#[test]
fn check_lays_a_jbsq_leafs_pools_out_and_names_the_passes_and_the_hardware() {
    let out = horusctl(&["check", &config("example-leaf-jbsq.toml")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "JBSQ leaf 4, 2 pool(s)",
        "  pool 1: 3 worker(s) in node slots 0..3, k 2 (node 2 k 4), advertise places, fallback \
         random, task buffer slots 0..1024",
        "  pool 2: 2 worker(s) in node slots 3..5, k 1, advertise queue (room 4), fallback \
         random, task buffer slots 1024..4096",
        // As many as `apply` runs on the card (horusctl's JBSQ co-simulation test).
        "17 control passes; 2 startup message(s) to spines",
        "hardware: horus_leaf_jbsq (rtl-gen --leaf jbsq --preset default)",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    let out = horusctl(&["check", "--board", "au250", &config("au250-leaf-jbsq.toml")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("fallback drop"),
        "{text}"
    );
    // Table sizes no JBSQ preset has.
    let dir = std::env::temp_dir().join(format!("horusctl-jbsq-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let odd = dir.join("odd.toml");
    let text = std::fs::read_to_string(config("example-leaf-jbsq.toml")).unwrap();
    std::fs::write(
        &odd,
        text.replacen("[switch]", "[sizes]\npools = 16\n\n[switch]", 1),
    )
    .unwrap();
    let out = horusctl(&["check", odd.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success()
            && err.contains("no JBSQ leaf's preset has the sizes")
            && err.contains("small (4 pools, 64 nodes, 64 connections)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn writes_scripts_a_fresh_jbsq_leafs_set_up_and_a_dry_run_speaks_its_map() {
    let out = horusctl(&[
        "writes",
        "--board",
        "au250",
        &config("au250-leaf-jbsq.toml"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let script = String::from_utf8(out.stdout).unwrap();
    // The leaf's identification first, then its switch registers, then one staged pass after
    // another, each started and waited for; the fields named from the JBSQ map.
    assert!(
        script.starts_with("read  0x000             # ID -> 0x484f524a"),
        "{script}"
    );
    assert!(
        script.contains("write 0x010 0x04d20003  # SWITCH_ID SWITCH_UDP_PORT"),
        "{script}"
    );
    assert!(
        script.contains("CTL_CONFIGURE_POOL CTL_ADD_NODE"),
        "{script}"
    );
    let go = script
        .lines()
        .filter(|l| l.starts_with("write 0x00c 0x00000001"))
        .count();
    // As many passes as `check` plans for the configuration.
    assert_eq!(go, 46, "{script}");
    assert!(
        script.ends_with(
            "# switch register words written, 46 control pass(es): 3 pool(s), 14 worker(s) with \
             their free places\n"
        ),
        "{script}"
    );
    // The dry-run device answers as a fresh JBSQ leaf of the configuration's preset.
    let device = format!("dry-run:{}", config("example-leaf-jbsq.toml"));
    let out = horusctl(&["--device", &device, "info"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && text.contains("the leaf that holds tasks (JBSQ), preset default"),
        "{text}"
    );
}

/// `horusctl serve` on the Verilated JBSQ leaf: set up from its configuration into its state
/// file, a worker registers over UDP and gets its ID, the leaf's counters are served as metrics,
/// the silent worker is removed and told so; the state file holds the leaf as it is (the
/// configuration's workers, the registered one gone, its generation moved).
#[cfg(feature = "cosim")]
#[test]
fn serve_runs_the_controller_on_a_jbsq_leaf() {
    use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
    use std::net::{Ipv4Addr, UdpSocket};
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(config("example-leaf-jbsq.toml")).unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(
        &cfg,
        text.replacen("spine_node = 4\n", "spine_node = 4\ncapacity = 8\n", 1),
    )
    .unwrap();
    let state = dir.path().join("leaf.json");
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let listen = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let cfg = cfg.to_str().unwrap();
    // Without a state file: refused before anything listens.
    let out = horusctl(&[
        "--device",
        &format!("cosim:{cfg}"),
        "serve",
        "--config",
        cfg,
        "--worker-port",
        "8",
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success() && err.contains("--jbsq-state"),
        "{err}"
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_horusctl"))
        .args(["--device", &format!("cosim:{cfg}")])
        .args(["--jbsq-state", state.to_str().unwrap(), "serve"])
        .args([
            "--config",
            cfg,
            "--worker-port",
            "8",
            "--timeout-ms",
            "2500",
        ])
        .args([
            "--listen",
            &listen.to_string(),
            "--metrics",
            &metrics.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://{metrics}/metrics");
    let scrape = || -> Option<String> { ureq::get(&url).call().ok()?.into_string().ok() };
    let wait_for = |what: &str| {
        for _ in 0..400 {
            if let Some(m) = scrape()
                && m.contains(what)
            {
                return m;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("/metrics never showed {what:?}: {:?}", scrape());
    };
    let m = wait_for("horus_controller_packets_total 0");
    assert!(m.contains("horus_switch_jbsq_tasks 0"), "{m}");
    let w = UdpSocket::bind("127.0.0.1:0").unwrap();
    w.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let me = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x30, 1]),
        ip: Ipv4Addr::LOCALHOST,
        udp_port: w.local_addr().unwrap().port(),
    };
    let leaf = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 4]),
        ip: Ipv4Addr::new(10, 0, 0, 4),
        udp_port: horus_model::wire::HORUS_UDP_PORT,
    };
    let header = HorusHeader {
        pkt_type: PacketType::WorkerId,
        more_packets: false,
        pool_id: 1,
        src_id: 7,
        dst_id: 0,
        qlen: 0,
        seq_num: 0,
    };
    let f = horus_model::wire::HorusFrame::new(me, leaf, header, Vec::new()).to_bytes();
    w.send_to(&f, listen).unwrap();
    let mut buf = [0u8; 64];
    let (n, _) = w.recv_from(&mut buf).unwrap();
    let ack = HorusHeader::parse(&buf[..n]).unwrap();
    assert_eq!(
        (ack.pkt_type, ack.dst_id, ack.src_id),
        (PacketType::WorkerIdAck, 7, 4)
    );
    let m = wait_for("horus_controller_registrations_total 1");
    assert!(
        m.contains("horus_worker_up{pool=\"1\",worker=\"7\",ip=\"127.0.0.1\"} 1"),
        "{m}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let nodes: Vec<u64> = file["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["node"].as_u64().unwrap())
        .collect();
    assert_eq!(nodes, [0, 1, 2, 7, 3, 4], "{file}");
    // Silent: removed after the timeout, and told so.
    let (n, _) = w.recv_from(&mut buf).unwrap();
    assert_eq!(
        HorusHeader::parse(&buf[..n]).unwrap().pkt_type,
        PacketType::RemoveAck
    );
    wait_for("horus_controller_removals_total 1");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(file["members"].as_array().unwrap().len(), 5, "{file}");
    assert_eq!(file["generations"], serde_json::json!([[7, 1]]), "{file}");
    let _ = child.kill();
    let _ = child.wait();
}

/// `peek` and `poke` on the JBSQ leaf speak its own map (`horus_regs::jbsq_map`): its fields by
/// name, its read-back words (beyond the paper map's), its read-only counters refused for a
/// write, a field's width checked; the paper map's own names are not its.
#[test]
fn peek_and_poke_on_the_jbsq_leaf_use_its_map() {
    let device = format!("model:{}", config("example-leaf-jbsq.toml"));
    let run = |args: &[&str]| {
        let mut all = vec!["--device", device.as_str()];
        all.extend_from_slice(args);
        let out = horusctl(&all);
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (ok, out, err) = run(&["peek", "ID"]);
    assert!(ok && out.contains("= 0x484f524a"), "{out}{err}");
    let slot = horus_regs::jbsq_map::fields::RB_SLOT.byte_address();
    let (ok, out, err) = run(&["peek", &format!("{slot:#x}")]);
    assert!(ok && out.contains("RB_SLOT"), "{out}{err}");
    let (ok, out, err) = run(&["peek", "jbsq_tasks"]);
    assert!(
        ok && out.contains("= 0x00000000 (0)  # JBSQ_TASKS"),
        "{out}{err}"
    );
    let (ok, out, err) = run(&["poke", "CTL_K", "3"]);
    assert!(ok && out.contains("CTL_K"), "{out}{err}");
    let (ok, _, err) = run(&["poke", "JBSQ_TASKS", "1"]);
    assert!(!ok && err.contains("read-only"), "{err}");
    let (ok, _, err) = run(&["poke", "CTL_LEVEL", "8"]);
    assert!(
        !ok && err.contains("does not fit CTL_LEVEL (3 bits)"),
        "{err}"
    );
    let (ok, _, err) = run(&["peek", "CTL_FACTOR"]);
    assert!(!ok && err.contains("horus_jbsq_regs.h"), "{err}");
    // A spine's command says what the switch is.
    let (ok, _, err) = run(&["fail-leaf", "--leaf", "3"]);
    assert!(
        !ok && err.contains("fail-leaf is for a spine") && err.contains("holds tasks"),
        "{err}"
    );
}
