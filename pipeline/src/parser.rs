//! The parser: classifies a frame from its first 512-bit beat and its length, and extracts the
//! Horus header, exactly as [`horus_model::wire::parse_frame`] and the model's frame handling
//! (`horus_model::sched::frame`) do.
//!
//! # Input
//!
//! Byte `i` of the frame is `first_beat[8i+7:8i]` (the first frame byte in the lowest byte lane).
//! Every header the parser needs lies in frame bytes 0..53, so the first beat holds them whatever
//! the frame's length. Bytes of the beat at or beyond `frame_len` are undefined and never
//! influence the result: every check that reads a byte ranks below the length check that
//! guarantees the byte exists (see *Classification*).
//!
//! ```text
//!  frame   field                       bits of first_beat   used for
//!  bytes
//!  0..12   MAC addresses               [95:0]               -
//!  12..14  ethertype (BE)              [111:96]             = 0x0800
//!  14      IPv4 version | IHL          [119:112]            = 0x45
//!  15      DSCP/ECN                    [127:120]            checksum
//!  16..18  IPv4 total length (BE)      [143:128]            length rules, checksum
//!  18..20  identification              [159:144]            checksum
//!  20..22  flags | fragment offset     [175:160]            MF = 0, offset = 0; checksum
//!  22      TTL                         [183:176]            checksum
//!  23      protocol                    [191:184]            = 17; checksum
//!  24..26  IPv4 header checksum (BE)   [207:192]            = computed checksum
//!  26..34  source, destination address [271:208]            checksum
//!  34..36  UDP source port             [287:272]            -
//!  36..38  UDP destination port (BE)   [303:288]            = 1234
//!  38..40  UDP length (BE)             [319:304]            length rules
//!  40..42  UDP checksum                [335:320]            - (never verified)
//!  42      M | type code               [343:336]            type code <= 16, M only on tasks
//!  43..53  pool_id, src_id, dst_id,    [423:344]            out (big endian, 16 bits each)
//!          qlen, seq_num
//! ```
//!
//! # Classification
//!
//! `parse_frame` reports the first failed check; the class follows from that error. The checks,
//! in the model's order, and the class of a frame failing each:
//!
//! ```text
//!  check (model's order)                                       fails -> class
//!  frame_len >= 14                                             DROP_MALFORMED
//!  ethertype = 0x0800                                          PASS_THROUGH
//!  frame_len >= 34                                             PASS_THROUGH
//!  version = 4, IHL = 5                                        PASS_THROUGH
//!  checksum field = !fold(sum of the other 9 header words)     DROP_CHECKSUM
//!  MF = 0, fragment offset = 0                                 PASS_THROUGH
//!  protocol = 17                                               PASS_THROUGH
//!  frame_len >= 42                                             PASS_THROUGH
//!  UDP destination port = 1234                                 PASS_THROUGH
//!  frame_len >= 53                                             DROP_MALFORMED
//!  total_len <= frame_len - 14, udp_len >= 19,
//!  udp_len + 20 = total_len, type code <= 16,
//!  M flag only on codes 0, 1, 16                               DROP_MALFORMED
//!  (all passed)                                                HORUS
//! ```
//!
//! Only the order between checks of different classes matters, so the hardware evaluates all
//! checks in parallel and resolves them with a five-way priority: runt, early pass-through (the
//! three checks before the checksum), checksum, late pass-through (the four after it), malformed.
//! The checksum comparison is plain 16-bit equality with the model's computed value, so a header
//! whose computed checksum is 0 is rejected when its field holds 0xFFFF (the other representation
//! of one's complement zero), as the model does.
//!
//! # Timing
//!
//! [`PARSER_LATENCY`] = 2 clocks, one frame per clock. Stage 1 registers the checks of the header
//! fields, the frame length and the raw 20-bit sum of the nine checksummed header words (an adder
//! tree); stage 2 checks the length, folds the sum once and compares it with the two values
//! that fold to the checksum expected, resolves the priority and registers [`Parsed`].
//!
//! ```text
//!   cycle   0                     1                        2
//!           in_valid, first_beat  s1: checks, sum, header  out_valid, out
//! ```
//!
//! # Emitted Verilog
//!
//! rust-hdl emits integer literals 32 bits wide, struct field offsets 64 bits wide and width
//! casts as masks, all of which Verilator's `-Wall` flags as width mismatches. The kernel therefore
//! uses named constants of the operands' width, widens a value only by taking a wider slice of
//! the beat and masking it, and assembles [`Parsed`] as one 90-bit vector turned into the struct
//! by [`bit_cast_parsed`] (a same-width cast). The emitted module is lint clean with
//! `verilator --lint-only -Wall`.

use rust_hdl::prelude::*;

/// Clocks from `in_valid` to the matching `out_valid`.
pub const PARSER_LATENCY: usize = 2;

/// [`Parsed::class`]: a well-formed Horus frame, handed to the scheduler.
pub const CLASS_HORUS: LiteralType = 0;
/// [`Parsed::class`]: not a Horus candidate (not IPv4, IPv4 options, fragment, not UDP, not port
/// 1234, or too short to tell): leaves unchanged through the pass-through port.
pub const CLASS_PASS_THROUGH: LiteralType = 1;
/// [`Parsed::class`]: dropped and counted as malformed (runt Ethernet frame, inconsistent
/// lengths, unknown type code, `MORE_PACKETS` flag on a non-task type).
pub const CLASS_DROP_MALFORMED: LiteralType = 2;
/// [`Parsed::class`]: dropped and counted for a bad IPv4 header checksum.
pub const CLASS_DROP_CHECKSUM: LiteralType = 3;

/// The parser's verdict on one frame. The header fields are only meaningful when `class` is
/// [`CLASS_HORUS`]. As a bit vector (LSB first, in field order): `class` [1:0], `pkt_type`
/// [8:2], `more_packets` [9], `pool_id` [25:10], `src_id` [41:26], `dst_id` [57:42], `qlen`
/// [73:58], `seq_num` [89:74].
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct Parsed {
    /// One of the `CLASS_*` values.
    pub class: Bits<2>,
    /// The 7-bit type code, `MORE_PACKETS` flag removed.
    pub pkt_type: Bits<7>,
    /// The `MORE_PACKETS` flag (bit 7 of the type byte).
    pub more_packets: Bit,
    pub pool_id: Bits<16>,
    pub src_id: Bits<16>,
    pub dst_id: Bits<16>,
    pub qlen: Bits<16>,
    pub seq_num: Bits<16>,
}

/// Width of [`Parsed`] as a bit vector.
pub const PARSED_BITS: usize = 90;
const _: () = assert!(PARSED_BITS == <Parsed as Synth>::BITS);

/// The [`Parsed`] whose bit vector (layout in [`Parsed`]) is `x`.
///
/// In a `#[hdl_gen]` kernel this becomes a same-width cast in Verilog: rust-hdl translates every
/// function whose name starts with `bit_cast` that way, which is why the name. It is the one way
/// to build a struct-valued signal without field assignments (whose 64-bit offsets fail
/// Verilator's width lint).
pub fn bit_cast_parsed(x: Bits<PARSED_BITS>) -> Parsed {
    Parsed {
        class: x.get_bits::<2>(0),
        pkt_type: x.get_bits::<7>(2),
        more_packets: x.get_bit(9),
        pool_id: x.get_bits::<16>(10),
        src_id: x.get_bits::<16>(26),
        dst_id: x.get_bits::<16>(42),
        qlen: x.get_bits::<16>(58),
        seq_num: x.get_bits::<16>(74),
    }
}

/// The bit vector of `p` (layout in [`Parsed`]); in HDL a same-width cast, like
/// [`bit_cast_parsed`]. A consumer assigns it to a `Bits<90>` local and reads fields with
/// `get_bits` at literal offsets, which Verilator's lint accepts.
pub fn bit_cast_parsed_bits(p: Parsed) -> Bits<PARSED_BITS> {
    p.into()
}

/// Classifies one frame per clock and extracts its Horus header; see the module doc.
#[derive(LogicBlock)]
pub struct Parser {
    pub clock: Signal<In, Clock>,
    /// A frame is presented this cycle.
    pub in_valid: Signal<In, Bit>,
    /// The frame's first 64 bytes, byte `i` in bits `[8i+7:8i]`.
    pub first_beat: Signal<In, Bits<512>>,
    /// Frame length in bytes (at least 1).
    pub frame_len: Signal<In, Bits<16>>,
    /// [`PARSER_LATENCY`] clocks after `in_valid`.
    pub out_valid: Signal<Out, Bit>,
    pub out: Signal<Out, Parsed>,

    // Stage 0 (combinational on the inputs).
    /// Reads all of `first_beat` so that Verilator does not flag the bytes the parser ignores
    /// (MAC addresses, ports, payload); its name matches Verilator's default `--unused-regexp`.
    unused_beat: Signal<Local, Bits<512>>,
    /// Frame bytes 14..34, the IPv4 header, and 12 bits of margin (see the checksum sum).
    ipv4: Signal<Local, Bits<172>>,
    /// Frame bytes 36..40: UDP destination port and length.
    udp: Signal<Local, Bits<32>>,
    /// Frame bytes 42..53 (the Horus header) and two bits of byte 53.
    horus: Signal<Local, Bits<PARSED_BITS>>,
    ethertype: Signal<Local, Bits<16>>,
    total_len: Signal<Local, Bits<16>>,
    frag_field: Signal<Local, Bits<16>>,
    dst_port: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<16>>,
    type_code: Signal<Local, Bits<7>>,
    more_flag: Signal<Local, Bit>,

    // Stage 1 registers.
    s1_valid: DFF<Bit>,
    /// The frame length, and `total_len + 14`: the checks of the length run in stage 2 (the
    /// length of a one-beat frame comes from `tkeep` as it arrives, several LUT levels deep).
    s1_len: DFF<Bits<16>>,
    s1_len_room: DFF<Bits<16>>,
    /// A pass-through check of the header ranked before the checksum failed.
    s1_early_pass: DFF<Bit>,
    /// A pass-through check of the header ranked after the checksum failed.
    s1_late_pass: DFF<Bit>,
    /// A Horus header or IPv4/UDP length field check failed.
    s1_malformed: DFF<Bit>,
    /// Sum of the nine checksummed IPv4 header words, carries not yet folded (at most 9 * 0xFFFF).
    s1_sum: DFF<Bits<20>>,
    /// The checksum's sum once folded must equal `!field` (`s1_want`), or `!field + 0xFFFF`
    /// (`s1_want_hi`) before the second fold.
    s1_want: DFF<Bits<17>>,
    s1_want_hi: DFF<Bits<17>>,
    /// The header fields in [`Parsed`] layout, class bits 0.
    s1_header: DFF<Bits<PARSED_BITS>>,

    // Stage 2.
    /// `!field` (16 bits, zero-extended).
    want: Signal<Local, Bits<20>>,
    /// `!field + 0xFFFF` and the sum's high bits, of which the low 17 bits are read (the
    /// names match Verilator's `--unused-regexp`).
    want_hi_unused: Signal<Local, Bits<20>>,
    sum_hi_unused: Signal<Local, Bits<20>>,
    /// The sum's two halves, and the carry-free test of `lo + hi == k` for both values of `k`
    /// (as `RmwTable::sum_index` checks a sum: `a ^ b ^ k == (a & b | (a | b) & !k) << 1`).
    lo: Signal<Local, Bits<17>>,
    hi: Signal<Local, Bits<17>>,
    sum_ok: Signal<Local, Bit>,
    /// The checks of the frame length: fewer than 14, 34, 42 bytes, and the malformed ones.
    runt: Signal<Local, Bit>,
    early_len: Signal<Local, Bit>,
    late_len: Signal<Local, Bit>,
    malformed_len: Signal<Local, Bit>,
    /// `udp_len + 20 == total_len` tested the same way.
    len_x: Signal<Local, Bits<16>>,
    /// `total_len + 14`.
    /// The frame length is below 64: the checks against 14, 34, 42 and 53 take its low bits.
    len_short: Signal<Local, Bit>,
    len_low: Signal<Local, Bits<6>>,
    low_eth: Constant<Bits<6>>,
    low_ipv4: Constant<Bits<6>>,
    low_udp: Constant<Bits<6>>,
    low_horus: Constant<Bits<6>>,
    len_y: Signal<Local, Bits<16>>,
    class_vec: Signal<Local, Bits<PARSED_BITS>>,
    out_valid_r: DFF<Bit>,
    out_r: DFF<Parsed>,

    // Named constants (literals would be emitted 32 bits wide).
    len_eth: Constant<Bits<16>>,
    ethertype_ipv4: Constant<Bits<16>>,
    version_ihl: Constant<Bits<8>>,
    frag_mask: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    proto_udp: Constant<Bits<8>>,
    horus_port: Constant<Bits<16>>,
    /// 19 and 20, below 32: compared with the low five bits of fields whose others are zero.
    min_udp_len5: Constant<Bits<5>>,
    ipv4_header_len5: Constant<Bits<5>>,
    ipv4_header_len: Constant<Bits<16>>,
    max_type_code: Constant<Bits<7>>,
    type_new_task: Constant<Bits<7>>,
    type_new_task_random: Constant<Bits<7>>,
    type_task_continuation: Constant<Bits<7>>,
    shift8: Constant<Bits<5>>,
    shift16: Constant<Bits<5>>,
    byte20: Constant<Bits<20>>,
    word20: Constant<Bits<20>>,
    word17: Constant<Bits<17>>,
    bit16: Constant<Bits<20>>,
    one5: Constant<Bits<5>>,
    /// Byte 0 of the header window (type byte).
    keep90: Constant<Bits<PARSED_BITS>>,
    /// Bytes 1, 3, 5, 7, 9 of the header window: the high bytes of the five 16-bit fields.
    odd90: Constant<Bits<PARSED_BITS>>,
    class_horus: Constant<Bits<PARSED_BITS>>,
    class_pass: Constant<Bits<PARSED_BITS>>,
    class_malformed: Constant<Bits<PARSED_BITS>>,
    class_checksum: Constant<Bits<PARSED_BITS>>,
}

impl Default for Parser {
    fn default() -> Self {
        use horus_model::wire;
        const { assert!(wire::Layer::Horus.end() < 64) };
        const { assert!(wire::MIN_UDP_LEN < 32 && wire::IPV4_HEADER_LEN < 32) };
        let c16 = |v: usize| Constant::new(bits::<16>(v as LiteralType));
        let c7 = |v: u8| Constant::new(bits::<7>(LiteralType::from(v)));
        let c90 = |v: u128| {
            let mut x = Bits::<PARSED_BITS>::default();
            for i in 0..PARSED_BITS {
                x = x.replace_bit(i, (v >> i) & 1 == 1);
            }
            Constant::new(x)
        };
        Self {
            clock: Default::default(),
            in_valid: Default::default(),
            first_beat: Default::default(),
            frame_len: Default::default(),
            out_valid: Default::default(),
            out: Default::default(),
            unused_beat: Default::default(),
            ethertype: Default::default(),
            total_len: Default::default(),
            frag_field: Default::default(),
            dst_port: Default::default(),
            udp_len: Default::default(),
            type_code: Default::default(),
            more_flag: Default::default(),
            ipv4: Default::default(),
            udp: Default::default(),
            horus: Default::default(),
            s1_valid: Default::default(),
            s1_len: Default::default(),
            s1_len_room: Default::default(),
            s1_early_pass: Default::default(),
            s1_late_pass: Default::default(),
            s1_malformed: Default::default(),
            s1_sum: Default::default(),
            s1_want: Default::default(),
            s1_want_hi: Default::default(),
            s1_header: Default::default(),
            want: Default::default(),
            want_hi_unused: Default::default(),
            sum_hi_unused: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            sum_ok: Default::default(),
            runt: Default::default(),
            early_len: Default::default(),
            late_len: Default::default(),
            malformed_len: Default::default(),
            len_x: Default::default(),
            len_short: Default::default(),
            len_low: Default::default(),
            low_eth: Constant::new(bits::<6>(wire::Layer::Ethernet.end() as LiteralType)),
            low_ipv4: Constant::new(bits::<6>(wire::Layer::Ipv4.end() as LiteralType)),
            low_udp: Constant::new(bits::<6>(wire::Layer::Udp.end() as LiteralType)),
            low_horus: Constant::new(bits::<6>(wire::Layer::Horus.end() as LiteralType)),
            len_y: Default::default(),
            class_vec: Default::default(),
            out_valid_r: Default::default(),
            out_r: Default::default(),
            // The frame lengths that hold each layer's header: 14, 34, 42, 53 (below 64).
            len_eth: c16(wire::Layer::Ethernet.end()),
            ethertype_ipv4: c16(usize::from(wire::ETHERTYPE_IPV4)),
            version_ihl: Constant::new(bits::<8>(0x45)),
            // MF (0x2000) and the 13-bit fragment offset; DF and the reserved bit are not checked.
            frag_mask: c16(0x3fff),
            zero16: c16(0),
            proto_udp: Constant::new(bits::<8>(LiteralType::from(wire::IP_PROTOCOL_UDP))),
            horus_port: c16(usize::from(wire::HORUS_UDP_PORT)),
            min_udp_len5: Constant::new(bits::<5>(LiteralType::from(wire::MIN_UDP_LEN))),
            ipv4_header_len5: Constant::new(bits::<5>(wire::IPV4_HEADER_LEN as LiteralType)),
            ipv4_header_len: c16(wire::IPV4_HEADER_LEN),
            max_type_code: c7(wire::PacketType::TaskContinuation.code()),
            type_new_task: c7(wire::PacketType::NewTask.code()),
            type_new_task_random: c7(wire::PacketType::NewTaskRandom.code()),
            type_task_continuation: c7(wire::PacketType::TaskContinuation.code()),
            shift8: Constant::new(bits::<5>(8)),
            shift16: Constant::new(bits::<5>(16)),
            byte20: Constant::new(bits::<20>(0xff)),
            word20: Constant::new(bits::<20>(0xffff)),
            word17: Constant::new(bits::<17>(0xffff)),
            bit16: Constant::new(bits::<20>(0x1_0000)),
            one5: Constant::new(bits::<5>(1)),
            keep90: c90(0xff),
            odd90: c90(0x00_ff00_ff00_ff00_ff00_ff00),
            class_horus: c90(u128::from(CLASS_HORUS)),
            class_pass: c90(u128::from(CLASS_PASS_THROUGH)),
            class_malformed: c90(u128::from(CLASS_DROP_MALFORMED)),
            class_checksum: c90(u128::from(CLASS_DROP_CHECKSUM)),
        }
    }
}

impl Logic for Parser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            s1_valid,
            s1_len,
            s1_len_room,
            s1_early_pass,
            s1_late_pass,
            s1_malformed,
            s1_sum,
            s1_want,
            s1_want_hi,
            s1_header,
            out_valid_r,
            out_r
        );
        self.unused_beat.next = self.first_beat.val();

        // ---- Stage 0: fields. The kernel slices the beat into per-layer windows first (which
        // also keeps rust-hdl's simulation of the 512-bit vector fast). A big-endian 16-bit field
        // at bytes k, k+1 of a window is the 16-bit slice at bit 8k with its two bytes swapped.
        self.ipv4.next = self.first_beat.val().get_bits::<172>(112);
        self.udp.next = self.first_beat.val().get_bits::<32>(288);
        self.horus.next = self.first_beat.val().get_bits::<PARSED_BITS>(336);
        self.ethertype.next = (self.first_beat.val().get_bits::<16>(96) << self.shift8.val())
            | (self.first_beat.val().get_bits::<16>(96) >> self.shift8.val());
        self.total_len.next = (self.ipv4.val().get_bits::<16>(16) << self.shift8.val())
            | (self.ipv4.val().get_bits::<16>(16) >> self.shift8.val());
        self.frag_field.next = (self.ipv4.val().get_bits::<16>(48) << self.shift8.val())
            | (self.ipv4.val().get_bits::<16>(48) >> self.shift8.val());
        self.dst_port.next = (self.udp.val().get_bits::<16>(0) << self.shift8.val())
            | (self.udp.val().get_bits::<16>(0) >> self.shift8.val());
        self.udp_len.next = (self.udp.val().get_bits::<16>(16) << self.shift8.val())
            | (self.udp.val().get_bits::<16>(16) >> self.shift8.val());
        self.type_code.next = self.horus.val().get_bits::<7>(0);
        self.more_flag.next = self.horus.val().get_bit(7);

        // ---- Stage 0: checks, grouped by their rank against the checksum (module doc).
        self.s1_valid.d.next = self.in_valid.val();
        self.s1_len.d.next = self.frame_len.val();
        self.s1_early_pass.d.next = (self.ethertype.val() != self.ethertype_ipv4.val())
            || (self.ipv4.val().get_bits::<8>(0) != self.version_ihl.val());
        self.s1_late_pass.d.next = ((self.frag_field.val() & self.frag_mask.val())
            != self.zero16.val())
            || (self.ipv4.val().get_bits::<8>(72) != self.proto_udp.val())
            || (self.dst_port.val() != self.horus_port.val());
        // A frame to port 1234 cut inside the Horus header is malformed; the other checks read
        // bytes such a frame does not have, but any of them only makes it malformed too. From
        // frame_len >= 53 on, `frame_len - 14` does not wrap. The model compares `udp_len + 20`
        // with `total_len` without overflow; here a total length below 20 is a mismatch by itself
        // and otherwise `total_len - 20` is exact.
        // `total_len > frame_len - 14` as `total_len + 14 > frame_len` (stage 2), the sum taken
        // from the header; a total length above 0xFFF1, whose sum would wrap, exceeds any frame
        // length from 53 on and is malformed by itself.
        self.s1_len_room.d.next = self.total_len.val() + self.len_eth.val();
        // `total_len - 20 != udp_len` (mod 2^16) without the subtraction's carry.
        self.len_x.next = self.udp_len.val() ^ self.ipv4_header_len.val() ^ self.total_len.val();
        self.len_y.next = ((self.udp_len.val() & self.ipv4_header_len.val())
            | ((self.udp_len.val() | self.ipv4_header_len.val()) & !self.total_len.val()))
            << self.one5.val();
        self.s1_malformed.d.next = (!self.udp_len.val().get_bits::<11>(5).any()
            && (self.udp_len.val().get_bits::<5>(0) < self.min_udp_len5.val()))
            || (self.total_len.val().get_bits::<12>(4).all()
                && (self.total_len.val().get_bits::<3>(1).any()))
            || (!self.total_len.val().get_bits::<11>(5).any()
                && (self.total_len.val().get_bits::<5>(0) < self.ipv4_header_len5.val()))
            || (self.len_x.val() != self.len_y.val())
            || (self.type_code.val() > self.max_type_code.val())
            || (self.more_flag.val()
                && !((self.type_code.val() == self.type_new_task.val())
                    || (self.type_code.val() == self.type_new_task_random.val())
                    || (self.type_code.val() == self.type_task_continuation.val())));

        // ---- Stage 0: the checksum sum. The nine words other than the checksum field (IPv4
        // header bytes 0..10 and 12..20), each its high byte shifted over its low byte (every
        // byte zero-extended to 20 bits by masking a 20-bit slice, hence the window's margin
        // past the header): one sum of nine words, a single adder tree.
        self.s1_sum.d.next = (((self.ipv4.val().get_bits::<20>(0) & self.byte20.val())
            << self.shift8.val())
            | (self.ipv4.val().get_bits::<20>(8) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(16) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(24) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(32) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(40) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(48) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(56) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(64) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(72) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(96) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(104) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(112) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(120) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(128) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(136) & self.byte20.val()))
            + (((self.ipv4.val().get_bits::<20>(144) & self.byte20.val()) << self.shift8.val())
                | (self.ipv4.val().get_bits::<20>(152) & self.byte20.val()));
        // The folded sum must be `!field` (16 bits). The first fold leaves at most 0xFFFF + 8
        // and the second subtracts 0xFFFF when the first carried: the first fold equals
        // `!field`, or `!field + 0xFFFF` above 0xFFFF.
        self.want.next = !(((self.ipv4.val().get_bits::<20>(80) & self.byte20.val())
            << self.shift8.val())
            | (self.ipv4.val().get_bits::<20>(88) & self.byte20.val()))
            & self.word20.val();
        self.s1_want.d.next = self.want.val().get_bits::<17>(0);
        // For `!field` = 0 the sum's fold would have to be 0xFFFF, which does not fold to 0:
        // bit 16 set makes the second value one the first fold never takes.
        self.want_hi_unused.next = (self.want.val() + self.word20.val()) | self.bit16.val();
        self.s1_want_hi.d.next = self.want_hi_unused.val().get_bits::<17>(0);

        // ---- Stage 0: the header in `Parsed` layout. The window holds frame bytes 42..53 at
        // window bytes 0..11 (and two bits of byte 53, masked off); swapping window bytes 1<->2, 3<->4, ..., 9<->10 makes each 16-bit
        // field big-endian; the shift by 2 leaves room for the class. The type byte (window byte
        // 0) lands on pkt_type [8:2] and its flag bit on more_packets [9].
        self.s1_header.d.next = ((self.horus.val() & self.keep90.val())
            | ((self.horus.val() & self.odd90.val()) << self.shift8.val())
            | ((self.horus.val() >> self.shift8.val()) & self.odd90.val()))
            << 2;

        // ---- Stage 2: the first fold (`lo + hi`) compared with both values it may take, then
        // the five-way priority.
        self.lo.next = self.s1_sum.q.val().get_bits::<17>(0) & self.word17.val();
        self.sum_hi_unused.next = self.s1_sum.q.val() >> self.shift16.val();
        self.hi.next = self.sum_hi_unused.val().get_bits::<17>(0);
        self.sum_ok.next = ((self.lo.val() ^ self.hi.val() ^ self.s1_want.q.val())
            == (((self.lo.val() & self.hi.val())
                | ((self.lo.val() | self.hi.val()) & !self.s1_want.q.val()))
                << self.one5.val()))
            | ((self.lo.val() ^ self.hi.val() ^ self.s1_want_hi.q.val())
                == (((self.lo.val() & self.hi.val())
                    | ((self.lo.val() | self.hi.val()) & !self.s1_want_hi.q.val()))
                    << self.one5.val()));
        self.len_short.next = !self.s1_len.q.val().get_bits::<10>(6).any();
        self.len_low.next = self.s1_len.q.val().get_bits::<6>(0);
        self.runt.next = self.len_short.val() & (self.len_low.val() < self.low_eth.val());
        self.early_len.next = self.len_short.val() & (self.len_low.val() < self.low_ipv4.val());
        self.late_len.next = self.len_short.val() & (self.len_low.val() < self.low_udp.val());
        self.malformed_len.next = (self.len_short.val()
            & (self.len_low.val() < self.low_horus.val()))
            | (self.s1_len_room.q.val() > self.s1_len.q.val());
        if self.runt.val() {
            self.class_vec.next = self.class_malformed.val();
        } else if self.s1_early_pass.q.val() | self.early_len.val() {
            self.class_vec.next = self.class_pass.val();
        } else if !self.sum_ok.val() {
            self.class_vec.next = self.class_checksum.val();
        } else if self.s1_late_pass.q.val() | self.late_len.val() {
            self.class_vec.next = self.class_pass.val();
        } else if self.s1_malformed.q.val() | self.malformed_len.val() {
            self.class_vec.next = self.class_malformed.val();
        } else {
            self.class_vec.next = self.class_horus.val();
        }
        self.out_valid_r.d.next = self.s1_valid.q.val();
        self.out_r.d.next = bit_cast_parsed(self.s1_header.q.val() | self.class_vec.val());
        self.out_valid.next = self.out_valid_r.q.val();
        self.out.next = self.out_r.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_vector_layout_is_the_struct_layout() {
        let d = Parsed::default();
        let offsets = [
            d.get_my_offset_class(),
            d.get_my_offset_pkt_type(),
            d.get_my_offset_more_packets(),
            d.get_my_offset_pool_id(),
            d.get_my_offset_src_id(),
            d.get_my_offset_dst_id(),
            d.get_my_offset_qlen(),
            d.get_my_offset_seq_num(),
        ];
        assert_eq!(offsets, [0, 2, 9, 10, 26, 42, 58, 74]);
        let p = Parsed {
            class: bits(3),
            pkt_type: bits(0x55),
            more_packets: true,
            pool_id: bits(0x1234),
            src_id: bits(0xabcd),
            dst_id: bits(0x0f0f),
            qlen: bits(0xffff),
            seq_num: bits(0x8001),
        };
        assert_eq!(bit_cast_parsed(bit_cast_parsed_bits(p)), p);
        assert_eq!(
            bit_cast_parsed_bits(p).get_bits::<16>(26),
            bits::<16>(0xabcd)
        );
    }
}
