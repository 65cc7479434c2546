#!/usr/bin/env bash
# The FROM-scratch container check without a container engine: a chroot
# whose directory holds only the static binary (no /etc, no libc, no CA file,
# no /dev, no /proc), exactly what deploy/Dockerfile's final stage holds.
#
#   bash .ci/chroot-check.sh BIN        (as root: chroot needs it)
#
# Starts the loopback fake FxTwitter upstream (tests/interop/fake_upstream.py)
# and `chroot DIR /xmd serve` on numeric loopback addresses (the chroot has no
# /etc/hosts, so no name can be resolved), then checks:
#   start       /healthz answers 200 (reports the time to the first answer)
#   tools/list  8 tools with the expected names
#   tools/call  x_md_get_post reaches the fake upstream and returns the
#               fixture post text
# One PASS/FAIL line each; exit status 1 on any FAIL. Everything started here
# is stopped and the directory removed on exit.
set -euo pipefail

BIN=$(readlink -f "${1:?usage: chroot-check.sh BIN}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
INTEROP="$ROOT/tests/interop"
# Seconds to wait for the fake upstream and the server to answer.
START_TIMEOUT=20
POST_URL="https://x.com/demo_author/status/2087208847298015232"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-chroot.XXXXXX")
JAIL="$TMP/jail"
PIDS=()
FAILED=0

cleanup() {
  local rc=$? pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$FAILED" != 0 ] || [ "$rc" != 0 ]; then
    for f in "$TMP"/*.err; do
      [ -s "$f" ] && { echo "--- $(basename "$f") (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS chroot $1: $2"; }
fail() { echo "FAIL chroot $1: $2"; FAILED=$((FAILED + 1)); }
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

if [ "$(id -u)" != 0 ]; then
  fail setup "must run as root (chroot)"
  exit 1
fi
case "$(file -b "$BIN")" in
  *"statically linked"* | *"static-pie linked"*) ;;
  *) fail setup "$BIN is not a static binary: $(file -b "$BIN")"; exit 1 ;;
esac

mkdir -p "$JAIL"
cp "$BIN" "$JAIL/xmd"
echo "jail: $JAIL holds: $(cd "$JAIL" && find . -mindepth 1 | tr '\n' ' ')"

python3 "$INTEROP/fake_upstream.py" --port 0 >"$TMP/upstream.out" 2>"$TMP/upstream.err" &
PIDS+=($!)
for _ in $(seq 1 $((START_TIMEOUT * 10))); do
  [ -s "$TMP/upstream.out" ] && break
  sleep 0.1
done
UPORT=$(head -n 1 "$TMP/upstream.out" || true)
if ! [[ "$UPORT" =~ ^[0-9]+$ ]]; then
  fail setup "fake upstream did not start"
  exit 1
fi

# A free port can be taken between probing and binding: try three times.
STARTED=0
for attempt in 1 2 3; do
  PORT=$(free_port)
  BASE="http://127.0.0.1:$PORT"
  T0=$(now_ms)
  chroot "$JAIL" /xmd serve --listen "127.0.0.1:$PORT" --upstream "http://127.0.0.1:$UPORT" \
    --syndication-url "" --workers 2 >"$TMP/xmd.out" 2>"$TMP/xmd.err" &
  XPID=$!
  PIDS+=($XPID)
  deadline=$((T0 + START_TIMEOUT * 1000))
  while [ "$(now_ms)" -lt "$deadline" ] && kill -0 "$XPID" 2>/dev/null; do
    if curl -sf -o /dev/null --max-time 2 "$BASE/healthz"; then
      STARTED=1
      break
    fi
    sleep 0.01
  done
  [ "$STARTED" = 1 ] && break
  echo "xmd did not answer on port $PORT (attempt $attempt)"
  kill "$XPID" 2>/dev/null || true
  wait "$XPID" 2>/dev/null || true
done
if [ "$STARTED" != 1 ]; then
  fail start "xmd in the chroot did not answer /healthz within ${START_TIMEOUT}s"
  exit 1
fi
pass start "/healthz answered $(($(now_ms) - T0)) ms after chroot exec, pid $XPID, idle RSS $(ps -o rss= -p "$XPID" | tr -d ' ') KiB"

# rpc BODY: POSTs a JSON-RPC request to /mcp the way a 2025-11-25 client
# does, and prints the JSON-RPC response (the `data:` of an SSE answer).
rpc() {
  curl -sS --max-time 20 "$BASE/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
    -d "$1" | python3 -c '
import sys
body = sys.stdin.read()
if body.startswith(("event:", "data:", "id:", ":")):
    body = "\n".join(l[5:].lstrip() for l in body.splitlines() if l.startswith("data:"))
print(body)'
}

LIST=$(rpc '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' || true)
if msg=$(python3 - "$LIST" <<'PY'
import json, sys
want = ["x_md_get_post", "x_md_get_profile", "x_md_search_posts",
        "x_md_get_followers", "x_md_get_following", "x_md_get_quotes",
        "x_md_get_reposts", "x_md_get_trends"]
try:
    names = [t["name"] for t in json.loads(sys.argv[1])["result"]["tools"]]
except Exception as e:
    print(f"no tool list in the answer ({type(e).__name__}): {sys.argv[1][:300]!r}"); sys.exit(1)
if sorted(names) != sorted(want):
    print(f"tools {names}, want {want}"); sys.exit(1)
print(f"{len(names)} tools: {', '.join(names)}")
PY
); then pass tools/list "$msg"; else fail tools/list "$msg"; fi

CALL=$(rpc '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{"url":"'"$POST_URL"'","thread":"off"}}}' || true)
SEEN=$(curl -sS --max-time 5 "http://127.0.0.1:$UPORT/__fake/requests" || true)
if msg=$(python3 - "$CALL" "$INTEROP/fixtures/status-plain.json" "$SEEN" <<'PY'
import json, sys
try:
    seen = json.loads(sys.argv[3])["paths"]
except Exception:
    seen = {}
hits = sum(n for p, n in seen.items() if p.startswith("/2/status/2087208847298015232"))
with open(sys.argv[2], encoding="utf-8") as f:
    want = json.load(f)["status"]["text"]
try:
    result = json.loads(sys.argv[1])["result"]
    text = "\n".join(c["text"] for c in result["content"] if c.get("type") == "text")
except Exception as e:
    print(f"no tool result in the answer ({type(e).__name__}): {sys.argv[1][:300]!r}"); sys.exit(1)
if result.get("isError"):
    print(f"isError: {text[:300]!r}"); sys.exit(1)
if want not in text:
    print(f"the Markdown lacks the fixture text; it starts {text[:200]!r}"); sys.exit(1)
if hits < 1:
    print(f"the fake upstream saw no /2/status request (it saw {seen})"); sys.exit(1)
print(f"x_md_get_post: {len(text)} chars of Markdown with the fixture text; upstream saw {hits} GET /2/status")
PY
); then pass tools/call "$msg"; else fail tools/call "$msg"; fi

[ "$FAILED" = 0 ]
