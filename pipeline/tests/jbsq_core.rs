//! The JBSQ leaf's core (decode, the pass mux with its second passes, the twelve stages;
//! `horus_pipeline::jbsq::core::JbsqCore`) against the model, pass for pass, in rust-hdl's
//! simulator.
//!
//! Every pass the core lets into `poolCfg` (its trace port) runs through the model in the same
//! order: a packet's first pass, a second pass (a retry, a returned place) the model handed out,
//! a control pass the host ran. Every pass leaving `nodeAddr` must have the model's outcome (the
//! chain's checks: a task's token, fallback, hold or drop, a release, a returned place, the
//! message to the spine, a continuation, the address a task goes to), come back exactly when the
//! model hands out a second pass, and keep its frame's slot. Traffic is random: tasks (some of
//! several packets, with their continuations), replies from the pools' workers and from others,
//! control frames for the controller, types the leaf does not schedule, pools beyond the table,
//! frames that are not Horus's or that the parser rejected, node removals and additions mid-stream,
//! idle input cycles.
//!
//! Then every pass that left runs through the map to its egress job (`JbsqJobMap`), which must
//! give the job the model's pass asks for (`jbsq_common::jobs::job_of`, the map the egress's test
//! holds the egress to: its jobs send the model's frames byte for byte).

mod jbsq_common;

use horus_model::sched::Target;
use horus_model::sched::jbsq::*;
use horus_model::sched::state::{Params, SpineRef};
use horus_model::wire::{Endpoint, MacAddr};
use horus_model::wire::{HorusHeader, PacketType};
use horus_pipeline::cfg::{SpineEntry, SpineTable, SwitchCfg};
use horus_pipeline::jbsq::core::{CORE_LATENCY, JbsqCore};
use horus_pipeline::jbsq::counters::JbsqCounts;
use horus_pipeline::jbsq::egress::JbsqJob;
use horus_pipeline::jbsq::job_map::JbsqJobMap;
use horus_pipeline::jbsq::phv::JbsqPhv;
use horus_pipeline::parser::{
    CLASS_DROP_CHECKSUM, CLASS_DROP_MALFORMED, CLASS_HORUS, CLASS_PASS_THROUGH,
};
use horus_pipeline::pass::parsed;
use jbsq_common::driver::{CLIENT, Driver, check_pass, header, model_msg, stage_msg};
use jbsq_common::jobs::{self, JobPorts, job_of};
use rust_hdl::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// `JbsqSizes::SMALL`: 4 pools, 64 nodes, 1,024 ring entries, 64 buffer slots, 64 connection
/// entries.
const P: usize = 2;
const N: usize = 6;
const R: usize = 10;
const B: usize = 6;
const C: usize = 6;
const SIZES: JbsqSizes = JbsqSizes::SMALL;
const SEED: u64 = 0x5eed_1234;
const TIMEOUT_US: u32 = 150;
const SPINE: SpineRef = SpineRef { id: 900, node: 7 };

type Core = JbsqCore<P, N, R, B, C>;

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One input to the core.
#[derive(Clone, Debug)]
enum Input {
    /// A frame: its parser class and, for a Horus frame, its header and length.
    Frame {
        class: u64,
        header: HorusHeader,
    },
    /// The host's operation on the first pool's node: it is removed if active, then added (its
    /// own bound `k` or the pool's; `tasks` outstanding).
    Churn {
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
    },
    Configure(u16, JbsqPool),
    Add(u16, u16),
    /// Every worker of a pool removed, the pool configured afresh (the tasks it held are
    /// discarded), its workers added again.
    Reset(u16),
    /// Decision 37: the pool stops holding tasks (`slots` 0), or its buffer region moves to
    /// `[queue_base + shift, queue_base + shift + slots)` of its configuration's (what it still
    /// holds is discarded).
    Buffer {
        pool: u16,
        shift: u32,
        slots: u32,
    },
}

/// The pools and their workers: idle workers advertised, `k` 2; free places, `k` 3 and the drop
/// fallback; the queue, `k` 1.
const POOLS: [(u16, &[u16]); 3] = [(1, &[20, 21, 22]), (2, &[30, 31]), (3, &[40, 41, 42])];

fn pool(base: u16, k: u8, ring_base: u32, queue_base: u32, advertise: Advertise) -> JbsqPool {
    JbsqPool {
        base,
        capacity: 8,
        k,
        ring_base,
        ring_slots: 16,
        queue_base,
        queue_slots: 6,
        fallback: Fallback::Random,
        advertise,
        hold_us: 0,
        params: Params::jbsq_default(),
        spine: Some(SPINE),
    }
}

/// The pools' configurations.
fn pool_cfg(p: u16) -> JbsqPool {
    match p {
        1 => pool(8, 2, 0, 0, Advertise::Idle),
        2 => {
            let mut drop_full = pool(16, 3, 256, 16, Advertise::Places);
            drop_full.fallback = Fallback::Drop;
            drop_full.queue_slots = 4;
            drop_full
        }
        _ => pool(24, 1, 512, 32, Advertise::Queue { room: 2 }),
    }
}

fn setup() -> VecDeque<Input> {
    let mut v: VecDeque<Input> = POOLS
        .iter()
        .map(|&(p, _)| Input::Configure(p, pool_cfg(p)))
        .collect();
    for (p, nodes) in POOLS {
        for &node in nodes {
            v.push_back(Input::Add(p, node));
        }
    }
    v
}

/// Random traffic; `open` holds the multi-packet tasks that have continuations to send. One input
/// in a hundred is a burst of twelve tasks to one pool, which fills its region.
fn traffic(g: &mut Gen, seq: &mut u16, open: &mut Vec<(u16, u16, u8)>) -> Vec<Input> {
    if g.chance(1) {
        let (pool, _) = POOLS[g.below(3) as usize];
        return (0..12)
            .map(|_| {
                *seq = seq.wrapping_add(1);
                Input::Frame {
                    class: CLASS_HORUS,
                    header: header(PacketType::NewTask, pool, CLIENT, *seq),
                }
            })
            .collect();
    }
    vec![one(g, seq, open)]
}

fn one(g: &mut Gen, seq: &mut u16, open: &mut Vec<(u16, u16, u8)>) -> Input {
    use PacketType::*;
    let (pool, nodes) = POOLS[g.below(3) as usize];
    let node = nodes[g.below(nodes.len() as u64) as usize];
    let frame = |header| Input::Frame {
        class: CLASS_HORUS,
        header,
    };
    match g.below(100) {
        0..2 => Input::Frame {
            class: [
                CLASS_PASS_THROUGH,
                CLASS_DROP_MALFORMED,
                CLASS_DROP_CHECKSUM,
            ][g.below(3) as usize],
            header: header(NewTask, pool, CLIENT, 0),
        },
        2..4 => {
            let t = [KeepAlive, WorkerId, WorkerIdAck, RemoveAck][g.below(4) as usize];
            frame(header(t, pool, node, 0))
        }
        4..6 => {
            let t = [IdleSignal, QueueSignal, NewTaskRandom, ProbeIdleQueue][g.below(4) as usize];
            frame(header(t, pool, node, 0))
        }
        // A pool never configured, or beyond the table.
        6..8 => frame(header(NewTask, [0, 4, 77][g.below(3) as usize], CLIENT, 1)),
        8..9 if g.chance(30) => Input::Reset(POOLS[g.below(3) as usize].0),
        8..9 if g.chance(40) => {
            let pool = POOLS[g.below(3) as usize].0;
            let shift = g.below(2) as u32;
            let slots = g.below(u64::from(pool_cfg(pool).queue_slots - shift + 1)) as u32;
            Input::Buffer { pool, shift, slots }
        }
        8..9 => Input::Churn {
            pool: POOLS[0].0,
            node: POOLS[0].1[g.below(3) as usize],
            k: g.chance(50).then_some(3),
            tasks: g.below(2) as u16,
        },
        9..22 if !open.is_empty() => {
            let at = g.below(open.len() as u64) as usize;
            let (p, s, left) = open[at];
            let mut h = header(TaskContinuation, p, CLIENT, s);
            h.more_packets = left > 1;
            if left > 1 {
                open[at].2 -= 1;
            } else {
                open.swap_remove(at);
            }
            frame(h)
        }
        22..24 => frame(header(TaskContinuation, pool, CLIENT, g.next() as u16)),
        24..60 => {
            *seq = seq.wrapping_add(1);
            let mut h = header(NewTask, pool, CLIENT, *seq);
            h.more_packets = g.chance(15);
            if h.more_packets {
                open.push((pool, *seq, 1 + g.below(3) as u8));
            }
            frame(h)
        }
        60..95 => frame(header(
            [TaskDone, TaskDoneIdle][g.below(2) as usize],
            pool,
            node,
            0,
        )),
        _ => {
            // A reply from a node of another pool, or of none.
            let other = if g.chance(50) { 30 } else { 63 };
            frame(header(TaskDone, pool, other, 0))
        }
    }
}

/// The hardware's counters with the model's names, in its register order.
fn counts_named(c: &JbsqCounts) -> [(&'static str, u32); 26] {
    let v = |b: Bits<32>| b.index() as u32;
    [
        ("tasks", v(c.tasks)),
        ("placed", v(c.placed)),
        ("held", v(c.held)),
        ("released", v(c.released)),
        ("buffer_full", v(c.buffer_full)),
        ("fallback", v(c.fallback)),
        ("dropped", v(c.dropped)),
        ("max_depth", v(c.max_depth)),
        ("stale_tokens", v(c.stale_tokens)),
        ("token_overflow", v(c.token_overflow)),
        ("replies_not_in_pool", v(c.replies_not_in_pool)),
        ("replies_spurious", v(c.replies_spurious)),
        ("resubmits", v(c.resubmits)),
        ("sent_idle_add", v(c.sent_idle_add)),
        ("sent_idle_remove", v(c.sent_idle_remove)),
        ("sent_load_update", v(c.sent_load_update)),
        ("idle_repairs", v(c.idle_repairs)),
        ("discarded", v(c.discarded)),
        ("unknown_pool", v(c.unknown_pool)),
        ("not_scheduled", v(c.not_scheduled)),
        ("to_control", v(c.to_control)),
        ("continuations", v(c.continuations)),
        ("continuation_miss", v(c.continuation_miss)),
        ("conn_inserts", v(c.conn_inserts)),
        ("conn_collisions", v(c.conn_collisions)),
        ("conn_expired", v(c.conn_expired)),
    ]
}

/// What a pass leaving the core must show, beyond the chain's checks.
#[derive(Debug)]
enum Expect {
    /// A pass the driver recorded: its step.
    Step(usize),
    /// A frame no table sees: its class and, for a Horus frame, the model's result (to the
    /// control port, or not scheduled).
    Frame {
        class: u64,
        to_control: bool,
        result: Option<JbsqResult>,
    },
}

/// The switch's ports and spines, as the map's configuration and as the model's view of it:
/// the pools' spine second in the table, behind another.
fn ports() -> (JobPorts, SwitchCfg, SpineTable) {
    let spine = |id: u16, n: u8| {
        let ep = Endpoint {
            mac: MacAddr([2, 0x5b, 0, 0, n, id as u8]),
            ip: std::net::Ipv4Addr::new(10, 9, n, 1),
            udp_port: 7000 + u16::from(n),
        };
        let entry = SpineEntry {
            valid: true,
            id: u64::from(id).into(),
            mac: jobs::mac_num(ep.mac).into(),
            ip: u64::from(u32::from(ep.ip)).into(),
            udp: u64::from(ep.udp_port).into(),
            egress: u64::from(n + 20).into(),
        };
        ((id, ep, n + 20), entry)
    };
    let (a, sa) = spine(SPINE.id + 1, 1);
    let (b, sb) = spine(SPINE.id, 2);
    let ports = JobPorts {
        pass_through: 9,
        control: 10,
        spines: vec![a, b],
    };
    let cfg = SwitchCfg {
        pass_through_port: 9u64.into(),
        control_port: 10u64.into(),
        ..SwitchCfg::default()
    };
    let spines = SpineTable {
        s0: sa,
        s1: sb,
        ..SpineTable::default()
    };
    (ports, cfg, spines)
}

/// The jobs `JbsqJobMap` makes of `passes` (each with whether it comes back), and whether it
/// pushes each.
fn map_jobs(passes: &[(JbsqPhv, bool)]) -> Vec<(JbsqJob, bool)> {
    let (_, cfg, spines) = ports();
    let mut uut = JbsqJobMap::default();
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let input = passes.to_vec();
    let mut sim = Simulation::new();
    sim.add_testbench(move |mut sim: Sim<JbsqJobMap>| {
        let mut x = sim.init()?;
        for &(p, again) in &input {
            x.pass_valid.next = true;
            x.pass.next = p;
            x.again.next = again;
            x.cfg.next = cfg;
            x.spines.next = spines;
            x = sim.wait(1, x)?;
            sink.lock().unwrap().push((x.job.val(), x.push.val()));
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * (passes.len() as u64 + 10))
        .unwrap();
    let out = seen.lock().unwrap().clone();
    assert_eq!(out.len(), passes.len());
    out
}

#[derive(Default, Debug)]
struct Report {
    cycles: usize,
    passes: usize,
    seconds: usize,
    controls: usize,
    kinds: BTreeMap<&'static str, usize>,
    /// Every pass that left, whether it came back, and its job as the model asks for it (`None`
    /// for a control pass: no frame, nothing forwarded, held or released).
    left: Vec<(JbsqPhv, bool, Option<JbsqJob>)>,
    /// The counters at the end (the hardware's, equal to the model's).
    counters: Vec<(&'static str, u32)>,
}

/// Runs `inputs` random inputs (after the set-up) through the core and the model; panics at the
/// first difference.
fn run(seed: u64, inputs: usize, busy_percent: u64) -> Report {
    let mut uut = Core::new(SIZES, SEED, TIMEOUT_US);
    uut.connect_all();
    let report = Arc::new(Mutex::new(None));
    let sink = report.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Core>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Core>| {
        let mut x = sim.init()?;
        let mut g = Gen(seed | 1);
        let (job_ports, _, _) = ports();
        let mut d = Driver::new(SIZES, SEED);
        d.set_conn_timeout_us(TIMEOUT_US);
        let mut queue = setup();
        let mut generated = 0usize;
        let (mut seq, mut open) = (0u16, Vec::new());
        let mut time = 0u32;
        let mut handle = 0u64;
        // The host's control passes of the operation under way, the steps they were recorded as.
        let mut ctl: VecDeque<usize> = VecDeque::new();
        let mut expected: VecDeque<(Expect, u64)> = VecDeque::new();
        let mut r = Report::default();
        let mut out = Vec::new();
        let mut quiet = 0usize;
        let mut idle = 0usize;
        wait_clock_true!(sim, clock, x);
        loop {
            r.cycles += 1;
            time = time.wrapping_add(g.below(3) as u32);
            if queue.is_empty() && generated < inputs {
                queue.extend(traffic(&mut g, &mut seq, &mut open));
                generated += 1;
            }
            // The host runs an operation when nothing is in the stages and no pass entered
            // last cycle (the model then has no second pass pending).
            let host = matches!(
                queue.front(),
                Some(
                    Input::Churn { .. }
                        | Input::Configure(..)
                        | Input::Add(..)
                        | Input::Reset(..)
                        | Input::Buffer { .. }
                )
            );
            if host && ctl.is_empty() && quiet >= 2 && x.in_flight.val().index() == 0 {
                assert!(
                    d.pending.is_empty(),
                    "a second pass pending with the stages empty"
                );
                let first = d.steps.len();
                match queue.pop_front().unwrap() {
                    Input::Configure(p, cfg) => d.configure(p, cfg),
                    Input::Add(p, node) => d.add(p, node, None, 0),
                    Input::Churn {
                        pool,
                        node,
                        k,
                        tasks,
                    } => {
                        if d.tables().node_cfg[usize::from(node)].active {
                            d.remove(pool, node);
                        }
                        d.add(pool, node, k, tasks);
                    }
                    Input::Reset(p) => {
                        let nodes = POOLS.iter().find(|x| x.0 == p).unwrap().1;
                        for &node in nodes {
                            if d.tables().node_cfg[usize::from(node)].active {
                                d.remove(p, node);
                            }
                        }
                        d.configure(p, pool_cfg(p));
                        for &node in nodes {
                            d.add(p, node, None, 0);
                        }
                    }
                    Input::Buffer { pool, slots: 0, .. } => {
                        let pc = d.tables().pool_cfg[usize::from(pool)].unwrap();
                        let s = PoolSettings {
                            holds: false,
                            ..PoolSettings::of(&pc.cfg)
                        };
                        d.set_pool_params(pool, s);
                    }
                    Input::Buffer { pool, shift, slots } => {
                        d.move_buffer(pool, pool_cfg(pool).queue_base + shift, slots);
                    }
                    Input::Frame { .. } => unreachable!(),
                }
                ctl.extend(first..d.steps.len());
            }
            x.pkt_valid.next = false;
            x.ctl_valid.next = false;
            if let Some(&i) = ctl.front() {
                x.ctl.next = d.steps[i].pass;
                x.ctl_valid.next = true;
            } else if let Some(Input::Frame { class, header }) = queue.front()
                && g.chance(busy_percent)
            {
                let mut p = parsed(header);
                p.class = (*class).into();
                x.pkt.next = p;
                x.pkt_valid.next = true;
            }
            x.pkt_time.next = u64::from(time).into();
            x.pkt_len.next = 64.into();
            x.pkt_handle.next = (handle % 64).into();
            x.pkt_start.next = ((handle % 64) * 4).into();
            wait_clock_false!(sim, clock, x);
            let leaving = x.out_valid.val().then(|| (x.out.val(), x.out_again.val()));
            let entering = x.trace_valid.val().then(|| x.trace.val());
            if let Some((o, again)) = leaving {
                let (e, h) = expected
                    .pop_front()
                    .expect("a pass left that never entered");
                assert_eq!(o.handle.index() as u64, h % 64, "its frame's slot: {o:?}");
                match e {
                    Expect::Step(i) => {
                        let s = &d.steps[i];
                        let control = s.pass.is_ctl_pool
                            || s.pass.is_ctl_add
                            || s.pass.is_ctl_remove
                            || s.pass.is_ctl_read
                            || s.pass.is_ctl_place
                            || s.pass.is_ctl_bound
                            || s.pass.is_ctl_pool_params
                            || s.pass.is_ctl_move;
                        let job = (!control)
                            .then(|| job_of(&job_ports, 64, Some(&s.result), false, again));
                        r.left.push((o, again, job));
                        let kind = match check_pass(i, s, &o) {
                            "control" if s.pass.is_ctl_move => "buffer move",
                            "control" if s.pass.is_ctl_pool_params => "closed to holding",
                            kind => kind,
                        };
                        *r.kinds.entry(kind).or_default() += 1;
                        assert_eq!(
                            again,
                            s.result.resubmit.is_some(),
                            "comes back: pass {i} {:?}\n{:?}",
                            s.pass,
                            s.result
                        );
                        out.push(o);
                    }
                    Expect::Frame {
                        class,
                        to_control,
                        result,
                    } => {
                        let through = class == CLASS_PASS_THROUGH;
                        let job = job_of(&job_ports, 64, result.as_ref(), through, again);
                        r.left.push((o, again, Some(job)));
                        assert!(!again && !o.addr_ok && stage_msg(&o).is_none(), "{o:?}");
                        let flags = (
                            o.is_pass_through,
                            o.is_to_control,
                            o.is_other,
                            o.is_malformed,
                            o.is_bad_sum,
                        );
                        let want = match class {
                            CLASS_PASS_THROUGH => (true, false, false, false, false),
                            CLASS_DROP_MALFORMED => (false, false, false, true, false),
                            CLASS_DROP_CHECKSUM => (false, false, false, false, true),
                            _ => (false, to_control, !to_control, false, false),
                        };
                        assert_eq!(flags, want, "the frame's way: {o:?}");
                        let kind = if to_control { "to control" } else { "no table" };
                        *r.kinds.entry(kind).or_default() += 1;
                    }
                }
            }
            quiet += 1;
            if let Some(p) = entering {
                quiet = 0;
                r.passes += 1;
                if x.ctl_ready.val() {
                    let i = ctl
                        .pop_front()
                        .expect("a control pass the host did not run");
                    r.controls += 1;
                    expected.push_back((Expect::Step(i), 0));
                } else if p.is_retry || p.is_return {
                    r.seconds += 1;
                    let h = p.handle.index() as u64;
                    d.again();
                    expected.push_back((Expect::Step(d.steps.len() - 1), h));
                } else {
                    assert!(
                        x.pkt_valid.val() && x.pkt_ready.val(),
                        "a pass from nowhere"
                    );
                    let Some(Input::Frame { class, header: h }) = queue.pop_front() else {
                        unreachable!()
                    };
                    assert_eq!(p.time.index() as u32, time);
                    use PacketType::*;
                    let scheduled = matches!(
                        h.pkt_type,
                        NewTask | TaskContinuation | TaskDone | TaskDoneIdle
                    );
                    if class == CLASS_HORUS && scheduled {
                        d.packet(h, 64, time);
                        expected.push_back((Expect::Step(d.steps.len() - 1), handle));
                    } else {
                        // The model's way for a Horus frame: the control port, or not scheduled.
                        let result = (class == CLASS_HORUS).then(|| d.leaf.packet(h, 64, time));
                        let to_control = result.is_some_and(|res| {
                            let t = res.forward.map(|e| e.target);
                            assert!(
                                t == Some(Target::Control)
                                    || res.drop == Some(JbsqDrop::NotScheduled)
                            );
                            t == Some(Target::Control)
                        });
                        let e = Expect::Frame {
                            class,
                            to_control,
                            result,
                        };
                        expected.push_back((e, handle));
                    }
                    handle += 1;
                }
            }
            wait_clock_true!(sim, clock, x);
            if queue.is_empty() && generated >= inputs && expected.is_empty() && ctl.is_empty() {
                idle += 1;
                if idle > 2 * CORE_LATENCY {
                    break;
                }
            }
        }
        assert_eq!(x.in_flight.val().index(), 0, "passes still in flight");
        assert!(d.pending.is_empty(), "a second pass never ran");
        // The counters, each the model's (32 bits, wrapping). The driver's control passes ran
        // through the model's control plane, which counts no pass, and so does the core.
        let hw = counts_named(&x.counts.val());
        r.counters = hw.to_vec();
        for ((name, want), (hw_name, got)) in d.leaf.counters().named().into_iter().zip(hw) {
            assert_eq!(name, hw_name);
            assert_eq!(got, want as u32, "counter {name}");
        }
        // Over the run: as many messages as the model's passes sent (the counters above count
        // them by kind).
        let c = d.leaf.counters();
        let msgs = out.iter().filter(|o| stage_msg(o).is_some()).count();
        let model_msgs = d.steps.iter().filter(|s| model_msg(s).is_some()).count();
        assert_eq!(msgs, model_msgs, "messages to the spine");
        r.kinds.insert("messages", msgs);
        r.kinds.insert(
            "idle messages",
            (c.sent_idle_add + c.sent_idle_remove) as usize,
        );
        *sink.lock().unwrap() = Some(r);
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 10 * 200 * (inputs as u64 + 500))
        .unwrap();
    report.lock().unwrap().take().expect("the bench finished")
}

/// A job with what the egress does not read of it cleared: a message's fields without a
/// message, a release's without a release, the store's slot without a hold or a release.
fn canon(mut j: JbsqJob) -> JbsqJob {
    if !j.sig {
        let d = JbsqJob::default();
        (j.sig_type, j.sig_pool, j.sig_src, j.sig_dst, j.sig_load) =
            (d.sig_type, d.sig_pool, d.sig_src, d.sig_dst, d.sig_load);
        (j.sig_mac, j.sig_ip, j.sig_udp, j.sig_port) = (d.sig_mac, d.sig_ip, d.sig_udp, d.sig_port);
    }
    if !j.release {
        j.rel = Default::default();
        j.rel_tail = 0.into();
    }
    if !j.hold && !j.release {
        j.store_base = 0.into();
    }
    j
}

fn check(seed: u64, inputs: usize, busy: u64) {
    let r = run(seed, inputs, busy);
    // Each pass's job.
    let ins: Vec<(JbsqPhv, bool)> = r.left.iter().map(|l| (l.0, l.1)).collect();
    let mut pushed = 0;
    for (i, ((got, push), (o, again, want))) in map_jobs(&ins).into_iter().zip(&r.left).enumerate()
    {
        let ctx = || format!("pass {i} left as {o:?} (again: {again})");
        match want {
            Some(w) => {
                // The frame's slot is the pass's (the test above holds it to its frame's).
                let w = JbsqJob {
                    handle: o.handle,
                    start: o.start,
                    ..*w
                };
                assert_eq!(canon(got), canon(w), "the job: {}", ctx())
            }
            None => assert!(
                !got.has_frame && !got.free && !got.fwd && !got.hold && !got.release,
                "a control pass's job: {got:?}; {}",
                ctx()
            ),
        }
        pushed += usize::from(push);
        // A job with work is pushed; one without only when the pass sends a message to a spine
        // the table lacks (the egress retires it at once).
        let work = got.fwd || got.hold || got.release || got.sig || got.free;
        assert!(!work || push, "{}", ctx());
        assert!(!push || work || o.spine_ok, "{}", ctx());
    }
    println!(
        "{pushed} jobs of {} passes; counters {:?}",
        r.left.len(),
        r.counters
    );
    println!(
        "{} passes in {} cycles ({} second passes, {} control): {:?}",
        r.passes, r.cycles, r.seconds, r.controls, r.kinds
    );
    for kind in [
        "token",
        "held",
        "release",
        "fallback",
        "dropped",
        "place",
        "continuation",
        "continuation miss",
        "to control",
        "no table",
        "idle messages",
        "buffer move",
        "closed to holding",
    ] {
        assert!(
            r.kinds.get(kind).copied().unwrap_or(0) > 0,
            "no {kind}: {:?}",
            r.kinds
        );
    }
    assert!(r.seconds > inputs / 50 && r.controls > 20, "{r:?}");
    let discarded = r.counters.iter().find(|c| c.0 == "discarded").unwrap().1;
    assert!(discarded > 0, "no held task discarded: {:?}", r.counters);
}

#[test]
fn jbsq_core_matches_the_model_back_to_back() {
    check(1, 3000, 100);
}

#[test]
fn jbsq_core_matches_the_model_with_idle_cycles() {
    check(2, 2000, 60);
}

#[test]
fn job_map_is_lint_clean_and_within_the_depth_target() {
    let r = jbsq_common::lint_and_synth("jbsq_job_map", JbsqJobMap::default());
    println!("job map: {r:#}");
    assert!(
        r.lut_depth <= horus_hdl_tools::check::TARGET_LUT_LEVELS,
        "{r:#}\n{:#?}",
        r.over_target
    );
}

/// Its depth and area are checked inside the leaf's top level's synthesis, which holds it whole
/// (`rtl-gen/tests/top_targets.rs`).
#[test]
fn jbsq_core_verilog_is_lint_clean_at_the_preset_sizes() {
    jbsq_common::lint(
        "jbsq_core",
        JbsqCore::<6, 12, 16, 12, 10>::new(
            JbsqSizes::DEFAULT,
            SEED,
            horus_model::config::DEFAULT_CONN_TIMEOUT_US,
        ),
    );
}
