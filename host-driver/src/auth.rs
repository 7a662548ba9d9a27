//! The optional keyed MAC on control frames between workers and the controller.
//!
//! With a key file (`--key-file`), every control message (WORKER_ID, KEEP_ALIVE, WORKER_ID_ACK,
//! REMOVE_ACK, the public WORKER_ID) ends with a trailer of [`TRAILER_LEN`] bytes after the Horus
//! message, inside the UDP payload:
//!
//! ```text
//! +--------+------------------+---------------------------------------------+
//! | key ID | counter          | tag: HMAC-SHA-256, first 16 bytes, over     |
//! | u8     | u64 big endian   | the worker's IPv4 address and UDP port,     |
//! |        |                  | the message, the key ID and the counter     |
//! +--------+------------------+---------------------------------------------+
//! ```
//!
//! The worker's endpoint in the tag is the message's source for a worker's message and its
//! destination for the controller's, so that a message taken from one worker cannot be sent
//! again as another's. The counter is the sender's wall clock in microseconds, made strictly
//! increasing within a process; a receiver takes a message only if its counter is above the last
//! it took from that worker and within [`WINDOW`] of its own clock, so that a message recorded
//! and sent again is refused (the hosts' clocks must agree within the window: NTP's).
//!
//! The key file holds one key a line, `ID HEX` (ID 0 to 255, at least 32 bytes of key in hex);
//! `#` starts a comment. The first key signs; every key in the file is accepted, so that a key is
//! rotated in three steps, each a new file on every host: the new key added second, then first,
//! then the old key removed. Without a key file nothing is added or checked, and the public
//! testbed's messages stay byte for byte as they are.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of a tag (HMAC-SHA-256 truncated: 128 bits, as RFC 4868 truncates it for IPsec).
pub const TAG_LEN: usize = 16;
/// Bytes of the trailer: key ID, counter, tag.
pub const TRAILER_LEN: usize = 1 + 8 + TAG_LEN;
/// How far a counter may be from the receiver's clock (us).
pub const WINDOW: u64 = 30_000_000;

/// Why a message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthError {
    /// Too short to hold a trailer.
    NoTrailer,
    /// A key ID the file does not hold.
    UnknownKey(u8),
    /// The tag does not match.
    BadTag,
    /// A counter not above the last taken from that worker, or out of the window.
    Replayed,
}

/// The keys of a key file: the first signs, all are accepted.
pub struct Keys {
    keys: Vec<(u8, Vec<u8>)>,
    /// The last counter this process signed with.
    last: AtomicU64,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys themselves.
        let ids: Vec<u8> = self.keys.iter().map(|k| k.0).collect();
        write!(f, "Keys {{ ids: {ids:?} }}")
    }
}

/// Microseconds since the epoch.
pub fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Keys {
    /// Reads a key file; an error says which line is wrong and why.
    pub fn load(path: &Path) -> Result<Keys, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Keys::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Keys, String> {
        let mut keys: Vec<(u8, Vec<u8>)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let (id, hex) = line
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("line {n}: write ID HEX"))?;
            let id: u8 = id
                .parse()
                .map_err(|_| format!("line {n}: key ID {id:?} is not 0 to 255"))?;
            let key = unhex(hex.trim()).ok_or_else(|| format!("line {n}: the key is not hex"))?;
            if key.len() < 32 {
                return Err(format!(
                    "line {n}: a key of {} bytes; at least 32",
                    key.len()
                ));
            }
            if keys.iter().any(|k| k.0 == id) {
                return Err(format!("line {n}: key ID {id} twice"));
            }
            keys.push((id, key));
        }
        if keys.is_empty() {
            return Err("no key".into());
        }
        Ok(Keys {
            keys,
            last: AtomicU64::new(0),
        })
    }

    /// The ID of the key that signs.
    pub fn signing_id(&self) -> u8 {
        self.keys[0].0
    }

    fn tag(&self, key: &[u8], worker: (Ipv4Addr, u16), msg: &[u8], id: u8, ctr: u64) -> [u8; 16] {
        let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
        m.update(&worker.0.octets());
        m.update(&worker.1.to_be_bytes());
        m.update(msg);
        m.update(&[id]);
        m.update(&ctr.to_be_bytes());
        let full = m.finalize().into_bytes();
        let mut t = [0u8; TAG_LEN];
        t.copy_from_slice(&full[..TAG_LEN]);
        t
    }

    /// The trailer for `msg` (a Horus message: header and payload) to or from the worker at
    /// `worker`, at `now_us`.
    pub fn trailer(&self, worker: (Ipv4Addr, u16), msg: &[u8], now_us: u64) -> Vec<u8> {
        let mut ctr = now_us;
        let _ = self
            .last
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| {
                ctr = now_us.max(l + 1);
                Some(ctr)
            });
        let (id, key) = &self.keys[0];
        let mut t = vec![*id];
        t.extend_from_slice(&ctr.to_be_bytes());
        t.extend_from_slice(&self.tag(key, worker, msg, *id, ctr));
        t
    }

    /// `msg` with its trailer.
    pub fn sign(&self, worker: (Ipv4Addr, u16), msg: &[u8], now_us: u64) -> Vec<u8> {
        let mut out = msg.to_vec();
        out.extend(self.trailer(worker, msg, now_us));
        out
    }

    /// Checks the trailer of `signed` (a message to or from `worker`) against the keys, its
    /// counter against `guard` and `now_us`: the length of the message without it.
    pub fn verify(
        &self,
        worker: (Ipv4Addr, u16),
        signed: &[u8],
        guard: &mut Guard,
        now_us: u64,
    ) -> Result<usize, AuthError> {
        let n = signed
            .len()
            .checked_sub(TRAILER_LEN)
            .ok_or(AuthError::NoTrailer)?;
        let (msg, t) = signed.split_at(n);
        let id = t[0];
        let ctr = u64::from_be_bytes(t[1..9].try_into().expect("8 bytes"));
        let key = &self
            .keys
            .iter()
            .find(|k| k.0 == id)
            .ok_or(AuthError::UnknownKey(id))?
            .1;
        let want = self.tag(key, worker, msg, id, ctr);
        // Compared in constant time (the tag is a secret until it is right).
        let diff = want.iter().zip(&t[9..]).fold(0u8, |d, (a, b)| d | (a ^ b));
        if diff != 0 {
            return Err(AuthError::BadTag);
        }
        guard.take(worker.0, ctr, now_us)?;
        Ok(n)
    }
}

/// The last counter taken from each worker (a receiver's replay guard). It holds only workers
/// whose messages carried a right tag, at most [`Guard::MAX`]: beyond, those out of the window
/// are dropped first.
#[derive(Debug, Default)]
pub struct Guard {
    last: HashMap<Ipv4Addr, u64>,
}

impl Guard {
    pub const MAX: usize = 65_536;

    fn take(&mut self, from: Ipv4Addr, ctr: u64, now_us: u64) -> Result<(), AuthError> {
        if ctr.abs_diff(now_us) > WINDOW || self.last.get(&from).is_some_and(|&l| ctr <= l) {
            return Err(AuthError::Replayed);
        }
        if self.last.len() >= Self::MAX && !self.last.contains_key(&from) {
            self.last.retain(|_, l| now_us.saturating_sub(*l) <= WINDOW);
            if self.last.len() >= Self::MAX {
                // Every one recent: a message of a worker not yet seen waits its turn.
                return Err(AuthError::Replayed);
            }
        }
        self.last.insert(from, ctr);
        Ok(())
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: &str = "1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const K2: &str = "2 ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

    #[test]
    fn a_signed_message_verifies_once_and_nothing_else_does() {
        let k = Keys::parse(K1).unwrap();
        let w = (Ipv4Addr::new(10, 0, 3, 7), 1234);
        let now = 1_700_000_000_000_000;
        let s = k.sign(w, b"hello", now);
        assert_eq!(s.len(), 5 + TRAILER_LEN);
        let mut g = Guard::default();
        assert_eq!(k.verify(w, &s, &mut g, now), Ok(5));
        assert_eq!(
            k.verify(w, &s, &mut g, now),
            Err(AuthError::Replayed),
            "sent again"
        );
        let s2 = k.sign(w, b"hello", now);
        let mut bad = s2.clone();
        bad[0] ^= 1;
        assert_eq!(k.verify(w, &bad, &mut g, now), Err(AuthError::BadTag));
        let other = (Ipv4Addr::new(10, 0, 3, 8), 1234);
        assert_eq!(
            k.verify(other, &s2, &mut g, now),
            Err(AuthError::BadTag),
            "another worker's"
        );
        assert_eq!(k.verify(w, &s2, &mut g, now), Ok(5));
        // A fresh signer (this one's counter is past `now` already) with a slow clock.
        let old = Keys::parse(K1)
            .unwrap()
            .sign(w, b"x", now - WINDOW - 1_000_000);
        assert_eq!(
            k.verify(w, &old, &mut Guard::default(), now),
            Err(AuthError::Replayed),
            "out of the window"
        );
        assert_eq!(
            k.verify(w, b"short", &mut g, now),
            Err(AuthError::NoTrailer)
        );
    }

    #[test]
    fn during_a_rotation_both_keys_are_taken_and_the_first_signs() {
        let old = Keys::parse(K1).unwrap();
        let step1 = Keys::parse(&format!("{K1}\n{K2}\n")).unwrap();
        let step2 = Keys::parse(&format!("# rotating\n{K2}\n{K1}\n")).unwrap();
        let new = Keys::parse(K2).unwrap();
        let w = (Ipv4Addr::new(10, 0, 3, 7), 1234);
        let now = 1_700_000_000_000_000;
        let g = &mut Guard::default();
        assert_eq!(step2.signing_id(), 2);
        assert!(step1.verify(w, &step2.sign(w, b"a", now), g, now).is_ok());
        assert!(step2.verify(w, &old.sign(w, b"b", now + 1), g, now).is_ok());
        assert_eq!(
            old.verify(w, &new.sign(w, b"c", now + 2), g, now),
            Err(AuthError::UnknownKey(2))
        );
        for (bad, says) in [
            ("", "no key"),
            ("1", "write ID HEX"),
            ("300 00", "not 0 to 255"),
            ("1 zz", "not hex"),
            ("1 0011", "at least 32"),
        ] {
            let e = Keys::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        assert!(
            Keys::parse(&format!("{K1}\n{K1}"))
                .unwrap_err()
                .contains("twice")
        );
    }
}
