//! Routes, HTTP checks, framing: the one place that knows both HTTP and MCP.
