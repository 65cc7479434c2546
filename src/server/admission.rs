//! What one client may hold of the server: connections per address, and
//! the server-wide budget of buffered bytes (request bodies being read and
//! response bytes not yet sent) that every connection shares.
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
//!   budget ([`ADDRESS_SHARE_DIVISOR`]): past it, its bodies are refused
//!   and its connections with unsent output pause in the same way, so one
//!   address (slow bodies, replies it never reads) cannot spend the budget
//!   for everyone else.

use crate::config::proxies::TrustedProxies;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Open connections per client address, shared by every event loop.
pub struct PerAddress {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl PerAddress {
    /// At most `max` connections per address; 0 means no cap.
    pub fn new(max: usize) -> PerAddress {
        PerAddress {
            max,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one more connection for `key`; false (and nothing counted)
    /// when `key` already has the most.
    pub fn admit(&self, key: IpAddr) -> bool {
        if self.max == 0 {
            return true;
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= self.max {
            return false;
        }
        *n += 1;
        true
    }

    /// Forgets one connection of `key` (admitted before).
    pub fn release(&self, key: IpAddr) {
        if self.max == 0 {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&key);
            }
        }
    }
}

/// One client address may hold at most `1 / ADDRESS_SHARE_DIVISOR` of
/// `--max-buffered-bytes` (default 4: a quarter, 16 MiB of the default
/// 64 MiB), and never less than `--max-body-bytes`. Past it that address's
/// next body over [`UNBUDGETED_BODY_BYTES`] gets the same `503` as a spent
/// budget, and its connections with unsent output parse nothing more until
/// it reads. Trusted proxies (no [`connection_key`]) have no share.
pub const ADDRESS_SHARE_DIVISOR: usize = 4;

/// The server-wide budget of buffered bytes.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
    /// Most bytes one address may hold (0: no per-address share).
    share: usize,
    /// Bytes held per address.
    by_address: Mutex<HashMap<IpAddr, usize>>,
}

impl MemoryBudget {
    /// A budget of `limit` bytes; 0 means no limit. No per-address share.
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget::with_address_share(limit, 0)
    }

    /// A budget of `limit` bytes of which one address may hold `share`
    /// (0: no per-address share; ignored when `limit` is 0).
    pub fn with_address_share(limit: usize, share: usize) -> MemoryBudget {
        MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
            share: if limit == 0 { 0 } else { share },
            by_address: Mutex::new(HashMap::new()),
        }
    }

    /// The share of `--max-buffered-bytes` `limit` one address may hold
    /// when bodies may be `max_body` bytes long.
    pub fn address_share(limit: usize, max_body: usize) -> usize {
        (limit / ADDRESS_SHARE_DIVISOR).max(max_body).min(limit)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.by_address.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`Self::try_take`] for a connection of address `key`: false also
    /// when the address would pass its share.
    pub fn try_take_for(&self, key: Option<IpAddr>, n: usize) -> bool {
        let Some(key) = key.filter(|_| self.share > 0) else {
            return self.try_take(n);
        };
        let mut held = self.held();
        let mine = held.get(&key).copied().unwrap_or(0);
        if mine.saturating_add(n) > self.share || !self.try_take(n) {
            return false;
        }
        held.insert(key, mine + n);
        true
    }

    /// [`Self::force_take`] for a connection of address `key`.
    pub fn force_take_for(&self, key: Option<IpAddr>, n: usize) {
        self.force_take(n);
        if let Some(key) = key.filter(|_| self.share > 0 && n > 0) {
            *self.held().entry(key).or_insert(0) += n;
        }
    }

    /// [`Self::give`] for a connection of address `key`.
    pub fn give_for(&self, key: Option<IpAddr>, n: usize) {
        self.give(n);
        if let Some(key) = key.filter(|_| self.share > 0 && n > 0) {
            let mut held = self.held();
            if let Some(mine) = held.get_mut(&key) {
                *mine = mine.saturating_sub(n);
                if *mine == 0 {
                    held.remove(&key);
                }
            }
        }
    }

    /// Whether the budget, or address `key`'s share of it, is spent.
    pub fn spent_for(&self, key: Option<IpAddr>) -> bool {
        self.spent()
            || key
                .filter(|_| self.share > 0)
                .is_some_and(|key| self.held().get(&key).copied().unwrap_or(0) >= self.share)
    }

    /// Takes `n` bytes if they fit; false (nothing taken) otherwise.
    pub fn try_take(&self, n: usize) -> bool {
        if self.limit == 0 {
            self.used.fetch_add(n, Ordering::Relaxed);
            return true;
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used.saturating_add(n) <= self.limit).then_some(used + n)
            })
            .is_ok()
    }

    /// Takes `n` bytes whether or not they fit (bytes that already exist,
    /// such as a response).
    pub fn force_take(&self, n: usize) {
        self.used.fetch_add(n, Ordering::AcqRel);
    }

    /// Gives back `n` bytes taken before.
    pub fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }

    /// Bytes in use.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Whether the budget is spent.
    pub fn spent(&self) -> bool {
        self.limit != 0 && self.used() >= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_takes_what_fits_and_counts_what_is_forced() {
        let b = MemoryBudget::new(100);
        assert!(b.try_take(60));
        assert!(!b.try_take(41));
        assert!(b.try_take(40));
        assert!(b.spent());
        b.force_take(10);
        assert_eq!(b.used(), 110);
        b.give(110);
        assert_eq!(b.used(), 0);
        assert!(!b.spent());
        let unlimited = MemoryBudget::new(0);
        assert!(unlimited.try_take(usize::MAX / 2));
        assert!(!unlimited.spent());
    }

    #[test]
    fn one_address_holds_at_most_its_share() {
        let a = Some("192.0.2.1".parse::<IpAddr>().unwrap());
        let b = Some("192.0.2.2".parse::<IpAddr>().unwrap());
        let budget = MemoryBudget::with_address_share(1000, 250);
        assert_eq!(MemoryBudget::address_share(1000, 100), 250);
        assert_eq!(MemoryBudget::address_share(1000, 400), 400);
        assert_eq!(MemoryBudget::address_share(300, 400), 300);
        assert!(budget.try_take_for(a, 200));
        assert!(!budget.try_take_for(a, 51));
        assert!(budget.try_take_for(a, 50));
        assert!(budget.spent_for(a));
        assert!(!budget.spent_for(b));
        assert!(!budget.spent_for(None));
        // Another address and a trusted proxy (no key) are not held back.
        assert!(budget.try_take_for(b, 250));
        assert!(budget.try_take_for(None, 500));
        assert_eq!(budget.used(), 1000);
        assert!(budget.spent_for(b) && budget.spent_for(None));
        budget.give_for(a, 250);
        budget.give_for(b, 250);
        budget.give_for(None, 500);
        assert_eq!(budget.used(), 0);
        assert!(!budget.spent_for(a));
        budget.force_take_for(a, 300);
        assert!(budget.spent_for(a) && !budget.spent() && !budget.spent_for(b));
        budget.give_for(a, 300);
        assert!(budget.held().is_empty());
        // No share: only the whole budget counts.
        let plain = MemoryBudget::new(1000);
        assert!(plain.try_take_for(a, 1000));
        assert!(plain.held().is_empty());
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
