#!/usr/bin/env bash
# Throughput of one xmd binary, for choosing the release profile and the
# allocator (the numbers are in deploy/README.md).
#
#   bash deploy/bench/bench.sh BIN [SECONDS]
#
# Needs wrk and nginx (Debian packages). Starts on loopback:
# - nginx as a fast static upstream serving the FxTwitter fixture of
#   /2/status/2087208847298015232 (so a tools/call measures xmd, not a Python
#   fake upstream);
# - BIN serve on a free port, 4 workers;
# then runs, with wrk -t1 -c64:
#   list  tools/list      (HTTP parsing, dispatch, a pre-rendered JSON answer)
#   call  tools/call      (upstream GET with ureq, JSON parse, Markdown render)
# and prints `list RPS` and `call RPS` plus the startup time to the first
# answered request and the idle RSS. Everything is stopped on exit.
set -euo pipefail

BIN=$(readlink -f "${1:?usage: bench.sh BIN [SECONDS]}")
SECS=${2:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FIXTURE="$ROOT/tests/interop/fixtures/status-plain.json"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-bench.XXXXXX")
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
now_ms() { date +%s%3N; }

UPORT=$(free_port)
mkdir -p "$TMP/nginx/logs"
cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
error_log $TMP/nginx/logs/error.log warn;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$UPORT;
    location = /2/status/2087208847298015232 {
      default_type application/json;
      alias $FIXTURE;
    }
  }
}
EOF
nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" &
PIDS+=($!)

PORT=$(free_port)
T0=$(now_ms)
XMD_WORKERS=4 "$BIN" serve --listen "127.0.0.1:$PORT" --upstream "http://127.0.0.1:$UPORT" \
  --syndication-url "" 2>"$TMP/xmd.err" &
XPID=$!
PIDS+=($XPID)
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz"; do
  kill -0 "$XPID" 2>/dev/null || { cat "$TMP/xmd.err"; exit 1; }
done
T1=$(now_ms)
echo "startup to first answered request: $((T1 - T0)) ms"
# Make sure the tool path works before measuring it.
curl -sf "http://127.0.0.1:$PORT/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{"url":"https://x.com/demo_author/status/2087208847298015232","thread":"off"}}}' \
  | grep -q '"isError":false' || { echo "tools/call does not work"; cat "$TMP/xmd.err"; exit 1; }
sleep 0.5
echo "idle RSS: $(ps -o rss= -p "$XPID" | tr -d ' ') KiB"

rps() { awk '/^Requests\/sec:/ {print $2}'; }
for kind in list call; do
  out=$(wrk -t1 -c64 -d"${SECS}s" -s "$HERE/$kind.lua" "http://127.0.0.1:$PORT/mcp")
  errors=$(echo "$out" | grep -E 'Non-2xx|Socket errors|bad answers: [1-9]' || true)
  echo "$kind RPS: $(echo "$out" | rps)${errors:+ ($errors)}"
done
echo "RSS after load: $(ps -o rss= -p "$XPID" | tr -d ' ') KiB"
