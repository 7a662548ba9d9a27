//! Sharded runs (see `horus_sim::shard`): deterministic whatever the threads, one shard exactly the
//! unsharded engine, merged counts that add up, failures that reach every shard, and results
//! statistically equivalent to the unsharded run's.

use horus_sim::config::{FailureSpec, FailureTarget, PoolSource, SimConfig};
use horus_sim::engine::{self, Engine};
use horus_sim::metrics::Summary;
use horus_sim::placement::RandomPools;
use horus_sim::policy::{self, PolicySpec};
use horus_sim::shard;
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;

fn config(policy: &str, pools: u32, load: f64, shards: u32) -> SimConfig {
    SimConfig {
        seed: 11,
        topology: Topology {
            pods: 8,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: pools,
            ..RandomPools::default()
        }),
        policy: PolicySpec::named(policy).unwrap(),
        load: LoadSchedule::constant(load),
        sim_ns: 3_000_000,
        warmup_ns: 300_000,
        loss: 1e-3,
        shards,
        ..SimConfig::default()
    }
}

fn run(cfg: &SimConfig) -> Summary {
    engine::run(cfg, &mut |_| {}).unwrap()
}

fn json(s: &Summary) -> String {
    serde_json::to_string_pretty(s).unwrap()
}

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Failures that hit several pools: a worker, a leaf and a spine switch.
fn with_failures(mut cfg: SimConfig) -> SimConfig {
    let probe = Engine::new(&cfg).unwrap();
    let c = probe.cluster();
    let (worker, rack, spine) = (
        c.pools[1].worker_base + 5,
        c.pools[0].racks[0].rack,
        c.pools[2].groups[0].spine_switch,
    );
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
            at_ns: 1_500_000,
            target: FailureTarget::Spine(spine),
        },
    ];
    cfg
}

#[test]
fn a_sharded_run_depends_on_the_shard_count_not_on_the_threads() {
    let cfg = with_failures(config("horus", 12, 0.85, 4));
    let reference = json(&run(&cfg)); // from outside rayon's pool, on its global pool
    assert_eq!(json(&in_pool(1, || run(&cfg))), reference, "1 thread");
    assert_eq!(json(&in_pool(2, || run(&cfg))), reference, "2 threads");
    assert_eq!(json(&in_pool(3, || run(&cfg))), reference, "3 threads");
    let three = json(&run(&SimConfig { shards: 3, ..cfg }));
    assert_ne!(three, reference, "another shard count is another sample");
}

#[test]
fn one_shard_through_the_sharded_path_is_the_unsharded_engine() {
    for policy in policy::names() {
        for prefill in [false, true] {
            let cfg = SimConfig {
                prefill,
                ..with_failures(config(policy, 6, 0.8, 1))
            };
            let direct = Engine::new(&cfg).unwrap().run(&mut |_| {});
            let sharded = shard::run(&cfg, &mut |_| {}).unwrap();
            assert!(sharded.shards.is_empty());
            assert_eq!(json(&sharded), json(&direct), "{policy}, prefill {prefill}");
        }
    }
}

#[test]
fn merged_counts_add_up_exactly() {
    for policy in ["horus", "rs-h", "jsq", "jiq"] {
        let cfg = with_failures(config(policy, 12, 0.9, 3));
        let s = run(&cfg);
        assert_eq!(s.shards.len(), 3, "{policy}");
        assert_eq!(
            s.completed + s.lost_in_network + s.lost_to_failures + s.unfinished,
            s.tasks,
            "{policy}"
        );
        assert!(s.lost_in_network > 0 && s.lost_to_failures > 0, "{policy}");
        assert_eq!(
            s.failures.iter().map(|f| f.tasks_lost).sum::<u64>(),
            s.lost_to_failures,
            "{policy}"
        );
        // Pools: each once, in global order, and their counts make the totals.
        assert!(s.pools.iter().enumerate().all(|(i, p)| p.pool == i as u32));
        assert_eq!(s.pools.iter().map(|p| p.arrived).sum::<u64>(), s.tasks);
        assert_eq!(
            s.pools.iter().map(|p| p.completed).sum::<u64>(),
            s.completed
        );
        assert_eq!(
            s.pools.iter().map(|p| p.lost).sum::<u64>(),
            s.lost_in_network + s.lost_to_failures
        );
        // The overall histograms hold every pool's measured tasks.
        assert_eq!(
            s.pools.iter().map(|p| p.response.count).sum::<u64>(),
            s.response.count
        );
        assert_eq!(s.response.count, s.wait.count);
        // Shards: their pools, workers, tasks and events make the run's.
        assert_eq!(s.shards.iter().map(|x| x.pools).sum::<u32>(), 12);
        assert_eq!(
            s.shards.iter().map(|x| x.workers).sum::<u32>(),
            s.pools.iter().map(|p| p.workers).sum::<u32>()
        );
        assert_eq!(s.shards.iter().map(|x| x.tasks).sum::<u64>(), s.tasks);
        assert_eq!(s.shards.iter().map(|x| x.events).sum::<u64>(), s.events);
        assert_eq!(
            s.shards.iter().map(|x| x.last_event_ms).fold(0.0, f64::max),
            s.end_ms
        );
        // Little's law, exactly, per shard, per pool and overall.
        assert!(s.little.relative_error < 1e-9, "{policy}: {:?}", s.little);
        assert!(s.shards.iter().all(|x| x.little.relative_error < 1e-9));
        assert!(s.pools.iter().all(|p| p.little.relative_error < 1e-9));
        // Messages per task are the merged counts over the merged tasks.
        for m in &s.messages {
            assert_eq!(m.per_task, m.count as f64 / s.tasks as f64);
        }
    }
}

#[test]
fn a_failure_hits_every_shard_with_pools_on_the_failed_switch() {
    let mut cfg = config("horus", 12, 0.8, 4);
    cfg.loss = 0.0; // every loss is the failure's
    let placements = engine::placements(&cfg).unwrap();
    let topo = cfg.topology;
    let rack_of = |slot: u32| topo.rack_of_server(slot / topo.slots_per_server);
    // The rack holding workers of the most pools.
    let pools_on = |rack: u32| -> Vec<usize> {
        (0..placements.len())
            .filter(|&p| placements[p].slots.iter().any(|&s| rack_of(s) == rack))
            .collect()
    };
    let rack = (0..topo.racks())
        .max_by_key(|&r| pools_on(r).len())
        .unwrap();
    let on_rack = pools_on(rack);
    let shards = shard::partition(&placements, 4);
    let shard_of = |p: usize| shards.iter().position(|s| s.pools.contains(&(p as u32)));
    let mut hit: Vec<usize> = on_rack.iter().filter_map(|&p| shard_of(p)).collect();
    hit.sort_unstable();
    hit.dedup();
    assert!(hit.len() >= 2, "the test needs a rack shared by shards");
    cfg.failures = vec![FailureSpec {
        at_ns: 1_000_000,
        target: FailureTarget::Leaf(rack),
    }];
    let s = run(&cfg);
    // Every pool on the rack lost the tasks queued there, in whichever shard; no other pool did.
    for p in &s.pools {
        let on = on_rack.contains(&(p.pool as usize));
        assert_eq!(p.lost > 0, on, "pool {} (on the rack: {on})", p.pool);
    }
    assert_eq!(s.failures[0].tasks_lost, s.lost_to_failures);
    assert!(
        s.failures[0].converge_us <= (cfg.detect_ns + 2 * cfg.hop_delay_ns) as f64 / 1e3 + 20.0,
        "{:?}",
        s.failures[0]
    );
}

#[test]
fn sharded_and_unsharded_runs_are_statistically_close() {
    // The pools keep their workload streams, so both see the very same tasks; the schedulers'
    // and the network's dice differ. Fixed seed, so no flake; the bounds are several times the
    // gaps seen between shard counts and seeds.
    let one = run(&config("horus", 20, 0.9, 1));
    for shards in [2, 4] {
        let s = run(&config("horus", 20, 0.9, shards));
        assert_eq!(s.tasks, one.tasks, "{shards} shards");
        assert!(
            one.pools
                .iter()
                .zip(&s.pools)
                .all(|(a, b)| a.arrived == b.arrived)
        );
        let close = |what: &str, a: f64, b: f64, tol: f64| {
            eprintln!("{shards} shards: {what} {b} vs {a} unsharded");
            assert!(
                (a - b).abs() <= tol * a,
                "{shards} shards: {what} {b} vs {a} unsharded"
            );
        };
        close("mean", one.response.mean_us, s.response.mean_us, 0.03);
        close("p50", one.response.p50_us, s.response.p50_us, 0.05);
        close("p99", one.response.p99_us, s.response.p99_us, 0.10);
        close(
            "lost in network",
            one.lost_in_network as f64,
            s.lost_in_network as f64,
            0.15,
        );
        for (a, b) in one.messages.iter().zip(&s.messages) {
            close(&a.kind, a.per_task, b.per_task, 0.05);
        }
    }
}
