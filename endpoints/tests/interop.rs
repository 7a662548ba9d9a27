//! Our client's and worker's frames as an independent dissector reads them: `dissect.py`,
//! written from the public Horus header and testbed payload (each field in the byte order the
//! public code reads it), decodes a pcap of a real exchange (the test stands for the switch: it
//! captures every frame, hands tasks to the worker and answers on to the client) with the field
//! values the endpoints meant.

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::time::Duration;

use horus_endpoints::client::{self, ClientConfig, Policy};
use horus_endpoints::link;
use horus_endpoints::worker::{self, Service, Work};
use horus_model::wire::{self, HorusHeader, PacketType};
use horus_workload::service::ServiceTime;
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use serde_json::Value;

/// What the independent dissector (`tests/dissect.py`, reading a real pcap file) says of each
/// frame, one JSON object a frame.
fn dissect(captured: &[Vec<u8>]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("exchange.pcap");
    let mut wr = PcapWriter::with_header(
        std::fs::File::create(&pcap).unwrap(),
        PcapHeader {
            datalink: DataLink::ETHERNET,
            ..Default::default()
        },
    )
    .unwrap();
    for f in captured {
        wr.write_packet(&PcapPacket::new(Duration::ZERO, f.len() as u32, f))
            .unwrap();
    }
    drop(wr);
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dissect.py"))
        .arg(&pcap)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_independent_dissector_reads_our_frames_with_the_values_we_sent() {
    let net = [127, 220, (std::process::id() % 250) as u8];
    let ip = |h: u8| std::net::Ipv4Addr::new(net[0], net[1], net[2], h);
    let leaf = SocketAddr::from((ip(11), 1234));
    let sw = UdpSocket::bind(leaf).unwrap();
    sw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slot = worker::slot_configs(ip(32), 1, leaf, 5, None, Duration::from_secs(10))
        .unwrap()
        .remove(0);
    let wstop = stop.clone();
    let w = std::thread::spawn(move || {
        worker::run_slot(
            slot,
            worker::synthetic(Service::Payload, Work::Sleep, 1),
            wstop,
            |_| {},
        )
        .unwrap()
    });
    let mut captured = Vec::new();
    let mut buf = [0u8; 4096];
    // WORKER_ID, answered with the bare acknowledgement.
    let (n, from) = sw.recv_from(&mut buf).unwrap();
    captured.push(buf[..n].to_vec());
    let ack = HorusHeader {
        pkt_type: PacketType::WorkerIdAck,
        more_packets: false,
        pool_id: 5,
        src_id: 0,
        dst_id: 3,
        qlen: 0,
        seq_num: 0,
    };
    sw.send_to(&ack.to_bytes(), from).unwrap();
    // A client's tasks (the second of two packets), each handed to the worker, each answer
    // handed back.
    let cfg = ClientConfig {
        me: link::host(ip(200)),
        scheduler: link::host(ip(11)),
        pool: 5,
        client_id: 42,
        rate: 100.0,
        duration: Duration::from_millis(50),
        service: ServiceTime::Exponential { mean_ns: 50e3 },
        policy: Policy::Horus,
        packets: 2,
        seed: 3,
        drain: Duration::from_secs(3),
        transport: link::Transport::Frames,
        answers_from: None,
        trace: None,
    };
    let c = std::thread::spawn(move || client::run(&cfg, |_| {}).unwrap().0);
    let worker_addr = SocketAddr::from((ip(32), 1234));
    let client_addr = SocketAddr::from((ip(200), 1234));
    sw.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    loop {
        let Ok((n, _)) = sw.recv_from(&mut buf) else {
            if c.is_finished() {
                break;
            }
            continue;
        };
        let f = wire::parse_frame(&buf[..n]).unwrap();
        captured.push(buf[..n].to_vec());
        if f.header.pkt_type.is_reply() {
            sw.send_to(&buf[..n], client_addr).unwrap();
        } else if f.header.pkt_type != PacketType::KeepAlive {
            sw.send_to(&buf[..n], worker_addr).unwrap();
        }
    }
    let report = c.join().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    w.join().unwrap();
    assert!(
        report.sent >= 1 && report.answered == report.sent,
        "{report:?}"
    );

    let seen = dissect(&captured);
    assert_eq!(seen.len(), captured.len());
    let mut kinds = std::collections::BTreeSet::new();
    for (py, raw) in seen.iter().zip(&captured) {
        let f = wire::parse_frame(raw).unwrap();
        let h = f.header;
        kinds.insert(h.pkt_type.code());
        assert_eq!(py["type"], u64::from(h.pkt_type.code()), "{py}");
        assert_eq!(py["more"], h.more_packets);
        assert_eq!(py["pool"], 5);
        assert_eq!(py["src_id"], h.src_id);
        assert_eq!(py["dst_id"], h.dst_id);
        assert_eq!(py["qlen"], h.qlen);
        assert_eq!(py["seq"], h.seq_num);
        assert_eq!(py["src"], format!("{}:{}", f.src.ip, f.src.udp_port));
        assert_eq!(py["dst"], format!("{}:{}", f.dst.ip, f.dst.udp_port));
        if h.pkt_type.is_task() || h.pkt_type.is_reply() {
            let p = horus_endpoints::payload::TaskPayload::parse(&f.payload).unwrap();
            assert_eq!(py["client_id"], 42);
            assert_eq!(py["req_id"], p.req_id);
            assert_eq!(h.seq_num, client::seq_num(42, p.req_id, 2));
            assert_eq!(py["pkts_length"], 330, "two packets of 165 bytes");
            assert_eq!(py["packets"], 2);
            assert_eq!(py["run_ns"], p.run_ns);
            assert!(p.run_ns > 0 && p.run_ns < 10_000_000_000, "{py}");
            assert_eq!(py["gen_ns"], p.gen_ns);
            // The wall clock in nanoseconds, as the public client stamps it.
            let now = client::wall_ns();
            assert!(p.gen_ns <= now && now - p.gen_ns < 60_000_000_000, "{py}");
            assert_eq!(py["app_bytes"], 128);
        }
        if h.pkt_type.is_reply() {
            assert_eq!(
                py["src_id"], 100,
                "the worker answers with the task's dst_id (here the client's: no leaf chose)"
            );
            assert_eq!(py["dst_id"], 42, "to its client");
        } else if h.pkt_type.is_task() {
            assert_eq!(py["dst_id"], 100, "to the public spine scheduler's ID");
        }
    }
    // WORKER_ID, NEW_TASK (more packets), TASK_CONTINUATION, TASK_DONE_IDLE or TASK_DONE.
    for t in [
        PacketType::WorkerId,
        PacketType::NewTask,
        PacketType::TaskContinuation,
    ] {
        assert!(kinds.contains(&t.code()), "{t} not seen: {kinds:?}");
    }
    assert!(
        kinds.contains(&PacketType::TaskDone.code())
            || kinds.contains(&PacketType::TaskDoneIdle.code())
    );
}

/// On a real network the endpoints use the kernel's UDP: the datagram is the Horus header and
/// payload, and the network's switch sees the frame the kernel builds. Here a client sends its
/// tasks straight to a worker (no switch): each is answered once, the registration and the
/// answers being bare headers on the Horus port.
#[test]
fn over_the_kernels_udp_a_worker_and_a_client_serve_each_other() {
    let net = [127, 221, (std::process::id() % 250) as u8];
    let ip = |h: u8| std::net::Ipv4Addr::new(net[0], net[1], net[2], h);
    let ctl_addr = SocketAddr::from((ip(11), 1234));
    let ctl = UdpSocket::bind(ctl_addr).unwrap();
    ctl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut slot = worker::slot_configs(ip(32), 1, ctl_addr, 5, None, Duration::from_secs(10))
        .unwrap()
        .remove(0);
    slot.transport = link::Transport::Kernel;
    let wstop = stop.clone();
    let w = std::thread::spawn(move || {
        worker::run_slot(
            slot,
            worker::synthetic(Service::Payload, Work::Sleep, 1),
            wstop,
            |_| {},
        )
        .unwrap()
    });
    let mut buf = [0u8; 2048];
    let (n, from) = ctl.recv_from(&mut buf).unwrap();
    assert_eq!(n, wire::HEADER_LEN, "WORKER_ID is a bare header");
    let h = HorusHeader::parse(&buf[..n]).unwrap();
    assert_eq!(
        (h.pkt_type, h.pool_id, h.src_id),
        (PacketType::WorkerId, 5, 0xffff)
    );
    assert_eq!(from, SocketAddr::from((ip(32), 1234)));
    let ack = HorusHeader {
        pkt_type: PacketType::WorkerIdAck,
        dst_id: 6,
        ..h
    };
    ctl.send_to(&ack.to_bytes(), from).unwrap();
    let cfg = ClientConfig {
        me: link::host(ip(200)),
        scheduler: link::host(ip(32)),
        pool: 5,
        client_id: 7,
        rate: 500.0,
        duration: Duration::from_millis(200),
        service: ServiceTime::Exponential { mean_ns: 20e3 },
        policy: Policy::Random,
        packets: 1,
        seed: 4,
        drain: Duration::from_secs(3),
        transport: link::Transport::Kernel,
        answers_from: None,
        trace: None,
    };
    let r = client::run(&cfg, |_| {}).unwrap().0;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let s = w.join().unwrap();
    assert!(r.sent > 50, "{r:?}");
    assert_eq!(
        (r.answered, r.lost, r.duplicates, r.unexpected),
        (r.sent, 0, 0, 0)
    );
    assert_eq!(s.id, Some(6));
    assert_eq!(s.tasks, r.sent);
}

/// Our worker with a static ID (the public testbed's way) before a stand-in of the public
/// controller's registration (`tests/public_controller.py`, written from the public definitions):
/// it serves at once under its ID, its keep-alives read as the public controller reads them
/// (server, leaf, worker count and IDs, little endian), and the public WORKER_ID renumbers it,
/// answered with the public WORKER_ID_ACK; its keep-alives then carry the new ID.
#[test]
fn the_public_controllers_registration_renumbers_our_worker() {
    let net = [127, 222, (std::process::id() % 250) as u8];
    let ip = |h: u8| std::net::Ipv4Addr::new(net[0], net[1], net[2], h);
    let ctl = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/public_controller.py"
        ))
        .args([&ip(11).to_string(), "2", "21", "1.5"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    std::thread::sleep(Duration::from_millis(300));
    let mut slot = worker::slot_configs(
        ip(32),
        1,
        SocketAddr::from((ip(11), 1234)),
        5,
        Some(5),
        Duration::from_millis(100),
    )
    .unwrap()
    .remove(0);
    slot.server_id = 7;
    slot.leaf_id = 2;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let wstop = stop.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let w = std::thread::spawn(move || {
        worker::run_slot(
            slot,
            worker::synthetic(Service::Payload, Work::Sleep, 1),
            wstop,
            |id| tx.send(id).unwrap(),
        )
        .unwrap()
    });
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(1)).unwrap(),
        5,
        "served at once under its static ID"
    );
    let out = ctl.wait_with_output().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let s = w.join().unwrap();
    assert!(out.status.success());
    let seen: Value = serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    let kas = seen["keep_alives"].as_array().unwrap();
    assert!(kas.len() >= 5, "{seen}");
    for ka in kas {
        assert_eq!(
            (&ka["server"], &ka["leaf"], &ka["workers"], &ka["len"]),
            (
                &Value::from(7),
                &Value::from(2),
                &Value::from(1),
                &Value::from(165)
            ),
            "{ka}"
        );
    }
    assert_eq!(
        kas[0]["ids"],
        serde_json::json!([6]),
        "worker ID = node ID + 1"
    );
    assert_eq!(kas[0]["first_id"], 6);
    assert_eq!(
        kas.last().unwrap()["ids"],
        serde_json::json!([22]),
        "{seen}"
    );
    assert_eq!(seen["acks"], serde_json::json!([22]), "{seen}");
    assert_eq!(seen["other"], 0, "{seen}");
    assert_eq!((s.renumbered, s.id, s.registrations_sent), (1, Some(21), 0));
}
