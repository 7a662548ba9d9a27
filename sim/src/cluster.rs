//! Pools as the schedulers see them: workers grouped by rack, racks grouped by pod.
//!
//! Horus aligns scheduler groups with pods (§3.1): every pool has one leaf scheduler in each rack
//! where it has workers and one spine scheduler in each pod where it has workers. Schedulers address
//! their nodes by pool-local indices (worker `0..n`, rack slot `0..racks`, pod slot `0..pods`),
//! which keeps every policy's tables dense.

use crate::placement::PoolPlacement;
use crate::topology::Topology;

/// A rack holding some of a pool's workers; its workers are `first_worker..first_worker + workers`.
#[derive(Clone, Debug)]
pub struct PoolRack {
    pub rack: u32,
    pub pod_slot: u32,
    pub first_worker: u32,
    pub workers: u32,
}

/// A pod holding some of a pool's workers; its racks are `first_rack..first_rack + racks`.
#[derive(Clone, Debug)]
pub struct PoolPod {
    pub pod: u32,
    /// The aggregation switch that hosts this pool's spine scheduler in the pod.
    pub spine_switch: u32,
    pub first_rack: u32,
    pub racks: u32,
    pub workers: u32,
}

#[derive(Clone, Debug)]
pub struct Pool {
    pub app_id: u32,
    /// Global index of the pool's local worker 0; its workers are contiguous from there.
    pub worker_base: u32,
    pub racks: Vec<PoolRack>,
    pub pods: Vec<PoolPod>,
    /// Rack slot of each local worker.
    pub worker_rack: Vec<u32>,
}

impl Pool {
    pub fn workers(&self) -> u32 {
        self.worker_rack.len() as u32
    }
}

/// Static facts about one worker.
#[derive(Clone, Copy, Debug)]
pub struct WorkerInfo {
    pub pool: u32,
    pub rack: u32,
    pub server: u32,
}

pub struct Cluster {
    pub topology: Topology,
    pub pools: Vec<Pool>,
    /// Indexed by global worker ID.
    pub workers: Vec<WorkerInfo>,
}

impl Cluster {
    pub fn new(topology: Topology, placements: &[PoolPlacement]) -> Self {
        let ids: Vec<u32> = (0..placements.len() as u32).collect();
        Self::subset(topology, placements, &ids)
    }

    /// The cluster of the pools `ids` (indices into `placements`) only, numbered `0..ids.len()` in
    /// that order: a shard's view (see [`crate::shard`]). Each pool keeps the spine switches it
    /// has in the whole datacenter, which depend on its index in `placements`.
    pub fn subset(topology: Topology, placements: &[PoolPlacement], ids: &[u32]) -> Self {
        let mut pools = Vec::with_capacity(ids.len());
        let mut workers = Vec::new();
        for (p, &id) in ids.iter().enumerate() {
            let placement = &placements[id as usize];
            let mut slots = placement.slots.clone();
            // Sorting by slot sorts by server, hence by rack and pod: groups become contiguous.
            slots.sort_unstable();
            let worker_base = workers.len() as u32;
            let mut pool = Pool {
                app_id: placement.app_id,
                worker_base,
                racks: Vec::new(),
                pods: Vec::new(),
                worker_rack: Vec::with_capacity(slots.len()),
            };
            for (local, &slot) in slots.iter().enumerate() {
                let server = slot / topology.slots_per_server;
                let rack = topology.rack_of_server(server);
                let pod = topology.pod_of_rack(rack);
                if pool.pods.last().is_none_or(|d| d.pod != pod) {
                    let spine_switch = pod * topology.racks_per_pod()
                        + spine_within_pod(id, topology.racks_per_pod());
                    pool.pods.push(PoolPod {
                        pod,
                        spine_switch,
                        first_rack: pool.racks.len() as u32,
                        racks: 0,
                        workers: 0,
                    });
                }
                if pool.racks.last().is_none_or(|r| r.rack != rack) {
                    let pod_slot = pool.pods.len() as u32 - 1;
                    pool.racks.push(PoolRack {
                        rack,
                        pod_slot,
                        first_worker: local as u32,
                        workers: 0,
                    });
                    pool.pods.last_mut().expect("pushed above").racks += 1;
                }
                pool.racks.last_mut().expect("pushed above").workers += 1;
                pool.pods.last_mut().expect("pushed above").workers += 1;
                pool.worker_rack.push(pool.racks.len() as u32 - 1);
                workers.push(WorkerInfo {
                    pool: p as u32,
                    rack,
                    server,
                });
            }
            pools.push(pool);
        }
        Self {
            topology,
            pools,
            workers,
        }
    }

    pub fn total_workers(&self) -> u32 {
        self.workers.len() as u32
    }
}

/// The controller spreads pools over a pod's aggregation switches so that no one switch hosts the
/// spine schedulers of every pool; a fixed multiplicative hash keeps the choice reproducible.
fn spine_within_pod(pool: u32, per_pod: u32) -> u32 {
    (pool.wrapping_mul(2_654_435_761) >> 7) % per_pod
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_workers_by_rack_and_racks_by_pod() {
        let topo = Topology {
            pods: 4,
            servers_per_rack: 2,
            slots_per_server: 2,
        };
        // 4 slots per rack, 2 racks per pod. Slots 0,1 (rack 0), 5 (rack 1), 9 (rack 2, pod 1).
        let cluster = Cluster::new(
            topo,
            &[PoolPlacement {
                app_id: 3,
                slots: vec![9, 0, 5, 1],
            }],
        );
        let pool = &cluster.pools[0];
        assert_eq!(pool.workers(), 4);
        assert_eq!(
            pool.racks
                .iter()
                .map(|r| (r.rack, r.workers, r.pod_slot))
                .collect::<Vec<_>>(),
            vec![(0, 2, 0), (1, 1, 0), (2, 1, 1)]
        );
        assert_eq!(
            pool.pods
                .iter()
                .map(|d| (d.pod, d.racks, d.workers))
                .collect::<Vec<_>>(),
            vec![(0, 2, 3), (1, 1, 1)]
        );
        assert_eq!(pool.worker_rack, vec![0, 0, 1, 2]);
        assert!(pool.pods.iter().all(|d| d.spine_switch / 2 == d.pod));
    }
}
