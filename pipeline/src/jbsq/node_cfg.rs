//! `nodeCfg[src]`: each node's configuration, which control passes write (`docs/algorithm.md`,
//! decisions 26 and 30): whether it is active, its pool, its generation and its bound `k`.
//!
//! - A reply (`src` the replying worker): the node must be an active node of the pass's pool,
//!   or the pass is dropped (`drop`: the reply is still forwarded, nothing else changes,
//!   `replies_not_in_pool`); its bound `k` and generation go on (`outstanding` compares the count
//!   left with `k`; a returned place carries the generation to its second pass).
//! - A reply's second pass (a returned place): the node must still be an active node of the
//!   pool, of the generation its first pass saw, or its place went with a removal (`drop`).
//! - Control, an added node: active in the pass's pool, its generation kept, its bound the
//!   pass's `k`, or the pool's (`pool_k`) when the pass carries 0; the generation and the bound
//!   go on (`outstanding` starts the node's count with that generation).
//! - Control, a removed node: inactive, its generation one up (its tokens still in the rings
//!   are stale from now); the new generation goes on.
//! - Control, a node's new bound (decision 36): its bound the pass's `k`, its generation one up
//!   (its tokens still in the rings are stale); the new generation goes on, for `outstanding`
//!   and the place passes that follow.
//!
//! Tasks and an added node's place passes do not touch the table. One touch a pass; back-to-back
//! passes on one node are forwarded ([`RmwTable`]). The index is the pass's `src`, a register.

use super::JbsqPort;
use super::entries::NodeCfgEntry;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// `nodeCfg` for `2^N` nodes.
#[derive(LogicBlock)]
pub struct NodeCfgStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its node (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) node_table: RmwTable<NodeCfgEntry, N>,
    out: DFF<JbsqPhv>,
    /// The node the pass in the stage read (where it writes).
    at: DFF<Bits<N>>,
    e: Signal<Local, NodeCfgEntry>,
    w: Signal<Local, NodeCfgEntry>,
    active: Signal<Local, Bit>,
    /// The entry is an active node of the pass's pool, and of the pass's generation.
    member: Signal<Local, Bit>,
    same_gen: Signal<Local, Bit>,
    /// An added node's bound: its own, or the pool's.
    add_k: Signal<Local, Bits<16>>,
    gen_up: Signal<Local, Bits<8>>,
    one8: Constant<Bits<8>>,
    zero_n: Constant<Bits<N>>,
}

impl<const N: usize> Default for NodeCfgStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            node_table: Default::default(),
            out: Default::default(),
            at: Default::default(),
            e: Default::default(),
            w: Default::default(),
            active: Default::default(),
            member: Default::default(),
            same_gen: Default::default(),
            add_k: Default::default(),
            gen_up: Default::default(),
            one8: Constant::new(1.into()),
            zero_n: Constant::new(0.into()),
        }
    }
}

impl<const N: usize> Logic for NodeCfgStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, node_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's node.
        self.node_table.rd_addr.next = self.port.up.early.val().src.get_bits::<N>(0);
        self.node_table.rd_off.next = self.zero_n.val();
        self.node_table.rd_indexed.next = false;
        self.node_table.rd_index.next = self.zero_n.val();
        self.node_table.rd_same.next = false;
        self.at.d.next = self.port.up.early.val().src.get_bits::<N>(0);
        self.node_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.e.next = self.node_table.rd_data.val();
        self.w.next = self.node_table.rd_data.val();
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.member.next =
            self.e.val().active & (self.e.val().pool == self.port.up.pass.val().pool);
        self.same_gen.next = self.e.val().generation == self.port.up.pass.val().generation;
        self.add_k.next = self.port.up.pass.val().k;
        if !self.port.up.pass.val().k.any() {
            self.add_k.next = self.port.up.pass.val().pool_k;
        }
        self.gen_up.next = self.e.val().generation + self.one8.val();
        self.out.d.next = self.port.up.pass.val();
        self.node_table.wr_en.next = false;
        if self.active.val() & self.port.up.pass.val().is_reply {
            self.out.d.next.k = self.e.val().k;
            self.out.d.next.generation = self.e.val().generation;
            self.out.d.next.drop = !self.member.val();
        }
        if self.active.val() & self.port.up.pass.val().is_return {
            self.out.d.next.k = self.e.val().k;
            self.out.d.next.drop = !(self.member.val() & self.same_gen.val());
        }
        // Control passes (the host checked the node: free for an add, a member for a removal).
        self.w.next.pool = self.port.up.pass.val().pool;
        if self.port.up.pass.val().is_ctl_add {
            self.w.next.active = true;
            self.w.next.k = self.add_k.val();
            self.out.d.next.k = self.add_k.val();
            self.out.d.next.generation = self.e.val().generation;
            self.node_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_bound {
            self.w.next.k = self.port.up.pass.val().k;
            self.w.next.generation = self.gen_up.val();
            self.out.d.next.k = self.port.up.pass.val().k;
            self.out.d.next.generation = self.gen_up.val();
            self.node_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_remove {
            self.w.next.active = false;
            self.w.next.generation = self.gen_up.val();
            self.out.d.next.generation = self.gen_up.val();
            self.node_table.wr_en.next = self.port.up.pass.val().live;
        }
        self.node_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
