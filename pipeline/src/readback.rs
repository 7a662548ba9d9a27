//! Reading a table entry back through the control port: the circuit's side.
//!
//! A read is a control pass (`is_ctl_read`) that names a table by its stage number in the stage
//! plan (`horus_model::sched::Stage::ALL`) and an index. Every stage presents that index to its
//! table instead of its usual one; the stage that owns the named table, when the index is within
//! the table, keeps the entry it sees (forwarded like any read) in a register of the entry's width;
//! its output is zero-extended to [`RB_BITS`] and the core ORs the stages' outputs. The core shows
//! the kept entry, and whether a stage took the read, to the AXI4-Lite block as `RB_DATA` and
//! `RB_VALID`. A read changes nothing: no table is written, no counter counts it, the generator
//! does not move.
//!
//! An entry's bits are the hardware entry's `LogicStruct` layout (first field in the lowest bits).
//! The host's side (the layouts as data, the model's tables encoded in them and decoded from them)
//! is `horus_regs::readback`, re-exported here; a test checks every entry type against its
//! layout, field by field.

use horus_model::sched::Stage;
use rust_hdl::prelude::*;

use crate::entries::{
    AddrEntry, ConnEntry, IdleCtlEntry, IdleIndexEntry, NodeEntry, NodeRefEntry, PoolAvgEntry,
    PoolCfgEntry,
};

pub use horus_regs::readback::{
    RB_BITS, RB_WORDS, decode, describe, encode, fields, layout, table_len, table_number,
};

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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every table's entry type holds the host's layout (`horus_regs::readback::layout`): the same
    /// fields, in the same order, of the same widths; the read-back register is the widest in whole
    /// words.
    #[test]
    fn every_entry_type_is_the_hosts_layout() {
        let width = |k: &TypeKind| match k {
            TypeKind::Bits(n) | TypeKind::Signed(n) => *n,
            _ => unreachable!("entries are flat structs of bit vectors"),
        };
        let mut widest = 0;
        for &stage in &Stage::ALL {
            let hw: Vec<(String, usize)> = match descriptor(stage).kind {
                TypeKind::Composite(fields) => fields
                    .iter()
                    .map(|f| (f.fieldname.clone(), width(&f.kind.kind)))
                    .collect(),
                k => vec![("value".to_string(), width(&k))],
            };
            let host: Vec<(String, usize)> = layout(stage)
                .iter()
                .map(|&(n, w)| (n.to_string(), w))
                .collect();
            assert_eq!(hw, host, "{}", stage.table_name());
            widest = widest.max(hw.iter().map(|f| f.1).sum::<usize>());
        }
        assert_eq!(
            RB_BITS,
            widest.div_ceil(32) * 32,
            "the widest entry in whole words"
        );
    }

    /// The model's entries packed through the hardware types are the host's encoding, bit for
    /// bit (`Entry::pack` of a `LogicStruct` and `encode` agree on a sample of each table).
    #[test]
    fn packing_a_hardware_entry_gives_the_hosts_words() {
        let e = PoolAvgEntry {
            acc: 0x0123_4567_89ab_cdefu64.into(),
            unit: 0x1_0000_0001u64.into(),
            tasks: 7u64.into(),
            reported: 0xabcd_ef01_2345u64.into(),
            busy: true,
            full: false,
            up_margin: crate::entries::margins(-5, 3, 2).0,
            down_margin: crate::entries::margins(1 << 40, 3, 2).1,
            unit_dec: 0x1_0000_0001u64.into(),
        };
        let packed = e.pack();
        let words: Vec<u32> = (0..RB_WORDS)
            .map(|i| packed.get_bits::<32>(32 * i).index() as u32)
            .collect();
        let f = fields(Stage::PoolAvg, &words.clone().try_into().unwrap());
        let get = |n: &str| f.iter().find(|x| x.0 == n).unwrap().1;
        assert_eq!(get("acc"), 0x0123_4567_89ab_cdef);
        assert_eq!(get("unit"), 0x1_0000_0001);
        assert_eq!(get("tasks"), 7);
        assert_eq!(get("reported"), 0xabcd_ef01_2345);
        assert_eq!(get("busy"), 1);
        let (up, down) = horus_regs::readback::margins(-5, 3, 2);
        assert_eq!(get("up_margin"), up as u64);
        assert_eq!(
            get("down_margin"),
            horus_regs::readback::margins(1 << 40, 3, 2).1 as u64
        );
        assert_ne!(up, down);
        assert_eq!(get("unit_dec"), 0x1_0000_0001);
    }
}
