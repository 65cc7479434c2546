//! Restartable tool runs: the state one tool call carries between its runs
//! on the worker threads while its upstream requests are made by the event
//! loops (issue 28, `src/x/loopio/`).
//!
//! A run on a worker asks the upstream through the cache as always. With
//! the event-loop upstream ([`super::loopio::LoopUpstream`]) a request that
//! is not answered yet does not block: it fails as
//! [`FetchError::Pending`], the [`super::fetcher::Fetcher`] records what
//! is needed ([`Need`]), and the run's result is thrown away. The worker
//! hands the call back to its event loop, which fetches what it needs (one
//! request per path however many calls wait for it), stores the answers in
//! the call's [`RunState`] ([`RunState::deliver`]), and queues the call
//! again. The next run finds the answers, through the cache as a miss
//! would, and either finishes or needs more.
//!
//! No thread waits for the upstream: a call waiting for an answer is this
//! state and its job, parked on the loop.
//!
//! Rules that keep a run deterministic:
//! - once a run has needed something, later fetches of the same run are
//!   refused as [`FetchError::Pending`] without being recorded (the run
//!   may take an error path that would ask for something it does not need,
//!   such as the post fallback);
//! - except inside a job run beside the caller
//!   ([`super::fetcher::Fetcher::beside`]), which is independent of the
//!   caller's fetches until it is joined: its needs and the caller's are
//!   fetched together (the profile and its first page in one round trip).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::memory::Reservation;
use super::upstream::{FetchError, UpstreamResponse};

/// The provider of the primary upstream (FxTwitter).
pub const PRIMARY: usize = 0;
/// The provider of the post fallback (X's syndication endpoint).
pub const FALLBACK: usize = 1;

/// Most upstream answers one call keeps between its runs. Default 64 (a
/// call reads at most about 20 pages); past it the call fails with the
/// network error (`fxtwitter_network`).
pub const MAX_DELIVERED_PER_CALL: usize = 64;

type Answer = Result<UpstreamResponse, FetchError>;

/// One upstream request a run needs: the provider ([`PRIMARY`] or
/// [`FALLBACK`]) and the path and query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Need {
    /// [`PRIMARY`] or [`FALLBACK`].
    pub provider: usize,
    /// The path and query, starting with `/`.
    pub path: String,
}

struct Delivered {
    answer: Answer,
    /// The room its body is counted in in the working budget, shared with
    /// the other calls it answered (given back when the last is done).
    room: Option<Arc<Reservation>>,
    /// How long the request took (for the latency histogram).
    took: Duration,
    /// Whether a run has read it (metered once).
    read: bool,
}

/// What one tool call carries between its runs.
pub struct RunState {
    started: Instant,
    delivered: HashMap<Need, Delivered>,
    needs: Vec<Need>,
    /// A fetch of this run needed something (outside a job beside it).
    suspended: bool,
    /// Depth of jobs run beside the caller.
    side: u32,
    /// A job beside the caller needed something.
    side_needed: bool,
    /// How many times the call has run.
    runs: u32,
}

impl Default for RunState {
    fn default() -> RunState {
        RunState::new()
    }
}

impl RunState {
    /// The state of a call starting now.
    pub fn new() -> RunState {
        RunState {
            started: Instant::now(),
            delivered: HashMap::new(),
            needs: Vec::new(),
            suspended: false,
            side: 0,
            side_needed: false,
            runs: 0,
        }
    }

    /// When the call first ran (its `--call-timeout` counts from here).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// How many times the call has run.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// The requests the last run needed (taken).
    pub fn take_needs(&mut self) -> Vec<Need> {
        std::mem::take(&mut self.needs)
    }

    /// Stores the answer to `need`, for the next run. Past
    /// [`MAX_DELIVERED_PER_CALL`] answers the oldest are not dropped: the
    /// new one replaces nothing and the run fails that fetch instead.
    pub fn deliver(
        &mut self,
        need: Need,
        answer: Answer,
        room: Option<Arc<Reservation>>,
        took: Duration,
    ) {
        let (answer, room) = if self.delivered.len() >= MAX_DELIVERED_PER_CALL {
            let e = FetchError::Other("too many upstream answers for one call".into());
            (Err(e), None)
        } else {
            (answer, room)
        };
        self.delivered.insert(
            need,
            Delivered {
                answer,
                room,
                took,
                read: false,
            },
        );
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Box<RunState>>> = const { RefCell::new(None) };
    /// The timing of the last delivered answer handed out on this thread:
    /// `(first read, how long the request took)`, for the meter.
    static LAST: std::cell::Cell<Option<(bool, Duration)>> = const { std::cell::Cell::new(None) };
    /// The last fetch on this thread that was left pending joins a request
    /// already in flight for another call ([`joining`]).
    static JOINING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that the fetch being left pending on this thread joins a request
/// already in flight (the event-loop upstream calls it): it makes no
/// request of its own, so it spends nothing of the upstream budget.
pub fn joining() {
    JOINING.with(|j| j.set(true));
}

/// Takes the note of [`joining`] (false when there is none).
pub fn take_joining() -> bool {
    JOINING.with(std::cell::Cell::take)
}

/// Makes `state` the current call's on this thread (a worker starting a
/// run); its needs of the previous run are cleared.
pub fn enter(mut state: Box<RunState>) {
    state.needs.clear();
    state.suspended = false;
    state.side = 0;
    state.side_needed = false;
    state.runs += 1;
    CURRENT.with(|c| *c.borrow_mut() = Some(state));
}

/// Ends the current run on this thread and returns its state.
pub fn leave() -> Option<Box<RunState>> {
    LAST.with(std::cell::Cell::take);
    CURRENT.with(|c| c.borrow_mut().take())
}

/// Whether a restartable run is current on this thread.
pub fn active() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

/// When the current call started, if a restartable run is current.
pub fn started() -> Option<Instant> {
    CURRENT.with(|c| c.borrow().as_ref().map(|s| s.started))
}

/// Whether the current run needs something (its result is thrown away).
pub fn suspended() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|s| s.suspended || !s.needs.is_empty())
    })
}

/// Whether a fetch of the current run would be recorded now (the run has
/// not needed anything yet, or the fetch is made beside the caller).
pub fn may_record() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|s| !s.suspended || s.side > 0)
    })
}

/// Records that the current run needs `provider`'s `path` (called by the
/// fetcher on [`FetchError::Pending`]); ignored when the run already
/// needed something outside a side job ([`may_record`]).
pub fn record(provider: usize, path: &str) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let Some(s) = c.as_mut() else {
            return;
        };
        if s.suspended && s.side == 0 {
            return;
        }
        let need = Need {
            provider,
            path: path.to_string(),
        };
        if !s.needs.contains(&need) {
            s.needs.push(need);
        }
        if s.side > 0 {
            s.side_needed = true;
        } else {
            s.suspended = true;
        }
    });
}

/// Starts a job beside the caller (see the module documentation).
pub fn side_enter() {
    CURRENT.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            s.side += 1;
        }
    });
}

/// Ends a job beside the caller.
pub fn side_leave() {
    CURRENT.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            s.side = s.side.saturating_sub(1);
        }
    });
}

/// The caller joins its side jobs: what they needed suspends the run.
pub fn side_join() {
    CURRENT.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            if s.side == 0 && s.side_needed {
                s.suspended = true;
            }
        }
    });
}

/// The answer delivered for `provider`'s `path` to the current call, if
/// any (a clone: a later run may read it again).
pub fn delivered(provider: usize, path: &str) -> Option<Answer> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let s = c.as_mut()?;
        let d = s.delivered.get_mut(&Need {
            provider,
            path: path.to_string(),
        })?;
        LAST.with(|l| l.set(Some((!d.read, d.took))));
        d.read = true;
        Some(d.answer.clone())
    })
}

/// Whether an answer for `provider`'s `path` was delivered to the current
/// call (reading it makes no request).
pub fn has(provider: usize, path: &str) -> bool {
    CURRENT.with(|c| {
        c.borrow().as_ref().is_some_and(|s| {
            s.delivered.contains_key(&Need {
                provider,
                path: path.to_string(),
            })
        })
    })
}

/// Whether an answer for `path` (any provider) was delivered to the
/// current call: a request that was already made (and counted against
/// the upstream budget when it was needed).
pub fn is_delivered(path: &str) -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|s| s.delivered.keys().any(|n| n.path == path))
    })
}

/// Bytes of the working budget the current call holds for the answer
/// delivered for `provider`'s `path` (its body's room, see
/// [`super::memory`]); 0 when none.
pub fn room(provider: usize, path: &str) -> usize {
    CURRENT.with(|c| {
        c.borrow().as_ref().map_or(0, |s| {
            s.delivered
                .get(&Need {
                    provider,
                    path: path.to_string(),
                })
                .and_then(|d| d.room.as_ref())
                .map_or(0, |r| r.bytes())
        })
    })
}

/// Forgets the answer delivered for `provider`'s `path` to the current
/// call, and its room (a call with no room to read it gives it back and
/// reads it again once it has room, through the cache or a new request).
pub fn forget(provider: usize, path: &str) {
    CURRENT.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            s.delivered.remove(&Need {
                provider,
                path: path.to_string(),
            });
        }
    });
}

/// Takes the timing of the last delivered answer handed out on this
/// thread: `(first read, how long its request took)`.
pub fn take_delivery() -> Option<(bool, Duration)> {
    LAST.with(std::cell::Cell::take)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Answer {
        Ok(UpstreamResponse {
            status: 200,
            retry_after: None,
            content_type: None,
            body: b"{}".to_vec().into(),
        })
    }

    #[test]
    fn a_run_records_its_first_need_and_refuses_the_rest() {
        enter(Box::default());
        assert!(active() && !suspended() && may_record());
        record(PRIMARY, "/2/status/1");
        assert!(suspended() && !may_record());
        record(PRIMARY, "/2/status/2");
        let mut s = leave().unwrap();
        assert_eq!(
            s.take_needs(),
            vec![Need {
                provider: PRIMARY,
                path: "/2/status/1".into()
            }]
        );
        assert!(!active());
    }

    #[test]
    fn a_side_job_and_the_caller_need_together() {
        enter(Box::default());
        side_enter();
        record(PRIMARY, "/2/profile/a");
        side_leave();
        assert!(may_record(), "the caller still records");
        record(PRIMARY, "/2/profile/a/statuses");
        side_join();
        record(FALLBACK, "/x");
        let mut s = leave().unwrap();
        let paths: Vec<String> = s.take_needs().into_iter().map(|n| n.path).collect();
        assert_eq!(paths, ["/2/profile/a", "/2/profile/a/statuses"]);
    }

    #[test]
    fn delivered_answers_are_read_again_and_timed_once() {
        let mut s = Box::<RunState>::default();
        let need = Need {
            provider: PRIMARY,
            path: "/2/status/1".into(),
        };
        s.deliver(need, ok(), None, Duration::from_millis(7));
        enter(s);
        assert!(is_delivered("/2/status/1") && !is_delivered("/2/status/2"));
        assert!(delivered(FALLBACK, "/2/status/1").is_none());
        assert_eq!(
            delivered(PRIMARY, "/2/status/1").unwrap().unwrap().status,
            200
        );
        assert_eq!(take_delivery(), Some((true, Duration::from_millis(7))));
        let _ = delivered(PRIMARY, "/2/status/1");
        assert_eq!(take_delivery(), Some((false, Duration::from_millis(7))));
        let s = leave().unwrap();
        assert_eq!(s.runs(), 1);
    }
}
