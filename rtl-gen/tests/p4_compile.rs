//! Both Tofino programs compiled by Intel's Tofino compiler (bf-p4c, the open back end p4lang/p4c
//! carries), when one is present: each must compile for Tofino 1 (TNA) in at most 12 stages, and
//! the `bfrt_python` set-up generated from a configuration may name only tables, actions, fields
//! and registers of the compiled program's `bfrt.json`. The compiler takes hours to build and is
//! not installed by the test command: without one (`HORUS_BF_P4C`, `~/.cache/horus-p4c/build/bf-p4c`
//! or `bf-p4c` on the PATH) the test says it was skipped. `docs/p4.md` pins the verdict, the
//! resources and the compiler's commit.
//!
//! While a program does not yet fit, its verdict is pinned in `p4_compile.verdict` (one line a
//! role: `leaf fits 12`, or `leaf refused <the compiler's first error>`), and the test requires
//! the compiler's verdict to be the pinned one: a change that moves it, for better or worse, says
//! so (`HORUS_BLESS=1 cargo test -p rtl-gen --test p4_compile` rewrites the file). A role pinned as
//! fitting must fit, and its set-up must name only what its `bfrt.json` has.

use horus_model::config::{Config, Role};
use rtl_gen::Params;
use rtl_gen::p4::{self, compile};

const PINNED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/p4_compile.verdict");

#[test]
fn both_programs_compile_and_fit_tofino_1_and_the_set_up_names_what_they_have() {
    let compiler = match compile::find_compiler() {
        Ok(Ok(c)) => c,
        Ok(Err(why)) => {
            println!("skipped: {why}");
            return;
        }
        Err(e) => panic!("{e:#}"),
    };
    let (files, _) = p4::files(&Params::default()).unwrap();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.name.clone(), f.content.clone()))
        .collect();
    let dir = std::env::temp_dir().join(format!("horus-p4-compile-{}", std::process::id()));
    let configs = [
        (Role::Leaf, "example-leaf.toml"),
        (Role::Spine, "example-spine.toml"),
    ];
    let mut verdicts = Vec::new();
    for (role, config) in configs {
        let program = p4::program_file(role);
        let c = compile::compile(&compiler, &dir, &texts, &program).unwrap();
        println!("{}", compile::report(role, &c));
        verdicts.push(compile::verdict(role, &c));
        // The checker learned from the compiler: every error of a kind it has a rule for is
        // among its findings for this program, and a program it finds nothing refused in is not
        // refused for one of those reasons.
        let common = &texts
            .iter()
            .find(|(n, _)| n.ends_with("horus_common.p4"))
            .unwrap()
            .1;
        let sizes = horus_pipeline::presets::preset("default", role)
            .unwrap()
            .sizes();
        let ingress = p4::emit::ingress(role, &sizes);
        let found = rtl_gen::p4::check::check(role, &ingress, common)
            .unwrap()
            .refusals;
        for e in compile::errors(&c) {
            match compile::checker_rule(e) {
                Some(rule) => assert!(
                    found.iter().any(|f| f.rule == rule),
                    "{role}: bf-p4c refused {e:?}, a {rule} the checker did not find"
                ),
                None => println!("{role}: bf-p4c's error is no rule of the checker yet: {e}"),
            }
        }
        if !c.fits() {
            continue;
        }
        let bfrt = compile::read_json(&c.out.join("bfrt.json")).unwrap();
        let names = compile::bfrt_names(&bfrt);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../configs")
            .join(config);
        let cfg = Config::from_file(&path).unwrap();
        let script = &p4::setup(&cfg).unwrap()[0].content;
        let problems = compile::script_problems(script, p4::emit::ingress_control(role), &names);
        assert!(problems.is_empty(), "{role}:\n{}", problems.join("\n"));
    }
    let got = verdicts.join("\n") + "\n";
    if std::env::var_os("HORUS_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(PINNED, &got).unwrap();
    } else {
        let pinned = std::fs::read_to_string(PINNED).expect("p4_compile.verdict is readable");
        assert_eq!(
            got, pinned,
            "the Tofino compiler's verdict moved (if that is meant: HORUS_BLESS=1 cargo test -p \
             rtl-gen --test p4_compile, and update docs/p4.md)"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
