//! The JBSQ leaf's core: decode, the pass mux with the second-pass path, and the twelve stages
//! ([`JbsqIngress`]), as the paper leaf's core ([`crate::core::HorusCore`]) joins its own.
//!
//! One pass enters `poolCfg` per clock. Priority: a second pass (a task's retry after a stale
//! token, which carries its task's frame; a reply's returned place, which keeps its reply's
//! frame-buffer slot until then), then a control pass, then a new packet. A control pass waits
//! until the stages are empty, so no second pass is in flight when it runs (the model's host
//! runs one operation at a time, between passes), and no packet enters until it has left:
//! an addition's or a removal's rescale holds `poolAvg` for [`HOLD_CLOCKS`] clocks after its
//! pass, fewer than a pass admitted behind it takes to reach `poolAvg`.
//!
//! Decode, as the model's `JbsqLeaf::packet` and its frame switch: NEW_TASK a task
//! (`is_task`), TASK_CONTINUATION a continuation, TASK_DONE and TASK_DONE_IDLE a reply; KEEP_ALIVE,
//! WORKER_ID, WORKER_ID_ACK and REMOVE_ACK to the control port (`is_to_control`); any other Horus
//! type not scheduled (`is_other`, dropped and counted); a pool ID beyond the pool table an
//! unknown pool (`drop`; a reply is still forwarded); a frame not Horus's passed through; a frame
//! the parser rejected dropped (`is_malformed`, `is_bad_sum`).
//!
//! ```text
//!   pkt (parsed header) --> decode --+
//!   ctl (control pass) --------------+--> mux --> poolCfg ... nodeAddr --> out
//!                                    ^                              |
//!                                    +---- second pass <------------+
//! ```
//!
//! `trace_valid` / `trace` show every pass as it enters `poolCfg`, in order: a co-simulation runs
//! the model in exactly that order. `counts` are the leaf's counters ([`JbsqCounterBlock`]) of
//! every pass that left.

use super::counters::{JbsqCounterBlock, JbsqCounts};
use super::ingress::{JbsqIngress, STAGES};
use super::phv::JbsqPhv;
pub use super::pool_avg::HOLD_CLOCKS;
use crate::parser::{CLASS_DROP_MALFORMED, CLASS_HORUS, CLASS_PASS_THROUGH, Parsed};
use crate::phv::{BUF_BITS, HANDLE_BITS};
use horus_model::sched::jbsq::JbsqSizes;
use horus_model::wire::PacketType;
use rust_hdl::prelude::*;

/// Cycles from a pass entering (the mux) to leaving `nodeAddr`: one in the entry register, then
/// one a stage.
pub const CORE_LATENCY: usize = 1 + STAGES;

/// `poolAvg` is stage 8 of 12: a control pass leaves 3 stages after it, and a pass admitted then
/// takes 9 more clocks to reach it, more than a rescale holds it.
const _: () = assert!(HOLD_CLOCKS < STAGES);

/// Whether a pass leaving `nodeAddr` comes back as its second pass: a task that popped a
/// removed node's token (a retry), a reply whose freed place returns to a ring.
#[derive(LogicBlock, Default)]
pub struct JbsqAsksSecondPass {
    pub pass: Signal<In, JbsqPhv>,
    pub again: Signal<Out, Bit>,
    /// The descriptor fields not read (the name matches Verilator's `--unused-regexp`).
    pass_unused: Signal<Local, JbsqPhv>,
}

impl Logic for JbsqAsksSecondPass {
    #[hdl_gen]
    fn update(&mut self) {
        self.again.next = self.pass.val().live
            & !self.pass.val().drop
            & ((self.pass.val().is_task & self.pass.val().pop & self.pass.val().stale)
                | (self.pass.val().is_reply & self.pass.val().returns));
        self.pass_unused.next = self.pass.val();
    }
}

/// The core for `2^P` pools, `2^N` nodes, `2^R` ring entries, `2^B` buffer slots and `2^C`
/// connection entries.
#[derive(LogicBlock)]
pub struct JbsqCore<const P: usize, const N: usize, const R: usize, const B: usize, const C: usize>
{
    pub clock: Signal<In, Clock>,
    /* New packets: the parser's verdict, the arrival time and the frame buffer slot. */
    pub pkt_valid: Signal<In, Bit>,
    pub pkt: Signal<In, Parsed>,
    pub pkt_time: Signal<In, Bits<32>>,
    pub pkt_handle: Signal<In, Bits<HANDLE_BITS>>,
    pub pkt_start: Signal<In, Bits<BUF_BITS>>,
    pub pkt_len: Signal<In, Bits<16>>,
    pub pkt_ready: Signal<Out, Bit>,
    /* Control passes: a descriptor with one `is_ctl_*` flag and the values the host computed. */
    pub ctl_valid: Signal<In, Bit>,
    pub ctl: Signal<In, JbsqPhv>,
    pub ctl_ready: Signal<Out, Bit>,
    /* Every pass leaving `nodeAddr`. */
    pub out_valid: Signal<Out, Bit>,
    pub out: Signal<Out, JbsqPhv>,
    /// The leaving pass comes back as its second pass (its frame stays in the buffer).
    pub out_again: Signal<Out, Bit>,
    /* Every pass entering `poolCfg`, in order. */
    pub trace_valid: Signal<Out, Bit>,
    pub trace: Signal<Out, JbsqPhv>,
    /// Passes inside the stages.
    pub in_flight: Signal<Out, Bits<8>>,
    /// The generator's state (the model's `rng_state`).
    pub rng_state: Signal<Out, Bits<64>>,
    /// The leaf's counters (the model's `JbsqCounters`), of every pass that left.
    pub counts: Signal<Out, JbsqCounts>,

    stages: JbsqIngress<P, N, R, B, C>,
    counters: JbsqCounterBlock,
    /// The pass that entered last cycle: `poolCfg`'s `pass` (the mux's output is its `early`).
    entered: DFF<JbsqPhv>,
    /// The last stage's `early` (no stage follows; the name matches Verilator's
    /// `--unused-regexp`).
    last_next_unused: Signal<Local, JbsqPhv>,
    count: DFF<Bits<8>>,
    /// `count` is not zero, kept beside it (a flip-flop, so that a control pass's admission is
    /// not an 8-input OR in front of the pass mux and the first stage's index).
    occupied: DFF<Bit>,
    /// A control pass is in the stages.
    ctl_busy: DFF<Bit>,
    /// The pass leaving the last stage comes back (`JbsqAsksSecondPass` of the pass in it,
    /// registered beside it).
    again: DFF<Bit>,
    asks: JbsqAsksSecondPass,

    /* Decode. */
    dec: Signal<Local, JbsqPhv>,
    t: Signal<Local, Bits<7>>,
    to_control: Signal<Local, Bit>,
    scheduled: Signal<Local, Bit>,
    /* The second-pass path. */
    back: Signal<Local, JbsqPhv>,
    second: Signal<Local, JbsqPhv>,
    resub: Signal<Local, Bit>,
    /* The mux. */
    ctl_go: Signal<Local, Bit>,
    pkt_go: Signal<Local, Bit>,
    enter: Signal<Local, JbsqPhv>,

    zero_phv: Constant<JbsqPhv>,
    pool_limit: Constant<Bits<16>>,
    class_horus: Constant<Bits<2>>,
    class_pass: Constant<Bits<2>>,
    class_malformed: Constant<Bits<2>>,
    one8: Constant<Bits<8>>,
    t_task: Constant<Bits<7>>,
    t_cont: Constant<Bits<7>>,
    t_done: Constant<Bits<7>>,
    t_done_idle: Constant<Bits<7>>,
    t_keep_alive: Constant<Bits<7>>,
    t_worker_id: Constant<Bits<7>>,
    t_worker_id_ack: Constant<Bits<7>>,
    t_remove_ack: Constant<Bits<7>>,
}

impl<const P: usize, const N: usize, const R: usize, const B: usize, const C: usize>
    JbsqCore<P, N, R, B, C>
{
    /// The core at `sizes` (the const parameters' sizes), its generator seeded with `seed`, its
    /// connection entries expiring after `conn_timeout_us` (the model's `JbsqLeaf::new` and
    /// `set_conn_timeout_us`).
    pub fn new(sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        assert!(P <= 16 && N <= 16, "pool and node IDs are 16 bits");
        let t = |p: PacketType| Constant::new(Bits::<7>::from(u64::from(p.code())));
        let class = |c: u64| Constant::new(Bits::<2>::from(c));
        Self {
            clock: Default::default(),
            pkt_valid: Default::default(),
            pkt: Default::default(),
            pkt_time: Default::default(),
            pkt_handle: Default::default(),
            pkt_start: Default::default(),
            pkt_len: Default::default(),
            pkt_ready: Default::default(),
            ctl_valid: Default::default(),
            ctl: Default::default(),
            ctl_ready: Default::default(),
            out_valid: Default::default(),
            out: Default::default(),
            out_again: Default::default(),
            trace_valid: Default::default(),
            trace: Default::default(),
            in_flight: Default::default(),
            counts: Default::default(),
            rng_state: Default::default(),
            stages: JbsqIngress::new(sizes, seed, conn_timeout_us),
            counters: Default::default(),
            entered: Default::default(),
            last_next_unused: Default::default(),
            count: Default::default(),
            occupied: Default::default(),
            ctl_busy: Default::default(),
            again: Default::default(),
            asks: Default::default(),
            dec: Default::default(),
            t: Default::default(),
            to_control: Default::default(),
            scheduled: Default::default(),
            back: Default::default(),
            second: Default::default(),
            resub: Default::default(),
            ctl_go: Default::default(),
            pkt_go: Default::default(),
            enter: Default::default(),
            zero_phv: Constant::new(JbsqPhv::default()),
            pool_limit: Constant::new((1u64 << P).into()),
            class_horus: class(CLASS_HORUS),
            class_pass: class(CLASS_PASS_THROUGH),
            class_malformed: class(CLASS_DROP_MALFORMED),
            one8: Constant::new(1.into()),
            t_task: t(PacketType::NewTask),
            t_cont: t(PacketType::TaskContinuation),
            t_done: t(PacketType::TaskDone),
            t_done_idle: t(PacketType::TaskDoneIdle),
            t_keep_alive: t(PacketType::KeepAlive),
            t_worker_id: t(PacketType::WorkerId),
            t_worker_id_ack: t(PacketType::WorkerIdAck),
            t_remove_ack: t(PacketType::RemoveAck),
        }
    }
}

impl<const P: usize, const N: usize, const R: usize, const B: usize, const C: usize> Logic
    for JbsqCore<P, N, R, B, C>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entered, count, occupied, ctl_busy, again);
        clock!(self, clock, stages, counters);

        // ---- Decode: a new packet's operation from its type, as `JbsqLeaf::packet` does before
        // its first table.
        self.t.next = self.pkt.val().pkt_type;
        self.dec.next = self.zero_phv.val();
        self.dec.next.live = true;
        self.dec.next.pkt_type = self.pkt.val().pkt_type;
        self.dec.next.more = self.pkt.val().more_packets;
        self.dec.next.pool = self.pkt.val().pool_id;
        self.dec.next.src = self.pkt.val().src_id;
        self.dec.next.dst = self.pkt.val().dst_id;
        self.dec.next.qlen = self.pkt.val().qlen;
        self.dec.next.seq = self.pkt.val().seq_num;
        self.dec.next.time = self.pkt_time.val();
        self.dec.next.handle = self.pkt_handle.val();
        self.dec.next.start = self.pkt_start.val();
        self.dec.next.len = self.pkt_len.val();
        self.to_control.next = (self.t.val() == self.t_keep_alive.val())
            | (self.t.val() == self.t_worker_id.val())
            | (self.t.val() == self.t_worker_id_ack.val())
            | (self.t.val() == self.t_remove_ack.val());
        self.scheduled.next = (self.t.val() == self.t_task.val())
            | (self.t.val() == self.t_cont.val())
            | (self.t.val() == self.t_done.val())
            | (self.t.val() == self.t_done_idle.val());
        if self.pkt.val().class == self.class_horus.val() {
            if self.to_control.val() {
                self.dec.next.is_to_control = true;
            } else if !self.scheduled.val() {
                self.dec.next.is_other = true;
                self.dec.next.drop = true;
            } else {
                self.dec.next.is_task = self.t.val() == self.t_task.val();
                self.dec.next.is_cont = self.t.val() == self.t_cont.val();
                self.dec.next.is_reply =
                    (self.t.val() == self.t_done.val()) | (self.t.val() == self.t_done_idle.val());
                // A pool beyond the table is not configured (the model's `unknown_pool`).
                self.dec.next.drop = self.pkt.val().pool_id >= self.pool_limit.val();
            }
        } else if self.pkt.val().class == self.class_pass.val() {
            self.dec.next.is_pass_through = true;
        } else if self.pkt.val().class == self.class_malformed.val() {
            self.dec.next.is_malformed = true;
            self.dec.next.drop = true;
        } else {
            self.dec.next.is_bad_sum = true;
            self.dec.next.drop = true;
        }

        // ---- The second-pass path: what the model's `JbsqResubmit` carries, from the pass
        // leaving the last stage, and its frame (slot and length); everything else starts
        // afresh. A retry is its task's first pass again but that it draws no sample; a returned
        // place names its worker (`src`), the worker's generation and the place's ring (`level`).
        self.back.next = self.stages.port.down.pass.val();
        self.asks.pass.next = self.stages.in_last.val();
        self.again.d.next = self.asks.again.val();
        self.resub.next = self.again.q.val();
        self.second.next = self.zero_phv.val();
        self.second.next.live = true;
        self.second.next.pool = self.back.val().pool;
        self.second.next.src = self.back.val().src;
        self.second.next.time = self.back.val().time;
        self.second.next.handle = self.back.val().handle;
        self.second.next.start = self.back.val().start;
        self.second.next.len = self.back.val().len;
        if self.back.val().is_task {
            self.second.next.is_task = true;
            self.second.next.is_retry = true;
            self.second.next.pkt_type = self.back.val().pkt_type;
            self.second.next.more = self.back.val().more;
            self.second.next.dst = self.back.val().dst;
            self.second.next.qlen = self.back.val().qlen;
            self.second.next.seq = self.back.val().seq;
        } else {
            self.second.next.is_return = true;
            self.second.next.generation = self.back.val().generation;
            self.second.next.level = self.back.val().level;
        }

        // ---- The mux.
        self.ctl_go.next = self.ctl_valid.val() & !self.resub.val() & !self.occupied.q.val();
        self.pkt_go.next = self.pkt_valid.val()
            & !self.resub.val()
            & !self.ctl_valid.val()
            & !self.ctl_busy.q.val();
        self.enter.next = self.zero_phv.val();
        if self.resub.val() {
            self.enter.next = self.second.val();
        } else if self.ctl_go.val() {
            self.enter.next = self.ctl.val();
            self.enter.next.live = true;
        } else if self.pkt_go.val() {
            self.enter.next = self.dec.val();
        }
        // From registers and a port alone, in its own statement: Verilator then sees no path
        // from `pkt_valid` to `pkt_ready`.
        self.pkt_ready.next = !self.again.q.val() & !self.ctl_valid.val() & !self.ctl_busy.q.val();
        self.ctl_ready.next = self.ctl_go.val();
        // A control pass runs alone: no packet enters behind it until it has left.
        self.ctl_busy.d.next = self.ctl_busy.q.val();
        if self.back.val().live
            & (self.back.val().is_ctl_pool
                | self.back.val().is_ctl_add
                | self.back.val().is_ctl_remove
                | self.back.val().is_ctl_read
                | self.back.val().is_ctl_place
                | self.back.val().is_ctl_bound
                | self.back.val().is_ctl_pool_params
                | self.back.val().is_ctl_move)
        {
            self.ctl_busy.d.next = false;
        }
        if self.ctl_go.val() {
            self.ctl_busy.d.next = true;
        }
        // Passes in the stages: one more for each that enters, one fewer for each that leaves.
        self.count.d.next = self.count.q.val();
        if self.enter.val().live & !self.back.val().live {
            self.count.d.next = self.count.q.val() + self.one8.val();
        }
        if !self.enter.val().live & self.back.val().live {
            self.count.d.next = self.count.q.val() - self.one8.val();
        }
        // The same for `occupied`: one more sets it, one fewer clears it when it was the last.
        self.occupied.d.next = self.occupied.q.val();
        if self.enter.val().live & !self.back.val().live {
            self.occupied.d.next = true;
        }
        if !self.enter.val().live & self.back.val().live {
            self.occupied.d.next = self.count.q.val() != self.one8.val();
        }

        // ---- The stages: `poolCfg` reads its table with the entering pass's index (`early`).
        self.entered.d.next = self.enter.val();
        self.stages.port.up.early.next = self.enter.val();
        self.rng_state.next = self.stages.rng_state.val();
        self.stages.port.up.pass.next = self.entered.q.val();
        self.last_next_unused.next = self.stages.port.down.early.val();

        self.out_valid.next = self.back.val().live;
        self.out.next = self.back.val();
        self.out_again.next = self.resub.val();
        self.trace_valid.next = self.enter.val().live;
        self.trace.next = self.enter.val();
        self.in_flight.next = self.count.q.val();
        self.counters.pass_valid.next = self.back.val().live;
        self.counters.pass.next = self.back.val();
        self.counters.again.next = self.resub.val();
        self.counts.next = self.counters.counts.val();
    }
}
