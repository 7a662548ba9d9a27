//! One AXI-Stream output onto three, by the egress port the switch wrote in `tuser[7:0]`: a
//! frame goes whole to the stream its port names (port 0, 1 or 2), decided on its first beat and
//! held to its last. A frame for a port the board does not have (above 2, or a stream the board
//! leaves out, [`FrameDemux3::new`]) is taken and dropped whole, and counted in `dropped` (the
//! board's `BOARD_DROPS` register).
//! Back-pressure comes from the chosen output alone; during `reset` no beat moves. `m_len` is the
//! frame's length in bytes (`tuser[27:16]`), on every beat, for the shells' `tuser`.
//!
//! ```text
//!            ┌── m0 (port 0)
//!   s ── route ── m1 (port 1)
//!            └── m2 (port 2)      port > 2: dropped, counted
//! ```

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct FrameDemux3 {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no frame in progress, the count at zero.
    pub reset: Signal<In, Bit>,
    /* Input. */
    pub s_tdata: Signal<In, Bits<512>>,
    pub s_tkeep: Signal<In, Bits<64>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub s_tlast: Signal<In, Bit>,
    /// The egress port in bits 7..0, the frame's length in bytes in bits 27..16.
    pub s_tuser: Signal<In, Bits<32>>,
    /* Output 0. */
    pub m0_tdata: Signal<Out, Bits<512>>,
    pub m0_tkeep: Signal<Out, Bits<64>>,
    pub m0_tvalid: Signal<Out, Bit>,
    pub m0_tready: Signal<In, Bit>,
    pub m0_tlast: Signal<Out, Bit>,
    /* Output 1. */
    pub m1_tdata: Signal<Out, Bits<512>>,
    pub m1_tkeep: Signal<Out, Bits<64>>,
    pub m1_tvalid: Signal<Out, Bit>,
    pub m1_tready: Signal<In, Bit>,
    pub m1_tlast: Signal<Out, Bit>,
    /* Output 2. */
    pub m2_tdata: Signal<Out, Bits<512>>,
    pub m2_tkeep: Signal<Out, Bits<64>>,
    pub m2_tvalid: Signal<Out, Bit>,
    pub m2_tready: Signal<In, Bit>,
    pub m2_tlast: Signal<Out, Bit>,
    /// The length in bytes of the frame whose beat is on the outputs.
    pub m_len: Signal<Out, Bits<12>>,
    /// Frames dropped for a port beyond the board's, wrapping.
    pub dropped: Signal<Out, Bits<32>>,
    /// A frame is in progress, to `cur` (3: dropped).
    busy: DFF<Bit>,
    cur: DFF<Bits<2>>,
    count: DFF<Bits<32>>,
    /// Where the beat on the input goes.
    dest: Signal<Local, Bits<2>>,
    fire: Signal<Local, Bit>,
    /// The port field's bits above the stream number (the rest of `tuser` is not read: the name
    /// matches Verilator's `--unused-regexp`).
    tuser_unused: Signal<Local, Bits<32>>,
    /// The streams the board has, bit `i` for output `i` (bit 3 clear: indexed by the port's
    /// two low bits, always in range).
    present: Constant<Bits<4>>,
    out0: Constant<Bits<2>>,
    out1: Constant<Bits<2>>,
    out2: Constant<Bits<2>>,
    drop: Constant<Bits<2>>,
    streams: Constant<Bits<8>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
}

impl Default for FrameDemux3 {
    /// All three outputs present.
    fn default() -> Self {
        Self::new([true; 3])
    }
}

impl FrameDemux3 {
    /// A demultiplexer whose output `i` exists when `present[i]`; frames for an absent output
    /// are dropped and counted as for a port beyond 2 (its `tvalid` stays low).
    pub fn new(present: [bool; 3]) -> Self {
        let mask = present
            .iter()
            .enumerate()
            .map(|(i, &p)| u64::from(p) << i)
            .sum::<u64>();
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            m0_tdata: Default::default(),
            m0_tkeep: Default::default(),
            m0_tvalid: Default::default(),
            m0_tready: Default::default(),
            m0_tlast: Default::default(),
            m1_tdata: Default::default(),
            m1_tkeep: Default::default(),
            m1_tvalid: Default::default(),
            m1_tready: Default::default(),
            m1_tlast: Default::default(),
            m2_tdata: Default::default(),
            m2_tkeep: Default::default(),
            m2_tvalid: Default::default(),
            m2_tready: Default::default(),
            m2_tlast: Default::default(),
            m_len: Default::default(),
            dropped: Default::default(),
            busy: Default::default(),
            cur: Default::default(),
            count: Default::default(),
            dest: Default::default(),
            fire: Default::default(),
            tuser_unused: Default::default(),
            present: Constant::new(mask.into()),
            out0: Constant::new(0.into()),
            out1: Constant::new(1.into()),
            out2: Constant::new(2.into()),
            drop: Constant::new(3.into()),
            streams: Constant::new(3.into()),
            one32: Constant::new(1.into()),
            zero32: Constant::new(0.into()),
        }
    }
}

impl Logic for FrameDemux3 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, cur, count);
        self.tuser_unused.next = self.s_tuser.val();
        // The frame in progress keeps its stream; a first beat takes its port's, or the drop.
        self.dest.next = self.cur.q.val();
        if !self.busy.q.val() {
            self.dest.next = self.drop.val();
            if (self.s_tuser.val().get_bits::<8>(0) < self.streams.val())
                & self
                    .present
                    .val()
                    .get_bit(self.s_tuser.val().get_bits::<2>(0).index())
            {
                self.dest.next = self.s_tuser.val().get_bits::<2>(0);
            }
        }
        self.m0_tdata.next = self.s_tdata.val();
        self.m0_tkeep.next = self.s_tkeep.val();
        self.m0_tlast.next = self.s_tlast.val();
        self.m1_tdata.next = self.s_tdata.val();
        self.m1_tkeep.next = self.s_tkeep.val();
        self.m1_tlast.next = self.s_tlast.val();
        self.m2_tdata.next = self.s_tdata.val();
        self.m2_tkeep.next = self.s_tkeep.val();
        self.m2_tlast.next = self.s_tlast.val();
        self.m_len.next = self.s_tuser.val().get_bits::<12>(16);
        self.m0_tvalid.next = self.s_tvalid.val() & (self.dest.val() == self.out0.val());
        self.m1_tvalid.next = self.s_tvalid.val() & (self.dest.val() == self.out1.val());
        self.m2_tvalid.next = self.s_tvalid.val() & (self.dest.val() == self.out2.val());
        self.s_tready.next = self.dest.val() == self.drop.val();
        if self.dest.val() == self.out0.val() {
            self.s_tready.next = self.m0_tready.val();
        }
        if self.dest.val() == self.out1.val() {
            self.s_tready.next = self.m1_tready.val();
        }
        if self.dest.val() == self.out2.val() {
            self.s_tready.next = self.m2_tready.val();
        }
        self.fire.next = self.s_tvalid.val() & self.s_tready.val();
        if self.fire.val() {
            self.cur.d.next = self.dest.val();
            self.busy.d.next = !self.s_tlast.val();
            if self.s_tlast.val() & (self.dest.val() == self.drop.val()) {
                self.count.d.next = self.count.q.val() + self.one32.val();
            }
        }
        // Nothing moves during a reset.
        if self.reset.val() {
            self.s_tready.next = false;
            self.m0_tvalid.next = false;
            self.m1_tvalid.next = false;
            self.m2_tvalid.next = false;
            self.busy.d.next = false;
            self.count.d.next = self.zero32.val();
        }
        self.dropped.next = self.count.q.val();
    }
}
