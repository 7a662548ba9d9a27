//! Stages 3 (`idleList`) and 4 (`idleIndex`), chained behind stage 2, against the model's idle
//! list: Fig. 4 step by step, a spine's aborted removal and duplicate add, a leaf's pops, pushes
//! and duplicate TASK_DONE_IDLE, back to back.

mod common;

use common::*;

use horus_model::sched::DropReason;
use horus_pipeline::phv::{Phv, drop_code};
use horus_pipeline::stages::{PassIn, PassOut, StagePort};
use horus_pipeline::stages::{
    idle_ctl::IdleCtlStage, idle_index::IdleIndexStage, idle_list::IdleListStage,
};
use rust_hdl::prelude::*;

/// Stages 2, 3 and 4 in a row.
#[derive(LogicBlock)]
struct IdleGroup {
    clock: Signal<In, Clock>,
    port: StagePort,
    ctl: IdleCtlStage<2>,
    list: IdleListStage<4>,
    index: IdleIndexStage<4>,
}

impl IdleGroup {
    fn new(leaf: bool) -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            ctl: IdleCtlStage::new(leaf),
            list: IdleListStage::new(leaf),
            index: IdleIndexStage::new(leaf),
        }
    }
}

impl Logic for IdleGroup {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, ctl, list, index);
        PassIn::link(&mut self.port.up, &mut self.ctl.port.up);
        PassOut::join(&mut self.ctl.port.down, &mut self.list.port.up);
        PassOut::join(&mut self.list.port.down, &mut self.index.port.up);
        PassOut::link(&mut self.port.down, &mut self.index.port.down);
        self.port.rb.next = self.index.port.rb.val();
        self.port.rb_hit.next = self.index.port.rb_hit.val();
    }
}

horus_pipeline::impl_pipeline_stage!([] IdleGroup);

const LATENCY: usize = 3 + 1;

fn factor(node: u64) -> Bits<32> {
    (0x1000 * (node + 1)).into()
}

fn idle_add(node: u64) -> Phv {
    Phv {
        is_idle_add: true,
        src: b16(node),
        ..Default::default()
    }
}

fn commit(node: u64) -> Phv {
    Phv {
        is_add_commit: true,
        src: b16(node),
        factor: factor(node),
        ..Default::default()
    }
}

fn task() -> Phv {
    Phv {
        is_task: true,
        ..Default::default()
    }
}

#[test]
fn fig4_removal_and_an_aborted_removal_at_a_spine() {
    // The pool's configuration starts the spine's turn at 1 (position 0).
    let mut passes = vec![Some(Phv {
        is_ctl_pool: true,
        ..Default::default()
    })];
    let adds = passes.len();
    for n in [4, 3, 6, 7] {
        passes.push(Some(idle_add(n)));
        passes.push(Some(commit(n)));
    }
    let dup = passes.len();
    passes.push(Some(idle_add(4)));
    // A task takes position 0 (node 4): the turn is now at position 1.
    let turn0 = passes.len();
    passes.push(Some(task()));
    let first = passes.len();
    passes.push(Some(Phv {
        is_idle_remove: true,
        src: b16(3),
        ..Default::default()
    }));
    // The second pass as the resubmit path builds it from the first pass's result.
    passes.push(Some(Phv {
        is_remove_finish: true,
        fin_move: true,
        pos: b16(1),
        last_node: b16(7),
        last_f: factor(7),
        ..Default::default()
    }));
    let pick = passes.len();
    passes.push(Some(task()));
    let absent = passes.len();
    passes.push(Some(Phv {
        is_idle_remove: true,
        src: b16(9),
        ..Default::default()
    }));
    passes.push(Some(Phv {
        is_remove_finish: true,
        fin_abort: true,
        last_node: b16(6),
        last_f: factor(6),
        ..Default::default()
    }));
    passes.push(Some(task()));
    passes.push(Some(Phv {
        is_idle_remove: true,
        src: b16(7),
        ..Default::default()
    }));
    let out = drive!(IdleGroup, IdleGroup::new(false), passes, LATENCY);

    for (i, n) in [4u64, 3, 6, 7].iter().enumerate() {
        assert!(
            out[adds + 2 * i].resubmit,
            "idleAdd({n}) asks for its commit"
        );
        assert_eq!(
            out[adds + 2 * i + 1].pos.index(),
            i,
            "commit({n}) pushes at {i}"
        );
    }
    assert_eq!((out[turn0].idle, out[turn0].chosen.index()), (true, 4));
    assert_eq!(
        out[dup].drop.index(),
        drop_code(DropReason::IdleAddDuplicate) as usize
    );
    // Fig. 4 (b): removedIdx = 1, lastNode = 7.
    let f = &out[first];
    assert!(f.fin_move && f.resubmit && !f.fin_unlock && !f.fin_abort);
    assert_eq!(
        (f.pos.index(), f.last_node.index(), f.last_f),
        (1, 7, factor(7))
    );
    // Fig. 4 (c): [4, 7, 6]; the spine's turn is at position 1, which the second pass wrote in
    // the clock before: the task reads node 7 there (forwarded), without popping.
    assert_eq!(
        (out[pick].idle, out[pick].chosen.index(), out[pick].chosen_f),
        (true, 7, factor(7))
    );
    // Node 9 is not in the list: abort, counted, the former top (6) goes back.
    assert!(out[absent].fin_abort);
    assert_eq!(
        out[absent].sub_drop.index(),
        drop_code(DropReason::IdleRemoveNotMember) as usize
    );
    assert_eq!(out[absent + 1].pos.index(), 2, "pushed back at the top");
    // That removal took the top while the turn was there (position 2): it went round to 0.
    assert_eq!(out[absent + 2].chosen.index(), 4);
    // Node 7 now sits at position 1 (the move wrote its index): a move of the top (6) into it.
    let last = out.last().unwrap();
    assert!(last.fin_move);
    assert_eq!((last.pos.index(), last.last_node.index()), (1, 6));
}

#[test]
fn leaf_pops_pushes_and_refuses_a_duplicate_task_done_idle() {
    let reply_idle = |n: u64| Phv {
        is_reply_idle: true,
        src: b16(n),
        ..Default::default()
    };
    let passes = vec![
        Some(Phv {
            is_ctl_pool: true,
            ..Default::default()
        }),
        Some(Phv {
            is_ctl_add: true,
            src: b16(5),
            factor: factor(5),
            ..Default::default()
        }),
        Some(Phv {
            is_ctl_add: true,
            src: b16(6),
            factor: factor(6),
            ..Default::default()
        }),
        Some(Phv {
            is_ctl_add: true,
            src: b16(7),
            factor: factor(7),
            ..Default::default()
        }),
        Some(reply_idle(6)),
        Some(task()),
        Some(task()),
        Some(reply_idle(7)),
        Some(commit(7)),
        Some(task()),
        Some(task()),
        Some(task()),
        Some(task()),
    ];
    let out = drive!(IdleGroup, IdleGroup::new(true), passes, LATENCY);
    assert_eq!(
        out[4].sub_drop.index(),
        drop_code(DropReason::IdleAddDuplicate) as usize,
        "6 is idle already"
    );
    assert!(
        !out[4].resubmit && out[4].drop.index() == 0,
        "the reply itself goes on"
    );
    let chosen: Vec<usize> = [5, 6, 9, 10, 11]
        .iter()
        .map(|&i| out[i].chosen.index())
        .collect();
    assert_eq!(
        chosen,
        vec![7, 6, 7, 5, 0],
        "pops from the top; then the list is empty"
    );
    assert!(
        out[7].resubmit,
        "7 was popped: its TASK_DONE_IDLE is a new add"
    );
    assert_eq!(out[8].pos.index(), 1);
    assert!(!out[11].idle && !out[12].idle);
}

#[test]
fn idle_list_and_index_stages_are_lint_clean_and_synthesize() {
    for (name, leaf) in [("stage_idle_list", true), ("stage_idle_list_spine", false)] {
        let r = lint_and_synth(name, IdleListStage::<12>::new(leaf));
        println!("idleList stage ({name}, 4096 slots): {r}");
    }
    let r = lint_and_synth("stage_idle_index", IdleIndexStage::<12>::new(true));
    println!("idleIndex stage (4096 nodes): {r}");
}
