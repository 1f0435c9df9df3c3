#!/usr/bin/env bash
# The Java SDK suite: com.azure:azure-messaging-servicebus (proton-j + reactor, its version fixed
# by com.azure:azure-sdk-bom in pom.xml) with JUnit 5 through Maven Surefire, against
# build/bin/sbemu (or $SBEMU_BIN). Each test class gets a fresh emulator of its own
# (EmulatorExtension); classes run one at a time in one JVM.
#   tests/e2e/java/run.sh [FILTER]   FILTER: substrings of test class names, space-separated,
#                                    case-sensitive (e.g. "Admin", "Session Transaction")
# Maven's local repository is the default ~/.m2 (cache it in CI); Maven runs in batch mode.
# Prints 'java: N passed, N failed' last (N counted per test; a skipped test or a class that
# failed outside its tests counts as failed); exits 1 if anything failed or nothing ran.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
REPO=$(cd ../../.. && pwd)
export SBEMU_BIN=${SBEMU_BIN:-$REPO/build/bin/sbemu}
FILTER=${1:-}
MVN=(mvn -B -ntp)

fail() { echo "java e2e: $*" >&2; echo "java: 0 passed, 1 failed"; exit 1; }

# The toolchain, from Debian's packages when missing (JDK 17 and Maven 3.8 in bookworm).
if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "java e2e: installing openjdk-17-jdk-headless and maven from Debian"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null; }; then
    fail "no javac/mvn and apt-get could not install openjdk-17-jdk-headless maven"
  fi
fi
jv=$(javac -version 2>&1 | sed -E 's/^javac ([0-9]+).*/\1/')
[[ $jv =~ ^[0-9]+$ ]] && ((jv >= 17)) || fail "javac $jv is too old: the suite needs Java 17 or newer"

[[ -x $SBEMU_BIN ]] || fail "no sbemu binary at $SBEMU_BIN (run scripts/build.sh)"

# The pinned dependencies and plugins, and the Surefire JUnit provider (resolved only when tests
# run, hence the empty test run): quick when ~/.m2 has them. After this the run is offline.
if ! "${MVN[@]}" -q test -Dtest=NoSuchTestClass -Dsurefire.failIfNoSpecifiedTests=false >"$HERE/target-prep.log" 2>&1; then
  cat "$HERE/target-prep.log" >&2
  fail "resolving or compiling the suite failed (mvn test-compile)"
fi
rm -f "$HERE/target-prep.log"

tests=""
for w in $FILTER; do tests+="${tests:+,}*${w}*"; done

# Everything a run creates lives under one directory, so that whatever a killed JVM leaves
# running (sbemu, its embedded postmaster) can be found and stopped.
# shellcheck source=run_dir.sh
source ../run_dir.sh
e2e_run_dir sbemu-e2e-java
trap reap EXIT

rm -rf target/surefire-reports
cmd=(timeout -k 10 900 "${MVN[@]}" -o test \
  -DargLine="-Djava.io.tmpdir=$RUN_DIR -Dorg.slf4j.simpleLogger.defaultLogLevel=${SBEMU_JAVA_LOG:-warn}")
[[ -n $tests ]] && cmd+=("-Dtest=$tests" -Dsurefire.failIfNoSpecifiedTests=false)
# The admin client can only dial https on port 443 (AdminTest starts that class's emulator with
# --amqps-port 443). If something else holds 443 (another emulator on a shared machine), run the
# suite in a private network namespace of its own (Maven is offline by now).
if (exec 3<>/dev/tcp/127.0.0.1/443) 2>/dev/null; then
  if unshare -n true 2>/dev/null; then
    echo "java e2e: port 443 is taken here; running the suite in a private network namespace"
    cmd=(unshare -n bash -c 'ip link set lo up && exec "$@"' bash "${cmd[@]}")
  else
    echo "java e2e: port 443 is taken and unshare -n is not available: AdminTest will fail" >&2
  fi
fi
start=$(date +%s)
"${cmd[@]}" 2>&1 | tee "$RUN_DIR/mvn.out" | grep -E --line-buffered '^\[(INFO|ERROR|WARNING)\] (Tests run|Running|Building|BUILD|.*FAIL|.*ERROR)|^\[ERROR\]'
rc=${PIPESTATUS[0]}
echo "java e2e: mvn exit $rc (124 = the run's time limit) in $(( $(date +%s) - start ))s"

# Count per test from Surefire's XML reports.
p=0
f=0
shopt -s nullglob
for x in target/surefire-reports/TEST-*.xml; do
  head=$(grep -m1 -o '<testsuite [^>]*>' "$x")
  get() { sed -nE "s/.* $1=\"([0-9]+)\".*/\\1/p" <<<"$head"; }
  t=$(get tests); fl=$(get failures); er=$(get errors); sk=$(get skipped)
  p=$((p + t - fl - er - sk))
  f=$((f + fl + er + sk))
  if ((fl + er + sk > 0)); then
    cls=$(basename "$x" .xml); cls=${cls#TEST-}
    echo "java e2e: $cls: $fl failed, $er errors, $sk skipped; its output:"
    grep -v "^\s*at " "target/surefire-reports/$cls-output.txt" 2>/dev/null | tail -n 150 | sed "s/^/  /"
  fi
done
((p + f == 0)) && echo "java e2e: no test ran"
if ((rc != 0 && f == 0)); then
  f=1
  tail -n 60 "$RUN_DIR/mvn.out"
fi
reap
if [[ -z ${SBEMU_E2E_KEEP:-} ]] && ((f == 0)); then rm -rf "$RUN_DIR"; else echo "java e2e: logs kept in $RUN_DIR"; fi
echo "java: $p passed, $f failed"
((f == 0 && p > 0))
