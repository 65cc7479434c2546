//! Status URL parsing: every common way people paste a post link, reduced
//! to `(handle, id)`, without touching the network.
//!
//! Accepted: optional `http://`/`https://` scheme; hosts `x.com`,
//! `twitter.com` and the mirrors `fxtwitter.com`, `vxtwitter.com`,
//! `fixupx.com`, `fixvx.com`, each optionally under `www.`, `mobile.`, `m.`,
//! `d.` or `dl.`; paths `/<handle>/status/<id>` (or `statuses`),
//! `/i/status/<id>` and `/i/web/status/<id>`, then optionally `/photo/<n>` or
//! `/video/<n>` or one of the post's lists ([`SUB_PAGES`]: `/quotes`,
//! `/retweets`, `/retweets/with_comments`, `/likes`), then optionally a language segment such as `/en` or
//! `/pt-br`, then an optional trailing slash. Query and fragment are
//! ignored. Refused: user info or a port in the authority, other hosts,
//! profile URLs, ids that are not 1–[`MAX_ID_DIGITS`] digits.

/// Most digits a post id may have. Default 20 (the width of the largest
/// unsigned 64-bit snowflake); a longer id is refused before any upstream call.
pub const MAX_ID_DIGITS: usize = 20;

/// Longest accepted `url` argument, in characters. Default 2048; longer
/// values are refused as invalid arguments.
pub const MAX_URL_CHARS: usize = 2048;

/// Registrable domains whose status permalinks are accepted.
const HOSTS: [&str; 6] = [
    "x.com",
    "twitter.com",
    "fxtwitter.com",
    "vxtwitter.com",
    "fixupx.com",
    "fixvx.com",
];

/// Sub-domain labels accepted in front of [`HOSTS`].
const SUBDOMAINS: [&str; 5] = ["www", "mobile", "m", "d", "dl"];

/// The accepted-forms sentence used in every URL refusal.
pub const ACCEPTED_FORMS: &str = "`url` must be an X post permalink such as \
https://x.com/<handle>/status/<id> (twitter.com, mobile., www., fxtwitter.com, vxtwitter.com, \
fixupx.com, /i/status/<id> and /i/web/status/<id> also work; the id is 1 to 20 digits, at most 18446744073709551615, not 0)";

/// A parsed status link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRef {
    /// The handle as typed (without `@`); `i` for `/i/status` links.
    pub handle: String,
    /// The post id, decimal digits only.
    pub id: String,
}

impl StatusRef {
    /// `https://x.com/<handle>/status/<id>`.
    pub fn canonical_url(&self) -> String {
        format!("https://x.com/{}/status/{}", self.handle, self.id)
    }
}

/// Longest handle accepted. Default 20: X asks for at most 15 today, but
/// accounts made before 2009 keep handles of up to 20 and X serves them.
/// A longer handle is refused as an invalid argument (a 400 on the routes).
pub const MAX_HANDLE_CHARS: usize = 20;

/// True for 1–[`MAX_HANDLE_CHARS`] ASCII letters, digits or underscores
/// (compared without regard to case, see [`canonical_handle`]).
pub fn is_handle(s: &str) -> bool {
    (1..=MAX_HANDLE_CHARS).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// First path segments that are never handles besides the tools' routes
/// (compared case-insensitively, as X compares handles): this server's own
/// paths (`/healthz`, `/mcp`, `/metrics`: `/metrics` stays the metrics,
/// `/healthz/following` is a 404, not an account's followers) and X's `i`
/// (`/i/…` is X's, never an account). The first literal segment of every
/// tool route (`api`, `search`, `explore`, …) is reserved too, derived from
/// the tool registry: `registry::is_route_handle`.
pub const RESERVED_NAMES: [&str; 4] = ["healthz", "i", "mcp", "metrics"];

/// True for 1–[`MAX_ID_DIGITS`] ASCII digits (the spelling of an id; ids
/// the upstream sends are read with this tolerance).
pub fn is_id(s: &str) -> bool {
    (1..=MAX_ID_DIGITS).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// True for a post id a caller may ask for: [`is_id`] and a value that
/// fits an unsigned 64-bit snowflake (1 to 18446744073709551615; leading
/// zeros allowed). A larger number, or 0, names no post: it is refused
/// before any upstream call rather than asked for (a quotes search for it
/// would answer "no quotes").
pub fn is_post_id(s: &str) -> bool {
    is_id(s) && s.parse::<u64>().is_ok_and(|n| n > 0)
}

/// The one spelling of a handle every cache key and upstream path uses:
/// without a leading `@`, ASCII-lowercased (X compares handles without
/// regard to case, so `Tally_OWL` and `tally_owl` are one account).
pub fn canonical_handle(handle: &str) -> String {
    handle
        .strip_prefix('@')
        .unwrap_or(handle)
        .to_ascii_lowercase()
}

/// The one spelling of a post id: without leading zeros (`"0"` stays).
pub fn canonical_id(id: &str) -> String {
    let trimmed = id.trim_start_matches('0');
    if trimmed.is_empty() && !id.is_empty() {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

fn is_lang(s: &str) -> bool {
    let (main, region) = match s.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    (2..=3).contains(&main.len())
        && main.bytes().all(|b| b.is_ascii_alphabetic())
        && region.is_none_or(|r| {
            (2..=4).contains(&r.len()) && r.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

fn host_ok(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    if HOSTS.contains(&host) {
        return true;
    }
    match host.split_once('.') {
        Some((sub, rest)) => SUBDOMAINS.contains(&sub) && HOSTS.contains(&rest),
        None => false,
    }
}

/// True when `authority` (a link without `//`) starts with a URI scheme
/// other than a port: `javascript:…`, `data:…`, `mailto:…` (RFC 3986
/// §3.1: a letter, then letters, digits, `+`, `-`, `.`), where `x.com:8443`
/// is a host and port.
fn has_other_scheme(authority: &str) -> bool {
    let Some((scheme, after)) = authority.split_once(':') else {
        return false;
    };
    scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        && !after.bytes().all(|b| b.is_ascii_digit())
}

/// Parses a status link; the error is a sentence for the agent.
pub fn parse_status_url(input: &str) -> Result<StatusRef, String> {
    let s = input.trim();
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{ACCEPTED_FORMS}; it must not contain spaces"));
    }
    let lower = s.to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &s[8..]
    } else if lower.starts_with("http://") {
        &s[7..]
    } else if lower.contains("://") {
        return Err(format!(
            "{ACCEPTED_FORMS}; only http and https links are accepted"
        ));
    } else {
        s
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if rest.len() == s.len() && has_other_scheme(authority) {
        return Err(format!(
            "{ACCEPTED_FORMS}; only http and https links are accepted"
        ));
    }
    if authority.contains('@') || authority.contains(':') {
        return Err(format!(
            "{ACCEPTED_FORMS}; user names and ports are not accepted in the host"
        ));
    }
    let host = authority.to_ascii_lowercase();
    if !host_ok(&host) {
        return Err(format!(
            "{ACCEPTED_FORMS}; host `{}` is not an X host",
            short(authority)
        ));
    }
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let segs: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (handle, id, after) = match segs.as_slice() {
        ["i", "web", "status", id, after @ ..] => ("i", *id, after),
        [h, st, id, after @ ..]
            if st.eq_ignore_ascii_case("status") || st.eq_ignore_ascii_case("statuses") =>
        {
            (*h, *id, after)
        }
        _ => {
            return Err(format!(
                "{ACCEPTED_FORMS}; this link is not a post permalink"
            ))
        }
    };
    // Only the id names the post (X ignores the handle segment): one that
    // is not a handle is read as the handle-less form, `/i/status/<id>`.
    let handle = if is_handle(handle) { handle } else { "i" };
    if !is_post_id(id) {
        return Err(format!(
            "{ACCEPTED_FORMS}; `{}` is not a valid post id",
            short(id)
        ));
    }
    let mut after = after;
    let page_less = strip_sub_page(after);
    if page_less.len() < after.len() {
        after = page_less;
    } else if let [kind, n, more @ ..] = after {
        if matches!(*kind, "photo" | "video")
            && !n.is_empty()
            && n.len() <= 2
            && n.bytes().all(|b| b.is_ascii_digit())
            && *n != "0"
            && !n.starts_with('0')
        {
            after = more;
        }
    }
    match after {
        [] => {}
        [lang] if is_lang(lang) => {}
        _ => return Err(format!("{ACCEPTED_FORMS}; unexpected path after the id")),
    }
    Ok(StatusRef {
        handle: handle.to_string(),
        id: id.to_string(),
    })
}

/// The lists X shows under a post's permalink: `/quotes`, `/retweets`
/// (and its older `/retweets/with_comments`, the quotes) and `/likes`. A
/// link to one names the post, so a caller may paste
/// `https://x.com/<handle>/status/<id>/quotes` to `x_md_get_quotes` (it is
/// also this server's own route). Other pages (`/analytics`, …) stay
/// refused (upstream.md §C24).
pub const SUB_PAGES: [&str; 3] = ["quotes", "retweets", "likes"];

/// `after` without a leading [`SUB_PAGES`] segment (compared
/// case-insensitively, as `status` is).
fn strip_sub_page<'a, 'b>(after: &'a [&'b str]) -> &'a [&'b str] {
    match after {
        [page, sub, more @ ..]
            if page.eq_ignore_ascii_case("retweets")
                && sub.eq_ignore_ascii_case("with_comments") =>
        {
            more
        }
        [page, more @ ..] if SUB_PAGES.iter().any(|p| p.eq_ignore_ascii_case(page)) => more,
        _ => after,
    }
}

fn short(s: &str) -> String {
    let cut: String = s.chars().take(40).collect();
    if cut.len() < s.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Appends `s` form-encoded to `out` (`application/x-www-form-urlencoded`:
/// unreserved characters kept, space → `+`, everything else `%XX`).
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

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "1800000000000000001";

    #[test]
    fn c24_accepted_forms() {
        let cases = [
            (
                "https://x.com/example_user/status/1800000000000000001",
                "example_user",
            ),
            (
                "https://twitter.com/example_user/status/1800000000000000001?s=20&t=AbCdEf",
                "example_user",
            ),
            (
                "https://mobile.twitter.com/example_user/status/1800000000000000001/photo/1",
                "example_user",
            ),
            ("https://x.com/i/web/status/1800000000000000001", "i"),
            ("https://x.com/i/status/1800000000000000001", "i"),
            (
                "https://fxtwitter.com/example_user/status/1800000000000000001/en",
                "example_user",
            ),
            (
                "https://vxtwitter.com/example_user/statuses/1800000000000000001",
                "example_user",
            ),
            (
                "https://fixupx.com/example_user/status/1800000000000000001#m",
                "example_user",
            ),
            (
                "x.com/example_user/status/1800000000000000001",
                "example_user",
            ),
            (
                "https://www.x.com/Example_User/status/1800000000000000001/video/1",
                "Example_User",
            ),
            (
                "https://d.fxtwitter.com/example_user/status/1800000000000000001",
                "example_user",
            ),
            (
                "HTTPS://X.COM/example_user/status/1800000000000000001/",
                "example_user",
            ),
            (
                "https://mobile.x.com/example_user/status/1800000000000000001/photo/2/pt-br",
                "example_user",
            ),
            (
                "  https://x.com./example_user/status/1800000000000000001  ",
                "example_user",
            ),
        ];
        for (u, h) in cases {
            let r = parse_status_url(u).unwrap_or_else(|e| panic!("{u}: {e}"));
            assert_eq!(
                r,
                StatusRef {
                    handle: h.into(),
                    id: ID.into()
                },
                "{u}"
            );
        }
    }

    #[test]
    fn c24_refused_forms() {
        let cases = [
            ("https://x.com/example_user", "not a post permalink"),
            (
                "https://x.com/example_user/status/180000000000000000199",
                "not a valid post id",
            ),
            (
                "https://attacker.example/x.com/example_user/status/1800000000000000001",
                "not an X host",
            ),
            (
                "https://x.com@attacker.example/a/status/1",
                "user names and ports",
            ),
            ("https://x.com:8443/a/status/1", "user names and ports"),
            ("javascript://x.com/a/status/1", "only http and https"),
            // A scheme without `//` is a scheme, not a host and port.
            ("javascript:alert(1)", "only http and https"),
            ("data:text/html,x.com/a/status/1", "only http and https"),
            ("mailto:a@x.com", "only http and https"),
            ("x.com:8443/a/status/1", "user names and ports"),
            (
                "https://x.com/example_user/status/1800000000000000001/analytics",
                "unexpected path",
            ),
            (
                "https://x.com/example_user/status/1800000000000000001/photo/0",
                "unexpected path",
            ),
            (
                "https://x.com/example_user/status/12a4",
                "not a valid post id",
            ),
            ("https://nitter.net/example_user/status/1", "not an X host"),
            (
                "https://evil.x.com.attacker.example/a/status/1",
                "not an X host",
            ),
            ("https://x.com/a b/status/1", "must not contain spaces"),
        ];
        for (u, why) in cases {
            let e = parse_status_url(u).expect_err(u);
            assert!(e.starts_with(ACCEPTED_FORMS), "{u}: {e}");
            assert!(e.contains(why), "{u}: {e}");
        }
    }

    /// Issue 27 item 4: a handle of up to 20 characters is kept; any
    /// other handle segment names no one, and the id alone the post.
    #[test]
    fn any_handle_segment_gives_the_id() {
        for (seg, h) in [
            ("abcdefghij_klmnopqrs", "abcdefghij_klmnopqrs"),
            ("this_handle_is_too_long", "i"),
            ("cobalt_wren%5C_", "i"),
            ("cobalt_wren\\_", "i"),
            ("caf%C3%A9", "i"),
            ("a.b", "i"),
        ] {
            let u = format!("https://x.com/{seg}/status/{ID}");
            let r = parse_status_url(&u).unwrap_or_else(|e| panic!("{u}: {e}"));
            assert_eq!((r.handle.as_str(), r.id.as_str()), (h, ID), "{u}");
        }
    }

    #[test]
    fn canonical() {
        let r =
            parse_status_url("https://www.x.com/Example_User/status/1800000000000000001/video/1")
                .unwrap();
        assert_eq!(
            r.canonical_url(),
            "https://x.com/Example_User/status/1800000000000000001"
        );
    }
}
