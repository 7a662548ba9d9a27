//! Horus between racks, and at the leaf the model's JBSQ leaf
//! ([`horus_model::sched::jbsq::JbsqLeaf`]): the leaf that holds tasks, which this project's FPGA
//! leaf can run where a Tofino cannot (a Tofino has no queue it can hold a task in and release on
//! a reply). The simulator runs the model's passes, so its decisions are the hardware's.
//!
//! The spines are Horus's, run by the `horus-model` schedulers exactly as in the `horus` policy
//! ([`Horus`]). Each rack slot of a pool has its own JBSQ leaf holding that one pool (its nodes
//! the rack's workers, by their index in the rack): a worker has at most `k` tasks outstanding,
//! the task goes to a worker using the least of its bound, else waits in the pool's region of the
//! task buffer in arrival order, and a reply's pass releases the oldest held task to the replying
//! worker ([`Decision::hold`], [`Ctx::release`]). Towards its spine the leaf speaks Horus's
//! protocol with Horus's rules (`docs/algorithm.md`, "The leaf that holds tasks"): idle is
//! "nothing outstanding" (or, with `places`, "a free place"; with `room`, the rack's queue:
//! linked until it holds `room` tasks, again once it holds none, decision 32), the link may be
//! held `hold_us` after an idle message, and the rack average counts the held tasks.
//!
//! The task buffer's 4,096 slots (the preset) are shared equally among the pools with workers in
//! the physical rack; a task that finds its pool's region full goes over a worker's bound to the
//! pass's random sample (the model's [`Fallback::Random`]), counted.
//!
//! Failures: a worker the controller reports dead is removed from its leaf (its outstanding tasks
//! are lost with it, the engine counts them; its places go stale); the held tasks stay for the
//! other workers. A rack the controller reports empty: a live leaf sends what it still holds to a
//! dead worker (the engine counts them lost, `leaf.held_lost`); a failed leaf lost its buffer with
//! it. A task or a reply lost in the network keeps its place taken, as in `jbsq`.

use super::horus::{Horus, HorusParams, IDLE_ADD, IDLE_REMOVE, LOAD_UPDATE, MESSAGE_KINDS};
use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader, jbsq};
use crate::cluster::Cluster;
use crate::rng::SimRng;
use horus_model::sched::counters::Signal;
use horus_model::sched::jbsq::{
    Advertise, Fallback, JbsqCounters, JbsqLeaf, JbsqPool, JbsqResult, JbsqSizes, LEVELS, Placement,
};
use horus_model::sched::{Params, SpineRef};
use horus_model::wire::{HorusHeader, PacketType};
use rand::RngCore;

/// The policy's name.
pub const NAME: &str = "horus-jbsq";

/// A task's `src_id` when it does not come from the pool's spine.
const CLIENT: u16 = u16::MAX;

/// The leaves' rule: the bound `k` (with `weighted`, each worker's `round(k · speed)`), what the
/// link rule counts and how long it holds the link after an idle message.
#[derive(Clone, Copy, Debug)]
pub struct LeafRule {
    pub k: u32,
    pub weighted: bool,
    pub advertise: Advertise,
    pub hold_us: u16,
}

impl LeafRule {
    /// `k` unweighted, idle workers advertised, no hold.
    pub fn k(k: u32) -> LeafRule {
        LeafRule {
            k,
            weighted: false,
            advertise: Advertise::Idle,
            hold_us: 0,
        }
    }
}

/// One pool's JBSQ leaf in one rack slot.
struct Leaf {
    model: JbsqLeaf,
    spine: SpineRef,
}

pub struct HorusJbsq {
    /// The spines (its leaves hold only the configuration: which spine and node ID a rack has).
    horus: Horus,
    /// Per pool, per rack slot.
    leaves: Vec<Vec<Leaf>>,
    /// Per pool, per worker: reported dead by the controller.
    gone: Vec<Vec<bool>>,
    held_lost: u64,
    /// The idleAdds the leaves' configuration decided, which the spines were preloaded with
    /// instead of sent: left out of `leaf.sent_idle_add`.
    preloaded_idle_adds: u64,
}

impl HorusJbsq {
    /// `queue_len`: every global worker's initial queue (a prefilled start), which the leaves
    /// take as outstanding tasks, as [`Horus`] preloads its leaves. `k`: the pool's bound, or
    /// with `weighted` each worker's `round(k · speed)` (at most 255).
    pub fn new(
        cluster: &Cluster,
        queue_len: &[u32],
        rng: &mut SimRng,
        rule: LeafRule,
        params: HorusParams,
    ) -> Self {
        let LeafRule { k, weighted, .. } = rule;
        let horus = Horus::new(cluster, queue_len, rng, params);
        let params = horus.params();
        let outstanding = super::initial_queues(cluster, queue_len);
        let bound = jbsq::Bound::new(cluster, k, weighted);
        let mut pools_in_rack = vec![0u32; cluster.topology.racks() as usize];
        for pool in &cluster.pools {
            for r in &pool.racks {
                pools_in_rack[r.rack as usize] += 1;
            }
        }
        let leaves: Vec<Vec<Leaf>> = cluster
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                pool.racks
                    .iter()
                    .enumerate()
                    .map(|(r, rack)| {
                        let spine = horus.leaf_spine(p as u32, r as u32);
                        let slots = (JbsqSizes::DEFAULT.buffer_slots
                            / pools_in_rack[rack.rack as usize].max(1))
                        .max(1);
                        let k_of =
                            |i: u32| bound.limit(p as u32, rack.first_worker + i).min(255) as u8;
                        let k_max = (0..rack.workers).map(k_of).max().unwrap_or(1);
                        let mut model =
                            leaf_model(rack.workers, k_max, slots, &rule, params, spine, rng);
                        for i in 0..rack.workers {
                            let w = rack.first_worker + i;
                            let k = k_of(i);
                            let tasks = outstanding[p][w as usize].min(u32::from(u16::MAX));
                            // The spine was told this link when the run started (`Horus::new`
                            // preloads its leaves the same way): the add's message is not sent.
                            model
                                .add_node(0, i as u16, Some(k), tasks as u16)
                                .expect("the leaf's pool has a slot for every worker");
                        }
                        Leaf { model, spine }
                    })
                    .collect()
            })
            .collect();
        let preloaded_idle_adds = leaves
            .iter()
            .flatten()
            .map(|l: &Leaf| l.model.counters().sent_idle_add)
            .sum();
        Self {
            gone: outstanding.iter().map(|w| vec![false; w.len()]).collect(),
            horus,
            leaves,
            held_lost: 0,
            preloaded_idle_adds,
        }
    }

    /// Sends the message a pass of pool `p`'s leaf in rack slot `r` decided, if any.
    fn signal(ctx: &mut Ctx, p: u32, r: u32, res: &JbsqResult) {
        let Some((signal, h)) = res.signal else {
            return;
        };
        let kind = match signal {
            Signal::IdleAdd => IDLE_ADD,
            Signal::IdleRemove => IDLE_REMOVE,
            Signal::LoadUpdate => LOAD_UPDATE,
        };
        ctx.send(Message {
            pool: p,
            from: Node::Leaf(r),
            to: Node::Spine(ctx.cluster.pools[p as usize].racks[r as usize].group_slot),
            kind,
            value: (u32::from(h.qlen) << 16) | u32::from(h.seq_num),
            value2: u32::from(h.src_id),
        });
    }

    /// The controller reports pool-local `worker` of pool `p` dead.
    fn remove_worker(&mut self, ctx: &mut Ctx, p: u32, worker: u32) {
        let (pi, w) = (p as usize, worker as usize);
        if self.gone[pi][w] {
            return;
        }
        self.gone[pi][w] = true;
        let r = ctx.cluster.pools[pi].worker_rack[w];
        let first = ctx.cluster.pools[pi].racks[r as usize].first_worker;
        self.leaves[pi][r as usize]
            .model
            .remove_node(0, (worker - first) as u16)
            .expect("a live worker is a member of its leaf's pool");
    }
}

/// A leaf of one pool (pool 0 of its tables) of `workers` nodes of bounds up to `k_max`, `slots`
/// buffer slots.
fn leaf_model(
    workers: u32,
    k_max: u8,
    slots: u32,
    rule: &LeafRule,
    params: Params,
    spine: SpineRef,
    rng: &mut SimRng,
) -> JbsqLeaf {
    let workers = workers as u16;
    // A worker has at most `ceil(k_max / LEVELS)` places in one level.
    let ring_slots = workers * u16::from(k_max).div_ceil(LEVELS as u16);
    let sizes = JbsqSizes {
        pools: 1,
        nodes: workers,
        buffer_slots: slots,
        ring_entries: LEVELS as u32 * u32::from(ring_slots),
        slot_bytes: JbsqSizes::DEFAULT.slot_bytes,
        // The simulator's tasks are one packet each: no continuation looks an entry up.
        conn_table: 1,
    };
    let mut model = JbsqLeaf::new(sizes, rng.next_u64());
    let cfg = JbsqPool {
        base: 0,
        capacity: workers,
        k: 1,
        ring_base: 0,
        ring_slots,
        queue_base: 0,
        queue_slots: slots,
        fallback: Fallback::Random,
        advertise: rule.advertise,
        hold_us: rule.hold_us,
        params,
        spine: Some(spine),
    };
    model
        .configure_pool(0, cfg)
        .expect("the leaf's pool fits its tables");
    model
}

fn header(pkt_type: PacketType, src_id: u16, qlen: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: 0,
        src_id,
        dst_id: 0,
        qlen,
        seq_num: 0,
    }
}

/// A task's frame: the public testbed's task payload behind the headers (bytes).
const TASK_FRAME: u16 = 128;

impl Policy for HorusJbsq {
    fn message_kinds(&self) -> &'static [&'static str] {
        MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        self.horus.on_task_at_spine(ctx, task)
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let first = ctx.cluster.pools[p as usize].racks[rack as usize].first_worker;
        let leaf = &mut self.leaves[p as usize][rack as usize];
        let src = if task.hint == u32::from(leaf.spine.id) {
            leaf.spine.id
        } else {
            CLIENT
        };
        let h = header(PacketType::NewTask, src, task.tag);
        // The worker gets no idle flag: the leaf counts its tasks.
        task.tag = 0;
        let now_us = (ctx.now / 1000) as u32;
        let mut res = leaf.model.packet(h, TASK_FRAME, now_us);
        let mut passes = 1;
        Self::signal(ctx, p, rack, &res);
        while let Some(rs) = res.resubmit {
            res = leaf.model.resubmit(rs);
            passes += 1;
            Self::signal(ctx, p, rack, &res);
        }
        match res.placement {
            Some(Placement::Token { node, .. } | Placement::Fallback { node }) => {
                Decision::after(first + u32::from(node), passes)
            }
            Some(Placement::Held { .. }) => Decision::hold(),
            // Every worker of the pool here is gone: the task is lost with them (the spine stops
            // sending here once the controller has removed the rack).
            Some(Placement::Dropped) | None => Decision::to(first),
        }
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let p = reply.pool;
        let first = ctx.cluster.pools[p as usize].racks[rack as usize].first_worker;
        let leaf = &mut self.leaves[p as usize][rack as usize];
        let h = header(PacketType::TaskDone, (reply.worker - first) as u16, 0);
        let now_us = (ctx.now / 1000) as u32;
        let mut res = leaf.model.packet(h, TASK_FRAME, now_us);
        loop {
            Self::signal(ctx, p, rack, &res);
            if let Some(t) = res.release {
                ctx.release(p, rack, first + u32::from(t.node));
            }
            match res.resubmit {
                Some(rs) => res = leaf.model.resubmit(rs),
                None => break,
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        self.horus.on_message(ctx, msg)
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        // The leaves are this policy's own: the Horus leaves only hold configuration.
        for (pool, worker, _live) in super::removed_workers(ctx, notice) {
            self.remove_worker(ctx, pool, worker);
        }
        if let FailureNotice::Rack { pool, rack } = notice {
            let r = &ctx.cluster.pools[pool as usize].racks[rack as usize];
            let (first, physical) = (r.first_worker, r.rack);
            let leaf = &self.leaves[pool as usize][rack as usize];
            let waiting = leaf.model.tables().queue_ctl[0].depth;
            // A failed leaf lost its buffer with it (the engine counted those); a live leaf with
            // no worker left sends what it holds to a dead one, where it is lost.
            if !ctx.dead_racks[physical as usize] {
                for _ in 0..waiting {
                    ctx.release(pool, rack, first);
                }
                self.held_lost += u64::from(waiting);
            }
        }
        if !matches!(notice, FailureNotice::Worker { .. }) {
            self.horus.on_failure_notice(ctx, notice);
        }
    }

    fn counters(&self) -> Vec<(String, u64)> {
        // The model's leaf counters, summed over the leaves (max_depth: the greatest), and the
        // spines' own.
        let width = JbsqCounters::default().named().len();
        let mut sums = vec![0u64; width];
        let mut names = vec![""; width];
        for leaf in self.leaves.iter().flatten() {
            for (i, (name, v)) in leaf.model.counters().named().into_iter().enumerate() {
                names[i] = name;
                sums[i] = if name == "max_depth" {
                    sums[i].max(v)
                } else {
                    sums[i] + v
                };
            }
        }
        for (name, sum) in names.iter().zip(&mut sums) {
            if *name == "sent_idle_add" {
                *sum -= self.preloaded_idle_adds;
            }
        }
        let names: Vec<String> = names.iter().map(|n| format!("leaf.{n}")).collect();
        let mut pairs: Vec<(&str, u64)> = names.iter().map(String::as_str).zip(sums).collect();
        pairs.push(("leaf.held_lost", self.held_lost));
        let mut counters = super::named_counters(&pairs);
        counters.extend(
            self.horus
                .counters()
                .into_iter()
                .filter(|(k, _)| k.starts_with("spine.")),
        );
        counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bench::{Bench, reply};
    use horus_model::fixed::{Load, RackAverage};

    fn policy(b: &mut Bench, k: u32) -> HorusJbsq {
        let cluster = b.engine.cluster();
        let queues = vec![0; cluster.workers.len()];
        HorusJbsq::new(
            cluster,
            &queues,
            &mut b.rng,
            LeafRule::k(k),
            HorusParams::default(),
        )
    }

    /// Calls `f` at `now_us`; returns what it returned and the messages it sent.
    fn call<R>(b: &mut Bench, now_us: u64, f: impl FnOnce(&mut Ctx) -> R) -> (R, Vec<(u8, Load)>) {
        let r = b.call(now_us, f);
        let sent = b
            .outbox
            .iter()
            .map(|m| {
                (
                    m.kind,
                    Load::from_wire((m.value >> 16) as u16, m.value as u16),
                )
            })
            .collect();
        (r, sent)
    }

    fn task(hint: u32, idle_flag: bool) -> TaskHeader {
        TaskHeader {
            pool: 0,
            spine: 0,
            hint,
            tag: u16::from(idle_flag),
            kind: 0,
            job_left: 0,
        }
    }

    /// A client's task (no spine ID): the spine has not counted it.
    const CLIENT: u32 = u16::MAX as u32;

    #[test]
    fn a_worker_gets_at_most_k_and_the_rest_wait_in_arrival_order_counted_in_the_report() {
        let mut b = Bench::new("exp");
        let mut p = policy(&mut b, 1);
        let n = b.rack0().1;
        assert!(n >= 2, "the bench's rack slot has {n} workers");
        let mut taken = Vec::new();
        for i in 0..n {
            let (d, sent) = call(&mut b, 10, |ctx| {
                p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, false))
            });
            assert!(!d.is_hold(), "task {i} held with idle workers");
            taken.push(d.node);
            // The last idle worker taken unlinks the rack; the average reaches 1.0 with it, but
            // one message a pass: the idle message has priority.
            let expect: Vec<(u8, Load)> = if i + 1 == n {
                vec![(IDLE_REMOVE, Load::ONE)]
            } else {
                vec![]
            };
            assert_eq!(sent, expect, "task {i}");
        }
        taken.sort();
        taken.dedup();
        assert_eq!(taken.len() as u32, n, "k = 1: each worker one task");
        // Every worker has k: the next two wait, and the load report counts them.
        let (d, sent) = call(&mut b, 11, |ctx| {
            p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, false))
        });
        assert!(d.is_hold());
        let avg = |tasks: u32| {
            RackAverage {
                unit: RackAverage::unit_for(n),
                tasks,
            }
            .load()
        };
        assert_eq!(sent, vec![(LOAD_UPDATE, avg(n + 1))]);
        let (d, _) = call(&mut b, 11, |ctx| {
            p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, false))
        });
        assert!(d.is_hold());
        assert_eq!(p.leaves[0][0].model.tables().queue_ctl[0].depth, 2);
        // A reply frees its worker's place: the oldest waiting task goes there, the worker stays
        // busy (no idle message).
        let w = taken[0];
        let (_, sent) = call(&mut b, 12, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert_eq!(b.sent(), vec![(0, 0, 0, w)]);
        assert!(sent.iter().all(|&(k, _)| k == LOAD_UPDATE), "{sent:?}");
        let (_, _) = call(&mut b, 13, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert_eq!(b.sent(), vec![(0, 0, 0, w), (0, 0, 0, w)]);
        assert_eq!(p.leaves[0][0].model.tables().queue_ctl[0].depth, 0);
        // Nothing waits: the next reply leaves its worker idle, and the rack links again.
        b.releases.clear();
        let (_, sent) = call(&mut b, 14, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert!(b.sent().is_empty());
        assert_eq!(sent.first().map(|s| s.0), Some(IDLE_ADD), "{sent:?}");
        let t = p.leaves[0][0].model.tables();
        assert_eq!(t.queue_ctl[0].ring_count[0], 1);
        assert_eq!(t.avg[0].avg.tasks, n - 1);
    }

    #[test]
    fn a_worker_that_started_over_its_bound_gets_the_held_task_its_reply_frees() {
        let mut b = Bench::new("exp");
        let (first, n) = b.rack0();
        let cluster = b.engine.cluster();
        let mut queues = vec![0; cluster.workers.len()];
        let base = cluster.pools[0].worker_base;
        for w in first..first + n {
            queues[(base + w) as usize] = 5;
        }
        let mut p = HorusJbsq::new(
            cluster,
            &queues,
            &mut b.rng,
            LeafRule::k(2),
            HorusParams::default(),
        );
        // Every worker holds 5 > k = 2: a task waits, and the first reply releases it to the
        // replying worker (decision 25: a release keeps the worker's count, over its bound or not).
        assert!(
            call(&mut b, 1, |ctx| p.on_task_at_leaf(
                ctx,
                0,
                &mut task(CLIENT, false)
            ))
            .0
            .is_hold()
        );
        call(&mut b, 2, |ctx| {
            p.on_reply_at_leaf(ctx, 0, reply(first, 100))
        });
        assert_eq!(b.sent(), [(0, 0, 0, first)]);
        assert_eq!(p.leaves[0][0].model.tables().outstanding[0].tasks, 5);
        // Replies down to 2 return no place (the worker is at its bound), the third one does:
        // the next task goes to that worker at once.
        for t in 0..4 {
            call(&mut b, 3 + t, |ctx| {
                p.on_reply_at_leaf(ctx, 0, reply(first, 100))
            });
        }
        let mut one_at_half = [0; LEVELS];
        one_at_half[LEVELS / 2] = 1;
        assert_eq!(
            p.leaves[0][0].model.tables().queue_ctl[0].ring_count,
            one_at_half
        );
        let d = call(&mut b, 9, |ctx| {
            p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, false))
        })
        .0;
        assert_eq!(d.node, first);
    }

    #[test]
    fn a_task_whose_idle_flag_disagrees_with_the_link_is_repaired_once_per_gap() {
        let mut b = Bench::new("exp");
        let mut p = policy(&mut b, 4);
        let spine = u32::from(p.leaves[0][0].spine.id);
        let gap = u64::from(HorusParams::default().repair_gap_us);
        let n = b.rack0().1;
        // Take every worker: the rack unlinks at time 0.
        for _ in 0..n {
            call(&mut b, 0, |ctx| {
                p.on_task_at_leaf(ctx, 0, &mut task(spine, false))
            });
        }
        assert!(!p.leaves[0][0].model.tables().link[0].linked);
        // The spine still takes the rack from its idle list (the idleRemove was lost): inside the
        // gap nothing, after it one idleRemove, then nothing until the gap passed again.
        let flagged = |b: &mut Bench, p: &mut HorusJbsq, t| {
            call(b, t, |ctx| {
                p.on_task_at_leaf(ctx, 0, &mut task(spine, true))
            })
            .1
        };
        assert_eq!(flagged(&mut b, &mut p, gap - 1), vec![]);
        let sent = flagged(&mut b, &mut p, gap);
        assert_eq!(
            sent.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![IDLE_REMOVE]
        );
        assert_eq!(flagged(&mut b, &mut p, gap + 1), vec![]);
        assert_eq!(p.leaves[0][0].model.counters().idle_repairs, 1);
        // A client's task (not from the spine) is never a repair.
        let sent = call(&mut b, 3 * gap, |ctx| {
            p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, true))
        })
        .1;
        assert!(sent.iter().all(|&(k, _)| k == LOAD_UPDATE), "{sent:?}");
        assert_eq!(p.leaves[0][0].model.counters().idle_repairs, 1);
    }
}
