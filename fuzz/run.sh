#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS (default 60) and fails on any
# crash or property violation. Installs cargo-fuzz into a local root when
# missing. Usage: fuzz/run.sh [SECONDS]   (env: FUZZ_TARGETS, CARGO_FUZZ_ROOT,
# FUZZ_TOOLCHAIN, FUZZ_JOBS_LOG)
#        fuzz/run.sh --install   only installs cargo-fuzz (CI starts this in
#                                the background while it waits on the network)
set -euo pipefail

INSTALL_ONLY=0
if [ "${1:-}" = --install ]; then
    INSTALL_ONLY=1
    shift
fi
SECONDS_PER_TARGET="${1:-60}"
FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$FUZZ_DIR")"
ROOT="${CARGO_FUZZ_ROOT:-$REPO/.ci/cache/cargo-root}"
TARGETS="${FUZZ_TARGETS:-http_conn header_b64 mcp_dispatch chunked render syndication expand upstream_reader}"
CARGO_FUZZ_VERSION=0.13.2

export PATH="$ROOT/bin:$PATH"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "installing cargo-fuzz $CARGO_FUZZ_VERSION into $ROOT"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --root "$ROOT"
fi
if [ "$INSTALL_ONLY" = 1 ]; then
    echo "fuzz: $(cargo-fuzz --version) in $ROOT/bin"
    exit 0
fi

# Nightly gives AddressSanitizer (the cargo-fuzz default); without nightly,
# stable works with the sanitizer switched off (`-s none`), coverage kept.
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    TOOLCHAIN="$FUZZ_TOOLCHAIN"
elif rustup run nightly rustc --version >/dev/null 2>&1; then
    TOOLCHAIN=nightly
else
    TOOLCHAIN=stable
fi
SANITIZER=()
if [ "$TOOLCHAIN" != nightly ]; then
    SANITIZER=(-s none)
fi
echo "fuzz: toolchain $TOOLCHAIN ${SANITIZER[*]:-(ASan)}, ${SECONDS_PER_TARGET}s per target"

cd "$FUZZ_DIR"
cargo "+$TOOLCHAIN" fuzz build "${SANITIZER[@]}"

status=0
summary=""
for t in $TARGETS; do
    mkdir -p "corpus/$t" "artifacts/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    log="artifacts/$t/run.log"
    set +e
    cargo "+$TOOLCHAIN" fuzz run "${SANITIZER[@]}" "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
        -rss_limit_mb=2048 -timeout=10 >"$log" 2>&1
    rc=$?
    set -e
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "fuzz: $t FAILED (rc $rc); log: fuzz/$log"
        grep -E "panicked at|^(assertion|  left|  right)|SUMMARY|Test unit written" "$log" | head -20 || true
    fi
    summary+="$(printf '%-13s rc=%-3s execs=%s' "$t" "$rc" "${execs:-?}")"$'\n'
done
printf '%s' "$summary"
if [ -n "${FUZZ_JOBS_LOG:-}" ]; then
    printf '%s' "$summary" >>"$FUZZ_JOBS_LOG"
fi
exit "$status"
