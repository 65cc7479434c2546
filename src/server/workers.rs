//! A fixed pool of worker threads for blocking jobs (upstream calls), with
//! a bounded queue and completions handed back to the event loop through a
//! `mio::Waker`.
//!
//! A job that panics yields a `500` for its request; the worker lives on.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use mio::Waker;

use super::conn::Job;
use crate::http::{Body, Response};

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
    job: Job,
}

/// Finished jobs waiting for the event loop.
pub type Completions = Arc<Mutex<Vec<(Ticket, Response)>>>;

/// The pool.
pub struct Pool {
    sender: Option<SyncSender<Task>>,
    threads: Vec<JoinHandle<()>>,
    completions: Completions,
}

impl Pool {
    /// Starts `workers` threads sharing a queue of `queue` slots.
    ///
    /// # Errors
    /// When a thread cannot be spawned.
    pub fn start(workers: usize, queue: usize, waker: Arc<Waker>) -> std::io::Result<Pool> {
        let (sender, receiver) = mpsc::sync_channel::<Task>(queue);
        let receiver = Arc::new(Mutex::new(receiver));
        let completions: Completions = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::with_capacity(workers);
        for i in 0..workers.max(1) {
            let receiver = Arc::clone(&receiver);
            let completions = Arc::clone(&completions);
            let waker = Arc::clone(&waker);
            threads.push(
                thread::Builder::new()
                    .name(format!("xmd-worker-{i}"))
                    .stack_size(256 * 1024)
                    .spawn(move || work(&receiver, &completions, &waker))?,
            );
        }
        Ok(Pool {
            sender: Some(sender),
            threads,
            completions,
        })
    }

    /// Queues a job. Gives the job back when the queue is full.
    pub fn submit(&self, ticket: Ticket, job: Job) -> Result<(), Job> {
        let Some(sender) = &self.sender else {
            return Err(job);
        };
        match sender.try_send(Task { ticket, job }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(t)) | Err(TrySendError::Disconnected(t)) => Err(t.job),
        }
    }

    /// Takes every finished job.
    pub fn take_completions(&self) -> Vec<(Ticket, Response)> {
        match self.completions.lock() {
            Ok(mut done) => mem_take(&mut done),
            Err(poisoned) => mem_take(&mut poisoned.into_inner()),
        }
    }

    /// Stops accepting jobs and joins the threads once the queue drains.
    pub fn shutdown(mut self) {
        self.sender = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn mem_take(v: &mut Vec<(Ticket, Response)>) -> Vec<(Ticket, Response)> {
    std::mem::take(v)
}

fn work(receiver: &Mutex<Receiver<Task>>, completions: &Completions, waker: &Waker) {
    loop {
        let task = {
            let guard = match receiver.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            guard.recv()
        };
        let Ok(task) = task else { return };
        let response =
            panic::catch_unwind(AssertUnwindSafe(task.job)).unwrap_or_else(|_| internal_error());
        match completions.lock() {
            Ok(mut done) => done.push((task.ticket, response)),
            Err(p) => p.into_inner().push((task.ticket, response)),
        }
        let _ = waker.wake();
    }
}

/// The response for a job that panicked.
pub fn internal_error() -> Response {
    Response::with_body(
        500,
        "application/json",
        Body::Static(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
        ),
    )
}
