//! The stages, one per table, in pipeline order (`docs/pipeline.md`). A pass spends one cycle in
//! each: the stage reads its table with the index of the pass about to enter it (`early`, while
//! that pass is still in the previous stage), and in the pass's own cycle sees the entry,
//! computes, and writes it back.
//!
//! Every stage has the same port, [`StagePort`]: the pass coming in ([`PassIn`]), the pass going
//! out ([`PassOut`]) and its side of a table read. A stage's `down` joins the next stage's `up`
//! (`PassOut::join`), so the core chains its stages one join each, and a test drives any stage
//! (or chain of stages) the same way ([`PipelineStage`]).

pub mod conn;
pub mod drift;
pub mod idle_ctl;
pub mod idle_index;
pub mod idle_list;
pub mod load;
pub mod members;
pub mod node;
pub mod node_addr;
pub mod pool_avg;
pub mod pool_cfg;

use crate::phv::Phv;
use crate::readback::RB_BITS;
use conn::ConnStage;
use drift::DriftStage;
use horus_model::sched::Stage;
use idle_ctl::IdleCtlStage;
use idle_index::IdleIndexStage;
use idle_list::IdleListStage;
use load::LoadStage;
use members::MembersStage;
use node::NodeStage;
use node_addr::NodeAddrStage;
use pool_avg::PoolAvgStage;
use pool_cfg::PoolCfgStage;
use rust_hdl::prelude::*;

/// A pass entering a stage: `early` is the pass entering next cycle (the previous stage's
/// `early`), whose index goes to the table now; `pass` the pass in the stage this cycle (the
/// previous stage's `pass`).
#[derive(LogicInterface, Default)]
#[join = "PassOut"]
pub struct PassIn {
    pub early: Signal<In, Phv>,
    pub pass: Signal<In, Phv>,
}

/// A pass leaving a stage: `pass` is the pass leaving this cycle (registered), `early` what
/// `pass` will be next cycle (the register's input: the next stage's `early`).
#[derive(LogicInterface, Default)]
#[join = "PassIn"]
pub struct PassOut {
    pub pass: Signal<Out, Phv>,
    pub early: Signal<Out, Phv>,
}

/// What every stage has: the pass in and out, and the entry its table kept for the last read
/// (`readback.rs`; zero unless `rb_hit`, the read was this table's), which the core ORs over
/// its stages.
#[derive(LogicInterface, Default)]
pub struct StagePort {
    pub up: PassIn,
    pub down: PassOut,
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub rb_hit: Signal<Out, Bit>,
}

/// Cycles a pass spends in a stage.
pub const STAGE_CYCLES: usize = 1;

/// A block that takes passes one per clock through a [`StagePort`]: every stage, and a chain of
/// stages (in a test, say). [`impl_pipeline_stage!`](crate::impl_pipeline_stage) implements it
/// for a block with fields `port` and `clock`.
pub trait PipelineStage: Block {
    fn port(&self) -> &StagePort;
    fn port_mut(&mut self) -> &mut StagePort;
    fn clock(&self) -> &Signal<In, Clock>;
    fn clock_mut(&mut self) -> &mut Signal<In, Clock>;
}

/// `impl_pipeline_stage!([generics] Type)`: [`PipelineStage`] for a block whose fields `port`
/// and `clock` are its stage port and its clock.
#[macro_export]
macro_rules! impl_pipeline_stage {
    ([$($g:tt)*] $ty:ty) => {
        impl<$($g)*> $crate::stages::PipelineStage for $ty {
            fn port(&self) -> &$crate::stages::StagePort {
                &self.port
            }
            fn port_mut(&mut self) -> &mut $crate::stages::StagePort {
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

/// A stage: a [`PipelineStage`] that owns one table of the stage plan.
pub trait TableStage: PipelineStage {
    /// The table it owns.
    fn table(&self) -> Stage;
}

/// Implements [`PipelineStage`] and [`TableStage`] for stages with fields `port`, `clock` and
/// the named table.
macro_rules! table_stage {
    ($($ty:ident<$n:ident> => $table:ident),+ $(,)?) => {$(
        crate::impl_pipeline_stage!([const $n: usize] $ty<$n>);
        impl<const $n: usize> TableStage for $ty<$n> {
            fn table(&self) -> Stage {
                self.$table.stage()
            }
        }
    )+};
}

table_stage!(
    PoolCfgStage<P> => cfg_table,
    NodeStage<N> => node_table,
    IdleCtlStage<P> => ctl_table,
    IdleListStage<N> => list_table,
    IdleIndexStage<N> => index_table,
    MembersStage<N> => member_table,
    LoadStage<N> => load_table,
    DriftStage<N> => drift_table,
    PoolAvgStage<P> => avg_table,
    ConnStage<C> => conn_table,
    NodeAddrStage<N> => addr_table,
);
