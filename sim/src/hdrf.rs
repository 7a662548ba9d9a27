//! Pool sizes by hierarchical dominant resource fairness (H-DRF: Bhattacharya et al., SoCC'13;
//! seed 003): tenants in a weighted hierarchy of groups, each asking for workers that need a slot
//! and some memory, get the datacenter's workers before scheduling starts.
//!
//! The datacenter is one pool of resources, as DRF sees it: every slot, and `memory_gb` per
//! server. A tenant's worker takes one slot and the tenant's `memory_gb`. The pools are then
//! placed on random free slots, without regard to a server's memory: what fits the datacenter's
//! memory may not fit every server's (placing by memory is planned). Its dominant share is
//! the larger of its shares of slots and of memory; a group's is that of the sum of its members'
//! consumption. Workers are handed out one at a time (progressive filling), each to the tenant
//! reached by walking down from the root, at every level to the child with the least dominant
//! share over weight among those with a tenant still asking under them. A tenant stops asking
//! (is *blocked*) when it has all the workers it asked for or its next worker no longer fits.
//!
//! Ties go to the sibling listed first. This is H-DRF's progressive filling from nothing (its
//! static version): the pools are sized once, before the run. Dynamic H-DRF adds a rescaling of
//! the consumption of tenants still asking, which keeps a group's tenants from starving as tasks
//! finish and tenants come back; a one-shot allocation has no such history, and in the cases the
//! tests try (a group with a memory-heavy tenant, one with complementary tenants) the rescaling
//! we tried changed no allocation, so it is left out (planned with pools resized during a run).
//!
//! What a user writes (`--tenants FILE`, TOML):
//!
//! ```toml
//! memory_gb = 256          # per server
//!
//! [[group]]                # optional: a group's weight among its siblings (default 1)
//! path = "fe"
//! weight = 3
//!
//! [[tenant]]               # a pool, in this order
//! path = "fe/dev"          # groups separated by '/', the last part the tenant's own name
//! weight = 1               # among its siblings (default 1)
//! memory_gb = 4            # per worker
//! workers = 2000           # the most it asks for
//! ```

use crate::topology::Topology;
use anyhow::{Context, bail, ensure};
use serde::{Deserialize, Serialize};

/// The tenants and their hierarchy, as read from a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tenants {
    /// Memory of one server.
    pub memory_gb: f64,
    #[serde(default, rename = "group")]
    pub groups: Vec<Group>,
    #[serde(rename = "tenant")]
    pub tenants: Vec<Tenant>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub path: String,
    #[serde(default = "one")]
    pub weight: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tenant {
    pub path: String,
    #[serde(default = "one")]
    pub weight: f64,
    /// Memory one of its workers needs.
    pub memory_gb: f64,
    /// The most workers it asks for.
    pub workers: u32,
}

fn one() -> f64 {
    1.0
}

/// A node of the hierarchy: the root, a group or a tenant.
#[derive(Debug)]
struct Node {
    weight: f64,
    children: Vec<usize>,
    /// For a tenant: its index in [`Tenants::tenants`].
    tenant: Option<usize>,
}

impl Tenants {
    /// Reads and checks a tenants file.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let t: Tenants = toml::from_str(text)?;
        t.validate()?;
        Ok(t)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        ensure!(
            self.memory_gb.is_finite() && self.memory_gb > 0.0,
            "memory_gb per server must be positive, got {}",
            self.memory_gb
        );
        ensure!(!self.tenants.is_empty(), "no [[tenant]] given");
        let mut seen = std::collections::HashSet::new();
        for t in &self.tenants {
            check_path(&t.path)?;
            ensure!(
                seen.insert(t.path.as_str()),
                "tenant {} given twice",
                t.path
            );
            ensure!(
                t.weight.is_finite() && t.weight > 0.0,
                "tenant {}: weight must be positive, got {}",
                t.path,
                t.weight
            );
            ensure!(
                t.memory_gb.is_finite() && (0.0..=self.memory_gb).contains(&t.memory_gb),
                "tenant {}: memory_gb per worker must be from 0 to a server's {}, got {}",
                t.path,
                self.memory_gb,
                t.memory_gb
            );
            ensure!(t.workers >= 1, "tenant {} asks for no worker", t.path);
        }
        for g in &self.groups {
            check_path(&g.path)?;
            ensure!(
                g.weight.is_finite() && g.weight > 0.0,
                "group {}: weight must be positive, got {}",
                g.path,
                g.weight
            );
            ensure!(
                self.tenants
                    .iter()
                    .any(|t| t.path.starts_with(&format!("{}/", g.path))),
                "group {} has no tenant",
                g.path
            );
            ensure!(
                !self.tenants.iter().any(|t| t.path == g.path),
                "{} is both a group and a tenant",
                g.path
            );
        }
        for t in &self.tenants {
            // A tenant cannot also be a group holding others.
            ensure!(
                !self
                    .tenants
                    .iter()
                    .any(|o| o.path.starts_with(&format!("{}/", t.path))),
                "tenant {} has tenants under it",
                t.path
            );
        }
        Ok(())
    }

    /// The hierarchy: node 0 is the root; groups in the order first named, tenants in file
    /// order.
    fn tree(&self) -> Vec<Node> {
        let mut nodes = vec![Node {
            weight: 1.0,
            children: Vec::new(),
            tenant: None,
        }];
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let weight_of = |path: &str| {
            self.groups
                .iter()
                .find(|g| g.path == path)
                .map_or(1.0, |g| g.weight)
        };
        for (i, t) in self.tenants.iter().enumerate() {
            let parts: Vec<&str> = t.path.split('/').collect();
            let mut parent = 0;
            for depth in 1..parts.len() {
                let path = parts[..depth].join("/");
                parent = match index.get(&path) {
                    Some(&n) => n,
                    None => {
                        nodes.push(Node {
                            weight: weight_of(&path),
                            children: Vec::new(),
                            tenant: None,
                        });
                        let n = nodes.len() - 1;
                        nodes[parent].children.push(n);
                        index.insert(path, n);
                        n
                    }
                };
            }
            nodes.push(Node {
                weight: t.weight,
                children: Vec::new(),
                tenant: Some(i),
            });
            let n = nodes.len() - 1;
            nodes[parent].children.push(n);
        }
        nodes
    }

    /// Each tenant's workers by H-DRF's progressive filling from nothing, in file order, on
    /// `topology`'s datacenter.
    pub fn allocate(&self, topology: &Topology) -> Vec<u32> {
        let slots = topology.slots() as f64;
        let memory = f64::from(topology.servers()) * self.memory_gb;
        self.allocate_on(slots, memory)
    }

    /// As [`Tenants::allocate`], on `slots` slots and `memory` GB in all.
    pub fn allocate_on(&self, slots: f64, memory: f64) -> Vec<u32> {
        let nodes = self.tree();
        // The tenants under each node.
        let mut under: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for v in (0..nodes.len()).rev() {
            // Children come after their parent: a reverse walk sees them first.
            under[v] = match nodes[v].tenant {
                Some(i) => vec![i],
                None => nodes[v]
                    .children
                    .iter()
                    .flat_map(|&c| under[c].clone())
                    .collect(),
            };
        }
        let n = self.tenants.len();
        let mut workers = vec![0u32; n];
        let (mut free_slots, mut free_memory) = (slots, memory);
        let share =
            |c: (f64, f64)| (c.0 / slots).max(if memory > 0.0 { c.1 / memory } else { 0.0 });
        let consumption = |workers: &[u32], i: usize| {
            let w = f64::from(workers[i]);
            (w, w * self.tenants[i].memory_gb)
        };
        loop {
            let blocked: Vec<bool> = (0..n)
                .map(|i| {
                    // (A hair of slack for the floating-point sum of what was handed out.)
                    workers[i] >= self.tenants[i].workers
                        || free_slots < 1.0
                        || free_memory + 1e-9 < self.tenants[i].memory_gb
                })
                .collect();
            if blocked.iter().all(|&b| b) {
                break;
            }
            // A node's standing: the dominant share of its tenants' consumption, over its weight.
            let standing = |v: usize| -> f64 {
                let used = under[v].iter().fold((0.0, 0.0), |a, &i| {
                    let c = consumption(&workers, i);
                    (a.0 + c.0, a.1 + c.1)
                });
                share(used) / nodes[v].weight
            };
            let mut v = 0;
            while nodes[v].tenant.is_none() {
                v = nodes[v]
                    .children
                    .iter()
                    .copied()
                    .filter(|&c| under[c].iter().any(|&i| !blocked[i]))
                    .map(|c| (c, standing(c)))
                    .min_by(|(_, a), (_, b)| a.total_cmp(b))
                    .expect("a node with a tenant asking has a child with one")
                    .0;
            }
            let i = nodes[v].tenant.expect("a leaf is a tenant");
            workers[i] += 1;
            free_slots -= 1.0;
            free_memory -= self.tenants[i].memory_gb;
        }
        workers
    }

    /// Pool sizes for a run: every tenant must get a worker.
    pub fn pool_sizes(&self, topology: &Topology) -> anyhow::Result<Vec<u32>> {
        let sizes = self.allocate(topology);
        if let Some(i) = sizes.iter().position(|&s| s == 0) {
            bail!(
                "tenant {} gets no worker: the datacenter ({} slots, {} GB) is full before it",
                self.tenants[i].path,
                topology.slots(),
                f64::from(topology.servers()) * self.memory_gb
            );
        }
        Ok(sizes)
    }
}

/// Reads a tenants file.
pub fn read(path: &str) -> anyhow::Result<Tenants> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading tenants {path}"))?;
    Tenants::parse(&text).with_context(|| format!("tenants {path}"))
}

fn check_path(path: &str) -> anyhow::Result<()> {
    ensure!(
        !path.is_empty() && path.split('/').all(|p| !p.is_empty()),
        "{path:?} is not a path of names separated by '/'"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenants(memory_gb: f64, groups: &[(&str, f64)], list: &[(&str, f64, f64, u32)]) -> Tenants {
        let t = Tenants {
            memory_gb,
            groups: groups
                .iter()
                .map(|&(path, weight)| Group {
                    path: path.into(),
                    weight,
                })
                .collect(),
            tenants: list
                .iter()
                .map(|&(path, weight, memory_gb, workers)| Tenant {
                    path: path.into(),
                    weight,
                    memory_gb,
                    workers,
                })
                .collect(),
        };
        t.validate().unwrap();
        t
    }

    /// Every tenant within a worker of its share, and every slot handed out.
    fn near(got: &[u32], ideal: &[f64]) {
        for (&g, &i) in got.iter().zip(ideal) {
            assert!((f64::from(g) - i).abs() <= 1.0, "{got:?} against {ideal:?}");
        }
        assert_eq!(
            f64::from(got.iter().sum::<u32>()),
            ideal.iter().sum::<f64>().round()
        );
    }

    #[test]
    fn flat_tenants_get_equal_dominant_shares() {
        // 100 slots and 100 GB: A's workers need 2 GB (memory is its dominant resource, 2 % a
        // worker), B's 0.5 GB (slots, 1 % a worker). DRF equalizes 0.02 a = 0.01 b with
        // a + b = 100 slots: a = 33.3, b = 66.7, to within a worker.
        let t = tenants(8.0, &[], &[("a", 1.0, 2.0, 1000), ("b", 1.0, 0.5, 1000)]);
        near(&t.allocate_on(100.0, 100.0), &[100.0 / 3.0, 200.0 / 3.0]);
        // Weights scale the shares: with weight 2, B may hold twice A's dominant share.
        let mut w = t.clone();
        w.tenants[1].weight = 2.0;
        let got = w.allocate_on(100.0, 100.0);
        assert!(
            got[0] >= 19 && got[0] <= 21 && got[0] + got[1] == 100,
            "{got:?}"
        );
    }

    #[test]
    fn a_groups_unused_share_goes_to_its_own_tenants_first() {
        // Two groups of equal weight, one resource (no memory): fe/dev asks for only 10 of 100
        // workers, so fe/prod takes the rest of fe's half; ads's tenants split the other half.
        // A flat DRF would give fe/prod 30.
        let t = tenants(
            1.0,
            &[],
            &[
                ("fe/dev", 1.0, 0.0, 10),
                ("fe/prod", 1.0, 0.0, 1000),
                ("ads/dev", 1.0, 0.0, 1000),
                ("ads/prod", 1.0, 0.0, 1000),
            ],
        );
        assert_eq!(t.allocate_on(100.0, 100.0), vec![10, 40, 25, 25]);
        // Group weights: fe 3, ads 1.
        let g = tenants(
            1.0,
            &[("fe", 3.0)],
            &[
                ("fe/dev", 1.0, 0.0, 1000),
                ("fe/prod", 1.0, 0.0, 1000),
                ("ads/dev", 1.0, 0.0, 1000),
                ("ads/prod", 1.0, 0.0, 1000),
            ],
        );
        near(&g.allocate_on(100.0, 100.0), &[37.5, 37.5, 12.5, 12.5]);
    }

    #[test]
    fn a_groups_share_counts_what_each_of_its_tenants_holds() {
        // fe holds a memory-heavy tenant (8 GB a worker, 5 workers: 40 % of the memory, its
        // dominant resource) and a light one; ads one light tenant. The groups' dominant
        // shares meet at half the slots each: fe's light tenant gets 45, ads's 50.
        let t = tenants(
            8.0,
            &[],
            &[
                ("fe/heavy", 1.0, 8.0, 5),
                ("fe/light", 1.0, 0.1, 1000),
                ("ads/light", 1.0, 0.1, 1000),
            ],
        );
        near(&t.allocate_on(100.0, 100.0), &[5.0, 45.0, 50.0]);
    }

    #[test]
    fn a_file_is_read_and_checked() {
        let text = r#"
memory_gb = 256
[[group]]
path = "fe"
weight = 3
[[tenant]]
path = "fe/dev"
memory_gb = 4
workers = 200
[[tenant]]
path = "ads"
weight = 2
memory_gb = 1
workers = 300
"#;
        let t = Tenants::parse(text).unwrap();
        assert_eq!(t.tenants.len(), 2);
        assert_eq!(t.tenants[0].weight, 1.0);
        assert_eq!(t.groups[0].weight, 3.0);
        for (bad, why) in [
            (
                text.replace("workers = 200", "workers = 0"),
                "asks for no worker",
            ),
            (
                text.replace("path = \"ads\"", "path = \"fe/dev\""),
                "given twice",
            ),
            (
                text.replace("memory_gb = 4", "memory_gb = 400"),
                "memory_gb per worker",
            ),
            (
                text.replace("path = \"fe\"", "path = \"mail\""),
                "group mail has no tenant",
            ),
            (
                text.replace("path = \"ads\"", "path = \"fe//x\""),
                "not a path",
            ),
            (
                text.replace("weight = 3", "weight = 0"),
                "weight must be positive",
            ),
            (
                text.replace("memory_gb = 256", "memory_gb = 256\ncpus = 3"),
                "unknown field",
            ),
        ] {
            let e = format!("{:#}", Tenants::parse(&bad).unwrap_err());
            assert!(e.contains(why), "{why}: {e}");
        }
        // Too many tenants for the datacenter: a clear error, not an empty pool.
        let topo = Topology {
            pods: 2,
            servers_per_rack: 1,
            slots_per_server: 1,
        };
        let many = tenants(
            1.0,
            &[],
            &[("a", 1.0, 0.0, 5), ("b", 1.0, 0.0, 5), ("c", 1.0, 0.0, 5)],
        );
        let e = many.pool_sizes(&topo).unwrap_err().to_string();
        assert!(e.contains("tenant c gets no worker"), "{e}");
    }
}
