//! The JBSQ leaf's counters (the model's `JbsqCounters`, in its register order), counted from
//! every pass leaving the core: each a 32-bit register, wrapping, as the paper leaf's counters.
//!
//! Each counter is a flag of the leaving pass, or a sum of a few:
//!
//! | counter | the leaving pass |
//! |---|---|
//! | `tasks` | a task's first pass of a configured pool (`pool_ok`) |
//! | `placed` | a task that took a token not stale |
//! | `held`, `released`, `buffer_full`, `token_overflow` | `queueCtl`'s `held`, `release`, `buf_full`, `overflow` |
//! | `fallback` | a task over a bound |
//! | `dropped` | a task dropped on a full region (`dropped`), or of a configured pool with no member |
//! | `max_depth` | the greatest `depth` a hold left |
//! | `stale_tokens` | a task that popped a removed node's token |
//! | `replies_not_in_pool`, `replies_spurious` | a reply of a configured pool dropped by `nodeCfg`; `outstanding`'s `spurious` |
//! | `resubmits` | a pass that comes back (`again`) |
//! | `sent_idle_add`, `sent_idle_remove`, `sent_load_update`, `idle_repairs` | `link`'s and `poolAvg`'s flags |
//! | `discarded` | a configure pass, or a move of a configured pool's buffer region: the tasks its pool held (`queueCtl`'s `discarded`) |
//! | `unknown_pool` | a task's first pass, a continuation or a reply of a pool not configured |
//! | `not_scheduled`, `to_control` | decode's `is_other`, `is_to_control` |
//! | `continuations`, `continuation_miss` | a continuation of a configured pool forwarded or not |
//! | `conn_inserts`, `conn_collisions`, `conn_expired` | `conn`'s flags |

use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use rust_hdl::prelude::*;

/// The counters' values, in the model's register order (`JbsqCounters::named`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JbsqCounts {
    pub tasks: Bits<32>,
    pub placed: Bits<32>,
    pub held: Bits<32>,
    pub released: Bits<32>,
    pub buffer_full: Bits<32>,
    pub fallback: Bits<32>,
    pub dropped: Bits<32>,
    pub max_depth: Bits<32>,
    pub stale_tokens: Bits<32>,
    pub token_overflow: Bits<32>,
    pub replies_not_in_pool: Bits<32>,
    pub replies_spurious: Bits<32>,
    pub resubmits: Bits<32>,
    pub sent_idle_add: Bits<32>,
    pub sent_idle_remove: Bits<32>,
    pub sent_load_update: Bits<32>,
    pub idle_repairs: Bits<32>,
    pub discarded: Bits<32>,
    pub unknown_pool: Bits<32>,
    pub not_scheduled: Bits<32>,
    pub to_control: Bits<32>,
    pub continuations: Bits<32>,
    pub continuation_miss: Bits<32>,
    pub conn_inserts: Bits<32>,
    pub conn_collisions: Bits<32>,
    pub conn_expired: Bits<32>,
}

/// The counters, counting the pass leaving the core each clock.
#[derive(LogicBlock)]
pub struct JbsqCounterBlock {
    pub clock: Signal<In, Clock>,
    pub pass_valid: Signal<In, Bit>,
    pub pass: Signal<In, JbsqPhv>,
    pub again: Signal<In, Bit>,
    pub counts: Signal<Out, JbsqCounts>,

    c: DFF<JbsqCounts>,
    /// The counters' registers, read.
    q: Signal<Local, JbsqCounts>,
    /// The pass, not live unless `pass_valid`; the counters read a few of its fields (the name
    /// matches Verilator's `--unused-regexp`).
    p_unused: Signal<Local, JbsqPhv>,
    first: Signal<Local, Bit>,
    /// The pass's pool was found configured (a control pass and a frame through no table
    /// neither).
    sched: Signal<Local, Bit>,
    /// `discarded`'s and `max_depth`'s operands, widened.
    disc_w: ZeroExtend<16, 32>,
    depth_w: ZeroExtend<16, 32>,
    one: Constant<Bits<32>>,
}

impl Default for JbsqCounterBlock {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            pass_valid: Default::default(),
            pass: Default::default(),
            again: Default::default(),
            counts: Default::default(),
            c: Default::default(),
            q: Default::default(),
            p_unused: Default::default(),
            first: Default::default(),
            sched: Default::default(),
            disc_w: Default::default(),
            depth_w: Default::default(),
            one: Constant::new(1.into()),
        }
    }
}

impl Logic for JbsqCounterBlock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c);
        self.p_unused.next = self.pass.val();
        if !self.pass_valid.val() {
            self.p_unused.next.live = false;
        }
        self.q.next = self.c.q.val();
        self.c.d.next = self.c.q.val();
        self.first.next =
            self.p_unused.val().live & self.p_unused.val().is_task & !self.p_unused.val().is_retry;
        self.sched.next = self.p_unused.val().live
            & (self.p_unused.val().is_task
                | self.p_unused.val().is_cont
                | self.p_unused.val().is_reply);
        if self.first.val() & self.p_unused.val().pool_ok {
            self.c.d.next.tasks = self.q.val().tasks + self.one.val();
        }
        if self.p_unused.val().live
            & self.p_unused.val().is_task
            & self.p_unused.val().pop
            & !self.p_unused.val().stale
        {
            self.c.d.next.placed = self.q.val().placed + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().held {
            self.c.d.next.held = self.q.val().held + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().release {
            self.c.d.next.released = self.q.val().released + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().buf_full {
            self.c.d.next.buffer_full = self.q.val().buffer_full + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().is_task & self.p_unused.val().fallback {
            self.c.d.next.fallback = self.q.val().fallback + self.one.val();
        }
        if self.p_unused.val().live
            & self.p_unused.val().is_task
            & ((self.p_unused.val().drop & self.p_unused.val().pool_ok)
                | self.p_unused.val().dropped)
        {
            self.c.d.next.dropped = self.q.val().dropped + self.one.val();
        }
        self.depth_w.narrow.next = self.pass.val().depth;
        if self.p_unused.val().live
            & self.p_unused.val().held
            & (self.depth_w.wide.val() > self.q.val().max_depth)
        {
            self.c.d.next.max_depth = self.depth_w.wide.val();
        }
        if self.p_unused.val().live
            & self.p_unused.val().is_task
            & self.p_unused.val().pop
            & self.p_unused.val().stale
        {
            self.c.d.next.stale_tokens = self.q.val().stale_tokens + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().overflow {
            self.c.d.next.token_overflow = self.q.val().token_overflow + self.one.val();
        }
        if self.p_unused.val().live
            & self.p_unused.val().is_reply
            & self.p_unused.val().pool_ok
            & self.p_unused.val().drop
        {
            self.c.d.next.replies_not_in_pool = self.q.val().replies_not_in_pool + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().is_reply & self.p_unused.val().spurious {
            self.c.d.next.replies_spurious = self.q.val().replies_spurious + self.one.val();
        }
        if self.p_unused.val().live & self.again.val() {
            self.c.d.next.resubmits = self.q.val().resubmits + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().idle_add {
            self.c.d.next.sent_idle_add = self.q.val().sent_idle_add + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().idle_remove {
            self.c.d.next.sent_idle_remove = self.q.val().sent_idle_remove + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().load_update {
            self.c.d.next.sent_load_update = self.q.val().sent_load_update + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().repair {
            self.c.d.next.idle_repairs = self.q.val().idle_repairs + self.one.val();
        }
        self.disc_w.narrow.next = self.pass.val().discarded;
        if self.p_unused.val().live
            & (self.p_unused.val().is_ctl_pool
                | (self.p_unused.val().is_ctl_move & self.p_unused.val().pool_ok))
        {
            self.c.d.next.discarded = self.q.val().discarded + self.disc_w.wide.val();
        }
        if self.sched.val() & !self.p_unused.val().pool_ok {
            self.c.d.next.unknown_pool = self.q.val().unknown_pool + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().is_other {
            self.c.d.next.not_scheduled = self.q.val().not_scheduled + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().is_to_control {
            self.c.d.next.to_control = self.q.val().to_control + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().is_cont & self.p_unused.val().addr_ok {
            self.c.d.next.continuations = self.q.val().continuations + self.one.val();
        }
        if self.p_unused.val().live
            & self.p_unused.val().is_cont
            & self.p_unused.val().pool_ok
            & !self.p_unused.val().addr_ok
        {
            self.c.d.next.continuation_miss = self.q.val().continuation_miss + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().conn_insert {
            self.c.d.next.conn_inserts = self.q.val().conn_inserts + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().conn_collision {
            self.c.d.next.conn_collisions = self.q.val().conn_collisions + self.one.val();
        }
        if self.p_unused.val().live & self.p_unused.val().conn_expired {
            self.c.d.next.conn_expired = self.q.val().conn_expired + self.one.val();
        }
        self.counts.next = self.c.q.val();
    }
}
