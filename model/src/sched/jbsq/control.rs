//! The JBSQ leaf's control passes: configure a pool, add a node, remove a node. Each is one
//! pass through the same stages as traffic, validated before it runs (a refused operation
//! changes nothing). What needs a table read beyond the pass's own (a removed node's member
//! slot, the pool's last member) the host reads first and the pass carries, as for the paper's
//! leaf.

use super::*;

impl JbsqLeaf {
    /// Configures (or re-configures) pool `pool`: its regions of node slots and of the buffer,
    /// `k`, the fallback, the signal parameters and the spine. The pool starts empty; a spine
    /// pool starts unlinked (its first node's add links it). A pool has no node when it is
    /// configured again; the tasks it still holds (no worker was left to release them) are
    /// discarded and counted (`discarded`, decision 30). Refused, changing nothing, for a region
    /// outside the tables or a buffer region overlapping another configured pool's.
    pub fn configure_pool(&mut self, pool: u16, cfg: JbsqPool) -> Result<(), JbsqControlError> {
        let p = usize::from(pool);
        if p >= self.t.pool_cfg.len() {
            return Err(JbsqControlError::PoolOutOfRange);
        }
        let nodes_end = u32::from(cfg.base) + u32::from(cfg.capacity);
        let queue_end = u64::from(cfg.queue_base) + u64::from(cfg.queue_slots);
        let ring_end = u64::from(cfg.ring_base) + LEVELS as u64 * u64::from(cfg.ring_slots);
        if cfg.capacity == 0
            || nodes_end > u32::from(self.sizes.nodes)
            || cfg.queue_slots == 0
            || cfg.queue_slots > MAX_QUEUE_SLOTS
            || queue_end > u64::from(self.sizes.buffer_slots)
            || cfg.ring_slots == 0
            || ring_end > u64::from(self.sizes.ring_entries)
            || cfg.k == 0
            || !cfg.params.is_valid()
        {
            return Err(JbsqControlError::BadConfig);
        }
        if self.t.pool_cfg[p].is_some_and(|pc| pc.n > 0) {
            return Err(JbsqControlError::BadConfig);
        }
        if self.overlaps(p, cfg.queue_base, cfg.queue_slots) {
            return Err(JbsqControlError::RegionOverlap);
        }
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg[p] = Some(PoolCfgEntry {
            cfg,
            n: 0,
            holds: true,
        });
        self.touch(JbsqStage::QueueCtl);
        self.counters.discarded += u64::from(self.t.queue_ctl[p].depth);
        self.t.queue_ctl[p] = QueueCtl::default();
        self.touch(JbsqStage::Link);
        self.t.link[p] = LinkEntry::default();
        self.touch(JbsqStage::PoolAvg);
        self.t.avg[p] = fresh_avg(0, 0);
        Ok(())
    }

    /// Adds `node` to `pool` with bound `k` (the pool's when `None`) and `tasks` outstanding
    /// (0 for a new worker; the simulator's prefilled start gives more): one pass for the node
    /// (it joins the members, the average is rescaled to the new count), then one pass for each
    /// of its free places `tasks .. k`, which goes into its ring ([`level_of`]) and runs the
    /// link rule (an idle node may link the rack). The first signal decided, if any, is
    /// returned. The node gets no address (tasks to it carry its ID and go out of port 0): for
    /// a leaf whose frames go nowhere, as the simulator's; [`JbsqLeaf::add_node_at`] gives one.
    pub fn add_node(
        &mut self,
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
    ) -> Result<Option<(Signal, HorusHeader)>, JbsqControlError> {
        let addr = NodeAddr {
            endpoint: Endpoint {
                mac: MacAddr([0; 6]),
                ip: std::net::Ipv4Addr::UNSPECIFIED,
                udp_port: 0,
            },
            port: 0,
            dst_id: node,
        };
        self.add_node_at(pool, node, k, tasks, addr)
    }

    /// [`JbsqLeaf::add_node`] with the node's address: the addition's pass writes it into
    /// `nodeAddr` (where its tasks go, and `dst_id` they carry).
    pub fn add_node_at(
        &mut self,
        pool: u16,
        node: u16,
        k: Option<u8>,
        tasks: u16,
        addr: NodeAddr,
    ) -> Result<Option<(Signal, HorusHeader)>, JbsqControlError> {
        let p = usize::from(pool);
        let pc = self.configured(pool)?;
        let n_ = usize::from(node);
        if n_ >= self.t.node_cfg.len() {
            return Err(JbsqControlError::NodeOutOfRange);
        }
        if self.t.node_cfg[n_].active {
            return Err(JbsqControlError::BadNode);
        }
        if pc.n >= pc.cfg.capacity {
            return Err(JbsqControlError::PoolFull);
        }
        let k = k.unwrap_or(pc.cfg.k);
        if k == 0 {
            return Err(JbsqControlError::BadConfig);
        }
        let cfg = pc.cfg;
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg[p] = Some(PoolCfgEntry { n: pc.n + 1, ..pc });
        self.touch(JbsqStage::NodeCfg);
        let generation = self.t.node_cfg[n_].generation;
        self.t.node_cfg[n_] = NodeCfgEntry {
            active: true,
            pool,
            generation,
            k,
        };
        self.touch(JbsqStage::Members);
        self.t.members[usize::from(cfg.base + pc.n)] = node;
        self.touch(JbsqStage::MemberSlot);
        self.t.member_slot[n_] = pc.n;
        self.touch(JbsqStage::Outstanding);
        self.t.outstanding[n_] = OutstandingEntry {
            active: true,
            generation,
            tasks,
        };
        self.touch(JbsqStage::PoolAvg);
        let pa = &mut self.t.avg[p];
        let outstanding = pa.avg.tasks + u32::from(tasks);
        pa.avg
            .rescale(RackAverage::unit_for(u32::from(pc.n) + 1), 0);
        pa.avg.tasks = outstanding;
        pa.spine_tasks = 0;
        self.touch(JbsqStage::NodeAddr);
        self.t.node_addr[n_] = Some(AddrEntry { pool, addr });
        let mut first = None;
        for place in tasks..u16::from(k) {
            let signal = self.add_place(pool, &cfg, node, generation, level_of(place, k));
            first = first.or(signal);
        }
        Ok(first)
    }

    /// A control pass that puts one free place of `node` into ring `j`.
    fn add_place(
        &mut self,
        pool: u16,
        cfg: &JbsqPool,
        node: u16,
        generation: u8,
        j: usize,
    ) -> Option<(Signal, HorusHeader)> {
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.touch(JbsqStage::QueueCtl);
        let q = &mut self.t.queue_ctl[usize::from(pool)];
        if q.ring_count[j] >= cfg.ring_slots {
            self.counters.token_overflow += 1;
            return None;
        }
        let at = wrap_add16(q.ring_head[j], q.ring_count[j], cfg.ring_slots);
        q.ring_count[j] += 1;
        let (counts, depth) = (q.ring_count, q.depth);
        // A control pass carries no time: a message it decides keeps the pool's stamp.
        let signal = self.link_rule(pool, cfg, (&counts, depth), None, None);
        self.touch(JbsqStage::Ring);
        self.t.rings[ring_index(cfg, j, at)] = Token { node, generation };
        signal.map(|s| self.signal_header(pool, cfg, s, false))
    }

    /// Sets the bound of member `node` of `pool` to `k` (decision 36): one pass (its generation
    /// one up, so its tokens still in the rings go stale; its count of running tasks kept), then
    /// one pass for each of its `k` places (levels `level_of(0..k, k)`), as an addition's. Until
    /// the tasks it was running answer it may have those and `k` more; a reply returns a place
    /// only below the new bound, so it comes down to `k`. The first signal decided, if any.
    pub fn set_bound(
        &mut self,
        pool: u16,
        node: u16,
        k: u8,
    ) -> Result<Option<(Signal, HorusHeader)>, JbsqControlError> {
        let generation = self.set_bound_pass(pool, node, k)?;
        let cfg = self.t.pool_cfg[usize::from(pool)]
            .expect("set_bound_pass checked the pool")
            .cfg;
        let mut first = None;
        for place in 0..u16::from(k) {
            let signal = self.add_place(pool, &cfg, node, generation, level_of(place, k));
            first = first.or(signal);
        }
        Ok(first)
    }

    /// [`JbsqLeaf::set_bound`]'s first pass alone (`nodeCfg` and `outstanding`), giving the
    /// node's new generation: what the pipeline's staged operation does before the places' passes.
    pub fn set_bound_pass(&mut self, pool: u16, node: u16, k: u8) -> Result<u8, JbsqControlError> {
        let (_, nc) = self.member(pool, node)?;
        let n_ = usize::from(node);
        if k == 0 {
            return Err(JbsqControlError::BadConfig);
        }
        let generation = nc.generation.wrapping_add(1);
        self.guard.begin();
        self.touch(JbsqStage::NodeCfg);
        self.t.node_cfg[n_] = NodeCfgEntry {
            generation,
            k,
            ..nc
        };
        self.touch(JbsqStage::Outstanding);
        self.t.outstanding[n_].generation = generation;
        Ok(generation)
    }

    /// `pool`'s entry: refused for a pool past the table or not configured.
    fn configured(&self, pool: u16) -> Result<PoolCfgEntry, JbsqControlError> {
        self.t
            .pool_cfg
            .get(usize::from(pool))
            .ok_or(JbsqControlError::PoolOutOfRange)?
            .ok_or(JbsqControlError::UnknownPool)
    }

    /// The buffer region `[base, base + slots)` overlaps a configured pool's other than `p`'s
    /// (the regions partition what the pools hold: decision 37).
    fn overlaps(&self, p: usize, base: u32, slots: u32) -> bool {
        let end = u64::from(base) + u64::from(slots);
        self.t.pool_cfg.iter().enumerate().any(|(i, o)| {
            o.is_some_and(|o| {
                let o_end = u64::from(o.cfg.queue_base) + u64::from(o.cfg.queue_slots);
                i != p && u64::from(o.cfg.queue_base) < end && u64::from(base) < o_end
            })
        })
    }

    /// Pool `pool`'s entry and node `node`'s, which must be an active member of it (what a
    /// removal and a new bound ask of the host's operation).
    fn member(
        &self,
        pool: u16,
        node: u16,
    ) -> Result<(PoolCfgEntry, NodeCfgEntry), JbsqControlError> {
        let pc = self.configured(pool)?;
        let nc = *self
            .t
            .node_cfg
            .get(usize::from(node))
            .ok_or(JbsqControlError::NodeOutOfRange)?;
        if !nc.active || nc.pool != pool {
            return Err(JbsqControlError::BadNode);
        }
        Ok((pc, nc))
    }

    /// Sets `pool`'s settings (decision 36): its bound `k`, which the workers added later
    /// without their own take (its members keep theirs: [`JbsqLeaf::set_bound`] changes those),
    /// its hold and its signal parameters, which its next pass that runs the link or report rule
    /// uses. One pass on `poolCfg`; its regions, fallback, what it advertises and its spine stay.
    pub fn set_pool_params(&mut self, pool: u16, s: PoolSettings) -> Result<(), JbsqControlError> {
        let p = usize::from(pool);
        let pc = self.configured(pool)?;
        if s.k == 0 || !s.params.is_valid() {
            return Err(JbsqControlError::BadConfig);
        }
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg[p] = Some(PoolCfgEntry {
            cfg: JbsqPool {
                k: s.k,
                hold_us: s.hold_us,
                params: s.params,
                ..pc.cfg
            },
            holds: s.holds,
            ..pc
        });
        Ok(())
    }

    /// Moves `pool`'s region of the task buffer to `[queue_base, queue_base + queue_slots)`
    /// (decision 37): one pass, which writes the region in `poolCfg` and opens the pool to
    /// holding again, and starts its held queue afresh in `queueCtl`, its rings kept. The tasks
    /// it still holds are discarded and counted (`discarded`, returned): the host closes the pool
    /// (`PoolSettings::holds` false) and waits for its queue to drain first, so that none is.
    /// Refused, changing nothing, for a region outside the buffer, empty, larger than
    /// [`MAX_QUEUE_SLOTS`] or overlapping another configured pool's.
    pub fn move_buffer(
        &mut self,
        pool: u16,
        queue_base: u32,
        queue_slots: u32,
    ) -> Result<u32, JbsqControlError> {
        let p = usize::from(pool);
        let pc = self.configured(pool)?;
        let end = u64::from(queue_base) + u64::from(queue_slots);
        if queue_slots == 0
            || queue_slots > MAX_QUEUE_SLOTS
            || end > u64::from(self.sizes.buffer_slots)
        {
            return Err(JbsqControlError::BadConfig);
        }
        if self.overlaps(p, queue_base, queue_slots) {
            return Err(JbsqControlError::RegionOverlap);
        }
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg[p] = Some(PoolCfgEntry {
            cfg: JbsqPool {
                queue_base,
                queue_slots,
                ..pc.cfg
            },
            holds: true,
            ..pc
        });
        self.touch(JbsqStage::QueueCtl);
        let q = &mut self.t.queue_ctl[p];
        let (head, discarded) = (q.queue_head, q.depth);
        self.counters.discarded += u64::from(discarded);
        q.queue_head = 0;
        q.depth = 0;
        // The discarded tasks' slots of the old region hold nothing now.
        for i in 0..discarded {
            let at = pc.cfg.queue_base + wrap_add32(head, i, pc.cfg.queue_slots);
            self.t.buf[at as usize] = None;
        }
        Ok(discarded)
    }

    /// The tasks `pool` holds (the host's read of `queueCtl`, as a node read's pass gives it).
    pub fn held_depth(&self, pool: u16) -> u32 {
        self.t
            .queue_ctl
            .get(usize::from(pool))
            .map_or(0, |q| q.depth)
    }

    /// Removes `node` from its pool: its tasks are lost with it (the average is rescaled without
    /// them), its tokens still in the rings become stale (a generation bump; a task that pops one
    /// takes a second pass), the pool's last member moves into its member slot, its address is
    /// cleared. Tasks the pool holds stay held, for the other workers' replies.
    pub fn remove_node(&mut self, pool: u16, node: u16) -> Result<(), JbsqControlError> {
        let p = usize::from(pool);
        let n_ = usize::from(node);
        let (pc, nc) = self.member(pool, node)?;
        let cfg = pc.cfg;
        // The host's reads: the node's member slot and the pool's last member.
        let slot = self.t.member_slot[n_];
        let last = self.t.members[usize::from(cfg.base + pc.n - 1)];
        self.guard.begin();
        self.touch(JbsqStage::PoolCfg);
        self.t.pool_cfg[p] = Some(PoolCfgEntry { n: pc.n - 1, ..pc });
        self.touch(JbsqStage::NodeCfg);
        self.t.node_cfg[n_] = NodeCfgEntry {
            active: false,
            pool,
            generation: nc.generation.wrapping_add(1),
            k: nc.k,
        };
        self.touch(JbsqStage::Members);
        self.t.members[usize::from(cfg.base + slot)] = last;
        self.touch(JbsqStage::MemberSlot);
        self.t.member_slot[usize::from(last)] = slot;
        self.touch(JbsqStage::Outstanding);
        let o = &mut self.t.outstanding[n_];
        let lost = std::mem::take(&mut o.tasks);
        o.active = false;
        o.generation = nc.generation.wrapping_add(1);
        self.touch(JbsqStage::PoolAvg);
        let pa = &mut self.t.avg[p];
        pa.avg
            .rescale(RackAverage::unit_for(u32::from(pc.n) - 1), u32::from(lost));
        pa.spine_tasks = 0;
        // Its address goes (the paper leaf's rule): a continuation of a task sent to it misses.
        self.touch(JbsqStage::NodeAddr);
        self.t.node_addr[n_] = None;
        Ok(())
    }
}
