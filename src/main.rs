//! The `xmd` binary: parses the command line, builds the server, runs it.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::Arc;

use xmd::app::App;
use xmd::cli::{self, Command};
use xmd::server::{Server, ServerOptions};
use xmd::x::upstream::HttpUpstream;

/// musl's malloc serialises threads; the static musl build uses mimalloc
/// (see Cargo.toml and deploy/README.md).
#[cfg(target_env = "musl")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = |k: &str| std::env::var(k).ok();
    let mut config = match cli::parse(&args, &env) {
        Ok(Command::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve(config)) => config,
        Err(cli::UsageError(msg)) => {
            eprintln!("xmd: {msg}\nTry 'xmd --help'.");
            return ExitCode::from(2);
        }
    };
    let options = ServerOptions {
        limits: config.limits.clone(),
        workers: config.workers,
        queue: config.queue,
        max_connections: config.max_connections,
        shutdown_grace: config.shutdown_grace,
        handle_signals: true,
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
    let upstream = Arc::new(HttpUpstream::new(&config.upstream, config.upstream_timeout));
    let app = Arc::new(App::new(&config, upstream));
    eprintln!(
        "xmd {} listening on http://{local}/mcp (public URL {}, upstream {}, {} workers, queue {})",
        env!("CARGO_PKG_VERSION"),
        config.public_url,
        config.upstream,
        config.workers,
        config.queue
    );
    match server.run(app) {
        Ok(()) => {
            eprintln!("xmd: shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xmd: event loop failed: {e}");
            ExitCode::from(1)
        }
    }
}
