//! `key=value` arguments of `xmd client call`, typed by the tool's
//! `inputSchema` (as the MCP Inspector CLI types `--tool-arg`): the value is
//! read as the JSON type the schema gives the property.
//!
//! | schema `type` of the property | `key=value` becomes |
//! | --- | --- |
//! | `string`, absent, or a list holding `string` | the text as is |
//! | `integer` | a JSON integer (`limit=3`; `3.0` and `1e1` too, as 3 and 10) |
//! | `number` | a JSON number (`ratio=0.5`) |
//! | `boolean` | `true` or `false` (only those words) |
//! | `null` | `null` (only that word) |
//! | `array`, `object` | the value parsed as JSON (`ids=[1,2]`) |
//!
//! A property typed by `anyOf`/`oneOf`/`allOf` takes the types of its
//! branches, and a local `$ref` (`#/$defs/Model`, as pydantic and zod
//! write nested models) is followed. A list of types is tried in order
//! (string first wins: the text as is). A property the schema does not
//! name, or with a branch that does not constrain the type, stays a string. `key:=JSON` is never
//! typed: it is sent as written.

use serde_json::Value;

/// Most `$ref` hops and nested `anyOf`/`oneOf`/`allOf` levels followed
/// when typing one property (a cyclic or absurd schema stops there and the
/// property counts as untyped).
const MAX_SCHEMA_DEPTH: usize = 16;

/// The JSON types a property schema allows, in the order given
/// (`type` as a string or a list, else the branches of `anyOf`/`oneOf`/
/// `allOf`, a local `$ref` (`#/$defs/…`, `#/definitions/…`) followed into
/// `root`). `None` when some branch does not constrain the type (no `type`
/// anywhere in it, or a `$ref` that cannot be followed): such a branch
/// accepts the text as is.
fn types<'a>(schema: &'a Value, root: &'a Value, depth: usize) -> Option<Vec<&'a str>> {
    if depth > MAX_SCHEMA_DEPTH {
        return None;
    }
    match schema.get("type") {
        Some(Value::String(t)) => return Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => return Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => {}
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let resolved = target.strip_prefix('#').and_then(|ptr| root.pointer(ptr))?;
        return types(resolved, root, depth + 1);
    }
    let mut out = Vec::new();
    let mut any_branch = false;
    for k in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            any_branch = true;
            out.extend(types(branch, root, depth + 1)?);
        }
    }
    any_branch.then_some(out)
}

/// `text` read as JSON type `ty`, if it is one.
fn as_type(ty: &str, text: &str) -> Option<Value> {
    match ty {
        "string" => Some(Value::String(text.to_string())),
        "integer" => {
            let v: Value = serde_json::from_str(text.trim()).ok()?;
            if v.is_i64() || v.is_u64() {
                return Some(v);
            }
            // JSON Schema's integer is any number with a zero fraction
            // (`3.0`, `1e1`); sent as the integer itself, exactly
            // representable below 2^53.
            let f = v.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
        }
        "number" => {
            let v: Value = serde_json::from_str(text.trim()).ok()?;
            v.is_number().then_some(v)
        }
        "boolean" => match text.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => (text.trim() == "null").then_some(Value::Null),
        "array" => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_array),
        "object" => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// The value of `key=text` for a tool whose `inputSchema` is `input_schema`.
///
/// # Errors
/// A message naming the key, the text and the type(s) it does not fit.
pub fn typed_value(input_schema: &Value, key: &str, text: &str) -> Result<Value, String> {
    let Some(property) = input_schema.get("properties").and_then(|p| p.get(key)) else {
        return Ok(Value::String(text.to_string()));
    };
    let allowed = match types(property, input_schema, 0) {
        Some(allowed) if !allowed.is_empty() => allowed,
        _ => return Ok(Value::String(text.to_string())),
    };
    if let Some(v) = allowed.iter().find_map(|t| as_type(t, text)) {
        return Ok(v);
    }
    let what = allowed.join(" or ");
    Err(format!(
        "argument '{key}={text}': the tool's inputSchema wants {what} (write {key}:=JSON to send a value as written)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_from_the_schema() {
        let s = json!({"type": "object", "properties": {
            "handle": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "ratio": {"type": "number"},
            "full": {"type": "boolean"},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object"},
            "maybe": {"type": ["integer", "null"]},
            "either": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
            "free": {}
        }});
        let t = |k: &str, v: &str| typed_value(&s, k, v);
        assert_eq!(t("handle", "007"), Ok(json!("007")));
        assert_eq!(t("limit", "3"), Ok(json!(3)));
        assert_eq!(t("limit", "3.0"), Ok(json!(3)));
        assert_eq!(t("limit", "1e1"), Ok(json!(10)));
        assert_eq!(t("limit", "-0.0"), Ok(json!(0)));
        assert!(t("limit", "1e300").is_err());
        assert_eq!(t("ratio", "0.5"), Ok(json!(0.5)));
        assert_eq!(t("ratio", "2"), Ok(json!(2)));
        assert_eq!(t("full", "true"), Ok(json!(true)));
        assert_eq!(t("ids", "[1,2]"), Ok(json!([1, 2])));
        assert_eq!(t("opts", "{\"a\":1}"), Ok(json!({"a": 1})));
        assert_eq!(t("maybe", "null"), Ok(json!(null)));
        assert_eq!(t("maybe", "4"), Ok(json!(4)));
        assert_eq!(t("either", "false"), Ok(json!(false)));
        assert_eq!(t("either", "no"), Ok(json!("no")));
        assert_eq!(t("free", "1"), Ok(json!("1")));
        assert_eq!(t("unknown", "1"), Ok(json!("1")));
        assert_eq!(
            t("limit", "3.5"),
            Err("argument 'limit=3.5': the tool's inputSchema wants integer (write limit:=JSON to send a value as written)".into())
        );
        assert!(t("full", "yes").is_err());
        assert!(t("ids", "1,2").is_err());
        assert!(t("opts", "[]").is_err());
        // pydantic's Optional[Model] and Literal enums: `$ref` into `$defs`.
        let p = json!({"type": "object", "$defs": {
            "Opts": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "Mode": {"enum": ["fast", "slow"], "type": "string"},
            "Loop": {"$ref": "#/$defs/Loop"}
        }, "properties": {
            "opts": {"anyOf": [{"$ref": "#/$defs/Opts"}, {"type": "null"}], "default": null},
            "mode": {"$ref": "#/$defs/Mode"},
            "n": {"allOf": [{"type": "integer"}]},
            "loop": {"$ref": "#/$defs/Loop"},
            "remote": {"anyOf": [{"$ref": "https://example.com/s.json"}, {"type": "null"}]}
        }});
        let tp = |k: &str, v: &str| typed_value(&p, k, v);
        assert_eq!(tp("opts", "{\"a\":1}"), Ok(json!({"a": 1})));
        assert_eq!(tp("opts", "null"), Ok(json!(null)));
        assert!(tp("opts", "[1]").is_err());
        assert_eq!(tp("mode", "fast"), Ok(json!("fast")));
        assert_eq!(tp("n", "7"), Ok(json!(7)));
        assert_eq!(tp("loop", "7"), Ok(json!("7")));
        assert_eq!(tp("remote", "x"), Ok(json!("x")));
    }

    proptest::proptest! {
        /// The class: `key=<a value written as JSON>` arrives as exactly that
        /// value for a property of its type, and a string property gets the
        /// text unchanged, whatever it is (the oracle is serde_json's own
        /// serialization of the generated value).
        #[test]
        fn typed_values_round_trip(
            i in proptest::num::i64::ANY,
            f in -1e300f64..1e300,
            b in proptest::bool::ANY,
            text in ".*",
            items in proptest::collection::vec(proptest::num::i32::ANY, 0..5),
        ) {
            let s = json!({"properties": {
                "i": {"type": "integer"}, "f": {"type": "number"}, "b": {"type": "boolean"},
                "s": {"type": "string"}, "a": {"type": "array"}
            }});
            proptest::prop_assert_eq!(typed_value(&s, "i", &json!(i).to_string()), Ok(json!(i)));
            proptest::prop_assert_eq!(typed_value(&s, "f", &json!(f).to_string()), Ok(json!(f)));
            proptest::prop_assert_eq!(typed_value(&s, "b", &json!(b).to_string()), Ok(json!(b)));
            proptest::prop_assert_eq!(typed_value(&s, "s", &text), Ok(json!(text)));
            proptest::prop_assert_eq!(typed_value(&s, "a", &json!(items).to_string()), Ok(json!(items)));
        }
    }
}
