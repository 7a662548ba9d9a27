//! The metrics server against hostile clients, over real TCP on loopback: connections that send
//! nothing, a header without end, and a flood of connections. It keeps a bounded number of
//! threads and answers a scraper throughout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use horus_host_driver::metrics::{Limits, serve_on};

/// Threads of this process (`/proc/self/status`).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// `GET path` answered within `wait`: its status line and body.
fn get(addr: SocketAddr, path: &str, wait: Duration) -> Option<(String, String)> {
    let mut s = TcpStream::connect_timeout(&addr, wait).ok()?;
    s.set_read_timeout(Some(wait)).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// A scrape that succeeds within `within`, trying again every 50 ms.
fn scrape_within(addr: SocketAddr, within: Duration) -> Option<String> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some((status, body)) = get(addr, "/metrics", Duration::from_millis(500))
            && status.contains("200")
        {
            return Some(body);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn count(body: &str, name: &str) -> u64 {
    body.lines()
        .find_map(|l| l.strip_prefix(&format!("horus_metrics_http_{name}_total ")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {body}"))
}

#[test]
fn the_metrics_server_stays_bounded_and_answers_under_hostile_clients() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let before = threads();
    let limits = Limits {
        deadline: Duration::from_millis(500),
        ..Limits::default()
    };
    let snap = serve_on(l, limits);
    *snap.lock().unwrap() = "horus_test 1\n".into();
    let started = threads();
    assert_eq!(
        started - before,
        limits.threads + 1,
        "the answering threads and the acceptor"
    );
    let body = scrape_within(addr, Duration::from_secs(1)).expect("a scrape");
    assert!(body.starts_with("horus_test 1\n"), "{body}");
    assert_eq!(
        get(addr, "/", Duration::from_secs(1)).unwrap().0,
        "HTTP/1.1 404 Not Found"
    );

    // 200 connections that send nothing, opened as fast as they can be: no new thread; those
    // past the queue closed at once, the others given up at the deadline; a scraper served.
    let idle: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(threads(), started, "no thread for a connection");
    let body = scrape_within(addr, Duration::from_secs(4)).expect("a scrape among idle clients");
    assert!(count(&body, "refused_busy") > 0, "{body}");
    drop(idle);

    // A header without end: 431 once past the bound, and the server goes on.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
    let line = format!("X-Junk: {}\r\n", "a".repeat(1000));
    for _ in 0..100 {
        if s.write_all(line.as_bytes()).is_err() {
            break;
        }
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 431"),
        "{:?}",
        &answer[..answer.len().min(80)]
    );
    let body = scrape_within(addr, Duration::from_secs(4)).expect("a scrape after");
    assert_eq!(count(&body, "refused_header"), 1);
    assert!(count(&body, "timed_out") > 0, "{body}");
    assert_eq!(threads(), started);
}
