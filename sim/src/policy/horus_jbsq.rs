//! Horus between racks, a bounded in-rack queue at the leaf: a variant that none of the seed
//! papers has, and that this project's FPGA leaf could hold where a Tofino cannot (a Tofino has
//! no queue it can hold a task in and release on a reply).
//!
//! The spines are Horus's, run by the `horus-model` schedulers exactly as in the `horus` policy
//! ([`Horus`]): idle list of racks, two load lists, drift and resubmit. The leaf keeps JBSQ(k)
//! instead of Horus's worker lists: it counts each worker's outstanding tasks exactly (it sends
//! them and sees the replies), sends a task to a worker with the fewest, if under `k` (ties to any
//! of them, from a random start), and otherwise holds it in its queue of the pool, in arrival
//! order, until a reply frees a place ([`Decision::hold`], [`Ctx::release`]).
//!
//! Towards its spine the leaf speaks Horus's protocol with Horus's rules
//! (`docs/algorithm.md`, "Signals to the spine"), so the spine cannot tell it from a Horus leaf:
//!
//! - a worker is *idle* when it has no outstanding task; the link rule (`link_at`, `unlink_at`)
//!   runs on every task and on every reply that changes the idle count, and sends idleAdd /
//!   idleRemove;
//! - the repair of lost idle messages (§A.3): a task from the spine whose idle flag disagrees with
//!   the link re-sends the link's message, at most once per `repair_gap_us`;
//! - the rack average counts every task the leaf has taken and not seen answered, *held ones
//!   included*: the queue is load the rack carries, and a spine that did not see it would keep
//!   sending to a rack whose workers are all at `k`. The report rule is the model's
//!   (`report_delta`, the spine's own tasks left out, decision 19), on the model's fixed-point
//!   average ([`PoolAvg`]).
//!
//! At most one message per task or reply, as one pipeline pass sends at most one.
//!
//! Failures: a worker the controller reports dead takes its outstanding tasks with it (the
//! engine counts them lost) and leaves the average (rescaled to the workers left) and the idle
//! count; a rack the controller reports empty loses the tasks its leaf still holds (released to a
//! dead worker, so the engine counts them lost); the spines' reactions are Horus's. A task or a
//! reply lost in the network keeps its place taken, as in `jbsq`.
//!
//! If it pays, the hardware gets it as the model's does everything: in `horus-model` first,
//! then the pipeline (planned).

use super::horus::{Horus, HorusParams, IDLE_ADD, IDLE_REMOVE, LOAD_UPDATE, MESSAGE_KINDS};
use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader, jbsq};
use crate::cluster::Cluster;
use crate::rng::SimRng;
use horus_model::fixed::RackAverage;
use horus_model::sched::state::PoolAvg;
use horus_model::sched::{Params, SpineRef};

/// The policy's name.
pub const NAME: &str = "horus-jbsq";

/// A leaf's state for one pool.
#[derive(Clone, Copy, Debug)]
struct LeafPool {
    spine: SpineRef,
    /// Workers of the pool in the rack that the controller has not reported dead.
    workers: u32,
    /// Those of them with no outstanding task.
    idle: u32,
    /// Tasks in the leaf's queue.
    waiting: u32,
    /// The rack is in the spine's idle list, as far as the leaf told it.
    linked: bool,
    /// When the leaf last sent an idle message, in wrapping microseconds.
    signaled_us: u32,
    avg: PoolAvg,
}

/// What a task or reply did to a leaf pool, for the signal rules.
#[derive(Clone, Copy)]
enum Change {
    /// A task arrived: from the pool's spine, and with its idle flag, or not.
    Task { from_spine: bool, idle_flag: bool },
    /// A reply: whether it changed the idle count.
    Reply { idle_changed: bool },
    /// The controller removed a worker.
    Removed,
}

pub struct HorusJbsq {
    /// The spines (its leaves hold only the configuration: which spine and node ID a rack has).
    horus: Horus,
    params: Params,
    bound: jbsq::Bound,
    /// Per pool, per rack slot.
    leaves: Vec<Vec<LeafPool>>,
    /// Per pool, per worker: tasks sent and not yet answered.
    outstanding: Vec<Vec<u32>>,
    /// Per pool, per worker: reported dead by the controller.
    gone: Vec<Vec<bool>>,
    held: u64,
    idle_adds: u64,
    idle_removes: u64,
    load_updates: u64,
    idle_repairs: u64,
    held_lost: u64,
}

impl HorusJbsq {
    /// `queue_len`: every global worker's initial queue (a prefilled start), which the leaves
    /// take as outstanding tasks, as [`Horus`] preloads its leaves.
    pub fn new(
        cluster: &Cluster,
        queue_len: &[u32],
        rng: &mut SimRng,
        k: u32,
        weighted: bool,
        params: HorusParams,
    ) -> Self {
        let horus = Horus::new(cluster, queue_len, rng, params);
        let params = horus.params();
        let outstanding = super::initial_queues(cluster, queue_len);
        let leaves = cluster
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                pool.racks
                    .iter()
                    .enumerate()
                    .map(|(r, rack)| {
                        let first = rack.first_worker as usize;
                        let queues = &outstanding[p][first..first + rack.workers as usize];
                        let idle = queues.iter().filter(|&&q| q == 0).count() as u32;
                        let mut avg = PoolAvg {
                            avg: RackAverage::new(rack.workers),
                            ..PoolAvg::default()
                        };
                        avg.avg.tasks = queues.iter().sum();
                        // The spine was told this average and this link when the run started
                        // (`Horus::new` preloads its leaves the same way).
                        avg.reported = avg.avg.level();
                        LeafPool {
                            spine: horus.leaf_spine(p as u32, r as u32),
                            workers: rack.workers,
                            idle,
                            waiting: 0,
                            linked: idle >= u32::from(params.link_at),
                            signaled_us: 0,
                            avg,
                        }
                    })
                    .collect()
            })
            .collect();
        Self {
            gone: outstanding.iter().map(|w| vec![false; w.len()]).collect(),
            horus,
            params,
            bound: jbsq::Bound::new(cluster, k, weighted),
            leaves,
            outstanding,
            held: 0,
            idle_adds: 0,
            idle_removes: 0,
            load_updates: 0,
            idle_repairs: 0,
            held_lost: 0,
        }
    }

    /// The signal rules of a Horus leaf after `change` to pool `p`'s rack slot `r`: at most one
    /// message to the spine.
    fn signal(&mut self, ctx: &mut Ctx, p: u32, r: u32, change: Change) {
        let params = self.params;
        let lp = &mut self.leaves[p as usize][r as usize];
        let now_us = (ctx.now / 1000) as u32;
        let link_rule = match change {
            Change::Task { .. } | Change::Removed => true,
            Change::Reply { idle_changed } => idle_changed,
        };
        let mut kind = None;
        if link_rule {
            if !lp.linked && lp.idle >= u32::from(params.link_at) {
                lp.linked = true;
                kind = Some(IDLE_ADD);
            } else if lp.linked && lp.idle <= u32::from(params.unlink_at) {
                lp.linked = false;
                kind = Some(IDLE_REMOVE);
            } else if let Change::Task {
                from_spine: true,
                idle_flag,
            } = change
                && idle_flag != lp.linked
                && now_us.wrapping_sub(lp.signaled_us) >= u32::from(params.repair_gap_us)
            {
                kind = Some(if lp.linked { IDLE_ADD } else { IDLE_REMOVE });
                self.idle_repairs += 1;
            }
            if kind.is_some() && !matches!(change, Change::Removed) {
                lp.signaled_us = now_us;
            }
        }
        if kind.is_none() && lp.avg.moved() >= u64::from(params.report_delta.0) {
            lp.avg.reported = lp.avg.avg.level();
            lp.avg.spine_tasks = 0;
            kind = Some(LOAD_UPDATE);
        }
        let Some(kind) = kind else { return };
        match kind {
            IDLE_ADD => self.idle_adds += 1,
            IDLE_REMOVE => self.idle_removes += 1,
            _ => self.load_updates += 1,
        }
        let (qlen, seq) = lp.avg.avg.load().to_wire();
        ctx.send(Message {
            pool: p,
            from: Node::Leaf(r),
            to: Node::Spine(ctx.cluster.pools[p as usize].racks[r as usize].group_slot),
            kind,
            value: (u32::from(qlen) << 16) | u32::from(seq),
            value2: u32::from(lp.spine.node),
        });
    }

    /// The controller reports pool-local `worker` of pool `p` dead; a live leaf tells its spine
    /// what that changed (`signal`).
    fn remove_worker(&mut self, ctx: &mut Ctx, p: u32, worker: u32, signal: bool) {
        let (pi, w) = (p as usize, worker as usize);
        if self.gone[pi][w] {
            return;
        }
        self.gone[pi][w] = true;
        let r = ctx.cluster.pools[pi].worker_rack[w];
        let lost = std::mem::take(&mut self.outstanding[pi][w]);
        let lp = &mut self.leaves[pi][r as usize];
        lp.workers -= 1;
        if lost == 0 {
            lp.idle -= 1;
        }
        lp.avg.avg.rescale(RackAverage::unit_for(lp.workers), lost);
        lp.avg.spine_tasks = 0;
        if signal {
            self.signal(ctx, p, r, Change::Removed);
        }
    }
}

impl Policy for HorusJbsq {
    fn message_kinds(&self) -> &'static [&'static str] {
        MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        self.horus.on_task_at_spine(ctx, task)
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let r = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (r.first_worker, r.workers);
        let lp = &mut self.leaves[p as usize][rack as usize];
        let from_spine = task.hint == u32::from(lp.spine.id);
        let idle_flag = task.tag != 0;
        // The worker gets no idle flag: the leaf counts its tasks and needs no idle announcement.
        task.tag = 0;
        if lp.avg.avg.task_started() && from_spine {
            lp.avg.spine_tasks = lp.avg.spine_tasks.saturating_add(1);
        }
        let gone = &self.gone[p as usize];
        let outstanding = &self.outstanding[p as usize];
        let pick = self
            .bound
            .pick(ctx, p, first, count, outstanding, |w| !gone[w as usize]);
        let decision = match pick {
            Some(Ok(w)) => {
                let o = &mut self.outstanding[p as usize][w as usize];
                if *o == 0 {
                    self.leaves[p as usize][rack as usize].idle -= 1;
                }
                *o += 1;
                Decision::to(w)
            }
            Some(Err(_)) => {
                self.leaves[p as usize][rack as usize].waiting += 1;
                self.held += 1;
                Decision::hold()
            }
            // Every worker of the pool here is gone: the task is lost with them (the spine stops
            // sending here once the controller has removed the rack).
            None => Decision::to(first),
        };
        self.signal(
            ctx,
            p,
            rack,
            Change::Task {
                from_spine,
                idle_flag,
            },
        );
        decision
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let (p, w) = (reply.pool as usize, reply.worker as usize);
        if self.gone[p][w] {
            return;
        }
        let lp = &mut self.leaves[p][rack as usize];
        lp.avg.avg.task_finished();
        let o = &mut self.outstanding[p][w];
        *o = o.saturating_sub(1);
        let mut idle_changed = false;
        // A worker that started with more than its bound (a prefilled queue) takes none.
        if lp.waiting > 0 && *o < self.bound.limit(reply.pool, reply.worker) {
            lp.waiting -= 1;
            *o += 1;
            ctx.release(reply.pool, rack, reply.worker);
        } else if *o == 0 {
            lp.idle += 1;
            idle_changed = true;
        }
        self.signal(ctx, reply.pool, rack, Change::Reply { idle_changed });
    }

    fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        self.horus.on_message(ctx, msg)
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        // The leaves are this policy's own: the Horus leaves only hold configuration.
        for (pool, worker, live) in super::removed_workers(ctx, notice) {
            self.remove_worker(ctx, pool, worker, live);
        }
        if let FailureNotice::Rack { pool, rack } = notice {
            let r = &ctx.cluster.pools[pool as usize].racks[rack as usize];
            let (first, physical) = (r.first_worker, r.rack);
            let lp = &mut self.leaves[pool as usize][rack as usize];
            let waiting = std::mem::take(&mut lp.waiting);
            // A failed leaf lost its queue with it (the engine counted those); a live leaf with
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
        // The leaf's counters under the names the model's leaves use, and the spines' own.
        let mut counters = super::named_counters(&[
            ("leaf.held", self.held),
            ("leaf.held_lost", self.held_lost),
            ("leaf.sent_idle_add", self.idle_adds),
            ("leaf.sent_idle_remove", self.idle_removes),
            ("leaf.sent_load_update", self.load_updates),
            ("leaf.idle_repairs", self.idle_repairs),
        ]);
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
    use horus_model::fixed::Load;

    fn policy(b: &mut Bench, k: u32) -> HorusJbsq {
        let cluster = b.engine.cluster();
        let queues = vec![0; cluster.workers.len()];
        HorusJbsq::new(
            cluster,
            &queues,
            &mut b.rng,
            k,
            false,
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
        assert_eq!(p.leaves[0][0].waiting, 2);
        // A reply frees its worker's place: the oldest waiting task goes there, the worker stays
        // busy (no idle message).
        let w = taken[0];
        let (_, sent) = call(&mut b, 12, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert_eq!(b.sent(), vec![(0, 0, 0, w)]);
        assert!(sent.iter().all(|&(k, _)| k == LOAD_UPDATE), "{sent:?}");
        let (_, _) = call(&mut b, 13, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert_eq!(b.sent(), vec![(0, 0, 0, w), (0, 0, 0, w)]);
        assert_eq!(p.leaves[0][0].waiting, 0);
        // Nothing waits: the next reply leaves its worker idle, and the rack links again.
        b.releases.clear();
        let (_, sent) = call(&mut b, 14, |ctx| p.on_reply_at_leaf(ctx, 0, reply(w, 100)));
        assert!(b.sent().is_empty());
        assert_eq!(sent.first().map(|s| s.0), Some(IDLE_ADD), "{sent:?}");
        assert_eq!(p.leaves[0][0].idle, 1);
        assert_eq!(p.leaves[0][0].avg.avg.tasks, n - 1);
    }

    #[test]
    fn a_worker_that_started_over_its_bound_takes_no_held_task() {
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
            2,
            false,
            HorusParams::default(),
        );
        // Every worker holds 5 > k = 2: a task waits, and replies down to 2 release nothing.
        assert!(
            call(&mut b, 1, |ctx| p.on_task_at_leaf(
                ctx,
                0,
                &mut task(CLIENT, false)
            ))
            .0
            .is_hold()
        );
        for t in 0..3 {
            call(&mut b, 2 + t, |ctx| {
                p.on_reply_at_leaf(ctx, 0, reply(first, 100))
            });
        }
        assert!(b.releases.is_empty());
        assert_eq!(p.outstanding[0][first as usize], 2);
        // Under the bound, the next reply lets the waiting task in.
        call(&mut b, 9, |ctx| {
            p.on_reply_at_leaf(ctx, 0, reply(first, 100))
        });
        assert_eq!(b.sent(), [(0, 0, 0, first)]);
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
        assert!(!p.leaves[0][0].linked);
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
        assert_eq!(p.idle_repairs, 1);
        // A client's task (not from the spine) is never a repair.
        let sent = call(&mut b, 3 * gap, |ctx| {
            p.on_task_at_leaf(ctx, 0, &mut task(CLIENT, true))
        })
        .1;
        assert!(sent.iter().all(|&(k, _)| k == LOAD_UPDATE), "{sent:?}");
        assert_eq!(p.idle_repairs, 1);
    }
}
