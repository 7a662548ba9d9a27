//! The JBSQ leaf's AXI4-Lite port and top level (`horus_pipeline::jbsq::axil`, `::top`): every
//! operation a host stages through the register map (`horus_regs::jbsq_map`, from its mirror of
//! the leaf) comes out of the port as the descriptor the test driver builds from the model (the
//! descriptor the chain's and the core's tests hold the stages to), field for field; the top level
//! is lint clean at the preset's sizes (its depth and area: `rtl-gen/tests/top_targets.rs`). The whole leaf, set up through
//! its registers, against the model's frame switch frame for frame, in rust-hdl and in Verilator:
//! `cosim/tests/jbsq.rs`.

mod jbsq_common;

use std::sync::{Arc, Mutex};

use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{JbsqLeaf, JbsqSizes};
use horus_model::wire::Endpoint;
use horus_pipeline::jbsq::axil::{JbsqAxiLiteRegs, JbsqMapSizes};
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::jbsq::top::JbsqTop;
use horus_regs::jbsq_map;
use horus_regs::regmap::{RegFile, fields as paper};
use jbsq_common::driver::Driver;
use rust_hdl::prelude::*;

const SEED: u64 = 7;

/// The preset's sizes: 64 pools, 4,096 nodes, 65,536 ring entries, 4,096 buffer slots, 1,024
/// connection entries, a frame store of four beats a slot.
type Top = JbsqTop<6, 12, 16, 12, 10, 14>;

/// The port alone: `passes` (each staged as the host does, then started) must come out of `ctl`
/// as the descriptors given, and leave when the core takes them.
fn port_passes(passes: Vec<(RegFile, JbsqPhv)>) -> Vec<String> {
    let sizes = JbsqMapSizes {
        pool_bits: 2,
        node_bits: 6,
        conn_bits: 6,
        ring_bits: 10,
        buffer_bits: 6,
        slot_bytes: 256,
    };
    let mut uut = JbsqAxiLiteRegs::new(sizes, 1000);
    uut.connect_all();
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = failures.clone();
    let n = passes.len();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<JbsqAxiLiteRegs>| x.clk.next = !x.clk.val());
    sim.add_testbench(move |mut sim: Sim<JbsqAxiLiteRegs>| {
        let mut x = sim.init()?;
        x.s_axil.bready.next = true;
        x.s_axil.wstrb.next = 0xf.into();
        wait_clock_true!(sim, clk, x);
        for (i, (r, want)) in passes.iter().enumerate() {
            let words = jbsq_map::control_words().map(|w| (w, r.words[w]));
            for (word, data) in words.chain([(paper::CTL_GO.word, 1)]) {
                x.s_axil.awaddr.next = (4 * word as u64).into();
                x.s_axil.wdata.next = u64::from(data).into();
                x.s_axil.awvalid.next = true;
                x.s_axil.wvalid.next = true;
                wait_clock_cycle!(sim, clk, x);
                x.s_axil.awvalid.next = false;
                x.s_axil.wvalid.next = false;
                if x.s_axil.bresp.val().index() != 0 {
                    sink.lock()
                        .unwrap()
                        .push(format!("pass {i}: word {word} refused"));
                }
                wait_clock_cycle!(sim, clk, x);
            }
            let got = x.ctl.val();
            if !x.ctl_valid.val() || got != *want {
                sink.lock().unwrap().push(format!(
                    "pass {i}: valid {}\n got {got:?}\nwant {want:?}",
                    x.ctl_valid.val()
                ));
            }
            x.ctl_ready.next = true;
            wait_clock_cycle!(sim, clk, x);
            x.ctl_ready.next = false;
            wait_clock_cycle!(sim, clk, x);
            if x.ctl_valid.val() {
                sink.lock()
                    .unwrap()
                    .push(format!("pass {i}: still staged once taken"));
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 100 * (n as u64 + 10) * 20).unwrap();
    failures.lock().unwrap().clone()
}

#[test]
fn every_staged_field_lands_in_the_pass_the_model_driver_builds() {
    use horus_model::fixed::Load;
    use horus_model::sched::SpineRef;
    use horus_model::sched::jbsq::{Advertise, Fallback, JbsqPool, PoolSettings};
    use horus_model::sched::state::Params;
    use horus_model::wire::MacAddr;
    let sizes = JbsqSizes::SMALL;
    // The test driver builds each pass's descriptor from the model (the chain's and the core's
    // tests hold the stages to those); the host stages the same operation through the map.
    let mut d = Driver::new(sizes, 3);
    let mut mirror = JbsqLeaf::new(sizes, 3);
    let mut staged: Vec<RegFile> = Vec::new();
    // Every field of a pool's configuration other than its default.
    let cfg = JbsqPool {
        base: 9,
        capacity: 7,
        k: 3,
        ring_base: 300,
        ring_slots: 21,
        queue_base: 17,
        queue_slots: 13,
        fallback: Fallback::Drop,
        advertise: Advertise::Queue { room: 5 },
        hold_us: 77,
        params: Params {
            link_at: 3,
            unlink_at: 2,
            report_delta: Load(0x0001_8000),
            repair_gap_us: 41,
        },
        spine: Some(SpineRef {
            id: 0x1234,
            node: 0x0567,
        }),
    };
    d.configure(2, cfg);
    staged.push(jbsq_map::configure_pool(&mut mirror, 2, cfg).unwrap());
    let other = JbsqPool {
        base: 20,
        capacity: 4,
        k: 1,
        ring_base: 0,
        ring_slots: 8,
        queue_base: 0,
        queue_slots: 4,
        fallback: Fallback::Random,
        advertise: Advertise::Places,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: None,
    };
    d.configure(1, other);
    staged.push(jbsq_map::configure_pool(&mut mirror, 1, other).unwrap());
    let addr = |node: u16| NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([0x02, 0xa1, 0xb2, 0xc3, 0xd4, node as u8]),
            ip: std::net::Ipv4Addr::new(10, 200, 30, node as u8),
            udp_port: 0xbeef,
        },
        port: 0xc0 | node as u8,
        dst_id: 0x7700 | node,
    };
    for (node, k, tasks) in [(40, None, 0), (41, Some(5), 2), (42, Some(1), 0)] {
        d.add_at(2, node, k, tasks, addr(node));
        staged.extend(jbsq_map::add_node(&mut mirror, 2, node, k, tasks, addr(node)).unwrap());
    }
    d.add_at(1, 7, None, 0, addr(7));
    staged.extend(jbsq_map::add_node(&mut mirror, 1, 7, None, 0, addr(7)).unwrap());
    d.remove(2, 40);
    staged.extend(jbsq_map::remove_node(&mut mirror, 2, 40).unwrap());
    // Node 40 again, a generation on.
    d.add_at(2, 40, Some(2), 0, addr(40));
    staged.extend(jbsq_map::add_node(&mut mirror, 2, 40, Some(2), 0, addr(40)).unwrap());
    // Node 41's new bound and its places, the pool's new bound (decision 36).
    d.set_bound(2, 41, 4);
    staged.extend(jbsq_map::set_bound(&mut mirror, 2, 41, 4).unwrap());
    let settings = PoolSettings {
        k: 0xab,
        hold_us: 0x1234,
        params: Params {
            link_at: 0x0f0e,
            unlink_at: 0x0d0c,
            report_delta: Load(0x0b0a_0908),
            repair_gap_us: 0x0706,
        },
        holds: false,
    };
    d.set_pool_params(2, settings);
    staged.push(jbsq_map::set_pool_params(&mut mirror, 2, settings).unwrap());
    // Pool 2's buffer region moved (decision 37): base and size other than its configuration's.
    d.move_buffer(2, 35, 27);
    staged.push(jbsq_map::move_buffer(&mut mirror, 2, 35, 27).unwrap());
    assert_eq!(d.steps.len(), staged.len(), "the passes of each operation");
    let passes: Vec<(RegFile, JbsqPhv)> = staged
        .into_iter()
        .zip(&d.steps)
        .map(|(r, s)| {
            (
                r,
                JbsqPhv {
                    live: false,
                    ..s.pass
                },
            )
        })
        .collect();
    let kinds = |f: fn(&JbsqPhv) -> bool| passes.iter().filter(|(_, p)| f(p)).count();
    assert_eq!(
        [
            kinds(|p| p.is_ctl_pool),
            kinds(|p| p.is_ctl_add),
            kinds(|p| p.is_ctl_place),
            kinds(|p| p.is_ctl_read),
            kinds(|p| p.is_ctl_remove),
            kinds(|p| p.is_ctl_bound),
            kinds(|p| p.is_ctl_pool_params),
            kinds(|p| p.is_ctl_move),
        ],
        [2, 5, 3 + 3 + 1 + 1 + 2 + 4, 1, 1, 1, 1, 1]
    );
    let f = port_passes(passes);
    assert!(f.is_empty(), "{}", f.join("\n"));
}

/// Its depth and area, on the Verilog `rtl-gen` emits: `rtl-gen/tests/top_targets.rs`.
#[test]
fn the_jbsq_leaf_is_lint_clean_at_the_preset_sizes() {
    jbsq_common::lint(
        "jbsq_top",
        Top::new(
            JbsqSizes::DEFAULT,
            SEED,
            horus_model::config::DEFAULT_CONN_TIMEOUT_US,
        ),
    );
}
