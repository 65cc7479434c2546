#!/usr/bin/env bash
# Issue 32, item 3: the memory budget under a burst, against the release
# binary (a debug build is too slow for it). Runs tests/memory_budget.rs
# (ignored by `cargo test`; its test binary is the debug one the test phase
# built, the server it starts is XMD): 60 concurrent calls of the largest
# thread, then 30 posts of 3.9 MB; peak RSS within 128 MiB over idle, RSS
# back within 10 % 10 s after.
# Usage: memory-check.sh XMD_BINARY
set -uo pipefail
XMD=${1:?usage: memory-check.sh XMD_BINARY}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(XMD_BIN="$XMD" timeout 300 cargo test --test memory_budget -- --ignored --nocapture 2>&1)
rc=$?
line=$(printf '%s\n' "$out" | grep -E '^idle ' | tail -n 1)
if [ "$rc" = 0 ]; then
  echo "PASS memory: $line"
else
  printf '%s\n' "$out" | tail -n 30 >&2
  echo "FAIL memory: exit $rc; $line"
fi
