//! Prometheus metrics over HTTP, for the daemons that watch a switch (`horusctl serve`, a
//! software switch): the switch's counters in the text format, and a small synchronous server
//! that answers `GET /metrics` with the last snapshot its caller published.
//!
//! The server is a few lines of `std` rather than a library, so that its bounds are its own
//! ([`Limits`]): a fixed number of threads (a scrape every few seconds needs one; tiny_http, used
//! before, spawns a thread for every connection it cannot serve at once), a queue of waiting
//! connections beyond which new ones are closed at once, a deadline for each connection to send
//! its request (a client that sends nothing holds a thread that long at most), a bound on a
//! request's header, and an accept loop that waits out the errors of a process out of file
//! descriptors instead of ending. It speaks only what a scraper asks: `GET /metrics`, HTTP/1.0
//! or 1.1, one request a connection. Its own counts are in every answer
//! (`horus_metrics_http_*`).

use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::driver::DriverError;
use crate::leaf::Leaf;

/// The switch's counters and status in the Prometheus text format (`horus_switch_*`).
pub fn switch_metrics<L: Leaf>(sw: &mut L) -> Result<String, DriverError> {
    let mut s = String::new();
    for (name, v) in sw.counters()? {
        let n = name.to_lowercase();
        s += &format!("# TYPE horus_switch_{n} counter\nhorus_switch_{n} {v}\n");
    }
    let st = sw.status()?;
    s += &format!(
        "# TYPE horus_switch_overflow gauge\nhorus_switch_overflow {}\n# TYPE horus_switch_in_flight gauge\nhorus_switch_in_flight {}\n",
        st >> 1 & 1,
        st >> 8 & 0xff
    );
    Ok(s)
}

/// The metrics server's bounds.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Threads that answer (and connections served at once).
    pub threads: usize,
    /// Connections accepted and waiting for a thread; more are closed at once.
    pub queue: usize,
    /// Bytes of request line and header at most (the answer past it: 431).
    pub max_header: usize,
    /// How long a connection may take to send its request and take the answer.
    pub deadline: Duration,
}

impl Default for Limits {
    /// 2 threads, 8 waiting, 8 KiB of header, 2 s a connection.
    fn default() -> Limits {
        Limits {
            threads: 2,
            queue: 8,
            max_header: 8192,
            deadline: Duration::from_secs(2),
        }
    }
}

/// What the server counted.
#[derive(Debug, Default)]
struct HttpCounts {
    answered: AtomicU64,
    /// Connections closed at once: every thread busy and the queue full.
    refused_busy: AtomicU64,
    /// Requests whose header was over [`Limits::max_header`].
    refused_header: AtomicU64,
    /// Connections that did not send a whole request within the deadline.
    timed_out: AtomicU64,
    /// Failed accepts (out of file descriptors, say), each waited out.
    accept_errors: AtomicU64,
}

impl HttpCounts {
    fn text(&self) -> String {
        let mut s = String::new();
        for (name, v) in [
            ("answered", &self.answered),
            ("refused_busy", &self.refused_busy),
            ("refused_header", &self.refused_header),
            ("timed_out", &self.timed_out),
            ("accept_errors", &self.accept_errors),
        ] {
            s += &format!(
                "# TYPE horus_metrics_http_{name}_total counter\nhorus_metrics_http_{name}_total {}\n",
                v.load(Ordering::Relaxed)
            );
        }
        s
    }
}

/// Serves `GET /metrics` on `addr` from threads of its own; the caller writes the body into the
/// returned snapshot whenever it has a new one.
pub fn serve(addr: SocketAddr) -> Result<Arc<Mutex<String>>, String> {
    let l = TcpListener::bind(addr).map_err(|e| format!("binding HTTP {addr}: {e}"))?;
    Ok(serve_on(l, Limits::default()))
}

/// [`serve`] on a bound listener, within `limits`.
pub fn serve_on(listener: TcpListener, limits: Limits) -> Arc<Mutex<String>> {
    let snapshot = Arc::new(Mutex::new(String::new()));
    let counts = Arc::new(HttpCounts::default());
    let (tx, rx) = std::sync::mpsc::sync_channel::<TcpStream>(limits.queue);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..limits.threads.max(1) {
        let (rx, snapshot, counts) = (Arc::clone(&rx), Arc::clone(&snapshot), Arc::clone(&counts));
        std::thread::spawn(move || answer_loop(&rx, &snapshot, &counts, limits));
    }
    std::thread::spawn(move || accept_loop(&listener, &tx, &counts));
    snapshot
}

fn accept_loop(listener: &TcpListener, tx: &SyncSender<TcpStream>, counts: &HttpCounts) {
    loop {
        match listener.accept() {
            Ok((s, _)) => match tx.try_send(s) {
                Ok(()) => {}
                // Dropped: closed at once.
                Err(TrySendError::Full(_)) => {
                    counts.refused_busy.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => return,
            },
            // Out of file descriptors, a connection reset before it was taken: the listener
            // is still good; wait a little so that a lasting error does not spin.
            Err(_) => {
                counts.accept_errors.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn answer_loop(
    rx: &Mutex<Receiver<TcpStream>>,
    snapshot: &Mutex<String>,
    counts: &HttpCounts,
    limits: Limits,
) {
    loop {
        let next = match rx.lock() {
            Ok(r) => r.recv(),
            Err(_) => return,
        };
        let Ok(mut s) = next else {
            return;
        };
        let (status, body) = match read_request(&mut s, limits) {
            Request::Metrics => {
                counts.answered.fetch_add(1, Ordering::Relaxed);
                let text = snapshot.lock().map(|t| t.clone()).unwrap_or_default();
                ("200 OK", text + &counts.text())
            }
            Request::Other => ("404 Not Found", "see /metrics\n".to_string()),
            Request::TooLarge => {
                counts.refused_header.fetch_add(1, Ordering::Relaxed);
                ("431 Request Header Fields Too Large", String::new())
            }
            Request::Late => {
                counts.timed_out.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        let _ = s.set_write_timeout(Some(limits.deadline));
        let _ = write!(
            s,
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        // What the client still sends is read (a little, briefly) before the close, so that
        // the kernel does not answer it with a reset that could beat the answer to the client.
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
        let mut sink = [0u8; 4096];
        for _ in 0..64 {
            if !matches!(s.read(&mut sink), Ok(n) if n > 0) {
                break;
            }
        }
    }
}

enum Request {
    Metrics,
    Other,
    TooLarge,
    /// Not whole within the deadline (or the connection failed).
    Late,
}

/// Reads a request's line and header, within the deadline and the size bound.
fn read_request(s: &mut TcpStream, limits: Limits) -> Request {
    let end = Instant::now() + limits.deadline;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        if buf.len() > limits.max_header {
            return Request::TooLarge;
        }
        let Some(left) = end.checked_duration_since(Instant::now()) else {
            return Request::Late;
        };
        if s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .is_err()
        {
            return Request::Late;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return Request::Late,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let line = buf.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    match (words.next(), words.next()) {
        (Some(b"GET"), Some(b"/metrics")) => Request::Metrics,
        _ => Request::Other,
    }
}

/// Datagrams the kernel dropped for `sock` (its receive buffer full): the `drops` column of
/// `/proc/self/net/udp` for the socket's local address. `None` where the kernel does not tell:
/// the file unreadable, or a kernel (a sandbox's, say) that does not list the socket there.
pub fn kernel_drops(sock: &UdpSocket) -> Option<u64> {
    let SocketAddr::V4(a) = sock.local_addr().ok()? else {
        return None;
    };
    udp_table_drops(&std::fs::read_to_string("/proc/self/net/udp").ok()?, a)
}

/// The `drops` column of the row for `addr` in a table written as Linux writes
/// `/proc/net/udp`: a heading line, then one row a socket whose second field is the local address
/// as the 32-bit word in host order and the port, both in hex, and whose last field is the drops.
pub fn udp_table_drops(table: &str, addr: SocketAddrV4) -> Option<u64> {
    let want = format!(
        "{:08X}:{:04X}",
        u32::from_ne_bytes(addr.ip().octets()),
        addr.port()
    );
    table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(1) == Some(&want.as_str()))
        .and_then(|f| f.last()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as Linux 6 wrote them on an x86-64 machine for two sockets at 127.77.2.1:55917 (no
    /// drops) and 127.0.0.1:1234 (17 drops).
    const TABLE: &str = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            
 2605: 01024D7F:DA6D 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1290777 2 00000000d966dbda 0       
  210: 0100007F:04D2 00000000:0000 07 00000000:00034000 00:00000000 00000000     0        0 1290800 2 00000000a1b2c3d4 17      
";

    #[test]
    #[cfg(target_endian = "little")]
    fn the_drops_column_is_read_for_the_sockets_own_row() {
        let at = |s: &str| s.parse::<SocketAddrV4>().unwrap();
        assert_eq!(udp_table_drops(TABLE, at("127.77.2.1:55917")), Some(0));
        assert_eq!(udp_table_drops(TABLE, at("127.0.0.1:1234")), Some(17));
        // Another port of the same address, or an address with the bytes reversed: no row.
        assert_eq!(udp_table_drops(TABLE, at("127.77.2.1:55918")), None);
        assert_eq!(udp_table_drops(TABLE, at("1.0.0.127:1234")), None);
        // The heading alone, or nothing.
        assert_eq!(
            udp_table_drops(TABLE.lines().next().unwrap(), at("127.0.0.1:1234")),
            None
        );
        assert_eq!(udp_table_drops("", at("127.0.0.1:1234")), None);
    }
}
