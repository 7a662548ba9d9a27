//! # horus-host-driver
//!
//! The host side of a Horus switch: one register-access abstraction ([`access::Regs`]) over
//! every device a switch runs on ([`device`]: a card's PCIe BAR, the Verilated RTL, the
//! reference model, a dry run), and the driver that programs, reads and repairs a switch through
//! it ([`driver::Switch`]; the leaf that holds tasks, [`jbsq::JbsqDriver`]). `horusctl` is its
//! command line. The register maps are `horus_regs::regmap`'s and `jbsq_map`'s, the
//! configuration `horus_model::config`'s, and every control operation is validated and computed
//! by the model (`horus_model::sched`).

pub mod access;
pub mod auth;
pub mod controller;
pub mod device;
pub mod driver;
pub mod jbsq;
pub mod leaf;
pub mod metrics;
pub mod packet;
pub mod ratelimit;
pub mod security;

pub use access::{AccessError, Regs};
pub use device::{Device, DeviceSpec};
pub use driver::{DriverError, Identity, Switch};
