//! deploy/nginx-fleet-cache.conf keeps FxTwitter's answers as long as xmd
//! does (issue 30 item 2): one fact, xmd's times to live per upstream path
//! (`registry::upstream_ttl`, through `registry::ttl_for`), and the proxy's copy
//! of it, checked here so they cannot drift.
//!
//! The oracle for the proxy's side is nginx's own location rule (exact `=`
//! first, then the longest prefix, which wins outright when `^~`; otherwise
//! the regex locations in file order, first match; otherwise that longest
//! prefix), run with a real regex engine on the file's own patterns, against
//! xmd's template matcher on xmd's side. Paths are generated: every upstream
//! path any tool declares, with generated handles, ids and queries, plus
//! arbitrary paths under /2/ (those must get xmd's default).

use std::time::Duration;

use proptest::prelude::*;
use regex::Regex;
use xmd::x::cache::TTL_OTHER;
use xmd::x::registry::ttl_for;
use xmd::x::registry::SPECS;

const CONF: &str = include_str!("../deploy/nginx-fleet-cache.conf");

/// The prefix xmd's `--syndication-url` carries through the proxy; the
/// proxy cuts it before asking X.
const SYNDICATION_PREFIX: &str = "/syndication";

#[derive(Debug)]
enum Kind {
    Exact,
    Prefix { no_regex: bool },
    Regex(Regex),
}

#[derive(Debug)]
struct Location {
    kind: Kind,
    pattern: String,
    /// `proxy_cache_valid 200 Ns` of the block, `None` if it stores nothing.
    ttl: Option<Duration>,
}

/// [`parse_locations`], once.
fn locations() -> &'static [Location] {
    static LOCATIONS: std::sync::LazyLock<Vec<Location>> =
        std::sync::LazyLock::new(parse_locations);
    &LOCATIONS
}

/// The `location` blocks of the file's one `server` block, in order. Every
/// block holds directives only (no nested braces); `#` comments are cut.
fn parse_locations() -> Vec<Location> {
    let text: String = CONF
        .lines()
        .map(|l| l.split('#').next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(text.matches("server {").count(), 1, "one server block");
    let block = Regex::new(r"location\s+(=|~|\^~)?\s*(\S+)\s*\{([^{}]*)\}").unwrap();
    let valid = Regex::new(r"^\s*proxy_cache_valid\s+(.*);\s*$").unwrap();
    let mut out = Vec::new();
    for c in block.captures_iter(&text) {
        let pattern = c[2].to_string();
        let kind = match c.get(1).map(|m| m.as_str()) {
            Some("=") => Kind::Exact,
            Some("~") => Kind::Regex(Regex::new(&pattern).unwrap()),
            Some("^~") => Kind::Prefix { no_regex: true },
            _ => Kind::Prefix { no_regex: false },
        };
        let mut ttl = None;
        for line in c[3].lines() {
            if let Some(v) = valid.captures(line) {
                let words: Vec<&str> = v[1].split_whitespace().collect();
                assert_eq!(words.len(), 2, "one status and one time: {line}");
                assert_eq!(words[0], "200", "only 200 is stored, as in xmd: {line}");
                let secs = words[1]
                    .strip_suffix('s')
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("seconds as Ns: {line}"));
                assert!(ttl.is_none(), "one proxy_cache_valid per location");
                ttl = Some(Duration::from_secs(secs));
            }
        }
        out.push(Location { kind, pattern, ttl });
    }
    out
}

/// nginx's choice of location for `uri` (a path without the query).
fn choose<'l>(locations: &'l [Location], uri: &str) -> &'l Location {
    if let Some(l) = locations
        .iter()
        .find(|l| matches!(l.kind, Kind::Exact) && l.pattern == uri)
    {
        return l;
    }
    let prefix = locations
        .iter()
        .filter(|l| matches!(l.kind, Kind::Prefix { .. }) && uri.starts_with(&l.pattern))
        .max_by_key(|l| l.pattern.len());
    if let Some(
        l @ Location {
            kind: Kind::Prefix { no_regex: true },
            ..
        },
    ) = prefix
    {
        return l;
    }
    locations
        .iter()
        .find(|l| matches!(&l.kind, Kind::Regex(r) if r.is_match(uri)))
        .or(prefix)
        .unwrap_or_else(|| panic!("no location for {uri}"))
}

/// The proxy's time to live for the request xmd sends for
/// `path_and_query` (its upstream path, without the syndication prefix).
fn proxy_ttl(locations: &[Location], path_and_query: &str, syndication: bool) -> Duration {
    let path = path_and_query.split('?').next().unwrap();
    let uri = if syndication {
        format!("{SYNDICATION_PREFIX}{path}")
    } else {
        path.to_string()
    };
    let l = choose(locations, &uri);
    l.ttl
        .unwrap_or_else(|| panic!("{uri} lands in `{}`, which stores nothing", l.pattern))
}

/// Every upstream template of every tool, placeholders and all.
fn templates() -> Vec<&'static str> {
    let mut t: Vec<&str> = SPECS
        .iter()
        .flat_map(|s| s.upstream.iter().map(|u| u.template))
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

fn fill(template: &str, handle: &str, id: &str) -> String {
    template.replace("{handle}", handle).replace("{id}", id)
}

/// The syndication endpoint's path (X's, not FxTwitter's).
fn is_syndication(template: &str) -> bool {
    !template.starts_with("/2/")
}

#[test]
fn the_file_has_every_location_it_needs() {
    let locs = locations();
    assert!(locs.len() >= 10, "{locs:?}");
    // Every declared path is cached for exactly xmd's time, by example.
    for t in templates() {
        let path = fill(t, "demo_author", "2087208847298015232");
        assert_eq!(
            proxy_ttl(locs, &path, is_syndication(t)),
            ttl_for(&path),
            "{t}"
        );
    }
    assert_eq!(proxy_ttl(locs, "/2/other", false), TTL_OTHER);
    // The directives the fleet relies on are there.
    for d in [
        "proxy_cache_lock on;",
        "proxy_set_header Host api.fxtwitter.com;",
        "proxy_ssl_server_name on;",
        "proxy_ssl_verify on;",
        "proxy_set_header Host cdn.syndication.twimg.com;",
        "proxy_ssl_name cdn.syndication.twimg.com;",
        "rewrite ^/syndication(/.*)$ $1 break;",
    ] {
        assert!(CONF.contains(d), "missing {d}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Generated requests of every tool's upstream paths: the proxy keeps
    /// each exactly as long as xmd does.
    #[test]
    fn every_tool_path_has_xmds_ttl(
        which in any::<prop::sample::Index>(),
        handle in "[A-Za-z0-9_]{1,15}",
        id in "[0-9]{1,19}",
        query in proptest::option::of("[a-z_]{1,8}=[A-Za-z0-9%+]{0,12}"),
    ) {
        let all = templates();
        let t = all[which.index(all.len())];
        let mut path = fill(t, &handle, &id);
        if let Some(q) = query {
            path = format!("{path}?{q}");
        }
        prop_assert_eq!(proxy_ttl(locations(), &path, is_syndication(t)), ttl_for(&path), "{}", path);
    }

    /// Arbitrary paths under /2/ (known words and not, trailing slashes):
    /// the proxy's time is xmd's, the default for a path no tool declares.
    #[test]
    fn any_path_has_xmds_ttl(
        segs in proptest::collection::vec(
            prop_oneof![
                Just("status".to_string()), Just("thread".to_string()),
                Just("conversation".to_string()), Just("profile".to_string()),
                Just("quotes".to_string()), Just("reposts".to_string()),
                Just("statuses".to_string()), Just("followers".to_string()),
                Just("following".to_string()), Just("search".to_string()),
                Just("typeahead".to_string()), Just("likes".to_string()),
                "[A-Za-z0-9_.~-]{1,10}",
            ],
            0..5,
        ),
        slash in any::<bool>(),
    ) {
        let mut path = format!("/2/{}", segs.join("/"));
        if slash && !path.ends_with('/') {
            path.push('/');
        }
        prop_assert_eq!(proxy_ttl(locations(), &path, false), ttl_for(&path), "{}", path);
    }
}
