//! `horusctl serve`: the controller ([`horus_host_driver::controller`]) on the switch's control
//! port, with `/metrics` over HTTP.
//!
//! The control-port frames arrive one of two ways. On a UDP socket (`--listen`), one Ethernet
//! frame per datagram, as a software switch forwards them; answers to workers (WORKER_ID_ACK,
//! REMOVE_ACK) then leave as UDP datagrams holding the 11-byte Horus header, to the worker's
//! address and port, as a worker receives its tasks. On a card, the frames reach the host through
//! the shell's host interface (the OpenNIC driver's netdev): with `--interface IFACE` the
//! controller takes them there with an `AF_PACKET` socket ([`PacketSocket`]) and answers through
//! it, as whole frames from the switch's address to the worker's, which the card forwards. With
//! `--metrics ADDR`, the HTTP server ([`horus_host_driver::metrics`]) answers `/metrics` from the
//! last snapshot the loop made, at most a second old: the controller's counts and membership,
//! and the switch's counters.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use horus_host_driver::access::Regs;
use horus_host_driver::auth::Keys;
use horus_host_driver::controller::{Controller, Reply};
use horus_host_driver::device::Device;
use horus_host_driver::leaf::Leaf;
use horus_host_driver::packet::PacketSocket;
use horus_host_driver::security::Allow;
use horus_model::config::Config;
use horus_model::net::Ipv4Net;
use horus_model::wire::{Endpoint, HORUS_UDP_PORT, HorusFrame};
use horus_regs::regmap::{self, RegFile};

use crate::Print;

/// Where the control port's frames arrive and the answers leave.
pub enum Port {
    Udp(SocketAddr),
    Interface(String),
}

/// An open [`Port`].
enum Open {
    Udp(UdpSocket),
    /// The socket, and the switch's own address (the answers' source).
    Packet(PacketSocket, Endpoint),
}

impl Open {
    fn new(port: &Port, sw: &mut impl Leaf<Regs = Device>) -> Result<Open> {
        Ok(match port {
            Port::Udp(a) => {
                Open::Udp(UdpSocket::bind(a).with_context(|| format!("binding UDP {a}"))?)
            }
            Port::Interface(name) => {
                let s = PacketSocket::bind(name).with_context(|| {
                    format!("opening a packet socket on {name} (it needs CAP_NET_RAW)")
                })?;
                Open::Packet(s, switch_endpoint(sw)?)
            }
        })
    }

    fn describe(&self) -> Result<String> {
        Ok(match self {
            Open::Udp(s) => format!("udp {}", s.local_addr()?),
            Open::Packet(s, _) => format!("interface {}", s.name()),
        })
    }

    /// The next frame into `buf`, waiting at most `wait`.
    fn recv(&mut self, buf: &mut [u8], wait: Duration) -> Result<Option<usize>> {
        match self {
            Open::Udp(s) => {
                s.set_read_timeout(Some(wait))?;
                match s.recv_from(buf) {
                    Ok((n, _)) => Ok(Some(n)),
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock
                                | std::io::ErrorKind::TimedOut
                                | std::io::ErrorKind::Interrupted
                        ) =>
                    {
                        Ok(None)
                    }
                    Err(e) => Err(e).context("receiving a control frame"),
                }
            }
            Open::Packet(s, _) => s.recv(buf, wait).context("receiving a control frame"),
        }
    }

    fn send(&self, replies: Vec<Reply>) {
        for r in replies {
            // A worker that cannot be reached now hears again at its next packet.
            let _ = match self {
                Open::Udp(s) => s
                    .send_to(&r.to_bytes(), SocketAddr::from((r.to.ip, r.to.udp_port)))
                    .map(drop),
                Open::Packet(s, me) => s.send(&answer(*me, &r)),
            };
        }
    }
}

/// The frame that carries `r` from the switch (`me`, its Horus port) to the worker.
fn answer(me: Endpoint, r: &Reply) -> Vec<u8> {
    HorusFrame::new(
        Endpoint {
            udp_port: HORUS_UDP_PORT,
            ..me
        },
        r.to,
        r.header,
        r.payload.clone(),
    )
    .to_bytes()
}

/// The switch's own MAC and IPv4 address, from its registers.
/// Both leaves' maps keep the paper map's switch registers.
fn switch_endpoint(sw: &mut impl Leaf<Regs = Device>) -> Result<Endpoint> {
    let mut r = RegFile::default();
    for w in regmap::switch_words() {
        r.words[w] = sw.regs().read(4 * w as u32)?;
    }
    Ok(r.switch_registers().me)
}

/// `serve`'s settings.
pub struct Opts {
    pub metrics: Option<SocketAddr>,
    pub timeout_ms: u64,
    pub worker_port: u8,
    pub state: Option<PathBuf>,
    /// `--allow`: with the configuration's `[security] allow`, the networks allowed to speak.
    pub allow: Vec<Ipv4Net>,
    /// `--key-file`: the control frames' keyed MAC.
    pub key_file: Option<PathBuf>,
}

pub fn run<L: Leaf<Regs = Device>>(
    sw: &mut L,
    port: Port,
    cfg: Option<&Config>,
    opts: &Opts,
    print: Print,
) -> Result<()> {
    let Opts {
        metrics,
        timeout_ms,
        worker_port,
        ..
    } = *opts;
    let state = opts.state.as_deref();
    let start = Instant::now();
    let now = || start.elapsed().as_micros() as u64;
    let timeout = timeout_ms
        .checked_mul(1000)
        .with_context(|| format!("--timeout-ms {timeout_ms} is too long"))?;
    let mut c = Controller::start(sw, worker_port, timeout, state, now())?;
    c.keys = Keys::load_shared(opts.key_file.as_deref()).map_err(anyhow::Error::msg)?;
    c.allow = Allow::resolve(cfg, &opts.allow, switch_endpoint(sw).ok().map(|e| e.ip));
    let mut port = Open::new(&port, sw)?;
    let snapshot = metrics
        .map(horus_host_driver::metrics::serve)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    print(&format!(
        "serving: control frames on {} from {}{}{}, {} worker(s) known\n",
        port.describe()?,
        c.allow,
        c.keys.as_ref().map_or(String::new(), |k| format!(
            ", keyed (signing key {})",
            k.signing_id()
        )),
        metrics.map_or(String::new(), |m| format!(
            ", metrics on http://{m}/metrics"
        )),
        c.members().count()
    ))?;
    let mut buf = vec![0u8; 4096];
    let mut made_at: Option<Instant> = None;
    loop {
        // The metrics text, at most once a second: its cost grows with the membership, and a
        // control frame must not pay it.
        if let Some(snapshot) = &snapshot
            && made_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            let mut text = c.metrics() + &horus_host_driver::metrics::switch_metrics(sw)?;
            // The datagrams the kernel dropped for the control socket (its buffer full): frames
            // the controller never saw.
            if let Open::Udp(u) = &port
                && let Some(d) = horus_host_driver::metrics::kernel_drops(u)
            {
                text += &format!(
                    "# HELP horus_serve_kernel_drops_total Datagrams the kernel dropped for the control socket (buffer full).\n# TYPE horus_serve_kernel_drops_total counter\nhorus_serve_kernel_drops_total {d}\n"
                );
            }
            if let Ok(mut s) = snapshot.lock() {
                *s = text;
            }
            made_at = Some(Instant::now());
        }
        // Wake for the next packet, the next removal due, or the next metrics read.
        let wait = c
            .next_deadline()
            .map_or(250_000, |d| d.saturating_sub(now()).clamp(1_000, 250_000));
        if let Some(n) = port.recv(&mut buf, Duration::from_micros(wait))? {
            let replies = c.on_frame(sw, &buf[..n], now())?;
            port.send(replies);
        }
        let replies = c.tick(sw, now())?;
        port.send(replies);
    }
}
