//! The switch as every board plug-in holds it: the switch's datapath and registers, a register
//! slice on each side of it, the microsecond clock and the bridge from the shell's register
//! window, between one merged input stream and one output stream, on the core clock. A board's
//! plug-in puts its shell's streams and reset around it (`opennic.rs`, `netfpga.rs`).
//!
//! ```text
//!  s_axil (32-bit, axil_clock) ── AxilCdc ──> registers ── cfg, control passes ──┐
//!                                                                                v
//!  s_* ── RegSlice ─────────────────────────────────────────────────────> switch ── RegSlice ── m_* (port and length in m_tuser)
//!                                               UsClock -> now_us
//! ```
//!
//! Two switches fit: the paper's ([`BoardSwitch`]: `HorusSwitch` behind `AxiLiteRegs`) and the
//! leaf that holds tasks ([`JbsqBoardSwitch`]: `JbsqSwitch` behind `JbsqAxiLiteRegs`). Their
//! ports toward a board are the same, so one definition (`board_switch!`) makes both. Each is a
//! type of its own rather than one type generic over the switch: rust-hdl's `update` reaches a
//! child's ports by field, which Rust allows on concrete types only.
//!
//! The register slices (a cycle each) keep the adapters' logic out of the switch's paths. The
//! switch's trace port is left out: it is for test benches (which read it from inside, as
//! `trace_unused`).

use crate::axil::{AXIL_ADDR_BITS, AxiLiteRegs};
use crate::axil_bus::{AxilMgr, AxilSub};
use crate::board::axil_cdc::AxilCdc;
use crate::board::slice::RegSlice;
use crate::board::us_clock::UsClock;
use crate::jbsq::axil::{JbsqAxiLiteRegs, JbsqMapSizes};
use crate::jbsq::phv::JbsqPhv;
use crate::jbsq::switch::JbsqSwitch;
use crate::phv::Phv;
use crate::switch::HorusSwitch;
use horus_model::config::Role;
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// Defines a board's switch `$name<$g...>` around the datapath `$switch` and its register port
/// `$regs` (whose passes are `$phv`); `$from_switch` are the register port's inputs, beyond the
/// paper's common ones, that the datapath drives under the same name.
macro_rules! board_switch {
    (
        $(#[$attr:meta])*
        $name:ident [$($g:ident),*],
        regs: $regs:ty,
        switch: $switch:ty,
        phv: $phv:ty,
        from_switch: [$($from_switch:ident),*]
    ) => {
        $(#[$attr])*
        #[derive(LogicBlock)]
        pub struct $name<$(const $g: usize),*> {
            /// The core clock, and a reset of the register port's transaction state on it (the
            /// registers and tables keep their values).
            pub clock: Signal<In, Clock>,
            pub reset: Signal<In, Bit>,
            /// The register window's clock, and the same reset on it.
            pub axil_clock: Signal<In, Clock>,
            pub axil_reset: Signal<In, Bit>,
            /// The shell's register window: 32-bit addresses from its base, at `axil_clock`.
            pub s_axil: AxilSub<32>,
            /* The merged input. */
            pub s_tdata: Signal<In, Bits<512>>,
            pub s_tkeep: Signal<In, Bits<64>>,
            pub s_tvalid: Signal<In, Bit>,
            pub s_tready: Signal<Out, Bit>,
            pub s_tlast: Signal<In, Bit>,
            /* The output: the egress port in `m_tuser[7:0]`, the frame's length in `[27:16]`. */
            pub m_tdata: Signal<Out, Bits<512>>,
            pub m_tkeep: Signal<Out, Bits<64>>,
            pub m_tvalid: Signal<Out, Bit>,
            pub m_tready: Signal<In, Bit>,
            pub m_tlast: Signal<Out, Bit>,
            pub m_tuser: Signal<Out, Bits<32>>,
            /// The adapter's dropped frames, for `BOARD_DROPS`.
            pub board_drops: Signal<In, Bits<32>>,

            cdc: AxilCdc,
            regs: $regs,
            switch: $switch,
            into_switch: RegSlice,
            out_of_switch: RegSlice,
            clock_us: UsClock,
            zero32: Constant<Bits<32>>,
            /// The switch's outputs a board does not use (names match Verilator's
            /// `--unused-regexp`).
            trace_valid_unused: Signal<Local, Bit>,
            trace_unused: Signal<Local, $phv>,
            rng_unused: Signal<Local, Bits<64>>,
            user_unused: Signal<Local, Bits<32>>,
        }

        impl<$(const $g: usize),*> $name<$($g),*> {
            /// The switch `switch` behind its register port `regs`, on a core clock of
            /// `clock_mhz`.
            fn around(regs: $regs, switch: $switch, clock_mhz: u64) -> Self {
                Self {
                    clock: Default::default(),
                    reset: Default::default(),
                    axil_clock: Default::default(),
                    axil_reset: Default::default(),
                    s_axil: Default::default(),
                    s_tdata: Default::default(),
                    s_tkeep: Default::default(),
                    s_tvalid: Default::default(),
                    s_tready: Default::default(),
                    s_tlast: Default::default(),
                    m_tdata: Default::default(),
                    m_tkeep: Default::default(),
                    m_tvalid: Default::default(),
                    m_tready: Default::default(),
                    m_tlast: Default::default(),
                    m_tuser: Default::default(),
                    board_drops: Default::default(),
                    cdc: Default::default(),
                    regs,
                    switch,
                    into_switch: Default::default(),
                    out_of_switch: Default::default(),
                    clock_us: UsClock::new(clock_mhz),
                    zero32: Constant::new(0.into()),
                    trace_valid_unused: Default::default(),
                    trace_unused: Default::default(),
                    rng_unused: Default::default(),
                    user_unused: Default::default(),
                }
            }
        }

        impl<$(const $g: usize),*> Logic for $name<$($g),*> {
            #[hdl_gen]
            fn update(&mut self) {
                self.regs.clk.next = self.clock.val();
                self.switch.clock.next = self.clock.val();
                self.into_switch.clock.next = self.clock.val();
                self.out_of_switch.clock.next = self.clock.val();
                self.clock_us.clock.next = self.clock.val();
                self.regs.rst.next = self.reset.val();
                // Time runs on through a reset.
                self.clock_us.reset.next = false;
                // ---- The register window, across the bridge.
                self.cdc.s_clock.next = self.axil_clock.val();
                self.cdc.m_clock.next = self.clock.val();
                self.cdc.s_reset.next = self.axil_reset.val();
                self.cdc.m_reset.next = self.reset.val();
                AxilSub::<32>::link(&mut self.s_axil, &mut self.cdc.s_axil);
                AxilMgr::<AXIL_ADDR_BITS>::join(&mut self.cdc.m_axil, &mut self.regs.s_axil);
                // ---- Configuration and control passes (as in the top levels).
                self.switch.cfg.next = self.regs.cfg.val();
                self.switch.spines.next = self.regs.spines.val();
                self.switch.ctl_valid.next = self.regs.ctl_valid.val();
                self.switch.ctl.next = self.regs.ctl.val();
                self.regs.ctl_ready.next = self.switch.ctl_ready.val();
                self.regs.overflow.next = self.switch.overflow.val();
                self.regs.in_flight.next = self.switch.in_flight.val();
                self.regs.done_valid.next = self.switch.done_valid.val();
                self.regs.done.next = self.switch.done.val();
                $(self.regs.$from_switch.next = self.switch.$from_switch.val();)*
                self.regs.board_drops.next = self.board_drops.val();
                self.switch.now_us.next = self.clock_us.now_us.val();
                self.trace_valid_unused.next = self.switch.trace_valid.val();
                self.trace_unused.next = self.switch.trace.val();
                self.rng_unused.next = self.switch.rng_state.val();
                // ---- In, through a register slice.
                self.into_switch.s_beat.next.data = self.s_tdata.val();
                self.into_switch.s_beat.next.keep = self.s_tkeep.val();
                self.into_switch.s_beat.next.last = self.s_tlast.val();
                self.into_switch.s_beat.next.user = self.zero32.val();
                self.into_switch.s_tvalid.next = self.s_tvalid.val();
                self.s_tready.next = self.into_switch.s_tready.val();
                self.switch.s_axis_tdata.next = self.into_switch.m_beat.val().data;
                self.switch.s_axis_tkeep.next = self.into_switch.m_beat.val().keep;
                self.switch.s_axis_tlast.next = self.into_switch.m_beat.val().last;
                self.user_unused.next = self.into_switch.m_beat.val().user;
                self.switch.s_axis_tvalid.next = self.into_switch.m_tvalid.val();
                self.into_switch.m_tready.next = self.switch.s_axis_tready.val();
                // ---- Out, through a register slice.
                self.out_of_switch.s_beat.next.data = self.switch.m_axis_tdata.val();
                self.out_of_switch.s_beat.next.keep = self.switch.m_axis_tkeep.val();
                self.out_of_switch.s_beat.next.last = self.switch.m_axis_tlast.val();
                self.out_of_switch.s_beat.next.user = self.switch.m_axis_tuser.val();
                self.out_of_switch.s_tvalid.next = self.switch.m_axis_tvalid.val();
                self.switch.m_axis_tready.next = self.out_of_switch.s_tready.val();
                self.m_tdata.next = self.out_of_switch.m_beat.val().data;
                self.m_tkeep.next = self.out_of_switch.m_beat.val().keep;
                self.m_tlast.next = self.out_of_switch.m_beat.val().last;
                self.m_tuser.next = self.out_of_switch.m_beat.val().user;
                self.m_tvalid.next = self.out_of_switch.m_tvalid.val();
                self.out_of_switch.m_tready.next = self.m_tready.val();
            }
        }
    };
}

board_switch!(
    /// The paper's switch (leaf or spine) on a board.
    BoardSwitch [P, N, C],
    regs: AxiLiteRegs,
    switch: HorusSwitch<P, N, C>,
    phv: Phv,
    from_switch: [readback, readback_valid]
);

board_switch!(
    /// The leaf that holds tasks on a board.
    JbsqBoardSwitch [P, N, R, B, C, SB],
    regs: JbsqAxiLiteRegs,
    switch: JbsqSwitch<P, N, R, B, C, SB>,
    phv: JbsqPhv,
    from_switch: [counts]
);

impl<const P: usize, const N: usize, const C: usize> BoardSwitch<P, N, C> {
    /// The switch of `role` (its generator from `seed`, connection entries expiring after
    /// `conn_timeout_us`) on a core clock of `clock_mhz`.
    pub fn new(role: Role, seed: u64, conn_timeout_us: u32, clock_mhz: u64) -> Self {
        Self::around(
            AxiLiteRegs::new(role, P, N, C, conn_timeout_us),
            HorusSwitch::new(role, seed, conn_timeout_us),
            clock_mhz,
        )
    }
}

impl<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
    const SB: usize,
> JbsqBoardSwitch<P, N, R, B, C, SB>
{
    /// The JBSQ leaf at `sizes` (the const parameters' sizes, as [`crate::jbsq::top::JbsqTop`])
    /// whose generator starts at `seed` and whose connection entries expire after
    /// `conn_timeout_us`, on a core clock of `clock_mhz`.
    pub fn new(sizes: JbsqSizes, seed: u64, conn_timeout_us: u32, clock_mhz: u64) -> Self {
        Self::around(
            JbsqAxiLiteRegs::new(
                JbsqMapSizes::of::<P, N, R, B, C, SB>(sizes),
                conn_timeout_us,
            ),
            JbsqSwitch::new(sizes, seed, conn_timeout_us),
            clock_mhz,
        )
    }
}
