//! RPC: the JSON-RPC 2.0 envelope and robustness against malformed bodies.

use serde_json::{json, Value};

use super::{def, got, seen, send_edited, set_header, tri, JSONRPC, S26_BASE, S26_HTTP};
use crate::probe::ctx::Ctx;
use crate::probe::wire::Exchange;
use crate::probe::{CheckDef, Era, Res, TargetKind};

pub(crate) const CHECKS: &[CheckDef] = &[
    def!("RPC-01", Must, Both, "Unparseable JSON gets -32700 with id null",
        "JSON-RPC 2.0 §5.1 (Parse error)", JSONRPC, parse_error, hostile),
    def!("RPC-02", Should, Both, "A JSON object that is not a request ({}) gets -32600",
        "JSON-RPC 2.0 §4, §5.1 (the Invalid Request code; the spec has no MUST on choosing it)", JSONRPC, empty_object, hostile),
    def!("RPC-03", Should, Both, "\"jsonrpc\": \"1.0\" gets -32600",
        "JSON-RPC 2.0 §4 (jsonrpc MUST be exactly \"2.0\"), §5.1", JSONRPC, wrong_version, hostile),
    def!("RPC-04", Should, Both, "A request with \"id\": null is rejected, not served",
        "MCP 2026-07-28 basic §Requests (the ID MUST NOT be null)", S26_BASE, null_id, hostile),
    def!("RPC-05", Must, Both, "An unknown method gets -32601 (HTTP 404 at 2026-07-28)",
        "JSON-RPC 2.0 §5.1; MCP 2026-07-28 streamable-http §Protocol Version Header (404 with -32601)", S26_HTTP, unknown_method),
    def!("RPC-06", Should, Both, "A body that is not UTF-8 is answered without a 5xx (robustness)",
        "MCP 2026-07-28 basic (JSON-RPC messages MUST be UTF-8 encoded); RFC 8259 §8.1; RFC 9110 §15.6 (5xx: the server erred)", S26_BASE, bad_utf8, hostile),
    def!("RPC-07", Should, Both, "A lone-surrogate escape is answered without a 5xx",
        "RFC 8259 §8.2 (unpaired surrogates: behaviour unpredictable); robustness", JSONRPC, lone_surrogate, hostile),
    def!("RPC-08", Should, Both, "An oversized body (2 MiB) is answered without a 5xx: 413, or served, or the connection closed",
        "RFC 9110 §15.5.14 (413 Content Too Large); §15.6 (5xx: the server erred)", "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14", oversized, hostile),
    def!("RPC-09", Should, Both, "JSON nested 100,000 deep gets a 4xx or a JSON-RPC error, not a 5xx",
        "RFC 8259 §9 (parsers MAY limit nesting); robustness", JSONRPC, deep_nesting, hostile),
    def!("RPC-10", Should, Both, "An object of 50,000 keys is answered without a 5xx",
        "RFC 8259 §9; robustness", JSONRPC, many_keys, hostile),
    def!("RPC-12", Must, Both, "An error response carries the request's string id",
        "JSON-RPC 2.0 §5 (id MUST be the same as the request's); MCP basic §Error Responses", JSONRPC, string_id),
    def!("RPC-13", Must, Both, "A request with id 0 is answered with id 0",
        "JSON-RPC 2.0 §4, §5 (id: a Number)", JSONRPC, zero_id),
    def!("RPC-14", Must, Both, "A response has \"jsonrpc\": \"2.0\" and exactly one of result and error",
        "JSON-RPC 2.0 §5 (Response object)", JSONRPC, response_shape),
    def!("RPC-15", Should, Both, "params that is neither object nor array is rejected",
        "JSON-RPC 2.0 §4.2 (params MUST be structured)", JSONRPC, scalar_params, hostile),
    def!("RPC-16", Should, Both, "A method that is not a string gets -32600",
        "JSON-RPC 2.0 §4 (method: a String), §5.1", JSONRPC, numeric_method, hostile),
];

/// The method a liveness-safe request of `era` names.
fn safe_method(era: Era) -> &'static str {
    if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    }
}

/// Sends raw bytes as a body with the era's headers (Mcp-Method naming a
/// valid method, so header checks pass wherever the body allows).
fn send_bytes(ctx: &mut Ctx, era: Era, bytes: &[u8]) -> Exchange {
    let pretend = json!({"jsonrpc": "2.0", "id": 0, "method": safe_method(era)});
    let h = ctx.headers_for(era, &pretend);
    ctx.post_with(&h, bytes)
}

/// Expects a JSON-RPC error with one of `codes` (a bare 4xx for a gateway).
fn expect_codes(ctx: &Ctx, ex: &Exchange, codes: &[i64]) -> Res {
    let r = tri!(got(ex));
    match r.error_code() {
        Some(c) if codes.contains(&c) => Res::Pass,
        None if ctx.cfg.target == TargetKind::Gateway && (400..500).contains(&r.status) => {
            Res::Pass
        }
        _ => Res::Violation(format!(
            "expected JSON-RPC error {codes:?}, got {}",
            seen(r)
        )),
    }
}

fn parse_error(ctx: &mut Ctx, era: Era) -> Res {
    let ex = send_bytes(ctx, era, br#"{"jsonrpc":"2.0","id":1,"method":"#);
    let res = expect_codes(ctx, &ex, &[-32700]);
    if res != Res::Pass {
        return res;
    }
    let r = tri!(got(&ex));
    match r.rpc() {
        Some(m) if m.get("id").is_some_and(|i| !i.is_null()) => {
            Res::Violation(format!("id is {}, not null", m["id"]))
        }
        _ => Res::Pass,
    }
}

/// Modern servers may answer an envelope they cannot read with the header
/// mismatch (-32020) too: the body has no method to compare.
fn invalid_codes(era: Era) -> &'static [i64] {
    if era == Era::Modern {
        &[-32600, -32020]
    } else {
        &[-32600]
    }
}

fn empty_object(ctx: &mut Ctx, era: Era) -> Res {
    let ex = send_bytes(ctx, era, b"{}");
    expect_codes(ctx, &ex, invalid_codes(era))
}

fn wrong_version(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let mut body = ctx.body(era, json!(id), safe_method(era), json!({}));
    body["jsonrpc"] = json!("1.0");
    let ex = send_edited(ctx, era, &body, |_| {});
    expect_codes(ctx, &ex, &[-32600])
}

fn null_id(ctx: &mut Ctx, era: Era) -> Res {
    let body = ctx.body(era, Value::Null, safe_method(era), json!({}));
    not_served(ctx, era, &body, "a request with id null was served")
}

/// Sends `body` as it is: a result for it is the violation `served`.
fn not_served(ctx: &mut Ctx, era: Era, body: &Value, served: &str) -> Res {
    let ex = send_edited(ctx, era, body, |_| {});
    let r = tri!(got(&ex));
    if r.result().is_some() {
        Res::Violation(served.into())
    } else {
        Res::Pass
    }
}

fn unknown_method(ctx: &mut Ctx, era: Era) -> Res {
    let m = format!("xmd_probe/{}", ctx.rng.token(8));
    let ex = ctx.call(era, &m, json!({}));
    let r = tri!(got(&ex));
    let status_ok = era != Era::Modern || r.status == 404;
    match r.error_code() {
        Some(-32601) if status_ok => Res::Pass,
        None if ctx.cfg.target == TargetKind::Gateway && status_ok && r.status >= 400 => Res::Pass,
        _ => Res::Violation(format!(
            "expected {}-32601, got {}",
            if era == Era::Modern {
                "HTTP 404 with "
            } else {
                ""
            },
            seen(r)
        )),
    }
}

fn bad_utf8(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        safe_method(era),
        json!({"probe": "PLACEHOLDER"}),
    );
    let text = body.to_string();
    let mut bytes = Vec::new();
    let (a, b) = text.split_once("PLACEHOLDER").expect("placeholder");
    bytes.extend_from_slice(a.as_bytes());
    bytes.extend_from_slice(b"\xff\xfe\xc3");
    bytes.extend_from_slice(b.as_bytes());
    let ex = send_bytes(ctx, era, &bytes);
    no_5xx(&ex)
}

fn no_5xx(ex: &Exchange) -> Res {
    let r = tri!(got(ex));
    if r.status >= 500 {
        Res::Violation(seen(r))
    } else {
        Res::Pass
    }
}

fn lone_surrogate(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        safe_method(era),
        json!({"probe": "PLACEHOLDER"}),
    );
    let text = body.to_string().replace("PLACEHOLDER", "\\ud800x\\udfff");
    let ex = send_bytes(ctx, era, text.as_bytes());
    no_5xx(&ex)
}

fn oversized(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        safe_method(era),
        json!({"probe": "x".repeat(2 * 1024 * 1024)}),
    );
    let ex = send_bytes(ctx, era, body.to_string().as_bytes());
    match &ex.response {
        Some(r) if r.status >= 500 => Res::Violation(format!("expected 413, got {}", seen(r))),
        _ => Res::Pass, // 413, served, or closed while we were still sending (RFC 9110 §15.5.14)
    }
}

fn deep_nesting(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        safe_method(era),
        json!({"probe": "PLACEHOLDER"}),
    );
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = body.to_string().replace("\"PLACEHOLDER\"", &deep);
    let ex = send_bytes(ctx, era, text.as_bytes());
    no_5xx(&ex)
}

fn many_keys(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        safe_method(era),
        json!({"probe": "PLACEHOLDER"}),
    );
    let obj = format!(
        "{{{}}}",
        (0..50_000)
            .map(|i| format!("\"k{i}\":0"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let text = body.to_string().replace("\"PLACEHOLDER\"", &obj);
    let ex = send_bytes(ctx, era, text.as_bytes());
    no_5xx(&ex)
}

fn string_id(ctx: &mut Ctx, era: Era) -> Res {
    let id = format!("probe-{}", ctx.rng.token(6));
    let m = format!("xmd_probe/{}", ctx.rng.token(8));
    let body = ctx.body(era, json!(id), &m, json!({}));
    let ex = send_edited(ctx, era, &body, |_| {});
    let r = tri!(got(&ex));
    match r.rpc() {
        Some(msg) if msg.get("id") == Some(&json!(id)) => Res::Pass,
        Some(msg) => Res::Violation(format!(
            "id {} instead of {id:?}",
            msg.get("id").unwrap_or(&Value::Null)
        )),
        None => Res::Inconclusive(seen(r)),
    }
}

fn zero_id(ctx: &mut Ctx, era: Era) -> Res {
    let body = ctx.body(era, json!(0), safe_method(era), json!({}));
    let ex = send_edited(ctx, era, &body, |_| {});
    let r = tri!(got(&ex));
    match r.rpc() {
        Some(msg) if msg.get("id") == Some(&json!(0)) && msg.get("result").is_some() => Res::Pass,
        Some(msg) => Res::Violation(format!(
            "id 0 answered with id {} ({})",
            msg.get("id").unwrap_or(&Value::Null),
            seen(r)
        )),
        None => Res::Violation(seen(r)),
    }
}

fn response_shape(ctx: &mut Ctx, era: Era) -> Res {
    let ex = ctx.call(era, safe_method(era), json!({}));
    let r = tri!(got(&ex));
    let Some(m) = r.rpc() else {
        return Res::Violation(seen(r));
    };
    if m.get("jsonrpc") != Some(&json!("2.0")) {
        return Res::Violation(format!(
            "jsonrpc is {}",
            m.get("jsonrpc").unwrap_or(&Value::Null)
        ));
    }
    if m.get("result").is_some() == m.get("error").is_some() {
        return Res::Violation("result and error both present".into());
    }
    Res::Pass
}

fn scalar_params(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": safe_method(era), "params": 5});
    not_served(ctx, era, &body, "params 5 was served")
}

fn numeric_method(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let mut body = ctx.body(era, json!(id), safe_method(era), json!({}));
    body["method"] = json!(1);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Method", Some(safe_method(era)))
    });
    expect_codes(ctx, &ex, invalid_codes(era))
}
