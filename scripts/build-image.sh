#!/usr/bin/env bash
# Builds the container image sbemu:latest from ./Containerfile with podman, on
# a machine that reaches no image registry: the Debian base image is made
# locally with debootstrap (about 30 s) and imported under the name the
# Containerfile starts FROM. Where a registry is reachable, plain
# `docker build -t sbemu:latest .` does the same.
#   scripts/build-image.sh [TAG]      (default sbemu:latest; as root)
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=${1:-sbemu:latest}
BASE=docker.io/library/debian:bookworm-slim
MIRROR=${SBEMU_DEBIAN_MIRROR:-http://deb.debian.org/debian}
export DEBIAN_FRONTEND=noninteractive

need=()
for p in podman runc debootstrap; do command -v "$p" >/dev/null 2>&1 || need+=("$p"); done
# podman builds its pause image (for pods: kube play, the Testcontainers modules'
# networks) with catatonit, which podman only recommends
dpkg-query -W -f='${db:Status-Status}' catatonit 2>/dev/null | grep -q '^installed$' || need+=(catatonit)
if ((${#need[@]})); then
  apt-get update -q && apt-get install -y -q --no-install-recommends "${need[@]}" </dev/null
fi

# Containers here start only with runc and lowered limits (no cap_sys_resource).
CONF_DIR=$(mktemp -d)
trap 'rm -rf "$CONF_DIR"' EXIT
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' \
  >"$CONF_DIR/containers.conf"
export CONTAINERS_CONF=$CONF_DIR/containers.conf

if ! podman image exists "$BASE"; then
  echo "build-image: making $BASE with debootstrap from $MIRROR"
  rootfs=$(mktemp -d)
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >/dev/null
  tar -C "$rootfs" -c . | podman import - "$BASE" >/dev/null
  rm -rf "$rootfs"
fi
# docker format: OCI images drop HEALTHCHECK
podman build --format docker --network=host --pull=never -t "$TAG" -f Containerfile .
echo "build-image: $TAG"
