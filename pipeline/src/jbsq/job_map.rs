//! The map from a pass leaving the JBSQ core to its egress job ([`JbsqJob`]): what the pass's
//! decision asks of the egress, as the model's frame switch (`JbsqFrameSwitch::emit`) sends it.
//!
//! - The own frame (its slot, length and beats) always: a hold copies it, a forward sends it. A
//!   task placed or a continuation that found its node goes rewritten towards `nodeAddr`'s
//!   address, `dst_id` the address's and `qlen` 0 (the model's `to_worker`); a reply, a frame not
//!   Horus's and a control frame go unchanged out of the pass-through or the control port.
//! - A held task: `hold`, into the store's slot `queue_base + at`. A release: the released task's
//!   frame from that slot, rewritten towards the replying worker's address (`nodeAddr` read it
//!   for the releasing pass), `dst_id` the address's and `qlen` 0.
//! - The message to the spine whose ID the pass carries, addressed from the switch's spine
//!   table (the first entry with that ID, as the paper egress's lookup); none when no entry has it.
//! - The frame's slot goes back after the job unless the pass comes back (`again`), and a control
//!   pass has none.
//!
//! The map is combinational: the job is pushed into the egress's job FIFO in the clock the pass
//! leaves. `push` says the job has something to do.

use super::egress::{JbsqJob, JbsqSend, STORE_SLOT_BEATS};
use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use crate::cfg::{SpineEntry, SpineTable, SwitchCfg};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct JbsqJobMap {
    /// The pass leaving the core, and whether it comes back.
    pub pass_valid: Signal<In, Bit>,
    pub pass: Signal<In, JbsqPhv>,
    pub again: Signal<In, Bit>,
    pub cfg: Signal<In, SwitchCfg>,
    pub spines: Signal<In, SpineTable>,
    pub job: Signal<Out, JbsqJob>,
    /// The job has something to do: push it.
    pub push: Signal<Out, Bit>,

    /// The descriptor and configuration fields not read (the names match Verilator's
    /// `--unused-regexp`).
    pass_unused: Signal<Local, JbsqPhv>,
    cfg_unused: Signal<Local, SwitchCfg>,
    j: Signal<Local, JbsqJob>,
    /// The own frame's send and the released frame's.
    own: Signal<Local, JbsqSend>,
    rel: Signal<Local, JbsqSend>,
    /// Beats of the own and the released frame (their lengths rounded up to 64 bytes).
    own_beats: Signal<Local, Bits<6>>,
    rel_beats: Signal<Local, Bits<6>>,
    ctl: Signal<Local, Bit>,
    plain: Signal<Local, Bit>,
    to_node: Signal<Local, Bit>,
    slot: Signal<Local, Bits<16>>,
    wants_sig: Signal<Local, Bit>,
    sp0: Signal<Local, SpineEntry>,
    sp1: Signal<Local, SpineEntry>,
    sp2: Signal<Local, SpineEntry>,
    sp3: Signal<Local, SpineEntry>,
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
    one6: Constant<Bits<6>>,
    zero16: Constant<Bits<16>>,
    slot_shift: Constant<Bits<16>>,
    sh16: Constant<Bits<32>>,
    /// The average's integer part and fraction, widened to its 16.16 word.
    qlen_w: ZeroExtend<16, 32>,
    seq_w: ZeroExtend<16, 32>,
    zero_job: Constant<JbsqJob>,
    zero_send: Constant<JbsqSend>,
}

impl Default for JbsqJobMap {
    fn default() -> Self {
        Self {
            pass_valid: Default::default(),
            pass: Default::default(),
            again: Default::default(),
            cfg: Default::default(),
            spines: Default::default(),
            job: Default::default(),
            push: Default::default(),
            pass_unused: Default::default(),
            cfg_unused: Default::default(),
            j: Default::default(),
            own: Default::default(),
            rel: Default::default(),
            own_beats: Default::default(),
            rel_beats: Default::default(),
            ctl: Default::default(),
            plain: Default::default(),
            to_node: Default::default(),
            slot: Default::default(),
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
            one6: Constant::new(1.into()),
            zero16: Constant::new(0.into()),
            slot_shift: Constant::new((STORE_SLOT_BEATS.trailing_zeros() as u64).into()),
            sh16: Constant::new(16.into()),
            qlen_w: Default::default(),
            seq_w: Default::default(),
            zero_job: Constant::new(JbsqJob::default()),
            zero_send: Constant::new(JbsqSend::default()),
        }
    }
}

const _: () = assert!(STORE_SLOT_BEATS.is_power_of_two());

impl Logic for JbsqJobMap {
    #[hdl_gen]
    fn update(&mut self) {
        self.pass_unused.next = self.pass.val();
        self.cfg_unused.next = self.cfg.val();
        self.j.next = self.zero_job.val();
        self.j.next.handle = self.pass.val().handle;
        self.j.next.start = self.pass.val().start;
        // Frames in the buffer are at most 2,048 bytes: 32 beats.
        self.own_beats.next = self.pass.val().len.get_bits::<6>(6);
        if self.pass.val().len.get_bits::<6>(0).any() {
            self.own_beats.next = self.pass.val().len.get_bits::<6>(6) + self.one6.val();
        }
        self.rel_beats.next = self.pass.val().rel_len.get_bits::<6>(6);
        if self.pass.val().rel_len.get_bits::<6>(0).any() {
            self.rel_beats.next = self.pass.val().rel_len.get_bits::<6>(6) + self.one6.val();
        }
        self.ctl.next = self.pass.val().is_ctl_pool
            | self.pass.val().is_ctl_add
            | self.pass.val().is_ctl_remove
            | self.pass.val().is_ctl_read
            | self.pass.val().is_ctl_place
            | self.pass.val().is_ctl_bound
            | self.pass.val().is_ctl_pool_params
            | self.pass.val().is_ctl_move;
        self.j.next.has_frame = !self.ctl.val();
        self.j.next.free = !self.ctl.val() & !self.again.val();

        // The own frame: forwarded to a node, or unchanged.
        self.to_node.next =
            self.pass.val().addr_ok & (self.pass.val().is_task | self.pass.val().is_cont);
        self.plain.next = self.pass.val().is_pass_through
            | self.pass.val().is_to_control
            | (self.pass.val().is_reply & !self.pass.val().is_return);
        self.j.next.fwd = self.to_node.val() | self.plain.val();
        self.j.next.own_tail = self.pass.val().len.get_bits::<6>(0);
        self.own.next = self.zero_send.val();
        self.own.next.beats = self.own_beats.val();
        self.own.next.len = self.pass.val().len.get_bits::<12>(0);
        self.own.next.single = self.own_beats.val() == self.one6.val();
        self.own.next.port = self.cfg.val().pass_through_port;
        if self.pass.val().is_to_control {
            self.own.next.port = self.cfg.val().control_port;
        }
        if self.to_node.val() {
            self.own.next.rewrite = true;
            self.own.next.port = self.pass.val().egress;
            self.own.next.mac = self.pass.val().mac;
            self.own.next.ip = self.pass.val().ip;
            self.own.next.udp = self.pass.val().udp;
            self.own.next.pkt_type = self.pass.val().pkt_type;
            self.own.next.more = self.pass.val().more;
            self.own.next.pool = self.pass.val().pool;
            self.own.next.src = self.pass.val().src;
            self.own.next.dst = self.pass.val().out_dst;
            self.own.next.qlen = self.zero16.val();
            self.own.next.seq = self.pass.val().seq;
        }

        // A hold or a release: the store's slot.
        self.slot.next = self.pass.val().queue_base + self.pass.val().at;
        self.j.next.hold = self.pass.val().held;
        self.j.next.release = self.pass.val().release;
        if self.pass.val().held | self.pass.val().release {
            self.j.next.store_base = self.slot.val() << self.slot_shift.val();
        }
        self.rel.next = self.zero_send.val();
        if self.pass.val().release {
            self.j.next.rel_tail = self.pass.val().rel_len.get_bits::<6>(0);
            self.rel.next.beats = self.rel_beats.val();
            self.rel.next.len = self.pass.val().rel_len.get_bits::<12>(0);
            self.rel.next.single = self.rel_beats.val() == self.one6.val();
            self.rel.next.rewrite = true;
            self.rel.next.port = self.pass.val().egress;
            self.rel.next.mac = self.pass.val().mac;
            self.rel.next.ip = self.pass.val().ip;
            self.rel.next.udp = self.pass.val().udp;
            self.rel.next.pkt_type = self.pass.val().rel_pkt_type;
            self.rel.next.more = self.pass.val().rel_more;
            self.rel.next.pool = self.pass.val().rel_pool;
            self.rel.next.src = self.pass.val().rel_src;
            self.rel.next.dst = self.pass.val().out_dst;
            self.rel.next.qlen = self.zero16.val();
            self.rel.next.seq = self.pass.val().rel_seq;
        }

        // The message, to the first spine with its ID.
        self.wants_sig.next = self.pass.val().spine_ok
            & (self.pass.val().idle_add
                | self.pass.val().idle_remove
                | self.pass.val().load_update);
        self.sp0.next = self.spines.val().s0;
        self.sp1.next = self.spines.val().s1;
        self.sp2.next = self.spines.val().s2;
        self.sp3.next = self.spines.val().s3;
        self.j.next.sig_type = self.pass.val().sig_pkt_type;
        self.j.next.sig_pool = self.pass.val().pool;
        self.j.next.sig_src = self.pass.val().spine_node;
        self.j.next.sig_dst = self.pass.val().spine_id;
        self.qlen_w.narrow.next = self.pass.val().sig_qlen;
        self.seq_w.narrow.next = self.pass.val().sig_seq;
        self.j.next.sig_load = (self.qlen_w.wide.val() << self.sh16.val()) | self.seq_w.wide.val();
        self.m0.next = self.sp0.val().valid & (self.sp0.val().id == self.pass.val().spine_id);
        self.m1.next = self.sp1.val().valid & (self.sp1.val().id == self.pass.val().spine_id);
        self.m2.next = self.sp2.val().valid & (self.sp2.val().id == self.pass.val().spine_id);
        self.m3.next = self.sp3.val().valid & (self.sp3.val().id == self.pass.val().spine_id);
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
        self.j.next.sig =
            self.wants_sig.val() & (self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val());
        self.j.next.sig_mac = self.chosen_unused.val().mac;
        self.j.next.sig_ip = self.chosen_unused.val().ip;
        self.j.next.sig_udp = self.chosen_unused.val().udp;
        self.j.next.sig_port = self.chosen_unused.val().egress;

        self.j.next.own = self.own.val();
        self.j.next.rel = self.rel.val();
        self.job.next = self.j.val();
        self.push.next = self.pass_valid.val()
            & (self.j.val().fwd
                | self.j.val().hold
                | self.j.val().release
                | self.wants_sig.val()
                | self.j.val().free);
    }
}
