//! `nodeAddr[node]`: where a task for a node goes (decision 34), on the paper leaf's stage.
//!
//! The JBSQ leaf keeps the paper leaf's address table (`AddrEntry`: the node's pool, MAC, IPv4
//! address, UDP port, egress port and `dst_id`), so this stage is the paper leaf's
//! [`crate::stages::node_addr::NodeAddrStage`] behind a map of the JBSQ descriptor onto what that
//! stage reads:
//!
//! - the node whose address a pass reads (`chosen`): a token's node that was not stale, the
//!   fallback's sampled node, or for a release the replying worker (`src`);
//! - a continuation that found its entry in `conn` (`cont_hit`) reads its entry's node
//!   (`cont_node`), as the paper leaf's continuation does;
//! - a pass forwards a task (`assigned` with `is_task`) when it placed one (a token, not
//!   stale; or over a bound) or released one, and a continuation when it found its entry; the
//!   entry must be of the pass's pool (a continuation's node may have been removed since, or
//!   given to another pool: `continuation_miss`);
//! - an addition writes the node's entry from the address its pass carries; a removal clears it.
//!
//! What the stage found comes back in the JBSQ descriptor's `addr_ok`, `mac`, `ip`, `udp`,
//! `egress` and `out_dst`.

use super::JbsqPort;
use super::phv::JbsqPhv;
use crate::phv::Phv;
use crate::readback::RB_BITS;
use crate::stages::node_addr::NodeAddrStage as SharedNodeAddr;
use rust_hdl::prelude::*;

/// `nodeAddr` for `2^N` nodes.
#[derive(LogicBlock)]
pub struct NodeAddrStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// The paper leaf's stage, which keeps the table and reads it.
    pub(super) core: SharedNodeAddr<N>,
    early_m: Signal<Local, Phv>,
    pass_m: Signal<Local, Phv>,
    /// What is not read of the JBSQ `early` and of the shared stage's outputs (the names match Verilator's
    /// `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    core_pass_unused: Signal<Local, Phv>,
    core_early_unused: Signal<Local, Phv>,
    core_rb_unused: Signal<Local, Bits<RB_BITS>>,
    core_rb_hit_unused: Signal<Local, Bit>,
    /// The JBSQ pass in the stage.
    out: DFF<JbsqPhv>,
    zero_phv: Constant<Phv>,
    drop_one: Constant<Bits<4>>,
}

impl<const N: usize> Default for NodeAddrStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            core: Default::default(),
            early_m: Default::default(),
            pass_m: Default::default(),
            early_unused: Default::default(),
            core_pass_unused: Default::default(),
            core_early_unused: Default::default(),
            core_rb_unused: Default::default(),
            core_rb_hit_unused: Default::default(),
            out: Default::default(),
            zero_phv: Constant::new(Phv::default()),
            drop_one: Constant::new(1.into()),
        }
    }
}

impl<const N: usize> Logic for NodeAddrStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, core);
        // The entering pass (`early`): the node it reads or writes, a clock ahead.
        self.early_unused.next = self.port.up.early.val();
        self.early_m.next = self.zero_phv.val();
        self.early_m.next.chosen = self.port.up.early.val().src;
        if self.port.up.early.val().fallback {
            self.early_m.next.chosen = self.port.up.early.val().fb_node;
        }
        if self.port.up.early.val().pop {
            self.early_m.next.chosen = self.port.up.early.val().tok_node;
        }
        // A continuation that found its entry reads its node's address (`conn`'s decision,
        // late in the cycle: the shared stage picks it beside the other index).
        self.early_m.next.cont_hit = self.port.up.early.val().cont_hit;
        self.early_m.next.cont_node = self.port.up.early.val().cont_node;
        self.early_m.next.src = self.port.up.early.val().src;
        self.early_m.next.is_ctl_add = self.port.up.early.val().is_ctl_add;
        self.early_m.next.is_ctl_remove = self.port.up.early.val().is_ctl_remove;
        // The pass in the stage.
        self.pass_m.next = self.zero_phv.val();
        self.pass_m.next.live = self.port.up.pass.val().live;
        if self.port.up.pass.val().drop | !self.port.up.pass.val().live {
            self.pass_m.next.drop = self.drop_one.val();
        }
        self.pass_m.next.pool = self.port.up.pass.val().pool;
        self.pass_m.next.src = self.port.up.pass.val().src;
        self.pass_m.next.is_task = true;
        self.pass_m.next.assigned = (self.port.up.pass.val().is_task
            & !self.port.up.pass.val().dropped
            & ((self.port.up.pass.val().pop & !self.port.up.pass.val().stale)
                | self.port.up.pass.val().fallback))
            | self.port.up.pass.val().release;
        self.pass_m.next.is_cont =
            self.port.up.pass.val().is_cont & self.port.up.pass.val().cont_hit;
        self.pass_m.next.cont_hit = self.port.up.pass.val().cont_hit;
        self.pass_m.next.cont_node = self.port.up.pass.val().cont_node;
        self.pass_m.next.is_ctl_add = self.port.up.pass.val().is_ctl_add;
        self.pass_m.next.is_ctl_remove = self.port.up.pass.val().is_ctl_remove;
        self.pass_m.next.mac = self.port.up.pass.val().mac;
        self.pass_m.next.ip = self.port.up.pass.val().ip;
        self.pass_m.next.port = self.port.up.pass.val().udp;
        self.pass_m.next.egress = self.port.up.pass.val().egress;
        self.pass_m.next.out_dst = self.port.up.pass.val().out_dst;
        self.core.port.up.early.next = self.early_m.val();
        self.core.port.up.pass.next = self.pass_m.val();
        self.core_pass_unused.next = self.core.port.down.pass.val();
        self.core_early_unused.next = self.core.port.down.early.val();
        self.core_rb_unused.next = self.core.port.rb.val();
        self.core_rb_hit_unused.next = self.core.port.rb_hit.val();

        self.out.d.next = self.port.up.pass.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.pass.next.addr_ok = self.core_pass_unused.val().fwd;
        self.port.down.pass.next.mac = self.core_pass_unused.val().mac;
        self.port.down.pass.next.ip = self.core_pass_unused.val().ip;
        self.port.down.pass.next.udp = self.core_pass_unused.val().port;
        self.port.down.pass.next.egress = self.core_pass_unused.val().egress;
        self.port.down.pass.next.out_dst = self.core_pass_unused.val().out_dst;
        self.port.down.early.next = self.out.d.val();
        self.port.down.early.next.addr_ok = self.core_early_unused.val().fwd;
        self.port.down.early.next.mac = self.core_early_unused.val().mac;
        self.port.down.early.next.ip = self.core_early_unused.val().ip;
        self.port.down.early.next.udp = self.core_early_unused.val().port;
        self.port.down.early.next.egress = self.core_early_unused.val().egress;
        self.port.down.early.next.out_dst = self.core_early_unused.val().out_dst;
    }
}
