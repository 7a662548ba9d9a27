//! The crates' dependencies point one way (`docs/architecture.md`): each rule is checked on the
//! dependency tree cargo resolves for the crate's default features, dev-dependencies included
//! (what `cargo tree -p CRATE` prints).

use std::process::Command;

/// The packages in `krate`'s dependency tree (default features), by name.
fn tree(krate: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--quiet",
            "--offline",
            "--prefix",
            "none",
            "-p",
            krate,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {krate}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| !n.starts_with('['))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn refuses(krate: &str, forbidden: &[&str], why: &str) {
    let names = tree(krate);
    assert!(
        names.iter().any(|n| n == krate),
        "{krate} is not in its tree"
    );
    let found: Vec<_> = forbidden
        .iter()
        .filter(|f| names.iter().any(|n| n == *f))
        .collect();
    assert!(found.is_empty(), "{krate} depends on {found:?}: {why}");
}

/// The hardware and the simulator behind the generator and the co-simulation.
const HARDWARE: &[&str] = &[
    "rust-hdl",
    "horus-pipeline",
    "rtl-gen",
    "horus-hdl-tools",
    "horus-cosim",
    "libloading",
];

#[test]
fn an_operators_tools_link_no_hardware_description_generator_or_simulator() {
    let why = "an operator's binary talks to a card through horus-regs; the Verilated RTL is the \
               `cosim` feature";
    refuses("horus-host-driver", HARDWARE, why);
    let mut endpoints = HARDWARE.to_vec();
    endpoints.extend(["horus-sim", "rayon", "csv"]);
    refuses(
        "horus-endpoints",
        &endpoints,
        "service times and the random streams live in horus-workload",
    );
    refuses("horus-regs", HARDWARE, "the host's facts know no circuit");
}

#[test]
fn the_model_circuit_and_simulator_keep_to_their_layers() {
    refuses(
        "horus-model",
        &[
            "horus-regs",
            "horus-workload",
            "horus-pipeline",
            "rtl-gen",
            "horus-host-driver",
            "horus-sim",
            "horus-endpoints",
            "horus-cosim",
        ],
        "the model is the specification: it imports nothing of ours",
    );
    refuses(
        "horus-pipeline",
        &[
            "horus-host-driver",
            "rtl-gen",
            "horus-sim",
            "horus-endpoints",
        ],
        "the circuit knows no host and no emitter",
    );
    refuses(
        "horus-sim",
        &[
            "rust-hdl",
            "horus-pipeline",
            "horus-regs",
            "horus-host-driver",
        ],
        "the simulator runs the model's decisions",
    );
}
