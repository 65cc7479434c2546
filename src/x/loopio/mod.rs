//! The server's upstream client on the event loops (issue 28): no thread
//! waits for FxTwitter.
//!
//! - [`wire`]: the bytes of one exchange, through `ureq-proto`'s sans-IO
//!   client state machine (request out, response in, the body cap);
//! - [`conn`]: one upstream connection, a non-blocking `mio` socket with
//!   rustls's buffered `ClientConnection` over it for `https`;
//! - [`driver`]: one event loop's side: its keep-alive pool, the requests
//!   it makes, their deadlines on the loop's timers, the calls parked on it
//!   until their answers are in;
//! - [`names`]: base names resolved ahead, on the workers;
//! - this file: the [`Transport`] every loop shares (the providers and
//!   their bases with their cool-downs, the single-flight table, the
//!   loops' mailboxes) and [`LoopUpstream`], the [`Upstream`] the tools
//!   call, which answers from what a loop fetched for the call or asks a
//!   loop to fetch it ([`FetchError::Pending`], see [`super::restart`]).
//!
//! What an agent sees is the same as with the blocking `ureq` client
//! ([`super::upstream::HttpUpstream`], still used by `xmd client`, the
//! start-up check, and `--upstream-io threads`): the same failures, mapped
//! to the same causes (`dns`, `refused`, `reset`, `timeout`, statuses),
//! the same base rotation and cool-downs, the same cache and single-flight.
//! Two things differ: `--call-timeout` also cuts a request in flight (a
//! call answers within it), and a kept-alive connection the upstream
//! closed while it idled is retried once on a fresh one (RFC 9112
//! §9.3.1) instead of failing the call.

pub mod body;
pub mod conn;
pub mod driver;
pub mod names;
pub mod wire;

#[cfg(all(test, feature = "tls"))]
mod tls_tests;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mio::Waker;

use super::memory::{Reservation, WorkBudget};
use super::restart::{self, Need, FALLBACK, PRIMARY};
use super::upstream::{FetchError, Upstream, UpstreamResponse, MAX_COOLDOWN};

type Answer = Result<UpstreamResponse, FetchError>;

/// One base URL of a provider, parsed, with its cool-down.
#[derive(Debug)]
pub struct Base {
    /// The URL as configured, without a trailing `/`.
    pub url: String,
    /// `https`.
    pub tls: bool,
    /// Host name or IP literal (IPv6 in brackets).
    pub host: String,
    /// Port (80 or 443 when not given).
    pub port: u16,
    cool_until: Mutex<Option<Instant>>,
}

impl Base {
    /// Parses `http://host[:port][/prefix]` or `https://…`; `None` for
    /// anything else.
    pub fn parse(url: &str) -> Option<Base> {
        let url = url.trim().trim_end_matches('/');
        let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else {
            (false, url.strip_prefix("http://")?)
        };
        let authority = rest.split('/').next()?;
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let default = if tls { 443 } else { 80 };
        let (host, port) = match authority.rfind(':') {
            Some(i) if !authority[i..].contains(']') => {
                (&authority[..i], authority[i + 1..].parse().ok()?)
            }
            _ => (authority, default),
        };
        if host.is_empty() {
            return None;
        }
        Some(Base {
            url: url.to_string(),
            tls,
            host: host.to_string(),
            port,
            cool_until: Mutex::new(None),
        })
    }

    /// Time left in this base's cool-down, if any.
    pub fn cooling_left(&self, now: Instant) -> Option<Duration> {
        let mut g = self.cool_until.lock().unwrap_or_else(|p| p.into_inner());
        match *g {
            Some(t) if t > now => Some(t - now),
            Some(_) => {
                *g = None;
                None
            }
            None => None,
        }
    }

    /// Cools this base for `d` (at most [`MAX_COOLDOWN`]).
    pub fn cool(&self, d: Duration) {
        let until = Instant::now() + d.min(MAX_COOLDOWN);
        let mut g = self.cool_until.lock().unwrap_or_else(|p| p.into_inner());
        *g = Some(g.map_or(until, |t| t.max(until)));
    }

    /// The server name rustls checks the certificate against.
    pub fn server_name(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }
}

/// One upstream provider: its bases, used in turn, and the global timeout
/// of one request to it.
#[derive(Debug)]
pub struct Provider {
    /// The bases, in rotation order.
    pub bases: Vec<Base>,
    next: AtomicUsize,
    /// Global timeout of one request (connect, TLS, send, the whole
    /// answer): `--upstream-timeout` or `--syndication-timeout`.
    pub timeout: Duration,
}

impl Provider {
    fn new(list: &str, timeout: Duration) -> Provider {
        let bases = list.split(',').filter_map(Base::parse).collect();
        Provider {
            bases,
            next: AtomicUsize::new(0),
            timeout,
        }
    }

    /// The base a new request starts with (in turn).
    pub fn first(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len().max(1)
    }

    /// Whole seconds until the first base stops cooling, when every base
    /// is cooling.
    pub fn all_cooling(&self, now: Instant) -> Option<u64> {
        let mut soonest: Option<Duration> = None;
        for b in &self.bases {
            let left = b.cooling_left(now)?;
            soonest = Some(soonest.map_or(left, |s| s.min(left)));
        }
        soonest.map(super::upstream::ceil_secs)
    }
}

/// Who waits for a request in flight: a call parked on lane `lane`.
#[derive(Debug, Clone)]
pub struct Waiter {
    /// The event loop holding the call.
    pub lane: usize,
    /// The call's place on that loop.
    pub park: u64,
    /// The call's deadline.
    pub deadline: Instant,
    /// The call's cancel flag (its client left).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Waiter {
    /// Whether the call still waits (before its deadline, its client there).
    pub fn live(&self, now: Instant) -> bool {
        now < self.deadline
            && !self
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// An answer for a call parked on another loop.
pub struct Delivery {
    /// The call's place on its loop.
    pub park: u64,
    /// What was asked.
    pub need: Need,
    /// The answer.
    pub answer: Answer,
    /// The room its body is counted in (shared by every call it answers).
    pub room: Option<Arc<Reservation>>,
    /// How long the request took.
    pub took: Duration,
}

struct Lane {
    inbox: Mutex<Vec<Delivery>>,
    mail: AtomicBool,
    waker: Arc<Waker>,
}

/// What every event loop's upstream side shares.
pub struct Transport {
    providers: Vec<Provider>,
    names: names::Names,
    /// Requests in flight, by what they ask, and who waits for them.
    flights: Mutex<HashMap<Need, Vec<Waiter>>>,
    lanes: OnceLock<Vec<Lane>>,
    call_timeout: Duration,
    /// The working budget bodies are counted in before they are read
    /// ([`Transport::meter`]).
    work: OnceLock<Arc<WorkBudget>>,
    /// Requests whose body waits for room in it.
    starved: Mutex<HashSet<Need>>,
    #[cfg(feature = "tls")]
    tls: OnceLock<Arc<rustls::ClientConfig>>,
}

impl Transport {
    /// The transport for the FxTwitter bases `primary` (a comma-separated
    /// list) and, when given, the post fallback's bases; calls last at most
    /// `call_timeout`.
    pub fn new(
        primary: (&str, Duration),
        fallback: Option<(&str, Duration)>,
        call_timeout: Duration,
    ) -> Arc<Transport> {
        let mut providers = vec![Provider::new(primary.0, primary.1)];
        if let Some((list, timeout)) = fallback {
            providers.push(Provider::new(list, timeout));
        }
        Arc::new(Transport {
            providers,
            names: names::Names::default(),
            flights: Mutex::new(HashMap::new()),
            lanes: OnceLock::new(),
            call_timeout,
            work: OnceLock::new(),
            starved: Mutex::new(HashSet::new()),
            #[cfg(feature = "tls")]
            tls: OnceLock::new(),
        })
    }

    /// The upstream of the tools (FxTwitter).
    pub fn primary(self: &Arc<Self>) -> Arc<dyn Upstream> {
        Arc::new(LoopUpstream {
            transport: Arc::clone(self),
            provider: PRIMARY,
        })
    }

    /// The post fallback, when configured.
    pub fn fallback(self: &Arc<Self>) -> Option<Arc<dyn Upstream>> {
        (self.providers.len() > FALLBACK).then(|| {
            Arc::new(LoopUpstream {
                transport: Arc::clone(self),
                provider: FALLBACK,
            }) as Arc<dyn Upstream>
        })
    }

    /// Connects the loops: one mailbox per loop, woken by its waker (in
    /// lane order). Called once, before the loops run.
    pub fn attach(&self, wakers: Vec<Arc<Waker>>) {
        let _ = self.lanes.set(
            wakers
                .into_iter()
                .map(|waker| Lane {
                    inbox: Mutex::new(Vec::new()),
                    mail: AtomicBool::new(false),
                    waker,
                })
                .collect(),
        );
    }

    /// Counts every upstream body in `work` (the tools' working budget,
    /// `--max-working-bytes`) from its head on, before it is read: the
    /// loops read a body only once there is room for it
    /// ([`crate::x::memory::transfer_bytes`]), and the room goes with the
    /// answer to the calls that read it. Called once, before the loops run.
    pub fn meter(&self, work: Arc<WorkBudget>) {
        let _ = self.work.set(work);
    }

    /// The working budget, when metered.
    pub(crate) fn work(&self) -> Option<Arc<WorkBudget>> {
        self.work.get().cloned()
    }

    fn starved_set(&self) -> std::sync::MutexGuard<'_, HashSet<Need>> {
        self.starved.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The request of `need` has a body waiting for room.
    pub(crate) fn starve(&self, need: &Need) {
        self.starved_set().insert(need.clone());
    }

    /// The request of `need` no longer waits for room.
    pub(crate) fn fed(&self, need: &Need) {
        self.starved_set().remove(need);
    }

    /// Whether the request of `need` has a body waiting for room.
    pub(crate) fn is_starved(&self, need: &Need) -> bool {
        self.starved_set().contains(need)
    }

    /// The call deadline (`--call-timeout`).
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    pub(crate) fn provider(&self, i: usize) -> Option<&Provider> {
        self.providers.get(i)
    }

    pub(crate) fn names(&self) -> &names::Names {
        &self.names
    }

    /// Adds `waiter` to the flight of `need`; true when there was none (the
    /// caller starts it).
    pub(crate) fn join_flight(&self, need: &Need, waiter: Waiter) -> bool {
        let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        match flights.get_mut(need) {
            Some(waiters) => {
                waiters.push(waiter);
                false
            }
            None => {
                flights.insert(need.clone(), vec![waiter]);
                true
            }
        }
    }

    /// Whether anyone still waits for the flight of `need`.
    pub(crate) fn flight_wanted(&self, need: &Need, now: Instant) -> bool {
        let flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        flights
            .get(need)
            .is_some_and(|w| w.iter().any(|w| w.live(now)))
    }

    /// Whether a request for `need` is in flight (a call needing it now
    /// joins it).
    pub(crate) fn in_flight(&self, need: &Need) -> bool {
        let flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        flights.contains_key(need)
    }

    /// Ends the flight of `need`: its waiters.
    pub(crate) fn land(&self, need: &Need) -> Vec<Waiter> {
        let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        flights.remove(need).unwrap_or_default()
    }

    /// Posts a delivery to loop `lane` and wakes it.
    pub(crate) fn post(&self, lane: usize, delivery: Delivery) {
        let Some(l) = self.lanes.get().and_then(|l| l.get(lane)) else {
            return;
        };
        l.inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(delivery);
        l.mail.store(true, Ordering::Release);
        let _ = l.waker.wake();
    }

    /// Takes loop `lane`'s deliveries.
    pub(crate) fn take_mail(&self, lane: usize) -> Vec<Delivery> {
        let Some(l) = self.lanes.get().and_then(|l| l.get(lane)) else {
            return Vec::new();
        };
        if !l.mail.swap(false, Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *l.inbox.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The TLS client settings (built on first use: the webpki roots).
    #[cfg(feature = "tls")]
    pub(crate) fn tls(&self) -> Arc<rustls::ClientConfig> {
        Arc::clone(self.tls.get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|b| b.with_root_certificates(roots).with_no_client_auth());
            Arc::new(config.unwrap_or_else(|_| {
                rustls::ClientConfig::builder()
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth()
            }))
        }))
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("providers", &self.providers)
            .field("call_timeout", &self.call_timeout)
            .finish_non_exhaustive()
    }
}

/// The [`Upstream`] the tools call when the event loops make the requests:
/// the answer a loop fetched for this call, or [`FetchError::Pending`]
/// after the names of the provider's bases are resolved (the fetcher
/// records the need, see [`super::restart`]).
pub struct LoopUpstream {
    transport: Arc<Transport>,
    provider: usize,
}

impl Upstream for LoopUpstream {
    fn get(&self, path_and_query: &str) -> Answer {
        if let Some(answer) = restart::delivered(self.provider, path_and_query) {
            return answer;
        }
        if !restart::active() {
            return Err(FetchError::Other(
                "the event-loop upstream was asked outside a tool call".into(),
            ));
        }
        let Some(p) = self.transport.provider(self.provider) else {
            return Err(FetchError::Other("no upstream base configured".into()));
        };
        if p.bases.is_empty() {
            return Err(FetchError::Other("no upstream base configured".into()));
        }
        let now = Instant::now();
        if let Some(secs) = p.all_cooling(now) {
            return Err(FetchError::CoolingDown(secs));
        }
        let need = Need {
            provider: self.provider,
            path: path_and_query.to_string(),
        };
        if self.transport.in_flight(&need) {
            // Another call's request answers this one too (the upstream
            // budget is not spent twice, crate::app::limits).
            restart::joining();
            return Err(FetchError::Pending);
        }
        for b in p.bases.iter().filter(|b| b.cooling_left(now).is_none()) {
            // A failure is remembered and met by the loop as `dns`.
            let _ = self.transport.names.ensure(&b.host, b.port);
        }
        Err(FetchError::Pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_parse() {
        let b = Base::parse("https://api.fxtwitter.com/").unwrap();
        assert_eq!(
            (b.tls, b.host.as_str(), b.port),
            (true, "api.fxtwitter.com", 443)
        );
        let b = Base::parse("http://127.0.0.1:8081/prefix").unwrap();
        assert_eq!((b.tls, b.host.as_str(), b.port), (false, "127.0.0.1", 8081));
        assert_eq!(b.url, "http://127.0.0.1:8081/prefix");
        let b = Base::parse("http://[::1]:9/").unwrap();
        assert_eq!(
            (b.host.as_str(), b.port, b.server_name()),
            ("[::1]", 9, "::1")
        );
        let b = Base::parse("http://[::1]").unwrap();
        assert_eq!((b.host.as_str(), b.port), ("[::1]", 80));
        for bad in ["ftp://a", "http://", "http://a:x", "http://u@a", "a"] {
            assert!(Base::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn asked_outside_a_run_it_fails_and_inside_it_is_pending() {
        let t = Transport::new(
            ("http://127.0.0.1:9", Duration::from_secs(1)),
            None,
            Duration::from_secs(5),
        );
        let up = t.primary();
        assert!(matches!(up.get("/2/status/1"), Err(FetchError::Other(_))));
        assert!(t.fallback().is_none());
        restart::enter(Box::default());
        assert!(matches!(up.get("/2/status/1"), Err(FetchError::Pending)));
        t.provider(PRIMARY).unwrap().bases[0].cool(Duration::from_secs(3));
        assert!(matches!(
            up.get("/2/status/1"),
            Err(FetchError::CoolingDown(3))
        ));
        restart::leave();
    }
}
