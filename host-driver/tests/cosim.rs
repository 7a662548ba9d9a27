//! The driver on the real RTL: the Verilated switch of the `small` preset, programmed through
//! its AXI4-Lite port while tasks stream through it.

mod common;

use common::{frame, leaf as config};
use horus_host_driver::device::CosimDevice;
use horus_host_driver::driver::Switch;
use horus_model::sched::{ControlOp, NodeAddr};
use horus_model::wire::{self, Endpoint, HorusHeader, MacAddr, PacketType};

fn task(seq: u16) -> Vec<u8> {
    horus_cosim::traffic::horus_frame(HorusHeader {
        pkt_type: PacketType::NewTask,
        more_packets: false,
        pool_id: 1,
        src_id: 0,
        dst_id: 0,
        qlen: 0,
        seq_num: seq,
    })
}

/// The worker each forwarded task went to, in order (other frames: signals to a spine, none
/// here, and drops are not outputs).
fn workers(out: &[horus_model::sched::frame::OutFrame]) -> Vec<u16> {
    out.iter()
        .map(|o| wire::parse_frame(&o.frame).expect("a Horus frame"))
        .filter(|f| f.header.pkt_type == PacketType::NewTask)
        .map(|f| f.header.dst_id)
        .collect()
}

#[test]
fn workers_removed_and_added_while_tasks_stream_through_the_rtl() {
    let cfg = config(&[0, 1, 2, 3], 1);
    let dev = CosimDevice::fresh(&cfg, 7, "cosim").unwrap();
    let mut sw = Switch::open(dev).unwrap();
    assert_eq!(sw.ident.preset().unwrap().name, "small");
    // The hash the switch answers is that of the Verilog it was built from.
    let v = rtl_gen::outputs::switch::verilog(
        &sw.ident.preset().unwrap(),
        7,
        cfg.switch.conn_timeout_us,
    );
    assert_eq!(
        sw.ident.build_hash,
        horus_regs::identity::build_hash(&v).unwrap()
    );
    assert_ne!(sw.ident.build_hash, 0);
    let applied = sw.apply(&cfg).unwrap();
    assert_eq!(applied.ops.len(), 5);

    // A stream of tasks; worker 2 is removed while they flow.
    let mut sent = 0u16;
    for _ in 0..60 {
        sw.regs.send(task(sent));
        sent += 1;
    }
    sw.regs.run(400).unwrap();
    let mut m = sw.state(&[2]).unwrap();
    sw.control(&mut m, ControlOp::RemoveNode { pool: 1, node: 2 })
        .unwrap();
    // The removal's pass has entered: what the switch sends from here on was decided after it.
    let before = sw.regs.take_outputs();
    let in_before = sw.regs.frames_in;
    for _ in 0..60 {
        sw.regs.send(task(sent));
        sent += 1;
    }
    sw.regs.drain(100_000).unwrap();
    let after = sw.regs.take_outputs();
    let w_before = workers(&before);
    let w_after = workers(&after);
    assert!(
        w_before.contains(&2),
        "worker 2 had tasks before: {w_before:?}"
    );
    // Frames that were inside the switch when the removal entered may have been decided before
    // it; every later one after it.
    let in_pipeline = (in_before as usize).saturating_sub(w_before.len());
    assert!(
        w_after[in_pipeline..].iter().all(|&w| w != 2),
        "a task reached worker 2 after its removal: {w_after:?} ({in_pipeline} in the pipeline)"
    );
    // No task lost: every task went to a worker.
    assert_eq!(w_before.len() + w_after.len(), sent as usize);

    // Worker 2 comes back: idle, it gets the next task first.
    let add = ControlOp::AddNode {
        pool: 1,
        node: 2,
        addr: NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([2, 0, 0, 0, 0x10, 2]),
                ip: "10.0.1.2".parse().unwrap(),
                udp_port: 1234,
            },
            port: 10,
            dst_id: 2,
        },
        workers: 1,
    };
    let mut m = sw.state(&[2]).unwrap();
    sw.control(&mut m, add).unwrap();
    for _ in 0..20 {
        sw.regs.send(task(sent));
        sent += 1;
    }
    sw.regs.drain(100_000).unwrap();
    let last = workers(&sw.regs.take_outputs());
    assert_eq!(last.len(), 20);
    assert_eq!(last[0], 2, "the idle worker first: {last:?}");

    // The counters are the traffic's: every frame one first pass, the control passes counted,
    // nothing dropped.
    let c: std::collections::HashMap<_, _> = sw.counters().unwrap().into_iter().collect();
    let controls = 5 + 1 + 1;
    assert_eq!(c["CONTROL_PASSES"], controls);
    assert_eq!(
        c["PASSES"] - c["RESUBMIT_PASSES"] - c["CONTROL_PASSES"],
        u32::from(sent)
    );
    assert!(
        c.iter()
            .filter(|(k, _)| k.starts_with("DROP_"))
            .all(|(_, &v)| v == 0),
        "{c:?}"
    );

    // A changed configuration while tasks flow: only the difference is written, and every task
    // still reaches a worker of the pool (no half-configured pool).
    // New thresholds, a pool of 10 slots (grown in place) and a fifth worker.
    let mut changed = config(&[0, 1, 2, 3, 4], 2);
    changed.pools[0].capacity = 10;
    for _ in 0..40 {
        sw.regs.send(task(sent));
        sent += 1;
    }
    sw.regs.run(200).unwrap();
    let a = sw.apply(&changed).unwrap();
    assert_eq!(a.ops.len(), 2, "{:?}", a.ops);
    assert!(a.words.is_empty());
    sw.regs.drain(100_000).unwrap();
    let w = workers(&sw.regs.take_outputs());
    assert_eq!(w.len(), 40);
    assert!(w.iter().all(|&n| n <= 4), "{w:?}");
    assert!(sw.apply(&changed).unwrap().ops.is_empty());
}

#[test]
fn the_controller_registers_workers_whose_packets_cross_the_rtl() {
    use horus_host_driver::controller::{ANY_ID, Controller};
    let cfg = config(&[], 1);
    let mut sw = Switch::open(CosimDevice::fresh(&cfg, 7, "cosim").unwrap()).unwrap();
    sw.apply(&cfg).unwrap();
    let mut c = Controller::start(&mut sw, 9, 1_000_000, None, 0).unwrap();
    // Two workers announce themselves; the switch sends their packets to its control port (0).
    for k in 0..2u8 {
        let me = Endpoint {
            mac: MacAddr([2, 0, 0, 0, 0x40, k]),
            ip: format!("10.0.2.{k}").parse().unwrap(),
            udp_port: wire::HORUS_UDP_PORT,
        };
        sw.regs.send(frame(me, PacketType::WorkerId, 1, ANY_ID));
    }
    sw.regs.drain(10_000).unwrap();
    let control: Vec<_> = sw.regs.take_outputs();
    assert_eq!(control.len(), 2);
    assert!(control.iter().all(|o| o.port == 0));
    for o in control {
        let r = c.on_frame(&mut sw, &o.frame, 1).unwrap();
        assert_eq!(r[0].header.pkt_type, PacketType::WorkerIdAck);
    }
    // Tasks now reach them, at their port.
    for s in 0..4 {
        sw.regs.send(task(s));
    }
    sw.regs.drain(10_000).unwrap();
    let out = sw.regs.take_outputs();
    assert_eq!(workers(&out).len(), 4);
    // (Other outputs are the rack's idle messages to its spine, on port 2.)
    assert!(
        out.iter()
            .filter(|o| wire::parse_frame(&o.frame).unwrap().header.pkt_type == PacketType::NewTask)
            .all(|o| o.port == 9)
    );
    let mut got = workers(&out);
    got.sort();
    assert_eq!(got, [0, 0, 1, 1]);
}
