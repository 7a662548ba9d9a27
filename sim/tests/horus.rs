//! Horus in the simulator: it is the model's algorithm, and it shows the paper's qualitative results.
//!
//! - The adapter feeds the `horus-model` schedulers and takes their decisions; replaying the passes
//!   it fed one switch into a fresh scheduler built from the same seed gives the same result for
//!   every pass, and the tasks of the run went to exactly the workers those passes chose.
//! - On reduced datacenters, Horus' p99 is below RS-H's and RS-LB's above 50 % load (Horus §5.2),
//!   and in a single rack it is close to ideal join-the-shortest-queue.
//! - `horus-jbsq` (Horus between racks, JBSQ(k) at the leaf) gives no worker more than k tasks,
//!   holds the rest at the leaf, and speaks Horus's protocol to the model's spines.
//!
//! Runtime (debug build, 2 cores): about half a minute.

use horus_model::sched::{Decision as ModelDecision, Pass, Target};
use horus_model::wire::PacketType;
use horus_sim::cluster::Cluster;
use horus_sim::config::{FailureSpec, FailureTarget, PoolSource, SimConfig};
use horus_sim::engine::{self, Engine};
use horus_sim::metrics::Summary;
use horus_sim::placement::RandomPools;
use horus_sim::policy::PolicySpec;
use horus_sim::policy::horus::{Horus, HorusParams, Recording, Switch};
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;
use std::sync::Arc;

mod common;
use common::{Spy, counter, observe};

fn config(policy: &str, pods: u32, pools: u32, load: f64, sim_ns: u64, seed: u64) -> SimConfig {
    SimConfig {
        seed,
        topology: Topology {
            pods,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: pools,
            ..RandomPools::default()
        }),
        policy: PolicySpec::named(policy).unwrap(),
        workload: "exp".into(),
        load: LoadSchedule::constant(load),
        sim_ns,
        warmup_ns: sim_ns / 5,
        sample_ns: 0,
        pool_histograms: false,
        ..SimConfig::default()
    }
}

fn run(cfg: &SimConfig) -> Summary {
    engine::run(cfg, &mut |_| {}).unwrap()
}

/// The leaf's node IDs as the adapter documents them: pools with workers in the rack in pool order,
/// each pool's workers of the rack in order. Returns (pool, pool-local worker) per node ID.
fn leaf_nodes(cluster: &Cluster, rack: u32) -> Vec<(u32, u32)> {
    let mut nodes = Vec::new();
    for (p, pool) in cluster.pools.iter().enumerate() {
        for r in pool.racks.iter().filter(|r| r.rack == rack) {
            nodes.extend((r.first_worker..r.first_worker + r.workers).map(|w| (p as u32, w)));
        }
    }
    nodes
}

fn replay(rec: &Recording) {
    assert!(rec.passes_only);
    let mut fresh = rec.fresh_scheduler();
    for (i, (pass, expected)) in rec.passes.iter().enumerate() {
        let got = match *pass {
            Pass::Packet(p) => fresh.packet(p),
            Pass::Resubmit(r) => fresh.resubmit(r),
            Pass::Control(op) => fresh
                .control(op)
                .expect("recorded control passes succeeded"),
        };
        assert_eq!(&got, expected, "{:?}: pass {i} ({pass:?})", rec.switch);
    }
}

fn count(rec: &Recording, f: impl Fn(&Pass, &horus_model::sched::PassResult) -> bool) -> usize {
    rec.passes.iter().filter(|(p, r)| f(p, r)).count()
}

#[test]
fn simulated_horus_makes_the_models_decisions_for_the_same_passes_and_seed() {
    let mut cfg = config("horus", 8, 6, 0.9, 3_000_000, 11);
    cfg.loss = 1e-3; // lost messages exercise the repair
    // A worker of pool 0 fails: its leaf removes it by control passes.
    let probe = Engine::new(&cfg).unwrap();
    let cluster = probe.cluster();
    let worker = cluster.pools[0].worker_base;
    let rack = cluster.workers[worker as usize].rack;
    let leaf = Horus::leaf_index(cluster, rack).unwrap();
    let nodes = leaf_nodes(cluster, rack);
    cfg.failures = vec![FailureSpec {
        at_ns: 1_000_000,
        target: FailureTarget::Worker(worker),
    }];
    drop(probe);

    // The leaf of that rack.
    let mut chosen = Arc::default();
    let mut leaf_rec = None;
    let engine = Engine::with_custom_policy(&cfg, |cluster, q, rng| {
        let (inner, rec) =
            Horus::with_recorder(cluster, q, rng, HorusParams::default(), Switch::Leaf(leaf));
        leaf_rec = Some(rec);
        let spy = Spy::new(Box::new(inner), rack);
        chosen = spy.chosen.clone();
        Box::new(spy)
    })
    .unwrap();
    let s = engine.run(&mut |_| {});
    let rec = leaf_rec.unwrap();
    let rec = rec.lock().unwrap();
    replay(&rec);

    // The run's tasks in that rack went where the model's passes sent them, in order.
    let forwarded: Vec<(u32, u32)> = rec
        .passes
        .iter()
        .filter_map(|(_, r)| match r.forward?.target {
            Target::Node { node, .. } => Some(nodes[node as usize]),
            _ => None,
        })
        .collect();
    assert_eq!(forwarded, *chosen.lock().unwrap());

    // The recording exercised what matters.
    let tasks = count(
        &rec,
        |p, _| matches!(p, Pass::Packet(p) if p.header.pkt_type == PacketType::NewTask),
    );
    let idle_hits = count(&rec, |_, r| {
        matches!(r.decision, Some(ModelDecision::Idle { .. }))
    });
    let second = count(&rec, |_, r| {
        matches!(r.decision, Some(ModelDecision::Resubmitted { .. }))
    });
    let idle_replies = count(
        &rec,
        |p, _| matches!(p, Pass::Packet(p) if p.header.pkt_type == PacketType::TaskDoneIdle),
    );
    let signals = count(&rec, |_, r| r.signal.is_some());
    let removals = count(&rec, |p, _| {
        matches!(
            p,
            Pass::Control(horus_model::sched::ControlOp::RemoveNode { .. })
        )
    });
    eprintln!(
        "leaf {leaf}: {} passes, {tasks} tasks, {idle_hits} idle hits, {second} second passes, {idle_replies} TASK_DONE_IDLE, {signals} signals",
        rec.passes.len()
    );
    assert!(tasks > 1000 && idle_hits > 100 && second > 10 && idle_replies > 100);
    assert!(signals > 10 && removals == 1);
    assert!(s.lost_in_network > 0);

    // And a spine of pool 0.
    let mut spine_rec = None;
    let cfg = SimConfig {
        failures: Vec::new(),
        ..cfg
    };
    let engine = Engine::with_custom_policy(&cfg, |cluster, q, rng| {
        let switch = cluster.pools[0].groups[0].spine_switch;
        // Spines are numbered in switch order over the switches hosting some pool's spine.
        let mut hosting: Vec<u32> = cluster
            .pools
            .iter()
            .flat_map(|p| p.groups.iter().map(|d| d.spine_switch))
            .collect();
        hosting.sort_unstable();
        hosting.dedup();
        let idx = hosting.iter().position(|&s| s == switch).unwrap() as u32;
        let (inner, rec) =
            Horus::with_recorder(cluster, q, rng, HorusParams::default(), Switch::Spine(idx));
        spine_rec = Some(rec);
        Box::new(inner)
    })
    .unwrap();
    engine.run(&mut |_| {});
    let rec = spine_rec.unwrap();
    let rec = rec.lock().unwrap();
    replay(&rec);
    let tasks = count(
        &rec,
        |p, _| matches!(p, Pass::Packet(p) if p.header.pkt_type == PacketType::NewTask),
    );
    let updates = count(
        &rec,
        |p, _| matches!(p, Pass::Packet(p) if p.header.pkt_type == PacketType::QueueSignal),
    );
    let removes = count(
        &rec,
        |p, _| matches!(p, Pass::Packet(p) if p.header.pkt_type == PacketType::IdleRemove),
    );
    eprintln!(
        "spine {:?}: {} passes, {tasks} tasks, {updates} load updates, {removes} idle removes",
        rec.switch,
        rec.passes.len()
    );
    assert!(tasks > 1000 && updates > 10 && removes > 10);
}

#[test]
fn horus_counters_match_the_messages_the_engine_carried() {
    let s = run(&config("horus", 8, 6, 0.8, 2_000_000, 3));
    let c = |name: &str| {
        s.policy_counters
            .iter()
            .find(|(k, _)| k == name)
            .unwrap_or_else(|| panic!("no counter {name}"))
            .1
    };
    let m = |kind: &str| s.messages.iter().find(|m| m.kind == kind).unwrap().count;
    assert_eq!(c("leaf.sent_idle_add"), m("idle-add"));
    assert_eq!(c("leaf.sent_idle_remove"), m("idle-remove"));
    assert_eq!(c("leaf.sent_load_update"), m("load-update"));
    // Every task passed one spine and one leaf (no loss here); second passes are resubmissions.
    assert_eq!(c("spine.tasks"), s.tasks);
    assert!(c("leaf.tasks") + s.lost_in_network >= s.tasks);
    let resubmitted = c("spine.pow2_resubmits") + c("leaf.pow2_resubmits");
    assert!(resubmitted > 0);
    assert!(s.resubmitted_fraction * s.tasks as f64 <= resubmitted as f64 + 0.5);
    assert!(s.little.relative_error < 1e-9);
}

/// Median of the p99 over seeds.
fn p99(policy: &str, pods: u32, pools: u32, load: f64, sim_ns: u64, seeds: &[u64]) -> f64 {
    let mut v: Vec<f64> = seeds
        .iter()
        .map(|&seed| {
            run(&config(policy, pods, pools, load, sim_ns, seed))
                .response
                .p99_us
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn horus_has_a_lower_tail_than_rs_h_and_rs_lb_above_half_load() {
    for load in [0.7, 0.9] {
        let seeds = [1, 2, 3];
        let horus = p99("horus", 8, 4, load, 2_000_000, &seeds);
        let rs_h = p99("rs-h", 8, 4, load, 2_000_000, &seeds);
        let rs_lb = p99("rs-lb", 8, 4, load, 2_000_000, &seeds);
        eprintln!("load {load}: p99 horus {horus:.0} us, rs-h {rs_h:.0} us, rs-lb {rs_lb:.0} us");
        assert!(
            horus < 0.9 * rs_h && horus < 0.9 * rs_lb,
            "load {load}: horus {horus}, rs-h {rs_h}, rs-lb {rs_lb}"
        );
    }
}

#[test]
fn horus_is_close_to_ideal_jsq_in_a_single_rack() {
    // Eight racks of 32 slots, each slot of a rack taken by one pool: every pool is one rack.
    let topology = Topology {
        pods: 4,
        servers_per_rack: 4,
        slots_per_server: 8,
    };
    let maps: Vec<String> = (0..8)
        .map(|r| {
            let hosts: Vec<String> = (0..32).map(|i| (r * 4 + i / 8).to_string()).collect();
            format!(
                "{{'app_id': {r}, 'worker_count': 32, 'worker_to_host_map': [{}]}}",
                hosts.join(", ")
            )
        })
        .collect();
    let path = std::env::temp_dir().join(format!("horus-single-rack-{}.log", std::process::id()));
    std::fs::write(
        &path,
        format!(
            "{{'tenants': {{'worker_count': 256, 'maps': [{}]}}}}\n",
            maps.join(", ")
        ),
    )
    .unwrap();
    let run_at = |policy: &str, load: f64| {
        run(&SimConfig {
            seed: 5,
            topology,
            pools: PoolSource::Dataset(path.to_string_lossy().into()),
            policy: PolicySpec::named(policy).unwrap(),
            workload: "exp".into(),
            load: LoadSchedule::constant(load),
            sim_ns: 40_000_000,
            warmup_ns: 4_000_000,
            sample_ns: 0,
            ..SimConfig::default()
        })
    };
    for load in [0.5, 0.9] {
        let horus = run_at("horus", load);
        let jsq = run_at("jsq", load);
        assert!(horus.pools.iter().all(|p| p.racks == 1));
        let ratio = horus.response.p99_us / jsq.response.p99_us;
        eprintln!(
            "single rack at load {load}: p99 horus {:.0} us, jsq {:.0} us ({ratio:.2}x), {} tasks",
            horus.response.p99_us, jsq.response.p99_us, horus.tasks
        );
        assert!(ratio < 1.3, "load {load}: horus/jsq p99 {ratio:.2}");
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn horus_recovers_from_worker_leaf_and_spine_failures() {
    let mut cfg = config("horus", 8, 6, 0.6, 3_000_000, 7);
    cfg.loss = 0.0;
    let probe = Engine::new(&cfg).unwrap();
    let cluster = probe.cluster();
    let worker = cluster.pools[1].worker_base + 3;
    let rack = cluster.pools[2].racks[0].rack;
    let spine = cluster.pools[0].groups[0].spine_switch;
    drop(probe);
    cfg.failures = vec![
        FailureSpec {
            at_ns: 800_000,
            target: FailureTarget::Worker(worker),
        },
        FailureSpec {
            at_ns: 1_000_000,
            target: FailureTarget::Leaf(rack),
        },
        FailureSpec {
            at_ns: 1_200_000,
            target: FailureTarget::Spine(spine),
        },
    ];
    let s = run(&cfg);
    let limit = (cfg.detect_ns + 2 * cfg.hop_delay_ns) as f64 / 1e3 + 20.0;
    for f in &s.failures {
        assert!(f.converge_us <= limit, "{f:?}");
    }
    // The failed rack and spine held or received tasks (an idle worker may lose none).
    assert!(s.failures[1].tasks_lost > 0 && s.failures[2].tasks_lost > 0);
    assert_eq!(s.completed + s.lost_to_failures + s.unfinished, s.tasks);
    assert!(s.little.relative_error < 1e-9);
    // The restarted spine relearned its idle racks from the leaves (§A.3 repair).
    let c = |name: &str| s.policy_counters.iter().find(|(k, _)| k == name).unwrap().1;
    assert!(c("leaf.idle_repairs") > 0 && c("spine.idle_adds") > 0);
    // Tail latency after the failures stays that of a healthy system.
    let healthy = run(&SimConfig {
        failures: Vec::new(),
        ..cfg.clone()
    });
    assert!(
        s.response.p99_us < 1.2 * healthy.response.p99_us,
        "p99 {} vs {} without failures",
        s.response.p99_us,
        healthy.response.p99_us
    );
}

#[test]
fn the_repair_gap_ends_the_idle_remove_storm_and_lost_messages_are_still_repaired() {
    let mut gap = config("horus", 8, 6, 0.9, 2_000_000, 5);
    gap.loss = 1e-3;
    let mut paper = gap.clone();
    paper.policy.set_param("repair_gap_us", 0.0).unwrap();
    let per_task =
        |s: &Summary| s.messages.iter().map(|m| m.count).sum::<u64>() as f64 / s.tasks as f64;
    let repairs = |s: &Summary| {
        s.policy_counters
            .iter()
            .find(|(k, _)| k == "leaf.idle_repairs")
            .unwrap()
            .1
    };
    let (p, g) = (run(&paper), run(&gap));
    println!(
        "leaf-to-spine messages per task: {:.3} with a repair on every disagreement ({} repairs), \
         {:.3} with the default gap ({} repairs)",
        per_task(&p),
        repairs(&p),
        per_task(&g),
        repairs(&g)
    );
    // Every task the spine sent before a leaf's idleRemove reached it draws another idleRemove
    // without the gap; with it, only lost messages are repaired (1e-3 of them are lost here).
    assert!(per_task(&p) > 0.6, "{}", per_task(&p));
    assert!(per_task(&g) < 0.5, "{}", per_task(&g));
    assert!(
        per_task(&p) > per_task(&g) + 0.25,
        "the storm's share: {} against {}",
        per_task(&p),
        per_task(&g)
    );
    assert!(repairs(&g) > 0, "lost idle messages are still repaired");
    assert!(repairs(&p) > 20 * repairs(&g));
}

#[test]
fn horus_jbsq_gives_no_worker_more_than_k_and_holds_the_rest_at_the_leaf() {
    for k in [1u32, 2] {
        let mut cfg = config("horus-jbsq", 8, 6, 0.95, 2_000_000, 7);
        cfg.policy.set_param("k", f64::from(k)).unwrap();
        let (s, o) = observe(&cfg);
        let longest = o.longest;
        println!(
            "k = {k}: longest queue left {longest}, {} of {} tasks held, p99.9 queue {}",
            s.leaf_queue.held, s.tasks, s.leaf_queue.p999
        );
        assert!(
            longest < k,
            "k = {k}: a worker had {longest} left after a reply"
        );
        assert!(s.leaf_queue.held > 0 && counter(&s, "leaf.held") == s.leaf_queue.held);
        assert!(s.little.relative_error < 1e-9);
    }
    // Horus's leaves queue at the workers: the bound above is the leaf's doing.
    let (_, o) = observe(&config("horus", 8, 6, 0.95, 2_000_000, 7));
    let longest = o.longest;
    assert!(longest >= 2, "horus: longest queue {longest}");
}

#[test]
fn horus_jbsq_leaves_speak_horus_to_the_models_spines() {
    let mut cfg = config("horus-jbsq", 8, 6, 0.8, 2_000_000, 3);
    cfg.loss = 1e-3; // lost idle messages exercise the repair
    let s = run(&cfg);
    let m = |kind: &str| s.messages.iter().find(|m| m.kind == kind).unwrap().count;
    assert_eq!(counter(&s, "leaf.sent_idle_add"), m("idle-add"));
    assert_eq!(counter(&s, "leaf.sent_idle_remove"), m("idle-remove"));
    assert_eq!(counter(&s, "leaf.sent_load_update"), m("load-update"));
    assert!(m("idle-add") > 0 && m("idle-remove") > 0 && m("load-update") > 0);
    assert!(counter(&s, "leaf.idle_repairs") > 0);
    // Each pool's messages add up to the run's.
    let all: u64 = s.messages.iter().map(|m| m.count).sum();
    let per_pool: f64 = s
        .pools
        .iter()
        .map(|p| p.messages_per_task * p.arrived as f64)
        .sum();
    assert!(
        (per_pool - all as f64).abs() < 0.5,
        "{per_pool} against {all}"
    );
    // The spines took every task, from their idle lists and by load, and their drift checks
    // found stale loads to resubmit.
    assert_eq!(counter(&s, "spine.tasks"), s.tasks);
    assert!(counter(&s, "spine.pow2_resubmits") > 0);
    assert!(s.little.relative_error < 1e-9);
}
