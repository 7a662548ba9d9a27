//! Multi-core nodes ([`crate::policy::Policy::node_queues`]): a pool's workers on one server are
//! the cores of one node, which queues the tasks it receives in one FCFS queue and starts each on
//! the first core to be free (Malcolm's intra-node scheduler, seed 004 §3.1 and §6.1). The cores
//! keep their task in service in their own [`crate::worker::Worker`]; the waiting tasks are here.

use crate::cluster::Cluster;
use crate::policy::Steal;
use crate::worker::Queued;
use std::collections::VecDeque;

pub(crate) struct Nodes {
    /// Per global worker: its node.
    pub of: Vec<u32>,
    /// Per node: its first global worker and its cores (consecutive workers).
    pub first: Vec<u32>,
    pub cores: Vec<u32>,
    /// Per node: the tasks waiting for a core, oldest first, each with its service time at
    /// speed 1 (a stolen task is served at its new node's speed).
    pub waiting: Vec<VecDeque<Queued>>,
    /// Steal requests on the wire, by the index their event carries; free indices.
    pub requests: Vec<Steal>,
    pub free_requests: Vec<u32>,
}

impl Nodes {
    pub fn new(cluster: &Cluster) -> Self {
        let mut of = vec![0; cluster.workers.len()];
        let (mut first, mut cores) = (Vec::new(), Vec::new());
        for (p, pool) in cluster.pools.iter().enumerate() {
            for (f, c) in cluster.pool_nodes(p as u32) {
                let global = pool.worker_base + f;
                of[global as usize..(global + c) as usize].fill(first.len() as u32);
                first.push(global);
                cores.push(c);
            }
        }
        Self {
            of,
            waiting: vec![VecDeque::new(); first.len()],
            first,
            cores,
            requests: Vec::new(),
            free_requests: Vec::new(),
        }
    }

    /// The global workers of node `n`.
    pub fn cores_of(&self, n: u32) -> std::ops::Range<u32> {
        let first = self.first[n as usize];
        first..first + self.cores[n as usize]
    }

    /// Keeps a steal request for its event; its index.
    pub fn send(&mut self, s: Steal) -> u32 {
        match self.free_requests.pop() {
            Some(i) => {
                self.requests[i as usize] = s;
                i
            }
            None => {
                self.requests.push(s);
                self.requests.len() as u32 - 1
            }
        }
    }

    /// The request of index `i`, which arrived.
    pub fn arrived(&mut self, i: u32) -> Steal {
        self.free_requests.push(i);
        self.requests[i as usize]
    }
}
