//! The tool registry: every fact about a tool lives here, once.
//!
//! [`Tool`] names a tool; [`Tool::spec`] is its static description (name,
//! title, description, summary for the server instructions, argument
//! table, output schema, cursor tag and scope, REST routes, the upstream
//! paths it reads with their cache lifetimes). [`Call`] is a validated
//! call: one typed argument struct per tool. Everything else derives from
//! these: `tools/list`, `TOOL_NAMES`, the metric labels, the
//! `instructions`, the cursor kinds, the X routes, the first path segments
//! that are never handles ([`reserved_names`]), the most arguments any call
//! may carry ([`MOST_ARGUMENTS`]) and the upstream cache lifetimes. Every
//! match over tools is exhaustive.
//!
//! Adding a tool: a [`Tool`] variant (and its entry in [`Tool::ALL`] and
//! [`SPECS`], its argument table there or in `args` when shared), a
//! [`Call`] variant with its arms in [`Call::parse`], [`Call::tool`],
//! [`Call::canonical`], and in `tools.rs` `Call::run`; the run itself in
//! its own module, declared in `x/mod.rs`. That is 4 files of `src/`
//! (`tests/tool_cost.rs` keeps it so). The registry names no tool's run:
//! the runs name the registry.
//!
//! This file holds what names the tools ([`Tool`], [`SPECS`], [`Call`]);
//! the shape of a spec is in `spec.rs`, the output schemas it points at in
//! `output.rs`, the `instructions` in `instructions.rs`, and the matching
//! of paths against the templates (routes, reserved names, upstream
//! lifetimes) in `routes.rs`.

mod instructions;
mod output;
mod routes;
mod spec;

pub use instructions::INSTRUCTIONS;
pub use routes::{
    is_route_handle, match_template, reserved_names, ttl_for, upstream_ttl, Captures,
};
pub use spec::{CursorScope, Route, Spec, UpstreamPath, POST_ROUTE_PARAMS};

use serde_json::{Map, Value};

use super::args::BrowseArgs;
use super::args::{
    self, PostListArgs, ProfileArgs, SearchArgs, CONNECTION_PROPS, POST_LIST_PROPS, POST_PROPS,
    PROFILE_PROPS, SEARCH_PROPS,
};
use super::cache::{
    TTL_CONNECTIONS, TTL_CONVERSATION, TTL_POST, TTL_PROFILE, TTL_SEARCH, TTL_TIMELINE,
    TTL_TYPEAHEAD,
};
use super::schema;
use output::{post_list_output_schema, profile_output_schema, trends_output_schema};
use spec::{
    feed_route, route, upstream, LIST_ROUTE_PARAMS, PROFILE_ROUTE_PARAMS, SEARCH_ROUTE_PARAMS,
};

/// A tool. The discriminant indexes [`SPECS`] (and the metric rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `x_md_get_post`.
    GetPost,
    /// `x_md_get_profile`.
    GetProfile,
    /// `x_md_search_posts`.
    SearchPosts,
    /// `x_md_get_followers`.
    GetFollowers,
    /// `x_md_get_following`.
    GetFollowing,
    /// `x_md_get_quotes`.
    GetQuotes,
    /// `x_md_get_reposts`.
    GetReposts,
    /// `x_md_get_trends`.
    GetTrends,
}

/// The tools' descriptions, indexed by `Tool as usize`, in `tools/list`
/// order.
pub const SPECS: [Spec; Tool::COUNT] = [
    Spec {
        name: "x_md_get_post",
        title: "Get X post as Markdown",
        description: "Read one public X (Twitter) post as Markdown, by default with its thread: ancestors, the author's own continuation and up to 10 top direct replies. Identify the post with `url` (any x.com/twitter.com/mirror permalink), or with `handle` and `id` (id as a decimal string). Set thread=off for the post alone, replies=off to skip replies, full=true for dates and counts, format=json for the raw post objects. When FxTwitter is down the post comes alone from X's syndication endpoint (source: syndication), with a note saying what it lacks. Upstream problems (missing, protected, rate limited) come back as isError results naming the HTTP status, the code and any retry delay.",
        summary: "one post, optionally with its thread and quoted post",
        props: &POST_PROPS,
        required: &[],
        output_schema: schema::post_output_schema,
        cursor_tag: "thread",
        cursor_scope: CursorScope::Post,
        routes: &[
            route("/{handle}/status/{id}", POST_ROUTE_PARAMS),
            Route {
                template: "/i/status/{id}",
                fixed_handle: Some("i"),
                params: POST_ROUTE_PARAMS,
                required: None,
                fixed: &[],
            },
            Route {
                template: "/api/convert",
                fixed_handle: None,
                params: POST_ROUTE_PARAMS,
                required: Some((
                    "url",
                    "/api/convert?url=https://x.com/example_user/status/1800000000000000001",
                )),
                fixed: &[],
            },
        ],
        upstream: &[
            upstream("/2/status/{id}", TTL_POST),
            upstream("/2/thread/{id}", TTL_POST),
            upstream("/2/conversation/{id}", TTL_CONVERSATION),
            upstream("/tweet-result", TTL_POST),
        ],
    },
    Spec {
        name: "x_md_get_profile",
        title: "Get X profile and latest posts",
        description: "Read a public X profile (name, bio; counts and the account's About data (country, username changes) with full=true) and its latest original posts as Markdown, newest first, `limit` per page (max 20). feed=media lists its posts with photos or videos, feed=articles its X Articles; with_replies=true adds its replies (marked as replies); since (a Unix time) keeps only newer posts (none newer: an empty list with a note). Page with `page` (max 10) or, for deeper walks, pass the previous result's `next_cursor` as `cursor`.",
        summary: "one account, its posts, media or articles",
        props: &PROFILE_PROPS,
        required: &["handle"],
        output_schema: profile_output_schema,
        cursor_tag: "profile",
        cursor_scope: CursorScope::Account,
        routes: &[
            route("/{handle}", PROFILE_ROUTE_PARAMS),
            feed_route("/{handle}/media", &[("feed", "media")]),
            feed_route("/{handle}/articles", &[("feed", "articles")]),
        ],
        upstream: &[
            upstream("/2/profile/{handle}", TTL_PROFILE),
            upstream("/2/profile/{handle}/statuses", TTL_TIMELINE),
            upstream("/2/profile/{handle}/media", TTL_TIMELINE),
            upstream("/2/profile/{handle}/articles", TTL_TIMELINE),
            upstream("/2/profile/{handle}/about", TTL_PROFILE),
        ],
    },
    Spec {
        name: "x_md_search_posts",
        title: "Search X posts",
        description: "Search public X posts (or users with feed=users) and get one Markdown line per result with its link. `q` uses X search syntax (from:, lang:, quotes, OR). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        summary: "search",
        props: &SEARCH_PROPS,
        required: &["q"],
        output_schema: || schema::browse_output_schema("search", &["query", "feed"]),
        cursor_tag: "search",
        cursor_scope: CursorScope::Query,
        routes: &[route("/search", SEARCH_ROUTE_PARAMS)],
        upstream: &[
            upstream("/2/search", TTL_SEARCH),
            upstream("/2/typeahead", TTL_TYPEAHEAD),
        ],
    },
    Spec {
        name: "x_md_get_followers",
        title: "List an X account's followers",
        description: "List accounts that follow a public X account, one Markdown line per user (full=true adds follower counts and bios). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        summary: "accounts following an account",
        props: &CONNECTION_PROPS,
        required: &["handle"],
        output_schema: || schema::browse_output_schema("followers", &["handle", "users"]),
        cursor_tag: "followers",
        cursor_scope: CursorScope::Account,
        routes: &[route("/{handle}/followers", LIST_ROUTE_PARAMS)],
        upstream: &[
            upstream("/2/profile/{handle}", TTL_PROFILE),
            upstream("/2/profile/{handle}/followers", TTL_CONNECTIONS),
        ],
    },
    Spec {
        name: "x_md_get_following",
        title: "List accounts an X account follows",
        description: "List accounts that a public X account follows, one Markdown line per user (full=true adds follower counts and bios). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        summary: "accounts an account follows",
        props: &CONNECTION_PROPS,
        required: &["handle"],
        output_schema: || schema::browse_output_schema("following", &["handle", "users"]),
        cursor_tag: "following",
        cursor_scope: CursorScope::Account,
        routes: &[route("/{handle}/following", LIST_ROUTE_PARAMS)],
        upstream: &[
            upstream("/2/profile/{handle}", TTL_PROFILE),
            upstream("/2/profile/{handle}/following", TTL_CONNECTIONS),
        ],
    },
    Spec {
        name: "x_md_get_quotes",
        title: "List posts quoting an X post",
        description: "List public X posts that quote a post, newest first, one Markdown line per post with its link (full=true adds counts). Identify the post with `url`, or with `handle` and `id`. Page with `page` (max 10) or `cursor` (the previous `next_cursor`). A post nobody quoted gives an empty list, not an error.",
        summary: "posts quoting a post",
        props: &POST_LIST_PROPS,
        required: &[],
        output_schema: || post_list_output_schema("quotes", "posts"),
        cursor_tag: "quotes",
        cursor_scope: CursorScope::Post,
        routes: &[
            route("/{handle}/status/{id}/quotes", LIST_ROUTE_PARAMS),
            Route {
                template: "/i/status/{id}/quotes",
                fixed_handle: Some("i"),
                params: LIST_ROUTE_PARAMS,
                required: None,
                fixed: &[],
            },
        ],
        // FxTwitter runs X's Latest search `quoted_tweet_id:<id>`: it
        // changes as fast as a search.
        upstream: &[upstream("/2/status/{id}/quotes", TTL_SEARCH)],
    },
    Spec {
        name: "x_md_get_reposts",
        title: "List accounts that reposted an X post",
        description: "List accounts that reposted (retweeted) a public X post, one Markdown line per user (full=true adds follower counts and bios). Identify the post with `url`, or with `handle` and `id`. Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        summary: "accounts that reposted a post",
        props: &POST_LIST_PROPS,
        required: &[],
        output_schema: || post_list_output_schema("reposts", "users"),
        cursor_tag: "reposts",
        cursor_scope: CursorScope::Post,
        // X's own path for the reposters of a post.
        routes: &[
            route("/{handle}/status/{id}/retweets", LIST_ROUTE_PARAMS),
            Route {
                template: "/i/status/{id}/retweets",
                fixed_handle: Some("i"),
                params: LIST_ROUTE_PARAMS,
                required: None,
                fixed: &[],
            },
        ],
        upstream: &[upstream("/2/status/{id}/reposts", TTL_CONNECTIONS)],
    },
    Spec {
        name: "x_md_get_trends",
        title: "Get trending topics on X",
        description: "List what is trending on X now (its Explore page, via FxTwitter; up to 50 trends), one Markdown line per trend with its context when X gives one (full=true adds X's rank and related topics). Each trend's `name` is the `q` of x_md_search_posts that reads its posts; `url` is X's search for it. No trends is an empty list, not an error. Page with `page` or `cursor` (the previous `next_cursor`).",
        summary: "what is trending",
        // The list arguments, no handle.
        props: &[args::PAGE, args::LIMIT, args::CURSOR, args::FULL, args::MAX_CHARS],
        required: &[],
        output_schema: trends_output_schema,
        cursor_tag: "trends",
        // One list for everyone: the scope is the Explore timeline's kind.
        cursor_scope: CursorScope::Query,
        // X's own path of its trends.
        routes: &[route("/explore/tabs/trending", LIST_ROUTE_PARAMS)],
        // X's trends move about as fast as a search.
        upstream: &[upstream("/2/trends", TTL_SEARCH)],
    },
];

impl Tool {
    /// How many tools there are.
    pub const COUNT: usize = 8;

    /// Every tool, in `tools/list` order (`ALL[i] as usize == i`).
    pub const ALL: [Tool; Tool::COUNT] = [
        Tool::GetPost,
        Tool::GetProfile,
        Tool::SearchPosts,
        Tool::GetFollowers,
        Tool::GetFollowing,
        Tool::GetQuotes,
        Tool::GetReposts,
        Tool::GetTrends,
    ];

    /// Every tool's name, in `tools/list` order.
    pub const NAMES: [&'static str; Tool::COUNT] = {
        let mut out = [""; Tool::COUNT];
        let mut i = 0;
        while i < Tool::COUNT {
            out[i] = SPECS[i].name;
            i += 1;
        }
        out
    };

    /// The tool's description.
    pub const fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
    }

    /// The tool's name (also its metric label).
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The tool called `name`.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The tool whose cursors carry `tag`.
    pub fn from_cursor_tag(tag: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.spec().cursor_tag == tag)
    }

    /// The tool's `outputSchema`.
    pub fn output_schema(self) -> Value {
        (self.spec().output_schema)()
    }

    /// Whether the tool has a `format` argument (then `format` on its
    /// routes is that argument; otherwise it is the route's own
    /// `markdown`/`json` choice).
    pub fn takes_format(self) -> bool {
        self.spec().props.iter().any(|p| p.name == "format")
    }
}

/// Most arguments any tool takes: the longest argument table of
/// [`SPECS`] (derived, so a tool's table is declared once, in its spec).
/// An `arguments` object with more keys is refused by [`Call::parse`]
/// before any key is looked at, with one short message (the cost of a
/// refusal stays independent of how many keys were sent).
pub const MOST_ARGUMENTS: usize = {
    let mut most = 0;
    let mut i = 0;
    while i < SPECS.len() {
        if SPECS[i].props.len() > most {
            most = SPECS[i].props.len();
        }
        i += 1;
    }
    most
};

/// A validated call: one typed argument struct per tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `x_md_get_post`.
    GetPost(args::PostArgs),
    /// `x_md_get_profile`.
    GetProfile(ProfileArgs),
    /// `x_md_search_posts`.
    SearchPosts(SearchArgs),
    /// `x_md_get_followers`.
    GetFollowers(BrowseArgs),
    /// `x_md_get_following`.
    GetFollowing(BrowseArgs),
    /// `x_md_get_quotes`.
    GetQuotes(PostListArgs),
    /// `x_md_get_reposts`.
    GetReposts(PostListArgs),
    /// `x_md_get_trends`.
    GetTrends(BrowseArgs),
}

impl Call {
    /// Validates `arguments` (absent → `{}`) for `tool` and decodes them.
    ///
    /// # Errors
    ///
    /// The refusal text: which argument is wrong and the accepted form.
    pub fn parse(tool: Tool, arguments: Option<&Value>) -> Result<Call, String> {
        let props = tool.spec().props;
        args::refuse_oversized(arguments, props, MOST_ARGUMENTS)?;
        Ok(match tool {
            Tool::GetPost => Call::GetPost(args::parse_post(arguments)?),
            Tool::GetProfile => Call::GetProfile(args::parse_profile(arguments)?),
            Tool::SearchPosts => Call::SearchPosts(args::parse_search(arguments)?),
            Tool::GetFollowers => Call::GetFollowers(args::parse_list(arguments, props)?),
            Tool::GetFollowing => Call::GetFollowing(args::parse_list(arguments, props)?),
            Tool::GetQuotes => Call::GetQuotes(args::parse_post_list(arguments, props)?),
            Tool::GetReposts => Call::GetReposts(args::parse_post_list(arguments, props)?),
            Tool::GetTrends => {
                Call::GetTrends(args::validate(arguments, props, &[]).map(|o| args::list_args(&o))?)
            }
        })
    }

    /// The tool this call runs.
    pub fn tool(&self) -> Tool {
        match self {
            Call::GetPost(_) => Tool::GetPost,
            Call::GetProfile(_) => Tool::GetProfile,
            Call::SearchPosts(_) => Tool::SearchPosts,
            Call::GetFollowers(_) => Tool::GetFollowers,
            Call::GetFollowing(_) => Tool::GetFollowing,
            Call::GetQuotes(_) => Tool::GetQuotes,
            Call::GetReposts(_) => Tool::GetReposts,
            Call::GetTrends(_) => Tool::GetTrends,
        }
    }

    /// The arguments in their one spelling, as a JSON object: a post as
    /// `handle` and `id` (never `url`), handles lowercased without `@`,
    /// ids without leading zeros, integers as integers, and every value
    /// equal to its default left out. Equal calls give equal objects (the
    /// result cache key), and the continuation notes print it.
    pub fn canonical(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match self {
            Call::GetPost(a) => {
                m.insert("handle".into(), Value::from(a.target.handle.as_str()));
                m.insert("id".into(), Value::from(a.target.id.as_str()));
                args::put_enum(&mut m, "thread", a.thread, args::Thread::as_str);
                args::put_enum(&mut m, "replies", a.replies, args::Replies::as_str);
                if a.max_posts != args::MAX_MAX_POSTS as usize {
                    m.insert("max_posts".into(), Value::from(a.max_posts));
                }
                args::put_enum(&mut m, "format", a.format, args::Format::as_str);
                args::put_enum(&mut m, "userinfo", a.userinfo, args::UserInfo::as_str);
                args::put_enum(&mut m, "context", a.context, args::Context::as_str);
                if let Some(l) = &a.lang {
                    m.insert("lang".into(), Value::from(l.as_str()));
                }
                args::put_common(&mut m, a.cursor.as_deref(), a.full, a.max_chars);
            }
            Call::SearchPosts(a) => {
                m.insert("q".into(), Value::from(a.q.as_str()));
                args::put_enum(&mut m, "feed", a.feed, args::Feed::as_str);
                args::put_list(&mut m, &a.list);
            }
            Call::GetProfile(a) => a.canonical(&mut m),
            Call::GetFollowers(a) | Call::GetFollowing(a) => {
                args::put_list(&mut m, a);
            }
            Call::GetQuotes(a) | Call::GetReposts(a) => a.canonical(&mut m),
            Call::GetTrends(a) => args::put_list(&mut m, a),
        }
        m
    }

    /// The call's `max_chars`, when given.
    pub fn max_chars(&self) -> Option<usize> {
        match self {
            Call::GetPost(a) => a.max_chars,
            Call::SearchPosts(a) => a.list.max_chars,
            Call::GetProfile(a) => a.list.max_chars,
            Call::GetFollowers(a) | Call::GetFollowing(a) => a.max_chars,
            Call::GetQuotes(a) | Call::GetReposts(a) => a.list.max_chars,
            Call::GetTrends(a) => a.max_chars,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn most_arguments_is_the_longest_table() {
        // Every spec's table fits, and one of them is that long: the
        // derivation covers every spec (the former hand-kept list of
        // tables in `args` missed none only by review).
        for s in &SPECS {
            assert!(s.props.len() <= MOST_ARGUMENTS, "{}", s.name);
        }
        assert!(SPECS.iter().any(|s| s.props.len() == MOST_ARGUMENTS));
        // Today's value: x_md_get_post's 13 arguments.
        assert_eq!(MOST_ARGUMENTS, 13);
        assert_eq!(Tool::GetPost.spec().props.len(), 13);
        let over: Value = (0..=MOST_ARGUMENTS)
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect::<Map<_, _>>()
            .into();
        for t in Tool::ALL {
            let e = Call::parse(t, Some(&over)).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "`arguments` has {} properties; this tool takes at most {}: ",
                    MOST_ARGUMENTS + 1,
                    t.spec().props.len()
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn the_registry_is_consistent() {
        for (i, t) in Tool::ALL.into_iter().enumerate() {
            assert_eq!(t as usize, i, "ALL is in discriminant order");
            let s = t.spec();
            assert_eq!(Tool::from_name(s.name), Some(t));
            assert_eq!(
                Tool::from_cursor_tag(s.cursor_tag),
                Some(t),
                "unique cursor tag"
            );
            assert!(s.name.starts_with("x_md_"), "{}", s.name);
            assert!(!s.summary.is_empty() && !s.summary.contains(['(', ')']));
            assert!(INSTRUCTIONS.contains(&format!("{} ({})", s.name, s.summary)));
            // Every required argument is in the table.
            for r in s.required {
                assert!(s.props.iter().any(|p| p.name == *r), "{}: {r}", s.name);
            }
            // The output schema is built and declares its dialect.
            assert_eq!(t.output_schema()["$schema"], schema::DIALECT);
            // At least one route; each route's parameters are arguments of
            // the tool (or the route's `format`), and its path placeholders
            // are arguments the tool takes.
            assert!(!s.routes.is_empty(), "{} has no route", s.name);
            for r in s.routes {
                for p in r.query_params() {
                    assert!(
                        p == "format" || s.props.iter().any(|q| q.name == p),
                        "{}: route {} takes unknown `{p}`",
                        s.name,
                        r.template
                    );
                }
                for seg in r.template.split('/').filter(|g| g.starts_with('{')) {
                    let name = &seg[1..seg.len() - 1];
                    assert!(s.props.iter().any(|q| q.name == name), "{}", r.template);
                }
            }
            // At least one upstream path, each with a lifetime, each
            // lifetime agreeing with any other tool reading the same path.
            assert!(!s.upstream.is_empty(), "{} has no upstream path", s.name);
            for u in s.upstream {
                assert!(u.ttl > Duration::ZERO);
                let concrete = u.template.replace("{id}", "1").replace("{handle}", "a");
                assert_eq!(upstream_ttl(&concrete), Some(u.ttl), "{}", u.template);
            }
        }
        // No two tools share a route template.
        let mut templates: Vec<&str> = SPECS
            .iter()
            .flat_map(|s| s.routes.iter().map(|r| r.template))
            .collect();
        let n = templates.len();
        templates.sort_unstable();
        templates.dedup();
        assert_eq!(templates.len(), n);
    }
}
