//! The checks a request head passes before its body matters: the host
//! (RFC 9112 §3.2, absolute-form authority included), routing headers
//! that may appear once, the Host/Origin policy, then routing, method and
//! media type. `App::handle` runs the first three on every request; the
//! event loop asks for all of them before it sends `100 Continue`.

use super::{
    joined, method_not_allowed, metrics_route, not_found, routed, transport_error, with_cors,
    xroutes, App, Verdict, MCP_ALLOW, ROUTE_MCP, ROUTE_METRICS,
};
use crate::http::accept;
use crate::http::{Method, Response};

/// Headers that may appear at most once; a repeated one is answered
/// `400`. The routing headers: the first and the last could disagree
/// about where the request goes or under which revision it runs. `Origin`
/// (RFC 6454 §7.3: a user agent sends at most one): the DNS-rebinding
/// check reads one, and a second must not slip past it.
const SINGLE_HEADERS: [&str; 4] = ["Mcp-Method", "Mcp-Name", "MCP-Protocol-Version", "Origin"];

/// The methods RFC 9110 §9.3 defines and PATCH (RFC 5789) that
/// [`Method`] has no variant of: recognized, so a route that does not
/// allow them answers `405`; any other token is answered `501`.
const OTHER_KNOWN_METHODS: [&str; 2] = ["CONNECT", "TRACE"];

impl App {
    /// The checks every request passes before routing: the host (one
    /// `Host` line, or an absolute-form target's authority, RFC 9112
    /// §3.2), single headers, the Host/Origin policy, and a recognized
    /// method. Returns the CORS origin to echo, or the refusal.
    pub(super) fn admit(&self, head: &crate::http::Head) -> Result<Option<String>, Box<Response>> {
        let refuse = |r: Response| Err(Box::new(r));
        let host = match head.authority() {
            Ok(host) => host,
            Err(why) => {
                return refuse(transport_error(400, &format!("Bad Request: {why}")).closing())
            }
        };
        if head.minor_version >= 1 && head.header("host").is_none() {
            return refuse(
                transport_error(400, "Bad Request: HTTP/1.1 requests need a Host header").closing(),
            );
        }
        if let Some(name) = SINGLE_HEADERS.iter().find(|n| head.count(n) > 1) {
            return refuse(transport_error(
                400,
                &format!("Bad Request: more than one {name} header"),
            ));
        }
        // The server card and the AI Catalog are public, read-only
        // metadata that SEP-2127 ("CORS Requirements") asks to serve to
        // any origin (`Access-Control-Allow-Origin: *`,
        // [`App::discovery_headers`]): their Origin is not checked, their
        // Host is.
        let origin_header = if self.is_discovery(head.path()) {
            None
        } else {
            head.header("origin")
        };
        let origin = match self.policy.check(host, origin_header) {
            Verdict::Allow(origin) => origin,
            Verdict::Forbid(why) => {
                return refuse(transport_error(403, &format!("Forbidden: {why}")))
            }
        };
        // RFC 9110 §9.1: an unrecognized method (method names are
        // case-sensitive, so `get` is one) is `501`, not `405`.
        if let Method::Other(m) = &head.method {
            if !OTHER_KNOWN_METHODS.contains(&m.as_str()) {
                return refuse(transport_error(
                    501,
                    "Not Implemented: the request method is not recognized (RFC 9110 §9.1); methods are case-sensitive",
                ));
            }
        }
        Ok(origin)
    }

    /// The refusal a request head gets whatever its body, if any: the
    /// [`App::admit`] checks, then routing, method and, for `POST /mcp`,
    /// `Content-Type` and `Accept`.
    pub(super) fn refuse_head(&self, head: &crate::http::Head) -> Option<Response> {
        let cors_origin = match self.admit(head) {
            Ok(origin) => origin,
            Err(refusal) => return Some(*refusal),
        };
        let path = head.path();
        let readable = matches!(head.method, Method::Get | Method::Head | Method::Options);
        let refusal = if path == "/mcp" || path == "/mcp/" {
            match head.method {
                Method::Post => mcp_post_refusal(head),
                Method::Get | Method::Head | Method::Options => None,
                _ => Some(routed(
                    method_not_allowed(MCP_ALLOW, "use POST for JSON-RPC"),
                    ROUTE_MCP,
                )),
            }
        } else if let Some(doc) = self.routes.get(path).and_then(|&i| self.docs.get(i)) {
            (!readable).then(|| routed(self.static_route(&head.method, doc), doc.route))
        } else if path == "/metrics" {
            (!readable).then(|| routed(metrics_route(&head.method), ROUTE_METRICS))
        } else if xroutes::match_path(path).is_some() {
            (!readable).then(xroutes::method_not_allowed)
        } else {
            Some(routed(not_found(), crate::metrics::ROUTE_NOT_FOUND))
        };
        match (refusal, cors_origin) {
            (Some(r), Some(origin)) => Some(with_cors(r, origin)),
            (r, _) => r,
        }
    }
}

/// The refusal of a `POST /mcp` head: `415` for a body that is not JSON,
/// `406` for an `Accept` that admits neither JSON nor SSE.
pub(super) fn mcp_post_refusal(head: &crate::http::Head) -> Option<Response> {
    if !accept::is_json_content_type(head.header("content-type")) {
        return Some(transport_error(
            415,
            "Unsupported Media Type: POST a JSON-RPC message with Content-Type: application/json",
        ));
    }
    if accept::choose_framing(joined(head, "accept").as_deref()).is_none() {
        return Some(transport_error(
            406,
            "Not Acceptable: accept application/json or text/event-stream",
        ));
    }
    None
}
