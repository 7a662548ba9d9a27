//! The tables that execute the programs' register actions: one table a register action (or
//! group of them), at its register's stage, for the roles that hold it.

use horus_model::config::Role;

use super::ingress::ra_table;
use super::ir::Decl;

/// Which roles' programs hold a table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Roles {
    Both,
    Leaf,
    Spine,
}

use Roles::{Both, Leaf, Spine};

/// The tables that execute a register action: (roles, table, register, the action's body), in
/// the order the program declares them. Each sits at its register's stage.
const RA_TABLES: &[(Roles, &str, &str, &str)] = &[
    (
        Leaf,
        "ctl_pop",
        "idle_ctl",
        "md.ctl = ctl_pop_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Spine,
        "ctl_take",
        "idle_ctl",
        "md.ctl = ctl_take_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Spine,
        "turn_remove",
        "spine_turn",
        "turn_remove_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Spine,
        "ctl_remove",
        "idle_ctl",
        "md.ctl = ctl_remove_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Spine,
        "ctl_finish",
        "idle_ctl",
        "md.ctl = ctl_finish_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Both,
        "ctl_push",
        "idle_ctl",
        "md.ctl = ctl_push_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Both,
        "members1_read",
        "members1",
        "md.m1 = members1_ra.execute(md.slot1);",
    ),
    (
        Both,
        "members2_read",
        "members2",
        "md.m2 = members2_ra.execute(md.slot2);",
    ),
    (
        Both,
        "idle_read",
        "idle_list",
        "md.n_ref = idle_read_ra.execute(md.idle_slot);",
    ),
    (
        Both,
        "idle_write",
        "idle_list",
        "idle_write_ra.execute(md.idle_slot);",
    ),
    (
        Both,
        "load1_read",
        "load1",
        "md.l1 = load1_read_ra.execute(md.m1[31:16]);",
    ),
    (
        Both,
        "load2_read",
        "load2",
        "md.l2 = load2_read_ra.execute(md.m2[31:16]);",
    ),
    (
        Both,
        "load1_write",
        "load1",
        "load1_write_ra.execute(hdr.horus.src_id);",
    ),
    (
        Both,
        "load2_write",
        "load2",
        "load2_write_ra.execute(hdr.horus.src_id);",
    ),
    (
        Both,
        "load1_add",
        "load1",
        "load1_add_ra.execute(md.resub.node);",
    ),
    (
        Both,
        "load2_add",
        "load2",
        "load2_add_ra.execute(md.resub.node);",
    ),
    (
        Both,
        "idle_index_check",
        "idle_index",
        "md.idx = idle_index_check_ra.execute(hdr.horus.src_id);",
    ),
    (
        Spine,
        "idle_index_set",
        "idle_index",
        "idle_index_set_ra.execute(md.push_ref[31:16]);",
    ),
    // The leaf's idle add commits the reply's own worker (`resubmit_add`: resub.node is the
    // reply's src_id), so its set shares the check's address, src_id: one hash distribution
    // unit of stage 4 where the spine's two index fields take two (`docs/p4.md`).
    (
        Leaf,
        "idle_index_set",
        "idle_index",
        "idle_index_set_ra.execute(hdr.horus.src_id);",
    ),
    (
        Leaf,
        "idle_index_clear",
        "idle_index",
        "idle_index_clear_ra.execute(md.n_ref[31:16]);",
    ),
    (
        Leaf,
        "avg_task",
        "pool_avg",
        "md.avg = avg_task_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Leaf,
        "avg_done",
        "pool_avg",
        "md.avg = avg_done_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Leaf,
        "avg_read",
        "pool_avg",
        "md.avg = avg_read_ra.execute(hdr.horus.pool_id);",
    ),
    (
        Spine,
        "idle_index_remove",
        "idle_index",
        "md.idx = idle_index_remove_ra.execute(hdr.horus.src_id);",
    ),
    (
        Both,
        "drift1_check",
        "drift1",
        "md.d_sel = drift1_check_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift1_charge",
        "drift1",
        "md.d_sel = drift1_charge_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift1_reset",
        "drift1",
        "drift1_reset_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift1_settle",
        "drift1",
        "drift1_settle_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift2_charge",
        "drift2",
        "drift2_charge_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift2_read",
        "drift2",
        "md.d_other = drift2_read_ra.execute(md.other);",
    ),
    (
        Both,
        "drift2_reset",
        "drift2",
        "drift2_reset_ra.execute(md.sel);",
    ),
    (
        Both,
        "drift2_settle",
        "drift2",
        "drift2_settle_ra.execute(md.sel);",
    ),
    (
        Both,
        "conn_insert",
        "conn",
        "md.conn_claimed = conn_insert_ra.execute(md.conn_idx);",
    ),
    (
        Both,
        "conn_node_write",
        "conn_node",
        "conn_node_write_ra.execute(md.conn_idx);",
    ),
    (
        Both,
        "conn_node_read",
        "conn_node",
        "md.out_node = conn_node_read_ra.execute(md.conn_idx);\nmd.verdict = V_NODE;",
    ),
];

/// `role`'s tables of [`RA_TABLES`], with bf-p4c's placement annotations ([`super::emit`]'s
/// `pin`).
pub(super) fn register_tables(role: Role) -> Vec<Decl> {
    let mine = if role == Role::Leaf { Leaf } else { Spine };
    RA_TABLES
        .iter()
        .filter(|(roles, ..)| *roles == Both || *roles == mine)
        .flat_map(|&(_, table, register, body)| ra_table(table, register, body, role))
        .collect()
}
