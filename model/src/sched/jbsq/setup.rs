//! A JBSQ leaf from a switch's configuration (`[switch] leaf = "jbsq"`): the pools laid out in
//! the leaf's tables in the order the configuration lists them, each with its keys
//! ([`crate::config::JbsqParams`]), its region of the task buffer
//! ([`Config::buffer_regions`]) and its workers, each with its own `k` where it has one.

use super::*;
use crate::config::{Config, ConfigError, Role};
use crate::sched::state::SpineRef;

impl JbsqLeaf {
    /// The leaf `cfg` describes, and the messages its configuration sends (a pool's first
    /// worker links the rack at its spine). Node regions follow the pools' capacities; a pool's
    /// token rings hold `capacity · ceil(k / 8)` places a level, `k` the largest of the pool's
    /// and its workers' bounds. A configuration that is not a JBSQ leaf's, or whose rings do not
    /// fit the leaf's 65,536 entries, is refused, naming the key. The leaf has `cfg`'s table
    /// sizes and the default ring, buffer and slot sizes ([`JbsqSizes::DEFAULT`]).
    pub fn from_config(
        cfg: &Config,
        seed: u64,
    ) -> Result<(JbsqLeaf, Vec<(Signal, HorusHeader)>), ConfigError> {
        let sizes = JbsqSizes {
            pools: cfg.sizes.pools,
            nodes: cfg.sizes.nodes,
            conn_table: cfg.sizes.conn_table,
            ..JbsqSizes::DEFAULT
        };
        JbsqLeaf::from_config_at(cfg, sizes, seed)
    }

    /// The same for a leaf of `sizes` (a bitstream's: its rings and task buffer, which the
    /// configuration's pools share): `cfg`'s `[sizes]` must be its pools, nodes and connection
    /// entries.
    pub fn from_config_at(
        cfg: &Config,
        sizes: JbsqSizes,
        seed: u64,
    ) -> Result<(JbsqLeaf, Vec<(Signal, HorusHeader)>), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        if cfg.switch.role != Role::Leaf || cfg.switch.leaf != LeafKind::Jbsq {
            return Err(invalid(
                "switch.leaf".into(),
                "not the leaf that holds tasks: set leaf = \"jbsq\" on a leaf".into(),
            ));
        }
        let s = &cfg.sizes;
        if (s.pools, s.nodes, s.conn_table) != (sizes.pools, sizes.nodes, sizes.conn_table) {
            return Err(invalid(
                "sizes".into(),
                format!(
                    "{} pools, {} nodes, {} connections; the leaf has {}, {}, {}",
                    s.pools, s.nodes, s.conn_table, sizes.pools, sizes.nodes, sizes.conn_table
                ),
            ));
        }
        let mut leaf = JbsqLeaf::new(sizes, seed);
        leaf.set_conn_timeout_us(cfg.switch.conn_timeout_us);
        let mut signals = Vec::new();
        let (mut base, mut ring_base) = (0u32, 0u32);
        for (i, (pool, (queue_base, queue_slots))) in cfg
            .pools
            .iter()
            .zip(cfg.buffer_regions_of(sizes.buffer_slots))
            .enumerate()
        {
            let key = format!("pools[{i}]");
            let k_max = pool
                .nodes
                .iter()
                .filter_map(|n| n.k)
                .chain([pool.jbsq.k])
                .max()
                .unwrap_or(1);
            let ring_slots = u32::from(pool.capacity) * u32::from(k_max).div_ceil(LEVELS as u32);
            let ring_end = u64::from(ring_base) + LEVELS as u64 * u64::from(ring_slots);
            if ring_slots > u32::from(u16::MAX) || ring_end > u64::from(sizes.ring_entries) {
                return Err(invalid(
                    format!("{key}.k"),
                    format!(
                        "the pools' token rings need {ring_end} entries, more than the leaf's {} \
                         (a pool takes 8 x capacity x ceil(k / 8))",
                        sizes.ring_entries
                    ),
                ));
            }
            let spine = match (pool.spine, pool.spine_node) {
                (Some(id), Some(node)) => Some(SpineRef { id, node }),
                _ => None,
            };
            let jp = JbsqPool {
                base: base as u16,
                capacity: pool.capacity,
                k: pool.jbsq.k,
                ring_base,
                ring_slots: ring_slots as u16,
                queue_base,
                queue_slots,
                fallback: pool.jbsq.fallback,
                advertise: pool.jbsq.advertise,
                hold_us: pool.jbsq.hold_us,
                params: Params::from(&pool.params),
                spine,
            };
            leaf.configure_pool(pool.id, jp)
                .map_err(|e| invalid(key.clone(), refused(e)))?;
            for (j, n) in pool.nodes.iter().enumerate() {
                let s = leaf
                    .add_node_at(pool.id, n.id, n.k, 0, NodeAddr::of(n))
                    .map_err(|e| invalid(format!("{key}.nodes[{j}]"), refused(e)))?;
                signals.extend(s);
            }
            base += u32::from(pool.capacity);
            ring_base = ring_end as u32;
        }
        Ok((leaf, signals))
    }
}

/// A control pass's refusal, for a configuration error (the configuration's own checks come
/// first, so these mean the leaf's tables cannot hold what it asks).
fn refused(e: JbsqControlError) -> String {
    match e {
        JbsqControlError::PoolOutOfRange => "the pool ID is past the leaf's pools".into(),
        JbsqControlError::NodeOutOfRange => "the node ID is past the leaf's nodes".into(),
        JbsqControlError::UnknownPool => "the pool is not configured".into(),
        JbsqControlError::BadConfig => "the pool's regions or keys do not fit the leaf".into(),
        JbsqControlError::BadNode => "the node is in another pool already".into(),
        JbsqControlError::PoolFull => "the pool's node slots are full".into(),
        JbsqControlError::RegionOverlap => {
            "the pool's buffer region overlaps another pool's".into()
        }
    }
}
