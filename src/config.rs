//! Every setting of the server, with its default and unit. No logic beyond
//! defaults lives here; `cli` fills a [`Config`] from flags and `XMD_*`
//! environment variables.

use std::net::SocketAddr;
use std::time::Duration;

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
/// [`crate::server::workers::WORKER_IDLE_EXIT`], so an idle server runs
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
    /// [`crate::server::admission::DEFAULT_MAX_CONNECTIONS_PER_IP`].
    pub max_connections_per_ip: usize,
    /// Server-wide budget of buffered request bodies and unsent output, in
    /// bytes (0 = none); see
    /// [`crate::server::admission::DEFAULT_MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: usize,
    /// Most of `max_buffered_bytes` one client address may hold (0 = no
    /// per-address share); `None`: the default,
    /// [`crate::server::admission::MemoryBudget::address_share`].
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
    /// [`crate::x::cache::DEFAULT_CACHE_BYTES`].
    pub cache_bytes: usize,
    /// Per-client `tools/call` rate in calls per second (0 = off); see
    /// [`crate::app::limits::DEFAULT_RATE_LIMIT`].
    pub rate_limit: u32,
    /// Per-client `tools/call` burst; see
    /// [`crate::app::limits::DEFAULT_RATE_BURST`].
    pub rate_burst: u32,
    /// Global upstream requests per second (0 = off); see
    /// [`crate::app::limits::DEFAULT_UPSTREAM_BUDGET`].
    pub upstream_budget: u32,
    /// Reverse proxies whose `X-Forwarded-For` (or `Forwarded`) names the
    /// client (`--trusted-proxies`, `--proxy-header`); default none.
    pub trusted_proxies: crate::app::client_addr::TrustedProxies,
    /// Text budget of a tool result in characters; see
    /// [`crate::x::budget::DEFAULT_MAX_RESULT_CHARS`].
    pub max_result_chars: usize,
    /// Deadline of one tool call; see
    /// [`crate::x::budget::DEFAULT_CALL_TIMEOUT`].
    pub call_timeout: Duration,
    /// Access-log format; default plain.
    pub log_format: crate::server::log::LogFormat,
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
            max_connections_per_ip: crate::server::admission::DEFAULT_MAX_CONNECTIONS_PER_IP,
            max_buffered_bytes: crate::server::admission::DEFAULT_MAX_BUFFERED_BYTES,
            max_buffered_bytes_per_ip: None,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            allowed_origins: None,
            cache_bytes: crate::x::cache::DEFAULT_CACHE_BYTES,
            rate_limit: crate::app::limits::DEFAULT_RATE_LIMIT,
            rate_burst: crate::app::limits::DEFAULT_RATE_BURST,
            upstream_budget: crate::app::limits::DEFAULT_UPSTREAM_BUDGET,
            trusted_proxies: crate::app::client_addr::TrustedProxies::default(),
            max_result_chars: crate::x::budget::DEFAULT_MAX_RESULT_CHARS,
            call_timeout: crate::x::budget::DEFAULT_CALL_TIMEOUT,
            log_format: crate::server::log::LogFormat::Plain,
            limits: Limits::default(),
        }
    }
}
