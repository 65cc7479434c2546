//! The `outputSchema` builders of the tools whose results add fields to
//! the shared browse result (a profile, the trends, a list about one
//! post); the registry's `SPECS` point at them.

use serde_json::Value;

use crate::x::{args, schema};

/// The `outputSchema` of `x_md_get_profile`: a browse result with the
/// account, its rows, the timeline options when not their defaults, and
/// with `full` its About data.
pub(super) fn profile_output_schema() -> Value {
    let mut schema = schema::browse_output_schema("profile", &["handle", "profile", "posts"]);
    let props = &mut schema["properties"];
    props["feed"] = serde_json::json!({"enum": args::ProfileFeed::NAMES, "description": "The timeline read, when not `posts`."});
    props["with_replies"] = serde_json::json!({"const": true, "description": "Present when the account's replies are listed too."});
    props["since"] = serde_json::json!({"type": "string", "description": "The `since` asked, as sent upstream (a number in its shortest decimal spelling); only posts newer than it are listed."});
    props["about"] = serde_json::json!({
        "type": "object",
        "description": "With full=true: X's \"About this account\" (FxTwitter /2/profile/{handle}/about), when X has it.",
        "properties": {
            "based_in": {"type": "string"},
            "location_accurate": {"type": "boolean"},
            "created_country_accurate": {"type": "boolean"},
            "source": {"type": "string"},
            "username_changes": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}, "last_changed_at": {"type": "string"}}}
        }
    });
    schema
}

/// The `outputSchema` of `x_md_get_trends`: a browse result whose rows
/// are FxTwitter's trends (`APITrend`), each with X's search link.
pub(super) fn trends_output_schema() -> Value {
    let mut schema = schema::browse_output_schema("trends", &["trends"]);
    schema["properties"]["trends"] = serde_json::json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "url"],
            "properties": {
                "name": {"type": "string", "description": "The trend; pass it as `q` of x_md_search_posts to read its posts."},
                "rank": {"type": "string", "description": "X's rank, as sent."},
                "context": {"type": "string", "description": "X's context for it (e.g. \"Sports · Trending\"), when sent."},
                "grouped_topics": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "url": {"type": "string", "description": "X's search for it."}
            }
        }
    });
    schema
}

/// The `outputSchema` of a list about one post: a browse result that also
/// names the post (`id`, `url`, and `handle` when the rows show its
/// author) and carries `rows` (`posts` or `users`).
pub(super) fn post_list_output_schema(resource: &str, rows: &'static str) -> Value {
    let mut schema = schema::browse_output_schema(resource, &["id", "url", rows]);
    let props = &mut schema["properties"];
    props["handle"] = serde_json::json!({"type": "string", "description": "The post's author, when the rows show it (a quote carries the quoted post's author); absent otherwise: X ignores the handle in a post link, so the one asked with is no evidence."});
    props["id"] = serde_json::json!({"type": "string", "pattern": "^[0-9]{1,20}$", "description": "The post whose quotes or reposts these are."});
    props["url"] = serde_json::json!({"type": "string", "description": "The link of that post."});
    schema
}
