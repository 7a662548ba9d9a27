//! The ingress's apply tree: the pass by its kind, each branch applying its tables in the plan's
//! stage order.

use horus_model::config::Role;

use super::super::ir::*;

/// `if (c1) {..} else if (c2) {..} ... else {otherwise}`.
fn chain(arms: Vec<(&str, Vec<Stmt>)>, otherwise: Vec<Stmt>) -> Stmt {
    let mut rest = otherwise;
    for (cond, then) in arms.into_iter().rev() {
        rest = vec![when(cond, then, rest)];
    }
    rest.pop().expect("a chain has an arm")
}

/// The tables that end a first pass sending its task to the node it charged (`md.sel`): the
/// leaf's rack average and report rule, the connection a first packet claims, and the verdict,
/// in the plan's stage order (Tofino 1 goes through a pass's tables forward only, so the
/// connection comes here, before the stage-10 tables, and not after the pass's branches). A
/// first packet of a multi-packet task charges its first sample and so never resubmits.
fn task_end(leaf: bool) -> Vec<Stmt> {
    let claim = when(
        "hdr.horus.more_packets == 1",
        vec![
            apply("conn_insert"),
            when(
                "md.conn_claimed == 1",
                applies(&["conn_node_write"]),
                vec![],
            ),
        ],
        vec![],
    );
    if leaf {
        let mut s = applies(&["avg_task", "report_input"]);
        s.push(claim);
        s.extend(applies(&["report_rule", "out_sel"]));
        s
    } else {
        vec![claim, apply("out_sel")]
    }
}

/// A NEW_TASK's first pass, in the plan's stage order on every path. The leaf's link rule reads
/// the spine's view (`link_repair`, stage 2) before the first branch on `idle_ctl`'s word, the
/// pool's new idle count (`md.p_new`, stage 2: `link_range`, stage 3) after it, and its register
/// (stage 5) in each arm of the second, after the arm's stage-4 tables.
fn task_apply(leaf: bool) -> Vec<Stmt> {
    const IDLE: &str = "md.ctl[31:31] == 0 && md.ctl != 0";
    let only_leaf = |names: &[&str]| if leaf { applies(names) } else { vec![] };
    let mut s = vec![apply(if leaf { "ctl_pop" } else { "ctl_take" })];
    s.extend(only_leaf(&["link_repair"]));
    s.push(when(
        IDLE,
        applies(&["idle_take"]),
        applies(&["idle_keep", "members1_read", "members2_read"]),
    ));
    s.extend(only_leaf(&["link_range"]));
    let mut idle = applies(&["idle_read", "factor_idle"]);
    idle.extend(only_leaf(&["idle_index_clear", "link_rule"]));
    idle.extend(applies(&["pick_idle", "drift1_charge", "drift2_charge"]));
    idle.extend(task_end(leaf));
    let mut sampled = applies(&[
        "factor1",
        "factor2",
        "same_check",
        "load1_read",
        "load2_read",
    ]);
    sampled.extend(only_leaf(&["link_rule"]));
    sampled.push(apply("load_cmp"));
    sampled.push(when(
        "md.d21 == 0",
        applies(&["pick1"]),
        applies(&["pick2"]),
    ));
    sampled.push(when(
        "md.same == 0 || hdr.horus.more_packets == 1",
        applies(&["drift1_charge"]),
        applies(&["drift1_check"]),
    ));
    let mut charge = applies(&["drift2_charge"]);
    charge.extend(task_end(leaf));
    let mut resubmit = applies(&["drift2_read"]);
    resubmit.extend(only_leaf(&["avg_read"]));
    resubmit.extend(applies(&["queues", "queue_gap"]));
    resubmit.push(when(
        "md.q_gap[31:31] == 1",
        applies(&["win_other"]),
        applies(&["win_sel"]),
    ));
    sampled.push(when("md.d_sel == 0", charge, resubmit));
    s.push(when(IDLE, idle, sampled));
    s
}

/// The arms of the pass-by-kind chain for a leaf's replies and idle-add commits.
fn leaf_message_arms() -> Vec<(&'static str, Vec<Stmt>)> {
    let mut update = applies(&["load1_write", "load2_write"]);
    update.push(when(
        "md.kind == KIND_REPLY_IDLE",
        vec![
            apply("idle_index_check"),
            when(
                "md.idx != 0",
                applies(&["dup_reply"]),
                applies(&["add_resubmit"]),
            ),
        ],
        vec![],
    ));
    update.extend(applies(&[
        "pick_src",
        "drift1_reset",
        "drift2_reset",
        "avg_done",
        "report_input",
        "report_rule",
    ]));
    vec![(
        "md.kind == KIND_REPLY || md.kind == KIND_REPLY_IDLE",
        vec![chain(
            vec![
                ("md.pool_ok == 0", applies(&["reject_pool"])),
                ("md.node_ok == 0", applies(&["pass_reply"])),
            ],
            update,
        )],
    )]
}

/// A spine's pass checked for a known pool and node before `then`.
fn known(then: Vec<Stmt>) -> Vec<Stmt> {
    vec![chain(
        vec![
            ("md.pool_ok == 0", applies(&["reject_pool"])),
            ("md.node_ok == 0", applies(&["reject_node"])),
        ],
        then,
    )]
}

/// The arms of the pass-by-kind chain for a spine's load updates and idle adds.
fn spine_message_arms() -> Vec<(&'static str, Vec<Stmt>)> {
    vec![
        (
            "md.kind == KIND_LOAD_UPDATE",
            known(applies(&[
                "load1_write",
                "load2_write",
                "pick_src",
                "drift1_reset",
                "drift2_reset",
                "consume",
            ])),
        ),
        (
            "md.kind == KIND_IDLE_ADD",
            known(vec![
                apply("idle_index_check"),
                when(
                    "md.idx != 0",
                    applies(&["reject_duplicate"]),
                    applies(&["add_resubmit"]),
                ),
            ]),
        ),
    ]
}

/// The arms for the idle-add commits (and a spine's removals): `idle_ctl`, stage 1, early rungs
/// of the ladder.
fn ctl_arms(leaf: bool) -> Vec<(&'static str, Vec<Stmt>)> {
    if leaf {
        return vec![(
            "md.kind == KIND_ADD_COMMIT",
            applies(&[
                "ctl_push",
                "idle_push",
                "link_repair",
                "link_range",
                "idle_write",
                "idle_index_set",
                "link_rule",
                "avg_read",
            ]),
        )];
    }
    let remove = vec![
        apply("ctl_remove"),
        chain(
            vec![
                ("md.ctl < 0", applies(&["reject_locked"])),
                ("md.ctl == 0", applies(&["reject_not_member"])),
            ],
            vec![
                apply("remove_top"),
                apply("turn_remove"),
                apply("idle_read"),
                apply("idle_index_remove"),
                apply("last_check"),
                chain(
                    vec![
                        (
                            "md.idx == 0 || md.idx == IDLE_PENDING",
                            applies(&["remove_abort"]),
                        ),
                        ("md.last_x == 0", applies(&["remove_unlock"])),
                    ],
                    applies(&["remove_move"]),
                ),
            ],
        ),
    ];
    vec![
        (
            "md.kind == KIND_ADD_COMMIT",
            applies(&[
                "ctl_push",
                "idle_push",
                "idle_write",
                "idle_index_set",
                "consume",
            ]),
        ),
        ("md.kind == KIND_REMOVE", known(remove)),
        (
            "md.kind == KIND_REMOVE_SECOND",
            vec![
                apply("ctl_finish"),
                apply("remove_finish"),
                when(
                    "md.resub.value[31:16] != 1",
                    applies(&["idle_write", "idle_index_set"]),
                    vec![],
                ),
                apply("consume"),
            ],
        ),
    ]
}

/// `role`'s apply block.
pub(super) fn apply_tree(role: Role) -> Vec<Stmt> {
    let leaf = role == Role::Leaf;
    let mut header = applies(&[
        "classify",
        "pool_cfg",
        "node_cfg",
        "draw",
        "draw_conn_idx",
        "conn_time",
        "header_values",
    ]);
    let mut decode = applies(&["decode"]);
    if !leaf {
        decode.extend(applies(&["decode_finish", "decode_pos"]));
    }
    header.push(when("ig_intr_md.resubmit_flag == 1", decode, vec![]));
    if leaf {
        header.push(when(
            "md.spine_session != 0 && (hdr.horus.pkt_type == PKT_NEW_TASK || hdr.horus.pkt_type == PKT_NEW_TASK_RANDOM)",
            applies(&["spine_check"]),
            applies(&["spine_clear"]),
        ));
    }

    let mut random = applies(&[
        "members1_read",
        "factor1",
        "pick_random",
        "drift1_charge",
        "drift2_charge",
    ]);
    random.extend(task_end(leaf));
    let task = vec![chain(
        vec![
            ("md.pool_ok == 0", applies(&["reject_pool"])),
            ("md.n == 0", applies(&["reject_empty"])),
        ],
        vec![
            apply("sample1"),
            apply("sample2"),
            when("md.kind == KIND_RANDOM", random, task_apply(leaf)),
        ],
    )];
    let mut second = applies(&[
        "w_add_one",
        "w_add_sum",
        "load1_add",
        "load2_add",
        "pick_second",
        "drift1_settle",
        "drift2_settle",
    ]);
    if leaf {
        second.extend(applies(&["avg_task", "report_input", "report_rule"]));
    }
    second.push(apply("out_sel"));
    let continuation = vec![chain(
        vec![("md.pool_ok == 0", applies(&["reject_pool"]))],
        vec![
            apply("conn_follow"),
            when(
                "md.conn_hit == 1",
                applies(&["conn_node_read"]),
                applies(&["conn_miss"]),
            ),
        ],
    )];

    let mut arms = vec![
        (
            "hdr.ipv4.isValid() && md.csum_err",
            applies(&["reject_checksum"]),
        ),
        (
            "!hdr.horus.isValid()",
            vec![when(
                "hdr.udp.isValid() && hdr.udp.dst_port == HORUS_UDP_PORT",
                applies(&["reject_malformed"]),
                applies(&["pass_through"]),
            )],
        ),
        (
            "md.len_gap != 20 || md.udp_short != 0",
            applies(&["reject_short"]),
        ),
        ("md.kind == KIND_TASK || md.kind == KIND_RANDOM", task),
    ];
    arms.extend(ctl_arms(leaf));
    arms.push(("md.kind == KIND_TASK_SECOND", second));
    arms.push(("md.kind == KIND_CONTINUATION", continuation));
    arms.extend(if leaf {
        leaf_message_arms()
    } else {
        spine_message_arms()
    });
    arms.extend([
        (
            "md.kind == 0 || md.kind == KIND_REJECT",
            applies(&["reject_kind"]),
        ),
        ("md.kind == KIND_CONTROL", applies(&["to_control"])),
    ]);
    let by_kind = chain(
        arms,
        vec![when(
            "md.kind == KIND_PASS_THROUGH",
            applies(&["pass_through"]),
            vec![],
        )],
    );

    let mut s = vec![
        apply("switch_cfg"),
        when("hdr.horus.isValid()", header, vec![]),
        Stmt::Comment(
            "The pass by its kind: a rung's condition takes one of its stage's 16 logical tables, so\n\
             the kinds whose first register is idle_ctl (stage 1) come first and the passes that\n\
             only end come last."
                .into(),
        ),
        by_kind,
    ];
    if leaf {
        s.push(when(
            "md.signal != 0 || md.report != 0",
            applies(&["signal"]),
            vec![],
        ));
    }
    s.push(when(
        "md.verdict == V_NODE",
        applies(&["node_addr", "node_mark"]),
        applies(&["done"]),
    ));
    s
}
