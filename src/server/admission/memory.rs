//! The server-wide budget of buffered bytes (`--max-buffered-bytes`) and
//! every client address's fair share of it (see the parent module).
//!
//! A body's reservation is a [`BodyClaim`] the connection and the budget
//! share: when an address comes to hold a body, the budget takes back at
//! once the newest bodies of every address then over its share (the claim
//! is marked revoked and its bytes return to the budget under the same
//! lock), and asks the event loops to refuse those requests
//! ([`MemoryBudget::set_on_revoke`]). A revoked body's bytes already read
//! stay in its connection until its loop's next turn, which the wake
//! starts at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One client address may hold at most `1 / ADDRESS_SHARE_DIVISOR` of
/// `--max-buffered-bytes` (default 4: a quarter, 16 MiB of the default
/// 64 MiB), and never less than `--max-body-bytes`; less when others hold
/// some too (its fair share, see the module documentation). Past it that
/// address's next body over [`super::UNBUDGETED_BODY_BYTES`] gets the same
/// `503` as a spent budget, and its connections with unsent output parse
/// nothing more until it reads. Trusted proxies (no
/// [`super::connection_key`]) have no share.
pub const ADDRESS_SHARE_DIVISOR: usize = 4;

/// The reservation of one request body, shared by its connection and the
/// budget.
#[derive(Debug, Default)]
pub struct BodyClaim {
    /// Bytes the budget counts for it (changed only under the budget's
    /// lock).
    bytes: AtomicUsize,
    /// The budget took it back: the request is to be refused.
    revoked: AtomicBool,
}

impl BodyClaim {
    /// Whether the budget took this reservation back (the connection then
    /// refuses its request with `503` and gives nothing back).
    pub fn revoked(&self) -> bool {
        self.revoked.load(Ordering::Acquire)
    }
}

/// What one address holds: unsent output and bodies, in bytes, and its
/// bodies' claims, oldest first.
#[derive(Default)]
struct Holder {
    held: usize,
    bodies: Vec<Arc<BodyClaim>>,
}

type OnRevoke = Box<dyn Fn() + Send + Sync>;

/// The server-wide budget of buffered bytes.
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
    /// Most bytes one address may hold (0: no per-address share).
    share: usize,
    /// Least share an address has when others hold some too
    /// (`--max-body-bytes`: every address may send one body).
    floor: usize,
    /// Shares shrink as more addresses hold bytes ([`Self::fair`]).
    fair: bool,
    /// What each address holds.
    by_address: Mutex<HashMap<IpAddr, Holder>>,
    /// Bodies taken back so far; a loop that sees it change looks for
    /// revoked claims among its connections.
    revocations: AtomicU64,
    /// Wakes the event loops after a revocation.
    on_revoke: OnceLock<OnRevoke>,
}

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.limit)
            .field("used", &self.used())
            .field("share", &self.share)
            .finish_non_exhaustive()
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes; 0 means no limit. No per-address share.
    pub fn new(limit: usize) -> MemoryBudget {
        MemoryBudget::with_address_share(limit, 0)
    }

    /// A budget of `limit` bytes of which one address may hold `share`
    /// (0: no per-address share; ignored when `limit` is 0).
    pub fn with_address_share(limit: usize, share: usize) -> MemoryBudget {
        MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
            share: if limit == 0 { 0 } else { share },
            floor: share,
            fair: false,
            by_address: Mutex::new(HashMap::new()),
            revocations: AtomicU64::new(0),
            on_revoke: OnceLock::new(),
        }
    }

    /// [`Self::with_address_share`], and while `k` addresses hold bytes
    /// each may hold only `limit / (k + 1)` of them, never less than
    /// `floor` (the largest body); one that holds some may not take the
    /// last `limit / (k + 1)`; an address coming to hold a body takes the
    /// bodies over their share back from the others at once.
    pub fn fair(limit: usize, share: usize, floor: usize) -> MemoryBudget {
        MemoryBudget {
            floor: floor.min(share),
            fair: true,
            ..MemoryBudget::with_address_share(limit, share)
        }
    }

    /// Sets what wakes the event loops after bodies were taken back (once;
    /// later calls change nothing).
    pub fn set_on_revoke(&self, wake: impl Fn() + Send + Sync + 'static) {
        let _ = self.on_revoke.set(Box::new(wake));
    }

    /// Bodies taken back since start (see [`BodyClaim::revoked`]).
    pub fn revocations(&self) -> u64 {
        self.revocations.load(Ordering::Acquire)
    }

    /// An address's fair share while `holders` addresses hold bytes.
    fn fair_share(&self, holders: usize) -> (usize, usize) {
        let split = self.limit / (holders + 1);
        (split.max(self.floor).min(self.share), split)
    }

    /// What an address holding `mine` may hold in all, and the most the
    /// whole budget may hold when it takes more, while `held` is held.
    fn share_of(&self, held: &HashMap<IpAddr, Holder>, mine: usize) -> (usize, usize) {
        if !self.fair {
            return (self.share, self.limit);
        }
        let (share, split) = self.fair_share(held.len() + usize::from(mine == 0));
        let ceiling = if mine == 0 {
            self.limit
        } else {
            self.limit - split
        };
        (share, ceiling)
    }

    /// The share of `--max-buffered-bytes` `limit` one address may hold
    /// when bodies may be `max_body` bytes long.
    pub fn address_share(limit: usize, max_body: usize) -> usize {
        (limit / ADDRESS_SHARE_DIVISOR).max(max_body).min(limit)
    }

    fn held(&self) -> MutexGuard<'_, HashMap<IpAddr, Holder>> {
        self.by_address.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn held_by(held: &HashMap<IpAddr, Holder>, key: IpAddr) -> usize {
        held.get(&key).map_or(0, |h| h.held)
    }

    /// Takes back, from every address but `newcomer`, its newest bodies
    /// while it holds more than its share with `newcomer` holding some too;
    /// the number taken back.
    fn trim_for(&self, held: &mut HashMap<IpAddr, Holder>, newcomer: IpAddr) -> u64 {
        let (share, _) = self.fair_share(held.len() + 1);
        let mut taken = 0;
        for (_, h) in held.iter_mut().filter(|(k, _)| **k != newcomer) {
            while h.held > share {
                let Some(claim) = h.bodies.pop() else {
                    break;
                };
                let bytes = claim.bytes.swap(0, Ordering::AcqRel);
                claim.revoked.store(true, Ordering::Release);
                h.held -= bytes;
                self.give(bytes);
                taken += 1;
            }
        }
        held.retain(|_, h| h.held > 0);
        taken
    }

    /// Reserves `n` more bytes for a body of a connection of address `key`
    /// (`claim`: its reservation, made on its first bytes): false (nothing
    /// taken) when the budget or the address's share cannot hold them, or
    /// the claim was taken back. An address that holds nothing yet first
    /// takes back the bodies of the others over their share now.
    pub fn try_take_body(
        &self,
        key: Option<IpAddr>,
        claim: &mut Option<Arc<BodyClaim>>,
        n: usize,
    ) -> bool {
        let Some(key) = key.filter(|_| self.share > 0) else {
            return self.try_take(n);
        };
        let mut held = self.held();
        if claim.as_ref().is_some_and(|c| c.revoked()) {
            return false;
        }
        let mine = MemoryBudget::held_by(&held, key);
        let taken = if mine == 0 && self.fair {
            self.trim_for(&mut held, key)
        } else {
            0
        };
        let (share, ceiling) = self.share_of(&held, mine);
        let ok = mine.saturating_add(n) <= share && self.try_take_within(n, ceiling);
        if ok {
            let h = held.entry(key).or_default();
            h.held += n;
            let c = claim.get_or_insert_with(Default::default);
            if c.bytes.fetch_add(n, Ordering::AcqRel) == 0 {
                h.bodies.push(Arc::clone(c));
            }
        }
        drop(held);
        if taken > 0 {
            self.revocations.fetch_add(taken, Ordering::AcqRel);
            if let Some(wake) = self.on_revoke.get() {
                wake();
            }
        }
        ok
    }

    /// Gives back what a body of a connection of address `key` holds
    /// (`reserved` bytes, or what its `claim` still counts: nothing when it
    /// was taken back), and forgets the claim.
    pub fn give_body(
        &self,
        key: Option<IpAddr>,
        claim: &mut Option<Arc<BodyClaim>>,
        reserved: usize,
    ) {
        let Some(key) = key.filter(|_| self.share > 0) else {
            self.give(reserved);
            return;
        };
        let Some(claim) = claim.take() else {
            return;
        };
        let mut held = self.held();
        let bytes = claim.bytes.swap(0, Ordering::AcqRel);
        if bytes == 0 {
            return;
        }
        if let Some(h) = held.get_mut(&key) {
            h.bodies.retain(|c| !Arc::ptr_eq(c, &claim));
            h.held = h.held.saturating_sub(bytes);
            if h.held == 0 {
                held.remove(&key);
            }
        }
        self.give(bytes);
    }

    /// [`Self::force_take`] for a connection of address `key` (unsent
    /// output).
    pub fn force_take_for(&self, key: Option<IpAddr>, n: usize) {
        self.force_take(n);
        if let Some(key) = key.filter(|_| self.share > 0 && n > 0) {
            self.held().entry(key).or_default().held += n;
        }
    }

    /// [`Self::give`] for a connection of address `key` (unsent output).
    pub fn give_for(&self, key: Option<IpAddr>, n: usize) {
        self.give(n);
        if let Some(key) = key.filter(|_| self.share > 0 && n > 0) {
            let mut held = self.held();
            if let Some(h) = held.get_mut(&key) {
                h.held = h.held.saturating_sub(n);
                if h.held == 0 {
                    held.remove(&key);
                }
            }
        }
    }

    /// Whether address `key` holds more than its fair share now (others
    /// came to hold some since it took its bytes): one of its bodies
    /// should be refused, giving its reservation back.
    pub fn over_share(&self, key: Option<IpAddr>) -> bool {
        key.filter(|_| self.share > 0 && self.fair)
            .is_some_and(|key| {
                let held = self.held();
                let mine = MemoryBudget::held_by(&held, key);
                mine > self.share_of(&held, mine).0
            })
    }

    /// Whether the budget, or address `key`'s share of it, is spent.
    pub fn spent_for(&self, key: Option<IpAddr>) -> bool {
        self.spent()
            || key.filter(|_| self.share > 0).is_some_and(|key| {
                let held = self.held();
                let mine = MemoryBudget::held_by(&held, key);
                mine >= self.share_of(&held, mine).0
            })
    }

    /// Takes `n` bytes if they fit; false (nothing taken) otherwise.
    pub fn try_take(&self, n: usize) -> bool {
        self.try_take_within(n, self.limit)
    }

    /// Takes `n` bytes if the budget then holds at most `ceiling`.
    fn try_take_within(&self, n: usize, ceiling: usize) -> bool {
        if self.limit == 0 {
            self.used.fetch_add(n, Ordering::Relaxed);
            return true;
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used.saturating_add(n) <= ceiling).then_some(used + n)
            })
            .is_ok()
    }

    /// Takes `n` bytes whether or not they fit (bytes that already exist,
    /// such as a response).
    pub fn force_take(&self, n: usize) {
        self.used.fetch_add(n, Ordering::AcqRel);
    }

    /// Gives back `n` bytes taken before.
    pub fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }

    /// Bytes in use.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Whether the budget is spent.
    pub fn spent(&self) -> bool {
        self.limit != 0 && self.used() >= self.limit
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
