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
mod cors;
mod deferred;
mod documents;
mod fair;
mod fallback;
mod head_checks;
pub mod landing;
pub mod limits;
pub mod metered;
pub mod origin;
mod replies;
pub mod statics;
pub mod upstream_check;
pub mod xhttp;
pub mod xroutes;

use std::collections::HashMap;
use std::sync::Arc;

use crate::config::Config;
use crate::http::accept::{self, Framing};
use crate::http::{Body, Method, Request, Response};
use crate::mcp::{self, Mcp, Outcome, Reply, ServerInfo};
use crate::metrics::METRICS;
use crate::server::conn::{Fallback, Handled, Handler};
use crate::x::tools::Tools;
use crate::x::upstream::Upstream;
use cors::{discovery_cors, finish, preflight, with_cors};
use deferred::{DeferredCall, Finished};
use documents::{server_card_text, DocBody, DocKind, StaticDoc};
use origin::{OriginPolicy, Verdict};
pub use replies::frame;
use replies::{joined, method_not_allowed, not_found, transport_error};

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

#[cfg(test)]
mod lazy_tests;
