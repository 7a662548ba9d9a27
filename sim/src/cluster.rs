//! Pools as the schedulers see them: workers grouped by rack, racks grouped under spines.
//!
//! Every pool has one leaf scheduler in each rack where it has workers, and its racks are divided
//! into groups of consecutive pods, each under one spine scheduler (§3.1: the controller "divides
//! leaf schedulers into disjoint groups, where each group is assigned a spine scheduler"). The
//! paper aligns the groups with pods; a pool with few workers per pod then splits into groups too
//! small to balance (`docs/algorithm.md`, decision 20), so pods are merged, in order, until each
//! group holds at least `group_workers` of the pool's workers (0: one group per pod). A group's
//! spine runs in the pod holding most of its workers. Schedulers address their nodes by
//! pool-local indices (worker `0..n`, rack slot `0..racks`, group slot `0..groups`), which keeps
//! every policy's tables dense.

use crate::placement::PoolPlacement;
use crate::topology::Topology;

/// A rack holding some of a pool's workers; its workers are `first_worker..first_worker + workers`.
#[derive(Clone, Debug)]
pub struct PoolRack {
    pub rack: u32,
    /// The scheduler group the rack belongs to.
    pub group_slot: u32,
    pub first_worker: u32,
    pub workers: u32,
}

/// Consecutive pods holding some of a pool's workers, under one spine scheduler; its racks are
/// `first_rack..first_rack + racks`, those of the spine's own pod `home_first..home_first +
/// home_racks` (one hop from the spine; the others are three).
#[derive(Clone, Debug)]
pub struct SpineGroup {
    /// The pod whose aggregation switch hosts the group's spine scheduler.
    pub pod: u32,
    /// That aggregation switch.
    pub spine_switch: u32,
    pub first_rack: u32,
    pub racks: u32,
    pub workers: u32,
    pub home_first: u32,
    pub home_racks: u32,
}

#[derive(Clone, Debug)]
pub struct Pool {
    pub app_id: u32,
    /// Global index of the pool's local worker 0; its workers are contiguous from there.
    pub worker_base: u32,
    pub racks: Vec<PoolRack>,
    pub groups: Vec<SpineGroup>,
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
    /// The speed of each server position in a rack (a worker there serves a task in its
    /// service time divided by it); empty when every server has speed 1.
    pub server_speeds: Vec<f64>,
    /// The workload's task types ([`crate::policy::TaskHeader::kind`]): each one's probability
    /// and mean service time in ns at speed 1 ([`crate::workload::ServiceTime::kinds`]), for
    /// policies an operator would configure by them (Rain's slices). One type of mean 0 until
    /// the engine sets them.
    pub task_kinds: Vec<(f64, f64)>,
}

impl Cluster {
    /// Pool `p`'s nodes: its workers on one server, the cores of one multi-core node
    /// ([`crate::policy::Policy::node_queues`]), as `(first pool-local worker, cores)` in worker
    /// order. A pool's workers are sorted by slot, so those of a server are consecutive.
    pub fn pool_nodes(&self, p: u32) -> Vec<(u32, u32)> {
        let pool = &self.pools[p as usize];
        let mut nodes: Vec<(u32, u32)> = Vec::new();
        let mut server = u32::MAX;
        for w in 0..pool.workers() {
            let s = self.workers[(pool.worker_base + w) as usize].server;
            match nodes.last_mut() {
                Some(last) if s == server => last.1 += 1,
                _ => nodes.push((w, 1)),
            }
            server = s;
        }
        nodes
    }

    /// The speed of each of pool `p`'s workers, by pool-local index.
    pub fn pool_worker_speeds(&self, p: u32) -> Vec<f64> {
        let pool = &self.pools[p as usize];
        (0..pool.workers())
            .map(|w| self.worker_speed(pool.worker_base + w))
            .collect()
    }

    /// Every pool's [`Cluster::pool_worker_speeds`] if `weighted`, else none (empty): the table
    /// of the policies that weigh loads by speed.
    pub fn worker_speeds_if(&self, weighted: bool) -> Vec<Vec<f64>> {
        if weighted {
            (0..self.pools.len() as u32)
                .map(|p| self.pool_worker_speeds(p))
                .collect()
        } else {
            Vec::new()
        }
    }

    /// The speed of global worker `w` (1 on a homogeneous datacenter).
    pub fn worker_speed(&self, w: u32) -> f64 {
        if self.server_speeds.is_empty() {
            return 1.0;
        }
        let server = self.workers[w as usize].server;
        self.server_speeds[(server % self.topology.servers_per_rack) as usize]
    }

    /// The sum of the speeds of pool `p`'s workers: its capacity in workers of speed 1.
    pub fn pool_speed(&self, p: u32) -> f64 {
        let pool = &self.pools[p as usize];
        if self.server_speeds.is_empty() {
            return pool.workers() as f64;
        }
        (pool.worker_base..pool.worker_base + pool.workers())
            .map(|w| self.worker_speed(w))
            .sum()
    }

    /// The pools of `placements`, their racks in groups of at least `group_workers` workers
    /// (0: one group per pod).
    pub fn new(topology: Topology, placements: &[PoolPlacement], group_workers: u32) -> Self {
        let ids: Vec<u32> = (0..placements.len() as u32).collect();
        Self::subset(topology, placements, &ids, group_workers)
    }

    /// The cluster of the pools `ids` (indices into `placements`) only, numbered `0..ids.len()` in
    /// that order: a shard's view (see [`crate::shard`]). Each pool keeps the spine switches it
    /// has in the whole datacenter, which depend on its index in `placements`.
    pub fn subset(
        topology: Topology,
        placements: &[PoolPlacement],
        ids: &[u32],
        group_workers: u32,
    ) -> Self {
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
                groups: Vec::new(),
                worker_rack: Vec::with_capacity(slots.len()),
            };
            for (local, &slot) in slots.iter().enumerate() {
                let server = slot / topology.slots_per_server;
                let rack = topology.rack_of_server(server);
                let pod = topology.pod_of_rack(rack);
                if pool.groups.last().is_none_or(|d| d.pod != pod) {
                    let spine_switch = pod * topology.racks_per_pod()
                        + spine_within_pod(id, topology.racks_per_pod());
                    pool.groups.push(SpineGroup {
                        pod,
                        spine_switch,
                        first_rack: pool.racks.len() as u32,
                        racks: 0,
                        workers: 0,
                        home_first: pool.racks.len() as u32,
                        home_racks: 0,
                    });
                }
                if pool.racks.last().is_none_or(|r| r.rack != rack) {
                    let group_slot = pool.groups.len() as u32 - 1;
                    pool.racks.push(PoolRack {
                        rack,
                        group_slot,
                        first_worker: local as u32,
                        workers: 0,
                    });
                    let g = pool.groups.last_mut().expect("pushed above");
                    g.racks += 1;
                    g.home_racks += 1;
                }
                pool.racks.last_mut().expect("pushed above").workers += 1;
                pool.groups.last_mut().expect("pushed above").workers += 1;
                pool.worker_rack.push(pool.racks.len() as u32 - 1);
                workers.push(WorkerInfo {
                    pool: p as u32,
                    rack,
                    server,
                });
            }
            merge_groups(&mut pool, group_workers);
            pools.push(pool);
        }
        Self {
            topology,
            pools,
            workers,
            server_speeds: Vec::new(),
            task_kinds: vec![(1.0, 0.0)],
        }
    }

    pub fn total_workers(&self) -> u32 {
        self.workers.len() as u32
    }
}

/// Merges a pool's one-pod groups, in pod order, until each holds at least `group_workers`
/// workers (a short last group joins the one before it); each merged group keeps the spine of
/// its pod with the most workers (the first of equals), and the racks are renumbered into them.
fn merge_groups(pool: &mut Pool, group_workers: u32) {
    if group_workers == 0 {
        return;
    }
    let pods = std::mem::take(&mut pool.groups);
    let mut runs: Vec<Vec<SpineGroup>> = Vec::new();
    for d in pods {
        match runs.last_mut() {
            Some(run) if run.iter().map(|d| d.workers).sum::<u32>() < group_workers => run.push(d),
            _ => runs.push(vec![d]),
        }
    }
    if runs.len() > 1
        && runs
            .last()
            .is_some_and(|r| r.iter().map(|d| d.workers).sum::<u32>() < group_workers)
    {
        let last = runs.pop().expect("more than one");
        runs.last_mut().expect("more than one").extend(last);
    }
    for (slot, run) in runs.into_iter().enumerate() {
        let home = run
            .iter()
            .reduce(|a, b| if b.workers > a.workers { b } else { a })
            .expect("a run has a pod")
            .clone();
        let first = &run[0];
        let group = SpineGroup {
            pod: home.pod,
            spine_switch: home.spine_switch,
            first_rack: first.first_rack,
            racks: run.iter().map(|d| d.racks).sum(),
            workers: run.iter().map(|d| d.workers).sum(),
            home_first: home.home_first,
            home_racks: home.home_racks,
        };
        for r in
            &mut pool.racks[group.first_rack as usize..(group.first_rack + group.racks) as usize]
        {
            r.group_slot = slot as u32;
        }
        pool.groups.push(group);
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
            0,
        );
        let pool = &cluster.pools[0];
        assert_eq!(pool.workers(), 4);
        assert_eq!(
            pool.racks
                .iter()
                .map(|r| (r.rack, r.workers, r.group_slot))
                .collect::<Vec<_>>(),
            vec![(0, 2, 0), (1, 1, 0), (2, 1, 1)]
        );
        assert_eq!(
            pool.groups
                .iter()
                .map(|d| (d.pod, d.racks, d.workers))
                .collect::<Vec<_>>(),
            vec![(0, 2, 3), (1, 1, 1)]
        );
        assert_eq!(pool.worker_rack, vec![0, 0, 1, 2]);
        assert!(pool.groups.iter().all(|d| d.spine_switch / 2 == d.pod));
    }

    /// Pods merge in order until a group holds `group_workers`; a short last group joins the one
    /// before; each group's spine is in its pod with the most workers, whose racks are its home.
    #[test]
    fn merges_pods_into_groups_of_at_least_the_workers_asked() {
        let topo = Topology {
            pods: 8,
            servers_per_rack: 2,
            slots_per_server: 2,
        };
        // 4 slots per rack, 4 racks (16 slots) per pod. Workers per pod: 1, 6, 2, 1, 5, 1.
        let per_pod = [1u32, 6, 2, 1, 5, 1];
        let slots: Vec<u32> = per_pod
            .iter()
            .enumerate()
            .flat_map(|(pod, &n)| (0..n).map(move |i| pod as u32 * 16 + i * 3))
            .collect();
        let groups = |w| {
            let c = Cluster::new(
                topo,
                &[PoolPlacement {
                    app_id: 0,
                    slots: slots.clone(),
                }],
                w,
            );
            let p = &c.pools[0];
            for (slot, g) in p.groups.iter().enumerate() {
                let racks = &p.racks[g.first_rack as usize..(g.first_rack + g.racks) as usize];
                assert!(racks.iter().all(|r| r.group_slot == slot as u32));
                let home = &p.racks[g.home_first as usize..(g.home_first + g.home_racks) as usize];
                assert!(home.iter().all(|r| topo.pod_of_rack(r.rack) == g.pod));
                assert_eq!(g.spine_switch / topo.racks_per_pod(), g.pod);
            }
            p.groups
                .iter()
                .map(|g| (g.pod, g.workers))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            groups(0),
            vec![(0, 1), (1, 6), (2, 2), (3, 1), (4, 5), (5, 1)]
        );
        assert_eq!(groups(3), vec![(1, 7), (2, 3), (4, 6)]);
        assert_eq!(groups(7), vec![(1, 7), (4, 9)]);
        assert_eq!(groups(100), vec![(1, 16)]);
    }
}
