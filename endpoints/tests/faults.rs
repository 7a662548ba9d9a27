//! Faults an operator's processes meet: a stop and continue (Ctrl-Z and `fg`, a container pause,
//! a debugger), which makes Linux fail a blocked socket call with EINTR.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use horus_endpoints::demo::Topology;

fn spawn(bin: &str, args: &[String]) -> Child {
    Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(c: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(c.id() as libc::pid_t, sig) }, 0);
}

/// A leaf, its two worker slots and a client, each stopped (SIGSTOP) and continued (SIGCONT) in
/// the middle of a run: each goes on, and every task is answered.
#[test]
fn stopped_and_continued_processes_go_on_serving() {
    let t = Topology::new([127, 230, (std::process::id() % 250) as u8], 1, 2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf1.toml");
    std::fs::write(&cfg, t.leaf_toml(1)).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut leaf = spawn(
        env!("CARGO_BIN_EXE_horus-switch"),
        &s(&["--config", cfg.to_str().unwrap(), "--duration-s", "6"]),
    );
    std::thread::sleep(Duration::from_millis(300));
    let worker = spawn(
        env!("CARGO_BIN_EXE_horus-worker"),
        &s(&[
            "--leaf",
            &t.leaf(1).to_string(),
            "--pool",
            "1",
            "--ip",
            &t.first_worker(1).to_string(),
            "--slots",
            "2",
            "--id",
            "0",
            "--service",
            "fixed:100",
            "--duration-s",
            "5",
        ]),
    );
    std::thread::sleep(Duration::from_millis(300));
    let client = spawn(
        env!("CARGO_BIN_EXE_horus-client"),
        &s(&[
            "--scheduler",
            &t.leaf(1).to_string(),
            "--ip",
            &t.client(0).unwrap().to_string(),
            "--pool",
            "1",
            "--rate",
            "200",
            "--duration-s",
            "2",
            "--json",
            dir.path().join("client.json").to_str().unwrap(),
        ]),
    );
    for c in [&client, &worker, &leaf] {
        std::thread::sleep(Duration::from_millis(300));
        signal(c, libc::SIGSTOP);
        std::thread::sleep(Duration::from_millis(200));
        signal(c, libc::SIGCONT);
    }
    let c = client.wait_with_output().unwrap();
    assert!(
        c.status.success(),
        "client: {}",
        String::from_utf8_lossy(&c.stderr)
    );
    let w = worker.wait_with_output().unwrap();
    assert!(
        w.status.success(),
        "worker: {}",
        String::from_utf8_lossy(&w.stderr)
    );
    let l = leaf.wait().unwrap();
    assert!(l.success(), "leaf");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("client.json")).unwrap())
            .unwrap();
    let r = &r["report"];
    assert!(r["sent"].as_u64().unwrap() > 200, "{r}");
    assert_eq!(r["answered"], r["sent"], "{r}");
    assert_eq!(r["lost"], 0, "{r}");
}

/// A slot whose handler fails (here: panics) stops its keep-alives with it, so that the
/// controller removes it instead of sending it tasks no one serves.
#[test]
fn a_slot_that_dies_falls_silent() {
    use horus_endpoints::link::{self, Link};
    use horus_endpoints::payload::TaskPayload;
    use horus_endpoints::worker;
    use horus_model::wire::{HorusHeader, PacketType};
    use std::net::{SocketAddr, UdpSocket};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let net = [127, 231, (std::process::id() % 250) as u8];
    let ip = |h: u8| std::net::Ipv4Addr::new(net[0], net[1], net[2], h);
    let leaf = UdpSocket::bind((ip(11), 1234)).unwrap();
    leaf.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let cfg = worker::slot_configs(
        ip(32),
        1,
        SocketAddr::from((ip(11), 1234)),
        1,
        Some(0),
        Duration::from_millis(20),
    )
    .unwrap()
    .remove(0);
    let stop = Arc::new(AtomicBool::new(false));
    let slot = std::thread::spawn(move || {
        let handler: worker::Handler = Box::new(|_| panic!("the handler fails"));
        worker::run_slot(cfg, handler, stop, |_| {})
    });
    let mut buf = [0u8; 2048];
    let heard = |leaf: &UdpSocket, buf: &mut [u8], for_: Duration| {
        let end = std::time::Instant::now() + for_;
        let mut n = 0;
        while std::time::Instant::now() < end {
            if leaf.recv_from(buf).is_ok() {
                n += 1;
            }
        }
        n
    };
    assert!(
        heard(&leaf, &mut buf, Duration::from_millis(200)) >= 3,
        "keep-alives"
    );
    // A task for it: its handler panics, the slot thread ends.
    let mut client = Link::bind(link::host(ip(200)), SocketAddr::from((ip(32), 1234))).unwrap();
    let h = HorusHeader {
        pkt_type: PacketType::NewTask,
        more_packets: false,
        pool_id: 1,
        src_id: 0,
        dst_id: 0,
        qlen: 0,
        seq_num: 1,
    };
    let p = TaskPayload {
        pkts_length: TaskPayload::length_of(1),
        ..TaskPayload::default()
    };
    // Through the leaf, as every frame reaches a worker on this network.
    let task = client.frame(link::host(ip(32)), h, p.to_bytes());
    leaf.send_to(&task, (ip(32), 1234)).unwrap();
    assert!(slot.join().is_err(), "the slot thread panicked");
    heard(&leaf, &mut buf, Duration::from_millis(60));
    assert_eq!(
        heard(&leaf, &mut buf, Duration::from_millis(200)),
        0,
        "silent once its slot died"
    );
}

/// `horus-switch ... | head -2`: the reader goes away, the switch serves on to its end.
#[test]
fn a_closed_standard_output_does_not_stop_the_switch() {
    use std::io::BufRead;
    let t = Topology::new([127, 232, (std::process::id() % 250) as u8], 1, 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("leaf1.toml");
    std::fs::write(&cfg, t.leaf_toml(1)).unwrap();
    let mut leaf = Command::new(env!("CARGO_BIN_EXE_horus-switch"))
        .args(["--config", cfg.to_str().unwrap()])
        .args(["--stats-every-s", "0.05", "--duration-s", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(leaf.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("serving"), "{line}");
    drop(out);
    let status = leaf.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut leaf.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
}
