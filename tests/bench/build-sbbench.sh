#!/usr/bin/env bash
# Builds the benchmark's client (sbbench.c, sbbench_soak.c) into OUT:
#   tests/bench/build-sbbench.sh OUT
# Used by run.sh and by the e2e tests that load sbemu at full speed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2046  # pkg-config's flags are words on purpose
cc -O2 -Wall -Wextra -pthread -o "$1" "$here/sbbench.c" "$here/sbbench_soak.c" \
  $(pkg-config --cflags --libs libqpid-proton libssl libcrypto)
