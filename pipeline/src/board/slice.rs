//! An AXI-Stream register slice: one beat per clock through two registers, every output and
//! `s_tready` from a flip-flop, so no combinational path crosses it in either direction. The
//! board adapters sit on each side of the switch behind one: the arbiter's choice and the
//! demultiplexer's port decision then meet the switch's ingress and egress logic only through
//! registers, and each side keeps the logic depth it has alone.
//!
//! The main register holds the beat on the output; the skid register takes the beat that arrives
//! in the cycle the output stalls (`s_tready` was high), and `s_tready` falls while it is full.
//! Beats leave in order; a beat is never dropped or repeated.
//!
//! Every output is written from a register alone, in statements that read no input: Verilator
//! orders an always block by the variables its statements share, and an output written beside a
//! read of `m_tready` would close a combinational loop in its eyes with a neighbour that makes
//! its ready beside reading the data (as the switch's ingress does).

use rust_hdl::prelude::*;

/// One beat.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct StreamBeat {
    pub data: Bits<512>,
    pub keep: Bits<64>,
    pub last: Bit,
    pub user: Bits<32>,
}

#[derive(LogicBlock, Default)]
pub struct RegSlice {
    pub clock: Signal<In, Clock>,
    pub s_beat: Signal<In, StreamBeat>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_beat: Signal<Out, StreamBeat>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    main: DFF<StreamBeat>,
    main_valid: DFF<Bit>,
    skid: DFF<StreamBeat>,
    skid_valid: DFF<Bit>,
    take: Signal<Local, Bit>,
    give: Signal<Local, Bit>,
}

impl Logic for RegSlice {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, main, main_valid, skid, skid_valid);
        // Outputs: registers only.
        self.m_beat.next = self.main.q.val();
        self.m_tvalid.next = self.main_valid.q.val();
        self.s_tready.next = !self.skid_valid.q.val();
        // A beat in (the skid is empty) and a beat out.
        self.take.next = self.s_tvalid.val() & !self.skid_valid.q.val();
        self.give.next = self.main_valid.q.val() & self.m_tready.val();
        if self.give.val() | !self.main_valid.q.val() {
            // The main register is free this cycle: the skid's beat first, else the new one.
            if self.skid_valid.q.val() {
                self.main.d.next = self.skid.q.val();
                self.main_valid.d.next = true;
                self.skid_valid.d.next = false;
            } else {
                self.main.d.next = self.s_beat.val();
                self.main_valid.d.next = self.take.val();
            }
        } else if self.take.val() {
            self.skid.d.next = self.s_beat.val();
            self.skid_valid.d.next = true;
        }
    }
}
