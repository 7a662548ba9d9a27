//! Workers: the end of the system that runs tasks.
//!
//! A worker process holds one or more worker slots. Each slot is one Horus worker: its own host
//! address ([`crate::link`]), its own node ID in the leaf, its own FCFS queue and thread. A slot
//! speaks the public protocol:
//!
//! - with an ID of its configuration (a public testbed worker's way: IDs are static there) it
//!   serves at once under it; without one it announces itself with WORKER_ID (its pool in
//!   `pool_id`, `src_id` `0xffff`) until the controller answers WORKER_ID_ACK with its ID in
//!   `dst_id` (this project's addition);
//! - it sends the public KEEP_ALIVE every keep-alive period (the 165-byte message, its fields
//!   little endian: [`PublicKeepAlive`]), which the public controller and ours both read, and
//!   takes the public controller's WORKER_ID (its new node ID in `qlen`), answering the public
//!   WORKER_ID_ACK;
//! - it queues the tasks it receives (NEW_TASK, NEW_TASK_RANDOM) and runs them in order; a
//!   multi-packet task once its last packet arrived: this project's (the more-packets flag and
//!   TASK_CONTINUATIONs, matched by client address and `seq_num`) or the public testbed's (as many
//!   NEW_TASKs as `pkts_length` counts packets, matched by client address, `client_id` and
//!   `req_id`);
//! - it answers each task to its client, through the leaf, with the task's `pool_id` and
//!   `seq_num`, the task's `dst_id` in `src_id` (the node the leaf chose: the public worker's
//!   echo), the client's ID in `dst_id`, and in `qlen` the tasks still queued: TASK_DONE, or
//!   TASK_DONE_IDLE when its queue ran dry after it had taken a task marked as coming from the
//!   idle list (`qlen = 1`), so that it is in the leaf's idle list at most once
//!   (`docs/algorithm.md`); the payload goes back with the handler's result in `app_data`.
//!
//! A handler runs each task ([`Handler`]). The synthetic ones take the service time the client
//! asked for (`run_ns`), or draw it from one of the paper's distributions, or a fixed time, and
//! either sleep through it (the slot's thread waits, so that a small machine holds many slots; the
//! thread's timer slack is set to 1 ns so that a sleep ends within microseconds of its time) or
//! spin through it (a core busy, as the public testbed's worker).

use std::collections::{HashMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use horus_model::wire::{Endpoint, HorusFrame, HorusHeader, PacketType};
use horus_workload::service::ServiceTime;
use rand::SeedableRng;
use serde::Serialize;

use crate::link::{self, Inbound, Link};
use crate::payload::{APP_WORDS, PublicKeepAlive, TaskPayload, public_worker_id_ack};

/// `src_id` of a WORKER_ID asking for any ID.
pub const ANY_ID: u16 = horus_host_driver::controller::ANY_ID;

/// A task as a slot runs it.
#[derive(Clone, Debug)]
pub struct Task {
    /// The client.
    pub from: Endpoint,
    /// The first packet's header.
    pub header: HorusHeader,
    pub payload: TaskPayload,
    /// Packets the task came in.
    pub packets: u32,
}

/// Runs a task; returns its result (the reply's `app_data`).
pub type Handler = Box<dyn FnMut(&Task) -> [u64; APP_WORDS] + Send>;

/// Where a synthetic task's service time comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Service {
    /// `run_ns` of the task's payload (the client's draw).
    Payload,
    /// A draw from a distribution (the simulator's named workloads).
    Draw(ServiceTime),
    /// Always this long.
    Fixed(Duration),
}

impl std::str::FromStr for Service {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "payload" {
            return Ok(Service::Payload);
        }
        if let Some(us) = s.strip_prefix("fixed:") {
            let us: f64 = us
                .parse()
                .map_err(|_| format!("fixed:US wants microseconds, got {us:?}"))?;
            if !(us.is_finite() && us >= 0.0) {
                return Err(format!("fixed:US wants a time of at least 0, got {us}"));
            }
            return Ok(Service::Fixed(Duration::from_nanos((us * 1e3) as u64)));
        }
        ServiceTime::named(s)
            .map(Service::Draw)
            .map_err(|e| format!("{e}; or payload (the client's run_ns) or fixed:US"))
    }
}

/// How a synthetic task takes its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Work {
    /// The thread sleeps (timer slack 1 ns).
    Sleep,
    /// The thread spins on the clock.
    Spin,
}

/// Sets the calling thread's timer slack to 1 ns: its sleeps end within microseconds of their
/// time instead of the default 50 us later.
pub fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Waits `d`, as `work` says.
pub fn take_time(d: Duration, work: Work) {
    let end = Instant::now() + d;
    if work == Work::Sleep {
        std::thread::sleep(d);
    }
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// Tasks a slot holds at most by default.
pub const MAX_QUEUE: usize = 4096;

/// The longest service time a synthetic handler takes: a task asking for more (its `run_ns`
/// comes from the network) runs this long, so that a slot stays responsive to its stop.
pub const MAX_SERVICE: Duration = Duration::from_secs(10);

/// The synthetic handler: takes the task's service time from `service` (at most
/// [`MAX_SERVICE`]) and echoes the task's `app_data` with the service time it took in word 0
/// (nanoseconds).
pub fn synthetic(service: Service, work: Work, seed: u64) -> Handler {
    let mut rng = horus_workload::rng::SimRng::seed_from_u64(seed);
    Box::new(move |t: &Task| {
        let d = match &service {
            Service::Payload => Duration::from_nanos(t.payload.run_ns),
            Service::Draw(s) => Duration::from_nanos(s.sample(&mut rng)),
            Service::Fixed(d) => *d,
        }
        .min(MAX_SERVICE);
        take_time(d, work);
        let mut out = t.payload.app_data;
        out[0] = d.as_nanos() as u64;
        out
    })
}

/// One slot's settings.
#[derive(Clone, Debug)]
pub struct SlotConfig {
    pub me: Endpoint,
    /// The leaf's address (its switch socket).
    pub leaf: SocketAddr,
    pub pool: u16,
    /// Its node ID when the configuration gives one (served under at once, as a public
    /// testbed worker); `None`: asked of the controller with WORKER_ID.
    pub id: Option<u16>,
    /// Its server's ID and its leaf's, in its public keep-alive (the public controller finds
    /// servers by them; this project's by address).
    pub server_id: u16,
    pub leaf_id: u16,
    /// Tasks it holds at most (queued, not yet run): more are refused and counted, so that a
    /// flood cannot grow it without bound.
    pub max_queue: usize,
    pub keepalive: Duration,
    /// How long to wait for WORKER_ID_ACK before asking again.
    pub register_retry: Duration,
    pub transport: link::Transport,
    /// The control messages' keyed MAC (`None`: none, the public protocol as it is).
    pub keys: Option<Arc<horus_host_driver::auth::Keys>>,
    /// The hosts whose tasks it runs (the others' counted as foreign): `None`, its first hop's
    /// on the emulated network and anyone's over the kernel's UDP, where a task's source is its
    /// client, not the switch on the path (`link::FramesFrom`).
    pub tasks_from: Option<horus_host_driver::security::Allow>,
}

/// What a slot counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SlotStats {
    pub id: Option<u16>,
    pub tasks: u64,
    /// Of the tasks, those the idle list sent (`qlen = 1`).
    pub from_idle_list: u64,
    pub done_idle: u64,
    pub keep_alives: u64,
    pub registrations_sent: u64,
    /// Registrations again after the controller said the slot is no member.
    pub reregistrations: u64,
    /// Public WORKER_IDs taken (its ID changed to the one in `qlen`).
    pub renumbered: u64,
    /// Controller messages from an address other than the leaf's: not believed.
    pub foreign: u64,
    /// With keys: controller messages without a right trailer, or sent again: not believed.
    pub unauthenticated: u64,
    /// Tasks refused because the queue held `max_queue` already.
    pub queue_full: u64,
    pub remove_acks: u64,
    /// Answers and keep-alives the socket refused (a full send buffer): lost, as on a wire.
    pub send_errors: u64,
    /// Datagrams that were not frames, frames that were not tasks of this slot's pool, tasks
    /// without the testbed payload: dropped.
    pub dropped: u64,
}

fn header(t: PacketType, pool: u16, src: u16, dst: u16, qlen: u16, seq: u16) -> HorusHeader {
    HorusHeader {
        pkt_type: t,
        more_packets: false,
        pool_id: pool,
        src_id: src,
        dst_id: dst,
        qlen,
        seq_num: seq,
    }
}

/// A multi-packet task's packets so far.
type Partial = (HorusHeader, Option<TaskPayload>, u32, Instant);

/// Which task a packet of a multi-packet task belongs to: this project's (the client's address
/// and `seq_num`) or the public testbed's (the client's address, `client_id`, `req_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PartialKey {
    Ours(Endpoint, u16),
    Public(Endpoint, u16, u32),
}

impl PartialKey {
    /// The client's IPv4 address.
    fn source(&self) -> Ipv4Addr {
        match self {
            PartialKey::Ours(e, _) | PartialKey::Public(e, _, _) => e.ip,
        }
    }
}

/// A slot holds at most [`PARTIAL_KEPT`] incomplete multi-packet tasks: when it holds that many,
/// those whose next packet has not come for this long go (their client stopped, or a packet was
/// lost), and if none is that old the new task is dropped. Bad input cannot grow a slot's memory
/// or its work per packet without bound.
const PARTIAL_TIMEOUT: Duration = Duration::from_secs(1);
const PARTIAL_KEPT: usize = 256;
/// Incomplete multi-packet tasks a slot holds at most from one client address.
const PARTIAL_PER_SOURCE: usize = 32;

/// A running slot's state.
struct Slot {
    cfg: SlotConfig,
    link: Link,
    /// Its node ID, shared with the keep-alive thread (a public WORKER_ID changes it).
    id: Arc<AtomicU16>,
    queue: VecDeque<Task>,
    /// Packets of multi-packet tasks so far: the first packet's header and payload, the count,
    /// when the last one came.
    partial: HashMap<PartialKey, Partial>,
    /// A task from the idle list was taken and TASK_DONE_IDLE not yet sent.
    owe_idle: bool,
    /// The controller said it is no member: register again before the next task.
    reregister: bool,
    stats: SlotStats,
    leaf_host: Endpoint,
}

impl Slot {
    fn take(&mut self, msg: Inbound) {
        let f: HorusFrame = match msg {
            Inbound::Frame(f) => f,
            Inbound::Controller(h) => {
                match h.pkt_type {
                    PacketType::RemoveAck => {
                        self.stats.remove_acks += 1;
                        // Not a member (removed for silence, or the controller lost it): a
                        // registered slot registers again, a static one is added back at its
                        // next keep-alive; either way as an idle worker.
                        self.owe_idle = false;
                        self.reregister = self.cfg.id.is_none();
                    }
                    PacketType::WorkerIdAck => {}
                    // The public controller's: the new ID in `qlen`, acknowledged the public way.
                    PacketType::WorkerId => {
                        self.id.store(h.qlen, Ordering::Relaxed);
                        self.stats.renumbered += 1;
                        let ack = public_worker_id_ack(&[h.qlen]);
                        let header = HorusHeader::parse(&ack).expect("a header");
                        if self
                            .link
                            .send_control(
                                self.leaf_host,
                                header,
                                ack[horus_model::wire::HEADER_LEN..].to_vec(),
                            )
                            .is_err()
                        {
                            self.stats.send_errors += 1;
                        }
                    }
                    _ => self.stats.dropped += 1,
                }
                return;
            }
            Inbound::Malformed(_) => {
                self.stats.dropped += 1;
                return;
            }
            Inbound::Foreign(_) => {
                self.stats.foreign += 1;
                return;
            }
            Inbound::Unauthenticated(_) => {
                self.stats.unauthenticated += 1;
                return;
            }
        };
        let h = f.header;
        if !h.pkt_type.is_task() || h.pool_id != self.cfg.pool {
            self.stats.dropped += 1;
            return;
        }
        let payload = TaskPayload::parse(&f.payload).ok();
        // A public multi-packet task: NEW_TASKs with no flag, `pkts_length` counting more than
        // one packet.
        let public_of = payload
            .filter(|_| !h.more_packets && h.pkt_type != PacketType::TaskContinuation)
            .filter(|p| p.packets() > 1);
        if let Some(p) = public_of {
            let key = PartialKey::Public(f.src, p.client_id, p.req_id);
            let (first, n) = match self.partial.remove(&key) {
                Some((first, _, n, _)) => (first, n + 1),
                None => (h, 1),
            };
            if n < p.packets() {
                self.hold(key, (first, Some(p), n, Instant::now()));
                return;
            }
            self.enqueue(f.src, first, p, n);
            return;
        }
        let key = PartialKey::Ours(f.src, h.seq_num);
        let (first, p, n) = if h.pkt_type == PacketType::TaskContinuation {
            match self.partial.remove(&key) {
                Some((first, p, n, _)) => (first, p.or(payload), n + 1),
                None => {
                    self.stats.dropped += 1;
                    return;
                }
            }
        } else {
            (h, payload, 1)
        };
        if h.more_packets {
            self.hold(key, (first, p, n, Instant::now()));
            return;
        }
        let Some(payload) = p else {
            self.stats.dropped += 1;
            return;
        };
        self.enqueue(f.src, first, payload, n);
    }

    /// Keeps an incomplete multi-packet task, within [`PARTIAL_KEPT`].
    fn hold(&mut self, key: PartialKey, part: Partial) {
        let from = key.source();
        if !self.partial.contains_key(&key)
            && self.partial.keys().filter(|k| k.source() == from).count() >= PARTIAL_PER_SOURCE
        {
            // One client may not hold more: a flood of first packets from one source cannot
            // starve the others' tasks.
            self.stats.dropped += 1;
            return;
        }
        if self.partial.len() >= PARTIAL_KEPT && !self.partial.contains_key(&key) {
            let before = self.partial.len();
            self.partial.retain(|_, e| e.3.elapsed() < PARTIAL_TIMEOUT);
            self.stats.dropped += (before - self.partial.len()) as u64;
            if self.partial.len() >= PARTIAL_KEPT {
                // All recent: the new task is the one dropped.
                self.stats.dropped += 1;
                return;
            }
        }
        self.partial.insert(key, part);
    }

    /// Queues a whole task whose first packet had header `first`; refused (counted) when the
    /// queue is full.
    fn enqueue(&mut self, from: Endpoint, first: HorusHeader, payload: TaskPayload, packets: u32) {
        if self.queue.len() >= self.cfg.max_queue {
            self.stats.queue_full += 1;
            return;
        }
        if first.qlen == 1 {
            self.stats.from_idle_list += 1;
            self.owe_idle = true;
        }
        self.queue.push_back(Task {
            from,
            header: first,
            payload,
            packets,
        });
    }

    fn drain(&mut self) -> Result<()> {
        while let Some(m) = self.link.recv(None)? {
            self.take(m);
        }
        Ok(())
    }
}

/// Sends the public KEEP_ALIVE (server `server` of leaf `leaf_id`, one worker: the slot's ID as
/// `id` holds it; marked as this project's, with its pool) every `period` from its own thread until `stop`, so that a slot running a long
/// task stays known to the controller; the count sent and the sends refused.
fn keep_alives(
    mut link: Link,
    leaf: Endpoint,
    (server, leaf_id, pool): (u16, u16, u16),
    id: Arc<AtomicU16>,
    period: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let (mut sent, mut errors) = (0u64, 0);
        let mut next = Instant::now() + period;
        while !stop.load(Ordering::Relaxed) {
            let left = next.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                std::thread::sleep(left.min(Duration::from_millis(20)));
                continue;
            }
            let m = PublicKeepAlive {
                server,
                leaf: leaf_id,
                nodes: vec![id.load(Ordering::Relaxed)],
                ours: Some(pool),
            }
            .to_message(sent as u32);
            let h = HorusHeader::parse(&m).expect("a header");
            match link.send_control(leaf, h, m[horus_model::wire::HEADER_LEN..].to_vec()) {
                Ok(()) => sent += 1,
                Err(_) => errors += 1,
            }
            next += period;
        }
        (sent, errors)
    })
}

/// Sets its flag when dropped: the keep-alive thread's stop, whichever way the slot ends.
struct Silence(Arc<AtomicBool>);

impl Drop for Silence {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Registers a slot with the leaf's controller, asking for ID `asked` ([`ANY_ID`]: any): its ID.
fn register(slot: &mut Slot, asked: u16, stop: &AtomicBool) -> Result<Option<u16>> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let h = header(PacketType::WorkerId, slot.cfg.pool, asked, 0, 0, 0);
        slot.link.send_control(slot.leaf_host, h, Vec::new())?;
        slot.stats.registrations_sent += 1;
        let until = Instant::now() + slot.cfg.register_retry;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match slot.link.recv(Some(left))? {
                Some(Inbound::Controller(a))
                    if a.pkt_type == PacketType::WorkerIdAck && a.pool_id == slot.cfg.pool =>
                {
                    return Ok(Some(a.dst_id));
                }
                Some(m) => slot.take(m),
                None => {}
            }
        }
    }
}

/// Runs one slot until `stop` is set: registers, then serves its queue.
pub fn run_slot(
    cfg: SlotConfig,
    mut handler: Handler,
    stop: Arc<AtomicBool>,
    registered: impl FnOnce(u16),
) -> Result<SlotStats> {
    precise_sleeps();
    let mut link = Link::bind_with(cfg.me, cfg.leaf, cfg.transport)?;
    link.keys = cfg.keys.clone();
    if let Some(a) = &cfg.tasks_from {
        link.frames_from = link::FramesFrom::Allowed(a.clone());
    }
    let leaf_host = link::host(match cfg.leaf.ip() {
        std::net::IpAddr::V4(ip) => ip,
        std::net::IpAddr::V6(_) => bail!("the leaf's address must be IPv4, got {}", cfg.leaf),
    });
    let mut slot = Slot {
        cfg,
        link,
        id: Arc::new(AtomicU16::new(ANY_ID)),
        queue: VecDeque::new(),
        partial: HashMap::new(),
        owe_idle: false,
        reregister: false,
        stats: SlotStats::default(),
        leaf_host,
    };
    let id = match slot.cfg.id {
        // Static, as a public testbed worker's: in the leaf's idle list from its start there.
        Some(id) => id,
        None => {
            let Some(id) = register(&mut slot, ANY_ID, &stop)? else {
                return Ok(slot.stats);
            };
            // A new node joins the leaf's idle list, but a slot restarted under an ID the
            // controller still holds may not be in it: its first answer on an empty queue is
            // TASK_DONE_IDLE, which the leaf drops as a duplicate if the slot was there already.
            slot.owe_idle = true;
            id
        }
    };
    slot.id.store(id, Ordering::Relaxed);
    registered(id);
    // The keep-alives stop with the slot however it ends (its stop, or an error that ends its
    // loop): a slot that no longer serves must fall silent, so that the controller removes it.
    let silenced = Arc::new(AtomicBool::new(false));
    let _silence = Silence(Arc::clone(&silenced));
    let ka_stop = Arc::clone(&silenced);
    let ka = keep_alives(
        slot.link.try_clone()?,
        slot.leaf_host,
        (slot.cfg.server_id, slot.cfg.leaf_id, slot.cfg.pool),
        Arc::clone(&slot.id),
        slot.cfg.keepalive,
        ka_stop,
    );
    while !stop.load(Ordering::Relaxed) {
        if slot.reregister {
            slot.reregister = false;
            let asked = slot.id.load(Ordering::Relaxed);
            let Some(id) = register(&mut slot, asked, &stop)? else {
                break;
            };
            slot.id.store(id, Ordering::Relaxed);
            slot.owe_idle = true;
            slot.stats.reregistrations += 1;
        }
        let Some(task) = slot.queue.pop_front() else {
            if let Some(m) = slot.link.recv(Some(Duration::from_millis(50)))? {
                slot.take(m);
            }
            continue;
        };
        let result = handler(&task);
        slot.drain()?;
        slot.stats.tasks += 1;
        let idle = slot.queue.is_empty() && slot.owe_idle;
        let t = if idle {
            slot.owe_idle = false;
            slot.stats.done_idle += 1;
            PacketType::TaskDoneIdle
        } else {
            PacketType::TaskDone
        };
        let qlen = slot.queue.len().min(u16::MAX as usize) as u16;
        let h = header(
            t,
            slot.cfg.pool,
            task.header.dst_id,
            task.payload.client_id,
            qlen,
            task.header.seq_num,
        );
        let reply = TaskPayload {
            app_data: result,
            ..task.payload
        };
        if slot.link.send(task.from, h, reply.to_bytes()).is_err() {
            slot.stats.send_errors += 1;
        }
    }
    silenced.store(true, Ordering::Relaxed);
    let (sent, errors) = ka
        .join()
        .map_err(|_| anyhow::anyhow!("the keep-alive thread panicked"))?;
    slot.stats.keep_alives = sent;
    slot.stats.send_errors += errors;
    slot.stats.id = Some(slot.id.load(Ordering::Relaxed));
    Ok(slot.stats)
}

/// A worker process's slots: `slots` consecutive addresses from `first_ip`, the node IDs of
/// the configuration from `first_id` on (or each asked of the controller); in their public
/// keep-alives, server `first_id` (or 0) on, of leaf 0.
pub fn slot_configs(
    first_ip: Ipv4Addr,
    slots: u16,
    leaf: SocketAddr,
    pool: u16,
    first_id: Option<u16>,
    keepalive: Duration,
) -> Result<Vec<SlotConfig>> {
    let base = u32::from(first_ip);
    if u64::from(base) + u64::from(slots) > u64::from(u32::MAX) {
        bail!("{slots} slots from {first_ip} run past the last IPv4 address");
    }
    Ok((0..slots)
        .map(|i| SlotConfig {
            me: link::host(Ipv4Addr::from(base + u32::from(i))),
            leaf,
            pool,
            id: first_id.map(|f| f.saturating_add(i)),
            server_id: first_id.unwrap_or(0).saturating_add(i),
            leaf_id: 0,
            max_queue: MAX_QUEUE,
            keepalive,
            register_retry: Duration::from_millis(200),
            transport: link::Transport::Frames,
            keys: None,
            tasks_from: None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot at 127.78.`net`.1 (each test its own: tests run side by side).
    fn slot_at(net: u8) -> Slot {
        let me = link::host(Ipv4Addr::new(127, 78, net, 1));
        let leaf = SocketAddr::from((Ipv4Addr::new(127, 78, net, 2), 1234));
        Slot {
            cfg: slot_configs(me.ip, 1, leaf, 3, None, Duration::from_secs(1))
                .unwrap()
                .remove(0),
            link: Link::bind(me, leaf).unwrap(),
            id: Arc::new(AtomicU16::new(0)),
            queue: VecDeque::new(),
            partial: HashMap::new(),
            owe_idle: false,
            reregister: false,
            stats: SlotStats::default(),
            leaf_host: link::host(Ipv4Addr::new(127, 78, net, 2)),
        }
    }

    fn slot() -> Slot {
        slot_at(1)
    }

    fn packet(t: PacketType, more: bool, seq: u16, qlen: u16) -> Inbound {
        packet_from(9, t, more, seq, qlen)
    }

    /// A packet from client 127.78.1.`client`.
    fn packet_from(client: u8, t: PacketType, more: bool, seq: u16, qlen: u16) -> Inbound {
        Inbound::Frame(HorusFrame::new(
            link::host(Ipv4Addr::new(127, 78, 1, client)),
            link::host(Ipv4Addr::new(127, 78, 1, 1)),
            HorusHeader {
                more_packets: more,
                ..header(t, 3, 1, 0, qlen, seq)
            },
            TaskPayload::default().to_bytes(),
        ))
    }

    #[test]
    fn a_multi_packet_task_queues_at_its_last_packet_and_stale_ones_are_dropped() {
        let mut s = slot();
        s.take(packet(PacketType::NewTask, true, 7, 1));
        s.take(packet(PacketType::TaskContinuation, true, 7, 0));
        assert!(s.queue.is_empty());
        s.take(packet(PacketType::TaskContinuation, false, 7, 0));
        assert_eq!(s.queue.len(), 1);
        assert_eq!(s.queue[0].packets, 3);
        assert_eq!(s.queue[0].header.pkt_type, PacketType::NewTask);
        assert!(s.owe_idle, "the first packet came from the idle list");
        // A continuation without its first packet, a task of another pool: dropped.
        s.take(packet(PacketType::TaskContinuation, false, 8, 0));
        let mut other = packet(PacketType::NewTask, false, 9, 0);
        if let Inbound::Frame(f) = &mut other {
            f.header.pool_id = 4;
        }
        s.take(other);
        assert_eq!((s.queue.len(), s.stats.dropped), (1, 2));
        // Incomplete tasks older than the timeout go once the slot holds PARTIAL_KEPT of them.
        let old = Instant::now() - 2 * PARTIAL_TIMEOUT;
        let client = |seq: u16| 10 + (seq % 16) as u8;
        for seq in 0..PARTIAL_KEPT as u16 {
            let h = header(PacketType::NewTask, 3, 1, 0, 0, 1000 + seq);
            s.partial.insert(
                PartialKey::Ours(
                    link::host(Ipv4Addr::new(127, 78, 1, client(seq))),
                    h.seq_num,
                ),
                (h, None, 1, old),
            );
        }
        s.take(packet(PacketType::NewTask, true, 20, 0));
        assert_eq!(s.partial.len(), 1);
        assert_eq!(s.stats.dropped, 2 + PARTIAL_KEPT as u64);
        // When all are recent, the new one is dropped and the others kept.
        for seq in 0..PARTIAL_KEPT as u16 - 1 {
            s.take(packet_from(
                client(seq),
                PacketType::NewTask,
                true,
                2000 + seq,
                0,
            ));
        }
        assert_eq!(s.partial.len(), PARTIAL_KEPT);
        s.take(packet_from(40, PacketType::NewTask, true, 5000, 0));
        assert_eq!(s.partial.len(), PARTIAL_KEPT);
        assert_eq!(s.stats.dropped, 3 + PARTIAL_KEPT as u64);
        // Their continuations still complete them.
        s.take(packet_from(
            client(0),
            PacketType::TaskContinuation,
            false,
            2000,
            0,
        ));
        assert_eq!(s.queue.len(), 2);
    }

    #[test]
    fn one_client_holds_at_most_its_share_of_incomplete_tasks() {
        let mut s = slot_at(5);
        // A flood of first packets from one client: it keeps PARTIAL_PER_SOURCE of them.
        for seq in 0..1000 {
            s.take(packet_from(66, PacketType::NewTask, true, seq, 0));
        }
        assert_eq!(s.partial.len(), PARTIAL_PER_SOURCE);
        assert_eq!(s.stats.dropped, 1000 - PARTIAL_PER_SOURCE as u64);
        // Another client's 3-packet task is still taken and completed.
        s.take(packet_from(7, PacketType::NewTask, true, 1, 0));
        s.take(packet_from(7, PacketType::TaskContinuation, true, 1, 0));
        s.take(packet_from(7, PacketType::TaskContinuation, false, 1, 0));
        assert_eq!(s.queue.len(), 1);
        assert_eq!(s.queue[0].packets, 3);
    }

    /// A task as the public client would send one of several packets: a NEW_TASK with no flag,
    /// `pkts_length` counting `packets` packets of 165 bytes.
    fn public_packet(req_id: u32, packets: u32, seq: u16) -> Inbound {
        Inbound::Frame(HorusFrame::new(
            link::host(Ipv4Addr::new(127, 78, 1, 9)),
            link::host(Ipv4Addr::new(127, 78, 1, 1)),
            header(PacketType::NewTask, 3, 0, 0, 0, seq),
            TaskPayload {
                client_id: 110,
                req_id,
                pkts_length: TaskPayload::length_of(packets),
                ..TaskPayload::default()
            }
            .to_bytes(),
        ))
    }

    #[test]
    fn a_full_queue_refuses_tasks_and_controller_messages_come_from_the_leaf_only() {
        let mut s = slot_at(4);
        s.cfg.max_queue = 3;
        for seq in 0..5 {
            s.take(packet(PacketType::NewTask, false, seq, 0));
        }
        assert_eq!((s.queue.len(), s.stats.queue_full), (3, 2));
        s.take(Inbound::Foreign(SocketAddr::from((
            Ipv4Addr::new(10, 0, 0, 66),
            1234,
        ))));
        assert_eq!((s.stats.foreign, s.stats.renumbered), (1, 0));
    }

    #[test]
    fn a_public_multi_packet_task_queues_once_at_its_last_packet() {
        let mut s = slot_at(2);
        // Packets of two tasks interleaved (slots 0, 1, 2 little endian in seq_num).
        s.take(public_packet(7, 3, 0));
        s.take(public_packet(8, 2, 0));
        s.take(public_packet(7, 3, 1));
        assert!(s.queue.is_empty());
        s.take(public_packet(8, 2, 0x0100));
        assert_eq!(s.queue.len(), 1);
        assert_eq!((s.queue[0].payload.req_id, s.queue[0].packets), (8, 2));
        s.take(public_packet(7, 3, 0x0200));
        assert_eq!(s.queue.len(), 2);
        assert_eq!((s.queue[1].payload.req_id, s.queue[1].packets), (7, 3));
        // A one-packet task (pkts_length 165, or 0) queues at once.
        s.take(public_packet(9, 1, 0));
        s.take(public_packet(10, 0, 0));
        assert_eq!(s.queue.len(), 4);
        assert!(s.partial.is_empty());
        assert_eq!(s.stats.dropped, 0);
    }

    #[test]
    fn the_public_controllers_worker_id_renumbers_the_slot_and_is_acknowledged() {
        let mut s = slot_at(3);
        let msg = horus_model::wire::payload::public_worker_id(3, 12);
        s.take(crate::link::classify(&msg));
        assert_eq!(s.id.load(Ordering::Relaxed), 12);
        assert_eq!((s.stats.renumbered, s.stats.dropped), (1, 0));
    }
}
