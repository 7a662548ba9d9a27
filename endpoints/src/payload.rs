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

use anyhow::{Result, ensure};

/// Bytes of the payload, `app_data` included.
pub const PAYLOAD_LEN: usize = 26 + 8 * APP_WORDS;
/// 64-bit words of application data.
pub const APP_WORDS: usize = 16;
/// Bytes of one packet's message, header and payload (the public code's `sizeof(Message)`):
/// `pkts_length` counts these.
pub const MESSAGE_LEN: usize = horus_model::wire::HEADER_LEN + PAYLOAD_LEN;
const _: () = assert!(MESSAGE_LEN == 165);

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
    pub fn parse(b: &[u8]) -> Result<TaskPayload> {
        ensure!(
            b.len() >= PAYLOAD_LEN,
            "a task payload is {PAYLOAD_LEN} bytes, got {}",
            b.len()
        );
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
        let h = horus_model::wire::HorusHeader::parse(&udp).unwrap();
        assert_eq!((h.dst_id, h.seq_num), (100, 7));
        let p = TaskPayload::parse(&udp[horus_model::wire::HEADER_LEN..]).unwrap();
        assert_eq!(p.client_id, 110);
        assert_eq!(p.req_id, 7);
        assert_eq!((p.pkts_length, p.packets()), (165, 1));
        assert_eq!(p.run_ns, 200_000);
        assert_eq!(p.gen_ns, 1_700_000_000_123_456_789);
        // Echoed byte for byte.
        assert_eq!(p.to_bytes(), udp[horus_model::wire::HEADER_LEN..]);
        assert_eq!(TaskPayload::length_of(3), 495);
        let none = TaskPayload {
            pkts_length: 0,
            ..p
        };
        assert_eq!(none.packets(), 1);
    }
}
