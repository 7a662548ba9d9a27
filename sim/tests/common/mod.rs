//! What several test files share: a policy wrapper that notes what a run did.

#![allow(dead_code)] // each test file uses part of it

use horus_sim::config::SimConfig;
use horus_sim::engine::Engine;
use horus_sim::metrics::Summary;
use horus_sim::policy::{Ctx, Decision, FailureNotice, Message, Policy, Reply, Steal, TaskHeader};
use horus_sim::queue::Nanos;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// Passes a policy's calls through and notes, for one physical rack, every worker its leaf chose
/// (`rack`: `u32::MAX` for none), and the longest queue any worker's reply reported.
pub struct Spy {
    pub inner: Box<dyn Policy>,
    pub rack: u32,
    pub chosen: Arc<Mutex<Vec<(u32, u32)>>>,
    pub longest: Arc<Mutex<u32>>,
    /// The service times the replies reported.
    pub services: Arc<Mutex<BTreeSet<u32>>>,
}

impl Spy {
    pub fn new(inner: Box<dyn Policy>, rack: u32) -> Self {
        Self {
            inner,
            rack,
            chosen: Arc::default(),
            longest: Arc::default(),
            services: Arc::default(),
        }
    }
}

impl Policy for Spy {
    fn message_kinds(&self) -> &'static [&'static str] {
        self.inner.message_kinds()
    }
    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        self.inner.on_task_at_spine(ctx, task)
    }
    fn on_task_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, task: &mut TaskHeader) -> Decision {
        let d = self.inner.on_task_at_leaf(ctx, rack, task);
        if ctx.cluster.pools[task.pool as usize].racks[rack as usize].rack == self.rack {
            self.chosen.lock().unwrap().push((task.pool, d.node));
        }
        d
    }
    fn on_reply_at_leaf(&mut self, ctx: &mut Ctx, rack: u32, reply: Reply) {
        let mut longest = self.longest.lock().unwrap();
        *longest = (*longest).max(reply.qlen);
        drop(longest);
        self.services.lock().unwrap().insert(reply.service_ns);
        self.inner.on_reply_at_leaf(ctx, rack, reply)
    }
    fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        self.inner.on_message(ctx, msg)
    }
    fn on_failure_notice(&mut self, ctx: &mut Ctx, notice: FailureNotice) {
        self.inner.on_failure_notice(ctx, notice)
    }
    fn reliable_transport(&self) -> bool {
        self.inner.reliable_transport()
    }
    fn on_task_left_worker(&mut self, pool: u32, worker: u32, now: Nanos) {
        self.inner.on_task_left_worker(pool, worker, now)
    }
    fn on_task_lost(&mut self, task: &TaskHeader, now: Nanos) {
        self.inner.on_task_lost(task, now)
    }
    fn node_queues(&self) -> bool {
        self.inner.node_queues()
    }
    fn on_steal(&mut self, ctx: &mut Ctx, steal: Steal, moved: bool) {
        self.inner.on_steal(ctx, steal, moved)
    }
    fn counters(&self) -> Vec<(String, u64)> {
        self.inner.counters()
    }
}

/// What a run's replies showed.
pub struct Observed {
    /// The longest queue a worker reported (tasks left after one finished).
    pub longest: u32,
    /// Every service time a reply reported.
    pub services: BTreeSet<u32>,
}

/// Runs `cfg` with its policy watched by a [`Spy`].
pub fn observe(cfg: &SimConfig) -> (Summary, Observed) {
    let mut watched = None;
    let engine = Engine::with_custom_policy(cfg, |cluster, queues, rng| {
        let spy = Spy::new(cfg.policy.build(cluster, queues, rng), u32::MAX);
        watched = Some((spy.longest.clone(), spy.services.clone()));
        Box::new(spy)
    })
    .unwrap();
    let s = engine.run(&mut |_| {});
    let (longest, services) = watched.expect("the engine built the policy");
    let o = Observed {
        longest: *longest.lock().unwrap(),
        services: std::mem::take(&mut *services.lock().unwrap()),
    };
    (s, o)
}

/// A policy counter of a run's summary.
pub fn counter(s: &Summary, name: &str) -> u64 {
    s.policy_counters
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}
