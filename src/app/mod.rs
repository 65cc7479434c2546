//! The application behind the event loop: routes, method and media-type
//! checks, DNS-rebinding protection, CORS, and JSON or SSE framing of MCP
//! replies. The one place that knows both HTTP and MCP.
//!
//! | Route | Methods | Answer |
//! | --- | --- | --- |
//! | `/` | GET, HEAD | landing page (HTML): connect snippets for every client |
//! | `/mcp`, `/mcp/` | POST | JSON-RPC (both MCP eras) |
//! | | GET, HEAD | discovery manifest; `405` when `Accept` asks for `text/event-stream` |
//! | | OPTIONS | `204` CORS preflight |
//! | | DELETE, PUT, PATCH, CONNECT, TRACE | `405` with `Allow` |
//! | `/mcp/server-card`, `/.well-known/mcp/server-card.json` (old path) | GET, HEAD | server card |
//! | `/.well-known/ai-catalog.json` | GET, HEAD | AI Catalog naming the card |
//! | `/server.json` | GET, HEAD | registry manifest |
//! | `/healthz` | GET, HEAD | `{"status":"ok"}` |
//! | `/llms.txt`, `/llms-full.txt`, `/openapi.json`, `/index.md` | GET, HEAD | embedded documents |
//! | `/{handle}`, `/{handle}/status/{id}`, `/search`, … | GET, HEAD | the X routes (`xroutes.rs`) |
//! | anything else | any | `404` JSON |
//! | any | a method RFC 9110 does not define | `501` (`head_checks.rs`) |
//!
//! Query strings never change the route and nothing ever redirects.

pub mod client_addr;
mod fair;
mod fallback;
mod head_checks;
pub mod landing;
pub mod limits;
pub mod metered;
pub mod origin;
pub mod statics;
pub mod upstream_check;
pub mod xhttp;
pub mod xroutes;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::config::Config;
use crate::http::accept::{self, Framing};
use crate::http::{Body, Method, Request, Response};
use crate::mcp::{self, Mcp, Outcome, Reply, ServerInfo};
use crate::metrics::METRICS;
use crate::server::conn::{Fallback, Handled, Handler, Job, Step, Work};
use crate::x::tools::Tools;
use crate::x::upstream::Upstream;
use origin::{OriginPolicy, Verdict};

/// Media type of the server card.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// `Allow` for the MCP endpoint (RFC 9110 §10.2.1).
const MCP_ALLOW: &str = "GET, HEAD, POST, OPTIONS";
/// `Allow` for read-only routes.
const READ_ALLOW: &str = "GET, HEAD, OPTIONS";
/// The `405` message of every read-only route: names the MCP endpoint, the
/// one path that takes a POST (a client pointed at the base URL or a
/// document instead of `/mcp` learns where to send it).
pub const READ_ONLY_HINT: &str =
    "this resource is read-only (GET, HEAD); MCP clients POST JSON-RPC to /mcp";
/// Request headers a browser client may send (CORS preflight answer).
const CORS_ALLOW_HEADERS: &str = "Content-Type, Accept, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID";
/// Preflight cache lifetime in seconds.
const CORS_MAX_AGE_SECS: &str = "86400";

/// A document served at a fixed path.
struct StaticDoc {
    content_type: &'static str,
    body: DocBody,
    route: usize,
}

/// A document's bytes: compiled in, or built on the first request.
enum DocBody {
    Static(&'static [u8]),
    Lazy(DocKind, OnceLock<Arc<[u8]>>),
}

/// Which document a lazily built body is.
#[derive(Clone, Copy)]
enum DocKind {
    ServerCard,
    AiCatalog,
    ServerJson,
    Manifest,
    Landing,
    Embedded(&'static crate::docs::Doc),
}

impl DocKind {
    fn build(self, public: &str) -> Vec<u8> {
        match self {
            DocKind::ServerCard => server_card_text(public).into_bytes(),
            DocKind::AiCatalog => {
                crate::json::to_string_pretty(&statics::ai_catalog(public)).into_bytes()
            }
            DocKind::ServerJson => crate::json::to_vec(&statics::server_json(public)),
            DocKind::Manifest => {
                crate::json::to_vec(&statics::manifest(public, &statics::server_card(public)))
            }
            DocKind::Landing => landing::page(public).into_bytes(),
            DocKind::Embedded(doc) => crate::docs::render(doc.template, public).into_bytes(),
        }
    }
}

impl StaticDoc {
    fn lazy(content_type: &'static str, kind: DocKind, route: usize) -> StaticDoc {
        StaticDoc {
            content_type,
            body: DocBody::Lazy(kind, OnceLock::new()),
            route,
        }
    }

    fn body(&self, public: &str) -> Body {
        match &self.body {
            DocBody::Static(bytes) => Body::Static(bytes),
            DocBody::Lazy(kind, slot) => {
                Body::Shared(Arc::clone(slot.get_or_init(|| kind.build(public).into())))
            }
        }
    }
}

/// The server card as served and as the MCP resource: pretty JSON.
fn server_card_text(public: &str) -> String {
    crate::json::to_string_pretty(&statics::server_card(public))
}

/// Route indexes into [`crate::metrics::ROUTES`].
const ROUTE_MCP: usize = 0;
const ROUTE_SERVER_CARD: usize = 1;
const ROUTE_SERVER_JSON: usize = 2;
const ROUTE_HEALTHZ: usize = 3;
const ROUTE_DOCS: usize = 4;
const ROUTE_LANDING: usize = 5;
const ROUTE_METRICS: usize = 6;

/// Media type of the Prometheus text exposition format.
pub const METRICS_MEDIA_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn routed(mut response: Response, route: usize) -> Response {
    response.trace.route = route;
    response
}

fn metrics_route(method: &Method) -> Response {
    match method {
        Method::Get | Method::Head => Response::with_body(
            200,
            METRICS_MEDIA_TYPE,
            Body::Owned(METRICS.render().into_bytes()),
        ),
        Method::Options => preflight(READ_ALLOW, None),
        _ => method_not_allowed(READ_ALLOW, READ_ONLY_HINT),
    }
}

/// The handler for the event loop.
pub struct App {
    mcp: Arc<Mcp>,
    /// Per-client allowance for tool runs, on `/mcp` and the X routes
    /// alike; `None` when `--rate-limit 0`.
    limiter: Option<Arc<limits::ClientLimiter>>,
    /// Public base URL (no trailing slash) the documents are built for.
    public: String,
    /// Path to an index into `docs`.
    routes: HashMap<&'static str, usize>,
    docs: Vec<StaticDoc>,
    manifest: StaticDoc,
    policy: OriginPolicy,
    xroutes: xroutes::XRoutes,
    /// The tool calls' working budget (`--max-working-bytes`).
    work: Arc<crate::x::memory::WorkBudget>,
    /// Who may report the client address (`--trusted-proxies`).
    proxies: crate::config::proxies::TrustedProxies,
}

impl App {
    /// Builds the application over an upstream. Every static document
    /// (and MCP result) is built on its first request and kept.
    pub fn new(config: &Config, upstream: Arc<dyn Upstream>) -> App {
        App::with_fallback(config, upstream, None)
    }

    /// The tool calls' working budget (`--max-working-bytes`), which the
    /// event-loop upstream counts bodies in before it reads them
    /// ([`crate::x::loopio::Transport::meter`]).
    pub fn work_budget(&self) -> Arc<crate::x::memory::WorkBudget> {
        Arc::clone(&self.work)
    }

    /// Like [`App::new`], with a second provider of single posts, X's
    /// syndication endpoint (`None`: no fallback). `config` only gives
    /// its settings; the caller builds it, as it builds `upstream`.
    pub fn with_fallback(
        config: &Config,
        upstream: Arc<dyn Upstream>,
        fallback: Option<Arc<dyn Upstream>>,
    ) -> App {
        let public = config.public_url.trim_end_matches('/').to_string();
        let metered: Arc<dyn Upstream> = Arc::new(metered::Metered(upstream));
        let budgeted = (config.upstream_budget > 0).then(|| {
            Arc::new(limits::Budgeted::new(
                metered.clone(),
                config.upstream_budget,
            ))
        });
        let upstream: Arc<dyn Upstream> = match &budgeted {
            Some(b) => b.clone(),
            None => metered,
        };
        let mut tools = Tools::with_cache_bytes(upstream, config.cache_bytes)
            .with_working_bytes(config.max_working_bytes)
            .with_settings(crate::x::budget::Settings {
                max_chars: config.max_result_chars,
                public_url: public.clone(),
                call_timeout: config.call_timeout,
                cursor_key: config
                    .cursor_secret
                    .as_ref()
                    .map_or_else(crate::x::cursor::CursorKey::random, |s| {
                        crate::x::cursor::CursorKey::from_secret(&s.0)
                    }),
            });
        if let Some(fallback) = fallback {
            tools = tools.with_fallback(Arc::new(metered::MeteredFallback(fallback)));
        }
        if let Some(budget) = budgeted.filter(|_| config.rate_limit > 0) {
            tools = tools.with_per_client(Arc::new(limits::UpstreamShares::new(budget)));
        }
        let work = Arc::clone(tools.work());
        let tools = Arc::new(tools);
        let limiter = (config.rate_limit > 0).then(|| {
            Arc::new(limits::ClientLimiter::new(
                config.rate_limit,
                config.rate_burst,
            ))
        });
        let info = ServerInfo {
            name: statics::SERVER_NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            public_url: public.clone(),
        };
        let xroutes = xroutes::XRoutes::new(Arc::clone(&tools), limiter.clone());
        // The tool-result cache shares the cache setting: half the upstream
        // budget, off when the upstream cache is off.
        let resources_url = public.clone();
        let mcp = Arc::new(
            Mcp::with_lazy_resources(
                info,
                move || crate::docs::resources(&resources_url, &server_card_text(&resources_url)),
                tools,
            )
            .with_result_cache_bytes(config.cache_bytes / 2),
        );
        let mut docs = vec![
            StaticDoc::lazy(
                SERVER_CARD_MEDIA_TYPE,
                DocKind::ServerCard,
                ROUTE_SERVER_CARD,
            ),
            StaticDoc::lazy("application/json", DocKind::ServerJson, ROUTE_SERVER_JSON),
            StaticDoc {
                content_type: "application/json",
                body: DocBody::Static(b"{\"status\":\"ok\"}"),
                route: ROUTE_HEALTHZ,
            },
            StaticDoc::lazy(landing::CONTENT_TYPE, DocKind::Landing, ROUTE_LANDING),
            StaticDoc::lazy(
                statics::AI_CATALOG_MEDIA_TYPE,
                DocKind::AiCatalog,
                ROUTE_SERVER_CARD,
            ),
        ];
        let mut routes = HashMap::from([
            (statics::SERVER_CARD_PATH, 0),
            (statics::OLD_SERVER_CARD_PATH, 0),
            ("/server.json", 1),
            ("/healthz", 2),
            ("/", 3),
            (statics::AI_CATALOG_PATH, 4),
        ]);
        for doc in crate::docs::DOCS {
            routes.insert(doc.path, docs.len());
            docs.push(StaticDoc::lazy(
                doc.mime_type,
                DocKind::Embedded(doc),
                ROUTE_DOCS,
            ));
        }
        let manifest = StaticDoc::lazy("application/json", DocKind::Manifest, ROUTE_MCP);
        let policy = OriginPolicy::new(
            config.listen.ip(),
            &public,
            config.allowed_origins.as_deref(),
        );
        App {
            mcp,
            limiter,
            public,
            routes,
            docs,
            manifest,
            policy,
            xroutes,
            work,
            proxies: config.trusted_proxies.clone(),
        }
    }

    /// The server card and the AI Catalog as SEP-2127's draft asks
    /// ("Caching"): `Cache-Control: public, max-age=3600`, an `ETag` over
    /// the body, and `304 Not Modified` for a matching `If-None-Match`.
    fn discovery_caching(
        &self,
        response: Response,
        head: &crate::http::Head,
        doc: &StaticDoc,
    ) -> Response {
        let response = discovery_cors(response);
        if response.status != 200 {
            return response;
        }
        let tag = match doc.body(&self.public) {
            Body::Shared(b) => xhttp::etag(&b),
            Body::Static(b) => xhttp::etag(b),
            _ => return response,
        };
        let response = if xhttp::none_match(head.header("if-none-match"), &tag) {
            Response::new(304)
        } else {
            response
        };
        response
            .header("ETag", tag)
            .header("Cache-Control", "public, max-age=3600")
    }

    /// Whether `path` is the server card (either path) or the AI Catalog.
    pub(super) fn is_discovery(&self, path: &str) -> bool {
        self.routes
            .get(path)
            .and_then(|&i| self.docs.get(i))
            .is_some_and(|d| d.route == ROUTE_SERVER_CARD)
    }

    fn static_route(&self, method: &Method, doc: &StaticDoc) -> Response {
        match method {
            Method::Get | Method::Head => {
                Response::with_body(200, doc.content_type, doc.body(&self.public))
            }
            Method::Options => preflight(READ_ALLOW, None),
            _ => method_not_allowed(READ_ALLOW, READ_ONLY_HINT),
        }
    }

    fn mcp_endpoint(&self, request: Request, client: std::net::IpAddr) -> Handled {
        let head = &request.head;
        match head.method {
            Method::Post => {}
            Method::Get | Method::Head => {
                let accept = joined(head, "accept");
                if accept::names_event_stream(accept.as_deref()) {
                    return Handled::Now(method_not_allowed(
                        MCP_ALLOW,
                        "this server opens no standalone SSE stream; POST JSON-RPC requests instead",
                    ));
                }
                return Handled::Now(self.static_route(&head.method, &self.manifest));
            }
            Method::Options => {
                return Handled::Now(preflight(
                    MCP_ALLOW,
                    head.header("access-control-request-headers"),
                ))
            }
            Method::Delete => {
                return Handled::Now(method_not_allowed(
                    MCP_ALLOW,
                    "this server keeps no sessions to delete",
                ))
            }
            _ => return Handled::Now(method_not_allowed(MCP_ALLOW, "use POST for JSON-RPC")),
        }
        if let Some(refusal) = head_checks::mcp_post_refusal(head) {
            return Handled::Now(refusal);
        }
        let Some(framing) = accept::choose_framing(joined(head, "accept").as_deref()) else {
            return Handled::Now(transport_error(
                406,
                "Not Acceptable: accept application/json or text/event-stream",
            ));
        };
        let lookup = |name: &str| head.header(name);
        let (outcome, method) = self.mcp.handle_traced(&lookup, &request.body);
        match outcome {
            Outcome::Reply(reply) => {
                METRICS.rpc(method.as_deref(), reply.status);
                let mut response = frame(reply, framing);
                response.trace.rpc_method = method.map(String::into_boxed_str);
                Handled::Now(response)
            }
            Outcome::Call(call) => {
                if let Some(refused) = self.rate_limited(&call, client) {
                    METRICS.rpc(Some("tools/call"), refused.status);
                    let mut response = frame(refused, framing);
                    response.trace.rpc_method = Some("tools/call".into());
                    response.trace.tool = Some(call.call().name());
                    METRICS.tool_error(limits::RATE_LIMITED_CODE);
                    response.trace.error = Some(limits::RATE_LIMITED_CODE.into());
                    return Handled::Now(response);
                }
                self.defer(call.for_client(client), framing)
            }
        }
    }

    /// The `isError` answer for a client past its `tools/call` rate, if it is.
    fn rate_limited(&self, call: &mcp::PendingCall, client: std::net::IpAddr) -> Option<Reply> {
        let wait = self
            .limiter
            .as_ref()?
            .check(client, std::time::Instant::now())
            .err()?;
        Some(call.reply(&crate::x::tools::ToolOutput {
            text: limits::rate_limited_text(wait),
            structured: None,
            is_error: true,
        }))
    }

    /// Hands a validated `tools/call` to a worker.
    fn defer(&self, call: mcp::PendingCall, framing: Framing) -> Handled {
        Handled::Later(Box::new(DeferredCall { call, framing }))
    }
}

/// A `tools/call` waiting for a worker.
struct DeferredCall {
    call: mcp::PendingCall,
    framing: Framing,
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
struct Finished {
    inner: Job,
    origin: Option<String>,
    client: Option<std::net::IpAddr>,
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

/// The CORS headers SEP-2127 ("CORS Requirements") asks of a hosted
/// server card, on every answer of the card and the AI Catalog (200, 304,
/// the `OPTIONS` preflight, a refused method): any origin may read them,
/// with `If-None-Match` and its `ETag`. Their request's `Origin` is not
/// checked ([`App::admit`]), so [`finish`] adds no echoed origin.
fn discovery_cors(mut response: Response) -> Response {
    // The preflight's own lists give way to the draft's.
    response.headers.retain(|(k, _)| {
        !k.eq_ignore_ascii_case("Access-Control-Allow-Methods")
            && !k.eq_ignore_ascii_case("Access-Control-Allow-Headers")
    });
    response
        .header("Access-Control-Allow-Origin", "*")
        .header("Access-Control-Allow-Methods", "GET")
        .header(
            "Access-Control-Allow-Headers",
            "Content-Type, If-None-Match",
        )
        .header("Access-Control-Expose-Headers", "ETag")
}

/// Adds the CORS headers for `origin` and traces the forwarded client.
/// `Vary: Origin` goes on every answer a cache may store, with an `Origin`
/// or without: the answer to a request without one has no
/// `Access-Control-Allow-Origin`, and a shared cache must not give it to a
/// browser's request that has one (Fetch standard, "CORS protocol and HTTP
/// caches").
fn finish(
    mut response: Response,
    origin: Option<String>,
    client: Option<std::net::IpAddr>,
) -> Response {
    response.trace.client = client;
    match origin {
        Some(origin) => with_cors(response, origin),
        None => {
            let storable = response
                .headers
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("Cache-Control") && !v.contains("no-store"));
            if storable {
                vary_origin(&mut response);
            }
            response
        }
    }
}

impl Handler for App {
    fn check_head(&self, head: &crate::http::Head) -> Option<Response> {
        self.refuse_head(head)
    }

    fn fallback(&self, fallback: Fallback) -> Response {
        fallback::answer(fallback)
    }

    fn handle(&self, request: Request) -> Handled {
        let head = &request.head;
        let forwarded = self.proxies.forwarded_client(request.peer, head);
        let client = forwarded.unwrap_or_else(|| request.peer.ip());
        let cors_origin = match self.admit(head) {
            Ok(origin) => origin,
            Err(refusal) => return Handled::Now(*refusal),
        };
        let path = head.path();
        let handled = if path == "/mcp" || path == "/mcp/" {
            match self.mcp_endpoint(request, client) {
                Handled::Now(r) => Handled::Now(routed(r, ROUTE_MCP)),
                later => later,
            }
        } else if let Some(doc) = self.routes.get(path).and_then(|&i| self.docs.get(i)) {
            let r = self.static_route(&head.method, doc);
            let r = if doc.route == ROUTE_SERVER_CARD {
                self.discovery_caching(r, head, doc)
            } else {
                r
            };
            Handled::Now(routed(r, doc.route))
        } else if path == "/metrics" {
            Handled::Now(routed(metrics_route(&head.method), ROUTE_METRICS))
        } else if let Some(handled) = self.xroutes.handle(head, client) {
            handled
        } else {
            Handled::Now(routed(not_found(), crate::metrics::ROUTE_NOT_FOUND))
        };
        match handled {
            Handled::Now(r) => Handled::Now(finish(r, cors_origin, forwarded)),
            Handled::Later(inner) if cors_origin.is_none() && forwarded.is_none() => {
                Handled::Later(inner)
            }
            Handled::Later(inner) => Handled::Later(Box::new(Finished {
                inner,
                origin: cors_origin,
                client: forwarded,
            })),
        }
    }
}

/// All values of a header joined with commas (RFC 9110 §5.3); borrowed
/// when the header appears once.
fn joined<'a>(head: &'a crate::http::Head, name: &'a str) -> Option<Cow<'a, [u8]>> {
    let mut values = head.headers_named(name);
    let first = values.next()?;
    let Some(second) = values.next() else {
        return Some(Cow::Borrowed(first));
    };
    let mut out = first.to_vec();
    for v in std::iter::once(second).chain(values) {
        out.push(b',');
        out.extend_from_slice(v);
    }
    Some(Cow::Owned(out))
}

/// Frames an MCP reply: `202` without body, JSON, or one SSE frame. Error
/// statuses always go out as JSON so every client can read them.
pub fn frame(reply: Reply, framing: Framing) -> Response {
    let Some(body) = reply.body else {
        return Response::new(202);
    };
    if framing == Framing::Sse && reply.status == 200 {
        let mut prefix = Vec::with_capacity(body.len() + 24);
        prefix.extend_from_slice(b"event: message\ndata: ");
        prefix.extend_from_slice(&body);
        let sse = match reply.tail {
            Some(shared) => Body::Spliced {
                prefix,
                shared,
                suffix: b"\n\n",
            },
            None => {
                prefix.extend_from_slice(b"\n\n");
                Body::Owned(prefix)
            }
        };
        return Response::with_body(200, "text/event-stream", sse)
            .header("Cache-Control", "no-cache")
            .header("X-Accel-Buffering", "no");
    }
    let json = match reply.tail {
        Some(shared) => Body::Spliced {
            prefix: body,
            shared,
            suffix: b"",
        },
        None => Body::Owned(body),
    };
    Response::with_body(reply.status, "application/json", json)
}

fn transport_error(status: u16, message: &str) -> Response {
    METRICS.rejected(crate::metrics::rejection_reason(status));
    Response::with_body(
        status,
        "application/json",
        Body::Owned(mcp::error_without_id(-32600, message)),
    )
}

fn method_not_allowed(allow: &'static str, message: &str) -> Response {
    transport_error(405, &format!("Method Not Allowed: {message}")).header("Allow", allow)
}

fn not_found() -> Response {
    Response::with_body(
        404,
        "application/json",
        Body::Static(br#"{"error":"not_found","message":"No such route. The MCP endpoint is POST /mcp; see /llms.txt."}"#),
    )
}

/// A `204` CORS preflight answer. The allowed request headers are our fixed
/// list plus whatever the browser asked for (when every name is a valid
/// token), so `Mcp-Param-*` headers pass too.
fn preflight(allow: &'static str, requested: Option<&[u8]>) -> Response {
    let mut headers = String::from(CORS_ALLOW_HEADERS);
    if let Some(req) = requested {
        let names: Vec<&[u8]> = req
            .split(|b| *b == b',')
            .map(crate::text::trim_ows)
            .filter(|n| !n.is_empty())
            .collect();
        let valid = names.iter().all(|n| {
            n.len() <= 64
                && n.iter()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(b))
        });
        if valid {
            for n in names {
                let n = String::from_utf8_lossy(n);
                if !headers
                    .to_ascii_lowercase()
                    .split(", ")
                    .any(|h| h == n.to_ascii_lowercase())
                {
                    headers.push_str(", ");
                    headers.push_str(&n);
                }
            }
        }
    }
    Response::new(204)
        .header("Allow", allow)
        .header("Access-Control-Allow-Methods", allow)
        .header("Access-Control-Allow-Headers", headers)
        .header("Access-Control-Max-Age", CORS_MAX_AGE_SECS)
}

fn with_cors(mut response: Response, origin: String) -> Response {
    response
        .headers
        .push(("Access-Control-Allow-Origin", Cow::Owned(origin)));
    vary_origin(&mut response);
    if response.status != 204 {
        response.headers.push((
            "Access-Control-Expose-Headers",
            Cow::Borrowed("Mcp-Session-Id, MCP-Protocol-Version"),
        ));
    }
    response
}

/// Adds `Vary: Origin` unless a `Vary` of the response names it already
/// (the X routes' answers do, since their workers' answers skip
/// [`finish`] when there is no `Origin`).
fn vary_origin(response: &mut Response) {
    let named = response.headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("Vary")
            && v.split(',')
                .any(|f| f.trim().eq_ignore_ascii_case("Origin"))
    });
    if !named {
        response.headers.push(("Vary", Cow::Borrowed("Origin")));
    }
}

#[cfg(test)]
mod lazy_tests;
