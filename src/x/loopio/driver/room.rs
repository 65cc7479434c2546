//! A body's room in the working budget (`crate::x::memory`), counted
//! from its answer's head on, before the body is read.

use std::time::Instant;

use mio::Registry;

use std::sync::Arc;

use super::{Driver, Exchange, Timer, MAX_UPSTREAM_BODY_BYTES, ROOM_RETRY};
use crate::x::memory::{
    transfer_bytes, Reservation, WorkBudget, MAX_INCOMING_WAIT, WORK_RETRY_AFTER_SECS,
};
use crate::x::upstream::FetchError;

impl<P> Driver<P> {
    /// The head of the answer on connection `index` is in: its body is
    /// counted in the working budget ([`transfer_bytes`] of what it
    /// announces) before it is read. With no room, the socket is not read
    /// and the driver looks again every [`ROOM_RETRY`]; after
    /// [`MAX_INCOMING_WAIT`] (or at the exchange's deadline) the request
    /// fails as [`FetchError::MemoryBudget`] (retryable, the base is not
    /// cooled).
    pub(super) fn make_room(&mut self, reg: &Registry, index: usize, now: Instant) {
        let work = self.t.work();
        let Some(ex) = self.slot_mut(index).and_then(|s| s.exchange.as_mut()) else {
            return;
        };
        let Some(announced) = ex.reader.needs_room() else {
            return;
        };
        if grant(ex, announced, work.as_ref()) {
            let (need, waited) = (ex.need.clone(), ex.room_since.take().is_some());
            if waited {
                self.t.fed(&need);
            }
            self.drive(reg, index, now);
            return;
        }
        let since = *ex.room_since.get_or_insert(now);
        let (id, need) = (ex.id, ex.need.clone());
        self.t.starve(&need);
        if now.duration_since(since) >= MAX_INCOMING_WAIT {
            self.close(reg, index);
            self.attempt_done(
                reg,
                &need,
                Err(FetchError::MemoryBudget(WORK_RETRY_AFTER_SECS)),
                None,
                now,
            );
            return;
        }
        self.timers
            .insert((now + ROOM_RETRY, Timer::Room(index, id)));
    }
}

/// Counts the body of `ex`, whose head announced `announced` bytes, in
/// the working budget `work` (none: nothing to count) and lets the reader
/// read it; false, with nothing counted, when there is no room now.
pub(super) fn grant(
    ex: &mut Exchange,
    announced: Option<u64>,
    work: Option<&Arc<WorkBudget>>,
) -> bool {
    let bytes = transfer_bytes(announced, MAX_UPSTREAM_BODY_BYTES);
    if !work.is_none_or(|w| w.try_reserve(bytes, 0)) {
        return false;
    }
    ex.room = work.map(|w| Reservation::new(Arc::clone(w), bytes));
    ex.reader.admit();
    true
}
