//! The `xmd` binary: parses the command line, builds the server, runs it.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::Arc;

use xmd::app::App;
use xmd::cli::{self, Command};
use xmd::config::LogFormat;
use xmd::server::log::rfc3339_now;
use xmd::server::{Server, ServerOptions};
use xmd::x::upstream::HttpUpstream;

/// mimalloc in every build: musl's malloc serialises threads, and glibc's
/// cost a tenth of a profile cache miss (see Cargo.toml and
/// deploy/README.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("client") {
        #[cfg(feature = "client")]
        return xmd::client::cli::main(&args[1..]);
        #[cfg(not(feature = "client"))]
        {
            eprintln!(
                "xmd: this build serves only: it was built without the `client` feature \
                 (the static serving build leaves it out for size). `cargo install` or \
                 `cargo build --release` give a build with `xmd client`."
            );
            return ExitCode::from(2);
        }
    }
    if args.first().map(String::as_str) == Some("probe") {
        #[cfg(feature = "client")]
        return xmd::probe::cli::main(&args[1..]);
        #[cfg(not(feature = "client"))]
        {
            eprintln!(
                "xmd: this build serves only: it was built without the `client` feature \
                 (which `xmd probe` is part of). `cargo install` or `cargo build --release` \
                 give a build with `xmd probe`."
            );
            return ExitCode::from(2);
        }
    }
    if args.first().map(String::as_str) == Some("connect") {
        return xmd::connect::main(&args[1..]);
    }
    let env = |k: &str| std::env::var(k).ok();
    let mut config = match cli::parse(&args, &env) {
        Ok(Command::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve(config)) => {
            // Returns only when no new image was started (xmd::heap).
            xmd::heap::set_heap_options();
            config
        }
        Err(cli::UsageError(msg)) => {
            eprintln!("xmd: {msg}\nTry 'xmd --help'.");
            return ExitCode::from(2);
        }
    };
    // By default (`--upstream-io loop`) the event loops make the upstream
    // requests (issue 28); with `threads` the workers block on `ureq`.
    let transport = (config.upstream_io == xmd::config::UpstreamIo::Loop).then(|| {
        xmd::x::loopio::Transport::new(
            (&config.upstream, config.upstream_timeout),
            (!config.syndication_url.is_empty())
                .then_some((config.syndication_url.as_str(), config.syndication_timeout)),
            config.call_timeout,
        )
    });
    let options = ServerOptions {
        upstream: transport.clone(),
        limits: config.limits.clone(),
        event_loops: config.event_loops,
        workers: config.workers,
        queue: config.queue,
        max_connections: config.max_connections,
        max_connections_per_ip: config.max_connections_per_ip,
        trusted_proxies: config.trusted_proxies.clone(),
        max_buffered_bytes: config.max_buffered_bytes,
        max_buffered_bytes_per_ip: config.max_buffered_bytes_per_ip,
        shutdown_grace: config.shutdown_grace,
        handle_signals: true,
        log_format: config.log_format,
    };
    let server = match Server::bind(config.listen, options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("xmd: cannot listen on {}: {e}", config.listen);
            return ExitCode::from(1);
        }
    };
    let local = server.local_addr().unwrap_or(config.listen);
    if config.listen.port() == 0 && config.public_url == format!("http://{}", config.listen) {
        config.public_url = format!("http://{local}");
    }
    let (upstream, syndication): (Arc<dyn xmd::x::upstream::Upstream>, _) = match &transport {
        Some(t) => (t.primary(), t.fallback()),
        None => (
            Arc::new(HttpUpstream::new(&config.upstream, config.upstream_timeout)),
            (!config.syndication_url.is_empty()).then(|| {
                Arc::new(HttpUpstream::new(
                    &config.syndication_url,
                    config.syndication_timeout,
                )) as Arc<dyn xmd::x::upstream::Upstream>
            }),
        ),
    };
    let app = Arc::new(App::with_fallback(&config, upstream, syndication));
    if let Some(t) = &transport {
        // Bodies read by the loops count in the calls' working budget.
        t.meter(app.work_budget());
    }
    let effective = serde_json::json!({
        "listen": local.to_string(),
        "public_url": config.public_url,
        "upstream": config.upstream,
        "syndication_url": config.syndication_url,
        "cache_bytes": config.cache_bytes,
        "max_working_bytes": config.max_working_bytes,
        "rate_limit_per_s": config.rate_limit,
        "rate_burst": config.rate_burst,
        "upstream_budget_per_s": config.upstream_budget,
        "log_format": format!("{:?}", config.log_format).to_ascii_lowercase(),
        "upstream_io": format!("{:?}", config.upstream_io).to_ascii_lowercase(),
        "event_loops": config.event_loops,
        "workers": config.workers,
        "queue": config.queue,
        "max_connections": config.max_connections,
        "max_connections_per_ip": config.max_connections_per_ip,
        "max_buffered_bytes": config.max_buffered_bytes,
        "max_buffered_bytes_per_ip": config.max_buffered_bytes_per_ip.unwrap_or_else(|| {
            xmd::server::admission::MemoryBudget::address_share(
                config.max_buffered_bytes,
                config.limits.max_body_bytes,
            )
        }),
        "max_body_bytes": config.limits.max_body_bytes,
        "header_timeout_s": config.limits.header_timeout.as_secs(),
        "body_timeout_s": config.limits.body_timeout.as_secs(),
        "idle_timeout_s": config.limits.idle_timeout.as_secs(),
        "upstream_timeout_s": config.upstream_timeout.as_secs(),
        "syndication_timeout_s": config.syndication_timeout.as_secs(),
        "shutdown_grace_s": config.shutdown_grace.as_secs(),
        "max_result_chars": config.max_result_chars,
        "call_timeout_s": config.call_timeout.as_secs(),
        "cursor_key": if config.cursor_secret.is_some() { "--cursor-secret" } else { "random per process" },
        "allowed_origins": config.allowed_origins,
        "trusted_proxies": config.trusted_proxies.ranges_text(),
        "proxy_header": config.trusted_proxies.header().name(),
        "max_result_chars": config.max_result_chars,
        "call_timeout_s": config.call_timeout.as_secs(),
    });
    let json_log = config.log_format == LogFormat::Json;
    // Formatted first and written with one `write`: stderr is unbuffered,
    // and `eprintln!` with arguments writes piece by piece (130 writes
    // here), which another writer to the same stream could split.
    let line = if json_log {
        serde_json::json!({"time": rfc3339_now(), "event": "start",
            "endpoint": format!("http://{local}/mcp"),
            "version": env!("CARGO_PKG_VERSION"), "config": effective})
        .to_string()
    } else {
        format!(
            "xmd {} listening on http://{local}/mcp (config {effective})",
            env!("CARGO_PKG_VERSION")
        )
    };
    stderr_line(line);
    let warn = move |warning: String| stderr_line(warning_line(json_log, &warning));
    if let Some(warning) = xmd::app::landing::unreachable_public_url(&config.public_url) {
        warn(warning);
    }
    for w in config.trusted_proxies.warnings() {
        warn(w);
    }
    xmd::app::upstream_check::spawn(&config.upstream, &config.syndication_url, warn);
    let started = std::time::Instant::now();
    match server.run(app) {
        Ok(()) => {
            let secs = started.elapsed().as_secs();
            stderr_line(if json_log {
                serde_json::json!({"time": rfc3339_now(), "event": "shutdown", "uptime_s": secs})
                    .to_string()
            } else {
                format!("xmd: shut down cleanly after {secs} s")
            });
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xmd: event loop failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// A start-up warning as a log line: `xmd: warning: …`, or a JSON
/// `"event": "warning"` object under `--log-format json`.
fn warning_line(json_log: bool, warning: &str) -> String {
    if json_log {
        serde_json::json!({"time": rfc3339_now(), "event": "warning", "message": warning})
            .to_string()
    } else {
        format!("xmd: warning: {warning}")
    }
}

/// Writes one line to stderr with a single `write`.
fn stderr_line(mut line: String) {
    line.push('\n');
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}
