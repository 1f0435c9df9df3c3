#!/usr/bin/env bash
# The whole test suite: install what is missing, build, then
#   ctest (cmocka unit tests)  ->  tests/fuzz/run.sh 30 (if present)
#   ->  tests/cli/*.sh build/bin/sbemu (if present)  ->  tests/k8s/test_chart.sh (the Helm chart)
#   ->  tests/e2e/run.sh (real SDKs)  ->  tests/faults/run.sh  ->  the same under ASan/UBSan
#   (unit tests and an e2e subset)  ->  the image (scripts/build-image.sh, tests/image/test_image.sh)
#   ->  tests/testcontainers/run.sh (the Testcontainers modules, image swapped)
#   ->  tests/k8s/test_replicas.sh (the chart under podman kube play)
# Exits non-zero if anything failed. The very last line is 'N passed, N failed'.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LOGDIR=$(mktemp -d /tmp/sbemu-test.XXXXXX)
start=$(date +%s)

passed=0
failed=0
summary=()
failed_logs=() # "name|log" of every part that failed, for the digest at the end

section() { printf '\n##### %s  (+%ss)\n' "$*" "$(($(date +%s) - start))"; }
add() { # name passed failed [log]
  passed=$((passed + $2))
  failed=$((failed + $3))
  summary+=("$(printf '%-30s %4d passed, %4d failed' "$1" "$2" "$3")")
  if (($3 > 0)) && [[ -n ${4:-} ]]; then failed_logs+=("$1|$4"); fi
}
# The lines of each failing part's log that say what failed, again at the end:
# a CI page that shows only the end of a long run still shows why it failed
# (a fuzz finding's report is otherwise some thousand lines up).
digest() {
  local entry name log
  ((${#failed_logs[@]} > 0)) || return 0
  section "what failed (from each failing part's log)"
  for entry in "${failed_logs[@]}"; do
    name=${entry%%|*} log=${entry#*|}
    echo "--- $name ($log)"
    # node --test marks a failed test with ✖ and prints its error as 'Name: text'
    # (an SDK's ServiceBusError or a plain Error matches nothing else here)
    grep -E -m 60 'FAIL|not ok|ERROR|SUMMARY|Assertion|Timeout|timed out|out-of-memory|reproducer|^ +#[0-9]+ 0x|✖|^ +[A-Za-z]*Error( \[[A-Z_]+\])?: ' "$log" | cut -c1-11000 # a reproducer of 8 KiB is ~11,000 characters of base64
  done
}
finish() {
  digest
  section "summary (logs in $LOGDIR)"
  printf '  %s\n' "${summary[@]}"
  echo "$passed passed, $failed failed"
  ((failed == 0 && passed > 0))
  exit
}

# Runs a command (output shown and logged) and counts it: its own last
# '[word: ]N passed, N failed' line if it prints one, else 1 passed or 1 failed by exit code.
counted() { # name command...
  local name=$1 log rc line p f
  shift
  log=$LOGDIR/$(printf %s "$name" | tr -c 'A-Za-z0-9_.-' '_').log
  "$@" < /dev/null 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [[ -n $line ]]; then
    p=$(sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
    f=$(sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/' <<<"$line")
    ((rc != 0 && f == 0)) && f=1
  elif ((rc == 0)); then p=1 f=0
  else p=0 f=1
  fi
  add "$name" "$p" "$f" "$log"
  return "$rc"
}

section "install-deps"
if ! ./scripts/install-deps.sh; then add install-deps 0 1; finish; fi

section "build"
if ! ./scripts/build.sh -DSBEMU_TESTS=ON 2>&1 | tee "$LOGDIR/build.log"; then
  echo "test.sh: the build failed, nothing else can run" >&2
  add build 0 1
  finish
fi
add build 1 0

section "ctest"
ctest --test-dir build --output-on-failure < /dev/null 2>&1 | tee "$LOGDIR/ctest.log"
rc=${PIPESTATUS[0]}
line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOGDIR/ctest.log" | tail -1)
if [[ -n $line ]]; then
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  f=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  add ctest $((total - f)) "$f" "$LOGDIR/ctest.log"
elif grep -q 'No tests were found' "$LOGDIR/ctest.log"; then
  # A build/ configured with -DSBEMU_TESTS=OFF (the image build's flag, kept in
  # CMake's cache) has no unit tests: that is a failure, not an empty success.
  echo "test.sh: ctest found no tests (is build/ configured with -DSBEMU_TESTS=OFF? rm -rf build)" >&2
  add ctest 0 1
else
  add ctest 0 1
fi

if [[ -x tests/fuzz/run.sh || -f tests/fuzz/run.sh ]]; then
  section "fuzz (tests/fuzz/run.sh 30)"
  counted fuzz timeout -k 10 600 bash tests/fuzz/run.sh 30
fi

shopt -s nullglob
cli_tests=(tests/cli/*.sh)
if ((${#cli_tests[@]})); then
  for t in "${cli_tests[@]}"; do
    section "cli: $t"
    counted "cli/$(basename "$t")" timeout -k 10 300 bash "$t" "$ROOT/build/bin/sbemu"
  done
fi

section "k8s: tests/k8s/test_chart.sh (the Helm chart, offline)"
counted k8s/test_chart.sh timeout -k 10 300 bash tests/k8s/test_chart.sh

section "e2e (tests/e2e/run.sh)"
counted e2e timeout -k 10 2700 bash tests/e2e/run.sh
# The story is on by default, and while it is recorded every statement runs
# as its story twin: the topic suites again with it off, for the plain
# publish and the plain claims of topic logs (sql/store_log.h).
section "e2e topics with the story off (topic logs)"
counted e2e/story-off env SBEMU_STORY=off timeout -k 10 600 bash tests/e2e/run.sh "topics"

section "faults: tests/faults/run.sh (crash cycles, postmaster kills, SIGTERM and a full disk, under load)"
counted faults timeout -k 10 600 bash tests/faults/run.sh 6

# AddressSanitizer, LeakSanitizer and UBSan (halting on the first report):
# the unit tests, and the e2e suites that feed the emulator hostile or broken
# input, a lost database and every settlement path.
ASAN_E2E="errors handshake raw_oversize garbage cbs_audience settle batch pg_outage websockets admin_raw sessions reset_snapshot metrics faults dashboard namespaces story topics_log"
section "asan: build-asan, ctest, e2e ($ASAN_E2E)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
if cmake -S . -B build-asan -DSBEMU_SANITIZE=ON -DSBEMU_TESTS=ON > "$LOGDIR/asan-build.log" 2>&1 &&
  cmake --build build-asan -j2 >> "$LOGDIR/asan-build.log" 2>&1; then
  add asan/build 1 0
  ctest --test-dir build-asan --output-on-failure < /dev/null 2>&1 | tee "$LOGDIR/asan-ctest.log"
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOGDIR/asan-ctest.log" | tail -1)
  if [[ -n $line ]]; then
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
    add asan/ctest $((total - f)) "$f" "$LOGDIR/asan-ctest.log"
  else
    add asan/ctest 0 1
  fi
  counted asan/e2e env SBEMU_BIN="$ROOT/build-asan/bin/sbemu" timeout -k 10 1200 bash tests/e2e/run.sh "$ASAN_E2E"
else
  tail -50 "$LOGDIR/asan-build.log"
  add asan/build 0 1
fi
unset UBSAN_OPTIONS ASAN_OPTIONS

# The container image and the chart run for real with podman (after e2e: they
# drive the SDKs installed there). A few minutes the first time, for the images.
section "image: scripts/build-image.sh"
counted image/build timeout -k 10 1200 bash scripts/build-image.sh sbemu:latest
section "image: tests/image/test_image.sh"
counted image/test_image.sh timeout -k 10 300 bash tests/image/test_image.sh sbemu:latest
section "testcontainers: tests/testcontainers/run.sh (the Java, Go and Node modules with sbemu's image)"
counted testcontainers timeout -k 10 1200 bash tests/testcontainers/run.sh
section "k8s: tests/k8s/test_replicas.sh (two replicas under podman kube play)"
counted k8s/test_replicas.sh timeout -k 10 900 bash tests/k8s/test_replicas.sh

finish
