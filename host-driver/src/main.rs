//! `horusctl`: the host side of a Horus scheduler.
//!
//! It turns a switch configuration into the control passes that program the scheduler's tables
//! (the same passes the reference model runs, `horus_model::sched::ControlOp`), and will issue them
//! through the pipeline's AXI4-Lite register map and read its counters once the hardware exists.
//! Today: `horusctl check CONFIG` validates a configuration and prints the control passes it means.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use horus_model::config::Config;
use horus_model::sched::{ControlOp, Scheduler};

#[derive(Parser, Debug)]
#[command(version, about = "Configure a Horus scheduler and read its counters")]
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
    },
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
            "configure pool {pool}: slots [{base}, {}), link at {} unlink at {}, report delta {}{}",
            base + capacity,
            params.link_at,
            params.unlink_at,
            params.report_delta,
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
    match Cli::parse().cmd {
        Cmd::Check { config } => {
            let cfg =
                Config::from_file(&config).with_context(|| format!("{}", config.display()))?;
            let ops = horus_model::sched::config_ops(&cfg);
            // Run them through the model: what the model refuses, the hardware would too.
            let (sched, signals) = Scheduler::from_config(&cfg, 1)?;
            println!(
                "{}: {} switch {}, {} pool(s)",
                config.display(),
                cfg.switch.role,
                cfg.switch.id,
                cfg.pools.len()
            );
            for op in &ops {
                println!("  {}", describe(op));
            }
            println!(
                "{} control passes; {} startup message(s) to spines",
                sched.counters().control_passes,
                signals.len()
            );
            Ok(())
        }
    }
}
