//! The raw requests the FRAME checks start from: a correct request of the
//! primary era, as head fields and body, and the bytes built around them.

use std::time::Duration;

use serde_json::json;

use super::primary;
use crate::probe::ctx::Ctx;
use crate::probe::Era;

/// How long a check waits for bytes that should not come, or for a
/// `100 Continue`: 2 s.
pub const SHORT_WAIT: Duration = Duration::from_secs(2);

/// A correct request's head fields (no framing fields) and body.
pub(super) fn parts(ctx: &mut Ctx) -> (Vec<(String, String)>, Vec<u8>) {
    let era = primary(ctx);
    let m = if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    };
    let id = ctx.id();
    let body = ctx.body(era, json!(id), m, json!({}));
    (ctx.headers_for(era, &body), body.to_string().into_bytes())
}

/// Raw bytes: the request line, `fields` as given, extra lines verbatim,
/// an empty line, then `tail`.
pub(super) fn raw(
    ctx: &Ctx,
    method: &str,
    fields: &[(String, String)],
    extra: &[&[u8]],
    tail: &[u8],
) -> Vec<u8> {
    let mut out = format!("{method} {} HTTP/1.1\r\n", ctx.target.target).into_bytes();
    for (n, v) in fields {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    for e in extra {
        out.extend_from_slice(e);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(tail);
    out
}

pub(super) fn head_without(ctx: &mut Ctx, drop: &str) -> (Vec<(String, String)>, Vec<u8>) {
    let (mut h, body) = parts(ctx);
    h.retain(|(n, _)| !n.eq_ignore_ascii_case(drop));
    h.push(("Content-Length".into(), body.len().to_string()));
    (h, body)
}
