//! The JBSQ leaf's table stages chained in the plan's order (`docs/jbsq-pipeline.md`):
//! `poolCfg`, `nodeCfg`, `queueCtl`, `link`, `ring`, `members`, `memberSlot`, `outstanding`,
//! `poolAvg`, `taskBuf`, `conn`, `nodeAddr`, one pass a clock, each stage handing the next its
//! registered descriptor. What leaves is the pass's decision: the node a task goes to (a
//! token's, `tok_node`, or the fallback's, `fb_node`) and its address, a held or released task
//! (with the replying worker's address), a continuation's node and address, a second pass to
//! run (a retry, a returned place, at its ring), the message to the spine (an idle message or a
//! load report, with the average). A control pass that adds or removes a node holds `poolAvg` for
//! [`HOLD_CLOCKS`] more clocks: the core admits no pass behind it until then, as the paper
//! leaf's does. The frame store and the egress follow the chain.

use super::JbsqPort;
use super::conn::ConnStage;
use super::link::LinkStage;
use super::member_slot::MemberSlotStage;
use super::members::MembersStage;
use super::node_addr::NodeAddrStage;
use super::node_cfg::NodeCfgStage;
use super::outstanding::OutstandingStage;
use super::phv::JbsqPhv;
pub use super::pool_avg::HOLD_CLOCKS;
use super::pool_avg::PoolAvgStage;
use super::pool_cfg::PoolCfgStage;
use super::queue_ctl::QueueCtlStage;
use super::ring::RingStage;
use super::task_buf::TaskBufStage;
use super::{JbsqIn, JbsqOut};
use horus_model::sched::jbsq::JbsqSizes;
use rust_hdl::prelude::*;

/// The stages a pass goes through, and so the clocks from its entry (as `early`) to its leaving:
/// one more.
pub const STAGES: usize = 12;

/// The chain for `2^P` pools, `2^N` nodes, `2^R` ring entries, `2^B` buffer slots and `2^C`
/// connection entries.
#[derive(LogicBlock)]
pub struct JbsqIngress<
    const P: usize,
    const N: usize,
    const R: usize,
    const B: usize,
    const C: usize,
> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// The pass in the last stage (`nodeAddr`), which leaves next clock: the core decides on it
    /// whether the pass comes back, a register ahead.
    pub in_last: Signal<Out, JbsqPhv>,
    /// The generator's state (`poolCfg`'s).
    pub rng_state: Signal<Out, Bits<64>>,
    pub pool_cfg: PoolCfgStage<P>,
    pub node_cfg: NodeCfgStage<N>,
    pub queue_ctl: QueueCtlStage<P>,
    pub link: LinkStage<P>,
    pub ring: RingStage<R>,
    pub members: MembersStage<N>,
    pub member_slot: MemberSlotStage<N>,
    pub outstanding: OutstandingStage<N>,
    pub pool_avg: PoolAvgStage<P>,
    pub task_buf: TaskBufStage<B>,
    pub conn: ConnStage<C>,
    pub node_addr: NodeAddrStage<N>,
}

impl<const P: usize, const N: usize, const R: usize, const B: usize, const C: usize>
    JbsqIngress<P, N, R, B, C>
{
    /// The chain at `sizes` (which must be the const parameters' sizes), its generator seeded
    /// with `seed` (the model's `JbsqLeaf::new`), its connection entries expiring after
    /// `conn_timeout_us` (the model's `JbsqLeaf::set_conn_timeout_us`).
    pub fn new(sizes: JbsqSizes, seed: u64, conn_timeout_us: u32) -> Self {
        assert!(
            usize::from(sizes.pools) == 1 << P
                && usize::from(sizes.nodes) == 1 << N
                && sizes.ring_entries as usize == 1 << R
                && sizes.buffer_slots as usize == 1 << B
                && sizes.conn_table as usize == 1 << C,
            "the chain's sizes are its parameters'"
        );
        Self {
            clock: Default::default(),
            port: Default::default(),
            in_last: Default::default(),
            rng_state: Default::default(),
            pool_cfg: PoolCfgStage::new(seed),
            node_cfg: Default::default(),
            queue_ctl: QueueCtlStage::new(sizes),
            link: Default::default(),
            ring: Default::default(),
            members: Default::default(),
            member_slot: Default::default(),
            outstanding: Default::default(),
            pool_avg: Default::default(),
            task_buf: Default::default(),
            conn: ConnStage::new(conn_timeout_us),
            node_addr: Default::default(),
        }
    }
}

impl<const P: usize, const N: usize, const R: usize, const B: usize, const C: usize> Logic
    for JbsqIngress<P, N, R, B, C>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            pool_cfg,
            node_cfg,
            queue_ctl,
            link,
            ring,
            members,
            member_slot,
            outstanding,
            pool_avg,
            task_buf,
            conn,
            node_addr
        );
        JbsqIn::link(&mut self.port.up, &mut self.pool_cfg.port.up);
        JbsqOut::join(&mut self.pool_cfg.port.down, &mut self.node_cfg.port.up);
        JbsqOut::join(&mut self.node_cfg.port.down, &mut self.queue_ctl.port.up);
        JbsqOut::join(&mut self.queue_ctl.port.down, &mut self.link.port.up);
        JbsqOut::join(&mut self.link.port.down, &mut self.ring.port.up);
        JbsqOut::join(&mut self.ring.port.down, &mut self.members.port.up);
        JbsqOut::join(&mut self.members.port.down, &mut self.member_slot.port.up);
        JbsqOut::join(
            &mut self.member_slot.port.down,
            &mut self.outstanding.port.up,
        );
        JbsqOut::join(&mut self.outstanding.port.down, &mut self.pool_avg.port.up);
        JbsqOut::join(&mut self.pool_avg.port.down, &mut self.task_buf.port.up);
        JbsqOut::join(&mut self.task_buf.port.down, &mut self.conn.port.up);
        JbsqOut::join(&mut self.conn.port.down, &mut self.node_addr.port.up);
        JbsqOut::link(&mut self.port.down, &mut self.node_addr.port.down);
        self.in_last.next = self.conn.port.down.pass.val();
        self.rng_state.next = self.pool_cfg.rng_state.val();
    }
}
