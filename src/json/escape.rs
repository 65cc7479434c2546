//! The byte-level escaping of JSON strings: where a string needs care
//! (quotes, backslashes, C0 controls, [`RAW_LINE_BREAKS`]), found a word
//! (8 bytes) at a time, and the escapes written for it.

/// Characters serde_json leaves raw that some line splitters break at.
pub const RAW_LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// Where the first of [`RAW_LINE_BREAKS`] starts in `b` (UTF-8). Found by bytes:
/// in UTF-8 they are `C2 85`, `E2 80 A8` and `E2 80 A9`, so a run of
/// ASCII holds none; such runs are skipped a word (8 bytes) at a time.
pub(super) fn find_raw_line_break(b: &[u8]) -> Option<usize> {
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
pub(super) fn line_break_at(b: &[u8], i: usize) -> Option<(usize, u32)> {
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
pub(super) fn any_care(b: &[u8]) -> bool {
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
pub(super) struct Escape {
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
    pub(super) fn unicode(c: u32) -> Escape {
        let digit = |shift: u32| crate::text::HEX_DIGITS[((c >> shift) & 0xF) as usize];
        Escape::new(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)])
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
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
