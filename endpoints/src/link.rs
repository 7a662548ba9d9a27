//! The network the endpoints and the software switch share on one machine.
//!
//! Every host (a switch, a worker slot, a client) is a UDP socket bound at its own IPv4 address
//! and the Horus port 1234: what the frames it sends and receives say it is. Linux routes the whole
//! of 127.0.0.0/8 to the loopback device, so one machine holds thousands of such hosts without
//! any set-up or privilege. A link carries whole Ethernet frames, one per datagram (the framing of
//! QEMU's `-netdev dgram` and of `horusctl serve`'s control port): the bytes a host sends are
//! exactly the frame a card or a DPDK endpoint would put on the wire, built and parsed by
//! `horus_model::wire`.
//!
//! A host hands every frame to its first hop (its gateway): clients and workers to their switch,
//! whatever the frame's destination, as a cable to a top-of-rack switch would; a switch delivers
//! what it emits to the frame's own IPv4 destination and UDP port.
//!
//! The controller (`horus_host_driver::controller`) answers a worker with a bare Horus message
//! as a UDP datagram to the worker's address, as `horusctl serve` does on a real network: the
//! 11-byte header, or the public WORKER_ID's 50 bytes. A datagram shorter than
//! [`wire::MIN_FRAME_LEN`] (60 bytes) is therefore a controller message: the frames a link
//! carries are padded to that length.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use anyhow::{Context, Result};
use horus_host_driver::auth::{self, Guard, Keys};
use horus_host_driver::security::Allow;
use horus_model::wire::{
    self, Endpoint, HEADER_LEN, HORUS_UDP_PORT, HorusFrame, HorusHeader, MacAddr, WireError,
};
use std::sync::Arc;

/// The largest datagram a link carries: one frame the switch takes.
pub const MAX_DATAGRAM: usize = horus_model::sched::frame::MAX_FRAME_LEN;

/// The MAC address of the emulated host at `ip`: locally administered, `02:00` and the four
/// bytes of the address.
pub fn mac_of(ip: Ipv4Addr) -> MacAddr {
    let o = ip.octets();
    MacAddr([0x02, 0x00, o[0], o[1], o[2], o[3]])
}

/// The emulated host at `ip`, on the Horus port.
pub fn host(ip: Ipv4Addr) -> Endpoint {
    Endpoint {
        mac: mac_of(ip),
        ip,
        udp_port: HORUS_UDP_PORT,
    }
}

pub fn socket_addr(e: &Endpoint) -> SocketAddr {
    SocketAddr::from((e.ip, e.udp_port))
}

/// The IPv4 destination and UDP destination port of any IPv4/UDP frame (Horus or not).
pub fn frame_dst(frame: &[u8]) -> Option<SocketAddr> {
    let ip = wire::IPV4_OFFSET;
    let udp = wire::UDP_OFFSET;
    if frame.len() < udp + 4
        || frame[12..14] != wire::ETHERTYPE_IPV4.to_be_bytes()
        || frame[ip] != 0x45
        || frame[ip + 9] != wire::IP_PROTOCOL_UDP
    {
        return None;
    }
    let dst = Ipv4Addr::new(
        frame[ip + 16],
        frame[ip + 17],
        frame[ip + 18],
        frame[ip + 19],
    );
    let port = u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]);
    Some(SocketAddr::from((dst, port)))
}

/// Asks for a UDP socket's receive buffer of `bytes`, so that bursts of tasks at a switch or a
/// worker are queued rather than dropped; returns the size the kernel gave. Without privilege
/// the kernel caps it at `net.core.rmem_max` (208 KiB by default on Linux; raise it with
/// `sysctl -w net.core.rmem_max=...`); with CAP_NET_ADMIN, SO_RCVBUFFORCE passes the cap.
pub fn grow_receive_buffer(sock: &UdpSocket, bytes: usize) -> usize {
    use std::os::fd::AsRawFd;
    let fd = sock.as_raw_fd();
    let v = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket descriptor and pointers to a c_int of the size given.
    unsafe {
        let p = (&v as *const libc::c_int).cast();
        if libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, p, len) != 0 {
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, p, len);
        }
        let mut got: libc::c_int = 0;
        let mut l = len;
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&mut got as *mut libc::c_int).cast(),
            &mut l,
        );
        // The kernel reports twice what it counts against the buffer (its bookkeeping).
        got.max(0) as usize / 2
    }
}

/// Datagrams the kernel dropped for `sock` (its receive buffer full), from
/// `/proc/self/net/udp` (`horusctl serve` reads its socket's the same way).
pub use horus_host_driver::metrics::kernel_drops;

/// What arrived at a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inbound {
    /// A Horus frame.
    Frame(HorusFrame),
    /// A controller's message: a bare Horus header.
    Controller(HorusHeader),
    /// Anything else, with the reason it is not a Horus frame (counted by the receiver).
    Malformed(WireError),
    /// A controller's message from an address other than the first hop's, or on the emulated
    /// network ([`Transport::Frames`]) a frame from elsewhere than the first hop: not believed
    /// (counted by the receiver).
    Foreign(SocketAddr),
    /// With keys: a controller's message without a right trailer, or sent again (counted by the
    /// receiver).
    Unauthenticated(SocketAddr),
}

/// How a host's messages travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// Whole Ethernet frames, one per datagram, to the first hop: the emulated network of a
    /// software switch on one machine.
    #[default]
    Frames,
    /// The kernel's UDP: the Horus header and payload as the datagram, to its destination, the
    /// kernel building the frame. For hosts on a real network whose switch (a card, a Tofino) is
    /// on the path; source MAC addresses are not known to the receiver (zero).
    Kernel,
}

/// A host's socket and its first hop.
pub struct Link {
    sock: UdpSocket,
    pub me: Endpoint,
    pub gateway: SocketAddr,
    pub transport: Transport,
    ip_id: u16,
    buf: Vec<u8>,
    /// How the socket waits now (`None`: not at all), so that a wait like the last costs no
    /// system call to set.
    waits: Option<Option<Duration>>,
    /// Whose frames the host believes.
    pub frames_from: FramesFrom,
    /// The control messages' keyed MAC (`horus_host_driver::auth`): what the host sends with
    /// [`Link::send_control`] is signed, a controller's message without a right trailer arrives
    /// as [`Inbound::Unauthenticated`]. `None`: neither.
    pub keys: Option<Arc<Keys>>,
    guard: Guard,
}

/// Whose frames a host believes (the others arrive as [`Inbound::Foreign`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FramesFrom {
    /// On the emulated network ([`Transport::Frames`]) its first hop's only: a worker's tasks
    /// come through its leaf, and a frame from elsewhere went around it. Over the kernel's UDP
    /// anyone's (the switch on the path is not the datagram's source).
    FirstHop,
    /// Hosts of these networks': a client's answers come through the leaf of the worker that
    /// served it, which the client does not know.
    Allowed(Allow),
}

impl Link {
    /// Binds `me`'s address; frames leave for `gateway`.
    pub fn bind(me: Endpoint, gateway: SocketAddr) -> Result<Link> {
        Self::bind_with(me, gateway, Transport::Frames)
    }

    /// Binds `me`'s address, messages travelling as `transport` says (with the kernel's UDP,
    /// `gateway` is not used: each message goes to its destination).
    pub fn bind_with(me: Endpoint, gateway: SocketAddr, transport: Transport) -> Result<Link> {
        let sock = UdpSocket::bind(socket_addr(&me))
            .with_context(|| format!("binding UDP {}", socket_addr(&me)))?;
        let _ = grow_receive_buffer(&sock, 4 << 20);
        Ok(Link {
            sock,
            me,
            gateway,
            transport,
            ip_id: 0,
            buf: vec![0; MAX_DATAGRAM + 1],
            waits: None,
            frames_from: FramesFrom::FirstHop,
            keys: None,
            guard: Guard::default(),
        })
    }

    fn believes(&self, from: SocketAddr) -> bool {
        match &self.frames_from {
            FramesFrom::FirstHop => self.transport == Transport::Kernel || from == self.gateway,
            FramesFrom::Allowed(a) => match from.ip() {
                std::net::IpAddr::V4(ip) => a.allows(ip),
                std::net::IpAddr::V6(_) => false,
            },
        }
    }

    /// A second handle on the same socket (a sending thread beside a receiving one).
    pub fn try_clone(&self) -> Result<Link> {
        Ok(Link {
            sock: self.sock.try_clone()?,
            me: self.me,
            gateway: self.gateway,
            transport: self.transport,
            ip_id: 0,
            buf: vec![0; MAX_DATAGRAM + 1],
            waits: None,
            frames_from: self.frames_from.clone(),
            keys: self.keys.clone(),
            guard: Guard::default(),
        })
    }

    /// The frame from this host to `dst` carrying `header` and `payload`.
    pub fn frame(&mut self, dst: Endpoint, header: HorusHeader, payload: Vec<u8>) -> Vec<u8> {
        self.ip_id = self.ip_id.wrapping_add(1);
        HorusFrame {
            ip_id: self.ip_id,
            ..HorusFrame::new(self.me, dst, header, payload)
        }
        .to_bytes()
    }

    /// Sends a frame to the first hop.
    pub fn send_frame(&self, frame: &[u8]) -> io::Result<()> {
        self.sock.send_to(frame, self.gateway).map(|_| ())
    }

    /// Sends `header` and `payload` to `dst`: as a frame through the first hop, or as a UDP
    /// datagram to `dst` itself.
    pub fn send(&mut self, dst: Endpoint, header: HorusHeader, payload: Vec<u8>) -> io::Result<()> {
        match self.transport {
            Transport::Frames => {
                let f = self.frame(dst, header, payload);
                self.send_frame(&f)
            }
            Transport::Kernel => {
                let mut d = header.to_bytes().to_vec();
                d.extend_from_slice(&payload);
                self.sock.send_to(&d, socket_addr(&dst)).map(|_| ())
            }
        }
    }

    /// A control message (to the controller, through the first hop): [`Link::send`], with the
    /// keyed MAC's trailer after `payload` when the host has keys.
    pub fn send_control(
        &mut self,
        dst: Endpoint,
        header: HorusHeader,
        mut payload: Vec<u8>,
    ) -> io::Result<()> {
        if let Some(k) = &self.keys {
            let mut msg = header.to_bytes().to_vec();
            msg.extend_from_slice(&payload);
            payload.extend(k.trailer((self.me.ip, self.me.udp_port), &msg, auth::wall_us()));
        }
        self.send(dst, header, payload)
    }

    /// Waits at most `timeout` (`None`: not at all) for the next datagram; `None` when none came
    /// (or the wait was interrupted by a signal).
    pub fn recv(&mut self, timeout: Option<Duration>) -> io::Result<Option<Inbound>> {
        let want = timeout.map(|t| t.max(Duration::from_micros(1)));
        if self.waits != Some(want) {
            match want {
                Some(t) => {
                    self.sock.set_nonblocking(false)?;
                    self.sock.set_read_timeout(Some(t))?;
                }
                None => self.sock.set_nonblocking(true)?,
            }
            self.waits = Some(want);
        }
        match self.sock.recv_from(&mut self.buf) {
            Ok((n, from)) => Ok(Some(match self.transport {
                Transport::Frames => classify(&self.buf[..n]),
                Transport::Kernel => classify_udp(&self.buf[..n], from, self.me),
            })
            .map(|m| match (m, &self.keys) {
                (Inbound::Controller(_), Some(k))
                    if k.verify(
                        (self.me.ip, self.me.udp_port),
                        &self.buf[..n],
                        &mut self.guard,
                        auth::wall_us(),
                    )
                    .is_err() =>
                {
                    Inbound::Unauthenticated(from)
                }
                (m, _) => m,
            })
            .map(|m| match m {
                // The controller speaks from the first hop's address (the leaf's, or the host
                // running `horusctl serve` for it), never from elsewhere.
                Inbound::Controller(_) if from.ip() != self.gateway.ip() => Inbound::Foreign(from),
                Inbound::Frame(_) if !self.believes(from) => Inbound::Foreign(from),
                m => m,
            })),
            // Interrupted: a signal, or the process stopped and continued (Linux fails a
            // socket call with a timeout so even without a handler): nothing came, go on.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// Whether a controller sends packets of type `t` to a worker.
fn from_controller(t: horus_model::wire::PacketType) -> bool {
    use horus_model::wire::PacketType::*;
    matches!(t, WorkerIdAck | RemoveAck | WorkerId)
}

/// A datagram as a host takes it: a bare message from a controller (its header), else a frame.
/// A short datagram of another type is malformed.
pub fn classify(d: &[u8]) -> Inbound {
    if d.len() < wire::MIN_FRAME_LEN {
        return match HorusHeader::parse(d) {
            Ok(h) if from_controller(h.pkt_type) => Inbound::Controller(h),
            Ok(_) => Inbound::Malformed(WireError::Truncated {
                layer: wire::Layer::Ethernet,
                needed: wire::MIN_FRAME_LEN,
                got: d.len(),
            }),
            Err(e) => Inbound::Malformed(e),
        };
    }
    match wire::parse_frame(d) {
        Ok(f) => Inbound::Frame(f),
        Err(e) => Inbound::Malformed(e),
    }
}

/// A datagram of the kernel's UDP from `from` to `me`: a Horus header and payload. The
/// controller's messages to a worker (WORKER_ID_ACK, REMOVE_ACK, the public WORKER_ID) are its;
/// the rest is a frame as the kernel received it (source MAC unknown).
pub fn classify_udp(d: &[u8], from: SocketAddr, me: Endpoint) -> Inbound {
    let h = match HorusHeader::parse(d) {
        Ok(h) => h,
        Err(e) => return Inbound::Malformed(e),
    };
    if from_controller(h.pkt_type) {
        return Inbound::Controller(h);
    }
    let ip = match from.ip() {
        std::net::IpAddr::V4(ip) => ip,
        std::net::IpAddr::V6(_) => Ipv4Addr::UNSPECIFIED,
    };
    Inbound::Frame(HorusFrame::new(
        Endpoint {
            mac: MacAddr([0; 6]),
            ip,
            udp_port: from.port(),
        },
        me,
        h,
        d[HEADER_LEN..].to_vec(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::wire::PacketType;

    fn header(t: PacketType) -> HorusHeader {
        HorusHeader {
            pkt_type: t,
            more_packets: false,
            pool_id: 7,
            src_id: 3,
            dst_id: 9,
            qlen: 2,
            seq_num: 77,
        }
    }

    #[test]
    fn the_kernels_drops_of_a_full_socket_are_read() {
        let rx = UdpSocket::bind("127.77.2.1:0").unwrap();
        // The parser is checked on the kernel's fixed text in horus-host-driver; here, the live
        // table, where this kernel keeps one.
        let Some(before) = kernel_drops(&rx) else {
            eprintln!(
                "skipped: this kernel does not list its UDP sockets in /proc/self/net/udp (a sandbox's); the drops read as unknown"
            );
            return;
        };
        assert_eq!(before, 0);
        let tx = UdpSocket::bind("127.77.2.2:0").unwrap();
        // Far more than a default receive buffer holds, never read.
        for _ in 0..20_000 {
            let _ = tx.send_to(&[0u8; 1000], rx.local_addr().unwrap());
        }
        assert!(kernel_drops(&rx).unwrap() > 0);
    }

    #[test]
    fn a_frame_crosses_a_link_unchanged_and_a_bare_header_is_the_first_hops_controllers() {
        let a = host(Ipv4Addr::new(127, 77, 1, 1));
        let b = host(Ipv4Addr::new(127, 77, 1, 2));
        let mut la = Link::bind(a, socket_addr(&b)).unwrap();
        let mut lb = Link::bind(b, socket_addr(&a)).unwrap();
        la.send(b, header(PacketType::NewTask), vec![1, 2, 3])
            .unwrap();
        let Some(Inbound::Frame(f)) = lb.recv(Some(Duration::from_secs(2))).unwrap() else {
            panic!("no frame")
        };
        assert_eq!(
            (f.src, f.dst, f.header),
            (a, b, header(PacketType::NewTask))
        );
        assert_eq!(f.payload, vec![1, 2, 3]);
        assert_eq!(frame_dst(&f.to_bytes()), Some(socket_addr(&b)));
        // The controller's message from the first hop's address is believed; from another, not.
        let ack = header(PacketType::WorkerIdAck);
        UdpSocket::bind("127.77.1.2:0")
            .unwrap()
            .send_to(&ack.to_bytes(), socket_addr(&a))
            .unwrap();
        assert_eq!(
            la.recv(Some(Duration::from_secs(2))).unwrap(),
            Some(Inbound::Controller(ack))
        );
        let other = UdpSocket::bind("127.77.1.3:0").unwrap();
        other.send_to(&ack.to_bytes(), socket_addr(&a)).unwrap();
        assert_eq!(
            la.recv(Some(Duration::from_secs(2))).unwrap(),
            Some(Inbound::Foreign(other.local_addr().unwrap()))
        );
        assert_eq!(lb.recv(None).unwrap(), None);
        assert!(matches!(classify(&[0u8; 40]), Inbound::Malformed(_)));
        // The public WORKER_ID, 50 bytes, is the controller's too.
        let id = horus_model::wire::payload::public_worker_id(1, 9);
        assert!(matches!(
            classify(&id),
            Inbound::Controller(h) if h.pkt_type == PacketType::WorkerId && h.qlen == 9
        ));
    }
}
