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
    /// The input that has the output this cycle (for the state and the readies), and the same
    /// for the output's multiplexer.
    pick: Choice3,
    pick_out: Choice3,
    sel: Signal<Local, Bits<2>>,
    sel_out: Signal<Local, Bits<2>>,
    /// It offers a beat (outside a reset), that beat is its frame's last, and it was taken.
    offered: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
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
            pick: Default::default(),
            pick_out: Default::default(),
            sel: Default::default(),
            sel_out: Default::default(),
            offered: Default::default(),
            last: Default::default(),
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
        // The input with the output, twice: `pick` for the state and the readies, `pick_out`
        // for the output's multiplexer.
        self.pick.busy.next = self.busy.q.val();
        self.pick.cur.next = self.cur.q.val();
        self.pick.prev.next = self.prev.q.val();
        self.pick.v0.next = self.s0_tvalid.val();
        self.pick.v1.next = self.s1_tvalid.val();
        self.pick.v2.next = self.s2_tvalid.val();
        self.pick_out.busy.next = self.busy.q.val();
        self.pick_out.cur.next = self.cur.q.val();
        self.pick_out.prev.next = self.prev.q.val();
        self.pick_out.v0.next = self.s0_tvalid.val();
        self.pick_out.v1.next = self.s1_tvalid.val();
        self.pick_out.v2.next = self.s2_tvalid.val();
        self.sel.next = self.pick.sel.val();
        self.sel_out.next = self.pick_out.sel.val();
        // The output: the chosen input's beat, from `sel_out`, a copy of the choice that no
        // statement reading `m_tready` shares. Verilator splits an always block into groups of
        // statements that share variables and orders the groups; were the output's group to
        // read `m_tready`, a consumer whose ready is made in a block that also reads the data
        // (the switch's ingress) would close a combinational loop in Verilator's eyes
        // (UNOPTFLAT), though none exists in the logic.
        self.m_tdata.next = self.s0_tdata.val();
        self.m_tkeep.next = self.s0_tkeep.val();
        self.m_tvalid.next = self.s0_tvalid.val() & !self.reset.val();
        self.m_tlast.next = self.s0_tlast.val();
        if self.sel_out.val() == self.in1.val() {
            self.m_tdata.next = self.s1_tdata.val();
            self.m_tkeep.next = self.s1_tkeep.val();
            self.m_tvalid.next = self.s1_tvalid.val() & !self.reset.val();
            self.m_tlast.next = self.s1_tlast.val();
        } else if self.sel_out.val() == self.in2.val() {
            self.m_tdata.next = self.s2_tdata.val();
            self.m_tkeep.next = self.s2_tkeep.val();
            self.m_tvalid.next = self.s2_tvalid.val() & !self.reset.val();
            self.m_tlast.next = self.s2_tlast.val();
        }
        self.m_src.next = self.sel_out.val();
        // The same valid and last for the state, from the inputs (not read back from `m_*`).
        self.offered.next = self.s0_tvalid.val();
        self.last.next = self.s0_tlast.val();
        if self.sel.val() == self.in1.val() {
            self.offered.next = self.s1_tvalid.val();
            self.last.next = self.s1_tlast.val();
        } else if self.sel.val() == self.in2.val() {
            self.offered.next = self.s2_tvalid.val();
            self.last.next = self.s2_tlast.val();
        }
        self.s0_tready.next =
            self.m_tready.val() & (self.sel.val() == self.in0.val()) & !self.reset.val();
        self.s1_tready.next =
            self.m_tready.val() & (self.sel.val() == self.in1.val()) & !self.reset.val();
        self.s2_tready.next =
            self.m_tready.val() & (self.sel.val() == self.in2.val()) & !self.reset.val();
        self.fire.next = self.offered.val() & self.m_tready.val();
        // A beat offered holds the choice until the frame's last beat is taken: a first beat
        // waiting on `m_tready` keeps its input even if another input's turn comes up, so the
        // output never changes under a held `m_tvalid`.
        if self.offered.val() {
            self.cur.d.next = self.sel.val();
            self.busy.d.next = !(self.fire.val() & self.last.val());
            if self.fire.val() & self.last.val() {
                self.prev.d.next = self.sel.val();
            }
        }
        // Nothing moves during a reset.
        if self.reset.val() {
            self.busy.d.next = false;
            self.cur.d.next = self.in0.val();
            self.prev.d.next = self.in2.val();
        }
    }
}

/// The round robin's choice: the frame in progress (`cur`, while `busy`), or else the first
/// input after `prev` that offers a beat (`prev` itself last, and when none does).
#[derive(LogicBlock)]
pub struct Choice3 {
    pub busy: Signal<In, Bit>,
    pub cur: Signal<In, Bits<2>>,
    pub prev: Signal<In, Bits<2>>,
    pub v0: Signal<In, Bit>,
    pub v1: Signal<In, Bit>,
    pub v2: Signal<In, Bit>,
    pub sel: Signal<Out, Bits<2>>,
    in0: Constant<Bits<2>>,
    in1: Constant<Bits<2>>,
    in2: Constant<Bits<2>>,
}

impl Default for Choice3 {
    fn default() -> Self {
        Self {
            busy: Default::default(),
            cur: Default::default(),
            prev: Default::default(),
            v0: Default::default(),
            v1: Default::default(),
            v2: Default::default(),
            sel: Default::default(),
            in0: Constant::new(0.into()),
            in1: Constant::new(1.into()),
            in2: Constant::new(2.into()),
        }
    }
}

impl Logic for Choice3 {
    #[hdl_gen]
    fn update(&mut self) {
        self.sel.next = self.cur.val();
        if !self.busy.val() {
            self.sel.next = self.prev.val();
            if self.prev.val() == self.in0.val() {
                if self.v1.val() {
                    self.sel.next = self.in1.val();
                } else if self.v2.val() {
                    self.sel.next = self.in2.val();
                }
            } else if self.prev.val() == self.in1.val() {
                if self.v2.val() {
                    self.sel.next = self.in2.val();
                } else if self.v0.val() {
                    self.sel.next = self.in0.val();
                }
            } else if self.v0.val() {
                self.sel.next = self.in0.val();
            } else if self.v1.val() {
                self.sel.next = self.in1.val();
            }
        }
    }
}
