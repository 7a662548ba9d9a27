//! Events per second of the engine on one core: `cargo bench -p horus-sim --bench events`.
//!
//! A 16-pod datacenter (128 racks, 98,304 slots) with 100 random pools running RS-H on the
//! exponential workload at 90 % load, with the default network (5 us hops, 1e-5 loss). Setup
//! (placement, policy tables) is excluded from the timing.

use horus_sim::config::{PoolSource, SimConfig};
use horus_sim::engine::Engine;
use horus_sim::placement::RandomPools;
use horus_sim::policy::PolicySpec;
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;
use std::time::Instant;

fn main() {
    for policy in ["random", "rs-h", "jsq"] {
        let cfg = SimConfig {
            topology: Topology {
                pods: 16,
                ..Topology::default()
            },
            pools: PoolSource::Random(RandomPools {
                count: 100,
                ..RandomPools::default()
            }),
            policy: PolicySpec::named(policy).expect("known policy"),
            load: LoadSchedule::constant(0.9),
            sim_ns: 20_000_000,
            ..SimConfig::default()
        };
        let engine = Engine::new(&cfg).expect("valid configuration");
        let workers = engine.cluster().total_workers();
        let started = Instant::now();
        let summary = engine.run(&mut |_| {});
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{policy:8} {workers} workers, {} tasks, {} events in {secs:.2} s: {:.1} M events/s",
            summary.tasks,
            summary.events,
            summary.events as f64 / secs / 1e6
        );
    }
}
