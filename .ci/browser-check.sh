#!/usr/bin/env bash
# Browser check of the landing page (issue 9): `bash .ci/browser-check.sh BIN`
# where BIN is the built xmd binary (e.g. target/release/xmd).
#
# Installs Debian's `chromium` with apt-get when it is missing, starts BIN on a
# free loopback port with a --public-url whose path carries percent-encodings
# (`/x%27md%26co`: a quote and an ampersand, which xmd refuses raw since the
# agent documents print the URL in JSON, TOML and shell), then loads http://127.0.0.1:PORT/ in
# headless Chromium twice for screenshots (1280 px desktop, 390 px phone) and
# once for a DOM dump. The DOM must show the server's own MCP URL in every
# snippet (each snippet parsed back with a parser of its format: JSON, TOML,
# POSIX shell), copy buttons added by the page script, every link pointing at
# this server (and answering 200 there once the proxy prefix is removed), and
# no reference to any other host (the one exception: the `$schema` URL inside
# the opencode snippet, which is part of opencode's config format).
#
# Prints one PASS/FAIL line per check and the screenshot paths; exits non-zero
# on any failure. Screenshots go to $XMD_CI_ARTIFACTS (default
# target/ci-artifacts). Nothing here reaches the network except apt-get.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: bash .ci/browser-check.sh PATH/TO/xmd" >&2
  exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
ARTIFACTS=${XMD_CI_ARTIFACTS:-$ROOT/target/ci-artifacts}
mkdir -p "$ARTIFACTS"
ARTIFACTS=$(cd "$ARTIFACTS" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xmd-browser.XXXXXX")
# Seconds to wait for xmd to answer, and for one Chromium run.
START_TIMEOUT=30
CHROMIUM_TIMEOUT=90
XMD_PID=""

cleanup() {
  local rc=$?
  if [ -n "$XMD_PID" ] && kill -0 "$XMD_PID" 2>/dev/null; then
    kill "$XMD_PID" 2>/dev/null || true
    wait "$XMD_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "chromium missing: installing Debian's chromium"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      chromium fonts-dejavu-core >/dev/null
    CHROMIUM=$(command -v chromium)
  else
    echo "FAIL browser setup: chromium is not installed and apt-get is not usable as root"
    exit 1
  fi
fi
"$CHROMIUM" --version 2>/dev/null | head -n 1 || true

# Starts xmd on a free port (three tries: a probed port can be taken before
# xmd binds it); sets PORT, PUBLIC_URL and XMD_PID.
start_xmd() {
  local attempt
  for attempt in 1 2 3; do
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
    PUBLIC_URL="http://127.0.0.1:$PORT/x%27md%26co"
    "$BIN" serve --listen "127.0.0.1:$PORT" --public-url "$PUBLIC_URL" \
      --upstream "http://127.0.0.1:9" --syndication-url "" >"$WORK/xmd.out" 2>"$WORK/xmd.err" &
    XMD_PID=$!
    if python3 - "http://127.0.0.1:$PORT/healthz" "$START_TIMEOUT" "$XMD_PID" <<'PY'
import os, sys, time, urllib.request
url, limit, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
    then
      return 0
    fi
    echo "xmd did not come up on port $PORT (attempt $attempt)"
    tail -n 20 "$WORK/xmd.err" || true
    kill "$XMD_PID" 2>/dev/null || true
    wait "$XMD_PID" 2>/dev/null || true
    XMD_PID=""
  done
  return 1
}

if ! start_xmd; then
  echo "FAIL browser setup: xmd did not start"
  exit 1
fi
PAGE="http://127.0.0.1:$PORT/"
echo "xmd: $PAGE (public URL $PUBLIC_URL, pid $XMD_PID)"

# chromium OUT_FILE EXTRA_FLAGS...: one headless run with a fresh profile.
chromium() {
  local out=$1 profile
  shift
  profile=$(mktemp -d "$WORK/profile.XXXXXX")
  timeout "$CHROMIUM_TIMEOUT" "$CHROMIUM" --headless --no-sandbox --disable-gpu \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --disable-quic --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$profile" "$@" "$PAGE" >"$out" 2>"$out.err"
}

FAILED=0
fail_with_log() {
  echo "FAIL $1"
  tail -n 20 "$2" 2>/dev/null || true
  FAILED=$((FAILED + 1))
}

for shot in desktop:1280,2000 phone:390,2400; do
  name=${shot%%:*}
  size=${shot#*:}
  png="$ARTIFACTS/landing-$name.png"
  rm -f "$png"
  if chromium "$WORK/shot-$name.log" --screenshot="$png" --window-size="$size" \
    && [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    echo "PASS screenshot $name ${size/,/x}: $png"
  else
    fail_with_log "screenshot $name: no PNG written" "$WORK/shot-$name.log.err"
  fi
done

if chromium "$WORK/dom.html" --dump-dom --window-size=1280,2000 && [ -s "$WORK/dom.html" ]; then
  echo "PASS dump-dom: $(wc -c <"$WORK/dom.html") bytes"
else
  fail_with_log "dump-dom: no DOM" "$WORK/dom.html.err"
  exit 1
fi
cp "$WORK/dom.html" "$ARTIFACTS/landing-dom.html"
echo "artifact: $ARTIFACTS/landing-dom.html"

set +e
python3 - "$WORK/dom.html" "$PUBLIC_URL" "$PORT" <<'PY'
import html.parser, json, re, shlex, sys, urllib.request, urllib.error
try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

dom_path, public, port = sys.argv[1], sys.argv[2], sys.argv[3]
origin = f"http://127.0.0.1:{port}"
mcp = public + "/mcp"
dom = open(dom_path, encoding="utf-8").read()
failed = 0

def check(ok, label, detail=""):
    global failed
    if ok:
        print(f"PASS {label}")
    else:
        failed += 1
        print(f"FAIL {label}" + (f": {detail}" if detail else ""))

class Page(html.parser.HTMLParser):
    """Collects articles, code blocks, links, buttons and resource tags."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.article = None
        self.code = None
        self.snippets = []       # (article id or None, code id or None, text)
        self.links = []
        self.buttons = 0
        self.resources = []      # tags/attrs that would load something
        self.text = []
        self.in_pre = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article":
            self.article = a.get("id")
        if tag == "code" and self.code is None:
            self.code = [a.get("id"), ""]
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "button" and "copy" in (a.get("class") or "").split():
            self.buttons += 1
        if tag in ("img", "link", "iframe", "object", "embed", "video", "audio", "source"):
            self.resources.append(f"<{tag}>")
        for k, v in attrs:
            if k in ("src", "srcset", "poster", "action", "formaction", "background") and v:
                self.resources.append(f"{tag}[{k}]={v}")
        if tag == "pre":
            self.in_pre = True
    def handle_endtag(self, tag):
        if tag == "article":
            self.article = None
        if tag == "code" and self.code is not None:
            if self.in_pre:
                self.snippets.append((self.article, self.code[0], self.code[1]))
            self.code = None
        if tag == "pre":
            self.in_pre = False
    def handle_data(self, data):
        self.text.append(data)
        if self.code is not None:
            self.code[1] += data

p = Page()
p.feed(dom)

def toml_url(text):
    if tomllib is None:
        raise RuntimeError("python3 >= 3.11 (tomllib) needed")
    return tomllib.loads(text)["mcp_servers"]["x-md"]["url"]

expect = {
    "claude": ("shell", ["claude", "mcp", "add", "--transport", "http", "x-md", mcp]),
    "codex": ("shell", ["codex", "mcp", "add", "x-md", "--url", mcp]),
    "amp": ("shell", ["amp", "mcp", "add", "x-md", mcp]),
    "codex-toml": ("toml", {"mcp_servers": {"x-md": {"url": mcp}}}),
    "json": ("json", {"mcpServers": {"x-md": {"url": mcp}}}),
    "opencode": ("json", {"$schema": "https://opencode.ai/config.json",
                          "mcp": {"x-md": {"type": "remote", "url": mcp}}}),
    "windsurf": ("json", {"mcpServers": {"x-md": {"serverUrl": mcp}}}),
    "amp-json": ("json", {"amp.mcpServers": {"x-md": {"url": mcp}}}),
    "vscode": ("json", {"servers": {"x-md": {"type": "http", "url": mcp}}}),
    "claude-json": ("json", {"mcpServers": {"x-md": {"type": "http", "url": mcp}}}),
    "cursor": ("json", {"mcpServers": {"x-md": {"url": mcp}}}),
}
by_article = {a: t for a, _, t in p.snippets if a}
for cid, (fmt, want) in expect.items():
    text = by_article.get(cid)
    if text is None:
        check(False, f"snippet {cid}", "missing from the DOM")
        continue
    try:
        got = (shlex.split(text) if fmt == "shell"
               else tomllib.loads(text) if fmt == "toml"
               else json.loads(text))
    except Exception as e:
        check(False, f"snippet {cid} ({fmt})", f"does not parse: {e}")
        continue
    check(got == want, f"snippet {cid} ({fmt}) parses back to {mcp}", f"got {got!r}")

url_box = [t for _, i, t in p.snippets if i == "mcp-url"]
check(url_box == [mcp], "MCP URL box shows the server's own URL", repr(url_box))
curl = [t for _, _, t in p.snippets if t.startswith("curl ")]
try:
    argv = shlex.split(curl[0]) if curl else []
except ValueError as e:
    argv = [str(e)]
check(len(argv) > 4 and argv[4] == mcp and json.loads(argv[-1])["method"] == "tools/list",
      "curl tools/list line targets the server's own URL", repr(argv[:5]))
check(p.buttons == len(p.snippets) == 13,
      f"page script added a copy button to every snippet ({p.buttons}/{len(p.snippets)})")
check(not p.resources, "no external resources (img, link, src=...)", ", ".join(p.resources))

# Every absolute URL anywhere in the DOM (markup and text) names this server.
foreign = []
allowed_foreign = {"https://opencode.ai/config.json"}
for m in re.finditer(r"(?i)\b([a-z][a-z0-9+.-]*):(//[^\s\"'<>`]*)", dom):
    url = m.group(0)
    host = m.group(2)[2:].split("/")[0].split("?")[0].split("#")[0]
    if host.lower() == f"127.0.0.1:{port}":
        continue
    if url in allowed_foreign:
        continue
    foreign.append(url)
check(not foreign, "no reference to any other host", ", ".join(sorted(set(foreign))[:5]))

# Every link stays on this page or this server, and answers 200 there.
bad = []
anchors = {i for i in expect}
documents = 0
for href in p.links:
    if href.startswith("#"):
        if href[1:] not in anchors:
            bad.append(f"{href} (no such client section)")
        continue
    documents += 1
    if not href.startswith(public + "/"):
        bad.append(f"{href} (not under the public URL)")
        continue
    path = href[len(public):]
    try:
        with urllib.request.urlopen(origin + path, timeout=5) as r:
            if r.status != 200:
                bad.append(f"{path}: HTTP {r.status}")
    except urllib.error.HTTPError as e:
        bad.append(f"{path}: HTTP {e.code}")
check(not bad and documents == 5,
      f"{len(p.links) - documents} client anchors and {documents} document links stay on this server; documents answer 200",
      "; ".join(bad))
version = json.load(urllib.request.urlopen(origin + "/mcp", timeout=5))["version"]
check(f"xmd {version}" in "".join(p.text), f"page shows the version (xmd {version})")
sys.exit(1 if failed else 0)
PY
rc=$?
set -e
if [ "$rc" != 0 ]; then
  FAILED=$((FAILED + 1))
fi
if [ "$FAILED" != 0 ]; then
  echo "browser-check: FAILED"
  exit 1
fi
echo "browser-check: all checks passed"
