#!/usr/bin/env bash
# N stateless replicas behind a load balancer, proved: Debian's nginx on
# loopback in front of two xmd processes, the official Python MCP SDK making
# 50 calls through it, one replica killed (SIGKILL, a crash) mid-run, and
# every call still answered.
#
#   bash .ci/replicas-check.sh BIN
#
# nginx runs with a private prefix and config under a temp dir (never the
# system one) and is installed with apt-get when missing (root only). The
# client is the Python SDK from the CI venv (.ci/cache/py, made by .ci/run's
# installs phase; XMD_PY overrides the interpreter).
#
# nginx's config mirrors deploy/nginx.conf: an upstream block with keepalive
# (closed by nginx before the replicas' idle timeout), HTTP/1.1 to the
# replicas, and
#   proxy_next_upstream error timeout;
# so a replica that refuses or stalls is skipped, and nothing else counts as
# its failure (issue 30: xmd's own 502 for a post FxTwitter fails took every
# replica out). A POST that reached the killed replica is not sent to the
# other one (no `non_idempotent`): nginx answers it 502 and the client, which
# knows its calls are read-only, sends it again; a POST whose connection
# failed before it was sent moves to the survivor without the client's help.
#
# Host: the replicas listen on loopback, where xmd only accepts a loopback
# Host or the --public-url host. Each replica runs with --public-url set to
# the load balancer's URL (so self links and resource URIs name the balancer,
# as in production) and nginx forwards the client's Host unchanged.
#
# Checks (one PASS/FAIL line each; exit status 1 on any FAIL):
#   start     fake upstream, two replicas and nginx answer
#   calls     50 SDK calls (tools/list and tools/call, 5 in flight), all answered
#             (a call in flight on the killed replica, at most 5, sent again
#             once by the client)
#   spread    both replicas served calls before the kill (round robin)
#   failover  the killed replica is gone and the survivor answered the rest
# with timings. Everything started here is stopped on exit.
set -euo pipefail

BIN=$(readlink -f "${1:?usage: replicas-check.sh BIN}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
INTEROP="$ROOT/tests/interop"
PY=${XMD_PY:-$ROOT/.ci/cache/py/bin/python}
# Seconds to wait for a started process to answer.
START_TIMEOUT=20
# Calls the client makes, how many are in flight at once, and after how many
# answers the second replica is killed.
CALLS=50
CONCURRENCY=5
KILL_AFTER=20
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-replicas.XXXXXX")
PIDS=()
FAILED=0
T_START=$(date +%s%3N)

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

pass() { echo "PASS replicas $1: $2"; }
fail() { echo "FAIL replicas $1: $2"; FAILED=$((FAILED + 1)); }
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# wait_ok URL PID: polls URL until it answers 2xx, or PID dies, or time runs out.
wait_ok() {
  local deadline=$(($(now_ms) + START_TIMEOUT * 1000))
  while [ "$(now_ms)" -lt "$deadline" ]; do
    kill -0 "$2" 2>/dev/null || return 1
    curl -sf -o /dev/null --max-time 2 "$1" && return 0
    sleep 0.02
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
if [ -z "$NGINX" ]; then
  fail setup "nginx is not installed and cannot be (needs root and apt-get)"
  exit 1
fi
if ! "$PY" -c 'import mcp' 2>/dev/null; then
  fail setup "no Python MCP SDK at $PY (run .ci/run's installs phase, or set XMD_PY)"
  exit 1
fi
echo "$("$NGINX" -v 2>&1); python SDK mcp $("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))')"

# --- fake upstream, two replicas, nginx ------------------------------------------
python3 "$INTEROP/fake_upstream.py" --port 0 >"$TMP/upstream.out" 2>"$TMP/upstream.err" &
PIDS+=($!)
for _ in $(seq 1 $((START_TIMEOUT * 10))); do
  [ -s "$TMP/upstream.out" ] && break
  sleep 0.1
done
UPORT=$(head -n 1 "$TMP/upstream.out" || true)
if ! [[ "$UPORT" =~ ^[0-9]+$ ]]; then
  fail start "fake upstream did not start"
  exit 1
fi

LB_PORT=$(free_port)
LB="http://127.0.0.1:$LB_PORT"
REPLICA_PORTS=()
REPLICA_PIDS=()
for r in a b; do
  port=$(free_port)
  "$BIN" serve --listen "127.0.0.1:$port" --upstream "http://127.0.0.1:$UPORT" \
    --syndication-url "" --public-url "$LB" --workers 4 >"$TMP/xmd-$r.out" 2>"$TMP/xmd-$r.err" &
  pid=$!
  PIDS+=($pid)
  REPLICA_PORTS+=("$port")
  REPLICA_PIDS+=("$pid")
done
for i in 0 1; do
  if ! wait_ok "http://127.0.0.1:${REPLICA_PORTS[$i]}/healthz" "${REPLICA_PIDS[$i]}"; then
    fail start "replica $i (port ${REPLICA_PORTS[$i]}) did not answer /healthz"
    exit 1
  fi
done

mkdir -p "$TMP/nginx/logs"
cat >"$TMP/nginx/nginx.conf" <<EOF
# Private instance for this check; the production example is deploy/nginx.conf.
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
  log_format lb '\$request_method \$uri \$status up=[\$upstream_addr] up_status=[\$upstream_status] t=\$request_time';
  access_log $TMP/nginx/logs/access.log lb;

  upstream xmd {
    server 127.0.0.1:${REPLICA_PORTS[0]} max_fails=1 fail_timeout=30s;
    server 127.0.0.1:${REPLICA_PORTS[1]} max_fails=1 fail_timeout=30s;
    keepalive 16;
    keepalive_timeout 30s;
  }
  server {
    listen 127.0.0.1:$LB_PORT;
    location / {
      proxy_pass http://xmd;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_connect_timeout 2s;
      proxy_read_timeout 30s;
      proxy_buffering off;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 2;
      proxy_next_upstream_timeout 10s;
    }
  }
}
EOF
"$NGINX" -t -q -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx-t.err" \
  || { fail start "nginx rejected its config: $(cat "$TMP/nginx-t.err")"; exit 1; }
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx.err" &
NGINX_PID=$!
PIDS+=($NGINX_PID)
if ! wait_ok "$LB/healthz" "$NGINX_PID"; then
  fail start "nginx did not answer $LB/healthz"
  exit 1
fi
: >"$TMP/nginx/logs/access.log"
T_UP=$(now_ms)
pass start "upstream :$UPORT, replicas :${REPLICA_PORTS[0]} (pid ${REPLICA_PIDS[0]}) and :${REPLICA_PORTS[1]} (pid ${REPLICA_PIDS[1]}), nginx $LB, all up in $((T_UP - T_START)) ms"

# --- the client ------------------------------------------------------------------
set +e
# The braces' 2>/dev/null silences bash's own "Killed" notice for the replica
# the client kills (the client's stderr goes to its log file).
{ "$PY" - "$LB/mcp" "$CALLS" "$CONCURRENCY" "$KILL_AFTER" "${REPLICA_PIDS[1]}" \
  "$INTEROP/fixtures/status-plain.json" >"$TMP/client.out" 2>"$TMP/client.err" <<'PY'
"""50 calls through the balancer with the official SDK; kills one replica mid-run."""
import asyncio, json, os, signal, sys, time

from mcp import Client

url, calls, concurrency, kill_after, victim = sys.argv[1], *map(int, sys.argv[2:6])
with open(sys.argv[6], encoding="utf-8") as f:
    post_text = json.load(f)["status"]["text"]
POST_URL = "https://x.com/demo_author/status/2087208847298015232"
TOOLS = {"x_md_get_post", "x_md_get_profile", "x_md_search_posts",
         "x_md_get_followers", "x_md_get_following", "x_md_get_quotes",
         "x_md_get_reposts", "x_md_get_trends"}


async def main():
    answered, errors, latencies, resent = 0, [], [], 0
    killed_at = None
    queue = asyncio.Queue()
    for i in range(calls):
        queue.put_nowait(i)
    t0 = time.monotonic()
    # Half the calls on a 2026-07-28 client (the SDK default), half on a
    # 2025-11-25 one (initialize handshake), over the same balancer.
    async with Client(url, read_timeout_seconds=20) as modern, \
            Client(url, mode="legacy", read_timeout_seconds=20) as legacy:
        version = f"{modern.protocol_version} and {legacy.protocol_version}"

        async def one(i):
            client = modern if i % 4 < 2 else legacy
            start = time.monotonic()
            if i % 2 == 0:
                names = {t.name for t in (await client.list_tools()).tools}
                ok = names == TOOLS
                what = f"tools/list gave {sorted(names)}"
            else:
                r = await client.call_tool("x_md_get_post", {"url": POST_URL, "thread": "off"})
                text = "\n".join(c.text for c in r.content if getattr(c, "type", None) == "text")
                ok = not r.is_error and post_text in text
                what = f"tools/call isError={r.is_error} text={text[:120]!r}"
            latencies.append(time.monotonic() - start)
            return ok, what

        async def worker():
            nonlocal answered, killed_at, resent
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    ok, what = await one(i)
                except Exception:  # unanswered: in flight on the killed replica?
                    resent += 1
                    try:
                        ok, what = await one(i)
                    except Exception as e:  # unanswered twice
                        ok, what = False, f"{type(e).__name__}: {e}"
                if ok:
                    answered += 1
                else:
                    errors.append(f"call {i}: {what}")
                if answered + len(errors) == kill_after and killed_at is None:
                    os.kill(victim, signal.SIGKILL)  # calls are in flight right now
                    killed_at = time.monotonic() - t0

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    total = time.monotonic() - t0
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000 if latencies else 0
    worst = latencies[-1] * 1000 if latencies else 0
    print(json.dumps({"version": version, "answered": answered, "errors": errors, "resent": resent,
                      "killed_at_ms": round((killed_at or 0) * 1000),
                      "total_ms": round(total * 1000), "p50_ms": round(p50, 1),
                      "max_ms": round(worst, 1)}))


asyncio.run(main())
PY
  CLIENT_RC=$?
  case "$(ps -o stat= -p "${REPLICA_PIDS[1]}" || true)" in
    Z*) wait "${REPLICA_PIDS[1]}" ;;
  esac
} 2>/dev/null
set -e
T_DONE=$(now_ms)

RESULT=$(tail -n 1 "$TMP/client.out" 2>/dev/null || true)
if ! msg=$(python3 - "$RESULT" "$CALLS" "$CONCURRENCY" <<'PY'
import json, sys
try:
    r = json.loads(sys.argv[1])
except Exception:
    print(f"the client printed no result: {sys.argv[1][:300]!r}"); sys.exit(1)
calls = int(sys.argv[2])
line = (f"{r['answered']}/{calls} answered correctly (protocol {r['version']}; {r['resent']} sent again by "
        f"the client after nginx's 502 for a call in flight on the killed replica), replica killed at "
        f"{r['killed_at_ms']} ms, total {r['total_ms']} ms, p50 {r['p50_ms']} ms, max {r['max_ms']} ms")
if r["answered"] != calls or r["errors"] or r["resent"] > int(sys.argv[3]):
    print(line + "; " + "; ".join(r["errors"][:5])); sys.exit(1)
print(line)
PY
); then
  fail calls "${msg} (client exit $CLIENT_RC)"
else
  pass calls "$msg"
fi

# --- what the balancer saw -----------------------------------------------------
A="127.0.0.1:${REPLICA_PORTS[0]}"
B="127.0.0.1:${REPLICA_PORTS[1]}"
# A SIGKILLed child is a zombie until reaped: count "Z" as gone.
KILLED_GONE=1
case "$(ps -o stat= -p "${REPLICA_PIDS[1]}" 2>/dev/null || true)" in
  "" | Z*) ;;
  *) KILLED_GONE=0 ;;
esac
python3 - "$TMP/nginx/logs/access.log" "$A" "$B" "$KILLED_GONE" >"$TMP/verdict.out" <<'PY'
import re, sys
log, a, b, gone = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
rows = []
for line in open(log, encoding="utf-8"):
    m = re.search(r" (\d{3}) up=\[(.*?)\] up_status=\[(.*?)\]", line)
    if m:
        rows.append((int(m.group(1)), [u.strip() for u in m.group(2).replace(" : ", ", ").split(",")]))
def served_by(addr):
    return sum(1 for _, ups in rows if ups[-1] == addr)
retried = sum(1 for _, ups in rows if len(ups) > 1)
last_b = max((i for i, (_, ups) in enumerate(rows) if ups[-1] == b), default=-1)
after = rows[last_b + 1:]
# nginx's own 502 for a request in flight on b when it died: allowed (not
# retried, by design); any other 5xx is not.
lost = [s for s, ups in rows if s == 502 and ups == [b]]
bad = [s for s, ups in rows if s >= 500 and not (s == 502 and ups == [b])]
summary = (f"{len(rows)} HTTP requests: {served_by(a)} answered by replica a, {served_by(b)} by b, "
           f"{retried} retried on the other replica, {len(lost)} lost with the killed replica "
           f"(nginx 502), {len(bad)} other 5xx to the client")
if served_by(a) and served_by(b):
    print(f"PASS spread: {summary}")
else:
    print(f"FAIL spread: one replica served nothing ({summary})")
problems = []
if not gone:
    problems.append("the killed replica is still running")
if not after or any(ups[-1] != a for _, ups in after):
    problems.append("after the kill, requests did not all go to the survivor")
if bad:
    problems.append(f"statuses >= 500 reached the client: {bad}")
if problems:
    print("FAIL failover: " + "; ".join(problems))
else:
    print(f"PASS failover: replica b killed mid-run; replica a answered the {len(after)} requests after b's last answer")
PY
while read -r verdict rest; do
  check=${rest%%:*}
  if [ "$verdict" = PASS ]; then pass "$check" "${rest#*: }"; else fail "$check" "${rest#*: }"; fi
done <"$TMP/verdict.out"
if ! grep -q . "$TMP/verdict.out"; then
  fail failover "could not read nginx's access log"
fi

echo "timings: setup $((T_UP - T_START)) ms, client run $((T_DONE - T_UP)) ms, total $(($(now_ms) - T_START)) ms"
[ "$FAILED" = 0 ]
