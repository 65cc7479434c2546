//! Continuation cursors of the list tools (upstream.md §2.4), and the
//! query-string encoding used for upstream requests and continuation links.
//!
//! A cursor xmd hands out is `<kind>:<scope>:<payload>:<check>`:
//! - `kind` names the tool family that issued it (`profile`, `followers`,
//!   `following`, `search`), so a cursor passed to another tool is refused;
//! - `scope` binds it to the account (lower-cased handle) or, for search,
//!   to `<feed>.<hash of the query>`;
//! - `payload` is the upstream position: the upstream cursor (possibly
//!   empty for the first upstream page), then `@<offset>` when the previous
//!   result was cut inside an upstream page (every list, the profile
//!   timeline included);
//! - `check` is 8 hex digits of FNV-1a over the rest, so a hand-edited or
//!   made-up cursor is refused before any upstream request.

use base64::Engine as _;
use std::fmt::Write as _;

use crate::x::registry::{CursorScope, Tool};

/// Largest `@offset` accepted in a cursor. Default 1000 (an upstream page
/// never holds more than ~100 items); a larger offset is refused as a
/// forged cursor. It is also the most rows a list walk reads from one
/// upstream page (`browse::long_page_note` says so when a page holds
/// more), so every cursor xmd writes is one it reads back.
pub const MAX_CURSOR_OFFSET: usize = 1000;

/// Longest upstream cursor carried inside an xmd cursor, in bytes.
/// Default 900 (so the whole cursor fits the 1024-character `cursor`
/// argument); a longer one is refused as a forged cursor.
pub const MAX_UPSTREAM_CURSOR_BYTES: usize = 900;

/// Most row marks a list cursor carries. Default 40 (two upstream pages);
/// fewer when a long upstream cursor leaves less room under
/// [`crate::x::args::MAX_CURSOR_CHARS`]. A row whose mark is among them is
/// not served again.
pub const MAX_ROW_MARKS: usize = 40;

/// The mark of a served row in a cursor: 24 bits of FNV-1a over its id
/// (six hex digits; two different ids share a mark with probability
/// 1 in 16.7 million).
pub fn row_mark(id: &str) -> u32 {
    fnv1a(id) & 0x00ff_ffff
}

/// The tool a cursor belongs to: its tag and what its scope is bound to
/// come from the registry ([`crate::x::registry::Spec::cursor_tag`]), so
/// every tool has a kind of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorKind(pub Tool);

#[allow(non_upper_case_globals)]
impl CursorKind {
    /// `x_md_get_profile`.
    pub const Profile: CursorKind = CursorKind(Tool::GetProfile);
    /// `x_md_get_followers`.
    pub const Followers: CursorKind = CursorKind(Tool::GetFollowers);
    /// `x_md_get_following`.
    pub const Following: CursorKind = CursorKind(Tool::GetFollowing);
    /// `x_md_search_posts`.
    pub const Search: CursorKind = CursorKind(Tool::SearchPosts);
    /// `x_md_get_post`: the rest of a thread cut by the result budget
    /// (scope: the requested post id; payload: the last post shown and
    /// how many were shown).
    pub const Thread: CursorKind = CursorKind(Tool::GetPost);
}

impl CursorKind {
    /// The tag written into the cursor.
    pub fn tag(self) -> &'static str {
        self.0.spec().cursor_tag
    }

    /// The tool that issues cursors of this kind.
    pub fn tool(self) -> &'static str {
        self.0.name()
    }

    fn from_tag(t: &str) -> Option<CursorKind> {
        Tool::from_cursor_tag(t).map(CursorKind)
    }
}

/// A position in an upstream list: the upstream cursor (empty = first
/// page) and how many items of that upstream page were already served.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Position {
    /// The upstream cursor; empty for the first upstream page.
    pub upstream: String,
    /// Items of that upstream page already served.
    pub offset: usize,
    /// Marks ([`row_mark`]) of the rows served last, oldest first (at
    /// most [`MAX_ROW_MARKS`]): an upstream page that repeats one of them
    /// repeats rows already shown.
    pub seen: Vec<u32>,
}

/// FNV-1a, 32 bits.
fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The scope of a search cursor: effective feed plus a hash of the query.
pub fn search_scope(feed: &str, query: &str) -> String {
    format!("{feed}.{:08x}", fnv1a(query))
}

/// The scope of an account cursor: the lower-cased handle.
pub fn handle_scope(handle: &str) -> String {
    handle.to_ascii_lowercase()
}

/// True for an upstream cursor an xmd cursor can carry and read back: at
/// most [`MAX_UPSTREAM_CURSOR_BYTES`] bytes of base64 and URL-safe
/// punctuation (never `:`, `@` or `!`, the xmd cursor's separators). A
/// list walk ends at a `cursor.bottom` that is not one.
pub fn can_carry(s: &str) -> bool {
    s.len() <= MAX_UPSTREAM_CURSOR_BYTES
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=+/|.~".contains(&b))
}

/// Writes an xmd cursor.
pub fn encode(kind: CursorKind, scope: &str, pos: &Position) -> String {
    let mut body = String::with_capacity(scope.len() + pos.upstream.len() + 160);
    for part in [kind.tag(), ":", scope, ":", pos.upstream.as_str()] {
        body.push_str(part);
    }
    if pos.offset > 0 {
        let _ = write!(body, "@{}", pos.offset);
    }
    // The newest marks that fit the cursor argument's length.
    let room = crate::x::args::MAX_CURSOR_CHARS.saturating_sub(body.len() + 10) / 7;
    let marks = &pos.seen[pos.seen.len().saturating_sub(room.min(MAX_ROW_MARKS))..];
    for (i, m) in marks.iter().enumerate() {
        let _ = write!(body, "{}{m:06x}", if i == 0 { '!' } else { '.' });
    }
    let check = fnv1a(&body);
    let _ = write!(body, ":{check:08x}");
    body
}

/// Reads an xmd cursor for `kind` and `scope`, or explains (for the
/// agent) why it cannot be used. Never touches the upstream.
pub fn decode(cursor: &str, kind: CursorKind, scope: &str) -> Result<Position, String> {
    // A cursor copied out of a `[Continue →]` link arrives percent-encoded.
    let cursor = &*crate::x::budget::unescape_cursor(cursor);
    const FIX: &str = "Pass the `next_cursor` of a previous result of this tool unchanged, or omit `cursor` to start at the first page.";
    let forged =
        || format!("The cursor is not one xmd issued (altered, truncated or made up). {FIX}");
    let (body, check) = cursor.rsplit_once(':').ok_or_else(forged)?;
    if check.len() != 8 || u32::from_str_radix(check, 16).ok() != Some(fnv1a(body)) {
        return Err(forged());
    }
    let mut parts = body.splitn(3, ':');
    let (Some(tag), Some(got_scope), Some(payload)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(forged());
    };
    let got_kind = CursorKind::from_tag(tag).ok_or_else(forged)?;
    if got_kind != kind {
        return Err(format!(
            "This cursor was issued by {} and cannot be used with {}. {FIX}",
            got_kind.tool(),
            kind.tool()
        ));
    }
    if got_scope != scope {
        let what = match kind.0.spec().cursor_scope {
            CursorScope::Query => "a different search (query or feed)".to_string(),
            CursorScope::Post => format!("post {got_scope}, not post {scope}"),
            CursorScope::Account => format!("@{got_scope}, not @{scope}"),
        };
        return Err(format!("This cursor belongs to {what}. {FIX}"));
    }
    let (payload, seen) = match payload.rsplit_once('!') {
        Some((p, marks)) => {
            let seen: Option<Vec<u32>> = marks
                .split('.')
                .map(|m| {
                    (m.len() == 6)
                        .then(|| u32::from_str_radix(m, 16).ok())
                        .flatten()
                })
                .collect();
            match seen {
                Some(s) if s.len() <= MAX_ROW_MARKS => (p, s),
                _ => return Err(forged()),
            }
        }
        None => (payload, Vec::new()),
    };
    let (upstream, offset) = match payload.rsplit_once('@') {
        Some((u, n)) => {
            let n: usize = n
                .parse()
                .ok()
                .filter(|n| (1..=MAX_CURSOR_OFFSET).contains(n))
                .ok_or_else(forged)?;
            (u, n)
        }
        _ => (payload, 0),
    };
    if !can_carry(upstream) {
        return Err(forged());
    }
    Ok(Position {
        upstream: upstream.to_string(),
        offset,
        seen,
    })
}

/// Form-encodes a query component (`application/x-www-form-urlencoded`:
/// unreserved characters kept, space → `+`, everything else `%XX`).
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_form_encoded(&mut out, s);
    out
}

/// Appends [`form_encode`] of `s` to `out`.
pub fn push_form_encoded(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

/// The fields of an X profile-timeline cursor (a Thrift binary struct
/// `{7: {1: i64 issuedAt, 2: string sortIndex, 3: i32 direction}}`,
/// URL-safe base64 without padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineCursor {
    /// Field 1: when X issued the cursor (milliseconds).
    pub issued_at: i64,
    /// Field 2: the snowflake the page continues from.
    pub sort_index: String,
    /// Field 3: 1 = top (newer), 2 = bottom (older).
    pub direction: i32,
}

impl TimelineCursor {
    /// Encodes the cursor as X does.
    pub fn encode(&self) -> String {
        let mut b = vec![0x0c, 0x00, 0x07, 0x0a, 0x00, 0x01];
        b.extend_from_slice(&self.issued_at.to_be_bytes());
        b.extend_from_slice(&[0x0b, 0x00, 0x02]);
        b.extend_from_slice(&(self.sort_index.len() as u32).to_be_bytes());
        b.extend_from_slice(self.sort_index.as_bytes());
        b.extend_from_slice(&[0x08, 0x00, 0x03]);
        b.extend_from_slice(&self.direction.to_be_bytes());
        b.extend_from_slice(&[0x00, 0x00]);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
    }

    /// Decodes a cursor of exactly this shape; `None` for anything else.
    pub fn decode(s: &str) -> Option<TimelineCursor> {
        let b = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .ok()?;
        let take = |b: &[u8], at: usize, n: usize| b.get(at..at + n).map(<[u8]>::to_vec);
        if take(&b, 0, 6)? != [0x0c, 0x00, 0x07, 0x0a, 0x00, 0x01] {
            return None;
        }
        let issued_at = i64::from_be_bytes(take(&b, 6, 8)?.try_into().ok()?);
        if take(&b, 14, 3)? != [0x0b, 0x00, 0x02] {
            return None;
        }
        let len = u32::from_be_bytes(take(&b, 17, 4)?.try_into().ok()?) as usize;
        if len > 64 {
            return None;
        }
        let sort_index = String::from_utf8(take(&b, 21, len)?).ok()?;
        let at = 21 + len;
        if take(&b, at, 3)? != [0x08, 0x00, 0x03] {
            return None;
        }
        let direction = i32::from_be_bytes(take(&b, at + 3, 4)?.try_into().ok()?);
        if take(&b, at + 7, 2)? != [0x00, 0x00] || b.len() != at + 9 {
            return None;
        }
        Some(TimelineCursor {
            issued_at,
            sort_index,
            direction,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE1_BOTTOM: &str = "DAAHCgABHPg3Rk_A_-8LAAIAAAATMjA4NjM1ODIwNjk3MTM5MjAwMAgAAwAAAAIAAA";

    #[test]
    fn thrift_round_trip() {
        let c = TimelineCursor::decode(PAGE1_BOTTOM).unwrap();
        assert_eq!(c.sort_index, "2086358206971392000");
        assert_eq!(c.direction, 2);
        assert_eq!(c.encode(), PAGE1_BOTTOM);
        assert_eq!(TimelineCursor::decode("DAAD"), None);
        assert_eq!(TimelineCursor::decode("!!"), None);
    }

    #[test]
    fn encode_decode_and_refusals() {
        let pos = Position {
            upstream: "2087026217579466752|2087478950753226753".into(),
            offset: 3,
            seen: Vec::new(),
        };
        let c = encode(CursorKind::Followers, "demo_author", &pos);
        assert!(c.starts_with("followers:demo_author:2087026217579466752|2087478950753226753@3:"));
        assert_eq!(decode(&c, CursorKind::Followers, "demo_author"), Ok(pos));
        let e = decode(&c, CursorKind::Following, "demo_author").unwrap_err();
        assert!(e.starts_with("This cursor was issued by x_md_get_followers and cannot be used with x_md_get_following."), "{e}");
        let e = decode(&c, CursorKind::Followers, "someone").unwrap_err();
        assert!(
            e.starts_with("This cursor belongs to @demo_author, not @someone."),
            "{e}"
        );
        let tampered = c.replace("@3", "@4");
        let e = decode(&tampered, CursorKind::Followers, "demo_author").unwrap_err();
        assert!(e.starts_with("The cursor is not one xmd issued"), "{e}");
        for junk in ["", "abc", "x:y", ":::", "profile:a::00000000"] {
            assert!(decode(junk, CursorKind::Profile, "a").is_err(), "{junk}");
        }
        let first = encode(
            CursorKind::Search,
            &search_scope("latest", "q"),
            &Position {
                upstream: String::new(),
                offset: 2,
                seen: Vec::new(),
            },
        );
        assert_eq!(
            decode(&first, CursorKind::Search, &search_scope("latest", "q")).unwrap(),
            Position {
                upstream: String::new(),
                offset: 2,
                seen: Vec::new()
            }
        );
        let e = decode(&first, CursorKind::Search, &search_scope("top", "q")).unwrap_err();
        assert!(
            e.starts_with("This cursor belongs to a different search"),
            "{e}"
        );
    }

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("fixture cache"), "fixture+cache");
        assert_eq!(form_encode("a|b:@é"), "a%7Cb%3A%40%C3%A9");
    }
}
