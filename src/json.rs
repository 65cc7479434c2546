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

/// Characters serde_json leaves raw that some line splitters break at.
pub const RAW_LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// A serde_json formatter that also escapes [`RAW_LINE_BREAKS`].
struct SafeFormatter<F>(F);

impl<F: Formatter> Formatter for SafeFormatter<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(RAW_LINE_BREAKS) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or('\u{2028}');
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
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

/// Appends `value` as compact JSON to `out`.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut ser = serde_json::Serializer::with_formatter(out, SafeFormatter(CompactFormatter));
    // Serializing into a Vec fails only for maps with non-string keys,
    // which xmd never builds.
    let _ = value.serialize(&mut ser);
}

/// `value` as compact JSON.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write(&mut out, value);
    out
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
    use serde_json::{json, Value};

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
    }
}
