//! `horus-sim`: run one simulation or sweep load x policy x workload.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use horus_sim::config::{FailureSpec, PoolSource, SimConfig};
use horus_sim::metrics::{Latency, MessageRate};
use horus_sim::output::{self, SweepRow};
use horus_sim::placement::RandomPools;
use horus_sim::policy::{self, POLICIES, PolicySpec};
use horus_sim::topology::Topology;
use horus_sim::workload::{Bursts, LoadSchedule, ServiceTime, WORKLOADS};
use horus_sim::{engine, sweep};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[derive(Parser)]
#[command(
    version,
    about = "Datacenter-scale task-scheduling simulator (Horus and baselines)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One simulation: writes <out>/<policy>-<workload>.json and ...-pools.csv; or, with --spec,
    /// one point of a planned sweep.
    #[command(after_help = policies_help())]
    Run {
        /// Run a point of a planned sweep (`sweep --plan DIR`): DIR/points/NNNN.json, whose
        /// configuration is the whole run's; its result goes to DIR/results/NNNN.json (to
        /// --out for a file elsewhere).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["policy", "workload", "load"])]
        spec: Option<PathBuf>,
        #[arg(
            long,
            default_value = PolicySpec::default().name(),
            help = format!("one of: {}", policy::names().collect::<Vec<_>>().join(", "))
        )]
        policy: String,
        #[arg(long, default_value = "exp", help = format!("one of: {}, or trace:PATH", WORKLOADS.join(", ")))]
        workload: String,
        /// Load as a fraction of each pool's capacity: 0.9, or a schedule MS:LOAD,MS:LOAD,...
        #[arg(long, default_value = "0.5")]
        load: String,
        #[command(flatten)]
        common: Common,
    },
    /// Every combination of policies, workloads and loads, in parallel; writes sweep.csv,
    /// sweep.json and p99-<workload>.svg under --out.
    #[command(after_help = policies_help())]
    Sweep {
        /// Policies to compare (default: Horus, the paper's baselines and random, as the policy
        /// registry marks them)
        #[arg(long, value_delimiter = ',', default_value = compared_policies())]
        policies: Vec<String>,
        #[arg(long, value_delimiter = ',', default_value = "exp")]
        workloads: Vec<String>,
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "0.1,0.3,0.5,0.7,0.8,0.9,0.95"
        )]
        loads: Vec<f64>,
        /// Tail target for the "throughput at a p99 target" summary.
        #[arg(long, default_value_t = 2000.0)]
        p99_target_us: f64,
        /// Run nothing: write one self-contained run specification per point under DIR, for a
        /// cluster's scheduler (`run --spec` each, then `merge DIR`).
        #[arg(long, value_name = "DIR")]
        plan: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Gathers the results of a planned sweep (`sweep --plan DIR`, then `run --spec` for each
    /// point) into sweep.csv, sweep.json and the plots, the same files a local sweep writes.
    Merge {
        /// The planned sweep's folder.
        dir: PathBuf,
        /// Where to write the files [default: DIR]
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args)]
struct Common {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulated time during which tasks arrive [default: 50, 5 with --quick]
    #[arg(long)]
    sim_ms: Option<f64>,
    /// Tasks arriving before this are not measured [default: a tenth of the simulated time]
    #[arg(long)]
    warmup_ms: Option<f64>,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Fat-tree pods (k); racks = k*k/2 [default: 48, 8 with --quick]
    #[arg(long)]
    pods: Option<u32>,
    #[arg(long, default_value_t = 24)]
    servers_per_rack: u32,
    #[arg(long, default_value_t = 32)]
    slots_per_server: u32,
    /// Number of random pools (exponential sizes, min 50, max 20,000, mean 685) [default: 1000,
    /// 20 with --quick]
    #[arg(long)]
    pools: Option<u32>,
    /// Read pools from a public Horus simulator dataset instead.
    #[arg(long, conflicts_with = "tenants")]
    dataset: Option<String>,
    /// Size the pools by hierarchical dominant resource fairness instead: tenants in a weighted
    /// hierarchy, each asking for workers that need a slot and some memory (a TOML file, see
    /// docs/simulator.md)
    #[arg(long)]
    tenants: Option<String>,
    #[arg(long, default_value_t = 5.0)]
    hop_delay_us: f64,
    #[arg(long, default_value_t = 1e-5)]
    loss: f64,
    #[arg(long, default_value_t = 500)]
    resubmit_ns: u64,
    #[arg(long, default_value_t = 100.0)]
    detect_us: f64,
    /// Failures: worker:ID@MS, leaf:RACK@MS, spine:SWITCH@MS (repeatable).
    #[arg(long = "fail")]
    failures: Vec<String>,
    /// Start workers in the M/M/1 stationary state instead of empty.
    #[arg(long)]
    prefill: bool,
    /// Heterogeneous servers: the speed of each server position in every rack, as COUNTxSPEED
    /// items (`2x8,22x1`: two servers 8 times as fast as the other 22) adding up to
    /// --servers-per-rack [default: all 1]
    #[arg(long, value_name = "COUNTxSPEED,...")]
    server_speeds: Option<String>,
    /// Bursty arrivals, RATIO:HIGH_US:LOW_US: each pool's rate alternates between a high state
    /// (RATIO times the low one) and a low state, of exponential lengths with those means, the
    /// mean rate the load's (a two-state Markov-modulated Poisson process) [default: Poisson]
    #[arg(long, value_name = "RATIO:HIGH_US:LOW_US")]
    bursts: Option<String>,
    /// Clients send jobs of this many tasks (1 to 255), arriving together at one spine; the load
    /// counts tasks, and the results give jobs' response times (to their last task's end)
    #[arg(long, default_value_t = 1)]
    job_tasks: u32,
    /// Small and fast: 8 pods, 20 pools, 5 ms, unless those options are given.
    #[arg(long)]
    quick: bool,
    /// Horus: a leaf re-sends a lost idle message at most once per this many microseconds after
    /// its last one (0: on every disagreement, the paper's rule).
    #[arg(long, default_value_t = horus_model::config::DEFAULT_REPAIR_GAP_US)]
    repair_gap_us: u16,
    /// Horus: a leaf links its rack into the spine's idle list when this many workers of the
    /// pool are idle [default: 1]
    #[arg(long)]
    link_at: Option<u16>,
    /// Horus: ... and unlinks it when this many or fewer are (below --link-at) [default: 0]
    #[arg(long)]
    unlink_at: Option<u16>,
    /// Horus: a leaf reports its rack's average load when it moved by this many tasks per worker
    /// (a fraction: 0.25) [default: 1]
    #[arg(long)]
    report_delta: Option<f64>,
    /// A policy parameter NAME=VALUE, for each policy of the run that has it (repeatable), e.g.
    /// `--param avg_16_16=0` for horus-tofino; one no policy of the run has is an error.
    #[arg(long = "param", value_parser = param_setting)]
    params: Vec<(String, f64)>,
    /// Split each run into this many shards of pools, simulated in parallel (threads: rayon's,
    /// RAYON_NUM_THREADS). Results for a seed depend on the shard count (statistically
    /// equivalent, not identical), never on the threads; 1 is the unsharded engine.
    #[arg(long, default_value_t = 1)]
    shards: u32,
    /// Hierarchical policies: each pool's racks go under spine schedulers by pods, merged in
    /// order until a group holds this many of the pool's workers (0: one group per pod, the
    /// paper's)
    #[arg(long, default_value_t = horus_sim::config::spine_group_workers())]
    spine_group_workers: u32,
}

/// `NAME=VALUE` of `--param`.
fn param_setting(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected NAME=VALUE"))?;
    let v: f64 = match value {
        "true" | "on" => 1.0,
        "false" | "off" => 0.0,
        _ => value
            .parse()
            .map_err(|_| format!("{s:?}: {value:?} is not a number, true or false"))?,
    };
    Ok((name.to_string(), v))
}

impl Common {
    /// The policy registered as `name`, with its default parameters but for those these options
    /// set (`--repair-gap-us`, `--link-at`, `--unlink-at`, `--report-delta`, for the policies
    /// with a parameter of that name), checked.
    fn policy(&self, name: &str) -> anyhow::Result<PolicySpec> {
        let mut spec = PolicySpec::named(name)?;
        let given = [
            ("repair_gap_us", Some(f64::from(self.repair_gap_us))),
            ("link_at", self.link_at.map(f64::from)),
            ("unlink_at", self.unlink_at.map(f64::from)),
            ("report_delta", self.report_delta),
        ];
        for (param, value) in given {
            if let (Some(v), Some(_)) = (value, spec.param(param)) {
                spec.set_param(param, v)?;
            }
        }
        for (param, v) in &self.params {
            if spec.param(param).is_some() {
                spec.set_param(param, *v)?;
            }
        }
        spec.check()?;
        Ok(spec)
    }

    /// [`Common::policy`] for each of `names`, as a sweep compares them.
    fn policies(&self, names: &[String]) -> anyhow::Result<Vec<PolicySpec>> {
        let specs = names
            .iter()
            .map(|name| self.policy(name))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for (param, _) in &self.params {
            anyhow::ensure!(
                specs.iter().any(|s| s.param(param).is_some()),
                "--param {param}: none of the policies {} has that parameter",
                names.join(", ")
            );
        }
        Ok(specs)
    }

    fn config(&self, policy: &str, workload: &str, load: &str) -> anyhow::Result<SimConfig> {
        let (pods, pools, sim_ms) = if self.quick {
            (8, 20, 5.0)
        } else {
            // The paper's datacenter, as the library's defaults give it.
            let d = SimConfig::default();
            let PoolSource::Random(r) = d.pools else {
                unreachable!("the default pools are random")
            };
            (d.topology.pods, r.count, d.sim_ns as f64 / 1e6)
        };
        let (pods, pools, sim_ms) = (
            self.pods.unwrap_or(pods),
            self.pools.unwrap_or(pools),
            self.sim_ms.unwrap_or(sim_ms),
        );
        let sim_ns = nanos(sim_ms, 1e6, "--sim-ms")?;
        let cfg = SimConfig {
            seed: self.seed,
            topology: Topology {
                pods,
                servers_per_rack: self.servers_per_rack,
                slots_per_server: self.slots_per_server,
            },
            pools: match (&self.dataset, &self.tenants) {
                (Some(path), _) => PoolSource::Dataset(path.clone()),
                (None, Some(path)) => PoolSource::Tenants(horus_sim::hdrf::read(path)?),
                (None, None) => PoolSource::Random(RandomPools {
                    count: pools,
                    ..RandomPools::default()
                }),
            },
            policy: self.policy(policy)?,
            workload: workload.to_string(),
            load: LoadSchedule::parse(load)?,
            sim_ns,
            warmup_ns: match self.warmup_ms {
                Some(ms) => nanos(ms, 1e6, "--warmup-ms")?,
                None => sim_ns / 10,
            },
            hop_delay_ns: nanos(self.hop_delay_us, 1e3, "--hop-delay-us")?,
            loss: self.loss,
            resubmit_ns: self.resubmit_ns,
            detect_ns: nanos(self.detect_us, 1e3, "--detect-us")?,
            prefill: self.prefill,
            job_tasks: self.job_tasks,
            shards: self.shards,
            spine_group_workers: self.spine_group_workers,
            server_speeds: self
                .server_speeds
                .as_deref()
                .map(horus_sim::config::parse_speeds)
                .transpose()
                .context("--server-speeds")?
                .unwrap_or_default(),
            bursts: self
                .bursts
                .as_deref()
                .map(Bursts::parse)
                .transpose()
                .context("--bursts")?,
            failures: self
                .failures
                .iter()
                .map(|f| FailureSpec::parse(f))
                .collect::<anyhow::Result<_>>()?,
            ..SimConfig::default()
        };
        cfg.validate()?;
        // (A trace is read here and again by the engine: its errors come before the run.)
        ServiceTime::named(workload)?;
        Ok(cfg)
    }
}

/// The policies a sweep compares by default, as `--policies` takes them.
fn compared_policies() -> &'static str {
    static LIST: OnceLock<String> = OnceLock::new();
    LIST.get_or_init(|| policy::compared().collect::<Vec<_>>().join(","))
}

/// The help's list of policies: each one's name, description and parameters with their defaults.
fn policies_help() -> String {
    let width = policy::names().map(str::len).max().unwrap_or(0);
    let mut text = String::from("Policies, with their parameters' defaults:\n");
    for p in POLICIES {
        text += &format!("  {:width$}  {}", p.name, p.about);
        if !p.params.is_empty() {
            let params: Vec<String> = p
                .params
                .iter()
                .map(|q| match q.kind {
                    policy::Kind::Flag if q.default != 0.0 => format!("{} on", q.name),
                    policy::Kind::Flag => format!("{} off", q.name),
                    _ => format!("{} {}", q.name, q.default),
                })
                .collect();
            text += &format!(" ({})", params.join(", "));
        }
        text += "\n";
    }
    text
}

/// A run's tasks as its closing line gives them, with the lost ones where there are any.
fn tasks_text(tasks: u64, lost_in_network: u64, lost_to_failures: u64) -> String {
    match (lost_in_network, lost_to_failures) {
        (0, 0) => format!("{tasks} tasks"),
        (n, 0) => format!("{tasks} tasks ({n} lost in the network)"),
        (n, f) => format!(
            "{tasks} tasks ({} lost: {n} in the network, {f} to failures)",
            n + f
        ),
    }
}

/// A run's response times as its closing line gives them: the percentiles, or that no task was
/// measured (rather than percentiles of nothing).
fn response_text(r: &Latency) -> String {
    if r.count == 0 {
        return "none measured (none arrived after the warm-up and finished)".into();
    }
    format!(
        "p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us",
        r.p50_us, r.p99_us, r.p999_us
    )
}

/// What the schedulers said to each other and how often an idle list served a task, when the
/// policy sends messages (Horus: leaf to spine) or keeps idle lists: a line for the run's summary.
fn scheduler_text(messages: &[MessageRate], counters: &[(String, u64)]) -> Option<String> {
    let mut parts = Vec::new();
    if !messages.is_empty() {
        let each: Vec<String> = messages
            .iter()
            .map(|m| format!("{} {:.3}", m.kind, m.per_task))
            .collect();
        let all: f64 = messages.iter().map(|m| m.per_task).sum();
        parts.push(format!(
            "messages per task: {} ({all:.3} in all)",
            each.join(", ")
        ));
    }
    let get = |n: &str| counters.iter().find(|(k, _)| k == n).map(|&(_, v)| v);
    let share = |role: &str| {
        let tasks = get(&format!("{role}.tasks")).filter(|&t| t > 0)?;
        let hits = get(&format!("{role}.idle_hits"))?;
        Some(format!(
            "{role} {:.1} %",
            100.0 * hits as f64 / tasks as f64
        ))
    };
    let shares: Vec<String> = ["spine", "leaf"].into_iter().filter_map(share).collect();
    if !shares.is_empty() {
        parts.push(format!("tasks sent by an idle list: {}", shares.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `value` in a unit of `unit_ns` nanoseconds, as whole nanoseconds; an error naming `option`
/// for a negative or non-finite value.
fn nanos(value: f64, unit_ns: f64, option: &str) -> anyhow::Result<u64> {
    anyhow::ensure!(
        value.is_finite() && value >= 0.0,
        "{option} must be a non-negative number, got {value}"
    );
    Ok((value * unit_ns).round() as u64)
}

fn main() -> anyhow::Result<()> {
    horus_sim::use_huge_pages();
    match Cli::parse().command {
        Command::Run {
            spec: Some(spec),
            common,
            ..
        } => run_spec(&spec, common),
        Command::Run {
            spec: None,
            policy,
            workload,
            load,
            common,
        } => run(&policy, &workload, &load, &common),
        Command::Sweep {
            policies,
            workloads,
            loads,
            p99_target_us,
            plan,
            common,
        } => sweep(&policies, workloads, loads, p99_target_us, plan, &common),
        Command::Merge { dir, out } => merge(&dir, out.as_deref()),
    }
}

/// `run --spec FILE`: one point of a sweep's plan, its result beside the plan's.
fn run_spec(spec: &Path, common: Common) -> anyhow::Result<()> {
    let cfg = sweep::read_point(spec)?;
    let name = spec
        .file_stem()
        .context("a run specification's file name")?
        .to_string_lossy()
        .into_owned();
    let out = sweep::results_dir(spec).unwrap_or(common.out);
    eprintln!(
        "{}: {} on {} at load {}, {} ms",
        spec.display(),
        cfg.policy.name(),
        cfg.workload,
        cfg.load.steps.first().map_or(0.0, |s| s.1),
        cfg.sim_ns as f64 / 1e6
    );
    let summary = engine::run(&cfg, &mut |_| {})?;
    let path = sweep::write_result(&out, &name, &SweepRow::from(&summary))?;
    print_quietly(&format!(
        "{}, {}; result in {}\n",
        tasks_text(
            summary.tasks,
            summary.lost_in_network,
            summary.lost_to_failures
        ),
        response_text(&summary.response),
        path.display()
    ))?;
    Ok(())
}

/// `run`: one configuration, its summary and results written, a line of figures printed.
fn run(policy: &str, workload: &str, load: &str, common: &Common) -> anyhow::Result<()> {
    common.policies(&[policy.to_string()])?; // every --param names one of its
    let cfg = common.config(policy, workload, load)?;
    eprintln!(
        "seed {}: {} on {} at load {load}, {} ms",
        cfg.seed,
        cfg.policy.name(),
        workload,
        cfg.sim_ns as f64 / 1e6
    );
    let bar = ProgressBar::new(cfg.sim_ns / 1000);
    bar.set_style(ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} us simulated, eta {eta}",
    )?);
    let started = std::time::Instant::now();
    let summary = engine::run(&cfg, &mut |now| {
        bar.set_position((now / 1000).min(cfg.sim_ns / 1000))
    })?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let name = workload.replace(['/', ':'], "_");
    output::write_run(
        &common.out,
        &format!("{}-{name}", cfg.policy.name()),
        &summary,
    )?;
    let tasks = tasks_text(
        summary.tasks,
        summary.lost_in_network,
        summary.lost_to_failures,
    );
    let latency = response_text(&summary.response);
    print_quietly(&format!(
        "{tasks}, {latency}; Little error {:.2e}; {} events in {secs:.1} s ({:.1} M events/s); results in {}\n",
        summary.little.relative_error,
        summary.events,
        summary.events as f64 / secs / 1e6,
        common.out.display()
    ))?;
    if let Some(line) = scheduler_text(&summary.messages, &summary.policy_counters) {
        print_quietly(&format!("{line}\n"))?;
    }
    let q = &summary.leaf_queue;
    if !q.is_empty() {
        print_quietly(&format!(
            "leaf queues: {} tasks waited at a leaf; the queue they joined held {} at p99.9, {} at most\n",
            q.held, q.p999, q.max
        ))?;
    }
    if let Some(j) = &summary.jobs {
        print_quietly(&format!(
            "jobs of {} tasks: {} done, p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us; {} unfinished\n",
            j.tasks,
            j.response.count,
            j.response.p50_us,
            j.response.p99_us,
            j.response.p999_us,
            j.unfinished
        ))?;
    }
    Ok(())
}

/// `sweep`: every policy, workload and load, run here or written as a plan.
fn sweep(
    policies: &[String],
    workloads: Vec<String>,
    loads: Vec<f64>,
    p99_target_us: f64,
    plan: Option<PathBuf>,
    common: &Common,
) -> anyhow::Result<()> {
    let base = common.config(PolicySpec::default().name(), "exp", "0.5")?;
    let specs = common.policies(policies)?;
    for w in &workloads {
        ServiceTime::named(w)?;
    }
    let configs = sweep::points(&base, &specs, &workloads, &loads);
    for cfg in &configs {
        cfg.validate()
            .with_context(|| format!("load {:?}", cfg.load.steps[0].1))?;
    }
    let names: Vec<String> = specs.iter().map(|p| p.name().to_string()).collect();
    if let Some(dir) = plan {
        let plan = sweep::Plan {
            format: sweep::PLAN_FORMAT,
            seed: base.seed,
            policies: names,
            workloads,
            loads,
            p99_target_us,
            points: configs.len(),
        };
        sweep::write_plan(&dir, &plan, &configs)?;
        print_quietly(&format!(
            "{} points in {}: run each with `horus-sim run --spec FILE`, then `horus-sim merge {}`\n",
            configs.len(),
            dir.join("points").display(),
            dir.display()
        ))?;
        return Ok(());
    }
    eprintln!(
        "seed {}: {} runs on {} threads",
        base.seed,
        configs.len(),
        rayon::current_num_threads()
    );
    let bar = ProgressBar::new(configs.len() as u64);
    bar.set_style(ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} runs, eta {eta}",
    )?);
    let summaries = sweep::run_all(&configs, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    let rows: Vec<SweepRow> = summaries.iter().map(SweepRow::from).collect();
    let table = output::finish_sweep(
        &common.out,
        &rows,
        &names,
        &workloads,
        base.seed,
        p99_target_us,
    )?;
    print_quietly(&table)?;
    Ok(())
}

/// `merge`: a plan's results, as a sweep's table.
fn merge(dir: &Path, out: Option<&Path>) -> anyhow::Result<()> {
    let (plan, rows) = sweep::merge(dir)?;
    let table = output::finish_sweep(
        out.unwrap_or(dir),
        &rows,
        &plan.policies,
        &plan.workloads,
        plan.seed,
        plan.p99_target_us,
    )?;
    print_quietly(&table)?;
    Ok(())
}

/// Writes `text` to standard output; a reader that went away (`horus-sim sweep | head`) ends it
/// quietly: the results are in files already.
fn print_quietly(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_compares_horus_with_the_papers_baselines_by_default() {
        let cli = Cli::try_parse_from(["horus-sim", "sweep"]).expect("a sweep parses");
        let Command::Sweep { policies, .. } = cli.command else {
            panic!("not a sweep");
        };
        assert_eq!(policies, ["horus", "rs-h", "rs-lb", "jsq", "random"]);
        for p in &policies {
            PolicySpec::named(p).expect("a known policy");
        }
    }

    /// The configuration of `horus-sim run ARGS`, or its error as printed.
    fn run_config(args: &[&str]) -> Result<SimConfig, String> {
        let cli = Cli::try_parse_from(["horus-sim", "run"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        let Command::Run {
            spec: None,
            policy,
            workload,
            load,
            common,
        } = cli.command
        else {
            panic!("not a run");
        };
        common
            .config(&policy, &workload, &load)
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn an_unknown_policy_is_refused_with_every_registered_name() {
        let e = run_config(&["--quick", "--policy", "nosuch"]).expect_err("unknown");
        assert!(e.starts_with("unknown policy \"nosuch\"; known: "), "{e}");
        for name in policy::names() {
            assert!(e.contains(name), "{name} missing from: {e}");
            run_config(&["--quick", "--policy", name]).expect("a registered policy runs");
        }
    }

    #[test]
    fn the_help_describes_every_registered_policy() {
        let help = policies_help();
        for p in POLICIES {
            let line = help
                .lines()
                .find(|l| l.split_whitespace().next() == Some(p.name))
                .unwrap_or_else(|| panic!("{} missing from the help:\n{help}", p.name));
            assert!(line.contains(p.about), "{line}");
            for q in p.params {
                let default = match (q.kind, q.default != 0.0) {
                    (policy::Kind::Flag, true) => "on".to_string(),
                    (policy::Kind::Flag, false) => "off".to_string(),
                    _ => q.default.to_string(),
                };
                assert!(line.contains(&format!("{} {default}", q.name)), "{line}");
            }
        }
    }

    #[test]
    fn the_scheduler_line_gives_messages_per_task_and_idle_list_shares() {
        let m = |kind: &str, per_task| MessageRate {
            kind: kind.into(),
            count: 0,
            per_task,
        };
        let c = |n: &str, v| (n.to_string(), v);
        let line = scheduler_text(
            &[m("idle-add", 0.2), m("load-update", 0.013)],
            &[
                c("leaf.tasks", 1000),
                c("leaf.idle_hits", 516),
                c("spine.tasks", 1000),
                c("spine.idle_hits", 959),
            ],
        )
        .unwrap();
        assert_eq!(
            line,
            "messages per task: idle-add 0.200, load-update 0.013 (0.213 in all); tasks sent by an idle list: spine 95.9 %, leaf 51.6 %"
        );
        assert_eq!(scheduler_text(&[], &[]), None);
        assert_eq!(
            scheduler_text(&[], &[c("leaf.tasks", 0), c("leaf.idle_hits", 0)]),
            None
        );
    }

    #[test]
    fn horus_thresholds_and_report_delta_set_their_parameters_and_are_checked() {
        let cfg = run_config(&[
            "--quick",
            "--policy",
            "horus",
            "--link-at",
            "5",
            "--unlink-at",
            "4",
            "--report-delta",
            "0.25",
        ])
        .unwrap();
        assert_eq!(cfg.policy.param("link_at"), Some(5.0));
        assert_eq!(cfg.policy.param("unlink_at"), Some(4.0));
        assert_eq!(cfg.policy.param("report_delta"), Some(0.25));
        // Options a policy does not have leave it alone.
        let cfg = run_config(&["--quick", "--policy", "jsq", "--link-at", "5"]).unwrap();
        assert_eq!(cfg.policy, PolicySpec::named("jsq").unwrap());
        for (bad, why) in [
            (
                ["--link-at", "2", "--unlink-at", "2"],
                "unlink_at < link_at",
            ),
            (
                ["--link-at", "0", "--unlink-at", "0"],
                "link_at is a whole number from 1 to 65535, got 0",
            ),
            (
                ["--report-delta", "0", "--link-at", "1"],
                "report_delta is a number from 0.0000152587890625 to 65535, got 0",
            ),
            (
                ["--report-delta", "1e9", "--link-at", "1"],
                "report_delta is a number from",
            ),
        ] {
            let args: Vec<&str> = ["--quick", "--policy", "horus"]
                .into_iter()
                .chain(bad)
                .collect();
            let e = run_config(&args).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn repair_gap_us_sets_the_parameter_of_that_name() {
        let cfg = run_config(&["--quick", "--policy", "horus", "--repair-gap-us", "7"]).unwrap();
        assert_eq!(cfg.policy.param("repair_gap_us"), Some(7.0));
        let mut expected = PolicySpec::named("horus").unwrap();
        expected.set_param("repair_gap_us", 7.0).unwrap();
        assert_eq!(cfg.policy, expected);
        let cfg = run_config(&["--quick", "--policy", "rs-h", "--repair-gap-us", "7"]).unwrap();
        assert_eq!(cfg.policy, PolicySpec::named("rs-h").unwrap());
        // A sweep's policies get it too.
        let cli = Cli::try_parse_from(["horus-sim", "sweep", "--repair-gap-us", "7"]).unwrap();
        let Command::Sweep {
            policies, common, ..
        } = cli.command
        else {
            panic!("not a sweep");
        };
        let specs = common.policies(&policies).unwrap();
        assert!(specs.contains(&expected), "{specs:?}");
        assert_eq!(specs.len(), policies.len());
    }

    #[test]
    fn quick_sets_the_scale_that_options_do_not_give() {
        let scale = |args: &[&str]| {
            let c = run_config(args).unwrap();
            let PoolSource::Random(r) = c.pools else {
                panic!("random pools");
            };
            (c.topology.pods, r.count, c.sim_ns)
        };
        assert_eq!(scale(&[]), (48, 1000, 50_000_000));
        assert_eq!(scale(&["--quick"]), (8, 20, 5_000_000));
        assert_eq!(scale(&["--quick", "--pods", "4"]), (4, 20, 5_000_000));
        assert_eq!(
            scale(&["--quick", "--pools", "3", "--sim-ms", "2"]),
            (8, 3, 2_000_000)
        );
        assert_eq!(scale(&["--pods", "16"]), (16, 1000, 50_000_000));
    }

    #[test]
    fn a_run_without_measured_tasks_says_so_instead_of_giving_percentiles() {
        assert_eq!(
            response_text(&Latency::default()),
            "none measured (none arrived after the warm-up and finished)"
        );
        let r = Latency {
            count: 3,
            p50_us: 1.0,
            p99_us: 2.25,
            p999_us: 3.0,
            ..Latency::default()
        };
        assert_eq!(response_text(&r), "p50 1.0 us, p99 2.2 us, p99.9 3.0 us");
    }

    #[test]
    fn a_runs_closing_line_counts_its_lost_tasks() {
        assert_eq!(tasks_text(10, 0, 0), "10 tasks");
        assert_eq!(tasks_text(10, 2, 0), "10 tasks (2 lost in the network)");
        assert_eq!(
            tasks_text(10, 2, 5),
            "10 tasks (7 lost: 2 in the network, 5 to failures)"
        );
        assert_eq!(
            tasks_text(10, 0, 5),
            "10 tasks (5 lost: 0 in the network, 5 to failures)"
        );
    }

    #[test]
    fn a_run_refuses_negative_times_and_bad_configurations_before_it_starts() {
        let cfg = run_config(&["--quick", "--hop-delay-us", "2.5", "--warmup-ms", "1"]).unwrap();
        assert_eq!((cfg.hop_delay_ns, cfg.warmup_ns), (2_500, 1_000_000));
        assert_eq!(run_config(&["--quick"]).unwrap().warmup_ns, 500_000);
        for (args, says) in [
            (
                &["--hop-delay-us=-1"][..],
                "--hop-delay-us must be a non-negative",
            ),
            (
                &["--detect-us=nan"],
                "--detect-us must be a non-negative number, got NaN",
            ),
            (&["--warmup-ms=-2"], "--warmup-ms must be"),
            (&["--warmup-ms", "5"], "no task would be measured"),
            (&["--load", "0"], "no task would arrive"),
            (&["--fail", "leaf:32@1"], "leaf:32 is outside the topology"),
            (
                &["--fail", "spine:1@-1"],
                "must be a non-negative number of milliseconds",
            ),
            (&["--fail", "worker:1@6"], "after arrivals stop (5 ms)"),
            (&["--workload", "nosuch"], "unknown workload \"nosuch\""),
        ] {
            let args: Vec<&str> = ["--quick"].iter().chain(args).copied().collect();
            let e = run_config(&args).expect_err(says);
            assert!(e.contains(says), "{args:?}: {e}");
        }
        let e = run_config(&["--quick", "--sim-ms=inf"]).expect_err("infinite");
        assert!(
            e.contains("--sim-ms must be a non-negative number, got inf"),
            "{e}"
        );
    }
}
