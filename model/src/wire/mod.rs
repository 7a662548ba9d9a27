//! The Horus wire format: Ethernet II / IPv4 / UDP port 1234 / the 11-byte Horus header / payload.
//!
//! This module is the single source of truth for the bytes on the wire. The reference scheduler,
//! the FPGA pipeline and the simulator all encode and decode frames through it (or are checked
//! against it), so every offset, flag and check below is part of the specification.
//!
//! # Frame layout
//!
//! ```text
//!  frame offset
//!  0              14               34         42              53                 14 + total_len
//!  +--------------+----------------+----------+---------------+------------------+-----------+
//!  | Ethernet II  | IPv4, IHL = 5  | UDP      | Horus header  | payload          | padding   |
//!  | 14 bytes     | 20 bytes       | 8 bytes  | 11 bytes      | 0.. bytes        | (ignored) |
//!  +--------------+----------------+----------+---------------+------------------+-----------+
//!                                  |<------------ UDP length = total_len - 20 ---->|
//! ```
//!
//! Frames we build are zero-padded to [`MIN_FRAME_LEN`] (60 bytes, the Ethernet minimum without
//! the FCS). The FCS is never part of the bytes handled here.
//!
//! # Horus header
//!
//! Eleven bytes, all multi-byte fields in network byte order (big endian), offsets counted from
//! the start of the UDP payload (add [`HORUS_OFFSET`] = 42 for the frame offset):
//!
//! ```text
//!  offset 0        1        2        3        4        5        6        7        8        9        10
//!       +--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+
//!       |pkt_type|     pool_id     |     src_id      |     dst_id      |      qlen       |     seq_num     |
//!       +--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+--------+
//!  bits      8            16                16                16                16                16
//!
//!  pkt_type byte:
//!         7   6   5   4   3   2   1   0
//!       +---+---------------------------+
//!       | M |  type code (PacketType)   |    M = MORE_PACKETS_FLAG (0x80)
//!       +---+---------------------------+
//! ```
//!
//! Bit 7 of `pkt_type` is our multi-packet extension: set means "more packets of this task
//! follow" (the paper's `isLastPacket = 0`). A single-packet task leaves it clear, so its header
//! is byte for byte the public 11-byte Horus format. The flag is only valid on
//! [`PacketType::NewTask`], [`PacketType::NewTaskRandom`] and [`PacketType::TaskContinuation`].
//!
//! # Parsing rules
//!
//! [`parse_frame`] checks, in this order, and reports the first failure as a distinct
//! [`WireError`]:
//!
//! 1. at least 14 bytes ([`WireError::Truncated`] with [`Layer::Ethernet`]);
//! 2. ethertype 0x0800 ([`WireError::NotIpv4`]; VLAN tags are not parsed, so a tagged frame
//!    fails here with ethertype 0x8100);
//! 3. at least 34 bytes (`Truncated`, [`Layer::Ipv4`]);
//! 4. IP version 4 ([`WireError::NotIpv4Version`]) and IHL 5, i.e. no options
//!    ([`WireError::Ipv4Options`]);
//! 5. IPv4 header checksum equal to the one computed here ([`WireError::Ipv4Checksum`]);
//! 6. not a fragment: MF clear and fragment offset 0 ([`WireError::Fragmented`]);
//! 7. protocol 17 ([`WireError::NotUdp`]);
//! 8. at least 42 bytes (`Truncated`, [`Layer::Udp`]);
//! 9. UDP destination port [`HORUS_UDP_PORT`] ([`WireError::WrongPort`]);
//! 10. at least 53 bytes (`Truncated`, [`Layer::Horus`]);
//! 11. lengths: IPv4 total length fits in the frame ([`WireError::Ipv4LengthExceedsFrame`]),
//!     UDP length at least 8 + 11 ([`WireError::UdpLengthTooShort`]), UDP length equal to the
//!     IPv4 total length minus 20 ([`WireError::UdpLengthMismatch`]);
//! 12. the Horus header: known type code ([`WireError::UnknownType`]) and the
//!     `MORE_PACKETS` flag only on task types ([`WireError::FlagNotAllowed`]).
//!
//! Bytes after the IPv4 total length (Ethernet padding) are ignored. Frames shorter than
//! [`MIN_FRAME_LEN`] are accepted when their contents fit (e.g. captures without padding).
//! The IPv4 reserved flag bit, the TTL, the addresses and the UDP source port are not checked.
//!
//! The UDP checksum is carried ([`HorusFrame::udp_checksum`]) but **not verified**: the FPGA
//! parser only sees the first 64-byte beat of a frame, so it cannot check a checksum that covers
//! the whole payload, and over IPv4 a UDP checksum of 0 legitimately means "no checksum". The
//! model must accept exactly what the hardware accepts.
//!
//! Nothing in this module panics on any input bytes; the only documented panic is
//! [`HorusHeader::write`] into a buffer shorter than [`HEADER_LEN`].

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use etherparse::err::ipv4::{HeaderError as EpIpv4HeaderError, HeaderSliceError as EpIpv4Error};
use etherparse::{EtherType, Ethernet2Header, Ipv4HeaderSlice, UdpHeader};

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

/// Length of the Horus header in bytes.
pub const HEADER_LEN: usize = 11;
/// Offset of `pkt_type` (type code and `MORE_PACKETS` flag) within the Horus header.
pub const PKT_TYPE_OFFSET: usize = 0;
/// Offset of `pool_id` (16 bits, big endian) within the Horus header.
pub const POOL_ID_OFFSET: usize = 1;
/// Offset of `src_id` (16 bits, big endian) within the Horus header.
pub const SRC_ID_OFFSET: usize = 3;
/// Offset of `dst_id` (16 bits, big endian) within the Horus header.
pub const DST_ID_OFFSET: usize = 5;
/// Offset of `qlen` (16 bits, big endian) within the Horus header.
pub const QLEN_OFFSET: usize = 7;
/// Offset of `seq_num` (16 bits, big endian) within the Horus header.
pub const SEQ_NUM_OFFSET: usize = 9;

/// Bit 7 of the `pkt_type` byte: more packets of this task follow (paper: `isLastPacket = 0`).
pub const MORE_PACKETS_FLAG: u8 = 0x80;
/// Bits 6..0 of the `pkt_type` byte: the [`PacketType`] code.
pub const TYPE_CODE_MASK: u8 = 0x7f;

/// UDP destination port of every Horus frame.
pub const HORUS_UDP_PORT: u16 = 1234;
/// Ethertype of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IP protocol number of UDP.
pub const IP_PROTOCOL_UDP: u8 = 17;

/// Length of the Ethernet II header (no VLAN tag, no FCS).
pub const ETH_HEADER_LEN: usize = 14;
/// Length of the IPv4 header without options (IHL = 5).
pub const IPV4_HEADER_LEN: usize = 20;
/// Length of the UDP header.
pub const UDP_HEADER_LEN: usize = 8;

/// Frame offset of the IPv4 header.
pub const IPV4_OFFSET: usize = ETH_HEADER_LEN;
/// Frame offset of the UDP header.
pub const UDP_OFFSET: usize = IPV4_OFFSET + IPV4_HEADER_LEN;
/// Frame offset of the Horus header: 14 + 20 + 8 = 42.
pub const HORUS_OFFSET: usize = UDP_OFFSET + UDP_HEADER_LEN;
/// Frame offset of the payload, right after the Horus header: 53.
pub const PAYLOAD_OFFSET: usize = HORUS_OFFSET + HEADER_LEN;
/// Minimum Ethernet frame length without the FCS; frames we build are zero-padded to it.
pub const MIN_FRAME_LEN: usize = 60;

/// Smallest valid UDP length: UDP header plus Horus header (19).
pub const MIN_UDP_LEN: u16 = (UDP_HEADER_LEN + HEADER_LEN) as u16;
/// Smallest valid IPv4 total length: IPv4 + UDP + Horus headers (39).
pub const MIN_IPV4_TOTAL_LEN: u16 = (IPV4_HEADER_LEN + UDP_HEADER_LEN + HEADER_LEN) as u16;
/// Largest payload that fits in an IPv4 packet behind the three headers: 65535 - 39 = 65496.
pub const MAX_PAYLOAD_LEN: usize = u16::MAX as usize - MIN_IPV4_TOTAL_LEN as usize;

// Frame offsets of individual fields (private: the public contract is the layer offsets above).
const ETH_DST: usize = 0;
const IPV4_CHECKSUM: usize = IPV4_OFFSET + 10;
const IPV4_DST: usize = IPV4_OFFSET + 16;
const UDP_DST_PORT: usize = UDP_OFFSET + 2;
const UDP_CHECKSUM: usize = UDP_OFFSET + 6;
const IPV4_FLAG_DF: u8 = 0x40;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// The protocol layer a [`WireError::Truncated`] refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Ethernet II header (frame bytes 0..14).
    Ethernet,
    /// IPv4 header (frame bytes 14..34).
    Ipv4,
    /// UDP header (frame bytes 34..42).
    Udp,
    /// Horus header (frame bytes 42..53).
    Horus,
}

impl Layer {
    /// Frame offset at which this layer's header starts.
    pub const fn offset(self) -> usize {
        match self {
            Layer::Ethernet => 0,
            Layer::Ipv4 => IPV4_OFFSET,
            Layer::Udp => UDP_OFFSET,
            Layer::Horus => HORUS_OFFSET,
        }
    }

    /// Frame offset just past this layer's header: the frame length needed to hold it.
    pub const fn end(self) -> usize {
        match self {
            Layer::Ethernet => IPV4_OFFSET,
            Layer::Ipv4 => UDP_OFFSET,
            Layer::Udp => HORUS_OFFSET,
            Layer::Horus => PAYLOAD_OFFSET,
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Ethernet => "Ethernet",
            Layer::Ipv4 => "IPv4",
            Layer::Udp => "UDP",
            Layer::Horus => "Horus",
        })
    }
}

/// Everything that can be wrong with a Horus header or frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends inside the header of `layer`. `needed` and `got` count bytes from the
    /// start of the buffer handed to the parser (the whole frame for [`parse_frame`], the Horus
    /// header alone for [`HorusHeader::parse`]).
    #[error("truncated {layer} header: need at least {needed} bytes, got {got}")]
    Truncated {
        /// Layer whose header does not fit.
        layer: Layer,
        /// Bytes needed to hold that header.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// The 7-bit type code is not a [`PacketType`].
    #[error("unknown Horus packet type code {code} (known codes are 0 to 16)")]
    UnknownType {
        /// The offending type code (the `MORE_PACKETS` flag already removed when parsing).
        code: u8,
    },
    /// The `MORE_PACKETS` flag is set on a type that is not a task packet.
    #[error(
        "MORE_PACKETS flag (0x80) set on a {pkt_type} packet; it is only allowed on NewTask, NewTaskRandom and TaskContinuation"
    )]
    FlagNotAllowed {
        /// Type of the packet carrying the flag.
        pkt_type: PacketType,
    },
    /// `pool_id` is not below the number of pools of this switch.
    #[error(
        "pool_id {pool} out of range: the switch has {limit} pools (valid ids are below {limit})"
    )]
    PoolOutOfRange {
        /// The offending pool id.
        pool: u16,
        /// Number of pools.
        limit: u16,
    },
    /// `src_id` names a node of the receiving switch but is not below its number of nodes.
    #[error(
        "src_id {node} out of range: the switch has {limit} nodes (valid ids are below {limit})"
    )]
    NodeOutOfRange {
        /// The offending node id.
        node: u16,
        /// Number of nodes.
        limit: u16,
    },
    /// The ethertype is not IPv4 (VLAN-tagged frames land here too: tags are not parsed).
    #[error(
        "ethertype {ethertype:#06x} is not IPv4 (0x0800); VLAN-tagged frames are not supported"
    )]
    NotIpv4 {
        /// The ethertype found.
        ethertype: u16,
    },
    /// The IPv4 version nibble is not 4.
    #[error("IP version field is {version} in a frame with the IPv4 ethertype; expected 4")]
    NotIpv4Version {
        /// The version nibble found.
        version: u8,
    },
    /// The IPv4 IHL is not 5: options (or a malformed IHL below 5) are not supported.
    #[error(
        "IPv4 IHL is {ihl} (in 32-bit words); only 5, a 20-byte header without options, is supported"
    )]
    Ipv4Options {
        /// The IHL nibble found.
        ihl: u8,
    },
    /// The IPv4 header checksum field is not the checksum of the header.
    #[error(
        "IPv4 header checksum field is {found:#06x}, but the header's checksum is {expected:#06x}"
    )]
    Ipv4Checksum {
        /// Checksum computed over the header.
        expected: u16,
        /// Checksum field in the frame.
        found: u16,
    },
    /// The packet is an IPv4 fragment (MF set or nonzero fragment offset).
    #[error(
        "IPv4 fragment (more_fragments = {more_fragments}, fragment offset = {offset}); Horus frames are never fragmented"
    )]
    Fragmented {
        /// The MF flag.
        more_fragments: bool,
        /// The fragment offset, in 8-byte units.
        offset: u16,
    },
    /// The IPv4 protocol is not UDP.
    #[error("IPv4 protocol {protocol} is not UDP (17)")]
    NotUdp {
        /// The protocol number found.
        protocol: u8,
    },
    /// The UDP destination port is not [`HORUS_UDP_PORT`].
    #[error("UDP destination port {port} is not the Horus port 1234")]
    WrongPort {
        /// The destination port found.
        port: u16,
    },
    /// The IPv4 total length claims more bytes than the frame holds after the Ethernet header.
    #[error(
        "IPv4 total length {total_len} exceeds the {available} bytes after the Ethernet header"
    )]
    Ipv4LengthExceedsFrame {
        /// IPv4 total length field.
        total_len: u16,
        /// Frame length minus 14.
        available: usize,
    },
    /// The UDP length cannot hold the UDP and Horus headers.
    #[error("UDP length {udp_len} is shorter than the UDP and Horus headers (19 bytes)")]
    UdpLengthTooShort {
        /// UDP length field.
        udp_len: u16,
    },
    /// The UDP length is not the IPv4 total length minus the 20-byte IPv4 header.
    #[error(
        "UDP length {udp_len} does not match IPv4 total length {total_len} (expected total length - 20)"
    )]
    UdpLengthMismatch {
        /// UDP length field.
        udp_len: u16,
        /// IPv4 total length field.
        total_len: u16,
    },
    /// A payload too long for one IPv4 packet was handed to [`HorusFrame::try_to_bytes`].
    #[error("payload of {len} bytes exceeds the {max} bytes that fit in one IPv4 packet")]
    PayloadTooLong {
        /// Payload length.
        len: usize,
        /// [`MAX_PAYLOAD_LEN`].
        max: usize,
    },
}

// ---------------------------------------------------------------------------------------------
// Packet types
// ---------------------------------------------------------------------------------------------

/// The Horus packet types: the 7-bit code in bits 6..0 of the `pkt_type` byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PacketType {
    /// 0: a new task from a client, scheduled by the switch.
    NewTask = 0,
    /// 1: a new task to be placed at random (baseline / fallback policy).
    NewTaskRandom = 1,
    /// 2: a worker finished a task (reply to the client, passes the leaf).
    TaskDone = 2,
    /// 3: a worker finished a task and became idle.
    TaskDoneIdle = 3,
    /// 4 (legacy): remove a queue entry.
    QueueRemove = 4,
    /// 5 (legacy): ask for a queue scan.
    ScanQueueSignal = 5,
    /// 6: a leaf announces it has idle workers to the spine (paper: idleAdd).
    IdleSignal = 6,
    /// 7: a leaf reports its load to the spine (paper: loadUpdate).
    QueueSignal = 7,
    /// 8 (legacy): probe a switch for its idle list.
    ProbeIdleQueue = 8,
    /// 9 (legacy): answer to [`PacketType::ProbeIdleQueue`].
    ProbeIdleResponse = 9,
    /// 10: a leaf asks the spine to forget it as idle.
    IdleRemove = 10,
    /// 11: keep-alive.
    KeepAlive = 11,
    /// 12: a worker announces its id.
    WorkerId = 12,
    /// 13: acknowledgement of [`PacketType::WorkerId`].
    WorkerIdAck = 13,
    /// 14: acknowledgement of a removal.
    RemoveAck = 14,
    /// 15: initial load report of a leaf to the spine.
    QueueSignalInit = 15,
    /// 16: a further packet of a multi-packet task (our extension, not in the public Horus code).
    TaskContinuation = 16,
}

impl PacketType {
    /// All packet types, in code order (`ALL[i].code() == i`).
    pub const ALL: [PacketType; 17] = [
        PacketType::NewTask,
        PacketType::NewTaskRandom,
        PacketType::TaskDone,
        PacketType::TaskDoneIdle,
        PacketType::QueueRemove,
        PacketType::ScanQueueSignal,
        PacketType::IdleSignal,
        PacketType::QueueSignal,
        PacketType::ProbeIdleQueue,
        PacketType::ProbeIdleResponse,
        PacketType::IdleRemove,
        PacketType::KeepAlive,
        PacketType::WorkerId,
        PacketType::WorkerIdAck,
        PacketType::RemoveAck,
        PacketType::QueueSignalInit,
        PacketType::TaskContinuation,
    ];

    /// The 7-bit type code (without the `MORE_PACKETS` flag).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The variant name, e.g. `"NewTask"`.
    pub const fn name(self) -> &'static str {
        match self {
            PacketType::NewTask => "NewTask",
            PacketType::NewTaskRandom => "NewTaskRandom",
            PacketType::TaskDone => "TaskDone",
            PacketType::TaskDoneIdle => "TaskDoneIdle",
            PacketType::QueueRemove => "QueueRemove",
            PacketType::ScanQueueSignal => "ScanQueueSignal",
            PacketType::IdleSignal => "IdleSignal",
            PacketType::QueueSignal => "QueueSignal",
            PacketType::ProbeIdleQueue => "ProbeIdleQueue",
            PacketType::ProbeIdleResponse => "ProbeIdleResponse",
            PacketType::IdleRemove => "IdleRemove",
            PacketType::KeepAlive => "KeepAlive",
            PacketType::WorkerId => "WorkerId",
            PacketType::WorkerIdAck => "WorkerIdAck",
            PacketType::RemoveAck => "RemoveAck",
            PacketType::QueueSignalInit => "QueueSignalInit",
            PacketType::TaskContinuation => "TaskContinuation",
        }
    }

    /// Legacy types of the public Horus code that this design does not generate:
    /// QueueRemove, ScanQueueSignal, ProbeIdleQueue, ProbeIdleResponse.
    pub const fn is_legacy(self) -> bool {
        matches!(
            self,
            PacketType::QueueRemove
                | PacketType::ScanQueueSignal
                | PacketType::ProbeIdleQueue
                | PacketType::ProbeIdleResponse
        )
    }

    /// Packets carrying (part of) a task: NewTask, NewTaskRandom, TaskContinuation. These are
    /// the only types on which the `MORE_PACKETS` flag is allowed.
    pub const fn is_task(self) -> bool {
        matches!(
            self,
            PacketType::NewTask | PacketType::NewTaskRandom | PacketType::TaskContinuation
        )
    }

    /// Task completions sent by workers: TaskDone, TaskDoneIdle.
    pub const fn is_reply(self) -> bool {
        matches!(self, PacketType::TaskDone | PacketType::TaskDoneIdle)
    }

    /// Types whose `src_id` names a node (worker or child switch) of the receiving switch, and
    /// must therefore be below its node count: TaskDone, TaskDoneIdle, IdleSignal, QueueSignal,
    /// QueueSignalInit, IdleRemove.
    pub const fn carries_node_src(self) -> bool {
        matches!(
            self,
            PacketType::TaskDone
                | PacketType::TaskDoneIdle
                | PacketType::IdleSignal
                | PacketType::QueueSignal
                | PacketType::QueueSignalInit
                | PacketType::IdleRemove
        )
    }
}

impl TryFrom<u8> for PacketType {
    type Error = WireError;

    /// Converts a 7-bit type code. Any value above 16 (including values with bit 7 set) is
    /// [`WireError::UnknownType`]; strip the flag with [`TYPE_CODE_MASK`] first.
    fn try_from(code: u8) -> Result<Self, WireError> {
        Ok(match code {
            0 => PacketType::NewTask,
            1 => PacketType::NewTaskRandom,
            2 => PacketType::TaskDone,
            3 => PacketType::TaskDoneIdle,
            4 => PacketType::QueueRemove,
            5 => PacketType::ScanQueueSignal,
            6 => PacketType::IdleSignal,
            7 => PacketType::QueueSignal,
            8 => PacketType::ProbeIdleQueue,
            9 => PacketType::ProbeIdleResponse,
            10 => PacketType::IdleRemove,
            11 => PacketType::KeepAlive,
            12 => PacketType::WorkerId,
            13 => PacketType::WorkerIdAck,
            14 => PacketType::RemoveAck,
            15 => PacketType::QueueSignalInit,
            16 => PacketType::TaskContinuation,
            _ => return Err(WireError::UnknownType { code }),
        })
    }
}

impl From<PacketType> for u8 {
    fn from(t: PacketType) -> u8 {
        t.code()
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------------
// Horus header
// ---------------------------------------------------------------------------------------------

/// The decoded 11-byte Horus header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HorusHeader {
    /// Packet type (bits 6..0 of byte 0).
    pub pkt_type: PacketType,
    /// `MORE_PACKETS` flag (bit 7 of byte 0): more packets of this task follow.
    pub more_packets: bool,
    /// Pool (virtual cluster) id.
    pub pool_id: u16,
    /// Source id.
    pub src_id: u16,
    /// Destination id.
    pub dst_id: u16,
    /// Queue length / load carried by the packet.
    pub qlen: u16,
    /// Sequence number.
    pub seq_num: u16,
}

/// Number of pools and nodes of a switch, to bound the ids in a [`HorusHeader`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdLimits {
    /// Number of pools: valid `pool_id`s are `0..pools`.
    pub pools: u16,
    /// Number of nodes (workers or child switches): valid node `src_id`s are `0..nodes`.
    pub nodes: u16,
}

impl HorusHeader {
    /// The `pkt_type` byte: type code, plus [`MORE_PACKETS_FLAG`] if `more_packets`.
    pub const fn type_byte(&self) -> u8 {
        if self.more_packets {
            self.pkt_type.code() | MORE_PACKETS_FLAG
        } else {
            self.pkt_type.code()
        }
    }

    /// The 11 wire bytes. Encodes the fields as they are, even if [`HorusHeader::validate`]
    /// would reject them.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[PKT_TYPE_OFFSET] = self.type_byte();
        b[POOL_ID_OFFSET..POOL_ID_OFFSET + 2].copy_from_slice(&self.pool_id.to_be_bytes());
        b[SRC_ID_OFFSET..SRC_ID_OFFSET + 2].copy_from_slice(&self.src_id.to_be_bytes());
        b[DST_ID_OFFSET..DST_ID_OFFSET + 2].copy_from_slice(&self.dst_id.to_be_bytes());
        b[QLEN_OFFSET..QLEN_OFFSET + 2].copy_from_slice(&self.qlen.to_be_bytes());
        b[SEQ_NUM_OFFSET..SEQ_NUM_OFFSET + 2].copy_from_slice(&self.seq_num.to_be_bytes());
        b
    }

    /// Writes the 11 wire bytes to `out[..11]`; bytes after that are left untouched.
    ///
    /// # Panics
    ///
    /// If `out.len() < HEADER_LEN` (11).
    pub fn write(&self, out: &mut [u8]) {
        out[..HEADER_LEN].copy_from_slice(&self.to_bytes());
    }

    /// Decodes the first 11 bytes of `bytes` (further bytes are ignored).
    ///
    /// Errors: [`WireError::Truncated`] (layer Horus, `needed` 11) if fewer than 11 bytes,
    /// [`WireError::UnknownType`] for a type code above 16, [`WireError::FlagNotAllowed`] if the
    /// `MORE_PACKETS` flag is set on a non-task type. IDs are not range-checked here; see
    /// [`HorusHeader::check_ids`].
    pub fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let b: &[u8; HEADER_LEN] = array_at(bytes, 0).ok_or(WireError::Truncated {
            layer: Layer::Horus,
            needed: HEADER_LEN,
            got: bytes.len(),
        })?;
        let pkt_type = PacketType::try_from(b[PKT_TYPE_OFFSET] & TYPE_CODE_MASK)?;
        let header = HorusHeader {
            pkt_type,
            more_packets: b[PKT_TYPE_OFFSET] & MORE_PACKETS_FLAG != 0,
            pool_id: be16(b, POOL_ID_OFFSET),
            src_id: be16(b, SRC_ID_OFFSET),
            dst_id: be16(b, DST_ID_OFFSET),
            qlen: be16(b, QLEN_OFFSET),
            seq_num: be16(b, SEQ_NUM_OFFSET),
        };
        header.validate()?;
        Ok(header)
    }

    /// Checks what [`HorusHeader::parse`] checks beyond the type code: the `MORE_PACKETS` flag
    /// only on task types ([`WireError::FlagNotAllowed`]).
    pub fn validate(&self) -> Result<(), WireError> {
        if self.more_packets && !self.pkt_type.is_task() {
            return Err(WireError::FlagNotAllowed {
                pkt_type: self.pkt_type,
            });
        }
        Ok(())
    }

    /// True if this is the last (or only) packet of its task: the `MORE_PACKETS` flag is clear.
    pub const fn is_last_packet(&self) -> bool {
        !self.more_packets
    }

    /// Range-checks the ids against a switch's sizes: `pool_id < limits.pools`
    /// ([`WireError::PoolOutOfRange`], checked first), and, for types whose `src_id` names a
    /// node of the receiving switch ([`PacketType::carries_node_src`]), `src_id < limits.nodes`
    /// ([`WireError::NodeOutOfRange`]).
    pub fn check_ids(&self, limits: &IdLimits) -> Result<(), WireError> {
        if self.pool_id >= limits.pools {
            return Err(WireError::PoolOutOfRange {
                pool: self.pool_id,
                limit: limits.pools,
            });
        }
        if self.pkt_type.carries_node_src() && self.src_id >= limits.nodes {
            return Err(WireError::NodeOutOfRange {
                node: self.src_id,
                limit: limits.nodes,
            });
        }
        Ok(())
    }
}

impl fmt::Display for HorusHeader {
    /// E.g. `NewTask(0) more_packets=false pool_id=1 src_id=2 dst_id=3 qlen=4 seq_num=5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}({}) more_packets={} pool_id={} src_id={} dst_id={} qlen={} seq_num={}",
            self.pkt_type.name(),
            self.pkt_type.code(),
            self.more_packets,
            self.pool_id,
            self.src_id,
            self.dst_id,
            self.qlen,
            self.seq_num
        )
    }
}

/// `bytes[offset..offset + N]` as an array, or `None` if out of range.
fn array_at<const N: usize>(bytes: &[u8], offset: usize) -> Option<&[u8; N]> {
    bytes.get(offset..offset.checked_add(N)?)?.try_into().ok()
}

fn be16(b: &[u8; HEADER_LEN], offset: usize) -> u16 {
    match array_at::<2>(b, offset) {
        Some(&w) => u16::from_be_bytes(w),
        None => 0,
    }
}

mod frame;

pub use frame::*;

pub mod payload;

#[cfg(test)]
mod tests {
    use super::frame::{checksum_update, fold, ones_sum, word};
    use super::*;

    #[test]
    fn all_is_in_code_order_and_try_from_inverts_code() {
        for (i, t) in PacketType::ALL.iter().enumerate() {
            assert_eq!(usize::from(t.code()), i);
            assert_eq!(PacketType::try_from(t.code()), Ok(*t));
            assert_eq!(format!("{t:?}"), t.name());
        }
        for code in 17..=u8::MAX {
            assert_eq!(
                PacketType::try_from(code),
                Err(WireError::UnknownType { code })
            );
        }
    }

    #[test]
    fn type_classes_match_the_spec() {
        use PacketType::*;
        let legacy: Vec<_> = PacketType::ALL
            .into_iter()
            .filter(|t| t.is_legacy())
            .collect();
        assert_eq!(
            legacy,
            [
                QueueRemove,
                ScanQueueSignal,
                ProbeIdleQueue,
                ProbeIdleResponse
            ]
        );
        let task: Vec<_> = PacketType::ALL
            .into_iter()
            .filter(|t| t.is_task())
            .collect();
        assert_eq!(task, [NewTask, NewTaskRandom, TaskContinuation]);
        let reply: Vec<_> = PacketType::ALL
            .into_iter()
            .filter(|t| t.is_reply())
            .collect();
        assert_eq!(reply, [TaskDone, TaskDoneIdle]);
        let node: Vec<_> = PacketType::ALL
            .into_iter()
            .filter(|t| t.carries_node_src())
            .collect();
        assert_eq!(
            node,
            [
                TaskDone,
                TaskDoneIdle,
                IdleSignal,
                QueueSignal,
                IdleRemove,
                QueueSignalInit
            ]
        );
    }

    #[test]
    fn offsets_add_up() {
        assert_eq!(HORUS_OFFSET, 42);
        assert_eq!(PAYLOAD_OFFSET, 53);
        assert_eq!(MIN_UDP_LEN, 19);
        assert_eq!(MIN_IPV4_TOTAL_LEN, 39);
        assert_eq!(MAX_PAYLOAD_LEN, 65496);
        assert_eq!(SEQ_NUM_OFFSET + 2, HEADER_LEN);
        for layer in [Layer::Ethernet, Layer::Ipv4, Layer::Udp, Layer::Horus] {
            assert!(layer.offset() < layer.end());
        }
    }

    #[test]
    fn ipv4_checksum_matches_rfc1071_style_example() {
        // Classic example header (checksum field 0xb861 in the original capture).
        let h: [u8; 20] = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_header_checksum(&h), 0xb861);
    }

    #[test]
    fn fold_handles_multiple_carries() {
        assert_eq!(fold(0), 0);
        assert_eq!(fold(0xffff), 0xffff);
        assert_eq!(fold(0x1_0000), 1);
        assert_eq!(fold(0xffff_ffff), 0xffff);
        assert_eq!(fold(0x2_fffe), 0x1);
    }

    #[test]
    fn ones_sum_pads_odd_byte_on_the_right() {
        assert_eq!(ones_sum(0, &[0x12]), 0x1200);
        assert_eq!(ones_sum(0, &[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }

    #[test]
    fn checksum_update_equals_recomputation() {
        let mut data = [0x12u8, 0x34, 0xab, 0xcd, 0xff, 0xff, 0x00, 0x01];
        let full = |d: &[u8]| !fold(ones_sum(0, d));
        let before = full(&data);
        let old = data[2..4].to_vec();
        data[2] = 0x55;
        data[3] = 0xaa;
        assert_eq!(checksum_update(before, &old, &data[2..4]), full(&data));
    }

    #[test]
    fn array_at_is_total() {
        let b = [1u8, 2, 3];
        assert_eq!(array_at::<2>(&b, 1), Some(&[2, 3]));
        assert_eq!(array_at::<2>(&b, 2), None);
        assert_eq!(array_at::<2>(&b, usize::MAX), None);
        assert_eq!(word(&[]), 0);
        assert_eq!(word(&[7]), 0x0700);
    }

    #[test]
    fn header_display_names_every_field() {
        let h = HorusHeader {
            pkt_type: PacketType::TaskContinuation,
            more_packets: true,
            pool_id: 1,
            src_id: 2,
            dst_id: 3,
            qlen: 4,
            seq_num: 5,
        };
        assert_eq!(
            h.to_string(),
            "TaskContinuation(16) more_packets=true pool_id=1 src_id=2 dst_id=3 qlen=4 seq_num=5"
        );
    }

    #[test]
    fn mac_parse_rejects_malformed_text() {
        for bad in [
            "",
            "02:00:00:00:00",
            "02:00:00:00:00:01:02",
            "2:00:00:00:00:01",
            "02:00:00:00:00:1",
            "+2:00:00:00:00:01",
            "02-00-00-00-00-01",
            "02:00:00:00:00:0g",
            "02:00:00:00:00:01:",
            "020:00:00:00:00:01",
            "02:00:00:00:00:é1",
        ] {
            assert_eq!(
                bad.parse::<MacAddr>(),
                Err(MacParseError {
                    input: bad.to_owned()
                }),
                "{bad:?}"
            );
        }
        assert_eq!(
            "0A:bC:00:ff:FF:01".parse::<MacAddr>(),
            Ok(MacAddr([0x0a, 0xbc, 0, 0xff, 0xff, 1]))
        );
    }
}
