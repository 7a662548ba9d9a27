//! Passes per second through the reference model (criterion).
//!
//! A trace of task and reply headers is recorded once from a closed loop (tasks go where the model
//! sends them; each worker completes its tasks in order and reports its queue, TASK_DONE_IDLE when
//! it runs dry), then replayed on a fresh scheduler, second passes fed back at once.

use std::collections::VecDeque;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use horus_model::config::Config;
use horus_model::rng::Xorshift64;
use horus_model::sched::{Packet, Scheduler, Target};
use horus_model::wire::{HorusHeader, PacketType};

const WORKERS: u16 = 64;
const EVENTS: usize = 100_000;

fn leaf() -> Scheduler {
    let mut s = String::from(
        "[switch]\nrole = \"leaf\"\nid = 3\nmac = \"02:00:00:00:00:03\"\nip = \"10.0.0.3\"\npass_through_port = 1\ncontrol_port = 0\n\
         [[spines]]\nid = 1\nmac = \"02:00:00:00:01:01\"\nip = \"10.0.1.1\"\nudp_port = 1234\nport = 2\n\
         [[pools]]\nid = 0\nspine = 1\nspine_node = 7\n",
    );
    for id in 0..WORKERS {
        s += &format!(
            "[[pools.nodes]]\nid = {id}\nmac = \"02:00:00:03:00:01\"\nip = \"10.0.3.1\"\nudp_port = 1234\nport = 4\n"
        );
    }
    Scheduler::from_config(&Config::from_toml_str(&s).unwrap(), 1)
        .unwrap()
        .0
}

fn header(pkt_type: PacketType, src_id: u16, qlen: u16, seq_num: u16) -> HorusHeader {
    HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: 0,
        src_id,
        dst_id: 0,
        qlen,
        seq_num,
    }
}

fn run(s: &mut Scheduler, h: HorusHeader) -> Option<u16> {
    let mut r = s.packet(Packet {
        header: h,
        time_us: 0,
    });
    let mut node = None;
    loop {
        if let Some(f) = r.forward
            && let Target::Node { node: n, .. } = f.target
        {
            node = Some(n);
        }
        match r.resubmit {
            Some(rs) => r = s.resubmit(rs),
            None => return node,
        }
    }
}

/// Records a trace at about `load` (fraction of events that are new tasks, while any is queued).
fn trace(load: f64) -> Vec<HorusHeader> {
    let mut s = leaf();
    let mut rng = Xorshift64::new(99);
    let mut queues: Vec<VecDeque<u16>> = vec![VecDeque::new(); usize::from(WORKERS)];
    let mut busy: Vec<u16> = Vec::new();
    let mut out = Vec::with_capacity(EVENTS);
    let mut seq = 0u16;
    while out.len() < EVENTS {
        let r = rng.next_u64();
        if busy.is_empty() || (r as u32) < (load * f64::from(u32::MAX)) as u32 {
            seq = seq.wrapping_add(1);
            let h = header(PacketType::NewTask, 999, 0, seq);
            let w = run(&mut s, h).expect("a task always finds a worker");
            if queues[usize::from(w)].is_empty() {
                busy.push(w);
            }
            queues[usize::from(w)].push_back(seq);
            out.push(h);
        } else {
            let i = ((r >> 32) as usize) % busy.len();
            let w = busy[i];
            let q = &mut queues[usize::from(w)];
            let done = q.pop_front().unwrap();
            let ty = if q.is_empty() {
                busy.swap_remove(i);
                PacketType::TaskDoneIdle
            } else {
                PacketType::TaskDone
            };
            let h = header(ty, w, q.len() as u16, done);
            run(&mut s, h);
            out.push(h);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("leaf_passes");
    g.throughput(Throughput::Elements(EVENTS as u64));
    for (name, load) in [("idle_heavy", 0.45), ("busy", 0.52)] {
        let t = trace(load);
        let fresh = leaf();
        g.bench_function(name, |b| {
            b.iter_batched(
                || fresh.clone(),
                |mut s| {
                    for &h in &t {
                        black_box(run(&mut s, h));
                    }
                    s.counters().passes
                },
                BatchSize::LargeInput,
            )
        });
        let mut s = fresh.clone();
        t.iter().for_each(|&h| {
            run(&mut s, h);
        });
        let c = s.counters();
        eprintln!(
            "{name}: {} passes for {} packets ({} resubmitted), idle hits {}, pow2 {}",
            c.passes, EVENTS, c.resubmit_passes, c.idle_hits, c.pow2_decisions
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
