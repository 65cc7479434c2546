//! The unit tests of the cursors: encoding and decoding, refusals of
//! altered or replayed cursors, keys, the timeline cursor, form encoding.

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
