#!/usr/bin/env bash
# Configures and builds sbemu into build/ (the server is build/bin/sbemu).
# Extra arguments go to the configure step, e.g. ./scripts/build.sh -DSBEMU_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build build -j"$(nproc)"
