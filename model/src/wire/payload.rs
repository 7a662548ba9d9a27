//! The payload the public Horus testbed's clients and workers put after the 11-byte header
//! (horus-scheduler/horus-app-eval: the client's `Message`, the worker's `struct message`), laid
//! out and encoded as they lay it out, so that their programs and ours serve each other:
//!
//! ```text
//!  offset 0          2              6              10                  18                  26            154
//!       +----------+--------------+--------------+-------------------+-------------------+-------------+
//!       |client_id |    req_id    | pkts_length  |      run_ns       |      gen_ns       | app_data    |
//!       +----------+--------------+--------------+-------------------+-------------------+-------------+
//!  bits      16          32             32                64                  64           16 x 64
//!  order     BE          LE             LE                LE                  LE           LE
//! ```
//!
//! The byte orders are the public code's: its x86 hosts write `client_id` pre-swapped (big
//! endian, as the header's fields) and the other fields as host integers (little endian), and its
//! worker reads them so (`docs/endpoints.md` has the contract field by field). `pkts_length`
//! counts bytes, [`MESSAGE_LEN`] a packet (the public worker divides by it); `run_ns` is the
//! service time the client asks for; `gen_ns` the client's wall clock (`CLOCK_REALTIME`, ns since
//! the Unix epoch) when it sent the task, which the worker echoes byte for byte so that the
//! client measures the response time. A worker answers with the same payload, `app_data` holding
//! its result.

/// Bytes of the payload, `app_data` included.
pub const PAYLOAD_LEN: usize = 26 + 8 * APP_WORDS;
/// 64-bit words of application data.
pub const APP_WORDS: usize = 16;
/// Bytes of one packet's message, header and payload (the public code's `sizeof(Message)`):
/// `pkts_length` counts these.
pub const MESSAGE_LEN: usize = super::HEADER_LEN + PAYLOAD_LEN;
const _: () = assert!(MESSAGE_LEN == 165);

/// A payload shorter than [`PAYLOAD_LEN`]: its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a task payload is {PAYLOAD_LEN} bytes, got {0}")]
pub struct ShortPayload(pub usize);

/// The public testbed's task payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskPayload {
    pub client_id: u16,
    pub req_id: u32,
    pub pkts_length: u32,
    pub run_ns: u64,
    pub gen_ns: u64,
    pub app_data: [u64; APP_WORDS],
}

impl TaskPayload {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(PAYLOAD_LEN);
        b.extend_from_slice(&self.client_id.to_be_bytes());
        b.extend_from_slice(&self.req_id.to_le_bytes());
        b.extend_from_slice(&self.pkts_length.to_le_bytes());
        b.extend_from_slice(&self.run_ns.to_le_bytes());
        b.extend_from_slice(&self.gen_ns.to_le_bytes());
        for w in self.app_data {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// `pkts_length` for a task of `packets` packets.
    pub fn length_of(packets: u32) -> u32 {
        packets.saturating_mul(MESSAGE_LEN as u32)
    }

    /// The task's packets as the public worker counts them: `pkts_length` / [`MESSAGE_LEN`],
    /// 0 taken as 1.
    pub fn packets(&self) -> u32 {
        (self.pkts_length / MESSAGE_LEN as u32).max(1)
    }

    /// Decodes the first [`PAYLOAD_LEN`] bytes; bytes after them are ignored.
    pub fn parse(b: &[u8]) -> Result<TaskPayload, ShortPayload> {
        if b.len() < PAYLOAD_LEN {
            return Err(ShortPayload(b.len()));
        }
        let u16_at = |o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let mut app_data = [0; APP_WORDS];
        for (i, w) in app_data.iter_mut().enumerate() {
            *w = u64_at(26 + 8 * i);
        }
        Ok(TaskPayload {
            client_id: u16_at(0),
            req_id: u32_at(2),
            pkts_length: u32_at(6),
            run_ns: u64_at(10),
            gen_ns: u64_at(18),
            app_data,
        })
    }
}

/// A public testbed worker's KEEP_ALIVE (horus-app-eval `networker.c`, `send_keep_alive`): one
/// a server (a process of several worker cores) every 700 ms, a [`MESSAGE_LEN`]-byte message whose
/// header fields are in the host's order (little endian): `src_id` the server's ID, `dst_id` its
/// leaf, `qlen` its worker count; `app_data` holds each worker's ID, one more than the node ID a
/// switch writes into its tasks' `dst_id` (the worker matches `dst_id + 1`). The other bytes are
/// unset there and not read here. This project's own keep-alive is the header alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeepAlive {
    pub server: u16,
    pub leaf: u16,
    /// The node IDs of the server's workers (each worker ID less one).
    pub nodes: Vec<u16>,
    /// This project's worker's addition, in bytes the public worker leaves unset: its pool
    /// (in the header's pool field) with [`OUR_KEEP_ALIVE_MARK`] in `pkts_length`. A worker
    /// that sends it registers again when a controller says it is no member.
    pub ours: Option<u16>,
}

/// `pkts_length` of this project's worker's keep-alive ("HORU"): a public worker leaves those
/// bytes unset, so a controller tells the two apart (a chance of 2^-32 of taking a public
/// worker's for ours).
pub const OUR_KEEP_ALIVE_MARK: u32 = 0x484f_5255;

/// Why a public-sized keep-alive was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PublicKeepAliveError {
    #[error("a public keep-alive names {0} workers; between 1 and {APP_WORDS} fit")]
    Workers(u16),
    #[error("a public keep-alive's worker ID {0} is not between 1 and 65536")]
    WorkerId(u64),
}

impl PublicKeepAlive {
    /// The keep-alive in `h` (as parsed, its fields big endian) and `payload`: `None` for a
    /// header-only keep-alive (this project's).
    pub fn parse(
        h: &super::HorusHeader,
        payload: &[u8],
    ) -> Result<Option<PublicKeepAlive>, PublicKeepAliveError> {
        if payload.len() < PAYLOAD_LEN {
            return Ok(None);
        }
        let workers = h.qlen.swap_bytes();
        if workers == 0 || usize::from(workers) > APP_WORDS {
            return Err(PublicKeepAliveError::Workers(workers));
        }
        let p = TaskPayload::parse(payload).expect("long enough");
        let nodes = p.app_data[..usize::from(workers)]
            .iter()
            .map(|&id| match id {
                1..=65536 => Ok((id - 1) as u16),
                _ => Err(PublicKeepAliveError::WorkerId(id)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(PublicKeepAlive {
            server: h.src_id.swap_bytes(),
            leaf: h.dst_id.swap_bytes(),
            nodes,
            ours: (p.pkts_length == OUR_KEEP_ALIVE_MARK).then_some(h.pool_id),
        }))
    }

    /// The message (header and payload) as a public worker sends it, its unset bytes zero;
    /// `count` is the keep-alive's number (`req_id`).
    pub fn to_message(&self, count: u32) -> Vec<u8> {
        let h = super::HorusHeader {
            pkt_type: super::PacketType::KeepAlive,
            more_packets: false,
            pool_id: self.ours.unwrap_or(0),
            src_id: self.server.swap_bytes(),
            dst_id: self.leaf.swap_bytes(),
            qlen: (self.nodes.len() as u16).swap_bytes(),
            seq_num: 0,
        };
        let mut app_data = [0; APP_WORDS];
        for (w, &n) in app_data.iter_mut().zip(&self.nodes) {
            *w = u64::from(n) + 1;
        }
        let first = self.nodes.first().map_or(0, |&n| n.wrapping_add(1));
        let p = TaskPayload {
            // Written as a host integer there, so read back big endian here.
            client_id: first.swap_bytes(),
            req_id: count,
            pkts_length: if self.ours.is_some() {
                OUR_KEEP_ALIVE_MARK
            } else {
                0
            },
            app_data,
            ..TaskPayload::default()
        };
        let mut m = h.to_bytes().to_vec();
        m.extend(p.to_bytes());
        m
    }
}

/// Bytes after the header of the public controller's WORKER_ID (horus_controller
/// `SerializeTo` pads the header to 50 bytes).
pub const PUBLIC_WORKER_ID_PAD: usize = 50 - super::HEADER_LEN;

/// The public controller's WORKER_ID to a server (horus_controller `leafBus.go`): its first
/// worker's node ID in `dst_id` and `qlen`, the leaf in the pool and `src_id`, big endian, the
/// header padded with zeros to 50 bytes. The worker numbers its workers from it (worker IDs
/// `first + 1`, ...) and answers [`public_worker_id_ack`].
pub fn public_worker_id(leaf: u16, first: u16) -> Vec<u8> {
    let h = super::HorusHeader {
        pkt_type: super::PacketType::WorkerId,
        more_packets: false,
        pool_id: leaf,
        src_id: leaf,
        dst_id: first,
        qlen: first,
        seq_num: 0,
    };
    let mut m = h.to_bytes().to_vec();
    m.resize(50, 0);
    m
}

/// The public worker's WORKER_ID_ACK (horus-app-eval `send_worker_id_ack`): a [`MESSAGE_LEN`]
/// message with the type and, in `app_data`, each worker's new ID (node ID + 1, little endian);
/// the rest is unset there (zero here).
pub fn public_worker_id_ack(nodes: &[u16]) -> Vec<u8> {
    let h = super::HorusHeader {
        pkt_type: super::PacketType::WorkerIdAck,
        more_packets: false,
        pool_id: 0,
        src_id: 0,
        dst_id: 0,
        qlen: 0,
        seq_num: 0,
    };
    let mut app_data = [0; APP_WORDS];
    for (w, &n) in app_data.iter_mut().zip(nodes) {
        *w = u64::from(n) + 1;
    }
    let mut m = h.to_bytes().to_vec();
    m.extend(
        TaskPayload {
            app_data,
            ..TaskPayload::default()
        }
        .to_bytes(),
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_sit_at_their_offsets_in_the_public_byte_orders() {
        let p = TaskPayload {
            client_id: 0x0102,
            req_id: 0x06050403,
            pkts_length: 0x0a090807,
            run_ns: 0x1211100f0e0d0c0b,
            gen_ns: 0x1a19181716151413,
            app_data: [0x1b; APP_WORDS],
        };
        let b = p.to_bytes();
        assert_eq!(b.len(), PAYLOAD_LEN);
        assert_eq!(&b[..26], &(1u8..=26).collect::<Vec<_>>()[..]);
        assert_eq!(b[26..34], 0x1bu64.to_le_bytes());
        assert_eq!(TaskPayload::parse(&b).unwrap(), p);
        let e = TaskPayload::parse(&b[..PAYLOAD_LEN - 1]).unwrap_err();
        assert_eq!(e.to_string(), "a task payload is 154 bytes, got 153");
    }

    /// The UDP payload of a task as the public client builds it (written from its `Message` and
    /// `generate_packet`: RocksDB client 110, request 7, one packet, 200 us, `gen_ns`
    /// 1,700,000,000,123,456,789), read as the public worker reads it.
    #[test]
    fn a_public_clients_task_reads_as_the_public_worker_reads_it() {
        let mut udp = vec![
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x07, // header
            0x00, 0x6e, // client_id 110, big endian
            0x07, 0x00, 0x00, 0x00, // req_id 7
            0xa5, 0x00, 0x00, 0x00, // pkts_length 165
            0x40, 0x0d, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, // run_ns 200,000
            0x15, 0xcd, 0x85, 0x3d, 0xfe, 0x9c, 0x97, 0x17, // gen_ns
        ];
        udp.resize(MESSAGE_LEN, 0);
        let h = crate::wire::HorusHeader::parse(&udp).unwrap();
        assert_eq!((h.dst_id, h.seq_num), (100, 7));
        let p = TaskPayload::parse(&udp[crate::wire::HEADER_LEN..]).unwrap();
        assert_eq!(p.client_id, 110);
        assert_eq!(p.req_id, 7);
        assert_eq!((p.pkts_length, p.packets()), (165, 1));
        assert_eq!(p.run_ns, 200_000);
        assert_eq!(p.gen_ns, 1_700_000_000_123_456_789);
        // Echoed byte for byte.
        assert_eq!(p.to_bytes(), udp[crate::wire::HEADER_LEN..]);
        assert_eq!(TaskPayload::length_of(3), 495);
        let none = TaskPayload {
            pkts_length: 0,
            ..p
        };
        assert_eq!(none.packets(), 1);
    }

    /// A public worker's keep-alive, byte for byte as its `send_keep_alive` lays it out (server 3
    /// of leaf 3, 8 workers with IDs 49 to 56, the sixth keep-alive; unset bytes zero).
    #[test]
    fn a_public_keep_alive_reads_as_the_public_controller_reads_it() {
        let mut m = vec![
            0x0b, 0x00, 0x00, 0x03, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00,
        ];
        m.extend_from_slice(&[0x31, 0x00]); // the first ID, 49, little endian
        m.extend_from_slice(&5u32.to_le_bytes());
        m.resize(crate::wire::HEADER_LEN + 26, 0);
        for id in 49u64..57 {
            m.extend_from_slice(&id.to_le_bytes());
        }
        m.resize(MESSAGE_LEN, 0);
        let h = crate::wire::HorusHeader::parse(&m).unwrap();
        let ka = PublicKeepAlive::parse(&h, &m[crate::wire::HEADER_LEN..])
            .unwrap()
            .unwrap();
        assert_eq!(ka.server, 3);
        assert_eq!(ka.leaf, 3);
        assert_eq!(ka.ours, None);
        assert_eq!(ka.nodes, (48..56).collect::<Vec<u16>>());
        assert_eq!(ka.to_message(5), m);
        // This project's keep-alive is the header alone.
        assert_eq!(PublicKeepAlive::parse(&h, &[]), Ok(None));
        // No worker, or more than app_data holds, or an ID of 0: refused.
        for (qlen, e) in [
            (0u16, PublicKeepAliveError::Workers(0)),
            (17u16.swap_bytes(), PublicKeepAliveError::Workers(17)),
        ] {
            let h = crate::wire::HorusHeader { qlen, ..h };
            assert_eq!(PublicKeepAlive::parse(&h, &m[11..]), Err(e));
        }
        let mut zero = m.clone();
        zero[11 + 26..11 + 34].fill(0);
        assert_eq!(
            PublicKeepAlive::parse(&h, &zero[11..]),
            Err(PublicKeepAliveError::WorkerId(0))
        );
    }

    /// The public controller's WORKER_ID for a server whose first worker is node 3, and the
    /// worker's answer, as their code lays them out.
    #[test]
    fn the_public_registration_messages_have_the_public_layout() {
        let m = public_worker_id(0, 3);
        let mut want = vec![0x0c, 0, 0, 0, 0, 0, 3, 0, 3, 0, 0];
        want.resize(50, 0);
        assert_eq!(m, want);
        let a = public_worker_id_ack(&[3, 4]);
        assert_eq!(a.len(), MESSAGE_LEN);
        assert_eq!(a[0], 13);
        assert_eq!(a[37..45], 4u64.to_le_bytes());
        assert_eq!(a[45..53], 5u64.to_le_bytes());
        assert!(a[53..].iter().all(|&b| b == 0));
    }
}
