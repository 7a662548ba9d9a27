//! The memory (RSS) of the software leaf and a worker before and after a flood of each hostile
//! kind: run with `cargo test -p horus-endpoints --test flood_rss -- --ignored --nocapture`
//! (`FLOOD_S` seconds a flood, 15 by default). Each flood must leave the process's memory
//! within 8 MiB of where it started; the table in `docs/host-driver.md` is its output.

use std::io::Write;
use std::net::{Ipv4Addr, TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use horus_endpoints::link;
use horus_model::wire::{HorusFrame, HorusHeader, PacketType};

fn ip(host: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 120, (std::process::id() % 250) as u8, host)
}

fn rss_kib(c: &Child) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", c.id()))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn header(t: PacketType) -> HorusHeader {
    HorusHeader {
        pkt_type: t,
        more_packets: false,
        pool_id: 1,
        src_id: 0xffff,
        dst_id: 0,
        qlen: 0,
        seq_num: 0,
    }
}

/// Sends what `make` gives for `secs` from `sock` to `to`, as fast as the socket takes it (a
/// millisecond's rest each 20 datagrams): how many.
fn flood(sock: &UdpSocket, to: (Ipv4Addr, u16), secs: f64, make: &dyn Fn(u64) -> Vec<u8>) -> u64 {
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed().as_secs_f64() < secs {
        for _ in 0..20 {
            if sock.send_to(&make(sent), to).is_ok() {
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    sent
}

fn spawn(bin: &str, args: &[String]) -> Child {
    let c = Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    c
}

/// One row: the flood, what was sent, RSS before and after (KiB); fails past 8 MiB of growth.
fn row(what: &str, c: &Child, run: &mut dyn FnMut() -> u64) {
    let before = rss_kib(c);
    let sent = run();
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(c);
    println!("| {what} | {sent} | {before} | {after} |");
    assert!(after < before + 8192, "{what}: {before} KiB -> {after} KiB");
}

#[test]
#[ignore = "a measurement of some minutes: run it by name"]
fn memory_stays_bounded_under_each_flood() {
    let secs: f64 = std::env::var("FLOOD_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15.0);
    let dir = tempfile::tempdir().unwrap();
    let n = [127, 120, (std::process::id() % 250) as u8];
    let t = horus_endpoints::demo::Topology::new(n, 1, 8).unwrap();
    let leaf = t.leaf(1);
    let cfg = dir.path().join("leaf.toml");
    // Allowed: this test's hosts below .128; the rest of the /24 is "outside".
    std::fs::write(
        &cfg,
        t.leaf_toml_open(1) + &format!("\n[security]\nallow = [\"{}/25\"]\n", ip(0)),
    )
    .unwrap();
    let keyf = dir.path().join("keys");
    std::fs::write(
        &keyf,
        "7 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
    )
    .unwrap();
    let http = format!("{}:9464", ip(11));
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let bin = env!("CARGO_BIN_EXE_horus-switch");
    let mut sw = spawn(
        bin,
        &s(&["--config", cfg.to_str().unwrap(), "--metrics", &http]),
    );
    println!("{secs} s a flood (debug build)\n");
    println!("| flood | datagrams or connections | RSS before (KiB) | RSS after (KiB) |");
    println!("|---|---|---|---|");
    let to = (leaf, 1234);
    let wid = |src: Ipv4Addr| {
        HorusFrame::new(
            link::host(src),
            link::host(leaf),
            header(PacketType::WorkerId),
            vec![],
        )
        .to_bytes()
    };
    let outside = UdpSocket::bind((ip(200), 1234)).unwrap();
    row(
        "registrations from outside the allowed networks",
        &sw,
        &mut || flood(&outside, to, secs, &|_| wid(ip(200))),
    );
    let inside = UdpSocket::bind((ip(40), 1234)).unwrap();
    row(
        "frames for a destination outside them (relay)",
        &sw,
        &mut || {
            flood(&inside, to, secs, &|_| {
                let mut d = link::host(ip(201));
                d.udp_port = 5555;
                HorusFrame::new(
                    link::host(ip(40)),
                    d,
                    header(PacketType::NewTask),
                    vec![0; 165],
                )
                .to_bytes()
            })
        },
    );
    row("registrations from 100 forged sources", &sw, &mut || {
        flood(&inside, to, secs, &|k| wid(ip(20 + (k % 100) as u8)))
    });
    row(
        "metrics: connections that send nothing, 50 at a time",
        &sw,
        &mut || {
            let t0 = Instant::now();
            let mut opened = 0u64;
            while t0.elapsed().as_secs_f64() < secs {
                let held: Vec<TcpStream> = (0..50)
                    .filter_map(|_| TcpStream::connect(&http).ok())
                    .collect();
                opened += held.len() as u64;
                std::thread::sleep(Duration::from_millis(100));
            }
            opened
        },
    );
    row("metrics: headers without end", &sw, &mut || {
        let t0 = Instant::now();
        let mut opened = 0u64;
        while t0.elapsed().as_secs_f64() < secs {
            if let Ok(mut c) = TcpStream::connect(&http) {
                opened += 1;
                let _ = c.write_all(b"GET /metrics HTTP/1.1\r\n");
                for _ in 0..20 {
                    if c.write_all(&[b'x'; 1000]).is_err() {
                        break;
                    }
                }
            }
        }
        opened
    });
    let _ = sw.kill();
    let _ = sw.wait();
    let mut keyed = spawn(
        bin,
        &s(&[
            "--config",
            cfg.to_str().unwrap(),
            "--key-file",
            keyf.to_str().unwrap(),
        ]),
    );
    row(
        "unsigned registrations to a keyed controller",
        &keyed,
        &mut || flood(&inside, to, secs, &|_| wid(ip(40))),
    );
    let _ = keyed.kill();
    let _ = keyed.wait();
    // A worker (its leaf a socket of this test's): tasks sent around its leaf.
    let _leaf = UdpSocket::bind((leaf, 1234)).unwrap();
    let mut w = spawn(
        env!("CARGO_BIN_EXE_horus-worker"),
        &s(&[
            "--leaf",
            &leaf.to_string(),
            "--pool",
            "1",
            "--ip",
            &ip(32).to_string(),
            "--id",
            "0",
        ]),
    );
    row("tasks to a worker around its leaf", &w, &mut || {
        flood(&inside, (ip(32), 1234), secs, &|k| {
            let h = HorusHeader {
                seq_num: k as u16,
                ..header(PacketType::NewTask)
            };
            HorusFrame::new(link::host(ip(40)), link::host(ip(32)), h, vec![0; 165]).to_bytes()
        })
    });
    let _ = w.kill();
    let _ = w.wait();
}
