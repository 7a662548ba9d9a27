//! The controller: keeps a leaf's worker membership true while workers come and go.
//!
//! It takes the controller packets the switch sends to its control port (KEEP_ALIVE, WORKER_ID,
//! WORKER_ID_ACK, REMOVE_ACK of the public protocol), as the Ethernet frames the port emits, and
//! acts through the driver:
//!
//! - **WORKER_ID** from a worker (its pool in `pool_id`, the ID it asks for in `src_id`, or
//!   [`ANY_ID`]): the worker is added to the pool (one `AddNode` pass; the frame's source MAC, IPv4
//!   address and UDP port are its address, the configured port its egress) under the ID it asked
//!   for when that node is free, else the lowest free one; a worker already known (same pool and
//!   address) keeps its ID. The answer is a WORKER_ID_ACK with the ID in `dst_id`.
//! - **KEEP_ALIVE** (`src_id` the worker's ID, `pool_id` its pool) marks it alive; a worker that
//!   was removed for silence and speaks again is added back under its ID. A worker the switch
//!   holds without having registered (a configuration's, `apply`) is adopted at its first
//!   keep-alive, with the address the switch has for it, and watched from then on.
//! - A worker silent for longer than the timeout is removed (one `RemoveNode`: it leaves the idle
//!   list and the sampling range in one pass) and told so with a REMOVE_ACK. The failure
//!   detector ([`Detector`]) takes the time from its caller, so it is tested without sleeping.
//! - WORKER_ID_ACK and REMOVE_ACK arriving from workers are counted (a worker acknowledging), as
//!   is anything else that reaches the controller.
//!
//! Membership is kept in a state file (JSON), rewritten (atomically: a new file renamed over the
//! old) after every change; a restarted controller reads it, compares it with the switch's
//! tables, and writes only what the switch lacks, so a live switch is not reprogrammed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use horus_model::sched::{ControlOp, NodeAddr, Scheduler};
use horus_model::wire::payload::{PublicKeepAlive, public_worker_id};
use horus_model::wire::{self, Endpoint, HorusHeader, MacAddr, PacketType};
use serde::{Deserialize, Serialize};

use crate::auth::{self, Guard, Keys};
use crate::driver::DriverError;
use crate::leaf::{Leaf, LeafState};
use crate::ratelimit::RateLimit;
use crate::security::Allow;

/// `src_id` of a WORKER_ID that asks for any free ID.
pub const ANY_ID: u16 = 0xffff;

/// Microseconds on the caller's clock.
pub type Micros = u64;

/// Which workers are overdue: the last time each was heard from, against a timeout.
#[derive(Clone, Debug)]
pub struct Detector {
    timeout: Micros,
    last: BTreeMap<(u16, u16), Micros>,
}

impl Detector {
    pub fn new(timeout: Micros) -> Detector {
        Detector {
            timeout,
            last: BTreeMap::new(),
        }
    }

    /// `key` was heard from at `now`.
    pub fn seen(&mut self, key: (u16, u16), now: Micros) {
        self.last.insert(key, now);
    }

    /// Stops watching `key`.
    pub fn forget(&mut self, key: (u16, u16)) {
        self.last.remove(&key);
    }

    /// The keys not heard from for longer than the timeout at `now`, oldest first; they are
    /// no longer watched.
    pub fn expired(&mut self, now: Micros) -> Vec<(u16, u16)> {
        let mut out: Vec<((u16, u16), Micros)> = self
            .last
            .iter()
            .filter(|&(_, &t)| now.saturating_sub(t) > self.timeout)
            .map(|(&k, &t)| (k, t))
            .collect();
        out.sort_by_key(|&(k, t)| (t, k));
        for (k, _) in &out {
            self.last.remove(k);
        }
        out.into_iter().map(|(k, _)| k).collect()
    }

    /// When the next key expires if nothing is heard (for a loop's sleep).
    pub fn next_deadline(&self) -> Option<Micros> {
        self.last
            .values()
            .min()
            .map(|t| t.saturating_add(self.timeout).saturating_add(1))
    }
}

/// A worker the controller registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub pool: u16,
    pub id: u16,
    pub mac: String,
    pub ip: std::net::Ipv4Addr,
    pub udp_port: u16,
    pub port: u8,
    /// What the switch writes into `dst_id` of the tasks it sends the worker (its ID, for a
    /// worker that registered).
    pub dst_id: u16,
    /// In the switch's tables as the controller last saw them (false: removed for silence, kept
    /// to be added back).
    pub active: bool,
    /// A public testbed server's worker (watched through its server's keep-alives): sent no
    /// message of this project's (a public worker would run a REMOVE_ACK as a task).
    #[serde(default)]
    pub public: bool,
    /// When it was removed for silence, on the controller's clock (a restarted controller
    /// counts from its start): forgotten [`Controller::forget_after`] later.
    #[serde(skip)]
    pub removed_at: Option<Micros>,
}

impl Member {
    fn endpoint(&self) -> Endpoint {
        Endpoint {
            // Checked when the member was made or read from the state file.
            mac: self.mac.parse().unwrap_or(MacAddr([0; 6])),
            ip: self.ip,
            udp_port: self.udp_port,
        }
    }

    fn add_op(&self) -> ControlOp {
        ControlOp::AddNode {
            pool: self.pool,
            node: self.id,
            addr: NodeAddr {
                endpoint: self.endpoint(),
                port: self.port,
                dst_id: self.dst_id,
            },
            workers: 1,
        }
    }
}

/// What the controller has done, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub packets: u64,
    pub keep_alives: u64,
    /// Keep-alives in the public testbed's layout (one a server, each of its workers counted
    /// in `keep_alives` too).
    pub public_keep_alives: u64,
    pub registrations: u64,
    pub removals: u64,
    pub readds: u64,
    pub acks_received: u64,
    /// Frames that were not controller packets, keep-alives of unknown workers, registrations
    /// the switch refused.
    pub ignored: u64,
    pub state_writes: u64,
    /// Control frames refused for their source: an address no worker can have (unspecified,
    /// broadcast, multicast), or a keep-alive of a known worker from another address.
    pub refused_bad_address: u64,
    pub refused_wrong_address: u64,
    /// Control frames from a host outside the allowed networks ([`Controller::allow`]).
    pub refused_not_allowed: u64,
    /// Registrations (WORKER_ID) over their source's or their pool's rate ([`RateLimit`]).
    pub refused_rate: u64,
    /// With a key: control frames without a right trailer, or sent again.
    pub refused_unauthenticated: u64,
    /// Removed workers forgotten after [`Controller::forget_after`] (their IDs free again).
    pub forgotten: u64,
    /// State-file writes that failed (disk full, a read-only directory): tried again a second
    /// later, the switch served meanwhile.
    pub state_write_errors: u64,
}

/// The state file's content.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct StateFile {
    members: Vec<Member>,
}

/// What a keep-alive did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alive {
    Watched,
    Adopted,
    Refused,
}

/// A message for a worker: a Horus header, and what follows it (nothing for this project's
/// workers; the padding of the public WORKER_ID), to send to its endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub to: Endpoint,
    pub header: HorusHeader,
    pub payload: Vec<u8>,
}

impl Reply {
    /// The UDP payload: the header and what follows it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.header.to_bytes().to_vec();
        b.extend_from_slice(&self.payload);
        b
    }
}

/// The controller of one leaf, whose state it holds as `S` (the paper leaf's `Scheduler` read
/// back, the JBSQ leaf's mirror).
pub struct Controller<S = Scheduler> {
    /// Egress port of the workers it registers.
    pub worker_port: u8,
    members: BTreeMap<(u16, u16), Member>,
    detector: Detector,
    state_path: Option<PathBuf>,
    /// The switch's state as the model holds it, read again when another host changed the
    /// switch (see [`Controller::sync`]).
    m: S,
    /// The leaf's change count ([`Leaf::changes`]) when `m` was last known to be its state;
    /// `None`: read the state again before the next operation.
    passes_seen: Option<u32>,
    switch_id: u16,
    pub counts: Counts,
    /// The networks whose hosts may send control frames (default: any; the daemons set theirs).
    pub allow: Allow,
    /// Token buckets on registrations, per source address and per pool.
    pub limits: RateLimit,
    /// The keys of the control frames' MAC (`None`: no MAC, the public protocol as it is).
    pub keys: Option<std::sync::Arc<Keys>>,
    guard: Guard,
    /// A worker removed for silence is forgotten this long after (its node ID free for another
    /// worker), unless it speaks again first.
    pub forget_after: Micros,
    /// The time of the last frame or tick, and when an unwritten change to the state file is
    /// next tried again.
    clock: Micros,
    retry_save_at: Option<Micros>,
    /// The last state-file error said, so that a lasting one is said once.
    save_error: Option<String>,
}

/// Writes `text` to `p`: to a temporary file beside it (a name that is never the file's own),
/// synced, renamed over it, and the directory synced, so that a crash leaves the old file or the
/// new one.
pub fn write_atomically(p: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    let tmp = p.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, p)?;
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        std::fs::File::open(dir.unwrap_or(Path::new(".")))?.sync_all()
    };
    let r = write();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// How long a removed worker is kept to be added back under its ID: a minute.
pub const FORGET_AFTER: Micros = 60_000_000;

/// How long after a failed write of the state file the controller tries again.
pub const SAVE_RETRY: Micros = 1_000_000;

fn err(e: impl std::fmt::Display) -> DriverError {
    DriverError::Refused(e.to_string())
}

impl<S: LeafState> Controller<S> {
    /// A controller of the leaf behind `sw`, removing a worker silent for `timeout`; with
    /// `state_path`, the membership it keeps (read back and reconciled with the switch if the
    /// file exists). `now` starts every known worker's clock.
    pub fn start<L: Leaf<State = S>>(
        sw: &mut L,
        worker_port: u8,
        timeout: Micros,
        state_path: Option<&Path>,
        now: Micros,
    ) -> Result<Controller<S>, DriverError> {
        sw.check_leaf()?;
        let members: Vec<Member> = match state_path {
            Some(p) if p.exists() => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| err(format!("{}: {e}", p.display())))?;
                serde_json::from_str::<StateFile>(&text)
                    .map_err(|e| err(format!("{}: not a controller state file: {e}", p.display())))?
                    .members
            }
            _ => Vec::new(),
        };
        let passes = sw.changes()?;
        let ids: Vec<u16> = members.iter().map(|m| m.id).collect();
        let m = sw.state(&ids)?;
        if let Some(p) = state_path {
            let (pools, nodes) = (m.pools(), m.nodes());
            for m in &members {
                if m.pool >= pools || m.id >= nodes || m.mac.parse::<MacAddr>().is_err() {
                    return Err(err(format!(
                        "{}: member {} of pool {} (MAC {:?}) does not fit this switch's {} pools and {} nodes",
                        p.display(),
                        m.id,
                        m.pool,
                        m.mac,
                        pools,
                        nodes
                    )));
                }
            }
        }
        let switch_id = m.switch_id();
        let mut c = Controller {
            worker_port,
            members: BTreeMap::new(),
            detector: Detector::new(timeout),
            state_path: state_path.map(Path::to_path_buf),
            m,
            passes_seen: Some(passes),
            switch_id,
            counts: Counts::default(),
            allow: Allow::any(),
            limits: RateLimit::default(),
            keys: None,
            guard: Guard::default(),
            forget_after: FORGET_AFTER,
            clock: now,
            retry_save_at: None,
            save_error: None,
        };
        // Resume: the switch keeps what it has; only what it lacks is written.
        let mut changed = false;
        for mut mem in members {
            let key = (mem.pool, mem.id);
            if mem.active && !c.in_switch(&mem) {
                if c.run(sw, mem.add_op())? {
                    c.counts.readds += 1;
                } else {
                    // The switch gave the node or the pool's room to another: added back at
                    // the worker's next keep-alive if there is room then.
                    mem.active = false;
                    changed = true;
                }
            }
            if mem.active {
                c.detector.seen(key, now);
            } else {
                mem.removed_at = Some(now);
            }
            c.members.insert(key, mem);
        }
        if changed {
            c.save()?;
        }
        Ok(c)
    }

    /// Reads the switch's state again when a control pass the controller did not run went in
    /// (another `horusctl`, an `apply`, a reloaded card), and marks which members it holds.
    fn sync<L: Leaf<State = S>>(&mut self, sw: &mut L) -> Result<(), DriverError> {
        let now = sw.changes()?;
        if self.passes_seen == Some(now) {
            return Ok(());
        }
        let ids: Vec<u16> = self.members.values().map(|m| m.id).collect();
        self.m = sw.state(&ids)?;
        let mut changed = false;
        let keys: Vec<(u16, u16)> = self.members.keys().copied().collect();
        for key in keys {
            let held = self.in_switch(&self.members[&key]);
            let m = self.members.get_mut(&key).expect("a member");
            if m.active && !held {
                // Removed behind the controller's back: added back when it speaks.
                m.active = false;
                m.removed_at = Some(self.clock);
                self.detector.forget(key);
                changed = true;
            }
        }
        self.passes_seen = Some(now);
        if changed {
            self.persist();
        }
        Ok(())
    }

    /// Runs `op` on the switch (after [`Controller::sync`]); `false` when the switch's state
    /// refuses it.
    fn run<L: Leaf<State = S>>(&mut self, sw: &mut L, op: ControlOp) -> Result<bool, DriverError> {
        self.sync(sw)?;
        match sw.control(&mut self.m, op) {
            Ok(()) => {
                self.passes_seen = self.passes_seen.map(|p| p.wrapping_add(1));
                Ok(true)
            }
            Err(DriverError::Refused(_)) => Ok(false),
            Err(e) => {
                self.passes_seen = None;
                Err(e)
            }
        }
    }

    /// Whether the switch has `mem` as an active node of its pool at its address.
    fn in_switch(&self, mem: &Member) -> bool {
        self.m.held(mem.id).is_some_and(|(pool, a)| {
            pool == mem.pool && a.endpoint == mem.endpoint() && a.dst_id == mem.dst_id
        })
    }

    pub fn members(&self) -> impl Iterator<Item = &Member> {
        self.members.values()
    }

    /// Writes the membership to the state file (see [`write_atomically`]).
    fn write_state(&self, p: &Path) -> std::io::Result<()> {
        let s = StateFile {
            members: self.members.values().cloned().collect(),
        };
        let text = serde_json::to_string_pretty(&s).map_err(std::io::Error::other)? + "\n";
        write_atomically(p, &text)
    }

    /// Writes the state file (see [`Controller::write_state`]); an error is the caller's (at
    /// start: a state file that cannot be written is refused before anything runs).
    fn save(&mut self) -> Result<(), DriverError> {
        let Some(p) = self.state_path.clone() else {
            return Ok(());
        };
        self.write_state(&p)
            .map_err(|e| err(format!("writing {}: {e}", p.display())))?;
        self.counts.state_writes += 1;
        Ok(())
    }

    /// Writes the state file after a change, never failing the caller: the switch keeps serving
    /// while the disk refuses; the error is counted, said once on standard error, and the write
    /// tried again [`SAVE_RETRY`] later (and at every change meanwhile).
    fn persist(&mut self) {
        match self.save() {
            Ok(()) => {
                self.retry_save_at = None;
                if self.save_error.take().is_some() {
                    eprintln!("horus controller: the state file is written again");
                }
            }
            Err(e) => {
                self.counts.state_write_errors += 1;
                self.retry_save_at = Some(self.clock.saturating_add(SAVE_RETRY));
                let e = e.to_string();
                if self.save_error.as_ref() != Some(&e) {
                    eprintln!(
                        "horus controller: {e}; the switch goes on, the write is tried again"
                    );
                    self.save_error = Some(e);
                }
            }
        }
    }

    fn reply(&self, to: Endpoint, pkt_type: PacketType, pool: u16, id: u16) -> Reply {
        Reply {
            to,
            header: HorusHeader {
                pkt_type,
                more_packets: false,
                pool_id: pool,
                src_id: self.switch_id,
                dst_id: id,
                qlen: 0,
                seq_num: 0,
            },
            payload: Vec::new(),
        }
    }

    /// A free node ID for a new worker: the one it asked for when free, else the lowest free
    /// one; free means free in the switch and not kept for a removed member.
    fn free_id(&self, asked: u16) -> Option<u16> {
        let kept: std::collections::BTreeSet<u16> = self.members.values().map(|m| m.id).collect();
        let free = |n: u16| self.m.is_free(n) && !kept.contains(&n);
        if asked < self.m.nodes() && free(asked) {
            return Some(asked);
        }
        (0..self.m.nodes()).find(|&n| free(n))
    }

    /// The member for node `id` of `pool` as the switch holds it, if it does.
    fn adopt(&self, (pool, id): (u16, u16)) -> Option<Member> {
        let (_, a) = self.m.held(id).filter(|&(p, _)| p == pool)?;
        Some(Member {
            pool,
            id,
            mac: a.endpoint.mac.to_string(),
            ip: a.endpoint.ip,
            udp_port: a.endpoint.udp_port,
            port: a.port,
            dst_id: a.dst_id,
            active: true,
            public: false,
            removed_at: None,
        })
    }

    /// The node of `pool` the switch holds at address `at`, if one.
    fn held_at(&self, pool: u16, at: Endpoint) -> Option<u16> {
        self.m
            .members(pool)
            .into_iter()
            .find(|&n| self.m.held(n).is_some_and(|(_, a)| a.endpoint == at))
    }

    /// The workers at IPv4 address `ip`, by node ID: the members there (those removed for
    /// silence too) and the nodes the switch holds there.
    fn nodes_at<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        ip: std::net::Ipv4Addr,
    ) -> Result<Vec<(u16, u16)>, DriverError> {
        self.sync(sw)?;
        let mut keys: Vec<(u16, u16)> = self
            .members
            .values()
            .filter(|m| m.ip == ip)
            .map(|m| (m.pool, m.id))
            .collect();
        for id in 0..self.m.nodes() {
            if let Some((pool, a)) = self.m.held(id)
                && a.endpoint.ip == ip
            {
                keys.push((pool, id));
            }
        }
        keys.sort_unstable_by_key(|k| (k.1, k.0));
        keys.dedup();
        Ok(keys)
    }

    /// A keep-alive of worker `key` heard at `now`: watched again, added back if it was removed
    /// for silence, adopted if the switch holds it from a configuration.
    fn keep_alive<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        key: (u16, u16),
        from: std::net::Ipv4Addr,
        now: Micros,
    ) -> Result<Alive, DriverError> {
        match self.members.get(&key).cloned() {
            Some(m) if m.active => {
                self.counts.keep_alives += 1;
                self.detector.seen(key, now);
                Ok(Alive::Watched)
            }
            Some(mut m) => {
                self.counts.keep_alives += 1;
                if !self.run(sw, m.add_op())? {
                    // No room or the node taken meanwhile: it stays out.
                    self.counts.ignored += 1;
                    return Ok(Alive::Refused);
                }
                m.active = true;
                m.removed_at = None;
                self.counts.readds += 1;
                self.detector.seen(key, now);
                self.members.insert(key, m);
                self.persist();
                Ok(Alive::Watched)
            }
            // A worker the switch holds from a configuration (`apply`) is adopted: watched from
            // its first keep-alive on.
            None => {
                self.sync(sw)?;
                match self.adopt(key) {
                    Some(m) if m.ip != from => {
                        self.counts.refused_wrong_address += 1;
                        Ok(Alive::Refused)
                    }
                    Some(m) => {
                        self.counts.keep_alives += 1;
                        self.detector.seen(key, now);
                        self.members.insert(key, m);
                        self.persist();
                        Ok(Alive::Adopted)
                    }
                    None => {
                        self.counts.ignored += 1;
                        Ok(Alive::Refused)
                    }
                }
            }
        }
    }

    /// Handles one frame from the switch's control port, heard at `now`; the messages to send
    /// (with their trailers when a key is set). An error is the device's (the switch's own
    /// refusals are counted as ignored).
    pub fn on_frame<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        frame: &[u8],
        now: Micros,
    ) -> Result<Vec<Reply>, DriverError> {
        self.clock = now;
        self.counts.packets += 1;
        let Ok(mut f) = wire::parse_frame(frame) else {
            self.counts.ignored += 1;
            return Ok(Vec::new());
        };
        let ip = f.src.ip;
        if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || f.src.mac.0[0] & 1 == 1
        {
            // No worker has that address; answering it would send to every host or none.
            self.counts.refused_bad_address += 1;
            return Ok(Vec::new());
        }
        if !self.allow.allows(ip) {
            self.counts.refused_not_allowed += 1;
            return Ok(Vec::new());
        }
        if let Some(keys) = &self.keys {
            let mut msg = f.header.to_bytes().to_vec();
            msg.extend_from_slice(&f.payload);
            match keys.verify((ip, f.src.udp_port), &msg, &mut self.guard, auth::wall_us()) {
                Ok(n) => f.payload.truncate(n - wire::HEADER_LEN),
                Err(_) => {
                    self.counts.refused_unauthenticated += 1;
                    return Ok(Vec::new());
                }
            }
        }
        let mut out = self.handle(sw, &f, now)?;
        self.seal(&mut out);
        Ok(out)
    }

    /// With a key: each message's trailer, in place of what follows its header (the public
    /// WORKER_ID's padding: a worker with the key reads its header only).
    fn seal(&self, out: &mut [Reply]) {
        if let Some(keys) = &self.keys {
            for r in out {
                r.payload = keys.trailer(
                    (r.to.ip, r.to.udp_port),
                    &r.header.to_bytes(),
                    auth::wall_us(),
                );
            }
        }
    }

    /// A control frame that passed the checks of [`Controller::on_frame`].
    fn handle<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        f: &wire::HorusFrame,
        now: Micros,
    ) -> Result<Vec<Reply>, DriverError> {
        let h = f.header;
        let ip = f.src.ip;
        let mut out = Vec::new();
        match h.pkt_type {
            PacketType::WorkerId => {
                // Each costs a control pass and a state-file write: a flood is bounded.
                if self.limits.admit(ip, h.pool_id, now).is_err() {
                    self.counts.refused_rate += 1;
                    return Ok(out);
                }
                self.sync(sw)?;
                let known = self
                    .members
                    .values()
                    .find(|m| m.pool == h.pool_id && m.endpoint() == f.src)
                    .cloned();
                let adopted = || {
                    self.held_at(h.pool_id, f.src)
                        .and_then(|id| self.adopt((h.pool_id, id)))
                };
                let (mem, changed) = match known.map(Ok).or_else(|| adopted().map(Err)) {
                    // Known: added back if the switch lost it.
                    Some(Ok(mut m)) => {
                        let mut changed = false;
                        if !m.active || !self.in_switch(&m) {
                            if !self.run(sw, m.add_op())? {
                                self.counts.ignored += 1;
                                return Ok(out);
                            }
                            m.active = true;
                            m.removed_at = None;
                            self.counts.readds += 1;
                            changed = true;
                        }
                        (m, changed)
                    }
                    // In the switch already (a configuration's worker): adopted as it is.
                    Some(Err(m)) => (m, true),
                    None => {
                        let room = self.m.has_room(h.pool_id);
                        let Some(id) = self.free_id(h.src_id).filter(|_| room) else {
                            self.counts.ignored += 1;
                            return Ok(out);
                        };
                        let m = Member {
                            pool: h.pool_id,
                            id,
                            mac: f.src.mac.to_string(),
                            ip: f.src.ip,
                            udp_port: f.src.udp_port,
                            port: self.worker_port,
                            dst_id: id,
                            active: true,
                            public: false,
                            removed_at: None,
                        };
                        if !self.run(sw, m.add_op())? {
                            self.counts.ignored += 1;
                            return Ok(out);
                        }
                        self.counts.registrations += 1;
                        (m, true)
                    }
                };
                let key = (mem.pool, mem.id);
                self.detector.seen(key, now);
                out.push(self.reply(mem.endpoint(), PacketType::WorkerIdAck, mem.pool, mem.id));
                self.members.insert(key, mem);
                if changed {
                    self.persist();
                }
            }
            PacketType::KeepAlive => match PublicKeepAlive::parse(&h, &f.payload) {
                // Ours: a known worker's only from its own address.
                Ok(None) => match self.members.get(&(h.pool_id, h.src_id)) {
                    Some(m) if m.ip != f.src.ip => self.counts.refused_wrong_address += 1,
                    Some(_) => {
                        self.keep_alive(sw, (h.pool_id, h.src_id), f.src.ip, now)?;
                    }
                    // A worker this controller does not know (it restarted without its state
                    // file, say): told it is no member, so that it registers again.
                    None => {
                        if self.keep_alive(sw, (h.pool_id, h.src_id), f.src.ip, now)?
                            == Alive::Refused
                        {
                            out.push(self.reply(f.src, PacketType::RemoveAck, h.pool_id, h.src_id));
                        }
                    }
                },
                // A public testbed server's: its workers are the nodes at its address (the
                // public controller knows its servers from its topology as ours from the
                // switch's configuration), each watched.
                Ok(Some(ka)) => {
                    self.counts.public_keep_alives += 1;
                    let keys = self.nodes_at(sw, f.src.ip)?;
                    if keys.is_empty() {
                        self.counts.ignored += 1;
                        // One of this project's workers this controller does not know (it
                        // restarted without its state file, say): told it is no member, so
                        // that it registers again. A public worker is told nothing (it would
                        // run the message as a task).
                        if let (Some(pool), Some(&node)) = (ka.ours, ka.nodes.first()) {
                            out.push(self.reply(f.src, PacketType::RemoveAck, pool, node));
                        }
                        return Ok(out);
                    }
                    let mut adopted = false;
                    for &key in &keys {
                        // A configuration's worker first heard of here is a public server's
                        // (this project's workers register first).
                        if self.keep_alive(sw, key, f.src.ip, now)? == Alive::Adopted {
                            adopted = true;
                            if let Some(m) = self.members.get_mut(&key) {
                                m.public = true;
                            }
                        }
                    }
                    // Newly watched, or numbering its workers otherwise than the switch: told
                    // its first worker's node ID the public way (its workers are consecutive
                    // nodes), which it acknowledges.
                    let nodes: Vec<u16> = keys.iter().map(|k| k.1).collect();
                    if adopted || ka.nodes != nodes {
                        let msg = public_worker_id(self.switch_id, nodes[0]);
                        out.push(Reply {
                            to: f.src,
                            header: HorusHeader::parse(&msg).expect("a header"),
                            payload: msg[wire::HEADER_LEN..].to_vec(),
                        });
                    }
                }
                Err(_) => self.counts.ignored += 1,
            },
            PacketType::WorkerIdAck | PacketType::RemoveAck => self.counts.acks_received += 1,
            _ => self.counts.ignored += 1,
        }
        Ok(out)
    }

    /// Removes the workers silent for longer than the timeout at `now`; the messages to send.
    /// On an error the workers not yet removed stay watched.
    pub fn tick<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        now: Micros,
    ) -> Result<Vec<Reply>, DriverError> {
        self.clock = now;
        if self.retry_save_at.is_some_and(|t| t <= now) {
            self.persist();
        }
        let old: Vec<(u16, u16)> = self
            .members
            .iter()
            .filter(|(_, m)| {
                m.removed_at
                    .is_some_and(|t| now >= t.saturating_add(self.forget_after))
            })
            .map(|(k, _)| *k)
            .collect();
        if !old.is_empty() {
            for k in &old {
                self.members.remove(k);
            }
            self.counts.forgotten += old.len() as u64;
            self.persist();
        }
        let mut out = Vec::new();
        let due = self.detector.expired(now);
        for (i, &key) in due.iter().enumerate() {
            let r = self.remove(sw, key, &mut out);
            if let Err(e) = r {
                for &k in &due[i..] {
                    self.detector.seen(k, now);
                }
                return Err(e);
            }
        }
        self.seal(&mut out);
        Ok(out)
    }

    fn remove<L: Leaf<State = S>>(
        &mut self,
        sw: &mut L,
        key: (u16, u16),
        out: &mut Vec<Reply>,
    ) -> Result<(), DriverError> {
        let Some(mut m) = self.members.get(&key).cloned() else {
            return Ok(());
        };
        let op = ControlOp::RemoveNode {
            pool: m.pool,
            node: m.id,
        };
        // Refused: the switch no longer has it there (removed by another host); either way it
        // is out now.
        if self.run(sw, op)? {
            self.counts.removals += 1;
            if !m.public {
                out.push(self.reply(m.endpoint(), PacketType::RemoveAck, m.pool, m.id));
            }
        }
        m.active = false;
        m.removed_at = Some(self.clock);
        self.members.insert(key, m);
        self.persist();
        Ok(())
    }

    /// When the next silent worker is due for removal.
    pub fn next_deadline(&self) -> Option<Micros> {
        let forget = self
            .members
            .values()
            .filter_map(|m| m.removed_at)
            .min()
            .map(|t| t.saturating_add(self.forget_after));
        [self.detector.next_deadline(), self.retry_save_at, forget]
            .into_iter()
            .flatten()
            .min()
    }

    /// Membership and the controller's counts in the Prometheus text format (the switch's
    /// counters are added by the caller, which reads them).
    pub fn metrics(&self) -> String {
        let c = &self.counts;
        let mut s = String::new();
        let counters: [(&str, &str, u64); 16] = [
            (
                "packets_total",
                "Frames taken from the control port.",
                c.packets,
            ),
            (
                "keep_alives_total",
                "KEEP_ALIVE packets of known workers.",
                c.keep_alives,
            ),
            (
                "public_keep_alives_total",
                "KEEP_ALIVE packets in the public testbed's layout (one a server).",
                c.public_keep_alives,
            ),
            (
                "registrations_total",
                "Workers added on WORKER_ID.",
                c.registrations,
            ),
            ("removals_total", "Workers removed for silence.", c.removals),
            ("readds_total", "Workers added back.", c.readds),
            (
                "acks_received_total",
                "WORKER_ID_ACK and REMOVE_ACK from workers.",
                c.acks_received,
            ),
            ("ignored_total", "Frames not acted on.", c.ignored),
            ("state_writes_total", "State file writes.", c.state_writes),
            (
                "refused_bad_address_total",
                "Control frames from an unspecified, broadcast or multicast address.",
                c.refused_bad_address,
            ),
            (
                "refused_wrong_address_total",
                "Keep-alives of a known worker from another address.",
                c.refused_wrong_address,
            ),
            (
                "refused_not_allowed_total",
                "Control frames from a host outside the allowed networks.",
                c.refused_not_allowed,
            ),
            (
                "refused_rate_total",
                "Registrations over their source's or their pool's rate.",
                c.refused_rate,
            ),
            (
                "refused_unauthenticated_total",
                "With a key: control frames without a right trailer, or sent again.",
                c.refused_unauthenticated,
            ),
            (
                "forgotten_total",
                "Removed workers forgotten, their IDs free again.",
                c.forgotten,
            ),
            (
                "state_write_errors_total",
                "State file writes that failed (tried again a second later).",
                c.state_write_errors,
            ),
        ];
        for (name, help, v) in counters {
            s += &format!(
                "# HELP horus_controller_{name} {help}\n# TYPE horus_controller_{name} counter\nhorus_controller_{name} {v}\n"
            );
        }
        if let Some(k) = &self.keys {
            s += &format!(
                "# HELP horus_controller_key_file_errors_total Changes to the key file that did not parse (the keys in use kept).\n# TYPE horus_controller_key_file_errors_total counter\nhorus_controller_key_file_errors_total {}\n",
                k.reload_errors()
            );
        }
        s += "# HELP horus_worker_up Whether a known worker is in the switch's tables, as the controller last read them.\n# TYPE horus_worker_up gauge\n";
        for m in self.members.values() {
            s += &format!(
                "horus_worker_up{{pool=\"{}\",worker=\"{}\",ip=\"{}\"}} {}\n",
                m.pool,
                m.id,
                m.ip,
                u8::from(m.active)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detector_expires_exactly_the_silent_keys_without_sleeping() {
        let mut d = Detector::new(1000);
        d.seen((1, 0), 0);
        d.seen((1, 1), 500);
        assert!(d.expired(1000).is_empty(), "at the timeout, not past it");
        assert_eq!(d.next_deadline(), Some(1001));
        assert_eq!(d.expired(1001), vec![(1, 0)]);
        d.seen((1, 1), 1400);
        assert!(d.expired(2000).is_empty());
        assert_eq!(d.expired(2401), vec![(1, 1)]);
        assert!(
            d.expired(10_000).is_empty(),
            "an expired key is no longer watched"
        );
        d.seen((2, 3), 5);
        d.forget((2, 3));
        assert!(d.expired(u64::MAX).is_empty());
    }
}
