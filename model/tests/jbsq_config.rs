//! The JBSQ leaf's configuration keys (`[switch] leaf = "jbsq"`): parsed, checked, written back,
//! and turned into the model's leaf (`JbsqLeaf::from_config`).

use horus_model::config::{Config, ConfigError};
use horus_model::sched::counters::Signal;
use horus_model::sched::jbsq::{Advertise, Fallback, JbsqLeaf, JbsqSizes, LeafKind, Placement};
use horus_model::wire::{HorusHeader, PacketType};

fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/example-leaf-jbsq.toml"
    ))
    .unwrap()
}

fn task(pool: u16, seq: u16) -> HorusHeader {
    HorusHeader {
        pkt_type: PacketType::NewTask,
        more_packets: false,
        pool_id: pool,
        src_id: 0xFFFF,
        dst_id: 0,
        qlen: 0,
        seq_num: seq,
    }
}

/// The message of the error for the example with `from` replaced by `to` (once).
fn refused(from: &str, to: &str) -> String {
    let text = example();
    assert_eq!(text.matches(from).count(), 1, "{from:?}");
    match Config::from_toml_str(&text.replacen(from, to, 1)) {
        Err(e @ ConfigError::Invalid { .. }) => e.to_string(),
        other => panic!("{from:?} -> {to:?}: {other:?}"),
    }
}

#[test]
fn the_example_parses_with_its_keys_resolved_and_round_trips() {
    let c = Config::from_toml_str(&example()).unwrap();
    assert_eq!(c.switch.leaf, LeafKind::Jbsq);
    let (p1, p2) = (c.pool(1).unwrap(), c.pool(2).unwrap());
    assert_eq!((p1.jbsq.k, p1.jbsq.advertise), (2, Advertise::Places));
    assert_eq!(p1.jbsq.fallback, Fallback::Random);
    assert_eq!(p1.nodes[2].k, Some(4));
    assert_eq!(
        (p2.jbsq.k, p2.jbsq.advertise),
        (1, Advertise::Queue { room: 4 })
    );
    // Pool 1 sets 1,024 slots; pool 2 takes the rest.
    assert_eq!(c.buffer_regions(), [(0, 1024), (1024, 3072)]);
    assert_eq!(Config::from_toml_str(&c.to_toml_string()).unwrap(), c);
}

#[test]
fn the_example_makes_a_leaf_that_bounds_each_worker_and_holds_the_rest() {
    let c = Config::from_toml_str(&example()).unwrap();
    let (mut leaf, startup) = JbsqLeaf::from_config(&c, 1).unwrap();
    // Each pool's first worker links its rack at the spine.
    assert_eq!(startup.len(), 2);
    assert!(startup.iter().all(|(s, _)| *s == Signal::IdleAdd));
    // Pool 1: places 2 + 2 + 4 = 8, then tasks wait.
    let placed: Vec<Placement> = (0..9)
        .map(|s| leaf.packet(task(1, s), 64, 10).placement.unwrap())
        .collect();
    let to = |n: u16| {
        placed
            .iter()
            .filter(|p| matches!(p, Placement::Token { node, .. } if *node == n))
            .count()
    };
    assert_eq!((to(0), to(1), to(2)), (2, 2, 4), "{placed:?}");
    assert_eq!(placed[8], Placement::Held { depth: 1 });
    // Pool 2: k = 1, two workers; the third task waits, in its own region.
    for s in 0..2 {
        assert!(matches!(
            leaf.packet(task(2, s), 64, 10).placement,
            Some(Placement::Token { .. })
        ));
    }
    assert_eq!(
        leaf.packet(task(2, 2), 64, 10).placement,
        Some(Placement::Held { depth: 1 })
    );
    assert_eq!(leaf.tables().queue_ctl[2].depth, 1);
}

#[test]
fn jbsq_keys_are_refused_off_a_jbsq_leaf_and_bad_values_name_their_key() {
    let horus = |s: &str| refused("leaf = \"jbsq\"               #", s);
    let e = horus("leaf = \"horus\" #");
    assert!(
        e.starts_with("defaults.k: only for the leaf that holds tasks"),
        "{e}"
    );
    let e = refused("role = \"leaf\"", "role = \"spine\"");
    assert!(
        e.starts_with("switch.leaf: only a leaf may hold tasks"),
        "{e}"
    );
    let e = refused("k = 1\nadvertise", "k = 0\nadvertise");
    assert!(e.starts_with("pools[1].k: must be at least 1"), "{e}");
    let e = refused("room = 4\n", "");
    assert!(
        e.starts_with("pools[1].room: required with advertise = \"queue\""),
        "{e}"
    );
    let e = refused("advertise = \"queue\"\n", "");
    assert!(
        e.starts_with("pools[1].room: only with advertise = \"queue\""),
        "{e}"
    );
    let e = refused("buffer_slots = 1024", "buffer_slots = 4096");
    assert!(
        e.starts_with("pools: the pools' buffer_slots take 4096"),
        "{e}"
    );
    let e = refused("buffer_slots = 1024", "buffer_slots = 40000");
    assert!(
        e.starts_with("pools[0].buffer_slots: must be in 1..=32768"),
        "{e}"
    );
    let e = refused("  k = 4  ", "  k = 0  ");
    assert!(
        e.starts_with("pools[0].nodes[2].k: must be at least 1"),
        "{e}"
    );
    // A misspelt key is a parse error, as everywhere in the file.
    let text = example().replacen(
        "fallback = \"random\"         #",
        "fallback = \"later\"         #",
        1,
    );
    assert!(matches!(
        Config::from_toml_str(&text),
        Err(ConfigError::Parse { .. })
    ));
}

#[test]
fn a_paper_leaf_config_is_not_a_jbsq_leaf_and_its_rings_must_fit() {
    let paper = Config::from_toml_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/example-leaf.toml"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(paper.switch.leaf, LeafKind::Horus);
    let e = JbsqLeaf::from_config(&paper, 1).unwrap_err().to_string();
    assert!(
        e.starts_with("switch.leaf: not the leaf that holds tasks"),
        "{e}"
    );
    // A bound of 255 on pool 1's three workers: 8 x 3 x 32 = 768 entries, fine; a capacity of
    // 4,096 at k = 17 needs 8 x 4,096 x 3 = 98,304, more than 65,536.
    let big = example()
        .replacen(
            "buffer_slots = 1024",
            "buffer_slots = 1024\ncapacity = 4000\nk = 17",
            1,
        )
        .replacen("[switch]", "[sizes]\nnodes = 8192\n\n[switch]", 1);
    let c = Config::from_toml_str(&big).unwrap();
    let e = JbsqLeaf::from_config(&c, 1).unwrap_err().to_string();
    assert!(
        e.starts_with("pools[0].k: the pools' token rings need"),
        "{e}"
    );
}

#[test]
fn what_runs_only_the_papers_leaf_refuses_a_jbsq_leafs_config() {
    use horus_model::sched::{ControlError, Scheduler};
    let c = Config::from_toml_str(&example()).unwrap();
    let e = c.paper_leaf_only().unwrap_err().to_string();
    assert!(
        e.starts_with("switch.leaf: the leaf that holds tasks"),
        "{e}"
    );
    assert!(matches!(
        Scheduler::from_config(&c, 1),
        Err(ControlError::NotPaperLeaf(m)) if m == e
    ));
}

#[test]
fn a_leaf_of_other_sizes_shares_its_own_buffer_and_rings_and_checks_the_table_sizes() {
    let small = JbsqSizes::SMALL;
    let at_small = |text: &str| {
        let c = Config::from_toml_str(&text.replacen(
            "[switch]",
            "[sizes]\npools = 4\nnodes = 64\nconn_table = 64\n\n[switch]",
            1,
        ))
        .unwrap();
        JbsqLeaf::from_config_at(&c, small, 1).map(|(leaf, _)| (leaf, c))
    };
    // Pool 1's 1,024 slots do not fit 64.
    let e = at_small(&example()).unwrap_err().to_string();
    assert!(e.starts_with("pools[0]: the pool's regions"), "{e}");
    // Without them, the two pools share the 64 slots.
    let (leaf, c) = at_small(&example().replacen("buffer_slots = 1024\n", "", 1)).unwrap();
    assert_eq!(c.buffer_regions_of(small.buffer_slots), [(0, 32), (32, 32)]);
    assert_eq!(leaf.sizes(), small);
    let q = |p: usize| {
        let pc = leaf.tables().pool_cfg[p].unwrap().cfg;
        (pc.queue_base, pc.queue_slots)
    };
    assert_eq!((q(1), q(2)), ((0, 32), (32, 32)));
    // The configuration's table sizes must be the leaf's.
    let c = Config::from_toml_str(&example()).unwrap();
    let e = JbsqLeaf::from_config_at(&c, small, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("sizes: 64 pools, 4096 nodes, 1024 connections; the leaf has 4, 64, 64"),
        "{e}"
    );
}
