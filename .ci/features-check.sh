#!/usr/bin/env bash
# Fails when a dev-dependency changes the features of a crate the shipped
# binary links. Cargo unifies features across the graph it builds, so
# `cargo test` compiles the runtime crates with every feature a test-only
# crate asks for, and a test can pass on code the release build does not
# have. It happened: jsonschema turned on serde_json's `float_roundtrip`, so
# the tests read floats correctly while the binary did not.
#
# Compares, for every package of the normal dependency graph, its features
# without and with the dev-dependencies (`cargo tree`, no build). Prints one
# PASS or FAIL line; exits non-zero on FAIL.
#
# Differences that cannot change what the binary does are allowed, each
# named here with its reason:
#   xmd +fuzzing     the tests' own feature: exposes the fuzz harness
#                    module (src/fuzzing), nothing else reads it
#   memchr +default  memchr's `default` is `std`, already on
#   serde, serde_core +alloc  implied by `std`, already on
#   proc-macro2, quote, syn  code generators run by the compiler (serde's
#                    derive): extra parsing features, same generated code
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ALLOWED_PACKAGES=" proc-macro2 quote syn "
ALLOWED_FEATURES=" xmd:fuzzing memchr:default serde:alloc serde_core:alloc "

tree() {
  cargo tree --edges "$1" --prefix none -f '{p} [{f}]' 2>/dev/null | sed 's/ (\*)$//' | sort -u
}

normal=$(tree normal)
with_dev=$(tree normal,dev)
problems=()
packages=0
while read -r name version rest; do
  [ -n "$name" ] || continue
  packages=$((packages + 1))
  case "$ALLOWED_PACKAGES" in *" $name "*) continue ;; esac
  shipped=$(sed -n 's/.*\[\(.*\)\]$/\1/p' <<<"$rest" | tr ',' '\n' | sed '/^$/d' | sort -u)
  tested=$(grep -F "$name $version " <<<"$with_dev" | sed -n 's/.*\[\(.*\)\]$/\1/p' | tr ',' '\n' | sed '/^$/d' | sort -u)
  extra=$(comm -13 <(echo "$shipped") <(echo "$tested") | sed '/^$/d' || true)
  missing=$(comm -23 <(echo "$shipped") <(echo "$tested") | sed '/^$/d' || true)
  for f in $extra; do
    case "$ALLOWED_FEATURES" in *" $name:$f "*) continue ;; esac
    problems+=("$name $version: +$f in the tests only")
  done
  for f in $missing; do
    problems+=("$name $version: $f in the shipped build only")
  done
done <<<"$normal"

if [ "$packages" -lt 10 ]; then
  echo "FAIL features: cargo tree listed $packages packages of the normal graph; expected dozens"
  exit 1
fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'FAIL features: a dev-dependency changes what the tests build: %s\n' "$(IFS=';'; echo "${problems[*]}")"
  echo "Turn the feature on in [dependencies] (the shipped binary needs what the tests prove), or explain it in .ci/features-check.sh."
  exit 1
fi
echo "PASS features: $packages packages of the shipped build have the same features in the tests (allowed: xmd +fuzzing, memchr +default, serde and serde_core +alloc, the proc-macro crates)"
