//! Random: every task goes to a uniformly random worker of its pool.
//!
//! The baseline of load-oblivious dispatch (RAND in Malcolm, the fallback of Horus' idle-only
//! ablation, Appendix C). With exponential service it turns a pool of n workers into n independent
//! M/M/1 queues, which is how the engine is validated against closed forms.

use super::{Ctx, Decision, Policy, TaskHeader};

pub struct RandomPolicy;

impl Policy for RandomPolicy {
    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let pool = &ctx.cluster.pools[task.pool as usize];
        let n = pool.workers();
        let worker = ctx.random_worker(task.pool, 0, n);
        task.hint = worker;
        Decision::to(ctx.cluster.pools[task.pool as usize].worker_rack[worker as usize])
    }

    fn on_task_at_leaf(&mut self, _ctx: &mut Ctx, _rack: u32, task: &mut TaskHeader) -> Decision {
        Decision::to(task.hint)
    }
}
