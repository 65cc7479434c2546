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

pub use super::fetcher::{Beside, CacheStatus, Fetcher};

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

/// The time to live for an upstream path (and query): the lifetime the
/// tool registry gives the path ([`crate::x::registry::upstream_ttl`]), or
/// [`TTL_OTHER`] for a path no tool declares.
pub fn ttl_for(path_and_query: &str) -> Duration {
    crate::x::registry::upstream_ttl(path_and_query).unwrap_or(TTL_OTHER)
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
    inner: Mutex<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A lookup's answer waiting for its reader's word ([`Cache::lookup_kept`]);
/// dropped unfinished, the answer is not stored.
pub struct Kept<'c> {
    path_and_query: &'c str,
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
            None if storable => ttl_for(self.path_and_query),
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
    pub fn new(budget: usize) -> Cache {
        Cache {
            budget,
            inner: Mutex::new(Inner::default()),
        }
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
mod tests {
    use super::*;
    use crate::x::side::SidePool;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting {
        calls: AtomicUsize,
        status: u16,
        body_len: usize,
        delay: Duration,
    }

    impl Upstream for Counting {
        fn get(&self, _: &str) -> Answer {
            self.calls.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(self.delay);
            Ok(UpstreamResponse {
                status: self.status,
                retry_after: None,
                content_type: None,
                body: json_body(self.body_len).into(),
            })
        }
    }

    /// A JSON object of exactly `len` bytes (at least 2).
    fn json_body(len: usize) -> Vec<u8> {
        let mut b = vec![b' '; len.max(2)];
        b[0] = b'{';
        b[len.max(2) - 1] = b'}';
        b
    }

    /// What FxTwitter or the syndication endpoint send in an outage with
    /// status 200: never stored, so the next read asks again.
    #[test]
    fn a_200_that_is_not_a_json_object_is_not_stored() {
        struct Fixed(&'static [u8], AtomicUsize);
        impl Upstream for Fixed {
            fn get(&self, _: &str) -> Answer {
                self.1.fetch_add(1, Ordering::SeqCst);
                Ok(UpstreamResponse {
                    status: 200,
                    retry_after: None,
                    content_type: None,
                    body: self.0.to_vec().into(),
                })
            }
        }
        let bodies: [&[u8]; 8] = [
            b"<!doctype html><html>down</html>",
            b"{\"code\":200,\"status\":{\"id\":",
            b"",
            b"[1]",
            b"\"text\"",
            b"{} trailing",
            b"{\"code\":500,\"message\":\"API_FAIL\"}",
            b"{\"code\":503}",
        ];
        for body in bodies {
            let cache = Cache::new(1 << 20);
            let up = Fixed(body, AtomicUsize::new(0));
            let (_, _, fresh) = cache.lookup(&up, "/2/status/1");
            assert_eq!(fresh, Duration::ZERO, "{body:?}");
            let (_, outcome) = cache.get(&up, "/2/status/1");
            assert!(matches!(outcome, Outcome::Miss), "{body:?}");
            assert_eq!(up.1.load(Ordering::SeqCst), 2, "{body:?}");
            assert_eq!(cache.bytes(), 0, "{body:?}");
        }
        let cache = Cache::new(1 << 20);
        let up = Fixed(b" {\"code\": 200, \"ok\": [1]}\n", AtomicUsize::new(0));
        assert_eq!(cache.lookup(&up, "/2/status/1").2, TTL_POST);
        let (_, outcome) = cache.get(&up, "/2/status/1");
        assert!(matches!(outcome, Outcome::Hit));
        assert_eq!(up.1.load(Ordering::SeqCst), 1);
    }

    fn counting(status: u16, body_len: usize, delay_ms: u64) -> Counting {
        Counting {
            calls: AtomicUsize::new(0),
            status,
            body_len,
            delay: Duration::from_millis(delay_ms),
        }
    }

    #[test]
    fn ttls_by_path() {
        assert_eq!(ttl_for("/2/status/1"), TTL_POST);
        assert_eq!(ttl_for("/tweet-result?id=1&token=b&lang=en"), TTL_POST);
        assert_eq!(ttl_for("/tweet-results?id=1"), TTL_OTHER);
        assert_eq!(ttl_for("/2/profile/a"), TTL_PROFILE);
        assert_eq!(ttl_for("/2/profile/a/statuses?count=20"), TTL_TIMELINE);
        assert_eq!(ttl_for("/2/profile/a/following?count=20"), TTL_CONNECTIONS);
        assert_eq!(ttl_for("/2/search?q=a"), TTL_SEARCH);
        assert_eq!(ttl_for("/2/typeahead?q=a"), TTL_TYPEAHEAD);
        assert_eq!(ttl_for("/2/conversation/1?x"), TTL_CONVERSATION);
    }

    #[test]
    fn hit_miss_error_and_bypass() {
        let c = Cache::new(1 << 20);
        let up = counting(200, 10, 0);
        assert_eq!(c.get(&up, "/a").1, Outcome::Miss);
        assert_eq!(c.get(&up, "/a").1, Outcome::Hit);
        assert_eq!(up.calls.load(Ordering::SeqCst), 1);
        assert_eq!(c.bytes(), 2 + 10 + ENTRY_OVERHEAD_BYTES);
        let bad = counting(404, 10, 0);
        assert_eq!(c.get(&bad, "/b").1, Outcome::Miss);
        assert_eq!(c.get(&bad, "/b").1, Outcome::Miss);
        assert_eq!(bad.calls.load(Ordering::SeqCst), 2);
        let off = Cache::new(0);
        assert_eq!(off.get(&up, "/a").1, Outcome::Bypass);
        let f = Fetcher::new(&off, &up);
        assert_eq!(f.outcome(), "bypass");
    }

    #[test]
    fn freshness_is_the_shortest_life_used() {
        let c = Cache::new(1 << 20);
        let up = counting(200, 10, 0);
        let (_, o, life) = c.lookup(&up, "/2/status/1");
        assert_eq!((o, life), (Outcome::Miss, TTL_POST));
        std::thread::sleep(Duration::from_millis(20));
        let (_, o, life) = c.lookup(&up, "/2/status/1");
        assert_eq!(o, Outcome::Hit);
        assert!(
            life < TTL_POST && life > TTL_POST - Duration::from_secs(2),
            "{life:?}"
        );
        let f = Fetcher::new(&c, &up);
        assert_eq!(f.fresh_for(), Duration::ZERO, "no request yet");
        let _ = f.get("/2/profile/a");
        assert_eq!(f.fresh_for(), TTL_PROFILE);
        let _ = f.get("/2/search?q=a");
        assert_eq!(f.fresh_for(), TTL_SEARCH, "the shortest wins");
        let bad = counting(404, 10, 0);
        let f = Fetcher::new(&c, &bad);
        let _ = f.get("/2/status/404");
        assert_eq!(
            f.fresh_for(),
            Duration::ZERO,
            "an unstored answer is not fresh"
        );
        let off = Cache::new(0);
        assert_eq!(off.lookup(&up, "/2/thread/1").2, TTL_POST);
    }

    /// The reader is called once on every answer (new, stored, shared,
    /// bypassed); its word alone decides storing and freshness.
    #[test]
    fn the_reader_reads_every_answer_once_and_its_word_decides_storing() {
        let reads = AtomicUsize::new(0);
        let read = |store: bool| {
            let reads = &reads;
            move |r: &UpstreamResponse| {
                assert_eq!(r.status, 200);
                reads.fetch_add(1, Ordering::SeqCst);
                store
            }
        };
        let c = Cache::new(1 << 20);
        let up = counting(200, 10, 0);
        // Refused by the reader: not stored, not fresh, asked again.
        let (_, o, life) = c.lookup_read(&up, "/2/status/1", &mut read(false));
        assert_eq!((o, life, c.bytes()), (Outcome::Miss, Duration::ZERO, 0));
        let (_, o, _) = c.lookup_read(&up, "/2/status/1", &mut read(true));
        assert_eq!(o, Outcome::Miss);
        assert_eq!(c.bytes(), 11 + 10 + ENTRY_OVERHEAD_BYTES);
        // A hit is read (for the caller's value), its word not needed.
        let (_, o, life) = c.lookup_read(&up, "/2/status/1", &mut read(false));
        assert_eq!(o, Outcome::Hit);
        assert!(life > Duration::ZERO && life <= TTL_POST, "{life:?}");
        assert_eq!(
            (
                up.calls.load(Ordering::SeqCst),
                reads.load(Ordering::SeqCst)
            ),
            (2, 3)
        );
        // Bypassed: read once, fresh on its word.
        let off = Cache::new(0);
        assert_eq!(
            off.lookup_read(&up, "/2/status/1", &mut read(true)).2,
            TTL_POST
        );
        assert_eq!(
            off.lookup_read(&up, "/2/status/1", &mut read(false)).2,
            Duration::ZERO
        );
        assert_eq!(reads.load(Ordering::SeqCst), 5);
        // Coalesced: every caller reads the shared answer once; only the
        // one that asked stores it.
        let slow = counting(200, 10, 200);
        let c = Cache::new(1 << 20);
        let lives: Vec<(Outcome, Duration)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let (_, o, life) = c.lookup_read(&slow, "/2/profile/a", &mut read(true));
                        (o, life)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(slow.calls.load(Ordering::SeqCst), 1);
        assert_eq!(reads.load(Ordering::SeqCst), 9);
        // (A thread that starts late finds the stored answer: a hit whose
        // life has begun to run down.)
        let near = |l: Duration| l <= TTL_PROFILE && l > TTL_PROFILE - Duration::from_secs(5);
        assert!(lives.iter().all(|(_, l)| near(*l)), "{lives:?}");
        assert_eq!(lives.iter().filter(|(o, _)| *o == Outcome::Miss).count(), 1);
        assert_eq!(c.bytes(), 12 + 10 + ENTRY_OVERHEAD_BYTES);
    }

    /// Through a fetcher: the caller's word stores the answer and sets the
    /// call's freshness; a question dropped unanswered stores nothing and
    /// counts as not fresh; waiters wait for the word.
    #[test]
    fn a_fetcher_stores_on_the_callers_word_only() {
        let c = Cache::new(1 << 20);
        let up = counting(200, 10, 0);
        let f = Fetcher::new(&c, &up);
        let (answer, keep) = f.get_keep("/2/profile/a");
        assert_eq!(answer.unwrap().status, 200);
        drop(keep);
        assert_eq!(
            (c.bytes(), f.fresh_for(), f.outcome()),
            (0, Duration::ZERO, "miss")
        );
        let f = Fetcher::new(&c, &up);
        let (_, keep) = f.get_keep("/2/profile/a");
        // A second caller for the same path waits for the word, then shares.
        std::thread::scope(|s| {
            let waiter = s.spawn(|| c.get(&up, "/2/profile/a"));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!waiter.is_finished());
            keep.answer(true);
            assert_eq!(waiter.join().unwrap().1, Outcome::Hit);
        });
        assert_eq!(f.fresh_for(), TTL_PROFILE);
        assert_eq!(c.bytes(), 12 + 10 + ENTRY_OVERHEAD_BYTES);
        assert_eq!(up.calls.load(Ordering::SeqCst), 2);
    }

    /// Every answer a call reads is counted in the working budget at
    /// `work_bytes` of its body until the call's fetcher drops; a call
    /// that holds some and finds no room is refused at once, with the
    /// retryable error the agent sees.
    #[test]
    fn a_fetcher_counts_what_it_reads_until_it_drops() {
        use crate::x::memory::{work_bytes, WorkBudget};
        let c = Cache::new(1 << 20);
        let up = counting(200, 1000, 0);
        let work = Arc::new(WorkBudget::new(work_bytes(1000) * 3));
        {
            let f = Fetcher::new(&c, &up).metered(&work);
            // A miss: counted at the answer's size.
            assert_eq!(f.get("/2/profile/a").unwrap().body.len(), 1000);
            assert_eq!(work.used(), work_bytes(1000));
            // A hit: its size at once.
            let (answer, keep) = f.get_keep("/2/profile/a");
            keep.answer(true);
            assert_eq!(answer.unwrap().body.len(), 1000);
            assert_eq!(work.used(), 2 * work_bytes(1000));
            // Another call holds the rest; this one, holding some, is
            // refused at once.
            let other = Fetcher::new(&c, &up).metered(&work);
            let _ = other.get("/2/profile/a");
            let t = std::time::Instant::now();
            let refused = f.get("/2/profile/a").unwrap_err();
            assert!(t.elapsed() < Duration::from_secs(1));
            assert_eq!(
                crate::x::error::XError::from_fetch(&refused).to_string(),
                "xmd is at its memory budget for tool calls (--max-working-bytes) right now; nothing was read. (HTTP 503, code memory_budget, retry after 1s)"
            );
            drop(other);
            assert_eq!(work.used(), 2 * work_bytes(1000));
        }
        assert_eq!(work.used(), 0, "given back when the call ends");
    }

    #[test]
    fn lru_eviction_within_budget() {
        // Budget for exactly 3 entries, each within the 1/8 share.
        let c = Cache::new(8 * (2 + 100 + ENTRY_OVERHEAD_BYTES));
        let tiny = counting(200, 100, 0);
        let c3 = Cache::new(3 * (2 + 100 + ENTRY_OVERHEAD_BYTES));
        assert_eq!(c3.get(&tiny, "/a").1, Outcome::Miss);
        assert_eq!(tiny.calls.load(Ordering::SeqCst), 1);
        assert_eq!(
            c3.bytes(),
            0,
            "an answer over 1/8 of the budget is not stored"
        );
        for k in ["/a", "/b", "/c"] {
            let _ = c.get(&tiny, k);
        }
        let _ = c.get(&tiny, "/a"); // /a becomes most recent
        for k in ["/d", "/e", "/f", "/g", "/h", "/i"] {
            let _ = c.get(&tiny, k);
        }
        // 8 fit; adding the 9th evicts the least recently used: /b.
        let before = tiny.calls.load(Ordering::SeqCst);
        assert_eq!(c.get(&tiny, "/a").1, Outcome::Hit);
        assert_eq!(c.get(&tiny, "/c").1, Outcome::Hit);
        assert_eq!(c.get(&tiny, "/b").1, Outcome::Miss);
        assert_eq!(tiny.calls.load(Ordering::SeqCst), before + 1);
        assert_eq!(c.bytes(), 8 * (2 + 100 + ENTRY_OVERHEAD_BYTES));
    }

    #[test]
    fn concurrent_misses_coalesce() {
        let c = Cache::new(1 << 20);
        let up = counting(200, 10, 200);
        let outcomes: Vec<Outcome> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8).map(|_| s.spawn(|| c.get(&up, "/same").1)).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(up.calls.load(Ordering::SeqCst), 1);
        assert_eq!(outcomes.iter().filter(|o| **o == Outcome::Miss).count(), 1);
        let err = counting(503, 0, 200);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| c.get(&err, "/err").0)).collect();
            for h in hs {
                assert_eq!(h.join().unwrap().unwrap().status, 503);
            }
        });
        assert_eq!(
            err.calls.load(Ordering::SeqCst),
            1,
            "errors in flight are shared too"
        );
    }

    #[test]
    fn beside_counts_its_fetch_for_the_call_on_every_path() {
        let up: Arc<dyn Upstream> = Arc::new(counting(200, 10, 0));
        let cache = Arc::new(Cache::new(1 << 20));
        let pool = SidePool::new(1, Duration::from_secs(5));
        let status = |u: &dyn Upstream, path: &str| u.get(path).ok().map(|r| r.status);
        // On a side thread: its miss is this call's miss.
        let f = Fetcher::with_side(&cache, &up, &pool);
        let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/a"));
        assert_eq!(b.join(), Some(Some(200)));
        assert_eq!(f.outcome(), "miss");
        assert!(f.fresh_for() > Duration::ZERO);
        // Without a pool the job runs at join, in the caller: now a hit.
        let f = Fetcher::new(&cache, up.as_ref());
        let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/a"));
        assert_eq!(b.join(), Some(Some(200)));
        assert_eq!(f.outcome(), "hit");
        // The one side thread busy: the job runs in the caller, still counted.
        let gate = Arc::new(std::sync::Barrier::new(2));
        let g = gate.clone();
        // (The thread may still be finishing the first job.)
        let busy = crate::x::side::run_when_free(&pool, move || g.wait());
        let f = Fetcher::with_side(&cache, &up, &pool);
        let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/b"));
        assert_eq!(b.join(), Some(Some(200)));
        assert_eq!(f.outcome(), "miss");
        gate.wait();
        busy.recv().unwrap();
        // A job that panics on a side thread joins as None. (A fresh pool:
        // the first one's thread may not be idle again yet, and a job it
        // hands back runs, and panics, in the caller.)
        let fresh = SidePool::new(1, Duration::from_secs(5));
        let f = Fetcher::with_side(&cache, &up, &fresh);
        let b = f.beside(|_: &dyn Upstream| -> u8 { panic!("side fetch panics") });
        assert_eq!(b.join(), None);
    }
}
