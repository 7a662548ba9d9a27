//! The driver of the leaf that holds tasks (`horus_host_driver::jbsq::JbsqDriver`) on its real
//! RTL: the Verilated `horus_leaf_jbsq`, set up from the example configuration through its
//! register map, frames streamed through it one at a time, workers removed and added again; every
//! frame out and every counter the driver reads must be the model's (`JbsqFrameSwitch`), and a
//! card changed behind the driver's back is caught before anything is removed.

use std::net::Ipv4Addr;

use horus_cosim::jbsq::frames;
use horus_host_driver::Regs;
use horus_host_driver::controller::Controller;
use horus_host_driver::device::CosimDevice;
use horus_host_driver::driver::DriverError;
use horus_host_driver::jbsq::JbsqDriver;
use horus_model::config::Config;
use horus_model::sched::NodeAddr;
use horus_model::sched::frame::{InFrame, OutFrame};
use horus_model::sched::jbsq::JbsqSizes;
use horus_model::sched::jbsq::frame::{JbsqFramePass, JbsqFrameSwitch};
use horus_model::wire::{Endpoint, MacAddr, PacketType};
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{RegFile, fields as paper};

mod common;
use common::frame;

const SEED: u64 = 7;

fn config() -> Config {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/example-leaf-jbsq.toml"
    );
    Config::from_file(std::path::Path::new(path)).unwrap()
}

/// Sends `frames` one at a time (each drained, its second passes with it) through the leaf and
/// the model; the outputs of both must agree.
fn stream(d: &mut JbsqDriver<CosimDevice>, model: &mut JbsqFrameSwitch, frames: Vec<Vec<u8>>) {
    let mut want: Vec<OutFrame> = Vec::new();
    for f in frames {
        let time_us = d.regs.now_us();
        d.regs.send(f.clone());
        d.regs.drain(20_000).unwrap();
        let mut r = model.process(JbsqFramePass::Frame(InFrame { frame: f, time_us }));
        want.extend(r.outputs);
        while let Some(back) = r.resubmit.take() {
            r = model.process(JbsqFramePass::Resubmit(back));
            want.extend(std::mem::take(&mut r.outputs));
        }
    }
    let got = d.regs.take_outputs();
    assert_eq!(got.len(), want.len(), "frames out");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i}");
    }
}

fn counters_are_the_models(d: &mut JbsqDriver<CosimDevice>, model: &JbsqFrameSwitch) {
    let got = d.counters().unwrap();
    let want = model.leaf().counters().named();
    for ((name, v), (model_name, m)) in got.iter().zip(want.iter()) {
        assert_eq!(*name, format!("JBSQ_{}", model_name.to_uppercase()));
        assert_eq!(u64::from(*v), m & 0xffff_ffff, "{name}");
    }
    assert_eq!(got.last().unwrap(), &("BOARD_DROPS", 0));
}

#[test]
fn the_driver_sets_the_jbsq_leaf_up_streams_and_changes_workers_as_the_model_does() {
    let cfg = config();
    let dev = CosimDevice::fresh(&cfg, SEED, "cosim").unwrap();
    let mut d = JbsqDriver::open(dev).unwrap();
    assert_eq!(d.ident.sizes, JbsqSizes::DEFAULT);
    let p = horus_regs::presets::jbsq_preset("default").unwrap();
    let v = rtl_gen::outputs::switch::jbsq_verilog(&p, SEED, cfg.switch.conn_timeout_us);
    assert_eq!(
        d.ident.build_hash,
        horus_regs::identity::build_hash(&v).unwrap()
    );
    // A paper leaf's configuration does not fit it.
    let paper_leaf = Config::from_file(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/example-leaf.toml"
    )))
    .unwrap();
    assert!(matches!(
        d.apply(&paper_leaf),
        Err(DriverError::Mismatch(_))
    ));

    // Two pools, five workers and their free places: 17 passes.
    assert_eq!(d.apply(&cfg).unwrap(), 17);
    let (mut model, setup) = JbsqFrameSwitch::from_config(&cfg, SEED).unwrap();
    assert_eq!(
        format!("{:?}", d.mirror().tables()),
        format!("{:?}", model.leaf().tables()),
        "the driver's mirror is the model set up from the file"
    );
    d.regs.drain(20_000).unwrap();
    assert_eq!(d.regs.take_outputs(), setup, "the set-up's messages");
    stream(&mut d, &mut model, frames(&cfg, 5, 300));
    counters_are_the_models(&mut d, &model);
    // Set up twice: the card is not freshly loaded (its switch registers are written); nothing
    // is written. The mirror, on its own, refuses a pool that has workers too.
    let e = d.apply(&cfg).unwrap_err().to_string();
    assert!(e.contains("set up already"), "{e}");
    let mut again = d.mirror().clone();
    let pc = again.tables().pool_cfg[1].unwrap();
    assert!(jbsq_map::configure_pool(&mut again, 1, pc.cfg).is_err());

    // A worker removed (its slot and the last member read and checked first) and added again
    // with its own bound, while its pool holds tasks.
    let w1 = &cfg.pools[0].nodes[1];
    d.remove_node(1, w1.id).unwrap();
    model.remove_node(1, w1.id).unwrap();
    d.add_node(1, w1.id, Some(3), NodeAddr::of(w1)).unwrap();
    let added = model
        .add_node(1, w1.id, Some(3), 0, NodeAddr::of(w1))
        .unwrap();
    d.regs.drain(20_000).unwrap();
    assert_eq!(d.regs.take_outputs(), added);
    stream(&mut d, &mut model, frames(&cfg, 6, 300));
    counters_are_the_models(&mut d, &model);
    assert_eq!(
        format!("{:?}", d.mirror().tables().pool_cfg),
        format!("{:?}", model.leaf().tables().pool_cfg)
    );
}

/// Another host's staged pass: its words, `CTL_GO`, the pass taken.
fn stage(regs: &mut dyn Regs, r: &RegFile) {
    for w in jbsq_map::control_words() {
        regs.write(4 * w as u32, r.words[w]).unwrap();
    }
    regs.write(paper::CTL_GO.byte_address() as u32, 1).unwrap();
    assert!(
        regs.wait(paper::CTL_GO.byte_address() as u32, 1, 0, 1000)
            .unwrap()
    );
}

#[test]
fn a_card_changed_behind_the_drivers_back_is_caught_before_a_removal() {
    let cfg = config();
    let dev = CosimDevice::fresh(&cfg, SEED, "cosim").unwrap();
    let mut d = JbsqDriver::open(dev).unwrap();
    d.apply(&cfg).unwrap();
    // Another host removes node 3 of pool 2: the card's last member of the pool moves.
    let mut other = d.mirror().clone();
    let [read, rm] = jbsq_map::remove_node(&mut other, 2, 3).unwrap();
    stage(&mut d.regs, &read);
    stage(&mut d.regs, &rm);
    // The driver, not knowing, removes node 4: its read shows the card's state differs.
    let e = d.remove_node(2, 4).unwrap_err();
    assert!(matches!(e, DriverError::Inconsistent(_)), "{e}");
    // Node 4 was not removed: its member slot reads back as the other host left it.
    stage(&mut d.regs, &jbsq_map::read_node(2, 4));
    assert!(
        d.regs
            .wait(fields::RB_VALID.byte_address() as u32, 1, 1, 1000)
            .unwrap()
    );
    let rb = d.regs.read(fields::RB_SLOT.byte_address() as u32).unwrap();
    assert_eq!(
        (rb & 0xffff, rb >> 16),
        (0, 4),
        "node 4 moved into slot 0 and is the pool's last member"
    );
    // The mirror was left as it was: the driver still believes node 3 a member.
    let t = d.mirror().tables();
    assert!(t.node_cfg[3].active);
}

/// The device shared by two drivers, as two host processes share a card.
#[derive(Clone)]
struct Shared(std::rc::Rc<std::cell::RefCell<CosimDevice>>);

impl Regs for Shared {
    fn read(&mut self, addr: u32) -> Result<u32, horus_host_driver::AccessError> {
        self.0.borrow_mut().read(addr)
    }
    fn write(&mut self, addr: u32, value: u32) -> Result<(), horus_host_driver::AccessError> {
        self.0.borrow_mut().write(addr, value)
    }
    fn describe(&self) -> String {
        "a shared cosim device".into()
    }
}

/// The example configuration with room in pool 1 for registered workers.
fn roomy() -> Config {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/example-leaf-jbsq.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replacen("spine_node = 4\n", "spine_node = 4\ncapacity = 8\n", 1);
    assert!(text.contains("capacity = 8"));
    Config::from_toml_str(&text).unwrap()
}

fn worker(k: u8) -> Endpoint {
    Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0x40, k]),
        ip: Ipv4Addr::new(10, 0, 4, 100 + k),
        udp_port: 6000,
    }
}

fn sent(d: &Shared, model: &mut JbsqFrameSwitch, frames: Vec<Vec<u8>>) {
    let mut dev = d.0.borrow_mut();
    let mut want: Vec<OutFrame> = Vec::new();
    for f in frames {
        let time_us = dev.now_us();
        dev.send(f.clone());
        dev.drain(20_000).unwrap();
        let mut r = model.process(JbsqFramePass::Frame(InFrame { frame: f, time_us }));
        want.extend(r.outputs);
        while let Some(back) = r.resubmit.take() {
            r = model.process(JbsqFramePass::Resubmit(back));
            want.extend(std::mem::take(&mut r.outputs));
        }
    }
    let got = dev.take_outputs();
    assert_eq!(got.len(), want.len(), "frames out");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i}");
    }
}

/// `horusctl serve`'s controller on the Verilated JBSQ leaf: a worker registers, falls silent,
/// is removed and added back at its keep-alive, while a second driver (another `horusctl`)
/// sharing the card and the state file removes a worker of the same pool; each driver reads the
/// other's change from the file before it plans, the card's frames stay the model's (which ran
/// the same operations), and a driver opening the file reads every member back from the card.
#[test]
fn the_controller_runs_a_jbsq_leaf_and_drivers_share_it_through_the_state_file() {
    let cfg = roomy();
    let dev = Shared(std::rc::Rc::new(std::cell::RefCell::new(
        CosimDevice::fresh(&cfg, SEED, "cosim").unwrap(),
    )));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("leaf.json");
    let mut a = JbsqDriver::open(dev.clone())
        .unwrap()
        .with_state_file(&file)
        .unwrap();
    assert_eq!(a.apply(&cfg).unwrap(), 17);
    assert!(file.exists());
    // `horusctl dump`'s lines: each pool as laid out, each member with its slot and address.
    let dump = a.dump();
    assert!(
        dump.contains("pool 1: node slots [0, 8), 3 member(s), k 2, advertise places, fallback random")
            && dump.contains(
                "  node 2: slot 2, k 4, generation 0, 02:00:00:04:00:12 10.0.4.12 udp 5000 port 10 dst_id 2"
            )
            && dump.contains("pool 2: node slots [8, 10), 2 member(s), k 1, advertise queue (room 4)"),
        "{dump}"
    );
    let (mut model, setup) = JbsqFrameSwitch::from_config(&cfg, SEED).unwrap();
    {
        let mut dev = dev.0.borrow_mut();
        dev.drain(20_000).unwrap();
        assert_eq!(dev.take_outputs(), setup);
    }
    // A driver without the file cannot mirror a leaf set up: refused.
    let e = JbsqDriver::open(dev.clone())
        .unwrap()
        .with_state_file(&dir.path().join("other.json"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("no such state file") && e.contains("set up already"),
        "{e}"
    );

    // A worker registers in pool 1 asking for node 10.
    let mut c = Controller::start(&mut a, 8, 1000, None, 0).unwrap();
    let r = c
        .on_frame(&mut a, &frame(worker(1), PacketType::WorkerId, 1, 10), 10)
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].header.pkt_type, r[0].header.dst_id, r[0].header.src_id),
        (PacketType::WorkerIdAck, 10, cfg.switch.id)
    );
    let addr10 = NodeAddr {
        endpoint: worker(1),
        port: 8,
        dst_id: 10,
    };
    let added = model.add_node(1, 10, None, 0, addr10).unwrap();
    {
        let mut dev = dev.0.borrow_mut();
        dev.drain(20_000).unwrap();
        assert_eq!(dev.take_outputs(), added);
    }
    sent(&dev, &mut model, frames(&cfg, 11, 200));

    // Another driver opens the file: every member's slot read from the card first.
    let mut b = JbsqDriver::open(dev.clone())
        .unwrap()
        .with_state_file(&file)
        .unwrap();
    assert!(b.mirror().tables().members == a.mirror().tables().members);
    // It removes node 0 of pool 1: node 10, the pool's last member, moves into slot 0.
    b.remove_node(1, 0).unwrap();
    model.remove_node(1, 0).unwrap();
    // Node 10 falls silent: the controller removes it, its slot as the other driver left it.
    let r = c.tick(&mut a, 1011).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].header.pkt_type, r[0].header.dst_id),
        (PacketType::RemoveAck, 10)
    );
    model.remove_node(1, 10).unwrap();
    assert_eq!(c.counts.removals, 1);
    // It speaks again: added back under its ID.
    c.on_frame(
        &mut a,
        &frame(worker(1), PacketType::KeepAlive, 1, 10),
        1500,
    )
    .unwrap();
    assert_eq!(c.counts.readds, 1);
    let added = model.add_node(1, 10, None, 0, addr10).unwrap();
    {
        let mut dev = dev.0.borrow_mut();
        dev.drain(20_000).unwrap();
        assert_eq!(dev.take_outputs(), added);
    }
    sent(&dev, &mut model, frames(&cfg, 12, 300));
    // The other driver reads the controller's changes before its next operation.
    b.add_node(1, 0, Some(3), NodeAddr::of(&cfg.pools[0].nodes[0]))
        .unwrap();
    let added = model
        .add_node(1, 0, Some(3), 0, NodeAddr::of(&cfg.pools[0].nodes[0]))
        .unwrap();
    {
        let mut dev = dev.0.borrow_mut();
        dev.drain(20_000).unwrap();
        assert_eq!(dev.take_outputs(), added);
    }
    sent(&dev, &mut model, frames(&cfg, 13, 300));
    let m = model.leaf().tables();
    let t = b.mirror().tables();
    assert!(
        t.pool_cfg == m.pool_cfg,
        "the mirror's pools are the model's"
    );
    assert!(
        t.node_cfg == m.node_cfg,
        "the mirror's nodes are the model's"
    );
    assert!(
        t.members == m.members,
        "the mirror's members are the model's"
    );

    // A file whose members are not the card's is refused at open, naming the card's answer.
    let text = std::fs::read_to_string(&file).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let members = v["members"].as_array_mut().unwrap();
    members.swap(0, 1);
    let forged = dir.path().join("forged.json");
    std::fs::write(&forged, v.to_string()).unwrap();
    let e = JbsqDriver::open(dev.clone())
        .unwrap()
        .with_state_file(&forged)
        .err()
        .unwrap();
    assert!(matches!(e, DriverError::Inconsistent(_)), "{e}");
    // The file against a freshly loaded card: refused.
    let fresh = CosimDevice::fresh(&cfg, SEED, "cosim").unwrap();
    let e = JbsqDriver::open(fresh)
        .unwrap()
        .with_state_file(&file)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("freshly loaded"), "{e}");
}

/// The `model:` device of a JBSQ leaf (`JbsqModelDevice`: the model behind the register map,
/// decoding the staged passes) answers as the Verilated leaf: the same driver's set-up, frames,
/// a removal and an addition with the worker's own bound give the same frames out, the same
/// counters and the same node reads.
#[test]
fn the_model_device_answers_as_the_verilated_leaf() {
    use horus_host_driver::device::JbsqModelDevice;
    let cfg = config();
    let mut rtl = JbsqDriver::open(CosimDevice::fresh(&cfg, SEED, "cosim").unwrap()).unwrap();
    let mut model = JbsqDriver::open(JbsqModelDevice::fresh(&cfg, SEED, "model").unwrap()).unwrap();
    assert_eq!(rtl.ident.sizes, model.ident.sizes);
    assert_eq!(rtl.apply(&cfg).unwrap(), model.apply(&cfg).unwrap());
    let same = |rtl: &mut JbsqDriver<CosimDevice>, model: &mut JbsqDriver<JbsqModelDevice>| {
        rtl.regs.drain(20_000).unwrap();
        let (r, m) = (rtl.regs.take_outputs(), model.regs.take_outputs());
        assert_eq!(r.len(), m.len(), "frames out");
        for (i, (a, b)) in r.iter().zip(&m).enumerate() {
            assert_eq!(a, b, "frame {i}");
        }
        assert_eq!(rtl.counters().unwrap(), model.counters().unwrap());
    };
    let send = |rtl: &mut JbsqDriver<CosimDevice>,
                model: &mut JbsqDriver<JbsqModelDevice>,
                frames: Vec<Vec<u8>>| {
        for f in frames {
            let t = rtl.regs.now_us();
            rtl.regs.send(f.clone());
            rtl.regs.drain(20_000).unwrap();
            model.regs.frame(f, t);
        }
    };
    same(&mut rtl, &mut model);
    send(&mut rtl, &mut model, frames(&cfg, 21, 400));
    same(&mut rtl, &mut model);
    let w1 = &cfg.pools[0].nodes[1];
    rtl.remove_node(1, w1.id).unwrap();
    model.remove_node(1, w1.id).unwrap();
    send(&mut rtl, &mut model, frames(&cfg, 22, 200));
    rtl.add_node(1, w1.id, Some(3), NodeAddr::of(w1)).unwrap();
    model.add_node(1, w1.id, Some(3), NodeAddr::of(w1)).unwrap();
    same(&mut rtl, &mut model);
    send(&mut rtl, &mut model, frames(&cfg, 23, 400));
    same(&mut rtl, &mut model);
    // Bounds changed live (decision 36): a worker's, raised and lowered, and its pool's.
    let w0 = cfg.pools[0].nodes[0].id;
    for (node, k) in [(w0, 4), (w1.id, 1)] {
        rtl.set_bound(1, node, k).unwrap();
        model.set_bound(1, node, k).unwrap();
        send(&mut rtl, &mut model, frames(&cfg, 24 + u64::from(k), 200));
        same(&mut rtl, &mut model);
    }
    let now = model.mirror().tables().pool_cfg[1].unwrap().cfg;
    let s = horus_model::sched::jbsq::PoolSettings {
        k: 3,
        hold_us: 15,
        ..horus_model::sched::jbsq::PoolSettings::of(&now)
    };
    rtl.set_pool_params(1, s).unwrap();
    model.set_pool_params(1, s).unwrap();
    rtl.remove_node(1, w0).unwrap();
    model.remove_node(1, w0).unwrap();
    let a0 = NodeAddr::of(&cfg.pools[0].nodes[0]);
    rtl.add_node(1, w0, None, a0).unwrap();
    model.add_node(1, w0, None, a0).unwrap();
    send(&mut rtl, &mut model, frames(&cfg, 30, 300));
    same(&mut rtl, &mut model);
    let m = model.regs.switch().leaf().tables();
    assert_eq!(
        (
            m.node_cfg[usize::from(w0)].k,
            m.node_cfg[usize::from(w1.id)].k
        ),
        (3, 1),
        "the pool's new bound for the worker added again, the other's own"
    );
    assert!(m.node_cfg == model.mirror().tables().node_cfg);
    assert!(m.pool_cfg == model.mirror().tables().pool_cfg);
    // Pool 1's buffer region moved live (decision 37). Closed to holding, its queue drains
    // through the workers' replies (tasks with no place take the fallback meanwhile), the depth
    // read off both leaves the same at every step; then the move, in place, to half its slots.
    let open = horus_model::sched::jbsq::PoolSettings::of(&m.pool_cfg[1].unwrap().cfg);
    let (was_base, was_slots) = (
        m.pool_cfg[1].unwrap().cfg.queue_base,
        m.pool_cfg[1].unwrap().cfg.queue_slots,
    );
    let closed = horus_model::sched::jbsq::PoolSettings {
        holds: false,
        ..open
    };
    for round in 0..40 {
        if rtl.held_depth(1).unwrap() > 0 {
            break;
        }
        send(&mut rtl, &mut model, frames(&cfg, 200 + round, 20));
    }
    same(&mut rtl, &mut model);
    rtl.set_pool_params(1, closed).unwrap();
    model.set_pool_params(1, closed).unwrap();
    let mut depths = Vec::new();
    for round in 0..40 {
        let d = (rtl.held_depth(1).unwrap(), model.held_depth(1).unwrap());
        assert_eq!(d.0, d.1, "round {round}");
        depths.push(d.0);
        if d.0 == 0 {
            break;
        }
        send(&mut rtl, &mut model, frames(&cfg, 40 + round, 40));
        same(&mut rtl, &mut model);
    }
    println!("pool 1's held tasks while it drains: {depths:?}");
    assert!(
        depths[0] > 0 && depths.last() == Some(&0),
        "held, then drained: {depths:?}"
    );
    let wait = std::time::Duration::from_millis(100);
    assert_eq!(
        rtl.move_buffer(1, was_base, was_slots / 2, wait).unwrap(),
        1
    );
    assert_eq!(
        model.move_buffer(1, was_base, was_slots / 2, wait).unwrap(),
        1
    );
    send(&mut rtl, &mut model, frames(&cfg, 90, 300));
    same(&mut rtl, &mut model);
    let m = model.regs.switch().leaf().tables();
    assert!(m.pool_cfg == model.mirror().tables().pool_cfg);
    let pc = m.pool_cfg[1].unwrap();
    assert_eq!(
        (pc.cfg.queue_base, pc.cfg.queue_slots, pc.holds),
        (was_base, was_slots / 2, true)
    );
    // A move whose queue does not drain in time: refused, the region kept, the pool holding
    // again, on both.
    for round in 0..40 {
        if rtl.held_depth(1).unwrap() > 0 {
            break;
        }
        send(&mut rtl, &mut model, frames(&cfg, 100 + round, 20));
    }
    let held = rtl.held_depth(1).unwrap();
    assert!(held > 0, "the pool holds tasks");
    for e in [
        rtl.move_buffer(1, was_base, was_slots, std::time::Duration::ZERO)
            .unwrap_err(),
        model
            .move_buffer(1, was_base, was_slots, std::time::Duration::ZERO)
            .unwrap_err(),
    ] {
        assert!(
            e.to_string()
                .contains(&format!("still holds {held} task(s)")),
            "{e}"
        );
    }
    let m = model.regs.switch().leaf().tables();
    assert!(m.pool_cfg == model.mirror().tables().pool_cfg);
    assert_eq!(m.pool_cfg[1].unwrap(), pc);
    send(&mut rtl, &mut model, frames(&cfg, 150, 200));
    same(&mut rtl, &mut model);
    // A node read through the map: the same slot and last member.
    for d in [&mut rtl.regs as &mut dyn Regs, &mut model.regs] {
        stage_on(d, &jbsq_map::read_node(1, w1.id));
    }
    let rb = |d: &mut dyn Regs| d.read(fields::RB_SLOT.byte_address() as u32).unwrap();
    assert_eq!(rb(&mut rtl.regs), rb(&mut model.regs));
    // A removal carrying a slot that is not the leaf's: the model device refuses it.
    let mut rm = jbsq_map::remove_node(&mut model.mirror().clone(), 1, w1.id).unwrap()[1].clone();
    rm.set(&fields::CTL_SLOT, 7);
    for w in jbsq_map::control_words() {
        model.regs.write(4 * w as u32, rm.words[w]).unwrap();
    }
    let e = model
        .regs
        .write(paper::CTL_GO.byte_address() as u32, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("slot 7"), "{e}");
}

/// [`stage`], a node read, until its result is valid.
fn stage_on(regs: &mut dyn Regs, r: &RegFile) {
    stage(regs, r);
    assert!(
        regs.wait(fields::RB_VALID.byte_address() as u32, 1, 1, 1000)
            .unwrap()
    );
}
