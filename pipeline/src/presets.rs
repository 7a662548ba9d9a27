//! Building a preset's switch. The presets themselves (names, roles, table sizes) are host facts
//! in `horus_regs::presets`, re-exported here; sizes are const generics in the pipeline
//! (`HorusTop<P, N, C>`), so each preset is one instantiation, built by [`Build`].

use crate::board::boards::{Board, Shell};
use crate::board::netfpga::{NetFpgaDatapath, NetFpgaJbsqDatapath};
use crate::board::opennic::{OpenNicBox, OpenNicJbsqBox};
use crate::jbsq::top::JbsqTop;
use crate::top::HorusTop;
use rust_hdl::prelude::Block;

pub use horus_regs::presets::{
    JBSQ_PRESETS, JbsqPreset, PRESETS, Preset, jbsq_preset, names, preset,
};

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

/// The plug-in of `$board`'s shell (`$opennic` or `$netfpga`, each made by `new($board, $args...)`),
/// connected, handed to `$w`.
macro_rules! in_shell {
    ($board:expr, $w:expr, $opennic:ty, $netfpga:ty, ($($arg:expr),*)) => {
        match $board.shell {
            Shell::OpenNic => {
                let mut s = <$opennic>::new($board, $($arg),*);
                s.connect_all();
                $w.with(&s)
            }
            Shell::NetFpgaPlus => {
                let mut s = <$netfpga>::new($board, $($arg),*);
                s.connect_all();
                $w.with(&s)
            }
        }
    };
}

/// Builds a preset's switch: each preset's switch is a type of its own, handed to generic code
/// ([`WithTop`]).
pub trait Build {
    /// Builds the switch with this preset's sizes, connected, and hands it to `w`; its generator
    /// starts at `seed` and its connection entries expire after `conn_timeout_us`. The sizes are
    /// const generics, so each preset's switch is a type of its own: what to do with it is
    /// generic code ([`WithTop`]), such as emitting its Verilog.
    ///
    /// Building the switch and walking it is deeply recursive on large structs: it runs on a
    /// thread of its own with a 256 MiB stack (test threads have 2 MiB).
    fn with_top<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output;

    /// The same for the switch inside `board`'s plug-in (`board::opennic::OpenNicBox` for an
    /// OpenNIC board, `board::netfpga::NetFpgaDatapath` for NetFPGA-PLUS).
    fn with_box<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output;
}

impl Build for Preset {
    fn with_top<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output {
        let me = *self;
        on_big_stack(move || top_here(&me, seed, conn_timeout_us, w))
    }

    fn with_box<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output {
        let me = *self;
        on_big_stack(move || box_here(&me, board, seed, conn_timeout_us, w))
    }
}

fn top_here<W: WithTop>(p: &Preset, seed: u64, conn_timeout_us: u32, w: W) -> W::Output {
    macro_rules! build {
        ($p:literal, $n:literal, $c:literal) => {{
            let mut s = HorusTop::<$p, $n, $c>::new(p.role, seed, conn_timeout_us);
            s.connect_all();
            w.with(&s)
        }};
    }
    for_sizes!(p, build)
}

fn box_here<W: WithTop>(
    p: &Preset,
    board: &'static Board,
    seed: u64,
    conn_timeout_us: u32,
    w: W,
) -> W::Output {
    macro_rules! build {
        ($p:literal, $n:literal, $c:literal) => {
            in_shell!(
                board,
                w,
                OpenNicBox<$p, $n, $c>,
                NetFpgaDatapath<$p, $n, $c>,
                (p.role, seed, conn_timeout_us)
            )
        };
    }
    for_sizes!(p, build)
}

/// Builds the JBSQ leaf of a preset ([`JbsqPreset`]), as [`Build`] the paper switch.
pub trait JbsqBuild {
    /// Builds the leaf with this preset's sizes, connected, and hands it to `w` (on a thread with
    /// a large stack, as [`Build::with_top`]).
    fn with_top<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output;

    /// The same for the leaf inside `board`'s plug-in (`board::opennic::OpenNicJbsqBox`,
    /// `board::netfpga::NetFpgaJbsqDatapath`).
    fn with_box<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output;
}

/// `$build!(P, N, R, B, C, SB)` for the JBSQ preset's sizes: each preset is one instantiation.
macro_rules! for_jbsq_sizes {
    ($preset:expr, $build:ident) => {
        match (
            $preset.pool_bits,
            $preset.node_bits,
            $preset.ring_bits,
            $preset.buffer_bits,
            $preset.conn_bits,
            $preset.store_bits,
        ) {
            (6, 12, 16, 12, 10, 14) => $build!(6, 12, 16, 12, 10, 14),
            (2, 6, 10, 6, 6, 8) => $build!(2, 6, 10, 6, 6, 8),
            other => unreachable!("no JBSQ instantiation for sizes {other:?}"),
        }
    };
}

impl JbsqBuild for JbsqPreset {
    fn with_top<W: WithTop>(&self, seed: u64, conn_timeout_us: u32, w: W) -> W::Output {
        let me = *self;
        on_big_stack(move || {
            macro_rules! build {
                ($($b:literal),*) => {{
                    let mut s = JbsqTop::<$($b),*>::new(me.sizes(), seed, conn_timeout_us);
                    s.connect_all();
                    w.with(&s)
                }};
            }
            for_jbsq_sizes!(me, build)
        })
    }

    fn with_box<W: WithTop>(
        &self,
        board: &'static Board,
        seed: u64,
        conn_timeout_us: u32,
        w: W,
    ) -> W::Output {
        let me = *self;
        on_big_stack(move || {
            macro_rules! build {
                ($($b:literal),*) => {
                    in_shell!(
                        board,
                        w,
                        OpenNicJbsqBox<$($b),*>,
                        NetFpgaJbsqDatapath<$($b),*>,
                        (me.sizes(), seed, conn_timeout_us)
                    )
                };
            }
            for_jbsq_sizes!(me, build)
        })
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

/// Something done with a preset's switch ([`Build::with_top`]), whatever its sizes.
pub trait WithTop: Send + 'static {
    type Output: Send + 'static;
    fn with<B: Block>(self, top: &B) -> Self::Output;
}
