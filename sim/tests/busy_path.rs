//! Horus against power of two with delayed updates on the quick configuration (8 pods, 20 pools
//! of 51 to 1,588 workers over 26 to 32 racks), on Bimodal tasks at loads 0.5 to 0.95 and at
//! every link threshold from 1 to 5 (unlink one below): no pool's p99 is above po2-du's on the
//! same pools, arrivals and seed, and leaf-to-spine messages stay under 0.35 per task where
//! `docs/algorithm.md` (Known limits) says they do. Reduced scale: 10 ms of arrivals.
//!
//! These are the three decisions that made it so (`docs/algorithm.md`, 18 to 20): a spine takes
//! its idle racks in turn, a leaf's report rule leaves out the tasks its spine counted, and the
//! controller puts each pool's racks under spines in groups of at least 100 workers.

use horus_sim::config::{PoolSource, SimConfig};
use horus_sim::engine;
use horus_sim::metrics::Summary;
use horus_sim::placement::RandomPools;
use horus_sim::policy::PolicySpec;
use horus_sim::topology::Topology;
use horus_sim::workload::LoadSchedule;

fn quick(policy: PolicySpec, load: f64) -> SimConfig {
    SimConfig {
        seed: 1,
        topology: Topology {
            pods: 8,
            ..Topology::default()
        },
        pools: PoolSource::Random(RandomPools {
            count: 20,
            ..RandomPools::default()
        }),
        policy,
        workload: "bimodal".into(),
        load: LoadSchedule::constant(load),
        sim_ns: 10_000_000,
        warmup_ns: 1_000_000,
        sample_ns: 0,
        ..SimConfig::default()
    }
}

fn run(cfg: &SimConfig) -> Summary {
    engine::run(cfg, &mut |_| {}).unwrap()
}

fn horus(link_at: u16) -> PolicySpec {
    let mut spec = PolicySpec::named("horus").unwrap();
    spec.set_param("link_at", f64::from(link_at)).unwrap();
    spec.set_param("unlink_at", f64::from(link_at - 1)).unwrap();
    spec
}

#[test]
fn horus_tail_is_never_above_po2_du_for_any_pool_and_messages_stay_low() {
    let mut worst: f64 = 0.0;
    for load in [0.5, 0.7, 0.9, 0.95] {
        let po2 = run(&quick(PolicySpec::named("po2-du").unwrap(), load));
        for link_at in 1..=5 {
            let h = run(&quick(horus(link_at), load));
            assert_eq!(h.pools.len(), po2.pools.len());
            for (ours, theirs) in h.pools.iter().zip(&po2.pools) {
                assert_eq!(ours.workers, theirs.workers, "the same pools");
                let ratio = ours.response.p99_us / theirs.response.p99_us;
                worst = worst.max(ratio);
                assert!(
                    ratio <= 1.0,
                    "load {load}, link {link_at}: pool {} ({} workers) p99 {:.0} us, po2-du {:.0} us",
                    ours.pool,
                    ours.workers,
                    ours.response.p99_us,
                    theirs.response.p99_us
                );
            }
            let per_task: f64 = h.messages.iter().map(|m| m.per_task).sum();
            eprintln!(
                "load {load}, link {link_at}: p99 {:.0} us (po2-du {:.0}), {per_task:.3} messages per task",
                h.response.p99_us, po2.response.p99_us
            );
            // The frontier (docs/algorithm.md, Known limits): at links 1 and 2 a rack flips
            // between idle and busy every few tasks near saturation, and from 90 % load the idle
            // messages alone pass 0.35.
            if link_at >= 3 || load <= 0.7 {
                assert!(
                    per_task < 0.35,
                    "load {load}, link {link_at}: {per_task:.3} messages per task"
                );
            }
        }
    }
    eprintln!("worst pool p99 against po2-du's: {worst:.2}");
}
