//! The devices a switch is reached through, chosen by a URL-like name (`--device`):
//!
//! | name | device |
//! |---|---|
//! | `pci:BDF[,bar=N][,base=ADDR]` | a card: BAR `N` (default 2) of PCI device `BDF`, the switch at `ADDR` (default 0x100000, the OpenNIC shell's `box_250mhz`) |
//! | `file:PATH[,base=ADDR]` | the same access to a file standing for a BAR |
//! | `cosim:CONFIG` | the generated Verilog of CONFIG's preset, Verilated, freshly loaded (built with the `cosim` feature) |
//! | `model:CONFIG` | the reference model of CONFIG's switch, freshly loaded (a JBSQ leaf's: `jbsq_model`) |
//! | `dry-run[:CONFIG]` | the accesses written as a script, answered by the model of a fresh switch (CONFIG defaults to the one the command applies; a JBSQ leaf's: by its fresh register file, `jbsq_fresh`) |
//!
//! A simulated device lives as long as the process: `horusctl` commands on `cosim:` and
//! `model:` start from a fresh switch; a program that embeds the library (the tests, a software
//! switch) keeps one and drives it with every command.

#[cfg(feature = "cosim")]
pub mod cosim;
pub mod jbsq_fresh;
pub mod jbsq_model;
pub mod model;
pub mod pci;
pub mod record;

use std::path::{Path, PathBuf};

use horus_model::config::Config;
use horus_model::sched::jbsq::LeafKind;

use crate::access::{AccessError, Regs};
#[cfg(feature = "cosim")]
pub use cosim::CosimDevice;
pub use jbsq_fresh::FreshJbsq;
pub use jbsq_model::JbsqModelDevice;
pub use model::ModelDevice;
pub use pci::PciBar;
pub use record::Recorder;

/// The generator seed of simulated switches (the model's default, as `rtl-gen` uses).
pub const SIM_SEED: u64 = horus_model::rng::DEFAULT_SEED;

/// Why a `cosim:` device does not open in a build without the Verilated RTL.
pub const NO_COSIM: &str = "the cosim: device (the Verilated RTL) is not in this build: \
build with `cargo build --release -p horus-host-driver --features cosim` (needs Verilator)";

/// A device by name, before it is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    Pci { bdf: String, bar: u8, base: u64 },
    File { path: PathBuf, base: u64 },
    Cosim(PathBuf),
    Model(PathBuf),
    DryRun(Option<PathBuf>),
}

fn number(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{s:?} is not a number"))
}

impl std::str::FromStr for DeviceSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<DeviceSpec, String> {
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        let options =
            |rest: &str, allowed: &[&str]| -> Result<(String, Vec<(String, u64)>), String> {
                let mut parts = rest.split(',');
                let head = parts.next().unwrap_or("").to_string();
                let mut opts = Vec::new();
                for p in parts {
                    let (k, v) = p
                        .split_once('=')
                        .ok_or_else(|| format!("{p:?}: options are key=value"))?;
                    if !allowed.contains(&k) {
                        return Err(format!(
                            "unknown option {k:?}; {kind}: takes {}",
                            allowed.join(", ")
                        ));
                    }
                    opts.push((k.to_string(), number(v)?));
                }
                Ok((head, opts))
            };
        let need = |rest: &str, what: &str| {
            if rest.is_empty() {
                Err(format!("{kind}: needs {what} ({kind}:{what})"))
            } else {
                Ok(PathBuf::from(rest))
            }
        };
        match kind {
            "pci" => {
                let (bdf, opts) = options(rest, &["bar", "base"])?;
                let mut spec = DeviceSpec::Pci {
                    bdf,
                    bar: 2,
                    base: pci::OPENNIC_BOX_BASE,
                };
                if let DeviceSpec::Pci { bar, base, .. } = &mut spec {
                    for (k, v) in opts {
                        match k.as_str() {
                            "bar" if v <= 5 => *bar = v as u8,
                            "bar" => {
                                return Err(format!("bar={v}: a PCI function has BARs 0 to 5"));
                            }
                            _ => *base = v,
                        }
                    }
                }
                Ok(spec)
            }
            "file" => {
                let (path, opts) = options(rest, &["base"])?;
                let path = need(&path, "PATH")?;
                let base = opts.first().map_or(0, |o| o.1);
                Ok(DeviceSpec::File { path, base })
            }
            "cosim" => Ok(DeviceSpec::Cosim(need(rest, "CONFIG")?)),
            "model" => Ok(DeviceSpec::Model(need(rest, "CONFIG")?)),
            "dry-run" => Ok(DeviceSpec::DryRun((!rest.is_empty()).then(|| rest.into()))),
            _ => Err(format!(
                "unknown device {s:?}: pci:BDF, file:PATH, cosim:CONFIG, model:CONFIG or dry-run[:CONFIG]"
            )),
        }
    }
}

/// An open device.
pub enum Device {
    Pci(PciBar),
    #[cfg(feature = "cosim")]
    Cosim(Box<CosimDevice>),
    Model(Box<ModelDevice>),
    /// The model of a JBSQ leaf's configuration.
    JbsqModel(Box<JbsqModelDevice>),
    DryRun(Box<Recorder<ModelDevice>>),
    /// A dry run of a JBSQ leaf's configuration.
    DryRunJbsq(Box<Recorder<FreshJbsq>>),
}

fn config(path: &Path) -> Result<Config, AccessError> {
    Config::from_file(path).map_err(|e| AccessError::Device(format!("{}: {e:#}", path.display())))
}

impl Device {
    /// Opens `spec`; `apply` is the configuration the command applies (what a dry run without
    /// one simulates).
    pub fn open(spec: &DeviceSpec, apply: Option<&Config>) -> Result<Device, AccessError> {
        Ok(match spec {
            DeviceSpec::Pci { bdf, bar, base } => Device::Pci(PciBar::open(bdf, *bar, *base)?),
            DeviceSpec::File { path, base } => Device::Pci(PciBar::open_path(path, *base)?),
            #[cfg(feature = "cosim")]
            DeviceSpec::Cosim(p) => Device::Cosim(Box::new(CosimDevice::fresh(
                &config(p)?,
                SIM_SEED,
                &format!("cosim:{}", p.display()),
            )?)),
            #[cfg(not(feature = "cosim"))]
            DeviceSpec::Cosim(_) => return Err(AccessError::Device(NO_COSIM.into())),
            DeviceSpec::Model(p) => {
                let cfg = config(p)?;
                let what = format!("model:{}", p.display());
                if cfg.switch.leaf == LeafKind::Jbsq {
                    Device::JbsqModel(Box::new(JbsqModelDevice::fresh(&cfg, SIM_SEED, &what)?))
                } else {
                    Device::Model(Box::new(ModelDevice::fresh(&cfg, SIM_SEED, &what)?))
                }
            }
            DeviceSpec::DryRun(p) => {
                let cfg = match (p, apply) {
                    (Some(p), _) => config(p)?,
                    (None, Some(c)) => c.clone(),
                    (None, None) => {
                        return Err(AccessError::Device(
                            "a dry run needs the switch it stands for: dry-run:CONFIG".into(),
                        ));
                    }
                };
                if cfg.switch.leaf == LeafKind::Jbsq {
                    let what = format!("a fresh JBSQ leaf {}", cfg.switch.id);
                    let preset =
                        horus_regs::presets::jbsq_preset_for(&cfg.sizes).ok_or_else(|| {
                            AccessError::Device(format!(
                                "{what}: no JBSQ leaf's preset has the sizes {:?}",
                                cfg.sizes
                            ))
                        })?;
                    let d = FreshJbsq::new(preset.sizes(), cfg.switch.conn_timeout_us, &what);
                    return Ok(Device::DryRunJbsq(Box::new(Recorder::with_names(
                        d,
                        crate::access::jbsq_names_at,
                    ))));
                }
                let what = format!("a fresh {} switch {}", cfg.switch.role, cfg.switch.id);
                let m = ModelDevice::fresh(&cfg, SIM_SEED, &what)?;
                Device::DryRun(Box::new(Recorder::new(m)))
            }
        })
    }

    /// A dry run's script.
    pub fn script(&self) -> Option<&str> {
        match self {
            Device::DryRun(r) => Some(r.script()),
            Device::DryRunJbsq(r) => Some(r.script()),
            _ => None,
        }
    }

    fn regs(&mut self) -> &mut dyn Regs {
        match self {
            Device::Pci(d) => d,
            #[cfg(feature = "cosim")]
            Device::Cosim(d) => d.as_mut(),
            Device::Model(d) => d.as_mut(),
            Device::JbsqModel(d) => d.as_mut(),
            Device::DryRun(d) => d.as_mut(),
            Device::DryRunJbsq(d) => d.as_mut(),
        }
    }
}

impl Regs for Device {
    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        self.regs().read(addr)
    }
    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        self.regs().write(addr, value)
    }
    fn wait(&mut self, addr: u32, mask: u32, want: u32, polls: u32) -> Result<bool, AccessError> {
        self.regs().wait(addr, mask, want, polls)
    }
    fn lock(&mut self) -> Result<(), AccessError> {
        self.regs().lock()
    }
    fn unlock(&mut self) {
        self.regs().unlock()
    }
    fn note(&mut self, what: &str) {
        self.regs().note(what)
    }
    fn describe(&self) -> String {
        match self {
            Device::Pci(d) => d.describe(),
            #[cfg(feature = "cosim")]
            Device::Cosim(d) => d.describe(),
            Device::Model(d) => d.describe(),
            Device::JbsqModel(d) => d.describe(),
            Device::DryRun(d) => d.describe(),
            Device::DryRunJbsq(d) => d.describe(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse_with_their_defaults_and_bad_ones_say_why() {
        let p: DeviceSpec = "pci:0000:81:00.0".parse().unwrap();
        assert_eq!(
            p,
            DeviceSpec::Pci {
                bdf: "0000:81:00.0".into(),
                bar: 2,
                base: 0x10_0000
            }
        );
        let p: DeviceSpec = "pci:0000:81:00.0,bar=0,base=0x2000".parse().unwrap();
        assert_eq!(
            p,
            DeviceSpec::Pci {
                bdf: "0000:81:00.0".into(),
                bar: 0,
                base: 0x2000
            }
        );
        assert_eq!(
            "dry-run".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::DryRun(None)
        );
        assert_eq!(
            "model:a.toml".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Model("a.toml".into())
        );
        for (bad, why) in [
            ("usb:1", "unknown device"),
            ("pci:0000:81:00.0,bar=9", "BARs 0 to 5"),
            ("pci:0000:81:00.0,speed=1", "unknown option"),
            ("pci:0000:81:00.0,base=zz", "not a number"),
            ("cosim:", "needs CONFIG"),
            ("file:", "needs PATH"),
        ] {
            let e = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
