//! Drives a JBSQ stage or chain of stages ([`JbsqPipelineStage`]) one pass per clock in
//! rust-hdl's simulator, as `common` does the paper leaf's: a pass is presented as `early` one
//! cycle before it is `pass`, as the previous stage does. Each test binary uses part of it.
#![allow(dead_code)]

use horus_pipeline::jbsq::JbsqPipelineStage;
use horus_pipeline::jbsq::phv::JbsqPhv;
use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// Feeds `passes` one per clock to a block whose passes leave `latency` cycles after they are
/// presented (one stage: 2; `k` stages: `k + 1`) and returns the pass that left for each.
#[allow(dead_code)]
pub fn run<S: JbsqPipelineStage + Send + 'static>(
    mut uut: S,
    passes: Vec<JbsqPhv>,
    latency: usize,
) -> Vec<JbsqPhv> {
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let n = passes.len();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<S>| {
        let c = x.clock_mut();
        c.next = !c.val();
    });
    sim.add_testbench(move |mut sim: Sim<S>| {
        let mut x = sim.init()?;
        x = sim.watch(|x| x.clock().val().clk, x)?;
        let mut prev = JbsqPhv::default();
        for i in 0..n + latency {
            let p = passes.get(i).copied().unwrap_or_default();
            x.port_mut().up.early.next = p;
            x.port_mut().up.pass.next = prev;
            prev = p;
            x = sim.watch(|x| !x.clock().val().clk, x)?;
            x = sim.watch(|x| x.clock().val().clk, x)?;
            if i + 1 >= latency && i + 1 - latency < n {
                sink.lock().unwrap().push(x.port().down.pass.val());
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 20 * (n as u64 + 40)).unwrap();
    let out = seen.lock().unwrap().clone();
    assert_eq!(out.len(), n, "the simulation ended early");
    out
}

/// Feeds `passes` one per clock (`None`: a bubble), runs `tail` more idle cycles, and returns
/// every live pass that left, in order: for a stage that holds some passes longer than a clock
/// (the caller leaves the bubbles the hold needs).
#[allow(dead_code)]
pub fn run_held<S: JbsqPipelineStage + Send + 'static>(
    mut uut: S,
    passes: Vec<Option<JbsqPhv>>,
    tail: usize,
) -> Vec<JbsqPhv> {
    uut.connect_all();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let n = passes.len() + tail;
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<S>| {
        let c = x.clock_mut();
        c.next = !c.val();
    });
    sim.add_testbench(move |mut sim: Sim<S>| {
        let mut x = sim.init()?;
        x = sim.watch(|x| x.clock().val().clk, x)?;
        let mut prev = JbsqPhv::default();
        for i in 0..n {
            let p = passes.get(i).copied().flatten().unwrap_or_default();
            x.port_mut().up.early.next = p;
            x.port_mut().up.pass.next = prev;
            prev = p;
            x = sim.watch(|x| !x.clock().val().clk, x)?;
            x = sim.watch(|x| x.clock().val().clk, x)?;
            let o = x.port().down.pass.val();
            if o.live {
                sink.lock().unwrap().push(o);
            }
        }
        sim.done(x)?;
        Ok(())
    });
    sim.run(Box::new(uut), 20 * (n as u64 + 40)).unwrap();
    seen.lock().unwrap().clone()
}

/// Lint, synthesis for UltraScale+ and the logic depth of a block's Verilog.
#[allow(dead_code)]
pub fn lint_and_synth<T: Block>(name: &str, mut uut: T) -> horus_hdl_tools::check::SynthReport {
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint(name, &v).unwrap();
    horus_hdl_tools::check::yosys_synth(name, &v).unwrap()
}

/// Lint of a block's Verilog (Verilator `-Wall`): for a block whose depth and area are checked
/// inside a larger one's synthesis (the chain's, the core's and the top level's, inside the
/// emitted leaf's: `rtl-gen/tests/top_targets.rs`).
#[allow(dead_code)]
pub fn lint<T: Block>(name: &str, mut uut: T) {
    uut.connect_all();
    let v = horus_hdl_tools::verilog::emit(&uut);
    horus_hdl_tools::check::verilator_lint(name, &v).unwrap();
}

/// A 16-bit descriptor field.
pub fn b16(v: impl Into<u64>) -> Bits<16> {
    v.into().into()
}

/// The model's leaf driven operation by operation, each pass recorded with the descriptor it
/// enters the pipeline with (the parser's fields, or the host's for a control pass) and the
/// model's tables before and after it: each stage's test reads its inputs (what the stages before
/// it hand on) and its expected outputs off these. Each JBSQ test uses part of it.
#[allow(dead_code)]
/// The JBSQ descriptor's kinds of pass, as the proofs name them.
pub mod flags {
    use horus_pipeline::jbsq::phv::JbsqPhv;

    pub type Flag = fn(&mut JbsqPhv);

    /// A second pass's flags (the pass mux sets one: a retry, a returned place).
    pub const SECOND: [Flag; 2] = [|p| p.is_retry = true, |p| p.is_return = true];
    /// A packet's kinds that may ask for a second pass (a retry also carries `is_task`).
    pub const PACKET: [Flag; 2] = [|p| p.is_task = true, |p| p.is_reply = true];
    /// A control pass's operations (the register port stages exactly one).
    pub const CONTROL: [Flag; 8] = [
        |p| p.is_ctl_pool = true,
        |p| p.is_ctl_add = true,
        |p| p.is_ctl_remove = true,
        |p| p.is_ctl_place = true,
        |p| p.is_ctl_read = true,
        |p| p.is_ctl_bound = true,
        |p| p.is_ctl_pool_params = true,
        |p| p.is_ctl_move = true,
    ];

    /// The bit of the descriptor that `set` sets.
    pub fn offset(set: impl Fn(&mut JbsqPhv)) -> usize {
        use rust_hdl::prelude::*;
        let mut p = JbsqPhv::default();
        set(&mut p);
        let bits: Bits<{ JbsqPhv::BITS }> = p.into();
        (0..JbsqPhv::BITS)
            .find(|&i| bits.get_bit(i))
            .expect("a bit set")
    }

    /// The bits of the descriptor that `flags` set.
    pub fn bits(flags: &[Flag]) -> Vec<usize> {
        flags.iter().map(|&f| offset(f)).collect()
    }
}

pub mod driver {
    use super::b16;
    use horus_model::fixed::RackAverage;
    use horus_model::rng::Xorshift64;
    use horus_model::sched::Signal;
    use horus_model::sched::jbsq::*;
    use horus_model::sched::{NodeAddr, Target};
    use horus_model::wire::{Endpoint, HorusHeader, MacAddr, PacketType};
    use horus_pipeline::jbsq::phv::JbsqPhv;

    /// A client's node ID (not a worker).
    pub const CLIENT: u16 = 0xFFFF;

    /// A pool of 8 node slots from `base`, bound `k`, token rings of 32 places a level from
    /// `base · 32`, the buffer region `[queue_base, queue_base + queue_slots)`, idle workers
    /// advertised, no spine.
    pub fn pool_cfg(
        base: u16,
        k: u8,
        queue_base: u32,
        queue_slots: u32,
        fallback: Fallback,
    ) -> JbsqPool {
        JbsqPool {
            base,
            capacity: 8,
            k,
            ring_base: u32::from(base) * 32,
            ring_slots: 32,
            queue_base,
            queue_slots,
            fallback,
            advertise: Advertise::Idle,
            hold_us: 0,
            params: horus_model::sched::state::Params::jbsq_default(),
            spine: None,
        }
    }

    /// The address the driver gives node `node`: every field drawn from its ID, so that a wrong
    /// node's shows.
    pub fn node_addr(node: u16) -> NodeAddr {
        let [hi, lo] = node.to_be_bytes();
        NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([2, 0x4a, hi, lo, lo ^ 0x5a, hi ^ 0xa5]),
                ip: std::net::Ipv4Addr::new(10, hi, lo, lo.wrapping_add(1)),
                udp_port: 5000 + node,
            },
            port: (node % 251) as u8,
            // Not the node's ID: the wire's `dst_id` is the address's.
            dst_id: node ^ 0x0f00,
        }
    }

    /// One pass through the model.
    #[derive(Clone, Debug)]
    pub struct Step {
        /// The descriptor entering `poolCfg`.
        pub pass: JbsqPhv,
        pub before: JbsqTables,
        pub after: JbsqTables,
        pub result: JbsqResult,
        /// The tables the model's pass touched (control passes: empty).
        pub touched: Vec<JbsqStage>,
        /// The generator's state before and after the pass.
        pub rng: (u64, u64),
        /// The model's counters before and after the pass.
        pub counters: (JbsqCounters, JbsqCounters),
    }

    /// Puts pool configuration `cfg` into the descriptor's `poolCfg` fields.
    pub fn encode_cfg(p: &mut JbsqPhv, cfg: &JbsqPool) {
        p.base = b16(cfg.base);
        p.cap = b16(cfg.capacity);
        p.pool_k = b16(cfg.k);
        p.ring_base = b16(cfg.ring_base);
        p.ring_slots = b16(cfg.ring_slots);
        p.queue_base = b16(cfg.queue_base);
        p.queue_slots = b16(cfg.queue_slots);
        p.drop_full = cfg.fallback == Fallback::Drop;
        let (places, queue, room) = match cfg.advertise {
            Advertise::Idle => (false, false, 0),
            Advertise::Places => (true, false, 0),
            Advertise::Queue { room } => (false, true, room),
        };
        p.adv_places = places;
        p.adv_queue = queue;
        p.room = b16(room);
        p.hold_us = b16(cfg.hold_us);
        p.link_at = b16(cfg.params.link_at);
        p.unlink_at = b16(cfg.params.unlink_at);
        p.report_delta = u64::from(cfg.params.report_delta.0).into();
        p.repair_gap = b16(cfg.params.repair_gap_us);
        p.spine_ok = cfg.spine.is_some();
        p.spine_id = b16(cfg.spine.map_or(0, |s| s.id));
        p.spine_node = b16(cfg.spine.map_or(0, |s| s.node));
    }

    pub fn header(pkt_type: PacketType, pool: u16, src_id: u16, seq_num: u16) -> HorusHeader {
        HorusHeader {
            pkt_type,
            more_packets: false,
            pool_id: pool,
            src_id,
            dst_id: 0,
            qlen: 0,
            seq_num,
        }
    }

    fn with_header(p: &mut JbsqPhv, h: &HorusHeader, len: u16, time: u32) {
        p.pkt_type = u64::from(h.pkt_type.code()).into();
        p.more = h.more_packets;
        p.pool = b16(h.pool_id);
        p.src = b16(h.src_id);
        p.dst = b16(h.dst_id);
        p.qlen = b16(h.qlen);
        p.seq = b16(h.seq_num);
        p.len = b16(len);
        p.time = u64::from(time).into();
    }

    pub struct Driver {
        pub leaf: JbsqLeaf,
        pub steps: Vec<Step>,
        /// Second passes handed out and not yet fed back.
        pub pending: Vec<JbsqResubmit>,
        /// `random_traffic` sends continuations too (see there).
        pub continuations: bool,
        /// `random_traffic`'s churn also changes bounds (decision 36): every third event a
        /// worker's new bound, every fifth the pool's.
        pub bounds: bool,
        /// Multi-packet tasks sent and not finished: pool, seq, continuations still to send.
        open: Vec<(u16, u16, u8)>,
        /// The arrival time of the packets `random_traffic` sends: one microsecond an operation.
        now: u32,
        /// The leaf's connection timeout (`set_conn_timeout_us`).
        pub conn_timeout_us: u32,
    }

    impl Driver {
        pub fn new(sizes: JbsqSizes, seed: u64) -> Driver {
            Driver {
                leaf: JbsqLeaf::new(sizes, seed),
                steps: Vec::new(),
                pending: Vec::new(),
                continuations: false,
                bounds: false,
                open: Vec::new(),
                now: 0,
                conn_timeout_us: horus_model::config::DEFAULT_CONN_TIMEOUT_US,
            }
        }

        /// Sets the leaf's connection timeout (the hardware's is its `ConnStage::new`'s).
        pub fn set_conn_timeout_us(&mut self, us: u32) {
            self.leaf.set_conn_timeout_us(us);
            self.conn_timeout_us = us;
        }

        /// A continuation's pass as it leaves `conn`: the node its entry gave it (`cont_hit`,
        /// `cont_node`), by the model's rule on the model's entry before the pass; dropped before
        /// when its pool is not configured.
        pub fn followed(&self, s: &Step) -> JbsqPhv {
            let mut p = s.pass;
            assert!(p.is_cont);
            let pool = p.pool.index() as u16;
            let seq = p.seq.index() as u16;
            p.conn_slot = b16(horus_model::sched::conn_hash(pool, seq) & 0xFFFF);
            if s.result.drop == Some(JbsqDrop::UnknownPool) {
                p.drop = true;
                return p;
            }
            let i = (horus_model::sched::conn_hash(pool, seq) & (s.before.conn.len() as u32 - 1))
                as usize;
            let mut h = header(PacketType::TaskContinuation, pool, CLIENT, seq);
            h.more_packets = p.more;
            let mut e = s.before.conn[i];
            if let Ok(node) = e.follow(&h, p.time.index() as u32, self.conn_timeout_us) {
                p.cont_hit = true;
                p.cont_node = b16(node);
            }
            p
        }

        pub fn tables(&self) -> &JbsqTables {
            self.leaf.tables()
        }

        fn run(
            &mut self,
            pass: JbsqPhv,
            f: impl FnOnce(&mut JbsqLeaf) -> JbsqResult,
            touched: bool,
        ) -> JbsqResult {
            let before = self.leaf.tables().clone();
            let rng = self.leaf.rng_state();
            let counters = *self.leaf.counters();
            let result = f(&mut self.leaf);
            if let Some(rs) = result.resubmit {
                self.pending.push(rs);
            }
            self.steps.push(Step {
                pass: JbsqPhv { live: true, ..pass },
                before,
                after: self.leaf.tables().clone(),
                result,
                touched: if touched {
                    self.leaf.last_pass_stages().to_vec()
                } else {
                    Vec::new()
                },
                rng: (rng, self.leaf.rng_state()),
                counters: (counters, *self.leaf.counters()),
            });
            result
        }

        pub fn configure(&mut self, pool: u16, cfg: JbsqPool) {
            let mut p = JbsqPhv {
                is_ctl_pool: true,
                pool: b16(pool),
                ..Default::default()
            };
            encode_cfg(&mut p, &cfg);
            self.run(
                p,
                |l| {
                    l.configure_pool(pool, cfg).unwrap();
                    JbsqResult::default()
                },
                false,
            );
        }

        /// Adds `node` (its own bound `k`, or the pool's; `tasks` outstanding): the node's pass,
        /// then one control pass for each free place (the host knows its level and the node's
        /// generation). The model runs them as one operation; the place passes are recorded
        /// with the tables after it (they change no table but `queueCtl` and `ring`), the
        /// first with the first message the model's operation returned.
        pub fn add(&mut self, pool: u16, node: u16, k: Option<u8>, tasks: u16) {
            self.add_at(pool, node, k, tasks, node_addr(node));
        }

        /// [`Driver::add`] with the node's address `a`.
        pub fn add_at(&mut self, pool: u16, node: u16, k: Option<u8>, tasks: u16, a: NodeAddr) {
            let t = self.leaf.tables();
            let generation = t.node_cfg[usize::from(node)].generation;
            let pc = t.pool_cfg[usize::from(pool)].unwrap();
            let kk = k.unwrap_or(pc.cfg.k);
            let p = JbsqPhv {
                is_ctl_add: true,
                pool: b16(pool),
                src: b16(node),
                k: b16(k.unwrap_or(0)),
                tasks: b16(tasks),
                // The host works the pool's new unit out (the paper leaf's host does too).
                unit: RackAverage::unit_for(u32::from(pc.n) + 1).into(),
                mac: horus_regs::mac_bits(a.endpoint.mac).into(),
                ip: u64::from(u32::from(a.endpoint.ip)).into(),
                udp: b16(a.endpoint.udp_port),
                egress: u64::from(a.port).into(),
                out_dst: b16(a.dst_id),
                ..Default::default()
            };
            let mut first = None;
            self.run(
                p,
                |l| {
                    first = l.add_node_at(pool, node, k, tasks, a).unwrap();
                    JbsqResult::default()
                },
                false,
            );
            self.places(pool, node, generation, tasks..u16::from(kk), kk, first);
        }

        /// The place passes of an operation the model ran whole (an addition, a new bound): one
        /// for each place of `places` under bound `k`, at generation `generation`. The model's
        /// first message of the group (`first`) goes with the first place pass (none of the place
        /// passes moves the average, so each would carry the same).
        fn places(
            &mut self,
            pool: u16,
            node: u16,
            generation: u8,
            places: std::ops::Range<u16>,
            k: u8,
            mut first: Option<(Signal, HorusHeader)>,
        ) {
            for place in places {
                let p = JbsqPhv {
                    is_ctl_place: true,
                    pool: b16(pool),
                    src: b16(node),
                    generation: u64::from(generation).into(),
                    level: (level_of(place, k) as u64).into(),
                    ..Default::default()
                };
                let signal = std::mem::take(&mut first);
                self.run(
                    p,
                    |_| JbsqResult {
                        signal,
                        ..JbsqResult::default()
                    },
                    false,
                );
            }
        }

        /// Removes `node`: the host reads its member slot and the pool's last member first, as
        /// the model's control plane does (a control pass that reads `members` and
        /// `memberSlot`, recorded before the removal), and the removal's pass carries them.
        pub fn remove(&mut self, pool: u16, node: u16) {
            let read = JbsqPhv {
                is_ctl_read: true,
                pool: b16(pool),
                src: b16(node),
                ..Default::default()
            };
            self.run(read, |_| JbsqResult::default(), false);
            let t = self.leaf.tables();
            let pc = t.pool_cfg[usize::from(pool)].unwrap();
            let slot = t.member_slot[usize::from(node)];
            let last = t.members[usize::from(pc.cfg.base + pc.n - 1)];
            let p = JbsqPhv {
                is_ctl_remove: true,
                pool: b16(pool),
                src: b16(node),
                slot: b16(slot),
                last: b16(last),
                unit: RackAverage::unit_for(u32::from(pc.n) - 1).into(),
                ..Default::default()
            };
            self.run(
                p,
                |l| {
                    l.remove_node(pool, node).unwrap();
                    JbsqResult::default()
                },
                false,
            );
        }

        /// Sets `node`'s bound to `k` (decision 36): the node's pass (its generation one up), then
        /// one control pass for each of its `k` places, recorded as [`Driver::add_at`]'s.
        pub fn set_bound(&mut self, pool: u16, node: u16, k: u8) {
            let generation = self.leaf.tables().node_cfg[usize::from(node)]
                .generation
                .wrapping_add(1);
            let p = JbsqPhv {
                is_ctl_bound: true,
                pool: b16(pool),
                src: b16(node),
                k: b16(k),
                ..Default::default()
            };
            let mut first = None;
            self.run(
                p,
                |l| {
                    first = l.set_bound(pool, node, k).unwrap();
                    JbsqResult::default()
                },
                false,
            );
            self.places(pool, node, generation, 0..u16::from(k), k, first);
        }

        /// Sets `pool`'s settings (decision 36): one control pass.
        pub fn set_pool_params(&mut self, pool: u16, s: PoolSettings) {
            let p = JbsqPhv {
                is_ctl_pool_params: true,
                pool: b16(pool),
                pool_k: b16(s.k),
                hold_us: b16(s.hold_us),
                link_at: b16(s.params.link_at),
                unlink_at: b16(s.params.unlink_at),
                report_delta: u64::from(s.params.report_delta.0).into(),
                repair_gap: b16(s.params.repair_gap_us),
                holds: s.holds,
                ..Default::default()
            };
            self.run(
                p,
                |l| {
                    l.set_pool_params(pool, s).unwrap();
                    JbsqResult::default()
                },
                false,
            );
        }

        /// Moves `pool`'s buffer region (decision 37): one control pass.
        pub fn move_buffer(&mut self, pool: u16, queue_base: u32, queue_slots: u32) {
            let p = JbsqPhv {
                is_ctl_move: true,
                pool: b16(pool),
                queue_base: b16(queue_base),
                queue_slots: b16(queue_slots),
                ..Default::default()
            };
            self.run(
                p,
                |l| {
                    l.move_buffer(pool, queue_base, queue_slots).unwrap();
                    JbsqResult::default()
                },
                false,
            );
        }

        /// A packet's first pass: a NEW_TASK is a task, a TASK_CONTINUATION a continuation, a
        /// TASK_DONE a reply.
        pub fn packet(&mut self, h: HorusHeader, len: u16, time: u32) -> JbsqResult {
            let mut p = JbsqPhv::default();
            with_header(&mut p, &h, len, time);
            match h.pkt_type {
                PacketType::NewTask => p.is_task = true,
                PacketType::TaskContinuation => p.is_cont = true,
                _ => p.is_reply = true,
            }
            self.run(p, |l| l.packet(h, len, time), true)
        }

        pub fn task(&mut self, pool: u16, seq: u16) -> JbsqResult {
            let h = header(PacketType::NewTask, pool, CLIENT, seq);
            self.packet(h, 64, u32::from(seq))
        }

        /// A continuation of the task `seq` at time `time`, the last of its task unless `more`.
        pub fn continuation(&mut self, pool: u16, seq: u16, more: bool, time: u32) -> JbsqResult {
            let mut h = header(PacketType::TaskContinuation, pool, CLIENT, seq);
            h.more_packets = more;
            self.packet(h, 64, time)
        }

        pub fn reply(&mut self, pool: u16, node: u16) -> JbsqResult {
            self.packet(header(PacketType::TaskDone, pool, node, 0), 64, 0)
        }

        /// Feeds back the oldest second pass handed out.
        pub fn again(&mut self) -> JbsqResult {
            let rs = self.pending.remove(0);
            let mut p = JbsqPhv::default();
            match rs {
                JbsqResubmit::Retry { task } => {
                    with_header(&mut p, &task.header, task.len, task.time_us);
                    p.is_task = true;
                    p.is_retry = true;
                }
                JbsqResubmit::ReturnPlace {
                    pool,
                    node,
                    generation,
                    level,
                    time_us,
                } => {
                    p.is_return = true;
                    p.pool = b16(pool);
                    p.src = b16(node);
                    p.generation = u64::from(generation).into();
                    p.level = u64::from(level).into();
                    p.time = u64::from(time_us).into();
                }
            }
            self.run(p, |l| l.resubmit(rs), true)
        }

        pub fn drain(&mut self) {
            while !self.pending.is_empty() {
                self.again();
            }
        }

        /// `ops` random operations on `pools` (each a pool and the nodes it may hold): tasks
        /// (`tasks` in 16 operations, the first 5 of them a second pass fed back instead while
        /// one is pending; one task in eight multi-packet, which is never held), replies from
        /// the pool's nodes and, one in 16, from other nodes; every `churn` operations a node
        /// of the first pool is removed and added again (with its own bound, and a task
        /// outstanding, every other time). The pools must be configured, their nodes added.
        ///
        /// With `continuations`, one operation in four is a continuation instead, while a
        /// multi-packet task has some to send (each sends one to three, the last with no more
        /// to follow; a continuation may come late, after its entry expired), and one in 32 a
        /// continuation of a task never sent. Packets arrive a microsecond an operation apart.
        pub fn random_traffic(
            &mut self,
            seed: u64,
            ops: usize,
            pools: &[(u16, &[u16])],
            churn: usize,
            tasks: u64,
        ) {
            let mut rng = Xorshift64::new(seed);
            let mut seq = 0u16;
            for i in 0..ops {
                let x = rng.next_u64();
                self.now += 1;
                let (pool, nodes) = pools[(x % pools.len() as u64) as usize];
                let node = nodes[((x >> 16) % nodes.len() as u64) as usize];
                if self.continuations && (x >> 48) % 32 == 1 {
                    self.continuation(pool, (x >> 24) as u16, false, self.now);
                    continue;
                }
                if self.continuations && (x >> 48) % 4 == 0 && !self.open.is_empty() {
                    let at = ((x >> 52) % self.open.len() as u64) as usize;
                    let (pool, seq, left) = self.open[at];
                    self.continuation(pool, seq, left > 1, self.now);
                    if left > 1 {
                        self.open[at].2 -= 1;
                    } else {
                        self.open.swap_remove(at);
                    }
                    continue;
                }
                if i % churn == churn / 2 {
                    let (pool0, nodes0) = pools[0];
                    let node = nodes0[(i / churn) % nodes0.len()];
                    let event = i / churn;
                    if self.bounds && event % 5 == 4 {
                        self.set_pool_params(pool0, settings(event));
                        continue;
                    }
                    if self.bounds && event % 7 == 6 {
                        // A move of the pool's buffer region (decision 37) to where the model
                        // takes it, whatever it still holds (discarded and counted).
                        let total = self.leaf.sizes().buffer_slots;
                        let slots = 1 + (event % 4) as u32;
                        let base = (event as u32 * 7) % (total - slots);
                        if self.leaf.clone().move_buffer(pool0, base, slots).is_ok() {
                            self.move_buffer(pool0, base, slots);
                            continue;
                        }
                    }
                    if self.bounds
                        && event % 3 == 2
                        && self.leaf.tables().node_cfg[usize::from(node)].active
                    {
                        self.set_bound(pool0, node, 1 + (event % 5) as u8);
                        continue;
                    }
                    if self.leaf.tables().node_cfg[usize::from(node)].active {
                        self.remove(pool0, node);
                        let odd = (i / churn) % 2 == 1;
                        self.add(pool0, node, odd.then_some(3), u16::from(odd));
                    }
                    continue;
                }
                match (x >> 8) % 16 {
                    0..=4 if !self.pending.is_empty() => {
                        self.again();
                    }
                    op if op < tasks => {
                        seq = seq.wrapping_add(1);
                        let mut h = header(PacketType::NewTask, pool, CLIENT, seq);
                        h.more_packets = (x >> 32) % 8 == 0;
                        let time = if self.continuations {
                            self.now
                        } else {
                            u32::from(seq)
                        };
                        self.packet(h, 64, time);
                        if h.more_packets && self.continuations {
                            self.open.push((pool, seq, 1 + ((x >> 36) % 3) as u8));
                        }
                    }
                    0..=14 => {
                        self.reply(pool, node);
                    }
                    _ => {
                        // A reply from a node of another pool, or no pool's.
                        let other = pools[((x % pools.len() as u64) as usize + 1) % pools.len()];
                        let node = if (x >> 40) % 2 == 0 { other.1[0] } else { 63 };
                        self.reply(pool, node);
                    }
                }
            }
            self.drain();
        }
    }

    /// A pool's settings for the `event`th change of `random_traffic` (each field moves).
    pub fn settings(event: usize) -> PoolSettings {
        PoolSettings {
            k: 1 + (event % 4) as u8,
            hold_us: (event % 3) as u16 * 5,
            params: horus_model::sched::state::Params {
                link_at: 1 + (event % 2) as u16,
                unlink_at: 0,
                report_delta: horus_model::fixed::Load(0x8000 << (event % 3)),
                repair_gap_us: (event % 4) as u16 * 10,
            },
            // Every other change closes the pool to holding (decision 37), until the next
            // change or a move of its region opens it.
            holds: event % 10 != 9,
        }
    }

    /// A task's pass as it leaves `taskBuf`, with what the stages before decided read off the
    /// model: the token a pop took and whether it was stale (then the model's ring head), the
    /// fallback's node, held, dropped on a full region. `None` for a task of a pool not
    /// configured (`poolCfg` drops it).
    pub fn placed(s: &Step) -> Option<JbsqPhv> {
        let mut p = s.pass;
        let pool = p.pool.index();
        let t = &s.before;
        let pc = t.pool_cfg.get(pool).copied().flatten()?;
        match s.result.placement {
            Some(Placement::Token { node, .. }) => {
                p.pop = true;
                p.tok_node = b16(node);
            }
            Some(Placement::Fallback { node }) => {
                p.fallback = true;
                p.fb_node = b16(node);
            }
            Some(Placement::Dropped) => p.dropped = true,
            Some(Placement::Held { .. }) => p.held = true,
            None => {
                // A stale token: the task retries.
                let q = t.queue_ctl[pool];
                let j = (0..LEVELS).find(|&j| q.ring_count[j] > 0)?;
                let c = pc.cfg;
                let tok = t.rings[c.ring_base as usize
                    + j * usize::from(c.ring_slots)
                    + usize::from(q.ring_head[j])];
                p.pop = true;
                p.stale = true;
                p.tok_node = b16(tok.node);
            }
        }
        Some(p)
    }

    /// What the model's pass says the chain's last stage must show (the chain's, the core's test),
    /// and a name for the kind of pass.
    pub fn check_pass(i: usize, s: &Step, o: &JbsqPhv) -> &'static str {
        let ctx = || {
            format!(
                "pass {i}: {:?}\nmodel: {:?}\nchain: {o:?}",
                s.pass, s.result
            )
        };
        let r = &s.result;
        let p = &s.pass;
        if p.is_task || p.is_reply || p.is_return {
            assert_eq!(stage_msg(o), model_msg(s), "the message: {}", ctx());
        }
        // Where the pass's task goes: a task placed or a continuation, or a released task.
        let to = sent_to(r);
        assert_eq!(o.addr_ok, to.is_some(), "a task forwarded: {}", ctx());
        if let Some(a) = to {
            assert_eq!(addr_of(o), addr_fields(&a), "the address: {}", ctx());
        }
        if p.is_cont {
            assert_eq!(
                o.drop,
                r.drop == Some(JbsqDrop::UnknownPool),
                "an unknown pool: {}",
                ctx()
            );
            return if to.is_some() {
                assert!(o.cont_hit, "{}", ctx());
                "continuation"
            } else {
                "continuation miss"
            };
        }
        if p.is_task {
            let dropped_early = matches!(r.drop, Some(JbsqDrop::UnknownPool | JbsqDrop::EmptyPool));
            assert_eq!(o.drop, dropped_early, "dropped before queueCtl: {}", ctx());
            let retry = matches!(r.resubmit, Some(JbsqResubmit::Retry { .. }));
            assert_eq!(o.pop && o.stale, retry, "a stale token: {}", ctx());
            match r.placement {
                Some(Placement::Token { node, level }) => {
                    assert!(o.pop && !o.stale, "a token: {}", ctx());
                    assert_eq!(
                        (o.tok_node.index() as u16, o.level.index() as u8),
                        (node, level),
                        "the token: {}",
                        ctx()
                    );
                    "token"
                }
                Some(Placement::Fallback { node }) => {
                    assert!(o.fallback && !o.pop && !o.held, "over a bound: {}", ctx());
                    assert_eq!(o.fb_node.index() as u16, node, "the sample: {}", ctx());
                    "fallback"
                }
                Some(Placement::Held { depth }) => {
                    assert!(o.held && !o.pop && !o.fallback, "held: {}", ctx());
                    assert_eq!(o.depth.index() as u32, depth, "the depth: {}", ctx());
                    "held"
                }
                Some(Placement::Dropped) if !dropped_early => {
                    assert!(o.dropped && !o.held && !o.fallback, "dropped: {}", ctx());
                    "dropped"
                }
                _ if retry => "retry",
                _ => {
                    assert!(!o.pop && !o.held && !o.fallback && !o.dropped, "{}", ctx());
                    "drop"
                }
            }
        } else if p.is_reply || p.is_return {
            let returns = match r.resubmit {
                Some(JbsqResubmit::ReturnPlace { level, .. }) => Some(level),
                _ => None,
            };
            if p.is_reply {
                assert_eq!(o.drop, r.drop.is_some(), "not in the pool: {}", ctx());
                assert_eq!(o.returns, returns.is_some(), "the place returns: {}", ctx());
                if let Some(level) = returns {
                    assert_eq!(o.level.index() as u8, level, "the place's ring: {}", ctx());
                }
            } else {
                let queue_ctl = s.touched.contains(&JbsqStage::QueueCtl);
                assert_eq!(o.drop, !queue_ctl, "a removed node's place: {}", ctx());
                let pushed = s.touched.contains(&JbsqStage::Ring);
                assert_eq!(o.push, pushed, "the place put back: {}", ctx());
                assert_eq!(
                    o.overflow,
                    queue_ctl && !pushed && r.release.is_none(),
                    "the ring full: {}",
                    ctx()
                );
            }
            assert_eq!(o.release, r.release.is_some(), "a release: {}", ctx());
            if let Some(rel) = r.release {
                // `rel_dst` is the worker's node ID; the frame's `dst_id` is its address's
                // (`out_dst`, checked above).
                let (t, h) = (rel.task, rel.task.header);
                assert_eq!(
                    (
                        o.rel_pkt_type.index() as u8,
                        o.rel_more,
                        o.rel_pool.index() as u16,
                        o.rel_src.index() as u16,
                        o.rel_dst.index() as u16,
                        o.rel_qlen.index() as u16,
                        o.rel_seq.index() as u16,
                        o.rel_len.index() as u16,
                        o.rel_time.index() as u32,
                    ),
                    (
                        h.pkt_type.code(),
                        h.more_packets,
                        h.pool_id,
                        h.src_id,
                        rel.node,
                        h.qlen,
                        h.seq_num,
                        t.len,
                        t.time_us,
                    ),
                    "the released task: {}",
                    ctx()
                );
                "release"
            } else if p.is_reply {
                "reply"
            } else {
                "place"
            }
        } else {
            "control"
        }
    }

    /// Where the model's pass sent a task: a task placed or a continuation to its node, or a
    /// released task to the replying worker.
    pub fn sent_to(r: &JbsqResult) -> Option<NodeAddr> {
        match r.forward.map(|e| e.target) {
            Some(Target::Node { addr, .. }) => Some(addr),
            _ => r.release.map(|rel| rel.addr),
        }
    }

    /// An address as (MAC, IPv4, UDP port, egress port, `dst_id`).
    pub type AddrFields = (u64, u32, u16, u8, u16);

    pub fn addr_fields(a: &NodeAddr) -> AddrFields {
        (
            horus_regs::mac_bits(a.endpoint.mac),
            u32::from(a.endpoint.ip),
            a.endpoint.udp_port,
            a.port,
            a.dst_id,
        )
    }

    /// The address `nodeAddr` handed on.
    pub fn addr_of(o: &JbsqPhv) -> AddrFields {
        (
            u64::from(o.mac),
            u64::from(o.ip) as u32,
            o.udp.index() as u16,
            o.egress.index() as u8,
            o.out_dst.index() as u16,
        )
    }

    /// A client's address (the source of the tasks the frame-level tests send).
    pub fn client() -> Endpoint {
        Endpoint {
            mac: MacAddr([2, 0, 0, 9, 0, 1]),
            ip: std::net::Ipv4Addr::new(10, 0, 9, 1),
            udp_port: horus_model::wire::HORUS_UDP_PORT,
        }
    }

    /// A message as (signal, its header's type, pool, source, destination, qlen, seq).
    pub type Msg = (Signal, u8, u16, u16, u16, u16, u16);

    pub fn model_msg(s: &Step) -> Option<Msg> {
        s.result.signal.map(|(sig, h): (Signal, HorusHeader)| {
            (
                sig,
                h.pkt_type.code(),
                h.pool_id,
                h.src_id,
                h.dst_id,
                h.qlen,
                h.seq_num,
            )
        })
    }

    pub fn stage_msg(o: &JbsqPhv) -> Option<Msg> {
        let flags = [
            (o.idle_add, Signal::IdleAdd),
            (o.idle_remove, Signal::IdleRemove),
            (o.load_update, Signal::LoadUpdate),
        ];
        let set: Vec<Signal> = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
        assert!(set.len() <= 1, "one message a pass: {set:?}");
        let ty = u64::from(o.sig_pkt_type) as u8;
        match set.first() {
            None => {
                assert_eq!(ty, 0, "a type without a message");
                None
            }
            Some(&sig) => Some((
                sig,
                ty,
                u64::from(o.pool) as u16,
                u64::from(o.spine_node) as u16,
                u64::from(o.spine_id) as u16,
                u64::from(o.sig_qlen) as u16,
                u64::from(o.sig_seq) as u16,
            )),
        }
    }
}

/// The map from a model's pass to the egress job it asks for (`JbsqJob`): the specification the
/// egress's test holds the egress to (its jobs send the model's frames) and the core's test holds
/// the hardware's map (`JbsqJobMap`) to.
#[allow(dead_code)]
pub mod jobs {
    use horus_model::config::Config;
    use horus_model::sched::Target;
    use horus_model::sched::jbsq::{JbsqResult, Placement};
    use horus_model::wire::{Endpoint, HorusHeader, MacAddr};
    use horus_pipeline::jbsq::egress::{JbsqJob, JbsqSend, STORE_SLOT_BEATS};
    use rust_hdl::prelude::*;

    pub fn mac_num(mac: MacAddr) -> u64 {
        mac.0.iter().fold(0, |acc, &b| acc << 8 | u64::from(b))
    }

    pub fn ep_fields(e: &Endpoint) -> (Bits<48>, Bits<32>, Bits<16>) {
        (
            mac_num(e.mac).into(),
            u64::from(u32::from(e.ip)).into(),
            u64::from(e.udp_port).into(),
        )
    }

    /// A beat of AXI-Stream data holding `bytes` (at most 64), the first byte in bits 7:0.
    pub fn beat_bits(bytes: &[u8]) -> Bits<512> {
        let mut b = Bits::<512>::default();
        let mut beat = [0u8; 64];
        beat[..bytes.len()].copy_from_slice(bytes);
        for (i, chunk) in beat.chunks_exact(8).enumerate() {
            b.set_bits::<64>(64 * i, u64::from_le_bytes(chunk.try_into().unwrap()).into());
        }
        b
    }

    pub fn beat_bytes(b: Bits<512>) -> [u8; 64] {
        let mut beat = [0u8; 64];
        for (i, chunk) in beat.chunks_exact_mut(8).enumerate() {
            let word: u64 = b.get_bits::<64>(64 * i).into();
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        beat
    }

    /// The bytes in the last beat of a frame of `len` bytes (0: 64).
    pub fn tail(len: usize) -> Bits<6> {
        ((len % 64) as u64).into()
    }

    /// A frame of `len` bytes sent out of `port`, rewritten or not.
    pub fn send(len: usize, port: u8, rewrite: Option<(&Endpoint, &HorusHeader)>) -> JbsqSend {
        let beats = len.div_ceil(64) as u64;
        let mut s = JbsqSend {
            beats: beats.into(),
            len: (len as u64).into(),
            single: beats == 1,
            port: u64::from(port).into(),
            ..JbsqSend::default()
        };
        if let Some((ep, h)) = rewrite {
            (s.mac, s.ip, s.udp) = ep_fields(ep);
            s.rewrite = true;
            s.pkt_type = u64::from(h.pkt_type.code()).into();
            s.more = h.more_packets;
            s.pool = u64::from(h.pool_id).into();
            s.src = u64::from(h.src_id).into();
            s.dst = u64::from(h.dst_id).into();
            s.qlen = u64::from(h.qlen).into();
            s.seq = u64::from(h.seq_num).into();
        }
        s
    }

    /// What the map reads of the switch's configuration: its ports and its spines (ID, address,
    /// egress port).
    #[derive(Clone, Debug, Default)]
    pub struct JobPorts {
        pub pass_through: u8,
        pub control: u8,
        pub spines: Vec<(u16, Endpoint, u8)>,
    }

    impl JobPorts {
        pub fn of(cfg: &Config) -> JobPorts {
            JobPorts {
                pass_through: cfg.switch.pass_through_port,
                control: cfg.switch.control_port,
                spines: cfg
                    .spines
                    .iter()
                    .map(|sp| {
                        let ep = Endpoint {
                            mac: sp.mac,
                            ip: sp.ip,
                            udp_port: sp.udp_port,
                        };
                        (sp.id, ep, sp.port)
                    })
                    .collect(),
            }
        }
    }

    /// The job of a pass whose frame is `len` bytes: the model's result of the pass (`None`: a
    /// frame not the leaf's, passed through when `passes_through`), and whether it comes back.
    pub fn job_of(
        ports: &JobPorts,
        len: usize,
        pass: Option<&JbsqResult>,
        passes_through: bool,
        again: bool,
    ) -> JbsqJob {
        // The frame's beats, whatever the pass does with it (a hold copies them).
        let mut j = JbsqJob {
            has_frame: true,
            free: !again,
            own: send(len, ports.pass_through, None),
            own_tail: tail(len),
            ..JbsqJob::default()
        };
        let Some(p) = pass else {
            // Not the leaf's: passed through unchanged, or dropped.
            j.fwd = passes_through;
            return j;
        };
        if let Some(e) = p.forward {
            j.fwd = true;
            j.own = match e.target {
                Target::Node { addr, .. } => {
                    send(len, addr.port, Some((&addr.endpoint, &e.header)))
                }
                Target::PassThrough => send(len, ports.pass_through, None),
                Target::Control => send(len, ports.control, None),
                Target::Spine(_) => unreachable!("a pass's own frame never goes to a spine"),
            };
        }
        if let Some(slot) = p.slot {
            j.store_base = u64::from(slot * STORE_SLOT_BEATS as u32).into();
        }
        j.hold = matches!(p.placement, Some(Placement::Held { .. }));
        if let Some(rel) = p.release {
            j.release = true;
            j.rel_tail = tail(usize::from(rel.task.len));
            j.rel = send(
                usize::from(rel.task.len),
                rel.addr.port,
                Some((&rel.addr.endpoint, &rel.task.header)),
            );
        }
        if let Some((_, h)) = p.signal {
            signal(ports, &mut j, &h);
        }
        j
    }

    /// The job's message to the spine whose ID the message's header carries (which the
    /// switch's spine table has).
    pub fn signal(ports: &JobPorts, j: &mut JbsqJob, h: &HorusHeader) {
        let (_, ep, port) = ports.spines.iter().find(|sp| sp.0 == h.dst_id).unwrap();
        j.sig = true;
        j.sig_type = u64::from(h.pkt_type.code()).into();
        j.sig_pool = u64::from(h.pool_id).into();
        j.sig_src = u64::from(h.src_id).into();
        j.sig_dst = u64::from(h.dst_id).into();
        j.sig_load = (u64::from(h.qlen) << 16 | u64::from(h.seq_num)).into();
        (j.sig_mac, j.sig_ip, j.sig_udp) = ep_fields(ep);
        j.sig_port = u64::from(*port).into();
    }
}
