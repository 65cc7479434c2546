//! A pool of worker threads for blocking jobs (upstream calls), with a
//! bounded queue and completions handed back to the event loop that
//! submitted the job (its lane) through that loop's `mio::Waker`. Every
//! event loop shares the one pool, so `--workers` and `--queue` bound the
//! whole server however connections spread over the loops.
//!
//! Threads start on demand: a job that finds no idle worker starts one, up
//! to the pool's maximum (`--workers`); a worker idle for
//! [`WORKER_IDLE_EXIT`] exits, down to the pool's minimum. An idle server
//! so holds no worker threads (nor their stacks and allocator arenas).
//!
//! A job that panics yields the pool's [`PanicAnswer`] (the handler's
//! [`Fallback::Panicked`](super::conn::Fallback::Panicked), a `500`) for its request; the worker lives on.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use mio::Waker;

use super::conn::{Job, Step};
use crate::http::Response;
use crate::x::restart::{self, RunState};

/// What a job that panicked is answered (made on the worker that caught
/// the panic): the handler's
/// [`Fallback::Panicked`](super::conn::Fallback::Panicked).
pub type PanicAnswer = Arc<dyn Fn() -> Response + Send + Sync>;

/// How long a worker waits for a job before it exits (while more than the
/// pool's minimum are alive).
///
/// Default is 60 s. A burst of tool calls keeps its threads for a minute
/// after the last call; the next call after that starts a thread again
/// (tens of microseconds, invisible next to an upstream round trip).
pub const WORKER_IDLE_EXIT: Duration = Duration::from_secs(60);

/// Worker threads kept alive however long they idle.
///
/// Default is 0: an idle server runs the event loop thread only.
pub const MIN_WORKERS: usize = 0;

/// Stack size of a worker thread.
///
/// Default is 256 KiB: enough for a tool call (rendering and JSON are
/// iterative, nesting is capped by the parsers); past it the process aborts
/// with a stack overflow, so it is sized with a wide margin.
pub const WORKER_STACK_BYTES: usize = 256 * 1024;

/// Identifies the connection a job belongs to: slab index and generation,
/// so a completion for a connection that closed meanwhile is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// Slab index of the connection.
    pub index: usize,
    /// Generation of the slab slot when the job was submitted.
    pub generation: u32,
}

struct Task {
    ticket: Ticket,
    lane: usize,
    job: Job,
    /// The call's state between its runs (a restartable pool's jobs).
    state: Option<Box<RunState>>,
}

/// A job whose run waits for upstream answers, with its call's state.
pub type ParkedJob = (Ticket, Job, Box<RunState>);

/// One event loop's side of the pool: its finished jobs, the jobs that
/// wait for upstream answers, and the waker that tells it they are there.
struct Lane {
    completions: Mutex<Vec<(Ticket, Response)>>,
    parked: Mutex<Vec<ParkedJob>>,
    waker: Arc<Waker>,
}

/// Sizing of a [`Pool`].
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// Most worker threads alive at once (`--workers`; at least 1).
    pub max_workers: usize,
    /// Threads kept alive while idle (at most `max_workers`).
    pub min_workers: usize,
    /// Jobs that may wait for a worker once `max_workers` are busy
    /// (`--queue`); past it a job is given back.
    pub queue: usize,
    /// How long a worker above the minimum idles before it exits.
    pub idle_exit: Duration,
}

/// Counts and the queue, all under one lock so that the decision to start
/// a thread, to queue or to refuse is exact.
struct State {
    queue: VecDeque<Task>,
    /// Workers alive (started and not yet exited).
    live: usize,
    /// Workers that will take a queued job without finishing another first:
    /// idle ones and ones started but not yet running.
    waiting: usize,
    /// Set by [`Pool::shutdown`]: workers exit once their job returns.
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is queued or the pool closes.
    ready: Condvar,
    options: PoolOptions,
    lanes: Vec<Lane>,
    panicked: PanicAnswer,
    /// Jobs run as restartable runs (`crate::x::restart`): the event loops
    /// make the upstream requests.
    restartable: std::sync::atomic::AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pool, as one event loop (lane) sees it: jobs it submits come back
/// to it. [`Pool::lane`] gives the other loops their handles.
pub struct Pool {
    shared: Arc<Shared>,
    lane: usize,
}

impl Pool {
    /// A pool of at most `workers` threads, started on demand, sharing a
    /// queue of `queue` slots; idle threads exit after [`WORKER_IDLE_EXIT`].
    /// One lane per waker (event loop); the handle returned is lane 0's.
    /// A job that panics is answered `panicked()`.
    ///
    /// # Errors
    /// When one of the [`MIN_WORKERS`] threads cannot be spawned.
    pub fn start(
        workers: usize,
        queue: usize,
        wakers: Vec<Arc<Waker>>,
        panicked: PanicAnswer,
    ) -> std::io::Result<Pool> {
        Pool::with_options(
            PoolOptions {
                max_workers: workers,
                min_workers: MIN_WORKERS,
                queue,
                idle_exit: WORKER_IDLE_EXIT,
            },
            wakers,
            panicked,
        )
    }

    /// A pool with explicit sizing and one lane per waker; starts
    /// `min_workers` threads now.
    ///
    /// # Errors
    /// When one of the `min_workers` threads cannot be spawned.
    pub fn with_options(
        options: PoolOptions,
        wakers: Vec<Arc<Waker>>,
        panicked: PanicAnswer,
    ) -> std::io::Result<Pool> {
        let max_workers = options.max_workers.max(1);
        let options = PoolOptions {
            max_workers,
            min_workers: options.min_workers.min(max_workers),
            ..options
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                live: 0,
                waiting: 0,
                closed: false,
            }),
            ready: Condvar::new(),
            options,
            lanes: wakers
                .into_iter()
                .map(|waker| Lane {
                    completions: Mutex::new(Vec::new()),
                    parked: Mutex::new(Vec::new()),
                    waker,
                })
                .collect(),
            panicked,
            restartable: std::sync::atomic::AtomicBool::new(false),
        });
        let pool = Pool { shared, lane: 0 };
        let mut state = pool.shared.lock();
        for _ in 0..options.min_workers {
            spawn_worker(&pool.shared, &mut state)?;
        }
        drop(state);
        Ok(pool)
    }

    /// Lane `lane`'s handle on the same pool (for another event loop).
    ///
    /// # Panics
    /// When the pool has no such lane.
    pub fn lane(&self, lane: usize) -> Pool {
        assert!(lane < self.shared.lanes.len(), "no lane {lane}");
        Pool {
            shared: Arc::clone(&self.shared),
            lane,
        }
    }

    /// Queues a job, starting a thread when no worker is free and fewer
    /// than the maximum run. Gives the job back when the queue is full (or
    /// the pool is shutting down).
    pub fn submit(&self, ticket: Ticket, job: Job) -> Result<(), Job> {
        let shared = &self.shared;
        let mut state = shared.lock();
        if state.closed {
            return Err(job);
        }
        // No worker is free for this job: start one if allowed. A failed
        // start leaves the job to the running workers (or refuses it when
        // there are none).
        if state.queue.len() >= state.waiting
            && state.live < shared.options.max_workers
            && spawn_worker(shared, &mut state).is_err()
            && state.live == 0
        {
            return Err(job);
        }
        // Saturating: `--queue` may be as large as usize::MAX (it wrapped,
        // and every job was refused as if the queue were full).
        if state.queue.len() >= state.waiting.saturating_add(shared.options.queue) {
            return Err(job);
        }
        state.queue.push_back(Task {
            ticket,
            lane: self.lane,
            job,
            state: None,
        });
        drop(state);
        shared.ready.notify_one();
        Ok(())
    }

    /// Runs every job as a restartable run (`crate::x::restart`): a job
    /// whose run waits for upstream answers comes back through
    /// [`Pool::take_parked`] instead of completing.
    pub fn set_restartable(&self) {
        self.shared
            .restartable
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Queues a parked job again, with its call's state (its answers are
    /// in, or its deadline passed). It was admitted once: the queue's cap
    /// does not apply. Gives it back when the pool is shutting down.
    pub fn resume(&self, ticket: Ticket, job: Job, run: Box<RunState>) -> Result<(), Job> {
        let shared = &self.shared;
        let mut state = shared.lock();
        if state.closed {
            return Err(job);
        }
        if state.queue.len() >= state.waiting
            && state.live < shared.options.max_workers
            && spawn_worker(shared, &mut state).is_err()
            && state.live == 0
        {
            return Err(job);
        }
        state.queue.push_back(Task {
            ticket,
            lane: self.lane,
            job,
            state: Some(run),
        });
        drop(state);
        shared.ready.notify_one();
        Ok(())
    }

    /// Takes this lane's jobs that wait for upstream answers.
    pub fn take_parked(&self) -> Vec<ParkedJob> {
        match self.shared.lanes[self.lane].parked.lock() {
            Ok(mut p) => std::mem::take(&mut *p),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Takes every finished job of this lane.
    pub fn take_completions(&self) -> Vec<(Ticket, Response)> {
        match self.shared.lanes[self.lane].completions.lock() {
            Ok(mut done) => std::mem::take(&mut *done),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Worker threads alive now.
    pub fn threads(&self) -> usize {
        self.shared.lock().live
    }

    /// Stops the pool once every event loop has ended (each connection
    /// answered, or closed when `--shutdown-grace` ran out): queued jobs
    /// are dropped, since nobody is left to answer, and running ones are
    /// not waited for, so shutdown takes no longer than the grace. A
    /// running job's thread ends when its job returns, or with the process.
    pub fn shutdown(self) {
        let queued = {
            let mut state = self.shared.lock();
            state.closed = true;
            std::mem::take(&mut state.queue)
        };
        self.shared.ready.notify_all();
        drop(queued);
    }
}

/// Starts one worker, counted as live and waiting. The thread is detached
/// (its handle dropped at once), so the C library releases its stack as it
/// ends. A handle kept until the next start held a finished worker's stack
/// for as long as no other worker started: after a burst of 30 large calls
/// whose workers retired (`crate::heap`), 30 stacks (0.7 MiB resident)
/// stayed (tests/memory_budget.rs).
fn spawn_worker(shared: &Arc<Shared>, state: &mut State) -> std::io::Result<()> {
    let worker = Arc::clone(shared);
    thread::Builder::new()
        .name("xmd-worker".into())
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || work(&worker))?;
    state.live += 1;
    state.waiting += 1;
    Ok(())
}

fn work(shared: &Shared) {
    let mut state = shared.lock();
    let mut idle_since = Instant::now();
    loop {
        if let Some(mut task) = state.queue.pop_front() {
            state.waiting -= 1;
            drop(state);
            let restartable = shared
                .restartable
                .load(std::sync::atomic::Ordering::Relaxed);
            if restartable {
                restart::enter(task.state.take().unwrap_or_default());
            }
            let stepped = panic::catch_unwind(AssertUnwindSafe(|| task.job.step()));
            let run = if restartable { restart::leave() } else { None };
            let (response, parked) = match stepped {
                Ok(Step::Done(response)) => (Some(response), None),
                Ok(Step::Park(job)) => match run {
                    Some(run) => (None, Some((task.ticket, job, run))),
                    // Not restartable: nothing can run it again.
                    None => (Some((shared.panicked)()), None),
                },
                Err(_) => (Some((shared.panicked)()), None),
            };
            // Waiting again before the completion is visible, so a job the
            // event loop submits in answer finds this worker free.
            state = shared.lock();
            state.waiting += 1;
            let lane = &shared.lanes[task.lane];
            if let Some(response) = response {
                match lane.completions.lock() {
                    Ok(mut done) => done.push((task.ticket, response)),
                    Err(p) => p.into_inner().push((task.ticket, response)),
                }
            }
            if let Some(parked) = parked {
                match lane.parked.lock() {
                    Ok(mut p) => p.push(parked),
                    Err(p) => p.into_inner().push(parked),
                }
            }
            let _ = lane.waker.wake();
            // A job that held much memory ends its thread, which gives the
            // allocator's pages back (crate::heap); another starts on demand.
            // (Not while jobs wait: they may count on this thread.)
            if crate::heap::take_retire()
                && state.queue.is_empty()
                && state.live > shared.options.min_workers
            {
                state.waiting -= 1;
                state.live -= 1;
                drop(state);
                crate::heap::sweep_later();
                return;
            }
            idle_since = Instant::now();
            continue;
        }
        let idle_for = idle_since.elapsed();
        let may_exit = state.live > shared.options.min_workers;
        if state.closed || (may_exit && idle_for >= shared.options.idle_exit) {
            state.waiting -= 1;
            state.live -= 1;
            return;
        }
        state = if may_exit {
            shared
                .ready
                .wait_timeout(state, shared.options.idle_exit - idle_for)
                .map(|(s, _)| s)
                .unwrap_or_else(|p| p.into_inner().0)
        } else {
            shared.ready.wait(state).unwrap_or_else(|p| p.into_inner())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::conn::Fallback;
    use std::sync::atomic::{AtomicUsize, Ordering};

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
            Pool::with_options(options, vec![waker], Arc::new(|| Fallback::Panicked.bare()))
                .unwrap(),
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
}
