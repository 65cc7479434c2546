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

use serde_json::{Map, Value};

use super::limits::{rate_limited_text, retry_secs, ClientLimiter, RATE_LIMITED_CODE};
use super::xhttp::{
    etag, none_match, parse_query, problem, record_call, CODE_INVALID_ARGUMENTS, CODE_INVALID_QUERY,
};
use super::{joined, preflight, App, READ_ALLOW};
use crate::http::accept::quality;
use crate::http::{Body, Head, Method, Response};
use crate::metrics::{METRICS, ROUTE_X};
use crate::server::conn::{Handled, Work};
use crate::x::args::Kind;
use crate::x::registry::{is_route_handle, match_template, Route, Tool};
use crate::x::tools::{Finished, PrepareError, Served, ToolCall, Tools};
use crate::x::url::is_id;

pub use crate::x::registry::reserved_names;

/// The X routes as OpenAPI path templates, in registry order (each
/// tool's [`Route`]s from the tool registry).
pub fn route_templates() -> impl Iterator<Item = &'static str> {
    Tool::ALL
        .into_iter()
        .flat_map(|t| t.spec().routes.iter().map(|r| r.template))
}

/// Media type of the Markdown answers.
pub const MARKDOWN_MEDIA_TYPE: &str = "text/markdown; charset=utf-8";

/// `format` values of the list routes (HTTP only: the tools have none).
const LIST_FORMATS: [&str; 2] = ["markdown", "json"];

/// A matched X route: the tool, which of its routes, and the path's
/// `{handle}` and `{id}` segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XRoute<'a> {
    /// The tool the route runs.
    pub tool: Tool,
    /// The route (from the tool registry).
    pub route: &'static Route,
    /// The `{handle}` segment, or the route's fixed handle.
    pub handle: Option<&'a str>,
    /// The `{id}` segment.
    pub id: Option<&'a str>,
}

/// Matches a request path (without query) against the X routes of the
/// tool registry. A handle segment is 1–20 letters, digits or underscores
/// and not one of [`reserved_names`]; an id segment is 1–20 digits;
/// anything else (a trailing slash too) is not an X route.
pub fn match_path(path: &str) -> Option<XRoute<'_>> {
    let ok = |name: &str, seg: &str| match name {
        "handle" => is_route_handle(seg),
        "id" => is_id(seg),
        _ => false,
    };
    Tool::ALL.into_iter().find_map(|tool| {
        tool.spec().routes.iter().find_map(|route| {
            let caps = match_template(route.template, path, ok)?;
            Some(XRoute {
                tool,
                route,
                handle: caps.handle.or(route.fixed_handle),
                id: caps.id,
            })
        })
    })
}

/// Which representation a successful answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// The tool's Markdown, `text/markdown; charset=utf-8`.
    Markdown,
    /// The tool's `structuredContent`, `application/json`.
    Json,
}

/// Content negotiation: an explicit `format` decides (`json` → JSON;
/// `markdown`, `obsidian` → Markdown); otherwise JSON only when `Accept`
/// gives `application/json` a higher weight than `text/markdown` (a tie,
/// `*/*` or no `Accept` → Markdown). An `Accept` that admits neither still
/// gets Markdown (RFC 9110 §12.5.1 lets a server disregard it).
pub fn negotiate(format: Option<&str>, accept: Option<&[u8]>) -> Representation {
    match format {
        Some("json") => Representation::Json,
        Some(_) => Representation::Markdown,
        None => {
            if quality(accept, b"application", b"json") > quality(accept, b"text", b"markdown") {
                Representation::Json
            } else {
                Representation::Markdown
            }
        }
    }
}

/// A request turned into a tool call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteCall {
    /// The tool.
    pub tool: Tool,
    /// The arguments for `Tools::prepare`.
    pub arguments: Value,
    /// The `format` query parameter, when given.
    pub format: Option<String>,
}

/// Builds the tool arguments of a route from its path and query. Values
/// are typed from the tool's argument table: integers parse as numbers,
/// `true`/`1` and `false`/`0` as booleans; anything else stays a string so
/// `Tools::prepare` refuses it with the tool's own message.
///
/// # Errors
///
/// `(code, message)` for a query that cannot be decoded, a parameter the
/// route does not take, a bad list `format`, or `/api/convert` without
/// `url`.
pub fn route_call(
    route: XRoute<'_>,
    query: Option<&str>,
) -> Result<RouteCall, (&'static str, String)> {
    let params = parse_query(query).map_err(|m| (CODE_INVALID_QUERY, m))?;
    let tool = route.tool;
    let allowed = route.route;
    let props = tool.spec().props;
    let mut args = Map::new();
    if let Some(handle) = route.handle {
        args.insert("handle".into(), Value::from(handle));
    }
    if let Some(id) = route.id {
        args.insert("id".into(), Value::from(id));
    }
    for (name, value) in route.route.fixed {
        args.insert((*name).into(), Value::from(*value));
    }
    let mut format = None;
    for (name, value) in params {
        if !allowed.query_params().any(|p| p == name) {
            let shown: String = name.chars().take(40).collect();
            return Err((
                CODE_INVALID_QUERY,
                format!(
                    "unknown query parameter `{shown}`; this route takes: {}",
                    allowed.query_params().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if name == "format" {
            let list_route = !tool.takes_format();
            if list_route && !LIST_FORMATS.contains(&value.as_str()) {
                return Err((
                    CODE_INVALID_ARGUMENTS,
                    format!("`format` must be one of: {}", LIST_FORMATS.join(", ")),
                ));
            }
            format = Some(value.clone());
            if list_route {
                continue;
            }
        }
        let kind = props.iter().find(|p| p.name == name).map(|p| p.kind);
        let typed = match kind {
            Some(Kind::Int { .. }) => value
                .parse::<i64>()
                .map_or_else(|_| Value::from(value.as_str()), Value::from),
            Some(Kind::Bool) => match value.as_str() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => Value::from(value),
            },
            _ => Value::from(value),
        };
        args.insert(name, typed);
    }
    if let Some((param, example)) = route.route.required {
        if !args.contains_key(param) {
            return Err((
                CODE_INVALID_ARGUMENTS,
                format!("missing required query parameter `{param}`, e.g. {example}"),
            ));
        }
    }
    Ok(RouteCall {
        tool,
        arguments: Value::Object(args),
        format,
    })
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The matched tool, template, handle and id of a path.
    fn matched(path: &str) -> Option<(Tool, &'static str, Option<&str>, Option<&str>)> {
        match_path(path).map(|r| (r.tool, r.route.template, r.handle, r.id))
    }

    /// The route of `tool` with `template`, for `route_call`.
    fn route<'a>(template: &str, handle: Option<&'a str>, id: Option<&'a str>) -> XRoute<'a> {
        let (tool, route) = Tool::ALL
            .into_iter()
            .find_map(|t| {
                t.spec()
                    .routes
                    .iter()
                    .find(|r| r.template == template)
                    .map(|r| (t, r))
            })
            .unwrap();
        XRoute {
            tool,
            route,
            handle: handle.or(route.fixed_handle),
            id,
        }
    }

    #[test]
    fn paths_and_reserved_names() {
        assert_eq!(
            matched("/demo_author/status/2085826244871471104"),
            Some((
                Tool::GetPost,
                "/{handle}/status/{id}",
                Some("demo_author"),
                Some("2085826244871471104")
            ))
        );
        assert_eq!(
            matched("/i/status/18"),
            Some((Tool::GetPost, "/i/status/{id}", Some("i"), Some("18")))
        );
        assert_eq!(
            matched("/demo_author"),
            Some((Tool::GetProfile, "/{handle}", Some("demo_author"), None))
        );
        assert_eq!(
            matched("/a/following"),
            Some((Tool::GetFollowing, "/{handle}/following", Some("a"), None))
        );
        assert_eq!(
            matched("/a/followers"),
            Some((Tool::GetFollowers, "/{handle}/followers", Some("a"), None))
        );
        assert_eq!(
            matched("/search"),
            Some((Tool::SearchPosts, "/search", None, None))
        );
        assert_eq!(
            matched("/api/convert"),
            Some((Tool::GetPost, "/api/convert", None, None))
        );
        assert_eq!(
            matched("/a/media"),
            Some((Tool::GetProfile, "/{handle}/media", Some("a"), None))
        );
        assert_eq!(
            matched("/a/articles"),
            Some((Tool::GetProfile, "/{handle}/articles", Some("a"), None))
        );
        assert_eq!(
            matched("/explore/tabs/trending"),
            Some((Tool::GetTrends, "/explore/tabs/trending", None, None))
        );
        for not in [
            "/",
            "/i",
            "/I",
            "/metrics",
            "/Metrics/followers",
            "/healthz/following",
            "/mcp/status/1",
            "/api",
            "/search/followers",
            "/demo_author/",
            "/demo_author/status/",
            "/a/status/12x",
            "/a/status/123456789012345678901",
            "/twenty_one_chars_xxxx",
            "/a.b",
            "/@demo",
            "/a/likes",
            "/a/status/1/photo/1",
            "/i/followers",
            "/explore",
            "/Explore/media",
            "/explore/tabs",
            "/explore/tabs/trending/",
            "//a",
        ] {
            assert_eq!(match_path(not), None, "{not}");
        }
    }

    #[test]
    fn every_literal_first_segment_is_reserved() {
        for t in route_templates() {
            let first = t.trim_start_matches('/').split('/').next().unwrap();
            if !first.starts_with('{') {
                assert!(reserved_names().contains(&first), "{t}");
            }
        }
    }

    #[test]
    fn negotiation_rules() {
        use Representation::*;
        let n = |f: Option<&str>, a: Option<&str>| negotiate(f, a.map(str::as_bytes));
        assert_eq!(n(None, None), Markdown);
        assert_eq!(n(None, Some("*/*")), Markdown);
        assert_eq!(n(None, Some("application/json")), Json);
        assert_eq!(n(None, Some("application/json, text/markdown")), Markdown);
        assert_eq!(n(None, Some("text/markdown;q=0.5, application/json")), Json);
        assert_eq!(n(None, Some("text/html")), Markdown);
        assert_eq!(n(None, Some("text/html,*/*;q=0.8")), Markdown);
        assert_eq!(n(Some("json"), Some("text/markdown")), Json);
        assert_eq!(n(Some("markdown"), Some("application/json")), Markdown);
        assert_eq!(n(Some("obsidian"), Some("application/json")), Markdown);
    }

    #[test]
    fn query_becomes_typed_arguments() {
        let rc = route_call(
            route("/{handle}/status/{id}", Some("demo_author"), Some("18")),
            Some("thread=off&max_posts=5&full=true&format=obsidian"),
        )
        .unwrap();
        assert_eq!(rc.tool, Tool::GetPost);
        assert_eq!(
            rc.arguments,
            json!({"handle": "demo_author", "id": "18", "thread": "off", "max_posts": 5, "full": true, "format": "obsidian"})
        );
        assert_eq!(rc.format.as_deref(), Some("obsidian"));
        let rc = route_call(
            route("/search", None, None),
            Some("q=a+b&limit=x&full=0&format=json"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"q": "a b", "limit": "x", "full": false})
        );
        assert_eq!(rc.format.as_deref(), Some("json"));
        let e = Tools::prepare(rc.tool.name(), Some(&rc.arguments)).unwrap_err();
        assert_eq!(
            e,
            PrepareError::InvalidArguments("`limit` must be an integer from 1 to 20".into())
        );
        assert_eq!(
            route_call(route("/{handle}", Some("a"), None), Some("handle=b")).unwrap_err(),
            (
                CODE_INVALID_QUERY,
                "unknown query parameter `handle`; this route takes: feed, with_replies, since, page, limit, cursor, full, format, max_chars".into()
            )
        );
        assert_eq!(
            route_call(route("/{handle}", Some("a"), None), Some("format=obsidian")).unwrap_err(),
            (
                CODE_INVALID_ARGUMENTS,
                "`format` must be one of: markdown, json".into()
            )
        );
        // A tab's route sets `feed` itself, and takes no `feed`.
        let rc = route_call(
            route("/{handle}/media", Some("a"), None),
            Some("since=5&limit=2"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"handle": "a", "feed": "media", "since": "5", "limit": 2})
        );
        assert_eq!(
            route_call(
                route("/{handle}/media", Some("a"), None),
                Some("feed=posts")
            )
            .unwrap_err()
            .0,
            CODE_INVALID_QUERY
        );
        assert_eq!(
            route_call(route("/api/convert", None, None), None)
                .unwrap_err()
                .0,
            CODE_INVALID_ARGUMENTS
        );
        let rc = route_call(
            route("/api/convert", None, None),
            Some("url=x.com%2Fa%2Fstatus%2F5&thread=off"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"url": "x.com/a/status/5", "thread": "off"})
        );
    }
}
