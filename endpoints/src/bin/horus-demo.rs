//! `horus-demo`: the whole Horus system on this machine (`horus_endpoints::demo`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use horus_endpoints::client::Policy;
use horus_endpoints::demo::{self, DemoOpts, Topology};
use horus_endpoints::switch::Engine;

/// Starts a spine, leaves with their controllers, worker slots in every rack and clients on
/// loopback addresses; runs Horus and then random placement at each load; prints and plots the
/// tails side by side; stops every process it started.
#[derive(Parser)]
#[command(name = "horus-demo", version)]
struct Args {
    #[arg(long, default_value_t = 2)]
    racks: u16,
    /// Worker slots per rack.
    #[arg(long, default_value_t = 8)]
    workers: u16,
    #[arg(long, default_value_t = 2)]
    clients: u16,
    #[arg(long, value_enum, default_value = "model")]
    engine: Engine,
    #[arg(long, value_delimiter = ',', default_value = "0.5,0.9")]
    loads: Vec<f64>,
    /// The simulator's workload names: exp, bimodal, trimodal, ...
    #[arg(long, default_value = "exp")]
    workload: String,
    /// Multiply every service time by this (1: the paper's times).
    #[arg(long, default_value_t = 10.0)]
    scale: f64,
    /// Seconds per run.
    #[arg(long, default_value_t = 5.0)]
    duration_s: f64,
    #[arg(long, default_value = "results/demo")]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How long each switch polls its socket after the last frame before it sleeps.
    #[arg(long, default_value_t = 0)]
    spin_us: u64,
    /// Each switch writes every frame it takes and sends to a pcap file in --out (spine.pcap,
    /// leaf1.pcap, ...).
    #[arg(long)]
    capture: bool,
    /// The leaves: `horus` (the paper's) or `jbsq`, holding tasks (then only the Horus policy
    /// runs: a leaf that holds tasks does not place NEW_TASK_RANDOM).
    #[arg(long, value_enum, default_value = "horus")]
    leaf: LeafArg,
    /// With `--leaf jbsq`: places (tasks outstanding) a worker.
    #[arg(long, default_value_t = 2)]
    k: u8,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LeafArg {
    Horus,
    Jbsq,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("horus-demo: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let a = Args::parse();
    anyhow::ensure!(
        a.loads.iter().all(|l| l.is_finite() && *l > 0.0),
        "--loads must be positive"
    );
    anyhow::ensure!(a.k >= 1, "--k must be at least 1");
    let o = DemoOpts {
        topo: Topology::new(demo::fresh_net(), a.racks, a.workers)?,
        clients: a.clients,
        engine: a.engine,
        loads: a.loads,
        policies: match a.leaf {
            LeafArg::Horus => vec![Policy::Horus, Policy::Random],
            LeafArg::Jbsq => vec![Policy::Horus],
        },
        workload: a.workload,
        scale: a.scale,
        duration: Duration::try_from_secs_f64(a.duration_s)?,
        out: a.out.clone(),
        seed: a.seed,
        spin_us: a.spin_us,
        capture: a.capture,
        jbsq: (a.leaf == LeafArg::Jbsq).then_some(a.k),
    };
    demo::run(&o, |s| println!("{s}"))?;
    println!(
        "wrote {}, {} and {}",
        a.out.join("demo.json").display(),
        a.out.join("demo-p99.svg").display(),
        a.out.join("demo-cdf.svg").display()
    );
    Ok(())
}
