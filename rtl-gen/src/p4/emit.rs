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
//! computation sits in an action of a table with an `@horus_stage`, the apply blocks only branch and
//! apply tables, and each table is applied at one place.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use horus_model::config::{Role, Sizes};
use horus_model::sched::DropReason;
use horus_model::wire::{self, PacketType};

use super::bfrt::{conn_ticks, ticks_1024ns};
use super::ir;
use super::plan;
use super::templates::{COMMON, PROGRAM};

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

/// The stage of a table in the plan ([`plan::stage`]).
pub(super) fn st(table: &str) -> u8 {
    plan::stage(table).unwrap_or_else(|| panic!("{table} has a stage in the Tofino plan"))
}

/// The leaf's registers up to this stage (`idle_ctl`, the member lists, the idle list, the
/// tables of stage 4 and the link rule's `idle_link`) are pinned to the plan's stage by
/// bf-p4c's `@stage(N)` (`ingress::pin`).
pub const LEAF_PINNED_UNTIL: u8 = 5;
/// The leaf's registers from this stage on (the connection tables and the report) are placed
/// last by bf-p4c (`ingress::pin`).
pub const LEAF_LATE_REGISTERS: u8 = 9;

/// The times a program holds as constants (a Tofino stateful ALU compares at most two values, so
/// these are not per-pool table data): the switch's connection timeout (T4) and the leaf's repair
/// gap (T12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Times {
    pub conn_timeout_us: u32,
    pub repair_gap_us: u16,
}

/// `role`'s ingress control, typed ([`super::ingress::control`]).
pub fn ingress(role: Role, sizes: &Sizes) -> ir::Control {
    super::ingress::control(role, sizes)
}

/// `horus_leaf.p4` or `horus_spine.p4`.
pub fn program(role: Role, sizes: &Sizes, preset: &str, times: Times) -> Result<String> {
    print(role, &ingress(role, sizes), sizes, preset, times)
}

/// The program around `ingress`: its constants, the control, the pipeline.
pub fn print(
    role: Role,
    ingress: &ir::Control,
    sizes: &Sizes,
    preset: &str,
    times: Times,
) -> Result<String> {
    fill(
        PROGRAM,
        &[
            ("ROLE", role.to_string()),
            ("INGRESS", ingress_control(role).to_string()),
            ("PRESET", preset.to_string()),
            ("POOLS", sizes.pools.to_string()),
            ("NODES", sizes.nodes.to_string()),
            ("CONN", sizes.conn_table.to_string()),
            ("CONN_MASK", format!("0x{:04x}", sizes.conn_table - 1)),
            (
                "CONN_TIMEOUT",
                conn_ticks(times.conn_timeout_us).to_string(),
            ),
            (
                "REPAIR_GAP",
                ticks_1024ns(u32::from(times.repair_gap_us)).to_string(),
            ),
            ("CONTROL", ingress.print()),
        ],
    )
}
