//! The seven read-only X tools: definitions, argument validation, runs.
//!
//! `prepare` is pure (no upstream); `run` blocks on the upstream and is
//! meant for a worker thread. Every upstream request of a run goes through
//! the shared cache (see `cache.rs`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::args;
use super::browse::{self, BrowseResult};
use super::budget::{Guard, Run, Settings};
use super::cache::{Cache, Fetcher};
use super::error::XError;
use super::post;
use super::profile;
use super::schema;
use super::search;
use super::side::SidePool;
use super::status_lists::{status_list, StatusList};
use super::upstream::{PerClient, Upstream};
use super::url;
use crate::config::DEFAULT_CACHE_BYTES;

/// Tool names, in `tools/list` order.
pub const TOOL_NAMES: [&str; 7] = [
    "x_md_get_post",
    "x_md_get_profile",
    "x_md_search_posts",
    "x_md_get_followers",
    "x_md_get_following",
    "x_md_get_quotes",
    "x_md_get_reposts",
];

/// What a tool run produced: Markdown text, optional structured content, and
/// whether it is a tool execution error (`isError: true`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The rendered Markdown (or error message) for the `text` content block.
    pub text: String,
    /// `structuredContent`; always `None` when `is_error` is true.
    pub structured: Option<Value>,
    /// `isError` of the result.
    pub is_error: bool,
}

impl ToolOutput {
    /// The `isError` result for an error.
    pub fn error(e: &XError) -> ToolOutput {
        ToolOutput {
            text: e.to_string(),
            structured: None,
            is_error: true,
        }
    }
}

/// Why `prepare` refused a call before any upstream work.
#[derive(Debug, Clone, PartialEq)]
pub enum PrepareError {
    /// No tool has this name.
    UnknownTool,
    /// The arguments miss the tool's `inputSchema`; the text names the
    /// offending argument and the accepted form.
    InvalidArguments(String),
}

/// A validated tool call, ready to run on a worker thread.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool name.
    pub name: &'static str,
    /// The validated arguments (an object; `{}` when none were sent).
    pub arguments: Value,
    /// Raised by the server when the client's connection closed before
    /// the answer: the run makes no further upstream request.
    pub cancel: Arc<AtomicBool>,
    /// The client the call is made for, when the transport knows it: its
    /// fetches then go through [`Tools::with_per_client`]'s upstream. Not
    /// part of what the call computes (results are shared by every client).
    pub client: Option<std::net::IpAddr>,
}

/// The tool runner: holds the upstream and the response cache.
pub struct Tools {
    upstream: Arc<dyn Upstream>,
    /// X's syndication endpoint, asked for a single post when FxTwitter
    /// fails (see `syndication.rs`); `None` turns the fallback off.
    fallback: Option<Arc<dyn Upstream>>,
    cache: Arc<Cache>,
    side: SidePool,
    settings: Settings,
    per_client: Option<Arc<dyn PerClient>>,
}

impl Tools {
    /// Builds the runner over an upstream with a cache of
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn new(upstream: Arc<dyn Upstream>) -> Tools {
        Tools::with_cache_bytes(upstream, DEFAULT_CACHE_BYTES)
    }

    /// Builds the runner with a cache of `cache_bytes` (0 disables the
    /// cache: every result then reports `cache: "bypass"`).
    pub fn with_cache_bytes(upstream: Arc<dyn Upstream>, cache_bytes: usize) -> Tools {
        Tools {
            upstream,
            fallback: None,
            cache: Arc::new(Cache::new(cache_bytes)),
            side: SidePool::default(),
            settings: Settings::default(),
            per_client: None,
        }
    }

    /// These tools with a second provider of single posts, X's
    /// syndication endpoint, asked through the same cache when FxTwitter
    /// fails for a post read.
    pub fn with_fallback(mut self, fallback: Arc<dyn Upstream>) -> Tools {
        self.fallback = Some(fallback);
        self
    }

    /// The same runner with `settings` (result budget, public URL, call
    /// deadline).
    pub fn with_settings(mut self, settings: Settings) -> Tools {
        self.settings = settings;
        self
    }

    /// The settings results are shaped with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Sends the fetches of calls made for a client (see
    /// [`ToolCall::client`]) through `per_client`'s upstream.
    pub fn with_per_client(mut self, per_client: Arc<dyn PerClient>) -> Tools {
        self.per_client = Some(per_client);
        self
    }

    /// The JSON array of the tool definitions for `tools/list`.
    pub fn definitions() -> Value {
        Value::Array(schema::SPECS.iter().map(schema::definition).collect())
    }

    /// The `inputSchema` of one tool, for `-32602` error data.
    pub fn input_schema(name: &str) -> Option<Value> {
        schema::spec(name).map(schema::input_schema)
    }

    /// The `outputSchema` of one tool.
    pub fn output_schema(name: &str) -> Option<Value> {
        schema::output_schema(name)
    }

    /// Validates a call without touching the upstream. `arguments` is the
    /// raw `params.arguments` (absent → `None`, treated as `{}`).
    pub fn prepare(name: &str, arguments: Option<&Value>) -> Result<ToolCall, PrepareError> {
        let spec = schema::spec(name).ok_or(PrepareError::UnknownTool)?;
        let obj = if spec.name == "x_md_get_post" {
            args::parse_post(arguments).map_err(PrepareError::InvalidArguments)?;
            args::validate(arguments, spec.props, spec.required)
        } else {
            args::validate(arguments, spec.props, spec.required).and_then(|obj| {
                // A post's lists name the post as `x_md_get_post` does.
                if spec.props.iter().any(|p| p.name == "url") {
                    args::parse_target(&obj)?;
                }
                Ok(obj)
            })
        }
        .map_err(PrepareError::InvalidArguments)?;
        Ok(ToolCall {
            name: spec.name,
            arguments: Value::Object(canonical_arguments(obj)),
            cancel: Arc::default(),
            client: None,
        })
    }

    /// Runs a validated call (blocking; call from a worker thread).
    pub fn run(&self, call: &ToolCall) -> ToolOutput {
        match self.run_http(call) {
            Ok(s) => ToolOutput {
                text: s.text,
                structured: Some(s.structured),
                is_error: false,
            },
            Err(e) => ToolOutput::error(&e),
        }
    }

    /// Runs a validated call like [`Tools::run`] (same fetches, cache and
    /// renderer) but keeps the failure structured and reports how long the
    /// result stays fresh, for the plain HTTP routes.
    pub fn run_http(&self, call: &ToolCall) -> Result<Served, XError> {
        let narrowed = match (call.client, &self.per_client) {
            (Some(client), Some(p)) => Some(p.for_client(client, &self.upstream)),
            _ => None,
        };
        let up = narrowed.as_ref().unwrap_or(&self.upstream);
        let guard = Guard::new(self.settings.call_timeout, Arc::clone(&call.cancel));
        let f = Fetcher::with_side(&self.cache, up, &self.side)
            .with_fallback(self.fallback.as_deref())
            .guarded(&guard);
        let run = Run {
            settings: &self.settings,
            guard: Some(&guard),
            tool: call.name,
            arguments: &call.arguments,
        };
        let (mut text, mut structured) = self.run_with(&f, call, &run)?;
        super::budget::enforce(&mut text, &mut structured, run.max_chars());
        Ok(Served {
            text,
            structured,
            fresh_for: f.fresh_for(),
        })
    }

    fn run_with(&self, f: &Fetcher, call: &ToolCall, run: &Run) -> Result<(String, Value), XError> {
        let browse_args = || browse::parse_browse(&call.arguments);
        let result: BrowseResult = match call.name {
            "x_md_get_post" => {
                let a = args::parse_post(Some(&call.arguments))
                    .map_err(|m| XError::new(400, "invalid_arguments", m))?;
                let mut r = post::get_post(f, &a, run)?;
                r.structured["cache"] = Value::from(f.outcome());
                return Ok((r.text, r.structured));
            }
            "x_md_get_profile" => profile::profile(f, &browse_args(), run)?,
            "x_md_get_followers" => browse::connections(f, false, &browse_args(), run)?,
            "x_md_get_following" => browse::connections(f, true, &browse_args(), run)?,
            "x_md_get_quotes" | "x_md_get_reposts" => {
                let list = if call.name == "x_md_get_quotes" {
                    StatusList::Quotes
                } else {
                    StatusList::Reposts
                };
                // `prepare` spelled the post as `handle` and `id`.
                let id = call.arguments.get("id").and_then(Value::as_str);
                let id = id.ok_or_else(|| {
                    XError::new(400, "invalid_arguments", "missing the post `id`")
                })?;
                status_list(f, list, &browse_args(), id, run)?
            }
            _ => {
                let q = call
                    .arguments
                    .get("q")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let feed = call
                    .arguments
                    .get("feed")
                    .and_then(Value::as_str)
                    .unwrap_or("latest");
                search::search(f, &browse_args(), q, feed, run)?
            }
        };
        Ok((result.text, result.structured))
    }
}

/// Validated arguments in their one spelling, so every spelling of one
/// request shares one result-cache key and one upstream path: `handle`
/// without `@` and lowercased, `id` without leading zeros, and a post
/// `url` replaced by the `handle` and `id` it names (the URL forms all
/// name the same post).
fn canonical_arguments(mut obj: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::String(u)) = obj.get("url") {
        if let Ok(target) = url::parse_status_url(u) {
            obj.remove("url");
            obj.insert("handle".into(), Value::from(target.handle));
            obj.insert("id".into(), Value::from(target.id));
        }
    }
    if let Some(Value::String(h)) = obj.get_mut("handle") {
        *h = url::canonical_handle(h);
    }
    if let Some(Value::String(id)) = obj.get_mut("id") {
        *id = url::canonical_id(id);
    }
    // Every number the tools take is an integer; `3000.0` (an integer to
    // JSON Schema) is spelled `3000`, so each reader (the budget's
    // `max_chars` too) sees it, and continuation links carry it.
    for v in obj.values_mut() {
        if v.is_f64() {
            if let Some(i) = args::as_int(v) {
                *v = Value::from(i);
            }
        }
    }
    obj
}

/// A successful run for the HTTP routes.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// The Markdown, byte for byte what the tool's text content carries.
    pub text: String,
    /// The tool's `structuredContent`.
    pub structured: Value,
    /// How long the result stays fresh: the shortest remaining cache life
    /// of the upstream answers it was built from (zero when any of them
    /// was not cacheable).
    pub fresh_for: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn definitions_complete() {
        let defs = Tools::definitions();
        let defs = defs.as_array().unwrap();
        let names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
        assert_eq!(names, TOOL_NAMES);
        for d in defs {
            assert!(d["title"].as_str().unwrap().len() > 5);
            assert!(d["description"].as_str().unwrap().len() > 80);
            assert_eq!(d["inputSchema"]["$schema"], schema::DIALECT);
            assert_eq!(d["inputSchema"]["type"], "object");
            assert_eq!(d["inputSchema"]["additionalProperties"], false);
            assert_eq!(d["outputSchema"]["$schema"], schema::DIALECT);
            assert_eq!(
                d["annotations"],
                json!({"title": d["title"], "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
            );
            assert_eq!(
                Tools::input_schema(d["name"].as_str().unwrap()).unwrap(),
                d["inputSchema"]
            );
        }
        assert_eq!(
            defs[2]["inputSchema"]["properties"]["limit"],
            json!({"type":"integer","minimum":1,"maximum":20,"default":20,"description":"Items per page, 1 to 20 (default 20)."})
        );
        assert_eq!(defs[2]["inputSchema"]["required"], json!(["q"]));
        assert_eq!(
            defs[2]["inputSchema"]["properties"]["feed"]["enum"],
            json!(["latest", "top", "photos", "videos", "media", "users"])
        );
        assert_eq!(Tools::input_schema("nope"), None);
    }

    #[test]
    fn prepare_refusals() {
        assert_eq!(
            Tools::prepare("x_md_delete_post", None).unwrap_err(),
            PrepareError::UnknownTool
        );
        let e = Tools::prepare("x_md_get_post", Some(&json!({}))).unwrap_err();
        assert!(matches!(e, PrepareError::InvalidArguments(m) if m.starts_with("supply `url`")));
        let ok = Tools::prepare("x_md_get_profile", Some(&json!({"handle": "@a"}))).unwrap();
        assert_eq!(ok.name, "x_md_get_profile");
        assert_eq!(ok.arguments, json!({"handle": "a"}));
        assert_eq!(
            Tools::prepare("x_md_get_following", None).unwrap_err(),
            PrepareError::InvalidArguments("missing required property `handle`".into())
        );
    }

    proptest::proptest! {
        /// Any spelling of a handle (case, `@`) and of a post id (leading
        /// zeros), in any argument form of any tool, gives one call: the
        /// oracle is the spelling built from scratch in lowercase.
        #[test]
        fn every_spelling_of_a_target_is_one_call(
            handle in "[A-Za-z0-9_]{1,15}",
            flips in proptest::collection::vec(proptest::bool::ANY, 15),
            at in proptest::bool::ANY,
            zeros in 0usize..4,
            id in "[1-9][0-9]{0,15}",
            host in proptest::sample::select(vec!["x.com", "twitter.com", "mobile.twitter.com", "fxtwitter.com"]),
        ) {
            use proptest::prop_assert_eq;
            let spelled: String = handle
                .chars()
                .zip(flips.iter().cycle())
                .map(|(c, f)| if *f { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                .collect();
            let spelled = if at { format!("@{spelled}") } else { spelled };
            let padded = format!("{}{id}", "0".repeat(zeros));
            let want_handle = handle.to_ascii_lowercase();
            for tool in ["x_md_get_profile", "x_md_get_followers", "x_md_get_following"] {
                let a = Tools::prepare(tool, Some(&json!({"handle": spelled}))).unwrap();
                let b = Tools::prepare(tool, Some(&json!({"handle": want_handle}))).unwrap();
                prop_assert_eq!(crate::mcp::results::key(&a), crate::mcp::results::key(&b));
            }
            let want = Tools::prepare(
                "x_md_get_post",
                Some(&json!({"handle": want_handle, "id": id})),
            )
            .unwrap();
            if padded.len() <= 20 {
                let by_args = Tools::prepare(
                    "x_md_get_post",
                    Some(&json!({"handle": spelled, "id": padded})),
                )
                .unwrap();
                prop_assert_eq!(crate::mcp::results::key(&by_args), crate::mcp::results::key(&want));
            }
            let link = format!("https://{host}/{}/status/{id}", spelled.trim_start_matches('@'));
            let by_url = Tools::prepare("x_md_get_post", Some(&json!({"url": link}))).unwrap();
            prop_assert_eq!(crate::mcp::results::key(&by_url), crate::mcp::results::key(&want));
        }
    }
}
