//! Upstream substitution lists (FxTwitter's `raw_text.facets`, a Community
//! Note's facets, a bio's `raw_description.facets`, the syndication
//! endpoint's `entities.urls` and `entities.media`) applied to a text in
//! ONE pass over the original text, by offsets: the one expander every
//! such site calls.
//!
//! # Rules (what the peer sees)
//!
//! - **Offsets.** An edit's `indices` (`[start, end)`) are read as UTF-16
//!   code units (X's legacy entities, FxTwitter's `raw_text`, and what the
//!   fixtures carry), else as Unicode code points (X's note tweets; FxEmbed
//!   `twitter-text-indices.ts` maps those for the same reason). A span is
//!   used only when the text there IS the edit's `original`: an offset
//!   that is past the end, splits a character, is reversed, or points at
//!   other text is never trusted.
//! - **Fallback by text.** An edit whose offsets are absent or do not hold
//!   its `original` is looked for by its `original`, forward from where
//!   the last applied edit ended (facets come sorted by `indices[0]`). All
//!   such searches together read at most [`SEARCH_BUDGET_FACTOR`] times
//!   the text; past that an edit is skipped.
//! - **Overlap.** Edits are applied in order of their start offset (stable;
//!   an edit without offsets keeps its place after the one before it). An
//!   edit that starts before the previous applied one ended overlaps it:
//!   it is looked for by text after that end, else skipped.
//! - **Never lost.** A skipped edit leaves the text it would have
//!   replaced as it was (the t.co link stays, and still leads there);
//!   [`Expanded::applied`] says which edits were applied, for callers that
//!   list the rest ("Links:").
//! - **Bounded.** Every replacement is copied at most once and every byte
//!   of the text at most once, so the output is at most the text plus the
//!   sum of the replacements' lengths, and the work is linear in text,
//!   edits and replacements ([`Expanded::work`] counts it). Growth past
//!   [`MAX_EXPANSION_GROWTH`] stops the edits (the rest of the text is
//!   copied unchanged). Every [`CHECK_EVERY`] edits the call's stop signal
//!   ([`Stop`]: its deadline or its client gone) is read; once raised, the
//!   rest of the text is copied unchanged.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Most bytes one expansion may add to its text: 1 MiB. A real post's
/// links add a few hundred bytes; past it the remaining edits are
/// skipped (their text kept) and [`Expanded::stopped`] is set.
pub const MAX_EXPANSION_GROWTH: usize = 1 << 20;

/// How many times the text's length the fallback searches may read in
/// all (2): past it, edits not found by offset are skipped.
pub const SEARCH_BUDGET_FACTOR: usize = 2;

/// Edits between two reads of the call's stop signal (256).
pub const CHECK_EVERY: usize = 256;

/// One substitution.
#[derive(Debug, Clone, Copy)]
pub struct Edit<'a> {
    /// `[start, end)` as sent (`indices`), in UTF-16 code units or code
    /// points; `None` when absent or not two numbers.
    pub indices: Option<(u64, u64)>,
    /// The text the edit replaces (`original`); never empty.
    pub original: &'a str,
    /// What replaces it (`replacement`; empty to remove).
    pub replacement: &'a str,
}

/// What [`expand`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The text with the edits applied.
    pub text: String,
    /// For each edit, in the order given, whether it was applied.
    pub applied: Vec<bool>,
    /// True when the growth cap or the call's stop signal ended the edits
    /// early (the rest of the text was copied unchanged).
    pub stopped: bool,
    /// Units of work done: bytes copied, bytes searched, offsets walked,
    /// edits sorted (a test's measure of linear time).
    pub work: usize,
}

/// `[start, end)` of a JSON `indices` value (`[a, b]`, two non-negative
/// integers), else `None`.
pub fn indices(v: Option<&serde_json::Value>) -> Option<(u64, u64)> {
    match v?.as_array()?.as_slice() {
        [a, b] => Some((a.as_u64()?, b.as_u64()?)),
        _ => None,
    }
}

/// [`indices`] of a value kept as sent.
pub fn raw_indices(v: Option<&serde_json::value::RawValue>) -> Option<(u64, u64)> {
    serde_json::from_str::<(u64, u64)>(v?.get()).ok()
}

thread_local! {
    /// The stop signal of the call running on this thread ([`Stop::enter`]).
    static STOP: RefCell<Option<(Instant, Arc<AtomicBool>)>> = const { RefCell::new(None) };
}

/// The stop signal of the call running on this thread: its deadline and
/// the flag raised when its client has gone (the tool layer's
/// `budget::Guard`), read by long loops below the tools.
pub struct Stop(Option<(Instant, Arc<AtomicBool>)>);

impl Stop {
    /// Makes `deadline` and `cancel` this thread's stop signal until the
    /// returned value is dropped.
    pub fn enter(deadline: Instant, cancel: Arc<AtomicBool>) -> Stop {
        Stop(STOP.with(|s| s.replace(Some((deadline, cancel)))))
    }

    /// Whether the call running on this thread should stop now.
    pub fn requested() -> bool {
        STOP.with(|s| {
            s.borrow()
                .as_ref()
                .is_some_and(|(d, c)| c.load(Ordering::Relaxed) || Instant::now() >= *d)
        })
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        let before = self.0.take();
        STOP.with(|s| *s.borrow_mut() = before);
    }
}

/// Byte positions of `offsets` (sorted ascending) in `text`, counted in
/// UTF-16 code units (`utf16`) or code points: `None` for an offset past
/// the end or inside a character. One walk over the text.
fn byte_positions(
    text: &str,
    offsets: &[u64],
    utf16: bool,
    work: &mut usize,
) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut chars = text.char_indices();
    let (mut unit, mut byte) = (0u64, 0usize);
    let mut next = chars.next();
    for &o in offsets {
        while unit < o {
            let Some((_, c)) = next else { break };
            unit += if utf16 { c.len_utf16() as u64 } else { 1 };
            byte += c.len_utf8();
            *work += 1;
            next = chars.next();
        }
        out.push((unit == o).then_some(byte));
    }
    out
}

/// The spans `[start, end)` in bytes that `edits`' offsets give, in one
/// unit (see [`byte_positions`]), for the edits whose span holds their
/// `original`.
fn spans(text: &str, edits: &[Edit], utf16: bool, work: &mut usize) -> Vec<Option<(usize, usize)>> {
    let mut offsets: Vec<u64> = edits
        .iter()
        .filter_map(|e| e.indices)
        .flat_map(|(a, b)| [a, b])
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    *work += offsets.len();
    let at = byte_positions(text, &offsets, utf16, work);
    let byte = |o: u64| at[offsets.binary_search(&o).ok()?];
    edits
        .iter()
        .map(|e| {
            let (a, b) = e.indices?;
            let (s, t) = (byte(a)?, byte(b)?);
            (s < t && text.get(s..t) == Some(e.original)).then_some((s, t))
        })
        .collect()
}

/// `text` from byte `from` (a character boundary; `0` for all of it) with
/// `edits` applied, as the module's rules say. Edits starting before
/// `from` are looked for after it.
pub fn expand(text: &str, from: usize, edits: &[Edit]) -> Expanded {
    let from = if text.is_char_boundary(from) { from } else { 0 };
    let mut work = 0;
    let by16 = spans(text, edits, true, &mut work);
    let by_cp = spans(text, edits, false, &mut work);
    let mut search = Search {
        text,
        from,
        cursor: from,
        left: SEARCH_BUDGET_FACTOR.saturating_mul(text.len()),
        work: 0,
    };
    let mut stopped = false;
    // Where each edit applies: by its offsets, else by its text (in the
    // order given, each search going on after the last one found).
    let mut at: Vec<(usize, usize, usize)> = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        if i % CHECK_EVERY == CHECK_EVERY - 1 && Stop::requested() {
            stopped = true;
            break;
        }
        if e.original.is_empty() {
            continue;
        }
        let by_offset = [by16[i], by_cp[i]]
            .into_iter()
            .flatten()
            .find(|&(s, _)| s >= from);
        if let Some((s, t)) = by_offset.or_else(|| search.find(e.original)) {
            at.push((s, t, i));
        }
    }
    work += search.work;
    at.sort_unstable();
    work += at.len();

    let mut out = String::with_capacity(text.len() - from);
    let mut applied = vec![false; edits.len()];
    let mut cursor = from;
    for &(s, t, i) in &at {
        if s < cursor {
            // Overlaps the edit applied before it: its text stays.
            continue;
        }
        let e = &edits[i];
        // What the output would hold beyond the text consumed so far.
        let growth = (out.len() + (s - cursor) + e.replacement.len()).saturating_sub(t - from);
        if growth > MAX_EXPANSION_GROWTH {
            stopped = true;
            break;
        }
        out.push_str(&text[cursor..s]);
        out.push_str(e.replacement);
        work += (s - cursor) + e.replacement.len();
        cursor = t;
        applied[i] = true;
    }
    out.push_str(&text[cursor..]);
    work += text.len() - cursor;
    Expanded {
        text: out,
        applied,
        stopped,
        work,
    }
}

/// The fallback search by text: forward from the end of the last match,
/// once more from the start, within a budget of bytes read.
struct Search<'t> {
    text: &'t str,
    from: usize,
    cursor: usize,
    left: usize,
    work: usize,
}

impl Search<'_> {
    fn find(&mut self, needle: &str) -> Option<(usize, usize)> {
        let starts = [self.cursor, self.from];
        let tries = if self.cursor > self.from {
            &starts[..]
        } else {
            &starts[..1]
        };
        for &begin in tries {
            let end = floor_boundary(
                self.text,
                begin.saturating_add(self.left).min(self.text.len()),
            );
            let window = self.text.get(begin..end)?;
            let found = window.find(needle);
            let read = found.map_or(window.len(), |p| p + needle.len());
            self.left -= read.min(self.left);
            self.work += read;
            if let Some(p) = found {
                self.cursor = begin + p + needle.len();
                return Some((begin + p, self.cursor));
            }
        }
        None
    }
}

/// The largest character boundary of `text` at or below `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e<'a>(indices: Option<(u64, u64)>, original: &'a str, replacement: &'a str) -> Edit<'a> {
        Edit {
            indices,
            original,
            replacement,
        }
    }

    #[test]
    fn utf16_then_code_point_offsets_then_text() {
        // "😀" is 2 UTF-16 units and 1 code point.
        let t = "😀 a https://t.co/A b https://t.co/B";
        let x = expand(
            t,
            0,
            &[
                e(Some((5, 19)), "https://t.co/A", "https://a.example/"),
                e(Some((21, 35)), "https://t.co/B", "https://b.example/"),
            ],
        );
        assert_eq!(x.text, "😀 a https://a.example/ b https://b.example/");
        assert_eq!(x.applied, vec![true, true]);
        // Code points (a note tweet's).
        let x = expand(t, 0, &[e(Some((4, 18)), "https://t.co/A", "X")]);
        assert_eq!(x.text, "😀 a X b https://t.co/B");
        // Stale offsets: found by text after the cursor.
        let x = expand(t, 0, &[e(Some((0, 3)), "https://t.co/B", "Y")]);
        assert_eq!(x.text, "😀 a https://t.co/A b Y");
        // An offset inside the emoji, past the end, reversed: by text.
        for bad in [(1, 15), (30, 99), (19, 5)] {
            let x = expand(t, 0, &[e(Some(bad), "https://t.co/A", "Z")]);
            assert_eq!(x.text, "😀 a Z b https://t.co/B", "{bad:?}");
        }
        // Not in the text at all: kept, not applied.
        let x = expand(t, 0, &[e(Some((5, 19)), "https://t.co/Q", "Z")]);
        assert_eq!((x.text.as_str(), x.applied), (t, vec![false]));
    }

    #[test]
    fn overlapping_edits_keep_the_first_and_the_text() {
        let t = "abcdef";
        let x = expand(
            t,
            0,
            &[e(Some((1, 4)), "bcd", "X"), e(Some((2, 5)), "cde", "Y")],
        );
        assert_eq!(x.text, "aXef");
        assert_eq!(x.applied, vec![true, false]);
        // A self-containing replacement is copied once.
        let x = expand("ab ab", 0, &[e(None, "ab", "abab"), e(None, "ab", "abab")]);
        assert_eq!(x.text, "abab abab");
    }

    #[test]
    fn from_skips_a_prefix() {
        let t = "@a @b see https://t.co/A";
        let x = expand(t, 6, &[e(Some((10, 24)), "https://t.co/A", "L")]);
        assert_eq!(x.text, "see L");
    }

    #[test]
    fn a_raised_stop_copies_the_rest_unchanged() {
        let t = "x ".repeat(1000);
        let edits: Vec<Edit> = (0..1000u64)
            .map(|i| e(Some((2 * i, 2 * i + 1)), "x", "y"))
            .collect();
        let cancel = Arc::new(AtomicBool::new(true));
        let x = {
            let _stop = Stop::enter(Instant::now() + std::time::Duration::from_secs(60), cancel);
            expand(&t, 0, &edits)
        };
        assert!(x.stopped);
        assert_eq!(x.applied.iter().filter(|a| **a).count(), CHECK_EVERY - 1);
        assert_eq!(x.text.len(), t.len());
        assert_eq!(
            &x.text[2 * (CHECK_EVERY - 1)..],
            &t[2 * (CHECK_EVERY - 1)..]
        );
        // The signal ends with its scope.
        assert!(!Stop::requested());
        assert!(!expand(&t, 0, &edits).stopped);
    }
}
