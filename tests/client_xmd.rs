//! `xmd::client` against the real `xmd` binary (spawned on 127.0.0.1:0,
//! upstream pointed at the loopback fake FxTwitter), in every era, for every
//! method and its error paths.

mod common;
mod util;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::Xmd;
use xmd::client::{Client, Content, Era, Error, TransportKind};

const ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";
const MARKDOWN: &str = "## Post · 1/1 — Demo Author (@demo_author)\n\nSmall release day: cold starts are 30% faster and there is one fewer \
     config file to maintain. #buildtools\n\nDate: 2026-08-11T16:05:42Z\nSource: <https://x.com/demo_author/status/2087208847298015232>";
const TOOLS: [&str; 8] = [
    "x_md_get_post",
    "x_md_get_profile",
    "x_md_search_posts",
    "x_md_get_followers",
    "x_md_get_following",
    "x_md_get_quotes",
    "x_md_get_reposts",
    "x_md_get_trends",
];

struct Setup {
    _fake: FakeUpstream,
    xmd: Xmd,
}

impl Setup {
    fn new() -> Setup {
        let fake = FakeUpstream::start();
        fake.on(
            &format!("/2/status/{ID}"),
            Answer::fixture(200, "status-plain.json"),
        );
        fake.on(
            &format!("/2/thread/{ID}"),
            Answer::fixture(200, "status-plain.json"),
        );
        let upstream = format!("{}/", fake.base_url());
        let xmd = Xmd::start(&["--upstream", &upstream]);
        Setup { _fake: fake, xmd }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.xmd.addr)
    }

    fn base(&self) -> String {
        format!("http://{}", self.xmd.addr)
    }

    fn client(&self, era: Era) -> Client {
        Client::new(&self.url())
            .era(era)
            .timeout(Duration::from_secs(10))
    }
}

fn rpc_err(e: Error) -> (i64, String, Option<Value>) {
    match e {
        Error::JsonRpc {
            code,
            message,
            data,
        } => (code, message, data),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Every method in one era; `modern` says what the server should have chosen.
fn every_method(s: &Setup, era: Era, modern: bool) {
    let c = s.client(era);
    let conn = c.initialize().unwrap();
    assert_eq!(conn.era, if modern { Era::Modern } else { Era::Legacy });
    assert_eq!(
        conn.protocol_version,
        if modern { "2026-07-28" } else { "2025-11-25" }
    );
    let info = conn.server_info.as_ref().expect("server info");
    assert_eq!(info.name, "xmd");
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    let mut capabilities = json!({"resources": {}, "tools": {}, "prompts": {}});
    if !modern {
        capabilities["logging"] = json!({});
    }
    assert_eq!(conn.capabilities, capabilities);
    assert!(conn
        .instructions
        .as_deref()
        .unwrap()
        .starts_with("Read-only access to public X"));
    assert_eq!(conn.session_id, None, "xmd issues no sessions");
    // initialize is idempotent.
    assert_eq!(c.initialize().unwrap(), conn);

    c.ping().unwrap();

    let d = c.discover().unwrap();
    assert_eq!(
        d.supported_versions,
        ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    );
    assert_eq!(d.server_info().unwrap().name, "xmd");
    assert_eq!(d.extra["resultType"], "complete");

    let tools = c.list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, TOOLS);
    assert_eq!(tools[0].input_schema["type"], "object");
    assert!(tools[0].output_schema.is_some());
    assert_eq!(tools[0].annotations.as_ref().unwrap()["readOnlyHint"], true);

    let r = c
        .call_tool("x_md_get_post", json!({"url": POST_URL, "thread": "off"}))
        .unwrap();
    assert!(!r.is_error);
    assert_eq!(r.text(), MARKDOWN);
    assert!(matches!(&r.content[..], [Content::Text(_)]));
    assert_eq!(r.structured_content.as_ref().unwrap().get("markdown"), None);
    assert_eq!(
        r.extra.get("resultType").map(|v| v == "complete"),
        modern.then_some(true)
    );

    // The thread form too (uses /2/thread/ID).
    let r = c
        .call_tool("x_md_get_post", json!({"url": POST_URL}))
        .unwrap();
    assert!(!r.is_error, "{}", r.text());
    assert!(r.text().contains("Small release day"));

    let (code, msg, data) = rpc_err(c.call_tool("nope", json!({})).unwrap_err());
    assert_eq!((code, msg.as_str()), (-32602, "Unknown tool: nope"));
    assert_eq!(data.unwrap()["availableTools"], json!(TOOLS));

    let (code, msg, _) = rpc_err(c.call_tool("x_md_get_post", json!({})).unwrap_err());
    assert_eq!(code, -32602);
    assert!(
        msg.starts_with("Invalid arguments for tool x_md_get_post: supply `url`"),
        "{msg}"
    );
    let (code, _, _) = rpc_err(
        c.call_tool("x_md_get_post", json!({"url": POST_URL, "bogus": 1}))
            .unwrap_err(),
    );
    assert_eq!(code, -32602);

    let resources = c.list_resources().unwrap();
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    let base = s.base();
    assert_eq!(
        uris,
        [
            format!("{base}/llms.txt"),
            format!("{base}/llms-full.txt"),
            format!("{base}/openapi.json"),
            format!("{base}/index.md"),
            format!("{base}/mcp/server-card"),
        ]
    );
    assert_eq!(resources[0].mime_type.as_deref(), Some("text/plain"));
    assert_eq!(resources[0].name, "llms.txt");

    let read = c.read_resource(&uris[0]).unwrap();
    assert_eq!(read.contents.len(), 1);
    assert_eq!(read.contents[0].uri, uris[0]);
    assert_eq!(read.contents[0].mime_type.as_deref(), Some("text/plain"));
    // The resource text is exactly the document the server serves at its URI.
    let served = ureq::get(&uris[0])
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(!served.is_empty());
    assert_eq!(read.contents[0].text.as_deref(), Some(served.as_str()));

    let missing = format!("{base}/nope.txt");
    let (code, msg, data) = rpc_err(c.read_resource(&missing).unwrap_err());
    assert_eq!(code, if modern { -32602 } else { -32002 });
    assert_eq!(msg, "Resource not found");
    assert_eq!(data, Some(json!({"uri": missing})));

    assert!(c.list_resource_templates().unwrap().is_empty());

    let raw = c.rpc("tools/list", Value::Null).unwrap();
    assert_eq!(raw["tools"].as_array().unwrap().len(), TOOLS.len());
    assert_eq!(raw.get("resultType").is_some(), modern);
    let (code, msg, _) = rpc_err(c.rpc("no/such/method", json!({})).unwrap_err());
    assert_eq!((code, msg.as_str()), (-32601, "Method not found"));

    c.close().unwrap();
}

#[test]
fn every_method_modern() {
    every_method(&Setup::new(), Era::Modern, true);
}

#[test]
fn every_method_legacy() {
    every_method(&Setup::new(), Era::Legacy, false);
}

#[test]
fn every_method_auto_settles_on_modern() {
    every_method(&Setup::new(), Era::Auto, true);
}

#[test]
fn non_ascii_tool_name_travels_base64_encoded() {
    // Had Mcp-Name not been encoded (or encoded wrongly), xmd would answer
    // -32020 HeaderMismatch (or refuse the header) instead of "Unknown tool".
    let s = Setup::new();
    let c = s.client(Era::Modern);
    for name in ["météo", " padded ", "=?base64?literal?=", "tab\there"] {
        let (code, msg, _) = rpc_err(c.call_tool(name, json!({})).unwrap_err());
        assert_eq!(
            (code, msg),
            (-32602, format!("Unknown tool: {name}")),
            "{name:?}"
        );
    }
    let (code, _, data) = rpc_err(c.read_resource("file:///données/é.txt").unwrap_err());
    assert_eq!(code, -32602);
    assert_eq!(data, Some(json!({"uri": "file:///données/é.txt"})));
}

#[test]
fn pinned_versions() {
    let s = Setup::new();
    // An unsupported pinned revision in the modern era: -32022, no fallback.
    for era in [Era::Modern, Era::Auto] {
        let c = s.client(era).pin_version("2099-01-01");
        let (code, msg, data) = rpc_err(c.list_tools().unwrap_err());
        assert_eq!(
            (code, msg.as_str()),
            (-32022, "Unsupported protocol version")
        );
        let data = data.unwrap();
        assert_eq!(data["requested"], "2099-01-01");
        assert_eq!(
            data["supported"],
            json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
        );
    }
    // In the handshake the server counter-offers; the pin refuses that.
    let c = s.client(Era::Legacy).pin_version("2099-01-01");
    match c.ping().unwrap_err() {
        Error::Protocol(m) => assert!(
            m.starts_with("server chose protocol version 2025-11-25"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    // A supported handshake revision, pinned: negotiated exactly (auto too).
    for era in [Era::Legacy, Era::Auto] {
        let c = s.client(era).pin_version("2025-06-18");
        let conn = c.initialize().unwrap();
        assert_eq!(
            (conn.era, conn.protocol_version.as_str()),
            (Era::Legacy, "2025-06-18")
        );
        assert_eq!(c.list_tools().unwrap().len(), TOOLS.len());
    }
    let c = s.client(Era::Legacy).pin_version("2025-03-26");
    let tools = c.list_tools().unwrap();
    // 2025-03-26 has no outputSchema.
    assert!(tools.iter().all(|t| t.output_schema.is_none()));
}

#[test]
fn extra_headers_reach_the_server_and_can_replace_ours() {
    let s = Setup::new();
    // Replacing Mcp-Method with a wrong value must make xmd refuse with -32020.
    let c = s
        .client(Era::Modern)
        .header("Mcp-Method", "prompts/list")
        .header("Authorization", "Bearer t");
    let (code, _, _) = rpc_err(c.list_tools().unwrap_err());
    assert_eq!(code, -32020);
    // An Origin xmd does not allow: 403 whose body is a JSON-RPC error with
    // a null id, surfaced as that error.
    let c = s
        .client(Era::Legacy)
        .header("Origin", "http://evil.example");
    let (code, msg, _) = rpc_err(c.ping().unwrap_err());
    assert_eq!(
        (code, msg.as_str()),
        (-32600, "Forbidden: Origin not allowed")
    );
}

#[test]
fn connection_refused_is_a_connect_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = Client::new(&format!("http://127.0.0.1:{port}/mcp"));
    match c.list_tools().unwrap_err() {
        Error::Transport { kind, .. } => assert_eq!(kind, TransportKind::Connect),
        other => panic!("{other:?}"),
    }
}

#[test]
fn silent_server_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let hold = std::thread::spawn(move || {
        let conn = l.accept();
        std::thread::sleep(Duration::from_secs(2));
        drop(conn);
    });
    let c = Client::new(&format!("http://{addr}/mcp")).timeout(Duration::from_millis(300));
    let t = Instant::now();
    match c.ping().unwrap_err() {
        Error::Transport { kind, .. } => assert_eq!(kind, TransportKind::Timeout),
        other => panic!("{other:?}"),
    }
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    hold.join().unwrap();
}
