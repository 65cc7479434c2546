//! Process-wide counters, exposed at `GET /metrics` in the Prometheus text
//! exposition format (version 0.0.4).
//!
//! Every label set is fixed at compile time, so recording is one relaxed
//! atomic add and the series count is bounded whatever peers send.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Route labels of `xmd_http_requests_total`.
pub const ROUTES: [&str; 10] = [
    "mcp",
    "server_card",
    "server_json",
    "healthz",
    "docs",
    "landing",
    "metrics",
    "not_found",
    "rejected",
    "x",
];

/// Index of `x` (the read-only X routes over plain HTTP) in [`ROUTES`].
pub const ROUTE_X: usize = 9;

/// Index of `rejected` in [`ROUTES`].
pub const ROUTE_REJECTED: usize = 8;
/// Index of `not_found` in [`ROUTES`].
pub const ROUTE_NOT_FOUND: usize = 7;

/// Status labels; anything else counts as `other`.
pub const STATUSES: [u16; 23] = [
    100, 200, 202, 204, 304, 400, 403, 404, 405, 406, 408, 411, 413, 415, 417, 429, 431, 500, 501,
    502, 503, 504, 505,
];

/// JSON-RPC method labels; anything else counts as `other`.
pub const METHODS: [&str; 10] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "notification",
    "invalid",
];

/// Tool labels: the tool names, in registry order (row `Tool as usize`).
pub const TOOLS: [&str; crate::x::registry::Tool::COUNT] = crate::x::registry::Tool::NAMES;

/// Tool outcome labels.
pub const OUTCOMES: [&str; 3] = ["ok", "error", "panic"];

/// Upstream answer labels.
pub const UPSTREAM: [&str; 15] = [
    "200",
    "204",
    "400",
    "401",
    "403",
    "404",
    "429",
    "500",
    "502",
    "503",
    "504",
    "other",
    "network",
    "timeout",
    "too_large",
];

/// Labels of `xmd_tool_errors_total`: the machine codes of `isError`
/// results (`crate::x::error::code`, the rate limit's code); any other
/// counts as `other`.
pub const ERROR_CODES: [&str; 16] = {
    use crate::x::error::code::*;
    [
        NETWORK,
        TIMEOUT,
        RATE_LIMITED,
        UPSTREAM_ERROR,
        INVALID_RESPONSE,
        NOT_FOUND,
        PRIVATE,
        NOT_IMPLEMENTED,
        SUSPENDED,
        PROTECTED,
        SEARCH_UNAVAILABLE,
        INVALID_CURSOR,
        UPSTREAM_BUDGET,
        BAD_REQUEST,
        crate::app::limits::RATE_LIMITED_CODE,
        "other",
    ]
};

/// Labels of `xmd_upstream_failures_total`: the causes of an upstream
/// failure (`app::metered::Cause`, whose `label` indexes this list; every
/// HTTP status is `status`).
pub const FAILURE_CAUSES: [&str; 9] = [
    "dns",
    "refused",
    "reset",
    "connect",
    "timeout",
    "too_large",
    "network",
    "status",
    "invalid_body",
];

/// Upstream latency histogram bounds in seconds.
pub const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Reasons of `xmd_rejected_requests_total`.
pub const REJECTIONS: [&str; 15] = [
    "malformed",
    "head_too_large",
    "body_too_large",
    "timeout",
    "expectation_failed",
    "transfer_coding_not_implemented",
    "queue_full",
    "too_many_connections",
    "forbidden",
    "not_acceptable",
    "unsupported_media_type",
    "method_not_allowed",
    "too_many_connections_per_ip",
    "memory_budget",
    "rate_limited",
];

// A `const` (not a `static`) on purpose: array-repeat expressions need one,
// and every use makes a fresh, independent counter.
#[allow(clippy::declare_interior_mutable_const)]
const Z: AtomicU64 = AtomicU64::new(0);

/// All counters.
pub struct Metrics {
    http: [[AtomicU64; STATUSES.len() + 1]; ROUTES.len()],
    rpc: [[AtomicU64; STATUSES.len() + 1]; METHODS.len() + 1],
    tools: [[AtomicU64; OUTCOMES.len()]; TOOLS.len()],
    upstream: [AtomicU64; UPSTREAM.len()],
    upstream_failures: [AtomicU64; FAILURE_CAUSES.len()],
    tool_errors: [AtomicU64; ERROR_CODES.len()],
    upstream_buckets: [AtomicU64; BUCKETS.len()],
    upstream_count: AtomicU64,
    upstream_micros: AtomicU64,
    syndication: [AtomicU64; UPSTREAM.len()],
    cache: [AtomicU64; 3],
    rejected: [AtomicU64; REJECTIONS.len()],
    open_connections: AtomicI64,
    queue_depth: AtomicI64,
    upstream_connections: AtomicI64,
    upstream_in_flight: AtomicI64,
    parked_calls: AtomicI64,
    response_bytes: AtomicU64,
    yields: AtomicU64,
    cancelled: AtomicU64,
    idle_closed: AtomicU64,
}

/// The process-wide instance.
pub static METRICS: Metrics = Metrics {
    http: [const { [Z; STATUSES.len() + 1] }; ROUTES.len()],
    rpc: [const { [Z; STATUSES.len() + 1] }; METHODS.len() + 1],
    tools: [const { [Z; OUTCOMES.len()] }; TOOLS.len()],
    upstream: [Z; UPSTREAM.len()],
    upstream_failures: [Z; FAILURE_CAUSES.len()],
    tool_errors: [Z; ERROR_CODES.len()],
    upstream_buckets: [Z; BUCKETS.len()],
    upstream_count: Z,
    upstream_micros: Z,
    syndication: [Z; UPSTREAM.len()],
    cache: [Z; 3],
    rejected: [Z; REJECTIONS.len()],
    open_connections: AtomicI64::new(0),
    queue_depth: AtomicI64::new(0),
    upstream_connections: AtomicI64::new(0),
    upstream_in_flight: AtomicI64::new(0),
    parked_calls: AtomicI64::new(0),
    response_bytes: Z,
    yields: Z,
    cancelled: Z,
    idle_closed: Z,
};

fn status_index(status: u16) -> usize {
    STATUSES
        .iter()
        .position(|s| *s == status)
        .unwrap_or(STATUSES.len())
}

fn add(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Metrics {
    /// Counts one answered HTTP request (`route` indexes [`ROUTES`]).
    pub fn http(&self, route: usize, status: u16, bytes: usize) {
        if let Some(row) = self.http.get(route) {
            add(&row[status_index(status)]);
        }
        self.response_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts one JSON-RPC message by method and HTTP status.
    pub fn rpc(&self, method: Option<&str>, status: u16) {
        let m = method.map_or(METHODS.len(), |m| {
            METHODS
                .iter()
                .position(|x| *x == m)
                .unwrap_or(METHODS.len())
        });
        add(&self.rpc[m][status_index(status)]);
    }

    /// Counts one tool call by outcome (`0` ok, `1` isError, `2` panic).
    pub fn tool(&self, tool: crate::x::registry::Tool, outcome: usize) {
        add(&self.tools[tool as usize][outcome.min(OUTCOMES.len() - 1)]);
    }

    /// Counts one upstream answer (`label` from [`UPSTREAM`]) and its latency.
    pub fn upstream(&self, label: &str, took: Duration) {
        let i = UPSTREAM.iter().position(|x| *x == label).unwrap_or(11);
        add(&self.upstream[i]);
        let secs = took.as_secs_f64();
        for (b, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                add(&self.upstream_buckets[b]);
            }
        }
        add(&self.upstream_count);
        self.upstream_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Counts one answer of the post fallback, X's syndication endpoint
    /// (`label` from [`UPSTREAM`]).
    pub fn syndication(&self, label: &str) {
        let i = UPSTREAM.iter().position(|x| *x == label).unwrap_or(11);
        add(&self.syndication[i]);
    }

    /// Counts one failed upstream request by cause (a label of
    /// [`FAILURE_CAUSES`]).
    pub fn upstream_failure(&self, cause: &str) {
        if let Some(i) = FAILURE_CAUSES.iter().position(|x| *x == cause) {
            add(&self.upstream_failures[i]);
        }
    }

    /// Counts one `isError` tool result by its machine code (unknown codes
    /// count as `other`).
    pub fn tool_error(&self, code: &str) {
        let i = ERROR_CODES
            .iter()
            .position(|x| *x == code)
            .unwrap_or(ERROR_CODES.len() - 1);
        add(&self.tool_errors[i]);
    }

    /// Counts a tool result's cache status (`hit`, `miss` or `bypass`).
    pub fn cache(&self, status: crate::x::cache::CacheStatus) {
        add(&self.cache[status as usize]);
    }

    /// Counts a refused request (`reason` from [`REJECTIONS`]).
    pub fn rejected(&self, reason: &str) {
        if let Some(i) = REJECTIONS.iter().position(|x| *x == reason) {
            add(&self.rejected[i]);
        }
    }

    /// Moves the open-connection gauge.
    pub fn connections(&self, delta: i64) {
        self.open_connections.fetch_add(delta, Ordering::Relaxed);
    }

    /// Counts a connection that used up its turn of an event loop with
    /// work left (see `server::event_loop::drive::MAX_ROUNDS_PER_TURN`).
    pub fn yielded(&self) {
        add(&self.yields);
    }

    /// Counts an idle connection closed to admit a new one at
    /// `--max-connections`.
    pub fn idle_closed(&self) {
        add(&self.idle_closed);
    }

    /// Counts a tool call whose client closed its connection before the
    /// answer (the call stopped, or never started).
    pub fn cancelled(&self) {
        add(&self.cancelled);
    }

    /// Moves the worker-queue gauge (jobs queued or running).
    pub fn queue(&self, delta: i64) {
        self.queue_depth.fetch_add(delta, Ordering::Relaxed);
    }

    /// Moves the gauge of open upstream connections (the event loops'
    /// keep-alive pools and the connections in use).
    pub fn upstream_connections(&self, delta: i64) {
        self.upstream_connections
            .fetch_add(delta, Ordering::Relaxed);
    }

    /// Moves the gauge of upstream requests the event loops have in flight.
    pub fn upstream_in_flight(&self, delta: i64) {
        self.upstream_in_flight.fetch_add(delta, Ordering::Relaxed);
    }

    /// Moves the gauge of tool calls parked on an event loop, waiting for
    /// upstream answers.
    pub fn parked_calls(&self, delta: i64) {
        self.parked_calls.fetch_add(delta, Ordering::Relaxed);
    }

    /// The three gauges of the event-loop upstream: open upstream
    /// connections, requests in flight, parked calls.
    pub fn upstream_gauges(&self) -> (i64, i64, i64) {
        (
            self.upstream_connections.load(Ordering::Relaxed),
            self.upstream_in_flight.load(Ordering::Relaxed),
            self.parked_calls.load(Ordering::Relaxed),
        )
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let status_label = |i: usize| {
            STATUSES
                .get(i)
                .map_or("other".to_string(), |s| s.to_string())
        };
        header(
            &mut out,
            "xmd_http_requests_total",
            "counter",
            "HTTP requests answered, by route and status.",
        );
        for (r, row) in self.http.iter().enumerate() {
            for (s, c) in row.iter().enumerate() {
                if get(c) > 0 {
                    let _ = writeln!(
                        out,
                        "xmd_http_requests_total{{route=\"{}\",status=\"{}\"}} {}",
                        ROUTES[r],
                        status_label(s),
                        get(c)
                    );
                }
            }
        }
        header(
            &mut out,
            "xmd_http_response_bytes_total",
            "counter",
            "Response bytes queued for writing.",
        );
        let _ = writeln!(
            out,
            "xmd_http_response_bytes_total {}",
            get(&self.response_bytes)
        );
        header(
            &mut out,
            "xmd_mcp_requests_total",
            "counter",
            "JSON-RPC messages on POST /mcp, by method and HTTP status.",
        );
        for (m, row) in self.rpc.iter().enumerate() {
            for (s, c) in row.iter().enumerate() {
                if get(c) > 0 {
                    let method = METHODS.get(m).copied().unwrap_or("other");
                    let _ = writeln!(
                        out,
                        "xmd_mcp_requests_total{{method=\"{method}\",status=\"{}\"}} {}",
                        status_label(s),
                        get(c)
                    );
                }
            }
        }
        header(
            &mut out,
            "xmd_tool_calls_total",
            "counter",
            "Tool calls by tool and outcome (ok, error = isError result, panic).",
        );
        for (t, row) in self.tools.iter().enumerate() {
            for (o, c) in row.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "xmd_tool_calls_total{{tool=\"{}\",outcome=\"{}\"}} {}",
                    TOOLS[t],
                    OUTCOMES[o],
                    get(c)
                );
            }
        }
        header(
            &mut out,
            "xmd_tool_errors_total",
            "counter",
            "isError tool results by machine code (fxtwitter_network, upstream_timeout, not_found, ...).",
        );
        for (i, c) in self.tool_errors.iter().enumerate() {
            if get(c) > 0 {
                let _ = writeln!(
                    out,
                    "xmd_tool_errors_total{{code=\"{}\"}} {}",
                    ERROR_CODES[i],
                    get(c)
                );
            }
        }
        header(
            &mut out,
            "xmd_upstream_failures_total",
            "counter",
            "Failed upstream requests by cause (dns, refused, reset, connect, timeout, too_large, network, status = a 4xx/5xx answer, invalid_body = an answer that is not FxTwitter JSON).",
        );
        for (i, c) in self.upstream_failures.iter().enumerate() {
            if get(c) > 0 {
                let _ = writeln!(
                    out,
                    "xmd_upstream_failures_total{{cause=\"{}\"}} {}",
                    FAILURE_CAUSES[i],
                    get(c)
                );
            }
        }
        header(
            &mut out,
            "xmd_upstream_requests_total",
            "counter",
            "Upstream (FxTwitter) requests by HTTP status or failure.",
        );
        for (i, c) in self.upstream.iter().enumerate() {
            if get(c) > 0 {
                let _ = writeln!(
                    out,
                    "xmd_upstream_requests_total{{status=\"{}\"}} {}",
                    UPSTREAM[i],
                    get(c)
                );
            }
        }
        header(
            &mut out,
            "xmd_upstream_request_duration_seconds",
            "histogram",
            "Upstream request latency.",
        );
        for (b, bound) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "xmd_upstream_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                get(&self.upstream_buckets[b])
            );
        }
        let count = get(&self.upstream_count);
        let _ = writeln!(
            out,
            "xmd_upstream_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "xmd_upstream_request_duration_seconds_sum {}",
            get(&self.upstream_micros) as f64 / 1e6
        );
        let _ = writeln!(out, "xmd_upstream_request_duration_seconds_count {count}");
        header(
            &mut out,
            "xmd_syndication_requests_total",
            "counter",
            "Requests to the post fallback, X's syndication endpoint, by HTTP status or failure.",
        );
        for (i, c) in self.syndication.iter().enumerate() {
            if get(c) > 0 {
                let _ = writeln!(
                    out,
                    "xmd_syndication_requests_total{{status=\"{}\"}} {}",
                    UPSTREAM[i],
                    get(c)
                );
            }
        }
        header(
            &mut out,
            "xmd_cache_requests_total",
            "counter",
            "Tool results by cache status.",
        );
        for (i, name) in crate::x::cache::CacheStatus::LABELS.iter().enumerate() {
            let _ = writeln!(
                out,
                "xmd_cache_requests_total{{result=\"{name}\"}} {}",
                get(&self.cache[i])
            );
        }
        header(
            &mut out,
            "xmd_rejected_requests_total",
            "counter",
            "Requests refused before reaching a handler, by reason.",
        );
        for (i, reason) in REJECTIONS.iter().enumerate() {
            let _ = writeln!(
                out,
                "xmd_rejected_requests_total{{reason=\"{reason}\"}} {}",
                get(&self.rejected[i])
            );
        }
        header(
            &mut out,
            "xmd_event_loop_yields_total",
            "counter",
            "Turns a connection ended with work left, so the other connections on its loop went first.",
        );
        let _ = writeln!(out, "xmd_event_loop_yields_total {}", get(&self.yields));
        header(
            &mut out,
            "xmd_idle_connections_closed_total",
            "counter",
            "Idle keep-alive connections closed, oldest first, to admit a new connection at --max-connections.",
        );
        let _ = writeln!(
            out,
            "xmd_idle_connections_closed_total {}",
            get(&self.idle_closed)
        );
        header(
            &mut out,
            "xmd_tool_calls_cancelled_total",
            "counter",
            "Tool calls whose client closed its connection before the answer; each stopped before its next upstream request.",
        );
        let _ = writeln!(
            out,
            "xmd_tool_calls_cancelled_total {}",
            get(&self.cancelled)
        );
        header(
            &mut out,
            "xmd_open_connections",
            "gauge",
            "Open client connections.",
        );
        let _ = writeln!(
            out,
            "xmd_open_connections {}",
            self.open_connections.load(Ordering::Relaxed)
        );
        header(
            &mut out,
            "xmd_worker_queue_depth",
            "gauge",
            "Tool calls queued or running on workers.",
        );
        let _ = writeln!(
            out,
            "xmd_worker_queue_depth {}",
            self.queue_depth.load(Ordering::Relaxed)
        );
        let (connections, in_flight, parked) = self.upstream_gauges();
        header(
            &mut out,
            "xmd_upstream_connections",
            "gauge",
            "Open upstream connections (kept alive or in use).",
        );
        let _ = writeln!(out, "xmd_upstream_connections {connections}");
        header(
            &mut out,
            "xmd_upstream_in_flight",
            "gauge",
            "Upstream requests the event loops have in flight.",
        );
        let _ = writeln!(out, "xmd_upstream_in_flight {in_flight}");
        header(
            &mut out,
            "xmd_parked_calls",
            "gauge",
            "Tool calls waiting on an event loop for upstream answers.",
        );
        let _ = writeln!(out, "xmd_parked_calls {parked}");
        header(
            &mut out,
            "xmd_cache_bytes",
            "gauge",
            "Bytes the upstream answer cache holds (bodies, keys and 256 per entry), at most --cache-bytes.",
        );
        let _ = writeln!(
            out,
            "xmd_cache_bytes {}",
            crate::heap::UPSTREAM_CACHE_BYTES.load(Ordering::Relaxed)
        );
        header(
            &mut out,
            "xmd_result_cache_bytes",
            "gauge",
            "Bytes the tool result cache holds (as it counts them: twice the reply, its key and 256 per entry), at most half of --cache-bytes.",
        );
        let _ = writeln!(
            out,
            "xmd_result_cache_bytes {}",
            crate::heap::RESULT_CACHE_BYTES.load(Ordering::Relaxed)
        );
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// The rejection reason for a refused request's status.
pub fn rejection_reason(status: u16) -> &'static str {
    match status {
        431 => "head_too_large",
        413 => "body_too_large",
        408 => "timeout",
        417 => "expectation_failed",
        501 => "transfer_coding_not_implemented",
        503 => "queue_full",
        403 => "forbidden",
        406 => "not_acceptable",
        415 => "unsupported_media_type",
        405 => "method_not_allowed",
        _ => "malformed",
    }
}
