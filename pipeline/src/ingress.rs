//! Ingress: the frame buffer and the parser in front of the scheduler core.
//!
//! Frames arrive as 512-bit AXI-Stream beats (byte `i` of a beat in `tdata[8i+7:8i]`; `tkeep`
//! all ones but in the last beat, which keeps a run of bytes from byte 0: a frame with any other
//! `tkeep` is dropped and counted as malformed). Each frame takes one slot of the frame buffer,
//! `2^SLOT_BEAT_BITS` beats (2,048 bytes); slots are taken in ring order and given back, in any order, by the egress once
//! the frame's last pass has left (`free_*`). When the next slot in the ring is still in use, the
//! ingress holds `tready` low before the next frame's first beat.
//!
//! When a frame's last beat arrives, its first beat and its length go through the [`Parser`]; two
//! cycles later its verdict, arrival time (`now_us` at the last beat) and length are written to
//! the slot's descriptor, and the frame is ready from the next cycle on (the descriptor table is
//! an [`RmwTable`], which forwards an entry written in a cycle to a read of it presented then).
//! Frames are offered to the core in arrival order (`pkt_*`), one per cycle when the core takes
//! them (`pkt_take`).
//!
//! A frame longer than a slot is received to its end, but only its first slot's worth of beats is
//! kept, and the parser's verdict is replaced by `CLASS_DROP_MALFORMED`: it is dropped and counted
//! as malformed (the model has no length limit; this is the hardware's, documented in
//! `docs/pipeline.md`).
//!
//! ```text
//!  s_axis --> [slot ring: beats] ------------------------------> buffer read port (egress)
//!        \--> first beat + length --> parser (2) --> descriptor[slot], ready --> pkt_* (core)
//! ```

use crate::parser::{CLASS_DROP_MALFORMED, Parsed, Parser};
use crate::phv::{BUF_BITS, HANDLE_BITS, SLOT_BEAT_BITS};
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// What the core is given for a frame.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct FrameDesc {
    pub parsed: Parsed,
    pub time: Bits<32>,
    pub len: Bits<16>,
}

/// `len = 64 * beats + (bytes kept in the last beat)`: a frame's length from the beats before its
/// last and the last beat's `tkeep`, and whether that `tkeep` is a run of ones from byte 0 (the
/// only kind the ingress accepts). The bytes kept are decoded from where the run ends
/// ([`kept_bytes`]), not counted: a few LUT levels instead of an adder tree. A hand-written
/// primitive (rust-hdl cannot widen or concatenate lint-clean); `update` is the same in Rust.
#[derive(LogicBlock, Default)]
pub struct FrameLen {
    /// Beats before the last one.
    pub beats: Signal<In, Bits<10>>,
    pub keep: Signal<In, Bits<64>>,
    pub len: Signal<Out, Bits<16>>,
    /// `keep` is `2^n - 1` for some `n` in `0..=64`.
    pub contiguous: Signal<Out, Bit>,
}

/// The bytes a contiguous `keep` (`2^n - 1`) holds, `n`, decoded bit by bit from where its run
/// of ones ends, as [`FrameLen`]'s Verilog does: bit `j < 6` of `n` is set when `n` lies in
/// `[(2m + 1) 2^j, (2m + 2) 2^j)` for some `m`, that is when `keep` has a one at byte
/// `(2m + 1) 2^j - 1` and a zero at byte `(2m + 2) 2^j - 1`; bit 6 when byte 63 is kept. For any
/// other `keep` the value is some number up to 127 that nothing relies on.
pub fn kept_bytes(keep: u64) -> u64 {
    let mut n = (keep >> 63) << 6;
    for (j, mask) in KEPT_MASKS.iter().enumerate() {
        // Byte `a` kept and byte `a + 2^j` not, for the bytes `a` of the mask.
        n |= u64::from(keep & !(keep >> (1 << j)) & mask != 0) << j;
    }
    n
}

/// For bit `j` of [`kept_bytes`]: the bytes `(2m + 1) 2^j - 1`, `m` in `0..32 >> j`. Taking
/// all pairs of a bit at once with a mask, rather than one pair at a time, is the same function
/// of `keep`; it costs Verilator a few 64-bit operations instead of 63 single-bit ones.
const KEPT_MASKS: [u64; 6] = [
    0x5555_5555_5555_5555,
    0x2222_2222_2222_2222,
    0x0808_0808_0808_0808,
    0x0080_0080_0080_0080,
    0x0000_8000_0000_8000,
    0x0000_0000_8000_0000,
];

impl Logic for FrameLen {
    fn update(&mut self) {
        let keep = self.keep.val().to_u64();
        let beats = self.beats.val().index() as u64;
        self.len.next = ((beats * 64 + kept_bytes(keep)) & 0xffff).into();
        self.contiguous.next = keep & keep.wrapping_add(1) == 0;
    }

    fn connect(&mut self) {
        self.len.connect();
        self.contiguous.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
reg [6:0] ones;
always @(*) begin
    ones = {keep[63],
        |(keep & ~(keep >> 32) & 64'h0000000080000000),
        |(keep & ~(keep >> 16) & 64'h0000800000008000),
        |(keep & ~(keep >> 8) & 64'h0080008000800080),
        |(keep & ~(keep >> 4) & 64'h0808080808080808),
        |(keep & ~(keep >> 2) & 64'h2222222222222222),
        |(keep & ~(keep >> 1) & 64'h5555555555555555)};
    len = {beats, 6'd0} + {9'd0, ones};
    contiguous = ~|(~keep[62:0] & keep[63:1]);
end"
            .into(),
        )
    }
}

#[derive(LogicBlock)]
pub struct Ingress {
    pub clock: Signal<In, Clock>,
    /* AXI-Stream in. */
    pub s_axis_tdata: Signal<In, Bits<512>>,
    pub s_axis_tkeep: Signal<In, Bits<64>>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub s_axis_tlast: Signal<In, Bit>,
    /// Microseconds, wrapping: the arrival time of a frame is taken at its last beat.
    pub now_us: Signal<In, Bits<32>>,
    /* Frames to the core, in arrival order. */
    pub pkt_valid: Signal<Out, Bit>,
    pub pkt: Signal<Out, FrameDesc>,
    pub pkt_handle: Signal<Out, Bits<HANDLE_BITS>>,
    pub pkt_start: Signal<Out, Bits<BUF_BITS>>,
    pub pkt_take: Signal<In, Bit>,
    /* The buffer's read port: data one cycle after the address. */
    pub buf_addr: Signal<In, Bits<BUF_BITS>>,
    pub buf_data: Signal<Out, Bits<512>>,
    /* A slot given back. */
    pub free_valid: Signal<In, Bit>,
    pub free_handle: Signal<In, Bits<HANDLE_BITS>>,

    buffer: RAM<Bits<512>, BUF_BITS>,
    descs: RmwTable<FrameDesc, HANDLE_BITS>,
    /// The memory is indexed directly (`RmwTable::rd_off`).
    no_off: Constant<Bits<HANDLE_BITS>>,
    parser: Parser,
    frame_len: FrameLen,
    in_frame: DFF<Bit>,
    slot: DFF<Bits<HANDLE_BITS>>,
    /// Where the frame's next beat goes.
    wptr: DFF<Bits<BUF_BITS>>,
    beat: DFF<Bits<10>>,
    first: DFF<Bits<512>>,
    alloc: DFF<Bits<HANDLE_BITS>>,
    alloc_base: DFF<Bits<BUF_BITS>>,
    busy: DFF<Bits<64>>,
    ready: DFF<Bits<64>>,
    sched: DFF<Bits<HANDLE_BITS>>,
    /// `sched + 1`, stored with bit 0 inverted (registers start at zero): the slot offered next.
    sched1_x: DFF<Bits<HANDLE_BITS>>,
    /// `ready[sched]`, kept a clock ahead: `pkt_valid` from a register rather than a 64-to-1 mux
    /// (the core's pass mux and its pass count run on it).
    offer: DFF<Bit>,
    sched_base: DFF<Bits<BUF_BITS>>,
    // Beside the parser: slot, base, time, length, oversize.
    p1: DFF<Bits<HANDLE_BITS>>,
    p2: DFF<Bits<HANDLE_BITS>>,
    p1_time: DFF<Bits<32>>,
    p2_time: DFF<Bits<32>>,
    p1_len: DFF<Bits<16>>,
    p2_len: DFF<Bits<16>>,
    p1_over: DFF<Bit>,
    p2_over: DFF<Bit>,
    /// A beat of the frame so far had a `tkeep` the ingress does not accept.
    bad_keep: DFF<Bit>,
    /// This beat's `tkeep` is acceptable; with the earlier beats'.
    keep_ok: Signal<Local, Bit>,
    frame_bad: Signal<Local, Bit>,

    take: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    sched1: Signal<Local, Bits<HANDLE_BITS>>,
    cur_slot: Signal<Local, Bits<HANDLE_BITS>>,
    cur_wptr: Signal<Local, Bits<BUF_BITS>>,
    cur_beat: Signal<Local, Bits<10>>,
    stores: Signal<Local, Bit>,
    verdict: Signal<Local, Parsed>,
    desc: Signal<Local, FrameDesc>,
    next_sched: Signal<Local, Bits<HANDLE_BITS>>,
    next_busy: Signal<Local, Bits<64>>,
    next_ready: Signal<Local, Bits<64>>,
    slot_beats: Constant<Bits<10>>,
    slot_size: Constant<Bits<BUF_BITS>>,
    beat_max: Constant<Bits<10>>,
    one10: Constant<Bits<10>>,
    one64: Constant<Bits<64>>,
    one_buf: Constant<Bits<BUF_BITS>>,
    one_h: Constant<Bits<HANDLE_BITS>>,
    zero10: Constant<Bits<10>>,
    malformed: Constant<Bits<2>>,
}

impl Default for Ingress {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            now_us: Default::default(),
            pkt_valid: Default::default(),
            pkt: Default::default(),
            pkt_handle: Default::default(),
            pkt_start: Default::default(),
            pkt_take: Default::default(),
            buf_addr: Default::default(),
            buf_data: Default::default(),
            free_valid: Default::default(),
            free_handle: Default::default(),
            buffer: Default::default(),
            descs: Default::default(),
            no_off: Constant::new(0.into()),
            parser: Default::default(),
            frame_len: Default::default(),
            in_frame: Default::default(),
            slot: Default::default(),
            wptr: Default::default(),
            beat: Default::default(),
            first: Default::default(),
            alloc: Default::default(),
            alloc_base: Default::default(),
            busy: Default::default(),
            ready: Default::default(),
            sched: Default::default(),
            sched1_x: Default::default(),
            offer: Default::default(),
            sched_base: Default::default(),
            p1: Default::default(),
            p2: Default::default(),
            p1_time: Default::default(),
            p2_time: Default::default(),
            p1_len: Default::default(),
            p2_len: Default::default(),
            p1_over: Default::default(),
            p2_over: Default::default(),
            bad_keep: Default::default(),
            keep_ok: Default::default(),
            frame_bad: Default::default(),
            take: Default::default(),
            advance: Default::default(),
            sched1: Default::default(),
            cur_slot: Default::default(),
            cur_wptr: Default::default(),
            cur_beat: Default::default(),
            stores: Default::default(),
            verdict: Default::default(),
            desc: Default::default(),
            next_sched: Default::default(),
            next_busy: Default::default(),
            next_ready: Default::default(),
            slot_beats: Constant::new((1u64 << SLOT_BEAT_BITS).into()),
            slot_size: Constant::new((1u64 << SLOT_BEAT_BITS).into()),
            beat_max: Constant::new(1023.into()),
            one10: Constant::new(1.into()),
            one64: Constant::new(1.into()),
            one_buf: Constant::new(1.into()),
            one_h: Constant::new(1.into()),
            zero10: Constant::new(0.into()),
            malformed: Constant::new(CLASS_DROP_MALFORMED.into()),
        }
    }
}

impl Logic for Ingress {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_frame, slot, wptr, beat, first, alloc, alloc_base, busy, ready, sched,
            sched1_x, offer, sched_base, p1, p2, p1_time, p2_time, p1_len, p2_len, p1_over,
            p2_over, bad_keep
        );
        clock!(self, clock, parser, descs);
        self.buffer.read_clock.next = self.clock.val();
        self.buffer.write_clock.next = self.clock.val();
        self.next_busy.next = self.busy.q.val();
        self.next_ready.next = self.ready.q.val();

        // ---- Receive. A frame starts only in a free slot; its beats are then always taken.
        self.s_axis_tready.next =
            self.in_frame.q.val() | !self.busy.q.val().get_bit(self.alloc.q.val().index());
        self.take.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();
        self.cur_slot.next = self.slot.q.val();
        self.cur_wptr.next = self.wptr.q.val();
        self.cur_beat.next = self.beat.q.val();
        if !self.in_frame.q.val() {
            self.cur_slot.next = self.alloc.q.val();
            self.cur_wptr.next = self.alloc_base.q.val();
            self.cur_beat.next = self.zero10.val();
        }
        self.stores.next = self.take.val() & (self.cur_beat.val() < self.slot_beats.val());
        self.buffer.write_enable.next = self.stores.val();
        self.buffer.write_address.next = self.cur_wptr.val();
        self.buffer.write_data.next = self.s_axis_tdata.val();
        self.frame_len.beats.next = self.cur_beat.val();
        self.frame_len.keep.next = self.s_axis_tkeep.val();
        self.parser.in_valid.next = self.take.val() & self.s_axis_tlast.val();
        self.parser.first_beat.next = self.first.q.val();
        if !self.in_frame.q.val() {
            self.parser.first_beat.next = self.s_axis_tdata.val();
        }
        self.parser.frame_len.next = self.frame_len.len.val();
        // A beat before the last keeps all its bytes; the last keeps a run from byte 0.
        self.keep_ok.next = self.frame_len.contiguous.val();
        if !self.s_axis_tlast.val() {
            self.keep_ok.next = self.s_axis_tkeep.val().all();
        }
        self.frame_bad.next = !self.keep_ok.val();
        if self.in_frame.q.val() & self.bad_keep.q.val() {
            self.frame_bad.next = true;
        }
        if self.take.val() {
            if !self.in_frame.q.val() {
                self.first.d.next = self.s_axis_tdata.val();
                self.slot.d.next = self.alloc.q.val();
                self.alloc.d.next = self.alloc.q.val() + self.one_h.val();
                self.alloc_base.d.next = self.alloc_base.q.val() + self.slot_size.val();
                self.next_busy.next = self.busy.q.val() | (self.one64.val() << self.alloc.q.val());
            }
            self.in_frame.d.next = !self.s_axis_tlast.val();
            self.bad_keep.d.next = self.frame_bad.val();
            if self.stores.val() {
                self.wptr.d.next = self.cur_wptr.val() + self.one_buf.val();
            }
            self.beat.d.next = self.cur_beat.val();
            if self.cur_beat.val() != self.beat_max.val() {
                self.beat.d.next = self.cur_beat.val() + self.one10.val();
            }
        }
        self.p1.d.next = self.cur_slot.val();
        self.p1_time.d.next = self.now_us.val();
        self.p1_len.d.next = self.frame_len.len.val();
        // Longer than a slot, or a `tkeep` not accepted: malformed.
        self.p1_over.d.next = (self.cur_beat.val() >= self.slot_beats.val()) | self.frame_bad.val();
        self.p2.d.next = self.p1.q.val();
        self.p2_time.d.next = self.p1_time.q.val();
        self.p2_len.d.next = self.p1_len.q.val();
        self.p2_over.d.next = self.p1_over.q.val();

        // ---- The parser's verdict becomes the slot's descriptor.
        self.verdict.next = self.parser.out.val();
        if self.p2_over.q.val() {
            self.verdict.next.class = self.malformed.val();
        }
        self.desc.next.parsed = self.verdict.val();
        self.desc.next.time = self.p2_time.q.val();
        self.desc.next.len = self.p2_len.q.val();
        self.descs.wr_en.next = self.parser.out_valid.val();
        self.descs.wr_addr.next = self.p2.q.val();
        self.descs.wr_data.next = self.desc.val();
        // Ready from the next cycle on: the descriptor table forwards the entry written now to a
        // read of its slot presented now.
        if self.parser.out_valid.val() {
            self.next_ready.next = self.ready.q.val() | (self.one64.val() << self.p2.q.val());
        }

        // ---- Offer frames to the core in ring order.
        // `pkt_valid` from a register alone (no path from `pkt_take` that Verilator could see
        // through a shared signal, and none through the ready mux).
        self.pkt_valid.next = self.offer.q.val();
        self.pkt.next = self.descs.rd_data.val();
        self.pkt_handle.next = self.sched.q.val();
        self.pkt_start.next = self.sched_base.q.val();
        self.sched1.next = self.sched1_x.q.val() ^ self.one_h.val();
        self.advance.next = self.offer.q.val() & self.pkt_take.val();
        self.next_sched.next = self.sched.q.val();
        // The slot offered next is ready if it was or if its descriptor is written now (a slot
        // taken now is not the next one: the ring has more than one slot).
        self.offer.d.next = self.offer.q.val()
            | (self.parser.out_valid.val() & (self.p2.q.val() == self.sched.q.val()));
        if self.advance.val() {
            self.next_sched.next = self.sched1.val();
            self.sched_base.d.next = self.sched_base.q.val() + self.slot_size.val();
            self.next_ready.next =
                self.next_ready.val() & !(self.one64.val() << self.sched.q.val());
            self.offer.d.next = self.ready.q.val().get_bit(self.sched1.val().index())
                | (self.parser.out_valid.val() & (self.p2.q.val() == self.sched1.val()));
        }
        self.sched.d.next = self.next_sched.val();
        self.sched1_x.d.next = (self.next_sched.val() + self.one_h.val()) ^ self.one_h.val();
        self.descs.rd_addr.next = self.next_sched.val();
        self.descs.rd_off.next = self.no_off.val();
        self.descs.rd_indexed.next = false;
        self.descs.rd_same.next = false;
        self.descs.rd_index.next = self.no_off.val();

        // ---- Slots given back.
        if self.free_valid.val() {
            self.next_busy.next =
                self.next_busy.val() & !(self.one64.val() << self.free_handle.val());
        }
        self.busy.d.next = self.next_busy.val();
        self.ready.d.next = self.next_ready.val();

        self.buffer.read_address.next = self.buf_addr.val();
        self.buf_data.next = self.buffer.read_data.val();
    }
}
