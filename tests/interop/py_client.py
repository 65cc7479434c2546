#!/usr/bin/env python3
"""Interop check with the official Python MCP SDK (v2, `pip install 'mcp>=2'`).

Usage: py_client.py MCP_URL MODE
  MODE "auto"   - the SDK default: probes server/discover, must adopt 2026-07-28
  MODE "legacy" - forces the initialize handshake, must negotiate 2025-11-25

Prints one line per check, "PASS <label>: ..." or "FAIL <label>: ...", and
exits 1 if any check failed. Checks that cannot run after an earlier failure
are reported as FAIL too, so the count of lines is the same on every run.
"""

import asyncio
import json
import os
import sys
import traceback

from mcp import Client

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_TOOLS = [
    "x_md_get_post",
    "x_md_get_profile",
    "x_md_search_posts",
    "x_md_get_followers",
    "x_md_get_following",
]
POST_URL = "https://x.com/demo_author/status/2087208847298015232"
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
CHECKS = ["connect", "tools/list", "tools/call", "resources"]
TIMEOUT_S = 30


def fixture_post_text():
    with open(os.path.join(HERE, "fixtures", "status-plain.json"), encoding="utf-8") as f:
        return json.load(f)["status"]["text"]


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run(url, mode, report):
    post_text = fixture_post_text()
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        got = client.protocol_version
        want = EXPECTED_VERSION[mode]
        info = client.server_info
        if got != want:
            report("connect", False, f"protocol_version {got!r}, want {want!r}")
            return
        report("connect", True, f"protocol_version {got}, server {info.name if info else '?'} {info.version if info else '?'}")

        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        if sorted(names) != sorted(EXPECTED_TOOLS) or len(names) != 5:
            report("tools/list", False, f"tool names {names}, want exactly {EXPECTED_TOOLS}")
        else:
            report("tools/list", True, f"{len(names)} tools: {', '.join(names)}")

        result = await client.call_tool("x_md_get_post", {"url": POST_URL, "thread": "off"})
        text = text_of(result)
        problems = []
        if result.is_error:
            problems.append("isError is true")
        if post_text not in text:
            problems.append(f"text lacks the fixture post text; text starts {text[:200]!r}")
        if not isinstance(result.structured_content, dict):
            problems.append(f"structuredContent is {type(result.structured_content).__name__}, want an object")
        if problems:
            report("tools/call", False, "x_md_get_post: " + "; ".join(problems))
        else:
            report("tools/call", True, f"x_md_get_post returned {len(text)} chars of Markdown with the post text")

        resources = await client.list_resources()
        uris = [str(r.uri) for r in resources.resources]
        llms = [u for u in uris if u.endswith("/llms.txt")]
        if not llms:
            report("resources", False, f"no llms.txt among resources {uris}")
            return
        read = await client.read_resource(llms[0])
        body = "".join(getattr(c, "text", "") for c in read.contents)
        if "/mcp" not in body or "x_md_get_post" not in body:
            report("resources", False, f"{llms[0]} does not name the endpoint and tools; starts {body[:200]!r}")
        else:
            report("resources", True, f"{len(uris)} resources; read {llms[0]} ({len(body)} chars)")


def leaves(e):
    """The innermost exceptions of (nested) exception groups."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for x in e.exceptions for leaf in leaves(x)]
    return [e]


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in EXPECTED_VERSION:
        sys.stderr.write(__doc__)
        return 2
    url, mode = sys.argv[1], sys.argv[2]
    label = f"py-{mode}"
    done = {}

    def report(check, ok, detail):
        done[check] = ok
        one_line = " ".join(str(detail).split())
        print(f"{'PASS' if ok else 'FAIL'} {label} {check}: {one_line}", flush=True)

    try:
        asyncio.run(asyncio.wait_for(run(url, mode, report), TIMEOUT_S))
    except BaseException as e:  # noqa: BLE001 - every failure must become a FAIL line
        detail = "; ".join(f"{type(x).__name__}: {str(x)[:300]}" for x in leaves(e))
        traceback.print_exc(file=sys.stderr)
        pending = [c for c in CHECKS if c not in done]
        if pending:
            report(pending[0], False, detail)
    for check in CHECKS:
        if check not in done:
            report(check, False, "not run after an earlier failure")
    return 0 if all(done.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
