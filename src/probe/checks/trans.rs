//! TRANS: the Streamable HTTP transport (both eras).

use serde_json::{json, Value};

use super::{
    def, expect_result, got, seen, send_edited, set_header, tri, S0326_BASE, S25_HTTP, S26_HTTP,
};
use crate::probe::ctx::Ctx;
use crate::probe::wire::{self, Exchange};
use crate::probe::{CheckDef, Era, Res};

pub(crate) const CHECKS: &[CheckDef] = &[
    def!("TRANS-01", Must, Both, "A notification POST gets 202 with an empty body (or an HTTP error status)",
        "MCP 2026-07-28 / 2025-11-25 basic/transports §Sending Messages to the Server (notification: 202, no body)", S26_HTTP, notification),
    def!("TRANS-02", Must, Both, "A request is answered as application/json (one JSON-RPC object) or text/event-stream",
        "MCP 2026-07-28 streamable-http §Sending Messages item 6; 2025-11-25 transports item 5", S26_HTTP, reply_type),
    def!("TRANS-03", Should, Both, "An SSE reply ends after the final response",
        "MCP 2026-07-28 streamable-http §Receiving Messages; 2025-11-25 transports §Sending Messages item 6", S26_HTTP, sse_ends),
    def!("TRANS-04", Should, Modern, "SSE replies carry X-Accel-Buffering: no",
        "MCP 2026-07-28 basic/transports/streamable-http §Receiving Messages (SHOULD)", S26_HTTP, accel_buffering),
    def!("TRANS-05", Must, Both, "A loopback server answers a foreign Origin with 403",
        "MCP 2026-07-28 streamable-http §Security Warning; 2025-11-25 transports §Security Warning (MUST 403)", S26_HTTP, foreign_origin),
    def!("TRANS-07", Must, Legacy, "GET with Accept: text/event-stream is answered with an event stream or 405",
        "MCP 2025-11-25 basic/transports §Listening for Messages from the Server", S25_HTTP, legacy_get),
    def!("TRANS-08", Should, Modern, "GET on the endpoint of a modern-only server gets 405",
        "MCP 2026-07-28 basic/transports/streamable-http §Earlier Streamable HTTP Revisions (SHOULD 405)", S26_HTTP, modern_get),
    def!("TRANS-09", Should, Modern, "DELETE on the endpoint of a modern-only server gets 405",
        "MCP 2026-07-28 basic/transports/streamable-http §Earlier Streamable HTTP Revisions (SHOULD 405)", S26_HTTP, modern_delete),
    def!("TRANS-10", Should, Modern, "Stray Mcp-Session-Id and Last-Event-ID are ignored; no session is minted",
        "MCP 2026-07-28 basic/transports/streamable-http §Earlier Streamable HTTP Revisions", S26_HTTP, stray_session),
    def!("TRANS-11", Must, Legacy, "An issued Mcp-Session-Id is visible ASCII (0x21-0x7E)",
        "MCP 2025-11-25 basic/transports §Session Management", S25_HTTP, session_ascii),
    def!("TRANS-12", Must, Legacy, "A request with a session ended by DELETE gets 404",
        "MCP 2025-11-25 basic/transports §Session Management (after termination: MUST 404)", S25_HTTP, unknown_session),
    def!("TRANS-13", Must, Legacy, "At 2025-03-26 a JSON-RPC batch is accepted and answered",
        "MCP 2025-03-26 basic §Batching (implementations MUST support receiving batches)", S0326_BASE, batch_0326),
];

fn notification(ctx: &mut Ctx, era: Era) -> Res {
    let mut body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": format!("probe-{}", ctx.rng.token(6)), "reason": "xmd probe"}});
    if era == Era::Modern {
        body["params"]["_meta"] = ctx.meta();
    }
    let ex = send_edited(ctx, era, &body, |_| {});
    let r = tri!(got(&ex));
    match r.status {
        202 if r.body.is_empty() => Res::Pass,
        202 => Res::Violation(format!("202 with a {}-byte body", r.body.len())),
        400..=499 => Res::Pass,
        s => Res::Violation(format!("expected 202 (or a 4xx), got HTTP {s}")),
    }
}

fn reply_type(ctx: &mut Ctx, era: Era) -> Res {
    let id = format!("probe-ct-{}", ctx.rng.token(6));
    let m = if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    };
    let body = ctx.body(era, json!(id), m, json!({}));
    let ex = send_edited(ctx, era, &body, |_| {});
    let r = tri!(got(&ex));
    match r.media_type().as_str() {
        "application/json" => match serde_json::from_slice::<Value>(&r.body) {
            Ok(Value::Object(_)) => Res::Pass,
            _ => Res::Violation("application/json body is not one JSON object".into()),
        },
        "text/event-stream" if r.rpc().is_some() => Res::Pass,
        "text/event-stream" => Res::Violation("event stream without a JSON-RPC response".into()),
        other => Res::Violation(format!("Content-Type {other:?} (HTTP {})", r.status)),
    }
}

fn sse_reply(ctx: &mut Ctx, era: Era) -> Result<Exchange, Res> {
    let id = ctx.id();
    let m = if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    };
    let body = ctx.body(era, json!(id), m, json!({}));
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(
            h,
            "Accept",
            Some("text/event-stream, application/json;q=0.5"),
        )
    });
    match &ex.response {
        Some(r) if r.is_sse() => Ok(ex),
        Some(_) => Err(Res::Skip(
            "the server answers this request as application/json".into(),
        )),
        None if ex
            .error
            .as_deref()
            .is_some_and(|e| e.contains("did not end")) =>
        {
            Ok(ex)
        }
        None => Err(Res::Inconclusive(format!(
            "no response: {}",
            ex.error.unwrap_or_default()
        ))),
    }
}

fn sse_ends(ctx: &mut Ctx, era: Era) -> Res {
    let ex = tri!(sse_reply(ctx, era));
    match ex.error {
        Some(e) => Res::Violation(e),
        None => Res::Pass,
    }
}

fn accel_buffering(ctx: &mut Ctx, era: Era) -> Res {
    let ex = tri!(sse_reply(ctx, era));
    let Some(r) = ex.response else {
        return Res::Inconclusive("the stream did not end".into());
    };
    match r.header("x-accel-buffering") {
        Some(v) if v.trim().eq_ignore_ascii_case("no") => Res::Pass,
        other => Res::Violation(format!("X-Accel-Buffering is {other:?}")),
    }
}

fn foreign_origin(ctx: &mut Ctx, era: Era) -> Res {
    // Which origins are invalid is the server's policy; on a public address
    // it may admit every one (xmd's own public deployment does). On a
    // loopback address a foreign origin is the DNS-rebinding case.
    if !ctx.target.is_loopback() {
        return Res::Skip(
            "the target is not on a loopback address: its Origin policy is its own".into(),
        );
    }
    let id = ctx.id();
    let m = if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    };
    let body = ctx.body(era, json!(id), m, json!({}));
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Origin", Some("http://evil.example"))
    });
    let r = tri!(got(&ex));
    let v = ctx.era(era).version.clone();
    if r.status == 403 || (v.as_str() < "2025-11-25" && (400..500).contains(&r.status)) {
        Res::Pass
    } else {
        Res::Violation(format!("expected 403, got {}", seen(r)))
    }
}

fn get(ctx: &mut Ctx, era: Era, method: &str, accept: &str) -> Exchange {
    let mut h = ctx.base_headers();
    h.push(("Accept".into(), accept.into()));
    if era == Era::Legacy {
        if let Some(st) = &ctx.legacy {
            h.push(("MCP-Protocol-Version".into(), st.version.clone()));
            if let Some(s) = &st.session {
                h.push(("Mcp-Session-Id".into(), s.clone()));
            }
        }
    }
    let raw = wire::build(method, &ctx.target.target.clone(), &h, b"");
    ctx.raw_opts(&raw, true)
}

const DUAL_ERA: &str =
    "the server also speaks the handshake era, whose GET and DELETE rules apply (TRANS-07)";

fn legacy_get(ctx: &mut Ctx, era: Era) -> Res {
    let ex = get(ctx, era, "GET", "text/event-stream");
    let r = tri!(got(&ex));
    if r.status == 405 || (r.status == 200 && r.is_sse()) {
        Res::Pass
    } else {
        Res::Violation(format!(
            "expected 405 or 200 text/event-stream, got HTTP {} {}",
            r.status,
            r.media_type()
        ))
    }
}

fn modern_get(ctx: &mut Ctx, era: Era) -> Res {
    if ctx.dual_era {
        return Res::Skip(DUAL_ERA.into());
    }
    let ex = get(ctx, era, "GET", "application/json, text/event-stream");
    let r = tri!(got(&ex));
    if r.status == 405 {
        Res::Pass
    } else {
        Res::Violation(format!("HTTP {} {}", r.status, r.media_type()))
    }
}

fn modern_delete(ctx: &mut Ctx, era: Era) -> Res {
    if ctx.dual_era {
        return Res::Skip(DUAL_ERA.into());
    }
    let ex = get(ctx, era, "DELETE", "application/json, text/event-stream");
    let r = tri!(got(&ex));
    if r.status == 405 {
        Res::Pass
    } else {
        Res::Violation(format!("HTTP {}", r.status))
    }
}

fn stray_session(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(era, json!(id), "server/discover", json!({}));
    let ex = send_edited(ctx, era, &body, |h| {
        h.push(("Mcp-Session-Id".into(), "xmd-probe-stray".into()));
        h.push(("Last-Event-ID".into(), "1".into()));
    });
    tri!(expect_result(&ex));
    let r = tri!(got(&ex));
    match r.header("mcp-session-id") {
        Some(_) => Res::Violation("the response carries Mcp-Session-Id".into()),
        None => Res::Pass,
    }
}

fn session_ascii(ctx: &mut Ctx, _era: Era) -> Res {
    match &ctx.era(Era::Legacy).session {
        None => Res::Skip("the server issued no session".into()),
        Some(s) if !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) => Res::Pass,
        Some(s) => Res::Violation(format!("session id {s:?} has bytes outside 0x21-0x7E")),
    }
}

fn unknown_session(ctx: &mut Ctx, _era: Era) -> Res {
    if ctx.era(Era::Legacy).session.is_none() {
        return Res::Skip("the server issued no session".into());
    }
    // A session of its own, ended with DELETE, then used once more.
    let v = ctx.era(Era::Legacy).version.clone();
    let Some(session) = tri!(init_at(ctx, &v)) else {
        return Res::Skip("the server issued no session to a second initialize".into());
    };
    let mut h = ctx.base_headers();
    h.push(("MCP-Protocol-Version".into(), v.clone()));
    h.push(("Mcp-Session-Id".into(), session.clone()));
    let raw = wire::build("DELETE", &ctx.target.target.clone(), &h, b"");
    let ex = ctx.raw(&raw);
    let r = tri!(got(&ex));
    if !(200..300).contains(&r.status) {
        return Res::Skip(format!(
            "DELETE of a session got HTTP {} (the server does not let clients end sessions)",
            r.status
        ));
    }
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    h.push(("Content-Type".into(), "application/json".into()));
    h.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    let ex = ctx.post_with(&h, body.to_string().as_bytes());
    let r = tri!(got(&ex));
    if r.status == 404 {
        Res::Pass
    } else {
        Res::Violation(format!(
            "a request with the session just ended got {}, not 404",
            seen(r)
        ))
    }
}

/// A raw `initialize` at `version`; the session id and whether the
/// server agreed to the version.
fn init_at(ctx: &mut Ctx, version: &str) -> Result<Option<String>, Res> {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "xmd-probe", "version": "0"}}});
    let mut h = ctx.base_headers();
    h.push(("Content-Type".into(), "application/json".into()));
    h.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    let ex = ctx.post_with(&h, body.to_string().as_bytes());
    let r = got(&ex)?;
    let res = r
        .result()
        .ok_or_else(|| Res::Inconclusive(format!("initialize at {version}: {}", seen(r))))?;
    if res.get("protocolVersion").and_then(Value::as_str) != Some(version) {
        return Err(Res::Skip(format!("the server does not speak {version}")));
    }
    let session = r.header("mcp-session-id").map(str::to_string);
    let mut h2 = h.clone();
    if version >= "2025-06-18" {
        h2.push(("MCP-Protocol-Version".into(), version.into()));
    }
    if let Some(s) = &session {
        h2.push(("Mcp-Session-Id".into(), s.clone()));
    }
    ctx.post_with(
        &h2,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    Ok(session)
}

fn batch(ctx: &mut Ctx, version: &str, session: Option<String>) -> Exchange {
    let (a, b) = (ctx.id(), ctx.id());
    let body = json!([
        {"jsonrpc": "2.0", "id": a, "method": "ping"},
        {"jsonrpc": "2.0", "id": b, "method": "ping"}
    ]);
    let mut h = ctx.base_headers();
    h.push(("Content-Type".into(), "application/json".into()));
    h.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    if version >= "2025-06-18" {
        h.push(("MCP-Protocol-Version".into(), version.into()));
    }
    if let Some(s) = session {
        h.push(("Mcp-Session-Id".into(), s));
    }
    ctx.post_with(&h, body.to_string().as_bytes())
}

fn batch_0326(ctx: &mut Ctx, _era: Era) -> Res {
    let session = tri!(init_at(ctx, "2025-03-26"));
    let ex = batch(ctx, "2025-03-26", session);
    let r = tri!(got(&ex));
    let answered: usize = r
        .messages()
        .iter()
        .map(|m| match m {
            Value::Array(a) => a.iter().filter(|x| x.get("result").is_some()).count(),
            v if v.get("result").is_some() => 1,
            _ => 0,
        })
        .sum();
    if answered == 2 {
        Res::Pass
    } else {
        Res::Violation(format!(
            "a batch of two pings got {} ({answered} results)",
            seen(r)
        ))
    }
}
