//! The switch on a card: its register window in a PCIe BAR, mapped from the PCI device's sysfs
//! resource file (`/sys/bus/pci/devices/<BDF>/resource<N>`) and accessed with volatile 32-bit
//! loads and stores, the way the shells' own tools reach their registers.
//!
//! The OpenNIC shell puts `box_250mhz` at BAR2 + 0x100000; a NetFPGA-PLUS datapath's window is
//! its project's `S0` window, at BAR2 + 0x200000 (the shell's `box1` window, whose crossbar puts
//! S0 at 0: `base=0x200000`). 32-bit accesses only: the shells' AXI4-Lite crossbars take nothing
//! else.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use memmap2::{MmapOptions, MmapRaw};

use crate::access::{AccessError, Regs};
use horus_regs::regmap;

/// The window's size: the register map (a page; the map is 512 bytes).
const WINDOW: usize = 4096;

/// Where the OpenNIC shell's `box_250mhz` sits in BAR2.
pub const OPENNIC_BOX_BASE: u64 = 0x10_0000;

/// The register window of a switch in a PCIe BAR (or in any file that stands for one).
pub struct PciBar {
    map: MmapRaw,
    /// The resource file, held for its advisory lock ([`Regs::lock`]).
    file: std::fs::File,
    what: String,
}

/// Why a mapping failed, with what to do about it.
fn map_error(path: &Path, e: &std::io::Error, doing: &str) -> AccessError {
    // Linux's errno values.
    const EPERM: i32 = 1;
    const ENOENT: i32 = 2;
    const EACCES: i32 = 13;
    const EINVAL: i32 = 22;
    let hint = match e.raw_os_error() {
        Some(EPERM | EACCES) => {
            "permission denied: run as root (or give this user the resource file), and check \
             that the kernel is not in lockdown (`cat /sys/kernel/security/lockdown`), which \
             forbids mapping PCI resources"
        }
        Some(EINVAL) => {
            "the kernel refused the mapping (EINVAL): a driver holds this BAR and the kernel \
             enforces exclusive I/O memory (CONFIG_IO_STRICT_DEVMEM); boot with `iomem=relaxed`, \
             or unbind the driver and bind the device to vfio-pci"
        }
        Some(ENOENT) => "no such file: is the BDF right (`lspci -D`), and is the card's BAR there?",
        _ => "",
    };
    AccessError::Device(if hint.is_empty() {
        format!("{doing} {}: {e}", path.display())
    } else {
        format!("{doing} {}: {e}: {hint}", path.display())
    })
}

impl PciBar {
    /// The BAR `bar` of the PCI device `bdf` (`0000:81:00.0`), the switch's window at `base`.
    pub fn open(bdf: &str, bar: u8, base: u64) -> Result<PciBar, AccessError> {
        if !is_bdf(bdf) {
            return Err(AccessError::Device(format!(
                "{bdf:?} is not a PCI address (domain:bus:device.function, e.g. 0000:81:00.0)"
            )));
        }
        let path = PathBuf::from(format!("/sys/bus/pci/devices/{bdf}/resource{bar}"));
        Self::open_path(&path, base)
    }

    /// The window at `base` of the file `path` (a sysfs resource file, or a plain file that
    /// stands for one in tests).
    pub fn open_path(path: &Path, base: u64) -> Result<PciBar, AccessError> {
        if base % WINDOW as u64 != 0 {
            return Err(AccessError::Device(format!(
                "window base {base:#x} is not page-aligned ({WINDOW:#x})"
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| map_error(path, &e, "opening"))?;
        let len = file
            .metadata()
            .map_err(|e| map_error(path, &e, "reading the size of"))?
            .len();
        if base.checked_add(WINDOW as u64).is_none_or(|end| end > len) {
            return Err(AccessError::Device(format!(
                "{} is {len:#x} bytes: no window of {WINDOW:#x} at {base:#x} (is this the right BAR?)",
                path.display()
            )));
        }
        let map = MmapOptions::new()
            .offset(base)
            .len(WINDOW)
            .map_raw(&file)
            .map_err(|e| map_error(path, &e, "mapping"))?;
        Ok(PciBar {
            map,
            file,
            what: format!("{} at {base:#x}", path.display()),
        })
    }

    fn at(&self, addr: u32) -> Result<*mut u32, AccessError> {
        if addr % 4 != 0 || addr as usize >= 4 * regmap::WORDS {
            return Err(AccessError::OutOfMap { addr });
        }
        // In the mapping (checked above), aligned (the map is page-aligned).
        Ok(unsafe { self.map.as_mut_ptr().add(addr as usize) }.cast::<u32>())
    }
}

/// `dddd:bb:dd.f`.
fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    b.len() == 12
        && hex(0..4)
        && b[4] == b':'
        && hex(5..7)
        && b[7] == b':'
        && hex(8..10)
        && b[10] == b'.'
        && (b'0'..=b'7').contains(&b[11])
}

/// How long a command waits for another process's lock on the card.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Regs for PciBar {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        let p = self.at(addr)?;
        // A device register: every access must reach it, exactly 32 bits wide.
        Ok(u32::from_le(unsafe { p.read_volatile() }))
    }

    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        let p = self.at(addr)?;
        unsafe { p.write_volatile(value.to_le()) };
        Ok(())
    }

    fn lock(&mut self) -> Result<(), AccessError> {
        use std::os::fd::AsRawFd;
        // Every horusctl on this card takes the same lock for a staged operation (and for a
        // peek, a poke, a dump). Another may hold it for a while; not forever.
        let until = std::time::Instant::now() + LOCK_WAIT;
        loop {
            // SAFETY: flock(2) on the open file this value owns.
            if unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => {}
                _ => return Err(AccessError::Device(format!("locking {}: {e}", self.what))),
            }
            if std::time::Instant::now() >= until {
                return Err(AccessError::Device(format!(
                    "{} is locked by another process (another horusctl or serve) for more than {} s; try again when it is done (`fuser` names it)",
                    self.what,
                    LOCK_WAIT.as_secs()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn unlock(&mut self) {
        use std::os::fd::AsRawFd;
        // Closing the file would release it too; an error here leaves nothing to do.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_are_checked() {
        assert!(is_bdf("0000:81:00.0") && is_bdf("abcd:ef:1f.7"));
        for bad in ["81:00.0", "0000:81:00.8", "0000:81:00:0", "0000:8g:00.0"] {
            assert!(!is_bdf(bad), "{bad}");
        }
        let e = PciBar::open("81:00.0", 2, 0).err().unwrap().to_string();
        assert!(e.contains("not a PCI address"), "{e}");
    }
}
