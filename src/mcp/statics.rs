//! Results that never change while the process runs, serialized once in
//! `Mcp::new` into the bytes that follow the id (`,"result":{…}}`), so a
//! reply is `REPLY_PREFIX + id + suffix` with one allocation.

use serde_json::{json, Map, Value};

use super::jsonrpc::result_suffix;
use super::resources::{list_entry, ReadTable};
use super::version::ProtocolVersion;
use super::{Resource, ServerInfo};
use crate::x::tools::Tools;

/// `_meta` key carrying the server identity on every 2026-07-28 result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `ttlMs` on `server/discover`, `tools/list`, `resources/list` and
/// `resources/templates/list`: the lists are compiled in and change only on
/// deploy.
///
/// Default is 3 600 000 (one hour). Clients may serve a cached list that long.
pub const LIST_TTL_MS: u64 = 3_600_000;

/// `ttlMs` on `resources/read`.
///
/// Default is 300 000 (five minutes). Clients may serve a cached body that long.
pub const READ_TTL_MS: u64 = 300_000;

/// `cacheScope` on every cacheable result: nothing varies per caller.
pub const CACHE_SCOPE: &str = "public";

/// `serverInfo.title` (2025-06-18 and later `initialize`).
pub const SERVER_TITLE: &str = "x.md: public X content as Markdown";

/// `instructions` in `initialize` and `server/discover`.
pub const INSTRUCTIONS: &str = "Read-only access to public X (Twitter) content, rendered as Markdown. \
Tools: x_md_get_post (one post, optionally with its thread and quoted post), x_md_get_profile (one account), \
x_md_search_posts (search), x_md_get_followers and x_md_get_following (account lists). \
Every result carries Markdown text plus structuredContent; list tools page with next_cursor. \
Upstream problems (rate limits, missing or protected content) come back as results with isError: true. \
resources/list returns the full service contract.";

/// The capabilities this server advertises: tools, resources and prompts
/// (the prompt list is empty), without `listChanged` or `subscribe` (there
/// is no stream to deliver them on). The handshake revisions also get
/// `logging`, because `logging/setLevel` is answered there; no log
/// notification is ever sent, so every level filters the same nothing.
/// 2026-07-28 removed `logging/setLevel`, so `server/discover` omits it.
pub fn capabilities(v: ProtocolVersion) -> Value {
    if v.is_modern() {
        json!({"tools": {}, "resources": {}, "prompts": {}})
    } else {
        json!({"tools": {}, "resources": {}, "prompts": {}, "logging": {}})
    }
}

/// Keys a `Tool` may carry in a legacy revision (from each revision's
/// `schema.ts`). 2025-03-26 has no `title`, `outputSchema` or `_meta`
/// (and no `structuredContent` to go with an output schema); `icons` and
/// `execution` arrive in 2025-11-25.
fn tool_keys(v: ProtocolVersion) -> Option<&'static [&'static str]> {
    const V0326: &[&str] = &["name", "description", "inputSchema", "annotations"];
    const V0618: &[&str] = &[
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
    ];
    const V1125: &[&str] = &[
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
        "icons",
        "execution",
    ];
    match v {
        ProtocolVersion::V2025_03_26 => Some(V0326),
        ProtocolVersion::V2025_06_18 => Some(V0618),
        ProtocolVersion::V2025_11_25 => Some(V1125),
        ProtocolVersion::V2026_07_28 => None,
    }
}

/// The tool definitions as a revision sees them.
pub(crate) fn tool_definitions(v: ProtocolVersion) -> Value {
    let defs = Tools::definitions();
    let Some(keys) = tool_keys(v) else {
        return defs;
    };
    match defs {
        Value::Array(tools) => Value::Array(
            tools
                .into_iter()
                .map(|t| match t {
                    Value::Object(m) => Value::Object(
                        m.into_iter()
                            .filter(|(k, _)| keys.contains(&k.as_str()))
                            .collect(),
                    ),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

/// One pre-serialized suffix per revision, indexed by `ProtocolVersion::index`.
pub(crate) struct PerVersion(pub(crate) [std::sync::Arc<[u8]>; 4]);

impl PerVersion {
    fn build(f: impl Fn(ProtocolVersion) -> Value) -> PerVersion {
        PerVersion(std::array::from_fn(|i| {
            result_suffix(&f(ProtocolVersion::DATE_ORDER[i])).into()
        }))
    }

    pub(crate) fn get(&self, v: ProtocolVersion) -> &std::sync::Arc<[u8]> {
        &self.0[v.index()]
    }
}

/// Every static reply suffix, plus the pieces tool results reuse.
pub(crate) struct Statics {
    /// `server/discover` (2026-07-28 only).
    pub(crate) discover: std::sync::Arc<[u8]>,
    /// `initialize` per legacy revision (the modern slot is unused).
    pub(crate) initialize: PerVersion,
    /// `ping` and `logging/setLevel` (legacy only): `{}`.
    pub(crate) ping: std::sync::Arc<[u8]>,
    /// `tools/list`.
    pub(crate) tools_list: PerVersion,
    /// `resources/list`.
    pub(crate) resources_list: PerVersion,
    /// `prompts/list` (always empty: this server offers no prompts).
    pub(crate) prompts_list: PerVersion,
    /// `resources/templates/list` (always empty).
    pub(crate) templates_list: PerVersion,
    /// `resources/read`, per resource.
    pub(crate) reads: ReadTable,
    /// `,"resultType":"complete","_meta":{…serverInfo…}`: appended inside a
    /// modern `tools/call` result object.
    pub(crate) modern_tail: std::sync::Arc<[u8]>,
}

impl Statics {
    pub(crate) fn new(info: &ServerInfo, resources: &[Resource]) -> Statics {
        let meta = json!({META_SERVER_INFO: {"name": info.name, "version": info.version}});
        let decorate = |mut m: Map<String, Value>, ttl: Option<u64>| -> Value {
            m.insert("resultType".into(), json!("complete"));
            m.insert("_meta".into(), meta.clone());
            if let Some(ttl) = ttl {
                m.insert("ttlMs".into(), json!(ttl));
                m.insert("cacheScope".into(), json!(CACHE_SCOPE));
            }
            Value::Object(m)
        };
        let obj = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        // One builder per list method, decorated for 2026-07-28 only.
        let per_version = |body: &dyn Fn(ProtocolVersion) -> Value| {
            PerVersion::build(|v| {
                if v.is_modern() {
                    decorate(obj(body(v)), Some(LIST_TTL_MS))
                } else {
                    body(v)
                }
            })
        };
        let supported: Vec<&str> = ProtocolVersion::SUPPORTED
            .iter()
            .map(|v| v.as_str())
            .collect();
        let discover = result_suffix(&decorate(
            obj(json!({
                "supportedVersions": supported,
                "capabilities": capabilities(ProtocolVersion::MODERN),
                "instructions": INSTRUCTIONS,
            })),
            Some(LIST_TTL_MS),
        ))
        .into();
        let initialize = PerVersion::build(|v| {
            let mut server_info = json!({"name": info.name, "version": info.version});
            if v >= ProtocolVersion::V2025_06_18 {
                server_info["title"] = json!(SERVER_TITLE);
            }
            json!({
                "protocolVersion": v.as_str(),
                "capabilities": capabilities(v),
                "serverInfo": server_info,
                "instructions": INSTRUCTIONS,
            })
        });
        let mut modern_tail = br#","resultType":"complete","_meta":"#.to_vec();
        let _ = serde_json::to_writer(&mut modern_tail, &meta);
        Statics {
            discover,
            initialize,
            ping: result_suffix(&json!({})).into(),
            tools_list: per_version(&|v| json!({"tools": tool_definitions(v)})),
            resources_list: per_version(
                &|v| json!({"resources": resources.iter().map(|r| list_entry(r, v)).collect::<Vec<_>>()}),
            ),
            templates_list: per_version(&|_| json!({"resourceTemplates": []})),
            prompts_list: per_version(&|_| json!({"prompts": []})),
            reads: ReadTable::new(resources, |m| decorate(m, Some(READ_TTL_MS))),
            modern_tail: modern_tail.into(),
        }
    }
}
