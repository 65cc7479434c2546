//! `resources/list` entries and `resources/read` results for the static
//! agent documents, shaped per revision (their pre-serialized replies are
//! `statics::ReadTable`).

use serde_json::{json, Map, Value};

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
