//! Argument tables and strict validation. The same tables generate the
//! `inputSchema` (see `schema.rs`), so the advertised schema and the checks
//! cannot drift apart.

use serde_json::{Map, Value};

use super::url::{self, MAX_URL_CHARS};

mod options;
mod since;
mod typed;
pub use options::*;
pub use since::*;
pub use typed::*;

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

/// Refuses an `arguments` object of more than `most` keys (the registry's
/// `MOST_ARGUMENTS`, the longest property table of any tool) before any
/// key is looked at, with one short message naming `props` (the cost of a
/// refusal stays independent of how many keys were sent). Anything but an
/// object passes: [`validate`] refuses it.
///
/// # Errors
///
/// The refusal text.
pub fn refuse_oversized(args: Option<&Value>, props: &[Prop], most: usize) -> Result<(), String> {
    match args {
        Some(Value::Object(m)) if m.len() > most => Err(format!(
            "`arguments` has {} properties; this tool takes at most {}: {}",
            m.len(),
            props.len(),
            props.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        )),
        _ => Ok(()),
    }
}

/// Most unknown keys named in one refusal; the rest are counted ("and N
/// more").
///
/// Default is 10.
pub const MAX_NAMED_UNKNOWN_KEYS: usize = 10;

/// Longest echo of one unknown key, in characters. Default 40.
const MAX_KEY_ECHO_CHARS: usize = 40;

/// Checks `arguments` against a property table: object-ness, unknown
/// properties (at most [`MAX_NAMED_UNKNOWN_KEYS`] named), types, ranges,
/// patterns, then `required` (the number of keys is checked before, by
/// [`refuse_oversized`], in the registry's `Call::parse`). Every problem is reported, joined with "; ", and the
/// allowed names are listed once.
pub fn validate(
    args: Option<&Value>,
    props: &[Prop],
    required: &[&str],
) -> Result<Map<String, Value>, String> {
    let allowed: Vec<&str> = props.iter().map(|p| p.name).collect();
    let obj = match args {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(
                "`arguments` must be a JSON object, e.g. {\"handle\": \"example_user\"}".into(),
            )
        }
    };
    let obj = obj.cloned().unwrap_or_default();
    let mut problems = Vec::new();
    let unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        let named: Vec<String> = unknown
            .iter()
            .take(MAX_NAMED_UNKNOWN_KEYS)
            .map(|key| {
                let shown: String = key.chars().take(MAX_KEY_ECHO_CHARS).collect();
                let hint = HINTS
                    .iter()
                    .find(|(k, v)| k == key && allowed.contains(v))
                    .map(|(_, v)| format!(" (did you mean `{v}`?)"))
                    .unwrap_or_default();
                format!("`{shown}`{hint}")
            })
            .collect();
        let more = unknown.len() - named.len();
        let noun = if unknown.len() == 1 {
            "property"
        } else {
            "properties"
        };
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        problems.push(format!(
            "unknown {noun} {}{more}; allowed: {}",
            named.join(", "),
            allowed.join(", ")
        ));
    }
    for p in props {
        if let Some(v) = obj.get(p.name) {
            if let Err(m) = check(p, v) {
                problems.push(m);
            }
        }
    }
    for r in required {
        if !obj.contains_key(*r) {
            problems.push(format!("missing required property `{r}`"));
        }
    }
    if problems.is_empty() {
        Ok(obj)
    } else {
        Err(problems.join("; "))
    }
}

fn check(p: &Prop, v: &Value) -> Result<(), String> {
    let n = p.name;
    match p.kind {
        Kind::Since => parse_since(v)
            .map(|_| ())
            .ok_or_else(|| format!("`{n}` must be {SINCE_WHAT}")),
        Kind::Bool => v
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| format!("`{n}` must be a boolean (true or false)")),
        Kind::Int { min, max, .. } => match as_int(v) {
            Some(i) if (min..=max).contains(&i) => Ok(()),
            _ => Err(format!("`{n}` must be an integer from {min} to {max}")),
        },
        Kind::Enum(vals) => match v.as_str() {
            Some(s) if vals.contains(&s) => Ok(()),
            _ => Err(format!("`{n}` must be one of: {}", vals.join(", "))),
        },
        Kind::Str {
            min,
            max,
            check,
            what,
            ..
        } => {
            let s = match v {
                Value::String(s) => s,
                _ => return Err(format!("`{n}` must be {what}")),
            };
            let len = s.chars().count();
            if len < min || len > max {
                return Err(match check {
                    Some(_) => format!("`{n}` must be {what}"),
                    None => format!("`{n}` must be a string of {min} to {max} characters ({what})"),
                });
            }
            if check.is_some_and(|c| !c(s)) {
                return Err(format!("`{n}` must be {what}"));
            }
            Ok(())
        }
    }
}

/// An integer JSON value (including `20.0`, which JSON Schema counts as an
/// integer).
pub fn as_int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x::url::StatusRef;
    use serde_json::json;

    fn post(v: Value) -> Result<PostArgs, String> {
        parse_post(Some(&v))
    }

    #[test]
    fn empty_post_args_name_both_forms() {
        let e = post(json!({})).unwrap_err();
        assert!(e.starts_with("supply `url` (e.g."), "{e}");
        assert_eq!(parse_post(None).unwrap_err(), e);
        assert_eq!(post(json!({"handle": "a"})).unwrap_err(), e);
    }

    #[test]
    fn ambiguous_target() {
        let e =
            post(json!({"url": "https://x.com/a/status/1", "handle": "a", "id": "1"})).unwrap_err();
        assert_eq!(
            e,
            "ambiguous target: supply either `url`, or `handle` and `id`, not both"
        );
    }

    #[test]
    fn numeric_id_asks_for_string() {
        let e = post(json!({"handle": "a", "id": 1800000000000000001u64})).unwrap_err();
        assert!(
            e.starts_with(
                "`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0)"
            ),
            "{e}"
        );
        assert!(e.contains("send it quoted"), "{e}");
        let e = post(json!({"handle": "a", "id": "180000000000000000199"})).unwrap_err();
        assert!(
            e.starts_with(
                "`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0)"
            ),
            "{e}"
        );
    }

    #[test]
    fn defaults_and_handle_strip() {
        let a = post(json!({"handle": "@Example_User", "id": "18"})).unwrap();
        assert_eq!(
            a,
            PostArgs {
                target: StatusRef {
                    handle: "example_user".into(),
                    id: "18".into()
                },
                thread: Thread::Full,
                replies: Replies::Top,
                max_posts: 100,
                format: Format::Markdown,
                full: false,
                userinfo: UserInfo::Off,
                context: Context::Full,
                cursor: None,
                lang: None,
                max_chars: None,
            }
        );
        let a = post(
            json!({"url": "x.com/a/status/5", "thread": "off", "max_posts": 2.0, "format": "json"}),
        )
        .unwrap();
        assert_eq!(a.thread, Thread::Off);
        assert_eq!(a.max_posts, 2);
        assert_eq!(a.format, Format::Json);
    }

    #[test]
    fn a_list_about_one_post_takes_its_target_and_list_arguments() {
        const PROPS: [Prop; 8] = [
            POST_URL,
            POST_HANDLE,
            POST_ID,
            PAGE,
            LIMIT,
            CURSOR,
            FULL,
            MAX_CHARS,
        ];
        let a = parse_post_list(
            Some(&json!({"url": "https://x.com/Demo/status/0018", "limit": 5.0, "full": true})),
            &PROPS,
        )
        .unwrap();
        assert_eq!(
            a,
            PostListArgs {
                target: StatusRef {
                    handle: "demo".into(),
                    id: "18".into()
                },
                list: BrowseArgs {
                    handle: String::new(),
                    page: 1,
                    limit: 5,
                    cursor: None,
                    full: true,
                    max_chars: None
                }
            }
        );
        let mut m = Map::new();
        a.canonical(&mut m);
        assert_eq!(
            Value::Object(m),
            json!({"handle": "demo", "id": "18", "limit": 5, "full": true})
        );
        let b = parse_post_list(
            Some(&json!({"handle": "@demo", "id": "18", "limit": 5, "full": true})),
            &PROPS,
        )
        .unwrap();
        assert_eq!(a, b);
        assert!(parse_post_list(Some(&json!({"handle": "demo"})), &PROPS)
            .unwrap_err()
            .starts_with("supply `url`"));
        assert_eq!(
            parse_post_list(Some(&json!({"url": "x.com/a/status/1", "thread": "off"})), &PROPS).unwrap_err(),
            "unknown property `thread`; allowed: url, handle, id, page, limit, cursor, full, max_chars"
        );
    }

    #[test]
    fn c14_messages() {
        let e = validate(
            Some(&json!({"handle": "has spaces here"})),
            &PROFILE_PROPS,
            &["handle"],
        )
        .unwrap_err();
        assert_eq!(e, format!("`handle` must be {HANDLE_WHAT}"));
        let e = validate(Some(&json!({})), &PROFILE_PROPS, &["handle"]).unwrap_err();
        assert_eq!(e, "missing required property `handle`");
        let e = validate(
            Some(&json!({"query": "rust", "limit": 500})),
            &SEARCH_PROPS,
            &["q"],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "unknown property `query` (did you mean `q`?); allowed: q, feed, page, limit, cursor, full, max_chars; \
             `limit` must be an integer from 1 to 20; missing required property `q`"
        );
        let e = validate(
            Some(&json!({"handle": "example_user", "unknown_flag": true})),
            &PROFILE_PROPS,
            &["handle"],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "unknown property `unknown_flag`; allowed: handle, feed, with_replies, since, page, limit, cursor, full, max_chars"
        );
        let e = validate(
            Some(&json!("handle=example_user")),
            &PROFILE_PROPS,
            &["handle"],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "`arguments` must be a JSON object, e.g. {\"handle\": \"example_user\"}"
        );
    }

    #[test]
    fn ranges_types_and_lengths() {
        let e = validate(
            Some(&json!({"q": "x", "page": 11, "full": "yes", "feed": "LATEST"})),
            &SEARCH_PROPS,
            &["q"],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "`feed` must be one of: latest, top, photos, videos, media, users; `page` must be an integer from 1 to 10; \
             `full` must be a boolean (true or false)"
        );
        assert!(validate(Some(&json!({"q": "🦀".repeat(500)})), &SEARCH_PROPS, &["q"]).is_ok());
        let e = validate(Some(&json!({"q": "🦀".repeat(501)})), &SEARCH_PROPS, &["q"]).unwrap_err();
        assert!(
            e.starts_with("`q` must be a search query of 1 to 500"),
            "{e}"
        );
        let e = validate(Some(&json!({"q": "   "})), &SEARCH_PROPS, &["q"]).unwrap_err();
        assert!(e.starts_with("`q` must be a search query"), "{e}");
        let e = validate(
            Some(&json!({"handle": "a", "limit": 1.5})),
            &PROFILE_PROPS,
            &["handle"],
        )
        .unwrap_err();
        assert_eq!(e, "`limit` must be an integer from 1 to 20");
        let e = validate(
            Some(&json!({"handle": "a", "cursor": ""})),
            &PROFILE_PROPS,
            &["handle"],
        )
        .unwrap_err();
        assert!(
            e.starts_with("`cursor` must be a string of 1 to 1024 characters"),
            "{e}"
        );
        let e = validate(Some(&json!({"handle": null})), &PROFILE_PROPS, &["handle"]).unwrap_err();
        assert_eq!(e, format!("`handle` must be {HANDLE_WHAT}"));
    }
}
