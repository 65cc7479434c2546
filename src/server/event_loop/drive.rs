//! Driving a loop's connections: readiness to [`Conn`] (read, parse,
//! dispatch to the pool, write) for at most [`MAX_ROUNDS_PER_TURN`] rounds
//! a turn, the yielded connections' next turns, and settling a slot after
//! it was driven (close, re-register, yield).

use std::time::Instant;

use mio::{Interest, Poll, Token};

use super::{Loop, Slot, FIRST_CONN};
use crate::server::conn::{Conn, Ctx, Handler, ReadUntil};
use crate::server::workers::{Pool, Ticket};

/// Rounds one connection gets per turn of its loop, a round being: parse
/// what is buffered (up to the pending-output cap), write, read more. Past
/// it, with work left, the connection yields: the loop looks at its other
/// connections first and comes back to it at once.
///
/// Default is 2 (up to about 512 KiB of replies, or 2 MiB of requests, per
/// turn). Without it, a client that pipelines without pause, reading its
/// replies as fast as they come, held its loop (and every other connection
/// on it) for seconds. The client itself sees no difference: 1.17 GB of
/// replies in 10 s, as before.
pub const MAX_ROUNDS_PER_TURN: usize = 2;

impl Loop {
    /// Runs `f` on slot `index` with a [`Ctx`] for `now`, lending it the
    /// handler, the pool and the read buffer; `None` when the slot is empty.
    pub(super) fn with_slot<R>(
        &mut self,
        index: usize,
        now: Instant,
        f: impl FnOnce(&mut Slot, &Ctx, &dyn Handler, &Pool, &mut [u8]) -> R,
    ) -> Option<R> {
        let draining = self.draining_since.is_some();
        let Loop {
            slots,
            options,
            date,
            handler,
            pool,
            scratch,
            log,
            ..
        } = self;
        let slot = slots.get_mut(index)?.as_mut()?;
        let ctx = Ctx {
            log,
            limits: &options.limits,
            date: date.now(),
            now,
            draining,
        };
        Some(f(slot, &ctx, &**handler, pool, scratch))
    }

    pub(super) fn on_ready(&mut self, poll: &Poll, index: usize, read: Option<ReadUntil>) {
        let driven = self.with_slot(
            index,
            Instant::now(),
            |slot, ctx, handler, pool, scratch| {
                let read_failed = read.is_some_and(|until| {
                    slot.conn
                        .read_from(&mut slot.stream, scratch, ctx, until)
                        .is_err()
                });
                if read_failed {
                    Driven::Failed
                } else {
                    drive(slot, handler, pool, index, ctx, scratch)
                }
            },
        );
        if let Some(driven) = driven {
            self.settle(poll, index, driven);
        }
    }

    /// Gives each connection that yielded its next turn.
    pub(super) fn serve_yielded(&mut self, poll: &Poll) {
        for (index, generation) in std::mem::take(&mut self.yielded) {
            self.drive_if_current(poll, index, generation, |_, _| {});
        }
    }

    /// Runs `first` on the connection at `index` and drives it, if the slot
    /// still holds the connection of `generation` (it may have closed, and
    /// its slot been reused, since).
    pub(super) fn drive_if_current(
        &mut self,
        poll: &Poll,
        index: usize,
        generation: u32,
        first: impl FnOnce(&mut Conn, &Ctx),
    ) {
        let driven = self.with_slot(
            index,
            Instant::now(),
            |slot, ctx, handler, pool, scratch| {
                (slot.generation == generation).then(|| {
                    first(&mut slot.conn, ctx);
                    drive(slot, handler, pool, index, ctx, scratch)
                })
            },
        );
        if let Some(Some(driven)) = driven {
            self.settle(poll, index, driven);
        }
    }

    /// Closes or re-registers a slot after it was driven, and queues it
    /// for another turn when it yielded.
    pub(super) fn settle(&mut self, poll: &Poll, index: usize, driven: Driven) {
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        if slot.conn.wants_linger() {
            // The answer is written: send FIN, then read and discard
            // until the peer closes, so unread input cannot turn the
            // close into a reset that destroys the answer.
            let _ = slot.stream.shutdown(std::net::Shutdown::Write);
            slot.conn.begin_linger(Instant::now());
        }
        if driven == Driven::Failed || slot.conn.close_reason().is_some() {
            self.close(poll, index);
            return;
        }
        if driven == Driven::Yielded {
            crate::metrics::METRICS.yielded();
            self.yielded.push((index, slot.generation));
        }
        self.track_idle(index);
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        let want_write = slot.conn.wants_write();
        if want_write != slot.writable {
            let interest = if want_write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let token = Token(index + FIRST_CONN);
            if poll
                .registry()
                .reregister(&mut slot.stream, token, interest)
                .is_err()
            {
                self.close(poll, index);
                return;
            }
            slot.writable = want_write;
        }
    }
}

/// What driving a connection left it doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Driven {
    /// Waiting for the socket, a worker or the peer.
    Waiting,
    /// A socket error: close it.
    Failed,
    /// Work left after [`MAX_ROUNDS_PER_TURN`] rounds: drive it again
    /// after the loop's other connections.
    Yielded,
}

/// Parses, dispatches and writes until the connection must wait, for at
/// most [`MAX_ROUNDS_PER_TURN`] rounds.
fn drive(
    slot: &mut Slot,
    handler: &dyn Handler,
    pool: &Pool,
    index: usize,
    ctx: &Ctx,
    scratch: &mut [u8],
) -> Driven {
    let mut rounds = 0;
    loop {
        if let Some(job) = slot.conn.process(handler, ctx) {
            let ticket = Ticket {
                index,
                generation: slot.generation,
            };
            if let Err(job) = pool.submit(ticket, job) {
                crate::metrics::METRICS.rejected("queue_full");
                slot.conn.complete(job.busy(), ctx);
                continue;
            }
            crate::metrics::METRICS.queue(1);
        }
        if slot.conn.write_to(&mut slot.stream, ctx.now).is_err() {
            return Driven::Failed;
        }
        // Pipelined requests parked behind pending output (the output has
        // drained), or a read that stopped at the buffer cap (it has room
        // again): another round, if this turn has one left.
        let parked = slot.conn.resume_pending();
        let unread = !parked && slot.conn.read_pending(ctx.limits) && !slot.conn.is_waiting();
        if !parked && !unread {
            return Driven::Waiting;
        }
        rounds += 1;
        if rounds >= MAX_ROUNDS_PER_TURN {
            return Driven::Yielded;
        }
        if unread
            && slot
                .conn
                .read_from(&mut slot.stream, scratch, ctx, ReadUntil::Blocked)
                .is_err()
        {
            return Driven::Failed;
        }
    }
}
