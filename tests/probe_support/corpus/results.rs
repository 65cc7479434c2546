//! PRIM mutants: primitives and results.

use serde_json::{json, Value};

use super::*;
use crate::probe_support::{Mutant, Req, Resp, State};

/// Adds this part's mutants.
pub fn add(v: &mut Vec<Mutant>) {
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
}
