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
//! `budget.rs`. Reading from the socket is in `reading.rs`, parsing and
//! dispatch in `dispatch.rs`, queueing and writing answers in `writing.rs`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::config::Limits;
use crate::http::chunked::ChunkedDecoder;
use crate::http::outgoing::Outgoing;
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
}

mod budget;
mod closing;
mod dispatch;
mod reading;
mod writing;

use budget::CHUNKED_RESERVE_STEP;
use closing::BUDGET_SPENT;
pub use closing::{LINGER_MAX_BYTES, LINGER_TIMEOUT};

#[cfg(test)]
mod tests;
