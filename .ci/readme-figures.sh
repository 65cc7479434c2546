#!/usr/bin/env bash
# The README's figures about this build, recomputed from the build itself, so
# none is typed by hand (issue 30: the README said 2.9 MB and a 26.9 KB
# tools/list long after both had grown):
#
#   bash .ci/readme-figures.sh BIN [STATIC_BIN] [--write]
#
# A figure sits between markers in README.md, invisible when rendered:
#   <!-- fig:NAME -->TEXT<!-- /fig -->
# NAME is one of
#   tools-list-kb  the tools/list reply of BIN (JSON framing, MCP 2025-11-25),
#                  in KB of 1,000 bytes with one decimal, e.g. "46.5 KB"
#   static-mb      the size of STATIC_BIN (what .ci/static.sh builds and the
#                  image ships), in MB of 1,000,000 bytes with one decimal
# Each marker's text must equal the recomputed figure: PASS, or FAIL naming
# both and the command that rewrites them (this one with --write, which
# rewrites README.md in place). Without STATIC_BIN the size figures are
# reported as SKIP. Every marker name must be known (a typo fails).
set -euo pipefail

BIN=$(readlink -f "${1:?usage: readme-figures.sh BIN [STATIC_BIN] [--write]}")
STATIC_BIN=""
WRITE=0
for a in "${@:2}"; do
  case "$a" in
    --write) WRITE=1 ;;
    *) STATIC_BIN=$(readlink -f "$a") ;;
  esac
done
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
README="$ROOT/README.md"
# Seconds to wait for BIN to answer.
START_TIMEOUT=20

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BIN" serve --listen "127.0.0.1:$PORT" --upstream http://127.0.0.1:9 --syndication-url "" \
  >/dev/null 2>&1 &
XMD_PID=$!
trap 'kill "$XMD_PID" 2>/dev/null || true; wait "$XMD_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 $((START_TIMEOUT * 20))); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.05
done
LIST_BYTES=$(curl -sf -X POST "http://127.0.0.1:$PORT/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2025-11-25' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | wc -c)
STATIC_BYTES=""
if [ -n "$STATIC_BIN" ] && [ -f "$STATIC_BIN" ]; then
  STATIC_BYTES=$(stat -c %s "$STATIC_BIN")
fi

OUT=$(python3 - "$README" "$WRITE" "$LIST_BYTES" "$STATIC_BYTES" <<'PY'
import re, sys
path, write, list_bytes, static_bytes = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4]
figures = {"tools-list-kb": f"{list_bytes / 1000:.1f} KB" if list_bytes > 1000 else None}
figures["static-mb"] = f"{int(static_bytes) / 1e6:.1f} MB" if static_bytes else None
sources = {"tools-list-kb": f"tools/list reply {list_bytes:,} bytes",
           "static-mb": f"static binary {int(static_bytes):,} bytes" if static_bytes else "no static binary"}
text = open(path, encoding="utf-8").read()
marker = re.compile(r"<!-- fig:([a-z0-9-]+) -->(.*?)<!-- /fig -->")
wrong, right, skipped, unknown = [], [], set(), []
def fix(m):
    name, shown = m.group(1), m.group(2)
    if name not in figures:
        unknown.append(name)
        return m.group(0)
    want = figures[name]
    if want is None:
        skipped.add(name)
        return m.group(0)
    (right if shown == want else wrong).append((name, shown, want))
    return f"<!-- fig:{name} -->{want}<!-- /fig -->"
new = marker.sub(fix, text)
seen = {m.group(1) for m in marker.finditer(text)}
missing = sorted(set(figures) - seen)
if write and new != text:
    open(path, "w", encoding="utf-8").write(new)
if unknown or missing:
    print(f"FAIL readme-figures: unknown markers {unknown}, figures without a marker {missing}")
elif list_bytes <= 1000:
    print(f"FAIL readme-figures: tools/list answered {list_bytes} bytes (the server did not answer?)")
elif wrong and not write:
    print("FAIL readme-figures: README.md says " + "; ".join(f"{n} {s!r}, the build gives {w!r}" for n, s, w in wrong)
          + " (bash .ci/readme-figures.sh target/release/xmd STATIC_BIN --write rewrites them)")
else:
    done = "rewritten" if wrong else "as computed"
    print(f"PASS readme-figures: {len(right) + len(wrong)} README figures {done} ("
          + "; ".join(sources[n] for n in sorted(figures) if n not in skipped) + ")")
for n in sorted(skipped):
    print(f"SKIP readme-figures {n}: {sources[n]} given")
PY
)
echo "$OUT"
! grep -q '^FAIL' <<<"$OUT"
