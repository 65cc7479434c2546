//! The hand-rolled `mio` event loops: each accepts connections on the
//! shared listening socket, drives each of its [`conn::Conn`] state
//! machines on readiness, hands blocking jobs to the shared
//! [`workers::Pool`], writes completions back, sweeps deadlines once a
//! second, and shuts down gracefully on SIGTERM/SIGINT.
//!
//! This module knows HTTP framing only through `crate::http` and never
//! names MCP.

pub mod conn;
pub mod log;
pub mod slab;
pub mod work;
pub mod workers;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::config::Limits;
use crate::http::date::DateCache;
use crate::http::{Body, Response};
use conn::{Conn, Ctx, Handler, ReadUntil};
use workers::{Pool, Ticket};

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const SIGNALS: Token = Token(2);
const FIRST_CONN: usize = 3;

/// How often deadlines are checked.
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Event-loop settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// HTTP limits.
    pub limits: Limits,
    /// Event-loop threads (at least 1; see
    /// [`crate::config::DEFAULT_EVENT_LOOPS`]).
    pub event_loops: usize,
    /// Most worker threads (started on demand; see [`workers::WORKER_IDLE_EXIT`]).
    pub workers: usize,
    /// Worker queue slots.
    pub queue: usize,
    /// Most open connections.
    pub max_connections: usize,
    /// Graceful shutdown deadline.
    pub shutdown_grace: Duration,
    /// Stop gracefully on SIGTERM and SIGINT.
    pub handle_signals: bool,
    /// Access-log format.
    pub log_format: log::LogFormat,
}

/// Stops a running server from another thread.
#[derive(Clone)]
pub struct ShutdownHandle {
    flag: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
}

impl ShutdownHandle {
    /// Starts graceful shutdown (of every event loop).
    pub fn shutdown(&self) {
        self.flag.store(true, Ordering::SeqCst);
        for waker in &self.wakers {
            let _ = waker.wake();
        }
    }
}

struct Slot {
    conn: Conn,
    stream: TcpStream,
    generation: u32,
    writable: bool,
}

/// One event loop's poll, its handle on the listening socket, and the
/// waker other threads use to interrupt its poll.
struct LoopIo {
    poll: Poll,
    listener: TcpListener,
    waker: Arc<Waker>,
}

/// A bound, not yet running server.
pub struct Server {
    /// One per event loop; the first also watches the signals.
    loops: Vec<LoopIo>,
    shutdown: Arc<AtomicBool>,
    options: ServerOptions,
    signals: Option<signal_hook_mio::v1_0::Signals>,
}

impl Server {
    /// Binds `addr` and prepares one poll per event loop, each watching
    /// the same listening socket (whichever loop accepts a connection
    /// serves it).
    ///
    /// # Errors
    /// When the address cannot be bound or a poll cannot be created.
    pub fn bind(addr: SocketAddr, options: ServerOptions) -> io::Result<Server> {
        let bound = std::net::TcpListener::bind(addr)?;
        bound.set_nonblocking(true)?;
        let mut listeners = Vec::with_capacity(options.event_loops.max(1));
        for _ in 1..options.event_loops.max(1) {
            listeners.push(bound.try_clone()?);
        }
        listeners.insert(0, bound);
        let mut loops = Vec::with_capacity(listeners.len());
        for std_listener in listeners {
            let poll = Poll::new()?;
            let mut listener = TcpListener::from_std(std_listener);
            poll.registry()
                .register(&mut listener, LISTENER, Interest::READABLE)?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            loops.push(LoopIo {
                poll,
                listener,
                waker,
            });
        }
        // Registered here, before anyone learns the address, so a SIGTERM
        // that races start-up still shuts down gracefully.
        let signals = if options.handle_signals {
            let mut s = signal_hook_mio::v1_0::Signals::new([
                signal_hook::consts::SIGTERM,
                signal_hook::consts::SIGINT,
            ])?;
            loops[0]
                .poll
                .registry()
                .register(&mut s, SIGNALS, Interest::READABLE)?;
            Some(s)
        } else {
            None
        };
        Ok(Server {
            loops,
            shutdown: Arc::new(AtomicBool::new(false)),
            options,
            signals,
        })
    }

    /// The bound address (with the real port when bound to port 0).
    ///
    /// # Errors
    /// When the socket reports none.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.loops[0].listener.local_addr()
    }

    /// A handle that stops the server gracefully.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            flag: Arc::clone(&self.shutdown),
            wakers: self.loops.iter().map(|l| Arc::clone(&l.waker)).collect(),
        }
    }

    /// Runs every event loop (the first on this thread) until shutdown
    /// completes, then stops the workers.
    ///
    /// # Errors
    /// When polling fails, or a loop thread or the worker pool cannot start.
    pub fn run(self, handler: Arc<dyn Handler>) -> io::Result<()> {
        let stop = self.shutdown_handle();
        let Server {
            loops,
            shutdown,
            options,
            signals,
        } = self;
        let pool = Pool::start(options.workers, options.queue, stop.wakers.clone())?;
        let open_total = Arc::new(AtomicUsize::new(0));
        let new_loop = |listener: TcpListener, pool: Pool| Loop {
            listener: Some(listener),
            slots: slab::Slab::default(),
            free: Vec::new(),
            open: 0,
            open_total: Arc::clone(&open_total),
            pool,
            handler: Arc::clone(&handler),
            options: options.clone(),
            date: DateCache::default(),
            scratch: vec![0u8; conn::READ_CHUNK_BYTES],
            draining_since: None,
            log: log::AccessLog::new(options.log_format),
        };
        let mut loops = loops.into_iter();
        let first = loops.next().expect("at least one event loop");
        let mut threads = Vec::new();
        let mut started = Ok(());
        for (i, io) in loops.enumerate() {
            let lp = new_loop(io.listener, pool.lane(i + 1));
            let (flag, handle) = (Arc::clone(&shutdown), stop.clone());
            let spawned = thread::Builder::new()
                .name("xmd-loop".into())
                .spawn(move || run_loop(io.poll, lp, &flag, None, &handle));
            match spawned {
                Ok(t) => threads.push(t),
                Err(e) => {
                    started = Err(e);
                    stop.shutdown();
                    break;
                }
            }
        }
        let lp = new_loop(first.listener, pool);
        let (result, pool) = run_loop(first.poll, lp, &shutdown, signals, &stop);
        // One loop failing stops the others.
        stop.shutdown();
        let mut result = started.and(result);
        for t in threads {
            match t.join() {
                Ok((r, _)) => result = result.and(r),
                Err(_) => result = result.and(Err(io::Error::other("an event loop panicked"))),
            }
        }
        pool.shutdown();
        result
    }
}

/// Runs one event loop until its shutdown completes; returns how it ended
/// and its pool handle (the server stops the pool once every loop ended).
fn run_loop(
    mut poll: Poll,
    mut lp: Loop,
    shutdown: &AtomicBool,
    mut signals: Option<signal_hook_mio::v1_0::Signals>,
    stop: &ShutdownHandle,
) -> (io::Result<()>, Pool) {
    let result = lp.run(&mut poll, shutdown, &mut signals, stop);
    lp.log.flush();
    (result, lp.pool)
}

impl Loop {
    fn run(
        &mut self,
        poll: &mut Poll,
        shutdown: &AtomicBool,
        signals: &mut Option<signal_hook_mio::v1_0::Signals>,
        stop: &ShutdownHandle,
    ) -> io::Result<()> {
        let lp = self;
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = Instant::now() + SWEEP_INTERVAL;
        loop {
            let now = Instant::now();
            let timeout = next_sweep.saturating_duration_since(now);
            if let Err(e) = poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => lp.accept(poll),
                    WAKER => {}
                    SIGNALS => {
                        if let Some(s) = signals.as_mut() {
                            if s.pending().next().is_some() {
                                stop.shutdown();
                            }
                        }
                    }
                    Token(t) => {
                        // A short read drains the socket unless the event
                        // also reports a hang-up or error: a pending FIN
                        // raises no further edge, so read on until EOF.
                        let read = event.is_readable().then_some(
                            if event.is_read_closed() || event.is_error() {
                                ReadUntil::Blocked
                            } else {
                                ReadUntil::Short
                            },
                        );
                        lp.on_ready(poll, t - FIRST_CONN, read)
                    }
                }
            }
            lp.deliver_completions(poll);
            if shutdown.load(Ordering::SeqCst) && lp.draining_since.is_none() {
                lp.begin_shutdown(poll);
            }
            let now = Instant::now();
            if now >= next_sweep {
                lp.sweep(poll, now);
                next_sweep = now + SWEEP_INTERVAL;
            }
            lp.log.flush();
            if let Some(since) = lp.draining_since {
                if lp.open == 0 || now.duration_since(since) >= lp.options.shutdown_grace {
                    return Ok(());
                }
            }
        }
    }
}

struct Loop {
    listener: Option<TcpListener>,
    slots: slab::Slab<Slot>,
    free: Vec<usize>,
    /// Connections this loop serves.
    open: usize,
    /// Connections every loop serves, against `--max-connections`.
    open_total: Arc<AtomicUsize>,
    pool: Pool,
    handler: Arc<dyn Handler>,
    options: ServerOptions,
    date: DateCache,
    scratch: Vec<u8>,
    draining_since: Option<Instant>,
    log: log::AccessLog,
}

impl Loop {
    fn accept(&mut self, poll: &Poll) {
        loop {
            let Some(listener) = &self.listener else {
                return;
            };
            match listener.accept() {
                Ok((mut stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    if self.open_total.fetch_add(1, Ordering::Relaxed)
                        >= self.options.max_connections
                    {
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        refuse_overloaded(&mut stream, self.date.now());
                        crate::metrics::METRICS.rejected("too_many_connections");
                        continue;
                    }
                    let index = self.free.pop().unwrap_or_else(|| self.slots.push_vacant());
                    if poll
                        .registry()
                        .register(&mut stream, Token(index + FIRST_CONN), Interest::READABLE)
                        .is_err()
                    {
                        self.free.push(index);
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        continue;
                    }
                    let generation = GENERATION.next();
                    self.slots[index] = Some(Slot {
                        conn: Conn::new(peer, Instant::now()),
                        stream,
                        generation,
                        writable: false,
                    });
                    self.open += 1;
                    crate::metrics::METRICS.connections(1);
                    // Data may already be waiting (edge-triggered readiness).
                    self.on_ready(poll, index, Some(ReadUntil::Short));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    /// Runs `f` on slot `index` with a [`Ctx`] for `now`, lending it the
    /// handler, the pool and the read buffer; `None` when the slot is empty.
    fn with_slot<R>(
        &mut self,
        index: usize,
        now: Instant,
        f: impl FnOnce(&mut Slot, &Ctx, &dyn Handler, &Pool, &mut [u8]) -> R,
    ) -> Option<R> {
        let draining = self.draining_since.is_some();
        let Loop {
            slots,
            options,
            date,
            handler,
            pool,
            scratch,
            log,
            ..
        } = self;
        let slot = slots.get_mut(index)?.as_mut()?;
        let ctx = Ctx {
            log,
            limits: &options.limits,
            date: date.now(),
            now,
            draining,
        };
        Some(f(slot, &ctx, &**handler, pool, scratch))
    }

    fn on_ready(&mut self, poll: &Poll, index: usize, read: Option<ReadUntil>) {
        let failed = self.with_slot(
            index,
            Instant::now(),
            |slot, ctx, handler, pool, scratch| {
                let read_failed = read.is_some_and(|until| {
                    slot.conn
                        .read_from(&mut slot.stream, scratch, ctx, until)
                        .is_err()
                });
                read_failed || drive(slot, handler, pool, index, ctx, scratch)
            },
        );
        if let Some(failed) = failed {
            self.settle(poll, index, failed);
        }
    }

    /// Closes or re-registers a slot after it was driven.
    fn settle(&mut self, poll: &Poll, index: usize, failed: bool) {
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        if failed || slot.conn.close_reason().is_some() {
            self.close(poll, index);
            return;
        }
        let want_write = slot.conn.wants_write();
        if want_write != slot.writable {
            let interest = if want_write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let token = Token(index + FIRST_CONN);
            if poll
                .registry()
                .reregister(&mut slot.stream, token, interest)
                .is_err()
            {
                self.close(poll, index);
                return;
            }
            slot.writable = want_write;
        }
    }

    fn close(&mut self, poll: &Poll, index: usize) {
        if let Some(mut slot) = self.slots[index].take() {
            let _ = poll.registry().deregister(&mut slot.stream);
            self.free.push(index);
            self.open -= 1;
            self.open_total.fetch_sub(1, Ordering::Relaxed);
            crate::metrics::METRICS.connections(-1);
        }
    }

    fn deliver_completions(&mut self, poll: &Poll) {
        for (ticket, response) in self.pool.take_completions() {
            crate::metrics::METRICS.queue(-1);
            let failed = self.with_slot(
                ticket.index,
                Instant::now(),
                |slot, ctx, handler, pool, scratch| {
                    if slot.generation != ticket.generation {
                        return None;
                    }
                    slot.conn.complete(response, ctx);
                    Some(drive(slot, handler, pool, ticket.index, ctx, scratch))
                },
            );
            if let Some(Some(failed)) = failed {
                self.settle(poll, ticket.index, failed);
            }
        }
    }

    fn sweep(&mut self, poll: &Poll, now: Instant) {
        for index in 0..self.slots.len() {
            let expired = self.with_slot(index, now, |slot, ctx, _, _, _| {
                if slot.conn.check_deadlines(ctx) {
                    return None;
                }
                Some(slot.conn.write_to(&mut slot.stream, now).is_err())
            });
            match expired {
                None => {}
                Some(None) => self.close(poll, index),
                Some(Some(failed)) => self.settle(poll, index, failed),
            }
        }
    }

    fn begin_shutdown(&mut self, poll: &Poll) {
        self.draining_since = Some(Instant::now());
        if let Some(mut listener) = self.listener.take() {
            let _ = poll.registry().deregister(&mut listener);
        }
        for index in 0..self.slots.len() {
            let Some(Some(slot)) = self.slots.get_mut(index) else {
                continue;
            };
            if slot.conn.begin_shutdown() {
                self.close(poll, index);
            }
        }
    }
}

/// Parses, dispatches and writes until the connection must wait. Returns
/// true when a socket error means the connection must close.
fn drive(
    slot: &mut Slot,
    handler: &dyn Handler,
    pool: &Pool,
    index: usize,
    ctx: &Ctx,
    scratch: &mut [u8],
) -> bool {
    loop {
        if let Some(job) = slot.conn.process(handler, ctx) {
            let ticket = Ticket {
                index,
                generation: slot.generation,
            };
            if let Err(job) = pool.submit(ticket, job) {
                crate::metrics::METRICS.rejected("queue_full");
                slot.conn.complete(job.busy(), ctx);
                continue;
            }
            crate::metrics::METRICS.queue(1);
        }
        if slot.conn.write_to(&mut slot.stream, ctx.now).is_err() {
            return true;
        }
        // Pipelined requests parked behind pending output: the output has
        // drained, so answer them now.
        if slot.conn.resume_pending() {
            continue;
        }
        // Resume a read that stopped at the buffer cap once space is free.
        if slot.conn.read_pending() && !slot.conn.is_waiting() {
            if slot
                .conn
                .read_from(&mut slot.stream, scratch, ctx, ReadUntil::Blocked)
                .is_err()
            {
                return true;
            }
            continue;
        }
        return false;
    }
}

/// Best-effort 503 to a connection past the limit, then drop it.
fn refuse_overloaded(stream: &mut TcpStream, date: &str) {
    use std::io::Write;
    let response = Response::with_body(
        503,
        "application/json",
        Body::Static(br#"{"error":{"status":503,"message":"too many open connections"}}"#),
    )
    .header("Retry-After", "1");
    let mut out = crate::http::outgoing::Outgoing::new();
    response.encode(false, false, false, date, &mut out);
    let _ = stream.write(&out.to_vec());
}

/// Slot generations: unique per accepted connection.
struct GenerationCounter(std::sync::atomic::AtomicU32);

impl GenerationCounter {
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

static GENERATION: GenerationCounter = GenerationCounter(std::sync::atomic::AtomicU32::new(1));
