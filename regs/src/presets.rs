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

/// A named set of table sizes of the leaf that holds tasks (`horus_pipeline::jbsq::top::JbsqTop<P,
/// N, R, B, C, SB>`): `log2` of its pools, nodes, token-ring entries, task-buffer slots,
/// connection entries and frame-store beats (four 64-byte beats a slot: a held task of up to 256
/// bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JbsqPreset {
    pub name: &'static str,
    pub pool_bits: usize,
    pub node_bits: usize,
    pub ring_bits: usize,
    pub buffer_bits: usize,
    pub conn_bits: usize,
    pub store_bits: usize,
}

/// The JBSQ leaf's presets, named as the paper switch's: `default` is the model's
/// `JbsqSizes::DEFAULT` (64 pools, 4,096 nodes, 65,536 ring entries, 4,096 held tasks), `small`
/// its `JbsqSizes::SMALL` (4 pools, 64 nodes, 1,024 ring entries, 64 held tasks).
pub const JBSQ_PRESETS: [JbsqPreset; 2] = [
    JbsqPreset {
        name: "default",
        pool_bits: 6,
        node_bits: 12,
        ring_bits: 16,
        buffer_bits: 12,
        conn_bits: 10,
        store_bits: 14,
    },
    JbsqPreset {
        name: "small",
        pool_bits: 2,
        node_bits: 6,
        ring_bits: 10,
        buffer_bits: 6,
        conn_bits: 6,
        store_bits: 8,
    },
];

/// The JBSQ leaf's preset called `name`.
pub fn jbsq_preset(name: &str) -> Option<JbsqPreset> {
    JBSQ_PRESETS.iter().copied().find(|p| p.name == name)
}

/// The JBSQ leaf's preset whose pools, nodes and connection entries are `sizes` (a
/// configuration's `[sizes]`; its rings and task buffer come with the preset).
pub fn jbsq_preset_for(sizes: &Sizes) -> Option<JbsqPreset> {
    JBSQ_PRESETS.iter().copied().find(|p| {
        let j = p.sizes();
        (j.pools, j.nodes, j.conn_table) == (sizes.pools, sizes.nodes, sizes.conn_table)
    })
}

impl JbsqPreset {
    /// The model's sizes for this preset.
    pub fn sizes(&self) -> horus_model::sched::jbsq::JbsqSizes {
        horus_model::sched::jbsq::JbsqSizes {
            pools: 1 << self.pool_bits,
            nodes: 1 << self.node_bits,
            buffer_slots: 1 << self.buffer_bits,
            ring_entries: 1 << self.ring_bits,
            slot_bytes: 64 << (self.store_bits - self.buffer_bits),
            conn_table: 1 << self.conn_bits,
        }
    }

    /// The top module's name: `horus_leaf_jbsq`, with the preset's name unless it is the default.
    pub fn module_name(&self) -> String {
        if self.name == "default" {
            "horus_leaf_jbsq".into()
        } else {
            format!("horus_leaf_jbsq_{}", self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::sched::jbsq::JbsqSizes;

    #[test]
    fn the_jbsq_presets_are_the_models_sizes() {
        assert_eq!(jbsq_preset("default").unwrap().sizes(), JbsqSizes::DEFAULT);
        assert_eq!(jbsq_preset("small").unwrap().sizes(), JbsqSizes::SMALL);
        let mut names: Vec<_> = JBSQ_PRESETS.iter().map(|p| p.name).collect();
        names.dedup();
        assert_eq!(
            names,
            super::names(),
            "the same preset names as the paper switch's"
        );
    }
}
