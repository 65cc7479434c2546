//! The JSON-RPC 2.0 envelope: classifying one parsed body, request ids, and
//! writing replies by splicing the id between pre-serialized bytes.

use std::io::Write as _;

use serde_json::{Map, Value};

use super::error::RpcError;

/// A request id: a string or an integer, never `null` (MCP narrows
/// JSON-RPC's id). Integers cover the whole `i64` and `u64` range; `0` is a
/// valid id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// A string id, e.g. `"server-discover-probe-1"`.
    Str(String),
    /// An integer id.
    Int(i128),
}

impl Id {
    /// Reads an id value; `None` for null, booleans, floats, arrays, objects.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .map(Id::Int),
            _ => None,
        }
    }

    /// Appends the id as JSON.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Id::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Id::Str(s) => {
                // Writing a &str into a Vec cannot fail.
                crate::json::write(out, s);
            }
        }
    }

    /// Bytes the JSON form needs, exact unless a string needs escapes.
    pub fn json_len_hint(&self) -> usize {
        match self {
            Id::Int(_) => 40,
            Id::Str(s) => s.len() + 2,
        }
    }
}

/// What one JSON-RPC object is.
#[derive(Debug, PartialEq)]
pub enum Message<'a> {
    /// A request: it has an id and gets a response.
    Request {
        /// The request id.
        id: Id,
        /// The method name.
        method: &'a str,
        /// `params`, when present (always an object).
        params: Option<&'a Map<String, Value>>,
    },
    /// A notification: no id, no response.
    Notification {
        /// The method name.
        method: &'a str,
        /// `params`, when present (always an object).
        params: Option<&'a Map<String, Value>>,
    },
    /// A JSON-RPC response (`result` or `error`) sent by the client.
    Response,
}

impl<'a> Message<'a> {
    /// `params`, if any.
    pub fn params(&self) -> Option<&'a Map<String, Value>> {
        match self {
            Message::Request { params, .. } | Message::Notification { params, .. } => *params,
            Message::Response => None,
        }
    }
}

/// Why a body is not a single JSON-RPC 2.0 message; becomes `-32600`.
#[derive(Debug, PartialEq)]
pub struct Invalid {
    /// The request id, when it could be read.
    pub id: Option<Id>,
    /// What is wrong, for the error message.
    pub why: &'static str,
}

/// Classifies one parsed body.
///
/// # Errors
///
/// [`Invalid`] when the value is an array (batch: removed in 2025-06-18 and
/// refused in every era, nothing executed), not an object, has `jsonrpc` other
/// than `"2.0"`, an id that is null/bool/float/array/object or a string
/// longer than [`MAX_ID_BYTES`], a non-string
/// `method`, non-object `params`, or neither `method` nor `result`/`error`.
pub fn classify(v: &Value) -> Result<Message<'_>, Invalid> {
    let obj = match v {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(Invalid {
                id: None,
                why: "JSON-RPC batch arrays are not supported (removed in MCP 2025-06-18); send one message per POST",
            })
        }
        _ => {
            return Err(Invalid {
                id: None,
                why: "the body must be a JSON-RPC 2.0 request object",
            })
        }
    };
    let raw_id = obj.get("id");
    let id = raw_id.and_then(Id::from_value);
    if matches!(&id, Some(Id::Str(s)) if s.len() > MAX_ID_BYTES) {
        return Err(Invalid {
            id: None,
            why: "\"id\" is longer than 1024 bytes",
        });
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Invalid {
            id,
            why: "\"jsonrpc\" must be \"2.0\"",
        });
    }
    if !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error")) {
        // A response to a server request; its id may be null (JSON-RPC
        // error responses to unreadable requests).
        return Ok(Message::Response);
    }
    if raw_id.is_some() && id.is_none() {
        return Err(Invalid {
            id: None,
            why: "\"id\" must be a string or an integer",
        });
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.as_str(),
        Some(_) => {
            return Err(Invalid {
                id,
                why: "\"method\" must be a string",
            })
        }
        None => {
            return Err(Invalid {
                id,
                why: "\"method\" is missing",
            })
        }
    };
    let params = match obj.get("params") {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => {
            return Err(Invalid {
                id,
                why: "\"params\" must be an object",
            })
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// `{"jsonrpc":"2.0","id":` — every reply starts with these bytes.
pub const REPLY_PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// Serializes `result` into the bytes that follow the id:
/// `,"result":<result>}`.
pub fn result_suffix(result: &Value) -> Vec<u8> {
    let mut out = br#","result":"#.to_vec();
    // Serializing a Value into a Vec cannot fail.
    crate::json::write(&mut out, result);
    out.push(b'}');
    out
}

/// `REPLY_PREFIX + id + suffix`, in one allocation for common ids.
pub fn splice(id: &Id, suffix: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(REPLY_PREFIX.len() + id.json_len_hint() + suffix.len());
    out.extend_from_slice(REPLY_PREFIX);
    id.write_json(&mut out);
    out.extend_from_slice(suffix);
    out
}

/// Most JSON values (objects, arrays, their members and elements, and
/// scalars, each counted once) one request body may hold.
///
/// Default is 10,000 (an MCP request holds a few dozen; a tool's
/// `arguments` take at most [`crate::x::registry::MOST_ARGUMENTS`]). A larger
/// body is refused as `-32600 Invalid Request` with `id: null` the moment
/// the parser reaches the 10,001st value: the rest is never parsed and no
/// map or array of it is built, so what the event loop spends on a body is
/// bounded whatever its size (100,000 keys in 930 KB took 40-50 ms to parse
/// into a map; refused at the cap they take about what 10,000 take).
pub const MAX_BODY_VALUES: usize = 10_000;

/// Why a body could not be read as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Not JSON: `-32700`.
    NotJson,
    /// More than [`MAX_BODY_VALUES`] values: `-32600`.
    TooManyValues,
    /// Well-formed so far but nested deeper than [`MAX_BODY_DEPTH`]
    /// (the parser's recursion limit): `-32600`.
    TooDeep,
}

/// Deepest nesting of arrays and objects a request body may have: 127
/// (`serde_json`'s recursion limit of 128 counts the value past the last
/// level). A deeper body is refused with `-32600` naming the limit (it may
/// be valid JSON, so not `-32700`).
pub const MAX_BODY_DEPTH: usize = 127;

/// Parses a request body into a [`Value`], refusing it the moment the
/// parser meets its [`MAX_BODY_VALUES`]+1st value.
///
/// # Errors
/// [`BodyError`].
pub fn parse_body(body: &[u8]) -> Result<Value, BodyError> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_slice(body);
    let count = std::cell::Cell::new(0);
    let value = Bounded(&count).deserialize(&mut de).map_err(|e| {
        // The only data error a `Value` parse can raise is ours.
        if e.is_data() {
            BodyError::TooManyValues
        } else if e.to_string().starts_with("recursion limit exceeded") {
            BodyError::TooDeep
        } else {
            BodyError::NotJson
        }
    })?;
    de.end().map_err(|_| BodyError::NotJson)?;
    Ok(value)
}

/// A [`Value`] deserializer that counts the values of the whole body.
#[derive(Clone, Copy)]
struct Bounded<'c>(&'c std::cell::Cell<usize>);

impl<'de> serde::de::DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let n = self.0.get() + 1;
        if n > MAX_BODY_VALUES {
            return Err(serde::de::Error::custom("too many values"));
        }
        self.0.set(n);
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// Largest error reply body, in bytes.
///
/// Default is 64 KiB. Every error this server builds is far smaller (client
/// input is echoed clipped to [`super::error::MAX_ECHO_CHARS`] characters,
/// and a `-32602` names at most [`crate::x::args::MAX_NAMED_UNKNOWN_KEYS`]
/// keys); should one still pass the cap, it is sent without `data` and with
/// its message clipped, so no request can make the server build or send a
/// large error.
pub const MAX_ERROR_REPLY_BYTES: usize = 64 * 1024;

/// Longest string request id, in bytes.
///
/// Default is 1024 (a UUID is 36). A longer id is refused as `-32600
/// Invalid Request` with `id: null`: echoing it would let a request make
/// any reply as large as itself.
pub const MAX_ID_BYTES: usize = 1024;

// Every reply echoes the id: escaped as JSON (at most 6 bytes a byte), the
// longest accepted id fits the reserve a tool reply keeps for it.
const _: () = assert!(MAX_ID_BYTES * 6 <= crate::x::budget::MAX_ECHOED_ID_BYTES);

/// A full error message; `id: null` when the id is unknown. At most
/// [`MAX_ERROR_REPLY_BYTES`].
pub fn error_message(id: Option<&Id>, err: &RpcError) -> Vec<u8> {
    let out = write_error(id, err);
    if out.len() <= MAX_ERROR_REPLY_BYTES {
        return out;
    }
    let bare = RpcError::new(err.code, super::error::clip(&err.message));
    write_error(id, &bare)
}

fn write_error(id: Option<&Id>, err: &RpcError) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + err.message.len());
    out.extend_from_slice(REPLY_PREFIX);
    match id {
        Some(id) => id.write_json(&mut out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","error":"#);
    crate::json::write(&mut out, &err.to_value());
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(b: &[u8]) -> Value {
        serde_json::from_slice(b).unwrap()
    }

    #[test]
    fn ids() {
        assert_eq!(Id::from_value(&json!(0)), Some(Id::Int(0)));
        assert_eq!(Id::from_value(&json!(-7)), Some(Id::Int(-7)));
        assert_eq!(
            Id::from_value(&json!(u64::MAX)),
            Some(Id::Int(u64::MAX as i128))
        );
        assert_eq!(Id::from_value(&json!("a")), Some(Id::Str("a".into())));
        for bad in [
            json!(null),
            json!(true),
            json!(1.5),
            json!([1]),
            json!({"a": 1}),
        ] {
            assert_eq!(Id::from_value(&bad), None, "{bad}");
        }
        let mut out = Vec::new();
        Id::Int(u64::MAX as i128).write_json(&mut out);
        assert_eq!(out, b"18446744073709551615");
        out.clear();
        Id::Str("q\"\\\n".into()).write_json(&mut out);
        assert_eq!(parse(&out), json!("q\"\\\n"));
    }

    #[test]
    fn classify_messages() {
        let v = json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
        assert_eq!(
            classify(&v),
            Ok(Message::Request {
                id: Id::Int(0),
                method: "ping",
                params: None
            })
        );
        let v = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            classify(&v),
            Ok(Message::Notification {
                method: "notifications/initialized",
                params: None
            })
        );
        let v = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
        assert_eq!(classify(&v), Ok(Message::Response));
        let v = json!({"jsonrpc": "2.0", "id": "e", "error": {"code": 1, "message": "x"}});
        assert_eq!(classify(&v), Ok(Message::Response));
        let v = json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}});
        assert_eq!(classify(&v), Ok(Message::Response));
    }

    #[test]
    fn classify_invalid() {
        let cases: [(Value, Option<Id>); 10] = [
            (json!([]), None),
            (json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), None),
            (json!("x"), None),
            (
                json!({"jsonrpc": "1.0", "id": 3, "method": "ping"}),
                Some(Id::Int(3)),
            ),
            (json!({"id": 3, "method": "ping"}), Some(Id::Int(3))),
            (
                json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
                None,
            ),
            (json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}), None),
            (
                json!({"jsonrpc": "2.0", "id": "a", "method": 7}),
                Some(Id::Str("a".into())),
            ),
            (
                json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}),
                Some(Id::Int(4)),
            ),
            (json!({"jsonrpc": "2.0", "id": 4}), Some(Id::Int(4))),
        ];
        for (v, id) in cases {
            let err = classify(&v).expect_err(&v.to_string());
            assert_eq!(err.id, id, "{v}");
        }
    }

    #[test]
    fn splice_and_error_bytes() {
        let suffix = result_suffix(&json!({}));
        assert_eq!(
            splice(&Id::Int(0), &suffix),
            br#"{"jsonrpc":"2.0","id":0,"result":{}}"#
        );
        assert_eq!(
            splice(&Id::Str("x".into()), &suffix),
            br#"{"jsonrpc":"2.0","id":"x","result":{}}"#
        );
        let e = error_message(None, &RpcError::parse_error());
        assert_eq!(
            parse(&e),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the body is not valid JSON"}})
        );
    }

    #[test]
    fn long_ids_are_refused_and_error_replies_are_capped() {
        let ok = "i".repeat(MAX_ID_BYTES);
        let v = json!({"jsonrpc": "2.0", "id": ok, "method": "ping"});
        assert!(matches!(classify(&v), Ok(Message::Request { .. })));
        let v = json!({"jsonrpc": "1.0", "id": "i".repeat(MAX_ID_BYTES + 1), "method": "ping"});
        assert_eq!(
            classify(&v),
            Err(Invalid {
                id: None,
                why: "\"id\" is longer than 1024 bytes"
            })
        );
        let huge = RpcError::new(-32602, "m".repeat(200_000)).with_data(json!("d".repeat(200_000)));
        let out = error_message(Some(&Id::Str(ok)), &huge);
        assert!(out.len() <= MAX_ERROR_REPLY_BYTES, "{}", out.len());
        let v = parse(&out);
        assert_eq!(v["error"]["message"].as_str().unwrap().chars().count(), 201);
        assert!(v["error"].get("data").is_none());
    }

    proptest::proptest! {
        /// The bounded parser agrees with serde_json's own `Value` parser
        /// (the oracle) on every document within the value cap, and
        /// refuses exactly the documents past it.
        #[test]
        fn bounded_parse_agrees_with_serde_json(
            doc in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            members in 0usize..2600,
            nested in proptest::prelude::any::<bool>(),
        ) {
            use proptest::prop_assert_eq;
            // Arbitrary bytes: both accept or both refuse, with equal values.
            prop_assert_eq!(parse_body(&doc).ok(), serde_json::from_slice::<Value>(&doc).ok());
            let obj: Map<String, Value> = (0..members).map(|i| (format!("k{i}"), json!([i, 1.5, null, "s"]))).collect();
            let v = if nested { json!({"params": {"arguments": obj}}) } else { Value::Object(obj) };
            let bytes = serde_json::to_vec(&v).unwrap();
            // Each member holds an array of 4: 5 values, plus the object
            // (and its 2 parents when nested).
            let values = 1 + 5 * members + if nested { 2 } else { 0 };
            if values > MAX_BODY_VALUES {
                prop_assert_eq!(parse_body(&bytes), Err(BodyError::TooManyValues));
            } else {
                prop_assert_eq!(parse_body(&bytes), Ok(v));
            }
        }
    }

    #[test]
    fn bounded_parse_keeps_json_semantics() {
        for doc in [
            &b"{\"a\":1,\"a\":2}"[..],
            b" [1, -2, 3.25e3, 18446744073709551615, -9223372036854775808, true, null, \"\\u00e9\"] ",
            b"{\"x\":{\"y\":[{}]}}",
        ] {
            assert_eq!(parse_body(doc).ok(), serde_json::from_slice::<Value>(doc).ok());
        }
        assert_eq!(parse_body(b"{} x"), Err(BodyError::NotJson));
        assert_eq!(parse_body(b""), Err(BodyError::NotJson));
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_named() {
        let nest = |depth: usize, open: &str, close: &str| {
            format!("{}{}", open.repeat(depth), close.repeat(depth)).into_bytes()
        };
        // Arrays, objects and a mix at the limit parse; one more level is
        // refused as too deep (well-formed or not past that point).
        assert!(parse_body(&nest(MAX_BODY_DEPTH, "[", "]")).is_ok());
        assert_eq!(
            serde_json::from_slice::<Value>(&nest(MAX_BODY_DEPTH + 1, "[", "]")).ok(),
            None
        );
        assert_eq!(
            parse_body(&nest(MAX_BODY_DEPTH + 1, "[", "]")),
            Err(BodyError::TooDeep)
        );
        assert_eq!(
            parse_body(&nest(MAX_BODY_DEPTH + 1, "[{\"a\":", "}]")),
            Err(BodyError::TooDeep)
        );
        assert_eq!(parse_body(&nest(100_000, "[", "")), Err(BodyError::TooDeep));
    }
}
