//! PTF tests (the `ptf` packet test framework) for a Tofino switch running the Horus program,
//! generated from the model: directed scenarios are run through the model's frame switch
//! ([`FrameSwitch`], Tofino profile) configured from the same file as the switch, and each step
//! becomes a packet in and the packets the model sent out, on their ports.
//!
//! A Tofino switch draws its samples from its own random generator, which no test can predict;
//! a step whose task samples the pool (no idle node) therefore pins the draw first: it rewrites
//! the pool's two sample tables to map every draw to the slots the model sampled
//! (`pin_samples`, through the SDE's `bfrt_grpc`), and restores them after the scenario. The
//! frames are compared with the fields the two switches fill differently masked: the IPv4
//! checksum and the UDP checksum (the Tofino program zeroes it on a rewrite; the model updates
//! it). A TASK_DONE_IDLE leaves a Tofino switch on its second pass, after the resubmission: the
//! test expects the same frames, in any order across ports.

use std::fmt::Write as _;

use anyhow::{Context, Result, bail, ensure};
use horus_model::config::{Config, Role};
use horus_model::sched::frame::{FramePass, FrameSwitch, InFrame, OutFrame};
use horus_model::sched::{Profile, Scheduler};
use horus_model::wire::{Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType};

use super::emit::program_name;
use horus_model::rng::scale8;

/// The port the tests send every packet in from (the program does not look at it).
pub const IN_PORT: u8 = 0;

/// The client every task comes from (its `src_id` is no switch's).
const CLIENT_ID: u16 = 0x7777;

/// One step: the pinned samples (pool, slot 1, slot 2) if the task samples, the frame in, the
/// frames out.
#[derive(Clone, Debug)]
pub struct Step {
    pub what: String,
    pub pin: Option<(u16, u16, u16)>,
    pub frame: Vec<u8>,
    pub outputs: Vec<OutFrame>,
}

/// A named scenario: steps in order, each on the state the previous left.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    pub steps: Vec<Step>,
}

struct Runner {
    sw: FrameSwitch,
    cfg: Config,
    time_us: u32,
    client: Endpoint,
}

impl Runner {
    fn sched(&self) -> &Scheduler {
        self.sw.scheduler()
    }

    fn me(&self) -> Endpoint {
        Endpoint {
            mac: self.cfg.switch.mac,
            ip: self.cfg.switch.ip,
            udp_port: self.cfg.switch.udp_port,
        }
    }

    /// A frame with `header` from `src` to this switch.
    fn frame(&self, src: Endpoint, header: HorusHeader) -> Vec<u8> {
        HorusFrame {
            src,
            dst: self.me(),
            ip_id: 0x1234,
            ttl: 64,
            dscp_ecn: 0,
            dont_fragment: true,
            udp_checksum: 0,
            header,
            payload: b"horus-ptf".to_vec(),
        }
        .to_bytes()
    }

    /// Runs `frame` and the second pass it asks for, as the switch would; records the step.
    fn step(&mut self, what: String, frame: Vec<u8>, pool: Option<u16>) -> Result<Step> {
        let pin = match pool.and_then(|p| self.sched().next_task_slots(p)) {
            Some((false, i1, i2)) => Some((pool.unwrap_or(0), i1 as u16, i2 as u16)),
            _ => None,
        };
        self.time_us += 1000;
        let mut r = self
            .sw
            .process(FramePass::Frame(InFrame {
                frame: frame.clone(),
                time_us: self.time_us,
            }))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(rs) = r.resubmit.take() {
            r = self
                .sw
                .process(FramePass::Resubmit(rs))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            outputs.append(&mut r.outputs);
        }
        Ok(Step {
            what,
            pin,
            frame,
            outputs,
        })
    }

    fn header(pkt_type: PacketType, pool: u16, src: u16, qlen: u16, seq: u16) -> HorusHeader {
        HorusHeader {
            pkt_type,
            more_packets: false,
            pool_id: pool,
            src_id: src,
            dst_id: 0,
            qlen,
            seq_num: seq,
        }
    }

    fn task(&mut self, pool: u16, seq: u16) -> Result<Step> {
        let f = self.frame(
            self.client,
            Self::header(PacketType::NewTask, pool, CLIENT_ID, 0, seq),
        );
        self.step(format!("task {seq} of pool {pool}"), f, Some(pool))
    }

    /// A message from node `node` of `pool` (a worker's reply at a leaf, a rack's at a spine).
    fn message(
        &mut self,
        t: PacketType,
        pool: u16,
        node: u16,
        qlen: u16,
        seq: u16,
    ) -> Result<Step> {
        let n = self
            .cfg
            .pools
            .iter()
            .flat_map(|p| &p.nodes)
            .find(|n| n.id == node)
            .context("node in the configuration")?;
        let src = Endpoint {
            mac: n.mac,
            ip: n.ip,
            udp_port: n.udp_port,
        };
        let f = self.frame(src, Self::header(t, pool, node, qlen, seq));
        self.step(
            format!("{} from node {node} (qlen {qlen})", t.name()),
            f,
            None,
        )
    }
}

/// The pool the scenarios use: the first with at least two nodes.
pub fn pool_of(cfg: &Config) -> Result<(u16, Vec<u16>)> {
    cfg.pools
        .iter()
        .find(|p| p.nodes.len() >= 2)
        .map(|p| (p.id, p.nodes.iter().map(|n| n.id).collect()))
        .context("the configuration needs a pool with at least two nodes for the PTF scenarios")
}

/// The directed scenarios for `cfg`'s switch, run through the model (Tofino profile).
pub fn scenarios(cfg: &Config) -> Result<Vec<Scenario>> {
    let (sw, _) = FrameSwitch::from_config_with(cfg, 1, Profile::TOFINO)
        .map_err(|e| anyhow::anyhow!("configuring the model: {e}"))?;
    let mut r = Runner {
        sw,
        cfg: cfg.clone(),
        time_us: 0,
        client: Endpoint {
            mac: MacAddr([0x02, 0, 0, 0, 0x77, 0x77]),
            ip: std::net::Ipv4Addr::new(10, 77, 0, 1),
            udp_port: 40000,
        },
    };
    let (pool, nodes) = pool_of(cfg)?;
    let a = nodes[0];
    let mut out = match cfg.switch.role {
        Role::Leaf => leaf_scenarios(&mut r, cfg, pool, &nodes)?,
        Role::Spine => spine_scenarios(&mut r, pool, &nodes)?,
    };
    out.extend(common_scenarios(&mut r, pool, a)?);
    for s in &out {
        if s.steps.is_empty() {
            bail!("scenario {} has no steps", s.name);
        }
    }
    Ok(out)
}

/// A leaf's scenarios: idle workers first, Fig. 13's drift and resubmission, an idle worker
/// again, and failures (a removed worker's reply, a lost idle message repaired).
fn leaf_scenarios(r: &mut Runner, cfg: &Config, pool: u16, nodes: &[u16]) -> Result<Vec<Scenario>> {
    let (a, b) = (nodes[0], nodes[1]);
    let mut out = Vec::new();
    // Idle workers first (the top of the list), then the power of two.
    let idle = usize::from(r.sched().tables().pools[usize::from(pool)].ctl.p);
    let steps = (0..=idle)
        .map(|i| r.task(pool, i as u16))
        .collect::<Result<Vec<_>>>()?;
    out.push(Scenario {
        name: "idle_first",
        about: "tasks take the idle workers from the top of the list, then two samples",
        steps,
    });
    // Fig. 13: loads from replies, drift charged until it exceeds the difference, then
    // a resubmission settles the corrected queues.
    let mut steps = Vec::new();
    for &n in nodes {
        steps.push(r.message(PacketType::TaskDone, pool, n, if n == b { 3 } else { 9 }, 0)?);
    }
    steps.push(r.message(PacketType::TaskDone, pool, a, 0, 0)?);
    // Tasks until one resubmits: the samples are the model's draws, pinned on the switch.
    let before = r.sched().counters().pow2_resubmits;
    for seq in 100..300 {
        steps.push(r.task(pool, seq)?);
        if r.sched().counters().pow2_resubmits > before {
            break;
        }
    }
    ensure!(
        r.sched().counters().pow2_resubmits > before,
        "the drift scenario reaches a resubmission within 200 tasks"
    );
    out.push(Scenario {
        name: "drift_and_resubmission",
        about: "Fig. 13: worker loads from replies; the drift check charges the less loaded \
                sample until its drift exceeds the difference, then a second pass decides",
        steps,
    });
    // An idle worker's reply puts it back on the idle list; the next task takes it.
    let steps = vec![
        r.message(PacketType::TaskDoneIdle, pool, a, 0, 7)?,
        r.message(PacketType::TaskDoneIdle, pool, a, 0, 8)?,
        r.task(pool, 200)?,
    ];
    out.push(Scenario {
        name: "idle_again",
        about: "TASK_DONE_IDLE re-adds its worker (a repeat is a duplicate); the next task takes it",
        steps,
    });
    // Failures: a reply from a node the pool no longer has (a removed worker) still
    // reaches its client, its update dropped; a lost idleRemove is repaired when a task
    // from the spine shows the spine still has the rack as idle (§A.3, decision 17).
    let gone = (0..cfg.sizes.nodes)
        .find(|n| !cfg.pools.iter().any(|p| p.nodes.iter().any(|x| x.id == *n)))
        .context("a node ID the configuration does not use")?;
    let mut steps = vec![{
        let f = r.frame(
            r.client,
            Runner::header(PacketType::TaskDone, pool, gone, 4, 9),
        );
        r.step(
            format!("TaskDone from node {gone}, not in the pool"),
            f,
            None,
        )?
    }];
    let spine = cfg
        .pools
        .iter()
        .find(|p| p.id == pool)
        .and_then(|p| p.spine)
        .and_then(|id| cfg.spines.iter().find(|l| l.id == id));
    if let Some(l) = spine {
        let src = Endpoint {
            mac: l.mac,
            ip: l.ip,
            udp_port: l.udp_port,
        };
        let f = r.frame(src, Runner::header(PacketType::NewTask, pool, l.id, 1, 300));
        let linked = r.sched().tables().pools[usize::from(pool)].ctl.linked;
        steps.push(r.step(
            format!(
                "task 300 from spine {}, flagged idle-selected (leaf linked: {linked})",
                l.id
            ),
            f,
            Some(pool),
        )?);
    }
    out.push(Scenario {
        name: "failures",
        about: "a removed worker's reply goes on, its update dropped; a lost idle message \
                repaired on a task from the spine",
        steps,
    });
    Ok(out)
}

/// A spine's scenarios: Fig. 4's idle list, then load updates and samples.
fn spine_scenarios(r: &mut Runner, pool: u16, nodes: &[u16]) -> Result<Vec<Scenario>> {
    let (a, b) = (nodes[0], nodes[1]);
    let mut out = Vec::new();
    // Fig. 4: three racks idle, the middle one removed, tasks in turn over the rest.
    let racks: Vec<u16> = nodes.iter().copied().take(3).collect();
    let mut steps = Vec::new();
    for &n in &racks {
        steps.push(r.message(PacketType::IdleSignal, pool, n, 0, 0)?);
    }
    if racks.len() == 3 {
        steps.push(r.message(PacketType::IdleRemove, pool, racks[1], 0, 0)?);
    }
    for seq in 0..3 {
        steps.push(r.task(pool, seq)?);
    }
    steps.push(r.message(PacketType::IdleRemove, pool, racks[0], 0, 0)?);
    steps.push(r.message(PacketType::IdleRemove, pool, racks[0], 0, 0)?);
    out.push(Scenario {
        name: "fig4_idle_list",
        about: "Fig. 4: racks join the idle list, one leaves from the middle, tasks take \
                the rest in turn; a removal of a rack that is not in the list is dropped",
        steps,
    });
    // Loads from the racks' reports; the remaining tasks sample (pinned) and charge.
    let mut steps = vec![
        r.message(
            PacketType::IdleRemove,
            pool,
            *racks.last().unwrap_or(&a),
            0,
            0,
        )?,
        r.message(PacketType::QueueSignal, pool, a, 2, 0x8000)?,
        r.message(PacketType::QueueSignal, pool, b, 0, 0x4000)?,
    ];
    for seq in 10..14 {
        steps.push(r.task(pool, seq)?);
    }
    out.push(Scenario {
        name: "load_updates_and_samples",
        about: "rack loads from QUEUE_SIGNAL, then tasks to the less loaded of two pinned samples",
        steps,
    });
    Ok(out)
}

/// Both roles' scenarios: a multi-packet task (§A.4), and controller packets and drops.
fn common_scenarios(r: &mut Runner, pool: u16, a: u16) -> Result<Vec<Scenario>> {
    let mut out = Vec::new();
    // Multi-packet tasks (§A.4): the continuations follow the first packet's node; the last one
    // frees the entry, and a continuation after it is dropped.
    let mut steps = Vec::new();
    let mut first = Runner::header(PacketType::NewTask, pool, CLIENT_ID, 0, 400);
    first.more_packets = true;
    let f = r.frame(r.client, first);
    steps.push(r.step("task 400, first of three packets".into(), f, Some(pool))?);
    for (i, more) in [(2, true), (3, false), (4, false)] {
        let mut h = Runner::header(PacketType::TaskContinuation, pool, CLIENT_ID, 0, 400);
        h.more_packets = more;
        let f = r.frame(r.client, h);
        let what = if i == 4 {
            "a continuation of task 400 after its last packet".to_string()
        } else {
            format!("task 400, packet {i} of three")
        };
        steps.push(r.step(what, f, None)?);
    }
    out.push(Scenario {
        name: "multi_packet",
        about: "continuations follow their first packet to its node; the last frees the entry",
        steps,
    });
    // Common: controller packets go to the control port; a legacy type is dropped.
    let steps = vec![
        {
            let f = r.frame(
                r.client,
                Runner::header(PacketType::KeepAlive, pool, a, 0, 0),
            );
            r.step("KEEP_ALIVE to the control port".into(), f, None)?
        },
        {
            let f = r.frame(
                r.client,
                Runner::header(PacketType::ProbeIdleQueue, pool, a, 0, 0),
            );
            r.step("a legacy type, dropped".into(), f, None)?
        },
    ];
    out.push(Scenario {
        name: "control_and_drops",
        about: "controller packets to the control port; a legacy packet type dropped and counted",
        steps,
    });
    Ok(out)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The PTF test file for `cfg`'s switch.
pub fn ptf_file(cfg: &Config) -> Result<String> {
    let scen = scenarios(cfg)?;
    let role = cfg.switch.role;
    let program = program_name(role);
    let control = if role == Role::Leaf {
        "HorusLeafIngress"
    } else {
        "HorusSpineIngress"
    };
    let mut o = String::new();
    writeln!(
        o,
        r#""""PTF tests of Horus {role} switch {id} ({program}.p4), generated by
`cargo run -p rtl-gen -- --target p4 --config FILE` from the model (Tofino profile) run on the
same configuration. Do not edit.

Run on a switch (or the Tofino model) with the program loaded and set up by
setup_{role}_{id}.py, from a fresh set-up:
    ptf --test-dir . --pypath $SDE_INSTALL/lib/python3*/site-packages/tofino \
        --interface 0@veth0 ... {module}
Each scenario runs on the state the previous one left, in the order of SCENARIOS.
"""

import ptf
from ptf.base_tests import BaseTest
from ptf import testutils
from ptf.mask import Mask
import scapy.all as scapy

try:  # the SDE's BfRt client, to pin the sampled slots; absent off a switch
    import bfrt_grpc.client as gc
except ImportError:
    gc = None

PROGRAM = "{program}"
CONTROL = "{control}"
IN_PORT = {IN_PORT}
"#,
        id = cfg.switch.id,
        module = ptf_module(cfg),
    )?;
    writeln!(
        o,
        "# The sample tables' entries of the pool, as the set-up writes them: the slot of each draw."
    )?;
    let (pool, _) = pool_of(cfg)?;
    let sched = FrameSwitch::from_config_with(cfg, 1, Profile::TOFINO)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .0;
    let c = sched.scheduler().tables().pools[usize::from(pool)].cfg;
    writeln!(o, "POOL = {pool}")?;
    let slots: Vec<String> = (0..=255u8)
        .map(|d| (c.base + scale8(d, c.n)).to_string())
        .collect();
    writeln!(o, "SLOTS = [{}]\n", slots.join(", "))?;
    writeln!(
        o,
        "# Scenario: [(what, pinned (pool, slot1, slot2) or None, frame in, [(port, frame out)])]."
    )?;
    writeln!(o, "SCENARIOS = [")?;
    for s in &scen {
        writeln!(o, "    ({:?}, {:?}, [", s.name, s.about)?;
        for st in &s.steps {
            let pin = st
                .pin
                .map_or("None".to_string(), |(p, a, b)| format!("({p}, {a}, {b})"));
            let outs: Vec<String> = st
                .outputs
                .iter()
                .map(|f| format!("({}, \"{}\")", f.port, hex(&f.frame)))
                .collect();
            writeln!(
                o,
                "        ({:?}, {pin}, \"{}\", [{}]),",
                st.what,
                hex(&st.frame),
                outs.join(", ")
            )?;
        }
        writeln!(o, "    ]),")?;
    }
    writeln!(o, "]\n")?;
    o += PTF_TAIL;
    Ok(o)
}

/// The PTF module's name for `cfg`'s switch.
pub fn ptf_module(cfg: &Config) -> String {
    format!("ptf_{}_{}", cfg.switch.role, cfg.switch.id)
}

const PTF_TAIL: &str = r#"
def expected(frame_hex):
    """The frame out, with what the Tofino program and the model fill differently masked."""
    pkt = scapy.Ether(bytes.fromhex(frame_hex))
    m = Mask(pkt)
    m.set_do_not_care_scapy(scapy.IP, "chksum")
    m.set_do_not_care_scapy(scapy.UDP, "chksum")
    return m


class HorusScenarios(BaseTest):
    """Every scenario, in order, against the model's frames."""

    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.bfrt = None
        if gc is not None:
            self.interface = gc.ClientInterface("localhost:50052", client_id=0, device_id=0)
            self.interface.bind_pipeline_config(PROGRAM)
            self.bfrt = self.interface.bfrt_info_get(PROGRAM)
            self.target = gc.Target(device_id=0, pipe_id=0xFFFF)

    def key(self, t, k, pool, draw):
        return t.make_key([gc.KeyTuple("hdr.horus.pool_id", pool), gc.KeyTuple("md.r%d" % k, draw)])

    def set_slots(self, pool, slots1, slots2):
        """Rewrites the pool's entries of the two sample tables: draw d to slots1[d] and
        slots2[d]."""
        for k, slots in ((1, slots1), (2, slots2)):
            t = self.bfrt.table_get("%s.sample%d" % (CONTROL, k))
            for draw, slot in enumerate(slots):
                t.entry_mod(self.target, [self.key(t, k, pool, draw)],
                            [t.make_data([gc.DataTuple("slot", slot)], "%s.set_slot%d" % (CONTROL, k))])
        self.pinned = slots1 != SLOTS or slots2 != SLOTS

    def pin_samples(self, pool, slot1, slot2):
        """Every draw of the pool's two samples maps to slot1 and slot2."""
        if self.bfrt is None:
            self.fail("pinning samples needs the SDE's bfrt_grpc")
        self.set_slots(pool, [slot1] * 256, [slot2] * 256)

    def runTest(self):
        self.pinned = False
        try:
            for name, about, steps in SCENARIOS:
                for what, pin, frame, outs in steps:
                    if pin is not None:
                        self.pin_samples(*pin)
                    testutils.send_packet(self, IN_PORT, bytes.fromhex(frame))
                    for port, out in outs:
                        testutils.verify_packet(self, expected(out), port)
                    testutils.verify_no_other_packets(self)
        finally:
            if self.bfrt is not None and self.pinned:
                self.set_slots(POOL, SLOTS, SLOTS)
"#;
