//! What the host driver's tests share: a small leaf (the `small` preset's sizes, one pool under
//! spine 1) and frames from workers.

#![allow(dead_code)]

use horus_model::config::Config;
use horus_model::wire::{self, Endpoint, HorusFrame, HorusHeader, MacAddr, PacketType};
use std::net::Ipv4Addr;

/// A leaf of the `small` preset with pool 1 (capacity 8), reporting to spine 1 on port 2.
pub const LEAF: &str = r#"
[switch]
role = "leaf"
id = 3
mac = "02:00:00:00:00:03"
ip = "10.0.0.3"
pass_through_port = 1
control_port = 0

[sizes]
pools = 8
nodes = 64
conn_table = 16

[[spines]]
id = 1
mac = "02:00:00:00:01:01"
ip = "10.0.1.1"
udp_port = 1234
port = 2

[[pools]]
id = 1
capacity = 8
spine = 1
spine_node = 0
"#;

/// [`LEAF`] with pool 1's thresholds and the workers `nodes` (worker `n` at 10.0.1.n, port
/// 8 + n).
pub fn leaf(nodes: &[u16], link_at: u16) -> Config {
    let mut t = LEAF.to_string();
    t += &format!("idle_link_at = {link_at}\nidle_unlink_at = 0\n");
    for &id in nodes {
        t += &format!(
            "  [[pools.nodes]]\n  id = {id}\n  mac = \"02:00:00:00:10:{id:02x}\"\n  ip = \"10.0.1.{id}\"\n  udp_port = 1234\n  port = {}\n",
            8 + id
        );
    }
    Config::from_toml_str(&t).unwrap()
}

/// A frame of `pkt_type` from `from` to the leaf, for pool `pool`, `src_id` as given.
pub fn frame(from: Endpoint, pkt_type: PacketType, pool: u16, src_id: u16) -> Vec<u8> {
    let leaf = Endpoint {
        mac: MacAddr([2, 0, 0, 0, 0, 7]),
        ip: Ipv4Addr::new(10, 0, 0, 7),
        udp_port: wire::HORUS_UDP_PORT,
    };
    let header = HorusHeader {
        pkt_type,
        more_packets: false,
        pool_id: pool,
        src_id,
        dst_id: 0,
        qlen: 0,
        seq_num: 0,
    };
    HorusFrame {
        ip_id: 1,
        ..HorusFrame::new(from, leaf, header, Vec::new())
    }
    .to_bytes()
}
