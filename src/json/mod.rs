//! The one JSON writer for everything xmd sends: serde_json's output with
//! the line terminators it leaves raw escaped as well.
//!
//! serde_json escapes `"`, `\` and the C0 controls (so CR and LF never
//! appear raw), but writes U+0085 (NEL), U+2028 (LINE SEPARATOR) and
//! U+2029 (PARAGRAPH SEPARATOR) as they are. Unicode-aware line splitters
//! (Python's `str.splitlines`, older httpx-sse) break an SSE `data:` line
//! at them and the client sees a torn event. Here they become `\u0085`,
//! `\u2028` and `\u2029`: the same JSON value, and no character any line
//! splitter breaks at. Compact output holds no line break at all, so one
//! message is always one `data:` line.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::Value;

/// Characters serde_json leaves raw that some line splitters break at.
pub const RAW_LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// Where the first of [`RAW_LINE_BREAKS`] starts in `s`. Found by bytes:
/// an ASCII string has none (checked a word at a time), and in UTF-8 they
/// are `C2 85`, `E2 80 A8` and `E2 80 A9`.
fn find_raw_line_break(s: &str) -> Option<usize> {
    if s.is_ascii() {
        return None;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            0xC2 if b.get(i + 1) == Some(&0x85) => return Some(i),
            0xE2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) => {
                return Some(i)
            }
            _ => i += 1,
        }
    }
    None
}

/// A serde_json formatter that also escapes [`RAW_LINE_BREAKS`].
struct SafeFormatter<F>(F);

impl<F: Formatter> Formatter for SafeFormatter<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = find_raw_line_break(rest) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or('\u{2028}');
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    /// A `RawValue` holds an upstream's bytes as they came: any
    /// whitespace (line breaks of a pretty-printed body) and raw
    /// [`RAW_LINE_BREAKS`] inside its strings. It is written as this writer
    /// writes any value: the whitespace between tokens dropped, those
    /// characters escaped (by [`Formatter::write_string_fragment`]: valid
    /// JSON holds them only inside strings), every other byte as sent
    /// (numbers keep their spelling, whatever their range or nesting:
    /// nothing is re-read, so nothing can fail).
    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let as_written = fragment
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_whitespace());
        if as_written {
            return writer.write_all(fragment.as_bytes());
        }
        let compact: Vec<u8> = bytes_in_strings(fragment)
            .filter(|&(b, inside)| inside || !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .map(|(b, _)| b)
            .collect();
        // Only ASCII bytes were dropped: still UTF-8.
        let compact = String::from_utf8(compact).map_err(io::Error::other)?;
        self.write_string_fragment(writer, &compact)
    }

    // Everything else as the wrapped formatter writes it.
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// The bytes of the JSON text `t`, each with whether it lies inside a
/// string (its quotes included): the one walk over JSON text kept as sent.
pub fn bytes_in_strings(t: &str) -> impl Iterator<Item = (u8, bool)> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    t.bytes().map(move |b| {
        if !in_string {
            in_string = b == b'"';
            return (b, in_string);
        }
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => in_string = false,
            _ => {}
        }
        (b, true)
    })
}

/// Appends `value` as compact JSON to `out`. A value whose `Serialize`
/// fails part way (serde_json refuses a map with non-string keys; xmd
/// builds none) is written as `null`, never as the cut JSON written so far.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut *out, SafeFormatter(CompactFormatter));
    if value.serialize(&mut ser).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// `value` as compact JSON.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write(&mut out, value);
    out
}

/// An `io::Write` that keeps only the count of bytes written to it.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The number of bytes [`write`] appends for `value`, counted as they are
/// written, with nothing stored.
pub fn len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut count = Counter(0);
    let mut ser =
        serde_json::Serializer::with_formatter(&mut count, SafeFormatter(CompactFormatter));
    match value.serialize(&mut ser) {
        Ok(()) => count.0,
        // [`write`] writes `null` then.
        Err(_) => 4,
    }
}

/// Most bytes one JSON number takes as [`write`] writes it: 24 (an `f64`
/// such as `-1.7976931348623157e308` takes 23, an `i64` or `u64` at most
/// 20).
pub const MAX_NUMBER_BYTES: usize = 24;

/// Most bytes one byte of a string takes as [`write`] writes it: 6 (a
/// one-byte control character becomes `\u00XX`; a character of more
/// bytes is written raw or as one six-byte escape).
pub const MAX_ESCAPED_BYTES_PER_BYTE: usize = 6;

/// An upper bound of [`len`]`(value)`, found from the tree's shape and its
/// strings' lengths without writing anything: a string counts
/// [`MAX_ESCAPED_BYTES_PER_BYTE`] per byte plus its quotes, a number
/// [`MAX_NUMBER_BYTES`]. Exact sizes are needed only when this is near a
/// limit.
pub fn max_len(value: &Value) -> usize {
    fn string(s: &str) -> usize {
        2 + MAX_ESCAPED_BYTES_PER_BYTE * s.len()
    }
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => MAX_NUMBER_BYTES,
        Value::String(s) => string(s),
        // Brackets, and a separator per element.
        Value::Array(a) => 2 + a.iter().map(|v| 1 + max_len(v)).sum::<usize>(),
        // Braces, and per member its key, `:` and a separator.
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, v)| string(k) + 2 + max_len(v))
                .sum::<usize>()
        }
    }
}

/// `value` as pretty JSON (two-space indent), for served documents.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, SafeFormatter(PrettyFormatter::new()));
    let _ = value.serialize(&mut ser);
    // The writer emits only whole UTF-8 sequences and ASCII escapes.
    String::from_utf8(out).unwrap_or_default()
}

/// Whether `c` ends a line for Python's `str.splitlines` (the widest line
/// splitter in use): LF, VT, FF, CR, FS, GS, RS, NEL, LS, PS.
pub fn is_python_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
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
            "\u{85}", "\u{2028}", "\u{2029}", "\r", "\n", "\r\n", "\u{b}", "\u{c}", "\u{1c}",
            "\u{1d}", "\u{1e}", "\"", "\\", "\u{0}", "é", "🦀", "a", " ", "\u{feff}",
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

        /// The byte search finds what a search by characters finds.
        #[test]
        fn raw_breaks_are_found_by_bytes_as_by_chars(s in hostile()) {
            prop_assert_eq!(find_raw_line_break(&s), s.find(RAW_LINE_BREAKS));
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
}
