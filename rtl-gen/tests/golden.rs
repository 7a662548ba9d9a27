//! What rtl-gen emits is pinned by its SHA-256 (`golden.sha256`, in `sha256sum`'s format): the
//! Verilog of both switches at the `default` and `small` presets, every other output, and the P4
//! programs (`--target p4`, default preset). A change
//! to the pipeline or an emitter that changes the emitted text fails here, so that a refactor is
//! proven to leave the hardware as it was, and a change meant to alter the hardware says so by
//! updating the file (`HORUS_BLESS=1 cargo test -p rtl-gen --test golden` rewrites it).
//!
//! A user checks a build folder the same way: `cd build && sha256sum -c ../rtl-gen/tests/golden.sha256`
//! (with both presets and `--target p4` generated into it).

use rtl_gen::{GeneratedFile, Output, Params};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden.sha256");

fn emitted() -> BTreeMap<String, String> {
    let mut files: Vec<GeneratedFile> = rtl_gen::generate(&Params::default()).unwrap();
    let small = Params {
        preset: "small".into(),
        ..Params::default()
    };
    files.extend(rtl_gen::outputs::switch::Switches.files(&small).unwrap());
    files.extend(rtl_gen::p4::files(&Params::default()).unwrap().0);
    files
        .into_iter()
        .map(|f| (f.name, hex(&Sha256::digest(f.content.as_bytes()))))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn emitted_files_match_their_pinned_hashes() {
    let got = emitted();
    if std::env::var_os("HORUS_BLESS").is_some_and(|v| v == "1") {
        let text: String = got.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
        std::fs::write(GOLDEN, text).unwrap();
        return;
    }
    let want: BTreeMap<String, String> = std::fs::read_to_string(GOLDEN)
        .expect("golden.sha256 is readable")
        .lines()
        .map(|l| {
            let (h, n) = l.split_once("  ").expect("`HASH  NAME` lines");
            (n.to_string(), h.to_string())
        })
        .collect();
    let differ: Vec<String> = got
        .keys()
        .chain(want.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|n| got.get(*n) != want.get(*n))
        .map(|n| {
            format!(
                "{n}: emitted {}, pinned {}",
                got.get(n).map_or("nothing", |h| h.as_str()),
                want.get(n).map_or("nothing", |h| h.as_str())
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "the emitted files differ from the pinned ones (if the change is meant, \
         HORUS_BLESS=1 cargo test -p rtl-gen --test golden):\n{}",
        differ.join("\n")
    );
}
