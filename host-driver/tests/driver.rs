//! The driver on the model device and on a file standing for a PCIe BAR: `apply` writes only
//! what differs, the state read back is the model's, every error kind is reported.

use std::path::Path;

use horus_host_driver::device::{Device, DeviceSpec, ModelDevice, PciBar};
use horus_host_driver::driver::{DriverError, Switch, plan};
use horus_host_driver::{AccessError, Regs};
use horus_model::config::Config;
use horus_model::sched::{ControlOp, Scheduler, Stage};
use horus_regs::readback;
use horus_regs::regmap;

fn example(name: &str) -> Config {
    let p = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
    Config::from_file(Path::new(&p)).unwrap()
}

fn model(cfg: &Config) -> Switch<ModelDevice> {
    Switch::open(ModelDevice::fresh(cfg, 1, "model").unwrap()).unwrap()
}

/// The configuration tables of the switch equal those of the model configured from `cfg`.
fn assert_configured_as(sw: &mut Switch<ModelDevice>, cfg: &Config) {
    let (want, _) = Scheduler::from_config(cfg, 1).unwrap();
    let nodes = cfg.sizes.nodes;
    for stage in [
        Stage::PoolCfg,
        Stage::Members1,
        Stage::Node,
        Stage::NodeAddr,
    ] {
        let len = if stage == Stage::PoolCfg {
            cfg.sizes.pools
        } else {
            nodes
        };
        for i in 0..len {
            let got = sw.read_entry(stage, i).unwrap().unwrap();
            let w = readback::encode(want.tables(), want.role(), stage, i.into());
            assert_eq!(got, w, "{}[{i}]", stage.table_name());
        }
    }
}

#[test]
fn apply_programs_a_fresh_switch_then_finds_nothing_to_do() {
    for name in ["example-leaf.toml", "example-spine.toml"] {
        let cfg = example(name);
        let mut sw = model(&cfg);
        let a = sw.apply(&cfg).unwrap();
        assert_eq!(a.ops, horus_model::sched::config_ops(&cfg), "{name}");
        assert!(!a.words.is_empty());
        assert_configured_as(&mut sw, &cfg);
        let passes = sw.regs.switch().scheduler().counters().control_passes;
        let again = sw.apply(&cfg).unwrap();
        assert!(
            again.ops.is_empty() && again.words.is_empty(),
            "{name}: {again:?}"
        );
        assert_eq!(
            sw.regs.switch().scheduler().counters().control_passes,
            passes
        );
    }
}

#[test]
fn apply_of_a_changed_configuration_runs_only_the_difference() {
    let cfg = example("example-leaf.toml");
    let mut sw = model(&cfg);
    sw.apply(&cfg).unwrap();
    let mut changed = cfg.clone();
    // Pool 1: new thresholds, node 7 gone, node 6 moved to another port, a new node 20.
    let p1 = &mut changed.pools[0];
    p1.params.idle_link_at = 3;
    p1.nodes.retain(|n| n.id != 7);
    p1.nodes.iter_mut().find(|n| n.id == 6).unwrap().port = 30;
    let mut new = p1.nodes[0].clone();
    new.id = 20;
    new.port = 31;
    p1.nodes.push(new);
    // Pool 3: twice the capacity; the slot after its region is free, so it grows in place.
    changed.pools[2].capacity = 2;
    let kinds = |ops: &[ControlOp]| -> Vec<String> {
        ops.iter()
            .map(|op| match op {
                ControlOp::ConfigurePool { pool, base, .. } => {
                    format!("configure {pool} at {base}")
                }
                ControlOp::SetPoolParams { pool, capacity, .. } => {
                    format!("set {pool} to {capacity}")
                }
                ControlOp::AddNode { node, .. } => format!("add {node}"),
                ControlOp::RemoveNode { node, .. } => format!("remove {node}"),
            })
            .collect()
    };
    let a = sw.apply(&changed).unwrap();
    assert_eq!(
        kinds(&a.ops),
        [
            "remove 6",
            "remove 7",
            "set 1 to 8",
            "add 6",
            "add 20",
            "set 3 to 2"
        ],
        "{:?}",
        a.ops
    );
    // Re-reading the switch finds it equal to the changed configuration.
    let m = sw.state(&[]).unwrap();
    assert!(plan(&m, &changed).unwrap().is_empty());
    // Pool 2 grows into pool 3's region: it cannot grow in place, so it is emptied and placed
    // again after pool 3.
    changed.pools[1].capacity = 10;
    let k = kinds(&sw.apply(&changed).unwrap().ops);
    assert_eq!(k.len(), 11, "{k:?}");
    assert!(k[..5].iter().all(|o| o.starts_with("remove ")), "{k:?}");
    assert_eq!(k[5], "configure 2 at 18");
    assert_eq!(k[6..], ["add 8", "add 9", "add 10", "add 11", "add 12"]);
    let m = sw.state(&[]).unwrap();
    assert!(plan(&m, &changed).unwrap().is_empty());
}

#[test]
fn a_pool_the_configuration_drops_is_emptied() {
    let cfg = example("example-leaf.toml");
    let mut sw = model(&cfg);
    sw.apply(&cfg).unwrap();
    let mut fewer = cfg.clone();
    fewer.pools.remove(1);
    let a = sw.apply(&fewer).unwrap();
    assert_eq!(a.ops.len(), 5, "pool 2's five nodes: {:?}", a.ops);
    assert!(
        a.ops
            .iter()
            .all(|op| matches!(op, ControlOp::RemoveNode { pool: 2, .. }))
    );
}

#[test]
fn a_configuration_that_does_not_fit_the_bitstream_names_every_difference() {
    let leaf = example("example-leaf.toml");
    let mut sw = model(&leaf);
    let mut other = example("example-spine.toml");
    other.switch.conn_timeout_us += 1;
    let e = sw.apply(&other).unwrap_err();
    let DriverError::Mismatch(m) = &e else {
        panic!("{e}")
    };
    assert_eq!(m.len(), 3, "{m:?}");
    assert!(
        e.to_string()
            .contains("switch.role is spine, the bitstream is a leaf")
    );
    assert!(e.to_string().contains("conn_timeout_us"));
}

#[test]
fn operations_the_switch_would_refuse_are_refused_before_any_write() {
    let cfg = example("example-leaf.toml");
    let mut sw = model(&cfg);
    sw.apply(&cfg).unwrap();
    let mut m = sw.state(&[40]).unwrap();
    let before = sw.regs.switch().scheduler().counters().control_passes;
    let e = sw
        .control(&mut m, ControlOp::RemoveNode { pool: 2, node: 40 })
        .unwrap_err();
    assert!(matches!(e, DriverError::Refused(_)), "{e}");
    assert!(
        e.to_string().contains("node 40 is not a node of pool 2"),
        "{e}"
    );
    assert_eq!(
        sw.regs.switch().scheduler().counters().control_passes,
        before
    );
}

#[test]
fn accesses_outside_the_map_are_refused_by_the_driver() {
    let cfg = example("example-leaf.toml");
    let mut sw = model(&cfg);
    assert!(matches!(
        sw.peek(2),
        Err(DriverError::Access(AccessError::Unaligned { .. }))
    ));
    assert!(matches!(
        sw.peek(0x1000),
        Err(DriverError::Access(AccessError::OutOfMap { .. }))
    ));
    assert_eq!(
        sw.peek(0x11c).unwrap(),
        0,
        "BOARD_DROPS, the map's last word"
    );
    assert!(matches!(
        sw.peek(0x120),
        Err(DriverError::Access(AccessError::Unmapped { .. }))
    ));
    assert!(matches!(
        sw.poke(0, 1),
        Err(DriverError::Access(AccessError::ReadOnly { .. }))
    ));
    // The device itself answers SLVERR to what gets past (a backend reached directly).
    assert!(matches!(
        sw.regs.read(0x120),
        Err(AccessError::SlvErr { op: "read", .. })
    ));
    assert_eq!(sw.peek(0).unwrap(), regmap::ID_VALUE);
}

/// A file laid out as a BAR holding a switch's identification at `base`.
fn bar_file(dir: &Path, base: usize, id: u32, version: u32) -> std::path::PathBuf {
    let mut bytes = vec![0u8; base + 8192];
    let put = |b: &mut Vec<u8>, word: usize, v: u32| {
        b[base + 4 * word..base + 4 * word + 4].copy_from_slice(&v.to_le_bytes())
    };
    put(&mut bytes, 0, id);
    put(&mut bytes, 1, 3 << 8 | 6 << 16 | 4 << 24);
    put(&mut bytes, regmap::fields::MAP_VERSION.word, version);
    put(&mut bytes, regmap::fields::BUILD_HASH.word, 0x1234_5678);
    put(&mut bytes, regmap::fields::CONN_TIMEOUT_US.word, 20_000);
    let p = dir.join("resource2");
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn the_pci_backend_maps_the_window_and_accesses_exact_offsets_and_widths() {
    let dir = tempfile::tempdir().unwrap();
    let base = 0x10_0000;
    let p = bar_file(dir.path(), base, regmap::ID_VALUE, regmap::MAP_VERSION);
    let spec: DeviceSpec = format!("file:{},base={base:#x}", p.display())
        .parse()
        .unwrap();
    let mut sw = Switch::open(Device::open(&spec, None).unwrap()).unwrap();
    assert_eq!(sw.ident.build_hash, 0x1234_5678);
    assert_eq!(sw.ident.preset().unwrap().name, "small");
    let sw_id = regmap::fields::SWITCH_ID.byte_address();
    sw.poke(sw_id as u32, 0xa1b2_c3d4).unwrap();
    assert_eq!(sw.peek(sw_id as u32).unwrap(), 0xa1b2_c3d4);
    drop(sw);
    // The file holds the value little-endian at base + 0x10, and nothing else changed.
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(
        &bytes[base + sw_id..base + sw_id + 4],
        &[0xd4, 0xc3, 0xb2, 0xa1]
    );
    let fresh = {
        let d = tempfile::tempdir().unwrap();
        std::fs::read(bar_file(
            d.path(),
            base,
            regmap::ID_VALUE,
            regmap::MAP_VERSION,
        ))
        .unwrap()
    };
    let differ: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != fresh[i]).collect();
    assert_eq!(differ, (base + sw_id..base + sw_id + 4).collect::<Vec<_>>());
    // Accesses beyond the register map never reach the mapping.
    let mut bar = PciBar::open_path(&p, base as u64).unwrap();
    assert!(matches!(bar.read(0x200), Err(AccessError::OutOfMap { .. })));
    assert!(matches!(
        bar.write(0x3, 0),
        Err(AccessError::OutOfMap { .. })
    ));
}

#[test]
fn the_pci_backend_says_what_is_wrong_with_a_device() {
    let dir = tempfile::tempdir().unwrap();
    // Not a Horus switch.
    let p = bar_file(dir.path(), 0, 0xffff_ffff, regmap::MAP_VERSION);
    let e = Switch::open(PciBar::open_path(&p, 0).unwrap())
        .err()
        .unwrap();
    assert!(matches!(e, DriverError::NotHorus(0xffff_ffff)), "{e}");
    // Another register map.
    let p = bar_file(dir.path(), 0, regmap::ID_VALUE, regmap::MAP_VERSION + 1);
    let e = Switch::open(PciBar::open_path(&p, 0).unwrap())
        .err()
        .unwrap();
    assert!(matches!(e, DriverError::MapVersion { .. }), "{e}");
    // A window beyond the BAR, an unaligned base, a missing device.
    let e = PciBar::open_path(&p, 0x10_0000).err().unwrap().to_string();
    assert!(e.contains("no window"), "{e}");
    let e = PciBar::open_path(&p, 0x10).err().unwrap().to_string();
    assert!(e.contains("page-aligned"), "{e}");
    let e = PciBar::open("0000:ff:1f.7", 2, 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("is the BDF right"), "{e}");
}

#[test]
fn a_failed_leaf_leaves_every_pool_of_the_spine() {
    let cfg = example("example-spine.toml");
    let mut sw = model(&cfg);
    sw.apply(&cfg).unwrap();
    // Leaf 3 holds racks of pools 1 and 2 in the example.
    let racks = |sw: &mut Switch<ModelDevice>, leaf: u16| {
        let m = sw.state(&[]).unwrap();
        let t = m.tables();
        t.pools
            .iter()
            .flat_map(|r| r.cfg.base..r.cfg.base + r.cfg.n)
            .filter(|&s| {
                let n = t.members1[usize::from(s)].node;
                t.nodes[usize::from(n)].addr.unwrap().addr.dst_id == leaf
            })
            .count()
    };
    let before = racks(&mut sw, 3);
    assert!(before >= 2, "{before}");
    let ops = sw.fail_leaf(3).unwrap();
    assert_eq!(ops.len(), before);
    assert_eq!(racks(&mut sw, 3), 0);
    assert!(racks(&mut sw, 1) > 0, "the other leaves stay");
    let e = sw.fail_leaf(3).unwrap_err().to_string();
    assert!(
        e.contains("no pool of this spine has a rack of leaf 3"),
        "{e}"
    );
    // Added back (add-leaf) as a rack of 8 workers: its additive factor is 1/8.
    let node = 40;
    let mut m = sw.state(&[node]).unwrap();
    let addr = horus_model::sched::NodeAddr {
        endpoint: horus_model::wire::Endpoint {
            mac: "02:00:00:00:00:03".parse().unwrap(),
            ip: "10.0.0.3".parse().unwrap(),
            udp_port: 1234,
        },
        port: 3,
        dst_id: 3,
    };
    sw.control(
        &mut m,
        ControlOp::AddNode {
            pool: 1,
            node,
            addr,
            workers: 8,
        },
    )
    .unwrap();
    assert_eq!(racks(&mut sw, 3), 1);
    let w = sw.read_entry(Stage::Node, node).unwrap().unwrap();
    let mut t = horus_model::sched::Tables::new(64, 1024, 1024);
    readback::decode(&mut t, Stage::Node, node.into(), &w).unwrap();
    assert_eq!(
        t.nodes[usize::from(node)].node.factor,
        horus_model::fixed::Load::additive_factor(8)
    );
}

#[test]
fn a_node_moves_to_a_pool_earlier_in_the_file() {
    let cfg = example("example-leaf.toml");
    let mut sw = model(&cfg);
    sw.apply(&cfg).unwrap();
    // Node 9 leaves pool 2 for pool 1, which comes first in the file, in the place of node 7.
    let mut moved = cfg.clone();
    let n9 = moved.pools[1].nodes.iter().position(|n| n.id == 9).unwrap();
    let node = moved.pools[1].nodes.remove(n9);
    moved.pools[0].nodes.retain(|n| n.id != 7);
    moved.pools[0].nodes.push(node);
    let a = sw.apply(&moved).unwrap();
    assert_eq!(a.ops.len(), 3, "{:?}", a.ops);
    assert!(matches!(
        a.ops[0],
        ControlOp::RemoveNode { pool: 2, node: 9 }
    ));
    assert!(matches!(
        a.ops[1],
        ControlOp::RemoveNode { pool: 1, node: 7 }
    ));
    assert!(matches!(
        a.ops[2],
        ControlOp::AddNode {
            pool: 1,
            node: 9,
            ..
        }
    ));
    let m = sw.state(&[]).unwrap();
    assert!(plan(&m, &moved).unwrap().is_empty());
}

#[test]
fn a_refused_plan_changes_nothing_and_a_spine_entry_is_valid_only_once_written() {
    use horus_host_driver::device::Recorder;
    let cfg = example("example-leaf.toml");
    let dev = Recorder::new(ModelDevice::fresh(&cfg, 1, "model").unwrap());
    let mut sw = Switch::open(dev).unwrap();
    sw.apply(&cfg).unwrap();
    // A pool that cannot be placed: the switch registers are not touched either.
    let mut bad = cfg.clone();
    bad.switch.id = 99;
    bad.pools[0].capacity = cfg.sizes.nodes;
    let before = sw.regs.script().len();
    let e = sw.apply(&bad).unwrap_err().to_string();
    assert!(e.contains("no free region"), "{e}");
    assert!(
        !sw.regs.script()[before..].contains("write 0x010"),
        "SWITCH_ID written"
    );
    // A new address for spine 1 (entry 0, words 8..11): VALID cleared first, set last.
    let mut moved = cfg.clone();
    moved.spines[0].ip = "10.0.9.9".parse().unwrap();
    let before = sw.regs.script().len();
    let a = sw.apply(&moved).unwrap();
    assert_eq!(a.words, [8, 11]);
    let writes: Vec<&str> = sw.regs.script()[before..]
        .lines()
        .filter(|l| {
            // The switch registers (words 4..=23), not the read-back's staging.
            l.strip_prefix("write 0x")
                .and_then(|r| usize::from_str_radix(&r[..3], 16).ok())
                .is_some_and(|a| (0x10..=0x5c).contains(&a))
        })
        .collect();
    assert_eq!(writes.len(), 3, "{writes:?}");
    assert!(
        writes[0].starts_with("write 0x020 0x00010200"),
        "{writes:?}"
    );
    assert!(
        writes[1].starts_with("write 0x02c 0x0a000909"),
        "{writes:?}"
    );
    assert!(
        writes[2].starts_with("write 0x020 0x00010201"),
        "{writes:?}"
    );
}

/// `peek` and `poke` take the card's lock: while another process holds it they wait, and give up
/// after [`LOCK_WAIT`](horus_host_driver::device::pci::LOCK_WAIT) with a message that says why;
/// once it is free they go through, a field's read-modify-write under the lock.
#[test]
fn peek_and_poke_wait_for_the_cards_lock_and_give_up_with_a_reason() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let base = 0x10_0000;
    let p = bar_file(dir.path(), base, regmap::ID_VALUE, regmap::MAP_VERSION);
    let dev = format!("file:{},base={base:#x}", p.display());
    let holder = std::fs::File::open(&p).unwrap();
    // SAFETY: flock(2) on a file this test opened.
    assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_horusctl"))
            .args(["--device", &dev])
            .args(args)
            .output()
            .unwrap()
    };
    let t = std::time::Instant::now();
    let out = run(&["poke", "SWITCH_ID", "5"]);
    let waited = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is locked by another process"), "{err}");
    assert!(
        waited >= horus_host_driver::device::pci::LOCK_WAIT,
        "{waited:?}"
    );
    drop(holder);
    let out = run(&["poke", "SWITCH_ID", "5"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["peek", "SWITCH_ID"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SWITCH_ID = 0x5"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
