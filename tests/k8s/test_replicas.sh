#!/usr/bin/env bash
# The Helm chart run for real, with no cluster or registry: the images built
# locally (scripts/build-image.sh, and a stand-in for postgres:15 made from
# Debian's PostgreSQL in tests/k8s/postgres), `helm template` with two
# replicas, and the rendered Deployments played by `podman kube play` on a
# bridge network (play.js adapts what podman 4.3 does not take: Secrets,
# StatefulSet, Services). Then the JS SDK against the two replicas
# (replicas.js): sends on one received on the other, competing consumers
# with no message twice, the management API on one serving the other, a
# waiting receiver woken across replicas, and a replica stopped and started
# again with nothing lost. Takes a few minutes the first time (images).
#   tests/k8s/test_replicas.sh      (as root; not part of scripts/test.sh)
# Prints one line per check and "N passed, N failed" last; exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")"
K8S=$(pwd)
REPO=$(cd ../.. && pwd)
RELEASE=k8stest
NET=sbemu-k8stest
WORK=$(mktemp -d)
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' \
  >"$WORK/containers.conf"
export CONTAINERS_CONF=$WORK/containers.conf
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit $?
}

teardown() {
  for f in "$WORK/emulators.yaml" "$WORK/postgres.yaml"; do
    [ -f "$f" ] && podman kube down "$f" >/dev/null 2>&1
  done
  for s in "$WORK"/secrets/*.json; do [ -f "$s" ] && podman secret rm "$(basename "$s" .json)" >/dev/null 2>&1; done
  podman volume rm -f "$RELEASE-sbemu-postgres-data" >/dev/null 2>&1
  podman network rm -f "$NET" >/dev/null 2>&1
}
trap 'teardown; rm -rf "$WORK"' EXIT

# images: ours, and the postgres stand-in
if ! podman image exists localhost/sbemu:latest; then
  "$REPO/scripts/build-image.sh" localhost/sbemu:latest >"$WORK/build.log" 2>&1 || { bad "scripts/build-image.sh: $(tail -5 "$WORK/build.log")"; finish; }
fi
podman build --format docker --network=host --pull=never -t localhost/postgres:15 postgres >"$WORK/pg-build.log" 2>&1 ||
  { bad "postgres stand-in image: $(tail -5 "$WORK/pg-build.log")"; finish; }
[[ -d node_modules/yaml ]] || npm ci --no-audit --no-fund --loglevel=error >/dev/null
[[ -d ../e2e/node_modules/@azure/service-bus ]] || (cd ../e2e && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
HELM=$(./get-helm.sh)

teardown
podman network create "$NET" >/dev/null
"$HELM" template "$RELEASE" "$REPO/helm/sbemu" --set replicaCount=2 \
  --set image.repository=localhost/sbemu --set image.pullPolicy=Never \
  --set postgres.image.repository=localhost/postgres --set postgres.image.pullPolicy=Never >"$WORK/rendered.yaml" ||
  { bad "helm template"; finish; }
node play.js "$WORK/rendered.yaml" "$WORK" >/dev/null || { bad "play.js"; finish; }
for s in "$WORK"/secrets/*.json; do podman secret create "$(basename "$s" .json)" "$s" >/dev/null; done

ip_of() { podman inspect "$1" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' 2>/dev/null; }
# wait_healthy IP: /health answers 200 within 60 s
wait_healthy() {
  for _ in $(seq 1 600); do
    curl -fs -m 1 "http://$1:5300/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

podman kube play --network "$NET" "$WORK/postgres.yaml" >/dev/null 2>&1 || { bad "kube play of the PostgreSQL StatefulSet"; finish; }
PG=$(ip_of "$RELEASE-sbemu-postgres-pod-0-postgres")
[ -n "$PG" ] && ok "PostgreSQL (the chart's StatefulSet) runs at $PG" || { bad "no PostgreSQL pod"; finish; }
node play.js "$WORK/rendered.yaml" "$WORK" "$PG" >/dev/null
podman kube play --network "$NET" "$WORK/emulators.yaml" >/dev/null 2>&1 || { bad "kube play of the emulator Deployment"; finish; }
A=$(ip_of "$RELEASE-sbemu-pod-0-sbemu")
B=$(ip_of "$RELEASE-sbemu-pod-1-sbemu")
if [ -n "$A" ] && [ -n "$B" ] && wait_healthy "$A" && wait_healthy "$B"; then
  ok "two emulator replicas healthy at $A and $B"
else
  bad "the replicas did not become healthy ($A, $B)"
  podman logs "$RELEASE-sbemu-pod-0-sbemu" 2>&1 | tail -20 | sed 's/^/  | /'
  finish
fi

# count_js: run replicas.js, echo its lines, add its counts
count_js() {
  local out line
  out=$(node replicas.js "$@" 2>&1)
  echo "$out" | grep -E '^(ok|FAIL):'
  line=$(echo "$out" | tail -1)
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    bad "replicas.js $1: $out"
  fi
}
count_js traffic "$A" "$B"
count_js before-restart "$A" "$B"
podman pod stop -t 30 "$RELEASE-sbemu-pod-0" >/dev/null 2>&1
code=$(podman inspect "$RELEASE-sbemu-pod-0-sbemu" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] && ok "replica A stopped with SIGTERM exits 0" || bad "replica A exited $code on SIGTERM"
podman pod start "$RELEASE-sbemu-pod-0" >/dev/null 2>&1
A=$(ip_of "$RELEASE-sbemu-pod-0-sbemu")
wait_healthy "$A" && ok "replica A healthy again at $A" || bad "replica A did not come back"
count_js after-restart "$A" "$B"
finish
