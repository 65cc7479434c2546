//! The mutant corpus: one broken rule each, in four parts by class.
//! `catches[0]` is the mutant's own check; the others are checks of the
//! same rule that may flag it too.
// The mutants are one-line edits of a JSON value; `.map(|x| x.edit())` on
// an Option reads shorter than `if let` there.
#![allow(clippy::option_map_unit_fn)]

mod framing;
mod protocol;
mod results;
mod transport;

use serde_json::{json, Value};

use crate::probe_support::{Mutant, Req, Resp};

pub fn modern_method(r: &Req, m: &str) -> bool {
    r.is_modern() && r.rpc_method().as_deref() == Some(m)
}

pub fn legacy_method(r: &Req, m: &str) -> bool {
    !r.is_modern() && r.rpc_method().as_deref() == Some(m)
}

pub fn result_of(r: &Req, v: Value) -> Resp {
    let id = r
        .json()
        .and_then(|j| j.get("id").cloned())
        .unwrap_or(Value::Null);
    Resp::json(200, &json!({"jsonrpc": "2.0", "id": id, "result": v}))
}

pub fn modern_empty_result(r: &Req) -> Resp {
    result_of(
        r,
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "0"}}}),
    )
}

pub fn error_of(r: &Req, status: u16, code: i64) -> Resp {
    let id = r
        .json()
        .and_then(|j| j.get("id").cloned())
        .unwrap_or(Value::Null);
    Resp::json(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "mutant"}}),
    )
}

pub fn body_has(raw: &[u8], needle: &[u8]) -> bool {
    raw.windows(needle.len()).any(|w| w == needle)
}

pub fn head_of(raw: &[u8]) -> &[u8] {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(raw.len(), |i| i + 4);
    &raw[..end]
}

pub fn ok_answer() -> Resp {
    Resp::json(200, &json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
}

pub fn m(name: &'static str, catches: &'static [&'static str]) -> Mutant {
    Mutant::base(name, catches)
}

/// Every mutant, in class order.
pub fn mutants() -> Vec<Mutant> {
    let mut v = Vec::new();
    protocol::add(&mut v);
    transport::add(&mut v);
    results::add(&mut v);
    framing::add(&mut v);
    v
}
