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
    /// [`queue_full`], a generic JSON `503`.
    fn busy(self: Box<Self>) -> Response {
        queue_full()
    }

    /// A flag the connection raises when its client goes before the
    /// answer (the connection closed, or the peer ended its side), so the
    /// work can stop early. Default: none.
    fn cancel_flag(&self) -> Option<Arc<AtomicBool>> {
        None
    }
}

/// A closure is work with the generic busy answer.
impl<F: FnOnce() -> Response + Send + 'static> Work for F {
    fn run(self: Box<Self>) -> Response {
        (*self)()
    }
}

/// A boxed [`Work`].
pub type Job = Box<dyn Work>;

/// The generic answer when every worker is busy and the queue is full:
/// `503`, `Retry-After: 1`, a JSON-RPC error without an id. Work that knows
/// its request answers better through [`Work::busy`].
pub fn queue_full() -> Response {
    Response::with_body(503, "application/json", Body::Static(QUEUE_FULL_BODY))
        .header("Retry-After", "1")
}

/// The body of [`queue_full`].
pub const QUEUE_FULL_BODY: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy: worker queue full, retry shortly"}}"#;
