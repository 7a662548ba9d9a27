//! The parser classifies every frame exactly as the model does (`wire::parse_frame` and the
//! frame-level mapping of its errors in `sched::frame`) and extracts the model's header, checked
//! cycle by cycle in rust-hdl's simulator: valid frames of every type, single-defect mutations,
//! random mutations, back to back and with idle cycles, with garbage in the beat past the frame.

use std::net::Ipv4Addr;

use horus_model::sched::DropReason;
use horus_model::wire::{self, Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType, WireError};
use horus_pipeline::parser::{
    CLASS_DROP_CHECKSUM, CLASS_DROP_MALFORMED, CLASS_HORUS, CLASS_PASS_THROUGH, PARSER_LATENCY,
    Parsed, Parser,
};
use rust_hdl::prelude::*;

/// The class of a frame the model's parser rejects, by the model's one rule for it.
fn model_class(e: &WireError) -> LiteralType {
    match horus_model::sched::frame::rejected_frame_verdict(e) {
        None => CLASS_PASS_THROUGH,
        Some(DropReason::BadChecksum) => CLASS_DROP_CHECKSUM,
        Some(_) => CLASS_DROP_MALFORMED,
    }
}

/// What the parser must output for `frame`: the class, and for a Horus frame the header too.
fn expected(frame: &[u8]) -> Parsed {
    match wire::parse_frame(frame) {
        Ok(f) => parsed(CLASS_HORUS, &f.header),
        Err(e) => Parsed {
            class: bits(model_class(&e)),
            ..Parsed::default()
        },
    }
}

fn parsed(class: LiteralType, h: &HorusHeader) -> Parsed {
    Parsed {
        class: bits(class),
        pkt_type: bits(u64::from(h.pkt_type.code())),
        more_packets: h.more_packets,
        pool_id: bits(u64::from(h.pool_id)),
        src_id: bits(u64::from(h.src_id)),
        dst_id: bits(u64::from(h.dst_id)),
        qlen: bits(u64::from(h.qlen)),
        seq_num: bits(u64::from(h.seq_num)),
    }
}

/// A fixed xorshift stream: the tests are deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
    fn word(&mut self) -> u16 {
        self.next() as u16
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}

/// A frame as the parser sees it: its length and a beat whose bytes past the frame are
/// `beyond` (garbage, or what a truncated frame used to hold).
#[derive(Clone)]
struct Case {
    label: String,
    frame: Vec<u8>,
    beyond: Vec<u8>,
}

impl Case {
    fn new(label: impl Into<String>, frame: Vec<u8>, rng: &mut Rng) -> Case {
        let beyond = match rng.below(3) {
            0 => vec![0; 64],
            1 => vec![0xff; 64],
            _ => rng.bytes(64),
        };
        Case {
            label: label.into(),
            frame,
            beyond,
        }
    }

    /// The frame cut to `len` bytes; the beat keeps the bytes that were cut, so a frame that
    /// would parse if the parser looked past its end is a good test of the length checks.
    fn truncated(&self, len: usize) -> Case {
        let mut beyond = self.frame[len.min(self.frame.len())..].to_vec();
        beyond.extend_from_slice(&self.beyond);
        Case {
            label: format!("{} cut to {len}", self.label),
            frame: self.frame[..len].to_vec(),
            beyond,
        }
    }

    fn beat(&self) -> Bits<512> {
        let mut b = [0u8; 64];
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = match self.frame.get(i) {
                Some(&x) => x,
                None => self.beyond[(i - self.frame.len()) % self.beyond.len()],
            };
        }
        // Byte i in bits [8i+7:8i]: the 64-bit little-endian words, highest first.
        let mut x = Bits::<512>::default();
        for chunk in b.chunks_exact(8).rev() {
            let w = u64::from_le_bytes(chunk.try_into().unwrap());
            x = (x << 64) | bit_cast::<512, 64>(bits::<64>(w));
        }
        x
    }
}

fn endpoint(rng: &mut Rng, port: u16) -> Endpoint {
    let mut mac = [0u8; 6];
    mac.iter_mut().for_each(|b| *b = rng.byte());
    Endpoint {
        mac: MacAddr(mac),
        ip: Ipv4Addr::from(rng.next() as u32),
        udp_port: port,
    }
}

fn horus_frame(rng: &mut Rng, pkt_type: PacketType, more: bool, payload: usize) -> HorusFrame {
    let src_port = rng.word();
    HorusFrame {
        src: endpoint(rng, src_port),
        dst: endpoint(rng, wire::HORUS_UDP_PORT),
        ip_id: rng.word(),
        ttl: rng.byte(),
        dscp_ecn: rng.byte(),
        dont_fragment: rng.chance(2),
        udp_checksum: rng.word(),
        header: HorusHeader {
            pkt_type,
            more_packets: more,
            pool_id: rng.word(),
            src_id: rng.word(),
            dst_id: rng.word(),
            qlen: rng.word(),
            seq_num: rng.word(),
        },
        payload: rng.bytes(payload),
    }
}

fn random_valid(rng: &mut Rng) -> Vec<u8> {
    let t = PacketType::ALL[rng.below(PacketType::ALL.len())];
    let more = t.is_task() && rng.chance(2);
    let payload = rng.below(151);
    horus_frame(rng, t, more, payload).to_bytes()
}

fn set16(f: &mut [u8], offset: usize, v: u16) {
    f[offset..offset + 2].copy_from_slice(&v.to_be_bytes());
}

fn get16(f: &[u8], offset: usize) -> u16 {
    u16::from_be_bytes([f[offset], f[offset + 1]])
}

fn update16(f: &mut [u8], offset: usize, op: impl Fn(u16) -> u16) {
    let v = op(get16(f, offset));
    set16(f, offset, v);
}

/// Recomputes the IPv4 header checksum, so that a mutation of the IPv4 header is the frame's
/// only defect.
fn fix_checksum(f: &mut [u8]) {
    if f.len() >= 34 {
        let h: [u8; 20] = f[14..34].try_into().unwrap();
        set16(f, 24, wire::ipv4_header_checksum(&h));
    }
}

const TOTAL_LEN: usize = 16;
const FRAG: usize = 20;
const PROTO: usize = 23;
const CHECKSUM: usize = 24;
const DST_PORT: usize = 36;
const UDP_LEN: usize = 38;
const TYPE: usize = 42;

/// Valid frames of every type and payload length, and every single-defect mutation of some.
fn directed_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    // The frames to mutate: short and long, a task with the flag, a reply, a signal.
    let bases = [
        (PacketType::NewTask, true, 7),
        (PacketType::TaskDone, false, 50),
        (PacketType::QueueSignal, false, 0),
        (PacketType::TaskContinuation, false, 150),
    ]
    .map(|(t, more, payload)| {
        let f = horus_frame(rng, t, more, payload).to_bytes();
        Case::new(format!("{t} more={more} +{payload}"), f, rng)
    });
    for t in PacketType::ALL {
        for more in [false, true] {
            for payload in [0, 1, 6, 7, 8, 11, 12, 50, 150] {
                let f = horus_frame(rng, t, more, payload).to_bytes();
                cases.push(Case::new(format!("{t} more={more} +{payload}"), f, rng));
            }
        }
    }

    // A frame whose computed checksum is 0: the other nine words sum to 0xFFFF. The model
    // accepts the field 0 and rejects 0xFFFF (the other zero of one's complement).
    for payload in [0, 100] {
        let mut f = horus_frame(rng, PacketType::NewTask, false, payload);
        f.ip_id = 0;
        let mut bytes = f.to_bytes();
        let h: [u8; 20] = bytes[14..34].try_into().unwrap();
        // With ip_id = 0 the checksum c = !sum, so ip_id = c makes the sum 0xFFFF.
        f.ip_id = wire::ipv4_header_checksum(&h);
        bytes = f.to_bytes();
        assert_eq!(get16(&bytes, CHECKSUM), 0, "constructed a zero checksum");
        cases.push(Case::new("checksum 0", bytes.clone(), rng));
        set16(&mut bytes, CHECKSUM, 0xffff);
        cases.push(Case::new("checksum 0 sent as 0xffff", bytes, rng));
    }

    for base in &bases {
        let mut m = Mutations {
            base,
            cases: &mut cases,
            rng,
        };
        ip_mutations(&mut m);
        udp_mutations(&mut m);
    }
    cases
}

/// Adds to `cases` the frames `base` becomes by one defect each.
struct Mutations<'a> {
    base: &'a Case,
    cases: &'a mut Vec<Case>,
    rng: &'a mut Rng,
}

impl Mutations<'_> {
    /// `base` changed by `f` (`what`), its IPv4 checksum then recomputed if `fix`.
    fn add(&mut self, what: &str, f: &dyn Fn(&mut Vec<u8>), fix: bool) {
        let mut frame = self.base.frame.clone();
        f(&mut frame);
        if fix {
            fix_checksum(&mut frame);
        }
        let label = format!("{} / {what}", self.base.label);
        self.cases.push(Case::new(label, frame, self.rng));
    }
}

/// Defects of the Ethernet and IPv4 headers: the EtherType, a VLAN tag, version and header
/// length, the checksum, fragmentation, the protocol.
fn ip_mutations(m: &mut Mutations) {
    for ethertype in [0x86dd, 0x0806, 0x0000, 0x0801, 0x0008, 0x8100] {
        m.add(
            &format!("ethertype {ethertype:#06x}"),
            &|f| set16(f, 12, ethertype),
            false,
        );
    }
    m.add(
        "VLAN tag",
        &|f| {
            f.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        },
        false,
    );
    for v in [0x65u8, 0x05, 0xf5, 0x55, 0x46, 0x44, 0x40, 0x4f, 0x35] {
        m.add(&format!("version/IHL {v:#04x}"), &|f| f[14] = v, true);
        m.add(
            &format!("version/IHL {v:#04x}, bad sum"),
            &|f| f[14] = v,
            false,
        );
    }
    for x in [0x0001u16, 0x0100, 0x8000, 0xffff] {
        m.add(
            &format!("checksum ^ {x:#06x}"),
            &|f| update16(f, CHECKSUM, |v| v ^ x),
            false,
        );
    }
    m.add("checksum field 0", &|f| set16(f, CHECKSUM, 0), false);
    m.add(
        "checksum field 0xffff",
        &|f| set16(f, CHECKSUM, 0xffff),
        false,
    );
    for (what, or_mask) in [
        ("MF", 0x2000u16),
        ("offset 1", 0x0001),
        ("offset 0x1fff", 0x1fff),
        ("offset 0x100", 0x0100),
        ("reserved flag", 0x8000),
        ("DF", 0x4000),
    ] {
        m.add(what, &|f| update16(f, FRAG, |v| v | or_mask), true);
        m.add(
            &format!("{what}, bad sum"),
            &|f| update16(f, FRAG, |v| v | or_mask),
            false,
        );
    }
    m.add("DF clear", &|f| update16(f, FRAG, |v| v & !0x4000), true);
    for p in [6u8, 1, 0, 0x91, 16, 18] {
        m.add(&format!("protocol {p}"), &|f| f[PROTO] = p, true);
    }
}

/// Defects of the UDP and Horus headers and of the lengths: ports, the UDP checksum, the IPv4
/// and UDP lengths, padding, type codes, and every truncation.
fn udp_mutations(m: &mut Mutations) {
    for port in [80u16, 1235, 1233, 0xd204, 0] {
        m.add(
            &format!("port {port}"),
            &|f| set16(f, DST_PORT, port),
            false,
        );
    }
    m.add("source port 1234", &|f| set16(f, 34, 1234), false);
    m.add("UDP checksum 0", &|f| set16(f, 40, 0), false);
    for (what, delta) in [("+1", 1i16), ("-1", -1), ("+1000", 1000), ("-20", -20)] {
        m.add(
            &format!("total length {what}"),
            &|f| update16(f, TOTAL_LEN, |v| v.wrapping_add_signed(delta)),
            true,
        );
        m.add(
            &format!("UDP length {what}"),
            &|f| update16(f, UDP_LEN, |v| v.wrapping_add_signed(delta)),
            false,
        );
        m.add(
            &format!("both lengths {what}"),
            &|f| {
                update16(f, TOTAL_LEN, |v| v.wrapping_add_signed(delta));
                update16(f, UDP_LEN, |v| v.wrapping_add_signed(delta));
            },
            true,
        );
    }
    for v in [0u16, 18, 19, 20, 38, 39, 0xffff, 0xffec] {
        m.add(
            &format!("total length {v}"),
            &|f| set16(f, TOTAL_LEN, v),
            true,
        );
        m.add(&format!("UDP length {v}"), &|f| set16(f, UDP_LEN, v), false);
        m.add(
            &format!("UDP length {v}, total length {v} + 20"),
            &|f| {
                set16(f, UDP_LEN, v);
                set16(f, TOTAL_LEN, v.wrapping_add(20));
            },
            true,
        );
    }
    m.add("padding", &|f| f.extend_from_slice(&[0; 9]), false);
    for code in 17..=127u8 {
        m.add(&format!("type code {code}"), &|f| f[TYPE] = code, false);
        m.add(
            &format!("type code {code} with flag"),
            &|f| f[TYPE] = code | 0x80,
            false,
        );
    }
    for t in PacketType::ALL {
        m.add(
            &format!("type {t} with flag"),
            &|f| f[TYPE] = t.code() | 0x80,
            false,
        );
    }
    for len in 1..m.base.frame.len() {
        m.cases.push(m.base.truncated(len));
    }
}

/// A valid frame with one to three random defects: a bit flip or a byte in the headers, a field
/// set to a telling value, a cut or padding; then, half the time, a recomputed checksum.
fn random_case(rng: &mut Rng, n: usize) -> Case {
    let mut c = Case::new(format!("random #{n}"), random_valid(rng), rng);
    for _ in 0..=rng.below(3) {
        let f = &mut c.frame;
        match rng.below(8) {
            0 => {
                let i = 12 + rng.below(42.min(f.len() - 12));
                f[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(f.len().min(64));
                f[i] = rng.byte();
            }
            2 => {
                let (offset, values): (usize, &[u16]) = match rng.below(6) {
                    0 => (12, &[0x0800, 0x86dd, 0x8100]),
                    1 => (14, &[0x4500, 0x4600, 0x6500, 0x4400]),
                    2 => (FRAG, &[0, 0x4000, 0x2000, 0x0001, 0x8000]),
                    3 => (22, &[0x4011, 0x4006, 0x0011]),
                    4 => (DST_PORT, &[1234, 80, 1235]),
                    _ => (TYPE, &[0x0000, 0x1100, 0x8200, 0x9000, 0x7f00, 0x1000]),
                };
                let v = values[rng.below(values.len())];
                update16(f, offset, |old| {
                    v | (old & if offset == TYPE { 0xff } else { 0 })
                });
            }
            3 => {
                let offset = if rng.chance(2) { TOTAL_LEN } else { UDP_LEN };
                let v = get16(f, offset);
                let v = match rng.below(4) {
                    0 => v.wrapping_add(1 + rng.below(4) as u16),
                    1 => v.wrapping_sub(1 + rng.below(4) as u16),
                    2 => rng.word() % 64,
                    _ => rng.word(),
                };
                set16(f, offset, v);
            }
            4 => {
                let delta = rng.below(30) as u16;
                let (t, u) = (get16(f, TOTAL_LEN), get16(f, UDP_LEN));
                if rng.chance(2) {
                    set16(f, TOTAL_LEN, t.wrapping_sub(delta));
                    set16(f, UDP_LEN, u.wrapping_sub(delta));
                } else {
                    set16(f, TOTAL_LEN, t.wrapping_add(delta));
                    set16(f, UDP_LEN, u.wrapping_add(delta));
                }
            }
            5 => {
                // Last: the other mutations need the headers in the frame.
                let len = 1 + rng.below(f.len() - 1);
                c = c.truncated(len);
                break;
            }
            6 => {
                let n = 1 + rng.below(20);
                let pad = rng.bytes(n);
                f.extend_from_slice(&pad);
            }
            _ => {
                let i = 40 + rng.below(f.len().min(64) - 40);
                f[i] = rng.byte();
            }
        }
    }
    if rng.chance(2) {
        fix_checksum(&mut c.frame);
    }
    c
}

/// Drives `cases` (None = an idle cycle with garbage on the inputs) one per clock and checks
/// every output against the model, `PARSER_LATENCY` clocks later.
fn check(cases: Vec<Option<Case>>) {
    let n = cases.len();
    let mut uut = Parser::default();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Parser>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Parser>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let idle = std::iter::repeat_n(None, PARSER_LATENCY);
        let mut presented: Vec<Option<(String, Parsed)>> = vec![None; PARSER_LATENCY];
        for c in cases.iter().cloned().chain(idle) {
            // The output of the pass presented PARSER_LATENCY clocks ago.
            let due = presented.remove(0);
            let got_valid = x.out_valid.val();
            let got = x.out.val();
            match &due {
                None => {
                    if got_valid {
                        println!("out_valid without a frame");
                    }
                    sim_assert!(sim, !got_valid, x);
                }
                Some((label, want)) => {
                    // Header fields only mean something in a Horus frame.
                    let ok = got_valid
                        && if want.class == bits::<2>(CLASS_HORUS) {
                            got == *want
                        } else {
                            got.class == want.class
                        };
                    if !ok {
                        println!("{label}: got valid={got_valid} {got:?}, want {want:?}");
                    }
                    sim_assert!(sim, ok, x);
                }
            }
            match c {
                Some(c) => {
                    x.in_valid.next = true;
                    x.first_beat.next = c.beat();
                    x.frame_len.next = bits(c.frame.len() as u64);
                    presented.push(Some((c.label.clone(), expected(&c.frame))));
                }
                None => {
                    // Whatever is on the inputs of an idle cycle must not show.
                    x.in_valid.next = false;
                    x.first_beat.next = Case::new("", vec![], &mut rng).beat();
                    x.frame_len.next = bits(rng.word() as u64);
                    presented.push(None);
                }
            }
            wait_clock_cycle!(sim, clock, x);
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * (n as u64 + 20)).unwrap();
}

/// Frames per model class; asserts that every class occurs at least `min` times.
fn census(cases: &[Option<Case>], min: usize) {
    let mut count = [0usize; 4];
    for c in cases.iter().flatten() {
        count[expected(&c.frame).class.index()] += 1;
    }
    println!(
        "{} frames: {} Horus, {} pass-through, {} malformed, {} bad checksum",
        count.iter().sum::<usize>(),
        count[CLASS_HORUS as usize],
        count[CLASS_PASS_THROUGH as usize],
        count[CLASS_DROP_MALFORMED as usize],
        count[CLASS_DROP_CHECKSUM as usize]
    );
    assert!(count.iter().all(|&k| k >= min), "{count:?}");
}

#[test]
fn directed_frames_back_to_back() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let cases: Vec<_> = directed_cases(&mut rng).into_iter().map(Some).collect();
    census(&cases, 20);
    check(cases);
}

#[test]
fn random_mutations_with_idle_cycles() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let cases: Vec<_> = (0..3000)
        .map(|n| (!rng.chance(5)).then(|| random_case(&mut rng, n)))
        .collect();
    census(&cases, 100);
    check(cases);
}

#[test]
fn parser_verilog_is_lint_clean_and_synthesizes() {
    let mut uut = Parser::default();
    uut.connect_all();
    let v = generate_verilog(&uut);
    horus_hdl_tools::check::verilator_lint("parser", &v).unwrap();
    let r = horus_hdl_tools::check::yosys_synth("parser", &v).unwrap();
    println!("parser: {r}");
    assert!(r.luts > 0 && r.ffs > 0, "{r}");
}
