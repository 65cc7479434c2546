//! DISC: discovery and era negotiation.

use serde_json::{json, Value};

use super::{
    def, expect_error, expect_result, got, seen, send_edited, set_header, tri, S25_HTTP, S25_LIFE,
    S26_BASE, S26_DISC, S26_HTTP, S26_VER,
};
use crate::probe::ctx::{Ctx, MODERN};
use crate::probe::{CheckDef, Era, Res};

pub(crate) const CHECKS: &[CheckDef] = &[
    def!("DISC-01", Must, Modern, "server/discover returns resultType complete, supportedVersions containing 2026-07-28 and a capabilities object",
        "MCP 2026-07-28 server/discover; basic/versioning §Protocol Version Negotiation", S26_DISC, discover),
    def!("DISC-02", Must, Modern, "clientInfo is optional: server/discover without it is served",
        "MCP 2026-07-28 basic §Per-request protocol fields (clientInfo: not required)", S26_BASE, client_info_optional),
    def!("DISC-03", Must, Modern, "An unsupported version (header and _meta) gets 400 and -32022 with data.requested echoed",
        "MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header; basic/versioning", S26_HTTP, unsupported_version),
    def!("DISC-04", Must, Modern, "A header/body version mismatch gets 400 and -32020 (checked before version support)",
        "MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header, §Server Validation", S26_HTTP, version_mismatch),
    def!("DISC-05", Must, Modern, "A request without _meta gets 400 and -32602 with the id echoed",
        "MCP 2026-07-28 basic §Per-request protocol fields (MUST reject with -32602; HTTP 400)", S26_BASE, missing_meta),
    def!("DISC-06", Must, Modern, "_meta without protocolVersion gets 400 and -32602",
        "MCP 2026-07-28 basic §Per-request protocol fields", S26_BASE, meta_without_version),
    def!("DISC-07", Must, Modern, "_meta without clientCapabilities gets 400 and -32602",
        "MCP 2026-07-28 basic §Per-request protocol fields", S26_BASE, meta_without_caps),
    def!("DISC-08", Must, Modern, "initialize under the modern envelope gets 404 and -32601",
        "MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header (removed methods: 404, -32601)", S26_HTTP, modern_initialize),
    def!("DISC-09", Must, Modern, "ping, logging/setLevel, resources/subscribe under the modern envelope get 404 and -32601",
        "MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header; changelog (removed methods)", S26_HTTP, removed_methods),
    def!("DISC-10", Must, Legacy, "initialize with a supported version echoes it",
        "MCP 2025-11-25 basic/lifecycle §Version Negotiation", S25_LIFE, legacy_echo),
    def!("DISC-11", Must, Legacy, "initialize with an unsupported version is answered with a version the server supports",
        "MCP 2025-11-25 basic/lifecycle §Version Negotiation (MUST respond with another version it supports)", S25_LIFE, legacy_counter_offer),
    def!("DISC-12", Must, Legacy, "The initialize result has protocolVersion, capabilities and serverInfo {name, version}",
        "MCP 2025-11-25 basic/lifecycle §Initialization; schema InitializeResult", S25_LIFE, legacy_shape),
    def!("DISC-13", Must, Legacy, "An unsupported MCP-Protocol-Version header after initialize gets 400",
        "MCP 2025-11-25 basic/transports §Protocol Version Header", S25_HTTP, legacy_bad_header),
    def!("DISC-14", Must, Modern, "-32022's data.supported is a non-empty subset of server/discover's supportedVersions",
        "MCP 2026-07-28 basic/versioning §Protocol Version Negotiation; server/discover", S26_VER, supported_subset),
    def!("DISC-15", Should, Legacy, "A claim-less server/discover (legacy framing) is not answered 5xx, so dual-era clients can fall back",
        "MCP 2026-07-28 basic/versioning §Backward Compatibility with Initialization-Based Versions", S26_VER, claimless_discover, hostile),
    def!("DISC-16", Should, Modern, "server/discover names the server in _meta io.modelcontextprotocol/serverInfo {name, version}",
        "MCP 2026-07-28 basic §Per-response protocol fields (SHOULD)", S26_BASE, discover_server_info),
];

fn discover(ctx: &mut Ctx, era: Era) -> Res {
    let ex = ctx.call(era, "server/discover", json!({}));
    let r = tri!(expect_result(&ex));
    if r.get("resultType").and_then(Value::as_str) != Some("complete") {
        return Res::Violation(format!(
            "resultType is {}",
            r.get("resultType").unwrap_or(&Value::Null)
        ));
    }
    let has = r
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v == MODERN));
    if !has {
        return Res::Violation(format!("supportedVersions lacks {MODERN}"));
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        return Res::Violation("capabilities is not an object".into());
    }
    Res::Pass
}

fn client_info_optional(ctx: &mut Ctx, era: Era) -> Res {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let ex = ctx.send_json(era, &body);
    tri!(expect_result(&ex));
    Res::Pass
}

fn with_meta(ctx: &mut Ctx, meta: Value) -> Value {
    let id = ctx.id();
    json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": meta}})
}

fn unsupported_version(ctx: &mut Ctx, era: Era) -> Res {
    let mut meta = ctx.meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body = with_meta(ctx, meta);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "MCP-Protocol-Version", Some("v999.0.0"))
    });
    let res = expect_error(ctx, &ex, Some(400), -32022);
    if res != Res::Pass {
        return res;
    }
    let r = tri!(got(&ex));
    match r
        .rpc()
        .and_then(|m| m.pointer("/error/data/requested").cloned())
    {
        Some(v) if v == "v999.0.0" => Res::Pass,
        None if r.rpc().is_none() => Res::Pass,
        other => Res::Violation(format!(
            "error.data.requested is {}, not \"v999.0.0\"",
            other.unwrap_or(Value::Null)
        )),
    }
}

fn supported_subset(ctx: &mut Ctx, era: Era) -> Res {
    let mut meta = ctx.meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let body = with_meta(ctx, meta);
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "MCP-Protocol-Version", Some("1900-01-01"))
    });
    let r = tri!(got(&ex));
    let Some(list) = r
        .rpc()
        .and_then(|m| m.pointer("/error/data/supported").cloned())
    else {
        return Res::Inconclusive(format!("no error.data.supported: {}", seen(r)));
    };
    let discover = ctx.era(era).supported.clone();
    let Some(arr) = list.as_array().filter(|a| !a.is_empty()) else {
        return Res::Violation(format!(
            "error.data.supported is {list}, not a non-empty array"
        ));
    };
    for v in arr {
        if !v.as_str().is_some_and(|s| discover.iter().any(|d| d == s)) {
            return Res::Violation(format!("error.data.supported names {v}, which server/discover does not list ({discover:?})"));
        }
    }
    Res::Pass
}

fn version_mismatch(ctx: &mut Ctx, era: Era) -> Res {
    let mut meta = ctx.meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body = with_meta(ctx, meta);
    let ex = send_edited(ctx, era, &body, |_| {});
    expect_error(ctx, &ex, Some(400), -32020)
}

fn missing_meta(ctx: &mut Ctx, era: Era) -> Res {
    let id = format!("probe-{}", ctx.rng.token(6));
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {}});
    let ex = send_edited(ctx, era, &body, |_| {});
    let res = expect_error(ctx, &ex, Some(400), -32602);
    if res != Res::Pass {
        return res;
    }
    let r = tri!(got(&ex));
    match r.rpc().and_then(|m| m.get("id").cloned()) {
        Some(v) if v == json!(id) => Res::Pass,
        None if r.rpc().is_none() => Res::Pass,
        other => Res::Violation(format!(
            "error id is {}, not the request's {id:?}",
            other.unwrap_or(Value::Null)
        )),
    }
}

fn meta_without(ctx: &mut Ctx, era: Era, key: &str) -> Res {
    let mut meta = ctx.meta();
    meta.as_object_mut().expect("object").remove(key);
    let body = with_meta(ctx, meta);
    let ex = send_edited(ctx, era, &body, |_| {});
    expect_error(ctx, &ex, Some(400), -32602)
}

fn meta_without_version(ctx: &mut Ctx, era: Era) -> Res {
    meta_without(ctx, era, "io.modelcontextprotocol/protocolVersion")
}

fn meta_without_caps(ctx: &mut Ctx, era: Era) -> Res {
    meta_without(ctx, era, "io.modelcontextprotocol/clientCapabilities")
}

fn modern_initialize(ctx: &mut Ctx, era: Era) -> Res {
    let ex = ctx.call(
        era,
        "initialize",
        json!({"protocolVersion": MODERN, "capabilities": {},
        "clientInfo": {"name": "xmd-probe", "version": "0"}}),
    );
    expect_error(ctx, &ex, Some(404), -32601)
}

fn removed_methods(ctx: &mut Ctx, era: Era) -> Res {
    for (m, p) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "probe://none"})),
    ] {
        let ex = ctx.call(era, m, p);
        if let Res::Violation(v) = expect_error(ctx, &ex, Some(404), -32601) {
            return Res::Violation(format!("{m}: {v}"));
        }
        tri!(got(&ex));
    }
    Res::Pass
}

fn initialize(ctx: &mut Ctx, version: &str) -> (super::Exchange, Option<Value>) {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "xmd-probe", "version": env!("CARGO_PKG_VERSION")}}});
    let ex = ctx.send_json(Era::Legacy, &body);
    let r = ex.response.as_ref().and_then(|r| r.result());
    (ex, r)
}

fn legacy_echo(ctx: &mut Ctx, _era: Era) -> Res {
    let v = ctx.era(Era::Legacy).version.clone();
    let (ex, r) = initialize(ctx, &v);
    let Some(r) = r else {
        return Res::Violation(format!("initialize at {v}: {}", tri!(got(&ex)).status));
    };
    match r.get("protocolVersion").and_then(Value::as_str) {
        Some(got) if got == v => Res::Pass,
        other => Res::Violation(format!(
            "asked for {v} (which it negotiated before), got {other:?}"
        )),
    }
}

fn legacy_counter_offer(ctx: &mut Ctx, _era: Era) -> Res {
    let (ex, r) = initialize(ctx, "1900-01-01");
    let Some(r) = r else {
        return Res::Violation(format!(
            "answered {} instead of counter-offering a version",
            seen(tri!(got(&ex)))
        ));
    };
    match r.get("protocolVersion").and_then(Value::as_str) {
        Some(v) if v != "1900-01-01" && !v.is_empty() => Res::Pass,
        other => Res::Violation(format!("protocolVersion {other:?}")),
    }
}

fn legacy_shape(ctx: &mut Ctx, _era: Era) -> Res {
    let v = ctx.era(Era::Legacy).version.clone();
    let (ex, r) = initialize(ctx, &v);
    let Some(r) = r else {
        return Res::Inconclusive(format!("initialize: {}", seen(tri!(got(&ex)))));
    };
    if !r.get("protocolVersion").is_some_and(Value::is_string) {
        return Res::Violation("protocolVersion missing".into());
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        return Res::Violation("capabilities is not an object".into());
    }
    let si = r.get("serverInfo");
    if !si.and_then(|s| s.get("name")).is_some_and(Value::is_string)
        || !si
            .and_then(|s| s.get("version"))
            .is_some_and(Value::is_string)
    {
        return Res::Violation(format!("serverInfo is {}", si.unwrap_or(&Value::Null)));
    }
    Res::Pass
}

fn legacy_bad_header(ctx: &mut Ctx, era: Era) -> Res {
    let v = ctx.era(Era::Legacy).version.clone();
    if v.as_str() < "2025-06-18" {
        return Res::Skip(format!("negotiated {v}: the header exists from 2025-06-18"));
    }
    let id = ctx.id();
    let body = ctx.body(era, json!(id), "ping", json!({}));
    let ex = send_edited(ctx, era, &body, |h| {
        set_header(h, "MCP-Protocol-Version", Some("1999-01-01"))
    });
    let r = tri!(got(&ex));
    if r.status == 400 {
        Res::Pass
    } else {
        Res::Violation(format!("expected HTTP 400, got {}", seen(r)))
    }
}

fn claimless_discover(ctx: &mut Ctx, _era: Era) -> Res {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {}});
    let mut h = ctx.base_headers();
    h.push(("Content-Type".into(), "application/json".into()));
    h.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    let ex = ctx.post_with(&h, body.to_string().as_bytes());
    let r = tri!(got(&ex));
    if r.status >= 500 {
        Res::Violation(format!("{}: dual-era clients treat 5xx as fatal", seen(r)))
    } else {
        Res::Pass
    }
}

fn discover_server_info(ctx: &mut Ctx, era: Era) -> Res {
    let ex = ctx.call(era, "server/discover", json!({}));
    let r = tri!(expect_result(&ex));
    let si = r.pointer("/_meta/io.modelcontextprotocol~1serverInfo");
    if si.and_then(|s| s.get("name")).is_some_and(Value::is_string)
        && si
            .and_then(|s| s.get("version"))
            .is_some_and(Value::is_string)
    {
        Res::Pass
    } else {
        Res::Violation(format!(
            "_meta serverInfo is {}",
            si.unwrap_or(&Value::Null)
        ))
    }
}
