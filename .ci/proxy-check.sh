#!/usr/bin/env bash
# deploy/nginx.conf itself, run by Debian's nginx in front of two xmd
# replicas on loopback, proves three things an operator relies on:
#
#   bash .ci/proxy-check.sh BIN
#
# The example file is used as is except for what cannot exist on a CI
# machine: its listen ports become free loopback ports, the replica lines of
# the upstream block name the two replicas started here, the TLS
# certificate is a throw-away self-signed one (openssl), and the cache folder
# is a temp dir. nginx runs with a private prefix (never the system one) and
# is installed with apt-get when missing (root only).
#
# Checks (one PASS/FAIL line each; exit status 1 on any FAIL):
#   config         nginx -t accepts the example (HTTP/2 over TLS, the cache)
#   client-address two clients (source addresses 127.0.0.2 and 127.0.0.3)
#                  through nginx; replicas run --trusted-proxies 127.0.0.1
#                  --rate-limit 1 --rate-burst 2: client A's 6 tool calls get
#                  exactly 4 answers and 2 refusals (a 2-call burst on each
#                  of the 2 replicas), client B, sending a forged
#                  X-Forwarded-For naming A, still gets its own buckets, and
#                  the replicas' access logs name 127.0.0.2 and 127.0.0.3
#   cache          50 GETs of one post (5 in flight, from two more client
#                  addresses with fresh rate-limit buckets) through
#                  nginx: exactly 1 request reaches the fake upstream
#                  (tests/interop/fake_upstream.py counts them), and a GET
#                  with the ETag in If-None-Match is answered 304
# Everything started here is stopped on exit.
set -euo pipefail

BIN=$(readlink -f "${1:?usage: proxy-check.sh BIN}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
INTEROP="$ROOT/tests/interop"
EXAMPLE="$ROOT/deploy/nginx.conf"
# Seconds to wait for a started process to answer.
START_TIMEOUT=20
# The post every GET reads (tests/interop/fixtures/status-plain.json);
# thread=off: one upstream request per fetch.
POST_PATH="/demo_author/status/2087208847298015232?thread=off"
GETS=50
PUBLIC_HOST=xmd.example.com
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-proxy.XXXXXX")
PIDS=()
FAILED=0

cleanup() {
  local rc=$? pid f
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$FAILED" != 0 ] || [ "$rc" != 0 ]; then
    for f in "$TMP"/*.err "$TMP"/nginx/logs/error.log; do
      [ -s "$f" ] && { echo "--- ${f#"$TMP"/} (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS proxy $1: $2"; }
fail() { echo "FAIL proxy $1: $2"; FAILED=$((FAILED + 1)); }
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_ok() {
  local deadline=$(($(now_ms) + START_TIMEOUT * 1000))
  while [ "$(now_ms)" -lt "$deadline" ]; do
    kill -0 "$2" 2>/dev/null || return 1
    curl -skf -o /dev/null --max-time 2 "${@:3}" "$1" && return 0
    sleep 0.05
  done
  return 1
}

# --- prerequisites -------------------------------------------------------------
if ! command -v nginx >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's nginx"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx >/dev/null
  fi
fi
NGINX=$(command -v nginx || true)
[ -n "$NGINX" ] || { fail setup "nginx is not installed and cannot be (needs root and apt-get)"; exit 1; }
if ! command -v openssl >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssl >/dev/null || true
fi
command -v openssl >/dev/null || { fail setup "openssl is needed for the test certificate"; exit 1; }
echo "$("$NGINX" -v 2>&1)"

# --- fake upstream and two replicas ------------------------------------------------
python3 "$INTEROP/fake_upstream.py" --port 0 >"$TMP/upstream.out" 2>"$TMP/upstream.err" &
PIDS+=($!)
for _ in $(seq 1 $((START_TIMEOUT * 10))); do
  [ -s "$TMP/upstream.out" ] && break
  sleep 0.1
done
UPORT=$(head -n 1 "$TMP/upstream.out" || true)
[[ "$UPORT" =~ ^[0-9]+$ ]] || { fail start "fake upstream did not start"; exit 1; }
UP="http://127.0.0.1:$UPORT"

TLS_PORT=$(free_port)
HTTP_PORT=$(free_port)
REPLICA_PORTS=()
REPLICA_PIDS=()
for r in a b; do
  port=$(free_port)
  "$BIN" serve --listen "127.0.0.1:$port" --upstream "$UP" --syndication-url "" \
    --public-url "https://$PUBLIC_HOST" --trusted-proxies 127.0.0.1 \
    --rate-limit 1 --rate-burst 2 --cache-bytes 0 --workers 4 >"$TMP/xmd-$r.out" 2>"$TMP/xmd-$r.log" &
  PIDS+=($!)
  REPLICA_PORTS+=("$port")
  REPLICA_PIDS+=("$!")
done
for i in 0 1; do
  wait_ok "http://127.0.0.1:${REPLICA_PORTS[$i]}/healthz" "${REPLICA_PIDS[$i]}" \
    || { fail start "replica $i did not answer /healthz"; exit 1; }
done

# --- deploy/nginx.conf, made runnable here -----------------------------------------
mkdir -p "$TMP/nginx/logs" "$TMP/cache"
# Started as root, nginx's workers run as `nobody`: they must reach the
# cache and temp folders.
chmod 0755 "$TMP"
chmod 0777 "$TMP/cache" "$TMP/nginx"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$PUBLIC_HOST" \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1 \
  || { fail setup "openssl could not make a test certificate"; exit 1; }
python3 - "$EXAMPLE" "$TMP/xmd.conf" "$TLS_PORT" "$HTTP_PORT" "$TMP" \
  "${REPLICA_PORTS[0]}" "${REPLICA_PORTS[1]}" <<'PY'
import re, sys
src, dst, tls, http, tmp, a, b = sys.argv[1:]
text = open(src, encoding="utf-8").read()
subs = [
    (r"(?m)^\s*listen \[::\]:\d+.*\n", ""),
    (r"listen 443 ssl http2;", f"listen 127.0.0.1:{tls} ssl http2;"),
    (r"listen 80;", f"listen 127.0.0.1:{http};"),
    (r"/etc/letsencrypt/live/xmd\.example\.com/fullchain\.pem", f"{tmp}/cert.pem"),
    (r"/etc/letsencrypt/live/xmd\.example\.com/privkey\.pem", f"{tmp}/key.pem"),
    (r"/var/cache/nginx/xmd", f"{tmp}/cache"),
    (r"(?m)^(\s*)server 127\.0\.0\.1:8081 (.*)$", rf"\1server 127.0.0.1:{a} \2"),
    (r"(?m)^(\s*)server 127\.0\.0\.1:8082 (.*)$", rf"\1server 127.0.0.1:{b} \2"),
    (r"(?m)^\s*server 127\.0\.0\.1:8083 .*\n", ""),
]
for pattern, repl in subs:
    text, n = re.subn(pattern, repl, text)
    if n == 0:
        sys.exit(f"deploy/nginx.conf no longer has {pattern!r}")
open(dst, "w", encoding="utf-8").write(text)
PY
cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log warn;
events { worker_connections 256; }
http {
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  access_log $TMP/nginx/logs/access.log;
  include $TMP/xmd.conf;
}
EOF
if "$NGINX" -t -q -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx-t.err"; then
  pass config "nginx -t accepts deploy/nginx.conf ($("$NGINX" -v 2>&1 | sed 's/.*: //'))"
else
  fail config "nginx rejected deploy/nginx.conf: $(cat "$TMP/nginx-t.err")"
  exit 1
fi
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx.err" &
NGINX_PID=$!
PIDS+=($NGINX_PID)
LB="https://$PUBLIC_HOST:$TLS_PORT"
wait_ok "$LB/healthz" "$NGINX_PID" --resolve "$PUBLIC_HOST:$TLS_PORT:127.0.0.1" \
  || { fail start "nginx did not answer $LB/healthz"; exit 1; }

# --- the clients ---------------------------------------------------------------------
python3 - "$TLS_PORT" "$PUBLIC_HOST" "$POST_PATH" "$GETS" "$UP" >"$TMP/client.out" 2>"$TMP/client.err" <<'PY' || true
"""Two clients on distinct loopback source addresses, over HTTPS to nginx."""
import http.client, json, ssl, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor

port, host, post_path, gets, upstream = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
A, B = "127.0.0.2", "127.0.0.3"
# The GETs come from two more addresses: A has spent its tool-call buckets
# above, and the REST routes share those per-client buckets, so a GET from A
# that nginx forwards could rightly be refused with 429.
C, D = "127.0.0.4", "127.0.0.5"


def request(source, method, path, body=None, headers=None):
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20,
                                       source_address=(source, 0))
    h = {"Host": host}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def tool_call(source, i, extra=None):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "x_md_get_post",
        "arguments": {"url": "https://x.com/demo_author/status/2087208847298015232", "thread": "off"}}})
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "MCP-Protocol-Version": "2025-11-25"}
    headers.update(extra or {})
    status, _, data = request(source, "POST", "/mcp", body, headers)
    result = json.loads(data)["result"]
    text = result["content"][0]["text"]
    return "refused" if result.get("isError") and text.startswith("Too many tool calls") else (
        "answered" if not result.get("isError") else f"error: {text[:80]}")


out = {}
out["a"] = [tool_call(A, i) for i in range(6)]
out["b"] = [tool_call(B, 100 + i, {"X-Forwarded-For": A}) for i in range(2)]
# The GETs' upstream requests are counted from here.
urllib.request.urlopen(urllib.request.Request(upstream + "/__fake/reset", method="POST")).read()

with ThreadPoolExecutor(5) as pool:
    results = list(pool.map(lambda i: request(C if i % 2 else D, "GET", post_path), range(gets)))
out["get_statuses"] = sorted({s for s, _, _ in results})
out["cache_status"] = {}
for _, h, _ in results:
    k = h.get("x-cache-status", "none")
    out["cache_status"][k] = out["cache_status"].get(k, 0) + 1
etag = results[0][1].get("etag")
out["etag"] = etag
status, h, data = request(C, "GET", post_path, headers={"If-None-Match": etag or '"none"'})
out["conditional"] = [status, len(data)]
print(json.dumps(out))
PY
RESULT=$(tail -n 1 "$TMP/client.out" 2>/dev/null || true)
COUNTS=$(curl -s "$UP/__fake/requests")
sleep 0.3 # the replicas flush their access logs once per loop turn

python3 - "$RESULT" "$COUNTS" "$GETS" "$TMP/xmd-a.log" "$TMP/xmd-b.log" >"$TMP/verdict.out" <<'PY'
import json, re, sys
try:
    r = json.loads(sys.argv[1])
except Exception:
    print(f"FAIL client-address: the client printed no result: {sys.argv[1][:300]!r}")
    print("FAIL cache: no result")
    sys.exit(0)
counts, gets = json.loads(sys.argv[2]), int(sys.argv[3])
logs = "".join(open(f, encoding="utf-8").read() for f in sys.argv[4:6])
calls = [l for l in logs.splitlines() if " POST /mcp " in l]
clients = sorted({l.split(" ")[1] for l in calls})
vias = {m.group(1) for l in calls for m in [re.search(r" via=(\S+)", l)] if m}
a_ok, a_refused = r["a"].count("answered"), r["a"].count("refused")
problems = []
if (a_ok, a_refused) != (4, 2):
    problems.append(f"client A got {r['a']} (want 4 answered, 2 refused)")
if r["b"] != ["answered", "answered"]:
    problems.append(f"client B (forged X-Forwarded-For naming A) got {r['b']}")
if clients != ["127.0.0.2", "127.0.0.3"]:
    problems.append(f"access logs name clients {clients}")
if not vias or not all(v.startswith("127.0.0.1:") for v in vias):
    problems.append(f"access logs name proxies {sorted(vias)}")
summary = (f"client A {a_ok} answered/{a_refused} refused, client B {r['b'].count('answered')}/2 answered "
           f"despite a forged X-Forwarded-For; replica logs name clients {clients} via nginx")
print(("FAIL client-address: " + "; ".join(problems)) if problems else f"PASS client-address: {summary}")
fetches = counts.get("total")
problems = []
if r["get_statuses"] != [200]:
    problems.append(f"GET statuses {r['get_statuses']}")
if fetches != 1:
    problems.append(f"{fetches} upstream requests for {gets} GETs: {counts.get('paths')}")
if r["conditional"] != [304, 0]:
    problems.append(f"If-None-Match with the ETag got {r['conditional']}")
summary = (f"{gets} GETs through nginx, {fetches} upstream request ({counts.get('paths')}), "
           f"cache statuses {r['cache_status']}, If-None-Match {r['etag']} -> {r['conditional'][0]}")
print(("FAIL cache: " + "; ".join(problems) + f" ({summary})") if problems else f"PASS cache: {summary}")
PY
while read -r verdict rest; do
  check=${rest%%:*}
  if [ "$verdict" = PASS ]; then pass "$check" "${rest#*: }"; else fail "$check" "${rest#*: }"; fi
done <"$TMP/verdict.out"
[ -s "$TMP/client.err" ] && { echo "--- client stderr"; tail -n 20 "$TMP/client.err"; }
[ "$FAILED" = 0 ]
