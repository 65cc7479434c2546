//! Typed MCP results where the schema is fixed. Every struct keeps the
//! fields it does not name in `extra` (and `_meta` in `meta`), so a result
//! serializes back to the JSON the server sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `Implementation`: who a server (or client) is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Other fields (`description`, `icons`, `websiteUrl`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `server/discover` result (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Revisions the server speaks.
    pub supported_versions: Vec<String>,
    /// `ServerCapabilities` (open object).
    #[serde(default)]
    pub capabilities: Value,
    /// Usage hints for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result `_meta`; the server identity lives in
    /// `io.modelcontextprotocol/serverInfo` (see [`DiscoverResult::server_info`]).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Other fields (`resultType`, `ttlMs`, `cacheScope`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `_meta` key carrying a 2026-07-28 server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

impl DiscoverResult {
    /// The server identity from `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub fn server_info(&self) -> Option<Implementation> {
        let v = self.meta.as_ref()?.get(META_SERVER_INFO)?;
        serde_json::from_value(v.clone()).ok()
    }
}

/// The legacy `initialize` result (2025-03-26 … 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// `ServerCapabilities` (open object).
    #[serde(default)]
    pub capabilities: Value,
    /// Who the server is.
    pub server_info: Implementation,
    /// Usage hints for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which protocol era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// Probe `server/discover`, fall back to the `initialize` handshake.
    Auto,
    /// Stateless 2026-07-28: per-request `_meta` and mirrored headers.
    Modern,
    /// The `initialize` handshake (2025-11-25 / 2025-06-18 / 2025-03-26).
    Legacy,
}

impl Era {
    /// Parses `auto`, `modern` or `legacy`.
    pub fn parse(s: &str) -> Option<Era> {
        match s {
            "auto" => Some(Era::Auto),
            "modern" => Some(Era::Modern),
            "legacy" => Some(Era::Legacy),
            _ => None,
        }
    }
}

/// What a connection settled on: [`Client::initialize`](super::Client::initialize)'s result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// `modern` or `legacy` (never `auto`).
    pub era: Era,
    /// The revision every request now carries.
    pub protocol_version: String,
    /// Who the server is, if it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// `ServerCapabilities` (open object).
    pub capabilities: Value,
    /// Usage hints for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The legacy `Mcp-Session-Id`, if the server issued one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// One `tools/list` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name (what `tools/call` takes).
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    #[serde(default)]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// `ToolAnnotations` hints (open object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Other fields (`icons`, `_meta`, `execution`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One `resources/list` entry (also the body of a `resource_link` content block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource URI (what `resources/read` takes).
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Other fields (`annotations`, `icons`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One `resources/templates/list` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Media type of the resources it makes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One item of `resources/read` `contents` (or an embedded resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The URI of this item.
    pub uri: String,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text content (text resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 content (binary resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Other fields (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `resources/read` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The items read (one or more).
    pub contents: Vec<ResourceContents>,
    /// Other fields (`resultType`, `ttlMs`, `cacheScope`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `text` content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text (xmd tools: the Markdown).
    pub text: String,
    /// Other fields (`annotations`, `_meta`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An `image` or `audio` content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// Base64 bytes.
    pub data: String,
    /// Media type.
    pub mime_type: String,
    /// Other fields (`annotations`, `_meta`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `resource` content block (an embedded resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The embedded item.
    pub resource: ResourceContents,
    /// Other fields (`annotations`, `_meta`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One `ContentBlock` of a tool result, by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(MediaContent),
    /// `type: "audio"`.
    Audio(MediaContent),
    /// `type: "resource_link"`.
    ResourceLink(Resource),
    /// `type: "resource"`.
    Resource(EmbeddedResource),
    /// A block of a type this client does not know, or one whose known type
    /// lacks a required field, kept as sent.
    Other(Value),
}

impl Content {
    /// The text of a `text` block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

fn typed<T: serde::de::DeserializeOwned>(v: &Value, wrap: fn(T) -> Content) -> Content {
    match serde_json::from_value::<T>(v.clone()) {
        Ok(t) => wrap(t),
        Err(_) => Content::Other(v.clone()),
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut v = Value::deserialize(d)?;
        let kind = v.get("type").and_then(Value::as_str).map(str::to_owned);
        let Some(kind) = kind else {
            return Ok(Content::Other(v));
        };
        let original = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("type");
        }
        let c = match kind.as_str() {
            "text" => typed(&v, Content::Text),
            "image" => typed(&v, Content::Image),
            "audio" => typed(&v, Content::Audio),
            "resource_link" => typed(&v, Content::ResourceLink),
            "resource" => typed(&v, Content::Resource),
            _ => Content::Other(original.clone()),
        };
        Ok(match c {
            Content::Other(_) => Content::Other(original),
            c => c,
        })
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let (kind, body) = match self {
            Content::Text(t) => ("text", serde_json::to_value(t)),
            Content::Image(m) => ("image", serde_json::to_value(m)),
            Content::Audio(m) => ("audio", serde_json::to_value(m)),
            Content::ResourceLink(r) => ("resource_link", serde_json::to_value(r)),
            Content::Resource(r) => ("resource", serde_json::to_value(r)),
            Content::Other(v) => return v.serialize(s),
        };
        let mut m = Map::new();
        m.insert("type".into(), Value::String(kind.into()));
        match body.map_err(S::Error::custom)? {
            Value::Object(o) => m.extend(o),
            _ => return Err(S::Error::custom("content block is not an object")),
        }
        Value::Object(m).serialize(s)
    }
}

/// The `tools/call` result. `is_error: true` is a tool failure the model
/// should see, not a protocol error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks (xmd tools: one text block with the Markdown).
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output matching the tool's `outputSchema`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool itself failed.
    #[serde(default)]
    pub is_error: bool,
    /// Other fields (`resultType`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// Every `text` block, joined by a blank line.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(Content::as_text)
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_result_round_trips_every_block_type() {
        let wire = json!({
            "resultType": "complete",
            "content": [
                {"type": "text", "text": "# Hi", "annotations": {"audience": ["user"]}},
                {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}},
                {"type": "hologram", "depth": 3},
                {"type": "text"}
            ],
            "structuredContent": {"n": 1},
            "isError": false
        });
        let r: CallToolResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.content.len(), 7);
        assert_eq!(r.content[0].as_text(), Some("# Hi"));
        assert!(matches!(&r.content[1], Content::Image(m) if m.mime_type == "image/png"));
        assert!(matches!(&r.content[2], Content::Audio(m) if m.data == "UklG"));
        assert!(matches!(&r.content[3], Content::ResourceLink(l) if l.uri == "file:///a"));
        assert!(
            matches!(&r.content[4], Content::Resource(e) if e.resource.text.as_deref() == Some("b"))
        );
        assert_eq!(
            r.content[5],
            Content::Other(json!({"type": "hologram", "depth": 3}))
        );
        assert_eq!(r.content[6], Content::Other(json!({"type": "text"})));
        assert_eq!(r.text(), "# Hi");
        assert_eq!(r.extra.get("resultType"), Some(&json!("complete")));
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    }

    #[test]
    fn is_error_defaults_to_false_and_text_joins_blocks() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
        }))
        .unwrap();
        assert!(!r.is_error);
        assert_eq!(r.text(), "a\n\nb");
    }

    #[test]
    fn discover_server_info_comes_from_meta() {
        let d: DiscoverResult = serde_json::from_value(json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 5, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        let info = d.server_info().unwrap();
        assert_eq!((info.name.as_str(), info.version.as_str()), ("s", "1"));
        assert_eq!(d.extra.get("ttlMs"), Some(&json!(5)));
    }
}
