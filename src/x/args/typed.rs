//! Typed arguments: the enums of the `Kind::Enum` arguments and one
//! struct per tool, decoded once from a validated argument object, and
//! their canonical form (what result-cache keys and continuation notes
//! are built from).

use serde_json::{Map, Value};

use super::{
    as_int, parse_since, since_text, validate, Prop, MAX_LIMIT, MAX_MAX_POSTS, MAX_PAGE,
    POST_PROPS, PROFILE_PROPS, SEARCH_PROPS,
};
use crate::x::render::choice::string_enum;
pub use crate::x::render::choice::{Format, UserInfo};
use crate::x::url::{self, StatusRef};

string_enum! {
    /// `thread` of `x_md_get_post`.
    Thread { /// Ancestors and the author's continuation (default).
    Full = "full", /// The post alone.
    Off = "off", /// Same as `full`.
    Conversation = "conversation" }
}
string_enum! {
    /// `replies` of `x_md_get_post`.
    Replies { /// Up to 10 most liked (default).
    Top = "top", /// Up to 10 newest.
    Recent = "recent", /// None.
    Off = "off" }
}
string_enum! {
    /// `context` of `x_md_get_post`.
    Context { /// Every post of the thread (default).
    Full = "full", /// Only the focal post and posts by its author.
    Thread = "thread" }
}
string_enum! {
    /// `feed` of `x_md_search_posts`.
    Feed { /// Newest first (default).
    Latest = "latest", /// Top posts.
    Top = "top", /// Posts with photos.
    Photos = "photos", /// Posts with videos or GIFs.
    Videos = "videos", /// Same as photos.
    Media = "media", /// Accounts matching the query.
    Users = "users" }
}

/// Decoded browse arguments (after `inputSchema` validation; built by
/// [`list_args`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowseArgs {
    /// The handle without `@` (empty for search).
    pub handle: String,
    /// `page`, 1–10 (default 1).
    pub page: usize,
    /// `limit`, 1–20 (default 20).
    pub limit: usize,
    /// `cursor`, when given (wins over `page`).
    pub cursor: Option<String>,
    /// `full`.
    pub full: bool,
    /// `max_chars`, when given (kept in continuation links).
    pub max_chars: Option<usize>,
}

string_enum! {
    /// `feed` of `x_md_get_profile`.
    ProfileFeed { /// The timeline (default).
    Posts = "posts", /// The Media tab.
    Media = "media", /// The X Articles.
    Articles = "articles" }
}

/// Validated `x_md_get_profile` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileArgs {
    /// `handle`, `page`, `limit`, `cursor`, `full`, `max_chars`.
    pub list: BrowseArgs,
    /// `feed`.
    pub feed: ProfileFeed,
    /// `with_replies` (feed=posts only).
    pub with_replies: bool,
    /// `since`, in its one spelling ([`since_text`]), when given.
    pub since: Option<String>,
}

impl ProfileArgs {
    /// `since` as a number (its spelling reads back exactly).
    pub fn since_value(&self) -> Option<f64> {
        self.since.as_deref().and_then(|s| s.parse::<f64>().ok())
    }

    /// The canonical form (see `registry::Call::canonical`).
    pub fn canonical(&self, m: &mut Map<String, Value>) {
        put_list(m, &self.list);
        put_enum(m, "feed", self.feed, ProfileFeed::as_str);
        if self.with_replies {
            m.insert("with_replies".into(), Value::Bool(true));
        }
        if let Some(s) = &self.since {
            m.insert("since".into(), Value::from(s.as_str()));
        }
    }
}

/// Validates and decodes `x_md_get_profile` arguments. `with_replies`
/// with another feed than `posts` is refused (only the timeline has the
/// switch upstream).
pub fn parse_profile(args: Option<&Value>) -> Result<ProfileArgs, String> {
    let obj = validate(args, &PROFILE_PROPS, &["handle"])?;
    let feed = enum_arg(&obj, "feed", ProfileFeed::parse);
    let with_replies = obj
        .get("with_replies")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if with_replies && feed != ProfileFeed::Posts {
        return Err(format!(
            "`with_replies` applies to feed=posts only, not feed={}",
            feed.as_str()
        ));
    }
    Ok(ProfileArgs {
        list: list_args(&obj),
        feed,
        with_replies,
        since: obj.get("since").and_then(parse_since).map(since_text),
    })
}

/// Validated `x_md_get_post` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostArgs {
    /// Post id and handle (from `url` or `handle`+`id`), in their one
    /// spelling (handle lowercased without `@`, id without leading zeros).
    pub target: StatusRef,
    /// `thread`.
    pub thread: Thread,
    /// `replies`.
    pub replies: Replies,
    /// `max_posts`.
    pub max_posts: usize,
    /// `format`.
    pub format: Format,
    /// `full`.
    pub full: bool,
    /// `userinfo`.
    pub userinfo: UserInfo,
    /// `context`.
    pub context: Context,
    /// `cursor`: where a thread cut by the result budget continues.
    pub cursor: Option<String>,
    /// `lang`, lower-cased, when given: translate the post into it.
    pub lang: Option<String>,
    /// `max_chars`, when given.
    pub max_chars: Option<usize>,
}

/// Validated `x_md_search_posts` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchArgs {
    /// `q` as given.
    pub q: String,
    /// `feed`.
    pub feed: Feed,
    /// `page`, `limit`, `cursor`, `full`, `max_chars` (`handle` empty).
    pub list: BrowseArgs,
}

fn enum_arg<E: Copy + Default>(
    obj: &Map<String, Value>,
    name: &str,
    parse: fn(&str) -> Option<E>,
) -> E {
    obj.get(name)
        .and_then(Value::as_str)
        .and_then(parse)
        .unwrap_or_default()
}

fn int_arg(obj: &Map<String, Value>, name: &str) -> Option<i64> {
    obj.get(name).and_then(as_int)
}

fn str_arg(obj: &Map<String, Value>, name: &str) -> Option<String> {
    obj.get(name).and_then(Value::as_str).map(str::to_string)
}

/// The post a call names: `url`, or `handle` and `id` (validated
/// `obj`), in its one spelling.
pub fn target(obj: &Map<String, Value>) -> Result<StatusRef, String> {
    let url = obj.get("url").and_then(Value::as_str);
    let handle = obj.get("handle").and_then(Value::as_str);
    let id = obj.get("id").and_then(Value::as_str);
    let t = match (url, handle, id) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err("ambiguous target: supply either `url`, or `handle` and `id`, not both".into())
        }
        (Some(u), None, None) => url::parse_status_url(u)?,
        (None, Some(h), Some(i)) => StatusRef { handle: h.to_string(), id: i.to_string() },
        _ => {
            return Err("supply `url` (e.g. \"https://x.com/example_user/status/1800000000000000001\"), or `handle` and `id` (e.g. \"example_user\" and \"1800000000000000001\")".into())
        }
    };
    Ok(StatusRef {
        handle: url::canonical_handle(&t.handle),
        id: url::canonical_id(&t.id),
    })
}

/// Validates and decodes `x_md_get_post` arguments.
pub fn parse_post(args: Option<&Value>) -> Result<PostArgs, String> {
    let obj = validate(args, &POST_PROPS, &[])?;
    Ok(PostArgs {
        target: target(&obj)?,
        thread: enum_arg(&obj, "thread", Thread::parse),
        replies: enum_arg(&obj, "replies", Replies::parse),
        max_posts: int_arg(&obj, "max_posts").unwrap_or(MAX_MAX_POSTS) as usize,
        format: enum_arg(&obj, "format", Format::parse),
        full: obj.get("full").and_then(Value::as_bool).unwrap_or(false),
        userinfo: enum_arg(&obj, "userinfo", UserInfo::parse),
        context: enum_arg(&obj, "context", Context::parse),
        cursor: str_arg(&obj, "cursor"),
        lang: str_arg(&obj, "lang").map(|l| l.to_ascii_lowercase()),
        max_chars: int_arg(&obj, "max_chars").map(|n| n as usize),
    })
}

/// Decodes the list arguments (`handle`, `page`, `limit`, `cursor`,
/// `full`, `max_chars`) of a validated argument object; `handle` in its
/// one spelling (empty when the tool takes none).
pub fn list_args(obj: &Map<String, Value>) -> BrowseArgs {
    let int = |k: &str, d: i64, max: i64| int_arg(obj, k).unwrap_or(d).clamp(1, max) as usize;
    BrowseArgs {
        handle: obj
            .get("handle")
            .and_then(Value::as_str)
            .map(url::canonical_handle)
            .unwrap_or_default(),
        page: int("page", 1, MAX_PAGE),
        limit: int("limit", MAX_LIMIT, MAX_LIMIT),
        cursor: str_arg(obj, "cursor"),
        full: obj.get("full").and_then(Value::as_bool).unwrap_or(false),
        max_chars: int_arg(obj, "max_chars").map(|n| n as usize),
    }
}

/// Validates and decodes the arguments of a list tool keyed by `handle`.
pub fn parse_list(args: Option<&Value>, props: &[Prop]) -> Result<BrowseArgs, String> {
    validate(args, props, &["handle"]).map(|obj| list_args(&obj))
}

/// Validates and decodes `x_md_search_posts` arguments.
pub fn parse_search(args: Option<&Value>) -> Result<SearchArgs, String> {
    let obj = validate(args, &SEARCH_PROPS, &["q"])?;
    Ok(SearchArgs {
        q: str_arg(&obj, "q").unwrap_or_default(),
        feed: enum_arg(&obj, "feed", Feed::parse),
        list: list_args(&obj),
    })
}

/// Validated arguments of a list tool about one post (the posts quoting
/// it, the accounts reposting it): the post, and the list arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostListArgs {
    /// The post, from `url` or `handle` + `id`, in its one spelling.
    pub target: StatusRef,
    /// `page`, `limit`, `cursor`, `full`, `max_chars` (`handle` empty).
    pub list: BrowseArgs,
}

impl PostListArgs {
    /// The canonical form (see `registry::Call::canonical`): the post as
    /// `handle` and `id`, then the list arguments that differ from their
    /// defaults.
    pub fn canonical(&self, m: &mut Map<String, Value>) {
        m.insert("handle".into(), Value::from(self.target.handle.as_str()));
        m.insert("id".into(), Value::from(self.target.id.as_str()));
        put_list(m, &self.list);
    }
}

/// Validates and decodes the arguments of a list tool about one post;
/// `props` is its table ([`POST_URL`], [`POST_HANDLE`], [`POST_ID`] and
/// list arguments).
pub fn parse_post_list(args: Option<&Value>, props: &[Prop]) -> Result<PostListArgs, String> {
    let obj = validate(args, props, &[])?;
    let target = target(&obj)?;
    let mut list = list_args(&obj);
    list.handle = String::new();
    Ok(PostListArgs { target, list })
}

/// Writes the list arguments in their canonical form (see
/// [`crate::x::registry::Call::canonical`]): values equal to their
/// default are left out.
pub fn put_list(m: &mut Map<String, Value>, a: &BrowseArgs) {
    if !a.handle.is_empty() {
        m.insert("handle".into(), Value::from(a.handle.as_str()));
    }
    if a.page != 1 {
        m.insert("page".into(), Value::from(a.page));
    }
    if a.limit != MAX_LIMIT as usize {
        m.insert("limit".into(), Value::from(a.limit));
    }
    put_common(m, a.cursor.as_deref(), a.full, a.max_chars);
}

/// Writes `cursor`, `full` and `max_chars` in their canonical form.
pub fn put_common(
    m: &mut Map<String, Value>,
    cursor: Option<&str>,
    full: bool,
    max_chars: Option<usize>,
) {
    if let Some(c) = cursor {
        m.insert("cursor".into(), Value::from(c));
    }
    if full {
        m.insert("full".into(), Value::Bool(true));
    }
    if let Some(n) = max_chars {
        m.insert("max_chars".into(), Value::from(n));
    }
}

/// Writes an enum argument unless it is the default.
pub fn put_enum<E: Copy + Default + PartialEq>(
    m: &mut Map<String, Value>,
    name: &str,
    v: E,
    s: fn(E) -> &'static str,
) {
    if v != E::default() {
        m.insert(name.into(), Value::from(s(v)));
    }
}
