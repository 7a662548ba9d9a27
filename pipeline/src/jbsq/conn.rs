//! `conn[hash(pool, seq)]`: a multi-packet task's continuations follow its first packet
//! (decision 34), on the paper leaf's stage.
//!
//! The JBSQ leaf keeps the paper leaf's connection table (`ConnEntry`: valid, pool, seq, node,
//! stamp) and its rules (`horus_model::sched::state::ConnEntry::write` and `follow`), so this
//! stage is the paper leaf's [`crate::stages::conn::ConnStage`] behind a map of the JBSQ
//! descriptor onto what that stage reads:
//!
//! - the index, a clock ahead: `conn_slot`, which `poolCfg` works out for every pass;
//! - a task's first pass that placed it (a token that was not stale, or over a bound) writes
//!   its node (`tok_node` or `fb_node`) when more packets follow (`more`); a held task is never
//!   one of several packets (decision 26), a dropped one took no node;
//! - a continuation (`is_cont`) follows its entry; its last packet frees it.
//!
//! What the stage found comes back in the JBSQ descriptor's `cont_hit`, `cont_node` (also a
//! clock ahead, in `early`, where `nodeAddr` takes it as its index), `conn_insert`,
//! `conn_collision` and `conn_expired`. A pass dropped before (`drop`) changes nothing.

use super::JbsqPort;
use super::phv::JbsqPhv;
use crate::phv::Phv;
use crate::readback::RB_BITS;
use crate::stages::conn::ConnStage as SharedConn;
use rust_hdl::prelude::*;

/// `conn` of `2^C` entries.
#[derive(LogicBlock)]
pub struct ConnStage<const C: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// The paper leaf's stage, which keeps the table and applies its rules.
    pub(super) core: SharedConn<C>,
    early_m: Signal<Local, Phv>,
    pass_m: Signal<Local, Phv>,
    /// What is not read of the JBSQ `early` and of the shared stage's outputs (the names match
    /// Verilator's `--unused-regexp`).
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

impl<const C: usize> ConnStage<C> {
    /// A table of `2^C` entries whose entries expire after `timeout_us` microseconds (the
    /// model's `JbsqLeaf::set_conn_timeout_us`).
    pub fn new(timeout_us: u32) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            core: SharedConn::new(timeout_us),
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

impl<const C: usize> Logic for ConnStage<C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out);
        clock!(self, clock, core);
        // The entering pass (`early`): its slot and its time, a clock ahead.
        self.early_unused.next = self.port.up.early.val();
        self.early_m.next = self.zero_phv.val();
        self.early_m.next.conn_slot = self.port.up.early.val().conn_slot;
        self.early_m.next.time = self.port.up.early.val().time;
        // The pass in the stage.
        self.pass_m.next = self.zero_phv.val();
        self.pass_m.next.live = self.port.up.pass.val().live;
        if self.port.up.pass.val().drop | !self.port.up.pass.val().live {
            self.pass_m.next.drop = self.drop_one.val();
        }
        self.pass_m.next.pool = self.port.up.pass.val().pool;
        self.pass_m.next.seq = self.port.up.pass.val().seq;
        self.pass_m.next.time = self.port.up.pass.val().time;
        self.pass_m.next.more = self.port.up.pass.val().more;
        self.pass_m.next.is_task = self.port.up.pass.val().is_task;
        self.pass_m.next.is_cont = self.port.up.pass.val().is_cont;
        self.pass_m.next.chosen = self.port.up.pass.val().fb_node;
        if self.port.up.pass.val().pop {
            self.pass_m.next.chosen = self.port.up.pass.val().tok_node;
        }
        self.pass_m.next.assigned = !self.port.up.pass.val().dropped
            & ((self.port.up.pass.val().pop & !self.port.up.pass.val().stale)
                | self.port.up.pass.val().fallback);
        self.core.port.up.early.next = self.early_m.val();
        self.core.port.up.pass.next = self.pass_m.val();
        self.core_pass_unused.next = self.core.port.down.pass.val();
        self.core_early_unused.next = self.core.port.down.early.val();
        self.core_rb_unused.next = self.core.port.rb.val();
        self.core_rb_hit_unused.next = self.core.port.rb_hit.val();

        self.out.d.next = self.port.up.pass.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.pass.next.cont_hit = self.core_pass_unused.val().cont_hit;
        self.port.down.pass.next.cont_node = self.core_pass_unused.val().cont_node;
        self.port.down.pass.next.conn_insert = self.core_pass_unused.val().ev_conn_insert;
        self.port.down.pass.next.conn_collision = self.core_pass_unused.val().ev_conn_collision;
        self.port.down.pass.next.conn_expired = self.core_pass_unused.val().ev_conn_expired;
        self.port.down.early.next = self.out.d.val();
        self.port.down.early.next.cont_hit = self.core_early_unused.val().cont_hit;
        self.port.down.early.next.cont_node = self.core_early_unused.val().cont_node;
        self.port.down.early.next.conn_insert = self.core_early_unused.val().ev_conn_insert;
        self.port.down.early.next.conn_collision = self.core_early_unused.val().ev_conn_collision;
        self.port.down.early.next.conn_expired = self.core_early_unused.val().ev_conn_expired;
    }
}
