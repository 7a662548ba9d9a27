//! Lint and synthesis of emitted Verilog: `verilator --lint-only -Wall` (DECLFILENAME aside: rust-hdl
//! puts every module in one file) and Yosys `synth_xilinx -family xcup -uram -nowidelut -nosrl`
//! (UltraScale+, the Alveo family), with the resource figures `docs/results.md` reports and the logic
//! depth: the longest register-to-register path in LUT levels, from a walk of Yosys' JSON netlist
//! (`lut_depth`; Yosys' own `ltp` walks through mapped flip-flops after `synth_xilinx`, so it
//! cannot give this figure).
//!
//! `-nowidelut` keeps ABC to LUT6 and below. Otherwise ABC may build a function of 7 or 8 inputs
//! as a LUT6 with MUXF7 (and MUXF8) behind it, counts such a wide LUT as one level in its
//! depth-oriented mapping, and so lengthens paths in the cells `lut_depth` counts. A MUXF is
//! faster than a LUT and its route, so in delay the two mappings are closer than the counts; without
//! wide LUTs every level is a LUT, and the figure means what it says (measured effect:
//! `docs/pipeline-depth-record.md`).
//!
//! `-nosrl` keeps chains of flip-flops as flip-flops, as the emitted Verilog asks of synthesis
//! (`verilog::no_shift_registers`: Yosys 0.23 ignores the attribute). A stage reading a
//! descriptor field that came through the stages unchanged would read it from an SRL16E, whose
//! read `lut_depth` counts as a level; as flip-flops, the paths that started at an SRL lose that
//! level, for about 12,500 flip-flops a role.
//!
//! The tools are required: a missing tool is an error that says how to install it, never a silent
//! pass (`scripts/test.sh` installs both).
//!
//! By concern: [`lint`] (Verilator's lint, the strict Verilog-2005 readers, test-bench runs),
//! [`synth`] (Yosys for UltraScale+ and its figures), [`depth`] (the LUT levels of a netlist),
//! [`formal`] (yosys-smtbmc proofs); here, the scratch folders and tool runs they share. Every
//! item is re-exported, so a caller names `check::verilator_lint` whichever file it lives in.

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod depth;
pub mod formal;
pub mod lint;
pub mod synth;

pub use depth::*;
pub use formal::*;
pub use lint::*;
pub use synth::*;

/// A scratch folder for `name`, private to this process (test runs may overlap), emptied first.
pub fn work_dir(name: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("horus-hdl-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Runs `f` in a fresh [`work_dir`] for `name` and removes the folder when `f` succeeds; when it
/// fails, the folder stays for a look and the error says where. `HORUS_KEEP_CHECK=1` keeps it
/// either way.
fn in_scratch<T>(name: &str, f: impl FnOnce(&Path) -> Result<T, String>) -> Result<T, String> {
    let dir = work_dir(name)?;
    match f(&dir) {
        Ok(v) => {
            if std::env::var_os("HORUS_KEEP_CHECK").is_none_or(|k| k != "1") {
                let _ = std::fs::remove_dir_all(&dir);
            }
            Ok(v)
        }
        Err(e) => Err(format!("{e}\n(the files are in {})", dir.display())),
    }
}

fn write(dir: &Path, verilog: &str) -> Result<PathBuf, String> {
    let path = dir.join("top.v");
    std::fs::write(&path, verilog).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

fn run(cmd: &mut Command, tool: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| {
        format!(
            "cannot run {tool} ({e}); install it (`apt-get install {tool}`, or run scripts/test.sh)"
        )
    })?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{tool} failed:\n{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::depth::{readable, register};
    use super::synth::parse_report;
    use super::*;
    use serde_json::Value;

    #[test]
    fn scratch_folders_go_when_the_work_succeeds_and_stay_when_it_fails() {
        let mut seen = None;
        let ok = in_scratch("scratch_ok", |dir| {
            std::fs::write(dir.join("f"), "x").map_err(|e| e.to_string())?;
            seen = Some(dir.to_path_buf());
            Ok(7)
        });
        assert_eq!(ok, Ok(7));
        assert!(!seen.unwrap().exists(), "removed after success");
        let mut kept = None;
        let err = in_scratch::<()>("scratch_err", |dir| {
            kept = Some(dir.to_path_buf());
            Err("broken".into())
        })
        .unwrap_err();
        let kept = kept.unwrap();
        assert!(kept.exists(), "kept after a failure");
        assert!(err.starts_with("broken") && err.contains(&kept.display().to_string()));
        std::fs::remove_dir_all(kept).unwrap();
    }

    #[test]
    fn probes_reach_into_the_top_module_and_one_level_down() {
        let v = "module top(clock,o);\n    input wire  clock;\n    output wire  o;\n    wire  [3:0] s$q;\n    assign s$q = 4'd5;\n    top$sub sub(\n        .clock(clock),\n        .o(o)\n    );\nendmodule // top\n\nmodule top$sub(clock,o);\n    input wire  clock;\n    output wire  o;\n    reg  [2:0] hold = 3'd1;\n    assign o = hold[0];\nendmodule // top$sub\n";
        let p = with_probes(v, &["s$q", "sub.hold"]);
        assert!(p.starts_with("module top(clock,o,probe_s_q,probe_sub_hold);"));
        assert!(p.contains("module top$sub(clock,o,probe_hold);"));
        assert!(p.contains("    output wire [2:0] probe_hold;\n    assign probe_hold = hold;\n"));
        assert!(p.contains("    wire [2:0] sub$probe_hold;\n    top$sub sub(\n        .probe_hold(sub$probe_hold),\n"));
        assert!(p.contains("    output wire [3:0] probe_s_q;\n    assign probe_s_q = s$q;\n"));
        assert!(p.contains(
            "    output wire [2:0] probe_sub_hold;\n    assign probe_sub_hold = sub$probe_hold;\n"
        ));
    }

    #[test]
    fn report_counts_luts_flip_flops_and_block_rams() {
        let stat = "   Number of cells: 9\n     FDRE 12\n     LUT2 3\n     LUT6 4\n     RAMB18E2 3\n     RAMB36E2 1\n     CARRY8 2\n     DSP48E2 5\n     URAM288 6\n";
        let r = parse_report(stat);
        assert_eq!(
            (r.luts, r.ffs, r.ramb36, r.urams, r.dsps),
            (7, 12, 2.5, 6, 5)
        );
    }

    use serde_json::json;

    /// A cell: its type, parameters and pins as (name, direction, nets); a number is a net, a
    /// string a constant.
    fn cell(ty: &str, parameters: Value, pins: &[(&str, &str, Value)]) -> Value {
        let dirs: serde_json::Map<String, Value> = pins
            .iter()
            .map(|(p, d, _)| (p.to_string(), json!(d)))
            .collect();
        let conns: serde_json::Map<String, Value> = pins
            .iter()
            .map(|(p, _, b)| (p.to_string(), b.clone()))
            .collect();
        json!({ "type": ty, "parameters": parameters, "port_directions": dirs, "connections": conns })
    }

    /// A flip-flop from net `d` to net `q`, clocked by net 1.
    fn ff(d: u64, q: u64) -> Value {
        cell(
            "FDRE",
            json!({}),
            &[
                ("C", "input", json!([1])),
                ("CE", "input", json!(["1"])),
                ("R", "input", json!(["0"])),
                ("D", "input", json!([d])),
                ("Q", "output", json!([q])),
            ],
        )
    }

    /// A LUT from nets `inputs` to net `o`.
    fn lut(inputs: &[u64], o: u64) -> Value {
        let names = ["I0", "I1", "I2", "I3", "I4", "I5"];
        let mut pins: Vec<_> = (inputs.iter().zip(names))
            .map(|(&n, p)| (p, "input", json!([n])))
            .collect();
        pins.push(("O", "output", json!([o])));
        cell(&format!("LUT{}", inputs.len()), json!({}), &pins)
    }

    /// Module `top` with ports `ports` (name, direction, nets), `cells` named c0, c1, ... and
    /// net names `netnames` (name, nets).
    fn netlist(
        ports: &[(&str, &str, Value)],
        cells: Vec<Value>,
        netnames: &[(&str, Value)],
    ) -> String {
        let ports: serde_json::Map<String, Value> = ports
            .iter()
            .map(|(p, d, b)| (p.to_string(), json!({ "direction": d, "bits": b })))
            .collect();
        let cells: serde_json::Map<String, Value> = (cells.into_iter().enumerate())
            .map(|(i, c)| (format!("c{i}"), c))
            .collect();
        let netnames: serde_json::Map<String, Value> = netnames
            .iter()
            .map(|(n, b)| (n.to_string(), json!({ "hide_name": 0, "bits": b })))
            .collect();
        json!({ "modules": { "top": { "ports": ports, "cells": cells, "netnames": netnames } } })
            .to_string()
    }

    fn depth(json: &str) -> u64 {
        lut_depth(json, "top").unwrap().0
    }

    #[test]
    fn depth_counts_luts_between_flip_flops() {
        // a_q -> LUT -> LUT -> b_q, and a shallower a_q -> LUT -> c_q beside it.
        let cells = vec![ff(2, 10), lut(&[10, 3], 11), lut(&[11, 10], 12), ff(12, 13)];
        let cells = [cells, vec![lut(&[10], 14), ff(14, 15)]].concat();
        // An undriven net (99) carries no path.
        let cells = [cells, vec![lut(&[99], 16), ff(16, 17)]].concat();
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2, 3]))];
        let names = [("a_q", json!([10])), ("b_q", json!([13]))];
        let (levels, deepest) = lut_depth(&netlist(&ports, cells, &names), "top").unwrap();
        assert_eq!(levels, 2);
        assert_eq!(deepest, "from FDRE a_q to FDRE b_q");
    }

    #[test]
    fn deep_paths_are_listed_by_register_with_the_deepest_path_cell_by_cell() {
        // a_q -> 3 LUTs -> b_q[0]; a_q -> 2 LUTs -> b_q[1]; a_q -> 1 LUT -> c_q (not over 1).
        let cells = vec![ff(2, 10), lut(&[10], 11), lut(&[11], 12), lut(&[12], 13)];
        let cells = [cells, vec![ff(13, 20), lut(&[10, 3], 14), lut(&[14], 15)]].concat();
        let cells = [cells, vec![ff(15, 21), lut(&[10], 16), ff(16, 22)]].concat();
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2, 3]))];
        let names = [
            ("a_q", json!([10])),
            ("mid", json!([12])),
            ("b_q", json!([20, 21])),
            ("c_q", json!([22])),
        ];
        let d = lut_depths(&netlist(&ports, cells, &names), "top", 1).unwrap();
        assert_eq!(d.levels, 3);
        assert_eq!(d.deepest, "from FDRE a_q to FDRE b_q[0]");
        // The LUTs without a public output net are named by their cells (c1, c3).
        assert_eq!(d.path, ["FDRE a_q", "LUT1 c1", "LUT1 mid", "LUT1 c3"]);
        let b = DeepEnd {
            levels: 3,
            to: "FDRE b_q".into(),
            from: "FDRE a_q".into(),
            bits: 2,
            path: d.path.clone(),
        };
        assert_eq!(d.over, [b]);
        assert!(
            lut_depths(&netlist(&ports, vec![], &[]), "top", 1)
                .unwrap()
                .over
                .is_empty()
        );
    }

    #[test]
    fn generated_names_are_shortened_and_memories_grouped() {
        assert_eq!(
            readable("LUT2 $abc$22$auto$blifparse.cc:525:x.genblk1.lut0"),
            "LUT2"
        );
        assert_eq!(
            readable(r"CARRY4 $flatten\s.\pool_avg.$lt$top.v:9520$2139.genblk1.slice[2]"),
            "CARRY4 s.pool_avg.$lt$top.v:9520"
        );
        assert_eq!(readable("LUT6 s.t$wr_en"), "LUT6 s.t$wr_en");
        assert_eq!(
            readable(r"CARRY4 $flatten\s.$ge$/tmp/x-1/top.v:9527$2152.genblk1.slice[2]"),
            "CARRY4 s.$ge$top.v:9527"
        );
        assert_eq!(register("FDRE x.q[12]"), "FDRE x.q");
        assert_eq!(register("RAM64M8 t.ram.mem.0.12"), "RAM64M8 t.ram.mem");
        assert_eq!(register("output y[3]"), "output y");
    }

    #[test]
    fn depth_runs_from_inputs_to_outputs_and_ignores_constants_and_clocks() {
        let ports = [
            ("a", "input", json!([2, 3])),
            ("y", "output", json!([20, "0"])),
        ];
        // a -> IBUF -> LUT -> LUT -> OBUF -> y; a LUT of constants only, and a clock made by a
        // LUT, take no part.
        let buf = |ty, i, o| {
            cell(
                ty,
                json!({}),
                &[("I", "input", json!([i])), ("O", "output", json!([o]))],
            )
        };
        let cells = vec![
            buf("IBUF", 2, 4),
            buf("IBUF", 3, 5),
            lut(&[4, 5], 6),
            lut(&[6], 7),
            buf("OBUF", 7, 20),
            cell(
                "LUT2",
                json!({}),
                &[
                    ("I0", "input", json!(["0"])),
                    ("I1", "input", json!(["1"])),
                    ("O", "output", json!([8])),
                ],
            ),
            lut(&[8, 8], 9),
            lut(&[9], 30),
            lut(&[30], 31),
            lut(&[31], 32),
            cell(
                "FDRE",
                json!({}),
                &[
                    ("C", "input", json!([32])),
                    ("D", "input", json!([4])),
                    ("Q", "output", json!([33])),
                ],
            ),
        ];
        let (levels, deepest) = lut_depth(&netlist(&ports, cells, &[]), "top").unwrap();
        assert_eq!(levels, 2);
        assert_eq!(deepest, "from input a[0] to output y[0]");
    }

    /// A CARRY8 from `s` (8 nets) and the carry in `ci` to outputs `o` (8 nets).
    fn carry8(s: &[u64], ci: u64, o: &[u64]) -> Value {
        cell(
            "CARRY8",
            json!({}),
            &[
                ("CI", "input", json!([ci])),
                ("CI_TOP", "input", json!(["0"])),
                (
                    "DI",
                    "input",
                    json!(["0", "0", "0", "0", "0", "0", "0", "0"]),
                ),
                ("S", "input", json!(s)),
                ("O", "output", json!(o)),
                (
                    "CO",
                    "output",
                    json!(["x", "x", "x", "x", "x", "x", "x", o[7] + 100]),
                ),
            ],
        )
    }

    #[test]
    fn a_carry_chain_adds_no_levels_bit_by_bit() {
        // FFs 10..17 -> one LUT each (20..27) -> CARRY8 -> a second CARRY8 -> LUT -> FF.
        let mut cells: Vec<Value> = (0..8).map(|i| ff(2, 10 + i)).collect();
        cells.extend((0..8).map(|i| lut(&[10 + i], 20 + i)));
        let o: Vec<u64> = (30..38).collect();
        cells.push(carry8(&(20..28).collect::<Vec<_>>(), 3, &o));
        let o2: Vec<u64> = (40..48).collect();
        cells.push(carry8(&[o[7] + 100; 8], 3, &o2));
        cells.extend([lut(&[47], 50), ff(50, 51)]);
        let ports = [
            ("clk", "input", json!([1])),
            ("d", "input", json!([2])),
            ("c", "input", json!([3])),
        ];
        assert_eq!(depth(&netlist(&ports, cells.clone(), &[])), 2);
        // Bit 0 of the sum sees only S[0]: a deep cone into S[7] does not reach it.
        cells.pop();
        cells.pop();
        cells.extend([ff(30, 60), lut(&[27], 61), lut(&[61], 62), lut(&[62], 63)]);
        cells.push(carry8(
            &[20, 21, 22, 23, 24, 25, 26, 63],
            3,
            &(70..78).collect::<Vec<_>>(),
        ));
        cells.extend([ff(70, 71), ff(77, 72)]);
        let n = netlist(
            &ports,
            cells,
            &[("low", json!([71])), ("high", json!([72]))],
        );
        let (levels, deepest) = lut_depth(&n, "top").unwrap();
        assert_eq!(levels, 4);
        assert!(deepest.ends_with("to FDRE high"), "{deepest}");
    }

    #[test]
    fn wide_muxes_count_a_level_each() {
        let mux = |ty, a, b, s, o| {
            cell(
                ty,
                json!({}),
                &[
                    ("I0", "input", json!([a])),
                    ("I1", "input", json!([b])),
                    ("S", "input", json!([s])),
                    ("O", "output", json!([o])),
                ],
            )
        };
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[10], 12),
            mux("MUXF7", 11, 12, 10, 13),
            mux("MUXF8", 13, 13, 10, 14),
            ff(14, 15),
        ];
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 3);
    }

    #[test]
    fn a_lutram_read_is_one_level_from_its_address_and_its_writes_end_paths() {
        let ram = |addr: u64, we: u64, o: u64| {
            cell(
                "RAM64M",
                json!({}),
                &[
                    (
                        "ADDRA",
                        "input",
                        json!([addr, addr, addr, addr, addr, addr]),
                    ),
                    ("ADDRD", "input", json!([10, 10, 10, 10, 10, 10])),
                    ("DIA", "input", json!([10])),
                    ("WE", "input", json!([we])),
                    ("WCLK", "input", json!([1])),
                    ("DOA", "output", json!([o])),
                    ("DOD", "output", json!(["x"])),
                ],
            )
        };
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        // FF -> LUT -> LUT -> read address -> data -> LUT -> FF: 4.
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[11], 12),
            ram(12, 10, 13),
            lut(&[13], 14),
            ff(14, 15),
        ];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 4);
        // A constant read address: the contents start the path, one level before the LUT.
        let cells = vec![ff(2, 10), ram(99, 10, 13), lut(&[13], 14), ff(14, 15)];
        let cells = [
            cells,
            vec![cell("GND", json!({}), &[("G", "output", json!([99]))])],
        ]
        .concat();
        assert_eq!(depth(&netlist(&ports, cells, &[])), 2);
        // The write enable through three LUTs ends at the RAM.
        let cells = vec![
            ff(2, 10),
            lut(&[10], 11),
            lut(&[11], 12),
            lut(&[12], 16),
            ram(10, 16, 13),
            ff(13, 15),
        ];
        assert_eq!(depth(&netlist(&ports, cells, &[])), 3);
    }

    #[test]
    fn a_dsp_is_followed_register_by_register() {
        let dsp = |preg: &str, areg: &str| {
            cell(
                "DSP48E2",
                json!({ "PREG": preg, "AREG": areg, "BREG": "0", "MREG": "00000000000000000000000000000000", "USE_MULT": "MULTIPLY" }),
                &[
                    ("A", "input", json!([11])),
                    ("B", "input", json!([10])),
                    ("CLK", "input", json!([1])),
                    ("CEP", "input", json!(["1"])),
                    ("P", "output", json!([12, 13])),
                ],
            )
        };
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        // FF -> LUT -> A -> P -> LUT -> FF.
        let around = |d| vec![ff(2, 10), lut(&[10], 11), d, lut(&[13], 14), ff(14, 15)];
        let combinational = "00000000000000000000000000000000";
        assert_eq!(
            depth(&netlist(&ports, around(dsp(combinational, "0")), &[])),
            2
        );
        assert_eq!(depth(&netlist(&ports, around(dsp("1", "0")), &[])), 1);
        assert_eq!(
            depth(&netlist(&ports, around(dsp(combinational, "2")), &[])),
            1
        );
    }

    #[test]
    fn unknown_cells_and_loops_are_errors() {
        let ports = [("clk", "input", json!([1])), ("d", "input", json!([2]))];
        let odd = cell(
            "XORCY",
            json!({}),
            &[("LI", "input", json!([2])), ("O", "output", json!([3]))],
        );
        let e = lut_depth(&netlist(&ports, vec![odd, ff(3, 4)], &[]), "top").unwrap_err();
        assert!(e.contains("XORCY"), "{e}");
        let cells = vec![ff(2, 10), lut(&[10, 12], 11), lut(&[11], 12), ff(12, 13)];
        let e = lut_depth(&netlist(&ports, cells, &[]), "top").unwrap_err();
        assert!(e.contains("combinational loop"), "{e}");
        assert!(lut_depth(&netlist(&ports, vec![], &[]), "other").is_err());
    }
}
