//! The controller on the model switch (and, at the end, the `serve` daemon over UDP and HTTP):
//! workers register, a silent worker is removed within the timeout plus one control pass and
//! added back when it speaks, a restart resumes from the state file without reprogramming.

mod common;

use std::net::{Ipv4Addr, UdpSocket};

use common::{LEAF, frame};
use horus_host_driver::controller::{ANY_ID, Controller};
use horus_host_driver::device::ModelDevice;
use horus_host_driver::driver::Switch;
use horus_host_driver::ratelimit::{Rate, RateLimit};
use horus_model::config::Config;
use horus_model::sched::state::NodeState;
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};

fn worker(k: u8) -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x20, k]),
        ip: Ipv4Addr::new(127, 0, 0, 1),
        udp_port: 40_000 + u16::from(k),
    }
}

fn switch() -> Switch<ModelDevice> {
    let cfg = Config::from_toml_str(LEAF).unwrap();
    let mut sw = Switch::open(ModelDevice::fresh(&cfg, 1, "model").unwrap()).unwrap();
    sw.apply(&cfg).unwrap();
    sw
}

fn passes(sw: &Switch<ModelDevice>) -> u64 {
    sw.regs.switch().scheduler().counters().control_passes
}

fn active(sw: &Switch<ModelDevice>, node: u16) -> bool {
    sw.regs.switch().scheduler().tables().nodes[usize::from(node)]
        .node
        .state
        == NodeState::Active
}

#[test]
fn workers_register_a_silent_one_is_removed_and_comes_back() {
    let mut sw = switch();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("members.json");
    let mut c = Controller::start(&mut sw, 8, 1000, Some(&state), 0).unwrap();
    // Three workers: one asks for ID 5, two for any.
    let mut ids = Vec::new();
    for (k, ask) in [(0u8, 5u16), (1, ANY_ID), (2, ANY_ID)] {
        let r = c
            .on_frame(&mut sw, &frame(worker(k), PacketType::WorkerId, 1, ask), 10)
            .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].header.pkt_type, PacketType::WorkerIdAck);
        assert_eq!(r[0].to, worker(k));
        ids.push(r[0].header.dst_id);
    }
    assert_eq!(ids, [5, 0, 1]);
    assert!(ids.iter().all(|&n| active(&sw, n)));
    // Registering again keeps the ID and writes nothing.
    let before = passes(&sw);
    let r = c
        .on_frame(
            &mut sw,
            &frame(worker(1), PacketType::WorkerId, 1, ANY_ID),
            20,
        )
        .unwrap();
    assert_eq!(r[0].header.dst_id, 0);
    assert_eq!(passes(&sw), before);
    // Workers 5 and 0 keep alive; worker 1 falls silent after t = 10.
    for t in [400, 800] {
        for id in [5, 0] {
            c.on_frame(&mut sw, &frame(worker(0), PacketType::KeepAlive, 1, id), t)
                .unwrap();
        }
    }
    assert!(
        c.tick(&mut sw, 1010).unwrap().is_empty(),
        "at the timeout, not past it"
    );
    let before = passes(&sw);
    let r = c.tick(&mut sw, 1011).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].header.pkt_type, PacketType::RemoveAck);
    assert_eq!(r[0].header.dst_id, 1);
    // One removal: one control pass (and its resubmission).
    assert_eq!(passes(&sw), before + 1);
    assert!(!active(&sw, 1) && active(&sw, 5) && active(&sw, 0));
    // It speaks again: added back under its ID.
    c.on_frame(
        &mut sw,
        &frame(worker(2), PacketType::KeepAlive, 1, 1),
        1500,
    )
    .unwrap();
    assert!(active(&sw, 1));
    assert_eq!(c.counts.removals, 1);
    assert_eq!(c.counts.readds, 1);
    assert_eq!(c.counts.registrations, 3);
    // Unknown keep-alives, foreign frames and acknowledgements are counted, not acted on.
    c.on_frame(
        &mut sw,
        &frame(worker(9), PacketType::KeepAlive, 1, 33),
        1600,
    )
    .unwrap();
    c.on_frame(&mut sw, b"not a frame", 1600).unwrap();
    c.on_frame(
        &mut sw,
        &frame(worker(0), PacketType::WorkerIdAck, 1, 5),
        1600,
    )
    .unwrap();
    assert_eq!(c.counts.ignored, 2);
    assert_eq!(c.counts.acks_received, 1);
    let m = c.metrics();
    assert!(m.contains("horus_controller_registrations_total 3"), "{m}");
    assert!(
        m.contains("horus_worker_up{pool=\"1\",worker=\"1\",ip=\"127.0.0.1\"} 1"),
        "{m}"
    );
    // A worker of the configuration (not registered) is adopted at its first keep-alive, and
    // then watched like the others.
    let mut m = sw.state(&[20]).unwrap();
    sw.control(
        &mut m,
        horus_model::sched::ControlOp::AddNode {
            pool: 1,
            node: 20,
            addr: horus_model::sched::NodeAddr {
                endpoint: worker(7),
                port: 8,
                dst_id: 20,
            },
            workers: 1,
        },
    )
    .unwrap();
    let mut c = Controller::start(&mut sw, 8, 1000, Some(&state), 1500).unwrap();
    c.on_frame(
        &mut sw,
        &frame(worker(7), PacketType::KeepAlive, 1, 20),
        1550,
    )
    .unwrap();
    assert!(
        c.members()
            .any(|m| m.id == 20 && m.udp_port == worker(7).udp_port)
    );
    let r = c.tick(&mut sw, 2551).unwrap();
    assert!(r.iter().any(|r| r.header.dst_id == 20), "{r:?}");
    assert!(!active(&sw, 20));
}

#[test]
fn a_restarted_controller_resumes_without_reprogramming_the_switch() {
    let mut sw = switch();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("members.json");
    let mut c = Controller::start(&mut sw, 8, 1000, Some(&state), 0).unwrap();
    for k in 0..3 {
        c.on_frame(
            &mut sw,
            &frame(worker(k), PacketType::WorkerId, 1, ANY_ID),
            0,
        )
        .unwrap();
    }
    drop(c);
    let before = passes(&sw);
    let c = Controller::start(&mut sw, 8, 1000, Some(&state), 5).unwrap();
    assert_eq!(passes(&sw), before, "the live switch is not reprogrammed");
    assert_eq!(c.members().filter(|m| m.active).count(), 3);
    drop(c);
    // A switch that lost a worker (reloaded, or changed by hand) gets that one back, only.
    let mut m = sw.state(&[]).unwrap();
    sw.control(
        &mut m,
        horus_model::sched::ControlOp::RemoveNode { pool: 1, node: 1 },
    )
    .unwrap();
    let before = passes(&sw);
    let c = Controller::start(&mut sw, 8, 1000, Some(&state), 5).unwrap();
    assert_eq!(passes(&sw), before + 1);
    assert!(active(&sw, 1));
    assert_eq!(c.counts.readds, 1);
    // A state file that is not one is refused, naming it.
    std::fs::write(&state, "{ nonsense").unwrap();
    let e = Controller::start(&mut sw, 8, 1000, Some(&state), 5)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("members.json: not a controller state file"),
        "{e}"
    );
}

/// `horusctl serve` on the model switch configured by `cfg`, its workers on port 8, with
/// `/metrics` at `metrics`, removing a worker silent for `timeout_ms`, and `args` (where the
/// control frames arrive, a state file).
/// A child process killed when dropped, so that a failing test leaves none behind.
struct Serve(std::process::Child);

impl std::ops::Deref for Serve {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Serve {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_serve(
    cfg: &std::path::Path,
    metrics: std::net::SocketAddr,
    timeout_ms: u64,
    args: &[&str],
) -> Serve {
    std::process::Command::new(env!("CARGO_BIN_EXE_horusctl"))
        .args(["--device", &format!("model:{}", cfg.display()), "serve"])
        .args(["--config", cfg.to_str().unwrap()])
        .args(["--metrics", &metrics.to_string()])
        .args([
            "--timeout-ms",
            &timeout_ms.to_string(),
            "--worker-port",
            "8",
        ])
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(Serve)
        .unwrap()
}

#[test]
fn serve_registers_over_udp_removes_on_silence_and_serves_metrics_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(&cfg, LEAF).unwrap();
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    };
    let metrics = free();
    let listen = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let state = dir.path().join("m.json");
    // The timeout longer than the metrics' refresh (a second), so that the registered worker
    // shows as up before it is removed.
    let mut child = spawn_serve(
        &cfg,
        metrics,
        2500,
        &[
            "--listen",
            &listen.to_string(),
            "--state",
            state.to_str().unwrap(),
        ],
    );
    let url = format!("http://{metrics}/metrics");
    let scrape = || -> Option<String> { ureq::get(&url).call().ok()?.into_string().ok() };
    let wait_for = |what: &str| {
        for _ in 0..200 {
            if let Some(m) = scrape() {
                if m.contains(what) {
                    return m;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("/metrics never showed {what:?}: {:?}", scrape());
    };
    wait_for("horus_controller_packets_total 0");
    // The kernel's drops for its control socket are read (none here), where the kernel tells
    // them; where it does not, the metric is left out rather than shown as a false 0.
    let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    if horus_host_driver::metrics::kernel_drops(&probe).is_some() {
        wait_for("horus_serve_kernel_drops_total 0");
    } else {
        eprintln!("skipped: this kernel does not list its UDP sockets in /proc/self/net/udp");
        let m = wait_for("horus_controller_packets_total 0");
        assert!(!m.contains("horus_serve_kernel_drops_total"), "{m}");
    }
    // Stopped and continued (Ctrl-Z and `fg`: Linux then fails its blocked receive with EINTR):
    // it goes on.
    for sig in [libc::SIGSTOP, libc::SIGCONT] {
        // SAFETY: kill(2) on the child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(child.try_wait().unwrap().is_none(), "serve still runs");
    // A worker on a real socket registers and gets its ID.
    let w = UdpSocket::bind("127.0.0.1:0").unwrap();
    w.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let me = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x30, 1]),
        ip: Ipv4Addr::LOCALHOST,
        udp_port: w.local_addr().unwrap().port(),
    };
    w.send_to(&frame(me, PacketType::WorkerId, 1, 7), listen)
        .unwrap();
    let mut buf = [0u8; 64];
    let (n, _) = w.recv_from(&mut buf).unwrap();
    let ack = HorusHeader::parse(&buf[..n]).unwrap();
    assert_eq!(ack.pkt_type, PacketType::WorkerIdAck);
    assert_eq!(ack.dst_id, 7);
    let m = wait_for("horus_controller_registrations_total 1");
    assert!(
        m.contains("horus_worker_up{pool=\"1\",worker=\"7\",ip=\"127.0.0.1\"} 1"),
        "{m}"
    );
    // Silent: removed after the timeout, and told so.
    let (n, _) = w.recv_from(&mut buf).unwrap();
    assert_eq!(
        HorusHeader::parse(&buf[..n]).unwrap().pkt_type,
        PacketType::RemoveAck
    );
    let m = wait_for("horus_controller_removals_total 1");
    assert!(
        m.contains("horus_worker_up{pool=\"1\",worker=\"7\",ip=\"127.0.0.1\"} 0"),
        "{m}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_controller_follows_changes_other_hosts_make_and_survives_hostile_packets() {
    let mut sw = switch();
    let mut c = Controller::start(&mut sw, 8, 1000, None, 0).unwrap();
    // Another host adds node 0 behind the controller's back.
    let mut m = sw.state(&[0]).unwrap();
    let by_hand = horus_model::sched::ControlOp::AddNode {
        pool: 1,
        node: 0,
        addr: horus_model::sched::NodeAddr {
            endpoint: worker(50),
            port: 8,
            dst_id: 0,
        },
        workers: 1,
    };
    sw.control(&mut m, by_hand).unwrap();
    // A new worker is not given node 0 twice.
    let r = c
        .on_frame(
            &mut sw,
            &frame(worker(1), PacketType::WorkerId, 1, ANY_ID),
            1,
        )
        .unwrap();
    assert_eq!(r[0].header.dst_id, 1);
    // The worker added by hand announces itself: adopted under its node, no pass.
    let before = passes(&sw);
    let r = c
        .on_frame(
            &mut sw,
            &frame(worker(50), PacketType::WorkerId, 1, ANY_ID),
            2,
        )
        .unwrap();
    assert_eq!(r[0].header.dst_id, 0);
    assert_eq!(passes(&sw), before);
    // Fill the pool (8 slots), let worker 1 fall silent and be removed, and give its place away.
    for k in 2..8u8 {
        c.on_frame(
            &mut sw,
            &frame(worker(k), PacketType::WorkerId, 1, ANY_ID),
            3,
        )
        .unwrap();
    }
    for k in [0u16, 2, 3, 4, 5, 6, 7] {
        c.on_frame(&mut sw, &frame(worker(0), PacketType::KeepAlive, 1, k), 900)
            .unwrap();
    }
    let r = c.tick(&mut sw, 1002).unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(!active(&sw, 1));
    c.on_frame(
        &mut sw,
        &frame(worker(9), PacketType::WorkerId, 1, ANY_ID),
        1003,
    )
    .unwrap();
    // A keep-alive for the removed worker (or one forged with its IDs) finds no room: counted,
    // and the controller goes on.
    let ignored = c.counts.ignored;
    c.on_frame(
        &mut sw,
        &frame(worker(1), PacketType::KeepAlive, 1, 1),
        1004,
    )
    .unwrap();
    assert_eq!(c.counts.ignored, ignored + 1);
    assert!(!active(&sw, 1));
    // IDs beyond the tables, a pool that does not exist: counted, never a panic.
    for (pool, id) in [(u16::MAX, u16::MAX), (1, u16::MAX), (7, 3)] {
        c.on_frame(
            &mut sw,
            &frame(worker(60), PacketType::WorkerId, pool, id),
            1005,
        )
        .unwrap();
        c.on_frame(
            &mut sw,
            &frame(worker(60), PacketType::KeepAlive, pool, id),
            1005,
        )
        .unwrap();
    }
}

#[test]
fn a_state_file_that_does_not_fit_the_switch_is_refused() {
    let mut sw = switch();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("members.json");
    std::fs::write(
        &state,
        r#"{"members":[{"pool":1,"id":900,"mac":"02:00:00:00:00:01","ip":"10.0.0.1","udp_port":1234,"port":8,"dst_id":900,"active":true}]}"#,
    )
    .unwrap();
    let e = Controller::start(&mut sw, 8, 1000, Some(&state), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("member 900 of pool 1"), "{e}");
    assert!(e.contains("64 nodes"), "{e}");
}

/// A veth pair for the length of a test, removed when dropped.
struct Veth(String);

impl Veth {
    /// `None` where the test may not create one (no CAP_NET_ADMIN or no `ip`).
    fn new(name: &str) -> Option<Veth> {
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let peer = format!("{name}p");
        if !ip(&["link", "add", name, "type", "veth", "peer", "name", &peer]) {
            return None;
        }
        let v = Veth(name.to_string());
        (ip(&["link", "set", name, "up"]) && ip(&["link", "set", &peer, "up"])).then_some(v)
    }

    fn peer(&self) -> String {
        format!("{}p", self.0)
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["link", "del", &self.0])
            .status();
    }
}

/// The card path: the control-port frames reach `serve` on a network interface (here one end of
/// a veth pair, as the OpenNIC driver's netdev would carry them) and the answers leave through
/// it as whole frames from the switch's address to the worker's.
#[test]
fn serve_on_an_interface_registers_a_worker_through_a_veth_pair() {
    use horus_host_driver::packet::PacketSocket;
    use horus_model::wire;
    let name = format!("hx{}", std::process::id() % 100_000);
    let Some(veth) = Veth::new(&name) else {
        eprintln!(
            "skipped: cannot create a veth pair here (it needs CAP_NET_ADMIN and iproute2); the \
             AF_PACKET path of `horusctl serve --interface` was not exercised"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(&cfg, LEAF).unwrap();
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut worker = PacketSocket::bind(&veth.peer()).unwrap();
    let mut child = spawn_serve(&cfg, metrics, 60_000, &["--interface", &veth.0]);
    let url = format!("http://{metrics}/metrics");
    for _ in 0..200 {
        if ureq::get(&url).call().is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let me = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x30, 1]),
        ip: Ipv4Addr::new(10, 0, 1, 30),
        udp_port: wire::HORUS_UDP_PORT,
    };
    worker.send(&frame(me, PacketType::WorkerId, 1, 7)).unwrap();
    let mut buf = [0u8; 2048];
    let n = worker
        .recv(&mut buf, std::time::Duration::from_secs(10))
        .unwrap()
        .expect("an answer through the interface");
    let _ = child.kill();
    let _ = child.wait();
    let f = wire::parse_frame(&buf[..n]).unwrap();
    assert_eq!(f.header.pkt_type, PacketType::WorkerIdAck);
    assert_eq!(f.header.dst_id, 7);
    assert_eq!(f.dst, me);
    let leaf = Config::from_toml_str(LEAF).unwrap().switch;
    assert_eq!((f.src.mac, f.src.ip), (leaf.mac, leaf.ip));
}

/// A public testbed server (horus-app-eval's worker) behind the controller: its workers are the
/// configuration's nodes at its address (the public controller's topology is static too), its
/// keep-alive one 165-byte message for all of them in the public layout. The controller adopts
/// them at the first one and tells the server its first node ID with the public WORKER_ID (again
/// whenever the server numbers its workers otherwise), watches each worker, removes them when the
/// server falls silent and adds them back when it speaks again.
#[test]
fn a_public_servers_keep_alives_watch_its_workers_and_it_gets_the_public_worker_id() {
    use horus_model::wire::HorusFrame;
    use horus_model::wire::payload::{PublicKeepAlive, public_worker_id, public_worker_id_ack};
    // Nodes 3 and 4 are the server's two workers, node 2 another host.
    let mut cfg = common::leaf(&[2, 3, 4], 1);
    for n in &mut cfg.pools[0].nodes {
        if n.id == 4 {
            n.ip = Ipv4Addr::new(10, 0, 1, 3);
            n.mac = MacAddr([2, 0, 0, 0, 0x10, 3]);
        }
    }
    let mut sw = Switch::open(ModelDevice::fresh(&cfg, 1, "model").unwrap()).unwrap();
    sw.apply(&cfg).unwrap();
    let mut c = Controller::start(&mut sw, 8, 1000, None, 0).unwrap();
    let server = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x10, 3]),
        ip: Ipv4Addr::new(10, 0, 1, 3),
        udp_port: 1234,
    };
    let leaf = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 3]),
        ip: Ipv4Addr::new(10, 0, 0, 3),
        udp_port: 1234,
    };
    let public_frame = |m: &[u8]| {
        HorusFrame::new(
            server,
            leaf,
            HorusHeader::parse(m).unwrap(),
            m[11..].to_vec(),
        )
        .to_bytes()
    };
    // Server 7 of leaf 3 runs the workers of nodes 3 and 4 (worker IDs 4 and 5).
    let ka = PublicKeepAlive {
        server: 7,
        leaf: 3,
        nodes: vec![3, 4],
        ours: None,
    };
    let r = c
        .on_frame(&mut sw, &public_frame(&ka.to_message(0)), 10)
        .unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].to, server);
    assert_eq!(
        r[0].to_bytes(),
        public_worker_id(3, 3),
        "leaf 3, first node 3"
    );
    assert_eq!(c.counts.public_keep_alives, 1);
    assert_eq!(c.counts.keep_alives, 2);
    let mut watched: Vec<u16> = c.members().map(|m| m.id).collect();
    watched.sort_unstable();
    assert_eq!(watched, [3, 4]);
    // Its acknowledgement (the public layout) is counted; a second keep-alive sends nothing.
    c.on_frame(&mut sw, &public_frame(&public_worker_id_ack(&[3, 4])), 20)
        .unwrap();
    assert_eq!(c.counts.acks_received, 1);
    assert!(
        c.on_frame(&mut sw, &public_frame(&ka.to_message(1)), 700)
            .unwrap()
            .is_empty()
    );
    // Silent past the timeout: both workers removed (node 2, never heard from, is not watched),
    // and nothing sent to the server (a public worker would run a REMOVE_ACK as a task).
    let r = c.tick(&mut sw, 1701).unwrap();
    assert!(r.is_empty(), "{r:?}");
    assert_eq!(c.counts.removals, 2);
    assert!(!active(&sw, 3) && !active(&sw, 4) && active(&sw, 2));
    // It speaks again: both added back.
    c.on_frame(&mut sw, &public_frame(&ka.to_message(2)), 2000)
        .unwrap();
    assert!(active(&sw, 3) && active(&sw, 4));
    assert_eq!(c.counts.readds, 2);
    // A server numbering its workers otherwise is told the switch's numbering again.
    let other = PublicKeepAlive {
        nodes: vec![10, 11],
        ..ka.clone()
    };
    let r = c
        .on_frame(&mut sw, &public_frame(&other.to_message(3)), 2050)
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].to_bytes(), public_worker_id(3, 3));
    // A public keep-alive from an address with no worker, or naming no worker at all: counted
    // and ignored, nothing changes.
    let ignored = c.counts.ignored;
    let stranger = HorusFrame::new(
        Endpoint {
            ip: Ipv4Addr::new(10, 0, 1, 99),
            ..server
        },
        leaf,
        HorusHeader::parse(&ka.to_message(0)).unwrap(),
        ka.to_message(0)[11..].to_vec(),
    )
    .to_bytes();
    assert!(c.on_frame(&mut sw, &stranger, 2100).unwrap().is_empty());
    let mut none = ka.to_message(3);
    none[7..9].fill(0);
    c.on_frame(&mut sw, &public_frame(&none), 2100).unwrap();
    assert_eq!(c.counts.ignored, ignored + 2);
    assert!(
        c.metrics()
            .contains("horus_controller_public_keep_alives_total 5")
    );
}

/// A state file the disk refuses (here: its folder is a file) does not stop the controller: the
/// worker is registered and answered, the failure counted, the write tried again a second later,
/// and written once the folder is there. A state file named like a temporary file is written
/// whole too (its temporary name is never its own).
#[test]
fn a_state_file_write_error_is_counted_and_retried_not_fatal() {
    let mut sw = switch();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("state");
    std::fs::write(&folder, b"not a folder").unwrap();
    let state = folder.join("members.json.tmp");
    let mut c = Controller::start(&mut sw, 8, 10_000_000, Some(&state), 0).unwrap();
    let r = c
        .on_frame(&mut sw, &frame(worker(0), PacketType::WorkerId, 1, 4), 10)
        .unwrap();
    assert_eq!(r[0].header.pkt_type, PacketType::WorkerIdAck);
    assert!(active(&sw, 4));
    assert_eq!(c.counts.state_write_errors, 1);
    assert_eq!(c.counts.state_writes, 0);
    assert_eq!(
        c.next_deadline(),
        Some(10 + horus_host_driver::controller::SAVE_RETRY)
    );
    // Not yet due: not tried.
    c.tick(&mut sw, 500_000).unwrap();
    assert_eq!(c.counts.state_write_errors, 1);
    std::fs::remove_file(&folder).unwrap();
    std::fs::create_dir(&folder).unwrap();
    c.tick(&mut sw, 1_000_010).unwrap();
    assert_eq!((c.counts.state_writes, c.counts.state_write_errors), (1, 1));
    let text = std::fs::read_to_string(&state).unwrap();
    assert!(text.contains("\"id\": 4"), "{text}");
    let left: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    assert_eq!(c.next_deadline(), Some(10 + 10_000_000 + 1));
}

/// Hostile control frames: a keep-alive of a known worker from another address does not keep it
/// alive, frames from addresses no worker has are refused, and IDs taken by a registration flood
/// come back once their holders, silent, are removed and forgotten.
#[test]
fn forged_keep_alives_and_bad_addresses_are_refused_and_flooded_ids_come_back() {
    let mut sw = switch();
    let mut c = Controller::start(&mut sw, 8, 1000, None, 0).unwrap();
    c.forget_after = 5000;
    // This flood is about the pool's places, on a clock of microseconds; the rate limits have
    // their own test (`endpoints/tests/hostile.rs`).
    c.limits = RateLimit::new(
        Rate {
            burst: 1000,
            per_s: 1000,
        },
        Rate {
            burst: 1000,
            per_s: 1000,
        },
        4096,
    );
    let at = |ip: [u8; 4], k: u8| Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x40, k]),
        ip: Ipv4Addr::from(ip),
        udp_port: 1234,
    };
    let real = at([10, 0, 9, 1], 1);
    let r = c
        .on_frame(&mut sw, &frame(real, PacketType::WorkerId, 1, 3), 0)
        .unwrap();
    assert_eq!(r[0].header.dst_id, 3);
    // Another host keeps "worker 3" alive: refused, and the real one, silent, is removed.
    let forger = at([10, 0, 9, 66], 66);
    for t in [400, 800, 1200] {
        c.on_frame(&mut sw, &frame(forger, PacketType::KeepAlive, 1, 3), t)
            .unwrap();
    }
    assert_eq!(c.counts.refused_wrong_address, 3);
    c.tick(&mut sw, 1001).unwrap();
    assert!(!active(&sw, 3), "removed despite the forged keep-alives");
    // Unspecified, broadcast, multicast sources, or a group MAC: refused, nothing registered.
    for src in [
        at([0, 0, 0, 0], 2),
        at([255, 255, 255, 255], 3),
        at([224, 0, 0, 1], 4),
        Endpoint {
            mac: MacAddr([0xff; 6]),
            ..at([10, 0, 9, 5], 5)
        },
    ] {
        let r = c
            .on_frame(&mut sw, &frame(src, PacketType::WorkerId, 1, ANY_ID), 1100)
            .unwrap();
        assert!(r.is_empty());
    }
    assert_eq!(c.counts.refused_bad_address, 4);
    assert_eq!(c.counts.registrations, 1);
    // A flood of registrations from forged addresses takes every place of the pool (8) ...
    for k in 0..64u8 {
        c.on_frame(
            &mut sw,
            &frame(at([10, 0, 8, k], k), PacketType::WorkerId, 1, ANY_ID),
            2000,
        )
        .unwrap();
    }
    let late = at([10, 0, 9, 2], 2);
    let r = c
        .on_frame(&mut sw, &frame(late, PacketType::WorkerId, 1, ANY_ID), 2100)
        .unwrap();
    assert!(
        r.is_empty(),
        "no room for the real worker while the flood holds the pool"
    );
    // ... until the silent flood is removed, and forgotten: the IDs are free again.
    c.tick(&mut sw, 3001).unwrap();
    c.tick(&mut sw, 3001 + 5000).unwrap();
    assert_eq!(
        c.counts.forgotten,
        8 + 1,
        "the flood and the removed worker 3"
    );
    let r = c
        .on_frame(&mut sw, &frame(late, PacketType::WorkerId, 1, ANY_ID), 9000)
        .unwrap();
    assert_eq!(r.len(), 1, "registered once the flood is forgotten");
    assert!(active(&sw, r[0].header.dst_id));
}

/// `serve --allow` and `--key-file` as an operator gives them: a worker outside the allowed
/// network is refused, an unsigned frame from an allowed one too, a signed one registers and is
/// answered with a trailer; each refusal counted in `/metrics`.
#[test]
fn serve_takes_control_frames_only_from_its_allowed_network_and_with_its_key() {
    use horus_host_driver::auth::{Guard, Keys, TRAILER_LEN, wall_us};
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(&cfg, LEAF).unwrap();
    let keyf = dir.path().join("keys");
    let key = "3 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
    std::fs::write(&keyf, key).unwrap();
    let keys = Keys::parse(key).unwrap();
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let listen = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let _child = spawn_serve(
        &cfg,
        metrics,
        5000,
        &[
            "--listen",
            &listen.to_string(),
            "--allow",
            "127.0.0.2/32",
            "--key-file",
            keyf.to_str().unwrap(),
        ],
    );
    let w = UdpSocket::bind("127.0.0.2:0").unwrap();
    w.set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    let at = |ip: [u8; 4]| Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x31, ip[3]]),
        ip: Ipv4Addr::from(ip),
        udp_port: w.local_addr().unwrap().port(),
    };
    let h = HorusHeader {
        pkt_type: PacketType::WorkerId,
        more_packets: false,
        pool_id: 1,
        src_id: ANY_ID,
        dst_id: 0,
        qlen: 0,
        seq_num: 0,
    };
    let to_leaf = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 3]),
        ip: Ipv4Addr::new(10, 0, 0, 3),
        udp_port: 1234,
    };
    let signed = |from: Endpoint| {
        let t = keys.trailer((from.ip, from.udp_port), &h.to_bytes(), wall_us());
        horus_model::wire::HorusFrame::new(from, to_leaf, h, t).to_bytes()
    };
    let mut buf = [0u8; 256];
    // Wait for serve to listen: its metrics answer.
    let url = format!("http://{metrics}/metrics");
    let scrape = || -> Option<String> { ureq::get(&url).call().ok()?.into_string().ok() };
    for _ in 0..200 {
        if scrape().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    for bytes in [
        signed(at([127, 0, 0, 1])),
        frame(at([127, 0, 0, 2]), PacketType::WorkerId, 1, ANY_ID),
    ] {
        w.send_to(&bytes, listen).unwrap();
        assert!(w.recv_from(&mut buf).is_err(), "refused: no answer");
    }
    w.send_to(&signed(at([127, 0, 0, 2])), listen).unwrap();
    let (n, _) = w
        .recv_from(&mut buf)
        .expect("an answer to the signed frame");
    assert_eq!(n, 11 + TRAILER_LEN);
    let me = at([127, 0, 0, 2]);
    keys.verify(
        (me.ip, me.udp_port),
        &buf[..n],
        &mut Guard::default(),
        wall_us(),
    )
    .expect("a signed answer");
    let want = [
        "horus_controller_refused_not_allowed_total 1",
        "horus_controller_refused_unauthenticated_total 1",
        "horus_controller_registrations_total 1",
    ];
    for _ in 0..100 {
        if scrape().is_some_and(|m| want.iter().all(|w| m.contains(w))) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("/metrics: {:?}", scrape());
}
