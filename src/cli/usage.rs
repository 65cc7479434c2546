//! The flag table of `xmd serve` (each flag, its `XMD_*` variable, its
//! value's name and help line) and the `--help` text built from it.

use std::time::Duration;

use crate::config;

pub(super) struct Setting {
    pub(super) flag: &'static str,
    pub(super) env: &'static str,
    pub(super) value: &'static str,
    help: String,
}

pub(super) fn settings() -> Vec<Setting> {
    let secs = |d: Duration| d.as_secs();
    vec![
        Setting { flag: "--listen", env: "XMD_LISTEN", value: "ADDR", help: format!("address to listen on [default: {}]", config::DEFAULT_LISTEN) },
        Setting { flag: "--upstream", env: "XMD_UPSTREAM", value: "URLS", help: format!("FxTwitter API base URL, or several comma-separated, used in turn (a base answering 429 cools down on its own) [default: {}]", config::DEFAULT_UPSTREAM) },
        Setting { flag: "--syndication-url", env: "XMD_SYNDICATION_URL", value: "URL", help: format!("base URL of X's syndication endpoint, asked for a single post when FxTwitter fails for it (no answer, timeout, 429, 5xx, a non-JSON body; never for a 404 or 401); the post comes alone, with a note. An empty value turns the fallback off [default: {}]", config::DEFAULT_SYNDICATION_URL) },
        Setting { flag: "--syndication-timeout", env: "XMD_SYNDICATION_TIMEOUT", value: "SECS", help: format!("timeout of one syndication request [default: {}]", secs(config::DEFAULT_SYNDICATION_TIMEOUT)) },
        Setting { flag: "--cache-bytes", env: "XMD_CACHE_BYTES", value: "BYTES", help: format!("upstream response cache budget, least recently used out first; 0 turns it off [default: {}]", config::DEFAULT_CACHE_BYTES) },
        Setting { flag: "--max-working-bytes", env: "XMD_MAX_WORKING_BYTES", value: "BYTES", help: format!("working budget of the tool calls in flight: each upstream answer a call reads counts {}x its size until the call ends; a call with no room waits its turn up to {}s, then answers isError code memory_budget (X routes: 503), retry after 1s; 0 turns it off [default: {}]", crate::x::memory::WORK_BYTES_PER_BODY_BYTE, crate::x::memory::MAX_WORK_WAIT.as_secs(), config::DEFAULT_MAX_WORKING_BYTES) },
        Setting { flag: "--public-url", env: "XMD_PUBLIC_URL", value: "URL", help: "base URL for self links, resource URIs and the server card; no query or fragment, letters, digits and -._~%/:@[] only [default: http://<listen>]".into() },
        Setting { flag: "--event-loops", env: "XMD_EVENT_LOOPS", value: "N", help: format!("event-loop threads accepting and serving connections [default: {}, or the CPU count when fewer]", config::DEFAULT_EVENT_LOOPS) },
        Setting { flag: "--workers", env: "XMD_WORKERS", value: "N", help: format!("worker threads for tool calls [default: {}]", config::DEFAULT_WORKERS) },
        Setting { flag: "--queue", env: "XMD_QUEUE", value: "N", help: format!("tool calls that may wait for a worker; past it: 503 [default: {}]", config::DEFAULT_QUEUE) },
        Setting { flag: "--max-connections", env: "XMD_MAX_CONNECTIONS", value: "N", help: format!("open connections; past it the connection idle the longest is closed to admit the new one, and with none idle: 503 and close [default: {}]", config::DEFAULT_MAX_CONNECTIONS) },
        Setting { flag: "--max-connections-per-ip", env: "XMD_MAX_CONNECTIONS_PER_IP", value: "N", help: format!("open connections per client address (IPv6: per /64, a /48 at most 4 times as many); a --trusted-proxies peer is not capped (its connections carry many clients); past it: 429 and close; 0 turns it off [default: {}]", config::DEFAULT_MAX_CONNECTIONS_PER_IP) },
        Setting { flag: "--max-buffered-bytes", env: "XMD_MAX_BUFFERED_BYTES", value: "BYTES", help: format!("server-wide budget for request bodies being read and responses not yet sent; a body (over 16 KiB) that does not fit: 503 and close before it is read; 0 turns it off [default: {}]", config::DEFAULT_MAX_BUFFERED_BYTES) },
        Setting { flag: "--max-buffered-bytes-per-ip", env: "XMD_MAX_BUFFERED_BYTES_PER_IP", value: "BYTES", help: format!("most of --max-buffered-bytes one client address (IPv6: per /64) may hold, and less while others hold some (an even split, one share kept free), so a few clients cannot spend it for all; past it that address's bodies over 16 KiB: 503 and close, its unread replies pause its connections; a --trusted-proxies peer has no share; 0 turns it off [default: --max-buffered-bytes / {}, at least --max-body-bytes]", crate::server::admission::ADDRESS_SHARE_DIVISOR) },
        Setting { flag: "--max-body-bytes", env: "XMD_MAX_BODY_BYTES", value: "BYTES", help: format!("largest request body; past it: 413 [default: {}]", config::DEFAULT_MAX_BODY_BYTES) },
        Setting { flag: "--header-timeout", env: "XMD_HEADER_TIMEOUT", value: "SECS", help: format!("time to receive a request head; past it: 408 [default: {}]", secs(config::DEFAULT_HEADER_TIMEOUT)) },
        Setting { flag: "--body-timeout", env: "XMD_BODY_TIMEOUT", value: "SECS", help: format!("time to receive a request body; past it: 408 [default: {}]", secs(config::DEFAULT_BODY_TIMEOUT)) },
        Setting { flag: "--idle-timeout", env: "XMD_IDLE_TIMEOUT", value: "SECS", help: format!("idle keep-alive time before closing [default: {}]", secs(config::DEFAULT_IDLE_TIMEOUT)) },
        Setting { flag: "--upstream-timeout", env: "XMD_UPSTREAM_TIMEOUT", value: "SECS", help: format!("timeout of one upstream request [default: {}]", secs(config::DEFAULT_UPSTREAM_TIMEOUT)) },
        Setting { flag: "--max-result-chars", env: "XMD_MAX_RESULT_CHARS", value: "CHARS", help: format!("text budget of one tool result, {} to {}; a longer result stops at a post or row boundary with a note giving the cursor and the exact call that continues [default: {}]", crate::x::budget::MIN_RESULT_CHARS, crate::x::budget::MAX_RESULT_CHARS_LIMIT, config::DEFAULT_MAX_RESULT_CHARS) },
        Setting { flag: "--cursor-secret", env: "XMD_CURSOR_SECRET", value: "SECRET", help: format!("key of the HMAC-SHA256 that signs continuation cursors, at least {} bytes (e.g. `openssl rand -hex 32`); give every replica of a fleet the same one so each accepts the others' cursors. Prefer the environment variable: a flag shows in the process list [default: a random key per process; its cursors are refused by other replicas and after a restart]", config::MIN_CURSOR_SECRET_BYTES) },
        Setting { flag: "--call-timeout", env: "XMD_CALL_TIMEOUT", value: "SECS", help: format!("deadline of one tool call; a thread walk past it returns what it has with a note, or isError code deadline with nothing to show [default: {}]", secs(config::DEFAULT_CALL_TIMEOUT)) },
        Setting { flag: "--shutdown-grace", env: "XMD_SHUTDOWN_GRACE", value: "SECS", help: format!("how long SIGTERM waits for in-flight requests [default: {}]", secs(config::DEFAULT_SHUTDOWN_GRACE)) },
        Setting { flag: "--rate-limit", env: "XMD_RATE_LIMIT", value: "PER_SEC", help: format!("tool calls per second per client address (IPv6: per /64) that reach a worker (a repeated call answered from the result cache costs the upstream nothing and is not counted); past it and the burst the call is an isError result naming the seconds to wait; 0 turns it off [default: {}]", config::DEFAULT_RATE_LIMIT) },
        Setting { flag: "--rate-burst", env: "XMD_RATE_BURST", value: "N", help: format!("tool calls a client may make at once before --rate-limit applies [default: {}]", config::DEFAULT_RATE_BURST) },
        Setting { flag: "--upstream-budget", env: "XMD_UPSTREAM_BUDGET", value: "PER_SEC", help: format!("upstream requests per second for the whole server (burst: {}s' worth), kept under FxTwitter's 1000/min per IP; shared evenly among the client addresses asking now; past a client's share tools answer isError with code upstream_budget; 0 turns it off [default: {}]", crate::app::limits::UPSTREAM_BUDGET_BURST_SECS, config::DEFAULT_UPSTREAM_BUDGET) },
        Setting { flag: "--upstream-io", env: "XMD_UPSTREAM_IO", value: "MODE", help: "who makes the upstream requests: loop (the event loops; no thread waits for the upstream, --call-timeout also cuts a request in flight) or threads (the fallback: the workers, each blocking through its request) [default: loop]".into() },
        Setting { flag: "--log-format", env: "XMD_LOG_FORMAT", value: "FORMAT", help: "access log on stderr: plain, json or off [default: plain]".into() },
        Setting { flag: "--trusted-proxies", env: "XMD_TRUSTED_PROXIES", value: "CIDRS", help: format!("comma-separated reverse-proxy addresses or ranges (127.0.0.1,10.0.0.0/8,::1); from these peers only, the client address (rate limits, access log) is the rightmost untrusted hop of --proxy-header; at most {} [default: none, the TCP peer is the client]", config::proxies::MAX_TRUSTED_PROXIES) },
        Setting { flag: "--proxy-header", env: "XMD_PROXY_HEADER", value: "NAME", help: "the header the trusted proxies write: x-forwarded-for or forwarded (RFC 7239) [default: x-forwarded-for]".into() },
        Setting { flag: "--allowed-origins", env: "XMD_ALLOWED_ORIGINS", value: "LIST", help: "comma-separated Origins allowed to call the server (replaces the loopback-only rule) [default: loopback origins on a loopback listener, any on a public one]".into() },
    ]
}

/// The `--help` text of this build (with or without the `client` feature).
pub fn help() -> String {
    help_for(cfg!(feature = "client"))
}

/// The usage line of `xmd client`: a build without the `client` feature
/// (the static serving build) says it lacks it, as `xmd client` there does.
fn client_usage(has_client: bool) -> &'static str {
    if has_client {
        "xmd client [OPTIONS] CMD   talk to any MCP server (see 'xmd client --help')\n  \
         xmd probe URL [OPTIONS]    check any MCP server or gateway (see 'xmd probe --help')\n  "
    } else {
        "xmd client                 not in this build (built without the `client` feature)\n  \
         xmd probe                  not in this build (built without the `client` feature)\n  "
    }
}

/// The `--help` text of a build with (`true`) or without the `client`
/// feature.
pub fn help_for(has_client: bool) -> String {
    let mut out = format!(
        "xmd {} — an MCP server (Streamable HTTP) that reads public X posts as Markdown\n\n\
         Usage:\n  xmd [serve] [OPTIONS]      run the server (the default command)\n  \
         {}xmd connect [CLIENT]       print the snippet that connects a client (see 'xmd connect --help')\n  \
         xmd --help | --version\n\n\
         The MCP endpoint is http://<listen>/mcp (both the 2026-07-28 stateless revision and\n\
         the 2025-11-25 / 2025-06-18 / 2025-03-26 handshake revisions).\n\nOptions (each also read from its environment variable; a flag wins):\n",
        env!("CARGO_PKG_VERSION"),
        client_usage(has_client)
    );
    for s in settings() {
        let mut left = format!("  {} {}", s.flag, s.value);
        if left.len() >= 32 {
            // Too long for the column: the help starts on the next line.
            left = format!("{left}\n{:<32}", "");
        }
        out.push_str(&format!("{left:<32}{}\n{:<32}env: {}\n", s.help, "", s.env));
    }
    out.push_str("  -h, --help                    print this help\n  -V, --version                 print the version\n\nExit codes: 0 clean shutdown (SIGTERM/SIGINT), 1 runtime failure (e.g. address in use), 2 usage error, 131 SIGQUIT (immediate exit, no drain). SIGHUP is ignored.\n");
    out
}
