//! Tool definitions for `tools/list`: names, titles, descriptions, JSON
//! Schema 2020-12 `inputSchema` (generated from the argument tables in
//! `args.rs`) and `outputSchema`, and the read-only annotations.
//!
//! No schema uses a top-level `oneOf`/`anyOf`/`allOf`: several model APIs
//! refuse tool schemas with top-level combinators. Cross-argument rules
//! (`url` vs `handle`+`id`) are stated in the descriptions and enforced by
//! `prepare`.

use serde_json::{json, Map, Value};

use super::args::{Kind, Prop};
use super::cache::CacheStatus;

/// The JSON Schema dialect every schema declares.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

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
        Kind::Since => {
            json!({"type": ["number", "string"], "minimum": 0, "pattern": super::args::SINCE_PATTERN})
        }
    };
    s["description"] = json!(p.description);
    s
}

/// The `inputSchema` generated from a tool's argument table (`props`,
/// of which `required` are required).
pub fn input_schema(props: &[Prop], required: &[&str]) -> Value {
    let props: Map<String, Value> = props
        .iter()
        .map(|p| (p.name.to_string(), prop_schema(p)))
        .collect();
    // Owned values are moved in: `json!` would deep-copy an embedded
    // `Value` (it serializes it), and those copies set the heap's high
    // water mark when `tools/list` is first built.
    let mut schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "required": required,
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
            "description": "An FxTwitter APIUser as received (fields may be missing on partial users); `raw_description` (the bio again, with its facets) only with `full`.",
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
            "description": "An FxTwitter APITwitterStatus as xmd's typed model reads it: the fields below and `raw_text` (with `full`), with poll, card, article and Community Note typed; unknown upstream fields and `null` members are not passed on. Normalised: `retweets` (= reposts), media items with `alt`, `duration_ms` and `variants`; `media` dropped when empty.",
            "required": ["type", "id", "text"],
            "properties": {
                "type": {"const": "status"},
                "id": {"type": "string", "pattern": "^[0-9]{1,20}$"},
                "url": {"type": "string"},
                "text": {"type": "string"},
                "text_partial": {"const": true, "description": "Present (true) when the source sent only the start of the text: the syndication fallback's answer for a long post (about 270 characters). The whole text comes from FxTwitter: call again when it answers, or open `url`."},
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
                "replying_to": {"type": ["object", "array", "string", "null"], "description": "Whom the post replies to, as sent: FxTwitter v2's object (`screen_name`, `status`), or a legacy handle string or list."},
                "replying_to_status": {"type": ["array", "string", "null"], "description": "The legacy parent id form, as sent: a list or the id itself."},
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
            "cache": {"enum": CacheStatus::LABELS},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "thread_complete": {"type": "boolean", "description": "false when part of the requested context (an ancestor, the thread, or the replies) could not be loaded or was cut by max_posts; the Markdown then ends with a note."},
            "truncated": {"type": "boolean", "description": "true when the result budget cut the thread: posts were left out (then `next_cursor` continues after the last post shown), or one post alone over the budget was cut inside (the texts of its media, card, note and quoted post first, then its own text, when its `text_truncated` is true; with format=json the text shows the post reduced and `posts` keeps it whole)."},
            "next_cursor": {"type": "string", "description": "Pass as `cursor` (with the same other arguments) for the posts after the last one shown; present only when posts were left out."},
            "posts": {"type": "array", "items": {"$ref": "#/$defs/post"}}
        }
    });
    schema["$defs"] = defs();
    schema
}

/// The `outputSchema` of a list tool: `resource` is fixed per tool, and
/// `required` names the members it always has besides the common ones.
pub fn browse_output_schema(resource: &str, required: &[&str]) -> Value {
    let required: Vec<&str> = ["resource", "page", "limit", "source", "cache", "truncated"]
        .into_iter()
        .chain(required.iter().copied())
        .collect();
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
            "cache": {"enum": CacheStatus::LABELS},
            "handle": {"type": "string"},
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

/// The full `tools/list` entry of a tool, from its name, title,
/// description and schemas.
pub fn definition(
    name: &str,
    title: &str,
    description: &str,
    input_schema: Value,
    output_schema: Value,
) -> Value {
    let mut definition = json!({
        "name": name,
        "title": title,
        "description": description,
        "annotations": {
            "title": title,
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true
        }
    });
    definition["inputSchema"] = input_schema;
    definition["outputSchema"] = output_schema;
    definition
}
