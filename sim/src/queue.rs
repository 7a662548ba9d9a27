//! The event queue: FIFO lanes for fixed delays and a radix heap, keyed by (time, sequence number).
//!
//! A discrete-event simulation only ever schedules events at or after the current time, so the keys
//! popped from the queue never decrease. A radix heap exploits that: an element moves between its
//! buckets at most once per byte of distance from the last popped time (a level of 256 buckets per
//! byte), with sequential `Vec` traffic instead of the pointer-chasing sift of a binary heap over a
//! million pending events.
//!
//! The key packs the time in its upper 64 bits and a global insertion counter in its lower 64 bits,
//! so every key is unique and events at the same nanosecond leave in the order they were scheduled.
//! That makes the pop order, and hence every result, a pure function of the seed.
//!
//! In front of both stores, a small sorted window holds the next few events (the smallest keys), so
//! that the engine can see them before it handles them and start loading what they will touch
//! ([`EventQueue::ahead`]): at the scale of a datacenter the simulation waits on memory, and
//! prefetching a few events ahead overlaps those waits.

/// Simulated time in integer nanoseconds.
pub type Nanos = u64;

/// At most this many FIFO lanes (distinct delays of [`EventQueue::push_after`]); further delays go
/// to the radix heap.
const MAX_LANES: usize = 16;

/// How many events ahead of its front a lane is prefetched (eight lines).
const LANE_READ_AHEAD: usize = 16;

/// Events kept in the sorted window in front of the lanes and the heap.
pub const LOOKAHEAD: usize = 7;

/// Places in the window's ring (a power of two, more than [`LOOKAHEAD`]): events pushed before
/// its last make the window hold more than [`LOOKAHEAD`] for a while, the ones past these in
/// [`Window::overflow`].
const WINDOW: usize = 8;

/// The window: a ring of [`WINDOW`] places, sorted from `head` on, and in the rare case that
/// events pushed before its last fill it, its later events in order in `overflow`.
struct Window<T> {
    ring: [(u128, T); WINDOW],
    head: usize,
    len: usize,
    /// The window's events after the ring's (empty unless the ring is at least
    /// [`LOOKAHEAD`] long).
    overflow: std::collections::VecDeque<(u128, T)>,
    /// The window's last key (in `overflow` if that is not empty), kept up to date so that every
    /// push can compare with it at once; 0 when the window is empty (no key is below it).
    last: u128,
}

impl<T: Copy + Default> Window<T> {
    fn new() -> Self {
        Self {
            ring: [(0, T::default()); WINDOW],
            head: 0,
            len: 0,
            overflow: std::collections::VecDeque::new(),
            last: 0,
        }
    }

    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        (self.head + i) % WINDOW
    }

    /// Events in the ring.
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&(u128, T)> {
        (i < self.len).then(|| &self.ring[self.at(i)])
    }

    /// The window's last key, 0 if it is empty.
    #[inline(always)]
    fn last_key(&self) -> u128 {
        debug_assert_eq!(
            self.last,
            if self.overflow.is_empty() {
                self.len
                    .checked_sub(1)
                    .map_or(0, |i| self.ring[self.at(i)].0)
            } else {
                self.overflow.back().map_or(0, |&(k, _)| k)
            }
        );
        self.last
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<(u128, T)> {
        if self.len == 0 {
            return None;
        }
        let e = self.ring[self.head];
        self.head = (self.head + 1) % WINDOW;
        self.len -= 1;
        if self.len == 0 && self.overflow.is_empty() {
            self.last = 0;
        }
        Some(e)
    }

    /// Appends `e` to the ring, which must have room (it has for [`LOOKAHEAD`] events).
    #[inline(always)]
    fn push_back(&mut self, e: (u128, T)) {
        debug_assert!(self.len < WINDOW);
        let i = self.at(self.len);
        self.ring[i] = e;
        self.len += 1;
        // An event from the overflow is not the last if others are left there.
        if self.overflow.is_empty() {
            self.last = e.0;
        }
    }

    /// Files `key`, which is below the window's last, in its place, moving the later events
    /// back one.
    #[inline]
    fn insert_sorted(&mut self, key: u128, item: T) {
        if !self.overflow.is_empty() || self.len == WINDOW {
            return self.insert_full(key, item);
        }
        self.ring_insert(key, item);
    }

    /// Files `key`, below the ring's last, in the ring, which must have room.
    #[inline(always)]
    fn ring_insert(&mut self, key: u128, item: T) {
        let mut i = self.len;
        while i > 0 && self.ring[self.at(i - 1)].0 > key {
            let (to, from) = (self.at(i), self.at(i - 1));
            self.ring[to] = self.ring[from];
            i -= 1;
        }
        let at = self.at(i);
        self.ring[at] = (key, item);
        self.len += 1;
    }

    /// [`Window::insert_sorted`] when the ring is full or the window overflows.
    #[cold]
    #[inline(never)]
    fn insert_full(&mut self, key: u128, item: T) {
        let ring_last = self.ring[self.at(self.len - 1)].0;
        if key > ring_last {
            let at = self.overflow.partition_point(|&(k, _)| k < key);
            self.overflow.insert(at, (key, item));
            return;
        }
        if self.len == WINDOW {
            self.len -= 1;
            let last = self.ring[self.at(self.len)];
            self.overflow.push_front(last);
        }
        self.ring_insert(key, item);
    }
}

/// A monotone priority queue of `T` ordered by (time, insertion order).
///
/// Two stores, one order. Events scheduled a fixed delay after the current time (network hops:
/// [`EventQueue::push_after`]) go to a FIFO lane per distinct delay: the current time never
/// decreases, so each lane is sorted by construction and costs one [`Ring`] push and pop per
/// event. Everything else (service completions, arrivals) goes to the radix heap. `pop` takes the
/// smallest (time, sequence) key among the lanes' fronts and the heap's minimum, so the order is
/// exactly that of a single priority queue.
pub struct EventQueue<T> {
    /// The smallest keys, in order: at least `LOOKAHEAD` of them unless the queue holds fewer (more
    /// when events were scheduled before the window's last), and every key in the lanes and the
    /// heap is larger than the window's last.
    window: Window<T>,
    heap: RadixHeap<T>,
    lanes: Vec<Lane<T>>,
    /// The key at the front of each lane (`u128::MAX` when empty), kept apart from the lanes'
    /// buffers.
    fronts: Vec<u128>,
    /// The lanes by increasing front key (empty lanes last): `pop` compares the first one's front
    /// with the heap's minimum, and a lane whose front changed moves back into its place, which is
    /// usually next to where it was.
    order: Vec<usize>,
    /// Time of the last popped event.
    now: Nanos,
    /// Events pushed into the window, before its last (which moves the window's later events
    /// back one place).
    window_insertions: u64,
    next_seq: u64,
    len: usize,
}

struct Lane<T> {
    delay: Nanos,
    items: Ring<(u128, T)>,
}

impl<T: Copy + Default> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default> EventQueue<T> {
    pub fn new() -> Self {
        Self {
            window: Window::new(),
            heap: RadixHeap::new(),
            lanes: Vec::new(),
            fronts: Vec::new(),
            order: Vec::new(),
            now: 0,
            window_insertions: 0,
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

    fn key(&mut self, time: Nanos) -> u128 {
        let key = ((time as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        self.len += 1;
        key
    }

    /// Schedules `item` at `time`. Panics if `time` lies before the last popped event: that would
    /// be a causality bug in the caller, not something to paper over.
    pub fn push(&mut self, time: Nanos, item: T) {
        assert!(time >= self.now, "event scheduled in the past: {time} ns");
        let key = self.key(time);
        if let Err((key, item)) = self.file_in_window(key, item) {
            self.heap.push(key, item);
        }
    }

    /// Files `key` in the window if it belongs there (before the window's last key); gives the
    /// event back otherwise. The window then holds more than [`LOOKAHEAD`] events until pops bring
    /// it back: its last event cannot go back to the heap, which may have popped larger keys.
    #[inline]
    fn file_in_window(&mut self, key: u128, item: T) -> Result<(), (u128, T)> {
        match self.window.last_key() {
            last if key < last => {
                self.window.insert_sorted(key, item);
                self.window_insertions += 1;
                Ok(())
            }
            _ => Err((key, item)),
        }
    }

    /// Schedules `item` at `delay` after the last popped event (the current time). Meant for
    /// delays drawn from a small set, such as whole network hops.
    pub fn push_after(&mut self, delay: Nanos, item: T) {
        let key = self.key(self.now + delay);
        let Err((key, item)) = self.file_in_window(key, item) else {
            return;
        };
        match self.lanes.iter().position(|l| l.delay == delay) {
            Some(i) => {
                if self.lanes[i].items.is_empty() {
                    self.fronts[i] = key;
                    self.move_forward(i);
                }
                self.lanes[i].items.push_back((key, item));
            }
            None if self.lanes.len() < MAX_LANES => {
                let mut items = Ring::new();
                items.push_back((key, item));
                self.lanes.push(Lane { delay, items });
                self.fronts.push(key);
                self.order.push(self.lanes.len() - 1);
                self.move_forward(self.lanes.len() - 1);
            }
            None => self.heap.push(key, item),
        }
    }

    /// The event `i` places after the next one to pop (0: the next one), if it is among the next
    /// [`LOOKAHEAD`] events. Events pushed before it is popped may still come first. Meant for
    /// prefetching what those events will touch.
    pub fn ahead(&self, i: usize) -> Option<&T> {
        self.window.get(i).map(|(_, t)| t)
    }

    /// How many events were pushed into the window before its last so far: while it stays the
    /// same, an event moves to the next place of the window with each pop.
    #[inline]
    pub fn window_insertions(&self) -> u64 {
        self.window_insertions
    }

    /// The earliest event, without removing it (until something earlier is pushed, the next
    /// [`EventQueue::pop`]).
    pub fn peek(&mut self) -> Option<&T> {
        self.fill();
        self.ahead(0)
    }

    /// Tops the window up from the lanes and the heap.
    fn fill(&mut self) {
        while self.window.len() < LOOKAHEAD {
            match self.next_in() {
                Some(e) => self.window.push_back(e),
                None => break,
            }
        }
    }

    /// Removes the earliest event, returning its time and payload.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, T)> {
        if self.window.is_empty() {
            self.fill();
        }
        let (key, item) = self.window.pop_front()?;
        self.len -= 1;
        self.now = time_of(key);
        // Usually one event comes in for the one that left.
        if self.window.len() == LOOKAHEAD - 1
            && let Some(e) = self.next_in()
        {
            self.window.push_back(e);
        } else {
            self.fill();
        }
        Some((self.now, item))
    }

    /// Moves lane `i`, whose front key went down (it was empty), forward to its place in
    /// [`EventQueue::order`].
    fn move_forward(&mut self, i: usize) {
        let mut p = self
            .order
            .iter()
            .position(|&l| l == i)
            .expect("every lane is in the order");
        while p > 0 && self.fronts[self.order[p - 1]] > self.fronts[i] {
            self.order[p] = self.order[p - 1];
            p -= 1;
        }
        self.order[p] = i;
    }

    /// The next event for the window's ring: the window's overflow's first, else the smallest of
    /// the lanes and the heap.
    #[inline(always)]
    fn next_in(&mut self) -> Option<(u128, T)> {
        if self.window.overflow.is_empty() {
            self.pop_rest()
        } else {
            self.window.overflow.pop_front()
        }
    }

    /// The smallest key of the lanes and the heap.
    #[inline(always)]
    fn pop_rest(&mut self) -> Option<(u128, T)> {
        let heap_min = self.heap.min_key();
        match self.order.first() {
            Some(&from) if self.fronts[from] < heap_min => {
                let lane = &mut self.lanes[from].items;
                let popped = lane.pop_front().expect("front seen above");
                let front = lane.front().map_or(u128::MAX, |&(k, _)| k);
                // A lane is read in order, but too slowly for the hardware to stream it: load
                // ahead.
                if let Some(e) = lane.get(LANE_READ_AHEAD) {
                    crate::prefetch(e);
                }
                self.fronts[from] = front;
                // Its front went up: move it back to its place.
                let mut j = 0;
                while let Some(&next) = self.order.get(j + 1)
                    && self.fronts[next] < front
                {
                    self.order[j] = next;
                    j += 1;
                }
                self.order[j] = from;
                Some(popped)
            }
            _ => self.heap.pop(),
        }
    }
}

/// A FIFO ring buffer whose capacity is a power of two, so that its positions wrap with a mask:
/// a lane's `VecDeque` with the wrapping made cheap.
struct Ring<T> {
    buf: Box<[T]>,
    /// Position of the front element.
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    fn new() -> Self {
        Self {
            buf: vec![T::default(); 16].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn push_back(&mut self, e: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = e;
        self.len += 1;
    }

    /// Doubles the capacity, the elements in order from position 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut buf = vec![T::default(); self.buf.len() * 2].into_boxed_slice();
        for (k, slot) in buf.iter_mut().take(self.len).enumerate() {
            *slot = self.buf[(self.head + k) & self.mask()];
        }
        self.buf = buf;
        self.head = 0;
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let e = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(e)
    }

    /// The element `i` places after the front, if there is one.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.buf[(self.head + i) & self.mask()])
    }

    #[inline(always)]
    fn front(&self) -> Option<&T> {
        self.get(0)
    }
}

/// Bits of a radix digit of the time: a heap level has `1 << DIGIT_BITS` buckets.
const DIGIT_BITS: u32 = 8;
const RADIX: usize = 1 << DIGIT_BITS;
/// Digits of a 64-bit time.
const LEVELS: usize = (Nanos::BITS / DIGIT_BITS) as usize;
/// Buckets of all levels.
const BUCKETS: usize = LEVELS * RADIX;

/// Drained buckets from this level up give their buffers to [`RadixHeap::spares`]; lower ones
/// keep them (a level-1 bucket spans 256 ns: all of them together hold little).
const SPARE_LEVEL: usize = 2;
/// Spare buffers kept at most.
const MAX_SPARES: usize = 4;

/// The time part of a key.
fn time_of(key: u128) -> Nanos {
    (key >> 64) as Nanos
}

/// A radix heap on unique u128 keys (time, then sequence) that never go below the last popped key,
/// with one level of [`RADIX`] buckets per digit of the time. An element sits at the level of the
/// most significant digit in which its time differs from the last popped time, in the bucket of
/// its own digit there; it moves down at most once per level, when its bucket is the lowest left
/// (about two moves for a service time of 100 us, where binary digits took about seventeen).
struct RadixHeap<T> {
    /// `buckets[level * RADIX + digit]`. Level 0 holds the times equal to `last` but in the lowest
    /// digit: every element of a level-0 bucket has the same time, and leaves in sequence order.
    buckets: Box<[Vec<(u128, T)>; BUCKETS]>,
    /// Per level, bit `digit` set iff `buckets[level * RADIX + digit]` is non-empty.
    nonempty: [[u64; RADIX / 64]; LEVELS],
    /// Bit `level` set iff some bucket of that level is non-empty.
    levels: u32,
    /// Emptied buffers of drained buckets of level [`SPARE_LEVEL`] and up, for the next such
    /// bucket to fill: each of those holds a large share of the heap for a while, and 256 of them
    /// keeping their capacity would hold hundreds of times the heap.
    spares: Vec<Vec<(u128, T)>>,
    /// The time of the last popped key: every key in the heap is at least this.
    last: Nanos,
    len: usize,
    /// The smallest key and where it is (bucket, index); [`UNKNOWN`] when the heap is empty. A
    /// pop looks for the next one at once (rather than when it is asked for, which after a pop
    /// from the heap it always is, before the next pop): a flag for a minimum not looked for yet
    /// was a branch on whether the last event came from the heap, mostly mispredicted.
    min: (u128, usize, usize),
}

/// [`RadixHeap::min_key`] of an empty heap (no key is this large: its sequence number would be the
/// last of 2^64).
const UNKNOWN: u128 = u128::MAX;

impl<T> RadixHeap<T> {
    fn new() -> Self {
        Self {
            buckets: (0..BUCKETS)
                .map(|_| Vec::new())
                .collect::<Box<[_]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("BUCKETS buckets")),
            nonempty: [[0; RADIX / 64]; LEVELS],
            levels: 0,
            spares: Vec::new(),
            last: 0,
            len: 0,
            min: (UNKNOWN, 0, 0),
        }
    }

    #[inline(always)]
    fn push(&mut self, key: u128, item: T) {
        debug_assert!(time_of(key) >= self.last);
        let b = self.put(key, item);
        // `key` is the new minimum if it is below the old one (any key is, when the heap was
        // empty).
        if key < self.min.0 {
            self.min = (key, b, self.buckets[b].len() - 1);
        }
        self.len += 1;
    }

    /// Files `key` in its bucket; returns the bucket (the key is its last element).
    #[inline(always)]
    fn put(&mut self, key: u128, item: T) -> usize {
        let t = time_of(key);
        // Times equal to `last` but in the lowest digit are level 0, like equal ones.
        let level =
            ((Nanos::BITS - 1 - ((t ^ self.last) | 1).leading_zeros()) / DIGIT_BITS) as usize;
        let digit = (t >> (level as u32 * DIGIT_BITS)) as usize % RADIX;
        self.nonempty[level][digit / 64] |= 1 << (digit % 64);
        self.levels |= 1 << level;
        // (The mask only tells the compiler what it cannot see: `level` is below LEVELS.)
        let b = (level * RADIX + digit) % BUCKETS;
        let bucket = &mut self.buckets[b];
        if bucket.len() == bucket.capacity() {
            self.grow(b);
        }
        self.buckets[b].push((key, item));
        b
    }

    /// Makes room in the full bucket `b`: a spare buffer if it has none and is of a level that
    /// takes them, else the usual doubling.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, b: usize) {
        if b >= SPARE_LEVEL * RADIX
            && self.buckets[b].capacity() == 0
            && let Some(spare) = self.spares.pop()
        {
            self.buckets[b] = spare;
        }
        self.buckets[b].reserve(1);
    }

    /// Marks bucket `b` empty.
    #[inline(always)]
    fn emptied(&mut self, b: usize) {
        let (level, digit) = (b / RADIX, b % RADIX);
        let words = &mut self.nonempty[level];
        words[digit / 64] &= !(1 << (digit % 64));
        if words[digit / 64] == 0 && words.iter().all(|&w| w == 0) {
            self.levels &= !(1 << level);
        }
    }

    /// The smallest key ([`UNKNOWN`] when the heap is empty), without moving anything (`last` may
    /// only advance when a key is popped, since keys between the current time and the minimum may
    /// still be pushed).
    #[inline(always)]
    fn min_key(&self) -> u128 {
        self.min.0
    }

    /// Finds the smallest key of a non-empty heap and where it is.
    #[inline(never)]
    fn find_min(&mut self) {
        let level = self.levels.trailing_zeros() as usize;
        let words = &self.nonempty[level];
        let w = words
            .iter()
            .position(|&w| w != 0)
            .expect("level is non-empty");
        let b = level * RADIX + w * 64 + words[w].trailing_zeros() as usize;
        let (j, k) = self.buckets[b]
            .iter()
            .enumerate()
            .map(|(j, (k, _))| (j, *k))
            .min_by_key(|&(_, k)| k)
            .expect("non-empty bucket");
        self.min = (k, b, j);
    }

    fn pop(&mut self) -> Option<(u128, T)> {
        if self.min_key() == UNKNOWN {
            return None;
        }
        let (key, b, j) = self.min;
        let popped = self.buckets[b].swap_remove(j);
        self.last = time_of(key);
        if b >= RADIX {
            // Every other element of the bucket shares the minimum's digits from this level up,
            // so now that `last` is the minimum's time each lands in a lower level. The bucket is
            // drained in place and its buffer kept for reuse.
            let mut moved = std::mem::take(&mut self.buckets[b]);
            self.emptied(b);
            for (k, item) in moved.drain(..) {
                self.put(k, item);
            }
            if b < SPARE_LEVEL * RADIX {
                self.buckets[b] = moved;
            } else if self.spares.len() < MAX_SPARES {
                self.spares.push(moved);
            }
        } else if self.buckets[b].is_empty() {
            self.emptied(b);
        }
        self.len -= 1;
        if self.len > 0 {
            self.find_min();
        } else {
            self.min = (UNKNOWN, 0, 0);
        }
        Some(popped)
    }
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
                // Many ties on purpose: delays drawn from a tiny range, half of them through the
                // lanes (more distinct delays than lanes, so some overflow into the heap).
                let delay = rng.random_range(0..24u64) * 1000;
                let t = now + delay;
                if rng.random_bool(0.5) {
                    q.push_after(delay, id);
                } else {
                    q.push(t, id);
                }
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
    fn pops_in_order_when_delays_span_every_digit_of_the_time() {
        // Delays from 0 to 2^50 ns, log-uniform, so that elements start at every level of the
        // radix heap and move down through each; a third are exact ties.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut now = 0u64;
        for id in 0..50_000u64 {
            let bits = rng.random_range(0..50);
            let delay = match rng.random_range(0..3) {
                0 => 0,
                _ => rng.random_range(0..1u64 << bits),
            };
            q.push(now + delay, id);
            reference.insert((now + delay, id));
            if rng.random_bool(0.45) {
                let expected = reference.pop_first().unwrap();
                assert_eq!(q.pop().unwrap(), expected);
                now = expected.0;
            }
        }
        while let Some(expected) = reference.pop_first() {
            assert_eq!(q.pop().unwrap(), expected);
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn the_window_takes_more_events_pushed_before_its_last_than_it_has_places() {
        let mut q = EventQueue::new();
        for i in 0..(LOOKAHEAD as u64 + 4) {
            q.push(1000 + 100 * i, i);
        }
        assert_eq!(q.pop(), Some((1000, 0)));
        // All before the window's last (1000 + 100 * LOOKAHEAD), ties included: 5 * WINDOW
        // insertions, so the window grows twice.
        let mut reference: Vec<(u64, u64)> = (1..(LOOKAHEAD as u64 + 4))
            .map(|i| (1000 + 100 * i, i))
            .collect();
        for j in 0..(5 * WINDOW as u64) {
            let t = 1001 + 17 * (j % 30);
            q.push_after(t - 1000, 100 + j);
            reference.push((t, 100 + j));
        }
        reference.sort();
        for expected in reference {
            assert_eq!(q.pop(), Some(expected));
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
