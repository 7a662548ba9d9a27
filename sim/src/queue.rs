//! The event queue: a radix heap keyed by (time, sequence number).
//!
//! A discrete-event simulation only ever schedules events at or after the current time, so the keys
//! popped from the queue never decrease. A radix heap exploits that: an element moves between its
//! 129 buckets at most once per bit of distance from the last popped key, with sequential `Vec`
//! traffic instead of the pointer-chasing sift of a binary heap over a million pending events.
//!
//! The key packs the time in its upper 64 bits and a global insertion counter in its lower 64 bits,
//! so every key is unique and events at the same nanosecond leave in the order they were scheduled.
//! That makes the pop order, and hence every result, a pure function of the seed.

/// Simulated time in integer nanoseconds.
pub type Nanos = u64;

/// A monotone priority queue of `T` ordered by (time, insertion order).
pub struct EventQueue<T> {
    /// `buckets[i]` holds keys whose highest bit differing from `last` is bit `i - 1`;
    /// `buckets[0]` holds only a key equal to `last`.
    buckets: Vec<Vec<(u128, T)>>,
    /// The last popped key: every key in the queue is at least this.
    last: u128,
    next_seq: u64,
    len: usize,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> EventQueue<T> {
    pub fn new() -> Self {
        Self {
            buckets: (0..129).map(|_| Vec::new()).collect(),
            last: 0,
            next_seq: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `item` at `time`. Panics if `time` lies before the last popped event: that would
    /// be a causality bug in the caller, not something to paper over.
    pub fn push(&mut self, time: Nanos, item: T) {
        let key = ((time as u128) << 64) | self.next_seq as u128;
        assert!(key >= self.last, "event scheduled in the past: {time} ns");
        self.next_seq += 1;
        self.len += 1;
        self.buckets[bucket_of(key, self.last)].push((key, item));
    }

    /// Removes the earliest event, returning its time and payload.
    pub fn pop(&mut self) -> Option<(Nanos, T)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = self
                .buckets
                .iter()
                .position(|b| !b.is_empty())
                .expect("len > 0");
            // Every key of bucket i lands in a lower bucket once `last` is its minimum, so the
            // bucket can be drained in place and handed back with its capacity.
            let mut moved = std::mem::take(&mut self.buckets[i]);
            self.last = moved
                .iter()
                .map(|(k, _)| *k)
                .min()
                .expect("non-empty bucket");
            for (key, item) in moved.drain(..) {
                self.buckets[bucket_of(key, self.last)].push((key, item));
            }
            self.buckets[i] = moved;
        }
        let (key, item) = self.buckets[0].pop().expect("bucket 0 filled above");
        self.len -= 1;
        Some(((key >> 64) as Nanos, item))
    }
}

fn bucket_of(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn pops_in_time_then_insertion_order_like_a_sorted_list() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut now = 0u64;
        let mut id = 0u64;
        for _ in 0..20_000 {
            if rng.random_bool(0.55) || q.is_empty() {
                // Many ties on purpose: delays drawn from a tiny range.
                let t = now + rng.random_range(0..4u64) * 1000;
                q.push(t, id);
                reference.push((t, id));
                id += 1;
            } else {
                reference.sort();
                let expected = reference.remove(0);
                let got = q.pop().unwrap();
                assert_eq!(got, expected);
                now = got.0;
            }
        }
        reference.sort();
        for expected in reference {
            assert_eq!(q.pop().unwrap(), expected);
        }
        assert!(q.pop().is_none());
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn refuses_events_before_the_current_time() {
        let mut q = EventQueue::new();
        q.push(10, ());
        q.pop();
        q.push(9, ());
    }
}
