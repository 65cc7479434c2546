//! From a request to a tool call: the X routes' path matching, the
//! representation a client asked for (`format`, `Accept`), and a query
//! turned into the tool's typed arguments.

use serde_json::{Map, Value};

use crate::app::xhttp::{parse_query, CODE_INVALID_ARGUMENTS, CODE_INVALID_QUERY};
use crate::http::accept::quality;
use crate::x::args::Kind;
use crate::x::registry::{is_route_handle, match_template, Route, Tool};
use crate::x::url::is_id;

/// The X routes as OpenAPI path templates, in registry order (each
/// tool's [`Route`]s from the tool registry).
pub fn route_templates() -> impl Iterator<Item = &'static str> {
    Tool::ALL
        .into_iter()
        .flat_map(|t| t.spec().routes.iter().map(|r| r.template))
}

/// `format` values of the list routes (HTTP only: the tools have none).
const LIST_FORMATS: [&str; 2] = ["markdown", "json"];

/// A matched X route: the tool, which of its routes, and the path's
/// `{handle}` and `{id}` segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XRoute<'a> {
    /// The tool the route runs.
    pub tool: Tool,
    /// The route (from the tool registry).
    pub route: &'static Route,
    /// The `{handle}` segment, or the route's fixed handle.
    pub handle: Option<&'a str>,
    /// The `{id}` segment.
    pub id: Option<&'a str>,
}

/// Matches a request path (without query) against the X routes of the
/// tool registry. A handle segment is 1–20 letters, digits or underscores
/// and not one of [`reserved_names`]; an id segment is 1–20 digits;
/// anything else (a trailing slash too) is not an X route.
pub fn match_path(path: &str) -> Option<XRoute<'_>> {
    let ok = |name: &str, seg: &str| match name {
        "handle" => is_route_handle(seg),
        "id" => is_id(seg),
        _ => false,
    };
    Tool::ALL.into_iter().find_map(|tool| {
        tool.spec().routes.iter().find_map(|route| {
            let caps = match_template(route.template, path, ok)?;
            Some(XRoute {
                tool,
                route,
                handle: caps.handle.or(route.fixed_handle),
                id: caps.id,
            })
        })
    })
}

/// Which representation a successful answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// The tool's Markdown, `text/markdown; charset=utf-8`.
    Markdown,
    /// The tool's `structuredContent`, `application/json`.
    Json,
}

/// Content negotiation: an explicit `format` decides (`json` → JSON;
/// `markdown`, `obsidian` → Markdown); otherwise JSON only when `Accept`
/// gives `application/json` a higher weight than `text/markdown` (a tie,
/// `*/*` or no `Accept` → Markdown). An `Accept` that admits neither still
/// gets Markdown (RFC 9110 §12.5.1 lets a server disregard it).
pub fn negotiate(format: Option<&str>, accept: Option<&[u8]>) -> Representation {
    match format {
        Some("json") => Representation::Json,
        Some(_) => Representation::Markdown,
        None => {
            if quality(accept, b"application", b"json") > quality(accept, b"text", b"markdown") {
                Representation::Json
            } else {
                Representation::Markdown
            }
        }
    }
}

/// A request turned into a tool call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteCall {
    /// The tool.
    pub tool: Tool,
    /// The arguments for `Tools::prepare`.
    pub arguments: Value,
    /// The `format` query parameter, when given.
    pub format: Option<String>,
}

/// Builds the tool arguments of a route from its path and query. Values
/// are typed from the tool's argument table: integers parse as numbers,
/// `true`/`1` and `false`/`0` as booleans; anything else stays a string so
/// `Tools::prepare` refuses it with the tool's own message.
///
/// # Errors
///
/// `(code, message)` for a query that cannot be decoded, a parameter the
/// route does not take, a bad list `format`, or `/api/convert` without
/// `url`.
pub fn route_call(
    route: XRoute<'_>,
    query: Option<&str>,
) -> Result<RouteCall, (&'static str, String)> {
    let params = parse_query(query).map_err(|m| (CODE_INVALID_QUERY, m))?;
    let tool = route.tool;
    let allowed = route.route;
    let props = tool.spec().props;
    let mut args = Map::new();
    if let Some(handle) = route.handle {
        args.insert("handle".into(), Value::from(handle));
    }
    if let Some(id) = route.id {
        args.insert("id".into(), Value::from(id));
    }
    for (name, value) in route.route.fixed {
        args.insert((*name).into(), Value::from(*value));
    }
    let mut format = None;
    for (name, value) in params {
        if !allowed.query_params().any(|p| p == name) {
            let shown: String = name.chars().take(40).collect();
            return Err((
                CODE_INVALID_QUERY,
                format!(
                    "unknown query parameter `{shown}`; this route takes: {}",
                    allowed.query_params().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if name == "format" {
            let list_route = !tool.takes_format();
            if list_route && !LIST_FORMATS.contains(&value.as_str()) {
                return Err((
                    CODE_INVALID_ARGUMENTS,
                    format!("`format` must be one of: {}", LIST_FORMATS.join(", ")),
                ));
            }
            format = Some(value.clone());
            if list_route {
                continue;
            }
        }
        let kind = props.iter().find(|p| p.name == name).map(|p| p.kind);
        let typed = match kind {
            Some(Kind::Int { .. }) => value
                .parse::<i64>()
                .map_or_else(|_| Value::from(value.as_str()), Value::from),
            Some(Kind::Bool) => match value.as_str() {
                "true" | "1" => Value::Bool(true),
                "false" | "0" => Value::Bool(false),
                _ => Value::from(value),
            },
            _ => Value::from(value),
        };
        args.insert(name, typed);
    }
    if let Some((param, example)) = route.route.required {
        if !args.contains_key(param) {
            return Err((
                CODE_INVALID_ARGUMENTS,
                format!("missing required query parameter `{param}`, e.g. {example}"),
            ));
        }
    }
    Ok(RouteCall {
        tool,
        arguments: Value::Object(args),
        format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x::registry::reserved_names;
    use crate::x::tools::{PrepareError, Tools};
    use serde_json::json;

    /// The matched tool, template, handle and id of a path.
    fn matched(path: &str) -> Option<(Tool, &'static str, Option<&str>, Option<&str>)> {
        match_path(path).map(|r| (r.tool, r.route.template, r.handle, r.id))
    }

    /// The route of `tool` with `template`, for `route_call`.
    fn route<'a>(template: &str, handle: Option<&'a str>, id: Option<&'a str>) -> XRoute<'a> {
        let (tool, route) = Tool::ALL
            .into_iter()
            .find_map(|t| {
                t.spec()
                    .routes
                    .iter()
                    .find(|r| r.template == template)
                    .map(|r| (t, r))
            })
            .unwrap();
        XRoute {
            tool,
            route,
            handle: handle.or(route.fixed_handle),
            id,
        }
    }

    #[test]
    fn paths_and_reserved_names() {
        assert_eq!(
            matched("/demo_author/status/2085826244871471104"),
            Some((
                Tool::GetPost,
                "/{handle}/status/{id}",
                Some("demo_author"),
                Some("2085826244871471104")
            ))
        );
        assert_eq!(
            matched("/i/status/18"),
            Some((Tool::GetPost, "/i/status/{id}", Some("i"), Some("18")))
        );
        assert_eq!(
            matched("/demo_author"),
            Some((Tool::GetProfile, "/{handle}", Some("demo_author"), None))
        );
        assert_eq!(
            matched("/a/following"),
            Some((Tool::GetFollowing, "/{handle}/following", Some("a"), None))
        );
        assert_eq!(
            matched("/a/followers"),
            Some((Tool::GetFollowers, "/{handle}/followers", Some("a"), None))
        );
        assert_eq!(
            matched("/search"),
            Some((Tool::SearchPosts, "/search", None, None))
        );
        assert_eq!(
            matched("/api/convert"),
            Some((Tool::GetPost, "/api/convert", None, None))
        );
        assert_eq!(
            matched("/a/media"),
            Some((Tool::GetProfile, "/{handle}/media", Some("a"), None))
        );
        assert_eq!(
            matched("/a/articles"),
            Some((Tool::GetProfile, "/{handle}/articles", Some("a"), None))
        );
        assert_eq!(
            matched("/explore/tabs/trending"),
            Some((Tool::GetTrends, "/explore/tabs/trending", None, None))
        );
        for not in [
            "/",
            "/i",
            "/I",
            "/metrics",
            "/Metrics/followers",
            "/healthz/following",
            "/mcp/status/1",
            "/api",
            "/search/followers",
            "/demo_author/",
            "/demo_author/status/",
            "/a/status/12x",
            "/a/status/123456789012345678901",
            "/twenty_one_chars_xxxx",
            "/a.b",
            "/@demo",
            "/a/likes",
            "/a/status/1/photo/1",
            "/i/followers",
            "/explore",
            "/Explore/media",
            "/explore/tabs",
            "/explore/tabs/trending/",
            "//a",
        ] {
            assert_eq!(match_path(not), None, "{not}");
        }
    }

    #[test]
    fn every_literal_first_segment_is_reserved() {
        for t in route_templates() {
            let first = t.trim_start_matches('/').split('/').next().unwrap();
            if !first.starts_with('{') {
                assert!(reserved_names().contains(&first), "{t}");
            }
        }
    }

    #[test]
    fn negotiation_rules() {
        use Representation::*;
        let n = |f: Option<&str>, a: Option<&str>| negotiate(f, a.map(str::as_bytes));
        assert_eq!(n(None, None), Markdown);
        assert_eq!(n(None, Some("*/*")), Markdown);
        assert_eq!(n(None, Some("application/json")), Json);
        assert_eq!(n(None, Some("application/json, text/markdown")), Markdown);
        assert_eq!(n(None, Some("text/markdown;q=0.5, application/json")), Json);
        assert_eq!(n(None, Some("text/html")), Markdown);
        assert_eq!(n(None, Some("text/html,*/*;q=0.8")), Markdown);
        assert_eq!(n(Some("json"), Some("text/markdown")), Json);
        assert_eq!(n(Some("markdown"), Some("application/json")), Markdown);
        assert_eq!(n(Some("obsidian"), Some("application/json")), Markdown);
    }

    #[test]
    fn query_becomes_typed_arguments() {
        let rc = route_call(
            route("/{handle}/status/{id}", Some("demo_author"), Some("18")),
            Some("thread=off&max_posts=5&full=true&format=obsidian"),
        )
        .unwrap();
        assert_eq!(rc.tool, Tool::GetPost);
        assert_eq!(
            rc.arguments,
            json!({"handle": "demo_author", "id": "18", "thread": "off", "max_posts": 5, "full": true, "format": "obsidian"})
        );
        assert_eq!(rc.format.as_deref(), Some("obsidian"));
        let rc = route_call(
            route("/search", None, None),
            Some("q=a+b&limit=x&full=0&format=json"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"q": "a b", "limit": "x", "full": false})
        );
        assert_eq!(rc.format.as_deref(), Some("json"));
        let e = Tools::prepare(rc.tool.name(), Some(&rc.arguments)).unwrap_err();
        assert_eq!(
            e,
            PrepareError::InvalidArguments("`limit` must be an integer from 1 to 20".into())
        );
        assert_eq!(
            route_call(route("/{handle}", Some("a"), None), Some("handle=b")).unwrap_err(),
            (
                CODE_INVALID_QUERY,
                "unknown query parameter `handle`; this route takes: feed, with_replies, since, page, limit, cursor, full, format, max_chars".into()
            )
        );
        assert_eq!(
            route_call(route("/{handle}", Some("a"), None), Some("format=obsidian")).unwrap_err(),
            (
                CODE_INVALID_ARGUMENTS,
                "`format` must be one of: markdown, json".into()
            )
        );
        // A tab's route sets `feed` itself, and takes no `feed`.
        let rc = route_call(
            route("/{handle}/media", Some("a"), None),
            Some("since=5&limit=2"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"handle": "a", "feed": "media", "since": "5", "limit": 2})
        );
        assert_eq!(
            route_call(
                route("/{handle}/media", Some("a"), None),
                Some("feed=posts")
            )
            .unwrap_err()
            .0,
            CODE_INVALID_QUERY
        );
        assert_eq!(
            route_call(route("/api/convert", None, None), None)
                .unwrap_err()
                .0,
            CODE_INVALID_ARGUMENTS
        );
        let rc = route_call(
            route("/api/convert", None, None),
            Some("url=x.com%2Fa%2Fstatus%2F5&thread=off"),
        )
        .unwrap();
        assert_eq!(
            rc.arguments,
            json!({"url": "x.com/a/status/5", "thread": "off"})
        );
    }
}
