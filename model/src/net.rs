//! IPv4 networks as an operator writes them (`10.0.3.0/24`): the `[security] allow` list of a
//! switch configuration ([`crate::config::SecurityConfig`]).

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An IPv4 network: an address and a prefix length (0 to 32). Its host bits must be zero, so
/// that `10.0.3.7/24` (a host mistaken for its network) is refused rather than read as
/// `10.0.3.0/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ipv4Net {
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl Ipv4Net {
    /// The network of `prefix` bits holding `ip` (its host bits cleared).
    pub fn of(ip: Ipv4Addr, prefix: u8) -> Ipv4Net {
        let prefix = prefix.min(32);
        Ipv4Net {
            addr: Ipv4Addr::from(u32::from(ip) & mask(prefix)),
            prefix,
        }
    }

    /// Whether `ip` is in this network.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & mask(self.prefix) == u32::from(self.addr)
    }
}

fn mask(prefix: u8) -> u32 {
    match prefix {
        0 => 0,
        p => u32::MAX << (32 - u32::from(p.min(32))),
    }
}

impl FromStr for Ipv4Net {
    type Err = String;

    fn from_str(s: &str) -> Result<Ipv4Net, String> {
        let (a, p) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?} is not a network: write ADDRESS/PREFIX (10.0.3.0/24)"))?;
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("{s:?}: {a:?} is not an IPv4 address"))?;
        let prefix: u8 = p
            .parse()
            .ok()
            .filter(|&p| p <= 32)
            .ok_or_else(|| format!("{s:?}: the prefix length {p:?} is not 0 to 32"))?;
        let net = Ipv4Net::of(addr, prefix);
        if net.addr != addr {
            return Err(format!(
                "{s:?} has host bits set: the network is {net} (or write {addr}/32 for one host)"
            ));
        }
        Ok(net)
    }
}

impl TryFrom<String> for Ipv4Net {
    type Error = String;
    fn try_from(s: String) -> Result<Ipv4Net, String> {
        s.parse()
    }
}

impl From<Ipv4Net> for String {
    fn from(n: Ipv4Net) -> String {
        n.to_string()
    }
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_holds_exactly_its_addresses_and_bad_text_says_why() {
        let n: Ipv4Net = "10.0.3.0/24".parse().unwrap();
        assert!(n.contains(Ipv4Addr::new(10, 0, 3, 0)));
        assert!(n.contains(Ipv4Addr::new(10, 0, 3, 255)));
        assert!(!n.contains(Ipv4Addr::new(10, 0, 4, 0)));
        assert!(!n.contains(Ipv4Addr::new(10, 0, 2, 255)));
        let all: Ipv4Net = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(Ipv4Addr::BROADCAST));
        let one: Ipv4Net = "127.0.0.9/32".parse().unwrap();
        assert!(one.contains(Ipv4Addr::new(127, 0, 0, 9)));
        assert!(!one.contains(Ipv4Addr::new(127, 0, 0, 8)));
        assert_eq!(n.to_string(), "10.0.3.0/24");
        for (bad, says) in [
            ("10.0.3.0", "write ADDRESS/PREFIX"),
            ("10.0.3/24", "not an IPv4 address"),
            ("10.0.3.0/33", "not 0 to 32"),
            ("10.0.3.7/24", "host bits set: the network is 10.0.3.0/24"),
        ] {
            let e = bad.parse::<Ipv4Net>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
