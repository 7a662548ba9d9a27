//! The deparser blocks against the model's `wire::rewrite` and `wire::signal_frame`, byte for
//! byte: the Rust side in rust-hdl's simulator (one input per clock, back to back and with gaps),
//! the emitted Verilog (`verilog::emit`, as `rtl-gen` writes it) in Verilator (more cases: it is
//! fast), plus Verilator's lint and a Yosys synthesis of each block as the top level.
//!
//! Cases come from a fixed-seed generator: random endpoints, every packet type, payloads of 0 to
//! 150 bytes, UDP checksums that are correct, zero, arbitrary, and chosen to hit the two corners
//! of the incremental update (a correct checksum of 0xFFFF, and an update whose result is 0 and
//! is sent as 0xFFFF), and original frames with the IPv4 reserved flag set.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use horus_hdl_tools::verilog::emit;
use horus_model::rng::Xorshift64;
use horus_model::wire::{
    self, Endpoint, HORUS_UDP_PORT, HorusFrame, HorusHeader, MacAddr, PacketType,
};
use horus_pipeline::deparser::{REWRITER_LATENCY, Rewriter, SIGNAL_BUILDER_LATENCY, SignalBuilder};
use rust_hdl::prelude::*;

type Beat = [u8; 64];

fn to_bits(beat: &Beat) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (i, chunk) in beat.chunks_exact(8).enumerate() {
        b.set_bits::<64>(64 * i, bits(u64::from_le_bytes(chunk.try_into().unwrap())));
    }
    b
}

fn from_bits(b: Bits<512>) -> Beat {
    let mut beat = [0u8; 64];
    for (i, chunk) in beat.chunks_exact_mut(8).enumerate() {
        let word: u64 = b.get_bits::<64>(64 * i).into();
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    beat
}

fn mac_num(mac: MacAddr) -> u64 {
    mac.0.iter().fold(0, |acc, &b| acc << 8 | u64::from(b))
}

/// One frame through a block, and what the model says comes out.
#[derive(Clone, Debug)]
struct Case {
    /// The first beat as it arrives: the frame's first 64 bytes, random bytes past its end.
    beat: Beat,
    /// The switch (used by the signal builder only).
    src: Endpoint,
    dst: Endpoint,
    header: HorusHeader,
    expected: Beat,
}

/// The fixed-seed case generator.
struct Gen(Xorshift64);

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen(Xorshift64::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A random MAC, IPv4 address and UDP port.
    fn endpoint(&mut self) -> Endpoint {
        let r = self.next().to_be_bytes();
        Endpoint {
            mac: MacAddr([r[0], r[1], r[2], r[3], r[4], r[5]]),
            ip: Ipv4Addr::from(self.next() as u32),
            udp_port: u16::from_be_bytes([r[6], r[7]]),
        }
    }

    fn header(&mut self) -> HorusHeader {
        let pkt_type = PacketType::ALL[self.below(PacketType::ALL.len() as u64) as usize];
        let r = self.next();
        HorusHeader {
            pkt_type,
            more_packets: pkt_type.is_task() && r & 1 == 1,
            pool_id: (r >> 8) as u16,
            src_id: (r >> 24) as u16,
            dst_id: (r >> 40) as u16,
            qlen: self.next() as u16,
            seq_num: (r >> 48) as u16 ^ (r >> 2) as u16,
        }
    }

    /// An original frame the parser accepts, and what `rewrite` will be asked to do to it.
    fn frame(&mut self, dst: &Endpoint, header: &HorusHeader) -> Vec<u8> {
        let mut payload: Vec<u8> = (0..self.below(151)).map(|_| self.next() as u8).collect();
        let mut f = HorusFrame {
            src: self.endpoint(),
            dst: Endpoint {
                udp_port: HORUS_UDP_PORT,
                ..self.endpoint()
            },
            ip_id: self.next() as u16,
            ttl: self.next() as u8,
            dscp_ecn: self.next() as u8,
            dont_fragment: self.next() & 1 == 1,
            udp_checksum: 0,
            header: self.header(),
            payload: payload.clone(),
        };
        f.udp_checksum = match self.below(8) {
            0 | 1 => f.udp_checksum_full(),
            2 => 0,
            3 => self.next() as u16,
            4 => 0xffff,
            5 if payload.len() >= 3 => {
                // A correct checksum of 0xFFFF (the sum is zero): with payload word 1..3 zero
                // the checksum is c, and putting c in that word makes the sum zero.
                payload[1] = 0;
                payload[2] = 0;
                f.payload = payload.clone();
                let c = f.udp_checksum_full();
                payload[1..3].copy_from_slice(&c.to_be_bytes());
                f.payload = payload;
                let full = f.udp_checksum_full();
                assert_eq!(full, 0xffff, "the corner is constructed");
                full
            }
            6 => {
                // An update whose result is 0, sent as 0xFFFF: with X the folded sum of ~m + m'
                // over the changed words, HC' = ~fold(~HC + X) is 0 for HC = X.
                let x = update_delta(&f.to_bytes(), dst, header);
                if x == 0 { 0xffff } else { x }
            }
            _ => f.udp_checksum_full(),
        };
        let mut bytes = f.to_bytes();
        if self.below(16) == 0 {
            // The reserved IPv4 flag, which the parser does not check; fix the checksum.
            bytes[20] |= 0x80;
            let ip: [u8; 20] = bytes[14..34].try_into().unwrap();
            let mut zeroed = ip;
            zeroed[10] = 0;
            zeroed[11] = 0;
            bytes[24..26].copy_from_slice(&wire::ipv4_header_checksum(&zeroed).to_be_bytes());
        }
        wire::parse_frame(&bytes).expect("generated frames parse");
        bytes
    }

    /// The first beat of `frame`, random bytes in the lanes past its end.
    fn beat(&mut self, frame: &[u8]) -> Beat {
        let mut beat = [0u8; 64];
        for b in beat.iter_mut() {
            *b = self.next() as u8;
        }
        let n = frame.len().min(64);
        beat[..n].copy_from_slice(&frame[..n]);
        beat
    }

    fn rewrite_case(&mut self) -> Case {
        let dst = self.endpoint();
        let header = self.header();
        let frame = self.frame(&dst, &header);
        let beat = self.beat(&frame);
        let out = wire::rewrite(&frame, &dst, &header).unwrap();
        assert_eq!(out.len(), frame.len());
        let mut expected = beat;
        let n = out.len().min(64);
        expected[..n].copy_from_slice(&out[..n]);
        Case {
            beat,
            src: dst,
            dst,
            header,
            expected,
        }
    }

    fn signal_case(&mut self) -> Case {
        let src = self.endpoint();
        let dst = self.endpoint();
        let header = self.header();
        let frame = self.frame(&dst, &header);
        let beat = self.beat(&frame);
        let out = wire::signal_frame(&frame, &src, &dst, &header).unwrap();
        assert_eq!(out.len(), 60);
        let mut expected = [0u8; 64];
        expected[..60].copy_from_slice(&out);
        Case {
            beat,
            src,
            dst,
            header,
            expected,
        }
    }
}

/// `fold(sum(~m + m'))` over the words `rewrite` changes (an independent computation, only to
/// aim at the corner; the model decides the expected bytes).
fn update_delta(frame: &[u8], dst: &Endpoint, header: &HorusHeader) -> u16 {
    let fields = |ip: [u8; 4], port: u16, h: [u8; 11]| {
        let mut f = [0u8; 18];
        f[..4].copy_from_slice(&ip);
        f[4..6].copy_from_slice(&port.to_be_bytes());
        f[6..17].copy_from_slice(&h);
        f
    };
    let old = fields(
        frame[30..34].try_into().unwrap(),
        u16::from_be_bytes([frame[36], frame[37]]),
        frame[42..53].try_into().unwrap(),
    );
    let new = fields(dst.ip.octets(), dst.udp_port, header.to_bytes());
    let mut sum: u64 = 0;
    for (m, n) in old.chunks(2).zip(new.chunks(2)) {
        sum += u64::from(!u16::from_be_bytes([m[0], m[1]]));
        sum += u64::from(u16::from_be_bytes([n[0], n[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// A schedule: `None` is an idle cycle.
fn schedule(g: &mut Gen, n: usize, gaps: bool, case: fn(&mut Gen) -> Case) -> Vec<Option<Case>> {
    let mut s = Vec::new();
    while s.len() < n {
        if gaps && g.below(4) == 0 {
            s.push(None);
        } else {
            s.push(Some(case(g)));
        }
    }
    s
}

/// Checks per-cycle observations `(out_valid, out_beat)` (observation `j` after clock edge `j`)
/// against the schedule: the result of input `i` is exactly at `i + latency`, and out_valid is
/// low where no input was.
fn compare(schedule: &[Option<Case>], seen: &[(bool, Beat)], latency: usize, what: &str) {
    assert!(seen.len() >= schedule.len() + latency);
    let mut checked = 0;
    for (i, case) in schedule.iter().enumerate() {
        let (valid, beat) = &seen[i + latency];
        match case {
            None => assert!(
                !valid,
                "{what}: out_valid at {} without an input",
                i + latency
            ),
            Some(c) => {
                assert!(valid, "{what}: no out_valid for input {i}");
                if beat != &c.expected {
                    let diff: Vec<_> = (0..64)
                        .filter(|&k| beat[k] != c.expected[k])
                        .map(|k| format!("byte {k}: {:#04x} want {:#04x}", beat[k], c.expected[k]))
                        .collect();
                    panic!("{what}: input {i} ({:?}):\n{}", c.header, diff.join("\n"));
                }
                checked += 1;
            }
        }
    }
    for (j, (valid, _)) in seen.iter().enumerate().take(latency) {
        assert!(!valid, "{what}: out_valid at {j} before any input");
    }
    println!("{what}: {checked} frames match the model");
}

// ---------------------------------------------------------------------------------------------
// rust-hdl simulation
// ---------------------------------------------------------------------------------------------

/// Sets the header inputs of a block (both blocks name them alike).
macro_rules! drive_header {
    ($x:expr, $h:expr) => {
        $x.pkt_type.next = u64::from($h.pkt_type.code()).into();
        $x.more_packets.next = $h.more_packets;
        $x.pool_id.next = u64::from($h.pool_id).into();
        $x.src_id.next = u64::from($h.src_id).into();
        $x.dst_id.next = u64::from($h.dst_id).into();
        $x.qlen.next = u64::from($h.qlen).into();
        $x.seq_num.next = u64::from($h.seq_num).into();
    };
}

fn simulate_rewriter(schedule: Vec<Option<Case>>) -> Vec<(bool, Beat)> {
    let cycles = schedule.len() + REWRITER_LATENCY + 1;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut uut = Rewriter::default();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Rewriter>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Rewriter>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for j in 0..cycles {
            log.lock()
                .unwrap()
                .push((x.out_valid.val(), from_bits(x.out_beat.val())));
            let case = schedule.get(j).cloned().flatten();
            x.in_valid.next = case.is_some();
            if let Some(c) = case {
                x.first_beat.next = to_bits(&c.beat);
                x.dst_mac.next = mac_num(c.dst.mac).into();
                x.dst_ip.next = u64::from(u32::from(c.dst.ip)).into();
                x.dst_port.next = u64::from(c.dst.udp_port).into();
                drive_header!(x, c.header);
            }
            wait_clock_cycle!(sim, clock, x);
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * (cycles as u64 + 4)).unwrap();
    Arc::try_unwrap(seen).unwrap().into_inner().unwrap()
}

fn simulate_signal_builder(schedule: Vec<Option<Case>>) -> Vec<(bool, Beat)> {
    let cycles = schedule.len() + SIGNAL_BUILDER_LATENCY + 1;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut uut = SignalBuilder::default();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<SignalBuilder>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<SignalBuilder>| {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        for j in 0..cycles {
            log.lock()
                .unwrap()
                .push((x.out_valid.val(), from_bits(x.out_beat.val())));
            let case = schedule.get(j).cloned().flatten();
            x.in_valid.next = case.is_some();
            if let Some(c) = case {
                x.first_beat.next = to_bits(&c.beat);
                x.src_mac.next = mac_num(c.src.mac).into();
                x.src_ip.next = u64::from(u32::from(c.src.ip)).into();
                x.src_port.next = u64::from(c.src.udp_port).into();
                x.dst_mac.next = mac_num(c.dst.mac).into();
                x.dst_ip.next = u64::from(u32::from(c.dst.ip)).into();
                x.dst_port.next = u64::from(c.dst.udp_port).into();
                drive_header!(x, c.header);
            }
            wait_clock_cycle!(sim, clock, x);
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * (cycles as u64 + 4)).unwrap();
    Arc::try_unwrap(seen).unwrap().into_inner().unwrap()
}

/// Frames per rust-hdl simulation test. Its simulator lives in the dependencies, which the
/// workspace optimizes even in test builds (about 10 cycles per second on a 512-bit beat without
/// that); 300 frames keep the test near half a minute. Verilator runs thousands more either way.
const SIM_FRAMES: usize = 300;

#[test]
fn rewriter_matches_the_model_back_to_back() {
    let s = schedule(
        &mut Gen::new(0x5eed_0001),
        SIM_FRAMES,
        false,
        Gen::rewrite_case,
    );
    let seen = simulate_rewriter(s.clone());
    compare(&s, &seen, REWRITER_LATENCY, "rewriter, back to back");
}

#[test]
fn rewriter_matches_the_model_with_gaps() {
    let s = schedule(
        &mut Gen::new(0x5eed_0002),
        SIM_FRAMES,
        true,
        Gen::rewrite_case,
    );
    let seen = simulate_rewriter(s.clone());
    compare(&s, &seen, REWRITER_LATENCY, "rewriter, with gaps");
}

#[test]
fn signal_builder_matches_the_model_back_to_back() {
    let s = schedule(
        &mut Gen::new(0x5eed_0003),
        SIM_FRAMES,
        false,
        Gen::signal_case,
    );
    let seen = simulate_signal_builder(s.clone());
    compare(
        &s,
        &seen,
        SIGNAL_BUILDER_LATENCY,
        "signal builder, back to back",
    );
}

#[test]
fn signal_builder_matches_the_model_with_gaps() {
    let s = schedule(
        &mut Gen::new(0x5eed_0004),
        SIM_FRAMES,
        true,
        Gen::signal_case,
    );
    let seen = simulate_signal_builder(s.clone());
    compare(
        &s,
        &seen,
        SIGNAL_BUILDER_LATENCY,
        "signal builder, with gaps",
    );
}

// ---------------------------------------------------------------------------------------------
// The emitted Verilog, in Verilator
// ---------------------------------------------------------------------------------------------

/// An input vector, built field by field from the most significant end.
#[derive(Default)]
struct Vector(Vec<bool>);

impl Vector {
    fn push(&mut self, value: u64, width: usize) -> &mut Self {
        self.0.extend((0..width).rev().map(|i| value >> i & 1 == 1));
        self
    }

    fn zeros(&mut self, width: usize) -> &mut Self {
        self.0.extend(std::iter::repeat_n(false, width));
        self
    }

    fn push_beat(&mut self, beat: &Beat) -> &mut Self {
        for &b in beat.iter().rev() {
            self.push(u64::from(b), 8);
        }
        self
    }

    fn push_header(&mut self, h: &HorusHeader) -> &mut Self {
        self.push(u64::from(h.pkt_type.code()), 7)
            .push(u64::from(h.more_packets), 1)
            .push(u64::from(h.pool_id), 16)
            .push(u64::from(h.src_id), 16)
            .push(u64::from(h.dst_id), 16)
            .push(u64::from(h.qlen), 16)
            .push(u64::from(h.seq_num), 16)
    }

    fn push_endpoint(&mut self, e: &Endpoint) -> &mut Self {
        self.push(mac_num(e.mac), 48)
            .push(u64::from(u32::from(e.ip)), 32)
            .push(u64::from(e.udp_port), 16)
    }

    fn hex(&self) -> String {
        let pad = (4 - self.0.len() % 4) % 4;
        let bits: Vec<bool> = std::iter::repeat_n(false, pad)
            .chain(self.0.iter().copied())
            .collect();
        bits.chunks(4)
            .map(|n| {
                let v = n.iter().fold(0u32, |acc, &b| acc << 1 | u32::from(b));
                char::from_digit(v, 16).unwrap()
            })
            .collect()
    }
}

/// Runs `verilog` (top module `top`, ports `clock`, `out_valid`, `out_beat` and `inputs`, in
/// the order the vectors pack them, `in_valid` first) in Verilator, one vector per clock, and
/// returns what the outputs show in each cycle, observed as the rust-hdl benches do: cycle `j`'s
/// observation is taken before vector `j` is applied.
fn verilator_sim(
    name: &str,
    verilog: &str,
    inputs: &[(&str, usize)],
    vectors: &[Vector],
) -> Vec<(bool, Beat)> {
    let width: usize = inputs.iter().map(|(_, w)| w).sum();
    let decls: String = inputs
        .iter()
        .map(|(n, w)| format!("    reg [{}:0] {n};\n", w - 1))
        .collect();
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let ports: String = names.iter().map(|n| format!(", .{n}({n})")).collect();
    let n = vectors.len();
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
    reg clock = 1'b0;
    reg [{w1}:0] vectors [0:{n1}];
{decls}    wire out_valid;
    wire [511:0] out_beat;
    integer j;
    top dut(.clock(clock), .out_valid(out_valid), .out_beat(out_beat){ports});
    always #5 clock = ~clock;
    initial begin
        $readmemh(\"vectors.hex\", vectors);
        {{{names}}} = 0;
        @(posedge clock);
        for (j = 0; j < {cycles}; j = j + 1) begin
            @(negedge clock);
            $display(\"%0d %h\", out_valid, out_beat);
            if (j < {n}) {{{names}}} = vectors[j]; else in_valid = 1'b0;
        end
        $finish;
    end
endmodule
",
        w1 = width - 1,
        n1 = n - 1,
        names = names.join(", "),
        cycles = n + 3,
    );
    let hex: Vec<String> = vectors
        .iter()
        .map(|v| {
            assert_eq!(v.0.len(), width);
            v.hex()
        })
        .collect();
    let printed = horus_hdl_tools::check::verilator_vectors(name, &hex, &tb, verilog).unwrap();
    printed
        .lines()
        .filter_map(|l| {
            let (valid, beat) = l.split_once(' ')?;
            let mut b = [0u8; 64];
            for (k, byte) in b.iter_mut().enumerate() {
                let at = beat.len() - 2 * (k + 1);
                *byte = u8::from_str_radix(&beat[at..at + 2], 16).ok()?;
            }
            Some((valid == "1", b))
        })
        .collect()
}

const VERILATOR_FRAMES: usize = 4000;

#[test]
fn rewriter_verilog_matches_the_model_in_verilator() {
    let s = schedule(
        &mut Gen::new(0x5eed_0005),
        VERILATOR_FRAMES,
        true,
        Gen::rewrite_case,
    );
    let vectors: Vec<Vector> = s
        .iter()
        .map(|c| {
            let mut v = Vector::default();
            match c {
                Some(c) => v
                    .push(1, 1)
                    .push_beat(&c.beat)
                    .push_endpoint(&c.dst)
                    .push_header(&c.header),
                None => v.zeros(1 + 512 + 96 + 88),
            };
            v
        })
        .collect();
    let mut uut = Rewriter::default();
    uut.connect_all();
    let ports = [
        ("in_valid", 1),
        ("first_beat", 512),
        ("dst_mac", 48),
        ("dst_ip", 32),
        ("dst_port", 16),
        ("pkt_type", 7),
        ("more_packets", 1),
        ("pool_id", 16),
        ("src_id", 16),
        ("dst_id", 16),
        ("qlen", 16),
        ("seq_num", 16),
    ];
    let seen = verilator_sim("rewriter_sim", &emit(&uut), &ports, &vectors);
    compare(&s, &seen, REWRITER_LATENCY, "rewriter Verilog");
}

#[test]
fn signal_builder_verilog_matches_the_model_in_verilator() {
    let s = schedule(
        &mut Gen::new(0x5eed_0006),
        VERILATOR_FRAMES,
        true,
        Gen::signal_case,
    );
    let vectors: Vec<Vector> = s
        .iter()
        .map(|c| {
            let mut v = Vector::default();
            match c {
                Some(c) => v
                    .push(1, 1)
                    .push_beat(&c.beat)
                    .push_endpoint(&c.src)
                    .push_endpoint(&c.dst)
                    .push_header(&c.header),
                None => v.zeros(1 + 512 + 2 * 96 + 88),
            };
            v
        })
        .collect();
    let mut uut = SignalBuilder::default();
    uut.connect_all();
    let ports = [
        ("in_valid", 1),
        ("first_beat", 512),
        ("src_mac", 48),
        ("src_ip", 32),
        ("src_port", 16),
        ("dst_mac", 48),
        ("dst_ip", 32),
        ("dst_port", 16),
        ("pkt_type", 7),
        ("more_packets", 1),
        ("pool_id", 16),
        ("src_id", 16),
        ("dst_id", 16),
        ("qlen", 16),
        ("seq_num", 16),
    ];
    let seen = verilator_sim("signal_builder_sim", &emit(&uut), &ports, &vectors);
    compare(&s, &seen, SIGNAL_BUILDER_LATENCY, "signal builder Verilog");
}

// ---------------------------------------------------------------------------------------------
// Lint and synthesis
// ---------------------------------------------------------------------------------------------

fn lint_and_synth(name: &str, verilog: &str) {
    horus_hdl_tools::check::verilator_lint(name, verilog).unwrap();
    let r = horus_hdl_tools::check::yosys_synth(name, verilog).unwrap();
    println!("{name}: {r}");
    assert!(r.luts > 0 && r.ffs > 0, "{r}");
}

#[test]
fn rewriter_verilog_is_lint_clean_and_synthesizes() {
    let mut uut = Rewriter::default();
    uut.connect_all();
    lint_and_synth("deparser_rewriter", &emit(&uut));
}

#[test]
fn signal_builder_verilog_is_lint_clean_and_synthesizes() {
    let mut uut = SignalBuilder::default();
    uut.connect_all();
    lint_and_synth("deparser_signal_builder", &emit(&uut));
}
