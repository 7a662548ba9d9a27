//! JIQ: join-idle-queue (Lu et al., "Join-Idle-Queue: A novel load balancing algorithm for
//! dynamically scalable web services", Performance 2011).
//!
//! The pool's spine schedulers are the dispatchers, each with an I-queue of idle workers. A worker
//! that becomes idle (its reply says queue length 0) is reported by its leaf to one dispatcher
//! chosen uniformly at random (JIQ-Random). A dispatcher sends a task to a worker from its I-queue
//! when it has one, otherwise to a uniformly random worker of the pool. A worker may sit in several
//! I-queues (it went idle again after a task from another dispatcher); such stale entries are part
//! of JIQ and cost a queued task, as in the paper.

use super::{Ctx, Decision, FailureNotice, Message, Node, Policy, Reply, TaskHeader};
use crate::cluster::Cluster;
use crate::rng::SimRng;
use rand::Rng;

const IDLE_REPORT: u8 = 0;

pub struct Jiq {
    /// Per pool, per pod slot: the I-queue (served last in, first out).
    idle: Vec<Vec<Vec<u32>>>,
}

impl Jiq {
    pub fn new(cluster: &Cluster, queue_len: &[u32], rng: &mut SimRng) -> Self {
        let idle = cluster
            .pools
            .iter()
            .map(|p| {
                let mut queues = vec![Vec::new(); p.groups.len()];
                for w in 0..p.workers() {
                    if queue_len[(p.worker_base + w) as usize] == 0 {
                        queues[rng.random_range(0..p.groups.len())].push(w);
                    }
                }
                queues
            })
            .collect();
        Self { idle }
    }
}

impl Policy for Jiq {
    fn message_kinds(&self) -> &'static [&'static str] {
        &["idle-report"]
    }

    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let queue = &mut self.idle[task.pool as usize][task.spine as usize];
        let worker = loop {
            match queue.pop() {
                Some(w) if ctx.worker_usable(task.pool, w) => break w,
                Some(_) => continue,
                None => {
                    let n = ctx.cluster.pools[task.pool as usize].workers();
                    break ctx.random_worker(task.pool, 0, n);
                }
            }
        };
        task.hint = worker;
        Decision::to(ctx.cluster.pools[task.pool as usize].worker_rack[worker as usize])
    }

    fn on_task_at_leaf(&mut self, _ctx: &mut Ctx, _rack: u32, task: &mut TaskHeader) -> Decision {
        Decision::to(task.hint)
    }

    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        if reply.qlen == 0 {
            let pods = ctx.cluster.pools[reply.pool as usize].groups.len() as u32;
            let to = Node::Spine(ctx.rng.random_range(0..pods));
            ctx.send(Message {
                pool: reply.pool,
                from: Node::Leaf(rack),
                to,
                kind: IDLE_REPORT,
                value: reply.worker,
                value2: 0,
            });
        }
    }

    fn on_message(&mut self, _ctx: &mut Ctx, msg: Message) {
        if let Node::Spine(pod) = msg.to {
            self.idle[msg.pool as usize][pod as usize].push(msg.value);
        }
    }

    fn on_failure_notice(&mut self, _ctx: &mut Ctx, notice: FailureNotice) {
        if let FailureNotice::SpineRestarted { pool, pod } = notice {
            self.idle[pool as usize][pod as usize].clear();
        }
    }
}
