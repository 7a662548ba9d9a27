//! `horus-client`: an open-loop load generator through a Horus scheduler
//! (`horus_endpoints::client`).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Parser;
use horus_endpoints::client::{self, ClientConfig, Policy};
use horus_endpoints::demo::{ClientOutput, scaled};
use horus_endpoints::link;
use horus_workload::service::ServiceTime;

/// Sends tasks to a pool through a scheduler at Poisson arrival times and measures their
/// response times: a progress line each second, a summary at the end, the results as JSON and the
/// response-time CDF as SVG.
#[derive(Parser)]
#[command(name = "horus-client", version)]
struct Args {
    /// The scheduler's address (a spine or a leaf; UDP port 1234).
    #[arg(long)]
    scheduler: Ipv4Addr,
    /// This client's address (UDP port 1234).
    #[arg(long)]
    ip: Ipv4Addr,
    #[arg(long)]
    pool: u16,
    #[arg(long, default_value_t = 1)]
    client_id: u16,
    /// Tasks per second.
    #[arg(long, conflicts_with_all = ["load", "workers"])]
    rate: Option<f64>,
    /// Load as a fraction of the pool's capacity (with --workers): rate = load x workers / mean
    /// service time.
    #[arg(long, requires = "workers")]
    load: Option<f64>,
    #[arg(long)]
    workers: Option<u32>,
    /// Service times asked of the workers (run_ns): exp, bimodal, trimodal, rocksdb-50-50,
    /// rocksdb-90-10, tpcc, trace:PATH.
    #[arg(long, default_value = "exp")]
    service: String,
    /// Multiply every service time by this.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// How long to send (default 5 s; with --trace, until its last task).
    #[arg(long)]
    duration_s: Option<f64>,
    /// Arrival times (and optionally service times) from a file instead of Poisson: per line
    /// ARRIVAL_US [SERVICE_US], microseconds from the start.
    #[arg(long, conflicts_with_all = ["rate", "load"])]
    trace: Option<PathBuf>,
    /// Believe answers only from hosts of this network (repeatable: the switches that deliver
    /// them; over the kernel's UDP, the workers). Default: loopback and the scheduler's /24,
    /// any host over the kernel's UDP. Others are counted as forged.
    #[arg(long, value_name = "CIDR")]
    allow: Vec<horus_model::net::Ipv4Net>,
    /// horus: NEW_TASK; random: NEW_TASK_RANDOM.
    #[arg(long, value_enum, default_value = "horus")]
    policy: Policy,
    /// Packets per task.
    #[arg(long, default_value_t = 1)]
    packets: u32,
    /// How long to wait for the last answers.
    #[arg(long, default_value_t = 1000)]
    drain_ms: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the report and the histogram's buckets here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the response-time CDF here (SVG).
    #[arg(long)]
    cdf: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    quiet: bool,
    /// frames: Ethernet frames to the scheduler's socket (a software switch); kernel: UDP
    /// datagrams through the kernel (a network with a card or a Tofino on the path).
    #[arg(long, value_enum, default_value = "frames")]
    transport: link::Transport,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("horus-client: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let a = Args::parse();
    if !(a.scale.is_finite() && a.scale > 0.0) {
        bail!("--scale must be positive, got {}", a.scale);
    }
    let service = scaled(&ServiceTime::named(&a.service)?, a.scale);
    let trace = a
        .trace
        .as_ref()
        .map(|p| -> Result<_> {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))?;
            client::read_trace(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
        })
        .transpose()?;
    let trace_end = trace.as_ref().map(|t| t.last().map_or(0.0, |l| l.at));
    let rate = match (a.rate, a.load, a.workers) {
        _ if trace.is_some() => {
            let t = trace.as_ref().expect("a trace");
            t.len() as f64 / trace_end.unwrap_or(0.0).max(1e-6)
        }
        (Some(r), _, _) => r,
        (None, Some(l), Some(w)) => {
            if !(l.is_finite() && l > 0.0) || w == 0 {
                bail!("--load must be positive and --workers at least 1");
            }
            l * f64::from(w) / (service.mean_ns() / 1e9)
        }
        _ => bail!("give --rate, or --load with --workers"),
    };
    // A trace runs through its last task.
    let duration_s = a
        .duration_s
        .unwrap_or_else(|| trace_end.map_or(5.0, |e| e + 1e-6));
    if !(0.0..=86_400.0).contains(&duration_s) {
        bail!("--duration-s must be between 0 and a day, got {duration_s}");
    }
    let cfg = ClientConfig {
        me: link::host(a.ip),
        scheduler: link::host(a.scheduler),
        pool: a.pool,
        client_id: a.client_id,
        rate,
        duration: Duration::from_secs_f64(duration_s),
        service,
        policy: a.policy,
        packets: a.packets,
        seed: a.seed,
        drain: Duration::from_millis(a.drain_ms),
        answers_from: (!a.allow.is_empty())
            .then(|| horus_host_driver::security::Allow::new(a.allow.clone())),
        transport: a.transport,
        trace,
    };
    let quiet = a.quiet;
    let (r, h) = client::run(&cfg, |p| {
        if !quiet {
            eprintln!("{p}");
        }
    })?;
    println!(
        "{} tasks sent ({:.0}/s of {:.0}/s offered), {} answered, {} lost, {} duplicate(s), {} forged; response p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
        r.sent,
        r.sent_rate,
        r.offered_rate,
        r.answered,
        r.lost,
        r.duplicates,
        r.forged,
        r.p50_us,
        r.p99_us,
        r.p999_us,
        r.max_us
    );
    if let Some(p) = &a.json {
        std::fs::write(
            p,
            serde_json::to_string_pretty(&ClientOutput::new(&r, &h)?)?,
        )?;
    }
    if let Some(p) = &a.cdf {
        client::plot_cdf(
            p,
            "response time",
            &[(format!("{:?}", a.policy).to_lowercase(), &h)],
        )?;
    }
    Ok(())
}
