#!/usr/bin/env bash
# Installs what sbemu needs to build, run and test on Debian 12 (as root).
# Idempotent: when every package is already there it never touches apt, so
# reruns take well under a second. Node comes from Debian only when `node` or
# `npm` is missing (a machine may have a newer Node from elsewhere: keep it).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
  build-essential cmake pkg-config
  libqpid-proton11-dev libwebsockets-dev libssl-dev openssl
  libpq-dev postgresql-15
  libjansson-dev libcmocka-dev clang libclang-rt-14-dev
  python3-azure python3-uamqp python3-qpid-proton
  curl ca-certificates
)
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs); fi
if ! command -v npm  >/dev/null 2>&1; then PACKAGES+=(npm); fi
# The e2e test of GET /metrics scrapes with a real Prometheus (and promtool, same package).
if ! command -v prometheus >/dev/null 2>&1; then PACKAGES+=(prometheus); fi
# The dashboard's e2e test drives a real browser (playwright-core with Debian's chromium, no download).
if ! command -v chromium >/dev/null 2>&1; then PACKAGES+=(chromium); fi

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages (${missing[*]}); run this script as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
apt-get update -q
apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
echo "install-deps: done"
