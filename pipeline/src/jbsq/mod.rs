//! The leaf that holds tasks (JBSQ(k), `horus_model::sched::jbsq::JbsqLeaf`) as pipeline stages,
//! following the stage plan in `docs/jbsq-pipeline.md`. Built: the pools' configuration and the
//! generator [`pool_cfg::PoolCfgStage`], the nodes' [`node_cfg::NodeCfgStage`],
//! [`queue_ctl::QueueCtlStage`] (the token rings and the held queue), the link rule
//! [`link::LinkStage`], the token table [`ring::RingStage`], the pools' members
//! [`members::MembersStage`] and [`member_slot::MemberSlotStage`], the workers' counts
//! [`outstanding::OutstandingStage`], the rack average and the messages to the spine
//! [`pool_avg::PoolAvgStage`] (the paper leaf's stage behind the JBSQ descriptor) and the held
//! tasks [`task_buf::TaskBufStage`], and the paper leaf's connection and address tables behind
//! the JBSQ descriptor ([`conn::ConnStage`], [`node_addr::NodeAddrStage`], decision 34): a
//! standalone stage set with its own descriptor ([`phv::JbsqPhv`]), each stage tested pass for
//! pass against the model, and chained ([`ingress::JbsqIngress`]) pass for pass against the
//! model; the leaf's core ([`core::JbsqCore`]: decode, the pass mux with its second and control
//! passes, the chain), pass for pass against the model; the map from a pass to its egress job
//! ([`job_map::JbsqJobMap`]); its egress with the frame store ([`egress::JbsqEgress`]), frame
//! for frame against the model's frames; and the datapath joining them behind the paper leaf's
//! ingress ([`switch::JbsqSwitch`]), frame for frame against the model's frame switch. Its place
//! in the top level behind the register map is planned.
//!
//! The stages follow the paper leaf's convention ([`crate::stages`]): a stage reads its table
//! with the index of the pass about to enter it (`early`), and in the pass's own cycle sees the
//! entry (forwarded when the pass before wrote it, [`crate::table::RmwTable`]), computes and
//! writes it back.

pub mod axil;
pub mod conn;
pub mod core;
pub mod counters;
pub mod egress;
pub mod entries;
pub mod ingress;
pub mod job_map;
pub mod link;
pub mod member_slot;
pub mod members;
pub mod node_addr;
pub mod node_cfg;
pub mod outstanding;
pub mod phv;
pub mod pool_avg;
pub mod pool_cfg;
pub mod queue_ctl;
pub mod ring;
pub mod switch;
pub mod task_buf;
pub mod top;

use phv::JbsqPhv;
use rust_hdl::prelude::*;

/// A pass entering a stage: `early` is the pass entering next cycle, whose index goes to the
/// table now; `pass` the pass in the stage this cycle.
#[derive(LogicInterface, Default)]
#[join = "JbsqOut"]
pub struct JbsqIn {
    pub early: Signal<In, JbsqPhv>,
    pub pass: Signal<In, JbsqPhv>,
}

/// A pass leaving a stage: `pass` the pass leaving this cycle (registered), `early` what `pass`
/// will be next cycle (the next stage's `early`).
#[derive(LogicInterface, Default)]
#[join = "JbsqIn"]
pub struct JbsqOut {
    pub pass: Signal<Out, JbsqPhv>,
    pub early: Signal<Out, JbsqPhv>,
}

/// A JBSQ stage's port: the pass in and out.
#[derive(LogicInterface, Default)]
pub struct JbsqPort {
    pub up: JbsqIn,
    pub down: JbsqOut,
}

/// A block that takes JBSQ passes one per clock through a [`JbsqPort`]: every JBSQ stage, and a
/// chain of them.
pub trait JbsqPipelineStage: Block {
    fn port(&self) -> &JbsqPort;
    fn port_mut(&mut self) -> &mut JbsqPort;
    fn clock(&self) -> &Signal<In, Clock>;
    fn clock_mut(&mut self) -> &mut Signal<In, Clock>;
}

/// `impl_jbsq_stage!([generics] Type)`: [`JbsqPipelineStage`] for a block whose fields `port`
/// and `clock` are its port and its clock.
#[macro_export]
macro_rules! impl_jbsq_stage {
    ([$($g:tt)*] $ty:ty) => {
        impl<$($g)*> $crate::jbsq::JbsqPipelineStage for $ty {
            fn port(&self) -> &$crate::jbsq::JbsqPort {
                &self.port
            }
            fn port_mut(&mut self) -> &mut $crate::jbsq::JbsqPort {
                &mut self.port
            }
            fn clock(&self) -> &rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Clock> {
                &self.clock
            }
            fn clock_mut(
                &mut self,
            ) -> &mut rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Clock> {
                &mut self.clock
            }
        }
    };
}

crate::impl_jbsq_stage!([const P: usize] queue_ctl::QueueCtlStage<P>);
crate::impl_jbsq_stage!([const P: usize] link::LinkStage<P>);
crate::impl_jbsq_stage!([const P: usize, const N: usize, const R: usize, const B: usize, const C: usize] ingress::JbsqIngress<P, N, R, B, C>);
crate::impl_jbsq_stage!([const P: usize] pool_avg::PoolAvgStage<P>);
crate::impl_jbsq_stage!([const P: usize] pool_cfg::PoolCfgStage<P>);
crate::impl_jbsq_stage!([const N: usize] node_cfg::NodeCfgStage<N>);
crate::impl_jbsq_stage!([const R: usize] ring::RingStage<R>);
crate::impl_jbsq_stage!([const N: usize] members::MembersStage<N>);
crate::impl_jbsq_stage!([const N: usize] member_slot::MemberSlotStage<N>);
crate::impl_jbsq_stage!([const N: usize] outstanding::OutstandingStage<N>);
crate::impl_jbsq_stage!([const B: usize] task_buf::TaskBufStage<B>);
crate::impl_jbsq_stage!([const N: usize] node_addr::NodeAddrStage<N>);
crate::impl_jbsq_stage!([const C: usize] conn::ConnStage<C>);
