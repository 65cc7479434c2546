//! Paths against the registry's templates: matching a route or upstream
//! path segment by segment, the first path segments that are never
//! handles, and the upstream cache lifetime of a path.

use std::time::Duration;

use super::spec::slashes;
use super::SPECS;
use crate::x::cache::TTL_OTHER;
use crate::x::url;

/// The values of a path's `{handle}` and `{id}` segments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Captures<'p> {
    /// The `{handle}` segment.
    pub handle: Option<&'p str>,
    /// The `{id}` segment.
    pub id: Option<&'p str>,
}

/// The `/`-separated segments of a path (`str::split('/')`, found by a
/// plain byte loop: the segments are short, and this runs on every
/// upstream answer stored).
struct Segments<'s> {
    rest: Option<&'s str>,
}

impl<'s> Segments<'s> {
    fn of(s: &'s str) -> Segments<'s> {
        Segments { rest: Some(s) }
    }
}

impl<'s> Iterator for Segments<'s> {
    type Item = &'s str;

    fn next(&mut self) -> Option<&'s str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b'/') {
            Some(at) => {
                self.rest = Some(&rest[at + 1..]);
                Some(&rest[..at])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Matches `path` (starting with `/`, no query) against `template`
/// segment by segment; a placeholder segment must pass `ok(name, segment)`.
pub fn match_template<'p>(
    template: &str,
    path: &'p str,
    ok: impl Fn(&str, &str) -> bool,
) -> Option<Captures<'p>> {
    let mut t = Segments::of(template.strip_prefix('/')?);
    let mut p = Segments::of(path.strip_prefix('/')?);
    let mut caps = Captures::default();
    loop {
        match (t.next(), p.next()) {
            (None, None) => return Some(caps),
            (Some(ts), Some(ps)) => {
                if let Some(name) = ts.strip_prefix('{').and_then(|n| n.strip_suffix('}')) {
                    if !ok(name, ps) {
                        return None;
                    }
                    match name {
                        "handle" => caps.handle = Some(ps),
                        "id" => caps.id = Some(ps),
                        _ => {}
                    }
                } else if ts != ps {
                    return None;
                }
            }
            _ => return None,
        }
    }
}

/// The first literal segment of a route template (`explore` of
/// `/explore/tabs/trending`), none for a template that opens with a
/// placeholder (`/{handle}`).
fn first_literal(template: &str) -> Option<&str> {
    let first = template.strip_prefix('/')?.split('/').next()?;
    (!first.is_empty() && !first.starts_with('{')).then_some(first)
}

/// Every first path segment that is never a handle: the first literal
/// segment of every tool route (so a new tool's route reserves its own,
/// here) and [`url::RESERVED_NAMES`] (the server's own paths and X's `i`).
fn reserved() -> impl Iterator<Item = &'static str> {
    SPECS
        .iter()
        .flat_map(|s| s.routes.iter().filter_map(|r| first_literal(r.template)))
        .chain(url::RESERVED_NAMES)
}

/// The names of [`reserved`], sorted, each once.
pub fn reserved_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = reserved().collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// True for a handle that can open an X route of this server
/// (`/<handle>/…`): a handle ([`url::is_handle`]) that is not one of
/// [`reserved_names`] (compared case-insensitively, as X compares
/// handles): `/search/followers` is a 404, not an account's followers.
pub fn is_route_handle(s: &str) -> bool {
    url::is_handle(s) && !reserved().any(|r| r.eq_ignore_ascii_case(s))
}

/// The time to live for an upstream path (and query): the lifetime the
/// tools give the path ([`upstream_ttl`]), or [`TTL_OTHER`] for a path no
/// tool declares. The cache stores by it ([`crate::x::cache::Cache::new`]).
pub fn ttl_for(path_and_query: &str) -> Duration {
    upstream_ttl(path_and_query).unwrap_or(TTL_OTHER)
}

/// How long an upstream answer for `path_and_query` stays fresh: the
/// lifetime of the first tool upstream path it matches, `None` when no
/// tool reads it.
pub fn upstream_ttl(path_and_query: &str) -> Option<Duration> {
    let end = path_and_query.bytes().position(|b| b == b'?');
    let path = &path_and_query[..end.unwrap_or(path_and_query.len())];
    let n = slashes(path);
    SPECS
        .iter()
        .flat_map(|s| s.upstream.iter())
        .filter(|u| u.slashes == n)
        .find(|u| match_template(u.template, path, |_, seg| !seg.is_empty()).is_some())
        .map(|u| u.ttl)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    #[test]
    fn ttls_by_path() {
        assert_eq!(ttl_for("/2/status/1"), TTL_POST);
        assert_eq!(ttl_for("/tweet-result?id=1&token=b&lang=en"), TTL_POST);
        assert_eq!(ttl_for("/tweet-results?id=1"), TTL_OTHER);
        assert_eq!(ttl_for("/2/profile/a"), TTL_PROFILE);
        assert_eq!(ttl_for("/2/profile/a/statuses?count=20"), TTL_TIMELINE);
        assert_eq!(ttl_for("/2/profile/a/following?count=20"), TTL_CONNECTIONS);
        assert_eq!(ttl_for("/2/search?q=a"), TTL_SEARCH);
        assert_eq!(ttl_for("/2/typeahead?q=a"), TTL_TYPEAHEAD);
        assert_eq!(ttl_for("/2/conversation/1?x"), TTL_CONVERSATION);
    }

    proptest! {
        /// The oracle is `str::split('/')`.
        #[test]
        fn segments_split_as_str_split(s in "[a-z/{}é]{0,12}") {
            let ours: Vec<&str> = Segments::of(&s).collect();
            let std: Vec<&str> = s.split('/').collect();
            prop_assert_eq!(ours, std);
        }
    }

    use super::*;
    use crate::x::cache::{
        TTL_CONNECTIONS, TTL_CONVERSATION, TTL_POST, TTL_PROFILE, TTL_SEARCH, TTL_TIMELINE,
        TTL_TYPEAHEAD,
    };

    #[test]
    fn reserved_names_are_the_routes_first_segments_and_the_servers() {
        assert_eq!(
            reserved_names(),
            ["api", "explore", "healthz", "i", "mcp", "metrics", "search"]
        );
        for r in reserved_names() {
            assert!(!is_route_handle(r), "{r}");
            assert!(!is_route_handle(&r.to_ascii_uppercase()), "{r}");
        }
        for h in ["explorer", "searches", "a", "demo_author", "API_"] {
            assert!(is_route_handle(h), "{h}");
        }
        assert!(!is_route_handle("a.b"));
        assert_eq!(first_literal("/{handle}/media"), None);
        assert_eq!(first_literal("/i/status/{id}"), Some("i"));
    }

    #[test]
    fn templates_match_segment_by_segment() {
        let any = |_: &str, s: &str| !s.is_empty();
        assert_eq!(
            match_template("/{handle}/status/{id}", "/a/status/5", any),
            Some(Captures {
                handle: Some("a"),
                id: Some("5")
            })
        );
        assert_eq!(
            match_template("/{handle}/status/{id}", "/a/status/5/x", any),
            None
        );
        assert_eq!(
            match_template("/{handle}/status/{id}", "/a/status/", any),
            None
        );
        assert_eq!(
            match_template("/search", "/search", any),
            Some(Captures::default())
        );
        assert_eq!(match_template("/search", "/searchx", any), None);
        assert_eq!(upstream_ttl("/2/status/1/quotes"), Some(TTL_SEARCH));
        assert_eq!(upstream_ttl("/2/status/1/likes"), None);
        assert_eq!(upstream_ttl("/2/search?q=a"), Some(TTL_SEARCH));
    }
}
