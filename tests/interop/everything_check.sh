#!/usr/bin/env bash
# Checks `xmd client` against a running @modelcontextprotocol/server-everything
# (streamable HTTP, a 2025-era server with sessions).
#
# Usage: everything_check.sh URL XMD_BINARY
#   URL         e.g. http://127.0.0.1:3001/mcp (already running, loopback only)
#   XMD_BINARY  path to the xmd binary
#
# What it checks, per command: the exit code; the stdout content; and, from
# the client's --verbose trace, that auto mode probed server/discover, fell
# back to initialize, received an Mcp-Session-Id, sent it on every later
# request, and ended the session with DELETE (answered 2xx).
# Exits 0 when every check passes, 1 otherwise; prints what it observed.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 URL XMD_BINARY" >&2
  exit 2
fi
URL=$1
XMD=$2
FAILED=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*"; FAILED=1; }
pass() { echo "ok:   $*"; }

# run NAME EXPECTED_RC ARGS...: runs `xmd client --url URL -v ARGS`, keeping
# stdout in $WORK/NAME.out and the trace in $WORK/NAME.err.
run() {
  local name=$1 want=$2
  shift 2
  "$XMD" client --url "$URL" --timeout 20 -v "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$name: exit code $rc, expected $want"
    sed 's/^/      /' "$WORK/$name.err" | tail -n 5
    return 1
  fi
  pass "$name: exit code $rc"
  return 0
}

# session_checks NAME: the trace of one invocation shows the legacy session
# lifecycle. Prints what it saw.
session_checks() {
  local name=$1 err="$WORK/$1.err"
  local sid
  sid=$(sed -n 's/.*< 200 [^ ]* Mcp-Session-Id: \([^ ]*\)$/\1/p' "$err" | head -n 1)
  if grep -q '> POST .* server/discover ' "$err" && grep -q '> POST .* initialize \[\]' "$err"; then
    pass "$name: probed server/discover, then fell back to initialize"
  else
    fail "$name: expected a server/discover probe followed by initialize"
  fi
  if [ -z "$sid" ]; then
    fail "$name: no Mcp-Session-Id on the initialize reply"
    return
  fi
  echo "      session id: $sid"
  # Every POST after initialize carries the session id.
  local later missing
  later=$(grep '> POST' "$err" | grep -v ' server/discover \| initialize \[\]' || true)
  missing=$(printf '%s\n' "$later" | grep -v "Mcp-Session-Id: $sid" | grep -c '> POST' || true)
  if [ -n "$later" ] && [ "$missing" -eq 0 ]; then
    pass "$name: $(printf '%s\n' "$later" | grep -c '> POST') later POSTs all carried Mcp-Session-Id"
  else
    fail "$name: $missing later POSTs lacked Mcp-Session-Id $sid"
  fi
  if grep -q "> DELETE .*Mcp-Session-Id: $sid" "$err"; then
    local status
    status=$(grep -A1 '> DELETE' "$err" | sed -n 's/.*< \([0-9]*\)$/\1/p' | head -n 1)
    case "$status" in
      2??|405) pass "$name: DELETE sent with the session id, answered $status" ;;
      *) fail "$name: DELETE answered '${status:-nothing}'" ;;
    esac
  else
    fail "$name: no DELETE with the session id"
  fi
}

echo "== xmd client against $URL"

if run initialize 0 initialize; then
  grep -q '"era": "legacy"' "$WORK/initialize.out" && pass "initialize: era legacy" \
    || fail "initialize: era is not legacy: $(tr -d '\n' <"$WORK/initialize.out" | head -c 300)"
  grep -q '"sessionId": "' "$WORK/initialize.out" && pass "initialize: sessionId reported" \
    || fail "initialize: no sessionId in the output"
  echo "      protocol: $(sed -n 's/.*"protocolVersion": "\([^"]*\)".*/\1/p' "$WORK/initialize.out")"
  session_checks initialize
fi

if run tools 0 tools; then
  n=$(grep -c '^      "name": ' "$WORK/tools.out" || true)
  grep -q '"name": "echo"' "$WORK/tools.out" && pass "tools: echo listed ($n tools)" \
    || fail "tools: no echo tool"
  session_checks tools
fi

if run call 0 call echo message=hi --text; then
  got=$(cat "$WORK/call.out")
  if [ "$got" = "Echo: hi" ]; then
    pass "call echo: printed '$got'"
  else
    fail "call echo: printed '$got', expected 'Echo: hi'"
  fi
  session_checks call
fi

if run ping 0 ping; then
  [ "$(tr -d ' \n' <"$WORK/ping.out")" = "{}" ] && pass "ping: {}" || fail "ping: printed $(cat "$WORK/ping.out")"
fi

if run resources 0 resources; then
  uri=$(sed -n 's/^      "uri": "\([^"]*\)".*/\1/p' "$WORK/resources.out" | head -n 1)
  n=$(grep -c '^      "uri": ' "$WORK/resources.out" || true)
  if [ -n "$uri" ]; then
    pass "resources: $n listed, first $uri"
    if run read 0 read "$uri" --text; then
      [ -s "$WORK/read.out" ] && pass "read: $(wc -c <"$WORK/read.out") bytes of text" \
        || fail "read: empty text"
    fi
  else
    fail "resources: none listed"
  fi
  session_checks resources
fi

run templates 0 templates && grep -q '"uriTemplate": ' "$WORK/templates.out" \
  && pass "templates: listed" || fail "templates: none listed"

# A JSON-RPC error (unknown method) must exit 3 with the error on stdout.
if run rpc_unknown 3 rpc no/such/method; then
  grep -q '"code": -32601' "$WORK/rpc_unknown.out" && pass "rpc unknown method: -32601" \
    || fail "rpc unknown method: $(tr -d '\n' <"$WORK/rpc_unknown.out")"
fi

if [ "$FAILED" -ne 0 ]; then
  echo "== FAILED"
  exit 1
fi
echo "== all checks passed"
