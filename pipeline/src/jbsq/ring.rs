//! `ring[ring_base + ring_at]`: the tokens, each a free place at a worker, every pool's eight
//! rings side by side (`docs/algorithm.md`, decision 23). `queueCtl` keeps each ring's head and
//! count and picks the entry (`ring_at`, level `j`'s `j · ring_slots` plus the offset in that
//! ring); this stage takes the token there (`pop`: a task's place, its node and generation go on
//! to `outstanding`) or puts one (`push`: a reply's returned place, a control pass's new place;
//! the node `src` of generation `generation`). One touch a pass; a token pushed by one pass and
//! popped by the next is forwarded.
//!
//! The table is indexed by a sum, the pool's ring base and the entry `queueCtl` chose, and checks
//! its forwarding on the two terms ([`RmwTable::sum_index`]). A popped entry is not cleared: the
//! ring's head and count say which entries hold tokens.

use super::JbsqPort;
use super::entries::TokenEntry;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// `ring` for `2^R` tokens.
#[derive(LogicBlock)]
pub struct RingStage<const R: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its entry (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) ring_table: RmwTable<TokenEntry, R>,
    out: DFF<JbsqPhv>,
    w: Signal<Local, TokenEntry>,
    active: Signal<Local, Bit>,
    /// The entry the pass in the stage read (where a push writes).
    at: DFF<Bits<R>>,
    zero: Constant<Bits<R>>,
}

impl<const R: usize> Default for RingStage<R> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            ring_table: RmwTable::sum_index(),
            out: Default::default(),
            w: Default::default(),
            active: Default::default(),
            at: Default::default(),
            zero: Constant::new(0.into()),
        }
    }
}

impl<const R: usize> Logic for RingStage<R> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, ring_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's entry: base + offset < 2^R by configuration, taken in R bits.
        self.ring_table.rd_addr.next = self.port.up.early.val().ring_base.get_bits::<R>(0);
        self.ring_table.rd_off.next = self.port.up.early.val().ring_at.get_bits::<R>(0);
        self.ring_table.rd_indexed.next = false;
        self.ring_table.rd_index.next = self.zero.val();
        self.ring_table.rd_same.next = false;
        self.at.d.next = self.port.up.early.val().ring_base.get_bits::<R>(0)
            + self.port.up.early.val().ring_at.get_bits::<R>(0);
        self.ring_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.w.next.node = self.port.up.pass.val().src;
        self.w.next.generation = self.port.up.pass.val().generation;
        self.ring_table.wr_en.next = self.active.val() & self.port.up.pass.val().push;
        self.ring_table.wr_data.next = self.w.val();
        self.out.d.next = self.port.up.pass.val();
        if self.active.val() & self.port.up.pass.val().pop {
            self.out.d.next.tok_node = self.ring_table.rd_data.val().node;
            self.out.d.next.tok_gen = self.ring_table.rd_data.val().generation;
        }
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
