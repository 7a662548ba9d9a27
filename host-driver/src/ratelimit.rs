//! Token buckets on registrations (WORKER_ID), one per source address and one per pool, so that a
//! flood of registrations costs the switch a bounded number of control passes and state-file
//! writes a second, and the controller a bounded memory.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use crate::controller::Micros;

/// A token bucket: `burst` tokens at most, refilled at `per_s` a second; a token is worth
/// 1,000,000 units so that the refill is exact in microseconds.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    units: u64,
    at: Micros,
}

/// A bucket's size and refill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub burst: u64,
    pub per_s: u64,
}

const UNIT: u64 = 1_000_000;

impl Bucket {
    fn full(r: Rate, now: Micros) -> Bucket {
        Bucket {
            units: r.burst * UNIT,
            at: now,
        }
    }

    fn refill(&mut self, r: Rate, now: Micros) {
        let dt = now.saturating_sub(self.at);
        self.units = self
            .units
            .saturating_add(dt.saturating_mul(r.per_s))
            .min(r.burst * UNIT);
        self.at = self.at.max(now);
    }

    fn take(&mut self, r: Rate, now: Micros) -> bool {
        self.refill(r, now);
        if self.units >= UNIT {
            self.units -= UNIT;
            true
        } else {
            false
        }
    }
}

/// Why a registration was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limited {
    /// Its source spent its bucket.
    Source,
    /// Its pool's bucket is spent (registrations from many sources).
    Pool,
    /// More sources are registering at once than the limiter keeps buckets for.
    Sources,
}

/// Token buckets on registrations, per source address and per pool.
#[derive(Clone, Debug)]
pub struct RateLimit {
    pub per_source: Rate,
    pub per_pool: Rate,
    /// At most this many source buckets are kept; full ones (their source quiet for a while)
    /// are dropped first when it is reached.
    pub max_sources: usize,
    sources: HashMap<Ipv4Addr, Bucket>,
    pools: HashMap<u16, Bucket>,
}

impl Default for RateLimit {
    /// 16 registrations at once from a source address (a host's slots starting together),
    /// then 4 a second (a worker asks again every 200 ms until answered); 64 at once into a
    /// pool, then 32 a second; 4,096 sources tracked.
    fn default() -> RateLimit {
        RateLimit::new(
            Rate {
                burst: 16,
                per_s: 4,
            },
            Rate {
                burst: 64,
                per_s: 32,
            },
            4096,
        )
    }
}

impl RateLimit {
    pub fn new(per_source: Rate, per_pool: Rate, max_sources: usize) -> RateLimit {
        RateLimit {
            per_source,
            per_pool,
            max_sources,
            sources: HashMap::new(),
            pools: HashMap::new(),
        }
    }

    /// Whether a registration from `ip` into `pool` at `now` is admitted (its tokens taken).
    pub fn admit(&mut self, ip: Ipv4Addr, pool: u16, now: Micros) -> Result<(), Limited> {
        let (rs, rp) = (self.per_source, self.per_pool);
        if !self.sources.contains_key(&ip) && self.sources.len() >= self.max_sources {
            self.sources.retain(|_, b| {
                b.refill(rs, now);
                b.units < rs.burst * UNIT
            });
            if self.sources.len() >= self.max_sources {
                return Err(Limited::Sources);
            }
        }
        let s = self
            .sources
            .entry(ip)
            .or_insert_with(|| Bucket::full(rs, now));
        if !s.take(rs, now) {
            return Err(Limited::Source);
        }
        let p = self
            .pools
            .entry(pool)
            .or_insert_with(|| Bucket::full(rp, now));
        if !p.take(rp, now) {
            return Err(Limited::Pool);
        }
        Ok(())
    }

    /// Source buckets kept (bounded by `max_sources`).
    pub fn sources(&self) -> usize {
        self.sources.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_admit_their_burst_then_their_rate_and_keep_a_bounded_number_of_sources() {
        let mut r = RateLimit::new(Rate { burst: 2, per_s: 1 }, Rate { burst: 3, per_s: 1 }, 2);
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        let c = Ipv4Addr::new(10, 0, 0, 3);
        assert_eq!(r.admit(a, 1, 0), Ok(()));
        assert_eq!(r.admit(a, 1, 0), Ok(()));
        assert_eq!(r.admit(a, 1, 0), Err(Limited::Source));
        assert_eq!(r.admit(a, 1, 999_999), Err(Limited::Source));
        assert_eq!(r.admit(a, 1, 1_000_000), Ok(()), "one token a second");
        assert_eq!(r.admit(b, 1, 1_000_000), Ok(()), "the pool's last token");
        assert_eq!(r.admit(b, 1, 1_000_000), Err(Limited::Pool));
        assert_eq!(r.admit(a, 2, 2_000_000), Ok(()), "another pool has its own");
        assert_eq!(r.admit(c, 2, 2_000_000), Err(Limited::Sources));
        // a's and b's buckets full again after a quiet while: dropped for c.
        assert_eq!(r.admit(c, 2, 10_000_000), Ok(()));
        assert!(r.sources() <= 2);
    }
}
