//! The bitstream's identity: `BUILD_HASH`, a hash of the generated Verilog that the switch
//! answers at its register ([`crate::regmap`]), so that a host can tell which build a card
//! runs.
//!
//! The switch's Verilog holds [`BUILD_HASH_PLACEHOLDER`] in that register's constant. [`stamp`]
//! hashes the text as emitted, placeholder in place, and writes the hash over the placeholder;
//! [`build_hash`] recomputes it from a stamped file (the placeholder put back), so that the
//! register of a running card can be checked against a Verilog file.

use crate::regmap::BUILD_HASH_PLACEHOLDER;
use anyhow::{Result, bail};
use sha2::{Digest, Sha256};

/// How the emitted Verilog writes a 32-bit constant.
fn literal(v: u32) -> String {
    format!("32'h{v:08x}")
}

/// The first 32 bits of the SHA-256 of `text`, big-endian.
fn hash(text: &str) -> u32 {
    let d = Sha256::digest(text.as_bytes());
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// `verilog` with its `BUILD_HASH` constant set to the hash of `verilog` as given. The
/// placeholder must appear exactly once (the one switch the file holds).
pub fn stamp(verilog: String) -> String {
    let ph = literal(BUILD_HASH_PLACEHOLDER);
    assert_eq!(
        verilog.matches(&ph).count(),
        1,
        "the Verilog must hold the BUILD_HASH placeholder {ph} exactly once"
    );
    let h = hash(&verilog);
    verilog.replacen(&ph, &literal(h), 1)
}

/// The `BUILD_HASH` a stamped Verilog file holds, after checking that it is the hash of the file:
/// a file edited after `rtl-gen` wrote it, or not written by it, is refused.
pub fn build_hash(verilog: &str) -> Result<u32> {
    let Some(at) = verilog.find("build_hash = 32'h") else {
        bail!("no BUILD_HASH constant in this Verilog: not a Horus switch that rtl-gen wrote");
    };
    let start = at + "build_hash = ".len();
    let lit = &verilog[start..start + 12];
    let Ok(h) = u32::from_str_radix(&lit[4..], 16) else {
        bail!("BUILD_HASH constant {lit:?} is not 32 hexadecimal bits");
    };
    let mut original = verilog.to_string();
    original.replace_range(start..start + 12, &literal(BUILD_HASH_PLACEHOLDER));
    let want = hash(&original);
    if want != h {
        bail!(
            "BUILD_HASH {h:#010x} is not the hash of this file ({want:#010x}): it was changed after rtl-gen wrote it"
        );
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "module m;\n    localparam  build_hash = 32'hb17d4a54;\nendmodule\n";

    #[test]
    fn a_stamped_file_gives_its_hash_back_and_an_edit_is_refused() {
        assert_eq!(literal(BUILD_HASH_PLACEHOLDER), "32'hb17d4a54");
        let s = stamp(TEXT.to_string());
        assert!(!s.contains("32'hb17d4a54"));
        let h = build_hash(&s).unwrap();
        assert_eq!(h, hash(TEXT));
        assert!(s.contains(&literal(h)));
        let edited = s.replace("module m;", "module n;");
        let e = build_hash(&edited).unwrap_err().to_string();
        assert!(e.contains("changed after rtl-gen"), "{e}");
        assert!(build_hash("module m; endmodule").is_err());
    }

    #[test]
    #[should_panic(expected = "exactly once")]
    fn a_file_without_the_placeholder_cannot_be_stamped() {
        stamp("module m; endmodule".into());
    }
}
