//! Process-wide counters, exposed at `GET /metrics` in the Prometheus text
//! exposition format (version 0.0.4).
//!
//! Every label set is fixed at compile time, so recording is one relaxed
//! atomic add and the series count is bounded whatever peers send.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

mod render;

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
