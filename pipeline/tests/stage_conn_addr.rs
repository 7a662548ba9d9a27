//! Stages 12 (`conn`) and 13 (`nodeAddr`), chained as in the pipeline, against the model's
//! semantics for them: a multi-packet task's first packet and continuations, the last packet,
//! expiry at exactly the timeout with wrapping time, collisions, forwards, a node ID reused by
//! another pool, control writes; and a long random run compared pass by pass with
//! `horus_model::sched::Scheduler`.

mod common;

use common::*;
use horus_model::config::{Role, Sizes};
use horus_model::fixed::Load;
use horus_model::rng::Xorshift64;
use horus_model::sched::state::PoolCfg;
use horus_model::sched::{
    AddrEntry, Decision, DropReason, NodeAddr, NodeRef, Packet, Scheduler, Target, conn_hash,
};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
use horus_pipeline::phv::{Phv, drop_code};
use horus_pipeline::stages::conn::ConnStage;
use horus_pipeline::stages::node_addr::NodeAddrStage;
use horus_pipeline::stages::{PassIn, PassOut, StagePort};
use rust_hdl::prelude::*;
use std::net::Ipv4Addr;

const TIMEOUT: u32 = 100;

/// `conn` then `nodeAddr`, as in the pipeline.
#[derive(LogicBlock)]
struct ConnAddr<const C: usize, const N: usize> {
    clock: Signal<In, Clock>,
    port: StagePort,
    conn: ConnStage<C>,
    addr: NodeAddrStage<N>,
}

impl<const C: usize, const N: usize> ConnAddr<C, N> {
    fn new() -> Self {
        Self::with_timeout(TIMEOUT)
    }

    fn with_timeout(timeout_us: u32) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            conn: ConnStage::new(timeout_us),
            addr: NodeAddrStage::default(),
        }
    }
}

impl<const C: usize, const N: usize> Logic for ConnAddr<C, N> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, conn, addr);
        PassIn::link(&mut self.port.up, &mut self.conn.port.up);
        PassOut::join(&mut self.conn.port.down, &mut self.addr.port.up);
        PassOut::link(&mut self.port.down, &mut self.addr.port.down);
        self.port.rb.next = self.addr.port.rb.val();
        self.port.rb_hit.next = self.addr.port.rb_hit.val();
    }
}

horus_pipeline::impl_pipeline_stage!([const C: usize, const N: usize] ConnAddr<C, N>);

type Small = ConnAddr<4, 6>;

fn run(passes: Vec<Option<Phv>>) -> Vec<Phv> {
    drive!(Small, Small::new(), passes, 3)
}

/// The model's `conn_index`.
fn conn_index(pool: u16, seq: u16, entries: u32) -> u32 {
    conn_hash(pool, seq) & (entries - 1)
}

/// The slot stage 0 leaves in the descriptor (`Phv::conn_slot`).
fn slot(pool: u64, seq: u64) -> Bits<16> {
    u64::from(conn_hash(pool as u16, seq as u16) & 0xffff).into()
}

/// A task first pass that the earlier stages placed on `node`.
fn task(pool: u64, seq: u64, node: u64, more: bool, time: u32) -> Phv {
    Phv {
        is_task: true,
        assigned: true,
        chosen: b16(node),
        pool: b16(pool),
        seq: b16(seq),
        conn_slot: slot(pool, seq),
        more,
        time: u64::from(time).into(),
        ..Default::default()
    }
}

fn cont(pool: u64, seq: u64, more: bool, time: u32) -> Phv {
    Phv {
        is_cont: true,
        pool: b16(pool),
        seq: b16(seq),
        conn_slot: slot(pool, seq),
        more,
        time: u64::from(time).into(),
        ..Default::default()
    }
}

/// A node's address, distinct per node.
fn addr_of(node: u16) -> NodeAddr {
    let n = node as u8;
    NodeAddr {
        endpoint: Endpoint {
            mac: MacAddr([0x02, 0, 0, 0xa0, n, n ^ 0x5a]),
            ip: Ipv4Addr::new(10, 1, n, 1),
            udp_port: 1000 + node,
        },
        port: n.wrapping_mul(3),
        dst_id: 0x100 + node,
    }
}

fn mac_num(mac: MacAddr) -> u64 {
    mac.0.iter().fold(0, |acc, &b| acc << 8 | u64::from(b))
}

fn add_addr(node: u16, pool: u16, a: NodeAddr) -> Phv {
    Phv {
        is_ctl_add: true,
        src: b16(node.into()),
        pool: b16(pool.into()),
        mac: mac_num(a.endpoint.mac).into(),
        ip: u64::from(u32::from(a.endpoint.ip)).into(),
        port: b16(a.endpoint.udp_port.into()),
        egress: u64::from(a.port).into(),
        out_dst: b16(a.dst_id.into()),
        ..Default::default()
    }
}

fn add(node: u16, pool: u16) -> Phv {
    add_addr(node, pool, addr_of(node))
}

fn remove(node: u16) -> Phv {
    Phv {
        is_ctl_remove: true,
        src: b16(node.into()),
        ..Default::default()
    }
}

fn miss() -> usize {
    drop_code(DropReason::ContinuationMiss) as usize
}

/// The pass went to `node` with the address `a`.
fn assert_forwarded(p: &Phv, node: u16, a: NodeAddr, what: &str) {
    assert_eq!(p.drop.index(), 0, "{what}: not dropped");
    assert!(p.fwd, "{what}: forwarded");
    assert_eq!(p.chosen.index(), usize::from(node), "{what}: node");
    assert_eq!(
        (
            p.mac.to_u64(),
            p.ip.index() as u32,
            p.port.index() as u16,
            p.egress.index() as u8,
            p.out_dst.index() as u16
        ),
        (
            mac_num(a.endpoint.mac),
            u32::from(a.endpoint.ip),
            a.endpoint.udp_port,
            a.port,
            a.dst_id
        ),
        "{what}: address"
    );
}

#[test]
fn continuations_follow_the_first_packet_until_the_last_frees_the_entry() {
    let t = 5000;
    let passes = vec![
        Some(add(7, 1)),
        Some(add(9, 1)),
        // Back to back with its node's addition, and its continuations back to back with it: each
        // sees the previous pass's write (forwarding in both tables).
        Some(task(1, 42, 7, true, t)),
        Some(cont(1, 42, true, t + 1)),
        Some(cont(1, 42, true, t + 2)),
        Some(cont(1, 42, false, t + 3)),
        Some(cont(1, 42, false, t + 4)),
        // A single-packet task goes to its node and leaves no entry.
        Some(task(1, 43, 9, false, t + 5)),
        Some(cont(1, 43, false, t + 6)),
        // Another pool's task with the same sequence number is another task.
        Some(cont(2, 42, false, t + 7)),
    ];
    let out = run(passes);
    assert_forwarded(&out[2], 7, addr_of(7), "first packet");
    assert!(out[2].ev_conn_insert && !out[2].ev_conn_collision && !out[2].ev_conn_expired);
    for (i, p) in out.iter().enumerate().take(6).skip(3) {
        assert_forwarded(p, 7, addr_of(7), &format!("continuation {i}"));
        assert!(!p.ev_conn_insert && !p.ev_conn_expired);
    }
    assert_eq!(out[6].drop.index(), miss(), "after the last packet");
    assert!(!out[6].fwd && !out[6].ev_conn_expired);
    assert_forwarded(&out[7], 9, addr_of(9), "single-packet task");
    assert!(!out[7].ev_conn_insert);
    assert_eq!(out[8].drop.index(), miss());
    assert_eq!(out[9].drop.index(), miss());
}

#[test]
fn entries_expire_at_exactly_the_timeout_with_wrapping_time() {
    let t0 = u32::MAX - 30;
    let passes = vec![
        Some(add(3, 0)),
        Some(task(0, 1, 3, true, t0)),
        Some(task(0, 2, 3, true, t0)),
        // Past the wrap, one microsecond before the timeout: a hit.
        Some(cont(0, 1, true, t0.wrapping_add(TIMEOUT - 1))),
        // At the timeout: expired, freed, dropped.
        Some(cont(0, 1, true, t0.wrapping_add(TIMEOUT))),
        Some(cont(0, 1, true, t0.wrapping_add(TIMEOUT))),
        None,
        Some(cont(0, 2, false, t0.wrapping_add(TIMEOUT + 5))),
    ];
    let out = run(passes);
    assert_forwarded(&out[3], 3, addr_of(3), "before the timeout");
    assert!(!out[3].ev_conn_expired);
    assert_eq!(out[4].drop.index(), miss());
    assert!(out[4].ev_conn_expired && !out[4].fwd);
    assert_eq!(out[5].drop.index(), miss(), "the expired entry was freed");
    assert!(!out[5].ev_conn_expired);
    assert_eq!(out[6].drop.index(), miss());
    assert!(out[6].ev_conn_expired, "the last packet of an expired task");
}

#[test]
fn expiry_is_time_less_stamp_at_least_the_timeout_for_any_timeout_and_wrap() {
    // (A configuration never has a timeout of 0; the stage still reads it as "always expired".)
    // The stage tells expiry from three subtractions side by side (whether `time - stamp`
    // wraps, and two signs); each case is the model's rule, `(time - stamp) mod 2^32 >= timeout`.
    let mut cases = 0;
    for timeout in [0, 1, 2, TIMEOUT, 1 << 31, u32::MAX - 1, u32::MAX] {
        for stamp in [0, 7, 1 << 31, u32::MAX - 5, u32::MAX] {
            let mut deltas = vec![0, 1, u32::MAX, 1 << 31, (1 << 31) - 1];
            deltas.extend([timeout.wrapping_sub(1), timeout, timeout.wrapping_add(1)]);
            for delta in deltas {
                let time = stamp.wrapping_add(delta);
                let passes = vec![
                    Some(add(3, 0)),
                    Some(task(0, 1, 3, true, stamp)),
                    Some(cont(0, 1, true, time)),
                ];
                let out = drive!(Small, Small::with_timeout(timeout), passes, 3);
                let expired = delta >= timeout;
                let what = format!("timeout {timeout}, stamp {stamp}, time {time}");
                assert_eq!(out[2].ev_conn_expired, expired, "{what}");
                if expired {
                    assert_eq!(out[2].drop.index(), miss(), "{what}");
                } else {
                    assert_forwarded(&out[2], 3, addr_of(3), &what);
                }
                cases += 1;
            }
        }
    }
    assert!(cases >= 200);
}

/// Two (pool, seq) keys that share a slot of the 16-entry table.
fn colliding() -> ((u16, u16), (u16, u16)) {
    let a = (1, 10);
    let b = (0..64u16)
        .flat_map(|p| (0..64u16).map(move |s| (p, s)))
        .find(|&k| k != a && conn_index(k.0, k.1, 16) == conn_index(a.0, a.1, 16))
        .unwrap();
    (a, b)
}

#[test]
fn a_live_foreign_entry_blocks_an_insert_and_an_expired_one_is_replaced() {
    let ((pa, sa), (pb, sb)) = colliding();
    let (pa, sa, pb, sb) = (pa.into(), sa.into(), pb.into(), sb.into());
    let t = 70_000;
    let passes = vec![
        Some(add(4, pa as u16)),
        Some(add(5, pb as u16)),
        Some(task(pa, sa, 4, true, t)),
        // One microsecond before A expires: B collides and is not inserted, but still forwarded.
        Some(task(pb, sb, 5, true, t + TIMEOUT - 1)),
        Some(cont(pb, sb, true, t + TIMEOUT - 1)),
        Some(cont(pa, sa, true, t + TIMEOUT - 2)),
        // A expired: B replaces it.
        Some(task(pb, sb, 5, true, t + TIMEOUT)),
        Some(cont(pa, sa, true, t + TIMEOUT + 1)),
        Some(cont(pb, sb, true, t + TIMEOUT + 2)),
        // The same task again, live: re-inserted (a new stamp), no collision.
        Some(task(pb, sb, 5, true, t + TIMEOUT + 3)),
        Some(cont(pb, sb, true, t + 2 * TIMEOUT + 2)),
    ];
    let out = run(passes);
    assert!(out[2].ev_conn_insert);
    assert!(out[3].ev_conn_collision && !out[3].ev_conn_insert && !out[3].ev_conn_expired);
    assert_forwarded(&out[3], 5, addr_of(5), "the colliding task");
    assert_eq!(out[4].drop.index(), miss(), "B was not inserted");
    assert_forwarded(&out[5], 4, addr_of(4), "A is still there");
    assert!(out[6].ev_conn_insert && out[6].ev_conn_expired && !out[6].ev_conn_collision);
    assert_eq!(out[7].drop.index(), miss(), "A was replaced");
    assert!(
        !out[7].ev_conn_expired,
        "a foreign key is a miss, not an expiry"
    );
    assert_forwarded(&out[8], 5, addr_of(5), "B");
    assert!(out[9].ev_conn_insert && !out[9].ev_conn_collision && !out[9].ev_conn_expired);
    assert_forwarded(&out[10], 5, addr_of(5), "B's new stamp");
}

#[test]
fn forwards_read_the_chosen_nodes_address_of_the_passs_pool() {
    let other = NodeAddr {
        dst_id: 0x7777,
        ..addr_of(30)
    };
    let passes = vec![
        Some(add(6, 1)),
        Some(task(1, 100, 6, true, 10)),
        // Node 6 leaves pool 1 and its ID is reused by pool 2: pool 1's continuation is lost.
        Some(remove(6)),
        Some(cont(1, 100, true, 11)),
        Some(add_addr(6, 2, other)),
        Some(cont(1, 100, true, 12)),
        // The new owner's tasks go to the new address; random tasks and second passes too.
        Some(task(2, 100, 6, false, 13)),
        Some(Phv {
            is_task: false,
            is_random: true,
            ..task(2, 101, 6, false, 14)
        }),
        Some(Phv {
            is_task: false,
            is_sched2: true,
            ..task(2, 102, 6, true, 15)
        }),
        Some(cont(2, 102, false, 16)),
        // A task for an unknown node (the model's `forward_to` drops it).
        Some(task(2, 103, 8, false, 17)),
        // Not placed (a first pass that resubmits), and a pass dropped upstream: nothing.
        Some(Phv {
            assigned: false,
            resubmit: true,
            ..task(2, 104, 6, true, 18)
        }),
        Some(Phv {
            drop: drop_code(DropReason::EmptyPool).into(),
            ..task(2, 105, 6, true, 19)
        }),
        Some(cont(2, 104, false, 20)),
    ];
    let out = run(passes);
    assert_forwarded(&out[1], 6, addr_of(6), "pool 1's task");
    assert_eq!(out[3].drop.index(), miss(), "removed node");
    assert!(!out[3].fwd);
    assert_eq!(out[5].drop.index(), miss(), "node 6 now belongs to pool 2");
    assert!(!out[5].fwd);
    assert_forwarded(&out[6], 6, other, "pool 2's task");
    assert_forwarded(&out[7], 6, other, "random task");
    assert_forwarded(&out[8], 6, other, "second pass");
    assert!(out[8].ev_conn_insert);
    assert_forwarded(&out[9], 6, other, "the second pass's continuation");
    assert_eq!(out[10].drop.index(), miss(), "unknown node");
    assert!(!out[10].fwd);
    assert!(!out[11].fwd && !out[11].ev_conn_insert && out[11].drop.index() == 0);
    assert!(!out[12].fwd && !out[12].ev_conn_insert);
    assert_eq!(
        out[12].drop.index(),
        drop_code(DropReason::EmptyPool) as usize
    );
    assert_eq!(out[13].drop.index(), miss(), "neither inserted");
}

/// Random task first packets, continuations and node additions and removals, compared pass by
/// pass with the model: the model's scheduler, its pools preset to one member each (a random task
/// then goes to that member), runs NEW_TASK_RANDOM and TASK_CONTINUATION packets and applies the
/// address writes to its `nodeAddr` table; the hardware sees the passes the earlier stages would
/// hand it.
#[test]
fn a_random_run_matches_the_model() {
    const C: u32 = 3;
    const NODES: u16 = 16;
    const POOLS: u16 = 4;
    let sizes = Sizes {
        pools: POOLS,
        nodes: NODES,
        conn_table: 1 << C,
    };
    let mut model = Scheduler::new(Role::Spine, 0, sizes, TIMEOUT, 1);
    for p in 0..POOLS {
        model.tables_mut().pools[usize::from(p)].cfg = PoolCfg {
            valid: true,
            base: p,
            capacity: 1,
            n: 1,
            ..Default::default()
        };
    }
    let mut g = Xorshift64::new(7);
    let mut pick = |n: u64| g.next_u64() % n;
    let mut time = u32::MAX - 400;
    let mut passes = Vec::new();
    let mut expected = Vec::new();
    // Node `i` starts in pool `i mod POOLS`.
    for node in 0..NODES {
        let pool = node % POOLS;
        model.tables_mut().nodes[usize::from(node)].addr = Some(AddrEntry {
            pool,
            addr: addr_of(node),
        });
        passes.push(Some(add(node, pool)));
        expected.push((None, (0, 0, 0)));
    }
    for _ in 0..600 {
        time = time.wrapping_add(pick(12) as u32);
        let pool = pick(u64::from(POOLS)) as u16;
        let seq = pick(3) as u16;
        let more = pick(3) != 0;
        let header = |pkt_type| HorusHeader {
            pkt_type,
            more_packets: more,
            pool_id: pool,
            src_id: 0,
            dst_id: 0,
            qlen: 0,
            seq_num: seq,
        };
        let before = model.counters().clone();
        let kind = pick(20);
        let (pass, r) = if kind < 7 {
            // Mostly a node that started in the pool.
            let node = if pick(4) == 0 {
                pick(u64::from(NODES)) as u16
            } else {
                pool + POOLS * pick(u64::from(NODES / POOLS)) as u16
            };
            model.tables_mut().members1[usize::from(pool)] = NodeRef {
                node,
                factor: Load::ONE,
            };
            let r = model.packet(Packet {
                header: header(PacketType::NewTaskRandom),
                time_us: time,
            });
            assert!(matches!(r.decision, Some(Decision::Random { node: n }) if n == node));
            // Any placing pass inserts and forwards alike.
            let mut p = task(pool.into(), seq.into(), node.into(), more, time);
            match kind % 3 {
                0 => {}
                1 => (p.is_task, p.is_random) = (false, true),
                _ => (p.is_task, p.is_sched2) = (false, true),
            }
            (p, Some(r))
        } else if kind < 16 {
            let r = model.packet(Packet {
                header: header(PacketType::TaskContinuation),
                time_us: time,
            });
            (cont(pool.into(), seq.into(), more, time), Some(r))
        } else if kind < 19 {
            // Mostly back to the node's first pool; sometimes its ID goes to another pool.
            let node = pick(u64::from(NODES)) as u16;
            let pool = if pick(3) == 0 { pool } else { node % POOLS };
            let mut a = addr_of(node);
            a.dst_id = pick(1 << 16) as u16;
            model.tables_mut().nodes[usize::from(node)].addr = Some(AddrEntry { pool, addr: a });
            (add_addr(node, pool, a), None)
        } else {
            let node = pick(u64::from(NODES)) as u16;
            model.tables_mut().nodes[usize::from(node)].addr = None;
            (remove(node), None)
        };
        let c = model.counters();
        let events = (
            c.conn_inserts - before.conn_inserts,
            c.conn_collisions - before.conn_collisions,
            c.conn_expired - before.conn_expired,
        );
        passes.push(Some(pass));
        expected.push((r, events));
    }
    let out: Vec<Phv> = drive!(ConnAddr<3, 4>, ConnAddr::new(), passes, 3);
    assert_eq!(out.len(), expected.len());
    let mut seen = [0usize; 4];
    for (i, (p, (r, events))) in out.iter().zip(&expected).enumerate() {
        assert_eq!(
            (
                u64::from(p.ev_conn_insert),
                u64::from(p.ev_conn_collision),
                u64::from(p.ev_conn_expired)
            ),
            *events,
            "pass {i}: events"
        );
        let Some(r) = r else {
            assert!(!p.fwd && p.drop.index() == 0, "pass {i}: control");
            continue;
        };
        assert_eq!(
            p.drop.index(),
            r.drop.map_or(0, |d| drop_code(d) as usize),
            "pass {i}: drop"
        );
        match r.forward {
            Some(e) => {
                let Target::Node { node, addr } = e.target else {
                    panic!("pass {i}: a task goes to a node");
                };
                assert_forwarded(p, node, addr, &format!("pass {i}"));
                seen[usize::from(p.is_cont)] += 1;
            }
            None => {
                assert!(!p.fwd, "pass {i}: not forwarded");
                seen[2 + usize::from(p.is_cont)] += 1;
            }
        }
    }
    println!("forwarded tasks, continuations; dropped tasks, continuations: {seen:?}");
    let c = model.counters();
    println!(
        "model: {} inserts, {} collisions, {} expired",
        c.conn_inserts, c.conn_collisions, c.conn_expired
    );
    assert!(
        seen.iter().all(|&n| n >= 10),
        "every outcome is exercised: {seen:?}"
    );
    assert!(c.conn_inserts >= 10 && c.conn_collisions >= 5 && c.conn_expired >= 5);
}

#[test]
fn conn_stage_verilog_is_lint_clean_and_synthesizes() {
    let r = lint_and_synth("stage_conn", ConnStage::<10>::new(2_000_000));
    println!("conn stage, 1024 entries: {r}");
    assert!(
        r.ramb36 > 0.0,
        "the connection table maps to block RAM: {r}"
    );
}

#[test]
fn node_addr_stage_verilog_is_lint_clean_and_synthesizes() {
    let r = lint_and_synth("stage_node_addr", NodeAddrStage::<12>::default());
    println!("nodeAddr stage, 4096 nodes: {r}");
    // 4,096 entries: UltraRAM (`verilog::ram_styles`).
    assert!(r.urams > 0, "the address table maps to UltraRAM: {r}");
}
