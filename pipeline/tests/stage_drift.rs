//! Stages 5-10 chained: the lazy drift check of Algorithm 2 against the model. The paper's Fig. 13
//! / §A.1 example step by step (m = 0: load 3, drift 3; n = 2: load 4, drift 1), drift charged
//! back to back on one node, the decision that stands, and the second pass's exact move.

mod common;

use common::*;
use horus_pipeline::phv::Phv;
use horus_pipeline::stages::{PassIn, PassOut, StagePort};
use horus_pipeline::stages::{drift::DriftStage, load::LoadStage, members::MembersStage};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
struct PowerOfTwo {
    clock: Signal<In, Clock>,
    port: StagePort,
    m1: MembersStage<4>,
    m2: MembersStage<4>,
    l1: LoadStage<4>,
    l2: LoadStage<4>,
    d1: DriftStage<4>,
    d2: DriftStage<4>,
}

impl Default for PowerOfTwo {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            m1: MembersStage::new(true),
            m2: MembersStage::new(false),
            l1: LoadStage::new(true, true),
            l2: LoadStage::new(false, true),
            d1: DriftStage::new(true),
            d2: DriftStage::new(false),
        }
    }
}

impl Logic for PowerOfTwo {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, m1, m2, l1, l2, d1, d2);
        PassIn::link(&mut self.port.up, &mut self.m1.port.up);
        PassOut::join(&mut self.m1.port.down, &mut self.m2.port.up);
        PassOut::join(&mut self.m2.port.down, &mut self.l1.port.up);
        PassOut::join(&mut self.l1.port.down, &mut self.l2.port.up);
        PassOut::join(&mut self.l2.port.down, &mut self.d1.port.up);
        PassOut::join(&mut self.d1.port.down, &mut self.d2.port.up);
        PassOut::link(&mut self.port.down, &mut self.d2.port.down);
        self.port.rb.next = self.d2.port.rb.val();
        self.port.rb_hit.next = self.d2.port.rb_hit.val();
    }
}

horus_pipeline::impl_pipeline_stage!([] PowerOfTwo);

const LATENCY: usize = 6 + 1;

fn add(node: u64) -> Phv {
    Phv {
        is_ctl_add: true,
        src: b16(node),
        slot: b16(node),
        factor: b32(load(1)),
        ..Default::default()
    }
}

fn report(node: u64, tasks: u64) -> Phv {
    Phv {
        is_reply: true,
        src: b16(node),
        wire_load: b32(load(tasks)),
        ..Default::default()
    }
}

fn random(slot: u64) -> Phv {
    Phv {
        is_random: true,
        r1: b32(slot),
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

#[test]
fn fig13_resubmits_with_the_corrected_queues_and_the_second_pass_picks_n() {
    let mut passes: Vec<Option<Phv>> = (0..4).map(|n| Some(add(n))).collect();
    passes.extend([Some(report(0, 3)), Some(report(2, 4))]);
    // Drift 3 on node 0 (three random tasks back to back) and 1 on node 2.
    passes.extend([
        Some(random(0)),
        Some(random(0)),
        Some(random(0)),
        Some(random(2)),
    ]);
    let first = passes.len();
    passes.push(Some(task(0, 2)));
    let out = drive!(PowerOfTwo, PowerOfTwo::default(), passes, LATENCY);
    let f = &out[first];
    assert!(f.resubmit, "d_m = 3 > l_n - l_m = 1");
    assert!(
        !f.assigned,
        "nothing is charged on a resubmitting first pass"
    );
    assert_eq!(
        (
            f.a_node.index(),
            f.a_l.index() as u64,
            f.diff.index() as u64
        ),
        (0, load(3), load(1))
    );
    assert_eq!(
        (f.a_d.index() as u64, f.a_q.index() as u64),
        (load(3), load(6)),
        "q_m = 3 + 3"
    );
    assert_eq!(
        (f.b_node.index(), f.b_d.index() as u64, f.b_q.index() as u64),
        (2, load(1), load(5)),
        "q_n = 4 + 1"
    );

    // The second pass, as the resubmit path builds it, then two tasks that read the result.
    let second = Phv {
        is_sched2: true,
        ..*f
    };
    let mut passes: Vec<Option<Phv>> = (0..4).map(|n| Some(add(n))).collect();
    passes.extend([Some(report(0, 3)), Some(report(2, 4))]);
    passes.extend([
        Some(random(0)),
        Some(random(0)),
        Some(random(0)),
        Some(random(2)),
    ]);
    passes.push(Some(task(0, 2)));
    passes.push(Some(Phv {
        resubmit: false,
        ..second
    }));
    passes.push(Some(task(2, 2)));
    passes.push(Some(task(0, 0)));
    let out = drive!(PowerOfTwo, PowerOfTwo::default(), passes, LATENCY);
    let s = &out[first + 1];
    assert_eq!(
        (s.chosen.index(), s.assigned),
        (2, true),
        "q_n = 5 < q_m = 6: n wins"
    );
    // Node 2: load 4 + 1 + 1 = 6, drift 1 - 1 = 0; both samples node 2: charged directly.
    let t = &out[first + 2];
    assert_eq!((t.a_node.index(), t.a_l.index() as u64), (2, load(6)));
    assert!(
        !t.resubmit && t.assigned && t.chosen.index() == 2,
        "two samples of one node never resubmit"
    );
    // Node 0 untouched: load 3, drift 3 -> a lone sample stands and charges it to drift 4.
    let u = &out[first + 3];
    assert_eq!((u.a_l.index() as u64, u.chosen.index()), (load(3), 0));
}

#[test]
fn a_decision_stands_when_the_drift_is_at_most_the_difference() {
    let mut passes: Vec<Option<Phv>> = (0..4).map(|n| Some(add(n))).collect();
    passes.extend([
        Some(report(1, 2)),
        Some(report(3, 4)),
        Some(random(1)),
        Some(random(1)),
    ]);
    // d(1) = 2 = l(3) - l(1): stands, charges node 1 (drift 3). Back to back: now d = 3 > 2.
    passes.extend([Some(task(1, 3)), Some(task(1, 3))]);
    let out = drive!(PowerOfTwo, PowerOfTwo::default(), passes, LATENCY);
    let (a, b) = (&out[8], &out[9]);
    assert!(!a.resubmit && a.assigned && a.chosen.index() == 1, "{a:?}");
    assert!(
        b.resubmit && b.a_d.index() as u64 == load(3),
        "the first task's charge is seen: {b:?}"
    );
}

#[test]
fn drift_stage_verilog_is_lint_clean_and_synthesizes() {
    for (name, first) in [("stage_drift1", true), ("stage_drift2", false)] {
        let r = lint_and_synth(name, DriftStage::<12>::new(first));
        println!("driftList stage ({name}, 4096 nodes): {r}");
    }
}

#[test]
fn a_removal_reads_the_nodes_queue_for_the_rack_average() {
    let mut passes: Vec<Option<Phv>> = (0..2).map(|n| Some(add(n))).collect();
    passes.extend([Some(report(1, 5)), Some(random(1)), Some(random(1))]);
    passes.push(Some(Phv {
        is_ctl_remove: true,
        src: b16(1),
        mv_node: b16(0),
        mv_f: b32(load(1)),
        ..Default::default()
    }));
    let out = drive!(PowerOfTwo, PowerOfTwo::default(), passes, LATENCY);
    assert_eq!(out[5].removed_q.index() as u64, load(7), "load 5 + drift 2");
}
