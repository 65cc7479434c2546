//! Command-line parsing for `xmd serve` (the default command): flags, each
//! also readable from an `XMD_*` environment variable (a flag wins).
//! Hand-written: raw arguments → a validated [`Config`].

use std::net::SocketAddr;
use std::time::Duration;

use crate::config::LogFormat;
use crate::config::{self, Config};

/// What the command line asked for.
#[derive(Debug)]
pub enum Command {
    /// Run the server.
    Serve(Box<Config>),
    /// Print this text to stdout and exit 0 (help or version).
    Print(String),
}

/// A usage error: printed to stderr, exit code 2.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

struct Setting {
    flag: &'static str,
    env: &'static str,
    value: &'static str,
    help: String,
}

fn settings() -> Vec<Setting> {
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

/// Parses arguments (without the program name) and environment lookups.
///
/// # Errors
/// An unknown flag, a missing or invalid value, or a stray argument.
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Command, UsageError> {
    let mut rest: &[String] = args;
    if rest.first().map(String::as_str) == Some("serve") {
        rest = &rest[1..];
    }
    let known = settings();
    let mut given: Vec<(&'static str, String)> = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        match arg {
            "-h" | "--help" => return Ok(Command::Print(help())),
            "-V" | "--version" => {
                return Ok(Command::Print(format!(
                    "xmd {}\n",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            _ => {}
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg, None),
        };
        let Some(setting) = known.iter().find(|s| s.flag == flag) else {
            return Err(UsageError(if arg.starts_with('-') {
                format!("unknown option '{arg}'")
            } else {
                format!("unexpected argument '{arg}'")
            }));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                rest.get(i).cloned().ok_or_else(|| {
                    UsageError(format!("{flag} needs a value ({})", setting.value))
                })?
            }
        };
        given.push((setting.flag, value));
        i += 1;
    }
    let lookup = |flag: &str| -> Option<(String, String)> {
        if let Some((_, v)) = given.iter().rev().find(|(f, _)| *f == flag) {
            return Some((flag.to_string(), v.clone()));
        }
        let s = known.iter().find(|s| s.flag == flag)?;
        env(s.env)
            .filter(|v| !v.is_empty())
            .map(|v| (s.env.to_string(), v))
    };
    let listen_text = lookup("--listen").map_or(config::DEFAULT_LISTEN.to_string(), |(_, v)| v);
    let listen: SocketAddr = listen_text.parse().map_err(|_| {
        UsageError(format!(
            "invalid listen address '{listen_text}' (expected IP:PORT, e.g. 127.0.0.1:8080)"
        ))
    })?;
    let mut config = Config::new(listen);
    if let Some((name, v)) = lookup("--upstream") {
        let urls: Result<Vec<String>, UsageError> =
            v.split(',').map(|u| parse_url(&name, u)).collect();
        config.upstream = urls?.join(",");
        crate::x::upstream::HttpUpstream::from_list(&config.upstream, config.upstream_timeout)
            .map_err(|e| UsageError(format!("invalid {name} '{v}' ({e})")))?;
    }
    // Unlike other settings, an empty value is meaningful here (off), so
    // an empty environment variable counts too.
    let syndication = given
        .iter()
        .rev()
        .find(|(f, _)| *f == "--syndication-url")
        .map(|(f, v)| (f.to_string(), v.clone()))
        .or_else(|| env("XMD_SYNDICATION_URL").map(|v| ("XMD_SYNDICATION_URL".into(), v)));
    if let Some((name, v)) = syndication {
        config.syndication_url = if v.trim().is_empty() {
            String::new()
        } else if v.contains(',') {
            return Err(UsageError(format!(
                "invalid {name} '{v}' (expected one http:// or https:// URL, or an empty value to turn the fallback off)"
            )));
        } else {
            parse_url(&name, &v)?
        };
    }
    if let Some((name, v)) = lookup("--public-url") {
        config.public_url = parse_public_url(&name, &v)?;
    }
    let number = |flag: &str, min: usize| -> Result<Option<usize>, UsageError> {
        match lookup(flag) {
            None => Ok(None),
            Some((name, v)) => match v.trim().parse::<usize>() {
                Ok(n) if n >= min => Ok(Some(n)),
                _ => Err(UsageError(format!(
                    "invalid {name} '{v}' (expected a whole number >= {min})"
                ))),
            },
        }
    };
    let seconds = |flag: &str| -> Result<Option<Duration>, UsageError> {
        let max = config::MAX_SECONDS;
        match lookup(flag) {
            None => Ok(None),
            Some((name, v)) => match v.trim().parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(Some(Duration::from_secs(n))),
                _ => Err(UsageError(format!(
                    "invalid {name} '{v}' (expected a whole number of seconds from 1 to {max})"
                ))),
            },
        }
    };
    if let Some(n) = number("--cache-bytes", 0)? {
        config.cache_bytes = n;
    }
    if let Some(n) = number("--max-working-bytes", 0)? {
        config.max_working_bytes = n;
    }
    if let Some((name, v)) = lookup("--max-result-chars") {
        use crate::x::budget::{MAX_RESULT_CHARS_LIMIT as MAX, MIN_RESULT_CHARS as MIN};
        config.max_result_chars = match v.trim().parse::<usize>() {
            Ok(n) if (MIN..=MAX).contains(&n) => n,
            _ => {
                return Err(UsageError(format!(
                    "invalid {name} '{v}' (expected a whole number from {MIN} to {MAX}: larger results would not fit one 1 MiB message)"
                )))
            }
        };
    }
    if let Some((name, v)) = lookup("--cursor-secret") {
        let min = config::MIN_CURSOR_SECRET_BYTES;
        // The value is never echoed: it is a key.
        if v.len() < min {
            return Err(UsageError(format!(
                "invalid {name}: {} bytes, expected at least {min} (a random secret, e.g. `openssl rand -hex 32`; the same on every replica)",
                v.len()
            )));
        }
        config.cursor_secret = Some(config::CursorSecret(v.into_bytes()));
    }
    if let Some(d) = seconds("--call-timeout")? {
        config.call_timeout = d;
    }
    let rate = |flag: &str, min: usize| -> Result<Option<u32>, UsageError> {
        match number(flag, min)? {
            None => Ok(None),
            Some(n) => u32::try_from(n).map(Some).map_err(|_| {
                UsageError(format!(
                    "invalid {flag} '{n}' (expected at most {})",
                    u32::MAX
                ))
            }),
        }
    };
    if let Some(n) = rate("--rate-limit", 0)? {
        config.rate_limit = n;
    }
    if let Some(n) = rate("--rate-burst", 1)? {
        config.rate_burst = n;
    }
    if let Some(n) = rate("--upstream-budget", 0)? {
        config.upstream_budget = n;
    }
    if let Some(n) = number("--event-loops", 1)? {
        if n > config::MAX_EVENT_LOOPS {
            return Err(UsageError(format!(
                "invalid --event-loops '{n}' (expected at most {})",
                config::MAX_EVENT_LOOPS
            )));
        }
        config.event_loops = n;
    }
    if let Some(n) = number("--workers", 1)? {
        config.workers = n;
    }
    if let Some(n) = number("--queue", 1)? {
        config.queue = n;
    }
    if let Some(n) = number("--max-connections", 1)? {
        config.max_connections = n;
    }
    if let Some(n) = number("--max-connections-per-ip", 0)? {
        config.max_connections_per_ip = n;
    }
    if let Some(n) = number("--max-buffered-bytes", 0)? {
        config.max_buffered_bytes = n;
    }
    if let Some(n) = number("--max-buffered-bytes-per-ip", 0)? {
        config.max_buffered_bytes_per_ip = Some(n);
    }
    if let Some(n) = number("--max-body-bytes", 1)? {
        config.limits.max_body_bytes = n;
    }
    if let Some(d) = seconds("--header-timeout")? {
        config.limits.header_timeout = d;
    }
    if let Some(d) = seconds("--body-timeout")? {
        config.limits.body_timeout = d;
    }
    if let Some(d) = seconds("--idle-timeout")? {
        config.limits.idle_timeout = d;
    }
    if let Some(d) = seconds("--upstream-timeout")? {
        config.upstream_timeout = d;
    }
    if let Some(d) = seconds("--syndication-timeout")? {
        config.syndication_timeout = d;
    }
    if let Some(d) = seconds("--shutdown-grace")? {
        config.shutdown_grace = d;
    }
    if let Some((_, v)) = lookup("--allowed-origins") {
        config.allowed_origins = Some(
            v.split(',')
                .map(|o| o.trim().to_string())
                .filter(|o| !o.is_empty())
                .collect(),
        );
    }
    let proxy_header = match lookup("--proxy-header") {
        None => crate::config::proxies::ProxyHeader::XForwardedFor,
        Some((name, v)) => crate::config::proxies::ProxyHeader::parse(&v).ok_or_else(|| {
            UsageError(format!(
                "invalid {name} '{v}' (expected x-forwarded-for or forwarded)"
            ))
        })?,
    };
    if let Some((name, v)) = lookup("--trusted-proxies") {
        config.trusted_proxies = crate::config::proxies::TrustedProxies::parse(&v, proxy_header)
            .map_err(|e| UsageError(format!("invalid {name}: {e}")))?;
    }
    if let Some((name, v)) = lookup("--upstream-io") {
        config.upstream_io = crate::config::UpstreamIo::parse(v.trim()).ok_or_else(|| {
            UsageError(format!("invalid {name} '{v}' (expected loop or threads)"))
        })?;
    }
    if let Some((name, v)) = lookup("--log-format") {
        config.log_format = LogFormat::parse(v.trim()).ok_or_else(|| {
            UsageError(format!(
                "invalid {name} '{v}' (expected plain, json or off)"
            ))
        })?;
    }
    if config.max_buffered_bytes != 0 && config.max_buffered_bytes < config.limits.max_body_bytes {
        // A body the budget can never hold would be refused forever.
        return Err(UsageError(format!(
            "invalid --max-buffered-bytes '{}' (expected 0 or at least --max-body-bytes, {})",
            config.max_buffered_bytes, config.limits.max_body_bytes
        )));
    }
    if let Some(n) = config.max_buffered_bytes_per_ip {
        if n != 0 && n < config.limits.max_body_bytes {
            // That address could never send a body of the largest size.
            return Err(UsageError(format!(
                "invalid --max-buffered-bytes-per-ip '{n}' (expected 0 or at least --max-body-bytes, {})",
                config.limits.max_body_bytes
            )));
        }
    }
    Ok(Command::Serve(Box::new(config)))
}

/// `--public-url`: an http(s) URL every self link, snippet and resource
/// URI is built on by appending a path (`/mcp`, `/llms.txt`, …), and which
/// the agent documents print inside JSON, TOML and shell commands. So no
/// query or fragment (the appended path would land in them), and only
/// letters, digits and `-._~%/:@[]` (RFC 3986 unreserved characters,
/// percent-encodings, the path and authority delimiters and IPv6
/// brackets): a quote, backslash, `$`, backtick or `;` would break those
/// snippets or run in a shell.
fn parse_public_url(name: &str, value: &str) -> Result<String, UsageError> {
    let url = parse_url(name, value)?;
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let bad = rest
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-._~%/:@[]".contains(*c)));
    match bad {
        None => Ok(url),
        Some(c) => Err(UsageError(format!(
            "invalid {name} '{value}' (a base URL without query or fragment, of letters, digits and -._~%/:@[] only; found {c:?})"
        ))),
    }
}

fn parse_url(name: &str, value: &str) -> Result<String, UsageError> {
    let v = value.trim().trim_end_matches('/');
    let ok = (v.starts_with("http://") || v.starts_with("https://"))
        && v.len() > "https://".len()
        && !v.contains(char::is_whitespace);
    if ok {
        Ok(v.to_string())
    } else {
        Err(UsageError(format!(
            "invalid {name} '{value}' (expected an http:// or https:// URL)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn serve(a: &[&str], env: &dyn Fn(&str) -> Option<String>) -> Config {
        match parse(&args(a), env).unwrap() {
            Command::Serve(c) => *c,
            Command::Print(_) => panic!("expected serve"),
        }
    }

    /// The serving build (no `client` feature) does not offer `xmd client`
    /// in its help: its usage line says the build lacks it, as running it
    /// does (src/main.rs). `help()` is the variant of this build.
    #[test]
    fn help_offers_the_client_only_in_builds_that_have_it() {
        let with = help_for(true);
        let without = help_for(false);
        let usage = |h: &str| -> Vec<String> {
            h.lines()
                .filter(|l| {
                    let l = l.trim_start();
                    l.starts_with("xmd client") || l.starts_with("xmd probe")
                })
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            usage(&with),
            [
                "  xmd client [OPTIONS] CMD   talk to any MCP server (see 'xmd client --help')",
                "  xmd probe URL [OPTIONS]    check any MCP server or gateway (see 'xmd probe --help')"
            ]
        );
        assert_eq!(
            usage(&without),
            [
                "  xmd client                 not in this build (built without the `client` feature)",
                "  xmd probe                  not in this build (built without the `client` feature)"
            ]
        );
        assert!(!without.contains("xmd client --help"));
        assert!(!without.contains("talk to any MCP server"));
        assert!(!without.contains("xmd probe --help"));
        // Nothing else differs.
        let strip =
            |h: &str, lines: &[String]| lines.iter().fold(h.to_string(), |h, l| h.replace(l, ""));
        assert_eq!(
            strip(&with, &usage(&with)),
            strip(&without, &usage(&without))
        );
        assert_eq!(help(), help_for(cfg!(feature = "client")));
        match parse(&args(&["--help"]), &|_| None).unwrap() {
            Command::Print(text) => assert_eq!(text, help()),
            Command::Serve(_) => panic!("expected the help"),
        }
    }

    #[test]
    fn upstream_io_flag_env_and_refusal() {
        use crate::config::UpstreamIo;
        let none = |_: &str| None;
        assert_eq!(serve(&[], &none).upstream_io, UpstreamIo::Loop);
        assert_eq!(
            serve(&["--upstream-io", "loop"], &none).upstream_io,
            UpstreamIo::Loop
        );
        let env = |k: &str| (k == "XMD_UPSTREAM_IO").then(|| "loop".to_string());
        assert_eq!(serve(&[], &env).upstream_io, UpstreamIo::Loop);
        assert_eq!(
            serve(&["--upstream-io", "threads"], &env).upstream_io,
            UpstreamIo::Threads
        );
        let Err(UsageError(msg)) = parse(&args(&["--upstream-io", "async"]), &none) else {
            panic!("accepted");
        };
        assert_eq!(
            msg,
            "invalid --upstream-io 'async' (expected loop or threads)"
        );
    }

    #[test]
    fn defaults_flags_and_env() {
        let none = |_: &str| None;
        let c = serve(&[], &none);
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.upstream, "https://api.fxtwitter.com");
        assert_eq!(c.public_url, "http://127.0.0.1:8080");
        let env = |k: &str| match k {
            "XMD_LISTEN" => Some("127.0.0.1:9000".to_string()),
            "XMD_WORKERS" => Some("3".to_string()),
            _ => None,
        };
        let c = serve(
            &[
                "serve",
                "--workers=5",
                "--event-loops=3",
                "--upstream",
                "http://127.0.0.1:1/",
            ],
            &env,
        );
        assert_eq!(c.listen.to_string(), "127.0.0.1:9000");
        assert_eq!(c.workers, 5);
        assert_eq!(c.event_loops, 3);
        assert_eq!(c.upstream, "http://127.0.0.1:1");
        assert_eq!(c.public_url, "http://127.0.0.1:9000");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any `--public-url` is refused, or every place the agent
        /// documents print it holds: a JSON string, a TOML string and one
        /// shell word read it back exactly (serde_json, toml, shlex), and
        /// `/mcp` appended lands in its path.
        #[test]
        fn an_accepted_public_url_is_safe_in_every_snippet(
            path in proptest::collection::vec(proptest::sample::select(vec![
                "a", "Z", "9", "-", ".", "_", "~", "%2F", "/", ":", "@", "[", "]", "?", "#", "\"",
                "\\", "$", "`", ";", "'", "(", ")", "&", "|", "<", ">", " ", "é", "{", "}", "*", "!", "=", "+",
            ]), 0..12),
        ) {
            let raw = format!("https://tools.example.org/{}", path.concat());
            let Ok(url) = parse_public_url("--public-url", &raw) else {
                return Ok(());
            };
            let mcp = format!("{url}/mcp");
            let json: serde_json::Value = serde_json::from_str(&format!(r#"{{"url": "{mcp}"}}"#))
                .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {mcp}")))?;
            proptest::prop_assert_eq!(json["url"].as_str(), Some(mcp.as_str()));
            let toml: toml::Table = format!("url = \"{mcp}\"").parse()
                .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {mcp}")))?;
            proptest::prop_assert_eq!(toml["url"].as_str(), Some(mcp.as_str()));
            let words = shlex::split(&format!("claude mcp add --transport http x-md {mcp}"));
            proptest::prop_assert_eq!(words.as_ref().and_then(|w| w.last()), Some(&mcp));
            proptest::prop_assert_eq!(words.map(|w| w.len()), Some(7));
            proptest::prop_assert!(!mcp.contains(['?', '#']), "{}", mcp);
        }
    }

    #[test]
    fn bad_input_is_a_usage_error_naming_the_setting() {
        let none = |_: &str| None;
        let cases = [
            (&["--nope"][..], "unknown option '--nope'"),
            (&["--listen"][..], "--listen needs a value (ADDR)"),
            (
                &["--listen", "localhost"][..],
                "invalid listen address 'localhost' (expected IP:PORT, e.g. 127.0.0.1:8080)",
            ),
            (
                &["--workers", "0"][..],
                "invalid --workers '0' (expected a whole number >= 1)",
            ),
            (
                &["--event-loops", "0"][..],
                "invalid --event-loops '0' (expected a whole number >= 1)",
            ),
            (
                &["--event-loops", "65"][..],
                "invalid --event-loops '65' (expected at most 64)",
            ),
            (
                &["--upstream", "ftp://x"][..],
                "invalid --upstream 'ftp://x' (expected an http:// or https:// URL)",
            ),
            (
                &["--public-url", "http://127.0.0.1:18083/?x=1"][..],
                "invalid --public-url 'http://127.0.0.1:18083/?x=1' (a base URL without query or fragment, of letters, digits and -._~%/:@[] only; found '?')",
            ),
            (
                &["--public-url", "http://h/a\"b"][..],
                "invalid --public-url 'http://h/a\"b' (a base URL without query or fragment, of letters, digits and -._~%/:@[] only; found '\"')",
            ),
            (&["stray"][..], "unexpected argument 'stray'"),
        ];
        for (a, msg) in cases {
            assert_eq!(
                parse(&args(a), &none).unwrap_err(),
                UsageError(msg.to_string())
            );
        }
        let env = |k: &str| (k == "XMD_QUEUE").then(|| "many".to_string());
        assert_eq!(
            parse(&[], &env).unwrap_err(),
            UsageError("invalid XMD_QUEUE 'many' (expected a whole number >= 1)".into())
        );
    }

    #[test]
    fn connection_cap_and_memory_budget() {
        let none = |_: &str| None;
        let c = serve(&[], &none);
        assert_eq!(c.max_connections_per_ip, 256);
        assert_eq!(c.max_buffered_bytes, 64 * 1024 * 1024);
        let c = serve(
            &[
                "--max-connections-per-ip",
                "0",
                "--max-buffered-bytes",
                "1048576",
            ],
            &none,
        );
        assert_eq!(c.max_connections_per_ip, 0);
        assert_eq!(c.max_buffered_bytes, 1_048_576);
        let env = |k: &str| (k == "XMD_MAX_CONNECTIONS_PER_IP").then(|| "8".to_string());
        assert_eq!(serve(&[], &env).max_connections_per_ip, 8);
        assert_eq!(
            parse(&args(&["--max-buffered-bytes", "-1"]), &none).unwrap_err(),
            UsageError("invalid --max-buffered-bytes '-1' (expected a whole number >= 0)".into())
        );
        assert_eq!(
            parse(&args(&["--max-buffered-bytes", "1048575"]), &none).unwrap_err(),
            UsageError(
                "invalid --max-buffered-bytes '1048575' (expected 0 or at least --max-body-bytes, 1048576)"
                    .into()
            )
        );
        let c = serve(
            &["--max-buffered-bytes", "4096", "--max-body-bytes", "4096"],
            &none,
        );
        assert_eq!(c.max_buffered_bytes, 4096);
    }

    #[test]
    fn upstream_lists_and_cache_budget() {
        let none = |_: &str| None;
        let c = serve(
            &[
                "--upstream",
                "http://127.0.0.1:1/, https://b.example",
                "--cache-bytes",
                "0",
            ],
            &none,
        );
        assert_eq!(c.upstream, "http://127.0.0.1:1,https://b.example");
        assert_eq!(c.cache_bytes, 0);
        assert_eq!(c.max_working_bytes, 64 * 1024 * 1024);
        let env = |k: &str| (k == "XMD_MAX_WORKING_BYTES").then(|| "1000".to_string());
        assert_eq!(serve(&[], &env).max_working_bytes, 1000);
        assert_eq!(
            serve(&["--max-working-bytes", "0"], &env).max_working_bytes,
            0
        );
        assert_eq!(
            parse(&args(&["--upstream", "http://a.example,ftp://b"]), &none).unwrap_err(),
            UsageError("invalid --upstream 'ftp://b' (expected an http:// or https:// URL)".into())
        );
    }

    #[test]
    fn syndication_fallback_settings() {
        let none = |_: &str| None;
        let c = serve(&[], &none);
        assert_eq!(c.syndication_url, "https://cdn.syndication.twimg.com");
        assert_eq!(c.syndication_timeout, Duration::from_secs(5));
        let c = serve(
            &[
                "--syndication-url",
                "http://127.0.0.1:9/",
                "--syndication-timeout=2",
            ],
            &none,
        );
        assert_eq!(c.syndication_url, "http://127.0.0.1:9");
        assert_eq!(c.syndication_timeout, Duration::from_secs(2));
        // Empty turns it off, from the flag or from the environment; a
        // later flag wins over an earlier one and over the environment.
        assert_eq!(serve(&["--syndication-url", ""], &none).syndication_url, "");
        let env = |k: &str| (k == "XMD_SYNDICATION_URL").then(String::new);
        assert_eq!(serve(&[], &env).syndication_url, "");
        let c = serve(
            &[
                "--syndication-url=",
                "--syndication-url",
                "http://a.example",
            ],
            &env,
        );
        assert_eq!(c.syndication_url, "http://a.example");
        let env = |k: &str| (k == "XMD_SYNDICATION_URL").then(|| "http://b.example/".to_string());
        assert_eq!(serve(&[], &env).syndication_url, "http://b.example");
        assert_eq!(serve(&["--syndication-url", ""], &env).syndication_url, "");
        for (a, msg) in [
            (
                &["--syndication-url", "ftp://x"][..],
                "invalid --syndication-url 'ftp://x' (expected an http:// or https:// URL)",
            ),
            (
                &["--syndication-url", "http://a,http://b"][..],
                "invalid --syndication-url 'http://a,http://b' (expected one http:// or https:// URL, or an empty value to turn the fallback off)",
            ),
            (
                &["--syndication-timeout", "0"][..],
                "invalid --syndication-timeout '0' (expected a whole number of seconds from 1 to 604800)",
            ),
        ] {
            assert_eq!(parse(&args(a), &none).unwrap_err(), UsageError(msg.into()));
        }
    }

    /// Every setting in seconds takes 1 to MAX_SECONDS, edges included;
    /// MAX_SECONDS + 1 and u64::MAX are usage errors naming the range (a
    /// value near u64::MAX overflowed the deadline arithmetic before).
    #[test]
    fn every_seconds_setting_is_bounded() {
        let none = |_: &str| None;
        let max = crate::config::MAX_SECONDS;
        for flag in [
            "--header-timeout",
            "--body-timeout",
            "--idle-timeout",
            "--upstream-timeout",
            "--syndication-timeout",
            "--call-timeout",
            "--shutdown-grace",
        ] {
            for ok in [1, max] {
                let v = ok.to_string();
                assert!(parse(&args(&[flag, &v]), &none).is_ok(), "{flag} {v}");
            }
            for bad in [
                "0".to_string(),
                (max + 1).to_string(),
                u64::MAX.to_string(),
                "-1".into(),
                "1.5".into(),
            ] {
                assert_eq!(
                    parse(&args(&[flag, &bad]), &none).unwrap_err(),
                    UsageError(format!(
                        "invalid {flag} '{bad}' (expected a whole number of seconds from 1 to 604800)"
                    )),
                );
            }
        }
    }

    #[test]
    fn abuse_limits_default_and_parse() {
        let none = |_: &str| None;
        let c = serve(&[], &none);
        assert_eq!(
            (c.rate_limit, c.rate_burst, c.upstream_budget),
            (10, 60, 15)
        );
        let env = |k: &str| (k == "XMD_UPSTREAM_BUDGET").then(|| "0".to_string());
        let c = serve(&["--rate-limit", "0", "--rate-burst=5"], &env);
        assert_eq!((c.rate_limit, c.rate_burst, c.upstream_budget), (0, 5, 0));
        assert_eq!(
            parse(&args(&["--rate-burst", "0"]), &none).unwrap_err(),
            UsageError("invalid --rate-burst '0' (expected a whole number >= 1)".into())
        );
        assert_eq!(
            parse(&args(&["--rate-limit", "-1"]), &none).unwrap_err(),
            UsageError("invalid --rate-limit '-1' (expected a whole number >= 0)".into())
        );
    }

    #[test]
    fn cursor_secret_from_flag_or_env_and_too_short_refused() {
        let none = |_: &str| None;
        assert_eq!(serve(&[], &none).cursor_secret, None);
        let long = "k".repeat(32);
        let c = serve(&["--cursor-secret", &long], &none);
        assert_eq!(
            c.cursor_secret,
            Some(config::CursorSecret(long.clone().into_bytes()))
        );
        let env = |k: &str| (k == "XMD_CURSOR_SECRET").then(|| "e".repeat(40));
        assert_eq!(
            serve(&[], &env).cursor_secret.unwrap().0,
            "e".repeat(40).into_bytes()
        );
        // A flag wins over the environment.
        assert_eq!(
            serve(&["--cursor-secret", &long], &env)
                .cursor_secret
                .unwrap()
                .0,
            long.as_bytes()
        );
        // 31 bytes: refused, and the value is not echoed.
        let short = "s3cr3t-value-of-31-bytes-xxxxxx";
        assert_eq!(short.len(), 31);
        let e = parse(&args(&["--cursor-secret", short]), &none).unwrap_err();
        assert_eq!(e, UsageError("invalid --cursor-secret: 31 bytes, expected at least 32 (a random secret, e.g. `openssl rand -hex 32`; the same on every replica)".into()));
        let env = |k: &str| (k == "XMD_CURSOR_SECRET").then(|| "short".to_string());
        let e = parse(&args(&[]), &env).unwrap_err();
        assert!(
            e.0.starts_with("invalid XMD_CURSOR_SECRET: 5 bytes"),
            "{}",
            e.0
        );
        assert!(!format!("{:?}", serve(&["--cursor-secret", &long], &none)).contains(&long));
    }

    #[test]
    fn help_lists_every_setting_with_env() {
        let text = match parse(&args(&["--help"]), &|_| None).unwrap() {
            Command::Print(t) => t,
            Command::Serve(_) => panic!(),
        };
        for s in settings() {
            assert!(text.contains(s.flag) && text.contains(s.env), "{}", s.flag);
        }
    }
}
