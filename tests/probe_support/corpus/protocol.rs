//! DISC and HDR mutants: discovery, era negotiation, mirrored headers.

use serde_json::{json, Value};

use super::*;
use crate::probe_support::{Mutant, Raw, Req, Resp, State};

/// Adds this part's mutants.
pub fn add(v: &mut Vec<Mutant>) {
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
}
