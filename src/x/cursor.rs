//! Continuation cursors of the list tools (upstream.md §2.4), and the
//! query-string encoding used for upstream requests and continuation links.
//!
//! A cursor xmd hands out is `<kind>:<scope>:<payload>:<tag>`:
//! - `kind` names the tool family that issued it (`profile`, `followers`,
//!   `following`, `search`, …), so a cursor passed to another tool is
//!   refused;
//! - `scope` binds it to the account (lower-cased handle), the post id,
//!   or, for search, to `<feed>.<hash of the query>`;
//! - `payload` is the upstream position: the upstream cursor (possibly
//!   empty for the first upstream page), then `@<offset>` when the previous
//!   result was cut inside an upstream page (every list, the profile
//!   timeline included);
//! - `tag` is the HMAC-SHA256 ([`CursorKey`]) of the rest and of the
//!   arguments the cursor is bound to (the whole search query, a thread's
//!   shape), [`TAG_CHARS`] lower-case hex digits. Without the key
//!   no one can make a cursor the server accepts: an altered, truncated,
//!   made-up cursor, or one replayed with other arguments, is refused
//!   before any upstream request. The key comes from `--cursor-secret`
//!   (the replicas of a fleet share it and accept each other's cursors),
//!   else from the OS random source at start (cursors then last as long as
//!   the process).

use base64::Engine as _;
use ring::hmac;
use std::fmt::Write as _;

use crate::x::registry::{CursorScope, Tool};

/// Largest `@offset` accepted in a cursor. Default 1000 (an upstream page
/// never holds more than ~100 items); a larger offset is refused as a
/// forged cursor. It is also the most rows a list walk reads from one
/// upstream page (`browse::long_page_note` says so when a page holds
/// more), so every cursor xmd writes is one it reads back.
pub const MAX_CURSOR_OFFSET: usize = 1000;

pub use crate::x::upstream::MAX_UPSTREAM_CURSOR_BYTES;

/// Most row marks a list cursor carries. Default 40 (two upstream pages);
/// fewer when a long upstream cursor leaves less room under
/// [`crate::x::args::MAX_CURSOR_CHARS`]. A row whose mark is among them is
/// not served again.
pub const MAX_ROW_MARKS: usize = 40;

/// Characters of a cursor's tag: 64, the whole 32-byte HMAC-SHA256 in
/// lower-case hex (untruncated, so it is checked with `ring::hmac::verify`
/// in constant time; hex, so no character of it is Markdown punctuation
/// that a note would escape). A cursor whose last `:`-field is not exactly
/// this is refused.
pub const TAG_CHARS: usize = 64;

/// Shortest `--cursor-secret` accepted, in bytes: 32, the output size of
/// SHA-256 (RFC 2104 §3: a shorter key weakens the MAC). A shorter secret
/// is a usage error (exit 2).
pub const MIN_SECRET_BYTES: usize = crate::config::MIN_CURSOR_SECRET_BYTES;

/// Domain separation of the MAC input: a cursor tag is never the tag of
/// anything else made with the same key.
const MAC_CONTEXT: &[u8] = b"xmd cursor v1\0";

/// The HMAC-SHA256 key cursors are signed with.
#[derive(Clone)]
pub struct CursorKey(hmac::Key);

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

impl CursorKey {
    /// The key of `--cursor-secret`: every process given the same secret
    /// accepts the others' cursors.
    pub fn from_secret(secret: &[u8]) -> CursorKey {
        CursorKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// A key of 32 bytes from the OS random source (`getrandom`), for a
    /// server started without `--cursor-secret`: its cursors are refused by
    /// any other process, including itself after a restart.
    ///
    /// # Panics
    /// When the OS random source fails (no `getrandom` and no
    /// `/dev/urandom`), a server cannot sign anything safely.
    pub fn random() -> CursorKey {
        let rng = ring::rand::SystemRandom::new();
        CursorKey(
            hmac::Key::generate(hmac::HMAC_SHA256, &rng)
                .expect("the OS random source failed; cannot make a cursor key"),
        )
    }

    fn message(body: &str, bound: &str) -> Vec<u8> {
        let mut m = Vec::with_capacity(MAC_CONTEXT.len() + body.len() + bound.len() + 1);
        m.extend_from_slice(MAC_CONTEXT);
        m.extend_from_slice(body.as_bytes());
        m.push(0);
        m.extend_from_slice(bound.as_bytes());
        m
    }

    fn tag(&self, body: &str, bound: &str) -> String {
        let t = hmac::sign(&self.0, &Self::message(body, bound));
        let mut hex = String::with_capacity(TAG_CHARS);
        for b in t.as_ref() {
            let _ = write!(hex, "{b:02x}");
        }
        hex
    }

    fn verify(&self, body: &str, bound: &str, tag: &str) -> bool {
        // Only lower-case hex of the full length: one tag, one spelling.
        if tag.len() != TAG_CHARS || !tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return false;
        }
        let t: Vec<u8> = (0..TAG_CHARS / 2)
            .filter_map(|i| u8::from_str_radix(&tag[2 * i..2 * i + 2], 16).ok())
            .collect();
        hmac::verify(&self.0, &Self::message(body, bound), &t).is_ok()
    }
}

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

/// What a cursor is bound to: the scope written into it (for the message
/// when it is given to another account, post or search) and the
/// canonical arguments its tag also covers without writing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Written into the cursor: handle, post id or `<feed>.<query hash>`.
    pub scope: String,
    /// Covered by the tag only: the whole query, a thread's shape.
    pub args: String,
}

impl Bound {
    /// A scope that says it all (an account, a post's list).
    pub fn scope(scope: &str) -> Bound {
        Bound {
            scope: scope.to_string(),
            args: String::new(),
        }
    }
}

/// The scope of a search cursor: the effective feed and a 32-bit hash of
/// the query (for the message), bound by the tag to the whole query.
pub fn search_scope(feed: &str, query: &str) -> Bound {
    Bound {
        scope: format!("{feed}.{:08x}", fnv1a(query)),
        args: format!("q={query}"),
    }
}

/// The scope of an account cursor: the lower-cased handle.
pub fn handle_scope(handle: &str) -> Bound {
    Bound::scope(&handle.to_ascii_lowercase())
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

/// Writes an xmd cursor for `kind` and `scope`, bound to `bound` (the
/// canonical arguments the cursor is valid with beyond its scope, not
/// written into it; empty when the scope says it all).
pub fn encode(key: &CursorKey, kind: CursorKind, scope: &Bound, pos: &Position) -> String {
    let (scope, bound) = (scope.scope.as_str(), scope.args.as_str());
    let mut body = String::with_capacity(scope.len() + pos.upstream.len() + 160);
    for part in [kind.tag(), ":", scope, ":", pos.upstream.as_str()] {
        body.push_str(part);
    }
    if pos.offset > 0 {
        let _ = write!(body, "@{}", pos.offset);
    }
    // The newest marks that fit the cursor argument's length.
    let room = crate::x::args::MAX_CURSOR_CHARS.saturating_sub(body.len() + 1 + TAG_CHARS) / 7;
    let marks = &pos.seen[pos.seen.len().saturating_sub(room.min(MAX_ROW_MARKS))..];
    for (i, &m) in marks.iter().enumerate() {
        body.push(if i == 0 { '!' } else { '.' });
        push_mark(&mut body, m);
    }
    let tag = key.tag(&body, bound);
    body.push(':');
    body.push_str(&tag);
    body
}

/// Appends a row mark ([`row_mark`], 24 bits) as six lowercase hex
/// digits: `format!("{m:06x}")` without the formatting machinery (a
/// profile page's cursor carries up to [`MAX_ROW_MARKS`] of them).
fn push_mark(out: &mut String, m: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in [20, 16, 12, 8, 4, 0] {
        out.push(char::from(HEX[((m >> shift) & 0xf) as usize]));
    }
}

/// Reads an xmd cursor for `kind` and `scope` (with the arguments it
/// must be bound to), or explains (for the agent) why it cannot be used.
/// Never touches the upstream.
pub fn decode(
    key: &CursorKey,
    cursor: &str,
    kind: CursorKind,
    scope: &Bound,
) -> Result<Position, String> {
    let (scope, bound) = (scope.scope.as_str(), scope.args.as_str());
    // A cursor copied out of a `[Continue →]` link arrives percent-encoded.
    let cursor = &*unescape_cursor(cursor);
    const FIX: &str = "Pass the `next_cursor` of a previous result of this tool unchanged, or omit `cursor` to start at the first page.";
    let forged = || {
        format!("The cursor is not one this server issued for these arguments (altered, truncated, made up, given with other arguments than the call that returned it, or issued before a restart or by a server with another --cursor-secret). {FIX}")
    };
    let (body, mac) = cursor.rsplit_once(':').ok_or_else(forged)?;
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
    // Kind and scope above only choose the message; the tag decides.
    if !key.verify(body, bound, mac) {
        return Err(forged());
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

pub use crate::x::url::push_form_encoded;

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

/// Percent-decodes a cursor that arrived URL-encoded (as copied from a
/// `[Continue →]` link); any other string is returned as it is. A whole
/// continuation link (relative or absolute, or the Markdown link around
/// it) gives its `cursor` parameter: an xmd cursor never holds `?`.
pub fn unescape_cursor(c: &str) -> std::borrow::Cow<'_, str> {
    let c = match c.split_once('?') {
        Some((_, query)) => query
            .split(['&', ')', '#'])
            .find_map(|kv| kv.strip_prefix("cursor="))
            .unwrap_or(c),
        None => c,
    };
    if !c.contains('%') {
        return c.into();
    }
    let b = c.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |x: u8| (x as char).to_digit(16);
        match (b[i], b.get(i + 1).copied(), b.get(i + 2).copied()) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (x, _, _) => {
                out.push(x);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) => s.into(),
        Err(_) => c.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PAGE1_BOTTOM: &str = "DAAHCgABHPg3Rk_A_-8LAAIAAAATMjA4NjM1ODIwNjk3MTM5MjAwMAgAAwAAAAIAAA";

    proptest! {
        /// A mark is written as `{:06x}` writes it, for any mark a row or
        /// a decoded cursor can give (24 bits).
        #[test]
        fn a_mark_is_six_hex_digits_as_format_writes_them(
            id in ".{0,40}",
            m in 0u32..=0x00ff_ffff,
        ) {
            for m in [m, row_mark(&id)] {
                let mut out = String::new();
                push_mark(&mut out, m);
                prop_assert_eq!(out, format!("{m:06x}"));
            }
        }
    }

    #[test]
    fn thrift_round_trip() {
        let c = TimelineCursor::decode(PAGE1_BOTTOM).unwrap();
        assert_eq!(c.sort_index, "2086358206971392000");
        assert_eq!(c.direction, 2);
        assert_eq!(c.encode(), PAGE1_BOTTOM);
        assert_eq!(TimelineCursor::decode("DAAD"), None);
        assert_eq!(TimelineCursor::decode("!!"), None);
    }

    fn key() -> CursorKey {
        CursorKey::from_secret(b"a test secret of at least 32 bytes!!")
    }

    #[test]
    fn encode_decode_and_refusals() {
        let k = key();
        let pos = Position {
            upstream: "2087026217579466752|2087478950753226753".into(),
            offset: 3,
            seen: Vec::new(),
        };
        let demo = handle_scope("Demo_Author");
        let c = encode(&k, CursorKind::Followers, &demo, &pos);
        let (body, mac) = c.rsplit_once(':').unwrap();
        assert_eq!(
            body,
            "followers:demo_author:2087026217579466752|2087478950753226753@3"
        );
        assert_eq!(mac.len(), TAG_CHARS);
        // The tag is HMAC-SHA256 over the context, the body, NUL and the
        // bound arguments (none here), in lower-case hex.
        let want = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, b"a test secret of at least 32 bytes!!"),
            format!("xmd cursor v1\0{body}\0").as_bytes(),
        );
        let hex: String = want.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(mac, hex);
        assert_eq!(decode(&k, &c, CursorKind::Followers, &demo), Ok(pos));
        let e = decode(&k, &c, CursorKind::Following, &demo).unwrap_err();
        assert!(e.starts_with("This cursor was issued by x_md_get_followers and cannot be used with x_md_get_following."), "{e}");
        let e = decode(&k, &c, CursorKind::Followers, &handle_scope("someone")).unwrap_err();
        assert!(
            e.starts_with("This cursor belongs to @demo_author, not @someone."),
            "{e}"
        );
        let forged = "The cursor is not one this server issued for these arguments";
        let tampered = c.replace("@3", "@4");
        let e = decode(&k, &tampered, CursorKind::Followers, &demo).unwrap_err();
        assert!(e.starts_with(forged), "{e}");
        // The old unkeyed check (FNV-1a of the body) is no longer a tag.
        let fnv = format!("{body}:{:08x}", fnv1a(body));
        assert!(decode(&k, &fnv, CursorKind::Followers, &demo)
            .unwrap_err()
            .starts_with(forged));
        // The same tag in upper case, or with any other last digit, is
        // refused: one tag, one spelling.
        let upper = format!("{body}:{}", mac.to_ascii_uppercase());
        assert_ne!(upper, c);
        assert!(decode(&k, &upper, CursorKind::Followers, &demo).is_err());
        let (head, last) = c.split_at(c.len() - 1);
        for ch in "0123456789abcdefABCDEF".chars() {
            let other = format!("{head}{ch}");
            if ch.to_string() != last {
                assert!(
                    decode(&k, &other, CursorKind::Followers, &demo).is_err(),
                    "{other}"
                );
            }
        }
        // Another secret: refused.
        let other = CursorKey::from_secret(b"another secret of at least 32 bytes!");
        assert!(decode(&other, &c, CursorKind::Followers, &demo)
            .unwrap_err()
            .starts_with(forged));
        for junk in ["", "abc", "x:y", ":::", "profile:a::00000000"] {
            assert!(
                decode(&k, junk, CursorKind::Profile, &handle_scope("a")).is_err(),
                "{junk}"
            );
        }
        let latest = search_scope("latest", "q");
        let first = encode(
            &k,
            CursorKind::Search,
            &latest,
            &Position {
                upstream: String::new(),
                offset: 2,
                seen: Vec::new(),
            },
        );
        assert_eq!(
            decode(&k, &first, CursorKind::Search, &latest).unwrap(),
            Position {
                upstream: String::new(),
                offset: 2,
                seen: Vec::new()
            }
        );
        let e = decode(&k, &first, CursorKind::Search, &search_scope("top", "q")).unwrap_err();
        assert!(
            e.starts_with("This cursor belongs to a different search"),
            "{e}"
        );
        // Two queries whose written 32-bit hash is the same: the tag
        // covers the whole query, so the cursor of one is refused for the
        // other.
        let collide = Bound {
            scope: latest.scope.clone(),
            args: "q=another query".into(),
        };
        let e = decode(&k, &first, CursorKind::Search, &collide).unwrap_err();
        assert!(e.starts_with(forged), "{e}");
    }

    #[test]
    fn the_longest_cursor_fits_the_cursor_argument() {
        let k = key();
        let pos = Position {
            upstream: "A".repeat(MAX_UPSTREAM_CURSOR_BYTES),
            offset: MAX_CURSOR_OFFSET,
            seen: (0..MAX_ROW_MARKS as u32).collect(),
        };
        let scope = handle_scope(&"h".repeat(16));
        let c = encode(&k, CursorKind::Followers, &scope, &pos);
        assert!(c.len() <= crate::x::args::MAX_CURSOR_CHARS, "{}", c.len());
        let back = decode(&k, &c, CursorKind::Followers, &scope).unwrap();
        assert_eq!((back.upstream, back.offset), (pos.upstream, pos.offset));
    }

    #[test]
    fn random_keys_differ_and_a_secret_is_the_same_key() {
        let pos = Position {
            upstream: "c1".into(),
            ..Default::default()
        };
        let s = handle_scope("a");
        let c = encode(&CursorKey::random(), CursorKind::Profile, &s, &pos);
        assert!(decode(&CursorKey::random(), &c, CursorKind::Profile, &s).is_err());
        let c = encode(&key(), CursorKind::Profile, &s, &pos);
        assert_eq!(decode(&key(), &c, CursorKind::Profile, &s), Ok(pos));
    }

    /// One change to a valid cursor: a character replaced by another,
    /// removed, inserted, or the cursor cut short.
    #[derive(Debug, Clone)]
    enum Mutation {
        Replace(usize, char),
        Remove(usize),
        Insert(usize, char),
        Truncate(usize),
    }

    fn mutated(c: &str, m: &Mutation) -> Option<String> {
        let mut chars: Vec<char> = c.chars().collect();
        let n = chars.len();
        match *m {
            Mutation::Replace(i, ch) => {
                let i = i % n;
                if chars[i] == ch {
                    return None;
                }
                chars[i] = ch;
            }
            Mutation::Remove(i) => {
                chars.remove(i % n);
            }
            Mutation::Insert(i, ch) => chars.insert(i % (n + 1), ch),
            Mutation::Truncate(i) => chars.truncate(i % n),
        }
        Some(chars.into_iter().collect())
    }

    fn kinds() -> impl Strategy<Value = CursorKind> {
        prop::sample::select(vec![
            CursorKind::Profile,
            CursorKind::Followers,
            CursorKind::Following,
            CursorKind::Search,
            CursorKind::Thread,
            CursorKind(Tool::GetQuotes),
            CursorKind(Tool::GetReposts),
        ])
    }

    /// Characters a mutation writes: the cursor's own alphabet, its
    /// separators, percent signs and hex digits, and any character.
    fn chars() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select("AZaz09-_=+/|.~:@!%3aA".chars().collect::<Vec<_>>()),
            any::<char>(),
        ]
    }

    fn mutations() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (any::<usize>(), chars()).prop_map(|(i, c)| Mutation::Replace(i, c)),
            any::<usize>().prop_map(Mutation::Remove),
            (any::<usize>(), chars()).prop_map(|(i, c)| Mutation::Insert(i, c)),
            any::<usize>().prop_map(Mutation::Truncate),
        ]
    }

    fn positions() -> impl Strategy<Value = Position> {
        (
            "[A-Za-z0-9_|=+/.~-]{0,60}",
            0..=MAX_CURSOR_OFFSET,
            prop::collection::vec(0u32..0x0100_0000, 0..=MAX_ROW_MARKS),
        )
            .prop_map(move |(upstream, offset, seen)| Position {
                upstream,
                offset,
                seen,
            })
    }

    proptest! {
        /// Any one change of any character of a cursor xmd issued, of any
        /// kind and scope, is refused; the cursor itself reads back. On
        /// the old unkeyed check a made-up cursor with its FNV-1a passed
        /// (the second assertion), and so did these when the attacker
        /// recomputed it.
        #[test]
        fn every_change_to_a_cursor_is_refused(
            (kind, pos) in (kinds(), positions()),
            scope in "[a-z0-9_]{1,16}",
            args in "[ -~]{0,40}",
            m in mutations(),
        ) {
            let k = key();
            let bound = Bound { scope, args };
            let c = encode(&k, kind, &bound, &pos);
            prop_assert_eq!(decode(&k, &c, kind, &bound), Ok(pos.clone()));
            let (body, _) = c.rsplit_once(':').unwrap();
            let fnv = format!("{body}:{:08x}", fnv1a(body));
            prop_assert!(decode(&k, &fnv, kind, &bound).is_err());
            if let Some(bad) = mutated(&c, &m) {
                let e = decode(&k, &bad, kind, &bound);
                prop_assert!(e.is_err(), "{:?} accepted: {}", m, bad);
            }
        }

        /// A cursor given with other bound arguments (another query whose
        /// written hash is equal, another thread shape), or to a server
        /// with another key, is refused.
        #[test]
        fn a_cursor_is_bound_to_its_arguments_and_key(
            (kind, pos) in (kinds(), positions()),
            scope in "[a-z0-9_]{1,16}",
            args in "[ -~]{0,40}",
            other in "[ -~]{0,40}",
        ) {
            let k = key();
            let bound = Bound { scope: scope.clone(), args: args.clone() };
            let c = encode(&k, kind, &bound, &pos);
            if other != args {
                let replayed = Bound { scope, args: other };
                prop_assert!(decode(&k, &c, kind, &replayed).is_err());
            }
            let stranger = CursorKey::from_secret(b"the other fleet's secret, 32 bytes+");
            prop_assert!(decode(&stranger, &c, kind, &bound).is_err());
        }
    }

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("fixture cache"), "fixture+cache");
        assert_eq!(form_encode("a|b:@é"), "a%7Cb%3A%40%C3%A9");
    }
}
