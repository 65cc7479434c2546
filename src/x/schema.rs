//! Tool definitions for `tools/list`: names, titles, descriptions, JSON
//! Schema 2020-12 `inputSchema` (generated from the argument tables in
//! `args.rs`) and `outputSchema`, and the read-only annotations.
//!
//! No schema uses a top-level `oneOf`/`anyOf`/`allOf`: several model APIs
//! refuse tool schemas with top-level combinators. Cross-argument rules
//! (`url` vs `handle`+`id`) are stated in the descriptions and enforced by
//! `prepare`.

use serde_json::{json, Map, Value};

use super::args::{
    Kind, Prop, CONNECTION_PROPS, POST_PROPS, PROFILE_PROPS, SEARCH_PROPS, STATUS_LIST_PROPS,
};

/// The JSON Schema dialect every schema declares.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Static description of one tool.
pub struct ToolSpec {
    /// Tool name.
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Argument table.
    pub props: &'static [Prop],
    /// Required arguments.
    pub required: &'static [&'static str],
}

/// The seven tools, in `tools/list` order.
pub const SPECS: [ToolSpec; 7] = [
    ToolSpec {
        name: "x_md_get_post",
        title: "Get X post as Markdown",
        description: "Read one public X (Twitter) post as Markdown, by default with its thread: ancestors, the author's own continuation and up to 10 top direct replies. Identify the post with `url` (any x.com/twitter.com/mirror permalink), or with `handle` and `id` (id as a decimal string). Set thread=off for the post alone, replies=off to skip replies, full=true for dates and counts, format=json for the raw post objects. When FxTwitter is down the post comes alone from X's syndication endpoint (source: syndication), with a note saying what it lacks. Upstream problems (missing, protected, rate limited) come back as isError results naming the HTTP status, the code and any retry delay.",
        props: &POST_PROPS,
        required: &[],
    },
    ToolSpec {
        name: "x_md_get_profile",
        title: "Get X profile and latest posts",
        description: "Read a public X profile (name, bio, optional counts with full=true) and its latest original posts as Markdown, newest first, `limit` per page (max 20). Page with `page` (max 10) or, for deeper walks, pass the previous result's `next_cursor` as `cursor`.",
        props: &PROFILE_PROPS,
        required: &["handle"],
    },
    ToolSpec {
        name: "x_md_search_posts",
        title: "Search X posts",
        description: "Search public X posts (or users with feed=users) and get one Markdown line per result with its link. `q` uses X search syntax (from:, lang:, quotes, OR). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        props: &SEARCH_PROPS,
        required: &["q"],
    },
    ToolSpec {
        name: "x_md_get_followers",
        title: "List an X account's followers",
        description: "List accounts that follow a public X account, one Markdown line per user (full=true adds follower counts and bios). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        props: &CONNECTION_PROPS,
        required: &["handle"],
    },
    ToolSpec {
        name: "x_md_get_following",
        title: "List accounts an X account follows",
        description: "List accounts that a public X account follows, one Markdown line per user (full=true adds follower counts and bios). Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        props: &CONNECTION_PROPS,
        required: &["handle"],
    },
    ToolSpec {
        name: "x_md_get_quotes",
        title: "List posts quoting an X post",
        description: "List public X posts that quote a post, newest first, one Markdown line per post with its link (full=true adds counts). Identify the post with `url`, or with `handle` and `id`. Page with `page` (max 10) or `cursor` (the previous `next_cursor`). A post nobody quoted gives an empty list, not an error.",
        props: &STATUS_LIST_PROPS,
        required: &[],
    },
    ToolSpec {
        name: "x_md_get_reposts",
        title: "List accounts that reposted an X post",
        description: "List accounts that reposted (retweeted) a public X post, one Markdown line per user (full=true adds follower counts and bios). Identify the post with `url`, or with `handle` and `id`. Page with `page` (max 10) or `cursor` (the previous `next_cursor`).",
        props: &STATUS_LIST_PROPS,
        required: &[],
    },
];

/// The spec of a tool by name.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    SPECS.iter().find(|s| s.name == name)
}

fn prop_schema(p: &Prop) -> Value {
    let mut s = match p.kind {
        Kind::Str {
            min, max, pattern, ..
        } => {
            let mut s = json!({"type": "string", "minLength": min, "maxLength": max});
            if let Some(pat) = pattern {
                s["pattern"] = json!(pat);
            }
            s
        }
        Kind::Enum(vals) => json!({"type": "string", "enum": vals, "default": vals[0]}),
        Kind::Int { min, max, default } => {
            json!({"type": "integer", "minimum": min, "maximum": max, "default": default})
        }
        Kind::Bool => json!({"type": "boolean", "default": false}),
    };
    s["description"] = json!(p.description);
    s
}

/// The `inputSchema` generated from a spec.
pub fn input_schema(spec: &ToolSpec) -> Value {
    let props: Map<String, Value> = spec
        .props
        .iter()
        .map(|p| (p.name.to_string(), prop_schema(p)))
        .collect();
    // Owned values are moved in: `json!` would deep-copy an embedded
    // `Value` (it serializes it), and those copies set the heap's high
    // water mark when `tools/list` is first built.
    let mut schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "required": spec.required,
        "additionalProperties": false,
    });
    schema["properties"] = Value::Object(props);
    schema
}

fn defs() -> Value {
    json!({
        "count": {"type": ["integer", "null"], "minimum": 0},
        "user": {
            "type": "object",
            "description": "An FxTwitter APIUser as received (fields may be missing on partial users).",
            "properties": {
                "type": {"type": "string"},
                "id": {"type": "string"},
                "screen_name": {"type": "string"},
                "name": {"type": "string"},
                "url": {"type": "string"},
                "description": {"type": ["string", "null"]},
                "location": {"type": ["string", "null"]},
                "followers": {"$ref": "#/$defs/count"},
                "following": {"$ref": "#/$defs/count"},
                "likes": {"$ref": "#/$defs/count"},
                "statuses": {"$ref": "#/$defs/count"},
                "media_count": {"$ref": "#/$defs/count"},
                "protected": {"type": ["boolean", "null"]},
                "avatar_url": {"type": ["string", "null"]},
                "banner_url": {"type": ["string", "null"]},
                "joined": {"type": ["string", "null"]},
                "website": {"type": ["object", "null"]},
                "verification": {"type": ["object", "null"]}
            }
        },
        "status": {
            "type": "object",
            "description": "A normalised FxTwitter APITwitterStatus: every upstream field kept, plus `retweets` (= reposts), media items with `alt`, `duration_ms` and `variants`; `media` dropped when empty.",
            "required": ["type", "id", "text"],
            "properties": {
                "type": {"const": "status"},
                "id": {"type": "string", "pattern": "^[0-9]{1,20}$"},
                "url": {"type": "string"},
                "text": {"type": "string"},
                "author": {"$ref": "#/$defs/user"},
                "replies": {"$ref": "#/$defs/count"},
                "reposts": {"$ref": "#/$defs/count"},
                "retweets": {"$ref": "#/$defs/count"},
                "likes": {"$ref": "#/$defs/count"},
                "quotes": {"$ref": "#/$defs/count"},
                "bookmarks": {"$ref": "#/$defs/count"},
                "views": {"$ref": "#/$defs/count"},
                "created_at": {"type": ["string", "null"]},
                "created_timestamp": {"type": ["number", "null"]},
                "lang": {"type": ["string", "null"]},
                "possibly_sensitive": {"type": ["boolean", "null"]},
                "replying_to": {"type": ["object", "array", "null"]},
                "media": {"type": "object"},
                "quote": {"anyOf": [{"$ref": "#/$defs/status"}, {"$ref": "#/$defs/tombstone"}]},
                "poll": {"type": ["object", "null"]},
                "article": {"type": ["object", "null"]},
                "card": {"type": ["object", "null"]},
                "community_note": {"type": ["object", "null"]},
                "reposted_by": {"type": ["object", "null"]}
            }
        },
        "tombstone": {
            "type": "object",
            "description": "A deleted, suspended, private, blocked or otherwise unavailable post.",
            "required": ["type"],
            "properties": {
                "type": {"const": "tombstone"},
                "reason": {"type": "string"},
                "message": {"type": "string"},
                "id": {"type": "string", "pattern": "^[0-9]{1,20}$"},
                "url": {"type": "string"}
            }
        },
        "post": {
            "anyOf": [{"$ref": "#/$defs/status"}, {"$ref": "#/$defs/tombstone"}],
            "required": ["context", "url"],
            "properties": {
                "context": {"enum": ["parent", "post", "thread", "reply"], "description": "Role in the result: an ancestor, the requested post, the author's continuation, or a direct reply."},
                "url": {"type": "string", "description": "The post link (always filled)."}
            }
        }
    })
}

/// The `outputSchema` of `x_md_get_post`.
pub fn post_output_schema() -> Value {
    let mut schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "additionalProperties": false,
        "required": ["url", "format", "post_count", "compact", "source", "cache", "warnings", "thread_complete", "truncated", "posts"],
        "properties": {
            "url": {"type": "string", "description": "Link of the requested post."},
            "format": {"enum": ["markdown", "obsidian", "json"]},
            "post_count": {"type": "integer", "minimum": 0, "description": "Posts in this result."},
            "compact": {"type": "boolean", "description": "false when full=true or format=obsidian."},
            "source": {"enum": ["fxtwitter", "syndication"], "description": "Where the posts came from: FxTwitter, or (when FxTwitter failed for the requested post) the fallback, X's syndication endpoint, which gives the post alone."},
            "cache": {"enum": ["hit", "miss", "bypass"]},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "thread_complete": {"type": "boolean", "description": "false when part of the requested context (an ancestor, the thread, or the replies) could not be loaded or was cut by max_posts; the Markdown then ends with a note."},
            "truncated": {"type": "boolean", "description": "true when the result budget cut the thread: posts were left out (then `next_cursor` continues after the last post shown), or one post alone over the budget was cut inside (its `text_truncated` is true)."},
            "next_cursor": {"type": "string", "description": "Pass as `cursor` (with the same other arguments) for the posts after the last one shown; present only when posts were left out."},
            "posts": {"type": "array", "items": {"$ref": "#/$defs/post"}}
        }
    });
    schema["$defs"] = defs();
    schema
}

/// The `outputSchema` of a browse tool (`resource` is fixed per tool).
pub fn browse_output_schema(resource: &str) -> Value {
    let mut required = vec!["resource", "page", "limit", "source", "cache", "truncated"];
    match resource {
        "profile" => required.extend(["handle", "profile", "posts"]),
        "search" => required.extend(["query", "feed"]),
        "quotes" => required.extend(["handle", "id", "url", "posts"]),
        "reposts" => required.extend(["handle", "id", "url", "users"]),
        _ => required.extend(["handle", "users"]),
    }
    let mut schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": {
            "resource": {"const": resource},
            "truncated": {"type": "boolean", "description": "true when the result budget cut the rows read: `next_cursor` continues at the first row left out."},
            "page": {"type": "integer", "minimum": 1, "maximum": 10},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            "source": {"enum": ["fxtwitter"]},
            "cache": {"enum": ["hit", "miss", "bypass"]},
            "handle": {"type": "string"},
            "id": {"type": "string", "pattern": "^[0-9]{1,20}$", "description": "The post whose quotes or reposts these are."},
            "url": {"type": "string", "description": "The link of that post."},
            "query": {"type": "string"},
            "feed": {"enum": ["latest", "top", "photos", "videos", "media", "users"]},
            "profile": {"$ref": "#/$defs/user"},
            "posts": {"type": "array", "items": {"$ref": "#/$defs/status"}},
            "users": {"type": "array", "items": {"$ref": "#/$defs/user"}},
            "next_cursor": {"type": "string", "description": "Pass as `cursor` for the next page; absent at the end."},
            "degraded": {"type": "boolean"},
            "warnings": {"type": "array", "items": {"type": "string"}}
        }
    });
    schema["$defs"] = defs();
    schema
}

/// The `outputSchema` of a tool by name.
pub fn output_schema(name: &str) -> Option<Value> {
    Some(match name {
        "x_md_get_post" => post_output_schema(),
        "x_md_get_profile" => browse_output_schema("profile"),
        "x_md_search_posts" => browse_output_schema("search"),
        "x_md_get_followers" => browse_output_schema("followers"),
        "x_md_get_following" => browse_output_schema("following"),
        "x_md_get_quotes" => browse_output_schema("quotes"),
        "x_md_get_reposts" => browse_output_schema("reposts"),
        _ => return None,
    })
}

/// The full `tools/list` entry of a spec.
pub fn definition(spec: &ToolSpec) -> Value {
    let mut definition = json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "annotations": {
            "title": spec.title,
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true
        }
    });
    definition["inputSchema"] = input_schema(spec);
    definition["outputSchema"] = output_schema(spec.name).unwrap_or(Value::Null);
    definition
}
