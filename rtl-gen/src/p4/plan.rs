//! Where each of the model's tables lives in a Tofino 1 ingress pipeline, and the tables the
//! Tofino program adds: the one home of the P4 program's stage numbers. The emitter writes
//! `@horus_stage(N)` from here and the checker holds the emitted text to it. The annotation is
//! the plan's, not a placement: bf-p4c ignores it. In the spine, the tables that execute a
//! register's actions also carry bf-p4c's `@stage(N)`, which it obeys, so that a register's
//! tables meet in its stage; the computing tables it places itself.
//!
//! Tofino 1 has 12 match-action stages. The model's 14 tables map onto them in order, with the
//! copies that a pass reads independently (`members1`/`members2`, `loadList1`/`loadList2`) side by
//! side in one stage, the node table beside the pool table, and the arithmetic between table
//! accesses (the load comparison, the corrected queues, the winner of a resubmitted task) in
//! stages of their own. The `node`, `poolCfg` and `nodeAddr` tables are match-action tables the
//! control plane writes; the others are registers the data plane read-modify-writes.

use horus_model::config::Role;
use horus_model::sched::Stage;

/// Tofino 1's match-action stages per pipe.
pub const TOFINO1_STAGES: u8 = 12;

/// What kind of Tofino object holds a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `Register` the data plane read-modify-writes through `RegisterAction`s.
    Register,
    /// A match-action table the control plane writes.
    MatchTable,
}

/// One table of the Tofino program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TofinoTable {
    /// The model's table it holds, if any (`None`: a Tofino-only table).
    pub model: Option<Stage>,
    /// Its name in the P4 program.
    pub name: &'static str,
    pub kind: Kind,
    /// Its match-action stage.
    pub stage: u8,
    /// Whether the spine has it.
    pub spine: bool,
    /// Whether the leaf has it.
    pub leaf: bool,
}

const fn t(
    model: Option<Stage>,
    name: &'static str,
    kind: Kind,
    stage: u8,
    spine: bool,
) -> TofinoTable {
    TofinoTable {
        model,
        name,
        kind,
        stage,
        spine,
        leaf: true,
    }
}

/// A table of the spine's program only.
const fn spine_only(name: &'static str, kind: Kind, stage: u8) -> TofinoTable {
    TofinoTable {
        model: None,
        name,
        kind,
        stage,
        spine: true,
        leaf: false,
    }
}

use Kind::{MatchTable, Register};

/// The program's stateful tables and control-plane tables, in stage order.
pub const TABLES: &[TofinoTable] = &[
    t(Some(Stage::PoolCfg), "pool_cfg", MatchTable, 0, true),
    t(Some(Stage::Node), "node_cfg", MatchTable, 0, true),
    t(None, "sample1", MatchTable, 1, true),
    t(None, "sample2", MatchTable, 1, true),
    t(Some(Stage::IdleCtl), "idle_ctl", Register, 1, true),
    t(Some(Stage::Members1), "members1", Register, 2, true),
    t(Some(Stage::Members2), "members2", Register, 2, true),
    spine_only("spine_turn", Register, 2),
    t(Some(Stage::IdleList), "idle_list", Register, 3, true),
    t(None, "link_range", MatchTable, 3, false),
    t(Some(Stage::IdleIndex), "idle_index", Register, 4, true),
    t(Some(Stage::Load1), "load1", Register, 4, true),
    t(Some(Stage::Load2), "load2", Register, 4, true),
    t(None, "idle_link", Register, 5, false),
    t(Some(Stage::Drift1), "drift1", Register, 7, true),
    t(Some(Stage::Drift2), "drift2", Register, 8, true),
    t(Some(Stage::PoolAvg), "pool_avg", Register, 8, false),
    t(Some(Stage::Conn), "conn", Register, 9, true),
    t(None, "pool_report", Register, 10, false),
    t(None, "conn_node", Register, 10, true),
    t(Some(Stage::NodeAddr), "node_addr", MatchTable, 11, true),
];

/// The stages of the tables that only compute (keyless, one action) or decide where a pass's
/// packet goes, by name: each sits right after the stage that writes what it reads.
pub const COMPUTE: &[(&str, u8)] = &[
    ("switch_cfg", 0),
    ("classify", 0),
    ("draw", 0),
    ("draw_conn_idx", 0),
    ("conn_time", 0),
    ("header_values", 0),
    ("decode", 0),
    ("decode_finish", 0),
    ("decode_pos", 0),
    ("w_add_one", 1),
    ("reject_checksum", 1),
    ("reject_malformed", 1),
    ("reject_short", 1),
    ("reject_kind", 1),
    ("reject_pool", 1),
    ("reject_empty", 1),
    ("reject_node", 1),
    ("pass_through", 1),
    ("to_control", 1),
    ("spine_check", 1),
    ("spine_clear", 1),
    ("pass_reply", 1),
    ("w_add_sum", 2),
    ("idle_take", 2),
    ("idle_keep", 2),
    ("idle_push", 2),
    ("remove_top", 2),
    ("remove_finish", 2),
    ("reject_locked", 2),
    ("reject_not_member", 2),
    ("link_repair", 2),
    ("same_check", 3),
    ("factor1", 3),
    ("factor2", 3),
    ("factor_idle", 4),
    ("last_check", 4),
    ("load_cmp", 5),
    ("reject_duplicate", 5),
    ("dup_reply", 5),
    ("add_resubmit", 5),
    ("remove_unlock", 5),
    ("remove_move", 5),
    ("remove_abort", 5),
    ("pick1", 6),
    ("pick2", 6),
    ("pick_idle", 6),
    ("pick_random", 6),
    ("pick_src", 6),
    ("pick_second", 6),
    ("queues", 9),
    ("report_input", 9),
    ("queue_gap", 10),
    ("out_sel", 10),
    ("consume", 10),
    ("conn_miss", 10),
    ("win_sel", 11),
    ("win_other", 11),
    ("signal", 11),
    ("done", 11),
    ("node_mark", 11),
];

/// The tables of `role`'s program.
pub fn tables(role: Role) -> impl Iterator<Item = &'static TofinoTable> {
    TABLES.iter().filter(move |t| match role {
        Role::Leaf => t.leaf,
        Role::Spine => t.spine,
    })
}

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static TofinoTable> {
    TABLES.iter().find(|t| t.name == name)
}

/// The stage of the stateful or control-plane table, or the computing table, named `name`.
pub fn stage(name: &str) -> Option<u8> {
    table(name)
        .map(|t| t.stage)
        .or_else(|| COMPUTE.iter().find(|(n, _)| *n == name).map(|&(_, s)| s))
}

/// The Tofino table that holds the model's `stage`.
pub fn of_model(stage: Stage) -> &'static TofinoTable {
    TABLES
        .iter()
        .find(|t| t.model == Some(stage))
        .expect("every model table has a Tofino home")
}

/// The stage map as a Markdown table: per stage, the registers and control-plane tables (with
/// the model's table they hold) and the computing tables (`docs/p4.md` holds a copy, checked by
/// a test).
pub fn markdown() -> String {
    let mut s = String::from(
        "| stage | registers and control-plane tables | computing tables |\n|---|---|---|\n",
    );
    for stage in 0..TOFINO1_STAGES {
        let state: Vec<String> = TABLES
            .iter()
            .filter(|t| t.stage == stage)
            .map(|t| {
                let kind = match t.kind {
                    Kind::Register => "register",
                    Kind::MatchTable => "table",
                };
                let model = t.model.map_or("Tofino only".to_string(), |m| {
                    format!("`{}`", m.table_name())
                });
                let only = match (t.leaf, t.spine) {
                    (true, false) => ", leaf",
                    (false, true) => ", spine",
                    _ => "",
                };
                format!("`{}` ({kind}, {model}{only})", t.name)
            })
            .collect();
        let computing: Vec<String> = COMPUTE
            .iter()
            .filter(|(_, s)| *s == stage)
            .map(|(n, _)| format!("`{n}`"))
            .collect();
        s += &format!(
            "| {stage} | {} | {} |\n",
            state.join(", "),
            computing.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_model::sched::plan;

    #[test]
    fn every_model_table_has_one_home_and_the_stages_fit_tofino_1() {
        for s in Stage::ALL {
            assert_eq!(
                TABLES.iter().filter(|t| t.model == Some(s)).count(),
                1,
                "{s:?}"
            );
        }
        assert!(TABLES.iter().all(|t| t.stage < TOFINO1_STAGES));
        assert!(COMPUTE.iter().all(|&(_, s)| s < TOFINO1_STAGES));
        assert!(TABLES.windows(2).all(|w| w[0].stage <= w[1].stage));
    }

    #[test]
    fn every_pass_of_the_model_visits_its_tofino_stages_in_order() {
        // A pass of the model touches its tables in stage order; on Tofino their stages must not
        // go back (equal stages hold copies or tables a pass uses independently).
        for row in plan::stage_plan() {
            let stages: Vec<u8> = row.stages.iter().map(|&s| of_model(s).stage).collect();
            assert!(
                stages.windows(2).all(|w| w[0] <= w[1]),
                "{}: {stages:?}",
                row.pass
            );
        }
    }
}
