#!/usr/bin/env bash
# Builds the shipped static serving binary; the one build command of
# .ci/static.sh (musl path) and deploy/Dockerfile:
#
#   bash deploy/build-static.sh [TARGET [CARGO_ARGS...]]
#
# TARGET defaults to x86_64-unknown-linux-musl; CARGO_ARGS go to `cargo
# build` (.ci/static.sh builds `--bin panic_isolation --features
# isolation-check` with them).
#
# The serving build: `--no-default-features --features mimalloc,tls`, i.e.
# everything but `xmd client` (the `client` feature, ~100 KB of code); in it
# `xmd client` prints why and exits 2. XMD_STATIC_FEATURES=full builds with the
# default features instead (to measure what the client costs).
#
# Toolchain: nightly when it is installed with rust-src and the target (then
# std is rebuilt for size: -Zbuild-std with panic_unwind but without std's
# backtrace printer, optimize_for_size, -Zlocation-detail=none; see
# deploy/README.md "Binary size"), else stable with the same features, which
# gives a larger binary (deploy/README.md has both sizes). XMD_TOOLCHAIN=stable
# skips nightly. Only the musl target takes the nightly path.
#
# cargo's output goes to stderr; the last stdout line is the binary's path
# (relative to the repository root) and the line before it the toolchain.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGET=${1:-x86_64-unknown-linux-musl}
shift || true
FEATURES=(--no-default-features --features mimalloc,tls)
if [ "${XMD_STATIC_FEATURES:-serve}" = full ]; then
  FEATURES=()
fi

nightly_ready() {
  [ "$TARGET" = x86_64-unknown-linux-musl ] || return 1
  [ "${XMD_TOOLCHAIN:-}" != stable ] || return 1
  local sysroot
  sysroot=$(rustc +nightly --print sysroot 2>/dev/null) || return 1
  [ -d "$sysroot/lib/rustlib/src/rust/library/std" ] || return 1
  # The target's self-contained musl (crt objects, libc.a) comes with its
  # rust-std component.
  [ -d "$sysroot/lib/rustlib/$TARGET/lib" ]
}

# -C link-arg=-lgcc: mimalloc's C calls __popcountdi2, which the prebuilt
# std brought along and the rebuilt one does not.
# -C link-arg=-Wl,-z,pack-relative-relocs: the static-pie's relocations as
# RELR (musl >= 1.2.4 applies them at start), 70 KB less than RELA.
# A nightly that cannot build this (the -Z flags are unstable) falls back to
# stable, and the toolchain line says so.
if nightly_ready \
  && RUSTFLAGS="-Zlocation-detail=none -C link-arg=-lgcc -C link-arg=-Wl,-z,pack-relative-relocs" \
    cargo +nightly build --profile dist --locked --target "$TARGET" "${FEATURES[@]}" \
    -Zbuild-std=std,panic_unwind -Zbuild-std-features=panic-unwind,optimize_for_size "$@" >&2; then
  echo "toolchain: nightly ($(rustc +nightly -V)), std rebuilt for size"
else
  cargo build --profile dist --locked --target "$TARGET" "${FEATURES[@]}" "$@" >&2
  echo "toolchain: stable ($(rustc -V)); nightly with rust-src and the $TARGET target gives the smaller binary"
fi
echo "target/$TARGET/dist/xmd"
