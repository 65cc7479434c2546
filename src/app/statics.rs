//! Documents built once, on first request: the server card, the discovery
//! manifest served on `GET /mcp`, and the registry `server.json`.

use serde_json::{json, Value};

use crate::x::tools::Tools;

/// Every MCP revision this server speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// Server name in `serverInfo`, the card and the registry manifest.
pub const SERVER_NAME: &str = "xmd";

/// One-sentence description.
pub const DESCRIPTION: &str =
    "Read public X (Twitter) posts, threads, profiles, search results, followers and following as Markdown, over MCP, with no key.";

/// The tool summaries `{name, title, description}` from the definitions.
fn tool_summaries() -> Vec<Value> {
    match Tools::definitions() {
        Value::Array(tools) => tools
            .iter()
            .map(|t| json!({"name": t["name"], "title": t.get("title"), "description": t.get("description")}))
            .collect(),
        _ => Vec::new(),
    }
}

/// The MCP server card (`/.well-known/mcp/server-card.json`).
pub fn server_card(public_url: &str) -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
        "version": "1.0",
        "protocolVersion": SUPPORTED_VERSIONS[0],
        "supportedProtocolVersions": SUPPORTED_VERSIONS,
        "serverInfo": {"name": SERVER_NAME, "title": "xmd: X as Markdown", "version": env!("CARGO_PKG_VERSION")},
        "description": DESCRIPTION,
        "documentationUrl": format!("{public_url}/llms.txt"),
        "transport": {"type": "streamable-http", "endpoint": format!("{public_url}/mcp")},
        "capabilities": crate::mcp::statics::capabilities(crate::mcp::ProtocolVersion::MODERN),
        "authentication": {"required": false, "schemes": []},
        "tools": tool_summaries(),
        "resources": crate::docs::DOCS.iter().map(|d| json!({
            "uri": format!("{public_url}{}", d.path), "name": d.name, "mimeType": d.mime_type.split(';').next().unwrap_or(d.mime_type)
        })).collect::<Vec<_>>(),
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
            "serverCard": format!("{public_url}/.well-known/mcp/server-card.json"),
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
        "name": "io.github.xmd/xmd",
        "title": "xmd",
        "description": "Read public X posts, threads, profiles, search and follows as Markdown over MCP.",
        "version": env!("CARGO_PKG_VERSION"),
        "remotes": [{"type": "streamable-http", "url": format!("{public_url}/mcp")}],
    })
}
