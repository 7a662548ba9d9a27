//! One run on several cores: the pools split into shards, each simulated by its own engine.
//!
//! Pools are independent in the simulated datacenter: every worker belongs to one pool, the leaf
//! and spine schedulers keep per-pool state, and every message concerns one pool. What ties them
//! together in one engine is incidental: the shared random streams (spine choice, policy,
//! network loss), the per-switch schedulers of Horus (one model per switch with one generator for
//! all the switch's pools), the single event queue and the metrics. A sharded run therefore gives
//! each shard a subset of the pools and a complete engine over them: its own event queue, its own
//! switches (configured with its pools only), its own streams (derived from the seed and the shard
//! index) and its own metrics; the pools keep their own workload streams, so they see the same
//! arrivals and service times in every shard count. The shards run in parallel on rayon's pool
//! and their results are merged (see [`crate::engine`]'s `merge`).
//!
//! Failures are physical: every shard handles every failure at its time, so a leaf or spine
//! failure hits the pools of every shard on that switch at the same simulated time; a worker
//! failure concerns the shard of its pool only.
//!
//! The result is a function of the configuration, the seed and the shard count only: not of the
//! number of threads, nor of their scheduling. One shard is exactly the unsharded engine; other
//! shard counts give statistically equivalent, not identical, results for the same seed.

use crate::config::SimConfig;
use crate::engine::{self, Engine};
use crate::metrics::Summary;
use crate::placement::PoolPlacement;
use crate::queue::Nanos;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The pools one engine simulates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardSpec {
    /// Index among the run's shards (0 for an unsharded run): it seeds the shard's streams.
    pub index: u32,
    /// Global indices of the shard's pools, ascending; the engine numbers them `0..` in this order.
    pub pools: Vec<u32>,
    /// Per pool of the shard: its workers, and the global ID of its first worker.
    sizes: Vec<u32>,
    global_base: Vec<u32>,
    /// Per pool of the shard: the shard-local ID of its first worker.
    local_base: Vec<u32>,
    /// Workers in the whole run.
    pub total_workers: u32,
}

impl ShardSpec {
    /// The single shard of an unsharded run: every pool.
    pub fn whole(placements: &[PoolPlacement]) -> Self {
        let ids: Vec<u32> = (0..placements.len() as u32).collect();
        Self::of(0, ids, placements)
    }

    fn of(index: u32, pools: Vec<u32>, placements: &[PoolPlacement]) -> Self {
        // Global worker IDs are pool-major: pool p's workers follow those of pools 0..p.
        let mut global = Vec::with_capacity(placements.len());
        let mut total = 0u32;
        for p in placements {
            global.push(total);
            total += p.slots.len() as u32;
        }
        let sizes: Vec<u32> = pools
            .iter()
            .map(|&p| placements[p as usize].slots.len() as u32)
            .collect();
        let local_base = sizes
            .iter()
            .scan(0u32, |acc, &s| Some(std::mem::replace(acc, *acc + s)))
            .collect();
        Self {
            index,
            global_base: pools.iter().map(|&p| global[p as usize]).collect(),
            pools,
            sizes,
            local_base,
            total_workers: total,
        }
    }

    /// Workers of the shard.
    pub fn workers(&self) -> u64 {
        self.sizes.iter().map(|&s| u64::from(s)).sum()
    }

    /// The shard-local ID of global worker `global`, if its pool is in this shard.
    pub fn local_worker(&self, global: u32) -> Option<u32> {
        let i = self
            .global_base
            .partition_point(|&b| b <= global)
            .checked_sub(1)?;
        let offset = global - self.global_base[i];
        (offset < self.sizes[i]).then(|| self.local_base[i] + offset)
    }
}

/// Splits the pools into at most `shards` shards (never an empty one) of about equal expected
/// work. Every pool gets the same load relative to its capacity, so its events are proportional
/// to its workers: pools go, largest first, to the shard with the fewest workers so far (ties to
/// the lower index). Deterministic.
pub fn partition(placements: &[PoolPlacement], shards: u32) -> Vec<ShardSpec> {
    let n = (shards.max(1) as usize).min(placements.len().max(1));
    let mut order: Vec<u32> = (0..placements.len() as u32).collect();
    order.sort_by_key(|&p| (std::cmp::Reverse(placements[p as usize].slots.len()), p));
    let mut load = vec![0u64; n];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
    for p in order {
        let s = (0..n).min_by_key(|&s| (load[s], s)).expect("n >= 1");
        load[s] += placements[p as usize].slots.len() as u64;
        members[s].push(p);
    }
    members
        .into_iter()
        .enumerate()
        .map(|(i, mut pools)| {
            pools.sort_unstable();
            ShardSpec::of(i as u32, pools, placements)
        })
        .collect()
}

/// Runs `cfg` in `cfg.shards` shards in parallel and merges their results. `progress` gets the
/// simulated time of the slowest shard now and then (only when called outside rayon's pool: a
/// sweep's runs report nothing).
pub fn run(cfg: &SimConfig, progress: &mut dyn FnMut(Nanos)) -> anyhow::Result<Summary> {
    let placements = engine::placements(cfg)?;
    let specs = partition(&placements, cfg.shards);
    let at: Vec<AtomicU64> = specs.iter().map(|_| AtomicU64::new(0)).collect();
    let simulate = || -> anyhow::Result<Vec<Engine>> {
        specs
            .clone()
            .into_par_iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut e = Engine::for_shard(cfg, &placements, spec, |c, q, rng| {
                    cfg.policy.build(c, q, rng)
                })?;
                e.run_events(&mut |t| at[i].store(t, Ordering::Relaxed));
                at[i].store(Nanos::MAX, Ordering::Relaxed);
                Ok(e)
            })
            .collect()
    };
    let engines = if rayon::current_thread_index().is_some() {
        // On a worker of the pool already (a sweep): waiting here would hold a worker the shards
        // may need.
        simulate()?
    } else {
        // The shards run on the pool while this thread reports progress.
        std::thread::scope(|scope| {
            let main = std::thread::current();
            let simulate = &simulate;
            let worker = scope.spawn(move || {
                let r = simulate();
                main.unpark();
                r
            });
            let mut last = 0;
            while !worker.is_finished() {
                std::thread::park_timeout(std::time::Duration::from_millis(200));
                let slowest = at
                    .iter()
                    .map(|a| a.load(Ordering::Relaxed))
                    .min()
                    .unwrap_or(0);
                if slowest != Nanos::MAX && slowest > last {
                    last = slowest;
                    progress(slowest);
                }
            }
            worker
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })?
    };
    let end = engines.iter().map(Engine::now).max().unwrap_or(0);
    let results: Vec<_> = engines.into_par_iter().map(|e| e.finish(end)).collect();
    Ok(engine::merge(cfg, results, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools(sizes: &[usize]) -> Vec<PoolPlacement> {
        let mut next = 0u32;
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let slots = (next..next + n as u32).collect();
                next += n as u32;
                PoolPlacement {
                    app_id: i as u32,
                    slots,
                }
            })
            .collect()
    }

    #[test]
    fn partition_balances_workers_largest_first_and_covers_every_pool_once() {
        let p = pools(&[10, 50, 20, 30, 40, 5]);
        let shards = partition(&p, 2);
        assert_eq!(shards.len(), 2);
        // 50 -> 0, 40 -> 1, 30 -> 1, 20 -> 0, 10 -> 0, 5 -> 1: 80 and 75 workers.
        assert_eq!(shards[0].pools, vec![0, 1, 2]);
        assert_eq!(shards[1].pools, vec![3, 4, 5]);
        assert_eq!((shards[0].workers(), shards[1].workers()), (80, 75));
        let mut all: Vec<u32> = shards.iter().flat_map(|s| s.pools.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..6).collect::<Vec<_>>());
        // Never an empty shard.
        assert_eq!(partition(&p, 10).len(), 6);
        assert_eq!(partition(&p, 1), vec![ShardSpec::whole(&p)]);
    }

    #[test]
    fn global_workers_map_to_their_shard_only() {
        let p = pools(&[10, 50, 20]);
        let shards = partition(&p, 2); // [1] and [0, 2]
        assert_eq!(shards[0].pools, vec![1]);
        assert_eq!(shards[1].pools, vec![0, 2]);
        assert_eq!(shards[0].total_workers, 80);
        // Pool 0: global 0..10; pool 1: 10..60; pool 2: 60..80.
        assert_eq!(shards[0].local_worker(9), None);
        assert_eq!(shards[0].local_worker(10), Some(0));
        assert_eq!(shards[0].local_worker(59), Some(49));
        assert_eq!(shards[0].local_worker(60), None);
        assert_eq!(shards[1].local_worker(3), Some(3));
        assert_eq!(shards[1].local_worker(10), None);
        assert_eq!(shards[1].local_worker(60), Some(10));
        assert_eq!(shards[1].local_worker(79), Some(29));
        assert_eq!(shards[1].local_worker(80), None);
        let whole = ShardSpec::whole(&p);
        assert!((0..80).all(|w| whole.local_worker(w) == Some(w)));
    }
}
