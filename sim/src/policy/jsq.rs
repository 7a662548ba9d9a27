//! JSQ-ideal: join the shortest queue of the whole pool, with zero-delay state.
//!
//! The performance bound of Horus §2.1 and §5.2 ("a hypothetical switch that executes JSQ with
//! zero-delay state updates"; JSQ's optimality: Winston 1977 via Horus [79]). The scheduler counts
//! the tasks it assigned to each worker and learns without delay when one leaves, so the counts are
//! exact at every decision, including tasks still on the wire. Ties are broken uniformly at random.

use super::{Ctx, Decision, Policy, TaskHeader};
use crate::cluster::Cluster;
use crate::queue::Nanos;
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

    /// The least count of a worker, None if no worker is left.
    fn least(&mut self) -> Option<u32> {
        while self.min < self.by_len.len() && self.by_len[self.min].is_empty() {
            self.min += 1;
        }
        (self.min < self.by_len.len()).then_some(self.min as u32)
    }

    /// A uniformly random worker among the least loaded, None if no worker is left.
    fn pick(&mut self, rng: &mut impl Rng) -> Option<u32> {
        let least = self.least()? as usize;
        let bucket = &self.by_len[least];
        Some(bucket[rng.random_range(0..bucket.len())])
    }

    /// Whether worker `w` is in a bucket (a removed one is in none, and its recorded position
    /// points elsewhere: another worker, or past the bucket's end).
    fn holds(&self, w: u32) -> bool {
        self.by_len
            .get(self.len[w as usize] as usize)
            .and_then(|v| v.get(self.pos[w as usize] as usize))
            == Some(&w)
    }

    fn workers(&self) -> usize {
        self.by_len.iter().map(Vec::len).sum()
    }
}

/// A pool's workers by speed class, each class bucketed by count: one class (speed 1) unless
/// weighted.
struct Classes {
    /// Each class's speed and buckets (over class-local indices).
    classes: Vec<(f64, Buckets)>,
    /// Each class's pool-local workers, by class-local index.
    members: Vec<Vec<u32>>,
    /// Each pool-local worker's class and class-local index.
    place: Vec<(u32, u32)>,
}

impl Classes {
    /// `speeds`: each worker's speed, or None for one class.
    fn new(initial: &[u32], speeds: Option<&[f64]>) -> Self {
        let mut distinct: Vec<f64> = Vec::new();
        let mut place = Vec::with_capacity(initial.len());
        let mut members: Vec<Vec<u32>> = Vec::new();
        for w in 0..initial.len() {
            let speed = speeds.map_or(1.0, |s| s[w]);
            let c = match distinct.iter().position(|&x| x == speed) {
                Some(c) => c,
                None => {
                    distinct.push(speed);
                    members.push(Vec::new());
                    distinct.len() - 1
                }
            };
            place.push((c as u32, members[c].len() as u32));
            members[c].push(w as u32);
        }
        let classes = distinct
            .iter()
            .zip(&members)
            .map(|(&speed, m)| {
                let counts: Vec<u32> = m.iter().map(|&w| initial[w as usize]).collect();
                (speed, Buckets::new(&counts))
            })
            .collect();
        Self {
            classes,
            members,
            place,
        }
    }

    /// A worker a new task would finish soonest on, (count + 1) / speed, uniformly among the
    /// least loaded of the best class; None if no worker is left.
    fn pick(&mut self, rng: &mut impl Rng) -> Option<u32> {
        let mut best: Option<(usize, f64)> = None;
        for (c, (speed, b)) in self.classes.iter_mut().enumerate() {
            if let Some(n) = b.least() {
                let time = f64::from(n + 1) / *speed;
                if best.is_none_or(|(_, t)| time < t) {
                    best = Some((c, time));
                }
            }
        }
        let (c, _) = best?;
        let local = self.classes[c].1.pick(rng)?;
        Some(self.members[c][local as usize])
    }

    fn shift(&mut self, w: u32, up: bool) {
        let (c, local) = self.place[w as usize];
        let b = &mut self.classes[c as usize].1;
        if b.holds(local) {
            b.shift(local, up);
        }
    }

    fn remove(&mut self, w: u32) {
        let (c, local) = self.place[w as usize];
        self.classes[c as usize].1.remove(local);
    }

    fn workers(&self) -> usize {
        self.classes.iter().map(|(_, b)| b.workers()).sum()
    }
}

pub struct JsqIdeal {
    pools: Vec<Classes>,
}

impl JsqIdeal {
    /// `weighted`: rank workers by when a new task would finish, (count + 1) / speed, rather
    /// than by count (the same on alike servers).
    pub fn new(cluster: &Cluster, queue_len: &[u32], weighted: bool) -> Self {
        let pools = (0..cluster.pools.len() as u32)
            .map(|i| {
                let p = &cluster.pools[i as usize];
                let speeds = cluster.pool_worker_speeds(i);
                Classes::new(
                    &queue_len[p.worker_base as usize..(p.worker_base + p.workers()) as usize],
                    weighted.then_some(&speeds[..]),
                )
            })
            .collect();
        Self { pools }
    }
}

impl Policy for JsqIdeal {
    fn on_task_at_spine(&mut self, ctx: &mut Ctx, task: &mut TaskHeader) -> Decision {
        let classes = &mut self.pools[task.pool as usize];
        let worker = loop {
            let w = classes.pick(ctx.rng).expect("a pool always has workers");
            // Dead workers leave the buckets lazily, when first picked; keep at least one so
            // that tasks still have somewhere to go (and are lost there, visibly).
            if ctx.worker_usable(task.pool, w) || classes.workers() == 1 {
                break w;
            }
            classes.remove(w);
        };
        classes.shift(worker, true);
        task.hint = worker;
        Decision::to(ctx.cluster.pools[task.pool as usize].worker_rack[worker as usize])
    }

    fn on_task_at_leaf(&mut self, _ctx: &mut Ctx, _rack: u32, task: &mut TaskHeader) -> Decision {
        Decision::to(task.hint)
    }

    fn on_task_left_worker(&mut self, pool: u32, worker: u32, _now: Nanos) {
        // Shifts only a worker still in its buckets (not removed as dead).
        self.pools[pool as usize].shift(worker, false);
    }

    fn on_task_lost(&mut self, task: &TaskHeader, _now: Nanos) {
        self.on_task_left_worker(task.pool, task.hint, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

    #[test]
    fn weighted_picks_the_worker_a_task_would_finish_soonest_on() {
        let mut rng = stream(1, Stream::Policy, 0);
        // Worker 0 is 8 times as fast: with 3 tasks a new one ends at 4/8, on an idle slow
        // worker at 1/1.
        let mut c = Classes::new(&[3, 0, 0], Some(&[8.0, 1.0, 1.0]));
        assert_eq!(c.pick(&mut rng), Some(0));
        for _ in 0..4 {
            c.shift(0, true);
        }
        // 8/8 against 1/1: a tie goes to the first class with the least; 9/8 loses.
        assert_eq!(c.pick(&mut rng), Some(0));
        c.shift(0, true);
        assert!(matches!(c.pick(&mut rng), Some(1 | 2)));
        // Unweighted, counts alone.
        let mut u = Classes::new(&[3, 0, 1], None);
        assert_eq!(u.classes.len(), 1);
        assert_eq!(u.pick(&mut rng), Some(1));
    }

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
