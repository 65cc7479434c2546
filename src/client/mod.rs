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
//!
//! This file holds the [`Client`], its builder and its defaults; settling
//! the era is in `era.rs`, one request in the settled mode in
//! `request.rs`, and the MCP methods in `calls.rs`.

mod calls;
pub mod cli;
mod era;
mod error;
pub mod redirect;
mod request;
mod shape;
pub mod sse;
pub mod term;
mod transport;
pub mod typed;
mod types;

pub use error::{Error, TransportKind, DISPLAY_DETAIL_CHARS, MAX_ERROR_BODY_BYTES};
pub use redirect::MAX_REDIRECTS;
pub use request::EXAMPLE_NO_SESSION_MESSAGE;
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
use serde_json::{json, Value};

use transport::Transport;

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

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
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
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.end_session();
    }
}
