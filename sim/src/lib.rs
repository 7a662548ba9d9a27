//! # horus-sim
//!
//! A deterministic discrete-event simulator of task scheduling across a whole datacenter, built to
//! evaluate Horus (NSDI'24) against its baselines at the scale of the paper's §5: a k = 48 fat tree
//! of 27,648 servers with about 1,000 worker pools, microsecond tasks, per-hop delay and loss, and
//! switch, leaf and worker failures.
//!
//! The files follow the architecture:
//! - [`queue`], the event queue (FIFO lanes for network delays and a radix heap, one (time,
//!   sequence) order) and simulated time.
//! - [`engine`], clients, network hops, worker FCFS queues, failures; calls the policy.
//! - [`worker`], a worker's FCFS queue and facts in one cache line.
//! - [`topology`], [`placement`], [`pydict`], [`cluster`]: the fat tree, which slots each pool
//!   occupies (random, or the public Horus simulator's datasets) and the per-pool view of it.
//! - [`workload`], service-time distributions, traces and load schedules.
//! - [`policy`], the `Policy` trait, the registry of policies ([`policy::POLICIES`]) and the
//!   policies: random, RackSched variants, JSQ, JIQ, the Horus ablations, and Horus itself, which
//!   runs the `horus-model` crate's schedulers.
//! - [`metrics`], [`output`], [`plot`], [`sweep`]: measurement, JSON / CSV / SVG output and
//!   parallel sweeps.
//! - [`config`], [`rng`]: one run's configuration and its seeded random streams.
//! - [`shard`]: one run on several cores, its pools split among engines run in parallel.
//!
//! A run is a pure function of its [`config::SimConfig`]: the same seed (and shard count) gives
//! identical results.
//!
//! `docs/simulator.md` is a developer's guide to this structure, with the steps of adding a
//! policy.

pub mod cluster;
pub mod config;
pub mod engine;
pub mod hdrf;
pub mod metrics;
mod node;
pub mod output;
pub mod placement;
pub mod plot;
pub mod policy;
pub mod pydict;
pub mod queue;
pub use horus_workload::rng;
pub mod shard;
pub mod sweep;
pub mod topology;
pub mod worker;
pub mod workload;

/// Restarts this process with glibc's heap on transparent huge pages (`glibc.malloc.hugetlb=1`)
/// unless it already is, or `HORUS_SIM_HUGE_PAGES=0`. A datacenter-scale run touches hundreds of
/// megabytes at random, so with 4 KiB pages nearly every access also misses the TLB; with huge
/// pages the k = 48 Horus run is about a fifth faster. For binaries, before they do anything else;
/// returns (doing nothing) where this does not apply or the restart fails. No effect on results.
pub fn use_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        const TUNABLE: &str = "glibc.malloc.hugetlb=1";
        let current = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        if current.contains("glibc.malloc.hugetlb")
            || std::env::var_os("HORUS_SIM_HUGE_PAGES").is_some_and(|v| v == "0")
        {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let tunables = if current.is_empty() {
            TUNABLE.to_string()
        } else {
            format!("{current}:{TUNABLE}")
        };
        // Only returns if the exec failed: then carry on with the ordinary heap.
        let _ = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", tunables)
            .exec();
    }
}

/// Asks the CPU to bring the cache line of `r` closer, without waiting for it: the engine calls
/// it for what the next event will read, so that the cache misses of consecutive events overlap.
/// A hint only: no effect on results.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_ptr(std::ptr::from_ref(r).cast::<u8>());
}

/// [`prefetch`] for every cache line of `*r` (a struct larger than one line).
#[inline(always)]
pub fn prefetch_all<T>(r: &T) {
    let p = std::ptr::from_ref(r).cast::<u8>();
    for off in (0..std::mem::size_of::<T>()).step_by(64) {
        prefetch_ptr(p.wrapping_add(off));
    }
}

/// [`prefetch`] for every cache line of a slice.
#[inline(always)]
pub fn prefetch_slice<T>(s: &[T]) {
    let p = s.as_ptr().cast::<u8>();
    let end = p.wrapping_add(std::mem::size_of_val(s));
    let mut line = p;
    while line < end {
        prefetch_ptr(line);
        line = line.wrapping_add(64);
    }
    // The last line, when the slice does not start on a line boundary.
    if !s.is_empty() {
        prefetch_ptr(end.wrapping_sub(1));
    }
}

/// [`prefetch`] for the cache line at address `addr`, which may be any address: a prefetch never
/// faults. For prefetching what an address kept aside (never read through) points to.
#[inline(always)]
pub fn prefetch_addr(addr: usize) {
    prefetch_ptr(addr as *const u8);
}

#[inline(always)]
fn prefetch_ptr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has; a prefetch reads no
        // memory architecturally and never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
