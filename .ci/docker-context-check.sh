#!/usr/bin/env bash
# The Dockerfile's build stage builds from its own context, proved without a
# Docker engine:
#
#   bash .ci/docker-context-check.sh
#
# Reads deploy/Dockerfile's build stage (from the first FROM to the next), copies
# exactly what its COPY lines name (nothing else of the repository) into an
# empty folder, and runs the stage's `cargo build ...` command there. A file
# the build needs but the stage does not COPY (a bench target, a fixture an
# `include_str!` reads) fails the build, as it would in `docker build`.
#
# The build uses the repository's target directory (CARGO_TARGET_DIR) so the
# dependencies .ci/static.sh already built are reused; only xmd itself is
# compiled again (the copies get fresh mtimes, so cargo cannot
# take xmd as already built). When the musl target or a musl C compiler is missing (no
# root, no rustup), the same command runs with the gnu target instead and the
# PASS line says so. Prints one `PASS docker-context: ...` or
# `FAIL docker-context: ...` line; exit status 1 on FAIL.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DOCKERFILE=${XMD_DOCKERFILE:-$ROOT/deploy/Dockerfile}
# Seconds the build may take (a cold dist build with LTO on 2 cores is ~5 min).
BUILD_TIMEOUT=1200
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xmd-docker-context.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
CTX="$TMP/src"
mkdir -p "$CTX"

fail() { echo "FAIL docker-context: $*"; exit 1; }

# The build stage: lines after the first FROM up to the next FROM, with
# backslash continuations joined.
STAGE=$(awk '
  /^FROM /{ n++; next }
  n == 1 { print }
' "$DOCKERFILE" | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}')

copied=()
while read -r line; do
  # COPY [--flags] SRC... DEST (shell form only; DEST relative to WORKDIR /src)
  read -r -a words <<<"${line#COPY }"
  args=()
  for w in "${words[@]}"; do
    case "$w" in --from=*) fail "the build stage copies from another stage: $line" ;; --*) ;; *) args+=("$w") ;; esac
  done
  [ "${#args[@]}" -ge 2 ] || fail "cannot read: $line"
  dest=${args[-1]}
  unset 'args[-1]'
  case "$dest" in /src/*) dest=${dest#/src/} ;; /*) fail "COPY outside WORKDIR /src: $line" ;; esac
  for src in "${args[@]}"; do
    [ -e "$ROOT/$src" ] || fail "COPY names $src, which is not in the repository"
    if [ "${#args[@]}" -gt 1 ] || [[ "$dest" == */ ]]; then
      mkdir -p "$CTX/$dest"
      cp -r "$ROOT/$src" "$CTX/$dest/"
    else
      mkdir -p "$(dirname "$CTX/$dest")"
      cp -r "$ROOT/$src" "$CTX/$dest"
    fi
    copied+=("$src")
  done
done < <(printf '%s\n' "$STAGE" | grep -E '^COPY ')
[ "${#copied[@]}" -gt 0 ] || fail "no COPY line in the build stage of deploy/Dockerfile"
grep -q '^WORKDIR /src$' <<<"$STAGE" || fail "the build stage's WORKDIR is not /src (this check assumes it)"

# The build command of the RUN line: from `cargo build` or `bash
# deploy/build-static.sh` (the script .ci/static.sh runs too) up to the
# first `&&`.
CMD=$(printf '%s\n' "$STAGE" | grep -E '^RUN .*(cargo build|bash deploy/build-static\.sh)' \
  | sed -e 's/.*\(cargo build[^&]*\|bash deploy\/build-static\.sh[^&]*\).*/\1/' -e 's/ *$//' | head -n 1)
[ -n "$CMD" ] || fail "no RUN line with cargo build or bash deploy/build-static.sh in the build stage"
read -r -a CARGO_ARGS <<<"$CMD"

MUSL=x86_64-unknown-linux-musl
note=""
if ! rustup target list --installed 2>/dev/null | grep -qx "$MUSL" \
  || ! { command -v musl-gcc >/dev/null || command -v x86_64-linux-musl-gcc >/dev/null; }; then
  CARGO_ARGS=("${CARGO_ARGS[@]/$MUSL/x86_64-unknown-linux-gnu}")
  note=" (musl target or musl-gcc missing here: ran with --target x86_64-unknown-linux-gnu)"
fi

T0=$(date +%s)
if ! (cd "$CTX" && CARGO_TARGET_DIR="$ROOT/target" CARGO_TERM_COLOR=never \
  timeout "$BUILD_TIMEOUT" "${CARGO_ARGS[@]}") >"$TMP/build.log" 2>&1; then
  tail -n 30 "$TMP/build.log"
  fail "\`${CARGO_ARGS[*]}\` failed in a folder holding only ${copied[*]}$note"
fi
echo "PASS docker-context: \`${CARGO_ARGS[*]}\` built in a folder holding only ${copied[*]} in $(($(date +%s) - T0)) s$note"
