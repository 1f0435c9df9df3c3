#!/usr/bin/env bash
# Runs every SDK end-to-end suite against build/bin/sbemu (or $SBEMU_BIN):
#   JS  (@azure/service-bus 7.9.5, plain AMQP)    tests/e2e/js/*.test.js
#   raw garbage on the AMQP port                  tests/e2e/test_garbage.js
#   kill -9 / restart / --postgres durability    tests/e2e/test_crash_restart.js
#   Python (Debian azure-servicebus 7.8.2, AMQPS on 5671)  tests/e2e/py/test_*.py
#   Java (azure-messaging-servicebus, JUnit 5 + Maven)      tests/e2e/java  (its run.sh)
#   Go (azservicebus and admin, go test)                    tests/e2e/go    (its run.sh)
#   Python (azure-servicebus from PyPI, pyamqp, pytest)     tests/e2e/pyamqp (its run.sh)
# Each file gets its own emulator with a temp data dir, and its own time limit.
# Prints 'N passed, N failed' last; exits 1 if anything failed.
#   tests/e2e/run.sh [FILTER]   FILTER: substrings of the file names to run, space-separated
#                               (e.g. "lock", "py", "errors settle"); a file runs if any matches
set -uo pipefail
cd "$(dirname "$0")"
E2E=$(pwd)
REPO=$(cd ../.. && pwd)
export SBEMU_BIN=${SBEMU_BIN:-$REPO/build/bin/sbemu}
FILTER=${1:-}
PY=/usr/bin/python3

passed=0
failed=0
results=()

wanted() { # name...: true if FILTER is empty or one of its words is in one of the names
  [[ -z $FILTER ]] && return 0
  local word name
  for word in $FILTER; do
    for name in "$@"; do [[ $name == *"$word"* ]] && return 0; done
  done
  return 1
}

note() { printf '\n=== %s\n' "$*"; }

if [[ ! -x $SBEMU_BIN ]]; then
  echo "e2e: no sbemu binary at $SBEMU_BIN (run scripts/build.sh)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# npm ci only when node_modules is missing or older than the lockfile.
if [[ ! -d node_modules/@azure/service-bus || package-lock.json -nt node_modules/.package-lock.json ]]; then
  note "npm ci (tests/e2e)"
  if ! npm ci --no-audit --no-fund --loglevel=error; then
    echo "e2e: npm ci failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

# Everything a run creates lives under one directory, so that whatever a killed
# suite leaves running (sbemu, its embedded postmaster) can be found and stopped.
# shellcheck source=run_dir.sh
source run_dir.sh
e2e_run_dir sbemu-e2e-run
trap reap EXIT

# Runs one node --test file with a time limit and adds its counts.
run_node() {
  local file=$1 limit=$2 tap rc p f
  wanted "$file" || return
  note "node --test $file (limit ${limit}s)"
  tap=$RUN_DIR/$(basename "$file").tap
  timeout -k 10 "$limit" node --test \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" "$file"
  rc=$?
  p=$(grep -m1 -E '^# pass [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  f=$(grep -m1 -E '^# fail [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  local c
  c=$(grep -m1 -E '^# cancelled [0-9]+' "$tap" 2>/dev/null | awk '{print $3}')
  if [[ -z $p ]]; then
    # Killed before the summary: count the finished tests, and the kill as a failure.
    p=$(grep -cE '^ {4}ok ' "$tap" 2>/dev/null || true)
    f=$(( $(grep -cE '^ {4}not ok ' "$tap" 2>/dev/null || true) + 1 ))
    echo "e2e: $file did not finish (exit $rc; 124 = time limit of ${limit}s)"
  else
    f=$((f + ${c:-0}))
  fi
  if ((rc != 0 && f == 0)); then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  results+=("$(printf '%-34s %3d passed, %3d failed' "$(basename "$file")" "$p" "$f")")
  reap
}

run_python() {
  wanted py test_sdk.py || return
  note "python: $PY py/run.py (limit 420s)"
  local out=$RUN_DIR/python.out rc p f line
  local -a cmd=(timeout -k 10 420 "$PY" -u py/run.py)
  # The SDK can only dial 5671. If something else holds it (another emulator on a
  # shared machine), run the suite in a private network namespace of its own.
  if (exec 3<>/dev/tcp/127.0.0.1/5671) 2>/dev/null; then
    if unshare -n true 2>/dev/null; then
      echo "e2e: port 5671 is taken here; running the Python suite in a private network namespace"
      cmd=(unshare -n bash -c 'ip link set lo up && exec "$@"' bash "${cmd[@]}")
    else
      echo "e2e: port 5671 is taken and unshare -n is not available" >&2
    fi
  fi
  "${cmd[@]}" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^python: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
  if [[ -n $line ]]; then
    p=$(sed -E 's/^python: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")
    f=$(sed -E 's/^python: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
  else
    p=$(grep -cE ' \.\.\. ok$' "$out" || true)
    f=$(( $(grep -cE ' \.\.\. (FAIL|ERROR)$' "$out" || true) + 1 ))
    echo "e2e: python suite did not finish (exit $rc; 124 = time limit)"
  fi
  if ((rc != 0 && f == 0)); then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  results+=("$(printf '%-34s %3d passed, %3d failed' "py/test_*.py" "$p" "$f")")
  reap
}

# A file's limit is the sum of its tests' own budgets, with room for a slow
# (sanitized, loaded) machine: pg_outage's three tests may each take 2 minutes.
limit_of() {
  case $(basename "$1") in
    pg_outage.test.js) echo 450 ;;
    *) echo 120 ;;
  esac
}
# A suite with its own runner (tests/e2e/DIR/run.sh): it installs its pinned
# dependencies, starts an emulator per test file or class, and ends with
# 'NAME: N passed, N failed'. The FILTER words pick it by DIR.
run_suite() { # dir limit
  local dir=$1 limit=$2 out rc p f line
  [[ -f $dir/run.sh ]] || return
  wanted "$dir" || return
  note "$dir/run.sh (limit ${limit}s)"
  out=$RUN_DIR/$dir.out
  timeout -k 10 "$limit" bash "$dir/run.sh" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  line=$(grep -E "^$dir: [0-9]+ passed, [0-9]+ failed" "$out" | tail -1)
  if [[ -n $line ]]; then
    p=$(sed -E 's/^[a-z]+: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")
    f=$(sed -E 's/^[a-z]+: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
  else
    p=0 f=1
    echo "e2e: $dir did not finish (exit $rc; 124 = time limit of ${limit}s)"
  fi
  if ((rc != 0 && f == 0)); then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  results+=("$(printf '%-34s %3d passed, %3d failed' "$dir/" "$p" "$f")")
  reap
}

for f in js/*.test.js; do run_node "$f" "$(limit_of "$f")"; done
run_node test_garbage.js 120
run_node test_crash_restart.js 240
run_python
run_suite java 1200
run_suite go 900
run_suite pyamqp 900

reap
if [[ -z ${SBEMU_E2E_KEEP:-} ]] && ((failed == 0)); then
  rm -rf "$RUN_DIR"
else
  echo "e2e: logs and data dirs kept in $RUN_DIR"
fi
note "e2e summary"
printf '  %s\n' "${results[@]}"
echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
