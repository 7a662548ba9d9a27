//! The datapath of the leaf that holds tasks: the paper leaf's ingress (frame buffer and
//! parser), the JBSQ core ([`JbsqCore`]), the map from a pass to its egress job
//! ([`JbsqJobMap`]) and the egress with the frame store ([`JbsqEgress`]), between AXI-Stream
//! ports, as the paper switch's datapath ([`crate::switch::HorusSwitch`]) joins its own.
//! Configuration and control passes come in on plain ports.
//!
//! A frame or a control pass enters the core only while the egress has room for a job from every
//! pass then in the core and one more from each that may come back as its second pass
//! ([`JOB_ROOM`]), so the egress never drops what the core decided. A JBSQ job may emit three
//! frames (a reply, the task it releases, a message to the spine); the job FIFO counts jobs, not
//! frames, so the rule is the paper switch's, and a job that takes longer only holds the input
//! back longer.

use super::core::{CORE_LATENCY, JbsqCore};
use super::counters::JbsqCounts;
use super::egress::{JOB_BITS, JbsqEgress};
use super::job_map::JbsqJobMap;
use super::phv::JbsqPhv;
use crate::cfg::{SpineTable, SwitchCfg};
use crate::ingress::Ingress;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// A frame or a control pass enters the core only while `queued jobs + passes in the core <
/// JOB_ROOM` (the paper switch's rule, `crate::switch::JOB_ROOM`, with the JBSQ core's latency):
/// each pass pushes at most one job when it leaves the core. A second pass may come back again
/// (a retry that pops another removed node's token), but such a pass makes no job: a retry sends
/// no message (decision 35), its stale token forwards nothing and it holds nothing, keeping its
/// frame's slot. So, as in the paper switch, a first pass in the core may still queue two jobs
/// and a second pass one, and the egress never holds more than `JOB_ROOM - 1 + CORE_LATENCY`
/// jobs, one slot of its FIFO spare (proven: `tests/jbsq_admission.rs`).
pub const JOB_ROOM: u64 = (1 << JOB_BITS) - CORE_LATENCY as u64 - 1;

/// The datapath for `2^P` pools, `2^N` nodes, `2^R` ring entries, `2^B` buffer slots, `2^C`
/// connection entries and a frame store of `2^SB` beats.
#[derive(LogicBlock)]
pub struct JbsqSwitch<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> {
    pub clock: Signal<In, Clock>,
    /* AXI-Stream in (tuser, the ingress port, is not used by the scheduler). */
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub s_axis_tlast: Signal<In, Bit>,
    /* AXI-Stream out (egress port in tuser[7:0], the frame's length in bytes in tuser[27:16]). */
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bits<32>>,
    /// Microseconds, wrapping (connection-table timeouts, the link's hold and repair gap).
    pub now_us: Signal<In, Bits<32>>,
    /* Configuration and control passes. */
    pub cfg: Signal<In, SwitchCfg>,
    pub spines: Signal<In, SpineTable>,
    pub ctl_valid: Signal<In, Bit>,
    pub ctl: Signal<In, JbsqPhv>,
    pub ctl_ready: Signal<Out, Bit>,
    /* Observation: every pass entering and leaving the stages. */
    pub trace_valid: Signal<Out, Bit>,
    pub trace: Signal<Out, JbsqPhv>,
    pub done_valid: Signal<Out, Bit>,
    pub done: Signal<Out, JbsqPhv>,
    pub in_flight: Signal<Out, Bits<8>>,
    /// The generator's state (the model's `rng_state`).
    pub rng_state: Signal<Out, Bits<64>>,
    /// The leaf's counters (`JbsqCounterBlock`).
    pub counts: Signal<Out, JbsqCounts>,
    /// Sticky: the egress lost a job or a beat (never expected; see `JbsqEgress::overflow`).
    pub overflow: Signal<Out, Bit>,

    ingress: Ingress,
    core: JbsqCore<P, N, R, B, C>,
    map: JbsqJobMap,
    egress: JbsqEgress<SB>,
    room: Signal<Local, Bit>,
    room_r: DFF<Bit>,
    job_room_early: Constant<Bits<8>>,
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> JbsqSwitch<P, N, R, B, C, SB>
{
    /// The datapath at `sizes` (the const parameters' sizes), its generator seeded with `seed`,
    /// its connection entries expiring after `conn_timeout_us`.
    pub fn new(sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        Self {
            clock: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            now_us: Default::default(),
            cfg: Default::default(),
            spines: Default::default(),
            ctl_valid: Default::default(),
            ctl: Default::default(),
            ctl_ready: Default::default(),
            trace_valid: Default::default(),
            trace: Default::default(),
            done_valid: Default::default(),
            done: Default::default(),
            in_flight: Default::default(),
            rng_state: Default::default(),
            counts: Default::default(),
            overflow: Default::default(),
            ingress: Default::default(),
            core: JbsqCore::new(sizes, seed, conn_timeout_us),
            map: Default::default(),
            egress: Default::default(),
            room: Default::default(),
            room_r: Default::default(),
            job_room_early: Constant::new((JOB_ROOM - 1).into()),
        }
    }
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> Logic for JbsqSwitch<P, N, R, B, C, SB>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, room_r);
        clock!(self, clock, ingress, core, egress);
        // Ingress.
        self.ingress.s_axis_tdata.next = self.s_axis_tdata.val();
        self.ingress.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.ingress.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.ingress.s_axis_tlast.next = self.s_axis_tlast.val();
        self.s_axis_tready.next = self.ingress.s_axis_tready.val();
        self.ingress.now_us.next = self.now_us.val();
        self.ingress.buf_addr.next = self.egress.buf_addr.val();
        self.ingress.free_valid.next = self.egress.free_valid.val();
        self.ingress.free_handle.next = self.egress.free_handle.val();
        // Admission, decided a clock ahead from a register (the paper switch's): the sum grows
        // by at most one a clock.
        self.room_r.d.next =
            (self.egress.jobs.val() + self.core.in_flight.val()) < self.job_room_early.val();
        self.room.next = self.room_r.q.val();
        self.core.pkt_valid.next = self.ingress.pkt_valid.val() & self.room.val();
        self.core.pkt.next = self.ingress.pkt.val().parsed;
        self.core.pkt_time.next = self.ingress.pkt.val().time;
        self.core.pkt_len.next = self.ingress.pkt.val().len;
        self.core.pkt_handle.next = self.ingress.pkt_handle.val();
        self.core.pkt_start.next = self.ingress.pkt_start.val();
        self.ingress.pkt_take.next = self.core.pkt_ready.val() & self.room.val();
        // A control pass waits for room too (it may send a message).
        self.core.ctl_valid.next = self.ctl_valid.val() & self.room_r.q.val();
        self.core.ctl.next = self.ctl.val();
        self.ctl_ready.next = self.core.ctl_ready.val();
        // The pass leaving the core becomes the egress's job.
        self.map.pass_valid.next = self.core.out_valid.val();
        self.map.pass.next = self.core.out.val();
        self.map.again.next = self.core.out_again.val();
        self.map.cfg.next = self.cfg.val();
        self.map.spines.next = self.spines.val();
        self.egress.job_valid.next = self.map.push.val();
        self.egress.job_in.next = self.map.job.val();
        self.egress.cfg.next = self.cfg.val();
        self.egress.buf_data.next = self.ingress.buf_data.val();
        self.m_axis_tdata.next = self.egress.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.egress.m_axis_tkeep.val();
        self.m_axis_tvalid.next = self.egress.m_axis_tvalid.val();
        self.m_axis_tlast.next = self.egress.m_axis_tlast.val();
        self.m_axis_tuser.next = self.egress.m_axis_tuser.val();
        self.egress.m_axis_tready.next = self.m_axis_tready.val();
        // Observation.
        self.trace_valid.next = self.core.trace_valid.val();
        self.trace.next = self.core.trace.val();
        self.done_valid.next = self.core.out_valid.val();
        self.done.next = self.core.out.val();
        self.in_flight.next = self.core.in_flight.val();
        self.rng_state.next = self.core.rng_state.val();
        self.counts.next = self.core.counts.val();
        self.overflow.next = self.egress.overflow.val();
    }
}
