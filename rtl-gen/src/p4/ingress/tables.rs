//! The ingress's tables: the builders (a table the control plane fills, a keyless or keyed
//! computing table, a table that executes a register action, with bf-p4c's placement) and the
//! computing tables of both roles.

use horus_model::config::{Role, Sizes};
use horus_model::sched::DropReason;
use horus_model::wire::PacketType;

use super::super::emit::{
    LEAF_LATE_REGISTERS, LEAF_PINNED_UNTIL, classify, drop_const, pkt_const, st,
};
use super::super::ir::*;

/// The annotations of a table that executes a register's actions, in the register's `stage`:
/// the plan's, and bf-p4c's. Left to itself, its greedy placer puts a register where it meets
/// the first of its tables (a load update's write, say, ready long before a task's read), then
/// cannot place the others there: it refuses the program, or splits the register over two
/// stages, a copy each. The spine's tables carry `@stage(N)`, which it follows. The leaf's
/// carry it up to [`LEAF_PINNED_UNTIL`], and from [`LEAF_LATE_REGISTERS`] on
/// `@placement_priority(-1)`: considered after every other table, a register's tables meet in
/// one stage. The drifts and the rack average between them are left to the placer, which keeps
/// them on the critical path. Measured with bf-p4c at 34b86e9 (`docs/p4.md`): the leaf
/// unannotated takes 16 stages with registers split; every register pinned, 27 (its stage-0
/// tables move a stage later and the plan with them); the registers from stage 8 on pinned, 13
/// with registers split; those last, 14 with `idle_index` split; with the early ones pinned as
/// well, 14 and no register split; with `drift2` and `pool_avg` left to the placer, 13; with
/// `idle_link` in stage 5 and `idle_index` addressed by two fields (`ra_tables`), 12: it fits.
fn pin(stage: u8, role: Role) -> Pin {
    match role {
        Role::Spine => Pin::Stage(stage),
        Role::Leaf if stage <= LEAF_PINNED_UNTIL => Pin::Stage(stage),
        Role::Leaf if stage >= LEAF_LATE_REGISTERS => Pin::Last,
        Role::Leaf => Pin::Free,
    }
}

/// A table the control plane fills: its keys, actions, default (`constant`: the control plane
/// cannot change it) and size.
pub(super) fn table(
    name: &str,
    stage: u8,
    keys_: &[&str],
    actions: &[&str],
    default: &str,
    constant: bool,
    size: &str,
) -> Table {
    Table {
        name: name.into(),
        stage,
        pin: Pin::Free,
        keys: keys(keys_),
        actions: actions.iter().map(|a| a.to_string()).collect(),
        entries: Vec::new(),
        default: Some(Default {
            call: Call::parse(default),
            constant,
        }),
        size: size.into(),
    }
}

/// A table without a key that runs `call` as its only action.
fn single(name: &str, stage: u8, pin: Pin, call: Call) -> Table {
    Table {
        name: name.into(),
        stage,
        pin,
        keys: Vec::new(),
        actions: vec![call.action.clone()],
        entries: Vec::new(),
        default: Some(Default {
            call,
            constant: true,
        }),
        size: "1".into(),
    }
}

/// A keyless table that runs `call` (an action with its arguments) as its only action, at the
/// stage the plan gives it.
fn keyless(name: &str, call: &str) -> Decl {
    Decl::Table(single(name, st(name), Pin::Free, Call::parse(call)))
}

/// A computing table that chooses its action by `keys` (`field: match_kind`) from constant
/// `entries` (`values : action(args)`, in priority order), else `default` (none if empty: the
/// entries cover every key): how a value that depends on a field is chosen on Tofino, where an
/// action's own conditions may read only its parameters. At the plan's stage.
fn keyed(name: &str, keys_: &[&str], entries_: &[&str], default: &str) -> Decl {
    Decl::Table(keyed_table(
        name,
        st(name),
        Pin::Free,
        keys_,
        entries_,
        default,
    ))
}

/// [`keyed`] at a register's `stage`, for a table that executes the register's actions in
/// `role`'s program (with bf-p4c's placement: [`pin`]).
fn keyed_in(
    stage: u8,
    role: Role,
    name: &str,
    keys_: &[&str],
    entries_: &[&str],
    default: &str,
) -> Decl {
    Decl::Table(keyed_table(
        name,
        stage,
        pin(stage, role),
        keys_,
        entries_,
        default,
    ))
}

fn keyed_table(
    name: &str,
    stage: u8,
    pin: Pin,
    keys_: &[&str],
    entries_: &[&str],
    default: &str,
) -> Table {
    let entries = entries(entries_);
    let default = (!default.is_empty()).then(|| Default {
        call: Call::parse(default),
        constant: true,
    });
    let mut actions: Vec<String> = entries
        .iter()
        .map(|(_, c)| c.action.clone())
        .chain(default.iter().map(|d| d.call.action.clone()))
        .collect();
    actions.sort();
    actions.dedup();
    Table {
        name: name.into(),
        stage,
        pin,
        keys: keys(keys_),
        actions,
        size: entries.len().to_string(),
        entries,
        default,
    }
}

/// A table that executes a register action: `table` at the register's stage, with an action of
/// the same name and `_act` that runs `body`.
pub(in crate::p4) fn ra_table(table: &str, register: &str, body: &str, role: Role) -> Vec<Decl> {
    let stage = st(register);
    let act = format!("{table}_act");
    vec![
        action(&act, "", body),
        Decl::Table(single(table, stage, pin(stage, role), Call::parse(&act))),
    ]
}

/// One `classify` entry per (type, flag, resubmitted) that `role` takes.
pub(super) fn classify_entries(role: Role) -> Vec<(Vec<String>, Call)> {
    let mut out = Vec::new();
    for t in PacketType::ALL {
        for more in [false, true] {
            for resubmitted in [false, true] {
                if let Some((kind, reason)) = classify(role, t, more, resubmitted) {
                    let reason = reason.map_or_else(|| "DROP_NONE".to_string(), drop_const);
                    out.push((
                        vec![
                            pkt_const(t),
                            u8::from(more).to_string(),
                            u8::from(resubmitted).to_string(),
                        ],
                        Call {
                            action: "set_kind".into(),
                            args: vec![kind.constant().to_string(), reason],
                        },
                    ));
                }
            }
        }
    }
    out
}

/// The computing tables: those with one action, in stage order (the rejections with their drop
/// reasons, and the arithmetic between table accesses), then those that choose their action by
/// a key.
pub(super) fn computing_tables(role: Role, sizes: &Sizes) -> Vec<Decl> {
    let mut d = keyless_computing(role == Role::Leaf);
    d.extend(keyed_computing(role, sizes));
    d
}

/// The computing tables with one action, in stage order.
fn keyless_computing(leaf: bool) -> Vec<Decl> {
    let reject = |r: DropReason| format!("reject({})", drop_const(r));
    let mut computing: Vec<(&str, String)> = vec![
        ("reject_checksum", reject(DropReason::BadChecksum)),
        ("reject_malformed", reject(DropReason::Malformed)),
        ("reject_short", reject(DropReason::Malformed)),
        ("reject_kind", "reject_with_reason".into()),
        ("reject_pool", reject(DropReason::UnknownPool)),
        ("reject_empty", reject(DropReason::EmptyPool)),
        ("pass_through", "to_pass_through".into()),
        ("to_control", "to_control_port".into()),
        ("idle_take", "take_idle".into()),
        ("idle_keep", "keep_idle".into()),
        ("idle_push", "push_at".into()),
        ("same_check", "check_same".into()),
        ("load_cmp", "compare_loads".into()),
        ("add_resubmit", "resubmit_add".into()),
        ("pick1", "pick_first".into()),
        ("pick2", "pick_second_sample".into()),
        ("pick_idle", "pick_idle_node".into()),
        ("pick_random", "pick_random_node".into()),
        ("pick_src", "pick_src_node".into()),
        ("pick_second", "pick_winner".into()),
        ("queues", "corrected_queues".into()),
        ("queue_gap", "gap_of_queues".into()),
        ("win_sel", "resubmit_sel".into()),
        ("win_other", "resubmit_other".into()),
        ("out_sel", "out_to_sel".into()),
        ("draw", "draw_values".into()),
        ("draw_conn_idx", "draw_conn".into()),
        ("conn_time", "read_conn_time".into()),
        ("header_values", "read_header".into()),
        ("decode", "decode_second_pass".into()),
        ("factor1", "widen_factor1".into()),
        ("factor2", "widen_factor2".into()),
        ("factor_idle", "widen_factor_idle".into()),
        ("node_mark", "mark_from_idle".into()),
        ("w_add_one", "add_one".into()),
        ("w_add_sum", "add_factor".into()),
    ];
    if leaf {
        computing.extend([
            ("spine_check", "check_spine".to_string()),
            ("spine_clear", "clear_spine".to_string()),
            (
                "pass_reply",
                format!("forward_reply({})", drop_const(DropReason::NodeNotInPool)),
            ),
            (
                "dup_reply",
                format!(
                    "forward_reply({})",
                    drop_const(DropReason::IdleAddDuplicate)
                ),
            ),
        ]);
    } else {
        computing.extend([
            ("reject_node", reject(DropReason::NodeNotInPool)),
            ("reject_locked", reject(DropReason::IdleRemoveLocked)),
            ("reject_not_member", reject(DropReason::IdleRemoveNotMember)),
            ("reject_duplicate", reject(DropReason::IdleAddDuplicate)),
            ("consume", "consume_message".to_string()),
            ("remove_top", "remove_at_top".to_string()),
            ("last_check", "check_last".to_string()),
            ("remove_unlock", "remove_resubmit_unlock".to_string()),
            ("remove_move", "remove_resubmit_move".to_string()),
            ("decode_pos", "read_pos".to_string()),
            ("remove_abort", "remove_resubmit_abort".to_string()),
        ]);
    }
    computing.sort_by_key(|(name, _)| (st(name), *name));
    computing
        .iter()
        .map(|(name, call)| keyless(name, call))
        .collect()
}

/// The computing tables that choose their action by a key: a pass's end, a second pass's values,
/// a continuation's connection, and the leaf's link rule, signal and report rule (the spine's
/// removal finish).
fn keyed_computing(role: Role, sizes: &Sizes) -> Vec<Decl> {
    let leaf = role == Role::Leaf;
    // The pass's end by its verdict. Its actions count by a field, which the hash unit does, and
    // Tofino runs no such action as a default: the entries cover every key, with no default.
    let mut d = vec![keyed(
        "done",
        &["md.verdict: ternary"],
        &[
            "V_CONTROL : finish_control()",
            "V_DROP : finish_drop()",
            "_ : finish_pass()",
        ],
        "",
    )];
    // A continuation: the last packet frees its entry.
    d.extend([
        action(
            "conn_follow_act",
            "",
            "md.conn_hit = conn_follow_ra.execute(md.conn_idx);",
        ),
        action(
            "conn_last_act",
            "",
            "md.conn_hit = conn_last_ra.execute(md.conn_idx);",
        ),
        keyed_in(
            st("conn"),
            role,
            "conn_follow",
            &["hdr.horus.more_packets: exact"],
            &["0 : conn_last_act()", "1 : conn_follow_act()"],
            "",
        ),
        action(
            "miss_conn",
            "",
            "md.out_node = 0xffff;\nmd.verdict = V_NODE;",
        ),
        keyless("conn_miss", "miss_conn"),
    ]);
    if leaf {
        d.extend(link_rule(u32::from(sizes.pools)));
        // The signal's type: a load report (no idle message), or an idle message (signal 1): the
        // link changed to `link_a`'s other value, or (link_a 7) a repair restating the spine's
        // lost view, `link_r`. Where both apply (link_r is link_a's other value) they agree.
        d.push(keyed(
            "signal",
            &[
                "md.signal: ternary",
                "md.link_a: ternary",
                "md.link_r: ternary",
            ],
            &[
                "(0, _, _) : mirror_signal(SIG_LOAD_UPDATE)",
                "(1, 0, _) : mirror_signal(SIG_IDLE_ADD)",
                "(1, 1, _) : mirror_signal(SIG_IDLE_REMOVE)",
                "(_, _, 1) : mirror_signal(SIG_IDLE_ADD)",
            ],
            "mirror_signal(SIG_IDLE_REMOVE)",
        ));
        d.extend([
            action(
                "report_move_act",
                "",
                "report_move_ra.execute(hdr.horus.pool_id);",
            ),
            action(
                "report_check_act",
                "",
                "md.report = report_check_ra.execute(hdr.horus.pool_id);",
            ),
            action("report_none_act", "", ""),
            keyed_in(
                st("pool_report"),
                Role::Leaf,
                "report_rule",
                &["md.spine_x: ternary", "md.signal: ternary"],
                &["(0, _) : report_move_act()", "(_, 0) : report_check_act()"],
                "report_none_act()",
            ),
            // What the report rule's register action reads beside the average, chosen as it is
            // chosen: the unit a task from the spine moves both words by, or the new hi.
            action("report_unit", "", "md.report_x = md.unit;"),
            action(
                "report_delta",
                "",
                "md.report_x = md.avg + md.report_delta_m1;",
            ),
            action("report_nothing", "", ""),
            keyed(
                "report_input",
                &["md.spine_x: ternary", "md.signal: ternary"],
                &["(0, _) : report_unit()", "(_, 0) : report_delta()"],
                "report_nothing()",
            ),
        ]);
    } else {
        // A removal's second pass by the first pass's outcome (`resub.value[31:16]` 3: an
        // aborted idle-remove, which returns the lock).
        d.extend([
            keyed(
                "decode_finish",
                &["md.resub.value[31:16]: exact"],
                &["3 : finish_aborted()"],
                "finish_normal()",
            ),
            keyed(
                "remove_finish",
                &["md.resub.value[31:16]: exact"],
                &["3 : finish_at_top()"],
                "finish_at()",
            ),
        ]);
    }
    d
}

/// The leaf's link rule: the range table that turns a pool's new idle count into the linked value
/// that calls for a change (`md.link_a`), the table that reads the spine's view from a task
/// (`md.link_r`), the stage before, and the register's three actions chosen by the two (T12 in
/// `docs/algorithm.md`: a stateful ALU compares at most two values). Both tables write the value
/// the chosen action compares (`md.link_v`), `link_range` last where a change is called for.
fn link_rule(pools: u32) -> Vec<Decl> {
    let mut d = vec![
        note(
            "
            The linked value a pool's new idle count calls to change: 0 (link) at or above
            link_at, 1 (unlink) at or below unlink_at. The set-up writes two entries a pool with a
            spine; a pool without one has none, and no link.
            ",
        ),
        Decl::Table(table(
            "link_range",
            st("link_range"),
            &["hdr.horus.pool_id: exact", "md.p_new: range"],
            &["set_link_a", "no_link_a"],
            "no_link_a",
            true,
            &(2 * pools).to_string(),
        )),
        // A task from the pool's spine (spine_x 0) shows the value the spine believes lost: its
        // idle-selected flag (qlen != 0) says the rack was linked. Any other pass (an idle add's
        // commit: spine_x 0xffff) shows none.
        keyed(
            "link_repair",
            &["md.spine_x: ternary", "hdr.horus.qlen: ternary"],
            &["(0, 0) : set_link_r(1)", "(0, _) : set_link_r(0)"],
            "set_link_r(7)",
        ),
    ];
    for (what, ra) in [
        ("change", "link_change_ra"),
        ("repair", "link_repair_ra"),
        ("both", "link_both_ra"),
    ] {
        d.push(action(
            &format!("link_{what}_act"),
            "",
            &format!("md.signal = {ra}.execute(hdr.horus.pool_id);"),
        ));
    }
    d.push(action("link_none", "", ""));
    // (a, 7) and (a, a): a change; (7, r): a repair; (a, 1 - a): both.
    d.push(keyed_in(
        st("idle_link"),
        Role::Leaf,
        "link_rule",
        &["md.link_a: exact", "md.link_r: exact"],
        &[
            "(0, 7) : link_change_act()",
            "(1, 7) : link_change_act()",
            "(0, 0) : link_change_act()",
            "(1, 1) : link_change_act()",
            "(7, 0) : link_repair_act()",
            "(7, 1) : link_repair_act()",
            "(0, 1) : link_both_act()",
            "(1, 0) : link_both_act()",
        ],
        "link_none()",
    ));
    d
}
