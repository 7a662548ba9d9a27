//! The software switch decides the same with either engine: the same frames through the
//! reference model and through the Verilated RTL (the `small` leaf), with the controller
//! registering workers and removing silent ones, give the same deliveries, frame for frame. And
//! what the switch must not deliver.

// Without the Verilated RTL (the `cosim` feature) only the model's tests run.
#![cfg_attr(not(feature = "cosim"), allow(dead_code, unused_imports))]

use std::net::Ipv4Addr;

use horus_endpoints::demo::{POOL, Topology};
use horus_endpoints::link;
use horus_endpoints::payload::{APP_WORDS, TaskPayload};
use horus_endpoints::switch::{ControllerOpts, Delivery, Driver, Engine, SoftSwitch};
use horus_host_driver::device::SIM_SEED;
use horus_host_driver::jbsq::JbsqDriver;
use horus_host_driver::{Device, Switch};
use horus_model::config::Config;
use horus_model::wire::{Endpoint, HorusFrame, HorusHeader, PacketType};

fn frame(src: Endpoint, dst: Endpoint, h: HorusHeader, payload: Vec<u8>) -> Vec<u8> {
    HorusFrame {
        src,
        dst,
        ip_id: h.seq_num,
        ttl: 64,
        dscp_ecn: 0,
        dont_fragment: true,
        udp_checksum: 0,
        header: h,
        payload,
    }
    .to_bytes()
}

fn header(t: PacketType, src: u16, qlen: u16, seq: u16, more: bool) -> HorusHeader {
    HorusHeader {
        pkt_type: t,
        more_packets: more,
        pool_id: POOL,
        src_id: src,
        dst_id: 0,
        qlen,
        seq_num: seq,
    }
}

/// The frames of a run: four workers register, then tasks, random tasks, multi-packet tasks,
/// replies and keep-alives in a seeded order.
fn traffic(t: &Topology) -> Vec<Vec<u8>> {
    let leaf = link::host(t.leaf(1));
    let client = link::host(t.client(0).unwrap());
    let workers: Vec<Endpoint> = (0..4)
        .map(|i| link::host(Ipv4Addr::from(u32::from(t.first_worker(1)) + i)))
        .collect();
    let payload = |seq: u16| {
        TaskPayload {
            client_id: 1,
            req_id: u32::from(seq),
            pkts_length: TaskPayload::length_of(1),
            run_ns: 1000,
            gen_ns: 0,
            app_data: [7; APP_WORDS],
        }
        .to_bytes()
    };
    let mut v: Vec<Vec<u8>> = workers
        .iter()
        .map(|w| {
            frame(
                *w,
                leaf,
                header(PacketType::WorkerId, 0xffff, 0, 0, false),
                vec![],
            )
        })
        .collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for seq in 0..600u16 {
        let w = next(4) as u16;
        let f = match next(12) {
            0..=4 => frame(
                client,
                leaf,
                header(PacketType::NewTask, 1, 0, seq, false),
                payload(seq),
            ),
            5 => frame(
                client,
                leaf,
                header(PacketType::NewTaskRandom, 1, 0, seq, false),
                payload(seq),
            ),
            6 | 7 => frame(
                workers[usize::from(w)],
                client,
                header(PacketType::TaskDone, w, next(4) as u16, seq, false),
                payload(seq),
            ),
            8 => frame(
                workers[usize::from(w)],
                client,
                header(PacketType::TaskDoneIdle, w, 0, seq, false),
                payload(seq),
            ),
            9 => frame(
                workers[usize::from(w)],
                leaf,
                header(PacketType::KeepAlive, w, 0, 0, false),
                vec![],
            ),
            _ => {
                v.push(frame(
                    client,
                    leaf,
                    header(PacketType::NewTask, 1, 0, seq, true),
                    payload(seq),
                ));
                frame(
                    client,
                    leaf,
                    header(PacketType::TaskContinuation, 1, 0, seq, false),
                    payload(seq),
                )
            }
        };
        v.push(f);
    }
    v
}

fn run(engine: Engine, cfg: &Config, frames: &[Vec<u8>]) -> Vec<Vec<Delivery>> {
    run_on::<Switch<Device>>(engine, cfg, frames).0
}

/// The deliveries of each step, and the engine's non-zero counters at the end.
fn run_on<D: Driver>(
    engine: Engine,
    cfg: &Config,
    frames: &[Vec<u8>],
) -> (Vec<Vec<Delivery>>, Vec<(&'static str, u32)>) {
    let ctl = ControllerOpts {
        timeout_us: 1_000_000,
        ..Default::default()
    };
    let mut s = SoftSwitch::<D>::open_with(cfg, engine, SIM_SEED, Some(ctl), 0).unwrap();
    let mut out = vec![s.pending(0).unwrap()];
    for (i, f) in frames.iter().enumerate() {
        out.push(s.frame(f.clone(), i as u64 * 7).unwrap());
    }
    // Every worker silent from here: the controller removes them all.
    out.push(s.tick(10_000_000).unwrap());
    (out, s.counters().unwrap())
}

/// The same traffic through a leaf that holds tasks (`k` = 1), on the JBSQ leaf's model and its
/// Verilated RTL: the same deliveries, step for step, and the same counters; tasks were held
/// and released. (No repair gap, as above: the engines' clocks differ.)
#[cfg(feature = "cosim")]
#[test]
fn both_engines_of_a_leaf_that_holds_tasks_deliver_the_same_frames() {
    let t = Topology::new([127, 210, 3], 1, 4).unwrap();
    let toml = t
        .leaf_toml_of(1, Some(1))
        .replace("capacity = 4\n", "capacity = 4\nidle_repair_gap_us = 0\n");
    // The rack's workers register: none in the configuration.
    let toml = toml.split("  [[pools.nodes]]").next().unwrap().to_string();
    let cfg = Config::from_toml_str(&toml).unwrap();
    assert!(cfg.pools[0].nodes.is_empty() && cfg.pools[0].params.idle_repair_gap_us == 0);
    let frames = traffic(&t);
    let (model, mc) = run_on::<JbsqDriver<Device>>(Engine::Model, &cfg, &frames);
    let (rtl, rc) = run_on::<JbsqDriver<Device>>(Engine::Rtl, &cfg, &frames);
    assert_eq!(model.len(), rtl.len());
    for (i, (m, r)) in model.iter().zip(&rtl).enumerate() {
        assert_eq!(m, r, "step {i}");
    }
    assert_eq!(mc, rc);
    let get = |n: &str| mc.iter().find(|c| c.0 == n).map_or(0, |c| c.1);
    assert!(get("JBSQ_HELD") > 10 && get("JBSQ_RELEASED") > 10, "{mc:?}");
}

#[cfg(feature = "cosim")]
#[test]
fn the_model_and_the_rtl_engines_deliver_the_same_frames() {
    let t = Topology::new([127, 210, 1], 1, 4).unwrap();
    // Repairs of lost idle messages wait for a gap of the switch's clock, which is the wall
    // clock for the model and the simulated clock for the RTL: no gap here, so that the
    // decisions depend on the frames alone.
    let toml = t
        .leaf_toml_open(1)
        .replace("capacity = 4\n", "capacity = 4\nidle_repair_gap_us = 0\n");
    let cfg = Config::from_toml_str(&toml).unwrap();
    let frames = traffic(&t);
    let model = run(Engine::Model, &cfg, &frames);
    let rtl = run(Engine::Rtl, &cfg, &frames);
    assert_eq!(model.len(), rtl.len());
    let mut tasks = 0;
    let mut acks = 0;
    for (i, (m, r)) in model.iter().zip(&rtl).enumerate() {
        assert_eq!(m, r, "step {i}");
        for d in m {
            match d {
                Delivery::Frame { frame, .. } => {
                    let f = horus_model::wire::parse_frame(frame).unwrap();
                    tasks += usize::from(f.header.pkt_type.is_task());
                }
                Delivery::Controller { .. } => acks += 1,
            }
        }
    }
    // The run exercised what it claims: tasks forwarded, four registrations and four removals
    // answered.
    assert!(tasks > 300, "{tasks} tasks forwarded");
    assert_eq!(acks, 8);
}

/// A frame the engine sends to the switch's own address would come back to it forever: it is
/// counted and dropped.
#[test]
fn a_frame_to_the_switch_itself_is_dropped_not_looped() {
    let t = Topology::new([127, 210, 2], 1, 1).unwrap();
    let cfg = Config::from_toml_str(&t.leaf_toml_open(1)).unwrap();
    let mut s = SoftSwitch::open(&cfg, Engine::Model, SIM_SEED, None, 0).unwrap();
    let leaf = link::host(t.leaf(1));
    let worker = link::host(t.first_worker(1));
    // A reply passes through towards its client, here the leaf's own address.
    let f = frame(
        worker,
        leaf,
        header(PacketType::TaskDone, 0, 0, 1, false),
        vec![],
    );
    assert_eq!(s.frame(f, 0).unwrap(), vec![]);
    assert_eq!(s.stats.looped, 1);
    // The same reply to a client is delivered.
    let client = link::host(t.client(0).unwrap());
    let f = frame(
        worker,
        client,
        header(PacketType::TaskDone, 0, 0, 1, false),
        vec![],
    );
    let d = s.frame(f, 1).unwrap();
    assert!(matches!(&d[..], [Delivery::Frame { to, .. }] if *to == link::socket_addr(&client)));
    assert_eq!(s.stats.looped, 1);
}
