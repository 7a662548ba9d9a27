//! The AXI4-Lite port against the register map: every field written through the port lands in
//! the configuration and the control pass where `regmap` says; reads return what was written;
//! byte strobes, the doorbell, read-only and unmapped addresses behave as documented.

use horus_model::config::{Config, Role};
use horus_model::sched::Stage;
use horus_model::sched::{ControlOp, NodeAddr, Params, Scheduler, SpineRef};
use horus_model::wire::{Endpoint, MacAddr};
use horus_pipeline::axil::AxiLiteRegs;
use horus_pipeline::cfg::{SpineEntry, SpineTable, SwitchCfg};
use horus_pipeline::pass::{control_phv, mac_bits, read_phv};
use horus_pipeline::phv::Phv;
use horus_pipeline::readback::{RB_BITS, RB_WORDS};
use horus_pipeline::regmap::{self, RegFile, fields};

mod common;
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// The outputs expected at one step.
#[derive(Clone, Debug)]
struct Expected {
    cfg: SwitchCfg,
    spines: SpineTable,
    ctl: Phv,
    ctl_valid: bool,
}

/// What the test bench does, one step at a time.
#[derive(Clone, Debug)]
enum Op {
    Write {
        addr: usize,
        data: u32,
        strb: u32,
    },
    /// Read and expect `(data, resp)`.
    Read {
        addr: usize,
        want: (u32, u32),
    },
    /// Check the outputs.
    Expect(Box<Expected>),
    /// Assert `ctl_ready` for one cycle.
    Ready,
    /// Write a whole word and expect the response `resp`.
    WriteResp {
        addr: usize,
        data: u32,
        resp: u32,
    },
    /// Drive the read-back inputs from now on.
    Readback {
        words: [u32; RB_WORDS],
        valid: bool,
    },
    /// A pass leaves the stages (one cycle of `done_valid`).
    Done(Box<Phv>),
    /// Drive the board adapter's drop count from now on.
    BoardDrops(u32),
}

fn run(ops: Vec<Op>) {
    let mut uut = AxiLiteRegs::new(Role::Leaf, 6, 12, 10, 1000);
    uut.connect_all();
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = failures.clone();
    let n = ops.len();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<AxiLiteRegs>| x.clk.next = !x.clk.val());
    sim.add_testbench(move |mut sim: Sim<AxiLiteRegs>| {
        let mut x = sim.init()?;
        x.s_axil.bready.next = true;
        x.s_axil.rready.next = true;
        wait_clock_true!(sim, clk, x);
        for (i, op) in ops.iter().cloned().enumerate() {
            match op {
                Op::Write { addr, data, strb } => {
                    x.s_axil.awaddr.next = (addr as u64).into();
                    x.s_axil.wdata.next = u64::from(data).into();
                    x.s_axil.wstrb.next = u64::from(strb).into();
                    x.s_axil.awvalid.next = true;
                    x.s_axil.wvalid.next = true;
                    wait_clock_cycle!(sim, clk, x);
                    x.s_axil.awvalid.next = false;
                    x.s_axil.wvalid.next = false;
                    wait_clock_cycle!(sim, clk, x);
                }
                Op::Read { addr, want } => {
                    x.s_axil.araddr.next = (addr as u64).into();
                    x.s_axil.arvalid.next = true;
                    wait_clock_cycle!(sim, clk, x);
                    x.s_axil.arvalid.next = false;
                    // The response comes two cycles after the address (`axil.rs`), not earlier.
                    if x.s_axil.rvalid.val() {
                        sink.lock().unwrap().push(format!(
                            "step {i}: read {addr:#x}: response one cycle early"
                        ));
                    }
                    wait_clock_cycle!(sim, clk, x);
                    let got = (
                        x.s_axil.rdata.val().index() as u32,
                        x.s_axil.rresp.val().index() as u32,
                    );
                    if !x.s_axil.rvalid.val() || got != want {
                        sink.lock().unwrap().push(format!(
                            "step {i}: read {addr:#x}: got {got:x?} (valid {}), want {want:x?}",
                            x.s_axil.rvalid.val()
                        ));
                    }
                    wait_clock_cycle!(sim, clk, x);
                }
                Op::Expect(e) => {
                    let Expected {
                        cfg,
                        spines,
                        ctl,
                        ctl_valid,
                    } = *e;
                    let got = (x.cfg.val(), x.spines.val(), x.ctl.val(), x.ctl_valid.val());
                    if got != (cfg, spines, ctl, ctl_valid) {
                        sink.lock().unwrap().push(format!(
                            "step {i}: outputs\n got {got:?}\nwant {:?}",
                            (cfg, spines, ctl, ctl_valid)
                        ));
                    }
                }
                Op::WriteResp { addr, data, resp } => {
                    x.s_axil.awaddr.next = (addr as u64).into();
                    x.s_axil.wdata.next = u64::from(data).into();
                    x.s_axil.wstrb.next = 0xf.into();
                    x.s_axil.awvalid.next = true;
                    x.s_axil.wvalid.next = true;
                    wait_clock_cycle!(sim, clk, x);
                    x.s_axil.awvalid.next = false;
                    x.s_axil.wvalid.next = false;
                    let got = x.s_axil.bresp.val().index() as u32;
                    if !x.s_axil.bvalid.val() || got != resp {
                        sink.lock().unwrap().push(format!(
                            "step {i}: write {addr:#x}: response {got} (valid {}), want {resp}",
                            x.s_axil.bvalid.val()
                        ));
                    }
                    wait_clock_cycle!(sim, clk, x);
                }
                Op::Readback { words, valid } => {
                    let mut b = Bits::<RB_BITS>::default();
                    for (k, w) in words.iter().enumerate() {
                        for j in 0..32 {
                            b = b.replace_bit(32 * k + j, (w >> j) & 1 == 1);
                        }
                    }
                    x.readback.next = b;
                    x.readback_valid.next = valid;
                }
                Op::Done(p) => {
                    x.done.next = *p;
                    x.done_valid.next = true;
                    wait_clock_cycle!(sim, clk, x);
                    x.done_valid.next = false;
                }
                Op::BoardDrops(n) => x.board_drops.next = u64::from(n).into(),
                Op::Ready => {
                    x.ctl_ready.next = true;
                    wait_clock_cycle!(sim, clk, x);
                    x.ctl_ready.next = false;
                }
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 40 * (n as u64 + 10)).unwrap();
    let f = failures.lock().unwrap();
    assert!(f.is_empty(), "{}", f.join("\n"));
}

fn leaf_config() -> Config {
    Config::from_toml_str(
        "[switch]\nrole = \"leaf\"\nid = 0x1234\nmac = \"02:a1:b2:c3:d4:e5\"\nip = \"10.20.30.40\"\n\
         udp_port = 4321\npass_through_port = 7\ncontrol_port = 9\n\
         [[spines]]\nid = 100\nmac = \"02:00:00:00:01:01\"\nip = \"10.0.1.1\"\nudp_port = 1234\nport = 2\n\
         [[spines]]\nid = 0xbeef\nmac = \"f2:11:22:33:44:55\"\nip = \"192.168.1.2\"\nudp_port = 5555\nport = 200\n\
         [[pools]]\nid = 5\ncapacity = 10\nspine = 100\nspine_node = 3\n",
    )
    .unwrap()
}

fn writes(r: &RegFile, words: impl Iterator<Item = usize>) -> Vec<Op> {
    words
        .map(|w| Op::Write {
            addr: 4 * w,
            data: r.words[w],
            strb: 0xf,
        })
        .collect()
}

fn expected_cfg(cfg: &Config) -> (SwitchCfg, SpineTable) {
    let s = &cfg.switch;
    let sc = SwitchCfg {
        id: u64::from(s.id).into(),
        mac: mac_bits(s.mac).into(),
        ip: u64::from(u32::from(s.ip)).into(),
        udp: u64::from(s.udp_port).into(),
        pass_through_port: u64::from(s.pass_through_port).into(),
        control_port: u64::from(s.control_port).into(),
    };
    let e = |i: usize| {
        cfg.spines
            .get(i)
            .map(|l| SpineEntry {
                valid: true,
                id: u64::from(l.id).into(),
                mac: mac_bits(l.mac).into(),
                ip: u64::from(u32::from(l.ip)).into(),
                udp: u64::from(l.udp_port).into(),
                egress: u64::from(l.port).into(),
            })
            .unwrap_or_default()
    };
    (
        sc,
        SpineTable {
            s0: e(0),
            s1: e(1),
            s2: e(2),
            s3: e(3),
        },
    )
}

#[test]
fn configuration_and_control_passes_land_where_the_register_map_says() {
    let cfg = leaf_config();
    let (sc, st) = expected_cfg(&cfg);
    let sw = RegFile::switch_config(&cfg).unwrap();
    let mut m = Scheduler::from_config(&cfg, 1).unwrap().0;
    let configure = ControlOp::ConfigurePool {
        pool: 6,
        base: 10,
        capacity: 0x1ab,
        params: Params {
            link_at: 0x123,
            unlink_at: 0x45,
            report_delta: horus_model::fixed::Load(0xdead_beef),
            repair_gap_us: 0xcafe,
        },
        spine: Some(SpineRef {
            id: 0xbeef,
            node: 0x7777,
        }),
    };
    let add = ControlOp::AddNode {
        pool: 5,
        node: 0xabc,
        addr: NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54]),
                ip: [172, 16, 254, 3].into(),
                udp_port: 0x9abc,
            },
            port: 0xa5,
            dst_id: 0x4321,
        },
        workers: 1,
    };
    let mut ops = writes(&sw, regmap::switch_words());
    for op in [configure, add] {
        m.validate(&op).unwrap();
        let regs = RegFile::control(&m, &op);
        ops.extend(writes(&regs, regmap::control_words()));
        let want = control_phv(&m, &op);
        ops.push(Op::Expect(Box::new(Expected {
            cfg: sc,
            spines: st,
            ctl: want,
            ctl_valid: false,
        })));
        // Every read-write word reads back.
        for w in regmap::control_words().chain(regmap::switch_words()) {
            let v = if regmap::control_words().contains(&w) {
                regs.words[w]
            } else {
                sw.words[w]
            };
            ops.push(Op::Read {
                addr: 4 * w,
                want: (v, 0),
            });
        }
        // The doorbell: busy until the pipeline takes the pass.
        let go = regmap::fields::CTL_GO.byte_address();
        ops.push(Op::Write {
            addr: go,
            data: 1,
            strb: 0xf,
        });
        ops.push(Op::Expect(Box::new(Expected {
            cfg: sc,
            spines: st,
            ctl: want,
            ctl_valid: true,
        })));
        ops.push(Op::Read {
            addr: go,
            want: (1, 0),
        });
        // While it waits, its operation cannot be rewritten: refused, unchanged.
        let op_word = regmap::fields::CTL_CONFIGURE_POOL.word;
        ops.push(Op::WriteResp {
            addr: 4 * op_word,
            data: 0,
            resp: 2,
        });
        ops.push(Op::Read {
            addr: 4 * op_word,
            want: (regs.words[op_word], 0),
        });
        ops.push(Op::Expect(Box::new(Expected {
            cfg: sc,
            spines: st,
            ctl: want,
            ctl_valid: true,
        })));
        ops.push(Op::Ready);
        // Taken: the word is the host's again.
        ops.push(Op::WriteResp {
            addr: 4 * op_word,
            data: regs.words[op_word],
            resp: 0,
        });
        ops.push(Op::Read {
            addr: go,
            want: (0, 0),
        });
        m.control(op).unwrap();
    }
    run(ops);
}

#[test]
fn reads_are_staged_started_and_answered_and_not_counted() {
    let go = regmap::fields::CTL_GO.byte_address();
    let word = |f: &regmap::Field| f.byte_address();
    let idle = |ctl: Phv, ctl_valid: bool| {
        Op::Expect(Box::new(Expected {
            cfg: SwitchCfg::default(),
            spines: SpineTable::default(),
            ctl,
            ctl_valid,
        }))
    };
    let read = RegFile::read_entry(Stage::Node, 0xabc);
    let mut both = read.clone();
    both.set(&fields::CTL_ADD_NODE, 1);
    // A distinct pattern in every word of the read-back.
    let data: [u32; RB_WORDS] = std::array::from_fn(|k| (0x1111_1111 * (k as u32 + 1)) ^ k as u32);
    let status = word(&fields::RB_VALID);
    let mut ops = Vec::new();
    // No operation staged, then two: the doorbell refuses and nothing starts.
    ops.push(Op::WriteResp {
        addr: go,
        data: 1,
        resp: 2,
    });
    ops.extend(writes(&both, regmap::control_words()));
    ops.push(Op::WriteResp {
        addr: go,
        data: 1,
        resp: 2,
    });
    ops.push(Op::Read {
        addr: go,
        want: (0, 0),
    });
    // One read: staged, started, busy until its pass leaves.
    ops.extend(writes(&read, regmap::control_words()));
    ops.push(idle(read_phv(Stage::Node, 0xabc), false));
    ops.push(Op::WriteResp {
        addr: go,
        data: 1,
        resp: 0,
    });
    ops.push(idle(read_phv(Stage::Node, 0xabc), true));
    ops.push(Op::Ready);
    ops.push(Op::Read {
        addr: status,
        want: (2, 0),
    });
    ops.push(Op::Readback {
        words: data,
        valid: true,
    });
    ops.push(Op::Read {
        addr: status,
        want: (3, 0),
    });
    ops.push(Op::Done(Box::new(read_phv(Stage::Node, 0xabc))));
    ops.push(Op::Read {
        addr: status,
        want: (1, 0),
    });
    for (k, &d) in data.iter().enumerate() {
        ops.push(Op::Read {
            addr: word(regmap::rb_data(k)),
            want: (d, 0),
        });
    }
    // The read's pass is not counted.
    for f in [fields::PASSES, fields::CONTROL_PASSES] {
        ops.push(Op::Read {
            addr: word(&f),
            want: (0, 0),
        });
    }
    run(ops);
}

#[test]
fn identity_strobes_and_bad_addresses() {
    let info = 6 << 8 | 12 << 16 | 10 << 24;
    let id_word = regmap::fields::SWITCH_ID.byte_address();
    run(vec![
        Op::Read {
            addr: 0,
            want: (regmap::ID_VALUE, 0),
        },
        Op::Read {
            addr: 4,
            want: (info, 0),
        },
        Op::Write {
            addr: id_word,
            data: 0x1122_3344,
            strb: 0xf,
        },
        // Only bytes 1 and 3.
        Op::Write {
            addr: id_word,
            data: 0xaabb_ccdd,
            strb: 0b1010,
        },
        Op::Read {
            addr: id_word,
            want: (0xaa22_cc44, 0),
        },
        // Read-only and unmapped: SLVERR, nothing changes.
        Op::Write {
            addr: 0,
            data: 5,
            strb: 0xf,
        },
        Op::Read {
            addr: 0,
            want: (regmap::ID_VALUE, 0),
        },
        Op::Read {
            addr: 0x200,
            want: (0, 2),
        },
        // The bitstream's identity (the hash is the placeholder until rtl-gen stamps it), the
        // board adapter's drops as its input gives them, and the word after them unmapped.
        Op::Read {
            addr: regmap::fields::MAP_VERSION.byte_address(),
            want: (regmap::MAP_VERSION, 0),
        },
        Op::Read {
            addr: regmap::fields::BUILD_HASH.byte_address(),
            want: (regmap::BUILD_HASH_PLACEHOLDER, 0),
        },
        Op::Read {
            addr: regmap::fields::CONN_TIMEOUT_US.byte_address(),
            want: (1000, 0),
        },
        Op::Read {
            addr: regmap::fields::BOARD_DROPS.byte_address(),
            want: (0, 0),
        },
        Op::BoardDrops(0xdead_beef),
        Op::Read {
            addr: regmap::fields::BOARD_DROPS.byte_address(),
            want: (0xdead_beef, 0),
        },
        Op::Read {
            addr: regmap::fields::CONN_TIMEOUT_US.byte_address(),
            want: (1000, 0),
        },
        Op::Read {
            addr: regmap::fields::BOARD_DROPS.byte_address() + 4,
            want: (0, 2),
        },
        Op::WriteResp {
            addr: regmap::fields::BOARD_DROPS.byte_address(),
            data: 7,
            resp: 2,
        },
        Op::WriteResp {
            addr: regmap::fields::MAP_VERSION.byte_address(),
            data: 7,
            resp: 2,
        },
        Op::Read {
            addr: regmap::fields::MAP_VERSION.byte_address(),
            want: (regmap::MAP_VERSION, 0),
        },
    ]);
}

#[test]
fn verilog_is_lint_clean() {
    let mut uut = AxiLiteRegs::new(Role::Spine, 3, 6, 4, 1000);
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint("axil", &v).unwrap();
}

/// The harness of `tests/formal/axil.sv` around `verilog`, which has the register file's
/// flip-flops as an output (`probe_regs_q`).
fn axil_harness(verilog: &str) -> String {
    let rw = regmap::rw_words();
    horus_hdl_tools::check::harness(include_str!("formal/axil.sv"), verilog)
        .replace("@FIRST_RW@", &rw.start().to_string())
        .replace("@LAST_RW@", &rw.end().to_string())
        .replace("@GO@", &regmap::fields::CTL_GO.word.to_string())
        .replace("@WORDS@", &regmap::WORDS.to_string())
        .replace(
            "@OPS@",
            &regmap::fields::CTL_CONFIGURE_POOL.word.to_string(),
        )
        .replace("@CTL_OPS@", &ctl_ops())
        .replace(
            "@CTL_OTHER@",
            &format!(
                "({} | {} | ctl[{}])",
                common::phv_any("ctl", &common::SECOND),
                common::phv_any("ctl", &common::PACKET),
                common::phv_offset(|p| p.resubmit = true)
            ),
        )
}

/// How many operation flags the staged pass `ctl` carries, as a 4-bit sum.
fn ctl_ops() -> String {
    common::phv_count("ctl", &common::CONTROL_OPS)
}

/// The depth of the base case and of the induction step: the induction closes at 4 cycles (a
/// read is answered two cycles after it is taken), so the rules hold at every depth.
const AXIL_DEPTH: u32 = 4;

fn axil_verilog() -> String {
    let mut uut = AxiLiteRegs::new(Role::Leaf, 3, 6, 4, 1000);
    uut.connect_all();
    horus_hdl_tools::check::with_probes(&horus_hdl_tools::verilog::emit(&uut), &["regs$q"])
}

fn axil_files(verilog: &str) -> [(&'static str, String); 2] {
    [
        ("top.v", verilog.to_string()),
        ("harness.sv", axil_harness(verilog)),
    ]
}

/// The port's AXI4-Lite rules, proven for every request sequence (yosys-smtbmc, Yices):
/// k-induction with k = `AXIL_DEPTH` and its base case (`tests/formal/axil.sv`).
#[test]
fn the_axi_lite_rules_are_proven_for_every_request_sequence() {
    let [a, b] = axil_files(&axil_verilog());
    assert_eq!(
        horus_hdl_tools::check::prove_inductive(
            "axil_formal",
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            AXIL_DEPTH
        )
        .unwrap(),
        horus_hdl_tools::check::Proof::Proven { depth: AXIL_DEPTH }
    );
}

/// The proof fails on mutants of the port: a write response withdrawn before it is taken
/// (valid dropped), a second write taken while the first's response waits, a read beyond the
/// map answered OKAY, byte strobes ignored, and the operation flags rewritten while a staged
/// pass waits.
#[test]
fn the_axi_lite_proof_fails_on_broken_handshakes_codes_and_strobes() {
    let v = axil_verilog();
    // The last needs a write, the doorbell and a second write: it fails at step 5 from reset.
    for (what, from, to, depth) in [
        (
            "dropped bvalid",
            "if (bvalid$q & s_axil$bready) begin",
            "if (bvalid$q) begin",
            AXIL_DEPTH,
        ),
        (
            "write while busy",
            "take_w = s_axil$awvalid & s_axil$wvalid & ~bvalid$q;",
            "take_w = s_axil$awvalid & s_axil$wvalid;",
            AXIL_DEPTH,
        ),
        (
            "no SLVERR beyond the map",
            "r_err$d = (rword > map$w_last_rw)",
            "r_err$d = 1'b0 & (rword > map$w_last_rw)",
            AXIL_DEPTH,
        ),
        (
            "strobes ignored",
            "(words[w] && strb[b])",
            "(words[w])",
            AXIL_DEPTH,
        ),
        (
            "operation rewritten while staged",
            "op_held = (wword == map$w_ops) & pending$q;",
            "op_held = 1'b0;",
            6,
        ),
    ] {
        assert_eq!(v.matches(from).count(), 1, "{what}: the mutation site");
        let [a, b] = axil_files(&v.replace(from, to));
        let step = horus_hdl_tools::check::refute(
            &format!("axil_mutant_{}", what.replace(' ', "_")),
            &[(a.0, &a.1), (b.0, &b.1)],
            "harness",
            depth,
        )
        .unwrap();
        eprintln!("{what}: fails at step {step}");
    }
}
