//! `poolCfg[pool]`: each pool's configuration and member count, and the random generator
//! (`docs/algorithm.md`, "The leaf that holds tasks (JBSQ)"; `horus_model::rng`).
//!
//! - Every pass of a pool but its configuration reads the entry and hands the configuration on
//!   (its regions, `k` as `pool_k`, the fallback as `drop_full`, what it advertises, `hold_us`,
//!   the signal parameters, the spine, `n`). A pool that is not configured drops the pass
//!   (`UnknownPool`; a reply is still forwarded).
//! - A task's first pass of a configured pool advances the generator once (xorshift64, 13, 7,
//!   17) and takes sample 1 from the new state's low 32 bits scaled to `[0, n)` by multiply-high,
//!   `(r32 · n) >> 32` (`r1`, the fallback's member); a retry draws nothing (`r1` 0, as the
//!   model's). A task of a pool with no member is dropped after the draw (`EmptyPool`).
//! - Every pass carries its `conn` slot (`conn_slot`: the low 16 bits of
//!   `horus_model::sched::conn_hash(pool, seq)`), which `conn` reads a clock ahead of its pass,
//!   as the paper leaf's stage 0 works it out for its `conn`.
//! - Control: a configuration writes the pass's configuration with no member; an added node
//!   takes member slot `n` (`slot`) and `n` goes one up; a removal takes `n` one down; the host's
//!   read before a removal (`is_ctl_read`) asks `members` for the last member, at slot `n - 1`;
//!   the pool's new settings (`is_ctl_pool_params`, decision 36) write its `k`, `hold_us`,
//!   signal parameters and whether it holds tasks (`holds`, decision 37), the rest of the entry
//!   kept; a move of its buffer region (`is_ctl_move`, decision 37) writes the region and holds
//!   again. A pass hands on `hold_slots`: the region's slots while the pool holds, else 0.
//!
//! The table is 64 words of LUT RAM at the preset; back-to-back passes on one pool are forwarded
//! ([`RmwTable`]). The index is the pass's pool, a register.

use super::JbsqPort;
use super::entries::PoolCfgEntry;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use horus_model::rng::DEFAULT_SEED;
use horus_model::sched::{CONN_HASH_POOL, CONN_HASH_SEQ};
use rust_hdl::prelude::*;

/// `poolCfg` for `2^P` pools.
#[derive(LogicBlock)]
pub struct PoolCfgStage<const P: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// The generator's state (for test benches: the model's `rng_state`).
    pub rng_state: Signal<Out, Bits<64>>,
    /// `early` but for its pool (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) cfg_table: RmwTable<PoolCfgEntry, P>,
    out: DFF<JbsqPhv>,
    /// The generator's state.
    rng: DFFWithInit<Bits<64>>,
    e: Signal<Local, PoolCfgEntry>,
    w: Signal<Local, PoolCfgEntry>,
    active: Signal<Local, Bit>,
    reads: Signal<Local, Bit>,
    draws: Signal<Local, Bit>,
    x1: Signal<Local, Bits<64>>,
    x2: Signal<Local, Bits<64>>,
    x3: Signal<Local, Bits<64>>,
    /// `(r32 · n) >> 32` from two 16 x 16 products: `(hi · n + (lo · n >> 16)) >> 16` (the
    /// sum's low 16 bits are dropped on purpose: the name matches Verilator's
    /// `--unused-regexp`).
    p_hi: Signal<Local, Bits<32>>,
    p_lo: Signal<Local, Bits<32>>,
    sum_unused: Signal<Local, Bits<32>>,
    /// `conn`'s hash: the 16 x 16 products of the multipliers, whose high halves are not read
    /// (the name matches Verilator's `--unused-regexp`).
    hash_seq: Signal<Local, Bits<32>>,
    hash_pool: Signal<Local, Bits<32>>,
    hash_unused: Signal<Local, Bits<32>>,
    k_seq: Constant<Bits<16>>,
    k_pool: Constant<Bits<16>>,
    n_up: Signal<Local, Bits<16>>,
    n_down: Signal<Local, Bits<16>>,
    one: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    zero_p: Constant<Bits<P>>,
}

impl<const P: usize> PoolCfgStage<P> {
    /// The stage with the generator seeded as the model's `Xorshift64::new(seed)`.
    pub fn new(seed: u64) -> Self {
        let seed = if seed == 0 { DEFAULT_SEED } else { seed };
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            cfg_table: Default::default(),
            out: Default::default(),
            rng_state: Default::default(),
            rng: DFFWithInit::new(seed.into()),
            e: Default::default(),
            w: Default::default(),
            active: Default::default(),
            reads: Default::default(),
            draws: Default::default(),
            x1: Default::default(),
            x2: Default::default(),
            x3: Default::default(),
            p_hi: Default::default(),
            p_lo: Default::default(),
            sum_unused: Default::default(),
            hash_seq: Default::default(),
            hash_pool: Default::default(),
            hash_unused: Default::default(),
            k_seq: Constant::new(u64::from(CONN_HASH_SEQ).into()),
            k_pool: Constant::new(u64::from(CONN_HASH_POOL).into()),
            n_up: Default::default(),
            n_down: Default::default(),
            one: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            zero_p: Constant::new(0.into()),
        }
    }
}

impl<const P: usize> Logic for PoolCfgStage<P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, rng);
        self.rng_state.next = self.rng.q.val();
        clock!(self, clock, cfg_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's pool.
        self.cfg_table.rd_addr.next = self.port.up.early.val().pool.get_bits::<P>(0);
        self.cfg_table.rd_off.next = self.zero_p.val();
        self.cfg_table.rd_indexed.next = false;
        self.cfg_table.rd_index.next = self.zero_p.val();
        self.cfg_table.rd_same.next = false;
        self.cfg_table.wr_addr.next = self.port.up.pass.val().pool.get_bits::<P>(0);
        // The pass in the stage.
        self.e.next = self.cfg_table.rd_data.val();
        self.w.next = self.cfg_table.rd_data.val();
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.reads.next = self.active.val()
            & (self.port.up.pass.val().is_task
                | self.port.up.pass.val().is_reply
                | self.port.up.pass.val().is_return
                | self.port.up.pass.val().is_cont
                | self.port.up.pass.val().is_ctl_place
                | self.port.up.pass.val().is_ctl_add
                | self.port.up.pass.val().is_ctl_remove
                | self.port.up.pass.val().is_ctl_read
                | self.port.up.pass.val().is_ctl_move);
        self.out.d.next = self.port.up.pass.val();
        if self.reads.val() {
            self.out.d.next.base = self.e.val().base;
            self.out.d.next.cap = self.e.val().cap;
            self.out.d.next.n = self.e.val().n;
            self.out.d.next.pool_k = self.e.val().k;
            self.out.d.next.ring_base = self.e.val().ring_base;
            self.out.d.next.ring_slots = self.e.val().ring_slots;
            self.out.d.next.queue_base = self.e.val().queue_base;
            self.out.d.next.queue_slots = self.e.val().queue_slots;
            self.out.d.next.hold_slots = self.zero.val();
            if self.e.val().holds {
                self.out.d.next.hold_slots = self.e.val().queue_slots;
            }
            self.out.d.next.drop_full = self.e.val().drop_full;
            self.out.d.next.adv_places = self.e.val().adv_places;
            self.out.d.next.adv_queue = self.e.val().adv_queue;
            self.out.d.next.room = self.e.val().room;
            self.out.d.next.hold_us = self.e.val().hold_us;
            self.out.d.next.link_at = self.e.val().link_at;
            self.out.d.next.unlink_at = self.e.val().unlink_at;
            self.out.d.next.report_delta = self.e.val().report_delta;
            self.out.d.next.repair_gap = self.e.val().repair_gap;
            self.out.d.next.spine_ok = self.e.val().spine_ok;
            self.out.d.next.spine_id = self.e.val().spine_id;
            self.out.d.next.spine_node = self.e.val().spine_node;
            self.out.d.next.pool_ok = self.e.val().valid;
            if !self.e.val().valid {
                self.out.d.next.drop = true;
            }
        }
        // `conn`'s slot, for every pass. The model's products are 32 bits wrapping; their low 16
        // bits are those of the 16 x 16 products.
        self.hash_seq.next = self.port.up.pass.val().seq * self.k_seq.val();
        self.hash_pool.next = self.port.up.pass.val().pool * self.k_pool.val();
        self.hash_unused.next = self.hash_seq.val() ^ self.hash_pool.val();
        self.out.d.next.conn_slot = self.hash_unused.val().get_bits::<16>(0);
        // The generator: one step per task first pass of a configured pool; sample 1 scaled by
        // the pool's members.
        self.draws.next = self.reads.val()
            & self.e.val().valid
            & self.port.up.pass.val().is_task
            & !self.port.up.pass.val().is_retry;
        self.x1.next = self.rng.q.val() ^ (self.rng.q.val() << 13);
        self.x2.next = self.x1.val() ^ (self.x1.val() >> 7);
        self.x3.next = self.x2.val() ^ (self.x2.val() << 17);
        self.p_hi.next = self.x3.val().get_bits::<16>(16) * self.e.val().n;
        self.p_lo.next = self.x3.val().get_bits::<16>(0) * self.e.val().n;
        self.sum_unused.next = self.p_hi.val() + (self.p_lo.val() >> 16);
        self.out.d.next.r1 = self.zero.val();
        if self.draws.val() {
            self.rng.d.next = self.x3.val();
            self.out.d.next.r1 = self.sum_unused.val().get_bits::<16>(16);
        }
        if self.reads.val()
            & self.e.val().valid
            & self.port.up.pass.val().is_task
            & !self.e.val().n.any()
        {
            self.out.d.next.drop = true;
        }
        // Control passes.
        self.n_up.next = self.e.val().n + self.one.val();
        self.n_down.next = self.e.val().n - self.one.val();
        self.cfg_table.wr_en.next = false;
        if self.port.up.pass.val().is_ctl_pool {
            self.w.next.valid = true;
            self.w.next.base = self.port.up.pass.val().base;
            self.w.next.cap = self.port.up.pass.val().cap;
            self.w.next.n = self.zero.val();
            self.w.next.k = self.port.up.pass.val().pool_k;
            self.w.next.ring_base = self.port.up.pass.val().ring_base;
            self.w.next.ring_slots = self.port.up.pass.val().ring_slots;
            self.w.next.queue_base = self.port.up.pass.val().queue_base;
            self.w.next.queue_slots = self.port.up.pass.val().queue_slots;
            self.w.next.drop_full = self.port.up.pass.val().drop_full;
            self.w.next.adv_places = self.port.up.pass.val().adv_places;
            self.w.next.adv_queue = self.port.up.pass.val().adv_queue;
            self.w.next.room = self.port.up.pass.val().room;
            self.w.next.hold_us = self.port.up.pass.val().hold_us;
            self.w.next.link_at = self.port.up.pass.val().link_at;
            self.w.next.unlink_at = self.port.up.pass.val().unlink_at;
            self.w.next.report_delta = self.port.up.pass.val().report_delta;
            self.w.next.repair_gap = self.port.up.pass.val().repair_gap;
            self.w.next.spine_ok = self.port.up.pass.val().spine_ok;
            self.w.next.spine_id = self.port.up.pass.val().spine_id;
            self.w.next.spine_node = self.port.up.pass.val().spine_node;
            self.w.next.holds = true;
            self.out.d.next.n = self.zero.val();
            self.cfg_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_add {
            self.out.d.next.slot = self.e.val().n;
            self.out.d.next.n = self.n_up.val();
            self.w.next.n = self.n_up.val();
            self.cfg_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_remove {
            self.out.d.next.n = self.n_down.val();
            self.w.next.n = self.n_down.val();
            self.cfg_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_read {
            self.out.d.next.slot = self.n_down.val();
        }
        if self.port.up.pass.val().is_ctl_pool_params {
            self.w.next.k = self.port.up.pass.val().pool_k;
            self.w.next.hold_us = self.port.up.pass.val().hold_us;
            self.w.next.link_at = self.port.up.pass.val().link_at;
            self.w.next.unlink_at = self.port.up.pass.val().unlink_at;
            self.w.next.report_delta = self.port.up.pass.val().report_delta;
            self.w.next.repair_gap = self.port.up.pass.val().repair_gap;
            self.w.next.holds = self.port.up.pass.val().holds;
            self.cfg_table.wr_en.next = self.port.up.pass.val().live;
        }
        if self.port.up.pass.val().is_ctl_move {
            self.w.next.queue_base = self.port.up.pass.val().queue_base;
            self.w.next.queue_slots = self.port.up.pass.val().queue_slots;
            self.w.next.holds = true;
            self.cfg_table.wr_en.next = self.port.up.pass.val().live;
        }
        self.cfg_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
