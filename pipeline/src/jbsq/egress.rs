//! The JBSQ leaf's egress: what its passes send, with the frame store that keeps held tasks'
//! frames (`docs/jbsq-pipeline.md`, "The task buffer"; the model's `JbsqFrameSwitch`).
//!
//! Each pass leaving the core becomes one job in a FIFO. The emitter works a job in up to four
//! phases, in this order, each one beat per clock:
//!
//! 1. *forward*: the pass's own frame from the frame buffer, its first beat rewritten towards
//!    its node (a task or a continuation) or unchanged (a reply, a control frame);
//! 2. *copy*: a held task's frame from the frame buffer into the frame store at its slot
//!    (nothing is sent; the phase needs no room in the output FIFO);
//! 3. *release*: a released task's frame from the frame store, its first beat rewritten towards
//!    the replying worker;
//! 4. *signal*: the message to the spine, the pass's own first beat mirrored (a control pass's
//!    from the template).
//!
//! Then the frame buffer's slot is handed back, unless the pass comes back as its second pass.
//! The model sends the same frames in the same order. Jobs run in pass order, so a slot's copy
//! is done before the job of the pass that releases it, and that release's read before the
//! copy of the next task held in the slot (a later pass). A copy's beat is written a clock
//! after it is issued (the frame buffer's read latency), and the store's read in the clock of a
//! write to the same beat gives the old data: a release of a one-beat task held by the job just
//! before (a reply's returned place meeting the task held meanwhile) would read its beat in
//! that very clock. So a release issues no beat in the clock a copy's beat is written: one idle
//! clock in that case, no forwarding path (`cosim/tests/jbsq.rs` found it: 20,000 frames).
//!
//! ```text
//!  cycle  0: job head -> buffer or store address    (issue)
//!         1: buffer or store data (or the template) -> beat register; a copy's beat -> store
//!         2: rewriter / signal builder inputs       (2 cycles)
//!         4: rewritten, signal or unchanged beat    -> output FIFO -> m_axis
//! ```
//!
//! What maps a JBSQ pass descriptor onto a job (its node's address, the spine's, the ports) is
//! the leaf's core's, planned with it; here a job is the input.

use crate::cfg::SwitchCfg;
use crate::deparser::{Rewriter, SignalBuilder};
use crate::egress::{OutBeat, PortToTuser, TailKeep, TemplateBeat};
use crate::fifo::Fifo;
use crate::phv::{BUF_BITS, HANDLE_BITS};
use horus_model::wire::MIN_FRAME_LEN;
use rust_hdl::prelude::*;

/// The job FIFO holds `2^JOB_BITS` jobs.
pub const JOB_BITS: usize = 7;
/// Beats of the frame store a buffer slot takes: a held task's frame is at most 256 bytes
/// (`JbsqSizes::slot_bytes`).
pub const STORE_SLOT_BEATS: usize = 4;

/// A frame the egress sends out of a port, rewritten (`rewrite`) towards `mac`/`ip`/`udp` with
/// the header given, or unchanged.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JbsqSend {
    /// Beats of the frame (the bytes in its last beat are the job's `own_tail` or `rel_tail`).
    pub beats: Bits<6>,
    /// The frame's length in bytes, for `tuser`.
    pub len: Bits<12>,
    /// One beat: the first beat is the last.
    pub single: Bit,
    pub rewrite: Bit,
    pub port: Bits<8>,
    pub mac: Bits<48>,
    pub ip: Bits<32>,
    pub udp: Bits<16>,
    pub pkt_type: Bits<7>,
    pub more: Bit,
    pub pool: Bits<16>,
    pub src: Bits<16>,
    pub dst: Bits<16>,
    pub qlen: Bits<16>,
    pub seq: Bits<16>,
}

/// One pass's output work.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JbsqJob {
    /// The pass's own frame: its frame-buffer slot and first beat's address.
    pub handle: Bits<HANDLE_BITS>,
    pub start: Bits<BUF_BITS>,
    /// The pass carries a frame (not a control pass); `free`: hand its slot back after the job.
    pub has_frame: Bit,
    pub free: Bit,
    /// Forward the pass's own frame (`own.beats` beats).
    pub fwd: Bit,
    pub own: JbsqSend,
    /// The bytes in the last beat of the own frame and of the released one (0: 64): beside the
    /// frames' other fields, so that each feeds its keep mask straight from the job FIFO.
    pub own_tail: Bits<6>,
    pub rel_tail: Bits<6>,
    /// Copy the pass's own frame into the store (a held task).
    pub hold: Bit,
    /// Send the released task's frame from the store (`rel.beats` beats).
    pub release: Bit,
    pub rel: JbsqSend,
    /// The store's first beat of the slot held into or released from: slot · 4.
    pub store_base: Bits<16>,
    /// Send a message of `sig_type` to the spine at `sig_*`, mirroring the own frame's first
    /// beat (the template when the pass has no frame).
    pub sig: Bit,
    pub sig_type: Bits<7>,
    pub sig_pool: Bits<16>,
    pub sig_src: Bits<16>,
    pub sig_dst: Bits<16>,
    /// The pool's average, 16.16: `qlen` the integer part, `seq` the fraction.
    pub sig_load: Bits<32>,
    pub sig_mac: Bits<48>,
    pub sig_ip: Bits<32>,
    pub sig_udp: Bits<16>,
    pub sig_port: Bits<8>,
}

/// A beat in the emitter's pipeline.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct JbsqBeatTag {
    /// The beat goes out.
    pub valid: Bit,
    /// The beat goes into the store at `store_at` (a copy).
    pub copy: Bit,
    pub store_at: Bits<16>,
    /// The beat comes from the store (a release), else from the frame buffer.
    pub from_store: Bit,
    pub rewrite: Bit,
    pub signal: Bit,
    pub template: Bit,
    pub last: Bit,
    pub keep: Bits<64>,
    pub port: Bits<8>,
    pub len: Bits<12>,
}

/// The egress for a frame store of `2^SB` beats (`STORE_SLOT_BEATS` a buffer slot).
#[derive(LogicBlock)]
pub struct JbsqEgress<const SB: usize> {
    pub clock: Signal<In, Clock>,
    /* Jobs of the passes leaving the core. */
    pub job_valid: Signal<In, Bit>,
    pub job_in: Signal<In, JbsqJob>,
    /// Jobs queued (the core admits a pass only while there is room for its job).
    pub jobs: Signal<Out, Bits<8>>,
    /* Configuration: the switch's own address (a message's source). */
    pub cfg: Signal<In, SwitchCfg>,
    /* The frame buffer. */
    pub buf_addr: Signal<Out, Bits<BUF_BITS>>,
    pub buf_data: Signal<In, Bits<512>>,
    pub free_valid: Signal<Out, Bit>,
    pub free_handle: Signal<Out, Bits<HANDLE_BITS>>,
    /* AXI-Stream out. */
    pub m_axis_tdata: Signal<Out, Bits<512>>,
    pub m_axis_tkeep: Signal<Out, Bits<64>>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub m_axis_tlast: Signal<Out, Bit>,
    /// The egress port in bits 7:0, the frame's length in bytes in bits 27:16.
    pub m_axis_tuser: Signal<Out, Bits<32>>,
    /// Sticky: a FIFO was pushed while full (the admission rule was broken; never expected).
    pub overflow: Signal<Out, Bit>,

    store: RAM<Bits<512>, SB>,
    job_fifo: Fifo<JbsqJob, JOB_BITS, { JOB_BITS + 1 }>,
    out_fifo: Fifo<OutBeat, 4, 5>,
    keep_own: TailKeep,
    keep_rel: TailKeep,
    to_tuser: PortToTuser,
    template: TemplateBeat,
    rewriter: Rewriter,
    signaler: SignalBuilder,
    /// The head job's phases done (forward, copy, release).
    fwd_done: DFF<Bit>,
    copy_done: DFF<Bit>,
    rel_done: DFF<Bit>,
    /// The beat of the phase's frame to issue next, and the same as a store offset.
    beat: DFF<Bits<6>>,
    sbeat: DFF<Bits<16>>,
    /// The next beat of the phase's frame is its last (valid after its first beat).
    last_r: DFF<Bit>,
    free_r: DFF<Bit>,
    free_handle_r: DFF<Bits<HANDLE_BITS>>,
    /// The buffer address of the frame's next beat after its first.
    rptr: DFF<Bits<BUF_BITS>>,
    job1: DFF<JbsqJob>,
    job2: DFF<JbsqJob>,
    tag1: DFF<JbsqBeatTag>,
    tag2: DFF<JbsqBeatTag>,
    tag3: DFF<JbsqBeatTag>,
    tag4: DFF<JbsqBeatTag>,
    beat_r: DFF<Bits<512>>,
    raw3: DFF<Bits<512>>,
    raw4: DFF<Bits<512>>,
    overflowed: DFF<Bit>,
    /// The switch's configuration fields not read (the name matches Verilator's
    /// `--unused-regexp`).
    cfg_unused: Signal<Local, SwitchCfg>,

    head: Signal<Local, JbsqJob>,
    room: Signal<Local, Bit>,
    in_fwd: Signal<Local, Bit>,
    in_copy: Signal<Local, Bit>,
    in_rel: Signal<Local, Bit>,
    /// The phase's frame (the own frame, or the released one), at issue (its header not read)
    /// and at the rewriter (its length and port not read); the names match Verilator's
    /// `--unused-regexp`.
    send_unused: Signal<Local, JbsqSend>,
    send2_unused: Signal<Local, JbsqSend>,
    first_beat: Signal<Local, Bit>,
    last_beat: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    /// Something of the job follows the phase ending now.
    more_after: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    tag: Signal<Local, JbsqBeatTag>,
    store_at: Signal<Local, Bits<16>>,
    out_beat: Signal<Local, OutBeat>,

    one6: Constant<Bits<6>>,
    two6: Constant<Bits<6>>,
    zero6: Constant<Bits<6>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one_buf: Constant<Bits<BUF_BITS>>,
    all_keep: Constant<Bits<64>>,
    signal_keep: Constant<Bits<64>>,
    signal_len: Constant<Bits<12>>,
    out_room: Constant<Bits<5>>,
}

impl<const SB: usize> Default for JbsqEgress<SB> {
    fn default() -> Self {
        assert!(SB <= 16, "store offsets are 16 bits");
        Self {
            clock: Default::default(),
            job_valid: Default::default(),
            job_in: Default::default(),
            jobs: Default::default(),
            cfg: Default::default(),
            buf_addr: Default::default(),
            buf_data: Default::default(),
            free_valid: Default::default(),
            free_handle: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            overflow: Default::default(),
            store: Default::default(),
            job_fifo: Default::default(),
            out_fifo: Default::default(),
            keep_own: Default::default(),
            keep_rel: Default::default(),
            to_tuser: Default::default(),
            template: Default::default(),
            rewriter: Default::default(),
            signaler: Default::default(),
            fwd_done: Default::default(),
            copy_done: Default::default(),
            rel_done: Default::default(),
            beat: Default::default(),
            sbeat: Default::default(),
            last_r: Default::default(),
            free_r: Default::default(),
            free_handle_r: Default::default(),
            rptr: Default::default(),
            job1: Default::default(),
            job2: Default::default(),
            tag1: Default::default(),
            tag2: Default::default(),
            tag3: Default::default(),
            tag4: Default::default(),
            beat_r: Default::default(),
            raw3: Default::default(),
            raw4: Default::default(),
            overflowed: Default::default(),
            cfg_unused: Default::default(),
            head: Default::default(),
            room: Default::default(),
            in_fwd: Default::default(),
            in_copy: Default::default(),
            in_rel: Default::default(),
            send_unused: Default::default(),
            send2_unused: Default::default(),
            first_beat: Default::default(),
            last_beat: Default::default(),
            go: Default::default(),
            more_after: Default::default(),
            done: Default::default(),
            tag: Default::default(),
            store_at: Default::default(),
            out_beat: Default::default(),
            one6: Constant::new(1.into()),
            two6: Constant::new(2.into()),
            zero6: Constant::new(0.into()),
            one16: Constant::new(1.into()),
            zero16: Constant::new(0.into()),
            one_buf: Constant::new(1.into()),
            all_keep: Constant::new(u64::MAX.into()),
            signal_keep: Constant::new(((1u64 << MIN_FRAME_LEN) - 1).into()),
            signal_len: Constant::new((MIN_FRAME_LEN as u64).into()),
            // At most four beats are in the emitter's pipeline: issue only while the output
            // FIFO (16 entries) holds at most 11.
            out_room: Constant::new(11.into()),
        }
    }
}

impl<const SB: usize> Logic for JbsqEgress<SB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fwd_done,
            copy_done,
            rel_done,
            beat,
            sbeat,
            last_r,
            free_r,
            free_handle_r,
            rptr,
            job1,
            job2,
            tag1,
            tag2,
            tag3,
            tag4,
            beat_r,
            raw3,
            raw4,
            overflowed
        );
        clock!(self, clock, job_fifo, out_fifo, rewriter, signaler);
        self.store.read_clock.next = self.clock.val();
        self.store.write_clock.next = self.clock.val();

        // ---- Jobs in: a pass with nothing to do (a dropped task that came back, say) still
        // frees its slot, so every job is queued.
        self.job_fifo.data.next = self.job_in.val();
        self.job_fifo.push.next = self.job_valid.val();
        self.jobs.next = self.job_fifo.count.val();

        // ---- The emitter: the head job's phase, one beat per clock.
        self.head.next = self.job_fifo.head.val();
        self.room.next = self.out_fifo.count.val() <= self.out_room.val();
        self.in_fwd.next = self.head.val().fwd & !self.fwd_done.q.val();
        self.in_copy.next = self.head.val().hold & !self.copy_done.q.val() & !self.in_fwd.val();
        self.in_rel.next = self.head.val().release
            & !self.rel_done.q.val()
            & !self.in_fwd.val()
            & !self.in_copy.val();
        self.send_unused.next = self.head.val().own;
        if self.in_rel.val() {
            self.send_unused.next = self.head.val().rel;
        }
        self.first_beat.next = !self.beat.q.val().any();
        self.last_beat.next = self.last_r.q.val();
        if self.first_beat.val() {
            self.last_beat.next = self.send_unused.val().single;
        }
        self.keep_own.tail.next = self.job_fifo.head.val().own_tail;
        self.keep_rel.tail.next = self.job_fifo.head.val().rel_tail;
        self.store_at.next = self.head.val().store_base | self.sbeat.q.val();
        // What follows the phase ending now.
        self.more_after.next = self.head.val().sig;
        if self.in_fwd.val() {
            self.more_after.next =
                self.head.val().hold | self.head.val().release | self.head.val().sig;
        }
        if self.in_copy.val() {
            self.more_after.next = self.head.val().release | self.head.val().sig;
        }
        self.tag.next.valid = false;
        self.tag.next.copy = false;
        self.tag.next.store_at = self.store_at.val();
        self.tag.next.from_store = false;
        self.tag.next.rewrite = false;
        self.tag.next.signal = false;
        self.tag.next.template = false;
        self.tag.next.last = true;
        self.tag.next.keep = self.signal_keep.val();
        self.tag.next.port = self.head.val().sig_port;
        self.tag.next.len = self.signal_len.val();
        self.buf_addr.next = self.head.val().start;
        self.store.read_address.next = self.store_at.val().get_bits::<SB>(0);
        self.go.next = false;
        self.done.next = false;
        if self.job_fifo.head_valid.val() {
            if !self.head.val().fwd
                & !self.head.val().hold
                & !self.head.val().release
                & !self.head.val().sig
            {
                self.done.next = true;
            } else if self.in_fwd.val() | self.in_copy.val() | self.in_rel.val() {
                // A release waits a clock while the store takes a copy's beat: the beat it reads
                // may be that one (a one-beat task held by the job before and released by this
                // one), and the store's read in the clock of the write gives the old data.
                self.go.next = (self.room.val() | self.in_copy.val())
                    & !(self.in_rel.val() & self.tag1.q.val().copy);
            } else if self.room.val() {
                // The signal: one beat.
                self.tag.next.valid = true;
                self.tag.next.signal = true;
                self.tag.next.template = !self.head.val().has_frame;
                self.done.next = true;
            }
        }
        if self.go.val() {
            if !self.first_beat.val() {
                self.buf_addr.next = self.rptr.q.val();
            }
            self.rptr.d.next = self.buf_addr.val() + self.one_buf.val();
            self.tag.next.valid = !self.in_copy.val();
            self.tag.next.copy = self.in_copy.val();
            self.tag.next.from_store = self.in_rel.val();
            self.tag.next.rewrite = self.send_unused.val().rewrite & self.first_beat.val();
            self.tag.next.last = self.last_beat.val();
            self.tag.next.keep = self.all_keep.val();
            if self.last_beat.val() {
                self.tag.next.keep = self.keep_own.keep.val();
                if self.in_rel.val() {
                    self.tag.next.keep = self.keep_rel.keep.val();
                }
            }
            self.tag.next.port = self.send_unused.val().port;
            self.tag.next.len = self.send_unused.val().len;
            self.beat.d.next = self.beat.q.val() + self.one6.val();
            self.sbeat.d.next = self.sbeat.q.val() + self.one16.val();
            self.last_r.d.next =
                self.beat.q.val() + self.two6.val() == self.send_unused.val().beats;
            if self.last_beat.val() {
                self.beat.d.next = self.zero6.val();
                self.sbeat.d.next = self.zero16.val();
                if self.in_fwd.val() {
                    self.fwd_done.d.next = true;
                }
                if self.in_copy.val() {
                    self.copy_done.d.next = true;
                }
                if self.in_rel.val() {
                    self.rel_done.d.next = true;
                }
                if !self.more_after.val() {
                    self.done.next = true;
                }
            }
        }
        if self.done.val() {
            self.fwd_done.d.next = false;
            self.copy_done.d.next = false;
            self.rel_done.d.next = false;
        }
        self.job_fifo.pop.next = self.done.val();
        // Registered: the slot's last beat has been read by then all the same.
        self.free_r.d.next = self.done.val() & self.head.val().free;
        self.free_handle_r.d.next = self.head.val().handle;
        self.free_valid.next = self.free_r.q.val();
        self.free_handle.next = self.free_handle_r.q.val();
        self.tag1.d.next = self.tag.val();
        self.job1.d.next = self.head.val();

        // Cycle 1: the beat from the buffer, the store or the template; a copy's into the store.
        self.beat_r.d.next = self.buf_data.val();
        if self.tag1.q.val().from_store {
            self.beat_r.d.next = self.store.read_data.val();
        }
        if self.tag1.q.val().template {
            self.beat_r.d.next = self.template.beat.val();
        }
        self.store.write_address.next = self.tag1.q.val().store_at.get_bits::<SB>(0);
        self.store.write_data.next = self.buf_data.val();
        self.store.write_enable.next = self.tag1.q.val().copy;
        self.tag2.d.next = self.tag1.q.val();
        self.job2.d.next = self.job1.q.val();

        // Cycle 2: the deparser's inputs, all from registers.
        self.rewriter.in_valid.next = self.tag2.q.val().valid & self.tag2.q.val().rewrite;
        self.rewriter.first_beat.next = self.beat_r.q.val();
        self.send2_unused.next = self.job2.q.val().own;
        if self.tag2.q.val().from_store {
            self.send2_unused.next = self.job2.q.val().rel;
        }
        self.rewriter.dst_mac.next = self.send2_unused.val().mac;
        self.rewriter.dst_ip.next = self.send2_unused.val().ip;
        self.rewriter.dst_port.next = self.send2_unused.val().udp;
        self.rewriter.pkt_type.next = self.send2_unused.val().pkt_type;
        self.rewriter.more_packets.next = self.send2_unused.val().more;
        self.rewriter.pool_id.next = self.send2_unused.val().pool;
        self.rewriter.src_id.next = self.send2_unused.val().src;
        self.rewriter.dst_id.next = self.send2_unused.val().dst;
        self.rewriter.qlen.next = self.send2_unused.val().qlen;
        self.rewriter.seq_num.next = self.send2_unused.val().seq;
        self.signaler.in_valid.next = self.tag2.q.val().valid & self.tag2.q.val().signal;
        self.signaler.first_beat.next = self.beat_r.q.val();
        self.signaler.src_mac.next = self.cfg.val().mac;
        self.signaler.src_ip.next = self.cfg.val().ip;
        self.signaler.src_port.next = self.cfg.val().udp;
        self.signaler.dst_mac.next = self.job2.q.val().sig_mac;
        self.signaler.dst_ip.next = self.job2.q.val().sig_ip;
        self.signaler.dst_port.next = self.job2.q.val().sig_udp;
        self.signaler.pkt_type.next = self.job2.q.val().sig_type;
        self.signaler.more_packets.next = false;
        self.signaler.pool_id.next = self.job2.q.val().sig_pool;
        self.signaler.src_id.next = self.job2.q.val().sig_src;
        self.signaler.dst_id.next = self.job2.q.val().sig_dst;
        self.signaler.qlen.next = self.job2.q.val().sig_load.get_bits::<16>(16);
        self.signaler.seq_num.next = self.job2.q.val().sig_load.get_bits::<16>(0);
        self.raw3.d.next = self.beat_r.q.val();
        self.tag3.d.next = self.tag2.q.val();
        self.raw4.d.next = self.raw3.q.val();
        self.tag4.d.next = self.tag3.q.val();

        // Cycle 4: into the output FIFO.
        self.out_beat.next.data = self.raw4.q.val();
        if self.tag4.q.val().rewrite & self.rewriter.out_valid.val() {
            self.out_beat.next.data = self.rewriter.out_beat.val();
        }
        if self.tag4.q.val().signal & self.signaler.out_valid.val() {
            self.out_beat.next.data = self.signaler.out_beat.val();
        }
        self.out_beat.next.keep = self.tag4.q.val().keep;
        self.out_beat.next.last = self.tag4.q.val().last;
        self.out_beat.next.port = self.tag4.q.val().port;
        self.out_beat.next.len = self.tag4.q.val().len;
        self.out_fifo.data.next = self.out_beat.val();
        self.out_fifo.push.next = self.tag4.q.val().valid;

        // ---- AXI-Stream out.
        self.m_axis_tvalid.next = self.out_fifo.head_valid.val();
        self.m_axis_tdata.next = self.out_fifo.head.val().data;
        self.m_axis_tkeep.next = self.out_fifo.head.val().keep;
        self.m_axis_tlast.next = self.out_fifo.head.val().last;
        self.to_tuser.port.next = self.out_fifo.head.val().port;
        self.to_tuser.len.next = self.out_fifo.head.val().len;
        self.m_axis_tuser.next = self.to_tuser.tuser.val();
        self.out_fifo.pop.next = self.m_axis_tready.val();
        self.overflowed.d.next = self.overflowed.q.val()
            | (self.job_fifo.push.val() & self.job_fifo.full.val())
            | (self.out_fifo.push.val() & self.out_fifo.full.val());
        self.overflow.next = self.overflowed.q.val();
        self.cfg_unused.next = self.cfg.val();
    }
}
