//! The other seeds' schedulers in whole runs: the behaviour each is defined by, and the effect
//! its paper claims for it. Their call-by-call behaviour is tested beside each policy.
//!
//! Runtime (debug build, 2 cores): about 40 s, most of it Malcolm learning its testbed (12 s of
//! simulated heartbeats, five times).

use horus_sim::config::{PoolSource, SimConfig};
use horus_sim::engine;
use horus_sim::metrics::Summary;
use horus_sim::placement::RandomPools;
use horus_sim::policy::PolicySpec;
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;

mod common;
use common::{counter, observe};

fn config(policy: &str, params: &[(&str, f64)], workload: &str, load: f64, seed: u64) -> SimConfig {
    let mut spec = PolicySpec::named(policy).unwrap();
    for &(n, v) in params {
        spec.set_param(n, v).unwrap();
    }
    SimConfig {
        seed,
        topology: Topology {
            pods: 8,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: 6,
            ..RandomPools::default()
        }),
        policy: spec,
        workload: workload.into(),
        load: LoadSchedule::constant(load),
        sim_ns: 3_000_000,
        warmup_ns: 300_000,
        sample_ns: 0,
        pool_histograms: false,
        ..SimConfig::default()
    }
}

fn run(cfg: &SimConfig) -> Summary {
    engine::run(cfg, &mut |_| {}).unwrap()
}

/// The median over seeds 1 to 3 of the p99 response, in us.
fn p99(policy: &str, params: &[(&str, f64)], workload: &str, load: f64) -> f64 {
    let mut v: Vec<f64> = (1..=3)
        .map(|seed| {
            run(&config(policy, params, workload, load, seed))
                .response
                .p99_us
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[1]
}

#[test]
fn rain_bounds_every_workers_queue_by_its_quota_and_sees_the_true_service_times() {
    // Fixed quota 1: no worker ever has a task waiting behind another (JBSQ(1)).
    let cfg = config(
        "rain",
        &[("k", 1.0), ("adaptive", 0.0)],
        "rocksdb-90-10",
        0.9,
        1,
    );
    let (s, o) = observe(&cfg);
    assert_eq!(o.longest, 0, "a worker had a task waiting with quota 1");
    assert!(counter(&s, "held") > 0);
    // The replies carry the tasks' real service times: a GET's and a SCAN's.
    assert_eq!(
        o.services.into_iter().collect::<Vec<_>>(),
        [40_000, 650_000]
    );
    // The agent moves quotas within [1, k_max]: queues stay under k_max.
    let cfg = config("rain", &[("k_max", 3.0)], "exp", 0.95, 1);
    let (s, o) = observe(&cfg);
    assert!(o.longest < 3, "longest queue {}", o.longest);
    assert!(counter(&s, "quota_up") + counter(&s, "quota_down") > 0);
    assert!(s.little.relative_error < 1e-9);
}

#[test]
fn rain_slices_cut_rocksdbs_tail_by_keeping_gets_from_waiting_behind_scans() {
    // Rain §5.2, observation 3: slicing by task type lowers the overall tail.
    for load in [0.5, 0.8] {
        let fixed = [("adaptive", 0.0)];
        let sliced = p99("rain", &fixed, "rocksdb-90-10", load);
        let shared = p99(
            "rain",
            &[("adaptive", 0.0), ("sliced", 0.0)],
            "rocksdb-90-10",
            load,
        );
        eprintln!("load {load}: p99 sliced {sliced:.0} us, one slice {shared:.0} us");
        assert!(
            sliced < 0.8 * shared,
            "load {load}: {sliced} against {shared}"
        );
    }
}

#[test]
fn r2p2_bounds_every_workers_queue_by_n_and_pays_for_it_in_passes() {
    for n in [1u32, 2] {
        let cfg = config("r2p2", &[("n", f64::from(n))], "exp", 0.9, 1);
        let (s, o) = observe(&cfg);
        eprintln!(
            "n = {n}: longest queue left {}, {:.4} of tasks resubmitted, {} recirculated, {} \
             extra passes, p99 {:.0} us",
            o.longest,
            s.resubmitted_fraction,
            counter(&s, "recirculated"),
            counter(&s, "extra_passes"),
            s.response.p99_us
        );
        assert!(o.longest < n, "n = {n}: a worker had {} left", o.longest);
        assert!(counter(&s, "recirculated") > 0 && counter(&s, "extra_passes") > 0);
        assert!(s.resubmitted_fraction > 0.0);
        assert!(s.little.relative_error < 1e-9);
    }
}

#[test]
fn weighting_by_speed_sends_fast_servers_more_and_cuts_the_tail_on_heterogeneous_racks() {
    let het = |policy: &str, weighted: f64| {
        let mut cfg = config(policy, &[("weighted", weighted)], "exp", 0.9, 1);
        cfg.topology.servers_per_rack = 24;
        cfg.server_speeds = vec![8.0, 8.0]
            .into_iter()
            .chain(std::iter::repeat_n(1.0, 22))
            .collect();
        cfg
    };
    for policy in ["jsq", "horus-jbsq", "malcolm-jbt"] {
        let (plain, _) = observe(&het(policy, 0.0));
        let (weighted, o) = observe(&het(policy, 1.0));
        eprintln!(
            "{policy}: p99 {:.0} us by count, {:.0} us by time; longest queue {}",
            plain.response.p99_us, weighted.response.p99_us, o.longest
        );
        assert!(
            weighted.response.p99_us < 0.9 * plain.response.p99_us,
            "{policy}: {} against {}",
            weighted.response.p99_us,
            plain.response.p99_us
        );
        if policy == "horus-jbsq" {
            // k = 2 becomes 16 on a fast server and stays 2 on a slow one.
            assert!(o.longest >= 2 && o.longest < 16, "longest {}", o.longest);
        }
    }
}

#[test]
fn malcolms_jsq_herds_on_stale_loads_where_po2_does_not() {
    // Malcolm §7.1: JSQ's nodes, deciding on the same broadcast, all pick the same short queue;
    // Po2's random samples spread them. With loads fresh every nanosecond JSQ wins.
    let p99 = |policy: &str, period_us: f64| {
        let cfg = config(policy, &[("period_us", period_us)], "exp", 0.9, 1);
        run(&cfg).response.p99_us
    };
    let (jsq_stale, po2_stale) = (p99("malcolm-jsq", 100.0), p99("malcolm-po2", 100.0));
    let (jsq_fresh, po2_fresh) = (p99("malcolm-jsq", 0.001), p99("malcolm-po2", 0.001));
    eprintln!(
        "period 100 us: jsq {jsq_stale:.0}, po2 {po2_stale:.0}; 1 ns: jsq {jsq_fresh:.0}, po2 \
         {po2_fresh:.0}"
    );
    assert!(jsq_stale > 1.2 * po2_stale);
    assert!(jsq_fresh < 0.9 * po2_fresh);
    // RAND migrates nothing; the others do.
    let s = run(&config("malcolm-rand", &[], "exp", 0.9, 1));
    assert_eq!(counter(&s, "migrations"), 0);
    let s = run(&config("malcolm-jbt", &[], "exp", 0.9, 1));
    assert!(counter(&s, "migrations") > 0);
    assert!(s.little.relative_error < 1e-9);
}

#[test]
fn sparrow_binds_each_task_late_to_an_idle_worker_and_beats_random_on_jobs() {
    // Sparrow's RPCs run over TCP: with a lossy network (1e-3 a hop) it loses nothing.
    let job_cfg = |policy: &str| {
        let mut cfg = config(policy, &[], "exp", 0.5, 1);
        cfg.job_tasks = 4;
        cfg.loss = 1e-3;
        cfg
    };
    let (s, o) = observe(&job_cfg("sparrow"));
    let jobs = s.jobs.as_ref().unwrap();
    eprintln!(
        "sparrow: {} jobs, p99 {:.0} us; longest queue left {}",
        jobs.response.count, jobs.response.p99_us, o.longest
    );
    assert_eq!(o.longest, 0, "a worker had a task waiting behind another");
    assert_eq!(counter(&s, "probes"), 2 * s.tasks);
    assert_eq!(counter(&s, "launched"), s.tasks);
    assert_eq!(
        (s.completed, jobs.unfinished, s.lost_in_network),
        (s.tasks, 0, 0)
    );
    let random = run(&job_cfg("random"));
    let r = random.jobs.as_ref().unwrap();
    eprintln!("random: p99 {:.0} us", r.response.p99_us);
    assert!(jobs.response.p99_us < 0.8 * r.response.p99_us);
}

/// Malcolm's heterogeneous testbed (§7.1) as one rack: 4 nodes of 14 cores and 10 of 3, each on
/// a server of its own (`testbeds/malcolm-heterogeneous.log`), no loss.
fn malcolm_rack(
    policy: &str,
    params: &[(&str, f64)],
    load: f64,
    sim_ms: u64,
    seed: u64,
) -> SimConfig {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testbeds/malcolm-heterogeneous.log"
    );
    let mut cfg = config(policy, params, "exp", load, seed);
    cfg.topology = Topology {
        pods: 2,
        servers_per_rack: 16,
        slots_per_server: 16,
    };
    cfg.pools = PoolSource::Dataset(path.into());
    cfg.loss = 0.0;
    cfg.sim_ns = sim_ms * 1_000_000;
    cfg.warmup_ns = cfg.sim_ns / 2;
    cfg
}

/// Malcolm's nodes: a node of c cores sharing one FCFS queue is an M/M/c queue (Erlang C),
/// not c M/M/1 queues.
#[test]
fn a_nodes_cores_share_one_queue() {
    // Two racks of one 4-core server each; RAND keeps every task at its node.
    let mut cfg = config("malcolm-rand", &[], "exp", 0.7, 1);
    cfg.topology = Topology {
        pods: 2,
        servers_per_rack: 1,
        slots_per_server: 4,
    };
    cfg.pools = PoolSource::Sizes(vec![8]);
    // A spine per pod, each over its one rack: each rack sees half the Poisson arrivals.
    cfg.spine_group_workers = 0;
    cfg.hop_delay_ns = 0;
    cfg.loss = 0.0;
    cfg.sim_ns = 600_000_000;
    cfg.warmup_ns = 50_000_000;
    let s = run(&cfg);
    // Erlang C: P(wait) for c = 4 servers at offered load a = 2.8, mean wait C / (c mu - lambda).
    let (c, a) = (4.0f64, 2.8f64);
    let below: f64 = (0..4)
        .map(|k| a.powi(k) / (1..=k).product::<i32>() as f64)
        .sum();
    let top = a.powi(4) / 24.0 * c / (c - a);
    let wait = top / (below + top) * 100.0 / (c - a);
    let expected = 100.0 + wait;
    let got = s.response.mean_us;
    eprintln!("M/M/4 at 0.7: mean response {got:.1} us, Erlang C {expected:.1} us");
    assert!((got / expected - 1.0).abs() < 0.02, "{got} vs {expected}");
    assert!(s.little.relative_error < 1e-9);
}

/// Malcolm's heterogeneous testbed (§7.1), its claim (§7.2): once its nodes have learned, its
/// p99 beats Po2's at low load, and by far where Po2 no longer copes; the untrained strategy
/// (each node keeps 9 tasks in 10 and sends the tenth to a random node, actors not learning)
/// does not cope at all.
#[test]
fn malcolm_learns_to_beat_po2_on_a_heterogeneous_rack() {
    // 12 s of heartbeats, measured over the last 2 s (Malcolm learns it in about 10 s).
    let p99 = |policy: &str, params: &[(&str, f64)], load: f64| {
        let mut cfg = malcolm_rack(policy, params, load, 12_000, 1);
        cfg.warmup_ns = 10_000_000_000;
        let s = run(&cfg);
        assert!(s.little.relative_error < 1e-9);
        if !params.is_empty() {
            return (s.response.p99_us, s); // the untrained strategy: its queues grow
        }
        // Every measured task finished: the p99 is not that of the lucky ones.
        assert_eq!(s.unfinished, 0, "{policy} at {load}");
        (s.response.p99_us, s)
    };
    for load in [0.4, 0.6] {
        let (po2, _) = p99("malcolm-po2", &[], load);
        let (malcolm, s) = p99("malcolm", &[], load);
        eprintln!(
            "load {load}: po2 p99 {po2:.0} us, malcolm {malcolm:.0} us ({} migrations, {} \
             tasks stolen, {} policy updates)",
            counter(&s, "migrations"),
            counter(&s, "stolen"),
            counter(&s, "policy_updates")
        );
        assert!(malcolm < 0.97 * po2, "load {load}: {malcolm} vs {po2}");
        if load > 0.5 {
            assert!(malcolm < 0.8 * po2, "load {load}: {malcolm} vs {po2}");
            let (untrained, _) = p99("malcolm", &[("actor_lr", 0.0)], load);
            eprintln!("untrained: {untrained:.0} us");
            assert!(
                malcolm < 0.5 * untrained,
                "{malcolm} vs untrained {untrained}"
            );
        }
        assert!(counter(&s, "stolen") > 0 && counter(&s, "policy_updates") == 6000);
    }
}

/// Malcolm's steals and migrations with a core and then a whole node failing: every task is
/// accounted for, once; over eRPC a lossy network loses none of them.
#[test]
fn malcolm_accounts_for_every_task() {
    let mut cfg = malcolm_rack("malcolm", &[("actor_lr", 0.003)], 0.7, 300, 1);
    cfg.loss = 1e-3;
    // Worker 0 is a core of a 14-core node; 83-85 the three cores of the last node.
    cfg.failures = [
        "worker:0@50",
        "worker:83@100",
        "worker:84@100",
        "worker:85@100",
    ]
    .iter()
    .map(|f| horus_sim::config::FailureSpec::parse(f).unwrap())
    .collect();
    cfg.validate().unwrap();
    let s = run(&cfg);
    assert!(counter(&s, "stolen") > 0 && counter(&s, "migrations") > 0);
    assert!(s.lost_to_failures > 0);
    assert_eq!(s.lost_in_network, 0);
    assert_eq!(
        s.completed + s.lost_to_failures + s.unfinished + s.lost_in_network,
        s.tasks
    );
    assert!(s.little.relative_error < 1e-9, "{:?}", s.little);
    // The nodes' own counts followed the engine's: none left once the run drained.
    assert_eq!(s.unfinished, 0);
    assert_eq!(counter(&s, "tasks_at_nodes"), 0);
}
