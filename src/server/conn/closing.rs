//! How a connection ends: refusals (answered with `Connection: close`),
//! deadlines, graceful shutdown, and the lingering close that keeps an
//! answer from being destroyed by a reset.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{CloseReason, Conn, Ctx, State};
use crate::http::parse::Rejection;
use crate::http::{Body, Head, Method, Response};
use crate::server::admission::MemoryBudget;

/// How long a connection that is closing after its answer (a refusal, or
/// `Connection: close`) keeps reading and discarding what its peer still
/// sends, after the answer is written and the write side shut down. Closing
/// with unread input makes the kernel send a reset, which can destroy the
/// answer before the peer reads it (a 503 for a client still sending its
/// body was lost 3 times in 30). Default 2 s (checked once a second, so at
/// most 3 s); then the connection closes.
pub const LINGER_TIMEOUT: Duration = Duration::from_secs(2);

/// Most bytes a closing connection discards before it closes anyway.
///
/// Default is 2 MiB (more than the largest body, 1 MiB by default).
pub const LINGER_MAX_BYTES: usize = 2 * 1024 * 1024;

/// The refusal of a body the memory budget cannot hold.
pub(super) const BUDGET_SPENT: Rejection = Rejection {
    status: 503,
    reason: "server busy: request bodies fill the memory budget; retry shortly",
};

/// Whether a connection closing for `reason` lingers (reads and discards
/// its peer's input for a while) rather than closing at once.
pub(super) fn lingers(reason: CloseReason) -> bool {
    matches!(
        reason,
        CloseReason::Rejected(_) | CloseReason::ConnectionClose | CloseReason::Shutdown
    )
}

impl Conn {
    /// A connection refused at accept (too many connections): `response`
    /// is queued with `Connection: close`, and the connection lingers once
    /// it is written, so the answer is not lost to a reset.
    pub fn refused(
        peer: SocketAddr,
        response: Response,
        budget: Arc<MemoryBudget>,
        ctx: &Ctx,
    ) -> Conn {
        let mut conn = Conn::with_budget(peer, ctx.now, budget);
        conn.refuse(response, Method::Other("-".into()), "-", ctx);
        conn
    }

    /// Whether the answer is written and the connection should now shut
    /// down its write side and linger (see [`LINGER_TIMEOUT`]).
    pub fn wants_linger(&self) -> bool {
        matches!(self.state, State::Closing(r) if lingers(r))
            && !self.read_eof
            && self.linger_since.is_none()
            && self.out.is_empty()
    }

    /// Notes that the write side was shut down at `now`.
    pub fn begin_linger(&mut self, now: Instant) {
        self.linger_since = Some(now);
    }

    /// Why the connection should close now, if it should: everything queued
    /// is written and no further request can come.
    pub fn close_reason(&self) -> Option<CloseReason> {
        if self.wants_write() || self.is_waiting() {
            return None;
        }
        match self.state {
            State::Closing(reason) => {
                let done = self.read_eof
                    || !lingers(reason)
                    || (self.linger_since.is_some() && self.discarded > LINGER_MAX_BYTES);
                done.then_some(reason)
            }
            _ if self.read_eof => Some(CloseReason::PeerClosed),
            _ => None,
        }
    }

    /// Why the connection is closing, once nothing more will be parsed
    /// (its answer may still be written, or it may linger).
    pub fn closing(&self) -> Option<CloseReason> {
        match self.state {
            State::Closing(reason) => Some(reason),
            _ => None,
        }
    }

    /// Answers a head refused before its body was read (instead of
    /// `100 Continue`) and closes: the body is never read.
    pub(super) fn refuse_head(&mut self, head: &Head, refusal: Response, ctx: &Ctx) {
        if ctx.log.enabled() {
            self.current = Some((head.method.clone(), head.path().to_string(), ctx.now));
        }
        let head_only = head.method == Method::Head;
        let status = refusal.status;
        self.queue(&refusal, head_only, false, head.minor_version == 0, ctx);
        self.state = State::Closing(CloseReason::Rejected(status));
        self.head_started = None;
        self.body_started = None;
    }

    /// Queues the error response for a refused request and stops parsing.
    pub(super) fn reject(&mut self, rejection: Rejection, ctx: &Ctx) {
        let body = format!(
            "{{\"error\":{{\"status\":{},\"message\":\"{}\"}}}}",
            rejection.status, rejection.reason
        );
        let mut response = Response::with_body(
            rejection.status,
            "application/json",
            Body::Owned(body.into_bytes()),
        );
        if rejection.status == 503 {
            response = response.header("Retry-After", "1");
        }
        response.trace.route = crate::metrics::ROUTE_REJECTED;
        let reason = if rejection == BUDGET_SPENT {
            "memory_budget"
        } else {
            crate::metrics::rejection_reason(rejection.status)
        };
        crate::metrics::METRICS.rejected(reason);
        let method = self
            .current
            .take()
            .map_or(Method::Other("-".into()), |c| c.0);
        self.refuse(response, method, "-", ctx);
    }

    /// Queues `response` with `Connection: close` (logged as `method`
    /// `path`), stops parsing and drops what is buffered.
    pub(super) fn refuse(&mut self, response: Response, method: Method, path: &str, ctx: &Ctx) {
        response.encode(false, false, false, ctx.date, &mut self.out);
        self.sync_output_charge();
        let bytes = response.body.len();
        crate::metrics::METRICS.http(response.trace.route, response.status, bytes);
        ctx.log.record(&crate::server::log::Entry {
            peer: self.peer,
            method: &method,
            path,
            status: response.status,
            bytes,
            duration: std::time::Duration::ZERO,
            trace: &response.trace,
        });
        self.state = State::Closing(CloseReason::Rejected(response.status));
        self.rbuf = Vec::new();
        self.release_body();
    }

    /// Applies the timeouts at `ctx.now`. Returns true when the connection
    /// must close at once; a `408` may have been queued first.
    pub fn check_deadlines(&mut self, ctx: &Ctx) -> bool {
        let limits = ctx.limits;
        if let Some(since) = self.write_blocked_since {
            if ctx.now.duration_since(since) >= limits.write_timeout {
                return true;
            }
        }
        match &self.state {
            State::Head if !self.rbuf.is_empty() => {
                let started = self.head_started.unwrap_or(self.idle_since);
                if ctx.now.duration_since(started) >= limits.header_timeout {
                    self.reject(
                        Rejection {
                            status: 408,
                            reason: "request head not received in time",
                        },
                        ctx,
                    );
                }
                false
            }
            State::Head => {
                !self.wants_write()
                    && ctx.now.duration_since(self.idle_since) >= limits.idle_timeout
            }
            State::Body { .. } => {
                let started = self.body_started.unwrap_or(self.idle_since);
                if self.body_revoked()
                    || (self.reserved > 0 && self.budget.over_share(self.budget_key))
                {
                    // Its reservation was taken back when another
                    // address came to hold a body (its loop was woken for
                    // this), or its address holds more than its share now
                    // that others hold some too (output counts, and is
                    // never taken back): this body gives its reservation
                    // back (the next connection of the address is judged
                    // on what is then left), so the split evens out
                    // within a sweep.
                    self.reject(BUDGET_SPENT, ctx);
                } else if ctx.now.duration_since(started) >= limits.body_timeout {
                    self.reject(
                        Rejection {
                            status: 408,
                            reason: "request body not received in time",
                        },
                        ctx,
                    );
                }
                false
            }
            State::Waiting { .. } => false,
            State::Closing(reason) => match self.linger_since {
                Some(since) => ctx.now.duration_since(since) >= LINGER_TIMEOUT,
                // Still writing, or about to linger.
                None => !self.wants_write() && (self.read_eof || !lingers(*reason)),
            },
        }
    }

    /// Begins graceful shutdown for this connection: an idle one closes at
    /// once (returns true); a busy one answers its current request with
    /// `Connection: close`.
    pub fn begin_shutdown(&mut self) -> bool {
        match self.state {
            State::Head if self.rbuf.is_empty() && !self.wants_write() => true,
            State::Head if self.rbuf.is_empty() => {
                self.state = State::Closing(CloseReason::Shutdown);
                false
            }
            _ => false,
        }
    }
}
