//! `outstanding[node]`: each worker's tasks sent and not answered, and the generation its
//! tokens must carry (`docs/algorithm.md`, decisions 23, 25 and 30).
//!
//! - A task that took a token: the token's node, unless the token is stale (the node removed,
//!   or removed and added again since: `stale`, the task retries and nothing is written), gets
//!   one more task.
//! - A task over a bound (`fallback`): the sampled node gets one more task.
//! - A reply: the worker has one fewer (`left`); a task released to it in the same pass puts
//!   it back; with nothing released and fewer than its `k` left, its freed place returns to a
//!   ring in a second pass (`returns`; the ring is the level of `left` under `k`), unless the
//!   worker was counted at 0 (`spurious`, decision 33: a duplicate reply returns no place).
//! - A returned place that finds a task held meanwhile: the worker gets it, one more task.
//! - Control: an added node starts active with its generation and tasks; a removed node's
//!   tasks are lost with it (`lost`, for the average's rescale) and its generation moves on; a
//!   node's new bound (decision 36) keeps its count and takes the generation `nodeCfg` moved on.
//!
//! The ring a returned place goes to is the level of the count left under the node's bound,
//! `floor(left · 8 / k)` (`level`): the number of `j` in 1..7 with `8 · left >= j · k`, that is
//! `8 · tasks >= j · k + 8` on the entry's count before the reply (`k` at most 255, so a count of
//! 256 or more is above them all); the seven thresholds come from
//! the pass's `k` alone, worked out a clock ahead ([`LevelTerms`]), so that each is one compare on
//! the entry and the level a count of true compares.
//!
//! Counts saturate at 65,535 as the model's. The index is the token's node, the sampled node or
//! the pass's node: fields the stages before set two or more stages earlier (`ring`, `members`),
//! so the pick among them is early in the cycle.

use super::JbsqPort;
use super::entries::OutstandingEntry;
use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// A returned place's level thresholds, `j · k + 8` for `j` in 1..7, on 11 bits (`k` is at
/// most 255: `7 · 255 + 8` fits), from the entering pass's `k`.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct LevelTerms {
    pub t1: Bits<11>,
    pub t2: Bits<11>,
    pub t3: Bits<11>,
    pub t4: Bits<11>,
    pub t5: Bits<11>,
    pub t6: Bits<11>,
    pub t7: Bits<11>,
}

/// `outstanding` for `2^N` nodes.
#[derive(LogicBlock)]
pub struct OutstandingStage<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) out_table: RmwTable<OutstandingEntry, N>,
    out: DFF<JbsqPhv>,
    /// The index the pass in the stage read (where it writes).
    at: DFF<Bits<N>>,
    index: Signal<Local, Bits<N>>,
    e: Signal<Local, OutstandingEntry>,
    w: Signal<Local, OutstandingEntry>,
    active: Signal<Local, Bit>,
    popping: Signal<Local, Bit>,
    stale: Signal<Local, Bit>,
    gains: Signal<Local, Bit>,
    replying: Signal<Local, Bit>,
    /// The count one up (saturating), one down (at 0, 0), and one down and up again.
    up: Signal<Local, Bits<16>>,
    down: Signal<Local, Bits<16>>,
    down_up: Signal<Local, Bits<16>>,
    /// The level's thresholds (a clock ahead), `k` and the count widened, and the compares.
    lv: DFF<LevelTerms>,
    k11: ZeroExtend<8, 11>,
    tasks11: ZeroExtend<8, 11>,
    tasks8: Signal<Local, Bits<11>>,
    /// The count is 256 or more: above every threshold.
    many: Signal<Local, Bit>,
    c1: Signal<Local, Bit>,
    c2: Signal<Local, Bit>,
    c3: Signal<Local, Bit>,
    c4: Signal<Local, Bit>,
    c5: Signal<Local, Bit>,
    c6: Signal<Local, Bit>,
    c7: Signal<Local, Bit>,
    eight: Constant<Bits<11>>,
    lvl0: Constant<Bits<3>>,
    lvl1: Constant<Bits<3>>,
    lvl2: Constant<Bits<3>>,
    lvl3: Constant<Bits<3>>,
    lvl4: Constant<Bits<3>>,
    lvl5: Constant<Bits<3>>,
    lvl6: Constant<Bits<3>>,
    lvl7: Constant<Bits<3>>,
    three: Constant<Bits<11>>,
    full: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
    one8: Constant<Bits<8>>,
    zero: Constant<Bits<16>>,
    zero_n: Constant<Bits<N>>,
}

impl<const N: usize> Default for OutstandingStage<N> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            out_table: Default::default(),
            out: Default::default(),
            at: Default::default(),
            index: Default::default(),
            e: Default::default(),
            w: Default::default(),
            active: Default::default(),
            popping: Default::default(),
            stale: Default::default(),
            gains: Default::default(),
            replying: Default::default(),
            up: Default::default(),
            down: Default::default(),
            down_up: Default::default(),
            lv: Default::default(),
            k11: Default::default(),
            tasks11: Default::default(),
            tasks8: Default::default(),
            many: Default::default(),
            c1: Default::default(),
            c2: Default::default(),
            c3: Default::default(),
            c4: Default::default(),
            c5: Default::default(),
            c6: Default::default(),
            c7: Default::default(),
            eight: Constant::new(8.into()),
            lvl0: Constant::new(0.into()),
            lvl1: Constant::new(1.into()),
            lvl2: Constant::new(2.into()),
            lvl3: Constant::new(3.into()),
            lvl4: Constant::new(4.into()),
            lvl5: Constant::new(5.into()),
            lvl6: Constant::new(6.into()),
            lvl7: Constant::new(7.into()),
            three: Constant::new(3.into()),
            full: Constant::new(0xffff.into()),
            one: Constant::new(1.into()),
            one8: Constant::new(1.into()),
            zero: Constant::new(0.into()),
            zero_n: Constant::new(0.into()),
        }
    }
}

impl<const N: usize> Logic for OutstandingStage<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at, lv);
        clock!(self, clock, out_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's node: the token's, the sample's, or its own.
        self.index.next = self.port.up.early.val().src.get_bits::<N>(0);
        if self.port.up.early.val().fallback {
            self.index.next = self.port.up.early.val().fb_node.get_bits::<N>(0);
        }
        if self.port.up.early.val().pop {
            self.index.next = self.port.up.early.val().tok_node.get_bits::<N>(0);
        }
        self.out_table.rd_addr.next = self.index.val();
        // The entering pass's level thresholds `j · k + 8`.
        self.k11.narrow.next = self.port.up.early.val().k.get_bits::<8>(0);
        self.lv.d.next.t1 = self.k11.wide.val() + self.eight.val();
        self.lv.d.next.t2 = (self.k11.wide.val() << 1) + self.eight.val();
        self.lv.d.next.t3 = (self.k11.wide.val() << 1) + self.k11.wide.val() + self.eight.val();
        self.lv.d.next.t4 = (self.k11.wide.val() << 2) + self.eight.val();
        self.lv.d.next.t5 = (self.k11.wide.val() << 2) + self.k11.wide.val() + self.eight.val();
        self.lv.d.next.t6 =
            (self.k11.wide.val() << 2) + (self.k11.wide.val() << 1) + self.eight.val();
        self.lv.d.next.t7 =
            (self.k11.wide.val() << self.three.val()) - self.k11.wide.val() + self.eight.val();
        self.out_table.rd_off.next = self.zero_n.val();
        self.out_table.rd_indexed.next = false;
        self.out_table.rd_index.next = self.zero_n.val();
        self.out_table.rd_same.next = false;
        self.at.d.next = self.index.val();
        self.out_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.e.next = self.out_table.rd_data.val();
        self.w.next = self.out_table.rd_data.val();
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.up.next = self.e.val().tasks + self.one.val();
        if self.e.val().tasks == self.full.val() {
            self.up.next = self.e.val().tasks;
        }
        self.down.next = self.e.val().tasks - self.one.val();
        if self.e.val().tasks == self.zero.val() {
            self.down.next = self.zero.val();
        }
        // One down and up again: the count, or 1 from 0.
        self.down_up.next = self.e.val().tasks;
        if self.e.val().tasks == self.zero.val() {
            self.down_up.next = self.one.val();
        }
        self.popping.next =
            self.active.val() & self.port.up.pass.val().is_task & self.port.up.pass.val().pop;
        self.stale.next = self.popping.val()
            & (!self.e.val().active | (self.e.val().generation != self.port.up.pass.val().tok_gen));
        self.gains.next = (self.popping.val() & !self.stale.val())
            | (self.active.val()
                & self.port.up.pass.val().is_task
                & self.port.up.pass.val().fallback)
            | (self.active.val()
                & self.port.up.pass.val().is_return
                & self.port.up.pass.val().release);
        self.replying.next = self.active.val() & self.port.up.pass.val().is_reply;
        // The new count is picked by the pass's kind alone; whether it is written waits for the
        // stale check (the enable, not the data, depends on the generation compare).
        if self.port.up.pass.val().is_task | self.port.up.pass.val().is_return {
            self.w.next.tasks = self.up.val();
        }
        if self.port.up.pass.val().is_reply {
            self.w.next.tasks = self.down.val();
            if self.port.up.pass.val().release {
                self.w.next.tasks = self.down_up.val();
            }
        }
        self.out_table.wr_en.next = self.gains.val() | self.replying.val();
        if self.port.up.pass.val().is_ctl_add {
            self.w.next.active = true;
            self.w.next.generation = self.port.up.pass.val().generation;
            self.w.next.tasks = self.port.up.pass.val().tasks;
            self.out_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_bound {
            // A new bound (decision 36): the count kept, the node's new generation.
            self.w.next.generation = self.port.up.pass.val().generation;
            self.out_table.wr_en.next = true;
        }
        if self.port.up.pass.val().is_ctl_remove {
            self.w.next.active = false;
            self.w.next.generation = self.e.val().generation + self.one8.val();
            self.w.next.tasks = self.zero.val();
            self.out_table.wr_en.next = true;
        }
        self.out_table.wr_data.next = self.w.val();
        self.out.d.next = self.port.up.pass.val();
        self.out.d.next.stale = self.stale.val();
        self.out.d.next.left = self.down.val();
        // A reply from a worker counted at 0 is spurious (decision 33): no place returns.
        self.out.d.next.spurious = self.replying.val() & (self.e.val().tasks == self.zero.val());
        self.out.d.next.returns = self.replying.val()
            & !self.port.up.pass.val().release
            & (self.e.val().tasks != self.zero.val())
            & (self.down.val() < self.port.up.pass.val().k);
        self.out.d.next.lost = self.e.val().tasks;
        // A reply's count left, as the ring of its place: `floor(left · 8 / k)`.
        self.tasks11.narrow.next = self.out_table.rd_data.val().tasks.get_bits::<8>(0);
        self.many.next = self.out_table.rd_data.val().tasks.get_bits::<8>(8).any();
        self.tasks8.next = self.tasks11.wide.val() << self.three.val();
        self.c1.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t1);
        self.c2.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t2);
        self.c3.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t3);
        self.c4.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t4);
        self.c5.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t5);
        self.c6.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t6);
        self.c7.next = self.many.val() | (self.tasks8.val() >= self.lv.q.val().t7);
        if self.port.up.pass.val().is_reply {
            self.out.d.next.level = self.lvl0.val();
            if self.c1.val() {
                self.out.d.next.level = self.lvl1.val();
            }
            if self.c2.val() {
                self.out.d.next.level = self.lvl2.val();
            }
            if self.c3.val() {
                self.out.d.next.level = self.lvl3.val();
            }
            if self.c4.val() {
                self.out.d.next.level = self.lvl4.val();
            }
            if self.c5.val() {
                self.out.d.next.level = self.lvl5.val();
            }
            if self.c6.val() {
                self.out.d.next.level = self.lvl6.val();
            }
            if self.c7.val() {
                self.out.d.next.level = self.lvl7.val();
            }
        }
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
