//! Fitting a built result to the budget: its serialized size, the most
//! leading items or rows that fit, the cut marks, and the last guard
//! ([`enforce`]) on any result.

use serde_json::Value;

use super::{budget_phrase, prefix_within, within_budget, Measure, Run, MAX_PAYLOAD_BYTES};
use crate::x::structured::Structured;

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
