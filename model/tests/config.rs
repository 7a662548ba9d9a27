//! Tests of `horus_model::config`: the example configs, defaults, every validation rule (exact key
//! and message), parse errors, and robustness against arbitrary input.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use horus_model::config::{
    Config, ConfigError, NodeConfig, PoolParams, Role, Sizes, SpineLink, SwitchConfig,
};
use horus_model::wire::MacAddr;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Helpers

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("model/ has a parent")
        .to_path_buf()
}

fn example_leaf_text() -> String {
    std::fs::read_to_string(repo_root().join("configs/example-leaf.toml")).unwrap()
}

fn example_spine_text() -> String {
    std::fs::read_to_string(repo_root().join("configs/example-spine.toml")).unwrap()
}

fn mac(s: &str) -> MacAddr {
    s.parse().unwrap()
}

/// A leaf `[switch]` section with `extra` lines appended to it, followed by one spine (ID 1) and
/// `rest`.
fn leaf_with(switch_extra: &str, rest: &str) -> String {
    format!(
        r#"
[switch]
role = "leaf"
id = 3
mac = "02:00:00:00:00:03"
ip = "10.0.0.3"
pass_through_port = 1
control_port = 0
{switch_extra}

[[spines]]
id = 1
mac = "02:00:00:00:01:01"
ip = "10.0.1.1"
udp_port = 1234
port = 2

{rest}
"#
    )
}

fn leaf(rest: &str) -> String {
    leaf_with("", rest)
}

/// A spine `[switch]` section followed by `rest`.
fn spine(rest: &str) -> String {
    format!(
        r#"
[switch]
role = "spine"
id = 1
mac = "02:00:00:00:01:01"
ip = "10.0.1.1"
pass_through_port = 5
control_port = 0

{rest}
"#
    )
}

/// A `[[pools.nodes]]` block for a worker (leaf node).
fn worker(id: u16) -> String {
    format!(
        r#"
  [[pools.nodes]]
  id = {id}
  mac = "02:00:00:03:00:01"
  ip = "10.0.3.1"
  udp_port = 5000
  port = 8
"#
    )
}

/// A `[[pools.nodes]]` block for a rack (spine node), with `extra` lines (`workers`, `leaf`).
fn rack(id: u16, extra: &str) -> String {
    format!(
        r#"
  [[pools.nodes]]
  id = {id}
  mac = "02:00:00:00:00:03"
  ip = "10.0.0.3"
  udp_port = 1234
  port = 3
  {extra}
"#
    )
}

/// A leaf `[[pools]]` entry linked to spine 1 with `extra` lines and one worker per node ID.
fn leaf_pool(id: u16, spine_node: u16, extra: &str, nodes: &[u16]) -> String {
    let mut s = format!("\n[[pools]]\nid = {id}\nspine = 1\nspine_node = {spine_node}\n{extra}\n");
    for &n in nodes {
        s += &worker(n);
    }
    s
}

/// A spine `[[pools]]` entry with `extra` lines and the given rack blocks.
fn spine_pool(id: u16, extra: &str, racks: &[String]) -> String {
    let mut s = format!("\n[[pools]]\nid = {id}\n{extra}\n");
    for r in racks {
        s += r;
    }
    s
}

fn parse(text: &str) -> Config {
    match Config::from_toml_str(text) {
        Ok(c) => c,
        Err(e) => panic!("expected a valid config, got: {e}\n--- config ---\n{text}"),
    }
}

/// Asserts that `text` is rejected with `ConfigError::Invalid` at exactly `key`, with a message
/// containing `fragment`.
#[track_caller]
fn assert_invalid(text: &str, key: &str, fragment: &str) {
    match Config::from_toml_str(text) {
        Err(ConfigError::Invalid { key: k, message }) => {
            assert_eq!(k, key, "wrong key (message: {message})");
            assert!(
                message.contains(fragment),
                "message {message:?} does not contain {fragment:?}"
            );
        }
        other => panic!("expected Invalid at {key}, got {other:?}\n--- config ---\n{text}"),
    }
}

#[track_caller]
fn assert_parse_error(text: &str, fragment: &str) {
    match Config::from_toml_str(text) {
        Err(ConfigError::Parse { message }) => assert!(
            message.contains(fragment),
            "message {message:?} does not contain {fragment:?}"
        ),
        other => panic!("expected a Parse error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Example configs

#[test]
fn example_leaf_config_parses_and_validates() {
    let c = parse(&example_leaf_text());
    c.validate().unwrap();
    assert_eq!(c.switch.role, Role::Leaf);
    assert_eq!(c.switch.id, 3);
    assert_eq!(c.switch.mac, mac("02:00:00:00:00:03"));
    assert_eq!(c.switch.ip, Ipv4Addr::new(10, 0, 0, 3));
    assert_eq!(c.sizes, Sizes::default_for(Role::Leaf));
    assert_eq!(c.spines.len(), 2);
    assert_eq!(c.spines[1].id, 2);
    assert_eq!(c.spines[1].port, 3);

    let sizes: Vec<usize> = c.pools.iter().map(|p| p.nodes.len()).collect();
    assert_eq!(sizes, [8, 5, 1]);
    let capacities: Vec<u16> = c.pools.iter().map(|p| p.capacity).collect();
    assert_eq!(capacities, [8, 8, 1]);
    let links: Vec<_> = c.pools.iter().map(|p| (p.spine, p.spine_node)).collect();
    assert_eq!(
        links,
        [(Some(1), Some(2)), (Some(1), Some(3)), (Some(2), Some(0))]
    );

    let p1 = c.pool(1).unwrap();
    assert_eq!(
        p1.params,
        PoolParams {
            idle_link_at: 2,
            idle_unlink_at: 1,
            report_delta_raw: 32_768,
            idle_repair_gap_us: 50,
        }
    );
    assert_eq!(c.pool(3).unwrap().params, PoolParams::default());
    let w = &c.pool(3).unwrap().nodes[0];
    assert_eq!(
        (w.id, w.udp_port, w.workers, w.leaf),
        (13, 5000, None, None)
    );
}

#[test]
fn example_spine_config_parses_and_validates() {
    let c = parse(&example_spine_text());
    c.validate().unwrap();
    assert_eq!(c.switch.role, Role::Spine);
    assert_eq!(c.switch.id, 1);
    assert_eq!(c.sizes, Sizes::default_for(Role::Spine));
    assert!(c.spines.is_empty());
    assert_eq!(c.pools.len(), 2);
    let racks: Vec<Vec<(Option<u16>, Option<u16>)>> = c
        .pools
        .iter()
        .map(|p| p.nodes.iter().map(|n| (n.leaf, n.workers)).collect())
        .collect();
    assert_eq!(
        racks,
        [
            vec![(Some(1), Some(16)), (Some(2), Some(4)), (Some(3), Some(8))],
            vec![(Some(3), Some(5)), (Some(4), Some(12))],
        ]
    );
    assert_eq!(c.pool(2).unwrap().capacity, 3);
    assert!(
        c.pools
            .iter()
            .all(|p| p.spine.is_none() && p.spine_node.is_none())
    );
}

#[test]
fn example_leaf_and_spine_agree_on_the_rack_of_leaf_3() {
    let leaf = parse(&example_leaf_text());
    let spine = parse(&example_spine_text());
    for pool in leaf
        .pools
        .iter()
        .filter(|p| p.spine == Some(spine.switch.id))
    {
        let node_id = pool.spine_node.unwrap();
        let at_spine = spine.pool(pool.id).unwrap();
        let rack = at_spine.nodes.iter().find(|n| n.id == node_id).unwrap();
        assert_eq!(rack.leaf, Some(leaf.switch.id));
        assert_eq!(rack.workers, Some(pool.nodes.len() as u16));
        assert_eq!(rack.mac, leaf.switch.mac);
    }
}

#[test]
fn examples_round_trip_through_to_toml_string() {
    for text in [example_leaf_text(), example_spine_text()] {
        let c = parse(&text);
        let written = c.to_toml_string();
        let again = parse(&written);
        assert_eq!(
            again, c,
            "round trip changed the config; written:\n{written}"
        );
        assert_eq!(again.to_toml_string(), written);
    }
}

#[test]
fn to_toml_string_writes_only_pool_params_that_differ_from_defaults() {
    let text = parse(&example_leaf_text()).to_toml_string();
    // Pool 1 overrides all three parameters; the defaults section writes them once more.
    assert_eq!(text.matches("report_delta").count(), 2, "{text}");
    assert_eq!(text.matches("idle_link_at").count(), 2, "{text}");
}

#[test]
fn from_file_reads_the_example_configs() {
    let leaf = Config::from_file(&repo_root().join("configs/example-leaf.toml")).unwrap();
    assert_eq!(leaf, parse(&example_leaf_text()));
    let spine = Config::from_file(&repo_root().join("configs/example-spine.toml")).unwrap();
    assert_eq!(spine, parse(&example_spine_text()));
}

#[test]
fn from_file_reports_a_missing_file_as_io_error_with_its_path() {
    let path = repo_root().join("configs/no-such-config.toml");
    match Config::from_file(&path) {
        Err(e @ ConfigError::Io { .. }) => {
            let ConfigError::Io { path: p, message } = &e else {
                unreachable!()
            };
            assert_eq!(p, &path);
            assert!(!message.is_empty());
            assert!(e.to_string().contains("no-such-config.toml"), "{e}");
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn config_deserializes_with_serde_in_the_operator_format_and_validates() {
    let c: Config = toml::from_str(&example_leaf_text()).unwrap();
    assert_eq!(c, parse(&example_leaf_text()));
    let bad = leaf(&leaf_pool(1, 0, "", &[0, 0]));
    let err = toml::from_str::<Config>(&bad).unwrap_err().to_string();
    assert!(
        err.contains("pools[0].nodes[1].id: duplicate node ID 0"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Defaults

#[test]
fn switch_udp_port_and_conn_timeout_default_when_omitted() {
    let c = parse(&leaf(""));
    assert_eq!(c.switch.udp_port, 1234);
    assert_eq!(c.switch.conn_timeout_us, 20_000);
    assert_eq!(c.switch.pass_through_port, 1);
    assert_eq!(c.switch.control_port, 0);
    assert!(c.pools.is_empty());
}

#[test]
fn sizes_default_per_role_when_omitted() {
    assert_eq!(
        parse(&leaf("")).sizes,
        Sizes {
            pools: 64,
            nodes: 4096,
            conn_table: 1024
        }
    );
    assert_eq!(
        parse(&spine("")).sizes,
        Sizes {
            pools: 64,
            nodes: 1024,
            conn_table: 1024
        }
    );
    assert_eq!(Sizes::default_for(Role::Leaf).nodes, 4096);
    assert_eq!(Sizes::default_for(Role::Spine).nodes, 1024);
}

#[test]
fn sizes_keys_default_individually_from_the_role() {
    let c = parse(&spine("[sizes]\nconn_table = 4096\n"));
    assert_eq!(
        c.sizes,
        Sizes {
            pools: 64,
            nodes: 1024,
            conn_table: 4096
        }
    );
    let c = parse(&leaf("[sizes]\npools = 8\n"));
    assert_eq!(
        c.sizes,
        Sizes {
            pools: 8,
            nodes: 4096,
            conn_table: 1024
        }
    );
}

#[test]
fn defaults_section_defaults_to_link_at_1_unlink_at_0_delta_1() {
    let c = parse(&leaf(&leaf_pool(0, 0, "", &[0])));
    let expected = PoolParams {
        idle_link_at: 1,
        idle_unlink_at: 0,
        report_delta_raw: 65_536,
        idle_repair_gap_us: 50,
    };
    assert_eq!(PoolParams::default(), expected);
    assert_eq!(c.defaults, expected);
    assert_eq!(c.pools[0].params, expected);
}

#[test]
fn pool_params_overlay_the_defaults_key_by_key() {
    let text = leaf(&format!(
        "[defaults]\nidle_link_at = 4\nidle_unlink_at = 2\nreport_delta = 2.0\nidle_repair_gap_us = 20\n{}{}",
        leaf_pool(0, 0, "idle_unlink_at = 3\nidle_repair_gap_us = 0", &[0]),
        leaf_pool(1, 1, "report_delta = 0.25", &[1]),
    ));
    let c = parse(&text);
    assert_eq!(
        c.defaults,
        PoolParams {
            idle_link_at: 4,
            idle_unlink_at: 2,
            report_delta_raw: 131_072,
            idle_repair_gap_us: 20,
        }
    );
    assert_eq!(
        c.pools[0].params,
        PoolParams {
            idle_link_at: 4,
            idle_unlink_at: 3,
            report_delta_raw: 131_072,
            idle_repair_gap_us: 0,
        }
    );
    assert_eq!(
        c.pools[1].params,
        PoolParams {
            idle_link_at: 4,
            idle_unlink_at: 2,
            report_delta_raw: 16_384,
            idle_repair_gap_us: 20,
        }
    );
    assert_eq!(parse(&c.to_toml_string()), c);
}

#[test]
fn report_delta_is_stored_as_rounded_16_16_fixed_point() {
    for (written, raw) in [
        ("1.0", 65_536),
        ("1", 65_536),
        ("0.5", 32_768),
        ("1.5", 98_304),
        ("0.0000152587890625", 1),
        ("0.00001", 1),                  // 0.655 raw rounds up to 1
        ("0.1", 6_554),                  // 6553.6 rounds to 6554
        ("65535.99998474121", u32::MAX), // the largest representable value
    ] {
        let c = parse(&leaf(&format!("[defaults]\nreport_delta = {written}\n")));
        assert_eq!(c.defaults.report_delta_raw, raw, "report_delta = {written}");
        assert_eq!(parse(&c.to_toml_string()), c, "report_delta = {written}");
    }
    let p = PoolParams {
        report_delta_raw: 98_304,
        ..PoolParams::default()
    };
    assert_eq!(p.report_delta(), 1.5);
}

#[test]
fn capacity_defaults_to_the_number_of_nodes_listed() {
    let c = parse(&leaf(&format!(
        "{}{}",
        leaf_pool(0, 0, "", &[0, 1, 2]),
        leaf_pool(1, 1, "capacity = 10", &[3]),
    )));
    assert_eq!(c.pools[0].capacity, 3);
    assert_eq!(c.pools[1].capacity, 10);
}

#[test]
fn a_pool_may_list_no_nodes_if_it_has_capacity() {
    let c = parse(&leaf(&leaf_pool(0, 0, "capacity = 4", &[])));
    assert!(c.pools[0].nodes.is_empty());
    assert_eq!(c.pools[0].capacity, 4);
    assert_eq!(parse(&c.to_toml_string()), c);
}

#[test]
fn pool_looks_up_by_id_not_index() {
    let c = parse(&example_leaf_text());
    assert_eq!(c.pool(2).unwrap().nodes.len(), 5);
    assert!(c.pool(0).is_none());
    assert!(c.pool(63).is_none());
}

#[test]
fn a_config_built_in_code_validates_and_round_trips() {
    let c = Config {
        switch: SwitchConfig {
            role: Role::Leaf,
            id: 7,
            mac: mac("02:00:00:00:00:07"),
            ip: Ipv4Addr::new(10, 0, 0, 7),
            udp_port: 1234,
            pass_through_port: 1,
            control_port: 0,
            conn_timeout_us: 5,
            leaf: Default::default(),
        },
        sizes: Sizes {
            pools: 4,
            nodes: 4,
            conn_table: 1,
        },
        defaults: PoolParams::default(),
        jbsq_defaults: Default::default(),
        spines: vec![SpineLink {
            id: 9,
            mac: mac("02:00:00:00:01:09"),
            ip: Ipv4Addr::new(10, 0, 1, 9),
            udp_port: 4321,
            port: 2,
        }],
        pools: vec![horus_model::config::PoolConfig {
            id: 3,
            capacity: 4,
            spine: Some(9),
            spine_node: Some(100),
            params: PoolParams {
                idle_link_at: 3,
                idle_unlink_at: 1,
                report_delta_raw: 1,
                idle_repair_gap_us: 7,
            },
            jbsq: Default::default(),
            buffer_slots: None,
            nodes: vec![NodeConfig {
                id: 3,
                mac: mac("02:00:00:07:00:01"),
                ip: Ipv4Addr::new(10, 0, 7, 1),
                udp_port: 5000,
                port: 8,
                workers: None,
                leaf: None,
                k: None,
            }],
        }],
        security: horus_model::config::SecurityConfig {
            allow: vec![
                "10.0.3.0/24".parse().unwrap(),
                "127.0.0.1/32".parse().unwrap(),
            ],
        },
    };
    c.validate().unwrap();
    assert_eq!(parse(&c.to_toml_string()), c);
}

// ---------------------------------------------------------------------------------------------
// Validation: switch and sizes

#[test]
fn conn_timeout_of_zero_is_rejected() {
    assert_invalid(
        &leaf_with("conn_timeout_us = 0", ""),
        "switch.conn_timeout_us",
        "at least 1",
    );
}

#[test]
fn sizes_pools_of_zero_is_rejected() {
    assert_invalid(&leaf("[sizes]\npools = 0\n"), "sizes.pools", "at least 1");
}

#[test]
fn sizes_nodes_of_zero_is_rejected() {
    assert_invalid(&spine("[sizes]\nnodes = 0\n"), "sizes.nodes", "at least 1");
}

#[test]
fn conn_table_must_be_a_power_of_two_up_to_65536() {
    for bad in [0, 3, 1000, 131_072] {
        assert_invalid(
            &leaf(&format!("[sizes]\nconn_table = {bad}\n")),
            "sizes.conn_table",
            &format!("power of two in 1..=65536 (got {bad})"),
        );
    }
    for good in [1, 2, 1024, 65_536] {
        parse(&leaf(&format!("[sizes]\nconn_table = {good}\n")));
    }
}

// ---------------------------------------------------------------------------------------------
// Validation: pools and nodes

#[test]
fn duplicate_pool_id_names_the_first_occurrence() {
    let text = leaf(&format!(
        "{}{}{}",
        leaf_pool(7, 0, "", &[0]),
        leaf_pool(8, 1, "", &[1]),
        leaf_pool(7, 2, "", &[2]),
    ));
    assert_invalid(
        &text,
        "pools[2].id",
        "duplicate pool ID 7 (also pools[0].id)",
    );
}

#[test]
fn pool_id_must_be_below_sizes_pools() {
    assert_invalid(
        &leaf(&format!(
            "[sizes]\npools = 8\n{}",
            leaf_pool(8, 0, "", &[0])
        )),
        "pools[0].id",
        "pool ID 8 out of range: must be below sizes.pools = 8",
    );
    parse(&leaf(&format!(
        "[sizes]\npools = 8\n{}",
        leaf_pool(7, 0, "", &[0])
    )));
}

#[test]
fn node_ids_must_be_unique_across_all_pools() {
    let text = leaf(&format!(
        "{}{}",
        leaf_pool(0, 0, "", &[0, 1, 2]),
        leaf_pool(1, 1, "", &[3, 4, 5, 2]),
    ));
    assert_invalid(
        &text,
        "pools[1].nodes[3].id",
        "duplicate node ID 2 (also pools[0].nodes[2].id)",
    );
}

#[test]
fn node_ids_must_be_unique_within_a_pool() {
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "", &[5, 5])),
        "pools[0].nodes[1].id",
        "duplicate node ID 5 (also pools[0].nodes[0].id)",
    );
}

#[test]
fn node_id_must_be_below_sizes_nodes() {
    assert_invalid(
        &leaf(&format!(
            "[sizes]\nnodes = 16\n{}",
            leaf_pool(0, 0, "", &[15, 16])
        )),
        "pools[0].nodes[1].id",
        "node ID 16 out of range: must be below sizes.nodes = 16",
    );
}

#[test]
fn a_pool_without_nodes_or_capacity_is_empty_and_rejected() {
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "", &[])),
        "pools[0].capacity",
        "empty pool",
    );
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "capacity = 0", &[])),
        "pools[0].capacity",
        "empty pool",
    );
}

#[test]
fn more_nodes_than_capacity_is_rejected() {
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "capacity = 2", &[0, 1, 2])),
        "pools[0].capacity",
        "pool has 3 nodes but capacity 2",
    );
}

#[test]
fn capacities_must_fit_in_sizes_nodes() {
    let text = leaf(&format!(
        "[sizes]\nnodes = 16\n{}{}",
        leaf_pool(0, 0, "capacity = 10", &[0]),
        leaf_pool(1, 1, "capacity = 7", &[1]),
    ));
    assert_invalid(
        &text,
        "pools",
        "pools reserve 17 node slots but sizes.nodes is 16",
    );
    let text = leaf(&format!(
        "[sizes]\nnodes = 16\n{}{}",
        leaf_pool(0, 0, "capacity = 10", &[0]),
        leaf_pool(1, 1, "capacity = 6", &[1]),
    ));
    parse(&text);
}

// ---------------------------------------------------------------------------------------------
// Validation: leaf

#[test]
fn leaf_pool_requires_spine() {
    let text = leaf("[[pools]]\nid = 0\nspine_node = 0\ncapacity = 1\n");
    assert_invalid(&text, "pools[0].spine", "required on a leaf");
}

#[test]
fn leaf_pool_spine_must_be_listed_in_spines() {
    let text = leaf("[[pools]]\nid = 0\nspine = 9\nspine_node = 0\ncapacity = 1\n");
    assert_invalid(&text, "pools[0].spine", "unknown spine 9");
}

#[test]
fn leaf_pool_requires_spine_node() {
    let text = leaf("[[pools]]\nid = 0\nspine = 1\ncapacity = 1\n");
    assert_invalid(&text, "pools[0].spine_node", "required on a leaf");
}

#[test]
fn leaf_spine_ids_must_be_unique() {
    let text = leaf(
        "[[spines]]\nid = 1\nmac = \"02:00:00:00:01:02\"\nip = \"10.0.1.2\"\nudp_port = 1234\nport = 3\n",
    );
    assert_invalid(
        &text,
        "spines[1].id",
        "duplicate spine ID 1 (also spines[0].id)",
    );
}

#[test]
fn leaf_spine_node_must_be_unique_per_spine() {
    let text = leaf(&format!(
        "{}{}",
        leaf_pool(0, 4, "", &[0]),
        leaf_pool(1, 4, "", &[1]),
    ));
    assert_invalid(
        &text,
        "pools[1].spine_node",
        "duplicate spine_node 4 at spine 1 (also pools[0].spine_node)",
    );
}

#[test]
fn leaf_spine_node_may_repeat_across_different_spines() {
    let text = leaf(&format!(
        "{}\n[[spines]]\nid = 2\nmac = \"02:00:00:00:01:02\"\nip = \"10.0.1.2\"\nudp_port = 1234\nport = 3\n\
         \n[[pools]]\nid = 1\nspine = 2\nspine_node = 4\n{}",
        leaf_pool(0, 4, "", &[0]),
        worker(1),
    ));
    let c = parse(&text);
    assert_eq!(c.pools[1].spine, Some(2));
}

#[test]
fn leaf_nodes_must_not_have_workers() {
    let mut pool = leaf_pool(0, 0, "", &[0]);
    pool += "  workers = 4\n";
    assert_invalid(
        &leaf(&pool),
        "pools[0].nodes[0].workers",
        "only allowed on a spine",
    );
}

#[test]
fn leaf_nodes_must_not_have_leaf() {
    let mut pool = leaf_pool(0, 0, "", &[0, 1]);
    pool += "  leaf = 4\n";
    assert_invalid(
        &leaf(&pool),
        "pools[0].nodes[1].leaf",
        "only allowed on a spine",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: spine

#[test]
fn spine_must_not_list_spines() {
    let text = spine(
        "[[spines]]\nid = 2\nmac = \"02:00:00:00:01:02\"\nip = \"10.0.1.2\"\nudp_port = 1234\nport = 3\n",
    );
    assert_invalid(&text, "spines", "a spine has no linked spines");
}

#[test]
fn spine_pool_must_not_have_spine() {
    let text = spine(&spine_pool(
        0,
        "spine = 1",
        &[rack(0, "workers = 1\n  leaf = 1")],
    ));
    assert_invalid(&text, "pools[0].spine", "only allowed on a leaf");
}

#[test]
fn spine_pool_must_not_have_spine_node() {
    let text = spine(&spine_pool(
        0,
        "spine_node = 1",
        &[rack(0, "workers = 1\n  leaf = 1")],
    ));
    assert_invalid(&text, "pools[0].spine_node", "only allowed on a leaf");
}

#[test]
fn spine_node_requires_workers() {
    let text = spine(&spine_pool(
        0,
        "",
        &[rack(0, "workers = 1\n  leaf = 1"), rack(1, "leaf = 2")],
    ));
    assert_invalid(&text, "pools[0].nodes[1].workers", "required on a spine");
}

#[test]
fn spine_node_workers_must_be_in_1_to_4096() {
    for bad in [0, 4097, 65_535] {
        let text = spine(&spine_pool(
            0,
            "",
            &[rack(0, &format!("workers = {bad}\n  leaf = 1"))],
        ));
        assert_invalid(
            &text,
            "pools[0].nodes[0].workers",
            &format!("must be in 1..=4096 (got {bad})"),
        );
    }
    for good in [1, 4096] {
        parse(&spine(&spine_pool(
            0,
            "",
            &[rack(0, &format!("workers = {good}\n  leaf = 1"))],
        )));
    }
}

#[test]
fn spine_node_requires_leaf() {
    let text = spine(&spine_pool(0, "", &[rack(0, "workers = 3")]));
    assert_invalid(&text, "pools[0].nodes[0].leaf", "required on a spine");
}

#[test]
fn spine_pool_must_not_list_the_same_leaf_twice() {
    let text = spine(&format!(
        "{}{}",
        spine_pool(0, "", &[rack(0, "workers = 3\n  leaf = 1")]),
        spine_pool(
            1,
            "",
            &[
                rack(1, "workers = 3\n  leaf = 1"),
                rack(2, "workers = 3\n  leaf = 2"),
                rack(3, "workers = 3\n  leaf = 1"),
            ]
        ),
    ));
    assert_invalid(
        &text,
        "pools[1].nodes[2].leaf",
        "duplicate leaf 1 in this pool (also pools[1].nodes[0].leaf)",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: parameters

#[test]
fn defaults_idle_link_at_must_be_at_least_1() {
    assert_invalid(
        &leaf("[defaults]\nidle_link_at = 0\n"),
        "defaults.idle_link_at",
        "at least 1",
    );
}

#[test]
fn defaults_idle_unlink_at_must_be_below_idle_link_at() {
    assert_invalid(
        &leaf("[defaults]\nidle_link_at = 3\nidle_unlink_at = 3\n"),
        "defaults.idle_unlink_at",
        "must be below idle_link_at",
    );
    assert_invalid(
        &leaf("[defaults]\nidle_unlink_at = 1\n"),
        "defaults.idle_unlink_at",
        "idle_unlink_at = 1, idle_link_at = 1",
    );
}

#[test]
fn defaults_report_delta_must_be_finite_positive_and_below_65536() {
    for (bad, fragment) in [
        ("nan", "finite"),
        ("inf", "finite"),
        ("-inf", "finite"),
        ("0.0", "positive"),
        ("-1.0", "positive"),
        ("65536.0", "below 65536"),
        ("1e10", "below 65536"),
        ("0.000007", "resolution"),        // 0.46 raw rounds to 0
        ("65535.9999999", "does not fit"), // rounds to 2^32
    ] {
        assert_invalid(
            &leaf(&format!("[defaults]\nreport_delta = {bad}\n")),
            "defaults.report_delta",
            fragment,
        );
    }
}

#[test]
fn pool_idle_link_at_override_must_be_at_least_1() {
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "idle_link_at = 0", &[0])),
        "pools[0].idle_link_at",
        "at least 1",
    );
}

#[test]
fn pool_idle_unlink_at_must_stay_below_idle_link_at_after_overlay() {
    // The pool lowers idle_link_at to the default idle_unlink_at.
    let text = leaf(&format!(
        "[defaults]\nidle_link_at = 4\nidle_unlink_at = 2\n{}",
        leaf_pool(0, 0, "idle_link_at = 2", &[0]),
    ));
    assert_invalid(
        &text,
        "pools[0].idle_unlink_at",
        "idle_unlink_at = 2, idle_link_at = 2",
    );
}

#[test]
fn pool_report_delta_override_must_be_valid() {
    let text = leaf(&format!(
        "{}{}",
        leaf_pool(0, 0, "report_delta = 2.0", &[0]),
        leaf_pool(1, 1, "report_delta = nan", &[1]),
    ));
    assert_invalid(&text, "pools[1].report_delta", "finite");
    assert_invalid(
        &leaf(&leaf_pool(0, 0, "report_delta = 0", &[0])),
        "pools[0].report_delta",
        "positive",
    );
}

#[test]
fn validate_rejects_a_zero_raw_report_delta_built_in_code() {
    let mut c = parse(&example_leaf_text());
    c.pools[2].params.report_delta_raw = 0;
    let err = c.validate().unwrap_err();
    assert_eq!(
        err,
        ConfigError::Invalid {
            key: "pools[2].report_delta".into(),
            message: "must be at least 1/65536 (raw 16.16 value 1), got raw 0".into(),
        }
    );
    c.defaults.report_delta_raw = 0;
    let err = c.validate().unwrap_err();
    assert!(matches!(err, ConfigError::Invalid { key, .. } if key == "defaults.report_delta"));
}

#[test]
fn validate_catches_rule_breaks_made_in_code() {
    let mut c = parse(&example_spine_text());
    c.pools[1].nodes[0].id = 0;
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "pools[1].nodes[0].id: duplicate node ID 0 (also pools[0].nodes[0].id)"
    );
}

// ---------------------------------------------------------------------------------------------
// Error reporting

#[test]
fn invalid_error_displays_as_key_colon_message() {
    let err = Config::from_toml_str(&leaf("[sizes]\npools = 0\n")).unwrap_err();
    assert_eq!(err.to_string(), "sizes.pools: must be at least 1");
}

#[test]
fn the_first_error_in_document_order_is_reported() {
    // Broken: sizes.conn_table, defaults.report_delta, pools[0] (unknown spine), pools[1]
    // (report_delta) and the capacity sum.
    let text = leaf(&format!(
        "[sizes]\nnodes = 2\nconn_table = 3\n[defaults]\nreport_delta = nan\n{}{}",
        "[[pools]]\nid = 0\nspine = 9\nspine_node = 0\ncapacity = 100\n",
        leaf_pool(1, 1, "report_delta = -1.0", &[0]),
    ));
    assert_invalid(&text, "sizes.conn_table", "power of two");
    let text = text.replace("conn_table = 3", "conn_table = 4");
    assert_invalid(&text, "defaults.report_delta", "finite");
    let text = text.replace("report_delta = nan", "report_delta = 1.0");
    assert_invalid(&text, "pools[0].spine", "unknown spine 9");
    let text = text.replace("spine = 9", "spine = 1");
    assert_invalid(&text, "pools[1].report_delta", "positive");
    let text = text.replace("report_delta = -1.0", "report_delta = 1.0");
    assert_invalid(
        &text,
        "pools",
        "pools reserve 101 node slots but sizes.nodes is 2",
    );
}

#[test]
fn a_pool_id_error_comes_before_a_later_pools_report_delta_error() {
    let text = leaf(&format!(
        "{}{}{}",
        leaf_pool(0, 0, "", &[0]),
        leaf_pool(0, 1, "", &[1]),
        leaf_pool(2, 2, "report_delta = nan", &[2]),
    ));
    assert_invalid(&text, "pools[1].id", "duplicate pool ID 0");
}

#[test]
fn unknown_field_is_a_parse_error_naming_it() {
    assert_parse_error(&leaf("[sizes]\npool = 4\n"), "unknown field `pool`");
    assert_parse_error(&leaf_with("udp_prot = 1", ""), "unknown field `udp_prot`");
    assert_parse_error(&leaf("[extras]\nx = 1\n"), "unknown field `extras`");
    let mut pool = leaf_pool(0, 0, "", &[0]);
    pool += "  weight = 2\n";
    assert_parse_error(&leaf(&pool), "unknown field `weight`");
    assert_parse_error(
        &leaf(&leaf_pool(0, 0, "idle_link = 2", &[0])),
        "unknown field `idle_link`",
    );
    assert_parse_error(
        &leaf("[defaults]\nreport_delta_raw = 5\n"),
        "report_delta_raw",
    );
}

#[test]
fn parse_errors_carry_line_and_column() {
    let err = Config::from_toml_str(&leaf("[sizes]\npool = 4\n")).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("line"), "{msg}");
    assert!(msg.contains("column"), "{msg}");
}

#[test]
fn missing_required_key_is_a_parse_error_naming_it() {
    assert_parse_error("[switch]\nrole = \"leaf\"\nid = 1\n", "missing field `mac`");
    assert_parse_error("", "missing field `switch`");
}

#[test]
fn out_of_range_or_mistyped_values_are_parse_errors() {
    assert_parse_error(&leaf("[sizes]\npools = 65536\n"), "u16");
    assert_parse_error(&leaf("[sizes]\npools = -1\n"), "u16");
    assert_parse_error(
        &leaf("").replace("control_port = 0", "control_port = 256"),
        "u8",
    );
    assert_parse_error(&leaf("[sizes]\npools = \"64\"\n"), "invalid type: string");
    assert_parse_error(
        &leaf("").replace("role = \"leaf\"", "role = \"core\""),
        "unknown variant `core`",
    );
    assert_parse_error(&leaf("").replace("10.0.0.3", "10.0.0.300"), "");
    assert_parse_error(&leaf("").replace("02:00:00:00:00:03", "02:00:00:00:03"), "");
}

// ---------------------------------------------------------------------------------------------
// Robustness

proptest! {
    #[test]
    fn from_toml_str_never_panics_on_arbitrary_text(s in "\\PC*") {
        let _ = Config::from_toml_str(&s);
    }

    #[test]
    fn from_toml_str_never_panics_on_toml_like_text(
        s in "(\\[\\[?[a-z_.]{1,12}\\]\\]?\n|[a-z_]{1,16} = (-?[0-9]{1,6}|\"[0-9a-f:.]{0,18}\"|nan|1\\.5e9)\n){0,30}"
    ) {
        let _ = Config::from_toml_str(&s);
    }

    #[test]
    fn deleting_one_line_of_an_example_never_panics_and_keeps_round_trip(
        spine in any::<bool>(),
        line in any::<prop::sample::Index>(),
    ) {
        let text = if spine { example_spine_text() } else { example_leaf_text() };
        let mut edited: Vec<&str> = text.lines().collect();
        edited.remove(line.index(edited.len()));
        if let Ok(c) = Config::from_toml_str(&edited.join("\n")) {
            prop_assert_eq!(c.validate(), Ok(()));
            prop_assert_eq!(Config::from_toml_str(&c.to_toml_string()), Ok(c));
        }
    }

    #[test]
    fn valid_report_delta_round_trips_exactly(raw in 1u32..=u32::MAX) {
        let x = f64::from(raw) / 65_536.0;
        let c = Config::from_toml_str(&leaf(&format!("[defaults]\nreport_delta = {x:?}\n")));
        let c = c.unwrap();
        prop_assert_eq!(c.defaults.report_delta_raw, raw);
        prop_assert_eq!(Config::from_toml_str(&c.to_toml_string()), Ok(c));
    }
}

// ---------------------------------------------------------------------------------------------
// Port names (a board's)

fn au250() -> horus_model::config::PortNames {
    horus_model::config::PortNames::new("au250", &[("cmac0", 0), ("cmac1", 1), ("host0", 2)])
}

#[test]
fn ports_may_be_named_for_a_board_at_every_port_key() {
    let text = leaf(&leaf_pool(7, 12, "", &[0, 1]))
        .replace("pass_through_port = 1", "pass_through_port = \"cmac1\"")
        .replace("control_port = 0", "control_port = \"host0\"")
        .replace("port = 2\n", "port = \"cmac0\"\n")
        .replacen("port = 8\n", "port = \"cmac1\"\n", 1)
        .replacen("port = 8\n", "port = 0\n", 1);
    let c = Config::from_toml_str_for(&text, &au250()).unwrap();
    assert_eq!(c.switch.pass_through_port, 1);
    assert_eq!(c.switch.control_port, 2);
    assert_eq!(c.spines[0].port, 0);
    assert_eq!(c.pools[0].nodes[0].port, 1);
    assert_eq!(
        c.pools[0].nodes[1].port, 0,
        "a number the board has is kept"
    );
}

#[test]
fn a_port_the_board_lacks_is_refused_naming_the_key() {
    let base = leaf(&leaf_pool(7, 12, "", &[0]));
    let cases = [
        (
            base.replace("port = 8\n", "port = \"cmac2\"\n"),
            "pools[0].nodes[0].port: au250 has no port named \"cmac2\"; its ports: cmac0 (0), \
             cmac1 (1), host0 (2)",
        ),
        (
            base.replace("port = 8\n", "port = 1\n")
                .replace("port = 2\n", "port = 5\n"),
            "spines[0].port: au250 has no port 5; its ports: cmac0 (0), cmac1 (1), host0 (2)",
        ),
        (
            base.replace("port = 8\n", "port = 1\n"),
            "switch.pass_through_port: au250 has no port 1; its ports: cmac0 (0), host0 (2)",
        ),
    ];
    let one_mac = horus_model::config::PortNames::new("au50", &[("cmac0", 0), ("host0", 2)]);
    for (i, (text, want)) in cases.iter().enumerate() {
        let (ports, want) = if i == 2 {
            (&one_mac, want.replace("au250", "au50"))
        } else {
            (&au250(), want.to_string())
        };
        let e = Config::from_toml_str_for(text, ports).unwrap_err();
        assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
        assert_eq!(e.to_string(), want);
    }
}

#[test]
fn a_port_name_without_a_board_says_it_needs_one() {
    let text = leaf(&leaf_pool(7, 12, "", &[0])).replace("port = 8\n", "port = \"cmac0\"\n");
    let e = Config::from_toml_str(&text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "pools[0].nodes[0].port: a port named \"cmac0\" needs the board that names it (horusctl \
         check --board B; rtl-gen --board B --config FILE)"
    );
}

#[test]
fn a_security_network_with_host_bits_is_a_parse_error_that_says_so() {
    let ok = Config::from_toml_str(&leaf("[security]\nallow = [\"10.0.3.0/24\"]\n")).unwrap();
    assert_eq!(ok.security.allow[0].to_string(), "10.0.3.0/24");
    let err = Config::from_toml_str(&leaf("[security]\nallow = [\"10.0.3.7/24\"]\n")).unwrap_err();
    assert!(err.to_string().contains("host bits set"), "{err}");
    let err = Config::from_toml_str(&leaf("[security]\nallo = []\n")).unwrap_err();
    assert!(err.to_string().contains("allo"), "{err}");
}
