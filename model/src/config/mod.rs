//! The switch configuration: the single source of truth for one switch's pools, nodes and
//! parameters.
//!
//! An operator writes one TOML file per switch (FPGA SmartNIC or simulator). It has six
//! sections, all with `deny_unknown_fields` so that a misspelt key is an error rather than a
//! silently ignored line:
//!
//! ```toml
//! [switch]                 # required: who this switch is
//! role = "leaf"            # "leaf" (schedules tasks to workers) or "spine" (to racks)
//! id = 3
//! mac = "02:00:00:00:00:03"
//! ip = "10.0.0.3"
//! pass_through_port = 1
//! control_port = 0
//!
//! [sizes]                  # optional: table sizes (defaults depend on the role)
//! [defaults]               # optional: per-pool parameters every pool inherits
//!
//! [[spines]]               # leaf only: the spines this leaf reports to
//! id = 1
//! mac = "02:00:00:00:01:01"
//! ip = "10.0.1.1"
//! udp_port = 1234
//! port = 2
//!
//! [[pools]]                # the pools this switch schedules
//! id = 7
//! spine = 1                # leaf only
//! spine_node = 12          # leaf only
//!   [[pools.nodes]]        # leaf: workers; spine: racks (leaves)
//!   id = 0
//!   mac = "02:00:00:03:00:01"
//!   ip = "10.0.3.1"
//!   udp_port = 5000
//!   port = 8
//!
//! [security]               # optional: who may speak to the switch and its controller
//! allow = ["10.0.3.0/24"]  # networks (default: see SecurityConfig)
//! ```
//!
//! A leaf that holds tasks (`[switch] leaf = "jbsq"`, `docs/jbsq.md`) takes the [`JbsqParams`]
//! keys in `[defaults]` and each pool, a pool's `buffer_slots` and a worker's own `k`
//! (`configs/example-leaf-jbsq.toml`); any other switch refuses them. What runs the paper's leaf
//! only refuses that leaf's configuration ([`Config::paper_leaf_only`]).
//!
//! [`Config::from_toml_str`] and [`Config::from_file`] parse that text into a raw, as-written form,
//! resolve it (role-dependent [`Sizes`], [`PoolParams`] overlaid on `[defaults]`, pool capacity
//! defaulting to the number of nodes listed, `report_delta` converted to 16.16 fixed point) and
//! [validate](Config::validate) the result. A [`Config`] therefore always holds concrete values.
//! [`Config::to_toml_string`] writes a config back in the same format; parsing that text gives an
//! equal [`Config`].
//!
//! A configuration for a board may name its ports (`port = "cmac1"`, `control_port = "host0"`)
//! instead of numbering them: [`Config::from_toml_str_for`] and [`Config::from_file_for`] take the
//! board's [`PortNames`], turn names into numbers and refuse a port the board lacks, naming the
//! key. Without a board, a named port is an error that says so.
//!
//! Errors ([`ConfigError`]) name the offending key as a path such as `pools[2].nodes[3].id`; when
//! a config has several problems, the first one in document order (`switch`, `sizes`, `defaults`,
//! `spines`, `pools` in the order of the fields of each entry) is reported.
//!
//! `Config` also implements serde's `Serialize` and `Deserialize` in this same operator format
//! (deserializing validates), so it can be embedded in other serde formats. The other types
//! serialize in their resolved form (for example [`PoolParams::report_delta_raw`]).

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sched::jbsq::{Advertise, Fallback, JbsqSizes, LeafKind, MAX_QUEUE_SLOTS};
use crate::wire::MacAddr;

mod raw;

use raw::{RawConfig, RawJbsq, RawPool};

/// Default source UDP port of the Horus messages a switch generates.
pub const DEFAULT_UDP_PORT: u16 = 1234;

/// Default timeout of a multi-packet connection-table entry, in microseconds.
pub const DEFAULT_CONN_TIMEOUT_US: u32 = 20_000;

/// Largest allowed `workers` count of one rack in one pool at a spine.
pub const MAX_RACK_WORKERS: u16 = 4096;

/// Largest allowed `sizes.conn_table` (entries).
pub const MAX_CONN_TABLE: u32 = 65_536;

/// 1.0 in 16.16 fixed point.
const FIXED_ONE: f64 = 65_536.0;

/// An error loading or validating a switch configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The text is not valid TOML or does not match the schema (unknown or missing key, wrong
    /// type, integer out of range). The message is toml's and includes line and column.
    #[error("{message}")]
    Parse {
        /// toml's message, including the line and column of the problem.
        message: String,
    },
    /// The config is well-formed but breaks a rule, for example a duplicate node ID.
    #[error("{key}: {message}")]
    Invalid {
        /// Path of the offending key, e.g. `pools[2].nodes[3].id` or `sizes.conn_table`.
        key: String,
        /// What is wrong with it.
        message: String,
    },
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

/// What a switch schedules tasks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A rack's top-of-rack switch: schedules tasks to the workers of its rack and reports to
    /// spines. Written `"leaf"`.
    Leaf,
    /// A spine switch: schedules tasks to racks (leaves). Written `"spine"`.
    Spine,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Leaf => "leaf",
            Role::Spine => "spine",
        })
    }
}

/// The `[switch]` section: this switch's identity and ports. Required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Leaf or spine. Required.
    pub role: Role,
    /// This switch's ID. For a leaf, its leaf ID, which spines write into `dst_id` of the tasks
    /// they send to this rack. Required.
    pub id: u16,
    /// Source MAC address of the messages this switch generates. Required.
    pub mac: MacAddr,
    /// Source IPv4 address of the messages this switch generates. Required.
    pub ip: Ipv4Addr,
    /// Source UDP port of the messages this switch generates. Default 1234
    /// ([`DEFAULT_UDP_PORT`]).
    #[serde(default = "default_udp_port")]
    pub udp_port: u16,
    /// Egress port for non-Horus frames and for frames this role does not schedule. Required.
    pub pass_through_port: u8,
    /// Egress port for controller packets (KEEP_ALIVE, WORKER_ID, ...). Required.
    pub control_port: u8,
    /// Timeout of a multi-packet connection-table entry, in microseconds; at least 1. Default
    /// 20000 ([`DEFAULT_CONN_TIMEOUT_US`]).
    #[serde(default = "default_conn_timeout_us")]
    pub conn_timeout_us: u32,
    /// Leaf only: which leaf it runs, `"horus"` (the paper's, the default) or `"jbsq"` (the leaf
    /// that holds tasks: `docs/jbsq.md`), whose pools take the [`JbsqParams`] keys.
    #[serde(default, skip_serializing_if = "is_horus")]
    pub leaf: LeafKind,
}

fn is_horus(k: &LeafKind) -> bool {
    *k == LeafKind::Horus
}

fn default_udp_port() -> u16 {
    DEFAULT_UDP_PORT
}

fn default_conn_timeout_us() -> u32 {
    DEFAULT_CONN_TIMEOUT_US
}

/// The `[sizes]` section: table sizes of the hardware or model. Each key is optional; missing
/// ones take the role's default ([`Sizes::default_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sizes {
    /// Number of pool slots (count); pool IDs must be below it. 1..=65535. Default 64.
    pub pools: u16,
    /// Number of node slots (count); node IDs must be below it and the pools' capacities must sum
    /// to at most it. 1..=65535. Default 4096 on a leaf, 1024 on a spine.
    pub nodes: u16,
    /// Number of multi-packet connection-table entries; a power of two in 1..=65536. Default 1024.
    pub conn_table: u32,
}

impl Sizes {
    /// The sizes used when `[sizes]` (or one of its keys) is omitted: 64 pools, 1024 connection
    /// entries, and 4096 nodes on a leaf or 1024 nodes on a spine.
    pub const fn default_for(role: Role) -> Sizes {
        match role {
            Role::Leaf => Sizes {
                pools: 64,
                nodes: 4096,
                conn_table: 1024,
            },
            Role::Spine => Sizes {
                pools: 64,
                nodes: 1024,
                conn_table: 1024,
            },
        }
    }
}

/// Per-pool scheduling parameters, resolved: `[defaults]` overlaid by a pool's own overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolParams {
    /// A leaf links its rack into the spine's idle list when the pool's idle-worker count
    /// reaches this (workers); at least 1. Default 1.
    pub idle_link_at: u16,
    /// A leaf unlinks its rack from the spine's idle list when the pool's idle-worker count falls
    /// to this or below (workers); below `idle_link_at`, the gap being the hysteresis. Default 0.
    pub idle_unlink_at: u16,
    /// A leaf sends a load report when the pool's average load (tasks per worker) moved by at
    /// least this much since its last report, in 16.16 fixed point (raw = round(x * 65536)); at
    /// least 1. Written in TOML as the float `report_delta` (> 0 and < 65536). Default 65536
    /// (`report_delta = 1.0`).
    pub report_delta_raw: u32,
    /// A leaf re-sends an idle message that the spine's idle-selected flag shows was lost (§A.3)
    /// only when at least this many microseconds passed since it last sent an idle message for
    /// the pool (the link rule's own messages included); 0 re-sends on every disagreement, as the
    /// paper does. Tasks the spine sent before an idle message reached it disagree with the leaf
    /// for about one round trip; without a gap each of them draws a message. Default
    /// [`DEFAULT_REPAIR_GAP_US`].
    pub idle_repair_gap_us: u16,
}

/// The default `idle_repair_gap_us`: a few network round trips between leaf and spine.
pub const DEFAULT_REPAIR_GAP_US: u16 = 50;

impl Default for PoolParams {
    /// `idle_link_at = 1`, `idle_unlink_at = 0`, `report_delta = 1.0`,
    /// `idle_repair_gap_us = 50`.
    fn default() -> Self {
        PoolParams {
            idle_link_at: 1,
            idle_unlink_at: 0,
            report_delta_raw: 65_536,
            idle_repair_gap_us: DEFAULT_REPAIR_GAP_US,
        }
    }
}

impl PoolParams {
    /// `report_delta_raw` as a number of tasks per worker (exact).
    pub fn report_delta(&self) -> f64 {
        f64::from(self.report_delta_raw) / FIXED_ONE
    }
}

/// A JBSQ leaf's per-pool keys (`leaf = "jbsq"` only), resolved: `[defaults]` overlaid by the
/// pool's own `k`, `advertise`, `room`, `hold_us` and `fallback` (`docs/algorithm.md`,
/// decisions 26, 27, 29, 31 and 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct JbsqParams {
    /// Places (tasks outstanding) per worker, unless a worker has its own `k`; 1..=255.
    /// Default 2.
    pub k: u8,
    /// What the spine is told: `"idle"` workers (default), free `"places"`, or the rack's
    /// `"queue"`, which takes `room` (at least 1) held tasks before it unlinks.
    pub advertise: Advertise,
    /// Microseconds a packet's pass holds the link after an idle message. Default 0.
    pub hold_us: u16,
    /// A task with no place and its region full: `"random"` (to the pass's sample, over its
    /// bound; default) or `"drop"`; either counted.
    pub fallback: Fallback,
}

impl Default for JbsqParams {
    /// `k = 2`, `advertise = "idle"`, `hold_us = 0`, `fallback = "random"`.
    fn default() -> Self {
        JbsqParams {
            k: 2,
            advertise: Advertise::Idle,
            hold_us: 0,
            fallback: Fallback::Random,
        }
    }
}

/// One `[[spines]]` entry (leaf only): a spine this leaf reports to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpineLink {
    /// The spine's switch ID, referenced by [`PoolConfig::spine`]; unique among the spines.
    /// Required.
    pub id: u16,
    /// The spine's MAC address (destination of messages to it). Required.
    pub mac: MacAddr,
    /// The spine's IPv4 address. Required.
    pub ip: Ipv4Addr,
    /// The spine's UDP port (destination port of messages to it). Required.
    pub udp_port: u16,
    /// Egress port of this switch towards the spine. Required.
    pub port: u8,
}

/// One `[[pools]]` entry, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolConfig {
    /// The pool's ID; unique, below `sizes.pools`. Required.
    pub id: u16,
    /// Node slots reserved for this pool (count), so that nodes can be added at run time; at
    /// least the number of nodes listed and at least 1. Default: the number of nodes listed.
    pub capacity: u16,
    /// Leaf only, required there: ID of the spine this pool reports to (one of `[[spines]]`).
    /// `None` on a spine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine: Option<u16>,
    /// Leaf only, required there: this leaf's node ID at that spine for this pool; unique per
    /// spine. `None` on a spine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_node: Option<u16>,
    /// Scheduling parameters: `[defaults]` overlaid by the pool's own `idle_link_at`,
    /// `idle_unlink_at`, `report_delta` and `idle_repair_gap_us` keys, each optional.
    pub params: PoolParams,
    /// A JBSQ leaf's keys for the pool (the defaults on any other switch).
    #[serde(default)]
    pub jbsq: JbsqParams,
    /// A JBSQ leaf's region of the task buffer for the pool, in slots (1..=32,768); default: an
    /// equal share of what the pools that set none leave of the buffer's 4,096.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_slots: Option<u32>,
    /// The pool's nodes (`[[pools.nodes]]`): workers at a leaf, racks at a spine. Default: none.
    pub nodes: Vec<NodeConfig>,
}

/// One `[[pools.nodes]]` entry: a worker (at a leaf) or a rack, i.e. a leaf (at a spine).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// Node ID at this switch: the worker ID at a leaf, the (pool, leaf) slot at a spine; unique
    /// across all pools of the switch and below `sizes.nodes`. Required.
    pub id: u16,
    /// The node's MAC address (destination of tasks sent to it). Required.
    pub mac: MacAddr,
    /// The node's IPv4 address. Required.
    pub ip: Ipv4Addr,
    /// The node's UDP port (destination port of tasks sent to it). Required.
    pub udp_port: u16,
    /// Egress port of this switch towards the node. Required.
    pub port: u8,
    /// Spine only, required there: the pool's worker count in that rack (workers), 1..=4096; it
    /// gives the rack's additive load factor. `None` at a leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u16>,
    /// Spine only, required there: the leaf switch ID written into `dst_id` of tasks sent to that
    /// rack; unique within the pool. `None` at a leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<u16>,
    /// A JBSQ leaf only: this worker's own bound (1..=255), e.g. by its speed; default the
    /// pool's `k`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u8>,
}

/// A switch's complete, resolved and validated configuration.
///
/// Its serde implementations use the operator's TOML format (the same as
/// [`Config::from_toml_str`] and [`Config::to_toml_string`]); deserializing validates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawConfig", into = "RawConfig")]
pub struct Config {
    /// `[switch]`: identity and ports. Required.
    pub switch: SwitchConfig,
    /// `[sizes]`: table sizes. Default: [`Sizes::default_for`] the role, key by key.
    pub sizes: Sizes,
    /// `[defaults]`: parameters every pool inherits. Default: [`PoolParams::default`], key by key.
    pub defaults: PoolParams,
    /// `[defaults]`' JBSQ keys (`leaf = "jbsq"`): what every pool inherits. Default:
    /// [`JbsqParams::default`], key by key.
    pub jbsq_defaults: JbsqParams,
    /// `[[spines]]` (leaf only): the spines this leaf reports to. Default: none.
    pub spines: Vec<SpineLink>,
    /// `[[pools]]`: the pools this switch schedules. Default: none.
    pub pools: Vec<PoolConfig>,
    /// `[security]`: the networks allowed to speak to the switch's control plane. Default: none
    /// listed.
    pub security: SecurityConfig,
}

/// `[security]`: what the hosts that serve a switch (a software switch, `horusctl serve`)
/// accept. The scheduler does not read it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityConfig {
    /// The networks whose hosts may send the switch frames and its controller control frames,
    /// and to which a software switch relays. Empty: the hosts choose their default
    /// (`docs/host-driver.md`, "Security model").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<crate::net::Ipv4Net>,
}

impl Config {
    /// Parses, resolves and validates a config from TOML text.
    ///
    /// ```
    /// use horus_model::config::{Config, Role};
    ///
    /// let config = Config::from_toml_str(
    ///     r#"
    ///     [switch]
    ///     role = "spine"
    ///     id = 1
    ///     mac = "02:00:00:00:01:01"
    ///     ip = "10.0.1.1"
    ///     pass_through_port = 5
    ///     control_port = 0
    ///
    ///     [[pools]]
    ///     id = 7
    ///       [[pools.nodes]]
    ///       id = 0
    ///       mac = "02:00:00:00:00:03"
    ///       ip = "10.0.0.3"
    ///       udp_port = 1234
    ///       port = 3
    ///       workers = 8
    ///       leaf = 3
    ///     "#,
    /// )?;
    /// assert_eq!(config.switch.role, Role::Spine);
    /// assert_eq!(config.sizes.nodes, 1024); // the spine default
    /// assert_eq!(config.pool(7).map(|p| p.capacity), Some(1)); // the number of nodes listed
    /// # Ok::<(), horus_model::config::ConfigError>(())
    /// ```
    pub fn from_toml_str(s: &str) -> Result<Config, ConfigError> {
        match toml::from_str::<RawConfig>(s) {
            Ok(raw) => Config::try_from(raw),
            Err(e) => {
                // A port given by name is valid only for a target that names its ports: say so
                // rather than toml's "expected u8".
                if let Ok(mut table) = s.parse::<toml::Table>() {
                    resolve_port_names(&mut table, None)?;
                }
                Err(ConfigError::Parse {
                    message: e.to_string(),
                })
            }
        }
    }

    /// Parses, resolves and validates a config for a target whose ports are `ports`: a port
    /// (`pass_through_port`, `control_port`, a spine's or a node's `port`) may be given by its
    /// name there (`port = "cmac1"`) or by number, and must be one of the target's.
    ///
    /// ```
    /// use horus_model::config::{Config, PortNames};
    ///
    /// let board = PortNames::new("au250", &[("cmac0", 0), ("cmac1", 1), ("host0", 2)]);
    /// let text = r#"
    ///     [switch]
    ///     role = "spine"
    ///     id = 1
    ///     mac = "02:00:00:00:01:01"
    ///     ip = "10.0.1.1"
    ///     pass_through_port = "cmac1"
    ///     control_port = "host0"
    /// "#;
    /// let config = Config::from_toml_str_for(text, &board)?;
    /// assert_eq!(config.switch.control_port, 2);
    /// let wrong = text.replace(r#""cmac1""#, "7");
    /// let e = Config::from_toml_str_for(&wrong, &board).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     "switch.pass_through_port: au250 has no port 7; its ports: cmac0 (0), cmac1 (1), host0 (2)"
    /// );
    /// # Ok::<(), horus_model::config::ConfigError>(())
    /// ```
    pub fn from_toml_str_for(s: &str, ports: &PortNames) -> Result<Config, ConfigError> {
        let mut table = s.parse::<toml::Table>().map_err(|e| ConfigError::Parse {
            message: e.to_string(),
        })?;
        resolve_port_names(&mut table, Some(ports))?;
        let raw =
            RawConfig::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::Parse {
                message: e.to_string(),
            })?;
        Config::try_from(raw)
    }

    /// [`Config::from_toml_str_for`] on a file.
    pub fn from_file_for(path: &Path, ports: &PortNames) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Config::from_toml_str_for(&text, ports)
    }

    /// Reads, parses, resolves and validates a config file.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Config::from_toml_str(&text)
    }

    /// Checks every rule of the schema and returns the first violation in document order.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check(None)
    }

    /// The pool with this ID, if any.
    /// Refuses a configuration of the leaf that holds tasks (`leaf = "jbsq"`) where only the
    /// paper's leaf runs: every switch, card and host tool today (its pipeline is planned:
    /// `docs/jbsq-pipeline.md`; the model builds it, `JbsqLeaf::from_config`).
    pub fn paper_leaf_only(&self) -> Result<(), ConfigError> {
        if self.switch.leaf == LeafKind::Jbsq {
            return Err(invalid(
                "switch.leaf",
                "the leaf that holds tasks (leaf = \"jbsq\") runs in the model, the simulator \
                 and its own Verilog (rtl-gen's horus_leaf_jbsq.v; horusctl's cosim: and model: devices); \
                 this switch runs the paper's leaf only (docs/jbsq-pipeline.md)",
            ));
        }
        Ok(())
    }

    pub fn pool(&self, id: u16) -> Option<&PoolConfig> {
        self.pools.iter().find(|p| p.id == id)
    }

    /// Writes the config as TOML. All sizes and defaults are written explicitly; a pool's
    /// parameters are written only where they differ from `[defaults]`. Parsing the text with
    /// [`Config::from_toml_str`] gives a config equal to `self` (if `self` is valid).
    pub fn to_toml_string(&self) -> String {
        match toml::to_string(&RawConfig::from(self)) {
            Ok(text) => text,
            // Unreachable: every value is a table, array, string, integer or float, and `None`
            // fields are skipped. Degrade to a comment rather than panic.
            Err(e) => format!("# cannot write config as TOML: {e}\n"),
        }
    }

    /// Resolves a parsed config: fills in role-dependent sizes, overlays pool parameters on the
    /// defaults, defaults capacities and converts `report_delta` to fixed point (saturating; an
    /// unrepresentable value is reported by [`Config::check`]).
    fn resolve(raw: &RawConfig) -> Config {
        let base = Sizes::default_for(raw.switch.role);
        let sizes = match &raw.sizes {
            None => base,
            Some(s) => Sizes {
                pools: s.pools.unwrap_or(base.pools),
                nodes: s.nodes.unwrap_or(base.nodes),
                conn_table: s.conn_table.unwrap_or(base.conn_table),
            },
        };
        let defaults = raw.defaults.overlay(&PoolParams::default());
        let jbsq_defaults = raw.defaults.jbsq().overlay(&JbsqParams::default());
        let pools = raw
            .pools
            .iter()
            .map(|p| PoolConfig {
                id: p.id,
                capacity: p
                    .capacity
                    .unwrap_or_else(|| u16::try_from(p.nodes.len()).unwrap_or(u16::MAX)),
                spine: p.spine,
                spine_node: p.spine_node,
                params: p.overrides().overlay(&defaults),
                jbsq: p.jbsq().overlay(&jbsq_defaults),
                buffer_slots: p.buffer_slots,
                nodes: p.nodes.clone(),
            })
            .collect();
        Config {
            switch: raw.switch.clone(),
            sizes,
            defaults,
            jbsq_defaults,
            spines: raw.spines.clone(),
            pools,
            security: raw.security.clone(),
        }
    }

    /// Validates in document order. With the parsed form at hand, `report_delta` is checked as
    /// written (so that NaN, 0 or 1e9 get a precise message) rather than as converted.
    fn check(&self, raw: Option<&RawConfig>) -> Result<(), ConfigError> {
        if self.switch.conn_timeout_us == 0 {
            return Err(invalid("switch.conn_timeout_us", "must be at least 1 us"));
        }
        if self.switch.leaf == LeafKind::Jbsq && self.switch.role == Role::Spine {
            return Err(invalid(
                "switch.leaf",
                "only a leaf may hold tasks: a spine has no leaf = \"jbsq\"",
            ));
        }
        self.sizes.check()?;
        let written_delta = raw.and_then(|r| r.defaults.report_delta);
        check_params(&self.defaults, written_delta, "defaults")?;
        let written = raw.map(|r| r.defaults.jbsq()).unwrap_or_default();
        self.check_jbsq_params(&self.jbsq_defaults, &written, "defaults")?;
        self.check_spines()?;

        let mut seen = Seen::default();
        for (i, pool) in self.pools.iter().enumerate() {
            let raw_pool = raw.and_then(|r| r.pools.get(i));
            self.check_pool(i, pool, raw_pool, &mut seen)?;
        }

        self.check_buffer_shares()?;

        let reserved: u64 = self.pools.iter().map(|p| u64::from(p.capacity)).sum();
        if reserved > u64::from(self.sizes.nodes) {
            return Err(invalid(
                "pools",
                format!(
                    "pools reserve {reserved} node slots but sizes.nodes is {}",
                    self.sizes.nodes
                ),
            ));
        }
        Ok(())
    }

    /// A place's JBSQ keys (`defaults` or `pools[i]`, `written` there): only on a JBSQ leaf; `k`
    /// at least 1; `room` at least 1 with `advertise = "queue"` and only with it.
    fn check_jbsq_params(
        &self,
        params: &JbsqParams,
        written: &RawJbsq,
        prefix: &str,
    ) -> Result<(), ConfigError> {
        if self.switch.leaf != LeafKind::Jbsq {
            if let Some(k) = written.first_key() {
                return Err(invalid(format!("{prefix}.{k}"), NOT_JBSQ));
            }
            if *params != JbsqParams::default() {
                return Err(invalid(format!("{prefix}.k"), NOT_JBSQ));
            }
            return Ok(());
        }
        if params.k == 0 {
            return Err(invalid(format!("{prefix}.k"), "must be at least 1"));
        }
        match params.advertise {
            Advertise::Queue { room: 0 } => Err(invalid(
                format!("{prefix}.room"),
                "required with advertise = \"queue\": the held tasks before the rack unlinks \
                 (at least 1)",
            )),
            Advertise::Queue { .. } => Ok(()),
            _ if written.room.is_some() => Err(invalid(
                format!("{prefix}.room"),
                "only with advertise = \"queue\"",
            )),
            _ => Ok(()),
        }
    }

    /// The JBSQ leaf's buffer shares: what the pools set fits the buffer, and leaves each pool
    /// that sets none at least a slot.
    fn check_buffer_shares(&self) -> Result<(), ConfigError> {
        if self.switch.leaf != LeafKind::Jbsq {
            return Ok(());
        }
        let total = JbsqSizes::DEFAULT.buffer_slots;
        let set: u64 = self
            .pools
            .iter()
            .filter_map(|p| p.buffer_slots)
            .map(u64::from)
            .sum();
        let unset = self
            .pools
            .iter()
            .filter(|p| p.buffer_slots.is_none())
            .count() as u64;
        if set > u64::from(total) || (unset > 0 && u64::from(total) - set < unset) {
            return Err(invalid(
                "pools",
                format!(
                    "the pools' buffer_slots take {set} of the task buffer's {total} slots, \
                     leaving too few for the {unset} pool(s) that set none"
                ),
            ));
        }
        Ok(())
    }

    /// Each pool's region of a JBSQ leaf's task buffer, `(base, slots)`, in pool order: its
    /// `buffer_slots`, or an equal share of what those leave, in a buffer of the default size
    /// ([`JbsqSizes::DEFAULT`]).
    pub fn buffer_regions(&self) -> Vec<(u32, u32)> {
        self.buffer_regions_of(JbsqSizes::DEFAULT.buffer_slots)
    }

    /// The same in a buffer of `total` slots.
    pub fn buffer_regions_of(&self, total: u32) -> Vec<(u32, u32)> {
        let set: u32 = self.pools.iter().filter_map(|p| p.buffer_slots).sum();
        let unset = self
            .pools
            .iter()
            .filter(|p| p.buffer_slots.is_none())
            .count() as u32;
        let share = total.saturating_sub(set).checked_div(unset).unwrap_or(0);
        let mut base = 0;
        self.pools
            .iter()
            .map(|p| {
                let slots = p.buffer_slots.unwrap_or(share);
                let region = (base, slots);
                base += slots;
                region
            })
            .collect()
    }

    fn check_spines(&self) -> Result<(), ConfigError> {
        if self.switch.role == Role::Spine {
            if !self.spines.is_empty() {
                return Err(invalid("spines", "a spine has no linked spines"));
            }
            return Ok(());
        }
        let mut ids: HashMap<u16, usize> = HashMap::new();
        for (i, spine) in self.spines.iter().enumerate() {
            if let Some(j) = ids.insert(spine.id, i) {
                return Err(invalid(
                    format!("spines[{i}].id"),
                    format!("duplicate spine ID {} (also spines[{j}].id)", spine.id),
                ));
            }
        }
        Ok(())
    }

    fn check_pool(
        &self,
        i: usize,
        pool: &PoolConfig,
        raw_pool: Option<&RawPool>,
        seen: &mut Seen,
    ) -> Result<(), ConfigError> {
        let key = format!("pools[{i}]");
        let written_delta = raw_pool.and_then(|p| p.report_delta);

        if let Some(&j) = seen.pools.get(&pool.id) {
            return Err(invalid(
                format!("{key}.id"),
                format!("duplicate pool ID {} (also pools[{j}].id)", pool.id),
            ));
        }
        seen.pools.insert(pool.id, i);
        if pool.id >= self.sizes.pools {
            return Err(invalid(
                format!("{key}.id"),
                format!(
                    "pool ID {} out of range: must be below sizes.pools = {}",
                    pool.id, self.sizes.pools
                ),
            ));
        }

        if pool.nodes.is_empty() && pool.capacity == 0 {
            return Err(invalid(
                format!("{key}.capacity"),
                "empty pool: no nodes listed and capacity 0 (list nodes or set capacity >= 1)",
            ));
        }
        if pool.nodes.len() > usize::from(pool.capacity) {
            return Err(invalid(
                format!("{key}.capacity"),
                format!(
                    "pool has {} nodes but capacity {}",
                    pool.nodes.len(),
                    pool.capacity
                ),
            ));
        }

        match self.switch.role {
            Role::Leaf => self.check_leaf_pool_link(&key, i, pool, seen)?,
            Role::Spine => {
                if pool.spine.is_some() {
                    return Err(invalid(
                        format!("{key}.spine"),
                        "only allowed on a leaf: a spine's pools are not linked to spines",
                    ));
                }
                if pool.spine_node.is_some() {
                    return Err(invalid(
                        format!("{key}.spine_node"),
                        "only allowed on a leaf: a spine's pools are not linked to spines",
                    ));
                }
            }
        }

        check_params(&pool.params, written_delta, &key)?;
        let written = raw_pool.map(RawPool::jbsq).unwrap_or_default();
        self.check_jbsq_params(&pool.jbsq, &written, &key)?;
        match pool.buffer_slots {
            Some(_) if self.switch.leaf != LeafKind::Jbsq => {
                return Err(invalid(format!("{key}.buffer_slots"), NOT_JBSQ));
            }
            Some(s) if s == 0 || s > MAX_QUEUE_SLOTS => {
                return Err(invalid(
                    format!("{key}.buffer_slots"),
                    format!("must be in 1..={MAX_QUEUE_SLOTS} (got {s})"),
                ));
            }
            _ => {}
        }

        let mut leaves: HashMap<u16, usize> = HashMap::new();
        for (j, node) in pool.nodes.iter().enumerate() {
            let node_key = format!("{key}.nodes[{j}]");
            if let Some(&(pi, nj)) = seen.nodes.get(&node.id) {
                return Err(invalid(
                    format!("{node_key}.id"),
                    format!(
                        "duplicate node ID {} (also pools[{pi}].nodes[{nj}].id)",
                        node.id
                    ),
                ));
            }
            seen.nodes.insert(node.id, (i, j));
            if node.id >= self.sizes.nodes {
                return Err(invalid(
                    format!("{node_key}.id"),
                    format!(
                        "node ID {} out of range: must be below sizes.nodes = {}",
                        node.id, self.sizes.nodes
                    ),
                ));
            }
            match node.k {
                Some(_) if self.switch.leaf != LeafKind::Jbsq => {
                    return Err(invalid(format!("{node_key}.k"), NOT_JBSQ));
                }
                Some(0) => return Err(invalid(format!("{node_key}.k"), "must be at least 1")),
                _ => {}
            }
            match self.switch.role {
                Role::Leaf => check_worker_node(&node_key, node)?,
                Role::Spine => check_rack_node(&node_key, &key, j, node, &mut leaves)?,
            }
        }
        Ok(())
    }

    fn check_leaf_pool_link(
        &self,
        key: &str,
        i: usize,
        pool: &PoolConfig,
        seen: &mut Seen,
    ) -> Result<(), ConfigError> {
        let Some(spine) = pool.spine else {
            return Err(invalid(
                format!("{key}.spine"),
                "required on a leaf: the ID of the spine this pool reports to",
            ));
        };
        if !self.spines.iter().any(|s| s.id == spine) {
            return Err(invalid(
                format!("{key}.spine"),
                format!("unknown spine {spine} (not listed in [[spines]])"),
            ));
        }
        let Some(spine_node) = pool.spine_node else {
            return Err(invalid(
                format!("{key}.spine_node"),
                "required on a leaf: this leaf's node ID at the spine for this pool",
            ));
        };
        if let Some(&j) = seen.spine_nodes.get(&(spine, spine_node)) {
            return Err(invalid(
                format!("{key}.spine_node"),
                format!(
                    "duplicate spine_node {spine_node} at spine {spine} (also pools[{j}].spine_node)"
                ),
            ));
        }
        seen.spine_nodes.insert((spine, spine_node), i);
        Ok(())
    }
}

/// IDs seen so far while validating pools, with where they were first seen.
#[derive(Default)]
struct Seen {
    /// Pool ID -> pool index.
    pools: HashMap<u16, usize>,
    /// Node ID -> (pool index, node index).
    nodes: HashMap<u16, (usize, usize)>,
    /// (spine ID, spine_node) -> pool index.
    spine_nodes: HashMap<(u16, u16), usize>,
}

impl Sizes {
    fn check(&self) -> Result<(), ConfigError> {
        if self.pools == 0 {
            return Err(invalid("sizes.pools", "must be at least 1"));
        }
        if self.nodes == 0 {
            return Err(invalid("sizes.nodes", "must be at least 1"));
        }
        if !self.conn_table.is_power_of_two() || self.conn_table > MAX_CONN_TABLE {
            return Err(invalid(
                "sizes.conn_table",
                format!(
                    "must be a power of two in 1..={MAX_CONN_TABLE} (got {})",
                    self.conn_table
                ),
            ));
        }
        Ok(())
    }
}

/// Checks resolved parameters under `prefix` (`defaults` or `pools[i]`). `written_delta` is the
/// `report_delta` written at that place, if known.
fn check_params(
    params: &PoolParams,
    written_delta: Option<f64>,
    prefix: &str,
) -> Result<(), ConfigError> {
    if params.idle_link_at == 0 {
        return Err(invalid(
            format!("{prefix}.idle_link_at"),
            "must be at least 1",
        ));
    }
    if params.idle_unlink_at >= params.idle_link_at {
        return Err(invalid(
            format!("{prefix}.idle_unlink_at"),
            format!(
                "must be below idle_link_at to leave a hysteresis gap (got idle_unlink_at = {}, \
                 idle_link_at = {})",
                params.idle_unlink_at, params.idle_link_at
            ),
        ));
    }
    let key = format!("{prefix}.report_delta");
    match written_delta {
        Some(x) => check_report_delta(x).map_err(|message| invalid(key, message)),
        None if params.report_delta_raw == 0 => Err(invalid(
            key,
            "must be at least 1/65536 (raw 16.16 value 1), got raw 0",
        )),
        None => Ok(()),
    }
}

/// Checks a written `report_delta`; on success, [`delta_to_raw`] is exact and at least 1.
fn check_report_delta(x: f64) -> Result<(), String> {
    if !x.is_finite() {
        return Err(format!("must be a finite number (got {x})"));
    }
    if x <= 0.0 {
        return Err(format!("must be positive (got {x})"));
    }
    if x >= FIXED_ONE {
        return Err(format!("must be below 65536 (got {x})"));
    }
    let raw = (x * FIXED_ONE).round();
    if raw < 1.0 {
        return Err(format!(
            "{x} is below the 16.16 fixed-point resolution: must be at least 1/65536 \
             (about 0.0000153)"
        ));
    }
    if raw > f64::from(u32::MAX) {
        return Err(format!(
            "{x} rounds to 65536.0 in 16.16 fixed point, which does not fit: must be below 65536"
        ));
    }
    Ok(())
}

/// `round(x * 65536)`, saturating at 0 and `u32::MAX` (NaN gives 0).
fn delta_to_raw(x: f64) -> u32 {
    // `as` saturates and maps NaN to 0; out-of-range values are rejected by the validation.
    (x * FIXED_ONE).round() as u32
}

/// Why a JBSQ key is refused on any other switch.
const NOT_JBSQ: &str = "only for the leaf that holds tasks ([switch] leaf = \"jbsq\")";

/// Checks a node of a leaf (a worker).
fn check_worker_node(node_key: &str, node: &NodeConfig) -> Result<(), ConfigError> {
    if node.workers.is_some() {
        return Err(invalid(
            format!("{node_key}.workers"),
            "only allowed on a spine: a leaf's nodes are single workers",
        ));
    }
    if node.leaf.is_some() {
        return Err(invalid(
            format!("{node_key}.leaf"),
            "only allowed on a spine: a leaf's nodes are workers, not racks",
        ));
    }
    Ok(())
}

/// Checks a node of a spine (a rack); `leaves` maps the pool's leaf IDs seen so far to node
/// indices.
fn check_rack_node(
    node_key: &str,
    pool_key: &str,
    j: usize,
    node: &NodeConfig,
    leaves: &mut HashMap<u16, usize>,
) -> Result<(), ConfigError> {
    match node.workers {
        None => {
            return Err(invalid(
                format!("{node_key}.workers"),
                format!(
                    "required on a spine: the pool's worker count in that rack \
                     (1..={MAX_RACK_WORKERS})"
                ),
            ));
        }
        Some(w) if w == 0 || w > MAX_RACK_WORKERS => {
            return Err(invalid(
                format!("{node_key}.workers"),
                format!("must be in 1..={MAX_RACK_WORKERS} (got {w})"),
            ));
        }
        Some(_) => {}
    }
    let Some(leaf) = node.leaf else {
        return Err(invalid(
            format!("{node_key}.leaf"),
            "required on a spine: the leaf switch ID of that rack",
        ));
    };
    if let Some(&k) = leaves.get(&leaf) {
        return Err(invalid(
            format!("{node_key}.leaf"),
            format!("duplicate leaf {leaf} in this pool (also {pool_key}.nodes[{k}].leaf)"),
        ));
    }
    leaves.insert(leaf, j);
    Ok(())
}

impl TryFrom<RawConfig> for Config {
    type Error = ConfigError;

    fn try_from(raw: RawConfig) -> Result<Config, ConfigError> {
        let config = Config::resolve(&raw);
        config.check(Some(&raw))?;
        Ok(config)
    }
}

// ---------------------------------------------------------------------------------------------
// Port names.

/// The ports of a target (a board): the names a configuration may use for them and their
/// numbers. The boards' own lists are in `horus_pipeline::board::boards`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortNames {
    /// The target's name, for messages (`au250`).
    pub target: String,
    /// Each port's name and number.
    pub ports: Vec<(String, u8)>,
}

impl PortNames {
    pub fn new(target: &str, ports: &[(&str, u8)]) -> PortNames {
        PortNames {
            target: target.to_string(),
            ports: ports.iter().map(|&(n, p)| (n.to_string(), p)).collect(),
        }
    }

    fn list(&self) -> String {
        self.ports
            .iter()
            .map(|(n, p)| format!("{n} ({p})"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The number for a port value as written (a name or a number), or why it is not one.
    fn number(&self, value: &toml::Value) -> Result<Option<u8>, String> {
        let n = match value {
            toml::Value::String(name) => match self.ports.iter().find(|(n, _)| n == name) {
                Some(&(_, p)) => p,
                None => {
                    return Err(format!(
                        "{} has no port named {name:?}; its ports: {}",
                        self.target,
                        self.list()
                    ));
                }
            },
            // Not a port number at all: the schema's check says what is wrong.
            toml::Value::Integer(i) => match u8::try_from(*i) {
                Ok(p) => p,
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        if self.ports.iter().any(|&(_, p)| p == n) {
            Ok(Some(n))
        } else {
            Err(format!(
                "{} has no port {n}; its ports: {}",
                self.target,
                self.list()
            ))
        }
    }
}

/// Replaces each port given by name with its number, for `ports`, and checks each port is one of
/// its numbers; with no `ports`, a port given by name is an error.
fn resolve_port_names(
    table: &mut toml::Table,
    ports: Option<&PortNames>,
) -> Result<(), ConfigError> {
    let fix = |key: String, value: &mut toml::Value| -> Result<(), ConfigError> {
        match ports {
            None => {
                if let toml::Value::String(name) = value {
                    return Err(invalid(
                        key,
                        format!(
                            "a port named {name:?} needs the board that names it (horusctl \
                             check --board B; rtl-gen --board B --config FILE)"
                        ),
                    ));
                }
            }
            Some(ports) => {
                if let Some(n) = ports.number(value).map_err(|m| invalid(key, m))? {
                    *value = toml::Value::Integer(i64::from(n));
                }
            }
        }
        Ok(())
    };
    if let Some(toml::Value::Table(sw)) = table.get_mut("switch") {
        for k in ["pass_through_port", "control_port"] {
            if let Some(v) = sw.get_mut(k) {
                fix(format!("switch.{k}"), v)?;
            }
        }
    }
    if let Some(toml::Value::Array(spines)) = table.get_mut("spines") {
        for (i, sp) in spines.iter_mut().enumerate() {
            if let Some(v) = sp.get_mut("port") {
                fix(format!("spines[{i}].port"), v)?;
            }
        }
    }
    if let Some(toml::Value::Array(pools)) = table.get_mut("pools") {
        for (i, pool) in pools.iter_mut().enumerate() {
            if let Some(toml::Value::Array(nodes)) = pool.get_mut("nodes") {
                for (j, node) in nodes.iter_mut().enumerate() {
                    if let Some(v) = node.get_mut("port") {
                        fix(format!("pools[{i}].nodes[{j}].port"), v)?;
                    }
                }
            }
        }
    }
    Ok(())
}
