//! `taskBuf[queue_base + at]`: the held tasks' descriptors (`docs/algorithm.md`, decision 24;
//! `docs/jbsq-pipeline.md`, "The task buffer"). A held task's pass writes its slot; a releasing
//! pass reads it and hands the task on, towards the replying worker (`dst` the worker, `qlen` 0:
//! it answers TASK_DONE). One touch of the table a pass; a slot held by one pass and released by
//! the next sees the write (forwarding).
//!
//! The table is indexed by a sum, the region's base and the offset `queueCtl` chose, and checks
//! its forwarding on the two terms ([`RmwTable::sum_index`]). A released slot is not cleared: the
//! held queue's head and depth say which slots hold tasks.

use super::JbsqPort;
use super::entries::HeldTaskEntry;
use super::phv::JbsqPhv;
use crate::table::RmwTable;
use rust_hdl::prelude::*;

/// `taskBuf` for `2^B` slots.
#[derive(LogicBlock)]
pub struct TaskBufStage<const B: usize> {
    pub clock: Signal<In, Clock>,
    pub port: JbsqPort,
    /// `early` but for its slot (the name matches Verilator's `--unused-regexp`).
    early_unused: Signal<Local, JbsqPhv>,
    pub(super) buf_table: RmwTable<HeldTaskEntry, B>,
    out: DFF<JbsqPhv>,
    w: Signal<Local, HeldTaskEntry>,
    active: Signal<Local, Bit>,
    /// The slot the pass in the stage read (where a hold writes).
    at: DFF<Bits<B>>,
    zero16: Constant<Bits<16>>,
    zero: Constant<Bits<B>>,
}

impl<const B: usize> Default for TaskBufStage<B> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            port: Default::default(),
            early_unused: Default::default(),
            buf_table: RmwTable::sum_index(),
            out: Default::default(),
            w: Default::default(),
            active: Default::default(),
            at: Default::default(),
            zero16: Constant::new(0.into()),
            zero: Constant::new(0.into()),
        }
    }
}

impl<const B: usize> Logic for TaskBufStage<B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out, at);
        clock!(self, clock, buf_table);
        self.early_unused.next = self.port.up.early.val();
        // The entering pass's slot: base + offset < 2^B by configuration, taken in B bits.
        self.buf_table.rd_addr.next = self.port.up.early.val().queue_base.get_bits::<B>(0);
        self.buf_table.rd_off.next = self.port.up.early.val().at.get_bits::<B>(0);
        self.buf_table.rd_indexed.next = false;
        self.buf_table.rd_index.next = self.zero.val();
        self.buf_table.rd_same.next = false;
        self.at.d.next = self.port.up.early.val().queue_base.get_bits::<B>(0)
            + self.port.up.early.val().at.get_bits::<B>(0);
        self.buf_table.wr_addr.next = self.at.q.val();
        // The pass in the stage.
        self.active.next = self.port.up.pass.val().live & !self.port.up.pass.val().drop;
        self.w.next.pkt_type = self.port.up.pass.val().pkt_type;
        self.w.next.more = self.port.up.pass.val().more;
        self.w.next.pool = self.port.up.pass.val().pool;
        self.w.next.src = self.port.up.pass.val().src;
        self.w.next.seq = self.port.up.pass.val().seq;
        self.w.next.len = self.port.up.pass.val().len;
        self.w.next.time = self.port.up.pass.val().time;
        self.buf_table.wr_en.next = self.active.val() & self.port.up.pass.val().held;
        self.buf_table.wr_data.next = self.w.val();
        self.out.d.next = self.port.up.pass.val();
        if self.active.val() & self.port.up.pass.val().release {
            self.out.d.next.rel_pkt_type = self.buf_table.rd_data.val().pkt_type;
            self.out.d.next.rel_more = self.buf_table.rd_data.val().more;
            self.out.d.next.rel_pool = self.buf_table.rd_data.val().pool;
            self.out.d.next.rel_src = self.buf_table.rd_data.val().src;
            self.out.d.next.rel_dst = self.port.up.pass.val().src;
            self.out.d.next.rel_qlen = self.zero16.val();
            self.out.d.next.rel_seq = self.buf_table.rd_data.val().seq;
            self.out.d.next.rel_len = self.buf_table.rd_data.val().len;
            self.out.d.next.rel_time = self.buf_table.rd_data.val().time;
        }
        self.port.down.pass.next = self.out.q.val();
        self.port.down.early.next = self.out.d.val();
    }
}
