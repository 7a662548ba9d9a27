//! Seeded random streams.
//!
//! Every consumer of randomness gets its own stream derived from the run's seed and a fixed label,
//! so that, for example, the arrivals and service times of pool 7 are identical whichever policy
//! runs: comparisons between policies then see the same tasks (common random numbers), and changing
//! one policy's use of randomness cannot perturb the workload.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator used everywhere: small, fast and good enough for simulation.
pub type SimRng = Xoshiro256PlusPlus;

/// Labels of the independent streams.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// Pool sizes and worker placement.
    Placement,
    /// Arrivals and service times of one pool (the index is the pool); index `u64::MAX - s`:
    /// the prefilled queues of shard `s`.
    Workload,
    /// Choice of the spine scheduler that receives each task (the index is the shard, 0 when
    /// the run is not sharded; see `horus_sim::shard`).
    Entry,
    /// Decisions of the scheduling policy (the index is the shard).
    Policy,
    /// Packet loss on the network (the index is the shard).
    Network,
}

/// The stream `label`/`index` of the run seeded with `seed`.
pub fn stream(seed: u64, label: Stream, index: u64) -> SimRng {
    let tag = (label as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    SimRng::seed_from_u64(splitmix(seed ^ splitmix(tag)))
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
