//! Stage 1 (`node`) against the model's semantics for it: source checks, drop reasons, a reply's
//! way on to its client, control writes, back to back on one node.

mod common;

use common::*;
use horus_model::sched::DropReason;
use horus_pipeline::phv::{Phv, drop_code};
use horus_pipeline::stages::node::NodeStage;

fn add(node: u64, pool: u64, slot: u64, factor: u64) -> Phv {
    Phv {
        is_ctl_add: true,
        src: b16(node),
        pool: b16(pool),
        slot: b16(slot),
        factor: factor.into(),
        ..Default::default()
    }
}

fn reply(node: u64, pool: u64) -> Phv {
    Phv {
        is_reply: true,
        src: b16(node),
        pool: b16(pool),
        ..Default::default()
    }
}

fn code(r: DropReason) -> usize {
    drop_code(r) as usize
}

#[test]
fn messages_from_nodes_are_checked_and_carry_the_nodes_factor() {
    let passes = vec![
        Some(add(3, 1, 0, 0x10000)),
        // Back to back with its own addition: sees it.
        Some(reply(3, 1)),
        Some(add(5, 2, 0, 0x4000)),
        None,
        Some(Phv {
            is_load_update: true,
            src: b16(5),
            pool: b16(2),
            ..Default::default()
        }),
        Some(reply(3, 2)),
        Some(reply(9, 1)),
        Some(reply(300, 1)),
        Some(Phv {
            is_idle_add: true,
            src: b16(3),
            pool: b16(2),
            ..Default::default()
        }),
        Some(Phv {
            is_ctl_remove: true,
            src: b16(3),
            pool: b16(1),
            ..Default::default()
        }),
        Some(reply(3, 1)),
    ];
    let out = drive!(NodeStage<8>, NodeStage::default(), passes);
    assert_eq!(
        (out[1].factor.index(), out[1].drop.index(), out[1].is_reply),
        (0x10000, 0, true)
    );
    assert_eq!((out[3].factor.index(), out[3].drop.index()), (0x4000, 0));
    // Node 3 in the wrong pool: dropped update, the reply still goes on.
    assert_eq!(out[4].drop.index(), code(DropReason::NodeNotInPool));
    assert!(out[4].is_pass_through && !out[4].is_reply);
    assert_eq!(
        out[5].drop.index(),
        code(DropReason::NodeNotInPool),
        "node 9 was never added"
    );
    assert_eq!(
        out[6].drop.index(),
        code(DropReason::NodeOutOfRange),
        "300 is beyond 256 entries"
    );
    // A rack message from a foreign node is simply dropped.
    assert_eq!(out[7].drop.index(), code(DropReason::NodeNotInPool));
    assert!(!out[7].is_pass_through && !out[7].is_idle_add);
    assert_eq!(
        out[8].slot.index(),
        0,
        "the removal hands on the freed slot"
    );
    assert_eq!(
        out[9].drop.index(),
        code(DropReason::NodeNotInPool),
        "a removed node's reply"
    );
}

#[test]
fn a_removals_second_pass_records_the_moved_members_slot() {
    let passes = vec![
        Some(add(1, 0, 0, 0x10000)),
        Some(add(2, 0, 1, 0x10000)),
        // Node 2 moves into slot 0; the next removal of node 2 hands on slot 0.
        Some(Phv {
            is_ctl_remove2: true,
            fin_move_member: true,
            src: b16(2),
            slot: b16(0),
            ..Default::default()
        }),
        Some(Phv {
            is_ctl_remove: true,
            src: b16(2),
            pool: b16(0),
            ..Default::default()
        }),
    ];
    let out = drive!(NodeStage<4>, NodeStage::default(), passes);
    assert_eq!(out[3].slot.index(), 0);
}

#[test]
fn node_stage_verilog_is_lint_clean_and_synthesizes() {
    let r = lint_and_synth("stage_node", NodeStage::<12>::default());
    println!("node stage, 4096 nodes: {r}");
    // 4,096 entries: UltraRAM (`verilog::ram_styles`).
    assert!(r.urams > 0, "the node table maps to UltraRAM: {r}");
}
