//! The scheduler at the frame level: what leaves which port, byte for byte.

mod common;

use std::net::Ipv4Addr;

use common::*;
use horus_model::sched::frame::{FramePass, FrameResult, FrameSwitch, InFrame};
use horus_model::sched::{DropReason, Target};
use horus_model::wire::{self, Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType};

fn client() -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 0, 9, 9]),
        ip: Ipv4Addr::new(10, 9, 9, 9),
        udp_port: 40000,
    }
}

fn frame(h: HorusHeader, payload: &[u8]) -> Vec<u8> {
    let mut f = HorusFrame {
        src: client(),
        dst: Endpoint {
            mac: MacAddr([2, 0, 0, 0, 0, 3]),
            ip: Ipv4Addr::new(10, 0, 0, 3),
            udp_port: 1234,
        },
        ip_id: 0x1234,
        ttl: 63,
        dscp_ecn: 0,
        dont_fragment: true,
        udp_checksum: 0,
        header: h,
        payload: payload.to_vec(),
    };
    f.udp_checksum = f.udp_checksum_full();
    f.to_bytes()
}

fn send(sw: &mut FrameSwitch, bytes: Vec<u8>) -> FrameResult {
    let mut r = sw
        .process(FramePass::Frame(InFrame {
            frame: bytes,
            time_us: 0,
        }))
        .unwrap();
    let mut all = r.clone();
    while let Some(rs) = r.resubmit.take() {
        r = sw.process(FramePass::Resubmit(rs)).unwrap();
        all.outputs.extend(r.outputs.iter().cloned());
        all.pass = r.pass;
    }
    all
}

fn leaf_switch() -> FrameSwitch {
    FrameSwitch::from_config(&leaf_config(&[3, 2], 1, 1, 0, 1.0), 5)
        .unwrap()
        .0
}

#[test]
fn leaf_startup_tells_the_spine_each_pool_is_idle() {
    let (_, out) = FrameSwitch::from_config(&leaf_config(&[3, 2], 1, 1, 0, 1.0), 5).unwrap();
    assert_eq!(out.len(), 2);
    for (pool, o) in out.iter().enumerate() {
        let f = wire::parse_frame(&o.frame).unwrap();
        assert_eq!(o.port, 2, "the uplink of spine 1");
        assert_eq!(
            (f.header.pkt_type, f.header.pool_id, f.header.src_id),
            (PacketType::IdleSignal, pool as u16, spine_node(pool as u16))
        );
        assert_eq!(f.dst.ip, Ipv4Addr::new(10, 0, 1, 1));
        assert_eq!(f.src.ip, Ipv4Addr::new(10, 0, 0, 3));
    }
}

#[test]
fn task_frame_is_rewritten_towards_the_chosen_worker_with_its_payload_intact() {
    let mut sw = leaf_switch();
    let input = frame(task(1, 500), b"run this");
    let r = send(&mut sw, input.clone());
    assert_eq!(r.outputs.len(), 1);
    let out = &r.outputs[0];
    let Some(Target::Node { node, addr }) = r.pass.unwrap().forward.map(|e| e.target) else {
        panic!()
    };
    assert_eq!(out.port, addr.port);
    let f = wire::parse_frame(&out.frame).unwrap();
    assert_eq!(f.dst, addr.endpoint);
    assert_eq!(
        (f.header.dst_id, f.header.qlen, f.header.seq_num),
        (node, 1, 500)
    );
    assert_eq!(f.payload, b"run this");
    assert_eq!(f.src, client(), "the source is untouched");
    assert_eq!(out.frame.len(), input.len());
    let mut expected_header = f.header;
    expected_header.pkt_type = PacketType::NewTask;
    assert_eq!(
        out.frame,
        wire::rewrite(&input, &addr.endpoint, &expected_header).unwrap()
    );
    assert_eq!(
        f.udp_checksum,
        f.udp_checksum_full(),
        "the UDP checksum still verifies"
    );
}

#[test]
fn reply_goes_on_unchanged_and_a_load_report_is_mirrored_to_the_spine() {
    let mut sw = leaf_switch();
    // Pool 1 has two workers (3, 4). Four tasks take the average to 2.0; the report due at 1.0
    // yields to the idleRemove of the same pass and goes out at 1.5.
    for seq in 0..4 {
        send(&mut sw, frame(task(1, seq), b""));
    }
    assert_eq!({ sw.scheduler().tables().pools[1].avg.reported }, 0x18000);
    // Replies take it to 1.5 and 1.0: less than 1.0 away from the last report, so no report.
    for w in [3, 4] {
        let reply = frame(header(PacketType::TaskDone, 1, w, 0, 1), b"result");
        let r = send(&mut sw, reply.clone());
        assert_eq!(r.outputs.len(), 1);
        assert_eq!((r.outputs[0].port, &r.outputs[0].frame), (1, &reply));
    }
    // 0.5: a full 1.0 below the last report.
    let r = send(
        &mut sw,
        frame(header(PacketType::TaskDone, 1, 3, 0, 2), b"result"),
    );
    assert_eq!(r.outputs.len(), 2, "reply first, then the mirrored report");
    let report = wire::parse_frame(&r.outputs[1].frame).unwrap();
    assert_eq!(r.outputs[1].port, 2);
    assert_eq!(
        (
            report.header.pkt_type,
            report.header.qlen,
            report.header.seq_num
        ),
        (PacketType::QueueSignal, 0, 0x8000)
    );
    assert!(report.payload.is_empty());
    assert_eq!(r.outputs[1].frame.len(), wire::MIN_FRAME_LEN);
}

#[test]
fn non_horus_frames_pass_through_unchanged_and_touch_no_table() {
    let mut sw = leaf_switch();
    let before = sw.scheduler().tables().clone();
    let horus = frame(task(0, 1), b"x");
    let mut arp = horus.clone();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let mut other_port = horus.clone();
    other_port[36..38].copy_from_slice(&80u16.to_be_bytes());
    let mut tcp = horus.clone();
    tcp[23] = 6;
    let ck = wire::ipv4_header_checksum(tcp[14..34].try_into().unwrap());
    tcp[24..26].copy_from_slice(&ck.to_be_bytes());
    for f in [arp, other_port, tcp] {
        let r = send(&mut sw, f.clone());
        assert_eq!(r.outputs.len(), 1);
        assert_eq!((r.outputs[0].port, &r.outputs[0].frame), (1, &f));
    }
    assert_eq!(sw.scheduler().tables(), &before);
    assert_eq!(sw.scheduler().counters().passed_through, 3);
}

#[test]
fn malformed_horus_frames_are_dropped_counted_and_change_no_table() {
    let mut sw = leaf_switch();
    let before = sw.scheduler().tables().clone();
    let good = frame(task(0, 1), b"");
    let mut bad_ck = good.clone();
    bad_ck[24] ^= 0xff;
    let mut unknown = good.clone();
    unknown[wire::HORUS_OFFSET] = 0x30;
    let mut flag = frame(header(PacketType::TaskDone, 0, 0, 0, 0), b"");
    flag[wire::HORUS_OFFSET] |= wire::MORE_PACKETS_FLAG;
    let mut short_udp = good.clone();
    short_udp[38..40].copy_from_slice(&12u16.to_be_bytes());
    let cases = [
        (bad_ck, DropReason::BadChecksum),
        (unknown, DropReason::Malformed),
        (flag, DropReason::Malformed),
        (short_udp, DropReason::Malformed),
        (good[..10].to_vec(), DropReason::Malformed),
        // UDP to port 1234, cut inside the Horus header.
        (good[..48].to_vec(), DropReason::Malformed),
    ];
    for (f, reason) in cases {
        let n = sw.scheduler().counters().drop_count(reason);
        let r = send(&mut sw, f);
        assert!(r.outputs.is_empty());
        assert!(r.parse_error.is_some());
        assert_eq!(sw.scheduler().counters().drop_count(reason), n + 1);
    }
    assert_eq!(sw.scheduler().tables(), &before);
}

#[test]
fn resubmitted_task_leaves_on_its_second_pass_with_the_whole_frame() {
    let mut sw = leaf_switch();
    // Empty pool 0's idle list, then load every worker equally: equal loads and zero drift make
    // the second task on one worker resubmit (drift 1 > difference 0).
    for seq in 0..3 {
        send(&mut sw, frame(task(0, seq), b""));
    }
    let mut resubmitted = 0;
    for seq in 10..40 {
        let input = frame(task(0, seq), b"payload bytes");
        let first = sw
            .process(FramePass::Frame(InFrame {
                frame: input.clone(),
                time_us: 0,
            }))
            .unwrap();
        if let Some(rs) = first.resubmit {
            assert!(first.outputs.is_empty());
            assert_eq!(rs.frame, input);
            let second = sw.process(FramePass::Resubmit(rs)).unwrap();
            assert_ne!(
                second.outputs[0].port, 2,
                "the task leaves first; a load report may follow"
            );
            assert_eq!(
                wire::parse_frame(&second.outputs[0].frame).unwrap().payload,
                b"payload bytes"
            );
            resubmitted += 1;
        }
    }
    assert!(resubmitted > 0);
    assert_eq!(sw.scheduler().counters().pow2_resubmits, resubmitted);
}

#[test]
fn frames_longer_than_a_buffer_slot_are_dropped_as_malformed_whatever_they_carry() {
    use horus_model::sched::frame::MAX_FRAME_LEN;
    let mut sw = leaf_switch();
    let before = sw.scheduler().tables().clone();
    let fits = frame(
        task(0, 1),
        &vec![7; MAX_FRAME_LEN - wire::HORUS_OFFSET - wire::HEADER_LEN],
    );
    assert_eq!(fits.len(), MAX_FRAME_LEN);
    let mut too_long = fits.clone();
    too_long.push(0);
    let r = send(&mut sw, too_long);
    assert!(r.outputs.is_empty() && r.pass.is_none());
    assert_eq!(
        sw.scheduler().counters().drop_count(DropReason::Malformed),
        1
    );
    assert_eq!(sw.scheduler().tables(), &before);
    let r = send(&mut sw, fits);
    assert_eq!(
        r.outputs.len(),
        1,
        "a frame of exactly the limit is scheduled"
    );
}

#[test]
fn control_pass_signals_reach_a_spine_on_any_udp_port() {
    let mut cfg = leaf_config(&[3], 1, 1, 0, 1.0);
    cfg.spines[0].udp_port = 4321;
    let (_, boot) = FrameSwitch::from_config(&cfg, 5).unwrap();
    assert_eq!(
        boot.len(),
        1,
        "the pool's first worker links the rack: one idleAdd"
    );
    let f = wire::parse_frame(&boot[0].frame);
    assert!(
        f.is_err(),
        "not to the Horus port, so not a Horus frame by the parser's rules"
    );
    assert_eq!(
        u16::from_be_bytes([boot[0].frame[36], boot[0].frame[37]]),
        4321
    );
    assert_eq!(
        boot[0].frame[wire::HORUS_OFFSET],
        PacketType::IdleSignal.code()
    );
}
