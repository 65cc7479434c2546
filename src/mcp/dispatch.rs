//! The routing ladder: one parsed body in, one [`Outcome`] out.
//!
//! ```text
//! body ─► JSON? ─no─► 400 -32700
//!      ─► one JSON-RPC object? ─no─► 400 -32600 (batches included)
//!      ─► response ─► 202 (400 -32600 under a 2026-07-28 header)
//!      ─► notification ─► 202 (400 -32600 under an unknown legacy header)
//!      ─► request with params._meta protocolVersion claim ─► modern ladder:
//!             _meta complete?            else 400 -32602
//!             headers mirror the body?   else 400 -32020
//!             claim is 2026-07-28?       else 400 -32022
//!             method ─► result | 404 -32601 | -32602
//!      ─► request with header 2026-07-28, no claim
//!             ─► initialize: 400 -32020, otherwise 400 -32602
//!      ─► legacy request: initialize negotiates (headers ignored);
//!             others need a legacy header value or none (else 400 -32600)
//!             ─► result | 200 -32601 | 200 -32602 / -32002
//! ```
//!
//! `prompts/list` is served (empty) in both eras and `logging/setLevel` in
//! the handshake era (accepted, nothing is ever logged to the client): the
//! official conformance suite calls both unconditionally.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::error::{clip, clip_bytes, http_status, Era, RpcError, HEADER_MISMATCH};
use super::headers::{
    decode_header_value, Headers, HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_MCP_PROTOCOL_VERSION,
};
use super::jsonrpc::{classify, error_message, parse_body, splice, BodyError, Id, Message};
use super::version::ProtocolVersion;
use super::{call, results};
use super::{Mcp, Outcome, PendingCall, Reply};

/// `_meta` key of the per-request revision claim (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities (required, an object).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's identity (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

fn reply(status: u16, body: Vec<u8>) -> Outcome {
    Outcome::Reply(Reply {
        status,
        body: Some(body),
        tail: None,
    })
}

fn fail(id: Option<&Id>, err: RpcError, era: Era) -> Outcome {
    reply(http_status(err.code, era), error_message(id, &err))
}

/// A result whose pre-serialized suffix is shared, not copied: the body
/// is `REPLY_PREFIX + id` and the suffix travels as the reply's tail.
fn ok(id: &Id, suffix: &Arc<[u8]>) -> Outcome {
    Outcome::Reply(Reply {
        status: 200,
        body: Some(splice(id, b"")),
        tail: Some(Arc::clone(suffix)),
    })
}

fn accepted() -> Outcome {
    Outcome::Reply(Reply {
        status: 202,
        body: None,
        tail: None,
    })
}

/// Handles one POST body.
pub(crate) fn handle(
    mcp: &Mcp,
    headers: &Headers<'_, '_>,
    body: &[u8],
    method_seen: &mut Option<String>,
) -> Outcome {
    let value: Value = match parse_body(body) {
        Ok(v) => v,
        Err(BodyError::NotJson) => return fail(None, RpcError::parse_error(), Era::Legacy),
        Err(BodyError::TooManyValues) => {
            return fail(
                None,
                RpcError::invalid_request("the body holds more than 10000 JSON values"),
                Era::Legacy,
            )
        }
        Err(BodyError::TooDeep) => {
            return fail(
                None,
                RpcError::invalid_request(&format!(
                    "the body nests arrays and objects deeper than {} levels",
                    super::jsonrpc::MAX_BODY_DEPTH
                )),
                Era::Legacy,
            )
        }
    };
    let msg = match classify(&value) {
        Ok(m) => m,
        Err(inv) => {
            return fail(
                inv.id.as_ref(),
                RpcError::invalid_request(inv.why),
                Era::Legacy,
            )
        }
    };
    *method_seen = match &msg {
        Message::Request { method, .. } => Some(clip(method).into_owned()),
        Message::Notification { .. } => Some("notification".to_string()),
        Message::Response => None,
    };
    let header_version = headers.get(HEADER_MCP_PROTOCOL_VERSION);
    let modern_header = header_version == Some(ProtocolVersion::MODERN.as_str().as_bytes());
    let claim = msg
        .params()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .and_then(|m| m.get(META_PROTOCOL_VERSION));
    match msg {
        Message::Response if modern_header => fail(
            None,
            RpcError::invalid_request("2026-07-28 clients must not POST JSON-RPC responses"),
            Era::Modern,
        ),
        // 2026-07-28 defines no client notifications over HTTP: accept and
        // drop them, whatever their headers (nothing is answered, so there
        // is nothing to cross-check).
        Message::Notification { .. } if claim.is_some() || modern_header => accepted(),
        Message::Response | Message::Notification { .. } => match legacy_version(header_version) {
            Ok(_) => accepted(),
            Err(e) => fail(None, e, Era::Legacy),
        },
        Message::Request { id, method, params } => {
            if let (Some(claim), Some(params)) = (claim, params) {
                modern(mcp, headers, id, method, params, claim)
            } else if modern_header {
                let err = if method == "initialize" {
                    RpcError::new(
                        HEADER_MISMATCH,
                        "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match the body, \
                         which has no params._meta protocol version; send initialize without that header to start \
                         a 2025 handshake",
                    )
                } else {
                    RpcError::invalid_params(format!(
                        "Invalid params: MCP-Protocol-Version 2026-07-28 requires params._meta with \
                         {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
                    ))
                };
                fail(Some(&id), err, Era::Modern)
            } else {
                legacy(mcp, header_version, id, method, params)
            }
        }
    }
}

/// The revision of a non-`initialize` legacy message, from its header.
fn legacy_version(header: Option<&[u8]>) -> Result<ProtocolVersion, RpcError> {
    match header {
        None => Ok(ProtocolVersion::DEFAULT_LEGACY),
        Some(b) => match ProtocolVersion::parse_bytes(b) {
            Some(v) if !v.is_modern() => Ok(v),
            _ => Err(RpcError::invalid_request(&format!(
                "unsupported MCP-Protocol-Version header value '{}'; after initialize this endpoint accepts \
                 2025-11-25, 2025-06-18 or 2025-03-26 (or 2026-07-28 with params._meta)",
                clip_bytes(b)
            ))),
        },
    }
}

fn legacy(
    mcp: &Mcp,
    header: Option<&[u8]>,
    id: Id,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Outcome {
    if method == "initialize" {
        // Negotiation wins over any header: the client cannot know our
        // revisions before this answer.
        return match params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            Some(requested) => ok(
                &id,
                mcp.statics
                    .initialize
                    .get(ProtocolVersion::negotiate(requested)),
            ),
            None => fail(
                Some(&id),
                RpcError::invalid_params(
                    "Invalid params: initialize requires params.protocolVersion (a string)",
                ),
                Era::Legacy,
            ),
        };
    }
    match legacy_version(header) {
        Ok(v) => serve(mcp, v, id, method, params),
        Err(e) => fail(Some(&id), e, Era::Legacy),
    }
}

fn modern(
    mcp: &Mcp,
    headers: &Headers<'_, '_>,
    id: Id,
    method: &str,
    params: &Map<String, Value>,
    claim: &Value,
) -> Outcome {
    let bad = |e: RpcError| fail(Some(&id), e, Era::Modern);
    // 1. The envelope is complete.
    let meta = params.get("_meta").and_then(Value::as_object);
    let Some(claim) = claim.as_str() else {
        return bad(RpcError::invalid_params(format!(
            "Invalid params: params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
        )));
    };
    if !meta
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .is_some_and(Value::is_object)
    {
        return bad(RpcError::invalid_params(format!(
            "Invalid params: params._meta[\"{META_CLIENT_CAPABILITIES}\"] is required (an object)"
        )));
    }
    // 2. The mirrored headers agree with the body.
    if let Err(e) = mirror_literal(headers, HEADER_MCP_PROTOCOL_VERSION, claim) {
        return bad(e);
    }
    if let Err(e) = mirror_literal(headers, HEADER_MCP_METHOD, method) {
        return bad(e);
    }
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        if let Err(e) = mirror_name(headers, field, params.get(field).and_then(Value::as_str)) {
            return bad(e);
        }
    }
    // 3. The claimed revision is one we serve statelessly.
    match ProtocolVersion::parse(claim) {
        Some(v) if v.is_modern() => serve(mcp, v, id, method, Some(params)),
        _ => bad(RpcError::unsupported_version(claim)),
    }
}

/// `MCP-Protocol-Version` / `Mcp-Method`: present and byte-equal to the body
/// (after OWS trimming; values are case-sensitive).
fn mirror_literal(headers: &Headers<'_, '_>, name: &str, body: &str) -> Result<(), RpcError> {
    match headers.get(name) {
        None => Err(RpcError::header_missing(name, body)),
        Some(h) if h == body.as_bytes() => Ok(()),
        Some(h) => Err(RpcError::header_mismatch(name, &clip_bytes(h), body)),
    }
}

/// `Mcp-Name`: decoded (`=?base64?…?=`) and equal to `params.name` /
/// `params.uri`; required when the body has the field, refused when the
/// header names something the body does not.
fn mirror_name(headers: &Headers<'_, '_>, field: &str, body: Option<&str>) -> Result<(), RpcError> {
    let header = headers.get(HEADER_MCP_NAME);
    match (header, body) {
        (None, None) => Ok(()),
        (None, Some(b)) => Err(RpcError::header_missing(HEADER_MCP_NAME, b)),
        (Some(h), None) => Err(RpcError::new(
            HEADER_MISMATCH,
            format!(
                "Header mismatch: Mcp-Name header value '{}' does not match the body, which has no string params.{field}",
                clip_bytes(h)
            ),
        )),
        (Some(h), Some(b)) => match decode_header_value(h) {
            Ok(decoded) if decoded == b => Ok(()),
            Ok(decoded) => Err(RpcError::header_mismatch(HEADER_MCP_NAME, &decoded, b)),
            Err(e) => Err(RpcError::new(
                HEADER_MISMATCH,
                format!("Header mismatch: Mcp-Name header value '{}' cannot be decoded ({e})", clip_bytes(h)),
            )),
        },
    }
}

/// The RFC 5424 severities `logging/setLevel` accepts (handshake era).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Pagination: every list here is one page and no cursor is ever issued.
fn check_no_cursor(params: Option<&Map<String, Value>>) -> Result<(), RpcError> {
    match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(RpcError::invalid_params(
            "Invalid cursor: this list fits in one page and this server issues no cursors",
        )),
    }
}

/// The methods, once the era and revision are settled.
fn serve(
    mcp: &Mcp,
    version: ProtocolVersion,
    id: Id,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Outcome {
    let era = Era::of(version);
    let modern = version.is_modern();
    let st = &mcp.statics;
    let list = |suffix: &Arc<[u8]>| match check_no_cursor(params) {
        Ok(()) => ok(&id, suffix),
        Err(e) => fail(Some(&id), e, era),
    };
    match method {
        "server/discover" if modern => ok(&id, &st.discover),
        "ping" if !modern => ok(&id, &st.ping),
        "tools/list" => list(st.tools_list.get(version)),
        "resources/list" => list(st.resources_list.get(version)),
        "resources/templates/list" => list(st.templates_list.get(version)),
        "prompts/list" => list(st.prompts_list.get(version)),
        "prompts/get" => {
            let err = match params.and_then(|p| p.get("name")).and_then(Value::as_str) {
                None => RpcError::invalid_params(
                    "Invalid params: params.name must be a string naming a prompt",
                ),
                Some(name) => RpcError::invalid_params(format!(
                    "Unknown prompt: {} (this server offers no prompts; prompts/list is empty)",
                    clip(name)
                )),
            };
            fail(Some(&id), err, era)
        }
        "logging/setLevel" if !modern => {
            match params.and_then(|p| p.get("level")).and_then(Value::as_str) {
                Some(level) if LOG_LEVELS.contains(&level) => ok(&id, &st.ping),
                _ => fail(
                    Some(&id),
                    RpcError::invalid_params(format!(
                        "Invalid params: params.level must be one of {}",
                        LOG_LEVELS.join(", ")
                    )),
                    era,
                ),
            }
        }
        "resources/read" => match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
            None => fail(
                Some(&id),
                RpcError::invalid_params("Invalid params: params.uri must be a string"),
                era,
            ),
            Some(uri) => match st.reads.find(uri, modern) {
                Some(suffix) => ok(&id, suffix),
                None => fail(Some(&id), RpcError::resource_not_found(uri, era), era),
            },
        },
        "tools/call" => match call::prepare(params) {
            Ok(call) => {
                let hit = mcp.results.get(
                    &results::key(&call),
                    version,
                    &st.modern_tail,
                    std::time::Instant::now(),
                );
                if let Some(tail) = hit {
                    crate::metrics::METRICS.tool(call.tool(), 0);
                    crate::metrics::METRICS.cache(crate::x::cache::CacheStatus::Hit);
                    return ok(&id, &tail);
                }
                Outcome::Call(Box::new(PendingCall {
                    tools: mcp.tools.clone(),
                    results: mcp.results.clone(),
                    call,
                    id,
                    version,
                    modern_tail: st.modern_tail.clone(),
                    steps: std::cell::Cell::new(0),
                }))
            }
            Err(e) => fail(Some(&id), e, era),
        },
        _ => fail(Some(&id), RpcError::method_not_found(), era),
    }
}
