//! The look-ahead: prefetching the lines the next events will read, in stages, and the notes
//! the stages keep for each other.

use super::*;

/// What the prefetch stages worked out for the events of the queue's window, by their place
/// there, kept from one stage to the next (see [`Engine::prefetch_ahead`]). Place `i` of the
/// window is entry `base + i`: moving the notes down one place is `base += 1`, and only once
/// every [`NOTES`]` - `[`LOOKAHEAD`] events are they copied back to the start of the arrays.
#[derive(Clone, Copy)]
pub(super) struct Notes {
    /// For an arrival, its predicted spine (pod slot); [`NO_SPINE`] for other events and
    /// arrivals without a prediction.
    spine: [u32; NOTES],
    /// The policy's notes.
    policy: [PrefetchNote; NOTES],
    /// Where place 0 of the window is, at most `NOTES - LOOKAHEAD`.
    base: usize,
}

/// Entries of the arrays of [`Notes`]: the base takes [`BASES`] values (a power of two, so that
/// masking it shows the compiler every place is in bounds).
const NOTES: usize = BASES + LOOKAHEAD - 1;
const BASES: usize = 64;

impl Notes {
    pub(super) fn new() -> Self {
        Self {
            spine: [NO_SPINE; NOTES],
            policy: [PrefetchNote::default(); NOTES],
            base: 0,
        }
    }

    /// Drops every note (the window moved out of step with them).
    #[cold]
    pub(super) fn clear(&mut self) {
        self.spine[..LOOKAHEAD].fill(NO_SPINE);
        self.policy[..LOOKAHEAD].fill(PrefetchNote::default());
        self.base = 0;
    }

    /// Moves the notes down one place (the event of place 0 is being handled); the last place's
    /// notes are then stale, and [`Engine::prefetch_ahead`] writes them anew.
    #[inline(always)]
    pub(super) fn shift(&mut self) {
        if self.base == NOTES - LOOKAHEAD {
            // Places 1 .. LOOKAHEAD - 1 to 0 .. (the last one is written anew).
            let b = self.base;
            self.spine.copy_within(b + 1..b + LOOKAHEAD, 0);
            self.policy.copy_within(b + 1..b + LOOKAHEAD, 0);
            self.base = 0;
        } else {
            self.base += 1;
        }
    }
}

/// No predicted spine, in [`Notes::spine`].
pub(super) const NO_SPINE: u32 = u32::MAX;

impl Engine {
    /// Prefetches in stages, each following the pointers that the previous one brought in one event
    /// earlier: the lines the event [`LOOKAHEAD`]` - 1` places ahead reads directly, the lines they
    /// lead to two events later (a worker's line, which the first stage loads for every worker
    /// event, would often not be in after one), and so on down the policy's
    /// [`PrefetchStage`](crate::policy::PrefetchStage)s to the next event.
    /// At the scale of a datacenter every event waits on memory; this way the waits of several
    /// events overlap.
    ///
    /// What a stage works out is kept in [`Notes`] for the next, and the notes move down one place
    /// with each event: an arrival's spine is drawn once, from `spine_rng`, when the arrival enters
    /// the stages, and the policy's stages pass on a [`PrefetchNote`]. An event pushed into the
    /// window (before its last) puts the window out of step with the notes: they are all dropped
    /// then, and the next arrival handled without a prediction, or with a wrong one, puts
    /// `spine_rng` back on `entry_rng`'s track.
    pub(super) fn prefetch_ahead(&mut self) {
        const DIRECT: usize = LOOKAHEAD - 1;
        // The engine's second stage and the policy's index stage.
        const SECOND: usize = LOOKAHEAD - 3;
        if !self.policy_prefetches {
            if let Some(&e) = self.queue.ahead(DIRECT) {
                self.prefetch(e);
            }
            if let Some(&e) = self.queue.ahead(SECOND) {
                self.prefetch_indirect(e);
            }
            return;
        }
        if self.queue.window_insertions() == self.insertions {
            let n = &mut self.notes;
            self.current_spine = n.spine[n.base % BASES];
            n.shift();
        } else {
            self.insertions = self.queue.window_insertions();
            self.current_spine = NO_SPINE;
            self.notes.clear();
        }
        // (`% BASES` tells the compiler what it cannot see: `base + LOOKAHEAD <= NOTES`.)
        let base = self.notes.base % BASES;
        self.notes.policy[base + DIRECT] = PrefetchNote::default();
        self.notes.spine[base + DIRECT] = NO_SPINE;
        if let Some(&e) = self.queue.ahead(DIRECT) {
            self.prefetch(e);
            if let Ev::Arrival(pool) = e {
                self.notes.spine[base + DIRECT] =
                    Self::draw_spine(&mut self.spine_rng, &self.pod_draws, pool);
            }
        }
        if let Some(&e) = self.queue.ahead(SECOND) {
            self.prefetch_indirect(e);
            let spine = self.notes.spine[base + SECOND];
            if let Some(next) = Self::upcoming(&self.tasks, &self.workers, &self.messages, e, spine)
            {
                self.policy.prefetch_index(
                    &self.cluster,
                    next,
                    &mut self.notes.policy[base + SECOND],
                );
            }
        }
        let later = self.notes.policy[base..]
            .first_chunk_mut::<SECOND>()
            .expect("the window has room for the later stages");
        self.policy.prefetch(&self.cluster, later);
    }

    /// The spine (pod slot) an arrival of `pool` draws from `rng`, as [`Engine::on_arrival`] does.
    #[inline]
    pub(super) fn draw_spine(rng: &mut SimRng, pod_draws: &[PodDraw], pool: u32) -> u32 {
        pod_draws[pool as usize].draw(rng)
    }

    /// Puts `spine_rng` back on `entry_rng`'s track, just after an arrival drew its spine: the
    /// arrivals of the window that entered the stages draw their spines again, and those whose
    /// spine changes lose what their stages worked out (it followed another spine).
    #[cold]
    #[inline(never)]
    pub(super) fn resync_spines(&mut self) {
        self.spine_rng = self.entry_rng.clone();
        for pos in 0..LOOKAHEAD {
            let Some(&e) = self.queue.ahead(pos) else {
                break;
            };
            let spine = match e {
                Ev::Arrival(pool) => Self::draw_spine(&mut self.spine_rng, &self.pod_draws, pool),
                _ => NO_SPINE,
            };
            let i = self.notes.base + pos;
            if self.notes.spine[i] != spine {
                self.notes.spine[i] = spine;
                self.notes.policy[i] = PrefetchNote::default();
            }
        }
    }

    /// Starts loading what `ev` will read first (see [`crate::prefetch`]).
    #[inline(always)]
    pub(super) fn prefetch(&self, ev: Ev) {
        use crate::prefetch;
        match ev {
            Ev::Arrival(pool) => {
                prefetch(&self.pool_rngs[pool as usize]);
                prefetch(&self.metrics.pools[pool as usize].in_system);
                // The spine draw's binary search reads lines all over it.
                self.pod_draws[pool as usize].prefetch();
            }
            Ev::AtLeaf { task, .. } => prefetch(&self.tasks[task as usize]),
            Ev::AtWorker { task, worker } => {
                prefetch(&self.tasks[task as usize]);
                prefetch(&self.workers[worker as usize]);
            }
            Ev::Done(worker) | Ev::Reply { worker, .. } => prefetch(&self.workers[worker as usize]),
            Ev::Msg(i) => prefetch(&self.messages[i as usize]),
            Ev::Steal(_) | Ev::Fail(_) | Ev::Notice(_) | Ev::Sample => {}
        }
    }

    /// The second stage of prefetching `ev`: what the lines [`Engine::prefetch`] loaded point to.
    #[inline(always)]
    pub(super) fn prefetch_indirect(&self, ev: Ev) {
        use crate::prefetch;
        match ev {
            Ev::Done(worker) => {
                let w = &self.workers[worker as usize];
                if let Some(q) = w.next_out() {
                    prefetch(q);
                }
                crate::prefetch_all(&self.metrics.pools[w.pool as usize]);
            }
            Ev::AtWorker { worker, .. } => {
                if let Some(q) = self.workers[worker as usize].next_in() {
                    prefetch(q);
                }
            }
            _ => {}
        }
    }

    /// The policy call that `ev` will make, as far as the lines [`Engine::prefetch`] loaded tell;
    /// `spine` is the predicted spine of an arrival.
    #[inline]
    pub(super) fn upcoming(
        tasks: &[Task],
        workers: &[Worker],
        messages: &[Message],
        ev: Ev,
        spine: u32,
    ) -> Option<Upcoming> {
        Some(match ev {
            Ev::Arrival(_) if spine == NO_SPINE => return None,
            Ev::Arrival(pool) => Upcoming::TaskAtSpine { pool, spine },
            Ev::AtLeaf { task, rack } => Upcoming::TaskAtLeaf {
                pool: tasks[task as usize].header.pool,
                rack,
            },
            Ev::Reply { worker, .. } => {
                let w = &workers[worker as usize];
                Upcoming::ReplyAtLeaf {
                    pool: w.pool,
                    rack: w.rack_slot,
                    worker: w.local,
                }
            }
            Ev::Msg(i) => Upcoming::Message(messages[i as usize]),
            _ => return None,
        })
    }
}
