//! Who may speak to a switch's control plane.
//!
//! - [`Allow`]: the networks whose hosts the controller (and a software switch) take frames
//!   from, and to which a software switch relays: the configuration's `[security] allow`, the
//!   hosts' `--allow` flags, or, when neither lists any, loopback and the `/24` of every address
//!   the configuration names (the switch itself, its spines, its nodes), the rack's network.
//!
//! `docs/host-driver.md` ("Security model") says what this protects and what it does not.

use std::net::Ipv4Addr;

use horus_model::config::Config;
use horus_model::net::Ipv4Net;

/// The networks allowed to speak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    nets: Vec<Ipv4Net>,
}

impl Allow {
    /// Every address (a library user's default; the daemons choose [`Allow::resolve`]'s).
    pub fn any() -> Allow {
        Allow {
            nets: vec![Ipv4Net::of(Ipv4Addr::UNSPECIFIED, 0)],
        }
    }

    /// Exactly `nets`.
    pub fn new(nets: Vec<Ipv4Net>) -> Allow {
        Allow { nets }
    }

    /// What a daemon allows: the configuration's `[security] allow` and the `--allow` flags
    /// together; when they list nothing, [`Allow::default_for`] the configuration and the switch's
    /// own address.
    pub fn resolve(cfg: Option<&Config>, flags: &[Ipv4Net], switch_ip: Option<Ipv4Addr>) -> Allow {
        let mut nets: Vec<Ipv4Net> = cfg.map(|c| c.security.allow.clone()).unwrap_or_default();
        nets.extend_from_slice(flags);
        if nets.is_empty() {
            Allow::default_for(cfg, switch_ip)
        } else {
            Allow { nets }
        }
    }

    /// The default: loopback (127.0.0.0/8: the hosts of one machine, the demo's), and the `/24`
    /// of the switch's own address and of every spine and node the configuration names.
    pub fn default_for(cfg: Option<&Config>, switch_ip: Option<Ipv4Addr>) -> Allow {
        let mut ips: Vec<Ipv4Addr> = switch_ip.into_iter().collect();
        if let Some(c) = cfg {
            ips.push(c.switch.ip);
            ips.extend(c.spines.iter().map(|s| s.ip));
            ips.extend(c.pools.iter().flat_map(|p| p.nodes.iter().map(|n| n.ip)));
        }
        let mut nets = vec![Ipv4Net::of(Ipv4Addr::LOCALHOST, 8)];
        for ip in ips {
            let n = Ipv4Net::of(ip, 24);
            if !nets
                .iter()
                .any(|m| m.prefix <= n.prefix && m.contains(n.addr))
            {
                nets.push(n);
            }
        }
        Allow { nets }
    }

    pub fn allows(&self, ip: Ipv4Addr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }

    pub fn nets(&self) -> &[Ipv4Net] {
        &self.nets
    }
}

impl std::fmt::Display for Allow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s: Vec<String> = self.nets.iter().map(|n| n.to_string()).collect();
        f.write_str(&s.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_allows_loopback_and_the_configurations_networks_only() {
        let cfg = Config::from_toml_str(
            r#"
            [switch]
            role = "leaf"
            id = 3
            mac = "02:00:00:00:00:03"
            ip = "10.0.3.1"
            pass_through_port = 1
            control_port = 0
            [[spines]]
            id = 1
            mac = "02:00:00:00:01:01"
            ip = "10.0.1.1"
            udp_port = 1234
            port = 2
            "#,
        )
        .unwrap();
        let d = Allow::resolve(Some(&cfg), &[], None);
        assert_eq!(d.to_string(), "127.0.0.0/8 10.0.3.0/24 10.0.1.0/24");
        assert!(d.allows(Ipv4Addr::new(10, 0, 3, 77)));
        assert!(!d.allows(Ipv4Addr::new(10, 0, 2, 1)));
        let flag: Ipv4Net = "192.168.5.0/24".parse().unwrap();
        let f = Allow::resolve(Some(&cfg), &[flag], None);
        assert!(f.allows(Ipv4Addr::new(192, 168, 5, 9)));
        assert!(
            !f.allows(Ipv4Addr::new(10, 0, 3, 77)),
            "a list given replaces the default"
        );
    }
}
