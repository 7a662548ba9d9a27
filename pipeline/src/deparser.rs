//! Deparser: the first beat of a frame leaving the switch.
//!
//! Two blocks, both byte-exact with the model (`horus_model::wire`), both one frame per clock with
//! a fixed latency of two cycles:
//!
//! * [`Rewriter`] = `wire::rewrite(frame, dst, header)`: a forwarded task frame gets a new
//!   destination and a new Horus header; the checksums follow.
//! * [`SignalBuilder`] = `wire::signal_frame(original, src, dst, header)`: a mirrored frame
//!   becomes a 60-byte leaf-to-spine message.
//!
//! Frames travel as AXI-Stream 512-bit beats, byte `i` of the frame in `tdata[8i+7:8i]` of the
//! first beat (the first byte in the lowest lane). Only the first beat changes: every byte a block
//! writes lies below byte 64, and later beats pass unchanged. The input frame has been accepted by
//! the parser (`wire::parse_frame` succeeds), as the model requires.
//!
//! # Bytes written
//!
//! `keep` = the input byte, `new` = from the block's inputs, `sum` = computed here.
//!
//! ```text
//!  bytes   field                     Rewriter                 SignalBuilder
//!  0..6    Ethernet destination      new (dst_mac)            new (dst_mac)
//!  6..12   Ethernet source           keep                     new (src_mac)
//!  12..14  ethertype                 keep                     0x0800
//!  14      version, IHL              keep                     0x45
//!  15      DSCP, ECN                 keep                     keep
//!  16..18  IPv4 total length         keep                     39
//!  18..20  IPv4 identification       keep                     keep
//!  20..22  flags, fragment offset    keep                     DF kept, the rest 0
//!  22      TTL                       keep                     keep
//!  23      protocol                  keep                     17
//!  24..26  IPv4 header checksum      sum (recomputed)         sum
//!  26..30  IPv4 source               keep                     new (src_ip)
//!  30..34  IPv4 destination          new (dst_ip)             new (dst_ip)
//!  34..36  UDP source port           keep                     new (src_port)
//!  36..38  UDP destination port      new (dst_port)           new (dst_port)
//!  38..40  UDP length                keep                     19
//!  40..42  UDP checksum              sum (RFC 1624), 0 if 0   0
//!  42..53  Horus header              new (header fields)      new (header fields)
//!  53..64  payload / padding         keep                     0 (the frame ends at 60)
//! ```
//!
//! # Timing
//!
//! ```text
//!  cycle        j                      j+1                          j+2
//!  inputs       in_valid, first_beat,
//!               fields
//!  registers                           stage 1 (set at the edge     stage 2 = out_valid, out_beat
//!                                      ending cycle j): the beat    (set at the edge ending j+1):
//!                                      with the new fields, the     the checksums folded,
//!                                      checksum sums                complemented and written
//! ```
//!
//! A frame presented in cycle `j` is on `out_beat`, with `out_valid`, in cycle `j + 2`
//! ([`REWRITER_LATENCY`] = [`SIGNAL_BUILDER_LATENCY`] = 2), for one cycle; a frame can follow in
//! every cycle. The longest paths are a ten-word adder tree (stage 1) and a 21-bit add followed
//! by two end-around-carry adds and a complement (stage 2; the UDP checksum tests its special
//! values beside the second add, [`UdpChecksum`]).
//!
//! # Byte order
//!
//! Address, port and header inputs are numbers (`dst_ip` 10.0.0.1 is `0x0a00_0001`, the first
//! wire byte most significant). Inside the beat every multi-byte field sits in lane order, its
//! first byte in the lowest lane, i.e. byte-swapped with respect to its numeric value;
//! [`EndpointWire`] and [`HeaderWire`] do that swap. The checksums need no swap at all: the one's
//! complement sum commutes with swapping the bytes of every word (RFC 1071, section 2(B)), so the
//! sums are taken over lane-order words and written back in lane order. 0x0000 and 0xFFFF, the two
//! values with special rules, are their own swaps.
//!
//! # Hand-written Verilog
//!
//! rust-hdl 0.46 has no concatenation, and its only widening operation (`bit_cast`) is emitted
//! as `(x & {M}'h...)`, which `verilator -Wall` rejects (WIDTH); worse, a complement inside it,
//! `(~x & {M}'h...)`, is evaluated at the wide width and sets the high bits. The leaf blocks that
//! concatenate or widen ([`EndpointWire`], [`HeaderWire`], [`BeatJoin`], [`ChecksumSplice`],
//! [`Sum10`], [`Fold`], [`UdpChecksum`]) are therefore a few lines of Verilog each (`Verilog::Custom`, as
//! rust-hdl's own `DFF`), with an `update` that does the same in Rust for rust-hdl's simulator.
//! The tests check both against the model: the Rust side in rust-hdl's simulator, the Verilog in
//! Verilator. The two top blocks are ordinary `#[hdl_gen]` code; their Verilog lints clean as
//! `generate_verilog` writes it and after `horus_hdl_tools::verilog::normalize`.

use rust_hdl::prelude::*;

/// Cycles from a frame on the [`Rewriter`]'s inputs to its result on `out_beat`.
pub const REWRITER_LATENCY: usize = 2;
/// Cycles from a frame on the [`SignalBuilder`]'s inputs to its result on `out_beat`.
pub const SIGNAL_BUILDER_LATENCY: usize = 2;

/// Bit offset in the beat of frame byte `byte`.
const fn at(byte: usize) -> usize {
    8 * byte
}

// The hdl_gen code below spells bit offsets as literals (rust-hdl's HDL translation takes
// literals, not named constants, in `get_bits`): frame byte n is at bit 8n.
//   byte  6   12   14   16   18   20   22   24   26   28   30   32   34   36   38   40   42
//   bit  48   96  112  128  144  160  176  192  208  224  240  256  272  288  304  320  336
//   byte 44   46   48   50   52   53
//   bit 352  368  384  400  416  424

fn u(x: impl Into<LiteralType>) -> u64 {
    x.into()
}

fn swap16(x: u64) -> u64 {
    u64::from((x as u16).swap_bytes())
}

/// Numeric MAC, IPv4 address and UDP port to lane order: byte `k` of the field (counting from
/// the most significant) goes to lane `k`.
#[derive(LogicBlock, Default)]
pub struct EndpointWire {
    pub mac: Signal<In, Bits<48>>,
    pub ip: Signal<In, Bits<32>>,
    pub port: Signal<In, Bits<16>>,
    pub mac_wire: Signal<Out, Bits<48>>,
    pub ip_wire: Signal<Out, Bits<32>>,
    pub port_wire: Signal<Out, Bits<16>>,
}

impl Logic for EndpointWire {
    fn update(&mut self) {
        self.mac_wire.next = bits(u(self.mac.val()).swap_bytes() >> 16);
        self.ip_wire.next = bits(u(self.ip.val()).swap_bytes() >> 32);
        self.port_wire.next = bits(swap16(u(self.port.val())));
    }

    fn connect(&mut self) {
        self.mac_wire.connect();
        self.ip_wire.connect();
        self.port_wire.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    mac_wire = {mac[7:0], mac[15:8], mac[23:16], mac[31:24], mac[39:32], mac[47:40]};
    ip_wire = {ip[7:0], ip[15:8], ip[23:16], ip[31:24]};
    port_wire = {port[7:0], port[15:8]};
end"
            .into(),
        )
    }
}

/// Horus header fields (numbers) to the 11 header bytes in lane order: byte 0 is the type code
/// with `MORE_PACKETS` in bit 7, then five big-endian words (`wire::HorusHeader::to_bytes`).
#[derive(LogicBlock, Default)]
pub struct HeaderWire {
    pub pkt_type: Signal<In, Bits<7>>,
    pub more_packets: Signal<In, Bit>,
    pub pool_id: Signal<In, Bits<16>>,
    pub src_id: Signal<In, Bits<16>>,
    pub dst_id: Signal<In, Bits<16>>,
    pub qlen: Signal<In, Bits<16>>,
    pub seq_num: Signal<In, Bits<16>>,
    /// Frame bytes 42..53, byte 42 in bits 7..0.
    pub lane_bytes: Signal<Out, Bits<88>>,
}

impl Logic for HeaderWire {
    fn update(&mut self) {
        let mut b = Bits::<88>::default();
        b.set_bits::<8>(
            0,
            bits(u(self.pkt_type.val()) | u(self.more_packets.val()) << 7),
        );
        let words = [
            self.pool_id.val(),
            self.src_id.val(),
            self.dst_id.val(),
            self.qlen.val(),
            self.seq_num.val(),
        ];
        for (i, w) in words.into_iter().enumerate() {
            b.set_bits::<16>(8 + 16 * i, bits(swap16(u(w))));
        }
        self.lane_bytes.next = b;
    }

    fn connect(&mut self) {
        self.lane_bytes.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    lane_bytes = {seq_num[7:0], seq_num[15:8], qlen[7:0], qlen[15:8], dst_id[7:0], dst_id[15:8],
                  src_id[7:0], src_id[15:8], pool_id[7:0], pool_id[15:8], more_packets, pkt_type};
end"
            .into(),
        )
    }
}

/// The first 64 bytes of a frame from its fields, each in lane order: the concatenation.
#[derive(LogicBlock, Default)]
pub struct BeatJoin {
    /// Bytes 0..6.
    pub eth_dst: Signal<In, Bits<48>>,
    /// Bytes 6..12.
    pub eth_src: Signal<In, Bits<48>>,
    /// Bytes 12..14.
    pub ethertype: Signal<In, Bits<16>>,
    /// Bytes 14..16: version and IHL, then DSCP and ECN.
    pub ip_ver_tos: Signal<In, Bits<16>>,
    /// Bytes 16..18.
    pub ip_total_len: Signal<In, Bits<16>>,
    /// Bytes 18..20.
    pub ip_id: Signal<In, Bits<16>>,
    /// Bytes 20..22: flags and fragment offset.
    pub ip_frag: Signal<In, Bits<16>>,
    /// Bytes 22..24: TTL, then protocol.
    pub ip_ttl_proto: Signal<In, Bits<16>>,
    /// Bytes 24..26.
    pub ip_checksum: Signal<In, Bits<16>>,
    /// Bytes 26..30.
    pub ip_src: Signal<In, Bits<32>>,
    /// Bytes 30..34.
    pub ip_dst: Signal<In, Bits<32>>,
    /// Bytes 34..36.
    pub udp_src: Signal<In, Bits<16>>,
    /// Bytes 36..38.
    pub udp_dst: Signal<In, Bits<16>>,
    /// Bytes 38..40.
    pub udp_len: Signal<In, Bits<16>>,
    /// Bytes 40..42.
    pub udp_checksum: Signal<In, Bits<16>>,
    /// Bytes 42..53: the Horus header.
    pub horus: Signal<In, Bits<88>>,
    /// Bytes 53..64: payload, padding, or whatever follows a short frame in the beat.
    pub rest: Signal<In, Bits<88>>,
    pub beat: Signal<Out, Bits<512>>,
}

impl Logic for BeatJoin {
    fn update(&mut self) {
        let mut b = Bits::<512>::default();
        b.set_bits::<48>(at(0), self.eth_dst.val());
        b.set_bits::<48>(at(6), self.eth_src.val());
        b.set_bits::<16>(at(12), self.ethertype.val());
        b.set_bits::<16>(at(14), self.ip_ver_tos.val());
        b.set_bits::<16>(at(16), self.ip_total_len.val());
        b.set_bits::<16>(at(18), self.ip_id.val());
        b.set_bits::<16>(at(20), self.ip_frag.val());
        b.set_bits::<16>(at(22), self.ip_ttl_proto.val());
        b.set_bits::<16>(at(24), self.ip_checksum.val());
        b.set_bits::<32>(at(26), self.ip_src.val());
        b.set_bits::<32>(at(30), self.ip_dst.val());
        b.set_bits::<16>(at(34), self.udp_src.val());
        b.set_bits::<16>(at(36), self.udp_dst.val());
        b.set_bits::<16>(at(38), self.udp_len.val());
        b.set_bits::<16>(at(40), self.udp_checksum.val());
        b.set_bits::<88>(at(42), self.horus.val());
        b.set_bits::<88>(at(53), self.rest.val());
        self.beat.next = b;
    }

    fn connect(&mut self) {
        self.beat.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
always @(*) begin
    beat = {rest, horus, udp_checksum, udp_len, udp_dst, udp_src, ip_dst, ip_src, ip_checksum,
            ip_ttl_proto, ip_frag, ip_id, ip_total_len, ip_ver_tos, ethertype, eth_src, eth_dst};
end"
            .into(),
        )
    }
}

/// A beat with its IPv4 checksum (bytes 24..26) and UDP checksum (bytes 40..42) replaced.
#[derive(LogicBlock, Default)]
pub struct ChecksumSplice {
    pub beat: Signal<In, Bits<512>>,
    pub ip_checksum: Signal<In, Bits<16>>,
    pub udp_checksum: Signal<In, Bits<16>>,
    pub spliced: Signal<Out, Bits<512>>,
}

impl Logic for ChecksumSplice {
    fn update(&mut self) {
        let mut b = self.beat.val();
        b.set_bits::<16>(at(24), self.ip_checksum.val());
        b.set_bits::<16>(at(40), self.udp_checksum.val());
        self.spliced.next = b;
    }

    fn connect(&mut self) {
        self.spliced.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
// The replaced fields: named so that Verilator's UNUSED lint knows they are dropped on purpose.
wire [31:0] unused_replaced = {beat[335:320], beat[207:192]};
always @(*) begin
    spliced = {beat[511:336], udp_checksum, beat[319:208], ip_checksum, beat[191:0]};
end"
            .into(),
        )
    }
}

/// Sum of ten 16-bit words as a balanced tree of adders; 10 * 0xFFFF fits in 20 bits, so no
/// carry is lost.
#[derive(LogicBlock, Default)]
pub struct Sum10 {
    pub w0: Signal<In, Bits<16>>,
    pub w1: Signal<In, Bits<16>>,
    pub w2: Signal<In, Bits<16>>,
    pub w3: Signal<In, Bits<16>>,
    pub w4: Signal<In, Bits<16>>,
    pub w5: Signal<In, Bits<16>>,
    pub w6: Signal<In, Bits<16>>,
    pub w7: Signal<In, Bits<16>>,
    pub w8: Signal<In, Bits<16>>,
    pub w9: Signal<In, Bits<16>>,
    pub sum: Signal<Out, Bits<20>>,
}

impl Logic for Sum10 {
    fn update(&mut self) {
        let words = [
            self.w0.val(),
            self.w1.val(),
            self.w2.val(),
            self.w3.val(),
            self.w4.val(),
            self.w5.val(),
            self.w6.val(),
            self.w7.val(),
            self.w8.val(),
            self.w9.val(),
        ];
        self.sum.next = bits(words.into_iter().map(u).sum());
    }

    fn connect(&mut self) {
        self.sum.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
// Each partial sum kept as a net: Yosys would otherwise merge the adders into one
// carry-save tree (`alumacc`), deeper in LUTs than four carry-chain adders.
(* keep *) wire [16:0] p01;
(* keep *) wire [16:0] p23;
(* keep *) wire [16:0] p45;
(* keep *) wire [16:0] p67;
(* keep *) wire [16:0] p89;
(* keep *) wire [17:0] p0_3;
(* keep *) wire [17:0] p4_7;
(* keep *) wire [18:0] p0_7;
assign p01 = {1'b0, w0} + {1'b0, w1};
assign p23 = {1'b0, w2} + {1'b0, w3};
assign p45 = {1'b0, w4} + {1'b0, w5};
assign p67 = {1'b0, w6} + {1'b0, w7};
assign p89 = {1'b0, w8} + {1'b0, w9};
assign p0_3 = {1'b0, p01} + {1'b0, p23};
assign p4_7 = {1'b0, p45} + {1'b0, p67};
assign p0_7 = {1'b0, p0_3} + {1'b0, p4_7};
always @(*) begin
    sum = {1'b0, p0_7} + {3'b0, p89};
end"
            .into(),
        )
    }
}

/// `fold(a + b)`: the end-around-carry fold of the model (`wire::fold`) to 16 bits. Two folds
/// suffice for the 21-bit total: the first leaves at most 0xFFFF + 0x1F, the second at most
/// 0xFFFF (and adds no carry out: when the first fold carries, its low half is at most 0x1E).
#[derive(LogicBlock, Default)]
pub struct Fold {
    pub a: Signal<In, Bits<20>>,
    pub b: Signal<In, Bits<20>>,
    pub folded: Signal<Out, Bits<16>>,
}

impl Logic for Fold {
    fn update(&mut self) {
        self.folded.next = bits(fold(u(self.a.val()) + u(self.b.val())));
    }

    fn connect(&mut self) {
        self.folded.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "{FOLD_ONCE}\
    folded = once[15:0] + {{15'b0, once[16]}};
end"
        ))
    }
}

/// The Verilog of the first fold of `a + b` (21 bits into 17) that [`Fold`] and [`UdpChecksum`]
/// start with: declarations and the head of their `always` block.
const FOLD_ONCE: &str = "\
reg [20:0] total;
reg [16:0] once;
always @(*) begin
    total = {1'b0, a} + {1'b0, b};
    once = {1'b0, total[15:0]} + {12'b0, total[20:16]};
";

/// A sum of up to 21 bits folded twice into 16 (one's complement), as [`Fold`]'s Verilog does.
fn fold(total: u64) -> u64 {
    let once = (total & 0xffff) + (total >> 16);
    (once & 0xffff) + (once >> 16)
}

/// The UDP checksum field after the rewrite: `field` if it is 0 ("no checksum"), else
/// `~fold(a + b)`, sent as 0xFFFF where that is 0 (RFC 768). The same function as [`Fold`] and
/// those choices, without the second fold's adder in front of the all-ones test: when the first
/// fold carries, its low half is at most 0x1E, so the result is `~(low + 1)`; otherwise the low
/// half is the folded sum. Hand-written; `update` is the same in Rust.
#[derive(LogicBlock, Default)]
pub struct UdpChecksum {
    pub a: Signal<In, Bits<20>>,
    pub b: Signal<In, Bits<20>>,
    pub field: Signal<In, Bits<16>>,
    pub checksum: Signal<Out, Bits<16>>,
}

impl Logic for UdpChecksum {
    fn update(&mut self) {
        let folded = fold(u(self.a.val()) + u(self.b.val()));
        self.checksum.next = bits(if u(self.field.val()) == 0 {
            0
        } else if folded == 0xffff {
            0xffff
        } else {
            !folded & 0xffff
        });
    }

    fn connect(&mut self) {
        self.checksum.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "{FOLD_ONCE}\
    if (field == 16'd0) checksum = 16'd0;
    else if (once[16]) checksum = ~(once[15:0] + 16'd1);
    else if (&once[15:0]) checksum = 16'hffff;
    else checksum = ~once[15:0];
end"
        ))
    }
}

/// A forwarded frame's first beat: `wire::rewrite(frame, dst, header)`.
///
/// Present `first_beat` (of a frame the parser accepted), the new destination and the new header
/// with `in_valid`; [`REWRITER_LATENCY`] cycles later `out_beat` holds the rewritten beat, with
/// `out_valid`. Accepts a frame every clock.
///
/// Checksums (one's complement sums of lane-order words, see the module doc):
/// * IPv4: recomputed over the new header, `~fold(sum of its nine words but the checksum)`.
/// * UDP, if nonzero: RFC 1624 eqn. 3, `HC' = ~fold(~HC + sum(~m) + sum(m'))`, over the words
///   that change: pseudo-header destination (2 words), destination port (1) and the Horus header
///   padded with a zero byte to six words, as the model does. A result of 0 is sent as 0xFFFF
///   (RFC 768).
/// * UDP, if 0 ("no checksum"): stays 0.
#[derive(LogicBlock)]
pub struct Rewriter {
    pub clock: Signal<In, Clock>,
    pub in_valid: Signal<In, Bit>,
    pub first_beat: Signal<In, Bits<512>>,
    pub dst_mac: Signal<In, Bits<48>>,
    pub dst_ip: Signal<In, Bits<32>>,
    pub dst_port: Signal<In, Bits<16>>,
    pub pkt_type: Signal<In, Bits<7>>,
    pub more_packets: Signal<In, Bit>,
    pub pool_id: Signal<In, Bits<16>>,
    pub src_id: Signal<In, Bits<16>>,
    pub dst_id: Signal<In, Bits<16>>,
    pub qlen: Signal<In, Bits<16>>,
    pub seq_num: Signal<In, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_beat: Signal<Out, Bits<512>>,
    dst: EndpointWire,
    hdr: HeaderWire,
    /// The beat with the new fields in place, the old checksums still in it.
    placed: BeatJoin,
    ip_sum: Sum10,
    /// `~HC + sum(~m)`.
    udp_old: Sum10,
    /// `sum(m')`.
    udp_new: Sum10,
    zero16: Constant<Bits<16>>,
    zero20: Constant<Bits<20>>,
    /// Keeps the low lane of the last Horus word (byte 52); the high lane is the model's zero pad.
    low_lane: Constant<Bits<16>>,
    s1_valid: DFF<Bit>,
    s1_beat: DFF<Bits<512>>,
    s1_ip_sum: DFF<Bits<20>>,
    s1_udp_old: DFF<Bits<20>>,
    s1_udp_new: DFF<Bits<20>>,
    ip_fold: Fold,
    udp_checksum: UdpChecksum,
    splice: ChecksumSplice,
    s2_valid: DFF<Bit>,
    s2_beat: DFF<Bits<512>>,
    /// The old destination MAC, the one input field nothing reads; named `unused_*` so that
    /// Verilator's UNUSED lint knows it is dropped on purpose.
    unused_old_dst_mac: Signal<Local, Bits<48>>,
}

impl Default for Rewriter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            in_valid: Default::default(),
            first_beat: Default::default(),
            dst_mac: Default::default(),
            dst_ip: Default::default(),
            dst_port: Default::default(),
            pkt_type: Default::default(),
            more_packets: Default::default(),
            pool_id: Default::default(),
            src_id: Default::default(),
            dst_id: Default::default(),
            qlen: Default::default(),
            seq_num: Default::default(),
            out_valid: Default::default(),
            out_beat: Default::default(),
            dst: Default::default(),
            hdr: Default::default(),
            placed: Default::default(),
            ip_sum: Default::default(),
            udp_old: Default::default(),
            udp_new: Default::default(),
            zero16: Constant::new(bits(0)),
            zero20: Constant::new(bits(0)),
            low_lane: Constant::new(bits(0x00ff)),
            s1_valid: Default::default(),
            s1_beat: Default::default(),
            s1_ip_sum: Default::default(),
            s1_udp_old: Default::default(),
            s1_udp_new: Default::default(),
            ip_fold: Default::default(),
            udp_checksum: Default::default(),
            splice: Default::default(),
            s2_valid: Default::default(),
            s2_beat: Default::default(),
            unused_old_dst_mac: Default::default(),
        }
    }
}

impl Logic for Rewriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s1_valid, s1_beat, s1_ip_sum, s1_udp_old, s1_udp_new, s2_valid, s2_beat
        );

        // Stage 1: the new fields in lane order, placed into the beat.
        self.dst.mac.next = self.dst_mac.val();
        self.dst.ip.next = self.dst_ip.val();
        self.dst.port.next = self.dst_port.val();
        self.hdr.pkt_type.next = self.pkt_type.val();
        self.hdr.more_packets.next = self.more_packets.val();
        self.hdr.pool_id.next = self.pool_id.val();
        self.hdr.src_id.next = self.src_id.val();
        self.hdr.dst_id.next = self.dst_id.val();
        self.hdr.qlen.next = self.qlen.val();
        self.hdr.seq_num.next = self.seq_num.val();

        self.unused_old_dst_mac.next = self.first_beat.val().get_bits::<48>(0);
        self.placed.eth_dst.next = self.dst.mac_wire.val();
        self.placed.eth_src.next = self.first_beat.val().get_bits::<48>(48);
        self.placed.ethertype.next = self.first_beat.val().get_bits::<16>(96);
        self.placed.ip_ver_tos.next = self.first_beat.val().get_bits::<16>(112);
        self.placed.ip_total_len.next = self.first_beat.val().get_bits::<16>(128);
        self.placed.ip_id.next = self.first_beat.val().get_bits::<16>(144);
        self.placed.ip_frag.next = self.first_beat.val().get_bits::<16>(160);
        self.placed.ip_ttl_proto.next = self.first_beat.val().get_bits::<16>(176);
        self.placed.ip_checksum.next = self.first_beat.val().get_bits::<16>(192);
        self.placed.ip_src.next = self.first_beat.val().get_bits::<32>(208);
        self.placed.ip_dst.next = self.dst.ip_wire.val();
        self.placed.udp_src.next = self.first_beat.val().get_bits::<16>(272);
        self.placed.udp_dst.next = self.dst.port_wire.val();
        self.placed.udp_len.next = self.first_beat.val().get_bits::<16>(304);
        self.placed.udp_checksum.next = self.first_beat.val().get_bits::<16>(320);
        self.placed.horus.next = self.hdr.lane_bytes.val();
        self.placed.rest.next = self.first_beat.val().get_bits::<88>(424);

        // The new IPv4 header's words: bytes 14..34 but the checksum (24..26).
        self.ip_sum.w0.next = self.placed.beat.val().get_bits::<16>(112);
        self.ip_sum.w1.next = self.placed.beat.val().get_bits::<16>(128);
        self.ip_sum.w2.next = self.placed.beat.val().get_bits::<16>(144);
        self.ip_sum.w3.next = self.placed.beat.val().get_bits::<16>(160);
        self.ip_sum.w4.next = self.placed.beat.val().get_bits::<16>(176);
        self.ip_sum.w5.next = self.placed.beat.val().get_bits::<16>(208);
        self.ip_sum.w6.next = self.placed.beat.val().get_bits::<16>(224);
        self.ip_sum.w7.next = self.placed.beat.val().get_bits::<16>(240);
        self.ip_sum.w8.next = self.placed.beat.val().get_bits::<16>(256);
        self.ip_sum.w9.next = self.zero16.val();

        // The UDP checksum's words that change, at the same offsets before (m, from the input)
        // and after (m', from the placed beat): pseudo-header destination (bytes 30..34), UDP
        // destination port (36..38), Horus header (42..53) with the zero pad byte after it. Each
        // complement is taken at 16 bits, before the sum widens.
        self.udp_old.w0.next = !self.first_beat.val().get_bits::<16>(320);
        self.udp_old.w1.next = !self.first_beat.val().get_bits::<16>(240);
        self.udp_old.w2.next = !self.first_beat.val().get_bits::<16>(256);
        self.udp_old.w3.next = !self.first_beat.val().get_bits::<16>(288);
        self.udp_old.w4.next = !self.first_beat.val().get_bits::<16>(336);
        self.udp_old.w5.next = !self.first_beat.val().get_bits::<16>(352);
        self.udp_old.w6.next = !self.first_beat.val().get_bits::<16>(368);
        self.udp_old.w7.next = !self.first_beat.val().get_bits::<16>(384);
        self.udp_old.w8.next = !self.first_beat.val().get_bits::<16>(400);
        self.udp_old.w9.next = !(self.first_beat.val().get_bits::<16>(416) & self.low_lane.val());
        self.udp_new.w0.next = self.zero16.val();
        self.udp_new.w1.next = self.placed.beat.val().get_bits::<16>(240);
        self.udp_new.w2.next = self.placed.beat.val().get_bits::<16>(256);
        self.udp_new.w3.next = self.placed.beat.val().get_bits::<16>(288);
        self.udp_new.w4.next = self.placed.beat.val().get_bits::<16>(336);
        self.udp_new.w5.next = self.placed.beat.val().get_bits::<16>(352);
        self.udp_new.w6.next = self.placed.beat.val().get_bits::<16>(368);
        self.udp_new.w7.next = self.placed.beat.val().get_bits::<16>(384);
        self.udp_new.w8.next = self.placed.beat.val().get_bits::<16>(400);
        self.udp_new.w9.next = self.placed.beat.val().get_bits::<16>(416) & self.low_lane.val();

        self.s1_valid.d.next = self.in_valid.val();
        self.s1_beat.d.next = self.placed.beat.val();
        self.s1_ip_sum.d.next = self.ip_sum.sum.val();
        self.s1_udp_old.d.next = self.udp_old.sum.val();
        self.s1_udp_new.d.next = self.udp_new.sum.val();

        // Stage 2: fold, complement, write the checksums.
        self.ip_fold.a.next = self.s1_ip_sum.q.val();
        self.ip_fold.b.next = self.zero20.val();
        self.udp_checksum.a.next = self.s1_udp_old.q.val();
        self.udp_checksum.b.next = self.s1_udp_new.q.val();
        self.udp_checksum.field.next = self.s1_beat.q.val().get_bits::<16>(320);
        self.splice.beat.next = self.s1_beat.q.val();
        self.splice.ip_checksum.next = !self.ip_fold.folded.val();
        // A zero UDP checksum means "none" and stays zero (`UdpChecksum`).
        self.splice.udp_checksum.next = self.udp_checksum.checksum.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_beat.d.next = self.splice.spliced.val();

        self.out_valid.next = self.s2_valid.q.val();
        self.out_beat.next = self.s2_beat.q.val();
    }
}

/// A leaf-to-spine message from a mirrored frame: `wire::signal_frame(original, src, dst,
/// header)`, the whole 60-byte frame in one beat (bytes 60..64 zero; the egress sends 60 bytes).
///
/// Present `first_beat` (of the original frame, accepted by the parser), this switch as `src_*`,
/// the spine as `dst_*` and the new header with `in_valid`; [`SIGNAL_BUILDER_LATENCY`] cycles
/// later `out_beat` holds the message, with `out_valid`. Accepts a frame every clock.
///
/// From the original it keeps DSCP/ECN, the identification, the DF flag and the TTL; the rest
/// is constant or new (see the module doc). UDP checksum 0; IPv4 checksum computed.
#[derive(LogicBlock)]
pub struct SignalBuilder {
    pub clock: Signal<In, Clock>,
    pub in_valid: Signal<In, Bit>,
    pub first_beat: Signal<In, Bits<512>>,
    pub src_mac: Signal<In, Bits<48>>,
    pub src_ip: Signal<In, Bits<32>>,
    pub src_port: Signal<In, Bits<16>>,
    pub dst_mac: Signal<In, Bits<48>>,
    pub dst_ip: Signal<In, Bits<32>>,
    pub dst_port: Signal<In, Bits<16>>,
    pub pkt_type: Signal<In, Bits<7>>,
    pub more_packets: Signal<In, Bit>,
    pub pool_id: Signal<In, Bits<16>>,
    pub src_id: Signal<In, Bits<16>>,
    pub dst_id: Signal<In, Bits<16>>,
    pub qlen: Signal<In, Bits<16>>,
    pub seq_num: Signal<In, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_beat: Signal<Out, Bits<512>>,
    src: EndpointWire,
    dst: EndpointWire,
    hdr: HeaderWire,
    placed: BeatJoin,
    ip_sum: Sum10,
    // Constant fields, in lane order (first wire byte in the low 8 bits).
    /// 0x0800.
    ethertype: Constant<Bits<16>>,
    /// Byte 14 = 0x45 (version 4, IHL 5); byte 15 (DSCP/ECN) comes from the original.
    ver_ihl: Constant<Bits<16>>,
    keep_high_lane: Constant<Bits<16>>,
    /// 39 = 20 + 8 + 11: no payload.
    total_len: Constant<Bits<16>>,
    /// The DF bit of byte 20; MF, reserved bit and fragment offset become 0.
    df_only: Constant<Bits<16>>,
    keep_low_lane: Constant<Bits<16>>,
    /// Byte 23 = 17 (UDP); byte 22 (TTL) comes from the original.
    protocol: Constant<Bits<16>>,
    /// 19 = 8 + 11.
    udp_len: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    zero20: Constant<Bits<20>>,
    zero88: Constant<Bits<88>>,
    s1_valid: DFF<Bit>,
    s1_beat: DFF<Bits<512>>,
    s1_ip_sum: DFF<Bits<20>>,
    ip_fold: Fold,
    splice: ChecksumSplice,
    s2_valid: DFF<Bit>,
    s2_beat: DFF<Bits<512>>,
    /// The original beat, of which only bytes 14..23 are read; named `unused_*` so that
    /// Verilator's UNUSED lint knows the rest is dropped on purpose.
    unused_original: Signal<Local, Bits<512>>,
}

impl Default for SignalBuilder {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            in_valid: Default::default(),
            first_beat: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            src_port: Default::default(),
            dst_mac: Default::default(),
            dst_ip: Default::default(),
            dst_port: Default::default(),
            pkt_type: Default::default(),
            more_packets: Default::default(),
            pool_id: Default::default(),
            src_id: Default::default(),
            dst_id: Default::default(),
            qlen: Default::default(),
            seq_num: Default::default(),
            out_valid: Default::default(),
            out_beat: Default::default(),
            src: Default::default(),
            dst: Default::default(),
            hdr: Default::default(),
            placed: Default::default(),
            ip_sum: Default::default(),
            ethertype: Constant::new(bits(0x0008)),
            ver_ihl: Constant::new(bits(0x0045)),
            keep_high_lane: Constant::new(bits(0xff00)),
            total_len: Constant::new(bits(0x2700)),
            df_only: Constant::new(bits(0x0040)),
            keep_low_lane: Constant::new(bits(0x00ff)),
            protocol: Constant::new(bits(0x1100)),
            udp_len: Constant::new(bits(0x1300)),
            zero16: Constant::new(bits(0)),
            zero20: Constant::new(bits(0)),
            zero88: Constant::new(bits(0)),
            s1_valid: Default::default(),
            s1_beat: Default::default(),
            s1_ip_sum: Default::default(),
            ip_fold: Default::default(),
            splice: Default::default(),
            s2_valid: Default::default(),
            s2_beat: Default::default(),
            unused_original: Default::default(),
        }
    }
}

impl Logic for SignalBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s1_valid, s1_beat, s1_ip_sum, s2_valid, s2_beat);

        // Stage 1: the message, its IPv4 checksum still 0, and the sum for that checksum.
        self.src.mac.next = self.src_mac.val();
        self.src.ip.next = self.src_ip.val();
        self.src.port.next = self.src_port.val();
        self.dst.mac.next = self.dst_mac.val();
        self.dst.ip.next = self.dst_ip.val();
        self.dst.port.next = self.dst_port.val();
        self.hdr.pkt_type.next = self.pkt_type.val();
        self.hdr.more_packets.next = self.more_packets.val();
        self.hdr.pool_id.next = self.pool_id.val();
        self.hdr.src_id.next = self.src_id.val();
        self.hdr.dst_id.next = self.dst_id.val();
        self.hdr.qlen.next = self.qlen.val();
        self.hdr.seq_num.next = self.seq_num.val();

        self.unused_original.next = self.first_beat.val();
        self.placed.eth_dst.next = self.dst.mac_wire.val();
        self.placed.eth_src.next = self.src.mac_wire.val();
        self.placed.ethertype.next = self.ethertype.val();
        self.placed.ip_ver_tos.next = self.ver_ihl.val()
            | (self.first_beat.val().get_bits::<16>(112) & self.keep_high_lane.val());
        self.placed.ip_total_len.next = self.total_len.val();
        self.placed.ip_id.next = self.first_beat.val().get_bits::<16>(144);
        self.placed.ip_frag.next = self.first_beat.val().get_bits::<16>(160) & self.df_only.val();
        self.placed.ip_ttl_proto.next = self.protocol.val()
            | (self.first_beat.val().get_bits::<16>(176) & self.keep_low_lane.val());
        self.placed.ip_checksum.next = self.zero16.val();
        self.placed.ip_src.next = self.src.ip_wire.val();
        self.placed.ip_dst.next = self.dst.ip_wire.val();
        self.placed.udp_src.next = self.src.port_wire.val();
        self.placed.udp_dst.next = self.dst.port_wire.val();
        self.placed.udp_len.next = self.udp_len.val();
        self.placed.udp_checksum.next = self.zero16.val();
        self.placed.horus.next = self.hdr.lane_bytes.val();
        self.placed.rest.next = self.zero88.val();

        self.ip_sum.w0.next = self.placed.beat.val().get_bits::<16>(112);
        self.ip_sum.w1.next = self.placed.beat.val().get_bits::<16>(128);
        self.ip_sum.w2.next = self.placed.beat.val().get_bits::<16>(144);
        self.ip_sum.w3.next = self.placed.beat.val().get_bits::<16>(160);
        self.ip_sum.w4.next = self.placed.beat.val().get_bits::<16>(176);
        self.ip_sum.w5.next = self.placed.beat.val().get_bits::<16>(208);
        self.ip_sum.w6.next = self.placed.beat.val().get_bits::<16>(224);
        self.ip_sum.w7.next = self.placed.beat.val().get_bits::<16>(240);
        self.ip_sum.w8.next = self.placed.beat.val().get_bits::<16>(256);
        self.ip_sum.w9.next = self.zero16.val();

        self.s1_valid.d.next = self.in_valid.val();
        self.s1_beat.d.next = self.placed.beat.val();
        self.s1_ip_sum.d.next = self.ip_sum.sum.val();

        // Stage 2: fold, complement, write the checksum.
        self.ip_fold.a.next = self.s1_ip_sum.q.val();
        self.ip_fold.b.next = self.zero20.val();
        self.splice.beat.next = self.s1_beat.q.val();
        self.splice.ip_checksum.next = !self.ip_fold.folded.val();
        self.splice.udp_checksum.next = self.zero16.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_beat.d.next = self.splice.spliced.val();

        self.out_valid.next = self.s2_valid.q.val();
        self.out_beat.next = self.s2_beat.q.val();
    }
}
