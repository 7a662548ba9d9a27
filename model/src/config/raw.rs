//! The configuration as written in TOML, before defaults are applied: what serde reads and
//! writes, and its overlay on the defaults.

use serde::{Deserialize, Serialize};

use super::*;

/// The config as written in TOML, before defaults are applied.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub(super) switch: SwitchConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) sizes: Option<RawSizes>,
    #[serde(default)]
    pub(super) defaults: RawParams,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) spines: Vec<SpineLink>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) pools: Vec<RawPool>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub(super) security: SecurityConfig,
}

pub(super) fn is_default(s: &SecurityConfig) -> bool {
    s.allow.is_empty()
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSizes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) pools: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) nodes: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) conn_table: Option<u32>,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_link_at: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_unlink_at: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) report_delta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_repair_gap_us: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) k: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) advertise: Option<AdvertiseKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) room: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) hold_us: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) fallback: Option<Fallback>,
}

/// What a JBSQ pool advertises, as written (`room` is a key of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum AdvertiseKey {
    Idle,
    Places,
    Queue,
}

/// A place's JBSQ keys as written.
#[derive(Clone, Copy, Default)]
pub(super) struct RawJbsq {
    pub(super) k: Option<u8>,
    pub(super) advertise: Option<AdvertiseKey>,
    pub(super) room: Option<u16>,
    pub(super) hold_us: Option<u16>,
    pub(super) fallback: Option<Fallback>,
}

impl RawJbsq {
    /// The first key written, for a message.
    pub(super) fn first_key(&self) -> Option<&'static str> {
        [
            ("k", self.k.is_some()),
            ("advertise", self.advertise.is_some()),
            ("room", self.room.is_some()),
            ("hold_us", self.hold_us.is_some()),
            ("fallback", self.fallback.is_some()),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key))
    }

    /// `base` with the keys written here; `room` 0 where `queue` is advertised without one
    /// ([`Config::check`] refuses it).
    pub(super) fn overlay(&self, base: &JbsqParams) -> JbsqParams {
        let advertise = match self.advertise.unwrap_or(advertise_key(base.advertise)) {
            AdvertiseKey::Idle => Advertise::Idle,
            AdvertiseKey::Places => Advertise::Places,
            AdvertiseKey::Queue => Advertise::Queue {
                room: self.room.or(room_of(base.advertise)).unwrap_or(0),
            },
        };
        JbsqParams {
            k: self.k.unwrap_or(base.k),
            advertise,
            hold_us: self.hold_us.unwrap_or(base.hold_us),
            fallback: self.fallback.unwrap_or(base.fallback),
        }
    }

    /// The keys of `params` that differ from `base`.
    pub(super) fn diff(params: &JbsqParams, base: &JbsqParams) -> RawJbsq {
        let all = RawJbsq::all(params);
        RawJbsq {
            k: all.k.filter(|&k| k != base.k),
            advertise: all
                .advertise
                .filter(|&a| a != advertise_key(base.advertise)),
            room: all.room.filter(|&r| Some(r) != room_of(base.advertise)),
            hold_us: all.hold_us.filter(|&h| h != base.hold_us),
            fallback: all.fallback.filter(|&f| f != base.fallback),
        }
    }

    /// Every key of `params`.
    pub(super) fn all(params: &JbsqParams) -> RawJbsq {
        RawJbsq {
            k: Some(params.k),
            advertise: Some(advertise_key(params.advertise)),
            room: room_of(params.advertise),
            hold_us: Some(params.hold_us),
            fallback: Some(params.fallback),
        }
    }
}

pub(super) fn advertise_key(a: Advertise) -> AdvertiseKey {
    match a {
        Advertise::Idle => AdvertiseKey::Idle,
        Advertise::Places => AdvertiseKey::Places,
        Advertise::Queue { .. } => AdvertiseKey::Queue,
    }
}

pub(super) fn room_of(a: Advertise) -> Option<u16> {
    match a {
        Advertise::Queue { room } => Some(room),
        _ => None,
    }
}

impl RawParams {
    pub(super) fn jbsq(&self) -> RawJbsq {
        RawJbsq {
            k: self.k,
            advertise: self.advertise,
            room: self.room,
            hold_us: self.hold_us,
            fallback: self.fallback,
        }
    }

    pub(super) fn overlay(&self, base: &PoolParams) -> PoolParams {
        PoolParams {
            idle_link_at: self.idle_link_at.unwrap_or(base.idle_link_at),
            idle_unlink_at: self.idle_unlink_at.unwrap_or(base.idle_unlink_at),
            report_delta_raw: self
                .report_delta
                .map_or(base.report_delta_raw, delta_to_raw),
            idle_repair_gap_us: self.idle_repair_gap_us.unwrap_or(base.idle_repair_gap_us),
        }
    }

    /// The keys of `params` that differ from `base`.
    pub(super) fn diff(params: &PoolParams, base: &PoolParams) -> RawParams {
        RawParams {
            idle_link_at: (params.idle_link_at != base.idle_link_at).then_some(params.idle_link_at),
            idle_unlink_at: (params.idle_unlink_at != base.idle_unlink_at)
                .then_some(params.idle_unlink_at),
            report_delta: (params.report_delta_raw != base.report_delta_raw)
                .then_some(params.report_delta()),
            idle_repair_gap_us: (params.idle_repair_gap_us != base.idle_repair_gap_us)
                .then_some(params.idle_repair_gap_us),
            ..RawParams::default()
        }
    }
}

/// A pool as written; the parameter overrides sit directly in the pool's table.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPool {
    pub(super) id: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) capacity: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) spine: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) spine_node: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_link_at: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_unlink_at: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) report_delta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) idle_repair_gap_us: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) k: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) advertise: Option<AdvertiseKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) room: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) hold_us: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) fallback: Option<Fallback>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) buffer_slots: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) nodes: Vec<NodeConfig>,
}

impl RawPool {
    pub(super) fn overrides(&self) -> RawParams {
        RawParams {
            idle_link_at: self.idle_link_at,
            idle_unlink_at: self.idle_unlink_at,
            report_delta: self.report_delta,
            idle_repair_gap_us: self.idle_repair_gap_us,
            ..RawParams::default()
        }
    }

    pub(super) fn jbsq(&self) -> RawJbsq {
        RawJbsq {
            k: self.k,
            advertise: self.advertise,
            room: self.room,
            hold_us: self.hold_us,
            fallback: self.fallback,
        }
    }
}

impl From<&Config> for RawConfig {
    fn from(c: &Config) -> RawConfig {
        RawConfig {
            switch: c.switch.clone(),
            sizes: Some(RawSizes {
                pools: Some(c.sizes.pools),
                nodes: Some(c.sizes.nodes),
                conn_table: Some(c.sizes.conn_table),
            }),
            defaults: {
                // A JBSQ leaf's keys are written on a JBSQ leaf only.
                let j = if c.switch.leaf == LeafKind::Jbsq {
                    RawJbsq::all(&c.jbsq_defaults)
                } else {
                    RawJbsq::default()
                };
                RawParams {
                    idle_link_at: Some(c.defaults.idle_link_at),
                    idle_unlink_at: Some(c.defaults.idle_unlink_at),
                    report_delta: Some(c.defaults.report_delta()),
                    idle_repair_gap_us: Some(c.defaults.idle_repair_gap_us),
                    k: j.k,
                    advertise: j.advertise,
                    room: j.room,
                    hold_us: j.hold_us,
                    fallback: j.fallback,
                }
            },
            spines: c.spines.clone(),
            pools: c
                .pools
                .iter()
                .map(|p| {
                    let overrides = RawParams::diff(&p.params, &c.defaults);
                    let j = RawJbsq::diff(&p.jbsq, &c.jbsq_defaults);
                    RawPool {
                        id: p.id,
                        capacity: Some(p.capacity),
                        spine: p.spine,
                        spine_node: p.spine_node,
                        idle_link_at: overrides.idle_link_at,
                        idle_unlink_at: overrides.idle_unlink_at,
                        report_delta: overrides.report_delta,
                        idle_repair_gap_us: overrides.idle_repair_gap_us,
                        k: j.k,
                        advertise: j.advertise,
                        room: j.room,
                        hold_us: j.hold_us,
                        fallback: j.fallback,
                        buffer_slots: p.buffer_slots,
                        nodes: p.nodes.clone(),
                    }
                })
                .collect(),
            security: c.security.clone(),
        }
    }
}

impl From<Config> for RawConfig {
    fn from(c: Config) -> RawConfig {
        RawConfig::from(&c)
    }
}
