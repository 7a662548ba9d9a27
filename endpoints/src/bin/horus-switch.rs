//! `horus-switch`: a Horus leaf or spine on a UDP socket, its engine the reference model or the
//! Verilated RTL, programmed from a configuration file as a card is (`horus_endpoints::switch`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use horus_endpoints::switch::{self, ControllerOpts, Driver, Engine, RunOpts, SoftSwitch};
use horus_host_driver::jbsq::JbsqDriver;
use horus_host_driver::security::Allow;
use horus_host_driver::{Device, Switch};
use horus_model::config::{Config, Role};
use horus_model::sched::jbsq::LeafKind;

/// Prints a line on standard output; a reader that went away (`| head -2`) does not stop the
/// switch.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// A software Horus switch: frames arrive one per UDP datagram at the configuration's address
/// (`[switch] ip` and `udp_port`), and what the engine emits leaves for each frame's own
/// destination. A leaf runs the controller: workers register with it (WORKER_ID), keep alive,
/// and are removed when silent.
#[derive(Parser)]
#[command(name = "horus-switch", version)]
struct Args {
    /// The switch's configuration (as for horusctl and the card).
    #[arg(long)]
    config: PathBuf,
    /// model: the reference model; rtl: the generated Verilog, Verilated (the configuration's
    /// sizes must be a hardware preset's).
    #[arg(long, value_enum, default_value = "model")]
    engine: Engine,
    /// Seed of the switch's random generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A leaf without a controller (its control-port frames are counted and dropped).
    #[arg(long)]
    no_controller: bool,
    /// The controller removes a worker silent for this long.
    #[arg(long, default_value_t = 1000)]
    timeout_ms: u64,
    /// Egress port the controller gives the workers it registers.
    #[arg(long, default_value_t = 8)]
    worker_port: u8,
    /// The controller's membership file.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Serve for this long, then print the counts and stop (default: until killed).
    #[arg(long)]
    duration_s: Option<f64>,
    /// Print the counts this often.
    #[arg(long)]
    stats_every_s: Option<f64>,
    /// Poll the socket this long after the last frame before sleeping: a switch that polls
    /// takes a frame without a thread wake-up, at the cost of a core.
    #[arg(long, default_value_t = 0)]
    spin_us: u64,
    /// Serve Prometheus metrics at http://ADDR/metrics (the switch's counts, the controller's,
    /// the engine's counters).
    #[arg(long)]
    metrics: Option<SocketAddr>,
    /// Write every frame taken and sent to this pcap file (a controller's message as the frame
    /// a card would carry it in).
    #[arg(long)]
    capture: Option<PathBuf>,
    /// Take datagrams (and control frames) only from hosts of this network, and relay only to
    /// them (repeatable; added to the configuration's `[security] allow`). When none is given:
    /// loopback and the /24 of every address the configuration names.
    #[arg(long, value_name = "CIDR")]
    allow: Vec<horus_model::net::Ipv4Net>,
    /// The controller's frames carry a keyed MAC (HMAC-SHA-256) with the keys of this file
    /// (`ID HEX` a line, the first signs): frames without a right one are refused.
    #[arg(long)]
    key_file: Option<PathBuf>,
}

fn secs(s: Option<f64>, what: &str) -> Result<Option<Duration>> {
    s.map(|s| {
        Duration::try_from_secs_f64(s).map_err(|_| anyhow::anyhow!("{what} {s} is not a time"))
    })
    .transpose()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("horus-switch: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let a = Args::parse();
    let cfg = Config::from_file(&a.config).with_context(|| a.config.display().to_string())?;
    let start = Instant::now();
    let keys = horus_host_driver::auth::Keys::load_shared(a.key_file.as_deref())
        .map_err(anyhow::Error::msg)?;
    let ctl = (cfg.switch.role == Role::Leaf && !a.no_controller).then(|| ControllerOpts {
        timeout_us: a.timeout_ms.saturating_mul(1000),
        worker_port: a.worker_port,
        state: a.state.clone(),
        keys: keys.clone(),
    });
    if cfg.switch.leaf == LeafKind::Jbsq {
        serve::<JbsqDriver<Device>>(&a, &cfg, ctl, start)
    } else {
        serve::<Switch<Device>>(&a, &cfg, ctl, start)
    }
}

/// The switch on `D`: the paper switch's driver, or the JBSQ leaf's.
fn serve<D: Driver>(
    a: &Args,
    cfg: &Config,
    ctl: Option<ControllerOpts>,
    start: Instant,
) -> Result<()> {
    let has_ctl = ctl.is_some();
    let mut s = SoftSwitch::<D>::open_with(cfg, a.engine, a.seed, ctl, 0)?;
    s.set_allow(Allow::resolve(Some(cfg), &a.allow, None));
    let listen = SocketAddr::from((cfg.switch.ip, cfg.switch.udp_port));
    let opts = RunOpts {
        duration: secs(a.duration_s, "--duration-s")?,
        stats_every: secs(a.stats_every_s, "--stats-every-s")?,
        spin: Duration::from_micros(a.spin_us),
        metrics: a
            .metrics
            .map(horus_host_driver::metrics::serve)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        capture: a.capture.clone(),
        ..Default::default()
    };
    say!(
        "serving: {} switch {} ({} engine) on udp {listen}{}",
        cfg.switch.role,
        cfg.switch.id,
        match a.engine {
            Engine::Model => "model",
            Engine::Rtl => "rtl",
        },
        if has_ctl {
            format!(", controller timeout {} ms", a.timeout_ms)
        } else {
            String::new()
        }
    );
    say!(
        "allowed: {} (datagrams taken from, frames relayed to)",
        s.allow()
    );
    if let Some(m) = a.metrics {
        say!("metrics on http://{m}/metrics");
    }
    let report = |s: &mut SoftSwitch<D>| -> Result<()> {
        say!("{}", serde_json::to_string(&s.stats)?);
        let c: Vec<String> = s
            .counters()?
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        say!("counters: {}", c.join(", "));
        Ok(())
    };
    let lost = switch::run(&mut s, listen, &opts, start, report)?;
    report(&mut s)?;
    say!("datagrams that could not be sent: {lost}");
    Ok(())
}
