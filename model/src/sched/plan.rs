//! The stage plan as the model runs it: which tables each kind of pass touches, in order.
//!
//! This is the one source of the per-pass table matrix: `rtl-gen` writes it to
//! `build/stage_plan.md`, a test checks the matrix in `docs/algorithm.md` against it, and the
//! pipeline's stages follow it.

use super::{Packet, PassResult, Resubmit, Scheduler, Stage};
use crate::config::{Config, Role};
use crate::fixed::Drift;
use crate::wire::{HorusHeader, PacketType};

/// One kind of pass and the tables it touches, in stage order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanRow {
    pub pass: &'static str,
    pub role: Role,
    pub stages: Vec<Stage>,
}

fn config(role: Role) -> Config {
    let mut s = format!(
        "[switch]\nrole = \"{role}\"\nid = 1\nmac = \"02:00:00:00:00:01\"\nip = \"10.0.0.1\"\npass_through_port = 0\ncontrol_port = 0\n\
         [sizes]\npools = 2\nnodes = 8\nconn_table = 8\n"
    );
    if role == Role::Leaf {
        s += "[[spines]]\nid = 9\nmac = \"02:00:00:00:00:09\"\nip = \"10.0.0.9\"\nudp_port = 1234\nport = 1\n\
              [[pools]]\nid = 0\nspine = 9\nspine_node = 0\n";
    } else {
        s += "[[pools]]\nid = 0\n";
    }
    for id in 0..4 {
        s += &format!(
            "[[pools.nodes]]\nid = {id}\nmac = \"02:00:00:00:01:00\"\nip = \"10.0.1.0\"\nudp_port = 1234\nport = 2\n"
        );
        if role == Role::Spine {
            s += &format!("workers = 4\nleaf = {id}\n");
        }
    }
    Config::from_toml_str(&s).expect("plan configuration is valid")
}

fn header(pkt_type: PacketType, src_id: u16, more_packets: bool) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets,
        pool_id: 0,
        src_id,
        dst_id: 0,
        qlen: 0,
        seq_num: 7,
    }
}

struct Probe {
    s: Scheduler,
    rows: Vec<PlanRow>,
}

impl Probe {
    fn new(role: Role) -> Probe {
        Probe {
            s: Scheduler::from_config(&config(role), 1)
                .expect("configures")
                .0,
            rows: Vec::new(),
        }
    }

    fn record(&mut self, pass: &'static str) {
        self.rows.push(PlanRow {
            pass,
            role: self.s.role(),
            stages: self.s.last_pass_stages(),
        });
    }

    fn packet(&mut self, h: HorusHeader) -> PassResult {
        self.s.packet(Packet {
            header: h,
            time_us: 0,
        })
    }

    fn resubmit(&mut self, r: PassResult) -> PassResult {
        let rs: Resubmit = r.resubmit.expect("the probe's pass resubmits");
        self.s.resubmit(rs)
    }
}

/// Runs one pass of every kind on small leaf and spine schedulers and records the tables each
/// touched.
pub fn stage_plan() -> Vec<PlanRow> {
    let mut leaf = Probe::new(Role::Leaf);
    leaf.packet(header(PacketType::NewTask, 0, false));
    leaf.record("task, idle hit (leaf pops)");
    // Empty the idle list, then make every worker's queue 0 again with plain replies.
    for _ in 0..3 {
        leaf.packet(header(PacketType::NewTask, 0, false));
    }
    for w in 0..4 {
        leaf.packet(header(PacketType::TaskDone, w, false));
    }
    leaf.packet(header(PacketType::NewTask, 0, false));
    leaf.record("task, power of two, no resubmit");
    let t = leaf.s.tables_mut();
    for row in &mut t.nodes {
        (row.drift1, row.drift2) = (Drift(5 << 16), Drift(5 << 16));
    }
    // Two samples of one node never resubmit: draw until the samples differ.
    let first = (0..64)
        .map(|_| leaf.packet(header(PacketType::NewTask, 0, false)))
        .find(|r| r.resubmit.is_some())
        .expect("a pass with two different samples resubmits");
    leaf.record("task, power of two, resubmit");
    leaf.resubmit(first);
    leaf.record("task, second pass");
    leaf.packet(header(PacketType::NewTaskRandom, 0, false));
    leaf.record("random task");
    leaf.packet(header(PacketType::NewTask, 0, true));
    leaf.packet(header(PacketType::TaskContinuation, 0, false));
    assert!(
        leaf.s.counters().continuations == 1,
        "the probe's continuation follows its entry"
    );
    leaf.record("continuation");
    let reply = leaf.packet(header(PacketType::TaskDoneIdle, 1, false));
    leaf.record("reply (leaf) / loadUpdate (spine)");
    leaf.resubmit(reply);
    leaf.record("idleAdd commit");

    let mut spine = Probe::new(Role::Spine);
    for n in [0, 1] {
        let r = spine.packet(header(PacketType::IdleSignal, n, false));
        if n == 0 {
            spine.record("idleAdd first pass");
        }
        spine.resubmit(r);
    }
    spine.packet(header(PacketType::NewTask, 0, false));
    spine.record("task, idle hit (spine)");
    let r = spine.packet(header(PacketType::IdleRemove, 0, false));
    spine.record("idleRemove first pass");
    spine.resubmit(r);
    spine.record("idleRemove second pass");

    let mut rows = leaf.rows;
    rows.extend(spine.rows);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_pass_touches_tables_in_strictly_increasing_stage_order() {
        let rows = stage_plan();
        assert_eq!(rows.len(), 12);
        for r in rows {
            assert!(!r.stages.is_empty(), "{}", r.pass);
            assert!(
                r.stages.windows(2).all(|w| w[0] < w[1]),
                "{}: {:?}",
                r.pass,
                r.stages
            );
        }
    }
}
