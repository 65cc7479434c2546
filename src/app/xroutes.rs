//! The read-only X routes over plain HTTP, beside `/mcp`: the same
//! tools (validation, fetches, cache and renderer) for curl, browsers and
//! scripts, and the targets of the `[Continue →]` links the Markdown prints.
//! Each tool declares its routes in the tool registry
//! (`x::registry::Spec::routes`); today:
//!
//! | Route | Tool |
//! | --- | --- |
//! | `/{handle}/status/{id}`, `/i/status/{id}` | `x_md_get_post` |
//! | `/api/convert?url=…` | `x_md_get_post` (any accepted post URL form) |
//! | `/{handle}` | `x_md_get_profile` |
//! | `/{handle}/followers`, `/{handle}/following` | `x_md_get_followers`, `x_md_get_following` |
//! | `/search?q=…` | `x_md_search_posts` |
//!
//! Query parameters are the tool's arguments (typed from its argument
//! table, then checked by `Tools::prepare` before any upstream work), plus
//! `format`. The answer is the tool's Markdown as `text/markdown;
//! charset=utf-8`, or its `structuredContent` as `application/json` when
//! `format=json` or `Accept` prefers JSON; failures are RFC 9457 problems
//! with the tools' status, code and message. Every run goes to the worker
//! pool; `HEAD` runs too (for the `ETag` and length) and sends no body.

use std::net::IpAddr;
use std::sync::Arc;

use super::limits::{rate_limited_text, retry_secs, ClientLimiter, RATE_LIMITED_CODE};
use super::xhttp::{etag, none_match, problem, record_call, CODE_INVALID_ARGUMENTS};
use super::{joined, preflight, App, READ_ALLOW};
use crate::http::{Body, Head, Method, Response};
use crate::metrics::{METRICS, ROUTE_X};
use crate::server::conn::{Handled, Work};
use crate::x::tools::{Finished, PrepareError, Served, ToolCall, Tools};

pub use crate::x::registry::reserved_names;

mod request;

pub use request::{
    match_path, negotiate, route_call, route_templates, Representation, RouteCall, XRoute,
};

/// Media type of the Markdown answers.
pub const MARKDOWN_MEDIA_TYPE: &str = "text/markdown; charset=utf-8";

/// The `405` of an X route, for a method other than GET, HEAD, OPTIONS.
pub fn method_not_allowed() -> Response {
    let mut r = problem(
        405,
        "method_not_allowed",
        "this route is read-only: use GET or HEAD; MCP clients POST JSON-RPC to /mcp",
        None,
    )
    .header("Allow", READ_ALLOW);
    r.trace.route = ROUTE_X;
    r
}

/// The X routes, sharing the MCP endpoint's [`Tools`] (one cache, one
/// upstream budget) and its per-client allowance.
pub struct XRoutes {
    tools: Arc<Tools>,
    limiter: Option<Arc<ClientLimiter>>,
}

impl XRoutes {
    /// The routes over the tool runner and the per-client limiter the MCP
    /// endpoint uses.
    pub fn new(tools: Arc<Tools>, limiter: Option<Arc<ClientLimiter>>) -> XRoutes {
        XRoutes { tools, limiter }
    }

    /// Answers `head` from `client` when its path is an X route (`None`
    /// otherwise): refusals now, tool runs later on a worker thread. A
    /// valid request spends one call of the client's allowance, as a
    /// `tools/call` does; past it the answer is `429` with `Retry-After`.
    pub fn handle(&self, head: &Head, client: IpAddr) -> Option<Handled> {
        let route = match_path(head.path())?;
        let now = |r: Response| {
            let mut r = r;
            r.trace.route = ROUTE_X;
            Some(Handled::Now(r))
        };
        match head.method {
            Method::Get | Method::Head => {}
            Method::Options => {
                return now(preflight(
                    READ_ALLOW,
                    head.header("access-control-request-headers"),
                ))
            }
            _ => return Some(Handled::Now(method_not_allowed())),
        }
        let rc = match route_call(route, head.query()) {
            Ok(rc) => rc,
            Err((code, message)) => return now(problem(400, code, &message, None)),
        };
        let call = match Tools::prepare(rc.tool.name(), Some(&rc.arguments)) {
            Ok(call) => ToolCall {
                client: Some(client),
                ..call
            },
            Err(PrepareError::InvalidArguments(m)) => {
                return now(problem(400, CODE_INVALID_ARGUMENTS, &m, None))
            }
            Err(PrepareError::UnknownTool) => {
                return now(problem(500, "internal_error", "route names no tool", None))
            }
        };
        if let Some(limiter) = &self.limiter {
            if let Err(wait) = limiter.check(client, std::time::Instant::now()) {
                METRICS.rejected(RATE_LIMITED_CODE);
                let mut refused = problem(
                    429,
                    RATE_LIMITED_CODE,
                    &rate_limited_text(wait),
                    Some(retry_secs(wait)),
                );
                // Logged as a refused tool call is on /mcp.
                refused.trace.tool = Some(call.name());
                refused.trace.error = Some(RATE_LIMITED_CODE.into());
                return now(refused);
            }
        }
        let repr = negotiate(rc.format.as_deref(), joined(head, "accept").as_deref());
        let if_none_match = joined(head, "if-none-match").map(std::borrow::Cow::into_owned);
        let tools = Arc::clone(&self.tools);
        let cancel = Arc::clone(&call.cancel);
        Some(Handled::Later(Box::new(Queued(cancel, move || {
            super::metered::take_cause();
            if call.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                // The client left while the call waited for a worker (or
                // for its upstream answers).
                METRICS.cancelled();
                return Some(Response::new(204));
            }
            let (finished, stats) = tools.run_guarded(&call);
            let mut response = match finished {
                // Waits for upstream answers (crate::x::restart).
                Finished::Suspended => return None,
                Finished::Served(served) => answer(&served, repr, if_none_match.as_deref()),
                Finished::Failed(e) => problem(e.status, e.code, &e.message, e.retry_after),
                Finished::Panicked => problem(
                    500,
                    "internal_error",
                    "Internal error: the tool failed unexpectedly.",
                    None,
                ),
            };
            response.trace.route = ROUTE_X;
            record_call(&stats, &mut response);
            if call.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                METRICS.cancelled();
            }
            Some(response)
        }))))
    }
}

/// A route's tool call waiting for a worker; when none can take it the
/// answer is a problem document like every other error of these routes.
struct Queued<F>(Arc<std::sync::atomic::AtomicBool>, F);

impl<F: Fn() -> Option<Response> + Send + 'static> Work for Queued<F> {
    fn run(self: Box<Self>) -> Response {
        match (self.1)() {
            Some(response) => response,
            // Only a restartable run suspends; the pool runs those by `step`.
            None => self.busy(),
        }
    }

    fn step(self: Box<Self>) -> crate::server::conn::Step {
        match (self.1)() {
            Some(response) => crate::server::conn::Step::Done(response),
            None => crate::server::conn::Step::Park(self),
        }
    }

    fn cancel_flag(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        Some(Arc::clone(&self.0))
    }

    /// `503` `server_busy` with `Retry-After: 1`.
    fn busy(self: Box<Self>) -> Response {
        let mut response = problem(
            503,
            CODE_SERVER_BUSY,
            "Every worker is busy and the tool-call queue is full; retry shortly.",
            Some(1),
        );
        response.trace.route = ROUTE_X;
        response
    }
}

/// The problem `code` of a route call refused because the worker queue is
/// full (see `--workers` and `--queue`).
pub const CODE_SERVER_BUSY: &str = "server_busy";

impl App {
    /// Every route this application answers, as OpenAPI paths: `/mcp`,
    /// the static documents, `/metrics` and the X route templates (the
    /// `/mcp/` alias is left out). For the documentation round-trip test.
    pub fn route_table(&self) -> Vec<String> {
        let mut out = vec!["/mcp".to_string(), "/metrics".to_string()];
        let mut statics: Vec<String> = self.routes.keys().map(|k| k.to_string()).collect();
        statics.sort();
        out.extend(statics);
        out.extend(route_templates().map(str::to_string));
        out
    }
}

/// The `200` (or `304`) for a served result: the chosen representation,
/// an `ETag`, `Cache-Control: public, max-age=<the result's remaining
/// freshness in seconds>` and `Vary: Accept, Origin`.
///
/// The Markdown's tag is strong, over its bytes. The JSON's carries the
/// served `cache` status (`miss`, then `hit` for the same data), so its tag
/// is weak (RFC 9110 §8.8.1), over the bytes without that member: the
/// same data keeps one tag, and a client revalidating with the tag of its
/// first fetch gets `304` (`If-None-Match` compares weakly, §13.1.2).
fn answer(served: &Served, repr: Representation, if_none_match: Option<&[u8]>) -> Response {
    let (content_type, bytes, tag) = match repr {
        Representation::Markdown => {
            let bytes = served.text.as_bytes().to_vec();
            let tag = etag(&bytes);
            (MARKDOWN_MEDIA_TYPE, bytes, tag)
        }
        Representation::Json => (
            "application/json",
            served.structured_json(),
            format!("W/{}", etag(&served.wire.structured)),
        ),
    };
    let cache_control = format!("public, max-age={}", served.fresh_for.as_secs());
    let r = if none_match(if_none_match, &tag) {
        Response::new(304)
    } else {
        Response::with_body(200, content_type, Body::Owned(bytes))
    };
    r.header("ETag", tag)
        .header("Cache-Control", cache_control)
        // Origin too: see App's `finish` (CORS and shared caches).
        .header("Vary", "Accept, Origin")
        .header("Access-Control-Expose-Headers", "ETag, Retry-After")
}
