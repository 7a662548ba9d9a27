//! Builders shared by the scheduler tests: small leaf and spine configurations, headers, and a
//! driver that feeds resubmitted passes back.
#![allow(dead_code)]

use horus_model::config::Config;
use horus_model::sched::{ControlOp, Emit, Packet, PassResult, Resubmit, Scheduler};
use horus_model::wire::{HorusHeader, PacketType};

pub const LEAF_ID: u16 = 3;
pub const SPINE_ID: u16 = 1;
/// The leaf's node ID at the spine, for pool `p`.
pub fn spine_node(p: u16) -> u16 {
    100 + p
}

/// A leaf with one pool per entry of `pools` (the number of workers), worker IDs numbered from 0
/// across pools, each pool with `spare` extra slots, linked to spine 1.
pub fn leaf_config(
    pools: &[u16],
    spare: u16,
    link_at: u16,
    unlink_at: u16,
    report_delta: f64,
) -> Config {
    let mut s = format!(
        "[switch]\nrole = \"leaf\"\nid = {LEAF_ID}\nmac = \"02:00:00:00:00:03\"\nip = \"10.0.0.3\"\npass_through_port = 1\ncontrol_port = 0\nconn_timeout_us = 1000\n\
         [sizes]\npools = 8\nnodes = 64\nconn_table = 16\n\
         [defaults]\nidle_link_at = {link_at}\nidle_unlink_at = {unlink_at}\nreport_delta = {report_delta:?}\n\
         [[spines]]\nid = {SPINE_ID}\nmac = \"02:00:00:00:01:01\"\nip = \"10.0.1.1\"\nudp_port = 1234\nport = 2\n"
    );
    let mut id = 0u16;
    for (p, &n) in pools.iter().enumerate() {
        s += &format!(
            "[[pools]]\nid = {p}\ncapacity = {}\nspine = {SPINE_ID}\nspine_node = {}\n",
            n + spare,
            spine_node(p as u16)
        );
        for _ in 0..n {
            s += &format!(
                "[[pools.nodes]]\nid = {id}\nmac = \"02:00:00:03:00:{id:02x}\"\nip = \"10.0.3.{id}\"\nudp_port = 1234\nport = {}\n",
                8 + id % 8
            );
            id += 1;
        }
    }
    Config::from_toml_str(&s).expect("test leaf config is valid")
}

/// A spine with one pool per entry of `pools` (the worker counts of its racks), node IDs numbered
/// from 0 across pools; node `i` is leaf `10 + i`.
pub fn spine_config(pools: &[&[u16]], spare: u16) -> Config {
    let mut s = format!(
        "[switch]\nrole = \"spine\"\nid = {SPINE_ID}\nmac = \"02:00:00:00:01:01\"\nip = \"10.0.1.1\"\npass_through_port = 1\ncontrol_port = 0\nconn_timeout_us = 1000\n\
         [sizes]\npools = 8\nnodes = 64\nconn_table = 16\n"
    );
    let mut id = 0u16;
    for (p, racks) in pools.iter().enumerate() {
        s += &format!(
            "[[pools]]\nid = {p}\ncapacity = {}\n",
            racks.len() as u16 + spare
        );
        for &w in racks.iter() {
            s += &format!(
                "[[pools.nodes]]\nid = {id}\nmac = \"02:00:00:00:00:{:02x}\"\nip = \"10.0.0.{}\"\nudp_port = 1234\nport = {}\nworkers = {w}\nleaf = {}\n",
                10 + id,
                10 + id,
                2 + id % 8,
                10 + id
            );
            id += 1;
        }
    }
    Config::from_toml_str(&s).expect("test spine config is valid")
}

pub fn header(pkt_type: PacketType, pool: u16, src: u16, qlen: u16, seq: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id: src,
        dst_id: 0,
        qlen,
        seq_num: seq,
    }
}

pub fn task(pool: u16, seq: u16) -> HorusHeader {
    header(PacketType::NewTask, pool, 999, 0, seq)
}

/// A task as the spine forwards it: `src_id` = the spine, `qlen` = its idle-selected flag.
pub fn task_from_spine(pool: u16, seq: u16, idle_selected: bool) -> HorusHeader {
    header(
        PacketType::NewTask,
        pool,
        SPINE_ID,
        u16::from(idle_selected),
        seq,
    )
}

/// Everything a pass and the second passes it caused emitted.
#[derive(Debug, Default)]
pub struct Trace {
    pub results: Vec<PassResult>,
}

impl Trace {
    pub fn forwards(&self) -> Vec<Emit> {
        self.results.iter().filter_map(|r| r.forward).collect()
    }
    pub fn signals(&self) -> Vec<Emit> {
        self.results
            .iter()
            .filter_map(|r| r.signal.map(|(_, e)| e))
            .collect()
    }
    pub fn last(&self) -> &PassResult {
        self.results.last().expect("at least one pass")
    }
}

/// Runs a first pass and, at once, every second pass it asks for.
pub fn run(s: &mut Scheduler, h: HorusHeader) -> Trace {
    run_at(s, h, 0)
}

pub fn run_at(s: &mut Scheduler, h: HorusHeader, time_us: u32) -> Trace {
    let r = s.packet(Packet { header: h, time_us });
    drain(s, r)
}

pub fn control(s: &mut Scheduler, op: ControlOp) -> Trace {
    let r = s.control(op).expect("control op accepted");
    drain(s, r)
}

fn drain(s: &mut Scheduler, first: PassResult) -> Trace {
    let mut t = Trace::default();
    let mut next: Option<Resubmit> = first.resubmit;
    t.results.push(first);
    while let Some(rs) = next.take() {
        let r = s.resubmit(rs);
        next = r.resubmit;
        t.results.push(r);
    }
    t
}

pub fn leaf(pools: &[u16]) -> Scheduler {
    Scheduler::from_config(&leaf_config(pools, 2, 1, 0, 1.0), 1)
        .expect("configures")
        .0
}

pub fn spine(pools: &[&[u16]]) -> Scheduler {
    Scheduler::from_config(&spine_config(pools, 2), 1)
        .expect("configures")
        .0
}

/// Sends `n` tasks to pool `pool` and returns the workers they went to.
pub fn tasks(s: &mut Scheduler, pool: u16, n: usize) -> Vec<u16> {
    (0..n)
        .map(|i| {
            match run(s, task(pool, i as u16))
                .forwards()
                .last()
                .map(|e| e.target)
            {
                Some(horus_model::sched::Target::Node { node, .. }) => node,
                other => panic!("task {i} not forwarded to a node: {other:?}"),
            }
        })
        .collect()
}
