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
use super::check;
use super::plan;
use super::ra_tables::register_tables;
use super::templates::*;

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
        "    @horus_stage({}) table {name} {{\n        actions = {{ {bare}; }}\n        const default_action = {action};\n        size = 1;\n    }}\n",
        st(name)
    )
}

/// A computing table that chooses its action by `keys` (`field: match_kind`) from constant
/// `entries` (`(key values) : action(args)`, in priority order), else `default` (none if empty:
/// the entries cover every key): how a value that depends on a field is chosen on Tofino, where
/// an action's own conditions may read only its parameters.
fn keyed(name: &str, keys: &[&str], entries: &[&str], default: &str) -> String {
    keyed_at(
        &format!("@horus_stage({})", st(name)),
        name,
        keys,
        entries,
        default,
    )
}

/// [`keyed`] at a register's `stage`, for a table that executes the register's actions in
/// `role`'s program (with bf-p4c's placement annotations: [`pin`]).
fn keyed_in(
    stage: u8,
    role: Role,
    name: &str,
    keys: &[&str],
    entries: &[&str],
    default: &str,
) -> String {
    keyed_at(&pin(stage, role), name, keys, entries, default)
}

/// The leaf's registers up to this stage (`idle_ctl`, the member lists, the idle list, the
/// tables of stage 4 and the link rule's `idle_link`) are pinned to the plan's stage by
/// bf-p4c's `@stage(N)` ([`pin`]).
pub const LEAF_PINNED_UNTIL: u8 = 5;
/// The leaf's registers from this stage on (the connection tables and the report) are placed
/// last by bf-p4c ([`pin`]).
pub const LEAF_LATE_REGISTERS: u8 = 9;

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
fn pin(stage: u8, role: Role) -> String {
    match role {
        Role::Spine => format!("@horus_stage({stage}) @stage({stage})"),
        Role::Leaf if stage <= LEAF_PINNED_UNTIL => {
            format!("@horus_stage({stage}) @stage({stage})")
        }
        Role::Leaf if stage >= LEAF_LATE_REGISTERS => {
            format!("@horus_stage({stage}) @placement_priority(-1)")
        }
        Role::Leaf => format!("@horus_stage({stage})"),
    }
}

/// A keyed table with its stage annotations `at`.
fn keyed_at(at: &str, name: &str, keys: &[&str], entries: &[&str], default: &str) -> String {
    let mut actions: Vec<&str> = entries
        .iter()
        .map(|e| e.rsplit_once(':').map_or(*e, |(_, a)| a).trim())
        .chain([default])
        .map(|a| a.split('(').next().unwrap_or(a).trim())
        .filter(|a| !a.is_empty())
        .collect();
    actions.sort();
    actions.dedup();
    format!(
        "    {at} table {name} {{\n        key = {{\n{}        }}\n        actions = {{ {}; }}\n        const entries = {{\n{}        }}\n{}        size = {};\n    }}\n",
        keys.iter()
            .map(|k| format!("            {k};\n"))
            .collect::<String>(),
        actions.join("; "),
        entries
            .iter()
            .map(|e| format!("            {e};\n"))
            .collect::<String>(),
        if default.is_empty() {
            String::new()
        } else {
            format!("        const default_action = {default};\n")
        },
        entries.len()
    )
}

/// A table that executes a register action: `table` at the register's stage, with an action of
/// the same name and `_act` that runs `body`.
pub(super) fn ra_table(table: &str, register: &str, body: &str, role: Role) -> String {
    let stage = st(register);
    format!(
        "    action {table}_act() {{\n        {body}\n    }}\n    {} table {table} {{\n        actions = {{ {table}_act; }}\n        const default_action = {table}_act;\n        size = 1;\n    }}\n",
        pin(stage, role)
    )
}

/// The two actions that pick between the samples: `pick_first` charges sample 1 (`sel`) and
/// keeps sample 2 as the other, `pick_second_sample` the reverse.
fn pick_samples() -> String {
    [("pick_first", 1, 2), ("pick_second_sample", 2, 1)]
        .iter()
        .map(|(name, s, o)| {
            format!(
                "    action {name}() {{\n        md.sel = md.m{s}[31:16];\n        md.sel_factor = md.f{s} + 1;\n        md.sel_aux = md.m{s}[15:0];\n        md.other = md.m{o}[31:16];\n        md.other_factor = md.f{o} + 1;\n        md.other_aux = md.m{o}[15:0];\n        md.diff = md.d{s}{o};\n        md.l_sel = md.l{s};\n        md.l_other = md.l{o};\n        md.from_idle = 0;\n    }}\n"
            )
        })
        .collect()
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
    let keyless_tables = keyless_computing(leaf) + &keyed_computing(leaf, sizes);
    let ra = register_tables(role);
    let vars = vec![
        ("ROLE", role.to_string()),
        ("INGRESS", ingress_control(role).to_string()),
        ("PRESET", preset.to_string()),
        ("POOLS", sizes.pools.to_string()),
        ("NODES", sizes.nodes.to_string()),
        (
            "SAMPLE_ENTRIES",
            (u32::from(sizes.pools) * u32::from(horus_model::rng::TOFINO_DRAWS)).to_string(),
        ),
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
        (
            "ROLE_REGISTERS",
            if leaf {
                fill(LEAF_REGISTERS, &[("LINK_REGISTERS", link_registers())])?
            } else {
                SPINE_REGISTERS.to_string()
            },
        ),
        ("ROLE_ACTIONS", if leaf { LEAF_ACTIONS } else { SPINE_ACTIONS }.to_string()),
        ("PICK_SAMPLES", pick_samples()),
        (
            "TAKE_IDLE",
            if leaf {
                "        md.idle_slot = md.base_m1 + (bit<16>)(bit<32>)md.ctl;\n        md.p_new = (bit<16>)(bit<32>)md.ctl - 1;\n"
            } else {
                "        md.idle_slot = turn_take_ra.execute(hdr.horus.pool_id);\n"
            }
            .to_string(),
        ),
        (
            "NEW_LOAD",
            if leaf { "hdr.horus.qlen ++ 16w0" } else { "hdr.horus.qlen ++ hdr.horus.seq_num" }
                .to_string(),
        ),
        ("SPINE_CHECK", if leaf { LEAF_SPINE_CHECK } else { "" }.to_string()),
        (
            "SPINE_DECODE",
            if leaf {
                ""
            } else {
                "                decode_finish.apply();\n                decode_pos.apply();\n"
            }
            .to_string(),
        ),
        ("TASK_APPLY", task_apply(leaf)),
        ("RANDOM_END", task_end(leaf, 20)),
        ("SECOND_AVG", if leaf { ind(AVG_TASK, 12) } else { String::new() }),
        ("MESSAGE_APPLY", if leaf { LEAF_MESSAGE_APPLY } else { SPINE_MESSAGE_APPLY }.to_string()),
        ("CTL_APPLY", if leaf { LEAF_CTL_APPLY } else { SPINE_CTL_APPLY }.to_string()),
        (
            "SRC_REWRITE",
            if leaf { "" } else { "        hdr.horus.src_id = src_id;\n" }.to_string(),
        ),
        (
            "SRC_PARAM",
            if leaf { "" } else { ", bit<16> src_id" }.to_string(),
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
    unshare(fill(PROGRAM, &vars)?)
}

/// `text` with a table of its own for each place after the first where a table is applied whose
/// successors differ between its places ([`check::next_table_conflicts`]), and again for the
/// tables before a copy, until none is left: a Tofino 1 table has one next table (`docs/p4.md`). The copy at place `k` is `NAME_k`, declared beside `NAME` with
/// the same stage, key, actions and entries; the places are exclusive, so a pass still applies
/// one of them and touches each register once.
fn unshare(mut text: String) -> Result<String> {
    // A copy changes its predecessors' successors: to a fixed point, a table at a time.
    while let Some(t) = check::next_table_conflicts(&text)?.into_iter().next() {
        let head = format!("table {t} {{");
        let at = text
            .find(&head)
            .ok_or_else(|| anyhow::anyhow!("no declaration of table {t}"))?;
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = at
            + text[at..]
                .find("\n    }\n")
                .ok_or_else(|| anyhow::anyhow!("no end of table {t}"))?
            + "\n    }\n".len();
        let decl = text[start..end].to_string();
        let call = format!("{t}.apply();");
        let places: Vec<usize> = text
            .match_indices(&call)
            .map(|(i, _)| i)
            .filter(|&i| text[..i].ends_with(' '))
            .collect();
        let mut copies = String::new();
        for (k, &i) in places.iter().enumerate().skip(1).rev() {
            let name = format!("{t}_{}", k + 1);
            text.replace_range(i..i + call.len(), &format!("{name}.apply();"));
            copies.insert_str(0, &decl.replacen(&head, &format!("table {name} {{"), 1));
        }
        text.insert_str(end, &copies);
    }
    Ok(text)
}

/// The computing tables with one action, in stage order: the rejections with their drop
/// reasons, and the arithmetic between table accesses.
fn keyless_computing(leaf: bool) -> String {
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
            ("decode_pos", "read_pos".to_string()),
            ("remove_abort", "remove_resubmit_abort".to_string()),
        ]);
    }
    computing.sort_by_key(|(name, _)| (st(name), *name));
    computing
        .iter()
        .map(|(name, action)| keyless(name, action))
        .collect()
}

/// The computing tables that choose their action by a key: a pass's end, a second pass's values,
/// a continuation's connection, and the leaf's link rule, signal and report rule (the spine's
/// removal finish).
fn keyed_computing(leaf: bool, sizes: &Sizes) -> String {
    let mut tables = String::new();
    // The pass's end by its verdict; a second pass's values by the first pass's outcome
    // (`resub.value[31:16]` 3: an aborted idle-remove, which returns the lock).
    // Their actions count by a field or execute a register by one, which the hash unit does, and
    // Tofino runs no such action as a default: the entries cover every key, with no default.
    tables += &keyed(
        "done",
        &["md.verdict: ternary"],
        &[
            "V_CONTROL : finish_control()",
            "V_DROP : finish_drop()",
            "_ : finish_pass()",
        ],
        "",
    );
    // A continuation: the last packet frees its entry.
    tables += &format!(
        "    action conn_follow_act() {{\n        md.conn_hit = conn_follow_ra.execute(md.conn_idx);\n    }}\n    action conn_last_act() {{\n        md.conn_hit = conn_last_ra.execute(md.conn_idx);\n    }}\n{}    action miss_conn() {{\n        md.out_node = 0xffff;\n        md.verdict = V_NODE;\n    }}\n{}",
        keyed_in(
            st("conn"),
            if leaf { Role::Leaf } else { Role::Spine },
            "conn_follow",
            &["hdr.horus.more_packets: exact"],
            &["0 : conn_last_act()", "1 : conn_follow_act()"],
            "",
        ),
        keyless("conn_miss", "miss_conn"),
    );
    if leaf {
        tables += &link_rule(u32::from(sizes.pools));
        // The signal's type: a load report (no idle message), or an idle message (signal 1): the
        // link changed to `link_a`'s other value, or (link_a 7) a repair restating the spine's
        // lost view, `link_r`. Where both apply (link_r is link_a's other value) they agree.
        tables += &keyed(
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
        );
    } else {
        tables += &keyed(
            "decode_finish",
            &["md.resub.value[31:16]: exact"],
            &["3 : finish_aborted()"],
            "finish_normal()",
        );
        tables += &keyed(
            "remove_finish",
            &["md.resub.value[31:16]: exact"],
            &["3 : finish_at_top()"],
            "finish_at()",
        );
    }
    if leaf {
        tables += &format!(
            "    action report_move_act() {{\n        report_move_ra.execute(hdr.horus.pool_id);\n    }}\n    action report_check_act() {{\n        md.report = report_check_ra.execute(hdr.horus.pool_id);\n    }}\n    action report_none_act() {{\n    }}\n{}",
            keyed_in(
                st("pool_report"),
                Role::Leaf,
                "report_rule",
                &["md.spine_x: ternary", "md.signal: ternary"],
                &["(0, _) : report_move_act()", "(_, 0) : report_check_act()",],
                "report_none_act()",
            )
        );
        // What the report rule's register action reads beside the average, chosen as it is
        // chosen: the unit a task from the spine moves both words by, or the new hi.
        tables += "    action report_unit() {\n        md.report_x = md.unit;\n    }\n    action report_delta() {\n        md.report_x = md.avg + md.report_delta_m1;\n    }\n    action report_nothing() {\n    }\n";
        tables += &keyed(
            "report_input",
            &["md.spine_x: ternary", "md.signal: ternary"],
            &["(0, _) : report_unit()", "(_, 0) : report_delta()"],
            "report_nothing()",
        );
    }
    tables
}

/// The leaf's link rule: the range table that turns a pool's new idle count into the linked value
/// that calls for a change (`md.link_a`), the table that reads the spine's view from a task
/// (`md.link_r`), the stage before, and the register's three actions chosen by the two (T12 in
/// `docs/algorithm.md`: a stateful ALU compares at most two values). Both tables write the value
/// the chosen action compares (`md.link_v`), `link_range` last where a change is called for.
fn link_rule(pools: u32) -> String {
    let mut s = format!(
        "    /* The linked value a pool's new idle count calls to change: 0 (link) at or above
     * link_at, 1 (unlink) at or below unlink_at. The set-up writes two entries a pool with a
     * spine; a pool without one has none, and no link. */
    @horus_stage({}) table link_range {{
        key = {{
            hdr.horus.pool_id: exact;
            md.p_new: range;
        }}
        actions = {{ set_link_a; no_link_a; }}
        const default_action = no_link_a;
        size = {};
    }}
",
        st("link_range"),
        2 * pools
    );
    // A task from the pool's spine (spine_x 0) shows the value the spine believes lost: its
    // idle-selected flag (qlen != 0) says the rack was linked. Any other pass (an idle add's
    // commit: spine_x 0xffff) shows none.
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
    )
}

/// The leaf's `idle_link` register and the link rule's three register actions (T12): a change, a
/// repair, and both, built from the same two outcomes so that they cannot drift apart.
fn link_registers() -> String {
    const CHANGE: &str = "v.lo = 1 - v.lo;\nv.hi = (int<32>)md.now + REPAIR_GAP;\nrv = 1;";
    const REPAIR: &str = "v.hi = (int<32>)md.now + REPAIR_GAP;\nrv = 1;";
    const DUE: &str = "(int<32>)md.now - v.hi >= 0";
    // The one linked value each action compares (md.link_v: link_a for a change or both,
    // link_r for a repair), so that the register's inputs are two fields, link_v and the time.
    const LINKED: &str = "v.lo == (int<32>)(bit<32>)md.link_v";
    let then = |body: &str| ind(body, 4);
    let mut s = String::from(
        "    /* The link rule and the repair of lost idle messages (decisions 6 and 17; T12). lo: linked;
     * hi: the earliest time of a repair, in 1.024 us ticks, compared signed with the pass's
     * time (a repair is due when the difference is not negative). The table link_rule runs one
     * of three actions by md.link_a, the linked value that calls for a change (7: none), and
     * md.link_r, the one a task from the spine shows the spine lost (7: none): a change, a
     * repair, or both where link_r is link_a's other value; each compares two values at most,
     * as a stateful ALU does, and reads two fields, its two inputs: md.link_v, the linked value
     * it compares (link_a for a change or both, link_r for a repair), and the time. rv: 1 an idle message (the register's actions return one
     * constant), 0 none; the message's type follows from link_a and link_r. */
    Register<ipair_t, bit<16>>(POOLS) idle_link;
",
    );
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
        s += &ra_decl("idle_link", name, "ipair_t", "bit<8>", &body);
    }
    s + "\n"
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
            ("settle", "v = v - (int<32>)md.diff;\nrv = 0;"),
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
const AVG_TASK: &str = "avg_task.apply();\nreport_input.apply();\nreport_rule.apply();\n";

/// A first packet of a multi-packet task claims a connection entry for its node.
const CONN_CLAIM: &str = "if (hdr.horus.more_packets == 1) {\n    conn_insert.apply();\n    if (md.conn_claimed == 1) {\n        conn_node_write.apply();\n    }\n}\n";

/// The end of a first pass that sends its task to the node it charged (`md.sel`), indented by
/// `n`: the leaf's rack average and report rule, the connection a first packet claims, and the
/// verdict, in the plan's stage order (Tofino 1 goes through a pass's tables forward only, so
/// the connection comes here, before the stage-10 tables, and not after the pass's branches).
/// A first packet of a multi-packet task charges its first sample and so never resubmits.
fn task_end(leaf: bool, n: usize) -> String {
    let s = if leaf {
        format!(
            "avg_task.apply();\nreport_input.apply();\n{CONN_CLAIM}report_rule.apply();\nout_sel.apply();\n"
        )
    } else {
        format!("{CONN_CLAIM}out_sel.apply();\n")
    };
    ind(&s, n)
}

/// `lines` (one statement a line, not indented) indented by `n` spaces.
fn ind(lines: &str, n: usize) -> String {
    lines.lines().map(|l| format!("{:n$}{l}\n", "")).collect()
}

/// The apply block of a NEW_TASK's first pass, in the plan's stage order on every path. The
/// leaf's link rule reads the spine's view (`link_repair`, stage 2) before the first branch on
/// `idle_ctl`'s word, the pool's new idle count (`md.p_new`, stage 2: `link_range`, stage 3)
/// after it, and its register (stage 5) in each arm of the second, after the arm's stage-4
/// tables.
fn task_apply(leaf: bool) -> String {
    let (take, repair, link, link_rule, index, avg_none) = if leaf {
        (
            "ctl_pop",
            ind("link_repair.apply();", 20),
            ind("link_range.apply();", 20),
            ind("link_rule.apply();", 24),
            ind("idle_index_clear.apply();", 24),
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
    let idle_end = task_end(leaf, 24);
    let sample_end = task_end(leaf, 28);
    format!(
        r#"                    {take}.apply();
{repair}                    if (md.ctl[31:31] == 0 && md.ctl != 0) {{
                        idle_take.apply();
                    }} else {{
                        idle_keep.apply();
                        members1_read.apply();
                        members2_read.apply();
                    }}
{link}                    if (md.ctl[31:31] == 0 && md.ctl != 0) {{
                        idle_read.apply();
                        factor_idle.apply();
{index}{link_rule}                        pick_idle.apply();
                        drift1_charge.apply();
                        drift2_charge.apply();
{idle_end}                    }} else {{
                        factor1.apply();
                        factor2.apply();
                        same_check.apply();
                        load1_read.apply();
                        load2_read.apply();
{link_rule}                        load_cmp.apply();
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
{sample_end}                        }} else {{
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
