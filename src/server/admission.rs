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
//!   nothing. Once a second the sweep refuses bodies of an address over
//!   its share now (more addresses came to hold some), one at a time
//!   until it is within it ([`MemoryBudget::over_share`]), so early
//!   addresses do not keep a large share. Past its share its bodies are
//!   refused and its connections
//!   with unsent output pause in the same way, so a few addresses (slow
//!   bodies, replies they never read) cannot spend the budget for
//!   everyone else.

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

/// One client address may hold at most `1 / ADDRESS_SHARE_DIVISOR` of
/// `--max-buffered-bytes` (default 4: a quarter, 16 MiB of the default
/// 64 MiB), and never less than `--max-body-bytes`; less when others hold
/// some too (its fair share, see the module documentation). Past it that
/// address's next body over [`UNBUDGETED_BODY_BYTES`] gets the same `503`
/// as a spent budget, and its connections with unsent output parse nothing
/// more until it reads. Trusted proxies (no [`connection_key`]) have no
/// share.
pub const ADDRESS_SHARE_DIVISOR: usize = 4;

/// The server-wide budget of buffered bytes.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
    /// Most bytes one address may hold (0: no per-address share).
    share: usize,
    /// Least share an address has when others hold some too
    /// (`--max-body-bytes`: every address may send one body).
    floor: usize,
    /// Shares shrink as more addresses hold bytes ([`Self::fair`]).
    fair: bool,
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
            floor: share,
            fair: false,
            by_address: Mutex::new(HashMap::new()),
        }
    }

    /// [`Self::with_address_share`], and while `k` addresses hold bytes
    /// each may hold only `limit / (k + 1)` of them, never less than
    /// `floor` (the largest body); one that holds some may not take the
    /// last `limit / (k + 1)`.
    pub fn fair(limit: usize, share: usize, floor: usize) -> MemoryBudget {
        MemoryBudget {
            floor: floor.min(share),
            fair: true,
            ..MemoryBudget::with_address_share(limit, share)
        }
    }

    /// What an address holding `mine` may hold in all, and the most the
    /// whole budget may hold when it takes more, while `held` is held.
    fn share_of(&self, held: &HashMap<IpAddr, usize>, mine: usize) -> (usize, usize) {
        if !self.fair {
            return (self.share, self.limit);
        }
        let k = held.len() + usize::from(mine == 0);
        let split = self.limit / (k + 1);
        let share = split.max(self.floor).min(self.share);
        let ceiling = if mine == 0 {
            self.limit
        } else {
            self.limit - split
        };
        (share, ceiling)
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
        let (share, ceiling) = self.share_of(&held, mine);
        if mine.saturating_add(n) > share || !self.try_take_within(n, ceiling) {
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

    /// Whether address `key` holds more than its fair share now (others
    /// came to hold some since it took its bytes): one of its bodies
    /// should be refused, giving its reservation back.
    pub fn over_share(&self, key: Option<IpAddr>) -> bool {
        key.filter(|_| self.share > 0 && self.fair)
            .is_some_and(|key| {
                let held = self.held();
                let mine = held.get(&key).copied().unwrap_or(0);
                mine > self.share_of(&held, mine).0
            })
    }

    /// Whether the budget, or address `key`'s share of it, is spent.
    pub fn spent_for(&self, key: Option<IpAddr>) -> bool {
        self.spent()
            || key.filter(|_| self.share > 0).is_some_and(|key| {
                let held = self.held();
                let mine = held.get(&key).copied().unwrap_or(0);
                mine >= self.share_of(&held, mine).0
            })
    }

    /// Takes `n` bytes if they fit; false (nothing taken) otherwise.
    pub fn try_take(&self, n: usize) -> bool {
        self.try_take_within(n, self.limit)
    }

    /// Takes `n` bytes if the budget then holds at most `ceiling`.
    fn try_take_within(&self, n: usize, ceiling: usize) -> bool {
        if self.limit == 0 {
            self.used.fetch_add(n, Ordering::Relaxed);
            return true;
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used.saturating_add(n) <= ceiling).then_some(used + n)
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

        /// Up to 60 addresses (the budget holds 64 bodies) take and give
        /// bodies of up to `body` bytes in any order, with sweeps (each
        /// address over its share now gives bodies back, as the event
        /// loop's once-a-second sweep refuses them) at any points: a
        /// refused take changes nothing and the budget is never passed.
        /// Then rounds of each taking all it can and a sweep, until no
        /// address newly holds some, and each takes all it can once more:
        /// an address that holds nothing can still take a body of the
        /// largest size. (With a fixed quarter per address four addresses
        /// left it nothing; without the sweep 15 addresses taking greedily
        /// one after another did, as they still can in the second before
        /// a sweep.)
        #[test]
        fn holders_always_leave_room_for_a_newcomer(
            addresses in 1u8..=60,
            ops in proptest::collection::vec((0u8..60, 1usize..=1024, 0u8..8), 0..600),
        ) {
            const BODY: usize = 1024;
            const LIMIT: usize = 64 * BODY;
            let budget = MemoryBudget::fair(LIMIT, MemoryBudget::address_share(LIMIT, BODY), BODY);
            let key = |n: u8| Some(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n)));
            let mut held = vec![Vec::<usize>::new(); 256];
            let sweep = |held: &mut Vec<Vec<usize>>| {
                for who in 0..addresses {
                    while budget.over_share(key(who)) {
                        let n = held[usize::from(who)].pop().expect("over its share holds some");
                        budget.give_for(key(who), n);
                    }
                }
            };
            for (who, n, op) in ops {
                let who = who % addresses;
                match op {
                    0 | 1 => {
                        if let Some(n) = held[usize::from(who)].pop() {
                            budget.give_for(key(who), n);
                        }
                    }
                    2 => sweep(&mut held),
                    _ => {
                        let before = budget.used();
                        if budget.try_take_for(key(who), n) {
                            held[usize::from(who)].push(n);
                        } else {
                            proptest::prop_assert_eq!(budget.used(), before);
                        }
                    }
                }
                proptest::prop_assert!(budget.used() <= LIMIT);
            }
            let greedy = |held: &mut Vec<Vec<usize>>| {
                for who in 0..addresses {
                    while budget.try_take_for(key(who), BODY) {
                        held[usize::from(who)].push(BODY);
                    }
                }
            };
            // Rounds of: everyone takes all it can, then a sweep, until no
            // address newly comes to hold some (every new holder makes the
            // shares smaller at the next sweep).
            for _ in 0..64 {
                let holders = held.iter().filter(|h| !h.is_empty()).count();
                greedy(&mut held);
                sweep(&mut held);
                if held.iter().filter(|h| !h.is_empty()).count() == holders {
                    break;
                }
            }
            greedy(&mut held);
            proptest::prop_assert!(budget.used() <= LIMIT);
            proptest::prop_assert!(budget.try_take_for(key(200), BODY), "used {} of {LIMIT}", budget.used());
        }
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
