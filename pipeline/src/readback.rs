//! Reading a table entry back through the control port.
//!
//! A read is a control pass (`is_ctl_read`) that names a table by its stage number in the stage
//! plan (`horus_model::sched::Stage::ALL`) and an index. Every stage presents that index to its
//! table instead of its usual one; the stage that owns the named table, when the index is within
//! the table, keeps the entry it sees (forwarded like any read) in a register of the entry's width;
//! its output is zero-extended to [`RB_BITS`] and the core ORs the stages' outputs. The core shows the kept entry, and whether a stage took the read, to the AXI4-Lite
//! block as `RB_DATA` and `RB_VALID`. A read changes nothing: no table is written, no counter
//! counts it, the generator does not move.
//!
//! An entry's bits are the hardware entry's `LogicStruct` layout (first field in the lowest bits);
//! [`encode`] writes the model's entry in that layout, so that a host or a test compares the
//! switch's tables with the model's word for word.

use horus_model::config::Role;
use horus_model::sched::{Stage, Tables};
use rust_hdl::prelude::*;

use crate::entries::{
    AddrEntry, ConnEntry, IdleCtlEntry, IdleIndexEntry, NodeEntry, NodeRefEntry, PoolAvgEntry,
    PoolCfgEntry, margins,
};
use crate::pass::mac_bits;

/// Width of the read-back register: the widest entry (`poolAvg`).
pub const RB_BITS: usize = 352;
/// 32-bit words of the read-back register.
pub const RB_WORDS: usize = RB_BITS / 32;

/// A table entry that can be read back: its bits, zero-extended to [`RB_BITS`].
pub trait Entry: Synth {
    fn pack(self) -> Bits<RB_BITS>;
}

macro_rules! entry {
    ($($t:ty),*) => {$(
        impl Entry for $t {
            fn pack(self) -> Bits<RB_BITS> {
                bit_cast::<RB_BITS, { <$t>::BITS }>(Bits::<{ <$t>::BITS }>::from(self))
            }
        }
    )*};
}

entry!(
    PoolCfgEntry,
    NodeEntry,
    IdleCtlEntry,
    NodeRefEntry,
    IdleIndexEntry,
    PoolAvgEntry,
    ConnEntry,
    AddrEntry
);

impl Entry for Bits<32> {
    fn pack(self) -> Bits<RB_BITS> {
        bit_cast::<RB_BITS, 32>(self)
    }
}

/// `o = {0, i}`: an entry's bits, zero-extended. Hand-written (rust-hdl cannot widen a struct);
/// `update` is the same in Rust.
#[derive(LogicBlock, Default)]
pub struct Pack<T: Entry> {
    pub i: Signal<In, T>,
    pub o: Signal<Out, Bits<RB_BITS>>,
}

impl<T: Entry> Logic for Pack<T> {
    fn update(&mut self) {
        self.o.next = self.i.val().pack();
    }

    fn connect(&mut self) {
        self.o.connect();
    }

    fn hdl(&self) -> Verilog {
        assert!(T::BITS <= RB_BITS);
        if T::BITS == RB_BITS {
            Verilog::Custom("assign o = i;".into())
        } else {
            Verilog::Custom(format!("assign o = {{{}'d0, i}};", RB_BITS - T::BITS))
        }
    }
}

/// A stage's side of a read (inside its [`StageTable`](crate::table::StageTable)): in the cycle
/// the read's pass is in the stage, when it reads this stage's table at an index within it, keep
/// the entry seen (`entry`, the table's `rd_data`); any other read clears it, so that the core
/// ORs the stages' `rb` into the one read back. `hit` says whether the last read was this stage's.
#[derive(LogicBlock)]
pub struct ReadPort<T: Entry> {
    pub clock: Signal<In, Clock>,
    /// Cycle 1: the pass is a read (`is_ctl_read`), of this table (`rd_table`), at `rd_index`.
    pub read: Signal<In, Bit>,
    pub table_no: Signal<In, Bits<4>>,
    pub index: Signal<In, Bits<16>>,
    pub entry: Signal<In, T>,
    pub rb: Signal<Out, Bits<RB_BITS>>,
    pub hit: Signal<Out, Bit>,
    pack: Pack<T>,
    kept: DFF<T>,
    took: DFF<Bit>,
    take: Signal<Local, Bit>,
    none: Constant<T>,
    me: Constant<Bits<4>>,
    /// Index bits beyond the table: an index with any of them set is not in it.
    beyond: Constant<Bits<16>>,
}

impl<T: Entry> ReadPort<T> {
    /// The read port of `stage`'s table of `2^addr_bits` entries.
    pub fn new(stage: Stage, addr_bits: usize) -> Self {
        Self {
            clock: Default::default(),
            read: Default::default(),
            table_no: Default::default(),
            index: Default::default(),
            entry: Default::default(),
            rb: Default::default(),
            hit: Default::default(),
            pack: Default::default(),
            kept: Default::default(),
            took: Default::default(),
            take: Default::default(),
            none: Constant::new(T::default()),
            me: Constant::new(u64::from(table_number(stage)).into()),
            beyond: Constant::new((0xffffu64 & !((1u64 << addr_bits) - 1)).into()),
        }
    }

    /// The stage whose table this is.
    pub fn stage(&self) -> Stage {
        Stage::ALL[self.me.val().index()]
    }
}

impl<T: Entry> Logic for ReadPort<T> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, kept, took);
        self.take.next = self.read.val()
            & (self.table_no.val() == self.me.val())
            & !(self.index.val() & self.beyond.val()).any();
        if self.read.val() {
            self.took.d.next = self.take.val();
            self.kept.d.next = self.none.val();
        }
        if self.take.val() {
            self.kept.d.next = self.entry.val();
        }
        self.pack.i.next = self.kept.q.val();
        self.rb.next = self.pack.o.val();
        self.hit.next = self.took.q.val();
    }
}

/// The table's number in a read (`CTL_TABLE`): its stage number.
pub fn table_number(stage: Stage) -> u8 {
    Stage::ALL
        .iter()
        .position(|&s| s == stage)
        .expect("a stage") as u8
}

/// Entries of `stage`'s table in a switch of `sizes`, as the hardware builds it (a power of two at
/// least the configured size: the pipeline's address widths).
pub fn table_len(stage: Stage, pool_bits: usize, node_bits: usize, conn_bits: usize) -> usize {
    1 << match stage {
        Stage::PoolCfg | Stage::IdleCtl | Stage::PoolAvg => pool_bits,
        Stage::Conn => conn_bits,
        _ => node_bits,
    }
}

fn b<const N: usize>(v: u64) -> Bits<N> {
    Bits::from(v)
}

fn words(v: Bits<RB_BITS>) -> [u32; RB_WORDS] {
    let mut w = [0u32; RB_WORDS];
    for (i, w) in w.iter_mut().enumerate() {
        *w = v.get_bits::<32>(32 * i).index() as u32;
    }
    w
}

/// The model's entry `index` of `stage`'s table in the hardware's layout, as `RB_DATA` reads it
/// from a switch of `role`; an index beyond the model's table reads as the hardware's untouched
/// entry (zero).
pub fn encode(t: &Tables, role: Role, stage: Stage, index: usize) -> [u32; RB_WORDS] {
    let node_ref = |r: &horus_model::sched::NodeRef| NodeRefEntry {
        node: b(r.node.into()),
        factor: b(r.factor.0.into()),
    };
    let zero = [0; RB_WORDS];
    let bits = match stage {
        Stage::PoolCfg => t.pools.get(index).map(|r| &r.cfg).map(|e| {
            PoolCfgEntry {
                valid: e.valid,
                base: b(e.base.into()),
                cap: b(e.capacity.into()),
                n: b(e.n.into()),
                link_at: b(e.params.link_at.into()),
                unlink_at: b(e.params.unlink_at.into()),
                report_delta: b(e.params.report_delta.0.into()),
                repair_gap: b(e.params.repair_gap_us.into()),
                spine_ok: e.spine.is_some(),
                spine_id: b(e.spine.map_or(0, |s| s.id).into()),
                spine_node: b(e.spine.map_or(0, |s| s.node).into()),
            }
            .pack()
        }),
        Stage::Node => t.nodes.get(index).map(|r| &r.node).map(|e| {
            NodeEntry {
                active: e.state == horus_model::sched::state::NodeState::Active,
                pool: b(e.pool.into()),
                slot: b(e.slot.into()),
                factor: b(e.factor.0.into()),
            }
            .pack()
        }),
        Stage::IdleCtl => t.pools.get(index).map(|r| &r.ctl).map(|e| {
            IdleCtlEntry {
                p: b(e.p.into()),
                locked: e.locked,
                linked: e.linked,
                signaled: b(e.signaled_us.into()),
                turn: b(e.turn.into()),
            }
            .pack()
        }),
        Stage::IdleList => t.idle_list.get(index).map(|e| node_ref(e).pack()),
        Stage::IdleIndex => t.nodes.get(index).map(|r| &r.idle_index).map(|e| {
            use horus_model::sched::IdleIndex::*;
            let (pending, member, pos) = match *e {
                Absent => (false, false, 0),
                Pending => (true, false, 0),
                Member(p) => (false, true, p),
            };
            IdleIndexEntry {
                pending,
                member,
                pos: b(pos.into()),
            }
            .pack()
        }),
        Stage::Members1 => t.members1.get(index).map(|e| node_ref(e).pack()),
        Stage::Members2 => t.members2.get(index).map(|e| node_ref(e).pack()),
        Stage::Load1 => t
            .nodes
            .get(index)
            .map(|r| r.load1)
            .map(|l| b::<32>(l.0.into()).pack()),
        Stage::Load2 => t
            .nodes
            .get(index)
            .map(|r| r.load2)
            .map(|l| b::<32>(l.0.into()).pack()),
        Stage::Drift1 => t
            .nodes
            .get(index)
            .map(|r| r.drift1)
            .map(|d| b::<32>(u64::from(d.0 as u32)).pack()),
        Stage::Drift2 => t
            .nodes
            .get(index)
            .map(|r| r.drift2)
            .map(|d| b::<32>(u64::from(d.0 as u32)).pack()),
        Stage::PoolAvg => t.pools.get(index).map(|r| {
            let e = &r.avg;
            // A spine's entries, and an unconfigured pool's, are as the reset left them
            // (configuring a leaf's pool sets its margins).
            let (up_margin, down_margin) = if role == Role::Leaf && r.cfg.valid {
                let share = i128::from(e.spine_tasks) * i128::from(e.avg.unit);
                margins(
                    i128::from(e.avg.acc()) - share,
                    e.reported,
                    r.cfg.params.report_delta.0,
                )
            } else {
                Default::default()
            };
            PoolAvgEntry {
                acc: b(e.avg.acc()),
                unit: b(e.avg.unit),
                tasks: b(e.avg.tasks.into()),
                reported: b(e.reported),
                busy: e.avg.tasks > 0,
                full: e.avg.tasks == u32::MAX,
                up_margin,
                down_margin,
                unit_dec: b(e.avg.unit),
            }
            .pack()
        }),
        Stage::Conn => t.conn.get(index).map(|e| {
            ConnEntry {
                valid: e.valid,
                pool: b(e.pool.into()),
                seq: b(e.seq.into()),
                node: b(e.node.into()),
                stamp: b(e.stamp_us.into()),
            }
            .pack()
        }),
        Stage::NodeAddr => t.nodes.get(index).map(|r| &r.addr).map(|e| match e {
            None => AddrEntry::default().pack(),
            Some(a) => AddrEntry {
                valid: true,
                pool: b(a.pool.into()),
                mac: b(mac_bits(a.addr.endpoint.mac)),
                ip: b(u32::from(a.addr.endpoint.ip).into()),
                port: b(a.addr.endpoint.udp_port.into()),
                egress: b(a.addr.port.into()),
                dst_id: b(a.addr.dst_id.into()),
            }
            .pack(),
        }),
    };
    bits.map_or(zero, words)
}

/// The hardware entry type of `stage`'s table.
fn descriptor(stage: Stage) -> TypeDescriptor {
    match stage {
        Stage::PoolCfg => PoolCfgEntry::descriptor(),
        Stage::Node => NodeEntry::descriptor(),
        Stage::IdleCtl => IdleCtlEntry::descriptor(),
        Stage::IdleList | Stage::Members1 | Stage::Members2 => NodeRefEntry::descriptor(),
        Stage::IdleIndex => IdleIndexEntry::descriptor(),
        Stage::Load1 | Stage::Load2 | Stage::Drift1 | Stage::Drift2 => Bits::<32>::descriptor(),
        Stage::PoolAvg => PoolAvgEntry::descriptor(),
        Stage::Conn => ConnEntry::descriptor(),
        Stage::NodeAddr => AddrEntry::descriptor(),
    }
}

/// The fields of an entry of `stage`'s table read back as `w`, by name, in the hardware entry's
/// order (a table of plain words has one field, `value`). A field wider than 64 bits (the rack
/// average's accumulator) gives its low 64: the model's value, which the hardware zero-extends.
pub fn fields(stage: Stage, w: &[u32; RB_WORDS]) -> Vec<(&'static str, u64)> {
    let get = |off: usize, width: usize| -> u64 {
        (0..width.min(64)).fold(0, |acc, i| {
            let bit = off + i;
            acc | (u64::from((w[bit / 32] >> (bit % 32)) & 1) << i)
        })
    };
    let width = |k: &TypeKind| match k {
        TypeKind::Bits(n) | TypeKind::Signed(n) => *n,
        _ => unreachable!("entries are flat structs of bit vectors"),
    };
    match descriptor(stage).kind {
        TypeKind::Composite(fields) => {
            let mut off = 0;
            let mut out = Vec::new();
            for f in fields {
                let n = width(&f.kind.kind);
                // The descriptor's names live as long as the entry types: leak them once per
                // name (a handful of short strings).
                out.push((intern(&f.fieldname), get(off, n)));
                off += n;
            }
            out
        }
        k => vec![("value", get(0, width(&k)))],
    }
}

/// A `'static` copy of an entry field's name (the names are few and fixed).
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(n) = set.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(n);
    n
}

/// Writes entry `index` of `stage`'s table, read back from a switch of `role` as `w`, into the
/// model's tables: the inverse of [`encode`], so that a host rebuilds the switch's state as the
/// model holds it (`horusctl` validates operations and computes their values from it). Of the
/// `poolAvg` margins, which the hardware derives from the other fields, the model keeps what they
/// hold of the spine's tasks (`PoolAvg::spine_tasks`); an index beyond the model's table is an
/// error.
pub fn decode(
    t: &mut Tables,
    stage: Stage,
    index: usize,
    w: &[u32; RB_WORDS],
) -> Result<(), String> {
    use horus_model::fixed::{Drift, Load};
    use horus_model::sched::state::{
        ConnEntry as ModelConn, IdleCtl, NodeEntry as ModelNode, NodeState, PoolCfg,
    };
    use horus_model::sched::{
        AddrEntry as ModelAddr, IdleIndex, NodeAddr, NodeRef, Params, SpineRef,
    };
    use horus_model::wire::{Endpoint, MacAddr};
    let f = fields(stage, w);
    let v = |name: &str| -> u64 {
        f.iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
            .unwrap_or_else(|| panic!("{} has no field {name}", stage.table_name()))
    };
    let len = match stage {
        Stage::PoolCfg | Stage::IdleCtl | Stage::PoolAvg => t.pools.len(),
        Stage::IdleList => t.idle_list.len(),
        Stage::Members1 => t.members1.len(),
        Stage::Members2 => t.members2.len(),
        Stage::Conn => t.conn.len(),
        _ => t.nodes.len(),
    };
    if index >= len {
        return Err(format!(
            "{}[{index}] is beyond the table's {len} entries",
            stage.table_name()
        ));
    }
    let node_ref = || NodeRef {
        node: v("node") as u16,
        factor: Load(v("factor") as u32),
    };
    match stage {
        Stage::PoolCfg => {
            t.pools[index].cfg = PoolCfg {
                valid: v("valid") != 0,
                base: v("base") as u16,
                capacity: v("cap") as u16,
                n: v("n") as u16,
                params: Params {
                    link_at: v("link_at") as u16,
                    unlink_at: v("unlink_at") as u16,
                    report_delta: Load(v("report_delta") as u32),
                    repair_gap_us: v("repair_gap") as u16,
                },
                spine: (v("spine_ok") != 0).then(|| SpineRef {
                    id: v("spine_id") as u16,
                    node: v("spine_node") as u16,
                }),
            }
        }
        Stage::Node => {
            t.nodes[index].node = ModelNode {
                state: if v("active") != 0 {
                    NodeState::Active
                } else {
                    NodeState::Free
                },
                pool: v("pool") as u16,
                slot: v("slot") as u16,
                factor: Load(v("factor") as u32),
            }
        }
        Stage::IdleCtl => {
            t.pools[index].ctl = IdleCtl {
                p: v("p") as u16,
                locked: v("locked") != 0,
                linked: v("linked") != 0,
                signaled_us: v("signaled") as u32,
                turn: v("turn") as u16,
            }
        }
        Stage::IdleList => t.idle_list[index] = node_ref(),
        Stage::Members1 => t.members1[index] = node_ref(),
        Stage::Members2 => t.members2[index] = node_ref(),
        Stage::IdleIndex => {
            t.nodes[index].idle_index = match (v("pending") != 0, v("member") != 0) {
                (_, true) => IdleIndex::Member(v("pos") as u16),
                (true, false) => IdleIndex::Pending,
                (false, false) => IdleIndex::Absent,
            }
        }
        Stage::Load1 => t.nodes[index].load1 = Load(v("value") as u32),
        Stage::Load2 => t.nodes[index].load2 = Load(v("value") as u32),
        Stage::Drift1 => t.nodes[index].drift1 = Drift(v("value") as u32 as i32),
        Stage::Drift2 => t.nodes[index].drift2 = Drift(v("value") as u32 as i32),
        Stage::PoolAvg => {
            // The accumulator is `tasks * unit` (the model keeps the factors). The spine's tasks
            // are what the up margin leaves out of it (`margins`; 64 bits of each suffice, as
            // `spine_tasks * unit < 2^64`); a spine's entries, and an unconfigured pool's, have
            // no unit, and no margins.
            let leaf = t.pools[index].cfg.valid;
            let delta = u64::from(t.pools[index].cfg.params.report_delta.0);
            let e = &mut t.pools[index].avg;
            e.avg.unit = v("unit");
            e.avg.tasks = v("tasks") as u32;
            e.reported = v("reported");
            let own = v("up_margin").wrapping_add((e.reported + delta) << 16);
            let unit = e.avg.unit;
            e.spine_tasks = match unit {
                u if leaf && u > 0 => (v("acc").wrapping_sub(own) / u) as u32,
                _ => 0,
            };
        }
        Stage::Conn => {
            t.conn[index] = ModelConn {
                valid: v("valid") != 0,
                pool: v("pool") as u16,
                seq: v("seq") as u16,
                node: v("node") as u16,
                stamp_us: v("stamp") as u32,
            }
        }
        Stage::NodeAddr => {
            t.nodes[index].addr = (v("valid") != 0).then(|| {
                let mac = v("mac");
                ModelAddr {
                    pool: v("pool") as u16,
                    addr: NodeAddr {
                        endpoint: Endpoint {
                            mac: MacAddr(std::array::from_fn(|i| (mac >> (40 - 8 * i)) as u8)),
                            ip: (v("ip") as u32).into(),
                            udp_port: v("port") as u16,
                        },
                        port: v("egress") as u8,
                        dst_id: v("dst_id") as u16,
                    },
                }
            })
        }
    }
    Ok(())
}

/// The fields of an entry of `stage`'s table read back as `w`, by name, in hexadecimal (for
/// error messages and `horusctl`).
pub fn describe(stage: Stage, w: &[u32; RB_WORDS]) -> String {
    match fields(stage, w).as_slice() {
        [("value", v)] => format!("{v:#x}"),
        f => f
            .iter()
            .map(|(n, v)| format!("{n}={v:#x}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::fixed::{Drift, Load};
    use horus_model::sched::{IdleIndex, NodeRef};

    /// Every table filled with arbitrary values, written in the hardware's layout, read back into
    /// empty tables and written again: the same words (`decode` is `encode`'s inverse).
    #[test]
    fn decode_inverts_encode_for_every_table() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut t = Tables::new(8, 16, 8);
        for (i, r) in t.pools.iter_mut().enumerate() {
            r.cfg.valid = i % 3 != 0;
            r.cfg.base = next() as u16;
            r.cfg.capacity = next() as u16;
            r.cfg.n = next() as u16;
            r.cfg.params.link_at = next() as u16;
            r.cfg.params.report_delta = Load(next() as u32);
            r.cfg.spine = (i % 2 == 0).then(|| horus_model::sched::SpineRef {
                id: next() as u16,
                node: next() as u16,
            });
            r.ctl.p = next() as u16;
            r.ctl.locked = i % 2 == 1;
            r.ctl.signaled_us = next() as u32;
            r.ctl.turn = next() as u16;
            r.avg.avg.unit = next() >> 32;
            r.avg.avg.tasks = next() as u32;
            r.avg.reported = next() >> 20;
            r.avg.spine_tasks = next() as u32 % 4096;
        }
        for (i, r) in t.nodes.iter_mut().enumerate() {
            r.node.state = if i % 2 == 0 {
                horus_model::sched::state::NodeState::Active
            } else {
                Default::default()
            };
            r.node.pool = next() as u16;
            r.node.slot = next() as u16;
            r.node.factor = Load(next() as u32);
            r.idle_index = match i % 3 {
                0 => IdleIndex::Absent,
                1 => IdleIndex::Pending,
                _ => IdleIndex::Member(next() as u16),
            };
            r.load1 = Load(next() as u32);
            r.load2 = Load(next() as u32);
            r.drift1 = Drift(next() as i32);
            r.drift2 = Drift(next() as i32);
        }
        for l in [&mut t.idle_list, &mut t.members1, &mut t.members2] {
            for e in l.iter_mut() {
                *e = NodeRef {
                    node: next() as u16,
                    factor: Load(next() as u32),
                };
            }
        }
        for c in t.conn.iter_mut() {
            c.valid = next() % 2 == 0;
            c.pool = next() as u16;
            c.seq = next() as u16;
            c.node = next() as u16;
            c.stamp_us = next() as u32;
        }
        let mut back = Tables::new(8, 16, 8);
        for role in [Role::Leaf, Role::Spine] {
            for &stage in &Stage::ALL {
                let len = match stage {
                    Stage::PoolCfg | Stage::IdleCtl | Stage::PoolAvg => 8,
                    Stage::Conn => 8,
                    _ => 16,
                };
                for i in 0..len {
                    let w = encode(&t, role, stage, i);
                    decode(&mut back, stage, i, &w).unwrap();
                    // PoolCfg is read first, so poolAvg's margins see the same configuration.
                    assert_eq!(
                        encode(&back, role, stage, i),
                        w,
                        "{}[{i}]",
                        stage.table_name()
                    );
                }
                assert!(decode(&mut back, stage, len, &[0; RB_WORDS]).is_err());
            }
        }
    }
}
