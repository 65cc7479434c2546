//! Issue #30 item 5: the server card of the current draft of SEP-2127
//! (modelcontextprotocol/experimental-ext-server-card, "Use AI Catalog for
//! Server Card discovery", 2026-07-20): the card at
//! `<streamable-http-url>/server-card`, `application/mcp-server-card+json`,
//! valid against the draft's published schema, with a reverse-DNS `name`,
//! `remotes[]` and no tool list; domain discovery through
//! `/.well-known/ai-catalog.json`; the old path an alias.
//!
//! `tests/schemas/server-card.schema.json` is the draft's `schema.json` at
//! commit 8924e08682b4a936e6464b57845ec2ff17dc8776 (2026-07-24; the file
//! last changed in 92999cb, 2026-06-26), the source of
//! `https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json`.
//! The card is validated against its `#/$defs/ServerCard`, as the draft's
//! own `scripts/validate-examples.ts` does.

mod util;

use serde_json::{json, Value};
use util::*;

const CARD_TYPE: &str = "application/mcp-server-card+json";
const SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// The draft's schema, rooted at its `ServerCard` definition.
fn card_validator() -> jsonschema::Validator {
    let text = include_str!("schemas/server-card.schema.json");
    let mut schema: Value = serde_json::from_str(text).unwrap();
    schema["$ref"] = json!("#/$defs/ServerCard");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the draft's schema compiles")
}

fn violations(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn get(x: &Xmd, path: &str, accept: Option<&str>) -> Reply {
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    roundtrip(
        x,
        format!("GET {path} HTTP/1.1\r\nHost: {}\r\n{accept}\r\n", x.host()).as_bytes(),
    )
}

#[test]
fn the_validator_refuses_the_drafts_invalid_examples_and_the_old_card() {
    let v = card_validator();
    let invalid = [
        // examples/ServerCard/invalid/{missing-name,bad-name-pattern,wrong-schema-name}.json
        json!({"$schema": SCHEMA_URL, "version": "1.0.0", "description": "No name."}),
        json!({"$schema": SCHEMA_URL, "name": "no-slash-in-name", "version": "1.0.0", "description": "d"}),
        json!({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server.schema.json",
               "name": "example-org/wrong-schema-name", "version": "1.0.0", "description": "d"}),
        // The card xmd served before: the old draft's shape (no reverse-DNS
        // `name`, an old `$schema`, a description over 100 characters).
        json!({
            "$schema": "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
            "version": "1.0",
            "serverInfo": {"name": "xmd", "version": "0.1.0"},
            "description": "Read public X (Twitter) posts, threads, profiles, search results, followers and following as Markdown, over MCP, with no key.",
            "transport": {"type": "streamable-http", "endpoint": "http://127.0.0.1:8080/mcp"},
        }),
    ];
    for doc in invalid {
        assert!(!violations(&v, &doc).is_empty(), "accepted: {doc}");
    }
    let minimal = json!({"$schema": SCHEMA_URL, "name": "example-org/minimal", "version": "1.0.0",
                         "description": "Smallest valid Server Card."});
    assert_eq!(violations(&v, &minimal), Vec::<String>::new());
}

#[test]
fn the_card_follows_the_draft_and_the_catalog_points_to_it() {
    let x = Xmd::start(&[]);
    let base = format!("http://{}", x.addr);
    let r = get(&x, "/mcp/server-card", Some(CARD_TYPE));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type").as_deref(), Some(CARD_TYPE));
    let card = r.json();
    assert_eq!(
        violations(&card_validator(), &card),
        Vec::<String>::new(),
        "{card:#}"
    );
    assert_eq!(card["$schema"], SCHEMA_URL);
    assert_eq!(card["name"], "io.github.xmd/xmd");
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    let versions = json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
    assert_eq!(
        card["remotes"],
        json!([{"type": "streamable-http", "url": format!("{base}/mcp"), "supportedProtocolVersions": versions}])
    );
    // Identity, transport and versions only: no primitives.
    for key in ["tools", "resources", "prompts", "capabilities"] {
        assert_eq!(card.get(key), None, "{key}");
    }
    // Consistent with what a connected client sees (server/discover).
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
    let h = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: server/discover",
    ];
    let d = roundtrip(&x, &post(&x.host(), &h, &discover)).json();
    assert_eq!(d["result"]["supportedVersions"], versions, "{d}");
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        card["version"]
    );

    // The old path is an alias: the same bytes and type; HEAD too.
    let old = get(&x, "/.well-known/mcp/server-card.json", None);
    assert_eq!(old.status, 200);
    assert_eq!(old.header("content-type").as_deref(), Some(CARD_TYPE));
    assert_eq!(old.body, r.body);

    // Domain discovery: the AI Catalog names the card by its URL.
    let c = get(&x, "/.well-known/ai-catalog.json", None);
    assert_eq!(c.status, 200);
    assert_eq!(
        c.header("content-type").as_deref(),
        Some("application/ai-catalog+json")
    );
    let catalog = c.json();
    assert_eq!(
        catalog,
        json!({"specVersion": "1.0", "entries": [{
            "identifier": "urn:air:127.0.0.1:mcp:xmd",
            "type": CARD_TYPE,
            "url": format!("{base}/mcp/server-card"),
        }]})
    );
    let url = catalog["entries"][0]["url"].as_str().unwrap();
    let path = url.strip_prefix(&base).unwrap();
    assert_eq!(get(&x, path, Some(CARD_TYPE)).body, r.body);

    // Caching as the draft asks: public for an hour, an ETag, and 304 for
    // a matching If-None-Match (the alias shares the card's tag).
    for (path, first) in [
        ("/mcp/server-card", &r),
        ("/.well-known/mcp/server-card.json", &old),
        ("/.well-known/ai-catalog.json", &c),
    ] {
        assert_eq!(
            first.header("cache-control").as_deref(),
            Some("public, max-age=3600"),
            "{path}"
        );
        let tag = first.header("etag").expect("an ETag");
        let again = roundtrip(
            &x,
            format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\nIf-None-Match: {tag}\r\n\r\n",
                x.host()
            )
            .as_bytes(),
        );
        assert_eq!(again.status, 304, "{path}");
        assert_eq!(again.header("etag").as_deref(), Some(tag.as_str()));
        assert!(again.body.is_empty());
        let other = roundtrip(
            &x,
            format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\nIf-None-Match: \"other\"\r\n\r\n",
                x.host()
            )
            .as_bytes(),
        );
        assert_eq!(other.status, 200, "{path}");
    }
    assert_eq!(r.header("etag"), old.header("etag"));
}

#[test]
fn the_card_and_catalog_name_the_public_url() {
    let x = Xmd::start(&["--public-url", "https://xmd.example.com:8443/tools"]);
    let host = "xmd.example.com:8443";
    let r = roundtrip(
        &x,
        format!("GET /mcp/server-card HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let card = r.json();
    assert_eq!(violations(&card_validator(), &card), Vec::<String>::new());
    assert_eq!(
        card["remotes"][0]["url"],
        "https://xmd.example.com:8443/tools/mcp"
    );
    assert_eq!(card["websiteUrl"], "https://xmd.example.com:8443/tools/");
    let c = roundtrip(
        &x,
        format!("GET /.well-known/ai-catalog.json HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
    );
    let catalog = c.json();
    assert_eq!(
        catalog["entries"][0]["identifier"],
        "urn:air:xmd.example.com:mcp:xmd"
    );
    assert_eq!(
        catalog["entries"][0]["url"],
        "https://xmd.example.com:8443/tools/mcp/server-card"
    );
}

/// SEP-2127 "CORS Requirements": the card (both paths) and the AI Catalog
/// answer any origin, a preflight included, with exactly one of each of
/// the draft's four headers; the MCP endpoint still refuses a foreign
/// Origin (DNS rebinding), and a foreign Host is still refused everywhere.
#[test]
fn discovery_documents_are_readable_from_any_origin() {
    let x = Xmd::start(&[]);
    let want = [
        ("access-control-allow-origin", "*"),
        ("access-control-allow-methods", "GET"),
        (
            "access-control-allow-headers",
            "Content-Type, If-None-Match",
        ),
        ("access-control-expose-headers", "ETag"),
    ];
    for path in [
        "/mcp/server-card",
        "/.well-known/mcp/server-card.json",
        "/.well-known/ai-catalog.json",
    ] {
        for (method, status) in [("GET", 200), ("HEAD", 200), ("OPTIONS", 204)] {
            let r = roundtrip(
                &x,
                format!(
                    "{method} {path} HTTP/1.1\r\nHost: {}\r\nOrigin: https://evil.example\r\n\
                     Access-Control-Request-Method: GET\r\n\r\n",
                    x.host()
                )
                .as_bytes(),
            );
            assert_eq!(r.status, status, "{method} {path}");
            for (name, value) in want {
                let all: Vec<&str> = r
                    .head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .filter(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim())
                    .collect();
                assert_eq!(all, [value], "{method} {path} {name}");
            }
        }
        let foreign_host = roundtrip(
            &x,
            format!("GET {path} HTTP/1.1\r\nHost: evil.example\r\n\r\n").as_bytes(),
        );
        assert_eq!(foreign_host.status, 403, "{path}");
    }
    let mcp = roundtrip(
        &x,
        format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nOrigin: https://evil.example\r\n\r\n",
            x.host()
        )
        .as_bytes(),
    );
    assert_eq!(mcp.status, 403);
}
