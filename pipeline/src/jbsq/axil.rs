//! The JBSQ leaf's AXI4-Lite control port: the register file of `horus_regs::jbsq_map`, the
//! switch's configuration, the staged control pass, the leaf's counters and a node read's
//! result.
//!
//! The protocol is the paper port's ([`crate::axil`]): one write and one read at a time (a write
//! is taken when its address and data are both valid, its response follows in the next cycle; a
//! read's word is chosen from its address in the cycle it is taken and answered from registers
//! in the next), byte strobes honoured, and writes outside the read-write words and the
//! doorbell, and reads beyond the map, answered SLVERR with nothing changed. A control pass is
//! staged in the `CTL_*` words and started by writing 1 to `CTL_GO`, which checks that exactly
//! one of the eight operation flags is set; until the pass has entered the pipeline `CTL_BUSY`
//! reads 1 and a write to the flags' word is refused, so the pass the core takes has exactly
//! one (a pass with none would hold the core's control slot for good).
//!
//! A node read (`CTL_READ_NODE`) sets `RB_BUSY` when it enters and, when it leaves the stages,
//! puts the node's member slot, its pool's last member and the tasks its pool holds into
//! `RB_SLOT`, `RB_LAST` and `RB_DEPTH` and sets `RB_VALID` (cleared when the next read enters).
//!
//! The field offsets below are `jbsq_map`'s; a test writes every field through this port and
//! checks where it lands.

use super::counters::JbsqCounts;
use super::phv::JbsqPhv;
use crate::arith::ZeroExtend;
use crate::axil::{AXIL_ADDR_BITS, FileWrite};
use crate::axil_bus::AxilSub;
use crate::cfg::{SpineEntry, SpineTable, SwitchCfg};
use crate::regmap::{BUILD_HASH_PLACEHOLDER, FILE_WORDS, fields as paper};
use horus_model::sched::jbsq::JbsqSizes;
use horus_regs::jbsq_map::{self, fields};
use rust_hdl::prelude::*;

const BITS: usize = 32 * FILE_WORDS;
const RSHIFT_BITS: usize = BITS.trailing_zeros() as usize;
const WORD_BITS: usize = FILE_WORDS.trailing_zeros() as usize;
/// The counters as one vector (the first at its low bits).
const COUNT_BITS: usize = 32 * jbsq_map::COUNTERS;
const _: () = assert!(jbsq_map::COUNTERS <= 32);
// The operation flags are the low eight bits of their word, the read's bit 3.
const _: () = assert!(fields::CTL_CONFIGURE_POOL.bit() == 768);
const _: () = assert!(fields::CTL_READ_NODE.bit() == 771);
const _: () = assert!(fields::CTL_ADD_PLACE.bit() == 772);
const _: () = assert!(fields::CTL_SET_BOUND.bit() == 773);
const _: () = assert!(fields::CTL_SET_POOL.bit() == 774);
const _: () = assert!(fields::CTL_MOVE_BUFFER.bit() == 775);
const _: () = assert!(fields::CTL_HOLDS.bit() == 779);
const _: () = assert!(fields::RB_DEPTH.bit() == 32 * fields::RB_VALID.word + 16);
const _: () = assert!(paper::BOARD_DROPS.word == jbsq_map::TAIL_BASE + 3);
const _: () = assert!(fields::RB_SLOT.word == fields::RB_VALID.word + 1);

/// The sizes the port answers in `ROLE` / `*_BITS` and `RING_BITS` / `BUFFER_BITS` /
/// `SLOT_BYTES`: log2 of the pools, nodes, connection entries, ring entries, buffer slots, and a
/// slot's bytes.
#[derive(Clone, Copy, Debug)]
pub struct JbsqMapSizes {
    pub pool_bits: usize,
    pub node_bits: usize,
    pub conn_bits: usize,
    pub ring_bits: usize,
    pub buffer_bits: usize,
    pub slot_bytes: usize,
}

impl JbsqMapSizes {
    /// The sizes of the leaf `JbsqSwitch<P, N, R, B, C, SB>` built for `sizes`, which must be
    /// the const parameters' (`2^P` pools, `2^N` nodes, `2^R` ring entries, `2^B` buffer slots,
    /// `2^C` connection entries, a frame store of `2^SB` beats).
    pub fn of<
        const P: usize,
        const N: usize,
        const R: usize,
        const B: usize,
        const C: usize,
        const SB: usize,
    >(
        sizes: JbsqSizes,
    ) -> Self {
        assert_eq!(
            (
                usize::from(sizes.pools),
                usize::from(sizes.nodes),
                sizes.ring_entries as usize,
                sizes.buffer_slots as usize,
                sizes.conn_table as usize,
                usize::from(sizes.slot_bytes),
            ),
            (1 << P, 1 << N, 1 << R, 1 << B, 1 << C, 64 << (SB - B)),
            "the sizes of the const parameters"
        );
        JbsqMapSizes {
            pool_bits: P,
            node_bits: N,
            conn_bits: C,
            ring_bits: R,
            buffer_bits: B,
            slot_bytes: usize::from(sizes.slot_bytes),
        }
    }
}

#[derive(LogicBlock)]
pub struct JbsqAxiLiteRegs {
    pub clk: Signal<In, Clock>,
    /// Synchronous reset of the port: no response pending, no control pass staged, no read
    /// busy. The registers keep their values.
    pub rst: Signal<In, Bit>,
    pub s_axil: AxilSub<AXIL_ADDR_BITS>,
    /* To and from the datapath. */
    pub cfg: Signal<Out, SwitchCfg>,
    pub spines: Signal<Out, SpineTable>,
    pub ctl_valid: Signal<Out, Bit>,
    pub ctl: Signal<Out, JbsqPhv>,
    pub ctl_ready: Signal<In, Bit>,
    pub overflow: Signal<In, Bit>,
    pub in_flight: Signal<In, Bits<8>>,
    /// Every pass leaving the stages (a node read's result).
    pub done_valid: Signal<In, Bit>,
    pub done: Signal<In, JbsqPhv>,
    /// The leaf's counters (`JbsqCounterBlock`).
    pub counts: Signal<In, JbsqCounts>,
    /// The board adapter's dropped frames (`BOARD_DROPS`; 0 on a bare switch).
    pub board_drops: Signal<In, Bits<32>>,

    regs: DFF<Bits<BITS>>,
    pending: DFF<Bit>,
    rb_busy: DFF<Bit>,
    rb_valid: DFF<Bit>,
    rb_slot: DFF<Bits<16>>,
    rb_last: DFF<Bits<16>>,
    rb_depth: DFF<Bits<16>>,
    bvalid: DFF<Bit>,
    bresp: DFF<Bits<2>>,
    rvalid: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,
    /* A read taken last cycle: its word, or what else the address names. */
    rtaken: DFF<Bit>,
    w_regs: DFF<Bits<32>>,
    w_counter: DFF<Bits<32>>,
    w_tail: DFF<Bits<32>>,
    r_file: DFF<Bit>,
    r_counter: DFF<Bit>,
    r_tail: DFF<Bit>,
    r_id: DFF<Bit>,
    r_info: DFF<Bit>,
    r_status: DFF<Bit>,
    r_go: DFF<Bit>,
    r_sizes: DFF<Bit>,
    r_rb_status: DFF<Bit>,
    r_rb_data: DFF<Bit>,

    file_write: FileWrite,
    words: Signal<Local, Bits<FILE_WORDS>>,
    take_w: Signal<Local, Bit>,
    take_r: Signal<Local, Bit>,
    wword: Signal<Local, Bits<AXIL_ADDR_BITS>>,
    rword: Signal<Local, Bits<AXIL_ADDR_BITS>>,
    rshift: Signal<Local, Bits<RSHIFT_BITS>>,
    ops: Signal<Local, Bits<8>>,
    one_op: Signal<Local, Bit>,
    rw_word: Signal<Local, Bit>,
    op_held: Signal<Local, Bit>,
    in_counters: Signal<Local, Bit>,
    /// The counters as one vector, and the read's bit offset in it (0 outside the counters).
    cvec: Signal<Local, Bits<COUNT_BITS>>,
    cshift: Signal<Local, Bits<10>>,
    cidx: Signal<Local, Bits<10>>,
    first_counter10: Constant<Bits<10>>,
    status: Signal<Local, Bits<32>>,
    rb_status: Signal<Local, Bits<32>>,
    in_flight_wide: ZeroExtend<8, 32>,
    rb_slot_wide: ZeroExtend<16, 32>,
    rb_last_wide: ZeroExtend<16, 32>,
    rb_depth_wide: ZeroExtend<16, 32>,
    k_wide: ZeroExtend<8, 16>,
    sp: Signal<Local, SpineEntry>,
    c: Signal<Local, JbsqPhv>,
    /// The leaving pass's fields the port does not read (the name matches Verilator's
    /// `--unused-regexp`).
    done_unused: Signal<Local, JbsqPhv>,

    zero_phv: Constant<JbsqPhv>,
    one_word: Constant<Bits<FILE_WORDS>>,
    no_word: Constant<Bits<FILE_WORDS>>,
    word_mask_r: Constant<Bits<RSHIFT_BITS>>,
    three_r: Constant<Bits<RSHIFT_BITS>>,
    two: Constant<Bits<AXIL_ADDR_BITS>>,
    five10: Constant<Bits<10>>,
    zero10: Constant<Bits<10>>,
    one8: Constant<Bits<8>>,
    zero32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    two32: Constant<Bits<32>>,
    sh8: Constant<Bits<32>>,
    sh16: Constant<Bits<32>>,
    okay: Constant<Bits<2>>,
    slverr: Constant<Bits<2>>,
    /* The map's words (word addresses) and its read-only words' values. */
    w_id: Constant<Bits<AXIL_ADDR_BITS>>,
    w_info: Constant<Bits<AXIL_ADDR_BITS>>,
    w_status: Constant<Bits<AXIL_ADDR_BITS>>,
    w_go: Constant<Bits<AXIL_ADDR_BITS>>,
    w_ops: Constant<Bits<AXIL_ADDR_BITS>>,
    w_first_rw: Constant<Bits<AXIL_ADDR_BITS>>,
    w_last_rw: Constant<Bits<AXIL_ADDR_BITS>>,
    w_sizes: Constant<Bits<AXIL_ADDR_BITS>>,
    w_first_counter: Constant<Bits<AXIL_ADDR_BITS>>,
    w_last_counter: Constant<Bits<AXIL_ADDR_BITS>>,
    w_tail_first: Constant<Bits<AXIL_ADDR_BITS>>,
    w_tail_last: Constant<Bits<AXIL_ADDR_BITS>>,
    w_rb_status: Constant<Bits<AXIL_ADDR_BITS>>,
    w_rb_data: Constant<Bits<AXIL_ADDR_BITS>>,
    id_value: Constant<Bits<32>>,
    info_value: Constant<Bits<32>>,
    sizes_value: Constant<Bits<32>>,
    map_version: Constant<Bits<32>>,
    build_hash: Constant<Bits<32>>,
    conn_timeout: Constant<Bits<32>>,
}

impl JbsqAxiLiteRegs {
    /// The port of a JBSQ leaf of `sizes` whose connection entries expire after
    /// `conn_timeout_us`.
    pub fn new(sizes: JbsqMapSizes, conn_timeout_us: u32) -> Self {
        let w = |v: usize| Constant::new(Bits::<AXIL_ADDR_BITS>::from(v as u64));
        let c32 = |v: u64| Constant::new(Bits::<32>::from(v));
        let info = (sizes.pool_bits as u64) << paper::POOL_BITS.lsb
            | (sizes.node_bits as u64) << paper::NODE_BITS.lsb
            | (sizes.conn_bits as u64) << paper::CONN_BITS.lsb;
        let size_word = (sizes.ring_bits as u64) << fields::RING_BITS.lsb
            | (sizes.buffer_bits as u64) << fields::BUFFER_BITS.lsb
            | (sizes.slot_bytes as u64) << fields::SLOT_BYTES.lsb;
        let rw = jbsq_map::rw_words();
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axil: Default::default(),
            cfg: Default::default(),
            spines: Default::default(),
            ctl_valid: Default::default(),
            ctl: Default::default(),
            ctl_ready: Default::default(),
            overflow: Default::default(),
            in_flight: Default::default(),
            done_valid: Default::default(),
            done: Default::default(),
            counts: Default::default(),
            board_drops: Default::default(),
            regs: Default::default(),
            pending: Default::default(),
            rb_busy: Default::default(),
            rb_valid: Default::default(),
            rb_slot: Default::default(),
            rb_last: Default::default(),
            rb_depth: Default::default(),
            bvalid: Default::default(),
            bresp: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            rtaken: Default::default(),
            w_regs: Default::default(),
            w_counter: Default::default(),
            w_tail: Default::default(),
            r_file: Default::default(),
            r_counter: Default::default(),
            r_tail: Default::default(),
            r_id: Default::default(),
            r_info: Default::default(),
            r_status: Default::default(),
            r_go: Default::default(),
            r_sizes: Default::default(),
            r_rb_status: Default::default(),
            r_rb_data: Default::default(),
            file_write: Default::default(),
            words: Default::default(),
            take_w: Default::default(),
            take_r: Default::default(),
            wword: Default::default(),
            rword: Default::default(),
            rshift: Default::default(),
            ops: Default::default(),
            one_op: Default::default(),
            rw_word: Default::default(),
            op_held: Default::default(),
            in_counters: Default::default(),
            cvec: Default::default(),
            cshift: Default::default(),
            cidx: Default::default(),
            first_counter10: Constant::new((jbsq_map::COUNTER_BASE as u64).into()),
            status: Default::default(),
            rb_status: Default::default(),
            in_flight_wide: Default::default(),
            rb_slot_wide: Default::default(),
            rb_last_wide: Default::default(),
            rb_depth_wide: Default::default(),
            k_wide: Default::default(),
            sp: Default::default(),
            c: Default::default(),
            done_unused: Default::default(),
            zero_phv: Constant::new(JbsqPhv::default()),
            one_word: Constant::new(1.into()),
            no_word: Constant::new(0.into()),
            word_mask_r: Constant::new(((BITS as u64 / 8 - 1) & !3).into()),
            three_r: Constant::new(3.into()),
            two: w(2),
            five10: Constant::new(5.into()),
            zero10: Constant::new(0.into()),
            one8: Constant::new(1.into()),
            zero32: c32(0),
            one32: c32(1),
            two32: c32(2),
            sh8: c32(8),
            sh16: c32(16),
            okay: Constant::new(0.into()),
            slverr: Constant::new(2.into()),
            w_id: w(fields::ID.word),
            w_info: w(paper::ROLE.word),
            w_status: w(paper::CTL_BUSY.word),
            w_go: w(paper::CTL_GO.word),
            w_ops: w(fields::CTL_CONFIGURE_POOL.word),
            w_first_rw: w(*rw.start()),
            w_last_rw: w(*rw.end()),
            w_sizes: w(fields::RING_BITS.word),
            w_first_counter: w(jbsq_map::COUNTER_BASE),
            w_last_counter: w(jbsq_map::COUNTER_BASE + jbsq_map::COUNTERS - 1),
            w_tail_first: w(jbsq_map::TAIL_BASE),
            w_tail_last: w(paper::BOARD_DROPS.word),
            w_rb_status: w(fields::RB_VALID.word),
            w_rb_data: w(fields::RB_SLOT.word),
            id_value: c32(u64::from(jbsq_map::ID_VALUE)),
            info_value: c32(info),
            sizes_value: c32(size_word),
            map_version: c32(u64::from(jbsq_map::MAP_VERSION)),
            build_hash: c32(u64::from(BUILD_HASH_PLACEHOLDER)),
            conn_timeout: c32(u64::from(conn_timeout_us)),
        }
    }
}

impl Logic for JbsqAxiLiteRegs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clk,
            regs,
            pending,
            rb_busy,
            rb_valid,
            rb_slot,
            rb_last,
            rb_depth,
            bvalid,
            bresp,
            rvalid,
            rdata,
            rresp,
            rtaken,
            w_regs,
            w_counter,
            w_tail,
            r_file,
            r_counter,
            r_tail,
            r_id,
            r_info,
            r_status,
            r_go,
            r_sizes,
            r_rb_status,
            r_rb_data
        );

        // ---- Writes.
        self.ops.next = self.regs.q.val().get_bits::<8>(768);
        self.one_op.next =
            self.ops.val().any() & !(self.ops.val() & (self.ops.val() - self.one8.val())).any();
        self.take_w.next =
            self.s_axil.awvalid.val() & self.s_axil.wvalid.val() & !self.bvalid.q.val();
        self.s_axil.awready.next = self.take_w.val();
        self.s_axil.wready.next = self.take_w.val();
        self.wword.next = self.s_axil.awaddr.val() >> self.two.val();
        self.op_held.next = (self.wword.val() == self.w_ops.val()) & self.pending.q.val();
        self.rw_word.next = (self.wword.val() >= self.w_first_rw.val())
            & (self.wword.val() <= self.w_last_rw.val())
            & !self.op_held.val();
        self.words.next = self.no_word.val();
        if self.take_w.val() & self.rw_word.val() {
            self.words.next = self.one_word.val() << self.wword.val().get_bits::<WORD_BITS>(0);
        }
        self.file_write.q.next = self.regs.q.val();
        self.file_write.wdata.next = self.s_axil.wdata.val();
        self.file_write.strb.next = self.s_axil.wstrb.val();
        self.file_write.words.next = self.words.val();
        self.regs.d.next = self.file_write.d.val();
        if self.take_w.val() {
            self.bvalid.d.next = true;
            self.bresp.d.next = self.slverr.val();
            if self.rw_word.val() {
                self.bresp.d.next = self.okay.val();
            }
            if self.wword.val() == self.w_go.val() {
                self.bresp.d.next = self.okay.val();
                if self.s_axil.wstrb.val().get_bit(0) & self.s_axil.wdata.val().get_bit(0) {
                    if self.one_op.val() {
                        self.pending.d.next = true;
                    } else {
                        self.bresp.d.next = self.slverr.val();
                    }
                }
            }
        }
        if self.bvalid.q.val() & self.s_axil.bready.val() {
            self.bvalid.d.next = false;
        }
        self.s_axil.bvalid.next = self.bvalid.q.val();
        self.s_axil.bresp.next = self.bresp.q.val();

        // ---- Reads, in two steps (the paper port's).
        self.take_r.next = self.s_axil.arvalid.val() & !self.rvalid.q.val() & !self.rtaken.q.val();
        self.s_axil.arready.next = self.take_r.val();
        self.rword.next = self.s_axil.araddr.val() >> self.two.val();
        self.rshift.next = (self.s_axil.araddr.val().get_bits::<RSHIFT_BITS>(0)
            & self.word_mask_r.val())
            << self.three_r.val();
        self.in_counters.next = (self.rword.val() >= self.w_first_counter.val())
            & (self.rword.val() <= self.w_last_counter.val());
        self.cidx.next = self.rword.val().get_bits::<10>(0) - self.first_counter10.val();
        self.cshift.next = self.zero10.val();
        if self.in_counters.val() {
            self.cshift.next = self.cidx.val() << self.five10.val();
        }
        self.cvec.next = self.counts.val().into();
        self.rtaken.d.next = self.take_r.val();
        self.w_regs.d.next = self.regs.q.val().get_bits::<32>(self.rshift.val().index());
        self.w_counter.d.next = self.cvec.val().get_bits::<32>(self.cshift.val().index());
        // Words 68..71: the version, the hash, the timeout, the board's drops.
        self.w_tail.d.next = self.map_version.val();
        if self.rword.val().get_bit(0) {
            self.w_tail.d.next = self.build_hash.val();
        }
        if self.rword.val().get_bit(1) {
            self.w_tail.d.next = self.conn_timeout.val();
            if self.rword.val().get_bit(0) {
                self.w_tail.d.next = self.board_drops.val();
            }
        }
        self.r_file.d.next = (self.rword.val() >= self.w_first_rw.val())
            & (self.rword.val() <= self.w_last_rw.val());
        self.r_counter.d.next = self.in_counters.val();
        self.r_tail.d.next = (self.rword.val() >= self.w_tail_first.val())
            & (self.rword.val() <= self.w_tail_last.val());
        self.r_id.d.next = self.rword.val() == self.w_id.val();
        self.r_info.d.next = self.rword.val() == self.w_info.val();
        self.r_status.d.next = self.rword.val() == self.w_status.val();
        self.r_go.d.next = self.rword.val() == self.w_go.val();
        self.r_sizes.d.next = self.rword.val() == self.w_sizes.val();
        self.r_rb_status.d.next = self.rword.val() == self.w_rb_status.val();
        self.r_rb_data.d.next = self.rword.val() == self.w_rb_data.val();

        self.in_flight_wide.narrow.next = self.in_flight.val();
        self.status.next = self.in_flight_wide.wide.val() << self.sh8.val();
        if self.pending.q.val() {
            self.status.next = self.status.val() | self.one32.val();
        }
        if self.overflow.val() {
            self.status.next = self.status.val() | self.two32.val();
        }
        self.rb_status.next = self.zero32.val();
        if self.rb_valid.q.val() {
            self.rb_status.next = self.one32.val();
        }
        if self.rb_busy.q.val() {
            self.rb_status.next = self.rb_status.val() | self.two32.val();
        }
        self.rb_depth_wide.narrow.next = self.rb_depth.q.val();
        self.rb_status.next =
            self.rb_status.val() | (self.rb_depth_wide.wide.val() << self.sh16.val());
        self.rb_slot_wide.narrow.next = self.rb_slot.q.val();
        self.rb_last_wide.narrow.next = self.rb_last.q.val();
        if self.rtaken.q.val() {
            self.rvalid.d.next = true;
            self.rresp.d.next = self.slverr.val();
            self.rdata.d.next = self.zero32.val();
            if self.r_file.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.w_regs.q.val();
            }
            if self.r_counter.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.w_counter.q.val();
            }
            if self.r_tail.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.w_tail.q.val();
            }
            if self.r_id.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.id_value.val();
            }
            if self.r_info.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.info_value.val();
            }
            if self.r_status.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.status.val();
            }
            if self.r_go.q.val() {
                self.rresp.d.next = self.okay.val();
                if self.pending.q.val() {
                    self.rdata.d.next = self.one32.val();
                }
            }
            if self.r_sizes.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.sizes_value.val();
            }
            if self.r_rb_status.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = self.rb_status.val();
            }
            if self.r_rb_data.q.val() {
                self.rresp.d.next = self.okay.val();
                self.rdata.d.next = (self.rb_last_wide.wide.val() << self.sh16.val())
                    | self.rb_slot_wide.wide.val();
            }
        }
        if self.rvalid.q.val() & self.s_axil.rready.val() {
            self.rvalid.d.next = false;
        }
        self.s_axil.rvalid.next = self.rvalid.q.val();
        self.s_axil.rdata.next = self.rdata.q.val();
        self.s_axil.rresp.next = self.rresp.q.val();

        // ---- The control pass and a node read's result.
        self.done_unused.next = self.done.val();
        if self.done_valid.val() & self.done.val().is_ctl_read {
            self.rb_busy.d.next = false;
            self.rb_valid.d.next = true;
            self.rb_slot.d.next = self.done.val().slot;
            self.rb_last.d.next = self.done.val().last;
            self.rb_depth.d.next = self.done.val().discarded;
        }
        if self.ctl_ready.val() {
            self.pending.d.next = false;
            if self.regs.q.val().get_bit(771) {
                self.rb_busy.d.next = true;
                self.rb_valid.d.next = false;
            }
        }
        if self.rst.val() {
            self.pending.d.next = false;
            self.bvalid.d.next = false;
            self.rvalid.d.next = false;
            self.rtaken.d.next = false;
            self.rb_busy.d.next = false;
        }
        self.ctl_valid.next = self.pending.q.val();

        // ---- The fields (offsets: jbsq_map::FIELDS, and regmap::FIELDS for words 4..23).
        self.cfg.next.id = self.regs.q.val().get_bits::<16>(128);
        self.cfg.next.udp = self.regs.q.val().get_bits::<16>(144);
        self.cfg.next.mac = self.regs.q.val().get_bits::<48>(160);
        self.cfg.next.pass_through_port = self.regs.q.val().get_bits::<8>(208);
        self.cfg.next.control_port = self.regs.q.val().get_bits::<8>(216);
        self.cfg.next.ip = self.regs.q.val().get_bits::<32>(224);
        self.sp.next.valid = self.regs.q.val().get_bit(256);
        self.sp.next.egress = self.regs.q.val().get_bits::<8>(264);
        self.sp.next.id = self.regs.q.val().get_bits::<16>(272);
        self.sp.next.mac = self.regs.q.val().get_bits::<48>(288);
        self.sp.next.udp = self.regs.q.val().get_bits::<16>(336);
        self.sp.next.ip = self.regs.q.val().get_bits::<32>(352);
        self.spines.next.s0 = self.sp.val();
        self.sp.next.valid = self.regs.q.val().get_bit(384);
        self.sp.next.egress = self.regs.q.val().get_bits::<8>(392);
        self.sp.next.id = self.regs.q.val().get_bits::<16>(400);
        self.sp.next.mac = self.regs.q.val().get_bits::<48>(416);
        self.sp.next.udp = self.regs.q.val().get_bits::<16>(464);
        self.sp.next.ip = self.regs.q.val().get_bits::<32>(480);
        self.spines.next.s1 = self.sp.val();
        self.sp.next.valid = self.regs.q.val().get_bit(512);
        self.sp.next.egress = self.regs.q.val().get_bits::<8>(520);
        self.sp.next.id = self.regs.q.val().get_bits::<16>(528);
        self.sp.next.mac = self.regs.q.val().get_bits::<48>(544);
        self.sp.next.udp = self.regs.q.val().get_bits::<16>(592);
        self.sp.next.ip = self.regs.q.val().get_bits::<32>(608);
        self.spines.next.s2 = self.sp.val();
        self.sp.next.valid = self.regs.q.val().get_bit(640);
        self.sp.next.egress = self.regs.q.val().get_bits::<8>(648);
        self.sp.next.id = self.regs.q.val().get_bits::<16>(656);
        self.sp.next.mac = self.regs.q.val().get_bits::<48>(672);
        self.sp.next.udp = self.regs.q.val().get_bits::<16>(720);
        self.sp.next.ip = self.regs.q.val().get_bits::<32>(736);
        self.spines.next.s3 = self.sp.val();
        self.c.next = self.zero_phv.val();
        self.c.next.is_ctl_pool = self.regs.q.val().get_bit(768);
        self.c.next.is_ctl_add = self.regs.q.val().get_bit(769);
        self.c.next.is_ctl_remove = self.regs.q.val().get_bit(770);
        self.c.next.is_ctl_read = self.regs.q.val().get_bit(771);
        self.c.next.is_ctl_place = self.regs.q.val().get_bit(772);
        self.c.next.is_ctl_bound = self.regs.q.val().get_bit(773);
        self.c.next.is_ctl_pool_params = self.regs.q.val().get_bit(774);
        self.c.next.is_ctl_move = self.regs.q.val().get_bit(775);
        self.c.next.holds = self.regs.q.val().get_bit(779);
        self.c.next.level = self.regs.q.val().get_bits::<3>(776);
        self.c.next.drop_full = self.regs.q.val().get_bit(780);
        self.c.next.adv_places = self.regs.q.val().get_bit(781);
        self.c.next.adv_queue = self.regs.q.val().get_bit(782);
        self.c.next.spine_ok = self.regs.q.val().get_bit(783);
        self.c.next.generation = self.regs.q.val().get_bits::<8>(784);
        // CTL_K: the pool's bound of a configure pass or of the pool's new bound, the node's own
        // of an addition or of its new bound.
        self.k_wide.narrow.next = self.regs.q.val().get_bits::<8>(792);
        if self.regs.q.val().get_bit(768) | self.regs.q.val().get_bit(774) {
            self.c.next.pool_k = self.k_wide.wide.val();
        }
        if self.regs.q.val().get_bit(769) | self.regs.q.val().get_bit(773) {
            self.c.next.k = self.k_wide.wide.val();
        }
        self.c.next.pool = self.regs.q.val().get_bits::<16>(800);
        self.c.next.src = self.regs.q.val().get_bits::<16>(816);
        self.c.next.base = self.regs.q.val().get_bits::<16>(832);
        self.c.next.cap = self.regs.q.val().get_bits::<16>(848);
        self.c.next.tasks = self.regs.q.val().get_bits::<16>(864);
        self.c.next.hold_us = self.regs.q.val().get_bits::<16>(880);
        self.c.next.ring_base = self.regs.q.val().get_bits::<16>(896);
        self.c.next.ring_slots = self.regs.q.val().get_bits::<16>(912);
        self.c.next.queue_base = self.regs.q.val().get_bits::<16>(928);
        self.c.next.queue_slots = self.regs.q.val().get_bits::<16>(944);
        self.c.next.room = self.regs.q.val().get_bits::<16>(960);
        self.c.next.repair_gap = self.regs.q.val().get_bits::<16>(976);
        self.c.next.link_at = self.regs.q.val().get_bits::<16>(992);
        self.c.next.unlink_at = self.regs.q.val().get_bits::<16>(1008);
        self.c.next.report_delta = self.regs.q.val().get_bits::<32>(1024);
        self.c.next.spine_id = self.regs.q.val().get_bits::<16>(1056);
        self.c.next.spine_node = self.regs.q.val().get_bits::<16>(1072);
        self.c.next.unit = self.regs.q.val().get_bits::<33>(1088);
        self.c.next.mac = self.regs.q.val().get_bits::<48>(1152);
        self.c.next.egress = self.regs.q.val().get_bits::<8>(1200);
        self.c.next.ip = self.regs.q.val().get_bits::<32>(1216);
        self.c.next.udp = self.regs.q.val().get_bits::<16>(1248);
        self.c.next.out_dst = self.regs.q.val().get_bits::<16>(1264);
        self.c.next.slot = self.regs.q.val().get_bits::<16>(1280);
        self.c.next.last = self.regs.q.val().get_bits::<16>(1296);
        self.ctl.next = self.c.val();
    }
}
