//! Stage 0 (`poolCfg` and the generator) against the model's semantics for it.

mod common;

use common::*;
use horus_model::fixed::Load;
use horus_model::rng::Xorshift64;
use horus_model::sched::{DropReason, conn_hash};
use horus_pipeline::phv::{Phv, drop_code};
use horus_pipeline::stages::pool_cfg::PoolCfgStage;

fn configure(pool: u64, base: u64, cap: u64) -> Phv {
    Phv {
        is_ctl_pool: true,
        pool: b16(pool),
        base: b16(base),
        cap: b16(cap),
        link_at: b16(1),
        report_delta: u64::from(Load::ONE.0).into(),
        spine_ok: true,
        spine_id: b16(9),
        spine_node: b16(4),
        ..Default::default()
    }
}

fn add(pool: u64) -> Phv {
    Phv {
        is_ctl_add: true,
        pool: b16(pool),
        ..Default::default()
    }
}

fn task(pool: u64) -> Phv {
    Phv {
        is_task: true,
        pool: b16(pool),
        ..Default::default()
    }
}

#[test]
fn tasks_draw_the_models_samples_and_only_tasks_of_configured_pools_advance_the_generator() {
    // Pool 1: 5 nodes (not a power of two); pool 2: configured, empty; pool 3: not configured.
    let mut passes = vec![Some(configure(1, 0, 8)), Some(configure(2, 8, 4))];
    passes.extend((0..5).map(|_| Some(add(1))));
    let tasks_at = passes.len();
    for i in 0..40 {
        passes.push(Some(task(1)));
        if i % 7 == 0 {
            passes.push(Some(Phv {
                is_reply: true,
                pool: b16(1),
                ..Default::default()
            }));
            passes.push(Some(task(3)));
            passes.push(None);
        }
    }
    passes.push(Some(task(2)));
    passes.push(Some(task(1)));
    passes.push(Some(Phv {
        is_task: true,
        pool: b16(1),
        drop: drop_code(DropReason::PoolOutOfRange).into(),
        ..Default::default()
    }));
    passes.push(Some(task(1)));
    let inputs: Vec<Phv> = passes.iter().flatten().copied().collect();
    let out = drive!(PoolCfgStage<4>, PoolCfgStage::new(1), passes);
    assert_eq!(out.len(), inputs.len());

    let mut g = Xorshift64::new(1);
    for (i, (inp, o)) in inputs.iter().zip(&out).enumerate().skip(tasks_at) {
        let pool = inp.pool.index();
        if !inp.is_task || inp.drop.any() {
            assert_eq!(o.drop, inp.drop, "pass {i}");
            continue;
        }
        match pool {
            1 => {
                let (r1, r2) = g.two_samples(5);
                assert_eq!(
                    (o.r1.index(), o.r2.index(), o.n.index(), o.drop.index()),
                    (r1 as usize, r2 as usize, 5, 0),
                    "pass {i}"
                );
            }
            2 => {
                g.two_samples(0);
                assert_eq!(
                    o.drop.index() as u64,
                    drop_code(DropReason::EmptyPool),
                    "pass {i}"
                );
            }
            3 => assert_eq!(
                o.drop.index() as u64,
                drop_code(DropReason::UnknownPool),
                "pass {i}"
            ),
            _ => unreachable!(),
        }
        assert_eq!(
            (o.spine_id.index(), o.spine_node.index(), o.base.index()),
            if pool == 3 {
                (0, 0, 0)
            } else {
                (9, 4, if pool == 1 { 0 } else { 8 })
            }
        );
    }
}

#[test]
fn back_to_back_node_additions_each_see_the_previous_count() {
    let mut passes = vec![Some(configure(0, 0, 16))];
    passes.extend((0..10).map(|_| Some(add(0))));
    let out = drive!(PoolCfgStage<2>, PoolCfgStage::new(1), passes);
    let slots: Vec<usize> = out[1..].iter().map(|o| o.slot.index()).collect();
    assert_eq!(
        slots,
        (0..10).collect::<Vec<_>>(),
        "each addition takes the next member slot"
    );
}

#[test]
fn every_pass_leaves_with_the_models_connection_slot() {
    // Pools and sequence numbers at the edges of their 16 bits, and random ones; every kind of
    // pass (the slot is a field of the pass: `conn` reads it for tasks and continuations).
    let mut g = Xorshift64::new(7);
    let mut keys = vec![
        (0u16, 0u16),
        (0xffff, 0xffff),
        (0, 0xffff),
        (0xffff, 0),
        (1, 1),
    ];
    keys.extend((0..60).map(|_| (g.next_u64() as u16, (g.next_u64() >> 16) as u16)));
    let passes: Vec<Option<Phv>> = keys
        .iter()
        .enumerate()
        .map(|(i, &(pool, seq))| {
            Some(Phv {
                is_task: i % 3 == 0,
                is_cont: i % 3 == 1,
                is_reply: i % 3 == 2,
                pool: b16(pool.into()),
                seq: b16(seq.into()),
                ..Default::default()
            })
        })
        .collect();
    let out = drive!(PoolCfgStage<4>, PoolCfgStage::new(1), passes);
    assert_eq!(out.len(), keys.len());
    for (&(pool, seq), o) in keys.iter().zip(&out) {
        assert_eq!(
            o.conn_slot.index() as u32,
            conn_hash(pool, seq) & 0xffff,
            "pool {pool:#x} seq {seq:#x}"
        );
    }
}

#[test]
fn pool_cfg_stage_verilog_is_lint_clean_and_synthesizes() {
    let r = lint_and_synth("stage_pool_cfg", PoolCfgStage::<6>::new(1));
    println!("poolCfg stage, 64 pools: {r}");
    assert!(r.luts > 0 && r.ffs > 0);
}
