//! Threads that run one upstream fetch beside a tool call, so a call that
//! needs two answers (the profile and its first timeline page) waits one
//! round trip, not two.
//!
//! The threads are kept and reused: starting a thread per call cost about
//! 50 µs of CPU (15 system calls), a tenth of a whole profile call. A
//! thread starts when a job finds none free, up to [`MAX_SIDE_THREADS`], and
//! exits after [`SIDE_IDLE_EXIT`] without work, so an idle server runs none.
//! When every thread is busy the caller runs the job itself, after its own
//! fetch: slower, never stuck.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// Most side threads at once. Default 64, one per default worker thread
/// (`--workers`); past it a call fetches its two answers one after the
/// other (two round trips), which the agent sees only as latency.
pub const MAX_SIDE_THREADS: usize = 64;

/// How long a side thread waits for work before it exits. Default 60 s.
pub const SIDE_IDLE_EXIT: Duration = Duration::from_secs(60);

/// Stack of one side thread. Default 256 KiB: a fetch and a JSON parse.
pub const SIDE_STACK_BYTES: usize = 256 * 1024;

type Job = Box<dyn FnOnce() + Send>;

struct State {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    max: usize,
    idle_exit: Duration,
}

/// The pool. Cheap to clone (shared).
#[derive(Clone)]
pub struct SidePool {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SidePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = lock(&self.shared.state);
        f.debug_struct("SidePool")
            .field("threads", &s.threads)
            .field("idle", &s.idle)
            .finish()
    }
}

impl Default for SidePool {
    fn default() -> SidePool {
        SidePool::new(MAX_SIDE_THREADS, SIDE_IDLE_EXIT)
    }
}

impl SidePool {
    /// A pool of at most `max` threads that exit after `idle_exit` idle.
    pub fn new(max: usize, idle_exit: Duration) -> SidePool {
        SidePool {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    threads: 0,
                    idle: 0,
                }),
                work: Condvar::new(),
                max,
                idle_exit,
            }),
        }
    }

    /// Runs `job` on a side thread and gives back a receiver for its
    /// result; gives the job back when every thread is busy. A job that
    /// panics closes the receiver without a value.
    pub fn try_run<T, F>(&self, job: F) -> Result<Receiver<T>, F>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let mut s = lock(&self.shared.state);
        let free = s.idle > s.queue.len();
        if !free && s.threads >= self.shared.max {
            return Err(job);
        }
        let (tx, rx) = mpsc::sync_channel(1);
        s.queue.push_back(Box::new(move || {
            if let Ok(v) = panic::catch_unwind(AssertUnwindSafe(job)) {
                let _ = tx.send(v);
            }
        }));
        if free {
            self.shared.work.notify_one();
        } else {
            let shared = Arc::clone(&self.shared);
            let spawned = thread::Builder::new()
                .name("xmd-side".into())
                .stack_size(SIDE_STACK_BYTES)
                .spawn(move || serve(&shared));
            match spawned {
                Ok(_) => s.threads += 1,
                Err(_) => {
                    // No thread: take the job back out and run it here.
                    if let Some(job) = s.queue.pop_back() {
                        drop(s);
                        job();
                    }
                }
            }
        }
        Ok(rx)
    }

    /// Threads alive now.
    pub fn threads(&self) -> usize {
        lock(&self.shared.state).threads
    }
}

fn serve(shared: &Shared) {
    let mut s = lock(&shared.state);
    loop {
        if let Some(job) = s.queue.pop_front() {
            drop(s);
            job();
            s = lock(&shared.state);
            continue;
        }
        s.idle += 1;
        let (next, timeout) = shared
            .work
            .wait_timeout(s, shared.idle_exit)
            .unwrap_or_else(|p| p.into_inner());
        s = next;
        s.idle -= 1;
        if timeout.timed_out() && s.queue.is_empty() {
            s.threads -= 1;
            return;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Tests: [`SidePool::try_run`], retried while a thread is still finishing
/// its previous job (it answers before it counts itself free).
#[cfg(test)]
pub(crate) fn run_when_free<T, F>(pool: &SidePool, job: F) -> Receiver<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let mut job = job;
    for _ in 0..5000 {
        match pool.try_run(job) {
            Ok(rx) => return rx,
            Err(back) => {
                job = back;
                thread::sleep(Duration::from_millis(1));
            }
        }
    }
    panic!("no side thread became free in 5 s");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::time::Instant;

    #[test]
    fn runs_jobs_and_reuses_a_free_thread() {
        let pool = SidePool::new(4, Duration::from_secs(5));
        assert_eq!(pool.threads(), 0);
        let rx = pool.try_run(|| 6 * 7).ok().unwrap();
        assert_eq!(rx.recv().unwrap(), 42);
        // Wait until the thread is idle, then a second job reuses it.
        let deadline = Instant::now() + Duration::from_secs(5);
        while lock(&pool.shared.state).idle == 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        let rx = run_when_free(&pool, || "again");
        assert_eq!(rx.recv().unwrap(), "again");
        assert_eq!(pool.threads(), 1);
    }

    #[test]
    fn a_full_pool_gives_the_job_back_and_a_panic_closes_the_receiver() {
        let pool = SidePool::new(2, Duration::from_secs(5));
        let gate = Arc::new(Barrier::new(3));
        let busy: Vec<_> = (0..2)
            .map(|i| {
                let g = Arc::clone(&gate);
                pool.try_run(move || {
                    g.wait();
                    i
                })
                .ok()
                .unwrap()
            })
            .collect();
        assert_eq!(pool.threads(), 2);
        let back = pool.try_run(|| 99).expect_err("pool is full");
        assert_eq!(back(), 99);
        gate.wait();
        let got: Vec<i32> = busy.into_iter().map(|r| r.recv().unwrap()).collect();
        assert_eq!(got, [0, 1]);
        let rx = run_when_free(&pool, || -> i32 { panic!("side job panics") });
        assert!(rx.recv().is_err());
        // The thread survived its job's panic and still serves.
        assert_eq!(run_when_free(&pool, || 5).recv().unwrap(), 5);
        assert_eq!(pool.threads(), 2);
    }

    #[test]
    fn idle_threads_exit() {
        let pool = SidePool::new(2, Duration::from_millis(50));
        assert_eq!(pool.try_run(|| 1).ok().unwrap().recv().unwrap(), 1);
        let deadline = Instant::now() + Duration::from_secs(5);
        while pool.threads() > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(pool.threads(), 0);
        // And the pool starts a new one on demand.
        assert_eq!(run_when_free(&pool, || 2).recv().unwrap(), 2);
    }
}
