//! Egress: what the passes leaving the core send, as AXI-Stream frames.
//!
//! A pass leaving the core may forward its frame (rewritten towards a node with
//! [`Rewriter`], or unchanged to the pass-through or control port) and may send a signal to its
//! spine (the mirrored frame turned into a message with [`SignalBuilder`]), in that order, as the
//! model's `FrameSwitch` does. Each pass becomes one job in a FIFO; the emitter reads the frame's
//! beats from the frame buffer, one per clock, and hands the frame's slot back when the job is
//! done (unless the pass comes back as its second pass, which still needs the frame). A control
//! pass has no frame: its signal is built from a template, as the model's.
//!
//! Nothing is dropped here: the job FIFO has room for a job from every pass in flight in the core
//! and one more from each that comes back as its second pass (the top admits a frame or a
//! control pass only then, `switch::JOB_ROOM`), and the emitter issues a beat only when the
//! output FIFO has room for it and every beat still in the emitter's pipeline.
//!
//! ```text
//!  cycle  0: job head -> buffer address            (issue)
//!         1: buffer data (or the template)          -> beat register
//!         2: rewriter / signal builder inputs       (2 cycles)
//!         4: rewritten, signal or unchanged beat    -> output FIFO -> m_axis
//! ```

use crate::cfg::{SpineEntry, SpineTable, SwitchCfg};
use crate::deparser::{Rewriter, SignalBuilder};
use crate::fifo::Fifo;
use crate::phv::{BUF_BITS, HANDLE_BITS, Phv};
use horus_model::config::Role;
use horus_model::wire::{MIN_FRAME_LEN, PacketType};
use rust_hdl::prelude::*;

/// The job FIFO holds `2^JOB_BITS` jobs.
pub const JOB_BITS: usize = 7;
/// Jobs the job FIFO holds.
pub const JOB_SLOTS: u64 = 1 << JOB_BITS;

/// One pass's output work.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct EgressJob {
    pub handle: Bits<HANDLE_BITS>,
    pub start: Bits<BUF_BITS>,
    /// Beats of the frame, and the bytes in its last beat (0: 64).
    pub beats: Bits<6>,
    pub tail: Bits<6>,
    /// The frame's length in bytes (at most 2,048), for `tuser`.
    pub len: Bits<12>,
    /// One beat: the first beat is the last (decided here, not after the FIFO, which the
    /// emitter's pop then waits on).
    pub single: Bit,
    /// Forward the frame: rewritten (`rewrite`) or unchanged, out of `port`.
    pub fwd: Bit,
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
    /// Send a signal of `sig_type` to the spine at `sig_*`.
    pub sig: Bit,
    pub sig_type: Bits<7>,
    pub sig_src: Bits<16>,
    pub sig_dst: Bits<16>,
    pub sig_load: Bits<32>,
    pub sig_mac: Bits<48>,
    pub sig_ip: Bits<32>,
    pub sig_udp: Bits<16>,
    pub sig_port: Bits<8>,
    /// The pass carries a frame (not a control pass); give its slot back after the job.
    pub has_frame: Bit,
    pub free: Bit,
}

/// A beat on its way out.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct OutBeat {
    pub data: Bits<512>,
    pub keep: Bits<64>,
    pub last: Bit,
    pub port: Bits<8>,
    /// The frame's length in bytes, on every beat.
    pub len: Bits<12>,
}

/// A beat in the emitter's pipeline.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct BeatTag {
    pub valid: Bit,
    pub rewrite: Bit,
    pub signal: Bit,
    pub template: Bit,
    pub last: Bit,
    pub keep: Bits<64>,
    pub port: Bits<8>,
    pub len: Bits<12>,
}

/// The keep mask of a last beat holding `tail` bytes (0: all 64). Hand-written: rust-hdl has no
/// lint-clean way to build it; `update` is the same in Rust. Each bit is a function of `tail`
/// alone (a shifted constant, not `(1 << tail) - 1`, whose subtraction is a 64-bit carry chain).
#[derive(LogicBlock, Default)]
pub struct TailKeep {
    pub tail: Signal<In, Bits<6>>,
    pub keep: Signal<Out, Bits<64>>,
}

impl Logic for TailKeep {
    fn update(&mut self) {
        let t = self.tail.val().index();
        self.keep.next = if t == 0 {
            u64::MAX.into()
        } else {
            ((1u64 << t) - 1).into()
        };
    }

    fn connect(&mut self) {
        self.keep.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    if (tail == 6'd0) keep = {64{1'b1}};
    else keep = ~({64{1'b1}} << tail);
end"
            .into(),
        )
    }
}

/// `tuser` from a frame's egress port and length: the port in bits 7:0, the length in bytes in
/// bits 27:16, on every beat of the frame (a shell may need the length with the first beat: the
/// OpenNIC shell's QDMA card-to-host path and its packet adapter's last-beat `tkeep` take it
/// from `tuser_size`). Hand-written (rust-hdl cannot widen lint-clean); `update` is the same in
/// Rust.
#[derive(LogicBlock, Default)]
pub struct PortToTuser {
    pub port: Signal<In, Bits<8>>,
    pub len: Signal<In, Bits<12>>,
    pub tuser: Signal<Out, Bits<32>>,
}

impl Logic for PortToTuser {
    fn update(&mut self) {
        let port = self.port.val().index() as u64;
        let len = self.len.val().index() as u64;
        self.tuser.next = (len << TUSER_LEN_SHIFT | port).into();
    }

    fn connect(&mut self) {
        self.tuser.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom("assign tuser = {4'd0, len, 8'd0, port};".into())
    }
}

/// Where the frame's length starts in the switch's output `tuser` (bits 27:16; the port is in
/// bits 7:0).
pub const TUSER_LEN_SHIFT: usize = 16;

/// The frame a control pass's signal is built from (`FrameSwitch::template`): of it
/// `wire::signal_frame` keeps identification 0, DSCP/ECN 0, DF set (byte 20 = 0x40) and TTL 64
/// (byte 22). A constant too wide for rust-hdl's literals, hence hand-written; `update` is the
/// same in Rust.
#[derive(LogicBlock, Default)]
pub struct TemplateBeat {
    pub beat: Signal<Out, Bits<512>>,
}

impl Logic for TemplateBeat {
    fn update(&mut self) {
        // Set byte by byte: rust-hdl's shift of a 512-bit value takes its amount as a 512-bit
        // value and panics converting that to u64.
        let mut beat = Bits::<512>::default();
        beat.set_bits::<8>(160, 0x40u64.into());
        beat.set_bits::<8>(176, 64u64.into());
        self.beat.next = beat;
    }

    fn connect(&mut self) {
        self.beat.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom("assign beat = {328'd0, 8'd64, 8'd0, 8'h40, 160'd0};".into())
    }
}

#[derive(LogicBlock)]
pub struct Egress {
    pub clock: Signal<In, Clock>,
    /* Passes leaving the core. */
    pub pass_valid: Signal<In, Bit>,
    pub pass: Signal<In, Phv>,
    pub pass_again: Signal<In, Bit>,
    /// Jobs queued; the top admits a pass only while `jobs + passes in the core < JOB_ROOM`.
    pub jobs: Signal<Out, Bits<8>>,
    /* Configuration. */
    pub cfg: Signal<In, SwitchCfg>,
    pub spines: Signal<In, SpineTable>,
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
    /// The egress port in bits 7:0, the frame's length in bytes in bits 27:16 (`PortToTuser`).
    pub m_axis_tuser: Signal<Out, Bits<32>>,
    /// Sticky: a FIFO was pushed while full (the admission rule was broken; never expected).
    pub overflow: Signal<Out, Bit>,

    job_fifo: Fifo<EgressJob, JOB_BITS, { JOB_BITS + 1 }>,
    out_fifo: Fifo<OutBeat, 4, 5>,
    tail_keep: TailKeep,
    to_tuser: PortToTuser,
    template: TemplateBeat,
    rewriter: Rewriter,
    signaler: SignalBuilder,
    phase: DFF<Bit>,
    beat: DFF<Bits<6>>,
    /// The next beat of the head's frame is its last (valid after its first beat).
    last_r: DFF<Bit>,
    /// A slot given back, a clock after its job's last beat was issued.
    free_r: DFF<Bit>,
    free_handle_r: DFF<Bits<HANDLE_BITS>>,
    /// The buffer address of the frame's next beat after its first.
    rptr: DFF<Bits<BUF_BITS>>,
    job1: DFF<EgressJob>,
    job2: DFF<EgressJob>,
    tag1: DFF<BeatTag>,
    tag2: DFF<BeatTag>,
    tag3: DFF<BeatTag>,
    tag4: DFF<BeatTag>,
    beat_r: DFF<Bits<512>>,
    raw3: DFF<Bits<512>>,
    raw4: DFF<Bits<512>>,
    overflowed: DFF<Bit>,
    /// The descriptor fields the egress does not read (the name matches Verilator's default
    /// `--unused-regexp`).
    pass_unused: Signal<Local, Phv>,

    // Building a job.
    job: Signal<Local, EgressJob>,
    dropped: Signal<Local, Bit>,
    plain: Signal<Local, Bit>,
    wants_sig: Signal<Local, Bit>,
    sp0: Signal<Local, SpineEntry>,
    sp1: Signal<Local, SpineEntry>,
    sp2: Signal<Local, SpineEntry>,
    sp3: Signal<Local, SpineEntry>,
    /// Which spines have the pass's spine ID; the first of them (`sel_*` its number's bits),
    /// chosen by a tree of muxes rather than a chain.
    m0: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    m2: Signal<Local, Bit>,
    m3: Signal<Local, Bit>,
    sel_lo: Signal<Local, Bit>,
    sel_hi: Signal<Local, Bit>,
    sp01: Signal<Local, SpineEntry>,
    sp23: Signal<Local, SpineEntry>,
    /// The spine chosen; its valid bit and ID are not read (the name matches Verilator's
    /// `--unused-regexp`).
    chosen_unused: Signal<Local, SpineEntry>,
    // Emitting.
    head: Signal<Local, EgressJob>,
    room: Signal<Local, Bit>,
    first_beat: Signal<Local, Bit>,
    doing_fwd: Signal<Local, Bit>,
    last_beat: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    tag: Signal<Local, BeatTag>,
    out_beat: Signal<Local, OutBeat>,

    is_leaf: Constant<Bit>,
    one6: Constant<Bits<6>>,
    two6: Constant<Bits<6>>,
    one_buf: Constant<Bits<BUF_BITS>>,
    zero6: Constant<Bits<6>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    all_keep: Constant<Bits<64>>,
    signal_keep: Constant<Bits<64>>,
    /// A signal frame's length: the minimum frame.
    signal_len: Constant<Bits<12>>,
    out_room: Constant<Bits<5>>,
    t_idle_signal: Constant<Bits<7>>,
    t_idle_remove: Constant<Bits<7>>,
    t_queue_signal: Constant<Bits<7>>,
}

impl Egress {
    pub fn new(role: Role) -> Self {
        let t = |p: PacketType| Constant::new(Bits::<7>::from(u64::from(p.code())));
        Self {
            clock: Default::default(),
            pass_valid: Default::default(),
            pass: Default::default(),
            pass_again: Default::default(),
            jobs: Default::default(),
            cfg: Default::default(),
            spines: Default::default(),
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
            job_fifo: Default::default(),
            out_fifo: Default::default(),
            tail_keep: Default::default(),
            to_tuser: Default::default(),
            template: Default::default(),
            rewriter: Default::default(),
            signaler: Default::default(),
            phase: Default::default(),
            beat: Default::default(),
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
            pass_unused: Default::default(),
            job: Default::default(),
            dropped: Default::default(),
            plain: Default::default(),
            wants_sig: Default::default(),
            sp0: Default::default(),
            sp1: Default::default(),
            sp2: Default::default(),
            sp3: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            m3: Default::default(),
            sel_lo: Default::default(),
            sel_hi: Default::default(),
            sp01: Default::default(),
            sp23: Default::default(),
            chosen_unused: Default::default(),
            head: Default::default(),
            room: Default::default(),
            first_beat: Default::default(),
            doing_fwd: Default::default(),
            last_beat: Default::default(),
            done: Default::default(),
            tag: Default::default(),
            out_beat: Default::default(),
            is_leaf: Constant::new(role == Role::Leaf),
            one6: Constant::new(1.into()),
            two6: Constant::new(2.into()),
            one_buf: Constant::new(1.into()),
            zero6: Constant::new(0.into()),
            one16: Constant::new(1.into()),
            zero16: Constant::new(0.into()),
            all_keep: Constant::new(u64::MAX.into()),
            signal_keep: Constant::new(((1u64 << MIN_FRAME_LEN) - 1).into()),
            signal_len: Constant::new((MIN_FRAME_LEN as u64).into()),
            // At most four beats are in the emitter's pipeline: issue only while the output
            // FIFO (16 entries) holds at most 11.
            out_room: Constant::new(11.into()),
            t_idle_signal: t(PacketType::IdleSignal),
            t_idle_remove: t(PacketType::IdleRemove),
            t_queue_signal: t(PacketType::QueueSignal),
        }
    }
}

impl Logic for Egress {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            phase,
            beat,
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

        // ---- A pass becomes a job: where its frame goes, whether it signals, the slot.
        self.dropped.next = self.pass.val().drop.any();
        self.plain.next = self.pass.val().is_pass_through
            | self.pass.val().is_to_control
            | (!self.dropped.val() & (self.pass.val().is_reply | self.pass.val().is_reply_idle));
        self.job.next.handle = self.pass.val().handle;
        self.job.next.start = self.pass.val().start;
        // Frames in the buffer are at most 2,048 bytes: 32 beats.
        self.job.next.tail = self.pass.val().len.get_bits::<6>(0);
        self.job.next.beats = self.pass.val().len.get_bits::<6>(6);
        self.job.next.len = self.pass.val().len.get_bits::<12>(0);
        if self.job.val().tail.any() {
            self.job.next.beats = self.pass.val().len.get_bits::<6>(6) + self.one6.val();
        }
        self.job.next.single = self.job.val().beats == self.one6.val();
        self.job.next.fwd = self.pass.val().fwd | self.plain.val();
        self.job.next.rewrite = self.pass.val().fwd;
        self.job.next.port = self.pass.val().egress;
        if !self.pass.val().fwd {
            self.job.next.port = self.cfg.val().pass_through_port;
            if self.pass.val().is_to_control {
                self.job.next.port = self.cfg.val().control_port;
            }
        }
        self.job.next.mac = self.pass.val().mac;
        self.job.next.ip = self.pass.val().ip;
        self.job.next.udp = self.pass.val().port;
        // The forwarded header (the model's `forward_to`).
        self.job.next.pkt_type = self.pass.val().pkt_type;
        self.job.next.more = self.pass.val().more;
        self.job.next.pool = self.pass.val().pool;
        self.job.next.src = self.pass.val().src;
        if !self.is_leaf.val() {
            self.job.next.src = self.cfg.val().id;
        }
        self.job.next.dst = self.pass.val().out_dst;
        self.job.next.qlen = self.zero16.val();
        if self.pass.val().is_task & self.pass.val().idle {
            self.job.next.qlen = self.one16.val();
        }
        self.job.next.seq = self.pass.val().seq;
        // The signal (the model's `leaf_tail`), to the first spine with its ID.
        self.wants_sig.next = self.is_leaf.val()
            & self.pass.val().spine_ok
            & !self.dropped.val()
            & (self.pass.val().sig_idle_add
                | self.pass.val().sig_idle_remove
                | self.pass.val().sig_load_update);
        self.sp0.next = self.spines.val().s0;
        self.sp1.next = self.spines.val().s1;
        self.sp2.next = self.spines.val().s2;
        self.sp3.next = self.spines.val().s3;
        self.job.next.sig_type = self.t_queue_signal.val();
        if self.pass.val().sig_idle_add {
            self.job.next.sig_type = self.t_idle_signal.val();
        }
        if self.pass.val().sig_idle_remove {
            self.job.next.sig_type = self.t_idle_remove.val();
        }
        self.job.next.sig_src = self.pass.val().spine_node;
        self.job.next.sig_dst = self.pass.val().spine_id;
        self.job.next.sig_load = self.pass.val().avg;
        // Only a leaf signals: a spine's job takes spine 0's address, unused, and no compare.
        self.m0.next = self.is_leaf.val()
            & self.sp0.val().valid
            & (self.sp0.val().id == self.pass.val().spine_id);
        self.m1.next = self.is_leaf.val()
            & self.sp1.val().valid
            & (self.sp1.val().id == self.pass.val().spine_id);
        self.m2.next = self.is_leaf.val()
            & self.sp2.val().valid
            & (self.sp2.val().id == self.pass.val().spine_id);
        self.m3.next = self.is_leaf.val()
            & self.sp3.val().valid
            & (self.sp3.val().id == self.pass.val().spine_id);
        // The first match's number (0 when none matches: spine 0's address, unused).
        self.sel_lo.next = !self.m0.val() & (self.m1.val() | (!self.m2.val() & self.m3.val()));
        self.sel_hi.next = !self.m0.val() & !self.m1.val() & (self.m2.val() | self.m3.val());
        self.sp01.next = self.sp0.val();
        if self.sel_lo.val() {
            self.sp01.next = self.sp1.val();
        }
        self.sp23.next = self.sp2.val();
        if self.sel_lo.val() {
            self.sp23.next = self.sp3.val();
        }
        self.chosen_unused.next = self.sp01.val();
        if self.sel_hi.val() {
            self.chosen_unused.next = self.sp23.val();
        }
        self.job.next.sig =
            self.wants_sig.val() & (self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val());
        self.job.next.sig_mac = self.chosen_unused.val().mac;
        self.job.next.sig_ip = self.chosen_unused.val().ip;
        self.job.next.sig_udp = self.chosen_unused.val().udp;
        self.job.next.sig_port = self.chosen_unused.val().egress;
        // Control passes carry no frame; a first pass that comes back keeps its frame.
        self.job.next.has_frame = !(self.pass.val().is_ctl_pool
            | self.pass.val().is_ctl_params
            | self.pass.val().is_ctl_add
            | self.pass.val().is_ctl_remove
            | self.pass.val().is_ctl_remove2
            | self.pass.val().is_ctl_read);
        self.job.next.free = self.job.val().has_frame & !self.pass_again.val();
        self.job_fifo.data.next = self.job.val();
        // A pass that wants a signal is queued whether or not a spine has its ID (the spine
        // match stays off the push, whose fan-out ends the leaf's deepest paths otherwise): with
        // no match the job has nothing to do and the emitter retires it in one clock.
        self.job_fifo.push.next = self.pass_valid.val()
            & (self.job.val().fwd | self.wants_sig.val() | self.job.val().free);
        self.jobs.next = self.job_fifo.count.val();

        // ---- The emitter: one beat per clock from the head job.
        self.head.next = self.job_fifo.head.val();
        self.room.next = self.out_fifo.count.val() <= self.out_room.val();
        self.doing_fwd.next = self.head.val().fwd & !self.phase.q.val();
        self.first_beat.next = !self.beat.q.val().any();
        self.last_beat.next = self.last_r.q.val();
        if self.first_beat.val() {
            self.last_beat.next = self.head.val().single;
        }
        self.tail_keep.tail.next = self.job_fifo.head.val().tail;
        self.tag.next.valid = false;
        self.tag.next.rewrite = false;
        self.tag.next.signal = false;
        self.tag.next.template = false;
        self.tag.next.last = true;
        self.tag.next.keep = self.signal_keep.val();
        self.tag.next.port = self.head.val().sig_port;
        self.tag.next.len = self.signal_len.val();
        self.buf_addr.next = self.head.val().start;
        self.done.next = false;
        if self.job_fifo.head_valid.val() {
            if !self.head.val().fwd & !self.head.val().sig {
                self.done.next = true;
            } else if self.room.val() {
                self.tag.next.valid = true;
                if self.doing_fwd.val() {
                    if !self.first_beat.val() {
                        self.buf_addr.next = self.rptr.q.val();
                    }
                    self.rptr.d.next = self.buf_addr.val() + self.one_buf.val();
                    self.tag.next.rewrite = self.head.val().rewrite & self.first_beat.val();
                    self.tag.next.last = self.last_beat.val();
                    self.tag.next.keep = self.all_keep.val();
                    if self.last_beat.val() {
                        self.tag.next.keep = self.tail_keep.keep.val();
                    }
                    self.tag.next.port = self.head.val().port;
                    self.tag.next.len = self.head.val().len;
                    self.beat.d.next = self.beat.q.val() + self.one6.val();
                    self.last_r.d.next =
                        self.beat.q.val() + self.two6.val() == self.head.val().beats;
                    if self.last_beat.val() {
                        self.beat.d.next = self.zero6.val();
                        if self.head.val().sig {
                            self.phase.d.next = true;
                        } else {
                            self.done.next = true;
                        }
                    }
                } else {
                    self.tag.next.signal = true;
                    self.tag.next.template = !self.head.val().has_frame;
                    self.phase.d.next = false;
                    self.done.next = true;
                }
            }
        }
        self.job_fifo.pop.next = self.done.val();
        // Registered: the slot's last beat has been read by then all the same.
        self.free_r.d.next = self.done.val() & self.head.val().free;
        self.free_handle_r.d.next = self.head.val().handle;
        self.free_valid.next = self.free_r.q.val();
        self.free_handle.next = self.free_handle_r.q.val();
        self.tag1.d.next = self.tag.val();
        self.job1.d.next = self.head.val();

        // Cycle 1: the beat from the buffer (or the template).
        self.beat_r.d.next = self.buf_data.val();
        if self.tag1.q.val().template {
            self.beat_r.d.next = self.template.beat.val();
        }
        self.tag2.d.next = self.tag1.q.val();
        self.job2.d.next = self.job1.q.val();

        // Cycle 2: the deparser's inputs, all from registers.
        self.rewriter.in_valid.next = self.tag2.q.val().valid & self.tag2.q.val().rewrite;
        self.rewriter.first_beat.next = self.beat_r.q.val();
        self.rewriter.dst_mac.next = self.job2.q.val().mac;
        self.rewriter.dst_ip.next = self.job2.q.val().ip;
        self.rewriter.dst_port.next = self.job2.q.val().udp;
        self.rewriter.pkt_type.next = self.job2.q.val().pkt_type;
        self.rewriter.more_packets.next = self.job2.q.val().more;
        self.rewriter.pool_id.next = self.job2.q.val().pool;
        self.rewriter.src_id.next = self.job2.q.val().src;
        self.rewriter.dst_id.next = self.job2.q.val().dst;
        self.rewriter.qlen.next = self.job2.q.val().qlen;
        self.rewriter.seq_num.next = self.job2.q.val().seq;
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
        self.signaler.pool_id.next = self.job2.q.val().pool;
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
        self.pass_unused.next = self.pass.val();
    }
}
