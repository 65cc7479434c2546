//! Checks over what the other checks saw: every 2026-07-28 response kept
//! by [`Ctx::note_modern`] (error codes, `resultType`, server identity,
//! cache hints, what a reply stream carries). They run last.

use serde_json::{json, Value};

use super::{def, S26_BASE, S26_CACHE, S26_HTTP};
use crate::probe::ctx::Ctx;
use crate::probe::{CheckDef, Era, Res};

pub(crate) const CHECKS: &[CheckDef] = &[
    def!(
        "RPC-11",
        Must,
        Modern,
        "Only -32020, -32021, -32022 from -32020..-32099; never -32002 or -32042 at 2026-07-28",
        "MCP 2026-07-28 basic §Error Codes",
        S26_BASE,
        code_range
    ),
    def!(
        "PRIM-01",
        Must,
        Modern,
        "Every 2026-07-28 result has resultType complete or input_required",
        "MCP 2026-07-28 basic §ResultType; schema Result.resultType",
        S26_BASE,
        result_type
    ),
    def!(
        "PRIM-02",
        Should,
        Modern,
        "Every 2026-07-28 result names the server in _meta io.modelcontextprotocol/serverInfo",
        "MCP 2026-07-28 basic §Per-response protocol fields",
        S26_BASE,
        result_server_info
    ),
    def!(
        "PRIM-03",
        Must,
        Modern,
        "Cacheable results carry integer ttlMs >= 0 and cacheScope public or private",
        "MCP 2026-07-28 server/utilities/caching §TTL, §Cache Scope; schema CacheableResult",
        S26_CACHE,
        cache_fields
    ),
    def!(
        "PRIM-17",
        Must,
        Modern,
        "No notifications/message on a reply stream without a requested logLevel",
        "MCP 2026-07-28 streamable-http §Receiving Messages; schema RequestMetaObject.logLevel",
        S26_HTTP,
        no_log
    ),
    def!(
        "PRIM-18",
        Must,
        Modern,
        "No JSON-RPC request on a 2026-07-28 reply stream",
        "MCP 2026-07-28 basic/transports/streamable-http §Receiving Messages",
        S26_HTTP,
        no_server_requests
    ),
];

fn code_range(ctx: &mut Ctx, _era: Era) -> Res {
    let mut checked = 0;
    for (m, r) in &ctx.modern_seen {
        for msg in r.messages() {
            let Some(c) = msg.pointer("/error/code").and_then(Value::as_i64) else {
                continue;
            };
            checked += 1;
            if ((-32099..=-32020).contains(&c) && !(-32022..=-32020).contains(&c))
                || c == -32002
                || c == -32042
            {
                return Res::Violation(format!("{m}: error code {c}"));
            }
        }
    }
    if checked == 0 {
        Res::Inconclusive("no modern error response was seen".into())
    } else {
        Res::Pass
    }
}

/// Methods 2026-07-28 removed: their answers are judged by DISC-08/09.
const REMOVED: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Every modern result seen: (method, result), removed methods left out.
fn modern_results(ctx: &Ctx) -> Vec<(String, Value)> {
    ctx.modern_seen
        .iter()
        .filter(|(m, _)| !REMOVED.contains(&m.as_str()))
        .flat_map(|(m, r)| {
            r.messages()
                .into_iter()
                .filter_map(|msg| msg.get("result").cloned())
                .map(move |res| (m.clone(), res))
        })
        .collect()
}

fn none_seen() -> Res {
    Res::Inconclusive("no modern result was seen".into())
}

fn result_type(ctx: &mut Ctx, _era: Era) -> Res {
    let all = modern_results(ctx);
    if all.is_empty() {
        return none_seen();
    }
    for (m, r) in all {
        match r.get("resultType").and_then(Value::as_str) {
            Some("complete" | "input_required") => {}
            other => return Res::Violation(format!("{m}: resultType {other:?}")),
        }
    }
    Res::Pass
}

fn result_server_info(ctx: &mut Ctx, _era: Era) -> Res {
    let all = modern_results(ctx);
    if all.is_empty() {
        return none_seen();
    }
    for (m, r) in all {
        if !r
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo/name")
            .is_some_and(Value::is_string)
        {
            return Res::Violation(format!("{m}: no _meta serverInfo"));
        }
    }
    Res::Pass
}

const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

fn cache_fields(ctx: &mut Ctx, _era: Era) -> Res {
    let all: Vec<_> = modern_results(ctx)
        .into_iter()
        .filter(|(m, r)| {
            CACHEABLE.contains(&m.as_str()) && r.get("resultType") != Some(&json!("input_required"))
        })
        .collect();
    if all.is_empty() {
        return none_seen();
    }
    for (m, r) in all {
        if r.get("ttlMs").and_then(Value::as_u64).is_none() {
            return Res::Violation(format!(
                "{m}: ttlMs is {}",
                r.get("ttlMs").unwrap_or(&Value::Null)
            ));
        }
        match r.get("cacheScope").and_then(Value::as_str) {
            Some("public" | "private") => {}
            other => return Res::Violation(format!("{m}: cacheScope {other:?}")),
        }
    }
    Res::Pass
}

fn stream_messages(ctx: &Ctx) -> Vec<(String, Value)> {
    ctx.modern_seen
        .iter()
        .filter(|(_, r)| r.is_sse())
        .flat_map(|(m, r)| r.messages().into_iter().map(move |x| (m.clone(), x)))
        .collect()
}

fn no_log(ctx: &mut Ctx, _era: Era) -> Res {
    let msgs = stream_messages(ctx);
    if msgs.is_empty() {
        return Res::Skip("no modern reply came as an event stream".into());
    }
    for (m, x) in msgs {
        if x.get("method") == Some(&json!("notifications/message")) {
            return Res::Violation(format!(
                "{m}: notifications/message without a requested logLevel"
            ));
        }
    }
    Res::Pass
}

fn no_server_requests(ctx: &mut Ctx, _era: Era) -> Res {
    let msgs = stream_messages(ctx);
    if msgs.is_empty() {
        return Res::Skip("no modern reply came as an event stream".into());
    }
    for (m, x) in msgs {
        if x.get("method").is_some() && x.get("id").is_some() {
            return Res::Violation(format!(
                "{m}: the stream carried a request ({})",
                x["method"]
            ));
        }
    }
    Res::Pass
}
