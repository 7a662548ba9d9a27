//! The board targets (`rtl-gen --board`): the OpenNIC plug-in folder for every OpenNIC board,
//! its instantiation against the shell's parameters, the plug-in linted inside a stub of the
//! shell's box, the constraints' names against the generated flip-flops, a configuration
//! checked against a board, and the NetFPGA-PLUS datapath with the reference projects' ports.
//! The plug-in at the depth and area targets, synthesized in the box, is `board_targets.rs`.

use horus_hdl_tools::check::verilator_lint_top;
use horus_model::config::Role;
use horus_pipeline::board::boards::{self, BOARDS, Shell};
use rtl_gen::boards::{BoardParams, check_config, files, in_shell, opennic};

fn params(board: &str, role: Role, preset: &str) -> BoardParams {
    BoardParams::new(boards::board(board).unwrap(), role, preset, 1, 60).unwrap()
}

fn file<'a>(files: &'a [rtl_gen::GeneratedFile], name: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .content
}

#[test]
fn every_opennic_board_gets_the_plugin_folder_the_shell_takes() {
    for b in BOARDS.iter().filter(|b| b.shell == Shell::OpenNic) {
        let p = params(b.name, Role::Leaf, "small");
        let f = files(&p).unwrap();
        let n = b.name;
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                format!("{n}/plugin/horus_box_leaf_small.v"),
                format!("{n}/plugin/horus_box.xdc"),
                format!("{n}/plugin/build_box_250mhz.tcl"),
                format!("{n}/plugin/box_250mhz/user_plugin_250mhz_inst.vh"),
                format!("{n}/plugin/box_250mhz/box_250mhz_address_map_inst.vh"),
                format!("{n}/plugin/box_250mhz/box_250mhz_address_map.v"),
                format!("{n}/plugin/box_250mhz/box_250mhz_axi_crossbar.tcl"),
                format!("{n}/README.md"),
            ]
        );
        let macs = b.mac_ports();
        let inst = file(
            &f,
            &format!("{n}/plugin/box_250mhz/user_plugin_250mhz_inst.vh"),
        );
        assert!(inst.contains(&format!("if (NUM_CMAC_PORT != {macs}) begin")));
        assert!(inst.contains(&format!("horus_box_leaf_small {} (", opennic::INSTANCE)));
        assert_eq!(
            inst.contains("s_axis_adap_rx_250mhz_tdata[512 +: 512]"),
            macs == 2,
            "{n}: the second MAC stream only where the board has it"
        );
        let tcl = file(&f, &format!("{n}/plugin/build_box_250mhz.tcl"));
        assert!(tcl.contains("read_verilog -quiet horus_box_leaf_small.v"));
        assert!(tcl.contains("horus_box.xdc"));
        let readme = file(&f, &format!("{n}/README.md"));
        assert!(readme.contains(&format!(
            "-tclargs -board {n} -num_cmac_port {macs} -impl 1"
        )));
        assert!(readme.contains(b.part.name));
        assert_eq!(file(&f, &format!("{n}/plugin/horus_box.xdc")), opennic::XDC);
    }
}

#[test]
fn the_plugin_is_lint_clean_inside_the_shells_box() {
    // Two MAC ports and one; a leaf and a spine.
    for (board, role) in [("au250", Role::Leaf), ("au50", Role::Spine)] {
        let p = params(board, role, "small");
        let (text, top) = in_shell(&p).unwrap();
        assert_eq!(top, "box_250mhz");
        verilator_lint_top(&format!("box-{board}"), &text, top).unwrap();
    }
}

/// The flip-flop paths (`a/b/c`) the constraints name after `*/horus_inst/` and before
/// `/q_reg`.
fn xdc_paths(xdc: &str) -> Vec<String> {
    let prefix = format!("NAME =~ */{}/", opennic::INSTANCE);
    let mut out = Vec::new();
    for line in xdc.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut rest = line;
        while let Some(at) = rest.find("NAME =~ ") {
            let pattern = &rest[at..];
            let end = pattern.find('}').expect("a filter ends with }");
            let pattern = &pattern[..end];
            let path = pattern
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{pattern}: not under the plug-in's instance"));
            let path = path
                .split_once("/q_reg")
                .unwrap_or_else(|| panic!("{pattern}: not a flip-flop's register"))
                .0;
            out.push(path.to_string());
            rest = &rest[at + end..];
        }
    }
    out
}

#[test]
fn the_constraints_name_flip_flops_of_the_plugin() {
    let jbsq = BoardParams::jbsq(boards::board("au250").unwrap(), "small", 1, 60).unwrap();
    for p in [params("au250", Role::Leaf, "small"), jbsq] {
        constraints_name_flip_flops_of(&p);
    }
}

fn constraints_name_flip_flops_of(p: &BoardParams) {
    let verilog = rtl_gen::boards::verilog(p);
    let paths = xdc_paths(opennic::XDC);
    assert_eq!(paths.len(), 11, "{paths:?}");
    for path in paths {
        // rust-hdl names a flip-flop's module after its path: top$cdc$req_meta(d,q,clock).
        let module = format!(
            "module {}${}(d,q,clock);",
            p.module_name(),
            path.replace('/', "$")
        );
        assert!(verilog.contains(&module), "no flip-flop {path}: {module}");
    }
    // The synchronizers' flip-flops are marked ASYNC_REG.
    for sync in [
        "core$cdc$req_meta",
        "core$cdc$ack_meta",
        "rst_meta",
        "core$cdc$req_sync",
        "rst_sync",
    ] {
        let module = format!("module {}${sync}(d,q,clock);", p.module_name());
        let at = verilog.find(&module).unwrap_or_else(|| panic!("{module}"));
        assert!(
            verilog[at..]
                .lines()
                .take(6)
                .any(|l| l.contains("ASYNC_REG")),
            "{sync} is not marked ASYNC_REG"
        );
    }
}

#[test]
fn a_configuration_is_checked_against_the_board_role_and_preset() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config = std::path::Path::new(dir).join("../configs/au250-leaf.toml");
    let leaf = params("au250", Role::Leaf, "default");
    let cfg = check_config(&leaf, &config).unwrap();
    assert_eq!(cfg.switch.control_port, 2, "host0");
    let e = check_config(&params("au50", Role::Leaf, "default"), &config).unwrap_err();
    assert!(
        format!("{e:#}").contains("switch.pass_through_port: au50 has no port named \"cmac1\""),
        "{e:#}"
    );
    let e = check_config(&params("au250", Role::Spine, "default"), &config).unwrap_err();
    assert!(format!("{e:#}").contains("switch.role is leaf"), "{e:#}");
    let e = check_config(&params("au250", Role::Leaf, "small"), &config).unwrap_err();
    assert!(format!("{e:#}").contains("not the preset small's"), "{e:#}");
}

#[test]
fn the_netfpga_target_is_an_nf_datapath_with_the_reference_ports_and_lints_clean() {
    let p = params("netfpga-plus", Role::Leaf, "small");
    let f = files(&p).unwrap();
    let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "netfpga-plus/hw/hdl/nf_datapath.v",
            "netfpga-plus/README.md"
        ]
    );
    let v = file(&f, "netfpga-plus/hw/hdl/nf_datapath.v");
    // The reference projects' ports, as the shell's top.v connects them.
    for port in [
        "input axis_aclk",
        "input axi_resetn",
        "input [C_S_AXI_ADDR_WIDTH-1:0] S0_AXI_AWADDR",
        "input [C_S_AXI_DATA_WIDTH/8-1:0] S2_AXI_WSTRB",
        "output [1:0] S1_AXI_BRESP",
        "input [C_S_AXIS_TUSER_WIDTH-1:0] s_axis_2_tuser",
        "output  m_axis_0_tlast",
        "input  m_axis_1_tready",
    ] {
        assert!(v.contains(port), "no `{port}`");
    }
    assert!(
        v.contains(".s0_axi_awaddr(S0_AXI_AWADDR)"),
        "S0 takes the crossbar's addresses as they are"
    );
    assert!(v.contains("horus_nf_leaf_small horus_inst ("));
    assert!(file(&f, "netfpga-plus/README.md").contains("datapath_freq_mhz"));
    let (text, top) = in_shell(&p).unwrap();
    assert_eq!(top, "nf_datapath");
    verilator_lint_top("nf-datapath", &text, top).unwrap();
}

#[test]
fn the_jbsq_leaf_gets_both_shells_targets_and_lints_clean_in_them() {
    let p = BoardParams::jbsq(boards::board("au250").unwrap(), "small", 1, 60).unwrap();
    assert_eq!(p.module_name(), "horus_box_leaf_jbsq_small");
    let f = files(&p).unwrap();
    assert!(
        f.iter()
            .any(|f| f.name == "au250/plugin/horus_box_leaf_jbsq_small.v")
    );
    let inst = file(&f, "au250/plugin/box_250mhz/user_plugin_250mhz_inst.vh");
    assert!(inst.contains(&format!(
        "horus_box_leaf_jbsq_small {} (",
        opennic::INSTANCE
    )));
    assert!(inst.contains("--board au250 --role leaf --leaf jbsq --preset small"));
    let readme = file(&f, "au250/README.md");
    assert!(
        readme.starts_with("# Horus JBSQ leaf switch for"),
        "{readme}"
    );
    // The plug-in holds the JBSQ leaf: its counters, and its register map answering "HORJ".
    let v = rtl_gen::boards::verilog(&p);
    assert!(v.contains("module horus_box_leaf_jbsq_small$core$switch$core$counters("));
    assert!(v.contains("id_value = 32'h484f524a;"));
    let (text, top) = in_shell(&p).unwrap();
    verilator_lint_top("box-au250-jbsq", &text, top).unwrap();

    let nf = BoardParams::jbsq(boards::board("netfpga-plus").unwrap(), "small", 1, 60).unwrap();
    let f = files(&nf).unwrap();
    let v = file(&f, "netfpga-plus/hw/hdl/nf_datapath.v");
    assert!(v.contains("horus_nf_leaf_jbsq_small horus_inst ("));
    let readme = file(&f, "netfpga-plus/README.md");
    assert!(
        readme.contains("cp -r reference_switch horus_leaf_jbsq"),
        "{readme}"
    );
    let (text, top) = in_shell(&nf).unwrap();
    verilator_lint_top("nf-datapath-jbsq", &text, top).unwrap();
}

#[test]
fn a_jbsq_configuration_is_checked_against_the_leaf_kind_and_its_preset() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let au250 = boards::board("au250").unwrap();
    let jbsq = |preset| BoardParams::jbsq(au250, preset, 1, 60).unwrap();
    let cfg = check_config(&jbsq("default"), &dir.join("au250-leaf-jbsq.toml")).unwrap();
    assert_eq!((cfg.switch.id, cfg.switch.control_port), (3, 2));
    // The leaf kinds must agree, both ways.
    let paper = params("au250", Role::Leaf, "default");
    let e = check_config(&paper, &dir.join("au250-leaf-jbsq.toml")).unwrap_err();
    assert!(
        format!("{e:#}").contains("switch.leaf is \"jbsq\", the target's \"horus\" (--leaf)"),
        "{e:#}"
    );
    let e = check_config(&jbsq("default"), &dir.join("au250-leaf.toml")).unwrap_err();
    assert!(
        format!("{e:#}").contains("switch.leaf is \"horus\", the target's \"jbsq\" (--leaf)"),
        "{e:#}"
    );
    // The small preset's tables are smaller than the configuration's.
    let e = check_config(&jbsq("small"), &dir.join("au250-leaf-jbsq.toml")).unwrap_err();
    assert!(
        format!("{e:#}").contains("not the JBSQ preset small's (4 pools, 64 nodes"),
        "{e:#}"
    );
    // Ports the board lacks (the example's workers sit behind port 8).
    let e = check_config(&jbsq("default"), &dir.join("example-leaf-jbsq.toml")).unwrap_err();
    assert!(format!("{e:#}").contains("au250 has no port 8"), "{e:#}");
    assert!(BoardParams::jbsq(au250, "nosuch", 1, 60).is_err());
}

/// `rtl-gen --board B` builds the leaf that holds tasks unless told otherwise: `--leaf horus`,
/// a configuration whose `[switch] leaf` is the paper's, or a spine get the paper's switch.
#[test]
fn a_board_targets_leaf_is_the_one_that_holds_tasks_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let configs = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rtl-gen"))
            .args(["--board", "au250", "--out"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let module = |text: &str, m: &str| text.contains(&format!("plugin/{m}.v"));
    assert!(module(&run(&[]), "horus_box_leaf_jbsq"));
    assert!(module(&run(&["--leaf", "horus"]), "horus_box_leaf"));
    let paper = format!("{configs}au250-leaf.toml");
    let text = run(&["--config", &paper]);
    assert!(
        module(&text, "horus_box_leaf") && !module(&text, "horus_box_leaf_jbsq"),
        "{text}"
    );
    let jbsq = format!("{configs}au250-leaf-jbsq.toml");
    assert!(module(&run(&["--config", &jbsq]), "horus_box_leaf_jbsq"));
    assert!(module(&run(&["--role", "spine"]), "horus_box_spine"));
}
