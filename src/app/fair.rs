//! Fair shares of the upstream budget among the client addresses that
//! want it right now.
//!
//! The budget is `rate` requests per second with a burst of `burst`. Every
//! request a client sends adds one to that client's *debt*; debts are paid
//! back at `rate` per second in all, split equally among the clients that
//! owe something (a client whose debt reaches zero leaves the split, and
//! the others' debts fall faster: water-filling). So
//!
//! - the requests sent in any span of `t` seconds are at most `burst +
//!   rate·t` (the total debt never passes `burst`), the whole server's
//!   limit towards the upstream, as before;
//! - each of `n` clients that keep asking gets `rate / n` per second, and
//!   a client that asks for less than that gets all it asks for;
//! - one client's debt may grow to at most its share of the burst,
//!   `burst / (n + 1)` with `n` the clients that owe something, him
//!   included; and a client that already owes something may not take the
//!   last `burst / (n + 1)`, so a client that owes nothing (a newcomer, or
//!   one that asks for less than its share) finds room for its request at
//!   once, unless as many other such clients took that room first (the
//!   limit of key multiplication: each client that owes nothing may take
//!   one request of it);
//! - a refused request changes nothing: it is not sent, and no debt is
//!   added, so retrying burns nothing.
//!
//! The clients that owe are few (all together owe at most the burst; a
//! flood of new clients, one request each, makes about e times the burst
//! of them) and never more than [`MAX_TRACKED_CLIENTS`]: past that a
//! client that owes nothing is refused for a second.
//!
//! Everything is O(log n) per request: debts are kept as the point of a
//! shared *virtual clock* (the debt paid back so far by each client that
//! owed throughout) at which they reach zero, in a `BTreeMap` ordered by it.
//! Amounts are in micro-requests (integers), so the arithmetic is exact.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// Most client addresses tracked at once.
///
/// Default is 65 536 (a few MiB at most). When the table is full, buckets
/// that have refilled (and so carry no state) are dropped first; if that is
/// not enough the least recently seen half goes. A dropped client starts
/// again with a full bucket. The same bound holds the clients that owe
/// something of the upstream budget ([`FairShares`]; they
/// are about twice its burst at most): past it a client that owes nothing
/// gets the `upstream_budget` refusal with a retry after 1 s.
pub const MAX_TRACKED_CLIENTS: usize = 65_536;

/// Micro-requests per request.
const UNIT: u128 = 1_000_000;

/// Debts of the clients of one budget, and the arithmetic of their shares.
#[derive(Debug)]
pub struct FairShares<K> {
    /// Micro-requests paid back per second, in all.
    rate: u128,
    /// Most micro-requests owed in all.
    burst: u128,
    /// The virtual clock: micro-requests paid back so far by each client
    /// that owed throughout.
    clock: u128,
    /// When `clock` was brought up to date.
    at: Instant,
    /// Each owing client's point of `clock` at which it owes nothing, and
    /// its tie-breaker in `order`. `None`: callers with no address.
    due: HashMap<Option<K>, (u128, u64)>,
    /// The same, ordered by that point.
    order: BTreeMap<(u128, u64), Option<K>>,
    /// Next tie-breaker of `order`.
    seq: u64,
    /// Sum of the points in `due` (so the total debt is O(1)).
    due_sum: u128,
}

/// Why a request was refused, and how long until it may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The client owes its whole share.
    Share(Duration),
    /// The budget is spent (or all of it but the share kept free for a
    /// client that owes nothing).
    Budget(Duration),
}

impl Refused {
    /// How long until the request would be taken (at the current split).
    pub fn wait(self) -> Duration {
        match self {
            Refused::Share(d) | Refused::Budget(d) => d,
        }
    }
}

impl<K: Hash + Eq + Clone> FairShares<K> {
    /// `rate` requests per second (at least 1) with a burst of `burst` (at
    /// least 1).
    pub fn new(rate: u32, burst: u32, now: Instant) -> FairShares<K> {
        FairShares {
            rate: u128::from(rate.max(1)) * UNIT,
            burst: u128::from(burst.max(1)) * UNIT,
            clock: 0,
            at: now,
            due: HashMap::new(),
            order: BTreeMap::new(),
            seq: 0,
            due_sum: 0,
        }
    }

    /// Pays debts back for the time passed since the last call: `rate`
    /// per second split equally among the owing clients, a client leaving
    /// the split when it owes nothing.
    fn advance(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_nanos();
        self.at = self.at.max(now);
        let mut paid = self.rate.saturating_mul(dt) / 1_000_000_000;
        while paid > 0 {
            let Some((&(first, _), _)) = self.order.first_key_value() else {
                return;
            };
            let n = self.order.len() as u128;
            let to_first = (first - self.clock).saturating_mul(n);
            if to_first > paid {
                self.clock += paid / n;
                return;
            }
            paid -= to_first;
            self.clock = first;
            while let Some(entry) = self.order.first_entry() {
                if entry.key().0 > self.clock {
                    break;
                }
                let ((due, _), key) = entry.remove_entry();
                self.due.remove(&key);
                self.due_sum -= due;
            }
        }
    }

    /// What `key` owes (micro-requests).
    fn debt_of(&self, key: &Option<K>) -> u128 {
        self.due.get(key).map_or(0, |&(due, _)| due - self.clock)
    }

    /// What all clients owe together (micro-requests).
    fn total_debt(&self) -> u128 {
        self.due_sum - self.clock * self.order.len() as u128
    }

    /// What one of `n` owing clients may owe: its share of the burst,
    /// `burst / (n + 1)`, and never less than one request.
    fn share(&self, n: usize) -> u128 {
        (self.burst / (n as u128 + 1)).max(UNIT)
    }

    /// The debts at `now`, in micro-requests, of the owing clients.
    #[cfg(test)]
    pub fn debts(&mut self, now: Instant) -> Vec<(Option<K>, u128)> {
        self.advance(now);
        self.due
            .iter()
            .map(|(k, &(due, _))| (k.clone(), due - self.clock))
            .collect()
    }

    /// Takes one request for `key` at `now`, or says why not and how long
    /// to wait; a refusal changes nothing. `None` stands for the callers
    /// with no address of their own, together: the whole burst is their
    /// share.
    pub fn take(&mut self, key: Option<&K>, now: Instant) -> Result<(), Refused> {
        self.advance(now);
        let key = key.cloned();
        let total = self.total_debt();
        let mine = self.debt_of(&key);
        if mine == 0 && self.due.len() >= MAX_TRACKED_CLIENTS {
            // The table is full of clients that owe: a newcomer waits for
            // one to pay back (a second is more than enough at any budget
            // that could fill it).
            return Err(Refused::Budget(Duration::from_secs(1)));
        }
        let n = self.order.len() + usize::from(mine == 0);
        let (share, ceiling) = if key.is_none() {
            // Bounded by the whole budget only.
            (u128::MAX, self.burst)
        } else if mine == 0 {
            (self.share(n), self.burst)
        } else {
            // A client that owes something leaves one share free for a
            // client that owes nothing.
            (
                self.share(n),
                self.burst.saturating_sub(self.burst / (n as u128 + 1)),
            )
        };
        if mine.saturating_add(UNIT) > share {
            // Its debt falls at rate / n.
            let over = (mine + UNIT - share) * n as u128;
            return Err(Refused::Share(self.paid_in(over)));
        }
        if total + UNIT > ceiling {
            return Err(Refused::Budget(self.paid_in(total + UNIT - ceiling)));
        }
        let due = match self.due.remove(&key) {
            Some((due, seq)) => {
                self.order.remove(&(due, seq));
                self.due_sum -= due;
                due
            }
            None => self.clock,
        } + UNIT;
        self.seq += 1;
        self.order.insert((due, self.seq), key.clone());
        self.due.insert(key, (due, self.seq));
        self.due_sum += due;
        Ok(())
    }

    /// How long until `amount` micro-requests are paid back in all.
    fn paid_in(&self, amount: u128) -> Duration {
        let nanos = amount.saturating_mul(1_000_000_000).div_ceil(self.rate);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_lone_client_gets_half_the_burst_then_the_whole_rate() {
        let t0 = Instant::now();
        let mut f: FairShares<u8> = FairShares::new(15, 45, t0);
        let taken = (0..100)
            .take_while(|_| f.take(Some(&1), t0).is_ok())
            .count();
        assert_eq!(taken, 22, "burst / 2 (45 / 2, whole requests)");
        assert_eq!(
            f.take(Some(&1), t0),
            Err(Refused::Share(Duration::from_nanos(33_333_334)))
        );
        // (it owes 22 of a share of 22.5: half a request, paid back alone
        // at 15/s)
        // A second client owes nothing: it finds the share kept free.
        assert_eq!(f.take(Some(&2), t0), Ok(()));
        // One second later 15 are paid back: one by each while both owe
        // (the split is two ways), then 13 by the first alone.
        let t1 = t0 + Duration::from_secs(1);
        let mut debts = f.debts(t1);
        debts.sort();
        assert_eq!(debts, vec![(Some(1), 8_000_000)]);
        // Addressless callers together are one client whose share is the
        // whole burst (the budget, first come first served).
        let mut anon: FairShares<u8> = FairShares::new(1, 3, t0);
        assert!((0..3).all(|_| anon.take(None, t0).is_ok()));
        assert_eq!(
            anon.take(None, t0),
            Err(Refused::Budget(Duration::from_secs(1)))
        );
    }

    #[test]
    fn a_flood_of_new_clients_keeps_few_owing() {
        let t0 = Instant::now();
        let mut f: FairShares<u32> = FairShares::new(15, 45, t0);
        let mut most = 0;
        let mut served = 0;
        for i in 0..60_000u32 {
            served += u32::from(f.take(Some(&i), t0 + MS * i).is_ok());
            most = most.max(f.due.len());
        }
        // About e times the burst (116 here): each newcomer waits for the
        // total to fall by one, while older debts are paid back evenly.
        assert!(most <= 3 * 45, "{most} owe");
        // 45 + 15/s over 60 s, less what rounding leaves.
        assert!((940..=945).contains(&served), "{served}");
    }

    /// One step of a generated schedule: wait `ms`, then client `who`
    /// (`None`: addressless) asks for one request.
    fn step() -> impl Strategy<Value = (u64, Option<u8>)> {
        (
            0u64..150,
            prop::option::weighted(0.9, prop_oneof![0u8..6, any::<u8>()]),
        )
    }

    proptest! {
        /// Any schedule of requests from any clients: a refused request
        /// changes no debt (retrying burns nothing), and the requests taken
        /// in every span of `t` seconds are at most `burst + rate * t` (the
        /// oracle counts them over every pair of taken requests).
        #[test]
        fn the_budget_holds_and_a_refusal_spends_nothing(
            rate in 1u32..40,
            burst_secs in 1u32..4,
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            let burst = rate * burst_secs;
            let t0 = Instant::now();
            let mut f: FairShares<u8> = FairShares::new(rate, burst, t0);
            let mut now = t0;
            let mut taken: Vec<Instant> = Vec::new();
            for (ms, who) in steps {
                now += MS * ms as u32;
                let mut before = f.debts(now);
                before.sort();
                let taken_now = f.take(who.as_ref(), now);
                prop_assert!(f.due.len() as u32 <= 3 * burst, "{} owe", f.due.len());
                match taken_now {
                    Ok(()) => taken.push(now),
                    Err(_) => {
                        let mut after = f.debts(now);
                        after.sort();
                        prop_assert_eq!(before, after);
                    }
                }
            }
            for i in 0..taken.len() {
                for j in i..taken.len() {
                    let span = taken[j].duration_since(taken[i]).as_secs_f64();
                    let most = f64::from(burst) + f64::from(rate) * span + 1e-6;
                    prop_assert!(((j - i + 1) as f64) <= most, "{} in {span} s", j - i + 1);
                }
            }
        }

        /// `k` clients flood (ask every 5 ms) while one more asks for less
        /// than its fair share, `rate / (k + 1)`: the light one is never
        /// refused, and the flooders split the rest evenly (none gets more
        /// than an even split of the whole budget over the run).
        #[test]
        fn flooders_share_evenly_and_a_light_client_is_always_served(
            k in 1u8..7,
            rate in 5u32..40,
            start_ms in 0u64..3000,
            slack in 1.05f64..3.0,
        ) {
            let burst = 3 * rate;
            prop_assume!(burst / (u32::from(k) + 2) >= 2);
            let t0 = Instant::now();
            let mut f: FairShares<u8> = FairShares::new(rate, burst, t0);
            let light = 100u8;
            let gap = Duration::from_secs_f64(slack * f64::from(k + 1) / f64::from(rate));
            let run = Duration::from_secs(20);
            let mut got = vec![0u32; usize::from(k)];
            let mut light_got = 0u32;
            let mut next_light = t0 + MS * start_ms as u32;
            let mut now = t0;
            while now < t0 + run {
                for (c, n) in got.iter_mut().enumerate() {
                    if f.take(Some(&(c as u8)), now).is_ok() {
                        *n += 1;
                    }
                }
                if now >= next_light {
                    prop_assert_eq!(f.take(Some(&light), now), Ok(()), "light refused at {:?}", now - t0);
                    light_got += 1;
                    next_light += gap;
                }
                now += MS * 5;
            }
            let whole = f64::from(burst) + f64::from(rate) * run.as_secs_f64();
            let even = whole / f64::from(k);
            for n in &got {
                prop_assert!(f64::from(*n) <= even + 1.0, "{got:?} of {whole}");
            }
            let (lo, hi) = (got.iter().min().unwrap(), got.iter().max().unwrap());
            prop_assert!(hi - lo <= burst / 2 + 1, "{got:?}");
            prop_assert!(light_got > 0);
        }
    }
}
