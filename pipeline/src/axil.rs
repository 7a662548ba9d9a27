//! The AXI4-Lite control port: the register file of `regmap.rs`, the switch's configuration and
//! the staged control pass.
//!
//! One write and one read at a time (a write is taken when the address and the data are both
//! valid; the response follows in the next cycle; a read's data two cycles after its address:
//! the word is selected in the first, from the address as it arrives, and the response in the
//! second, from registers). Writes outside the read-write registers and
//! the doorbell, and reads beyond the map, answer SLVERR and change nothing. Byte strobes are
//! honoured.
//!
//! A control pass is staged in the `CTL_*` registers and started by writing 1 to `CTL_GO`; it then
//! waits for the pipeline (`ctl_valid` until `ctl_ready`) and `CTL_BUSY` reads 1 until it has
//! entered. Software waits for `CTL_BUSY` to fall before it stages the next one. Meanwhile a
//! write to the word of the operation flags (`CTL_CONFIGURE_POOL` ... `CTL_READ_ENTRY`) is
//! refused with SLVERR and changes nothing: `CTL_GO` checked that exactly one flag is set, and the
//! pass the pipeline takes keeps exactly that one, as the scheduler core requires (a pass with
//! none would hold its control slot for good; the port's proof in `docs/verification.md`
//! covers this).
//!
//! The field offsets below are the ones in `regmap::FIELDS`; a test writes every field through
//! this port and checks where it lands.

use crate::arith::ZeroExtend;
use crate::axil_bus::AxilSub;
use crate::cfg::{SpineEntry, SpineTable, SwitchCfg};
use crate::phv::Phv;
use crate::readback::{RB_BITS, RB_WORDS};
use crate::regmap::{BUILD_HASH_PLACEHOLDER, FILE_WORDS, ID_VALUE, MAP_VERSION, fields};
use horus_model::config::Role;
use rust_hdl::prelude::*;

/// Bits of the AXI4-Lite address.
pub const AXIL_ADDR_BITS: usize = 12;
const BITS: usize = 32 * FILE_WORDS;
/// The counters' read mux is a binary tree over 16 of them.
const _: () = assert!(crate::regmap::COUNTERS == 16);
/// Bits of an offset in the register file.
const RSHIFT_BITS: usize = BITS.trailing_zeros() as usize;
/// Bits of a word's index in the register file.
const WORD_BITS: usize = FILE_WORDS.trailing_zeros() as usize;
const _: () = assert!(FILE_WORDS.is_power_of_two());
/// The tail words (`regmap::TAIL_BASE`) are chosen by the address's two low bits.
const _: () = assert!(crate::regmap::TAIL_BASE % 4 == 0);
const _: () = assert!(fields::BOARD_DROPS.word == crate::regmap::TAIL_BASE + 3);

/// The register file's next value: each byte of word `w` takes `wdata`'s byte when bit `w` of
/// the one-hot `words` and the byte's strobe are set, and keeps `q`'s otherwise. Written byte by
/// byte so that synthesis gives each byte of the file's flip-flops a clock enable and its data
/// straight from `wdata`, with no logic per bit, where the same write as a 2,048-bit mask
/// shifted to the word takes a LUT per bit (`docs/pipeline.md` has the measured port sizes of
/// both).
/// Hand-written Verilog (a generate loop); `update` is the same in Rust, and a test runs both.
#[derive(LogicBlock, Default)]
pub struct FileWrite {
    pub q: Signal<In, Bits<BITS>>,
    pub wdata: Signal<In, Bits<32>>,
    pub strb: Signal<In, Bits<4>>,
    pub words: Signal<In, Bits<FILE_WORDS>>,
    pub d: Signal<Out, Bits<BITS>>,
}

impl Logic for FileWrite {
    fn update(&mut self) {
        let mut d = self.q.val();
        for w in 0..FILE_WORDS {
            if !self.words.val().get_bit(w) {
                continue;
            }
            for b in 0..4 {
                if self.strb.val().get_bit(b) {
                    d.set_bits::<8>(32 * w + 8 * b, self.wdata.val().get_bits::<8>(8 * b));
                }
            }
        }
        self.d.next = d;
    }

    fn connect(&mut self) {
        self.d.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "genvar w, b;
generate
    for (w = 0; w < {FILE_WORDS}; w = w + 1) begin : word
        for (b = 0; b < 4; b = b + 1) begin : byte_lane
            assign d[32 * w + 8 * b +: 8] = (words[w] && strb[b]) ? wdata[8 * b +: 8] : q[32 * w + 8 * b +: 8];
        end
    end
endgenerate"
        ))
    }
}

/// A group of a block's constants, visited as a namespace: in the Verilog, constant `x` of the
/// group a block holds as field `g` is the `localparam g$x`. (A rust-hdl interface, the
/// namespace it derives, holds signals only.)
macro_rules! constant_group {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        struct $name {
            $($(#[$fmeta])* $field: Constant<$ty>,)*
        }

        impl Logic for $name {
            fn update(&mut self) {}
            fn connect(&mut self) {}
        }

        impl Block for $name {
            fn connect_all(&mut self) {}
            fn update_all(&mut self) {}
            fn has_changed(&self) -> bool {
                false
            }
            fn accept(&self, name: &str, probe: &mut dyn Probe) {
                probe.visit_start_namespace(name, self);
                $(self.$field.accept(stringify!($field), probe);)*
                probe.visit_end_namespace(name, self);
            }
        }
    };
}

constant_group! {
    /// The register map as the port decodes it: the word numbers of its regions and of the
    /// words it answers itself (`w_*`, word addresses), and the read-only words' values.
    MapConstants {
        w_id: Bits<AXIL_ADDR_BITS>,
        w_info: Bits<AXIL_ADDR_BITS>,
        w_status: Bits<AXIL_ADDR_BITS>,
        w_go: Bits<AXIL_ADDR_BITS>,
        /// The operation flags' word.
        w_ops: Bits<AXIL_ADDR_BITS>,
        /// The read-write words.
        w_first_rw: Bits<AXIL_ADDR_BITS>,
        w_last_rw: Bits<AXIL_ADDR_BITS>,
        w_first_counter: Bits<AXIL_ADDR_BITS>,
        w_last_counter: Bits<AXIL_ADDR_BITS>,
        w_rb_status: Bits<AXIL_ADDR_BITS>,
        w_rb_first: Bits<AXIL_ADDR_BITS>,
        w_rb_last: Bits<AXIL_ADDR_BITS>,
        w_tail_first: Bits<AXIL_ADDR_BITS>,
        w_tail_last: Bits<AXIL_ADDR_BITS>,
        id_value: Bits<32>,
        /// `ROLE` and the `*_BITS` fields.
        info_value: Bits<32>,
        map_version: Bits<32>,
        build_hash: Bits<32>,
        conn_timeout: Bits<32>,
    }
}

impl MapConstants {
    /// The map of a switch of `role` with `2^P` pools, `2^N` nodes and `2^C` connections whose
    /// entries expire after `conn_timeout_us`.
    fn new(
        role: Role,
        pool_bits: usize,
        node_bits: usize,
        conn_bits: usize,
        conn_timeout_us: u32,
    ) -> Self {
        let c = |v: usize| Constant::new(Bits::<AXIL_ADDR_BITS>::from(v as u64));
        let c32 = |v: u64| Constant::new(Bits::<32>::from(v));
        let info = u64::from(role == Role::Spine)
            | (pool_bits as u64) << 8
            | (node_bits as u64) << 16
            | (conn_bits as u64) << 24;
        let rw = crate::regmap::rw_words();
        Self {
            w_id: c(fields::ID.word),
            w_info: c(fields::ROLE.word),
            w_status: c(fields::CTL_BUSY.word),
            w_go: c(fields::CTL_GO.word),
            w_ops: c(fields::CTL_CONFIGURE_POOL.word),
            w_first_rw: c(*rw.start()),
            w_last_rw: c(*rw.end()),
            w_first_counter: c(crate::regmap::COUNTER_BASE),
            w_last_counter: c(crate::regmap::COUNTER_BASE + crate::regmap::COUNTERS - 1),
            w_rb_status: c(fields::RB_VALID.word),
            w_rb_first: c(fields::RB_DATA0.word),
            w_rb_last: c(crate::regmap::rb_data(RB_WORDS - 1).word),
            w_tail_first: c(fields::MAP_VERSION.word),
            w_tail_last: c(fields::BOARD_DROPS.word),
            id_value: c32(u64::from(ID_VALUE)),
            info_value: c32(info),
            map_version: c32(u64::from(MAP_VERSION)),
            build_hash: c32(u64::from(BUILD_HASH_PLACEHOLDER)),
            conn_timeout: c32(u64::from(conn_timeout_us)),
        }
    }
}

#[derive(LogicBlock)]
pub struct AxiLiteRegs {
    pub clk: Signal<In, Clock>,
    /// Synchronous reset of the port: no response pending, no control pass staged. The
    /// registers keep their values.
    pub rst: Signal<In, Bit>,
    /// The AXI4-Lite port: 12-bit byte addresses, 32-bit data, byte strobes.
    pub s_axil: AxilSub<AXIL_ADDR_BITS>,
    /* To and from the datapath. */
    pub cfg: Signal<Out, SwitchCfg>,
    pub spines: Signal<Out, SpineTable>,
    pub ctl_valid: Signal<Out, Bit>,
    pub ctl: Signal<Out, Phv>,
    pub ctl_ready: Signal<In, Bit>,
    pub overflow: Signal<In, Bit>,
    pub in_flight: Signal<In, Bits<8>>,
    /// Every pass leaving the stages, for the counters.
    pub done_valid: Signal<In, Bit>,
    pub done: Signal<In, Phv>,
    /// The entry the last read kept, and whether a table took the read (`readback.rs`).
    pub readback: Signal<In, Bits<RB_BITS>>,
    pub readback_valid: Signal<In, Bit>,
    /// The board adapter's dropped frames (`BOARD_DROPS`; 0 on a bare switch).
    pub board_drops: Signal<In, Bits<32>>,

    regs: DFF<Bits<BITS>>,
    pending: DFF<Bit>,
    /// A read's pass is in the pipeline.
    rb_busy: DFF<Bit>,
    bvalid: DFF<Bit>,
    bresp: DFF<Bits<2>>,
    rvalid: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,
    /* A read taken last cycle: its word in the register file, the counters and the read-back
    register, and which of them (or what else) the address names. */
    rtaken: DFF<Bit>,
    w_regs: DFF<Bits<32>>,
    w_counter: DFF<Bits<32>>,
    w_rb: DFF<Bits<32>>,
    r_counter: DFF<Bit>,
    r_rb: DFF<Bit>,
    r_id: DFF<Bit>,
    r_info: DFF<Bit>,
    r_status: DFF<Bit>,
    r_go: DFF<Bit>,
    r_rb_status: DFF<Bit>,
    r_err: DFF<Bit>,
    /// A tail word (`MAP_VERSION`, `BUILD_HASH`, `CONN_TIMEOUT_US`, `BOARD_DROPS`) and its value.
    r_tail: DFF<Bit>,
    w_tail: DFF<Bits<32>>,
    /// The read-back inputs a clock late: they only change while `RB_BUSY` reads 1.
    rb_r: DFF<Bits<RB_BITS>>,
    rb_valid_r: DFF<Bit>,
    c0: DFF<Bits<32>>,
    c1: DFF<Bits<32>>,
    c2: DFF<Bits<32>>,
    c3: DFF<Bits<32>>,
    c4: DFF<Bits<32>>,
    c5: DFF<Bits<32>>,
    c6: DFF<Bits<32>>,
    c7: DFF<Bits<32>>,
    c8: DFF<Bits<32>>,
    c9: DFF<Bits<32>>,
    c10: DFF<Bits<32>>,
    c11: DFF<Bits<32>>,
    c12: DFF<Bits<32>>,
    c13: DFF<Bits<32>>,
    c14: DFF<Bits<32>>,
    c15: DFF<Bits<32>>,
    code1: Constant<Bits<4>>,
    code2: Constant<Bits<4>>,
    code3: Constant<Bits<4>>,
    code4: Constant<Bits<4>>,
    code5: Constant<Bits<4>>,
    code6: Constant<Bits<4>>,
    code7: Constant<Bits<4>>,
    code8: Constant<Bits<4>>,
    code9: Constant<Bits<4>>,
    code10: Constant<Bits<4>>,
    code11: Constant<Bits<4>>,
    code12: Constant<Bits<4>>,
    code13: Constant<Bits<4>>,
    second: Signal<Local, Bit>,
    /// The leaving pass's fields the counters do not read (the name matches Verilator's
    /// `--unused-regexp`).
    done_unused: Signal<Local, Phv>,
    first_ctl: Signal<Local, Bit>,
    in_flight_wide: ZeroExtend<8, 32>,
    /// The register file's next value: a write's bytes, or the flip-flops' own.
    file_write: FileWrite,
    /// The word written, one-hot (none when no write to a read-write word is taken).
    words: Signal<Local, Bits<FILE_WORDS>>,
    one_word: Constant<Bits<FILE_WORDS>>,
    no_word: Constant<Bits<FILE_WORDS>>,

    take_w: Signal<Local, Bit>,
    take_r: Signal<Local, Bit>,
    in_counters: Signal<Local, Bit>,
    in_rb: Signal<Local, Bit>,
    in_tail: Signal<Local, Bit>,
    /// The counter read (`rword - COUNTER_BASE`, mod 16), and the counters muxed by its bits.
    cidx: Signal<Local, Bits<4>>,
    first_counter4: Constant<Bits<4>>,
    m01: Signal<Local, Bits<32>>,
    m23: Signal<Local, Bits<32>>,
    m45: Signal<Local, Bits<32>>,
    m67: Signal<Local, Bits<32>>,
    m89: Signal<Local, Bits<32>>,
    m1011: Signal<Local, Bits<32>>,
    m1213: Signal<Local, Bits<32>>,
    m1415: Signal<Local, Bits<32>>,
    m0_3: Signal<Local, Bits<32>>,
    m4_7: Signal<Local, Bits<32>>,
    m8_11: Signal<Local, Bits<32>>,
    m12_15: Signal<Local, Bits<32>>,
    m0_7: Signal<Local, Bits<32>>,
    m8_15: Signal<Local, Bits<32>>,
    counter: Signal<Local, Bits<32>>,
    wword: Signal<Local, Bits<AXIL_ADDR_BITS>>,
    rword: Signal<Local, Bits<AXIL_ADDR_BITS>>,
    /// The read word's first bit in the register file (a word beyond it is not read from it).
    rshift: Signal<Local, Bits<RSHIFT_BITS>>,
    status: Signal<Local, Bits<32>>,
    rb_status: Signal<Local, Bits<32>>,
    /// The read-back register shifted to the word read; only its low 32 bits are used.
    rb_shifted_unused: Signal<Local, Bits<RB_BITS>>,
    /// The staged operation flags, and whether exactly one is set.
    ops: Signal<Local, Bits<5>>,
    one_op: Signal<Local, Bit>,
    rw_word: Signal<Local, Bit>,
    /// A write to the operation flags' word while a staged pass waits: refused.
    op_held: Signal<Local, Bit>,
    sp: Signal<Local, SpineEntry>,
    c: Signal<Local, Phv>,

    zero_phv: Constant<Phv>,
    word_mask_r: Constant<Bits<RSHIFT_BITS>>,
    three_r: Constant<Bits<RSHIFT_BITS>>,
    two: Constant<Bits<AXIL_ADDR_BITS>>,
    zero32: Constant<Bits<32>>,
    one5: Constant<Bits<5>>,
    five: Constant<Bits<AXIL_ADDR_BITS>>,
    one32: Constant<Bits<32>>,
    two32: Constant<Bits<32>>,
    sh8: Constant<Bits<32>>,
    okay: Constant<Bits<2>>,
    slverr: Constant<Bits<2>>,
    map: MapConstants,
}

impl AxiLiteRegs {
    /// The port of a switch of `role` with `2^P` pools, `2^N` nodes and `2^C` connections whose
    /// entries expire after `conn_timeout_us` (for the read-only `ROLE`, `*_BITS` and identity
    /// fields).
    pub fn new(
        role: Role,
        pool_bits: usize,
        node_bits: usize,
        conn_bits: usize,
        conn_timeout_us: u32,
    ) -> Self {
        let c = |v: u64| Constant::new(Bits::<AXIL_ADDR_BITS>::from(v));
        let c32 = |v: u64| Constant::new(Bits::<32>::from(v));
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
            readback: Default::default(),
            readback_valid: Default::default(),
            board_drops: Default::default(),
            regs: Default::default(),
            pending: Default::default(),
            rb_busy: Default::default(),
            bvalid: Default::default(),
            bresp: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            rtaken: Default::default(),
            w_regs: Default::default(),
            w_counter: Default::default(),
            w_rb: Default::default(),
            r_counter: Default::default(),
            r_rb: Default::default(),
            r_id: Default::default(),
            r_info: Default::default(),
            r_status: Default::default(),
            r_go: Default::default(),
            r_rb_status: Default::default(),
            r_err: Default::default(),
            r_tail: Default::default(),
            w_tail: Default::default(),
            rb_r: Default::default(),
            rb_valid_r: Default::default(),
            c0: Default::default(),
            c1: Default::default(),
            c2: Default::default(),
            c3: Default::default(),
            c4: Default::default(),
            c5: Default::default(),
            c6: Default::default(),
            c7: Default::default(),
            c8: Default::default(),
            c9: Default::default(),
            c10: Default::default(),
            c11: Default::default(),
            c12: Default::default(),
            c13: Default::default(),
            c14: Default::default(),
            c15: Default::default(),
            code1: Constant::new(1.into()),
            code2: Constant::new(2.into()),
            code3: Constant::new(3.into()),
            code4: Constant::new(4.into()),
            code5: Constant::new(5.into()),
            code6: Constant::new(6.into()),
            code7: Constant::new(7.into()),
            code8: Constant::new(8.into()),
            code9: Constant::new(9.into()),
            code10: Constant::new(10.into()),
            code11: Constant::new(11.into()),
            code12: Constant::new(12.into()),
            code13: Constant::new(13.into()),
            second: Default::default(),
            done_unused: Default::default(),
            first_ctl: Default::default(),
            in_flight_wide: Default::default(),
            file_write: Default::default(),
            words: Default::default(),
            one_word: Constant::new(1.into()),
            no_word: Constant::new(0.into()),
            take_w: Default::default(),
            take_r: Default::default(),
            in_counters: Default::default(),
            in_rb: Default::default(),
            in_tail: Default::default(),
            cidx: Default::default(),
            first_counter4: Constant::new(((crate::regmap::COUNTER_BASE % 16) as u64).into()),
            m01: Default::default(),
            m23: Default::default(),
            m45: Default::default(),
            m67: Default::default(),
            m89: Default::default(),
            m1011: Default::default(),
            m1213: Default::default(),
            m1415: Default::default(),
            m0_3: Default::default(),
            m4_7: Default::default(),
            m8_11: Default::default(),
            m12_15: Default::default(),
            m0_7: Default::default(),
            m8_15: Default::default(),
            counter: Default::default(),
            wword: Default::default(),
            rword: Default::default(),
            rshift: Default::default(),
            status: Default::default(),
            rb_status: Default::default(),
            rb_shifted_unused: Default::default(),
            ops: Default::default(),
            one_op: Default::default(),
            rw_word: Default::default(),
            op_held: Default::default(),
            sp: Default::default(),
            c: Default::default(),
            zero_phv: Constant::new(Phv::default()),
            word_mask_r: Constant::new(((BITS as u64 / 8 - 1) & !3).into()),
            three_r: Constant::new(3.into()),
            two: c(2),
            zero32: c32(0),
            one5: Constant::new(1.into()),
            five: c(5),
            one32: c32(1),
            two32: c32(2),
            sh8: c32(8),
            okay: Constant::new(0.into()),
            slverr: Constant::new(2.into()),
            map: MapConstants::new(role, pool_bits, node_bits, conn_bits, conn_timeout_us),
        }
    }
}

impl Logic for AxiLiteRegs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clk,
            regs,
            pending,
            rb_busy,
            bvalid,
            bresp,
            rvalid,
            rdata,
            rresp,
            rtaken,
            w_regs,
            w_counter,
            w_rb,
            r_counter,
            r_rb,
            r_id,
            r_info,
            r_status,
            r_go,
            r_rb_status,
            r_err,
            r_tail,
            w_tail,
            rb_r,
            rb_valid_r,
            c0,
            c1,
            c2,
            c3,
            c4,
            c5,
            c6,
            c7,
            c8,
            c9,
            c10,
            c11,
            c12,
            c13,
            c14,
            c15
        );

        // ---- Writes.
        self.ops.next = self.regs.q.val().get_bits::<5>(768);
        self.one_op.next =
            self.ops.val().any() & !(self.ops.val() & (self.ops.val() - self.one5.val())).any();
        self.take_w.next =
            self.s_axil.awvalid.val() & self.s_axil.wvalid.val() & !self.bvalid.q.val();
        self.s_axil.awready.next =
            self.s_axil.awvalid.val() & self.s_axil.wvalid.val() & !self.bvalid.q.val();
        self.s_axil.wready.next =
            self.s_axil.awvalid.val() & self.s_axil.wvalid.val() & !self.bvalid.q.val();
        self.wword.next = self.s_axil.awaddr.val() >> self.two.val();
        self.op_held.next = (self.wword.val() == self.map.w_ops.val()) & self.pending.q.val();
        self.rw_word.next = (self.wword.val() >= self.map.w_first_rw.val())
            & (self.wword.val() <= self.map.w_last_rw.val())
            & !self.op_held.val();
        // Each byte of the file keeps its value or takes the written one: a clock enable per
        // byte of flip-flops, no logic per bit.
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
            if self.wword.val() == self.map.w_go.val() {
                self.bresp.d.next = self.okay.val();
                if self.s_axil.wstrb.val().get_bit(0) & self.s_axil.wdata.val().get_bit(0) {
                    if self.one_op.val() {
                        self.pending.d.next = true;
                    } else {
                        // No operation staged, or several: nothing starts.
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

        // ---- Reads, in two steps. The cycle a read is taken, its word (from the register
        // file, a counter or the read-back register) and the kind of address are registered;
        // the next cycle, the response is chosen from those registers.
        self.take_r.next = self.s_axil.arvalid.val() & !self.rvalid.q.val() & !self.rtaken.q.val();
        self.s_axil.arready.next =
            self.s_axil.arvalid.val() & !self.rvalid.q.val() & !self.rtaken.q.val();
        self.rword.next = self.s_axil.araddr.val() >> self.two.val();
        self.rshift.next = (self.s_axil.araddr.val().get_bits::<RSHIFT_BITS>(0)
            & self.word_mask_r.val())
            << self.three_r.val();
        self.rb_r.d.next = self.readback.val();
        self.rb_valid_r.d.next = self.readback_valid.val();
        self.rb_shifted_unused.next = self.rb_r.q.val()
            >> ((self.rword.val() - self.map.w_rb_first.val()) << self.five.val());
        // The counters, a binary tree of muxes on the index bits (a chain of compares would be
        // as deep as it is long).
        self.cidx.next = self.rword.val().get_bits::<4>(0) - self.first_counter4.val();
        self.m01.next = self.c0.q.val();
        if self.cidx.val().get_bit(0) {
            self.m01.next = self.c1.q.val();
        }
        self.m23.next = self.c2.q.val();
        if self.cidx.val().get_bit(0) {
            self.m23.next = self.c3.q.val();
        }
        self.m45.next = self.c4.q.val();
        if self.cidx.val().get_bit(0) {
            self.m45.next = self.c5.q.val();
        }
        self.m67.next = self.c6.q.val();
        if self.cidx.val().get_bit(0) {
            self.m67.next = self.c7.q.val();
        }
        self.m89.next = self.c8.q.val();
        if self.cidx.val().get_bit(0) {
            self.m89.next = self.c9.q.val();
        }
        self.m1011.next = self.c10.q.val();
        if self.cidx.val().get_bit(0) {
            self.m1011.next = self.c11.q.val();
        }
        self.m1213.next = self.c12.q.val();
        if self.cidx.val().get_bit(0) {
            self.m1213.next = self.c13.q.val();
        }
        self.m1415.next = self.c14.q.val();
        if self.cidx.val().get_bit(0) {
            self.m1415.next = self.c15.q.val();
        }
        self.m0_3.next = self.m01.val();
        if self.cidx.val().get_bit(1) {
            self.m0_3.next = self.m23.val();
        }
        self.m4_7.next = self.m45.val();
        if self.cidx.val().get_bit(1) {
            self.m4_7.next = self.m67.val();
        }
        self.m8_11.next = self.m89.val();
        if self.cidx.val().get_bit(1) {
            self.m8_11.next = self.m1011.val();
        }
        self.m12_15.next = self.m1213.val();
        if self.cidx.val().get_bit(1) {
            self.m12_15.next = self.m1415.val();
        }
        self.m0_7.next = self.m0_3.val();
        if self.cidx.val().get_bit(2) {
            self.m0_7.next = self.m4_7.val();
        }
        self.m8_15.next = self.m8_11.val();
        if self.cidx.val().get_bit(2) {
            self.m8_15.next = self.m12_15.val();
        }
        self.counter.next = self.m0_7.val();
        if self.cidx.val().get_bit(3) {
            self.counter.next = self.m8_15.val();
        }
        self.in_counters.next = (self.rword.val() >= self.map.w_first_counter.val())
            & (self.rword.val() <= self.map.w_last_counter.val());
        self.in_rb.next = (self.rword.val() >= self.map.w_rb_first.val())
            & (self.rword.val() <= self.map.w_rb_last.val());
        self.rtaken.d.next = self.take_r.val();
        // The word read (a part-select at the read's bit offset: a 64-to-1 word mux).
        self.w_regs.d.next = self.regs.q.val().get_bits::<32>(self.rshift.val().index());
        self.w_counter.d.next = self.counter.val();
        self.w_rb.d.next = self.rb_shifted_unused.val().get_bits::<32>(0);
        self.r_counter.d.next = self.in_counters.val();
        self.r_rb.d.next = self.in_rb.val();
        // The later kinds take precedence, as the checks' order says.
        self.r_id.d.next =
            (self.rword.val() == self.map.w_id.val()) & !self.in_counters.val() & !self.in_rb.val();
        self.r_info.d.next = (self.rword.val() == self.map.w_info.val())
            & !self.in_counters.val()
            & !self.in_rb.val();
        self.r_status.d.next = (self.rword.val() == self.map.w_status.val())
            & !self.in_counters.val()
            & !self.in_rb.val();
        self.r_go.d.next =
            (self.rword.val() == self.map.w_go.val()) & !self.in_counters.val() & !self.in_rb.val();
        self.r_rb_status.d.next =
            (self.rword.val() == self.map.w_rb_status.val()) & !self.in_rb.val();
        self.in_tail.next = (self.rword.val() >= self.map.w_tail_first.val())
            & (self.rword.val() <= self.map.w_tail_last.val());
        self.r_tail.d.next = self.in_tail.val();
        // Words 68..71: the version, the hash, the timeout, the board's drops, by the address's
        // low bits.
        self.w_tail.d.next = self.map.map_version.val();
        if self.rword.val().get_bit(0) {
            self.w_tail.d.next = self.map.build_hash.val();
        }
        if self.rword.val().get_bit(1) {
            self.w_tail.d.next = self.map.conn_timeout.val();
            if self.rword.val().get_bit(0) {
                self.w_tail.d.next = self.board_drops.val();
            }
        }
        self.r_err.d.next = (self.rword.val() > self.map.w_last_rw.val())
            & !self.in_counters.val()
            & !self.in_rb.val()
            & !self.in_tail.val()
            & (self.rword.val() != self.map.w_rb_status.val());

        self.in_flight_wide.narrow.next = self.in_flight.val();
        self.rb_status.next = self.zero32.val();
        if self.rb_valid_r.q.val() {
            self.rb_status.next = self.one32.val();
        }
        if self.rb_busy.q.val() {
            self.rb_status.next = self.rb_status.val() | self.two32.val();
        }
        self.status.next = self.in_flight_wide.wide.val() << self.sh8.val();
        if self.pending.q.val() {
            self.status.next = self.status.val() | self.one32.val();
        }
        if self.overflow.val() {
            self.status.next = self.status.val() | self.two32.val();
        }
        if self.rtaken.q.val() {
            self.rvalid.d.next = true;
            self.rresp.d.next = self.okay.val();
            self.rdata.d.next = self.w_regs.q.val();
            if self.r_counter.q.val() {
                self.rdata.d.next = self.w_counter.q.val();
            }
            if self.r_rb.q.val() {
                self.rdata.d.next = self.w_rb.q.val();
            }
            if self.r_id.q.val() {
                self.rdata.d.next = self.map.id_value.val();
            }
            if self.r_info.q.val() {
                self.rdata.d.next = self.map.info_value.val();
            }
            if self.r_status.q.val() {
                self.rdata.d.next = self.status.val();
            }
            if self.r_go.q.val() {
                self.rdata.d.next = self.zero32.val();
                if self.pending.q.val() {
                    self.rdata.d.next = self.one32.val();
                }
            }
            if self.r_rb_status.q.val() {
                self.rdata.d.next = self.rb_status.val();
            }
            if self.r_tail.q.val() {
                self.rdata.d.next = self.w_tail.q.val();
            }
            if self.r_err.q.val() {
                self.rdata.d.next = self.zero32.val();
                self.rresp.d.next = self.slverr.val();
            }
        }
        if self.rvalid.q.val() & self.s_axil.rready.val() {
            self.rvalid.d.next = false;
        }
        self.s_axil.rvalid.next = self.rvalid.q.val();
        self.s_axil.rdata.next = self.rdata.q.val();
        self.s_axil.rresp.next = self.rresp.q.val();

        // ---- Counters (the model's `Counters`): every pass leaving the stages.
        self.second.next = self.done.val().is_sched2
            | self.done.val().is_add_commit
            | self.done.val().is_remove_finish
            | self.done.val().is_ctl_remove2;
        self.first_ctl.next = self.done.val().is_ctl_pool
            | self.done.val().is_ctl_params
            | self.done.val().is_ctl_add
            | self.done.val().is_ctl_remove;
        self.done_unused.next = self.done.val();
        // A read is not counted: it changes nothing the model counts.
        if self.done_valid.val() & !self.done.val().is_ctl_read {
            self.c0.d.next = self.c0.q.val() + self.one32.val();
            if self.second.val() {
                self.c1.d.next = self.c1.q.val() + self.one32.val();
            }
            if self.first_ctl.val() {
                self.c2.d.next = self.c2.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code1.val())
                | (self.done.val().sub_drop == self.code1.val())
            {
                self.c3.d.next = self.c3.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code2.val())
                | (self.done.val().sub_drop == self.code2.val())
            {
                self.c4.d.next = self.c4.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code3.val())
                | (self.done.val().sub_drop == self.code3.val())
            {
                self.c5.d.next = self.c5.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code4.val())
                | (self.done.val().sub_drop == self.code4.val())
            {
                self.c6.d.next = self.c6.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code5.val())
                | (self.done.val().sub_drop == self.code5.val())
            {
                self.c7.d.next = self.c7.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code6.val())
                | (self.done.val().sub_drop == self.code6.val())
            {
                self.c8.d.next = self.c8.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code7.val())
                | (self.done.val().sub_drop == self.code7.val())
            {
                self.c9.d.next = self.c9.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code8.val())
                | (self.done.val().sub_drop == self.code8.val())
            {
                self.c10.d.next = self.c10.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code9.val())
                | (self.done.val().sub_drop == self.code9.val())
            {
                self.c11.d.next = self.c11.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code10.val())
                | (self.done.val().sub_drop == self.code10.val())
            {
                self.c12.d.next = self.c12.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code11.val())
                | (self.done.val().sub_drop == self.code11.val())
            {
                self.c13.d.next = self.c13.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code12.val())
                | (self.done.val().sub_drop == self.code12.val())
            {
                self.c14.d.next = self.c14.q.val() + self.one32.val();
            }
            if (self.done.val().drop == self.code13.val())
                | (self.done.val().sub_drop == self.code13.val())
            {
                self.c15.d.next = self.c15.q.val() + self.one32.val();
            }
        }

        // ---- The control pass.
        if self.done_valid.val() & self.done.val().is_ctl_read {
            self.rb_busy.d.next = false;
        }
        if self.ctl_ready.val() {
            self.pending.d.next = false;
            if self.regs.q.val().get_bit(772) {
                self.rb_busy.d.next = true;
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

        // ---- The fields (offsets: regmap::FIELDS).
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
        self.c.next.is_ctl_params = self.regs.q.val().get_bit(769);
        self.c.next.is_ctl_add = self.regs.q.val().get_bit(770);
        self.c.next.is_ctl_remove = self.regs.q.val().get_bit(771);
        self.c.next.is_ctl_read = self.regs.q.val().get_bit(772);
        self.c.next.rd_table = self.regs.q.val().get_bits::<4>(776);
        self.c.next.rd_index = self.regs.q.val().get_bits::<16>(1248);
        self.c.next.repair_gap = self.regs.q.val().get_bits::<16>(1264);
        self.c.next.pool = self.regs.q.val().get_bits::<16>(784);
        self.c.next.src = self.regs.q.val().get_bits::<16>(800);
        self.c.next.base = self.regs.q.val().get_bits::<16>(816);
        self.c.next.cap = self.regs.q.val().get_bits::<16>(832);
        self.c.next.link_at = self.regs.q.val().get_bits::<16>(848);
        self.c.next.unlink_at = self.regs.q.val().get_bits::<16>(864);
        self.c.next.spine_ok = self.regs.q.val().get_bit(880);
        self.c.next.report_delta = self.regs.q.val().get_bits::<32>(896);
        self.c.next.spine_id = self.regs.q.val().get_bits::<16>(928);
        self.c.next.spine_node = self.regs.q.val().get_bits::<16>(944);
        self.c.next.factor = self.regs.q.val().get_bits::<32>(960);
        self.c.next.unit = self.regs.q.val().get_bits::<64>(992);
        self.c.next.mac = self.regs.q.val().get_bits::<48>(1056);
        self.c.next.egress = self.regs.q.val().get_bits::<8>(1104);
        self.c.next.ip = self.regs.q.val().get_bits::<32>(1120);
        self.c.next.port = self.regs.q.val().get_bits::<16>(1152);
        self.c.next.out_dst = self.regs.q.val().get_bits::<16>(1168);
        self.c.next.mv_node = self.regs.q.val().get_bits::<16>(1184);
        self.c.next.mv_f = self.regs.q.val().get_bits::<32>(1216);
        self.ctl.next = self.c.val();
    }
}
