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
//! then the old key removed. A process reads its file again within a second of a change, so a
//! rotation needs no restart. Without a key file nothing is added or checked, and the public
//! testbed's messages stay byte for byte as they are.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::SystemTime;

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

/// A key file's keys (ID, key): the first signs, all are accepted.
type KeyList = Vec<(u8, Vec<u8>)>;

/// The keys of a key file: the first signs, all are accepted. Loaded from a file, they are read
/// again within a second of a change to it ([`Keys::refresh`]), so that a rotation needs no
/// restart; a file that does not parse leaves the keys in use, and is counted.
pub struct Keys {
    keys: RwLock<KeyList>,
    /// The last counter this process signed with.
    last: AtomicU64,
    /// The file, and its modification time and length when last read.
    file: Option<(PathBuf, Mutex<Option<Stamp>>)>,
    /// When the file was last looked at (us, the callers' clock).
    checked_at: AtomicU64,
    reload_errors: AtomicU64,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys themselves.
        let ids: Vec<u8> = self.list().iter().map(|k| k.0).collect();
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
    /// The keys of `path`, if a key file is given (`--key-file`): shared by a process's threads.
    pub fn load_shared(path: Option<&Path>) -> Result<Option<std::sync::Arc<Keys>>, String> {
        path.map(Keys::load)
            .transpose()
            .map(|k| k.map(std::sync::Arc::new))
    }

    /// Reads a key file; an error says which line is wrong and why.
    pub fn load(path: &Path) -> Result<Keys, String> {
        let stamp = stamp(path);
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut k = Keys::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        k.file = Some((path.to_path_buf(), Mutex::new(stamp)));
        Ok(k)
    }

    /// Keys from a key file's text (never read again).
    pub fn parse(text: &str) -> Result<Keys, String> {
        Ok(Keys {
            keys: RwLock::new(parse_keys(text)?),
            last: AtomicU64::new(0),
            file: None,
            checked_at: AtomicU64::new(0),
            reload_errors: AtomicU64::new(0),
        })
    }

    /// Reads the file again if it changed (its modification time or length) and a second has
    /// passed since it was last looked at, by `now_us`.
    pub fn refresh(&self, now_us: u64) {
        let Some((path, seen)) = &self.file else {
            return;
        };
        let at = self.checked_at.load(Ordering::Acquire);
        if now_us < at.saturating_add(1_000_000)
            || self
                .checked_at
                .compare_exchange(at, now_us, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return;
        }
        let now = stamp(path);
        let Ok(mut seen) = seen.lock() else {
            return;
        };
        if now == *seen {
            return;
        }
        *seen = now;
        match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_keys(&t))
        {
            Ok(k) => {
                if let Ok(mut keys) = self.keys.write() {
                    *keys = k;
                }
            }
            Err(_) => {
                self.reload_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Changes to the file that did not parse (the keys in use were kept).
    pub fn reload_errors(&self) -> u64 {
        self.reload_errors.load(Ordering::Relaxed)
    }

    fn list(&self) -> std::sync::RwLockReadGuard<'_, KeyList> {
        self.keys.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// A file's modification time and length.
type Stamp = (SystemTime, u64);

/// `path`'s [`Stamp`] (`None`: not readable).
fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

fn parse_keys(text: &str) -> Result<KeyList, String> {
    {
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
        Ok(keys)
    }
}

impl Keys {
    /// The ID of the key that signs.
    pub fn signing_id(&self) -> u8 {
        self.list()[0].0
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
        self.refresh(now_us);
        let mut ctr = now_us;
        let _ = self
            .last
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| {
                ctr = now_us.max(l + 1);
                Some(ctr)
            });
        let keys = self.list();
        let (id, key) = &keys[0];
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
        self.refresh(now_us);
        let n = signed
            .len()
            .checked_sub(TRAILER_LEN)
            .ok_or(AuthError::NoTrailer)?;
        let (msg, t) = signed.split_at(n);
        let id = t[0];
        let ctr = u64::from_be_bytes(t[1..9].try_into().expect("8 bytes"));
        let keys = self.list();
        let key = &keys
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

    #[test]
    fn a_changed_key_file_is_read_again_within_a_second_and_a_bad_one_keeps_the_keys() {
        let dir = std::env::temp_dir().join(format!("horus-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        std::fs::write(&path, format!("{K1}\n")).unwrap();
        let k = Keys::load(&path).unwrap();
        let w = (Ipv4Addr::new(10, 0, 3, 7), 1234);
        let t0 = 1_700_000_000_000_000;
        let id_at = |t: u64| k.trailer(w, b"a", t)[0];
        assert_eq!(id_at(t0), 1);
        std::fs::write(&path, format!("{K2}\n{K1}\n")).unwrap();
        assert_eq!(id_at(t0 + 500_000), 1, "looked at t0: not again yet");
        assert_eq!(id_at(t0 + 1_100_000), 2, "a second later");
        let old = Keys::parse(K1).unwrap().sign(w, b"b", t0 + 1_200_000);
        let g = &mut Guard::default();
        assert!(k.verify(w, &old, g, t0 + 1_200_000).is_ok());
        std::fs::write(&path, "not a key\n").unwrap();
        assert_eq!(id_at(t0 + 1_500_000), 2, "within the second");
        assert_eq!(id_at(t0 + 2_200_000), 2, "kept: the file is bad");
        assert_eq!(k.reload_errors(), 1);
        std::fs::write(&path, format!("{K2}\n")).unwrap();
        assert_eq!(id_at(t0 + 3_300_000), 2);
        let g = &mut Guard::default();
        assert_eq!(
            k.verify(w, &old, g, t0 + 3_300_000),
            Err(AuthError::UnknownKey(1)),
            "the old key removed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
