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
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use mio::Waker;

use super::conn::Job;
use crate::http::Response;
use crate::x::restart::RunState;

mod worker;

use worker::spawn_worker;

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
        self.enqueue(ticket, job, None)
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
        self.enqueue(ticket, job, Some(run))
    }

    /// Queues `job`, starting a thread when no worker is free and fewer
    /// than the maximum run. A new job (`run` is `None`) is refused past
    /// the queue's cap; a resumed one was admitted once and is not.
    fn enqueue(&self, ticket: Ticket, job: Job, run: Option<Box<RunState>>) -> Result<(), Job> {
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
        if run.is_none() && state.queue.len() >= state.waiting.saturating_add(shared.options.queue)
        {
            return Err(job);
        }
        state.queue.push_back(Task {
            ticket,
            lane: self.lane,
            job,
            state: run,
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

#[cfg(test)]
mod tests;
