//! Stage 1: `node[src]`.
//!
//! Messages from a node (worker replies at a leaf; idleAdd, idleRemove and loadUpdate at a spine)
//! name it in `src`; this stage checks that it is an active node of the pass's pool and hands on
//! its additive factor. An ID beyond the table is dropped as `node_out_of_range`, an unknown or
//! foreign node as `node_not_in_pool`; a reply is still forwarded to its client (only its update
//! is dropped). Control passes write the entry: a node added, freed, or moved to another member
//! slot by a removal.

use crate::entries::NodeEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct NodeStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<N>>,
    pub(super) node_table: StageTable<NodeEntry, N>,
    out: DFF<Phv>,
    e: Signal<Local, NodeEntry>,
    w: Signal<Local, NodeEntry>,
    checks: Signal<Local, Bit>,
    /// `src` is beyond the table: compared a clock ahead on `early` and registered, so that the
    /// drop decision waits for no compare.
    out_of_range: DFF<Bit>,
    not_in_pool: Signal<Local, Bit>,
    /// `2^N`: the first node ID beyond the table.
    limit: Constant<Bits<16>>,
    /// A free entry (cleared whole, as the model's).
    free: Constant<NodeEntry>,
    code_out_of_range: Constant<Bits<4>>,
    code_not_in_pool: Constant<Bits<4>>,
}

impl<const N: usize> Default for NodeStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            node_table: StageTable::new(Stage::Node),
            out: Default::default(),
            e: Default::default(),
            w: Default::default(),
            checks: Default::default(),
            out_of_range: Default::default(),
            not_in_pool: Default::default(),
            limit: Constant::new((1u64 << N).into()),
            free: Constant::new(NodeEntry::default()),
            code_out_of_range: Constant::new(drop_code(DropReason::NodeOutOfRange).into()),
            code_not_in_pool: Constant::new(drop_code(DropReason::NodeNotInPool).into()),
        }
    }
}

impl<const N: usize> Logic for NodeStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, out_of_range);
        clock!(self, clock, node_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`).
        self.node_table.rd_off.next = self.no_off.val();
        self.node_table.rd_same.next = false;
        self.node_table.rd_addr.next = self.port.up.early.val().src.get_bits::<N>(0);
        self.node_table.read.next = self.port.up.early.val().is_ctl_read;
        self.node_table.read_table.next = self.port.up.early.val().rd_table;
        self.node_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.e.next = self.node_table.rd_data.val();
        self.w.next = self.node_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        self.node_table.wr_en.next = false;
        self.checks.next = (self.port.up.pass.val().is_reply
            | self.port.up.pass.val().is_reply_idle
            | self.port.up.pass.val().is_load_update
            | self.port.up.pass.val().is_idle_add
            | self.port.up.pass.val().is_idle_remove)
            & !self.port.up.pass.val().drop.any();
        self.out_of_range.d.next = self.port.up.early.val().src >= self.limit.val();
        self.not_in_pool.next =
            !self.e.val().active | (self.e.val().pool != self.port.up.pass.val().pool);
        if self.checks.val() {
            self.out.d.next.factor = self.e.val().factor;
            if self.out_of_range.q.val() | self.not_in_pool.val() {
                if self.out_of_range.q.val() {
                    self.out.d.next.drop = self.code_out_of_range.val();
                } else {
                    self.out.d.next.drop = self.code_not_in_pool.val();
                }
                // The pass does nothing more; a reply still goes on to its client.
                self.out.d.next.is_pass_through =
                    self.port.up.pass.val().is_reply | self.port.up.pass.val().is_reply_idle;
                self.out.d.next.is_reply = false;
                self.out.d.next.is_reply_idle = false;
                self.out.d.next.is_load_update = false;
                self.out.d.next.is_idle_add = false;
                self.out.d.next.is_idle_remove = false;
            }
        }
        // Control passes.
        if self.port.up.pass.val().is_ctl_add {
            self.w.next.active = true;
            self.w.next.pool = self.port.up.pass.val().pool;
            self.w.next.slot = self.port.up.pass.val().slot;
            self.w.next.factor = self.port.up.pass.val().factor;
            self.node_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove {
            // Hand the freed slot to the second pass, which records the moved member there.
            self.out.d.next.slot = self.e.val().slot;
            self.w.next = self.free.val();
            self.node_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove2 & self.port.up.pass.val().fin_move_member {
            self.w.next.slot = self.port.up.pass.val().slot;
            self.node_table.wr_en.next = true;
        }
        self.node_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.node_table.rb.val();
        self.port.rb_hit.next = self.node_table.rb_hit.val();
    }
}
