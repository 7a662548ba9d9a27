//! Named size presets: the table sizes of a generated switch. Sizes are const generics in the
//! pipeline (`HorusTop<P, N, C>`: `2^P` pools, `2^N` node slots, `2^C` connection entries), so
//! a preset is one instantiation (`horus_pipeline::presets` builds it); `rtl-gen --preset` picks
//! one, and a host reads the sizes of the card it drives from here.

use horus_model::config::{Role, Sizes};

/// A named set of table sizes for one role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub role: Role,
    /// `log2` of the pool, node and connection table sizes.
    pub pool_bits: usize,
    pub node_bits: usize,
    pub conn_bits: usize,
}

/// The presets: `default` is what a SmartNIC in a rack runs (a leaf: 64 pools, 4,096 worker
/// slots; a spine: 64 pools, 1,024 leaf slots); `small` (8 pools, 64 nodes, 16 connections)
/// builds and simulates fast, for tests.
pub const PRESETS: [Preset; 4] = [
    Preset {
        name: "default",
        role: Role::Leaf,
        pool_bits: 6,
        node_bits: 12,
        conn_bits: 10,
    },
    Preset {
        name: "default",
        role: Role::Spine,
        pool_bits: 6,
        node_bits: 10,
        conn_bits: 10,
    },
    Preset {
        name: "small",
        role: Role::Leaf,
        pool_bits: 3,
        node_bits: 6,
        conn_bits: 4,
    },
    Preset {
        name: "small",
        role: Role::Spine,
        pool_bits: 3,
        node_bits: 6,
        conn_bits: 4,
    },
];

/// The preset called `name` for `role`.
pub fn preset(name: &str, role: Role) -> Option<Preset> {
    PRESETS
        .iter()
        .copied()
        .find(|p| p.name == name && p.role == role)
}

/// The names of the presets.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
    v.dedup();
    v
}

impl Preset {
    /// The model's sizes for this preset (what the co-simulation's reference runs with).
    pub fn sizes(&self) -> Sizes {
        Sizes {
            pools: 1 << self.pool_bits,
            nodes: 1 << self.node_bits,
            conn_table: 1 << self.conn_bits,
        }
    }

    /// The top module's name: `horus_leaf` or `horus_spine`, with the preset's name unless it is
    /// the default.
    pub fn module_name(&self) -> String {
        let role = match self.role {
            Role::Leaf => "leaf",
            Role::Spine => "spine",
        };
        if self.name == "default" {
            format!("horus_{role}")
        } else {
            format!("horus_{role}_{}", self.name)
        }
    }
}
