#!/usr/bin/env bash
# make e2e-real: the whole e2e suite (test/e2e) against a real kube-apiserver 1.32 and 1.26, one after the other.
#
# Each version gets a kit of ../shared/kube (kit.sh: kube-apiserver + etcd on loopback) in .cache/kube-e2e-<version>,
# made once, started on an empty etcd, run against as a real cluster (KUBECONFIG), and stopped again, also when the
# suite fails or the run is interrupted. One line per version at the end: passed, failed, skipped, time; then the
# reasons of the skipped cases (each names what a bare cluster lacks).
#
# Where the kit lives: $KUBE_KIT_DIR, else ../shared/kube beside the repository, else /work/shared/kube. None of them:
# says so and exits 0 (a machine without the kit runs the suite against the sandbox only, in make test).
#
# Ports (so several people can run it at once; the defaults are the kit's):
#   E2E_REAL_132_PORT (18443)  E2E_REAL_132_ETCD_PORT (13379; etcd's peer port is the next one)
#   E2E_REAL_126_PORT (17443)  E2E_REAL_126_ETCD_PORT (12379)
#   E2E_REAL_132_ISSUER_PORT (18453)  E2E_REAL_126_ISSUER_PORT (17453): the HTTPS port of the kapi that the kit's
#   kube-apiserver trusts as an OpenID issuer (token pass-through, test/e2e/token-pass-through.test.ts)
# E2E_REAL_VERSIONS="1.32" runs one version only. Extra arguments go to jest (e.g. a test file).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"

say() { echo "e2e-real: $*"; }

find_kit() {
  local dir
  for dir in "${KUBE_KIT_DIR:-}" "$ROOT/../shared/kube" /work/shared/kube; do
    [ -n "$dir" ] && [ -x "$dir/kit.sh" ] && { (cd "$dir" && pwd -P); return 0; }
  done
  return 1
}

if ! KIT_HOME=$(find_kit); then
  say "no kube-apiserver kit found (KUBE_KIT_DIR, ../shared/kube, /work/shared/kube): nothing to run, the sandbox e2e run of make test stands alone"
  exit 0
fi
if [ -n "${KUBE_KIT_DIR:-}" ] && [ "$KIT_HOME" != "$(cd "$KUBE_KIT_DIR" 2>/dev/null && pwd -P)" ]; then
  say "KUBE_KIT_DIR=$KUBE_KIT_DIR has no kit.sh; using $KIT_HOME"
fi

VERSIONS=${E2E_REAL_VERSIONS:-1.32 1.26}
port_of() { # port_of <version> <kind: PORT|ETCD_PORT>
  local key="E2E_REAL_${1/./}_$2"
  case "$1/$2" in
    1.32/PORT) echo "${!key:-18443}" ;;
    1.32/ETCD_PORT) echo "${!key:-13379}" ;;
    1.26/PORT) echo "${!key:-17443}" ;;
    1.26/ETCD_PORT) echo "${!key:-12379}" ;;
    1.32/ISSUER_PORT) echo "${!key:-18453}" ;;
    1.26/ISSUER_PORT) echo "${!key:-17453}" ;;
    *) echo "unknown version $1" >&2; return 1 ;;
  esac
}
# kube-apiserver's own flags: the kubelet stand-in is reached by its InternalIP; 1.26 serves SelfSubjectReview
# (kubectl auth whoami) and ValidatingAdmissionPolicy (kapi's tenant guard, v1alpha1: no CEL authorizer there) only
# behind their alpha gates.
extra_args_of() {
  local args=--kubelet-preferred-address-types=InternalIP
  [ "$1" = 1.26 ] && args+=" --feature-gates=APISelfSubjectReview=true,ValidatingAdmissionPolicy=true"
  [ "$1" = 1.26 ] && args+=" --runtime-config=authentication.k8s.io/v1alpha1=true,admissionregistration.k8s.io/v1alpha1=true"
  echo "$args"
}

# kube-apiserver trusts a kapi at https://127.0.0.1:<issuer port> as an OpenID issuer (SPEC §5's token pass-through):
# its serving certificate's CA and an RSA signing key are made here, before kube-apiserver starts, for the test to
# start that kapi with. kapi's tokens carry `username` and `groups`; no prefixes, so the names are kapi's own.
make_issuer() { # make_issuer <dir>
  local dir=$1
  rm -rf "$dir" && mkdir -p "$dir"
  (
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj /CN=kapi-e2e-issuer-ca -days 2
    openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >tls.ext
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -days 2 -extfile tls.ext
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out signing.pem
  ) >/dev/null 2>&1
  # (set -e does not reach into a function called from an `||`: the files say whether it worked)
  openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" >/dev/null 2>&1 && [ -s "$dir/signing.pem" ]
}
issuer_args_of() { # issuer_args_of <issuer url> <dir>
  echo "--oidc-issuer-url=$1 --oidc-client-id=kapi --oidc-username-claim=username --oidc-username-prefix=-" \
    "--oidc-groups-claim=groups --oidc-ca-file=$2/ca.crt"
}

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

STARTED=()
stop_started() {
  local dir
  for dir in "${STARTED[@]+"${STARTED[@]}"}"; do "$dir/stop.sh" >/dev/null 2>&1 || true; done
  STARTED=()
}
trap stop_started EXIT
trap 'say "interrupted: stopping the kits"; stop_started; exit 130' INT TERM

SUMMARY=()
FAILED=0
for version in $VERSIONS; do
  port=$(port_of "$version" PORT)
  etcd_port=$(port_of "$version" ETCD_PORT)
  issuer_port=$(port_of "$version" ISSUER_PORT)
  dir="$ROOT/.cache/kube-e2e-$version"
  log="$ROOT/.cache/e2e-real-$version.log"
  result="$ROOT/.cache/e2e-real-$version.json"
  mkdir -p "$dir"
  say "kube-apiserver $version: kit in ${dir#"$ROOT"/} (https://127.0.0.1:$port, etcd $etcd_port)"
  ETCD_PORT=$etcd_port "$KIT_HOME/kit.sh" "$version" "$dir" "$port" >"$dir/kit.log" 2>&1 || {
    cat "$dir/kit.log" >&2
    SUMMARY+=("e2e-real $version: not run: kit.sh failed (see above)"); FAILED=1; continue
  }
  # A kit left running by an interrupted run of ours is stopped; its data goes: every run starts on an empty etcd.
  RESET=1 "$dir/stop.sh" >/dev/null
  busy=
  for p in "$port" "$etcd_port" "$((etcd_port + 1))" "$issuer_port"; do in_use "$p" && busy+=" $p"; done
  if [ -n "$busy" ]; then
    SUMMARY+=("e2e-real $version: not run: port(s)$busy in use by another process (choose others: E2E_REAL_${version/./}_PORT, E2E_REAL_${version/./}_ETCD_PORT)")
    FAILED=1; continue
  fi
  STARTED+=("$dir")
  issuer="https://127.0.0.1:$issuer_port"
  make_issuer "$dir/kapi-issuer" || { SUMMARY+=("e2e-real $version: not run: openssl could not make the issuer's keys"); FAILED=1; continue; }
  if ! KAS_EXTRA_ARGS="$(extra_args_of "$version") $(issuer_args_of "$issuer" "$dir/kapi-issuer")" "$dir/start.sh" >"$dir/start.log" 2>&1; then
    cat "$dir/start.log" >&2
    SUMMARY+=("e2e-real $version: not run: the kit did not start (see above and $dir/logs/)"); FAILED=1
    stop_started; continue
  fi
  server_version=$("$dir/bin/kube-apiserver" --version 2>/dev/null | awk '{print $2}')
  say "kube-apiserver $server_version ready; running test/e2e against it (output also in ${log#"$ROOT"/})"
  started=$(date +%s)
  rm -f "$result"
  set +e
  # the kit's etcd serves its metrics over plain http: the monitoring suite's Prometheus scrapes it
  KAPI_E2E_ISSUER_URL=$issuer KAPI_E2E_ISSUER_DIR="$dir/kapi-issuer" E2E_ETCD_METRICS_URL="http://127.0.0.1:$etcd_port/metrics" \
    KUBECONFIG="$dir/kubeconfig" npm run --silent test:e2e -- --json --outputFile="$result" "$@" 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  set -e
  seconds=$(($(date +%s) - started))
  stop_started
  # npm ends with 130 on Ctrl-C (it handles the signal, so bash's own trap does not run): stop here too.
  if [ "$code" = 130 ]; then say "interrupted: kits stopped"; exit 130; fi
  if [ -s "$result" ]; then
    line=$(jq -r '"\(.numPassedTests) passed, \(.numFailedTests) failed, \(.numPendingTests + .numTodoTests) skipped"' "$result")
    SUMMARY+=("e2e-real $version ($server_version): $line in ${seconds} s")
    # Every skip says why in its name ("… [skipped …: needs X]"): one line per reason.
    while IFS= read -r reason; do SUMMARY+=("    $reason"); done < <(
      jq -r '.testResults[].assertionResults[] | select(.status == "pending" or .status == "skipped" or .status == "todo")
             | .fullName | (capture("\\[(?<why>skipped[^\\]]*)\\]").why // "skipped without a reason: \(.)")' "$result" |
        sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)/\2 (\1 cases)/')
    jq -e '.numFailedTests == 0 and .numFailedTestSuites == 0' "$result" >/dev/null || FAILED=1
    # A skip without a reason is a silent skip: the run fails.
    if jq -e '[.testResults[].assertionResults[] | select(.status == "pending" or .status == "skipped" or .status == "todo")
               | select(.fullName | test("\\[skipped") | not)] | length > 0' "$result" >/dev/null; then
      FAILED=1
    fi
  else
    SUMMARY+=("e2e-real $version ($server_version): jest ended (code $code) without results in ${seconds} s")
    FAILED=1
  fi
  [ "$code" = 0 ] || FAILED=1
done

# Outages (test/outage): a kit of the suite's own, whose kube-apiserver and etcd it kills and starts again, run alone
# once the versions' kits are stopped; not when a file was named (a focused run).
if [ "$#" = 0 ]; then
  say "outages: kube-apiserver and etcd of a kit of their own stopped and started again (npm run test:outage)"
  started=$(date +%s)
  set +e
  mkdir -p .cache
  npm run --silent test:outage 2>&1 | tee .cache/e2e-real-outage.log
  code=${PIPESTATUS[0]}
  set -e
  if [ "$code" = 130 ]; then say "interrupted"; exit 130; fi
  SUMMARY+=("e2e-real outages: jest ended with code $code in $(($(date +%s) - started)) s")
  [ "$code" = 0 ] || FAILED=1
fi

echo
for line in "${SUMMARY[@]}"; do echo "$line"; done
exit "$FAILED"
