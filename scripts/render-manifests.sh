#!/usr/bin/env bash
# Renders the plain manifests from charts/kapi-apiserver into <out-dir>:
#   kapi-apiserver.yaml                the Namespace, the CRDs and every built-in object (`kubectl apply -f manifests/`)
#   config/clusterconfiguration.yaml   the default ClusterConfiguration, applied once its CRD is established
#   config/platform.yaml               the built-in platform roles and system-workspace, likewise
#
# The custom resources sit in their own folder because kubectl maps every object of one `apply` before creating any:
# in a single apply with its CRD, a custom resource fails with "ensure CRDs are installed first" on a fresh cluster.
#
# Rendered with generateSecrets=false: a committed file must not carry a signing key or a password, so the
# operator creates those Secrets and the admin User (manifests/README.md). The output has no random or
# time-dependent part: rendering twice gives the same bytes.
set -euo pipefail

helm=${1:?usage: render-manifests.sh <helm> <out-dir>}
out=${2:?usage: render-manifests.sh <helm> <out-dir>}
helm=$(cd "$(dirname "$helm")" && pwd)/$(basename "$helm")
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."

namespace=kapi-system
chart=charts/kapi-apiserver
# The tenant guard as admissionregistration.k8s.io/v1 (Kubernetes 1.30 on); older clusters install the chart, which
# picks what they serve.
render=("$helm" template kapi-apiserver "$chart" --namespace "$namespace" --set generateSecrets=false
  --set tenantGuard.apiVersion=v1)
header="# Generated from $chart by \`make manifests\` (scripts/render-manifests.sh). Do not edit: change the chart."

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/config"

{
  echo "$header"
  cat <<EOF
---
apiVersion: v1
kind: Namespace
metadata:
  name: $namespace
  labels:
    app.kubernetes.io/part-of: kapi
    # kapi-apiserver runs as the restricted Pod Security Standard requires.
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
EOF
  "${render[@]}" --include-crds --set clusterConfiguration.create=false --set platformRoles.create=false
} >"$staging/kapi-apiserver.yaml"

{
  echo "$header"
  "${render[@]}" --show-only templates/clusterconfiguration.yaml
} >"$staging/config/clusterconfiguration.yaml"

{
  echo "$header"
  "${render[@]}" --show-only templates/platform.yaml
} >"$staging/config/platform.yaml"

rm -f "$out"/*.yaml "$out"/config/*.yaml
mkdir -p "$out/config"
cp "$staging/kapi-apiserver.yaml" "$out/kapi-apiserver.yaml"
cp "$staging/config/clusterconfiguration.yaml" "$out/config/clusterconfiguration.yaml"
cp "$staging/config/platform.yaml" "$out/config/platform.yaml"
