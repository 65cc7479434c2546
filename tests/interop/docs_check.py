#!/usr/bin/env python3
"""Checks the agent documents, offline (templates) and against a running xmd.

Usage:
  docs_check.py --offline DOCS_DIR
      Fills the {{PUBLIC_URL}}/{{VERSION}} placeholders of docs/* and checks
      them: only known placeholders; no host for this server other than the
      placeholder; openapi.json valid OpenAPI 3.1 (openapi-spec-validator);
      llms.txt shape; llms-full.txt covers tools, errors and both eras.
  docs_check.py --base URL DOCS_DIR
      Against a running server at URL: the served documents equal the filled
      templates; the served /openapi.json is valid; every documented GET and
      OPTIONS route answers with a documented status, Content-Type and
      schema; POST /mcp framing and refusals answer as documented; every tool
      and argument in tools/list is described in llms-full.txt.

Prints "PASS docs <check>: ..." / "FAIL docs <check>: ..." lines (label
"http" with --base) and exits 1 if any check failed. Needs
openapi-spec-validator (and its jsonschema) in the running Python.
"""

import json
import os
import re
import sys
import traceback
import urllib.error
import urllib.parse
import urllib.request

from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec
from openapi_spec_validator.validation import OpenAPIV31SpecValidator

DOCS = {
    "llms.txt": "text/plain",
    "llms-full.txt": "text/plain",
    "index.md": "text/markdown",
    "openapi.json": "application/json",
}
PLACEHOLDERS = {"{{PUBLIC_URL}}", "{{VERSION}}"}
TOOLS = ["x_md_get_post", "x_md_get_profile", "x_md_search_posts", "x_md_get_followers", "x_md_get_following",
         "x_md_get_quotes", "x_md_get_reposts", "x_md_get_trends"]
REQUIRED_ROUTES = [
    "/mcp", "/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json", "/server.json",
    "/healthz", "/llms.txt", "/llms-full.txt", "/openapi.json", "/index.md",
]
# Hosts the documents may cite (specifications, and X permalinks as tool
# inputs). Any other host would be a second address for this server.
ALLOWED_HOSTS = {
    "modelcontextprotocol.io", "spec.openapis.org", "www.rfc-editor.org", "json-schema.org",
    "www.jsonrpc.org", "llmstxt.org", "x.com", "twitter.com", "www.x.com", "mobile.twitter.com",
    "static.modelcontextprotocol.io", "github.com",
}
OFFLINE_BASE = "http://127.0.0.1:8080"
OFFLINE_VERSION = "0.0.0"
URL_RE = re.compile(r"https?://[^\s\"'<>)\]`]+")
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "xmd-docs-check", "version": "0.0.1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}

LABEL = "docs"
RESULTS = []


def report(check, ok, detail):
    RESULTS.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {LABEL} {check}: {' '.join(str(detail).split())}", flush=True)


def check(name):
    """Runs the decorated function as one check; an exception is a FAIL."""

    def wrap(fn):
        def run(*args):
            try:
                problems = fn(*args)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc(file=sys.stderr)
                report(name, False, f"{type(e).__name__}: {e}")
                return
            if isinstance(problems, tuple):
                problems, detail = problems
            else:
                detail = "ok"
            if problems:
                shown = "; ".join(problems[:8]) + (f"; ... {len(problems) - 8} more" if len(problems) > 8 else "")
                report(name, False, shown)
            else:
                report(name, True, detail)

        return run

    return wrap


def load_templates(docs_dir):
    out = {}
    for name in DOCS:
        with open(os.path.join(docs_dir, name), encoding="utf-8") as f:
            out[name] = f.read()
    return out


def fill(text, base, version):
    return text.replace("{{PUBLIC_URL}}", base).replace("{{VERSION}}", version)


# --- offline -----------------------------------------------------------------


@check("placeholders")
def check_placeholders(templates):
    problems = []
    for name, text in templates.items():
        for ph in set(re.findall(r"\{\{[^}]*\}\}", text)):
            if ph not in PLACEHOLDERS:
                problems.append(f"{name}: unknown placeholder {ph}")
        if "{{PUBLIC_URL}}" not in text:
            problems.append(f"{name}: never names {{{{PUBLIC_URL}}}}")
        filled = fill(text, OFFLINE_BASE, OFFLINE_VERSION)
        left = re.findall(r"\{\{\s*[A-Za-z_]+\s*\}\}", filled)
        if left:
            problems.append(f"{name}: placeholders left after filling: {sorted(set(left))}")
        if "{{PUBLIC_URL}}//" in text:
            problems.append(f"{name}: double slash after {{{{PUBLIC_URL}}}}")
    return problems, "only {{PUBLIC_URL}} and {{VERSION}}, all filled"


@check("hosts")
def check_hosts(templates):
    problems = []
    for name, text in templates.items():
        for url in URL_RE.findall(fill(text, OFFLINE_BASE, OFFLINE_VERSION)):
            host = re.sub(r"^https?://", "", url).split("/")[0].split("?")[0]
            if url.startswith(OFFLINE_BASE) or host in ALLOWED_HOSTS:
                continue
            problems.append(f"{name}: names another host: {url}")
    return problems, "no host for this server other than {{PUBLIC_URL}}"


def validate_openapi(spec, base, version):
    problems = []
    validate_spec(spec, cls=OpenAPIV31SpecValidator)
    if spec.get("openapi") != "3.1.0":
        problems.append(f"openapi is {spec.get('openapi')!r}, want '3.1.0'")
    if spec.get("servers") != [{"url": base, "description": "This deployment"}] and [
        s.get("url") for s in spec.get("servers", [])
    ] != [base]:
        problems.append(f"servers is {spec.get('servers')!r}, want one server with url {base!r}")
    if spec.get("info", {}).get("version") != version:
        problems.append(f"info.version is {spec.get('info', {}).get('version')!r}, want {version!r}")
    for route in REQUIRED_ROUTES:
        if route not in spec.get("paths", {}):
            problems.append(f"path {route} is not documented")
    mcp = spec.get("paths", {}).get("/mcp", {})
    for method in ("post", "get", "options"):
        if method not in mcp:
            problems.append(f"/mcp {method} is not documented")
    post = mcp.get("post", {})
    for status in ("200", "202", "400", "404", "406", "413", "415"):
        if status not in post.get("responses", {}):
            problems.append(f"POST /mcp response {status} is not documented")
    media = post.get("responses", {}).get("200", {}).get("content", {})
    for ct in ("application/json", "text/event-stream"):
        if ct not in media:
            problems.append(f"POST /mcp 200 lacks {ct}")
    return problems


@check("openapi")
def check_openapi_offline(templates):
    spec = json.loads(fill(templates["openapi.json"], OFFLINE_BASE, OFFLINE_VERSION))
    problems = validate_openapi(spec, OFFLINE_BASE, OFFLINE_VERSION)
    return problems, f"valid OpenAPI 3.1.0, {len(spec['paths'])} paths"


@check("llms.txt")
def check_llms(templates):
    text = templates["llms.txt"]
    lines = text.splitlines()
    problems = []
    if not lines or not lines[0].startswith("# "):
        problems.append("first line is not an H1 title")
    if not any(line.startswith("> ") for line in lines[1:6]):
        problems.append("no blockquote summary right after the title")
    if not any(line.startswith("## ") for line in lines):
        problems.append("no H2 sections")
    for tool in TOOLS:
        if not any(line.lstrip("- ").startswith(f"[{tool}]") or f"`{tool}`" in line or tool in line for line in lines):
            problems.append(f"tool {tool} is not listed")
    for target in ("{{PUBLIC_URL}}/mcp", "{{PUBLIC_URL}}/llms-full.txt", "{{PUBLIC_URL}}/openapi.json", "{{PUBLIC_URL}}/index.md"):
        if f"]({target})" not in text:
            problems.append(f"no Markdown link to {target}")
    return problems, f"{len(lines)} lines, title, summary, sections, links, eight tools"


@check("llms-full.txt")
def check_llms_full(templates):
    text = templates["llms-full.txt"]
    problems = []
    needed = TOOLS + [
        "-32700", "-32600", "-32601", "-32602", "-32603", "-32020", "-32022",
        "isError", "structuredContent", "next_cursor", "cursor", "limit", "page",
        "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "server/discover", "initialize",
        "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "text/event-stream", "application/json",
        "406", "415", "405", "404", "202", "retry after", "{{PUBLIC_URL}}/mcp",
    ]
    for word in needed:
        if word not in text:
            problems.append(f"does not mention {word!r}")
    return problems, f"{len(text)} chars covering tools, paging, errors, eras, framing"


@check("index.md")
def check_index(templates):
    text = templates["index.md"]
    problems = []
    if not text.startswith("# "):
        problems.append("does not start with an H1")
    for target in ("/llms.txt", "/llms-full.txt", "/openapi.json", "/mcp", "/mcp/server-card", "/.well-known/ai-catalog.json", "/server.json"):
        if f"]({{{{PUBLIC_URL}}}}{target})" not in text:
            problems.append(f"no link to {{{{PUBLIC_URL}}}}{target}")
    return problems, "links every document and discovery route"


# --- online ------------------------------------------------------------------


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def content_type(self):
        return (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()

    def json(self):
        return json.loads(self.body.decode("utf-8"))


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read())


def schema_validator(spec, schema):
    """A 2020-12 validator for `schema` whose #/components refs resolve."""
    root = dict(schema)
    root["components"] = spec.get("components", {})
    return OAS31Validator(root)


def check_against(spec, path, method, resp, problems, what):
    """Checks a response's status, Content-Type and body against the spec."""
    op = spec["paths"][path][method]
    responses = op.get("responses", {})
    documented = responses.get(str(resp.status)) or responses.get("default")
    if documented is None:
        problems.append(f"{what}: status {resp.status} is not documented ({sorted(responses)})")
        return
    if "$ref" in documented:
        documented = spec["components"]["responses"][documented["$ref"].rsplit("/", 1)[1]]
    content = documented.get("content")
    if not content:
        if resp.body:
            problems.append(f"{what}: {resp.status} documented without a body, got {len(resp.body)} bytes")
        return
    # A documented key may carry parameters (`text/plain; version=0.0.4; ...`):
    # then the whole Content-Type must match it.
    spelled = {k.lower().replace(" ", ""): k for k in content}
    key = resp.content_type if resp.content_type in content else spelled.get(
        (resp.headers.get("Content-Type") or "").lower().replace(" ", ""))
    if key is None:
        problems.append(f"{what}: Content-Type {resp.content_type!r} not in {sorted(content)}")
        return
    schema = content[key].get("schema")
    if schema is None:
        return
    if resp.content_type == "application/json" or resp.content_type.endswith("+json"):
        try:
            value = resp.json()
        except ValueError as e:
            problems.append(f"{what}: body is not JSON ({e})")
            return
    else:
        value = resp.body.decode("utf-8", "replace")
    errors = sorted(schema_validator(spec, schema).iter_errors(value), key=lambda e: list(e.path))
    for e in errors[:3]:
        problems.append(f"{what}: body misses the schema at {list(e.path)}: {e.message[:160]}")


@check("documents")
def check_served_docs(base, templates, version_box):
    problems = []
    served_spec = http("GET", base + "/openapi.json")
    version = ""
    if served_spec.status == 200:
        version = served_spec.json().get("info", {}).get("version", "")
    version_box.append(version)
    for name, media in DOCS.items():
        r = http("GET", f"{base}/{name}")
        if r.status != 200:
            problems.append(f"/{name}: status {r.status}")
            continue
        if r.content_type != media:
            problems.append(f"/{name}: Content-Type {r.headers.get('Content-Type')!r}, want {media}")
        want = fill(templates[name], base, version)
        got = r.body.decode("utf-8", "replace")
        if name.endswith(".json"):
            # Embedded minified (build.rs): the same JSON value as the file.
            same = json.loads(got) == json.loads(want)
            if not same:
                problems.append(f"/{name}: not the same JSON value as the filled template")
            continue
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            problems.append(f"/{name}: differs from the filled template at char {at}: got {got[at:at + 60]!r}, want {want[at:at + 60]!r}")
    return problems, f"4 documents served as templated (version {version})"


@check("openapi")
def check_served_openapi(base, version):
    spec = http("GET", base + "/openapi.json").json()
    return validate_openapi(spec, base, version), "served /openapi.json is valid OpenAPI 3.1.0 for this URL"


def example_target(spec, path, item, op):
    """`path` with its path parameters and required query parameters filled
    from their documented examples (the fixtures the fake upstream serves)."""
    query = []
    for param in item.get("parameters", []) + op.get("parameters", []):
        if "$ref" in param:
            param = spec["components"]["parameters"][param["$ref"].rsplit("/", 1)[1]]
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", urllib.parse.quote(str(param["example"]), safe=""))
        elif param["in"] == "query" and param.get("required"):
            query.append((param["name"], str(param["example"])))
    return path + ("?" + urllib.parse.urlencode(query) if query else "")


@check("routes")
def check_routes(base, spec):
    problems = []
    count = 0
    for path, item in spec["paths"].items():
        if "get" in item:
            headers = {"Accept": "application/json"} if path == "/mcp" else {}
            target = base + example_target(spec, path, item, item["get"])
            r = http("GET", target, headers=headers)
            # The server's global upstream budget (15/s, `--upstream-budget`)
            # may refuse a cold burst of routes: `503` `upstream_budget` with
            # `Retry-After`, as documented. Wait it out, once.
            if r.status == 503 and b"upstream_budget" in r.body:
                import time
                time.sleep(int(r.headers.get("Retry-After") or 1) + 1)
                r = http("GET", target, headers=headers)
            check_against(spec, path, "get", r, problems, f"GET {path}")
            if r.status != 200:
                problems.append(f"GET {path}: status {r.status}, want 200")
            count += 1
        if "options" in item:
            r = http("OPTIONS", base + example_target(spec, path, item, item["options"]), headers={
                "Origin": base, "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, mcp-protocol-version"})
            check_against(spec, path, "options", r, problems, f"OPTIONS {path}")
            if r.status != 204:
                problems.append(f"OPTIONS {path}: status {r.status}, want 204")
            count += 1
    r = http("GET", base + "/mcp", headers={"Accept": "text/event-stream"})
    check_against(spec, "/mcp", "get", r, problems, "GET /mcp (event-stream)")
    if r.status != 405:
        problems.append(f"GET /mcp with Accept: text/event-stream: status {r.status}, want 405")
    r = http("DELETE", base + "/mcp")
    check_against(spec, "/mcp", "delete", r, problems, "DELETE /mcp")
    r = http("GET", base + "/no-such-route")
    if r.status != 404 or r.content_type != "application/json":
        problems.append(f"GET /no-such-route: {r.status} {r.content_type!r}, want 404 application/json")
    else:
        nf = spec["components"]["responses"]["NotFound"]["content"]["application/json"]["schema"]
        for e in schema_validator(spec, nf).iter_errors(r.json()):
            problems.append(f"GET /no-such-route: body misses NotFound schema: {e.message[:160]}")
    return problems, f"{count + 3} requests answered as documented"


def rpc_body(method, params, id_=1):
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


def modern_headers(method, name=None, accept="application/json, text/event-stream"):
    h = {"Content-Type": "application/json", "Accept": accept,
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        h["Mcp-Name"] = name
    return h


@check("mcp-framing")
def check_framing(base, spec):
    problems = []
    url = base + "/mcp"
    body = rpc_body("tools/list", {"_meta": MODERN_META})
    cases = [
        ("json", modern_headers("tools/list", accept="application/json"), body, 200, "application/json"),
        ("sse", modern_headers("tools/list", accept="text/event-stream"), body, 200, "text/event-stream"),
        ("wildcard", modern_headers("tools/list", accept="*/*"), body, 200, None),
        ("not-acceptable", modern_headers("tools/list", accept="text/html"), body, 406, None),
        ("wrong-content-type", dict(modern_headers("tools/list"), **{"Content-Type": "text/plain"}), body, 415, None),
        ("parse-error", {"Content-Type": "application/json", "Accept": "application/json"}, b"{", 400, "application/json"),
        ("batch", {"Content-Type": "application/json", "Accept": "application/json"}, b"[" + rpc_body("ping", {}) + b"]", 400, "application/json"),
        ("notification", {"Content-Type": "application/json", "Accept": "application/json"},
         json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), 202, None),
        ("unknown-method", modern_headers("no/such"), rpc_body("no/such", {"_meta": MODERN_META}, 9), 404, None),
        ("header-mismatch", modern_headers("prompts/list"), body, 400, None),
    ]
    for name, headers, data, want_status, want_ct in cases:
        r = http("POST", url, body=data, headers=headers)
        what = f"POST /mcp {name}"
        if r.status != want_status:
            problems.append(f"{what}: status {r.status}, want {want_status}")
        if want_ct and r.content_type != want_ct:
            problems.append(f"{what}: Content-Type {r.content_type!r}, want {want_ct}")
        check_against(spec, "/mcp", "post", r, problems, what)
        if r.status == 202 and (r.body or r.headers.get("Content-Type")):
            problems.append(f"{what}: 202 with a body or Content-Type")
        if r.content_type == "text/event-stream":
            frame = r.body.decode("utf-8")
            data_lines = [line[5:].strip() for line in frame.splitlines() if line.startswith("data:")]
            if "event: message" not in frame.splitlines() or len(data_lines) != 1 or not frame.endswith("\n\n"):
                problems.append(f"{what}: not one `event: message` frame: {frame[:120]!r}")
            else:
                msg = json.loads(data_lines[0])
                if msg.get("id") != 1 or "tools" not in msg.get("result", {}):
                    problems.append(f"{what}: frame carries {str(msg)[:120]}")
        if r.status in (400, 404) and r.content_type == "application/json":
            err = r.json().get("error", {})
            want_code = {"parse-error": -32700, "batch": -32600, "unknown-method": -32601, "header-mismatch": -32020}.get(name)
            if want_code is not None and err.get("code") != want_code:
                problems.append(f"{what}: error code {err.get('code')}, want {want_code}")
    return problems, f"{len(cases)} POST cases answered as documented"


@check("tool-docs")
def check_tool_docs(base, templates):
    problems = []
    r = http("POST", base + "/mcp", body=rpc_body("tools/list", {"_meta": MODERN_META}),
             headers=modern_headers("tools/list", accept="application/json"))
    tools = r.json()["result"]["tools"]
    full = templates["llms-full.txt"]
    short = templates["llms.txt"]
    args = 0
    for tool in tools:
        name = tool["name"]
        if name not in short:
            problems.append(f"llms.txt does not list {name}")
        section = full.split(name, 1)
        if len(section) < 2:
            problems.append(f"llms-full.txt does not describe {name}")
            continue
        for prop, schema in tool.get("inputSchema", {}).get("properties", {}).items():
            args += 1
            if f"`{prop}`" not in full:
                problems.append(f"llms-full.txt does not describe argument `{prop}` of {name}")
            for value in schema.get("enum", []):
                if f"`{value}`" not in full and f'"{value}"' not in full:
                    problems.append(f"llms-full.txt does not mention value {value!r} of {name}.{prop}")
    return problems, f"{len(tools)} tools and {args} arguments described in llms-full.txt"


def main(argv):
    global LABEL
    if len(argv) == 3 and argv[1] == "--offline":
        templates = load_templates(argv[2])
        check_placeholders(templates)
        check_hosts(templates)
        check_openapi_offline(templates)
        check_llms(templates)
        check_llms_full(templates)
        check_index(templates)
    elif len(argv) == 4 and argv[1] == "--base":
        LABEL = "http"
        base = argv[2].rstrip("/")
        templates = load_templates(argv[3])
        version_box = []
        check_served_docs(base, templates, version_box)
        version = version_box[0] if version_box else ""
        check_served_openapi(base, version)
        spec = json.loads(fill(templates["openapi.json"], base, version))
        check_routes(base, spec)
        check_framing(base, spec)
        check_tool_docs(base, templates)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0 if RESULTS and all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
