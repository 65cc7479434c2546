//! The tool runner: definitions, argument validation and runs of the
//! read-only X tools listed in the registry (`registry.rs`).
//!
//! `prepare` is pure (no upstream); `run` blocks on the upstream and is
//! meant for a worker thread. Every upstream request of a run goes through
//! the shared cache (see `cache.rs`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::budget::{Guard, Run, Settings, Wire};
use super::cache::{Cache, CacheStatus, DEFAULT_CACHE_BYTES};
use super::error::XError;
use super::fetcher::Fetcher;
use super::memory::WorkBudget;
pub use super::registry::{Call, Tool};
use super::schema;
use super::side::SidePool;
use super::status_lists::{self, StatusList};
use super::structured::Structured;
use super::upstream::{PerClient, Upstream};
use super::{browse, post, profile, search};

/// Tool names, in `tools/list` order (from the registry).
pub const TOOL_NAMES: [&str; Tool::COUNT] = Tool::NAMES;

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
    /// The typed, validated arguments (they name the tool).
    pub call: Call,
    /// Raised by the server when the client's connection closed before
    /// the answer: the run makes no further upstream request.
    pub cancel: Arc<AtomicBool>,
    /// The client the call is made for, when the transport knows it: its
    /// fetches then go through [`Tools::with_per_client`]'s upstream. Not
    /// part of what the call computes (results are shared by every client).
    pub client: Option<std::net::IpAddr>,
}

impl ToolCall {
    /// The tool.
    pub fn tool(&self) -> Tool {
        self.call.tool()
    }

    /// The tool name.
    pub fn name(&self) -> &'static str {
        self.call.tool().name()
    }

    /// The arguments in their one spelling ([`Call::canonical`]).
    pub fn arguments(&self) -> Value {
        Value::Object(self.call.canonical())
    }
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
    /// The budget of the calls' working set (see [`super::memory`]).
    work: Arc<WorkBudget>,
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
            cache: Arc::new(Cache::new(cache_bytes, super::registry::ttl_for)),
            side: SidePool::default(),
            settings: Settings::default(),
            per_client: None,
            work: Arc::new(WorkBudget::new(crate::config::DEFAULT_MAX_WORKING_BYTES)),
        }
    }

    /// These tools with a working budget of `bytes` for the calls in
    /// flight (`--max-working-bytes`; 0 turns it off), see
    /// [`super::memory`].
    pub fn with_working_bytes(mut self, bytes: usize) -> Tools {
        self.work = Arc::new(WorkBudget::new(bytes));
        self
    }

    /// The working budget of the calls in flight.
    pub fn work(&self) -> &Arc<WorkBudget> {
        &self.work
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
        Value::Array(Tool::ALL.into_iter().map(definition).collect())
    }

    /// The `inputSchema` of one tool, for `-32602` error data.
    pub fn input_schema(name: &str) -> Option<Value> {
        Tool::from_name(name).map(input_schema)
    }

    /// The `outputSchema` of one tool.
    pub fn output_schema(name: &str) -> Option<Value> {
        Tool::from_name(name).map(Tool::output_schema)
    }

    /// Validates a call without touching the upstream. `arguments` is the
    /// raw `params.arguments` (absent → `None`, treated as `{}`); it is
    /// read here once and never again.
    pub fn prepare(name: &str, arguments: Option<&Value>) -> Result<ToolCall, PrepareError> {
        let tool = Tool::from_name(name).ok_or(PrepareError::UnknownTool)?;
        let call = Call::parse(tool, arguments).map_err(PrepareError::InvalidArguments)?;
        Ok(ToolCall {
            call,
            cancel: Arc::default(),
            client: None,
        })
    }

    /// Runs a validated call (blocking; call from a worker thread).
    pub fn run(&self, call: &ToolCall) -> ToolOutput {
        match self.run_http(call) {
            Ok(s) => s.into_output(),
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
        // Long loops below the tools (the facet expander) read it.
        let _stop = super::model::expand::Stop::enter(guard.deadline, Arc::clone(&guard.cancel));
        let f = Fetcher::with_side(&self.cache, up, &self.side)
            .with_fallback(self.fallback.as_deref())
            .guarded(&guard)
            .metered(&self.work);
        let run = Run {
            settings: &self.settings,
            guard: Some(&guard),
            call: &call.call,
        };
        let (mut text, mut structured) = call.call.run(&f, &run)?;
        let wire = super::budget::enforce(&mut text, &mut structured, run.max_chars());
        Ok(Served {
            text,
            structured,
            cache: f.status(),
            fresh_for: f.fresh_for(),
            wire,
        })
    }

    /// The one run path of MCP and the plain HTTP routes: runs `call`
    /// like [`Tools::run_http`], isolating a panic (the worker lives on),
    /// and reports what happened for metrics and logs.
    pub fn run_guarded(&self, call: &ToolCall) -> (Finished, CallStats) {
        let started = std::time::Instant::now();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_http(call)));
        let mut stats = CallStats {
            tool: call.tool(),
            outcome: CallOutcome::Ok,
            cache: None,
            error_code: None,
            source: None,
            took: Duration::ZERO,
        };
        let finished = match run {
            // The run waits for upstream answers an event loop fetches
            // (super::restart): its result is thrown away, nothing counted.
            Ok(_) if super::restart::suspended() => Finished::Suspended,
            Ok(Ok(served)) => {
                stats.cache = Some(served.cache);
                if served.structured.get("source").and_then(Value::as_str)
                    == Some(super::syndication::SOURCE)
                {
                    stats.source = Some(super::syndication::SOURCE);
                }
                Finished::Served(served)
            }
            Ok(Err(e)) => {
                stats.outcome = CallOutcome::Error;
                stats.error_code = Some(e.code);
                Finished::Failed(e)
            }
            Err(_) => {
                stats.outcome = CallOutcome::Panic;
                Finished::Panicked
            }
        };
        stats.took = started.elapsed();
        (finished, stats)
    }
}

/// How a guarded run ([`Tools::run_guarded`]) ended.
#[derive(Debug)]
pub enum Finished {
    /// A result.
    Served(Served),
    /// A tool failure (`isError: true` on MCP, a problem document over
    /// HTTP).
    Failed(XError),
    /// The tool panicked.
    Panicked,
    /// The run waits for upstream answers (a restartable run, see
    /// [`super::restart`]); it runs again once they are in.
    Suspended,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// A result with `isError: false`.
    Ok = 0,
    /// A result with `isError: true`.
    Error = 1,
    /// The tool panicked; a `-32603` error (HTTP: `500`) was sent.
    Panic = 2,
}

/// What a tool call did, for logs and metrics.
#[derive(Debug, Clone)]
pub struct CallStats {
    /// The tool.
    pub tool: Tool,
    /// How it ended.
    pub outcome: CallOutcome,
    /// The result's cache status, for a result.
    pub cache: Option<CacheStatus>,
    /// The machine code of a failure (`fxtwitter_network`, …).
    pub error_code: Option<&'static str>,
    /// The provider of a result that FxTwitter did not serve
    /// (`syndication`: the post fallback), for the access log.
    pub source: Option<&'static str>,
    /// How long the tool ran.
    pub took: Duration,
}

/// Name of the `structuredContent` member that carries the cache status.
pub const CACHE_MEMBER: &str = "cache";

/// Writes a result's `structuredContent`: the tool's serialized object
/// (`object`, without a cache member) with `"cache":"<status>"` as its
/// first member. Anything but an object is written as it is.
pub fn write_structured(out: &mut Vec<u8>, object: &[u8], cache: CacheStatus) {
    let Some(members) = object.strip_prefix(b"{") else {
        out.extend_from_slice(object);
        return;
    };
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(CACHE_MEMBER.as_bytes());
    out.extend_from_slice(b"\":\"");
    out.extend_from_slice(cache.as_str().as_bytes());
    out.push(b'"');
    if members.first() != Some(&b'}') {
        out.push(b',');
    }
    out.extend_from_slice(members);
}

/// A successful run, for MCP and the HTTP routes.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// The Markdown, byte for byte what the tool's text content carries.
    pub text: String,
    /// What the tool built for `structuredContent` (without the cache
    /// status, which is added when it is serialized).
    pub structured: Structured,
    /// How the upstream answers it was built from were served.
    pub cache: CacheStatus,
    /// How long the result stays fresh: the shortest remaining cache life
    /// of the upstream answers it was built from (zero when any of them
    /// was not cacheable).
    pub fresh_for: Duration,
    /// `text` and `structured` serialized, once, by the budget's last
    /// check ([`super::budget::enforce`]); replies are written from these
    /// bytes.
    pub wire: Wire,
}

impl Served {
    /// A served result of `text` and `structured` (serialized here).
    pub fn new(
        text: String,
        structured: Structured,
        cache: CacheStatus,
        fresh_for: Duration,
    ) -> Served {
        Served {
            wire: Wire::of(&text, &structured),
            text,
            structured,
            cache,
            fresh_for,
        }
    }

    /// The serialized `structuredContent`, with the cache status.
    pub fn structured_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire.structured.len() + 32);
        write_structured(&mut out, &self.wire.structured, self.cache);
        out
    }

    /// The result as a tool output, `structuredContent` with the cache
    /// status (for in-process callers; the servers write it with
    /// [`write_structured`]).
    pub fn into_output(self) -> ToolOutput {
        // Read back from the bytes a reply carries: what a client sees.
        let structured = serde_json::from_slice(&self.structured_json()).ok();
        ToolOutput {
            text: self.text,
            structured,
            is_error: false,
        }
    }
}

impl Call {
    /// Runs the call through `f` (blocking): its Markdown and
    /// `structuredContent`, before the last budget guard.
    pub fn run(&self, f: &Fetcher, run: &Run) -> Result<(String, Structured), XError> {
        let r = match self {
            Call::GetPost(a) => {
                let r = post::get_post(f, a, run)?;
                return Ok((r.text, r.structured));
            }
            Call::GetProfile(a) => profile::profile(f, a, run)?,
            Call::SearchPosts(a) => search::search(f, &a.list, &a.q, a.feed.as_str(), run)?,
            Call::GetFollowers(a) => browse::connections(f, false, a, run)?,
            Call::GetFollowing(a) => browse::connections(f, true, a, run)?,
            Call::GetQuotes(a) => status_lists::status_list(f, StatusList::Quotes, a, run)?,
            Call::GetReposts(a) => status_lists::status_list(f, StatusList::Reposts, a, run)?,
            Call::GetTrends(a) => super::trends::trends(f, a, run)?,
        };
        Ok((r.text, r.structured))
    }
}

/// The `inputSchema` of `tool`, from its argument table.
fn input_schema(tool: Tool) -> Value {
    let spec = tool.spec();
    schema::input_schema(spec.props, spec.required)
}

/// The full `tools/list` entry of `tool`.
fn definition(tool: Tool) -> Value {
    let spec = tool.spec();
    schema::definition(
        spec.name,
        spec.title,
        spec.description,
        input_schema(tool),
        tool.output_schema(),
    )
}

#[cfg(test)]
mod tests;
