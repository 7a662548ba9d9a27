//! The whole system on loopback, in one process: a leaf (the software switch with its
//! controller) in a thread, worker slots in threads, clients. Each test has its own addresses
//! (`127.2xx.<pid>.0/24`), so that tests and test binaries run side by side.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use horus_endpoints::client::{self, ClientConfig, Policy};
use horus_endpoints::demo::Topology;
use horus_endpoints::link::{self, Inbound, Link};
use horus_endpoints::payload::{APP_WORDS, TaskPayload};
use horus_endpoints::switch::{self, ControllerOpts, Engine, RunOpts, SoftSwitch};
use horus_endpoints::worker::{self, Service, SlotStats, Work};
use horus_model::config::Config;
use horus_model::wire::{HorusHeader, PacketType};
use horus_workload::service::ServiceTime;

fn topo(test: u8, workers: u16) -> Topology {
    Topology::new(
        [127, 200 + test, (std::process::id() % 250) as u8],
        1,
        workers,
    )
    .unwrap()
}

/// What a switch thread leaves when it stops.
struct SwitchEnd {
    stats: switch::SwitchStats,
    removals: u64,
    registrations: u64,
    /// (node ID, in the switch's tables) for every worker the controller knows.
    members: Vec<(u16, bool)>,
    counts: horus_host_driver::controller::Counts,
}

/// Leaf 1 of `t` on the model engine, its controller removing workers silent for `timeout`.
fn start_leaf(t: &Topology, timeout: Duration) -> (Arc<AtomicBool>, JoinHandle<SwitchEnd>) {
    start_leaf_with(
        Config::from_toml_str(&t.leaf_toml_open(1)).unwrap(),
        timeout,
    )
}

/// A leaf of configuration `cfg` on the model engine, as [`start_leaf`].
fn start_leaf_with(cfg: Config, timeout: Duration) -> (Arc<AtomicBool>, JoinHandle<SwitchEnd>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let ctl = ControllerOpts {
            timeout_us: timeout.as_micros() as u64,
            ..Default::default()
        };
        let start = Instant::now();
        let mut s = SoftSwitch::open(&cfg, Engine::Model, 1, Some(ctl), 0).unwrap();
        let listen = SocketAddr::from((cfg.switch.ip, 1234));
        let opts = RunOpts {
            stop: Some(s2),
            ..Default::default()
        };
        tx.send(()).unwrap();
        switch::run(&mut s, listen, &opts, start, |_| Ok(())).unwrap();
        let c = s.controller().unwrap();
        SwitchEnd {
            stats: s.stats.clone(),
            removals: c.counts.removals,
            registrations: c.counts.registrations,
            members: c.members().map(|m| (m.id, m.active)).collect(),
            counts: c.counts.clone(),
        }
    });
    rx.recv().unwrap();
    // The socket is bound right after: give it a moment.
    std::thread::sleep(Duration::from_millis(50));
    (stop, h)
}

/// The rack's slots, each with its own stop flag; returns once all registered.
fn start_slots(t: &Topology, keepalive: Duration) -> Vec<(Arc<AtomicBool>, JoinHandle<SlotStats>)> {
    start_slots_from(t, None, keepalive)
}

/// As [`start_slots`], the slots' node IDs from `first_id` (static) or asked of the controller.
fn start_slots_from(
    t: &Topology,
    first_id: Option<u16>,
    keepalive: Duration,
) -> Vec<(Arc<AtomicBool>, JoinHandle<SlotStats>)> {
    let cfgs = worker::slot_configs(
        t.first_worker(1),
        t.workers,
        SocketAddr::from((t.leaf(1), 1234)),
        horus_endpoints::demo::POOL,
        first_id,
        keepalive,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let slots: Vec<_> = cfgs
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let stop = Arc::new(AtomicBool::new(false));
            let s2 = Arc::clone(&stop);
            let tx = tx.clone();
            let h = std::thread::spawn(move || {
                let handler = worker::synthetic(Service::Payload, Work::Sleep, i as u64);
                worker::run_slot(c, handler, s2, |_| tx.send(()).unwrap()).unwrap()
            });
            (stop, h)
        })
        .collect();
    for _ in 0..t.workers {
        rx.recv_timeout(Duration::from_secs(10))
            .expect("every slot registers");
    }
    slots
}

fn stop_all(slots: Vec<(Arc<AtomicBool>, JoinHandle<SlotStats>)>) -> Vec<SlotStats> {
    slots
        .into_iter()
        .map(|(s, h)| {
            s.store(true, Ordering::Relaxed);
            h.join().unwrap()
        })
        .collect()
}

fn task(seq: u16, t: PacketType, run_ms: u64) -> (HorusHeader, Vec<u8>) {
    let h = HorusHeader {
        pkt_type: t,
        more_packets: false,
        pool_id: horus_endpoints::demo::POOL,
        src_id: 9,
        dst_id: 0,
        qlen: 0,
        seq_num: seq,
    };
    let p = TaskPayload {
        client_id: 9,
        req_id: u32::from(seq),
        pkts_length: TaskPayload::length_of(1),
        run_ns: run_ms * 1_000_000,
        gen_ns: 0,
        app_data: [0; APP_WORDS],
    };
    (h, p.to_bytes())
}

/// The answers a test client gets within `wait`, at most `n`, with their payloads.
fn answer_frames(c: &mut Link, n: usize, wait: Duration) -> Vec<(HorusHeader, Vec<u8>)> {
    let end = Instant::now() + wait;
    let mut v = Vec::new();
    while v.len() < n {
        let Some(left) = end.checked_duration_since(Instant::now()) else {
            break;
        };
        if let Some(Inbound::Frame(f)) = c.recv(Some(left)).unwrap() {
            v.push((f.header, f.payload));
        }
    }
    v
}

/// The answers a test client gets within `wait`, at most `n`.
fn answers(c: &mut Link, n: usize, wait: Duration) -> Vec<HorusHeader> {
    let end = Instant::now() + wait;
    let mut v = Vec::new();
    while v.len() < n {
        let Some(left) = end.checked_duration_since(Instant::now()) else {
            break;
        };
        if let Some(Inbound::Frame(f)) = c.recv(Some(left)).unwrap() {
            v.push(f.header);
        }
    }
    v
}

#[test]
fn idle_workers_get_tasks_first_and_each_task_is_answered_once() {
    let t = topo(1, 4);
    let (stop, sw) = start_leaf(&t, Duration::from_secs(5));
    let slots = start_slots(&t, Duration::from_millis(100));
    let leaf = link::host(t.leaf(1));
    let mut c = Link::bind(link::host(t.client(0).unwrap()), link::socket_addr(&leaf)).unwrap();

    // Four idle workers, four tasks of 1 s at once: the idle list gives each worker one, and
    // each answers TASK_DONE_IDLE (it ran dry after a task from the idle list).
    for seq in 0..4 {
        let (h, p) = task(seq, PacketType::NewTask, 1000);
        c.send(leaf, h, p).unwrap();
    }
    let a = answers(&mut c, 5, Duration::from_secs(5));
    assert_eq!(a.len(), 4, "{a:?}");
    let mut ids: Vec<u16> = a.iter().map(|h| h.src_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "each idle worker took one task: {a:?}");
    assert!(
        a.iter()
            .all(|h| h.pkt_type == PacketType::TaskDoneIdle && h.qlen == 0)
    );
    let mut seqs: Vec<u16> = a.iter().map(|h| h.seq_num).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, vec![0, 1, 2, 3]);

    // Five at once: four from the idle list, the fifth by power of two to a busy worker, which
    // answers its first task with TASK_DONE (one still queued) and its second with
    // TASK_DONE_IDLE.
    for seq in 10..15 {
        let (h, p) = task(seq, PacketType::NewTask, 1000);
        c.send(leaf, h, p).unwrap();
    }
    let a = answers(&mut c, 6, Duration::from_secs(5));
    assert_eq!(a.len(), 5, "{a:?}");
    let mut seqs: Vec<u16> = a.iter().map(|h| h.seq_num).collect();
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (10..15).collect::<Vec<_>>(),
        "each task answered once"
    );
    let queued: Vec<&HorusHeader> = a.iter().filter(|h| h.qlen == 1).collect();
    assert_eq!(queued.len(), 1, "{a:?}");
    assert_eq!(queued[0].pkt_type, PacketType::TaskDone);
    let twice = queued[0].src_id;
    assert_eq!(a.iter().filter(|h| h.src_id == twice).count(), 2);
    assert_eq!(
        a.iter()
            .filter(|h| h.pkt_type == PacketType::TaskDoneIdle)
            .count(),
        4
    );

    let stats = stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    let end = sw.join().unwrap();
    assert_eq!(stats.iter().map(|s| s.tasks).sum::<u64>(), 9);
    assert_eq!(stats.iter().map(|s| s.from_idle_list).sum::<u64>(), 8);
    assert_eq!(stats.iter().map(|s| s.done_idle).sum::<u64>(), 8);
    assert_eq!(end.registrations, 4);
    assert_eq!(end.removals, 0);
}

fn client_cfg(t: &Topology, i: u16, rate: f64, secs: f64, seed: u64) -> ClientConfig {
    ClientConfig {
        me: link::host(t.client(i).unwrap()),
        scheduler: link::host(t.leaf(1)),
        pool: horus_endpoints::demo::POOL,
        client_id: i + 1,
        rate,
        duration: Duration::from_secs_f64(secs),
        service: ServiceTime::Exponential { mean_ns: 2e6 },
        policy: Policy::Horus,
        packets: 1,
        seed,
        drain: Duration::from_secs(2),
        transport: link::Transport::Frames,
        answers_from: None,
        trace: None,
    }
}

#[test]
fn a_killed_worker_is_removed_and_gets_no_task_afterwards_and_the_others_lose_nothing() {
    let t = topo(2, 4);
    let timeout = Duration::from_secs(1);
    let (stop, sw) = start_leaf(&t, timeout);
    let mut slots = start_slots(&t, Duration::from_millis(100));
    // Load 0.2 of the rack, 4 s; one worker dies at 0.7 s.
    let a = {
        let cfg = client_cfg(&t, 0, 400.0, 4.0, 1);
        std::thread::spawn(move || client::run(&cfg, |_| {}).unwrap().0)
    };
    std::thread::sleep(Duration::from_millis(700));
    let (dead_stop, dead) = slots.remove(0);
    dead_stop.store(true, Ordering::Relaxed);
    let dead = dead.join().unwrap();
    // After the removal (the timeout, and as long again of slack), another client.
    std::thread::sleep(2 * timeout);
    let b = client::run(&client_cfg(&t, 1, 400.0, 1.0, 2), |_| {})
        .unwrap()
        .0;
    let a = a.join().unwrap();
    let stats = stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    let end = sw.join().unwrap();

    assert_eq!(end.removals, 1, "the controller removed the silent worker");
    let dead_id = dead.id.unwrap();
    assert!(end.members.contains(&(dead_id, false)), "{:?}", end.members);
    assert_eq!(end.members.iter().filter(|m| m.1).count(), 3);
    // Tasks sent to the dead worker before its removal are lost; none after.
    assert_eq!(b.lost, 0, "{b:?}");
    assert_eq!((b.duplicates, b.unexpected), (0, 0));
    assert_eq!(b.answered, b.sent);
    assert!(b.sent > 250, "{b:?}");
    assert_eq!(a.answered + a.lost, a.sent);
    assert_eq!((a.duplicates, a.unexpected), (0, 0));
    // At most half the tasks of the window between the death and the removal (1.1 s x 400/s;
    // power of two sends the dead worker fewer and fewer as its load grows).
    assert!(a.lost <= 220, "{a:?}");
    let served: u64 = stats.iter().map(|s| s.tasks).sum::<u64>() + dead.tasks;
    assert_eq!(served, a.answered + b.answered);
    assert_eq!(end.stats.not_frames, 0);
}

#[test]
fn a_client_replays_an_arrival_trace_with_its_service_times() {
    let t = topo(3, 2);
    let (stop, sw) = start_leaf(&t, Duration::from_secs(5));
    let slots = start_slots(&t, Duration::from_millis(100));
    // 30 tasks 4 ms apart asking for 3 ms each: the workload's own times (10 us) would answer
    // in well under a millisecond.
    let text: String = (0..30).map(|i| format!("{} 3000\n", i * 4000)).collect();
    let mut cfg = client_cfg(&t, 0, 1.0, 10.0, 1);
    cfg.service = ServiceTime::Exponential { mean_ns: 10e3 };
    cfg.trace = Some(client::read_trace(&text).unwrap());
    let start = Instant::now();
    let r = client::run(&cfg, |_| {}).unwrap().0;
    let took = start.elapsed();
    stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    sw.join().unwrap();
    assert_eq!((r.sent, r.answered, r.lost), (30, 30, 0), "{r:?}");
    assert!(r.p50_us >= 3000.0, "{r:?}");
    // The trace ends after 116 ms: the run does not wait for the duration of 10 s.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// `horus-switch` as a user starts it: a leaf from a configuration file, its metrics over HTTP
/// as a worker registers.
#[test]
fn the_switch_binary_serves_its_metrics_as_a_worker_registers() {
    let t = topo(4, 1);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf.toml");
    std::fs::write(&cfg, t.leaf_toml_open(1)).unwrap();
    let http = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut kids = horus_endpoints::demo::Children::default();
    kids.start(
        std::path::Path::new(env!("CARGO_BIN_EXE_horus-switch")),
        &[
            "--config".into(),
            cfg.display().to_string(),
            "--metrics".into(),
            http.to_string(),
            "--duration-s".into(),
            "30".into(),
        ],
        Some("metrics on"),
        Duration::from_secs(20),
    )
    .unwrap();
    let slots = start_slots(&t, Duration::from_millis(100));
    let url = format!("http://{http}/metrics");
    let end = Instant::now() + Duration::from_secs(10);
    let body = loop {
        let b = ureq::get(&url).call().unwrap().into_string().unwrap();
        if b.contains("horus_controller_registrations_total 1") || Instant::now() > end {
            break b;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    stop_all(slots);
    for want in [
        "horus_controller_registrations_total 1",
        "horus_worker_up{pool=\"1\",worker=\"0\"",
        "horus_softswitch_frames_in_total ",
        "horus_softswitch_to_control_total ",
        "horus_switch_control_passes ",
    ] {
        assert!(body.contains(want), "{want} not in\n{body}");
    }
    let frames_in: u64 = body
        .lines()
        .find_map(|l| l.strip_prefix("horus_softswitch_frames_in_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(frames_in >= 1);
    assert_eq!(
        ureq::get(&format!("http://{http}/other"))
            .call()
            .unwrap_err()
            .kind(),
        ureq::ErrorKind::HTTP
    );
}

/// A task as the public testbed's client builds it (the 165 bytes after UDP written from its
/// `Message` and `generate_packet`: RocksDB client 110, request 7, one packet, `run_ns` 200 us,
/// `gen_ns` its wall clock, `dst_id` 100), with the cluster ID a public spine writes (the rack's
/// pool): our leaf schedules it, our worker serves it for 200 us, and the answer carries the
/// payload back byte for byte, as the public client reads it.
#[test]
fn a_public_clients_task_is_served_for_its_run_ns_and_echoed_byte_for_byte() {
    let t = topo(5, 2);
    let (stop, sw) = start_leaf(&t, Duration::from_secs(5));
    let slots = start_slots(&t, Duration::from_millis(100));
    let leaf = link::host(t.leaf(1));
    let mut c = Link::bind(link::host(t.client(0).unwrap()), link::socket_addr(&leaf)).unwrap();
    let pool = horus_endpoints::demo::POOL.to_be_bytes();
    let mut udp = vec![
        0x00, pool[0], pool[1], 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x07,
    ];
    udp.extend_from_slice(&[0x00, 0x6e]); // client_id 110, big endian
    udp.extend_from_slice(&7u32.to_le_bytes()); // req_id
    udp.extend_from_slice(&165u32.to_le_bytes()); // pkts_length: one packet, in bytes
    udp.extend_from_slice(&200_000u64.to_le_bytes()); // run_ns
    let gen_ns = client::wall_ns();
    udp.extend_from_slice(&gen_ns.to_le_bytes());
    udp.resize(165, 0);
    let h = HorusHeader::parse(&udp).unwrap();
    assert_eq!(h.to_bytes(), udp[..11], "the header goes out as built");
    let sent = Instant::now();
    c.send(leaf, h, udp[11..].to_vec()).unwrap();
    let a = answer_frames(&mut c, 1, Duration::from_secs(5));
    let took = sent.elapsed();
    assert_eq!(a.len(), 1, "{a:?}");
    let (rh, rp) = &a[0];
    assert!(rh.pkt_type.is_reply(), "{rh:?}");
    assert_eq!(rh.dst_id, 110, "to the client's ID");
    assert_eq!(rh.seq_num, 7);
    assert_eq!(
        rp[..26],
        udp[11..37],
        "client_id, req_id, pkts_length, run_ns and gen_ns echoed byte for byte"
    );
    // As the public client reads it: gen_ns little endian at byte 29 of the message, in the past.
    let echoed = u64::from_le_bytes(rp[18..26].try_into().unwrap());
    assert!(echoed <= client::wall_ns());
    // Served for its 200 us (a big-endian reading of run_ns would be the 10 s cap).
    assert!(
        took >= Duration::from_micros(200) && took < Duration::from_secs(2),
        "answered after {took:?}"
    );
    let stats = stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    sw.join().unwrap();
    assert_eq!(stats.iter().map(|s| s.tasks).sum::<u64>(), 1);
}

/// A stand-in of the public testbed's worker (`tests/public_worker.py`, written from the public
/// definitions: one server of two worker cores, configured in the leaf as nodes 0 and 1 at its
/// address, as the public controller's topology holds its servers) behind our leaf and its
/// controller: its public keep-alives get it watched, the controller's public WORKER_ID gets it
/// its IDs (first node 0) and its public acknowledgement is counted, and it serves our client's
/// tasks, which come back to the client answered, each once.
#[test]
fn a_public_worker_registers_the_public_way_and_serves_our_client_behind_our_leaf() {
    let t = topo(6, 2);
    let server = t.first_worker(1);
    let mut toml = t.leaf_toml_open(1);
    for id in 0..2 {
        toml += &format!(
            "  [[pools.nodes]]\n  id = {id}\n  mac = \"{}\"\n  ip = \"{server}\"\n  udp_port = 1234\n  port = 8\n",
            link::mac_of(server)
        );
    }
    let (stop, sw) = start_leaf_with(
        Config::from_toml_str(&toml).unwrap(),
        Duration::from_secs(5),
    );
    // Configured with worker IDs 11 and 12: the controller's WORKER_ID renumbers them to 1 and
    // 2 (nodes 0 and 1), as the public controller renumbers a leaf's servers.
    let stand_in = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/public_worker.py"
        ))
        .args([
            &server.to_string(),
            &t.leaf(1).to_string(),
            "7",
            "1",
            "11",
            "2",
            "0.1",
            "4",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    // Until the controller adopted both workers.
    std::thread::sleep(Duration::from_millis(500));
    let mut cfg = client_cfg(&t, 0, 200.0, 1.0, 21);
    cfg.service = ServiceTime::Exponential { mean_ns: 200e3 };
    let (r, _) = client::run(&cfg, |_| {}).unwrap();
    let out = stand_in.wait_with_output().unwrap();
    assert!(out.status.success());
    let seen: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    stop.store(true, Ordering::Relaxed);
    let end = sw.join().unwrap();
    assert!(r.sent > 50, "{r:?}");
    assert_eq!(
        (r.answered, r.lost, r.duplicates, r.unexpected),
        (r.sent, 0, 0, 0),
        "{r:?} {seen}"
    );
    assert_eq!(seen["tasks"], r.sent, "{seen}");
    assert_eq!(seen["worker_ids"], serde_json::json!([0]), "{seen}");
    assert_eq!(seen["other"], 0, "{seen}");
    let mut members = end.members.clone();
    members.sort_unstable();
    assert_eq!(members, [(0, true), (1, true)]);
    assert!(end.counts.public_keep_alives >= 5, "{:?}", end.counts);
    assert_eq!(end.counts.acks_received, 1, "{:?}", end.counts);
    assert_eq!(end.registrations, 0, "no WORKER_ID of ours");
    assert_eq!(end.removals, 0);
}

/// A stand-in of the public testbed's client (`tests/public_client.py`, written from the public
/// definitions) sends its tasks (200 us each, one packet, `dst_id` 100) to our leaf, whose rack's
/// two slots serve under the IDs of its configuration as public workers do: every task is
/// answered once, by a slot of the rack, with `gen_ns` echoed so that the public client reads a
/// time in the past, after at least its `run_ns`.
#[test]
fn a_public_client_is_served_by_our_leaf_and_workers() {
    let t = topo(7, 2);
    let (stop, sw) = start_leaf_with(
        Config::from_toml_str(&t.leaf_toml(1)).unwrap(),
        Duration::from_secs(5),
    );
    let slots = start_slots_from(&t, Some(0), Duration::from_millis(100));
    let out = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/public_client.py"
        ))
        .args([
            &t.client(0).unwrap().to_string(),
            &t.leaf(1).to_string(),
            &horus_endpoints::demo::POOL.to_string(),
            "110",
            "200",
            "400",
            "200000",
            "3",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    let stats = stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    sw.join().unwrap();
    assert_eq!(r["answers"], 200, "{r}");
    assert_eq!(r["future"], 0, "{r}");
    assert_eq!(r["twice"], serde_json::json!([]), "{r}");
    assert_eq!(r["missing"], serde_json::json!([]), "{r}");
    assert!(r["p50_us"].as_f64().unwrap() >= 200.0, "{r}");
    // Every task served by a slot of the rack, under its configured ID; which slot is the idle
    // list's choice (tasks that do not overlap all go to the last slot to go idle).
    assert_eq!(stats.iter().map(|s| s.tasks).sum::<u64>(), 200);
    assert_eq!(
        stats.iter().map(|s| s.id).collect::<Vec<_>>(),
        [Some(0), Some(1)],
        "{stats:?}"
    );
}

/// A leaf restarted without its state file knows none of its workers: it tells each worker whose
/// keep-alive it hears that it is no member (REMOVE_ACK), the worker registers again, and the
/// rack serves as before.
#[test]
fn workers_register_again_with_a_leaf_restarted_without_its_state() {
    let t = topo(8, 2);
    let (stop, sw) = start_leaf(&t, Duration::from_secs(5));
    let slots = start_slots(&t, Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let first = sw.join().unwrap();
    assert_eq!(first.registrations, 2);
    let (stop, sw) = start_leaf(&t, Duration::from_secs(5));
    // A few keep-alive periods: each slot is told, and registers again.
    std::thread::sleep(Duration::from_millis(500));
    let leaf = link::host(t.leaf(1));
    let mut c = Link::bind(link::host(t.client(0).unwrap()), link::socket_addr(&leaf)).unwrap();
    for seq in 0..4 {
        let (h, p) = task(seq, PacketType::NewTask, 1);
        c.send(leaf, h, p).unwrap();
    }
    let a = answers(&mut c, 5, Duration::from_secs(3));
    assert_eq!(a.len(), 4, "{a:?}");
    let stats = stop_all(slots);
    stop.store(true, Ordering::Relaxed);
    let end = sw.join().unwrap();
    assert_eq!(end.registrations, 2, "both registered with the new leaf");
    assert!(
        stats
            .iter()
            .all(|s| s.reregistrations >= 1 && s.remove_acks >= 1),
        "{stats:?}"
    );
    assert_eq!(stats.iter().map(|s| s.tasks).sum::<u64>(), 4);
}
