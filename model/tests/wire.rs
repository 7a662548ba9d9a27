//! Tests of the Horus wire format (`horus_model::wire`): round trips, one test per error,
//! byte compatibility, the switch's `rewrite` and `signal_frame`, and robustness on any bytes.

use std::net::Ipv4Addr;

use etherparse::{Ipv4HeaderSlice, PacketBuilder, UdpHeader};
use horus_model::wire::*;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

fn client() -> Endpoint {
    Endpoint {
        mac: MacAddr([0x02, 0, 0, 0, 0, 0x01]),
        ip: Ipv4Addr::new(10, 0, 0, 1),
        udp_port: 40000,
    }
}

fn switch() -> Endpoint {
    Endpoint {
        mac: MacAddr([0x02, 0, 0, 0, 0, 0xfe]),
        ip: Ipv4Addr::new(10, 0, 1, 254),
        udp_port: HORUS_UDP_PORT,
    }
}

fn worker() -> Endpoint {
    Endpoint {
        mac: MacAddr([0x02, 0, 0, 0, 0x07, 0x03]),
        ip: Ipv4Addr::new(10, 0, 7, 3),
        udp_port: HORUS_UDP_PORT,
    }
}

fn spine() -> Endpoint {
    Endpoint {
        mac: MacAddr([0x02, 0, 0, 0, 0x09, 0x01]),
        ip: Ipv4Addr::new(10, 0, 9, 1),
        udp_port: HORUS_UDP_PORT,
    }
}

fn new_task_header() -> HorusHeader {
    HorusHeader {
        pkt_type: PacketType::NewTask,
        more_packets: false,
        pool_id: 3,
        src_id: 0x0102,
        dst_id: 0xffff,
        qlen: 0,
        seq_num: 0xbeef,
    }
}

/// A valid NewTask frame with a 9-byte payload (62 bytes, no padding) and a valid UDP checksum.
fn valid_frame() -> HorusFrame {
    let mut f = HorusFrame {
        src: client(),
        dst: switch(),
        ip_id: 0x1234,
        ttl: 64,
        dscp_ecn: 0xb8,
        dont_fragment: true,
        udp_checksum: 0,
        header: new_task_header(),
        payload: b"task-body".to_vec(),
    };
    f.udp_checksum = f.udp_checksum_full();
    f
}

fn valid_bytes() -> Vec<u8> {
    valid_frame().to_bytes()
}

/// Recomputes the IPv4 header checksum with etherparse (an implementation independent of ours).
fn fix_ipv4_checksum(bytes: &mut [u8]) {
    let ip = Ipv4HeaderSlice::from_slice(&bytes[14..34])
        .expect("IPv4 header")
        .to_header();
    let c = ip.calc_header_checksum();
    bytes[24..26].copy_from_slice(&c.to_be_bytes());
}

fn ipv4_checksum_is_valid(bytes: &[u8]) -> bool {
    let ip = Ipv4HeaderSlice::from_slice(&bytes[14..34]).expect("IPv4 header");
    ip.header_checksum() == ip.to_header().calc_header_checksum()
}

/// UDP checksum of a frame recomputed from its bytes with etherparse.
fn etherparse_udp_checksum(bytes: &[u8]) -> u16 {
    let ip = Ipv4HeaderSlice::from_slice(&bytes[14..34]).expect("IPv4 header");
    let udp_len = usize::from(u16::from_be_bytes([bytes[38], bytes[39]]));
    let mut udp = UdpHeader::from_bytes(bytes[34..42].try_into().expect("8 bytes"));
    udp.checksum = 0;
    udp.calc_checksum_ipv4_raw(ip.source(), ip.destination(), &bytes[42..34 + udp_len])
        .expect("UDP length fits")
}

fn set_u16(bytes: &mut [u8], offset: usize, value: u16) {
    bytes[offset..offset + 2].copy_from_slice(&value.to_be_bytes());
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

fn arb_packet_type() -> impl Strategy<Value = PacketType> {
    prop::sample::select(PacketType::ALL.to_vec())
}

/// Any valid header: the flag only on task types.
fn arb_header() -> impl Strategy<Value = HorusHeader> {
    (arb_packet_type(), any::<bool>(), any::<[u16; 5]>()).prop_map(
        |(pkt_type, flag, [pool_id, src_id, dst_id, qlen, seq_num])| HorusHeader {
            pkt_type,
            more_packets: flag && pkt_type.is_task(),
            pool_id,
            src_id,
            dst_id,
            qlen,
            seq_num,
        },
    )
}

fn arb_endpoint() -> impl Strategy<Value = Endpoint> {
    (any::<[u8; 6]>(), any::<u32>(), any::<u16>()).prop_map(|(mac, ip, udp_port)| Endpoint {
        mac: MacAddr(mac),
        ip: Ipv4Addr::from(ip),
        udp_port,
    })
}

/// Any frame that `parse_frame` accepts (destination port 1234).
fn arb_frame() -> impl Strategy<Value = HorusFrame> {
    (
        arb_endpoint(),
        arb_endpoint(),
        any::<(u16, u8, u8, bool, u16)>(),
        arb_header(),
        prop::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(
            |(
                src,
                mut dst,
                (ip_id, ttl, dscp_ecn, dont_fragment, udp_checksum),
                header,
                payload,
            )| {
                dst.udp_port = HORUS_UDP_PORT;
                HorusFrame {
                    src,
                    dst,
                    ip_id,
                    ttl,
                    dscp_ecn,
                    dont_fragment,
                    udp_checksum,
                    header,
                    payload,
                }
            },
        )
}

/// A frame with a correct UDP checksum, or with none (0).
fn arb_checksummed_frame() -> impl Strategy<Value = HorusFrame> {
    (arb_frame(), any::<bool>()).prop_map(|(mut f, with_checksum)| {
        f.udp_checksum = if with_checksum {
            f.udp_checksum_full()
        } else {
            0
        };
        f
    })
}

// ---------------------------------------------------------------------------------------------
// Round trips and robustness
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn header_to_bytes_then_parse_is_identity(h in arb_header()) {
        let bytes = h.to_bytes();
        prop_assert_eq!(HorusHeader::parse(&bytes), Ok(h), "{}", h);
        let mut buf = [0xaau8; 16];
        h.write(&mut buf);
        prop_assert_eq!(&buf[..11], &bytes[..]);
        prop_assert_eq!(&buf[11..], &[0xaa; 5][..]);
    }

    #[test]
    fn header_fields_sit_at_their_documented_offsets(h in arb_header()) {
        let b = h.to_bytes();
        let at = |o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
        prop_assert_eq!(b[PKT_TYPE_OFFSET] & TYPE_CODE_MASK, h.pkt_type.code());
        prop_assert_eq!(b[PKT_TYPE_OFFSET] & MORE_PACKETS_FLAG != 0, h.more_packets);
        prop_assert_eq!(at(POOL_ID_OFFSET), h.pool_id);
        prop_assert_eq!(at(SRC_ID_OFFSET), h.src_id);
        prop_assert_eq!(at(DST_ID_OFFSET), h.dst_id);
        prop_assert_eq!(at(QLEN_OFFSET), h.qlen);
        prop_assert_eq!(at(SEQ_NUM_OFFSET), h.seq_num);
    }

    #[test]
    fn frame_to_bytes_then_parse_frame_is_identity(f in arb_frame()) {
        let bytes = f.to_bytes();
        prop_assert_eq!(bytes.len(), (PAYLOAD_OFFSET + f.payload.len()).max(MIN_FRAME_LEN));
        prop_assert_eq!(f.try_to_bytes(), Ok(bytes.clone()));
        prop_assert!(ipv4_checksum_is_valid(&bytes));
        prop_assert_eq!(parse_frame(&bytes), Ok(f.clone()), "{}", f.header);
    }

    #[test]
    fn udp_checksum_full_matches_etherparse(f in arb_frame()) {
        prop_assert_eq!(f.udp_checksum_full(), etherparse_udp_checksum(&f.to_bytes()));
    }

    #[test]
    fn parse_frame_never_panics_on_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let _ = parse_frame(&bytes);
        let _ = HorusHeader::parse(&bytes);
        let _ = rewrite(&bytes, &worker(), &new_task_header());
        let _ = signal_frame(&bytes, &switch(), &spine(), &new_task_header());
    }

    #[test]
    fn parse_frame_never_panics_on_mutated_valid_frames(
        f in arb_frame(),
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let mut bytes = f.to_bytes();
        for (i, v) in mutations {
            let i = i.index(bytes.len());
            bytes[i] = v;
        }
        if do_cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        // Also reach the checks behind the IPv4 checksum.
        let mut fixed = bytes.clone();
        if fixed.len() >= 34 && fixed[14] == 0x45 {
            fix_ipv4_checksum(&mut fixed);
        }
        for b in [&bytes, &fixed] {
            if let Ok(parsed) = parse_frame(b) {
                // Whatever parses re-encodes to a frame that parses to the same value.
                prop_assert_eq!(parse_frame(&parsed.to_bytes()), Ok(parsed.clone()));
            }
            let _ = rewrite(b, &worker(), &new_task_header());
            let _ = signal_frame(b, &switch(), &spine(), &new_task_header());
        }
    }

    #[test]
    fn rewrite_changes_only_the_documented_bytes(
        f in arb_checksummed_frame(),
        dst in arb_endpoint(),
        header in arb_header(),
        padding in 0usize..20,
    ) {
        let mut input = f.to_bytes();
        input.resize(input.len() + padding, 0x5a);
        let out = rewrite(&input, &dst, &header).expect("valid frame");
        prop_assert_eq!(out.len(), input.len());

        let mut changeable = Vec::new();
        changeable.extend(0..6); // Ethernet destination
        changeable.extend(24..26); // IPv4 checksum
        changeable.extend(30..34); // IPv4 destination
        changeable.extend(36..38); // UDP destination port
        changeable.extend(40..42); // UDP checksum
        changeable.extend(42..53); // Horus header
        for i in 0..input.len() {
            if !changeable.contains(&i) {
                prop_assert_eq!(out[i], input[i], "byte {} changed", i);
            }
        }
        prop_assert_eq!(&out[0..6], &dst.mac.0[..]);
        prop_assert_eq!(&out[30..34], &dst.ip.octets()[..]);
        prop_assert_eq!(&out[36..38], &dst.udp_port.to_be_bytes()[..]);
        prop_assert_eq!(&out[42..53], &header.to_bytes()[..]);
        prop_assert!(ipv4_checksum_is_valid(&out));

        let udp_checksum = u16::from_be_bytes([out[40], out[41]]);
        if f.udp_checksum == 0 {
            prop_assert_eq!(udp_checksum, 0);
        } else {
            prop_assert_eq!(udp_checksum, etherparse_udp_checksum(&out));
        }
        if dst.udp_port == HORUS_UDP_PORT {
            let parsed = parse_frame(&out).expect("rewritten frame parses");
            prop_assert_eq!(parsed.header, header);
            prop_assert_eq!(parsed.dst, dst);
            prop_assert_eq!(parsed.src, f.src);
            prop_assert_eq!(&parsed.payload, &f.payload);
            if f.udp_checksum != 0 {
                prop_assert_eq!(udp_checksum, parsed.udp_checksum_full());
            }
        }
    }

    #[test]
    fn signal_frame_parses_back_with_given_header_and_no_payload(
        f in arb_frame(),
        src in arb_endpoint(),
        mut dst in arb_endpoint(),
        header in arb_header(),
    ) {
        dst.udp_port = HORUS_UDP_PORT;
        let out = signal_frame(&f.to_bytes(), &src, &dst, &header).expect("valid frame");
        prop_assert_eq!(out.len(), MIN_FRAME_LEN);
        prop_assert_eq!(&out[16..18], &[0, 39][..]); // IPv4 total length
        prop_assert_eq!(&out[38..40], &[0, 19][..]); // UDP length
        prop_assert!(out[PAYLOAD_OFFSET..].iter().all(|&b| b == 0));
        let parsed = parse_frame(&out).expect("signal frame parses");
        prop_assert_eq!(
            parsed,
            HorusFrame {
                src,
                dst,
                ip_id: f.ip_id,
                ttl: f.ttl,
                dscp_ecn: f.dscp_ecn,
                dont_fragment: f.dont_fragment,
                udp_checksum: 0,
                header,
                payload: Vec::new(),
            }
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Format details
// ---------------------------------------------------------------------------------------------

#[test]
fn single_packet_new_task_keeps_public_type_byte() {
    let mut h = new_task_header();
    assert_eq!(h.to_bytes()[0], 0x00);
    assert!(h.is_last_packet());
    h.more_packets = true;
    assert_eq!(h.to_bytes()[0], 0x80);
    assert!(!h.is_last_packet());
    assert_eq!(HorusHeader::parse(&h.to_bytes()), Ok(h));
}

#[test]
fn header_golden_bytes() {
    let h = HorusHeader {
        pkt_type: PacketType::TaskContinuation,
        more_packets: true,
        pool_id: 0x0102,
        src_id: 0x0304,
        dst_id: 0x0506,
        qlen: 0x0708,
        seq_num: 0x090a,
    };
    assert_eq!(h.to_bytes(), [0x90, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
}

#[test]
fn frame_matches_etherparse_packet_builder() {
    let f = valid_frame();
    let mut reference = Vec::new();
    PacketBuilder::ethernet2(f.src.mac.0, f.dst.mac.0)
        .ipv4(f.src.ip.octets(), f.dst.ip.octets(), f.ttl)
        .udp(f.src.udp_port, f.dst.udp_port)
        .write(
            &mut reference,
            &[&f.header.to_bytes()[..], &f.payload].concat(),
        )
        .expect("write to Vec");
    // etherparse leaves identification and DSCP/ECN at 0: align ours, then compare.
    let plain = HorusFrame {
        ip_id: 0,
        dscp_ecn: 0,
        dont_fragment: true,
        ..f
    };
    let plain = HorusFrame {
        udp_checksum: plain.udp_checksum_full(),
        ..plain
    };
    assert_eq!(plain.to_bytes(), reference);
}

#[test]
fn short_frames_are_zero_padded_to_minimum_length() {
    let f = HorusFrame {
        payload: Vec::new(),
        ..valid_frame()
    };
    let bytes = f.to_bytes();
    assert_eq!(bytes.len(), MIN_FRAME_LEN);
    assert_eq!(&bytes[PAYLOAD_OFFSET..], &[0; 7]);
}

#[test]
fn parse_frame_ignores_ethernet_padding() {
    let f = HorusFrame {
        payload: vec![1, 2, 3],
        ..valid_frame()
    };
    let mut bytes = f.to_bytes();
    assert_eq!(bytes.len(), MIN_FRAME_LEN);
    bytes[56..].fill(0xee);
    bytes.extend_from_slice(&[0xee; 10]);
    assert_eq!(parse_frame(&bytes), Ok(f));
}

#[test]
fn parse_frame_accepts_unpadded_frames() {
    let f = HorusFrame {
        payload: Vec::new(),
        ..valid_frame()
    };
    let bytes = f.to_bytes();
    assert_eq!(parse_frame(&bytes[..PAYLOAD_OFFSET]), Ok(f));
}

#[test]
fn parse_frame_does_not_verify_udp_checksum() {
    let mut bytes = valid_bytes();
    let wrong = valid_frame().udp_checksum ^ 0x0101;
    set_u16(&mut bytes, 40, wrong);
    assert_eq!(parse_frame(&bytes).map(|f| f.udp_checksum), Ok(wrong));
}

#[test]
fn try_to_bytes_rejects_oversized_payload() {
    let f = HorusFrame {
        payload: vec![0; MAX_PAYLOAD_LEN + 1],
        ..valid_frame()
    };
    assert_eq!(
        f.try_to_bytes(),
        Err(WireError::PayloadTooLong {
            len: MAX_PAYLOAD_LEN + 1,
            max: MAX_PAYLOAD_LEN
        })
    );
    // `to_bytes` cuts the payload to the maximum and stays parseable.
    let parsed = parse_frame(&f.to_bytes()).expect("maximal frame parses");
    assert_eq!(parsed.payload.len(), MAX_PAYLOAD_LEN);
}

#[test]
fn try_to_bytes_rejects_flag_on_non_task_header() {
    let mut f = valid_frame();
    f.header.pkt_type = PacketType::KeepAlive;
    f.header.more_packets = true;
    assert_eq!(
        f.try_to_bytes(),
        Err(WireError::FlagNotAllowed {
            pkt_type: PacketType::KeepAlive
        })
    );
}

#[test]
fn header_display_is_readable() {
    assert_eq!(
        new_task_header().to_string(),
        "NewTask(0) more_packets=false pool_id=3 src_id=258 dst_id=65535 qlen=0 seq_num=48879"
    );
}

#[test]
fn mac_addr_text_and_serde_round_trip() {
    let mac: MacAddr = "02:AB:cd:00:00:01".parse().expect("valid MAC");
    assert_eq!(mac, MacAddr([0x02, 0xab, 0xcd, 0, 0, 0x01]));
    assert_eq!(mac.to_string(), "02:ab:cd:00:00:01");

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Doc {
        mac: MacAddr,
    }
    let text = toml::to_string(&Doc { mac }).expect("serialize");
    assert_eq!(text.trim(), r#"mac = "02:ab:cd:00:00:01""#);
    assert_eq!(
        toml::from_str::<Doc>(&text).expect("deserialize"),
        Doc { mac }
    );
    let err = toml::from_str::<Doc>(r#"mac = "02:ab:cd:00:00""#).expect_err("too short");
    assert!(err.to_string().contains("invalid MAC address"), "{err}");
}

#[test]
fn mac_addr_parse_error_names_the_input_and_the_format() {
    let err = "nope".parse::<MacAddr>().expect_err("invalid");
    assert_eq!(
        err.to_string(),
        "invalid MAC address \"nope\": expected six two-digit hex bytes separated by ':', e.g. 02:00:00:00:00:01"
    );
}

// ---------------------------------------------------------------------------------------------
// One test per error: a valid frame with exactly one thing broken
// ---------------------------------------------------------------------------------------------

#[test]
fn valid_frame_parses() {
    assert_eq!(parse_frame(&valid_bytes()), Ok(valid_frame()));
}

#[test]
fn truncated_ethernet_header_is_rejected() {
    let bytes = valid_bytes();
    assert_eq!(
        parse_frame(&bytes[..13]),
        Err(WireError::Truncated {
            layer: Layer::Ethernet,
            needed: 14,
            got: 13
        })
    );
    assert_eq!(
        parse_frame(&[]),
        Err(WireError::Truncated {
            layer: Layer::Ethernet,
            needed: 14,
            got: 0
        })
    );
}

#[test]
fn truncated_ipv4_header_is_rejected() {
    assert_eq!(
        parse_frame(&valid_bytes()[..33]),
        Err(WireError::Truncated {
            layer: Layer::Ipv4,
            needed: 34,
            got: 33
        })
    );
}

#[test]
fn truncated_udp_header_is_rejected() {
    assert_eq!(
        parse_frame(&valid_bytes()[..41]),
        Err(WireError::Truncated {
            layer: Layer::Udp,
            needed: 42,
            got: 41
        })
    );
}

#[test]
fn truncated_horus_header_is_rejected() {
    assert_eq!(
        parse_frame(&valid_bytes()[..52]),
        Err(WireError::Truncated {
            layer: Layer::Horus,
            needed: 53,
            got: 52
        })
    );
}

#[test]
fn truncated_header_slice_is_rejected() {
    assert_eq!(
        HorusHeader::parse(&new_task_header().to_bytes()[..10]),
        Err(WireError::Truncated {
            layer: Layer::Horus,
            needed: 11,
            got: 10
        })
    );
}

#[test]
fn non_ipv4_ethertype_is_rejected() {
    let mut bytes = valid_bytes();
    set_u16(&mut bytes, 12, 0x86dd);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::NotIpv4 { ethertype: 0x86dd })
    );
}

#[test]
fn vlan_tagged_frame_is_rejected_as_not_ipv4() {
    let valid = valid_bytes();
    let mut tagged = valid[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&valid[12..]);
    assert_eq!(
        parse_frame(&tagged),
        Err(WireError::NotIpv4 { ethertype: 0x8100 })
    );
}

#[test]
fn ip_version_other_than_4_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[14] = 0x65;
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::NotIpv4Version { version: 6 })
    );
}

#[test]
fn ipv4_options_are_rejected() {
    let mut bytes = valid_bytes();
    bytes[14] = 0x46;
    assert_eq!(parse_frame(&bytes), Err(WireError::Ipv4Options { ihl: 6 }));
    bytes[14] = 0x4f;
    assert_eq!(parse_frame(&bytes), Err(WireError::Ipv4Options { ihl: 15 }));
}

#[test]
fn ipv4_ihl_below_5_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[14] = 0x44;
    assert_eq!(parse_frame(&bytes), Err(WireError::Ipv4Options { ihl: 4 }));
}

#[test]
fn wrong_ipv4_checksum_is_rejected() {
    let mut bytes = valid_bytes();
    let expected = u16::from_be_bytes([bytes[24], bytes[25]]);
    let found = expected ^ 0x0100;
    set_u16(&mut bytes, 24, found);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::Ipv4Checksum { expected, found })
    );
}

#[test]
fn more_fragments_flag_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[20] |= 0x20;
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::Fragmented {
            more_fragments: true,
            offset: 0
        })
    );
}

#[test]
fn nonzero_fragment_offset_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[21] = 5;
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::Fragmented {
            more_fragments: false,
            offset: 5
        })
    );
}

#[test]
fn non_udp_protocol_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[23] = 6;
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(parse_frame(&bytes), Err(WireError::NotUdp { protocol: 6 }));
}

#[test]
fn udp_destination_port_other_than_1234_is_rejected() {
    let mut bytes = valid_bytes();
    set_u16(&mut bytes, 36, 1235);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::WrongPort { port: 1235 })
    );
}

#[test]
fn ipv4_total_length_beyond_frame_is_rejected() {
    let mut bytes = valid_bytes();
    let available = bytes.len() - 14;
    let total_len = u16::try_from(available + 1).expect("small");
    set_u16(&mut bytes, 16, total_len);
    set_u16(&mut bytes, 38, total_len - 20);
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::Ipv4LengthExceedsFrame {
            total_len,
            available
        })
    );
}

#[test]
fn udp_length_shorter_than_headers_is_rejected() {
    let mut bytes = valid_bytes();
    set_u16(&mut bytes, 16, 38);
    set_u16(&mut bytes, 38, 18);
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::UdpLengthTooShort { udp_len: 18 })
    );
}

#[test]
fn udp_length_inconsistent_with_ipv4_length_is_rejected() {
    let mut bytes = valid_bytes();
    let udp_len = u16::from_be_bytes([bytes[38], bytes[39]]);
    let total_len = u16::from_be_bytes([bytes[16], bytes[17]]);
    set_u16(&mut bytes, 38, udp_len - 1);
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::UdpLengthMismatch {
            udp_len: udp_len - 1,
            total_len
        })
    );
}

#[test]
fn unknown_packet_type_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[42] = 17;
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::UnknownType { code: 17 })
    );
    bytes[42] = 0xff;
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::UnknownType { code: 0x7f })
    );
}

#[test]
fn more_packets_flag_on_non_task_type_is_rejected() {
    let mut bytes = valid_bytes();
    bytes[42] = MORE_PACKETS_FLAG | PacketType::TaskDone.code();
    assert_eq!(
        parse_frame(&bytes),
        Err(WireError::FlagNotAllowed {
            pkt_type: PacketType::TaskDone
        })
    );
}

#[test]
fn more_packets_flag_is_allowed_exactly_on_task_types() {
    for t in PacketType::ALL {
        let byte = [t.code() | MORE_PACKETS_FLAG, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let parsed = HorusHeader::parse(&byte);
        if t.is_task() {
            assert!(
                parsed.is_ok_and(|h| h.more_packets && h.pkt_type == t),
                "{t}"
            );
        } else {
            assert_eq!(parsed, Err(WireError::FlagNotAllowed { pkt_type: t }));
        }
    }
}

#[test]
fn pool_id_out_of_range_is_rejected() {
    let limits = IdLimits { pools: 3, nodes: 8 };
    let mut h = new_task_header();
    h.pool_id = 2;
    assert_eq!(h.check_ids(&limits), Ok(()));
    h.pool_id = 3;
    assert_eq!(
        h.check_ids(&limits),
        Err(WireError::PoolOutOfRange { pool: 3, limit: 3 })
    );
}

#[test]
fn node_src_id_out_of_range_is_rejected_only_for_node_types() {
    let limits = IdLimits { pools: 4, nodes: 8 };
    for t in PacketType::ALL {
        let h = HorusHeader {
            pkt_type: t,
            more_packets: false,
            pool_id: 0,
            src_id: 8,
            dst_id: 0,
            qlen: 0,
            seq_num: 0,
        };
        let expected = if t.carries_node_src() {
            Err(WireError::NodeOutOfRange { node: 8, limit: 8 })
        } else {
            Ok(())
        };
        assert_eq!(h.check_ids(&limits), expected, "{h}");
        assert_eq!(
            HorusHeader { src_id: 7, ..h }.check_ids(&limits),
            Ok(()),
            "{h}"
        );
    }
}

#[test]
fn error_messages_are_human_readable() {
    assert_eq!(
        WireError::Truncated {
            layer: Layer::Udp,
            needed: 42,
            got: 40
        }
        .to_string(),
        "truncated UDP header: need at least 42 bytes, got 40"
    );
    assert_eq!(
        WireError::NotIpv4 { ethertype: 0x8100 }.to_string(),
        "ethertype 0x8100 is not IPv4 (0x0800); VLAN-tagged frames are not supported"
    );
    assert_eq!(
        WireError::FlagNotAllowed {
            pkt_type: PacketType::QueueSignal
        }
        .to_string(),
        "MORE_PACKETS flag (0x80) set on a QueueSignal packet; it is only allowed on NewTask, NewTaskRandom and TaskContinuation"
    );
}

// ---------------------------------------------------------------------------------------------
// rewrite and signal_frame: fixed examples
// ---------------------------------------------------------------------------------------------

#[test]
fn rewrite_of_invalid_frame_returns_the_parse_error() {
    let mut bytes = valid_bytes();
    set_u16(&mut bytes, 36, 80);
    assert_eq!(
        rewrite(&bytes, &worker(), &new_task_header()),
        Err(WireError::WrongPort { port: 80 })
    );
    assert_eq!(
        rewrite(&bytes[..20], &worker(), &new_task_header()),
        Err(WireError::Truncated {
            layer: Layer::Ipv4,
            needed: 34,
            got: 20
        })
    );
}

#[test]
fn rewrite_rejects_invalid_new_header() {
    let header = HorusHeader {
        pkt_type: PacketType::TaskDone,
        more_packets: true,
        ..new_task_header()
    };
    assert_eq!(
        rewrite(&valid_bytes(), &worker(), &header),
        Err(WireError::FlagNotAllowed {
            pkt_type: PacketType::TaskDone
        })
    );
}

#[test]
fn rewrite_forwards_task_to_worker_with_valid_checksums() {
    let input = valid_bytes();
    let header = HorusHeader {
        dst_id: 7,
        qlen: 2,
        ..new_task_header()
    };
    let out = rewrite(&input, &worker(), &header).expect("valid frame");
    let parsed = parse_frame(&out).expect("parses");
    let expected = HorusFrame {
        dst: worker(),
        header,
        udp_checksum: parsed.udp_checksum_full(),
        ..valid_frame()
    };
    assert_eq!(parsed, expected);
    assert_eq!(out, expected.to_bytes());
}

#[test]
fn rewrite_keeps_zero_udp_checksum() {
    let f = HorusFrame {
        udp_checksum: 0,
        ..valid_frame()
    };
    let out = rewrite(&f.to_bytes(), &worker(), &new_task_header()).expect("valid frame");
    assert_eq!(&out[40..42], &[0, 0]);
}

#[test]
fn rewrite_maps_computed_zero_udp_checksum_to_ffff() {
    // Search a qlen for which the rewritten frame's full checksum computes to 0 (sent as 0xFFFF)
    // and check the incremental update agrees.
    let input = valid_bytes();
    let mut found = false;
    for qlen in 0..=u16::MAX {
        let header = HorusHeader {
            qlen,
            ..new_task_header()
        };
        let out = rewrite(&input, &worker(), &header).expect("valid frame");
        let full = etherparse_udp_checksum(&out);
        assert_eq!(u16::from_be_bytes([out[40], out[41]]), full, "qlen {qlen}");
        if full == 0xffff {
            found = true;
        }
    }
    assert!(found, "some qlen gives a computed checksum of 0");
}

#[test]
fn signal_frame_is_60_bytes_with_given_header_and_empty_payload() {
    let header = HorusHeader {
        pkt_type: PacketType::QueueSignal,
        more_packets: false,
        pool_id: 1,
        src_id: 4,
        dst_id: 0,
        qlen: 17,
        seq_num: 0,
    };
    let out = signal_frame(&valid_bytes(), &switch(), &spine(), &header).expect("valid frame");
    assert_eq!(out.len(), 60);
    let parsed = parse_frame(&out).expect("parses");
    assert_eq!(parsed.header, header);
    assert!(parsed.payload.is_empty());
    assert_eq!(parsed.src, switch());
    assert_eq!(parsed.dst, spine());
    assert_eq!(parsed.udp_checksum, 0);
    let original = valid_frame();
    assert_eq!(
        (
            parsed.ip_id,
            parsed.ttl,
            parsed.dscp_ecn,
            parsed.dont_fragment
        ),
        (
            original.ip_id,
            original.ttl,
            original.dscp_ecn,
            original.dont_fragment
        )
    );
}

#[test]
fn signal_frame_of_invalid_frame_returns_the_parse_error() {
    let mut bytes = valid_bytes();
    bytes[23] = 1;
    fix_ipv4_checksum(&mut bytes);
    assert_eq!(
        signal_frame(&bytes, &switch(), &spine(), &new_task_header()),
        Err(WireError::NotUdp { protocol: 1 })
    );
}
