//! `poolAvg[pool]`: the JBSQ leaf's rack average, load-report rule and the message a pass sends
//! (the model's `JbsqLeaf::pool_avg` and `signal_header`), on the paper leaf's stage.
//!
//! The JBSQ leaf reuses the paper leaf's entry and rack average (`PoolAvg`, `RackAverage`:
//! `docs/algorithm.md`, decisions 7 and 19), so this stage is the paper leaf's
//! [`crate::stages::pool_avg::PoolAvgStage`] (its exact arithmetic, its report margins, its
//! pipelined rescale that holds the stage for [`HOLD_CLOCKS`] more clocks) behind a map of the
//! JBSQ descriptor onto the inputs that stage reads, and the JBSQ descriptor carried beside it:
//!
//! - one task more: a task's pass (a first pass or a retry) that took a place, was held or went
//!   over a bound, not one dropped on a full region (`dropped`) nor one that popped a removed
//!   node's token (`stale`: it retries); from the pool's spine (`src` its ID) it leaves the
//!   report rule's margins (decision 19);
//! - one task less: a reply's first pass from a node of the pool (a pass `nodeCfg` dropped is
//!   not live there);
//! - a rescale: a control pass adding a node (the pool's tasks and the node's `tasks`, on the new
//!   `unit`) or removing one (the pool's tasks less the node's `lost`, which `outstanding` hands
//!   on); neither sends a message, as the model's control passes do not, so the stage sees them
//!   without a spine;
//! - configuring a pool clears its entry.
//!
//! One message a pass: an idle message `link` decided (`idle_add`, `idle_remove`) leaves with the
//! average as it stands after the pass; else a load report when the rule holds (`load_update`).
//! Either carries its header's type and the average in `sig_qlen` and `sig_seq`. The core admits
//! no pass behind a control pass that adds or removes a node until it has left, as the paper
//! leaf's does; while it is held the next stages see bubbles.

use super::JbsqPort;
use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use crate::phv::Phv;
use crate::readback::RB_BITS;
pub use crate::stages::pool_avg::HOLD_CLOCKS;
use crate::stages::pool_avg::PoolAvgStage as SharedPoolAvg;
use horus_model::wire::PacketType;
use rust_hdl::prelude::*;

/// `poolAvg` for `2^P` pools.
#[derive(LogicBlock)]
pub struct PoolAvgStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// The paper leaf's stage, which keeps the table and decides.
    pub(super) core: SharedPoolAvg<P>,
    /// The JBSQ passes as the shared stage reads them.
    early_m: Signal<Local, Phv>,
    pass_m: Signal<Local, Phv>,
    /// What is not read of the JBSQ `early` and of the shared stage's outputs (the names match
    /// Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    core_pass_unused: Signal<Local, Phv>,
    core_early_unused: Signal<Local, Phv>,
    core_rb_unused: Signal<Local, Bits<RB_BITS>>,
    core_rb_hit_unused: Signal<Local, Bit>,
    unit_w: ZeroExtend<33, 64>,
    lost_w: ZeroExtend<16, 32>,
    /// The JBSQ pass in the stage, held with the shared stage's own during a rescale.
    out: DFF<JbsqPhv>,
    /// Clocks a rescale still holds the stage (as the shared stage's count).
    hold: DFF<Bits<3>>,
    holding: Signal<Local, Bit>,
    rescale: Signal<Local, Bit>,
    zero_phv: Constant<Phv>,
    drop_one: Constant<Bits<4>>,
    shift16: Constant<Bits<8>>,
    hold_len: Constant<Bits<3>>,
    one3: Constant<Bits<3>>,
    type_none: Constant<Bits<7>>,
    type_idle_add: Constant<Bits<7>>,
    type_idle_remove: Constant<Bits<7>>,
    type_load: Constant<Bits<7>>,
}

impl<const P: usize> Default for PoolAvgStage<P> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            core: SharedPoolAvg::with_added_tasks(),
            early_m: Default::default(),
            pass_m: Default::default(),
            early_unused: Default::default(),
            core_pass_unused: Default::default(),
            core_early_unused: Default::default(),
            core_rb_unused: Default::default(),
            core_rb_hit_unused: Default::default(),
            unit_w: Default::default(),
            lost_w: Default::default(),
            out: Default::default(),
            hold: Default::default(),
            holding: Default::default(),
            rescale: Default::default(),
            zero_phv: Constant::new(Phv::default()),
            drop_one: Constant::new(1.into()),
            shift16: Constant::new(16.into()),
            hold_len: Constant::new((HOLD_CLOCKS as u64).into()),
            one3: Constant::new(1.into()),
            type_none: Constant::new(0.into()),
            type_idle_add: Constant::new((PacketType::IdleSignal as u64).into()),
            type_idle_remove: Constant::new((PacketType::IdleRemove as u64).into()),
            type_load: Constant::new((PacketType::QueueSignal as u64).into()),
        }
    }
}

impl<const P: usize> Logic for PoolAvgStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, hold);
        clock!(self, clock, core);
        // The entering pass (`early`): the shared stage reads its pool (the index), its report
        // delta and whether it is from the pool's spine, a clock ahead.
        self.early_unused.next = self.port.up.early.val();
        self.early_m.next = self.zero_phv.val();
        self.early_m.next.pool = self.port.up.early.val().pool;
        self.early_m.next.src = self.port.up.early.val().src;
        self.early_m.next.spine_ok = self.port.up.early.val().spine_ok;
        self.early_m.next.spine_id = self.port.up.early.val().spine_id;
        self.early_m.next.report_delta = self.port.up.early.val().report_delta;
        // The pass in the stage, as the model's `AvgChange` and control passes.
        self.pass_m.next = self.zero_phv.val();
        self.pass_m.next.live = self.port.up.pass.val().live;
        if self.port.up.pass.val().drop | !self.port.up.pass.val().live {
            self.pass_m.next.drop = self.drop_one.val();
        }
        self.pass_m.next.pool = self.port.up.pass.val().pool;
        self.pass_m.next.src = self.port.up.pass.val().src;
        self.pass_m.next.spine_id = self.port.up.pass.val().spine_id;
        self.pass_m.next.report_delta = self.port.up.pass.val().report_delta;
        // A control pass that adds or removes a node sends nothing: no spine for it here.
        self.pass_m.next.spine_ok = self.port.up.pass.val().spine_ok
            & !(self.port.up.pass.val().is_ctl_add | self.port.up.pass.val().is_ctl_remove);
        self.pass_m.next.assigned = true;
        self.pass_m.next.is_task = self.port.up.pass.val().is_task
            & !self.port.up.pass.val().dropped
            & !self.port.up.pass.val().stale;
        self.pass_m.next.is_reply = self.port.up.pass.val().is_reply;
        self.pass_m.next.is_ctl_pool = self.port.up.pass.val().is_ctl_pool;
        self.pass_m.next.is_ctl_add = self.port.up.pass.val().is_ctl_add;
        self.pass_m.next.is_ctl_remove = self.port.up.pass.val().is_ctl_remove;
        self.pass_m.next.sig_idle_add = self.port.up.pass.val().idle_add;
        self.pass_m.next.sig_idle_remove = self.port.up.pass.val().idle_remove;
        self.unit_w.narrow.next = self.port.up.pass.val().unit;
        self.pass_m.next.unit = self.unit_w.wide.val();
        // A removal's lost tasks, whole (the paper leaf's removed queue is 16.16).
        self.lost_w.narrow.next = self.port.up.pass.val().lost;
        self.pass_m.next.removed_q = self.lost_w.wide.val() << self.shift16.val();
        self.core.port.up.early.next = self.early_m.val();
        self.core.port.up.pass.next = self.pass_m.val();
        self.core.added.next = self.port.up.pass.val().tasks;
        self.core_pass_unused.next = self.core.port.down.pass.val();
        self.core_early_unused.next = self.core.port.down.early.val();
        self.core_rb_unused.next = self.core.port.rb.val();
        self.core_rb_hit_unused.next = self.core.port.rb_hit.val();

        // The JBSQ pass waits beside the shared stage's while a rescale holds it.
        self.holding.next = self.hold.q.val().any();
        self.rescale.next = self.port.up.pass.val().live
            & !self.port.up.pass.val().drop
            & (self.port.up.pass.val().is_ctl_add | self.port.up.pass.val().is_ctl_remove);
        self.out.d.next = self.port.up.pass.val();
        self.hold.d.next = self.hold.q.val();
        if self.holding.val() {
            self.hold.d.next = self.hold.q.val() - self.one3.val();
            self.out.d.next = self.out.q.val();
        }
        if self.rescale.val() {
            self.hold.d.next = self.hold_len.val();
        }

        // The message: its type and the average it carries, from what the shared stage decided.
        self.port.down.pass.next = self.out.q.val();
        self.port.down.pass.next.load_update = self.core_pass_unused.val().sig_load_update;
        self.port.down.pass.next.sig_qlen = self.core_pass_unused.val().avg.get_bits::<16>(16);
        self.port.down.pass.next.sig_seq = self.core_pass_unused.val().avg.get_bits::<16>(0);
        self.port.down.pass.next.sig_pkt_type = self.type_none.val();
        if self.out.q.val().idle_add {
            self.port.down.pass.next.sig_pkt_type = self.type_idle_add.val();
        }
        if self.out.q.val().idle_remove {
            self.port.down.pass.next.sig_pkt_type = self.type_idle_remove.val();
        }
        if self.core_pass_unused.val().sig_load_update {
            self.port.down.pass.next.sig_pkt_type = self.type_load.val();
        }
        if self.holding.val() {
            self.port.down.pass.next.live = false;
            self.port.down.pass.next.is_ctl_add = false;
            self.port.down.pass.next.is_ctl_remove = false;
        }
        self.port.down.early.next = self.out.d.val();
        self.port.down.early.next.load_update = self.core_early_unused.val().sig_load_update;
        self.port.down.early.next.sig_qlen = self.core_early_unused.val().avg.get_bits::<16>(16);
        self.port.down.early.next.sig_seq = self.core_early_unused.val().avg.get_bits::<16>(0);
        self.port.down.early.next.sig_pkt_type = self.type_none.val();
        if self.out.d.val().idle_add {
            self.port.down.early.next.sig_pkt_type = self.type_idle_add.val();
        }
        if self.out.d.val().idle_remove {
            self.port.down.early.next.sig_pkt_type = self.type_idle_remove.val();
        }
        if self.core_early_unused.val().sig_load_update {
            self.port.down.early.next.sig_pkt_type = self.type_load.val();
        }
    }
}
