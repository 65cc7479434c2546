//! The mutant corpus of `xmd probe` (issue 29): a proxy in front of a real
//! `xmd serve` breaks exactly one rule per mutant (tests/probe_support/),
//! and the probe must flag that mutant with its own check and with no
//! unrelated MUST. The control (the proxy changing nothing) must be flagged
//! for nothing beyond xmd's baseline. The catch matrix is printed.

// The mutants are one-line edits of a JSON value; `.map(|x| x.edit())` on
// an Option reads shorter than `if let` there.
#![allow(clippy::option_map_unit_fn)]

mod common;
mod probe_support;
mod util;

use std::collections::BTreeSet;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use probe_support::{Mutant, Proxy, Raw, Req, Resp, State};
use serde_json::{json, Value};
use util::Xmd;
use xmd::probe::{self, baseline, Config, EraChoice, FramingMode, Level, Verdict};

const ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";

fn modern_method(r: &Req, m: &str) -> bool {
    r.is_modern() && r.rpc_method().as_deref() == Some(m)
}

fn legacy_method(r: &Req, m: &str) -> bool {
    !r.is_modern() && r.rpc_method().as_deref() == Some(m)
}

fn result_of(r: &Req, v: Value) -> Resp {
    let id = r
        .json()
        .and_then(|j| j.get("id").cloned())
        .unwrap_or(Value::Null);
    Resp::json(200, &json!({"jsonrpc": "2.0", "id": id, "result": v}))
}

fn modern_empty_result(r: &Req) -> Resp {
    result_of(
        r,
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "0"}}}),
    )
}

fn error_of(r: &Req, status: u16, code: i64) -> Resp {
    let id = r
        .json()
        .and_then(|j| j.get("id").cloned())
        .unwrap_or(Value::Null);
    Resp::json(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "mutant"}}),
    )
}

fn body_has(raw: &[u8], needle: &[u8]) -> bool {
    raw.windows(needle.len()).any(|w| w == needle)
}

fn head_of(raw: &[u8]) -> &[u8] {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(raw.len(), |i| i + 4);
    &raw[..end]
}

fn ok_answer() -> Resp {
    Resp::json(200, &json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
}

fn m(name: &'static str, catches: &'static [&'static str]) -> Mutant {
    Mutant::base(name, catches)
}

#[allow(clippy::too_many_lines)]
fn mutants() -> Vec<Mutant> {
    let mut v = Vec::new();
    // DISC
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "server/discover") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("resultType"));
                })
            }
        }),
        ..m("discover without resultType", &["DISC-01", "PRIM-01"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.is_modern()
                && r.json()
                    .and_then(|j| {
                        j.pointer("/params/_meta/io.modelcontextprotocol~1clientInfo")
                            .cloned()
                    })
                    .is_none())
            .then(|| error_of(r, 400, -32602))
        }),
        ..m("clientInfo required", &["DISC-02"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.error_code() == Some(-32022) {
                p.edit_rpc(|j| j["error"]["data"]["requested"] = json!("x"))
            }
        }),
        ..m("-32022 without data.requested", &["DISC-03"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let body = r
                .json()?
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")?
                .as_str()?
                .to_string();
            (r.header("mcp-protocol-version")
                .is_some_and(|h| h.trim() != body))
            .then(|| error_of(r, 400, -32022))
        }),
        ..m("version mismatch answered -32022", &["DISC-04"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.json().is_some_and(|j| {
                j.pointer("/params/_meta").is_none()
                    && j.get("params").is_some_and(|p| p == &json!({}))
            }) && p.error_code() == Some(-32602)
            {
                p.edit_rpc(|j| j["id"] = Value::Null)
            }
        }),
        ..m("missing _meta error without id", &["DISC-05"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let j = r.json()?;
            (j.pointer("/params/_meta").is_some()
                && j.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                    .is_none())
            .then(|| error_of(r, 400, -32020))
        }),
        ..m("_meta without version answered -32020", &["DISC-06"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_some()
                && j.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities")
                    .is_none()
            {
                j["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
                r.set_json(&j);
            }
            None
        }),
        ..m("clientCapabilities optional", &["DISC-07"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            modern_method(r, "initialize").then(|| modern_empty_result(r))
        }),
        ..m("modern initialize served", &["DISC-08"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            modern_method(r, "ping").then(|| modern_empty_result(r))
        }),
        ..m("modern ping served", &["DISC-09"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            let j = r.json().unwrap_or_default();
            if legacy_method(r, "initialize")
                && j.pointer("/params/clientInfo/name") == Some(&json!("xmd-probe"))
                && j.pointer("/params/protocolVersion") == Some(&json!("2025-11-25"))
            {
                p.edit_rpc(|x| x["result"]["protocolVersion"] = json!("2025-06-18"));
            }
        }),
        ..m("initialize ignores a supported version", &["DISC-10"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (legacy_method(r, "initialize")
                && r.json()
                    .and_then(|j| j.pointer("/params/protocolVersion").cloned())
                    == Some(json!("1900-01-01")))
            .then(|| error_of(r, 200, -32602))
        }),
        ..m("initialize refuses an unknown version", &["DISC-11"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if legacy_method(r, "initialize")
                && r.json()
                    .and_then(|j| j.pointer("/params/clientInfo/name").cloned())
                    == Some(json!("xmd-probe"))
            {
                p.edit_rpc(|x| {
                    x.pointer_mut("/result/serverInfo")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("version"));
                })
            }
        }),
        ..m("serverInfo without version", &["DISC-12"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.header("mcp-protocol-version") == Some("1999-01-01") {
                r.set_header("MCP-Protocol-Version", Some("2025-11-25"));
            }
            None
        }),
        ..m("unknown legacy header version accepted", &["DISC-13"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.error_code() == Some(-32022) {
                p.edit_rpc(|j| j["error"]["data"]["supported"] = json!(["2099-01-01"]))
            }
        }),
        ..m("-32022 lists an undiscovered version", &["DISC-14"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.rpc_method().as_deref() == Some("server/discover")
                && !r.is_modern()
                && r.header("mcp-protocol-version").is_none())
            .then(|| Resp::new(500, None, b""))
        }),
        ..m("claim-less discover answered 500", &["DISC-15"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "server/discover") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("_meta"));
                })
            }
        }),
        ..m("discover without serverInfo", &["DISC-16", "PRIM-02"])
    });
    // HDR
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.is_modern() && r.header("mcp-method").is_none() {
                let m = r.rpc_method()?;
                r.set_header("Mcp-Method", Some(&m));
            }
            None
        }),
        ..m("Mcp-Method optional", &["HDR-01"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.is_modern() && r.header("mcp-method").is_some() {
                let m = r.rpc_method()?;
                r.set_header("Mcp-Method", Some(&m));
            }
            None
        }),
        ..m("Mcp-Method value ignored", &["HDR-02", "HDR-03"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let m = r.rpc_method()?;
            if r.is_modern()
                && r.header("mcp-method")
                    .is_some_and(|h| h.trim().eq_ignore_ascii_case(&m))
            {
                r.set_header("Mcp-Method", Some(&m));
            }
            None
        }),
        ..m("Mcp-Method compared case-insensitively", &["HDR-03"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            r.headers
                .iter()
                .any(|(n, _)| n == "mcp-method" || n == "MCP-METHOD")
                .then(|| error_of(r, 400, -32020))
        }),
        ..m("header names case-sensitive", &["HDR-04"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.is_modern() && r.header("mcp-protocol-version").is_none() {
                r.set_header("MCP-Protocol-Version", Some("2026-07-28"));
            }
            None
        }),
        ..m("MCP-Protocol-Version optional", &["HDR-05"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if modern_method(r, "tools/call")
                && r.header("mcp-name")
                    .is_some_and(|h| !h.starts_with("=?base64?"))
            {
                let n = r.json()?.pointer("/params/name")?.as_str()?.to_string();
                r.set_header(
                    "Mcp-Name",
                    Some(&xmd::mcp::headers::encode_header_value(&n)),
                );
            }
            None
        }),
        ..m("Mcp-Name value ignored", &["HDR-06"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if modern_method(r, "tools/call") && r.header("mcp-name").is_none() {
                let n = r.json()?.pointer("/params/name")?.as_str()?.to_string();
                r.set_header(
                    "Mcp-Name",
                    Some(&xmd::mcp::headers::encode_header_value(&n)),
                );
            }
            None
        }),
        ..m("Mcp-Name optional", &["HDR-07"])
    });
    v.push(Mutant { on_raw: Some(|b: &[u8]| body_has(head_of(b), b"Mcp-Method:   ").then(|| Raw::Answer(Resp::json(400, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32020, "message": "mutant"}}))))), ..m("Mcp-Method whitespace not trimmed", &["HDR-08"]) });
    v.push(Mutant { on_raw: Some(|b: &[u8]| body_has(head_of(b), b"Mcp-Name:   ").then(|| Raw::Answer(Resp::json(400, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32020, "message": "mutant"}}))))), ..m("Mcp-Name whitespace not trimmed", &["HDR-09"]) });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            r.header("mcp-name")
                .is_some_and(|h| {
                    h.starts_with("=?base64?")
                        && xmd::mcp::headers::decode_header_value(h.as_bytes()).is_ok()
                })
                .then(|| error_of(r, 400, -32020))
        }),
        ..m("base64 Mcp-Name not decoded", &["HDR-10"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.header("mcp-name").is_some_and(|h| {
                h.starts_with("=?base64?")
                    && xmd::mcp::headers::decode_header_value(h.as_bytes()).is_err()
            }) {
                let n = r.json()?.pointer("/params/name")?.as_str()?.to_string();
                r.set_header("Mcp-Name", Some(&n));
            }
            None
        }),
        ..m("invalid base64 Mcp-Name accepted", &["HDR-11"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if modern_method(r, "resources/read") {
                let u = r.json()?.pointer("/params/uri")?.as_str()?.to_string();
                r.set_header(
                    "Mcp-Name",
                    Some(&xmd::mcp::headers::encode_header_value(&u)),
                );
            }
            None
        }),
        ..m("resources/read Mcp-Name ignored", &["HDR-12"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.error_code() == Some(-32020) {
                p.edit_rpc(|j| j["id"] = Value::Null)
            }
        }),
        ..m("-32020 without the request id", &["HDR-13"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("tools/list") {
                p.edit_rpc(|j| {
                    if let Some(t) = j.pointer_mut("/result/tools/0/inputSchema") {
                        t["properties"]["probe_n"] = json!({"type": "number", "x-mcp-header": "N"});
                    }
                })
            }
        }),
        ..m("x-mcp-header on a number", &["HDR-14"])
    });
    // TRANS
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("notifications/cancelled") {
                *p = Resp::json(200, &json!({}));
            }
        }),
        ..m("notification answered 200 with a body", &["TRANS-01"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.json().and_then(|j| {
                j.get("id")
                    .and_then(Value::as_str)
                    .map(|i| i.starts_with("probe-ct-"))
            }) == Some(true)
            {
                p.set_header("Content-Type", Some("text/plain"));
            }
        }),
        ..m("replies as text/plain", &["TRANS-02"])
    });
    v.push(Mutant {
        hold_sse: true,
        ..m("SSE reply never ends", &["TRANS-03"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            p.set_header("X-Accel-Buffering", None)
        }),
        ..m("SSE without X-Accel-Buffering", &["TRANS-04"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            r.set_header("Origin", None);
            None
        }),
        ..m("Origin not checked", &["TRANS-05"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if r.header("host")
                .is_some_and(|h| !h.starts_with("127.0.0.1"))
            {
                r.set_header("Host", Some("127.0.0.1"));
            }
            None
        }),
        ..m("Host not checked", &["TRANS-06"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.method == "GET" && r.header("accept") == Some("text/event-stream"))
                .then(|| Resp::json(200, &json!({})))
        }),
        ..m("GET SSE answered with JSON", &["TRANS-07"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            // A modern-only server (no handshake era) that serves GET.
            if legacy_method(r, "initialize") {
                return Some(error_of(r, 400, -32600));
            }
            (r.method == "GET"
                && r.header("accept")
                    .is_some_and(|a| a.starts_with("application/json")))
            .then(|| Resp::json(200, &json!({"manifest": true})))
        }),
        ..m("modern-only server serves GET", &["TRANS-08"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            if legacy_method(r, "initialize") {
                return Some(error_of(r, 400, -32600));
            }
            (r.method == "DELETE").then(|| Resp::new(200, None, b""))
        }),
        ..m("modern-only server serves DELETE", &["TRANS-09"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.is_modern() {
                p.set_header("Mcp-Session-Id", Some("minted"));
            }
        }),
        ..m("modern session minted", &["TRANS-10"])
    });
    v.push(Mutant {
        session: Some("sess id"),
        enforce_session: true,
        ..m("session id not visible ASCII", &["TRANS-11"])
    });
    v.push(Mutant {
        session: Some("sess-1"),
        enforce_session: false,
        ..m("unknown session served", &["TRANS-12"])
    });
    // RPC
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.error_code() == Some(-32700) {
                p.edit_rpc(|j| j["id"] = json!(0))
            }
        }),
        ..m("parse error with an id", &["RPC-01"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.body == b"{}").then(|| result_of(r, json!({})))
        }),
        ..m("{} served", &["RPC-02"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.get("jsonrpc") == Some(&json!("1.0")) {
                j["jsonrpc"] = json!("2.0");
                r.set_json(&j);
            }
            None
        }),
        ..m("jsonrpc 1.0 accepted", &["RPC-03"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.get("id") == Some(&Value::Null) && j.get("method").is_some() {
                j["id"] = json!(99);
                r.set_json(&j);
            }
            None
        }),
        ..m("null id served", &["RPC-04"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.is_modern()
                && r.rpc_method().is_some_and(|m| m.starts_with("xmd_probe/"))
                && p.status == 404
            {
                p.status = 200;
            }
        }),
        ..m("modern unknown method 200", &["RPC-05"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            std::str::from_utf8(&r.body)
                .is_err()
                .then(|| Resp::new(500, None, b""))
        }),
        ..m("invalid UTF-8 500", &["RPC-06"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            body_has(&r.body, b"\\ud800").then(|| Resp::new(500, None, b""))
        }),
        ..m("lone surrogate 500", &["RPC-07"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.body.len() > 1024 * 1024).then(|| Resp::new(500, None, b""))
        }),
        ..m("oversized body 500", &["RPC-08"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            body_has(&r.body, b"[[[[[[[[[[[[").then(|| Resp::new(500, None, b""))
        }),
        ..m("deep nesting 500", &["RPC-09"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            body_has(&r.body, b"\"k49999\"").then(|| Resp::new(500, None, b""))
        }),
        ..m("many keys 500", &["RPC-10"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "resources/read") && p.error_code() == Some(-32602) {
                p.edit_rpc(|j| j["error"]["code"] = json!(-32002))
            }
        }),
        ..m("modern -32002", &["RPC-11", "PRIM-13"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if p.error_code() == Some(-32601)
                && r.json()
                    .is_some_and(|j| j.get("id").is_some_and(Value::is_string))
            {
                p.edit_rpc(|j| j["id"] = Value::Null)
            }
        }),
        ..m("-32601 drops a string id", &["RPC-12"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.json().is_some_and(|j| j.get("id") == Some(&json!(0))) {
                p.edit_rpc(|j| j["id"] = Value::Null)
            }
        }),
        ..m("id 0 answered null", &["RPC-13"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("ping") || modern_method(r, "server/discover") {
                p.edit_rpc(|j| {
                    j.as_object_mut().map(|o| o.remove("jsonrpc"));
                })
            }
        }),
        ..m("response without jsonrpc", &["RPC-14"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.get("params").is_some_and(Value::is_number) {
                j["params"] = json!({});
                r.set_json(&j);
            }
            None
        }),
        ..m("scalar params served", &["RPC-15"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.get("method").is_some_and(Value::is_number) {
                j["method"] = json!(r.header("mcp-method").unwrap_or("ping"));
                r.set_json(&j);
            }
            None
        }),
        ..m("numeric method served", &["RPC-16"])
    });
    // PRIM
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "tools/list") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("resultType"));
                })
            }
        }),
        ..m("tools/list without resultType", &["PRIM-01"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "tools/list") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("_meta"));
                })
            }
        }),
        ..m("tools/list without serverInfo", &["PRIM-02"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if modern_method(r, "tools/list") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("ttlMs"));
                })
            }
        }),
        ..m("tools/list without ttlMs", &["PRIM-03"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, st: &State| {
            if r.rpc_method().as_deref() == Some("tools/list")
                && st.count.load(std::sync::atomic::Ordering::SeqCst) % 2 == 0
            {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/tools")
                        .and_then(Value::as_array_mut)
                        .map(Vec::pop);
                })
            }
        }),
        ..m("tools/list varies", &["PRIM-04", "PRIM-05"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, st: &State| {
            if r.rpc_method().as_deref() == Some("tools/list")
                && st.count.load(std::sync::atomic::Ordering::SeqCst) % 2 == 0
            {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/tools")
                        .and_then(Value::as_array_mut)
                        .map(|a| a.reverse());
                })
            }
        }),
        ..m("tools/list order varies", &["PRIM-05"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("tools/list") {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/tools/1/inputSchema")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("type"));
                })
            }
        }),
        ..m("inputSchema without type", &["PRIM-06"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("tools/list") {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/tools")
                        .and_then(Value::as_array_mut)
                        .map(|a| {
                            a.push(json!({"name": "bad name!", "inputSchema": {"type": "object"}}))
                        });
                })
            }
        }),
        ..m("tool name with a space", &["PRIM-07"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("tools/call") {
                p.edit_rpc(|j| {
                    j.get_mut("result")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("structuredContent"));
                })
            }
        }),
        ..m("structuredContent dropped", &["PRIM-08"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.json().and_then(|j| {
                j.pointer("/params/name")
                    .and_then(Value::as_str)
                    .map(|n| n.starts_with("xmd_probe_absent_"))
            }) == Some(true)
                && p.error_code() == Some(-32602)
            {
                *p = result_of(r, json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "0"}}}));
            }
        }),
        ..m("unknown tool answered as a success", &["PRIM-09"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.pointer("/params/cursor")
                .and_then(Value::as_str)
                .is_some_and(|c| c.starts_with("xmd-probe-"))
            {
                j["params"].as_object_mut()?.remove("cursor");
                r.set_json(&j);
            }
            None
        }),
        ..m("garbage cursor accepted", &["PRIM-11"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            let mut j = r.json()?;
            if j.pointer("/params/cursor") == Some(&json!("c1")) {
                j["params"].as_object_mut()?.remove("cursor");
                r.set_json(&j);
            }
            None
        }),
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("tools/list")
                && p.rpc().is_some_and(|j| j.get("result").is_some())
            {
                p.edit_rpc(|j| j["result"]["nextCursor"] = json!("c1"))
            }
        }),
        ..m("cursor cycle", &["PRIM-12"])
    });
    v.push(Mutant { on_response: Some(|r: &Req, p: &mut Resp, _: &State| if modern_method(r, "resources/read") && p.error_code() == Some(-32602) { *p = result_of(r, json!({"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "private", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "0"}}})); }), ..m("modern missing resource: empty contents", &["PRIM-13"]) });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if legacy_method(r, "resources/read") && p.error_code() == Some(-32002) {
                p.edit_rpc(|j| j["error"]["code"] = json!(-32602))
            }
        }),
        ..m("legacy missing resource -32602", &["PRIM-14"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method()
                .as_deref()
                .is_some_and(|m| m == "server/discover" || m == "initialize")
            {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/capabilities")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("prompts"));
                })
            }
        }),
        ..m("prompts served undeclared", &["PRIM-15"])
    });
    v.push(Mutant {
        on_request: Some(|r: &mut Req, _: &State| {
            (r.rpc_method().as_deref() == Some("prompts/list"))
                .then(|| error_of(r, if r.is_modern() { 404 } else { 200 }, -32601))
        }),
        ..m("declared prompts not served", &["PRIM-16"])
    });
    v.push(Mutant { on_response: Some(|r: &Req, p: &mut Resp, _: &State| if r.is_modern() && p.is_sse() { let mut b = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n".to_vec(); b.extend_from_slice(&p.body); p.body = b; }), ..m("log without logLevel", &["PRIM-17"]) });
    v.push(Mutant { on_response: Some(|r: &Req, p: &mut Resp, _: &State| if r.is_modern() && p.is_sse() { let mut b = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n".to_vec(); b.extend_from_slice(&p.body); p.body = b; }), ..m("server request on a modern stream", &["PRIM-18"]) });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("resources/list") {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/resources/0")
                        .and_then(Value::as_object_mut)
                        .map(|o| o.remove("name"));
                })
            }
        }),
        ..m("resource without name", &["PRIM-19"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("resources/read")
                && p.rpc().is_some_and(|j| j.get("result").is_some())
            {
                p.edit_rpc(|j| j["result"]["contents"] = json!([]))
            }
        }),
        ..m("listed resource reads empty", &["PRIM-20"])
    });
    v.push(Mutant {
        on_response: Some(|r: &Req, p: &mut Resp, _: &State| {
            if r.rpc_method().as_deref() == Some("prompts/list") {
                p.edit_rpc(|j| {
                    j.pointer_mut("/result/prompts")
                        .and_then(Value::as_array_mut)
                        .map(|a| a.push(json!({"description": "a prompt without a name"})));
                })
            }
        }),
        ..m("prompt without name", &["PRIM-21"])
    });
    // FRAME
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b));
            (h.matches("Content-Length:").count() == 2)
                .then(|| {
                    let i = h.rfind("Content-Length: 3\r\n")?;
                    let mut o = b.to_vec();
                    o.drain(i..i + 19);
                    Some(Raw::Rewrite(o))
                })
                .flatten()
        }),
        ..m("duplicate Content-Length accepted", &["FRAME-01"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b)).into_owned();
            let i = h.find("x\r\n")?;
            h[..i].ends_with(|c: char| c.is_ascii_digit()).then(|| {
                let mut o = b.to_vec();
                o.remove(i);
                Raw::Rewrite(o)
            })
        }),
        ..m("Content-Length 123x read as 123", &["FRAME-02"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = head_of(b);
            let i = h.windows(3).position(|w| w == b"e :")?;
            let mut o = b.to_vec();
            o.remove(i + 1);
            Some(Raw::Rewrite(o))
        }),
        ..m("space before colon accepted", &["FRAME-03"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"\r\n b\r\n").then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("obs-fold 500", &["FRAME-04"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b)).to_ascii_lowercase();
            (!h.contains("\r\nhost:") && h.starts_with("post")).then(|| {
                let i = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
                let mut o = b.to_vec();
                o.splice(i..i, b"Host: 127.0.0.1\r\n".iter().copied());
                Raw::Rewrite(o)
            })
        }),
        ..m("missing Host accepted", &["FRAME-05"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let pat: &[u8] = b"Host: other.example\r\n";
            let i = head_of(b).windows(pat.len()).position(|w| w == pat)?;
            let mut o = b.to_vec();
            o.drain(i..i + pat.len());
            Some(Raw::Rewrite(o))
        }),
        ..m("two Hosts accepted", &["FRAME-06"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let pat: &[u8] = b"bad host/x";
            let i = head_of(b).windows(pat.len()).position(|w| w == pat)?;
            let mut o = b.to_vec();
            o.splice(i..i + pat.len(), b"127.0.0.1".iter().copied());
            Some(Raw::Rewrite(o))
        }),
        ..m("invalid Host accepted", &["FRAME-07"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            (body_has(head_of(b), b"a\rb") || body_has(head_of(b), b"a\0b"))
                .then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("bare CR 500", &["FRAME-08"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| body_has(b, b"\r\n\r\nzz\r\n").then(|| Raw::Answer(ok_answer()))),
        ..m("bad chunk-size accepted", &["FRAME-09"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(b, b"\r\n\r\n10000000000000000000002\r\n").then(|| Raw::Answer(ok_answer()))
        }),
        ..m("chunk overflow accepted", &["FRAME-10"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"Transfer-Encoding: chunked, identity").then(|| {
                let mut r = ok_answer();
                r.close = false;
                Raw::Answer(r)
            })
        }),
        ..m("TE not chunked: 200 (kept open)", &["FRAME-11"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = head_of(b);
            (body_has(h, b"Transfer-Encoding: chunked") && body_has(h, b"Content-Length"))
                .then(|| {
                    let mut o = b.to_vec();
                    let i = o
                        .windows(28)
                        .position(|w| w == b"\r\nTransfer-Encoding: chunked")?;
                    o.drain(i..i + 28);
                    Some(Raw::Rewrite(o))
                })
                .flatten()
        }),
        ..m("CL+TE: CL honoured, kept open", &["FRAME-12"])
    });
    v.push(Mutant {
        drop_pipelined: true,
        ..m("pipelined request dropped", &["FRAME-13"])
    });
    v.push(Mutant {
        ignore_expect: true,
        ..m("Expect ignored", &["FRAME-14"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.status == 405 {
                p.set_header("Allow", None);
            }
        }),
        ..m("405 without Allow", &["FRAME-15"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            b.starts_with(b"HEAD ")
                .then(|| Raw::Answer(Resp::new(200, Some("text/plain"), b"body")))
        }),
        ..m("HEAD with a body", &["FRAME-16"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            b.starts_with(b"XMDPROBE ").then(|| {
                let mut r = Resp::new(405, None, b"");
                r.set_header("Allow", Some("GET, POST"));
                Raw::Answer(r)
            })
        }),
        ..m("unknown method 405", &["FRAME-17"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            (head_of(b).len() > 64 * 1024).then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("oversized head 500", &["FRAME-18"])
    });
    v.push(Mutant {
        serialize: true,
        ..m("one connection at a time", &["FRAME-19"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"Transfer-Encoding: xmdprobe").then(|| Raw::Answer(ok_answer()))
        }),
        ..m("unknown coding accepted", &["FRAME-20"])
    });
    v
}

struct Setup {
    _fake: FakeUpstream,
    xmd: Xmd,
}

fn setup() -> Setup {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    let upstream = format!("{}/", fake.base_url());
    let xmd = Xmd::start(&["--upstream", &upstream, "--rate-limit", "0"]);
    Setup { _fake: fake, xmd }
}

fn config(url: &str, framing: FramingMode) -> Config {
    let mut c = Config::new(url);
    c.era = EraChoice::Both;
    c.framing = framing;
    c.args = Some(json!({"url": POST_URL}));
    c.timeout = Duration::from_secs(3);
    c.pace = Duration::ZERO;
    c
}

fn expected() -> Vec<baseline::Expected> {
    baseline::parse(include_str!("probe/xmd-baseline.json")).unwrap()
}

/// (check, level, verdict) of every flag (fail or warn) the baseline does not expect.
fn flags(url: &str, framing: FramingMode) -> Vec<(String, String, Level)> {
    let mut r = probe::run(&config(url, framing)).expect("probe runs");
    baseline::apply(&mut r, &expected());
    r.results
        .iter()
        .filter(|x| matches!(x.verdict, Verdict::Fail | Verdict::Warn) && x.baselined.is_none())
        .map(|x| {
            (
                x.id.to_string(),
                format!("{} {}: {}", x.era.as_str(), x.verdict.as_str(), x.reason),
                probe::check(x.id).unwrap().level,
            )
        })
        .collect()
}

#[test]
fn every_mutant_is_caught_by_its_own_check_and_no_unrelated_must() {
    let s = setup();
    let upstream = format!("http://{}/mcp", s.xmd.addr);
    // The control: the proxy changing nothing is flagged for nothing.
    let control = Proxy::start(&upstream, Mutant::base("control", &[]));
    let t = std::time::Instant::now();
    let c = flags(&control.url, FramingMode::Full);
    eprintln!("control: {} ms", t.elapsed().as_millis());
    assert!(c.is_empty(), "the unchanged proxy was flagged: {c:#?}");
    // The control with legacy sessions that are issued and enforced.
    let sessions = Proxy::start(
        &upstream,
        Mutant {
            session: Some("sess-1"),
            enforce_session: true,
            ..Mutant::base("sessions", &[])
        },
    );
    let c = flags(&sessions.url, FramingMode::Off);
    assert!(c.is_empty(), "the session proxy was flagged: {c:#?}");

    let all = mutants();
    let mut matrix = Vec::new();
    let mut problems = Vec::new();
    let mut own: BTreeSet<&str> = BTreeSet::new();
    // Two at a time (the machine has two cores); results in corpus order.
    let runs: Vec<Vec<(String, String, Level)>> = std::thread::scope(|sc| {
        let handles: Vec<_> = all
            .chunks(all.len().div_ceil(2))
            .map(|part| {
                let upstream = upstream.clone();
                sc.spawn(move || {
                    part.iter()
                        .map(|mu| {
                            let framing = if mu.catches[0].starts_with("FRAME") {
                                FramingMode::Full
                            } else {
                                FramingMode::Off
                            };
                            let p = Proxy::start(&upstream, *mu);
                            let t = std::time::Instant::now();
                            let got = flags(&p.url, framing);
                            eprintln!(
                                "{:<45} {:>6} ms {:?}",
                                mu.name,
                                t.elapsed().as_millis(),
                                got.iter().map(|g| &g.0).collect::<Vec<_>>()
                            );
                            got
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (mu, got) in all.iter().zip(runs) {
        let ids: BTreeSet<&str> = got.iter().map(|(i, _, _)| i.as_str()).collect();
        matrix.push(format!(
            "{:<45} {:<9} caught by {:?}",
            mu.name, mu.catches[0], ids
        ));
        if !ids.contains(mu.catches[0]) {
            problems.push(format!(
                "{}: not caught by {} (flags: {got:?})",
                mu.name, mu.catches[0]
            ));
        }
        for (id, why, level) in &got {
            if *level == Level::Must && !mu.catches.contains(&id.as_str()) {
                problems.push(format!("{}: unrelated MUST {id} flagged: {why}", mu.name));
            }
        }
        own.insert(mu.catches[0]);
    }
    println!(
        "catch matrix ({} mutants):\n{}",
        all.len(),
        matrix.join("\n")
    );
    assert!(problems.is_empty(), "{problems:#?}");
    // Every check has a mutant, except the two xmd itself breaks (its
    // baseline: TRANS-13, PRIM-10), caught against xmd in tests/probe_xmd.rs.
    let missing: Vec<&str> = probe::catalogue()
        .iter()
        .map(|d| d.id)
        .filter(|id| !own.contains(id) && !["TRANS-13", "PRIM-10"].contains(id))
        .collect();
    assert_eq!(missing, Vec::<&str>::new(), "checks without a mutant");
}
