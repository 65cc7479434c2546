//! The cache's tests, and the fetcher's over it.

use super::*;
use crate::x::fetcher::Fetcher;
use crate::x::side::SidePool;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting {
    calls: AtomicUsize,
    status: u16,
    body_len: usize,
    delay: Duration,
}

impl Upstream for Counting {
    fn get(&self, _: &str) -> Answer {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        Ok(UpstreamResponse {
            status: self.status,
            retry_after: None,
            content_type: None,
            body: json_body(self.body_len).into(),
        })
    }
}

/// A JSON object of exactly `len` bytes (at least 2).
fn json_body(len: usize) -> Vec<u8> {
    let mut b = vec![b' '; len.max(2)];
    b[0] = b'{';
    b[len.max(2) - 1] = b'}';
    b
}

/// What FxTwitter or the syndication endpoint send in an outage with
/// status 200: never stored, so the next read asks again.
#[test]
fn a_200_that_is_not_a_json_object_is_not_stored() {
    struct Fixed(&'static [u8], AtomicUsize);
    impl Upstream for Fixed {
        fn get(&self, _: &str) -> Answer {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok(UpstreamResponse {
                status: 200,
                retry_after: None,
                content_type: None,
                body: self.0.to_vec().into(),
            })
        }
    }
    let bodies: [&[u8]; 8] = [
        b"<!doctype html><html>down</html>",
        b"{\"code\":200,\"status\":{\"id\":",
        b"",
        b"[1]",
        b"\"text\"",
        b"{} trailing",
        b"{\"code\":500,\"message\":\"API_FAIL\"}",
        b"{\"code\":503}",
    ];
    for body in bodies {
        let cache = Cache::new(1 << 20, ttl);
        let up = Fixed(body, AtomicUsize::new(0));
        let (_, _, fresh) = cache.lookup(&up, "/2/status/1");
        assert_eq!(fresh, Duration::ZERO, "{body:?}");
        let (_, outcome) = cache.get(&up, "/2/status/1");
        assert!(matches!(outcome, Outcome::Miss), "{body:?}");
        assert_eq!(up.1.load(Ordering::SeqCst), 2, "{body:?}");
        assert_eq!(cache.bytes(), 0, "{body:?}");
    }
    let cache = Cache::new(1 << 20, ttl);
    let up = Fixed(b" {\"code\": 200, \"ok\": [1]}\n", AtomicUsize::new(0));
    assert_eq!(cache.lookup(&up, "/2/status/1").2, TTL_POST);
    let (_, outcome) = cache.get(&up, "/2/status/1");
    assert!(matches!(outcome, Outcome::Hit));
    assert_eq!(up.1.load(Ordering::SeqCst), 1);
}

fn counting(status: u16, body_len: usize, delay_ms: u64) -> Counting {
    Counting {
        calls: AtomicUsize::new(0),
        status,
        body_len,
        delay: Duration::from_millis(delay_ms),
    }
}

/// The lifetimes these tests store with: the tools' own table
/// (`registry::ttl_for`) for the paths used here, [`TTL_OTHER`] for the
/// rest. The table itself is tested beside it.
fn ttl(path_and_query: &str) -> Duration {
    let path = path_and_query.split('?').next().unwrap_or("");
    if path.starts_with("/2/status/") || path.starts_with("/2/thread/") {
        TTL_POST
    } else if path.starts_with("/2/profile/") {
        TTL_PROFILE
    } else if path == "/2/search" {
        TTL_SEARCH
    } else {
        TTL_OTHER
    }
}

#[test]
fn hit_miss_error_and_bypass() {
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 10, 0);
    assert_eq!(c.get(&up, "/a").1, Outcome::Miss);
    assert_eq!(c.get(&up, "/a").1, Outcome::Hit);
    assert_eq!(up.calls.load(Ordering::SeqCst), 1);
    assert_eq!(c.bytes(), 2 + 10 + ENTRY_OVERHEAD_BYTES);
    let bad = counting(404, 10, 0);
    assert_eq!(c.get(&bad, "/b").1, Outcome::Miss);
    assert_eq!(c.get(&bad, "/b").1, Outcome::Miss);
    assert_eq!(bad.calls.load(Ordering::SeqCst), 2);
    let off = Cache::new(0, ttl);
    assert_eq!(off.get(&up, "/a").1, Outcome::Bypass);
    let f = Fetcher::new(&off, &up);
    assert_eq!(f.outcome(), "bypass");
}

#[test]
fn freshness_is_the_shortest_life_used() {
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 10, 0);
    let (_, o, life) = c.lookup(&up, "/2/status/1");
    assert_eq!((o, life), (Outcome::Miss, TTL_POST));
    std::thread::sleep(Duration::from_millis(20));
    let (_, o, life) = c.lookup(&up, "/2/status/1");
    assert_eq!(o, Outcome::Hit);
    assert!(
        life < TTL_POST && life > TTL_POST - Duration::from_secs(2),
        "{life:?}"
    );
    let f = Fetcher::new(&c, &up);
    assert_eq!(f.fresh_for(), Duration::ZERO, "no request yet");
    let _ = f.get("/2/profile/a");
    assert_eq!(f.fresh_for(), TTL_PROFILE);
    let _ = f.get("/2/search?q=a");
    assert_eq!(f.fresh_for(), TTL_SEARCH, "the shortest wins");
    let bad = counting(404, 10, 0);
    let f = Fetcher::new(&c, &bad);
    let _ = f.get("/2/status/404");
    assert_eq!(
        f.fresh_for(),
        Duration::ZERO,
        "an unstored answer is not fresh"
    );
    let off = Cache::new(0, ttl);
    assert_eq!(off.lookup(&up, "/2/thread/1").2, TTL_POST);
}

/// The reader is called once on every answer (new, stored, shared,
/// bypassed); its word alone decides storing and freshness.
#[test]
fn the_reader_reads_every_answer_once_and_its_word_decides_storing() {
    let reads = AtomicUsize::new(0);
    let read = |store: bool| {
        let reads = &reads;
        move |r: &UpstreamResponse| {
            assert_eq!(r.status, 200);
            reads.fetch_add(1, Ordering::SeqCst);
            store
        }
    };
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 10, 0);
    // Refused by the reader: not stored, not fresh, asked again.
    let (_, o, life) = c.lookup_read(&up, "/2/status/1", &mut read(false));
    assert_eq!((o, life, c.bytes()), (Outcome::Miss, Duration::ZERO, 0));
    let (_, o, _) = c.lookup_read(&up, "/2/status/1", &mut read(true));
    assert_eq!(o, Outcome::Miss);
    assert_eq!(c.bytes(), 11 + 10 + ENTRY_OVERHEAD_BYTES);
    // A hit is read (for the caller's value), its word not needed.
    let (_, o, life) = c.lookup_read(&up, "/2/status/1", &mut read(false));
    assert_eq!(o, Outcome::Hit);
    assert!(life > Duration::ZERO && life <= TTL_POST, "{life:?}");
    assert_eq!(
        (
            up.calls.load(Ordering::SeqCst),
            reads.load(Ordering::SeqCst)
        ),
        (2, 3)
    );
    // Bypassed: read once, fresh on its word.
    let off = Cache::new(0, ttl);
    assert_eq!(
        off.lookup_read(&up, "/2/status/1", &mut read(true)).2,
        TTL_POST
    );
    assert_eq!(
        off.lookup_read(&up, "/2/status/1", &mut read(false)).2,
        Duration::ZERO
    );
    assert_eq!(reads.load(Ordering::SeqCst), 5);
    // Coalesced: every caller reads the shared answer once; only the
    // one that asked stores it.
    let slow = counting(200, 10, 200);
    let c = Cache::new(1 << 20, ttl);
    let lives: Vec<(Outcome, Duration)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let (_, o, life) = c.lookup_read(&slow, "/2/profile/a", &mut read(true));
                    (o, life)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(slow.calls.load(Ordering::SeqCst), 1);
    assert_eq!(reads.load(Ordering::SeqCst), 9);
    // (A thread that starts late finds the stored answer: a hit whose
    // life has begun to run down.)
    let near = |l: Duration| l <= TTL_PROFILE && l > TTL_PROFILE - Duration::from_secs(5);
    assert!(lives.iter().all(|(_, l)| near(*l)), "{lives:?}");
    assert_eq!(lives.iter().filter(|(o, _)| *o == Outcome::Miss).count(), 1);
    assert_eq!(c.bytes(), 12 + 10 + ENTRY_OVERHEAD_BYTES);
}

/// Through a fetcher: the caller's word stores the answer and sets the
/// call's freshness; a question dropped unanswered stores nothing and
/// counts as not fresh; waiters wait for the word.
#[test]
fn a_fetcher_stores_on_the_callers_word_only() {
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 10, 0);
    let f = Fetcher::new(&c, &up);
    let (answer, keep) = f.get_keep("/2/profile/a");
    assert_eq!(answer.unwrap().status, 200);
    drop(keep);
    assert_eq!(
        (c.bytes(), f.fresh_for(), f.outcome()),
        (0, Duration::ZERO, "miss")
    );
    let f = Fetcher::new(&c, &up);
    let (_, keep) = f.get_keep("/2/profile/a");
    // A second caller for the same path waits for the word, then shares.
    std::thread::scope(|s| {
        let waiter = s.spawn(|| c.get(&up, "/2/profile/a"));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        keep.answer(true);
        assert_eq!(waiter.join().unwrap().1, Outcome::Hit);
    });
    assert_eq!(f.fresh_for(), TTL_PROFILE);
    assert_eq!(c.bytes(), 12 + 10 + ENTRY_OVERHEAD_BYTES);
    assert_eq!(up.calls.load(Ordering::SeqCst), 2);
}

/// Every answer a call reads is counted in the working budget at
/// `work_bytes` of its body until the call's fetcher drops; a call
/// that holds some and finds no room is refused at once, with the
/// retryable error the agent sees.
#[test]
fn a_fetcher_counts_what_it_reads_until_it_drops() {
    use crate::x::memory::{work_bytes, WorkBudget};
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 1000, 0);
    let work = Arc::new(WorkBudget::new(work_bytes(1000) * 3));
    {
        let f = Fetcher::new(&c, &up).metered(&work);
        // A miss: counted at the answer's size.
        assert_eq!(f.get("/2/profile/a").unwrap().body.len(), 1000);
        assert_eq!(work.used(), work_bytes(1000));
        // A hit: its size at once.
        let (answer, keep) = f.get_keep("/2/profile/a");
        keep.answer(true);
        assert_eq!(answer.unwrap().body.len(), 1000);
        assert_eq!(work.used(), 2 * work_bytes(1000));
        // Another call holds the rest; this one, holding some, is
        // refused at once.
        let other = Fetcher::new(&c, &up).metered(&work);
        let _ = other.get("/2/profile/a");
        let t = std::time::Instant::now();
        let refused = f.get("/2/profile/a").unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(
            crate::x::error::XError::from_fetch(&refused).to_string(),
            "xmd is at its memory budget for tool calls (--max-working-bytes) right now; nothing was read. (HTTP 503, code memory_budget, retry after 1s)"
        );
        drop(other);
        assert_eq!(work.used(), 2 * work_bytes(1000));
    }
    assert_eq!(work.used(), 0, "given back when the call ends");
}

#[test]
fn lru_eviction_within_budget() {
    // Budget for exactly 3 entries, each within the 1/8 share.
    let c = Cache::new(8 * (2 + 100 + ENTRY_OVERHEAD_BYTES), ttl);
    let tiny = counting(200, 100, 0);
    let c3 = Cache::new(3 * (2 + 100 + ENTRY_OVERHEAD_BYTES), ttl);
    assert_eq!(c3.get(&tiny, "/a").1, Outcome::Miss);
    assert_eq!(tiny.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        c3.bytes(),
        0,
        "an answer over 1/8 of the budget is not stored"
    );
    for k in ["/a", "/b", "/c"] {
        let _ = c.get(&tiny, k);
    }
    let _ = c.get(&tiny, "/a"); // /a becomes most recent
    for k in ["/d", "/e", "/f", "/g", "/h", "/i"] {
        let _ = c.get(&tiny, k);
    }
    // 8 fit; adding the 9th evicts the least recently used: /b.
    let before = tiny.calls.load(Ordering::SeqCst);
    assert_eq!(c.get(&tiny, "/a").1, Outcome::Hit);
    assert_eq!(c.get(&tiny, "/c").1, Outcome::Hit);
    assert_eq!(c.get(&tiny, "/b").1, Outcome::Miss);
    assert_eq!(tiny.calls.load(Ordering::SeqCst), before + 1);
    assert_eq!(c.bytes(), 8 * (2 + 100 + ENTRY_OVERHEAD_BYTES));
}

#[test]
fn concurrent_misses_coalesce() {
    let c = Cache::new(1 << 20, ttl);
    let up = counting(200, 10, 200);
    let outcomes: Vec<Outcome> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8).map(|_| s.spawn(|| c.get(&up, "/same").1)).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(up.calls.load(Ordering::SeqCst), 1);
    assert_eq!(outcomes.iter().filter(|o| **o == Outcome::Miss).count(), 1);
    let err = counting(503, 0, 200);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| c.get(&err, "/err").0)).collect();
        for h in hs {
            assert_eq!(h.join().unwrap().unwrap().status, 503);
        }
    });
    assert_eq!(
        err.calls.load(Ordering::SeqCst),
        1,
        "errors in flight are shared too"
    );
}

#[test]
fn beside_counts_its_fetch_for_the_call_on_every_path() {
    let up: Arc<dyn Upstream> = Arc::new(counting(200, 10, 0));
    let cache = Arc::new(Cache::new(1 << 20, ttl));
    let pool = SidePool::new(1, Duration::from_secs(5));
    let status = |u: &dyn Upstream, path: &str| u.get(path).ok().map(|r| r.status);
    // On a side thread: its miss is this call's miss.
    let f = Fetcher::with_side(&cache, &up, &pool);
    let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/a"));
    assert_eq!(b.join(), Some(Some(200)));
    assert_eq!(f.outcome(), "miss");
    assert!(f.fresh_for() > Duration::ZERO);
    // Without a pool the job runs at join, in the caller: now a hit.
    let f = Fetcher::new(&cache, up.as_ref());
    let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/a"));
    assert_eq!(b.join(), Some(Some(200)));
    assert_eq!(f.outcome(), "hit");
    // The one side thread busy: the job runs in the caller, still counted.
    let gate = Arc::new(std::sync::Barrier::new(2));
    let g = gate.clone();
    // (The thread may still be finishing the first job.)
    let busy = crate::x::side::run_when_free(&pool, move || g.wait());
    let f = Fetcher::with_side(&cache, &up, &pool);
    let b = f.beside(move |u: &dyn Upstream| status(u, "/2/profile/b"));
    assert_eq!(b.join(), Some(Some(200)));
    assert_eq!(f.outcome(), "miss");
    gate.wait();
    busy.recv().unwrap();
    // A job that panics on a side thread joins as None. (A fresh pool:
    // the first one's thread may not be idle again yet, and a job it
    // hands back runs, and panics, in the caller.)
    let fresh = SidePool::new(1, Duration::from_secs(5));
    let f = Fetcher::with_side(&cache, &up, &fresh);
    let b = f.beside(|_: &dyn Upstream| -> u8 { panic!("side fetch panics") });
    assert_eq!(b.join(), None);
}
