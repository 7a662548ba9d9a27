//! A freshly loaded JBSQ leaf as a dry run stands for it: what `horusctl writes` and the
//! `dry-run:` device program when the configuration is a JBSQ leaf's. It answers the leaf's
//! identification (`jbsq_map::fresh`, which the co-simulation holds the leaf's Verilog to), keeps
//! what is written to the read-write words (the switch's registers and spine table, the staged
//! pass), runs a pass at once (`CTL_GO` reads 0 again, a node read is valid at once with slot and
//! last member 0) and refuses, as the leaf's register port does, a write to a read-only word and
//! an access beyond the map. It runs no pass: the host's mirror is what knows the leaf.

use horus_model::sched::jbsq::JbsqSizes;
use horus_regs::jbsq_map::{self, fields};
use horus_regs::regmap::{RegFile, WORDS, fields as paper};

use crate::access::{AccessError, Regs};

/// The register file of a freshly loaded JBSQ leaf.
pub struct FreshJbsq {
    words: RegFile,
    what: String,
}

impl FreshJbsq {
    /// The leaf of `sizes` whose connection entries expire after `conn_timeout_us`; `what` names
    /// it in messages.
    pub fn new(sizes: JbsqSizes, conn_timeout_us: u32, what: &str) -> FreshJbsq {
        FreshJbsq {
            // A dry run knows no bitstream: its build hash reads 0.
            words: jbsq_map::fresh(sizes, conn_timeout_us, 0),
            what: what.to_string(),
        }
    }

    fn word(addr: u32) -> Result<usize, AccessError> {
        if addr % 4 != 0 {
            return Err(AccessError::Unaligned { addr });
        }
        let word = addr as usize / 4;
        if word >= WORDS {
            return Err(AccessError::OutOfMap { addr });
        }
        Ok(word)
    }
}

impl Regs for FreshJbsq {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        let word = FreshJbsq::word(addr)?;
        if word == fields::RB_VALID.word {
            // A node read is answered at once (its slot and last member are 0).
            return Ok(1);
        }
        Ok(self.words.words[word])
    }

    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        let word = FreshJbsq::word(addr)?;
        if word == paper::CTL_GO.word {
            // The pass runs at once: the doorbell is idle again when next read.
            return Ok(());
        }
        if !jbsq_map::rw_words().contains(&word) {
            return Err(AccessError::SlvErr { op: "write", addr });
        }
        self.words.words[word] = value;
        Ok(())
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}
