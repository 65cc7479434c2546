#!/usr/bin/env bash
# Runs `xmd probe` against one server in both eras with HTTP/1.1 framing
# (desync payloads included) and its baseline, for .ci/run's probe phase.
#
# Usage: probe_check.sh NAME URL XMD_BINARY BASELINE OUT_DIR [PROBE_ARGS...]
#
# Prints `PASS probe-NAME: ...` when the probe exits 0 (no fail or warn
# beyond the baseline; --fail-on should), `FAIL probe-NAME: ...` otherwise,
# with the unexpected results; the text, JSON, JUnit and SARIF reports are
# left in OUT_DIR/probe-NAME.{txt,json,xml,sarif}.
set -u
if [ $# -lt 5 ]; then
  echo "usage: $0 NAME URL XMD_BINARY BASELINE OUT_DIR [PROBE_ARGS...]" >&2
  exit 2
fi
NAME=$1 URL=$2 XMD=$3 BASELINE=$4 OUT=$5
shift 5
BASE=(probe "$URL" --era both --framing full --baseline "$BASELINE" --fail-on should --seed 29 "$@")
rc=0
"$XMD" "${BASE[@]}" --format json --out "$OUT/probe-$NAME.json" 2>"$OUT/probe-$NAME.err" || rc=$?
"$XMD" "${BASE[@]}" --format text --out "$OUT/probe-$NAME.txt" 2>/dev/null || true
"$XMD" "${BASE[@]}" --format junit --out "$OUT/probe-$NAME.xml" 2>/dev/null || true
"$XMD" "${BASE[@]}" --format sarif --out "$OUT/probe-$NAME.sarif" 2>/dev/null || true
summary=$(python3 - "$OUT/probe-$NAME.json" <<'PY' 2>/dev/null || echo "no JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
o = r["summary"]["overall"]
base = sum(1 for c in r["checks"] if c["baselined"])
print(f'{",".join(r["revisionsTested"])}: MUST {o["mustPassed"]}/{o["mustApplicable"]}, '
      f'{o["pass"]} pass, {o["fail"]} fail, {o["warn"]} warn ({base} expected by the baseline), '
      f'{o["skip"]} skip, {o["inconclusive"]} inconclusive, {r["requests"]} requests')
PY
)
if [ "$rc" = 0 ]; then
  echo "PASS probe-$NAME: $summary"
else
  echo "FAIL probe-$NAME: exit $rc; $summary"
  sed 's/^/      /' "$OUT/probe-$NAME.err" | head -n 20
fi
exit "$rc"
