//! The Prometheus text exposition (version 0.0.4) of the counters:
//! [`Metrics::render`], served at `GET /metrics`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    Metrics, BUCKETS, ERROR_CODES, FAILURE_CAUSES, METHODS, OUTCOMES, REJECTIONS, ROUTES, STATUSES,
    TOOLS, UPSTREAM,
};

impl Metrics {
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
