//! `tools/call`: validating `params` before any upstream work, and shaping
//! a tool's output into a `CallToolResult` for the request's revision.

use serde_json::{json, Map, Value};

use super::error::{clip, RpcError};
use super::jsonrpc::{Id, REPLY_PREFIX};
use super::version::ProtocolVersion;
use crate::x::tools::{PrepareError, ToolCall, ToolOutput, Tools, TOOL_NAMES};

/// Checks `params.name` and `params.arguments` and asks the tool to
/// validate its arguments.
///
/// # Errors
///
/// `-32602` for a missing or non-string `name`; `Unknown tool: <name>` with
/// `data.availableTools`; or invalid arguments (including non-object
/// `arguments`) with `data.inputSchema`, the tool's input schema.
pub(crate) fn prepare(params: Option<&Map<String, Value>>) -> Result<ToolCall, RpcError> {
    let name = match params.and_then(|p| p.get("name")) {
        Some(Value::String(n)) => n.as_str(),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: params.name must be a string naming a tool",
            ))
        }
        None => {
            return Err(RpcError::invalid_params(
                "Invalid params: params.name is missing",
            ))
        }
    };
    let unknown = || {
        RpcError::invalid_params(format!("Unknown tool: {}", clip(name)))
            .with_data(json!({"availableTools": TOOL_NAMES}))
    };
    if crate::x::schema::spec(name).is_none() {
        return Err(unknown());
    }
    // The schema is built only for an error reply: a valid call skips it.
    let invalid = |why: &str| {
        RpcError::invalid_params(format!("Invalid arguments for tool {name}: {why}"))
            .with_data(json!({"inputSchema": Tools::input_schema(name)}))
    };
    let arguments = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => None,
        Some(a @ Value::Object(_)) => Some(a),
        Some(_) => {
            return Err(invalid(
                "params.arguments must be an object of named arguments",
            ))
        }
    };
    match Tools::prepare(name, arguments) {
        Ok(call) => Ok(call),
        Err(PrepareError::UnknownTool) => Err(unknown()),
        Err(PrepareError::InvalidArguments(why)) => Err(invalid(&why)),
    }
}

/// A finished tool output serialized once: the pieces every revision's
/// reply is assembled from. The result cache keeps these bytes rather than
/// the `Value` tree, which costs several times its serialized size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SerializedOutput {
    /// `text` as a JSON string.
    text: Box<[u8]>,
    /// `structuredContent` as JSON, and whether it is an object.
    structured: Option<(Box<[u8]>, bool)>,
    /// `isError`.
    pub(crate) is_error: bool,
}

impl SerializedOutput {
    /// Serializes `out`.
    pub(crate) fn new(out: &ToolOutput) -> SerializedOutput {
        // Writing strings and Values into a Vec cannot fail.
        let text = crate::json::to_vec(&out.text);
        let structured = out.structured.as_ref().map(|sc| {
            let bytes = crate::json::to_vec(sc);
            (bytes.into_boxed_slice(), sc.is_object())
        });
        SerializedOutput {
            text: text.into_boxed_slice(),
            structured,
            is_error: out.is_error,
        }
    }

    /// Bytes held.
    pub(crate) fn len(&self) -> usize {
        self.text.len() + self.structured.as_ref().map_or(0, |(b, _)| b.len())
    }

    /// The same output with `structuredContent.cache` saying `hit`, as a
    /// replay from the result cache reports it, when the object opens with
    /// its `cache` member (object keys serialize sorted, and every tool's
    /// `cache` sorts first); `None` otherwise.
    pub(crate) fn replayed(&self) -> Option<SerializedOutput> {
        const OPEN: &[u8] = br#"{"cache":""#;
        let (bytes, is_object) = self.structured.as_ref()?;
        let rest = bytes.strip_prefix(OPEN)?;
        let word = rest.iter().position(|b| *b == b'"')?;
        if !rest[..word].iter().all(u8::is_ascii_lowercase) {
            return None;
        }
        let mut patched = Vec::with_capacity(bytes.len() + 3);
        patched.extend_from_slice(OPEN);
        patched.extend_from_slice(b"hit");
        patched.extend_from_slice(&rest[word..]);
        Some(SerializedOutput {
            text: self.text.clone(),
            structured: Some((patched.into_boxed_slice(), *is_object)),
            is_error: self.is_error,
        })
    }
}

/// The whole reply for a finished call: `{content:[text], structuredContent?,
/// isError}`, plus `resultType` and `_meta` (`modern_tail`) in 2026-07-28.
///
/// `structuredContent` is left out for 2025-03-26 (that revision has none)
/// and wrapped as `{"result": …}` when a legacy revision would receive a
/// non-object (2025 schemas require an object).
pub(crate) fn reply_from(
    id: &Id,
    version: ProtocolVersion,
    out: &SerializedOutput,
    modern_tail: &[u8],
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(REPLY_PREFIX.len() + 112 + out.len() + modern_tail.len());
    buf.extend_from_slice(REPLY_PREFIX);
    id.write_json(&mut buf);
    buf.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    buf.extend_from_slice(&out.text);
    buf.extend_from_slice(b"}]");
    if let Some((sc, is_object)) = &out.structured {
        if version >= ProtocolVersion::V2025_06_18 {
            buf.extend_from_slice(br#","structuredContent":"#);
            if version.is_modern() || *is_object {
                buf.extend_from_slice(sc);
            } else {
                buf.extend_from_slice(br#"{"result":"#);
                buf.extend_from_slice(sc);
                buf.push(b'}');
            }
        }
    }
    buf.extend_from_slice(if out.is_error {
        br#","isError":true"#
    } else {
        br#","isError":false"#
    });
    if version.is_modern() {
        buf.extend_from_slice(modern_tail);
    }
    buf.extend_from_slice(b"}}");
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAIL: &[u8] = br#","resultType":"complete","_meta":{"k":1}"#;

    fn body(version: ProtocolVersion, out: &ToolOutput) -> Value {
        let out = SerializedOutput::new(out);
        serde_json::from_slice(&reply_from(&Id::Int(9), version, &out, TAIL)).unwrap()
    }

    fn output(structured: Option<Value>, is_error: bool) -> ToolOutput {
        ToolOutput {
            text: "# Post\n\"quoted\" é".into(),
            structured,
            is_error,
        }
    }

    #[test]
    fn modern_result_carries_result_type_and_meta() {
        let out = output(Some(json!({"post": {"id": "1"}})), false);
        assert_eq!(
            body(ProtocolVersion::V2026_07_28, &out),
            json!({"jsonrpc": "2.0", "id": 9, "result": {
                "content": [{"type": "text", "text": "# Post\n\"quoted\" é"}],
                "structuredContent": {"post": {"id": "1"}},
                "isError": false, "resultType": "complete", "_meta": {"k": 1}}})
        );
        let arr = output(Some(json!([1, 2])), false);
        assert_eq!(
            body(ProtocolVersion::V2026_07_28, &arr)["result"]["structuredContent"],
            json!([1, 2])
        );
    }

    #[test]
    fn legacy_results_have_no_modern_fields() {
        let out = output(Some(json!({"a": 1})), false);
        for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18] {
            assert_eq!(
                body(v, &out),
                json!({"jsonrpc": "2.0", "id": 9, "result": {
                    "content": [{"type": "text", "text": "# Post\n\"quoted\" é"}],
                    "structuredContent": {"a": 1}, "isError": false}})
            );
        }
        assert_eq!(
            body(ProtocolVersion::V2025_03_26, &out),
            json!({"jsonrpc": "2.0", "id": 9, "result": {
                "content": [{"type": "text", "text": "# Post\n\"quoted\" é"}], "isError": false}})
        );
        let arr = output(Some(json!([1])), false);
        assert_eq!(
            body(ProtocolVersion::V2025_11_25, &arr)["result"]["structuredContent"],
            json!({"result": [1]})
        );
    }

    #[test]
    fn error_output_is_is_error_true_without_structured_content() {
        let out = output(None, true);
        assert_eq!(
            body(ProtocolVersion::V2025_11_25, &out),
            json!({"jsonrpc": "2.0", "id": 9, "result": {
                "content": [{"type": "text", "text": "# Post\n\"quoted\" é"}], "isError": true}})
        );
    }

    #[test]
    fn a_replay_says_hit_and_keeps_every_other_byte() {
        let out = output(
            Some(json!({"cache": "miss", "posts": [{"cache": "x"}], "z": 1})),
            false,
        );
        let ser = SerializedOutput::new(&out);
        let hit = ser.replayed().unwrap();
        let mut expected = out.clone();
        expected.structured = Some(json!({"cache": "hit", "posts": [{"cache": "x"}], "z": 1}));
        assert_eq!(hit, SerializedOutput::new(&expected));
        let bypass = output(Some(json!({"cache": "bypass", "n": 2})), false);
        assert_eq!(
            SerializedOutput::new(&bypass)
                .replayed()
                .unwrap()
                .structured
                .unwrap()
                .0
                .as_ref(),
            br#"{"cache":"hit","n":2}"#
        );
        // No leading `cache` member (or none at all): the caller re-serializes.
        for sc in [
            json!({"a": 1, "cache": "miss"}),
            json!({"n": 1}),
            json!([1]),
        ] {
            assert_eq!(
                SerializedOutput::new(&output(Some(sc), false)).replayed(),
                None
            );
        }
        assert_eq!(SerializedOutput::new(&output(None, true)).replayed(), None);
    }
}
