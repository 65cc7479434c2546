//! An MCP client for any Streamable HTTP server, both protocol eras: the
//! stateless **2026-07-28** revision and the `initialize` handshake
//! revisions (2025-11-25 / 2025-06-18 / 2025-03-26). Blocking, on `ureq`.
//!
//! ```no_run
//! use serde_json::json;
//! use xmd::client::Client;
//!
//! let client = Client::new("http://127.0.0.1:8080/mcp");
//! for tool in client.list_tools()? {
//!     println!("{}", tool.name);
//! }
//! let r = client.call_tool("x_md_get_post", json!({"url": "https://x.com/a/status/1"}))?;
//! if r.is_error {
//!     eprintln!("tool failed: {}", r.text());
//! }
//! # Ok::<(), xmd::client::Error>(())
//! ```
//!
//! A JSON-RPC error is an [`Error`]; a tool failure is a [`CallToolResult`]
//! with `is_error: true`.
//!
//! **Eras.** [`Era::Auto`] (the default) probes `server/discover` at
//! 2026-07-28; on a 4xx (other than 401/403), a JSON-RPC error or a result
//! that is not a usable discover result, it falls back to the `initialize`
//! handshake. 5xx, 401/403, timeouts and connection failures are fatal: they
//! say nothing about the era. A pinned revision disables the fallback (a
//! pinned handshake-era date goes straight to `initialize`).
//!
//! **Legacy sessions.** An `Mcp-Session-Id` from `initialize` is sent on
//! every later request; a 404 on a request with a session (whatever its
//! body: empty, or the JSON-RPC error the TypeScript and Python SDK servers
//! send), or the 400 of the TypeScript SDK's example servers
//! ([`EXAMPLE_NO_SESSION_MESSAGE`]), starts a new session once and retries
//! (MCP 2025-11-25, Session Management); [`Client::close`] (or drop) sends
//! `DELETE`.
//!
//! **Redirects.** `307` and `308` are followed within the same origin
//! (scheme, host, port), re-sending the method and body, at most
//! [`MAX_REDIRECTS`] hops; another origin, a sixth hop, or `301`–`303`
//! (which would turn the POST into a GET) end the call with an
//! [`Error::HttpStatus`] saying so. A chain of `308`s moves the endpoint.
//!
//! **Hostile servers.** [`Client::deadline`] bounds a whole command
//! (exchanges, resumption waits, redirects, new sessions); the pages of a
//! `list_*` call are capped in total bytes ([`DEFAULT_MAX_LIST_BYTES`]);
//! at most [`MAX_SERVER_REQUESTS_ANSWERED`] server requests are answered
//! by one client (per command, all its calls together); a message nested deeper than [`MAX_REPLY_DEPTH`], or holding
//! more than [`MAX_REPLY_VALUES`] values or [`MAX_REPLY_OBJECTS`] objects
//! (one message, or the pages of one list together), is refused before it
//! is parsed.
//! No standalone GET stream is opened: the client needs no server-initiated
//! messages. **SSE resumption** (2025-11-25, SEP-1699): a reply stream that
//! announced an event `id` and closes before the response is resumed with
//! `GET` and `Last-Event-ID`, after the stream's `retry` wait (bounded by
//! [`MAX_SSE_RETRY`]), at most [`MAX_SSE_RESUMES`] times. A server request arriving on a legacy SSE reply is answered
//! (`ping` with `{}`, anything else with -32601).

pub mod cli;
mod error;
pub mod redirect;
mod shape;
pub mod sse;
pub mod term;
mod transport;
pub mod typed;
mod types;

pub use error::{Error, TransportKind, DISPLAY_DETAIL_CHARS, MAX_ERROR_BODY_BYTES};
pub use redirect::MAX_REDIRECTS;
pub use shape::{MAX_REPLY_DEPTH, MAX_REPLY_OBJECTS, MAX_REPLY_VALUES};
pub use transport::{
    Trace, ACCEPT_POST, CLIENT_USER_AGENT, DEFAULT_SSE_RETRY, MAX_RESPONSE_BYTES, MAX_SSE_RESUMES,
    MAX_SSE_RETRY,
};
pub use types::*;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::mcp::headers::{
    encode_header_value, HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_MCP_PROTOCOL_VERSION,
    HEADER_MCP_SESSION_ID,
};
use crate::mcp::version::ProtocolVersion;
use shape::Tally;
use transport::{Received, Transport};

/// The URL `xmd client` talks to by default (`xmd serve`'s default endpoint).
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080/mcp";

/// Default timeout of one HTTP exchange (connect, send, read the whole
/// reply, SSE included): 30 s. Past it the call fails with
/// [`Error::Transport`] of kind [`TransportKind::Timeout`]. `xmd client`
/// also uses it as the default time limit of the whole command
/// (`--timeout`, through [`Client::deadline`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Most pages a `list_*` call follows through `nextCursor`: 1000. A server
/// that keeps handing out cursors past it, or hands out any cursor it gave
/// before in the same walk (a cycle A→B→A, however long), ends the call with
/// a protocol violation naming the cursor instead of looping.
pub const MAX_LIST_PAGES: usize = 1000;

/// Most bytes the pages of one `list_*` call may hold together (reply
/// bodies as read, SSE framing included): 8 MiB. Once the pages read pass
/// it, the call ends with a protocol violation naming the page, the bytes
/// and this limit ([`Client::max_list_bytes`], `xmd client
/// --max-list-bytes`), so memory stays bounded however many pages a server
/// hands out; nothing partial is returned as if whole.
pub const DEFAULT_MAX_LIST_BYTES: u64 = 8 * 1024 * 1024;

/// Most server-to-client requests (sent on the SSE streams of our
/// requests) one [`Client`] answers in its whole life, `ping` with `{}`,
/// anything else with -32601: 16. `xmd client` makes one `Client` per
/// command, so this is per command, however many exchanges the command
/// takes (the pages of a `list_*` walk, the handshake and the call, a retry
/// on a new session). Later ones are read and left unanswered (one
/// `--verbose` line says so, for the first of them; the command goes on
/// and ends by its reply or `--timeout`), so a server cannot make the
/// client POST without end.
pub const MAX_SERVER_REQUESTS_ANSWERED: u32 = 16;

/// `clientInfo.name` the client announces.
pub const CLIENT_NAME: &str = "xmd-client";

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What the client speaks on each request once settled.
#[derive(Debug, Clone)]
enum Mode {
    Modern {
        version: String,
    },
    Legacy {
        version: String,
        session: Option<String>,
    },
}

#[derive(Default)]
struct State {
    /// The settled connection (after a probe or handshake).
    conn: Option<Connection>,
}

/// A blocking MCP client for one Streamable HTTP endpoint. Methods take
/// `&self` and may be called from several threads; the era is settled on
/// the first call (or by [`Client::initialize`]).
pub struct Client {
    transport: Transport,
    max_list_bytes: u64,
    era: Era,
    pin: Option<String>,
    next_id: AtomicI64,
    /// Server requests answered so far (at most
    /// [`MAX_SERVER_REQUESTS_ANSWERED`], all calls together).
    answered: AtomicU32,
    /// Whether the `--verbose` line about unanswered requests was written
    /// (once: a flood of them is not echoed line by line).
    told_unanswered: AtomicBool,
    state: Mutex<State>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.transport.url())
            .field("era", &self.era)
            .field("pin", &self.pin)
            .finish_non_exhaustive()
    }
}

/// True for a date-shaped revision before 2026-07-28 (a handshake revision).
fn is_handshake_revision(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
        && v < ProtocolVersion::MODERN.as_str()
}

/// The body field mirrored in `Mcp-Name` for a method, if any.
fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// A cursor's fingerprint for cycle detection.
fn cursor_hash(cursor: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(cursor)
}

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

fn into_result(received: Received) -> Result<Value, Error> {
    let mut m = received.message;
    if let Some(e) = m.get("error") {
        return Err(Error::JsonRpc {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: e.get("data").cloned(),
        });
    }
    match m.get_mut("result").map(Value::take) {
        Some(r @ Value::Object(_)) => Ok(r),
        Some(other) => Err(Error::protocol(format!(
            "result is not an object: {}",
            error::one_line(&other.to_string(), 100)
        ))),
        None => Err(Error::protocol("response has neither result nor error")),
    }
}

/// The answer the TypeScript SDK's example servers give a request whose
/// `Mcp-Session-Id` they do not know: 400 with this JSON-RPC error message
/// (typescript-sdk v1.29.0 src/examples/server/simpleStreamableHttp.ts
/// and four more examples; @modelcontextprotocol/server-everything
/// 2026.8.31 dist/transports/streamableHttp.js), instead of the 404 the
/// spec asks for. Read as an expired session too.
pub const EXAMPLE_NO_SESSION_MESSAGE: &str = "Bad Request: No valid session ID provided";

fn is_example_no_session(r: &Received) -> bool {
    r.status == 400
        && r.message.pointer("/error/message").and_then(Value::as_str)
            == Some(EXAMPLE_NO_SESSION_MESSAGE)
}

/// 2026-07-28: every result states its `resultType`.
fn check_result_type(method: &str, r: &Value) -> Result<(), Error> {
    match r.get("resultType") {
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(Value::String(t)) if t == "input_required" => Err(Error::protocol(format!(
            "{method}: server asked for client input (resultType input_required), which this client does not support (it declares no client capabilities)"
        ))),
        Some(other) => Err(Error::protocol(format!(
            "{method}: unknown resultType {other}"
        ))),
        None => Err(Error::protocol(format!(
            "{method}: 2026-07-28 result without resultType"
        ))),
    }
}

fn parse<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, Error> {
    serde_json::from_value(v).map_err(|e| Error::protocol(format!("invalid {what} result: {e}")))
}

impl Client {
    /// A client for `url` with the defaults: era auto, no pin,
    /// [`DEFAULT_TIMEOUT`], no extra headers.
    pub fn new(url: &str) -> Client {
        Client {
            transport: Transport::new(url, DEFAULT_TIMEOUT),
            max_list_bytes: DEFAULT_MAX_LIST_BYTES,
            era: Era::Auto,
            pin: None,
            next_id: AtomicI64::new(1),
            answered: AtomicU32::new(0),
            told_unanswered: AtomicBool::new(false),
            state: Mutex::new(State::default()),
        }
    }

    /// Sets the timeout of each HTTP exchange.
    pub fn timeout(mut self, timeout: Duration) -> Client {
        self.transport.set_timeout(timeout);
        self
    }

    /// A deadline for everything this client does: every exchange,
    /// resumption wait, redirect and new session. Past it a call fails with
    /// [`Error::Transport`] of kind [`TransportKind::Timeout`] (an exchange
    /// in flight is cut when the deadline comes).
    pub fn deadline(mut self, deadline: Instant) -> Client {
        self.transport.set_deadline(Some(deadline));
        self
    }

    /// The total bytes the pages of one `list_*` call may hold (default
    /// [`DEFAULT_MAX_LIST_BYTES`]).
    pub fn max_list_bytes(mut self, bytes: u64) -> Client {
        self.max_list_bytes = bytes;
        self
    }

    /// Adds a header to every request (e.g. `Authorization`). A header named
    /// like one the client sets itself replaces the client's.
    pub fn header(mut self, name: &str, value: &str) -> Client {
        self.transport.add_header(name, value);
        self
    }

    /// Chooses the era (default [`Era::Auto`]).
    pub fn era(mut self, era: Era) -> Client {
        self.era = era;
        self
    }

    /// Pins the protocol revision: exactly this one is offered, with no
    /// fallback. A date before 2026-07-28 selects the handshake in auto mode.
    pub fn pin_version(mut self, version: &str) -> Client {
        self.pin = Some(version.to_string());
        self
    }

    /// Sees one line per HTTP exchange (what `xmd client --verbose` prints).
    pub fn trace(mut self, trace: Trace) -> Client {
        self.transport.set_trace(Some(trace));
        self
    }

    /// The connection settled so far, if any.
    pub fn connection(&self) -> Option<Connection> {
        self.lock().conn.clone()
    }

    /// The legacy `Mcp-Session-Id` in use, if the server issued one.
    pub fn session_id(&self) -> Option<String> {
        self.lock().conn.as_ref().and_then(|c| c.session_id.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn modern_version(&self) -> String {
        self.pin
            .clone()
            .unwrap_or_else(|| ProtocolVersion::MODERN.as_str().to_string())
    }

    /// Settles the era: the probe and/or handshake, once. Returns the mode
    /// every request then uses.
    fn mode(&self) -> Result<Mode, Error> {
        if self.era == Era::Modern {
            if let Some(c) = &self.lock().conn {
                return Ok(Mode::Modern {
                    version: c.protocol_version.clone(),
                });
            }
            return Ok(Mode::Modern {
                version: self.modern_version(),
            });
        }
        let mut st = self.lock();
        if st.conn.is_none() {
            st.conn = Some(self.settle()?);
        }
        Ok(mode_of(st.conn.as_ref().expect("settled")))
    }

    fn settle(&self) -> Result<Connection, Error> {
        let legacy_pin = self.pin.as_deref().is_some_and(is_handshake_revision);
        if self.era == Era::Legacy || legacy_pin {
            return self.handshake();
        }
        match self.probe() {
            Ok(c) => Ok(c),
            Err(Probe::Fatal(e)) => Err(e),
            Err(Probe::NotModern(e)) if self.pin.is_some() => Err(e),
            Err(Probe::NotModern(_)) => self.handshake(),
        }
    }

    /// Sends a modern `server/discover` and returns the raw result.
    fn discover_raw(&self) -> Result<(Received, Value), Error> {
        let version = self.modern_version();
        let (body, headers) = self.modern_message("server/discover", json!({}), &version);
        let received = self.transport.request(&body, &headers, &mut |_| {})?;
        let raw = received.message.clone();
        Ok((received, raw))
    }

    fn probe(&self) -> Result<Connection, Probe> {
        let version = self.modern_version();
        let received = match self.discover_raw() {
            Ok((r, _)) => r,
            Err(e @ Error::HttpStatus { status, .. })
                if (400..500).contains(&status) && status != 401 && status != 403 =>
            {
                return Err(Probe::NotModern(e))
            }
            Err(e @ Error::Protocol(_)) => return Err(Probe::NotModern(e)),
            Err(e) => return Err(Probe::Fatal(e)),
        };
        let status = received.status;
        let result = match into_result(received) {
            Ok(r) => r,
            Err(e @ Error::JsonRpc { .. }) if status == 401 || status == 403 || status >= 500 => {
                return Err(Probe::Fatal(e))
            }
            Err(e) => return Err(Probe::NotModern(e)),
        };
        check_result_type("server/discover", &result).map_err(Probe::NotModern)?;
        let d: DiscoverResult = parse("server/discover", result).map_err(Probe::NotModern)?;
        if !d.supported_versions.contains(&version) {
            return Err(Probe::NotModern(Error::protocol(format!(
                "server/discover: server does not support {version} (it supports {})",
                d.supported_versions.join(", ")
            ))));
        }
        Ok(Connection {
            era: Era::Modern,
            protocol_version: version,
            server_info: d.server_info(),
            capabilities: d.capabilities,
            instructions: d.instructions,
            session_id: None,
        })
    }

    /// The legacy handshake: `initialize`, version check,
    /// `notifications/initialized`.
    fn handshake(&self) -> Result<Connection, Error> {
        let offered = self
            .pin
            .clone()
            .unwrap_or_else(|| ProtocolVersion::LATEST_LEGACY.as_str().to_string());
        let body = json!({
            "jsonrpc": "2.0", "id": self.id(), "method": "initialize",
            "params": {"protocolVersion": offered, "capabilities": {}, "clientInfo": client_info()}
        });
        let received = self.transport.request(&body, &[], &mut |_| {})?;
        let session = received.session_id.clone();
        let init: InitializeResult = parse("initialize", into_result(received)?)?;
        let chosen = init.protocol_version.clone();
        let acceptable = match &self.pin {
            Some(p) => *p == chosen,
            None => ProtocolVersion::LEGACY.iter().any(|v| v.as_str() == chosen),
        };
        let mut headers = vec![(HEADER_MCP_PROTOCOL_VERSION, chosen.clone())];
        if let Some(s) = &session {
            headers.push((HEADER_MCP_SESSION_ID, s.clone()));
        }
        if !acceptable {
            if session.is_some() {
                let _ = self.transport.delete(&headers);
            }
            let speaks = match &self.pin {
                Some(p) => p.clone(),
                None => ProtocolVersion::LEGACY.map(|v| v.as_str()).join(", "),
            };
            return Err(Error::protocol(format!(
                "server chose protocol version {chosen}, which this client does not speak here (offered {offered}; accepts {speaks})"
            )));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.transport.notify(&note, &headers)?;
        Ok(Connection {
            era: Era::Legacy,
            protocol_version: chosen,
            server_info: Some(init.server_info),
            capabilities: init.capabilities,
            instructions: init.instructions,
            session_id: session,
        })
    }

    /// A modern request body and its headers.
    fn modern_message(
        &self,
        method: &str,
        params: Value,
        version: &str,
    ) -> (Value, Vec<(&'static str, String)>) {
        let mut params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                // Not an object: sent as given (the server will refuse it).
                return (
                    json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": other}),
                    vec![
                        (HEADER_MCP_PROTOCOL_VERSION, version.to_string()),
                        (HEADER_MCP_METHOD, method.to_string()),
                    ],
                );
            }
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry(META_PROTOCOL_VERSION)
                .or_insert_with(|| json!(version));
            meta.entry(META_CLIENT_INFO).or_insert_with(client_info);
            meta.entry(META_CLIENT_CAPABILITIES)
                .or_insert_with(|| json!({}));
        }
        let mut headers = vec![
            (HEADER_MCP_PROTOCOL_VERSION, version.to_string()),
            (HEADER_MCP_METHOD, method.to_string()),
        ];
        if let Some(field) = name_field(method) {
            if let Some(v) = params.get(field).and_then(Value::as_str) {
                headers.push((HEADER_MCP_NAME, encode_header_value(v)));
            }
        }
        let body = json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": params});
        (body, headers)
    }

    /// One request in the settled mode; returns the inner `result`.
    fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request_counted(method, params).map(|(r, _)| r)
    }

    /// [`Client::request`], with what its reply held.
    fn request_counted(&self, method: &str, params: Value) -> Result<(Value, Tally), Error> {
        match self.mode()? {
            Mode::Modern { version } => {
                let (body, headers) = self.modern_message(method, params, &version);
                let received = self.transport.request(&body, &headers, &mut |_| {})?;
                let tally = received.tally;
                let r = into_result(received)?;
                check_result_type(method, &r)?;
                Ok((r, tally))
            }
            Mode::Legacy { version, session } => {
                let first = self.legacy_request(method, &params, &version, session.as_deref());
                // A 404 to a request carrying a session means the session is
                // gone, whatever the body: empty, or a JSON-RPC error (the
                // TypeScript SDK's -32001 "Session not found", the Python
                // SDK's -32600 "Session not found").
                let gone = match &first {
                    Err(Error::HttpStatus { status: 404, .. }) => true,
                    Ok(r) => r.status == 404 || is_example_no_session(r),
                    Err(_) => false,
                };
                let received = if gone && session.is_some() {
                    // The session expired: start a new one, retry once.
                    self.transport.trace_line(|| {
                        "< 404 to a request with a session: starting a new session".into()
                    });
                    self.forget_session(session.as_deref());
                    match self.mode()? {
                        Mode::Legacy { version, session } => {
                            self.legacy_request(method, &params, &version, session.as_deref())?
                        }
                        Mode::Modern { .. } => unreachable!("legacy stays legacy"),
                    }
                } else {
                    first?
                };
                let tally = received.tally;
                Ok((into_result(received)?, tally))
            }
        }
    }

    fn forget_session(&self, session: Option<&str>) {
        let mut st = self.lock();
        if st.conn.as_ref().and_then(|c| c.session_id.as_deref()) == session {
            st.conn = None;
        }
    }

    fn legacy_request(
        &self,
        method: &str,
        params: &Value,
        version: &str,
        session: Option<&str>,
    ) -> Result<Received, Error> {
        let mut body = json!({"jsonrpc": "2.0", "id": self.id(), "method": method});
        if !params.is_null() {
            body["params"] = params.clone();
        }
        let mut headers = vec![(HEADER_MCP_PROTOCOL_VERSION, version.to_string())];
        if let Some(s) = session {
            headers.push((HEADER_MCP_SESSION_ID, s.to_string()));
        }
        let transport = &self.transport;
        let mut answer = |req: &Value| {
            let what = req.get("method").and_then(Value::as_str).unwrap_or("?");
            // One budget for the client's whole life (one command), taken
            // atomically: calls from several threads share it too.
            let took = self
                .answered
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    (n < MAX_SERVER_REQUESTS_ANSWERED).then_some(n + 1)
                })
                .is_ok();
            if !took {
                if !self.told_unanswered.swap(true, Ordering::SeqCst) {
                    transport.trace_line(|| {
                        format!("< SSE request '{what}' not answered, nor any later one (more than {MAX_SERVER_REQUESTS_ANSWERED} in this command)")
                    });
                }
                return;
            }
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            let reply = if what == "ping" {
                json!({"jsonrpc": "2.0", "id": id, "result": {}})
            } else {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "Method not found"}})
            };
            let _ = transport.notify(&reply, &headers);
        };
        transport.request(&body, &headers, &mut answer)
    }

    /// Settles the era and returns what was negotiated: the `initialize`
    /// handshake in the legacy era, a `server/discover` round trip in the
    /// modern one (auto mode: whichever the probe chose).
    ///
    /// # Errors
    /// Any [`Error`]; in the modern era also a result without `resultType`
    /// or without the pinned version among `supportedVersions`.
    pub fn initialize(&self) -> Result<Connection, Error> {
        if self.era == Era::Modern {
            let mut st = self.lock();
            if let Some(c) = &st.conn {
                return Ok(c.clone());
            }
            let c = match self.probe() {
                Ok(c) => c,
                Err(Probe::Fatal(e) | Probe::NotModern(e)) => return Err(e),
            };
            st.conn = Some(c.clone());
            return Ok(c);
        }
        self.mode()?;
        Ok(self.connection().expect("settled"))
    }

    /// `server/discover` (2026-07-28 framing, at the pinned revision if any),
    /// whatever the era.
    ///
    /// # Errors
    /// Any [`Error`]; a result without `resultType` is a protocol violation.
    pub fn discover(&self) -> Result<DiscoverResult, Error> {
        let (received, _) = self.discover_raw()?;
        let r = into_result(received)?;
        check_result_type("server/discover", &r)?;
        parse("server/discover", r)
    }

    /// Liveness check: legacy `ping`; in the 2026-07-28 era, which removed
    /// `ping`, a `server/discover` round trip.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn ping(&self) -> Result<(), Error> {
        match self.mode()? {
            Mode::Modern { .. } => self.request("server/discover", json!({})).map(drop),
            Mode::Legacy { .. } => self.request("ping", Value::Null).map(drop),
        }
    }

    /// Any method; returns the inner `result` object as sent.
    ///
    /// `params` is an object or `null` (none). In the modern era the client
    /// adds the `_meta` fields the caller did not set.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn rpc(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.request(method, params)
    }

    fn list_all<T: DeserializeOwned>(&self, method: &str, key: &str) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        // Every cursor followed so far (as a hash: the set stays small
        // whatever the cursors' size): any revisit is a cycle, however long.
        let mut seen = std::collections::HashSet::new();
        let mut total = Tally::default();
        for page in 1..=MAX_LIST_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let (mut r, tally) = self.request_counted(method, params)?;
            // What the items kept so far cost: the same caps as one reply.
            total.add(tally, &format!("{method}: {page} pages hold"), "stopped")?;
            if total.bytes > self.max_list_bytes {
                return Err(Error::protocol(format!(
                    "{method}: {page} pages hold {} bytes, more than the limit of {} bytes for one list (--max-list-bytes); stopped",
                    total.bytes, self.max_list_bytes
                )));
            }
            let items = match r.get_mut(key).map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(Error::protocol(format!(
                        "{method}: result has no {key} array"
                    )))
                }
            };
            for item in items {
                out.push(parse(method, item)?);
            }
            match r.get("nextCursor") {
                None | Some(Value::Null) => return Ok(out),
                Some(Value::String(next)) if !seen.insert(cursor_hash(next)) => {
                    return Err(Error::protocol(format!(
                        "{method}: server repeated cursor {next:?} after page {page} (a cursor cycle); stopped"
                    )))
                }
                Some(Value::String(next)) => cursor = Some(next.clone()),
                Some(other) => {
                    return Err(Error::protocol(format!(
                        "{method}: nextCursor is not a string: {other}"
                    )))
                }
            }
        }
        Err(Error::protocol(format!(
            "{method}: more than {MAX_LIST_PAGES} pages"
        )))
    }

    /// Every tool, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all("tools/list", "tools")
    }

    /// Calls a tool. `arguments` is an object, or `null` to send none.
    /// A tool failure is `Ok` with `is_error: true`.
    ///
    /// # Errors
    /// Any [`Error`] (an unknown tool is a JSON-RPC error, usually -32602).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        let mut params = json!({"name": name});
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        parse("tools/call", self.request("tools/call", params)?)
    }

    /// Every resource, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all("resources/list", "resources")
    }

    /// Every resource template, following `nextCursor` to the end.
    ///
    /// # Errors
    /// Any [`Error`].
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all("resources/templates/list", "resourceTemplates")
    }

    /// Reads one resource.
    ///
    /// # Errors
    /// Any [`Error`] (a missing resource is a JSON-RPC error: -32602 in
    /// 2026-07-28, usually -32002 before).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        parse(
            "resources/read",
            self.request("resources/read", json!({"uri": uri}))?,
        )
    }

    /// Ends a legacy session: `DELETE` with the `Mcp-Session-Id` (nothing to
    /// do without one). 2xx, 404 (already gone) and 405 (the server does not
    /// allow termination) all count as closed.
    ///
    /// # Errors
    /// [`Error::Transport`] or any other [`Error::HttpStatus`].
    pub fn close(self) -> Result<(), Error> {
        self.end_session()
    }

    fn end_session(&self) -> Result<(), Error> {
        let conn = self.lock().conn.take();
        let Some(Connection {
            session_id: Some(session),
            protocol_version,
            ..
        }) = conn
        else {
            return Ok(());
        };
        let headers = [
            (HEADER_MCP_SESSION_ID, session),
            (HEADER_MCP_PROTOCOL_VERSION, protocol_version),
        ];
        match self.transport.delete(&headers)? {
            s if (200..300).contains(&s) || s == 404 || s == 405 => Ok(()),
            status => Err(Error::HttpStatus {
                status,
                body: String::new(),
            }),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.end_session();
    }
}

enum Probe {
    /// The answer says nothing about the era (5xx, auth, transport).
    Fatal(Error),
    /// The server does not speak 2026-07-28 (fall back unless pinned).
    NotModern(Error),
}

fn mode_of(c: &Connection) -> Mode {
    match c.era {
        Era::Legacy => Mode::Legacy {
            version: c.protocol_version.clone(),
            session: c.session_id.clone(),
        },
        _ => Mode::Modern {
            version: c.protocol_version.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_revisions_are_dates_before_2026_07_28() {
        assert!(is_handshake_revision("2025-11-25"));
        assert!(is_handshake_revision("2024-11-05"));
        assert!(!is_handshake_revision("2026-07-28"));
        assert!(!is_handshake_revision("2099-01-01"));
        assert!(!is_handshake_revision("v999.0.0"));
        assert!(!is_handshake_revision("2025-1-125"));
    }

    #[test]
    fn modern_message_adds_meta_and_headers() {
        let c = Client::new("http://127.0.0.1:9/mcp");
        let (body, headers) = c.modern_message(
            "tools/call",
            json!({"name": "météo", "_meta": {"io.modelcontextprotocol/clientCapabilities": {"x": {}}}}),
            "2026-07-28",
        );
        assert_eq!(body["method"], "tools/call");
        assert_eq!(body["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(
            body["params"]["_meta"][META_CLIENT_INFO]["name"],
            CLIENT_NAME
        );
        // The caller's own _meta entries win.
        assert_eq!(
            body["params"]["_meta"][META_CLIENT_CAPABILITIES],
            json!({"x": {}})
        );
        assert_eq!(
            headers,
            vec![
                (HEADER_MCP_PROTOCOL_VERSION, "2026-07-28".to_string()),
                (HEADER_MCP_METHOD, "tools/call".to_string()),
                (HEADER_MCP_NAME, "=?base64?bcOpdMOpbw==?=".to_string()),
            ]
        );
        let (_, h) = c.modern_message(
            "resources/read",
            json!({"uri": "file:///a b"}),
            "2026-07-28",
        );
        assert_eq!(h[2], (HEADER_MCP_NAME, "file:///a b".to_string()));
        let (_, h) = c.modern_message("tools/list", Value::Null, "2026-07-28");
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn result_type_rules() {
        assert!(check_result_type("m", &json!({"resultType": "complete"})).is_ok());
        assert_eq!(
            check_result_type("tools/list", &json!({"tools": []})),
            Err(Error::protocol(
                "tools/list: 2026-07-28 result without resultType"
            ))
        );
        assert!(check_result_type("m", &json!({"resultType": "input_required"})).is_err());
        assert!(check_result_type("m", &json!({"resultType": 1})).is_err());
    }
}
