//! The work an answer waits for: a `tools/call` handed to a worker, and
//! deferred work answered with CORS headers and the forwarded client.

use std::sync::Arc;

use super::cors::finish;
use super::replies::frame;
use super::{metered, xhttp, ROUTE_MCP};
use crate::http::accept::Framing;
use crate::http::Response;
use crate::mcp;
use crate::metrics::METRICS;
use crate::server::conn::{Job, Step, Work};

/// A `tools/call` waiting for a worker.
pub(super) struct DeferredCall {
    pub(super) call: mcp::PendingCall,
    pub(super) framing: Framing,
}

impl Work for DeferredCall {
    fn run(self: Box<Self>) -> Response {
        match self.step() {
            Step::Done(response) => response,
            // Only a restartable run parks, and the pool runs those by
            // `step`.
            Step::Park(job) => job.busy(),
        }
    }

    fn step(self: Box<Self>) -> Step {
        metered::take_cause();
        let cancel = std::sync::Arc::clone(&self.call.call().cancel);
        let gone = || cancel.load(std::sync::atomic::Ordering::Relaxed);
        if gone() {
            // The client left while the call waited for a worker (or for
            // its upstream answers): nothing more is computed for it.
            METRICS.cancelled();
            return Step::Done(Response::new(204));
        }
        let Some((reply, stats)) = self.call.step_traced() else {
            return Step::Park(self);
        };
        if gone() {
            METRICS.cancelled();
        }
        METRICS.rpc(Some("tools/call"), reply.status);
        let mut response = frame(reply, self.framing);
        response.trace.route = ROUTE_MCP;
        response.trace.rpc_method = Some("tools/call".into());
        xhttp::record_call(&stats, &mut response);
        Step::Done(response)
    }

    fn cancel_flag(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        Some(Arc::clone(&self.call.call().cancel))
    }

    /// The queue-full `503` as a JSON-RPC error carrying this request's id,
    /// framed as the client asked (JSON or one SSE event).
    fn busy(self: Box<Self>) -> Response {
        let reply = self.call.busy();
        METRICS.rpc(Some("tools/call"), reply.status);
        let mut response = frame(reply, self.framing).header("Retry-After", "1");
        response.trace.route = ROUTE_MCP;
        response.trace.rpc_method = Some("tools/call".into());
        response
    }
}

/// Deferred work answered with CORS headers (when `origin` is set) and
/// traced with the forwarded client address, busy or not.
pub(super) struct Finished {
    pub(super) inner: Job,
    pub(super) origin: Option<String>,
    pub(super) client: Option<std::net::IpAddr>,
}

impl Work for Finished {
    fn run(self: Box<Self>) -> Response {
        finish(self.inner.run(), self.origin, self.client)
    }

    fn step(self: Box<Self>) -> Step {
        let Finished {
            inner,
            origin,
            client,
        } = *self;
        match inner.step() {
            Step::Done(response) => Step::Done(finish(response, origin, client)),
            Step::Park(inner) => Step::Park(Box::new(Finished {
                inner,
                origin,
                client,
            })),
        }
    }

    fn busy(self: Box<Self>) -> Response {
        finish(self.inner.busy(), self.origin, self.client)
    }

    fn cancel_flag(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        self.inner.cancel_flag()
    }
}
