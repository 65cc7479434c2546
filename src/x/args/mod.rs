//! Argument tables and strict validation. The same tables generate the
//! `inputSchema` (see `schema.rs`), so the advertised schema and the checks
//! cannot drift apart.

use super::url::{self, MAX_URL_CHARS};

mod options;
mod since;
mod typed;
mod validation;
pub use options::*;
pub use since::*;
pub use typed::*;
pub use validation::{as_int, refuse_oversized, validate, MAX_NAMED_UNKNOWN_KEYS};

/// Largest `limit` for browse tools. Default 20; larger values are refused
/// with "`limit` must be an integer from 1 to 20".
pub const MAX_LIMIT: i64 = 20;
/// Largest `page`. Default 10; larger values are refused.
pub const MAX_PAGE: i64 = 10;
pub use crate::x::upstream::MAX_QUERY_CHARS;
/// Smallest accepted `--max-result-chars` and `max_chars`: 2,000, room for
/// a post's head, a cut marker and the continuation note.
pub const MIN_RESULT_CHARS: usize = 2_000;
/// Largest accepted `--max-result-chars` and `max_chars`: 160,000. Even
/// text made only of characters that escape to six bytes then fits a
/// message (960,000 bytes plus the reserve); `structuredContent` is
/// measured on top.
pub const MAX_RESULT_CHARS_LIMIT: usize = 160_000;
/// Longest `cursor`, in characters. Default 1024.
pub const MAX_CURSOR_CHARS: usize = 1024;
/// Fewest and most posts `x_md_get_post` assembles. Default range 2–100.
pub const MIN_MAX_POSTS: i64 = 2;
/// See [`MIN_MAX_POSTS`].
pub const MAX_MAX_POSTS: i64 = 100;

/// How a property is typed and checked.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A string of `min..=max` characters, optionally with a format check
    /// (`pattern` is the equivalent ECMA-262 regex for the schema, `check`
    /// the Rust test, `what` the accepted form in words).
    Str {
        /// Fewest characters.
        min: usize,
        /// Most characters.
        max: usize,
        /// Regex for the schema.
        pattern: Option<&'static str>,
        /// Rust equivalent of `pattern`.
        check: Option<fn(&str) -> bool>,
        /// The accepted form, for the refusal message.
        what: &'static str,
    },
    /// One of a fixed set of strings; the first is the default.
    Enum(&'static [&'static str]),
    /// An integer in `min..=max`, with its default.
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
        /// Default.
        default: i64,
    },
    /// A boolean (default false).
    Bool,
    /// A Unix time as FxTwitter's `since` takes it (see `since.rs`): a
    /// JSON number ≥ 0, or a string JavaScript's `Number()` reads as a
    /// finite number ≥ 0.
    Since,
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Prop {
    /// Argument name.
    pub name: &'static str,
    /// Type and checks.
    pub kind: Kind,
    /// Description for the schema.
    pub description: &'static str,
}

fn handle_ok(s: &str) -> bool {
    url::is_handle(s.strip_prefix('@').unwrap_or(s))
}

fn has_non_space(s: &str) -> bool {
    s.chars().any(|c| !c.is_whitespace())
}

const HANDLE_PATTERN: &str = "^@?[A-Za-z0-9_]{1,20}$";
const HANDLE_WHAT: &str = "an X handle: 1 to 20 letters, digits or underscores, optionally starting with @ (e.g. \"example_user\")";

/// `handle` of a profile-like tool.
pub const HANDLE: Prop = Prop {
    name: "handle",
    kind: Kind::Str {
        min: 1,
        max: url::MAX_HANDLE_CHARS + 1,
        pattern: Some(HANDLE_PATTERN),
        check: Some(handle_ok),
        what: HANDLE_WHAT,
    },
    description: "X handle (screen name), with or without the leading @, e.g. \"example_user\".",
};
/// `page` of a browse tool.
pub const PAGE: Prop = Prop {
    name: "page",
    kind: Kind::Int { min: 1, max: MAX_PAGE, default: 1 },
    description: "Page number, 1 to 10 (default 1). Ignored when `cursor` is given; use `cursor` to go deeper.",
};
/// `limit` of a browse tool.
pub const LIMIT: Prop = Prop {
    name: "limit",
    kind: Kind::Int {
        min: 1,
        max: MAX_LIMIT,
        default: MAX_LIMIT,
    },
    description: "Items per page, 1 to 20 (default 20).",
};
/// `cursor` of a browse tool.
pub const CURSOR: Prop = Prop {
    name: "cursor",
    kind: Kind::Str { min: 1, max: MAX_CURSOR_CHARS, pattern: None, check: None, what: "the `next_cursor` string of a previous result" },
    description: "Opaque continuation: pass the `next_cursor` of the previous result unchanged to get the next page.",
};
/// `full` of every tool.
pub const FULL: Prop = Prop {
    name: "full",
    kind: Kind::Bool,
    description: "true adds counts and details to the Markdown (default false: compact; dates are always shown).",
};

/// `max_chars` of every tool: lowers this call's result budget.
pub const MAX_CHARS: Prop = Prop {
    name: "max_chars",
    kind: Kind::Int {
        min: MIN_RESULT_CHARS as i64,
        max: MAX_RESULT_CHARS_LIMIT as i64,
        default: crate::config::DEFAULT_MAX_RESULT_CHARS as i64,
    },
    description: "Most characters of text in this result, 2,000 to 160,000. It can only lower the server's budget (default 40,000); a longer result stops at a post or row boundary with a note and `next_cursor` to continue.",
};

/// `url` of a tool that names one post.
pub const POST_URL: Prop = Prop {
    name: "url",
    kind: Kind::Str { min: 1, max: MAX_URL_CHARS, pattern: None, check: None, what: "an X post permalink" },
    description: "Post link, e.g. https://x.com/example_user/status/1800000000000000001. twitter.com, mobile./www. hosts, fxtwitter.com/vxtwitter.com/fixupx.com mirrors, /i/status/<id>, /i/web/status/<id>, a missing scheme, /photo/N, /video/N, the post's lists (/quotes, /retweets, /likes), a language suffix, query and fragment are all accepted. Give either `url`, or `handle` and `id`, not both.",
};
/// `handle` (the author) of a tool that names one post, with `id`.
pub const POST_HANDLE: Prop = Prop {
    name: "handle",
    kind: Kind::Str {
        min: 1,
        max: url::MAX_HANDLE_CHARS + 1,
        pattern: Some(HANDLE_PATTERN),
        check: Some(handle_ok),
        what: HANDLE_WHAT,
    },
    description: "Author handle, used with `id` instead of `url`.",
};
/// `id` of a tool that names one post, with `handle`.
pub const POST_ID: Prop = Prop {
    name: "id",
    kind: Kind::Str { min: 1, max: 20, pattern: Some("^0*[1-9][0-9]*$"), check: Some(url::is_post_id), what: "a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0), e.g. \"1800000000000000001\" (send it quoted: JSON numbers cannot hold post ids exactly)" },
    description: "Post id as a decimal string (not a number), used with `handle` instead of `url`.",
};

/// `x_md_get_post` arguments.
pub const POST_PROPS: [Prop; 13] = [
    POST_URL,
    POST_HANDLE,
    POST_ID,
    Prop {
        name: "thread",
        kind: Kind::Enum(Thread::NAMES),
        description: "full (default): the post with its ancestors and the author's own continuation; off: the post alone; conversation: same as full.",
    },
    Prop {
        name: "replies",
        kind: Kind::Enum(Replies::NAMES),
        description: "Direct replies appended after the thread: top (default, up to 10 most liked), recent (up to 10 newest) or off. Ignored with thread=off or context=thread.",
    },
    Prop {
        name: "max_posts",
        kind: Kind::Int { min: MIN_MAX_POSTS, max: MAX_MAX_POSTS, default: MAX_MAX_POSTS },
        description: "Most posts to return, 2 to 100 (default 100). The post itself and its nearest ancestors are kept first.",
    },
    Prop {
        name: "format",
        kind: Kind::Enum(Format::NAMES),
        description: "markdown (default); obsidian (YAML front matter; each post keeps its Date line, no Source/Stats lines); json (the text is the raw posts as fenced JSON).",
    },
    FULL,
    Prop {
        name: "userinfo",
        kind: Kind::Enum(UserInfo::NAMES),
        description: "Author profile blocks: off (default), author (for the requested post's author) or all (for the first post of each author).",
    },
    Prop {
        name: "context",
        kind: Kind::Enum(Context::NAMES),
        description: "full (default): every post of the thread; thread: only the focal post and posts by its author (no replies).",
    },
    Prop {
        name: "cursor",
        kind: Kind::Str { min: 1, max: MAX_CURSOR_CHARS, pattern: None, check: None, what: "the `next_cursor` string of a previous result for this post" },
        description: "Continuation of a thread cut by the result budget: pass the previous result's `next_cursor` (with the same other arguments) to get the posts after the last one shown.",
    },
    LANG,
    MAX_CHARS,
];

/// `x_md_get_profile` arguments.
pub const PROFILE_PROPS: [Prop; 9] = [
    HANDLE,
    PROFILE_FEED,
    WITH_REPLIES,
    SINCE,
    PAGE,
    LIMIT,
    CURSOR,
    FULL,
    MAX_CHARS,
];
/// `x_md_get_followers` / `x_md_get_following` arguments.
pub const CONNECTION_PROPS: [Prop; 6] = [HANDLE, PAGE, LIMIT, CURSOR, FULL, MAX_CHARS];
/// Arguments of a list about one post (`x_md_get_quotes`,
/// `x_md_get_reposts`): the post, then the list arguments.
pub const POST_LIST_PROPS: [Prop; 8] = [
    POST_URL,
    POST_HANDLE,
    POST_ID,
    PAGE,
    LIMIT,
    CURSOR,
    FULL,
    MAX_CHARS,
];
/// `x_md_search_posts` arguments.
pub const SEARCH_PROPS: [Prop; 7] = [
    Prop {
        name: "q",
        kind: Kind::Str { min: 1, max: MAX_QUERY_CHARS, pattern: Some("\\S"), check: Some(has_non_space), what: "a search query of 1 to 500 characters with at least one non-space character" },
        description: "Search query in X syntax, e.g. \"rust lang:en\" or \"from:example_user cache\" (1 to 500 characters).",
    },
    Prop {
        name: "feed",
        kind: Kind::Enum(Feed::NAMES),
        description: "latest (default), top, photos (posts with photos), videos (posts with videos or GIFs), media (same as photos) or users (accounts matching the query, without counts, join dates or bios; one list, paged by limit, page and cursor).",
    },
    PAGE,
    LIMIT,
    CURSOR,
    FULL,
    MAX_CHARS,
];

/// Common misspellings that get a "did you mean" hint.
const HINTS: [(&str, &str); 6] = [
    ("query", "q"),
    ("search", "q"),
    ("max_thread_posts", "max_posts"),
    ("username", "handle"),
    ("screen_name", "handle"),
    ("status_id", "id"),
];

#[cfg(test)]
mod tests;
