//! Stage 12: `conn[hash(pool, seq)]`: multi-packet task affinity (§A.4).
//!
//! The slot is `conn_hash(pool, seq) mod 2^C` (`horus_model::sched::conn_hash`), which stage 0
//! works out for every pass (`Phv::conn_slot`, its low 16 bits).
//! An entry is expired once `time - stamp >= timeout` (microseconds, wrapping). The check is
//! three subtractions from the entry side by side, where a subtraction and then a compare are
//! two carry chains in a row: whether `time - stamp` wraps, and the signs of
//! `(time - timeout) - stamp` (no wrap: expired when not negative) and of
//! `(time + 2^32 - timeout) - stamp` (wrap), on 34 bits, the bracketed terms worked out a clock
//! ahead from `early`.
//!
//! - A pass that places a task (a task first pass, a random task, a task's second pass) whose
//!   header says more packets follow remembers the chosen node, unless the slot holds a live entry
//!   of another task (`ev_conn_collision`: the task's continuations will miss). An expired foreign
//!   entry is replaced (`ev_conn_expired`).
//! - A continuation that finds its own live entry goes to its node (`chosen`); the last packet
//!   frees the entry. No entry is `continuation_miss`; so is an expired one, which is freed
//!   (`ev_conn_expired`).

use crate::arith::ZeroExtend;
use crate::entries::ConnEntry;
use crate::phv::{Phv, drop_code};
use crate::stages::StagePort;
use crate::table::StageTable;
use horus_model::sched::DropReason;
use horus_model::sched::Stage;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ConnStage<const C: usize> {
    pub clock: Signal<In, Clock>,
    /// The pass in and out, and the read-back (`StagePort`).
    pub port: StagePort,
    /// `early` but for its index fields (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, Phv>,
    /// The table is indexed directly: no offset (`StageTable::rd_off`).
    no_off: Constant<Bits<C>>,
    pub(super) conn_table: StageTable<ConnEntry, C>,
    out: DFF<Phv>,
    w: Signal<Local, ConnEntry>,
    live: Signal<Local, Bit>,
    same: Signal<Local, Bit>,
    hit: Signal<Local, Bit>,
    expired: Signal<Local, Bit>,
    early_time_w: ZeroExtend<32, 34>,
    time_w: ZeroExtend<32, 34>,
    stamp_w: ZeroExtend<32, 34>,
    /// The pass's `time - timeout` and `time + 2^32 - timeout` (34-bit two's complement).
    time_less: DFF<Bits<34>>,
    time_wrap_less: DFF<Bits<34>>,
    /// `time - stamp`, `time - timeout - stamp`, `time + 2^32 - timeout - stamp`: only their
    /// signs (bit 33) are read (the names match Verilator's `--unused-regexp`).
    wraps_unused: Signal<Local, Bits<34>>,
    short_unused: Signal<Local, Bits<34>>,
    short_wrapped_unused: Signal<Local, Bits<34>>,
    /// `2^34 - timeout` and `2^32 - timeout`.
    less_timeout: Constant<Bits<34>>,
    wrap_less_timeout: Constant<Bits<34>>,
    insert: Signal<Local, Bit>,
    cont: Signal<Local, Bit>,
    code_miss: Constant<Bits<4>>,
}

impl<const C: usize> ConnStage<C> {
    /// A table of `2^C` entries (`C <= 16`: the descriptor keeps 16 bits of the hash) whose
    /// entries expire after `timeout_us` microseconds.
    pub fn new(timeout_us: u32) -> Self {
        assert!(C <= 16, "the connection table has at most 2^16 entries");
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            no_off: Constant::new(0.into()),
            conn_table: StageTable::new(Stage::Conn),
            out: Default::default(),
            w: Default::default(),
            live: Default::default(),
            same: Default::default(),
            hit: Default::default(),
            expired: Default::default(),
            early_time_w: Default::default(),
            time_w: Default::default(),
            stamp_w: Default::default(),
            time_less: Default::default(),
            time_wrap_less: Default::default(),
            wraps_unused: Default::default(),
            short_unused: Default::default(),
            short_wrapped_unused: Default::default(),
            less_timeout: Constant::new(
                (((1u64 << 34) - u64::from(timeout_us)) & ((1 << 34) - 1)).into(),
            ),
            wrap_less_timeout: Constant::new(((1u64 << 32) - u64::from(timeout_us)).into()),
            insert: Default::default(),
            cont: Default::default(),
            code_miss: Constant::new(drop_code(DropReason::ContinuationMiss).into()),
        }
    }
}

impl<const C: usize> Logic for ConnStage<C> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, time_less, time_wrap_less);
        clock!(self, clock, conn_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's time less the timeout, with and without a wrap of `time - stamp`.
        self.early_time_w.narrow.next = self.port.up.early.val().time;
        self.time_less.d.next = self.early_time_w.wide.val() + self.less_timeout.val();
        self.time_wrap_less.d.next = self.early_time_w.wide.val() + self.wrap_less_timeout.val();
        // The entering pass's index (`early`): the hash's low C bits, from stage 0.
        self.conn_table.rd_off.next = self.no_off.val();
        self.conn_table.rd_same.next = false;
        self.conn_table.rd_addr.next = self.port.up.early.val().conn_slot.get_bits::<C>(0);
        self.conn_table.read.next = self.port.up.early.val().is_ctl_read;
        self.conn_table.read_table.next = self.port.up.early.val().rd_table;
        self.conn_table.read_index.next = self.port.up.early.val().rd_index;
        // The pass in the stage: its entry, the new entry, the descriptor.
        self.w.next = self.conn_table.rd_data.val();
        self.out.d.next = self.port.up.pass.val();
        // The entry is written back on every pass (unchanged unless a rule below changes it), so
        // the table's forwarding check waits for none of the decisions below.
        self.conn_table.wr_en.next = true;
        self.live.next = !self.port.up.pass.val().drop.any();
        self.same.next = (self.conn_table.rd_data.val().pool == self.port.up.pass.val().pool)
            & (self.conn_table.rd_data.val().seq == self.port.up.pass.val().seq);
        self.hit.next = self.conn_table.rd_data.val().valid & self.same.val();
        self.time_w.narrow.next = self.port.up.pass.val().time;
        self.stamp_w.narrow.next = self.conn_table.rd_data.val().stamp;
        self.wraps_unused.next = self.time_w.wide.val() - self.stamp_w.wide.val();
        self.short_unused.next = self.time_less.q.val() - self.stamp_w.wide.val();
        self.short_wrapped_unused.next = self.time_wrap_less.q.val() - self.stamp_w.wide.val();
        self.expired.next = !self.short_unused.val().get_bit(33);
        if self.wraps_unused.val().get_bit(33) {
            self.expired.next = !self.short_wrapped_unused.val().get_bit(33);
        }
        // The first packet of a multi-packet task, as the model's `assign` runs it.
        self.insert.next = self.live.val()
            & self.port.up.pass.val().assigned
            & (self.port.up.pass.val().is_task
                | self.port.up.pass.val().is_random
                | self.port.up.pass.val().is_sched2)
            & self.port.up.pass.val().more;
        if self.insert.val() {
            if self.conn_table.rd_data.val().valid & !self.same.val() & !self.expired.val() {
                self.out.d.next.ev_conn_collision = true;
            } else {
                if self.conn_table.rd_data.val().valid & !self.same.val() {
                    self.out.d.next.ev_conn_expired = true;
                }
                self.out.d.next.ev_conn_insert = true;
                self.w.next.valid = true;
                self.w.next.pool = self.port.up.pass.val().pool;
                self.w.next.seq = self.port.up.pass.val().seq;
                self.w.next.node = self.port.up.pass.val().chosen;
                self.w.next.stamp = self.port.up.pass.val().time;
            }
        }
        self.cont.next = self.live.val() & self.port.up.pass.val().is_cont;
        self.out.d.next.cont_node = self.conn_table.rd_data.val().node;
        self.out.d.next.cont_hit = false;
        if self.cont.val() {
            if !self.hit.val() {
                self.out.d.next.drop = self.code_miss.val();
            } else if self.expired.val() {
                self.out.d.next.ev_conn_expired = true;
                self.out.d.next.drop = self.code_miss.val();
                self.w.next.valid = false;
            } else {
                self.out.d.next.cont_hit = true;
                // The last packet frees the entry.
                if !self.port.up.pass.val().more {
                    self.w.next.valid = false;
                }
            }
        }
        self.conn_table.wr_data.next = self.w.val();
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
        // Reads (`readback.rs`): the table keeps the entry and writes nothing.
        self.port.rb.next = self.conn_table.rb.val();
        self.port.rb_hit.next = self.conn_table.rb_hit.val();
    }
}
