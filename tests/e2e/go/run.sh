#!/usr/bin/env bash
# The Go SDK suite: github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus (go-amqp) and
# its admin package, pinned by go.sum, against build/bin/sbemu (or $SBEMU_BIN). Each test
# package is one file's worth of tests with a fresh emulator of its own (harness.Main in its
# TestMain); packages run one at a time (go test -p 1).
#   tests/e2e/go/run.sh [FILTER]   FILTER: substrings of package names, space-separated
#                                  (e.g. "sessions", "admin errors"); a package runs if any matches
# Prints 'go: N passed, N failed' last (N counted per top-level test); exits 1 if anything
# failed or nothing ran.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
REPO=$(cd ../../.. && pwd)
export SBEMU_BIN=${SBEMU_BIN:-$REPO/build/bin/sbemu}
FILTER=${1:-}
NEED_GO=1.25 # azservicebus 1.11 and azcore 1.23 say go 1.25.0 in their go.mod

fail() { echo "go e2e: $*" >&2; echo "go: 0 passed, 1 failed"; exit 1; }

# The toolchain: go on PATH, else the official tarball's place; Debian's golang-go (1.19 in
# bookworm) is too old for the SDK, so it is not installed for this.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then export PATH=$PATH:/usr/local/go/bin; fi
command -v go >/dev/null 2>&1 || fail "no go toolchain (need go >= $NEED_GO; Debian's golang-go is older)"
have=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')
if [[ $(printf '%s\n%s\n' "$NEED_GO" "$have" | sort -V | head -1) != "$NEED_GO" ]]; then
  fail "go $have is too old: the SDK needs go >= $NEED_GO"
fi
# Don't let a go.mod toolchain line send the go command off to download another Go.
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly"

[[ -x $SBEMU_BIN ]] || fail "no sbemu binary at $SBEMU_BIN (run scripts/build.sh)"

# The pinned modules (go.sum); quick when the module cache has them.
go mod download || fail "go mod download failed"

pkgs=()
while IFS= read -r p; do
  short=${p#sbemu/tests/e2e/go/}
  [[ $short == internal/* ]] && continue
  if [[ -z $FILTER ]]; then pkgs+=("$p"); continue; fi
  for w in $FILTER; do [[ $short == *"$w"* ]] && { pkgs+=("$p"); break; }; done
done < <(go list ./...)
((${#pkgs[@]})) || fail "no test package matches '$FILTER'"

# Everything a run creates lives under one directory, so that whatever a killed package
# leaves running (sbemu, its embedded postmaster) can be found and stopped.
# shellcheck source=run_dir.sh
source ../run_dir.sh
e2e_run_dir sbemu-e2e-go
trap reap EXIT

go build -o "$RUN_DIR/tally" ./internal/tally || fail "building the tally failed"
echo "go e2e: ${#pkgs[@]} packages: ${pkgs[*]#sbemu/tests/e2e/go/}"
start=$(date +%s)
# -p 1: one package (one emulator) at a time on this 2-core machine; -count=1: never cached.
# the file exists before tail opens it: the background job creates it only once forked
: >"$RUN_DIR/test.json"
timeout -k 10 900 go test -p 1 -count=1 -timeout 300s -json "${pkgs[@]}" >"$RUN_DIR/test.json" 2>"$RUN_DIR/test.stderr" &
gopid=$!
# Show progress while it runs, then the tally.
tail -n +1 -f "$RUN_DIR/test.json" --pid=$gopid | "$RUN_DIR/tally" | sed -u 's/^go: /go (this run): /' | tee "$RUN_DIR/tally.out"
wait $gopid
rc=$?
if [[ -s $RUN_DIR/test.stderr ]]; then echo "go test stderr:"; sed 's/^/  /' "$RUN_DIR/test.stderr"; fi
echo "go e2e: go test exit $rc (124 = the run's time limit) in $(( $(date +%s) - start ))s"
line=$(tail -1 "$RUN_DIR/tally.out")
p=$(sed -E 's/^go \(this run\): ([0-9]+) passed, ([0-9]+) failed$/\1/' <<<"$line")
f=$(sed -E 's/^go \(this run\): ([0-9]+) passed, ([0-9]+) failed$/\2/' <<<"$line")
[[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ ]] || { p=0; f=1; }
if ((rc != 0 && f == 0)); then f=1; fi
reap
if [[ -z ${SBEMU_E2E_KEEP:-} ]] && ((f == 0)); then rm -rf "$RUN_DIR"; else echo "go e2e: logs kept in $RUN_DIR"; fi
echo "go: $p passed, $f failed"
((f == 0 && p > 0))
