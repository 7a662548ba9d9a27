//! R2P2's router on a switch (Kogias et al., ATC'19), as Rain (seed 002, §5.1) describes the
//! switch version it compares with: JBSQ(n) by recirculation.
//!
//! The leaf keeps each worker's outstanding tasks (it sends them and sees the replies, R2P2's
//! queue-depth reports). A task's pass samples `probes` workers of the rack; if one has fewer
//! than `n` outstanding, the task goes to the least loaded such sample, else the packet is
//! recirculated for another pass. Each pass beyond the first costs the engine's resubmit latency
//! (`--resubmit-ns`, the recirculation's time) and counts as a resubmission. R2P2 keeps no queue:
//! tasks wait by recirculating (in a real switch a later arrival may take a freed place first;
//! the model below gives it to a recirculating task).
//!
//! The simulation of the passes, exact where the state cannot change and a model where it can:
//! - while some worker is under `n`, a task's passes are drawn one by one with the state as it is
//!   (replies are rare against a pass of half a microsecond);
//! - while none is, the task joins the recirculating tasks. When a reply frees a place, the first
//!   of them whose pass samples that worker takes it: each of the `m` recirculating tasks samples
//!   it with probability `1 - (1 - 1/N)^probes` a pass, so the winner is any of them alike and the
//!   passes until it finds the place are geometric with success `1 - (1 - 1/N)^(probes·m)` a pass
//!   ([`Ctx::release_at`] with that many passes). Arrivals during those passes do not compete for
//!   the place, which favours the recirculating tasks slightly.
//!
//! Rain's R2P2-SW also raises the bound by one for a task that checked every worker in vain; here
//! `n` is the bound throughout (set `n` = 2 for the wider one). Spines: `jbsq`'s, power of
//! `samples` over the racks of the pod by the load each leaf reports after every reply (R2P2
//! schedules one rack). Failures: a worker reported dead takes its tasks with it; a live leaf left
//! with no worker sends its recirculating tasks to a dead one, where they are lost.

use super::jbsq::ReportedLoads;
use super::{Ctx, Decision, FailureNotice, Message, Policy, Release, Reply, TaskHeader};
use crate::cluster::Cluster;
use rand::Rng;

/// The policy's name.
pub const NAME: &str = "r2p2";

pub struct R2p2 {
    n: u32,
    probes: u32,
    spines: ReportedLoads,
    /// Per pool, per worker: tasks sent and not yet answered.
    outstanding: Vec<Vec<u32>>,
    /// Per pool, per worker: reported dead.
    gone: Vec<Vec<bool>>,
    /// Per pool, per rack slot.
    racks: Vec<Vec<Rack>>,
    /// Tasks that recirculated, and passes beyond the first.
    recirculated: u64,
    extra_passes: u64,
    lost_recirculating: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    /// Live workers with fewer than `n` outstanding.
    free: u32,
    /// Live workers.
    live: u32,
    /// Tasks recirculating for want of a place (the engine holds them in queue 0).
    recirculating: u32,
    /// Outstanding plus recirculating: the load the leaf reports.
    tasks: u64,
}

impl R2p2 {
    pub fn new(cluster: &Cluster, queue_len: &[u32], n: u32, probes: u32, samples: u32) -> Self {
        let n = n.max(1);
        let outstanding = super::initial_queues(cluster, queue_len);
        let racks = cluster
            .pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                pool.racks
                    .iter()
                    .map(|r| {
                        let q = &outstanding[p]
                            [r.first_worker as usize..(r.first_worker + r.workers) as usize];
                        Rack {
                            free: q.iter().filter(|&&x| x < n).count() as u32,
                            live: r.workers,
                            recirculating: 0,
                            tasks: q.iter().map(|&x| u64::from(x)).sum(),
                        }
                    })
                    .collect()
            })
            .collect();
        Self {
            n,
            probes: probes.max(1),
            spines: ReportedLoads::new(cluster, samples),
            gone: outstanding.iter().map(|w| vec![false; w.len()]).collect(),
            outstanding,
            racks,
            recirculated: 0,
            extra_passes: 0,
            lost_recirculating: 0,
        }
    }

    /// One more task at worker `w` of pool `p`, rack slot `r`.
    fn take(&mut self, p: u32, r: u32, w: u32) {
        let o = &mut self.outstanding[p as usize][w as usize];
        *o += 1;
        if *o == self.n {
            self.racks[p as usize][r as usize].free -= 1;
        }
    }

    /// Passes of a task through a rack with some worker under `n`, drawn one by one: the worker
    /// it goes to and the passes it took.
    fn passes(&self, ctx: &mut Ctx, p: u32, first: u32, count: u32) -> (u32, u32) {
        let out = &self.outstanding[p as usize];
        let gone = &self.gone[p as usize];
        let mut passes = 0;
        loop {
            passes += 1;
            assert!(
                passes < 100_000_000,
                "r2p2: no pass finds the rack's free worker (pool {p}, workers {first}..)"
            );
            let mut best: Option<u32> = None;
            for _ in 0..self.probes {
                let w = ctx.random_worker(p, first, count);
                if !gone[w as usize]
                    && out[w as usize] < self.n
                    && best.is_none_or(|b| out[w as usize] < out[b as usize])
                {
                    best = Some(w);
                }
            }
            if let Some(w) = best {
                return (w, passes);
            }
        }
    }

    /// The leaf of pool `p`'s rack slot `r` reports its load.
    fn report(&self, ctx: &mut Ctx, p: u32, r: u32) {
        let rack = &self.racks[p as usize][r as usize];
        ReportedLoads::report(ctx, p, r, rack.tasks as f64 / f64::from(rack.live.max(1)));
    }

    fn remove_worker(&mut self, ctx: &mut Ctx, p: u32, w: u32, leaf_alive: bool) {
        let (pi, wi) = (p as usize, w as usize);
        if self.gone[pi][wi] {
            return;
        }
        self.gone[pi][wi] = true;
        let r = ctx.cluster.pools[pi].worker_rack[wi];
        let lost = std::mem::take(&mut self.outstanding[pi][wi]);
        let rack = &mut self.racks[pi][r as usize];
        if lost < self.n {
            rack.free -= 1;
        }
        rack.live -= 1;
        rack.tasks = rack.tasks.saturating_sub(u64::from(lost));
        if rack.live == 0 {
            let m = std::mem::take(&mut rack.recirculating);
            rack.tasks = rack.tasks.saturating_sub(u64::from(m));
            if leaf_alive {
                for _ in 0..m {
                    ctx.release_from(p, r, 0, w);
                }
                self.lost_recirculating += u64::from(m);
            }
        }
    }
}

impl Policy for R2p2 {
    fn message_kinds(&self) -> &'static [&'static str] {
        ReportedLoads::MESSAGE_KINDS
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        Decision::to(self.spines.pick(ctx, task))
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let p = task.pool;
        let slot = &ctx.cluster.pools[p as usize].racks[rack as usize];
        let (first, count) = (slot.first_worker, slot.workers);
        let r = &mut self.racks[p as usize][rack as usize];
        if r.live == 0 {
            // No worker left: the task is lost with them.
            return Decision::to(first);
        }
        r.tasks += 1;
        if r.free == 0 {
            r.recirculating += 1;
            self.recirculated += 1;
            return Decision::hold();
        }
        let (w, passes) = self.passes(ctx, p, first, count);
        self.extra_passes += u64::from(passes - 1);
        self.take(p, rack, w);
        Decision::after(w, passes)
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let (p, w) = (reply.pool, reply.worker);
        if self.gone[p as usize][w as usize] {
            return;
        }
        let o = &mut self.outstanding[p as usize][w as usize];
        if *o == 0 {
            return; // a reply the leaf never counted a task for
        }
        *o -= 1;
        let freed = *o == self.n - 1;
        let r = &mut self.racks[p as usize][rack as usize];
        r.tasks = r.tasks.saturating_sub(1);
        if freed {
            r.free += 1;
            if r.recirculating > 0 {
                // The recirculating task whose pass first samples this worker takes the place.
                let m = r.recirculating;
                // Probes draw live workers only.
                let workers = f64::from(r.live);
                let miss = (1.0 - 1.0 / workers).powf(f64::from(self.probes) * f64::from(m));
                // A draw of 0 (one in 2^53) would take forever: it is read as 1.
                let u = match ctx.rng.random::<f64>() {
                    0.0 => 1.0,
                    u => u,
                };
                let passes = if miss <= 0.0 {
                    1
                } else {
                    // Geometric: passes until the first success, from 1.
                    1 + (u.ln() / miss.ln()).floor().min(f64::from(u32::MAX / 2)) as u32
                };
                let index = ctx.rng.random_range(0..m);
                r.recirculating -= 1;
                self.extra_passes += u64::from(passes - 1);
                self.take(p, rack, w);
                ctx.release_at(Release {
                    pool: p,
                    rack,
                    queue: 0,
                    index,
                    worker: w,
                    passes,
                    spine: None,
                });
            }
        }
        self.report(ctx, p, rack);
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        self.spines.on_message(msg);
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        for (pool, worker, live) in super::removed_workers(ctx, notice) {
            self.remove_worker(ctx, pool, worker, live);
        }
        self.spines.on_failure_notice(ctx, notice);
    }

    fn counters(&self) -> Vec<(String, u64)> {
        super::named_counters(&[
            ("recirculated", self.recirculated),
            ("extra_passes", self.extra_passes),
            ("lost_recirculating", self.lost_recirculating),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bench::{Bench, reply, task};

    fn r2p2(b: &Bench, n: u32) -> R2p2 {
        let cluster = b.engine.cluster();
        R2p2::new(cluster, &vec![0; cluster.workers.len()], n, 2, 2)
    }

    #[test]
    fn a_task_recirculates_until_a_pass_samples_a_worker_under_n() {
        let mut b = Bench::new("exp");
        let (first, n) = b.rack0();
        assert_eq!(n, 4);
        let mut r = r2p2(&b, 2);
        // Eight places: each worker takes two tasks, never three.
        let mut per_worker = vec![0; n as usize];
        for _ in 0..2 * n {
            let d = b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert!(!d.is_hold() && d.passes >= 1);
            per_worker[(d.node - first) as usize] += 1;
        }
        assert_eq!(per_worker, [2, 2, 2, 2]);
        assert_eq!(r.racks[0][0].free, 0);
        // No place left: the next tasks recirculate.
        for _ in 0..3 {
            assert!(
                b.call(2, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)))
                    .is_hold()
            );
        }
        // A reply frees a place: one of the three takes it, after some passes.
        b.call(3, |ctx| r.on_reply_at_leaf(ctx, 0, reply(first + 1, 1)));
        let rel = *b.releases.last().unwrap();
        assert_eq!((rel.queue, rel.worker), (0, first + 1));
        assert!(rel.index < 3 && rel.passes >= 1);
        assert_eq!(r.racks[0][0].recirculating, 2);
        assert_eq!(r.outstanding[0][(first + 1) as usize], 2);
        assert_eq!(r.racks[0][0].tasks, 10);
    }

    /// Mean and spread of passes: one free worker of four, two probes a pass, is found with
    /// probability 1 - (3/4)^2 = 7/16 a pass, by an arriving task and by the one task
    /// recirculating; of three recirculating tasks each wins a third of the time.
    #[test]
    fn passes_are_geometric_and_any_recirculating_task_may_win() {
        let mut b = Bench::new("exp");
        let trials = 20_000;
        let mut r = r2p2(&b, 1);
        for i in 0..3 {
            b.call(1, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            assert_eq!(r.racks[0][0].free, 3 - i);
        }
        let mut arriving = 0u64;
        for _ in 0..trials {
            // The one free worker takes a task and gives it back.
            let d = b.call(2, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
            arriving += u64::from(d.passes);
            b.call(3, |ctx| r.on_reply_at_leaf(ctx, 0, reply(d.node, 1)));
        }
        let mean = arriving as f64 / f64::from(trials);
        assert!((mean / (16.0 / 7.0) - 1.0).abs() < 0.03, "arriving: {mean}");

        // All four busy; one task recirculates; a place frees and is taken again and again.
        let d = b.call(4, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        let last = d.node;
        let mut recirculating = 0u64;
        assert!(
            b.call(5, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)))
                .is_hold()
        );
        for _ in 0..trials {
            b.releases.clear();
            b.call(6, |ctx| r.on_reply_at_leaf(ctx, 0, reply(last, 1)));
            let rel = b.releases[0];
            assert_eq!((rel.index, rel.worker), (0, last));
            recirculating += u64::from(rel.passes);
            // ... and another task takes its place in the recirculation.
            assert!(
                b.call(7, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)))
                    .is_hold()
            );
        }
        let mean = recirculating as f64 / f64::from(trials);
        assert!(
            (mean / (16.0 / 7.0) - 1.0).abs() < 0.03,
            "recirculating: {mean}"
        );

        // Three recirculating: each wins about a third of the places; passes are fewer
        // (1 - (3/4)^6 a pass).
        for _ in 0..2 {
            assert!(
                b.call(8, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)))
                    .is_hold()
            );
        }
        assert_eq!(r.racks[0][0].recirculating, 3);
        let mut wins = [0u32; 3];
        let mut passes = 0u64;
        for _ in 0..trials {
            b.releases.clear();
            b.call(9, |ctx| r.on_reply_at_leaf(ctx, 0, reply(last, 1)));
            wins[b.releases[0].index as usize] += 1;
            passes += u64::from(b.releases[0].passes);
            b.call(10, |ctx| r.on_task_at_leaf(ctx, 0, &mut task(0)));
        }
        for w in wins {
            let share = f64::from(w) / f64::from(trials);
            assert!((share - 1.0 / 3.0).abs() < 0.02, "{wins:?}");
        }
        let p = 1.0 - 0.75f64.powi(6);
        let mean = passes as f64 / f64::from(trials);
        assert!((mean * p - 1.0).abs() < 0.03, "three recirculating: {mean}");
    }
}
