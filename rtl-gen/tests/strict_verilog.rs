//! Every emitted Verilog file read by the strict readers a user's tools are (`iverilog -g2005`,
//! Yosys without `-sv`: the Verilog-2005 that Vivado's `read_verilog` takes), and the NetFPGA-PLUS
//! datapath's registers read and written through a model of the reference projects' crossbar,
//! in Verilator and in Icarus Verilog.

use horus_hdl_tools::check::{iverilog_run, strict_read, verilator_run};
use horus_model::config::Role;
use horus_pipeline::board::boards::{self, BOARDS, Shell};
use horus_pipeline::regmap;
use rtl_gen::boards::{BoardParams, files, in_shell};
use rtl_gen::{GeneratedFile, Output, Params};

fn board_params(board: &str, role: Role, preset: &str) -> BoardParams {
    BoardParams::new(boards::board(board).unwrap(), role, preset, 1, 60).unwrap()
}

/// Each `.v` file of `files` with the module it is read from: the file's name, or `nf_datapath`.
fn verilog_files(files: Vec<GeneratedFile>) -> Vec<(String, String, String)> {
    files
        .into_iter()
        .filter(|f| f.name.ends_with(".v") && f.content.contains("module "))
        .map(|f| {
            let stem = f.name.rsplit('/').next().unwrap().trim_end_matches(".v");
            let top = if stem == "nf_datapath" {
                "nf_datapath".to_string()
            } else {
                stem.to_string()
            };
            (f.name, top, f.content)
        })
        .collect()
}

#[test]
fn every_emitted_verilog_file_reads_as_verilog_2005() {
    let mut all = verilog_files(rtl_gen::generate(&Params::default()).unwrap());
    let small = Params {
        preset: "small".into(),
        ..Params::default()
    };
    all.extend(verilog_files(
        rtl_gen::outputs::switch::Switches.files(&small).unwrap(),
    ));
    // One board of each shell, both roles and the JBSQ leaf.
    for shell in [Shell::OpenNic, Shell::NetFpgaPlus] {
        let b = BOARDS.iter().find(|b| b.shell == shell).unwrap();
        for role in [Role::Leaf, Role::Spine] {
            all.extend(verilog_files(
                files(&board_params(b.name, role, "small")).unwrap(),
            ));
        }
        let jbsq = BoardParams::jbsq(b, "small", 1, 60).unwrap();
        all.extend(verilog_files(files(&jbsq).unwrap()));
    }
    assert!(all.len() >= 10, "{} files", all.len());
    for (name, top, text) in &all {
        assert!(
            text.starts_with(horus_hdl_tools::verilog::TIMESCALE)
                || text.contains(&format!("\n{}", horus_hdl_tools::verilog::TIMESCALE)),
            "{name}: no `timescale"
        );
        let scratch = format!("strict-{}", name.replace('/', "-"));
        if let Err(e) = strict_read(&scratch, text, top) {
            panic!("{name} (top {top}): {e}");
        }
    }
}

#[test]
fn a_continuous_assignment_to_a_reg_is_refused() {
    // The mutant the readers exist for: what rust-hdl writes for a hand-written primitive.
    let v = "`timescale 1ns/1ps\nmodule m(a, y);\n    input wire  a;\n    output reg  y;\n    \
             assign y = a;\nendmodule\n";
    let e = strict_read("strict-mutant", v, "m").unwrap_err();
    assert!(e.contains("iverilog -g2005"), "{e}");
    let fixed = horus_hdl_tools::verilog::normalize(v);
    strict_read("strict-mutant-fixed", &fixed, "m").unwrap();
}

/// The test bench around `nf_datapath` with `accesses` in place of `// ACCESSES`.
fn crossbar_tb(accesses: &str) -> String {
    include_str!("verilog/nf_crossbar_tb.v").replace("        // ACCESSES\n", accesses)
}

#[test]
fn netfpga_registers_answer_at_s0_offset_0_through_the_reference_crossbar() {
    let p = board_params("netfpga-plus", Role::Leaf, "small");
    let (datapath, top) = in_shell(&p).unwrap();
    assert_eq!(top, "nf_datapath");
    let id = &regmap::fields::ID;
    let switch_id = &regmap::fields::SWITCH_ID;
    assert_eq!(switch_id.lsb, 0);
    let (id_at, word4) = (id.byte_address() as u32, switch_id.byte_address() as u32);
    let outside = 1u32 << horus_pipeline::axil::AXIL_ADDR_BITS;
    let accesses = [
        format!("        read(32'h{id_at:08x});\n"),
        format!("        write(32'h{word4:08x}, 32'h2bad0007);\n"),
        format!("        read(32'h{word4:08x});\n"),
        // Beyond the switch's window in S0, in S1, in S2, and no window's.
        format!("        read(32'h{outside:08x});\n"),
        "        read(32'h00010000);\n".into(),
        "        write(32'h00020004, 32'h1);\n".into(),
        "        read(32'h00030000);\n".into(),
    ]
    .concat();
    let want = [
        format!("read {id_at:08x} {:08x} 0", regmap::ID_VALUE),
        format!("write {word4:08x} 0"),
        format!("read {word4:08x} 2bad0007 0"),
        format!("read {outside:08x} 00000000 2"),
        "read 00010000 00000000 2".into(),
        "write 00020004 2".into(),
        "read 00030000 00000000 3".into(),
        "done".into(),
    ];
    let tb = crossbar_tb(&accesses);
    let files = [("tb.v", tb.as_str()), ("nf_datapath.v", datapath.as_str())];
    for (sim, out) in [
        ("verilator", verilator_run("nf-crossbar-verilator", &files)),
        ("iverilog", iverilog_run("nf-crossbar-iverilog", &files)),
    ] {
        let out = out.unwrap_or_else(|e| panic!("{sim}: {e}"));
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("read") || l.starts_with("write") || *l == "done")
            .collect();
        assert_eq!(lines, want, "{sim}:\n{out}");
    }
}
