#!/usr/bin/env bash
# A fleet one bad post cannot take down, sharing one upstream cache (issue
# 30, items 1 and 2), on Debian's nginx:
#
#   bash .ci/fleet-check.sh BIN
#
# Part 1, deploy/nginx.conf as shipped (ports, a throw-away TLS certificate
# and the cache folder swapped in, as .ci/proxy-check.sh does) in front of
# three replicas (the file's three server lines) and a plain fake FxTwitter
# (tests/interop/fake_upstream.py) that answers 500 for post
# 2086000000000000500:
#   bad-post   20 GETs of that post sent to one replica directly cost the
#              fake D requests; the same 20 GETs through nginx, interleaved
#              with 50 tool calls of good posts (5 in flight), cost it no
#              more than D, every one of them is xmd's own 502
#              (application/problem+json), and nginx's log shows no request
#              tried on a second replica
#   good-calls all 50 tool calls answer 200 from a replica with the post (no
#              nginx 502, no "no live upstreams")
# Part 2, deploy/nginx-fleet-cache.conf as shipped (listen port, the two API
# hosts' addresses, the CA file and the cache folder swapped in) in front of
# the fake speaking TLS with a certificate for api.fxtwitter.com and
# cdn.syndication.twimg.com, answering after 200 ms; four replicas with
# --upstream http://<proxy> and no cache of their own (--cache-bytes 0):
#   fleet-cache 200 tools/calls of 10 distinct posts spread over the four
#              replicas (first 40 at once: each post on every replica, then
#              8 in flight) make exactly 10 requests reach the fake, each
#              with Host and TLS server name api.fxtwitter.com
#   syndication a tool call of the post FxTwitter fails makes a replica
#              (--syndication-url http://<proxy>/syndication) ask X's
#              endpoint through the proxy: the fake gets /tweet-result?id=...
#              with Host and server name cdn.syndication.twimg.com
# One PASS/FAIL line each; exit status 1 on any FAIL. nginx runs with private
# prefixes (never the system one) and is installed with apt-get when missing
# (root only). Everything started here is stopped on exit.
set -euo pipefail

BIN=$(readlink -f "${1:?usage: fleet-check.sh BIN}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
INTEROP="$ROOT/tests/interop"
BALANCER_CONF="$ROOT/deploy/nginx.conf"
CACHE_CONF="$ROOT/deploy/nginx-fleet-cache.conf"
# Seconds to wait for a started process to answer.
START_TIMEOUT=20
PUBLIC_HOST=xmd.example.com
# The post the fake answers 500 for, and the 10 good posts of part 2
# (the fake serves ids 2087208847298016000-099).
BAD_ID=2086000000000000500
BAD_GETS=20
GOOD_CALLS=50
FLEET_CALLS=200
FLEET_POSTS=10
FLEET_REPLICAS=4
# Each fake answer in part 2 waits this long, so concurrent misses overlap.
FLEET_DELAY_MS=200
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-fleet.XXXXXX")
PIDS=()
FAILED=0

cleanup() {
  local rc=$? pid f
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$FAILED" != 0 ] || [ "$rc" != 0 ]; then
    for f in "$TMP"/*.err "$TMP"/*/logs/error.log; do
      [ -s "$f" ] && { echo "--- ${f#"$TMP"/} (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS fleet $1: $2"; }
fail() { echo "FAIL fleet $1: $2"; FAILED=$((FAILED + 1)); }
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
# start_fake NAME ARGS...: starts a fake upstream, prints its port.
start_fake() {
  local name=$1
  shift
  python3 "$INTEROP/fake_upstream.py" --port 0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  PIDS+=($!)
  for _ in $(seq 1 $((START_TIMEOUT * 10))); do
    [ -s "$TMP/$name.out" ] && break
    sleep 0.1
  done
  head -n 1 "$TMP/$name.out"
}
# start_nginx DIR CONF: nginx with prefix DIR including CONF in its http
# block, access log DIR/logs/access.log in the `fleet` format.
start_nginx() {
  local dir=$1 conf=$2
  mkdir -p "$dir/logs"
  chmod 0777 "$dir"
  cat >"$dir/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 512; }
http {
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  log_format fleet '\$request_method \$request_uri \$status up=[\$upstream_addr] up_status=[\$upstream_status] cache=\$upstream_cache_status ct=[\$sent_http_content_type]';
  access_log $dir/logs/access.log fleet;
  include $conf;
}
EOF
  if ! "$NGINX" -t -q -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx-t.err"; then
    return 1
  fi
  "$NGINX" -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx.err" &
  PIDS+=($!)
  NGINX_PID=$!
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
command -v openssl >/dev/null || { fail setup "openssl is needed for the test certificates"; exit 1; }
echo "$("$NGINX" -v 2>&1)"
chmod 0755 "$TMP"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$PUBLIC_HOST" \
  -keyout "$TMP/lb-key.pem" -out "$TMP/lb-cert.pem" >/dev/null 2>&1 \
  && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=api.fxtwitter.com" \
    -addext "subjectAltName=DNS:api.fxtwitter.com,DNS:cdn.syndication.twimg.com" \
    -keyout "$TMP/api-key.pem" -out "$TMP/api-cert.pem" >/dev/null 2>&1 \
  || { fail setup "openssl could not make the test certificates"; exit 1; }
chmod 0644 "$TMP"/*.pem

# === part 1: deploy/nginx.conf and a post FxTwitter fails =========================
UPORT=$(start_fake plain || true)
[[ "$UPORT" =~ ^[0-9]+$ ]] || { fail start "the plain fake upstream did not start"; exit 1; }
UP="http://127.0.0.1:$UPORT"
REPLICA_PORTS=()
for r in a b c; do
  port=$(free_port)
  "$BIN" serve --listen "127.0.0.1:$port" --upstream "$UP" --syndication-url "" \
    --public-url "https://$PUBLIC_HOST" --trusted-proxies 127.0.0.1 \
    --rate-limit 0 --upstream-budget 0 --workers 4 >"$TMP/xmd-$r.out" 2>"$TMP/xmd-$r.err" &
  PIDS+=($!)
  wait_ok "http://127.0.0.1:$port/healthz" "$!" || { fail start "replica $r did not answer /healthz"; exit 1; }
  REPLICA_PORTS+=("$port")
done
TLS_PORT=$(free_port)
HTTP_PORT=$(free_port)
mkdir -p "$TMP/lb-cache"
chmod 0777 "$TMP/lb-cache"
python3 - "$BALANCER_CONF" "$TMP/xmd.conf" "$TLS_PORT" "$HTTP_PORT" "$TMP" "${REPLICA_PORTS[@]}" <<'PY'
import re, sys
src, dst, tls, http, tmp, a, b, c = sys.argv[1:]
text = open(src, encoding="utf-8").read()
subs = [
    (r"(?m)^\s*listen \[::\]:\d+.*\n", ""),
    (r"listen 443 ssl http2;", f"listen 127.0.0.1:{tls} ssl http2;"),
    (r"listen 80;", f"listen 127.0.0.1:{http};"),
    (r"/etc/letsencrypt/live/xmd\.example\.com/fullchain\.pem", f"{tmp}/lb-cert.pem"),
    (r"/etc/letsencrypt/live/xmd\.example\.com/privkey\.pem", f"{tmp}/lb-key.pem"),
    (r"/var/cache/nginx/xmd", f"{tmp}/lb-cache"),
    (r"(?m)^(\s*)server 127\.0\.0\.1:8081 (.*)$", rf"\1server 127.0.0.1:{a} \2"),
    (r"(?m)^(\s*)server 127\.0\.0\.1:8082 (.*)$", rf"\1server 127.0.0.1:{b} \2"),
    (r"(?m)^(\s*)server 127\.0\.0\.1:8083 (.*)$", rf"\1server 127.0.0.1:{c} \2"),
]
for pattern, repl in subs:
    text, n = re.subn(pattern, repl, text)
    if n == 0:
        sys.exit(f"deploy/nginx.conf no longer has {pattern!r}")
open(dst, "w", encoding="utf-8").write(text)
PY
if ! start_nginx "$TMP/lb" "$TMP/xmd.conf"; then
  fail config "nginx rejected deploy/nginx.conf: $(cat "$TMP/lb/nginx-t.err")"
  exit 1
fi
wait_ok "https://$PUBLIC_HOST:$TLS_PORT/healthz" "$NGINX_PID" --resolve "$PUBLIC_HOST:$TLS_PORT:127.0.0.1" \
  || { fail start "nginx (deploy/nginx.conf) did not answer /healthz"; exit 1; }
: >"$TMP/lb/logs/access.log"

python3 - "$TLS_PORT" "$PUBLIC_HOST" "${REPLICA_PORTS[0]}" "$UP" "$BAD_ID" "$BAD_GETS" "$GOOD_CALLS" \
  >"$TMP/part1.out" 2>"$TMP/part1.err" <<'PY' || true
"""20 GETs of a failing post to one replica, then through nginx among 50 tool calls."""
import http.client, json, random, ssl, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor

port, host, replica, upstream, bad_id = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
bad_gets, good_calls = int(sys.argv[6]), int(sys.argv[7])
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
BAD_PATH = f"/demo_author/status/{bad_id}"


def fake(path, method="GET"):
    return json.loads(urllib.request.urlopen(urllib.request.Request(upstream + path, method=method)).read())


def bad_requests():
    return sum(n for p, n in fake("/__fake/requests")["paths"].items() if bad_id in p)


def request(tls, method, path, body=None, headers=None):
    if tls:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
        h = {"Host": host}
    else:
        conn = http.client.HTTPConnection("127.0.0.1", replica, timeout=30)
        h = {"Host": f"127.0.0.1:{replica}"}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, (r.getheader("Content-Type") or ""), data


out = {}
fake("/__fake/reset", "POST")
direct = [request(False, "GET", BAD_PATH) for _ in range(bad_gets)]
out["direct_statuses"] = sorted({s for s, _, _ in direct})
out["direct_cost"] = bad_requests()

fake("/__fake/reset", "POST")
jobs = [("bad", i) for i in range(bad_gets)] + [("good", i) for i in range(good_calls)]
random.Random(30).shuffle(jobs)


def run(job):
    kind, i = job
    if kind == "bad":
        s, ct, data = request(True, "GET", BAD_PATH)
        return kind, i, s, ct, data[:200].decode("utf-8", "replace")
    pid = f"20872088472980160{i % 10:02d}"
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "x_md_get_post",
        "arguments": {"url": f"https://x.com/demo_author/status/{pid}", "thread": "off"}}})
    s, ct, data = request(True, "POST", "/mcp", body, {
        "Content-Type": "application/json", "Accept": "application/json",
        "MCP-Protocol-Version": "2025-11-25"})
    verdict = "not json"
    if ct.startswith("application/json"):
        try:
            result = json.loads(data)["result"]
            text = result["content"][0]["text"]
            verdict = "ok" if not result.get("isError") and pid in text else f"isError: {text[:100]}"
        except Exception as e:
            verdict = f"bad body: {e!r}"
    return kind, i, s, ct, verdict


with ThreadPoolExecutor(5) as pool:
    results = list(pool.map(run, jobs))
out["lb_cost"] = bad_requests()
bad = [r for r in results if r[0] == "bad"]
good = [r for r in results if r[0] == "good"]
out["bad_answers"] = sorted({f"{s} {ct}" for _, _, s, ct, _ in bad})
out["good_ok"] = sum(1 for _, _, s, ct, v in good if s == 200 and v == "ok")
out["good_failures"] = [f"call {i}: {s} {ct} {v}" for _, i, s, ct, v in good if not (s == 200 and v == "ok")][:5]
print(json.dumps(out))
PY
sleep 0.3
python3 - "$(tail -n 1 "$TMP/part1.out" 2>/dev/null || true)" "$TMP/lb/logs/access.log" "$BAD_ID" \
  "$BAD_GETS" "$GOOD_CALLS" >"$TMP/verdict1.out" <<'PY'
import json, re, sys
try:
    r = json.loads(sys.argv[1])
except Exception:
    print(f"FAIL bad-post: the client printed no result: {sys.argv[1][:300]!r}")
    print("FAIL good-calls: no result")
    sys.exit(0)
log, bad_id, bad_gets, good_calls = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rows = []
for line in open(log, encoding="utf-8"):
    m = re.match(r"(\S+) (\S+) (\d{3}) up=\[(.*?)\] up_status=\[(.*?)\]", line)
    if m:
        rows.append((m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5)))
retried = [f"{m} {u} up={a}" for m, u, _, a, _ in rows if "," in a or " : " in a]
no_replica = [f"{m} {u} {s}" for m, u, s, a, _ in rows if s >= 500 and a in ("", "-")]
served_by = sorted({a for *_, a, _ in rows if a not in ("", "-")})
problems = []
if r["direct_statuses"] != [502]:
    problems.append(f"direct GETs of the failing post answered {r['direct_statuses']} (want xmd's 502)")
if r["direct_cost"] == 0:
    problems.append("the direct GETs cost the fake nothing (the fake does not fail the post?)")
if r["lb_cost"] > r["direct_cost"]:
    problems.append(f"through nginx the failing post cost {r['lb_cost']} upstream requests, directly {r['direct_cost']}")
if r["bad_answers"] != ["502 application/problem+json"]:
    problems.append(f"the failing post's answers through nginx: {r['bad_answers']} (want only xmd's 502 problem)")
if retried:
    problems.append(f"{len(retried)} requests tried on a second replica: {retried[:3]}")
summary = (f"{bad_gets} GETs of post {bad_id} (FxTwitter 500): {r['direct_cost']} upstream requests sent to one "
           f"replica directly, {r['lb_cost']} through deploy/nginx.conf among {good_calls} tool calls; "
           f"answers {r['bad_answers']}; {len(retried)} of {len(rows)} requests tried on a second replica")
print(("FAIL bad-post: " + "; ".join(problems) + f" ({summary})") if problems else f"PASS bad-post: {summary}")
problems = []
if r["good_ok"] != good_calls:
    problems.append(f"{r['good_ok']}/{good_calls} good calls answered: {r['good_failures']}")
if no_replica:
    problems.append(f"nginx answered {len(no_replica)} requests itself with 5xx: {no_replica[:3]}")
summary = (f"{r['good_ok']}/{good_calls} tool calls of good posts answered 200 with the post by "
           f"{len(served_by)} replicas, none by nginx itself")
print(("FAIL good-calls: " + "; ".join(problems)) if problems else f"PASS good-calls: {summary}")
PY

# === part 2: deploy/nginx-fleet-cache.conf and four replicas =======================
FPORT=$(start_fake tls --tls-cert "$TMP/api-cert.pem" --tls-key "$TMP/api-key.pem" \
  --delay-ms "$FLEET_DELAY_MS" || true)
[[ "$FPORT" =~ ^[0-9]+$ ]] || { fail start "the TLS fake upstream did not start"; exit 1; }
CPORT=$(free_port)
mkdir -p "$TMP/fleet-cache"
chmod 0777 "$TMP/fleet-cache"
python3 - "$CACHE_CONF" "$TMP/fleet.conf" "$CPORT" "$FPORT" "$TMP" <<'PY'
import re, sys
src, dst, cport, fport, tmp = sys.argv[1:]
text = open(src, encoding="utf-8").read()
subs = [
    (r"listen 127\.0\.0\.1:8090;", f"listen 127.0.0.1:{cport};"),
    (r"server api\.fxtwitter\.com:443;", f"server 127.0.0.1:{fport};"),
    (r"server cdn\.syndication\.twimg\.com:443;", f"server 127.0.0.1:{fport};"),
    (r"/etc/ssl/certs/ca-certificates\.crt", f"{tmp}/api-cert.pem"),
    (r"/var/cache/nginx/xmd-upstream", f"{tmp}/fleet-cache"),
]
for pattern, repl in subs:
    text, n = re.subn(pattern, repl, text)
    if n == 0:
        sys.exit(f"deploy/nginx-fleet-cache.conf no longer has {pattern!r}")
open(dst, "w", encoding="utf-8").write(text)
PY
if ! start_nginx "$TMP/cache" "$TMP/fleet.conf"; then
  fail config "nginx rejected deploy/nginx-fleet-cache.conf: $(cat "$TMP/cache/nginx-t.err")"
  exit 1
fi
CACHE_PID=$NGINX_PID
sleep 0.3
kill -0 "$CACHE_PID" 2>/dev/null || { fail start "nginx (deploy/nginx-fleet-cache.conf) did not start"; exit 1; }
PROXY="http://127.0.0.1:$CPORT"
FLEET_PORTS=()
for r in $(seq 1 "$FLEET_REPLICAS"); do
  port=$(free_port)
  "$BIN" serve --listen "127.0.0.1:$port" --upstream "$PROXY" --syndication-url "$PROXY/syndication" \
    --cache-bytes 0 --rate-limit 0 --upstream-budget 0 --workers 16 \
    >"$TMP/fleet-$r.out" 2>"$TMP/fleet-$r.err" &
  PIDS+=($!)
  wait_ok "http://127.0.0.1:$port/healthz" "$!" || { fail start "fleet replica $r did not answer /healthz"; exit 1; }
  FLEET_PORTS+=("$port")
done
curl -sk -X POST "https://127.0.0.1:$FPORT/__fake/reset" >/dev/null
: >"$TMP/cache/logs/access.log"

python3 - "$FLEET_CALLS" "$FLEET_POSTS" "${FLEET_PORTS[@]}" >"$TMP/part2.out" 2>"$TMP/part2.err" <<'PY' || true
"""200 tool calls of 10 posts over the replicas: first every post on every replica at once."""
import http.client, json, sys, threading
from concurrent.futures import ThreadPoolExecutor

calls, posts, ports = int(sys.argv[1]), int(sys.argv[2]), [int(p) for p in sys.argv[3:]]


def call(job):
    i, port, n = job
    pid = f"20872088472980160{n:02d}"
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "x_md_get_post",
        "arguments": {"url": f"https://x.com/demo_author/status/{pid}", "thread": "off"}}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/mcp", body=body, headers={
        "Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
        "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    try:
        result = json.loads(data)["result"]
        text = result["content"][0]["text"]
        ok = r.status == 200 and not result.get("isError") and pid in text
        return "ok" if ok else f"call {i}: {r.status} {text[:100]}"
    except Exception as e:
        return f"call {i}: {r.status} {data[:100]!r} ({e!r})"


first = [(i, ports[i % len(ports)], (i // len(ports)) % posts) for i in range(posts * len(ports))]
rest = [(i, ports[i % len(ports)], (i * 7 + i // 3) % posts) for i in range(len(first), calls)]
gate = threading.Barrier(len(first))


def at_once(job):
    gate.wait()
    return call(job)


with ThreadPoolExecutor(len(first)) as pool:
    results = list(pool.map(at_once, first))
with ThreadPoolExecutor(8) as pool:
    results += list(pool.map(call, rest))
print(json.dumps({"ok": results.count("ok"), "first_wave": len(first),
                  "failures": [r for r in results if r != "ok"][:5]}))
PY
COUNTS=$(curl -sk "https://127.0.0.1:$FPORT/__fake/requests")
# The fallback's path through the proxy: a post FxTwitter fails makes a
# replica ask X's endpoint (--syndication-url $PROXY/syndication), which must
# get /tweet-result with its own Host and server name (the fake answers 404).
curl -sk -X POST "https://127.0.0.1:$FPORT/__fake/reset" >/dev/null
SYN_STATUS=$(curl -s -o "$TMP/syn.json" -w '%{http_code}' -X POST "http://127.0.0.1:${FLEET_PORTS[0]}/mcp" \
  -H 'Content-Type: application/json' -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2025-11-25' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{"url":"https://x.com/demo_author/status/'"$BAD_ID"'","thread":"off"}}}' || true)
SYN_TEXT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["content"][0]["text"][:160])' "$TMP/syn.json" 2>/dev/null || true)
SYN_COUNTS=$(curl -sk "https://127.0.0.1:$FPORT/__fake/requests")
sleep 0.3
python3 - "$(tail -n 1 "$TMP/part2.out" 2>/dev/null || true)" "$COUNTS" "$SYN_STATUS" "$SYN_COUNTS" \
  "$TMP/cache/logs/access.log" "$FLEET_CALLS" "$FLEET_POSTS" "$FLEET_REPLICAS" "$BAD_ID" "$SYN_TEXT" \
  >"$TMP/verdict2.out" <<'PY'
import json, re, sys
try:
    r = json.loads(sys.argv[1])
except Exception:
    print(f"FAIL fleet-cache: the client printed no result: {sys.argv[1][:300]!r}")
    r = None
counts, syn_status, syn = json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
log, calls, posts, replicas = sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
bad_id, syn_text = sys.argv[9], sys.argv[10]
statuses = {}
for line in open(log, encoding="utf-8"):
    m = re.search(r" cache=(\S+)", line)
    if m:
        statuses[m.group(1)] = statuses.get(m.group(1), 0) + 1
if r is not None:
    problems = []
    if r["ok"] != calls:
        problems.append(f"{r['ok']}/{calls} calls answered with their post: {r['failures']}")
    if counts["total"] != posts or len(counts["paths"]) != posts or set(counts["paths"].values()) != {1}:
        problems.append(f"{counts['total']} requests reached the fake (want {posts}, one per post): {counts['paths']}")
    if counts["hosts"] != {"api.fxtwitter.com": counts["total"]}:
        problems.append(f"Host headers at the fake: {counts['hosts']}")
    if counts["sni"] != {"api.fxtwitter.com": counts["total"]}:
        problems.append(f"TLS server names at the fake: {counts['sni']}")
    summary = (f"{r['ok']}/{calls} tool calls of {posts} posts over {replicas} replicas without caches of their own "
               f"(first {r['first_wave']} at once) -> {counts['total']} requests to the fake FxTwitter over TLS "
               f"(Host and SNI {sorted(counts['sni'])}); the proxy's cache statuses {statuses}")
    print(("FAIL fleet-cache: " + "; ".join(problems) + f" ({summary})") if problems else f"PASS fleet-cache: {summary}")
x = [p for p in syn["paths"] if p.startswith(f"/tweet-result?id={bad_id}&token=")]
fx = [p for p in syn["paths"] if p.startswith("/2/")]
hosts = {"api.fxtwitter.com": sum(syn["paths"][p] for p in fx), "cdn.syndication.twimg.com": sum(syn["paths"][p] for p in x)}
ok = (syn_status == "200" and len(x) == 1 and fx and len(x) + len(fx) == len(syn["paths"])
      and syn["hosts"] == hosts and syn["sni"] == hosts)
detail = (f"tool call of post {bad_id} (FxTwitter 500) -> {syn_status} {syn_text[:80]!r}; the fake saw {syn['paths']}, "
          f"Host {syn['hosts']}, SNI {syn['sni']}")
print(f"PASS syndication: {detail}" if ok else f"FAIL syndication: {detail}")
PY

while read -r verdict rest; do
  check=${rest%%:*}
  if [ "$verdict" = PASS ]; then pass "$check" "${rest#*: }"; else fail "$check" "${rest#*: }"; fi
done < <(cat "$TMP/verdict1.out" "$TMP/verdict2.out")
for f in part1 part2; do
  [ -s "$TMP/$f.err" ] && { echo "--- $f client stderr"; tail -n 20 "$TMP/$f.err"; }
done
[ "$FAILED" = 0 ]
