//! Stages 5-8 (`members1/2`, `loadList1/2`) chained, against the model's semantics for them:
//! samples to nodes, loads read and ordered (ties to sample 1), reports setting the load in both
//! copies, and a task's second pass charging the winner with `Load::corrected`'s clamp, back to
//! back on one node.

mod common;

use common::*;
use horus_pipeline::phv::Phv;
use horus_pipeline::stages::{PassIn, PassOut, StagePort};
use horus_pipeline::stages::{load::LoadStage, members::MembersStage};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
struct Sampling {
    clock: Signal<In, Clock>,
    port: StagePort,
    m1: MembersStage<4>,
    m2: MembersStage<4>,
    l1: LoadStage<4>,
    l2: LoadStage<4>,
}

impl Sampling {
    fn new(leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            m1: MembersStage::new(true),
            m2: MembersStage::new(false),
            l1: LoadStage::new(true, leaf),
            l2: LoadStage::new(false, leaf),
        }
    }
}

impl Logic for Sampling {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, m1, m2, l1, l2);
        PassIn::link(&mut self.port.up, &mut self.m1.port.up);
        PassOut::join(&mut self.m1.port.down, &mut self.m2.port.up);
        PassOut::join(&mut self.m2.port.down, &mut self.l1.port.up);
        PassOut::join(&mut self.l1.port.down, &mut self.l2.port.up);
        PassOut::link(&mut self.port.down, &mut self.l2.port.down);
        self.port.rb.next = self.l2.port.rb.val();
        self.port.rb_hit.next = self.l2.port.rb_hit.val();
    }
}

horus_pipeline::impl_pipeline_stage!([] Sampling);

const LATENCY: usize = 4 + 1;

/// The samples as `driftList1` orders them: `loadList2` leaves them as drawn and sets `swap` when
/// the second is `sel`.
fn ordered(p: &Phv) -> Phv {
    if !p.swap {
        return *p;
    }
    Phv {
        a_node: p.b_node,
        a_f: p.b_f,
        a_l: p.b_l,
        b_node: p.a_node,
        b_f: p.a_f,
        b_l: p.a_l,
        swap: false,
        ..*p
    }
}

fn add(node: u64) -> Phv {
    Phv {
        is_ctl_add: true,
        src: b16(node),
        slot: b16(node),
        factor: b32(load(1)),
        ..Default::default()
    }
}

fn task(r1: u64, r2: u64) -> Phv {
    Phv {
        is_task: true,
        r1: b32(r1),
        r2: b32(r2),
        ..Default::default()
    }
}

/// A second pass for `a` (sel) and `b` (other) with their corrected queues and the drift `a`'s
/// first pass saw.
fn second(a: u64, a_q: u64, a_d: i32, b: u64, b_q: u64) -> Phv {
    Phv {
        is_sched2: true,
        a_node: b16(a),
        a_q: b32(a_q),
        a_d: b32(u64::from(a_d as u32)),
        a_f: b32(load(1)),
        b_node: b16(b),
        b_q: b32(b_q),
        b_f: b32(load(1)),
        ..Default::default()
    }
}

#[test]
fn samples_are_read_ordered_and_charged() {
    let passes = vec![
        Some(add(0)),
        Some(add(1)),
        Some(add(2)),
        Some(add(3)),
        // Worker 2 reports 5 tasks (a leaf keeps the integer part of qlen.seq).
        Some(Phv {
            is_reply: true,
            src: b16(2),
            wire_load: b32(load(5) | 0x1234),
            ..Default::default()
        }),
        Some(task(2, 1)),
        Some(task(3, 0)),
        // Second passes on node 1, back to back: 0 + (1 + 1) = 2, then 2 + (0 + 1) = 3.
        Some(second(1, load(1), 1 << 16, 2, load(5))),
        Some(second(1, load(2), 0, 2, load(5))),
        // b wins when its corrected queue is smaller.
        Some(second(1, load(9), 0, 3, load(4))),
        // A negative seen drift larger than the load clamps at 0.
        Some(second(0, 0, -(3 << 16), 3, load(9))),
        Some(task(1, 3)),
        Some(task(0, 0)),
        // Worker 2 reports 65,535 tasks; a second pass then charges it the largest drift, whose
        // step saturates at 2^31 - 1, and the load clamps at 2^32 - 1.
        Some(Phv {
            is_reply: true,
            src: b16(2),
            wire_load: b32(0xffff_ffff),
            ..Default::default()
        }),
        Some(second(2, 0, i32::MAX, 3, load(9))),
        Some(task(2, 1)),
    ];
    let out: Vec<Phv> = drive!(Sampling, Sampling::new(true), passes, LATENCY)
        .iter()
        .map(ordered)
        .collect();
    // task(2, 1): l(2) = 5 > l(1) = 0, so sel = 1 (in a), other = 2, diff = 5.
    let t = &out[5];
    assert_eq!((t.a_node.index(), t.b_node.index()), (1, 2));
    assert_eq!(
        (
            t.a_l.index() as u64,
            t.b_l.index() as u64,
            t.diff.index() as u64
        ),
        (0, load(5), load(5))
    );
    // task(3, 0): equal loads: ties go to sample 1.
    assert_eq!(
        (
            out[6].a_node.index(),
            out[6].b_node.index(),
            out[6].diff.index()
        ),
        (3, 0, 0)
    );
    assert_eq!(
        (
            out[7].chosen.index(),
            out[8].chosen.index(),
            out[9].chosen.index()
        ),
        (1, 1, 3)
    );
    // Loads now: node 1 = 3, node 3 = 0 + 0 + 1 = 1, node 0 = clamp(0 - 3 + 1) = 0.
    assert_eq!(
        (out[11].a_node.index(), out[11].a_l.index() as u64),
        (3, load(1))
    );
    assert_eq!(
        (out[11].b_node.index(), out[11].b_l.index() as u64),
        (1, load(3))
    );
    assert_eq!(out[12].a_l.index(), 0);
    // task(2, 1): l(1) = 3 is the smaller; l(2) clamped at the top.
    assert_eq!((out[15].a_node.index(), out[15].b_node.index()), (1, 2));
    assert_eq!(
        (out[15].a_l.index() as u64, out[15].b_l.index() as u64),
        (load(3), 0xffff_ffff)
    );
}

#[test]
fn a_spine_takes_the_whole_sixteen_sixteen_report() {
    let passes = vec![
        Some(add(0)),
        Some(add(1)),
        Some(Phv {
            is_load_update: true,
            src: b16(1),
            wire_load: b32(0x0002_4000),
            ..Default::default()
        }),
        Some(task(1, 0)),
    ];
    let out: Vec<Phv> = drive!(Sampling, Sampling::new(false), passes, LATENCY)
        .iter()
        .map(ordered)
        .collect();
    assert_eq!(
        (out[3].a_node.index(), out[3].b_l.index()),
        (0, 0x0002_4000)
    );
}

#[test]
fn members_and_load_stages_are_lint_clean_and_synthesize() {
    let r = lint_and_synth("stage_members", MembersStage::<12>::new(true));
    println!("members stage (4096 slots): {r}");
    let r = lint_and_synth("stage_load", LoadStage::<12>::new(false, true));
    println!("loadList stage (4096 nodes): {r}");
}
