//! The payload the public Horus testbed's clients and workers put after the 11-byte header, so
//! that their programs and ours can serve each other:
//!
//! ```text
//!  offset 0          2              6              10                  18                  26            154
//!       +----------+--------------+--------------+-------------------+-------------------+-------------+
//!       |client_id |    req_id    | pkts_length  |      run_ns       |      gen_ns       | app_data    |
//!       +----------+--------------+--------------+-------------------+-------------------+-------------+
//!  bits      16          32             32                64                  64           16 x 64
//! ```
//!
//! Every field in network byte order (the public code mixes byte orders; the wire format of this
//! project is big endian throughout, see `horus_model::wire`). `run_ns` is the service time the
//! client asks for, `gen_ns` the client's clock when it sent the task (echoed back by the worker
//! so that the client measures the response time on its own clock), `pkts_length` the number of
//! packets of the task. A worker answers with the same payload, `app_data` holding its result.

use anyhow::{Result, ensure};

/// Bytes of the payload, `app_data` included.
pub const PAYLOAD_LEN: usize = 26 + 8 * APP_WORDS;
/// 64-bit words of application data.
pub const APP_WORDS: usize = 16;

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
        b.extend_from_slice(&self.req_id.to_be_bytes());
        b.extend_from_slice(&self.pkts_length.to_be_bytes());
        b.extend_from_slice(&self.run_ns.to_be_bytes());
        b.extend_from_slice(&self.gen_ns.to_be_bytes());
        for w in self.app_data {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    /// Decodes the first [`PAYLOAD_LEN`] bytes; bytes after them are ignored.
    pub fn parse(b: &[u8]) -> Result<TaskPayload> {
        ensure!(
            b.len() >= PAYLOAD_LEN,
            "a task payload is {PAYLOAD_LEN} bytes, got {}",
            b.len()
        );
        let u16_at = |o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().expect("8 bytes"));
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
    fn fields_sit_at_their_offsets_in_network_order() {
        let p = TaskPayload {
            client_id: 0x0102,
            req_id: 0x03040506,
            pkts_length: 0x0708090a,
            run_ns: 0x0b0c0d0e0f101112,
            gen_ns: 0x131415161718191a,
            app_data: [0x1b; APP_WORDS],
        };
        let b = p.to_bytes();
        assert_eq!(b.len(), PAYLOAD_LEN);
        assert_eq!(&b[..26], &(1u8..=26).collect::<Vec<_>>()[..]);
        assert_eq!(b[26..34], 0x1bu64.to_be_bytes());
        assert_eq!(TaskPayload::parse(&b).unwrap(), p);
        let e = TaskPayload::parse(&b[..PAYLOAD_LEN - 1]).unwrap_err();
        assert_eq!(e.to_string(), "a task payload is 154 bytes, got 153");
    }
}
