//! The work of each turn besides readiness: completions from the worker
//! pool, the upstream side's turn and its gauges, bodies whose memory
//! reservations the budget took back, and the once-a-second deadline
//! sweep.

use std::time::Instant;

use mio::Poll;

use super::drive::Driven;
use super::Loop;

impl Loop {
    /// Refuses (`503`) the bodies whose reservations the memory budget
    /// took back since this loop last looked (another address came to hold
    /// a body and needed its share; the budget woke every loop).
    pub(super) fn refuse_revoked(&mut self, poll: &Poll) {
        let revocations = self.budget.revocations();
        if revocations == self.seen_revocations {
            return;
        }
        self.seen_revocations = revocations;
        for index in 0..self.slots.len() {
            let revoked = self.slots[index]
                .as_ref()
                .is_some_and(|s| s.conn.body_revoked());
            if revoked {
                self.on_ready(poll, index, None);
            }
        }
    }

    pub(super) fn deliver_completions(&mut self, poll: &Poll) {
        for (ticket, response) in self.pool.take_completions() {
            crate::metrics::METRICS.queue(-1);
            self.drive_if_current(poll, ticket.index, ticket.generation, |conn, ctx| {
                conn.complete(response, ctx)
            });
        }
    }

    /// The upstream side's turn: park the calls whose runs wait for
    /// answers, take answers other loops fetched, run the timers due, and
    /// queue the calls whose answers are in (or whose deadline passed).
    pub(super) fn upstream_turn(&mut self, poll: &Poll) {
        let Some(up) = self.upstream.as_mut() else {
            return;
        };
        let now = Instant::now();
        for (ticket, job, state) in self.pool.take_parked() {
            crate::metrics::METRICS.queue(-1);
            let cancel = job.cancel_flag();
            up.park(poll.registry(), (ticket, job), cancel, state, now);
        }
        up.drain_mail();
        up.fire(poll.registry(), now);
        up.serve_yielded(poll.registry(), now);
        for ((ticket, job), state) in up.take_resumed() {
            if self.pool.resume(ticket, job, state).is_ok() {
                crate::metrics::METRICS.queue(1);
            }
        }
        self.report_upstream();
    }

    /// Adds what changed of this loop's upstream gauges to the metrics.
    fn report_upstream(&mut self) {
        let Some(up) = self.upstream.as_ref() else {
            return;
        };
        let now = up.gauges();
        let m = &crate::metrics::METRICS;
        if now != self.reported {
            let r = self.reported;
            let d = [now[0] - r[0], now[1] - r[1], now[2] - r[2]];
            m.upstream_connections(d[0]);
            m.upstream_in_flight(d[1]);
            m.parked_calls(d[2]);
            self.reported = now;
        }
    }

    pub(super) fn sweep(&mut self, poll: &Poll, now: Instant) {
        if let Some(up) = self.upstream.as_mut() {
            up.sweep(poll.registry(), now);
        }
        self.report_upstream();
        for index in 0..self.slots.len() {
            let expired = self.with_slot(index, now, |slot, ctx, _, _, _| {
                if slot.conn.check_deadlines(ctx) {
                    return None;
                }
                Some(slot.conn.write_to(&mut slot.stream, now).is_err())
            });
            match expired {
                None => {}
                Some(None) => self.close(poll, index),
                Some(Some(failed)) => self.settle(
                    poll,
                    index,
                    if failed {
                        Driven::Failed
                    } else {
                        Driven::Waiting
                    },
                ),
            }
        }
    }
}
