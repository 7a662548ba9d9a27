//! `horusctl`: the host side of a Horus scheduler.
//!
//! It turns a switch configuration into the control passes that program the scheduler's tables
//! (the same passes the reference model runs, `horus_model::sched::ControlOp`) and into the
//! AXI4-Lite register writes that issue them (`horus_pipeline::regmap`). It accesses no device
//! itself: it prints the accesses for a driver script or a memory-mapped I/O tool to make, and
//! decodes words read; it does not read the counters.
//!
//! - `horusctl check CONFIG [--board B]` validates a configuration, for the model and for the
//!   hardware (a size preset with its table sizes, at most four spines; with `--board`, ports
//!   the board has, which CONFIG may name: `port = "cmac1"`), and prints the control passes.
//! - `horusctl writes CONFIG` prints the register writes that configure a freshly loaded switch,
//!   one per line (`write ADDR VALUE`, and `wait-idle` where software must wait for `CTL_BUSY` to
//!   read 0), for a driver script or a memory-mapped I/O tool.
//! - `horusctl read TABLE INDEX` prints the register accesses that read one table entry back
//!   (`CTL_READ_ENTRY`; `wait-read` where software must wait for `RB_BUSY` to read 0), and
//!   `horusctl decode TABLE WORD...` names the fields of the `RB_DATA*` words read.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use horus_model::config::Config;
use horus_model::sched::{ControlOp, Scheduler, Stage};
use horus_pipeline::board::boards::{self, Board};
use horus_pipeline::readback::{self, RB_WORDS};
use horus_pipeline::regmap::{self, RegFile};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Check a Horus switch configuration and print the register accesses that program a \
             switch or read a table entry back"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
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
    /// Print the AXI4-Lite register writes that program a freshly loaded switch.
    Writes {
        /// The switch configuration (TOML).
        config: PathBuf,
        /// The board the switch runs on (as for `check`).
        #[arg(long, value_parser = boards::board_named)]
        board: Option<&'static Board>,
    },
    /// Print the register accesses that read entry INDEX of a table back.
    Read {
        /// The table: its name in the stage plan (poolCfg, node, ..., nodeAddr) or number.
        table: String,
        index: u16,
    },
    /// Name the fields of an entry read back (the RB_DATA0.. words, hexadecimal or decimal).
    Decode {
        /// The table: its name in the stage plan or number.
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

/// The hardware preset with `cfg`'s table sizes, or why none fits.
fn hardware_preset(cfg: &Config) -> Result<horus_pipeline::presets::Preset> {
    let p = horus_pipeline::presets::PRESETS
        .iter()
        .find(|p| p.role == cfg.switch.role && p.sizes() == cfg.sizes)
        .copied();
    p.ok_or_else(|| {
        anyhow::anyhow!(
            "no hardware preset of a {} has the sizes {:?}; the presets: {}",
            cfg.switch.role,
            cfg.sizes,
            horus_pipeline::presets::PRESETS
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
    RegFile::switch_config(&cfg)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{}: not for the hardware", config.display()))?;
    hardware_preset(&cfg).with_context(|| format!("{}: not for the hardware", config.display()))?;
    Ok(cfg)
}

fn describe(op: &ControlOp) -> String {
    match op {
        ControlOp::ConfigurePool {
            pool,
            base,
            capacity,
            params,
            spine,
        } => format!(
            "configure pool {pool}: slots [{base}, {}), link at {} unlink at {}, report delta {}, repair gap {} us{}",
            base + capacity,
            params.link_at,
            params.unlink_at,
            params.report_delta,
            params.repair_gap_us,
            spine.map_or(String::new(), |s| format!(
                ", spine {} as node {}",
                s.id, s.node
            ))
        ),
        ControlOp::SetPoolParams { pool, .. } => format!("set parameters of pool {pool}"),
        ControlOp::AddNode {
            pool,
            node,
            addr,
            workers,
        } => format!(
            "add node {node} to pool {pool}: {} {} udp {} port {} dst_id {} ({workers} worker(s))",
            addr.endpoint.mac, addr.endpoint.ip, addr.endpoint.udp_port, addr.port, addr.dst_id
        ),
        ControlOp::RemoveNode { pool, node } => format!("remove node {node} from pool {pool}"),
    }
}

fn main() -> Result<()> {
    let out = run(Cli::parse().cmd)?;
    // A closed pipe (`horusctl writes CONFIG | head`) ends the output quietly.
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// What `cmd` prints.
fn run(cmd: Cmd) -> Result<String> {
    let mut out = String::new();
    match cmd {
        Cmd::Read { table: t, index } => {
            let stage = table(&t)?;
            let regs = RegFile::read_entry(stage, index);
            let op = regmap::field("CTL_READ_ENTRY").word;
            let at = regmap::field("CTL_INDEX").word;
            writeln!(out, "# read {}[{index}]", stage.table_name())?;
            for w in [op, at] {
                writeln!(out, "write 0x{:03x} 0x{:08x}", 4 * w, regs.words[w])?;
            }
            writeln!(
                out,
                "write 0x{:03x} 0x00000001\nwait-read",
                regmap::field("CTL_GO").byte_address()
            )?;
            writeln!(
                out,
                "read 0x{:03x}  # RB_VALID (bit 0): 1 when the table has this entry",
                regmap::field("RB_VALID").byte_address()
            )?;
            for k in 0..RB_WORDS {
                writeln!(
                    out,
                    "read 0x{:03x}  # RB_DATA{k}",
                    regmap::field(&format!("RB_DATA{k}")).byte_address()
                )?;
            }
        }
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
        }
        Cmd::Writes { config, board } => {
            let cfg = load(config.as_path(), board)?;
            let regs = RegFile::switch_config(&cfg).map_err(anyhow::Error::msg)?;
            writeln!(out, "# {}: the switch's registers", config.display())?;
            for w in regmap::switch_words() {
                writeln!(out, "write 0x{:03x} 0x{:08x}", 4 * w, regs.words[w])?;
            }
            // The host's values come from the state before each operation: run them in the model.
            let mut bare = cfg.clone();
            bare.pools.clear();
            let (mut sched, _) = Scheduler::from_config(&bare, 1)?;
            let go = regmap::field("CTL_GO").byte_address();
            for op in horus_model::sched::config_ops(&cfg) {
                writeln!(out, "# {}", describe(&op))?;
                let regs = RegFile::control(&sched, &op);
                for w in regmap::control_words() {
                    writeln!(out, "write 0x{:03x} 0x{:08x}", 4 * w, regs.words[w])?;
                }
                writeln!(out, "write 0x{go:03x} 0x00000001\nwait-idle")?;
                sched.control(op)?;
            }
        }
        Cmd::Check { config, board } => {
            let cfg = load(config.as_path(), board)?;
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
                writeln!(
                    out,
                    "board: {} ({}), ports {}",
                    b.name,
                    b.title,
                    b.port_list()
                )?;
            }
        }
    }
    Ok(out)
}
