//! The upstream as one tool call sees it ([`Fetcher`]): every request
//! through the shared [`Cache`], the call's cache outcome and freshness
//! counted, its deadline and cancellation checked before each request, and
//! jobs run beside the caller on the side pool.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cache::{Cache, CacheStatus, Outcome};
use super::cacheable::cacheable;
use super::memory::{
    watch_incoming, work_bytes, IncomingGuard, Refusal, Reservation, WorkBudget, MAX_WORK_WAIT,
    WORK_RETRY_AFTER_SECS,
};
use super::upstream::MAX_UPSTREAM_BODY_BYTES;

/// A call's stop signals: its deadline, and the flag the server raises
/// when the client's connection closed before the answer.
#[derive(Debug, Clone)]
pub struct Guard {
    /// When the call must answer with what it has.
    pub deadline: Instant,
    /// Raised when the client has gone.
    pub cancel: Arc<AtomicBool>,
    /// The configured timeout, for notes.
    pub timeout: Duration,
}

impl Guard {
    /// A guard for a call starting now.
    pub fn new(timeout: Duration, cancel: Arc<AtomicBool>) -> Guard {
        Guard {
            // A restartable run counts from the call's first run.
            deadline: super::restart::started().unwrap_or_else(Instant::now) + timeout,
            cancel,
            timeout,
        }
    }

    /// Whether the client has gone.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Whether the deadline passed.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

/// The largest body an answer can have, for a size not known yet.
const MAX_BODY: usize = MAX_UPSTREAM_BODY_BYTES as usize;
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
    guard: Option<&'a Guard>,
    /// The budget of the calls' working set ([`Fetcher::metered`]): every
    /// answer read is counted in it for this call, until the fetcher
    /// drops; `None` counts nothing.
    work: Option<&'a Arc<WorkBudget>>,
    /// Bytes this fetcher holds in `work`, given back when it drops.
    held: AtomicUsize,
    /// Bytes the call's run state holds in `work` for the answers an event
    /// loop delivered that this fetcher read (their bodies' room, given
    /// back when the call ends, see [`super::restart`]).
    rooms: AtomicUsize,
    /// Bytes the call held when it started this fetcher's job beside it
    /// (the job is part of the call: it does not wait for room the call
    /// holds, see [`WorkBudget::reserve`]).
    held_by_caller: usize,
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
            work: None,
            held: AtomicUsize::new(0),
            rooms: AtomicUsize::new(0),
            held_by_caller: 0,
        }
    }

    /// This fetcher, counting every answer it reads in `work`
    /// ([`super::memory`]): [`work_bytes`] of its body, held until the
    /// fetcher drops. An answer there is no room for, in time, is
    /// [`FetchError::MemoryBudget`].
    pub fn metered(mut self, work: &'a Arc<WorkBudget>) -> Fetcher<'a> {
        self.work = Some(work);
        self
    }

    /// This fetcher, stopping before any request once the call is
    /// cancelled ([`FetchError::Cancelled`]) or past its deadline
    /// ([`FetchError::Deadline`]): a call whose client has gone makes no
    /// further upstream request.
    pub fn guarded(mut self, guard: &'a Guard) -> Fetcher<'a> {
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
        let mut f = Fetcher::new(cache, up.as_ref());
        f.side = Some((pool, cache, up));
        f
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
        if super::restart::active() {
            // A restartable run (the event-loop upstream): the job runs now,
            // in the caller, so that what it needs and what the caller
            // needs next are fetched together (see super::restart).
            super::restart::side_enter();
            let value = job(self);
            super::restart::side_leave();
            return Beside {
                fetcher: self,
                run: Run::Done(value),
            };
        }
        let Some((pool, cache, up)) = &self.side else {
            return Beside {
                fetcher: self,
                run: Run::Later(job),
            };
        };
        let (cache, up) = (Arc::clone(*cache), Arc::clone(*up));
        let work = self.work.map(Arc::clone);
        let held_by_caller = self.holding();
        let started = pool.try_run(move || {
            let mut f = Fetcher::new(&cache, up.as_ref());
            if let Some(w) = &work {
                f = f.metered(w);
                f.held_by_caller = held_by_caller;
            }
            let value = job(&f);
            let (seen, fresh) = (
                f.seen.load(Ordering::SeqCst),
                f.fresh_ms.load(Ordering::SeqCst),
            );
            // What the job holds goes to the call with its value (given
            // back here if the call never joins).
            let bytes = f.held.swap(0, Ordering::SeqCst);
            drop(f);
            let held = work.map(|w| Reservation::new(w, bytes));
            (value, seen, fresh, held)
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

/// A job started by [`Fetcher::beside`].
pub struct Beside<'f, 'a, T, F> {
    fetcher: &'f Fetcher<'a>,
    run: Run<T, F>,
}

type Sided<T> = (T, u8, u64, Option<Reservation>);

enum Run<T, F> {
    Started(Receiver<Sided<T>>),
    /// The pool was full: the pool's wrapper, run in the caller.
    Inline(Box<dyn FnOnce() -> Sided<T> + Send>),
    Later(F),
    /// Run already, in the caller (a restartable run).
    Done(T),
}

impl<T, F> Beside<'_, '_, T, F>
where
    F: FnOnce(&dyn Upstream) -> T,
{
    /// The job's value, once it is done; `None` when it panicked. What it
    /// fetched counts for this call's `cache` outcome and freshness.
    pub fn join(self) -> Option<T> {
        let (value, seen, fresh, held) = match self.run {
            Run::Later(job) => return Some(job(self.fetcher)),
            Run::Done(value) => {
                super::restart::side_join();
                return Some(value);
            }
            Run::Inline(job) => job(),
            Run::Started(rx) => rx.recv().ok()?,
        };
        if let Some(r) = held {
            self.fetcher.held.fetch_add(r.take(), Ordering::SeqCst);
        }
        self.fetcher.seen.fetch_or(seen, Ordering::SeqCst);
        self.fetcher.fresh_ms.fetch_min(fresh, Ordering::SeqCst);
        Some(value)
    }
}

impl Fetcher<'_> {
    /// One fetch through the cache, from the primary upstream or the
    /// fallback; refused before any request once the call's deadline has
    /// passed or its client has left.
    fn through_cache(&self, up: &dyn Upstream, provider: usize, path_and_query: &str) -> Answer {
        // An answer an event loop already fetched for this call is read
        // even past the deadline: the request was made before it.
        let delivered = super::restart::has(provider, path_and_query);
        if let Some(e) = self.stopped().filter(|_| !delivered) {
            return Err(e);
        }
        if let Some(e) = pending_refusal() {
            return Err(e);
        }
        let room = delivered_room(delivered, provider, path_and_query);
        let incoming = self.begin_transfer();
        let (answer, outcome, fresh) = self.cache.lookup(up, path_and_query);
        let transfer = self.end_transfer(incoming);
        self.count_for(delivered, path_and_query, outcome, fresh);
        let resp = answer.inspect_err(|e| {
            self.give_back(transfer);
            note_pending(e, provider, path_and_query);
        })?;
        if self.admit_now(resp.body.len(), transfer, room) {
            return Ok(resp);
        }
        drop(resp);
        forget_delivered(room, provider, path_and_query);
        self.admit_then_read(up, provider, path_and_query)
    }

    /// Bytes the call holds in the working budget (with its caller's, for
    /// a job run beside it).
    fn holding(&self) -> usize {
        self.held.load(Ordering::SeqCst) + self.rooms.load(Ordering::SeqCst) + self.held_by_caller
    }

    /// Around a lookup: the body of an answer the cache asks the upstream
    /// for on this call's behalf counts from its head on
    /// ([`super::memory::incoming`]), waiting for room as
    /// [`Fetcher::wait_for`] does; `end_transfer` hands the bytes to the call.
    fn begin_transfer(&self) -> Option<IncomingGuard> {
        let work = self.work?;
        let now = Instant::now();
        let until = self
            .guard
            .map_or(now + MAX_WORK_WAIT, |g| g.deadline.min(now + MAX_WORK_WAIT));
        let cancel = self.guard.map(|g| Arc::clone(&g.cancel));
        Some(watch_incoming(work, self.holding(), until, cancel))
    }

    /// The bytes counted for the bodies read since `begin_transfer`, now
    /// held by the call.
    fn end_transfer(&self, guard: Option<IncomingGuard>) -> usize {
        let bytes = guard.map_or(0, IncomingGuard::finish);
        self.held.fetch_add(bytes, Ordering::SeqCst);
        bytes
    }

    /// Counts an answer of `body_len` bytes for this call
    /// ([`super::memory`]) in place of the `transfer` bytes reserved for
    /// it, and of the `room` the call's run state holds for it (an answer
    /// an event loop delivered), if there is room at once; false (and the
    /// transfer given back) when there is not.
    fn admit_now(&self, body_len: usize, transfer: usize, room: usize) -> bool {
        let Some(work) = self.work else {
            return true;
        };
        let bytes = work_bytes(body_len).saturating_sub(room);
        if bytes <= transfer {
            self.give_back(transfer - bytes);
            self.rooms.fetch_add(room, Ordering::SeqCst);
            return true;
        }
        if work.try_reserve(bytes - transfer, self.holding() + room) {
            self.held.fetch_add(bytes - transfer, Ordering::SeqCst);
            self.rooms.fetch_add(room, Ordering::SeqCst);
            return true;
        }
        self.give_back(transfer);
        false
    }

    /// Gives back `bytes` this fetcher held.
    fn give_back(&self, bytes: usize) {
        if let Some(work) = self.work {
            self.held.fetch_sub(bytes, Ordering::SeqCst);
            work.release(bytes);
        }
    }

    /// Reserves `bytes` for this call, waiting for room as
    /// [`WorkBudget::reserve`] allows (up to [`MAX_WORK_WAIT`] or the
    /// call's deadline); refused as [`FetchError::MemoryBudget`] (or
    /// [`FetchError::Cancelled`] when the client leaves while it waits).
    fn wait_for(&self, bytes: usize) -> Result<(), FetchError> {
        let Some(work) = self.work else {
            return Ok(());
        };
        let now = Instant::now();
        let until = self
            .guard
            .map_or(now + MAX_WORK_WAIT, |g| g.deadline.min(now + MAX_WORK_WAIT));
        let stop = || self.guard.is_some_and(Guard::cancelled);
        match work.reserve(bytes, self.holding(), until, &stop) {
            Ok(()) => {
                self.held.fetch_add(bytes, Ordering::SeqCst);
                Ok(())
            }
            Err(Refusal::Stopped) => Err(FetchError::Cancelled),
            Err(Refusal::Full) => Err(FetchError::MemoryBudget(WORK_RETRY_AFTER_SECS)),
        }
    }

    /// An answer there was no room for at once: without holding it (the
    /// cache keeps it, if anyone does), the call waits for room for an
    /// answer of that size, then reads it again through the cache.
    fn admit_then_read(&self, up: &dyn Upstream, provider: usize, path_and_query: &str) -> Answer {
        let size = self.cache.stored_len(path_and_query).unwrap_or(MAX_BODY);
        self.wait_for(work_bytes(size))?;
        let (answer, outcome, fresh) = self.cache.lookup(up, path_and_query);
        self.count(outcome, fresh);
        // (Shared from another call's request, the answer may not be this
        // call's to read again: it is needed, see super::restart.)
        let resp = answer.inspect_err(|e| note_pending(e, provider, path_and_query))?;
        // Changed meanwhile (a new answer): counted at its own size.
        if resp.body.len() > size && !self.admit_now(resp.body.len() - size, 0, 0) {
            return Err(FetchError::MemoryBudget(WORK_RETRY_AFTER_SECS));
        }
        Ok(resp)
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

    /// [`Fetcher::count`], for an answer an event loop fetched for this
    /// call (`delivered`, see [`super::restart`]): stored by an earlier run
    /// of the same call, it is this call's miss, fresh for its full time
    /// to live, as it was when one run made every request.
    fn count_for(&self, delivered: bool, path_and_query: &str, outcome: Outcome, fresh: Duration) {
        if delivered && outcome == Outcome::Hit && fresh > Duration::ZERO {
            self.count(Outcome::Miss, self.cache.ttl(path_and_query));
        } else {
            self.count(outcome, fresh);
        }
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
        self.through_cache(self.up, super::restart::PRIMARY, path_and_query)
    }

    fn get_fallback(&self, path_and_query: &str) -> Option<Answer> {
        let fallback = self.fallback?;
        Some(self.through_cache(fallback, super::restart::FALLBACK, path_and_query))
    }

    fn get_keep<'s>(&'s self, path_and_query: &'s str) -> (Answer, Keep<'s>) {
        let delivered = super::restart::has(super::restart::PRIMARY, path_and_query);
        if let Some(e) = self.stopped().filter(|_| !delivered) {
            return (Err(e), Keep::none());
        }
        if let Some(e) = pending_refusal() {
            return (Err(e), Keep::none());
        }
        let room = delivered_room(delivered, super::restart::PRIMARY, path_and_query);
        let incoming = self.begin_transfer();
        let (answer, outcome, kept) = self.cache.lookup_kept(self.up, path_and_query);
        let transfer = self.end_transfer(incoming);
        let admitted = match &answer {
            Ok(r) => self.admit_now(r.body.len(), transfer, room),
            Err(e) => {
                note_pending(e, super::restart::PRIMARY, path_and_query);
                self.give_back(transfer);
                true
            }
        };
        if admitted {
            let keep = Keep::new(move |storable| {
                self.count_for(delivered, path_and_query, outcome, kept.finish(storable));
            });
            return (answer, keep);
        }
        // No room now: the callers waiting for this request are let go
        // (the answer judged by the cache's own rule), and this call waits
        // for room without holding the answer.
        let storable = answer.as_ref().is_ok_and(cacheable);
        self.count_for(delivered, path_and_query, outcome, kept.finish(storable));
        drop(answer);
        forget_delivered(room, super::restart::PRIMARY, path_and_query);
        (
            self.admit_then_read(self.up, super::restart::PRIMARY, path_and_query),
            Keep::none(),
        )
    }
}

/// The refusal of a fetch in a restartable run that already needs
/// something (see [`super::restart`]): the run's result is thrown away, so
/// nothing more is asked.
fn pending_refusal() -> Option<FetchError> {
    (super::restart::active() && !super::restart::may_record()).then_some(FetchError::Pending)
}

/// Bytes the call's run state holds for the answer an event loop
/// delivered for `provider`'s `path` (`delivered`), its body's room.
fn delivered_room(delivered: bool, provider: usize, path_and_query: &str) -> usize {
    if delivered {
        super::restart::room(provider, path_and_query)
    } else {
        0
    }
}

/// A delivered answer the call has no room to read now (its `room` > 0):
/// given back with its room, so that the call waits for room holding
/// nothing of it, as with the blocking client (it reads it again through
/// the cache, or needs it again).
fn forget_delivered(room: usize, provider: usize, path_and_query: &str) {
    if room > 0 {
        super::restart::forget(provider, path_and_query);
    }
}

/// Records what a restartable run needs when its fetch is waiting for an
/// event loop.
fn note_pending(e: &FetchError, provider: usize, path_and_query: &str) {
    if matches!(e, FetchError::Pending) {
        super::restart::record(provider, path_and_query);
    }
}

impl Drop for Fetcher<'_> {
    fn drop(&mut self) {
        if let Some(work) = self.work {
            let held = *self.held.get_mut();
            work.release(held);
            // A large call's pages go back with its worker (crate::heap).
            if held >= crate::heap::RETIRE_AFTER_BYTES {
                crate::heap::retire_this_thread();
            }
        }
    }
}
