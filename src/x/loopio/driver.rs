//! One event loop's upstream side: the calls parked on it until their
//! answers are in, the requests it makes (one per path and query, however
//! many calls wait: the single-flight table is the [`Transport`]'s), its
//! keep-alive pool, and their deadlines on the loop's timers.
//!
//! The loop calls [`Driver::park`] with a call whose run needs answers,
//! [`Driver::ready`] on readiness of an upstream socket (tokens from
//! [`UPSTREAM_TOKENS`] on), [`Driver::fire`] when [`Driver::next_timer`]
//! is due, [`Driver::drain_mail`] after a wake-up, [`Driver::sweep`] once a
//! second, and queues on a worker what [`Driver::take_resumed`] gives back.
//!
//! A request goes to its provider's bases in turn, as the blocking client
//! did: a 429 cools its base for its `Retry-After`, and with several bases
//! a 5xx, a connect failure or a timeout cools it for
//! [`FAILOVER_COOLDOWN`] and the request moves to the next base.
//!
//! The payload `P` is what the loop parks (its ticket and job); the driver
//! never looks into it.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Registry;

use super::conn::UpConn;
use super::wire::ResponseReader;

mod flight;
mod pool;
mod room;
mod step;
#[cfg(test)]
mod tests;
use super::{Transport, Waiter};
use crate::x::memory::{Reservation, WORK_RETRY_AFTER_SECS};
use crate::x::restart::{Need, RunState};
use crate::x::upstream::{
    FetchError, UpstreamResponse, MAX_IDLE_UPSTREAM_CONNECTIONS, MAX_UPSTREAM_BODY_BYTES,
};

type Answer = Result<UpstreamResponse, FetchError>;

/// The first `mio` token of the upstream sockets; the event loop's own
/// tokens stay below it.
pub const UPSTREAM_TOKENS: usize = 1 << 30;

/// How long a kept-alive upstream connection may idle in a loop's pool.
/// Default 15 s (ureq's own default); past it the connection is closed and
/// the next request opens a new one.
pub const UPSTREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(15);

/// Most idle upstream connections one loop keeps. Default
/// [`MAX_IDLE_UPSTREAM_CONNECTIONS`] (128); past it a finished connection
/// is closed.
pub const MAX_IDLE_PER_LOOP: usize = MAX_IDLE_UPSTREAM_CONNECTIONS;

/// How often a body waiting for room in the working budget looks again:
/// every 10 ms (for at most `MAX_INCOMING_WAIT`, 2 s).
pub const ROOM_RETRY: Duration = Duration::from_millis(10);

/// The largest body read, as a `usize`.
const MAX_BODY: usize = MAX_UPSTREAM_BODY_BYTES as usize;

struct Slot {
    /// Its index (its token is [`UPSTREAM_TOKENS`] + this).
    index: usize,
    conn: UpConn,
    provider: usize,
    base: usize,
    /// The exchange in progress.
    exchange: Option<Exchange>,
    /// The connection carried an exchange before the current one.
    reused: bool,
    /// Idle in the pool since.
    idle_since: Option<Instant>,
}

struct Exchange {
    id: u64,
    need: Need,
    reader: ResponseReader,
    /// Its timer's instant.
    deadline: Instant,
    /// The room its body is counted in, once its head is in (`None`
    /// before, or with no working budget).
    room: Option<Reservation>,
    /// Since when its body has waited for room.
    room_since: Option<Instant>,
}

/// A request this loop makes.
struct Flight {
    /// The base the rotation started at, and how many were tried.
    first: usize,
    tried: usize,
    /// The base of the attempt in progress.
    base: usize,
    started: Instant,
    /// The attempt in progress retried a stale kept-alive connection.
    stale_retried: bool,
    /// The answer of the last base that failed (when every base fails).
    last: Option<Answer>,
    /// The connection of the attempt in progress.
    slot: Option<usize>,
}

struct Parked<P> {
    payload: P,
    /// Its timer's instant.
    deadline: Instant,
    state: Box<RunState>,
    needs: Vec<Need>,
    missing: usize,
    cancel: Option<Arc<AtomicBool>>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// A parked call's deadline.
    Park(u64),
    /// An exchange's deadline (slot, exchange id).
    Exchange(usize, u64),
    /// An exchange whose body waits for room looks again (slot, exchange
    /// id).
    Room(usize, u64),
}

/// One event loop's upstream side (see the module documentation).
pub struct Driver<P> {
    t: Arc<Transport>,
    lane: usize,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Idle connections by (provider, base).
    idle: HashMap<(usize, usize), Vec<usize>>,
    idle_count: usize,
    flights: HashMap<Need, Flight>,
    parked: HashMap<u64, Parked<P>>,
    next_id: u64,
    timers: BTreeSet<(Instant, Timer)>,
    resumed: Vec<(P, Box<RunState>)>,
    /// The read buffer of every connection of this loop.
    scratch: Vec<u8>,
    /// Upstream connections open.
    open: usize,
    /// Connections (slot, exchange id) that yielded with their answer not
    /// done, for their next turn ([`Driver::serve_yielded`]).
    yielded: Vec<(usize, u64)>,
}

impl<P> Driver<P> {
    /// The upstream side of loop `lane`.
    pub fn new(t: Arc<Transport>, lane: usize) -> Driver<P> {
        Driver {
            t,
            lane,
            slots: Vec::new(),
            free: Vec::new(),
            idle: HashMap::new(),
            idle_count: 0,
            flights: HashMap::new(),
            parked: HashMap::new(),
            next_id: 1,
            timers: BTreeSet::new(),
            resumed: Vec::new(),
            scratch: vec![0u8; super::conn::READ_BYTES],
            open: 0,
            yielded: Vec::new(),
        }
    }

    /// Calls parked here now.
    pub fn parked(&self) -> usize {
        self.parked.len()
    }

    /// This loop's gauges: upstream connections open (idle or in use),
    /// requests in flight, calls parked (the event loop publishes them in
    /// `/metrics`; this layer names no metrics).
    pub fn gauges(&self) -> [i64; 3] {
        [self.open, self.flights.len(), self.parked.len()]
            .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Parks a call whose run needs answers (`state`'s needs): it comes
    /// back from [`Driver::take_resumed`] once every answer is in, at its
    /// deadline, or when `cancel` is raised.
    pub fn park(
        &mut self,
        reg: &Registry,
        payload: P,
        cancel: Option<Arc<AtomicBool>>,
        mut state: Box<RunState>,
        now: Instant,
    ) {
        let needs = state.take_needs();
        if needs.is_empty() {
            self.resumed.push((payload, state));
            return;
        }
        let id = self.id();
        let deadline = state.started() + self.t.call_timeout();
        self.parked.insert(
            id,
            Parked {
                payload,
                deadline,
                state,
                needs: needs.clone(),
                missing: needs.len(),
                cancel: cancel.clone(),
            },
        );
        self.timers.insert((deadline, Timer::Park(id)));
        for need in needs {
            let waiter = Waiter {
                lane: self.lane,
                park: id,
                deadline,
                cancel: cancel.clone(),
            };
            if self.t.join_flight(&need, waiter) {
                self.start(reg, need, now);
            }
        }
    }

    /// The calls ready to run again.
    pub fn take_resumed(&mut self) -> Vec<(P, Box<RunState>)> {
        std::mem::take(&mut self.resumed)
    }

    /// Whether calls are ready to run again.
    pub fn has_resumed(&self) -> bool {
        !self.resumed.is_empty()
    }

    /// Whether connections yielded with more to read: the loop polls
    /// without sleeping and calls [`Driver::serve_yielded`].
    pub fn has_yielded(&self) -> bool {
        !self.yielded.is_empty()
    }

    /// Steps again the connections that yielded (after the timers, so an
    /// exchange past its deadline is cut rather than read on).
    pub fn serve_yielded(&mut self, reg: &Registry, now: Instant) {
        for (index, id) in std::mem::take(&mut self.yielded) {
            let current = self
                .slot(index)
                .and_then(|s| s.exchange.as_ref())
                .is_some_and(|e| e.id == id);
            if current && !self.slot(index).is_some_and(step::waits_for_room) {
                self.drive(reg, index, now);
            }
        }
    }

    /// The next timer due.
    pub fn next_timer(&self) -> Option<Instant> {
        self.timers.first().map(|(at, _)| *at)
    }

    /// Readiness of the upstream socket of `token` (at least
    /// [`UPSTREAM_TOKENS`]).
    pub fn ready(&mut self, reg: &Registry, token: usize, now: Instant) {
        let Some(index) = token.checked_sub(UPSTREAM_TOKENS) else {
            return;
        };
        // A body waiting for room is looked at by its timer.
        if self.slot(index).is_some_and(step::waits_for_room) {
            return;
        }
        self.drive(reg, index, now);
    }

    /// Takes the answers other loops fetched for calls parked here.
    pub fn drain_mail(&mut self) {
        for d in self.t.take_mail(self.lane) {
            self.deliver(d.park, d.need, d.answer, d.room, d.took);
        }
    }

    /// Runs the timers due at `now`.
    pub fn fire(&mut self, reg: &Registry, now: Instant) {
        while let Some(&(at, timer)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            match timer {
                Timer::Park(id) => self.unpark(reg, id, now),
                Timer::Exchange(index, id) => {
                    let current = self
                        .slot(index)
                        .and_then(|s| s.exchange.as_ref())
                        .is_some_and(|e| e.id == id);
                    if current {
                        // A body still waiting for room: the budget's refusal,
                        // not the upstream's fault.
                        let starved = self.slot(index).is_some_and(step::waits_for_room);
                        let need = self.close(reg, index);
                        if let Some(need) = need {
                            let error = if starved {
                                FetchError::MemoryBudget(WORK_RETRY_AFTER_SECS)
                            } else {
                                FetchError::Timeout
                            };
                            self.attempt_done(reg, &need, Err(error), None, now);
                        }
                    }
                }
                Timer::Room(index, id) => {
                    let current = self
                        .slot(index)
                        .and_then(|s| s.exchange.as_ref())
                        .is_some_and(|e| e.id == id);
                    if current {
                        self.make_room(reg, index, now);
                    }
                }
            }
        }
    }

    /// Once a second: calls whose client left go back (to end), requests
    /// nobody waits for are cut, connections idle too long are closed.
    pub fn sweep(&mut self, reg: &Registry, now: Instant) {
        let gone: Vec<u64> = self
            .parked
            .iter()
            .filter(|(_, p)| p.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)))
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.unpark(reg, id, now);
        }
        let unwanted: Vec<Need> = self
            .flights
            .keys()
            .filter(|n| !self.t.flight_wanted(n, now))
            .cloned()
            .collect();
        for need in unwanted {
            self.abort(reg, &need);
        }
        let stale: Vec<usize> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let since = s.as_ref()?.idle_since?;
                (now.duration_since(since) >= UPSTREAM_IDLE_TIMEOUT).then_some(i)
            })
            .collect();
        for index in stale {
            self.close(reg, index);
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn slot(&self, index: usize) -> Option<&Slot> {
        self.slots.get(index).and_then(Option::as_ref)
    }

    fn slot_mut(&mut self, index: usize) -> Option<&mut Slot> {
        self.slots.get_mut(index).and_then(Option::as_mut)
    }

    /// Gives a parked call back (its deadline passed or its client left),
    /// cutting the requests only it waited for.
    fn unpark(&mut self, reg: &Registry, id: u64, now: Instant) {
        let Some(p) = self.parked.remove(&id) else {
            return;
        };
        self.timers.remove(&(p.deadline, Timer::Park(id)));
        let mut p = p;
        for need in &p.needs {
            // A request whose body waits for room: the call is refused as
            // the budget refuses it (retryable), not as a timeout.
            if self.t.is_starved(need) {
                p.state.deliver(
                    need.clone(),
                    Err(FetchError::MemoryBudget(WORK_RETRY_AFTER_SECS)),
                    None,
                    Duration::ZERO,
                );
            }
            if self.flights.contains_key(need) && !self.t.flight_wanted(need, now) {
                self.abort(reg, need);
            }
        }
        self.resumed.push((p.payload, p.state));
    }

    /// An answer for parked call `id`.
    fn deliver(
        &mut self,
        id: u64,
        need: Need,
        answer: Answer,
        room: Option<Arc<Reservation>>,
        took: Duration,
    ) {
        let Some(p) = self.parked.get_mut(&id) else {
            return;
        };
        if !p.needs.contains(&need) {
            return;
        }
        p.state.deliver(need, answer, room, took);
        p.missing -= 1;
        if p.missing == 0 {
            if let Some(p) = self.parked.remove(&id) {
                self.timers.remove(&(p.deadline, Timer::Park(id)));
                self.resumed.push((p.payload, p.state));
            }
        }
    }
}
