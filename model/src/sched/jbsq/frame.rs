//! The JBSQ leaf at the level of frames: what its switch ports see, and what a co-simulation of
//! its hardware compares byte for byte.
//!
//! Frames the parser rejects are the paper leaf's ([`rejected_frame_verdict`]: passed through
//! unchanged, or dropped and counted), as is a frame longer than [`MAX_FRAME_LEN`]. A parsed
//! frame's header goes through [`JbsqLeaf::packet`] with the frame's length. A task the leaf
//! holds keeps its whole frame in its buffer slot (the hardware's frame store beside `taskBuf`);
//! a release sends that frame, rewritten towards the replying worker. A pass's frames leave in
//! one order: its own frame (a task or continuation rewritten towards its worker, a reply
//! unchanged to the pass-through port, a control frame to the control port), then the task it
//! released, then its message to the spine, the pass's own frame mirrored (a control pass's from
//! the template). A second pass carries its first pass's frame: a retry's task, or the reply
//! whose place returns (a message it sends mirrors the reply).

use super::{
    JbsqControlError, JbsqLeaf, JbsqPool, JbsqResubmit, JbsqResult, Placement, PoolSettings,
};
use crate::config::{Config, ConfigError};
use crate::sched::counters::Signal;
use crate::sched::frame::{
    InFrame, MAX_FRAME_LEN, OutFrame, Ports, SwitchRegisters, rejected_frame_verdict,
};
use crate::sched::state::NodeAddr;
use crate::sched::{DropReason, Emit, Target};
use crate::wire::{self, HorusHeader};

/// A second pass with the frame it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JbsqFrameResubmit {
    pub frame: Vec<u8>,
    pub resubmit: JbsqResubmit,
}

/// A pass at the frame level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JbsqFramePass {
    Frame(InFrame),
    Resubmit(JbsqFrameResubmit),
}

/// What one pass sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JbsqFrameResult {
    /// In the order they leave.
    pub outputs: Vec<OutFrame>,
    pub resubmit: Option<JbsqFrameResubmit>,
    /// The leaf's pass; `None` for a frame the parser did not hand to it.
    pub pass: Option<JbsqResult>,
    /// Why the parser dropped the frame, if it did.
    pub drop: Option<DropReason>,
}

/// The frames the parser handled without the leaf.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JbsqFrameCounters {
    /// Not Horus frames: out of the pass-through port unchanged.
    pub passed_through: u64,
    /// Dropped as malformed (a Horus frame the parser rejects, a runt, a frame over
    /// [`MAX_FRAME_LEN`]).
    pub malformed: u64,
    /// Dropped for a bad IPv4 header checksum.
    pub bad_checksum: u64,
}

/// A JBSQ leaf with its ports, addresses and frame store.
#[derive(Clone, Debug)]
pub struct JbsqFrameSwitch {
    leaf: JbsqLeaf,
    ports: Ports,
    /// The frame of each buffer slot's held task (the frame store), beside the leaf's `taskBuf`.
    store: Vec<Option<Vec<u8>>>,
    counters: JbsqFrameCounters,
}

impl JbsqFrameSwitch {
    /// The leaf `cfg` describes ([`JbsqLeaf::from_config`]) with its ports, and the frames its
    /// configuration sent (a pool's first worker links the rack at its spine).
    pub fn from_config(cfg: &Config, seed: u64) -> Result<(Self, Vec<OutFrame>), ConfigError> {
        let (leaf, signals) = JbsqLeaf::from_config(cfg, seed)?;
        let sw = JbsqFrameSwitch::new(leaf, Ports::from_config(cfg));
        let out = signals
            .into_iter()
            .filter_map(|s| sw.signal(&[], s))
            .collect();
        Ok((sw, out))
    }

    /// `leaf` behind `ports`, holding no task (a leaf that held tasks has no frames for them).
    pub fn new(leaf: JbsqLeaf, ports: Ports) -> Self {
        let slots = leaf.sizes().buffer_slots as usize;
        JbsqFrameSwitch {
            leaf,
            ports,
            store: vec![None; slots],
            counters: JbsqFrameCounters::default(),
        }
    }

    pub fn leaf(&self) -> &JbsqLeaf {
        &self.leaf
    }

    pub fn counters(&self) -> &JbsqFrameCounters {
        &self.counters
    }

    /// The frame held in buffer slot `slot`, if a task is held there.
    pub fn held_frame(&self, slot: u32) -> Option<&[u8]> {
        let held = self.leaf.tables().buf.get(slot as usize)?.is_some();
        self.store[slot as usize].as_deref().filter(|_| held)
    }

    /// Sets the switch's own registers (a host writing them while the switch runs).
    pub fn set_registers(&mut self, r: SwitchRegisters) {
        self.ports.set(r);
    }

    /// [`JbsqLeaf::configure_pool`]: the pass sends nothing.
    pub fn configure_pool(&mut self, pool: u16, cfg: JbsqPool) -> Result<(), JbsqControlError> {
        self.leaf.configure_pool(pool, cfg)
    }

    /// [`JbsqLeaf::add_node_at`], and the message its passes sent, if any (from the template).
    pub fn add_node(
        &mut self,
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
        addr: NodeAddr,
    ) -> Result<Vec<OutFrame>, JbsqControlError> {
        let s = self.leaf.add_node_at(pool, node, k, tasks, addr)?;
        Ok(s.and_then(|s| self.signal(&[], s)).into_iter().collect())
    }

    /// [`JbsqLeaf::set_bound`], and the message its place passes sent, if any.
    pub fn set_bound(
        &mut self,
        pool: u16,
        node: u16,
        k: u8,
    ) -> Result<Vec<OutFrame>, JbsqControlError> {
        let s = self.leaf.set_bound(pool, node, k)?;
        Ok(s.and_then(|s| self.signal(&[], s)).into_iter().collect())
    }

    /// [`JbsqLeaf::set_pool_params`]: the pass sends nothing.
    pub fn set_pool_params(&mut self, pool: u16, s: PoolSettings) -> Result<(), JbsqControlError> {
        self.leaf.set_pool_params(pool, s)
    }

    /// [`JbsqLeaf::move_buffer`]: the pass sends nothing.
    pub fn move_buffer(
        &mut self,
        pool: u16,
        queue_base: u32,
        queue_slots: u32,
    ) -> Result<u32, JbsqControlError> {
        self.leaf.move_buffer(pool, queue_base, queue_slots)
    }

    /// [`JbsqLeaf::remove_node`]: the pass sends nothing.
    pub fn remove_node(&mut self, pool: u16, node: u16) -> Result<(), JbsqControlError> {
        self.leaf.remove_node(pool, node)
    }

    pub fn process(&mut self, pass: JbsqFramePass) -> JbsqFrameResult {
        match pass {
            JbsqFramePass::Frame(f) => self.frame(f),
            JbsqFramePass::Resubmit(JbsqFrameResubmit { frame, resubmit }) => {
                let r = self.leaf.resubmit(resubmit);
                self.emit(frame, r)
            }
        }
    }

    fn frame(&mut self, f: InFrame) -> JbsqFrameResult {
        let mut res = JbsqFrameResult::default();
        if f.frame.len() > MAX_FRAME_LEN {
            self.counters.malformed += 1;
            res.drop = Some(DropReason::Malformed);
            return res;
        }
        let header = match wire::parse_frame(&f.frame) {
            Ok(parsed) => parsed.header,
            Err(e) => {
                match rejected_frame_verdict(&e) {
                    Some(reason) => {
                        match reason {
                            DropReason::BadChecksum => self.counters.bad_checksum += 1,
                            _ => self.counters.malformed += 1,
                        }
                        res.drop = Some(reason);
                    }
                    None => {
                        self.counters.passed_through += 1;
                        res.outputs.push(OutFrame {
                            port: self.ports.pass_through_port(),
                            frame: f.frame,
                        });
                    }
                }
                return res;
            }
        };
        // A frame is at most MAX_FRAME_LEN (2,048) bytes here.
        let r = self.leaf.packet(header, f.frame.len() as u16, f.time_us);
        self.emit(f.frame, r)
    }

    fn emit(&mut self, frame: Vec<u8>, r: JbsqResult) -> JbsqFrameResult {
        let mut outputs = Vec::with_capacity(3);
        if let Some(e) = r.forward {
            outputs.extend(self.ports.out_frame(&frame, e, false));
        }
        if let (Some(Placement::Held { .. }), Some(slot)) = (r.placement, r.slot) {
            self.store[slot as usize] = Some(frame.clone());
        }
        if let (Some(rel), Some(slot)) = (r.release, r.slot) {
            let held = self.store[slot as usize]
                .take()
                .expect("a held task's slot holds its frame");
            let e = Emit {
                target: Target::Node {
                    node: rel.node,
                    addr: rel.addr,
                },
                header: rel.task.header,
            };
            outputs.extend(self.ports.out_frame(&held, e, false));
        }
        if let Some(s) = r.signal {
            outputs.extend(self.signal(&frame, s));
        }
        JbsqFrameResult {
            outputs,
            resubmit: r
                .resubmit
                .map(|resubmit| JbsqFrameResubmit { frame, resubmit }),
            pass: Some(r),
            drop: None,
        }
    }

    /// The message a pass sends, mirroring `frame` (the template when it is empty).
    fn signal(&self, frame: &[u8], (_, header): (Signal, HorusHeader)) -> Option<OutFrame> {
        let e = Emit {
            target: Target::Spine(header.dst_id),
            header,
        };
        self.ports.out_frame(frame, e, true)
    }
}
