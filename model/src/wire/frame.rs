//! Frames: MAC addresses and endpoints, a Horus frame parsed and built, the rewrite a switch
//! applies, the signal frames, and the IPv4 and UDP checksums.

use super::*;

// ---------------------------------------------------------------------------------------------
// MAC addresses and endpoints
// ---------------------------------------------------------------------------------------------

/// An Ethernet MAC address. Text form (also its serde form): six two-digit hex bytes separated
/// by `:`, e.g. `02:00:00:00:00:01`; parsing is case-insensitive, printing is lowercase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MacAddr(pub [u8; 6]);

/// A string that is not a MAC address in the `02:00:00:00:00:01` form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid MAC address {input:?}: expected six two-digit hex bytes separated by ':', e.g. 02:00:00:00:00:01"
)]
pub struct MacParseError {
    /// The rejected text.
    pub input: String,
}

impl FromStr for MacAddr {
    type Err = MacParseError;

    fn from_str(s: &str) -> Result<Self, MacParseError> {
        let err = || MacParseError {
            input: s.to_owned(),
        };
        let mut mac = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut mac {
            let part = parts.next().ok_or_else(err)?;
            // Exactly two hex digits: `from_str_radix` alone would accept "+f" or "f".
            if part.len() != 2 || !part.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(err());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| err())?;
        }
        if parts.next().is_some() {
            return Err(err());
        }
        Ok(MacAddr(mac))
    }
}

impl TryFrom<String> for MacAddr {
    type Error = MacParseError;

    fn try_from(s: String) -> Result<Self, MacParseError> {
        s.parse()
    }
}

impl From<MacAddr> for String {
    fn from(mac: MacAddr) -> String {
        mac.to_string()
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

/// One end of a Horus frame: MAC, IPv4 address and UDP port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Ethernet address.
    pub mac: MacAddr,
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// UDP port (the destination of a Horus frame must be [`HORUS_UDP_PORT`] to parse).
    pub udp_port: u16,
}

// ---------------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------------

/// A decoded Horus frame: the fields of the Ethernet, IPv4 and UDP headers that vary, the Horus
/// header and the payload. Fields implied by the format (ethertype, IPv4 version/IHL, protocol,
/// lengths, IPv4 checksum) are not stored: [`HorusFrame::to_bytes`] derives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HorusFrame {
    /// Source MAC, IPv4 address and UDP port.
    pub src: Endpoint,
    /// Destination MAC, IPv4 address and UDP port.
    pub dst: Endpoint,
    /// IPv4 identification.
    pub ip_id: u16,
    /// IPv4 time to live.
    pub ttl: u8,
    /// IPv4 byte 1: DSCP (bits 7..2) and ECN (bits 1..0).
    pub dscp_ecn: u8,
    /// IPv4 DF flag.
    pub dont_fragment: bool,
    /// UDP checksum field, carried as is (never verified, see the module doc). 0 means none;
    /// [`HorusFrame::udp_checksum_full`] computes the correct value.
    pub udp_checksum: u16,
    /// The Horus header.
    pub header: HorusHeader,
    /// Bytes after the Horus header, up to the UDP length.
    pub payload: Vec<u8>,
}

impl HorusFrame {
    /// The frame from `src` to `dst` carrying `header` and `payload`, with the IPv4 fields a host
    /// sends by default: identification 0, TTL 64, DSCP and ECN 0, DF set, and no UDP checksum.
    pub fn new(src: Endpoint, dst: Endpoint, header: HorusHeader, payload: Vec<u8>) -> HorusFrame {
        HorusFrame {
            src,
            dst,
            ip_id: 0,
            ttl: 64,
            dscp_ecn: 0,
            dont_fragment: true,
            udp_checksum: 0,
            header,
            payload,
        }
    }

    /// Encodes the frame: Ethernet II (ethertype 0x0800), IPv4 (IHL 5, total length
    /// 39 + payload, DF from `dont_fragment`, MF and fragment offset 0, protocol 17, header
    /// checksum computed), UDP (ports from the endpoints, length 19 + payload, checksum field =
    /// `udp_checksum` as given), Horus header, payload, then zeros up to [`MIN_FRAME_LEN`].
    ///
    /// Never panics. A payload longer than [`MAX_PAYLOAD_LEN`] cannot be described by the IPv4
    /// length field; it is cut to `MAX_PAYLOAD_LEN` bytes so that the frame stays consistent
    /// ([`HorusFrame::try_to_bytes`] refuses instead). The header is encoded as is, so a header
    /// that [`HorusHeader::validate`] rejects, or a destination port other than 1234, gives a
    /// frame that [`parse_frame`] rejects.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(self.clamped_payload())
    }

    /// Like [`HorusFrame::to_bytes`], but refuses what [`parse_frame`] could not read back
    /// exactly: a payload over [`MAX_PAYLOAD_LEN`] ([`WireError::PayloadTooLong`]) or an invalid
    /// header ([`WireError::FlagNotAllowed`]).
    pub fn try_to_bytes(&self) -> Result<Vec<u8>, WireError> {
        if self.payload.len() > MAX_PAYLOAD_LEN {
            return Err(WireError::PayloadTooLong {
                len: self.payload.len(),
                max: MAX_PAYLOAD_LEN,
            });
        }
        self.header.validate()?;
        Ok(self.encode(&self.payload))
    }

    /// The correct UDP checksum of this frame (RFC 768: one's complement sum over the IPv4
    /// pseudo-header, the UDP header with a zero checksum field, the Horus header and the
    /// payload; a computed 0 is sent as 0xFFFF). The payload is cut as in
    /// [`HorusFrame::to_bytes`]. Set `udp_checksum` to this value for a frame whose checksum
    /// verifies.
    pub fn udp_checksum_full(&self) -> u16 {
        let bytes = self.encode(self.clamped_payload());
        let udp_len = usize::from(self.udp_len());
        match bytes.get(UDP_OFFSET..UDP_OFFSET + udp_len) {
            Some(segment) => udp_checksum(self.src.ip, self.dst.ip, segment),
            // Unreachable: `encode` writes the whole UDP segment.
            None => 0xffff,
        }
    }

    fn clamped_payload(&self) -> &[u8] {
        self.payload.get(..MAX_PAYLOAD_LEN).unwrap_or(&self.payload)
    }

    /// UDP length for the (clamped) payload; at most 65515.
    fn udp_len(&self) -> u16 {
        let len = self.clamped_payload().len() + usize::from(MIN_UDP_LEN);
        u16::try_from(len).unwrap_or(u16::MAX)
    }

    fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let udp_len = self.udp_len();
        let total_len = udp_len.saturating_add(IPV4_HEADER_LEN as u16);

        let eth = Ethernet2Header {
            destination: self.dst.mac.0,
            source: self.src.mac.0,
            ether_type: EtherType::IPV4,
        };

        let mut ip = [0u8; IPV4_HEADER_LEN];
        ip[0] = 0x45; // version 4, IHL 5
        ip[1] = self.dscp_ecn;
        ip[2..4].copy_from_slice(&total_len.to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6] = if self.dont_fragment { IPV4_FLAG_DF } else { 0 }; // MF = 0, offset = 0
        ip[8] = self.ttl;
        ip[9] = IP_PROTOCOL_UDP;
        ip[12..16].copy_from_slice(&self.src.ip.octets());
        ip[16..20].copy_from_slice(&self.dst.ip.octets());
        let checksum = ipv4_header_checksum(&ip);
        ip[10..12].copy_from_slice(&checksum.to_be_bytes());

        let udp = UdpHeader {
            source_port: self.src.udp_port,
            destination_port: self.dst.udp_port,
            length: udp_len,
            checksum: self.udp_checksum,
        };

        let mut out = Vec::with_capacity((PAYLOAD_OFFSET + payload.len()).max(MIN_FRAME_LEN));
        out.extend_from_slice(&eth.to_bytes());
        out.extend_from_slice(&ip);
        out.extend_from_slice(&udp.to_bytes());
        out.extend_from_slice(&self.header.to_bytes());
        out.extend_from_slice(payload);
        if out.len() < MIN_FRAME_LEN {
            out.resize(MIN_FRAME_LEN, 0);
        }
        out
    }
}

/// Decodes and checks a Horus frame (Ethernet II, without FCS). See the module doc for the
/// checks and their order; each failure is a distinct [`WireError`]. The payload is the bytes
/// after the Horus header up to the UDP length; padding after the IPv4 total length is ignored.
/// The UDP checksum is returned, not verified.
pub fn parse_frame(bytes: &[u8]) -> Result<HorusFrame, WireError> {
    let got = bytes.len();
    let truncated = |layer: Layer| WireError::Truncated {
        layer,
        needed: layer.end(),
        got,
    };

    // Ethernet II.
    let eth = Ethernet2Header::from_bytes(*array_at(bytes, 0).ok_or(truncated(Layer::Ethernet))?);
    if eth.ether_type.0 != ETHERTYPE_IPV4 {
        return Err(WireError::NotIpv4 {
            ethertype: eth.ether_type.0,
        });
    }

    // IPv4. Exactly 20 bytes go to etherparse: it rejects version != 4 and IHL < 5, and an
    // IHL > 5 shows up as options running past the 20 bytes; the latter two are `Ipv4Options`.
    let ip_bytes: &[u8; IPV4_HEADER_LEN] =
        array_at(bytes, IPV4_OFFSET).ok_or(truncated(Layer::Ipv4))?;
    let ihl = ip_bytes[0] & 0x0f;
    let ip = Ipv4HeaderSlice::from_slice(ip_bytes).map_err(|e| match e {
        EpIpv4Error::Content(EpIpv4HeaderError::UnexpectedVersion { version_number }) => {
            WireError::NotIpv4Version {
                version: version_number,
            }
        }
        EpIpv4Error::Content(EpIpv4HeaderError::HeaderLengthSmallerThanHeader { .. })
        | EpIpv4Error::Len(_) => WireError::Ipv4Options { ihl },
    })?;
    if ip.ihl() != 5 {
        return Err(WireError::Ipv4Options { ihl: ip.ihl() });
    }
    let expected = ipv4_header_checksum(ip_bytes);
    if ip.header_checksum() != expected {
        return Err(WireError::Ipv4Checksum {
            expected,
            found: ip.header_checksum(),
        });
    }
    let offset = ip.fragments_offset().value();
    if ip.more_fragments() || offset != 0 {
        return Err(WireError::Fragmented {
            more_fragments: ip.more_fragments(),
            offset,
        });
    }
    if ip.protocol().0 != IP_PROTOCOL_UDP {
        return Err(WireError::NotUdp {
            protocol: ip.protocol().0,
        });
    }

    // UDP.
    let udp = UdpHeader::from_bytes(*array_at(bytes, UDP_OFFSET).ok_or(truncated(Layer::Udp))?);
    if udp.destination_port != HORUS_UDP_PORT {
        return Err(WireError::WrongPort {
            port: udp.destination_port,
        });
    }

    // Horus header must be present before the lengths are compared.
    let horus: &[u8; HEADER_LEN] = array_at(bytes, HORUS_OFFSET).ok_or(truncated(Layer::Horus))?;

    // Lengths.
    let total_len = ip.total_len();
    let available = got - IPV4_OFFSET; // got >= 53 here
    if usize::from(total_len) > available {
        return Err(WireError::Ipv4LengthExceedsFrame {
            total_len,
            available,
        });
    }
    let udp_len = udp.length;
    if udp_len < MIN_UDP_LEN {
        return Err(WireError::UdpLengthTooShort { udp_len });
    }
    if u32::from(udp_len) + IPV4_HEADER_LEN as u32 != u32::from(total_len) {
        return Err(WireError::UdpLengthMismatch { udp_len, total_len });
    }

    let header = HorusHeader::parse(horus)?;
    // In range: 19 <= udp_len and 34 + udp_len = 14 + total_len <= got.
    let payload = bytes
        .get(PAYLOAD_OFFSET..UDP_OFFSET + usize::from(udp_len))
        .ok_or(WireError::Ipv4LengthExceedsFrame {
            total_len,
            available,
        })?;

    Ok(HorusFrame {
        src: Endpoint {
            mac: MacAddr(eth.source),
            ip: ip.source_addr(),
            udp_port: udp.source_port,
        },
        dst: Endpoint {
            mac: MacAddr(eth.destination),
            ip: ip.destination_addr(),
            udp_port: udp.destination_port,
        },
        ip_id: ip.identification(),
        ttl: ip.ttl(),
        dscp_ecn: ip_bytes[1],
        dont_fragment: ip.dont_fragment(),
        udp_checksum: udp.checksum,
        header,
        payload: payload.to_vec(),
    })
}

/// What the switch deparser does to a frame it forwards: the frame must parse (any
/// [`parse_frame`] error is returned) and `header` must be valid ([`HorusHeader::validate`]).
///
/// The result has the same length as `frame` and differs from it only in: the Ethernet
/// destination MAC (`dst.mac`), the IPv4 destination address (`dst.ip`), the UDP destination port
/// (`dst.udp_port`), the 11 Horus header bytes, the IPv4 header checksum (recomputed) and the UDP
/// checksum, which is updated incrementally (RFC 1624, eqn. 3) if it was nonzero and stays 0 if
/// it was 0. Source MAC and IP, TTL, payload and padding are copied unchanged. The incremental
/// update gives the full recomputation's result whenever the input checksum was correct (a
/// computed 0 is sent as 0xFFFF, as RFC 768 requires).
pub fn rewrite(frame: &[u8], dst: &Endpoint, header: &HorusHeader) -> Result<Vec<u8>, WireError> {
    parse_frame(frame)?;
    header.validate()?;
    let mut out = frame.to_vec();

    // The bytes covered by the UDP checksum that change, at even offsets within the checksummed
    // data: pseudo-header destination address, UDP destination port, Horus header padded with a
    // zero to 12 bytes (the same pad on both sides cancels out).
    let old_words = checksummed_fields(&out);

    // `parse_frame` succeeded, so `out.len() >= PAYLOAD_OFFSET` and these ranges are in bounds.
    out[ETH_DST..ETH_DST + 6].copy_from_slice(&dst.mac.0);
    out[IPV4_DST..IPV4_DST + 4].copy_from_slice(&dst.ip.octets());
    out[UDP_DST_PORT..UDP_DST_PORT + 2].copy_from_slice(&dst.udp_port.to_be_bytes());
    header.write(&mut out[HORUS_OFFSET..]);

    if let Some(ip) = array_at::<IPV4_HEADER_LEN>(&out, IPV4_OFFSET) {
        let checksum = ipv4_header_checksum(ip);
        out[IPV4_CHECKSUM..IPV4_CHECKSUM + 2].copy_from_slice(&checksum.to_be_bytes());
    }

    let old_checksum = u16::from_be_bytes([out[UDP_CHECKSUM], out[UDP_CHECKSUM + 1]]);
    if old_checksum != 0 {
        let new_words = checksummed_fields(&out);
        let mut checksum = checksum_update(old_checksum, &old_words, &new_words);
        if checksum == 0 {
            checksum = 0xffff;
        }
        out[UDP_CHECKSUM..UDP_CHECKSUM + 2].copy_from_slice(&checksum.to_be_bytes());
    }
    Ok(out)
}

/// A leaf-to-spine message made by mirroring a frame the switch is processing: the frame must
/// parse (any [`parse_frame`] error is returned) and `header` must be valid.
///
/// Keeps `original`'s IPv4 identification, TTL, DSCP/ECN and DF flag; source MAC, IP and UDP
/// port become `src` (the switch), destination becomes `dst`; the Horus header is `header`; the
/// payload is dropped (IPv4 total length 39, UDP length 19); IPv4 checksum recomputed; UDP
/// checksum 0; zero-padded to [`MIN_FRAME_LEN`] (the result is 60 bytes).
pub fn signal_frame(
    original: &[u8],
    src: &Endpoint,
    dst: &Endpoint,
    header: &HorusHeader,
) -> Result<Vec<u8>, WireError> {
    let orig = parse_frame(original)?;
    header.validate()?;
    let signal = HorusFrame {
        src: *src,
        dst: *dst,
        ip_id: orig.ip_id,
        ttl: orig.ttl,
        dscp_ecn: orig.dscp_ecn,
        dont_fragment: orig.dont_fragment,
        udp_checksum: 0,
        header: *header,
        payload: Vec::new(),
    };
    Ok(signal.encode(&[]))
}

// ---------------------------------------------------------------------------------------------
// Checksums and byte helpers
// ---------------------------------------------------------------------------------------------

/// The IPv4 header checksum of a 20-byte header: one's complement of the one's complement sum
/// of its 16-bit words, with the checksum field (bytes 10..12) taken as zero.
pub fn ipv4_header_checksum(header: &[u8; IPV4_HEADER_LEN]) -> u16 {
    let sum = ones_sum(ones_sum(0, &header[..10]), &header[12..]);
    !fold(sum)
}

/// The UDP checksum (RFC 768) of `segment` (UDP header and data, exactly UDP-length bytes) sent
/// from `src` to `dst`: over the pseudo-header and the segment with its checksum field (bytes
/// 6..8) taken as zero; a computed 0 is returned as 0xFFFF. Segments longer than 65535 bytes
/// (which no IPv4 packet holds) are summed with their length truncated to 16 bits.
pub fn udp_checksum(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> u16 {
    let len = (segment.len() & 0xffff) as u16;
    let mut sum = ones_sum(0, &src.octets());
    sum = ones_sum(sum, &dst.octets());
    sum = ones_sum(sum, &[0, IP_PROTOCOL_UDP]);
    sum = ones_sum(sum, &len.to_be_bytes());
    sum = ones_sum(sum, segment.get(..6).unwrap_or(segment));
    sum = ones_sum(sum, segment.get(8..).unwrap_or(&[]));
    match !fold(sum) {
        0 => 0xffff,
        c => c,
    }
}

/// Adds the big-endian 16-bit words of `bytes` to `acc` (an odd last byte is padded with a zero
/// on the right). Wide accumulator: the carries are folded by [`fold`].
pub(super) fn ones_sum(acc: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(2);
    let mut sum = acc;
    for word in &mut chunks {
        sum += u64::from(u16::from_be_bytes([word[0], word[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// Folds the carries of a wide sum into 16 bits (end-around carry).
pub(super) fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    (sum & 0xffff) as u16
}

/// RFC 1624 eqn. 3: `HC' = ~(~HC + ~m + m')` over the words of `old` (m) and `new` (m'), which
/// must have the same length and sit at even offsets of the checksummed data.
pub(super) fn checksum_update(checksum: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut sum = u64::from(!checksum);
    for (m, m_new) in old.chunks(2).zip(new.chunks(2)) {
        sum += u64::from(!word(m)) + u64::from(word(m_new));
    }
    !fold(sum)
}

pub(super) fn word(bytes: &[u8]) -> u16 {
    match *bytes {
        [hi, lo, ..] => u16::from_be_bytes([hi, lo]),
        [hi] => u16::from_be_bytes([hi, 0]),
        [] => 0,
    }
}

/// The fields of a frame that [`rewrite`] changes and the UDP checksum covers: IPv4 destination
/// address (4 bytes), UDP destination port (2), Horus header (11) and a zero pad (1).
fn checksummed_fields(frame: &[u8]) -> [u8; 18] {
    let mut f = [0u8; 18];
    if let Some(ip) = array_at::<4>(frame, IPV4_DST) {
        f[..4].copy_from_slice(ip);
    }
    if let Some(port) = array_at::<2>(frame, UDP_DST_PORT) {
        f[4..6].copy_from_slice(port);
    }
    if let Some(h) = array_at::<HEADER_LEN>(frame, HORUS_OFFSET) {
        f[6..17].copy_from_slice(h);
    }
    f
}
