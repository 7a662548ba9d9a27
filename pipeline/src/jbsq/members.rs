//! `members[base + i]`: each pool's nodes, densely in its region of node slots, for the
//! fallback's random sample (`docs/algorithm.md`, decision 29).
//!
//! - A task that goes over a bound (`fallback`, decided by `queueCtl`) takes the node at member
//!   slot `r1`, the sample `poolCfg` drew (`fb_node`).
//! - Control, an added node: written at slot `n` (`slot`, from `poolCfg`).
//! - Control, a removal: the pool's last member (`last`) moves into the removed node's slot
//!   (`slot`), as the model's swap with the last; `poolCfg` took `n` one down.
//! - Control, the host's read before a removal: the node at slot `n - 1` (`slot`, from `poolCfg`),
//!   the pool's last member, goes on in `last`.
//!
//! One touch a pass; back-to-back passes on one slot are forwarded. The table is indexed by a
//! sum, the pool's base and the slot, and checks its forwarding on the two terms
//! ([`RmwTable::sum_index`]); the slot is the task's sample or the control pass's slot, both
//! registers.

use super::JbsqPort;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// `members` for `2^N` node slots.
#[derive(LogicBlock)]
pub struct MembersStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its slot (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) member_table: RmwTable<Bits<16>, N>,
    out: DFF<JbsqPhv>,
    /// The entering pass's slot in its pool's region.
    off: Signal<Local, Bits<N>>,
    /// The slot the pass in the stage read (where it writes).
    at: DFF<Bits<N>>,
    active: Signal<Local, Bit>,
    zero: Constant<Bits<N>>,
}

impl<const N: usize> Default for MembersStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            member_table: RmwTable::sum_index(),
            out: Default::default(),
            off: Default::default(),
            at: Default::default(),
            active: Default::default(),
            zero: Constant::new(0.into()),
        }
    }
}

impl<const N: usize> Logic for MembersStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, member_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's slot: base + offset < 2^N by configuration, taken in N bits.
        self.off.next = self.port.up.early.val().slot.get_bits::<N>(0);
        if self.port.up.early.val().is_task {
            self.off.next = self.port.up.early.val().r1.get_bits::<N>(0);
        }
        self.member_table.rd_addr.next = self.port.up.early.val().base.get_bits::<N>(0);
        self.member_table.rd_off.next = self.off.val();
        self.member_table.rd_indexed.next = false;
        self.member_table.rd_index.next = self.zero.val();
        self.member_table.rd_same.next = false;
        self.at.d.next = self.port.up.early.val().base.get_bits::<N>(0) + self.off.val();
        self.member_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.out.d.next = self.port.up.pass.val();
        if self.active.val() & self.port.up.pass.val().is_task & self.port.up.pass.val().fallback {
            self.out.d.next.fb_node = self.member_table.rd_data.val();
        }
        if self.active.val() & self.port.up.pass.val().is_ctl_read {
            self.out.d.next.last = self.member_table.rd_data.val();
        }
        self.member_table.wr_data.next = self.port.up.pass.val().src;
        if self.port.up.pass.val().is_ctl_remove {
            self.member_table.wr_data.next = self.port.up.pass.val().last;
        }
        self.member_table.wr_en.next = self.port.up.pass.val().live
            & (self.port.up.pass.val().is_ctl_add | self.port.up.pass.val().is_ctl_remove);
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
