"""A small server on the official Python SDK (mcp>=2: MCPServer, formerly
FastMCP) for `xmd probe` in CI: one read-only tool with structured output,
one resource, one prompt, Streamable HTTP on 127.0.0.1:PORT/mcp.

Usage: probe_fastmcp_server.py PORT
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("probe-fastmcp")


class Sum(BaseModel):
    total: int


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> Sum:
    """Adds two integers."""
    return Sum(total=a + b)


@server.resource("probe://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


@server.prompt()
def summarize(text: str) -> str:
    """Asks for a summary."""
    return f"Summarize: {text}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), streamable_http_path="/mcp")
