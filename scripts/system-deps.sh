#!/usr/bin/env bash
# Installs the Debian packages whose binaries the suites run for real, when a binary is missing, and leaves none of
# their services running or enabled: the tests start their own Prometheus and slapd on loopback ports, and a
# prometheus.service on :9090 (kapi's default port) or a slapd on :389 is nobody's wish on a developer's machine.
#
#   system-deps.sh "<binaries>" "<packages>" "<services>"
#
# - a policy-rc.d that answers 101 keeps the maintainer scripts from starting anything during the install (an
#   existing one, as in a container image, is left as it is);
# - the services the packages ship are then stopped and disabled, for systemd and for sysvinit alike (Debian's
#   postinst enables units even when policy-rc.d forbids starting them); without a running systemd (a container, a
#   chroot) the unit's symlinks are removed with deb-systemd-helper, so it does not start at the next boot either.
#   This runs every time, so a machine that got the packages earlier is put right too.
#
# The paths it touches can be moved for its own test (test/scripts/system-deps.test.ts): SYSTEM_DEPS_POLICY_RC,
# SYSTEM_DEPS_INITD, SYSTEM_DEPS_SYSTEMD_RUN.
set -euo pipefail

binaries=${1:?usage: system-deps.sh <binaries> <packages> <services>}
packages=${2:?usage: system-deps.sh <binaries> <packages> <services>}
services=${3:-}
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)

# a binary on the PATH or in /usr/sbin; a shared library (a name with .so) in the multiarch library directory
present() {
  if [[ $1 == *.so* ]]; then
    compgen -G "/usr/lib/*-linux-gnu/$1" >/dev/null
  else
    command -v "$1" >/dev/null || [[ -x /usr/sbin/$1 ]]
  fi
}

missing=()
for bin in $binaries; do
  present "$bin" || missing+=("$bin")
done

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "system-deps: missing ${missing[*]}; installing $packages"
  policy=${SYSTEM_DEPS_POLICY_RC:-/usr/sbin/policy-rc.d}
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# written by kapi-apiserver scripts/system-deps.sh for one install\nexit 101\n' |
      "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    trap '"${sudo[@]}" rm -f "$policy"' EXIT
  fi
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  # slapd asks for a domain and an admin password; the tests never use the packaged directory, so the defaults do.
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $packages
fi

initd=${SYSTEM_DEPS_INITD:-/etc/init.d}
systemd_run=${SYSTEM_DEPS_SYSTEMD_RUN:-/run/systemd/system}
for service in $services; do
  if [[ -d $systemd_run ]]; then
    if systemctl list-unit-files "$service.service" >/dev/null 2>&1; then
      "${sudo[@]}" systemctl disable --now "$service.service" >/dev/null 2>&1 || true
    fi
  elif command -v deb-systemd-helper >/dev/null; then
    # no systemd running: nothing to stop, but the enablement symlinks would start it at the next boot
    "${sudo[@]}" deb-systemd-helper disable "$service.service" >/dev/null 2>&1 || true
  fi
  if [[ -x $initd/$service ]]; then
    "${sudo[@]}" "$initd/$service" stop >/dev/null 2>&1 || true
    "${sudo[@]}" update-rc.d "$service" disable >/dev/null 2>&1 || true
  fi
done

for bin in $binaries; do
  present "$bin" || {
    echo "system-deps: $bin still missing" >&2
    exit 1
  }
done
