#!/bin/sh
# Build every libFuzzer target (tests/fuzz/fuzz_*.c) with clang and run each
# for a bounded time, starting from its seed corpus (tests/fuzz/corpus/<name>,
# where fuzz_<name>.c is the target). Exits non-zero if any target crashes,
# leaks, times out on an input or fails to build.
#
# usage: tests/fuzz/run.sh [SECONDS_PER_TARGET]     (default 30)
# env:   SBEMU_FUZZ_BUILD  build directory (default <repo>/build-fuzz)
#
# New inputs found during the run go to a temporary directory, not into the
# seed corpus; crash reproducers are kept in $SBEMU_FUZZ_BUILD/fuzz-artifacts.
set -eu

SECONDS_PER_TARGET=${1:-30}
case $SECONDS_PER_TARGET in
'' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SBEMU_FUZZ_BUILD:-$ROOT/build-fuzz}
ARTIFACTS=$BUILD/fuzz-artifacts

targets=""
for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c)
    targets="$targets $name"
done
if [ -z "$targets" ]; then
    echo "fuzz: no targets in tests/fuzz"
    exit 0
fi

echo "fuzz: building$targets in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_C_COMPILER=clang -DSBEMU_FUZZ=ON >/dev/null
# shellcheck disable=SC2086 # one argument per target
cmake --build "$BUILD" -j2 --target $targets >/dev/null

# UBSan only prints and carries on by default: a finding must stop the run
# and leave its reproducer like any crash.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
failed=0
total=0
for name in $targets; do
    total=$((total + 1))
    corpus=$work/$name
    mkdir -p "$corpus" "$ARTIFACTS/$name"
    seeds=$ROOT/tests/fuzz/corpus/${name#fuzz_}
    if [ -d "$seeds" ]; then
        cp "$seeds"/* "$corpus"/ 2>/dev/null || true
    fi
    log=$work/$name.log
    echo "fuzz: $name for ${SECONDS_PER_TARGET}s"
    if "$BUILD/bin/$name" -max_total_time="$SECONDS_PER_TARGET" -timeout=25 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$name/" "$corpus" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz: $name clean (${runs:-?} runs)"
    else
        failed=$((failed + 1))
        echo "fuzz: $name FAILED; last lines of its log:"
        tail -n 40 "$log"
        echo "fuzz: reproducers in $ARTIFACTS/$name/"
        # A CI machine's files are gone after the run: small reproducers go
        # into the log itself (base64 -d > crash, then $BUILD/bin/$name crash).
        for f in "$ARTIFACTS/$name"/*; do
            [ -f "$f" ] && [ "$(wc -c <"$f")" -le 8192 ] || continue
            echo "fuzz: reproducer $(basename "$f") (base64): $(base64 -w0 "$f")"
        done
    fi
done

echo "fuzz: $total targets, $failed failed"
[ "$failed" -eq 0 ]
