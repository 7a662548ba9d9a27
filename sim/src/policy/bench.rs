//! A policy's leaf driven call by call, for the policies' unit tests: a small cluster whose
//! pool 0 has several workers in rack slot 0, and a [`Ctx`] at a chosen time for each call.

use super::{Ctx, Message, Release, Reply, Steal, TaskHeader};
use crate::config::{PoolSource, SimConfig};
use crate::engine::Engine;
use crate::rng::{SimRng, Stream, stream};
use crate::topology::Topology;

pub(crate) struct Bench {
    pub engine: Engine,
    pub rng: SimRng,
    /// The messages of the last call.
    pub outbox: Vec<Message>,
    /// Every release asked for since the bench started or the test cleared it.
    pub releases: Vec<Release>,
    /// Every steal asked for since the bench started or the test cleared it.
    pub steals: Vec<Steal>,
}

impl Bench {
    /// One pool of 8 workers on 2 racks of 4 workers, running `workload` (whose task types the
    /// cluster then lists).
    pub fn new(workload: &str) -> Self {
        Self::with_servers(workload, 1, 4)
    }

    /// One pool filling 2 racks of `servers` servers of `cores` workers each, running `workload`.
    pub fn with_servers(workload: &str, servers: u32, cores: u32) -> Self {
        let cfg = SimConfig {
            topology: Topology {
                pods: 2,
                servers_per_rack: servers,
                slots_per_server: cores,
            },
            pools: PoolSource::Sizes(vec![2 * servers * cores]),
            workload: workload.into(),
            ..SimConfig::default()
        };
        Self {
            engine: Engine::new(&cfg).unwrap(),
            rng: stream(1, Stream::Policy, 0),
            outbox: Vec::new(),
            releases: Vec::new(),
            steals: Vec::new(),
        }
    }

    /// Calls `f` with a context at time `now_us` (no failure known); the messages it sent are in
    /// `outbox`, its releases appended to `releases`.
    pub fn call<R>(&mut self, now_us: u64, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let cluster = self.engine.cluster();
        let dead = vec![false; cluster.workers.len()];
        let dead_racks = vec![false; cluster.topology.racks() as usize];
        let empty: Vec<Vec<bool>> = cluster
            .pools
            .iter()
            .map(|p| vec![false; p.racks.len()])
            .collect();
        self.outbox.clear();
        let mut ctx = Ctx {
            cluster,
            rng: &mut self.rng,
            now: now_us * 1000,
            dead_workers: &dead,
            dead_racks: &dead_racks,
            empty_racks: &empty,
            nothing_dead: true,
            outbox: &mut self.outbox,
            releases: &mut self.releases,
            steals: &mut self.steals,
        };
        f(&mut ctx)
    }

    /// The releases, as (pool, rack slot, queue, worker), for those from a queue's head in one
    /// pass.
    pub fn sent(&self) -> Vec<(u32, u32, u32, u32)> {
        self.releases
            .iter()
            .map(|r| {
                assert_eq!((r.index, r.passes), (0, 1), "{r:?}");
                (r.pool, r.rack, r.queue, r.worker)
            })
            .collect()
    }

    /// Rack slot 0 of pool 0: its first worker and worker count.
    pub fn rack0(&self) -> (u32, u32) {
        let r = &self.engine.cluster().pools[0].racks[0];
        (r.first_worker, r.workers)
    }
}

/// A task of pool 0 from a client (no spine's ID), of type `kind`.
pub(crate) fn task(kind: u8) -> TaskHeader {
    TaskHeader {
        pool: 0,
        spine: 0,
        hint: 0,
        tag: 0,
        kind,
        job_left: 0,
    }
}

/// Pool 0's worker `worker` answers a task that ran `service_us`, leaving its queue empty.
pub(crate) fn reply(worker: u32, service_us: u32) -> Reply {
    Reply {
        pool: 0,
        worker,
        qlen: 0,
        tag: 0,
        service_ns: service_us * 1000,
    }
}
