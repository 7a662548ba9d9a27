//! The software switch's figures: frames per second of each engine alone (no sockets), and of
//! the model engine on a UDP socket with its added latency.
//!
//! `cargo bench -p horus-endpoints --bench switch`; `HORUS_BENCH_RUNS` (default 3): each figure
//! is the median of that many runs, with the range after it. The traffic: a leaf with 16
//! registered workers, tasks (NEW_TASK) and the workers' replies (TASK_DONE with a random queue
//! length, TASK_DONE_IDLE) one for one, so that loads and the idle list stay in motion.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use horus_endpoints::demo::{POOL, Topology};
use horus_endpoints::link;
use horus_endpoints::payload::{APP_WORDS, TaskPayload};
use horus_endpoints::switch::{self, ControllerOpts, Engine, RunOpts, SoftSwitch};
use horus_host_driver::device::SIM_SEED;
use horus_model::config::Config;
use horus_model::wire::{Endpoint, HorusFrame, HorusHeader, PacketType};

const WORKERS: u16 = 16;

fn frame(src: Endpoint, dst: Endpoint, t: PacketType, id: u16, qlen: u16, seq: u32) -> Vec<u8> {
    let header = HorusHeader {
        pkt_type: t,
        more_packets: false,
        pool_id: POOL,
        src_id: id,
        dst_id: 0,
        qlen,
        seq_num: seq as u16,
    };
    let payload = TaskPayload {
        client_id: 1,
        req_id: seq,
        pkts_length: TaskPayload::length_of(1),
        run_ns: 0,
        gen_ns: 0,
        app_data: [0; APP_WORDS],
    }
    .to_bytes();
    HorusFrame::new(src, dst, header, payload).to_bytes()
}

struct Traffic {
    t: Topology,
    x: u64,
}

impl Traffic {
    fn worker(&self, i: u16) -> Endpoint {
        link::host(Ipv4Addr::from(
            u32::from(self.t.first_worker(1)) + u32::from(i),
        ))
    }
    fn registrations(&self) -> Vec<Vec<u8>> {
        let leaf = link::host(self.t.leaf(1));
        (0..WORKERS)
            .map(|i| frame(self.worker(i), leaf, PacketType::WorkerId, 0xffff, 0, 0))
            .collect()
    }
    /// Frame `n` of the steady traffic: even a task, odd a reply.
    fn next(&mut self, n: u32) -> Vec<u8> {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        let client = link::host(self.t.client(0).unwrap());
        if n % 2 == 0 {
            frame(
                client,
                link::host(self.t.leaf(1)),
                PacketType::NewTask,
                1,
                0,
                n,
            )
        } else {
            let w = (self.x % u64::from(WORKERS)) as u16;
            let q = (self.x >> 8) % 4;
            let t = if q == 0 {
                PacketType::TaskDoneIdle
            } else {
                PacketType::TaskDone
            };
            frame(self.worker(w), client, t, w, q as u16, n)
        }
    }
}

fn leaf(t: &Topology, engine: Engine) -> SoftSwitch {
    let cfg = Config::from_toml_str(&t.leaf_toml_open(1)).unwrap();
    let ctl = ControllerOpts {
        timeout_us: u64::MAX / 4,
        ..Default::default()
    };
    SoftSwitch::open(&cfg, engine, SIM_SEED, Some(ctl), 0).unwrap()
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Frames per second of an engine alone.
fn engine_alone(engine: Engine, frames: u32) -> f64 {
    let t = Topology::new([127, 230, 1], 1, WORKERS).unwrap();
    let mut s = leaf(&t, engine);
    let mut tr = Traffic {
        t,
        x: 88172645463325252,
    };
    for f in tr.registrations() {
        s.frame(f, 0).unwrap();
    }
    let input: Vec<Vec<u8>> = (0..frames).map(|n| tr.next(n)).collect();
    let start = Instant::now();
    let mut out = 0;
    for (n, f) in input.into_iter().enumerate() {
        out += s.frame(f, n as u64 / 8).unwrap().len();
    }
    assert!(out as u32 >= frames / 2);
    let secs = start.elapsed().as_secs_f64();
    if let horus_host_driver::Device::Cosim(d) = &s.sw.regs {
        println!(
            "  (RTL: {:.2} M cycles/s, {:.0} cycles a frame)",
            d.cycles() as f64 / secs / 1e6,
            d.cycles() as f64 / f64::from(frames)
        );
    }
    f64::from(frames) / secs
}

/// Polls (at most 100 ms, without sleeping: a thread's wake-up would be measured too) until one
/// of `sinks` has a datagram, and takes it.
fn wait_any(sinks: &[UdpSocket], buf: &mut [u8]) {
    let t0 = Instant::now();
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> = sinks
        .iter()
        .map(|s| libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    while t0.elapsed() < Duration::from_millis(100) {
        // SAFETY: valid pollfds for the sockets, which outlive the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
        if n > 0 {
            for (s, p) in sinks.iter().zip(&fds) {
                if p.revents != 0 {
                    let _ = s.recv_from(buf);
                    return;
                }
            }
        }
    }
}

/// The model engine on a socket: frames per second it took in while a sender sent as fast as
/// it could for `secs`, and the added latency (p50, p99, us) of tasks at `rate` per second
/// against the same path without the switch.
fn on_socket(net: u8, secs: f64, rate: f64, spin: Duration) -> (f64, f64, f64, f64, f64) {
    let t = Topology::new([127, 231, net], 1, WORKERS).unwrap();
    let cfg = Config::from_toml_str(&t.leaf_toml_open(1)).unwrap();
    let leaf_addr = SocketAddr::from((t.leaf(1), 1234));
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let (tx, rx) = std::sync::mpsc::channel();
    let sw = std::thread::spawn(move || {
        let ctl = ControllerOpts {
            timeout_us: u64::MAX / 4,
            ..Default::default()
        };
        let mut s = SoftSwitch::open(&cfg, Engine::Model, SIM_SEED, Some(ctl), 0).unwrap();
        tx.send(()).unwrap();
        let opts = RunOpts {
            stop: Some(s2),
            spin,
            ..Default::default()
        };
        switch::run(&mut s, leaf_addr, &opts, Instant::now(), |_| Ok(())).unwrap();
        s.stats.frames_in
    });
    rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut tr = Traffic {
        t,
        x: 88172645463325252,
    };
    // Every worker and the client are one sink socket each, timestamping what arrives.
    let sinks: Vec<UdpSocket> = (0..=WORKERS)
        .map(|i| {
            let ip = if i < WORKERS {
                tr.worker(i).ip
            } else {
                t.client(0).unwrap()
            };
            let s = UdpSocket::bind((ip, 1234)).unwrap();
            s.set_nonblocking(true).unwrap();
            let _ = link::grow_receive_buffer(&s, 16 << 20);
            s
        })
        .collect();
    let src = UdpSocket::bind((t.client(1).unwrap(), 1234)).unwrap();
    for f in tr.registrations() {
        src.send_to(&f, leaf_addr).unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    let drain = |sinks: &[UdpSocket]| {
        let mut buf = [0u8; 2048];
        let mut n = 0;
        for s in sinks {
            while s.recv_from(&mut buf).is_ok() {
                n += 1;
            }
        }
        n
    };
    drain(&sinks);
    // Throughput: send as fast as possible.
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed().as_secs_f64() < secs {
        let _ = src.send_to(&tr.next(n), leaf_addr);
        n += 1;
        if n % 64 == 0 {
            drain(&sinks);
        }
    }
    // Latency at a modest rate: a task, then its time to the sink, through the switch and
    // straight to the sink.
    // The switch first works off what queued in its socket: until nothing arrives for 200 ms.
    let mut quiet = Instant::now();
    while quiet.elapsed() < Duration::from_millis(200) {
        if drain(&sinks) > 0 {
            quiet = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut through = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    let mut direct = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    let gap = Duration::from_secs_f64(1.0 / rate);
    let mut buf = [0u8; 2048];
    for k in 0..(rate as u32) {
        let f = tr.next(2 * k);
        for (h, to) in [
            (&mut through, leaf_addr),
            (&mut direct, sinks[0].local_addr().unwrap()),
        ] {
            let t0 = Instant::now();
            src.send_to(&f, to).unwrap();
            wait_any(&sinks, &mut buf);
            h.record(t0.elapsed().as_nanos() as u64).unwrap();
        }
        let r = tr.next(2 * k + 1);
        src.send_to(&r, leaf_addr).unwrap();
        std::thread::sleep(gap);
        drain(&sinks);
    }
    stop.store(true, Ordering::Relaxed);
    let taken = sw.join().unwrap();
    let q = |h: &hdrhistogram::Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e3;
    (
        // The blast's frames: without the registrations and the latency phase's tasks and answers.
        (taken as f64 - f64::from(WORKERS) - 2.0 * rate.floor()) / secs,
        f64::from(n) / secs,
        q(&through, 0.5) - q(&direct, 0.5),
        q(&through, 0.99) - q(&direct, 0.99),
        q(&direct, 0.5),
    )
}

fn main() {
    let runs: usize = std::env::var("HORUS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3);
    println!("| engine | where | frames/s, median (range) |");
    println!("|---|---|---|");
    for (engine, frames) in [(Engine::Model, 2_000_000), (Engine::Rtl, 30_000)] {
        let (m, lo, hi) = median((0..runs).map(|_| engine_alone(engine, frames)).collect());
        println!("| {engine:?} | alone, in process | {m:.0} ({lo:.0}-{hi:.0}) |");
    }
    for (what, spin) in [
        ("sleeps when its socket is empty", RunOpts::default().spin),
        ("always polls", Duration::from_secs(3600)),
    ] {
        let r: Vec<_> = (0..runs)
            .map(|i| on_socket(i as u8, 2.0, 2000.0, spin))
            .collect();
        let (m, lo, hi) = median(r.iter().map(|r| r.0).collect());
        let (sent, _, _) = median(r.iter().map(|r| r.1).collect());
        let (p50, _, _) = median(r.iter().map(|r| r.2).collect());
        let (p99, _, _) = median(r.iter().map(|r| r.3).collect());
        let (base, _, _) = median(r.iter().map(|r| r.4).collect());
        println!(
            "| Model | UDP socket, {what}; sender as fast as it can ({sent:.0}/s) | {m:.0} ({lo:.0}-{hi:.0}) |"
        );
        println!(
            "  added latency at 2,000 tasks/s, medians: p50 {p50:.1} us, p99 {p99:.1} us (a loopback datagram alone: p50 {base:.1} us)"
        );
    }
}
