//! Traffic for the co-simulation: a switch configuration and a stream of inputs (frames of every
//! kind, control operations) that follows the scheduler's state, so that most frames name real
//! pools and nodes and hit them back to back.

use std::net::Ipv4Addr;

use horus_model::config::{Config, Role, Sizes};
use horus_model::sched::frame::MAX_FRAME_LEN;
use horus_model::sched::{ControlError, ControlOp, NodeAddr, Params, Scheduler};
use horus_model::wire::{self, Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType};

/// xorshift64: the bench's own generator (the scheduler's is the model's).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn word(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.word() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One input to the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Frame(Vec<u8>),
    /// A frame sent with a `tkeep` the ingress does not accept: `keep` on beat `beat` (a beat
    /// before the last not keeping all its bytes, or a last beat's bytes not a run from byte 0).
    /// The switch drops it as malformed; the model, which sees bytes and no `tkeep`, is given a
    /// one-byte frame in its place, malformed too.
    BadKeep {
        frame: Vec<u8>,
        beat: usize,
        keep: u64,
    },
    Control(ControlOp),
}

/// The `tkeep` of a beat holding `bytes` bytes (at most 64), from byte 0.
pub fn keep_of(bytes: usize) -> u64 {
    if bytes >= 64 {
        u64::MAX
    } else {
        (1u64 << bytes) - 1
    }
}

impl Input {
    /// What the model is given for a frame input (the frame itself, moved).
    pub fn into_model_frame(self) -> Option<Vec<u8>> {
        match self {
            Input::Frame(f) => Some(f),
            Input::BadKeep { mut frame, .. } => {
                frame.truncate(1);
                Some(frame)
            }
            Input::Control(_) => None,
        }
    }
}

/// Pools 0, 1, 2 are configured (regions of 12, 10 and 9 slots: not powers of two); pool IDs
/// 3..7 are not; node IDs of pool `p` are `p, p + 4, p + 8, ...`, half of them added at start.
const POOLS: [(u16, u16); 3] = [(0, 12), (1, 10), (2, 9)];

/// A leaf's pool `p` reports to the spine with ID `SPINE_BASE + p`.
const SPINE_BASE: u16 = 100;

/// A pool's `idle_repair_gap_us`: 0 (a repair on every disagreement) a quarter of the time, else
/// up to 40 us (the bench's clock advances about one microsecond every five cycles).
fn repair_gap(rng: &mut Rng) -> u16 {
    if rng.chance(25) {
        0
    } else {
        1 + rng.below(40) as u16
    }
}

fn node_endpoint(node: u16) -> (MacAddr, Ipv4Addr, u16, u8) {
    let n = node as u8;
    (
        MacAddr([0x02, 0, 0, 0xa0, (node >> 8) as u8, n]),
        Ipv4Addr::new(10, 1, (node >> 8) as u8, n),
        1000 + node,
        n.wrapping_mul(3),
    )
}

/// A configuration of `role` with the given sizes (at least 8 pools and 64 nodes).
pub fn config(role: Role, sizes: Sizes, rng: &mut Rng) -> Config {
    let role_name = match role {
        Role::Leaf => "leaf",
        Role::Spine => "spine",
    };
    let mut s = format!(
        "[switch]\nrole = \"{role_name}\"\nid = 7\nmac = \"02:00:00:00:00:07\"\nip = \"10.0.0.7\"\n\
         pass_through_port = 1\ncontrol_port = 0\nconn_timeout_us = 60\n\
         [sizes]\npools = {}\nnodes = {}\nconn_table = {}\n",
        sizes.pools, sizes.nodes, sizes.conn_table
    );
    if role == Role::Leaf {
        for (i, id) in (SPINE_BASE..SPINE_BASE + 3).enumerate() {
            s += &format!(
                "[[spines]]\nid = {id}\nmac = \"02:00:00:00:01:{i:02x}\"\nip = \"10.0.1.{i}\"\nudp_port = {}\nport = {}\n",
                1234 + i,
                2 + i
            );
        }
    }
    for &(pool, capacity) in &POOLS {
        let link_at = 1 + rng.below(3);
        s += &format!(
            "[[pools]]\nid = {pool}\ncapacity = {capacity}\nidle_link_at = {link_at}\nidle_unlink_at = {}\nreport_delta = {:?}\nidle_repair_gap_us = {}\n",
            rng.below(link_at),
            0.25 * (1 + rng.below(6)) as f64,
            repair_gap(rng)
        );
        if role == Role::Leaf {
            s += &format!(
                "spine = {}\nspine_node = {}\n",
                SPINE_BASE + pool,
                20 + pool
            );
        }
        for k in 0..capacity / 2 {
            let id = pool + 4 * k;
            let (mac, ip, udp, port) = node_endpoint(id);
            s += &format!(
                "[[pools.nodes]]\nid = {id}\nmac = \"{mac}\"\nip = \"{ip}\"\nudp_port = {udp}\nport = {port}\n"
            );
            if role == Role::Spine {
                s += &format!("workers = {}\nleaf = {}\n", 1 + rng.below(32), 200 + id);
            }
        }
    }
    Config::from_toml_str(&s).expect("the bench's configuration is valid")
}

/// A well-formed Horus frame to this switch carrying `header` (and no payload).
pub fn horus_frame(header: HorusHeader) -> Vec<u8> {
    horus_frame_from(
        Endpoint {
            mac: MacAddr([2, 0, 0, 9, 9, 1]),
            ip: Ipv4Addr::new(10, 9, 9, 1),
            udp_port: 40000,
        },
        header,
    )
}

/// The same frame from `src` (a worker announcing itself, keeping alive).
pub fn horus_frame_from(src: Endpoint, header: HorusHeader) -> Vec<u8> {
    let leaf = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 7]),
        ip: Ipv4Addr::new(10, 0, 0, 7),
        udp_port: wire::HORUS_UDP_PORT,
    };
    HorusFrame {
        ip_id: 1,
        ..HorusFrame::new(src, leaf, header, Vec::new())
    }
    .to_bytes()
}

/// What the traffic is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Every packet type, bad IDs, broken and foreign frames, control operations.
    Mixed,
    /// Only tasks for configured pools: the idle lists run dry, every worker is busy, tasks go
    /// by power of two (with resubmissions).
    Busy,
    /// Tasks and as many idle replies (TASK_DONE_IDLE at a leaf, IDLE_SIGNAL at a spine): most
    /// tasks find an idle node.
    Idle,
}

/// The stream of inputs.
pub struct Traffic {
    pub rng: Rng,
    pub mix: Mix,
    role: Role,
    /// The pool and source node of the current burst.
    hot: (u16, u16),
    /// Percent of inputs that are control operations (when one is possible).
    pub control_percent: u64,
    /// Payloads of the usual frames are below this many bytes (24: frames of 60 to 76 bytes, one
    /// or two beats; 1: every frame the 60-byte minimum, one beat).
    pub small_payload: u64,
}

impl Traffic {
    pub fn new(role: Role, seed: u64) -> Traffic {
        Traffic {
            rng: Rng::new(seed),
            mix: Mix::Mixed,
            role,
            hot: (0, 0),
            control_percent: 1,
            small_payload: 24,
        }
    }

    /// The next input, given the scheduler's state (for control operations it accepts).
    pub fn next(&mut self, m: &Scheduler) -> Input {
        if self.mix == Mix::Mixed && self.rng.chance(self.control_percent) && m.in_flight() == 0 {
            if let Some(op) = self.control(m) {
                return Input::Control(op);
            }
        }
        let frame = self.frame();
        if self.mix == Mix::Mixed && self.rng.chance(1) {
            return self.break_keep(frame);
        }
        Input::Frame(frame)
    }

    /// `frame` with one beat's `tkeep` broken: a byte of a full beat not kept, or a hole in (or
    /// a byte past) the last beat's run.
    fn break_keep(&mut self, frame: Vec<u8>) -> Input {
        let beats = frame.len().div_ceil(64).max(1);
        let beat = self.rng.below(beats as u64) as usize;
        let bytes = (frame.len() - 64 * beat).min(64);
        let run = if bytes == 64 {
            u64::MAX
        } else {
            (1u64 << bytes) - 1
        };
        let keep = if beat + 1 < beats {
            run & !(1 << self.rng.below(64))
        } else if bytes >= 2 {
            run & !(1 << self.rng.below(bytes as u64 - 1))
        } else {
            run | 1 << (bytes + 1 + self.rng.below(62 - bytes as u64) as usize)
        };
        Input::BadKeep { frame, beat, keep }
    }

    fn control(&mut self, m: &Scheduler) -> Option<ControlOp> {
        for _ in 0..20 {
            let (pool, _) = POOLS[self.rng.below(3) as usize];
            let node = pool + 4 * self.rng.below(14) as u16;
            let op = match self.rng.below(3) {
                0 => {
                    // Resized in place now and then: from its nodes to a few slots beyond its
                    // region (refused when that meets the next pool's).
                    let c = m.tables().pools[usize::from(pool)].cfg;
                    let low = c.n.max(1);
                    let capacity = low + self.rng.below(u64::from(c.capacity - low) + 3) as u16;
                    ControlOp::SetPoolParams {
                        pool,
                        params: self.params(),
                        capacity,
                    }
                }
                1 => {
                    let (mac, ip, udp_port, port) = node_endpoint(node);
                    ControlOp::AddNode {
                        pool,
                        node,
                        addr: NodeAddr {
                            endpoint: Endpoint { mac, ip, udp_port },
                            port,
                            dst_id: if self.role == Role::Spine {
                                200 + node
                            } else {
                                node
                            },
                        },
                        workers: if self.role == Role::Spine {
                            1 + self.rng.below(32) as u16
                        } else {
                            1
                        },
                    }
                }
                _ => ControlOp::RemoveNode { pool, node },
            };
            let keeps_one = match op {
                ControlOp::RemoveNode { .. } => m.tables().pools[usize::from(pool)].cfg.n > 1,
                _ => true,
            };
            // A removal lock is released by the time the control pass enters (the core waits
            // for empty stages); every other refusal stands.
            let ok = match m.validate(&op) {
                Ok(()) => true,
                Err(ControlError::Locked(_)) => false,
                Err(_) => false,
            };
            if ok && keeps_one {
                return Some(op);
            }
        }
        None
    }

    fn params(&mut self) -> Params {
        let link_at = 1 + self.rng.below(3) as u16;
        Params {
            link_at,
            unlink_at: self.rng.below(u64::from(link_at)) as u16,
            report_delta: horus_model::fixed::Load(1 + self.rng.below(0x2_0000) as u32),
            repair_gap_us: repair_gap(&mut self.rng),
        }
    }

    fn header(&mut self) -> HorusHeader {
        use PacketType::*;
        let r = &mut self.rng;
        if r.chance(30) {
            let pool = if r.chance(90) {
                r.below(3)
            } else {
                3 + r.below(8)
            } as u16;
            self.hot.0 = if r.chance(3) {
                8 + r.below(1000) as u16
            } else {
                pool
            };
            self.hot.1 = if r.chance(90) {
                self.hot.0 % 4 + 4 * r.below(14) as u16
            } else {
                r.below(100) as u16
            };
        }
        let (mut pool, mut src) = self.hot;
        let x = r.below(100);
        let t = match (self.mix, self.role) {
            (Mix::Busy, _) => NewTask,
            (Mix::Idle, Role::Leaf) => [NewTask, TaskDoneIdle][r.below(2) as usize],
            (Mix::Idle, Role::Spine) => [NewTask, IdleSignal][r.below(2) as usize],
            (Mix::Mixed, role) => match role {
                Role::Leaf => match x {
                    0..35 => NewTask,
                    35..40 => NewTaskRandom,
                    40..50 => TaskContinuation,
                    50..72 => TaskDone,
                    72..92 => TaskDoneIdle,
                    _ => PacketType::ALL[r.below(17) as usize],
                },
                Role::Spine => match x {
                    0..35 => NewTask,
                    35..40 => NewTaskRandom,
                    40..48 => TaskContinuation,
                    48..62 => IdleSignal,
                    62..74 => IdleRemove,
                    74..90 => [QueueSignal, QueueSignalInit][r.below(2) as usize],
                    _ => PacketType::ALL[r.below(17) as usize],
                },
            },
        };
        if self.mix != Mix::Mixed {
            pool %= 3;
            src = pool + 4 * r.below(u64::from(POOLS[usize::from(pool)].1 / 2)) as u16;
        }
        if t == NewTask && self.role == Role::Leaf && r.chance(30) {
            // From the pool's spine, whose idle-selected flag (`qlen`) may disagree with the
            // leaf: the §A.3 repair and its gap.
            src = SPINE_BASE + pool;
        }
        let qlen = match t {
            TaskDoneIdle => 0,
            QueueSignal | QueueSignalInit => r.below(8) as u16,
            _ => r.below(4) as u16,
        };
        let seq_num = match t {
            QueueSignal | QueueSignalInit => r.word() as u16,
            _ => r.below(6) as u16,
        };
        HorusHeader {
            pkt_type: t,
            more_packets: matches!(t, NewTask | NewTaskRandom | TaskContinuation) && r.chance(40),
            pool_id: pool,
            src_id: src,
            dst_id: r.word() as u16,
            qlen,
            seq_num,
        }
    }

    /// A frame: mostly a well-formed Horus frame; sometimes not Horus, broken, or too long.
    pub fn frame(&mut self) -> Vec<u8> {
        let header = self.header();
        let r = &mut self.rng;
        let payload_len = match if self.mix == Mix::Mixed {
            r.below(100)
        } else {
            0
        } {
            0..70 => r.below(self.small_payload),
            70..95 => r.below(300),
            _ => r.below(MAX_FRAME_LEN as u64 + 80 - 53),
        } as usize;
        let mut f = HorusFrame {
            src: Endpoint {
                mac: MacAddr([2, 0, 0, 9, 9, r.below(4) as u8]),
                ip: Ipv4Addr::new(10, 9, 9, r.below(250) as u8),
                udp_port: 40000 + r.below(100) as u16,
            },
            dst: Endpoint {
                mac: MacAddr([2, 0, 0, 0, 0, 7]),
                ip: Ipv4Addr::new(10, 0, 0, 7),
                udp_port: wire::HORUS_UDP_PORT,
            },
            ip_id: r.word() as u16,
            ttl: 1 + r.below(255) as u8,
            dscp_ecn: r.below(256) as u8,
            dont_fragment: r.chance(50),
            udp_checksum: 0,
            header,
            payload: (0..payload_len).map(|i| (i as u8) ^ 0x5a).collect(),
        };
        if r.chance(50) {
            f.udp_checksum = f.udp_checksum_full();
        }
        let mut bytes = f.to_bytes();
        if self.mix != Mix::Mixed {
            return bytes;
        }
        match r.below(100) {
            // Not Horus: another ethertype, another UDP port.
            0 => bytes[12..14].copy_from_slice(&0x0806u16.to_be_bytes()),
            1 => {
                bytes[36..38].copy_from_slice(&80u16.to_be_bytes());
            }
            // Broken: IPv4 checksum, an unknown type, a cut inside the header, a runt.
            2 => bytes[24] ^= 0x5a,
            3 => bytes[wire::HORUS_OFFSET] = 0x40 | (r.below(0x3f) as u8),
            4 => bytes.truncate(wire::HORUS_OFFSET + r.below(wire::HEADER_LEN as u64) as usize),
            5 => bytes.truncate(1 + r.below(13) as usize),
            _ => {}
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every broken `tkeep` is one the ingress refuses: a beat before the last not all ones, a
    /// last beat not a run from byte 0; and the model's stand-in is a runt.
    #[test]
    fn broken_keeps_are_never_acceptable() {
        let mut t = Traffic::new(Role::Leaf, 7);
        let (mut early, mut last) = (0, 0);
        for len in (1..=200).chain([64, 128, 2048, 2100]) {
            for _ in 0..20 {
                let frame: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let Input::BadKeep { frame, beat, keep } = t.break_keep(frame.clone()) else {
                    panic!("not a broken keep");
                };
                let beats = frame.len().div_ceil(64);
                if beat + 1 < beats {
                    assert_ne!(keep, u64::MAX, "len {len}, beat {beat}");
                    early += 1;
                } else {
                    assert_ne!(keep & keep.wrapping_add(1), 0, "len {len}: {keep:#x}");
                    last += 1;
                }
                let input = Input::BadKeep { frame, beat, keep };
                assert_eq!(input.into_model_frame().map(|f| f.len()), Some(1));
            }
        }
        assert!(early > 100 && last > 100, "{early} early, {last} last");
    }
}
