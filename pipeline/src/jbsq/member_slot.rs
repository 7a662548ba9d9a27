//! `memberSlot[node]`: where each node sits in its pool's `members` (control passes only; the
//! swap with the last member of a removal, as the model's).
//!
//! - Control, an added node `src`: its slot, `n` before it (`slot`, from `poolCfg`).
//! - Control, a removal: the pool's last member (`last`) now sits in the removed node's slot
//!   (`slot`), so the entry written is the last member's.
//! - Control, the host's read before a removal of `src`: its slot goes on in `slot`, which the
//!   removal's pass then carries (with `last`, read in `members`). The removal cannot read it
//!   itself: `members`, a stage earlier, writes that slot in the same pass.
//!
//! One touch a pass; back-to-back passes on one node are forwarded ([`RmwTable`]). The index is
//! the pass's `src` or, for a removal, its `last`: both registers.

use super::JbsqPort;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// `memberSlot` for `2^N` nodes.
#[derive(LogicBlock)]
pub struct MemberSlotStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its node (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) slot_table: RmwTable<Bits<16>, N>,
    out: DFF<JbsqPhv>,
    index: Signal<Local, Bits<N>>,
    /// The node the pass in the stage read (where it writes).
    at: DFF<Bits<N>>,
    zero: Constant<Bits<N>>,
}

impl<const N: usize> Default for MemberSlotStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            slot_table: Default::default(),
            out: Default::default(),
            index: Default::default(),
            at: Default::default(),
            zero: Constant::new(0.into()),
        }
    }
}

impl<const N: usize> Logic for MemberSlotStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, slot_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's node: its own, or a removal's last member.
        self.index.next = self.port.up.early.val().src.get_bits::<N>(0);
        if self.port.up.early.val().is_ctl_remove {
            self.index.next = self.port.up.early.val().last.get_bits::<N>(0);
        }
        self.slot_table.rd_addr.next = self.index.val();
        self.slot_table.rd_off.next = self.zero.val();
        self.slot_table.rd_indexed.next = false;
        self.slot_table.rd_index.next = self.zero.val();
        self.slot_table.rd_same.next = false;
        self.at.d.next = self.index.val();
        self.slot_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.out.d.next = self.port.up.pass.val();
        if self.port.up.pass.val().live & self.port.up.pass.val().is_ctl_read {
            self.out.d.next.slot = self.slot_table.rd_data.val();
        }
        self.slot_table.wr_data.next = self.port.up.pass.val().slot;
        self.slot_table.wr_en.next = self.port.up.pass.val().live
            & (self.port.up.pass.val().is_ctl_add | self.port.up.pass.val().is_ctl_remove);
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
