//! The state-free JSON-RPC 2.0 / MCP dispatcher for both protocol eras.
//!
//! STUB: the contract the HTTP layer codes against. `Mcp::handle` takes the
//! request headers (looked up case-insensitively by the caller's closure)
//! and the raw POST body, and returns either a finished [`Reply`] or a
//! [`PendingCall`] that must run on a worker thread (a `tools/call`).
//!
//! Everything here is pure apart from `PendingCall::run`.

use std::sync::Arc;

use crate::x::tools::Tools;

/// Identity and self links of this deployment.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Base URL for self links, e.g. `http://127.0.0.1:8080` (no trailing slash).
    pub public_url: String,
}

/// One static resource (an embedded agent document).
#[derive(Debug, Clone)]
pub struct Resource {
    /// Absolute URI, under the public URL.
    pub uri: String,
    /// Short name.
    pub name: String,
    /// Human title.
    pub title: String,
    /// What it holds.
    pub description: String,
    /// MIME type of `text`.
    pub mime_type: String,
    /// The document body.
    pub text: String,
}

/// A finished answer to one POST.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status to send.
    pub status: u16,
    /// The JSON-RPC message bytes; `None` means `202 Accepted` with no body.
    pub body: Option<Vec<u8>>,
}

/// What `handle` decided.
pub enum Outcome {
    /// The answer is ready.
    Reply(Reply),
    /// A validated `tools/call` that must run off the event loop.
    Call(PendingCall),
}

/// A validated `tools/call`, carrying everything needed to build its reply.
pub struct PendingCall {
    tools: Arc<Tools>,
    call: crate::x::tools::ToolCall,
}

impl PendingCall {
    /// Runs the tool (blocking) and builds the JSON-RPC reply.
    pub fn run(self) -> Reply {
        let _ = self.tools.run(&self.call);
        Reply { status: 200, body: Some(b"{}".to_vec()) }
    }
}

/// The dispatcher, with its static results serialized once at start-up.
pub struct Mcp {
    #[allow(dead_code)]
    info: ServerInfo,
    #[allow(dead_code)]
    resources: Vec<Resource>,
    tools: Arc<Tools>,
}

impl Mcp {
    /// Builds the dispatcher and pre-serializes its static results.
    pub fn new(info: ServerInfo, resources: Vec<Resource>, tools: Arc<Tools>) -> Mcp {
        Mcp { info, resources, tools }
    }

    /// Handles one POSTed JSON-RPC message.
    pub fn handle<'h>(&self, _header: &dyn Fn(&str) -> Option<&'h [u8]>, _body: &[u8]) -> Outcome {
        let _ = &self.tools;
        Outcome::Reply(Reply { status: 200, body: Some(b"{}".to_vec()) })
    }
}

/// A JSON-RPC error message with `"id": null`, for transport-level refusals
/// (406, 415, 403 bodies).
pub fn error_without_id(code: i64, message: &str) -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}
