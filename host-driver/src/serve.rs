//! `horusctl serve`: the controller ([`horus_host_driver::controller`]) on a UDP socket, with
//! `/metrics` over HTTP.
//!
//! Frames from the switch's control port arrive one per UDP datagram (a software switch forwards
//! them so; on a card, a forwarder on the shell's host interface does). Answers to workers
//! (WORKER_ID_ACK, REMOVE_ACK) leave as UDP datagrams holding the 11-byte Horus header, to the
//! worker's address and port, as a worker receives its tasks. The HTTP server
//! ([`horus_host_driver::metrics`]) answers `/metrics` from the last snapshot the loop made: the
//! controller's counts and membership, and the switch's counters read at most once a second.

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use horus_host_driver::controller::{Controller, Reply};
use horus_host_driver::device::Device;
use horus_host_driver::driver::Switch;

use crate::Print;

fn send(sock: &UdpSocket, replies: Vec<Reply>) {
    for r in replies {
        let to = SocketAddr::from((r.to.ip, r.to.udp_port));
        // A worker that cannot be reached now hears again at its next packet.
        let _ = sock.send_to(&r.header.to_bytes(), to);
    }
}

pub fn run(
    sw: &mut Switch<Device>,
    listen: SocketAddr,
    metrics: SocketAddr,
    timeout_ms: u64,
    worker_port: u8,
    state: Option<&Path>,
    print: Print,
) -> Result<()> {
    let start = Instant::now();
    let now = || start.elapsed().as_micros() as u64;
    let timeout = timeout_ms
        .checked_mul(1000)
        .with_context(|| format!("--timeout-ms {timeout_ms} is too long"))?;
    let mut c = Controller::start(sw, worker_port, timeout, state, now())?;
    let sock = UdpSocket::bind(listen).with_context(|| format!("binding UDP {listen}"))?;
    let snapshot = horus_host_driver::metrics::serve(metrics).map_err(anyhow::Error::msg)?;
    print(&format!(
        "serving: control frames on udp {}, metrics on http://{}/metrics, {} worker(s) known\n",
        sock.local_addr()?,
        metrics,
        c.members().count()
    ))?;
    let mut buf = vec![0u8; 4096];
    let mut switch_part = String::new();
    let mut read_at: Option<Instant> = None;
    loop {
        if read_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            switch_part = horus_host_driver::metrics::switch_metrics(sw)?;
            read_at = Some(Instant::now());
        }
        if let Ok(mut s) = snapshot.lock() {
            *s = c.metrics() + &switch_part;
        }
        // Wake for the next packet, the next removal due, or the next metrics read.
        let wait = c
            .next_deadline()
            .map_or(250_000, |d| d.saturating_sub(now()).clamp(1_000, 250_000));
        sock.set_read_timeout(Some(Duration::from_micros(wait)))?;
        match sock.recv_from(&mut buf) {
            Ok((n, _)) => {
                let replies = c.on_frame(sw, &buf[..n], now())?;
                send(&sock, replies);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e).context("receiving a control frame"),
        }
        let replies = c.tick(sw, now())?;
        send(&sock, replies);
    }
}
