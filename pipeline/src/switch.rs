//! The datapath of a Horus switch: ingress (frame buffer and parser), the scheduler core, egress
//! (deparser and output arbiter), between AXI-Stream ports. Configuration and control passes come
//! in on plain ports here; the top level (`top.rs`) puts them behind AXI4-Lite registers.
//!
//! A frame or a control pass enters the core only while the egress has room for a job from every
//! pass then in the core and one more from each that may come back as its second pass
//! (`JOB_ROOM`), so the egress never drops what the core decided.

use crate::cfg::{SpineTable, SwitchCfg};
use crate::core::{CORE_LATENCY, HorusCore};
use crate::egress::{Egress, JOB_SLOTS};
use crate::ingress::Ingress;
use crate::phv::Phv;
use crate::readback::RB_BITS;
use horus_model::config::Role;
use rust_hdl::prelude::*;

/// A frame or a control pass enters the core only while `queued jobs + passes in the core <
/// JOB_ROOM`. Each pass pushes at most one job when it leaves the core, so that sum grows only
/// when a pass enters or when a leaving pass comes back as its second pass (its first pass's job
/// queued, the pass still in the core); a resubmitted pass takes the entry slot, so the sum grows
/// by at most one a clock, and no second pass asks for a third. After the last admission (sum
/// at most `JOB_ROOM - 1`) the passes then in the core, at most `CORE_LATENCY`, can each add one
/// more: the egress never holds more than `JOB_ROOM - 1 + CORE_LATENCY` jobs, and this leaves one
/// slot of the FIFO spare.
pub const JOB_ROOM: u64 = JOB_SLOTS - CORE_LATENCY as u64 - 1;

#[derive(LogicBlock)]
pub struct HorusSwitch<const P: usize, const N: usize, const C: usize> {
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
    /// Microseconds, wrapping (connection-table timeouts).
    pub now_us: Signal<In, Bits<32>>,
    /* Configuration and control passes. */
    pub cfg: Signal<In, SwitchCfg>,
    pub spines: Signal<In, SpineTable>,
    pub ctl_valid: Signal<In, Bit>,
    pub ctl: Signal<In, Phv>,
    pub ctl_ready: Signal<Out, Bit>,
    /* Observation: every pass entering and leaving the stages. */
    pub trace_valid: Signal<Out, Bit>,
    pub trace: Signal<Out, Phv>,
    pub done_valid: Signal<Out, Bit>,
    pub done: Signal<Out, Phv>,
    pub rng_state: Signal<Out, Bits<64>>,
    pub in_flight: Signal<Out, Bits<8>>,
    /// The entry the last read kept, and whether a table took it (`readback.rs`).
    pub readback: Signal<Out, Bits<RB_BITS>>,
    pub readback_valid: Signal<Out, Bit>,
    /// Sticky: the egress lost a job or a beat (never expected; see `Egress::overflow`).
    pub overflow: Signal<Out, Bit>,

    ingress: Ingress,
    core: HorusCore<P, N, C>,
    egress: Egress,
    room: Signal<Local, Bit>,
    room_r: DFF<Bit>,
    job_room_early: Constant<Bits<8>>,
}

impl<const P: usize, const N: usize, const C: usize> HorusSwitch<P, N, C> {
    pub fn new(role: Role, seed: u64, conn_timeout_us: u32) -> Self {
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
            rng_state: Default::default(),
            in_flight: Default::default(),
            readback: Default::default(),
            readback_valid: Default::default(),
            overflow: Default::default(),
            ingress: Default::default(),
            core: HorusCore::new(role, seed, conn_timeout_us),
            egress: Egress::new(role),
            room: Default::default(),
            room_r: Default::default(),
            job_room_early: Constant::new((JOB_ROOM - 1).into()),
        }
    }
}

impl<const P: usize, const N: usize, const C: usize> Logic for HorusSwitch<P, N, C> {
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
        // Admission: the egress has room for a job from every pass in the core. Decided a clock
        // ahead, from a register: the sum grows by at most one a clock (one pass enters; one
        // leaving the core turns into a job), so last clock's sum below `JOB_ROOM - 1` keeps
        // this clock's below `JOB_ROOM`.
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
        // A control pass waits for room too (it may signal, and its second pass may again).
        self.core.ctl_valid.next = self.ctl_valid.val() & self.room_r.q.val();
        self.core.ctl.next = self.ctl.val();
        self.ctl_ready.next = self.core.ctl_ready.val();
        // Egress.
        self.egress.pass_valid.next = self.core.out_valid.val();
        self.egress.pass.next = self.core.out.val();
        self.egress.pass_again.next = self.core.out_again.val();
        self.egress.cfg.next = self.cfg.val();
        self.egress.spines.next = self.spines.val();
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
        self.rng_state.next = self.core.rng_state.val();
        self.in_flight.next = self.core.in_flight.val();
        self.readback.next = self.core.readback.val();
        self.readback_valid.next = self.core.readback_valid.val();
        self.overflow.next = self.egress.overflow.val();
    }
}
