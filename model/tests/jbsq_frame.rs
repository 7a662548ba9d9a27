//! The JBSQ leaf at the level of frames (`horus_model::sched::jbsq::frame`): held tasks keep
//! their whole frames and leave byte for byte, rewritten towards the worker whose reply frees
//! them; a pass's frames leave in the documented order (`docs/algorithm.md`, "The leaf that
//! holds tasks (JBSQ)"). The frames expected are built with the wire module's own rewrite and
//! signal functions, which `model/tests/wire.rs` holds to etherparse (an independent
//! implementation).

use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;

use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::DropReason;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::frame::{
    JbsqFramePass, JbsqFrameResubmit, JbsqFrameResult, JbsqFrameSwitch,
};
use horus_model::sched::jbsq::{JbsqDrop, Placement};
use horus_model::wire::{
    self, Endpoint, HORUS_OFFSET, HORUS_UDP_PORT, HorusFrame, HorusHeader, MacAddr, PacketType,
};

const CONFIG: &str = include_str!("../../configs/example-leaf-jbsq.toml");
/// The example's ports: pass-through 1, control 0, spine 1 on port 2; pool 1's workers 0, 1, 2
/// on ports 8, 9, 10.
const PASS_THROUGH: u8 = 1;
const CONTROL: u8 = 0;
const SPINE_PORT: u8 = 2;

fn switch() -> (JbsqFrameSwitch, Config) {
    let cfg = Config::from_toml_str(CONFIG).expect("the example parses");
    let (sw, out) = JbsqFrameSwitch::from_config(&cfg, 5).expect("the example builds a leaf");
    // Each pool's first worker links its rack: one IDLE_SIGNAL each, to the spine.
    assert_eq!(out.len(), 2, "{out:?}");
    for f in &out {
        assert_eq!(f.port, SPINE_PORT);
        let h = wire::parse_frame(&f.frame).unwrap().header;
        assert_eq!(h.pkt_type, PacketType::IdleSignal);
    }
    (sw, cfg)
}

fn client(n: u8) -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 9, 0, n]),
        ip: Ipv4Addr::new(10, 0, 9, n),
        udp_port: HORUS_UDP_PORT,
    }
}

fn leaf_ep() -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 4]),
        ip: Ipv4Addr::new(10, 0, 0, 4),
        udp_port: HORUS_UDP_PORT,
    }
}

fn worker_ep(cfg: &Config, node: u16) -> (Endpoint, u8) {
    let n = cfg
        .pools
        .iter()
        .flat_map(|p| &p.nodes)
        .find(|n| n.id == node)
        .expect("a configured worker");
    (
        Endpoint {
            mac: n.mac,
            ip: n.ip,
            udp_port: n.udp_port,
        },
        n.port,
    )
}

fn header(pkt_type: PacketType, pool: u16, src: u16, seq: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id: src,
        dst_id: 0,
        qlen: 0,
        seq_num: seq,
    }
}

/// A task frame from a client, its payload naming it.
fn task(pool: u16, seq: u16, payload_len: usize) -> Vec<u8> {
    let payload = (0..payload_len)
        .map(|i| (seq as usize * 7 + i) as u8)
        .collect();
    HorusFrame::new(
        client(1),
        leaf_ep(),
        header(PacketType::NewTask, pool, 0xFFFF, seq),
        payload,
    )
    .to_bytes()
}

/// A worker's reply to a task, on its way to the client.
fn reply(cfg: &Config, pool: u16, node: u16, seq: u16) -> Vec<u8> {
    let mut f = HorusFrame::new(
        worker_ep(cfg, node).0,
        client(1),
        header(PacketType::TaskDone, pool, node, seq),
        vec![0xAB; 16],
    );
    f.ip_id = seq;
    f.to_bytes()
}

fn run(sw: &mut JbsqFrameSwitch, frame: &[u8], t: u32) -> JbsqFrameResult {
    sw.process(JbsqFramePass::Frame(InFrame {
        frame: frame.to_vec(),
        time_us: t,
    }))
}

/// The frame a task sent to `node` must be: the client's frame rewritten towards the worker's
/// address, `dst_id` the worker's ID, `qlen` 0.
fn to_worker(cfg: &Config, frame: &[u8], node: u16) -> OutFrame {
    let (ep, port) = worker_ep(cfg, node);
    let mut h = wire::parse_frame(frame).unwrap().header;
    h.dst_id = node;
    h.qlen = 0;
    OutFrame {
        port,
        frame: wire::rewrite(frame, &ep, &h).unwrap(),
    }
}

#[test]
fn held_tasks_leave_byte_for_byte_towards_the_worker_whose_reply_frees_them() {
    let (mut sw, cfg) = switch();
    // Pool 1: workers 0 and 1 with k = 2, worker 2 with k = 4: eight places.
    let mut sent = Vec::new();
    for seq in 0..8 {
        let f = task(1, seq, 100);
        let r = run(&mut sw, &f, 10);
        let Some(Placement::Token { node, .. }) = r.pass.unwrap().placement else {
            panic!("task {seq} takes a place: {r:?}");
        };
        assert_eq!(r.outputs[0], to_worker(&cfg, &f, node), "task {seq}");
        sent.push(node);
    }
    // The last place taken unlinks the rack (free places advertised): its message follows.
    let last = run(&mut sw, &task(1, 8, 150), 11);
    let Some(Placement::Held { depth: 1 }) = last.pass.unwrap().placement else {
        panic!("held: {last:?}");
    };
    let slot8 = last.pass.unwrap().slot.unwrap();
    assert!(
        last.outputs.iter().all(|o| o.port == SPINE_PORT),
        "{last:?}"
    );
    let held: Vec<_> = (9..11).map(|seq| task(1, seq, 40 + seq as usize)).collect();
    for f in &held {
        let r = run(&mut sw, f, 12);
        assert!(r.outputs.iter().all(|o| o.port == SPINE_PORT), "{r:?}");
    }
    assert_eq!(sw.held_frame(slot8), Some(&task(1, 8, 150)[..]));
    // Worker 1's reply: the reply on to its client unchanged, then the oldest held task
    // rewritten towards worker 1, then (perhaps) the load report, mirroring the reply.
    let rep = reply(&cfg, 1, 1, 3);
    let r = run(&mut sw, &rep, 20);
    assert_eq!(
        r.outputs[0],
        OutFrame {
            port: PASS_THROUGH,
            frame: rep.clone()
        }
    );
    assert_eq!(r.outputs[1], to_worker(&cfg, &task(1, 8, 150), 1));
    assert_eq!(r.pass.unwrap().slot, Some(slot8));
    assert_eq!(sw.held_frame(slot8), None, "the slot is free again");
    for o in &r.outputs[2..] {
        assert_eq!(o.port, SPINE_PORT);
        let h = wire::parse_frame(&o.frame).unwrap().header;
        let spine = Endpoint {
            mac: MacAddr([2, 0, 0, 0, 1, 1]),
            ip: Ipv4Addr::new(10, 0, 1, 1),
            udp_port: HORUS_UDP_PORT,
        };
        assert_eq!(
            o.frame,
            wire::signal_frame(&rep, &leaf_ep(), &spine, &h).unwrap(),
            "the message mirrors the reply"
        );
    }
    // The next two replies release the next two, in arrival order, to whoever answers.
    for (f, node) in held.iter().zip([2, 0]) {
        let r = run(&mut sw, &reply(&cfg, 1, node, 0), 30);
        assert_eq!(r.outputs[1], to_worker(&cfg, f, node));
    }
    assert!(none_held(&sw));
}

fn none_held(sw: &JbsqFrameSwitch) -> bool {
    sw.leaf().tables().buf.iter().all(Option::is_none)
}

#[test]
fn a_returned_place_carries_the_reply_and_its_message_mirrors_it() {
    let (mut sw, cfg) = switch();
    for seq in 0..8 {
        run(&mut sw, &task(1, seq, 20), 10);
    }
    // Every place taken, nothing held: worker 2's reply frees a place in a second pass.
    let rep = reply(&cfg, 1, 2, 77);
    let r = run(&mut sw, &rep, 20);
    assert_eq!(r.outputs[0].port, PASS_THROUGH);
    let back: JbsqFrameResubmit = r.resubmit.expect("the place returns in a second pass");
    assert_eq!(back.frame, rep, "the second pass carries the reply");
    let r2 = sw.process(JbsqFramePass::Resubmit(back));
    // The place back links the rack again (free places advertised): IDLE_SIGNAL, mirroring the
    // reply (its IPv4 identification 77 kept).
    assert_eq!(r2.outputs.len(), 1, "{r2:?}");
    let o = &r2.outputs[0];
    let h = wire::parse_frame(&o.frame).unwrap();
    assert_eq!(
        (o.port, h.header.pkt_type),
        (SPINE_PORT, PacketType::IdleSignal)
    );
    assert_eq!(h.ip_id, 77);
    // The next task takes that place: to worker 2.
    let f = task(1, 9, 20);
    let r = run(&mut sw, &f, 30);
    assert_eq!(r.outputs[0], to_worker(&cfg, &f, 2));
}

#[test]
fn frames_the_parser_rejects_are_passed_through_or_dropped_and_counted() {
    let (mut sw, _) = switch();
    // Not to the Horus port: out of the pass-through port, unchanged.
    let mut other = task(1, 1, 10);
    let udp_dst = 14 + 20 + 2;
    other[udp_dst..udp_dst + 2].copy_from_slice(&53u16.to_be_bytes());
    let r = run(&mut sw, &other, 0);
    assert_eq!(
        r.outputs,
        vec![OutFrame {
            port: PASS_THROUGH,
            frame: other
        }]
    );
    // A Horus frame cut inside its header, an IPv4 header with a bad checksum, a frame longer
    // than a frame-buffer slot: dropped and counted, nothing sent.
    let cut = task(1, 2, 0)[..14 + 20 + 8 + 5].to_vec();
    let mut bad = task(1, 3, 10);
    bad[14 + 10] ^= 0xFF;
    let long = task(1, 4, 2100);
    let drops: Vec<_> = [cut, bad, long]
        .iter()
        .map(|f| {
            let r = run(&mut sw, f, 0);
            assert!(r.outputs.is_empty() && r.pass.is_none(), "{r:?}");
            r.drop
        })
        .collect();
    assert_eq!(
        drops,
        [
            Some(DropReason::Malformed),
            Some(DropReason::BadChecksum),
            Some(DropReason::Malformed)
        ]
    );
    let c = sw.counters();
    assert_eq!((c.passed_through, c.malformed, c.bad_checksum), (1, 2, 1));
    assert_eq!(sw.leaf().counters().tasks, 0, "the leaf saw none of them");
}

#[test]
fn control_frames_go_to_the_controller_and_continuations_to_their_tasks_worker() {
    let (mut sw, cfg) = switch();
    let keep_alive = HorusFrame::new(
        worker_ep(&cfg, 0).0,
        leaf_ep(),
        header(PacketType::KeepAlive, 1, 0, 0),
        vec![1; 30],
    )
    .to_bytes();
    let r = run(&mut sw, &keep_alive, 0);
    assert_eq!(
        r.outputs,
        vec![OutFrame {
            port: CONTROL,
            frame: keep_alive
        }]
    );
    // A two-packet task of 300 bytes a packet (longer than a slot: never held anyway).
    let mut first = HorusFrame::new(
        client(2),
        leaf_ep(),
        HorusHeader {
            more_packets: true,
            ..header(PacketType::NewTask, 1, 0xFFFF, 500)
        },
        vec![5; 300],
    );
    let r = run(&mut sw, &first.to_bytes(), 0);
    let Some(Placement::Token { node, .. }) = r.pass.unwrap().placement else {
        panic!("{r:?}");
    };
    first.header = HorusHeader {
        pkt_type: PacketType::TaskContinuation,
        more_packets: false,
        ..first.header
    };
    let cont = first.to_bytes();
    let r = run(&mut sw, &cont, 1);
    assert_eq!(r.outputs, vec![to_worker(&cfg, &cont, node)]);
    // The last packet freed the entry.
    let r = run(&mut sw, &cont, 2);
    assert_eq!(r.pass.unwrap().drop, Some(JbsqDrop::ContinuationMiss));
    assert!(r.outputs.is_empty());
}

/// The clients and workers of the random run.
#[derive(Default)]
struct World {
    /// (pool, seq) -> the client's frame, and how many times it reached a worker.
    frames: HashMap<(u16, u16), Vec<u8>>,
    delivered: HashMap<(u16, u16), u32>,
    /// Per worker, the tasks it has and has not answered, oldest first.
    at_worker: Vec<VecDeque<(u16, u16)>>,
    /// Per pool, the tasks held, in the order they were held and in the order released.
    held: [Vec<u16>; 3],
    released: [Vec<u16>; 3],
    pending: Vec<JbsqFrameResubmit>,
}

impl World {
    fn note(&mut self, cfg: &Config, r: JbsqFrameResult) {
        let pass = r.pass.expect("every frame here is the leaf's");
        if let Some(rel) = pass.release {
            let h = rel.task.header;
            self.released[usize::from(h.pool_id)].push(h.seq_num);
        }
        for o in &r.outputs {
            // A worker's UDP port is not the Horus port: read the header where it sits.
            let h = HorusHeader::parse(&o.frame[HORUS_OFFSET..]).unwrap();
            if h.pkt_type != PacketType::NewTask {
                continue;
            }
            let key = (h.pool_id, h.seq_num);
            *self.delivered.entry(key).or_insert(0) += 1;
            // Byte for byte the client's frame, rewritten towards the worker it names.
            assert_eq!(*o, to_worker(cfg, &self.frames[&key], h.dst_id), "{key:?}");
            self.at_worker[usize::from(h.dst_id)].push_back(key);
        }
        self.pending.extend(r.resubmit);
    }
}

/// Random traffic on both pools of the example (pool 2: k = 1 and the queue advertised), tasks
/// of 0 to 260 bytes of payload (the longer ones are never held), workers answering in random
/// order and second passes fed back late: every task's frame leaves exactly once, towards a
/// worker, byte for byte the client's frame rewritten; a pool's held tasks leave in the order
/// they arrived; nothing is left held once every worker has answered.
#[test]
fn random_traffic_sends_every_task_frame_exactly_once_with_its_bytes() {
    let (mut sw, cfg) = switch();
    let mut rng = Xorshift64::new(11);
    let mut w = World {
        at_worker: vec![VecDeque::new(); 8],
        ..World::default()
    };
    let (mut t, mut seq) = (0u32, 0u16);
    for _ in 0..4_000 {
        t += 1 + (rng.next_u64() % 5) as u32;
        let dice = rng.next_u64() % 100;
        let busy: Vec<usize> = (0..8).filter(|&n| !w.at_worker[n].is_empty()).collect();
        if dice < 50 || busy.is_empty() {
            let pool = 1 + (rng.next_u64() % 2) as u16;
            seq = seq.wrapping_add(1);
            let f = task(pool, seq, (rng.next_u64() % 260) as usize);
            w.frames.insert((pool, seq), f.clone());
            let r = run(&mut sw, &f, t);
            if let Some(Placement::Held { .. }) = r.pass.unwrap().placement {
                w.held[usize::from(pool)].push(seq);
            }
            w.note(&cfg, r);
        } else if dice < 90 {
            let n = busy[(rng.next_u64() % busy.len() as u64) as usize];
            let (pool, s) = w.at_worker[n].pop_front().unwrap();
            let r = run(&mut sw, &reply(&cfg, pool, n as u16, s), t);
            w.note(&cfg, r);
        } else if !w.pending.is_empty() {
            let i = (rng.next_u64() % w.pending.len() as u64) as usize;
            let p = w.pending.swap_remove(i);
            let r = sw.process(JbsqFramePass::Resubmit(p));
            w.note(&cfg, r);
        }
    }
    // Drain: every second pass back, every worker answers until nothing is outstanding.
    loop {
        if let Some(p) = w.pending.pop() {
            let r = sw.process(JbsqFramePass::Resubmit(p));
            w.note(&cfg, r);
            continue;
        }
        let Some(n) = (0..8).find(|&n| !w.at_worker[n].is_empty()) else {
            break;
        };
        let (pool, s) = w.at_worker[n].pop_front().unwrap();
        t += 1;
        let r = run(&mut sw, &reply(&cfg, pool, n as u16, s), t);
        w.note(&cfg, r);
    }
    assert!(none_held(&sw), "nothing left held");
    let k = sw.leaf().counters();
    assert_eq!(
        k.dropped, 0,
        "the example's pools fall back to a random worker"
    );
    assert_eq!(w.frames.len(), w.delivered.len(), "every task left");
    assert!(w.delivered.values().all(|&n| n == 1), "each exactly once");
    assert_eq!(w.held, w.released, "held tasks leave in arrival order");
    assert!(
        k.held > 100 && k.released == k.held && k.fallback > 10,
        "{k:?}"
    );
    println!(
        "random: {} tasks, {} held, {} over a bound, {} second passes",
        w.frames.len(),
        k.held,
        k.fallback,
        k.resubmits
    );
}
