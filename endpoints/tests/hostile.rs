//! Hostile traffic against a software leaf and its controller, over real UDP sockets on
//! loopback: hosts outside the allowed networks, frames whose destination no configuration
//! names, floods of registrations. Each test has its own addresses (`127.1xx.<pid>.0/24`).

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use horus_endpoints::link;
use horus_endpoints::switch::{self, ControllerOpts, Engine, RunOpts, SoftSwitch, SwitchStats};
use horus_host_driver::auth::{Guard, Keys, wall_us};
use horus_host_driver::controller::Counts;
use horus_model::config::Config;
use horus_model::wire::{HorusFrame, HorusHeader, PacketType};

/// This test's network: `127.<second>.<pid>.0/24`.
fn net(second: u8) -> [u8; 3] {
    [127, second, (std::process::id() % 250) as u8]
}

fn ip(n: [u8; 3], host: u8) -> Ipv4Addr {
    Ipv4Addr::new(n[0], n[1], n[2], host)
}

/// A leaf at `.11` of `n` with pool 1 (room for 8 registered workers), its spine at `.1`; then
/// `extra` TOML.
fn leaf_cfg(n: [u8; 3], extra: &str) -> Config {
    let t = horus_endpoints::demo::Topology::new(n, 1, 8).unwrap();
    Config::from_toml_str(&(t.leaf_toml_open(1) + extra)).unwrap()
}

/// A leaf of `cfg` with its controller, serving in a thread until the flag is set: its counts and
/// its controller's.
fn start_leaf(cfg: Config) -> (Arc<AtomicBool>, JoinHandle<(SwitchStats, Counts)>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let start = Instant::now();
        let mut s =
            SoftSwitch::open(&cfg, Engine::Model, 1, Some(ControllerOpts::default()), 0).unwrap();
        let listen = SocketAddr::from((cfg.switch.ip, 1234));
        let opts = RunOpts {
            stop: Some(s2),
            ..Default::default()
        };
        tx.send(()).unwrap();
        switch::run(&mut s, listen, &opts, start, |_| Ok(())).unwrap();
        (s.stats.clone(), s.controller().unwrap().counts.clone())
    });
    rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    (stop, h)
}

/// A host's socket at `at`:1234, waiting at most 20 ms a read.
fn host(at: Ipv4Addr) -> UdpSocket {
    let s = UdpSocket::bind((at, 1234)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    s
}

fn header(t: PacketType, pool: u16, src_id: u16, dst_id: u16) -> HorusHeader {
    HorusHeader {
        pkt_type: t,
        more_packets: false,
        pool_id: pool,
        src_id,
        dst_id,
        qlen: 0,
        seq_num: 0,
    }
}

/// A frame from `from` (its Horus port) to `to` carrying `h`, as a host hands it to its switch.
fn frame(from: Ipv4Addr, to: Ipv4Addr, h: HorusHeader, payload: Vec<u8>) -> Vec<u8> {
    HorusFrame::new(link::host(from), link::host(to), h, payload).to_bytes()
}

/// The controller's answers `sock` receives within `wait`.
fn answers(sock: &UdpSocket, wait: Duration) -> Vec<HorusHeader> {
    let until = Instant::now() + wait;
    let mut buf = [0u8; 2048];
    let mut out = Vec::new();
    while Instant::now() < until {
        if let Ok((n, _)) = sock.recv_from(&mut buf)
            && let Ok(h) = HorusHeader::parse(&buf[..n])
        {
            out.push(h);
        }
    }
    out
}

/// Outside the allowed networks, a host is not heard: its datagrams are dropped before the
/// engine, however many it sends for 2 s, and a frame carried by an allowed host that claims an
/// outside source is refused by the controller; a host inside registers.
#[test]
fn hosts_outside_the_allowed_networks_are_not_heard() {
    let n = net(110);
    let outside = net(111);
    let cfg = leaf_cfg(n, &format!("\n[security]\nallow = [\"{}/24\"]\n", ip(n, 0)));
    let leaf = cfg.switch.ip;
    let (stop, h) = start_leaf(cfg);
    let stranger = host(ip(outside, 40));
    let wid = |from| {
        frame(
            from,
            leaf,
            header(PacketType::WorkerId, 1, 0xffff, 0),
            Vec::new(),
        )
    };
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed() < Duration::from_secs(2) {
        for _ in 0..100 {
            if stranger
                .send_to(&wid(ip(outside, 40)), (leaf, 1234))
                .is_ok()
            {
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(answers(&stranger, Duration::from_millis(200)).is_empty());
    // An allowed host forwarding a frame whose source is outside: the controller refuses it.
    let inside = host(ip(n, 40));
    inside.send_to(&wid(ip(outside, 41)), (leaf, 1234)).unwrap();
    inside.send_to(&wid(ip(n, 40)), (leaf, 1234)).unwrap();
    let a = answers(&inside, Duration::from_millis(300));
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].pkt_type, PacketType::WorkerIdAck);
    stop.store(true, Ordering::Relaxed);
    let (stats, counts) = h.join().unwrap();
    let refused = stats.refused_not_allowed;
    assert!(
        refused > 1000 && refused <= sent,
        "sent {sent}, refused {refused}"
    );
    // Every datagram refused or dropped by the kernel, where the kernel tells its drops.
    let dropped = match stats.kernel_drops {
        Some(d) => {
            assert!(
                refused + d >= sent,
                "sent {sent}, refused {refused}, dropped by the kernel {d}"
            );
            d.to_string()
        }
        None => "(unknown: this kernel does not tell; the sum is not checked)".to_string(),
    };
    assert_eq!(counts.refused_not_allowed, 1);
    assert_eq!(counts.registrations, 1);
    eprintln!(
        "2 s flood from outside: {sent} datagrams, {} refused, {dropped} dropped by the kernel",
        stats.refused_not_allowed
    );
}

/// A frame whose destination is outside the allowed networks (here a datagram for another
/// port, which the leaf passes through unchanged) is not relayed; one to an allowed host is.
#[test]
fn the_switch_relays_only_to_allowed_networks() {
    let n = net(112);
    let outside = net(113);
    let cfg = leaf_cfg(n, &format!("\n[security]\nallow = [\"{}/24\"]\n", ip(n, 0)));
    let leaf = cfg.switch.ip;
    let (stop, h) = start_leaf(cfg);
    let victim = UdpSocket::bind((ip(outside, 9), 5555)).unwrap();
    victim
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let friend = UdpSocket::bind((ip(n, 50), 5555)).unwrap();
    friend
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let inside = host(ip(n, 40));
    let to = |dst: Ipv4Addr| {
        let mut d = link::host(dst);
        d.udp_port = 5555;
        HorusFrame::new(
            link::host(ip(n, 40)),
            d,
            header(PacketType::NewTask, 1, 0, 0),
            vec![0; 165],
        )
        .to_bytes()
    };
    for _ in 0..50 {
        inside.send_to(&to(ip(outside, 9)), (leaf, 1234)).unwrap();
    }
    inside.send_to(&to(ip(n, 50)), (leaf, 1234)).unwrap();
    let count = |s: &UdpSocket| {
        let until = Instant::now() + Duration::from_millis(300);
        let mut buf = [0u8; 2048];
        let mut k = 0;
        while Instant::now() < until {
            if s.recv_from(&mut buf).is_ok() {
                k += 1;
            }
        }
        k
    };
    assert_eq!(count(&friend), 1, "relayed to the allowed host");
    assert_eq!(count(&victim), 0, "nothing relayed outside");
    stop.store(true, Ordering::Relaxed);
    let (stats, _) = h.join().unwrap();
    assert_eq!(stats.refused_relay, 50);
}

/// A worker believes tasks only from its leaf: a task sent straight to it by another host is
/// counted as foreign and not run; the same task through the leaf is answered.
#[test]
fn a_worker_takes_tasks_only_through_its_leaf() {
    use horus_endpoints::payload::TaskPayload;
    use horus_endpoints::worker;
    let n = net(114);
    let leaf = host(ip(n, 11));
    let cfg = worker::slot_configs(
        ip(n, 32),
        1,
        SocketAddr::from((ip(n, 11), 1234)),
        1,
        Some(0),
        Duration::from_secs(10),
    )
    .unwrap()
    .remove(0);
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let slot = std::thread::spawn(move || {
        let handler: worker::Handler = Box::new(|_| [0; horus_endpoints::payload::APP_WORDS]);
        worker::run_slot(cfg, handler, s2, |_| {}).unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    let p = TaskPayload {
        pkts_length: TaskPayload::length_of(1),
        ..TaskPayload::default()
    };
    let task = frame(
        ip(n, 200),
        ip(n, 32),
        HorusHeader {
            seq_num: 1,
            ..header(PacketType::NewTask, 1, 0, 0)
        },
        p.to_bytes(),
    );
    let forger = host(ip(n, 66));
    for _ in 0..20 {
        forger.send_to(&task, (ip(n, 32), 1234)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    leaf.send_to(&task, (ip(n, 32), 1234)).unwrap();
    let until = Instant::now() + Duration::from_millis(500);
    let mut buf = [0u8; 2048];
    let mut done = 0;
    while Instant::now() < until {
        if let Ok((k, _)) = leaf.recv_from(&mut buf)
            && let Ok(f) = horus_model::wire::parse_frame(&buf[..k])
            && f.header.pkt_type.is_reply()
        {
            done += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let st = slot.join().unwrap();
    assert_eq!(
        done, 1,
        "one answer, to the task that came through the leaf"
    );
    assert_eq!((st.tasks, st.foreign), (1, 20));
}

/// Over the kernel's UDP a task's source is its client, so a worker given `--allow` runs tasks
/// only from hosts of those networks: a host outside sends 20, counted as foreign and not run;
/// the allowed client's one task is answered, to it.
#[test]
fn over_the_kernels_udp_a_worker_takes_tasks_only_from_allowed_networks() {
    use horus_endpoints::payload::TaskPayload;
    use horus_endpoints::worker;
    use horus_host_driver::security::Allow;
    let n = net(121);
    let _leaf = host(ip(n, 11));
    let mut cfg = worker::slot_configs(
        ip(n, 32),
        1,
        SocketAddr::from((ip(n, 11), 1234)),
        1,
        Some(0),
        Duration::from_secs(10),
    )
    .unwrap()
    .remove(0);
    cfg.transport = link::Transport::Kernel;
    cfg.tasks_from = Some(Allow::new(vec![horus_model::net::Ipv4Net::of(
        ip(n, 200),
        32,
    )]));
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let slot = std::thread::spawn(move || {
        let handler: worker::Handler = Box::new(|_| [0; horus_endpoints::payload::APP_WORDS]);
        worker::run_slot(cfg, handler, s2, |_| {}).unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    let p = TaskPayload {
        pkts_length: TaskPayload::length_of(1),
        ..TaskPayload::default()
    };
    let mut task = HorusHeader {
        seq_num: 1,
        ..header(PacketType::NewTask, 1, 0, 0)
    }
    .to_bytes()
    .to_vec();
    task.extend_from_slice(&p.to_bytes());
    let forger = host(ip(n, 66));
    for _ in 0..20 {
        forger.send_to(&task, (ip(n, 32), 1234)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    let client = host(ip(n, 200));
    client.send_to(&task, (ip(n, 32), 1234)).unwrap();
    let done = |sock: &UdpSocket| {
        answers(sock, Duration::from_millis(400))
            .iter()
            .filter(|h| h.pkt_type.is_reply())
            .count()
    };
    let (to_client, to_forger) = (done(&client), done(&forger));
    stop.store(true, Ordering::Relaxed);
    let st = slot.join().unwrap();
    assert_eq!(
        (to_client, to_forger),
        (1, 0),
        "one answer, to the allowed client"
    );
    assert_eq!((st.tasks, st.foreign), (1, 20));
}

/// A client counts an answer only when it comes through its switch: forged answers sent
/// straight to it, ahead of the real ones, are counted as forged, not as answers.
#[test]
fn a_client_counts_forged_answers_apart() {
    use horus_endpoints::client::{self, ClientConfig, Policy};
    use horus_workload::service::ServiceTime;
    let n = net(115);
    let leaf = host(ip(n, 11));
    let forger = host(ip(n, 66));
    let cfg = ClientConfig {
        me: link::host(ip(n, 200)),
        scheduler: link::host(ip(n, 11)),
        pool: 1,
        client_id: 7,
        rate: 200.0,
        duration: Duration::from_millis(500),
        service: ServiceTime::Discrete {
            values_ns: vec![1000],
            probs: vec![1.0],
        },
        policy: Policy::Horus,
        packets: 1,
        seed: 1,
        drain: Duration::from_millis(300),
        transport: link::Transport::Frames,
        // The switches: here the one "leaf" (the forger shares its network).
        answers_from: Some(horus_host_driver::security::Allow::new(vec![
            format!("{}/32", ip(n, 11)).parse().unwrap(),
        ])),
        trace: None,
    };
    let c = std::thread::spawn(move || client::run(&cfg, |_| {}).unwrap().0);
    // The "leaf" answers every task; the forger answers it first, straight to the client.
    let until = Instant::now() + Duration::from_millis(1500);
    let mut buf = [0u8; 2048];
    let mut tasks = 0u64;
    while Instant::now() < until {
        let Ok((k, _)) = leaf.recv_from(&mut buf) else {
            continue;
        };
        let Ok(f) = horus_model::wire::parse_frame(&buf[..k]) else {
            continue;
        };
        tasks += 1;
        let answer = HorusFrame::new(
            link::host(ip(n, 32)),
            link::host(ip(n, 200)),
            HorusHeader {
                pkt_type: PacketType::TaskDone,
                ..f.header
            },
            f.payload.clone(),
        )
        .to_bytes();
        forger.send_to(&answer, (ip(n, 200), 1234)).unwrap();
        leaf.send_to(&answer, (ip(n, 200), 1234)).unwrap();
    }
    let r = c.join().unwrap();
    assert!(r.sent > 50, "{r:?}");
    assert_eq!(r.sent, tasks);
    assert_eq!((r.answered, r.forged, r.duplicates), (r.sent, r.sent, 0));
}

/// Registration floods for 2 s each, through the switch's socket: one host asking again and
/// again is answered at its source's rate (16 at once, then 4 a second), and registrations from
/// 250 forged sources at the pool's (64, then 32 a second); the rest refused and counted.
#[test]
fn registration_floods_are_held_to_their_rates() {
    let n = net(116);
    let cfg = leaf_cfg(n, "");
    let leaf = cfg.switch.ip;
    let (stop, h) = start_leaf(cfg);
    let one = host(ip(n, 40));
    let wid = |from| {
        frame(
            from,
            leaf,
            header(PacketType::WorkerId, 1, 0xffff, 0),
            Vec::new(),
        )
    };
    let flood = |make: &dyn Fn(u64) -> Vec<u8>| {
        let t0 = Instant::now();
        let mut sent = 0u64;
        let mut acks = 0u64;
        let mut buf = [0u8; 2048];
        one.set_nonblocking(true).unwrap();
        while t0.elapsed() < Duration::from_secs(2) {
            for _ in 0..20 {
                if one.send_to(&make(sent), (leaf, 1234)).is_ok() {
                    sent += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
            while one.recv_from(&mut buf).is_ok() {
                acks += 1;
            }
        }
        one.set_nonblocking(false).unwrap();
        acks += answers(&one, Duration::from_millis(200)).len() as u64;
        (sent, acks)
    };
    let (sent1, acks) = flood(&|_| wid(ip(n, 40)));
    assert!(
        (16..=16 + 4 * 3).contains(&acks),
        "{acks} answers to {sent1} registrations from one host"
    );
    let forged = |k: u64| wid(ip(net(117), 1 + (k % 250) as u8));
    let (sent2, _) = flood(&forged);
    stop.store(true, Ordering::Relaxed);
    let (stats, counts) = h.join().unwrap();
    // The registrations the switch admitted: those sent, less the refused and those the kernel
    // dropped, where the kernel tells its drops.
    let dropped = match stats.kernel_drops {
        Some(d) => {
            let admitted = sent1 + sent2 - counts.refused_rate - d;
            assert!(
                admitted <= acks + 64 + 32 * 3,
                "{admitted} of {} registrations admitted ({} refused, {d} dropped by the kernel)",
                sent1 + sent2,
                counts.refused_rate,
            );
            d.to_string()
        }
        None => "(unknown: this kernel does not tell; admissions not checked)".to_string(),
    };
    assert!(counts.refused_rate > 0);
    eprintln!(
        "one host: {sent1} registrations in 2 s, {acks} answered; 250 forged sources: {sent2} in 2 s; {} refused for their rate, {dropped} dropped by the kernel, {} registered",
        counts.refused_rate, counts.registrations
    );
}

const KEY: &str = "7 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const OTHER_KEY: &str = "7 ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

/// A WORKER_ID for pool 1 from `from`, signed by `keys` as from `signer`.
fn signed_wid(keys: &Keys, from: Ipv4Addr, signer: Ipv4Addr, leaf: Ipv4Addr) -> Vec<u8> {
    let h = header(PacketType::WorkerId, 1, 0xffff, 0);
    let t = keys.trailer((signer, 1234), &h.to_bytes(), wall_us());
    frame(from, leaf, h, t)
}

/// With a key, the controller takes only control frames with a right trailer: not one unsigned,
/// signed with another key, signed for another worker, or sent again; and a 2 s flood of
/// unsigned registrations registers nothing. Its answers carry a trailer the worker checks.
#[test]
fn with_a_key_the_controller_takes_only_signed_fresh_frames() {
    let n = net(118);
    let cfg = leaf_cfg(n, "");
    let leaf = cfg.switch.ip;
    let keys = Arc::new(Keys::parse(KEY).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let k2 = Arc::clone(&keys);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let ctl = ControllerOpts {
            keys: Some(k2),
            ..Default::default()
        };
        let mut s = SoftSwitch::open(&cfg, Engine::Model, 1, Some(ctl), 0).unwrap();
        let opts = RunOpts {
            stop: Some(s2),
            ..Default::default()
        };
        tx.send(()).unwrap();
        switch::run(
            &mut s,
            SocketAddr::from((leaf, 1234)),
            &opts,
            Instant::now(),
            |_| Ok(()),
        )
        .unwrap();
        s.controller().unwrap().counts.clone()
    });
    rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let w = host(ip(n, 40));
    let first = signed_wid(&keys, ip(n, 40), ip(n, 40), leaf);
    w.send_to(&first, (leaf, 1234)).unwrap();
    let mut buf = [0u8; 2048];
    let (k, _) = w.recv_from(&mut buf).expect("an answer");
    let ack = HorusHeader::parse(&buf[..k]).unwrap();
    assert_eq!(
        (ack.pkt_type, k),
        (
            PacketType::WorkerIdAck,
            11 + horus_host_driver::auth::TRAILER_LEN
        )
    );
    let mut guard = Guard::default();
    keys.verify((ip(n, 40), 1234), &buf[..k], &mut guard, wall_us())
        .expect("the answer's trailer");
    let other = Keys::parse(OTHER_KEY).unwrap();
    for (sock, bytes) in [
        (&w, first.clone()),
        (
            &w,
            frame(
                ip(n, 40),
                leaf,
                header(PacketType::WorkerId, 1, 0xffff, 0),
                vec![],
            ),
        ),
        (&w, signed_wid(&other, ip(n, 40), ip(n, 40), leaf)),
        (
            &host(ip(n, 43)),
            signed_wid(&keys, ip(n, 43), ip(n, 40), leaf),
        ),
    ] {
        sock.send_to(&bytes, (leaf, 1234)).unwrap();
        assert!(answers(sock, Duration::from_millis(100)).is_empty());
    }
    let flooder = host(ip(n, 44));
    let unsigned = frame(
        ip(n, 44),
        leaf,
        header(PacketType::WorkerId, 1, 0xffff, 0),
        vec![],
    );
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed() < Duration::from_secs(2) {
        for _ in 0..20 {
            if flooder.send_to(&unsigned, (leaf, 1234)).is_ok() {
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let counts = h.join().unwrap();
    assert_eq!(counts.registrations, 1);
    assert!(
        counts.refused_unauthenticated >= 4 + sent * 9 / 10,
        "{} refused of {sent} + 4",
        counts.refused_unauthenticated
    );
    eprintln!(
        "keyed: {sent} unsigned registrations in 2 s, {} refused",
        counts.refused_unauthenticated
    );
}

/// With a key, a worker believes only the controller's messages with a right trailer: an
/// unsigned WORKER_ID_ACK does not register it, a signed one does; its own messages are signed.
#[test]
fn with_a_key_a_worker_believes_only_signed_answers_and_signs_its_own() {
    use horus_endpoints::worker;
    let n = net(119);
    let keys = Arc::new(Keys::parse(KEY).unwrap());
    let leaf = host(ip(n, 11));
    let mut cfg = worker::slot_configs(
        ip(n, 32),
        1,
        SocketAddr::from((ip(n, 11), 1234)),
        1,
        None,
        Duration::from_millis(50),
    )
    .unwrap()
    .remove(0);
    cfg.keys = Some(Arc::clone(&keys));
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let slot = std::thread::spawn(move || {
        let handler: worker::Handler = Box::new(|_| [0; horus_endpoints::payload::APP_WORDS]);
        worker::run_slot(cfg, handler, s2, |_| {}).unwrap()
    });
    let me = (ip(n, 32), 1234);
    let mut guard = Guard::default();
    let mut buf = [0u8; 2048];
    // Its WORKER_IDs are signed; an unsigned answer is not believed (it asks again).
    let mut next = |buf: &mut [u8]| -> horus_model::wire::HorusFrame {
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Ok((k, _)) = leaf.recv_from(buf) {
                let f = horus_model::wire::parse_frame(&buf[..k]).unwrap();
                let mut msg = f.header.to_bytes().to_vec();
                msg.extend_from_slice(&f.payload);
                keys.verify(me, &msg, &mut guard, wall_us())
                    .expect("a signed message");
                return f;
            }
        }
        panic!("nothing from the worker");
    };
    assert_eq!(next(&mut buf).header.pkt_type, PacketType::WorkerId);
    let ack = header(PacketType::WorkerIdAck, 1, 3, 5);
    leaf.send_to(&ack.to_bytes(), me).unwrap();
    assert_eq!(
        next(&mut buf).header.pkt_type,
        PacketType::WorkerId,
        "asked again"
    );
    leaf.send_to(&keys.sign(me, &ack.to_bytes(), wall_us()), me)
        .unwrap();
    let ka = loop {
        let f = next(&mut buf);
        if f.header.pkt_type == PacketType::KeepAlive {
            break f;
        }
    };
    assert_eq!(
        horus_model::wire::HEADER_LEN + ka.payload.len(),
        165 + horus_host_driver::auth::TRAILER_LEN,
        "the public keep-alive (165 bytes with its header) and the trailer"
    );
    stop.store(true, Ordering::Relaxed);
    let st = slot.join().unwrap();
    assert_eq!(st.id, Some(5));
    assert!(st.unauthenticated >= 1);
}
