//! An `AF_PACKET` socket on one network interface: whole Ethernet frames in and out, as a card's
//! host interface (the OpenNIC driver's netdev) carries the switch's control-port frames to the
//! host. Linux only.
//!
//! [`PacketSocket::recv`] takes only what a controller listens to: IPv4/UDP frames to the Horus
//! port ([`wire::HORUS_UDP_PORT`]) that arrived on the interface (not the ones this host sent),
//! as a UDP socket bound to that port would; everything else on the interface is skipped and
//! counted ([`PacketSocket::skipped`]).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use horus_model::wire;

/// `ETH_P_ALL` in network byte order, as `socket` and `sockaddr_ll` take it.
const ALL: u16 = (libc::ETH_P_ALL as u16).to_be();

pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
    name: String,
    skipped: u64,
}

impl PacketSocket {
    /// A packet socket bound to interface `name` (needs `CAP_NET_RAW`).
    pub fn bind(name: &str) -> io::Result<PacketSocket> {
        let cname = std::ffi::CString::new(name)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the name"))?;
        // SAFETY: a C string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: plain arguments; the descriptor is owned below.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(ALL)) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a new descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let addr = sockaddr(ifindex as i32);
        // SAFETY: `addr` is a valid sockaddr_ll of the size given.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PacketSocket {
            fd,
            ifindex: ifindex as i32,
            name: name.to_string(),
            skipped: 0,
        })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Frames on the interface that were not for a controller (another protocol or port, or
    /// this host's own), skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The next controller frame, waiting at most `timeout`: its length in `buf` (a frame longer
    /// than `buf` is cut), or `None` when the time passed or a signal interrupted the wait.
    pub fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let mut p = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut p, 1, ms) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    return Ok(None);
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(None);
            }
            // SAFETY: all-zero is a valid sockaddr_ll.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `buf` and `from` are valid for the lengths given.
            let got = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut len,
                )
            };
            if got < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => return Ok(None),
                    io::ErrorKind::WouldBlock => continue,
                    _ => return Err(e),
                }
            }
            let n = (got as usize).min(buf.len());
            if from.sll_pkttype != libc::PACKET_OUTGOING && for_controller(&buf[..n]) {
                return Ok(Some(n));
            }
            self.skipped += 1;
        }
    }

    /// Sends `frame` (a whole Ethernet frame) out of the interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        let addr = sockaddr(self.ifindex);
        // SAFETY: `frame` and `addr` are valid for the lengths given.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn sockaddr(ifindex: i32) -> libc::sockaddr_ll {
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut a: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    a.sll_family = libc::AF_PACKET as u16;
    a.sll_protocol = ALL;
    a.sll_ifindex = ifindex;
    a
}

/// Whether an Ethernet frame is IPv4/UDP to the Horus port: what a controller's UDP socket
/// would receive. (The controller then checks the rest.)
pub fn for_controller(frame: &[u8]) -> bool {
    let ethertype = frame.get(12..14) == Some(&wire::ETHERTYPE_IPV4.to_be_bytes()[..]);
    let ihl = frame
        .get(wire::IPV4_OFFSET)
        .map_or(0, |b| usize::from(b & 0x0f) * 4);
    let udp = frame.get(wire::IPV4_OFFSET + 9) == Some(&wire::IP_PROTOCOL_UDP);
    let port = frame
        .get(wire::IPV4_OFFSET + ihl + 2..wire::IPV4_OFFSET + ihl + 4)
        .map(|p| u16::from_be_bytes([p[0], p[1]]));
    ethertype && ihl >= 20 && udp && port == Some(wire::HORUS_UDP_PORT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::wire::{Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType};

    fn frame(port: u16) -> Vec<u8> {
        let ep = |k: u8| Endpoint {
            mac: MacAddr([2, 0, 0, 0, 0, k]),
            ip: std::net::Ipv4Addr::new(10, 0, 0, k),
            udp_port: port,
        };
        HorusFrame::new(
            ep(1),
            ep(2),
            HorusHeader {
                pkt_type: PacketType::WorkerId,
                more_packets: false,
                pool_id: 1,
                src_id: 7,
                dst_id: 0,
                qlen: 0,
                seq_num: 0,
            },
            Vec::new(),
        )
        .to_bytes()
    }

    #[test]
    fn only_ipv4_udp_to_the_horus_port_is_for_the_controller() {
        assert!(for_controller(&frame(wire::HORUS_UDP_PORT)));
        assert!(!for_controller(&frame(53)));
        let mut arp = frame(wire::HORUS_UDP_PORT);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(!for_controller(&arp));
        let mut tcp = frame(wire::HORUS_UDP_PORT);
        tcp[wire::IPV4_OFFSET + 9] = 6;
        assert!(!for_controller(&tcp));
        assert!(!for_controller(&[0u8; 20]));
        assert!(!for_controller(&[]));
    }

    #[test]
    fn an_interface_that_does_not_exist_is_refused() {
        let e = PacketSocket::bind("horus-none0").err().unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV), "{e}");
    }
}
