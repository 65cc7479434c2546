//! The result budget: every tool result fits the agent's context and every
//! JSON-RPC message fits the SDKs' 1 MiB event limit.
//!
//! A tool builds its result from leading items (posts or rows) with a
//! closure; [`fit`] finds the most leading items whose *built* result
//! (the Markdown with its continuation note, and the `structuredContent`)
//! stays within [`Settings::max_chars`] characters of text and
//! [`MAX_PAYLOAD_BYTES`] bytes of serialized JSON (measured with the same
//! writer that serializes replies, escapes included). Only when the first
//! item alone does not fit is it cut inside, and the tool marks the cut.
//! What is measured is what is sent, so the bound holds for any input.

use std::time::Duration;

use crate::config::{DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESULT_CHARS};

use serde_json::Value;

use super::structured::Structured;

/// The largest JSON-RPC message xmd sends, in bytes, in either framing:
/// 1,048,576, the SSE event limit of the official Python SDK.
pub const MAX_MESSAGE_BYTES: usize = 1_048_576;

/// Bytes of a message kept for everything around the text and the
/// `structuredContent`: the JSON-RPC envelope, the request id (at most
/// [`MAX_ECHOED_ID_BYTES`]), `_meta`, the legacy `{"result":…}` wrap and
/// the SSE framing (`event: message\ndata: ` … `\n\n`). Default 64 KiB.
pub const ENVELOPE_RESERVE_BYTES: usize = 64 * 1024;

/// Longest request id a tool reply can echo within the reserve, in bytes
/// of JSON. Default 32 KiB; the dispatcher refuses longer ids than fit it
/// (`mcp::jsonrpc::MAX_ID_BYTES`, checked at compile time).
pub const MAX_ECHOED_ID_BYTES: usize = 32 * 1024;

/// Serialized text plus `structuredContent` of one result, in bytes:
/// [`MAX_MESSAGE_BYTES`] less [`ENVELOPE_RESERVE_BYTES`].
pub const MAX_PAYLOAD_BYTES: usize = MAX_MESSAGE_BYTES - ENVELOPE_RESERVE_BYTES;

/// Bytes one character can take in a JSON string (a control character or
/// U+2028 written as `\uXXXX`).
pub const MAX_ESCAPED_BYTES_PER_CHAR: usize = 6;

pub use super::args::{MAX_RESULT_CHARS_LIMIT, MIN_RESULT_CHARS};
pub use super::cursor::unescape_cursor;

/// Claude Code's ceiling for one tool result's text, in characters
/// (JavaScript string length, UTF-16 code units): 50,000. A longer result
/// is moved to a file and the model sees a 2 KB preview, unless the tool
/// declares a higher `_meta["anthropic/maxResultSizeChars"]`.
pub const CLAUDE_CODE_MAX_CHARS: usize = 50_000;

/// Claude Code's ceiling for one tool result in tokens
/// (`MAX_MCP_OUTPUT_TOKENS`): 25,000; past it the result goes to a file
/// too.
pub const CLAUDE_CODE_MAX_TOKENS: usize = 25_000;

/// The key a tool's `tools/list` entry declares its result ceiling under
/// (Claude Code reads it; other clients ignore `_meta` keys they do not
/// know). xmd declares the configured budget, `--max-result-chars`.
pub const MAX_RESULT_SIZE_META: &str = "anthropic/maxResultSizeChars";

/// What a text costs against the result budget, in one pass over its
/// bytes:
/// - `chars`: UTF-16 code units, as JavaScript (and so Claude Code)
///   counts a string: one per character, two for a character beyond the
///   Basic Multilingual Plane (most emoji);
/// - `tokens`: a conservative token estimate, in thirds of a token: an
///   ASCII character costs a third of a token (real text averages a
///   quarter), any other character one token per UTF-8 byte after its
///   first: 1 for accented Latin, Greek, Cyrillic, Arabic, Hebrew; 2 for
///   CJK, kana, Hangul, Thai, Devanagari; 3 for emoji and everything
///   beyond the BMP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measure {
    /// UTF-16 code units.
    pub chars: usize,
    /// Estimated tokens times three.
    pub token_thirds: usize,
}

impl Measure {
    /// The measure of `s`, in one pass over its bytes: eight ASCII bytes
    /// at a time (a character and a third of a token each); any other
    /// byte alone (a continuation byte costs a token, a leader is one
    /// character, or two, a surrogate pair, for a four-byte character).
    pub fn of(s: &str) -> Measure {
        const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
        let b = s.as_bytes();
        let mut m = Measure::default();
        let mut i = 0;
        while i < b.len() {
            if let Some(w) = b.get(i..i + 8) {
                let w = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or([0x80; 8]));
                if w & HIGH_BITS == 0 {
                    m.chars += 8;
                    m.token_thirds += 8;
                    i += 8;
                    continue;
                }
            }
            match b[i] {
                0x00..=0x7f => {
                    m.chars += 1;
                    m.token_thirds += 1;
                }
                0x80..=0xbf => m.token_thirds += 3,
                0xc0..=0xef => m.chars += 1,
                _ => m.chars += 2,
            }
            i += 1;
        }
        m
    }

    /// The estimated tokens, rounded up.
    pub fn tokens(&self) -> usize {
        self.token_thirds.div_ceil(3)
    }

    /// Whether this is within the budget of `max_chars` characters and
    /// [`token_budget`]`(max_chars)` estimated tokens.
    pub fn within(&self, max_chars: usize) -> bool {
        self.chars <= max_chars && self.token_thirds <= 3 * token_budget(max_chars)
    }
}

/// The estimated-token budget that goes with a character budget: half of
/// it (Claude Code's own ratio, 25,000 tokens to 50,000 characters). At
/// the default 40,000 characters: 20,000 tokens.
pub fn token_budget(max_chars: usize) -> usize {
    max_chars / 2
}

/// Whether `text` is within the budget of `max_chars` (see [`Measure`]).
pub fn within_budget(text: &str, max_chars: usize) -> bool {
    Measure::of(text).within(max_chars)
}

/// `Result budget of N characters (T estimated tokens)`, for notes.
pub fn budget_phrase(max_chars: usize) -> String {
    format!(
        "Result budget of {max_chars} characters ({} estimated tokens)",
        token_budget(max_chars)
    )
}

/// How many characters (Unicode scalar values) of `s` from its start are
/// within the budget of `max_chars` (see [`Measure`]).
pub fn prefix_within(s: &str, max_chars: usize) -> usize {
    let mut m = Measure::default();
    let mut n = 0;
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let add = Measure::of(c.encode_utf8(&mut buf));
        m.chars += add.chars;
        m.token_thirds += add.token_thirds;
        if !m.within(max_chars) {
            break;
        }
        n += 1;
    }
    n
}

/// How tool results are shaped, server-wide.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Text budget in characters ([`DEFAULT_MAX_RESULT_CHARS`]).
    pub max_chars: usize,
    /// Public base URL without a trailing slash; links in results are
    /// absolute under it (root-relative when empty).
    pub public_url: String,
    /// Deadline of one call ([`DEFAULT_CALL_TIMEOUT`]).
    pub call_timeout: Duration,
    /// The key continuation cursors are signed with (`--cursor-secret`,
    /// else random per process).
    pub cursor_key: super::cursor::CursorKey,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_chars: DEFAULT_MAX_RESULT_CHARS,
            public_url: String::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            cursor_key: super::cursor::CursorKey::random(),
        }
    }
}

impl Settings {
    /// `path` (starting with `/`) under the public URL.
    pub fn link(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }
}

pub use super::fetcher::Guard;

/// One call's view of the settings: the budget, the public URL, its
/// guard, and its own arguments (to print the call that continues).
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// Server-wide settings.
    pub settings: &'a Settings,
    /// The call's deadline and cancel flag.
    pub guard: Option<&'a Guard>,
    /// The call's typed arguments (they name the tool).
    pub call: &'a crate::x::registry::Call,
}

impl Run<'_> {
    /// The text budget of this call: the server's, or the call's
    /// `max_chars` when lower (it can never raise it).
    pub fn max_chars(&self) -> usize {
        let asked = self.call.max_chars().unwrap_or(usize::MAX);
        self.settings.max_chars.min(asked)
    }

    /// The call that continues, as `tool {arguments}`: `args` with `page`
    /// removed and `cursor` set.
    fn continue_call(&self, mut args: serde_json::Map<String, Value>, cursor: &str) -> String {
        args.remove("page");
        args.insert("cursor".into(), Value::from(cursor));
        format!("{} {}", self.call.tool().name(), Value::Object(args))
    }

    /// [`Run::continue_note`] as plain text, for list results: their
    /// notes are rendered inert and their `[Continue →]` line follows.
    pub fn continue_note_plain(&self, left_out: &str, cursor: &str) -> String {
        format!(
            "{left_out} Continue with {} (the raw cursor: cursor=\"{cursor}\"), or follow the Continue link below.",
            self.continue_call(self.args(), cursor)
        )
    }

    /// The call's arguments in their one spelling
    /// ([`crate::x::registry::Call::canonical`]).
    pub fn args(&self) -> serde_json::Map<String, Value> {
        self.call.canonical()
    }

    /// The note that ends a result cut by the budget: what was left out,
    /// the exact call that continues (this call's arguments with `cursor`
    /// set, `page` removed; `args` starts from [`Run::args`]), the raw
    /// cursor, and an absolute link to the same continuation over HTTP
    /// (`link_path` starts with `/` and ends with `?…&` or `?`).
    pub fn continue_note(
        &self,
        left_out: &str,
        args: serde_json::Map<String, Value>,
        cursor: &str,
        link_path: &str,
    ) -> String {
        let call = self.continue_call(args, cursor);
        let link = self.settings.link(&format!(
            "{link_path}cursor={}",
            super::cursor::form_encode(cursor)
        ));
        format!(
            "{left_out} Continue with {} (the raw cursor: {}), or open [Continue →]({link}).",
            code_span(&call),
            code_span(&format!("cursor=\"{cursor}\""))
        )
    }
}

/// `s` as a Markdown code span whose backtick fence outgrows any run in
/// it, so user text inside cannot close it.
pub fn code_span(s: &str) -> String {
    let (mut longest, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if longest > 0 || s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

/// Bytes the cache status adds to a serialized `structuredContent`
/// (`"cache":"bypass",`, the longest): it is written when the result is
/// serialized, after the tool built it, so [`fits`] and [`enforce`] count
/// it on top of what the tool built.
pub const CACHE_MEMBER_BYTES: usize = 17;

/// Serialized size of a result: its text as a JSON string plus its
/// `structuredContent`, as the reply writer writes them.
pub fn wire_bytes(text: &str, structured: &Structured) -> usize {
    crate::json::len(text) + structured.to_vec().len()
}

/// Whether a built result is within the budget. The bytes are counted
/// exactly only when their upper bound ([`crate::json::max_len`], a walk
/// of the tree that writes nothing) is over the limit.
pub fn fits(max_chars: usize, text: &str, structured: &Structured) -> bool {
    let within = |bytes: usize| bytes + CACHE_MEMBER_BYTES <= MAX_PAYLOAD_BYTES;
    let bound = 2 + crate::json::MAX_ESCAPED_BYTES_PER_BYTE * text.len() + structured.max_len();
    within_budget(text, max_chars) && (within(bound) || within(wire_bytes(text, structured)))
}

/// A result as the reply writer writes it: the text as a JSON string and
/// `structuredContent` as JSON (without the cache status, which is added
/// when a reply is assembled, see [`crate::x::tools::write_structured`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire {
    /// The text as a JSON string.
    pub text: Vec<u8>,
    /// `structuredContent`.
    pub structured: Vec<u8>,
}

impl Wire {
    /// `text` and `structured` serialized.
    pub fn of(text: &str, structured: &Structured) -> Wire {
        // Sized for the text with a few escapes: written without regrowth.
        let mut quoted = Vec::with_capacity(text.len() + text.len() / 16 + 16);
        crate::json::write_str(&mut quoted, text);
        Wire {
            text: quoted,
            structured: structured.to_vec(),
        }
    }

    /// Bytes of both, as [`wire_bytes`] counts them.
    pub fn len(&self) -> usize {
        self.text.len() + self.structured.len()
    }

    /// Whether both are empty (never, for a serialized result).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many leading items a result holds, and whether the only one was
/// cut inside (then: how many of its characters are kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Leading items kept.
    pub items: usize,
    /// `Some(chars)` when the first item alone exceeded the budget and
    /// only its first `chars` characters are kept.
    pub inside: Option<usize>,
}

/// Finds the largest [`Cut`] whose built result fits, building with
/// `build(cut)`; returns the cut and what it built. `n` items exist and
/// `first_len()` is the largest inside cut of the first one (its text's
/// length, for most items), asked only when that item alone is over the
/// budget. With `n == 0` the result is built once as it is.
pub fn fit<T>(
    n: usize,
    first_len: &dyn Fn() -> usize,
    max_chars: usize,
    build: &mut dyn FnMut(Cut) -> (String, Structured, T),
) -> (Cut, String, Structured, T) {
    let whole = Cut {
        items: n,
        inside: None,
    };
    let built = build(whole);
    if n == 0 || fits(max_chars, &built.0, &built.1) {
        return (whole, built.0, built.1, built.2);
    }
    // Largest k in 1..n that fits (k = n does not).
    let (mut lo, mut hi) = (0usize, n);
    let mut best = None;
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        let cut = Cut {
            items: mid,
            inside: None,
        };
        let b = build(cut);
        if fits(max_chars, &b.0, &b.1) {
            lo = mid;
            best = Some((cut, b));
        } else {
            hi = mid;
        }
    }
    if lo == 0 {
        let one = Cut {
            items: 1,
            inside: None,
        };
        let b = build(one);
        if fits(max_chars, &b.0, &b.1) {
            best = Some((one, b));
        }
    }
    if let Some((cut, b)) = best {
        return (cut, b.0, b.1, b.2);
    }
    // The first item alone is over the budget: keep as much of it as fits.
    let (mut lo, mut hi) = (0usize, first_len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let cut = Cut {
            items: 1,
            inside: Some(mid),
        };
        let b = build(cut);
        if fits(max_chars, &b.0, &b.1) {
            lo = mid;
            best = Some((cut, b));
        } else {
            hi = mid - 1;
        }
    }
    let (cut, b) = best.unwrap_or_else(|| {
        let cut = Cut {
            items: 1,
            inside: Some(0),
        };
        (cut, build(cut))
    });
    (cut, b.0, b.1, b.2)
}

/// Renders the first rows of a list result with its continuation cursor
/// and notes: `(rows, next_cursor, notes) -> (Markdown, structuredContent)`.
pub type RowBuilder<'a> = dyn FnMut(usize, Option<&String>, &[String]) -> (String, Structured) + 'a;

/// Fits a list result into the call's budget: `build(rows, next_cursor,
/// notes)` renders the first `rows` of `n` rows with the continuation
/// and notes given; `cursor_at(k)` is the cursor continuing at row `k`
/// (for a result cut there), and `next_cursor` the walk's own. A result
/// cut by the budget ends with a note naming the exact call that
/// continues, and says `truncated: true`.
pub fn fit_rows(
    run: &Run,
    n: usize,
    notes: &[String],
    next_cursor: Option<String>,
    cursor_at: &dyn Fn(usize) -> String,
    build: &mut RowBuilder<'_>,
) -> (String, Structured) {
    // The whole result, when it fits (the common case), is the answer:
    // exactly what `fit` would return first, without the two extra builds
    // measuring the first row.
    if n > 0 {
        let (text, mut structured) = build(n, next_cursor.as_ref(), notes);
        if fits(run.max_chars(), &text, &structured) {
            structured.insert("truncated", Value::Bool(false));
            return (text, structured);
        }
    }
    // The length of the first row's text, what an inside cut shortens.
    let first_len = if n == 0 {
        0
    } else {
        let (one, _) = build(1, next_cursor.as_ref(), notes);
        let (frame, _) = build(0, next_cursor.as_ref(), notes);
        split_rows(&one, &frame).1.chars().count()
    };
    let mut shape = |cut: Cut| {
        let k = cut.items;
        let mut notes = notes.to_vec();
        let next = if k < n {
            let c = cursor_at(k);
            let left_out = format!(
                "{} reached: this result shows {k} of the {n} rows read{}; the rest were left out.",
                budget_phrase(run.max_chars()),
                if cut.inside.is_some() {
                    " (that row cut: it alone exceeds the budget)"
                } else {
                    ""
                }
            );
            notes.push(run.continue_note_plain(&left_out, &c));
            Some(c)
        } else {
            next_cursor.clone()
        };
        let (mut text, mut structured) = build(k, next.as_ref(), &notes);
        if let Some(chars) = cut.inside {
            // One row over the budget: cut inside its own text and keep
            // the notes and the continuation around it.
            let (frame, _) = build(0, next.as_ref(), &notes);
            let (head, row, tail) = split_rows(&text, &frame);
            text = format!("{head}{}{ROW_CUT_MARK}{tail}", cut_text(row, chars));
        }
        structured.insert("truncated", Value::Bool(k < n || cut.inside.is_some()));
        (text, structured, ())
    };
    let (_, text, structured, ()) = fit(n, &|| first_len, run.max_chars(), &mut shape);
    (text, structured)
}

/// The marker after a list row cut inside by the result budget.
pub const ROW_CUT_MARK: &str =
    " …\n\n**[Cut: this row alone exceeds the result budget; the rest of it is not shown.]**";

/// Splits a list result's text with rows into (before the rows, the rows,
/// after them) by what it shares with the same result without rows
/// (`frame`): the common head and the common tail.
fn split_rows<'t>(text: &'t str, frame: &str) -> (&'t str, &'t str, &'t str) {
    let head = text
        .char_indices()
        .zip(frame.chars())
        .find(|((_, a), b)| a != b)
        .map_or(text.len().min(frame.len()), |((i, _), _)| i);
    let tail = text[head..]
        .chars()
        .rev()
        .zip(frame[head.min(frame.len())..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let end = text.len() - tail;
    (&text[..head], &text[head..end], &text[end..])
}

/// The marker that ends a result's text cut by [`enforce`].
pub const HARD_CUT_MARK: &str =
    "\n\n**[Cut: this result alone exceeds the result budget; the rest is not shown.]**";

/// The last guard of the budget, for results a tool could not cut at a
/// boundary (a single upstream field larger than the budget, such as a
/// bio of megabytes from a misbehaving upstream): cuts the text at the
/// budget with [`HARD_CUT_MARK`], and empties the bulky members of
/// `structuredContent` (`posts`, `users`, the `profile` down to its
/// identity, `warnings`) with `truncated: true`, so any result fits.
/// Returns the result serialized (the one serialization a reply uses).
pub fn enforce(text: &mut String, structured: &mut Structured, max_chars: usize) -> Wire {
    let within = |bytes: usize| bytes + CACHE_MEMBER_BYTES <= MAX_PAYLOAD_BYTES;
    let text_fits = within_budget(text, max_chars);
    let mut wire = Wire::of(text, structured);
    if text_fits && within(wire.len()) {
        return wire;
    }
    if !text_fits {
        let keep = prefix_within(
            text,
            max_chars.saturating_sub(2 * Measure::of(HARD_CUT_MARK).chars),
        );
        let head = cut_text(text, keep).to_string();
        *text = head + HARD_CUT_MARK;
        wire.text.clear();
        crate::json::write_str(&mut wire.text, text);
    }
    if !within(wire.len()) {
        // The last resort reads the object back as one tree to empty it.
        let mut whole = structured.to_value();
        if let Value::Object(m) = &mut whole {
            for key in ["posts", "users", "warnings"] {
                if let Some(v) = m.get_mut(key) {
                    *v = Value::Array(Vec::new());
                }
            }
            if let Some(Value::Object(p)) = m.get_mut("profile") {
                p.retain(|k, v| {
                    matches!(k.as_str(), "id" | "screen_name" | "name")
                        && v.as_str().is_some_and(|s| s.len() <= 64)
                });
            }
            if m.contains_key("post_count") {
                m.insert("post_count".into(), Value::from(0));
            }
            m.insert("truncated".into(), Value::Bool(true));
            *structured = Structured::new(std::mem::take(m));
            wire.structured = structured.to_vec();
        }
    }
    wire
}

/// The first `chars` characters of `s`, ending at a line break when one
/// falls in the last fifth (so a cut rarely splits a line).
pub fn cut_text(s: &str, chars: usize) -> &str {
    let end = s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i);
    let head = &s[..end];
    if end == s.len() {
        return head;
    }
    match head.rfind('\n') {
        Some(nl) if head[..nl].chars().count() * 5 >= chars * 4 => &head[..nl],
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The oracle, from the definition: characters are JavaScript's
        /// (UTF-16 code units, `encode_utf16`), an ASCII character is a
        /// third of a token and any other one token per UTF-8 byte after
        /// its first.
        #[test]
        fn the_measure_counts_utf16_units_and_token_thirds(s in "\\PC{0,300}|[a-z é中😀]{0,300}") {
            let thirds: usize = s
                .chars()
                .map(|c| if c.is_ascii() { 1 } else { 3 * (c.len_utf8() - 1) })
                .sum();
            prop_assert_eq!(
                Measure::of(&s),
                Measure { chars: s.encode_utf16().count(), token_thirds: thirds }
            );
        }
    }

    #[test]
    fn the_cap_keeps_worst_case_text_inside_a_message() {
        const _: () = assert!(
            MAX_RESULT_CHARS_LIMIT * MAX_ESCAPED_BYTES_PER_CHAR + ENVELOPE_RESERVE_BYTES
                <= MAX_MESSAGE_BYTES
        );
        const _: () = assert!(MAX_ECHOED_ID_BYTES * 2 <= ENVELOPE_RESERVE_BYTES);
        assert_eq!(MAX_PAYLOAD_BYTES, 983_040);
    }

    fn build_items(items: &[String], cut: Cut) -> (String, Structured, ()) {
        let mut shown: Vec<String> = items[..cut.items].to_vec();
        if let Some(c) = cut.inside {
            shown[0] = format!("{} [cut]", cut_text(&shown[0], c));
        }
        let mut text = shown.join("\n\n");
        if cut.items < items.len() || cut.inside.is_some() {
            text.push_str("\n\n> Note: continues.");
        }
        let mut sc = Structured::default();
        sc.insert_written("items", &shown);
        (text, sc, ())
    }

    #[test]
    fn fit_keeps_whole_items_then_cuts_inside_the_first() {
        let items: Vec<String> = (0..10).map(|i| format!("{i}").repeat(100)).collect();
        let (cut, text, _, ()) = fit(10, &|| 100, 450, &mut |c| build_items(&items, c));
        assert_eq!(
            cut,
            Cut {
                items: 4,
                inside: None
            }
        );
        assert!(text.chars().count() <= 450);
        let (cut, text, _, ()) = fit(10, &|| 100, 80, &mut |c| build_items(&items, c));
        assert_eq!(
            cut,
            Cut {
                items: 1,
                inside: Some(54)
            }
        );
        assert_eq!(text.chars().count(), 80);
        let (cut, _, _, ()) = fit(10, &|| 100, 10_000, &mut |c| build_items(&items, c));
        assert_eq!(
            cut,
            Cut {
                items: 10,
                inside: None
            }
        );
    }

    #[test]
    fn cursors_from_links_decode() {
        assert_eq!(
            unescape_cursor("thread%3A1%3A2%402%3Aab"),
            "thread:1:2@2:ab"
        );
        assert_eq!(unescape_cursor("a:b"), "a:b");
        assert_eq!(unescape_cursor("100%"), "100%");
        assert_eq!(unescape_cursor("%ff"), "%ff");
        assert_eq!(
            unescape_cursor("[Continue →](https://h.example/x/a?limit=2&cursor=profile%3Aa%3A%402%3Aab) · [Next page (2) →](https://h.example/x/a?limit=2&page=2)"),
            "profile:a:@2:ab"
        );
        assert_eq!(unescape_cursor("/a?q=b&cursor=x%3Ay&feed=top"), "x:y");
    }

    proptest! {
        /// Hostile text (quotes, backslashes, controls, line separators,
        /// four-byte characters) at any budget up to the cap: the message
        /// built around the fitted payload, SSE-framed, stays under 1 MiB.
        #[test]
        fn any_text_at_any_budget_fits_one_message(
            unit in prop::sample::select(vec!["\u{2028}", "\u{0}", "\"", "\\", "🦀", "é", "a\n"]),
            repeat in 1usize..40_000,
            n in 1usize..12,
            max_chars in MIN_RESULT_CHARS..=MAX_RESULT_CHARS_LIMIT,
        ) {
            let items: Vec<String> = (0..n).map(|_| unit.repeat(repeat)).collect();
            let first = items[0].chars().count();
            let (_, text, sc, ()) = fit(n, &|| first, max_chars, &mut |c| build_items(&items, c));
            prop_assert!(text.chars().count() <= max_chars);
            let id = "x".repeat(MAX_ECHOED_ID_BYTES - 2);
            let mut msg = format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"content":[{{"type":"text","text":"#).into_bytes();
            msg.extend(crate::json::to_vec(&text));
            msg.extend_from_slice(br#"}],"structuredContent":{"result":"#);
            msg.extend(sc.to_vec());
            msg.extend_from_slice(br#"},"isError":false,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"xmd","version":"0.0.0"}}}}"#);
            let sse = [b"event: message\ndata: ".as_slice(), &msg, b"\n\n"].concat();
            prop_assert!(sse.len() <= MAX_MESSAGE_BYTES, "{}", sse.len());
            prop_assert!(serde_json::from_slice::<Value>(&msg).is_ok());
        }
    }
}
