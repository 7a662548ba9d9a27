//! Stage 0: `poolCfg[pool]`, and the random generator.
//!
//! Every pass of a pool reads its configuration here (slot region, member count, link thresholds,
//! report delta, spine). A first pass of a task for a configured pool advances the xorshift64
//! generator once and draws its two samples in `[0, n)` (`horus_model::rng`); a pool that is not
//! configured drops the pass (`unknown_pool`), a task for an empty pool is dropped after the draw
//! (`empty_pool`). Control passes write the entry.

use crate::entries::PoolCfgEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::rng::DEFAULT_SEED;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use horus_model::sched::{CONN_HASH_POOL, CONN_HASH_SEQ};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PoolCfgStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The generator's state, for the co-simulation's read-back.
    pub rng_state: Signal<Out, Bits<64>>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<P>>,
    pub(super) cfg_table: StageTable<PoolCfgEntry, P>,
    out: DFF<Phv>,
    rng: DFFWithInit<Bits<64>>,
    // Values of the pass in the stage.
    e: Signal<Local, PoolCfgEntry>,
    w: Signal<Local, PoolCfgEntry>,
    reads: Signal<Local, Bit>,
    draws: Signal<Local, Bit>,
    x1: Signal<Local, Bits<64>>,
    x2: Signal<Local, Bits<64>>,
    x3: Signal<Local, Bits<64>>,
    p1_hi: Signal<Local, Bits<32>>,
    p1_lo: Signal<Local, Bits<32>>,
    p2_hi: Signal<Local, Bits<32>>,
    p2_lo: Signal<Local, Bits<32>>,
    sum1: Signal<Local, Bits<32>>,
    sum2: Signal<Local, Bits<32>>,
    /// The connection table's hash (`horus_model::sched::conn_hash`): its two products, and the
    /// hash, of which the descriptor keeps the low 16 bits (named `unused_*` for Verilator's
    /// UNUSED lint: the rest is dropped on purpose).
    hash_seq: Signal<Local, Bits<32>>,
    hash_pool: Signal<Local, Bits<32>>,
    unused_hash: Signal<Local, Bits<32>>,
    k_seq: Constant<Bits<16>>,
    k_pool: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    unknown_pool: Constant<Bits<4>>,
    empty_pool: Constant<Bits<4>>,
}

impl<const P: usize> PoolCfgStage<P> {
    pub fn new(seed: u64) -> Self {
        let seed = if seed == 0 { DEFAULT_SEED } else { seed };
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            rng_state: Default::default(),
            no_off: Constant::new(0.into()),
            cfg_table: StageTable::new(Stage::PoolCfg),
            out: Default::default(),
            rng: DFFWithInit::new(seed.into()),
            e: Default::default(),
            w: Default::default(),
            reads: Default::default(),
            draws: Default::default(),
            x1: Default::default(),
            x2: Default::default(),
            x3: Default::default(),
            p1_hi: Default::default(),
            p1_lo: Default::default(),
            p2_hi: Default::default(),
            p2_lo: Default::default(),
            sum1: Default::default(),
            sum2: Default::default(),
            hash_seq: Default::default(),
            hash_pool: Default::default(),
            unused_hash: Default::default(),
            k_seq: Constant::new(u64::from(CONN_HASH_SEQ).into()),
            k_pool: Constant::new(u64::from(CONN_HASH_POOL).into()),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            unknown_pool: Constant::new(drop_code(DropReason::UnknownPool).into()),
            empty_pool: Constant::new(drop_code(DropReason::EmptyPool).into()),
        }
    }
}

impl<const P: usize> Logic for PoolCfgStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, rng);
        clock!(self, clock, cfg_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's index (`early`).
        self.cfg_table.rd_off.next = self.no_off.val();
        self.cfg_table.rd_same.next = false;
        self.cfg_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        self.cfg_table.read.next = self.port.up.early.val().is_ctl_read;
        self.cfg_table.read_table.next = self.port.up.early.val().rd_table;
        self.cfg_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.e.next = self.cfg_table.rd_data.val();
        self.w.next = self.cfg_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        self.cfg_table.wr_en.next = false;
        // `conn`'s slot (stage 12), for every pass. The model's products are 32 bits wrapping;
        // their low 16 bits are those of the 16 x 16 products.
        self.hash_seq.next = self.port.up.pass.val().seq * self.k_seq.val();
        self.hash_pool.next = self.port.up.pass.val().pool * self.k_pool.val();
        self.unused_hash.next = self.hash_seq.val() ^ self.hash_pool.val();
        self.out.d.next.conn_slot = self.unused_hash.val().get_bits::<16>(0);
        self.reads.next = (self.port.up.pass.val().is_task
            | self.port.up.pass.val().is_random
            | self.port.up.pass.val().is_cont
            | self.port.up.pass.val().is_reply
            | self.port.up.pass.val().is_reply_idle
            | self.port.up.pass.val().is_load_update
            | self.port.up.pass.val().is_idle_add
            | self.port.up.pass.val().is_idle_remove
            | self.port.up.pass.val().is_sched2
            | self.port.up.pass.val().is_add_commit
            | self.port.up.pass.val().is_remove_finish
            | self.port.up.pass.val().is_ctl_add
            | self.port.up.pass.val().is_ctl_remove
            | self.port.up.pass.val().is_ctl_remove2)
            & !self.port.up.pass.val().drop.any();
        if self.reads.val() {
            self.out.d.next.base = self.e.val().base;
            self.out.d.next.cap = self.e.val().cap;
            self.out.d.next.n = self.e.val().n;
            self.out.d.next.link_at = self.e.val().link_at;
            self.out.d.next.unlink_at = self.e.val().unlink_at;
            self.out.d.next.report_delta = self.e.val().report_delta;
            self.out.d.next.repair_gap = self.e.val().repair_gap;
            self.out.d.next.spine_ok = self.e.val().spine_ok;
            self.out.d.next.spine_id = self.e.val().spine_id;
            self.out.d.next.spine_node = self.e.val().spine_node;
            if !self.e.val().valid {
                self.out.d.next.drop = self.unknown_pool.val();
            }
        }
        // The generator: one step per task first pass of a configured pool.
        self.draws.next = self.reads.val()
            & self.e.val().valid
            & (self.port.up.pass.val().is_task | self.port.up.pass.val().is_random);
        self.x1.next = self.rng.q.val() ^ (self.rng.q.val() << 13);
        self.x2.next = self.x1.val() ^ (self.x1.val() >> 7);
        self.x3.next = self.x2.val() ^ (self.x2.val() << 17);
        // (r32 * n) >> 32 from two 16x16 products.
        self.p1_hi.next = self.x3.val().get_bits::<16>(16) * self.e.val().n;
        self.p1_lo.next = self.x3.val().get_bits::<16>(0) * self.e.val().n;
        self.p2_hi.next = self.x3.val().get_bits::<16>(48) * self.e.val().n;
        self.p2_lo.next = self.x3.val().get_bits::<16>(32) * self.e.val().n;
        self.sum1.next = self.p1_hi.val() + (self.p1_lo.val() >> 16);
        self.sum2.next = self.p2_hi.val() + (self.p2_lo.val() >> 16);
        if self.draws.val() {
            self.rng.d.next = self.x3.val();
            self.out.d.next.r1 = self.sum1.val() >> 16;
            self.out.d.next.r2 = self.sum2.val() >> 16;
            if !self.e.val().n.any() {
                self.out.d.next.drop = self.empty_pool.val();
            }
        }
        // Control passes.
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next.valid = true;
            self.w.next.base = self.port.up.pass.val().base;
            self.w.next.n = self.zero.val();
            self.cfg_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_params {
            // The link rule runs at once on the new thresholds (stage 2): it needs the pool's
            // spine; the pass already carries the new parameters.
            self.out.d.next.n = self.e.val().n;
            self.out.d.next.spine_ok = self.e.val().spine_ok;
            self.out.d.next.spine_id = self.e.val().spine_id;
            self.out.d.next.spine_node = self.e.val().spine_node;
        }
        if self.port.up.pass.val().is_ctl_pool | self.port.up.pass.val().is_ctl_params {
            // A set also resizes the region in place (the host checked it holds the nodes).
            self.w.next.cap = self.port.up.pass.val().cap;
            self.w.next.link_at = self.port.up.pass.val().link_at;
            self.w.next.unlink_at = self.port.up.pass.val().unlink_at;
            self.w.next.report_delta = self.port.up.pass.val().report_delta;
            self.w.next.repair_gap = self.port.up.pass.val().repair_gap;
            self.cfg_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next.spine_ok = self.port.up.pass.val().spine_ok;
            self.w.next.spine_id = self.port.up.pass.val().spine_id;
            self.w.next.spine_node = self.port.up.pass.val().spine_node;
        }
        if self.port.up.pass.val().is_ctl_add {
            self.out.d.next.slot = self.e.val().n;
            self.w.next.n = self.e.val().n + self.one.val();
            self.out.d.next.n = self.e.val().n + self.one.val();
            self.cfg_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove {
            self.w.next.n = self.e.val().n - self.one.val();
            self.out.d.next.n = self.e.val().n - self.one.val();
            self.cfg_table.wr_en.next = true;
        }
        self.cfg_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        self.rng_state.next = self.rng.q.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.cfg_table.rb.val();
        self.port.rb_hit.next = self.cfg_table.rb_hit.val();
    }
}
