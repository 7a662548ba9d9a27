//! Three AXI-Stream inputs onto one output, round robin by frame: a frame, once its first beat
//! is taken, has the output until its last beat (`tlast`), so frames never interleave; then the
//! next input after it in the order 0, 1, 2 that has a beat waiting takes the output. An input
//! that always has a frame waiting thus gets every third frame when all three are busy, and the
//! whole output when it alone is.
//!
//! The choice for a frame's first beat is made in the cycle the beat is offered, from the inputs'
//! `tvalid`: no bubble between frames; once a beat is on the output, the choice holds until the
//! frame's last beat is taken, so the output is stable while it waits for `m_tready`. During
//! `reset` no beat moves. `m_src` says which input the beat on the output came
//! from, for the port mapping behind it. Back-pressure passes straight through: the chosen
//! input's `tready` is the output's, the others' are low.
//!
//! ```text
//!   s0 ──┐
//!   s1 ──┼── pick (round robin, held for a frame) ── m  (+ m_src)
//!   s2 ──┘
//! ```

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct FrameArbiter3 {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no frame in progress, input 0 first.
    pub reset: Signal<In, Bit>,
    /* Input 0. */
    pub s0_tdata: Signal<In, Bits<512>>,
    pub s0_tkeep: Signal<In, Bits<64>>,
    pub s0_tvalid: Signal<In, Bit>,
    pub s0_tready: Signal<Out, Bit>,
    pub s0_tlast: Signal<In, Bit>,
    /* Input 1. */
    pub s1_tdata: Signal<In, Bits<512>>,
    pub s1_tkeep: Signal<In, Bits<64>>,
    pub s1_tvalid: Signal<In, Bit>,
    pub s1_tready: Signal<Out, Bit>,
    pub s1_tlast: Signal<In, Bit>,
    /* Input 2. */
    pub s2_tdata: Signal<In, Bits<512>>,
    pub s2_tkeep: Signal<In, Bits<64>>,
    pub s2_tvalid: Signal<In, Bit>,
    pub s2_tready: Signal<Out, Bit>,
    pub s2_tlast: Signal<In, Bit>,
    /* Output. */
    pub m_tdata: Signal<Out, Bits<512>>,
    pub m_tkeep: Signal<Out, Bits<64>>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    pub m_tlast: Signal<Out, Bit>,
    /// The input the output's beat comes from (0, 1 or 2).
    pub m_src: Signal<Out, Bits<2>>,
    /// A frame is in progress on input `cur`: its first beat was taken, its last not yet.
    busy: DFF<Bit>,
    cur: DFF<Bits<2>>,
    /// The input that sent the last frame: the round robin starts after it.
    prev: DFF<Bits<2>>,
    /// The input that has the output this cycle.
    sel: Signal<Local, Bits<2>>,
    /// Its beat was taken.
    fire: Signal<Local, Bit>,
    in0: Constant<Bits<2>>,
    in1: Constant<Bits<2>>,
    in2: Constant<Bits<2>>,
}

impl Default for FrameArbiter3 {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s0_tdata: Default::default(),
            s0_tkeep: Default::default(),
            s0_tvalid: Default::default(),
            s0_tready: Default::default(),
            s0_tlast: Default::default(),
            s1_tdata: Default::default(),
            s1_tkeep: Default::default(),
            s1_tvalid: Default::default(),
            s1_tready: Default::default(),
            s1_tlast: Default::default(),
            s2_tdata: Default::default(),
            s2_tkeep: Default::default(),
            s2_tvalid: Default::default(),
            s2_tready: Default::default(),
            s2_tlast: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            m_tlast: Default::default(),
            m_src: Default::default(),
            busy: Default::default(),
            cur: Default::default(),
            prev: Default::default(),
            sel: Default::default(),
            fire: Default::default(),
            in0: Constant::new(0.into()),
            in1: Constant::new(1.into()),
            in2: Constant::new(2.into()),
        }
    }
}

impl Logic for FrameArbiter3 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, cur, prev);
        // The input with the output: the frame in progress, or the first input after `prev`
        // that offers a beat (`prev` itself last).
        self.sel.next = self.cur.q.val();
        if !self.busy.q.val() {
            self.sel.next = self.prev.q.val();
            if self.prev.q.val() == self.in0.val() {
                if self.s1_tvalid.val() {
                    self.sel.next = self.in1.val();
                } else if self.s2_tvalid.val() {
                    self.sel.next = self.in2.val();
                }
            } else if self.prev.q.val() == self.in1.val() {
                if self.s2_tvalid.val() {
                    self.sel.next = self.in2.val();
                } else if self.s0_tvalid.val() {
                    self.sel.next = self.in0.val();
                }
            } else if self.s0_tvalid.val() {
                self.sel.next = self.in0.val();
            } else if self.s1_tvalid.val() {
                self.sel.next = self.in1.val();
            }
        }
        self.m_tdata.next = self.s0_tdata.val();
        self.m_tkeep.next = self.s0_tkeep.val();
        self.m_tvalid.next = self.s0_tvalid.val();
        self.m_tlast.next = self.s0_tlast.val();
        if self.sel.val() == self.in1.val() {
            self.m_tdata.next = self.s1_tdata.val();
            self.m_tkeep.next = self.s1_tkeep.val();
            self.m_tvalid.next = self.s1_tvalid.val();
            self.m_tlast.next = self.s1_tlast.val();
        } else if self.sel.val() == self.in2.val() {
            self.m_tdata.next = self.s2_tdata.val();
            self.m_tkeep.next = self.s2_tkeep.val();
            self.m_tvalid.next = self.s2_tvalid.val();
            self.m_tlast.next = self.s2_tlast.val();
        }
        self.m_src.next = self.sel.val();
        self.s0_tready.next = self.m_tready.val() & (self.sel.val() == self.in0.val());
        self.s1_tready.next = self.m_tready.val() & (self.sel.val() == self.in1.val());
        self.s2_tready.next = self.m_tready.val() & (self.sel.val() == self.in2.val());
        self.fire.next = self.m_tvalid.val() & self.m_tready.val();
        // A beat offered holds the choice until the frame's last beat is taken: a first beat
        // waiting on `m_tready` keeps its input even if another input's turn comes up, so the
        // output never changes under a held `m_tvalid`.
        if self.m_tvalid.val() {
            self.cur.d.next = self.sel.val();
            self.busy.d.next = !(self.fire.val() & self.m_tlast.val());
            if self.fire.val() & self.m_tlast.val() {
                self.prev.d.next = self.sel.val();
            }
        }
        // Nothing moves during a reset.
        if self.reset.val() {
            self.m_tvalid.next = false;
            self.s0_tready.next = false;
            self.s1_tready.next = false;
            self.s2_tready.next = false;
            self.busy.d.next = false;
            self.cur.d.next = self.in0.val();
            self.prev.d.next = self.in2.val();
        }
    }
}
