//! Stage 2 (`idleCtl`) against the model's semantics for it: pops and pushes back to back, the
//! removal lock, the link rule with hysteresis and the idle-selected repair (Algorithm 1, §3.4,
//! §A.3). The expected sequences are the ones `horus_model::sched` produces for the same passes
//! (see model/tests/scheduler.rs for the model side of each).

mod common;

use common::*;
use horus_model::sched::DropReason;
use horus_pipeline::phv::{Phv, drop_code};
use horus_pipeline::stages::idle_ctl::IdleCtlStage;

fn base(link_at: u64, unlink_at: u64) -> Phv {
    Phv {
        spine_ok: true,
        spine_id: b16(9),
        link_at: b16(link_at),
        unlink_at: b16(unlink_at),
        ..Default::default()
    }
}

/// (idle, pos, signal) of a pass leaving the stage: signal 'A' idleAdd, 'R' idleRemove, '-' none.
fn seen(p: &Phv) -> (bool, usize, char) {
    let sig = if p.sig_idle_add {
        'A'
    } else if p.sig_idle_remove {
        'R'
    } else {
        '-'
    };
    (p.idle, p.pos.index(), sig)
}

#[test]
fn leaf_pops_back_to_back_and_links_with_hysteresis() {
    let b = base(2, 0);
    let passes = vec![
        Some(Phv {
            is_ctl_pool: true,
            ..b
        }),
        Some(Phv {
            is_ctl_add: true,
            ..b
        }),
        Some(Phv {
            is_ctl_add: true,
            ..b
        }),
        Some(Phv {
            is_ctl_add: true,
            ..b
        }),
        Some(Phv {
            is_task: true,
            src: b16(77),
            ..b
        }),
        Some(Phv {
            is_task: true,
            src: b16(77),
            ..b
        }),
        Some(Phv {
            is_task: true,
            src: b16(77),
            ..b
        }),
        Some(Phv {
            is_task: true,
            src: b16(77),
            ..b
        }),
        // From the spine, flag 1, but we are unlinked: re-send idleRemove.
        Some(Phv {
            is_task: true,
            src: b16(9),
            qlen: b16(1),
            ..b
        }),
        Some(Phv {
            is_add_commit: true,
            ..b
        }),
        Some(Phv {
            is_add_commit: true,
            ..b
        }),
        // Linked again; a spine task with flag 0 says the spine lost our idleAdd.
        Some(Phv {
            is_task: true,
            src: b16(9),
            qlen: b16(0),
            ..b
        }),
    ];
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(true), passes);
    let got: Vec<_> = out.iter().map(seen).collect();
    assert_eq!(
        &got[1..],
        &[
            (false, 0, '-'), // push at 0, p = 1
            (false, 1, 'A'), // push at 1, p = 2 >= link_at
            (false, 2, '-'), // push at 2, p = 3
            (true, 2, '-'),  // pop 2, p = 2
            (true, 1, '-'),  // pop 1, p = 1 (> unlink_at)
            (true, 0, 'R'),  // pop 0, p = 0: unlink
            (false, 0, '-'), // empty: power of two
            (false, 0, 'R'), // repair
            (false, 0, '-'), // push at 0, p = 1
            (false, 1, 'A'), // push at 1, p = 2: link
            (true, 1, 'A'), // pop 1, p = 1 > unlink_at: still linked, so flag 0 means a lost idleAdd
        ][..],
        "{got:?}"
    );
    assert!(out[8].repair && out[11].repair && !out[6].repair);
}

#[test]
fn leaf_repairs_once_a_gap_passed_since_its_last_idle_message_across_the_clock_wrap() {
    let b = Phv {
        repair_gap: b16(10),
        ..base(1, 0)
    };
    let ctl_add = Phv {
        is_ctl_add: true,
        time: b32(1000),
        ..b
    };
    // (Functions, not closures: a closure capturing a `Phv` trips a rustc 1.95 ICE.)
    fn at(t: u64, p: Phv) -> Phv {
        Phv { time: b32(t), ..p }
    }
    fn spine_task(b: Phv, t: u64, flag: u64) -> Phv {
        Phv {
            is_task: true,
            src: b16(9),
            qlen: b16(flag),
            time: b32(t),
            ..b
        }
    }
    let commit = Phv {
        is_add_commit: true,
        ..b
    };
    let max = u64::from(u32::MAX);
    let passes = vec![
        Some(Phv {
            is_ctl_pool: true,
            ..b
        }),
        // Control passes link the rack but leave the stamp at 0, whatever their time.
        Some(ctl_add),
        Some(ctl_add),
        Some(ctl_add),
        Some(ctl_add),
        Some(spine_task(b, 5, 0)),
        Some(spine_task(b, 10, 0)),
        Some(spine_task(b, 19, 0)),
        Some(Phv {
            is_task: true,
            src: b16(77),
            time: b32(20),
            ..b
        }),
        Some(spine_task(b, 29, 1)),
        Some(spine_task(b, 30, 1)),
        Some(at(max - 2, commit)),
        Some(at(max - 1, commit)),
        Some(at(max, commit)),
        Some(spine_task(b, 6, 0)),
        Some(spine_task(b, 7, 0)),
    ];
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(true), passes);
    let got: Vec<_> = out.iter().map(seen).collect();
    assert_eq!(
        &got[1..],
        &[
            (false, 0, 'A'), // control push, p = 1: link (no stamp)
            (false, 1, '-'),
            (false, 2, '-'),
            (false, 3, '-'), // p = 4
            (true, 3, '-'),  // flag 0 while linked at t = 5: 5 us since the stamp (0), held
            (true, 2, 'A'),  // t = 10: repaired, stamp 10
            (true, 1, '-'),  // t = 19: held
            (true, 0, 'R'),  // pop the last: unlink, stamp 20
            (false, 0, '-'), // flag 1 while unlinked at t = 29: held
            (false, 0, 'R'), // t = 30: repaired, stamp 30
            (false, 0, 'A'), // push, p = 1: link, stamp 2^32 - 3
            (false, 1, '-'),
            (false, 2, '-'), // p = 3
            (true, 2, '-'),  // t = 6 after the wrap: 9 us, held
            (true, 1, 'A'),  // t = 7: 10 us, repaired
        ][..],
        "{got:?}"
    );
    let repairs: Vec<usize> = (0..out.len()).filter(|&i| out[i].repair).collect();
    assert_eq!(repairs, vec![6, 10, 15]);
}

/// While a removal holds the lock a task takes no node, so the rule runs on the count as it is
/// (`p`, not a pop's `p - 1`), for the repair as for the link rule.
#[test]
fn leaf_rule_and_repair_run_on_the_count_as_it_is_while_the_list_is_locked() {
    fn pass(link_at: u64, t: u64, p: Phv) -> Phv {
        Phv {
            repair_gap: b16(10),
            link_at: b16(link_at),
            time: b32(t),
            ..p
        }
    }
    let b = base(1, 0);
    let ctl_add = Phv {
        is_ctl_add: true,
        ..b
    };
    let remove = Phv {
        is_idle_remove: true,
        ..b
    };
    // (A function, not a closure: a closure capturing a `Phv` trips a rustc 1.95 ICE.)
    fn spine_task(b: Phv, flag: u64) -> Phv {
        Phv {
            is_task: true,
            src: b16(9),
            qlen: b16(flag),
            ..b
        }
    }
    // Linked at p = 2 (link_at 1), a removal takes the lock (p = 1); a task from the spine that
    // finds the rack still listed (flag 0) 15 us after the last stamp re-sends idleAdd, since
    // p = 1 is above unlink_at 0 (p - 1 = 0 is not).
    let linked = vec![
        Some(pass(
            1,
            0,
            Phv {
                is_ctl_pool: true,
                ..b
            },
        )),
        Some(pass(1, 0, ctl_add)),
        Some(pass(1, 0, ctl_add)),
        Some(pass(1, 0, remove)),
        Some(pass(1, 15, spine_task(b, 0))),
    ];
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(true), linked);
    let got: Vec<_> = out.iter().map(|p| (seen(p).2, p.repair)).collect();
    assert_eq!(
        &got[1..],
        &[('A', false), ('-', false), ('-', false), ('A', true)][..],
        "{got:?}"
    );
    // Unlinked at p = 3 (link_at 5), a removal takes the lock (p = 2); with link_at 2 a task
    // from the spine links the rack (p = 2 reaches it; p - 1 would not, and the task, with a
    // queue, would re-send idleRemove instead); with link_at 3 the same task re-sends
    // idleRemove.
    let unlinked = vec![
        Some(pass(
            5,
            0,
            Phv {
                is_ctl_pool: true,
                ..b
            },
        )),
        Some(pass(5, 0, ctl_add)),
        Some(pass(5, 0, ctl_add)),
        Some(pass(5, 0, ctl_add)),
        Some(pass(5, 0, remove)),
        Some(pass(2, 15, spine_task(b, 1))),
    ];
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(true), unlinked.clone());
    assert_eq!(
        (seen(&out[5]).2, out[5].repair),
        ('A', false),
        "{:?}",
        out[5]
    );
    let mut repaired = unlinked;
    repaired[5] = Some(pass(3, 15, spine_task(b, 1)));
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(true), repaired);
    assert_eq!(
        (seen(&out[5]).2, out[5].repair),
        ('R', true),
        "{:?}",
        out[5]
    );
}

#[test]
fn spine_takes_its_idle_racks_in_turn_and_removals_take_the_lock() {
    let b = base(1, 0);
    let not_member = drop_code(DropReason::IdleRemoveNotMember) as usize;
    let locked = drop_code(DropReason::IdleRemoveLocked) as usize;
    let passes = vec![
        Some(Phv {
            is_ctl_pool: true,
            ..b
        }),
        Some(Phv {
            is_idle_remove: true,
            ..b
        }),
        Some(Phv {
            is_add_commit: true,
            ..b
        }),
        Some(Phv {
            is_add_commit: true,
            ..b
        }),
        Some(Phv {
            is_add_commit: true,
            ..b
        }),
        Some(Phv { is_task: true, ..b }),
        Some(Phv { is_task: true, ..b }),
        Some(Phv {
            is_idle_remove: true,
            ..b
        }),
        Some(Phv {
            is_idle_remove: true,
            ..b
        }),
        Some(Phv { is_task: true, ..b }),
        Some(Phv {
            is_remove_finish: true,
            fin_move: true,
            ..b
        }),
        Some(Phv { is_task: true, ..b }),
        Some(Phv {
            is_idle_remove: true,
            ..b
        }),
        Some(Phv {
            is_remove_finish: true,
            fin_abort: true,
            ..b
        }),
        Some(Phv { is_task: true, ..b }),
    ];
    // After the pool's configuration (the turn starts at 1).
    let out = drive!(IdleCtlStage<4>, IdleCtlStage::new(false), passes)[1..].to_vec();
    assert_eq!(
        out[0].drop.index(),
        not_member,
        "removal from an empty list"
    );
    let got: Vec<_> = out.iter().map(seen).collect();
    assert_eq!(
        got[1..4],
        [(false, 0, '-'), (false, 1, '-'), (false, 2, '-')],
        "pushes; a spine sends nothing"
    );
    assert_eq!(
        (got[4], got[5]),
        ((true, 0, '-'), (true, 1, '-')),
        "a spine takes its idle racks in turn, without popping"
    );
    assert_eq!(
        (out[6].idle, out[6].pos.index(), out[6].drop.index()),
        (true, 2, 0),
        "takes the lock and the top"
    );
    assert_eq!(out[7].drop.index(), locked);
    assert!(!out[8].idle, "no idle path under the lock");
    assert_eq!(
        got[10],
        (true, 0, '-'),
        "unlocked, p = 2: the turn (2) is past the list, so position 0"
    );
    assert_eq!(out[11].pos.index(), 1);
    assert_eq!(
        out[12].pos.index(),
        1,
        "an aborted removal pushes the former top back"
    );
    assert_eq!(
        (got[13], out[13].top.index()),
        ((true, 0, '-'), 1),
        "the removal that took the top when the turn was there sent it round to 1"
    );
}

#[test]
fn idle_ctl_stage_verilog_is_lint_clean_and_synthesizes() {
    for (name, leaf) in [
        ("stage_idle_ctl_leaf", true),
        ("stage_idle_ctl_spine", false),
    ] {
        let r = lint_and_synth(name, IdleCtlStage::<6>::new(leaf));
        println!("idleCtl stage ({name}): {r:#}\n  {}", r.path.join("\n  "));
    }
}
