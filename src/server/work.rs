//! Work handed from the event loop to a worker thread, and what the client
//! is answered instead when no worker can take it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::http::{Body, Response};

/// A blocking piece of work that produces a response (runs on a worker),
/// and what to answer instead when no worker can take it.
pub trait Work: Send + 'static {
    /// Produces the response; called on a worker thread.
    fn run(self: Box<Self>) -> Response;

    /// The response when every worker is busy and the queue is full
    /// (called on the event loop; must not block). Default:
    /// [`Fallback::Busy`] without a body; work that knows its request
    /// answers in its protocol.
    fn busy(self: Box<Self>) -> Response {
        Fallback::Busy.bare()
    }

    /// A flag the connection raises when its client goes before the
    /// answer (the connection closed, or the peer ended its side), so the
    /// work can stop early. Default: none.
    fn cancel_flag(&self) -> Option<Arc<AtomicBool>> {
        None
    }

    /// Runs once on a worker: the response, or, for work whose run waits
    /// for upstream answers an event loop fetches (a restartable tool
    /// call, see `crate::x::restart`), the work itself, to park until they
    /// are in and run again. Default: [`Work::run`].
    fn step(self: Box<Self>) -> Step {
        Step::Done(self.run())
    }
}

/// What one run of [`Work::step`] ended with.
pub enum Step {
    /// The response.
    Done(Response),
    /// The work waits for upstream answers: park it and run it again.
    Park(Job),
}

/// A closure is work with the generic busy answer.
impl<F: FnOnce() -> Response + Send + 'static> Work for F {
    fn run(self: Box<Self>) -> Response {
        (*self)()
    }
}

/// A boxed [`Work`].
pub type Job = Box<dyn Work>;

/// An answer the server gives on its own, instead of a handler's: it
/// picks the status and `Retry-After`, the handler the body, in its
/// protocol (`Handler::fallback`). The server writes no protocol above
/// HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// A connection past `--max-connections`: `503`, `Retry-After: 1`,
    /// then closed.
    Overloaded,
    /// A connection past `--max-connections-per-ip`: `429`,
    /// `Retry-After: 1`, then closed.
    TooManyFromAddress,
    /// Work that panicked on a worker (the panic is caught and the worker
    /// lives on): `500`.
    Panicked,
    /// Work without an answer of its own ([`Work::busy`]) when every
    /// worker is busy and the queue is full: `503`, `Retry-After: 1`.
    Busy,
}

impl Fallback {
    /// The HTTP status of this answer.
    pub fn status(self) -> u16 {
        match self {
            Fallback::Overloaded | Fallback::Busy => 503,
            Fallback::TooManyFromAddress => 429,
            Fallback::Panicked => 500,
        }
    }

    /// This answer with `body` of `content_type`.
    pub fn answer(self, content_type: &'static str, body: Body) -> Response {
        self.headers(Response::with_body(self.status(), content_type, body))
    }

    /// This answer without a body.
    pub fn bare(self) -> Response {
        self.headers(Response::new(self.status()))
    }

    fn headers(self, response: Response) -> Response {
        match self {
            Fallback::Panicked => response,
            _ => response.header("Retry-After", "1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallbacks_carry_status_and_retry_after() {
        let cases = [
            (Fallback::Overloaded, 503, Some("1")),
            (Fallback::TooManyFromAddress, 429, Some("1")),
            (Fallback::Panicked, 500, None),
            (Fallback::Busy, 503, Some("1")),
        ];
        for (fallback, status, retry) in cases {
            let bare = fallback.bare();
            assert_eq!(
                (bare.status, bare.header_value("Retry-After")),
                (status, retry)
            );
            assert_eq!(bare.header_value("Content-Type"), None);
            let full = fallback.answer("text/plain", Body::Static(b"x"));
            assert_eq!(
                (full.status, full.header_value("Retry-After")),
                (status, retry)
            );
            assert_eq!(full.header_value("Content-Type"), Some("text/plain"));
        }
    }
}
