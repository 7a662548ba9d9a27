//! A dry run: the accesses a command makes, written as a script (`write ADDR VALUE`,
//! `read ADDR`, `wait ADDR MASK VALUE`, with the fields they touch), against a device that answers
//! (the model of a freshly loaded switch, so that reads find what a fresh card would hold).

use std::fmt::Write as _;

use crate::access::{AccessError, Regs, names_at};

/// Records the accesses made to `inner`.
pub struct Recorder<R: Regs> {
    inner: R,
    script: String,
    /// The names of the fields at an address (the paper map's, or the JBSQ leaf's).
    names: fn(u32) -> String,
}

impl<R: Regs> Recorder<R> {
    /// A recorder naming the paper map's fields.
    pub fn new(inner: R) -> Self {
        Recorder::with_names(inner, names_at)
    }

    /// A recorder naming fields with `names` (`access::jbsq_names_at` for a JBSQ leaf).
    pub fn with_names(inner: R, names: fn(u32) -> String) -> Self {
        Recorder {
            inner,
            script: String::new(),
            names,
        }
    }

    /// The script so far.
    pub fn script(&self) -> &str {
        &self.script
    }

    pub fn inner(&mut self) -> &mut R {
        &mut self.inner
    }
}

impl<R: Regs> Regs for Recorder<R> {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        let v = self.inner.read(addr)?;
        let _ = writeln!(
            self.script,
            "read  0x{addr:03x}             # {} -> 0x{v:08x}",
            (self.names)(addr)
        );
        Ok(v)
    }

    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        let _ = writeln!(
            self.script,
            "write 0x{addr:03x} 0x{value:08x}  # {}",
            (self.names)(addr)
        );
        self.inner.write(addr, value)
    }

    fn wait(&mut self, addr: u32, mask: u32, want: u32, polls: u32) -> Result<bool, AccessError> {
        let _ = writeln!(
            self.script,
            "wait  0x{addr:03x} 0x{mask:08x} 0x{want:08x}  # until {} & mask == value",
            (self.names)(addr)
        );
        self.inner.wait(addr, mask, want, polls)
    }

    fn note(&mut self, what: &str) {
        let _ = writeln!(self.script, "# {what}");
    }

    fn lock(&mut self) -> Result<(), AccessError> {
        self.inner.lock()
    }

    fn unlock(&mut self) {
        self.inner.unlock()
    }

    fn describe(&self) -> String {
        format!("dry run on {}", self.inner.describe())
    }
}
