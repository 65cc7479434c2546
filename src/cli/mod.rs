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

mod usage;

use usage::settings;
pub use usage::{help, help_for};

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
mod tests;
