//! The register map of the AXI4-Lite control port: the one definition. `rtl-gen` writes it as JSON
//! and as a C header; the AXI4-Lite block (`horus_pipeline::axil`) implements it and a test writes every field
//! through the port and checks where it lands; the host driver reads it from here.
//!
//! 32-bit registers at byte address `4 * word`. A field wider than 32 bits (a MAC address, the
//! rack average's unit) takes the low bits of its first word and continues in the next word, so
//! that it is contiguous in the register file.

/// How software may use a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
    /// Write starts an action; reads return its status.
    Doorbell,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Ro => "ro",
            Access::Rw => "rw",
            Access::Doorbell => "doorbell",
        }
    }
}

/// A field: `width` bits from bit `lsb` of register `word` (continuing into the next words when
/// `lsb + width > 32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub word: usize,
    pub lsb: usize,
    pub width: usize,
    pub access: Access,
    pub doc: &'static str,
}

impl Field {
    /// Bit offset in the register file.
    pub const fn bit(&self) -> usize {
        32 * self.word + self.lsb
    }
    pub const fn byte_address(&self) -> usize {
        4 * self.word
    }
    /// The last word the field occupies.
    pub const fn last_word(&self) -> usize {
        self.word + (self.lsb + self.width - 1) / 32
    }
}

const fn f(
    name: &'static str,
    word: usize,
    lsb: usize,
    width: usize,
    access: Access,
    doc: &'static str,
) -> Field {
    Field {
        name,
        word,
        lsb,
        width,
        access,
        doc,
    }
}

/// Value of `ID`: "HORU".
pub const ID_VALUE: u32 = 0x484f_5255;
/// Version of this register map, read from `MAP_VERSION`: a host driver refuses a switch whose
/// map is not the one it was built with. Raised whenever a field moves or changes meaning.
pub const MAP_VERSION: u32 = 3;
/// What the generated Verilog holds in `BUILD_HASH` until `rtl-gen` stamps it: the hash is taken
/// over the text with this value in place, then written over it ([`crate::identity`]).
pub const BUILD_HASH_PLACEHOLDER: u32 = 0xb17d_4a54;
/// Words of the register map (the read-back's `RB_DATA*` reach past 64).
pub const WORDS: usize = 128;
/// Words the AXI4-Lite block keeps in flip-flops, from word 0: every read-write field lies below
/// (the counters and the read-back are read from the pipeline, not kept here).
pub const FILE_WORDS: usize = 64;
/// First word of the spine table; each spine takes `SPINE_WORDS`.
pub const SPINE_BASE: usize = 8;
pub const SPINE_WORDS: usize = 4;

use Access::*;

use crate::SPINES;
use crate::mac_bits;
use crate::readback::table_number;
use horus_model::config::{Config, Role};
use horus_model::fixed::{Load, MAX_WORKERS};
use horus_model::sched::frame::{SpineAddr, SwitchRegisters};
use horus_model::sched::{
    ControlOp, HostValues, NodeAddr, NodeRef, Params, Scheduler, SpineRef, Stage,
};
use horus_model::wire::{Endpoint, MacAddr};

/// Every field as a constant: `fields::CTL_GO` where a name is known when the code is written (a
/// misspelt one does not compile), [`field`] where it is computed (`SPINE{i}_VALID`, a drop
/// reason's counter).
pub mod fields {
    use super::Access::*;
    use super::{Field, f};

    pub const ID: Field = f("ID", 0, 0, 32, Ro, "0x484F5255 (\"HORU\")");
    pub const ROLE: Field = f("ROLE", 1, 0, 1, Ro, "0: leaf, 1: spine");
    pub const POOL_BITS: Field = f("POOL_BITS", 1, 8, 8, Ro, "log2 of the pool table size");
    pub const NODE_BITS: Field = f("NODE_BITS", 1, 16, 8, Ro, "log2 of the node table size");
    pub const CONN_BITS: Field = f(
        "CONN_BITS",
        1,
        24,
        8,
        Ro,
        "log2 of the connection table size",
    );
    pub const CTL_BUSY: Field = f(
        "CTL_BUSY",
        2,
        0,
        1,
        Ro,
        "a control pass is staged and has not entered the pipeline yet",
    );
    pub const OVERFLOW: Field = f(
        "OVERFLOW",
        2,
        1,
        1,
        Ro,
        "sticky: the egress lost a job or a beat (never expected)",
    );
    pub const IN_FLIGHT: Field = f("IN_FLIGHT", 2, 8, 8, Ro, "passes in the pipeline's stages");
    pub const CTL_GO: Field = f(
        "CTL_GO",
        3,
        0,
        1,
        Doorbell,
        "write 1: run the staged control pass; reads 1 while it waits",
    );
    pub const SWITCH_ID: Field = f(
        "SWITCH_ID",
        4,
        0,
        16,
        Rw,
        "this switch's ID (a spine writes it into src_id of the tasks it forwards)",
    );
    pub const SWITCH_UDP_PORT: Field = f(
        "SWITCH_UDP_PORT",
        4,
        16,
        16,
        Rw,
        "source UDP port of the messages this switch sends",
    );
    pub const SWITCH_MAC: Field = f(
        "SWITCH_MAC",
        5,
        0,
        48,
        Rw,
        "source MAC of the messages this switch sends",
    );
    pub const PASS_THROUGH_PORT: Field = f(
        "PASS_THROUGH_PORT",
        6,
        16,
        8,
        Rw,
        "egress port of frames that are not Horus frames",
    );
    pub const CONTROL_PORT: Field = f(
        "CONTROL_PORT",
        6,
        24,
        8,
        Rw,
        "egress port of controller packets",
    );
    pub const SWITCH_IP: Field = f(
        "SWITCH_IP",
        7,
        0,
        32,
        Rw,
        "source IPv4 address of the messages this switch sends",
    );
    // Spines 0..3 (a leaf's; searched in order for a pool's spine ID).
    pub const SPINE0_VALID: Field = f("SPINE0_VALID", 8, 0, 1, Rw, "spine entry in use");
    pub const SPINE0_EGRESS: Field = f(
        "SPINE0_EGRESS",
        8,
        8,
        8,
        Rw,
        "egress port towards the spine",
    );
    pub const SPINE0_ID: Field = f("SPINE0_ID", 8, 16, 16, Rw, "the spine's ID");
    pub const SPINE0_MAC: Field = f("SPINE0_MAC", 9, 0, 48, Rw, "the spine's MAC");
    pub const SPINE0_UDP_PORT: Field = f("SPINE0_UDP_PORT", 10, 16, 16, Rw, "the spine's UDP port");
    pub const SPINE0_IP: Field = f("SPINE0_IP", 11, 0, 32, Rw, "the spine's IPv4 address");
    pub const SPINE1_VALID: Field = f("SPINE1_VALID", 12, 0, 1, Rw, "spine entry in use");
    pub const SPINE1_EGRESS: Field = f(
        "SPINE1_EGRESS",
        12,
        8,
        8,
        Rw,
        "egress port towards the spine",
    );
    pub const SPINE1_ID: Field = f("SPINE1_ID", 12, 16, 16, Rw, "the spine's ID");
    pub const SPINE1_MAC: Field = f("SPINE1_MAC", 13, 0, 48, Rw, "the spine's MAC");
    pub const SPINE1_UDP_PORT: Field = f("SPINE1_UDP_PORT", 14, 16, 16, Rw, "the spine's UDP port");
    pub const SPINE1_IP: Field = f("SPINE1_IP", 15, 0, 32, Rw, "the spine's IPv4 address");
    pub const SPINE2_VALID: Field = f("SPINE2_VALID", 16, 0, 1, Rw, "spine entry in use");
    pub const SPINE2_EGRESS: Field = f(
        "SPINE2_EGRESS",
        16,
        8,
        8,
        Rw,
        "egress port towards the spine",
    );
    pub const SPINE2_ID: Field = f("SPINE2_ID", 16, 16, 16, Rw, "the spine's ID");
    pub const SPINE2_MAC: Field = f("SPINE2_MAC", 17, 0, 48, Rw, "the spine's MAC");
    pub const SPINE2_UDP_PORT: Field = f("SPINE2_UDP_PORT", 18, 16, 16, Rw, "the spine's UDP port");
    pub const SPINE2_IP: Field = f("SPINE2_IP", 19, 0, 32, Rw, "the spine's IPv4 address");
    pub const SPINE3_VALID: Field = f("SPINE3_VALID", 20, 0, 1, Rw, "spine entry in use");
    pub const SPINE3_EGRESS: Field = f(
        "SPINE3_EGRESS",
        20,
        8,
        8,
        Rw,
        "egress port towards the spine",
    );
    pub const SPINE3_ID: Field = f("SPINE3_ID", 20, 16, 16, Rw, "the spine's ID");
    pub const SPINE3_MAC: Field = f("SPINE3_MAC", 21, 0, 48, Rw, "the spine's MAC");
    pub const SPINE3_UDP_PORT: Field = f("SPINE3_UDP_PORT", 22, 16, 16, Rw, "the spine's UDP port");
    pub const SPINE3_IP: Field = f("SPINE3_IP", 23, 0, 32, Rw, "the spine's IPv4 address");
    // The staged control pass (horus_model::sched::ControlOp and the host's values).
    pub const CTL_CONFIGURE_POOL: Field = f(
        "CTL_CONFIGURE_POOL",
        24,
        0,
        1,
        Rw,
        "operation: configure a pool",
    );
    pub const CTL_SET_PARAMS: Field = f(
        "CTL_SET_PARAMS",
        24,
        1,
        1,
        Rw,
        "operation: set a pool's parameters",
    );
    pub const CTL_ADD_NODE: Field = f("CTL_ADD_NODE", 24, 2, 1, Rw, "operation: add a node");
    pub const CTL_REMOVE_NODE: Field =
        f("CTL_REMOVE_NODE", 24, 3, 1, Rw, "operation: remove a node");
    pub const CTL_READ_ENTRY: Field = f(
        "CTL_READ_ENTRY",
        24,
        4,
        1,
        Rw,
        "operation: read entry CTL_INDEX of table CTL_TABLE into RB_*",
    );
    pub const CTL_TABLE: Field = f(
        "CTL_TABLE",
        24,
        8,
        4,
        Rw,
        "the table to read: its stage number in the stage plan (read)",
    );
    pub const CTL_POOL: Field = f("CTL_POOL", 24, 16, 16, Rw, "the pool");
    pub const CTL_NODE: Field = f("CTL_NODE", 25, 0, 16, Rw, "the node (add, remove)");
    pub const CTL_BASE: Field = f(
        "CTL_BASE",
        25,
        16,
        16,
        Rw,
        "the pool's first slot (configure)",
    );
    pub const CTL_CAPACITY: Field = f(
        "CTL_CAPACITY",
        26,
        0,
        16,
        Rw,
        "the pool's slots (configure; set, in place from the same base)",
    );
    pub const CTL_LINK_AT: Field = f(
        "CTL_LINK_AT",
        26,
        16,
        16,
        Rw,
        "idle_link_at (configure, set)",
    );
    pub const CTL_UNLINK_AT: Field = f(
        "CTL_UNLINK_AT",
        27,
        0,
        16,
        Rw,
        "idle_unlink_at (configure, set)",
    );
    pub const CTL_SPINE_OK: Field = f(
        "CTL_SPINE_OK",
        27,
        16,
        1,
        Rw,
        "the pool reports to a spine (configure, leaf)",
    );
    pub const CTL_REPORT_DELTA: Field = f(
        "CTL_REPORT_DELTA",
        28,
        0,
        32,
        Rw,
        "report_delta, 16.16 (configure, set)",
    );
    pub const CTL_SPINE_ID: Field = f(
        "CTL_SPINE_ID",
        29,
        0,
        16,
        Rw,
        "the pool's spine (configure, leaf)",
    );
    pub const CTL_SPINE_NODE: Field = f(
        "CTL_SPINE_NODE",
        29,
        16,
        16,
        Rw,
        "this rack's node ID at that spine (configure, leaf)",
    );
    pub const CTL_FACTOR: Field = f(
        "CTL_FACTOR",
        30,
        0,
        32,
        Rw,
        "the new node's additive factor, 16.16 (add)",
    );
    pub const CTL_UNIT: Field = f(
        "CTL_UNIT",
        31,
        0,
        64,
        Rw,
        "rack-average unit for the new worker count, round(2^32 / n) (add, remove; leaf)",
    );
    pub const CTL_NODE_MAC: Field = f("CTL_NODE_MAC", 33, 0, 48, Rw, "the new node's MAC (add)");
    pub const CTL_NODE_EGRESS: Field = f(
        "CTL_NODE_EGRESS",
        34,
        16,
        8,
        Rw,
        "the new node's egress port (add)",
    );
    pub const CTL_NODE_IP: Field = f(
        "CTL_NODE_IP",
        35,
        0,
        32,
        Rw,
        "the new node's IPv4 address (add)",
    );
    pub const CTL_NODE_UDP_PORT: Field = f(
        "CTL_NODE_UDP_PORT",
        36,
        0,
        16,
        Rw,
        "the new node's UDP port (add)",
    );
    pub const CTL_NODE_DST_ID: Field = f(
        "CTL_NODE_DST_ID",
        36,
        16,
        16,
        Rw,
        "dst_id of tasks sent to the new node (add)",
    );
    pub const CTL_LAST_MEMBER: Field = f(
        "CTL_LAST_MEMBER",
        37,
        0,
        16,
        Rw,
        "the pool's last member, moved into the freed slot (remove)",
    );
    pub const CTL_LAST_MEMBER_FACTOR: Field = f(
        "CTL_LAST_MEMBER_FACTOR",
        38,
        0,
        32,
        Rw,
        "that member's additive factor, 16.16 (remove)",
    );
    pub const CTL_INDEX: Field = f("CTL_INDEX", 39, 0, 16, Rw, "the entry to read (read)");
    pub const CTL_REPAIR_GAP: Field = f(
        "CTL_REPAIR_GAP",
        39,
        16,
        16,
        Rw,
        "idle_repair_gap_us (configure, set)",
    );
    // Counters (wrapping at 2^32), as the model's `Counters`.
    pub const PASSES: Field = f("PASSES", 40, 0, 32, Ro, "passes of any kind");
    pub const RESUBMIT_PASSES: Field = f(
        "RESUBMIT_PASSES",
        41,
        0,
        32,
        Ro,
        "resubmitted (second) passes",
    );
    pub const CONTROL_PASSES: Field = f("CONTROL_PASSES", 42, 0, 32, Ro, "control passes");
    pub const DROP_MALFORMED: Field = f("DROP_MALFORMED", 43, 0, 32, Ro, "drops: malformed");
    pub const DROP_BAD_CHECKSUM: Field =
        f("DROP_BAD_CHECKSUM", 44, 0, 32, Ro, "drops: bad_checksum");
    pub const DROP_LEGACY_TYPE: Field = f("DROP_LEGACY_TYPE", 45, 0, 32, Ro, "drops: legacy_type");
    pub const DROP_POOL_OUT_OF_RANGE: Field = f(
        "DROP_POOL_OUT_OF_RANGE",
        46,
        0,
        32,
        Ro,
        "drops: pool_out_of_range",
    );
    pub const DROP_UNKNOWN_POOL: Field =
        f("DROP_UNKNOWN_POOL", 47, 0, 32, Ro, "drops: unknown_pool");
    pub const DROP_EMPTY_POOL: Field = f("DROP_EMPTY_POOL", 48, 0, 32, Ro, "drops: empty_pool");
    pub const DROP_NODE_OUT_OF_RANGE: Field = f(
        "DROP_NODE_OUT_OF_RANGE",
        49,
        0,
        32,
        Ro,
        "drops: node_out_of_range",
    );
    pub const DROP_NODE_NOT_IN_POOL: Field = f(
        "DROP_NODE_NOT_IN_POOL",
        50,
        0,
        32,
        Ro,
        "drops: node_not_in_pool",
    );
    pub const DROP_WRONG_ROLE: Field = f("DROP_WRONG_ROLE", 51, 0, 32, Ro, "drops: wrong_role");
    pub const DROP_CONTINUATION_MISS: Field = f(
        "DROP_CONTINUATION_MISS",
        52,
        0,
        32,
        Ro,
        "drops: continuation_miss",
    );
    pub const DROP_IDLE_ADD_DUPLICATE: Field = f(
        "DROP_IDLE_ADD_DUPLICATE",
        53,
        0,
        32,
        Ro,
        "drops: idle_add_duplicate",
    );
    pub const DROP_IDLE_REMOVE_LOCKED: Field = f(
        "DROP_IDLE_REMOVE_LOCKED",
        54,
        0,
        32,
        Ro,
        "drops: idle_remove_locked",
    );
    pub const DROP_IDLE_REMOVE_NOT_MEMBER: Field = f(
        "DROP_IDLE_REMOVE_NOT_MEMBER",
        55,
        0,
        32,
        Ro,
        "drops: idle_remove_not_member",
    );
    // The last read (CTL_READ_ENTRY).
    pub const RB_VALID: Field = f(
        "RB_VALID",
        56,
        0,
        1,
        Ro,
        "the last read named a table and an index within it: RB_DATA* hold the entry",
    );
    pub const RB_BUSY: Field = f(
        "RB_BUSY",
        56,
        1,
        1,
        Ro,
        "a read was started and its pass has not left the pipeline yet",
    );
    pub const RB_DATA0: Field = f(
        "RB_DATA0",
        57,
        0,
        32,
        Ro,
        "the entry read, bits 0..31 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA1: Field = f(
        "RB_DATA1",
        58,
        0,
        32,
        Ro,
        "the entry read, bits 32..63 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA2: Field = f(
        "RB_DATA2",
        59,
        0,
        32,
        Ro,
        "the entry read, bits 64..95 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA3: Field = f(
        "RB_DATA3",
        60,
        0,
        32,
        Ro,
        "the entry read, bits 96..127 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA4: Field = f(
        "RB_DATA4",
        61,
        0,
        32,
        Ro,
        "the entry read, bits 128..159 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA5: Field = f(
        "RB_DATA5",
        62,
        0,
        32,
        Ro,
        "the entry read, bits 160..191 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA6: Field = f(
        "RB_DATA6",
        63,
        0,
        32,
        Ro,
        "the entry read, bits 192..223 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA7: Field = f(
        "RB_DATA7",
        64,
        0,
        32,
        Ro,
        "the entry read, bits 224..255 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA8: Field = f(
        "RB_DATA8",
        65,
        0,
        32,
        Ro,
        "the entry read, bits 256..287 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA9: Field = f(
        "RB_DATA9",
        66,
        0,
        32,
        Ro,
        "the entry read, bits 288..319 (the hardware entry's layout, readback.rs)",
    );
    pub const RB_DATA10: Field = f(
        "RB_DATA10",
        67,
        0,
        32,
        Ro,
        "the entry read, bits 320..351 (the hardware entry's layout, readback.rs)",
    );
    // The bitstream's identity: constants of the generated Verilog.
    pub const MAP_VERSION: Field = f(
        "MAP_VERSION",
        68,
        0,
        32,
        Ro,
        "the register map's version (regmap::MAP_VERSION)",
    );
    pub const BUILD_HASH: Field = f(
        "BUILD_HASH",
        69,
        0,
        32,
        Ro,
        "the first 32 bits of the SHA-256 of the generated Verilog (with this field's placeholder)",
    );
    pub const CONN_TIMEOUT_US: Field = f(
        "CONN_TIMEOUT_US",
        70,
        0,
        32,
        Ro,
        "the connection table's timeout in microseconds, fixed when the Verilog is generated",
    );
    // The board adapter's count (a bare switch reads 0).
    pub const BOARD_DROPS: Field = f(
        "BOARD_DROPS",
        71,
        0,
        32,
        Ro,
        "frames the board adapter dropped for an egress port the board lacks, wrapping (0 without an adapter)",
    );
}

/// Every field, in address order.
pub const FIELDS: &[Field] = &[
    fields::ID,
    fields::ROLE,
    fields::POOL_BITS,
    fields::NODE_BITS,
    fields::CONN_BITS,
    fields::CTL_BUSY,
    fields::OVERFLOW,
    fields::IN_FLIGHT,
    fields::CTL_GO,
    fields::SWITCH_ID,
    fields::SWITCH_UDP_PORT,
    fields::SWITCH_MAC,
    fields::PASS_THROUGH_PORT,
    fields::CONTROL_PORT,
    fields::SWITCH_IP,
    fields::SPINE0_VALID,
    fields::SPINE0_EGRESS,
    fields::SPINE0_ID,
    fields::SPINE0_MAC,
    fields::SPINE0_UDP_PORT,
    fields::SPINE0_IP,
    fields::SPINE1_VALID,
    fields::SPINE1_EGRESS,
    fields::SPINE1_ID,
    fields::SPINE1_MAC,
    fields::SPINE1_UDP_PORT,
    fields::SPINE1_IP,
    fields::SPINE2_VALID,
    fields::SPINE2_EGRESS,
    fields::SPINE2_ID,
    fields::SPINE2_MAC,
    fields::SPINE2_UDP_PORT,
    fields::SPINE2_IP,
    fields::SPINE3_VALID,
    fields::SPINE3_EGRESS,
    fields::SPINE3_ID,
    fields::SPINE3_MAC,
    fields::SPINE3_UDP_PORT,
    fields::SPINE3_IP,
    fields::CTL_CONFIGURE_POOL,
    fields::CTL_SET_PARAMS,
    fields::CTL_ADD_NODE,
    fields::CTL_REMOVE_NODE,
    fields::CTL_READ_ENTRY,
    fields::CTL_TABLE,
    fields::CTL_POOL,
    fields::CTL_NODE,
    fields::CTL_BASE,
    fields::CTL_CAPACITY,
    fields::CTL_LINK_AT,
    fields::CTL_UNLINK_AT,
    fields::CTL_SPINE_OK,
    fields::CTL_REPORT_DELTA,
    fields::CTL_SPINE_ID,
    fields::CTL_SPINE_NODE,
    fields::CTL_FACTOR,
    fields::CTL_UNIT,
    fields::CTL_NODE_MAC,
    fields::CTL_NODE_EGRESS,
    fields::CTL_NODE_IP,
    fields::CTL_NODE_UDP_PORT,
    fields::CTL_NODE_DST_ID,
    fields::CTL_LAST_MEMBER,
    fields::CTL_LAST_MEMBER_FACTOR,
    fields::CTL_INDEX,
    fields::CTL_REPAIR_GAP,
    fields::PASSES,
    fields::RESUBMIT_PASSES,
    fields::CONTROL_PASSES,
    fields::DROP_MALFORMED,
    fields::DROP_BAD_CHECKSUM,
    fields::DROP_LEGACY_TYPE,
    fields::DROP_POOL_OUT_OF_RANGE,
    fields::DROP_UNKNOWN_POOL,
    fields::DROP_EMPTY_POOL,
    fields::DROP_NODE_OUT_OF_RANGE,
    fields::DROP_NODE_NOT_IN_POOL,
    fields::DROP_WRONG_ROLE,
    fields::DROP_CONTINUATION_MISS,
    fields::DROP_IDLE_ADD_DUPLICATE,
    fields::DROP_IDLE_REMOVE_LOCKED,
    fields::DROP_IDLE_REMOVE_NOT_MEMBER,
    fields::RB_VALID,
    fields::RB_BUSY,
    fields::RB_DATA0,
    fields::RB_DATA1,
    fields::RB_DATA2,
    fields::RB_DATA3,
    fields::RB_DATA4,
    fields::RB_DATA5,
    fields::RB_DATA6,
    fields::RB_DATA7,
    fields::RB_DATA8,
    fields::RB_DATA9,
    fields::RB_DATA10,
    fields::MAP_VERSION,
    fields::BUILD_HASH,
    fields::CONN_TIMEOUT_US,
    fields::BOARD_DROPS,
];

/// The first of the four words read from constants and the board adapter (`MAP_VERSION`,
/// `BUILD_HASH`, `CONN_TIMEOUT_US`, `BOARD_DROPS`).
pub const TAIL_BASE: usize = 68;

/// The word of the counter of `PASSES`; the drop counters follow `CONTROL_PASSES` in the order of
/// `DropReason::ALL`.
pub const COUNTER_BASE: usize = 40;
/// Counters.
pub const COUNTERS: usize = 3 + horus_model::sched::DropReason::ALL.len();

/// Register values: what software writes, word by word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegFile {
    pub words: [u32; WORDS],
}

impl Default for RegFile {
    fn default() -> Self {
        RegFile { words: [0; WORDS] }
    }
}

impl RegFile {
    /// Sets field `f` to `value` (its low `width` bits).
    pub fn set(&mut self, f: &Field, value: u64) -> &mut Self {
        for i in 0..f.width {
            let b = f.bit() + i;
            let w = &mut self.words[b / 32];
            *w = (*w & !(1 << (b % 32))) | ((((value >> i) & 1) as u32) << (b % 32));
        }
        self
    }

    /// Field `f`'s value.
    pub fn get(&self, f: &Field) -> u64 {
        (0..f.width).fold(0, |acc, i| {
            let b = f.bit() + i;
            acc | (u64::from((self.words[b / 32] >> (b % 32)) & 1) << i)
        })
    }

    /// The switch's own registers and its spine table, from `cfg` (at most 4 spines).
    pub fn switch_config(cfg: &Config) -> Result<RegFile, String> {
        cfg.paper_leaf_only().map_err(|e| e.to_string())?;
        RegFile::switch_words(cfg)
    }

    /// Words 4 to 23, the switch's own registers and its spine table, from `cfg`: the same in
    /// the paper leaf's map and the JBSQ leaf's (`jbsq_map::switch_config`).
    pub(crate) fn switch_words(cfg: &Config) -> Result<RegFile, String> {
        let s = &cfg.switch;
        if cfg.spines.len() > SPINES {
            return Err(format!(
                "{} spines configured; the hardware holds {SPINES}",
                cfg.spines.len()
            ));
        }
        let mut r = RegFile::default();
        r.set(&fields::SWITCH_ID, s.id.into())
            .set(&fields::SWITCH_UDP_PORT, s.udp_port.into())
            .set(&fields::SWITCH_MAC, mac_bits(s.mac))
            .set(&fields::PASS_THROUGH_PORT, s.pass_through_port.into())
            .set(&fields::CONTROL_PORT, s.control_port.into())
            .set(&fields::SWITCH_IP, u32::from(s.ip).into());
        for (i, l) in cfg.spines.iter().enumerate() {
            let f = spine(i);
            r.set(f.valid, 1)
                .set(f.egress, l.port.into())
                .set(f.id, l.id.into())
                .set(f.mac, mac_bits(l.mac))
                .set(f.udp_port, l.udp_port.into())
                .set(f.ip, u32::from(l.ip).into());
        }
        Ok(r)
    }

    /// The staged control pass that reads entry `index` of `stage`'s table.
    pub fn read_entry(stage: Stage, index: u16) -> RegFile {
        let mut r = RegFile::default();
        r.set(&fields::CTL_READ_ENTRY, 1)
            .set(&fields::CTL_TABLE, table_number(stage).into())
            .set(&fields::CTL_INDEX, index.into());
        r
    }

    /// The staged control pass for `op` when the scheduler's state is `m`, with the values the
    /// host computes (`Scheduler::host_values`); `op` must be one `Scheduler::validate` accepts.
    pub fn control(m: &Scheduler, op: &ControlOp) -> RegFile {
        let host = m.host_values(op);
        let mut r = RegFile::default();
        match *op {
            ControlOp::ConfigurePool {
                pool,
                base,
                capacity,
                ref params,
                spine,
            } => {
                r.set(&fields::CTL_CONFIGURE_POOL, 1)
                    .set(&fields::CTL_POOL, pool.into())
                    .set(&fields::CTL_BASE, base.into())
                    .set(&fields::CTL_CAPACITY, capacity.into());
                params_of(&mut r, params);
                if let Some(s) = spine {
                    r.set(&fields::CTL_SPINE_OK, 1)
                        .set(&fields::CTL_SPINE_ID, s.id.into())
                        .set(&fields::CTL_SPINE_NODE, s.node.into());
                }
            }
            ControlOp::SetPoolParams {
                pool,
                ref params,
                capacity,
            } => {
                r.set(&fields::CTL_SET_PARAMS, 1)
                    .set(&fields::CTL_POOL, pool.into())
                    .set(&fields::CTL_CAPACITY, capacity.into());
                params_of(&mut r, params);
            }
            ControlOp::AddNode {
                pool, node, addr, ..
            } => {
                r.set(&fields::CTL_ADD_NODE, 1)
                    .set(&fields::CTL_POOL, pool.into())
                    .set(&fields::CTL_NODE, node.into())
                    .set(&fields::CTL_FACTOR, host.factor.0.into())
                    .set(&fields::CTL_UNIT, host.unit)
                    .set(&fields::CTL_NODE_MAC, mac_bits(addr.endpoint.mac))
                    .set(&fields::CTL_NODE_EGRESS, addr.port.into())
                    .set(&fields::CTL_NODE_IP, u32::from(addr.endpoint.ip).into())
                    .set(&fields::CTL_NODE_UDP_PORT, addr.endpoint.udp_port.into())
                    .set(&fields::CTL_NODE_DST_ID, addr.dst_id.into());
            }
            ControlOp::RemoveNode { pool, node } => {
                r.set(&fields::CTL_REMOVE_NODE, 1)
                    .set(&fields::CTL_POOL, pool.into())
                    .set(&fields::CTL_NODE, node.into())
                    .set(&fields::CTL_LAST_MEMBER, host.last_member.node.into())
                    .set(
                        &fields::CTL_LAST_MEMBER_FACTOR,
                        host.last_member.factor.0.into(),
                    )
                    .set(&fields::CTL_UNIT, host.unit);
            }
        }
        r
    }
}

fn mac_of(bits: u64) -> MacAddr {
    MacAddr(std::array::from_fn(|i| (bits >> (40 - 8 * i)) as u8))
}

impl RegFile {
    /// The switch's own registers and its spines, as the model holds them: the inverse of
    /// [`RegFile::switch_config`].
    pub fn switch_registers(&self) -> SwitchRegisters {
        let ep = |mac: &Field, ip: &Field, udp_port: &Field| Endpoint {
            mac: mac_of(self.get(mac)),
            ip: (self.get(ip) as u32).into(),
            udp_port: self.get(udp_port) as u16,
        };
        SwitchRegisters {
            id: self.get(&fields::SWITCH_ID) as u16,
            me: ep(
                &fields::SWITCH_MAC,
                &fields::SWITCH_IP,
                &fields::SWITCH_UDP_PORT,
            ),
            pass_through_port: self.get(&fields::PASS_THROUGH_PORT) as u8,
            control_port: self.get(&fields::CONTROL_PORT) as u8,
            spines: (0..SPINES)
                .map(spine)
                .filter(|f| self.get(f.valid) != 0)
                .map(|f| SpineAddr {
                    id: self.get(f.id) as u16,
                    endpoint: ep(f.mac, f.ip, f.udp_port),
                    port: self.get(f.egress) as u8,
                })
                .collect(),
        }
    }

    /// The control operation staged in these registers and the host's values it carries: the
    /// inverse of [`RegFile::control`] (a software switch that takes the hardware's register
    /// writes runs it). A spine's new node gives its worker count from its additive factor (the
    /// smallest count with that factor). Refused: no operation or several, a read, a factor no
    /// worker count gives.
    pub fn staged_control(&self, role: Role) -> Result<(ControlOp, HostValues), String> {
        let ops = [
            fields::CTL_CONFIGURE_POOL,
            fields::CTL_SET_PARAMS,
            fields::CTL_ADD_NODE,
            fields::CTL_REMOVE_NODE,
        ];
        let set: Vec<&str> = ops
            .iter()
            .filter(|o| self.get(o) != 0)
            .map(|o| o.name)
            .collect();
        if self.get(&fields::CTL_READ_ENTRY) != 0 {
            return Err("a table read is staged, not a control operation".into());
        }
        let [op] = set.as_slice() else {
            return Err(format!(
                "{} operations staged ({}); exactly one starts",
                set.len(),
                set.join(", ")
            ));
        };
        let g = |f: &Field| self.get(f) as u16;
        let pool = g(&fields::CTL_POOL);
        let params = Params {
            link_at: g(&fields::CTL_LINK_AT),
            unlink_at: g(&fields::CTL_UNLINK_AT),
            report_delta: Load(self.get(&fields::CTL_REPORT_DELTA) as u32),
            repair_gap_us: g(&fields::CTL_REPAIR_GAP),
        };
        let mut host = HostValues::default();
        let op = match *op {
            "CTL_CONFIGURE_POOL" => ControlOp::ConfigurePool {
                pool,
                base: g(&fields::CTL_BASE),
                capacity: g(&fields::CTL_CAPACITY),
                params,
                spine: (self.get(&fields::CTL_SPINE_OK) != 0).then(|| SpineRef {
                    id: g(&fields::CTL_SPINE_ID),
                    node: g(&fields::CTL_SPINE_NODE),
                }),
            },
            "CTL_SET_PARAMS" => ControlOp::SetPoolParams {
                pool,
                params,
                capacity: g(&fields::CTL_CAPACITY),
            },
            "CTL_ADD_NODE" => {
                host.factor = Load(self.get(&fields::CTL_FACTOR) as u32);
                host.unit = self.get(&fields::CTL_UNIT);
                let workers = if role == Role::Leaf {
                    1
                } else {
                    (1..=MAX_WORKERS)
                        .find(|&w| Load::additive_factor(w) == host.factor)
                        .ok_or_else(|| {
                            format!(
                                "additive factor {:#x} is 1/w for no worker count w",
                                host.factor.0
                            )
                        })? as u16
                };
                let mac = self.get(&fields::CTL_NODE_MAC);
                ControlOp::AddNode {
                    pool,
                    node: g(&fields::CTL_NODE),
                    addr: NodeAddr {
                        endpoint: Endpoint {
                            mac: mac_of(mac),
                            ip: (self.get(&fields::CTL_NODE_IP) as u32).into(),
                            udp_port: g(&fields::CTL_NODE_UDP_PORT),
                        },
                        port: self.get(&fields::CTL_NODE_EGRESS) as u8,
                        dst_id: g(&fields::CTL_NODE_DST_ID),
                    },
                    workers,
                }
            }
            _ => {
                host.unit = self.get(&fields::CTL_UNIT);
                host.last_member = NodeRef {
                    node: g(&fields::CTL_LAST_MEMBER),
                    factor: Load(self.get(&fields::CTL_LAST_MEMBER_FACTOR) as u32),
                };
                ControlOp::RemoveNode {
                    pool,
                    node: g(&fields::CTL_NODE),
                }
            }
        };
        Ok((op, host))
    }
}

fn params_of(r: &mut RegFile, p: &Params) {
    r.set(&fields::CTL_LINK_AT, p.link_at.into())
        .set(&fields::CTL_UNLINK_AT, p.unlink_at.into())
        .set(&fields::CTL_REPORT_DELTA, p.report_delta.0.into())
        .set(&fields::CTL_REPAIR_GAP, p.repair_gap_us.into());
}

/// The words the fields matching `which` occupy, from the first's to the last's.
fn span(which: impl Fn(&Field) -> bool) -> std::ops::RangeInclusive<usize> {
    let fields = FIELDS.iter().filter(|f| which(f));
    let first = fields.clone().map(|f| f.word).min().unwrap_or(0);
    let last = fields.map(Field::last_word).max().unwrap_or(0);
    first..=last
}

/// Words of the staged control pass (`CTL_*`), which software writes before `CTL_GO`.
pub fn control_words() -> std::ops::RangeInclusive<usize> {
    span(|f| f.access == Rw && f.name.starts_with("CTL_"))
}

/// Words of the switch's own registers and its spine table: the other read-write fields.
pub fn switch_words() -> std::ops::RangeInclusive<usize> {
    span(|f| f.access == Rw && !f.name.starts_with("CTL_"))
}

/// Every read-write word.
pub fn rw_words() -> std::ops::RangeInclusive<usize> {
    span(|f| f.access == Rw)
}

/// The field called `name`.
pub fn field(name: &str) -> &'static Field {
    FIELDS
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no register field {name}"))
}

/// The fields of one entry of the spine table (`SPINE{i}_*`).
#[derive(Clone, Copy, Debug)]
pub struct SpineFields {
    pub valid: &'static Field,
    pub egress: &'static Field,
    pub id: &'static Field,
    pub mac: &'static Field,
    pub udp_port: &'static Field,
    pub ip: &'static Field,
}

/// Spine `i`'s fields (`i < SPINES`).
pub fn spine(i: usize) -> SpineFields {
    assert!(i < SPINES, "spine {i} of {SPINES}");
    let f = |name: &str| field(&format!("SPINE{i}_{name}"));
    SpineFields {
        valid: f("VALID"),
        egress: f("EGRESS"),
        id: f("ID"),
        mac: f("MAC"),
        udp_port: f("UDP_PORT"),
        ip: f("IP"),
    }
}

/// `RB_DATA{k}`: word `k` of the entry the last read returned (`k < RB_WORDS`).
pub fn rb_data(k: usize) -> &'static Field {
    assert!(k < crate::readback::RB_WORDS, "read-back word {k}");
    field(&format!("RB_DATA{k}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_overlap_and_fit_the_register_file() {
        let mut used = vec![false; 32 * WORDS];
        for f in FIELDS {
            assert!(f.bit() + f.width <= 32 * WORDS, "{}", f.name);
            assert!(f.width > 0 && (f.width <= 32 || f.lsb == 0), "{}", f.name);
            if f.access == Rw {
                assert!(f.word < FILE_WORDS, "{}", f.name);
            }
            for (b, u) in used.iter_mut().enumerate().skip(f.bit()).take(f.width) {
                assert!(!*u, "{} overlaps another field at bit {b}", f.name);
                *u = true;
            }
        }
    }

    #[test]
    fn drop_counters_follow_the_models_drop_reasons() {
        for (i, r) in horus_model::sched::DropReason::ALL.iter().enumerate() {
            let f = field(&format!("DROP_{}", r.name().to_uppercase()));
            assert_eq!(f.word, COUNTER_BASE + 3 + i);
        }
        assert_eq!(fields::PASSES.word, COUNTER_BASE);
        assert_eq!(
            fields::DROP_IDLE_REMOVE_NOT_MEMBER.word,
            COUNTER_BASE + COUNTERS - 1
        );
    }

    #[test]
    fn a_staged_control_pass_decodes_to_the_operation_and_the_hosts_values() {
        for role in [Role::Leaf, Role::Spine] {
            let path = format!(
                "{}/../configs/example-{role}.toml",
                env!("CARGO_MANIFEST_DIR")
            );
            let cfg = Config::from_file(std::path::Path::new(&path)).unwrap();
            let mut bare = cfg.clone();
            bare.pools.clear();
            let (mut m, _) = Scheduler::from_config(&bare, 1).unwrap();
            let mut ops = horus_model::sched::config_ops(&cfg);
            let first = ops.iter().find_map(|o| match *o {
                ControlOp::AddNode { pool, node, .. } => Some(ControlOp::RemoveNode { pool, node }),
                _ => None,
            });
            ops.extend(first);
            assert!(ops.len() > 3, "{role}: {ops:?}");
            for op in ops {
                let regs = RegFile::control(&m, &op);
                let (got, host) = regs.staged_control(role).unwrap();
                assert_eq!(got, op);
                assert_eq!(host, m.host_values(&op), "{op:?}");
                m.control(op).unwrap();
            }
        }
        let path = format!(
            "{}/../configs/example-leaf.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let cfg = Config::from_file(std::path::Path::new(&path)).unwrap();
        let regs = RegFile::switch_config(&cfg).unwrap();
        let back = regs.switch_registers();
        assert_eq!(back.id, cfg.switch.id);
        assert_eq!(back.me.mac, cfg.switch.mac);
        assert_eq!(back.spines.len(), cfg.spines.len());
        assert_eq!(back.spines[0].endpoint.ip, cfg.spines[0].ip);
        let mut none = RegFile::default();
        assert!(
            none.staged_control(Role::Leaf)
                .unwrap_err()
                .contains("0 operations")
        );
        none.set(&fields::CTL_ADD_NODE, 1)
            .set(&fields::CTL_REMOVE_NODE, 1);
        assert!(
            none.staged_control(Role::Leaf)
                .unwrap_err()
                .contains("2 operations")
        );
    }

    #[test]
    fn every_spine_has_the_same_layout() {
        for i in 1..4 {
            for name in ["VALID", "EGRESS", "ID", "MAC", "UDP_PORT", "IP"] {
                let a = field(&format!("SPINE0_{name}"));
                let b = field(&format!("SPINE{i}_{name}"));
                assert_eq!(b.bit(), a.bit() + 32 * SPINE_WORDS * i, "SPINE{i}_{name}");
                assert_eq!(b.width, a.width);
            }
        }
        assert_eq!(fields::SPINE0_VALID.word, SPINE_BASE);
        assert_eq!(switch_words(), 4..=23);
        assert_eq!(control_words(), 24..=39);
        assert_eq!(rw_words(), 4..=39);
    }
}
