//! One event loop: accepts connections on its handle of the listening
//! socket, drives each of its [`Conn`] state machines on readiness, hands
//! blocking jobs to its lane of the shared [`Pool`], writes completions
//! back, sweeps deadlines once a second, and drains on shutdown.
//!
//! This file holds the loop's state, its poll loop and its shutdown;
//! opening and closing slots is in `accept.rs`, driving connections in
//! `drive.rs`, idle connections and eviction in `evict.rs`, and the rest
//! of each turn (completions, upstream, revoked bodies, deadline sweep) in
//! `turn.rs`.

mod accept;
mod drive;
mod evict;
mod turn;

use std::io;
use std::net::IpAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Poll, Token};

use super::admission::{MemoryBudget, PerAddress};
use super::conn::Job;
use super::conn::{Conn, Handler, ReadUntil, READ_CHUNK_BYTES};
use super::idle::{IdleList, LoopIdle};
use super::workers::{Pool, Ticket};
use super::{log, slab, ServerOptions, ShutdownHandle, SignalAction};
use crate::http::date::DateCache;
use crate::x::loopio::driver::{Driver, UPSTREAM_TOKENS};

pub(super) const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
pub(super) const SIGNALS: Token = Token(2);
const FIRST_CONN: usize = 3;

/// How often deadlines are checked.
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

struct Slot {
    conn: Conn,
    stream: TcpStream,
    generation: u32,
    writable: bool,
    /// What the connection counts against.
    admitted: Admitted,
    /// The connection's idle mark ([`Conn::idle_since`]) when it was listed
    /// in the loop's idle list; `None` while it is not listed.
    idle_mark: Option<Instant>,
}

/// How an open connection is counted.
#[derive(Clone, Copy)]
enum Admitted {
    /// Served: counted in the server-wide total and, unless it comes from a
    /// trusted proxy (`None`), against its address.
    Served(Option<IpAddr>),
    /// Refused at accept and lingering: counted in `refused_open` only.
    Refused,
}

/// Runs one event loop until its shutdown completes; returns how it ended
/// and its pool handle (the server stops the pool once every loop ended).
pub(super) fn run_loop(
    mut poll: Poll,
    mut lp: Loop,
    mut signals: Option<signal_hook_mio::v1_0::Signals>,
    stop: &ShutdownHandle,
) -> (io::Result<()>, Pool) {
    let result = lp.run(&mut poll, &mut signals, stop);
    lp.log.flush();
    (result, lp.pool)
}

/// One event loop's state: its listener handle, its connections, its lane
/// of the worker pool.
pub(super) struct Loop {
    listener: Option<TcpListener>,
    slots: slab::Slab<Slot>,
    free: Vec<usize>,
    /// Connections this loop serves.
    open: usize,
    /// Connections every loop serves, against `--max-connections`.
    open_total: Arc<AtomicUsize>,
    /// Connections per client address, against `--max-connections-per-ip`.
    per_address: Arc<PerAddress>,
    /// Buffered bytes of every connection, against `--max-buffered-bytes`.
    budget: Arc<MemoryBudget>,
    /// Refused connections this loop keeps while they linger.
    refused_open: usize,
    /// Connections (index, generation) that yielded, for their next turn.
    yielded: Vec<(usize, u32)>,
    /// This loop's idle connections, longest idle first.
    idle: IdleList,
    /// What every loop publishes about its idle connections (this one's at
    /// `me`).
    loops: Arc<[LoopIdle]>,
    me: usize,
    /// The clock origin of [`LoopIdle`]'s timestamps.
    epoch: Instant,
    pool: Pool,
    handler: Arc<dyn Handler>,
    options: ServerOptions,
    date: DateCache,
    scratch: Vec<u8>,
    draining_since: Option<Instant>,
    log: log::AccessLog,
    /// The upstream side of this loop, when the loops make the upstream
    /// requests (`--upstream-io loop`).
    upstream: Option<Driver<(Ticket, Job)>>,
    /// The upstream side's gauges as last added to the metrics.
    reported: [i64; 3],
    /// The budget's count of bodies taken back when this loop last looked
    /// for its connections among them.
    seen_revocations: u64,
}

impl Loop {
    /// A loop serving what it accepts on `listener`, submitting jobs to
    /// `pool` (its lane), counting its connections into `open_total`.
    pub(super) fn new(
        listener: TcpListener,
        pool: Pool,
        handler: Arc<dyn Handler>,
        options: ServerOptions,
        shared: &Shared,
        me: usize,
    ) -> Loop {
        let log = log::AccessLog::new(options.log_format);
        let upstream = options
            .upstream
            .as_ref()
            .map(|t| Driver::new(Arc::clone(t), me));
        Loop {
            upstream,
            reported: [0; 3],
            listener: Some(listener),
            slots: slab::Slab::default(),
            free: Vec::new(),
            open: 0,
            open_total: Arc::clone(&shared.open_total),
            per_address: Arc::clone(&shared.per_address),
            budget: Arc::clone(&shared.budget),
            refused_open: 0,
            yielded: Vec::new(),
            idle: IdleList::new(),
            loops: Arc::clone(&shared.idle),
            me,
            epoch: shared.epoch,
            pool,
            handler,
            options,
            date: DateCache::default(),
            scratch: vec![0u8; READ_CHUNK_BYTES],
            draining_since: None,
            log,
            seen_revocations: 0,
        }
    }

    fn run(
        &mut self,
        poll: &mut Poll,
        signals: &mut Option<signal_hook_mio::v1_0::Signals>,
        stop: &ShutdownHandle,
    ) -> io::Result<()> {
        let lp = self;
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = Instant::now() + SWEEP_INTERVAL;
        loop {
            let now = Instant::now();
            // With connections waiting for their next turn, only look for
            // new events; do not sleep.
            let resumed = lp
                .upstream
                .as_ref()
                .is_some_and(|up| up.has_resumed() || up.has_yielded());
            let timeout = if lp.yielded.is_empty() && !resumed {
                let next = lp
                    .upstream
                    .as_ref()
                    .and_then(Driver::next_timer)
                    .map_or(next_sweep, |t| t.min(next_sweep));
                next.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            if let Err(e) = poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => lp.accept(poll),
                    Token(t) if t >= UPSTREAM_TOKENS => {
                        if let Some(up) = lp.upstream.as_mut() {
                            up.ready(poll.registry(), t, Instant::now());
                        }
                    }
                    WAKER => {}
                    SIGNALS => {
                        let pending: Vec<i32> = signals
                            .as_mut()
                            .map_or_else(Vec::new, |s| s.pending().collect());
                        for signal in pending {
                            match SignalAction::of(signal) {
                                SignalAction::Ignore => {}
                                SignalAction::Drain => stop.shutdown(),
                                SignalAction::Exit => {
                                    lp.log.flush();
                                    eprintln!("xmd: SIGQUIT, exiting at once");
                                    std::process::exit(super::SIGQUIT_EXIT_STATUS);
                                }
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
            lp.upstream_turn(poll);
            lp.serve_yielded(poll);
            lp.close_wanted_idle(poll);
            lp.refuse_revoked(poll);
            if stop.requested() && lp.draining_since.is_none() {
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

/// What every event loop shares besides the worker pool.
pub(super) struct Shared {
    /// Connections every loop serves.
    pub(super) open_total: Arc<AtomicUsize>,
    /// Connections per client address.
    pub(super) per_address: Arc<PerAddress>,
    /// The memory budget.
    pub(super) budget: Arc<MemoryBudget>,
    /// What each loop publishes about its idle connections, in loop order.
    pub(super) idle: Arc<[LoopIdle]>,
    /// The clock origin of those timestamps.
    pub(super) epoch: Instant,
}
