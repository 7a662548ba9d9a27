//! The scheduler at the level of frames: what a switch port sees. This is what the co-simulation
//! compares with the hardware, byte for byte.
//!
//! - A frame that is not a Horus candidate (not IPv4, IPv4 with options or fragmented, not UDP, not
//!   UDP port 1234, or too short to see its UDP header) leaves unchanged through the pass-through
//!   port.
//! - An IPv4 frame with a bad header checksum is dropped and counted ([`DropReason::BadChecksum`]),
//!   Horus or not, as a router drops it.
//! - A frame to UDP port 1234 the parser rejects is dropped and counted
//!   ([`DropReason::Malformed`]): cut inside the Horus header, inconsistent lengths, an unknown
//!   type, a misplaced flag; so is a runt Ethernet frame.
//! - A frame longer than [`MAX_FRAME_LEN`] (what one slot of the hardware's frame buffer holds) is
//!   dropped and counted as malformed, whatever it carries.
//! - Otherwise the header goes through [`Scheduler`]. A forwarded task is rewritten with
//!   [`wire::rewrite`] towards its node; a signal is the mirrored frame turned into a message with
//!   [`wire::signal_frame`]. When a pass emits both, the forwarded frame leaves first.

use super::{
    ControlError, ControlOp, DropReason, Emit, Packet, PassResult, Resubmit, Scheduler, Target,
};
use crate::config::Config;
use crate::wire::{self, Endpoint, HorusFrame, HorusHeader, Layer, WireError};

/// The longest frame the switch takes, in bytes: one slot of the hardware's frame buffer (32
/// beats of 64 bytes). Longer frames are dropped and counted as [`DropReason::Malformed`].
pub const MAX_FRAME_LEN: usize = 2048;

/// What the switch does with a frame the parser rejects: `None`, pass it through unchanged (not a
/// Horus candidate); `Some(reason)`, drop and count it. The one rule for the model and the
/// hardware parser.
pub fn rejected_frame_verdict(e: &WireError) -> Option<DropReason> {
    match e {
        WireError::Truncated {
            layer: Layer::Ethernet | Layer::Horus,
            ..
        } => Some(DropReason::Malformed),
        WireError::Truncated { .. }
        | WireError::NotIpv4 { .. }
        | WireError::NotIpv4Version { .. }
        | WireError::Ipv4Options { .. }
        | WireError::Fragmented { .. }
        | WireError::NotUdp { .. }
        | WireError::WrongPort { .. } => None,
        WireError::Ipv4Checksum { .. } => Some(DropReason::BadChecksum),
        _ => Some(DropReason::Malformed),
    }
}

/// A frame entering the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFrame {
    pub frame: Vec<u8>,
    /// Microseconds, wrapping (connection-table timeouts).
    pub time_us: u32,
}

/// A frame leaving the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFrame {
    pub port: u8,
    pub frame: Vec<u8>,
}

/// A resubmitted pass with the frame it carries (empty for a control pass).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameResubmit {
    pub frame: Vec<u8>,
    pub resubmit: Resubmit,
}

/// A pass at the frame level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FramePass {
    Frame(InFrame),
    Resubmit(FrameResubmit),
    Control(ControlOp),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameResult {
    /// In the order they leave.
    pub outputs: Vec<OutFrame>,
    pub resubmit: Option<FrameResubmit>,
    /// The header-level result (decision, drop reason); `None` for frames the scheduler never saw.
    pub pass: Option<PassResult>,
    /// The parser's verdict on a frame that was dropped before the scheduler.
    pub parse_error: Option<WireError>,
}

/// A spine as a leaf reaches it (the hardware's spine table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpineAddr {
    pub id: u16,
    pub endpoint: Endpoint,
    pub port: u8,
}

/// The switch's own registers: its identity and addresses, its fixed ports, its spines (the
/// hardware's `SWITCH_*`, `*_PORT` and `SPINE*` registers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchRegisters {
    pub id: u16,
    pub me: Endpoint,
    pub pass_through_port: u8,
    pub control_port: u8,
    pub spines: Vec<SpineAddr>,
}

/// Where a switch's frames go: its own address, its fixed ports and its spines (the hardware's
/// `SWITCH_*`, `*_PORT` and `SPINE*` registers), and how what a pass emits becomes a frame. Both
/// leaves' frame switches ([`FrameSwitch`], the JBSQ leaf's `JbsqFrameSwitch`) send through it.
#[derive(Clone, Debug)]
pub struct Ports {
    me: Endpoint,
    pass_through_port: u8,
    control_port: u8,
    spines: Vec<SpineAddr>,
}

impl Ports {
    /// The switch's address, ports and spines as `cfg` gives them.
    pub fn from_config(cfg: &Config) -> Ports {
        let s = &cfg.switch;
        Ports {
            me: Endpoint {
                mac: s.mac,
                ip: s.ip,
                udp_port: s.udp_port,
            },
            pass_through_port: s.pass_through_port,
            control_port: s.control_port,
            spines: cfg
                .spines
                .iter()
                .map(|l| SpineAddr {
                    id: l.id,
                    endpoint: Endpoint {
                        mac: l.mac,
                        ip: l.ip,
                        udp_port: l.udp_port,
                    },
                    port: l.port,
                })
                .collect(),
        }
    }

    /// Sets them from the switch's registers (a host writing them while the switch runs).
    pub fn set(&mut self, r: SwitchRegisters) {
        self.me = r.me;
        self.pass_through_port = r.pass_through_port;
        self.control_port = r.control_port;
        self.spines = r.spines;
    }

    pub fn pass_through_port(&self) -> u8 {
        self.pass_through_port
    }

    /// The frame `e` sends: `frame` unchanged, rewritten towards a node, or (`mirror`) turned
    /// into a message to a spine (from the template when the pass has no frame). `None` for a
    /// spine the switch does not know.
    pub fn out_frame(&self, frame: &[u8], e: Emit, mirror: bool) -> Option<OutFrame> {
        match e.target {
            Target::PassThrough => Some(OutFrame {
                port: self.pass_through_port,
                frame: frame.to_vec(),
            }),
            Target::Control => Some(OutFrame {
                port: self.control_port,
                frame: frame.to_vec(),
            }),
            Target::Node { addr, .. } => {
                // Only parsed frames reach a node, so the rewrite cannot fail.
                wire::rewrite(frame, &addr.endpoint, &e.header)
                    .ok()
                    .map(|f| OutFrame {
                        port: addr.port,
                        frame: f,
                    })
            }
            Target::Spine(id) => {
                debug_assert!(mirror);
                let spine = self.spines.iter().find(|s| s.id == id)?;
                let template;
                let original = if frame.is_empty() {
                    template = self.template(&spine.endpoint, &e.header);
                    &template[..]
                } else {
                    frame
                };
                wire::signal_frame(original, &self.me, &spine.endpoint, &e.header)
                    .ok()
                    .map(|f| OutFrame {
                        port: spine.port,
                        frame: f,
                    })
            }
        }
    }

    /// The frame a control pass mirrors when it has none of its own. It is addressed to the Horus
    /// port whatever the spine listens on: `signal_frame` takes only Horus frames, and writes the
    /// spine's own address and port over it.
    fn template(&self, dst: &Endpoint, header: &HorusHeader) -> Vec<u8> {
        HorusFrame::new(
            self.me,
            Endpoint {
                udp_port: wire::HORUS_UDP_PORT,
                ..*dst
            },
            *header,
            Vec::new(),
        )
        .to_bytes()
    }
}

/// A [`Scheduler`] with its ports and addresses.
#[derive(Clone, Debug)]
pub struct FrameSwitch {
    sched: Scheduler,
    ports: Ports,
}

impl FrameSwitch {
    /// A switch configured from `cfg`, and the frames its configuration passes emitted.
    pub fn from_config(
        cfg: &Config,
        seed: u64,
    ) -> Result<(FrameSwitch, Vec<OutFrame>), ControlError> {
        Self::from_config_with(cfg, seed, super::Profile::FPGA)
    }

    /// [`FrameSwitch::from_config`] with `profile`'s arithmetic.
    pub fn from_config_with(
        cfg: &Config,
        seed: u64,
        profile: super::Profile,
    ) -> Result<(FrameSwitch, Vec<OutFrame>), ControlError> {
        let s = &cfg.switch;
        let mut sched = Scheduler::new(s.role, s.id, cfg.sizes, s.conn_timeout_us, seed);
        sched.set_profile(profile);
        let mut sw = FrameSwitch {
            sched,
            ports: Ports::from_config(cfg),
        };
        let mut out = Vec::new();
        for op in super::control::config_ops(cfg) {
            out.extend(sw.process(FramePass::Control(op))?.outputs);
        }
        Ok((sw, out))
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The scheduler, for a host that rebuilds or inspects its tables.
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.sched
    }

    /// Sets the switch's own registers (a host writing them while the switch runs).
    pub fn set_registers(&mut self, r: SwitchRegisters) {
        self.sched.set_id(r.id);
        self.ports.set(r);
    }

    /// A control pass with the values the host computed ([`Scheduler::control_with`]); the
    /// frames it emits.
    pub fn control_with(
        &mut self,
        op: ControlOp,
        host: super::HostValues,
    ) -> Result<FrameResult, ControlError> {
        let r = self.sched.control_with(op, host)?;
        Ok(self.emit(&[], r))
    }

    pub fn process(&mut self, pass: FramePass) -> Result<FrameResult, ControlError> {
        Ok(match pass {
            FramePass::Frame(f) => self.frame(f),
            FramePass::Resubmit(FrameResubmit { frame, resubmit }) => {
                let r = self.sched.resubmit(resubmit);
                self.emit(&frame, r)
            }
            FramePass::Control(op) => {
                let r = self.sched.control(op)?;
                self.emit(&[], r)
            }
        })
    }

    fn frame(&mut self, f: InFrame) -> FrameResult {
        if f.frame.len() > MAX_FRAME_LEN {
            self.sched.count_frame_drop(DropReason::Malformed);
            return FrameResult::default();
        }
        let parsed = wire::parse_frame(&f.frame);
        let header = match parsed {
            Ok(HorusFrame { header, .. }) => header,
            Err(e) => {
                let drop = rejected_frame_verdict(&e);
                return self.not_scheduled(f.frame, drop, e);
            }
        };
        let r = self.sched.packet(Packet {
            header,
            time_us: f.time_us,
        });
        self.emit(&f.frame, r)
    }

    /// A frame the parser did not hand to the scheduler: passed through, or dropped and counted.
    fn not_scheduled(
        &mut self,
        frame: Vec<u8>,
        drop: Option<DropReason>,
        e: WireError,
    ) -> FrameResult {
        let mut res = FrameResult::default();
        match drop {
            Some(reason) => {
                self.sched.count_frame_drop(reason);
                res.parse_error = Some(e);
            }
            None => {
                self.sched.count_pass_through();
                res.outputs.push(OutFrame {
                    port: self.ports.pass_through_port,
                    frame,
                });
            }
        }
        res
    }

    fn emit(&self, frame: &[u8], r: PassResult) -> FrameResult {
        let mut outputs = Vec::with_capacity(2);
        if let Some(e) = r.forward {
            outputs.extend(self.ports.out_frame(frame, e, false));
        }
        if let Some((_, e)) = r.signal {
            outputs.extend(self.ports.out_frame(frame, e, true));
        }
        FrameResult {
            outputs,
            resubmit: r.resubmit.map(|resubmit| FrameResubmit {
                frame: frame.to_vec(),
                resubmit,
            }),
            pass: Some(r),
            parse_error: None,
        }
    }
}

impl Scheduler {
    /// A frame dropped by the parser still counts as a pass.
    pub(crate) fn count_frame_drop(&mut self, reason: DropReason) {
        self.begin();
        self.counters.drop(reason);
    }

    pub(crate) fn count_pass_through(&mut self) {
        self.begin();
        self.counters.passed_through += 1;
    }
}
