//! Properties every run must have: Little's law, determinism, failure accounting.
//! Small datacenters (4-8 pods, a few pools, a few ms); about 10 s in a debug build.

use horus_sim::config::{FailureSpec, FailureTarget, PoolSource, SimConfig};
use horus_sim::engine::{self, Engine};
use horus_sim::metrics::Summary;
use horus_sim::placement::RandomPools;
use horus_sim::policy::{self, PolicySpec};
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;

fn small(policy: &str, workload: &str, load: &str) -> SimConfig {
    SimConfig {
        seed: 7,
        topology: Topology {
            pods: 8,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: 6,
            ..RandomPools::default()
        }),
        policy: PolicySpec::named(policy).unwrap(),
        workload: workload.into(),
        load: LoadSchedule::parse(load).unwrap(),
        sim_ns: 3_000_000,
        warmup_ns: 300_000,
        loss: 1e-3, // high, so that losses happen in short runs
        ..SimConfig::default()
    }
}

fn run(cfg: &SimConfig) -> Summary {
    engine::run(cfg, &mut |_| {}).unwrap()
}

#[test]
fn littles_law_holds_overall_and_per_pool_for_every_policy() {
    for policy in policy::names() {
        let s = run(&small(policy, "bimodal", "0:0.5,1:0.95"));
        assert!(s.tasks > 10_000, "{policy}: {} tasks", s.tasks);
        assert!(
            s.little.relative_error < 1e-9,
            "{policy}: L {} vs lambda W {}",
            s.little.l,
            s.little.lambda_per_us * s.little.w_us
        );
        for p in &s.pools {
            assert!(
                p.little.relative_error < 1e-9,
                "{policy} pool {}: {:?}",
                p.pool,
                p.little
            );
        }
        // Every task is accounted for: finished, lost or still there at the end.
        assert_eq!(
            s.completed + s.lost_in_network + s.lost_to_failures + s.unfinished,
            s.tasks,
            "{policy}"
        );
        // (Sparrow's packets travel over a reliable transport, TCP, and Malcolm's over eRPC:
        // they lose none.)
        let reliable = policy == horus_sim::policy::sparrow::NAME || policy.starts_with("malcolm");
        assert!(
            (s.lost_in_network > 0) != reliable,
            "{policy}: a 1e-3 loss rate must lose some tasks, of a lossy transport's, and only those"
        );
    }
}

#[test]
fn the_same_seed_gives_identical_results_and_another_seed_does_not() {
    let cfg = small("rs-h", "trimodal", "0.8");
    let a = run(&cfg);
    assert_eq!(a, run(&cfg));
    let b = run(&SimConfig { seed: 8, ..cfg });
    assert_ne!(a.response, b.response);
}

#[test]
fn policies_see_the_same_tasks_for_the_same_seed() {
    let a = run(&small("random", "exp", "0.7"));
    let b = run(&small("jsq", "exp", "0.7"));
    assert_eq!(a.tasks, b.tasks);
    // And load awareness pays: ideal JSQ beats random dispatch on the tail.
    assert!(
        b.response.p99_us < a.response.p99_us / 2.0,
        "jsq {} vs random {}",
        b.response.p99_us,
        a.response.p99_us
    );
}

#[test]
fn a_leaf_failure_loses_tasks_only_until_the_controller_reacts() {
    let mut cfg = small("rs-lb", "exp", "0.6");
    cfg.loss = 0.0;
    cfg.detect_ns = 200_000;
    // Rack 0 of pod 0: with 6 pools spread over 32 racks, some pool has workers there.
    cfg.failures = vec![FailureSpec {
        at_ns: 1_000_000,
        target: FailureTarget::Leaf(0),
    }];
    let s = run(&cfg);
    let f = &s.failures[0];
    assert!(f.tasks_lost > 0, "the failed rack held queued tasks");
    assert_eq!(s.lost_to_failures, f.tasks_lost);
    // Losses stop once schedulers know (detection plus two hops), give or take tasks in flight.
    assert!(
        f.converge_us <= 200.0 + 10.0 + 20.0,
        "converged after {} us",
        f.converge_us
    );
    assert!(s.little.relative_error < 1e-9);
}

#[test]
fn a_spine_failure_is_repaired_by_rehosting_its_schedulers() {
    let mut cfg = small("idle-only", "exp", "0.6");
    cfg.loss = 0.0;
    // The switch hosting pool 0's spine scheduler for its first group of racks.
    let switch = Engine::new(&cfg).unwrap().cluster().pools[0].groups[0].spine_switch;
    cfg.failures = vec![FailureSpec {
        at_ns: 1_000_000,
        target: FailureTarget::Spine(switch),
    }];
    let s = run(&cfg);
    let f = &s.failures[0];
    assert!(
        f.tasks_lost > 0,
        "tasks reaching the dead spine are lost until the notice"
    );
    assert!(
        f.converge_us <= (cfg.detect_ns + 2 * cfg.hop_delay_ns) as f64 / 1e3 + 1.0,
        "{f:?}"
    );
    assert_eq!(s.completed + s.lost_to_failures + s.unfinished, s.tasks);
}

/// Decision 20: a pool in one group of racks over several pods loses both aggregation switches
/// of the pod hosting its spine. The spine restarts in another pod of the group, so the pool,
/// which has no other spine, keeps its clients once the controller knows: without that every
/// later task would be lost.
#[test]
fn a_group_whose_spine_pod_loses_every_switch_restarts_its_spine_in_another_pod() {
    for policy in ["horus", "idle-only", "rs-h"] {
        let mut cfg = small(policy, "exp", "0.6");
        cfg.loss = 0.0;
        cfg.spine_group_workers = u32::MAX;
        let probe = Engine::new(&cfg).unwrap();
        let cluster = probe.cluster();
        let pool = &cluster.pools[0];
        assert_eq!(pool.groups.len(), 1, "one group for the whole pool");
        let per_pod = cluster.topology.racks_per_pod();
        let home = pool.groups[0].pod;
        let pods: Vec<u32> = pool
            .racks
            .iter()
            .map(|r| cluster.topology.pod_of_rack(r.rack))
            .collect();
        assert!(pods.iter().any(|&p| p != home), "the group spans pods");
        cfg.failures = (0..per_pod)
            .map(|k| FailureSpec {
                at_ns: 1_000_000 + u64::from(k) * 100_000,
                target: FailureTarget::Spine(home * per_pod + k),
            })
            .collect();
        drop(probe);
        let s = run(&cfg);
        let limit = (cfg.detect_ns + 6 * cfg.hop_delay_ns) as f64 / 1e3 + 2.0;
        for f in &s.failures {
            assert!(f.converge_us <= limit, "{policy}: {f:?}");
        }
        // The pool still completes tasks after the last failure's notice: the ones that
        // arrived during the last 1.5 ms of a 3 ms run are most of what it did after it.
        let p0 = &s.pools[0];
        assert!(
            p0.lost < p0.arrived / 5,
            "{policy}: pool 0 lost {} of {}",
            p0.lost,
            p0.arrived
        );
        assert_eq!(s.completed + s.lost_to_failures + s.unfinished, s.tasks);
    }
}

#[test]
fn a_configuration_that_would_run_empty_or_fail_nothing_is_refused_with_its_reason() {
    let ok = small("horus", "exp", "0.5");
    ok.validate().expect("the base configuration is valid");
    let racks = ok.topology.racks();
    let fail = |target, at_ns| SimConfig {
        failures: vec![FailureSpec { at_ns, target }],
        ..ok.clone()
    };
    let refused: [(SimConfig, &str); 8] = [
        (
            SimConfig {
                warmup_ns: ok.sim_ns,
                ..ok.clone()
            },
            "no task would be measured",
        ),
        (
            SimConfig {
                load: LoadSchedule::parse("0:0,3:0.5").unwrap(),
                ..ok.clone()
            },
            "no task would arrive",
        ),
        (
            SimConfig {
                load: LoadSchedule {
                    steps: vec![(0, -0.5)],
                },
                ..ok.clone()
            },
            "non-negative",
        ),
        (
            SimConfig {
                pools: PoolSource::Random(RandomPools {
                    count: 0,
                    ..RandomPools::default()
                }),
                ..ok.clone()
            },
            "at least one pool",
        ),
        (
            fail(FailureTarget::Leaf(racks), 1_000_000),
            "outside the topology: it has 32 racks",
        ),
        (
            fail(FailureTarget::Spine(ok.topology.spines()), 1_000_000),
            "32 spines",
        ),
        (
            fail(FailureTarget::Leaf(0), ok.sim_ns),
            "after arrivals stop",
        ),
        (
            fail(FailureTarget::Worker(0), ok.sim_ns + 1),
            "worker:0 fails at 3.000001 ms",
        ),
    ];
    for (i, (cfg, why)) in refused.into_iter().enumerate() {
        let e = format!("{:#}", cfg.validate().expect_err(why));
        assert!(e.contains(why), "case {i}: {e:?} does not say {why:?}");
        // The engine refuses it the same way, before anything runs.
        let e = Engine::new(&cfg).err().expect(why);
        assert!(format!("{e:#}").contains(why), "case {i}: {e:#}");
    }
    // A worker ID past the pools' workers: refused when the pools are placed, not a panic mid-run.
    let workers = Engine::new(&ok).unwrap().cluster().total_workers();
    let e = Engine::new(&fail(FailureTarget::Worker(workers), 1_000_000)).err();
    let e = format!("{:#}", e.expect("no such worker"));
    assert!(
        e.contains(&format!(
            "worker:{workers} is not a worker: the pools have {workers}"
        )),
        "{e}"
    );
    // The last worker and the last rack are fine.
    Engine::new(&fail(FailureTarget::Worker(workers - 1), 1_000_000)).unwrap();
    fail(FailureTarget::Leaf(racks - 1), ok.sim_ns - 1)
        .validate()
        .unwrap();
}

#[test]
fn every_policy_stops_losing_tasks_once_the_controller_knows_even_a_whole_pod_is_dead() {
    use FailureTarget::{Leaf, Spine};
    // Four pods of two racks and two aggregation switches. Failing racks 0 and 1 leaves pod 0
    // without a live worker of any pool, failing switches 0 and 1 leaves it without a spine: its
    // spines must stop getting tasks. Failing rack 2 alone leaves one live rack in pod 1, which
    // every policy must find however its random draws fall.
    let scenarios: [&[(FailureTarget, u64)]; 3] = [
        &[(Leaf(0), 1_000_000), (Leaf(1), 1_500_000)],
        &[(Spine(0), 1_000_000), (Spine(1), 1_500_000)],
        &[(Leaf(2), 1_000_000)],
    ];
    for policy in policy::names() {
        for failures in scenarios {
            let mut cfg = small(policy, "exp", "0.8");
            cfg.topology.pods = 4;
            cfg.pools = PoolSource::Random(RandomPools {
                count: 3,
                ..RandomPools::default()
            });
            cfg.loss = 0.0;
            cfg.failures = failures
                .iter()
                .map(|&(target, at_ns)| FailureSpec { at_ns, target })
                .collect();
            let s = run(&cfg);
            // The notice comes after detection and two hops; a task decided just before it is
            // lost up to four hops later (spine to a leaf across pods, leaf to worker), give or
            // take a resubmit.
            let limit = (cfg.detect_ns + 6 * cfg.hop_delay_ns) as f64 / 1e3 + 2.0;
            for f in &s.failures {
                assert!(f.tasks_lost > 0, "{policy}: {f:?}");
                assert!(f.converge_us <= limit, "{policy} {failures:?}: {f:?}");
            }
            assert_eq!(s.completed + s.lost_to_failures + s.unfinished, s.tasks);
        }
    }
}

#[test]
fn a_rack_whose_workers_all_fail_one_by_one_is_dropped_like_a_failed_rack() {
    for policy in policy::names() {
        // Eight slots per rack, so that a pool has only a few workers in a rack.
        let mut cfg = SimConfig {
            topology: Topology {
                pods: 4,
                servers_per_rack: 2,
                slots_per_server: 4,
            },
            pools: PoolSource::Sizes(vec![20, 12]),
            ..small(policy, "exp", "0.7")
        };
        cfg.loss = 0.0;
        let probe = Engine::new(&cfg).unwrap();
        let pool = &probe.cluster().pools[0];
        let rack = &pool.racks[0];
        let first = pool.worker_base + rack.first_worker;
        cfg.failures = (first..first + rack.workers)
            .enumerate()
            .map(|(i, w)| FailureSpec {
                at_ns: 1_000_000 + i as u64 * 50_000,
                target: FailureTarget::Worker(w),
            })
            .collect();
        drop(probe);
        let s = run(&cfg);
        // As for a failed leaf, and the last failure's notice comes after the others'.
        let last = cfg.failures.last().unwrap().at_ns - cfg.failures[0].at_ns;
        let limit = (cfg.detect_ns + 6 * cfg.hop_delay_ns + last) as f64 / 1e3 + 2.0;
        for f in &s.failures {
            assert!(f.converge_us <= limit, "{policy}: {:?}", s.failures);
        }
        assert_eq!(
            s.completed + s.lost_to_failures + s.unfinished + s.lost_in_network,
            s.tasks
        );
    }
}

/// Server speeds: every server twice as fast, at the same load, halves the response times of an
/// exponential workload (the same queues, in half the time); and racks with two fast servers
/// among slow ones (Malcolm's kind of heterogeneity) overload the slow ones under a
/// speed-unaware random dispatch at a load that queue-aware JSQ, which sends more to the
/// servers that drain faster, carries.
#[test]
fn server_speeds_scale_service_and_capacity() {
    let speeds = |cfg: &mut SimConfig, text: &str| {
        cfg.server_speeds = horus_sim::config::parse_speeds(text).unwrap();
        cfg.loss = 0.0;
        cfg.hop_delay_ns = 0;
        cfg.validate().unwrap();
    };
    let mut slow = small("random", "exp", "0.5");
    speeds(&mut slow, "24x1");
    let mut fast = small("random", "exp", "0.5");
    speeds(&mut fast, "24x2");
    let (s, f) = (run(&slow), run(&fast));
    // Twice the capacity: twice the tasks in the same time.
    let tasks = f.tasks as f64 / s.tasks as f64;
    assert!((tasks - 2.0).abs() < 0.05, "{tasks}");
    let ratio = f.response.mean_us / s.response.mean_us;
    assert!((ratio - 0.5).abs() < 0.05, "mean response ratio {ratio}");
    // 2 servers of speed 8 and 22 of speed 1: mean speed 38/24, so at a load of 0.7 a slow
    // server given its even share by random dispatch is 11 % over its capacity.
    let mut random = small("random", "exp", "0.7");
    speeds(&mut random, "2x8,22x1");
    let mut jsq = small("jsq", "exp", "0.7");
    speeds(&mut jsq, "2x8,22x1");
    let (r, j) = (run(&random), run(&jsq));
    assert!(
        r.response.p99_us > 3.0 * j.response.p99_us,
        "random p99 {} us, jsq p99 {} us",
        r.response.p99_us,
        j.response.p99_us
    );
    // A bad list is refused before anything runs.
    let mut bad = small("random", "exp", "0.5");
    bad.server_speeds = vec![1.0; 3];
    assert!(bad.validate().is_err());
    assert!(horus_sim::config::parse_speeds("2x0").is_err());
    assert!(horus_sim::config::parse_speeds("ax1").is_err());
}
