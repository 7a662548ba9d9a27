//! The ingress control of both Tofino programs, as typed data ([`super::ir`]): the declarations
//! in program order (externs, registers with their register actions, the actions and tables of
//! each stage, the tables that execute register actions, the computing tables) and the apply
//! tree. The facts come from their homes: the stages from [`super::plan`], the sizes from the
//! preset, the drop reasons and the classification from the model ([`super::emit`]); the control
//! logic is written here, one scheduler for both roles as in the model.
//!
//! The program keeps one discipline that the checker ([`super::check`]) holds it to: every
//! computation sits in an action of a table with a stage, the apply tree only branches and
//! applies tables, and each table is applied at one place ([`unshare`]).

mod apply;
mod tables;

use horus_model::config::{Role, Sizes};

use super::emit::st;
use super::ir::*;
use super::ra_tables::register_tables;
use apply::apply_tree;
pub(super) use tables::ra_table;
use tables::{classify_entries, computing_tables, table};

/// The externs other than registers: the drop and pass counters, the random unit and the hash
/// units both roles use.
fn externs() -> Vec<Decl> {
    vec![
        extern_(
            "Counter",
            "bit<64>, bit<8>",
            "256, CounterType_t.PACKETS",
            "drops",
        ),
        extern_(
            "Counter",
            "bit<64>, bit<8>",
            "16, CounterType_t.PACKETS",
            "passes",
        ),
        extern_("Random", "bit<32>", "", "rng"),
        extern_("Hash", "bit<16>", "HashAlgorithm_t.CRC16", "conn_hash"),
        extern_(
            "Hash",
            "bit<32>",
            "HashAlgorithm_t.IDENTITY",
            "conn_time_hash",
        ),
        note(
            "
            Widening 16 bits to 32 through the hash unit (identity): a Tofino ALU reads and writes
            containers of one size.
        ",
        ),
        extern_("Hash", "bit<32>", "HashAlgorithm_t.IDENTITY", "widen_w"),
        extern_("Hash", "bit<32>", "HashAlgorithm_t.IDENTITY", "widen1"),
        extern_("Hash", "bit<32>", "HashAlgorithm_t.IDENTITY", "widen2"),
        extern_("Hash", "bit<32>", "HashAlgorithm_t.IDENTITY", "widen_idle"),
        Decl::Blank,
        note("---- Registers, with their register actions. ----"),
        Decl::Blank,
        note(
            "
            idleCtl: the removal lock (bit 31) and p. The spine's turn, which the model keeps in
            idleCtl too, is the spine's register spine_turn: a stateful ALU compares one word of its
            register at a time, and the turn's wrap compares it with p.
        ",
        ),
        register_decl("idle_ctl", "int<32>", "bit<16>", "POOLS"),
        Decl::Blank,
        note(
            "members1, members2: the pool's nodes as node << 16 | factor - 1 (the control plane).",
        ),
        register_decl("members1", "bit<32>", "bit<16>", "NODES"),
        ra("members1_ra", "members1", "bit<32>", "rv = v;"),
        register_decl("members2", "bit<32>", "bit<16>", "NODES"),
        ra("members2_ra", "members2", "bit<32>", "rv = v;"),
        Decl::Blank,
        note("idleList: the idle nodes, node << 16 | factor - 1, at base .. base + p."),
        register_decl("idle_list", "bit<32>", "bit<16>", "NODES"),
        ra("idle_read_ra", "idle_list", "bit<32>", "rv = v;"),
        ra(
            "idle_write_ra",
            "idle_list",
            "bit<32>",
            "
            v = md.push_ref;
            rv = v;
        ",
        ),
        Decl::Blank,
        note("idleIndex: 0 absent, IDLE_PENDING pending, i + 1 member at position i."),
        register_decl("idle_index", "bit<16>", "bit<16>", "NODES"),
        ra(
            "idle_index_check_ra",
            "idle_index",
            "bit<16>",
            "
            rv = v;
            if (v == 0) {
                v = IDLE_PENDING;
            }
        ",
        ),
        ra(
            "idle_index_set_ra",
            "idle_index",
            "bit<16>",
            "
            v = md.p_new;
            rv = v;
        ",
        ),
        Decl::Blank,
    ]
}

/// The connection tables' registers.
fn conn_registers() -> Vec<Decl> {
    vec![
        note(
            "
            conn, the multi-packet connection table: lo = pool << 16 | taskID, hi = when the entry
            expires, in 65.536 us ticks of the ingress timestamp (0: free); an entry whose hi is
            below the pass's time is free. A first packet claims a free entry or its own (rv 1) and
            a live entry of another task is kept; a continuation finds its live entry (rv 1), the
            last one frees it. Each register action keeps to two comparisons and no slice.
        ",
        ),
        Decl::Register(Register {
            init: Some("{0, 0}".into()),
            ..register("conn", "pair_t", "bit<16>", "CONN_ENTRIES")
        }),
        ra(
            "conn_insert_ra",
            "conn",
            "bit<8>",
            "
            rv = 0;
            if (v.lo == md.conn_key || v.hi < md.now_c) {
                v.lo = md.conn_key;
                v.hi = md.now_c + CONN_TIMEOUT;
                rv = 1;
            }
        ",
        ),
        ra(
            "conn_follow_ra",
            "conn",
            "bit<8>",
            "
            rv = 0;
            if (v.lo == md.conn_key && v.hi >= md.now_c) {
                rv = 1;
            }
        ",
        ),
        ra(
            "conn_last_ra",
            "conn",
            "bit<8>",
            "
            rv = 0;
            if (v.lo == md.conn_key && v.hi >= md.now_c) {
                v.hi = 0;
                rv = 1;
            }
        ",
        ),
        note(
            "
            conn_node: the node of each connection entry, written when a first packet claims the
            entry and read by its continuations, one stage after conn decided.
        ",
        ),
        register_decl("conn_node", "bit<16>", "bit<16>", "CONN_ENTRIES"),
        ra(
            "conn_node_write_ra",
            "conn_node",
            "bit<16>",
            "
            v = md.sel;
            rv = 0;
        ",
        ),
        ra("conn_node_read_ra", "conn_node", "bit<16>", "rv = v;"),
        Decl::Blank,
    ]
}

/// The leaf's own registers beside the shared ones (the link rule's: [`link_registers`]).
fn leaf_registers() -> Vec<Decl> {
    vec![
        note("A leaf's pop takes the worker out of idleIndex."),
        ra(
            "idle_index_clear_ra",
            "idle_index",
            "bit<16>",
            "
            v = 0;
            rv = 0;
        ",
        ),
        note(
            "A leaf pops the top idle worker: rv = the word before the pop (p; negative: locked).",
        ),
        ra(
            "ctl_pop_ra",
            "idle_ctl",
            "int<32>",
            "
            rv = v;
            if (v > 0) {
                v = v - 1;
            }
        ",
        ),
        note("An idle add's commit pushes: rv = the word before the push (p: its position)."),
        ra(
            "ctl_push_ra",
            "idle_ctl",
            "int<32>",
            "
            rv = v;
            v = v + 1;
        ",
        ),
        Decl::Blank,
        note("The rack average in 16.16 (lo) and the tasks it counts (hi)."),
        register_decl("pool_avg", "pair_t", "bit<16>", "POOLS"),
        ra(
            "avg_task_ra",
            "pool_avg",
            "bit<32>",
            "
            v.lo = v.lo + md.unit;
            v.hi = v.hi + 1;
            rv = v.lo;
        ",
        ),
        ra(
            "avg_done_ra",
            "pool_avg",
            "bit<32>",
            "
            if (v.hi > 0) {
                v.lo = v.lo |-| md.unit;
                v.hi = v.hi - 1;
            }
            rv = v.lo;
        ",
        ),
        ra("avg_read_ra", "pool_avg", "bit<32>", "rv = v.lo;"),
        Decl::Blank,
        note(
            "
            The report rule. lo: the last report (moved by the spine's tasks since, which the spine
            counted itself); hi: lo + report_delta - 1. An average above hi, or one that
            report_delta - 1 more still leaves below lo, has moved by report_delta and sends a load
            update, unless an idle message leaves with this pass. The table `report_rule` picks the
            register action by the pass (a task from the spine: move; no idle message: check), so
            that each keeps to a stateful ALU's two comparisons; `report_input` puts in md.report_x
            what the action reads beside the average: the pool's unit (move), or the average +
            report_delta - 1 (check: the new hi). A stateful ALU reads two fields and adds a field
            only to a register word, so the sum is made the stage before.
        ",
        ),
        register_decl("pool_report", "pair_t", "bit<16>", "POOLS"),
        ra(
            "report_move_ra",
            "pool_report",
            "bit<8>",
            "
            v.lo = v.lo + md.report_x;
            v.hi = v.hi + md.report_x;
            rv = 0;
        ",
        ),
        ra(
            "report_check_ra",
            "pool_report",
            "bit<8>",
            "
            rv = 0;
            if (md.avg > v.hi || md.report_x < v.lo) {
                v.lo = md.avg;
                v.hi = md.report_x;
                rv = 1;
            }
        ",
        ),
    ]
}

/// The spine's own registers.
fn spine_registers() -> Vec<Decl> {
    vec![
        note("
            A spine's task reads p (negative: the removal lock is held); where it is positive the
            task takes the idle rack whose turn it is (turn_take_ra).
        "),
        ra("ctl_take_ra", "idle_ctl", "int<32>", "rv = v;"),
        note("An idle add's commit pushes: rv = the word before the push (p: its position)."),
        ra("ctl_push_ra", "idle_ctl", "int<32>", "
            rv = v;
            v = v + 1;
        "),
        note("
            A removal's first pass: unless locked or empty, take the lock and the top
            (p - 1 + LOCK = p + 0x7fffffff); a turn at the top goes round to 1 (turn_remove_ra). rv =
            the word before.
        "),
        ra("ctl_remove_ra", "idle_ctl", "int<32>", "
            rv = v;
            if (v > 0) {
                v = v + 0x7fffffff;
            }
        "),
        note("
            spineTurn: the idle rack whose turn it is (1..p, from 1), as the spine's tasks take them;
            it goes on by one and from p round to 1, compared with p (md.ctl, read the stage before).
            rv is the turn's slot in the idle list, base - 1 + turn.
        "),
        Decl::Register(Register {
            init: Some("1".into()),
            ..register("spine_turn", "bit<16>", "bit<16>", "POOLS")
        }),
        ra("turn_take_ra", "spine_turn", "bit<16>", "
            rv = v + md.base_m1;
            if (v >= (bit<16>)(bit<32>)md.ctl) {
                v = 1;
            } else {
                v = v + 1;
            }
        "),
        note("A removal takes the top: a turn there goes round to 1."),
        Decl::RegisterAction(RegisterAction {
            returns: false,
            ..register_action(
                "turn_remove_ra",
                "spine_turn",
                "bit<16>",
                "
                    if (v >= (bit<16>)(bit<32>)md.ctl) {
                        v = 1;
                    }
                ",
            )
        }),
        note("
            A removal's second pass releases the lock (+LOCK) and, aborting, pushes the former top
            back (+1): md.finish_add. rv = the word before (its p is where an abort pushes).
        "),
        ra("ctl_finish_ra", "idle_ctl", "int<32>", "
            rv = v;
            v = v + (int<32>)md.finish_add;
        "),
        ra("idle_index_remove_ra", "idle_index", "bit<16>", "
            rv = v;
            if (v != 0 && v != IDLE_PENDING) {
                v = 0;
            }
        "),
    ]
}

/// Stage 0 to 5's actions and the configuration tables.
fn early_stages(role: Role, sizes: &Sizes) -> Vec<Decl> {
    let leaf = role == Role::Leaf;
    // A leaf's load list holds 16.16 loads from a worker's queue length; a spine's, the rack
    // average a leaf reports (qlen and seq_num its 32 bits).
    let new_load = if leaf {
        "hdr.horus.qlen ++ 16w0"
    } else {
        "hdr.horus.qlen ++ hdr.horus.seq_num"
    };
    let sample_entries =
        (u32::from(sizes.pools) * u32::from(horus_model::rng::TOFINO_DRAWS)).to_string();
    vec![
        note("---- Stage 0: the switch, the pass's kind, the pool and the node, the random draw. ----"),
        Decl::Blank,
        action("set_switch", "PortId_t pass_port, PortId_t control_port, bit<16> switch_id", "
            md.pass_port = pass_port;
            md.control_port = control_port;
            md.switch_id = switch_id;
            md.from_idle = 0;
            hdr.bridge.setValid();
            hdr.bridge.kind = BRIDGE_NORMAL;
            md.verdict = V_PASS_THROUGH;
            md.signal = 0;
            md.report = 0;
        "),
        Decl::Table(table("switch_cfg", 0, &[], &["set_switch"], "set_switch(0, 0, 0)", false, "1")),
        Decl::Blank,
        action("set_kind", "bit<8> kind, bit<8> reason", "
            md.kind = kind;
            md.reason = reason;
            passes.count(kind);
        "),
        Decl::Table(Table {
            entries: classify_entries(role),
            ..table(
                "classify",
                0,
                &[
                    "hdr.horus.pkt_type: exact",
                    "hdr.horus.more_packets: exact",
                    "ig_intr_md.resubmit_flag: exact",
                ],
                &["set_kind"],
                "set_kind(0, DROP_MALFORMED)",
                true,
                "64",
            )
        }),
        Decl::Blank,
        note("poolCfg: the pool's slot region, member count and parameters (the control plane)."),
        action("set_pool", "bit<16> base, bit<16> base_m1, bit<16> n, bit<16> spine_id, bit<16> spine_node, MirrorId_t spine_session, bit<32> report_delta_m1, bit<32> unit", "
            md.pool_ok = 1;
            md.base = base;
            md.base_m1 = base_m1;
            md.n = n;
            md.spine_id = spine_id;
            md.spine_node = spine_node;
            md.spine_session = spine_session;
            md.report_delta_m1 = report_delta_m1;
            md.unit = unit;
        "),
        action("no_pool", "", "md.pool_ok = 0;"),
        Decl::Table(table(
            "pool_cfg",
            st("pool_cfg"),
            &["hdr.horus.pool_id: exact"],
            &["set_pool", "no_pool"],
            "no_pool",
            true,
            &sizes.pools.to_string(),
        )),
        Decl::Blank,
        note("node: the active nodes of each pool, and their additive factors - 1 (the control plane)."),
        action("set_node", "bit<16> factor_m1", "
            md.node_ok = 1;
            md.node_aux = factor_m1;
        "),
        action("no_node", "", "md.node_ok = 0;"),
        Decl::Table(table(
            "node_cfg",
            st("node_cfg"),
            &["hdr.horus.src_id: exact", "hdr.horus.pool_id: exact"],
            &["set_node", "no_node"],
            "no_node",
            true,
            &sizes.nodes.to_string(),
        )),
        Decl::Blank,
        note("
            A keyless table passes at most 32 bits from the random or hash unit: the draw, the
            connection's index, its time and the header's values are four tables.
        "),
        action("draw_values", "", "
            bit<32> r = rng.get();
            md.r1 = r[15:8];
            md.r2 = r[31:24];
        "),
        action("draw_conn", "", "
            md.conn_idx = conn_hash.get({hdr.horus.pool_id, hdr.horus.seq_num}) & CONN_MASK;
        "),
        note("
            The time in conn's 65.536 us ticks, through the hash unit: copied from the timestamp,
            whose containers the leaf's md.now (1.024 us ticks) slices at other bits, it would lie
            across two containers.
        "),
        action("read_conn_time", "", "
            md.now_c = conn_time_hash.get({ig_intr_md.ingress_mac_tstamp[47:16]});
        "),
        action(
            "read_header",
            "",
            &format!(
                "
                md.now = ig_intr_md.ingress_mac_tstamp[41:10];
                md.len_gap = hdr.ipv4.total_len - hdr.udp.hdr_length;
                md.udp_short = 19 |-| hdr.udp.hdr_length;
                md.conn_key = hdr.horus.pool_id ++ hdr.horus.seq_num;
                md.new_load = {new_load};
                "
            ),
        ),
        Decl::Blank,
        note("
            The winner's load and its additive factor less one, apart: a Tofino action does one
            operation a field, on containers of one size, so w_add_one and w_add_sum add them up in
            the next stages. The factor is widened by the hash unit. The drift the first pass saw
            goes to diff, the field drift1's check compares with: a stateful ALU has two PHV inputs
            for all of its register's actions (sel_factor and diff).
        "),
        action("decode_second_pass", "", "
            md.w_add = md.resub.value;
            md.w_factor = widen_w.get({md.resub.aux});
            md.diff = md.resub.value;
        "),
        action("add_one", "", "md.w_factor = md.w_factor + 1;"),
        action("add_factor", "", "md.w_add = md.w_add + md.w_factor;"),
        Decl::Blank,
        note("
            ---- Stage 1: the samples, from exact-match tables the control plane writes (a pool and
            an 8-bit draw to the slot base + floor(draw * n / 256): 256 entries a pool, in SRAM), and
            idleCtl. ----
        "),
        Decl::Blank,
        action("set_slot1", "bit<16> slot", "md.slot1 = slot;"),
        action("set_slot2", "bit<16> slot", "md.slot2 = slot;"),
        Decl::Table(table(
            "sample1",
            st("sample1"),
            &["hdr.horus.pool_id: exact", "md.r1: exact"],
            &["set_slot1"],
            "set_slot1(0)",
            false,
            &sample_entries,
        )),
        Decl::Table(table(
            "sample2",
            st("sample2"),
            &["hdr.horus.pool_id: exact", "md.r2: exact"],
            &["set_slot2"],
            "set_slot2(0)",
            false,
            &sample_entries,
        )),
        Decl::Blank,
        action("reject", "bit<8> reason", "
            md.verdict = V_DROP;
            md.reason = reason;
        "),
        action("reject_with_reason", "", "md.verdict = V_DROP;"),
        action("to_pass_through", "", "
            md.verdict = V_PASS_THROUGH;
            md.reason = DROP_NONE;
        "),
        action("to_control_port", "", "md.verdict = V_CONTROL;"),
        Decl::Blank,
        note("---- Stage 2: where the pass works in the idle list. ----"),
        Decl::Blank,
        action(
            "take_idle",
            "",
            if leaf {
                "
                md.idle_slot = md.base_m1 + (bit<16>)(bit<32>)md.ctl;
                md.p_new = (bit<16>)(bit<32>)md.ctl - 1;
                "
            } else {
                "md.idle_slot = turn_take_ra.execute(hdr.horus.pool_id);"
            },
        ),
        action("keep_idle", "", "md.p_new = (bit<16>)(bit<32>)md.ctl;"),
        action("push_at", "", "
            md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl;
            md.p_new = (bit<16>)(bit<32>)md.ctl + 1;
            md.push_ref = md.resub.node ++ md.resub.aux;
        "),
        Decl::Blank,
        note("---- Stages 3 to 5: the samples' loads compared. ----"),
        Decl::Blank,
        action("widen_factor1", "", "md.f1 = widen1.get({md.m1[15:0]});"),
        action("widen_factor2", "", "md.f2 = widen2.get({md.m2[15:0]});"),
        action("widen_factor_idle", "", "md.f1 = widen_idle.get({md.n_ref[15:0]});"),
        action("check_same", "", "md.same = md.m1[31:16] ^ md.m2[31:16];"),
        action("compare_loads", "", "
            md.d12 = md.l2 |-| md.l1;
            md.d21 = md.l1 |-| md.l2;
        "),
        action("resubmit_add", "", "
            ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
            md.verdict = V_RESUBMIT;
            md.resub.setValid();
            md.resub.node = hdr.horus.src_id;
            md.resub.aux = md.node_aux;
            md.resub.value = 0;
        "),
        Decl::Blank,
    ]
}

fn leaf_actions() -> Vec<Decl> {
    vec![
        action(
            "check_spine",
            "",
            "md.spine_x = hdr.horus.src_id ^ md.spine_id;",
        ),
        action("clear_spine", "", "md.spine_x = 0xffff;"),
        action(
            "forward_reply",
            "bit<8> reason",
            "
            md.verdict = V_PASS_THROUGH;
            md.reason = reason;
        ",
        ),
        note(
            "
            The link rule's inputs (7: none, a value the flag never holds), and the linked value its
            register action compares (link_v): link_r, unless link_a calls for a change (link_range,
            the stage after link_repair, writes it then).
        ",
        ),
        action(
            "set_link_a",
            "bit<16> a",
            "
            md.link_a = a;
            md.link_v = a;
        ",
        ),
        action("no_link_a", "", "md.link_a = 7;"),
        action(
            "set_link_r",
            "bit<16> r",
            "
            md.link_r = r;
            md.link_v = r;
        ",
        ),
        note(
            "
            The signal leaves as a mirrored copy; the egress writes its headers. An idle message
            goes first; a load report it displaces leaves with a later pass.
        ",
        ),
        action(
            "mirror_signal",
            "bit<7> sig_type",
            "
            ig_dprsr_md.mirror_type = MIRROR_SIGNAL;
            md.session = md.spine_session;
            md.mirror_kind = BRIDGE_SIGNAL;
            hdr.bridge.sig_type = sig_type;
            hdr.bridge.pool_id = hdr.horus.pool_id;
            hdr.bridge.src_id = md.spine_node;
            hdr.bridge.spine_id = md.spine_id;
            hdr.bridge.load = md.avg;
        ",
        ),
    ]
}

fn spine_actions() -> Vec<Decl> {
    vec![
        note("
            A removal's second pass: the position + 1 (resub.value[15:0]) read apart, by the hash
            unit, from the 32-bit value a task's second pass adds: a Tofino ALU reads and writes
            containers of one size. Its first pass builds the value the same way.
        "),
        extern_("Hash", "bit<16>", "HashAlgorithm_t.IDENTITY", "pos_hash"),
        extern_("Hash", "bit<32>", "HashAlgorithm_t.IDENTITY", "move_hash"),
        action("read_pos", "", "md.pos = pos_hash.get({md.resub.value[15:0]});"),
        note("
            What a removal's finish adds to idle_ctl, chosen by a table of its own (decode_finish): an
            action of a table keyed on resub.value may not read it (the compiler makes the matched
            half a constant).
        "),
        action("finish_normal", "", "md.finish_add = LOCK;"),
        action("finish_aborted", "", "md.finish_add = LOCK + 1;"),
        action("consume_message", "", "
            md.verdict = V_DROP;
            md.reason = DROP_NONE;
        "),
        action("remove_at_top", "", "md.idle_slot = md.base_m1 + (bit<16>)(bit<32>)md.ctl;"),
        action("finish_at", "", "
            md.idle_slot = md.base_m1 + md.pos;
            md.p_new = md.pos;
            md.push_ref = md.resub.node ++ md.resub.aux;
        "),
        action("finish_at_top", "", "
            md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl;
            md.p_new = (bit<16>)(bit<32>)md.ctl + 1;
            md.push_ref = md.resub.node ++ md.resub.aux;
        "),
        action("check_last", "", "md.last_x = md.n_ref[31:16] ^ hdr.horus.src_id;"),
        action("remove_resubmit_unlock", "", "
            ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
            md.verdict = V_RESUBMIT;
            md.resub.setValid();
            md.resub.node = md.n_ref[31:16];
            md.resub.aux = md.n_ref[15:0];
            md.resub.value = 32w1 << 16;
        "),
        action("remove_resubmit_move", "", "
            ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
            md.verdict = V_RESUBMIT;
            md.resub.setValid();
            md.resub.node = md.n_ref[31:16];
            md.resub.aux = md.n_ref[15:0];
            md.resub.value = move_hash.get({16w2, md.idx});
        "),
        action("remove_resubmit_abort", "", "
            ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
            md.verdict = V_RESUBMIT;
            md.reason = DROP_IDLE_REMOVE_NOT_MEMBER;
            md.resub.setValid();
            md.resub.node = md.n_ref[31:16];
            md.resub.aux = md.n_ref[15:0];
            md.resub.value = 32w3 << 16;
        "),
    ]
}

/// Stage 6's first actions: the picks between the samples.
fn stage6_actions() -> Vec<Decl> {
    let mut d = vec![
        note("---- Stage 6: the node the pass charges. ----"),
        Decl::Blank,
    ];
    d.extend(pick_samples());
    d
}

/// Stages 9 to 11: the corrected queues, the winner, the node's address, the pass's end.
fn late_stages(role: Role, sizes: &Sizes) -> Vec<Decl> {
    let leaf = role == Role::Leaf;
    vec![
        action(
            "pick_idle_node",
            "",
            "
            md.sel = md.n_ref[31:16];
            md.sel_factor = md.f1 + 1;
            md.from_idle = 1;
        ",
        ),
        action(
            "pick_random_node",
            "",
            "
            md.sel = md.m1[31:16];
            md.sel_factor = md.f1 + 1;
            md.from_idle = 0;
        ",
        ),
        action("pick_src_node", "", "md.sel = hdr.horus.src_id;"),
        action(
            "pick_winner",
            "",
            "
            md.sel = md.resub.node;
            md.from_idle = 0;
        ",
        ),
        Decl::Blank,
        note(
            "---- Stages 9 to 11: the corrected queues and the winner a second pass charges. ----",
        ),
        Decl::Blank,
        action(
            "corrected_queues",
            "",
            "
            md.verdict = V_RESUBMIT;
            md.q_sel = md.l_sel + (bit<32>)md.d_sel;
            md.q_other = md.l_other + (bit<32>)md.d_other;
        ",
        ),
        action("gap_of_queues", "", "md.q_gap = md.q_other - md.q_sel;"),
        resubmit_winner("sel"),
        resubmit_winner("other"),
        action(
            "out_to_sel",
            "",
            "
            md.verdict = V_NODE;
            md.out_node = md.sel;
        ",
        ),
        Decl::Blank,
        note(
            "---- Stage 11: nodeAddr, the rewrite towards the node; where everything else goes. ----",
        ),
        Decl::Blank,
        // A spine writes its own ID as the task's source.
        action(
            "to_node",
            &format!(
                "PortId_t port, bit<48> mac, bit<32> ip, bit<16> udp_port, bit<16> dst_id{}",
                if leaf { "" } else { ", bit<16> src_id" }
            ),
            &format!(
                "
                ig_tm_md.ucast_egress_port = port;
                hdr.ethernet.dst_addr = mac;
                hdr.ipv4.dst_addr = ip;
                hdr.udp.dst_port = udp_port;
                hdr.udp.checksum = 0;
                hdr.horus.dst_id = dst_id;
                {}
                ",
                if leaf {
                    ""
                } else {
                    "hdr.horus.src_id = src_id;"
                }
            ),
        ),
        note(
            "
            Whether the node was idle, in qlen: apart from to_node, whose other writes are action
            data (a Tofino action writes a container from action data or from one PHV source).
        ",
        ),
        action("mark_from_idle", "", "hdr.horus.qlen = md.from_idle;"),
        action(
            "node_gone",
            "",
            "
            ig_dprsr_md.drop_ctl = 1;
            drops.count(DROP_CONTINUATION_MISS);
        ",
        ),
        Decl::Table(table(
            "node_addr",
            st("node_addr"),
            &["md.out_node: exact", "hdr.horus.pool_id: exact"],
            &["to_node", "node_gone"],
            "node_gone",
            true,
            &sizes.nodes.to_string(),
        )),
        Decl::Blank,
        action(
            "finish_pass",
            "",
            "
            ig_tm_md.ucast_egress_port = md.pass_port;
            drops.count(md.reason);
        ",
        ),
        action(
            "finish_control",
            "",
            "
            ig_tm_md.ucast_egress_port = md.control_port;
            drops.count(md.reason);
        ",
        ),
        action(
            "finish_drop",
            "",
            "
            ig_tm_md.ucast_egress_port = md.pass_port;
            ig_dprsr_md.drop_ctl = 1;
            drops.count(md.reason);
        ",
        ),
        Decl::Blank,
        note("---- The tables that execute register actions, and the computing tables. ----"),
        Decl::Blank,
    ]
}

/// The two copies of the load and drift lists, with their register actions: what both copies
/// do, and what only one does (the drift check on the first, reading the other sample's drift
/// on the second).
fn copies() -> Vec<Decl> {
    let mut d = vec![note("loadList1, loadList2: 16.16 loads.")];
    for k in [1, 2] {
        let reg = format!("load{k}");
        d.push(register_decl(&reg, "bit<32>", "bit<16>", "NODES"));
        for (what, body) in [
            ("read", "rv = v;"),
            ("write", "v = md.new_load;\nrv = v;"),
            ("add", "v = v + md.w_add;\nrv = v;"),
        ] {
            d.push(ra(&format!("{reg}_{what}_ra"), &reg, "bit<32>", body));
        }
    }
    d.push(Decl::Blank);
    d.push(note(
        "driftList1, driftList2: signed 16.16. The check charges sel when its drift is within the\n\
         load difference (rv 0), else returns the drift (then above the difference, never 0).",
    ));
    for k in [1, 2] {
        let reg = format!("drift{k}");
        d.push(register_decl(&reg, "int<32>", "bit<16>", "NODES"));
        let own = if k == 1 {
            (
                "check",
                "
                if (v <= (int<32>)md.diff) {
                    v = v + (int<32>)md.sel_factor;
                    rv = 0;
                } else {
                    rv = v;
                }
                ",
            )
        } else {
            ("read", "rv = v;")
        };
        for (what, body) in [
            own,
            ("charge", "v = v + (int<32>)md.sel_factor;\nrv = 0;"),
            ("reset", "v = 0;\nrv = 0;"),
            ("settle", "v = v - (int<32>)md.diff;\nrv = 0;"),
        ] {
            d.push(ra(&format!("{reg}_{what}_ra"), &reg, "int<32>", body));
        }
    }
    d.push(Decl::Blank);
    d
}

/// The leaf's `idle_link` register and the link rule's three register actions (T12): a change, a
/// repair, and both, built from the same two outcomes so that they cannot drift apart.
fn link_registers() -> Vec<Decl> {
    const CHANGE: &str = "v.lo = 1 - v.lo;\nv.hi = (int<32>)md.now + REPAIR_GAP;\nrv = 1;";
    const REPAIR: &str = "v.hi = (int<32>)md.now + REPAIR_GAP;\nrv = 1;";
    const DUE: &str = "(int<32>)md.now - v.hi >= 0";
    // The one linked value each action compares (md.link_v: link_a for a change or both,
    // link_r for a repair), so that the register's inputs are two fields, link_v and the time.
    const LINKED: &str = "v.lo == (int<32>)(bit<32>)md.link_v";
    let then = |body: &str| -> String { body.lines().map(|l| format!("    {l}\n")).collect() };
    let mut d = vec![
        note(
            "
            The link rule and the repair of lost idle messages (decisions 6 and 17; T12). lo: linked;
            hi: the earliest time of a repair, in 1.024 us ticks, compared signed with the pass's
            time (a repair is due when the difference is not negative). The table link_rule runs one
            of three actions by md.link_a, the linked value that calls for a change (7: none), and
            md.link_r, the one a task from the spine shows the spine lost (7: none): a change, a
            repair, or both where link_r is link_a's other value; each compares two values at most,
            as a stateful ALU does, and reads two fields, its two inputs: md.link_v, the linked value
            it compares (link_a for a change or both, link_r for a repair), and the time. rv: 1 an
            idle message (the register's actions return one constant), 0 none; the message's type
            follows from link_a and link_r.
            ",
        ),
        register_decl("idle_link", "ipair_t", "bit<16>", "POOLS"),
    ];
    for (name, body) in [
        (
            "link_change_ra",
            format!("rv = 0;\nif ({LINKED}) {{\n{}}}", then(CHANGE)),
        ),
        (
            "link_repair_ra",
            format!("rv = 0;\nif ({LINKED} && {DUE}) {{\n{}}}", then(REPAIR)),
        ),
        (
            "link_both_ra",
            format!(
                "rv = 0;\nif ({LINKED}) {{\n{}}} else if ({DUE}) {{\n{}}}",
                then(CHANGE),
                then(REPAIR)
            ),
        ),
    ] {
        d.push(ra(name, "idle_link", "bit<8>", &body));
    }
    d.push(Decl::Blank);
    d
}

/// The action that resubmits a task to charge the sample `which` (`sel` or `other`) with the
/// drift the first pass read for it.
fn resubmit_winner(which: &str) -> Decl {
    action(
        &format!("resubmit_{which}"),
        "",
        &format!(
            "
            ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
            md.resub.setValid();
            md.resub.node = md.{which};
            md.resub.aux = md.{which}_aux;
            md.resub.value = (bit<32>)md.d_{which};
            "
        ),
    )
}

/// The two actions that pick between the samples: `pick_first` charges sample 1 (`sel`) and
/// keeps sample 2 as the other, `pick_second_sample` the reverse.
fn pick_samples() -> Vec<Decl> {
    [("pick_first", 1, 2), ("pick_second_sample", 2, 1)]
        .iter()
        .map(|(name, s, o)| {
            action(
                name,
                "",
                &format!(
                    "
                    md.sel = md.m{s}[31:16];
                    md.sel_factor = md.f{s} + 1;
                    md.sel_aux = md.m{s}[15:0];
                    md.other = md.m{o}[31:16];
                    md.other_factor = md.f{o} + 1;
                    md.other_aux = md.m{o}[15:0];
                    md.diff = md.d{s}{o};
                    md.l_sel = md.l{s};
                    md.l_other = md.l{o};
                    md.from_idle = 0;
                    "
                ),
            )
        })
        .collect()
}

/// `role`'s ingress control.
pub fn control(role: Role, sizes: &Sizes) -> Control {
    let leaf = role == Role::Leaf;
    let mut decls = externs();
    decls.extend(copies());
    decls.extend(conn_registers());
    if leaf {
        let mut own = leaf_registers();
        // The link rule's register sits after the leaf's idle-list actions.
        let at = own
            .iter()
            .position(|d| matches!(d, Decl::Comment(c) if c.starts_with("The rack average")))
            .expect("the leaf's registers hold the rack average");
        own.splice(at..at, link_registers());
        decls.extend(own);
    } else {
        decls.extend(spine_registers());
    }
    decls.push(Decl::Blank);
    decls.extend(early_stages(role, sizes));
    decls.extend(if leaf {
        leaf_actions()
    } else {
        spine_actions()
    });
    decls.push(Decl::Blank);
    decls.extend(stage6_actions());
    decls.extend(late_stages(role, sizes));
    decls.extend(register_tables(role));
    decls.push(Decl::Blank);
    decls.extend(computing_tables(role, sizes));
    decls.push(Decl::Blank);
    let mut c = Control {
        name: super::emit::ingress_control(role).to_string(),
        decls,
        apply: apply_tree(role),
    };
    unshare(&mut c);
    c
}

/// Gives a table of its own to each place after the first where a table is applied whose
/// successors differ between its places ([`super::check::next_table_conflicts`]), and again for
/// the tables before a copy, until none is left: a Tofino 1 table has one next table
/// (`docs/p4.md`). The copy at place `k` is `NAME_k`, declared after `NAME` with the same stage,
/// keys, actions and entries; the places exclude each other, so a pass still applies one of them
/// and touches each register once.
fn unshare(c: &mut Control) {
    // A copy changes its predecessors' successors: to a fixed point, a table at a time.
    while let Some(t) = super::check::next_table_conflicts(c)
        .expect("the emitted conditions tokenize")
        .into_iter()
        .next()
    {
        let at = c
            .decls
            .iter()
            .position(|d| matches!(d, Decl::Table(x) if x.name == t))
            .expect("an applied table is declared");
        let Decl::Table(original) = c.decls[at].clone() else {
            unreachable!()
        };
        let mut place = 0;
        rename_places(&mut c.apply, &t, &mut place);
        let copies = (2..=place).map(|k| {
            Decl::Table(Table {
                name: format!("{t}_{k}"),
                ..original.clone()
            })
        });
        c.decls.splice(at + 1..at + 1, copies);
    }
}

/// Renames the applications of `table` after the first, in program order, `table_2`, `table_3`,
/// ...; `place` counts them.
fn rename_places(stmts: &mut [Stmt], table: &str, place: &mut usize) {
    for s in stmts {
        match s {
            Stmt::Apply(name) if name == table => {
                *place += 1;
                if *place > 1 {
                    *name = format!("{table}_{place}");
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                rename_places(then, table, place);
                rename_places(otherwise, table, place);
            }
            Stmt::Apply(_) | Stmt::Comment(_) => {}
        }
    }
}
