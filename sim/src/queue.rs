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

/// A radix heap on unique u128 keys (time, then sequence), none below the current time, with one
/// level of [`RADIX`] buckets per digit of the time, whose buckets keep their elements in
/// sequence order so that the minimum is always the front of a bucket: nothing is ever scanned
/// for it.
///
/// An element sits at the level of the most significant digit in which its time differs from
/// `base`, in the bucket of its own digit there. When no element is left at level 0, the lowest
/// bucket of the lowest level is cascaded: `base` moves to the start of the time range that bucket
/// covers (its own digit there, zeros below) and its elements, in order, into the lower levels,
/// all empty at that moment. So an element moves down at most once per level (about two moves for
/// a service time of 100 us), a bucket fills in sequence order (cascades into empty buckets, then
/// pushes, whose sequence numbers only grow), and a level-0 bucket, whose elements all have the
/// same time, leaves from its front. A cascade may move `base` past the current time; an element
/// pushed before `base` then goes to `early`, a binary heap, which holds only such elements and so
/// leaves before any bucket.
struct RadixHeap<T> {
    /// `buckets[level * RADIX + digit]`.
    buckets: Box<[Vec<(u128, T)>; BUCKETS]>,
    /// Per level-0 bucket, how many of its elements have left (they stay in the buffer until the
    /// last one leaves).
    heads: [u32; RADIX],
    /// Per level, bit `digit` set iff `buckets[level * RADIX + digit]` holds an element.
    nonempty: [[u64; RADIX / 64]; LEVELS],
    /// Bit `level` set iff some bucket of that level holds an element.
    levels: u32,
    /// Emptied buffers of cascaded buckets of level [`SPARE_LEVEL`] and up, for the next such
    /// bucket to fill: each of those holds a large share of the heap for a while, and 256 of them
    /// keeping their capacity would hold hundreds of times the heap.
    spares: Vec<Vec<(u128, T)>>,
    /// Every element of the buckets is at least this time.
    base: Nanos,
    /// The elements before `base` (pushed after a cascade moved `base` past the current time).
    early: std::collections::BinaryHeap<Early<T>>,
    len: usize,
    /// The smallest key, [`UNKNOWN`] when the heap is empty: known at once after every change,
    /// since the queue asks for it before nearly every pop.
    min: u128,
    /// While `early` is empty, the level-0 bucket that holds `min`, or [`NO_FRONT`] where it is
    /// in a bucket to cascade.
    front: usize,
}

/// [`RadixHeap::front`] when `min` is not in a level-0 bucket.
const NO_FRONT: usize = usize::MAX;

/// An element of [`RadixHeap::early`], ordered by its key, smallest first.
struct Early<T>(u128, T);

impl<T> PartialEq for Early<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T> Eq for Early<T> {}

impl<T> PartialOrd for Early<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Early<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: `BinaryHeap` is a max-heap.
        other.0.cmp(&self.0)
    }
}

/// [`RadixHeap::min_key`] of an empty heap (no key is this large: its sequence number would be the
/// last of 2^64).
const UNKNOWN: u128 = u128::MAX;

impl<T: Copy> RadixHeap<T> {
    fn new() -> Self {
        Self {
            buckets: (0..BUCKETS)
                .map(|_| Vec::new())
                .collect::<Box<[_]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("BUCKETS buckets")),
            heads: [0; RADIX],
            nonempty: [[0; RADIX / 64]; LEVELS],
            levels: 0,
            spares: Vec::new(),
            base: 0,
            early: std::collections::BinaryHeap::new(),
            len: 0,
            min: UNKNOWN,
            front: NO_FRONT,
        }
    }

    #[inline(always)]
    fn push(&mut self, key: u128, item: T) {
        if time_of(key) < self.base {
            self.early.push(Early(key, item));
        } else {
            let b = self.put(key, item);
            if key < self.min {
                // The new minimum's bucket: a level-0 one, or one to cascade (the buckets were
                // empty).
                self.front = if b < RADIX { b } else { NO_FRONT };
            }
        }
        self.min = self.min.min(key);
        self.len += 1;
    }

    /// Files `key`, at least `base`, in its bucket, behind the bucket's elements; returns the
    /// bucket.
    #[inline(always)]
    fn put(&mut self, key: u128, item: T) -> usize {
        let t = time_of(key);
        debug_assert!(t >= self.base);
        // Times equal to `base` are level 0, like those that differ from it in the lowest digit.
        let level =
            ((Nanos::BITS - 1 - ((t ^ self.base) | 1).leading_zeros()) / DIGIT_BITS) as usize;
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

    /// The lowest non-empty bucket's digit at `level`, which must have one.
    #[inline(always)]
    fn lowest_digit(&self, level: usize) -> usize {
        let words = &self.nonempty[level];
        let w = words
            .iter()
            .position(|&w| w != 0)
            .expect("the level has a non-empty bucket");
        w * 64 + words[w].trailing_zeros() as usize
    }

    /// Marks bucket (`level`, `digit`) empty.
    #[inline(always)]
    fn emptied(&mut self, level: usize, digit: usize) {
        let words = &mut self.nonempty[level];
        words[digit / 64] &= !(1 << (digit % 64));
        if words[digit / 64] == 0 && words.iter().all(|&w| w == 0) {
            self.levels &= !(1 << level);
        }
    }

    /// The lowest non-empty level-0 bucket's digit, cascading until level 0 has one; the buckets
    /// must hold an element.
    #[inline(always)]
    fn front_digit(&mut self) -> usize {
        if self.levels & 1 == 0 {
            self.cascade();
        }
        self.lowest_digit(0)
    }

    /// Moves the lowest bucket of the lowest level down, and again until level 0 has an element.
    #[inline(never)]
    fn cascade(&mut self) {
        while self.levels & 1 == 0 {
            let level = self.levels.trailing_zeros() as usize;
            let digit = self.lowest_digit(level);
            let shift = level as u32 * DIGIT_BITS;
            // The start of the bucket's range: `base`'s higher digits, the bucket's digit, zeros
            // below (two shifts each way, each below 64 bits, also for the top level).
            let above = self.base >> shift >> DIGIT_BITS << DIGIT_BITS << shift;
            self.base = above | ((digit as Nanos) << shift);
            let b = level * RADIX + digit;
            let mut moved = std::mem::take(&mut self.buckets[b]);
            self.emptied(level, digit);
            for &(k, item) in &moved {
                self.put(k, item);
            }
            moved.clear();
            if level < SPARE_LEVEL {
                self.buckets[b] = moved;
            } else if self.spares.len() < MAX_SPARES {
                self.spares.push(moved);
            }
        }
    }

    /// The smallest key ([`UNKNOWN`] when the heap is empty).
    #[inline(always)]
    fn min_key(&self) -> u128 {
        self.min
    }

    fn pop(&mut self) -> Option<(u128, T)> {
        if self.min == UNKNOWN {
            return None;
        }
        let popped = if let Some(Early(key, item)) = self.early_pop() {
            // The buckets may have taken smaller keys than their minimum since `front` was
            // last known.
            self.front = NO_FRONT;
            (key, item)
        } else {
            let d = match self.front {
                NO_FRONT => self.front_digit(),
                d => d % RADIX,
            };
            let bucket = &mut self.buckets[d];
            let head = self.heads[d] as usize;
            let e = bucket[head];
            if head + 1 == bucket.len() {
                bucket.clear();
                self.heads[d] = 0;
                self.emptied(0, d);
                self.front = NO_FRONT;
            } else {
                self.heads[d] += 1;
                self.front = d;
            }
            e
        };
        self.len -= 1;
        self.min = if !self.early.is_empty() {
            self.early.peek().expect("not empty").0
        } else if self.len == 0 {
            UNKNOWN
        } else {
            if self.front == NO_FRONT {
                self.front = self.front_digit();
            }
            let d = self.front % RADIX;
            self.buckets[d][self.heads[d] as usize].0
        };
        Some(popped)
    }

    /// `early`'s smallest element, taken out, if it has one.
    #[inline(always)]
    fn early_pop(&mut self) -> Option<Early<T>> {
        if self.early.is_empty() {
            None
        } else {
            self.early.pop()
        }
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
    fn the_heap_pops_in_key_order_through_cascades_and_pushes_before_its_base() {
        // The heap alone, keys as the queue makes them (time, then a growing sequence number).
        // A lone far event makes a cascade move `base` far past the current time; the events
        // pushed before it then go to `early`, and must still leave first, in order.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut heap = RadixHeap::new();
        let mut reference = std::collections::BTreeSet::new();
        let (mut now, mut seq, mut early_seen, mut cascaded_past_now) = (0u64, 0u64, 0, 0);
        for round in 0..4_000u64 {
            // Every so often, the heap drained to one far event: the next pop cascades to it.
            let burst = if round % 50 == 0 {
                1
            } else {
                rng.random_range(1..6)
            };
            for _ in 0..burst {
                // Ties at far times too (a few round times ahead), which cascade down together
                // and must keep their order.
                let delay = match rng.random_range(0..5) {
                    0 => 0,
                    1 => rng.random_range(0..300),
                    2 => rng.random_range(0..1u64 << 20),
                    3 => (now | 0xffff) + 1 + (rng.random_range(0..4) << 16) - now,
                    _ => rng.random_range(0..1u64 << 40),
                };
                let key = ((u128::from(now + delay)) << 64) | u128::from(seq);
                seq += 1;
                heap.push(key, seq);
                reference.insert((key, seq));
                early_seen += usize::from(!heap.early.is_empty());
            }
            for _ in 0..rng.random_range(0..6) {
                let Some(expected) = reference.pop_first() else {
                    break;
                };
                assert_eq!(heap.min_key(), expected.0);
                assert_eq!(heap.pop(), Some(expected));
                now = time_of(expected.0);
                cascaded_past_now += usize::from(heap.base > now);
            }
        }
        while let Some(expected) = reference.pop_first() {
            assert_eq!(heap.pop(), Some(expected));
        }
        assert_eq!(heap.min_key(), UNKNOWN);
        assert!(heap.pop().is_none());
        assert!(
            early_seen > 100 && cascaded_past_now > 100,
            "{early_seen} {cascaded_past_now}"
        );
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
