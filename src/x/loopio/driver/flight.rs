//! One request's flight on the loop: its start, the rotation over the
//! provider's bases, each attempt on a connection, its progress on
//! readiness, its failures and retries, and its end (the answer handed to
//! the [`Transport`](super::super::Transport)'s waiters).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Registry;

use super::super::wire::{self, WireError};
use super::super::Delivery;
use super::step::{conn_error, step, FailedWith, Next};
use super::{Answer, Driver, Exchange, Flight, Timer, MAX_BODY, MAX_IDLE_PER_LOOP};
use crate::x::memory::{transfer_bytes, Reservation};
use crate::x::restart::Need;
use crate::x::upstream::{retry_after_of, FetchError, FAILOVER_COOLDOWN, MAX_UPSTREAM_BODY_BYTES};

impl<P> Driver<P> {
    /// Starts the request of `need` (this loop owns its flight).
    pub(super) fn start(&mut self, reg: &Registry, need: Need, now: Instant) {
        let Some(p) = self.t.provider(need.provider) else {
            self.finish(
                &need,
                Err(FetchError::Other("no such upstream".into())),
                None,
                now,
            );
            return;
        };
        if p.bases.is_empty() {
            self.finish(
                &need,
                Err(FetchError::Other("no upstream base configured".into())),
                None,
                now,
            );
            return;
        }
        let first = p.first();
        self.flights.insert(
            need.clone(),
            Flight {
                first,
                tried: 0,
                base: first,
                started: now,
                stale_retried: false,
                last: None,
                slot: None,
            },
        );
        self.next_base(reg, &need, now);
    }

    /// Tries the next base of the rotation that is not cooling, or ends the
    /// flight with the last failure (or the cool-down) when none is left.
    pub(super) fn next_base(&mut self, reg: &Registry, need: &Need, now: Instant) {
        let Some(p) = self.t.provider(need.provider) else {
            return;
        };
        let n = p.bases.len();
        let mut soonest: Option<Duration> = None;
        loop {
            let Some(f) = self.flights.get_mut(need) else {
                return;
            };
            if f.tried >= n {
                let answer = match (f.last.take(), soonest) {
                    (Some(a), _) => a,
                    (None, Some(left)) => {
                        Err(FetchError::CoolingDown(crate::x::upstream::ceil_secs(left)))
                    }
                    (None, None) => Err(FetchError::Other("no upstream base configured".into())),
                };
                self.finish(need, answer, None, now);
                return;
            }
            let i = (f.first + f.tried) % n;
            f.tried += 1;
            if let Some(left) = p.bases[i].cooling_left(now) {
                soonest = Some(soonest.map_or(left, |s| s.min(left)));
                continue;
            }
            f.base = i;
            f.stale_retried = false;
            self.attempt(reg, need, false, now);
            return;
        }
    }

    /// Sends the request of `need` to its flight's current base, on a
    /// pooled connection unless `fresh`.
    pub(super) fn attempt(&mut self, reg: &Registry, need: &Need, fresh: bool, now: Instant) {
        let Some(f) = self.flights.get(need) else {
            return;
        };
        let base_index = f.base;
        let Some(p) = self.t.provider(need.provider) else {
            return;
        };
        let base = &p.bases[base_index];
        let timeout = p.timeout;
        let uri = format!("{}{}", base.url, need.path);
        let (bytes, mut reader) = match wire::get(&uri, MAX_BODY) {
            Ok(v) => v,
            Err(e) => {
                self.attempt_done(reg, need, Err(FetchError::Other(e.to_string())), None, now);
                return;
            }
        };
        let pooled = if fresh {
            None
        } else {
            self.pop_idle(reg, need.provider, base_index)
        };
        let index = match pooled {
            Some(i) => i,
            None => match self.open(reg, need.provider, base_index) {
                Ok(i) => i,
                Err(e) => {
                    self.attempt_done(reg, need, Err(e), None, now);
                    return;
                }
            },
        };
        let id = self.id();
        let deadline = now + timeout;
        if self.t.work().is_some() {
            reader.gate();
        }
        if let Some(s) = self.slot_mut(index) {
            s.conn.send(&bytes);
            s.exchange = Some(Exchange {
                id,
                need: need.clone(),
                reader,
                deadline,
                room: None,
                room_since: None,
            });
        }
        if let Some(f) = self.flights.get_mut(need) {
            f.slot = Some(index);
        }
        self.timers.insert((deadline, Timer::Exchange(index, id)));
        self.drive(reg, index, now);
    }

    /// Moves connection `index` on: writes, reads, feeds its exchange.
    pub(super) fn drive(&mut self, reg: &Registry, index: usize, now: Instant) {
        let next = match self.slots.get_mut(index).and_then(Option::as_mut) {
            Some(s) => step(s, &mut self.scratch, self.t.work().as_ref()),
            None => return,
        };
        match next {
            Next::Wait => {}
            Next::Yield => {
                let id = self
                    .slot(index)
                    .and_then(|s| s.exchange.as_ref())
                    .map(|e| e.id);
                if let Some(id) = id {
                    if !self.yielded.contains(&(index, id)) {
                        self.yielded.push((index, id));
                    }
                }
            }
            Next::Room => self.make_room(reg, index, now),
            Next::Close => {
                self.close(reg, index);
            }
            Next::Failed(with) => self.failed(reg, index, with, now),
            Next::Answered(need, response, reusable, timer, mut room) => {
                // The room of the body as read (less than reserved when
                // its length was not announced).
                if let Some(r) = room.as_mut() {
                    r.shrink_to(transfer_bytes(
                        Some(response.body.len() as u64),
                        MAX_UPSTREAM_BODY_BYTES,
                    ));
                }
                self.timers.remove(&timer);
                if let Some(f) = self.flights.get_mut(&need) {
                    f.slot = None;
                }
                if reusable && self.idle_count < MAX_IDLE_PER_LOOP {
                    if let Some(s) = self.slot_mut(index) {
                        s.reused = true;
                        s.idle_since = Some(now);
                        let key = (s.provider, s.base);
                        self.idle_count += 1;
                        self.idle.entry(key).or_default().push(index);
                    }
                } else {
                    self.close(reg, index);
                }
                self.attempt_done(reg, &need, Ok(response), room, now);
            }
        }
    }

    /// Connection `index` failed: a kept-alive connection that failed
    /// before any byte of the answer is retried once on a fresh one (RFC
    /// 9112 §9.3.1: a GET is idempotent); otherwise the attempt fails.
    pub(super) fn failed(&mut self, reg: &Registry, index: usize, with: FailedWith, now: Instant) {
        let (reused, started) = match self.slot(index) {
            Some(s) => (
                s.reused,
                s.exchange.as_ref().is_some_and(|e| e.reader.started()),
            ),
            None => return,
        };
        let Some(need) = self.close(reg, index) else {
            return;
        };
        let stale_retry = reused
            && !started
            && !matches!(with, FailedWith::Wire(WireError::TooLarge))
            && self.flights.get(&need).is_some_and(|f| !f.stale_retried);
        if stale_retry {
            if let Some(f) = self.flights.get_mut(&need) {
                f.stale_retried = true;
            }
            self.attempt(reg, &need, true, now);
            return;
        }
        let error = match with {
            FailedWith::Conn(e) => conn_error(&e),
            FailedWith::Wire(WireError::TooLarge) => FetchError::TooLarge,
            FailedWith::Wire(e) => FetchError::Other(e.to_string()),
        };
        self.attempt_done(reg, &need, Err(error), None, now);
    }

    /// An attempt at one base answered (or failed): the base cools and the
    /// next is tried, or the flight ends with the answer.
    pub(super) fn attempt_done(
        &mut self,
        reg: &Registry,
        need: &Need,
        answer: Answer,
        room: Option<Reservation>,
        now: Instant,
    ) {
        let Some(p) = self.t.provider(need.provider) else {
            return;
        };
        let several = p.bases.len() > 1;
        let cool = match &answer {
            Ok(r) if r.status == 429 => Some(retry_after_of(r)),
            Ok(r) if r.status >= 500 && several => Some(FAILOVER_COOLDOWN),
            Err(FetchError::Connect(_) | FetchError::Timeout) if several => Some(FAILOVER_COOLDOWN),
            _ => None,
        };
        let Some(cool) = cool else {
            self.finish(need, answer, room, now);
            return;
        };
        let Some(f) = self.flights.get_mut(need) else {
            return;
        };
        p.bases[f.base].cool(cool);
        f.last = Some(answer);
        self.next_base(reg, need, now);
    }

    /// Ends the flight of `need` with `answer`, for everyone waiting; the
    /// room its body is counted in is theirs together, given back when the
    /// last of them is done with it.
    pub(super) fn finish(
        &mut self,
        need: &Need,
        answer: Answer,
        room: Option<Reservation>,
        now: Instant,
    ) {
        let room = room.map(Arc::new);
        let started = match self.flights.remove(need) {
            Some(f) => f.started,
            None => now,
        };
        let took = now.duration_since(started);
        for w in self.t.land(need) {
            if w.lane == self.lane {
                self.deliver(w.park, need.clone(), answer.clone(), room.clone(), took);
            } else {
                self.t.post(
                    w.lane,
                    Delivery {
                        park: w.park,
                        need: need.clone(),
                        answer: answer.clone(),
                        room: room.clone(),
                        took,
                    },
                );
            }
        }
    }

    /// Cuts the request of `need`: nobody waits for it any more.
    pub(super) fn abort(&mut self, reg: &Registry, need: &Need) {
        let Some(f) = self.flights.remove(need) else {
            return;
        };
        if let Some(index) = f.slot {
            self.close(reg, index);
        }
        // Anyone left waits past its deadline or has gone.
        self.t.land(need);
    }
}
