//! One event loop: accepts connections on its handle of the listening
//! socket, drives each of its [`Conn`] state machines on readiness, hands
//! blocking jobs to its lane of the shared [`Pool`], writes completions
//! back, sweeps deadlines once a second, and drains on shutdown.

use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use super::admission::{budget_key, connection_key, MemoryBudget, PerAddress};
use super::conn::Job;
use super::conn::{Conn, Ctx, Fallback, Handler, ReadUntil, READ_CHUNK_BYTES};
use super::idle::{nanos, IdleList, LoopIdle};
use super::workers::{Pool, Ticket};
use super::{log, slab, ServerOptions, ShutdownHandle, SignalAction};
use crate::http::date::DateCache;
use crate::http::Response;
use crate::x::loopio::driver::{Driver, UPSTREAM_TOKENS};

pub(super) const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
pub(super) const SIGNALS: Token = Token(2);
const FIRST_CONN: usize = 3;

/// Rounds one connection gets per turn of its loop, a round being: parse
/// what is buffered (up to the pending-output cap), write, read more. Past
/// it, with work left, the connection yields: the loop looks at its other
/// connections first and comes back to it at once.
///
/// Default is 2 (up to about 512 KiB of replies, or 2 MiB of requests, per
/// turn). Without it, a client that pipelines without pause, reading its
/// replies as fast as they come, held its loop (and every other connection
/// on it) for seconds. The client itself sees no difference: 1.17 GB of
/// replies in 10 s, as before.
pub const MAX_ROUNDS_PER_TURN: usize = 2;

/// Connections refused at accept (past `--max-connections` or
/// `--max-connections-per-ip`) that one loop keeps open while their answer
/// is written and they linger (see [`super::conn::LINGER_TIMEOUT`]), on top
/// of the connections it serves. Default 256; past it a refused
/// connection gets its answer in one `write` and is closed at once.
pub const MAX_LINGERING_REFUSALS: usize = 256;

/// How often deadlines are checked.
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Idle connections one admission at `--max-connections` looks at before
/// it gives up. Each is read once more before it is closed, and one whose
/// request arrived meanwhile is served instead (it is no longer idle).
/// Default 16; a new connection that finds none of them still idle gets
/// the `503` of a full server. Nothing else is visible to peers.
pub const EVICTION_PROBES: usize = 16;

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
            let resumed = lp.upstream.as_ref().is_some_and(Driver::has_resumed);
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

    fn accept(&mut self, poll: &Poll) {
        loop {
            let Some(listener) = &self.listener else {
                return;
            };
            match listener.accept() {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let key = connection_key(&peer, &self.options.trusted_proxies);
                    // Past the per-address cap first: a connection refused
                    // for its address never costs another its place.
                    let refusal = if key.is_some_and(|k| !self.per_address.admit(k)) {
                        Some((Fallback::TooManyFromAddress, "too_many_connections_per_ip"))
                    } else if self.open_total.fetch_add(1, Ordering::Relaxed)
                        >= self.options.max_connections
                        && !self.make_room(poll)
                    {
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        if let Some(key) = key {
                            self.per_address.release(key);
                        }
                        Some((Fallback::Overloaded, "too_many_connections"))
                    } else {
                        None
                    };
                    if let Some((fallback, reason)) = refusal {
                        let response = self.handler.fallback(fallback);
                        crate::metrics::METRICS.rejected(reason);
                        self.refuse_at_accept(poll, stream, peer, response);
                        continue;
                    }
                    let mut conn =
                        Conn::with_budget(peer, Instant::now(), Arc::clone(&self.budget));
                    conn.set_budget_key(budget_key(&peer, &self.options.trusted_proxies));
                    if !self.add(poll, stream, conn, Admitted::Served(key)) {
                        if let Some(key) = key {
                            self.per_address.release(key);
                        }
                        self.open_total.fetch_sub(1, Ordering::Relaxed);
                        continue;
                    }
                    crate::metrics::METRICS.connections(1);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    /// Registers `conn` in a free slot and drives it once (data may
    /// already be waiting: readiness is edge-triggered); false when it
    /// cannot be registered.
    fn add(&mut self, poll: &Poll, mut stream: TcpStream, conn: Conn, admitted: Admitted) -> bool {
        let index = self.free.pop().unwrap_or_else(|| self.slots.push_vacant());
        if poll
            .registry()
            .register(&mut stream, Token(index + FIRST_CONN), Interest::READABLE)
            .is_err()
        {
            self.free.push(index);
            return false;
        }
        self.slots[index] = Some(Slot {
            conn,
            stream,
            generation: GENERATION.next(),
            writable: false,
            admitted,
            idle_mark: None,
        });
        self.open += 1;
        self.on_ready(poll, index, Some(ReadUntil::Short));
        true
    }

    /// Answers a connection refused at accept: as a lingering connection
    /// while fewer than [`MAX_LINGERING_REFUSALS`] are, otherwise with one
    /// write and an immediate close.
    fn refuse_at_accept(
        &mut self,
        poll: &Poll,
        mut stream: TcpStream,
        peer: std::net::SocketAddr,
        response: Response,
    ) {
        if self.refused_open >= MAX_LINGERING_REFUSALS {
            use std::io::Write;
            let mut out = crate::http::outgoing::Outgoing::new();
            response.encode(false, false, false, self.date.now(), &mut out);
            let _ = stream.write(&out.to_vec());
            return;
        }
        let ctx = Ctx {
            log: &self.log,
            limits: &self.options.limits,
            date: self.date.now(),
            now: Instant::now(),
            draining: self.draining_since.is_some(),
        };
        let conn = Conn::refused(peer, response, Arc::clone(&self.budget), &ctx);
        self.refused_open += 1;
        if !self.add(poll, stream, conn, Admitted::Refused) {
            self.refused_open -= 1;
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
        let driven = self.with_slot(
            index,
            Instant::now(),
            |slot, ctx, handler, pool, scratch| {
                let read_failed = read.is_some_and(|until| {
                    slot.conn
                        .read_from(&mut slot.stream, scratch, ctx, until)
                        .is_err()
                });
                if read_failed {
                    Driven::Failed
                } else {
                    drive(slot, handler, pool, index, ctx, scratch)
                }
            },
        );
        if let Some(driven) = driven {
            self.settle(poll, index, driven);
        }
    }

    /// Gives each connection that yielded its next turn.
    fn serve_yielded(&mut self, poll: &Poll) {
        for (index, generation) in std::mem::take(&mut self.yielded) {
            self.drive_if_current(poll, index, generation, |_, _| {});
        }
    }

    /// Runs `first` on the connection at `index` and drives it, if the slot
    /// still holds the connection of `generation` (it may have closed, and
    /// its slot been reused, since).
    fn drive_if_current(
        &mut self,
        poll: &Poll,
        index: usize,
        generation: u32,
        first: impl FnOnce(&mut Conn, &Ctx),
    ) {
        let driven = self.with_slot(
            index,
            Instant::now(),
            |slot, ctx, handler, pool, scratch| {
                (slot.generation == generation).then(|| {
                    first(&mut slot.conn, ctx);
                    drive(slot, handler, pool, index, ctx, scratch)
                })
            },
        );
        if let Some(Some(driven)) = driven {
            self.settle(poll, index, driven);
        }
    }

    /// Closes or re-registers a slot after it was driven, and queues it
    /// for another turn when it yielded.
    fn settle(&mut self, poll: &Poll, index: usize, driven: Driven) {
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        if slot.conn.wants_linger() {
            // The answer is written: send FIN, then read and discard
            // until the peer closes, so unread input cannot turn the
            // close into a reset that destroys the answer.
            let _ = slot.stream.shutdown(std::net::Shutdown::Write);
            slot.conn.begin_linger(Instant::now());
        }
        if driven == Driven::Failed || slot.conn.close_reason().is_some() {
            self.close(poll, index);
            return;
        }
        if driven == Driven::Yielded {
            crate::metrics::METRICS.yielded();
            self.yielded.push((index, slot.generation));
        }
        self.track_idle(index);
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
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
            if slot.idle_mark.is_some() {
                self.idle.remove(index);
                self.publish_idle();
            }
            let _ = poll.registry().deregister(&mut slot.stream);
            self.free.push(index);
            self.open -= 1;
            match slot.admitted {
                Admitted::Served(key) => {
                    self.open_total.fetch_sub(1, Ordering::Relaxed);
                    if let Some(key) = key {
                        self.per_address.release(key);
                    }
                    crate::metrics::METRICS.connections(-1);
                }
                Admitted::Refused => self.refused_open -= 1,
            }
        }
    }

    /// Lists or unlists slot `index` in the idle list as its connection
    /// became idle (anew) or busy. O(1).
    fn track_idle(&mut self, index: usize) {
        let Some(Some(slot)) = self.slots.get_mut(index) else {
            return;
        };
        let idle = match slot.admitted {
            Admitted::Served(_) => slot.conn.idle_since(),
            Admitted::Refused => None,
        };
        if idle == slot.idle_mark {
            return;
        }
        slot.idle_mark = idle;
        match idle {
            Some(_) => self.idle.push_back(index, Instant::now()),
            None => self.idle.remove(index),
        }
        self.publish_idle();
    }

    fn publish_idle(&self) {
        self.loops[self.me].publish(&self.idle, self.epoch);
    }

    /// At `--max-connections`: makes room for one more connection by
    /// closing the idle connection idle the longest, on this loop or (asked
    /// to, through its waker) on the loop that holds it. False when no loop
    /// has an idle connection: every open connection has a request in
    /// progress, and the new one is refused.
    fn make_room(&mut self, poll: &Poll) -> bool {
        let own = self.idle.front().map(|(_, since)| nanos(self.epoch, since));
        let other = (0..self.loops.len())
            .filter(|&i| i != self.me)
            .map(|i| (self.loops[i].oldest(), i))
            .filter(|&(oldest, _)| oldest != u64::MAX)
            .min();
        if let Some((oldest, i)) = other {
            if own.is_none_or(|own| oldest < own) && self.loops[i].ask() {
                // That loop closes it on its next turn; until then the
                // server holds one connection more than the cap.
                return true;
            }
        }
        if self.close_oldest_idle(poll) {
            return true;
        }
        (0..self.loops.len())
            .filter(|&i| i != self.me)
            .any(|i| self.loops[i].ask())
    }

    /// Closes this loop's longest idle connection, after one last read
    /// (a request that arrived since it went idle is served, and the next
    /// one is tried); false when none of [`EVICTION_PROBES`] is still idle.
    fn close_oldest_idle(&mut self, poll: &Poll) -> bool {
        for _ in 0..EVICTION_PROBES {
            let Some((index, _)) = self.idle.front() else {
                return false;
            };
            let Some(generation) = self.slots[index].as_ref().map(|s| s.generation) else {
                self.idle.remove(index);
                continue;
            };
            self.on_ready(poll, index, Some(ReadUntil::Blocked));
            let same = self.slots[index]
                .as_ref()
                .is_some_and(|s| s.generation == generation);
            if !same {
                // It closed (its peer had gone): its place is free.
                return true;
            }
            if self.idle.front().map(|f| f.0) == Some(index) {
                self.close(poll, index);
                crate::metrics::METRICS.idle_closed();
                return true;
            }
        }
        false
    }

    /// Closes the idle connections other loops asked this one to close.
    fn close_wanted_idle(&mut self, poll: &Poll) {
        for _ in 0..self.loops[self.me].take_wanted() {
            if !self.close_oldest_idle(poll) {
                break;
            }
        }
    }

    /// Refuses (`503`) the bodies whose reservations the memory budget
    /// took back since this loop last looked (another address came to hold
    /// a body and needed its share; the budget woke every loop).
    fn refuse_revoked(&mut self, poll: &Poll) {
        let revocations = self.budget.revocations();
        if revocations == self.seen_revocations {
            return;
        }
        self.seen_revocations = revocations;
        for index in 0..self.slots.len() {
            let revoked = self.slots[index]
                .as_ref()
                .is_some_and(|s| s.conn.body_revoked());
            if revoked {
                self.on_ready(poll, index, None);
            }
        }
    }

    fn deliver_completions(&mut self, poll: &Poll) {
        for (ticket, response) in self.pool.take_completions() {
            crate::metrics::METRICS.queue(-1);
            self.drive_if_current(poll, ticket.index, ticket.generation, |conn, ctx| {
                conn.complete(response, ctx)
            });
        }
    }

    /// The upstream side's turn: park the calls whose runs wait for
    /// answers, take answers other loops fetched, run the timers due, and
    /// queue the calls whose answers are in (or whose deadline passed).
    fn upstream_turn(&mut self, poll: &Poll) {
        let Some(up) = self.upstream.as_mut() else {
            return;
        };
        let now = Instant::now();
        for (ticket, job, state) in self.pool.take_parked() {
            crate::metrics::METRICS.queue(-1);
            let cancel = job.cancel_flag();
            up.park(poll.registry(), (ticket, job), cancel, state, now);
        }
        up.drain_mail();
        up.fire(poll.registry(), now);
        for ((ticket, job), state) in up.take_resumed() {
            if self.pool.resume(ticket, job, state).is_ok() {
                crate::metrics::METRICS.queue(1);
            }
        }
        self.report_upstream();
    }

    /// Adds what changed of this loop's upstream gauges to the metrics.
    fn report_upstream(&mut self) {
        let Some(up) = self.upstream.as_ref() else {
            return;
        };
        let now = up.gauges();
        let m = &crate::metrics::METRICS;
        if now != self.reported {
            let r = self.reported;
            let d = [now[0] - r[0], now[1] - r[1], now[2] - r[2]];
            m.upstream_connections(d[0]);
            m.upstream_in_flight(d[1]);
            m.parked_calls(d[2]);
            self.reported = now;
        }
    }

    fn sweep(&mut self, poll: &Poll, now: Instant) {
        if let Some(up) = self.upstream.as_mut() {
            up.sweep(poll.registry(), now);
        }
        self.report_upstream();
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
                Some(Some(failed)) => self.settle(
                    poll,
                    index,
                    if failed {
                        Driven::Failed
                    } else {
                        Driven::Waiting
                    },
                ),
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

/// What driving a connection left it doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Driven {
    /// Waiting for the socket, a worker or the peer.
    Waiting,
    /// A socket error: close it.
    Failed,
    /// Work left after [`MAX_ROUNDS_PER_TURN`] rounds: drive it again
    /// after the loop's other connections.
    Yielded,
}

/// Parses, dispatches and writes until the connection must wait, for at
/// most [`MAX_ROUNDS_PER_TURN`] rounds.
fn drive(
    slot: &mut Slot,
    handler: &dyn Handler,
    pool: &Pool,
    index: usize,
    ctx: &Ctx,
    scratch: &mut [u8],
) -> Driven {
    let mut rounds = 0;
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
            return Driven::Failed;
        }
        // Pipelined requests parked behind pending output (the output has
        // drained), or a read that stopped at the buffer cap (it has room
        // again): another round, if this turn has one left.
        let parked = slot.conn.resume_pending();
        let unread = !parked && slot.conn.read_pending(ctx.limits) && !slot.conn.is_waiting();
        if !parked && !unread {
            return Driven::Waiting;
        }
        rounds += 1;
        if rounds >= MAX_ROUNDS_PER_TURN {
            return Driven::Yielded;
        }
        if unread
            && slot
                .conn
                .read_from(&mut slot.stream, scratch, ctx, ReadUntil::Blocked)
                .is_err()
        {
            return Driven::Failed;
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

/// Slot generations: unique per accepted connection.
struct GenerationCounter(std::sync::atomic::AtomicU32);

impl GenerationCounter {
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

static GENERATION: GenerationCounter = GenerationCounter(std::sync::atomic::AtomicU32::new(1));
