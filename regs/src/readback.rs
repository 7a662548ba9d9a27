//! Reading a table entry back through the control port: the entries' bit layouts, and the
//! conversions between the model's tables and the words `RB_DATA` shows.
//!
//! A read is a control pass (`is_ctl_read`) that names a table by its stage number in the stage
//! plan (`horus_model::sched::Stage::ALL`, [`table_number`]) and an index; the switch shows the
//! entry, zero-extended to [`RB_BITS`], in the `RB_DATA` words (the circuit's side is
//! `horus_pipeline::readback`). A read changes nothing.
//!
//! An entry's bits are its fields in [`layout`]'s order, the first in the lowest bits: the
//! hardware's entry types (`horus_pipeline::entries`, `LogicStruct`s) are checked against these
//! layouts field by field, so a host decodes what the circuit stores without linking the circuit.
//! [`encode`] writes the model's entry in that layout, so that a host or a test compares the
//! switch's tables with the model's word for word; [`decode`] is its inverse.

use horus_model::config::Role;
use horus_model::sched::{Stage, Tables};

use crate::mac_bits;

/// Width of the read-back register: the widest entry (`poolAvg`).
pub const RB_BITS: usize = 352;
/// 32-bit words of the read-back register.
pub const RB_WORDS: usize = RB_BITS / 32;

/// Bits of the rack average's report margins: two's complement (the hardware's `arith::WIDE`).
pub const MARGIN_BITS: usize = 66;

/// The fields of an entry of `stage`'s table, `(name, bits)`, first field in the lowest bits. A
/// table of plain words has one field, `value`.
pub fn layout(stage: Stage) -> &'static [(&'static str, usize)] {
    match stage {
        Stage::PoolCfg => &[
            ("valid", 1),
            ("base", 16),
            ("cap", 16),
            ("n", 16),
            ("link_at", 16),
            ("unlink_at", 16),
            ("report_delta", 32),
            ("repair_gap", 16),
            ("spine_ok", 1),
            ("spine_id", 16),
            ("spine_node", 16),
        ],
        Stage::Node => &[("active", 1), ("pool", 16), ("slot", 16), ("factor", 32)],
        Stage::IdleCtl => &[
            ("p", 16),
            ("locked", 1),
            ("linked", 1),
            ("signaled", 32),
            ("turn", 16),
        ],
        Stage::IdleList | Stage::Members1 | Stage::Members2 => &[("node", 16), ("factor", 32)],
        Stage::IdleIndex => &[("pending", 1), ("member", 1), ("pos", 16)],
        Stage::Load1 | Stage::Load2 | Stage::Drift1 | Stage::Drift2 => &[("value", 32)],
        Stage::PoolAvg => &[
            ("acc", 64),
            ("unit", 33),
            ("tasks", 32),
            ("reported", 48),
            ("busy", 1),
            ("full", 1),
            ("up_margin", MARGIN_BITS),
            ("down_margin", MARGIN_BITS),
            ("unit_dec", 33),
        ],
        Stage::Conn => &[
            ("valid", 1),
            ("pool", 16),
            ("seq", 16),
            ("node", 16),
            ("stamp", 32),
        ],
        Stage::NodeAddr => &[
            ("valid", 1),
            ("pool", 16),
            ("mac", 48),
            ("ip", 32),
            ("port", 16),
            ("egress", 8),
            ("dst_id", 16),
        ],
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

/// The margins of a `poolAvg` entry whose accumulator less the spine's tasks is `own`, with last
/// report `reported` and `report_delta` `delta`: `(up_margin, down_margin)`, each
/// [`MARGIN_BITS`]-bit two's complement. The read-back's encoding of the model's entry, the
/// circuit's tests and its configuration pass use this definition; the stage keeps it with adds
/// alone.
pub fn margins(own: i128, reported: u64, delta: u32) -> (u128, u128) {
    let hi = i128::from(reported) + i128::from(delta);
    let up = own - (hi << 16);
    let down = own - ((i128::from(reported) - i128::from(delta) + 1) << 16);
    let wide = |x: i128| x as u128 & ((1u128 << MARGIN_BITS) - 1);
    (wide(up), wide(down))
}

/// Entry words under construction, written field by field in [`layout`]'s order.
struct Writer {
    stage: Stage,
    words: [u32; RB_WORDS],
}

impl Writer {
    fn new(stage: Stage) -> Self {
        Writer {
            stage,
            words: [0; RB_WORDS],
        }
    }

    /// Sets field `name` to the low bits of `v`.
    fn set(mut self, name: &str, v: impl Into<u128>) -> Self {
        let v: u128 = v.into();
        let mut off = 0;
        for &(n, width) in layout(self.stage) {
            if n == name {
                for i in 0..width.min(128) {
                    let bit = off + i;
                    self.words[bit / 32] |= (((v >> i) & 1) as u32) << (bit % 32);
                }
                return self;
            }
            off += width;
        }
        panic!("{} has no field {name}", self.stage.table_name())
    }
}

/// The model's entry `index` of `stage`'s table in the hardware's layout, as `RB_DATA` reads it
/// from a switch of `role`; an index beyond the model's table reads as the hardware's untouched
/// entry (zero).
pub fn encode(t: &Tables, role: Role, stage: Stage, index: usize) -> [u32; RB_WORDS] {
    let w = || Writer::new(stage);
    let node_ref =
        |r: &horus_model::sched::NodeRef| w().set("node", r.node).set("factor", r.factor.0);
    let word = |v: u32| w().set("value", v);
    let entry = match stage {
        Stage::PoolCfg => t.pools.get(index).map(|r| &r.cfg).map(|e| {
            w().set("valid", e.valid)
                .set("base", e.base)
                .set("cap", e.capacity)
                .set("n", e.n)
                .set("link_at", e.params.link_at)
                .set("unlink_at", e.params.unlink_at)
                .set("report_delta", e.params.report_delta.0)
                .set("repair_gap", e.params.repair_gap_us)
                .set("spine_ok", e.spine.is_some())
                .set("spine_id", e.spine.map_or(0, |s| s.id))
                .set("spine_node", e.spine.map_or(0, |s| s.node))
        }),
        Stage::Node => t.nodes.get(index).map(|r| &r.node).map(|e| {
            w().set(
                "active",
                e.state == horus_model::sched::state::NodeState::Active,
            )
            .set("pool", e.pool)
            .set("slot", e.slot)
            .set("factor", e.factor.0)
        }),
        Stage::IdleCtl => t.pools.get(index).map(|r| &r.ctl).map(|e| {
            w().set("p", e.p)
                .set("locked", e.locked)
                .set("linked", e.linked)
                .set("signaled", e.signaled_us)
                .set("turn", e.turn)
        }),
        Stage::IdleList => t.idle_list.get(index).map(node_ref),
        Stage::IdleIndex => t.nodes.get(index).map(|r| &r.idle_index).map(|e| {
            use horus_model::sched::IdleIndex::*;
            let (pending, member, pos) = match *e {
                Absent => (false, false, 0),
                Pending => (true, false, 0),
                Member(p) => (false, true, p),
            };
            w().set("pending", pending)
                .set("member", member)
                .set("pos", pos)
        }),
        Stage::Members1 => t.members1.get(index).map(node_ref),
        Stage::Members2 => t.members2.get(index).map(node_ref),
        Stage::Load1 => t.nodes.get(index).map(|r| word(r.load1.0)),
        Stage::Load2 => t.nodes.get(index).map(|r| word(r.load2.0)),
        Stage::Drift1 => t.nodes.get(index).map(|r| word(r.drift1.0 as u32)),
        Stage::Drift2 => t.nodes.get(index).map(|r| word(r.drift2.0 as u32)),
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
                (0, 0)
            };
            w().set("acc", e.avg.acc())
                .set("unit", e.avg.unit)
                .set("tasks", e.avg.tasks)
                .set("reported", e.reported)
                .set("busy", e.avg.tasks > 0)
                .set("full", e.avg.tasks == u32::MAX)
                .set("up_margin", up_margin)
                .set("down_margin", down_margin)
                .set("unit_dec", e.avg.unit)
        }),
        Stage::Conn => t.conn.get(index).map(|e| {
            w().set("valid", e.valid)
                .set("pool", e.pool)
                .set("seq", e.seq)
                .set("node", e.node)
                .set("stamp", e.stamp_us)
        }),
        Stage::NodeAddr => t.nodes.get(index).map(|r| &r.addr).map(|e| match e {
            None => w(),
            Some(a) => w()
                .set("valid", true)
                .set("pool", a.pool)
                .set("mac", mac_bits(a.addr.endpoint.mac))
                .set("ip", u32::from(a.addr.endpoint.ip))
                .set("port", a.addr.endpoint.udp_port)
                .set("egress", a.addr.port)
                .set("dst_id", a.addr.dst_id),
        }),
    };
    entry.map_or([0; RB_WORDS], |e| e.words)
}

/// The fields of an entry of `stage`'s table read back as `w`, by name, in the hardware entry's
/// order (a table of plain words has one field, `value`). A field wider than 64 bits (the rack
/// average's margins) gives its low 64.
pub fn fields(stage: Stage, w: &[u32; RB_WORDS]) -> Vec<(&'static str, u64)> {
    let get = |off: usize, width: usize| -> u64 {
        (0..width.min(64)).fold(0, |acc, i| {
            let bit = off + i;
            acc | (u64::from((w[bit / 32] >> (bit % 32)) & 1) << i)
        })
    };
    let mut off = 0;
    layout(stage)
        .iter()
        .map(|&(name, width)| {
            let v = get(off, width);
            off += width;
            (name, v)
        })
        .collect()
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
