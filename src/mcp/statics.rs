//! Results that never change while the process runs, serialized once into
//! the bytes that follow the id (`,"result":{…}}`), so a reply is
//! `REPLY_PREFIX + id + suffix` with one allocation.
//!
//! Each result is serialized on first use, not at start-up: an idle server
//! holds none of them (nor the resource texts, when the resource list is
//! given lazily), and never builds their `Value` trees unless asked.

use std::sync::{Arc, LazyLock, OnceLock};

use serde_json::{json, Map, Value};

use super::jsonrpc::result_suffix;
use super::resources::{list_entry, read_result};
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

/// `instructions` in `initialize` and `server/discover` (the tool list is
/// built from the tool registry).
pub const INSTRUCTIONS: &str = crate::x::registry::INSTRUCTIONS;

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

/// Builds the resource list on first use.
pub(crate) type ResourceSource = Box<dyn FnOnce() -> Vec<Resource> + Send>;

/// What the static results are built from.
pub(crate) struct Source {
    /// `serverInfo.name`.
    name: String,
    /// `serverInfo.version`.
    version: String,
    /// The resources, in `resources/list` order.
    resources: LazyLock<Vec<Resource>, ResourceSource>,
    /// The result budget (`--max-result-chars`) every tool declares as
    /// `_meta["anthropic/maxResultSizeChars"]`.
    max_result_chars: usize,
}

impl Source {
    /// The resources, built now if not yet.
    pub(crate) fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The `_meta` object naming this server (2026-07-28 results).
    fn meta(&self) -> Value {
        json!({META_SERVER_INFO: {"name": self.name, "version": self.version}})
    }

    /// Adds the 2026-07-28 result fields to `m`: `resultType`, `_meta`,
    /// and the cache hints when `ttl` is given.
    fn decorate(&self, mut m: Map<String, Value>, ttl: Option<u64>) -> Value {
        m.insert("resultType".into(), json!("complete"));
        m.insert("_meta".into(), self.meta());
        if let Some(ttl) = ttl {
            m.insert("ttlMs".into(), json!(ttl));
            m.insert("cacheScope".into(), json!(CACHE_SCOPE));
        }
        Value::Object(m)
    }

    /// A list result: decorated for 2026-07-28 only.
    fn list(&self, v: ProtocolVersion, body: Value) -> Value {
        if v.is_modern() {
            self.decorate(object(body), Some(LIST_TTL_MS))
        } else {
            body
        }
    }

    /// A `resources/read` result as 2026-07-28 sees it.
    pub(crate) fn decorate_read(&self, m: Map<String, Value>) -> Value {
        self.decorate(m, Some(READ_TTL_MS))
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Serializes a result into a shared reply suffix. The tree is freed
/// before the bytes move into their lasting allocation, which can then
/// reuse the tree's space low in the heap instead of pinning the top
/// (the allocator returns a free top to the system; a pinned one stays
/// resident for the life of the process).
fn suffix(result: Value) -> Arc<[u8]> {
    let bytes = result_suffix(&result);
    drop(result);
    bytes.into()
}

/// One pre-serialized suffix, built on first use.
pub(crate) struct Once {
    slot: OnceLock<Arc<[u8]>>,
    build: fn(&Source) -> Value,
    src: Arc<Source>,
}

impl Once {
    fn new(src: &Arc<Source>, build: fn(&Source) -> Value) -> Once {
        Once {
            slot: OnceLock::new(),
            build,
            src: Arc::clone(src),
        }
    }
}

impl std::ops::Deref for Once {
    type Target = Arc<[u8]>;

    fn deref(&self) -> &Arc<[u8]> {
        self.slot.get_or_init(|| suffix((self.build)(&self.src)))
    }
}

/// One pre-serialized suffix per revision, indexed by
/// `ProtocolVersion::index`, each built on first use.
pub(crate) struct PerVersion {
    slots: [OnceLock<Arc<[u8]>>; ProtocolVersion::DATE_ORDER.len()],
    build: fn(&Source, ProtocolVersion) -> Value,
    src: Arc<Source>,
}

impl PerVersion {
    fn new(src: &Arc<Source>, build: fn(&Source, ProtocolVersion) -> Value) -> PerVersion {
        PerVersion {
            slots: Default::default(),
            build,
            src: Arc::clone(src),
        }
    }

    pub(crate) fn get(&self, v: ProtocolVersion) -> &Arc<[u8]> {
        self.slots[v.index()].get_or_init(|| suffix((self.build)(&self.src, v)))
    }
}

/// Every static reply suffix, plus the pieces tool results reuse.
pub(crate) struct Statics {
    src: Arc<Source>,
    /// `server/discover` (2026-07-28 only).
    pub(crate) discover: Once,
    /// `initialize` per legacy revision (the modern slot is unused).
    pub(crate) initialize: PerVersion,
    /// `ping` and `logging/setLevel` (legacy only): `{}`.
    pub(crate) ping: Arc<[u8]>,
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
    pub(crate) modern_tail: Arc<[u8]>,
}

fn discover(src: &Source) -> Value {
    let supported: Vec<&str> = ProtocolVersion::SUPPORTED
        .iter()
        .map(|v| v.as_str())
        .collect();
    src.decorate(
        object(json!({
            "supportedVersions": supported,
            "capabilities": capabilities(ProtocolVersion::MODERN),
            "instructions": INSTRUCTIONS,
        })),
        Some(LIST_TTL_MS),
    )
}

fn initialize(src: &Source, v: ProtocolVersion) -> Value {
    let mut server_info = json!({"name": src.name, "version": src.version});
    if v >= ProtocolVersion::V2025_06_18 {
        server_info["title"] = json!(SERVER_TITLE);
    }
    json!({
        "protocolVersion": v.as_str(),
        "capabilities": capabilities(v),
        "serverInfo": server_info,
        "instructions": INSTRUCTIONS,
    })
}

fn tools_list(src: &Source, v: ProtocolVersion) -> Value {
    let mut tools = tool_definitions(v);
    // Claude Code keeps a result inline up to this many characters (and
    // exempts it from its token ceiling); other clients ignore the key.
    // 2025-03-26 has no `_meta` on a tool.
    if tool_keys(v).is_none_or(|k| k.contains(&"_meta")) {
        for t in tools.as_array_mut().into_iter().flatten() {
            if let Value::Object(t) = t {
                let meta = t.entry("_meta").or_insert_with(|| json!({}));
                if let Value::Object(meta) = meta {
                    meta.insert(
                        crate::x::budget::MAX_RESULT_SIZE_META.into(),
                        json!(src.max_result_chars),
                    );
                }
            }
        }
    }
    let mut m = Map::new();
    m.insert("tools".into(), tools);
    src.list(v, Value::Object(m))
}

fn resources_list(src: &Source, v: ProtocolVersion) -> Value {
    let entries: Vec<Value> = src.resources().iter().map(|r| list_entry(r, v)).collect();
    src.list(v, json!({ "resources": entries }))
}

fn templates_list(src: &Source, v: ProtocolVersion) -> Value {
    src.list(v, json!({"resourceTemplates": []}))
}

fn prompts_list(src: &Source, v: ProtocolVersion) -> Value {
    src.list(v, json!({"prompts": []}))
}

impl Statics {
    /// Prepares the results; nothing is serialized (and `resources` is not
    /// called) until a request needs it.
    pub(crate) fn new(
        info: &ServerInfo,
        resources: ResourceSource,
        max_result_chars: usize,
    ) -> Statics {
        let src = Arc::new(Source {
            name: info.name.clone(),
            version: info.version.clone(),
            resources: LazyLock::new(resources),
            max_result_chars,
        });
        let mut modern_tail = br#","resultType":"complete","_meta":"#.to_vec();
        crate::json::write(&mut modern_tail, &src.meta());
        Statics {
            discover: Once::new(&src, discover),
            initialize: PerVersion::new(&src, initialize),
            ping: suffix(json!({})),
            tools_list: PerVersion::new(&src, tools_list),
            resources_list: PerVersion::new(&src, resources_list),
            templates_list: PerVersion::new(&src, templates_list),
            prompts_list: PerVersion::new(&src, prompts_list),
            reads: ReadTable::new(&src),
            modern_tail: modern_tail.into(),
            src,
        }
    }

    /// The resources, in `resources/list` order (built now if not yet).
    pub(crate) fn resources(&self) -> &[Resource] {
        self.src.resources()
    }
}

/// One resource's reply suffixes, `[legacy, modern]`, each built on first use.
type ReadSlots = [OnceLock<Arc<[u8]>>; 2];

/// Pre-serialized `resources/read` replies, looked up by exact URI and
/// serialized on first read of each resource in each era.
pub(crate) struct ReadTable {
    src: Arc<Source>,
    /// Per resource (in list order): the legacy and the modern suffix.
    entries: OnceLock<Vec<ReadSlots>>,
}

impl ReadTable {
    /// An empty table over `src`'s resources.
    pub(crate) fn new(src: &Arc<Source>) -> ReadTable {
        ReadTable {
            src: Arc::clone(src),
            entries: OnceLock::new(),
        }
    }

    /// The per-resource slots, once the first read made them.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> Option<&Vec<ReadSlots>> {
        self.entries.get()
    }

    /// The reply suffix for `uri` in the given era, if such a resource exists.
    pub(crate) fn find(&self, uri: &str, modern: bool) -> Option<&Arc<[u8]>> {
        let resources = self.src.resources();
        let index = resources.iter().position(|r| r.uri == uri)?;
        let entries = self
            .entries
            .get_or_init(|| resources.iter().map(|_| Default::default()).collect());
        let slot = &entries.get(index)?[usize::from(modern)];
        Some(slot.get_or_init(|| {
            let result = read_result(&resources[index]);
            let value = if modern {
                self.src.decorate_read(result)
            } else {
                Value::Object(result)
            };
            super::jsonrpc::result_suffix(&value).into()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const URI: &str = "http://h/doc.md";

    fn statics(calls: &Arc<AtomicUsize>) -> Statics {
        let info = ServerInfo {
            name: "xmd".into(),
            version: "9.9.9".into(),
            public_url: "http://h".into(),
        };
        let calls = Arc::clone(calls);
        Statics::new(
            &info,
            Box::new(move || {
                calls.fetch_add(1, Ordering::SeqCst);
                vec![Resource {
                    uri: URI.into(),
                    name: "doc.md".into(),
                    title: "Doc".into(),
                    description: "A doc.".into(),
                    mime_type: "text/markdown".into(),
                    text: "# hi\n".into(),
                }]
            }),
            crate::config::DEFAULT_MAX_RESULT_CHARS,
        )
    }

    fn built(p: &PerVersion) -> usize {
        p.slots.iter().filter(|s| s.get().is_some()).count()
    }

    #[test]
    fn nothing_is_serialized_until_a_request_needs_it() {
        let calls = Arc::new(AtomicUsize::new(0));
        let st = statics(&calls);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "resources not built");
        for p in [
            &st.initialize,
            &st.tools_list,
            &st.resources_list,
            &st.prompts_list,
            &st.templates_list,
        ] {
            assert_eq!(built(p), 0);
        }
        assert!(st.discover.slot.get().is_none());
        assert!(st.reads.entries().is_none());
        // The small always-used pieces are there from the start.
        assert_eq!(&st.ping[..], br#","result":{}}"#);
        assert_eq!(
            &st.modern_tail[..],
            br#","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"xmd","version":"9.9.9"}}"#
        );
    }

    #[test]
    fn each_suffix_is_built_once_for_its_revision_and_shared() {
        let calls = Arc::new(AtomicUsize::new(0));
        let st = statics(&calls);
        let v = ProtocolVersion::V2025_03_26;
        let first = Arc::clone(st.prompts_list.get(v));
        assert_eq!(&first[..], br#","result":{"prompts":[]}}"#);
        assert!(Arc::ptr_eq(&first, st.prompts_list.get(v)));
        assert_eq!(built(&st.prompts_list), 1, "only the asked revision");
        let tools = Arc::clone(st.tools_list.get(v));
        assert!(tools.starts_with(br#","result":{"tools":[{"#));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "tools/list needs no resources"
        );
        let discover = Arc::clone(&st.discover);
        assert!(Arc::ptr_eq(&discover, &st.discover));
        assert!(discover.starts_with(br#","result":{"#));
    }

    #[test]
    fn resources_are_built_on_the_first_list_or_read_and_only_once() {
        let calls = Arc::new(AtomicUsize::new(0));
        let st = statics(&calls);
        assert!(st.reads.find("http://h/other", false).is_none());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let legacy = Arc::clone(st.reads.find(URI, false).unwrap());
        assert_eq!(
            &legacy[..],
            br##","result":{"contents":[{"mimeType":"text/markdown","text":"# hi\n","uri":"http://h/doc.md"}]}}"##
        );
        assert!(Arc::ptr_eq(&legacy, st.reads.find(URI, false).unwrap()));
        let modern = st.reads.find(URI, true).unwrap();
        assert!(modern.ends_with(br#""ttlMs":300000}}"#), "{modern:?}");
        let list = st.resources_list.get(ProtocolVersion::V2025_03_26);
        assert_eq!(
            &list[..],
            br#","result":{"resources":[{"description":"A doc.","mimeType":"text/markdown","name":"doc.md","uri":"http://h/doc.md"}]}}"#
        );
        assert_eq!(st.resources().len(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
