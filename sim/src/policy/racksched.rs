//! RackSched and its datacenter extensions.
//!
//! RackSched (Zhu et al., OSDI 2020) schedules inside one rack with the power-of-d choices: sample
//! d workers, send the task to the one with the shorter queue. Its switch learns queue lengths only
//! from worker replies, which carry them (Horus Appendix C calls this "Pow-of-2 Delayed Updates").
//! Every variant below runs that policy at the leaf; they differ at the spine:
//!
//! - `rs`: one pool-wide table of worker queue lengths, replicated at the pool's spines, as the
//!   public Horus simulator's `pow_of_k`. Each reply is forwarded by its leaf to the spine of its
//!   pod, and that delivery updates the replicated table (replication beyond the first hop is free:
//!   an optimistic assumption in RS's favour). The spine picks the worker; the leaf forwards.
//! - `rs-lb`: a load balancer sends each task to a uniformly random rack of the pool, RackSched
//!   runs in the rack (Horus §2.1, §4.1).
//! - `rs-h`: RackSched at the spine over the racks of its pod, using the rack's average queue
//!   length that each leaf sends after every reply (Horus §4.1: "immediately after each task is
//!   done"), and RackSched at the leaf (Horus §4.1).
//! - `po2-du`: the same structure, but a leaf reports its average only when it moved by at least
//!   `threshold` since the last report, Horus' aggregated update rule (§3.4) without its idle
//!   lists or drift tracking: the "Pow-of-2 DU" ablation of Horus Appendix C.

use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader};
use crate::cluster::Cluster;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpineMode {
    PoolWide,
    UniformRack,
    RackLoads { threshold: f64 },
}

const LOAD_UPDATE: u8 = 0;
/// Rack averages travel in 16.16 fixed point, as in Horus A.2.
const FIXED_ONE: f64 = 65_536.0;

pub struct RackSched {
    samples: u32,
    mode: SpineMode,
    /// Per pool, per worker: the queue length of its last reply, as the leaf knows it.
    leaf_loads: Vec<Vec<u32>>,
    /// Per pool, per rack slot: sum of `leaf_loads` over the rack, and the average last reported.
    rack_sum: Vec<Vec<u64>>,
    rack_reported: Vec<Vec<f64>>,
    /// Per pool: the spine's view, per worker (`rs`) or per rack slot in 16.16 (`rs-h`, `po2-du`).
    spine_loads: Vec<Vec<u32>>,
}

impl RackSched {
    pub fn new(cluster: &Cluster, samples: u32, mode: SpineMode) -> Self {
        let per_worker = || {
            cluster
                .pools
                .iter()
                .map(|p| vec![0u32; p.workers() as usize])
                .collect::<Vec<_>>()
        };
        let spine_loads = match mode {
            SpineMode::PoolWide => per_worker(),
            SpineMode::UniformRack => Vec::new(),
            SpineMode::RackLoads { .. } => cluster
                .pools
                .iter()
                .map(|p| vec![0u32; p.racks.len()])
                .collect(),
        };
        Self {
            samples: samples.max(1),
            mode,
            leaf_loads: per_worker(),
            rack_sum: cluster
                .pools
                .iter()
                .map(|p| vec![0u64; p.racks.len()])
                .collect(),
            rack_reported: cluster
                .pools
                .iter()
                .map(|p| vec![0.0; p.racks.len()])
                .collect(),
            spine_loads,
        }
    }

    /// Power-of-d over `first..first + count` by `loads`, skipping unusable nodes where possible.
    fn power_of_d(
        &self,
        ctx: &mut Ctx,
        loads: &[u32],
        first: u32,
        count: u32,
        pick: impl Fn(&mut Ctx, u32, u32) -> u32,
    ) -> u32 {
        let mut best = pick(ctx, first, count);
        for _ in 1..self.samples {
            let other = pick(ctx, first, count);
            if loads[other as usize] < loads[best as usize] {
                best = other;
            }
        }
        best
    }
}

impl Policy for RackSched {
    fn message_kinds(&self) -> &'static [&'static str] {
        &["load-update"]
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let pool = &ctx.cluster.pools[p as usize];
        match self.mode {
            SpineMode::PoolWide => {
                let n = pool.workers();
                let worker =
                    self.power_of_d(ctx, &self.spine_loads[p as usize], 0, n, |c, f, n| {
                        c.random_worker(p, f, n)
                    });
                task.hint = worker;
                Decision::to(ctx.cluster.pools[p as usize].worker_rack[worker as usize])
            }
            SpineMode::UniformRack => {
                let racks = pool.racks.len() as u32;
                Decision::to(ctx.random_rack(p, 0, racks))
            }
            SpineMode::RackLoads { .. } => {
                let pod = &pool.groups[task.spine as usize];
                let (first, count) = (pod.first_rack, pod.racks);
                Decision::to(self.power_of_d(
                    ctx,
                    &self.spine_loads[p as usize],
                    first,
                    count,
                    |c, f, n| c.random_rack(p, f, n),
                ))
            }
        }
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        if self.mode == SpineMode::PoolWide {
            return Decision::to(task.hint);
        }
        let p = task.pool;
        let r = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (r.first_worker, r.workers);
        Decision::to(self.power_of_d(
            ctx,
            &self.leaf_loads[p as usize],
            first,
            count,
            |c, f, n| c.random_worker(p, f, n),
        ))
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let p = reply.pool as usize;
        let old = std::mem::replace(&mut self.leaf_loads[p][reply.worker as usize], reply.qlen);
        let sum = &mut self.rack_sum[p][rack as usize];
        *sum = *sum + reply.qlen as u64 - old as u64;
        let pool = &ctx.cluster.pools[p];
        let from = Node::Leaf(rack);
        let to = Node::Spine(pool.racks[rack as usize].group_slot);
        match self.mode {
            SpineMode::PoolWide => ctx.send(Message {
                pool: reply.pool,
                from,
                to,
                kind: LOAD_UPDATE,
                value: reply.worker,
                value2: reply.qlen,
            }),
            SpineMode::UniformRack => {}
            SpineMode::RackLoads { threshold } => {
                let avg = *sum as f64 / pool.racks[rack as usize].workers as f64;
                let reported = &mut self.rack_reported[p][rack as usize];
                // NaN marks "never reported to the current spine".
                if reported.is_nan() || (avg - *reported).abs() >= threshold {
                    *reported = avg;
                    ctx.send(Message {
                        pool: reply.pool,
                        from,
                        to,
                        kind: LOAD_UPDATE,
                        value: rack,
                        value2: (avg * FIXED_ONE).round() as u32,
                    });
                }
            }
        }
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        debug_assert_eq!(msg.kind, LOAD_UPDATE);
        self.spine_loads[msg.pool as usize][msg.value as usize] = msg.value2;
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        // A restarted spine has forgotten its racks' loads; make their leaves report again.
        if let (FailureNotice::SpineRestarted { pool, pod }, SpineMode::RackLoads { .. }) =
            (notice, self.mode)
        {
            let d = &ctx.cluster.pools[pool as usize].groups[pod as usize];
            for r in d.first_rack..d.first_rack + d.racks {
                self.spine_loads[pool as usize][r as usize] = 0;
                self.rack_reported[pool as usize][r as usize] = f64::NAN;
            }
        }
    }
}
