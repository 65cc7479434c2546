//! In-memory cache of upstream answers: per-kind time to live, a byte
//! budget with least-recently-used eviction, and coalescing of concurrent
//! identical misses into one upstream request (std `Mutex` + `Condvar`).
//!
//! Only `200` answers are stored, and only those the caller's reader
//! found storable ([`Upstream::get_keep`]: the typed parse the caller does
//! anyway says so), or, for a caller without one, [`cacheable`]. Errors
//! (404, 429, 5xx, transport failures) are never stored, but a request
//! already in flight is shared: callers that ask for the same path while
//! it runs wait for it and get its answer, whatever it is.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::cacheable::cacheable;
use super::upstream::{FetchError, Upstream, UpstreamResponse};

/// Default byte budget of the cache: 32 MiB. When full, the least recently
/// used answers are dropped; the agent then sees `cache: "miss"` for them.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Bytes counted per stored answer on top of its key and body. Default 256.
pub const ENTRY_OVERHEAD_BYTES: usize = 256;

/// Largest share of the budget one answer may take: 1/8. A larger answer
/// is served but not stored (its next request is a `miss` again).
pub const MAX_ENTRY_FRACTION: usize = 8;

/// Time to live of a post, thread (`/2/status`, `/2/thread`, and the
/// syndication fallback's `/tweet-result`): 5 minutes.
/// Counts shown may be this old.
pub const TTL_POST: Duration = Duration::from_secs(300);
/// Time to live of a reply list (`/2/conversation`): 2 minutes.
pub const TTL_CONVERSATION: Duration = Duration::from_secs(120);
/// Time to live of a profile (`/2/profile/{handle}`): 5 minutes.
pub const TTL_PROFILE: Duration = Duration::from_secs(300);
/// Time to live of a timeline page (`/2/profile/{handle}/statuses`):
/// 1 minute, so new posts show up quickly.
pub const TTL_TIMELINE: Duration = Duration::from_secs(60);
/// Time to live of a followers/following page: 5 minutes.
pub const TTL_CONNECTIONS: Duration = Duration::from_secs(300);
/// Time to live of a search page (`/2/search`): 1 minute.
pub const TTL_SEARCH: Duration = Duration::from_secs(60);
/// Time to live of a user lookup (`/2/typeahead`): 5 minutes.
pub const TTL_TYPEAHEAD: Duration = Duration::from_secs(300);
/// Time to live of any other path: 1 minute.
pub const TTL_OTHER: Duration = Duration::from_secs(60);

/// How long an answer for an upstream path (and query) stays fresh. The
/// tools above this layer declare the lifetimes
/// (`crate::x::registry::ttl_for`) and hand theirs to [`Cache::new`].
pub type TtlFor = fn(&str) -> Duration;

/// How a result was served, reported as `structuredContent.cache` (added
/// when the result is serialized, never part of what a tool builds), in
/// the access log and in `xmd_cache_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// Every upstream answer came from the cache (or the whole result
    /// from the result cache).
    Hit = 0,
    /// At least one request reached the upstream.
    Miss = 1,
    /// The cache is disabled.
    Bypass = 2,
}

impl CacheStatus {
    /// The labels, indexed by the discriminant.
    pub const LABELS: [&'static str; 3] = ["hit", "miss", "bypass"];

    /// The label: `hit`, `miss` or `bypass`.
    pub fn as_str(self) -> &'static str {
        CacheStatus::LABELS[self as usize]
    }
}

/// How one lookup was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// From a stored answer, or from a request another caller made.
    Hit,
    /// A new upstream request.
    Miss,
    /// The cache is disabled (budget 0).
    Bypass,
}

type Answer = Result<UpstreamResponse, FetchError>;

/// One upstream request in flight, awaited by coalesced callers.
struct Flight {
    result: Mutex<Landing>,
    done: Condvar,
}

/// A flight's answer once it lands, and how many callers wait for it: the
/// lander wakes them only when there are any (a wake is a system call).
#[derive(Default)]
struct Landing {
    answer: Option<Answer>,
    waiters: usize,
}

struct Entry {
    /// The answer (its body shared, never copied).
    resp: UpstreamResponse,
    expires: Instant,
    size: usize,
    tick: u64,
}

enum Slot {
    Ready(Entry),
    Pending(Arc<Flight>),
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Slot>,
    lru: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
}

impl Inner {
    fn remove_ready(&mut self, key: &str) {
        if let Some(Slot::Ready(e)) = self.map.get(key) {
            let (tick, size) = (e.tick, e.size);
            self.lru.remove(&tick);
            self.bytes -= size;
            self.map.remove(key);
            crate::heap::UPSTREAM_CACHE_BYTES
                .store(self.bytes, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The shared cache.
pub struct Cache {
    budget: usize,
    ttl_for: TtlFor,
    inner: Mutex<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A lookup's answer waiting for its reader's word ([`Cache::lookup_kept`]);
/// dropped unfinished, the answer is not stored.
pub struct Kept<'c> {
    path_and_query: &'c str,
    ttl_for: TtlFor,
    /// The time left of a stored answer (a hit).
    left: Option<Duration>,
    /// The request this lookup made (a miss), finished when dropped.
    flight: Option<FlightGuard<'c>>,
}

impl Kept<'_> {
    /// Takes the reader's word (`storable`): a new answer is stored on it.
    /// Returns how long the answer stays fresh: a stored answer's time
    /// left, else the full [`ttl_for`] of a storable answer, else zero.
    pub fn finish(self, storable: bool) -> Duration {
        let fresh = match self.left {
            Some(left) => left,
            None if storable => (self.ttl_for)(self.path_and_query),
            None => Duration::ZERO,
        };
        if let Some(mut guard) = self.flight {
            guard.keep = storable.then_some(fresh);
        }
        fresh
    }
}

/// Finishes a flight when dropped (also on panic), so waiters never hang.
struct FlightGuard<'a> {
    cache: &'a Cache,
    key: &'a str,
    flight: Arc<Flight>,
    answer: Option<Answer>,
    /// How long `answer` is kept, when its reader found it storable (its
    /// [`ttl_for`], looked up once for storing and freshness).
    keep: Option<Duration>,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        let answer = self
            .answer
            .take()
            .unwrap_or_else(|| Err(FetchError::Other("upstream request abandoned".into())));
        {
            let mut inner = lock(&self.cache.inner);
            let ours = matches!(inner.map.get(self.key), Some(Slot::Pending(f)) if Arc::ptr_eq(f, &self.flight));
            // A stored answer takes the flight's slot; otherwise the slot goes.
            let stored = match (&answer, self.keep) {
                (Ok(resp), Some(ttl)) => self.cache.store(&mut inner, self.key, resp.clone(), ttl),
                _ => false,
            };
            if ours && !stored {
                inner.map.remove(self.key);
            }
        }
        let waiters = {
            let mut landing = lock(&self.flight.result);
            landing.answer = Some(answer);
            landing.waiters
        };
        if waiters > 0 {
            self.flight.done.notify_all();
        }
    }
}

impl Cache {
    /// A cache holding at most `budget` bytes; 0 disables it (every lookup
    /// is a `Bypass`).
    /// `ttl_for` gives each stored answer's lifetime.
    pub fn new(budget: usize, ttl_for: TtlFor) -> Cache {
        Cache {
            budget,
            ttl_for,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How long an answer for `path_and_query` stays fresh once stored.
    pub fn ttl(&self, path_and_query: &str) -> Duration {
        (self.ttl_for)(path_and_query)
    }

    /// Bytes currently accounted to stored answers.
    pub fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    /// The body size of the fresh answer stored for `path_and_query`, if
    /// any (a lookup now would be a hit, unless it expires first).
    pub fn stored_len(&self, path_and_query: &str) -> Option<usize> {
        match lock(&self.inner).map.get(path_and_query) {
            Some(Slot::Ready(e)) if e.expires > Instant::now() => Some(e.resp.body.len()),
            _ => None,
        }
    }

    /// Stores `resp`, which its reader found storable, for `ttl`, in place
    /// of whatever `key` held; false (and nothing changed) when it is too
    /// large to store.
    fn store(&self, inner: &mut Inner, key: &str, resp: UpstreamResponse, ttl: Duration) -> bool {
        let size = key.len() + resp.body.len() + ENTRY_OVERHEAD_BYTES;
        if size > self.budget / MAX_ENTRY_FRACTION {
            return false;
        }
        inner.remove_ready(key);
        while inner.bytes + size > self.budget {
            let Some((_, old)) = inner.lru.pop_first() else {
                break;
            };
            if let Some(Slot::Ready(e)) = inner.map.remove(&old) {
                inner.bytes -= e.size;
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.lru.insert(tick, key.to_string());
        inner.bytes += size;
        inner.map.insert(
            key.to_string(),
            Slot::Ready(Entry {
                resp,
                expires: Instant::now() + ttl,
                size,
                tick,
            }),
        );
        crate::heap::UPSTREAM_CACHE_BYTES.store(inner.bytes, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// Answers `GET <path_and_query>` from the cache, from a request in
    /// flight, or by asking `up`.
    pub fn get(&self, up: &dyn Upstream, path_and_query: &str) -> (Answer, Outcome) {
        let (answer, outcome, _) = self.lookup(up, path_and_query);
        (answer, outcome)
    }

    /// Like [`Cache::get`], plus how long the answer stays fresh: the time
    /// left before a stored answer expires, the full [`ttl_for`] of a new
    /// `200` answer, and zero for anything that is never stored (other
    /// statuses, transport failures).
    pub fn lookup(&self, up: &dyn Upstream, path_and_query: &str) -> (Answer, Outcome, Duration) {
        self.lookup_read(up, path_and_query, &mut |r| cacheable(r))
    }

    /// [`Cache::lookup`], the answer judged by the caller's `read` (see
    /// [`Upstream::get_keep`]) instead of [`cacheable`]: called exactly
    /// once on every HTTP answer, new, shared or stored; its word decides
    /// whether a new answer is stored and whether it is fresh.
    pub fn lookup_read(
        &self,
        up: &dyn Upstream,
        path_and_query: &str,
        read: &mut dyn FnMut(&UpstreamResponse) -> bool,
    ) -> (Answer, Outcome, Duration) {
        let (answer, outcome, kept) = self.lookup_kept(up, path_and_query);
        let fresh = kept.finish(judge(read, &answer));
        (answer, outcome, fresh)
    }

    /// [`Cache::lookup_read`] in two steps, so that the caller reads the
    /// answer in its own frame: the answer (stored, shared from a request
    /// in flight, or asked of `up`) now, and, once the caller has said
    /// whether it may be stored ([`Kept::finish`]), how long it stays
    /// fresh. Callers waiting for this request wait until then.
    pub fn lookup_kept<'c>(
        &'c self,
        up: &dyn Upstream,
        path_and_query: &'c str,
    ) -> (Answer, Outcome, Kept<'c>) {
        let kept = Kept {
            path_and_query,
            ttl_for: self.ttl_for,
            left: None,
            flight: None,
        };
        if self.budget == 0 {
            return (up.get(path_and_query), Outcome::Bypass, kept);
        }
        let flight = {
            let mut inner = lock(&self.inner);
            let now = Instant::now();
            let mut expired = false;
            match inner.map.get(path_and_query) {
                Some(Slot::Ready(e)) if e.expires > now => {
                    let (resp, old_tick) = (e.resp.clone(), e.tick);
                    inner.tick += 1;
                    let tick = inner.tick;
                    inner.lru.remove(&old_tick);
                    inner.lru.insert(tick, path_and_query.to_string());
                    let mut left = Duration::ZERO;
                    if let Some(Slot::Ready(e)) = inner.map.get_mut(path_and_query) {
                        e.tick = tick;
                        left = e.expires.saturating_duration_since(now);
                    }
                    let kept = Kept {
                        left: Some(left),
                        ..kept
                    };
                    return (Ok(resp), Outcome::Hit, kept);
                }
                Some(Slot::Ready(_)) => expired = true,
                Some(Slot::Pending(f)) => {
                    let f = f.clone();
                    drop(inner);
                    return (wait(&f), Outcome::Hit, kept);
                }
                None => {}
            }
            if expired {
                inner.remove_ready(path_and_query);
            }
            let f = Arc::new(Flight {
                result: Mutex::new(Landing::default()),
                done: Condvar::new(),
            });
            inner
                .map
                .insert(path_and_query.to_string(), Slot::Pending(f.clone()));
            f
        };
        // The guard first: it finishes the flight even if `get` panics.
        let mut guard = FlightGuard {
            cache: self,
            key: path_and_query,
            flight,
            answer: None,
            keep: None,
        };
        let answer = up.get(path_and_query);
        guard.answer = Some(answer.clone());
        let kept = Kept {
            flight: Some(guard),
            ..kept
        };
        (answer, Outcome::Miss, kept)
    }
}

/// Whether `answer` is an HTTP answer its reader found storable (the
/// reader is called on every HTTP answer, for the caller's value).
fn judge(read: &mut dyn FnMut(&UpstreamResponse) -> bool, answer: &Answer) -> bool {
    matches!(answer, Ok(r) if read(r))
}

fn wait(f: &Flight) -> Answer {
    let mut g = lock(&f.result);
    if g.answer.is_none() {
        g.waiters += 1;
        while g.answer.is_none() {
            g = f.done.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
    g.answer
        .clone()
        .unwrap_or_else(|| Err(FetchError::Other("upstream request abandoned".into())))
}

#[cfg(test)]
mod tests;
