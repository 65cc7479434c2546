//! The idle connections of one event loop, oldest first, for closing the
//! longest idle one when `--max-connections` is reached (as nginx reuses
//! its keep-alive connections).
//!
//! A connection is idle when it has no request in progress: no byte of a
//! head buffered, no body being read, no worker job, no unsent output, and
//! it is not closing. A connection that has just opened and sent nothing is
//! idle too (else silent connections would be a way to fill the cap that
//! idle keep-alive ones are not). Every operation is O(1): the list is
//! intrusive, linked by slot index, so nothing on the event loop's hot path
//! walks the connections.
//!
//! [`LoopIdle`] is what one loop publishes to the others: when a loop at the
//! cap has no idle connection of its own it asks the loop whose oldest idle
//! connection is oldest to close it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const NIL: usize = usize::MAX;

#[derive(Clone, Copy)]
struct Link {
    prev: usize,
    next: usize,
    linked: bool,
    since: Option<Instant>,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    linked: false,
    since: None,
};

/// Slot indexes in the order they became idle (front: idle the longest).
#[derive(Default)]
pub struct IdleList {
    links: Vec<Link>,
    head: usize,
    tail: usize,
    len: usize,
}

impl IdleList {
    /// An empty list.
    pub fn new() -> IdleList {
        IdleList {
            links: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// Idle slots listed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no slot is listed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `index` is listed.
    pub fn contains(&self, index: usize) -> bool {
        self.links.get(index).is_some_and(|l| l.linked)
    }

    /// The slot idle the longest, and since when it is listed.
    pub fn front(&self) -> Option<(usize, Instant)> {
        (self.head != NIL).then(|| (self.head, self.links[self.head].since.expect("listed")))
    }

    /// Lists `index` as the newest idle slot, idle since `since` (moved to
    /// the back when listed already).
    pub fn push_back(&mut self, index: usize, since: Instant) {
        self.remove(index);
        if self.links.len() <= index {
            self.links.resize(index + 1, UNLINKED);
        }
        self.links[index] = Link {
            prev: self.tail,
            next: NIL,
            linked: true,
            since: Some(since),
        };
        if self.tail == NIL {
            self.head = index;
        } else {
            self.links[self.tail].next = index;
        }
        self.tail = index;
        self.len += 1;
    }

    /// Unlists `index` (nothing when it is not listed).
    pub fn remove(&mut self, index: usize) {
        let Some(link) = self.links.get(index).copied().filter(|l| l.linked) else {
            return;
        };
        if link.prev == NIL {
            self.head = link.next;
        } else {
            self.links[link.prev].next = link.next;
        }
        if link.next == NIL {
            self.tail = link.prev;
        } else {
            self.links[link.next].prev = link.prev;
        }
        self.links[index] = UNLINKED;
        self.len -= 1;
    }
}

/// What one event loop tells the others about its idle connections.
pub struct LoopIdle {
    /// Nanoseconds since the server's epoch at which its oldest idle
    /// connection became idle; `u64::MAX` when it has none.
    oldest: AtomicU64,
    /// Idle connections it holds.
    count: AtomicUsize,
    /// Idle connections other loops asked it to close.
    wanted: AtomicUsize,
    /// Interrupts its poll.
    waker: Arc<mio::Waker>,
}

impl LoopIdle {
    /// A loop with no idle connection yet, woken through `waker`.
    pub fn new(waker: Arc<mio::Waker>) -> LoopIdle {
        LoopIdle {
            oldest: AtomicU64::new(u64::MAX),
            count: AtomicUsize::new(0),
            wanted: AtomicUsize::new(0),
            waker,
        }
    }

    /// Publishes the loop's list (after it changed).
    pub fn publish(&self, list: &IdleList, epoch: Instant) {
        let oldest = list
            .front()
            .map_or(u64::MAX, |(_, since)| nanos(epoch, since));
        self.oldest.store(oldest, Ordering::Relaxed);
        self.count.store(list.len(), Ordering::Relaxed);
    }

    /// Asks this loop to close its oldest idle connection; false (nothing
    /// asked) when it has no idle connection that is not already asked for.
    pub fn ask(&self) -> bool {
        let count = self.count.load(Ordering::Relaxed);
        let asked = self
            .wanted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w < count).then_some(w + 1)
            })
            .is_ok();
        if asked {
            let _ = self.waker.wake();
        }
        asked
    }

    /// Takes the closes other loops asked for.
    pub fn take_wanted(&self) -> usize {
        self.wanted.swap(0, Ordering::AcqRel)
    }

    /// When its oldest idle connection became idle (ns since the epoch).
    pub fn oldest(&self) -> u64 {
        self.oldest.load(Ordering::Relaxed)
    }
}

/// `at` in nanoseconds since `epoch` (0 before it).
pub fn nanos(epoch: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    #[derive(Debug, Clone)]
    enum Op {
        Push(usize),
        Remove(usize),
        PopFront,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..40).prop_map(Op::Push),
            (0usize..40).prop_map(Op::Remove),
            Just(Op::PopFront),
        ]
    }

    proptest! {
        /// Against a plain vector kept in idle order (the oracle): the
        /// front is always the slot listed longest ago, membership and
        /// length agree, whatever the schedule of pushes and removals.
        #[test]
        fn the_front_is_always_the_longest_idle(ops in proptest::collection::vec(op(), 0..400)) {
            let t0 = Instant::now();
            let mut list = IdleList::new();
            let mut oracle: Vec<usize> = Vec::new();
            for (step, op) in ops.into_iter().enumerate() {
                let now = t0 + Duration::from_millis(step as u64);
                match op {
                    Op::Push(i) => {
                        list.push_back(i, now);
                        oracle.retain(|&x| x != i);
                        oracle.push(i);
                    }
                    Op::Remove(i) => {
                        list.remove(i);
                        oracle.retain(|&x| x != i);
                    }
                    Op::PopFront => {
                        if let Some((i, _)) = list.front() {
                            list.remove(i);
                        }
                        if !oracle.is_empty() {
                            oracle.remove(0);
                        }
                    }
                }
                prop_assert_eq!(list.len(), oracle.len());
                prop_assert_eq!(list.front().map(|f| f.0), oracle.first().copied());
                for i in 0..40 {
                    prop_assert_eq!(list.contains(i), oracle.contains(&i));
                }
            }
            // Draining from the front gives the oracle's order.
            let mut drained = Vec::new();
            while let Some((i, _)) = list.front() {
                list.remove(i);
                drained.push(i);
            }
            prop_assert_eq!(drained, oracle);
            prop_assert!(list.is_empty());
        }
    }

    #[test]
    fn a_loop_is_asked_for_no_more_than_it_holds() {
        let poll = mio::Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(1)).unwrap());
        let shared = LoopIdle::new(waker);
        let t0 = Instant::now();
        let mut list = IdleList::new();
        shared.publish(&list, t0);
        assert_eq!(shared.oldest(), u64::MAX);
        assert!(!shared.ask(), "nothing idle");
        list.push_back(7, t0 + Duration::from_nanos(500));
        list.push_back(3, t0 + Duration::from_nanos(900));
        shared.publish(&list, t0);
        assert_eq!(shared.oldest(), 500);
        assert!(shared.ask() && shared.ask());
        assert!(!shared.ask(), "both already asked for");
        assert_eq!(shared.take_wanted(), 2);
        assert!(shared.ask());
    }
}
