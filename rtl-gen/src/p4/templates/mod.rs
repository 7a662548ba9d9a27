//! The P4 text the emitter fills in ([`super::emit`]): the common include, the program's frame,
//! and the parts of each role (registers and their actions, actions, apply blocks). `$NAME`
//! marks where [`super::emit::fill`] puts a value; the stage numbers, sizes, constants and the
//! tables built from the model's facts come from there.

mod common;

pub(super) use common::COMMON;

pub(super) const LEAF_SPINE_CHECK: &str = r#"            if (md.spine_session != 0 && (hdr.horus.pkt_type == PKT_NEW_TASK || hdr.horus.pkt_type == PKT_NEW_TASK_RANDOM)) {
                spine_check.apply();
            } else {
                spine_clear.apply();
            }
"#;

pub(super) const LEAF_REGISTERS: &str = r#"    /* A leaf's pop takes the worker out of idleIndex. */
    RegisterAction<bit<16>, bit<16>, bit<16>>(idle_index) idle_index_clear_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            v = 0;
            rv = 0;
        }
    };
    /* A leaf pops the top idle worker: rv = the word before the pop (p; negative: locked). */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_pop_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
            if (v > 0) {
                v = v - 1;
            }
        }
    };
    /* An idle add's commit pushes: rv = the word before the push (p: its position). */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_push_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
            v = v + 1;
        }
    };

$LINK_REGISTERS    /* The rack average in 16.16 (lo) and the tasks it counts (hi). */
    Register<pair_t, bit<16>>(POOLS) pool_avg;
    RegisterAction<pair_t, bit<16>, bit<32>>(pool_avg) avg_task_ra = {
        void apply(inout pair_t v, out bit<32> rv) {
            v.lo = v.lo + md.unit;
            v.hi = v.hi + 1;
            rv = v.lo;
        }
    };
    RegisterAction<pair_t, bit<16>, bit<32>>(pool_avg) avg_done_ra = {
        void apply(inout pair_t v, out bit<32> rv) {
            if (v.hi > 0) {
                v.lo = v.lo |-| md.unit;
                v.hi = v.hi - 1;
            }
            rv = v.lo;
        }
    };
    RegisterAction<pair_t, bit<16>, bit<32>>(pool_avg) avg_read_ra = {
        void apply(inout pair_t v, out bit<32> rv) {
            rv = v.lo;
        }
    };

    /* The report rule. lo: the last report (moved by the spine's tasks since, which the spine
     * counted itself); hi: lo + report_delta - 1. An average above hi, or one that
     * report_delta - 1 more still leaves below lo, has moved by report_delta and sends a load
     * update, unless an idle message leaves with this pass. The table `report_rule` picks the
     * register action by the pass (a task from the spine: move; no idle message: check), so
     * that each keeps to a stateful ALU's two comparisons; `report_input` puts in md.report_x
     * what the action reads beside the average: the pool's unit (move), or the average +
     * report_delta - 1 (check: the new hi). A stateful ALU reads two fields and adds a field
     * only to a register word, so the sum is made the stage before. */
    Register<pair_t, bit<16>>(POOLS) pool_report;
    RegisterAction<pair_t, bit<16>, bit<8>>(pool_report) report_move_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            v.lo = v.lo + md.report_x;
            v.hi = v.hi + md.report_x;
            rv = 0;
        }
    };
    RegisterAction<pair_t, bit<16>, bit<8>>(pool_report) report_check_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            rv = 0;
            if (md.avg > v.hi || md.report_x < v.lo) {
                v.lo = md.avg;
                v.hi = md.report_x;
                rv = 1;
            }
        }
    };
"#;

pub(super) const SPINE_REGISTERS: &str = r#"    /* A spine's task reads p (negative: the removal lock is held); where it is positive the
     * task takes the idle rack whose turn it is (turn_take_ra). */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_take_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
        }
    };
    /* An idle add's commit pushes: rv = the word before the push (p: its position). */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_push_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
            v = v + 1;
        }
    };
    /* A removal's first pass: unless locked or empty, take the lock and the top
     * (p - 1 + LOCK = p + 0x7fffffff); a turn at the top goes round to 1 (turn_remove_ra). rv =
     * the word before. */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_remove_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
            if (v > 0) {
                v = v + 0x7fffffff;
            }
        }
    };
    /* spineTurn: the idle rack whose turn it is (1..p, from 1), as the spine's tasks take them;
     * it goes on by one and from p round to 1, compared with p (md.ctl, read the stage before).
     * rv is the turn's slot in the idle list, base - 1 + turn. */
    Register<bit<16>, bit<16>>(POOLS, 1) spine_turn;
    RegisterAction<bit<16>, bit<16>, bit<16>>(spine_turn) turn_take_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            rv = v + md.base_m1;
            if (v >= (bit<16>)(bit<32>)md.ctl) {
                v = 1;
            } else {
                v = v + 1;
            }
        }
    };
    /* A removal takes the top: a turn there goes round to 1. */
    RegisterAction<bit<16>, bit<16>, bit<16>>(spine_turn) turn_remove_ra = {
        void apply(inout bit<16> v) {
            if (v >= (bit<16>)(bit<32>)md.ctl) {
                v = 1;
            }
        }
    };
    /* A removal's second pass releases the lock (+LOCK) and, aborting, pushes the former top
     * back (+1): md.finish_add. rv = the word before (its p is where an abort pushes). */
    RegisterAction<int<32>, bit<16>, int<32>>(idle_ctl) ctl_finish_ra = {
        void apply(inout int<32> v, out int<32> rv) {
            rv = v;
            v = v + (int<32>)md.finish_add;
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(idle_index) idle_index_remove_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            rv = v;
            if (v != 0 && v != IDLE_PENDING) {
                v = 0;
            }
        }
    };
"#;

pub(super) const LEAF_ACTIONS: &str = r#"    action check_spine() {
        md.spine_x = hdr.horus.src_id ^ md.spine_id;
    }
    action clear_spine() {
        md.spine_x = 0xffff;
    }
    action forward_reply(bit<8> reason) {
        md.verdict = V_PASS_THROUGH;
        md.reason = reason;
    }
    /* The link rule's inputs (7: none, a value the flag never holds), and the linked value its
     * register action compares (link_v): link_r, unless link_a calls for a change (link_range,
     * the stage after link_repair, writes it then). */
    action set_link_a(bit<16> a) {
        md.link_a = a;
        md.link_v = a;
    }
    action no_link_a() {
        md.link_a = 7;
    }
    action set_link_r(bit<16> r) {
        md.link_r = r;
        md.link_v = r;
    }
    /* The signal leaves as a mirrored copy; the egress writes its headers. An idle message
     * goes first; a load report it displaces leaves with a later pass. */
    action mirror_signal(bit<7> sig_type) {
        ig_dprsr_md.mirror_type = MIRROR_SIGNAL;
        md.session = md.spine_session;
        md.mirror_kind = BRIDGE_SIGNAL;
        hdr.bridge.sig_type = sig_type;
        hdr.bridge.pool_id = hdr.horus.pool_id;
        hdr.bridge.src_id = md.spine_node;
        hdr.bridge.spine_id = md.spine_id;
        hdr.bridge.load = md.avg;
    }
"#;

pub(super) const SPINE_ACTIONS: &str = r#"    /* A removal's second pass: the position + 1 (resub.value[15:0]) read apart, by the hash
     * unit, from the 32-bit value a task's second pass adds: a Tofino ALU reads and writes
     * containers of one size. Its first pass builds the value the same way. */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_hash;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) move_hash;
    action read_pos() {
        md.pos = pos_hash.get({md.resub.value[15:0]});
    }
    /* What a removal's finish adds to idle_ctl, chosen by a table of its own (decode_finish): an
     * action of a table keyed on resub.value may not read it (the compiler makes the matched
     * half a constant). */
    action finish_normal() {
        md.finish_add = LOCK;
    }
    action finish_aborted() {
        md.finish_add = LOCK + 1;
    }
    action consume_message() {
        md.verdict = V_DROP;
        md.reason = DROP_NONE;
    }
    action remove_at_top() {
        md.idle_slot = md.base_m1 + (bit<16>)(bit<32>)md.ctl;
    }
    action finish_at() {
        md.idle_slot = md.base_m1 + md.pos;
        md.p_new = md.pos;
        md.push_ref = md.resub.node ++ md.resub.aux;
    }
    action finish_at_top() {
        md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl;
        md.p_new = (bit<16>)(bit<32>)md.ctl + 1;
        md.push_ref = md.resub.node ++ md.resub.aux;
    }
    action check_last() {
        md.last_x = md.n_ref[31:16] ^ hdr.horus.src_id;
    }
    action remove_resubmit_unlock() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.verdict = V_RESUBMIT;
        md.resub.setValid();
        md.resub.node = md.n_ref[31:16];
        md.resub.aux = md.n_ref[15:0];
        md.resub.value = 32w1 << 16;
    }
    action remove_resubmit_move() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.verdict = V_RESUBMIT;
        md.resub.setValid();
        md.resub.node = md.n_ref[31:16];
        md.resub.aux = md.n_ref[15:0];
        md.resub.value = move_hash.get({16w2, md.idx});
    }
    action remove_resubmit_abort() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.verdict = V_RESUBMIT;
        md.reason = DROP_IDLE_REMOVE_NOT_MEMBER;
        md.resub.setValid();
        md.resub.node = md.n_ref[31:16];
        md.resub.aux = md.n_ref[15:0];
        md.resub.value = 32w3 << 16;
    }
"#;

/// A leaf's replies.
pub(super) const LEAF_MESSAGE_APPLY: &str = r#"        } else if (md.kind == KIND_REPLY || md.kind == KIND_REPLY_IDLE) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else if (md.node_ok == 0) {
                pass_reply.apply();
            } else {
                load1_write.apply();
                load2_write.apply();
                if (md.kind == KIND_REPLY_IDLE) {
                    idle_index_check.apply();
                    if (md.idx != 0) {
                        dup_reply.apply();
                    } else {
                        add_resubmit.apply();
                    }
                }
                pick_src.apply();
                drift1_reset.apply();
                drift2_reset.apply();
                avg_done.apply();
                report_input.apply();
                report_rule.apply();
            }
"#;

/// A leaf's idle-add commits (`idle_ctl`, stage 1: an early rung of the ladder).
pub(super) const LEAF_CTL_APPLY: &str = r#"        } else if (md.kind == KIND_ADD_COMMIT) {
            ctl_push.apply();
            idle_push.apply();
            link_repair.apply();
            link_range.apply();
            idle_write.apply();
            idle_index_set.apply();
            link_rule.apply();
            avg_read.apply();
"#;

/// A spine's load updates and idle adds from its racks.
pub(super) const SPINE_MESSAGE_APPLY: &str = r#"        } else if (md.kind == KIND_LOAD_UPDATE) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else if (md.node_ok == 0) {
                reject_node.apply();
            } else {
                load1_write.apply();
                load2_write.apply();
                pick_src.apply();
                drift1_reset.apply();
                drift2_reset.apply();
                consume.apply();
            }
        } else if (md.kind == KIND_IDLE_ADD) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else if (md.node_ok == 0) {
                reject_node.apply();
            } else {
                idle_index_check.apply();
                if (md.idx != 0) {
                    reject_duplicate.apply();
                } else {
                    add_resubmit.apply();
                }
            }
"#;

/// A spine's idle-add commits and removals (`idle_ctl`, stage 1: early rungs of the ladder).
pub(super) const SPINE_CTL_APPLY: &str = r#"        } else if (md.kind == KIND_ADD_COMMIT) {
            ctl_push.apply();
            idle_push.apply();
            idle_write.apply();
            idle_index_set.apply();
            consume.apply();
        } else if (md.kind == KIND_REMOVE) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else if (md.node_ok == 0) {
                reject_node.apply();
            } else {
                ctl_remove.apply();
                if (md.ctl < 0) {
                    reject_locked.apply();
                } else if (md.ctl == 0) {
                    reject_not_member.apply();
                } else {
                    remove_top.apply();
                    turn_remove.apply();
                    idle_read.apply();
                    idle_index_remove.apply();
                    last_check.apply();
                    if (md.idx == 0 || md.idx == IDLE_PENDING) {
                        remove_abort.apply();
                    } else if (md.last_x == 0) {
                        remove_unlock.apply();
                    } else {
                        remove_move.apply();
                    }
                }
            }
        } else if (md.kind == KIND_REMOVE_SECOND) {
            ctl_finish.apply();
            remove_finish.apply();
            if (md.resub.value[31:16] != 1) {
                idle_write.apply();
                idle_index_set.apply();
            }
            consume.apply();
"#;

pub(super) const PROGRAM: &str = r#"/* Horus $ROLE for Tofino 1 (TNA).
 * Generated by `cargo run -p rtl-gen -- --target p4` from horus-model (wire format, stage plan,
 * drop reasons), rtl-gen's Tofino stage plan and the size preset `$PRESET`. Do not edit.
 * Pools: $POOLS, nodes: $NODES. docs/p4.md says how it differs from the model. */

#include "horus_common.p4"

const bit<32> POOLS = $POOLS;
const bit<32> NODES = $NODES;
const bit<32> CONN_ENTRIES = $CONN;
/* A connection entry's lifetime, in 65.536 us ticks: the switch's conn_timeout_us. */
const bit<32> CONN_TIMEOUT = $CONN_TIMEOUT;
/* A leaf's repair gap (decision 17), in 1.024 us ticks: one for every pool (T12). */
const int<32> REPAIR_GAP = $REPAIR_GAP;
const bit<16> CONN_MASK = $CONN_MASK;

control $INGRESS(inout headers_t hdr, inout horus_md_t md,
        in ingress_intrinsic_metadata_t ig_intr_md,
        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
        inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
        inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, bit<8>>(256, CounterType_t.PACKETS) drops;
    Counter<bit<64>, bit<8>>(16, CounterType_t.PACKETS) passes;
    Random<bit<32>>() rng;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) conn_hash;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) conn_time_hash;
    /* Widening 16 bits to 32 through the hash unit (identity): a Tofino ALU reads and writes
     * containers of one size. */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) widen_w;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) widen1;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) widen2;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) widen_idle;

    /* ---- Registers, with their register actions. ---- */

    /* idleCtl: the removal lock (bit 31) and p. The spine's turn, which the model keeps in
     * idleCtl too, is the spine's register spine_turn: a stateful ALU compares one word of its
     * register at a time, and the turn's wrap compares it with p. */
    Register<int<32>, bit<16>>(POOLS) idle_ctl;

    /* members1, members2: the pool's nodes as node << 16 | factor - 1 (the control plane). */
    Register<bit<32>, bit<16>>(NODES) members1;
    RegisterAction<bit<32>, bit<16>, bit<32>>(members1) members1_ra = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
        }
    };
    Register<bit<32>, bit<16>>(NODES) members2;
    RegisterAction<bit<32>, bit<16>, bit<32>>(members2) members2_ra = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
        }
    };

    /* idleList: the idle nodes, node << 16 | factor - 1, at base .. base + p. */
    Register<bit<32>, bit<16>>(NODES) idle_list;
    RegisterAction<bit<32>, bit<16>, bit<32>>(idle_list) idle_read_ra = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(idle_list) idle_write_ra = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = md.push_ref;
            rv = v;
        }
    };

    /* idleIndex: 0 absent, IDLE_PENDING pending, i + 1 member at position i. */
    Register<bit<16>, bit<16>>(NODES) idle_index;
    RegisterAction<bit<16>, bit<16>, bit<16>>(idle_index) idle_index_check_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            rv = v;
            if (v == 0) {
                v = IDLE_PENDING;
            }
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(idle_index) idle_index_set_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            v = md.p_new;
            rv = v;
        }
    };

$COPIES
    /* conn, the multi-packet connection table: lo = pool << 16 | taskID, hi = when the entry
     * expires, in 65.536 us ticks of the ingress timestamp (0: free); an entry whose hi is
     * below the pass's time is free. A first packet claims a free entry or its own (rv 1) and
     * a live entry of another task is kept; a continuation finds its live entry (rv 1), the
     * last one frees it. Each register action keeps to two comparisons and no slice. */
    Register<pair_t, bit<16>>(CONN_ENTRIES, {0, 0}) conn;
    RegisterAction<pair_t, bit<16>, bit<8>>(conn) conn_insert_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == md.conn_key || v.hi < md.now_c) {
                v.lo = md.conn_key;
                v.hi = md.now_c + CONN_TIMEOUT;
                rv = 1;
            }
        }
    };
    RegisterAction<pair_t, bit<16>, bit<8>>(conn) conn_follow_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == md.conn_key && v.hi >= md.now_c) {
                rv = 1;
            }
        }
    };
    RegisterAction<pair_t, bit<16>, bit<8>>(conn) conn_last_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == md.conn_key && v.hi >= md.now_c) {
                v.hi = 0;
                rv = 1;
            }
        }
    };
    /* conn_node: the node of each connection entry, written when a first packet claims the
     * entry and read by its continuations, one stage after conn decided. */
    Register<bit<16>, bit<16>>(CONN_ENTRIES) conn_node;
    RegisterAction<bit<16>, bit<16>, bit<16>>(conn_node) conn_node_write_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            v = md.sel;
            rv = 0;
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(conn_node) conn_node_read_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            rv = v;
        }
    };

$ROLE_REGISTERS
    /* ---- Stage 0: the switch, the pass's kind, the pool and the node, the random draw. ---- */

    action set_switch(PortId_t pass_port, PortId_t control_port, bit<16> switch_id) {
        md.pass_port = pass_port;
        md.control_port = control_port;
        md.switch_id = switch_id;
        md.from_idle = 0;
        hdr.bridge.setValid();
        hdr.bridge.kind = BRIDGE_NORMAL;
        md.verdict = V_PASS_THROUGH;
        md.signal = 0;
        md.report = 0;
    }
    @horus_stage(0) table switch_cfg {
        actions = { set_switch; }
        default_action = set_switch(0, 0, 0);
        size = 1;
    }

    action set_kind(bit<8> kind, bit<8> reason) {
        md.kind = kind;
        md.reason = reason;
        passes.count(kind);
    }
    @horus_stage(0) table classify {
        key = {
            hdr.horus.pkt_type: exact;
            hdr.horus.more_packets: exact;
            ig_intr_md.resubmit_flag: exact;
        }
        actions = { set_kind; }
        const default_action = set_kind(0, DROP_MALFORMED);
        size = 64;
        const entries = {
$CLASSIFY_ENTRIES        }
    }

    /* poolCfg: the pool's slot region, member count and parameters (the control plane). */
    action set_pool(bit<16> base, bit<16> base_m1, bit<16> n, bit<16> spine_id,
            bit<16> spine_node, MirrorId_t spine_session, bit<32> report_delta_m1,
            bit<32> unit) {
        md.pool_ok = 1;
        md.base = base;
        md.base_m1 = base_m1;
        md.n = n;
        md.spine_id = spine_id;
        md.spine_node = spine_node;
        md.spine_session = spine_session;
        md.report_delta_m1 = report_delta_m1;
        md.unit = unit;
    }
    action no_pool() {
        md.pool_ok = 0;
    }
    @horus_stage($S_POOL) table pool_cfg {
        key = { hdr.horus.pool_id: exact; }
        actions = { set_pool; no_pool; }
        const default_action = no_pool;
        size = $POOLS;
    }

    /* node: the active nodes of each pool, and their additive factors - 1 (the control plane). */
    action set_node(bit<16> factor_m1) {
        md.node_ok = 1;
        md.node_aux = factor_m1;
    }
    action no_node() {
        md.node_ok = 0;
    }
    @horus_stage($S_NODE) table node_cfg {
        key = {
            hdr.horus.src_id: exact;
            hdr.horus.pool_id: exact;
        }
        actions = { set_node; no_node; }
        const default_action = no_node;
        size = $NODES;
    }

    /* A keyless table passes at most 32 bits from the random or hash unit: the draw, the
     * connection's index, its time and the header's values are four tables. */
    action draw_values() {
        bit<32> r = rng.get();
        md.r1 = r[15:8];
        md.r2 = r[31:24];
    }
    action draw_conn() {
        md.conn_idx = conn_hash.get({hdr.horus.pool_id, hdr.horus.seq_num}) & CONN_MASK;
    }
    /* The time in conn's 65.536 us ticks, through the hash unit: copied from the timestamp,
     * whose containers the leaf's md.now (1.024 us ticks) slices at other bits, it would lie
     * across two containers. */
    action read_conn_time() {
        md.now_c = conn_time_hash.get({ig_intr_md.ingress_mac_tstamp[47:16]});
    }
    action read_header() {
        md.now = ig_intr_md.ingress_mac_tstamp[41:10];
        md.len_gap = hdr.ipv4.total_len - hdr.udp.hdr_length;
        md.udp_short = 19 |-| hdr.udp.hdr_length;
        md.conn_key = hdr.horus.pool_id ++ hdr.horus.seq_num;
        md.new_load = $NEW_LOAD;
    }

    /* The winner's load and its additive factor less one, apart: a Tofino action does one
     * operation a field, on containers of one size, so w_add_one and w_add_sum add them up in
     * the next stages. The factor is widened by the hash unit. The drift the first pass saw
     * goes to diff, the field drift1's check compares with: a stateful ALU has two PHV inputs
     * for all of its register's actions (sel_factor and diff). */
    action decode_second_pass() {
        md.w_add = md.resub.value;
        md.w_factor = widen_w.get({md.resub.aux});
        md.diff = md.resub.value;
    }
    action add_one() {
        md.w_factor = md.w_factor + 1;
    }
    action add_factor() {
        md.w_add = md.w_add + md.w_factor;
    }

    /* ---- Stage 1: the samples, from exact-match tables the control plane writes (a pool and
     * an 8-bit draw to the slot base + floor(draw * n / 256): 256 entries a pool, in SRAM), and
     * idleCtl. ---- */

    action set_slot1(bit<16> slot) {
        md.slot1 = slot;
    }
    action set_slot2(bit<16> slot) {
        md.slot2 = slot;
    }
    @horus_stage($S_SAMPLE) table sample1 {
        key = {
            hdr.horus.pool_id: exact;
            md.r1: exact;
        }
        actions = { set_slot1; }
        default_action = set_slot1(0);
        size = $SAMPLE_ENTRIES;
    }
    @horus_stage($S_SAMPLE) table sample2 {
        key = {
            hdr.horus.pool_id: exact;
            md.r2: exact;
        }
        actions = { set_slot2; }
        default_action = set_slot2(0);
        size = $SAMPLE_ENTRIES;
    }

    action reject(bit<8> reason) {
        md.verdict = V_DROP;
        md.reason = reason;
    }
    action reject_with_reason() {
        md.verdict = V_DROP;
    }
    action to_pass_through() {
        md.verdict = V_PASS_THROUGH;
        md.reason = DROP_NONE;
    }
    action to_control_port() {
        md.verdict = V_CONTROL;
    }

    /* ---- Stage 2: where the pass works in the idle list. ---- */

    action take_idle() {
$TAKE_IDLE    }
    action keep_idle() {
        md.p_new = (bit<16>)(bit<32>)md.ctl;
    }
    action push_at() {
        md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl;
        md.p_new = (bit<16>)(bit<32>)md.ctl + 1;
        md.push_ref = md.resub.node ++ md.resub.aux;
    }

    /* ---- Stages 3 to 5: the samples' loads compared. ---- */

    action widen_factor1() {
        md.f1 = widen1.get({md.m1[15:0]});
    }
    action widen_factor2() {
        md.f2 = widen2.get({md.m2[15:0]});
    }
    action widen_factor_idle() {
        md.f1 = widen_idle.get({md.n_ref[15:0]});
    }
    action check_same() {
        md.same = md.m1[31:16] ^ md.m2[31:16];
    }
    action compare_loads() {
        md.d12 = md.l2 |-| md.l1;
        md.d21 = md.l1 |-| md.l2;
    }
    action resubmit_add() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.verdict = V_RESUBMIT;
        md.resub.setValid();
        md.resub.node = hdr.horus.src_id;
        md.resub.aux = md.node_aux;
        md.resub.value = 0;
    }

$ROLE_ACTIONS
    /* ---- Stage 6: the node the pass charges. ---- */

$PICK_SAMPLES    action pick_idle_node() {
        md.sel = md.n_ref[31:16];
        md.sel_factor = md.f1 + 1;
        md.from_idle = 1;
    }
    action pick_random_node() {
        md.sel = md.m1[31:16];
        md.sel_factor = md.f1 + 1;
        md.from_idle = 0;
    }
    action pick_src_node() {
        md.sel = hdr.horus.src_id;
    }
    action pick_winner() {
        md.sel = md.resub.node;
        md.from_idle = 0;
    }

    /* ---- Stages 9 to 11: the corrected queues and the winner a second pass charges. ---- */

    action corrected_queues() {
        md.verdict = V_RESUBMIT;
        md.q_sel = md.l_sel + (bit<32>)md.d_sel;
        md.q_other = md.l_other + (bit<32>)md.d_other;
    }
    action gap_of_queues() {
        md.q_gap = md.q_other - md.q_sel;
    }
    action resubmit_sel() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.resub.setValid();
        md.resub.node = md.sel;
        md.resub.aux = md.sel_aux;
        md.resub.value = (bit<32>)md.d_sel;
    }
    action resubmit_other() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.resub.setValid();
        md.resub.node = md.other;
        md.resub.aux = md.other_aux;
        md.resub.value = (bit<32>)md.d_other;
    }
    action out_to_sel() {
        md.verdict = V_NODE;
        md.out_node = md.sel;
    }

    /* ---- Stage 11: nodeAddr, the rewrite towards the node; where everything else goes. ---- */

    action to_node(PortId_t port, bit<48> mac, bit<32> ip, bit<16> udp_port, bit<16> dst_id$SRC_PARAM) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = mac;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.dst_port = udp_port;
        hdr.udp.checksum = 0;
        hdr.horus.dst_id = dst_id;
$SRC_REWRITE    }
    /* Whether the node was idle, in qlen: apart from to_node, whose other writes are action
     * data (a Tofino action writes a container from action data or from one PHV source). */
    action mark_from_idle() {
        hdr.horus.qlen = md.from_idle;
    }
    action node_gone() {
        ig_dprsr_md.drop_ctl = 1;
        drops.count(DROP_CONTINUATION_MISS);
    }
    @horus_stage($S_ADDR) table node_addr {
        key = {
            md.out_node: exact;
            hdr.horus.pool_id: exact;
        }
        actions = { to_node; node_gone; }
        const default_action = node_gone;
        size = $NODES;
    }

    action finish_pass() {
        ig_tm_md.ucast_egress_port = md.pass_port;
        drops.count(md.reason);
    }
    action finish_control() {
        ig_tm_md.ucast_egress_port = md.control_port;
        drops.count(md.reason);
    }
    action finish_drop() {
        ig_tm_md.ucast_egress_port = md.pass_port;
        ig_dprsr_md.drop_ctl = 1;
        drops.count(md.reason);
    }

    /* ---- The tables that execute register actions, and the computing tables. ---- */

$REGISTER_TABLES
$COMPUTING_TABLES
    apply {
        switch_cfg.apply();
        if (hdr.horus.isValid()) {
            classify.apply();
            pool_cfg.apply();
            node_cfg.apply();
            draw.apply();
            draw_conn_idx.apply();
            conn_time.apply();
            header_values.apply();
            if (ig_intr_md.resubmit_flag == 1) {
                decode.apply();
$SPINE_DECODE            }
$SPINE_CHECK        }
        /* The pass by its kind: a rung's condition takes one of its stage's 16 logical tables, so
         * the kinds whose first register is idle_ctl (stage 1) come first and the passes that
         * only end come last. */
        if (hdr.ipv4.isValid() && md.csum_err) {
            reject_checksum.apply();
        } else if (!hdr.horus.isValid()) {
            if (hdr.udp.isValid() && hdr.udp.dst_port == HORUS_UDP_PORT) {
                reject_malformed.apply();
            } else {
                pass_through.apply();
            }
        } else if (md.len_gap != 20 || md.udp_short != 0) {
            reject_short.apply();
        } else if (md.kind == KIND_TASK || md.kind == KIND_RANDOM) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else if (md.n == 0) {
                reject_empty.apply();
            } else {
                sample1.apply();
                sample2.apply();
                if (md.kind == KIND_RANDOM) {
                    members1_read.apply();
                    factor1.apply();
                    pick_random.apply();
                    drift1_charge.apply();
                    drift2_charge.apply();
$RANDOM_END                } else {
$TASK_APPLY                }
            }
$CTL_APPLY        } else if (md.kind == KIND_TASK_SECOND) {
            w_add_one.apply();
            w_add_sum.apply();
            load1_add.apply();
            load2_add.apply();
            pick_second.apply();
            drift1_settle.apply();
            drift2_settle.apply();
$SECOND_AVG            out_sel.apply();
        } else if (md.kind == KIND_CONTINUATION) {
            if (md.pool_ok == 0) {
                reject_pool.apply();
            } else {
                conn_follow.apply();
                if (md.conn_hit == 1) {
                    conn_node_read.apply();
                } else {
                    conn_miss.apply();
                }
            }
$MESSAGE_APPLY        } else if (md.kind == 0 || md.kind == KIND_REJECT) {
            reject_kind.apply();
        } else if (md.kind == KIND_CONTROL) {
            to_control.apply();
        } else if (md.kind == KIND_PASS_THROUGH) {
            pass_through.apply();
        }
$SIGNAL_APPLY        if (md.verdict == V_NODE) {
            node_addr.apply();
            node_mark.apply();
        } else {
            done.apply();
        }
    }
}

Pipeline(HorusIngressParser(), $INGRESS(), HorusIngressDeparser(),
         HorusEgressParser(), HorusEgress(), HorusEgressDeparser()) pipe;

Switch(pipe) main;
"#;
