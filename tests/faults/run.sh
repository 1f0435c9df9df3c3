#!/usr/bin/env bash
# The faults script: crash cycles under load (kill -9 of sbemu, kills of its
# postmaster), SIGTERM under load, and a full disk (a tmpfs data dir; needs
# root for the mount). Prints figures; the last line is 'faults: N passed, N failed'.
#   tests/faults/run.sh [CYCLES]     CI runs 6; for a release run 100 (about 10 minutes)
# Uses build/bin/sbemu (or $SBEMU_BIN) and the SDK installed by tests/e2e (npm ci there).
set -euo pipefail
cd "$(dirname "$0")/../e2e"
if [[ ! -d node_modules/@azure/service-bus ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
# Everything a run creates (sbemu, its postmaster) lives under one directory.
TMPDIR=$(mktemp -d /tmp/sbemu-faults.XXXXXX)
chmod 755 "$TMPDIR" # the embedded PostgreSQL runs as the postgres user
export TMPDIR
# a killed run may leave its tmpfs mounted and processes running in it
# (it must not fail itself: under set -e a failing command in an EXIT trap
# becomes the script's exit status, and "no mount left" is grep finding nothing)
cleanup() {
  pkill -KILL -f -- "--data-dir $TMPDIR/" 2>/dev/null || true
  { findmnt -rn -o TARGET | grep "^$TMPDIR/" | while read -r m; do umount -l "$m"; done; } || true
  rm -rf "$TMPDIR"
}
trap cleanup EXIT
rc=0
node ../faults/faults.js --cycles "${1:-6}" || rc=$?
exit "$rc"
