//! `tools/call`: validating `params` before any upstream work, and shaping
//! a tool's output into a `CallToolResult` for the request's revision.

use serde_json::{json, Map, Value};

use super::error::{clip, RpcError};
use super::jsonrpc::{Id, REPLY_PREFIX};
use super::version::ProtocolVersion;
use crate::x::cache::CacheStatus;
use crate::x::tools::{
    write_structured, PrepareError, Served, ToolCall, ToolOutput, Tools, CACHE_MEMBER, TOOL_NAMES,
};

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
    if crate::x::registry::Tool::from_name(name).is_none() {
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
    /// The cache status written into `structuredContent` (a served
    /// result's; `None` for an output that carries its own).
    cache: Option<CacheStatus>,
    /// `isError`.
    pub(crate) is_error: bool,
}

impl SerializedOutput {
    /// Serializes `out` as it is.
    pub(crate) fn new(out: &ToolOutput) -> SerializedOutput {
        // Writing strings and Values into a Vec cannot fail.
        let mut text = Vec::with_capacity(out.text.len() + 2);
        crate::json::write_str(&mut text, &out.text);
        let structured = out.structured.as_ref().map(|sc| {
            let bytes = crate::json::to_vec(sc);
            (bytes.into_boxed_slice(), sc.is_object())
        });
        SerializedOutput {
            text: text.into_boxed_slice(),
            structured,
            cache: None,
            is_error: out.is_error,
        }
    }

    /// A served result, from the bytes it was serialized to
    /// ([`Served::wire`]); its cache status is written into
    /// `structuredContent` when a reply is assembled.
    pub(crate) fn served(served: &Served) -> SerializedOutput {
        SerializedOutput {
            text: served.wire.text.as_slice().into(),
            // A tool's `structuredContent` is always an object.
            structured: Some((served.wire.structured.as_slice().into(), true)),
            cache: Some(served.cache),
            is_error: false,
        }
    }

    /// Bytes held (with the cache member a reply adds).
    pub(crate) fn len(&self) -> usize {
        self.text.len()
            + self.structured.as_ref().map_or(0, |(b, _)| b.len())
            + self
                .cache
                .map_or(0, |c| CACHE_MEMBER.len() + c.as_str().len() + 6)
    }

    /// The same output as a replay from the result cache reports it:
    /// cache status `hit`.
    pub(crate) fn replayed(&self) -> SerializedOutput {
        SerializedOutput {
            cache: self.cache.map(|_| CacheStatus::Hit),
            ..self.clone()
        }
    }

    /// Writes `structuredContent`.
    fn write_structured(&self, buf: &mut Vec<u8>, sc: &[u8]) {
        match self.cache {
            Some(c) => write_structured(buf, sc, c),
            None => buf.extend_from_slice(sc),
        }
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
                out.write_structured(&mut buf, sc);
            } else {
                buf.extend_from_slice(br#"{"result":"#);
                out.write_structured(&mut buf, sc);
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
    use crate::x::structured::Structured;

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
    fn the_cache_status_is_written_when_serializing_and_a_replay_says_hit() {
        let served = Served::new(
            "t".into(),
            Structured::new(
                json!({"posts": [{"cache": "x"}], "z": 1})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            CacheStatus::Miss,
            std::time::Duration::from_secs(1),
        );
        let ser = SerializedOutput::served(&served);
        let sc = |o: &SerializedOutput| -> Value {
            let v: Value = serde_json::from_slice(&reply_from(
                &Id::Int(9),
                ProtocolVersion::V2025_11_25,
                o,
                TAIL,
            ))
            .unwrap();
            v["result"]["structuredContent"].clone()
        };
        assert_eq!(
            sc(&ser),
            json!({"cache": "miss", "posts": [{"cache": "x"}], "z": 1})
        );
        assert_eq!(
            sc(&ser.replayed()),
            json!({"cache": "hit", "posts": [{"cache": "x"}], "z": 1})
        );
        // Byte for byte what serializing the whole object gives (`cache`
        // sorts first among these members).
        let mut whole = served.clone().into_output();
        assert_eq!(
            reply_from(&Id::Int(9), ProtocolVersion::V2026_07_28, &ser, TAIL),
            reply_from(
                &Id::Int(9),
                ProtocolVersion::V2026_07_28,
                &SerializedOutput::new(&whole),
                TAIL
            )
        );
        whole.structured = Some(json!({"cache": "hit", "posts": [{"cache": "x"}], "z": 1}));
        assert_eq!(
            reply_from(
                &Id::Int(9),
                ProtocolVersion::V2025_06_18,
                &ser.replayed(),
                TAIL
            ),
            reply_from(
                &Id::Int(9),
                ProtocolVersion::V2025_06_18,
                &SerializedOutput::new(&whole),
                TAIL
            )
        );
        // An empty object gets the member alone; an output without a
        // cache status is written as it is.
        let empty = Served::new(
            "t".into(),
            Structured::default(),
            served.cache,
            served.fresh_for,
        );
        assert_eq!(
            sc(&SerializedOutput::served(&empty)),
            json!({"cache": "miss"})
        );
        assert_eq!(
            SerializedOutput::new(&output(None, true)).replayed().cache,
            None
        );
    }

    /// The error reply a `tools/call` of `name` with `arguments` gets, as
    /// (bytes, parsed JSON).
    fn refusal(name: &str, arguments: Value) -> (Vec<u8>, Value) {
        let params = json!({"name": name, "arguments": arguments});
        let err = prepare(params.as_object()).expect_err("refused");
        let bytes = super::super::jsonrpc::error_message(Some(&Id::Int(1)), &err);
        let v = serde_json::from_slice(&bytes).unwrap();
        (bytes, v)
    }

    #[test]
    fn a_hundred_thousand_unknown_keys_get_one_short_refusal() {
        let args: Map<String, Value> = (0..100_000)
            .map(|i| (format!("k{i:06}"), Value::Bool(true)))
            .collect();
        let params = json!({"name": "x_md_get_profile", "arguments": args});
        let started = std::time::Instant::now();
        let err = prepare(params.as_object()).expect_err("refused");
        let bytes = super::super::jsonrpc::error_message(Some(&Id::Int(1)), &err);
        let took = started.elapsed();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v["error"]["message"],
            "Invalid arguments for tool x_md_get_profile: `arguments` has 100000 properties; \
             this tool takes at most 9: handle, feed, with_replies, since, page, limit, cursor, full, max_chars"
        );
        assert_eq!(
            v["error"]["data"],
            json!({"inputSchema": Tools::input_schema("x_md_get_profile")})
        );
        assert!(bytes.len() < 4096, "{}", bytes.len());
        // Refused before any key is looked at (debug build: well under 1 ms;
        // 95-147 ms in a release build before the key count was checked).
        assert!(took < std::time::Duration::from_millis(20), "{took:?}");
    }

    #[test]
    fn unknown_keys_are_named_up_to_ten_then_counted() {
        let args: Map<String, Value> = ["a", "b", "query", "d"]
            .iter()
            .map(|k| (k.to_string(), json!(1)))
            .chain([("q".to_string(), json!("rust"))])
            .collect();
        let (_, v) = refusal("x_md_search_posts", Value::Object(args));
        assert_eq!(
            v["error"]["message"],
            "Invalid arguments for tool x_md_search_posts: unknown properties `a`, `b`, `d`, \
             `query` (did you mean `q`?); allowed: q, feed, page, limit, cursor, full, max_chars"
        );
        // x_md_get_post takes 10; 10 keys, 8 of them unknown (`url` and
        // `id` are known), with one bad value.
        let mut args: Map<String, Value> = (0..8).map(|i| (format!("u{i}"), json!(1))).collect();
        args.insert("url".into(), json!("https://x.com/a/status/1"));
        args.insert("max_posts".into(), json!(1));
        let (_, v) = refusal("x_md_get_post", Value::Object(args));
        let m = v["error"]["message"].as_str().unwrap();
        assert!(
            m.starts_with("Invalid arguments for tool x_md_get_post: unknown properties `u0`, `u1`, `u2`, `u3`, `u4`, `u5`, `u6`, `u7`; allowed: url, "),
            "{m}"
        );
        assert!(
            m.ends_with("; `max_posts` must be an integer from 2 to 100"),
            "{m}"
        );
        assert_eq!(m.matches("allowed:").count(), 1);
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any `arguments` object (keys of any length and number, values
        /// of any shape) to any tool: a refusal is one JSON-RPC error of at
        /// most 64 KiB, carrying the tool's `inputSchema` once and naming
        /// at most ten keys.
        #[test]
        fn any_arguments_get_a_bounded_refusal(
            tool in proptest::sample::select(crate::x::tools::TOOL_NAMES.to_vec()),
            keys in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z_]{1,12}",
                    "\\PC{0,3000}",
                    proptest::sample::select(vec!["handle", "q", "url", "id", "limit", "query", "page"])
                        .prop_map(str::to_string),
                ],
                0..40,
            ),
            value in proptest::prop_oneof![
                proptest::strategy::Just(json!(1)),
                proptest::strategy::Just(json!("x".repeat(70_000))),
                proptest::strategy::Just(json!({"a": [1, 2, 3]})),
                proptest::strategy::Just(json!(null)),
            ],
        ) {
            use proptest::{prop_assert, prop_assert_eq};
            let args: Map<String, Value> = keys.iter().map(|k| (k.clone(), value.clone())).collect();
            let params = json!({"name": tool, "arguments": args});
            let Err(err) = prepare(params.as_object()) else { return Ok(()) };
            let bytes = super::super::jsonrpc::error_message(Some(&Id::Int(1)), &err);
            prop_assert!(bytes.len() <= super::super::jsonrpc::MAX_ERROR_REPLY_BYTES, "{}", bytes.len());
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            prop_assert_eq!(v["error"]["code"].as_i64(), Some(-32602));
            prop_assert_eq!(&v["error"]["data"], &json!({"inputSchema": Tools::input_schema(tool)}));
            let m = v["error"]["message"].as_str().unwrap();
            prop_assert!(m.matches("allowed:").count() <= 1, "{}", m);
            prop_assert!(m.matches('`').count() <= 2 * (10 + 10 + 12), "{}", m);
        }
    }
}
