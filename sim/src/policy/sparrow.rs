//! Sparrow (Ousterhout et al., SOSP'13; seed 003): batch sampling and late binding, for jobs of
//! several tasks (`--job-tasks`).
//!
//! A job's tasks reach one spine, Sparrow's scheduler there, which keeps them
//! ([`Decision::hold_in`] at the spine, one queue per job) and sends probes to `d` x m distinct
//! workers of the pool drawn at random, for a job of m tasks (batch sampling: the job's tasks go
//! to the m of them that are first free, not each to the better of its own two). A probe places a
//! reservation in its worker's queue, kept by the node monitor at the worker's leaf. When a
//! reservation reaches the head of an idle worker's queue the monitor asks the scheduler for a
//! task (late binding): the scheduler sends the job's next task not yet launched straight to that
//! worker ([`Release`] from the spine), or answers that none is left, and the monitor moves on to
//! the worker's next reservation. A worker runs one task at a time and asks again when it ends.
//!
//! The network carries the probes and both answers between spine and leaf with their hop delays
//! (the leaf-to-worker hop of a probe and of a request is left out: the monitor sits at the
//! leaf); a released task takes the spine-to-leaf hops and one more to the worker. A worker waits
//! idle while its request is out, as Sparrow's do. Sparrow's RPCs run over TCP: the network loses
//! none of its packets ([`Policy::reliable_transport`]; a retransmission's delay is not
//! modelled). A request sent to a spine's failed switch leaves its worker waiting for good
//! (Sparrow's RPC timeouts are not modelled), and a job whose every probe reached a worker that
//! died keeps its unlaunched tasks at the spine: both show as unfinished tasks at the end of a
//! run.

use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Release, Reply, TaskHeader};
use crate::cluster::Cluster;
use std::collections::{HashMap, VecDeque};

/// The policy's name.
pub const NAME: &str = "sparrow";

const PROBE: u8 = 0;
const GET_TASK: u8 = 1;
const NO_TASK: u8 = 2;

/// A job at its scheduler.
#[derive(Clone, Copy, Debug)]
struct Job {
    pool: u32,
    /// The spine's pod slot.
    pod: u32,
    /// Tasks held at the spine, not yet sent to a worker.
    unlaunched: u32,
}

#[derive(Debug, Default)]
struct Worker {
    /// Reservations, oldest first: the scheduler (pod slot) and the job.
    reservations: VecDeque<(u32, u32)>,
    /// Running a task, or waiting for the answer to a request.
    busy: bool,
    gone: bool,
}

pub struct Sparrow {
    d: u32,
    /// By job ID (also the spine queue that holds its tasks).
    jobs: HashMap<u32, Job>,
    next_job: u32,
    /// The job whose tasks are reaching its spine, and how many have.
    open: Option<(u32, u32)>,
    /// Per pool, per worker.
    workers: Vec<Vec<Worker>>,
    probes: u64,
    launched: u64,
    no_task: u64,
}

impl Sparrow {
    pub fn new(cluster: &Cluster, queue_len: &[u32], d: u32) -> Self {
        let initial = super::initial_queues(cluster, queue_len);
        Self {
            d: d.max(1),
            jobs: HashMap::new(),
            next_job: 0,
            open: None,
            workers: initial
                .iter()
                .map(|w| {
                    w.iter()
                        .map(|&q| Worker {
                            // A prefilled worker is busy until its queue's last task ends.
                            busy: q > 0,
                            ..Worker::default()
                        })
                        .collect()
                })
                .collect(),
            probes: 0,
            launched: 0,
            no_task: 0,
        }
    }

    /// `n` distinct uniformly random usable workers of pool `p` (all of them if it has no more).
    fn sample(ctx: &mut Ctx, p: u32, n: u32) -> Vec<u32> {
        let workers = ctx.cluster.pools[p as usize].workers();
        if n >= workers {
            return (0..workers).filter(|&w| ctx.worker_usable(p, w)).collect();
        }
        let mut chosen = Vec::with_capacity(n as usize);
        let mut tries = 0;
        while (chosen.len() as u32) < n && tries < 64 * n {
            let w = ctx.random_worker(p, 0, workers);
            if !chosen.contains(&w) && ctx.worker_usable(p, w) {
                chosen.push(w);
            }
            tries += 1;
        }
        chosen
    }

    /// The monitor of pool `p`'s worker `w` asks the scheduler of its next reservation for a
    /// task, if the worker is idle and has one.
    fn request(&mut self, ctx: &mut Ctx, p: u32, w: u32) {
        let wk = &mut self.workers[p as usize][w as usize];
        if wk.busy || wk.gone {
            return;
        }
        let Some((pod, job)) = wk.reservations.pop_front() else {
            return;
        };
        wk.busy = true;
        let rack = ctx.cluster.pools[p as usize].worker_rack[w as usize];
        ctx.send(Message {
            pool: p,
            from: Node::Leaf(rack),
            to: Node::Spine(pod),
            kind: GET_TASK,
            value: w,
            value2: job,
        });
    }
}

impl Policy for Sparrow {
    fn message_kinds(&self) -> &'static [&'static str] {
        &["probe", "get-task", "no-task"]
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let (p, pod) = (task.pool, task.spine);
        let (id, count) = match self.open {
            Some((id, count)) => (id, count + 1),
            None => {
                let id = self.next_job;
                self.next_job = self.next_job.wrapping_add(1);
                self.jobs.insert(
                    id,
                    Job {
                        pool: p,
                        pod,
                        unlaunched: 0,
                    },
                );
                (id, 1)
            }
        };
        self.jobs
            .get_mut(&id)
            .expect("the open job is known")
            .unlaunched += 1;
        self.open = Some((id, count));
        if task.job_left == 0 {
            // The job's last task: probe d x m workers.
            self.open = None;
            for w in Self::sample(ctx, p, self.d * count) {
                let rack = ctx.cluster.pools[p as usize].worker_rack[w as usize];
                ctx.send(Message {
                    pool: p,
                    from: Node::Spine(pod),
                    to: Node::Leaf(rack),
                    kind: PROBE,
                    value: w,
                    value2: id,
                });
                self.probes += 1;
            }
        }
        Decision::hold_in(id)
    }

    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        // Sparrow's tasks go from the spine straight to their worker; none is scheduled here.
        let r = &ctx.cluster.pools[task.pool as usize].racks[rack as usize];
        debug_assert!(false, "a Sparrow task reached a leaf's scheduler");
        Decision::to(r.first_worker)
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, _rack: u32, reply: Reply) {
        let wk = &mut self.workers[reply.pool as usize][reply.worker as usize];
        wk.busy = reply.qlen > 0;
        self.request(ctx, reply.pool, reply.worker);
    }

    fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        let (p, w) = (msg.pool, msg.value);
        match msg.kind {
            PROBE => {
                let Node::Spine(pod) = msg.from else {
                    unreachable!("probes come from schedulers")
                };
                let wk = &mut self.workers[p as usize][w as usize];
                if !wk.gone {
                    wk.reservations.push_back((pod, msg.value2));
                    self.request(ctx, p, w);
                }
            }
            GET_TASK => {
                let Node::Spine(pod) = msg.to else {
                    unreachable!("requests go to schedulers")
                };
                let rack = ctx.cluster.pools[p as usize].worker_rack[w as usize];
                match self.jobs.get_mut(&msg.value2) {
                    Some(job) => {
                        job.unlaunched -= 1;
                        if job.unlaunched == 0 {
                            self.jobs.remove(&msg.value2);
                        }
                        self.launched += 1;
                        ctx.release_at(Release {
                            pool: p,
                            rack,
                            queue: msg.value2,
                            index: 0,
                            worker: w,
                            passes: 1,
                            spine: Some(pod),
                        });
                    }
                    None => {
                        self.no_task += 1;
                        ctx.send(Message {
                            pool: p,
                            from: Node::Spine(pod),
                            to: Node::Leaf(rack),
                            kind: NO_TASK,
                            value: w,
                            value2: msg.value2,
                        });
                    }
                }
            }
            _ => {
                self.workers[p as usize][w as usize].busy = false;
                self.request(ctx, p, w);
            }
        }
    }

    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        for (pool, worker, _) in super::removed_workers(ctx, notice) {
            let wk = &mut self.workers[pool as usize][worker as usize];
            wk.gone = true;
            wk.reservations.clear();
        }
        // A restarted spine has forgotten its jobs (their held tasks were lost with the switch).
        if let FailureNotice::SpineRestarted { pool, pod } = notice {
            self.jobs.retain(|_, j| !(j.pool == pool && j.pod == pod));
        }
    }

    fn reliable_transport(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(String, u64)> {
        vec![
            ("probes".into(), self.probes),
            ("launched".into(), self.launched),
            ("no_task".into(), self.no_task),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bench::{Bench, reply, task};

    fn sent(b: &Bench) -> Vec<(u8, u32, u32)> {
        b.outbox
            .iter()
            .map(|m| (m.kind, m.value, m.value2))
            .collect()
    }

    fn msg(kind: u8, from: Node, to: Node, worker: u32, job: u32) -> Message {
        Message {
            pool: 0,
            from,
            to,
            kind,
            value: worker,
            value2: job,
        }
    }

    #[test]
    fn a_job_probes_d_times_its_tasks_and_binds_them_to_the_first_workers_that_ask() {
        let mut b = Bench::new("exp");
        let cluster = b.engine.cluster();
        let mut s = Sparrow::new(cluster, &vec![0; cluster.workers.len()], 2);
        let racks = cluster.pools[0].worker_rack.clone();
        let rack_of = |w: u32| racks[w as usize];
        // A job of two tasks reaches spine 0: both held in the job's queue, then 4 probes to
        // distinct workers.
        let mut first = task(0);
        first.job_left = 1;
        assert_eq!(
            b.call(1, |ctx| s.on_task_at_spine(ctx, &mut first)),
            Decision::hold_in(0)
        );
        assert!(b.outbox.is_empty());
        assert_eq!(
            b.call(1, |ctx| s.on_task_at_spine(ctx, &mut task(0))),
            Decision::hold_in(0)
        );
        let probes = sent(&b);
        let mut workers: Vec<u32> = probes.iter().map(|p| p.1).collect();
        workers.sort();
        workers.dedup();
        assert_eq!(workers.len(), 4);
        assert!(probes.iter().all(|&(k, _, job)| k == PROBE && job == 0));
        // Three probes arrive; each idle worker asks at once.
        let (w1, w2, w3) = (workers[0], workers[1], workers[2]);
        let mut asks = Vec::new();
        for w in [w1, w2, w3] {
            let m = msg(PROBE, Node::Spine(0), Node::Leaf(rack_of(w)), w, 0);
            b.call(10, |ctx| s.on_message(ctx, m));
            asks.extend(sent(&b));
        }
        assert_eq!(
            asks,
            [(GET_TASK, w1, 0), (GET_TASK, w2, 0), (GET_TASK, w3, 0)]
        );
        // The first two requests get the tasks, straight from the spine; the third gets none.
        for w in [w1, w2] {
            let m = msg(GET_TASK, Node::Leaf(rack_of(w)), Node::Spine(0), w, 0);
            b.call(20, |ctx| s.on_message(ctx, m));
            assert!(b.outbox.is_empty());
        }
        let rel: Vec<(u32, u32, Option<u32>)> = b
            .releases
            .iter()
            .map(|r| (r.queue, r.worker, r.spine))
            .collect();
        assert_eq!(rel, [(0, w1, Some(0)), (0, w2, Some(0))]);
        let m = msg(GET_TASK, Node::Leaf(rack_of(w3)), Node::Spine(0), w3, 0);
        b.call(20, |ctx| s.on_message(ctx, m));
        assert_eq!(sent(&b), [(NO_TASK, w3, 0)]);
        assert!(s.jobs.is_empty());
        // w3's monitor moves on: a reservation of another job waits behind none, so it asks.
        let m = msg(PROBE, Node::Spine(1), Node::Leaf(rack_of(w3)), w3, 7);
        b.call(25, |ctx| s.on_message(ctx, m));
        assert!(b.outbox.is_empty(), "w3 still waits for its answer");
        let m = msg(NO_TASK, Node::Spine(0), Node::Leaf(rack_of(w3)), w3, 0);
        b.call(30, |ctx| s.on_message(ctx, m));
        assert_eq!(sent(&b), [(GET_TASK, w3, 7)]);
        // w1 finishes: idle, no reservation, no request.
        b.call(40, |ctx| {
            s.on_reply_at_leaf(ctx, rack_of(w1), reply(w1, 10))
        });
        assert!(b.outbox.is_empty() && !s.workers[0][w1 as usize].busy);
    }
}
