//! The state-free JSON-RPC 2.0 / MCP dispatcher for both protocol eras.
//!
//! `Mcp::handle` takes the request headers (looked up case-insensitively by
//! the caller's closure) and the raw POST body, and returns either a
//! finished [`Reply`] or a [`PendingCall`] that must run on a worker thread
//! (a `tools/call`). Everything here is pure apart from `PendingCall::run`.
//!
//! Eras share one endpoint and are told apart body first: a request whose
//! `params._meta` carries `io.modelcontextprotocol/protocolVersion` is served
//! under 2026-07-28; anything else under the handshake revisions
//! (2025-11-25, 2025-06-18, 2025-03-26), except that a bare
//! `MCP-Protocol-Version: 2026-07-28` header without the claim is refused.
//! The full ladder is in `dispatch`.
//!
//! Module map: [`jsonrpc`] (envelope, ids), [`version`] (revisions),
//! [`headers`] (mirrored headers, `=?base64?…?=`), [`error`] (codes, HTTP
//! statuses), [`statics`] (results serialized once), `dispatch` (the
//! ladder), `call` (`tools/call`), `resources`.
//!
//! Deliberate choices:
//! - JSON-RPC batch arrays (including `[]`) are refused with 400 `-32600`
//!   and `id: null` in every era, 2025-03-26 included; nothing in them runs.
//! - HTTP statuses come from [`error::http_status`]: modern errors are 4xx
//!   (404 for `-32601`, 400 otherwise, handler `-32602` included); legacy
//!   JSON-RPC errors ride in 200 except `-32700`/`-32600`.
//! - A legacy request whose `MCP-Protocol-Version` names no handshake
//!   revision gets 400 `-32600` (the header, not a param, is wrong);
//!   `initialize` ignores the header and negotiates.
//! - `Mcp-Session-Id` and `Last-Event-ID` are ignored; no session is issued.

pub mod error;
pub mod headers;
pub mod jsonrpc;
pub mod statics;
pub mod version;

mod call;
mod dispatch;
mod resources;
pub mod results;

use std::sync::Arc;

pub use dispatch::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
pub use headers::{decode_header_value, encode_header_value, HeaderValueError};
pub use jsonrpc::Id;
pub use version::ProtocolVersion;

pub use crate::x::tools::{CallOutcome, CallStats};

use crate::x::tools::{Finished, ToolCall, ToolOutput, Tools};

/// Identity and self links of this deployment.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Base URL for self links, e.g. `http://127.0.0.1:8080` (no trailing slash).
    pub public_url: String,
}

/// One static resource (an embedded agent document).
#[derive(Debug, Clone)]
pub struct Resource {
    /// Absolute URI, under the public URL.
    pub uri: String,
    /// Short name.
    pub name: String,
    /// Human title.
    pub title: String,
    /// What it holds.
    pub description: String,
    /// MIME type of `text`.
    pub mime_type: String,
    /// The document body.
    pub text: String,
}

/// A finished answer to one POST.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status to send.
    pub status: u16,
    /// The JSON-RPC message bytes; `None` means `202 Accepted` with no body.
    /// When `tail` is set, the message is `body` followed by `tail`.
    pub body: Option<Vec<u8>>,
    /// The pre-serialized rest of a static result, shared between replies
    /// so it is never copied (see [`Reply::message`]).
    pub tail: Option<Arc<[u8]>>,
}

impl Reply {
    /// The whole JSON-RPC message (`body` then `tail`), copied into one
    /// buffer; `None` for a `202`.
    pub fn message(&self) -> Option<Vec<u8>> {
        let body = self.body.as_ref()?;
        let mut out = body.clone();
        if let Some(tail) = &self.tail {
            out.extend_from_slice(tail);
        }
        Some(out)
    }
}

/// What `handle` decided.
pub enum Outcome {
    /// The answer is ready.
    Reply(Reply),
    /// A validated `tools/call` that must run off the event loop.
    Call(Box<PendingCall>),
}

/// A validated `tools/call`, carrying everything needed to build its reply.
pub struct PendingCall {
    tools: Arc<Tools>,
    results: Arc<results::ResultCache>,
    call: ToolCall,
    id: Id,
    version: ProtocolVersion,
    modern_tail: Arc<[u8]>,
    /// Runs of the call so far ([`PendingCall::step_traced`]): past the
    /// first, it waited for upstream answers.
    steps: std::cell::Cell<u32>,
}

impl PendingCall {
    /// Runs the tool (blocking) and builds the JSON-RPC reply (HTTP 200; a
    /// tool failure is a result with `isError: true`).
    pub fn run(self) -> Reply {
        self.run_traced().0
    }

    /// Like [`PendingCall::run`], but a panic inside the tool becomes a
    /// JSON-RPC `-32603` error carrying the request id (HTTP 500 in the
    /// 2026-07-28 era, 200 in the handshake era) instead of unwinding.
    pub fn run_guarded(self) -> Reply {
        self.run_traced().0
    }

    /// [`PendingCall::run_guarded`] plus what happened, for logs and
    /// metrics. The run goes through [`Tools::run_guarded`], the one run
    /// path the plain HTTP routes use too; a result is stored in the
    /// result cache, so the next identical call is answered without a
    /// worker (replayed as a `hit`).
    pub fn run_traced(self) -> (Reply, CallStats) {
        match self.step_traced() {
            Some(done) => done,
            // Only a restartable run (crate::x::restart) suspends, and it
            // is run by [`PendingCall::step_traced`].
            None => {
                let stats = CallStats {
                    tool: self.call.tool(),
                    outcome: crate::x::tools::CallOutcome::Panic,
                    cache: None,
                    error_code: None,
                    source: None,
                    took: std::time::Duration::ZERO,
                };
                (self.panicked(), stats)
            }
        }
    }

    /// One run of the call, [`PendingCall::run_traced`] for a restartable
    /// run: `None` when the run waits for upstream answers (an event loop
    /// fetches them, then the call runs again; see `crate::x::restart`).
    ///
    /// A call that waited for upstream answers looks in the result cache
    /// first: identical calls that waited together (their upstream
    /// requests joined, `crate::x::restart`) are rendered once, the
    /// others replay that result (`"cache": "hit"`), as a later identical
    /// call would.
    pub fn step_traced(&self) -> Option<(Reply, CallStats)> {
        let restarted = self.steps.get() > 0;
        self.steps.set(self.steps.get().saturating_add(1));
        if restarted {
            if let Some(done) = self.replayed() {
                return Some(done);
            }
        }
        let (finished, stats) = self.tools.run_guarded(&self.call);
        let reply = match finished {
            Finished::Suspended => return None,
            Finished::Served(served) => {
                // Serialized once: the reply and the stored copy are both
                // assembled from these bytes.
                let serialized = call::SerializedOutput::served(&served);
                let reply = self.reply_serialized(&serialized);
                let size = reply.body.as_ref().map_or(0, Vec::len);
                let stored = serialized.replayed();
                drop((serialized, served.text, served.structured, served.wire));
                let key = results::key(&self.call);
                let now = std::time::Instant::now();
                self.results.put(key, stored, size, served.fresh_for, now);
                reply
            }
            Finished::Failed(e) => self.reply(&ToolOutput::error(&e)),
            Finished::Panicked => self.panicked(),
        };
        Some((reply, stats))
    }

    /// The reply of a fresh result of this very call in the result cache,
    /// if one is there: the request's id spliced before the cached tail.
    fn replayed(&self) -> Option<(Reply, CallStats)> {
        let key = results::key(&self.call);
        let now = std::time::Instant::now();
        let tail = self
            .results
            .get(&key, self.version, &self.modern_tail, now)?;
        let reply = Reply {
            status: 200,
            body: Some(jsonrpc::splice(&self.id, b"")),
            tail: Some(tail),
        };
        let stats = CallStats {
            tool: self.call.tool(),
            outcome: crate::x::tools::CallOutcome::Ok,
            cache: Some(crate::x::cache::CacheStatus::Hit),
            error_code: None,
            source: None,
            took: std::time::Duration::ZERO,
        };
        Some((reply, stats))
    }

    /// The `-32603` reply of a tool that panicked.
    fn panicked(&self) -> Reply {
        let era = error::Era::of(self.version);
        let err = error::RpcError::new(
            error::INTERNAL_ERROR,
            "Internal error: the tool failed unexpectedly",
        );
        Reply {
            status: error::http_status(err.code, era),
            body: Some(jsonrpc::error_message(Some(&self.id), &err)),
            tail: None,
        }
    }

    /// The reply when no worker can take the call (every worker busy, the
    /// queue full): HTTP `503` in every revision, a JSON-RPC `-32603` error
    /// with this request's id. The caller adds `Retry-After`.
    pub fn busy(&self) -> Reply {
        let err = error::RpcError::new(error::INTERNAL_ERROR, BUSY_MESSAGE);
        Reply {
            status: 503,
            body: Some(jsonrpc::error_message(Some(&self.id), &err)),
            tail: None,
        }
    }

    /// Builds the reply for an output obtained elsewhere (for instance from
    /// a cache): `{content:[{type:"text",text}], structuredContent?, isError}`
    /// shaped for the request's revision.
    pub fn reply(&self, output: &ToolOutput) -> Reply {
        self.reply_serialized(&call::SerializedOutput::new(output))
    }

    /// [`PendingCall::reply`] from an output serialized before.
    fn reply_serialized(&self, output: &call::SerializedOutput) -> Reply {
        Reply {
            status: 200,
            body: Some(call::reply_from(
                &self.id,
                self.version,
                output,
                &self.modern_tail,
            )),
            tail: None,
        }
    }

    /// The validated call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// Names the client the call is made for (see [`ToolCall::client`]).
    pub fn for_client(mut self, client: std::net::IpAddr) -> PendingCall {
        self.call.client = Some(client);
        self
    }

    /// The request id.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The revision the reply is shaped for.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }
}

/// The dispatcher, with its static results serialized once, on first use.
pub struct Mcp {
    info: ServerInfo,
    tools: Arc<Tools>,
    statics: statics::Statics,
    results: Arc<results::ResultCache>,
}

impl Mcp {
    /// Builds the dispatcher; its static results are serialized on first use.
    pub fn new(info: ServerInfo, resources: Vec<Resource>, tools: Arc<Tools>) -> Mcp {
        Mcp::with_lazy_resources(info, move || resources, tools)
    }

    /// Like [`Mcp::new`], with the resource list built by `resources` on
    /// first use (the first `resources/list` or `resources/read`), so an
    /// idle server holds no document text.
    pub fn with_lazy_resources(
        info: ServerInfo,
        resources: impl FnOnce() -> Vec<Resource> + Send + 'static,
        tools: Arc<Tools>,
    ) -> Mcp {
        let statics = statics::Statics::new(&info, Box::new(resources), tools.settings().max_chars);
        Mcp {
            info,
            tools,
            statics,
            results: Arc::new(results::ResultCache::new(
                results::DEFAULT_RESULT_CACHE_BYTES,
            )),
        }
    }

    /// Sets the tool-result cache budget in bytes (0 turns it off); see
    /// [`results::DEFAULT_RESULT_CACHE_BYTES`].
    pub fn with_result_cache_bytes(mut self, bytes: usize) -> Mcp {
        self.results = Arc::new(results::ResultCache::new(bytes));
        self
    }

    /// Handles one POSTed JSON-RPC message.
    ///
    /// `header` looks a request header up by name (case-insensitively) and
    /// returns its raw value; values are OWS-trimmed here. The lifetime `'h`
    /// lets the closure return slices of the caller's request buffer.
    pub fn handle<'h>(&self, header: &dyn Fn(&str) -> Option<&'h [u8]>, body: &[u8]) -> Outcome {
        self.handle_traced(header, body).0
    }

    /// Like [`Mcp::handle`], also returning the JSON-RPC method of the
    /// message (clipped; `notification` for notifications) for logs and
    /// metrics.
    pub fn handle_traced<'h>(
        &self,
        header: &dyn Fn(&str) -> Option<&'h [u8]>,
        body: &[u8],
    ) -> (Outcome, Option<String>) {
        let mut method = None;
        let outcome = dispatch::handle(self, &headers::Headers::new(header), body, &mut method);
        (outcome, method)
    }

    /// This deployment's identity.
    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// The static resources, in `resources/list` order.
    pub fn resources(&self) -> &[Resource] {
        self.statics.resources()
    }
}

/// The message of the `-32603` error a call gets when every worker is busy
/// and the queue is full.
pub const BUSY_MESSAGE: &str = "Server busy: worker queue full, retry shortly";

/// A JSON-RPC error message with `"id": null`, for transport-level refusals
/// (406, 415, 403 bodies).
pub fn error_without_id(code: i64, message: &str) -> Vec<u8> {
    jsonrpc::error_message(None, &error::RpcError::new(code, message))
}
