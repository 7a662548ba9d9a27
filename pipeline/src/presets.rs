//! Named size presets: the table sizes of a generated switch. Sizes are const generics in the
//! pipeline (`HorusTop<P, N, C>`: `2^P` pools, `2^N` node slots, `2^C` connection entries), so
//! a preset is one instantiation; `rtl-gen --preset` picks one.

use crate::board::boards::{Board, Shell};
use crate::board::netfpga::NetFpgaDatapath;
use crate::board::opennic::OpenNicBox;
use crate::top::HorusTop;
use horus_model::config::{Role, Sizes};
use rust_hdl::prelude::Block;

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

/// `$build!(P, N, C)` for the preset's sizes: each preset is one instantiation.
macro_rules! for_sizes {
    ($preset:expr, $build:ident) => {
        match ($preset.pool_bits, $preset.node_bits, $preset.conn_bits) {
            (6, 12, 10) => $build!(6, 12, 10),
            (6, 10, 10) => $build!(6, 10, 10),
            (3, 6, 4) => $build!(3, 6, 4),
            other => unreachable!("no instantiation for sizes {other:?}"),
        }
    };
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

    /// Builds the switch with this preset's sizes, connected, and hands it to `w`; its generator
    /// starts at `seed` and its connection entries expire after `conn_timeout_us`. The sizes are
    /// const generics, so each preset's switch is a type of its own: what to do with it is
    /// generic code ([`WithTop`]), such as emitting its Verilog.
    ///
    /// Building the switch and walking it is deeply recursive on large structs: it runs on a
    /// thread of its own with a 256 MiB stack (test threads have 2 MiB).
    pub fn with_top<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output {
        let me = *self;
        on_big_stack(move || me.with_top_here(seed, conn_timeout_us, w))
    }

    fn with_top_here<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output {
        macro_rules! build {
            ($p:literal, $n:literal, $c:literal) => {{
                let mut s = HorusTop::<$p, $n, $c>::new(self.role, seed, conn_timeout_us);
                s.connect_all();
                w.with(&s)
            }};
        }
        for_sizes!(self, build)
    }

    /// The same for the switch inside `board`'s plug-in (`board::opennic::OpenNicBox` for an
    /// OpenNIC board, `board::netfpga::NetFpgaDatapath` for NetFPGA-PLUS).
    pub fn with_box<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output {
        let me = *self;
        on_big_stack(move || me.with_box_here(board, seed, conn_timeout_us, w))
    }

    fn with_box_here<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output {
        macro_rules! build {
            ($p:literal, $n:literal, $c:literal) => {{
                match board.shell {
                    Shell::OpenNic => {
                        let mut s =
                            OpenNicBox::<$p, $n, $c>::new(board, self.role, seed, conn_timeout_us);
                        s.connect_all();
                        w.with(&s)
                    }
                    Shell::NetFpgaPlus => {
                        let mut s = NetFpgaDatapath::<$p, $n, $c>::new(
                            board,
                            self.role,
                            seed,
                            conn_timeout_us,
                        );
                        s.connect_all();
                        w.with(&s)
                    }
                }
            }};
        }
        for_sizes!(self, build)
    }
}

/// `f` on a thread of its own with a 256 MiB stack: building a switch and walking it is deeply
/// recursive on large structs (test threads have 2 MiB).
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawning the builder thread")
        .join()
        .expect("the builder thread finished")
}

/// Something done with a preset's switch ([`Preset::with_top`]), whatever its sizes.
pub trait WithTop: Send + 'static {
    type Output: Send + 'static;
    fn with<B: Block>(self, top: &B) -> Self::Output;
}
