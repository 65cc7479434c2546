//! The check catalogue: one file per class, each a list of [`CheckDef`]s.

mod disc;
mod frame;
mod frame_conn;
mod hdr;
mod observed;
mod prim;
mod raw_http;
mod rpc;
mod trans;

use std::sync::OnceLock;

use serde_json::Value;

use super::ctx::Ctx;
use super::wire::{Exchange, Response};
use super::{CheckDef, Era, Res, TargetKind};

/// Every check, in run order (the cross-cutting checks that read what the
/// others saw run last).
pub fn catalogue() -> &'static [&'static CheckDef] {
    static ALL: OnceLock<Vec<&'static CheckDef>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<&'static CheckDef> = Vec::new();
        for list in [
            disc::CHECKS,
            hdr::CHECKS,
            trans::CHECKS,
            rpc::CHECKS,
            prim::CHECKS,
            frame::CHECKS,
            observed::CHECKS,
        ] {
            v.extend(list.iter());
        }
        v
    })
}

// Clause URLs.
pub(crate) const S26_HTTP: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http";
pub(crate) const S26_BASE: &str = "https://modelcontextprotocol.io/specification/2026-07-28/basic";
pub(crate) const S26_VER: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning";
pub(crate) const S26_DISC: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/discover";
pub(crate) const S26_CACHE: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching";
pub(crate) const S26_TOOLS: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/tools";
pub(crate) const S26_RES: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/resources";
pub(crate) const S26_PAGE: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination";
pub(crate) const S25_HTTP: &str =
    "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports";
pub(crate) const S25_LIFE: &str =
    "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle";
pub(crate) const S25_RES: &str =
    "https://modelcontextprotocol.io/specification/2025-11-25/server/resources";
pub(crate) const S0326_BASE: &str =
    "https://modelcontextprotocol.io/specification/2025-03-26/basic";
pub(crate) const S26_PROMPTS: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/server/prompts";
pub(crate) const JSONRPC: &str = "https://www.jsonrpc.org/specification";
pub(crate) const RFC9112: &str = "https://www.rfc-editor.org/rfc/rfc9112";
pub(crate) const RFC9110: &str = "https://www.rfc-editor.org/rfc/rfc9110";

/// The response, or an inconclusive verdict saying why none came.
pub(crate) fn got(ex: &Exchange) -> Result<&Response, Res> {
    ex.response.as_ref().ok_or_else(|| {
        Res::Inconclusive(format!(
            "no response: {}",
            ex.error.as_deref().unwrap_or("unknown")
        ))
    })
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(r) => return r,
        }
    };
}
pub(crate) use tri;

/// A short description of what came back.
pub(crate) fn seen(r: &Response) -> String {
    match r.rpc() {
        Some(m) => match m.get("error") {
            Some(e) => format!(
                "HTTP {} with JSON-RPC error {}",
                r.status,
                e.get("code").map_or("(no code)".into(), Value::to_string)
            ),
            None => format!("HTTP {} with a result", r.status),
        },
        None => format!(
            "HTTP {} ({} body bytes, not JSON-RPC)",
            r.status,
            r.body.len()
        ),
    }
}

/// Expects HTTP `status` (when given) and JSON-RPC error `code`. With
/// `--target gateway`, a bare HTTP status without a JSON-RPC body is enough
/// (intermediaries need not write JSON-RPC: streamable-http §Server Validation).
pub(crate) fn expect_error(ctx: &Ctx, ex: &Exchange, status: Option<u16>, code: i64) -> Res {
    let r = tri!(got(ex));
    let status_ok = status.is_none_or(|s| r.status == s);
    match r.error_code() {
        Some(c) if c == code && status_ok => Res::Pass,
        None if ctx.cfg.target == TargetKind::Gateway && status_ok && r.status >= 400 => Res::Pass,
        _ => Res::Violation(format!(
            "expected {}JSON-RPC error {code}, got {}",
            status.map_or(String::new(), |s| format!("HTTP {s} with ")),
            seen(r)
        )),
    }
}

/// Passes when the answer is not the given error code (the request was
/// accepted past header validation).
pub(crate) fn expect_not_error(ex: &Exchange, code: i64) -> Res {
    let r = tri!(got(ex));
    match r.error_code() {
        Some(c) if c == code => Res::Violation(format!("rejected with {}", seen(r))),
        _ if r.rpc().is_none() => Res::Violation(format!("no JSON-RPC answer: {}", seen(r))),
        _ => Res::Pass,
    }
}

/// Passes on a JSON-RPC result.
pub(crate) fn expect_result(ex: &Exchange) -> Result<Value, Res> {
    let r = got(ex)?;
    r.result()
        .ok_or_else(|| Res::Violation(format!("expected a result, got {}", seen(r))))
}

/// The era of a correct request used by the framing checks.
pub(crate) fn primary(ctx: &Ctx) -> Era {
    if ctx.modern.is_some() {
        Era::Modern
    } else {
        Era::Legacy
    }
}

/// A tool the probe may call: `--call`, or the first `readOnlyHint: true`.
pub(crate) fn safe_tool(ctx: &mut Ctx, era: Era) -> Option<Value> {
    let tools = list_tools(ctx, era)?;
    let call = ctx.cfg.call.clone();
    tools.into_iter().find(|t| match &call {
        Some(n) => t.get("name").and_then(Value::as_str) == Some(n.as_str()),
        None => t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true)),
    })
}

/// The first page of `tools/list` (kept for the run).
pub(crate) fn list_tools(ctx: &mut Ctx, era: Era) -> Option<Vec<Value>> {
    if !ctx.era(era).declares("tools") {
        return None;
    }
    if let Some(t) = &ctx.era(era).tools {
        return Some(t.clone());
    }
    let ex = ctx.call(era, "tools/list", serde_json::json!({}));
    let tools = ex
        .response
        .as_ref()?
        .result()?
        .get("tools")?
        .as_array()?
        .clone();
    ctx.era_mut(era).tools = Some(tools.clone());
    Some(tools)
}

/// Skip unless the era declares `cap`.
pub(crate) fn gate(ctx: &Ctx, era: Era, cap: &str) -> Result<(), Res> {
    if ctx.era(era).declares(cap) {
        Ok(())
    } else {
        Err(Res::Skip(format!("capability not declared: {cap}")))
    }
}

/// Replaces (or, with `None`, removes) every header named `name`.
pub(crate) fn set_header(h: &mut Vec<(String, String)>, name: &str, value: Option<&str>) {
    h.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        h.push((name.to_string(), v.to_string()));
    }
}

/// Sends `body` in `era` with the correct headers changed by `edit`.
pub(crate) fn send_edited(
    ctx: &mut Ctx,
    era: Era,
    body: &Value,
    edit: impl FnOnce(&mut Vec<(String, String)>),
) -> Exchange {
    let mut h = ctx.headers_for(era, body);
    edit(&mut h);
    let ex = ctx.post_with(&h, body.to_string().as_bytes());
    ctx.note_modern(era, body, &ex);
    ex
}

/// A check definition.
macro_rules! def {
    ($id:literal, $lvl:ident, $scope:ident, $title:literal, $clause:literal, $url:expr, $f:path) => {
        $crate::probe::CheckDef {
            id: $id,
            level: $crate::probe::Level::$lvl,
            scope: $crate::probe::Scope::$scope,
            title: $title,
            clause: $clause,
            url: $url,
            hostile: false,
            full_only: false,
            run: $f,
        }
    };
    ($id:literal, $lvl:ident, $scope:ident, $title:literal, $clause:literal, $url:expr, $f:path, hostile) => {
        $crate::probe::CheckDef {
            hostile: true,
            ..def!($id, $lvl, $scope, $title, $clause, $url, $f)
        }
    };
    ($id:literal, $lvl:ident, $scope:ident, $title:literal, $clause:literal, $url:expr, $f:path, full) => {
        $crate::probe::CheckDef {
            hostile: true,
            full_only: true,
            ..def!($id, $lvl, $scope, $title, $clause, $url, $f)
        }
    };
}
pub(crate) use def;
