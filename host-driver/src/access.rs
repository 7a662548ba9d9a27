//! Register access: 32-bit reads and writes at byte offsets of the switch's AXI4-Lite window,
//! and the map's rules for them (`horus_regs::regmap`, the one definition).

use horus_regs::regmap::{self, Access, Field};
use thiserror::Error;

/// Why an access failed.
#[derive(Debug, Error)]
pub enum AccessError {
    #[error("address {addr:#x} is not 32-bit aligned")]
    Unaligned { addr: u32 },
    #[error(
        "address {addr:#x} is outside the register map (words 0..{}, byte addresses 0..{:#x})",
        regmap::WORDS,
        4 * regmap::WORDS
    )]
    OutOfMap { addr: u32 },
    #[error("address {addr:#x} holds no register")]
    Unmapped { addr: u32 },
    #[error("{name} (address {addr:#x}) is read-only")]
    ReadOnly { addr: u32, name: &'static str },
    #[error("the switch answered SLVERR to the {op} of {addr:#x}")]
    SlvErr { op: &'static str, addr: u32 },
    #[error("{0}")]
    Device(String),
}

/// A device's register window.
pub trait Regs {
    /// Reads the register at byte address `addr`.
    fn read(&mut self, addr: u32) -> Result<u32, AccessError>;
    /// Writes `value` to the register at byte address `addr`.
    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError>;
    /// Reads `addr` until `value & mask == want`, at most `polls` times; whether it did. A
    /// recorder writes the wait itself into its script.
    fn wait(&mut self, addr: u32, mask: u32, want: u32, polls: u32) -> Result<bool, AccessError> {
        for _ in 0..polls {
            if self.read(addr)? & mask == want {
                return Ok(true);
            }
        }
        Ok(false)
    }
    /// Holds the device against other processes until [`Regs::unlock`] (a card: an advisory
    /// lock on its resource file), for the accesses of one staged operation.
    fn lock(&mut self) -> Result<(), AccessError> {
        Ok(())
    }
    fn unlock(&mut self) {}
    /// Says what the next accesses are for (a recorder writes it as a comment).
    fn note(&mut self, _what: &str) {}
    /// What the device is, for messages.
    fn describe(&self) -> String;
}

/// A register map: the paper switch's ([`regmap`]) or the JBSQ leaf's
/// ([`horus_regs::jbsq_map`]), in the same window of [`regmap::WORDS`] words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Map {
    Paper,
    Jbsq,
}

impl Map {
    /// The map's fields.
    pub fn fields(self) -> &'static [Field] {
        match self {
            Map::Paper => regmap::FIELDS,
            Map::Jbsq => &horus_regs::jbsq_map::FIELDS,
        }
    }

    /// The fields of word `word`.
    pub fn fields_of(self, word: usize) -> impl Iterator<Item = &'static Field> {
        self.fields()
            .iter()
            .filter(move |f| (f.word..=f.last_word()).contains(&word))
    }

    /// The field named `name` (any case).
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields()
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// Checks that `addr` names a register of the map that may be read (`write == false`) or
    /// written; the driver refuses any other access before it reaches a device.
    pub fn check(self, addr: u32, write: bool) -> Result<(), AccessError> {
        if addr % 4 != 0 {
            return Err(AccessError::Unaligned { addr });
        }
        let word = addr as usize / 4;
        if word >= regmap::WORDS {
            return Err(AccessError::OutOfMap { addr });
        }
        let mut fields = self.fields_of(word).peekable();
        let Some(first) = fields.peek().copied() else {
            return Err(AccessError::Unmapped { addr });
        };
        if write && !fields.any(|f| f.access != Access::Ro) {
            return Err(AccessError::ReadOnly {
                addr,
                name: first.name,
            });
        }
        Ok(())
    }

    /// The names of the fields at `addr`, for scripts and messages.
    pub fn names_at(self, addr: u32) -> String {
        self.fields_of(addr as usize / 4)
            .map(|f| f.name)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The fields of word `word` of the paper switch's map.
pub fn fields_of(word: usize) -> impl Iterator<Item = &'static Field> {
    Map::Paper.fields_of(word)
}

/// [`Map::check`] in the paper switch's map.
pub fn check(addr: u32, write: bool) -> Result<(), AccessError> {
    Map::Paper.check(addr, write)
}

/// The names of the JBSQ leaf's fields at `addr` (`horus_regs::jbsq_map`), for scripts.
pub fn jbsq_names_at(addr: u32) -> String {
    Map::Jbsq.names_at(addr)
}

/// The names of the paper switch's fields at `addr`, for scripts and messages.
pub fn names_at(addr: u32) -> String {
    Map::Paper.names_at(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_decides_which_accesses_reach_a_device() {
        let id = regmap::fields::ID.byte_address() as u32;
        let sw = regmap::fields::SWITCH_ID.byte_address() as u32;
        let go = regmap::fields::CTL_GO.byte_address() as u32;
        assert!(check(id, false).is_ok());
        assert!(matches!(
            check(id, true),
            Err(AccessError::ReadOnly { name: "ID", .. })
        ));
        assert!(check(sw, true).is_ok() && check(go, true).is_ok());
        assert!(matches!(
            check(2, false),
            Err(AccessError::Unaligned { .. })
        ));
        assert!(matches!(
            check(4 * regmap::WORDS as u32, false),
            Err(AccessError::OutOfMap { .. })
        ));
        // The word after the last (the board adapter's drops) holds nothing.
        let after = regmap::fields::BOARD_DROPS.byte_address() as u32 + 4;
        assert!(matches!(
            check(after, false),
            Err(AccessError::Unmapped { .. })
        ));
        assert_eq!(names_at(sw), "SWITCH_ID SWITCH_UDP_PORT");
    }

    /// Each map decides by its own fields: the JBSQ leaf's read-back words lie beyond the paper
    /// map's last, its counters are read-only, its staged operation is writable.
    #[test]
    fn the_jbsq_map_decides_by_its_own_fields() {
        use horus_regs::jbsq_map::fields as jbsq;
        let slot = jbsq::RB_SLOT.byte_address() as u32;
        assert!(Map::Jbsq.check(slot, false).is_ok());
        assert!(matches!(
            Map::Paper.check(slot, false),
            Err(AccessError::Unmapped { .. })
        ));
        assert!(matches!(
            Map::Jbsq.check(slot, true),
            Err(AccessError::ReadOnly {
                name: "RB_SLOT",
                ..
            })
        ));
        let bound = jbsq::CTL_SET_BOUND.byte_address() as u32;
        assert!(Map::Jbsq.check(bound, true).is_ok());
        let tasks = horus_regs::jbsq_map::counter("TASKS").byte_address() as u32;
        assert!(matches!(
            Map::Jbsq.check(tasks, true),
            Err(AccessError::ReadOnly { .. })
        ));
        assert_eq!(Map::Jbsq.names_at(slot), "RB_SLOT RB_LAST");
        assert_eq!(Map::Jbsq.field("ctl_set_bound"), Some(&jbsq::CTL_SET_BOUND));
        assert_eq!(Map::Paper.field("ctl_set_bound"), None);
    }
}
