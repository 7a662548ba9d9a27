//! `horusctl`: program, watch and repair a Horus switch through its registers.
//!
//! Every command that touches a switch takes `--device` (or `HORUS_DEVICE`): a card
//! (`pci:0000:81:00.0`), the Verilated RTL (`cosim:CONFIG`), the reference model (`model:CONFIG`)
//! or a dry run (`dry-run[:CONFIG]`, which prints the accesses as a script); see
//! `horus_host_driver::device`. It reads the switch's identification first and refuses a
//! switch of another register map, and a configuration that does not fit the loaded bitstream.
//!
//! - `check CONFIG [--board B]`: validate a configuration for the model and the hardware and
//!   print its control passes (no device).
//! - `info`: the identification (role, sizes, build hash, timeout) and the status.
//! - `apply CONFIG`: bring the switch to CONFIG, writing only what differs.
//! - `writes CONFIG`: the accesses that program a freshly loaded switch (`apply` on a dry run).
//! - `add-worker`, `remove-worker` (leaf), `add-leaf`, `fail-leaf` (spine), `set-pool`.
//! - `stats [--json] [--watch SECONDS]`: every counter, with rates per second when watching.
//! - `dump [TABLE]`: the pools and their members, or one table's entries, decoded.
//! - `peek ADDR|FIELD`, `poke ADDR|FIELD VALUE`: raw registers (the map's only: the paper
//!   switch's or the JBSQ leaf's, as the switch's `ID` says).
//! - `read TABLE INDEX` / `decode TABLE WORD...`: one entry's accesses / its words named.

mod jbsq_cmd;
mod raw_cmd;
use jbsq_cmd::{BufferChange, JbsqPoolChange, apply_jbsq, check_jbsq, info_jbsq, set_jbsq_pool};
mod serve;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use horus_host_driver::Regs;
use horus_host_driver::access::Map;
use horus_host_driver::device::{Device, DeviceSpec};
use horus_host_driver::driver::{Switch, describe};
use horus_host_driver::jbsq::{self, JbsqDriver};
use horus_model::config::{Config, Role};
use horus_model::fixed::Load;
use horus_model::sched::jbsq::{JbsqLeaf, LeafKind};
use horus_model::sched::{ControlOp, NodeAddr, Scheduler, Stage};
use horus_model::wire::{Endpoint, MacAddr};
use horus_regs::boards::{self, Board};
use horus_regs::readback::{self, RB_WORDS};
use horus_regs::regmap::{self, RegFile};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Program, watch and repair a Horus switch through its registers: on a card, the \
             Verilated RTL, the reference model or a dry run"
)]
struct Cli {
    /// The switch: pci:BDF[,bar=N][,base=ADDR], file:PATH[,base=ADDR], cosim:CONFIG,
    /// model:CONFIG or dry-run[:CONFIG].
    #[arg(long, global = true, env = "HORUS_DEVICE")]
    device: Option<DeviceSpec>,
    /// On the leaf that holds tasks: the file where the host keeps what it set up and which
    /// workers are members (the card cannot give its tables back). apply writes it, add-worker,
    /// remove-worker and serve read and rewrite it; every host process that changes the leaf
    /// names the same file.
    #[arg(long, global = true, env = "HORUS_JBSQ_STATE", value_name = "FILE")]
    jbsq_state: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Debug, Clone)]
struct NodeArgs {
    /// The pool.
    #[arg(long)]
    pool: u16,
    /// The node ID (a worker's at a leaf, a rack's slot at a spine).
    #[arg(long)]
    node: u16,
    /// The node's MAC address.
    #[arg(long)]
    mac: MacAddr,
    /// The node's IPv4 address.
    #[arg(long)]
    ip: std::net::Ipv4Addr,
    /// The node's UDP port.
    #[arg(long, default_value_t = horus_model::wire::HORUS_UDP_PORT)]
    udp_port: u16,
    /// The egress port towards it.
    #[arg(long)]
    port: u8,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Validate a switch configuration and print the control passes that program it.
    Check {
        /// The switch configuration (TOML).
        config: PathBuf,
        /// The board the switch runs on: its ports may be named in CONFIG (`port = "cmac1"`),
        /// and a port it lacks is refused.
        #[arg(long, value_parser = boards::board_named)]
        board: Option<&'static Board>,
    },
    /// The switch's identification and status.
    Info {
        /// Check that the switch runs this Verilog (its BUILD_HASH).
        #[arg(long)]
        verilog: Option<PathBuf>,
    },
    /// Bring the switch to CONFIG, writing only what differs from what it holds.
    Apply {
        config: PathBuf,
        #[arg(long, value_parser = boards::board_named)]
        board: Option<&'static Board>,
    },
    /// The register accesses that program a freshly loaded switch (apply on a dry run).
    Writes {
        config: PathBuf,
        #[arg(long, value_parser = boards::board_named)]
        board: Option<&'static Board>,
    },
    /// Add a worker to a pool of a leaf: it joins the idle list and the sampling range.
    AddWorker {
        #[command(flatten)]
        node: NodeArgs,
        /// On the leaf that holds tasks: the worker's own bound (tasks it may have
        /// outstanding; the pool's `k` otherwise).
        #[arg(long)]
        k: Option<u8>,
    },
    /// Remove a worker from a pool of a leaf: in one control pass it leaves the idle list and
    /// the sampling range; the tasks it still had are reported.
    RemoveWorker {
        #[arg(long)]
        pool: u16,
        #[arg(long)]
        node: u16,
    },
    /// Add a rack (a leaf's workers of a pool) to a pool of a spine.
    AddLeaf {
        #[command(flatten)]
        node: NodeArgs,
        /// The leaf switch's ID (written into dst_id of the tasks sent to the rack).
        #[arg(long)]
        leaf: u16,
        /// The pool's workers in the rack.
        #[arg(long)]
        workers: u16,
    },
    /// Remove every rack of a failed leaf from the spine's pools.
    FailLeaf {
        /// The leaf switch's ID.
        #[arg(long)]
        leaf: u16,
    },
    /// Change a pool's parameters or its capacity (the others keep their values).
    SetPool {
        #[arg(long)]
        pool: u16,
        #[arg(long)]
        link_at: Option<u16>,
        #[arg(long)]
        unlink_at: Option<u16>,
        /// In tasks (a fraction: 0.5).
        #[arg(long)]
        report_delta: Option<f64>,
        #[arg(long)]
        repair_gap_us: Option<u16>,
        /// The pool's slots: its region grows or shrinks in place (not below its nodes).
        #[arg(long)]
        capacity: Option<u16>,
        /// On the leaf that holds tasks: the pool's bound `k` (places a worker), for its members
        /// and the workers added later; with --node, that member's alone. Live: a worker's places
        /// start afresh, and it comes down to the new bound as its running tasks answer.
        #[arg(long)]
        k: Option<u8>,
        /// With --k: the member whose bound changes.
        #[arg(long, requires = "k")]
        node: Option<u16>,
        /// On the leaf that holds tasks: the link's hold after an idle message, microseconds.
        #[arg(long)]
        hold_us: Option<u16>,
        /// On the leaf that holds tasks: the pool's share of the task buffer, in slots. Live:
        /// the pool stops holding tasks (those with no place take its fallback), its held
        /// queue drains through its workers' replies, then its region moves (in place when it
        /// fits, else to the first free slots).
        #[arg(long)]
        buffer_slots: Option<u32>,
        /// With --buffer-slots: the region's first slot, rather than the planned one.
        #[arg(long, requires = "buffer_slots")]
        buffer_base: Option<u32>,
        /// With --buffer-slots: how long the pool's held queue may take to drain, milliseconds.
        #[arg(long, requires = "buffer_slots", default_value_t = 1000)]
        drain_ms: u64,
    },
    /// Every counter; with --watch, every SECONDS with rates per second.
    Stats {
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "SECONDS")]
        watch: Option<f64>,
        /// Stop after this many samples (with --watch).
        #[arg(long)]
        count: Option<u64>,
    },
    /// The configured pools and their members, or every entry of TABLE, decoded.
    Dump {
        /// A table by its name in the stage plan (poolCfg, node, ..., nodeAddr) or number.
        table: Option<String>,
    },
    /// The controller daemon: registers workers, removes silent ones and adds them back, keeps
    /// its membership in a state file, serves /metrics (Prometheus text format) over HTTP.
    Serve {
        /// UDP address where the switch's control-port frames arrive (one Ethernet frame per
        /// datagram).
        #[arg(long, default_value = "0.0.0.0:1234", conflicts_with = "interface")]
        listen: std::net::SocketAddr,
        /// Take the control-port frames from this network interface instead (a card's host
        /// interface, e.g. the OpenNIC driver's netdev) and answer through it: an AF_PACKET
        /// socket, which needs CAP_NET_RAW.
        #[arg(long)]
        interface: Option<String>,
        /// Serve /metrics over HTTP at this address (none by default: the Prometheus port
        /// allocations' 9100-9999 range is taken, 9100 by node_exporter, so the operator picks
        /// one; and nothing listens that was not asked for).
        #[arg(long)]
        metrics: Option<std::net::SocketAddr>,
        /// A worker silent for this long is removed.
        #[arg(long, default_value_t = 1000)]
        timeout_ms: u64,
        /// Egress port of the workers it registers.
        #[arg(long)]
        worker_port: u8,
        /// The membership file (read at start, rewritten after every change).
        #[arg(long)]
        state: Option<PathBuf>,
        /// Apply this configuration before serving.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Take control frames only from hosts of this network (repeatable; added to the
        /// configuration's `[security] allow`). When none is given: loopback and the /24 of the
        /// switch's address and of every address its configuration names.
        #[arg(long, value_name = "CIDR")]
        allow: Vec<horus_model::net::Ipv4Net>,
        /// Control frames carry a keyed MAC (HMAC-SHA-256) with the keys of this file (`ID HEX`
        /// a line, the first signs): frames without a right one are refused.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Read a register (a byte address or a field name).
    Peek { register: String },
    /// Write a register (a byte address or a field name; a field is written into its word).
    Poke { register: String, value: String },
    /// Print the register accesses that read entry INDEX of a table back.
    Read { table: String, index: u16 },
    /// Name the fields of an entry read back (the RB_DATA0.. words, hexadecimal or decimal).
    Decode {
        table: String,
        #[arg(required = true, num_args = 1..=RB_WORDS)]
        words: Vec<String>,
    },
}

/// A table by its name in the stage plan or its number.
fn table(name: &str) -> Result<Stage> {
    if let Ok(i) = name.parse::<usize>() {
        return Stage::ALL.get(i).copied().ok_or_else(|| {
            anyhow::anyhow!(
                "no table {i}: tables are numbered 0..{}",
                Stage::ALL.len() - 1
            )
        });
    }
    Stage::ALL
        .iter()
        .copied()
        .find(|s| s.table_name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no table {name:?}; the tables: {}",
                Stage::ALL.map(|s| s.table_name()).join(", ")
            )
        })
}

fn word(s: &str) -> Result<u32> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.with_context(|| format!("{s:?} is not a 32-bit word"))
}

/// A register by byte address or field name: its address and, for a field, the field.
/// The hardware preset with `cfg`'s table sizes, or why none fits.
fn hardware_preset(cfg: &Config) -> Result<horus_regs::presets::Preset> {
    let p = horus_regs::presets::PRESETS
        .iter()
        .find(|p| p.role == cfg.switch.role && p.sizes() == cfg.sizes)
        .copied();
    p.ok_or_else(|| {
        anyhow::anyhow!(
            "no hardware preset of a {} has the sizes {:?}; the presets: {}",
            cfg.switch.role,
            cfg.sizes,
            horus_regs::presets::PRESETS
                .iter()
                .filter(|p| p.role == cfg.switch.role)
                .map(|p| format!("{} {:?}", p.name, p.sizes()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Loads `config` for the hardware: for `board` when given (its port names, its ports only).
fn load(config: &Path, board: Option<&Board>) -> Result<Config> {
    let cfg = match board {
        Some(b) => Config::from_file_for(config, &b.port_names()),
        None => Config::from_file(config),
    }
    .with_context(|| format!("{}", config.display()))?;
    if cfg.switch.leaf == LeafKind::Jbsq {
        // The leaf that holds tasks: its own map, its own presets.
        horus_regs::jbsq_map::switch_config(&cfg)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{}: not for the hardware", config.display()))?;
        let preset = horus_regs::presets::jbsq_preset_for(&cfg.sizes).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: not for the hardware: no JBSQ leaf's preset has the sizes {:?}; the presets: {}",
                config.display(),
                cfg.sizes,
                horus_regs::presets::JBSQ_PRESETS
                    .iter()
                    .map(|p| {
                        let s = p.sizes();
                        format!("{} ({} pools, {} nodes, {} connections)", p.name, s.pools, s.nodes, s.conn_table)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        JbsqLeaf::from_config_at(&cfg, preset.sizes(), 0)
            .with_context(|| format!("{}: not for the hardware", config.display()))?;
        return Ok(cfg);
    }
    RegFile::switch_config(&cfg)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{}: not for the hardware", config.display()))?;
    hardware_preset(&cfg).with_context(|| format!("{}: not for the hardware", config.display()))?;
    Ok(cfg)
}

fn main() {
    let cli = Cli::parse();
    let mut out = std::io::stdout().lock();
    // Commands print as they go (`stats --watch`); a closed pipe (`| head`) ends them quietly.
    let r = run(
        cli,
        &mut |s: &str| match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Quiet.into()),
            r => Ok(r?),
        },
    );
    if let Err(e) = r {
        if e.downcast_ref::<Quiet>().is_none() {
            eprintln!("horusctl: {e:#}");
            std::process::exit(1);
        }
    }
}

/// The reader went away.
#[derive(Debug)]
struct Quiet;
impl std::fmt::Display for Quiet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "output closed")
    }
}
impl std::error::Error for Quiet {}

pub(crate) type Print<'a> = &'a mut dyn FnMut(&str) -> Result<()>;

/// A switch behind a device: the paper's, or the leaf that holds tasks.
enum Opened {
    Paper(Switch<Device>),
    Jbsq(Box<JbsqDriver<Device>>),
}

impl Opened {
    /// The switch's register map.
    fn map(&self) -> Map {
        match self {
            Opened::Paper(_) => Map::Paper,
            Opened::Jbsq(_) => Map::Jbsq,
        }
    }

    /// The switch's register window.
    fn regs(&mut self) -> &mut Device {
        match self {
            Opened::Paper(sw) => &mut sw.regs,
            Opened::Jbsq(d) => &mut d.regs,
        }
    }
}

/// Opens the switch on `spec` (`apply`: the configuration a dry run stands for), either leaf.
fn open_any(spec: Option<&DeviceSpec>, apply: Option<&Config>) -> Result<Opened> {
    let spec = spec.context(
        "this command needs a switch: --device pci:BDF | cosim:CONFIG | model:CONFIG | dry-run[:CONFIG] (or HORUS_DEVICE)",
    )?;
    let mut dev = Device::open(spec, apply)?;
    let what = Regs::describe(&dev);
    Ok(if jbsq::is_jbsq(&mut dev)? {
        Opened::Jbsq(Box::new(JbsqDriver::open(dev).with_context(|| what)?))
    } else {
        Opened::Paper(Switch::open(dev).with_context(|| what)?)
    })
}

/// Opens the paper switch on `spec`; the leaf that holds tasks is refused, naming what it is.
fn open(spec: Option<&DeviceSpec>, apply: Option<&Config>) -> Result<Switch<Device>> {
    match open_any(spec, apply)? {
        Opened::Paper(sw) => Ok(sw),
        Opened::Jbsq(d) => bail!(
            "{}: the leaf that holds tasks (ID \"HORJ\"), not the paper switch this command or \
             configuration is for (the leaf kind is the configuration's [switch] leaf)",
            Regs::describe(&d.regs)
        ),
    }
}

/// Opens the spine on `spec` for `command` (a spine's command), or says what the switch is.
fn open_spine(spec: Option<&DeviceSpec>, command: &str) -> Result<Switch<Device>> {
    match open_any(spec, None)? {
        Opened::Paper(sw) => {
            need_role(&sw, Role::Spine, command)?;
            Ok(sw)
        }
        Opened::Jbsq(d) => bail!(
            "{command} is for a spine; {} is the leaf that holds tasks",
            Regs::describe(&d.regs)
        ),
    }
}

/// Opens the device on `spec` as the leaf that holds tasks, or `None` when it is a paper switch
/// (then opened again by [`open`]).
fn open_jbsq(
    spec: Option<&DeviceSpec>,
    apply: Option<&Config>,
) -> Result<Option<JbsqDriver<Device>>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let mut dev = Device::open(spec, apply)?;
    if !jbsq::is_jbsq(&mut dev)? {
        return Ok(None);
    }
    let what = Regs::describe(&dev);
    Ok(Some(JbsqDriver::open(dev).with_context(|| what)?))
}

/// The switch on `spec` for `command`, which changes it: a JBSQ leaf with its state file
/// `state`, which it needs.
fn open_kept(
    spec: Option<&DeviceSpec>,
    apply: Option<&Config>,
    state: Option<&Path>,
    command: &str,
) -> Result<Opened> {
    Ok(match open_any(spec, apply)? {
        Opened::Jbsq(d) => {
            let state = state.with_context(|| {
                format!(
                    "{command} on the leaf that holds tasks needs --jbsq-state FILE (or \
                     HORUS_JBSQ_STATE): the card cannot give its tables back, so the host keeps \
                     them there"
                )
            })?;
            Opened::Jbsq(Box::new(d.with_state_file(state)?))
        }
        p => p,
    })
}

/// A dry run's script, then the command's own lines.
fn finish(sw: &Switch<Device>, text: String, print: Print) -> Result<()> {
    finish_script(sw.regs.script(), text, print)
}

fn finish_script(script: Option<&str>, text: String, print: Print) -> Result<()> {
    if let Some(script) = script {
        print(script)?;
        let commented: String = text.lines().map(|l| format!("# {l}\n")).collect();
        return print(&commented);
    }
    print(&text)
}

fn run(cli: Cli, print: Print) -> Result<()> {
    let dev = cli.device.as_ref();
    let jbsq_state = cli.jbsq_state.as_deref();
    let mut out = String::new();
    match cli.cmd {
        Cmd::Read { table: t, index } => read_script(&t, index, print),
        Cmd::Decode { table: t, words } => {
            let stage = table(&t)?;
            let mut w = [0u32; RB_WORDS];
            for (k, s) in words.iter().enumerate() {
                w[k] = word(s)?;
            }
            writeln!(
                out,
                "{}: {}",
                stage.table_name(),
                readback::describe(stage, &w)
            )?;
            print(&out)
        }
        Cmd::Check { config, board } => check(&config, board, print),
        Cmd::Writes { config, board } => {
            let cfg = load(config.as_path(), board)?;
            if cfg.switch.leaf == LeafKind::Jbsq {
                let mut d = open_jbsq(Some(&DeviceSpec::DryRun(None)), Some(&cfg))?
                    .context("a dry run of a JBSQ leaf's configuration is a JBSQ leaf")?;
                d.regs
                    .note(&format!("{}: a freshly loaded JBSQ leaf", config.display()));
                apply_jbsq(&mut d, &cfg, &mut out)?;
                return finish_script(d.regs.script(), out, print);
            }
            let mut sw = open(Some(&DeviceSpec::DryRun(None)), Some(&cfg))?;
            sw.regs
                .note(&format!("{}: a freshly loaded switch", config.display()));
            apply(&mut sw, &cfg, &mut out)?;
            finish(&sw, out, print)
        }
        Cmd::Apply { config, board } => {
            let cfg = load(config.as_path(), board)?;
            if cfg.switch.leaf == LeafKind::Jbsq {
                let Opened::Jbsq(mut d) = open_kept(dev, Some(&cfg), jbsq_state, "apply")? else {
                    bail!(
                        "{}: a configuration of the leaf that holds tasks; the device is not one",
                        config.display()
                    );
                };
                apply_jbsq(&mut d, &cfg, &mut out)?;
                return finish_script(d.regs.script(), out, print);
            }
            let mut sw = open(dev, Some(&cfg))?;
            apply(&mut sw, &cfg, &mut out)?;
            finish(&sw, out, print)
        }
        Cmd::Info { verilog } => match open_jbsq(dev, None)? {
            Some(d) => info_jbsq(d, verilog, print),
            None => info(dev, verilog, print),
        },
        Cmd::AddWorker { node, k } => {
            let mut sw = match open_kept(dev, None, jbsq_state, "add-worker")? {
                Opened::Paper(sw) => sw,
                Opened::Jbsq(mut d) => {
                    let op = add_op(&node, node.node, 1);
                    let ControlOp::AddNode { addr, .. } = op else {
                        unreachable!("add_op makes an AddNode")
                    };
                    d.add_node(node.pool, node.node, k, addr)?;
                    writeln!(out, "{}", describe(&op))?;
                    return finish_script(d.regs.script(), out, print);
                }
            };
            if k.is_some() {
                bail!("--k is a bound of the leaf that holds tasks; this switch is the paper's");
            }
            need_role(&sw, Role::Leaf, "add-worker")?;
            let op = add_op(&node, node.node, 1);
            one_op(&mut sw, op, &mut out)?;
            finish(&sw, out, print)
        }
        Cmd::AddLeaf {
            node,
            leaf,
            workers,
        } => {
            let mut sw = open_spine(dev, "add-leaf")?;
            let op = add_op(&node, leaf, workers);
            one_op(&mut sw, op, &mut out)?;
            finish(&sw, out, print)
        }
        Cmd::RemoveWorker { pool, node } => {
            let mut sw = match open_kept(dev, None, jbsq_state, "remove-worker")? {
                Opened::Paper(sw) => sw,
                Opened::Jbsq(mut d) => {
                    d.remove_node(pool, node)?;
                    writeln!(
                        out,
                        "{}\nthe pool's held tasks stay held for its other workers",
                        describe(&ControlOp::RemoveNode { pool, node })
                    )?;
                    return finish_script(d.regs.script(), out, print);
                }
            };
            need_role(&sw, Role::Leaf, "remove-worker")?;
            // What it still had: its load entry, corrected by its drift.
            let tasks = outstanding(&mut sw, node)?;
            one_op(&mut sw, ControlOp::RemoveNode { pool, node }, &mut out)?;
            writeln!(
                out,
                "node {node} had {tasks} task(s) outstanding (its load entry)"
            )?;
            finish(&sw, out, print)
        }
        Cmd::FailLeaf { leaf } => {
            let mut sw = open_spine(dev, "fail-leaf")?;
            for op in sw.fail_leaf(leaf)? {
                writeln!(out, "{}", describe(&op))?;
            }
            finish(&sw, out, print)
        }
        Cmd::SetPool {
            pool,
            link_at,
            unlink_at,
            report_delta,
            repair_gap_us,
            capacity,
            k,
            node,
            hold_us,
            buffer_slots,
            buffer_base,
            drain_ms,
        } => {
            let mut sw = match open_kept(dev, None, jbsq_state, "set-pool")? {
                Opened::Paper(sw) => sw,
                Opened::Jbsq(mut d) => {
                    if capacity.is_some() {
                        bail!(
                            "on the leaf that holds tasks a pool's regions (--capacity) change \
                             with its configuration on a freshly loaded card; live is planned"
                        );
                    }
                    let change = JbsqPoolChange {
                        k,
                        node,
                        hold_us,
                        link_at,
                        unlink_at,
                        report_delta,
                        repair_gap_us,
                        buffer: buffer_slots.map(|slots| BufferChange {
                            slots,
                            base: buffer_base,
                            drain: std::time::Duration::from_millis(drain_ms),
                        }),
                    };
                    set_jbsq_pool(&mut d, pool, change, &mut out)?;
                    return finish_script(d.regs.script(), out, print);
                }
            };
            if k.is_some() || hold_us.is_some() || buffer_slots.is_some() {
                bail!(
                    "--k, --hold-us and --buffer-slots are the leaf that holds tasks'; this \
                     switch is the paper's"
                );
            }
            set_pool(
                &mut sw,
                pool,
                (link_at, unlink_at, report_delta, repair_gap_us, capacity),
                print,
            )
        }
        Cmd::Stats { json, watch, count } => match open_jbsq(dev, None)? {
            Some(mut d) => stats(&mut d, json, watch, count, print),
            None => {
                let mut sw = open(dev, None)?;
                stats(&mut sw, json, watch, count, print)
            }
        },
        Cmd::Dump { table: t } => match open_kept(dev, None, jbsq_state, "dump")? {
            Opened::Jbsq(d) => {
                if let Some(t) = t {
                    bail!(
                        "{t}: the leaf that holds tasks reads back a node's member slot only; \
                         `dump` without a table prints the pools and members its state file \
                         holds, each member's slot read from the card"
                    );
                }
                out += &d.dump();
                finish_script(d.regs.script(), out, print)
            }
            Opened::Paper(sw) => dump(sw, t, print),
        },
        Cmd::Serve {
            listen,
            interface,
            metrics,
            timeout_ms,
            worker_port,
            state,
            config,
            allow,
            key_file,
        } => {
            let cfg = config.as_deref().map(|c| load(c, None)).transpose()?;
            let port = match interface {
                Some(name) => serve::Port::Interface(name),
                None => serve::Port::Udp(listen),
            };
            let opts = serve::Opts {
                metrics,
                timeout_ms,
                worker_port,
                state,
                allow,
                key_file,
            };
            let mut sw = match open_kept(dev, cfg.as_ref(), jbsq_state, "serve")? {
                Opened::Paper(sw) => sw,
                Opened::Jbsq(mut d) => {
                    if let Some(cfg) = &cfg {
                        if d.is_set_up_as(cfg)? {
                            writeln!(
                                out,
                                "the leaf is set up from this configuration (its state file): nothing \
                             written"
                            )?;
                        } else {
                            apply_jbsq(&mut d, cfg, &mut out)?;
                        }
                        print(&out)?;
                    }
                    return serve::run(&mut *d, port, cfg.as_ref(), &opts, print);
                }
            };
            if let Some(cfg) = &cfg {
                apply(&mut sw, cfg, &mut out)?;
                print(&out)?;
            }
            serve::run(&mut sw, port, cfg.as_ref(), &opts, print)
        }
        Cmd::Peek { register: r } => raw_cmd::peek(dev, &r, print),
        Cmd::Poke { register: r, value } => raw_cmd::poke(dev, &r, &value, print),
    }
}

/// `set-pool`'s optional changes: link at, unlink at, report delta, repair gap, capacity.
type PoolChange = (
    Option<u16>,
    Option<u16>,
    Option<f64>,
    Option<u16>,
    Option<u16>,
);

/// `read`: the accesses that read an entry back, as a script.
fn read_script(t: &str, index: u16, print: Print) -> Result<()> {
    let mut out = String::new();
    let stage = table(t)?;
    let regs = RegFile::read_entry(stage, index);
    let op = regmap::fields::CTL_READ_ENTRY.word;
    let at = regmap::fields::CTL_INDEX.word;
    writeln!(out, "# read {}[{index}]", stage.table_name())?;
    for w in [op, at] {
        writeln!(out, "write 0x{:03x} 0x{:08x}", 4 * w, regs.words[w])?;
    }
    let go = regmap::fields::CTL_GO.byte_address();
    let rb = regmap::fields::RB_VALID.byte_address();
    writeln!(
        out,
        "write 0x{go:03x} 0x00000001\nwait  0x{go:03x} 0x00000001 0x00000000  # until CTL_GO reads 0: the read entered\nwait  0x{rb:03x} 0x00000002 0x00000000  # until RB_BUSY reads 0: the read left the stages"
    )?;
    writeln!(
        out,
        "read 0x{:03x}  # RB_VALID (bit 0): 1 when the table has this entry",
        regmap::fields::RB_VALID.byte_address()
    )?;
    for k in 0..RB_WORDS {
        writeln!(
            out,
            "read 0x{:03x}  # RB_DATA{k}",
            regmap::rb_data(k).byte_address()
        )?;
    }
    print(&out)
}

/// `check`: a configuration validated by the model, with its control passes.
fn check(config: &Path, board: Option<&'static Board>, print: Print) -> Result<()> {
    let mut out = String::new();
    let cfg = load(config, board)?;
    if cfg.switch.leaf == LeafKind::Jbsq {
        check_jbsq(config, &cfg, board, print)?;
        return Ok(());
    }
    let preset = hardware_preset(&cfg)?;
    let ops = horus_model::sched::config_ops(&cfg);
    // Run them through the model: what the model refuses, the hardware would too.
    let (sched, signals) = Scheduler::from_config(&cfg, 1)?;
    writeln!(
        out,
        "{}: {} switch {}, {} pool(s)",
        config.display(),
        cfg.switch.role,
        cfg.switch.id,
        cfg.pools.len()
    )?;
    for op in &ops {
        writeln!(out, "  {}", describe(op))?;
    }
    writeln!(
        out,
        "{} control passes; {} startup message(s) to spines",
        sched.counters().control_passes,
        signals.len()
    )?;
    writeln!(
        out,
        "hardware: {} (rtl-gen --preset {})",
        preset.module_name(),
        preset.name
    )?;
    if let Some(b) = board {
        writeln!(out, "{}", board_line(b))?;
    }
    print(&out)
}

/// `info`: the switch's identity and status, and whether it runs `verilog`.
fn info(dev: Option<&DeviceSpec>, verilog: Option<PathBuf>, print: Print) -> Result<()> {
    let mut out = String::new();
    let mut sw = open(dev, None)?;
    let i = sw.ident;
    writeln!(out, "device: {}", Regs::describe(&sw.regs))?;
    writeln!(
        out,
        "switch: {}, {}",
        i.role,
        i.preset()
            .map_or("no preset of this horusctl".into(), |p| format!(
                "preset {} ({})",
                p.name,
                p.module_name()
            ))
    )?;
    let s = i.sizes();
    writeln!(
        out,
        "tables: {} pools, {} nodes, {} connections (timeout {} us)",
        s.pools, s.nodes, s.conn_table, i.conn_timeout_us
    )?;
    writeln!(
        out,
        "build: hash {:#010x}{}, register map version {}",
        i.build_hash,
        if i.build_hash == 0 {
            " (no Verilog: a model)"
        } else {
            ""
        },
        i.map_version
    )?;
    let st = sw.status()?;
    info_tail(&mut sw.regs, st, i.build_hash, verilog, &mut out)?;
    finish(&sw, out, print)
}

/// `check`'s line for the board a configuration was checked against.
fn board_line(b: &Board) -> String {
    format!("board: {} ({}), ports {}", b.name, b.title, b.port_list())
}

fn info_tail(
    regs: &mut Device,
    st: u32,
    build_hash: u32,
    verilog: Option<PathBuf>,
    out: &mut String,
) -> Result<()> {
    writeln!(
        out,
        "status: control pass {}, {} pass(es) in flight{}",
        if st & 1 == 1 { "waiting" } else { "idle" },
        st >> 8 & 0xff,
        if st & 2 == 2 {
            ", OVERFLOW (the egress lost a frame)"
        } else {
            ""
        }
    )?;
    let id = regs.read(regmap::fields::SWITCH_ID.byte_address() as u32)?;
    writeln!(out, "switch id: {}", id & 0xffff)?;
    if let Some(v) = verilog {
        let text =
            std::fs::read_to_string(&v).with_context(|| format!("reading {}", v.display()))?;
        let h =
            horus_regs::identity::build_hash(&text).with_context(|| format!("{}", v.display()))?;
        if h != build_hash {
            bail!(
                "the switch runs build {build_hash:#010x}; {} is build {h:#010x}",
                v.display()
            );
        }
        writeln!(out, "runs {} (build {h:#010x})", v.display())?;
    }
    Ok(())
}

/// `set-pool`: a configured pool's parameters changed, the others kept.
fn set_pool(
    sw: &mut Switch<Device>,
    pool: u16,
    (link_at, unlink_at, report_delta, repair_gap_us, capacity): PoolChange,
    print: Print,
) -> Result<()> {
    let mut out = String::new();
    let m = sw.state(&[])?;
    let cfg = m
        .tables()
        .pools
        .get(usize::from(pool))
        .map(|r| r.cfg)
        .filter(|c| c.valid)
        .with_context(|| format!("pool {pool} is not configured on this switch"))?;
    let mut params = cfg.params;
    params.link_at = link_at.unwrap_or(params.link_at);
    params.unlink_at = unlink_at.unwrap_or(params.unlink_at);
    params.repair_gap_us = repair_gap_us.unwrap_or(params.repair_gap_us);
    if let Some(d) = report_delta {
        params.report_delta = report_delta_arg(d)?;
    }
    let capacity = capacity.unwrap_or(cfg.capacity);
    let op = ControlOp::SetPoolParams {
        pool,
        params,
        capacity,
    };
    one_op(sw, op, &mut out)?;
    finish(sw, out, print)
}

/// `dump`: a table's entries, or every configured pool.
fn dump(mut sw: Switch<Device>, t: Option<String>, print: Print) -> Result<()> {
    let mut out = String::new();
    match t {
        Some(t) => {
            let stage = table(&t)?;
            let mut i = 0u32;
            while i < 1 << 16 {
                let Some(w) = sw.read_entry(stage, i as u16)? else {
                    break;
                };
                writeln!(
                    out,
                    "{}[{i}] {}",
                    stage.table_name(),
                    readback::describe(stage, &w)
                )?;
                i += 1;
            }
        }
        None => dump_pools(&mut sw, &mut out)?,
    }
    finish(&sw, out, print)
}

fn need_role(sw: &Switch<Device>, role: Role, cmd: &str) -> Result<()> {
    if sw.ident.role != role {
        bail!("{cmd} is for a {role}; this switch is a {}", sw.ident.role);
    }
    Ok(())
}

fn add_op(n: &NodeArgs, dst_id: u16, workers: u16) -> ControlOp {
    ControlOp::AddNode {
        pool: n.pool,
        node: n.node,
        addr: NodeAddr {
            endpoint: Endpoint {
                mac: n.mac,
                ip: n.ip,
                udp_port: n.udp_port,
            },
            port: n.port,
            dst_id,
        },
        workers,
    }
}

/// Runs one operation against the switch's state as read back now.
fn one_op(sw: &mut Switch<Device>, op: ControlOp, out: &mut String) -> Result<()> {
    let node = match op {
        ControlOp::AddNode { node, .. } | ControlOp::RemoveNode { node, .. } => vec![node],
        _ => vec![],
    };
    let mut m = sw.state(&node)?;
    sw.control(&mut m, op)?;
    writeln!(out, "{}", describe(&op))?;
    Ok(())
}

/// A node's outstanding tasks as the switch counts them (`loadList1` corrected by `driftList1`).
fn outstanding(sw: &mut Switch<Device>, node: u16) -> Result<u16> {
    let load = sw.read_entry(Stage::Load1, node)?.map_or(0, |w| w[0]);
    let drift = sw.read_entry(Stage::Drift1, node)?.map_or(0, |w| w[0]);
    Ok(Load(load)
        .corrected(horus_model::fixed::Drift(drift as i32))
        .integer())
}

fn apply(sw: &mut Switch<Device>, cfg: &Config, out: &mut String) -> Result<()> {
    let a = sw.apply(cfg)?;
    writeln!(
        out,
        "{} switch register word(s) written, {} control pass(es)",
        a.words.len(),
        a.ops.len()
    )?;
    for op in &a.ops {
        writeln!(out, "  {}", describe(op))?;
    }
    Ok(())
}

fn dump_pools(sw: &mut Switch<Device>, out: &mut String) -> Result<()> {
    let m = sw.state(&[])?;
    let t = m.tables();
    let mut any = false;
    for (pool, row) in t.pools.iter().enumerate() {
        let c = row.cfg;
        if !c.valid {
            continue;
        }
        any = true;
        writeln!(
            out,
            "pool {pool}: slots [{}, {}), {} member(s), link at {} unlink at {}, report delta {}, repair gap {} us{}",
            c.base,
            c.base + c.capacity,
            c.n,
            c.params.link_at,
            c.params.unlink_at,
            c.params.report_delta.to_f64(),
            c.params.repair_gap_us,
            c.spine.map_or(String::new(), |s| format!(
                ", spine {} as node {}",
                s.id, s.node
            ))
        )?;
        for slot in c.base..c.base + c.n {
            let r = t.members1[usize::from(slot)];
            let a = t.nodes[usize::from(r.node)].addr;
            match a {
                Some(a) => writeln!(
                    out,
                    "  node {}: {} {} udp {} port {} dst_id {}, factor {}",
                    r.node,
                    a.addr.endpoint.mac,
                    a.addr.endpoint.ip,
                    a.addr.endpoint.udp_port,
                    a.addr.port,
                    a.addr.dst_id,
                    r.factor.to_f64()
                )?,
                None => writeln!(out, "  node {}: no address", r.node)?,
            }
        }
    }
    if !any {
        writeln!(out, "no pool configured")?;
    }
    Ok(())
}

/// `--report-delta D` as a load: positive and within 16.16 bits.
fn report_delta_arg(d: f64) -> Result<Load> {
    Load::from_f64(d)
        .filter(|l| l.0 > 0 && d < 65536.0)
        .with_context(|| {
            format!("--report-delta {d}: not a positive load of 16.16 bits (1/65536 to 65535)")
        })
}

/// What `stats` reads of a switch, whichever it is.
trait Counted {
    fn counters(&mut self) -> horus_host_driver::driver::Result<Vec<(&'static str, u32)>>;
    fn status(&mut self) -> horus_host_driver::driver::Result<u32>;
    fn script(&self) -> Option<&str>;
}

impl Counted for Switch<Device> {
    fn counters(&mut self) -> horus_host_driver::driver::Result<Vec<(&'static str, u32)>> {
        Switch::counters(self)
    }
    fn status(&mut self) -> horus_host_driver::driver::Result<u32> {
        Switch::status(self)
    }
    fn script(&self) -> Option<&str> {
        self.regs.script()
    }
}

fn stats(
    sw: &mut impl Counted,
    json: bool,
    watch: Option<f64>,
    count: Option<u64>,
    print: Print,
) -> Result<()> {
    let period = match watch {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--watch {s}: the period must be a positive number of seconds"),
        None => None,
    };
    let samples = if period.is_some() {
        count.unwrap_or(u64::MAX)
    } else {
        1
    };
    let mut last: Option<(Instant, Vec<(&'static str, u32)>)> = None;
    for k in 0..samples {
        if k > 0 {
            std::thread::sleep(period.expect("watching"));
        }
        let now = Instant::now();
        let c = sw.counters()?;
        let st = sw.status()?;
        // Counters wrap at 2^32: a rate is the wrapping difference.
        let rates: Option<Vec<f64>> = last.as_ref().map(|(t, prev)| {
            let dt = now.duration_since(*t).as_secs_f64();
            c.iter()
                .zip(prev)
                .map(|((_, v), (_, p))| f64::from(v.wrapping_sub(*p)) / dt)
                .collect()
        });
        let mut text = String::new();
        if json {
            let mut o = serde_json::Map::new();
            for (n, v) in &c {
                o.insert(n.to_lowercase(), (*v).into());
            }
            o.insert("overflow".into(), (st & 2 == 2).into());
            o.insert("in_flight".into(), (st >> 8 & 0xff).into());
            if let Some(r) = &rates {
                let per: serde_json::Map<String, serde_json::Value> = c
                    .iter()
                    .zip(r)
                    .map(|((n, _), r)| (n.to_lowercase(), (*r).into()))
                    .collect();
                o.insert("per_second".into(), per.into());
            }
            writeln!(text, "{}", serde_json::Value::Object(o))?;
        } else {
            if period.is_some() {
                writeln!(text, "# sample {}", k + 1)?;
            }
            for (i, (n, v)) in c.iter().enumerate() {
                match &rates {
                    Some(r) => writeln!(text, "{n:<28} {v:>12} {:>12.1}/s", r[i])?,
                    None => writeln!(text, "{n:<28} {v:>12}")?,
                }
            }
            writeln!(
                text,
                "{:<28} {:>12}\n{:<28} {:>12}",
                "OVERFLOW",
                st >> 1 & 1,
                "IN_FLIGHT",
                st >> 8 & 0xff
            )?;
        }
        match sw.script() {
            Some(_) if k + 1 == samples => finish_script(sw.script(), text, print)?,
            Some(_) => {}
            None => print(&text)?,
        }
        last = Some((now, c));
    }
    Ok(())
}
