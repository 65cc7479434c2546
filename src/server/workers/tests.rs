//! Unit tests of the worker pool: threads started on demand, queueing
//! and refusal, idle exit, panics and shutdown.

use super::*;
use crate::server::conn::Fallback;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Instant;

/// A pool over a fresh poll's waker (the poll is kept alive alongside).
fn pool(max: usize, min: usize, queue: usize, idle_exit: Duration) -> (Pool, mio::Poll) {
    let poll = mio::Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), mio::Token(0)).unwrap());
    let options = PoolOptions {
        max_workers: max,
        min_workers: min,
        queue,
        idle_exit,
    };
    (
        Pool::with_options(options, vec![waker], Arc::new(|| Fallback::Panicked.bare())).unwrap(),
        poll,
    )
}

fn ticket(index: usize) -> Ticket {
    Ticket {
        index,
        generation: 7,
    }
}

/// A gate jobs block on until it opens.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn wait(&self) {
        let (open, cv) = &*self.0;
        let mut g = open.lock().unwrap();
        while !*g {
            g = cv.wait(g).unwrap();
        }
    }
    fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }
}

fn blocking(gate: &Gate, status: u16) -> Job {
    let gate = gate.clone();
    Box::new(move || {
        gate.wait();
        Response::new(status)
    })
}

/// Collects `n` completions (index, status), sorted, within 5 s.
fn collect(pool: &Pool, n: usize) -> Vec<(usize, u16)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < deadline {
        got.extend(
            pool.take_completions()
                .into_iter()
                .map(|(t, r)| (t.index, r.status)),
        );
        thread::sleep(Duration::from_millis(2));
    }
    got.sort_unstable();
    got
}

/// Polls `f` until it is true or 5 s pass.
fn eventually(f: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    f()
}

#[test]
fn starts_no_thread_until_a_job_arrives() {
    let (pool, _poll) = pool(4, 0, 8, Duration::from_secs(60));
    assert_eq!(pool.threads(), 0);
    pool.submit(ticket(1), Box::new(|| Response::new(200)))
        .map_err(|_| "refused")
        .unwrap();
    assert_eq!(pool.threads(), 1);
    assert_eq!(collect(&pool, 1), vec![(1, 200)]);
    assert_eq!(pool.threads(), 1, "an idle worker stays until idle_exit");
    pool.shutdown();
}

/// The largest `--queue` (usize::MAX) queues like any other size: the
/// sum with the waiting workers saturates instead of wrapping.
#[test]
fn the_largest_queue_accepts_jobs() {
    // One idle worker already waiting: `waiting` is 1 when jobs come.
    let (pool, _poll) = pool(2, 1, usize::MAX, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(100));
    let gate = Gate::default();
    for i in 0..3 {
        assert!(
            pool.submit(ticket(i), blocking(&gate, 200)).is_ok(),
            "job {i}"
        );
    }
    gate.open();
    assert_eq!(
        collect(&pool, 3),
        (0..3).map(|i| (i, 200)).collect::<Vec<_>>()
    );
}

#[test]
fn grows_under_blocking_jobs_up_to_the_cap_then_queues_then_refuses() {
    let (pool, _poll) = pool(3, 0, 2, Duration::from_secs(60));
    let gate = Gate::default();
    let mut threads = Vec::new();
    for i in 0..5 {
        assert!(
            pool.submit(ticket(i), blocking(&gate, 200)).is_ok(),
            "job {i}"
        );
        threads.push(pool.threads());
    }
    // One thread per job up to the cap of 3, then the 2 queue slots.
    assert_eq!(threads, vec![1, 2, 3, 3, 3]);
    assert!(
        pool.submit(ticket(5), blocking(&gate, 200)).is_err(),
        "3 busy workers + 2 queued: the sixth job is given back"
    );
    assert_eq!(pool.threads(), 3);
    gate.open();
    assert_eq!(
        collect(&pool, 5),
        (0..5).map(|i| (i, 200)).collect::<Vec<_>>()
    );
    assert_eq!(pool.threads(), 3);
    pool.shutdown();
}

#[test]
fn a_free_worker_takes_the_next_job_without_a_new_thread() {
    let (pool, _poll) = pool(8, 0, 8, Duration::from_secs(60));
    for i in 0..20 {
        assert!(pool
            .submit(ticket(i), Box::new(|| Response::new(200)))
            .is_ok());
        assert_eq!(collect(&pool, 1), vec![(i, 200)]);
    }
    assert_eq!(pool.threads(), 1);
    pool.shutdown();
}

#[test]
fn idle_workers_exit_down_to_the_minimum() {
    let (pool, _poll) = pool(4, 1, 4, Duration::from_millis(50));
    assert_eq!(pool.threads(), 1, "the minimum starts at once");
    let gate = Gate::default();
    for i in 0..4 {
        assert!(pool.submit(ticket(i), blocking(&gate, 200)).is_ok());
    }
    assert_eq!(pool.threads(), 4);
    gate.open();
    assert_eq!(collect(&pool, 4).len(), 4);
    assert!(eventually(|| pool.threads() == 1), "{}", pool.threads());
    thread::sleep(Duration::from_millis(200));
    assert_eq!(pool.threads(), 1, "never below the minimum");
    // The pool still serves, and grows again.
    let gate = Gate::default();
    for i in 10..12 {
        assert!(pool.submit(ticket(i), blocking(&gate, 201)).is_ok());
    }
    assert_eq!(pool.threads(), 2);
    gate.open();
    assert_eq!(collect(&pool, 2), vec![(10, 201), (11, 201)]);
    pool.shutdown();
}

#[test]
fn with_minimum_zero_every_thread_exits_and_a_new_job_starts_one() {
    let (pool, _poll) = pool(2, 0, 4, Duration::from_millis(30));
    assert!(pool
        .submit(ticket(1), Box::new(|| Response::new(200)))
        .is_ok());
    assert_eq!(collect(&pool, 1), vec![(1, 200)]);
    assert!(eventually(|| pool.threads() == 0), "{}", pool.threads());
    assert!(pool
        .submit(ticket(2), Box::new(|| Response::new(204)))
        .is_ok());
    assert_eq!(pool.threads(), 1);
    assert_eq!(collect(&pool, 1), vec![(2, 204)]);
    pool.shutdown();
}

#[test]
fn a_panicking_job_yields_500_and_the_pool_keeps_serving() {
    let (pool, _poll) = pool(1, 0, 4, Duration::from_secs(60));
    assert!(pool
        .submit(ticket(1), Box::new(|| panic!("job failed on purpose")))
        .is_ok());
    assert_eq!(collect(&pool, 1), vec![(1, 500)]);
    let (ticket_back, response) = {
        assert!(pool
            .submit(ticket(2), Box::new(|| Response::new(200)))
            .is_ok());
        let done = collect_raw(&pool);
        (done.0, done.1)
    };
    assert_eq!(ticket_back, ticket(2));
    assert_eq!(response.status, 200);
    assert_eq!(pool.threads(), 1, "the same worker lived on");
    pool.shutdown();
}

fn collect_raw(pool: &Pool) -> (Ticket, Response) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(done) = pool.take_completions().pop() {
            return done;
        }
        assert!(Instant::now() < deadline, "no completion");
        thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn shutdown_drops_queued_jobs_and_does_not_wait_for_running_ones() {
    let (pool, _poll) = pool(2, 0, 16, Duration::from_secs(60));
    let gate = Gate::default();
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..2 {
        assert!(pool.submit(ticket(i), blocking(&gate, 200)).is_ok());
    }
    for i in 2..10 {
        let ran = Arc::clone(&ran);
        let job: Job = Box::new(move || {
            ran.fetch_add(1, Ordering::SeqCst);
            Response::new(200)
        });
        assert!(pool.submit(ticket(i), job).is_ok());
    }
    let shared = Arc::clone(&pool.shared);
    let (_, took) = {
        let t = Instant::now();
        pool.shutdown();
        ((), t.elapsed())
    };
    assert!(took < Duration::from_millis(100), "{took:?}");
    assert_eq!(shared.lock().queue.len(), 0);
    // The two running jobs finish; their workers exit; nothing queued ran.
    gate.open();
    let deadline = Instant::now() + Duration::from_secs(5);
    while shared.lock().live > 0 {
        assert!(Instant::now() < deadline, "workers still alive");
        thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let state = shared.lock();
    assert_eq!((state.live, state.waiting, state.queue.len()), (0, 0, 0));
}
