//! Stage 13: `nodeAddr[node]`: where a task for a node goes.
//!
//! A pass that forwards a task (a task first pass, a random task, a task's second pass, or a
//! continuation that found its entry) reads its chosen node's address: MAC, IPv4, UDP port,
//! egress port and the `dst_id` the rewritten header carries (`fwd`, for the deparser). The entry
//! must belong to the pass's pool: a continuation may follow its connection-table entry to a node
//! removed since, or whose ID now belongs to another pool; it is lost with the node
//! (`continuation_miss`, as the model's `forward_to`). Control passes write the entry of `src`: a
//! node added (with its pool), or removed.

use crate::entries::AddrEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct NodeAddrStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<N>>,
    pub(super) addr_table: StageTable<AddrEntry, N>,
    out: DFF<Phv>,
    who: Signal<Local, Bits<N>>,
    /// A control pass: `who` is `src`.
    by_src: Signal<Local, Bit>,
    /// `who` unless the pass is a continuation that found its entry: `src` for a control pass,
    /// the read's index for a read (the table takes it from here: `picked_read`), else the
    /// chosen node; and whether the pass is one whose index is fixed so (never a continuation).
    base_who: Signal<Local, Bits<N>>,
    fixed: Signal<Local, Bit>,
    /// The pass follows its continuation's node (`conn`'s late decision), and the check for
    /// the other indexes.
    late: Signal<Local, Bit>,
    base_same: Signal<Local, Bit>,
    /// The index of the pass in the stage (`who` a cycle ago), and whether `who` equals it.
    at: DFF<Bits<N>>,
    same: Signal<Local, Bit>,
    e: Signal<Local, AddrEntry>,
    w: Signal<Local, AddrEntry>,
    forwards: Signal<Local, Bit>,
    code_miss: Constant<Bits<4>>,
    /// A free entry (cleared whole, as the model's `None`).
    free: Constant<AddrEntry>,
}

impl<const N: usize> Default for NodeAddrStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            addr_table: StageTable::new(Stage::NodeAddr).given_check_picked_read(),
            out: Default::default(),
            who: Default::default(),
            by_src: Default::default(),
            base_who: Default::default(),
            fixed: Default::default(),
            late: Default::default(),
            base_same: Default::default(),
            at: Default::default(),
            same: Default::default(),
            e: Default::default(),
            w: Default::default(),
            forwards: Default::default(),
            code_miss: Constant::new(drop_code(DropReason::ContinuationMiss).into()),
            free: Constant::new(AddrEntry::default()),
        }
    }
}

impl<const N: usize> Logic for NodeAddrStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, addr_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`): a forward reads its chosen node (a continuation's
        // from `conn`), a control pass writes the node it names.
        self.by_src.next =
            self.port.up.early.val().is_ctl_add | self.port.up.early.val().is_ctl_remove;
        // `conn`'s decision (`cont_hit`) comes late in the cycle: it picks between the
        // continuation's node and an index formed beside it, in the LUT that drives the address.
        self.base_who.next = self.port.up.early.val().chosen.get_bits::<N>(0);
        if self.port.up.early.val().is_ctl_read {
            self.base_who.next = self.port.up.early.val().rd_index.get_bits::<N>(0);
        }
        if self.by_src.val() {
            self.base_who.next = self.port.up.early.val().src.get_bits::<N>(0);
        }
        self.fixed.next = self.by_src.val() | self.port.up.early.val().is_ctl_read;
        self.late.next = self.port.up.early.val().cont_hit & !self.fixed.val();
        self.who.next = self.base_who.val();
        if self.late.val() {
            self.who.next = self.port.up.early.val().cont_node.get_bits::<N>(0);
        }
        // Whether that index is the one of the pass in the stage, compared candidate by candidate
        // and picked in and-or form (a mux of compares, synthesis would share into one compare
        // after the mux): `conn`'s decision (`cont_hit`) comes late in the cycle and only picks.
        // A read's check is the stage's too (`picked_read`), beside the other fixed indexes'.
        self.base_same.next = (self.by_src.val()
            & (self.at.q.val() == self.port.up.early.val().src.get_bits::<N>(0)))
            | (!self.by_src.val()
                & self.port.up.early.val().is_ctl_read
                & (self.at.q.val() == self.port.up.early.val().rd_index.get_bits::<N>(0)))
            | (!self.by_src.val()
                & !self.port.up.early.val().is_ctl_read
                & (self.at.q.val() == self.port.up.early.val().chosen.get_bits::<N>(0)));
        self.same.next = (self.late.val()
            & (self.at.q.val() == self.port.up.early.val().cont_node.get_bits::<N>(0)))
            | (!self.late.val() & self.base_same.val());
        self.at.d.next = self.who.val();
        self.addr_table.rd_off.next = self.no_off.val();
        self.addr_table.rd_same.next = self.same.val();
        self.addr_table.rd_addr.next = self.who.val();
        self.addr_table.read.next = self.port.up.early.val().is_ctl_read;
        self.addr_table.read_table.next = self.port.up.early.val().rd_table;
        self.addr_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.addr_table.wr_en.next = false;
        self.e.next = self.addr_table.rd_data.val();
        self.w.next = self.addr_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        if self.port.up.pass.val().cont_hit {
            self.out.d.next.chosen = self.port.up.pass.val().cont_node;
        }
        // A continuation that missed its entry arrives dropped; one that hit is not `assigned`.
        self.forwards.next = !self.port.up.pass.val().drop.any()
            & ((self.port.up.pass.val().assigned
                & (self.port.up.pass.val().is_task
                    | self.port.up.pass.val().is_random
                    | self.port.up.pass.val().is_sched2))
                | self.port.up.pass.val().is_cont);
        if self.forwards.val() {
            if self.e.val().valid & (self.e.val().pool == self.port.up.pass.val().pool) {
                self.out.d.next.fwd = true;
                self.out.d.next.mac = self.e.val().mac;
                self.out.d.next.ip = self.e.val().ip;
                self.out.d.next.port = self.e.val().port;
                self.out.d.next.egress = self.e.val().egress;
                self.out.d.next.out_dst = self.e.val().dst_id;
            } else {
                self.out.d.next.drop = self.code_miss.val();
            }
        }
        // Control passes write whatever earlier stages did with them, as the model does.
        if self.port.up.pass.val().is_ctl_add {
            self.w.next.valid = true;
            self.w.next.pool = self.port.up.pass.val().pool;
            self.w.next.mac = self.port.up.pass.val().mac;
            self.w.next.ip = self.port.up.pass.val().ip;
            self.w.next.port = self.port.up.pass.val().port;
            self.w.next.egress = self.port.up.pass.val().egress;
            self.w.next.dst_id = self.port.up.pass.val().out_dst;
            self.addr_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove {
            self.w.next = self.free.val();
            self.addr_table.wr_en.next = true;
        }
        self.addr_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.addr_table.rb.val();
        self.port.rb_hit.next = self.addr_table.rb_hit.val();
    }
}
