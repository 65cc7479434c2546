//! A loop's idle connections: listing them as they go idle or busy,
//! publishing the list to the other loops, and, at `--max-connections`,
//! closing the one idle the longest (here or on the loop that holds it)
//! after up to [`EVICTION_PROBES`] last reads.

use std::time::Instant;

use mio::Poll;

use super::{Admitted, Loop};
use crate::server::conn::ReadUntil;
use crate::server::idle::nanos;

/// Idle connections one admission at `--max-connections` looks at before
/// it gives up. Each is read once more before it is closed, and one whose
/// request arrived meanwhile is served instead (it is no longer idle).
/// Default 16; a new connection that finds none of them still idle gets
/// the `503` of a full server. Nothing else is visible to peers.
pub const EVICTION_PROBES: usize = 16;

impl Loop {
    /// Lists or unlists slot `index` in the idle list as its connection
    /// became idle (anew) or busy. O(1).
    pub(super) fn track_idle(&mut self, index: usize) {
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        let idle = match slot.admitted {
            Admitted::Served(_) => slot.conn.idle_since(),
            Admitted::Refused => None,
        };
        if idle == slot.idle_mark {
            return;
        }
        slot.idle_mark = idle;
        match idle {
            Some(_) => self.idle.push_back(index, Instant::now()),
            None => self.idle.remove(index),
        }
        self.publish_idle();
    }

    pub(super) fn publish_idle(&self) {
        self.loops[self.me].publish(&self.idle, self.epoch);
    }

    /// At `--max-connections`: makes room for one more connection by
    /// closing the idle connection idle the longest, on this loop or (asked
    /// to, through its waker) on the loop that holds it. False when no loop
    /// has an idle connection: every open connection has a request in
    /// progress, and the new one is refused.
    pub(super) fn make_room(&mut self, poll: &Poll) -> bool {
        let own = self.idle.front().map(|(_, since)| nanos(self.epoch, since));
        let other = (0..self.loops.len())
            .filter(|&i| i != self.me)
            .map(|i| (self.loops[i].oldest(), i))
            .filter(|&(oldest, _)| oldest != u64::MAX)
            .min();
        if let Some((oldest, i)) = other {
            if own.is_none_or(|own| oldest < own) && self.loops[i].ask() {
                // That loop closes it on its next turn; until then the
                // server holds one connection more than the cap.
                return true;
            }
        }
        if self.close_oldest_idle(poll) {
            return true;
        }
        (0..self.loops.len())
            .filter(|&i| i != self.me)
            .any(|i| self.loops[i].ask())
    }

    /// Closes this loop's longest idle connection, after one last read
    /// (a request that arrived since it went idle is served, and the next
    /// one is tried); false when none of [`EVICTION_PROBES`] is still idle.
    fn close_oldest_idle(&mut self, poll: &Poll) -> bool {
        for _ in 0..EVICTION_PROBES {
            let Some((index, _)) = self.idle.front() else {
                return false;
            };
            let Some(generation) = self.slots[index].as_ref().map(|s| s.generation) else {
                self.idle.remove(index);
                continue;
            };
            self.on_ready(poll, index, Some(ReadUntil::Blocked));
            let same = self.slots[index]
                .as_ref()
                .is_some_and(|s| s.generation == generation);
            if !same {
                // It closed (its peer had gone): its place is free.
                return true;
            }
            if self.idle.front().map(|f| f.0) == Some(index) {
                self.close(poll, index);
                crate::metrics::METRICS.idle_closed();
                return true;
            }
        }
        false
    }

    /// Closes the idle connections other loops asked this one to close.
    pub(super) fn close_wanted_idle(&mut self, poll: &Poll) {
        for _ in 0..self.loops[self.me].take_wanted() {
            if !self.close_oldest_idle(poll) {
                break;
            }
        }
    }
}
