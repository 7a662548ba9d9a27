//! A NetFPGA-PLUS project's datapath (`netfpga-plus/hw/hdl/nf_datapath.v`): the switch
//! (`board::netfpga::NetFpgaDatapath`) and the module `nf_datapath` around it with the ports and
//! parameters of the reference projects' (NetFPGA/NetFPGA-PLUS 70b333f,
//! `hw/projects/reference_switch/hw/hdl/nf_datapath.v`), which the shell's `top.v` instantiates.
//! A project is a copy of a reference project with this file in place of its `nf_datapath.v`.
//!
//! The switch's registers are the first register window's (`S0_AXI`); the other two windows
//! answer `SLVERR`. The reference projects' AXI crossbar (`axi_crossbar_0` in
//! `hw/tcl/<project>.tcl`: `M00_A00_BASE_ADDR` 0, `M00_A00_ADDR_WIDTH` 16) hands S0 the addresses
//! 0x0000-0xFFFF as they are, so the switch takes S0's addresses unchanged: its register at
//! offset X answers at crossbar address X. (`M00_BASEADDR` 0x00010000 in the projects'
//! `*_defines.tcl` names no address S0 sees; the crossbar puts M01 there.) The host reaches the
//! crossbar through the shell's `box1` window ([`HOST_WINDOW_BASE`]).

use super::BoardParams;
use crate::GeneratedFile;
use anyhow::Result;
use horus_model::sched::jbsq::LeafKind;

/// The NetFPGA-PLUS commit this file is written for.
pub const NETFPGA_COMMIT: &str = "70b333fa269cc6db9bbffc231386c10f4914d020";

/// Where the host finds the crossbar, and so S0's offset 0: BAR2 + this. The shell (open-nic-shell
/// 8077751, the submodule NetFPGA-PLUS 70b333f pins) maps its `box1` window, which `top_wrapper.sv`
/// connects to the crossbar, at 0x200000 and subtracts that base
/// (`src/system_config/system_config_address_map.sv`).
pub const HOST_WINDOW_BASE: u64 = 0x0020_0000;

/// The files: the datapath and a README.
pub fn files(p: &BoardParams) -> Result<Vec<GeneratedFile>> {
    let b = p.board.name;
    Ok(vec![
        GeneratedFile::new(format!("{b}/hw/hdl/nf_datapath.v"), nf_datapath(p)),
        GeneratedFile::new(format!("{b}/README.md"), readme(p)),
    ])
}

/// `nf_datapath.v`: the switch's Verilog, then `nf_datapath`.
pub fn nf_datapath(p: &BoardParams) -> String {
    let module = p.module_name();
    let axi_in = [
        ("AWADDR", "awaddr", "[C_S_AXI_ADDR_WIDTH-1:0]"),
        ("AWVALID", "awvalid", ""),
        ("WDATA", "wdata", "[C_S_AXI_DATA_WIDTH-1:0]"),
        ("WSTRB", "wstrb", "[C_S_AXI_DATA_WIDTH/8-1:0]"),
        ("WVALID", "wvalid", ""),
        ("BREADY", "bready", ""),
        ("ARADDR", "araddr", "[C_S_AXI_ADDR_WIDTH-1:0]"),
        ("ARVALID", "arvalid", ""),
        ("RREADY", "rready", ""),
    ];
    let axi_out = [
        ("ARREADY", "arready", ""),
        ("RDATA", "rdata", "[C_S_AXI_DATA_WIDTH-1:0]"),
        ("RRESP", "rresp", "[1:0]"),
        ("RVALID", "rvalid", ""),
        ("WREADY", "wready", ""),
        ("BRESP", "bresp", "[1:0]"),
        ("BVALID", "bvalid", ""),
        ("AWREADY", "awready", ""),
    ];
    let mut ports = vec![
        "    input axis_aclk".to_string(),
        "    input axis_resetn".to_string(),
        "    input axi_aclk".to_string(),
        "    input axi_resetn".to_string(),
    ];
    let mut conns = vec![
        "        .axis_aclk(axis_aclk)".to_string(),
        "        .axis_resetn(axis_resetn)".to_string(),
        "        .axi_aclk(axi_aclk)".to_string(),
        "        .axi_resetn(axi_resetn)".to_string(),
    ];
    for i in 0..3 {
        for (up, low, w) in axi_in {
            ports.push(format!("    input {w} S{i}_AXI_{up}"));
            conns.push(format!("        .s{i}_axi_{low}(S{i}_AXI_{up})"));
        }
        for (up, low, w) in axi_out {
            ports.push(format!("    output {w} S{i}_AXI_{up}"));
            conns.push(format!("        .s{i}_axi_{low}(S{i}_AXI_{up})"));
        }
    }
    for (dir, side, data, user) in [
        ("input", "s", "C_S_AXIS_DATA_WIDTH", "C_S_AXIS_TUSER_WIDTH"),
        ("output", "m", "C_M_AXIS_DATA_WIDTH", "C_M_AXIS_TUSER_WIDTH"),
    ] {
        let back = if dir == "input" { "output" } else { "input" };
        for i in 0..3 {
            for (f, d, w) in [
                ("tdata", dir, format!("[{data} - 1:0]")),
                ("tkeep", dir, format!("[(({data} / 8)) - 1:0]")),
                ("tuser", dir, format!("[{user}-1:0]")),
                ("tvalid", dir, String::new()),
                ("tready", back, String::new()),
                ("tlast", dir, String::new()),
            ] {
                ports.push(format!("    {d} {w} {side}_axis_{i}_{f}"));
                conns.push(format!("        .{side}_axis_{i}_{f}({side}_axis_{i}_{f})"));
            }
        }
    }
    format!(
        "{header}\
{plugin}
// The datapath the NetFPGA-PLUS shell instantiates (hw/lib/common/hdl/top.v), with the reference
// projects' parameters and ports.
module nf_datapath #(
    parameter C_S_AXI_DATA_WIDTH    = 32,
    parameter C_S_AXI_ADDR_WIDTH    = 32,
    parameter C_BASEADDR            = 32'h00000000,
    parameter C_M_AXIS_DATA_WIDTH   = 512,
    parameter C_S_AXIS_DATA_WIDTH   = 512,
    parameter C_M_AXIS_TUSER_WIDTH  = 128,
    parameter C_S_AXIS_TUSER_WIDTH  = 128,
    parameter NUM_QUEUES            = 5
) (
{ports}
);
    // The switch's registers: the first window, whose addresses the crossbar hands on from 0.
    initial begin
        if (C_S_AXI_DATA_WIDTH != 32 || C_S_AXI_ADDR_WIDTH != 32) begin
            $fatal(1, \"The Horus datapath takes 32-bit AXI4-Lite windows\");
        end
        if (C_S_AXIS_DATA_WIDTH != 512 || C_M_AXIS_DATA_WIDTH != 512 ||
            C_S_AXIS_TUSER_WIDTH != 128 || C_M_AXIS_TUSER_WIDTH != 128) begin
            $fatal(1, \"The Horus datapath takes 512-bit streams with 128-bit tuser\");
        end
    end
    // Parameters the switch does not use.
    wire [31:0] params_unused = C_BASEADDR ^ NUM_QUEUES;

    {module} horus_inst (
{conns}
    );
endmodule
",
        header = header(p),
        plugin = super::verilog(p),
        ports = ports.join(",\n"),
        conns = conns.join(",\n"),
    )
}

fn header(p: &BoardParams) -> String {
    format!(
        "// Generated by rtl-gen (Horus): the {switch} switch as the datapath of a NetFPGA-PLUS project on\n\
         // {title}. Do not edit; regenerate with\n\
         //   {command}\n",
        switch = p.switch(),
        title = p.board.title,
        command = p.command(),
    )
}

fn readme(p: &BoardParams) -> String {
    let b = p.board;
    format!(
        "# Horus {switch} switch for {title}

Generated by `{command}`; do not
edit. `hw/hdl/nf_datapath.v` is the datapath of a NetFPGA-PLUS project
(https://github.com/NetFPGA/NetFPGA-PLUS, written for commit {commit}): the switch
(`{module}`, sizes of the `{preset}` preset) between the shell's three streams (0: CMAC 0,
1: CMAC 1, 2: the host's DMA) in module `nf_datapath`, with the reference projects' ports.

- Part: {part}; the switch counts microseconds at {mhz} MHz: build the project's datapath clock
  at that frequency (`datapath_freq_mhz` in `hw/tcl/<project>.tcl`).
- Registers: the switch's are the first window's (`S0_AXI`), from its offset 0: the reference
  projects' crossbar puts M00 at 0 with 16 address bits and hands S0 the addresses unchanged.
  The host reaches offset 0 at BAR2 + 0x{base:x} (the shell's `box1` window), so
  `horusctl --device pci:BDF,base=0x{base:x}`. The other two windows answer SLVERR.
- Ports (the switch's egress port numbers, and the names a configuration may use):
  {ports}.

## Build the bitstream

With the NetFPGA-PLUS tools set up (`source tools/settings.sh`, Vivado on the PATH):

```sh
cd NetFPGA-PLUS/hw/projects
cp -r reference_switch {project}
cp /path/to/build/{board}/hw/hdl/nf_datapath.v {project}/hw/hdl/nf_datapath.v
# in {project}/hw/tcl: rename reference_switch*.tcl to {project}*.tcl and set
# datapath_freq_mhz to {mhz}
export NF_PROJECT_NAME={project} BOARD_NAME=au250
cd {project}/hw && make
```

The reference project's IP (arbiter, lookup, queues) is created by its script and left unused.
Check a configuration for this card before programming it:

```sh
horusctl check --board {board} CONFIG
```
",
        switch = p.switch(),
        command = p.command(),
        project = match p.leaf {
            LeafKind::Jbsq => "horus_leaf_jbsq".to_string(),
            LeafKind::Horus => format!("horus_{}", p.role),
        },
        title = b.title,
        board = b.name,
        preset = p.preset.name,
        commit = NETFPGA_COMMIT,
        module = p.module_name(),
        part = b.part.name,
        mhz = b.clock_mhz,
        base = HOST_WINDOW_BASE,
        ports = b.port_list(),
    )
}
