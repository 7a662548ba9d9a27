//! Directed scenarios through the generated switches, frame for frame against the model, with
//! every table compared at the end (`bench::run_with`): a pool going busy and idle again, a
//! worker failing mid-stream, the paper's Fig. 4 idle-list removal at a spine, and the Fig. 13
//! lazy drift correction. Each scenario also checks, from the model's counters, that it did what
//! its name says (the frames and tables are the model's by the scoreboard).
//!
//! The configuration is `traffic::config` with seed 1: pool 0 holds nodes 0, 4, ..., 20, pool 1
//! nodes 1, 5, ..., 17, pool 2 nodes 2, 6, 10, 14; a leaf's workers start idle.

use horus_cosim::bench::{RunOptions, RunReport, run_with, verilog};
use horus_cosim::traffic::{Input, Mix, Rng, config, horus_frame};
use horus_cosim::verilated::Model;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_model::sched::{ControlOp, DropReason, NodeAddr};
use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
use horus_pipeline::presets;

use PacketType::*;

fn h(pkt_type: PacketType, pool: u16, src: u16, qlen: u16, seq: u16, more: bool) -> Input {
    Input::Frame(horus_frame(HorusHeader {
        pkt_type,
        more_packets: more,
        pool_id: pool,
        src_id: src,
        dst_id: 0,
        qlen,
        seq_num: seq,
    }))
}

/// 32 frames that are not Horus (they pass through): time for the second passes in flight
/// (an idleAdd's commit, a removal's finish) to land before what follows.
fn gap() -> Vec<Input> {
    let Input::Frame(mut f) = task(0) else {
        unreachable!()
    };
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    vec![Input::Frame(f); 32]
}

fn task(pool: u16) -> Input {
    h(NewTask, pool, 0, 0, 0, false)
}

/// Runs `script` through the switch of `role` at full input rate (and, with `output_ready` below
/// 100, random output backpressure).
fn run(role: Role, script: Vec<Input>, output_ready: u64) -> RunReport {
    let preset = presets::preset("small", role).unwrap();
    let cfg = config(role, preset.sizes(), &mut Rng::new(1));
    let v = verilog(&preset, &cfg, DEFAULT_SEED);
    let model = Model::build(&v, &preset.module_name()).unwrap();
    let opts = RunOptions {
        frames: 0,
        seed: 1,
        input_busy: 100,
        output_ready,
        mix: Mix::Mixed,
        trace: None,
    };
    let mut script = script.into_iter();
    let r = run_with(
        &model,
        &preset,
        &cfg,
        DEFAULT_SEED,
        &opts,
        &mut |_| script.next(),
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(r.entries_read > 0);
    r
}

#[test]
fn a_pool_goes_busy_and_idle_again() {
    let workers = [0u16, 4, 8, 12, 16, 20];
    let mut s: Vec<Input> = (0..30).map(|_| task(0)).collect();
    // Each worker finishes its tasks; its last reply says it is idle.
    for &w in &workers {
        for q in (1..4).rev() {
            s.push(h(TaskDone, 0, w, q, 0, false));
        }
        s.push(h(TaskDoneIdle, 0, w, 0, 0, false));
    }
    s.extend(gap());
    s.extend((0..6).map(|_| task(0)));
    for ready in [100, 40] {
        let c = run(Role::Leaf, s.clone(), ready).counters;
        // The six idle workers first, then power of two; idle again at the end.
        assert!(c.idle_hits >= 12, "{c:?}");
        assert!(c.pow2_decisions >= 20, "{c:?}");
        assert!(c.sent_idle_remove >= 1 && c.sent_idle_add >= 2, "{c:?}");
    }
}

#[test]
fn a_worker_fails_mid_stream() {
    let mut s: Vec<Input> = (0..10).map(|seq| h(NewTask, 1, 0, 0, seq, true)).collect();
    s.push(Input::Control(ControlOp::RemoveNode { pool: 1, node: 5 }));
    // Continuations of tasks that went to the failed worker, its late replies, new tasks.
    s.extend((0..10).map(|seq| h(TaskContinuation, 1, 0, 0, seq, false)));
    s.extend((0..5).map(|q| h(TaskDone, 1, 5, q, 0, false)));
    s.extend((0..20).map(|_| task(1)));
    // It comes back.
    let endpoint = Endpoint {
        mac: MacAddr([2, 0, 0, 0xa0, 0, 5]),
        ip: [10, 1, 0, 5].into(),
        udp_port: 1005,
    };
    s.push(Input::Control(ControlOp::AddNode {
        pool: 1,
        node: 5,
        addr: NodeAddr {
            endpoint,
            port: 15,
            dst_id: 5,
        },
        workers: 1,
    }));
    s.extend((0..10).map(|_| task(1)));
    for ready in [100, 40] {
        let c = run(Role::Leaf, s.clone(), ready).counters;
        assert_eq!(c.drop_count(DropReason::NodeNotInPool), 5, "{c:?}");
        assert!(c.continuations >= 1, "{c:?}");
    }
}

#[test]
fn fig4_idle_list_removal_at_a_spine() {
    let mut s: Vec<Input> = [0u16, 4, 8, 12]
        .iter()
        .map(|&n| h(IdleSignal, 0, n, 0, 0, false))
        .collect();
    s.extend(gap());
    // A removal from the middle takes the lock; the next, back to back, finds it held, and a
    // task meanwhile goes by power of two.
    s.push(h(IdleRemove, 0, 4, 0, 0, false));
    s.push(h(IdleRemove, 0, 8, 0, 0, false));
    s.push(task(0));
    s.extend(gap());
    // Not in the list any more; an add twice in a row.
    s.push(h(IdleRemove, 0, 4, 0, 0, false));
    s.push(h(IdleSignal, 0, 16, 0, 0, false));
    s.push(h(IdleSignal, 0, 16, 0, 0, false));
    s.extend(gap());
    s.push(h(IdleRemove, 0, 0, 0, 0, false));
    s.push(h(IdleRemove, 0, 12, 0, 0, false));
    s.extend(gap());
    for (i, n) in [0u16, 4, 8, 12, 16, 20].iter().enumerate() {
        s.push(h(QueueSignal, 0, *n, i as u16, 0x8000, false));
    }
    s.extend((0..10).map(|_| task(0)));
    for ready in [100, 40] {
        let c = run(Role::Spine, s.clone(), ready).counters;
        assert!(c.drop_count(DropReason::IdleRemoveLocked) >= 1, "{c:?}");
        assert!(c.drop_count(DropReason::IdleRemoveNotMember) >= 1, "{c:?}");
        assert!(c.drop_count(DropReason::IdleAddDuplicate) >= 1, "{c:?}");
        // Removals of 4 and 0 went through; 8 and 12 met the lock; the last tasks find 8 and 16.
        assert_eq!(c.idle_removes, 2, "{c:?}");
        assert!(c.idle_hits >= 1, "{c:?}");
    }
}

#[test]
fn fig13_lazy_drift_correction() {
    // Four idle workers, then twenty tasks with no reply: power of two on stale loads.
    let mut s: Vec<Input> = (0..20).map(|_| task(2)).collect();
    // Replies that disagree with what the leaf believes, then more tasks.
    for (w, q) in [(2u16, 0u16), (6, 7), (10, 1), (14, 3)] {
        s.push(h(TaskDone, 2, w, q, 0, false));
    }
    s.extend((0..20).map(|_| task(2)));
    for ready in [100, 40] {
        let r = run(Role::Leaf, s.clone(), ready);
        assert!(r.counters.pow2_resubmits >= 1, "{:?}", r.counters);
        assert!(r.resubmitted >= 1);
    }
}
