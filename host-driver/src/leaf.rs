//! What the controller ([`crate::controller`]) and `horusctl serve` need of a leaf, for either
//! leaf: the paper's ([`Switch`], its state read back from the card's tables) and the one that
//! holds tasks ([`JbsqDriver`], its state the host's mirror, which the card cannot give back).
//!
//! A [`Leaf`] gives its state ([`LeafState`]: which node is whose, at what address, which pool
//! has room), a count that moves with every change to it (so the controller reads the state
//! again only after a change it did not make), runs the controller's two operations (add a
//! worker, remove one) and reads its counters.

use horus_model::sched::jbsq::JbsqLeaf;
use horus_model::sched::state::NodeState;
use horus_model::sched::{ControlOp, NodeAddr, Scheduler};
use horus_regs::regmap;

use crate::access::Regs;
use crate::driver::{DriverError, Result, Switch};
use crate::jbsq::JbsqDriver;

/// A leaf's membership as the host knows it.
pub trait LeafState {
    /// The switch's ID (`src_id` of its messages to workers).
    fn switch_id(&self) -> u16;
    /// Its pools and nodes.
    fn pools(&self) -> u16;
    fn nodes(&self) -> u16;
    /// The pool and address of node `id` when it is an active member.
    fn held(&self, id: u16) -> Option<(u16, NodeAddr)>;
    /// Whether node `id` is free (not a member, not being removed).
    fn is_free(&self, id: u16) -> bool;
    /// Whether `pool` is configured and has room for another worker.
    fn has_room(&self, pool: u16) -> bool;
    /// `pool`'s members in slot order (none when it is not configured).
    fn members(&self, pool: u16) -> Vec<u16>;
}

/// A leaf the controller drives.
pub trait Leaf {
    type State: LeafState;
    type Regs: Regs;
    fn regs(&mut self) -> &mut Self::Regs;
    /// Refused (a clear error) when this switch is not a leaf.
    fn check_leaf(&self) -> Result<()>;
    /// The leaf's state; `extra`: node IDs to read besides the pools' members (the paper leaf
    /// reads its tables back; the JBSQ leaf has all of it in its mirror).
    fn state(&mut self, extra: &[u16]) -> Result<Self::State>;
    /// A count that moves by one with each operation run through [`Leaf::control`], and with
    /// any other change to the leaf's membership: the paper leaf's `CONTROL_PASSES`, the JBSQ
    /// leaf's mirror file's version.
    fn changes(&mut self) -> Result<u32>;
    /// Runs `op` (`AddNode` of one worker or `RemoveNode`) on the leaf and in `state`;
    /// `DriverError::Refused`, nothing run, when the leaf's state refuses it.
    fn control(&mut self, state: &mut Self::State, op: ControlOp) -> Result<()>;
    /// Every counter by name, then the status word (`OVERFLOW`, `IN_FLIGHT`).
    fn counters(&mut self) -> Result<Vec<(&'static str, u32)>>;
    fn status(&mut self) -> Result<u32>;
}

impl LeafState for Scheduler {
    fn switch_id(&self) -> u16 {
        self.id()
    }
    fn pools(&self) -> u16 {
        self.sizes().pools
    }
    fn nodes(&self) -> u16 {
        self.sizes().nodes
    }
    fn held(&self, id: u16) -> Option<(u16, NodeAddr)> {
        let row = self.tables().nodes.get(usize::from(id))?;
        let a = row.addr.filter(|_| row.node.state == NodeState::Active)?;
        Some((row.node.pool, a.addr))
    }
    fn is_free(&self, id: u16) -> bool {
        self.tables()
            .nodes
            .get(usize::from(id))
            .is_some_and(|r| r.node.state == NodeState::Free)
    }
    fn has_room(&self, pool: u16) -> bool {
        let c = self.tables().pools.get(usize::from(pool)).map(|r| r.cfg);
        c.is_some_and(|c| c.valid && c.n < c.capacity)
    }
    fn members(&self, pool: u16) -> Vec<u16> {
        let t = self.tables();
        let Some(c) = t.pools.get(usize::from(pool)).map(|r| r.cfg) else {
            return Vec::new();
        };
        if !c.valid {
            return Vec::new();
        }
        (c.base..c.base + c.n)
            .map(|s| t.members1[usize::from(s)].node)
            .collect()
    }
}

impl<R: Regs> Leaf for Switch<R> {
    type State = Scheduler;
    type Regs = R;
    fn regs(&mut self) -> &mut R {
        &mut self.regs
    }
    fn check_leaf(&self) -> Result<()> {
        if self.ident.role != horus_model::config::Role::Leaf {
            return Err(DriverError::Refused(
                "the controller manages the workers of a leaf; this switch is a spine".into(),
            ));
        }
        Ok(())
    }
    fn state(&mut self, extra: &[u16]) -> Result<Scheduler> {
        Switch::state(self, extra)
    }
    fn changes(&mut self) -> Result<u32> {
        Ok(self
            .regs
            .read(regmap::fields::CONTROL_PASSES.byte_address() as u32)?)
    }
    fn control(&mut self, state: &mut Scheduler, op: ControlOp) -> Result<()> {
        Switch::control(self, state, op)
    }
    fn counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        Switch::counters(self)
    }
    fn status(&mut self) -> Result<u32> {
        Switch::status(self)
    }
}

/// The JBSQ leaf's membership: the driver's mirror and the switch's ID.
#[derive(Clone, Debug)]
pub struct JbsqState {
    pub leaf: JbsqLeaf,
    pub switch_id: u16,
}

impl LeafState for JbsqState {
    fn switch_id(&self) -> u16 {
        self.switch_id
    }
    fn pools(&self) -> u16 {
        self.leaf.sizes().pools
    }
    fn nodes(&self) -> u16 {
        self.leaf.sizes().nodes
    }
    fn held(&self, id: u16) -> Option<(u16, NodeAddr)> {
        let t = self.leaf.tables();
        let n = t.node_cfg.get(usize::from(id)).filter(|n| n.active)?;
        let a = t.node_addr[usize::from(id)]?;
        Some((n.pool, a.addr))
    }
    fn is_free(&self, id: u16) -> bool {
        self.leaf
            .tables()
            .node_cfg
            .get(usize::from(id))
            .is_some_and(|n| !n.active)
    }
    fn has_room(&self, pool: u16) -> bool {
        let t = self.leaf.tables();
        t.pool_cfg
            .get(usize::from(pool))
            .copied()
            .flatten()
            .is_some_and(|p| p.n < p.cfg.capacity)
    }
    fn members(&self, pool: u16) -> Vec<u16> {
        let t = self.leaf.tables();
        let Some(p) = t.pool_cfg.get(usize::from(pool)).copied().flatten() else {
            return Vec::new();
        };
        t.members[usize::from(p.cfg.base)..usize::from(p.cfg.base + p.n)].to_vec()
    }
}

impl<R: Regs> Leaf for JbsqDriver<R> {
    type State = JbsqState;
    type Regs = R;
    fn regs(&mut self) -> &mut R {
        &mut self.regs
    }
    fn check_leaf(&self) -> Result<()> {
        Ok(())
    }
    fn state(&mut self, _extra: &[u16]) -> Result<JbsqState> {
        self.refresh()?;
        let switch_id = self
            .regs
            .read(regmap::fields::SWITCH_ID.byte_address() as u32)? as u16;
        Ok(JbsqState {
            leaf: self.mirror().clone(),
            switch_id,
        })
    }
    fn changes(&mut self) -> Result<u32> {
        self.version()
    }
    fn control(&mut self, state: &mut JbsqState, op: ControlOp) -> Result<()> {
        match op {
            ControlOp::AddNode {
                pool,
                node,
                addr,
                workers: 1,
            } => self.add_node(pool, node, None, addr)?,
            ControlOp::RemoveNode { pool, node } => self.remove_node(pool, node)?,
            op => {
                return Err(DriverError::Refused(format!(
                    "the leaf that holds tasks takes a worker's addition or removal from the \
                     controller, not {op:?}"
                )));
            }
        }
        state.leaf = self.mirror().clone();
        Ok(())
    }
    fn counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        JbsqDriver::counters(self)
    }
    fn status(&mut self) -> Result<u32> {
        JbsqDriver::status(self)
    }
}
