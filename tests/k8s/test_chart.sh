#!/usr/bin/env bash
# The Helm chart (helm/sbemu), offline: helm lint; helm template with the
# values a user would set (defaults, external database, Config.json inline or
# from a ConfigMap, existing Secrets, anti-affinity); every rendered object
# validated against the Kubernetes schemas (validate.js); what must be refused
# is (a bad log level, an external database without a URL).
#   tests/k8s/test_chart.sh
# Prints one line per failure and "N passed, N failed" last; exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")"
CHART=../../helm/sbemu
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }

# (again when the lockfile is newer than the install: a checkout that added a package)
if [[ ! -d node_modules/kubernetes-models || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error || { echo "0 passed, 1 failed"; exit 1; }
fi
HELM=$(./get-helm.sh) || { echo "FAIL: no helm"; echo "0 passed, 1 failed"; exit 1; }

out=$("$HELM" lint "$CHART" 2>&1) && ok || bad "helm lint: $out"

# render NAME ARGS...: helm template with ARGS, validated; the manifests stay in $TMP/NAME.yaml
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
render() {
  local name=$1
  shift
  if ! "$HELM" template rel "$CHART" "$@" >"$TMP/$name.yaml" 2>"$TMP/$name.err"; then
    bad "$name: helm template: $(cat "$TMP/$name.err")"
    return 1
  fi
  if node validate.js <"$TMP/$name.yaml" >"$TMP/$name.check"; then ok; else bad "$name: $(grep -v '^ok' "$TMP/$name.check")"; fi
}
has() { grep -q -- "$2" "$TMP/$1.yaml" && ok || bad "$1: no '$2' in the manifests"; }
hasnt() { grep -q -- "$2" "$TMP/$1.yaml" && bad "$1: '$2' in the manifests" || ok; }

render defaults
has defaults "kind: StatefulSet"
has defaults "replicas: 2"
has defaults "postgres://sbemu:sbemu@rel-sbemu-postgres:5432/sbemu"
has defaults "path: /health"
has defaults "readOnlyRootFilesystem: true"
hasnt defaults "kind: ConfigMap"

render external --set postgres.bundled=false --set postgres.url=postgres://u:p@db.example:5432/sb --set replicaCount=3
hasnt external "kind: StatefulSet"
has external "postgres://u:p@db.example:5432/sb"
has external "replicas: 3"

render external-secret --set postgres.bundled=false --set postgres.existingSecret=my-db --set sas.existingSecret=my-sas
has external-secret "name: my-db"
has external-secret "name: my-sas"
hasnt external-secret "kind: Secret"

render config --set-file config.json=../../scripts/sample-config.json --set podAntiAffinity=true
has config "kind: ConfigMap"
has config "mountPath: /ServiceBus_Emulator/ConfigFiles"
has config "podAntiAffinity:"

render config-map --set config.existingConfigMap=my-entities
has config-map "name: my-entities"
hasnt config-map "kind: ConfigMap"

# GET /metrics: scrape annotations on the pods by default, a ServiceMonitor only when asked
has defaults "prometheus.io/scrape: \"true\""
has defaults "prometheus.io/port: \"5300\""
has defaults "prometheus.io/path: /metrics"
hasnt defaults "kind: ServiceMonitor"
render monitor --set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=kps
has monitor "kind: ServiceMonitor"
has monitor "path: /metrics"
has monitor "release: kps"
hasnt monitor "authorization:"
render monitor-token --set metrics.serviceMonitor.enabled=true --set metrics.tokenRequired=true --set metrics.podAnnotations=false
has monitor-token "type: SharedAccessSignature"
has monitor-token "name: rel-sbemu-metrics-token"
hasnt monitor-token "prometheus.io/scrape"
"$HELM" template rel "$CHART" --set metrics.serviceMonitor.interval=often >/dev/null 2>&1 && bad "interval=often was taken (values.schema.json)" || ok

"$HELM" template rel "$CHART" --set logLevel=loud >/dev/null 2>&1 && bad "logLevel=loud was taken (values.schema.json)" || ok
"$HELM" template rel "$CHART" --set postgres.bundled=false >/dev/null 2>&1 && bad "an external database without a URL was taken" || ok

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
