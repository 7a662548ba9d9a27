//! Which worker slots each pool occupies.
//!
//! Two sources: random pools as in Horus §5.1 (sizes drawn from an exponential distribution with
//! min 50, max 20,000 and mean 685, workers placed on uniformly random free slots), and the
//! datasets of the public Horus simulator, a log whose last line is a Python dict literal:
//! `{'tenants': {'worker_count': N, 'maps': [{'app_id': A, 'worker_count': W,
//! 'worker_to_host_map': [host, ...]}, ...]}}` with hosts numbered across the datacenter.

use crate::pydict::{self, PyValue};
use crate::rng::{self, Stream};
use crate::topology::Topology;
use anyhow::{Context, bail, ensure};
use rand::Rng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

/// The placement of one pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolPlacement {
    /// The application's ID as given by the dataset, or the pool's index for random pools.
    pub app_id: u32,
    /// One global slot per worker: `server * slots_per_server + slot`.
    pub slots: Vec<u32>,
}

/// Parameters of the random pool generator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomPools {
    pub count: u32,
    pub min: u32,
    pub max: u32,
    pub mean: f64,
}

impl Default for RandomPools {
    fn default() -> Self {
        Self {
            count: 1000,
            min: 50,
            max: 20_000,
            mean: 685.0,
        }
    }
}

impl RandomPools {
    /// Pool sizes: `min + Exp(mean - min)` truncated at `max`, so the mean before truncation is
    /// `mean` (truncation at 20,000 moves a 685 mean by less than 1e-10).
    pub fn sizes(&self, seed: u64) -> Vec<u32> {
        let mut rng = rng::stream(seed, Stream::Placement, 0);
        let excess =
            Exp::new(1.0 / (self.mean - self.min as f64).max(1e-9)).expect("positive rate");
        (0..self.count)
            .map(|_| {
                (self.min as f64 + excess.sample(&mut rng))
                    .round()
                    .min(self.max as f64) as u32
            })
            .collect()
    }
}

/// Places pools of the given sizes on uniformly random free slots (without replacement).
pub fn place_random(
    topology: &Topology,
    sizes: &[u32],
    seed: u64,
) -> anyhow::Result<Vec<PoolPlacement>> {
    let total: u64 = sizes.iter().map(|&s| s as u64).sum();
    ensure!(
        total <= topology.slots(),
        "pools need {total} workers but the datacenter has only {} slots",
        topology.slots()
    );
    let mut rng = rng::stream(seed, Stream::Placement, 1);
    let mut slots: Vec<u32> = (0..topology.slots() as u32).collect();
    let mut taken = 0usize;
    let mut pools = Vec::with_capacity(sizes.len());
    for (i, &size) in sizes.iter().enumerate() {
        // Partial Fisher-Yates: each step draws one uniformly random slot among those still free.
        for j in taken..taken + size as usize {
            let k = rng.random_range(j..slots.len());
            slots.swap(j, k);
        }
        pools.push(PoolPlacement {
            app_id: i as u32,
            slots: slots[taken..taken + size as usize].to_vec(),
        });
        taken += size as usize;
    }
    Ok(pools)
}

/// Reads a public-simulator dataset log. Workers mapped to the same host take its slots in order.
pub fn read_dataset(text: &str, topology: &Topology) -> anyhow::Result<Vec<PoolPlacement>> {
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .context("dataset is empty")?;
    let root = pydict::parse(line.trim()).context("parsing the last line of the dataset")?;
    let tenants = root
        .get("tenants")
        .context("dataset has no 'tenants' key")?;
    let maps = tenants
        .get("maps")
        .and_then(PyValue::as_list)
        .context("'tenants' has no 'maps' list")?;
    let hosts = topology.servers();
    let mut used = vec![0u32; hosts as usize];
    let mut pools = Vec::with_capacity(maps.len());
    let mut total = 0i64;
    for (i, m) in maps.iter().enumerate() {
        let field = |k: &str| m.get(k).with_context(|| format!("maps[{i}] has no '{k}'"));
        let app_id = field("app_id")?
            .as_int()
            .with_context(|| format!("maps[{i}].app_id is not an integer"))?;
        let count = field("worker_count")?
            .as_int()
            .with_context(|| format!("maps[{i}].worker_count is not an integer"))?;
        let list = field("worker_to_host_map")?
            .as_list()
            .with_context(|| format!("maps[{i}].worker_to_host_map is not a list"))?;
        ensure!(
            list.len() as i64 == count,
            "maps[{i}] (app {app_id}) says {count} workers but maps {}",
            list.len()
        );
        let mut slots = Vec::with_capacity(list.len());
        for h in list {
            let host = h
                .as_int()
                .with_context(|| format!("maps[{i}] has a non-integer host {h:?}"))?;
            if host < 0 || host >= hosts as i64 {
                bail!(
                    "maps[{i}] (app {app_id}) uses host {host}, outside 0..{hosts} of this topology"
                );
            }
            let u = &mut used[host as usize];
            ensure!(
                *u < topology.slots_per_server,
                "host {host} has more than {} workers",
                topology.slots_per_server
            );
            slots.push(host as u32 * topology.slots_per_server + *u);
            *u += 1;
        }
        total += count;
        pools.push(PoolPlacement {
            app_id: u32::try_from(app_id).context("app_id out of range")?,
            slots,
        });
    }
    if let Some(n) = tenants.get("worker_count").and_then(PyValue::as_int) {
        ensure!(
            n == total,
            "dataset says worker_count {n} but its maps hold {total} workers"
        );
    }
    Ok(pools)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Topology {
        Topology {
            pods: 4,
            servers_per_rack: 24,
            slots_per_server: 32,
        }
    }

    #[test]
    fn random_sizes_respect_bounds_and_mean() {
        let sizes = RandomPools {
            count: 20_000,
            ..Default::default()
        }
        .sizes(3);
        assert!(sizes.iter().all(|&s| (50..=20_000).contains(&s)));
        let mean = sizes.iter().map(|&s| s as f64).sum::<f64>() / sizes.len() as f64;
        assert!((mean - 685.0).abs() < 15.0, "mean {mean}");
    }

    #[test]
    fn random_placement_never_shares_a_slot() {
        let pools = place_random(&small(), &[100, 2000, 1], 9).unwrap();
        let mut all: Vec<u32> = pools.iter().flat_map(|p| p.slots.iter().copied()).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert!(place_random(&small(), &[small().slots() as u32 + 1], 9).is_err());
    }

    #[test]
    fn reads_the_public_dataset_format_from_the_last_line() {
        let log = "some log line\n{'tenants': {'worker_count': 3, 'maps': [{'app_id': 5, 'worker_count': 2, 'worker_to_host_map': [0, 0]}, {'app_id': 6, 'worker_count': 1, 'worker_to_host_map': [25]}]}}\n";
        let pools = read_dataset(log, &small()).unwrap();
        assert_eq!(
            pools,
            vec![
                PoolPlacement {
                    app_id: 5,
                    slots: vec![0, 1]
                },
                PoolPlacement {
                    app_id: 6,
                    slots: vec![25 * 32]
                }
            ]
        );
    }

    #[test]
    fn dataset_errors_name_the_offending_map() {
        let bad_count = "{'tenants': {'worker_count': 2, 'maps': [{'app_id': 1, 'worker_count': 2, 'worker_to_host_map': [0]}]}}";
        assert!(
            read_dataset(bad_count, &small())
                .unwrap_err()
                .to_string()
                .contains("maps[0]")
        );
        let bad_host = "{'tenants': {'worker_count': 1, 'maps': [{'app_id': 1, 'worker_count': 1, 'worker_to_host_map': [99999]}]}}";
        assert!(
            read_dataset(bad_host, &small())
                .unwrap_err()
                .to_string()
                .contains("host 99999")
        );
        let bad_total = "{'tenants': {'worker_count': 7, 'maps': [{'app_id': 1, 'worker_count': 1, 'worker_to_host_map': [3]}]}}";
        assert!(
            read_dataset(bad_total, &small())
                .unwrap_err()
                .to_string()
                .contains("worker_count 7")
        );
    }
}
