//! The whole system on one machine: a spine, racks behind their leaves (each leaf with its
//! controller), worker slots registering in every rack, and clients sending to the spine; Horus
//! and then random placement at each load; the tail latencies side by side.
//!
//! Every part is its own process (`horus-switch`, `horus-worker`, `horus-client`, found beside
//! the running binary) on its own loopback addresses, so the demo is the system a user would
//! start by hand; [`Children`] kills them all when the demo ends, however it ends.

use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use hdrhistogram::Histogram;
use horus_workload::service::ServiceTime;
use serde::{Deserialize, Serialize};

use crate::client::Policy;
use crate::switch::Engine;

/// The pool every demo rack serves.
pub const POOL: u16 = 1;
/// The leaves' egress port towards their workers (and the controller's default for the workers
/// it registers).
pub const WORKER_PORT: u8 = 8;

/// Where the hosts of one system live: `127.a.b.0/24`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    pub net: [u8; 3],
    pub racks: u16,
    /// Worker slots per rack.
    pub workers: u16,
}

/// The first host number of the worker slots, and of the clients.
const FIRST_WORKER: u32 = 32;
const FIRST_CLIENT: u32 = 200;

impl Topology {
    pub fn new(net: [u8; 3], racks: u16, workers: u16) -> Result<Topology> {
        ensure!(
            net[0] == 127,
            "the demo lives on loopback addresses: 127.x.y"
        );
        ensure!((1..=8).contains(&racks), "1 to 8 racks, got {racks}");
        ensure!(
            workers >= 1 && u32::from(racks) * u32::from(workers) <= FIRST_CLIENT - FIRST_WORKER,
            "1 to {} worker slots in all, got {racks} x {workers}",
            FIRST_CLIENT - FIRST_WORKER
        );
        Ok(Topology {
            net,
            racks,
            workers,
        })
    }

    fn ip(&self, host: u32) -> Ipv4Addr {
        Ipv4Addr::new(self.net[0], self.net[1], self.net[2], host as u8)
    }
    pub fn spine(&self) -> Ipv4Addr {
        self.ip(1)
    }
    /// Leaf `k`, from 1.
    pub fn leaf(&self, k: u16) -> Ipv4Addr {
        self.ip(10 + u32::from(k))
    }
    /// The first worker slot of rack `k`.
    pub fn first_worker(&self, k: u16) -> Ipv4Addr {
        self.ip(FIRST_WORKER + u32::from(k - 1) * u32::from(self.workers))
    }
    /// Client `i`, from 0.
    pub fn client(&self, i: u16) -> Result<Ipv4Addr> {
        let h = FIRST_CLIENT + u32::from(i);
        ensure!(h < 255, "at most {} clients", 255 - FIRST_CLIENT);
        Ok(self.ip(h))
    }

    /// The spine's configuration: one pool, each rack a node of `workers` workers.
    pub fn spine_toml(&self) -> String {
        let mut s = format!(
            "[switch]\nrole = \"spine\"\nid = 1\nmac = \"{}\"\nip = \"{}\"\npass_through_port = 1\ncontrol_port = 0\n\n{SIZES}\n[[pools]]\nid = {POOL}\n",
            crate::link::mac_of(self.spine()),
            self.spine()
        );
        for k in 1..=self.racks {
            s += &format!(
                "  [[pools.nodes]]\n  id = {}\n  leaf = {k}\n  workers = {}\n  mac = \"{}\"\n  ip = \"{}\"\n  udp_port = 1234\n  port = {}\n",
                k - 1,
                self.workers,
                crate::link::mac_of(self.leaf(k)),
                self.leaf(k),
                k + 1
            );
        }
        s
    }

    /// Leaf `k`'s configuration: the pool, reported to the spine, with the rack's worker slots
    /// as its nodes 0, 1, ... at their addresses (the public testbed's way: a static topology;
    /// the slots serve under those IDs, `horus-worker --id 0`).
    pub fn leaf_toml(&self, k: u16) -> String {
        self.leaf_toml_of(k, None)
    }

    /// [`Topology::leaf_toml`], the leaf holding tasks with `jbsq` places a worker when given
    /// (`[switch] leaf = "jbsq"` at the sizes of the JBSQ leaf's `small` preset).
    pub fn leaf_toml_of(&self, k: u16, jbsq: Option<u8>) -> String {
        let mut s = self.leaf_toml_open(k);
        if let Some(places) = jbsq {
            s = s
                .replacen("role = \"leaf\"\n", "role = \"leaf\"\nleaf = \"jbsq\"\n", 1)
                .replacen(
                    SIZES,
                    &format!("{JBSQ_SIZES}\n[defaults]\nk = {places}\n"),
                    1,
                );
        }
        let first = u32::from(self.first_worker(k));
        for i in 0..self.workers {
            let ip = Ipv4Addr::from(first + u32::from(i));
            s += &format!(
                "  [[pools.nodes]]\n  id = {i}\n  mac = \"{}\"\n  ip = \"{ip}\"\n  udp_port = 1234\n  port = {WORKER_PORT}\n",
                crate::link::mac_of(ip)
            );
        }
        s
    }

    /// Leaf `k`'s configuration with room for the rack's workers and none of them: they join
    /// by registering (WORKER_ID from the worker, this project's addition).
    pub fn leaf_toml_open(&self, k: u16) -> String {
        format!(
            "[switch]\nrole = \"leaf\"\nid = {k}\nmac = \"{}\"\nip = \"{}\"\npass_through_port = 1\ncontrol_port = 0\n\n{SIZES}\n[[spines]]\nid = 1\nmac = \"{}\"\nip = \"{}\"\nudp_port = 1234\nport = 2\n\n[[pools]]\nid = {POOL}\nspine = 1\nspine_node = {}\ncapacity = {}\n",
            crate::link::mac_of(self.leaf(k)),
            self.leaf(k),
            crate::link::mac_of(self.spine()),
            self.spine(),
            k - 1,
            self.workers
        )
    }
}

/// The `small` hardware preset's sizes: both engines run the same file (the RTL engine builds
/// that preset).
const SIZES: &str = "[sizes]\npools = 8\nnodes = 64\nconn_table = 16\n";

/// The JBSQ leaf's `small` preset's sizes, for a leaf that holds tasks.
const JBSQ_SIZES: &str = "[sizes]\npools = 4\nnodes = 64\nconn_table = 64\n";

/// `s` with every service time multiplied by `k`.
pub fn scaled(s: &ServiceTime, k: f64) -> ServiceTime {
    let m = |v: &u64| ((*v as f64) * k).round().max(1.0) as u64;
    match s {
        ServiceTime::Exponential { mean_ns } => ServiceTime::Exponential {
            mean_ns: mean_ns * k,
        },
        ServiceTime::Discrete { values_ns, probs } => ServiceTime::Discrete {
            values_ns: values_ns.iter().map(m).collect(),
            probs: probs.clone(),
        },
        ServiceTime::Trace { values_ns } => ServiceTime::Trace {
            values_ns: values_ns.iter().map(m).collect(),
        },
        ServiceTime::HyperExponential { means_ns, probs } => ServiceTime::HyperExponential {
            means_ns: means_ns.iter().map(|v| v * k).collect(),
            probs: probs.clone(),
        },
    }
}

/// Processes that die with the demo.
#[derive(Default)]
pub struct Children(Vec<(String, Child)>);

impl Children {
    /// Starts `bin` with `args`; with `ready`, waits (at most `wait`) for a line of its standard
    /// output that contains it. The rest of its output is dropped; its errors go to ours.
    pub fn start(
        &mut self,
        bin: &Path,
        args: &[String],
        ready: Option<&str>,
        wait: Duration,
    ) -> Result<()> {
        let name = format!(
            "{} {}",
            bin.file_name().unwrap_or_default().to_string_lossy(),
            args.join(" ")
        );
        let mut c = dies_with_us(Command::new(bin).args(args).stdout(Stdio::piped()))
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let out = c.stdout.take().expect("piped");
        self.0.push((name.clone(), c));
        let (tx, rx) = mpsc::channel();
        let want = ready.map(str::to_string);
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if want.as_deref().is_some_and(|w| line.contains(w)) {
                    let _ = tx.send(());
                }
            }
        });
        if ready.is_some() {
            rx.recv_timeout(wait).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => {
                    anyhow::anyhow!("{name} was not ready within {wait:?}")
                }
                mpsc::RecvTimeoutError::Disconnected => {
                    anyhow::anyhow!("{name} ended before it was ready")
                }
            })?;
        }
        Ok(())
    }

    /// Starts `bin` with `args`, its output dropped: a process to wait for ([`Children::wait_all`]).
    pub fn start_quiet(&mut self, bin: &Path, args: &[String]) -> Result<()> {
        let c = dies_with_us(Command::new(bin).args(args).stdout(Stdio::null()))
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        self.0.push((bin.display().to_string(), c));
        Ok(())
    }

    /// Waits for every process; fails if one failed.
    pub fn wait_all(&mut self) -> Result<()> {
        for (name, c) in &mut self.0 {
            let s = c.wait()?;
            ensure!(s.success(), "{name} failed: {s}");
        }
        self.0.clear();
        Ok(())
    }

    /// Kills the process started as number `i` (a worker failing).
    pub fn kill(&mut self, i: usize) -> Result<()> {
        let (_, c) = &mut self.0[i];
        c.kill()?;
        c.wait()?;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Fails if a process already ended.
    pub fn check_alive(&mut self) -> Result<()> {
        for (name, c) in &mut self.0 {
            if let Some(s) = c.try_wait()? {
                bail!("{name} ended: {s}");
            }
        }
        Ok(())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `cmd`, made to be killed when the process that starts it ends, however it ends (a demo
/// killed by a signal leaves nothing behind): Linux's parent-death signal.
fn dies_with_us(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe, as pre_exec requires; it touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        })
    }
}

/// A binary built beside the running one.
pub fn sibling(name: &str) -> Result<PathBuf> {
    let me = std::env::current_exe()?;
    let p = me.with_file_name(name);
    ensure!(
        p.exists(),
        "{} not found beside {} (build the workspace's binaries: cargo build -p horus-endpoints)",
        name,
        me.display()
    );
    Ok(p)
}

/// What a client writes with `--json`: its report and its histogram's buckets (nanoseconds,
/// count), so that several clients' histograms can be merged.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientOutput {
    pub report: serde_json::Value,
    pub buckets: Vec<(u64, u64)>,
}

impl ClientOutput {
    pub fn new(report: &crate::client::Report, h: &Histogram<u64>) -> Result<ClientOutput> {
        Ok(ClientOutput {
            report: serde_json::to_value(report)?,
            buckets: h
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        })
    }

    pub fn histogram(&self) -> Result<Histogram<u64>> {
        let mut h = Histogram::<u64>::new(3)?;
        for &(v, c) in &self.buckets {
            h.record_n(v.max(1), c)?;
        }
        Ok(h)
    }

    fn get(&self, k: &str) -> u64 {
        self.report[k].as_u64().unwrap_or(0)
    }
}

/// The demo's settings.
#[derive(Clone, Debug)]
pub struct DemoOpts {
    pub topo: Topology,
    pub clients: u16,
    pub engine: Engine,
    pub loads: Vec<f64>,
    pub policies: Vec<Policy>,
    /// The workload's name (the simulator's), and the factor its service times are scaled by.
    pub workload: String,
    pub scale: f64,
    pub duration: Duration,
    pub out: PathBuf,
    pub seed: u64,
    /// How long each switch polls after its last frame (`horus-switch --spin-us`).
    pub spin_us: u64,
    /// Each switch writes every frame to `spine.pcap`, `leaf1.pcap`, ... in `out`.
    pub capture: bool,
    /// The leaves hold tasks (JBSQ), with this many places a worker; `None`: the paper's leaf.
    pub jbsq: Option<u8>,
}

/// One (policy, load) run of the demo, all clients merged.
#[derive(Clone, Debug, Serialize)]
pub struct DemoRow {
    pub policy: Policy,
    pub load: f64,
    pub rate: f64,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub max_send_lag_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

/// Runs the demo: the rows, in the order run; writes `demo.json`, `demo-cdf.svg` (the
/// response-time CDFs) and `demo-p99.svg` (p99 against load per policy) in `out`.
pub fn run(o: &DemoOpts, mut say: impl FnMut(&str)) -> Result<Vec<DemoRow>> {
    let t = o.topo;
    std::fs::create_dir_all(&o.out)?;
    let service = scaled(&ServiceTime::named(&o.workload)?, o.scale);
    let mean_s = service.mean_ns() / 1e9;
    let (switch, worker, client) = (
        sibling("horus-switch")?,
        sibling("horus-worker")?,
        sibling("horus-client")?,
    );
    let engine = match o.engine {
        Engine::Model => "model",
        Engine::Rtl => "rtl",
    };
    let mut kids = Children::default();
    let spine_cfg = o.out.join("spine.toml");
    std::fs::write(&spine_cfg, t.spine_toml())?;
    // An RTL engine is Verilated on its first start (minutes); the others wait less.
    let boot = Duration::from_secs(if o.engine == Engine::Rtl { 1200 } else { 60 });
    let sw_args = |cfg: &Path| {
        let mut v = vec![
            "--config".into(),
            cfg.display().to_string(),
            "--engine".into(),
            engine.into(),
            "--seed".into(),
            o.seed.to_string(),
            "--spin-us".into(),
            o.spin_us.to_string(),
        ];
        if o.capture {
            v.push("--capture".into());
            v.push(cfg.with_extension("pcap").display().to_string());
        }
        v
    };
    kids.start(&switch, &sw_args(&spine_cfg), Some("serving"), boot)?;
    for k in 1..=t.racks {
        let cfg = o.out.join(format!("leaf{k}.toml"));
        std::fs::write(&cfg, t.leaf_toml_of(k, o.jbsq))?;
        kids.start(&switch, &sw_args(&cfg), Some("serving"), boot)?;
    }
    say(&format!(
        "a spine and {}{} ({engine} engine) on {}.{}.{}.0/24",
        plural(t.racks.into(), "leaf", "leaves"),
        o.jbsq
            .map_or(String::new(), |k| format!(" holding tasks (k = {k})")),
        t.net[0],
        t.net[1],
        t.net[2]
    ));
    for k in 1..=t.racks {
        let args = vec![
            "--leaf".into(),
            t.leaf(k).to_string(),
            "--pool".into(),
            POOL.to_string(),
            "--ip".into(),
            t.first_worker(k).to_string(),
            "--slots".into(),
            t.workers.to_string(),
            "--id".into(),
            "0".into(),
            "--service".into(),
            "payload".into(),
        ];
        kids.start(&worker, &args, Some("registered"), Duration::from_secs(60))?;
    }
    say(&format!(
        "{} registered in {}",
        plural(
            u32::from(t.racks) * u32::from(t.workers),
            "worker slot",
            "worker slots"
        ),
        plural(t.racks.into(), "rack", "racks")
    ));
    let workers = f64::from(t.racks) * f64::from(t.workers);
    let mut rows = Vec::new();
    let mut lines: Vec<(String, Histogram<u64>)> = Vec::new();
    let mut run_no = 0u64;
    for &load in &o.loads {
        for &policy in &o.policies {
            run_no += 1;
            let rate = load * workers / mean_s;
            let (mut clients, outs) = start_clients(o, &client, run_no, policy, load, rate)?;
            clients.wait_all()?;
            kids.check_alive()?;
            let (row, h) = collect_row(policy, load, rate, &outs)?;
            say(&format!(
                "{:<6} load {:.2}: {:>7} tasks ({:.0}/s), {} lost, p50 {:>8.1} us, p99 {:>8.1} us, p99.9 {:>8.1} us",
                format!("{policy:?}").to_lowercase(),
                load,
                row.sent,
                rate,
                row.lost,
                row.p50_us,
                row.p99_us,
                row.p999_us
            ));
            lines.push((
                format!(
                    "{} {:.0} % (p99 {:.0} us)",
                    format!("{policy:?}").to_lowercase(),
                    load * 100.0,
                    row.p99_us
                ),
                h,
            ));
            rows.push(row);
            // Let the queues empty before the next run.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    std::fs::write(
        o.out.join("demo.json"),
        serde_json::to_string_pretty(&rows)?,
    )?;
    plot_p99(
        &o.out.join("demo-p99.svg"),
        &format!(
            "p99 response time, {} x{} on {} workers ({engine} engine)",
            o.workload, o.scale, workers
        ),
        &rows,
    )?;
    let refs: Vec<(String, &Histogram<u64>)> = lines.iter().map(|(l, h)| (l.clone(), h)).collect();
    crate::client::plot_cdf(
        &o.out.join("demo-cdf.svg"),
        &format!(
            "response time, {} x{} on {} workers ({engine} engine)",
            o.workload, o.scale, workers
        ),
        &refs,
    )?;
    Ok(rows)
}

/// A run's row and its merged histogram, from its clients' JSON outputs `outs`.
fn collect_row(
    policy: Policy,
    load: f64,
    rate: f64,
    outs: &[PathBuf],
) -> Result<(DemoRow, Histogram<u64>)> {
    let mut h = Histogram::<u64>::new(3)?;
    let mut row = DemoRow {
        policy,
        load,
        rate,
        sent: 0,
        answered: 0,
        lost: 0,
        duplicates: 0,
        max_send_lag_us: 0.0,
        p50_us: 0.0,
        p99_us: 0.0,
        p999_us: 0.0,
    };
    for j in outs {
        let c: ClientOutput = serde_json::from_str(
            &std::fs::read_to_string(j).with_context(|| format!("reading {}", j.display()))?,
        )?;
        h.add(c.histogram()?)?;
        row.sent += c.get("sent");
        row.answered += c.get("answered");
        row.lost += c.get("lost");
        row.duplicates += c.get("duplicates");
        row.max_send_lag_us = row
            .max_send_lag_us
            .max(c.report["max_send_lag_us"].as_f64().unwrap_or(0.0));
    }
    let q = |q: f64| {
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / 1e3
        }
    };
    row.p50_us = q(0.5);
    row.p99_us = q(0.99);
    row.p999_us = q(0.999);
    Ok((row, h))
}

/// Starts the run's clients (`o.clients` of them, sharing `rate`), each writing its JSON output;
/// returns them and their outputs' paths.
fn start_clients(
    o: &DemoOpts,
    client: &Path,
    run_no: u64,
    policy: Policy,
    load: f64,
    rate: f64,
) -> Result<(Children, Vec<PathBuf>)> {
    let t = o.topo;
    let mut outs = Vec::new();
    let mut clients = Children::default();
    for i in 0..o.clients {
        let json = o
            .out
            .join(format!("client-{policy:?}-{load}-{i}.json").to_lowercase());
        let args = vec![
            "--scheduler".into(),
            t.spine().to_string(),
            "--ip".into(),
            t.client(i)?.to_string(),
            // An ID of its own in each run: a late answer of an earlier run is not
            // taken for one of this run's.
            "--client-id".into(),
            ((run_no - 1) * u64::from(o.clients) + u64::from(i) + 1).to_string(),
            "--pool".into(),
            POOL.to_string(),
            "--rate".into(),
            (rate / f64::from(o.clients)).to_string(),
            "--service".into(),
            o.workload.clone(),
            "--scale".into(),
            o.scale.to_string(),
            "--duration-s".into(),
            o.duration.as_secs_f64().to_string(),
            "--policy".into(),
            format!("{policy:?}").to_lowercase(),
            "--seed".into(),
            (o.seed * 1000 + run_no * 10 + u64::from(i)).to_string(),
            "--json".into(),
            json.display().to_string(),
            "--quiet".into(),
        ];
        clients.start_quiet(client, &args)?;
        outs.push(json);
    }
    Ok((clients, outs))
}

/// p99 against load, one line per policy, on a log scale.
fn plot_p99(path: &Path, title: &str, rows: &[DemoRow]) -> Result<()> {
    use plotters::prelude::*;
    let max_load = rows.iter().map(|r| r.load).fold(0.0, f64::max) * 1.1;
    let top = rows.iter().map(|r| r.p99_us).fold(1.0, f64::max) * 1.5;
    let bottom = rows
        .iter()
        .map(|r| r.p99_us)
        .filter(|&v| v > 0.0)
        .fold(top / 2.0, f64::min)
        / 1.5;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_load, (bottom..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("load (fraction of the workers' capacity)")
        .y_desc("p99 response (us)")
        .draw()?;
    for (i, policy) in [Policy::Horus, Policy::Random].into_iter().enumerate() {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.policy == policy && r.p99_us > 0.0)
            .map(|r| (r.load, r.p99_us))
            .collect();
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(format!("{policy:?}").to_lowercase())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A loopback network for one run: `127.x.y` from the process ID and the clock, x from 100 to
/// 199, so that runs side by side do not share addresses (the tests' fixed networks are
/// 127.200.0.0 and up).
pub fn fresh_net() -> [u8; 3] {
    let p = std::process::id();
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let v = p.wrapping_mul(2_654_435_761) ^ t;
    [127, 100 + (v % 100) as u8, (v >> 8) as u8]
}
