//! One client connection as a state machine over bytes, generic over
//! `Read`/`Write` so tests and fuzzers drive it without sockets.
//!
//! ```text
//!            head complete, body framed
//!   ┌──────┐ ───────────────────────────► ┌──────┐
//!   │ Head │                               │ Body │
//!   └──────┘ ◄─────────┐                   └──────┘
//!      │  handler: Now │ (response queued)     │ body complete
//!      │               │                       ▼
//!      └──────────► dispatch ◄─────────────────┘
//!                      │ handler: Later
//!                      ▼
//!                 ┌─────────┐  complete(response)
//!                 │ Waiting │ ──────────────────► Head
//!                 └─────────┘
//! ```
//!
//! Requests are answered strictly in order: while one waits for a worker,
//! pipelined bytes stay buffered and unparsed. A [`crate::http::parse::Rejection`] queues its
//! error response with `Connection: close` and nothing after it is parsed.
//!
//! How a connection ends (refusals, deadlines, shutdown, lingering close)
//! is in `closing.rs`; its share of the server-wide memory budget in
//! `budget.rs`.

use std::io::{self, Read, Write};
use std::mem;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::config::Limits;
use crate::http::chunked::ChunkedDecoder;
use crate::http::outgoing::Outgoing;
use crate::http::parse::{self, BodyFraming};
use crate::http::{Head, Method, Request, Response};

use super::admission::{MemoryBudget, UNBUDGETED_BODY_BYTES};

pub use super::work::{Fallback, Job, Step, Work};

/// What a handler does with a request.
pub enum Handled {
    /// The response is ready now (answered on the event-loop thread).
    Now(Response),
    /// The response needs blocking work on a worker thread.
    Later(Job),
}

/// The application behind the connection layer.
pub trait Handler: Send + Sync + 'static {
    /// Handles one complete request. Must not block.
    fn handle(&self, request: Request) -> Handled;

    /// Judges a request head before its body is read: the refusal it gets
    /// whatever the body, if any. Asked when the client waits for
    /// `100 Continue`, which is sent only when this returns `None`; a
    /// refusal is sent instead, with `Connection: close`. Must not block.
    fn check_head(&self, _head: &Head) -> Option<Response> {
        None
    }

    /// The answer the server gives on its own in `fallback`'s case, in the
    /// handler's protocol. Called on an event loop or a worker; must not
    /// block. Default: [`Fallback::bare`], the status without a body.
    fn fallback(&self, fallback: Fallback) -> Response {
        fallback.bare()
    }
}

/// Bytes read from a socket per `read` call.
pub const READ_CHUNK_BYTES: usize = 16 * 1024;

/// Pending response bytes past which no further pipelined request is parsed
/// until the peer reads (back-pressure).
///
/// Default is 256 KiB.
pub const MAX_PENDING_WRITE_BYTES: usize = 256 * 1024;

/// Why a connection closed (for logs and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer closed its side with nothing left to answer.
    PeerClosed,
    /// The request or the response asked for `Connection: close`.
    ConnectionClose,
    /// A malformed or over-limit request was answered and the connection closed.
    Rejected(u16),
    /// A read, write or idle deadline passed.
    Timeout,
    /// A socket error.
    Io,
    /// The server is shutting down.
    Shutdown,
}

enum BodyState {
    Length(usize),
    Chunked(ChunkedDecoder),
}

enum State {
    /// Waiting for (more of) a request head.
    Head,
    /// Reading the body of a request. Boxed: a head and a body decoder
    /// are most of a connection's size, and only a connection in the
    /// middle of a request needs them (5,000 idle connections: 6.1 -> 5.5
    /// MiB RSS), for one small allocation per request with a body.
    Body(Box<Reading>),
    /// A worker is producing the response of the current request.
    Waiting {
        head_only: bool,
        keep_alive: bool,
        http10: bool,
    },
    /// No further request will be read; flush and close.
    Closing(CloseReason),
}

/// A request whose body is being read.
struct Reading {
    head: Head,
    body: BodyState,
}

/// How far [`Conn::read_from`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadUntil {
    /// Until `WouldBlock` or EOF.
    Blocked,
    /// Also stops after a read that returned less than asked for: the
    /// socket's receive queue was empty then, and with edge-triggered
    /// readiness any later data raises a new event, so the extra read that
    /// would only return `WouldBlock` is saved. Valid only for a readiness
    /// event without hang-up or error: a FIN already queued raises no
    /// further event, and only a read to EOF sees it.
    Short,
}

/// Per-call context from the event loop.
pub struct Ctx<'a> {
    /// The access log.
    pub log: &'a super::log::AccessLog,
    /// HTTP limits.
    pub limits: &'a Limits,
    /// The `Date` value for this second.
    pub date: &'a str,
    /// The current instant.
    pub now: Instant,
    /// Graceful shutdown in progress: answer with `Connection: close`.
    pub draining: bool,
}

/// One connection's buffers and protocol state.
pub struct Conn {
    peer: SocketAddr,
    rbuf: Vec<u8>,
    out: Outgoing,
    state: State,
    /// First byte of the current request head arrived at.
    head_started: Option<Instant>,
    /// End of the current head (start of its body) at.
    body_started: Option<Instant>,
    /// Last time a request completed or the connection opened.
    idle_since: Instant,
    /// Response bytes have been waiting for the peer since.
    write_blocked_since: Option<Instant>,
    read_eof: bool,
    /// Reading stopped at the buffer cap before `WouldBlock`.
    read_pending: bool,
    /// Parsing stopped because too much output was pending; buffered
    /// requests wait until the peer reads.
    paused_for_output: bool,
    /// Method, path and completion time of the request being answered
    /// (kept only while the access log is on).
    current: Option<(Method, String, Instant)>,
    /// The waiting job's cancel flag, raised when the client goes first.
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The server-wide budget of buffered bytes.
    budget: Arc<MemoryBudget>,
    /// Bytes of `budget` reserved for the body being read.
    reserved: usize,
    /// That reservation as the budget shares it with this connection (it
    /// may take it back: [`Conn::body_revoked`]).
    claim: Option<Arc<super::admission::BodyClaim>>,
    /// Bytes of `budget` charged for unsent output.
    charged_out: usize,
    /// The client address whose share of `budget` this connection uses.
    budget_key: Option<std::net::IpAddr>,
    /// The answer was written and the write side shut down at; input is
    /// being discarded until EOF, [`LINGER_TIMEOUT`] or [`LINGER_MAX_BYTES`].
    linger_since: Option<Instant>,
    /// Input bytes discarded since nothing more would be parsed.
    discarded: usize,
}

impl Drop for Conn {
    /// Gives back the buffered bytes; a connection closed while its job
    /// runs raises the job's cancel flag, so it stops early.
    fn drop(&mut self) {
        self.release_body();
        self.budget.give_for(self.budget_key, self.charged_out);
        self.cancel_waiting();
    }
}

impl Conn {
    /// A fresh connection from `peer`, with no memory budget.
    pub fn new(peer: SocketAddr, now: Instant) -> Conn {
        Conn::with_budget(peer, now, Arc::new(MemoryBudget::new(0)))
    }

    /// A fresh connection from `peer` buffering within `budget`.
    pub fn with_budget(peer: SocketAddr, now: Instant, budget: Arc<MemoryBudget>) -> Conn {
        Conn {
            peer,
            rbuf: Vec::new(),
            out: Outgoing::new(),
            state: State::Head,
            head_started: None,
            body_started: None,
            idle_since: now,
            write_blocked_since: None,
            read_eof: false,
            read_pending: false,
            paused_for_output: false,
            current: None,
            cancel: None,
            budget,
            reserved: 0,
            claim: None,
            charged_out: 0,
            budget_key: None,
            linger_since: None,
            discarded: 0,
        }
    }

    /// Raises the waiting job's cancel flag: its client has gone, and no
    /// answer can reach it (no resumption is offered).
    fn cancel_waiting(&mut self) {
        if let Some(flag) = self.cancel.take() {
            if self.is_waiting() {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Bytes held in buffers (for memory tests).
    pub fn buffered_capacity(&self) -> usize {
        self.rbuf.capacity() + self.out.capacity()
    }

    /// Whether a response is queued but not yet fully written.
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Whether the connection waits for a worker.
    pub fn is_waiting(&self) -> bool {
        matches!(self.state, State::Waiting { .. })
    }

    /// When the connection became idle, if it is: no request in progress
    /// (nothing buffered, no body, no job, no unsent output, not closing,
    /// nothing left unread in the socket). Changes with every answer, so
    /// a connection that was served between two looks is idle anew.
    pub fn idle_since(&self) -> Option<Instant> {
        let idle = matches!(self.state, State::Head)
            && self.rbuf.is_empty()
            && self.out.is_empty()
            && !self.read_eof
            && !self.read_pending
            && !self.paused_for_output
            && self.head_started.is_none();
        idle.then_some(self.idle_since)
    }

    /// Most bytes the read buffer takes: a head, plus the body being read
    /// when it is reserved in the budget (or small), plus one read. Bytes
    /// past it wait in the socket, so a connection holds no more than this
    /// outside the budget, whatever it pipelines.
    fn read_cap(&self, limits: &Limits) -> usize {
        let body = match &self.state {
            State::Body(reading) => match reading.body {
                BodyState::Length(n) => n.max(UNBUDGETED_BODY_BYTES),
                BodyState::Chunked(_) => UNBUDGETED_BODY_BYTES,
            },
            _ => UNBUDGETED_BODY_BYTES,
        };
        limits.max_head_bytes + body + READ_CHUNK_BYTES
    }

    /// Reads what is available (until `WouldBlock`, EOF, the buffer cap,
    /// or with [`ReadUntil::Short`] a read that returned less than asked),
    /// using `scratch` as the read buffer.
    ///
    /// # Errors
    /// Socket errors other than `WouldBlock` and `Interrupted`.
    pub fn read_from(
        &mut self,
        src: &mut impl Read,
        scratch: &mut [u8],
        ctx: &Ctx,
        until: ReadUntil,
    ) -> io::Result<()> {
        self.read_pending = false;
        if self.read_eof || matches!(self.state, State::Closing(_)) {
            // Drain and discard: nothing more will be parsed.
            loop {
                if self.discarded > LINGER_MAX_BYTES {
                    return Ok(());
                }
                match src.read(scratch) {
                    Ok(0) => {
                        self.read_eof = true;
                        return Ok(());
                    }
                    Ok(n) => self.discarded += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        let cap = self.read_cap(ctx.limits);
        loop {
            if self.rbuf.len() >= cap {
                self.read_pending = true;
                return Ok(());
            }
            let want = scratch.len().min(cap - self.rbuf.len());
            match src.read(&mut scratch[..want]) {
                Ok(0) => {
                    self.read_eof = true;
                    self.cancel_waiting();
                    return Ok(());
                }
                Ok(n) => {
                    if self.rbuf.is_empty()
                        && matches!(self.state, State::Head)
                        && self.head_started.is_none()
                    {
                        self.head_started = Some(ctx.now);
                    }
                    grow_within(&mut self.rbuf, n, cap);
                    self.rbuf.extend_from_slice(&scratch[..n]);
                    if n < want && until == ReadUntil::Short {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether parsing paused for pending output that has since drained
    /// below the cap: call `process` again (buffered requests are waiting,
    /// and no readiness event will announce them).
    pub fn resume_pending(&self) -> bool {
        self.paused_for_output
            && (self.out.is_empty()
                || (self.out.len() <= MAX_PENDING_WRITE_BYTES
                    && !self.budget.spent_for(self.budget_key)))
    }

    /// Whether reading stopped at the buffer cap and the buffer has room
    /// again: call `read_from` (no readiness event will announce the data
    /// left in the socket). False while the buffer is still full, as when
    /// parsing waits for a client that does not read its replies: reading
    /// then would make no progress.
    pub fn read_pending(&self, limits: &Limits) -> bool {
        self.read_pending && self.rbuf.len() < self.read_cap(limits)
    }

    /// Parses and dispatches buffered requests until one must wait for a
    /// worker (returned as a job) or no complete request remains.
    pub fn process(&mut self, handler: &dyn Handler, ctx: &Ctx) -> Option<Job> {
        loop {
            // Past the pending-output cap, or with output unsent while the
            // memory budget is spent, parse nothing more until the peer
            // reads.
            let spent = !self.out.is_empty() && self.budget.spent_for(self.budget_key);
            if self.out.len() > MAX_PENDING_WRITE_BYTES
                || (spent && matches!(self.state, State::Head))
            {
                self.paused_for_output = true;
                return None;
            }
            self.paused_for_output = false;
            if matches!(self.state, State::Body(_)) && self.body_revoked() {
                // Its reservation was taken back for another address's
                // share: the body is not read on.
                self.reject(BUDGET_SPENT, ctx);
                return None;
            }
            match mem::replace(&mut self.state, State::Head) {
                State::Head => {
                    if self.rbuf.is_empty() {
                        self.after_idle(ctx);
                        return None;
                    }
                    if self.head_started.is_none() {
                        self.head_started = Some(ctx.now);
                    }
                    match parse::try_parse_head(
                        &self.rbuf,
                        ctx.limits.max_head_bytes,
                        ctx.limits.max_headers,
                    ) {
                        Ok(None) => {
                            if self.read_eof {
                                self.state = State::Closing(CloseReason::PeerClosed);
                            }
                            return None;
                        }
                        Ok(Some((n, head))) => {
                            self.rbuf.drain(..n);
                            self.body_started = Some(ctx.now);
                            match parse::body_framing(&head, ctx.limits.max_body_bytes) {
                                Err(rejection) => {
                                    self.reject(rejection, ctx);
                                    return None;
                                }
                                Ok(BodyFraming::Empty) => {
                                    if let Some(job) = self.dispatch(head, Vec::new(), handler, ctx)
                                    {
                                        return Some(job);
                                    }
                                }
                                Ok(framing) => {
                                    let expects = parse::expects_continue(&head);
                                    if expects && self.rbuf.is_empty() {
                                        if let Some(refusal) = handler.check_head(&head) {
                                            self.refuse_head(&head, refusal, ctx);
                                            return None;
                                        }
                                    }
                                    if let BodyFraming::Length(n) = framing {
                                        if !self.reserve_body(n) {
                                            self.reject(BUDGET_SPENT, ctx);
                                            return None;
                                        }
                                    }
                                    if expects && self.rbuf.is_empty() {
                                        self.out.push_bytes(b"HTTP/1.1 100 Continue\r\n\r\n");
                                    }
                                    let body = match framing {
                                        BodyFraming::Length(n) => BodyState::Length(n),
                                        _ => BodyState::Chunked(ChunkedDecoder::new(
                                            ctx.limits.max_body_bytes,
                                        )),
                                    };
                                    self.state = State::Body(Box::new(Reading { head, body }));
                                }
                            }
                        }
                        Err(rejection) => {
                            self.reject(rejection, ctx);
                            return None;
                        }
                    }
                }
                State::Body(mut reading) => match &mut reading.body {
                    BodyState::Length(n) => {
                        let n = *n;
                        if self.rbuf.len() < n {
                            self.state = if self.read_eof {
                                State::Closing(CloseReason::PeerClosed)
                            } else {
                                State::Body(reading)
                            };
                            return None;
                        }
                        let rest = self.rbuf.split_off(n);
                        let body = mem::replace(&mut self.rbuf, rest);
                        if let Some(job) = self.dispatch(reading.head, body, handler, ctx) {
                            return Some(job);
                        }
                    }
                    BodyState::Chunked(decoder) => match decoder.feed(&self.rbuf) {
                        Err(rejection) => {
                            self.reject(rejection, ctx);
                            return None;
                        }
                        Ok(used) => {
                            self.rbuf.drain(..used);
                            let len = decoder.body_len();
                            let step = len.div_ceil(CHUNKED_RESERVE_STEP) * CHUNKED_RESERVE_STEP;
                            if len > UNBUDGETED_BODY_BYTES && !self.reserve_body(step) {
                                self.reject(BUDGET_SPENT, ctx);
                                return None;
                            }
                            if !decoder.is_done() {
                                self.state = if self.read_eof {
                                    State::Closing(CloseReason::PeerClosed)
                                } else {
                                    State::Body(reading)
                                };
                                return None;
                            }
                            let Reading { head, body } = *reading;
                            if let BodyState::Chunked(decoder) = body {
                                if let Some(job) =
                                    self.dispatch(head, decoder.into_body(), handler, ctx)
                                {
                                    return Some(job);
                                }
                            }
                        }
                    },
                },
                other => {
                    self.state = other;
                    return None;
                }
            }
        }
    }

    /// Hands one complete request to the handler.
    fn dispatch(
        &mut self,
        head: Head,
        body: Vec<u8>,
        handler: &dyn Handler,
        ctx: &Ctx,
    ) -> Option<Job> {
        let head_only = head.method == Method::Head;
        let keep_alive = head.keep_alive() && !ctx.draining;
        let http10 = head.minor_version == 0;
        self.head_started = None;
        self.body_started = None;
        if ctx.log.enabled() {
            self.current = Some((head.method.clone(), head.path().to_string(), ctx.now));
        }
        let request = Request {
            head,
            body,
            peer: self.peer,
        };
        let handled = handler.handle(request);
        // The body has been handed over (and, for every handler of this
        // server, parsed and dropped).
        self.release_body();
        match handled {
            Handled::Now(response) => {
                self.state = State::Head;
                self.queue(&response, head_only, keep_alive, http10, ctx);
                None
            }
            Handled::Later(job) => {
                self.cancel = job.cancel_flag();
                self.state = State::Waiting {
                    head_only,
                    keep_alive,
                    http10,
                };
                Some(job)
            }
        }
    }

    /// Delivers the response of the request that was waiting for a worker.
    /// Ignored when the connection is not waiting.
    pub fn complete(&mut self, response: Response, ctx: &Ctx) {
        if let State::Waiting {
            head_only,
            keep_alive,
            http10,
        } = self.state
        {
            self.cancel = None;
            self.state = State::Head;
            self.queue(
                &response,
                head_only,
                keep_alive && !ctx.draining,
                http10,
                ctx,
            );
        }
    }

    fn queue(
        &mut self,
        response: &Response,
        head_only: bool,
        keep_alive: bool,
        http10: bool,
        ctx: &Ctx,
    ) {
        response.encode(head_only, keep_alive, http10, ctx.date, &mut self.out);
        self.sync_output_charge();
        let bytes = response.body.len();
        crate::metrics::METRICS.http(response.trace.route, response.status, bytes);
        if let Some((method, path, started)) = self.current.take() {
            ctx.log.record(&super::log::Entry {
                peer: self.peer,
                method: &method,
                path: &path,
                status: response.status,
                bytes,
                duration: Instant::now().saturating_duration_since(started),
                trace: &response.trace,
            });
        }
        self.idle_since = ctx.now;
        if !keep_alive || response.close {
            let reason = if ctx.draining {
                CloseReason::Shutdown
            } else {
                CloseReason::ConnectionClose
            };
            self.state = State::Closing(reason);
            self.rbuf = Vec::new();
            self.release_body();
        }
    }

    /// Releases buffers while idle, so an idle keep-alive connection holds
    /// no heap memory.
    fn after_idle(&mut self, _ctx: &Ctx) {
        if self.rbuf.is_empty() && self.rbuf.capacity() > 0 {
            self.rbuf = Vec::new();
        }
        if self.read_eof {
            self.state = State::Closing(CloseReason::PeerClosed);
        }
    }

    /// Writes queued response bytes until done or `WouldBlock`.
    ///
    /// # Errors
    /// Socket errors other than `WouldBlock` and `Interrupted`; a write of
    /// zero bytes is `WriteZero`.
    pub fn write_to(&mut self, dst: &mut impl Write, now: Instant) -> io::Result<()> {
        while !self.out.is_empty() {
            match self.out.write_once(dst) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => self.write_blocked_since = None,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.write_blocked_since.get_or_insert(now);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.write_blocked_since = None;
        self.sync_output_charge();
        Ok(())
    }
}

/// Makes room for `extra` more bytes in `buf`: doubling (amortised) while
/// under `soft_cap`, exactly what is needed past it, so the capacity never
/// passes `max(soft_cap, len + extra)`.
fn grow_within(buf: &mut Vec<u8>, extra: usize, soft_cap: usize) {
    let needed = buf.len() + extra;
    if needed > buf.capacity() {
        let target = (buf.capacity() * 2).clamp(needed, soft_cap.max(needed));
        buf.reserve_exact(target - buf.len());
    }
}

mod budget;
mod closing;

use budget::CHUNKED_RESERVE_STEP;
use closing::BUDGET_SPENT;
pub use closing::{LINGER_MAX_BYTES, LINGER_TIMEOUT};

#[cfg(test)]
mod tests;
