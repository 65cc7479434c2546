//! `resources/list` entries and `resources/read` results for the static
//! agent documents, shaped per revision.

use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};

use super::statics::Source;

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
