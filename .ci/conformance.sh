#!/usr/bin/env bash
# Official MCP conformance suite against an xmd binary.
#
#   bash .ci/conformance.sh target/release/xmd
#
# Installs (once, cached in .ci/cache/conformance/) Node 22 from the npm
# registry (the `node` package ships a prebuilt binary; the suite needs
# fs.globSync, Node 22+) and @modelcontextprotocol/conformance at the pinned
# version. Starts BIN on a free loopback port with a closed loopback port as
# its upstream (no scenario needs X content: the suite's tool, resource and
# prompt fixtures are `test_*` / `test://…`, which xmd does not have), then
# runs the suite once per requirement set (2026-07-28 at the stateless wire,
# 2025-11-25 at the handshake wire) with -o output folders and the baseline
# .ci/conformance-baseline.yml. Prints each revision's check counts from the
# suite's summary and exits non-zero when either run fails: a check failing
# outside the baseline, or a baseline entry that now passes (stale).
#
# Nothing reaches the network except the npm registry during the install.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 PATH/TO/xmd" >&2
  exit 2
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if [ ! -x "$BIN" ]; then
  echo "conformance: $1 is not an executable" >&2
  exit 2
fi

# Pinned versions (issue 5; design/tooling.md §1).
NODE_PACKAGE="node@22"
SUITE_VERSION="0.2.0-alpha.12"
SUITE_PACKAGE="@modelcontextprotocol/conformance@$SUITE_VERSION"
REVISIONS=(2026-07-28 2025-11-25)
BASELINE="$ROOT/.ci/conformance-baseline.yml"
# Per-scenario timeout handed to the suite, in milliseconds.
SCENARIO_TIMEOUT_MS=30000
# Seconds to wait for xmd to answer /healthz.
START_TIMEOUT=30

DIR="$ROOT/.ci/cache/conformance"
NODE="$DIR/node_modules/.bin/node"
SUITE="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="${CONFORMANCE_OUT:-$DIR/out}"
export npm_config_cache="$ROOT/.ci/cache/npm"
export npm_config_update_notifier=false

install() {
  local have=""
  if [ -x "$NODE" ] && [ -f "$SUITE" ]; then
    have=$("$NODE" -e 'console.log(process.versions.node.split(".")[0] + " " + require(process.argv[1]).version)' \
      "$DIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || true)
  fi
  if [ "$have" = "22 $SUITE_VERSION" ]; then
    echo "conformance: cached in $DIR"
  else
    rm -rf "$DIR"
    mkdir -p "$DIR"
    printf '{"private":true}\n' >"$DIR/package.json"
    (cd "$DIR" && npm install --no-audit --no-fund --no-package-lock --loglevel=error \
      "$NODE_PACKAGE" "$SUITE_PACKAGE")
  fi
  echo "node $("$NODE" --version), $SUITE_PACKAGE"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

XMD_PID=""
LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/xmd-conformance.XXXXXX")
cleanup() {
  local rc=$?
  if [ -n "$XMD_PID" ] && kill -0 "$XMD_PID" 2>/dev/null; then
    kill "$XMD_PID" 2>/dev/null || true
    wait "$XMD_PID" 2>/dev/null || true
  fi
  rm -rf "$LOG_DIR"
  exit "$rc"
}
trap cleanup EXIT

start_xmd() {
  local attempt port upstream_port i
  for attempt in 1 2 3; do
    port=$(free_port)
    # A port that was free a moment ago and is not listened on: every
    # upstream request fails fast with "connection refused".
    upstream_port=$(free_port)
    "$BIN" serve --listen "127.0.0.1:$port" --upstream "http://127.0.0.1:$upstream_port" \
      --syndication-url "" --log-format off >"$LOG_DIR/xmd.out" 2>"$LOG_DIR/xmd.err" &
    XMD_PID=$!
    for i in $(seq 1 $((START_TIMEOUT * 10))); do
      if ! kill -0 "$XMD_PID" 2>/dev/null; then
        break
      fi
      if python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
        "http://127.0.0.1:$port/healthz" 2>/dev/null; then
        URL="http://127.0.0.1:$port/mcp"
        echo "xmd: $URL (pid $XMD_PID)"
        return 0
      fi
      sleep 0.1
    done
    echo "xmd did not come up on port $port (attempt $attempt)"
    tail -n 20 "$LOG_DIR/xmd.err" || true
    kill "$XMD_PID" 2>/dev/null || true
    wait "$XMD_PID" 2>/dev/null || true
    XMD_PID=""
  done
  return 1
}

install
start_xmd
rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/matched.txt"
FAILED_REVISIONS=()
SUMMARY=()
for rev in "${REVISIONS[@]}"; do
  echo
  echo "==> conformance --requirements $rev"
  log="$OUT/$rev.log"
  set +e
  "$NODE" "$SUITE" server --url "$URL" --requirements "$rev" \
    -o "$OUT/$rev" --timeout "$SCENARIO_TIMEOUT_MS" >"$log" 2>&1
  suite_rc=$?
  set -e
  # The verdict is ours, from each scenario's checks.json: a FAILURE in a
  # scored scenario must be in the baseline; WARNING and INFO are reported,
  # never failing (the suite's own --expected-failures counts warnings too,
  # and the one warning here, "no session id", is this product's contract).
  set +e
  python3 .ci/conformance_verdict.py verdict "$OUT/$rev" "$(dirname "$SUITE")/../requirements/$rev.yaml" "$BASELINE" "$OUT/matched.txt"
  rc=$?
  set -e
  # The summary, the not-scored list and the baseline verdict.
  sed -n '/=== SUMMARY ===/,$p' "$log"
  totals=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
  if [ -z "$totals" ]; then
    echo "--- no summary; last 40 lines of the run:"
    tail -n 40 "$log"
    totals="no summary"
  fi
  # Scored = the requirement set's `server:` list (the suite's own file).
  scored=$(python3 .ci/conformance_verdict.py scored "$log" "$(dirname "$SUITE")/../requirements/$rev.yaml")
  echo "$rev $scored"
  SUMMARY+=("$rev: ${totals#Total: } (all scenarios run); $scored; suite exit $suite_rc, verdict exit $rc")
  if [ "$rc" != 0 ]; then
    FAILED_REVISIONS+=("$rev")
  fi
done

# A baseline entry that failed in neither revision is stale: remove it.
stale=$(python3 .ci/conformance_verdict.py stale "$BASELINE" "$OUT/matched.txt")
if [ -n "$stale" ]; then
  echo "conformance: stale baseline entries (they pass now; remove them):"
  echo "$stale"
  FAILED_REVISIONS+=("stale-baseline")
fi

if ! kill -0 "$XMD_PID" 2>/dev/null; then
  echo "conformance: xmd exited during the run"
  tail -n 40 "$LOG_DIR/xmd.err" || true
  FAILED_REVISIONS+=("xmd-died")
fi

echo
echo "conformance results (checks, all scenarios run; output in $OUT):"
for line in "${SUMMARY[@]}"; do
  echo "  $line"
done
if [ ${#FAILED_REVISIONS[@]} -ne 0 ]; then
  echo "conformance: FAILED (${FAILED_REVISIONS[*]})"
  exit 1
fi
echo "conformance: passed (every failure is a baselined fixture gap)"
