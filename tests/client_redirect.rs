//! Issue 30 item 7: `xmd client` follows same-origin 307/308 (re-sending the
//! method and body, at most 5 hops, never to another origin) and, on a 404
//! to a request carrying `Mcp-Session-Id`, starts one new session and
//! retries once (MCP 2025-11-25 transports, Session Management) with the
//! exact 404 bodies the official SDK servers send.

mod client_support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use client_support::{legacy_basics, tools_result, Fake, Reply, Req};
use serde_json::json;
use xmd::client::{Client, Era, Error};

fn client(url: &str, era: Era) -> Client {
    Client::new(url).era(era).timeout(Duration::from_secs(5))
}

/// A legacy server at `/mcp/` (session `s-1`) that redirects `/mcp` with
/// `status`.
fn slash_server(status: u16) -> Fake {
    Fake::start(move |req: &Req| {
        if req.path == "/mcp" {
            return Reply::redirect(status, "/mcp/");
        }
        assert_eq!(req.path, "/mcp/");
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        tools_result(req)
    })
}

#[test]
fn temporary_307_is_followed_each_time_with_the_same_body() {
    let fake = slash_server(307);
    let c = client(&fake.url(), Era::Legacy);
    assert_eq!(c.list_tools().unwrap()[0].name, "echo");
    assert_eq!(c.list_tools().unwrap().len(), 1);
    c.close().unwrap();
    assert_eq!(
        fake.labels(),
        [
            "POST /mcp initialize",
            "POST /mcp/ initialize",
            "POST /mcp notifications/initialized",
            "POST /mcp/ notifications/initialized",
            "POST /mcp tools/list",
            "POST /mcp/ tools/list",
            "POST /mcp tools/list",
            "POST /mcp/ tools/list",
            "DELETE /mcp",
            "DELETE /mcp/",
        ]
    );
    // Each hop re-sends the same bytes and the same headers.
    let r = fake.requests();
    for pair in r.chunks(2) {
        assert_eq!(pair[0].raw_body, pair[1].raw_body, "{}", pair[1].label());
        for h in [
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Content-Type",
            "Accept",
        ] {
            assert_eq!(pair[0].header(h), pair[1].header(h), "{h}");
        }
    }
    assert_eq!(r[9].header("Mcp-Session-Id"), Some("s-1"));
}

#[test]
fn permanent_308_moves_the_endpoint() {
    let fake = slash_server(308);
    let c = client(&fake.url(), Era::Auto);
    assert_eq!(c.list_tools().unwrap()[0].name, "echo");
    c.close().unwrap();
    assert_eq!(
        fake.labels(),
        [
            "POST /mcp server/discover",
            "POST /mcp/ server/discover",
            "POST /mcp/ initialize",
            "POST /mcp/ notifications/initialized",
            "POST /mcp/ tools/list",
            "DELETE /mcp/",
        ]
    );
}

/// Every form of `Location` (absolute, network-path, absolute path,
/// relative path with dot segments) lands on the same endpoint.
#[test]
fn location_forms_resolve_against_the_request_url() {
    let fake = Fake::start(|req: &Req| match req.path.as_str() {
        "/mcp" => Reply::redirect(307, "a/../v2/./mcp?x=1#frag"),
        "/v2/mcp?x=1" => {
            let authority = req.header("Host").unwrap().to_string();
            Reply::redirect(307, &format!("//{authority}/abs"))
        }
        "/abs" => Reply::redirect(307, "/end"),
        "/end" => Reply::result(req, json!({"tools": []})),
        other => panic!("unexpected path {other}"),
    });
    let c = client(&fake.url(), Era::Modern);
    let _ = c.rpc("tools/list", json!({})).unwrap_err(); // no resultType: a violation
    assert_eq!(
        fake.labels(),
        [
            "POST /mcp tools/list",
            "POST /v2/mcp?x=1 tools/list",
            "POST /abs tools/list",
            "POST /end tools/list",
        ]
    );
}

#[test]
fn cross_origin_redirects_are_refused() {
    let other = Fake::start(|req: &Req| Reply::result(req, json!({})));
    let other_url = other.url();
    let other_port = other.addr.port();
    // Another port, another host name for the same address, another scheme.
    for (status, target) in [
        (307, other_url.clone()),
        (308, format!("http://localhost:{other_port}/mcp")),
        (307, format!("https://127.0.0.1:{other_port}/mcp")),
    ] {
        let location = target.clone();
        let fake = Fake::start(move |_req: &Req| Reply::redirect(status, &location));
        let c = client(&fake.url(), Era::Modern);
        let e = c.discover().unwrap_err();
        assert_eq!(
            e,
            Error::HttpStatus {
                status,
                body: format!(
                    "redirect from {} to {target} refused: another origin (xmd client follows 307/308 only within the same scheme, host and port)",
                    fake.url()
                )
            }
        );
        assert_eq!(e.exit_code(), 4);
        assert_eq!(fake.labels(), ["POST /mcp server/discover"]);
    }
    assert!(
        other.requests().is_empty(),
        "nothing reached the other origin"
    );
}

/// A chain of `n` redirects (`/r1` → `/r2` → … → `/mcp/`).
fn chain(n: u32) -> Fake {
    Fake::start(move |req: &Req| {
        let hop: u32 = match req.path.as_str() {
            "/mcp" => 0,
            "/mcp/" => {
                return Reply::result(
                    req,
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"]}),
                )
            }
            p => p.trim_start_matches("/r").parse().unwrap(),
        };
        let next = if hop + 1 == n {
            "/mcp/".to_string()
        } else {
            format!("/r{}", hop + 1)
        };
        Reply::redirect(if hop % 2 == 0 { 307 } else { 308 }, &next)
    })
}

#[test]
fn at_most_five_hops() {
    let fake = chain(5);
    let d = client(&fake.url(), Era::Modern).discover().unwrap();
    assert_eq!(d.supported_versions, ["2026-07-28"]);
    assert_eq!(fake.requests().len(), 6);

    let fake = chain(6);
    let e = client(&fake.url(), Era::Modern).discover().unwrap_err();
    assert_eq!(
        e,
        Error::HttpStatus {
            status: 308,
            body: format!(
                "more than 5 redirects (the last to http://{}/mcp/); stopped",
                fake.addr
            )
        }
    );
    assert_eq!(
        fake.requests().len(),
        6,
        "the sixth Location is not requested"
    );
    // A redirect to itself is the same loop.
    let fake = Fake::start(|_req: &Req| Reply::redirect(307, "/mcp"));
    assert!(matches!(
        client(&fake.url(), Era::Modern).discover(),
        Err(Error::HttpStatus { status: 307, .. })
    ));
    assert_eq!(fake.requests().len(), 6);
}

#[test]
fn see_other_and_friends_are_not_followed() {
    for status in [301u16, 302, 303] {
        let fake = Fake::start(move |_req: &Req| Reply::redirect(status, "/mcp/"));
        let e = client(&fake.url(), Era::Modern).discover().unwrap_err();
        assert_eq!(
            e,
            Error::HttpStatus {
                status,
                body: "(Location: /mcp/; not followed: only 307 and 308 keep the POST) ".into()
            }
        );
        assert_eq!(fake.requests().len(), 1);
    }
}

/// The 404 bodies the official SDK servers send for a session they do not
/// know, verbatim (compact JSON, their field order), with the source:
const SDK_404_BODIES: &[(&str, &str)] = &[
    // @modelcontextprotocol/sdk v1.29.0,
    // src/server/webStandardStreamableHttp.ts, validateSession() →
    // createJsonErrorResponse(404, -32001, 'Session not found'):
    // JSON.stringify({ jsonrpc: '2.0', error, id: null }). The v2 packages
    // (packages/server/src/server/streamableHttp.ts) send the same.
    (
        "typescript-sdk v1.29.0",
        r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#,
    ),
    // mcp (PyPI) v1.29.0, src/mcp/server/streamable_http_manager.py,
    // handle_stateful_request(): JSONRPCError(jsonrpc="2.0",
    // id="server-error", error=ErrorData(code=INVALID_REQUEST,
    // message="Session not found")).model_dump_json(by_alias=True,
    // exclude_none=True), status 404.
    (
        "python-sdk v1.29.0 session manager",
        r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}"#,
    ),
    // mcp (PyPI) v1.29.0, src/mcp/server/streamable_http.py,
    // handle_request(): a terminated session, _create_error_response(
    // "Not Found: Session has been terminated", HTTPStatus.NOT_FOUND).
    (
        "python-sdk v1.29.0 terminated transport",
        r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Not Found: Session has been terminated"}}"#,
    ),
    // python-sdk main (v2.0.0rc1), src/mcp/server/streamable_http_manager.py:
    // JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
    // code=INVALID_REQUEST, message="Session not found"))
    // .model_dump_json(by_alias=True, exclude_unset=True), status 404.
    (
        "python-sdk v2.0.0rc1 session manager",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}"#,
    ),
    // A server that sends no body at all.
    ("empty body", ""),
];

/// A legacy server whose session `s-N` expires after `lists_per_session`
/// `tools/list` calls, answering later ones with `body` under 404.
fn expiring(body: &'static str, lists_per_session: u32) -> (Fake, Arc<AtomicU32>) {
    let sessions = Arc::new(AtomicU32::new(0));
    let lists = Arc::new(AtomicU32::new(0));
    let s = sessions.clone();
    let fake = Fake::start(move |req: &Req| {
        if req.method() == "initialize" {
            let n = s.fetch_add(1, Ordering::SeqCst) + 1;
            lists.store(0, Ordering::SeqCst);
            return legacy_basics(req, &format!("s-{n}")).unwrap();
        }
        if let Some(r) = legacy_basics(req, "unused") {
            return r;
        }
        let current = format!("s-{}", s.load(Ordering::SeqCst));
        let used = lists.fetch_add(1, Ordering::SeqCst);
        if req.header("Mcp-Session-Id") != Some(current.as_str()) || used >= lists_per_session {
            let r = Reply::raw(404, "application/json", body);
            return if body.is_empty() {
                Reply::empty(404)
            } else {
                r
            };
        }
        tools_result(req)
    });
    (fake, sessions)
}

#[test]
fn every_sdks_session_404_starts_one_new_session() {
    for (sdk, body) in SDK_404_BODIES {
        let (fake, sessions) = expiring(body, 1);
        let c = client(&fake.url(), Era::Legacy);
        assert_eq!(c.list_tools().unwrap().len(), 1, "{sdk}");
        // s-1 has expired: 404, a new session s-2, the same request again.
        assert_eq!(c.list_tools().unwrap().len(), 1, "{sdk}");
        assert_eq!(c.session_id().as_deref(), Some("s-2"), "{sdk}");
        assert_eq!(sessions.load(Ordering::SeqCst), 2, "{sdk}");
        drop(c);
        let got: Vec<(String, Option<String>)> = fake
            .requests()
            .iter()
            .map(|q| (q.label(), q.header("Mcp-Session-Id").map(str::to_string)))
            .collect();
        let want: Vec<(String, Option<String>)> = [
            ("POST /mcp initialize", None),
            ("POST /mcp notifications/initialized", Some("s-1")),
            ("POST /mcp tools/list", Some("s-1")),
            ("POST /mcp tools/list", Some("s-1")),
            ("POST /mcp initialize", None),
            ("POST /mcp notifications/initialized", Some("s-2")),
            ("POST /mcp tools/list", Some("s-2")),
            ("DELETE /mcp", Some("s-2")),
        ]
        .into_iter()
        .map(|(l, s)| (l.to_string(), s.map(str::to_string)))
        .collect();
        assert_eq!(got, want, "{sdk}");
    }
}

/// The retry is once: a server that 404s the new session too gets its
/// error reported (JSON-RPC error → exit 3, empty body → HTTP 404 → 4).
#[test]
fn a_second_404_is_reported_not_retried() {
    for (sdk, body) in SDK_404_BODIES {
        let (fake, sessions) = expiring(body, 0);
        let c = client(&fake.url(), Era::Legacy);
        let e = c.list_tools().unwrap_err();
        assert_eq!(sessions.load(Ordering::SeqCst), 2, "{sdk}");
        let want = match serde_json::from_str::<serde_json::Value>(body) {
            // An id that is not ours ("server-error") is no response to us.
            Ok(v) if v["id"].is_null() => Error::JsonRpc {
                code: v["error"]["code"].as_i64().unwrap(),
                message: v["error"]["message"].as_str().unwrap().into(),
                data: None,
            },
            _ => Error::HttpStatus {
                status: 404,
                body: body.to_string(),
            },
        };
        assert_eq!(e, want, "{sdk}");
        drop(c);
        let labels = fake.labels();
        assert_eq!(
            labels.iter().filter(|l| l.ends_with("tools/list")).count(),
            2,
            "{sdk}: {labels:?}"
        );
    }
}

/// Without a session, a 404 is just a 404: no new session.
#[test]
fn a_404_without_a_session_is_not_a_session_expiry() {
    let fake = Fake::start(|req: &Req| {
        if req.method() == "initialize" {
            return client_support::init_result(req, "2025-11-25");
        }
        if let Some(r) = legacy_basics(req, "x") {
            return r;
        }
        Reply::raw(404, "application/json", SDK_404_BODIES[0].1)
    });
    let c = client(&fake.url(), Era::Legacy);
    assert_eq!(c.list_tools().unwrap_err().code(), Some(-32001));
    assert_eq!(
        fake.labels(),
        [
            "POST /mcp initialize",
            "POST /mcp notifications/initialized",
            "POST /mcp tools/list"
        ]
    );
}

/// The process: `xmd client` against a server that moves `/mcp` to
/// `/mcp/` exits 0 (issue 30: it ended in exit 4).
#[test]
fn the_command_follows_a_trailing_slash_redirect() {
    for status in [307, 308] {
        let fake = slash_server(status);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_xmd"))
            .args(["client", "--url", &fake.url(), "tools"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{status}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["tools"][0]["name"], "echo");
        assert!(out.stderr.is_empty());
        assert_eq!(
            fake.labels().last().map(String::as_str),
            Some("DELETE /mcp/")
        );
    }
}

/// The TypeScript SDK's example servers (and server-everything, built on
/// them) answer an unknown session with 400, not 404: typescript-sdk
/// v1.29.0 src/examples/server/simpleStreamableHttp.ts, `res.status(400)
/// .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No
/// valid session ID provided' }, id: null })`; the bytes below are what
/// @modelcontextprotocol/server-everything 2026.8.31 sent (Express). The
/// client reads it as an expired session too; another 400 is not one.
#[test]
fn the_sdk_examples_400_for_an_unknown_session_starts_a_new_one() {
    const EXAMPLE: &str = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
    for (body, renews) in [
        (EXAMPLE, true),
        (
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: something else"},"id":null}"#,
            false,
        ),
    ] {
        let sessions = Arc::new(AtomicU32::new(0));
        let s = sessions.clone();
        let fake = Fake::start(move |req: &Req| {
            if req.method() == "initialize" {
                let n = s.fetch_add(1, Ordering::SeqCst) + 1;
                return legacy_basics(req, &format!("s-{n}")).unwrap();
            }
            if let Some(r) = legacy_basics(req, "unused") {
                return r;
            }
            if req.header("Mcp-Session-Id") == Some("s-1") {
                return Reply::raw(400, "application/json; charset=utf-8", body);
            }
            tools_result(req)
        });
        let c = client(&fake.url(), Era::Legacy);
        let got = c.list_tools();
        assert_eq!(got.is_ok(), renews, "{body}");
        assert_eq!(sessions.load(Ordering::SeqCst), if renews { 2 } else { 1 });
        if !renews {
            assert_eq!(got.unwrap_err().code(), Some(-32000));
        }
    }
}
