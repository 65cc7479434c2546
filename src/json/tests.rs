//! Unit tests and proptests of the JSON writer against serde_json.

use super::escape::any_care;
use super::*;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn a_value_that_fails_to_serialize_is_null_not_cut_json() {
    let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
    let mut out = b"[".to_vec();
    write(&mut out, &bad);
    assert_eq!(out, b"[null");
    assert_eq!(to_vec(&vec![json!("a")]), br#"["a"]"#);
}

#[test]
fn a_raw_value_is_written_as_any_value() {
    let raw = serde_json::value::RawValue::from_string(
        "{ \"t\" :\n [ 64,\r\n\t87 ], \"u\": \"a\u{2028}b \u{85}\" }".into(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(to_vec(&raw)).unwrap(),
        r#"{"t":[64,87],"u":"a\u2028b \u0085"}"#
    );
    let plain = serde_json::value::RawValue::from_string("[64,87]".into()).unwrap();
    assert_eq!(to_vec(&plain), b"[64,87]");
    // What no `Value` holds is written too, as sent: nothing is re-read.
    let huge = serde_json::value::RawValue::from_string("[1e400, 2]".into()).unwrap();
    assert_eq!(to_vec(&huge), b"[1e400,2]");
    let deep = format!("{} 1 {}", "[ ".repeat(100), " ]".repeat(100));
    let deep = serde_json::value::RawValue::from_string(deep).unwrap();
    assert_eq!(
        String::from_utf8(to_vec(&deep)).unwrap(),
        format!("{}1{}", "[".repeat(100), "]".repeat(100))
    );
}

#[test]
fn escapes_what_serde_json_leaves_raw() {
    let v = json!({"t": "a\u{2028}b\u{2029}c\u{85}d\re\n\u{1c}"});
    let out = String::from_utf8(to_vec(&v)).unwrap();
    assert_eq!(out, r#"{"t":"a\u2028b\u2029c\u0085d\re\n\u001c"}"#);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    let pretty = to_string_pretty(&json!({"k": ["\u{2028}"]}));
    assert_eq!(pretty, "{\n  \"k\": [\n    \"\\u2028\"\n  ]\n}");
}

fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "\u{85}", "\u{2028}", "\u{2029}", "\r", "\n", "\r\n", "\u{b}", "\u{c}", "\u{1c}", "\u{1d}",
        "\u{1e}", "\"", "\\", "\u{0}", "é", "🦀", "a", " ", "\u{feff}",
        // Neighbours of the line breaks in UTF-8 (C2 A0, C2 84, E2 80
        // A6/A7/AA, E2 82 AC).
        "\u{a0}", "\u{84}", "…", "\u{2027}", "\u{202a}", "€",
    ]);
    prop::collection::vec(pieces, 0..64).prop_map(|v| v.concat())
}

proptest! {
    /// The oracle: Python's `str.splitlines` line-break set. Compact
    /// output holds none of its characters, and reads back equal.
    #[test]
    fn compact_output_has_no_line_break_of_any_splitter(
        key in hostile(), text in hostile(), n in 0u32..3
    ) {
        let mut obj = serde_json::Map::new();
        obj.insert(key, json!([text.clone(), {"n": n, "s": text}]));
        let v = Value::Object(obj);
        let out = String::from_utf8(to_vec(&v)).unwrap();
        prop_assert!(!out.chars().any(is_python_line_break), "{:?}", out);
        prop_assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    }

    /// The word test says what a byte-by-byte test says, for any bytes
    /// and any length (short, whole words, a partial last word).
    #[test]
    fn any_care_is_the_byte_by_byte_test(
        b in prop::collection::vec(prop_oneof![
            0x20u8..0x7f, Just(b'"'), Just(b'\\'), 0u8..0x20, 0x7fu8..=0xff
        ], 0..40),
        plain in 0usize..30,
    ) {
        let mut b = b;
        b.splice(0..0, std::iter::repeat_n(b'a', plain));
        let bytewise = b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\' || c >= 0x80);
        prop_assert_eq!(any_care(&b), bytewise);
    }

    /// The byte search finds what a search by characters finds.
    #[test]
    fn raw_breaks_are_found_by_bytes_as_by_chars(s in hostile()) {
        prop_assert_eq!(find_raw_line_break(s.as_bytes()), s.find(RAW_LINE_BREAKS));
    }

    /// The oracle is serde_json's own serializer: `write_str` appends
    /// the bytes it appends for the same string, for hostile strings with
    /// long plain runs (the word-at-a-time path) and any string.
    #[test]
    fn write_str_writes_what_serde_json_writes(
        pieces in prop::collection::vec(
            prop_oneof![hostile(), "[ -~]{0,40}", "[\\x00-\\x1f\\x7f]{1,3}", any::<String>()],
            0..8,
        ),
        before in "[ -~]{0,3}",
    ) {
        let s = pieces.concat();
        let mut out = before.clone().into_bytes();
        write_str(&mut out, &s);
        let mut expected = before.into_bytes();
        write_by_serde_json(&mut expected, s.as_str());
        prop_assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(expected).unwrap());
    }

    /// The oracle is serde_json's own serializer: any value, and any
    /// value as a `RawValue` (compact or pretty), is written byte for
    /// byte as serde_json writes it with the same escapes.
    #[test]
    fn write_writes_what_serde_json_writes(v in any_value(), pretty in any::<bool>()) {
        let by_serde = |x: &dyn erased::Ser| x.by_serde();
        prop_assert_eq!(to_vec(&v), by_serde(&v));
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        let raw = serde_json::value::RawValue::from_string(text).unwrap();
        prop_assert_eq!(to_vec(&raw), by_serde(&raw));
        let nested = (vec![Some(&raw)], None::<u8>, [&v]);
        prop_assert_eq!(to_vec(&nested), by_serde(&nested));
    }

    /// Keys of every kind serde_json takes (or refuses), enums of every
    /// shape, and numbers of every width.
    #[test]
    fn keys_enums_and_numbers_as_serde_json_writes_them(
        ints in prop::collection::btree_map(any::<i64>(), any::<u8>(), 0..3),
        wide in prop::collection::btree_map(any::<u128>(), any::<i128>(), 0..3),
        bools in prop::collection::btree_map(any::<bool>(), any::<f32>(), 0..3),
        chars in prop::collection::btree_map(any::<char>(), any::<char>(), 0..3),
        floats in prop::collection::vec(any::<f64>(), 0..3),
        bytes in prop::collection::vec(any::<u8>(), 0..3),
        small in (any::<i8>(), any::<i16>(), any::<i32>(), any::<u16>(), any::<u32>()),
    ) {
        use serde::Serialize as S;
        #[derive(S)]
        enum E { Unit, New(u8), Tuple(u8, String), Struct { a: Option<bool>, #[serde(skip_serializing_if = "Option::is_none")] b: Option<u8> } }
        #[derive(S)]
        struct Unit;
        #[derive(S)]
        struct New(Vec<u8>);
        #[derive(S)]
        struct Tuple(u8, ());
        #[derive(S, PartialEq, Eq, PartialOrd, Ord)]
        enum K { A }
        let unit_keys: std::collections::BTreeMap<K, u8> = [(K::A, 1)].into();
        let seq_keys: std::collections::BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        let cases: Vec<Box<dyn erased::Ser>> = vec![
            Box::new(ints), Box::new(wide), Box::new(bools), Box::new(chars),
            Box::new(floats), Box::new(serde_bytes_like(bytes)), Box::new(small),
            Box::new(vec![E::Unit, E::New(1), E::Tuple(2, "t".into()), E::Struct { a: None, b: None }, E::Struct { a: Some(true), b: Some(3) }]),
            Box::new((Unit, New(vec![]), Tuple(1, ()), ())),
            Box::new(unit_keys), Box::new(seq_keys),
        ];
        for c in &cases {
            prop_assert_eq!(c.by_xmd(), c.by_serde());
        }
    }

    /// The oracle is the writer itself: `len` is the length of what
    /// `write` appends, and `max_len` is never below it.
    #[test]
    fn len_counts_what_write_writes_and_max_len_bounds_it(v in any_value()) {
        let written = to_vec(&v).len();
        prop_assert_eq!(len(&v), written);
        prop_assert!(max_len(&v) >= written, "{} < {}", max_len(&v), written);
    }

    /// Any value as an upstream may format it (pretty, any line
    /// breaks in its strings), carried as a `RawValue`, is written as
    /// the value itself is.
    #[test]
    fn a_raw_value_writes_as_its_value(v in any_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            serde_json::to_string(&v).unwrap()
        };
        let raw = serde_json::value::RawValue::from_string(text).unwrap();
        prop_assert_eq!(to_vec(&raw), to_vec(&v));
        prop_assert_eq!(len(&raw), to_vec(&v).len());
    }
}

/// `Serialize` behind a pointer, written both ways.
mod erased {
    pub trait Ser {
        fn by_xmd(&self) -> Vec<u8>;
        fn by_serde(&self) -> Vec<u8>;
    }
    impl<T: serde::Serialize> Ser for T {
        fn by_xmd(&self) -> Vec<u8> {
            super::to_vec(self)
        }
        fn by_serde(&self) -> Vec<u8> {
            let mut out = Vec::new();
            super::write_by_serde_json(&mut out, self);
            out
        }
    }
}

/// Bytes serialized as bytes (`serialize_bytes`), not as a sequence.
fn serde_bytes_like(b: Vec<u8>) -> impl Serialize {
    struct B(Vec<u8>);
    impl Serialize for B {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }
    B(b)
}

/// Any JSON value: hostile strings and keys, every kind of number
/// (the extremes of `i64`, `u64` and `f64` included), nested.
fn any_value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec![
            i64::MIN as f64,
            f64::MIN,
            f64::MAX,
            -f64::MIN_POSITIVE,
            -1e-300
        ])
        .prop_map(Value::from),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        hostile().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((hostile(), inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
