//! HDR: the mirrored request headers of 2026-07-28 (SEP-2243).

use serde_json::{json, Value};

use super::{
    def, expect_error, expect_not_error, expect_result, gate, got, list_tools, safe_tool,
    send_edited, set_header, tri, S26_BASE, S26_HTTP, S26_TOOLS,
};
use crate::mcp::headers::encode_header_value;
use crate::probe::ctx::Ctx;
use crate::probe::{CheckDef, Era, Res};

pub(crate) const CHECKS: &[CheckDef] = &[
    def!("HDR-01", Must, Modern, "A request without Mcp-Method gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Standard Request Headers, §Server Validation", S26_HTTP, missing_method),
    def!("HDR-02", Must, Modern, "Mcp-Method naming another method than the body gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Server Validation", S26_HTTP, method_mismatch),
    def!("HDR-03", Must, Modern, "Header values are case-sensitive: Mcp-Method in upper case gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Case Sensitivity", S26_HTTP, method_case),
    def!("HDR-04", Must, Modern, "Header names are case-insensitive: mcp-method / MCP-METHOD are accepted",
        "MCP 2026-07-28 basic/transports/streamable-http §Case Sensitivity; RFC 9110 §5.1", S26_HTTP, name_case),
    def!("HDR-05", Must, Modern, "A request without MCP-Protocol-Version gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Server Validation (a required standard header is missing); a dual-era server MAY read it as 2025-03-26 (§Protocol Version Header): any 4xx", S26_HTTP, missing_version_header),
    def!("HDR-06", Must, Modern, "tools/call with Mcp-Name other than params.name gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Standard Request Headers, §Server Validation", S26_HTTP, name_mismatch),
    def!("HDR-07", Must, Modern, "tools/call without Mcp-Name gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Server Validation", S26_HTTP, name_missing),
    def!("HDR-08", Must, Modern, "Optional whitespace around Mcp-Method is trimmed (accepted)",
        "RFC 9110 §5.5 (field values exclude leading and trailing whitespace); MCP 2026-07-28 streamable-http §Server Validation", S26_HTTP, method_ows),
    def!("HDR-09", Must, Modern, "Optional whitespace around Mcp-Name is trimmed (not a mismatch)",
        "RFC 9110 §5.5; MCP 2026-07-28 basic/transports/streamable-http §Server Validation", S26_HTTP, name_ows),
    def!("HDR-10", Must, Modern, "A =?base64?…?= Mcp-Name is decoded before comparison (non-ASCII name)",
        "MCP 2026-07-28 basic/transports/streamable-http §Value Encoding (servers MUST decode)", S26_HTTP, name_base64),
    def!("HDR-11", Must, Modern, "A =?base64?…?= Mcp-Name with an invalid payload gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Value Encoding, §Server Validation", S26_HTTP, name_bad_base64),
    def!("HDR-12", Must, Modern, "resources/read with Mcp-Name other than params.uri gets 400 and -32020",
        "MCP 2026-07-28 basic/transports/streamable-http §Standard Request Headers, §Server Validation", S26_HTTP, uri_mismatch),
    def!("HDR-13", Must, Modern, "A header-validation error carries the request's id",
        "MCP 2026-07-28 basic §Error Responses (id MUST be the request's when readable)", S26_BASE, mismatch_id),
    def!("HDR-14", Must, Modern, "x-mcp-header annotates only top-level string, integer or boolean properties",
        "MCP 2026-07-28 server/tools §x-mcp-header; streamable-http §Custom Headers from Tool Parameters", S26_TOOLS, x_mcp_header),
];

fn discover_body(ctx: &mut Ctx, era: Era) -> Value {
    let id = ctx.id();
    ctx.body(era, json!(id), "server/discover", json!({}))
}

fn missing_method(ctx: &mut Ctx, era: Era) -> Res {
    let body = discover_body(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| set_header(h, "Mcp-Method", None));
    expect_error(ctx, &ex, Some(400), -32020)
}

fn method_mismatch(ctx: &mut Ctx, era: Era) -> Res {
    let body = discover_body(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Method", Some("tools/list"))
    });
    expect_error(ctx, &ex, Some(400), -32020)
}

fn method_case(ctx: &mut Ctx, era: Era) -> Res {
    let body = discover_body(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Method", Some("SERVER/DISCOVER"))
    });
    expect_error(ctx, &ex, Some(400), -32020)
}

fn name_case(ctx: &mut Ctx, era: Era) -> Res {
    for (m, v) in [
        ("mcp-method", "mcp-protocol-version"),
        ("MCP-METHOD", "MCP-PROTOCOL-VERSION"),
    ] {
        let body = discover_body(ctx, era);
        let ex = send_edited(ctx, era, &body, |h| {
            set_header(h, "Mcp-Method", None);
            set_header(h, "MCP-Protocol-Version", None);
            h.push((m.into(), "server/discover".into()));
            h.push((v.into(), crate::probe::MODERN.into()));
        });
        if let Err(r) = expect_result(&ex) {
            return match r {
                Res::Violation(s) => Res::Violation(format!("{m}: {s}")),
                r => r,
            };
        }
    }
    Res::Pass
}

fn missing_version_header(ctx: &mut Ctx, era: Era) -> Res {
    let body = discover_body(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "MCP-Protocol-Version", None)
    });
    let strict = expect_error(ctx, &ex, Some(400), -32020);
    // A server that also speaks the handshake era MAY read a request
    // without the header as 2025-03-26 (streamable-http §Protocol Version
    // Header): a 4xx is then enough.
    match (&strict, &ex.response) {
        (Res::Violation(_), Some(r)) if ctx.dual_era && (400..500).contains(&r.status) => Res::Pass,
        _ => strict,
    }
}

/// A tools/call body for a tool that does not exist (nothing can run).
fn absent_call(ctx: &mut Ctx, era: Era, name: &str) -> Value {
    let id = ctx.id();
    ctx.body(
        era,
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    )
}

fn absent_name(ctx: &mut Ctx) -> String {
    format!("xmd_probe_absent_{}", ctx.rng.token(8))
}

fn name_mismatch(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let name = absent_name(ctx);
    let body = absent_call(ctx, era, &name);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Name", Some("xmd_probe_other"))
    });
    expect_error(ctx, &ex, Some(400), -32020)
}

fn name_missing(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let name = absent_name(ctx);
    let body = absent_call(ctx, era, &name);
    let ex = send_edited(ctx, era, &body, |h| set_header(h, "Mcp-Name", None));
    expect_error(ctx, &ex, Some(400), -32020)
}

fn method_ows(ctx: &mut Ctx, era: Era) -> Res {
    let body = discover_body(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Method", Some("  server/discover \t"))
    });
    match expect_result(&ex) {
        Ok(_) => Res::Pass,
        Err(r) => r,
    }
}

/// A tools/call body for a tool the probe may call (read-only or
/// `--call`), else for an absent one.
fn callable(ctx: &mut Ctx, era: Era) -> (String, Value) {
    let (name, args) = match safe_tool(ctx, era) {
        Some(t) => (
            t.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            ctx.cfg.args.clone().unwrap_or(json!({})),
        ),
        None => (absent_name(ctx), json!({})),
    };
    let id = ctx.id();
    let body = ctx.body(
        era,
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": args}),
    );
    (name, body)
}

fn name_ows(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let (name, body) = callable(ctx, era);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Name", Some(&format!("  {name}  ")))
    });
    expect_not_error(&ex, -32020)
}

fn name_base64(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let name = format!("météo_{}", ctx.rng.token(6));
    let body = absent_call(ctx, era, &name);
    let enc = encode_header_value(&name);
    let ex = send_edited(ctx, era, &body, |h| set_header(h, "Mcp-Name", Some(&enc)));
    expect_not_error(&ex, -32020)
}

fn name_bad_base64(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let body = absent_call(ctx, era, "Hello");
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Name", Some("=?base64?SGVs!!!bG8=?="))
    });
    expect_error(ctx, &ex, Some(400), -32020)
}

fn uri_mismatch(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "resources"));
    let id = ctx.id();
    let uri = format!("probe://absent/{}", ctx.rng.token(8));
    let body = ctx.body(era, json!(id), "resources/read", json!({"uri": uri}));
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Name", Some("probe://other"))
    });
    expect_error(ctx, &ex, Some(400), -32020)
}

fn mismatch_id(ctx: &mut Ctx, era: Era) -> Res {
    let id = format!("probe-{}", ctx.rng.token(6));
    let body = ctx.body(era, json!(id), "server/discover", json!({}));
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "Mcp-Method", Some("tools/list"))
    });
    let r = tri!(got(&ex));
    let Some(m) = r.rpc() else {
        return Res::Inconclusive(format!("no JSON-RPC error body (HTTP {})", r.status));
    };
    if m.get("error").is_none() {
        return Res::Inconclusive("the mismatch was not rejected (HDR-02 says more)".into());
    }
    if m.get("id") == Some(&json!(id)) {
        Res::Pass
    } else {
        Res::Violation(format!(
            "error id is {}, not {id:?}",
            m.get("id").unwrap_or(&Value::Null)
        ))
    }
}

fn x_mcp_header(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let Some(tools) = list_tools(ctx, era) else {
        return Res::Inconclusive("tools/list gave no tools array".into());
    };
    let mut seen_any = false;
    for t in &tools {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        let Some(props) = t
            .pointer("/inputSchema/properties")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (k, p) in props {
            if p.get("x-mcp-header").is_none() {
                continue;
            }
            seen_any = true;
            let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
            if !matches!(ty, "string" | "integer" | "boolean") {
                return Res::Violation(format!("{name}.{k}: x-mcp-header on type {ty:?}"));
            }
            if p.get("x-mcp-header")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Res::Violation(format!(
                    "{name}.{k}: x-mcp-header is not a non-empty string"
                ));
            }
        }
    }
    if seen_any {
        Res::Pass
    } else {
        Res::Skip("no tool uses x-mcp-header".into())
    }
}
