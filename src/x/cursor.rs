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
        // The message of [`Self::message`], fed in its parts (no copy).
        let mut mac = hmac::Context::with_key(&self.0);
        for part in [MAC_CONTEXT, body.as_bytes(), &[0], bound.as_bytes()] {
            mac.update(part);
        }
        let t = mac.sign();
        let mut hex = String::with_capacity(TAG_CHARS);
        crate::text::push_hex(&mut hex, t.as_ref());
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
    for shift in [20, 16, 12, 8, 4, 0] {
        out.push(char::from(
            crate::text::HEX_DIGITS[((m >> shift) & 0xf) as usize],
        ));
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
mod tests;
