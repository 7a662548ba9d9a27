//! The JBSQ leaf's scenario on Verilator: the emitted leaf ([`verilog`], [`run_verilated`]) and
//! the leaf inside each shell's board plug-in in a test bench with the top level's ports
//! ([`box_verilog`], [`BOX_TOP`]).

use super::*;

/// The preset's JBSQ leaf as `rtl-gen` emits it, its generator seeded with `seed`, its connection
/// entries expiring after the configuration's timeout.
pub fn verilog(preset: &JbsqPreset, cfg: &Config, seed: u64) -> String {
    rtl_gen::outputs::switch::jbsq_verilog(preset, seed, cfg.switch.conn_timeout_us)
}

/// Runs `scenario` on a Verilated JBSQ leaf (`model`, built from [`verilog`]).
pub fn run_verilated(model: &Model, mut scenario: Scenario) -> Result<Report> {
    let mut dut = model.instance()?;
    let p = |n: &str| model.port(n).clone();
    let (s_tdata, s_tkeep, s_tvalid, s_tlast) = (
        p("s_axis_tdata"),
        p("s_axis_tkeep"),
        p("s_axis_tvalid"),
        p("s_axis_tlast"),
    );
    let (m_tdata, m_tkeep, m_tvalid, m_tlast, m_tuser, m_tready) = (
        p("m_axis_tdata"),
        p("m_axis_tkeep"),
        p("m_axis_tvalid"),
        p("m_axis_tlast"),
        p("m_axis_tuser"),
        p("m_axis_tready"),
    );
    let s_tready = p("s_axis_tready");
    let (awaddr, awvalid, awready, wdata, wstrb, wvalid) = (
        p("s_axil_awaddr"),
        p("s_axil_awvalid"),
        p("s_axil_awready"),
        p("s_axil_wdata"),
        p("s_axil_wstrb"),
        p("s_axil_wvalid"),
    );
    let (bready, bvalid, bresp) = (p("s_axil_bready"), p("s_axil_bvalid"), p("s_axil_bresp"));
    let (araddr, arvalid, arready) = (p("s_axil_araddr"), p("s_axil_arvalid"), p("s_axil_arready"));
    let (rready, rvalid, rdata, rresp) = (
        p("s_axil_rready"),
        p("s_axil_rvalid"),
        p("s_axil_rdata"),
        p("s_axil_rresp"),
    );
    let (now_us, trace_valid, trace, in_flight, overflow, rng_state) = (
        p("now_us"),
        p("trace_valid"),
        p("trace_pass"),
        p("in_flight"),
        p("overflow"),
        p("rng_state"),
    );
    let phv = JbsqPhv::default();
    let bit = |w: &[u32], off: usize| field(w, off, 1) == 1;
    let offs = [
        phv.get_my_offset_is_retry(),
        phv.get_my_offset_is_return(),
        phv.get_my_offset_is_ctl_pool(),
        phv.get_my_offset_is_ctl_add(),
        phv.get_my_offset_is_ctl_remove(),
        phv.get_my_offset_is_ctl_place(),
        phv.get_my_offset_is_ctl_read(),
        phv.get_my_offset_is_ctl_bound(),
        phv.get_my_offset_is_ctl_pool_params(),
    ];
    let time = (phv.get_my_offset_time(), phv.get_my_width_time());
    dut.set(&wstrb, &[0xf]);
    dut.set(&bready, &[1]);
    dut.set(&rready, &[1]);
    dut.step();
    let mut o = PinsOut {
        m_tdata: vec![0; 64],
        ..PinsOut::default()
    };
    loop {
        let i = scenario.inputs()?;
        let mut data = [0u32; 16];
        for (w, b) in data.iter_mut().zip(i.s_tdata.chunks(4)) {
            let mut le = [0u8; 4];
            le[..b.len()].copy_from_slice(b);
            *w = u32::from_le_bytes(le);
        }
        dut.set(&s_tdata, &data);
        dut.set_u64(&s_tkeep, i.s_tkeep);
        dut.set(&s_tvalid, &[u32::from(i.s_tvalid)]);
        dut.set(&s_tlast, &[u32::from(i.s_tlast)]);
        dut.set(&m_tready, &[u32::from(i.m_tready)]);
        dut.set(&now_us, &[i.now_us]);
        dut.set(&awaddr, &[u32::from(i.awaddr)]);
        dut.set(&awvalid, &[u32::from(i.awvalid)]);
        dut.set(&wdata, &[i.wdata]);
        dut.set(&wvalid, &[u32::from(i.wvalid)]);
        dut.set(&araddr, &[u32::from(i.araddr)]);
        dut.set(&arvalid, &[u32::from(i.arvalid)]);
        dut.step();
        o.s_tready = dut.get_bit(&s_tready);
        for (k, w) in dut.get(&m_tdata).iter().enumerate() {
            o.m_tdata[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
        }
        o.m_tkeep = dut.get_u64(&m_tkeep);
        o.m_tvalid = dut.get_bit(&m_tvalid);
        o.m_tlast = dut.get_bit(&m_tlast);
        o.m_tuser = dut.get(&m_tuser)[0];
        o.awready = dut.get_bit(&awready);
        o.bvalid = dut.get_bit(&bvalid);
        o.bresp = dut.get(&bresp)[0];
        o.arready = dut.get_bit(&arready);
        o.rvalid = dut.get_bit(&rvalid);
        o.rdata = dut.get(&rdata)[0];
        o.rresp = dut.get(&rresp)[0];
        o.in_flight = dut.get(&in_flight)[0];
        o.overflow = dut.get_bit(&overflow);
        o.rng_state = dut.get_u64(&rng_state);
        o.trace = dut.get_bit(&trace_valid).then(|| {
            let w = dut.get(&trace);
            TracePass {
                second: bit(w, offs[0]) || bit(w, offs[1]),
                operation: bit(w, offs[2])
                    || bit(w, offs[3])
                    || bit(w, offs[4])
                    || bit(w, offs[7])
                    || bit(w, offs[8]),
                control: bit(w, offs[5]) || bit(w, offs[6]),
                time: field(w, time.0, time.1) as u32,
            }
        });
        if scenario.outputs(&i, &o)? {
            return Ok(scenario.report().clone());
        }
    }
}

/// The test bench's module around a board's plug-in ([`box_verilog`]).
pub const BOX_TOP: &str = "horus_jbsq_box_tb";

/// The JBSQ leaf's board plug-in for `p` (`rtl_gen::boards::verilog`, a `--leaf jbsq` target)
/// inside a test-bench module ([`BOX_TOP`]) with the top level's ports, so that a scenario runs
/// on it as on the top ([`run_verilated`]); and the plug-in's `BUILD_HASH`.
///
/// - The scenario's input stream is the shell's first (CMAC 0's); the other two stay idle (the
///   arbiter's merging of three is the paper plug-ins' test's, `box_bench`).
/// - The three output streams (a frame goes whole to one at a time: the demultiplexer holds no
///   frame) are merged back into one, their index the port in `m_axis_tuser[7:0]` and the
///   shell's length field in `[27:16]`; a frame whose shell destination or source field is not
///   its stream's has bit 7 of the port set, so the scoreboard sees a wrong port. All three are
///   ready when the scenario's output is.
/// - The register window runs on the core clock (the bridge between two clocks is the same
///   block in every plug-in, exercised at half rate by `box_bench`), whole words on OpenNIC's
///   (no byte strobes); no reset is given.
/// - `now_us` is the plug-in's own microsecond clock: the bench's input is left unused, and the
///   model takes each pass's time from the trace.
/// - The trace, generator state, passes in flight and overflow are read from inside the plug-in.
pub fn box_verilog(p: &rtl_gen::boards::BoardParams) -> Result<(String, u32)> {
    use horus_pipeline::board::boards::Shell;
    use horus_pipeline::board::{netfpga, opennic};
    if p.leaf != horus_model::sched::jbsq::LeafKind::Jbsq {
        bail!("{}: not the JBSQ leaf's plug-in", p.module_name());
    }
    let plugin = rtl_gen::boards::verilog(p);
    let hash = horus_regs::identity::build_hash(&plugin)?;
    let module = p.module_name();
    let trace_bits = <JbsqPhv as rust_hdl::prelude::Synth>::BITS;
    let (conns, outs): (Vec<String>, [(String, String); 3]) = match p.board.shell {
        Shell::OpenNic => {
            let mut c: Vec<String> = [
                ".axil_aclk(clk)",
                ".axis_aclk(clk)",
                ".mod_rstn(1'b1)",
                ".mod_rst_done()",
                ".s_rx0_tdata(s_axis_tdata)",
                ".s_rx0_tkeep(s_axis_tkeep)",
                ".s_rx0_tvalid(s_axis_tvalid)",
                ".s_rx0_tready(s_axis_tready)",
                ".s_rx0_tlast(s_axis_tlast)",
            ]
            .map(String::from)
            .to_vec();
            for s in ["s_rx1", "s_h2c"] {
                c.extend([
                    format!(".{s}_tdata(512'd0)"),
                    format!(".{s}_tkeep(64'd0)"),
                    format!(".{s}_tvalid(1'b0)"),
                    format!(".{s}_tready()"),
                    format!(".{s}_tlast(1'b0)"),
                ]);
            }
            for a in ["awaddr", "araddr"] {
                c.push(format!(".s_axil_{a}({{16'd0, s_axil_{a}}})"));
            }
            for a in [
                "awvalid", "awready", "wdata", "wvalid", "wready", "bresp", "bvalid",
            ] {
                c.push(format!(".s_axil_{a}(s_axil_{a})"));
            }
            for a in [
                "bready", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready",
            ] {
                c.push(format!(".s_axil_{a}(s_axil_{a})"));
            }
            let mut outs: [(String, String); 3] = Default::default();
            for (i, s) in ["m_tx0", "m_tx1", "m_c2h"].iter().enumerate() {
                c.extend(
                    [
                        "tdata",
                        "tkeep",
                        "tvalid",
                        "tlast",
                        "tuser_size",
                        "tuser_src",
                        "tuser_dst",
                    ]
                    .map(|f| format!(".{s}_{f}(o{i}_{f})")),
                );
                c.push(format!(".{s}_tready(m_axis_tready)"));
                outs[i] = (
                    format!("o{i}_tuser_size[11:0]"),
                    format!(
                        "o{i}_tuser_dst != 16'd{} || o{i}_tuser_src != 16'd0 || o{i}_tuser_size[15:12] != 4'd0",
                        opennic::TUSER_DST[i]
                    ),
                );
            }
            (c, outs)
        }
        Shell::NetFpgaPlus => {
            let mut c: Vec<String> = [
                ".axis_aclk(clk)",
                ".axis_resetn(1'b1)",
                ".axi_aclk(clk)",
                ".axi_resetn(1'b1)",
            ]
            .map(String::from)
            .to_vec();
            for a in ["awaddr", "araddr"] {
                c.push(format!(".s0_axi_{a}({{16'd0, s_axil_{a}}})"));
            }
            for a in [
                "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid",
                "bready", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready",
            ] {
                c.push(format!(".s0_axi_{a}(s_axil_{a})"));
            }
            for w in ["s1_axi", "s2_axi"] {
                for (a, v) in [
                    ("awaddr", "32'd0"),
                    ("awvalid", "1'b0"),
                    ("wdata", "32'd0"),
                    ("wstrb", "4'd0"),
                    ("wvalid", "1'b0"),
                    ("bready", "1'b0"),
                    ("araddr", "32'd0"),
                    ("arvalid", "1'b0"),
                    ("rready", "1'b0"),
                ] {
                    c.push(format!(".{w}_{a}({v})"));
                }
                for a in [
                    "arready", "rdata", "rresp", "rvalid", "wready", "bresp", "bvalid", "awready",
                ] {
                    c.push(format!(".{w}_{a}()"));
                }
            }
            c.extend(
                ["tdata", "tkeep", "tvalid", "tready", "tlast"]
                    .map(|f| format!(".s_axis_0_{f}(s_axis_{f})")),
            );
            c.push(".s_axis_0_tuser(128'd0)".into());
            for s in ["s_axis_1", "s_axis_2"] {
                c.extend([
                    format!(".{s}_tdata(512'd0)"),
                    format!(".{s}_tkeep(64'd0)"),
                    format!(".{s}_tuser(128'd0)"),
                    format!(".{s}_tvalid(1'b0)"),
                    format!(".{s}_tready()"),
                    format!(".{s}_tlast(1'b0)"),
                ]);
            }
            let mut outs: [(String, String); 3] = Default::default();
            for (i, out) in outs.iter_mut().enumerate() {
                c.extend(
                    ["tdata", "tkeep", "tvalid", "tlast", "tuser"]
                        .map(|f| format!(".m_axis_{i}_{f}(o{i}_{f})")),
                );
                c.push(format!(".m_axis_{i}_tready(m_axis_tready)"));
                *out = (
                    format!("o{i}_tuser[11:0]"),
                    format!(
                        "o{i}_tuser[31:16] != 16'd{} || o{i}_tuser[127:32] != 96'd0 || o{i}_tuser[15:12] != 4'd0",
                        netfpga::TUSER_DST[i] << 8
                    ),
                );
            }
            (c, outs)
        }
    };
    let wires: Vec<String> = (0..3)
        .flat_map(|i| {
            let user = match p.board.shell {
                Shell::OpenNic => vec![format!(
                    "    wire [15:0] o{i}_tuser_size, o{i}_tuser_src, o{i}_tuser_dst;"
                )],
                Shell::NetFpgaPlus => vec![format!("    wire [127:0] o{i}_tuser;")],
            };
            [
                format!("    wire [511:0] o{i}_tdata;"),
                format!("    wire [63:0] o{i}_tkeep;"),
                format!("    wire o{i}_tvalid, o{i}_tlast;"),
            ]
            .into_iter()
            .chain(user)
        })
        .collect();
    let pick = |f: &str, zero: &str| {
        format!("o0_tvalid ? o0_{f} : o1_tvalid ? o1_{f} : o2_tvalid ? o2_{f} : {zero}")
    };
    let len = |i: usize| outs[i].0.clone();
    // The top level's ports (`JbsqTop`'s), one declaration a line.
    let ports: Vec<(&str, usize, &str)> = vec![
        ("input", 1, "clk"),
        ("input", 1, "rst"),
        ("input", 512, "s_axis_tdata"),
        ("input", 64, "s_axis_tkeep"),
        ("input", 1, "s_axis_tvalid"),
        ("output", 1, "s_axis_tready"),
        ("input", 1, "s_axis_tlast"),
        ("input", 16, "s_axis_tuser"),
        ("output", 512, "m_axis_tdata"),
        ("output", 64, "m_axis_tkeep"),
        ("output", 1, "m_axis_tvalid"),
        ("input", 1, "m_axis_tready"),
        ("output", 1, "m_axis_tlast"),
        ("output", 32, "m_axis_tuser"),
        ("input", 16, "s_axil_awaddr"),
        ("input", 1, "s_axil_awvalid"),
        ("output", 1, "s_axil_awready"),
        ("input", 32, "s_axil_wdata"),
        ("input", 4, "s_axil_wstrb"),
        ("input", 1, "s_axil_wvalid"),
        ("output", 1, "s_axil_wready"),
        ("output", 2, "s_axil_bresp"),
        ("output", 1, "s_axil_bvalid"),
        ("input", 1, "s_axil_bready"),
        ("input", 16, "s_axil_araddr"),
        ("input", 1, "s_axil_arvalid"),
        ("output", 1, "s_axil_arready"),
        ("output", 32, "s_axil_rdata"),
        ("output", 2, "s_axil_rresp"),
        ("output", 1, "s_axil_rvalid"),
        ("input", 1, "s_axil_rready"),
        ("input", 32, "now_us"),
        ("output", 1, "trace_valid"),
        ("output", trace_bits, "trace_pass"),
        ("output", 64, "rng_state"),
        ("output", 8, "in_flight"),
        ("output", 1, "overflow"),
    ];
    let bad = |i: usize| outs[i].1.clone();
    let len_pick = format!(
        "o0_tvalid ? {} : o1_tvalid ? {} : {}",
        len(0),
        len(1),
        len(2)
    );
    Ok((
        format!(
            "{plugin}\n\
module {BOX_TOP}({names});\n\
{decls}\n\
{wires}\n\
    {module} dut(\n        {conns}\n    );\n\
    wire [1:0] port = o0_tvalid ? 2'd0 : o1_tvalid ? 2'd1 : 2'd2;\n\
    wire [11:0] len = {len_pick};\n\
    wire bad = o0_tvalid ? ({bad0}) : o1_tvalid ? ({bad1}) : ({bad2});\n\
    assign m_axis_tvalid = o0_tvalid | o1_tvalid | o2_tvalid;\n\
    assign m_axis_tdata = {data};\n\
    assign m_axis_tkeep = {keep};\n\
    assign m_axis_tlast = {last};\n\
    assign m_axis_tuser = {{4'd0, len, 8'd0, bad, 5'd0, port}};\n\
    assign trace_valid = dut.core.trace_valid_unused;\n\
    assign trace_pass = dut.core.trace_unused;\n\
    assign rng_state = dut.core.rng_unused;\n\
    assign in_flight = dut.core.switch$in_flight;\n\
    assign overflow = dut.core.switch$overflow;\n\
endmodule\n",
            names = ports.iter().map(|p| p.2).collect::<Vec<_>>().join(", "),
            decls = ports
                .iter()
                .map(|(dir, w, n)| match w {
                    1 => format!("    {dir} wire {n};"),
                    w => format!("    {dir} wire [{}:0] {n};", w - 1),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            wires = wires.join("\n"),
            conns = conns.join(",\n        "),
            bad0 = bad(0),
            bad1 = bad(1),
            bad2 = bad(2),
            data = pick("tdata", "512'd0"),
            keep = pick("tkeep", "64'd0"),
            last = pick("tlast", "1'b0"),
        ),
        hash,
    ))
}
