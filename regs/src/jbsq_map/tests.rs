//! The map's tests: staged passes decode to what made them, the fields keep the paper map's
//! frame and fit, the counters are the model's, operations are staged from the mirror.

use super::*;

/// Every pass the host stages reads back as the operation and values it was made from
/// (the example configuration's pools, each field off its default in one of them, and
/// every worker's addition, places, read and removal).
#[test]
fn staged_passes_decode_to_what_made_them() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/example-leaf-jbsq.toml"
    ))
    .unwrap();
    let cfg = Config::from_toml_str(&text).unwrap();
    let sizes = crate::presets::jbsq_preset_for(&cfg.sizes).unwrap().sizes();
    let (laid, _) = JbsqLeaf::from_config_at(&cfg, sizes, 0).unwrap();
    let mut m = JbsqLeaf::new(sizes, 0);
    let odd = JbsqPool {
        base: 100,
        capacity: 7,
        k: 5,
        ring_base: 1234,
        ring_slots: 9,
        queue_base: 77,
        queue_slots: 300,
        fallback: Fallback::Drop,
        advertise: Advertise::Queue { room: 6 },
        hold_us: 250,
        params: Params {
            link_at: 3,
            unlink_at: 1,
            report_delta: Load(0x1_8000),
            repair_gap_us: 40,
        },
        spine: Some(SpineRef { id: 9, node: 11 }),
    };
    // (On a copy: its buffer region overlaps the laid-out pools' below.)
    let p = configure_pool(&mut m.clone(), 7, odd).unwrap();
    assert_eq!(
        staged_pass(&p).unwrap(),
        StagedPass::Configure { pool: 7, cfg: odd }
    );
    for pool in &cfg.pools {
        let pc = laid.tables().pool_cfg[usize::from(pool.id)].unwrap().cfg;
        let p = configure_pool(&mut m, pool.id, pc).unwrap();
        assert_eq!(
            staged_pass(&p).unwrap(),
            StagedPass::Configure {
                pool: pool.id,
                cfg: pc
            }
        );
        for n in &pool.nodes {
            let a = NodeAddr::of(n);
            let passes = add_node(&mut m, pool.id, n.id, n.k, 0, a).unwrap();
            let StagedPass::AddNode {
                pool: p,
                node,
                k,
                tasks,
                addr,
                ..
            } = staged_pass(&passes[0]).unwrap()
            else {
                panic!("an addition");
            };
            assert_eq!(
                (p, node, k, tasks, addr),
                (pool.id, n.id, n.k.unwrap_or(0), 0, a)
            );
            let kk = n.k.unwrap_or(pc.k);
            assert_eq!(passes.len(), 1 + usize::from(kk));
            for (i, r) in passes[1..].iter().enumerate() {
                assert_eq!(
                    staged_pass(r).unwrap(),
                    StagedPass::AddPlace {
                        pool: pool.id,
                        node: n.id,
                        generation: 0,
                        level: level_of(i as u16, kk) as u8
                    }
                );
            }
        }
    }
    let n = &cfg.pools[0].nodes[0];
    let pool = cfg.pools[0].id;
    let passes = set_bound(&mut m, pool, n.id, 3).unwrap();
    assert_eq!(
        staged_pass(&passes[0]).unwrap(),
        StagedPass::SetBound {
            pool,
            node: n.id,
            k: 3
        }
    );
    assert_eq!(passes.len(), 4);
    assert_eq!(
        staged_pass(&passes[3]).unwrap(),
        StagedPass::AddPlace {
            pool,
            node: n.id,
            generation: 1,
            level: level_of(2, 3) as u8
        }
    );
    assert_eq!(m.tables().node_cfg[usize::from(n.id)].k, 3);
    let settings = PoolSettings {
        k: 9,
        hold_us: 321,
        params: Params {
            link_at: 4,
            unlink_at: 2,
            report_delta: Load(0x3_4000),
            repair_gap_us: 17,
        },
        holds: false,
    };
    let p = set_pool_params(&mut m, pool, settings).unwrap();
    assert_eq!(
        staged_pass(&p).unwrap(),
        StagedPass::SetPoolParams { pool, settings }
    );
    assert!(!m.tables().pool_cfg[usize::from(pool)].unwrap().holds);
    // Its buffer region moved (decision 37) inside its own, one slot on and three long; one
    // overlapping another pool's is refused, the mirror unchanged.
    let own = m.tables().pool_cfg[usize::from(pool)]
        .unwrap()
        .cfg
        .queue_base;
    let p = move_buffer(&mut m, pool, own + 1, 3).unwrap();
    assert_eq!(
        staged_pass(&p).unwrap(),
        StagedPass::MoveBuffer {
            pool,
            queue_base: own + 1,
            queue_slots: 3
        }
    );
    let pc = m.tables().pool_cfg[usize::from(pool)].unwrap();
    assert_eq!(
        (pc.cfg.queue_base, pc.cfg.queue_slots, pc.holds),
        (own + 1, 3, true)
    );
    let other = m.tables().pool_cfg.iter().enumerate().find_map(|(i, o)| {
        o.filter(|_| i != usize::from(pool))
            .map(|o| o.cfg.queue_base)
    });
    if let Some(b) = other {
        assert!(move_buffer(&mut m, pool, b, 1).is_err());
        assert_eq!(m.tables().pool_cfg[usize::from(pool)].unwrap(), pc);
    }
    assert!(set_bound(&mut m, pool, 63, 1).is_err());
    assert!(set_pool_params(&mut m, pool, PoolSettings { k: 0, ..settings }).is_err());
    let [read, rm] = remove_node(&mut m, cfg.pools[0].id, n.id).unwrap();
    let pool = cfg.pools[0].id;
    assert_eq!(
        staged_pass(&read).unwrap(),
        StagedPass::ReadNode { pool, node: n.id }
    );
    let last = *cfg.pools[0].nodes.last().map(|l| &l.id).unwrap();
    assert!(matches!(
        staged_pass(&rm).unwrap(),
        StagedPass::RemoveNode { pool: p, node, slot: 0, last: l, .. }
            if p == pool && node == n.id && l == last
    ));
    // No operation, or two: refused.
    assert!(staged_pass(&RegFile::default()).is_err());
    let mut two = read.clone();
    two.set(&fields::CTL_ADD_PLACE, 1);
    assert!(staged_pass(&two).unwrap_err().contains("CTL_READ_NODE"));
}
use horus_model::sched::jbsq::{JbsqCounters, JbsqSizes};

#[test]
fn fields_do_not_overlap_keep_the_paper_frame_and_fit() {
    let mut used = vec![false; 32 * crate::regmap::WORDS];
    for x in FIELDS.iter() {
        assert!(x.width > 0 && (x.width <= 32 || x.lsb == 0), "{}", x.name);
        if x.access == Rw {
            assert!(x.word < crate::regmap::FILE_WORDS, "{}", x.name);
        }
        for (b, u) in used.iter_mut().enumerate().skip(x.bit()).take(x.width) {
            assert!(!*u, "{} overlaps another field at bit {b}", x.name);
            *u = true;
        }
    }
    // Words 1 to 23 and the tail are the paper map's.
    for p in crate::regmap::FIELDS {
        if p.name != "ID" && (p.word < *control_words().start() || p.word >= TAIL_BASE) {
            assert_eq!(field(p.name), p, "{}", p.name);
        }
    }
    // The first five operations take the paper map's five flag bits, the two bounds the next
    // two (the port checks one of the seven is set).
    assert_eq!(
        fields::CTL_CONFIGURE_POOL.bit(),
        crate::regmap::fields::CTL_CONFIGURE_POOL.bit()
    );
    assert_eq!(
        fields::CTL_ADD_PLACE.bit(),
        crate::regmap::fields::CTL_READ_ENTRY.bit()
    );
    assert_eq!(fields::CTL_SET_BOUND.bit(), fields::CTL_ADD_PLACE.bit() + 1);
    assert_eq!(fields::CTL_SET_POOL.bit(), fields::CTL_ADD_PLACE.bit() + 2);
    assert_eq!(rw_words(), 4..=40);
    assert_eq!(control_words(), 24..=40);
}

#[test]
fn the_switch_words_are_a_jbsq_leafs_only() {
    let read = |name: &str| {
        let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
        Config::from_file(std::path::Path::new(&path)).unwrap()
    };
    let cfg = read("example-leaf-jbsq.toml");
    let r = switch_config(&cfg).unwrap();
    assert_eq!(r.switch_registers().id, cfg.switch.id);
    assert_eq!(r.switch_registers().spines.len(), cfg.spines.len());
    assert!(
        switch_config(&read("example-leaf.toml"))
            .unwrap_err()
            .contains("jbsq")
    );
    assert!(crate::regmap::RegFile::switch_config(&cfg).is_err());
}

#[test]
fn the_counters_are_the_models_in_its_order() {
    let names = JbsqCounters::default().named();
    for (i, (name, _)) in names.iter().enumerate() {
        assert_eq!(counter(name).word, COUNTER_BASE + i, "{name}");
    }
    assert_eq!(names.len(), COUNTERS);
}

#[test]
fn operations_are_staged_from_the_mirror_and_refused_values_change_nothing() {
    let mut leaf = JbsqLeaf::new(JbsqSizes::SMALL, 1);
    let mut cfg = JbsqPool {
        base: 0,
        capacity: 8,
        k: 2,
        ring_base: 0,
        ring_slots: 16,
        queue_base: 0,
        queue_slots: 16,
        fallback: Fallback::Drop,
        advertise: Advertise::Queue { room: 3 },
        hold_us: 5,
        params: horus_model::sched::state::Params::jbsq_default(),
        spine: None,
    };
    let r = configure_pool(&mut leaf, 1, cfg).unwrap();
    assert_eq!(r.get(&fields::CTL_ROOM), 3);
    assert_eq!(r.get(&fields::CTL_ADV_QUEUE), 1);
    assert_eq!(r.get(&fields::CTL_DROP_FULL), 1);
    assert_eq!(r.get(&fields::CTL_K), 2);
    let addr = NodeAddr {
        endpoint: horus_model::wire::Endpoint {
            mac: horus_model::wire::MacAddr([2, 0, 0, 0, 0, 7]),
            ip: std::net::Ipv4Addr::new(10, 0, 0, 7),
            udp_port: 5007,
        },
        port: 3,
        dst_id: 0x107,
    };
    let add = add_node(&mut leaf, 1, 7, None, 0, addr).unwrap();
    assert_eq!(add.len(), 3, "the node and its two places");
    assert_eq!(add[0].get(&fields::CTL_NODE_DST_ID), 0x107);
    assert_eq!(add[0].get(&fields::CTL_UNIT), RackAverage::unit_for(1));
    assert_eq!(
        add[1..]
            .iter()
            .map(|r| r.get(&fields::CTL_LEVEL))
            .collect::<Vec<_>>(),
        [0, 4]
    );
    add_node(&mut leaf, 1, 9, Some(1), 0, addr).unwrap();
    let [read, rm] = remove_node(&mut leaf, 1, 7).unwrap();
    assert_eq!(read.get(&fields::CTL_READ_NODE), 1);
    assert_eq!(
        (rm.get(&fields::CTL_SLOT), rm.get(&fields::CTL_LAST)),
        (0, 9)
    );
    assert_eq!(rm.get(&fields::CTL_UNIT), RackAverage::unit_for(1));
    // The node comes back a generation on: its places carry it.
    let again = add_node(&mut leaf, 1, 7, None, 1, addr).unwrap();
    assert_eq!(again.len(), 2);
    assert_eq!(again[1].get(&fields::CTL_GENERATION), 1);
    assert_eq!(again[1].get(&fields::CTL_LEVEL), 4);
    // Refusals: the model's, and a value too wide for its register.
    let before = format!("{:?}", leaf.tables());
    assert!(
        remove_node(&mut leaf, 1, 8)
            .unwrap_err()
            .contains("not a member")
    );
    assert!(
        add_node(&mut leaf, 1, 7, None, 0, addr)
            .unwrap_err()
            .contains("BadNode")
    );
    assert!(
        add_node(&mut leaf, 2, 3, None, 0, addr)
            .unwrap_err()
            .contains("not configured")
    );
    cfg.queue_base = 1 << 16;
    assert!(
        configure_pool(&mut leaf, 2, cfg)
            .unwrap_err()
            .contains("CTL_QUEUE_BASE")
    );
    cfg.queue_base = 0;
    cfg.k = 0;
    assert!(
        configure_pool(&mut leaf, 2, cfg)
            .unwrap_err()
            .contains("BadConfig")
    );
    assert_eq!(
        format!("{:?}", leaf.tables()),
        before,
        "refusals change nothing"
    );
}
