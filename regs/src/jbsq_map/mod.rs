//! The register map of the leaf that holds tasks (`docs/jbsq-pipeline.md`): the one definition.
//! The JBSQ AXI4-Lite port (`horus_pipeline::jbsq::axil`) implements it, and a test writes every
//! field through the port and checks where it lands.
//!
//! The map keeps the paper switch's frame ([`crate::regmap`]): the identity and status words
//! (0 to 3), the switch's own registers and its spine table (4 to 23), the doorbell (`CTL_GO`)
//! and the tail (68 to 71: the map's version, the build hash, the connection timeout, the
//! board's drops) at the same words with the same meaning, so a host reads `ID` and
//! `MAP_VERSION` the same way of either. `ID` tells them apart: "HORU" for the paper's map,
//! "HORJ" for this one. What differs is the staged control pass (words 24 to 40: the JBSQ
//! leaf's five operations and their values), the sizes beyond the paper's (41), the counters (42
//! to 67: the model's `JbsqCounters`, in its order) and the read-back (72 and 73: a node's
//! member slot and its pool's last member, which a removal carries).
//!
//! The host stages each operation as the passes the leaf runs: a pool's configuration one pass;
//! a node's addition a pass for the node and one for each of its free places; a removal a read
//! and the removal. [`configure_pool`], [`add_node`] and [`remove_node`] give those passes from
//! the host's mirror of the leaf (the model, which validates the operation and keeps what the
//! host must know: generations, member slots, member counts).

use std::sync::LazyLock;

use crate::mac_bits;
use crate::regmap::{Access::*, Field, RegFile, fields as paper};
use horus_model::config::{Config, Role};
use horus_model::fixed::{Load, RackAverage};
use horus_model::sched::NodeAddr;
use horus_model::sched::jbsq::{
    Advertise, Fallback, JbsqLeaf, JbsqPool, JbsqSizes, LeafKind, PoolSettings, level_of,
};
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::{Endpoint, MacAddr};

/// Value of `ID` in this map: "HORJ".
pub const ID_VALUE: u32 = 0x484f_524a;
/// Version of this map, read from `MAP_VERSION` (raised whenever a field moves or changes
/// meaning).
pub const MAP_VERSION: u32 = 4;
/// The word of the first counter (`JBSQ_TASKS`); the others follow in `JbsqCounters::named`'s
/// order.
pub const COUNTER_BASE: usize = 42;
/// The counters: the model's `JbsqCounters`.
pub const COUNTERS: usize = 26;
/// The first word past the read-write ones that this map reads from constants and the board
/// adapter (the paper map's tail, at the same words).
pub const TAIL_BASE: usize = crate::regmap::TAIL_BASE;
const _: () = assert!(COUNTER_BASE + COUNTERS == TAIL_BASE);

const fn f(
    name: &'static str,
    word: usize,
    lsb: usize,
    width: usize,
    access: crate::regmap::Access,
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

/// The fields this map has and the paper's has not (the shared ones are [`crate::regmap`]'s).
pub mod fields {
    use super::f;
    use crate::regmap::Access::*;
    use crate::regmap::Field;

    pub const ID: Field = f(
        "ID",
        0,
        0,
        32,
        Ro,
        "0x484F524A (\"HORJ\"): the JBSQ leaf's map",
    );
    pub const CTL_CONFIGURE_POOL: Field = f(
        "CTL_CONFIGURE_POOL",
        24,
        0,
        1,
        Rw,
        "operation: configure a pool (its held tasks are discarded)",
    );
    pub const CTL_ADD_NODE: Field = f(
        "CTL_ADD_NODE",
        24,
        1,
        1,
        Rw,
        "operation: add a node (its places follow, one CTL_ADD_PLACE each)",
    );
    pub const CTL_REMOVE_NODE: Field =
        f("CTL_REMOVE_NODE", 24, 2, 1, Rw, "operation: remove a node");
    pub const CTL_READ_NODE: Field = f(
        "CTL_READ_NODE",
        24,
        3,
        1,
        Rw,
        "operation: read a node's member slot and its pool's last member into RB_SLOT, RB_LAST",
    );
    pub const CTL_ADD_PLACE: Field = f(
        "CTL_ADD_PLACE",
        24,
        4,
        1,
        Rw,
        "operation: put a free place of a node into the ring of level CTL_LEVEL",
    );
    pub const CTL_SET_BOUND: Field = f(
        "CTL_SET_BOUND",
        24,
        5,
        1,
        Rw,
        "operation: set a node's bound to CTL_K, its generation one up (its places follow)",
    );
    pub const CTL_SET_POOL: Field = f(
        "CTL_SET_POOL",
        24,
        6,
        1,
        Rw,
        "operation: set the pool's bound CTL_K (for nodes added later), hold and signal parameters",
    );
    pub const CTL_MOVE_BUFFER: Field = f(
        "CTL_MOVE_BUFFER",
        24,
        7,
        1,
        Rw,
        "operation: move the pool's buffer region to CTL_QUEUE_BASE, CTL_QUEUE_SLOTS and hold again; \
         its held queue starts afresh (what it holds is discarded)",
    );
    pub const CTL_LEVEL: Field = f("CTL_LEVEL", 24, 8, 3, Rw, "the place's ring (place)");
    pub const CTL_HOLDS: Field = f(
        "CTL_HOLDS",
        24,
        11,
        1,
        Rw,
        "the pool holds tasks (pool settings; 0 while its buffer region moves)",
    );
    pub const CTL_DROP_FULL: Field = f(
        "CTL_DROP_FULL",
        24,
        12,
        1,
        Rw,
        "a task finding the pool's region full is dropped, not sent over a bound (configure)",
    );
    pub const CTL_ADV_PLACES: Field = f(
        "CTL_ADV_PLACES",
        24,
        13,
        1,
        Rw,
        "the pool advertises free places (configure)",
    );
    pub const CTL_ADV_QUEUE: Field = f(
        "CTL_ADV_QUEUE",
        24,
        14,
        1,
        Rw,
        "the pool advertises its queue, linked below CTL_ROOM held tasks (configure)",
    );
    pub const CTL_SPINE_OK: Field = f(
        "CTL_SPINE_OK",
        24,
        15,
        1,
        Rw,
        "the pool reports to a spine (configure)",
    );
    pub const CTL_GENERATION: Field = f(
        "CTL_GENERATION",
        24,
        16,
        8,
        Rw,
        "the node's generation (place)",
    );
    pub const CTL_K: Field = f(
        "CTL_K",
        24,
        24,
        8,
        Rw,
        "the pool's bound (configure, pool bound); the node's own, 0 for the pool's (add); its new one (bound)",
    );
    pub const CTL_POOL: Field = f("CTL_POOL", 25, 0, 16, Rw, "the pool");
    pub const CTL_NODE: Field = f(
        "CTL_NODE",
        25,
        16,
        16,
        Rw,
        "the node (add, place, read, remove)",
    );
    pub const CTL_BASE: Field = f(
        "CTL_BASE",
        26,
        0,
        16,
        Rw,
        "the pool's first node slot (configure)",
    );
    pub const CTL_CAPACITY: Field = f(
        "CTL_CAPACITY",
        26,
        16,
        16,
        Rw,
        "the pool's node slots (configure)",
    );
    pub const CTL_TASKS: Field = f(
        "CTL_TASKS",
        27,
        0,
        16,
        Rw,
        "the node's tasks outstanding at the start (add)",
    );
    pub const CTL_HOLD_US: Field = f(
        "CTL_HOLD_US",
        27,
        16,
        16,
        Rw,
        "the link's hold after an idle message, microseconds (configure, pool settings)",
    );
    pub const CTL_RING_BASE: Field = f(
        "CTL_RING_BASE",
        28,
        0,
        16,
        Rw,
        "the pool's first token-ring entry (configure)",
    );
    pub const CTL_RING_SLOTS: Field = f(
        "CTL_RING_SLOTS",
        28,
        16,
        16,
        Rw,
        "the pool's ring entries a level (configure)",
    );
    pub const CTL_QUEUE_BASE: Field = f(
        "CTL_QUEUE_BASE",
        29,
        0,
        16,
        Rw,
        "the pool's first task-buffer slot (configure, move)",
    );
    pub const CTL_QUEUE_SLOTS: Field = f(
        "CTL_QUEUE_SLOTS",
        29,
        16,
        16,
        Rw,
        "the pool's task-buffer slots (configure, move)",
    );
    pub const CTL_ROOM: Field = f(
        "CTL_ROOM",
        30,
        0,
        16,
        Rw,
        "held tasks below which a queue-advertising pool links (configure)",
    );
    pub const CTL_REPAIR_GAP: Field = f(
        "CTL_REPAIR_GAP",
        30,
        16,
        16,
        Rw,
        "idle_repair_gap_us (configure, pool settings)",
    );
    pub const CTL_LINK_AT: Field = f(
        "CTL_LINK_AT",
        31,
        0,
        16,
        Rw,
        "idle_link_at (configure, pool settings)",
    );
    pub const CTL_UNLINK_AT: Field = f(
        "CTL_UNLINK_AT",
        31,
        16,
        16,
        Rw,
        "idle_unlink_at (configure, pool settings)",
    );
    pub const CTL_REPORT_DELTA: Field = f(
        "CTL_REPORT_DELTA",
        32,
        0,
        32,
        Rw,
        "report_delta, 16.16 (configure, pool settings)",
    );
    pub const CTL_SPINE_ID: Field = f(
        "CTL_SPINE_ID",
        33,
        0,
        16,
        Rw,
        "the pool's spine (configure)",
    );
    pub const CTL_SPINE_NODE: Field = f(
        "CTL_SPINE_NODE",
        33,
        16,
        16,
        Rw,
        "this rack's node ID at that spine (configure)",
    );
    pub const CTL_UNIT: Field = f(
        "CTL_UNIT",
        34,
        0,
        33,
        Rw,
        "rack-average unit for the new member count, round(2^32 / n) (add, remove)",
    );
    pub const CTL_NODE_MAC: Field = f("CTL_NODE_MAC", 36, 0, 48, Rw, "the new node's MAC (add)");
    pub const CTL_NODE_EGRESS: Field = f(
        "CTL_NODE_EGRESS",
        37,
        16,
        8,
        Rw,
        "the new node's egress port (add)",
    );
    pub const CTL_NODE_IP: Field = f(
        "CTL_NODE_IP",
        38,
        0,
        32,
        Rw,
        "the new node's IPv4 address (add)",
    );
    pub const CTL_NODE_UDP_PORT: Field = f(
        "CTL_NODE_UDP_PORT",
        39,
        0,
        16,
        Rw,
        "the new node's UDP port (add)",
    );
    pub const CTL_NODE_DST_ID: Field = f(
        "CTL_NODE_DST_ID",
        39,
        16,
        16,
        Rw,
        "dst_id of tasks sent to the new node (add)",
    );
    pub const CTL_SLOT: Field = f(
        "CTL_SLOT",
        40,
        0,
        16,
        Rw,
        "the removed node's member slot (remove; RB_SLOT of its read)",
    );
    pub const CTL_LAST: Field = f(
        "CTL_LAST",
        40,
        16,
        16,
        Rw,
        "the pool's last member, moved into the freed slot (remove; RB_LAST of its read)",
    );
    pub const RING_BITS: Field = f("RING_BITS", 41, 0, 8, Ro, "log2 of the token-ring entries");
    pub const BUFFER_BITS: Field = f(
        "BUFFER_BITS",
        41,
        8,
        8,
        Ro,
        "log2 of the task buffer's slots",
    );
    pub const SLOT_BYTES: Field = f(
        "SLOT_BYTES",
        41,
        16,
        16,
        Ro,
        "the largest task a buffer slot holds, bytes (its whole frame)",
    );
    pub const RB_VALID: Field = f(
        "RB_VALID",
        72,
        0,
        1,
        Ro,
        "a node read has completed since the last one was started",
    );
    pub const RB_BUSY: Field = f("RB_BUSY", 72, 1, 1, Ro, "a node read is in the pipeline");
    pub const RB_DEPTH: Field = f(
        "RB_DEPTH",
        72,
        16,
        16,
        Ro,
        "the node read: the tasks its pool holds",
    );
    pub const RB_SLOT: Field = f("RB_SLOT", 73, 0, 16, Ro, "the node read: its member slot");
    pub const RB_LAST: Field = f(
        "RB_LAST",
        73,
        16,
        16,
        Ro,
        "the node read: its pool's last member",
    );
}

/// The counters' names, in their words' order: `JBSQ_` and the model's name
/// (`JbsqCounters::named`; a test holds the two lists equal).
pub const COUNTER_NAMES: [&str; COUNTERS] = [
    "JBSQ_TASKS",
    "JBSQ_PLACED",
    "JBSQ_HELD",
    "JBSQ_RELEASED",
    "JBSQ_BUFFER_FULL",
    "JBSQ_FALLBACK",
    "JBSQ_DROPPED",
    "JBSQ_MAX_DEPTH",
    "JBSQ_STALE_TOKENS",
    "JBSQ_TOKEN_OVERFLOW",
    "JBSQ_REPLIES_NOT_IN_POOL",
    "JBSQ_REPLIES_SPURIOUS",
    "JBSQ_RESUBMITS",
    "JBSQ_SENT_IDLE_ADD",
    "JBSQ_SENT_IDLE_REMOVE",
    "JBSQ_SENT_LOAD_UPDATE",
    "JBSQ_IDLE_REPAIRS",
    "JBSQ_DISCARDED",
    "JBSQ_UNKNOWN_POOL",
    "JBSQ_NOT_SCHEDULED",
    "JBSQ_TO_CONTROL",
    "JBSQ_CONTINUATIONS",
    "JBSQ_CONTINUATION_MISS",
    "JBSQ_CONN_INSERTS",
    "JBSQ_CONN_COLLISIONS",
    "JBSQ_CONN_EXPIRED",
];

/// Every field of this map, in address order.
pub static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| {
    use fields::*;
    // The paper map's identity, status, doorbell, switch and spine words, `ID` aside.
    let head = crate::regmap::FIELDS
        .iter()
        .filter(|x| x.word < CTL_CONFIGURE_POOL.word && x.name != "ID");
    let tail = crate::regmap::FIELDS.iter().filter(|x| x.word >= TAIL_BASE);
    let ctl = [
        CTL_CONFIGURE_POOL,
        CTL_ADD_NODE,
        CTL_REMOVE_NODE,
        CTL_READ_NODE,
        CTL_ADD_PLACE,
        CTL_SET_BOUND,
        CTL_SET_POOL,
        CTL_MOVE_BUFFER,
        CTL_LEVEL,
        CTL_HOLDS,
        CTL_DROP_FULL,
        CTL_ADV_PLACES,
        CTL_ADV_QUEUE,
        CTL_SPINE_OK,
        CTL_GENERATION,
        CTL_K,
        CTL_POOL,
        CTL_NODE,
        CTL_BASE,
        CTL_CAPACITY,
        CTL_TASKS,
        CTL_HOLD_US,
        CTL_RING_BASE,
        CTL_RING_SLOTS,
        CTL_QUEUE_BASE,
        CTL_QUEUE_SLOTS,
        CTL_ROOM,
        CTL_REPAIR_GAP,
        CTL_LINK_AT,
        CTL_UNLINK_AT,
        CTL_REPORT_DELTA,
        CTL_SPINE_ID,
        CTL_SPINE_NODE,
        CTL_UNIT,
        CTL_NODE_MAC,
        CTL_NODE_EGRESS,
        CTL_NODE_IP,
        CTL_NODE_UDP_PORT,
        CTL_NODE_DST_ID,
        CTL_SLOT,
        CTL_LAST,
        RING_BITS,
        BUFFER_BITS,
        SLOT_BYTES,
    ];
    let counters = COUNTER_NAMES.iter().enumerate().map(|(i, &name)| {
        f(
            name,
            COUNTER_BASE + i,
            0,
            32,
            Ro,
            "a JbsqCounters count, wrapping",
        )
    });
    std::iter::once(ID)
        .chain(head.copied())
        .chain(ctl)
        .chain(counters)
        .chain(tail.copied())
        .chain([RB_VALID, RB_BUSY, RB_DEPTH, RB_SLOT, RB_LAST])
        .collect()
});

/// The field called `name`.
pub fn field(name: &str) -> &'static Field {
    FIELDS
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no JBSQ register field {name}"))
}

/// The counter of the model's counter `name` (`JbsqCounters::named`).
pub fn counter(name: &str) -> &'static Field {
    field(&format!("JBSQ_{}", name.to_uppercase()))
}

/// The words of the staged control pass (`CTL_*` but `CTL_GO`).
pub fn control_words() -> std::ops::RangeInclusive<usize> {
    fields::CTL_CONFIGURE_POOL.word..=fields::CTL_LAST.last_word()
}

/// Every read-write word: the switch's (the paper map's) and the staged pass's.
pub fn rw_words() -> std::ops::RangeInclusive<usize> {
    paper::SWITCH_ID.word..=fields::CTL_LAST.last_word()
}

/// What a freshly loaded leaf of `sizes` answers: its identification (`ID`, `ROLE` 0 with the
/// table sizes' bits, `RING_BITS`, `BUFFER_BITS`, `SLOT_BYTES`, `MAP_VERSION`, `BUILD_HASH`,
/// `CONN_TIMEOUT_US`); every other word 0 (nothing configured, staged or counted).
pub fn fresh(sizes: JbsqSizes, conn_timeout_us: u32, build_hash: u32) -> RegFile {
    let bits = |n: u32| u64::from(n.trailing_zeros());
    let mut r = RegFile::default();
    r.set(&fields::ID, ID_VALUE.into())
        .set(&paper::ROLE, 0)
        .set(&paper::POOL_BITS, bits(sizes.pools.into()))
        .set(&paper::NODE_BITS, bits(sizes.nodes.into()))
        .set(&paper::CONN_BITS, bits(sizes.conn_table))
        .set(&fields::RING_BITS, bits(sizes.ring_entries))
        .set(&fields::BUFFER_BITS, bits(sizes.buffer_slots))
        .set(&fields::SLOT_BYTES, sizes.slot_bytes.into())
        .set(&paper::MAP_VERSION, MAP_VERSION.into())
        .set(&paper::BUILD_HASH, build_hash.into())
        .set(&paper::CONN_TIMEOUT_US, conn_timeout_us.into());
    r
}

/// The switch's own registers and its spine table (words 4 to 23, the paper map's), from `cfg`,
/// a leaf that holds tasks (`[switch] leaf = "jbsq"`).
pub fn switch_config(cfg: &Config) -> Result<RegFile, String> {
    if cfg.switch.role != Role::Leaf || cfg.switch.leaf != LeafKind::Jbsq {
        return Err("the JBSQ register map is a leaf's with leaf = \"jbsq\"".into());
    }
    RegFile::switch_words(cfg)
}

/// `value` in a field of `f.width` bits, or why it does not fit.
fn fits(f: &Field, value: u64) -> Result<u64, String> {
    if f.width < 64 && value >> f.width != 0 {
        return Err(format!(
            "{} = {value} does not fit the register's {} bits",
            f.name, f.width
        ));
    }
    Ok(value)
}

/// A staged pass, from fields and values each checked to fit.
fn staged(values: &[(&Field, u64)]) -> Result<RegFile, String> {
    let mut r = RegFile::default();
    for &(f, v) in values {
        r.set(f, fits(f, v)?);
    }
    Ok(r)
}

/// Configures pool `pool` of the host's mirror `leaf` and gives the pass that does the same on
/// the card. Refused (nothing staged, the mirror unchanged) when the model refuses it or a value
/// does not fit its register.
pub fn configure_pool(leaf: &mut JbsqLeaf, pool: u16, cfg: JbsqPool) -> Result<RegFile, String> {
    use fields::*;
    let (places, queue, room) = match cfg.advertise {
        Advertise::Idle => (0, 0, 0),
        Advertise::Places => (1, 0, 0),
        Advertise::Queue { room } => (0, 1, room),
    };
    let (spine_id, spine_node) = cfg.spine.map_or((0, 0), |s| (s.id, s.node));
    let r = staged(&[
        (&CTL_CONFIGURE_POOL, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_BASE, cfg.base.into()),
        (&CTL_CAPACITY, cfg.capacity.into()),
        (&CTL_K, cfg.k.into()),
        (&CTL_RING_BASE, cfg.ring_base.into()),
        (&CTL_RING_SLOTS, cfg.ring_slots.into()),
        (&CTL_QUEUE_BASE, cfg.queue_base.into()),
        (&CTL_QUEUE_SLOTS, cfg.queue_slots.into()),
        (&CTL_DROP_FULL, u64::from(cfg.fallback == Fallback::Drop)),
        (&CTL_ADV_PLACES, places),
        (&CTL_ADV_QUEUE, queue),
        (&CTL_ROOM, room.into()),
        (&CTL_HOLD_US, cfg.hold_us.into()),
        (&CTL_LINK_AT, cfg.params.link_at.into()),
        (&CTL_UNLINK_AT, cfg.params.unlink_at.into()),
        (&CTL_REPORT_DELTA, cfg.params.report_delta.0.into()),
        (&CTL_REPAIR_GAP, cfg.params.repair_gap_us.into()),
        (&CTL_SPINE_OK, u64::from(cfg.spine.is_some())),
        (&CTL_SPINE_ID, spine_id.into()),
        (&CTL_SPINE_NODE, spine_node.into()),
    ])?;
    leaf.configure_pool(pool, cfg)
        .map_err(|e| format!("pool {pool}: {e:?}"))?;
    Ok(r)
}

/// Adds `node` to `pool` of the mirror (its own bound `k`, or the pool's; `tasks` outstanding;
/// tasks to it go to `addr`) and gives the passes that do the same on the card: the node's, then
/// one for each free place, in the order the model puts them into its rings.
pub fn add_node(
    leaf: &mut JbsqLeaf,
    pool: u16,
    node: u16,
    k: Option<u8>,
    tasks: u16,
    addr: NodeAddr,
) -> Result<Vec<RegFile>, String> {
    use fields::*;
    let t = leaf.tables();
    let pc = t
        .pool_cfg
        .get(usize::from(pool))
        .copied()
        .flatten()
        .ok_or_else(|| format!("pool {pool} is not configured"))?;
    let generation = t
        .node_cfg
        .get(usize::from(node))
        .map(|n| n.generation)
        .ok_or_else(|| format!("node {node} is beyond the node table"))?;
    let e = &addr.endpoint;
    let mut passes = vec![staged(&[
        (&CTL_ADD_NODE, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_NODE, node.into()),
        (&CTL_K, k.unwrap_or(0).into()),
        (&CTL_TASKS, tasks.into()),
        (&CTL_UNIT, RackAverage::unit_for(u32::from(pc.n) + 1)),
        (&CTL_NODE_MAC, mac_bits(e.mac)),
        (&CTL_NODE_EGRESS, addr.port.into()),
        (&CTL_NODE_IP, u32::from(e.ip).into()),
        (&CTL_NODE_UDP_PORT, e.udp_port.into()),
        (&CTL_NODE_DST_ID, addr.dst_id.into()),
    ])?];
    let kk = k.unwrap_or(pc.cfg.k);
    for place in tasks..u16::from(kk) {
        passes.push(staged(&[
            (&CTL_ADD_PLACE, 1),
            (&CTL_POOL, pool.into()),
            (&CTL_NODE, node.into()),
            (&CTL_GENERATION, generation.into()),
            (&CTL_LEVEL, level_of(place, kk) as u64),
        ])?);
    }
    leaf.add_node_at(pool, node, k, tasks, addr)
        .map_err(|e| format!("node {node} of pool {pool}: {e:?}"))?;
    Ok(passes)
}

/// Sets the bound of member `node` of `pool` in the mirror to `k` (decision 36) and gives the
/// passes that do the same on the card: the node's (its generation one up), then one for each of
/// its `k` places, in the order the model puts them into its rings.
pub fn set_bound(leaf: &mut JbsqLeaf, pool: u16, node: u16, k: u8) -> Result<Vec<RegFile>, String> {
    use fields::*;
    let mut next = leaf.clone();
    next.set_bound(pool, node, k)
        .map_err(|e| format!("node {node} of pool {pool}: {e:?}"))?;
    let generation = next.tables().node_cfg[usize::from(node)].generation;
    let mut passes = vec![staged(&[
        (&CTL_SET_BOUND, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_NODE, node.into()),
        (&CTL_K, k.into()),
    ])?];
    for place in 0..u16::from(k) {
        passes.push(staged(&[
            (&CTL_ADD_PLACE, 1),
            (&CTL_POOL, pool.into()),
            (&CTL_NODE, node.into()),
            (&CTL_GENERATION, generation.into()),
            (&CTL_LEVEL, level_of(place, k) as u64),
        ])?);
    }
    *leaf = next;
    Ok(passes)
}

/// Sets `pool`'s settings in the mirror (its bound for workers added later, its hold, its signal
/// parameters: decision 36) and gives the pass that does the same on the card.
pub fn set_pool_params(leaf: &mut JbsqLeaf, pool: u16, s: PoolSettings) -> Result<RegFile, String> {
    use fields::*;
    let r = staged(&[
        (&CTL_SET_POOL, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_K, s.k.into()),
        (&CTL_HOLD_US, s.hold_us.into()),
        (&CTL_LINK_AT, s.params.link_at.into()),
        (&CTL_UNLINK_AT, s.params.unlink_at.into()),
        (&CTL_REPORT_DELTA, s.params.report_delta.0.into()),
        (&CTL_REPAIR_GAP, s.params.repair_gap_us.into()),
        (&CTL_HOLDS, s.holds.into()),
    ])?;
    leaf.set_pool_params(pool, s)
        .map_err(|e| format!("pool {pool}: {e:?}"))?;
    Ok(r)
}

/// Moves `pool`'s region of the task buffer in the mirror (decision 37) and gives the pass that
/// does the same on the card.
pub fn move_buffer(
    leaf: &mut JbsqLeaf,
    pool: u16,
    queue_base: u32,
    queue_slots: u32,
) -> Result<RegFile, String> {
    use fields::*;
    let r = staged(&[
        (&CTL_MOVE_BUFFER, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_QUEUE_BASE, queue_base.into()),
        (&CTL_QUEUE_SLOTS, queue_slots.into()),
    ])?;
    leaf.move_buffer(pool, queue_base, queue_slots)
        .map_err(|e| format!("pool {pool}: {e:?}"))?;
    Ok(r)
}

/// The pass that reads `node`'s member slot and its pool's last member into `RB_SLOT` and
/// `RB_LAST`, and the tasks the pool holds into `RB_DEPTH` (for that read alone, `node` may be
/// any node).
pub fn read_node(pool: u16, node: u16) -> RegFile {
    let mut r = RegFile::default();
    r.set(&fields::CTL_READ_NODE, 1)
        .set(&fields::CTL_POOL, pool.into())
        .set(&fields::CTL_NODE, node.into());
    r
}

/// Removes `node` from `pool` of the mirror and gives the passes that do the same on the card:
/// the read of its member slot and the pool's last member (which the host may check against
/// the mirror's), and the removal carrying them.
pub fn remove_node(leaf: &mut JbsqLeaf, pool: u16, node: u16) -> Result<[RegFile; 2], String> {
    use fields::*;
    let t = leaf.tables();
    let pc = t.pool_cfg.get(usize::from(pool)).copied().flatten();
    let active = t
        .node_cfg
        .get(usize::from(node))
        .is_some_and(|n| n.active && n.pool == pool);
    let (Some(pc), true) = (pc, active) else {
        return Err(format!("node {node} is not a member of pool {pool}"));
    };
    let slot = t.member_slot[usize::from(node)];
    let last = t.members[usize::from(pc.cfg.base + pc.n - 1)];
    let r = staged(&[
        (&CTL_REMOVE_NODE, 1),
        (&CTL_POOL, pool.into()),
        (&CTL_NODE, node.into()),
        (&CTL_SLOT, slot.into()),
        (&CTL_LAST, last.into()),
        (&CTL_UNIT, RackAverage::unit_for(u32::from(pc.n) - 1)),
    ])?;
    leaf.remove_node(pool, node)
        .map_err(|e| format!("node {node} of pool {pool}: {e:?}"))?;
    Ok([read_node(pool, node), r])
}

/// A staged pass as the leaf's register port takes it: the operation the control words name,
/// with the values it carries. The inverse of [`configure_pool`], [`add_node`]'s and
/// [`set_bound`]'s passes, [`set_pool_params`], [`move_buffer`], [`read_node`] and
/// [`remove_node`]'s removal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StagedPass {
    Configure {
        pool: u16,
        cfg: JbsqPool,
    },
    AddNode {
        pool: u16,
        node: u16,
        /// 0: the pool's.
        k: u8,
        tasks: u16,
        unit: u64,
        addr: NodeAddr,
    },
    AddPlace {
        pool: u16,
        node: u16,
        generation: u8,
        level: u8,
    },
    ReadNode {
        pool: u16,
        node: u16,
    },
    SetBound {
        pool: u16,
        node: u16,
        k: u8,
    },
    SetPoolParams {
        pool: u16,
        settings: PoolSettings,
    },
    MoveBuffer {
        pool: u16,
        queue_base: u32,
        queue_slots: u32,
    },
    RemoveNode {
        pool: u16,
        node: u16,
        slot: u16,
        last: u16,
        unit: u64,
    },
}

/// The pass staged in `r`'s control words; refused unless exactly one operation bit is set (as
/// the register port refuses `CTL_GO` then).
pub fn staged_pass(r: &RegFile) -> Result<StagedPass, String> {
    use fields::*;
    let ops = [
        &CTL_CONFIGURE_POOL,
        &CTL_ADD_NODE,
        &CTL_REMOVE_NODE,
        &CTL_READ_NODE,
        &CTL_ADD_PLACE,
        &CTL_SET_BOUND,
        &CTL_SET_POOL,
        &CTL_MOVE_BUFFER,
    ];
    let set: Vec<&str> = ops
        .iter()
        .filter(|f| r.get(f) != 0)
        .map(|f| f.name)
        .collect();
    if set.len() != 1 {
        return Err(format!(
            "a staged pass names exactly one operation; these are set: {set:?}"
        ));
    }
    let g = |f: &Field| r.get(f);
    let pool = g(&CTL_POOL) as u16;
    let node = g(&CTL_NODE) as u16;
    Ok(match set[0] {
        "CTL_CONFIGURE_POOL" => {
            let advertise = match (g(&CTL_ADV_PLACES), g(&CTL_ADV_QUEUE)) {
                (0, 0) => Advertise::Idle,
                (1, 0) => Advertise::Places,
                (0, 1) => Advertise::Queue {
                    room: g(&CTL_ROOM) as u16,
                },
                _ => return Err("CTL_ADV_PLACES and CTL_ADV_QUEUE both set".into()),
            };
            StagedPass::Configure {
                pool,
                cfg: JbsqPool {
                    base: g(&CTL_BASE) as u16,
                    capacity: g(&CTL_CAPACITY) as u16,
                    k: g(&CTL_K) as u8,
                    ring_base: g(&CTL_RING_BASE) as u32,
                    ring_slots: g(&CTL_RING_SLOTS) as u16,
                    queue_base: g(&CTL_QUEUE_BASE) as u32,
                    queue_slots: g(&CTL_QUEUE_SLOTS) as u32,
                    fallback: if g(&CTL_DROP_FULL) != 0 {
                        Fallback::Drop
                    } else {
                        Fallback::Random
                    },
                    advertise,
                    hold_us: g(&CTL_HOLD_US) as u16,
                    params: Params {
                        link_at: g(&CTL_LINK_AT) as u16,
                        unlink_at: g(&CTL_UNLINK_AT) as u16,
                        report_delta: Load(g(&CTL_REPORT_DELTA) as u32),
                        repair_gap_us: g(&CTL_REPAIR_GAP) as u16,
                    },
                    spine: (g(&CTL_SPINE_OK) != 0).then(|| SpineRef {
                        id: g(&CTL_SPINE_ID) as u16,
                        node: g(&CTL_SPINE_NODE) as u16,
                    }),
                },
            }
        }
        "CTL_ADD_NODE" => {
            let mac = g(&CTL_NODE_MAC);
            StagedPass::AddNode {
                pool,
                node,
                k: g(&CTL_K) as u8,
                tasks: g(&CTL_TASKS) as u16,
                unit: g(&CTL_UNIT),
                addr: NodeAddr {
                    endpoint: Endpoint {
                        mac: MacAddr(std::array::from_fn(|i| (mac >> (40 - 8 * i)) as u8)),
                        ip: std::net::Ipv4Addr::from(g(&CTL_NODE_IP) as u32),
                        udp_port: g(&CTL_NODE_UDP_PORT) as u16,
                    },
                    port: g(&CTL_NODE_EGRESS) as u8,
                    dst_id: g(&CTL_NODE_DST_ID) as u16,
                },
            }
        }
        "CTL_ADD_PLACE" => StagedPass::AddPlace {
            pool,
            node,
            generation: g(&CTL_GENERATION) as u8,
            level: g(&CTL_LEVEL) as u8,
        },
        "CTL_READ_NODE" => StagedPass::ReadNode { pool, node },
        "CTL_SET_BOUND" => StagedPass::SetBound {
            pool,
            node,
            k: g(&CTL_K) as u8,
        },
        "CTL_SET_POOL" => StagedPass::SetPoolParams {
            pool,
            settings: PoolSettings {
                k: g(&CTL_K) as u8,
                hold_us: g(&CTL_HOLD_US) as u16,
                params: Params {
                    link_at: g(&CTL_LINK_AT) as u16,
                    unlink_at: g(&CTL_UNLINK_AT) as u16,
                    report_delta: Load(g(&CTL_REPORT_DELTA) as u32),
                    repair_gap_us: g(&CTL_REPAIR_GAP) as u16,
                },
                holds: g(&CTL_HOLDS) != 0,
            },
        },
        "CTL_MOVE_BUFFER" => StagedPass::MoveBuffer {
            pool,
            queue_base: g(&CTL_QUEUE_BASE) as u32,
            queue_slots: g(&CTL_QUEUE_SLOTS) as u32,
        },
        _ => StagedPass::RemoveNode {
            pool,
            node,
            slot: g(&CTL_SLOT) as u16,
            last: g(&CTL_LAST) as u16,
            unit: g(&CTL_UNIT),
        },
    })
}

#[cfg(test)]
mod tests;
