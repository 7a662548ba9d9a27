//! The P4 programs pass the structural checker at every preset, and the checker catches each kind
//! of rule a mutant breaks: a mutant that still passed would mean the check cannot fail.

use horus_model::config::Role;
use horus_pipeline::presets;
use rtl_gen::p4::{check, emit, ir};

fn sizes(role: Role) -> horus_model::config::Sizes {
    presets::preset("default", role).unwrap().sizes()
}

fn ingress(role: Role) -> ir::Control {
    emit::ingress(role, &sizes(role))
}

fn times() -> emit::Times {
    let d = rtl_gen::Params::default();
    emit::Times {
        conn_timeout_us: d.conn_timeout_us,
        repair_gap_us: d.repair_gap_us,
    }
}

fn common() -> String {
    emit::common().unwrap()
}

#[test]
fn both_programs_keep_every_rule_at_every_preset() {
    for preset in presets::names() {
        for role in [Role::Leaf, Role::Spine] {
            let p = presets::preset(preset, role).unwrap();
            let c = emit::ingress(role, &p.sizes());
            let r = check::check(role, &c, &common())
                .unwrap_or_else(|e| panic!("{preset} {role}: {e:#}"));
            assert!(r.stages <= 12 && r.paths > 100, "{preset} {role}: {r:?}");
            let text = emit::print(role, &c, &p.sizes(), preset, times()).unwrap();
            assert!(text.contains(&format!("const bit<32> NODES = {};", p.sizes().nodes)));
            assert!(text.contains(&c.print()));
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

/// The P4 source in `c` (bodies of actions and register actions, conditions), with the name
/// of the declaration or table it belongs to.
fn sources(c: &mut ir::Control) -> Vec<(String, &mut ir::Code)> {
    fn tree<'a>(stmts: &'a mut [ir::Stmt], out: &mut Vec<(String, &'a mut ir::Code)>) {
        for s in stmts {
            if let ir::Stmt::If {
                cond,
                then,
                otherwise,
            } = s
            {
                let first = match then.first() {
                    Some(ir::Stmt::Apply(t)) => t.clone(),
                    _ => String::new(),
                };
                out.push((first, cond));
                tree(then, out);
                tree(otherwise, out);
            }
        }
    }
    let mut out = Vec::new();
    for d in &mut c.decls {
        match d {
            ir::Decl::Action(a) => out.push((a.name.clone(), &mut a.body)),
            ir::Decl::RegisterAction(r) => out.push((r.name.clone(), &mut r.body)),
            _ => {}
        }
    }
    tree(&mut c.apply, &mut out);
    out
}

/// `c` with `from` replaced by `to` in the one piece of source (of the declaration `within`
/// names, or of a condition whose branch starts with that table; any, if empty) that holds it.
fn edit(c: &mut ir::Control, within: &str, from: &str, to: &str) {
    let mut sites: Vec<&mut ir::Code> = sources(c)
        .into_iter()
        .filter(|(name, code)| (within.is_empty() || name == within) && code.0.contains(from))
        .map(|(_, code)| code)
        .collect();
    assert_eq!(sites.len(), 1, "the mutation site {from:?} is not unique");
    let code = sites.pop().unwrap();
    code.0 = mutate(&code.0, from, to);
}

/// The place of the first application of `table` in `stmts`: its block and index.
fn find_apply<'a>(
    stmts: &'a mut Vec<ir::Stmt>,
    table: &str,
) -> Option<(&'a mut Vec<ir::Stmt>, usize)> {
    if let Some(i) = stmts
        .iter()
        .position(|s| matches!(s, ir::Stmt::Apply(t) if t == table))
    {
        return Some((stmts, i));
    }
    for s in stmts.iter_mut() {
        if let ir::Stmt::If {
            then, otherwise, ..
        } = s
        {
            if let Some(found) = find_apply(then, table) {
                return Some(found);
            }
            if let Some(found) = find_apply(otherwise, table) {
                return Some(found);
            }
        }
    }
    None
}

/// `c` with `table` applied again right after its first application.
fn apply_after(c: &mut ir::Control, after: &str, table: &str) {
    let (block, i) = find_apply(&mut c.apply, after).expect("the table is applied");
    block.insert(i + 1, ir::Stmt::Apply(table.into()));
}

/// The checker's error for `role`'s ingress changed by `change`; it must contain `expect`.
fn fails(role: Role, change: impl FnOnce(&mut ir::Control), expect: &str) {
    let mut c = ingress(role);
    change(&mut c);
    let e = format!("{:#}", check::check(role, &c, &common()).unwrap_err());
    assert!(e.contains(expect), "expected {expect:?} in:\n{e}");
}

fn common_fails(from: &str, to: &str, expect: &str) {
    let c = mutate(&common(), from, to);
    let e = format!(
        "{:#}",
        check::check(Role::Leaf, &ingress(Role::Leaf), &c).unwrap_err()
    );
    assert!(e.contains(expect), "expected {expect:?} in:\n{e}");
}

fn table<'a>(c: &'a mut ir::Control, name: &str) -> &'a mut ir::Table {
    c.table_mut(name).expect("the table is declared")
}

#[test]
fn a_register_action_moved_to_another_stage_is_caught() {
    fails(
        Role::Leaf,
        |c| table(c, "drift1_check").stage = 6,
        "register drift1 is accessed from stages {6, 7}",
    );
}

#[test]
fn a_table_pinned_off_its_plan_is_caught() {
    fails(
        Role::Spine,
        |c| table(c, "drift1_check").pin = ir::Pin::Stage(8),
        "table drift1_check is pinned to stage 8 and planned in 7",
    );
}

#[test]
fn a_name_declared_twice_is_caught() {
    fails(
        Role::Leaf,
        |c| {
            for d in &mut c.decls {
                if let ir::Decl::Action(a) = d {
                    if a.name == "link_none" {
                        a.name = "link_rule".into();
                    }
                }
            }
        },
        "link_rule is declared twice",
    );
}

#[test]
fn a_second_access_to_a_register_on_one_path_is_caught() {
    fails(
        Role::Leaf,
        |c| apply_after(c, "load2_write", "load1_read"),
        "load1 is accessed by load1_write and by load1_read",
    );
}

#[test]
fn a_table_applied_twice_on_one_path_is_caught() {
    fails(
        Role::Spine,
        |c| apply_after(c, "ctl_push", "ctl_push"),
        "table ctl_push is applied twice",
    );
}

#[test]
fn a_read_of_a_field_a_later_stage_writes_is_caught() {
    fails(
        Role::Leaf,
        |c| {
            edit(
                c,
                "check_same",
                "md.m2[31:16];",
                "md.m2[31:16] ^ md.link_v;",
            )
        },
        "same_check (stage 3) reads [\"md.link_v\"], written by link_range (stage 3)",
    );
}

#[test]
fn a_condition_on_a_field_written_in_the_same_stage_is_caught() {
    fails(
        Role::Leaf,
        |c| {
            edit(
                c,
                "idle_read",
                "md.ctl != 0",
                "md.ctl != 0 && md.link_a == 0",
            )
        },
        "idle_read (stage 3) is reached on [\"md.link_a\"], written by link_range (stage 3)",
    );
}

#[test]
fn two_writes_of_a_field_in_one_stage_are_caught() {
    fails(
        Role::Leaf,
        |c| {
            edit(
                c,
                "check_same",
                "md.m2[31:16];",
                "md.m2[31:16];\nmd.link_v = 0;",
            )
        },
        "both write [\"md.link_v\"]",
    );
}

#[test]
fn a_table_applied_after_one_of_a_later_stage_is_caught() {
    // A load update's tables in the plan's order, but the pass's end before the drift reset.
    fails(
        Role::Spine,
        |c| {
            let (block, i) = find_apply(&mut c.apply, "drift2_reset").unwrap();
            assert_eq!(block[i + 1], ir::Stmt::Apply("consume".into()));
            block.swap(i, i + 1);
        },
        "drift2_reset (stage 8) is applied after consume (stage 10)",
    );
}

#[test]
fn a_table_off_the_plan_is_caught() {
    fails(
        Role::Spine,
        |c| table(c, "load_cmp").stage = 6,
        "table load_cmp is in stage 6; the plan puts it in 5",
    );
    fails(
        Role::Leaf,
        |c| table(c, "done").stage = 12,
        "table done is in stage 12, past Tofino 1's 12",
    );
}

#[test]
fn a_fifth_register_action_on_one_register_is_caught() {
    fails(
        Role::Spine,
        |c| {
            let at = c
                .decls
                .iter()
                .position(|d| matches!(d, ir::Decl::Register(r) if r.name == "drift2"))
                .unwrap();
            c.decls.insert(
                at + 1,
                ir::ra("drift2_extra_ra", "drift2", "int<32>", "rv = v;"),
            );
        },
        "register drift2 has 5 register actions",
    );
}

#[test]
fn a_classify_entry_that_differs_from_the_model_is_caught() {
    fails(
        Role::Leaf,
        |c| {
            let entry = table(c, "classify")
                .entries
                .iter_mut()
                .find(|(v, _)| v[..] == ["PKT_TASK_DONE", "0", "0"])
                .unwrap();
            entry.1.args[0] = "KIND_PASS_THROUGH".into();
        },
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

// ---------------------------------------------------------------------------------------------
// The set-up scripts and the PTF tests of a configuration
// ---------------------------------------------------------------------------------------------

use horus_model::config::Config;
use horus_model::rng::scale8;
use horus_model::sched::{Profile, Scheduler};
use rtl_gen::p4::{bfrt, ptf};
use std::path::Path;
use std::process::Command;

fn config(name: &str) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(name);
    Config::from_file(&path).unwrap()
}

/// The `key=value` arguments of a script line's call.
fn args(line: &str) -> Vec<(String, String)> {
    let inner = &line[line.find('(').unwrap() + 1..line.rfind(')').unwrap()];
    inner
        .split(", ")
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

fn arg(a: &[(String, String)], k: &str) -> u32 {
    a.iter().find(|(n, _)| n == k).unwrap().1.parse().unwrap()
}

/// The link rule's range table: for a leaf's pool with a spine, every new idle count at or above
/// `link_at` calls to link (0), at or below `unlink_at` to unlink (1), and the others nothing;
/// a pool without a spine has no entry (no link).
#[test]
fn the_link_range_table_holds_each_pools_thresholds() {
    let cfg = config("example-leaf.toml");
    let script = bfrt::setup_script(&cfg).unwrap();
    let sched = Scheduler::from_config_with(&cfg, 0, Profile::TOFINO)
        .unwrap()
        .0;
    for p in &cfg.pools {
        let c = sched.tables().pools[usize::from(p.id)].cfg;
        let entries: Vec<(u32, u32, u32)> = script
            .lines()
            .filter(|l| {
                l.starts_with("ig.link_range.") && l.contains(&format!("(pool_id={},", p.id))
            })
            .map(|l| {
                let a = args(l);
                (arg(&a, "p_new_start"), arg(&a, "p_new_end"), arg(&a, "a"))
            })
            .collect();
        if p.spine.is_none() {
            assert!(entries.is_empty(), "pool {}", p.id);
            continue;
        }
        for n in 0..=u32::from(u16::MAX) {
            let hits: Vec<u32> = entries
                .iter()
                .filter(|&&(lo, hi, _)| (lo..=hi).contains(&n))
                .map(|&(_, _, a)| a)
                .collect();
            let want = if n >= u32::from(c.params.link_at) {
                vec![0]
            } else if n <= u32::from(c.params.unlink_at) {
                vec![1]
            } else {
                vec![]
            };
            assert_eq!(hits, want, "pool {} p {n}", p.id);
        }
    }
}

/// A Tofino switch samples a pool through 256 draws (T1): a pool of 257 member slots is refused,
/// named, and one of 256 is set up.
#[test]
fn a_pool_larger_than_the_sample_tables_is_refused() {
    for name in ["example-leaf.toml", "example-spine.toml"] {
        let mut cfg = config(name);
        cfg.pools[0].capacity = 256;
        assert!(rtl_gen::p4::setup(&cfg).is_ok(), "{name}");
        cfg.pools[0].capacity = 257;
        let e = format!("{:#}", rtl_gen::p4::setup(&cfg).unwrap_err());
        assert!(
            e.contains(&format!("pool {} has 257 member slots", cfg.pools[0].id))
                && e.contains("at most 256")
                && e.contains("T1"),
            "{name}: {e}"
        );
    }
}

/// The Tofino leaf holds one repair gap (T12): a configuration whose pools set two is refused,
/// naming them.
#[test]
fn a_configuration_with_two_repair_gaps_is_refused_for_the_tofino_leaf() {
    let mut cfg = config("example-leaf.toml");
    let gap = rtl_gen::p4::repair_gap_us(&cfg).unwrap();
    assert_eq!(gap, cfg.defaults.idle_repair_gap_us);
    cfg.pools[1].params.idle_repair_gap_us = gap + 1;
    let e = rtl_gen::p4::repair_gap_us(&cfg).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "pools {} and {} set idle_repair_gap_us {gap} and {}",
            cfg.pools[0].id,
            cfg.pools[1].id,
            gap + 1
        )) && e.contains("T12"),
        "{e}"
    );
}

#[test]
fn set_up_scripts_hold_the_models_initial_tables_and_sample_tables_that_map_every_draw() {
    for name in ["example-leaf.toml", "example-spine.toml"] {
        let cfg = config(name);
        let script = bfrt::setup_script(&cfg).unwrap();
        let sched = Scheduler::from_config_with(&cfg, 0, Profile::TOFINO)
            .unwrap()
            .0;
        let t = sched.tables();
        for p in &cfg.pools {
            let c = t.pools[usize::from(p.id)].cfg;
            let line = script
                .lines()
                .find(|l| {
                    l.starts_with("ig.pool_cfg.") && l.contains(&format!("pool_id={},", p.id))
                })
                .unwrap();
            let a = args(line);
            assert_eq!(
                (arg(&a, "base"), arg(&a, "n")),
                (u32::from(c.base), u32::from(c.n))
            );
            // The sample tables: each of the pool's 256 draws once, to base + the draw's
            // multiply-high slot (the Tofino profile's samples).
            for k in [1, 2] {
                let mut draws = Vec::new();
                for l in script.lines().filter(|l| {
                    l.starts_with(&format!("ig.sample{k}."))
                        && l.contains(&format!("(pool_id={},", p.id))
                }) {
                    let a = args(l);
                    let (d, slot) = (arg(&a, &format!("r{k}")), arg(&a, "slot"));
                    let want = u32::from(c.base) + u32::from(scale8(d as u8, c.n));
                    assert_eq!(slot, want, "{name} pool {} draw {d}", p.id);
                    draws.push(d);
                }
                assert_eq!(
                    draws,
                    (0..256).collect::<Vec<u32>>(),
                    "{name} pool {} sample {k} maps every draw once",
                    p.id
                );
            }
            let ctl = t.pools[usize::from(p.id)].ctl;
            assert!(script.contains(&format!(
                "ig.idle_ctl.mod(REGISTER_INDEX={}, f1={})\n",
                p.id, ctl.p
            )));
        }
        python_parses(&script, name);
    }
}

fn python_parses(text: &str, what: &str) {
    let out = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Imports a generated PTF module with the real `ptf` package and checks every expected frame's
/// mask: it matches the frame, still matches it with the IPv4 checksum changed (masked), and
/// no longer matches it with the Horus header's dst_id changed. Prints scenarios, frames, pins.
const PTF_CHECK: &str = r#"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("horus_ptf", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
frames = pins = 0
for name, about, steps in m.SCENARIOS:
    for what, pin, frame, outs in steps:
        bytes.fromhex(frame)
        pins += pin is not None
        for port, out in outs:
            b = bytes.fromhex(out)
            mask = m.expected(out)
            assert mask.pkt_match(b), (name, what)
            c = bytearray(b); c[24] ^= 1
            assert mask.pkt_match(bytes(c)), (name, what, "IPv4 checksum")
            c = bytearray(b); c[42 + 5] ^= 1
            assert not mask.pkt_match(bytes(c)), (name, what, "dst_id")
            frames += 1
print(len(m.SCENARIOS), frames, pins)
"#;

#[test]
fn ptf_tests_import_with_ptf_and_carry_the_models_frames() {
    let have_ptf = Command::new("python3")
        .args(["-c", "import ptf, scapy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_ptf {
        assert!(
            std::env::var_os("CI").is_none(),
            "the test command installs ptf and scapy"
        );
        eprintln!("skipped: python3 cannot import ptf and scapy (scripts/test.sh installs them)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("horus-ptf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["example-leaf.toml", "example-spine.toml"] {
        let cfg = config(name);
        let text = ptf::ptf_file(&cfg).unwrap();
        let scenarios = ptf::scenarios(&cfg).unwrap();
        // Every frame the model sent is in the file, and nothing else is.
        let mut want = (0, 0);
        for s in &scenarios {
            for st in &s.steps {
                want.1 += usize::from(st.pin.is_some());
                for o in &st.outputs {
                    let hex: String = o.frame.iter().map(|b| format!("{b:02x}")).collect();
                    assert!(
                        text.contains(&format!("({}, \"{hex}\")", o.port)),
                        "{name}: {}",
                        st.what
                    );
                    want.0 += 1;
                }
            }
        }
        let path = dir.join(format!("{}.py", ptf::ptf_module(&cfg)));
        std::fs::write(&path, &text).unwrap();
        let out = Command::new("python3")
            .args(["-c", PTF_CHECK])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed.lines().last().unwrap_or_default().trim(),
            format!("{} {} {}", scenarios.len(), want.0, want.1),
            "{name}"
        );
        assert!(want.1 > 0, "{name}: a scenario samples (pinned draws)");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_leaf_scenarios_reach_a_resubmission_and_the_spine_a_removal_from_the_middle() {
    let leaf = ptf::scenarios(&config("example-leaf.toml")).unwrap();
    let drift = leaf
        .iter()
        .find(|s| s.name == "drift_and_resubmission")
        .unwrap();
    assert!(drift.steps.len() > 2 && drift.steps.iter().any(|s| s.pin.is_some()));
    let spine = ptf::scenarios(&config("example-spine.toml")).unwrap();
    let fig4 = spine.iter().find(|s| s.name == "fig4_idle_list").unwrap();
    assert!(fig4.steps.iter().any(|s| s.what.starts_with("IdleRemove")));
}

#[test]
fn docs_hold_the_stage_map_of_the_plan() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/p4.md"))
        .unwrap_or_default();
    let table = rtl_gen::p4::plan::markdown();
    assert!(
        docs.contains(&table),
        "docs/p4.md lacks the stage map of rtl_gen::p4::plan; it is:\n{table}"
    );
}

/// The constructs bf-p4c refuses that the checker finds in `role`'s program, changed by
/// `change`, and its common include, changed by `from` -> `to` unless `from` is empty, as
/// `rule: where` lines.
fn refusals_of(
    role: Role,
    change: impl FnOnce(&mut ir::Control),
    from: &str,
    to: &str,
) -> Vec<String> {
    let (mut c, mut common) = (ingress(role), common());
    change(&mut c);
    if !from.is_empty() {
        common = mutate(&common, from, to);
    }
    let r = check::check(role, &c, &common).unwrap_or_else(|e| panic!("{e:#}"));
    r.refusals.iter().map(|f| f.to_string()).collect()
}

/// The refusals a change brings that the emitted program has not.
fn added(role: Role, change: impl FnOnce(&mut ir::Control)) -> Vec<String> {
    let before = refusals_of(role, |_| {}, "", "");
    refusals_of(role, change, "", "")
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect()
}

/// What bf-p4c still refuses in the emitted programs, as the checker finds it: the list only
/// shrinks (a new construct the compiler refuses fails here, in CI, without the compiler).
/// `docs/p4.md` says how each is to be removed.
#[test]
fn the_constructs_bf_p4c_refuses_are_pinned() {
    let (leaf, spine): ([&str; 0], [&str; 0]) = ([], []);
    assert_eq!(refusals_of(Role::Leaf, |_| {}, "", ""), leaf);
    assert_eq!(refusals_of(Role::Spine, |_| {}, "", ""), spine);
}

/// Each rule bf-p4c taught the checker fires on a mutant that breaks it, where the emitted
/// program keeps it.
#[test]
fn each_construct_bf_p4c_refuses_is_caught_in_a_mutant() {
    const REPORT: &str = "if (md.avg > v.hi || md.report_x < v.lo) {";
    // A third comparison in the report rule's check.
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "report_check_ra",
            REPORT,
            "if (md.avg > v.hi || md.report_x < v.lo || md.report_x == v.hi) {",
        )),
        ["salu-comparisons: report_check_ra (3 comparisons)"]
    );
    // A slice of the register value in its condition.
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "report_check_ra",
            REPORT,
            "if (md.avg > v.hi || md.report_x[15:0] < v.lo[15:0]) {",
        )),
        ["salu-slice-in-condition: report_check_ra"]
    );
    // A value chosen in an action by a field.
    assert_eq!(
        added(Role::Spine, |c| edit(
            c,
            "finish_at",
            "md.idle_slot = md.base_m1 + md.pos;",
            "md.idle_slot = md.base_m1 + (md.resub.value[31:16] == 3 ? 16w0 : md.pos);",
        )),
        ["action-condition-on-field: finish_at"]
    );
    // A non-zero constant in the mirror's field list (a zero is fine, and is there).
    let common_added = |from: &str, to: &str| {
        let before = refusals_of(Role::Leaf, |_| {}, "", "");
        refusals_of(Role::Leaf, |_| {}, from, to)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        common_added("{md.mirror_kind, ", "{BRIDGE_SIGNAL, "),
        ["constant-in-field-list: mirror.emit list holds BRIDGE_SIGNAL"]
    );
    assert_eq!(
        common_added("{md.mirror_kind, ", "{8w1, "),
        ["constant-in-field-list: mirror.emit list holds 8w1"]
    );
    // Two constants returned by the actions of one register.
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "link_both_ra",
            "} else if ((int<32>)md.now - v.hi >= 0) {\n    v.hi = (int<32>)md.now + REPAIR_GAP;\n    rv = 1;",
            "} else if ((int<32>)md.now - v.hi >= 0) {\n    v.hi = (int<32>)md.now + REPAIR_GAP;\n    rv = 2;",
        )),
        ["salu-different-constants: idle_link (1, 2)"]
    );
    // Two additions in one assignment of an action.
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "add_one",
            "md.w_factor = md.w_factor + 1;",
            "md.w_factor = md.w_factor + md.unit + 1;",
        )),
        ["action-two-operations: add_one"]
    );
    // Two words of the register compared (the report rule compares each with the average).
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "report_check_ra",
            REPORT,
            "if (v.lo > v.hi || md.report_x < v.lo) {"
        )),
        ["salu-two-words-compared: report_check_ra"]
    );
    // The new margins added up from two fields in the register action (as the report rule
    // had them), not in report_input the stage before.
    assert_eq!(
        added(Role::Leaf, |c| edit(
            c,
            "report_check_ra",
            "v.hi = md.report_x;",
            "v.hi = md.avg + md.report_x;",
        )),
        ["salu-two-fields-operated: report_check_ra"]
    );
    // The leaf's sample table as a range table over its draw (16,384 entries, a quarter of
    // them 3 lines: 48 TCAM blocks, deeper than a stage's column of 12).
    assert_eq!(
        added(Role::Leaf, |c| {
            let key = table(c, "sample1")
                .keys
                .iter_mut()
                .find(|k| k.field == "md.r1")
                .unwrap();
            key.kind = ir::Match::Range;
        }),
        ["range-table-over-a-stage: sample1 (16384 entries, 48 TCAM blocks)"]
    );
    // A third field read by drift1's actions (sel_factor and diff are its two PHV inputs).
    assert_eq!(
        added(Role::Spine, |c| edit(
            c,
            "drift1_settle_ra",
            "v = v - (int<32>)md.diff;",
            "v = v - (int<32>)md.w_add;",
        )),
        ["salu-phv-inputs: drift1 (md.diff, md.sel_factor, md.w_add)"]
    );
}

/// A table applied in two places with different successors, found in a small control (the
/// emitted programs give each such place a table of its own).
#[test]
fn a_table_with_two_successors_is_found() {
    let control = |second: &str| ir::Control {
        name: "XIngress".into(),
        decls: Vec::new(),
        apply: vec![
            ir::when(
                "md.k == 1",
                ir::applies(&["a", "b"]),
                ir::applies(&["a", second]),
            ),
            ir::apply("d"),
        ],
    };
    assert_eq!(check::next_table_conflicts(&control("c")).unwrap(), ["a"]);
    assert!(
        check::next_table_conflicts(&control("b"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_action_called_with_the_wrong_number_of_arguments_is_caught() {
    fails(
        Role::Leaf,
        |c| {
            let d = table(c, "switch_cfg").default.as_mut().unwrap();
            d.call.args.push("1".into());
        },
        "action set_switch is called with 4 argument(s); it has 3 parameter(s)",
    );
}
