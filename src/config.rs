//! Every setting of the server, with its default and unit, and the value
//! types of the settings that are more than a number ([`LogFormat`],
//! [`proxies::TrustedProxies`]). No logic beyond defaults and parsing a
//! setting's value lives here; `cli` fills a [`Config`] from flags and
//! `XMD_*` environment variables.
//!
//! A leaf: it imports nothing from the crate. The modules that enforce a
//! setting read its default from here.

use std::net::SocketAddr;
use std::time::Duration;

pub mod proxies;

use proxies::TrustedProxies;

/// Default listen address (`--listen`, `XMD_LISTEN`).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Default upstream base URL (`--upstream`, `XMD_UPSTREAM`).
pub const DEFAULT_UPSTREAM: &str = "https://api.fxtwitter.com";

/// Default base URL of the post fallback, X's syndication endpoint
/// (`--syndication-url`, `XMD_SYNDICATION_URL`). An empty value turns the
/// fallback off: a post read then fails with FxTwitter's error.
pub const DEFAULT_SYNDICATION_URL: &str = "https://cdn.syndication.twimg.com";

/// Global timeout of one request to the syndication fallback
/// (`--syndication-timeout`, `XMD_SYNDICATION_TIMEOUT`).
///
/// Default is 5 s. Past it the fallback has failed too, and the tool error
/// names both providers.
pub const DEFAULT_SYNDICATION_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest request head (request line plus headers) in bytes.
///
/// Default is 16 KiB. A longer head is answered `431 Request Header Fields
/// Too Large` and the connection is closed.
pub const DEFAULT_MAX_HEAD_BYTES: usize = 16 * 1024;

/// Most header fields in one request.
///
/// Default is 64. More are answered `431` and the connection is closed.
pub const DEFAULT_MAX_HEADERS: usize = 64;

/// Largest request body in bytes (after chunked decoding).
///
/// Default is 1 MiB. A larger announced or received body is answered
/// `413 Content Too Large` and the connection is closed; nothing is
/// allocated from the announced length before the bytes arrive.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Time allowed from the first byte of a request head to its end.
///
/// Default is 10 s. A slower head is answered `408 Request Timeout` and the
/// connection is closed (slowloris protection: the clock does not restart
/// per byte).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Time allowed from the end of a head to the end of its body.
///
/// Default is 30 s. A stalled body is answered `408` and the connection is
/// closed.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an idle keep-alive connection stays open between requests.
///
/// Default is 60 s. Then it is closed without a response.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a response may wait for the peer to read it.
///
/// Default is 30 s. Then the connection is closed.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Most open client connections.
///
/// Default is 10,000. A connection past it gets `503 Service Unavailable`
/// with `Retry-After: 1` and is closed at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// Most worker threads that run blocking tool calls (upstream requests).
/// Threads start on demand and exit after idling for
/// `server::workers::WORKER_IDLE_EXIT` (60 s), so an idle server runs
/// none.
///
/// Default is 64. With every worker busy, calls wait in the queue
/// ([`DEFAULT_QUEUE`]).
pub const DEFAULT_WORKERS: usize = 64;

/// Event-loop threads, each accepting on the same listening socket and
/// serving the connections it accepted; all share the worker pool.
///
/// Default is 2, or the number of CPUs when that is fewer. One thread
/// cannot keep up with a load generator on the same two cores (it gets a
/// third of them); a second one lets the server use the CPU it is given.
/// More loops than CPUs only add context switches, and each new
/// connection wakes every loop (measured on 2 cores: 23,000 new
/// connections/s with 1 or 2 loops, 17,000 with 8, 6,000 with 64).
pub const DEFAULT_EVENT_LOOPS: usize = 2;

/// Most event-loop threads `--event-loops` accepts.
///
/// Default is 64; a larger value is a usage error (exit status 2).
pub const MAX_EVENT_LOOPS: usize = 64;

/// [`DEFAULT_EVENT_LOOPS`], capped at the CPUs this process may use.
pub fn default_event_loops() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, DEFAULT_EVENT_LOOPS)
}

/// Tool calls that may wait for a free worker.
///
/// Default is 1,024. A call past it is answered `503 Service Unavailable`
/// with `Retry-After: 1`.
pub const DEFAULT_QUEUE: usize = 1024;

/// Global timeout of one upstream request (connect, send, receive).
///
/// Default is 10 s. Past it the tool answers `isError: true` with code
/// `fxtwitter_timeout`.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// How long graceful shutdown waits for in-flight requests.
///
/// Default is 10 s. Connections still busy then are closed.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Largest value of every setting given in seconds (the timeouts, the call
/// deadline, the shutdown grace): 604,800 (one week). A larger one is a
/// usage error (exit 2) naming the range: a deadline that far off is never
/// reached, and a value near `u64::MAX` seconds overflowed the clock
/// arithmetic (every tool call panicked with `-32603`).
pub const MAX_SECONDS: u64 = 7 * 24 * 60 * 60;

/// Default for `--max-buffered-bytes`: 64 MiB.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

/// Default for `--max-connections-per-ip`: 256 (0 turns the cap off).
///
/// Generous for a NAT or an office behind one address (an agent holds one
/// or two keep-alive connections), and a quarter of a percent of the
/// default `--max-connections` per address.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

/// Default byte budget of the cache: 32 MiB. When full, the least recently
/// used answers are dropped; the agent then sees `cache: "miss"` for them.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Default budget of the tool calls' working set, in bytes
/// (`--max-working-bytes`, `XMD_MAX_WORKING_BYTES`; 0 turns it off): 64 MiB.
///
/// Every upstream answer a call reads counts for it at 12 times its size
/// (`x::memory::WORK_BYTES_PER_BODY_BYTE`: what its parse and render hold
/// at most) until the call ends. A call that does not fit waits its turn
/// up to 10 s, then gets a retryable tool error (`… (HTTP 503, code
/// memory_budget, retry after 1s)`; the X routes: `503` with
/// `Retry-After: 1`). With the caches (`--cache-bytes` and half of it for
/// results) the default keeps the server within 128 MiB over its idle RSS.
pub const DEFAULT_MAX_WORKING_BYTES: usize = 64 * 1024 * 1024;

/// Default per-client `tools/call` rate, in calls per second
/// (`--rate-limit`, `XMD_RATE_LIMIT`; 0 turns the limit off).
///
/// Default is 10/s sustained, generous for an agent (which waits for each
/// answer) and far below what one address can send. Past it (and the burst)
/// the client gets an `isError` result naming the seconds to wait. A call
/// answered from the result cache on the event loop is not counted: it
/// costs no worker and no upstream request.
pub const DEFAULT_RATE_LIMIT: u32 = 10;

/// Default per-client burst: tool calls a fresh client may make at once
/// (`--rate-burst`, `XMD_RATE_BURST`).
///
/// Default is 60. Past it the client is held to [`DEFAULT_RATE_LIMIT`].
pub const DEFAULT_RATE_BURST: u32 = 60;

/// Default global upstream budget, in requests per second
/// (`--upstream-budget`, `XMD_UPSTREAM_BUDGET`; 0 turns it off).
///
/// Default is 15/s. FxTwitter documents an edge limit of 1000 requests per
/// minute per IP address (16.7/s); 15/s sustained plus the burst below
/// makes at most 945 requests in any minute, so a flood of uncached calls
/// cannot get this server's address banned. Cache hits and coalesced calls
/// spend nothing. With several `--upstream` bases on different hosts the
/// budget still counts them together; raise it accordingly. Past it the
/// agent sees `… (HTTP 503, code upstream_budget, retry after 1s)`.
pub const DEFAULT_UPSTREAM_BUDGET: u32 = 15;

/// Default budget of a result's text content: 40,000 characters (UTF-16
/// code units, as JavaScript counts them) and, with it, half as many
/// estimated tokens, 20,000 (`x::budget::Measure`: a conservative
/// estimate, non-ASCII text costing a token or more per character). Both
/// stay a fifth under what Claude Code keeps inline (50,000 characters,
/// 25,000 tokens), whatever the script. Setting: `--max-result-chars` /
/// `XMD_MAX_RESULT_CHARS`. Past it the result stops at a post or row
/// boundary with a note naming the call that continues.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 40_000;

/// Shortest `--cursor-secret` / `XMD_CURSOR_SECRET` accepted, in bytes:
/// 32, the size of an HMAC-SHA256 output (RFC 2104 §3). A shorter secret
/// is a usage error (exit 2). Without a secret each process draws a
/// random key at start, so its cursors are refused by other replicas and
/// after a restart.
pub const MIN_CURSOR_SECRET_BYTES: usize = 32;

/// The key material of `--cursor-secret`: never printed (its `Debug`
/// says only its length).
#[derive(Clone, PartialEq, Eq)]
pub struct CursorSecret(pub Vec<u8>);

impl std::fmt::Debug for CursorSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CursorSecret({} bytes)", self.0.len())
    }
}

/// Default deadline of one tool call: 30 s, under the TypeScript SDKs'
/// 60 s request timeout. Setting: `--call-timeout` / `XMD_CALL_TIMEOUT`.
/// A thread walk that reaches it returns what it has with a note; with
/// nothing to show the result is `isError` with code `deadline`.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Access-log format (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `time client method path status bytes duration key=value…`; the
    /// client is the TCP peer, or the address a trusted proxy reported
    /// (then `via=<peer>` follows).
    Plain,
    /// One JSON object per line.
    Json,
    /// No access log (start-up and shutdown lines are still written).
    Off,
}

impl LogFormat {
    /// Parses `plain`, `json` or `off`.
    pub fn parse(s: &str) -> Option<LogFormat> {
        match s {
            "plain" => Some(LogFormat::Plain),
            "json" => Some(LogFormat::Json),
            "off" => Some(LogFormat::Off),
            _ => None,
        }
    }
}

/// Who makes the upstream requests of tool calls (`--upstream-io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamIo {
    /// The event loops (the default): no thread waits for the upstream; a
    /// call waiting for an answer is parked on its loop, and
    /// `--call-timeout` also cuts a request in flight.
    Loop,
    /// The workers, with the blocking `ureq` client (the behaviour before
    /// issue 28), kept as the fallback: a worker waits through each
    /// request.
    Threads,
}

impl UpstreamIo {
    /// Parses `loop` or `threads`.
    pub fn parse(s: &str) -> Option<UpstreamIo> {
        match s {
            "loop" => Some(UpstreamIo::Loop),
            "threads" => Some(UpstreamIo::Threads),
            _ => None,
        }
    }
}

/// HTTP-level limits the connection state machine enforces.
#[derive(Debug, Clone)]
pub struct Limits {
    /// See [`DEFAULT_MAX_HEAD_BYTES`].
    pub max_head_bytes: usize,
    /// See [`DEFAULT_MAX_HEADERS`].
    pub max_headers: usize,
    /// See [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// See [`DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// See [`DEFAULT_IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// See [`DEFAULT_WRITE_TIMEOUT`].
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_head_bytes: DEFAULT_MAX_HEAD_BYTES,
            max_headers: DEFAULT_MAX_HEADERS,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
        }
    }
}

/// The whole server configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Upstream base URL, without a trailing slash.
    pub upstream: String,
    /// Base URL for self links, without a trailing slash.
    pub public_url: String,
    /// Base URL of the post fallback, X's syndication endpoint, without a
    /// trailing slash; empty = off. See [`DEFAULT_SYNDICATION_URL`].
    pub syndication_url: String,
    /// Timeout of one syndication request; see
    /// [`DEFAULT_SYNDICATION_TIMEOUT`].
    pub syndication_timeout: Duration,
    /// Event-loop threads; see [`DEFAULT_EVENT_LOOPS`].
    pub event_loops: usize,
    /// Worker threads; see [`DEFAULT_WORKERS`].
    pub workers: usize,
    /// Worker queue length; see [`DEFAULT_QUEUE`].
    pub queue: usize,
    /// Most open connections; see [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Most open connections per client address (0 = no cap); see
    /// [`DEFAULT_MAX_CONNECTIONS_PER_IP`].
    pub max_connections_per_ip: usize,
    /// Server-wide budget of buffered request bodies and unsent output, in
    /// bytes (0 = none); see
    /// [`DEFAULT_MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
    /// Most of `max_buffered_bytes` one client address may hold (0 = no
    /// per-address share); `None`: the default,
    /// `server::admission::MemoryBudget::address_share`.
    pub max_buffered_bytes_per_ip: Option<usize>,
    /// Upstream request timeout; see [`DEFAULT_UPSTREAM_TIMEOUT`].
    pub upstream_timeout: Duration,
    /// Graceful shutdown deadline; see [`DEFAULT_SHUTDOWN_GRACE`].
    pub shutdown_grace: Duration,
    /// Origins allowed to call the server; `None` applies the default rule
    /// (loopback listeners accept loopback origins only, public listeners
    /// accept any origin).
    pub allowed_origins: Option<Vec<String>>,
    /// Upstream response cache budget in bytes (0 = off); default
    /// [`DEFAULT_CACHE_BYTES`].
    pub cache_bytes: usize,
    /// Working budget of the tool calls in flight, in bytes (0 = off);
    /// see [`DEFAULT_MAX_WORKING_BYTES`].
    pub max_working_bytes: usize,
    /// Per-client `tools/call` rate in calls per second (0 = off); see
    /// [`DEFAULT_RATE_LIMIT`].
    pub rate_limit: u32,
    /// Per-client `tools/call` burst; see
    /// [`DEFAULT_RATE_BURST`].
    pub rate_burst: u32,
    /// Global upstream requests per second (0 = off); see
    /// [`DEFAULT_UPSTREAM_BUDGET`].
    pub upstream_budget: u32,
    /// Reverse proxies whose `X-Forwarded-For` (or `Forwarded`) names the
    /// client (`--trusted-proxies`, `--proxy-header`); default none.
    pub trusted_proxies: TrustedProxies,
    /// Text budget of a tool result in characters; see
    /// [`DEFAULT_MAX_RESULT_CHARS`].
    pub max_result_chars: usize,
    /// Deadline of one tool call; see
    /// [`DEFAULT_CALL_TIMEOUT`].
    pub call_timeout: Duration,
    /// The key cursors are signed with (`--cursor-secret`); `None`: a
    /// random key per process. See [`MIN_CURSOR_SECRET_BYTES`].
    pub cursor_secret: Option<CursorSecret>,
    /// Access-log format; default plain.
    pub log_format: LogFormat,
    /// Who makes the upstream requests; see [`UpstreamIo`].
    pub upstream_io: UpstreamIo,
    /// HTTP limits.
    pub limits: Limits,
}

impl Config {
    /// A configuration with every default, listening on `listen`.
    pub fn new(listen: SocketAddr) -> Config {
        Config {
            listen,
            upstream: DEFAULT_UPSTREAM.to_string(),
            public_url: format!("http://{listen}"),
            syndication_url: DEFAULT_SYNDICATION_URL.to_string(),
            syndication_timeout: DEFAULT_SYNDICATION_TIMEOUT,
            event_loops: default_event_loops(),
            workers: DEFAULT_WORKERS,
            queue: DEFAULT_QUEUE,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            max_buffered_bytes_per_ip: None,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            allowed_origins: None,
            cache_bytes: DEFAULT_CACHE_BYTES,
            max_working_bytes: DEFAULT_MAX_WORKING_BYTES,
            rate_limit: DEFAULT_RATE_LIMIT,
            rate_burst: DEFAULT_RATE_BURST,
            upstream_budget: DEFAULT_UPSTREAM_BUDGET,
            trusted_proxies: TrustedProxies::default(),
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            cursor_secret: None,
            log_format: LogFormat::Plain,
            upstream_io: UpstreamIo::Loop,
            limits: Limits::default(),
        }
    }
}
