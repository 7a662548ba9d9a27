//! The datacenter network: a fat tree of `k` pods.
//!
//! Each pod has `k/2` leaf (top-of-rack) switches and `k/2` aggregation switches, which Horus calls
//! spines; core switches connect the pods and run no scheduler. With the paper's k = 48 that gives
//! 1,152 racks and 1,152 spines (Horus §5.1). A rack holds `servers_per_rack` servers with
//! `slots_per_server` worker slots each.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Number of pods, the fat tree's `k` (even).
    pub pods: u32,
    /// Servers under each leaf switch.
    pub servers_per_rack: u32,
    /// Worker slots (cores) per server.
    pub slots_per_server: u32,
}

impl Default for Topology {
    /// The paper's datacenter: k = 48, 24 servers per rack, 32 workers per server (27,648 servers).
    fn default() -> Self {
        Self {
            pods: 48,
            servers_per_rack: 24,
            slots_per_server: 32,
        }
    }
}

impl Topology {
    /// Leaf switches (and aggregation switches) per pod.
    pub fn racks_per_pod(&self) -> u32 {
        self.pods / 2
    }

    pub fn racks(&self) -> u32 {
        self.pods * self.racks_per_pod()
    }

    pub fn spines(&self) -> u32 {
        self.pods * self.racks_per_pod()
    }

    pub fn servers(&self) -> u32 {
        self.racks() * self.servers_per_rack
    }

    pub fn slots(&self) -> u64 {
        self.servers() as u64 * self.slots_per_server as u64
    }

    pub fn rack_of_server(&self, server: u32) -> u32 {
        server / self.servers_per_rack
    }

    pub fn pod_of_rack(&self, rack: u32) -> u32 {
        rack / self.racks_per_pod()
    }

    /// Switch-to-switch hops between a spine in `pod` and the leaf of `rack`: one inside the pod,
    /// three (aggregation, core, aggregation) across pods.
    pub fn spine_leaf_hops(&self, pod: u32, rack: u32) -> u32 {
        if self.pod_of_rack(rack) == pod { 1 } else { 3 }
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.pods >= 2 && self.pods % 2 == 0,
            "pods (k) must be even and >= 2, got {}",
            self.pods
        );
        anyhow::ensure!(
            self.servers_per_rack > 0 && self.slots_per_server > 0,
            "racks need servers and servers need slots"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_matches_the_papers_datacenter() {
        let t = Topology::default();
        assert_eq!(t.racks(), 1152);
        assert_eq!(t.spines(), 1152);
        assert_eq!(t.servers(), 27_648);
        assert_eq!(t.slots(), 884_736);
    }

    #[test]
    fn crossing_pods_costs_three_hops() {
        let t = Topology {
            pods: 4,
            servers_per_rack: 2,
            slots_per_server: 2,
        };
        assert_eq!(t.spine_leaf_hops(0, 1), 1);
        assert_eq!(t.spine_leaf_hops(0, 2), 3);
        assert_eq!(t.pod_of_rack(7), 3);
    }
}
