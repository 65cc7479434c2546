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
mod escape;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::Value;

use escape::{find_raw_line_break, line_break_at, Escape};
pub use escape::{write_str, RAW_LINE_BREAKS};

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
mod tests;
