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

mod cut;

pub use cut::{
    cut_text, enforce, fit, fit_rows, fits, wire_bytes, Cut, RowBuilder, Wire, CACHE_MEMBER_BYTES,
    HARD_CUT_MARK, ROW_CUT_MARK,
};

#[cfg(test)]
mod tests;
