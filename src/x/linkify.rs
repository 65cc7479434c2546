//! Where a URL or an @mention stands in text written by X users, so that
//! the running-text escapers ([`super::escape::escape_line`],
//! [`super::escape::escape_inline_text`]) write it exact: a URL as an
//! autolink `<…>`, a mention as `@handle` or a code span, never with a
//! backslash inside (issue 27 item 5).
//!
//! A URL is found as a GFM parser with the autolink extension finds one
//! (GFM spec §6.9, "Autolinks (extension)", as cmark-gfm and comrak
//! implement it): `http://` or `https://` (any case) not preceded by an
//! ASCII letter, up to whitespace, a control or `<`; then the trailing
//! `?` `!` `.` `,` `:` `*` `_` `~` `'` `"`, a `)` without its `(`, an
//! entity-shaped `&name;` (or a lone `;`) and a final U+2069 are not part
//! of it. Something must remain after the `//`.
//!
//! A mention is found as X counts one (twitter-text's `validMentionOrList`):
//! `@` then 1–20 of `[A-Za-z0-9_]`, not preceded by an ASCII letter or
//! digit or one of `_ ! # $ % & * @ ＠`, and not followed by another of
//! `[A-Za-z0-9_]` (a longer run is no handle), a letter (X: an accented
//! Latin letter), `@`, `＠` or `://`.

/// The end (exclusive byte index) of the URL starting at byte `i` of `s`,
/// or `None` when none starts there (see the module rules).
pub fn url_end(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    let rest = &b[i..];
    let scheme = if rest.len() > 8 && rest[..8].eq_ignore_ascii_case(b"https://") {
        8
    } else if rest.len() > 7 && rest[..7].eq_ignore_ascii_case(b"http://") {
        7
    } else {
        return None;
    };
    if i > 0 && b[i - 1].is_ascii_alphabetic() {
        return None;
    }
    let body = i + scheme;
    let ext = s[body..]
        .find(|c: char| c.is_whitespace() || c.is_control() || c == '<')
        .map_or(s.len(), |k| body + k);
    let (open, mut close) = b[i..ext]
        .iter()
        .fold((0usize, 0usize), |(o, c), x| match x {
            b'(' => (o + 1, c),
            b')' => (o, c + 1),
            _ => (o, c),
        });
    let mut end = ext;
    while end > body {
        match b[end - 1] {
            b'?' | b'!' | b'.' | b',' | b':' | b'*' | b'_' | b'~' | b'\'' | b'"' => end -= 1,
            b';' => {
                let mut k = end - 1;
                while k > body && b[k - 1].is_ascii_alphabetic() {
                    k -= 1;
                }
                if k < end - 1 && k > body && b[k - 1] == b'&' {
                    end = k - 1;
                } else {
                    end -= 1;
                }
            }
            b')' if close > open => {
                close -= 1;
                end -= 1;
            }
            _ => {
                if s[..end].ends_with('\u{2069}') {
                    end -= '\u{2069}'.len_utf8();
                }
                break;
            }
        }
    }
    (end > body).then_some(end)
}

/// The end (exclusive byte index) of the mention whose `@` is at byte `i`
/// of `s` (the handle is `s[i + 1..end]`), or `None` when X would not
/// count one there (see the module rules).
pub fn mention_end(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    let before = s[..i].chars().next_back();
    if before.is_some_and(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '!' | '#' | '$' | '%' | '&' | '*' | '@' | '＠')
    }) {
        return None;
    }
    let n = b[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    if !(1..=20).contains(&n) {
        return None;
    }
    let end = i + 1 + n;
    let after = &s[end..];
    if after
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '@' || c == '＠')
        || after.starts_with("://")
    {
        return None;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Option<&str> {
        let i = s.find("http").or_else(|| s.find("HTTP"))?;
        url_end(s, i).map(|e| &s[i..e])
    }

    #[test]
    fn url_extent_follows_gfm() {
        assert_eq!(
            url("see https://example.com/a_b_ and"),
            Some("https://example.com/a_b")
        );
        assert_eq!(url("(https://e.org/x_(y))."), Some("https://e.org/x_(y)"));
        assert_eq!(url("(https://e.org/x)"), Some("https://e.org/x"));
        assert_eq!(url("https://e.org/?q=1&amp;"), Some("https://e.org/?q=1"));
        assert_eq!(url("https://e.org/a;"), Some("https://e.org/a"));
        assert_eq!(url("https://e.org/a<b"), Some("https://e.org/a"));
        assert_eq!(url("\"https://e.org/é\"!?"), Some("https://e.org/é"));
        assert_eq!(url("HTTP://E.ORG"), Some("HTTP://E.ORG"));
        assert_eq!(url("xhttps://e.org"), None);
        assert_eq!(url("https://"), None);
        assert_eq!(url("https://._~ x"), None);
        assert_eq!(url("https://<e.org>"), None);
    }

    #[test]
    fn mentions_as_x_counts_them() {
        fn m(s: &str) -> Option<&str> {
            let i = s.find('@')?;
            mention_end(s, i).map(|e| &s[i + 1..e])
        }
        assert_eq!(m("ask @cobalt_wren_."), Some("cobalt_wren_"));
        assert_eq!(m("@a"), Some("a"));
        assert_eq!(m("(@a_b)"), Some("a_b"));
        assert_eq!(m("mail a@b.co"), None);
        assert_eq!(m("x_@ab"), None);
        assert_eq!(m("&@ab"), None);
        assert_eq!(m("@abcdefghijklmnopqrstu"), None);
        assert_eq!(m("@abcdefghijklmnopqrst"), Some("abcdefghijklmnopqrst"));
        assert_eq!(m("@abé"), None);
        assert_eq!(m("@ab@c"), None);
        assert_eq!(m("@ab://"), None);
        assert_eq!(m("@ @"), None);
    }
}
