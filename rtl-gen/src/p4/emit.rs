//! The P4_16 text: shared headers and parsers (`horus_common.p4`), and the leaf's and the spine's
//! programs (`horus_leaf.p4`, `horus_spine.p4`) for Tofino 1 (TNA).
//!
//! The facts come from their homes: the header layout, the packet types and the MORE_PACKETS flag
//! from `horus_model::wire`, the drop reasons from `horus_model::sched::DropReason`, the table sizes
//! from the size preset, the stages from [`super::plan`]. The control logic is written here, one
//! scheduler for both roles as in the model; `docs/p4.md` explains where it departs from the
//! model and why.
//!
//! The program keeps one discipline that the checker ([`super::check`]) holds it to: every
//! computation sits in an action of a table with an `@stage`, the apply blocks only branch and
//! apply tables, and each table is applied at one place.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use horus_model::config::{Role, Sizes};
use horus_model::sched::DropReason;
use horus_model::wire::{self, PacketType};

use super::bfrt::{conn_ticks, ticks_1024ns};
use super::plan;

/// What a pass is, as the `classify` table decides from the packet type, the MORE_PACKETS flag
/// and the resubmit flag. The codes are the program's own (`KIND_*` constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// NEW_TASK, first pass.
    Task = 1,
    /// NEW_TASK, resubmitted: charge the winner the first pass chose.
    TaskSecond = 2,
    /// NEW_TASK_RANDOM.
    Random = 3,
    /// TASK_CONTINUATION.
    Continuation = 4,
    /// TASK_DONE at a leaf.
    Reply = 5,
    /// TASK_DONE_IDLE at a leaf, first pass (load update and the idle-add check).
    ReplyIdle = 6,
    /// Second pass of an idle add: TASK_DONE_IDLE (leaf) or IDLE_SIGNAL (spine), resubmitted.
    AddCommit = 7,
    /// IDLE_SIGNAL at a spine, first pass.
    IdleAdd = 8,
    /// IDLE_REMOVE at a spine, first pass.
    Remove = 9,
    /// IDLE_REMOVE at a spine, resubmitted.
    RemoveSecond = 10,
    /// QUEUE_SIGNAL / QUEUE_SIGNAL_INIT at a spine.
    LoadUpdate = 11,
    /// Controller packets: to the control port.
    Control = 12,
    /// A reply at a spine: ordinary traffic.
    PassThrough = 13,
    /// Legacy types and messages for the other role: dropped and counted (reason in the entry).
    Reject = 14,
}

impl PassKind {
    pub const ALL: [PassKind; 14] = [
        PassKind::Task,
        PassKind::TaskSecond,
        PassKind::Random,
        PassKind::Continuation,
        PassKind::Reply,
        PassKind::ReplyIdle,
        PassKind::AddCommit,
        PassKind::IdleAdd,
        PassKind::Remove,
        PassKind::RemoveSecond,
        PassKind::LoadUpdate,
        PassKind::Control,
        PassKind::PassThrough,
        PassKind::Reject,
    ];

    /// The P4 constant naming the kind.
    pub fn constant(self) -> &'static str {
        match self {
            PassKind::Task => "KIND_TASK",
            PassKind::TaskSecond => "KIND_TASK_SECOND",
            PassKind::Random => "KIND_RANDOM",
            PassKind::Continuation => "KIND_CONTINUATION",
            PassKind::Reply => "KIND_REPLY",
            PassKind::ReplyIdle => "KIND_REPLY_IDLE",
            PassKind::AddCommit => "KIND_ADD_COMMIT",
            PassKind::IdleAdd => "KIND_IDLE_ADD",
            PassKind::Remove => "KIND_REMOVE",
            PassKind::RemoveSecond => "KIND_REMOVE_SECOND",
            PassKind::LoadUpdate => "KIND_LOAD_UPDATE",
            PassKind::Control => "KIND_CONTROL",
            PassKind::PassThrough => "KIND_PASS_THROUGH",
            PassKind::Reject => "KIND_REJECT",
        }
    }
}

/// The P4 constant naming `k` (`KIND_*`).
pub fn kind_const(k: PassKind) -> &'static str {
    k.constant()
}

/// How `role` classifies a packet of type `t` with the MORE_PACKETS flag `more` on a first
/// (`resubmitted` false) or second pass, and the drop reason of a rejected one. `None`: no entry,
/// the table's default drops it as malformed (a flag on a type that cannot carry it, a second
/// pass of a type that never resubmits).
pub fn classify(
    role: Role,
    t: PacketType,
    more: bool,
    resubmitted: bool,
) -> Option<(PassKind, Option<DropReason>)> {
    use PacketType::*;
    if more && !t.is_task() {
        return None;
    }
    let leaf = role == Role::Leaf;
    let kind = match (t, resubmitted) {
        (NewTask, false) => PassKind::Task,
        (NewTask, true) if !more => PassKind::TaskSecond,
        (NewTaskRandom, false) => PassKind::Random,
        (TaskContinuation, false) => PassKind::Continuation,
        (TaskDone, false) if leaf => PassKind::Reply,
        (TaskDoneIdle, false) if leaf => PassKind::ReplyIdle,
        (TaskDoneIdle, true) if leaf => PassKind::AddCommit,
        (TaskDone | TaskDoneIdle, false) => PassKind::PassThrough,
        (IdleSignal, false) if !leaf => PassKind::IdleAdd,
        (IdleSignal, true) if !leaf => PassKind::AddCommit,
        (IdleRemove, false) if !leaf => PassKind::Remove,
        (IdleRemove, true) if !leaf => PassKind::RemoveSecond,
        (QueueSignal | QueueSignalInit, false) if !leaf => PassKind::LoadUpdate,
        (IdleSignal | IdleRemove | QueueSignal | QueueSignalInit, false) => {
            return Some((PassKind::Reject, Some(DropReason::WrongRole)));
        }
        (KeepAlive | WorkerId | WorkerIdAck | RemoveAck, false) => PassKind::Control,
        (t, false) if t.is_legacy() => {
            return Some((PassKind::Reject, Some(DropReason::LegacyType)));
        }
        _ => return None,
    };
    Some((kind, None))
}

/// Where a pass's packet goes (`V_*` constants), decided in the actions and carried out by the
/// last stage.
const VERDICTS: [(&str, u8); 5] = [
    ("V_PASS_THROUGH", 0),
    ("V_NODE", 1),
    ("V_CONTROL", 2),
    ("V_DROP", 3),
    ("V_RESUBMIT", 4),
];

/// The drop counter's index for a pass that dropped nothing (or consumed a message).
pub const DROP_NONE: u8 = 255;

/// The signals a leaf mirrors to its spine (`SIG_*`), as packet types.
const SIGNALS: [(&str, PacketType); 3] = [
    ("SIG_IDLE_ADD", PacketType::IdleSignal),
    ("SIG_IDLE_REMOVE", PacketType::IdleRemove),
    ("SIG_LOAD_UPDATE", PacketType::QueueSignal),
];

/// The bridge header's length in bytes (`bridge_h`): what rides ahead of a packet from ingress
/// to egress, and of a mirrored signal copy.
pub const BRIDGE_LEN: usize = 12;

/// The P4 program's name (its file stem) for `role`: `horus_leaf` or `horus_spine`.
pub fn program_name(role: Role) -> String {
    format!("horus_{role}")
}

/// The ingress control of `role`'s program (its tables' names start with it in `bfrt.json`).
pub fn ingress_control(role: Role) -> &'static str {
    match role {
        Role::Leaf => "HorusLeafIngress",
        Role::Spine => "HorusSpineIngress",
    }
}

/// The removal lock: bit 31 of `idle_ctl`'s low word, which holds `p` in its low 16 bits.
pub const LOCK_BIT: u32 = 1 << 31;

/// `idle_index` entries: 0 absent, this value pending, `i + 1` member at position `i`.
pub const IDLE_PENDING: u16 = 0xFFFF;

/// Fills `$NAME` placeholders (upper case, digits, `_`) from `vars`; every placeholder must be
/// known and every variable used.
pub fn fill(template: &str, vars: &[(&str, String)]) -> Result<String> {
    let mut out = String::with_capacity(template.len() + 1024);
    let mut used = vec![false; vars.len()];
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..len];
        let Some(k) = vars.iter().position(|(n, _)| *n == name) else {
            bail!("template placeholder ${name} has no value");
        };
        used[k] = true;
        out.push_str(&vars[k].1);
        rest = &after[len..];
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        bail!("template value {} is never used", vars[k].0);
    }
    Ok(out)
}

/// The P4 name of a packet type: `PKT_` and its name in upper snake case.
pub fn pkt_const(t: PacketType) -> String {
    format!("PKT_{}", crate::outputs::wire::screaming(t.name()))
}

/// The P4 name of a drop reason: `DROP_` and its name in upper case.
pub fn drop_const(r: DropReason) -> String {
    format!("DROP_{}", r.name().to_uppercase())
}

/// The Horus header's fields in wire order: name and width in bits. The type byte is split into
/// the MORE_PACKETS flag (its top bit) and the 7-bit code.
pub fn horus_fields() -> Vec<(&'static str, usize)> {
    let flag_bits = wire::MORE_PACKETS_FLAG.count_ones() as usize;
    let code_bits = wire::TYPE_CODE_MASK.count_ones() as usize;
    let w = |from: usize, to: usize| 8 * (to - from);
    vec![
        ("more_packets", flag_bits),
        ("pkt_type", code_bits),
        ("pool_id", w(wire::POOL_ID_OFFSET, wire::SRC_ID_OFFSET)),
        ("src_id", w(wire::SRC_ID_OFFSET, wire::DST_ID_OFFSET)),
        ("dst_id", w(wire::DST_ID_OFFSET, wire::QLEN_OFFSET)),
        ("qlen", w(wire::QLEN_OFFSET, wire::SEQ_NUM_OFFSET)),
        ("seq_num", w(wire::SEQ_NUM_OFFSET, wire::HEADER_LEN)),
    ]
}

/// `horus_common.p4`: constants, headers, metadata, the parsers and deparsers both roles share.
pub fn common() -> Result<String> {
    let mut consts = String::new();
    writeln!(
        consts,
        "const bit<16> ETHERTYPE_IPV4 = 0x{:04x};",
        wire::ETHERTYPE_IPV4
    )?;
    writeln!(
        consts,
        "const bit<8> IP_PROTOCOL_UDP = {};",
        wire::IP_PROTOCOL_UDP
    )?;
    writeln!(
        consts,
        "const bit<16> HORUS_UDP_PORT = {};",
        wire::HORUS_UDP_PORT
    )?;
    writeln!(
        consts,
        "const bit<16> HORUS_HEADER_LEN = {};",
        wire::HEADER_LEN
    )?;
    for t in PacketType::ALL {
        writeln!(consts, "const bit<7> {} = {};", pkt_const(t), t.code())?;
    }
    for (i, r) in DropReason::ALL.iter().enumerate() {
        writeln!(consts, "const bit<8> {} = {i};", drop_const(*r))?;
    }
    writeln!(consts, "const bit<8> DROP_NONE = {DROP_NONE};")?;
    for k in PassKind::ALL {
        writeln!(consts, "const bit<8> {} = {};", k.constant(), k as u8)?;
    }
    for (name, v) in VERDICTS {
        writeln!(consts, "const bit<8> {name} = {v};")?;
    }
    for (name, t) in SIGNALS {
        writeln!(consts, "const bit<7> {name} = {};", pkt_const(t))?;
    }
    writeln!(consts, "const bit<32> LOCK = 0x{LOCK_BIT:08x};")?;
    writeln!(consts, "const bit<16> IDLE_PENDING = 0x{IDLE_PENDING:04x};")?;
    let horus = horus_fields()
        .iter()
        .map(|(n, w)| format!("    bit<{w}> {n};\n"))
        .collect::<String>();
    fill(
        COMMON,
        &[
            ("CONSTANTS", consts),
            ("INGRESS_FRAME_STATES", frame_states(true)),
            ("EGRESS_FRAME_STATES", frame_states(false)),
            ("IPV4_CHECKSUM_UPDATE", IPV4_CHECKSUM_UPDATE.to_string()),
            ("HORUS_FIELDS", horus),
            (
                "SIGNAL_TOTAL_LEN",
                (wire::IPV4_HEADER_LEN + wire::UDP_HEADER_LEN + wire::HEADER_LEN).to_string(),
            ),
            (
                "SIGNAL_UDP_LEN",
                (wire::UDP_HEADER_LEN + wire::HEADER_LEN).to_string(),
            ),
        ],
    )
}

/// The parser states from IPv4 to the Horus header, which both parsers share; the ingress's
/// verifies the IPv4 header checksum (`verify`).
fn frame_states(verify: bool) -> String {
    let (comment, csum) = if verify {
        (
            "    /* A bad header checksum drops the frame; a fragment passes through. */\n",
            "        ipv4_csum.add(hdr.ipv4);\n        md.csum_err = ipv4_csum.verify();\n",
        )
    } else {
        ("", "")
    };
    format!(
        r#"    /* IPv4 version 4 without options (0x45), else the frame passes through unparsed, its
     * checksum unchecked, as the model's parser does. */
    state check_ipv4 {{
        transition select(pkt.lookahead<bit<8>>()) {{
            0x45: parse_ipv4;
            default: accept;
        }}
    }}

{comment}    state parse_ipv4 {{
        pkt.extract(hdr.ipv4);
{csum}        transition select(hdr.ipv4.ihl, hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset, hdr.ipv4.protocol) {{
            (5, 0, 0, IP_PROTOCOL_UDP): parse_udp;
            default: accept;
        }}
    }}

    state parse_udp {{
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {{
            HORUS_UDP_PORT: parse_horus;
            default: accept;
        }}
    }}

    state parse_horus {{
        pkt.extract(hdr.horus);
        transition accept;
    }}
"#
    )
}

/// Both deparsers recompute the IPv4 header checksum of a frame they parsed.
const IPV4_CHECKSUM_UPDATE: &str = r#"        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdr_checksum = ipv4_csum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        }
"#;

const COMMON: &str = r#"/* Horus for Tofino 1 (TNA): constants, headers, metadata, parsers and deparsers of both roles.
 * Generated by `cargo run -p rtl-gen -- --target p4` from horus-model (wire format, drop
 * reasons). Do not edit. */

#ifndef HORUS_COMMON_P4
#define HORUS_COMMON_P4

#include <core.p4>
#include <tna.p4>

$CONSTANTSconst bit<16> SIGNAL_TOTAL_LEN = $SIGNAL_TOTAL_LEN;
const bit<16> SIGNAL_UDP_LEN = $SIGNAL_UDP_LEN;
const bit<8> BRIDGE_NORMAL = 0;
const bit<8> BRIDGE_SIGNAL = 1;
const MirrorType_t MIRROR_SIGNAL = 1;
const ResubmitType_t RESUBMIT_SECOND_PASS = 1;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> hdr_length;
    bit<16> checksum;
}

/* The Horus header, 11 bytes, big endian. */
header horus_h {
$HORUS_FIELDS}

/* What a first pass hands its second pass: exactly Tofino 1's 64 bits of resubmit data.
 * Task: node = the winner, aux = its factor - 1, value = the drift the first pass saw.
 * Idle add: node and factor - 1 of the node to push. Removal: node and factor - 1 of the
 * former top, value = the position it moves to, or ABORT in the high half to push it back. */
header resub_h {
    bit<16> node;
    bit<16> aux;
    bit<32> value;
}

/* Ahead of every packet from ingress to egress: a normal packet, or a mirrored copy that the
 * egress turns into a signal to the spine. */
header bridge_h {
    bit<8> kind;
    bit<7> sig_type;
    bit<1> pad;
    bit<16> pool_id;
    bit<16> src_id;
    bit<16> spine_id;
    bit<32> load;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    horus_h horus;
}

struct pair_t {
    bit<32> lo;
    bit<32> hi;
}

struct ipair_t {
    int<32> lo;
    int<32> hi;
}

/* Ingress metadata. Fields set by a stage's actions are read only by later stages. */
struct horus_md_t {
    resub_h resub;
    bool csum_err;
    /* stage 0 */
    PortId_t pass_port;
    PortId_t control_port;
    bit<16> switch_id;
    bit<8> kind;
    bit<8> reason;
    bit<8> verdict;
    bit<1> pool_ok;
    bit<16> base;
    bit<16> n;
    bit<16> spine_id;
    bit<16> spine_node;
    MirrorId_t spine_session;
    bit<32> report_delta;
    bit<32> report_delta_m1;
    bit<32> unit;
    bit<1> node_ok;
    bit<32> node_factor;
    bit<16> r1;
    bit<16> r2;
    bit<32> now;
    bit<32> now_c;
    bit<16> conn_idx;
    bit<16> len_gap;
    bit<32> conn_key;
    bit<32> new_load;
    bit<32> w_add;
    int<32> w_drift;
    bit<32> finish_add;
    /* stage 1 */
    bit<16> slot1;
    bit<16> slot2;
    int<32> ctl;
    bit<16> spine_x;
    /* stage 2 */
    bit<16> idle_slot;
    bit<16> p_new;
    bit<32> m1;
    bit<32> m2;
    bit<32> push_ref;
    /* stage 3 */
    bit<32> n_ref;
    bit<32> l1;
    bit<32> l2;
    bit<16> same;
    bit<8> signal;
    bit<16> link_a;
    bit<16> link_r;
    /* stage 4 */
    bit<16> idx;
    bit<32> d12;
    bit<32> d21;
    bit<16> last_x;
    /* stage 5 */
    bit<16> sel;
    bit<32> sel_factor;
    bit<16> other;
    bit<32> other_factor;
    bit<32> diff;
    bit<32> l_sel;
    bit<32> l_other;
    bit<1> from_idle;
    /* stages 6-7 */
    int<32> d_sel;
    int<32> d_other;
    /* stages 8-9 */
    bit<32> q_sel;
    bit<32> q_other;
    bit<32> avg;
    bit<32> q_gap;
    bit<8> report;
    /* stages 10-11 */
    bit<16> out_node;
    bit<8> conn_claimed;
    bit<8> conn_hit;
    MirrorId_t session;
    /* BRIDGE_SIGNAL, for the mirrored copy's bridge header: a mirror's field list takes fields
     * and zeros, no other constant (bf-p4c). */
    bit<8> mirror_kind;
}

struct egress_md_t {
    bit<8> unused;
}

parser HorusIngressParser(packet_in pkt, out headers_t hdr, out horus_md_t md,
        out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_csum;

    state start {
        pkt.extract(ig_intr_md);
        md.csum_err = false;
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }

    state parse_resubmit {
        pkt.extract(md.resub);
        transition parse_ethernet;
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: check_ipv4;
            default: accept;
        }
    }

$INGRESS_FRAME_STATES}

control HorusIngressDeparser(packet_out pkt, inout headers_t hdr, in horus_md_t md,
        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    Resubmit() resubmit;
    Mirror() mirror;

    apply {
$IPV4_CHECKSUM_UPDATE        if (ig_dprsr_md.resubmit_type == RESUBMIT_SECOND_PASS) {
            resubmit.emit(md.resub);
        }
        if (ig_dprsr_md.mirror_type == MIRROR_SIGNAL) {
            mirror.emit<bridge_h>(md.session, {md.mirror_kind, hdr.bridge.sig_type, 0,
                hdr.bridge.pool_id, hdr.bridge.src_id, hdr.bridge.spine_id, hdr.bridge.load});
        }
        pkt.emit(hdr);
    }
}

parser HorusEgressParser(packet_in pkt, out headers_t hdr, out egress_md_t md,
        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: check_ipv4;
            default: accept;
        }
    }

$EGRESS_FRAME_STATES}

/* The egress turns a mirrored copy into the signal: Ethernet, IPv4 and UDP from this switch to
 * the spine, the Horus header from the bridge header, no payload (the mirror session truncates
 * the copy); the IPv4 identification, TTL and DSCP stay the original's, as the model's
 * signal_frame keeps them. A normal packet only loses its bridge header. */
control HorusEgress(inout headers_t hdr, inout egress_md_t md,
        in egress_intrinsic_metadata_t eg_intr_md,
        in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
        inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
        inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    action to_spine(bit<48> spine_mac, bit<48> my_mac, bit<32> spine_ip, bit<32> my_ip, bit<16> spine_port,
            bit<16> my_port) {
        hdr.ethernet.dst_addr = spine_mac;
        hdr.ethernet.src_addr = my_mac;
        hdr.ipv4.src_addr = my_ip;
        hdr.ipv4.dst_addr = spine_ip;
        hdr.ipv4.total_len = SIGNAL_TOTAL_LEN;
        hdr.udp.src_port = my_port;
        hdr.udp.dst_port = spine_port;
        hdr.udp.hdr_length = SIGNAL_UDP_LEN;
        hdr.udp.checksum = 0;
        hdr.horus.more_packets = 0;
        hdr.horus.pkt_type = hdr.bridge.sig_type;
        hdr.horus.pool_id = hdr.bridge.pool_id;
        hdr.horus.src_id = hdr.bridge.src_id;
        hdr.horus.dst_id = hdr.bridge.spine_id;
        hdr.horus.qlen = hdr.bridge.load[31:16];
        hdr.horus.seq_num = hdr.bridge.load[15:0];
        hdr.bridge.setInvalid();
    }

    action no_spine() {
        eg_dprsr_md.drop_ctl = 1;
    }

    action strip() {
        hdr.bridge.setInvalid();
    }

    @stage(0) table spine_addr {
        key = { hdr.bridge.spine_id: exact; }
        actions = { to_spine; no_spine; }
        const default_action = no_spine;
        size = 64;
    }

    @stage(0) table plain {
        actions = { strip; }
        const default_action = strip;
        size = 1;
    }

    apply {
        if (hdr.bridge.kind == BRIDGE_SIGNAL && hdr.horus.isValid()) {
            spine_addr.apply();
        } else {
            plain.apply();
        }
    }
}

control HorusEgressDeparser(packet_out pkt, inout headers_t hdr, in egress_md_t md,
        in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_csum;

    apply {
$IPV4_CHECKSUM_UPDATE        pkt.emit(hdr);
    }
}

#endif
"#;

/// One `classify` entry per (type, flag, resubmitted) that `role` takes.
fn classify_entries(role: Role) -> String {
    let mut s = String::new();
    for t in PacketType::ALL {
        for more in [false, true] {
            for resubmitted in [false, true] {
                if let Some((kind, reason)) = classify(role, t, more, resubmitted) {
                    let reason = reason.map_or_else(|| "DROP_NONE".to_string(), drop_const);
                    let _ = writeln!(
                        s,
                        "            ({}, {}, {}): set_kind({}, {});",
                        pkt_const(t),
                        u8::from(more),
                        u8::from(resubmitted),
                        kind.constant(),
                        reason
                    );
                }
            }
        }
    }
    s
}

/// The stage of a table in the plan ([`plan::stage`]).
fn st(table: &str) -> u8 {
    plan::stage(table).unwrap_or_else(|| panic!("{table} has a stage in the Tofino plan"))
}

/// A keyless table that runs `action` (a call with its arguments) as its only action, at the
/// stage the plan gives it.
fn keyless(name: &str, action: &str) -> String {
    let bare = action.split('(').next().unwrap_or(action);
    format!(
        "    @stage({}) table {name} {{\n        actions = {{ {bare}; }}\n        const default_action = {action};\n        size = 1;\n    }}\n",
        st(name)
    )
}

/// A computing table that chooses its action by `keys` (`field: match_kind`) from constant
/// `entries` (`(key values) : action(args)`, in priority order), else `default`: how a value that
/// depends on a field is chosen on Tofino, where an action's own conditions may read only its
/// parameters.
fn keyed(name: &str, keys: &[&str], entries: &[&str], default: &str) -> String {
    keyed_in(st(name), name, keys, entries, default)
}

/// [`keyed`] in stage `stage` (a table that executes a register's actions sits in its stage).
fn keyed_in(stage: u8, name: &str, keys: &[&str], entries: &[&str], default: &str) -> String {
    let mut actions: Vec<&str> = entries
        .iter()
        .map(|e| e.rsplit_once(':').map_or(*e, |(_, a)| a).trim())
        .chain([default])
        .map(|a| a.split('(').next().unwrap_or(a).trim())
        .collect();
    actions.sort();
    actions.dedup();
    format!(
        "    @stage({stage}) table {name} {{\n        key = {{\n{}        }}\n        actions = {{ {}; }}\n        const entries = {{\n{}        }}\n        const default_action = {default};\n        size = {};\n    }}\n",
        keys.iter()
            .map(|k| format!("            {k};\n"))
            .collect::<String>(),
        actions.join("; "),
        entries
            .iter()
            .map(|e| format!("            {e};\n"))
            .collect::<String>(),
        entries.len()
    )
}

/// A table that executes a register action: `table` at the register's stage, with an action of
/// the same name and `_act` that runs `body`.
fn ra_table(table: &str, register: &str, body: &str) -> String {
    let stage = st(register);
    format!(
        "    action {table}_act() {{\n        {body}\n    }}\n    @stage({stage}) table {table} {{\n        actions = {{ {table}_act; }}\n        const default_action = {table}_act;\n        size = 1;\n    }}\n"
    )
}

/// The times a program holds as constants (a Tofino stateful ALU compares at most two values, so
/// these are not per-pool table data): the switch's connection timeout (T4) and the leaf's repair
/// gap (T12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    pub conn_timeout_us: u32,
    pub repair_gap_us: u16,
}

/// `horus_leaf.p4` or `horus_spine.p4`.
pub fn program(role: Role, sizes: &Sizes, preset: &str, times: Times) -> Result<String> {
    let Times {
        conn_timeout_us,
        repair_gap_us,
    } = times;
    let leaf = role == Role::Leaf;
    let mut keyless_tables = String::new();
    let mut computing: Vec<(&str, String)> = vec![
        (
            "reject_checksum",
            format!("reject({})", drop_const(DropReason::BadChecksum)),
        ),
        (
            "reject_malformed",
            format!("reject({})", drop_const(DropReason::Malformed)),
        ),
        (
            "reject_short",
            format!("reject({})", drop_const(DropReason::Malformed)),
        ),
        ("reject_kind", "reject_with_reason".into()),
        (
            "reject_pool",
            format!("reject({})", drop_const(DropReason::UnknownPool)),
        ),
        (
            "reject_empty",
            format!("reject({})", drop_const(DropReason::EmptyPool)),
        ),
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
            ("link_repair_none", "set_link_r(7)".to_string()),
        ]);
    } else {
        computing.extend([
            (
                "reject_node",
                format!("reject({})", drop_const(DropReason::NodeNotInPool)),
            ),
            (
                "reject_locked",
                format!("reject({})", drop_const(DropReason::IdleRemoveLocked)),
            ),
            (
                "reject_not_member",
                format!("reject({})", drop_const(DropReason::IdleRemoveNotMember)),
            ),
            (
                "reject_duplicate",
                format!("reject({})", drop_const(DropReason::IdleAddDuplicate)),
            ),
            ("consume", "consume_message".to_string()),
            ("remove_top", "remove_at_top".to_string()),
            ("last_check", "check_last".to_string()),
            ("remove_unlock", "remove_resubmit_unlock".to_string()),
            ("remove_move", "remove_resubmit_move".to_string()),
            ("remove_abort", "remove_resubmit_abort".to_string()),
        ]);
    }
    computing.sort_by_key(|(name, _)| (st(name), *name));
    for (name, action) in &computing {
        keyless_tables += &keyless(name, action);
    }
    // The pass's end by its verdict; a second pass's values by the first pass's outcome
    // (`resub.value[31:16]` 3: an aborted idle-remove, which returns the lock).
    keyless_tables += &keyed(
        "done",
        &["md.verdict: exact"],
        &["V_CONTROL : finish_control()", "V_DROP : finish_drop()"],
        "finish_pass()",
    );
    keyless_tables += &keyed(
        "decode",
        &["md.resub.value[31:16]: exact"],
        &["3 : decode_aborted_second_pass()"],
        "decode_second_pass()",
    );
    // A continuation: the last packet frees its entry.
    keyless_tables += &format!(
        "    action conn_follow_act() {{\n        md.conn_hit = conn_follow_ra.execute(md.conn_idx);\n    }}\n    action conn_last_act() {{\n        md.conn_hit = conn_last_ra.execute(md.conn_idx);\n    }}\n{}    action miss_conn() {{\n        md.out_node = 0xffff;\n        md.verdict = V_NODE;\n    }}\n{}",
        keyed_in(
            st("conn"),
            "conn_follow",
            &["hdr.horus.more_packets: exact"],
            &["0 : conn_last_act()"],
            "conn_follow_act()",
        ),
        keyless("conn_miss", "miss_conn"),
    );
    if leaf {
        keyless_tables += &link_rule(u32::from(sizes.pools));
        // The signal's type: a load report (no idle message), or the idle message of the link
        // rule (signal 1: the link changed to `link_a`'s other value) or of a repair (signal 2:
        // the spine's view, `link_r`, restated).
        keyless_tables += &keyed(
            "signal",
            &[
                "md.signal: ternary",
                "md.link_a: ternary",
                "md.link_r: ternary",
            ],
            &[
                "(0, _, _) : mirror_signal(SIG_LOAD_UPDATE)",
                "(1, 0, _) : mirror_signal(SIG_IDLE_ADD)",
                "(1, _, _) : mirror_signal(SIG_IDLE_REMOVE)",
                "(_, _, 1) : mirror_signal(SIG_IDLE_ADD)",
            ],
            "mirror_signal(SIG_IDLE_REMOVE)",
        );
    } else {
        keyless_tables += &keyed(
            "remove_finish",
            &["md.resub.value[31:16]: exact"],
            &["3 : finish_at_top()"],
            "finish_at()",
        );
    }

    let mut ra = String::new();
    let mut r = |table: &str, register: &str, body: &str| ra += &ra_table(table, register, body);
    if leaf {
        r(
            "ctl_pop",
            "idle_ctl",
            "md.ctl = ctl_pop_ra.execute(hdr.horus.pool_id);",
        );
    } else {
        r(
            "ctl_take",
            "idle_ctl",
            "md.ctl = ctl_take_ra.execute(hdr.horus.pool_id);",
        );
        r(
            "ctl_remove",
            "idle_ctl",
            "md.ctl = ctl_remove_ra.execute(hdr.horus.pool_id);",
        );
        r(
            "ctl_finish",
            "idle_ctl",
            "md.ctl = ctl_finish_ra.execute(hdr.horus.pool_id);",
        );
    }
    r(
        "ctl_push",
        "idle_ctl",
        "md.ctl = ctl_push_ra.execute(hdr.horus.pool_id);",
    );
    r(
        "members1_read",
        "members1",
        "md.m1 = members1_ra.execute(md.slot1);",
    );
    r(
        "members2_read",
        "members2",
        "md.m2 = members2_ra.execute(md.slot2);",
    );
    r(
        "idle_read",
        "idle_list",
        "md.n_ref = idle_read_ra.execute(md.idle_slot);",
    );
    r(
        "idle_write",
        "idle_list",
        "idle_write_ra.execute(md.idle_slot);",
    );
    r(
        "load1_read",
        "load1",
        "md.l1 = load1_read_ra.execute(md.m1[31:16]);",
    );
    r(
        "load2_read",
        "load2",
        "md.l2 = load2_read_ra.execute(md.m2[31:16]);",
    );
    r(
        "load1_write",
        "load1",
        "load1_write_ra.execute(hdr.horus.src_id);",
    );
    r(
        "load2_write",
        "load2",
        "load2_write_ra.execute(hdr.horus.src_id);",
    );
    r("load1_add", "load1", "load1_add_ra.execute(md.resub.node);");
    r("load2_add", "load2", "load2_add_ra.execute(md.resub.node);");
    r(
        "idle_index_check",
        "idle_index",
        "md.idx = idle_index_check_ra.execute(hdr.horus.src_id);",
    );
    r(
        "idle_index_set",
        "idle_index",
        "idle_index_set_ra.execute(md.push_ref[31:16]);",
    );
    if leaf {
        r(
            "idle_index_clear",
            "idle_index",
            "idle_index_clear_ra.execute(md.n_ref[31:16]);",
        );
        r(
            "avg_task",
            "pool_avg",
            "md.avg = avg_task_ra.execute(hdr.horus.pool_id);",
        );
        r(
            "avg_done",
            "pool_avg",
            "md.avg = avg_done_ra.execute(hdr.horus.pool_id);",
        );
        r(
            "avg_read",
            "pool_avg",
            "md.avg = avg_read_ra.execute(hdr.horus.pool_id);",
        );
        keyless_tables += &format!(
            "    action report_move_act() {{\n        report_move_ra.execute(hdr.horus.pool_id);\n    }}\n    action report_check_act() {{\n        md.report = report_check_ra.execute(hdr.horus.pool_id);\n    }}\n    action report_none_act() {{\n    }}\n{}",
            keyed_in(
                st("pool_report"),
                "report_rule",
                &["md.spine_x: ternary", "md.signal: ternary"],
                &["(0, _) : report_move_act()", "(_, 0) : report_check_act()",],
                "report_none_act()",
            )
        );
    } else {
        r(
            "idle_index_remove",
            "idle_index",
            "md.idx = idle_index_remove_ra.execute(hdr.horus.src_id);",
        );
    }
    r(
        "drift1_check",
        "drift1",
        "md.d_sel = drift1_check_ra.execute(md.sel);",
    );
    r(
        "drift1_charge",
        "drift1",
        "md.d_sel = drift1_charge_ra.execute(md.sel);",
    );
    r("drift1_reset", "drift1", "drift1_reset_ra.execute(md.sel);");
    r(
        "drift1_settle",
        "drift1",
        "drift1_settle_ra.execute(md.sel);",
    );
    r(
        "drift2_charge",
        "drift2",
        "drift2_charge_ra.execute(md.sel);",
    );
    r(
        "drift2_read",
        "drift2",
        "md.d_other = drift2_read_ra.execute(md.other);",
    );
    r("drift2_reset", "drift2", "drift2_reset_ra.execute(md.sel);");
    r(
        "drift2_settle",
        "drift2",
        "drift2_settle_ra.execute(md.sel);",
    );
    r(
        "conn_insert",
        "conn",
        "md.conn_claimed = conn_insert_ra.execute(md.conn_idx);",
    );
    r(
        "conn_node_write",
        "conn_node",
        "conn_node_write_ra.execute(md.conn_idx);",
    );
    r(
        "conn_node_read",
        "conn_node",
        "md.out_node = conn_node_read_ra.execute(md.conn_idx);\n        md.verdict = V_NODE;",
    );

    let vars = vec![
        ("ROLE", role.to_string()),
        ("INGRESS", ingress_control(role).to_string()),
        ("PRESET", preset.to_string()),
        ("POOLS", sizes.pools.to_string()),
        ("NODES", sizes.nodes.to_string()),
        ("CONN", sizes.conn_table.to_string()),
        ("CONN_MASK", format!("0x{:04x}", sizes.conn_table - 1)),
        ("CONN_TIMEOUT", conn_ticks(conn_timeout_us).to_string()),
        ("REPAIR_GAP", ticks_1024ns(u32::from(repair_gap_us)).to_string()),
        ("CLASSIFY_ENTRIES", classify_entries(role)),
        ("COMPUTING_TABLES", keyless_tables),
        ("REGISTER_TABLES", ra),
        ("COPIES", copies()),
        ("S_POOL", st("pool_cfg").to_string()),
        ("S_NODE", st("node_cfg").to_string()),
        ("S_SAMPLE", st("sample1").to_string()),
        ("S_ADDR", st("node_addr").to_string()),
        ("ROLE_REGISTERS", if leaf { LEAF_REGISTERS } else { SPINE_REGISTERS }.to_string()),
        ("ROLE_ACTIONS", if leaf { LEAF_ACTIONS } else { SPINE_ACTIONS }.to_string()),
        (
            "NEW_LOAD",
            if leaf { "hdr.horus.qlen ++ 16w0" } else { "hdr.horus.qlen ++ hdr.horus.seq_num" }
                .to_string(),
        ),
        ("SPINE_CHECK", if leaf { LEAF_SPINE_CHECK } else { "" }.to_string()),
        ("TASK_APPLY", task_apply(leaf)),
        ("RANDOM_AVG", if leaf { ind(AVG_TASK, 20) } else { String::new() }),
        ("SECOND_AVG", if leaf { ind(AVG_TASK, 12) } else { String::new() }),
        ("MESSAGE_APPLY", if leaf { LEAF_MESSAGE_APPLY } else { SPINE_MESSAGE_APPLY }.to_string()),
        (
            "SRC_REWRITE",
            if leaf { "" } else { "        hdr.horus.src_id = md.switch_id;\n" }.to_string(),
        ),
        (
            "SIGNAL_APPLY",
            if leaf {
                "        if (md.signal != 0 || md.report != 0) {\n            signal.apply();\n        }\n"
            } else {
                ""
            }
            .to_string(),
        ),
    ];
    fill(PROGRAM, &vars)
}

/// The leaf's link rule: the range table that turns a pool's new idle count into the linked value
/// that calls for a change (`md.link_a`), the table that reads the spine's view from a task
/// (`md.link_r`), and the register's three actions chosen by the two (T12 in
/// `docs/algorithm.md`: a stateful ALU compares at most two values).
fn link_rule(pools: u32) -> String {
    let mut s = format!(
        "    /* The linked value a pool's new idle count calls to change: 0 (link) at or above
     * link_at, 1 (unlink) at or below unlink_at. The set-up writes two entries a pool with a
     * spine; a pool without one has none, and no link. */
    @stage({}) table link_range {{
        key = {{
            hdr.horus.pool_id: exact;
            md.p_new: range;
        }}
        actions = {{ set_link_a; }}
        const default_action = set_link_a(7);
        size = {};
    }}
",
        st("link_range"),
        2 * pools
    );
    // A task from the pool's spine (spine_x 0) shows the value the spine believes lost: its
    // idle-selected flag (qlen != 0) says the rack was linked.
    s += &keyed(
        "link_repair",
        &["md.spine_x: ternary", "hdr.horus.qlen: ternary"],
        &["(0, 0) : set_link_r(1)", "(0, _) : set_link_r(0)"],
        "set_link_r(7)",
    );
    for (what, ra) in [
        ("change", "link_change_ra"),
        ("repair", "link_repair_ra"),
        ("both", "link_both_ra"),
    ] {
        s += &format!(
            "    action link_{what}_act() {{\n        md.signal = {ra}.execute(hdr.horus.pool_id);\n    }}\n"
        );
    }
    s += "    action link_none() {\n    }\n";
    // (a, 7) and (a, a): a change; (7, r): a repair; (a, 1 - a): both.
    s + &keyed_in(
        st("idle_link"),
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
    )
}

/// A register action's declaration: `name` on register `reg` of `cell`s, returning `out`.
fn ra_decl(reg: &str, name: &str, cell: &str, out: &str, body: &str) -> String {
    let body = body
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect::<String>();
    format!(
        "    RegisterAction<{cell}, bit<16>, {out}>({reg}) {name} = {{\n        void apply(inout {cell} v, out {out} rv) {{\n{body}        }}\n    }};\n"
    )
}

/// The two copies of the load and drift lists, with their register actions: what both copies
/// do, and what only one does (the drift check on the first, reading the other sample's drift
/// on the second).
fn copies() -> String {
    let mut s = String::from("    /* loadList1, loadList2: 16.16 loads. */\n");
    for k in [1, 2] {
        let reg = format!("load{k}");
        s += &format!("    Register<bit<32>, bit<16>>(NODES) {reg};\n");
        for (what, body) in [
            ("read", "rv = v;"),
            ("write", "v = md.new_load;\nrv = v;"),
            ("add", "v = v + md.w_add;\nrv = v;"),
        ] {
            s += &ra_decl(
                &reg,
                &format!("{reg}_{what}_ra"),
                "bit<32>",
                "bit<32>",
                body,
            );
        }
    }
    s += "\n    /* driftList1, driftList2: signed 16.16. The check charges sel when its drift is within the\n     * load difference (rv 0), else returns the drift (then above the difference, never 0). */\n";
    for k in [1, 2] {
        let reg = format!("drift{k}");
        s += &format!("    Register<int<32>, bit<16>>(NODES) {reg};\n");
        let own = if k == 1 {
            (
                "check",
                "if (v <= (int<32>)md.diff) {\n    v = v + (int<32>)md.sel_factor;\n    rv = 0;\n} else {\n    rv = v;\n}",
            )
        } else {
            ("read", "rv = v;")
        };
        for (what, body) in [
            own,
            ("charge", "v = v + (int<32>)md.sel_factor;\nrv = 0;"),
            ("reset", "v = 0;\nrv = 0;"),
            ("settle", "v = v - md.w_drift;\nrv = 0;"),
        ] {
            s += &ra_decl(
                &reg,
                &format!("{reg}_{what}_ra"),
                "int<32>",
                "int<32>",
                body,
            );
        }
    }
    s
}

/// A task to a worker moves a leaf's rack average, and the report rule looks at it.
const AVG_TASK: &str = "avg_task.apply();\nreport_rule.apply();\n";

/// `lines` (one statement a line, not indented) indented by `n` spaces.
fn ind(lines: &str, n: usize) -> String {
    lines.lines().map(|l| format!("{:n$}{l}\n", "")).collect()
}

const LEAF_SPINE_CHECK: &str = r#"            if (md.spine_session != 0 && (hdr.horus.pkt_type == PKT_NEW_TASK || hdr.horus.pkt_type == PKT_NEW_TASK_RANDOM)) {
                spine_check.apply();
            } else {
                spine_clear.apply();
            }
"#;

/// The apply block of a NEW_TASK's first pass.
fn task_apply(leaf: bool) -> String {
    let (take, link, index, avg_idle, avg, avg_none) = if leaf {
        (
            "ctl_pop",
            ind(
                "link_range.apply();\nlink_repair.apply();\nlink_rule.apply();",
                20,
            ),
            ind("idle_index_clear.apply();", 24),
            ind(AVG_TASK, 24),
            ind(AVG_TASK, 28),
            ind("avg_read.apply();", 28),
        )
    } else {
        (
            "ctl_take",
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        )
    };
    format!(
        r#"                    {take}.apply();
                    if (md.ctl > 0) {{
                        idle_take.apply();
                    }} else {{
                        idle_keep.apply();
                        members1_read.apply();
                        members2_read.apply();
                    }}
{link}                    if (md.ctl > 0) {{
                        idle_read.apply();
{index}                        pick_idle.apply();
                        drift1_charge.apply();
                        drift2_charge.apply();
{avg_idle}                        out_sel.apply();
                    }} else {{
                        load1_read.apply();
                        load2_read.apply();
                        same_check.apply();
                        load_cmp.apply();
                        if (md.d21 == 0) {{
                            pick1.apply();
                        }} else {{
                            pick2.apply();
                        }}
                        if (md.same == 0 || hdr.horus.more_packets == 1) {{
                            drift1_charge.apply();
                        }} else {{
                            drift1_check.apply();
                        }}
                        if (md.d_sel == 0) {{
                            drift2_charge.apply();
{avg}                            out_sel.apply();
                        }} else {{
                            drift2_read.apply();
{avg_none}                            queues.apply();
                            queue_gap.apply();
                            if (md.q_gap[31:31] == 1) {{
                                win_other.apply();
                            }} else {{
                                win_sel.apply();
                            }}
                        }}
                    }}
"#
    )
}

const LEAF_REGISTERS: &str = r#"    /* A leaf's pop takes the worker out of idleIndex. */
    RegisterAction<bit<16>, bit<16>, bit<16>>(idle_index) idle_index_clear_ra = {
        void apply(inout bit<16> v, out bit<16> rv) {
            v = 0;
            rv = 0;
        }
    };
    /* A leaf pops the top idle worker: rv = the word before the pop (p; negative: locked). */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_pop_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            rv = v.lo;
            if (v.lo > 0) {
                v.lo = v.lo - 1;
            }
        }
    };
    /* An idle add's commit pushes: rv = the word before the push (p: its position). */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_push_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            rv = v.lo;
            v.lo = v.lo + 1;
        }
    };

    /* The link rule and the repair of lost idle messages (decisions 6 and 17; T12). lo: linked;
     * hi: the earliest time of a repair, in 1.024 us ticks, compared signed with the pass's
     * time (a repair is due when the difference is not negative). The table link_rule runs one
     * of three actions by md.link_a, the linked value that calls for a change (7: none), and
     * md.link_r, the one a task from the spine shows the spine lost (7: none): a change, a
     * repair, or both where link_r is link_a's other value; each compares two values at most,
     * as a stateful ALU does. rv: 0 none, 1 the link changed, 2 a repair. */
    Register<ipair_t, bit<16>>(POOLS) idle_link;
    RegisterAction<ipair_t, bit<16>, bit<8>>(idle_link) link_change_ra = {
        void apply(inout ipair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == (int<32>)(bit<32>)md.link_a) {
                v.lo = 1 - v.lo;
                v.hi = (int<32>)md.now + REPAIR_GAP;
                rv = 1;
            }
        }
    };
    RegisterAction<ipair_t, bit<16>, bit<8>>(idle_link) link_repair_ra = {
        void apply(inout ipair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == (int<32>)(bit<32>)md.link_r && (int<32>)md.now - v.hi >= 0) {
                v.hi = (int<32>)md.now + REPAIR_GAP;
                rv = 2;
            }
        }
    };
    RegisterAction<ipair_t, bit<16>, bit<8>>(idle_link) link_both_ra = {
        void apply(inout ipair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == (int<32>)(bit<32>)md.link_a) {
                v.lo = 1 - v.lo;
                v.hi = (int<32>)md.now + REPAIR_GAP;
                rv = 1;
            } else if ((int<32>)md.now - v.hi >= 0) {
                v.hi = (int<32>)md.now + REPAIR_GAP;
                rv = 2;
            }
        }
    };

    /* The rack average in 16.16 (lo) and the tasks it counts (hi). */
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

    /* The report rule: an average at hi = last + report_delta or more, or below
     * lo = last - report_delta + 1 (never when the last report was below report_delta), sends a
     * load update, unless an idle message leaves with this pass; both margins move with every
     * task from the spine (which counted it). The table `report_rule` picks the register action
     * by the pass (a task from the spine: move; no idle message: check), so that each keeps to
     * a stateful ALU's two comparisons. */
    Register<pair_t, bit<16>>(POOLS) pool_report;
    RegisterAction<pair_t, bit<16>, bit<8>>(pool_report) report_move_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            v.lo = v.lo + md.unit;
            v.hi = v.hi + md.unit;
            rv = 0;
        }
    };
    RegisterAction<pair_t, bit<16>, bit<8>>(pool_report) report_check_ra = {
        void apply(inout pair_t v, out bit<8> rv) {
            rv = 0;
            if (md.avg >= v.hi || md.avg < v.lo) {
                v.lo = md.avg |-| md.report_delta_m1;
                v.hi = md.avg + md.report_delta;
                rv = 1;
            }
        }
    };
"#;

const SPINE_REGISTERS: &str = r#"    /* A spine takes its idle racks in turn: rv = the turn (1..p), 0 if none is idle or the
     * removal lock is held; the turn goes on by one and from p round to 1. */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_take_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            if (v.lo > 0) {
                rv = v.hi;
                if (v.hi == v.lo) {
                    v.hi = 1;
                } else {
                    v.hi = v.hi + 1;
                }
            } else {
                rv = 0;
            }
        }
    };
    /* An idle add's commit pushes: rv = the word before the push (p: its position). */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_push_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            rv = v.lo;
            v.lo = v.lo + 1;
        }
    };
    /* A removal's first pass: unless locked or empty, take the lock and the top
     * (p - 1 + LOCK = p + 0x7fffffff); a turn at the top goes round to 1. rv = the word before. */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_remove_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            rv = v.lo;
            if (v.lo > 0) {
                if (v.hi == v.lo) {
                    v.hi = 1;
                }
                v.lo = v.lo + 0x7fffffff;
            }
        }
    };
    /* A removal's second pass releases the lock (+LOCK) and, aborting, pushes the former top
     * back (+1): md.finish_add. rv = the word before (its p is where an abort pushes). */
    RegisterAction<ipair_t, bit<16>, int<32>>(idle_ctl) ctl_finish_ra = {
        void apply(inout ipair_t v, out int<32> rv) {
            rv = v.lo;
            v.lo = v.lo + (int<32>)md.finish_add;
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

const LEAF_ACTIONS: &str = r#"    action check_spine() {
        md.spine_x = hdr.horus.src_id ^ md.spine_id;
    }
    action clear_spine() {
        md.spine_x = 0xffff;
    }
    action forward_reply(bit<8> reason) {
        md.verdict = V_PASS_THROUGH;
        md.reason = reason;
    }
    /* The link rule's inputs (7: none, a value the flag never holds). */
    action set_link_a(bit<16> a) {
        md.link_a = a;
    }
    action set_link_r(bit<16> r) {
        md.link_r = r;
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

const SPINE_ACTIONS: &str = r#"    action consume_message() {
        md.verdict = V_DROP;
        md.reason = DROP_NONE;
    }
    action remove_at_top() {
        md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl - 1;
    }
    action finish_at() {
        md.idle_slot = md.base + md.resub.value[15:0];
        md.p_new = md.resub.value[15:0] + 1;
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
        md.resub.value = (32w2 << 16) | (bit<32>)(md.idx - 1);
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

/// A leaf's replies and idle-add commits.
const LEAF_MESSAGE_APPLY: &str = r#"        } else if (md.kind == KIND_REPLY || md.kind == KIND_REPLY_IDLE) {
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
                report_rule.apply();
            }
        } else if (md.kind == KIND_ADD_COMMIT) {
            ctl_push.apply();
            idle_push.apply();
            link_range.apply();
            link_repair_none.apply();
            link_rule.apply();
            idle_write.apply();
            idle_index_set.apply();
            avg_read.apply();
"#;

/// A spine's messages from its racks.
const SPINE_MESSAGE_APPLY: &str = r#"        } else if (md.kind == KIND_LOAD_UPDATE) {
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
        } else if (md.kind == KIND_ADD_COMMIT) {
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

const PROGRAM: &str = r#"/* Horus $ROLE for Tofino 1 (TNA).
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

    /* ---- Registers, with their register actions. ---- */

    /* idleCtl: lo = the removal lock (bit 31) and p, hi = the spine's turn (from 1). */
    Register<ipair_t, bit<16>>(POOLS, {0, 1}) idle_ctl;

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
    @stage(0) table switch_cfg {
        actions = { set_switch; }
        default_action = set_switch(0, 0, 0, 1);
        size = 1;
    }

    action set_kind(bit<8> kind, bit<8> reason) {
        md.kind = kind;
        md.reason = reason;
        passes.count(kind);
    }
    @stage(0) table classify {
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
    action set_pool(bit<16> base, bit<16> n, bit<16> spine_id, bit<16> spine_node,
            MirrorId_t spine_session, bit<32> report_delta, bit<32> report_delta_m1, bit<32> unit) {
        md.pool_ok = 1;
        md.base = base;
        md.n = n;
        md.spine_id = spine_id;
        md.spine_node = spine_node;
        md.spine_session = spine_session;
        md.report_delta = report_delta;
        md.report_delta_m1 = report_delta_m1;
        md.unit = unit;
    }
    action no_pool() {
        md.pool_ok = 0;
    }
    @stage($S_POOL) table pool_cfg {
        key = { hdr.horus.pool_id: exact; }
        actions = { set_pool; no_pool; }
        const default_action = no_pool;
        size = $POOLS;
    }

    /* node: the active nodes of each pool, and their additive factors (the control plane). */
    action set_node(bit<32> factor) {
        md.node_ok = 1;
        md.node_factor = factor;
    }
    action no_node() {
        md.node_ok = 0;
    }
    @stage($S_NODE) table node_cfg {
        key = {
            hdr.horus.src_id: exact;
            hdr.horus.pool_id: exact;
        }
        actions = { set_node; no_node; }
        const default_action = no_node;
        size = $NODES;
    }

    action draw_values() {
        bit<32> r = rng.get();
        md.r1 = r[15:0];
        md.r2 = r[31:16];
        md.now = ig_intr_md.ingress_mac_tstamp[41:10];
        md.now_c = ig_intr_md.ingress_mac_tstamp[47:16];
        md.conn_idx = conn_hash.get({hdr.horus.pool_id, hdr.horus.seq_num}) & CONN_MASK;
        md.len_gap = hdr.ipv4.total_len - hdr.udp.hdr_length;
        md.conn_key = hdr.horus.pool_id ++ hdr.horus.seq_num;
        md.new_load = $NEW_LOAD;
    }

    action decode_second_pass() {
        md.w_add = md.resub.value + (bit<32>)md.resub.aux + 1;
        md.w_drift = (int<32>)md.resub.value;
        md.finish_add = LOCK;
    }
    action decode_aborted_second_pass() {
        md.w_add = md.resub.value + (bit<32>)md.resub.aux + 1;
        md.w_drift = (int<32>)md.resub.value;
        md.finish_add = LOCK + 1;
    }

    /* ---- Stage 1: the samples, from range tables the control plane writes (a pool and a
     * 16-bit draw to the slot base + floor(draw * n / 2^16)), and idleCtl. ---- */

    action set_slot1(bit<16> slot) {
        md.slot1 = slot;
    }
    action set_slot2(bit<16> slot) {
        md.slot2 = slot;
    }
    @stage($S_SAMPLE) table sample1 {
        key = {
            hdr.horus.pool_id: exact;
            md.r1: range;
        }
        actions = { set_slot1; }
        default_action = set_slot1(0);
        size = $NODES;
    }
    @stage($S_SAMPLE) table sample2 {
        key = {
            hdr.horus.pool_id: exact;
            md.r2: range;
        }
        actions = { set_slot2; }
        default_action = set_slot2(0);
        size = $NODES;
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
        md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl - 1;
        md.p_new = (bit<16>)(bit<32>)md.ctl - 1;
    }
    action keep_idle() {
        md.p_new = (bit<16>)(bit<32>)md.ctl;
    }
    action push_at() {
        md.idle_slot = md.base + (bit<16>)(bit<32>)md.ctl;
        md.p_new = (bit<16>)(bit<32>)md.ctl + 1;
        md.push_ref = md.resub.node ++ md.resub.aux;
    }

    /* ---- Stages 3 to 5: the samples' loads compared. ---- */

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
        md.resub.aux = (bit<16>)(md.node_factor - 1);
        md.resub.value = 0;
    }

$ROLE_ACTIONS
    /* ---- Stage 6: the node the pass charges. ---- */

    action pick_first() {
        md.sel = md.m1[31:16];
        md.sel_factor = (bit<32>)md.m1[15:0] + 1;
        md.other = md.m2[31:16];
        md.other_factor = (bit<32>)md.m2[15:0] + 1;
        md.diff = md.d12;
        md.l_sel = md.l1;
        md.l_other = md.l2;
        md.from_idle = 0;
    }
    action pick_second_sample() {
        md.sel = md.m2[31:16];
        md.sel_factor = (bit<32>)md.m2[15:0] + 1;
        md.other = md.m1[31:16];
        md.other_factor = (bit<32>)md.m1[15:0] + 1;
        md.diff = md.d21;
        md.l_sel = md.l2;
        md.l_other = md.l1;
        md.from_idle = 0;
    }
    action pick_idle_node() {
        md.sel = md.n_ref[31:16];
        md.sel_factor = (bit<32>)md.n_ref[15:0] + 1;
        md.from_idle = 1;
    }
    action pick_random_node() {
        md.sel = md.m1[31:16];
        md.sel_factor = (bit<32>)md.m1[15:0] + 1;
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
        md.resub.aux = (bit<16>)(md.sel_factor - 1);
        md.resub.value = (bit<32>)md.d_sel;
    }
    action resubmit_other() {
        ig_dprsr_md.resubmit_type = RESUBMIT_SECOND_PASS;
        md.resub.setValid();
        md.resub.node = md.other;
        md.resub.aux = (bit<16>)(md.other_factor - 1);
        md.resub.value = (bit<32>)md.d_other;
    }
    action out_to_sel() {
        md.verdict = V_NODE;
        md.out_node = md.sel;
    }

    /* ---- Stage 11: nodeAddr, the rewrite towards the node; where everything else goes. ---- */

    action to_node(PortId_t port, bit<48> mac, bit<32> ip, bit<16> udp_port, bit<16> dst_id) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = mac;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.dst_port = udp_port;
        hdr.udp.checksum = 0;
        hdr.horus.dst_id = dst_id;
        hdr.horus.qlen = (bit<16>)md.from_idle;
$SRC_REWRITE    }
    action node_gone() {
        ig_dprsr_md.drop_ctl = 1;
        drops.count(DROP_CONTINUATION_MISS);
    }
    @stage($S_ADDR) table node_addr {
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
            if (ig_intr_md.resubmit_flag == 1) {
                decode.apply();
            }
$SPINE_CHECK        }
        if (hdr.ipv4.isValid() && md.csum_err) {
            reject_checksum.apply();
        } else if (!hdr.horus.isValid()) {
            if (hdr.udp.isValid() && hdr.udp.dst_port == HORUS_UDP_PORT) {
                reject_malformed.apply();
            } else {
                pass_through.apply();
            }
        } else if (md.len_gap != 20 || hdr.udp.hdr_length < 19) {
            reject_short.apply();
        } else if (md.kind == 0 || md.kind == KIND_REJECT) {
            reject_kind.apply();
        } else if (md.kind == KIND_CONTROL) {
            to_control.apply();
        } else if (md.kind == KIND_PASS_THROUGH) {
            pass_through.apply();
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
                    pick_random.apply();
                    drift1_charge.apply();
                    drift2_charge.apply();
$RANDOM_AVG                    out_sel.apply();
                } else {
$TASK_APPLY                }
                if (hdr.horus.more_packets == 1) {
                    conn_insert.apply();
                    if (md.conn_claimed == 1) {
                        conn_node_write.apply();
                    }
                }
            }
        } else if (md.kind == KIND_TASK_SECOND) {
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
$MESSAGE_APPLY        }
$SIGNAL_APPLY        if (md.verdict == V_NODE) {
            node_addr.apply();
        } else {
            done.apply();
        }
    }
}

Pipeline(HorusIngressParser(), $INGRESS(), HorusIngressDeparser(),
         HorusEgressParser(), HorusEgress(), HorusEgressDeparser()) pipe;

Switch(pipe) main;
"#;
