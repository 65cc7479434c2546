//! `resources/list` entries and `resources/read` results for the static
//! agent documents, shaped per revision.

use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::version::ProtocolVersion;
use super::Resource;

/// One `resources/list` entry. `title` exists from 2025-06-18 on
/// (`BaseMetadata`), so 2025-03-26 clients do not get it.
pub(crate) fn list_entry(r: &Resource, version: ProtocolVersion) -> Value {
    let mut e = Map::new();
    e.insert("uri".into(), json!(r.uri));
    e.insert("name".into(), json!(r.name));
    if version >= ProtocolVersion::V2025_06_18 {
        e.insert("title".into(), json!(r.title));
    }
    e.insert("description".into(), json!(r.description));
    e.insert("mimeType".into(), json!(r.mime_type));
    Value::Object(e)
}

/// The `resources/read` result body (before era decoration): one text item.
pub(crate) fn read_result(r: &Resource) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        "contents".into(),
        json!([{"uri": r.uri, "mimeType": r.mime_type, "text": r.text}]),
    );
    m
}

/// Pre-serialized `resources/read` replies, looked up by exact URI.
/// One resource: its URI and the legacy and modern reply suffixes.
type ReadEntry = (String, Arc<[u8]>, Arc<[u8]>);

pub(crate) struct ReadTable {
    /// `(uri, legacy suffix, modern suffix)`.
    entries: Vec<ReadEntry>,
}

impl ReadTable {
    /// Builds the table; `decorate_modern` adds the 2026-07-28 fields.
    pub(crate) fn new(
        resources: &[Resource],
        decorate_modern: impl Fn(Map<String, Value>) -> Value,
    ) -> ReadTable {
        let entries = resources
            .iter()
            .map(|r| {
                let legacy = super::jsonrpc::result_suffix(&Value::Object(read_result(r)));
                let modern = super::jsonrpc::result_suffix(&decorate_modern(read_result(r)));
                (r.uri.clone(), legacy.into(), modern.into())
            })
            .collect();
        ReadTable { entries }
    }

    /// The reply suffix for `uri` in the given era, if such a resource exists.
    pub(crate) fn find(&self, uri: &str, modern: bool) -> Option<&Arc<[u8]>> {
        self.entries.iter().find(|(u, _, _)| u == uri).map(
            |(_, legacy, m)| {
                if modern {
                    m
                } else {
                    legacy
                }
            },
        )
    }
}
