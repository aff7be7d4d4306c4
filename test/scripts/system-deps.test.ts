/**
 * scripts/system-deps.sh (make system-deps) with apt-get, systemctl, deb-systemd-helper, update-rc.d and an init
 * script replaced by recorders on the PATH, and its paths moved into a temporary directory: what it asks of the
 * system, in order, on a machine with systemd running and on one without (a container), as far as that can be shown
 * without installing anything. Debian's postinst enables prometheus.service, which would listen on kapi's :9090.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';

const SCRIPT = resolve('scripts/system-deps.sh');
let dir: string;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A machine: fake commands in bin/ that log their arguments; apt-get "installs" by creating the binaries. */
function machine(options: { systemdRunning: boolean; policyExists?: boolean; installed?: boolean }) {
  dir = mkdtempSync(join(tmpdir(), 'kapi-system-deps-'));
  const bin = join(dir, 'bin');
  const log = join(dir, 'calls.log');
  const policy = join(dir, 'policy-rc.d');
  const initd = join(dir, 'init.d');
  const systemdRun = join(dir, 'run-systemd');
  mkdirSync(bin);
  mkdirSync(initd);
  if (options.systemdRunning) mkdirSync(systemdRun);
  const recorder = (name: string, extra = '') =>
    writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> "${log}"\n${extra}exit 0\n`, { mode: 0o755 });
  // apt-get notes whether policy-rc.d forbids starting services while it runs, and installs the binaries
  recorder(
    'apt-get',
    `if [ -x "${policy}" ]; then "${policy}"; echo "apt-get sees policy-rc.d answer $?" >> "${log}"; else echo "apt-get sees no policy-rc.d" >> "${log}"; fi\n` +
      `case "$*" in *install*) for b in fake-prometheus fake-promtool; do printf '#!/bin/sh\\n' > "${bin}/$b"; chmod 755 "${bin}/$b"; done;; esac\n`,
  );
  for (const name of ['systemctl', 'deb-systemd-helper', 'update-rc.d', 'sudo']) recorder(name);
  writeFileSync(join(initd, 'fake-prometheus'), `#!/bin/sh\necho "init.d/fake-prometheus $*" >> "${log}"\n`, {
    mode: 0o755,
  });
  if (options.policyExists) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  if (options.installed) {
    for (const name of ['fake-prometheus', 'fake-promtool'])
      writeFileSync(join(bin, name), '#!/bin/sh\n', { mode: 0o755 });
  }
  const run = () =>
    new Promise<{ code: number | null; output: string }>((done) => {
      execFile(
        'bash',
        [SCRIPT, 'fake-prometheus fake-promtool', 'prometheus', 'fake-prometheus'],
        {
          env: {
            PATH: `${bin}:/usr/bin:/bin`,
            SYSTEM_DEPS_POLICY_RC: policy,
            SYSTEM_DEPS_INITD: initd,
            SYSTEM_DEPS_SYSTEMD_RUN: systemdRun,
          },
        },
        (error, stdout, stderr) =>
          done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
  const calls = () =>
    (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []).filter((c) => !c.startsWith('sudo'));
  return { run, calls, policy };
}

describe('make system-deps', () => {
  it('when the packages are installed on a machine without systemd running, then nothing starts during the install and the unit is left disabled', async () => {
    const m = machine({ systemdRunning: false });
    const { code, output } = await m.run();
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(m.calls()).toEqual([
      'apt-get -o DPkg::Lock::Timeout=600 update',
      'apt-get sees policy-rc.d answer 101',
      'apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends prometheus',
      'apt-get sees policy-rc.d answer 101',
      // the enablement symlinks Debian's postinst made are removed: no start at the next boot
      'deb-systemd-helper disable fake-prometheus.service',
      'init.d/fake-prometheus stop',
      'update-rc.d fake-prometheus disable',
    ]);
    // the guard was for this install only
    expect(existsSync(m.policy)).toBe(false);
  });

  it('when systemd runs, then the unit is disabled and stopped with systemctl', async () => {
    const m = machine({ systemdRunning: true });
    expect((await m.run()).code).toBe(0);
    expect(m.calls()).toContain('systemctl disable --now fake-prometheus.service');
    expect(m.calls()).not.toContain('deb-systemd-helper disable fake-prometheus.service');
  });

  it('when a policy-rc.d already exists (a container image), then it is used and left in place', async () => {
    const m = machine({ systemdRunning: false, policyExists: true });
    expect((await m.run()).code).toBe(0);
    expect(m.calls()).toContain('apt-get sees policy-rc.d answer 101');
    expect(existsSync(m.policy)).toBe(true);
  });

  it('when everything is installed already, then nothing is installed, and a service an earlier install enabled is still disabled', async () => {
    const m = machine({ systemdRunning: false, installed: true });
    expect((await m.run()).code).toBe(0);
    expect(m.calls()).toEqual([
      'deb-systemd-helper disable fake-prometheus.service',
      'init.d/fake-prometheus stop',
      'update-rc.d fake-prometheus disable',
    ]);
  });
});
