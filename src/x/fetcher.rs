//! The upstream as one tool call sees it ([`Fetcher`]): every request
//! through the shared [`Cache`], the call's cache outcome and freshness
//! counted, its deadline and cancellation checked before each request, and
//! jobs run beside the caller on the side pool.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

use super::cache::{Cache, Outcome};
use super::side::SidePool;
use super::upstream::{FetchError, Keep, Upstream, UpstreamResponse};

type Answer = Result<UpstreamResponse, FetchError>;

/// The upstream as one tool call sees it: every request goes through the
/// cache, and the call remembers whether anything missed.
pub struct Fetcher<'a> {
    cache: &'a Cache,
    up: &'a dyn Upstream,
    /// Where [`Fetcher::beside`] runs its job, and the shared handles of
    /// `cache` and `up` it takes along; `None` runs it in the caller.
    side: Option<(&'a SidePool, &'a Arc<Cache>, &'a Arc<dyn Upstream>)>,
    /// The second provider of single posts (X's syndication endpoint),
    /// asked through the same cache; `None` when there is none. Jobs run
    /// [`Fetcher::beside`] have none.
    fallback: Option<&'a dyn Upstream>,
    seen: AtomicU8,
    /// Shortest freshness (milliseconds) of any answer used so far;
    /// `u64::MAX` before the first request.
    fresh_ms: AtomicU64,
    /// The call's deadline and cancel flag, checked before every request.
    guard: Option<&'a super::budget::Guard>,
}

const SEEN_HIT: u8 = 1;
const SEEN_MISS: u8 = 2;
const SEEN_BYPASS: u8 = 4;

impl<'a> Fetcher<'a> {
    /// A fetcher for one tool call.
    pub fn new(cache: &'a Cache, up: &'a dyn Upstream) -> Fetcher<'a> {
        Fetcher {
            cache,
            up,
            side: None,
            fallback: None,
            seen: AtomicU8::new(0),
            fresh_ms: AtomicU64::new(u64::MAX),
            guard: None,
        }
    }

    /// This fetcher, stopping before any request once the call is
    /// cancelled ([`FetchError::Cancelled`]) or past its deadline
    /// ([`FetchError::Deadline`]): a call whose client has gone makes no
    /// further upstream request.
    pub fn guarded(mut self, guard: &'a super::budget::Guard) -> Fetcher<'a> {
        self.guard = Some(guard);
        self
    }

    /// A fetcher for one tool call whose [`Fetcher::beside`] jobs run on
    /// `pool`.
    pub fn with_side(
        cache: &'a Arc<Cache>,
        up: &'a Arc<dyn Upstream>,
        pool: &'a SidePool,
    ) -> Fetcher<'a> {
        Fetcher {
            side: Some((pool, cache, up)),
            ..Fetcher::new(cache, up.as_ref())
        }
    }

    /// This fetcher with a second provider of single posts (see
    /// [`Upstream::get_fallback`]).
    pub fn with_fallback(mut self, fallback: Option<&'a dyn Upstream>) -> Fetcher<'a> {
        self.fallback = fallback;
        self
    }

    /// Starts `job` on a side thread, through this call's cache, while the
    /// caller goes on; [`Beside::join`] waits for it. Without a side pool,
    /// or when every side thread is busy, the job runs at `join`, in the
    /// caller.
    pub fn beside<T, F>(&self, job: F) -> Beside<'_, 'a, T, F>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Upstream) -> T + Send + 'static,
    {
        let Some((pool, cache, up)) = &self.side else {
            return Beside {
                fetcher: self,
                run: Run::Later(job),
            };
        };
        let (cache, up) = (Arc::clone(*cache), Arc::clone(*up));
        let started = pool.try_run(move || {
            let f = Fetcher::new(&cache, up.as_ref());
            let value = job(&f);
            (
                value,
                f.seen.load(Ordering::SeqCst),
                f.fresh_ms.load(Ordering::SeqCst),
            )
        });
        match started {
            Ok(rx) => Beside {
                fetcher: self,
                run: Run::Started(rx),
            },
            Err(back) => Beside {
                fetcher: self,
                run: Run::Inline(Box::new(back)),
            },
        }
    }

    /// How long everything this call used stays fresh: the shortest
    /// freshness of its upstream answers (see [`Cache::lookup`]); zero
    /// when it made no request or any answer was not cacheable.
    pub fn fresh_for(&self) -> Duration {
        match self.fresh_ms.load(Ordering::SeqCst) {
            u64::MAX => Duration::ZERO,
            ms => Duration::from_millis(ms),
        }
    }

    /// How the run's upstream answers were served: `Miss` when any
    /// request reached the upstream, `Bypass` when the cache is disabled
    /// (or nothing was asked), else `Hit`.
    pub fn status(&self) -> CacheStatus {
        let s = self.seen.load(Ordering::SeqCst);
        if s & SEEN_MISS != 0 {
            CacheStatus::Miss
        } else if s & SEEN_BYPASS != 0 || s == 0 {
            CacheStatus::Bypass
        } else {
            CacheStatus::Hit
        }
    }

    /// [`Fetcher::status`] as its label.
    pub fn outcome(&self) -> &'static str {
        self.status().as_str()
    }
}

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

/// A job started by [`Fetcher::beside`].
pub struct Beside<'f, 'a, T, F> {
    fetcher: &'f Fetcher<'a>,
    run: Run<T, F>,
}

type Sided<T> = (T, u8, u64);

enum Run<T, F> {
    Started(Receiver<Sided<T>>),
    /// The pool was full: the pool's wrapper, run in the caller.
    Inline(Box<dyn FnOnce() -> Sided<T> + Send>),
    Later(F),
}

impl<T, F> Beside<'_, '_, T, F>
where
    F: FnOnce(&dyn Upstream) -> T,
{
    /// The job's value, once it is done; `None` when it panicked. What it
    /// fetched counts for this call's `cache` outcome and freshness.
    pub fn join(self) -> Option<T> {
        let (value, seen, fresh) = match self.run {
            Run::Later(job) => return Some(job(self.fetcher)),
            Run::Inline(job) => job(),
            Run::Started(rx) => rx.recv().ok()?,
        };
        self.fetcher.seen.fetch_or(seen, Ordering::SeqCst);
        self.fetcher.fresh_ms.fetch_min(fresh, Ordering::SeqCst);
        Some(value)
    }
}

impl Fetcher<'_> {
    /// One fetch through the cache, from the primary upstream or the
    /// fallback; refused before any request once the call's deadline has
    /// passed or its client has left.
    fn through_cache(&self, up: &dyn Upstream, path_and_query: &str) -> Answer {
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        let (answer, outcome, fresh) = self.cache.lookup(up, path_and_query);
        self.count(outcome, fresh);
        answer
    }

    /// The refusal of a call past its deadline or whose client has left,
    /// if it is so (a result cut short is never replayed from the cache).
    fn stopped(&self) -> Option<FetchError> {
        let g = self.guard?;
        let stop = if g.cancelled() {
            FetchError::Cancelled
        } else if g.expired() {
            FetchError::Deadline(g.timeout.as_secs())
        } else {
            return None;
        };
        self.fresh_ms.store(0, Ordering::SeqCst);
        Some(stop)
    }

    /// Counts one answer for the call's outcome and freshness.
    fn count(&self, outcome: Outcome, fresh: Duration) {
        let ms = u64::try_from(fresh.as_millis()).unwrap_or(u64::MAX - 1);
        self.fresh_ms.fetch_min(ms, Ordering::SeqCst);
        let bit = match outcome {
            Outcome::Hit => SEEN_HIT,
            Outcome::Miss => SEEN_MISS,
            Outcome::Bypass => SEEN_BYPASS,
        };
        self.seen.fetch_or(bit, Ordering::SeqCst);
    }
}

impl Upstream for Fetcher<'_> {
    fn get(&self, path_and_query: &str) -> Answer {
        self.through_cache(self.up, path_and_query)
    }

    fn get_fallback(&self, path_and_query: &str) -> Option<Answer> {
        let fallback = self.fallback?;
        Some(self.through_cache(fallback, path_and_query))
    }

    fn get_keep<'s>(&'s self, path_and_query: &'s str) -> (Answer, Keep<'s>) {
        if let Some(e) = self.stopped() {
            return (Err(e), Keep::none());
        }
        let (answer, outcome, kept) = self.cache.lookup_kept(self.up, path_and_query);
        let keep = Keep::new(move |storable| self.count(outcome, kept.finish(storable)));
        (answer, keep)
    }
}
