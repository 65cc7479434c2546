//! A worker thread of the pool: its start (detached, counted as live
//! and waiting) and its loop, which takes queued jobs, runs them (as
//! restartable runs when the pool says so), hands completions and parked
//! jobs to their lane, and exits when idle or retired.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use super::{Shared, State, WORKER_STACK_BYTES};
use crate::server::conn::Step;
use crate::x::restart;

/// Starts one worker, counted as live and waiting. The thread is detached
/// (its handle dropped at once), so the C library releases its stack as it
/// ends. A handle kept until the next start held a finished worker's stack
/// for as long as no other worker started: after a burst of 30 large calls
/// whose workers retired (`crate::heap`), 30 stacks (0.7 MiB resident)
/// stayed (tests/memory_budget.rs).
pub(super) fn spawn_worker(shared: &Arc<Shared>, state: &mut State) -> std::io::Result<()> {
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
