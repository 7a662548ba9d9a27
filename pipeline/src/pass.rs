//! Between the reference model and the core's ports: what the core is given for a model pass, and
//! what a pass leaving the core means in the model's terms. The test benches and the
//! co-simulation's scoreboard use these; the host driver builds control passes the same way.

use crate::parser::{CLASS_HORUS, Parsed};
use crate::phv::Phv;
use horus_model::config::Role;
use horus_model::sched::{ControlOp, Decision, DropReason, PassResult, Scheduler, Signal, Target};
use horus_model::wire::HorusHeader;

/// The parser's verdict for a well-formed Horus frame carrying `h`.
pub fn parsed(h: &HorusHeader) -> Parsed {
    Parsed {
        class: CLASS_HORUS.into(),
        pkt_type: u64::from(h.pkt_type.code()).into(),
        more_packets: h.more_packets,
        pool_id: u64::from(h.pool_id).into(),
        src_id: u64::from(h.src_id).into(),
        dst_id: u64::from(h.dst_id).into(),
        qlen: u64::from(h.qlen).into(),
        seq_num: u64::from(h.seq_num).into(),
    }
}

pub use horus_regs::mac_bits;

/// The control pass for `op` as the host issues it when the scheduler's state is `m`: it carries
/// the values the host computes (`Scheduler::host_values`). The host validates `op` first
/// (`Scheduler::validate`); the pass itself trusts it.
pub fn control_phv(m: &Scheduler, op: &ControlOp) -> Phv {
    let host = m.host_values(op);
    let mut p = Phv::default();
    let params = |p: &mut Phv, params: &horus_model::sched::Params| {
        p.link_at = u64::from(params.link_at).into();
        p.unlink_at = u64::from(params.unlink_at).into();
        p.report_delta = u64::from(params.report_delta.0).into();
        p.repair_gap = u64::from(params.repair_gap_us).into();
    };
    match *op {
        ControlOp::ConfigurePool {
            pool,
            base,
            capacity,
            params: ref ps,
            spine,
        } => {
            p.is_ctl_pool = true;
            p.pool = u64::from(pool).into();
            p.base = u64::from(base).into();
            p.cap = u64::from(capacity).into();
            params(&mut p, ps);
            if let Some(s) = spine {
                p.spine_ok = true;
                p.spine_id = u64::from(s.id).into();
                p.spine_node = u64::from(s.node).into();
            }
        }
        ControlOp::SetPoolParams {
            pool,
            params: ref ps,
            capacity,
        } => {
            p.is_ctl_params = true;
            p.pool = u64::from(pool).into();
            p.cap = u64::from(capacity).into();
            params(&mut p, ps);
        }
        ControlOp::AddNode {
            pool, node, addr, ..
        } => {
            p.is_ctl_add = true;
            p.pool = u64::from(pool).into();
            p.src = u64::from(node).into();
            p.factor = u64::from(host.factor.0).into();
            p.unit = host.unit.into();
            p.mac = mac_bits(addr.endpoint.mac).into();
            p.ip = u64::from(u32::from(addr.endpoint.ip)).into();
            p.port = u64::from(addr.endpoint.udp_port).into();
            p.egress = u64::from(addr.port).into();
            p.out_dst = u64::from(addr.dst_id).into();
        }
        ControlOp::RemoveNode { pool, node } => {
            p.is_ctl_remove = true;
            p.pool = u64::from(pool).into();
            p.src = u64::from(node).into();
            p.mv_node = u64::from(host.last_member.node).into();
            p.mv_f = u64::from(host.last_member.factor.0).into();
            p.unit = host.unit.into();
        }
    }
    p
}

/// The control pass that reads entry `index` of `stage`'s table back (`readback.rs`).
pub fn read_phv(stage: horus_model::sched::Stage, index: u16) -> Phv {
    Phv {
        is_ctl_read: true,
        rd_table: u64::from(crate::readback::table_number(stage)).into(),
        rd_index: u64::from(index).into(),
        ..Default::default()
    }
}

/// Where a forwarded packet goes, as the egress sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// To a node: its ID and the rewritten header's destination.
    Node {
        node: u16,
        mac: u64,
        ip: u32,
        udp_port: u16,
        egress: u8,
        dst_id: u16,
    },
    PassThrough,
    Control,
}

/// What one pass produced, in terms both the core's output descriptor and the model's
/// [`PassResult`] can be put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub forward: Option<Forward>,
    /// The mirrored message to the spine: its kind, the spine's ID, the switch's node ID at the
    /// spine, and the load it carries (16.16).
    pub signal: Option<(Signal, u16, u16, u32)>,
    pub resubmit: bool,
    pub drop: Option<DropReason>,
    /// The node a task went to on this pass.
    pub placed: Option<u16>,
}

fn reason(code: u64) -> Option<DropReason> {
    (code != 0).then(|| DropReason::ALL[code as usize - 1])
}

impl Outcome {
    /// The outcome of a pass leaving the core (`resubmitted`: the core sent it round again).
    pub fn of_phv(p: &Phv, role: Role, resubmitted: bool) -> Outcome {
        let dropped = p.drop.any();
        let forward = if p.fwd {
            Some(Forward::Node {
                node: p.chosen.index() as u16,
                mac: p.mac.to_u64(),
                ip: p.ip.index() as u32,
                udp_port: p.port.index() as u16,
                egress: p.egress.index() as u8,
                dst_id: p.out_dst.index() as u16,
            })
        } else if p.is_pass_through || (!dropped && (p.is_reply || p.is_reply_idle)) {
            Some(Forward::PassThrough)
        } else if p.is_to_control {
            Some(Forward::Control)
        } else {
            None
        };
        let kind = if p.sig_idle_add {
            Some(Signal::IdleAdd)
        } else if p.sig_idle_remove {
            Some(Signal::IdleRemove)
        } else if p.sig_load_update {
            Some(Signal::LoadUpdate)
        } else {
            None
        };
        let signal = kind
            .filter(|_| role == Role::Leaf && p.spine_ok && !dropped)
            .map(|k| {
                (
                    k,
                    p.spine_id.index() as u16,
                    p.spine_node.index() as u16,
                    p.avg.index() as u32,
                )
            });
        let placed =
            (p.assigned && !dropped && (p.is_task || p.is_random || p.is_sched2 || p.is_cont))
                .then(|| p.chosen.index() as u16);
        Outcome {
            forward,
            signal,
            resubmit: resubmitted,
            drop: reason(p.drop.index() as u64).or(reason(p.sub_drop.index() as u64)),
            placed,
        }
    }

    /// The outcome of a model pass.
    pub fn of_model(r: &PassResult) -> Outcome {
        let forward = r.forward.map(|e| match e.target {
            Target::Node { node, addr } => Forward::Node {
                node,
                mac: mac_bits(addr.endpoint.mac),
                ip: u32::from(addr.endpoint.ip),
                udp_port: addr.endpoint.udp_port,
                egress: addr.port,
                dst_id: addr.dst_id,
            },
            Target::PassThrough => Forward::PassThrough,
            Target::Control => Forward::Control,
            Target::Spine(_) => unreachable!("a forwarded packet never goes to a spine"),
        });
        let signal = r.signal.map(|(k, e)| {
            let h = e.header;
            let load = u32::from(h.qlen) << 16 | u32::from(h.seq_num);
            (k, h.dst_id, h.src_id, load)
        });
        let placed = match r.decision {
            Some(Decision::Idle { node })
            | Some(Decision::Resubmitted { node })
            | Some(Decision::Random { node }) => Some(node),
            Some(Decision::Pow2 {
                sel,
                resubmit: false,
                ..
            }) => Some(sel),
            _ => None,
        };
        Outcome {
            forward,
            signal,
            resubmit: r.resubmit.is_some(),
            drop: r.drop,
            placed,
        }
    }
}
