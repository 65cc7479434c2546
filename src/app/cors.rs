//! CORS: the preflight answer, the echoed origin and `Vary: Origin` on
//! every answer, and the open headers of the discovery documents.

use std::borrow::Cow;

use super::{CORS_ALLOW_HEADERS, CORS_MAX_AGE_SECS};
use crate::http::Response;

/// The CORS headers SEP-2127 ("CORS Requirements") asks of a hosted
/// server card, on every answer of the card and the AI Catalog (200, 304,
/// the `OPTIONS` preflight, a refused method): any origin may read them,
/// with `If-None-Match` and its `ETag`. Their request's `Origin` is not
/// checked ([`App::admit`](super::App::admit)), so [`finish`] adds no echoed origin.
pub(super) fn discovery_cors(mut response: Response) -> Response {
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
pub(super) fn finish(
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

/// A `204` CORS preflight answer. The allowed request headers are our fixed
/// list plus whatever the browser asked for (when every name is a valid
/// token), so `Mcp-Param-*` headers pass too.
pub(super) fn preflight(allow: &'static str, requested: Option<&[u8]>) -> Response {
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

pub(super) fn with_cors(mut response: Response, origin: String) -> Response {
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
