//! A tools-capable MCP server on rmcp (the official Rust SDK), Streamable
//! HTTP on 127.0.0.1:PORT/mcp, both eras (2026-07-28 stateless, and the
//! handshake revisions with sessions), Origin validation on for loopback
//! origins. It declares `tools` and lists none: the probe's tool checks use
//! tools that do not exist. Usage: rmcp-probe-server PORT

use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::ServerHandler;

#[derive(Clone, Default)]
struct Probe;

impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("usage: rmcp-probe-server PORT");
    let service: StreamableHttpService<Probe, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Probe),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*"]),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    println!("listening on http://127.0.0.1:{port}/mcp");
    axum::serve(listener, router).await.expect("serve");
}
