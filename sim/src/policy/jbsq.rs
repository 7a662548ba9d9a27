//! Join the bounded shortest queue at the leaf, JBSQ(K): the in-switch queue of Draconis (K = 1,
//! idle workers pull), of R2P2's JBSQ(n) and of Rain's token queues (its section 3; here without
//! Rain's slices and adaptive K), held by a rack's leaf.
//!
//! A worker has at most `k` outstanding tasks (sent to it and not yet answered, which the leaf
//! counts exactly: it sends them and sees the replies). A task reaching the leaf goes to the
//! worker of the rack with the fewest outstanding, if that is under `k`; otherwise it waits in
//! the leaf's queue of its pool ([`Decision::hold`]), in arrival order. Each reply frees a place,
//! and the leaf sends the oldest waiting task there ([`Ctx::release`]). A rack's queue is what a
//! switch's buffer must hold: the run reports its 99.9th percentile (`Summary::leaf_queue`).
//!
//! Spines:
//! - `draconis`: each task to a uniformly random rack of the pool (a switch queue per rack,
//!   K = 1).
//! - `jbsq`: power-of-`samples` over the racks of the spine's pod by rack load, (outstanding +
//!   waiting) / workers, which each leaf reports after every reply in 16.16, as `rs-h` does.
//!
//! A task or a reply lost in the network keeps its place taken for good, as in a switch that
//! counts outstanding tasks without timeouts; the tests run without loss.

use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader};
use crate::cluster::Cluster;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpineMode {
    UniformRack,
    RackLoads,
}

const LOAD_UPDATE: u8 = 0;
const FIXED_ONE: f64 = 65_536.0;

/// Spines that choose among the racks of their pod by the load each leaf reports, power of
/// `samples` (`jbsq`, `rain`): a leaf reports its rack's load after every reply, in 16.16, as
/// `rs-h`'s leaves do.
pub(super) struct ReportedLoads {
    samples: u32,
    /// Per pool, per rack slot: the spine's view of the rack's load, in 16.16.
    loads: Vec<Vec<u32>>,
}

impl ReportedLoads {
    /// The message kinds of the leaves' reports.
    pub(super) const MESSAGE_KINDS: &'static [&'static str] = &["load-update"];

    pub(super) fn new(cluster: &Cluster, samples: u32) -> Self {
        Self {
            samples: samples.max(1),
            loads: cluster
                .pools
                .iter()
                .map(|p| vec![0; p.racks.len()])
                .collect(),
        }
    }

    /// The rack of the task's spine's pod with the least reported load of `samples` drawn.
    pub(super) fn pick(&self, ctx: &mut Ctx, task: &TaskHeader) -> u32 {
        let p = task.pool;
        let pod = &ctx.cluster.pools[p as usize].groups[task.spine as usize];
        let (first, count) = (pod.first_rack, pod.racks);
        let loads = &self.loads[p as usize];
        let mut best = ctx.random_rack(p, first, count);
        for _ in 1..self.samples {
            let other = ctx.random_rack(p, first, count);
            if loads[other as usize] < loads[best as usize] {
                best = other;
            }
        }
        best
    }

    /// The leaf of pool `pool`'s rack slot `rack` reports `load` (tasks per worker).
    pub(super) fn report(ctx: &mut Ctx, pool: u32, rack: u32, load: f64) {
        let group_slot = ctx.cluster.pools[pool as usize].racks[rack as usize].group_slot;
        ctx.send(Message {
            pool,
            from: Node::Leaf(rack),
            to: Node::Spine(group_slot),
            kind: LOAD_UPDATE,
            value: rack,
            value2: (load * FIXED_ONE).round().min(u32::MAX as f64) as u32,
        });
    }

    pub(super) fn on_message(&mut self, msg: Message) {
        debug_assert_eq!(msg.kind, LOAD_UPDATE);
        self.loads[msg.pool as usize][msg.value as usize] = msg.value2;
    }

    /// A restarted spine has forgotten its racks' loads.
    pub(super) fn on_failure_notice(&mut self, ctx: &Ctx, notice: FailureNotice) {
        if let FailureNotice::SpineRestarted { pool, pod } = notice {
            let d = &ctx.cluster.pools[pool as usize].groups[pod as usize];
            for r in d.first_rack..d.first_rack + d.racks {
                self.loads[pool as usize][r as usize] = 0;
            }
        }
    }
}

pub struct Jbsq {
    bound: Bound,
    /// The spines' view of the racks (`None`: each task to a uniformly random rack).
    spines: Option<ReportedLoads>,
    /// Per pool, per worker: tasks sent and not yet answered.
    outstanding: Vec<Vec<u32>>,
    /// Per pool, per rack slot: tasks waiting in the leaf's queue.
    waiting: Vec<Vec<u32>>,
    /// Per pool, per rack slot: outstanding plus waiting.
    rack_load: Vec<Vec<u64>>,
    /// Tasks that waited at a leaf.
    held: u64,
}

impl Jbsq {
    pub fn new(cluster: &Cluster, k: u32, weighted: bool, samples: u32, mode: SpineMode) -> Self {
        let per_rack = |v| {
            cluster
                .pools
                .iter()
                .map(|p| vec![v; p.racks.len()])
                .collect::<Vec<_>>()
        };
        Self {
            bound: Bound::new(cluster, k, weighted),
            spines: (mode == SpineMode::RackLoads).then(|| ReportedLoads::new(cluster, samples)),
            outstanding: cluster
                .pools
                .iter()
                .map(|p| vec![0; p.workers() as usize])
                .collect(),
            waiting: per_rack(0),
            rack_load: cluster
                .pools
                .iter()
                .map(|p| vec![0; p.racks.len()])
                .collect(),
            held: 0,
        }
    }
}

/// How a JBSQ leaf ranks and bounds its workers: by outstanding tasks, at most `k` each; or,
/// weighted by speed (`weighted` = 1, for heterogeneous racks), by the time a new task would wait
/// and run, (outstanding + 1) / speed, at most `round(k · speed)` each (at least 1).
pub(super) struct Bound {
    k: u32,
    /// Per pool, per worker: its speed; empty when unweighted.
    speeds: Vec<Vec<f64>>,
}

impl Bound {
    pub(super) fn new(cluster: &Cluster, k: u32, weighted: bool) -> Self {
        Self {
            k: k.max(1),
            speeds: cluster.worker_speeds_if(weighted),
        }
    }

    /// The most tasks pool `pool`'s worker `w` may have outstanding.
    pub(super) fn limit(&self, pool: u32, w: u32) -> u32 {
        match self.speeds.get(pool as usize) {
            Some(speeds) => ((f64::from(self.k) * speeds[w as usize]).round() as u32).max(1),
            None => self.k,
        }
    }

    /// The first-ranked worker of `first..first + count` among those usable (for the controller
    /// and for `usable`) and under their bound, the first of the best looking from a random one
    /// on (as a priority encoder from a random offset would: every tied worker can win, a worker
    /// after a run of busier ones more often): `Ok`; if every usable one is at its bound, the first-ranked of them: `Err`;
    /// `None` if none is usable.
    pub(super) fn pick(
        &self,
        ctx: &mut Ctx,
        pool: u32,
        first: u32,
        count: u32,
        outstanding: &[u32],
        usable: impl Fn(u32) -> bool,
    ) -> Option<Result<u32, u32>> {
        let start = ctx.random_worker(pool, first, count) - first;
        let order = (0..count).map(|i| first + (start + i) % count);
        let ctx = &*ctx;
        let candidates = order.filter(|&w| usable(w) && ctx.worker_usable(pool, w));
        let best = match self.speeds.get(pool as usize) {
            None => candidates.min_by_key(|&w| outstanding[w as usize]),
            Some(speeds) => {
                let key = |w: u32| {
                    let under = outstanding[w as usize] < self.limit(pool, w);
                    let time = f64::from(outstanding[w as usize] + 1) / speeds[w as usize];
                    (!under, time)
                };
                candidates.min_by(|&a, &b| {
                    let (ka, kb) = (key(a), key(b));
                    ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
                })
            }
        }?;
        Some(if outstanding[best as usize] < self.limit(pool, best) {
            Ok(best)
        } else {
            Err(best)
        })
    }
}

impl Policy for Jbsq {
    fn message_kinds(&self) -> &'static [&'static str] {
        match self.spines {
            None => &[],
            Some(_) => ReportedLoads::MESSAGE_KINDS,
        }
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        match &self.spines {
            Some(spines) => Decision::to(spines.pick(ctx, task)),
            None => {
                let racks = ctx.cluster.pools[task.pool as usize].racks.len() as u32;
                Decision::to(ctx.random_rack(task.pool, 0, racks))
            }
        }
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let r = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (r.first_worker, r.workers);
        self.rack_load[p as usize][rack as usize] += 1;
        let outstanding = &self.outstanding[p as usize];
        match self.bound.pick(ctx, p, first, count, outstanding, |_| true) {
            Some(Ok(w)) => {
                self.outstanding[p as usize][w as usize] += 1;
                Decision::to(w)
            }
            Some(Err(_)) => {
                self.waiting[p as usize][rack as usize] += 1;
                self.held += 1;
                Decision::hold()
            }
            // Every worker of the pool here is gone: the task is lost with them (the spines stop
            // choosing this rack once the controller knows).
            None => {
                self.rack_load[p as usize][rack as usize] -= 1;
                Decision::to(first)
            }
        }
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let (p, w) = (reply.pool as usize, reply.worker as usize);
        let left = &mut self.outstanding[p][w];
        *left = left.saturating_sub(1);
        let load = &mut self.rack_load[p][rack as usize];
        *load = load.saturating_sub(1);
        let waiting = &mut self.waiting[p][rack as usize];
        if *waiting > 0 && ctx.worker_usable(reply.pool, reply.worker) {
            *waiting -= 1;
            self.outstanding[p][w] += 1;
            ctx.release(reply.pool, rack, reply.worker);
        }
        if self.spines.is_some() {
            let workers = ctx.cluster.pools[p].racks[rack as usize].workers as f64;
            let avg = self.rack_load[p][rack as usize] as f64 / workers;
            ReportedLoads::report(ctx, reply.pool, rack, avg);
        }
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        if let Some(spines) = &mut self.spines {
            spines.on_message(msg);
        }
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        if let FailureNotice::Rack { pool, rack } = notice {
            // A failed leaf lost its queue with it (the engine counted those); a live leaf with
            // no worker left sends what it holds to a dead one, where it is lost.
            let r = &ctx.cluster.pools[pool as usize].racks[rack as usize];
            let (first, physical) = (r.first_worker, r.rack);
            let waiting = std::mem::take(&mut self.waiting[pool as usize][rack as usize]);
            let load = &mut self.rack_load[pool as usize][rack as usize];
            *load = load.saturating_sub(u64::from(waiting));
            if !ctx.dead_racks[physical as usize] {
                for _ in 0..waiting {
                    ctx.release(pool, rack, first);
                }
            }
        }
        if let Some(spines) = &mut self.spines {
            spines.on_failure_notice(ctx, notice);
        }
    }

    fn counters(&self) -> Vec<(String, u64)> {
        vec![("held".into(), self.held)]
    }
}
