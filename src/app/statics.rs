//! Documents built once, on first request: the server card, the discovery
//! manifest served on `GET /mcp`, and the registry `server.json`.

use serde_json::{json, Value};

/// Every MCP revision this server speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// Server name in `serverInfo`, the card and the registry manifest.
pub const SERVER_NAME: &str = "xmd";

/// One-sentence description.
pub const DESCRIPTION: &str =
    "Read public X (Twitter) posts, threads, profiles, search results, followers and following as Markdown, over MCP, with no key.";

/// The server's reverse-DNS name in the server card and the registry
/// manifest (one `/` between namespace and name).
pub const REGISTRY_NAME: &str = "io.github.xmd/xmd";

/// The card's and the manifest's description: at most 100 characters
/// (the server card schema's `maxLength`).
pub const SHORT_DESCRIPTION: &str =
    "Read public X posts, threads, profiles, search and follows as Markdown over MCP.";

/// Where the server card is, under the MCP endpoint
/// (`<streamable-http-url>/server-card`, SEP-2127's reserved location).
pub const SERVER_CARD_PATH: &str = "/mcp/server-card";

/// The path the card had under the old draft, still served (an alias).
pub const OLD_SERVER_CARD_PATH: &str = "/.well-known/mcp/server-card.json";

/// The AI Catalog for domain-level discovery.
pub const AI_CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// Media type of the AI Catalog.
pub const AI_CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";

/// The MCP server card of SEP-2127's current draft
/// (modelcontextprotocol/experimental-ext-server-card, schema
/// `v1/server-card.schema.json`): identity, the one remote and the
/// revisions it speaks; no primitives (tools, resources and prompts are
/// listed at run time). Served at [`SERVER_CARD_PATH`] and
/// [`OLD_SERVER_CARD_PATH`].
pub fn server_card(public_url: &str) -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": REGISTRY_NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "title": "xmd: X as Markdown",
        "description": SHORT_DESCRIPTION,
        "websiteUrl": format!("{public_url}/"),
        "remotes": [{
            "type": "streamable-http",
            "url": format!("{public_url}/mcp"),
            "supportedProtocolVersions": SUPPORTED_VERSIONS,
        }],
    })
}

/// The AI Catalog (`/.well-known/ai-catalog.json`): one entry naming the
/// server card by its URL, with the domain-anchored identifier
/// `urn:air:<host of the public URL>:mcp:xmd`.
pub fn ai_catalog(public_url: &str) -> Value {
    let authority = public_url
        .split_once("://")
        .map_or(public_url, |(_, r)| r)
        .split('/')
        .next()
        .unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // The host without its port; an IPv6 literal keeps its brackets, its
    // colons percent-encoded (a `:` separates the URN's parts).
    let host = match authority.strip_prefix('[') {
        Some(v6) => format!(
            "[{}]",
            v6.split(']').next().unwrap_or("").replace(':', "%3A")
        ),
        None => authority.split(':').next().unwrap_or("").to_string(),
    };
    json!({
        "specVersion": "1.0",
        "entries": [{
            "identifier": format!("urn:air:{}:mcp:{SERVER_NAME}", host.to_ascii_lowercase()),
            "type": crate::app::SERVER_CARD_MEDIA_TYPE,
            "url": format!("{public_url}{SERVER_CARD_PATH}"),
        }],
    })
}

/// The manifest for a plain `GET /mcp`: card, revisions, a worked example.
pub fn manifest(public_url: &str, card: &Value) -> Value {
    let endpoint = format!("{public_url}/mcp");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    json!({
        "name": SERVER_NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "endpoint": endpoint,
        "transport": "streamable-http",
        "supportedVersions": SUPPORTED_VERSIONS,
        "eras": {
            "2026-07-28": "stateless: send MCP-Protocol-Version, Mcp-Method (and Mcp-Name for tools/call and resources/read) headers and params._meta on every request; start with server/discover",
            "2025-11-25, 2025-06-18, 2025-03-26": "handshake: initialize, then notifications/initialized; no session id is issued"
        },
        "framing": "POST JSON-RPC 2.0 with Content-Type: application/json. Accept naming text/event-stream gets one SSE frame (event: message); anything else gets application/json.",
        "serverCard": card,
        "documents": {
            "llms.txt": format!("{public_url}/llms.txt"),
            "llms-full.txt": format!("{public_url}/llms-full.txt"),
            "openapi.json": format!("{public_url}/openapi.json"),
            "index.md": format!("{public_url}/index.md"),
            "serverCard": format!("{public_url}{SERVER_CARD_PATH}"),
            "aiCatalog": format!("{public_url}{AI_CATALOG_PATH}"),
            "server.json": format!("{public_url}/server.json"),
        },
        "example": {
            "request": request,
            "curl": format!(
                "curl -sS -X POST {endpoint} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{request}'"
            ),
        },
    })
}

/// The MCP registry manifest (`/server.json`).
pub fn server_json(public_url: &str) -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": REGISTRY_NAME,
        "title": "xmd",
        "description": SHORT_DESCRIPTION,
        "version": env!("CARGO_PKG_VERSION"),
        "remotes": [{"type": "streamable-http", "url": format!("{public_url}/mcp")}],
    })
}
