#!/usr/bin/env bash
# usage: benches/callgrind_miss.sh BIN
#
# Counts user-space instructions per call of the xmd binary BIN with
# callgrind: a profile cache miss (bench row (b)), the same against a
# one-post account (b1), a cache hit (c) and tools/list (a), each as
# (I(N2) - I(N1)) / (N2 - N1) over two `xmd serve` runs under
# `valgrind --tool=callgrind` against the fake upstream of benches/xmd_bench.rs
# (benches/support/mod.rs), N1 = 20 and N2 = 220 calls. Prints a Markdown
# table. BIN may be any build (release, dist, the static musl one, another
# worktree's); the fake upstream's bodies come from this checkout's
# tests/fixtures.
#
# Compiles benches/callgrind_miss.rs with plain rustc into a temporary
# directory (std only, a few seconds; no cargo, no dev-dependencies).
# Needs valgrind and rustc. Environment: CALLGRIND_ROWS=list,miss,tiny,hit,
# CALLGRIND_N1, CALLGRIND_N2, CALLGRIND_OUT=DIR (keep the callgrind outputs
# there for callgrind_annotate; default a temporary directory).
set -euo pipefail

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
  if [[ $# -eq 1 ]]; then usage; else usage >&2; fi
  [[ $# -eq 1 ]] && exit 0 || exit 2
fi
[[ -f $1 && -x $1 ]] || { echo "callgrind_miss: $1 is not an executable" >&2; exit 2; }
BIN=$(realpath "$1")
command -v valgrind >/dev/null || { echo "callgrind_miss: valgrind not on PATH (apt-get install valgrind)" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CARGO_MANIFEST_DIR=$ROOT rustc --edition 2021 -O --crate-name callgrind_miss \
  -o "$WORK/callgrind_miss" "$ROOT/benches/callgrind_miss.rs"
export CALLGRIND_OUT=${CALLGRIND_OUT:-$WORK/out}
"$WORK/callgrind_miss" "$BIN"
