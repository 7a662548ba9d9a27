//! `horusctl peek` and `poke`: raw registers by byte address or field name, in the map of the
//! switch opened (the paper switch's or the JBSQ leaf's, as its `ID` says).

use std::fmt::Write as _;

use anyhow::{Result, bail};
use horus_host_driver::Regs;
use horus_host_driver::access::Map;
use horus_host_driver::device::DeviceSpec;
use horus_regs::regmap;

use crate::{Print, finish_script, open_any, word};

/// A register of `map`: a field's name (any case) or a byte address.
fn register(map: Map, s: &str) -> Result<(u32, Option<&'static regmap::Field>)> {
    if let Some(f) = map.field(s) {
        return Ok((f.byte_address() as u32, Some(f)));
    }
    let header = match map {
        Map::Paper => "build/horus_regs.h",
        Map::Jbsq => "build/horus_jbsq_regs.h",
    };
    word(s).map(|a| (a, None)).map_err(|_| {
        anyhow::anyhow!("{s:?} is neither a byte address nor a register field (see {header})")
    })
}

/// `peek`: a register or a field, in the map of the switch opened (the paper switch's or the
/// JBSQ leaf's).
pub(crate) fn peek(dev: Option<&DeviceSpec>, r: &str, print: Print) -> Result<()> {
    let mut out = String::new();
    let mut sw = open_any(dev, None)?;
    let map = sw.map();
    let (a, f) = register(map, r)?;
    let regs = sw.regs();
    regs.lock()?;
    let v = map.check(a, false).and_then(|()| regs.read(a));
    regs.unlock();
    let v = v?;
    match f {
        Some(f) if f.width < 32 => {
            let x = (u64::from(v) >> f.lsb) & ((1 << f.width) - 1);
            writeln!(out, "{} = {x:#x} ({x}; word 0x{a:03x} = 0x{v:08x})", f.name)?
        }
        _ => writeln!(out, "0x{a:03x} = 0x{v:08x} ({v})  # {}", map.names_at(a))?,
    }
    finish_script(regs.script(), out, print)
}

/// `poke`: a register or a field written (a field: read, modified, written), in the map of the
/// switch opened. On the JBSQ leaf a poke bypasses the state file: the host's mirror does not
/// see it (a member's slot changed so is caught at the next open's read of every slot).
pub(crate) fn poke(dev: Option<&DeviceSpec>, r: &str, value: &str, print: Print) -> Result<()> {
    let mut out = String::new();
    let mut sw = open_any(dev, None)?;
    let map = sw.map();
    let (a, f) = register(map, r)?;
    let value = u64::from(word(value)?);
    if let Some(f) = f
        && f.width < 32
        && value >> f.width != 0
    {
        bail!("{value:#x} does not fit {} ({} bits)", f.name, f.width);
    }
    let regs = sw.regs();
    // A field is read, modified and written under the lock, so that no other process's write
    // to the same word falls in between.
    regs.lock()?;
    let v = (|| -> Result<u32> {
        map.check(a, true)?;
        let v = match f {
            Some(f) if f.width < 32 => {
                let mask = ((1u32 << f.width) - 1) << f.lsb;
                (regs.read(a)? & !mask) | ((value as u32) << f.lsb)
            }
            _ => value as u32,
        };
        regs.write(a, v)?;
        Ok(v)
    })();
    regs.unlock();
    let v = v?;
    writeln!(out, "0x{a:03x} <- 0x{v:08x}  # {}", map.names_at(a))?;
    finish_script(regs.script(), out, print)
}
