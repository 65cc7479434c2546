//! TRANS and RPC mutants: the Streamable HTTP transport and the JSON-RPC envelope.

use serde_json::{json, Value};

use super::*;
use crate::probe_support::{Mutant, Req, Resp, State};

/// Adds this part's mutants.
pub fn add(v: &mut Vec<Mutant>) {
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
}
