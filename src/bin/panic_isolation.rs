//! Per-call panic isolation, checked in the build it is compiled into:
//! `.ci/static.sh` builds it with the shipped binary's profile, toolchain and
//! flags (`dist`, the serving features plus `isolation-check`, which only
//! enables this binary; nightly's rebuilt std when used) and runs it. The shipped binary has no way to make a tool panic (none is
//! wanted), so this runs the same application code in-process with an
//! upstream that panics: a `tools/call` must be answered with JSON-RPC
//! `-32603`, an X route with HTTP 500, twice each (the worker and the process
//! live on), and then `/healthz` must still answer 200. With
//! `panic = "abort"`, or a std built without `panic_unwind`, the first call
//! ends the process instead. Exit status 0 and one `PASS` line, or a message
//! and 1.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::Arc;

use xmd::http::{Body, Head, Method, Request, Response};
use xmd::server::conn::{Handled, Handler};
use xmd::x::upstream::{FetchError, Upstream, UpstreamResponse};

struct Panicking;

impl Upstream for Panicking {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        panic!("panic_isolation: an upstream request panics ({path_and_query})");
    }
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"panic-isolation","version":"0.0.1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn handle(
    app: &xmd::app::App,
    method: Method,
    target: &str,
    fields: &[(&str, &[u8])],
    body: &[u8],
) -> Response {
    let mut all: Vec<(&str, &[u8])> = vec![("Host", b"127.0.0.1:8080")];
    all.extend_from_slice(fields);
    let request = Request {
        head: Head::new(method, target, 1, &all),
        body: body.to_vec(),
        peer: "127.0.0.1:5000".parse().expect("a socket address"),
    };
    match app.handle(request) {
        Handled::Now(r) => r,
        Handled::Later(job) => job.run(),
    }
}

fn body_text(r: &Response) -> String {
    match &r.body {
        Body::Empty => String::new(),
        Body::Static(b) => String::from_utf8_lossy(b).into_owned(),
        Body::Shared(b) => String::from_utf8_lossy(b).into_owned(),
        Body::Owned(b) => String::from_utf8_lossy(b).into_owned(),
        #[allow(unreachable_patterns)]
        _ => String::new(),
    }
}

fn main() -> ExitCode {
    // The default hook would print each expected panic; one line says so.
    std::panic::set_hook(Box::new(|_| {
        eprintln!("panic_isolation: a tool call panicked (expected)")
    }));
    let config = xmd::config::Config::new("127.0.0.1:8080".parse().expect("a socket address"));
    let app = xmd::app::App::new(&config, Arc::new(Panicking));
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/jack/status/20"}},"_meta":{META}}}}}"#
    );
    let mcp_fields: [(&str, &[u8]); 5] = [
        ("Content-Type", b"application/json"),
        ("Accept", b"application/json, text/event-stream"),
        ("MCP-Protocol-Version", b"2026-07-28"),
        ("Mcp-Method", b"tools/call"),
        ("Mcp-Name", b"x_md_get_post"),
    ];
    for round in 1..=2 {
        let r = handle(&app, Method::Post, "/mcp", &mcp_fields, call.as_bytes());
        let text = body_text(&r);
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("FAIL panic_isolation: tools/call {round}: status {}, body not JSON ({e}): {text}", r.status);
                return ExitCode::FAILURE;
            }
        };
        if v["error"]["code"] != -32603 || v["id"] != 7 {
            eprintln!("FAIL panic_isolation: tools/call {round}: expected error -32603 for id 7, got status {} {text}", r.status);
            return ExitCode::FAILURE;
        }
        let r = handle(&app, Method::Get, "/search?q=panic", &[], b"");
        if r.status != 500 {
            eprintln!(
                "FAIL panic_isolation: GET /search {round}: expected 500, got {} {}",
                r.status,
                body_text(&r)
            );
            return ExitCode::FAILURE;
        }
    }
    let r = handle(&app, Method::Get, "/healthz", &[], b"");
    if r.status != 200 {
        eprintln!(
            "FAIL panic_isolation: /healthz after the panics: {}",
            r.status
        );
        return ExitCode::FAILURE;
    }
    println!("PASS panic_isolation: two panicking tools/call answered -32603, two X-route calls 500, /healthz 200 after them");
    ExitCode::SUCCESS
}
