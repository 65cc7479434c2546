//! The answers the app frames itself: MCP replies as JSON or one SSE
//! event, transport errors, `405` and `404`; and the joined values of a
//! repeated request header.

use std::borrow::Cow;

use crate::http::accept::Framing;
use crate::http::{Body, Response};
use crate::mcp::{self, Reply};
use crate::metrics::METRICS;

/// All values of a header joined with commas (RFC 9110 §5.3); borrowed
/// when the header appears once.
pub(super) fn joined<'a>(head: &'a crate::http::Head, name: &'a str) -> Option<Cow<'a, [u8]>> {
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

pub(super) fn transport_error(status: u16, message: &str) -> Response {
    METRICS.rejected(crate::metrics::rejection_reason(status));
    Response::with_body(
        status,
        "application/json",
        Body::Owned(mcp::error_without_id(-32600, message)),
    )
}

pub(super) fn method_not_allowed(allow: &'static str, message: &str) -> Response {
    transport_error(405, &format!("Method Not Allowed: {message}")).header("Allow", allow)
}

pub(super) fn not_found() -> Response {
    Response::with_body(
        404,
        "application/json",
        Body::Static(br#"{"error":"not_found","message":"No such route. The MCP endpoint is POST /mcp; see /llms.txt."}"#),
    )
}
