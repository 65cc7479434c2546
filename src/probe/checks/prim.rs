//! PRIM: primitives and results, gated on the declared capabilities.

use serde_json::{json, Value};

use super::{
    def, expect_result, gate, got, list_tools, safe_tool, seen, tri, S25_RES, S26_BASE, S26_PAGE,
    S26_PROMPTS, S26_RES, S26_TOOLS,
};
use crate::probe::ctx::Ctx;
use crate::probe::{CheckDef, Era, Res};

/// Most pages a `nextCursor` walk follows before PRIM-12 calls it endless: 50.
pub const MAX_WALK_PAGES: usize = 50;

pub(crate) const CHECKS: &[CheckDef] = &[
    def!("PRIM-04", Must, Both, "tools/list does not vary between calls and connections",
        "MCP 2026-07-28 server/tools §Capabilities (the list MUST NOT vary by connection)", S26_TOOLS, tools_stable),
    def!("PRIM-05", Should, Both, "tools/list order is deterministic",
        "MCP 2026-07-28 server/tools §Capabilities (deterministic order SHOULD)", S26_TOOLS, tools_order),
    def!("PRIM-06", Must, Both, "Every tool has a string name and an inputSchema object of type \"object\"",
        "MCP 2026-07-28 server/tools §Tool; schema Tool.inputSchema", S26_TOOLS, tool_shape),
    def!("PRIM-07", Should, Both, "Tool names are 1-128 characters of [A-Za-z0-9_.-] and unique",
        "MCP 2025-11-25 server/tools §Tool Names (SHOULD)", S26_TOOLS, tool_names),
    def!("PRIM-08", Must, Both, "A read-only tool call returns content; structuredContent matches outputSchema's root type and required keys",
        "MCP 2026-07-28 server/tools §Tool Result, §Output Schema (MUST conform)", S26_TOOLS, safe_call),
    def!("PRIM-09", Should, Both, "An unknown tool is answered with an error (-32602 in the spec's example, or isError), never a success",
        "MCP 2026-07-28 server/tools §Error Handling (unknown tools are errors; no keyword)", S26_TOOLS, unknown_tool),
    def!("PRIM-10", Should, Both, "Arguments of the wrong type give a tool execution error (isError: true)",
        "MCP 2025-11-25 server/tools §Error Handling (SEP-1303: input validation errors are tool execution errors)", S26_TOOLS, bad_arguments),
    def!("PRIM-11", Should, Both, "A garbage cursor gets -32602",
        "MCP 2026-07-28 server/utilities/pagination §Error Handling (SHOULD -32602)", S26_PAGE, garbage_cursor),
    def!("PRIM-12", Must, Both, "A nextCursor chain ends (no cycle, at most 50 pages)",
        "MCP 2026-07-28 server/utilities/pagination §Implementation Guidelines", S26_PAGE, cursor_walk),
    def!("PRIM-13", Must, Modern, "An unknown resource gets -32602 (never -32002, never empty contents)",
        "MCP 2026-07-28 server/resources §Error Handling; basic §Error Codes", S26_RES, modern_missing_resource),
    def!("PRIM-14", Should, Legacy, "An unknown resource gets -32002",
        "MCP 2025-11-25 server/resources §Error Handling (Resource not found: -32002)", S25_RES, legacy_missing_resource),
    def!("PRIM-15", Must, Both, "An undeclared primitive's list method gets -32601 (capabilities match handlers)",
        "MCP 2026-07-28 server/tools, resources, prompts §Capabilities; schema MethodNotFoundError", S26_BASE, undeclared),
    def!("PRIM-16", Must, Both, "A declared primitive's list method answers a result",
        "MCP 2026-07-28 server/tools, resources, prompts §Capabilities, §Protocol Messages", S26_BASE, declared),
    def!("PRIM-19", Must, Both, "resources/list entries have string uri and name",
        "MCP 2026-07-28 server/resources §Resource; schema Resource", S26_RES, resource_shape),
    def!("PRIM-20", Must, Both, "Reading a listed resource returns non-empty contents with uri and text or blob",
        "MCP 2026-07-28 server/resources §Reading Resources; schema ReadResourceResult", S26_RES, read_listed),
    def!("PRIM-21", Must, Both, "prompts/list entries have a string name",
        "MCP 2026-07-28 server/prompts §Prompt; schema Prompt", S26_PROMPTS, prompt_shape),
];

fn tools_stable(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let mut lists = Vec::new();
    for _ in 0..3 {
        let ex = ctx.call(era, "tools/list", json!({}));
        let r = tri!(expect_result(&ex));
        let mut names: Vec<String> = r
            .get("tools")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|t| t.to_string()).collect())
            .unwrap_or_default();
        names.sort();
        lists.push(names);
    }
    if lists.windows(2).all(|w| w[0] == w[1]) {
        Res::Pass
    } else {
        Res::Violation("three tools/list calls on three connections gave different tools".into())
    }
}

fn tools_order(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let mut orders = Vec::new();
    for _ in 0..2 {
        let ex = ctx.call(era, "tools/list", json!({}));
        let r = tri!(expect_result(&ex));
        let names: Vec<Value> = r
            .get("tools")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|t| t.get("name").cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .unwrap_or_default();
        orders.push(names);
    }
    if orders[0] == orders[1] {
        Res::Pass
    } else {
        Res::Violation("two tools/list calls listed the tools in different orders".into())
    }
}

fn tools(ctx: &mut Ctx, era: Era) -> Result<Vec<Value>, Res> {
    gate(ctx, era, "tools")?;
    list_tools(ctx, era).ok_or_else(|| Res::Inconclusive("tools/list gave no tools array".into()))
}

fn tool_shape(ctx: &mut Ctx, era: Era) -> Res {
    for t in tri!(tools(ctx, era)) {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            return Res::Violation(format!(
                "a tool without a string name: {}",
                crate::probe::wire::excerpt(t.to_string().as_bytes())
            ));
        };
        let schema = t.get("inputSchema");
        if !schema.is_some_and(Value::is_object)
            || schema.and_then(|s| s.get("type")) != Some(&json!("object"))
        {
            return Res::Violation(format!(
                "{name}: inputSchema is {}",
                schema.unwrap_or(&Value::Null)
            ));
        }
    }
    Res::Pass
}

fn tool_names(ctx: &mut Ctx, era: Era) -> Res {
    let mut seen_names = std::collections::HashSet::new();
    for t in tri!(tools(ctx, era)) {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        let ok = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !ok {
            return Res::Violation(format!("tool name {name:?}"));
        }
        if !seen_names.insert(name.to_string()) {
            return Res::Violation(format!("tool name {name:?} listed twice"));
        }
    }
    Res::Pass
}

fn call(ctx: &mut Ctx, era: Era, name: &str, args: Value) -> crate::probe::wire::Exchange {
    ctx.call(era, "tools/call", json!({"name": name, "arguments": args}))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn safe_call(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let Some(tool) = safe_tool(ctx, era) else {
        return Res::Skip("no tool annotated readOnlyHint: true (name one with --call)".into());
    };
    let name = tool["name"].as_str().unwrap_or("").to_string();
    let args = ctx.cfg.args.clone().unwrap_or(json!({}));
    let ex = call(ctx, era, &name, args);
    let r = match expect_result(&ex) {
        Ok(r) => r,
        Err(Res::Violation(v)) => {
            return Res::Inconclusive(format!("{name}: {v} (give its arguments with --args)"))
        }
        Err(e) => return e,
    };
    if !r.get("content").is_some_and(Value::is_array) {
        return Res::Violation(format!("{name}: result has no content array"));
    }
    if r.get("isError") == Some(&json!(true)) {
        return Res::Inconclusive(format!(
            "{name} returned isError: true (give its arguments with --args)"
        ));
    }
    let Some(schema) = tool.get("outputSchema") else {
        return Res::Pass;
    };
    let Some(sc) = r.get("structuredContent") else {
        return Res::Violation(format!(
            "{name} declares an outputSchema but returned no structuredContent"
        ));
    };
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        let got = json_type(sc);
        if got != ty && !(ty == "number" && got == "integer") {
            return Res::Violation(format!(
                "{name}: structuredContent is {got}, outputSchema says {ty}"
            ));
        }
    }
    for k in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(k) = k.as_str() {
            if sc.get(k).is_none() {
                return Res::Violation(format!("{name}: structuredContent lacks required {k:?}"));
            }
        }
    }
    Res::Pass
}

fn unknown_tool(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let name = format!("xmd_probe_absent_{}", ctx.rng.token(8));
    let ex = call(ctx, era, &name, json!({}));
    let r = tri!(got(&ex));
    match (r.error_code(), r.result()) {
        (Some(_), _) => Res::Pass,
        (None, Some(res)) if res.get("isError") == Some(&json!(true)) => Res::Pass,
        _ => Res::Violation(format!(
            "a call of an absent tool got {} as a success",
            seen(r)
        )),
    }
}

fn bad_arguments(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "tools"));
    let v = ctx.era(era).version.clone();
    if era == Era::Legacy && v.as_str() < "2025-11-25" {
        return Res::Skip(format!("negotiated {v}: the rule is from 2025-11-25"));
    }
    let Some(tool) = safe_tool(ctx, era) else {
        return Res::Skip("no tool annotated readOnlyHint: true (name one with --call)".into());
    };
    let props = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object);
    let Some((key, wrong)) = props.and_then(|p| {
        p.iter()
            .find_map(|(k, s)| match s.get("type").and_then(Value::as_str) {
                Some("string") => Some((k.clone(), json!(12345))),
                Some("integer" | "number" | "boolean") => Some((k.clone(), json!("xmd-probe"))),
                _ => None,
            })
    }) else {
        return Res::Skip("the tool has no property of a simple type".into());
    };
    let name = tool["name"].as_str().unwrap_or("").to_string();
    let ex = call(ctx, era, &name, json!({ key.clone(): wrong }));
    let r = tri!(got(&ex));
    match r.result() {
        Some(res) if res.get("isError") == Some(&json!(true)) => Res::Pass,
        Some(_) => Res::Violation(format!("{name} accepted {key} of the wrong type")),
        None => Res::Violation(format!(
            "{name} with {key} of the wrong type: {} instead of an isError result",
            seen(r)
        )),
    }
}

/// The first declared list method.
fn a_list(ctx: &Ctx, era: Era) -> Option<(&'static str, &'static str)> {
    [
        ("tools", "tools/list"),
        ("resources", "resources/list"),
        ("prompts", "prompts/list"),
    ]
    .into_iter()
    .find(|(c, _)| ctx.era(era).declares(c))
}

fn garbage_cursor(ctx: &mut Ctx, era: Era) -> Res {
    let Some((_, m)) = a_list(ctx, era) else {
        return Res::Skip("no list capability declared".into());
    };
    let cursor = format!("xmd-probe-{}", ctx.rng.token(12));
    let ex = ctx.call(era, m, json!({"cursor": cursor}));
    let r = tri!(got(&ex));
    match r.error_code() {
        Some(-32602) => Res::Pass,
        _ => Res::Violation(format!("{m} with a garbage cursor: {}", seen(r))),
    }
}

fn cursor_walk(ctx: &mut Ctx, era: Era) -> Res {
    let Some((_, m)) = a_list(ctx, era) else {
        return Res::Skip("no list capability declared".into());
    };
    let mut cursors = std::collections::HashSet::new();
    let mut params = json!({});
    for _ in 0..MAX_WALK_PAGES {
        let ex = ctx.call(era, m, params.clone());
        let r = tri!(expect_result(&ex));
        match r.get("nextCursor") {
            None | Some(Value::Null) => return Res::Pass,
            Some(Value::String(c)) => {
                if !cursors.insert(c.clone()) {
                    return Res::Violation(format!("{m}: cursor {c:?} handed out twice (a cycle)"));
                }
                params = json!({"cursor": c});
            }
            Some(other) => return Res::Violation(format!("{m}: nextCursor is {other}")),
        }
    }
    Res::Violation(format!("{m}: more than {MAX_WALK_PAGES} pages"))
}

fn missing_resource(ctx: &mut Ctx, era: Era) -> Result<crate::probe::wire::Exchange, Res> {
    gate(ctx, era, "resources")?;
    let uri = format!("probe://absent/{}", ctx.rng.token(10));
    Ok(ctx.call(era, "resources/read", json!({"uri": uri})))
}

fn modern_missing_resource(ctx: &mut Ctx, era: Era) -> Res {
    let ex = tri!(missing_resource(ctx, era));
    let r = tri!(got(&ex));
    match r.error_code() {
        Some(-32602) => Res::Pass,
        _ => Res::Violation(format!("expected -32602, got {}", seen(r))),
    }
}

fn legacy_missing_resource(ctx: &mut Ctx, era: Era) -> Res {
    let ex = tri!(missing_resource(ctx, era));
    let r = tri!(got(&ex));
    match r.error_code() {
        Some(-32002) => Res::Pass,
        _ => Res::Violation(format!("expected -32002, got {}", seen(r))),
    }
}

const PRIMITIVES: [(&str, &str); 3] = [
    ("tools", "tools/list"),
    ("resources", "resources/list"),
    ("prompts", "prompts/list"),
];

fn undeclared(ctx: &mut Ctx, era: Era) -> Res {
    let mut any = false;
    for (cap, m) in PRIMITIVES {
        if ctx.era(era).declares(cap) {
            continue;
        }
        any = true;
        let ex = ctx.call(era, m, json!({}));
        let r = tri!(got(&ex));
        if r.error_code() != Some(-32601) {
            return Res::Violation(format!("{cap} not declared, yet {m} got {}", seen(r)));
        }
    }
    if any {
        Res::Pass
    } else {
        Res::Skip("tools, resources and prompts are all declared".into())
    }
}

fn declared(ctx: &mut Ctx, era: Era) -> Res {
    let mut any = false;
    for (cap, m) in PRIMITIVES {
        if !ctx.era(era).declares(cap) {
            continue;
        }
        any = true;
        let ex = ctx.call(era, m, json!({}));
        if let Err(r) = expect_result(&ex) {
            return match r {
                Res::Violation(v) => Res::Violation(format!("{cap} declared, but {m}: {v}")),
                r => r,
            };
        }
    }
    if any {
        Res::Pass
    } else {
        Res::Skip("no primitive declared".into())
    }
}

fn resources(ctx: &mut Ctx, era: Era) -> Result<Vec<Value>, Res> {
    gate(ctx, era, "resources")?;
    let ex = ctx.call(era, "resources/list", json!({}));
    let r = expect_result(&ex).map_err(|_| {
        Res::Inconclusive("resources/list gave no result (PRIM-16 says more)".into())
    })?;
    r.get("resources")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| Res::Violation("no resources array".into()))
}

fn resource_shape(ctx: &mut Ctx, era: Era) -> Res {
    for r in tri!(resources(ctx, era)) {
        if !r.get("uri").is_some_and(Value::is_string)
            || !r.get("name").is_some_and(Value::is_string)
        {
            return Res::Violation(format!(
                "resource {}",
                crate::probe::wire::excerpt(r.to_string().as_bytes())
            ));
        }
    }
    Res::Pass
}

fn read_listed(ctx: &mut Ctx, era: Era) -> Res {
    let list = tri!(resources(ctx, era));
    let Some(uri) = list
        .first()
        .and_then(|r| r.get("uri"))
        .and_then(Value::as_str)
    else {
        return Res::Skip("no resource listed".into());
    };
    let uri = uri.to_string();
    let ex = ctx.call(era, "resources/read", json!({"uri": uri}));
    let r = tri!(expect_result(&ex));
    let Some(contents) = r
        .get("contents")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    else {
        return Res::Violation(format!("{uri}: contents missing or empty"));
    };
    for c in contents {
        if !c.get("uri").is_some_and(Value::is_string)
            || !(c.get("text").is_some_and(Value::is_string)
                || c.get("blob").is_some_and(Value::is_string))
        {
            return Res::Violation(format!("{uri}: a contents item without uri and text/blob"));
        }
    }
    Res::Pass
}

fn prompt_shape(ctx: &mut Ctx, era: Era) -> Res {
    tri!(gate(ctx, era, "prompts"));
    let ex = ctx.call(era, "prompts/list", json!({}));
    let Ok(r) = expect_result(&ex) else {
        return Res::Inconclusive("prompts/list gave no result (PRIM-16 says more)".into());
    };
    let Some(list) = r.get("prompts").and_then(Value::as_array) else {
        return Res::Violation("no prompts array".into());
    };
    for p in list {
        if !p.get("name").is_some_and(Value::is_string) {
            return Res::Violation(format!(
                "prompt {}",
                crate::probe::wire::excerpt(p.to_string().as_bytes())
            ));
        }
    }
    Res::Pass
}
