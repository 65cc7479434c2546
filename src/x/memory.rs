//! The working set of the tool calls in flight, budgeted
//! (`--max-working-bytes`): every upstream answer a call reads (from the
//! upstream, the cache or another call's request) is counted for the call
//! at [`WORK_BYTES_PER_BODY_BYTE`] times its body's size, the most the
//! call's parse and render hold at once for it, from when the call reads
//! it until the call ends. The answers themselves are shared (the cache
//! and coalesced callers hold one copy); what each call builds from them
//! is its own, and that is what concurrency multiplies.
//!
//! An answer on its way in counts too, from its head on: twice the body
//! its `Content-Length` announces (the 4 MiB cap when it announces none),
//! until the call counts the answer itself; a body with no room waits
//! unread at most [`MAX_INCOMING_WAIT`].
//!
//! A call that holds nothing yet waits for room, first come first served,
//! up to [`MAX_WORK_WAIT`] (or its deadline, or until its client leaves);
//! a call alone is always admitted, however large. A call that already
//! holds some of the budget never waits (two such calls waiting for each
//! other would wait for ever): it gets more only while it fits, or while it
//! is alone. A call refused either way sees a retryable tool error, `The
//! server is at its memory budget for tool calls (--max-working-bytes)
//! right now; nothing was shown. (HTTP 503, code memory_budget, retry
//! after 1s)`; on the X routes a `503` problem with `Retry-After: 1`. A
//! thread walk refused a parent shows the posts it has, with a note.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes of a call's working set counted per byte of an upstream body it
/// reads: 12. Measured on the release build (`tests/memory_budget.rs`):
/// the largest thread (a 1.7 MB body of 64 posts) peaks at about 9 times
/// its body in one call of `x_md_get_post` (the typed posts, their JSON
/// values, every post rendered, the result built and measured), a post of
/// 3.9 MB of Markdown markup at about 11 times (escaping doubles it).
pub const WORK_BYTES_PER_BODY_BYTE: usize = 12;

/// Bytes counted for an upstream body on its way in, per byte its
/// `Content-Length` announces (or of the 4 MiB body cap when none is
/// announced): 2, the body read and copied once into the answer that is
/// shared. Counted from the answer's head until the call has counted the
/// answer itself ([`WORK_BYTES_PER_BODY_BYTE`]).
pub const TRANSFER_BYTES_PER_BODY_BYTE: usize = 2;

/// Longest a call waits for room in the budget before it is refused:
/// 10 s (less when its deadline, `--call-timeout`, comes first).
pub const MAX_WORK_WAIT: Duration = Duration::from_secs(10);

/// Longest an upstream body waits unread for room: 2 s. Its request's own
/// timeout (`--upstream-timeout`, 10 s) runs meanwhile, and a timeout
/// would cool the upstream base down as if it had failed.
pub const MAX_INCOMING_WAIT: Duration = Duration::from_secs(2);

/// How often a waiting call looks at its stop condition (client gone).
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// Seconds a refused call is told to wait before retrying: 1.
pub const WORK_RETRY_AFTER_SECS: u64 = 1;

/// What the upstream requests a call makes on this thread count in
/// ([`watch_incoming`]).
struct Incoming {
    budget: Arc<WorkBudget>,
    held: usize,
    until: Instant,
    cancel: Option<Arc<AtomicBool>>,
    reserved: usize,
}

thread_local! {
    static INCOMING: RefCell<Option<Incoming>> = const { RefCell::new(None) };
}

/// Counts, in `budget`, the bodies of the upstream answers this thread
/// reads until the guard is finished or dropped (the transport calls
/// [`incoming`] when a head is in): for a call that holds `held` already,
/// waiting (if it may, see [`WorkBudget::reserve`]) until `until` or
/// `cancel`.
pub fn watch_incoming(
    budget: &Arc<WorkBudget>,
    held: usize,
    until: Instant,
    cancel: Option<Arc<AtomicBool>>,
) -> IncomingGuard {
    INCOMING.with(|i| {
        *i.borrow_mut() = Some(Incoming {
            budget: Arc::clone(budget),
            held,
            until,
            cancel,
            reserved: 0,
        });
    });
    IncomingGuard(())
}

/// Ends [`watch_incoming`]: dropped unfinished, the bytes go back.
pub struct IncomingGuard(());

impl IncomingGuard {
    /// The bytes reserved for the bodies read, now the caller's to hold.
    pub fn finish(self) -> usize {
        let bytes = INCOMING.with(|i| {
            i.borrow_mut()
                .as_mut()
                .map_or(0, |w| std::mem::take(&mut w.reserved))
        });
        drop(self);
        bytes
    }
}

impl Drop for IncomingGuard {
    fn drop(&mut self) {
        if let Some(w) = INCOMING.with(|i| i.borrow_mut().take()) {
            w.budget.release(w.reserved);
        }
    }
}

/// Called by the transport with an upstream answer's head in, before its
/// body is read: counts [`TRANSFER_BYTES_PER_BODY_BYTE`] per byte of the
/// body it announces (`announced`, at most `cap`; `cap` when it announces
/// none) for the call reading it on this thread, if any. False when there
/// was no room in time (the body is then not read).
pub fn incoming(announced: Option<u64>, cap: u64) -> bool {
    INCOMING.with(|i| {
        let mut i = i.borrow_mut();
        let Some(w) = i.as_mut() else {
            return true;
        };
        let bytes = transfer_bytes(announced, cap);
        let cancel = w.cancel.clone();
        let stop = || cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let until = w.until.min(Instant::now() + MAX_INCOMING_WAIT);
        let ok = w
            .budget
            .reserve(bytes, w.held + w.reserved, until, &stop)
            .is_ok();
        if ok {
            w.reserved += bytes;
        }
        ok
    })
}

/// The bytes a call is counted for an upstream body of `body_bytes`.
pub fn work_bytes(body_bytes: usize) -> usize {
    body_bytes.saturating_mul(WORK_BYTES_PER_BODY_BYTE)
}

#[derive(Default)]
struct State {
    /// Bytes held by the calls in flight.
    used: usize,
    /// Tickets of the calls waiting, oldest first.
    queue: VecDeque<u64>,
    next: u64,
    /// Most bytes ever held at once.
    peak: usize,
}

/// The server-wide budget of the tool calls' working set.
pub struct WorkBudget {
    /// 0: no budget (every reservation is granted and counted).
    limit: usize,
    state: Mutex<State>,
    freed: Condvar,
}

/// Why a reservation was not granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No room within the wait allowed.
    Full,
    /// The stop condition (the client left, the deadline passed) came
    /// first.
    Stopped,
}

impl WorkBudget {
    /// A budget of `limit` bytes; 0 turns it off.
    pub fn new(limit: usize) -> WorkBudget {
        WorkBudget {
            limit,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The configured limit in bytes (0: off).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held by the calls in flight.
    pub fn used(&self) -> usize {
        self.lock().used
    }

    /// Most bytes held at once since start.
    pub fn peak(&self) -> usize {
        self.lock().peak
    }

    fn fits(&self, s: &State, bytes: usize, held: usize) -> bool {
        self.limit == 0 || s.used.saturating_add(bytes) <= self.limit || s.used == held
    }

    fn grant(s: &mut State, bytes: usize) {
        s.used = s.used.saturating_add(bytes);
        s.peak = s.peak.max(s.used);
    }

    /// Reserves `bytes` at once if they fit (or the call, holding `held`,
    /// is alone), for a call holding some ahead of the calls waiting for
    /// room; false (nothing reserved) otherwise.
    pub fn try_reserve(&self, bytes: usize, held: usize) -> bool {
        let mut s = self.lock();
        let ok = (held > 0 || s.queue.is_empty()) && self.fits(&s, bytes, held);
        if ok {
            WorkBudget::grant(&mut s, bytes);
        }
        ok
    }

    /// Reserves `bytes` for a call that holds `held` bytes already:
    /// granted at once when they fit (or the call is alone); else a call
    /// holding nothing waits its turn until `until` (checking `stop`), a
    /// call holding some is refused at once.
    ///
    /// # Errors
    /// [`Refusal::Full`] when there was no room in time, [`Refusal::Stopped`]
    /// when `stop` said so first.
    pub fn reserve(
        &self,
        bytes: usize,
        held: usize,
        until: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), Refusal> {
        if self.try_reserve(bytes, held) {
            return Ok(());
        }
        if held > 0 {
            return Err(Refusal::Full);
        }
        let mut s = self.lock();
        let ticket = s.next;
        s.next += 1;
        s.queue.push_back(ticket);
        let outcome = loop {
            if s.queue.front() == Some(&ticket) && self.fits(&s, bytes, 0) {
                WorkBudget::grant(&mut s, bytes);
                break Ok(());
            }
            if stop() {
                break Err(Refusal::Stopped);
            }
            let now = Instant::now();
            if now >= until {
                break Err(Refusal::Full);
            }
            let slice = (until - now).min(WAIT_SLICE);
            s = self
                .freed
                .wait_timeout(s, slice)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        s.queue.retain(|t| *t != ticket);
        drop(s);
        // The next in line may fit now (or the line moved).
        self.freed.notify_all();
        outcome
    }

    /// Gives back `bytes` a call held.
    pub fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let mut s = self.lock();
        s.used = s.used.saturating_sub(bytes);
        let waiting = !s.queue.is_empty();
        drop(s);
        if waiting {
            self.freed.notify_all();
        }
    }
}

/// Bytes held in a budget, given back when dropped (what a job run beside
/// a call hands to the call: [`Reservation::take`]).
pub struct Reservation {
    budget: Arc<WorkBudget>,
    bytes: usize,
}

impl Reservation {
    /// Holds `bytes` already granted in `budget`.
    pub fn new(budget: Arc<WorkBudget>, bytes: usize) -> Reservation {
        Reservation { budget, bytes }
    }

    /// The bytes, now the taker's to give back.
    pub fn take(mut self) -> usize {
        std::mem::take(&mut self.bytes)
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Gives back what is held past `bytes` (a body smaller than the room
    /// reserved for it).
    pub fn shrink_to(&mut self, bytes: usize) {
        if bytes < self.bytes {
            self.budget.release(self.bytes - bytes);
            self.bytes = bytes;
        }
    }
}

/// The bytes counted for an upstream body on its way in whose head
/// announced `announced` bytes (`None`: not announced), at most `cap`:
/// [`TRANSFER_BYTES_PER_BODY_BYTE`] per byte of it, `cap` when it
/// announces none.
pub fn transfer_bytes(announced: Option<u64>, cap: u64) -> usize {
    let body = usize::try_from(announced.unwrap_or(cap).min(cap)).unwrap_or(usize::MAX);
    body.saturating_mul(TRANSFER_BYTES_PER_BODY_BYTE)
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn grants_while_it_fits_and_a_call_alone_always() {
        let b = WorkBudget::new(100);
        let far = Instant::now() + Duration::from_secs(5);
        // Call A 60, call B 40.
        assert_eq!(b.reserve(60, 0, far, &never), Ok(()));
        assert_eq!(b.reserve(40, 0, far, &never), Ok(()));
        assert_eq!(b.used(), 100);
        // A, holding some, wants more: refused at once, nothing changes.
        let t = Instant::now();
        assert_eq!(b.reserve(1, 60, far, &never), Err(Refusal::Full));
        assert!(t.elapsed() < Duration::from_millis(40));
        b.release(100);
        // Alone: any size.
        assert_eq!(b.reserve(1000, 0, far, &never), Ok(()));
        assert_eq!(b.reserve(1000, 1000, far, &never), Ok(()));
        assert_eq!((b.used(), b.peak()), (2000, 2000));
        b.release(2000);
        assert_eq!(b.used(), 0);
        let off = WorkBudget::new(0);
        assert_eq!(off.reserve(usize::MAX, 0, far, &never), Ok(()));
    }

    #[test]
    fn a_waiting_call_is_admitted_when_room_is_given_back() {
        let b = Arc::new(WorkBudget::new(100));
        let far = Instant::now() + Duration::from_secs(5);
        b.reserve(80, 0, far, &never).unwrap();
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (b.reserve(50, 0, far, &never), t.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(b.used(), 80, "still waiting");
        b.release(80);
        let (got, waited) = waiter.join().unwrap();
        assert_eq!(got, Ok(()));
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert_eq!(b.used(), 50);
    }

    #[test]
    fn a_wait_ends_at_its_limit_or_when_stopped() {
        let b = WorkBudget::new(100);
        let far = Instant::now() + Duration::from_secs(5);
        b.reserve(100, 0, far, &never).unwrap();
        let t = Instant::now();
        let soon = t + Duration::from_millis(120);
        assert_eq!(b.reserve(1, 0, soon, &never), Err(Refusal::Full));
        assert!(t.elapsed() >= Duration::from_millis(120));
        assert_eq!(b.reserve(1, 0, far, &|| true), Err(Refusal::Stopped));
        assert_eq!(b.used(), 100, "a refusal holds nothing");
        // The line is empty again: a call that fits goes at once.
        b.release(50);
        assert_eq!(b.reserve(50, 0, far, &never), Ok(()));
    }

    /// First come, first served: a small call does not pass a large one
    /// waiting before it (the large one would wait for ever).
    #[test]
    fn waiting_calls_are_admitted_in_order() {
        let b = Arc::new(WorkBudget::new(100));
        let far = Instant::now() + Duration::from_secs(5);
        b.reserve(90, 0, far, &never).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |name: &'static str, bytes: usize| {
            let (b, order) = (b.clone(), order.clone());
            std::thread::spawn(move || {
                b.reserve(bytes, 0, far, &never).unwrap();
                order.lock().unwrap().push(name);
            })
        };
        // Each waits in the line before the next comes (observed, not
        // slept on: a loaded machine may start a thread late).
        let queued = |n: usize| {
            let t = Instant::now();
            while b.lock().queue.len() < n {
                assert!(t.elapsed() < Duration::from_secs(5), "{n} in line");
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let large = spawn("large", 60);
        queued(1);
        let small = spawn("small", 5);
        queued(2);
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            order.lock().unwrap().is_empty(),
            "the small one waits its turn"
        );
        b.release(90);
        large.join().unwrap();
        small.join().unwrap();
        assert_eq!(*order.lock().unwrap(), ["large", "small"]);
        assert_eq!(b.used(), 65);
    }

    #[test]
    fn a_reservation_gives_its_bytes_back_unless_taken() {
        let b = Arc::new(WorkBudget::new(100));
        let far = Instant::now() + Duration::from_secs(5);
        b.reserve(30, 0, far, &never).unwrap();
        drop(Reservation::new(b.clone(), 30));
        assert_eq!(b.used(), 0);
        b.reserve(30, 0, far, &never).unwrap();
        assert_eq!(Reservation::new(b.clone(), 30).take(), 30);
        assert_eq!(b.used(), 30);
    }
}
