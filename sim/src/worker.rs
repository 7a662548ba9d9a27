//! A worker as the engine keeps it: its FCFS queue and the static facts the hot events need, in
//! one 64-byte cache line.
//!
//! A datacenter has hundreds of thousands of workers and every task touches its worker at random,
//! so each worker event costs a cache miss per line it reads. The task in service lives inline and
//! the waiting ones in a ring buffer of their own, which is only read when a worker has more than
//! one task; the worker's pool, its pool-local index, its rack and its failure are on the same line,
//! so a task's arrival, completion and reply read one line (two when tasks wait).

use crate::queue::Nanos;

/// A task in a worker's queue: what is left to know about it, 16 bytes.
#[derive(Clone, Copy, Default)]
pub struct Queued {
    /// Arrival at the spine, with [`MEASURED`] set for tasks recorded in the histograms.
    pub arrival: Nanos,
    pub service: Nanos,
}

/// Flag in [`Queued::arrival`]: the task is recorded in the latency histograms.
pub const MEASURED: Nanos = 1 << 63;

impl Queued {
    pub fn arrival(&self) -> Nanos {
        self.arrival & !MEASURED
    }
}

/// No failure: the value of [`Worker::failure`] for a live worker.
pub const NO_FAILURE: u32 = u32::MAX;

#[repr(align(64))]
pub struct Worker {
    /// The task in service, valid when `len > 0`.
    head: Queued,
    /// The waiting tasks, in order from `start` (a ring; its length is a power of two or 0).
    ring: Box<[Queued]>,
    start: u32,
    /// Tasks at the worker, in service and waiting.
    len: u32,
    pub pool: u32,
    /// Index within its pool.
    pub local: u32,
    /// Physical rack, and the pool's rack slot of it.
    pub rack: u32,
    pub rack_slot: u32,
    /// The failure that took this worker itself down ([`NO_FAILURE`] if none).
    pub failure: u32,
    /// Down (itself or its rack): its queue was lost and it serves nothing more.
    pub failed: bool,
    /// Received a task with `tag` 1 (or started prefilled) since it last ran dry: its next
    /// reply with an empty queue carries `tag` 1 (see [`crate::policy::Reply::tag`]).
    pub announce: bool,
}

impl Worker {
    pub fn new(pool: u32, local: u32, rack: u32, rack_slot: u32) -> Self {
        Self {
            head: Queued::default(),
            ring: Box::new([]),
            start: 0,
            len: 0,
            pool,
            local,
            rack,
            rack_slot,
            failure: NO_FAILURE,
            failed: false,
            announce: false,
        }
    }

    /// Tasks at the worker (in service and waiting).
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The task in service.
    pub fn front(&self) -> Option<&Queued> {
        (self.len > 0).then_some(&self.head)
    }

    /// Appends a task; it is in service if the worker was idle.
    pub fn push_back(&mut self, q: Queued) {
        if self.len == 0 {
            self.head = q;
        } else {
            let waiting = self.len as usize - 1;
            if waiting == self.ring.len() {
                self.grow();
            }
            let mask = self.ring.len() - 1;
            self.ring[(self.start as usize + waiting) & mask] = q;
        }
        self.len += 1;
    }

    /// Removes the task in service; the first waiting one (if any) takes its place.
    pub fn pop_front(&mut self) -> Option<Queued> {
        if self.len == 0 {
            return None;
        }
        let done = self.head;
        if self.len > 1 {
            self.head = self.ring[self.start as usize];
            self.start = ((self.start as usize + 1) & (self.ring.len() - 1)) as u32;
        }
        self.len -= 1;
        Some(done)
    }

    /// The ring slot the next [`Worker::pop_front`] reads (the first waiting task), if any.
    pub fn next_out(&self) -> Option<&Queued> {
        (self.len > 1).then(|| &self.ring[self.start as usize])
    }

    /// The ring slot the next [`Worker::push_back`] writes, if it writes one without growing.
    pub fn next_in(&self) -> Option<&Queued> {
        let waiting = self.len.saturating_sub(1) as usize;
        (self.len > 0 && waiting < self.ring.len())
            .then(|| &self.ring[(self.start as usize + waiting) & (self.ring.len() - 1)])
    }

    /// Every task at the worker, in queue order.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> {
        let mask = self.ring.len().wrapping_sub(1);
        let start = self.start as usize;
        self.front().into_iter().chain(
            (0..self.len.saturating_sub(1) as usize).map(move |i| &self.ring[(start + i) & mask]),
        )
    }

    /// Removes the waiting tasks (all but the one in service), in queue order.
    pub fn take_waiting(&mut self) -> Vec<Queued> {
        let waiting: Vec<Queued> = self.iter().skip(1).copied().collect();
        self.len = self.len.min(1);
        self.start = 0;
        waiting
    }

    /// Empties the queue, keeping the ring's storage.
    pub fn clear(&mut self) {
        self.len = 0;
        self.start = 0;
    }

    fn grow(&mut self) {
        let old = self.ring.len();
        let mut ring = vec![Queued::default(); (old * 2).max(4)].into_boxed_slice();
        for (i, slot) in ring.iter_mut().take(old).enumerate() {
            *slot = self.ring[(self.start as usize + i) & (old - 1)];
        }
        self.ring = ring;
        self.start = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn fits_one_cache_line() {
        assert_eq!(std::mem::size_of::<Worker>(), 64);
    }

    #[test]
    fn behaves_like_a_fifo() {
        let mut w = Worker::new(0, 0, 0, 0);
        let mut reference = VecDeque::new();
        let mut x = 12345u64;
        for i in 0..10_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 != 0 || reference.is_empty() {
                let q = Queued {
                    arrival: i,
                    service: x,
                };
                w.push_back(q);
                reference.push_back((i, x));
            } else {
                let got = w.pop_front().unwrap();
                assert_eq!((got.arrival, got.service), reference.pop_front().unwrap());
            }
            assert_eq!(w.len() as usize, reference.len());
            assert_eq!(w.front().map(|q| q.arrival), reference.front().map(|r| r.0));
            if i % 1000 == 0 {
                let all: Vec<_> = w.iter().map(|q| (q.arrival, q.service)).collect();
                assert_eq!(all, reference.iter().copied().collect::<Vec<_>>());
            }
        }
        // Taking the waiting tasks leaves the one in service.
        let head = w.front().map(|q| q.arrival);
        let waiting: Vec<_> = w.take_waiting().iter().map(|q| q.arrival).collect();
        let expected: Vec<_> = reference.iter().skip(1).map(|r| r.0).collect();
        assert_eq!(waiting, expected);
        assert_eq!((w.len(), w.front().map(|q| q.arrival)), (1, head));
        w.push_back(Queued::default());
        assert_eq!(w.len(), 2);
        w.clear();
        assert!(w.is_empty() && w.pop_front().is_none() && w.iter().next().is_none());
    }
}
