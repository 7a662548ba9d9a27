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
    let dropped = stats.kernel_drops;
    assert!(
        stats.refused_not_allowed + dropped >= sent && stats.refused_not_allowed > 1000,
        "sent {sent}, refused {}, dropped by the kernel {dropped}",
        stats.refused_not_allowed
    );
    assert_eq!(counts.refused_not_allowed, 1);
    assert_eq!(counts.registrations, 1);
    eprintln!(
        "2 s flood from outside: {sent} datagrams, {} refused, {dropped} dropped by the kernel",
        stats.refused_not_allowed
    );
}
