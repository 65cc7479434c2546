//! Abuse limits: a per-client token bucket on `tools/call` and a global
//! budget for upstream requests.
//!
//! - [`ClientLimiter`]: each client address gets a bucket of
//!   [`crate::config::DEFAULT_RATE_BURST`] tool calls refilled at
//!   [`crate::config::DEFAULT_RATE_LIMIT`] per
//!   second. A call past it never reaches a worker or the upstream; it is
//!   answered at once as a normal `tools/call` result with `isError: true`:
//!   `Too many tool calls from this address. Retry after 2s. (HTTP 429,
//!   code rate_limited, retry after 2s)`. Clients are keyed by TCP peer
//!   address (IPv6 by its /64, the block one subscriber usually holds);
//!   behind a reverse proxy every client shares the proxy's bucket, so
//!   limit there or raise `--rate-limit`. The table is bounded by
//!   [`MAX_TRACKED_CLIENTS`].
//! - [`Budgeted`]: an [`Upstream`] decorator holding one bucket shared by
//!   every worker, [`crate::config::DEFAULT_UPSTREAM_BUDGET`] requests per
//!   second with a
//!   burst of [`UPSTREAM_BUDGET_BURST_SECS`] seconds' worth. When it is
//!   empty the request is not sent and fails at once with
//!   [`FetchError::BudgetExhausted`], which the tools render as a retryable
//!   `isError` result (`… (HTTP 503, code upstream_budget, retry after 1s)`).
//!   It keeps a flood of distinct (uncacheable) requests from getting the
//!   server's address banned upstream.
//! - [`UpstreamShares`]: each client address has its own share of the
//!   upstream budget, a third ([`UPSTREAM_SHARE_DIVISOR`]) of its rate and
//!   burst, spent with each of its upstream requests. While the global
//!   budget holds more than a third of its burst anyone may go on; below
//!   that only a client with share left does, so one client's flood of
//!   distinct calls (MCP or the X routes) cannot leave the others without
//!   upstream requests. A client refused this way sees what an empty
//!   budget gives (`… (HTTP 503, code upstream_budget, retry after <n>s)`,
//!   a `503` problem on the X routes). Off with `--rate-limit 0` (behind a
//!   proxy every client shares one address) or `--upstream-budget 0`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(test)]
use crate::config::DEFAULT_UPSTREAM_BUDGET;
use crate::x::upstream::{FetchError, PerClient, Upstream, UpstreamResponse};

/// Most client addresses tracked at once.
///
/// Default is 65 536 (a few MiB at most). When the table is full, buckets
/// that have refilled (and so carry no state) are dropped first; if that is
/// not enough the least recently seen half goes. A dropped client starts
/// again with a full bucket.
pub const MAX_TRACKED_CLIENTS: usize = 65_536;

/// Seconds' worth of the upstream budget that may be spent at once.
///
/// Default is 3 (a burst of 45 requests at the default budget).
pub const UPSTREAM_BUDGET_BURST_SECS: u32 = 3;

/// Each client address's share of the upstream budget is
/// 1/`UPSTREAM_SHARE_DIVISOR` of its rate and burst, and the budget counts
/// as scarce below 1/`UPSTREAM_SHARE_DIVISOR` of its burst.
///
/// Default is 3: at the default budget a share is 5 requests per second
/// after a burst of 15, and a client whose share is spent stops once fewer
/// than 15 requests are left, which the other clients keep.
pub const UPSTREAM_SHARE_DIVISOR: u32 = 3;

/// Machine code of the per-client refusal.
pub const RATE_LIMITED_CODE: &str = "rate_limited";

/// A token bucket: `burst` tokens, refilled continuously at `rate` per second.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate_per_sec: u32, burst: u32, now: Instant) -> TokenBucket {
        TokenBucket {
            rate: f64::from(rate_per_sec.max(1)),
            burst: f64::from(burst.max(1)),
            tokens: f64::from(burst.max(1)),
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        self.last = now;
    }

    /// Takes one token, or says how long until one is available.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.rate))
        }
    }

    /// True when the bucket would be full at `now` (it then holds no state
    /// worth keeping).
    fn is_full_at(&self, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens + dt * self.rate >= self.burst
    }
}

/// Whole seconds to announce for a wait: rounded up, at least 1.
pub fn retry_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// The key a client is counted under (one rule for the rate limiter and
/// the connection cap): the IPv4 address, or the /64 of an IPv6 address.
pub use crate::server::admission::client_key;

/// Per-client token buckets for `tools/call`, bounded to `capacity` entries.
pub struct ClientLimiter {
    rate: u32,
    burst: u32,
    capacity: usize,
    table: Mutex<HashMap<IpAddr, TokenBucket>>,
}

impl ClientLimiter {
    /// A limiter of `rate` calls per second with `burst`, tracking at most
    /// [`MAX_TRACKED_CLIENTS`] clients.
    pub fn new(rate: u32, burst: u32) -> ClientLimiter {
        ClientLimiter::with_capacity(rate, burst, MAX_TRACKED_CLIENTS)
    }

    /// Like [`ClientLimiter::new`] with an explicit table bound (at least 2).
    pub fn with_capacity(rate: u32, burst: u32, capacity: usize) -> ClientLimiter {
        ClientLimiter {
            rate,
            burst,
            capacity: capacity.max(2),
            table: Mutex::new(HashMap::new()),
        }
    }

    /// Admits one call from `ip` at `now`, or returns how long it must wait.
    pub fn check(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        let key = client_key(ip);
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if !table.contains_key(&key) && table.len() >= self.capacity {
            evict(&mut table, now, self.capacity);
        }
        table
            .entry(key)
            .or_insert_with(|| TokenBucket::new(self.rate, self.burst, now))
            .take(now)
    }

    /// Clients currently tracked.
    pub fn tracked(&self) -> usize {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Makes room in a full table: drops refilled buckets, then (if still
/// full) the least recently seen half.
fn evict(table: &mut HashMap<IpAddr, TokenBucket>, now: Instant, capacity: usize) {
    table.retain(|_, b| !b.is_full_at(now));
    if table.len() < capacity {
        return;
    }
    let mut seen: Vec<Instant> = table.values().map(|b| b.last).collect();
    let mid = seen.len() / 2;
    let (_, cut, _) = seen.select_nth_unstable(mid);
    let cut = *cut;
    table.retain(|_, b| b.last > cut);
}

/// The text of a per-client refusal (an `isError` tool result), in the
/// shape every tool error has: `<message> (HTTP 429, code rate_limited,
/// retry after <n>s)`.
pub fn rate_limited_text(wait: Duration) -> String {
    let secs = retry_secs(wait);
    format!(
        "Too many tool calls from this address. Retry after {secs}s. \
         (HTTP 429, code {RATE_LIMITED_CODE}, retry after {secs}s)"
    )
}

/// An [`Upstream`] decorator that spends one token of a global bucket per
/// request and fails fast with [`FetchError::BudgetExhausted`] when none is
/// left.
pub struct Budgeted {
    inner: Arc<dyn Upstream>,
    bucket: Mutex<TokenBucket>,
}

impl Budgeted {
    /// `per_sec` requests per second with a burst of
    /// [`UPSTREAM_BUDGET_BURST_SECS`] seconds' worth.
    pub fn new(inner: Arc<dyn Upstream>, per_sec: u32) -> Budgeted {
        Budgeted::with_burst(
            inner,
            per_sec,
            per_sec.saturating_mul(UPSTREAM_BUDGET_BURST_SECS),
        )
    }

    /// An explicit burst (at least 1).
    pub fn with_burst(inner: Arc<dyn Upstream>, per_sec: u32, burst: u32) -> Budgeted {
        Budgeted {
            inner,
            bucket: Mutex::new(TokenBucket::new(per_sec, burst, Instant::now())),
        }
    }
}

impl Upstream for Budgeted {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let taken = self
            .bucket
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(Instant::now());
        match taken {
            Ok(()) => self.inner.get(path_and_query),
            Err(wait) => Err(FetchError::BudgetExhausted(retry_secs(wait))),
        }
    }
}

impl Budgeted {
    /// Whether fewer than 1/[`UPSTREAM_SHARE_DIVISOR`] of the burst is
    /// left at `now`: the budget is scarce, and each client may spend only
    /// its own share of it.
    fn scarce(&self, now: Instant) -> bool {
        let mut bucket = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        bucket.refill(now);
        bucket.tokens < bucket.burst / f64::from(UPSTREAM_SHARE_DIVISOR)
    }
}

/// Per-client shares of the upstream budget: a [`PerClient`] whose
/// upstream spends one token of the client's own bucket (1/
/// [`UPSTREAM_SHARE_DIVISOR`] of the budget's rate and burst, keyed like
/// [`ClientLimiter`]) with each request. While the budget has plenty left
/// a client with an empty share still goes ahead (a lone client may use the
/// whole budget); once it is scarce, only a client with its own share left
/// does, so one client's flood cannot take the rest from the others.
pub struct UpstreamShares {
    shares: Arc<ClientLimiter>,
    budget: Arc<Budgeted>,
}

impl UpstreamShares {
    /// Shares of `budget` (its rate and burst divided by
    /// [`UPSTREAM_SHARE_DIVISOR`], at least 1).
    pub fn new(budget: Arc<Budgeted>) -> UpstreamShares {
        let (rate, burst) = {
            let b = budget.bucket.lock().unwrap_or_else(|p| p.into_inner());
            (b.rate, b.burst)
        };
        let part = |x: f64| ((x / f64::from(UPSTREAM_SHARE_DIVISOR)) as u32).max(1);
        UpstreamShares {
            shares: Arc::new(ClientLimiter::new(part(rate), part(burst))),
            budget,
        }
    }
}

impl PerClient for UpstreamShares {
    fn for_client(&self, client: IpAddr, upstream: &Arc<dyn Upstream>) -> Arc<dyn Upstream> {
        Arc::new(ClientShare {
            client,
            shares: Arc::clone(&self.shares),
            budget: Arc::clone(&self.budget),
            inner: Arc::clone(upstream),
        })
    }
}

/// The upstream of one client's calls.
struct ClientShare {
    client: IpAddr,
    shares: Arc<ClientLimiter>,
    budget: Arc<Budgeted>,
    inner: Arc<dyn Upstream>,
}

impl Upstream for ClientShare {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let now = Instant::now();
        if let Err(wait) = self.shares.check(self.client, now) {
            if self.budget.scarce(now) {
                return Err(FetchError::BudgetExhausted(retry_secs(wait)));
            }
        }
        self.inner.get(path_and_query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn ip(n: u32) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(n))
    }

    #[test]
    fn bucket_allows_the_burst_then_refills_at_the_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2, 3, t0);
        for _ in 0..3 {
            assert_eq!(b.take(t0), Ok(()));
        }
        assert_eq!(b.take(t0), Err(Duration::from_millis(500)));
        assert_eq!(b.take(t0 + Duration::from_millis(500)), Ok(()));
        assert_eq!(
            b.take(t0 + Duration::from_millis(500)),
            Err(Duration::from_millis(500))
        );
        // A long pause refills to the burst, not beyond it.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(b.take(later), Ok(()));
        }
        assert!(b.take(later).is_err());
    }

    #[test]
    fn retry_seconds_round_up_and_are_at_least_one() {
        assert_eq!(retry_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_secs(Duration::from_millis(1000)), 1);
        assert_eq!(retry_secs(Duration::from_millis(1001)), 2);
        assert_eq!(retry_secs(Duration::ZERO), 1);
        assert_eq!(
            rate_limited_text(Duration::from_millis(1500)),
            "Too many tool calls from this address. Retry after 2s. (HTTP 429, code rate_limited, retry after 2s)"
        );
    }

    #[test]
    fn clients_are_independent_and_ipv6_counts_per_64() {
        let t0 = Instant::now();
        let l = ClientLimiter::new(1, 2);
        assert_eq!(l.check(ip(1), t0), Ok(()));
        assert_eq!(l.check(ip(1), t0), Ok(()));
        assert_eq!(l.check(ip(1), t0), Err(Duration::from_secs(1)));
        assert_eq!(l.check(ip(2), t0), Ok(()));
        let a: Ipv6Addr = "2001:db8:1:2::1".parse().unwrap();
        let b: Ipv6Addr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: Ipv6Addr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(l.check(IpAddr::V6(a), t0), Ok(()));
        assert_eq!(l.check(IpAddr::V6(b), t0), Ok(()));
        assert!(l.check(IpAddr::V6(a), t0).is_err());
        assert_eq!(l.check(IpAddr::V6(c), t0), Ok(()));
        let mapped = IpAddr::V6(Ipv4Addr::new(0, 0, 0, 1).to_ipv6_mapped());
        assert_eq!(client_key(mapped), ip(1));
        assert!(
            l.check(mapped, t0).is_err(),
            "mapped ::ffff:0.0.0.1 is ip(1)"
        );
    }

    #[test]
    fn the_table_stays_bounded_and_keeps_active_clients() {
        let t0 = Instant::now();
        let l = ClientLimiter::with_capacity(1, 1, 8);
        // Eight clients spend their token: all carry state.
        for n in 0..8 {
            assert_eq!(
                l.check(ip(n), t0 + Duration::from_millis(u64::from(n))),
                Ok(())
            );
        }
        assert_eq!(l.tracked(), 8);
        // A ninth evicts the least recently seen half; the newest keep
        // their debt.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(l.check(ip(100), t1), Ok(()));
        assert!(l.tracked() <= 8);
        assert!(
            l.check(ip(7), t1).is_err(),
            "a recent client keeps its state"
        );
        // Once every bucket has refilled, a newcomer clears them all.
        for n in 200..1000 {
            assert_eq!(l.check(ip(n), t1 + Duration::from_secs(5)), Ok(()));
            assert!(l.tracked() <= 8);
        }
    }

    struct Counting(AtomicUsize);
    impl Upstream for Counting {
        fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Err(FetchError::Timeout)
        }
    }

    #[test]
    fn the_budget_fails_fast_once_spent() {
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let b = Budgeted::with_burst(inner.clone(), 1, 3);
        for _ in 0..3 {
            assert!(matches!(b.get("/2/status/1"), Err(FetchError::Timeout)));
        }
        match b.get("/2/status/1") {
            Err(FetchError::BudgetExhausted(secs)) => assert_eq!(secs, 1),
            other => panic!("expected BudgetExhausted, got {other:?}"),
        }
        assert_eq!(inner.0.load(Ordering::SeqCst), 3, "the 4th never went out");
    }

    #[test]
    fn one_client_cannot_take_the_last_third_of_the_upstream_budget() {
        struct Ok200;
        impl Upstream for Ok200 {
            fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
                Ok(UpstreamResponse {
                    status: 200,
                    retry_after: None,
                    content_type: None,
                    body: Vec::new().into(),
                })
            }
        }
        let ok: Arc<dyn Upstream> = Arc::new(Ok200);
        let budget = Arc::new(Budgeted::new(ok, DEFAULT_UPSTREAM_BUDGET));
        let up: Arc<dyn Upstream> = budget.clone();
        let shares = UpstreamShares::new(budget);
        // A lone client: its share (15), then on while more than a third
        // of the burst (15 of 45) is left: 30 requests (31 when the bucket
        // refilled a little meanwhile), then refused.
        let a = shares.for_client(ip(1), &up);
        let spent = (0..100).take_while(|_| a.get("/2/x").is_ok()).count();
        assert!((30..=31).contains(&spent), "{spent}");
        assert!(matches!(a.get("/2/x"), Err(FetchError::BudgetExhausted(_))));
        // Another client gets the rest of the budget from its own share.
        let b = shares.for_client(ip(2), &up);
        let b_spent = (0..100).take_while(|_| b.get("/2/x").is_ok()).count();
        assert!(
            (45 - spent..=46 - spent).contains(&b_spent),
            "{spent} {b_spent}"
        );
    }
}
