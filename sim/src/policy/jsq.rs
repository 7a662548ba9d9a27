//! JSQ-ideal: join the shortest queue of the whole pool, with zero-delay state.
//!
//! The performance bound of Horus §2.1 and §5.2 ("a hypothetical switch that executes JSQ with
//! zero-delay state updates"; JSQ's optimality: Winston 1977 via Horus [79]). The scheduler counts
//! the tasks it assigned to each worker and learns without delay when one leaves, so the counts are
//! exact at every decision, including tasks still on the wire. Ties are broken uniformly at random.

use super::{Ctx, Decision, Policy, TaskHeader};
use crate::cluster::Cluster;
use rand::Rng;

/// Workers of one pool bucketed by their count of outstanding tasks, for O(1) updates and picks.
struct Buckets {
    /// `by_len[c]` lists the workers with `c` outstanding tasks.
    by_len: Vec<Vec<u32>>,
    /// Each worker's count and position inside its bucket.
    len: Vec<u32>,
    pos: Vec<u32>,
    /// Lower bound on the smallest non-empty bucket.
    min: usize,
}

impl Buckets {
    fn new(initial: &[u32]) -> Self {
        let mut b = Buckets {
            by_len: Vec::new(),
            len: initial.to_vec(),
            pos: vec![0; initial.len()],
            min: 0,
        };
        for (w, &c) in initial.iter().enumerate() {
            b.insert(w as u32, c);
        }
        b
    }

    fn insert(&mut self, w: u32, c: u32) {
        let c = c as usize;
        if self.by_len.len() <= c {
            self.by_len.resize_with(c + 1, Vec::new);
        }
        self.pos[w as usize] = self.by_len[c].len() as u32;
        self.by_len[c].push(w);
        self.len[w as usize] = c as u32;
        self.min = self.min.min(c);
    }

    fn remove(&mut self, w: u32) {
        let c = self.len[w as usize] as usize;
        let p = self.pos[w as usize] as usize;
        let bucket = &mut self.by_len[c];
        bucket.swap_remove(p);
        if let Some(&moved) = bucket.get(p) {
            self.pos[moved as usize] = p as u32;
        }
    }

    fn shift(&mut self, w: u32, up: bool) {
        let c = self.len[w as usize];
        self.remove(w);
        self.insert(w, if up { c + 1 } else { c.saturating_sub(1) });
    }

    /// A uniformly random worker among the least loaded, None if the pool has no worker left.
    fn pick(&mut self, rng: &mut impl Rng) -> Option<u32> {
        while self.min < self.by_len.len() && self.by_len[self.min].is_empty() {
            self.min += 1;
        }
        let bucket = self.by_len.get(self.min)?;
        Some(bucket[rng.random_range(0..bucket.len())])
    }
}

pub struct JsqIdeal {
    pools: Vec<Buckets>,
}

impl JsqIdeal {
    pub fn new(cluster: &Cluster, queue_len: &[u32]) -> Self {
        let pools = cluster
            .pools
            .iter()
            .map(|p| {
                Buckets::new(
                    &queue_len[p.worker_base as usize..(p.worker_base + p.workers()) as usize],
                )
            })
            .collect();
        Self { pools }
    }
}

impl Policy for JsqIdeal {
    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let buckets = &mut self.pools[task.pool as usize];
        let worker = loop {
            let w = buckets.pick(ctx.rng).expect("a pool always has workers");
            // Dead workers leave the buckets lazily, when first picked; keep at least one so
            // that tasks still have somewhere to go (and are lost there, visibly).
            if ctx.worker_usable(task.pool, w)
                || buckets.by_len.iter().map(Vec::len).sum::<usize>() == 1
            {
                break w;
            }
            buckets.remove(w);
        };
        buckets.shift(worker, true);
        task.hint = worker;
        Decision::to(ctx.cluster.pools[task.pool as usize].worker_rack[worker as usize])
    }

    fn on_task_at_leaf(&mut self, _ctx: &mut Ctx, _rack: u32, task: &mut TaskHeader) -> Decision {
        Decision::to(task.hint)
    }

    fn on_task_left_worker(&mut self, pool: u32, worker: u32) {
        let b = &mut self.pools[pool as usize];
        // A removed (dead) worker is in no bucket, and its recorded position points elsewhere
        // (another worker, or past the bucket's end): shift only a worker found where it is
        // recorded.
        if b.by_len
            .get(b.len[worker as usize] as usize)
            .and_then(|v| v.get(b.pos[worker as usize] as usize))
            == Some(&worker)
        {
            b.shift(worker, false);
        }
    }

    fn on_task_lost(&mut self, task: &TaskHeader) {
        self.on_task_left_worker(task.pool, task.hint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

    #[test]
    fn picks_only_among_the_least_loaded() {
        let mut b = Buckets::new(&[2, 0, 1, 0]);
        let mut rng = stream(1, Stream::Policy, 0);
        for _ in 0..50 {
            assert!(matches!(b.pick(&mut rng), Some(1 | 3)));
        }
        b.shift(1, true);
        b.shift(3, true);
        b.shift(3, true);
        assert!(matches!(b.pick(&mut rng), Some(1 | 2))); // lens now 2,1,1,2
        b.shift(2, true);
        assert_eq!(b.pick(&mut rng), Some(1));
        b.shift(0, false);
        b.shift(0, false);
        assert_eq!(b.pick(&mut rng), Some(0));
    }
}
