//! Prometheus metrics over HTTP, for the daemons that watch a switch (`horusctl serve`, a
//! software switch): the switch's counters in the text format, and a small synchronous server
//! (tiny_http: enough for a scrape every few seconds, no async runtime in daemons whose loops are
//! synchronous) that answers `GET /metrics` with the last snapshot its caller published.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::access::Regs;
use crate::driver::{DriverError, Switch};

/// The switch's counters and status in the Prometheus text format (`horus_switch_*`).
pub fn switch_metrics<R: Regs>(sw: &mut Switch<R>) -> Result<String, DriverError> {
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

/// Serves `GET /metrics` on `addr` from a thread; the caller writes the body into the returned
/// snapshot whenever it has a new one.
pub fn serve(addr: SocketAddr) -> Result<Arc<Mutex<String>>, String> {
    let http = tiny_http::Server::http(addr).map_err(|e| format!("binding HTTP {addr}: {e}"))?;
    let snapshot = Arc::new(Mutex::new(String::new()));
    let shared = Arc::clone(&snapshot);
    std::thread::spawn(move || {
        for req in http.incoming_requests() {
            let resp = if req.url() == "/metrics" {
                let body = shared.lock().map(|s| s.clone()).unwrap_or_default();
                let ct = tiny_http::Header::from_bytes(
                    &b"Content-Type"[..],
                    &b"text/plain; version=0.0.4"[..],
                )
                .expect("a valid header");
                tiny_http::Response::from_string(body).with_header(ct)
            } else {
                tiny_http::Response::from_string("see /metrics\n").with_status_code(404)
            };
            let _ = req.respond(resp);
        }
    });
    Ok(snapshot)
}
