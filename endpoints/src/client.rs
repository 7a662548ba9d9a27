//! Clients: an open-loop load generator that sends tasks to a pool through a scheduler and
//! measures each task's response time.
//!
//! Tasks leave at Poisson arrival times (exponential gaps at the given rate), or at the times of
//! an arrival trace ([`read_trace`]), from one thread,
//! whatever the answers do (open loop: a slow system gets the same offered load, as the paper's
//! clients). Each task is a NEW_TASK (or NEW_TASK_RANDOM, `--policy random`: the side-by-side
//! baseline a Horus switch also serves) to the scheduler's address, as the public testbed's client
//! addresses it (`dst_id` [`SPINE_SCHEDULER_ID`], `seq_num` from the request ID: [`seq_num`]),
//! with the public testbed's payload ([`crate::payload`]): the client's ID, the request ID, the
//! task's length in bytes, the service time drawn from the workload (`run_ns`, for workers that
//! take it from the payload) and the wall clock at sending (`gen_ns`). A task of several packets
//! is a NEW_TASK with the more-packets flag, then TASK_CONTINUATIONs, the last without it.
//!
//! Another thread takes the answers (TASK_DONE, TASK_DONE_IDLE): the response time is the
//! wall clock at arrival minus the `gen_ns` the worker echoed, recorded in an HdrHistogram
//! (nanoseconds, 3 significant digits). A request answered twice, or an answer to a request this
//! client did not send, is counted, never recorded twice. Once the last task left, the client
//! waits a drain time for the last answers; a task still unanswered then is lost.

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, ensure};
use hdrhistogram::Histogram;
use horus_host_driver::security::Allow;
use horus_model::net::Ipv4Net;
use horus_model::wire::{Endpoint, HorusHeader, PacketType};
use horus_workload::service::ServiceTime;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use serde::Serialize;

use crate::link::{FramesFrom, Inbound, Link};
use crate::payload::TaskPayload;
use crate::worker::precise_sleeps;

/// Which packet type the tasks are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// NEW_TASK: the switch schedules (Horus).
    Horus,
    /// NEW_TASK_RANDOM: the switch places at random.
    Random,
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub me: Endpoint,
    /// The scheduler's host (a leaf or spine), where tasks are addressed and sent.
    pub scheduler: Endpoint,
    pub pool: u16,
    pub client_id: u16,
    /// Tasks per second.
    pub rate: f64,
    pub duration: Duration,
    /// The service times asked for (`run_ns`).
    pub service: ServiceTime,
    pub policy: Policy,
    /// Packets per task (1: single-packet tasks, byte for byte the public format).
    pub packets: u32,
    pub seed: u64,
    /// How long to wait for answers after the last task left.
    pub drain: Duration,
    pub transport: crate::link::Transport,
    /// The networks whose hosts' answers it believes (the switches that deliver them); `None`:
    /// loopback and the scheduler's `/24` on this project's network, any over the kernel's UDP.
    /// Others are counted as forged.
    pub answers_from: Option<Allow>,
    /// Arrivals from a trace instead of Poisson at `rate` (the run ends at `duration` or with
    /// the trace).
    pub trace: Option<Vec<TraceTask>>,
}

/// A task of an arrival trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceTask {
    /// Seconds from the start of the run.
    pub at: f64,
    /// The service time to ask for; `None`: drawn from the workload.
    pub run_ns: Option<u64>,
}

/// Parses an arrival trace: per line the arrival time in microseconds from the start, and
/// optionally the task's service time in microseconds; times never decreasing; blank lines and
/// `#` comments skipped.
pub fn read_trace(text: &str) -> Result<Vec<TraceTask>> {
    let mut v: Vec<TraceTask> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let num = |f: &str, what: &str| -> Result<f64> {
            let x: f64 = f.parse().map_err(|_| {
                anyhow::anyhow!("trace line {}: {what} {f:?} is not a number", i + 1)
            })?;
            ensure!(
                x.is_finite() && (0.0..=1e12).contains(&x),
                "trace line {}: {what} {f} is not a time in microseconds",
                i + 1
            );
            Ok(x)
        };
        let f: Vec<&str> = line.split_whitespace().collect();
        ensure!(
            f.len() <= 2,
            "trace line {}: want ARRIVAL_US [SERVICE_US], got {line:?}",
            i + 1
        );
        let at = num(f[0], "arrival")? / 1e6;
        if let Some(last) = v.last() {
            ensure!(
                at >= last.at,
                "trace line {}: arrival {} us is before the previous one",
                i + 1,
                f[0]
            );
        }
        let run_ns = f
            .get(1)
            .map(|x| num(x, "service time").map(|us| (us * 1e3).round() as u64))
            .transpose()?;
        v.push(TraceTask { at, run_ns });
    }
    ensure!(!v.is_empty(), "the trace has no tasks");
    Ok(v)
}

/// A run's results.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub policy: Policy,
    pub pool: u16,
    pub client_id: u16,
    pub offered_rate: f64,
    /// Tasks sent per second of the sending time.
    pub sent_rate: f64,
    pub duration_s: f64,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub duplicates: u64,
    /// Answers to requests this client did not send, and datagrams that were not answers.
    pub unexpected: u64,
    /// Frames that did not come through the client's switch (on the emulated network): forged
    /// answers, not counted as answered.
    pub forged: u64,
    /// How far behind its Poisson schedule the sender fell at worst (us): a measure of how busy
    /// the machine was.
    pub max_send_lag_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// What the progress line shows.
#[derive(Clone, Debug)]
pub struct Progress {
    pub elapsed: Duration,
    pub sent: u64,
    pub answered: u64,
    pub p50_us: f64,
    pub p99_us: f64,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.elapsed.as_secs_f64().max(1e-9);
        write!(
            f,
            "{:6.1} s: sent {} ({:.0}/s), answered {}, p50 {:.1} us, p99 {:.1} us",
            s,
            self.sent,
            self.sent as f64 / s,
            self.answered,
            self.p50_us,
            self.p99_us
        )
    }
}

fn us(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1e3
    }
}

/// The `dst_id` of a task from a client: the public testbed's spine scheduler ID. Our switches
/// do not read it; a public spine schedules only tasks addressed to it.
pub const SPINE_SCHEDULER_ID: u16 = 100;

/// A task's `seq_num`. A one-packet task's is its request ID's low 16 bits, as the public client
/// writes it. A multi-packet task (this project's extension) offsets the request ID by the
/// client's ID times 16,381: a switch keys the packets of such a task by pool and `seq_num`, and
/// the offset keeps the tasks of clients that send at like rates apart there, where counters
/// all starting at 0 would meet (`docs/algorithm.md`).
pub fn seq_num(client_id: u16, req_id: u32, packets: u32) -> u16 {
    if packets <= 1 {
        req_id as u16
    } else {
        (req_id.wrapping_add(u32::from(client_id).wrapping_mul(16_381))) as u16
    }
}

/// The wall clock in nanoseconds since the Unix epoch (`CLOCK_REALTIME`, the public client's
/// `gen_ns`); 0 for a clock set before 1970.
pub fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// State per request: 0 not sent, 1 sent, 2 answered.
struct Ledger(Vec<AtomicU8>);

/// Runs a client: sends for `duration`, waits for the answers, reports. `progress` is called about
/// once a second while it runs.
pub fn run(
    cfg: &ClientConfig,
    mut progress: impl FnMut(&Progress),
) -> Result<(Report, Histogram<u64>)> {
    ensure!(
        cfg.rate.is_finite() && cfg.rate > 0.0,
        "the rate must be positive, got {}",
        cfg.rate
    );
    ensure!(cfg.packets >= 1, "a task has at least one packet");
    let planned = match &cfg.trace {
        Some(t) => t.len(),
        None => (cfg.rate * cfg.duration.as_secs_f64() * 1.5) as usize + 1024,
    };
    ensure!(
        planned < u32::MAX as usize,
        "{} tasks are more than one run's 32-bit request IDs",
        planned
    );
    let link = Link::bind_with(
        cfg.me,
        crate::link::socket_addr(&cfg.scheduler),
        cfg.transport,
    )?;
    let mut rx = link.try_clone()?;
    // By default, on this project's network the switches' (loopback, the scheduler's /24);
    // over the kernel's UDP the answers come from the workers' own addresses, which only the
    // operator knows (`--allow`).
    rx.frames_from =
        FramesFrom::Allowed(
            cfg.answers_from
                .clone()
                .unwrap_or_else(|| match cfg.transport {
                    crate::link::Transport::Frames => Allow::new(vec![
                        Ipv4Net::of(Ipv4Addr::LOCALHOST, 8),
                        Ipv4Net::of(cfg.scheduler.ip, 24),
                    ]),
                    crate::link::Transport::Kernel => Allow::any(),
                }),
        );
    let ledger = Arc::new(Ledger((0..planned).map(|_| AtomicU8::new(0)).collect()));
    let sent = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let start_wall = wall_ns();

    let sender = {
        let cfg = cfg.clone();
        let ledger = Arc::clone(&ledger);
        let sent = Arc::clone(&sent);
        let done = Arc::clone(&done);
        let mut link = link;
        std::thread::spawn(move || -> Result<(f64, f64)> {
            let r = send(&cfg, &mut link, &ledger, &sent, start);
            done.store(true, Ordering::Release);
            r
        })
    };

    let mut h = Histogram::<u64>::new(3).context("a histogram")?;
    let (mut answered, mut duplicates, mut unexpected, mut forged) = (0u64, 0u64, 0u64, 0u64);
    let mut last_progress = Instant::now();
    let mut drain_from: Option<Instant> = None;
    loop {
        if drain_from.is_none() && done.load(Ordering::Acquire) {
            drain_from = Some(Instant::now());
        }
        if drain_from
            .is_some_and(|t| answered >= sent.load(Ordering::Relaxed) || t.elapsed() >= cfg.drain)
        {
            break;
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            progress(&Progress {
                elapsed: start.elapsed(),
                sent: sent.load(Ordering::Relaxed),
                answered,
                p50_us: us(&h, 0.5),
                p99_us: us(&h, 0.99),
            });
        }
        let Some(m) = rx.recv(Some(Duration::from_millis(20)))? else {
            continue;
        };
        let now = wall_ns();
        let f = match m {
            Inbound::Frame(f) => f,
            Inbound::Foreign(_) => {
                forged += 1;
                continue;
            }
            _ => {
                unexpected += 1;
                continue;
            }
        };
        let p = match TaskPayload::parse(&f.payload) {
            Ok(p) if f.header.pkt_type.is_reply() && p.client_id == cfg.client_id => p,
            _ => {
                unexpected += 1;
                continue;
            }
        };
        // An answer stamped before this run started, or later than now, belongs to another run
        // of this client's address and ID.
        if p.gen_ns < start_wall || p.gen_ns > now {
            unexpected += 1;
            continue;
        }
        match ledger
            .0
            .get(p.req_id as usize)
            .map(|s| s.load(Ordering::Acquire))
        {
            Some(1) => {
                ledger.0[p.req_id as usize].store(2, Ordering::Release);
                answered += 1;
                h.record(now.saturating_sub(p.gen_ns).max(1))
                    .context("recording a response time")?;
            }
            Some(2) => duplicates += 1,
            _ => unexpected += 1,
        }
    }
    let (send_s, lag) = sender
        .join()
        .map_err(|_| anyhow::anyhow!("the sending thread panicked"))??;
    let sent = sent.load(Ordering::Relaxed);
    let report = Report {
        policy: cfg.policy,
        pool: cfg.pool,
        client_id: cfg.client_id,
        offered_rate: cfg.rate,
        sent_rate: sent as f64 / send_s.max(1e-9),
        duration_s: cfg.duration.as_secs_f64(),
        sent,
        answered,
        lost: sent - answered,
        duplicates,
        unexpected,
        forged,
        max_send_lag_us: lag * 1e6,
        mean_us: h.mean() / 1e3,
        p50_us: us(&h, 0.5),
        p90_us: us(&h, 0.9),
        p99_us: us(&h, 0.99),
        p999_us: us(&h, 0.999),
        max_us: h.max() as f64 / 1e3,
    };
    Ok((report, h))
}

/// The sending side of [`run`]: the tasks at their times (Poisson at `cfg.rate`, or the
/// trace's), each marked sent in `ledger` before it leaves and counted in `sent`. Returns how
/// long it sent and the largest lag behind a task's due time, in seconds.
fn send(
    cfg: &ClientConfig,
    link: &mut Link,
    ledger: &Ledger,
    sent: &AtomicU64,
    start: Instant,
) -> Result<(f64, f64)> {
    precise_sleeps();
    let mut rng = horus_workload::rng::SimRng::seed_from_u64(cfg.seed);
    let gap = Exp::new(cfg.rate).context("the arrival rate")?;
    let mut at = 0.0f64;
    let mut in_trace = cfg.trace.iter().flatten();
    let mut lag = 0.0f64;
    let t = if cfg.policy == Policy::Horus {
        PacketType::NewTask
    } else {
        PacketType::NewTaskRandom
    };
    let mut req: u32 = 0;
    loop {
        let run_ns = if cfg.trace.is_some() {
            let Some(t) = in_trace.next() else { break };
            at = t.at;
            t.run_ns
        } else {
            at += gap.sample(&mut rng);
            None
        };
        if at >= cfg.duration.as_secs_f64() || req as usize >= ledger.0.len() {
            break;
        }
        let due = start + Duration::from_secs_f64(at);
        if let Some(w) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(w);
        } else {
            lag = lag.max(Instant::now().duration_since(due).as_secs_f64());
        }
        let payload = TaskPayload {
            client_id: cfg.client_id,
            req_id: req,
            pkts_length: TaskPayload::length_of(cfg.packets),
            run_ns: run_ns.unwrap_or_else(|| cfg.service.sample(&mut rng)),
            gen_ns: wall_ns(),
            app_data: [0; crate::payload::APP_WORDS],
        }
        .to_bytes();
        ledger.0[req as usize].store(1, Ordering::Release);
        for k in 0..cfg.packets {
            let h = HorusHeader {
                pkt_type: if k == 0 {
                    t
                } else {
                    PacketType::TaskContinuation
                },
                more_packets: k + 1 < cfg.packets,
                pool_id: cfg.pool,
                src_id: cfg.client_id,
                dst_id: SPINE_SCHEDULER_ID,
                qlen: 0,
                seq_num: seq_num(cfg.client_id, req, cfg.packets),
            };
            // A full socket buffer loses the task as a wire would: counted as lost.
            let _ = link.send(cfg.scheduler, h, payload.clone());
        }
        sent.fetch_add(1, Ordering::Relaxed);
        req += 1;
    }
    Ok((start.elapsed().as_secs_f64(), lag))
}

/// The response-time CDF of each histogram, as (microseconds, fraction) points at the
/// histogram's buckets.
pub fn cdf(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let n = h.len().max(1) as f64;
    h.iter_recorded()
        .map(|v| {
            (
                v.value_iterated_to() as f64 / 1e3,
                v.count_since_last_iteration() as f64,
            )
        })
        .scan(0.0, |acc, (x, c)| {
            *acc += c;
            Some((x, *acc / n))
        })
        .collect()
}

/// Writes an SVG of the response-time CDFs, one line per labelled histogram, time on a log
/// scale.
pub fn plot_cdf(path: &Path, title: &str, lines: &[(String, &Histogram<u64>)]) -> Result<()> {
    use plotters::prelude::*;
    let pts: Vec<(String, Vec<(f64, f64)>)> = lines
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(l, h)| (l.clone(), cdf(h)))
        .collect();
    let max = pts
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold(1.0, f64::max)
        * 1.2;
    let min = pts
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold(f64::INFINITY, f64::min)
        .min(max / 10.0)
        / 1.2;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((min..max).log_scale(), 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("response time (us)")
        .y_desc("fraction of tasks")
        .draw()?;
    for (i, (label, p)) in pts.into_iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(p, color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_gives_arrival_and_service_times_and_bad_lines_say_why() {
        let t = read_trace("# at service\n0\n150 20\n\n150.5 # same time\n").unwrap();
        assert_eq!(
            t,
            vec![
                TraceTask {
                    at: 0.0,
                    run_ns: None
                },
                TraceTask {
                    at: 150e-6,
                    run_ns: Some(20_000)
                },
                TraceTask {
                    at: 150.5e-6,
                    run_ns: None
                },
            ]
        );
        for (bad, why) in [
            ("10\n5\n", "line 2: arrival 5 us is before the previous one"),
            ("x\n", "line 1: arrival \"x\" is not a number"),
            ("1 2 3\n", "want ARRIVAL_US [SERVICE_US]"),
            ("-1\n", "not a time"),
            ("# nothing\n", "no tasks"),
        ] {
            let e = read_trace(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
