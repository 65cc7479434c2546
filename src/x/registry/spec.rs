//! The shape of a tool's static description ([`Spec`]): its cursor
//! scope, its plain HTTP routes with their query parameters, the upstream
//! paths it reads, and the `const fn` helpers the registry's `SPECS` are
//! written with.

use std::time::Duration;

use serde_json::Value;

use crate::x::args::Prop;

/// What the scope of a tool's cursors is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorScope {
    /// The account (lower-cased handle).
    Account,
    /// The search: effective feed plus a hash of the query.
    Query,
    /// The post id.
    Post,
}

/// One plain HTTP route of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The OpenAPI path template: `/`-separated segments, each a literal
    /// or `{handle}` / `{id}` (an X handle that is not a reserved name; a
    /// post id).
    pub template: &'static str,
    /// The `handle` argument when the path has no `{handle}` (`i` for
    /// `/i/status/{id}`).
    pub fixed_handle: Option<&'static str>,
    /// Query parameters the route takes (the tool's arguments besides the
    /// path's, plus `format`).
    pub params: &'static [&'static str],
    /// A query parameter the route requires, with an example request for
    /// the refusal.
    pub required: Option<(&'static str, &'static str)>,
    /// Arguments the route sets itself (`feed=media` for
    /// `/{handle}/media`); not query parameters of the route.
    pub fixed: &'static [(&'static str, &'static str)],
}

impl Route {
    /// Every query parameter the route takes: the required one first,
    /// then [`Route::params`].
    pub fn query_params(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.required
            .map(|(p, _)| p)
            .into_iter()
            .chain(self.params.iter().copied())
    }
}

/// One upstream path a tool reads, and how long its answers stay fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamPath {
    /// `/`-separated segments, each a literal or a `{placeholder}` (any
    /// non-empty segment); the query is not part of it.
    pub template: &'static str,
    /// Time to live of its answers in the upstream cache.
    pub ttl: Duration,
    /// The number of `/` in `template`: a path with another number cannot
    /// match it (counted once, at compile time).
    pub slashes: usize,
}

/// The static description of one tool.
pub struct Spec {
    /// Tool name (also its metric label).
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// A few words for the server `instructions` tool list.
    pub summary: &'static str,
    /// Argument table (generates the `inputSchema`).
    pub props: &'static [Prop],
    /// Required arguments.
    pub required: &'static [&'static str],
    /// Builds the `outputSchema`.
    pub output_schema: fn() -> Value,
    /// The tag its cursors carry.
    pub cursor_tag: &'static str,
    /// What its cursors are bound to.
    pub cursor_scope: CursorScope,
    /// Its plain HTTP routes.
    pub routes: &'static [Route],
    /// The upstream paths it reads.
    pub upstream: &'static [UpstreamPath],
}

/// The post routes' query parameters, in the order the continuation link
/// of a cut thread writes them (`cursor` last there).
pub const POST_ROUTE_PARAMS: &[&str] = &[
    "cursor",
    "thread",
    "replies",
    "max_posts",
    "context",
    "userinfo",
    "full",
    "lang",
    "format",
    "max_chars",
];
pub(super) const LIST_ROUTE_PARAMS: &[&str] =
    &["page", "limit", "cursor", "full", "format", "max_chars"];
pub(super) const PROFILE_ROUTE_PARAMS: &[&str] = &[
    "feed",
    "with_replies",
    "since",
    "page",
    "limit",
    "cursor",
    "full",
    "format",
    "max_chars",
];
const FEED_ROUTE_PARAMS: &[&str] = &[
    "since",
    "page",
    "limit",
    "cursor",
    "full",
    "format",
    "max_chars",
];
pub(super) const SEARCH_ROUTE_PARAMS: &[&str] = &[
    "q",
    "feed",
    "page",
    "limit",
    "cursor",
    "full",
    "format",
    "max_chars",
];

pub(super) const fn route(template: &'static str, params: &'static [&'static str]) -> Route {
    Route {
        template,
        fixed_handle: None,
        params,
        required: None,
        fixed: &[],
    }
}

/// A profile route of one feed: `/{handle}/media`, `/{handle}/articles`.
pub(super) const fn feed_route(
    template: &'static str,
    fixed: &'static [(&'static str, &'static str)],
) -> Route {
    Route {
        template,
        fixed_handle: None,
        params: FEED_ROUTE_PARAMS,
        required: None,
        fixed,
    }
}

pub(super) const fn upstream(template: &'static str, ttl: Duration) -> UpstreamPath {
    UpstreamPath {
        template,
        ttl,
        slashes: slashes(template),
    }
}

/// The number of `/` in `s`.
pub(super) const fn slashes(s: &str) -> usize {
    let (b, mut i, mut n) = (s.as_bytes(), 0, 0);
    while i < b.len() {
        if b[i] == b'/' {
            n += 1;
        }
        i += 1;
    }
    n
}
