//! The one JSON writer for everything xmd sends: serde_json's output with
//! the line terminators it leaves raw escaped as well. Compact JSON (every
//! reply) is written by `compact.rs`, a serde `Serializer` of ours that
//! writes those bytes exactly, faster; pretty JSON (served documents) by
//! serde_json through `SafeFormatter`.
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

mod compact;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::Value;

/// Characters serde_json leaves raw that some line splitters break at.
pub const RAW_LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// Where the first of [`RAW_LINE_BREAKS`] starts in `b` (UTF-8). Found by bytes:
/// in UTF-8 they are `C2 85`, `E2 80 A8` and `E2 80 A9`, so a run of
/// ASCII holds none; such runs are skipped a word (8 bytes) at a time.
fn find_raw_line_break(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < b.len() {
        let end = (i + WORD).min(b.len());
        if end - i == WORD && word(&b[i..end]) & HIGH_BITS == 0 {
            i = end;
            continue;
        }
        if let Some(j) = (i..end).find(|&j| line_break_at(b, j).is_some()) {
            return Some(j);
        }
        i = end;
    }
    None
}

/// The one of [`RAW_LINE_BREAKS`] starting at `b[i]`, if any: how many
/// bytes it takes (`C2 85`, `E2 80 A8`, `E2 80 A9`) and its code point.
fn line_break_at(b: &[u8], i: usize) -> Option<(usize, u32)> {
    match (b[i], b.get(i + 1), b.get(i + 2)) {
        (0xC2, Some(0x85), _) => Some((2, 0x85)),
        (0xE2, Some(0x80), Some(&last @ (0xA8 | 0xA9))) => {
            Some((3, 0x2000 | u32::from(last & 0x3F)))
        }
        _ => None,
    }
}

/// Bytes examined at once by the word-at-a-time scans here.
const WORD: usize = 8;
/// Each byte's high bit, in a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// Each byte set to 1, in a word.
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// The first [`WORD`] bytes of `b` as one little-endian word.
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; WORD];
    w.copy_from_slice(&b[..WORD]);
    u64::from_le_bytes(w)
}

/// The (at most [`WORD`]) bytes of `b` as one little-endian word, the
/// missing ones spaces (a byte [`needs_care`] passes).
fn padded_word(b: &[u8]) -> u64 {
    if b.len() >= WORD {
        return word(b);
    }
    let mut w = u64::from_le_bytes([b' '; WORD]);
    for (k, &x) in b.iter().enumerate() {
        let shift = 8 * k;
        w = (w & !(0xFF << shift)) | (u64::from(x) << shift);
    }
    w
}

/// Whether any byte of `b` [`needs_care`], a word at a time: the last,
/// partial word is read as the last [`WORD`] bytes (overlapping bytes
/// already passed), or padded when `b` is shorter than a word.
fn any_care(b: &[u8]) -> bool {
    if b.len() < WORD {
        return needs_care(padded_word(b));
    }
    let mut words = b.chunks_exact(WORD);
    if words.by_ref().any(|w| needs_care(word(w))) {
        return true;
    }
    !words.remainder().is_empty() && needs_care(word(&b[b.len() - WORD..]))
}

/// Whether the word `w` holds a byte a JSON string cannot carry as it is
/// (`"`, `\`, a C0 control) or a byte of a multi-byte character (which
/// may be one of [`RAW_LINE_BREAKS`]). The classic zero-byte test, per
/// byte: a high bit that is set in `x - 0x01..` but not in `x` flags a
/// byte of `x` that is zero (`x = w ^ '"'`, `w ^ '\'`) or below 0x20
/// (`x = w`, subtracting `0x20..`); it can also flag a byte above a
/// flagged one, which only sends the word to the byte-wise path.
fn needs_care(w: u64) -> bool {
    let zero = |x: u64| x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS;
    let control = w.wrapping_sub(0x20 * LOW_BITS) & !w & HIGH_BITS;
    (zero(w ^ (u64::from(b'"') * LOW_BITS))
        | zero(w ^ (u64::from(b'\\') * LOW_BITS))
        | control
        | (w & HIGH_BITS))
        != 0
}

/// Appends `s` as a JSON string to `out`: exactly the bytes [`write`]
/// appends for a `&str` (the proptest `write_str_writes_what_serde_json_writes`
/// holds it to that), found without serde, since a reply's text is most
/// of its bytes. Runs that need no escape are copied as they are, checked
/// a word at a time.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    if any_care(b) {
        push_escaped(out, b);
    } else {
        // Most strings (keys, ids, URLs, plain text): copied whole.
        out.extend_from_slice(b);
    }
    out.push(b'"');
}

/// The body of [`write_str`] for a string with something to escape (or
/// a multi-byte character): plain words copied as they are, the rest
/// byte by byte. Kept out of line so that the common case stays small.
#[inline(never)]
fn push_escaped(out: &mut Vec<u8>, b: &[u8]) {
    let (mut copied, mut i) = (0, 0);
    while i < b.len() {
        let end = (i + WORD).min(b.len());
        if !needs_care(padded_word(&b[i..end])) {
            i = end;
            continue;
        }
        // A word with something to look at: byte by byte (an escape of a
        // line break may end past the word).
        while i < end {
            match escape_at(b, i) {
                None => i += 1,
                Some((taken, escape)) => {
                    out.extend_from_slice(&b[copied..i]);
                    out.extend_from_slice(escape.as_bytes());
                    i += taken;
                    copied = i;
                }
            }
        }
    }
    out.extend_from_slice(&b[copied..]);
}

/// An escape as [`write`] spells it: at most six bytes (`\u2028`).
struct Escape {
    bytes: [u8; 6],
    len: usize,
}

impl Escape {
    fn new(s: &[u8]) -> Escape {
        let mut bytes = [0; 6];
        bytes[..s.len()].copy_from_slice(s);
        Escape {
            bytes,
            len: s.len(),
        }
    }

    /// `\u` and the four lowercase hex digits of `c` (a character below
    /// U+10000), as serde_json and [`SafeFormatter`] write them.
    fn unicode(c: u32) -> Escape {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let digit = |shift: u32| HEX[((c >> shift) & 0xF) as usize];
        Escape::new(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)])
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The escape [`write`] writes for the character starting at `b[i]`, with
/// the number of bytes it stands for; `None` when that character is
/// written as it is. serde_json escapes `"`, `\\` and the C0 controls
/// (the short forms `\b \t \n \f \r`, else `\u00XX`); [`SafeFormatter`]
/// adds [`RAW_LINE_BREAKS`].
fn escape_at(b: &[u8], i: usize) -> Option<(usize, Escape)> {
    let one = |e: &[u8]| Some((1, Escape::new(e)));
    match b[i] {
        b'"' => one(b"\\\""),
        b'\\' => one(b"\\\\"),
        0x08 => one(b"\\b"),
        b'\t' => one(b"\\t"),
        b'\n' => one(b"\\n"),
        0x0C => one(b"\\f"),
        b'\r' => one(b"\\r"),
        c @ 0x00..=0x1F => Some((1, Escape::unicode(u32::from(c)))),
        _ => line_break_at(b, i).map(|(taken, c)| (taken, Escape::unicode(c))),
    }
}

/// A serde_json formatter that also escapes [`RAW_LINE_BREAKS`].
struct SafeFormatter<F>(F);

impl<F: Formatter> Formatter for SafeFormatter<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_escaping_line_breaks(writer, fragment.as_bytes())
    }

    /// A `RawValue`, as [`write_raw`] writes it.
    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_escaping_line_breaks(writer, &compact_raw(fragment))
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

/// Writes `b` (UTF-8), each of [`RAW_LINE_BREAKS`] in it escaped.
fn write_escaping_line_breaks<W: ?Sized + io::Write>(w: &mut W, b: &[u8]) -> io::Result<()> {
    let mut rest = b;
    while let Some(at) = find_raw_line_break(rest) {
        w.write_all(&rest[..at])?;
        let (taken, c) = line_break_at(rest, at).expect("found where one starts");
        w.write_all(Escape::unicode(c).as_bytes())?;
        rest = &rest[at + taken..];
    }
    w.write_all(rest)
}

/// The JSON text `fragment` with the whitespace between its tokens
/// dropped (only ASCII bytes are dropped, so it stays UTF-8).
fn compact_raw(fragment: &str) -> std::borrow::Cow<'_, [u8]> {
    if fragment
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_whitespace())
    {
        return fragment.as_bytes().into();
    }
    bytes_in_strings(fragment)
        .filter(|&(b, inside)| inside || !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .map(|(b, _)| b)
        .collect::<Vec<u8>>()
        .into()
}

/// Appends a `RawValue`'s JSON text: an upstream's bytes as they came, with
/// any whitespace (line breaks of a pretty-printed body) and raw
/// [`RAW_LINE_BREAKS`] inside its strings. It is written as this writer
/// writes any value: the whitespace between tokens dropped, those
/// characters escaped (valid JSON holds them only inside strings), every
/// other byte as sent (numbers keep their spelling, whatever their range
/// or nesting: nothing is re-read, so nothing can fail).
fn write_raw(out: &mut Vec<u8>, fragment: &str) {
    // Writing into a Vec cannot fail.
    let _ = write_escaping_line_breaks(out, &compact_raw(fragment));
}

/// Appends `value` as compact JSON to `out` (see `compact.rs`). A value
/// whose `Serialize` fails part way (a map with keys that are not strings
/// or numbers; xmd builds none) is written as `null`, never as the cut
/// JSON written so far.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if value
        .serialize(&mut compact::Writer { out: &mut *out })
        .is_err()
    {
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

/// `value` as serde_json's own compact serializer writes it with this
/// module's escapes (`\u2028` and the rest of [`RAW_LINE_BREAKS`], a
/// `RawValue` compacted): the oracle the tests hold [`write`] to, byte for
/// byte. Nothing else writes with it.
#[cfg(feature = "fuzzing")]
pub fn write_by_serde_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut *out,
        SafeFormatter(serde_json::ser::CompactFormatter),
    );
    if value.serialize(&mut ser).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// The number of bytes [`write`] appends for `value`.
pub fn len<T: Serialize + ?Sized>(value: &T) -> usize {
    to_vec(value).len()
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
}
