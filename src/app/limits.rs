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
//! - [`UpstreamShares`]: the budget is shared fairly among the client
//!   addresses that want it right now ([`super::fair::FairShares`]): each
//!   of `n` clients that keep asking gets `1/n` of the rate, a client
//!   that asks for less gets all it asks for, one client may owe at most
//!   `burst / (n + 1)`, and one share is always kept free for a client
//!   that owes nothing, so no set of clients can leave another without
//!   upstream requests. IPv6 clients are keyed by
//!   [`crate::server::admission::fair_key`] (at most
//!   [`crate::server::admission::SHARES_PER_SITE`] shares per /48), so
//!   many /64s of one site are not many clients. A refused request is not
//!   sent and spends nothing (retrying burns no share). A client refused
//!   this way sees what an empty budget gives (`… (HTTP 503, code
//!   upstream_budget, retry after <n>s)`, a `503` problem on the X
//!   routes). Off with `--rate-limit 0` (behind a proxy every client
//!   shares one address; the budget is then spent first come, first
//!   served) or `--upstream-budget 0`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::fair::FairShares;
#[cfg(test)]
use crate::config::DEFAULT_UPSTREAM_BUDGET;
use crate::server::admission::fair_key;
use crate::x::upstream::{FetchError, PerClient, Upstream, UpstreamResponse};

pub use super::fair::MAX_TRACKED_CLIENTS;

/// Seconds' worth of the upstream budget that may be spent at once.
///
/// Default is 3 (a burst of 45 requests at the default budget).
pub const UPSTREAM_BUDGET_BURST_SECS: u32 = 3;

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

/// An [`Upstream`] decorator that spends one request of the server's
/// upstream budget per request and fails fast with
/// [`FetchError::BudgetExhausted`] when none is left. Requests of no
/// client address ([`Upstream::get`] here) count as one client; those of
/// a client go through [`UpstreamShares`].
pub struct Budgeted {
    inner: Arc<dyn Upstream>,
    shares: Mutex<FairShares<IpAddr>>,
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
            shares: Mutex::new(FairShares::new(per_sec, burst, Instant::now())),
        }
    }

    /// Takes one request for `client` (`None`: no address), or the
    /// refusal; a refusal spends nothing.
    fn take(&self, client: Option<&IpAddr>) -> Result<(), FetchError> {
        self.shares
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(client, Instant::now())
            .map_err(|refused| FetchError::BudgetExhausted(retry_secs(refused.wait())))
    }
}

impl Budgeted {
    /// A request of `client` (`None`: no address) through the budget.
    /// With the event-loop upstream (a restartable run) the fetch only
    /// says what the call needs: the request is asked for first, and a
    /// request is spent only when the call makes one of its own (not when
    /// it joins another call's request in flight, nor for an answer
    /// already fetched for it, nor when the upstream refused at once, as
    /// a cooling base does).
    fn spend(
        &self,
        client: Option<&IpAddr>,
        path_and_query: &str,
    ) -> Result<UpstreamResponse, FetchError> {
        use crate::x::restart;
        // An answer an event loop already fetched for this call was
        // counted when the call needed it.
        if restart::is_delivered(path_and_query) {
            return self.inner.get(path_and_query);
        }
        if !restart::active() {
            self.take(client)?;
            return self.inner.get(path_and_query);
        }
        restart::take_joining();
        let asked = self.inner.get(path_and_query);
        let joined = restart::take_joining();
        if matches!(asked, Err(FetchError::Pending)) && !joined {
            self.take(client)?;
        }
        asked
    }
}

impl Upstream for Budgeted {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        self.spend(None, path_and_query)
    }
}

/// Fair shares of the upstream budget per client address: a [`PerClient`]
/// whose upstream takes each request from the calling client's share of
/// `budget` (see the module documentation).
pub struct UpstreamShares {
    budget: Arc<Budgeted>,
}

impl UpstreamShares {
    /// Shares of `budget`.
    pub fn new(budget: Arc<Budgeted>) -> UpstreamShares {
        UpstreamShares { budget }
    }
}

impl PerClient for UpstreamShares {
    /// The client's upstream: its share of the budget, then the budget's
    /// own upstream (`_upstream`, the budget itself, would take a second
    /// time).
    fn for_client(&self, client: IpAddr, _upstream: &Arc<dyn Upstream>) -> Arc<dyn Upstream> {
        Arc::new(ClientShare {
            key: fair_key(client),
            budget: Arc::clone(&self.budget),
        })
    }
}

/// The upstream of one client's calls.
struct ClientShare {
    /// The client's [`fair_key`].
    key: IpAddr,
    budget: Arc<Budgeted>,
}

impl Upstream for ClientShare {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        self.budget.spend(Some(&self.key), path_and_query)
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

    /// The event-loop upstream as a run sees it: every fetch is left
    /// pending; paths starting `/joined` join a request in flight.
    struct Loop(AtomicUsize);
    impl Upstream for Loop {
        fn get(&self, path: &str) -> Result<UpstreamResponse, FetchError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            if path.starts_with("/joined") {
                crate::x::restart::joining();
            }
            Err(FetchError::Pending)
        }
    }

    /// With the event-loop upstream, a call that joins another call's
    /// request in flight spends nothing of the budget (the request is
    /// counted once, by the call that makes it); one that needs a request
    /// of its own spends one, and is refused before it needs anything once
    /// the budget is spent.
    #[test]
    fn joining_a_request_in_flight_spends_nothing() {
        use crate::x::restart;
        let inner = Arc::new(Loop(AtomicUsize::new(0)));
        let b = Budgeted::with_burst(inner.clone(), 1, 2);
        restart::enter(Box::default());
        assert!(matches!(b.get("/2/status/1"), Err(FetchError::Pending)));
        for _ in 0..5 {
            assert!(matches!(b.get("/joined/1"), Err(FetchError::Pending)));
        }
        assert!(matches!(b.get("/2/status/2"), Err(FetchError::Pending)));
        assert!(matches!(
            b.get("/2/status/3"),
            Err(FetchError::BudgetExhausted(1))
        ));
        // Joining still works with the budget spent.
        assert!(matches!(b.get("/joined/2"), Err(FetchError::Pending)));
        assert!(!restart::take_joining(), "the note was taken");
        restart::leave();
        assert_eq!(inner.0.load(Ordering::SeqCst), 9);
    }

    struct Ok200(AtomicUsize);
    impl Upstream for Ok200 {
        fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(UpstreamResponse {
                status: 200,
                retry_after: None,
                content_type: None,
                body: Vec::new().into(),
            })
        }
    }

    #[test]
    fn one_client_cannot_take_the_share_kept_for_others() {
        let ok = Arc::new(Ok200(AtomicUsize::new(0)));
        let inner: Arc<dyn Upstream> = ok.clone();
        let budget = Arc::new(Budgeted::new(inner, DEFAULT_UPSTREAM_BUDGET));
        let up: Arc<dyn Upstream> = budget.clone();
        let shares = UpstreamShares::new(budget);
        // A lone client: half the burst of 45 (22), then refused, having
        // sent nothing more; 23 when the budget paid back a little
        // meanwhile.
        let a = shares.for_client(ip(1), &up);
        let spent = (0..100).take_while(|_| a.get("/2/x").is_ok()).count();
        assert!((22..=23).contains(&spent), "{spent}");
        assert!(matches!(a.get("/2/x"), Err(FetchError::BudgetExhausted(1))));
        assert_eq!(ok.0.load(Ordering::SeqCst), spent, "refusals send nothing");
        // Another client finds the share kept free and takes from it
        // until, owing, it must leave the next share (45 / 3) free: 8.
        let b = shares.for_client(ip(2), &up);
        let b_spent = (0..100).take_while(|_| b.get("/2/x").is_ok()).count();
        assert!((8..=9).contains(&b_spent), "{spent} {b_spent}");
        // The many /64s of one /48 are at most SHARES_PER_SITE clients:
        // 1000 of them get no more than a few shares' worth.
        let before = ok.0.load(Ordering::SeqCst);
        for n in 0..1000u128 {
            let v6 = Ipv6Addr::from((0x2001_0db8_0001u128 << 80) | (n << 64) | 1);
            let _ = shares.for_client(IpAddr::V6(v6), &up).get("/2/x");
        }
        let site = ok.0.load(Ordering::SeqCst) - before;
        assert!(site <= 45 - spent - b_spent + 1, "{site}");
    }

    /// Four clients flood for a second while a fifth asks for less than a
    /// fifth of the budget: the fifth is always served. Before the fair
    /// split the flooders' own shares emptied the global bucket and the
    /// fifth was refused almost every time.
    #[test]
    fn four_flooders_leave_a_light_client_its_share() {
        let ok = Arc::new(Ok200(AtomicUsize::new(0)));
        let inner: Arc<dyn Upstream> = ok.clone();
        let budget = Arc::new(Budgeted::new(inner, 40));
        let up: Arc<dyn Upstream> = budget.clone();
        let shares = Arc::new(UpstreamShares::new(budget));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flooders: Vec<_> = (1..=4)
            .map(|n| {
                let (shares, up, stop) = (shares.clone(), up.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mine = shares.for_client(ip(n), &up);
                    let mut got = 0;
                    while !stop.load(Ordering::Relaxed) {
                        got += usize::from(mine.get("/2/x").is_ok());
                    }
                    got
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        let light = shares.for_client(ip(9), &up);
        // 5 a second: under its fair share of 40 / 5 = 8.
        let served = (0..6)
            .filter(|_| {
                std::thread::sleep(Duration::from_millis(200));
                light.get("/2/x").is_ok()
            })
            .count();
        stop.store(true, Ordering::Relaxed);
        let got: Vec<usize> = flooders.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(served, 6, "flooders got {got:?}");
    }
}
