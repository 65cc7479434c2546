//! The five read-only X tools: definitions, argument validation, runs.
//!
//! STUB: replaced by the x-module work. The signatures here are the contract
//! the MCP dispatcher codes against.

use std::sync::Arc;

use serde_json::Value;

use super::upstream::Upstream;

/// Tool names, in `tools/list` order.
pub const TOOL_NAMES: [&str; 5] = [
    "x_md_get_post",
    "x_md_get_profile",
    "x_md_search_posts",
    "x_md_get_followers",
    "x_md_get_following",
];

/// What a tool run produced: Markdown text, optional structured content, and
/// whether it is a tool execution error (`isError: true`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The rendered Markdown (or error message) for the `text` content block.
    pub text: String,
    /// `structuredContent`; always `None` when `is_error` is true.
    pub structured: Option<Value>,
    /// `isError` of the result.
    pub is_error: bool,
}

/// Why `prepare` refused a call before any upstream work.
#[derive(Debug, Clone, PartialEq)]
pub enum PrepareError {
    /// No tool has this name.
    UnknownTool,
    /// The arguments miss the tool's `inputSchema`; the text names the
    /// offending argument and the accepted form.
    InvalidArguments(String),
}

/// A validated tool call, ready to run on a worker thread.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool name.
    pub name: &'static str,
    /// The validated arguments.
    pub arguments: Value,
}

/// The tool runner: holds the upstream (and later the cache).
pub struct Tools {
    #[allow(dead_code)]
    upstream: Arc<dyn Upstream>,
}

impl Tools {
    /// Builds the runner over an upstream.
    pub fn new(upstream: Arc<dyn Upstream>) -> Tools {
        Tools { upstream }
    }

    /// The JSON array of the five tool definitions for `tools/list`.
    pub fn definitions() -> Value {
        Value::Array(
            TOOL_NAMES
                .iter()
                .map(|n| {
                    serde_json::json!({"name": n, "inputSchema": {"type": "object"}})
                })
                .collect(),
        )
    }

    /// The `inputSchema` of one tool, for `-32602` error data.
    pub fn input_schema(name: &str) -> Option<Value> {
        TOOL_NAMES
            .contains(&name)
            .then(|| serde_json::json!({"type": "object"}))
    }

    /// Validates a call without touching the upstream. `arguments` is the
    /// raw `params.arguments` (absent → `None`).
    pub fn prepare(name: &str, arguments: Option<&Value>) -> Result<ToolCall, PrepareError> {
        let name = TOOL_NAMES
            .iter()
            .find(|n| **n == name)
            .ok_or(PrepareError::UnknownTool)?;
        Ok(ToolCall {
            name,
            arguments: arguments.cloned().unwrap_or(Value::Object(Default::default())),
        })
    }

    /// Runs a validated call (blocking; call from a worker thread).
    pub fn run(&self, call: &ToolCall) -> ToolOutput {
        ToolOutput {
            text: format!("{} is not yet available.", call.name),
            structured: None,
            is_error: true,
        }
    }
}
