//! `horus-worker`: worker slots that register with a leaf, run tasks and answer
//! (`horus_endpoints::worker`).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Parser;
use horus_endpoints::worker::{self, Service, Work};

/// Horus worker slots: each its own address (consecutive from --ip, UDP port 1234), node and
/// FCFS queue; they register with the leaf's controller, keep alive, run each task and answer its
/// client through the leaf.
#[derive(Parser)]
#[command(name = "horus-worker", version)]
struct Args {
    /// The leaf's address (IP, or IP:PORT; port 1234 by default).
    #[arg(long)]
    leaf: String,
    #[arg(long)]
    pool: u16,
    /// The first slot's address.
    #[arg(long)]
    ip: Ipv4Addr,
    #[arg(long, default_value_t = 1)]
    slots: u16,
    /// The first slot's node ID (the others the next ones), static as a public testbed worker's:
    /// the slots serve under them at once (the leaf's configuration must hold them). Without it
    /// each slot asks the leaf's controller for an ID with WORKER_ID.
    #[arg(long)]
    id: Option<u16>,
    /// The first slot's server ID in its public keep-alive (the others the next ones; default
    /// --id, else 0): the public controller finds servers by it.
    #[arg(long)]
    server_id: Option<u16>,
    /// The leaf's ID in the public keep-alive (the public controller's leaf controller).
    #[arg(long, default_value_t = 0)]
    leaf_id: u16,
    /// Tasks a slot holds at most; more are refused and counted.
    #[arg(long, default_value_t = horus_endpoints::worker::MAX_QUEUE)]
    max_queue: usize,
    /// A task's service time: payload (the client's run_ns), exp, bimodal, trimodal,
    /// rocksdb-50-50, rocksdb-90-10, tpcc, trace:PATH, or fixed:US.
    #[arg(long, default_value = "payload", value_parser = |s: &str| s.parse::<Service>())]
    service: Service,
    /// sleep: wait through a task's time; spin: keep a core busy through it.
    #[arg(long, value_enum, default_value = "sleep")]
    work: Work,
    #[arg(long, default_value_t = 100)]
    keepalive_ms: u64,
    /// Run for this long, then print each slot's counts (default: until killed).
    #[arg(long)]
    duration_s: Option<f64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// frames: Ethernet frames to the leaf's socket (a software switch); kernel: UDP datagrams
    /// through the kernel (a network with a card or a Tofino on the path).
    #[arg(long, value_enum, default_value = "frames")]
    transport: horus_endpoints::link::Transport,
    /// Control messages carry a keyed MAC (HMAC-SHA-256) with the keys of this file (`ID HEX` a
    /// line, the first signs); the controller's without a right one are not believed.
    #[arg(long)]
    key_file: Option<std::path::PathBuf>,
    /// Run tasks only from hosts of this network (repeatable): over the kernel's UDP the
    /// clients' networks, on the emulated network the leaf's. Others are counted as foreign.
    /// Default: the leaf's socket on the emulated network, any host over the kernel's UDP.
    #[arg(long, value_name = "CIDR")]
    allow: Vec<horus_model::net::Ipv4Net>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("horus-worker: {e:#}");
        std::process::exit(1);
    }
}

fn leaf_addr(s: &str) -> Result<SocketAddr> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    match s.parse::<Ipv4Addr>() {
        Ok(ip) => Ok(SocketAddr::from((ip, horus_model::wire::HORUS_UDP_PORT))),
        Err(_) => bail!("--leaf {s:?} is not an IPv4 address or IP:PORT"),
    }
}

fn run() -> Result<()> {
    let a = Args::parse();
    if a.slots == 0 {
        bail!("--slots must be at least 1");
    }
    let mut cfgs = worker::slot_configs(
        a.ip,
        a.slots,
        leaf_addr(&a.leaf)?,
        a.pool,
        a.id,
        Duration::from_millis(a.keepalive_ms.max(1)),
    )?;
    let keys = horus_host_driver::auth::Keys::load_shared(a.key_file.as_deref())
        .map_err(anyhow::Error::msg)?;
    for (i, c) in cfgs.iter_mut().enumerate() {
        c.transport = a.transport;
        c.keys = keys.clone();
        c.tasks_from =
            (!a.allow.is_empty()).then(|| horus_host_driver::security::Allow::new(a.allow.clone()));
        if let Some(s) = a.server_id {
            c.server_id = s.saturating_add(i as u16);
        }
        c.leaf_id = a.leaf_id;
        c.max_queue = a.max_queue.max(1);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    for (i, c) in cfgs.into_iter().enumerate() {
        let h = worker::synthetic(a.service.clone(), a.work, a.seed.wrapping_add(i as u64));
        let stop = Arc::clone(&stop);
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || {
            let r = worker::run_slot(c, h, stop, |id| {
                let _ = tx.send((i, id));
            });
            if let Err(e) = &r {
                eprintln!("horus-worker: slot {i}: {e:#}");
            }
            r
        }));
    }
    drop(tx);
    let mut ids = vec![None; usize::from(a.slots)];
    for (i, id) in rx.iter().take(usize::from(a.slots)) {
        ids[i] = Some(id);
    }
    if ids.iter().any(Option::is_none) {
        bail!("a slot failed before it registered");
    }
    let ids: Vec<u16> = ids.into_iter().flatten().collect();
    println!(
        "registered {} slot(s) in pool {}: IDs {ids:?}",
        a.slots, a.pool
    );
    match a.duration_s {
        Some(s) => std::thread::sleep(Duration::from_secs_f64(s.max(0.0))),
        None => loop {
            std::thread::park();
        },
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let s = t.join().map_err(|_| anyhow::anyhow!("a slot panicked"))??;
        println!("{}", serde_json::to_string(&s)?);
    }
    Ok(())
}
