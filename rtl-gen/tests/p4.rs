//! The P4 programs pass the structural checker at every preset, and the checker catches each kind
//! of rule a mutant breaks: a mutant that still passed would mean the check cannot fail.

use horus_model::config::Role;
use horus_pipeline::presets;
use rtl_gen::p4::{check, emit};

fn program(role: Role) -> String {
    let p = presets::preset("default", role).unwrap();
    emit::program(
        role,
        &p.sizes(),
        "default",
        rtl_gen::DEFAULT_CONN_TIMEOUT_US,
    )
    .unwrap()
}

fn common() -> String {
    emit::common().unwrap()
}

#[test]
fn both_programs_keep_every_rule_at_every_preset() {
    for preset in presets::names() {
        for role in [Role::Leaf, Role::Spine] {
            let p = presets::preset(preset, role).unwrap();
            let text = emit::program(role, &p.sizes(), preset, 20_000).unwrap();
            let r = check::check(role, &text, &common())
                .unwrap_or_else(|e| panic!("{preset} {role}: {e:#}"));
            assert!(r.stages <= 12 && r.paths > 100, "{preset} {role}: {r:?}");
            assert!(text.contains(&format!("const bit<32> NODES = {};", p.sizes().nodes)));
        }
    }
}

/// `text` with `from` replaced (exactly once) by `to`.
fn mutate(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "the mutation site {from:?} is not unique"
    );
    text.replacen(from, to, 1)
}

/// The checker's error for the program mutated by `from` -> `to`; it must contain `expect`.
fn fails(role: Role, from: &str, to: &str, expect: &str) {
    let text = mutate(&program(role), from, to);
    let e = format!("{:#}", check::check(role, &text, &common()).unwrap_err());
    assert!(e.contains(expect), "expected {expect:?} in:\n{e}");
}

fn common_fails(from: &str, to: &str, expect: &str) {
    let c = mutate(&common(), from, to);
    let e = format!(
        "{:#}",
        check::check(Role::Leaf, &program(Role::Leaf), &c).unwrap_err()
    );
    assert!(e.contains(expect), "expected {expect:?} in:\n{e}");
}

#[test]
fn a_register_action_moved_to_another_stage_is_caught() {
    fails(
        Role::Leaf,
        "@stage(7) table drift1_check",
        "@stage(6) table drift1_check",
        "register drift1 is accessed from stages {6, 7}",
    );
}

#[test]
fn a_second_access_to_a_register_on_one_path_is_caught() {
    fails(
        Role::Leaf,
        "                load2_write.apply();\n",
        "                load2_write.apply();\n                load1_read.apply();\n",
        "load1 is accessed by load1_write and by load1_read",
    );
}

#[test]
fn a_table_applied_twice_on_one_path_is_caught() {
    fails(
        Role::Spine,
        "            ctl_push.apply();\n",
        "            ctl_push.apply();\n            ctl_push.apply();\n",
        "table ctl_push is applied twice",
    );
}

#[test]
fn a_read_of_a_field_a_later_stage_writes_is_caught() {
    fails(
        Role::Leaf,
        "md.same = md.m1[31:16] ^ md.m2[31:16];",
        "md.same = md.m1[31:16] ^ md.m2[31:16] ^ md.l1[15:0];",
        "same_check (stage 3) reads [\"md.l1\"], written by load1_read (stage 4)",
    );
}

#[test]
fn a_condition_on_a_field_written_in_the_same_stage_is_caught() {
    fails(
        Role::Leaf,
        "if (md.ctl > 0) {\n                        idle_read.apply();",
        "if (md.ctl > 0 && md.signal == 0) {\n                        idle_read.apply();",
        "load1_read (stage 4) is reached on [\"md.signal\"], written by link_rule (stage 4)",
    );
}

#[test]
fn two_writes_of_a_field_in_one_stage_are_caught() {
    fails(
        Role::Leaf,
        "md.same = md.m1[31:16] ^ md.m2[31:16];",
        "md.same = md.m1[31:16] ^ md.m2[31:16];\n        md.link_r = 0;",
        "both write [\"md.link_r\"]",
    );
}

#[test]
fn a_table_without_a_stage_and_one_off_the_plan_are_caught() {
    fails(
        Role::Leaf,
        "@stage(11) table done",
        "table done",
        "table done has no @stage",
    );
    fails(
        Role::Spine,
        "@stage(5) table load_cmp",
        "@stage(6) table load_cmp",
        "table load_cmp is in stage 6; the plan puts it in 5",
    );
}

#[test]
fn a_fifth_register_action_on_one_register_is_caught() {
    let extra = "    RegisterAction<int<32>, bit<16>, int<32>>(drift2) drift2_extra_ra = {\n        void apply(inout int<32> v, out int<32> rv) {\n            rv = v;\n        }\n    };\n";
    fails(
        Role::Spine,
        "    Register<int<32>, bit<16>>(NODES) drift2;\n",
        &format!("    Register<int<32>, bit<16>>(NODES) drift2;\n{extra}"),
        "register drift2 has 5 register actions",
    );
}

#[test]
fn a_classify_entry_that_differs_from_the_model_is_caught() {
    fails(
        Role::Leaf,
        "(PKT_TASK_DONE, 0, 0): set_kind(KIND_REPLY, DROP_NONE);",
        "(PKT_TASK_DONE, 0, 0): set_kind(KIND_PASS_THROUGH, DROP_NONE);",
        "classify entry for TaskDone",
    );
}

#[test]
fn a_header_field_constant_or_resubmit_size_off_the_model_is_caught() {
    common_fails(
        "    bit<7> pkt_type;\n    bit<16> pool_id;",
        "    bit<7> pkt_type;\n    bit<8> pool_id;",
        "header horus_h",
    );
    common_fails(
        "const bit<7> PKT_TASK_DONE = 2;",
        "const bit<7> PKT_TASK_DONE = 3;",
        "constant PKT_TASK_DONE",
    );
    common_fails(
        "const bit<8> DROP_EMPTY_POOL = 5;",
        "const bit<8> DROP_EMPTY_POOL = 6;",
        "constant DROP_EMPTY_POOL",
    );
    common_fails(
        "    bit<16> aux;\n    bit<32> value;",
        "    bit<16> aux;\n    bit<40> value;",
        "header resub_h has 72 bits",
    );
}

#[test]
fn the_classification_follows_the_model_roles() {
    use horus_model::wire::PacketType::*;
    use rtl_gen::p4::emit::{PassKind, classify};
    assert_eq!(
        classify(Role::Leaf, TaskDoneIdle, false, false).unwrap().0,
        PassKind::ReplyIdle
    );
    assert_eq!(
        classify(Role::Spine, TaskDoneIdle, false, false).unwrap().0,
        PassKind::PassThrough
    );
    assert_eq!(
        classify(Role::Leaf, IdleSignal, false, false).unwrap().0,
        PassKind::Reject
    );
    assert_eq!(
        classify(Role::Spine, IdleRemove, false, true).unwrap().0,
        PassKind::RemoveSecond
    );
    // The flag on a type that cannot carry it, and a second pass of a type that never
    // resubmits, fall to the table's default: malformed.
    assert!(classify(Role::Leaf, TaskDone, true, false).is_none());
    assert!(classify(Role::Leaf, TaskDone, false, true).is_none());
    assert!(classify(Role::Leaf, NewTask, true, true).is_none());
}
