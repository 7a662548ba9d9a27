//! The boards a switch can be built for: one description each, the single source of the facts
//! rtl-gen's board targets, `horusctl check --board` and the documentation read (the shell, the
//! FPGA part and its resources, the core clock, the ports and their numbers).
//!
//! A board's ports are the switch's egress port numbers: the board adapter sends a frame whose
//! port is `n` to the stream of the port numbered `n`, and merges every input stream into the
//! switch's one input. Numbers are fixed per stream kind across boards (`cmac0` 0, `cmac1` 1,
//! `host0` 2), so a configuration written for one board means the same on another that has its
//! ports; a board without a stream simply lacks that number (the Alveo U50 has one QSFP28 cage:
//! no `cmac1`).
//!
//! Sources (read at the commits named in `docs/deploy.md`): the OpenNIC shell's
//! `script/board_settings/<board>.tcl` for the parts, its `src/box_250mhz/box_250mhz.sv` for the
//! streams and clocks; NetFPGA-PLUS's `hw/lib/common/hdl/top.v` for its streams and clock; the
//! parts' resources from AMD's UltraScale+ tables (DS890) as Vivado reports them.

use horus_model::config::PortNames;
use std::fmt;

/// The shell a board's bitstream is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// AMD's OpenNIC shell (Xilinx/open-nic-shell): the switch is the user plugin of its
    /// 250 MHz box.
    OpenNic,
    /// NetFPGA-PLUS (NetFPGA/NetFPGA-PLUS): the switch replaces a project's `nf_datapath`.
    NetFpgaPlus,
}

impl fmt::Display for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Shell::OpenNic => "OpenNIC shell",
            Shell::NetFpgaPlus => "NetFPGA-PLUS",
        })
    }
}

/// What a port is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortKind {
    /// A 100 GbE MAC (CMAC) and its QSFP28 cage.
    Mac,
    /// The host, through the shell's DMA engine (QDMA queues of PCIe physical function 0).
    Host,
}

/// A port of a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardPort {
    /// Its name in configurations (`cmac0`, `cmac1`, `host0`).
    pub name: &'static str,
    /// The switch's egress port number for it (the adapter's stream).
    pub number: u8,
    pub kind: PortKind,
}

/// An FPGA part and what it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The part as Vivado names it.
    pub name: &'static str,
    pub luts: u64,
    pub ffs: u64,
    /// 36 Kb block RAMs.
    pub ramb36: u64,
    /// UltraRAM blocks (288 Kb).
    pub uram: u64,
    pub dsp: u64,
}

/// A board the switch can be built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// Its name on the command line (`--board au250`), as the shell names it.
    pub name: &'static str,
    /// What it is, for people.
    pub title: &'static str,
    pub shell: Shell,
    pub part: Part,
    /// The switch's clock, in MHz (whole: the microsecond counter counts its cycles).
    pub clock_mhz: u64,
    /// The clock of the shell's AXI4-Lite window, in MHz.
    pub axil_clock_mhz: u64,
    pub ports: &'static [BoardPort],
}

const CMAC0: BoardPort = BoardPort {
    name: "cmac0",
    number: 0,
    kind: PortKind::Mac,
};
const CMAC1: BoardPort = BoardPort {
    name: "cmac1",
    number: 1,
    kind: PortKind::Mac,
};
const HOST0: BoardPort = BoardPort {
    name: "host0",
    number: 2,
    kind: PortKind::Host,
};

/// The streams of the board adapter, by port number: 0, 1 and 2.
pub const STREAMS: usize = 3;

const TWO_MACS: &[BoardPort] = &[CMAC0, CMAC1, HOST0];
const ONE_MAC: &[BoardPort] = &[CMAC0, HOST0];

/// Xilinx Virtex UltraScale+ VU13P class (Alveo U250).
const XCU250: Part = Part {
    name: "xcu250-figd2104-2l-e",
    luts: 1_728_000,
    ffs: 3_456_000,
    ramb36: 2_688,
    uram: 1_280,
    dsp: 12_288,
};
/// VU9P class (Alveo U200).
const XCU200: Part = Part {
    name: "xcu200-fsgd2104-2-e",
    luts: 1_182_240,
    ffs: 2_364_480,
    ramb36: 2_160,
    uram: 960,
    dsp: 6_840,
};
/// VU37P class with HBM (Alveo U280).
const XCU280: Part = Part {
    name: "xcu280-fsvh2892-2L-e",
    luts: 1_303_680,
    ffs: 2_607_360,
    ramb36: 2_016,
    uram: 960,
    dsp: 9_024,
};
/// The U280's die (Alveo U55C).
const XCU55C: Part = Part {
    name: "xcu55c-fsvh2892-2L-e",
    ..XCU280
};
/// VU35P class with HBM (Alveo U50).
const XCU50: Part = Part {
    name: "xcu50-fsvh2104-2-e",
    luts: 871_680,
    ffs: 1_743_360,
    ramb36: 1_344,
    uram: 640,
    dsp: 5_952,
};

const fn opennic(
    name: &'static str,
    title: &'static str,
    part: Part,
    ports: &'static [BoardPort],
) -> Board {
    Board {
        name,
        title,
        shell: Shell::OpenNic,
        part,
        clock_mhz: 250,
        axil_clock_mhz: 125,
        ports,
    }
}

/// Every board, OpenNIC first.
pub const BOARDS: &[Board] = &[
    opennic("au250", "AMD Alveo U250", XCU250, TWO_MACS),
    opennic("au280", "AMD Alveo U280", XCU280, TWO_MACS),
    opennic("au55c", "AMD Alveo U55C", XCU55C, TWO_MACS),
    opennic("au50", "AMD Alveo U50", XCU50, ONE_MAC),
    opennic("au200", "AMD Alveo U200", XCU200, TWO_MACS),
    Board {
        name: "netfpga-plus",
        title: "NetFPGA-PLUS on an AMD Alveo U250",
        shell: Shell::NetFpgaPlus,
        part: XCU250,
        clock_mhz: 250,
        axil_clock_mhz: 250,
        ports: TWO_MACS,
    },
];

/// The board called `name`.
pub fn board(name: &str) -> Option<&'static Board> {
    BOARDS.iter().find(|b| b.name == name)
}

/// The board called `name`, or a message listing the boards (for command-line parsers).
pub fn board_named(name: &str) -> Result<&'static Board, String> {
    board(name).ok_or_else(|| format!("unknown board; one of: {}", names().join(", ")))
}

/// The names of the boards, for messages.
pub fn names() -> Vec<&'static str> {
    BOARDS.iter().map(|b| b.name).collect()
}

impl Board {
    /// The port called `name`.
    pub fn port(&self, name: &str) -> Option<&BoardPort> {
        self.ports.iter().find(|p| p.name == name)
    }

    /// The port numbered `number`.
    pub fn port_number(&self, number: u8) -> Option<&BoardPort> {
        self.ports.iter().find(|p| p.number == number)
    }

    /// Whether the adapter's stream `i` exists on this board.
    pub fn streams(&self) -> [bool; STREAMS] {
        std::array::from_fn(|i| self.port_number(i as u8).is_some())
    }

    /// The MAC ports (CMACs) the board has.
    pub fn mac_ports(&self) -> usize {
        self.ports
            .iter()
            .filter(|p| p.kind == PortKind::Mac)
            .count()
    }

    /// Its ports for loading a configuration that names them
    /// ([`horus_model::config::Config::from_file_for`]).
    pub fn port_names(&self) -> PortNames {
        let ports: Vec<(&str, u8)> = self.ports.iter().map(|p| (p.name, p.number)).collect();
        PortNames::new(self.name, &ports)
    }

    /// Its ports as `name (number)`, for messages.
    pub fn port_list(&self) -> String {
        self.ports
            .iter()
            .map(|p| format!("{} ({})", p.name, p.number))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_unique_and_streams_follow_the_numbers() {
        let mut names: Vec<_> = BOARDS.iter().map(|b| b.name).collect();
        names.dedup();
        assert_eq!(names.len(), BOARDS.len());
        for b in BOARDS {
            for (i, p) in b.ports.iter().enumerate() {
                assert!((p.number as usize) < STREAMS, "{}: {}", b.name, p.name);
                assert!(
                    b.ports[..i]
                        .iter()
                        .all(|q| q.name != p.name && q.number != p.number),
                    "{}: {} repeated",
                    b.name,
                    p.name
                );
            }
            assert_eq!(
                b.streams().iter().filter(|&&s| s).count(),
                b.ports.len(),
                "{}",
                b.name
            );
            assert!((1..=1023).contains(&b.clock_mhz));
        }
        let u50 = board("au50").unwrap();
        assert_eq!(u50.streams(), [true, false, true]);
        assert_eq!(u50.mac_ports(), 1);
        assert_eq!(board("au250").unwrap().port("host0").unwrap().number, 2);
        assert!(board("au9000").is_none());
    }
}
