//! `xmd::client` against a scripted fake MCP server on 127.0.0.1: legacy
//! sessions and DELETE, session expiry, SSE streams full of noise, 202 to a
//! request, 2026-07-28 results without `resultType`, paging, the auto-probe
//! fallback rules and malformed replies. Every request is recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use xmd::client::{Client, Era, Error};

/// One request as the fake saw it.
#[derive(Debug, Clone)]
struct Req {
    verb: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
    fn id(&self) -> Value {
        self.body["id"].clone()
    }
    /// `VERB method` (or `VERB response` for a JSON-RPC response body).
    fn label(&self) -> String {
        if self.verb != "POST" {
            return self.verb.clone();
        }
        if self.body.get("method").is_some() {
            format!("POST {}", self.method())
        } else {
            "POST response".into()
        }
    }
}

/// One scripted reply: written in `parts` (flushed separately), then the
/// connection closes.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    parts: Vec<Vec<u8>>,
}

impl Reply {
    fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: vec![],
            parts: vec![],
        }
    }
    fn raw(status: u16, ct: &str, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), ct.into())],
            parts: vec![body.as_bytes().to_vec()],
        }
    }
    fn json(status: u16, v: Value) -> Reply {
        Reply::raw(status, "application/json", &v.to_string())
    }
    fn result(req: &Req, result: Value) -> Reply {
        Reply::json(
            200,
            json!({"jsonrpc": "2.0", "id": req.id(), "result": result}),
        )
    }
    fn error(status: u16, req: &Req, code: i64, msg: &str) -> Reply {
        Reply::json(
            status,
            json!({"jsonrpc": "2.0", "id": req.id(), "error": {"code": code, "message": msg}}),
        )
    }
    /// An SSE body written in the given pieces.
    fn sse(parts: &[&str]) -> Reply {
        Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            parts: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
        }
    }
    fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.into(), v.into()));
        self
    }
}

type Handler = dyn Fn(&Req) -> Reply + Send + Sync;

struct Fake {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Fake {
    fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Fake {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let sink = log.clone();
        thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(conn) = conn else { continue };
                let (h, s) = (handler.clone(), sink.clone());
                thread::spawn(move || serve(conn, &*h, &s));
            }
        });
        Fake { addr, log }
    }
    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
    fn client(&self, era: Era) -> Client {
        Client::new(&self.url())
            .era(era)
            .timeout(Duration::from_secs(5))
    }
    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }
    fn labels(&self) -> Vec<String> {
        self.requests().iter().map(Req::label).collect()
    }
}

fn serve(conn: TcpStream, handler: &Handler, log: &Mutex<Vec<Req>>) {
    let mut w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let verb = line.split_whitespace().next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap();
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    let req = Req {
        verb,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    log.lock().unwrap().push(req.clone());
    let reply = handler(&req);
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if reply.parts.len() <= 1 {
        let n: usize = reply.parts.iter().map(Vec::len).sum();
        head.push_str(&format!("Content-Length: {n}\r\n"));
    }
    head.push_str("\r\n");
    let _ = w.write_all(head.as_bytes());
    for p in &reply.parts {
        let _ = w.write_all(p);
        let _ = w.flush();
        thread::sleep(Duration::from_millis(2));
    }
}

fn init_result(req: &Req, version: &str) -> Reply {
    Reply::result(
        req,
        json!({"protocolVersion": version, "capabilities": {"tools": {}},
               "serverInfo": {"name": "fake", "version": "9"}}),
    )
}

/// A legacy server with sessions that refuses the discover probe the way
/// TS SDK v1 servers do (400, -32000, id null).
fn legacy_with_sessions(
    next_session: Arc<Mutex<u32>>,
    expire_after_first_list: bool,
) -> impl Fn(&Req) -> Reply {
    let listed = Arc::new(Mutex::new(0u32));
    move |req: &Req| {
        let current = format!("s-{}", *next_session.lock().unwrap());
        if req.verb == "DELETE" {
            return Reply::empty(200);
        }
        if req.method() == "initialize" {
            let mut n = next_session.lock().unwrap();
            *n += 1;
            return init_result(req, "2025-11-25").header("Mcp-Session-Id", &format!("s-{n}"));
        }
        if req.header("Mcp-Session-Id").is_none() {
            return Reply::json(
                400,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}),
            );
        }
        if req.header("Mcp-Session-Id") != Some(current.as_str()) {
            return Reply::empty(404);
        }
        if req.body.get("id").is_none() {
            return Reply::empty(202);
        }
        match req.method() {
            "tools/list" => {
                let mut l = listed.lock().unwrap();
                *l += 1;
                if expire_after_first_list && *l == 2 {
                    // Session s-1 expires now.
                    *next_session.lock().unwrap() += 100;
                    return Reply::empty(404);
                }
                Reply::result(
                    req,
                    json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
                )
            }
            _ => Reply::error(200, req, -32601, "Method not found"),
        }
    }
}

#[test]
fn legacy_session_lifecycle_with_auto_fallback_and_delete() {
    let fake = Fake::start(legacy_with_sessions(Arc::new(Mutex::new(0)), false));
    let c = fake.client(Era::Auto);
    let tools = c.list_tools().unwrap();
    assert_eq!(tools[0].name, "echo");
    assert_eq!(c.session_id().as_deref(), Some("s-1"));
    c.close().unwrap();
    assert_eq!(
        fake.labels(),
        [
            "POST server/discover",
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "DELETE"
        ]
    );
    let r = fake.requests();
    assert_eq!(r[0].header("MCP-Protocol-Version"), Some("2026-07-28"));
    assert_eq!(r[0].header("Mcp-Method"), Some("server/discover"));
    assert_eq!(
        r[0].body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        r[0].header("Accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(r[0].header("Content-Type"), Some("application/json"));
    // initialize: no version header, no session, offers 2025-11-25.
    assert_eq!(r[1].header("MCP-Protocol-Version"), None);
    assert_eq!(r[1].header("Mcp-Session-Id"), None);
    assert_eq!(r[1].body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(r[1].body["params"]["clientInfo"]["name"], "xmd-client");
    for later in &r[2..] {
        assert_eq!(
            later.header("Mcp-Session-Id"),
            Some("s-1"),
            "{}",
            later.label()
        );
        assert_eq!(later.header("MCP-Protocol-Version"), Some("2025-11-25"));
        assert_eq!(
            later.header("Mcp-Method"),
            None,
            "no modern headers in legacy"
        );
    }
    assert_eq!(r[3].body.get("params"), None);
}

#[test]
fn drop_sends_delete_too() {
    let fake = Fake::start(legacy_with_sessions(Arc::new(Mutex::new(0)), false));
    {
        let c = fake.client(Era::Legacy);
        c.ping().unwrap_err(); // the fake answers ping with -32601; the session exists.
    }
    assert_eq!(
        fake.labels(),
        [
            "POST initialize",
            "POST notifications/initialized",
            "POST ping",
            "DELETE"
        ]
    );
    assert_eq!(fake.requests()[3].header("Mcp-Session-Id"), Some("s-1"));
}

#[test]
fn expired_session_404_starts_a_new_session_once() {
    let fake = Fake::start(legacy_with_sessions(Arc::new(Mutex::new(0)), true));
    let c = fake.client(Era::Legacy);
    assert_eq!(c.list_tools().unwrap().len(), 1);
    assert_eq!(c.list_tools().unwrap().len(), 1);
    assert_eq!(c.session_id().as_deref(), Some("s-102"));
    drop(c);
    let r = fake.requests();
    let got: Vec<(String, Option<&str>)> = r
        .iter()
        .map(|q| (q.label(), q.header("Mcp-Session-Id")))
        .collect();
    let want: Vec<(String, Option<&str>)> = [
        ("POST initialize", None),
        ("POST notifications/initialized", Some("s-1")),
        ("POST tools/list", Some("s-1")),
        ("POST tools/list", Some("s-1")),
        ("POST initialize", None),
        ("POST notifications/initialized", Some("s-102")),
        ("POST tools/list", Some("s-102")),
        ("DELETE", Some("s-102")),
    ]
    .into_iter()
    .map(|(l, s)| (l.to_string(), s))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn sse_reply_skips_noise_and_answers_a_server_ping() {
    let fake = Fake::start(|req: &Req| match (req.verb.as_str(), req.method()) {
        (_, "initialize") => init_result(req, "2025-06-18"),
        (_, "tools/call") => {
            let id = req.id();
            let ours = format!(
                "data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"Echo: hi\"}}]}}}}\r\n\r\n"
            );
            Reply::sse(&[
                "id: prime-1\r\ndata:\r\n\r\n",
                ": keep-alive comment\r\n",
                "event: ping\r\ndata: {\"x\":1}\r\n\r\n",
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",",
                "\"params\":{\"progress\":1}}\n\n",
                "data: {\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\r\r",
                "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n",
                "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-2\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n",
                &ours[..7],
                &ours[7..],
            ])
        }
        _ => Reply::empty(202),
    });
    let c = fake.client(Era::Legacy);
    let r = c.call_tool("echo", json!({"message": "hi"})).unwrap();
    assert_eq!(r.text(), "Echo: hi");
    assert!(!r.is_error);
    let answers: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|q| q.label() == "POST response")
        .map(|q| q.body)
        .collect();
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}}),
            json!({"jsonrpc": "2.0", "id": "srv-2", "error": {"code": -32601, "message": "Method not found"}}),
        ]
    );
    let call = fake
        .requests()
        .into_iter()
        .find(|q| q.method() == "tools/call")
        .unwrap();
    assert_eq!(
        call.body["params"],
        json!({"name": "echo", "arguments": {"message": "hi"}})
    );
    assert_eq!(call.header("MCP-Protocol-Version"), Some("2025-06-18"));
}

fn protocol_msg(e: Error) -> String {
    match e {
        Error::Protocol(m) => m,
        other => panic!("expected a protocol violation, got {other:?}"),
    }
}

#[test]
fn sse_stream_ending_without_our_response() {
    let fake = Fake::start(|req: &Req| {
        Reply::sse(&[
            ": hello\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
        ])
        .header("X-Req", req.method())
    });
    let c = fake.client(Era::Modern);
    let m = protocol_msg(c.list_tools().unwrap_err());
    assert_eq!(m, "SSE stream ended before the response to request 1");
}

#[test]
fn oversized_sse_event_is_refused() {
    let fake = Fake::start(|_req: &Req| {
        let big = "x".repeat(xmd::client::sse::MAX_SSE_EVENT_BYTES + 1);
        let mut r = Reply::sse(&["data: "]);
        r.parts.push(big.into_bytes());
        r
    });
    let m = protocol_msg(fake.client(Era::Modern).list_tools().unwrap_err());
    assert_eq!(
        m,
        format!("SSE event larger than {} bytes", 16 * 1024 * 1024)
    );
}

#[test]
fn accepted_202_to_a_request_is_an_error() {
    let fake = Fake::start(|_req: &Req| Reply::empty(202));
    let m = protocol_msg(fake.client(Era::Modern).list_tools().unwrap_err());
    assert_eq!(
        m,
        "server answered a request with 202 Accepted and no response"
    );
}

#[test]
fn modern_result_without_result_type_is_a_violation() {
    let fake = Fake::start(|req: &Req| match req.method() {
        "tools/list" => Reply::result(req, json!({"tools": []})),
        "tools/call" => Reply::result(
            req,
            json!({"resultType": "input_required", "inputRequests": {}}),
        ),
        _ => Reply::result(req, json!({"resultType": "partial"})),
    });
    let c = fake.client(Era::Modern);
    assert_eq!(
        protocol_msg(c.list_tools().unwrap_err()),
        "tools/list: 2026-07-28 result without resultType"
    );
    assert!(protocol_msg(c.call_tool("t", json!({})).unwrap_err())
        .starts_with("tools/call: server asked for client input (resultType input_required)"));
    assert_eq!(
        protocol_msg(c.rpc("x/y", Value::Null).unwrap_err()),
        "x/y: unknown resultType \"partial\""
    );
}

#[test]
fn modern_requests_carry_meta_and_mirrored_headers() {
    let fake = Fake::start(|req: &Req| match req.method() {
        "resources/read" => Reply::result(
            req,
            json!({"resultType": "complete", "contents": [{"uri": req.body["params"]["uri"], "text": "t"}],
                   "ttlMs": 0, "cacheScope": "private"}),
        ),
        _ => Reply::result(req, json!({"resultType": "complete", "content": []})),
    });
    let c = fake.client(Era::Modern);
    c.call_tool("météo", json!({"city": "Zürich"})).unwrap();
    let r = c
        .read_resource("https://example.com/resource?id=123")
        .unwrap();
    assert_eq!(r.contents[0].text.as_deref(), Some("t"));
    c.rpc("tools/call", json!({"name": "=?base64?x?="}))
        .unwrap();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "no probe in the pinned modern era");
    let q = &reqs[0];
    assert_eq!(q.header("Mcp-Method"), Some("tools/call"));
    assert_eq!(q.header("Mcp-Name"), Some("=?base64?bcOpdMOpbw==?="));
    assert_eq!(q.header("MCP-Protocol-Version"), Some("2026-07-28"));
    assert_eq!(
        q.body["params"]["_meta"],
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "xmd-client", "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/clientCapabilities": {}
        })
    );
    assert_eq!(q.body["params"]["arguments"], json!({"city": "Zürich"}));
    assert_eq!(q.header("Mcp-Session-Id"), None);
    assert_eq!(
        reqs[1].header("Mcp-Name"),
        Some("https://example.com/resource?id=123")
    );
    assert_eq!(
        reqs[2].header("Mcp-Name"),
        Some("=?base64?PT9iYXNlNjQ/eD89?=")
    );
    // Ids are distinct integers.
    let ids: Vec<Value> = reqs.iter().map(Req::id).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
}

#[test]
fn lists_follow_next_cursor_to_the_end() {
    let fake = Fake::start(|req: &Req| {
        if req.method() == "initialize" {
            return init_result(req, "2025-11-25");
        }
        if req.body.get("id").is_none() {
            return Reply::empty(202);
        }
        let cursor = req.body["params"]["cursor"].as_str().map(str::to_string);
        let (items, next) = match cursor.as_deref() {
            None => (vec!["a", "b"], Some("p2")),
            Some("p2") => (vec!["c"], Some("p3")),
            Some("p3") => (vec![], Some("p4")),
            Some("p4") => (vec!["d"], None),
            Some(_) => (vec![], Some("loop")),
        };
        let key = if req.method() == "tools/list" {
            "tools"
        } else {
            "resources"
        };
        let list: Vec<Value> = items
            .iter()
            .map(|n| json!({"name": n, "uri": format!("u://{n}"), "inputSchema": {"type": "object"}}))
            .collect();
        let mut r = json!({ key: list });
        if let Some(n) = next {
            r["nextCursor"] = json!(n);
        }
        Reply::result(req, r)
    });
    let c = fake.client(Era::Legacy);
    let names: Vec<String> = c
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let uris: Vec<String> = c
        .list_resources()
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["u://a", "u://b", "u://c", "u://d"]);
    let cursors: Vec<Value> = fake
        .requests()
        .iter()
        .filter(|q| q.method() == "tools/list")
        .map(|q| {
            q.body
                .get("params")
                .map_or(Value::Null, |p| p["cursor"].clone())
        })
        .collect();
    assert_eq!(
        cursors,
        [Value::Null, json!("p2"), json!("p3"), json!("p4")]
    );
}

#[test]
fn a_repeated_cursor_ends_the_list_with_an_error() {
    let fake = Fake::start(|req: &Req| {
        Reply::result(
            req,
            json!({"resultType": "complete", "tools": [], "nextCursor": "same"}),
        )
    });
    let m = protocol_msg(fake.client(Era::Modern).list_tools().unwrap_err());
    assert_eq!(
        m,
        "tools/list: server repeated cursor \"same\" after page 2 (a cursor cycle); stopped"
    );
    assert_eq!(fake.requests().len(), 2);
}

/// A cycle through several cursors (A→B→C→A) is seen on the first revisit,
/// not after MAX_LIST_PAGES pages.
#[test]
fn a_cursor_cycle_ends_the_list_at_the_first_revisit() {
    for cycle in [vec!["A", "B"], vec!["A", "B", "C", "D", "E"]] {
        let next = cycle.clone();
        let fake = Fake::start(move |req: &Req| {
            let at = req.body["params"]["cursor"].as_str();
            let i = at.map_or(0, |c| next.iter().position(|x| *x == c).unwrap() + 1);
            let cursor = next[i % next.len()];
            Reply::result(
                req,
                json!({"resultType": "complete", "tools": [], "nextCursor": cursor}),
            )
        });
        let m = protocol_msg(fake.client(Era::Modern).list_tools().unwrap_err());
        let pages = cycle.len() + 1;
        assert_eq!(
            m,
            format!("tools/list: server repeated cursor \"A\" after page {pages} (a cursor cycle); stopped")
        );
        assert_eq!(fake.requests().len(), pages);
    }
}

/// MCP 2025-11-25 (SEP-1699): a stream that sends a priming event with an
/// `id` (and a `retry`) and closes before the response is resumed with
/// `GET` and `Last-Event-ID`, after the `retry` wait.
#[test]
fn a_closed_sse_stream_is_resumed_with_last_event_id() {
    let fake = Fake::start(|req: &Req| match req.verb.as_str() {
        "POST" => Reply::sse(&["id: ev-1\nretry: 150\ndata: \n\n"]),
        "GET" => {
            let id = json!(1);
            Reply::sse(&[
                "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n",
                &format!(
                    "id: ev-3\ndata: {}\n\n",
                    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}})
                ),
            ])
        }
        _ => Reply::empty(405),
    });
    let started = std::time::Instant::now();
    let tools = fake.client(Era::Modern).list_tools().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(tools[0].name, "t");
    let reqs = fake.requests();
    assert_eq!(fake.labels(), ["POST tools/list", "GET"]);
    assert_eq!(reqs[1].header("Last-Event-ID"), Some("ev-1"));
    assert_eq!(reqs[1].header("Accept"), Some("text/event-stream"));
    assert_eq!(reqs[1].header("MCP-Protocol-Version"), Some("2026-07-28"));
}

/// A stream cut inside the response event (after its `id` line) resumes
/// from the last whole event, so the server sends the response again;
/// resuming after the cut event's id would skip it and never get it.
#[test]
fn a_stream_cut_inside_the_response_resumes_from_the_last_whole_event() {
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}});
    let full = format!("id: ev-2\ndata: {response}\n\n");
    let cut = full[..full.len() / 2].to_string();
    let fake = Fake::start(move |req: &Req| match req.verb.as_str() {
        "POST" => Reply::sse(&["id: ev-1\nretry: 1\ndata: \n\n", &cut]),
        // Events after the one named: after ev-1 that is the response.
        "GET" if req.header("Last-Event-ID") == Some("ev-1") => Reply::sse(&[&full]),
        _ => Reply::sse(&["id: ev-2\ndata: \n\n"]),
    });
    let tools = fake.client(Era::Modern).list_tools().unwrap();
    assert_eq!(tools[0].name, "t");
    let reqs = fake.requests();
    assert_eq!(fake.labels(), ["POST tools/list", "GET"]);
    assert_eq!(reqs[1].header("Last-Event-ID"), Some("ev-1"));
}

/// Resumption is bounded: a server that closes every stream after a
/// priming event gets MAX_SSE_RESUMES GETs, then a clear error; a GET the
/// server refuses ends the call with that status.
#[test]
fn sse_resumption_is_bounded() {
    let fake = Fake::start(|req: &Req| match req.verb.as_str() {
        "POST" => Reply::sse(&["id: p\nretry: 1\ndata: \n\n"]),
        _ => Reply::sse(&["id: q\ndata: \n\n"]),
    });
    let m = protocol_msg(fake.client(Era::Modern).list_tools().unwrap_err());
    assert_eq!(
        m,
        format!(
            "SSE stream ended before the response to request 1 after {} resumptions",
            xmd::client::MAX_SSE_RESUMES
        )
    );
    let gets: Vec<Req> = fake
        .requests()
        .into_iter()
        .filter(|r| r.verb == "GET")
        .collect();
    assert_eq!(gets.len(), 5);
    assert_eq!(gets[0].header("Last-Event-ID"), Some("p"));
    assert_eq!(gets[4].header("Last-Event-ID"), Some("q"));

    let refusing = Fake::start(|req: &Req| match req.verb.as_str() {
        "POST" => Reply::sse(&["id: p\nretry: 1\ndata: \n\n"]),
        _ => Reply::raw(405, "text/plain", "no GET here"),
    });
    match refusing.client(Era::Modern).list_tools().unwrap_err() {
        Error::HttpStatus { status, body } => {
            assert_eq!((status, body.as_str()), (405, "no GET here"))
        }
        other => panic!("{other:?}"),
    }
}

/// The probe answer → whether auto falls back to `initialize`.
#[test]
fn auto_probe_fallback_rules() {
    type Probe = fn(&Req) -> Reply;
    let cases: Vec<(&str, Probe, bool)> = vec![
        (
            "404 -32601",
            |r| Reply::error(404, r, -32601, "Method not found"),
            true,
        ),
        (
            "400 -32000 id null",
            |_| {
                Reply::json(
                    400,
                    json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}),
                )
            },
            true,
        ),
        (
            "200 -32601",
            |r| Reply::error(200, r, -32601, "Method not found"),
            true,
        ),
        ("405 no body", |_| Reply::empty(405), true),
        (
            "200 no 2026",
            |r| {
                Reply::result(
                    r,
                    json!({"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{}}),
                )
            },
            true,
        ),
        (
            "200 garbage",
            |_| Reply::raw(200, "text/html", "<html>"),
            true,
        ),
        ("500", |_| Reply::raw(500, "text/plain", "boom"), false),
        (
            "503 -32603",
            |r| Reply::error(503, r, -32603, "down"),
            false,
        ),
        ("401", |_| Reply::raw(401, "text/plain", "no"), false),
        (
            "403 json",
            |r| Reply::error(403, r, -32600, "Forbidden"),
            false,
        ),
    ];
    for (name, probe, falls_back) in cases {
        let fake = Fake::start(move |req: &Req| match req.method() {
            "server/discover" => probe(req),
            "initialize" => init_result(req, "2025-11-25"),
            "ping" => Reply::result(req, json!({})),
            _ => Reply::empty(202),
        });
        let c = fake.client(Era::Auto);
        let r = c.ping();
        let labels = fake.labels();
        if falls_back {
            r.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                labels,
                [
                    "POST server/discover",
                    "POST initialize",
                    "POST notifications/initialized",
                    "POST ping"
                ],
                "{name}"
            );
        } else {
            assert!(r.is_err(), "{name}");
            assert_eq!(labels, ["POST server/discover"], "{name}");
        }
    }
}

#[test]
fn auto_stays_modern_when_discover_succeeds() {
    let fake = Fake::start(|req: &Req| {
        Reply::result(
            req,
            json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},
                   "ttlMs":0,"cacheScope":"public",
                   "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"2"}}}),
        )
    });
    let c = fake.client(Era::Auto);
    c.ping().unwrap();
    c.ping().unwrap();
    assert_eq!(c.connection().unwrap().server_info.unwrap().name, "m");
    // One probe, then ping as a discover round trip each time.
    assert_eq!(fake.labels(), ["POST server/discover"; 3]);
}

#[test]
fn legacy_server_choosing_an_unknown_version_is_refused_and_its_session_ended() {
    let fake = Fake::start(|req: &Req| match req.verb.as_str() {
        "DELETE" => Reply::empty(405),
        _ => init_result(req, "2024-11-05").header("Mcp-Session-Id", "old"),
    });
    let m = protocol_msg(fake.client(Era::Legacy).list_tools().unwrap_err());
    assert_eq!(
        m,
        "server chose protocol version 2024-11-05, which this client does not speak here (offered 2025-11-25; accepts 2025-11-25, 2025-06-18, 2025-03-26)"
    );
    assert_eq!(fake.labels(), ["POST initialize", "DELETE"]);
}

#[test]
fn malformed_replies() {
    let fake = Fake::start(|req: &Req| match req.method() {
        "a" => Reply::raw(200, "text/plain", "hello"),
        "b" => Reply::json(200, json!({"jsonrpc":"2.0","id":12345,"result":{}})),
        "c" => Reply::raw(200, "application/json", "{not json"),
        "d" => Reply::raw(502, "text/html", "<h1>Bad\n gateway</h1>"),
        "e" => Reply::json(200, json!({"jsonrpc":"2.0","id":req.id(),"result":[1]})),
        "f" => Reply::json(404, json!({"jsonrpc":"2.0","id":req.id(),"result":{}})),
        _ => Reply::empty(500),
    });
    let c = fake.client(Era::Modern);
    assert_eq!(
        protocol_msg(c.rpc("a", Value::Null).unwrap_err()),
        "unexpected reply Content-Type \"text/plain\" (expected application/json or text/event-stream)"
    );
    assert_eq!(
        protocol_msg(c.rpc("b", Value::Null).unwrap_err()),
        "JSON reply holds no response with id 2"
    );
    assert!(
        protocol_msg(c.rpc("c", Value::Null).unwrap_err()).starts_with("reply is not valid JSON")
    );
    let e = c.rpc("d", Value::Null).unwrap_err();
    assert_eq!(
        e,
        Error::HttpStatus {
            status: 502,
            body: "<h1>Bad\n gateway</h1>".into()
        }
    );
    assert_eq!(e.to_string(), "HTTP 502: <h1>Bad gateway</h1>");
    assert_eq!(
        protocol_msg(c.rpc("e", Value::Null).unwrap_err()),
        "result is not an object: [1]"
    );
    match c.rpc("f", Value::Null).unwrap_err() {
        Error::HttpStatus { status: 404, .. } => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        c.rpc("g", Value::Null).unwrap_err(),
        Error::HttpStatus {
            status: 500,
            body: String::new()
        }
    );
}
