#!/usr/bin/env bash
# Installs what is missing, builds, then runs the emulator in the foreground with
# scripts/sample-config.json. Extra arguments go to sbemu (see build/bin/sbemu --help),
# e.g. ./scripts/run.sh --amqp-port 5673 --postgres "host=/run/postgresql dbname=sb"
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
log=$(mktemp /tmp/sbemu-build.XXXXXX.log)
if ! ./scripts/build.sh >"$log" 2>&1; then
  cat "$log" >&2
  echo "run.sh: the build failed (log: $log)" >&2
  exit 1
fi
rm -f "$log"
exec build/bin/sbemu --config scripts/sample-config.json "$@"
