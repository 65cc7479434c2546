//! What one client may hold of the server: connections per address, and
//! the server-wide budget of buffered bytes (request bodies being read and
//! response bytes not yet sent) that every connection shares.
//!
//! Key multiplication: an IPv6 subscriber usually holds a /56 or a /48,
//! that is 256 or 65,536 /64s. So a /48 (a site) counts as at most
//! [`SHARES_PER_SITE`] clients: its connections are capped at that many
//! times `--max-connections-per-ip` together, and the fair shares of the
//! memory and upstream budgets are keyed by [`fair_key`], which maps the
//! /64s of one /48 onto that many keys. IPv4 addresses are not grouped
//! (each costs its holder; one /24 is often many unrelated clients).
//!
//! - [`PerAddress`]: at most `--max-connections-per-ip` open connections
//!   per client address ([`connection_key`]: the IPv4 address, or the /64
//!   of an IPv6 address). A connection past it is answered `429` with
//!   `Retry-After: 1` and closed.
//! - [`MemoryBudget`]: `--max-buffered-bytes`. A request body larger than
//!   [`UNBUDGETED_BODY_BYTES`] reserves its whole announced length when
//!   its head arrives (a chunked body reserves as it grows); when the
//!   budget cannot hold it, the request is refused at once with `503`,
//!   `Retry-After: 1` and `Connection: close`, before its body is read
//!   (refusing, not waiting: a waiting body would hold its connection, its
//!   socket buffers and its client for as long as the budget stays full,
//!   while a refusal frees all three and tells the client when to retry).
//!   Unsent response bytes are charged as they are queued and released as
//!   they are written; while the budget is spent, a connection with unsent
//!   output parses no further request until its peer reads. One client
//!   address (the [`connection_key`]) may hold at most its share of the
//!   budget: an equal split among the addresses that hold some of it
//!   now with one share kept free, `limit / (k + 1)` for `k` holders
//!   (never less than `--max-body-bytes`), and never more than
//!   `--max-buffered-bytes-per-ip` (default [`ADDRESS_SHARE_DIVISOR`]: a
//!   quarter). An address that holds something may not take the last
//!   `limit / (k + 1)` bytes, which stay for an address that holds
//!   nothing. Shares are recomputed whenever an address comes to hold a
//!   body: every other address over its share then gives bodies back at
//!   once, newest first, until it is within it (their requests get the
//!   same `503`, [`MemoryBudget::try_take_body`]), so no burst of new
//!   addresses, however fast, holds more than its share at any instant and
//!   a new address always finds its share free (while `k + 1` shares are
//!   at least `--max-body-bytes`). Once a second the sweep does the same
//!   for shares that shrank otherwise (unsent output counts as held but is
//!   never taken back: its connections pause instead). Past its share an
//!   address's bodies are refused and its connections with unsent output
//!   pause in the same way, so a few addresses (slow bodies, replies they
//!   never read) cannot spend the budget for everyone else.

mod memory;

pub use memory::{BodyClaim, MemoryBudget, ADDRESS_SHARE_DIVISOR};

use crate::config::proxies::TrustedProxies;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

/// Request bodies up to this size are read without a reservation: every
/// connection may hold one such body (and a head) outside the budget, so
/// small requests are never refused for memory. Default 16 KiB.
pub const UNBUDGETED_BODY_BYTES: usize = 16 * 1024;

/// The address a connection counts against for `--max-connections-per-ip`:
/// the IPv4 address, or the /64 of an IPv6 address (IPv4-mapped IPv6 as
/// the IPv4 address); `None` for a trusted proxy, whose connections carry
/// many clients and are not capped per address.
pub fn connection_key(peer: &SocketAddr, proxies: &TrustedProxies) -> Option<IpAddr> {
    (!proxies.trusts(peer.ip())).then(|| client_key(peer.ip()))
}

/// The key a connection's share of the memory budget is counted under:
/// the [`fair_key`] of its [`connection_key`] (so the /64s of one IPv6 /48
/// hold at most [`SHARES_PER_SITE`] shares together); `None` for a trusted
/// proxy. Keyed by the /64 alone, one /48's 65,536 /64s could each hold a
/// share, past the 62 addresses below which a newcomer always finds its
/// share (the default budget, 1 MiB bodies).
pub fn budget_key(peer: &SocketAddr, proxies: &TrustedProxies) -> Option<IpAddr> {
    connection_key(peer, proxies).map(fair_key)
}

/// Most clients one IPv6 /48 (a site) counts as: its connections together
/// may number this many times `--max-connections-per-ip` (past it: the
/// same `429` as one address past its cap), and its /64s share this many
/// fair shares of the memory and upstream budgets ([`fair_key`]).
/// Default 4.
pub const SHARES_PER_SITE: u16 = 4;

/// The key a client's fair shares are counted under: [`client_key`] for
/// IPv4; for IPv6 the /48 with its /64 hashed (with a key random per
/// process, so a client cannot pick whom it shares with) onto one of
/// [`SHARES_PER_SITE`] keys.
pub fn fair_key(ip: IpAddr) -> IpAddr {
    use std::hash::BuildHasher;
    static SEED: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    match client_key(ip) {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let site = bits & !((1u128 << 80) - 1);
            let subnet = (bits >> 64) as u16;
            let slot = SEED.get_or_init(Default::default).hash_one((site, subnet))
                % u64::from(SHARES_PER_SITE);
            IpAddr::V6((site | (u128::from(slot) << 64)).into())
        }
        v4 => v4,
    }
}

/// The /48 of an IPv6 client address (`None` for IPv4).
pub fn site_key(ip: IpAddr) -> Option<u128> {
    match client_key(ip) {
        IpAddr::V6(v6) => Some(u128::from(v6) >> 80),
        IpAddr::V4(_) => None,
    }
}

/// The key a client address is counted under: the IPv4 address, or the
/// /64 of an IPv6 address (the block one subscriber usually holds).
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

/// Open connections per client address (and per IPv6 /48), shared by
/// every event loop.
pub struct PerAddress {
    max: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    by_address: HashMap<IpAddr, usize>,
    by_site: HashMap<u128, usize>,
}

impl PerAddress {
    /// At most `max` connections per address; 0 means no cap.
    pub fn new(max: usize) -> PerAddress {
        PerAddress {
            max,
            open: Mutex::new(Open::default()),
        }
    }

    /// Counts one more connection for `key`; false (and nothing counted)
    /// when `key`, or its IPv6 /48, already has the most.
    pub fn admit(&self, key: IpAddr) -> bool {
        if self.max == 0 {
            return true;
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let open = &mut *open;
        let n = open.by_address.get(&key).copied().unwrap_or(0);
        if n >= self.max {
            return false;
        }
        if let Some(site) = site_key(key) {
            let in_site = open.by_site.entry(site).or_insert(0);
            if *in_site >= self.max.saturating_mul(usize::from(SHARES_PER_SITE)) {
                return false;
            }
            *in_site += 1;
        }
        open.by_address.insert(key, n + 1);
        true
    }

    /// Forgets one connection of `key` (admitted before).
    pub fn release(&self, key: IpAddr) {
        if self.max == 0 {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let open = &mut *open;
        if let Some(n) = open.by_address.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                open.by_address.remove(&key);
            }
            if let Some(site) = site_key(key) {
                if let Some(in_site) = open.by_site.get_mut(&site) {
                    *in_site -= 1;
                    if *in_site == 0 {
                        open.by_site.remove(&site);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_holds_at_most_shares_per_site_times_the_cap() {
        let p = PerAddress::new(2);
        let most = 2 * usize::from(SHARES_PER_SITE);
        let in_site = |n: u128| IpAddr::V6(((0x2001_0db8_0007u128 << 80) | (n << 64)).into());
        let admitted = (0..100u128)
            .flat_map(|n| [n, n])
            .filter(|&n| p.admit(in_site(n)))
            .count();
        assert_eq!(admitted, most);
        // Another /48, and IPv4, are not held back; a release frees one.
        let other = IpAddr::V6((0x2001_0db8_0008u128 << 80).into());
        assert!(p.admit(other));
        assert!(p.admit("192.0.2.1".parse().unwrap()));
        p.release(in_site(0));
        assert!(p.admit(in_site(77)));
        assert!(!p.admit(in_site(78)));
    }

    proptest::proptest! {
        /// Any /64s of one /48 share at most SHARES_PER_SITE fair keys, all
        /// inside that /48; one /64 always has one key; different /48s and
        /// IPv4 addresses never share one.
        #[test]
        fn a_site_is_at_most_shares_per_site_clients(
            site in proptest::prelude::any::<u64>(),
            other in proptest::prelude::any::<u64>(),
            subnets in proptest::collection::vec((proptest::prelude::any::<u16>(), proptest::prelude::any::<u64>()), 1..300),
            v4 in proptest::prelude::any::<u32>(),
        ) {
            let site = u128::from(site >> 16);
            let other = u128::from(other >> 16);
            proptest::prop_assume!(site != other && site >> 32 != 0 && other >> 32 != 0);
            let addr = |site: u128, subnet: u16, host: u64| {
                IpAddr::V6(((site << 80) | (u128::from(subnet) << 64) | u128::from(host)).into())
            };
            let mut keys = std::collections::HashSet::new();
            for &(subnet, host) in &subnets {
                let key = fair_key(addr(site, subnet, host));
                proptest::prop_assert_eq!(key, fair_key(addr(site, subnet, !host)));
                let IpAddr::V6(k) = key else { panic!("{key}") };
                proptest::prop_assert_eq!(u128::from(k) >> 80, site);
                proptest::prop_assert_ne!(key, fair_key(addr(other, subnet, host)));
                keys.insert(key);
            }
            proptest::prop_assert!(keys.len() <= usize::from(SHARES_PER_SITE));
            let v4 = IpAddr::V4(v4.into());
            proptest::prop_assert_eq!(fair_key(v4), v4);
        }
    }

    /// Any number of /64s of one /48, each taking bodies as a newcomer
    /// under its connection's budget key, hold at most SHARES_PER_SITE
    /// shares of the memory budget together; an IPv4 address is its own
    /// key, a trusted proxy has none.
    #[test]
    fn a_site_holds_at_most_shares_per_site_shares_of_the_memory_budget() {
        const BODY: usize = 1024;
        const LIMIT: usize = 64 * BODY;
        let none = TrustedProxies::default();
        let budget = MemoryBudget::fair(LIMIT, MemoryBudget::address_share(LIMIT, BODY), BODY);
        let mut claims = Vec::new();
        for subnet in 0..500u128 {
            let peer = SocketAddr::new(
                IpAddr::V6(((0x2001_0db8_0007u128 << 80) | (subnet << 64) | 1).into()),
                40000,
            );
            let key = budget_key(&peer, &none);
            let mut claim = None;
            while budget.try_take_body(key, &mut claim, BODY) {
                claims.push((key, claim.take()));
            }
        }
        let keys: std::collections::HashSet<_> = claims.iter().map(|(k, _)| *k).collect();
        assert!(keys.len() <= usize::from(SHARES_PER_SITE), "{keys:?}");
        // What the site holds leaves room for others: at most its four
        // quarters' worth of what is left for four holders and a newcomer.
        let live = claims
            .iter()
            .filter(|(_, c)| !c.as_ref().unwrap().revoked())
            .count();
        assert!(live * BODY <= LIMIT - LIMIT / 5, "{live}");
        let v4: SocketAddr = "192.0.2.7:1".parse().unwrap();
        assert_eq!(budget_key(&v4, &none), Some(v4.ip()));
        let mut claim = None;
        assert!(budget.try_take_body(budget_key(&v4, &none), &mut claim, BODY));
        use crate::config::proxies::ProxyHeader;
        let proxies = TrustedProxies::parse("192.0.2.0/24", ProxyHeader::XForwardedFor).unwrap();
        assert_eq!(budget_key(&v4, &proxies), None);
    }

    #[test]
    fn per_address_counts_ipv6_by_its_64() {
        let none = TrustedProxies::default();
        let key = |a: &SocketAddr| connection_key(a, &none).unwrap();
        let p = PerAddress::new(2);
        let a: SocketAddr = "[2001:db8:1:2::5]:1".parse().unwrap();
        let b: SocketAddr = "[2001:db8:1:2:ffff::9]:2".parse().unwrap();
        let c: SocketAddr = "[2001:db8:1:3::5]:3".parse().unwrap();
        assert_eq!(key(&a), key(&b));
        assert!(p.admit(key(&a)));
        assert!(p.admit(key(&b)));
        assert!(!p.admit(key(&a)));
        assert!(p.admit(key(&c)));
        p.release(key(&b));
        assert!(p.admit(key(&a)));
        let v4: SocketAddr = "[::ffff:10.0.0.1]:4".parse().unwrap();
        assert_eq!(key(&v4), "10.0.0.1".parse::<IpAddr>().unwrap());
        let off = PerAddress::new(0);
        assert!((0..1000).all(|_| off.admit(key(&a))));
    }

    #[test]
    fn trusted_proxies_are_not_capped_per_address() {
        use crate::config::proxies::ProxyHeader;
        let proxies = TrustedProxies::parse("10.0.0.0/8,::1", ProxyHeader::XForwardedFor).unwrap();
        let proxy: SocketAddr = "10.1.2.3:40000".parse().unwrap();
        let loopback6: SocketAddr = "[::1]:40000".parse().unwrap();
        let other: SocketAddr = "192.0.2.7:40000".parse().unwrap();
        assert_eq!(connection_key(&proxy, &proxies), None);
        assert_eq!(connection_key(&loopback6, &proxies), None);
        assert_eq!(
            connection_key(&other, &proxies),
            Some("192.0.2.7".parse::<IpAddr>().unwrap())
        );
    }
}
