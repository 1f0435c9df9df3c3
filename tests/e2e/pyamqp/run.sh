#!/usr/bin/env bash
# Runs the azure-servicebus 7.15 (pure-Python AMQP, _pyamqp) suite against build/bin/sbemu
# (or $SBEMU_BIN), one fresh emulator per test module.
#   tests/e2e/pyamqp/run.sh [FILTER]
# FILTER: words; a test module runs if its file name contains one of them ("admin", "sessions
# errors"). Installs the pinned dependencies (requirements.txt, hash-checked) into .venv when
# missing or older than requirements.txt. Prints 'pyamqp: N passed, N failed' last (N per test;
# a skipped test counts as failed); exits non-zero if anything failed or nothing ran.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
REPO=$(cd ../../.. && pwd)
export SBEMU_BIN=${SBEMU_BIN:-$REPO/build/bin/sbemu}
FILTER=${1:-}
LIMIT=${PYAMQP_TIME_LIMIT:-900}

finish() { # passed failed
  echo "pyamqp: $1 passed, $2 failed"
  ((($2) == 0 && ($1) > 0))
  exit $?
}

if [[ ! -x $SBEMU_BIN ]]; then
  echo "pyamqp: no sbemu binary at $SBEMU_BIN (run scripts/build.sh)" >&2
  finish 0 1
fi

# Python 3.9+ with venv: the first python3 on PATH (pyenv's here), else Debian's.
PY=$(command -v python3 || true)
if [[ -z $PY ]] || ! "$PY" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  echo "pyamqp: no usable python3 with venv; installing Debian's python3 and python3-venv"
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  fi
  PY=$(command -v python3 || true)
  if [[ -z $PY ]] || ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "pyamqp: python3 with the venv module is missing (apt-get install python3 python3-venv)" >&2
    finish 0 1
  fi
fi
if ! command -v psql >/dev/null; then
  echo "pyamqp: psql is missing (scripts/install-deps.sh installs it)" >&2
  finish 0 1
fi

VENV=$HERE/.venv
STAMP=$VENV/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x $VENV/bin/python || ! -f $STAMP || $(cat "$STAMP") != "$want" ]]; then
  echo "pyamqp: installing requirements.txt into $VENV"
  rm -rf "$VENV"
  if ! "$PY" -m venv "$VENV" ||
    ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r requirements.txt; then
    echo "pyamqp: could not install requirements.txt" >&2
    rm -rf "$VENV"
    finish 0 1
  fi
  echo "$want" >"$STAMP"
fi

files=()
for f in test_*.py; do
  if [[ -z $FILTER ]]; then
    files+=("$f")
  else
    for w in $FILTER; do
      if [[ $f == *"$w"* ]]; then files+=("$f"); break; fi
    done
  fi
done
if ((${#files[@]} == 0)); then
  echo "pyamqp: no test module matches '$FILTER'" >&2
  finish 0 1
fi

# Everything the run makes (emulators' data dirs, their PostgreSQL) lives under one directory,
# so what a killed run leaves behind can be found and stopped.
# shellcheck source=run_dir.sh
source ../run_dir.sh
e2e_run_dir sbemu-pyamqp
trap reap EXIT

JUNIT=$RUN_DIR/junit.xml
start=$(date +%s)
timeout -k 10 "$LIMIT" "$VENV/bin/python" -m pytest -v -p no:logging --junitxml="$JUNIT" "${files[@]}"
rc=$?
echo "pyamqp: pytest exited $rc after $(($(date +%s) - start)) s$( ((rc == 124)) && echo " (the time limit of ${LIMIT}s)")"

read -r passed failed < <("$VENV/bin/python" - "$JUNIT" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print(0, 0)
    sys.exit()
p = f = 0
for case in root.iter("testcase"):
    bad = [c for c in case if c.tag in ("failure", "error", "skipped")]
    if bad:
        f += 1
    else:
        p += 1
print(p, f)
EOF
)
passed=${passed:-0}
failed=${failed:-0}
if ((rc != 0 && failed == 0)); then failed=1; fi # killed, or failed outside any test
reap
if ((failed == 0)) && [[ -z ${SBEMU_E2E_KEEP:-} ]]; then rm -rf "$RUN_DIR"; else echo "pyamqp: kept $RUN_DIR"; fi
finish "$passed" "$failed"
