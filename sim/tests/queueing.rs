//! The engine against queueing theory.
//!
//! Random dispatch of Poisson arrivals splits them into independent Poisson streams, so a pool of n
//! workers under `random` is n independent M/M/1 queues, and any policy on a pool of one worker is
//! one M/M/1 queue. Their response time is exponential with rate mu - lambda: mean 1/(mu - lambda),
//! p99 ln(100)/(mu - lambda). R2P2 serves the tasks that wait in random order (they recirculate,
//! and a freed place goes to any of them): the same mean, a heavier tail.
//!
//! Runs start in the stationary state (`prefill`: a geometric number of tasks per worker) and use
//! many short, independent queues rather than one long one: at load 0.9 one queue's sojourn times
//! stay correlated over hundreds of tasks, so many queues give far more independent samples per
//! simulated task. The sizes are chosen for a standard error near 1 % on the p99 (3 % tolerance).
//! Network delay and loss are zero so that the response time is pure queueing.
//!
//! Runtime (debug build, 2 cores): about a minute for the whole file.

use horus_sim::config::{PoolSource, SimConfig};
use horus_sim::engine;
use horus_sim::metrics::Summary;
use horus_sim::policy::{self, PolicySpec};
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;

const MEAN_SERVICE_US: f64 = 100.0;

fn mm1_config(
    policy: &str,
    load: f64,
    pools: PoolSource,
    topology: Topology,
    sim_ns: u64,
) -> SimConfig {
    SimConfig {
        seed: 42,
        topology,
        pools,
        policy: PolicySpec::named(policy).unwrap(),
        workload: "exp".into(),
        load: LoadSchedule::constant(load),
        sim_ns,
        warmup_ns: 0,
        hop_delay_ns: 0,
        loss: 0.0,
        sample_ns: 0,
        prefill: true,
        pool_histograms: false,
        ..SimConfig::default()
    }
}

/// Asserts mean and p99 response within 3 % of the M/M/1 closed form.
fn assert_mm1(s: &Summary, load: f64, what: &str) {
    let mu = 1.0 / MEAN_SERVICE_US;
    let sojourn_mean = 1.0 / (mu - load * mu);
    let p99 = 100f64.ln() * sojourn_mean;
    let err_mean = s.response.mean_us / sojourn_mean - 1.0;
    let err_p99 = s.response.p99_us / p99 - 1.0;
    eprintln!(
        "{what} at load {load}: mean {:+.2} %, p99 {:+.2} %",
        err_mean * 100.0,
        err_p99 * 100.0
    );
    assert!(
        err_mean.abs() < 0.03 && err_p99.abs() < 0.03,
        "{what} at load {load}: mean {:.1} us vs {sojourn_mean:.1} ({:+.2} %), p99 {:.1} us vs {p99:.1} ({:+.2} %), {} tasks",
        s.response.mean_us,
        err_mean * 100.0,
        s.response.p99_us,
        err_p99 * 100.0,
        s.response.count
    );
    assert!(
        s.response.count > 100_000,
        "{what}: too few samples ({})",
        s.response.count
    );
}

/// Simulated time giving about `tasks` arrivals over `queues` queues at `load`.
fn sim_ns_for(tasks: f64, queues: f64, load: f64) -> u64 {
    (tasks / (queues * load / (MEAN_SERVICE_US * 1e3))) as u64
}

#[test]
fn random_dispatch_to_n_workers_matches_independent_mm1_queues() {
    let topology = Topology {
        pods: 8,
        servers_per_rack: 24,
        slots_per_server: 32,
    };
    let workers = 20_000u32;
    for load in [0.5, 0.9] {
        let cfg = mm1_config(
            "random",
            load,
            PoolSource::Sizes(vec![workers]),
            topology,
            sim_ns_for(4e5, workers as f64, load),
        );
        let s = engine::run(&cfg, &mut |_| {}).unwrap();
        assert_mm1(&s, load, "random over 20,000 workers");
    }
}

fn every_policy_on_one_worker_pools_matches_mm1(load: f64) {
    let topology = Topology {
        pods: 8,
        servers_per_rack: 24,
        slots_per_server: 32,
    };
    let pools = 20_000u32;
    for policy in policy::names() {
        let cfg = mm1_config(
            policy,
            load,
            PoolSource::Sizes(vec![1; pools as usize]),
            topology,
            sim_ns_for(2.5e5, pools as f64, load),
        );
        let s = engine::run(&cfg, &mut |_| {}).unwrap();
        let what = format!("{policy} on one-worker pools");
        if policy == "r2p2" {
            // Tasks that wait recirculate, and a freed place goes to any of them: M/M/1 in
            // random order of service, whose mean is FIFO's and whose tail is heavier.
            let sojourn_mean = MEAN_SERVICE_US / (1.0 - load);
            let fifo_p99 = 100f64.ln() * sojourn_mean;
            eprintln!(
                "{what} at load {load}: mean {:.1} us (M/M/1 {sojourn_mean:.1}), p99 {:.1} us (FIFO {fifo_p99:.1})",
                s.response.mean_us, s.response.p99_us
            );
            assert!((s.response.mean_us / sojourn_mean - 1.0).abs() < 0.03);
            assert!(s.response.p99_us > fifo_p99 * 1.01);
        } else {
            assert_mm1(&s, load, &what);
        }
    }
}

#[test]
fn every_policy_on_one_worker_pools_matches_mm1_at_load_0_5() {
    every_policy_on_one_worker_pools_matches_mm1(0.5);
}

#[test]
fn every_policy_on_one_worker_pools_matches_mm1_at_load_0_9() {
    every_policy_on_one_worker_pools_matches_mm1(0.9);
}

/// The probability that a task waits in an M/M/n queue at utilization `rho` (Erlang C), and the
/// mean wait: that probability times the mean service over n(1 - rho).
fn erlang_c(n: u32, rho: f64) -> (f64, f64) {
    let a = n as f64 * rho;
    let mut term = 1.0; // a^k / k!
    let mut sum = 0.0;
    for k in 0..n {
        sum += term;
        term *= a / (k + 1) as f64;
    }
    let tail = term / (1.0 - rho); // a^n / n! / (1 - rho)
    let p_wait = tail / (sum + tail);
    (p_wait, p_wait * MEAN_SERVICE_US / (n as f64 * (1.0 - rho)))
}

/// JBSQ(1) at the leaf with no network delay is a central queue per rack: a task waits at the
/// leaf until a worker is idle and no worker ever queues two. Eight racks of 16 workers, each
/// given a uniformly random eighth of the Poisson arrivals, are eight M/M/16 queues: the share
/// of tasks that wait at the leaf is Erlang C's probability of waiting (arrivals see time
/// averages), and the mean response is the mean service plus Erlang C's mean wait. Random
/// dispatch on the same racks (sixteen M/M/1 queues a rack) waits far longer.
#[test]
fn draconis_with_no_network_is_an_m_m_16_queue_per_rack() {
    let topology = Topology {
        pods: 4,
        servers_per_rack: 1,
        slots_per_server: 16,
    };
    for load in [0.7, 0.9] {
        let mut cfg = mm1_config(
            "draconis",
            load,
            PoolSource::Sizes(vec![128]),
            topology,
            400_000_000,
        );
        cfg.prefill = false;
        cfg.warmup_ns = 0;
        let s = engine::run(&cfg, &mut |_| {}).unwrap();
        let (p_wait, wait) = erlang_c(16, load);
        let held = s.leaf_queue.held as f64 / s.tasks as f64;
        let mean = s.response.mean_us;
        eprintln!(
            "draconis at {load}: {:.4} of tasks held (Erlang C {p_wait:.4}), mean response {mean:.2} us (M/M/16 {:.2} us)",
            held,
            MEAN_SERVICE_US + wait
        );
        assert!(
            (held / p_wait - 1.0).abs() < 0.03,
            "load {load}: held {held}, M/M/16 {p_wait}"
        );
        assert!(
            (mean / (MEAN_SERVICE_US + wait) - 1.0).abs() < 0.03,
            "load {load}: mean response {mean} us"
        );
        assert!(s.leaf_queue.p999 >= 1 && s.leaf_queue.max >= s.leaf_queue.p999);
        let mut random = cfg.clone();
        random.policy = PolicySpec::named("random").unwrap();
        let r = engine::run(&random, &mut |_| {}).unwrap();
        assert!(
            r.response.mean_us > mean * 1.5,
            "random {} us",
            r.response.mean_us
        );
        assert_eq!(r.leaf_queue.held, 0);
    }
}

/// A job of four tasks on idle workers (ideal JSQ at 10 % load on pools of 64 workers, no
/// network: some worker is always idle) lasts as long as the longest of four exponential service
/// times: mean 100 (1 + 1/2 + 1/3 + 1/4) = 208.3 us, p99 where (1 - e^(-x/100))^4 = 0.99, 598.8
/// us. The load counts tasks: a quarter as many jobs.
#[test]
fn a_job_of_four_tasks_on_idle_workers_lasts_the_longest_of_four_services() {
    let topology = Topology {
        pods: 4,
        servers_per_rack: 4,
        slots_per_server: 8,
    };
    let mut cfg = mm1_config(
        "jsq",
        0.1,
        PoolSource::Sizes(vec![64; 4]),
        topology,
        1_500_000_000,
    );
    cfg.prefill = false;
    cfg.job_tasks = 4;
    let s = engine::run(&cfg, &mut |_| {}).unwrap();
    let jobs = s.jobs.as_ref().expect("jobs of four tasks are reported");
    let mean = 100.0 * (1.0 + 1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0);
    let p99 = -100.0 * (1.0 - 0.99f64.powf(0.25)).ln();
    eprintln!(
        "jobs: {} done, mean {:.1} us ({mean:.1}), p99 {:.1} us ({p99:.1})",
        jobs.response.count, jobs.response.mean_us, jobs.response.p99_us
    );
    assert_eq!(jobs.tasks, 4);
    assert!(jobs.response.count > 80_000);
    assert!((jobs.response.mean_us / mean - 1.0).abs() < 0.03);
    assert!((jobs.response.p99_us / p99 - 1.0).abs() < 0.05);
    // Four tasks a job, the load in tasks.
    assert!((s.tasks as f64 / (4.0 * jobs.response.count as f64) - 1.0).abs() < 0.01);
    let rate = s.tasks as f64 / (cfg.sim_ns as f64 / 1e3);
    assert!(
        (rate / (0.1 * 256.0 / 100.0) - 1.0).abs() < 0.02,
        "{rate} tasks per us"
    );
    assert!(s.little.relative_error < 1e-9);
    // One-task jobs report no jobs.
    cfg.job_tasks = 1;
    cfg.sim_ns = 10_000_000;
    assert!(engine::run(&cfg, &mut |_| {}).unwrap().jobs.is_none());
}
